"""The parent side of tests/mutation_worker.py, shared by the module and replay mutation tests:
the worker as a subprocess (its stderr in a log file per start), one JSON job at a time with a
wall-clock deadline, restarted after a crash or a hang."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

WORKER = Path(__file__).resolve().parent / "mutation_worker.py"
REPO_ROOT = Path(__file__).resolve().parent.parent


class WorkerClient:
    """`send(job, deadline)` -> the worker's answer, or {"dead": "hang" | "crash (...)", "log":
    stderr tail} when it gave none by the deadline or died. `preexec_fn` runs in the worker
    before it starts (resource limits); with `restart_after_timeout`, a job the worker's alarm
    stopped is followed by a fresh worker."""

    def __init__(self, log_dir: Path, *, preexec_fn=None, restart_after_timeout: bool = False):
        self.log_dir = log_dir
        self.preexec_fn = preexec_fn
        self.restart_after_timeout = restart_after_timeout
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        self.log = open(self.log_dir / f"worker{self.starts}.stderr", "w+b")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen([sys.executable, str(WORKER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, env=env,
                                     preexec_fn=self.preexec_fn)
        ready = self._read_line(60.0)
        assert ready and json.loads(ready).get("ready"), "mutation worker did not start"

    def _read_line(self, timeout: float) -> bytes | None:
        fd = self.proc.stdout
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([fd], [], [], left)
            if readable:
                return fd.readline()

    def stop(self) -> str:
        """Kills the worker; returns its stderr tail (faulthandler's report after a crash)."""
        if self.proc is None:
            return ""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc = None
        self.log.seek(0)
        tail = self.log.read().decode(errors="replace")[-2000:]
        self.log.close()
        return tail

    def send(self, job: dict, deadline: float) -> dict:
        if self.proc is None:
            self.start()
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        line = self._read_line(deadline)
        if line:
            result = json.loads(line)
            if result.get("timeout") and self.restart_after_timeout:
                self.stop()  # interrupted mid-job: the next job gets a fresh process
            return result
        hung = line is None  # no answer by the deadline; b"" is EOF: the worker died
        if not hung:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        rc = self.proc.returncode
        tail = self.stop()
        return {"dead": "hang" if hung else f"crash (worker exit {rc})", "log": tail}

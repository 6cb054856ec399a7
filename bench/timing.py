"""Helpers the bench scripts share: finding console scripts, and timing whole processes.

Timed processes keep Python bytecode (under WORK/pycache, so the source tree stays clean) even where
PYTHONDONTWRITEBYTECODE is set, so they load it as any installed package does; warm-up runs write it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import NamedTuple


class BenchError(RuntimeError):
    """A one-line reason the benchmark cannot run."""


def console_script(name: str) -> str:
    """`name` from this interpreter's scripts directory (no shell shims in front), else PATH."""
    candidate = Path(sysconfig.get_path("scripts")) / name
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    found = shutil.which(name)
    if not found:
        raise BenchError(f"{name} not found")
    return found


def child_env(work: Path, bytecode_cache: bool = True) -> dict[str, str]:
    """The environment timed processes run in (see the module docstring)."""
    env = dict(os.environ)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str((work / "pycache").resolve())
    return env


def run_once(cmd: list[str], env: dict) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start, proc.returncode


def best_of(cmd: list[str], runs: int, env: dict) -> float | None:
    """Best wall time of `runs` runs after a warm-up; None when the command fails."""
    _, code = run_once(cmd, env)
    if code != 0:
        return None
    return min(run_once(cmd, env)[0] for _ in range(runs))


def best_of_pair(ours: list[str], theirs: list[str], runs: int, env: dict):
    """best_of for two commands, their runs alternated (one warm-up each first)."""
    codes = [run_once(ours, env)[1], run_once(theirs, env)[1]]
    best = [float("inf"), float("inf")]
    for _ in range(runs):
        for i, cmd in enumerate((ours, theirs)):
            if codes[i] == 0:
                best[i] = min(best[i], run_once(cmd, env)[0])
    return tuple(None if code else b for code, b in zip(codes, best))


def outputs_match(ours: list[str], theirs: list[str], env: dict) -> bool | None:
    """Whether both commands print the same stdout (None when ours fails)."""
    a = subprocess.run(ours, capture_output=True, env=env)
    b = subprocess.run(theirs, capture_output=True, env=env)
    if a.returncode != 0:
        return None
    return a.stdout == b.stdout


# --- Whole-process wall time and peak RSS, measured through a small launcher -------------------
#
# Linux folds the address space a process had before exec() into its ru_maxrss, so a tool forked
# straight from a large benchmark process would report at least the benchmark's own resident set.
# run_measured() therefore starts a bare interpreter (`python -S -E`, about 8 MB resident), which
# forks, execs the tool in the child and reaps it with wait4(): the child's ru_maxrss is then the
# tool's own peak, though never below what the forked copy of the launcher had resident at exec
# (about 5 MB: its private pages; measure it by running /bin/true). wait4 also counts descendants
# the tool waited for, such as the native binary behind pip's iree-profile script. The launcher
# times fork to reap itself, so its own start-up is not in the wall time, and reports
# "exit maxrss_kib seconds" on a pipe whose descriptor is its first argument. The command's path is
# resolved here, before the launcher starts, so the child only calls execv().
_LAUNCHER = """\
import os, sys, time
fd = int(sys.argv[1])
argv = sys.argv[2:]
os.set_inheritable(fd, False)
began = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    except OSError as e:
        os.write(2, ("cannot run %s: %s\\n" % (argv[0], e.strerror)).encode())
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
took = time.perf_counter() - began
os.write(fd, ("%d %d %.9f" % (os.waitstatus_to_exitcode(status), usage.ru_maxrss, took)).encode())
"""


class Measured(NamedTuple):
    """One whole-process run: wall seconds (fork to reap), peak RSS in KiB, exit status, and the
    last non-empty line the command wrote to stderr ('' when none)."""

    wall_s: float
    maxrss_kib: int
    returncode: int
    error: str


def run_measured(cmd: list[str], env: dict, stdout=None, timeout: float | None = None) -> Measured:
    """Run `cmd` through the launcher above; its stdout goes to the path `stdout` (default
    /dev/null). A command past `timeout` seconds is killed with its process group (returncode -9);
    one not found on PATH gives returncode 127."""
    program = cmd[0] if os.sep in cmd[0] else shutil.which(cmd[0], path=env.get("PATH"))
    if program is None:
        return Measured(0.0, 0, 127, f"{cmd[0]} not found")
    cmd = [program, *cmd[1:]]
    out_path = os.devnull if stdout is None else str(stdout)
    read_fd, write_fd = os.pipe()
    try:
        with open(out_path, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-S", "-E", "-c", _LAUNCHER, str(write_fd), *cmd],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE, env=env,
                pass_fds=(write_fd,), start_new_session=True)
        os.close(write_fd)
        write_fd = -1
        try:
            _, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop_group(proc)
            return Measured(float(timeout), 0, -9, f"timed out after {timeout:.0f} s")
        except BaseException:  # Ctrl-C: the tool is the launcher's child, stop both
            _stop_group(proc)
            raise
        with os.fdopen(read_fd, "rb") as pipe:
            read_fd = -1
            report = pipe.read().split()
    finally:
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)
    lines = [ln.strip() for ln in err.decode(errors="replace").splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    if len(report) != 3:  # the launcher itself died
        return Measured(0.0, 0, proc.returncode or -1, last or "launcher failed")
    return Measured(float(report[2]), int(report[1]), int(report[0]), last)


def _stop_group(proc: subprocess.Popen) -> None:
    """Kill the launcher started by run_measured and the tool under it (its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def same_file(a, b, chunk: int = 1 << 20) -> bool:
    """Whether two files hold the same bytes, read in chunks (never whole into memory)."""
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    digests = []
    for path in (a, b):
        h = hashlib.sha256()
        with open(path, "rb", buffering=0) as f:
            while block := f.read(chunk):
                h.update(block)
        digests.append(h.digest())
    return digests[0] == digests[1]

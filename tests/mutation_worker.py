"""A long-lived worker for the mutation tests (tests/test_run_mutations.py,
tests/replay/test_mutations.py): runs `amdgpu-run` / `amdgpu-replay` jobs in-process.

Protocol (one JSON object per line each way):
    stdin : {"module": PATH, "args": [RUN flags...], "timeout": seconds}   (entry "run", default)
            {"entry": "replay", "args": [amdgpu-replay args...], "timeout": seconds}
    stdout: {"rc": int | null, "stdout": str, "stderr": [lines], "traceback": bool,
             "internal": bool, "timeout": bool, "seconds": float}
A "run" job goes through the CLI's error boundary (`amdgpu_cli.cli.main.run_main`, the
`amdgpu-run` entry point) with `--device=local-sync` and `--module=PATH` put first; a "replay"
job through `amdgpu_cli.cli.replay_entry.main(args)` (the `amdgpu-replay` console script, args
as given). sys.stdout / sys.stderr are captured. A job
that runs past its time limit is stopped by SIGALRM (a BaseException, so the boundary's
`except Exception` cannot turn it into an error line) and reported with "timeout": true. Time
spent inside native code (a kernel) cannot be interrupted by the alarm: the parent also keeps a
wall-clock deadline and kills the worker. A native crash kills the worker; the parent sees EOF.

The protocol is written to a private duplicate of fd 1; fd 1 itself is pointed at /dev/null so
that nothing native can corrupt the protocol stream.
"""

from __future__ import annotations

import faulthandler
import io
import json
import os
import signal
import sys
import time
import traceback


class JobTimeout(BaseException):
    """Raised by SIGALRM when a job exceeds its time limit."""


def _on_alarm(signum, frame):
    raise JobTimeout()


def _entry(job: dict):
    """(entry point, argv) of a job."""
    entry = job.get("entry", "run")
    if entry == "replay":
        from amdgpu_cli.cli.replay_entry import main as replay_main

        return replay_main, list(job.get("args", []))
    if entry != "run":
        raise ValueError(f"unknown job entry {entry!r}")
    from amdgpu_cli.cli.main import run_main

    return run_main, ["--device=local-sync", f"--module={job['module']}", *job.get("args", [])]


def _run_job(job: dict) -> dict:
    main, argv = _entry(job)
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    rc: int | None = 0
    timed_out = False
    uncaught = ""
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, float(job.get("timeout", 10)))
    try:
        try:
            main(argv)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except SystemExit as e:
        code = e.code
        rc = code if isinstance(code, int) else (0 if code is None else 1)
    except JobTimeout:
        rc, timed_out = None, True
    except BaseException:  # escaped the CLI boundary: a bug, reported as a traceback
        rc = None
        uncaught = traceback.format_exc()
    finally:
        sys.stdout, sys.stderr = saved
    stderr_text = err.getvalue() + uncaught
    return {
        "rc": rc,
        "stdout": out.getvalue()[:20000],
        "stderr": stderr_text.splitlines()[:50],
        "traceback": "Traceback" in stderr_text,
        "internal": "internal error" in stderr_text,
        "timeout": timed_out,
        "seconds": round(time.monotonic() - start, 3),
    }


def main() -> None:
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    faulthandler.enable(file=sys.__stderr__)
    signal.signal(signal.SIGALRM, _on_alarm)
    # Import everything once, outside the timed jobs.
    import amdgpu_cli.cli.main  # noqa: F401
    import amdgpu_cli.cli.run  # noqa: F401
    import amdgpu_cli.tooling.run  # noqa: F401
    import amdgpu_cli.cli.replay_entry  # noqa: F401
    import amdgpu_cli.cli.replay_run  # noqa: F401
    import amdgpu_cli.replay.dump  # noqa: F401
    import amdgpu_cli.replay.executor  # noqa: F401
    protocol.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        result = _run_job(json.loads(line))
        protocol.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()

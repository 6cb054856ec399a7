"""The process boundary every entry point shares, without click: errors that are not click's
become one line on stderr and an exit status (project errors their own, a closed stdout 0,
Ctrl-C 130, a bug 1 with `internal error`), and a console script ends with `os._exit` once its
streams are flushed (amdgpu_cli.cli.main says why). `--debug` re-raises instead."""

from __future__ import annotations

import contextlib
import os
import sys


@contextlib.contextmanager
def guarded(debug: bool):
    """Turns the exceptions a command may end with into its exit (SystemExit)."""
    from amdgpu_cli.errors import AmdgpuCliError

    try:
        yield
    except AmdgpuCliError as e:
        if debug:
            raise
        _error(e.one_line())
        sys.exit(e.exit_code)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): end quietly with status 0, as a report whose
        # reader has all it wanted. Later flushes go to /dev/null instead of failing again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)
    except KeyboardInterrupt:
        sys.exit(130)
    except MemoryError:
        if debug:
            raise
        _error("out of memory")
        sys.exit(1)
    except Exception as e:  # a bug: still one line unless --debug
        if debug:
            raise
        _error(f"internal error: {type(e).__name__}: {e} (rerun with --debug for a traceback)")
        sys.exit(1)


def _error(message: str) -> None:
    from amdgpu_cli.cli.terminal import error

    error(message)


def enter(run, argv) -> None:
    """Runs `run()`; a console script (`argv` None) then ends without interpreter teardown."""
    if argv is not None:
        run()
        return
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported
    raise_on_termination()  # SIGTERM/SIGHUP unwind like Ctrl-C, so unfinished outputs are dropped
    try:
        run()
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    exit_now(code)


def raise_on_termination() -> None:
    """SIGTERM and SIGHUP raise SystemExit(128 + signal) in the main thread, so `with` blocks
    unwind and temporaries go (amdgpu_cli/outputs.py); a no-op off the main thread."""
    import signal

    def handler(signum, _frame):
        raise SystemExit(128 + signum)

    with contextlib.suppress(ValueError):  # not the main thread
        for signum in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(signum) == signal.SIG_DFL:
                signal.signal(signum, handler)


def exit_now(code: int) -> None:
    """os._exit(code) once stdout and stderr are flushed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or vanished stream: nothing left to deliver
            pass
    os._exit(code)

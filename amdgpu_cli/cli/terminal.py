"""One terminal, two streams: results to stdout, diagnostics and progress to stderr.

Rich consoles are created lazily (importing rich costs start-up time that `--format=jsonl` runs do not
need), with markup and emoji off so user data prints verbatim, and `NO_COLOR` honoured by rich.
Progress bars appear only when stderr is a terminal.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Iterator, TextIO

_stdout = None
_stderr = None


def console():
    """The rich Console for results (stdout)."""
    global _stdout
    if _stdout is None:
        from rich.console import Console

        _stdout = Console(markup=False, emoji=False, highlight=False, soft_wrap=False)
    return _stdout


def err_console():
    """The rich Console for diagnostics and progress (stderr)."""
    global _stderr
    if _stderr is None:
        from rich.console import Console

        _stderr = Console(stderr=True, markup=False, emoji=False, highlight=False)
    return _stderr


def error(message: str) -> None:
    """Prints one error line on stderr (plain text: no markup, no wrapping)."""
    sys.stdout.flush()
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()


@contextlib.contextmanager
def progress(description: str) -> Iterator[None]:
    """An activity bar (spinner, description, elapsed time) on stderr while the block runs.

    It appears only when stderr is a terminal and the block has run for about a second, so quick
    commands and pipelines stay quiet; it is removed when the block ends.
    """
    if not sys.stderr.isatty() or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        yield
        return
    import threading

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                   console=err_console(), transient=True, redirect_stdout=False,
                   redirect_stderr=False)
    bar.add_task(description, total=None)
    lock = threading.Lock()
    state = {"done": False, "shown": False}

    def show() -> None:
        with lock:
            if not state["done"]:
                bar.start()
                state["shown"] = True

    timer = threading.Timer(1.0, show)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            state["done"] = True
            if state["shown"]:
                bar.stop()


@contextlib.contextmanager
def atomic_output(path: str | None, *, binary: bool = False) -> Iterator[TextIO]:
    """Writes to `path` through a temporary file renamed into place on success.

    `None` or `-` means stdout. On failure the temporary file is removed and any existing file at
    `path` is left untouched.
    """
    if path in (None, "", "-"):
        yield sys.stdout.buffer if binary else sys.stdout
        sys.stdout.flush()
        return
    from amdgpu_cli.atomic import atomic_file  # (tempfile, shutil, random): only when writing files

    with atomic_file(path, "wb" if binary else "w",
                     **({} if binary else {"encoding": "utf-8", "newline": "\n"})) as f:
        yield f

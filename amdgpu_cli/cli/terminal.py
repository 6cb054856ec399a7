"""One terminal, two streams: results to stdout, diagnostics and progress to stderr.

Rich consoles are created lazily (importing rich costs start-up time that `--format=jsonl` runs do not
need), with markup and emoji off so user data prints verbatim, and `NO_COLOR` honoured by rich.
Progress bars appear only when stderr is a terminal. A reader that goes away (`| head`) surfaces as
BrokenPipeError, which the CLI boundary turns into a quiet exit 0.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Callable, Iterator, TextIO

_stdout = None
_stderr = None


def console():
    """The rich Console for results (stdout)."""
    global _stdout
    if _stdout is None:
        from rich.console import Console

        class _ResultConsole(Console):
            def on_broken_pipe(self) -> None:
                # rich would exit 1 here; the CLI boundary ends a closed pipe quietly with 0.
                raise BrokenPipeError

        _stdout = _ResultConsole(markup=False, emoji=False, highlight=False, soft_wrap=False)
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
def progress(description: str) -> Iterator[Callable[[str], None]]:
    """An activity bar (spinner, description, elapsed time) on stderr while the block runs; the
    block gets a function that changes the description.

    It appears only when stderr is a terminal and the block has run for about a second, so quick
    commands and pipelines stay quiet; it is removed when the block ends.
    """
    if not sys.stderr.isatty() or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        yield lambda text: None
        return
    import threading

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                   console=err_console(), transient=True, redirect_stdout=False,
                   redirect_stderr=False)
    task = bar.add_task(description, total=None)
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
        yield lambda text: bar.update(task, description=text)
    finally:
        timer.cancel()
        with lock:
            state["done"] = True
            if state["shown"]:
                bar.stop()


@contextlib.contextmanager
def output_stream(path: str | None, *, binary: bool = False) -> Iterator[TextIO]:
    """A command's output file through `amdgpu_cli.outputs` (`None`, `` or `-`: stdout)."""
    from amdgpu_cli.outputs import output_file

    with output_file(path or "-", text=not binary) as f:
        yield f

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

from amdgpu_cli.atomic import atomic_file

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
def progress(description: str, total: int | None = None) -> Iterator:
    """A progress bar on stderr when it is a TTY; a no-op callable otherwise.

    Yields `advance(n)`. The bar only appears once the work has run for about a second, so quick
    commands stay quiet.
    """
    if not sys.stderr.isatty() or os.environ.get("CI"):
        yield lambda n=1: None
        return
    from rich.progress import Progress

    with Progress(console=err_console(), transient=True, refresh_per_second=8) as bar:
        task = bar.add_task(description, total=total, visible=False)
        import time

        start = time.monotonic()

        def advance(n: int = 1) -> None:
            bar.advance(task, n)
            if time.monotonic() - start > 1.0:
                bar.update(task, visible=True)

        yield advance


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
    with atomic_file(path, "wb" if binary else "w",
                     **({} if binary else {"encoding": "utf-8", "newline": "\n"})) as f:
        yield f

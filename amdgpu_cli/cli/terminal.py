"""One terminal, two streams: results to stdout, diagnostics and progress to stderr.

Rich consoles are created lazily (importing rich costs start-up time that `--format=jsonl` runs do not
need), with markup and emoji off so user data prints verbatim, and `NO_COLOR` honoured by rich.
Progress bars appear only when stderr is a terminal.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
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
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8",
                       newline=None if binary else "\n") as f:
            yield f
        os.chmod(tmp, _new_file_mode(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _new_file_mode(path: str) -> int:
    """The mode a plainly created file would get (or the existing file's mode)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask

"""Writing files so that nothing the user had is lost: a temporary file beside the target, renamed
over it only once complete. A failed write leaves the old file (or no file) behind, never a torn one.

`AtomicFile` is the long-lived form (open now, `commit()` or `discard()` later); `atomic_file()` the
context-manager form. New files get the mode a plain `open()` would give them (0666 less the umask);
a replaced file keeps its mode.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import IO, Iterator


class AtomicFile:
    """A temporary file beside `path`; `commit()` renames it into place, `discard()` removes it."""

    def __init__(self, path: str | os.PathLike, mode: str = "wb", **open_args):
        self.path = os.fspath(path)
        directory = os.path.dirname(os.path.abspath(self.path))
        name = os.path.basename(self.path)
        fd, self._tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
        self.file: IO = os.fdopen(fd, mode, **open_args)

    def commit(self) -> None:
        if self._tmp is None:
            return
        self.file.close()
        os.chmod(self._tmp, _mode_for(self.path))
        os.replace(self._tmp, self.path)
        self._tmp = None

    def discard(self) -> None:
        if self._tmp is None:
            return
        self.file.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._tmp)
        self._tmp = None


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "wb", **open_args) -> Iterator[IO]:
    """Yields a file whose contents replace `path` when the block ends without an exception."""
    target = AtomicFile(path, mode, **open_args)
    try:
        yield target.file
    except BaseException:
        target.discard()
        raise
    target.commit()


def _mode_for(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask

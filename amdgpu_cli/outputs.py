"""The one way this project writes an output file, so that nothing the user had is lost.

What a path names decides how it is written:
- `-`: standard output, written in place (never a file named `-`).
- a regular file, or nothing yet: replaced atomically. The bytes go to an unnamed file in the
  target's folder (O_TMPFILE where the file system has it, else a hidden `.NAME.*.tmp`), are
  fsync'ed, and only then get the target's name (link + rename), after which the folder is
  fsync'ed. A run that fails, is interrupted or is killed leaves the old file (or no file), never a
  torn or empty one, and with O_TMPFILE not even a temporary file. Appending (`+file` in
  `--output`) copies the old contents into the new file first, so it is atomic too.
- a symbolic link: its target is what gets written (as above); the link itself stays.
- anything else that exists and is not a regular file (a character device such as /dev/null, a
  FIFO, a socket, /dev/stdout, /proc/self/fd/N): opened and written in place, as a shell
  redirection would. Such paths are never replaced.
- a directory, a missing folder, a folder we may not write: an `OutputError` at once, when the
  `OutputFile` is made, before any work is done.

Lifecycle: `OutputFile(path)` checks the path (raises `OutputError`); `open()` returns the file to
write; `publish()` (streaming outputs such as a profile capture, which must be readable at the
path while they grow and after a crash) gives the new file the target's name at once, replacing
the old one atomically at that moment, and later writes grow it in place; `commit()` makes the result visible (for in-place targets: flush); `discard()` drops what
was written (in-place targets: nothing can be taken back, so nothing is done). `output_file()` is
the context-manager form. Write failures (a full disk) surface as `OutputError` naming the path.

Named temporaries (the fallback where O_TMPFILE is missing) are tracked so that SIGTERM and
SIGHUP, as turned into exceptions by `raise_on_termination()` (cli/boundary.py), and SIGINT
(KeyboardInterrupt) remove them while unwinding.

New files get the mode a plain `open()` would give them (0666 less the umask); a replaced file
keeps its mode.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
from typing import IO, Iterator

from amdgpu_cli.errors import OutputError

STDOUT = "-"
_USE_O_TMPFILE = hasattr(os, "O_TMPFILE")  # tests turn it off to check the named fallback

# Kinds of target.
_STDOUT, _IN_PLACE, _REPLACE = "stdout", "in place", "replace"


def _fail(path: str, reason: str) -> OutputError:
    return OutputError(f"cannot write `{path}`: {reason}")


def _reason(e: OSError) -> str:
    return e.strerror or str(e)


def _classify(path: str) -> tuple[str, str]:
    """(kind, the path to write) for `path`; raises OutputError for paths that cannot be written."""
    if path == STDOUT:
        return _STDOUT, path
    if not path:
        raise _fail(path, "empty path")
    try:
        st = os.stat(path)  # follows links
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise _fail(path, _reason(e)) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise _fail(path, "is a directory")
    absolute = os.path.abspath(path)
    if st is not None and (not stat.S_ISREG(st.st_mode)
                           or absolute.startswith(("/dev/", "/proc/"))):
        return _IN_PLACE, path
    real = os.path.realpath(path) if os.path.islink(path) else absolute
    folder = os.path.dirname(real)
    if not os.path.isdir(folder):
        raise _fail(path, "No such file or directory" if not os.path.exists(folder)
                    else f"`{folder}` is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise _fail(path, "Permission denied")
    return _REPLACE, real


# Named temporaries now on disk (O_TMPFILE fallback), removed when a termination signal unwinds.
_named_temporaries: set[str] = set()


class OutputFile:
    """One output path, checked now, written with `open()`, made visible with `commit()`."""

    def __init__(self, path: str | os.PathLike, *, append: bool = False, read: bool = False):
        self.path = os.fspath(path)
        self.append = append
        self.read = read  # the writer reads back what it wrote (seek + read): "w+b"
        self._kind, self._target = _classify(self.path)
        self.file: IO[bytes] | None = None
        self._fd_path: str | None = None  # /proc/self/fd/N of an O_TMPFILE file
        self._temp: str | None = None  # a named temporary
        self._published = False  # publish(): the new file already has the target's name

    @property
    def in_place(self) -> bool:
        return self._kind != _REPLACE

    @property
    def key(self) -> str:
        """What is really written: the real path of a replaced file, else the path as given."""
        return self._target

    def open(self) -> IO[bytes]:
        """The binary file to write (standard output's buffer for `-`)."""
        if self.file is not None:
            return self.file
        try:
            if self._kind == _STDOUT:
                sys.stdout.flush()
                self.file = _Unclosed(sys.stdout.buffer)
            elif self._kind == _IN_PLACE:
                mode = ("a" if self.append else "w") + ("+b" if self.read else "b")
                self.file = open(self.path, mode)
            else:
                self.file = self._open_temporary()
        except OSError as e:
            raise _fail(self.path, _reason(e)) from None
        return self.file

    def _open_temporary(self) -> IO[bytes]:
        folder = os.path.dirname(self._target)
        try:
            if not _USE_O_TMPFILE:
                raise OSError(errno.EOPNOTSUPP, "O_TMPFILE not used")
            fd = os.open(folder, os.O_TMPFILE | os.O_RDWR | os.O_CLOEXEC, 0o600)
            self._fd_path = f"/proc/self/fd/{fd}"
        except OSError:  # not supported by this file system (or turned off)
            import tempfile

            fd, self._temp = tempfile.mkstemp(prefix=f".{os.path.basename(self._target)}.",
                                              suffix=".tmp", dir=folder)
            _named_temporaries.add(self._temp)
        f = os.fdopen(fd, "w+b")
        if self.append:
            with contextlib.suppress(FileNotFoundError), open(self._target, "rb") as old:
                _copy(old, f)
        return f

    def publish(self) -> IO[bytes]:
        """Opens the file and names it now (see the module docstring); returns it."""
        f = self.open()
        if self._kind != _REPLACE or self._published:
            return f
        try:
            f.flush()
            self._name(f)
        except OSError as e:
            raise _fail(self.path, _reason(e)) from None
        self._published = True
        return f

    def commit(self) -> None:
        """Makes what was written the file at the path (in place: flushes it)."""
        if self._published:
            f, self.file = self.file, None
            try:
                f.flush()
                os.fsync(f.fileno())
                f.close()
            except OSError as e:
                with contextlib.suppress(OSError):
                    f.close()
                raise _fail(self.path, _reason(e)) from None
            return
        f, self.file = self.file, None
        if f is None:
            if self._kind != _REPLACE:
                return
            f = self.open()  # nothing was written: an empty output is still an output
            self.file = None
        try:
            f.flush()
            if self._kind != _REPLACE:
                if self._kind == _IN_PLACE:
                    f.close()
                return
            os.fsync(f.fileno())
            self._name(f)
            f.close()
        except OSError as e:
            with contextlib.suppress(OSError):
                f.close()
            self._drop_temporary()
            raise _fail(self.path, _reason(e)) from None

    def _name(self, f: IO[bytes]) -> None:
        """Gives the written file (unnamed or a named temporary) the target's name, with the
        target's mode, and syncs the folder."""
        os.chmod(f.fileno(), _mode_for(self._target))
        if self._fd_path is not None:
            self._link_unnamed(f)
        else:
            os.replace(self._temp, self._target)
            _named_temporaries.discard(self._temp)
            self._temp = None
        _fsync_folder(os.path.dirname(self._target))

    def _link_unnamed(self, f: IO[bytes]) -> None:
        """Gives the O_TMPFILE file a name beside the target, then renames it over the target."""
        import random

        folder = os.path.dirname(self._target)
        base = os.path.basename(self._target)
        # linkat(AT_SYMLINK_FOLLOW) through /proc/self/fd names the open file itself; CPython
        # uses linkat (not link, which would link the /proc entry) only when a dir_fd is given.
        folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for _ in range(100):
                name = f".{base}.{random.getrandbits(40):010x}.tmp"
                try:
                    os.link(self._fd_path, name, dst_dir_fd=folder_fd, follow_symlinks=True)
                    break
                except FileExistsError:
                    continue
            else:
                raise OSError(errno.EEXIST, "no free temporary name")
        finally:
            os.close(folder_fd)
        temp = os.path.join(folder, name)
        self._temp = temp
        _named_temporaries.add(temp)
        os.replace(temp, self._target)
        _named_temporaries.discard(temp)
        self._temp = None
        self._fd_path = None

    def discard(self) -> None:
        """Drops what was written; the path keeps what it had (in-place targets keep what was
        written, as nothing can take it back)."""
        f, self.file = self.file, None
        if f is not None and (self._kind == _IN_PLACE or self._published):
            with contextlib.suppress(OSError):
                f.close()
            return
        if f is not None and self._kind == _REPLACE:
            with contextlib.suppress(OSError):
                f.close()
        self._drop_temporary()

    def _drop_temporary(self) -> None:
        self._fd_path = None
        if self._temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._temp)
            _named_temporaries.discard(self._temp)
            self._temp = None


@contextlib.contextmanager
def output_file(path: str | os.PathLike, *, text: bool = False,
                append: bool = False) -> Iterator[IO]:
    """Yields a file (binary, or UTF-8 text with `\\n` lines) whose contents become `path` when
    the block ends without an exception; see the module docstring for what each kind of path
    does. An OSError from writing (it names no file) becomes an OutputError naming `path`."""
    if os.fspath(path) == STDOUT and text:
        # Whatever sys.stdout is now (a test's StringIO has no binary buffer to wrap).
        yield sys.stdout
        sys.stdout.flush()
        return
    target = OutputFile(path, append=append)
    raw = target.open()
    f = io.TextIOWrapper(_Unclosed(raw), encoding="utf-8", newline="\n") if text else raw
    try:
        yield f
        if text:
            f.flush()
    except BaseException as e:
        target.discard()
        if isinstance(e, OSError) and not isinstance(e, BrokenPipeError) and e.filename is None:
            raise _fail(target.path, _reason(e)) from None
        raise
    target.commit()


def write_outputs(items: list[tuple[OutputFile, bytes]]) -> None:
    """Writes several outputs whose bytes are all ready: every file is written and synced first,
    then all are made visible, so a failure leaves every path as it was (in-place targets aside)."""
    opened = []
    try:
        for target, data in items:
            f = target.open()
            opened.append(target)
            try:
                f.write(data)
            except OSError as e:
                if isinstance(e, BrokenPipeError):
                    raise
                raise _fail(target.path, _reason(e)) from None
        for target in opened:
            target.commit()
    except BaseException:
        for target in opened:
            target.discard()
        raise


class _Unclosed(io.RawIOBase):
    """A binary stream over another that flushes but never closes it (standard output)."""

    def __init__(self, inner: IO[bytes]):
        super().__init__()
        self._inner = inner

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._inner.write(data)
        return len(data)

    def flush(self) -> None:
        self._inner.flush()

    def fileno(self) -> int:
        return self._inner.fileno()

    def close(self) -> None:
        with contextlib.suppress(ValueError, OSError):
            self._inner.flush()
        super().close()


def _copy(src: IO[bytes], dst: IO[bytes]) -> None:
    import shutil

    shutil.copyfileobj(src, dst, 1 << 20)


def _fsync_folder(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _mode_for(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask

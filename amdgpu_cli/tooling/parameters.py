"""Parameter provider: `--parameters=[scope=]FILE` files, indexed by scope, for io_parameters.

    provider = ParameterProvider.open([("model", "weights.irpa")], mode="file")
    entry, source = provider.scope("model").lookup("w")   # NOT_FOUND as IREE words it
    provider.close()

What IREE 3.13.0's tools do (runtime/src/iree/tooling/parameter_util.c, io/parameter_index.c,
io/parameter_index_provider.c, io/file_handle.c):
  * each flag is `scope=path` (split at the first `=`) or a bare `path` (the empty scope); every
    scope gets one index and the files of one scope are appended to it in flag order; a key
    present twice resolves to its first entry;
  * `--parameter_mode` is `file` (the default: platform file I/O as needed) or `preload` (each
    file read whole into memory at start); anything else is INVALID_ARGUMENT "unrecognized
    --parameter_mode= value 'X'";
  * a file that cannot be opened fails with the errno's status and "failed to open file 'P'";
    the format is chosen from the extension by the parser (formats/parameters.py);
  * the files are opened only when a module imports `io_parameters` (the tool creates the module
    while it resolves the modules' dependencies), so an unused bad `--parameters` is no error.

Storage: `file` mode reads through the archive's read-only map (`ParameterArchive.view`, no copy
until a queue operation copies into a device buffer); `preload` mode holds each file's bytes in
one bytearray, which buffers may alias (io_parameters imports them where the allocator allows,
as IREE imports its preloaded host allocations). Views handed out are released by close().
Lifetime: the provider is opened once per session and closed after the session's devices (no
queue operation can still read a view).
"""

from __future__ import annotations

import errno
import os
from typing import Iterable, Sequence

from amdgpu_cli.errors import AmdgpuCliError

__all__ = ["PARAMETER_MODES", "ParameterProvider", "ParameterScope", "ParameterSource",
           "parse_parameter_specs"]

PARAMETER_MODES = ("preload", "file")
DEFAULT_PARAMETER_MODE = "file"

# iree_status_code_from_errno, for the errors opening a file can give.
_ERRNO_STATUS = {
    errno.ENOENT: "NOT_FOUND", errno.ENOTDIR: "NOT_FOUND", errno.EACCES: "PERMISSION_DENIED",
    errno.EPERM: "PERMISSION_DENIED", errno.EISDIR: "FAILED_PRECONDITION",
    errno.ENAMETOOLONG: "INVALID_ARGUMENT", errno.ENOMEM: "RESOURCE_EXHAUSTED",
    errno.EMFILE: "RESOURCE_EXHAUSTED",
}


def parse_parameter_specs(specs) -> list[tuple[str, str]]:
    """`--parameters` values (`scope=path` / `path` strings, or (scope, path) pairs; a mapping
    {scope: path} too) as (scope, path) pairs in order."""
    if specs is None:
        return []
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    elif isinstance(specs, dict):
        specs = list(specs.items())
    pairs = []
    for spec in specs:
        if isinstance(spec, (tuple, list)):
            scope, path = spec
            pairs.append((str(scope or ""), os.fspath(path)))
            continue
        text = os.fspath(spec)
        scope, sep, path = text.partition("=")
        pairs.append((scope, path) if sep else ("", text))
    return pairs


def check_mode(mode: str) -> str:
    if mode not in PARAMETER_MODES:
        raise AmdgpuCliError(f"unrecognized --parameter_mode= value '{mode}'",
                             status="INVALID_ARGUMENT")
    return mode


class ParameterSource:
    """One opened parameter file: its index (a ParameterArchive) and, in preload mode, its
    bytes. `readable`/`writable` are the access the file was opened with (always read-only
    from the tools, as IREE opens them)."""

    def __init__(self, path: str, mode: str):
        from amdgpu_cli.formats.parameters import open_parameters

        self.path = path
        self.mode = mode
        self.readable, self.writable = True, False
        # Opened first on its own so that a missing file reads as IREE's, whatever its format.
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as e:
            raise AmdgpuCliError(f"failed to open file '{path}'",
                                 status=_ERRNO_STATUS.get(e.errno, "UNKNOWN")) from None
        try:
            self.data = None  # preload: the whole file
            if mode == "preload":
                size = os.fstat(fd).st_size
                data = bytearray(size)
                view, done = memoryview(data), 0
                while done < size:
                    n = os.readv(fd, [view[done:]])
                    if n <= 0:
                        raise AmdgpuCliError(f"failed to read file '{path}'", status="DATA_LOSS")
                    done += n
                view.release()
                self.data = data
        finally:
            os.close(fd)
        self.archive = open_parameters(path)
        self.file_size = self.archive.file_size
        self._views: list[memoryview] = []

    def window(self, entry, offset: int, length: int) -> memoryview:
        """`length` bytes at `offset` into a file-backed entry (read-only, no copy)."""
        if self.data is not None:
            start = entry.file_offset + offset
            view = memoryview(self.data)[start:start + length].toreadonly()
        else:
            view = self.archive.view(entry.key)[offset:offset + length]
        self._views.append(view)
        return view

    def read_into(self, offset: int, view: memoryview) -> None:
        """Fills `view` with the file's bytes from `offset`, from the preloaded bytes or with
        pread (no mapping, no copy on the way): queue_read_file's source."""
        if self.data is not None:
            view[:] = memoryview(self.data)[offset:offset + len(view)]
            return
        fd, done, size = self.archive.fileno(), 0, len(view)
        while done < size:
            n = os.preadv(fd, [view[done:]], offset + done)
            if n <= 0:
                raise AmdgpuCliError(f"failed to read file '{self.path}'", status="DATA_LOSS")
            done += n

    def file_view(self) -> memoryview:
        """The whole file (capture policies that store it): preloaded bytes or a read."""
        if self.data is not None:
            return memoryview(self.data).toreadonly()
        with open(self.path, "rb") as f:
            return memoryview(f.read())

    def close(self) -> None:
        for view in self._views:
            view.release()
        self._views.clear()
        self.archive.close()
        self.data = None


class ParameterScope:
    """The index of one scope: key -> (entry, source), the first file naming a key wins."""

    def __init__(self, name: str):
        self.name = name
        self.entries: dict[str, tuple[object, ParameterSource]] = {}

    def add(self, source: ParameterSource) -> None:
        for key, entry in source.archive.entries.items():
            self.entries.setdefault(key, (entry, source))

    def lookup(self, key: str):
        found = self.entries.get(key)
        if found is None:
            raise AmdgpuCliError(f"no parameter found in index with key '{key}'",
                                 status="NOT_FOUND")
        return found


class ParameterProvider:
    """Scopes -> indices over the opened parameter files (see the module docstring)."""

    def __init__(self, scopes: dict[str, ParameterScope], sources: list[ParameterSource],
                 mode: str):
        self.scopes = scopes
        self.sources = sources
        self.mode = mode
        self._closed = False

    @classmethod
    def open(cls, specs: Iterable | None, mode: str = DEFAULT_PARAMETER_MODE
             ) -> ParameterProvider:
        """Opens every file of `specs` (parse_parameter_specs' forms) in `mode`; a failure
        closes what was opened and raises IREE's error."""
        check_mode(mode)
        scopes: dict[str, ParameterScope] = {}
        sources: list[ParameterSource] = []
        try:
            for scope, path in parse_parameter_specs(specs):
                source = ParameterSource(path, mode)
                sources.append(source)
                scopes.setdefault(scope, ParameterScope(scope)).add(source)
        except BaseException:
            for source in sources:
                source.close()
            raise
        return cls(scopes, sources, mode)

    def scope(self, name: str) -> ParameterScope:
        found = self.scopes.get(name)
        if found is None:
            raise AmdgpuCliError(f"no provider registered that handles scopes like '{name}'",
                                 status="NOT_FOUND")
        return found

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for source in self.sources:
            source.close()

    def __enter__(self) -> ParameterProvider:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def imports_parameters(modules: Sequence) -> bool:
    """Whether any of the BytecodeModules depends on (imports) `io_parameters`."""
    for module in modules:
        if any(dep.name == "io_parameters" for dep in module.dependencies):
            return True
        if any(imp.module_name == "io_parameters" for imp in module.imports):
            return True
    return False

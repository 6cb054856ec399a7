"""Parameter files for `--parameters=[scope=]FILE`: one reader over IREE's three formats.

Owns opening and mapping a parameter file, choosing its format, and the entry index the
`io_parameters` module serves from. The layouts live one per module: `irpa.py` (IREE parameter
archive), `gguf.py`, `safetensors.py`; each exposes `parse(data) -> list[ParameterEntry]` over the
file's bytes and raises `ParameterFormatError` (one line, IREE's status name) for anything a
corrupt file can break. They import this module; this module imports them only when a file is
opened, so importing it stays cheap.

Format choice (IREE `io/formats/parser_registry.c`): by the file name's extension alone,
case-insensitive — `irpa`, `gguf`, `safetensors`; a name without a dot is taken as the extension
itself (`--parameters=irpa` names a file called `irpa`, read as an archive). Anything else is
UNIMPLEMENTED before the file is read. The magic is not used to choose; each parser checks its own
(a `.gguf` holding an archive is a GGUF magic error, as in IREE).

Lifetime: `ParameterArchive` holds the open file and one read-only mmap of it. `view(key)` of a
file-backed entry is a zero-copy slice of that mapping; a splat entry's view is materialized
bytes (capped at `MAX_SPLAT_VIEW_BYTES`). `close()` unmaps and closes the file; a mapping still
exported through live views stays valid until those views are released (the mmap is then dropped
by the garbage collector instead of `close()`). A `weakref.finalize` closes an archive nobody
closed. An empty file is INVALID_ARGUMENT for every format, as in IREE (it maps the file first). Not thread-safe for concurrent close; reads of views are.

Duplicate keys: IREE's index keeps every entry and its lookup returns the first; `entries` keeps
the first under each key (file order), so lookups agree.
"""

from __future__ import annotations

import mmap
import os
import weakref
from typing import NamedTuple

from amdgpu_cli.errors import AmdgpuCliError, InputFileError

__all__ = [
    "FORMATS",
    "MAX_SPLAT_VIEW_BYTES",
    "ParameterArchive",
    "ParameterEntry",
    "ParameterFormatError",
    "format_for_path",
    "open_parameters",
]

# Extension (lower case) -> the format's name and the module that parses it (imported when a
# file of that format is opened: the parsers import this module).
FORMATS = {"irpa": ("irpa", "amdgpu_cli.formats.irpa"),
           "gguf": ("gguf", "amdgpu_cli.formats.gguf"),
           "safetensors": ("safetensors", "amdgpu_cli.formats.safetensors")}

# Largest splat `view()` materializes; bigger splats are for fills from `ParameterEntry.splat`.
MAX_SPLAT_VIEW_BYTES = 1 << 30


class ParameterFormatError(AmdgpuCliError):
    """A parameter file that breaks its format; `status` is the code IREE's parser returns."""

    status = "INVALID_ARGUMENT"


class ParameterEntry(NamedTuple):
    key: str  # the file's key bytes, UTF-8 decoded with surrogateescape (round-trips any bytes)
    length: int  # bytes of the parameter
    file_offset: int | None  # where its bytes start in the file (None: not file-backed)
    splat: bytes | None  # irpa splat entries: the pattern repeated over `length` (None otherwise)
    metadata: bytes = b""  # irpa per-entry metadata, if any

    @property
    def key_bytes(self) -> bytes:
        return self.key.encode("utf-8", "surrogateescape")


def decode_key(raw) -> str:
    """A key as stored (bytes) -> str; surrogateescape keeps non-UTF-8 keys distinct and reversible."""
    return bytes(raw).decode("utf-8", "surrogateescape")


def format_for_path(path: str) -> str:
    """The format IREE picks for `path` ('irpa', 'gguf' or 'safetensors'), or UNIMPLEMENTED."""
    base = os.path.basename(os.fspath(path))
    _, dot, extension = base.rpartition(".")
    if not dot:
        extension = base
    chosen = FORMATS.get(extension.lower())
    if chosen is None:
        raise ParameterFormatError(
            f"unsupported file format `{extension}`; ensure the extension matches one of the "
            f"supported formats: [.irpa, .gguf, .safetensors]", status="UNIMPLEMENTED")
    return chosen[0]


def _close_resources(mapping, file) -> None:
    if mapping is not None:
        try:
            mapping.close()
        except BufferError:
            pass  # views still export it; it unmaps when the last one goes
    file.close()


class ParameterArchive:
    """One opened parameter file: its entries in file order and zero-copy views of their bytes."""

    def __init__(self, path: str, file, mapping, entries: list[ParameterEntry], fmt: str):
        self.path = path
        self.format = fmt
        self._file = file
        self._mapping = mapping
        self._data = memoryview(mapping)
        self.file_size = len(self._data)
        self.entries: dict[str, ParameterEntry] = {}
        for entry in entries:
            self.entries.setdefault(entry.key, entry)
        self._finalizer = weakref.finalize(self, _close_resources, mapping, file)

    # -- lookups --------------------------------------------------------------------------------

    def __contains__(self, key: str) -> bool:
        return key in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def lookup(self, key: str) -> ParameterEntry:
        entry = self.entries.get(key)
        if entry is None:
            raise ParameterFormatError(f"no parameter found in index with key '{key}'", status="NOT_FOUND")
        return entry

    def view(self, key: str) -> memoryview:
        """The parameter's bytes: a read-only slice of the mapped file, or a materialized splat."""
        entry = self.lookup(key)
        if entry.splat is not None:
            return memoryview(splat_bytes(entry))
        if self._data is None:
            raise ParameterFormatError(f"parameter file {self.path!r} is closed", status="FAILED_PRECONDITION")
        if entry.file_offset is None:
            raise ParameterFormatError(f"parameter '{key}' has no storage", status="FAILED_PRECONDITION")
        return self._data[entry.file_offset:entry.file_offset + entry.length]

    # -- zero-copy users --------------------------------------------------------------------------

    def fileno(self) -> int:
        return self._file.fileno()

    # -- lifetime -------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._data is None

    def close(self) -> None:
        if self._data is None:
            return
        self._data.release()
        self._data = None
        self._finalizer()

    def __enter__(self) -> ParameterArchive:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ParameterArchive {self.format} {self.path!r} {len(self.entries)} entries>"


def splat_bytes(entry: ParameterEntry) -> bytes:
    """A splat entry's contents: its pattern repeated over `length` (the last copy cut short if the
    pattern does not divide it). Over MAX_SPLAT_VIEW_BYTES is RESOURCE_EXHAUSTED, not an allocation."""
    pattern = entry.splat or b""
    if entry.length == 0:
        return b""
    if not pattern:
        raise ParameterFormatError(f"splat parameter '{entry.key}' has an empty pattern")
    if entry.length > MAX_SPLAT_VIEW_BYTES:
        raise ParameterFormatError(
            f"splat parameter '{entry.key}' of {entry.length} bytes is too large to materialize "
            f"(limit {MAX_SPLAT_VIEW_BYTES}); fill from its pattern instead", status="RESOURCE_EXHAUSTED")
    return (pattern * -(-entry.length // len(pattern)))[:entry.length]


def open_parameters(path) -> ParameterArchive:
    """Open and index a parameter file; the format is chosen from the extension (`format_for_path`).

    Raises InputFileError (NOT_FOUND) for a file that cannot be opened and ParameterFormatError
    (status as IREE reports it, message prefixed with the path) for one that breaks its format.
    """
    import importlib

    path = os.fspath(path)
    fmt = format_for_path(path)
    parser = importlib.import_module(FORMATS[fmt][1])
    try:
        file = open(path, "rb")
    except OSError as e:
        raise InputFileError(f"failed to open file '{path}': {e.strerror or e}") from None
    mapping = None
    try:
        size = os.fstat(file.fileno()).st_size
        if size:
            mapping = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as e:
        file.close()
        raise InputFileError(f"failed to map file '{path}': {getattr(e, 'strerror', None) or e}") from None
    if mapping is None:  # IREE maps the whole file before any parser runs, and an empty one fails
        file.close()
        raise ParameterFormatError(f"{path}: failed to map file handle: file of 0 total bytes")
    data = memoryview(mapping)
    try:
        entries = parser.parse(data)
    except ParameterFormatError as e:
        data.release()
        _close_resources(mapping, file)
        raise ParameterFormatError(f"{path}: {e}", status=e.status) from None
    except BaseException:
        data.release()
        _close_resources(mapping, file)
        raise
    data.release()
    return ParameterArchive(path, file, mapping, entries, fmt)

"""Opening a bundle file: the one place a path becomes a read-only mapping (or an error), and the
window a pass over a mapping reads before letting its pages go.

Used by the reader (`Bundle.open`) and by `summary`'s one-pass path, which must fail on a missing,
unreadable or directory path with the same message and status. Plain Python, no numpy.
"""

from __future__ import annotations

import mmap
import os
import struct

from amdgpu_cli.errors import InputFileError
from amdgpu_cli.profile.names import MAGIC, VERSION_MAJOR

WINDOW_BYTES = 32 << 20  # how much of the file a pass reads before letting its pages go
_FILE_HEADER = struct.Struct("<IHHIIQ")  # magic, version major/minor, header_length, flags, file_length


def map_file(path: str) -> mmap.mmap | None:
    """The whole file mapped read-only, or None for an empty file (which cannot be mapped).

    Not pre-faulted: the passes over it map the pages they are about to read a window at a time
    and let them go behind, so the file's size never counts whole against peak memory."""
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return None
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise InputFileError(f"failed to open file '{path}'") from None
    except IsADirectoryError:
        raise InputFileError(f"'{path}' is a directory", status="INVALID_ARGUMENT") from None
    except OSError as e:
        raise InputFileError(f"failed to read '{path}': {e.strerror or e}",
                             status="UNAVAILABLE") from None


def page_window(length: int) -> int:
    """The window a pass over a file mapping of `length` bytes pages it by (the native passes'
    `window`): WINDOW_BYTES, or 0 (no paging: the pages stay mapped until the mapping goes) for
    a file of one window or less, which a report may read several times over."""
    return WINDOW_BYTES if length > WINDOW_BYTES else 0


def valid_header(mm) -> tuple[int | None, int]:
    """(first record offset, logical length) of a mapped bundle, or (None, 0) when its file header
    is one the reader rejects (the reader then says why)."""
    if len(mm) < _FILE_HEADER.size:
        return None, 0
    magic, major, _, header_length, flags, file_length = _FILE_HEADER.unpack_from(mm, 0)
    if (magic != MAGIC or major != VERSION_MAJOR or header_length < _FILE_HEADER.size
            or header_length > len(mm) or flags != 0 or file_length > len(mm)
            or (file_length != 0 and file_length < header_length)):
        return None, 0
    return header_length, file_length or len(mm)

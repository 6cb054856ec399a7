"""The native half of the profile tools (`_scan`, built by `pip install` from `_scan_build.py`):
whether it is there and switched on, and the content-type names its record walks match.

Every native path has a Python or numpy twin that makes the same checks; `AMDGPU_CLI_PURE_PYTHON=1`
switches the native one off, and the tests run both. Plain Python, no numpy.
"""

from __future__ import annotations

import os

from amdgpu_cli.profile.mapped import map_file, valid_header
from amdgpu_cli.profile.names import CONTENT_TYPE_PREFIX, FAMILIES

try:  # absent when the package was not built
    from amdgpu_cli.profile import _scan as scan
except ImportError:  # pragma: no cover - depends on the install
    scan = None

# Every family's full content-type name, in schema order, as the native walks match them.
CONTENT_NAMES: list[bytes] = [(CONTENT_TYPE_PREFIX + suffix).encode() for suffix, _, _ in FAMILIES]


def native_enabled() -> bool:
    """Whether the native fast paths (`_scan`) are built and not switched off."""
    return scan is not None and os.environ.get("AMDGPU_CLI_PURE_PYTHON", "") in ("", "0")


def native_module():
    """(ffi, lib) of the native module; only when `native_enabled()`."""
    return scan.ffi, scan.lib


def content_name_table(ffi):
    """(names, lengths): CONTENT_NAMES back to back and each one's length, for the native walks."""
    return b"".join(CONTENT_NAMES), ffi.new("uint32_t[]", [len(n) for n in CONTENT_NAMES])


def open_mapped(path: str):
    """(mapping, first record offset, logical length) of the bundle at `path`, for the one-pass
    reducers; None when the native module is off, the file is empty or its header is one the
    reader rejects (the exact path then says why). Raises the reader's error for a path that
    cannot be opened."""
    if not native_enabled():
        return None
    mm = map_file(path)
    if mm is None:
        return None
    first, length = valid_header(mm)
    if first is None:
        mm.close()
        return None
    return mm, first, length


def on_mapped_bundle(path: str, reduce):
    """`reduce(mapping, first record offset, logical length)` over the bundle at `path` (see
    `open_mapped`; None without calling it where that gives None), unmapped afterwards."""
    mapped = open_mapped(path)
    if mapped is None:
        return None
    try:
        return reduce(*mapped)
    finally:
        mapped[0].close()

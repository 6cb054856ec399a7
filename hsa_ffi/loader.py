"""Finding and opening the HSA runtime library, and the one checker every HSA call goes through.

Search order (IREE `util/libhsa.c`, reference §3), first success wins:
1. each explicit search path (`--amdgpu_libhsa_search_path`, repeatable, in order);
2. `IREE_HAL_AMDGPU_LIBHSA_PATH`, when set and non-empty;
3. the bare names `libhsa-runtime64.so.1`, then `libhsa-runtime64.so`, through the dynamic linker
   (LD_LIBRARY_PATH, ld.so cache, default directories). The test hook `AMDGPU_LIBHSA_SKIP_SYSTEM=1`
   leaves this step out (the error still names the two, as skipped), so tests can reproduce
   "no HSA library anywhere" on a machine that has one.

An entry from 1 or 2 whose name ends in `.so`, `.dll`, `.dylib` or `.sos` is a file handed straight
to dlopen; any other entry (including `.../libhsa-runtime64.so.1`, whose extension is `1`) is a
directory, tried as `<dir>/libhsa-runtime64.so.1` then `<dir>/libhsa-runtime64.so`.

dlopen is called directly (RTLD_LAZY | RTLD_LOCAL) so each failure records the exact dlerror text and
no fallback search by another name happens behind our back. The opened library must export every
`CDEF_CORE` function (as IREE resolves its whole symbol table up front); the `CDEF_NEW` functions
are optional and reported by `Libhsa.has`.

One process-wide `ffi` holds the declarations; every `Libhsa` shares it. A `Libhsa` never calls
`hsa_shut_down` on its own: `init()` and `shut_down()` are paired by the caller (HSA reference-counts
them).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import cffi

from hsa_ffi.cdef import CDEF_CORE, CDEF_NEW, CORE_FUNCTIONS
from hsa_ffi.dl import dlopen_first, file_of_address
from hsa_ffi.status import HsaError, LibhsaNotFound, status_name

LIBRARY_NAMES = ("libhsa-runtime64.so.1", "libhsa-runtime64.so")
FILE_EXTENSIONS = (".so", ".dll", ".dylib", ".sos")
PATH_ENV = "IREE_HAL_AMDGPU_LIBHSA_PATH"
SKIP_SYSTEM_ENV = "AMDGPU_LIBHSA_SKIP_SYSTEM"

NOT_FOUND_MESSAGE = (
    "HSA/ROCR-Runtime library not found; ensure it is installed and on a valid search path "
    "(or specified with IREE_HAL_AMDGPU_LIBHSA_PATH or --amdgpu_libhsa_search_path)")

ffi = cffi.FFI()
ffi.cdef(CDEF_CORE)
ffi.cdef(CDEF_NEW)

def _skip_system(env: Mapping[str, str]) -> bool:
    return env.get(SKIP_SYSTEM_ENV) == "1"


def candidates(search_paths: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> list[str]:
    """Every path or name `load` would try, in order."""
    env = os.environ if environ is None else environ
    entries = [str(p) for p in search_paths if str(p)]  # an empty entry names no place
    if env.get(PATH_ENV):
        entries.append(env[PATH_ENV])
    result: list[str] = []
    for entry in entries:
        if entry.endswith(FILE_EXTENSIONS):
            result.append(entry)
        else:
            result.extend(os.path.join(entry, name) for name in LIBRARY_NAMES)
    if not _skip_system(env):
        result.extend(LIBRARY_NAMES)
    return result


def load(search_paths: Iterable[str] = (), environ: Mapping[str, str] | None = None,
         error_type: type[HsaError] = HsaError) -> Libhsa:
    """Open the first HSA runtime found in IREE's search order; `LibhsaNotFound` lists every try.
    The `Libhsa` raises `error_type` (an `HsaError` subclass) for every failed call."""
    env = os.environ if environ is None else environ
    handle, candidate, tried = dlopen_first(candidates(search_paths, env))
    if handle is not None:
        return Libhsa(ffi.dlopen(handle), candidate, tried, error_type)
    if _skip_system(env):
        tried.extend((name, f"skipped: {SKIP_SYSTEM_ENV}=1") for name in LIBRARY_NAMES)
    attempts = "; ".join(f"tried {path} ({why})" for path, why in tried)
    raise LibhsaNotFound(f"{NOT_FOUND_MESSAGE}: {attempts}")


def _file_of(function) -> str | None:
    """The file the dynamic linker loaded `function` from (what a bare name resolved to)."""
    return file_of_address(int(ffi.cast("uintptr_t", function)))


class Libhsa:
    """An opened HSA runtime: `ffi`, `lib`, the `path` it was opened from (the candidate as
    written), `file` (the file that candidate resolved to), the failed `tried` list.

    `call(name, *args)` runs one HSA function and raises `HsaError` unless it returns SUCCESS or
    INFO_BREAK; functions that return values rather than a status (signal loads, queue indices) are
    called on `lib` directly.
    """

    def __init__(self, lib, path: str, tried: list[tuple[str, str]],
                 error_type: type[HsaError] = HsaError):
        self.ffi = ffi
        self.error_type = error_type
        self.lib = lib
        self.path = path
        self.tried = tried
        for name in CORE_FUNCTIONS:
            if not self.has(name):
                raise error_type(f"symbol '{name}' not found in library {path}",
                                 status="NOT_FOUND")
        self.file = _file_of(lib.hsa_init) or path

    def has(self, name: str) -> bool:
        """Whether the library exports `name` (use before calling a `CDEF_NEW` function)."""
        try:
            getattr(self.lib, name)
        except AttributeError:
            return False
        return True

    def check(self, name: str, status: int) -> int:
        """Return `status` when it is SUCCESS or INFO_BREAK; otherwise raise `HsaError` naming `name`."""
        if status == 0 or status == 1:
            return status
        raise self.error(name, status)

    def call(self, name: str, *args) -> int:
        """`check(name, lib.<name>(*args))`, with the success test inlined (this is the hot path)."""
        status = getattr(self.lib, name)(*args)
        if status == 0 or status == 1:
            return status
        raise self.error(name, status)

    def error(self, name: str, status: int) -> HsaError:
        """The `HsaError` for `status` returned by `name` (for callers that check statuses themselves,
        e.g. HSA callbacks that must not raise)."""
        return self.error_type.from_status(name, status, self._runtime_description(status))

    def init(self) -> None:
        self.call("hsa_init")

    def shut_down(self) -> None:
        self.call("hsa_shut_down")

    def _runtime_description(self, code: int) -> str | None:
        """The runtime's own text for `code` (without its leading status name), if it has one."""
        text_ptr = ffi.new("const char**")
        if self.lib.hsa_status_string(code, text_ptr) != 0 or text_ptr[0] == ffi.NULL:
            return None
        text = ffi.string(text_ptr[0]).decode(errors="replace").strip()
        prefix = f"{status_name(code)}:"
        if text.startswith(prefix):
            text = text[len(prefix):].strip()
        return " ".join(text.split()) or None

    def __repr__(self) -> str:
        return f"Libhsa({self.path!r})"

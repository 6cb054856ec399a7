"""dlopen and dladdr through cffi, apart from the HSA declarations (importing this parses no HSA
header text: the cuda driver's loader uses it too).

`dlopen_one(candidate, now=False)`: (handle, None) on success, (None, dlerror text) on failure,
dlopen called directly (RTLD_LAZY, or RTLD_NOW with `now`, and RTLD_LOCAL) so each failure keeps
dlerror's exact text and no other search runs behind the caller's back.
`dlopen_first(candidates, now=False)`: the first candidate that opens, as (handle, candidate,
the failed (candidate, reason) tries before it); (None, None, every try) when none does.
`file_of_address(address)`: the file the dynamic linker loaded the code at `address` from.
"""

from __future__ import annotations

import os

import cffi

_dl_ffi = cffi.FFI()
_dl_ffi.cdef("""
    void* dlopen(const char* filename, int flags);
    char* dlerror(void);
    typedef struct { const char* dli_fname; void* dli_fbase; const char* dli_sname; void* dli_saddr; } Dl_info;
    int dladdr(const void* address, Dl_info* info);
""")
_libc = _dl_ffi.dlopen(None)
# Bound once: resolving a symbol lazily (dlsym) would clear the dlerror text we want to keep.
_dlopen = _libc.dlopen
_dlerror = _libc.dlerror
_dladdr = _libc.dladdr


def dlopen_one(candidate: str, *, now: bool = False):
    """(handle, None) on success, (None, dlerror text) on failure (see the module docstring)."""
    mode = _dl_ffi.RTLD_NOW if now else _dl_ffi.RTLD_LAZY
    handle = _dlopen(os.fsencode(candidate), mode | _dl_ffi.RTLD_LOCAL)
    if handle == _dl_ffi.NULL:
        error = _dlerror()
        if error == _dl_ffi.NULL:
            return None, "dlopen failed"
        reason = _dl_ffi.string(error).decode(errors="replace")
        # dlerror starts with the name it was given; the message already shows it.
        return None, reason.removeprefix(f"{candidate}: ")
    return handle, None


def dlopen_first(candidates, *, now: bool = False):
    """(handle, candidate, tries before it) of the first candidate that opens, or (None, None,
    every (candidate, reason) tried)."""
    tried: list[tuple[str, str]] = []
    for candidate in candidates:
        handle, reason = dlopen_one(candidate, now=now)
        if handle is not None:
            return handle, candidate, tried
        tried.append((candidate, reason))
    return None, None, tried


def file_of_address(address: int) -> str | None:
    info = _dl_ffi.new("Dl_info*")
    if not _dladdr(_dl_ffi.cast("void*", address), info) or info.dli_fname == _dl_ffi.NULL:
        return None
    return os.path.realpath(_dl_ffi.string(info.dli_fname).decode(errors="replace"))

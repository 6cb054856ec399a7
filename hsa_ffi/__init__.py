"""cffi declarations of the HSA runtime API subset the amdgpu driver uses, and the library loader.

- `cdef.py`: ABI-mode declarations pinned to the ROCm 5.2.3 headers (`CDEF_CORE`), plus what newer
  ROCm adds (`CDEF_NEW`, optional at run time).
- `constants.py`: the enum values, under the header names.
- `loader.py`: `load(search_paths, environ)` in IREE's search order -> `Libhsa` (`ffi`, `lib`, `path`,
  `tried`, `check`, `call`, `has`, `init`, `shut_down`).
- `status.py`: status names, the HSA -> IREE status mapping, `HsaError` and `LibhsaNotFound`.
- `dl.py`: dlopen / dladdr (no HSA declarations; the cuda driver's loader uses it).

Everything above this package calls HSA through a `Libhsa`; nothing else imports cffi for HSA.
"""

from __future__ import annotations

import importlib

# Loaded on first use (PEP 562), so a submodule such as hsa_ffi.dl comes without parsing the
# HSA declarations.
_EXPORTS = {"constants": "hsa_ffi.constants", "Libhsa": "hsa_ffi.loader",
            "candidates": "hsa_ffi.loader", "ffi": "hsa_ffi.loader", "load": "hsa_ffi.loader",
            "HsaError": "hsa_ffi.status", "LibhsaNotFound": "hsa_ffi.status",
            "iree_status": "hsa_ffi.status", "status_name": "hsa_ffi.status"}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hsa_ffi' has no attribute {name!r}")
    loaded = importlib.import_module(module)
    value = loaded if name == "constants" else getattr(loaded, name)
    globals()[name] = value
    return value

__all__ = [
    "HsaError",
    "Libhsa",
    "LibhsaNotFound",
    "candidates",
    "constants",
    "ffi",
    "iree_status",
    "load",
    "status_name",
]

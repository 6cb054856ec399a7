"""cffi declarations of the HSA runtime API subset the amdgpu driver uses, and the library loader.

- `cdef.py`: ABI-mode declarations pinned to the ROCm 5.2.3 headers (`CDEF_CORE`), plus what newer
  ROCm adds (`CDEF_NEW`, optional at run time).
- `constants.py`: the enum values, under the header names.
- `loader.py`: `load(search_paths, environ)` in IREE's search order -> `Libhsa` (`ffi`, `lib`, `path`,
  `tried`, `check`, `call`, `has`, `init`, `shut_down`).
- `status.py`: status names, the HSA -> IREE status mapping, `HsaError` and `LibhsaNotFound`.

Everything above this package calls HSA through a `Libhsa`; nothing else imports cffi for HSA.
"""

from __future__ import annotations

from hsa_ffi import constants
from hsa_ffi.loader import Libhsa, candidates, ffi, load
from hsa_ffi.status import HsaError, LibhsaNotFound, iree_status, status_name

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

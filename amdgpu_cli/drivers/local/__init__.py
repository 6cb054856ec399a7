"""CPU driver: IREE executable libraries (llvm-cpu `embedded-elf-*`) loaded and dispatched in-process.

`LocalExecutable.from_elf(data)` loads one (`elf_loader.py`: mapping, relocation, query);
`LocalExecutable.dispatch(...)` runs an export over its workgroup grid through the native helper
`_dispatch` (built from `_dispatch_build.py`).
"""

from .elf_loader import ElfLibrary, ElfLoadError, ExportInfo, load_elf_library
from .executable import DispatchError, LocalExecutable, WorkerPool, default_pool

# The HAL driver/device (imported after the executable layer they build on).
from .device import LocalDevice, LocalExecutableCache, LocalHalExecutable  # noqa: E402
from .driver import Driver  # noqa: E402

__all__ = ["DispatchError", "Driver", "ElfLibrary", "ElfLoadError", "ExportInfo", "LocalDevice",
           "LocalExecutable", "LocalExecutableCache", "LocalHalExecutable", "WorkerPool", "default_pool",
           "load_elf_library"]

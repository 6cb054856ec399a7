"""CPU driver: IREE executable libraries (llvm-cpu `embedded-elf-*`) loaded and dispatched in-process.

`LocalExecutable.from_elf(data)` loads one (`elf_loader.py`: mapping, relocation, query);
`LocalExecutable.dispatch(...)` runs an export over its workgroup grid through the native helper
`_dispatch` (built from `_dispatch_build.py`).
"""

from .elf_loader import ElfLibrary, ElfLoadError, ExportInfo, load_elf_library
from .executable import DispatchError, LocalExecutable, WorkerPool, default_pool

__all__ = ["DispatchError", "ElfLibrary", "ElfLoadError", "ExportInfo", "LocalExecutable", "WorkerPool",
           "default_pool", "load_elf_library"]

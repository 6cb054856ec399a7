"""Builds `amdgpu_cli.drivers.local._dispatch`: the CPU driver's native helper (cffi API mode).

What it holds, and why it is C:
* the IREE executable-library ABI v0 structs (`runtime/src/iree/hal/local/executable_library.h`,
  IREE 3.13.0, library version 6), declared once in `_dispatch_abi.h` and used by
  `elf_loader.py` and `executable.py` through `ffi`;
* page mapping (`mmap`/`mprotect`/`munmap`) for the embedded-ELF loader;
* `lx_environment_init`: fills `environment_v0` as IREE's runtime does — the import thunk and the
  x86_64 CPU feature bits in `processor.data[0]` (IREE `base/internal/cpu.c` bit layout);
* `lx_call_query` / `lx_call_init`: calls into the loaded library without libffi;
* `lx_dispatch`: runs one dispatch over its whole workgroup grid, either serially on the calling
  thread or on an `lx_pool_t` (a persistent pthread pool; the caller's thread is worker 0). Each
  worker has its own workgroup state and a 64-byte-aligned local-memory arena. Workgroups are
  handed out through one atomic counter (x inner, then y, then z); the first non-zero return
  stops the dispatch and is reported with its workgroup id.
* `lx_program_run`: runs a recorded command buffer's dispatches (`lx_step_t`s, drivers/local/
  program.py) in order in one call, binding addresses computed from per-execution sources; a
  step whose last run was cheaper than waking a worker runs inline.
* the pool hands jobs over without locks: workers spin briefly (`pause`, bounded) for the next
  job, then sleep on a futex; the caller likewise spins, then sleeps, waiting for workers still
  inside a job. Only workers that joined a job are waited for.

The GIL is released around every call (cffi's default), so Python threads may dispatch
concurrently; a pool runs one dispatch or program at a time (callers queue on its lock).

Development build, from the repository root: `python amdgpu_cli/drivers/local/_dispatch_build.py`.
Packaging: setup.py `cffi_modules` entry `amdgpu_cli/drivers/local/_dispatch_build.py:ffibuilder`.
"""

from __future__ import annotations

import os
from pathlib import Path

from cffi import FFI

_HERE = Path(__file__).resolve().parent
# The executable library ABI structs (_dispatch_abi.h) and the helper's own types (_dispatch.h):
# declarations cffi reads and _dispatch_helper.c includes.
ABI_CDEF = (_HERE / "_dispatch_abi.h").read_text()
HELPER_TYPES = (_HERE / "_dispatch.h").read_text()

# The helper's functions, as cffi declares them (`...`: values cffi takes from the C headers).
HELPER_CDEF = """
#define PROT_NONE ...
#define PROT_READ ...
#define PROT_WRITE ...
#define PROT_EXEC ...

void* lx_map(size_t size, int* out_errno);
int lx_protect(void* addr, size_t size, int prot);
int lx_unmap(void* addr, size_t size);
size_t lx_page_size(void);

void lx_environment_init(iree_hal_executable_environment_v0_t* env);
void* lx_host_import(const char* name);
const iree_hal_executable_library_header_t** lx_call_query(
    void* query_fn, uint32_t max_version, const iree_hal_executable_environment_v0_t* env);
void lx_call_init(void* fn);

lx_pool_t* lx_pool_create(uint32_t worker_count);
void lx_pool_destroy(lx_pool_t* pool);
uint32_t lx_pool_size(const lx_pool_t* pool);

int lx_dispatch(lx_pool_t* pool, const iree_hal_executable_environment_v0_t* env,
                void* dispatch_fn, const iree_hal_executable_dispatch_state_v0_t* state,
                uint32_t local_memory_size, lx_dispatch_result_t* out, int timed);

int lx_program_run(lx_pool_t* pool, uint8_t max_concurrency, lx_step_t* steps,
                   uint32_t step_count, const lx_step_binding_t* bindings,
                   const uint64_t* sources, lx_dispatch_result_t* out, uint64_t* times);
"""

ffibuilder = FFI()
ffibuilder.cdef(ABI_CDEF + HELPER_TYPES + HELPER_CDEF)
ffibuilder.set_source("amdgpu_cli.drivers.local._dispatch", '#include "_dispatch_helper.c"\n',
                      include_dirs=[str(_HERE)],
                      extra_compile_args=["-O2", "-std=gnu11", "-Wall", "-Wextra"],
                      libraries=["pthread"])

if __name__ == "__main__":
    # Build in a scratch directory and copy only the extension next to this file, so the
    # generated .c/.o never land in the source tree.
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        built = ffibuilder.compile(tmpdir=scratch, verbose=False)
        target = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.path.basename(built))
        shutil.copyfile(built, target)
        print(target)

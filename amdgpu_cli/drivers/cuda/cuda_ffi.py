"""cffi (ABI mode) declarations of the CUDA driver API subset the cuda driver uses, the loader of
libcuda, and the one checker every CUDA call goes through.

Declarations follow `cuda.h` (CUDA 12.x); every function is named by the symbol libcuda exports,
which for the calls whose ABI changed in CUDA 3.2/4.0/11 is the versioned one (`cuMemAlloc_v2`,
`cuMemcpyHtoDAsync_v2`, `cuStreamDestroy_v2`, `cuDevicePrimaryCtxRelease_v2`, ...): what the
header's `#define cuMemAlloc cuMemAlloc_v2` lines select and what IREE gets back from
`cuGetProcAddress(name, 11030)` (reference replay-benchmark-cuda.md §3.2). Enums are declared as
`int` (their C ABI); the values we use are the constants below, copied from `cuda.h`.

Search order, first success wins: each explicit search path (`libcuda_search_paths` driver
option), then `AMDGPU_CLI_LIBCUDA_PATH` when set, then `libcuda.so.1`, `libcuda.so` through the
dynamic linker. IREE itself only dlopens `libcuda.so`; the extra names are ours (`.so.1` is what the
NVIDIA driver installs without the developer symlink). An entry ending in `.so`/`.so.N` is a file,
anything else a directory holding one of the two names. The test hook
`AMDGPU_CLI_LIBCUDA_SKIP_SYSTEM=1` leaves the dynamic-linker step out, so tests reproduce "no
libcuda" on a machine that has one. No library: `LibcudaNotFound` (UNAVAILABLE), one line with
IREE's wording and every place tried. A library without one of `REQUIRED` functions is
UNAVAILABLE too (IREE resolves its whole table up front).

`Libcuda.call(name, *args)` runs one function and raises `CudaError` (a HalError) unless it
returns CUDA_SUCCESS: the message is `CUDA error '<cuGetErrorName>' (<code>): <cuGetErrorString>;
<name>`, the status IREE's `cuda_status_util.c` prefix table gives (`cuda_status`).
Nothing above this module imports cffi for CUDA.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

import cffi

from amdgpu_cli.hal.enums import HalError
from hsa_ffi.dl import dlopen_first

CDEF = """
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct { char bytes[16]; } CUuuid;
typedef int CUjit_option;
typedef int CUdevice_attribute;
typedef int CUfunction_attribute;

CUresult cuGetErrorName(CUresult error, const char** pStr);
CUresult cuGetErrorString(CUresult error, const char** pStr);
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int* driverVersion);

CUresult cuDeviceGetCount(int* count);
CUresult cuDeviceGet(CUdevice* device, int ordinal);
CUresult cuDeviceGetName(char* name, int len, CUdevice dev);
CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev);
CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev);
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev);

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxPushCurrent_v2(CUcontext ctx);
CUresult cuCtxPopCurrent_v2(CUcontext* pctx);
CUresult cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev);
CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags);

CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions,
                            CUjit_option* options, void** optionValues);
CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name);
CUresult cuModuleUnload(CUmodule hmod);
CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value);

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags);
CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags);
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags);
CUresult cuMemFreeHost(void* p);
CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount,
                              CUstream hStream);
CUresult cuMemcpyDtoHAsync_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                              CUstream hStream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                              CUstream hStream);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream);
CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void** kernelParams, void** extra);

typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphExec_st* CUgraphExec;
CUresult cuStreamBeginCapture_v2(CUstream hStream, int mode);
CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph);
CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph,
                                     unsigned long long flags);
CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
CUresult cuGraphExecDestroy(CUgraphExec hGraphExec);
CUresult cuGraphDestroy(CUgraph hGraph);

CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags);
CUresult cuStreamSynchronize(CUstream hStream);
CUresult cuStreamDestroy_v2(CUstream hStream);

CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags);
CUresult cuEventRecord(CUevent hEvent, CUstream hStream);
CUresult cuEventSynchronize(CUevent hEvent);
CUresult cuEventQuery(CUevent hEvent);
CUresult cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd);
CUresult cuEventDestroy_v2(CUevent hEvent);
"""

# Every function the driver calls; a library lacking one is refused at load.
REQUIRED = tuple(re.findall(r"CUresult (cu\w+)\(", CDEF))

# -- constants (cuda.h) ----------------------------------------------------------------------
CUDA_SUCCESS = 0
CUDA_ERROR_NOT_READY = 600
CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704
CU_STREAM_NON_BLOCKING = 0x1
CU_EVENT_DEFAULT = 0x0
CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
CU_MEM_ATTACH_GLOBAL = 0x1
CU_MEMHOSTALLOC_PORTABLE = 0x01
CU_MEMHOSTALLOC_DEVICEMAP = 0x02
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
JIT_ERROR_LOG_SIZE = 8192  # IREE's 8 KiB error log

# CUdevice_attribute values (cuda.h, CUDA 12.x).
ATTRIBUTES = {
    "MAX_THREADS_PER_BLOCK": 1,
    "MAX_BLOCK_DIM_X": 2, "MAX_BLOCK_DIM_Y": 3, "MAX_BLOCK_DIM_Z": 4,
    "MAX_GRID_DIM_X": 5, "MAX_GRID_DIM_Y": 6, "MAX_GRID_DIM_Z": 7,
    "MAX_SHARED_MEMORY_PER_BLOCK": 8,
    "WARP_SIZE": 10,
    "MAX_REGISTERS_PER_BLOCK": 12,
    "CLOCK_RATE": 13,
    "MULTIPROCESSOR_COUNT": 16,
    "KERNEL_EXEC_TIMEOUT": 17,
    "INTEGRATED": 18,
    "CAN_MAP_HOST_MEMORY": 19,
    "L2_CACHE_SIZE": 38,
    "MAX_THREADS_PER_MULTIPROCESSOR": 39,
    "UNIFIED_ADDRESSING": 41,
    "COMPUTE_CAPABILITY_MAJOR": 75,
    "COMPUTE_CAPABILITY_MINOR": 76,
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 81,
    "MAX_REGISTERS_PER_MULTIPROCESSOR": 82,
    "MANAGED_MEMORY": 83,
    "PAGEABLE_MEMORY_ACCESS": 88,
    "CONCURRENT_MANAGED_ACCESS": 89,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 97,
    "MAX_BLOCKS_PER_MULTIPROCESSOR": 106,
    "TIMELINE_SEMAPHORE_INTEROP_SUPPORTED": 114,
    "MEMORY_POOLS_SUPPORTED": 115,
    "CAN_USE_64_BIT_STREAM_MEM_OPS": 122,
    "MEM_SYNC_DOMAIN_COUNT": 126,
}

LIBRARY_NAMES = ("libcuda.so.1", "libcuda.so")
PATH_ENV = "AMDGPU_CLI_LIBCUDA_PATH"
SKIP_SYSTEM_ENV = "AMDGPU_CLI_LIBCUDA_SKIP_SYSTEM"
NOT_FOUND_MESSAGE = ("CUDA driver library 'libcuda.so'/'nvcuda.dll' not available; please ensure "
                     "installed and in dynamic library search path")

# IREE's cuda_status_util.c: CUDA error name -> IREE status (anything else is UNKNOWN).
_STATUS_BY_NAME = {
    "CUDA_ERROR_INVALID_VALUE": "INVALID_ARGUMENT",
    "CUDA_ERROR_INVALID_HANDLE": "INVALID_ARGUMENT",
    "CUDA_ERROR_OUT_OF_MEMORY": "RESOURCE_EXHAUSTED",
    "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES": "RESOURCE_EXHAUSTED",
    "CUDA_ERROR_NO_DEVICE": "FAILED_PRECONDITION",
    "CUDA_ERROR_INVALID_DEVICE": "FAILED_PRECONDITION",
    "CUDA_ERROR_INVALID_IMAGE": "FAILED_PRECONDITION",
    "CUDA_ERROR_INVALID_PTX": "FAILED_PRECONDITION",
    "CUDA_ERROR_NO_BINARY_FOR_GPU": "FAILED_PRECONDITION",
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION": "FAILED_PRECONDITION",
    "CUDA_ERROR_NOT_SUPPORTED": "FAILED_PRECONDITION",
    "CUDA_ERROR_JIT_COMPILER_NOT_FOUND": "FAILED_PRECONDITION",
    "CUDA_ERROR_ILLEGAL_ADDRESS": "ABORTED",
    "CUDA_ERROR_LAUNCH_FAILED": "ABORTED",
    "CUDA_ERROR_ASSERT": "ABORTED",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION": "ABORTED",
    "CUDA_ERROR_MISALIGNED_ADDRESS": "ABORTED",
    "CUDA_ERROR_NOT_FOUND": "NOT_FOUND",
    "CUDA_ERROR_NOT_READY": "UNAVAILABLE",
    "CUDA_ERROR_LAUNCH_TIMEOUT": "DEADLINE_EXCEEDED",
    "CUDA_ERROR_TIMEOUT": "DEADLINE_EXCEEDED",
    "CUDA_ERROR_NOT_PERMITTED": "PERMISSION_DENIED",
}


def cuda_status(error_name: str) -> str:
    """The IREE status name of a CUDA error name (context errors INTERNAL, others UNKNOWN)."""
    status = _STATUS_BY_NAME.get(error_name)
    if status is not None:
        return status
    if "CONTEXT" in error_name:
        return "INTERNAL"
    return "UNKNOWN"


class CudaError(HalError):
    """A CUDA call that did not return CUDA_SUCCESS (`function`, `code`, `error_name`)."""

    def __init__(self, function: str, code: int, error_name: str, description: str):
        super().__init__(f"CUDA error '{error_name}' ({code}): {description}; {function}",
                         status=cuda_status(error_name))
        self.function = function
        self.result = code
        self.error_name = error_name


class LibcudaNotFound(HalError):
    status = "UNAVAILABLE"


ffi = cffi.FFI()
ffi.cdef(CDEF)

def candidates(search_paths: Iterable[str] = (), environ: Mapping[str, str] | None = None
               ) -> list[str]:
    """Every file or name `load` would try, in order."""
    env = os.environ if environ is None else environ
    entries = [str(p) for p in search_paths if str(p)]
    if env.get(PATH_ENV):
        entries.append(env[PATH_ENV])
    result: list[str] = []
    for entry in entries:
        if re.search(r"\.so(\.\d+)*$", entry):
            result.append(entry)
        else:
            result.extend(os.path.join(entry, name) for name in LIBRARY_NAMES)
    if env.get(SKIP_SYSTEM_ENV) != "1":
        result.extend(LIBRARY_NAMES)
    return result


def load(search_paths: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> Libcuda:
    """Open the first libcuda found; `LibcudaNotFound` (one line) lists every try."""
    env = os.environ if environ is None else environ
    handle, candidate, tried = dlopen_first(candidates(search_paths, env), now=True)
    if handle is not None:
        return Libcuda(ffi.dlopen(handle), candidate)
    if env.get(SKIP_SYSTEM_ENV) == "1":
        tried.extend((name, f"skipped: {SKIP_SYSTEM_ENV}=1") for name in LIBRARY_NAMES)
    attempts = "; ".join(f"tried {path} ({why})" for path, why in tried)
    raise LibcudaNotFound(f"{NOT_FOUND_MESSAGE}: {attempts}" if attempts else NOT_FOUND_MESSAGE)


class Libcuda:
    """An opened libcuda: `ffi`, `lib`, `path`; `call(name, *args)` is the checked call."""

    def __init__(self, lib, path: str):
        self.ffi = ffi
        self.lib = lib
        self.path = path
        missing = [name for name in REQUIRED if not self.has(name)]
        if missing:
            raise HalError(f"CUDA driver library {path} lacks {', '.join(missing)}",
                           status="UNAVAILABLE")

    def has(self, name: str) -> bool:
        try:
            getattr(self.lib, name)
        except AttributeError:
            return False
        return True

    def call(self, name: str, *args) -> None:
        result = getattr(self.lib, name)(*args)
        if result != CUDA_SUCCESS:
            raise self.error(name, result)

    def error(self, name: str, result: int) -> CudaError:
        text = ffi.new("const char**")
        error_name = f"CUDA_ERROR_{result}"
        if self.lib.cuGetErrorName(result, text) == CUDA_SUCCESS and text[0] != ffi.NULL:
            error_name = ffi.string(text[0]).decode(errors="replace")
        description = "unknown error"
        if self.lib.cuGetErrorString(result, text) == CUDA_SUCCESS and text[0] != ffi.NULL:
            description = " ".join(ffi.string(text[0]).decode(errors="replace").split())
        return CudaError(name, result, error_name, description)

    # -- small typed helpers (each one checked call) ---------------------------------------------
    def out(self, ctype: str, name: str, *args):
        """Call `name(out, *args)` with a fresh `ctype*` out-parameter; returns its value."""
        value = ffi.new(f"{ctype}*")
        self.call(name, value, *args)
        return value[0]

    def attribute(self, device: int, attribute: str) -> int:
        return self.out("int", "cuDeviceGetAttribute", ATTRIBUTES[attribute], device)

    def __repr__(self) -> str:
        return f"Libcuda({self.path!r})"

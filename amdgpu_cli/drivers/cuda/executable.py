"""CUDA executables: CDA1 (`cuda-nvptx-fb`) containers JIT-loaded into the device's context.

`CudaExecutableCache.can_prepare_format` answers only `cuda-nvptx-fb` (what compiled modules
query with hal.executable.format); `prepare_executable` parses the bytes as CDA1 whatever the
format string says, as IREE does (reference replay-benchmark-cuda.md §3.5), with the other
engineer's parser (`formats/cuda_executable.parse_cda1`) and its device-limit checks (block dims
within MAX_BLOCK_DIM_X/Y/Z, shared memory within MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), all before
any CUDA call. Then, per module, `cuModuleLoadDataEx(ptx + NUL)` with an 8 KiB JIT error log
(a failure's message carries IREE's hint and the log), per export `cuModuleGetFunction
(kernel_name)` and `cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, block_shared_memory_size)`.

Reflection: export names are kernel names; workgroup size = block dims; constant and binding
counts from the export (the dispatch packing uses these, not the dispatch's own lengths).
Lifetime: `close()` unloads the modules (idempotent); the device closes its executables before
releasing its context.
Sources: IREE `native_executable.c`, `nop_executable_cache.c`.
"""

from __future__ import annotations

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.enums import HalError
from amdgpu_cli.hal.executable import Executable, ExecutableCache, ExportInfo

FORMAT = "cuda-nvptx-fb"
JIT_HINT = "mismatched target chip? missing/wrong bitcode directory?"


class CudaExecutable(Executable):
    """Loaded modules and, per export, its CUfunction and CDA1 export record."""

    def __init__(self, device, definition, modules: list, functions: list, image: bytes = b""):
        super().__init__(device)
        self.definition = definition
        self.image = image  # the CDA1 bytes as given (what a profile hashes and stores)
        self.members = [self]  # per GPU of a several-GPU device, the copy loaded there
        self.modules = modules
        self.functions = functions  # CUfunction per export ordinal
        self.kernels = definition.exports  # CudaExport per export ordinal
        self._exports = tuple(ExportInfo(e.name, tuple(e.block_dims), e.constant_count,
                                         e.binding_count) for e in definition.exports)

    @property
    def exports(self) -> tuple[ExportInfo, ...]:
        return self._exports

    def kernel(self, ordinal: int, device=None):
        """(CUfunction, CudaExport) of export `ordinal` in the context of `device` (a GPU of a
        several-GPU device: the copy loaded there; None: this executable's own)."""
        if device is not None and device is not self.device:
            return self.members[device.member_index].kernel(ordinal)
        self.export(ordinal)  # OUT_OF_RANGE with the HAL's message
        if self._closed:
            raise HalError("executable is closed", status="FAILED_PRECONDITION")
        return self.functions[ordinal], self.kernels[ordinal]

    def close(self) -> None:
        if not self._closed:
            modules, self.modules = self.modules, []
            self.functions = []
            device = self.device
            if modules and not device.context_released:
                device.bind()
                for module in modules:
                    device.libcuda.call("cuModuleUnload", module)
        super().close()


class CudaExecutableCache(ExecutableCache):

    def can_prepare_format(self, executable_format: str) -> bool:
        return str(executable_format) == FORMAT

    def prepare_executable(self, executable_format, data, constants=()) -> CudaExecutable:
        from amdgpu_cli.formats.cuda_executable import check_device_limits, parse_cda1

        if constants:
            raise HalError("executable constants are not supported by the cuda driver",
                           status="UNIMPLEMENTED")
        device = self.device
        image = bytes(memoryview(data).cast("B"))
        try:
            definition = parse_cda1(image)
            check_device_limits(definition, device.max_block_dims,
                                device.max_block_shared_memory_size)
        except HalError:
            raise
        except AmdgpuCliError as error:
            raise HalError(f"loading executable: {error}", status=error.status) from None
        modules: list = []
        executable = CudaExecutable(device, definition, modules, [], image)
        try:
            device.bind()
            for ptx in definition.modules:
                modules.append(self._load_module(ptx))
            executable.functions = [self._function(modules[e.module_ordinal], e)
                                    for e in definition.exports]
        except BaseException:
            executable.close()
            raise
        device._track(executable)
        for peer in device.peers:  # a several-GPU device: a copy in every GPU's context
            executable.members.append(peer.create_executable_cache().prepare_executable(
                executable_format, image, constants))
        return executable

    def _load_module(self, ptx: bytes):
        from amdgpu_cli.drivers.cuda import cuda_ffi
        from amdgpu_cli.drivers.cuda.cuda_ffi import CudaError

        lib = self.device.libcuda
        ffi = lib.ffi
        image = ffi.new("char[]", bytes(ptx) + b"\0")  # PTX is read up to its NUL
        log = ffi.new("char[]", cuda_ffi.JIT_ERROR_LOG_SIZE)
        options = ffi.new("CUjit_option[]", [cuda_ffi.CU_JIT_ERROR_LOG_BUFFER,
                                              cuda_ffi.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES])
        values = ffi.new("void*[]", [ffi.cast("void*", log),
                                     ffi.cast("void*", cuda_ffi.JIT_ERROR_LOG_SIZE)])
        module = ffi.new("CUmodule*")
        try:
            lib.call("cuModuleLoadDataEx", module, image, 2, options, values)
        except CudaError as error:
            text = " ".join(ffi.string(log).decode(errors="replace").split())
            detail = f"; JIT error log: {text}" if text else ""
            raise HalError(f"{error}; {JIT_HINT}{detail}", status=error.status) from None
        return module[0]

    def _function(self, module, export):
        from amdgpu_cli.drivers.cuda.cuda_ffi import CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

        lib = self.device.libcuda
        function = lib.out("CUfunction", "cuModuleGetFunction", module,
                           export.name.encode())
        lib.call("cuFuncSetAttribute", function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                 export.block_shared_memory_size)
        return function

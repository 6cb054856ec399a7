"""amdgpu executables: code objects loaded through the HSA loader on every GPU of a logical device.

Owns `HsaCodeObject` (one `hsa_executable_t` holding one code object loaded on a set of agents:
`hsa_code_object_reader_create_from_memory` -> `hsa_executable_create_alt(profile, rounding)` ->
`hsa_executable_load_agent_code_object` per agent -> `hsa_executable_freeze` -> reader destroyed;
`kernel(agent, name)` reads the `name.kd` symbol's kernel object and segment sizes), the
compatibility rule between a code object's target and an agent ISA (reference §6.2), and the HAL
face: `AmdgpuExecutable` (exports, and a `KernelInfo` per export per physical device) made by
`AmdgpuExecutableCache` from an AMD1 container or a raw HSACO (`formats/amdgpu_executable.py`).

Compatibility: the format (`gfx942`, `amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`) and the code
object's own target (ELF e_flags) must each suit one ISA of every physical device: an exact
processor must equal the agent's, a generic one must be the agent's mapped generic target, and an
explicit sramecc/xnack setting must equal the agent's. A mismatch is INCOMPATIBLE naming both ISAs,
before anything is loaded. Per export, the workgroup size and binding/constant counts come from the
container (for a raw HSACO, from the metadata), the kernarg/segment sizes and kernel object from
HSA, the `.args` and wavefront size from the code object's metadata.

Lifetime: an executable's HSA executable is destroyed by `close()` (idempotent); the device closes
the executables its cache made when it closes. Sources: IREE `executable.c`, `executable_cache.c`,
`util/code_object_target.c`, `util/target_id.c`.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

from amdgpu_cli.drivers.amdgpu import targets
from amdgpu_cli.drivers.amdgpu.kernargs import KernelInfo
from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.formats.amdgpu_code_object import CodeObject
from amdgpu_cli.hal.enums import HalError
from amdgpu_cli.hal.executable import Executable, ExecutableCache, ExportInfo
from hsa_ffi import HsaError
from hsa_ffi import constants as C

_EXPLICIT = ("on", "off")


def _hal_error(error: AmdgpuCliError, context: str) -> HalError:
    return HalError(f"{context}: {error}", status=error.status or "INTERNAL")


# -- compatibility ----------------------------------------------------------------------------

def code_object_target(code_object: CodeObject) -> targets.TargetId:
    """The target id a code object's e_flags record."""
    return targets.TargetId(code_object.target, targets.gfx_version(code_object.target),
                            code_object.is_generic, code_object.sramecc, code_object.xnack)


def target_suits(target: targets.TargetId, agent_isa: str) -> bool:
    """Whether code built for `target` runs on an agent with ISA name `agent_isa`."""
    agent = targets.parse_isa_name(agent_isa)
    if target.generic:
        if target.processor != targets.code_object_target(agent.processor):
            return False
    elif target.version != agent.version:
        return False
    for wanted, have in ((target.sramecc, agent.sramecc), (target.xnack, agent.xnack)):
        if wanted in _EXPLICIT and have != wanted:
            return False
    return True


def parse_format(executable_format: str) -> targets.TargetId | None:
    """The target id an executable format names (None when it is not an amdgpu format)."""
    if not executable_format.startswith(("gfx", targets.ISA_PREFIX)):
        return None
    try:
        return targets.parse_isa_name(executable_format)
    except HalError:
        return None


def check_target(target: targets.TargetId, what: str, physical_devices: Sequence) -> None:
    """INCOMPATIBLE, naming both ISAs, unless `target` suits every physical device."""
    for physical in physical_devices:
        if not any(target_suits(target, isa) for isa in physical.agent.isas):
            raise HalError(f"{what} targets {target} but physical device {physical.ordinal} "
                           f"({physical.uuid}) has ISA {physical.isa}; the executable cannot "
                           "run on this device", status="INCOMPATIBLE")


# -- HSA loading ------------------------------------------------------------------------------

class HsaCodeObject:
    """One code object loaded and frozen in one HSA executable on the given agents."""

    def __init__(self, libhsa, agent_handles: Sequence[int], code_object: bytes):
        self.libhsa = libhsa
        ffi = self.ffi = libhsa.ffi
        self.image = bytes(code_object)  # the exact code object (profiles record it)
        self._image = ffi.from_buffer(code_object)  # the reader reads from it until freeze
        profile, rounding = self._agent_modes(agent_handles)
        reader = ffi.new("hsa_code_object_reader_t*")
        libhsa.call("hsa_code_object_reader_create_from_memory", self._image, len(code_object),
                    reader)
        try:
            executable = ffi.new("hsa_executable_t*")
            libhsa.call("hsa_executable_create_alt", profile, rounding, ffi.NULL, executable)
            self.handle = executable[0].handle
            self._destroy = weakref.finalize(self, _destroy_executable, libhsa, self.handle)
            self._destroy.atexit = False
            try:
                for agent in agent_handles:
                    libhsa.call("hsa_executable_load_agent_code_object", executable[0],
                                self._agent(agent), reader[0], ffi.NULL, ffi.NULL)
                libhsa.call("hsa_executable_freeze", executable[0], ffi.NULL)
            except HsaError:
                self._destroy()
                raise
        finally:
            libhsa.call("hsa_code_object_reader_destroy", reader[0])

    def _agent(self, handle: int):
        return self.ffi.new("hsa_agent_t*", {"handle": handle})[0]

    def _agent_modes(self, agent_handles: Sequence[int]) -> tuple[int, int]:
        """(profile, default float rounding mode), which must agree across the agents."""
        modes = set()
        for handle in agent_handles:
            values = []
            for attribute in (C.HSA_AGENT_INFO_PROFILE,
                              C.HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE):
                out = self.ffi.new("int*")
                self.libhsa.call("hsa_agent_get_info", self._agent(handle), attribute, out)
                values.append(out[0])
            modes.add(tuple(values))
        if len(modes) != 1:
            raise HalError("GPU agents disagree on profile or default float rounding mode",
                           status="FAILED_PRECONDITION")
        return modes.pop()

    def symbol_info(self, agent_handle: int, symbol_name: str) -> dict[str, int]:
        """kernel_object and the u32 segment sizes of a kernel symbol (`name.kd`) on one agent."""
        ffi, call = self.ffi, self.libhsa.call
        symbol = ffi.new("hsa_executable_symbol_t*")
        executable = ffi.new("hsa_executable_t*", {"handle": self.handle})[0]
        agent = ffi.new("hsa_agent_t*", {"handle": agent_handle})
        try:
            call("hsa_executable_get_symbol_by_name", executable, symbol_name.encode(), agent,
                 symbol)
        except HsaError as error:
            raise HalError(f"kernel symbol {symbol_name} not found in the loaded code object: "
                           f"{error}", status="NOT_FOUND") from None
        info = {}
        for key, attribute, ctype in (
                ("kernel_object", C.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, "uint64_t*"),
                ("kernarg_segment_size", C.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                 "uint32_t*"),
                ("kernarg_segment_align",
                 C.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, "uint32_t*"),
                ("group_segment_size", C.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                 "uint32_t*"),
                ("private_segment_size", C.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                 "uint32_t*")):
            out = ffi.new(ctype)
            call("hsa_executable_symbol_get_info", symbol[0], attribute, out)
            info[key] = int(out[0])
        return info

    def kernel(self, agent_handle: int, code_object: CodeObject, name: str, *,
               workgroup_size: tuple[int, int, int], binding_count: int,
               constant_count: int) -> KernelInfo:
        """The KernelInfo of kernel `name` on one agent."""
        metadata = code_object.kernel(name)
        info = self.symbol_info(agent_handle, metadata.symbol)
        return KernelInfo(name=name, symbol=metadata.symbol, workgroup_size=workgroup_size,
                          binding_count=binding_count, constant_count=constant_count,
                          args=metadata.args, wavefront_size=metadata.wavefront_size, **info)

    def close(self) -> None:
        self._destroy()


def _destroy_executable(libhsa, handle: int) -> None:
    executable = libhsa.ffi.new("hsa_executable_t*", {"handle": handle})[0]
    libhsa.call("hsa_executable_destroy", executable)


# -- HAL executables --------------------------------------------------------------------------

def _export_name(symbol_name: str) -> str:
    return symbol_name[:-3] if symbol_name.endswith(".kd") else symbol_name


class AmdgpuExecutable(Executable):
    """A loaded executable: `kernels[physical ordinal][export ordinal]` is a KernelInfo."""

    def __init__(self, device, loaded: HsaCodeObject, exports: tuple[ExportInfo, ...],
                 kernels: tuple[tuple[KernelInfo, ...], ...], executable_format: str):
        super().__init__(device)
        self.loaded = loaded
        self._exports = exports
        self.kernels = kernels
        self.format = executable_format

    @property
    def exports(self) -> tuple[ExportInfo, ...]:
        return self._exports

    def kernel(self, physical_ordinal: int, ordinal: int) -> KernelInfo:
        self.export(ordinal)  # OUT_OF_RANGE check with the HAL's message
        if self._closed:
            raise HalError("executable is closed", status="FAILED_PRECONDITION")
        return self.kernels[physical_ordinal][ordinal]

    def close(self) -> None:
        if not self._closed:
            self.loaded.close()
        super().close()


class AmdgpuExecutableCache(ExecutableCache):
    """Loads AMD1 containers and raw HSACO for the device's physical devices."""

    def can_prepare_format(self, executable_format: str) -> bool:
        target = parse_format(str(executable_format))
        if target is None:
            return False
        return all(any(target_suits(target, isa) for isa in physical.agent.isas)
                   for physical in self.device.physical_devices)

    def prepare_executable(self, executable_format, data, constants=()) -> AmdgpuExecutable:
        from amdgpu_cli.formats.amdgpu_executable import parse_amdgpu_executable

        if isinstance(executable_format, (bytes, bytearray, memoryview)):
            executable_format = bytes(executable_format).decode("utf-8", "replace")
        if constants:
            raise HalError("executable constants are not supported by the amdgpu driver",
                           status="UNIMPLEMENTED")
        target = parse_format(executable_format)
        if target is None:
            raise HalError(f"no executable loader registered for the given executable format "
                           f"'{executable_format}'", status="NOT_FOUND")
        device = self.device
        physical_devices = device.physical_devices
        check_target(target, f"executable format '{executable_format}'", physical_devices)
        try:
            definition = parse_amdgpu_executable(bytes(memoryview(data).cast("B")))
        except AmdgpuCliError as error:
            raise _hal_error(error, "loading executable") from None
        code_object = definition.code_object_info
        check_target(code_object_target(code_object), "executable code object",
                     physical_devices)
        exports = tuple(ExportInfo(_export_name(e.symbol_name), tuple(e.workgroup_size),
                                   e.constant_count, len(e.binding_flags))
                        for e in definition.exports)
        try:
            loaded = HsaCodeObject(device.libhsa, [p.agent.handle for p in physical_devices],
                                   definition.code_object)
        except HsaError as error:
            raise _hal_error(error, "loading executable") from None
        try:
            kernels = tuple(
                tuple(loaded.kernel(physical.agent.handle, code_object, export.name,
                                    workgroup_size=export.workgroup_size,
                                    binding_count=export.binding_count,
                                    constant_count=export.constant_count)
                      for export in exports)
                for physical in physical_devices)
        except AmdgpuCliError as error:  # includes a kernel missing from the metadata
            loaded.close()
            if isinstance(error, HalError):
                raise
            raise _hal_error(error, "loading executable") from None
        executable = AmdgpuExecutable(device, loaded, exports, kernels, executable_format)
        device._track(executable)
        return executable

"""The device library (fill/copy blit kernels) loaded on every GPU of a logical device.

Owns the one HSA executable holding the device-library code object chosen for the device's ISA
(`targets.py`, reference §7: `device_binaries/amdgcn-amd-amdhsa--<target>.hsaco`), loaded on all
physical devices and frozen, and the `KernelInfo` of each of its kernels per physical device (HSA
symbol info for kernel object and segment sizes; metadata for `.args` and wavefront size). Blit
kernels take a raw 24-byte struct, not the HAL layout, so their binding/constant counts are 0 and
their workgroup size is the wavefront size, as `blit.py` launches them.

Lifetime: `close()` destroys the HSA executable (idempotent); the device closes it after its queues
are drained. Sources: IREE `util/device_library.c`, `device/blit.c`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from amdgpu_cli.drivers.amdgpu.executable import HsaCodeObject, code_object_target, check_target
from amdgpu_cli.drivers.amdgpu.kernargs import KernelInfo
from amdgpu_cli.formats.amdgpu_code_object import parse_code_object
from amdgpu_cli.hal.enums import HalError


class DeviceLibrary:
    """`kernel(physical_ordinal, name)` -> KernelInfo of a device-library kernel."""

    def __init__(self, libhsa, physical_devices: Sequence, path: Path):
        self.path = path
        data = path.read_bytes()
        code_object = parse_code_object(data)
        check_target(code_object_target(code_object), f"device library {path.name}",
                     physical_devices)
        self._loaded = HsaCodeObject(libhsa, [p.agent.handle for p in physical_devices], data)
        try:
            self._kernels = [
                {kernel.name: self._loaded.kernel(
                    physical.agent.handle, code_object, kernel.name,
                    workgroup_size=(physical.wavefront_size, 1, 1), binding_count=0,
                    constant_count=0)
                 for kernel in code_object.kernels}
                for physical in physical_devices]
        except Exception:
            self._loaded.close()
            raise

    @property
    def kernel_names(self) -> tuple[str, ...]:
        return tuple(sorted(self._kernels[0]))

    def kernel(self, physical_ordinal: int, name: str) -> KernelInfo:
        try:
            return self._kernels[physical_ordinal][name]
        except KeyError:
            raise HalError(f"device library {self.path.name} has no kernel {name}",
                           status="NOT_FOUND") from None

    def close(self) -> None:
        self._loaded.close()

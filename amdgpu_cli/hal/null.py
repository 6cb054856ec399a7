"""The `null` driver: one host device that runs transfer commands and rejects dispatches.

It is the executable test bed of the HAL object model: every queue operation and command buffer
goes through HostQueueDevice on host-memory buffers; executables cannot be loaded (no formats) and
dispatches fail with UNIMPLEMENTED. `hal.device.id` answers for the identifier `null`.
"""

from __future__ import annotations

from amdgpu_cli.hal.device import HostQueueDevice
from amdgpu_cli.hal.driver import DeviceInfo, Driver
from amdgpu_cli.hal.enums import HalError
from amdgpu_cli.hal.executable import ExecutableCache


class NullExecutableCache(ExecutableCache):
    def can_prepare_format(self, executable_format):
        return False

    def prepare_executable(self, executable_format, data, constants=()):
        raise HalError(f"the null driver cannot load '{executable_format}' executables",
                       status="UNIMPLEMENTED")


class NullDevice(HostQueueDevice):
    identifier = "null"

    def create_executable_cache(self, identifier="default"):
        return NullExecutableCache(self, identifier)


class NullDriver(Driver):
    name = "null"

    def query_available_devices(self):
        return [DeviceInfo(0, "0", "null device")]

    def create_device_by_path(self, path="", params=None):
        if path not in ("", "0"):
            raise HalError(f"the null driver has no device '{path}'", status="NOT_FOUND")
        for key, _ in params or []:
            raise HalError(f"unknown null device parameter '{key}'", status="INVALID_ARGUMENT")
        return NullDevice()

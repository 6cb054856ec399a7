"""The CPU drivers `local-sync` and `local-task` (and `local`, an alias of `local-sync`).

Each driver has one device, `default`, with an empty path (IREE `drivers/local_sync/sync_driver.c`,
`local_task/task_driver.c`): `--list_devices` shows `local-sync://` / `local-task://`. A non-empty
path is NOT_FOUND ("device paths not yet implemented"); URI params are ignored, as IREE does.
`local-sync` devices run dispatch workgroups inline on the calling thread; `local-task` devices
spread them over the process-wide worker pool (one worker per core). Queue work is inline and in
order on both (see device.py).
"""

from __future__ import annotations

from amdgpu_cli.hal.driver import DeviceInfo
from amdgpu_cli.hal.driver import Driver as HalDriver
from amdgpu_cli.hal.enums import HalError

from .device import LocalDevice

DRIVER_NAMES = ("local-sync", "local-task", "local")
DEVICE_ID_DEFAULT = 0


class Driver(HalDriver):
    def __init__(self, name: str = "local-sync"):
        if name not in DRIVER_NAMES:
            raise HalError(f"no local driver named '{name}'; known: {', '.join(DRIVER_NAMES)}",
                           status="NOT_FOUND")
        self.name = name
        # The device identifier is what `hal.device.id` matches (`local*` in compiled modules).
        self.device_identifier = "local-task" if name == "local-task" else "local-sync"

    def __repr__(self) -> str:
        return f"<local Driver {self.name!r}>"

    def query_available_devices(self) -> list[DeviceInfo]:
        return [DeviceInfo(DEVICE_ID_DEFAULT, "", "default")]

    def create_device_by_path(self, path: str = "", params=None) -> LocalDevice:
        if path:
            raise HalError("device paths not yet implemented", status="NOT_FOUND")
        return LocalDevice(self.device_identifier)

    def create_device_by_id(self, device_id: int = DEVICE_ID_DEFAULT, params=None) -> LocalDevice:
        return LocalDevice(self.device_identifier)

    def dump_device_info(self, device_id: int) -> str:
        return ""  # IREE's local drivers dump nothing

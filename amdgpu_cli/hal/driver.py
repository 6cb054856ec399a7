"""Driver: enumerates the devices of one backend and creates them from a device URI's path/params.

`path` is what follows `driver://` (or `driver:`) in a device URI: empty for the default device, an
ordinal (`0`), or a driver-specific identifier (`GPU-<uuid>`, `0,1`). `params` are the URI's
`?key=value&...` pairs, in order. Sources: IREE runtime/src/iree/hal/driver.h, driver.c.
"""

from __future__ import annotations

import abc
from typing import NamedTuple


class DeviceInfo(NamedTuple):
    device_id: int
    path: str
    name: str


class Driver(abc.ABC):
    name: str = "driver"

    @abc.abstractmethod
    def query_available_devices(self) -> list[DeviceInfo]: ...

    @abc.abstractmethod
    def create_device_by_path(self, path: str = "", params: list[tuple[str, str]] | None = None): ...

    def create_default_device(self):
        return self.create_device_by_path("", [])

    def dump_device_info(self, device_id: int) -> str:
        return ""

    def close(self) -> None:
        pass

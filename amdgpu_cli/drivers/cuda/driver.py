"""The `cuda` HAL driver: loads libcuda, enumerates CUDA devices, creates logical devices.

Creating a `Driver` loads libcuda (cuda_ffi.load) and calls `cuInit(0)`; either failure is one
error line (UNAVAILABLE for a missing library, CUDA's own status for cuInit, e.g.
FAILED_PRECONDITION `CUDA_ERROR_NO_DEVICE`).

Enumeration and URIs as IREE's `cuda_driver.c` (reference replay-benchmark-cuda.md §3.3):
- device id = CUdevice + 1; path = `GPU-<uuid>` (`format_uuid`, as `nvidia-smi -L`); name =
  cuDeviceGetName;
- `cuda` / `cuda://` is the default device (index `default_index`, 0 unless the driver option sets
  it); `cuda://N` / `cuda:N` the device of that index; `cuda://GPU-<uuid>` the device with that
  UUID (IREE compares only the first 8 bytes, a `memcmp(sizeof(pointer))` bug; we compare all 16,
  which differs only for two devices sharing their first 8 UUID bytes); anything else
  UNIMPLEMENTED `unsupported device path`. `select_device` is that choice as a pure function.
- `dump_device_info` is the text of `format_device_dump` over one `cuDeviceGetAttribute` per row.
URI params are ignored, as IREE's driver ignores them.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping, Sequence

from amdgpu_cli.hal.driver import DeviceInfo
from amdgpu_cli.hal.driver import Driver as HalDriver
from amdgpu_cli.hal.enums import HalError

DEVICE_ID_DEFAULT = 0
_INTEGER = re.compile(r"[+-]?[0-9]+")
_HEX = re.compile(r"[0-9a-fA-F]{32}")


# -- pure parts ---------------------------------------------------------------------------------

def format_uuid(uuid: bytes) -> str:
    """`GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (lowercase) of 16 UUID bytes."""
    h = bytes(uuid).hex()
    return f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def parse_uuid(text: str) -> bytes:
    """The 16 bytes of the part after `GPU-` (dashes anywhere are skipped, as IREE's
    parse_hex_bytes does); INVALID_ARGUMENT unless exactly 32 hex digits remain."""
    digits = text.replace("-", "")
    if not _HEX.fullmatch(digits):
        raise HalError(f"invalid GPU UUID: '{text}'", status="INVALID_ARGUMENT")
    return bytes.fromhex(digits)


def select_device(path: str, uuids: Sequence[bytes], default_index: int = 0) -> int:
    """The device index (CUdevice ordinal) a URI path names among devices with these UUIDs."""
    count = len(uuids)
    if not path:
        if count == 0:
            raise HalError("no compatible CUDA devices were found", status="UNAVAILABLE")
        if not 0 <= default_index < count:
            raise HalError(f"default device {default_index} not found (of {count} enumerated)",
                           status="NOT_FOUND")
        return default_index
    if path.startswith("GPU-"):
        wanted = parse_uuid(path[4:])
        for index, uuid in enumerate(uuids):
            if bytes(uuid) == wanted:
                return index
        raise HalError(f"CUDA device with UUID {format_uuid(wanted)} not found",
                       status="NOT_FOUND")
    if _INTEGER.fullmatch(path):
        index = int(path)
        if not 0 <= index < count:
            raise HalError(f"device {index} not found (of {count} enumerated)",
                           status="NOT_FOUND")
        return index
    raise HalError("unsupported device path", status="UNIMPLEMENTED")


# The --dump_devices rows: (label, attributes, unit), grouped; the label's value is the
# attribute values joined as the row's form says.
DUMP_GROUPS = (
    (("gpu-compute-capability", ("COMPUTE_CAPABILITY_MAJOR", "COMPUTE_CAPABILITY_MINOR"), "dot"),
     ("driver-max-cuda-version", (), "driver")),
    (("launch-max-block-dims", ("MAX_BLOCK_DIM_X", "MAX_BLOCK_DIM_Y", "MAX_BLOCK_DIM_Z"), "tuple"),
     ("launch-max-grid-dims", ("MAX_GRID_DIM_X", "MAX_GRID_DIM_Y", "MAX_GRID_DIM_Z"), "tuple")),
    (("block-max-thread-count", ("MAX_THREADS_PER_BLOCK",), ""),
     ("block-max-32-bit-register-count", ("MAX_REGISTERS_PER_BLOCK",), ""),
     ("block-max-shared-memory", ("MAX_SHARED_MEMORY_PER_BLOCK",), " bytes")),
    (("multiprocessor-max-thread-count", ("MAX_THREADS_PER_MULTIPROCESSOR",), ""),
     ("multiprocessor-max-block-count", ("MAX_BLOCKS_PER_MULTIPROCESSOR",), ""),
     ("multiprocessor-max-32-bit-register-count", ("MAX_REGISTERS_PER_MULTIPROCESSOR",), ""),
     ("multiprocessor-max-shared-memory", ("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",), " bytes")),
    (("memory-is-integrated-memory", ("INTEGRATED",), ""),
     ("memory-has-unified-address-space", ("UNIFIED_ADDRESSING",), ""),
     ("memory-supports-managed-memory", ("MANAGED_MEMORY",), ""),
     ("memory-can-map-host-memory-to-device", ("CAN_MAP_HOST_MEMORY",), ""),
     ("memory-supports-pageable-memory-access-from-device", ("PAGEABLE_MEMORY_ACCESS",), ""),
     ("memory-supports-concurrent-managed-access", ("CONCURRENT_MANAGED_ACCESS",), ""),
     ("memory-supports-memory-pools", ("MEMORY_POOLS_SUPPORTED",), ""),
     ("memory-l2-cache-size", ("L2_CACHE_SIZE",), " bytes")),
    (("sync-supports-64-bit-stream-mem-ops", ("CAN_USE_64_BIT_STREAM_MEM_OPS",), ""),
     ("sync-supports-timeline-semaphore-interop", ("TIMELINE_SEMAPHORE_INTEROP_SUPPORTED",), ""),
     ("sync-mem-domain-count", ("MEM_SYNC_DOMAIN_COUNT",), "")),
    (("gpu-multiprocessor-count", ("MULTIPROCESSOR_COUNT",), ""),
     ("gpu-clock-rate", ("CLOCK_RATE",), " kHz"),
     ("gpu-warp-size", ("WARP_SIZE",), ""),
     ("kernel-has-execution-timeout", ("KERNEL_EXEC_TIMEOUT",), "")),
)
DUMP_ATTRIBUTES = tuple(dict.fromkeys(
    name for group in DUMP_GROUPS for _, names, _ in group for name in names))


def format_device_dump(attributes: Mapping[str, int], driver_version: int) -> str:
    """The text IREE's cuda driver adds under a device in `--dump_devices` (after the URI/name
    rules): a blank line, then each group of `- key: value` rows, groups separated by a blank
    line. `attributes` maps the `cuda_ffi.ATTRIBUTES` names of DUMP_ATTRIBUTES to their values."""
    out = []
    for group in DUMP_GROUPS:
        out.append("\n")
        for label, names, form in group:
            values = [attributes[name] for name in names]
            if form == "dot":
                text = f"{values[0]}.{values[1]}"
            elif form == "driver":
                text = f"{driver_version // 1000}.{(driver_version % 1000) // 10}"
            elif form == "tuple":
                text = "(" + ", ".join(str(v) for v in values) + ")"
            else:
                text = f"{values[0]}{form}"
            out.append(f"- {label}: {text}\n")
    return "".join(out)


# -- the driver ---------------------------------------------------------------------------------

class Driver(HalDriver):
    name = "cuda"

    def __init__(self, *, libcuda_search_paths: Sequence[str] = (), default_index: int = 0,
                 environ: Mapping[str, str] | None = None, use_streams: bool = False):
        from amdgpu_cli.drivers.cuda import cuda_ffi

        # IREE's --cuda_use_streams: True issues every command buffer on the stream command by
        # command; False (our default, measured faster: bench/cuda_speed.py) runs reusable ones
        # as CUDA graphs.
        self.use_streams = bool(use_streams)
        self.libcuda = cuda_ffi.load(libcuda_search_paths, environ)
        self.libcuda.call("cuInit", 0)
        self.default_index = int(default_index)
        self._devices: list[weakref.ref] = []

    def __repr__(self) -> str:
        return f"<cuda Driver {self.libcuda.path}>"

    # -- enumeration ----------------------------------------------------------------------------
    def _count(self) -> int:
        return self.libcuda.out("int", "cuDeviceGetCount")

    def _cudevice(self, index: int) -> int:
        return self.libcuda.out("CUdevice", "cuDeviceGet", index)

    def _uuid(self, device: int) -> bytes:
        uuid = self.libcuda.ffi.new("CUuuid*")
        self.libcuda.call("cuDeviceGetUuid", uuid, device)
        return bytes(self.libcuda.ffi.buffer(uuid.bytes, 16))

    def _name(self, device: int) -> str:
        ffi = self.libcuda.ffi
        name = ffi.new("char[]", 128)  # IREE_HAL_CUDA_MAX_DEVICE_NAME_LENGTH
        self.libcuda.call("cuDeviceGetName", name, 128, device)
        return ffi.string(name).decode(errors="replace")

    def query_available_devices(self) -> list[DeviceInfo]:
        infos = []
        for index in range(self._count()):
            device = self._cudevice(index)
            infos.append(DeviceInfo(device + 1, format_uuid(self._uuid(device)),
                                    self._name(device)))
        return infos

    def device_attributes(self, device: int) -> dict[str, int]:
        return {name: self.libcuda.attribute(device, name) for name in DUMP_ATTRIBUTES}

    def driver_version(self) -> int:
        return self.libcuda.out("int", "cuDriverGetVersion")

    def dump_device_info(self, device_id: int) -> str:
        if device_id == DEVICE_ID_DEFAULT:
            return ""
        device = device_id - 1
        return format_device_dump(self.device_attributes(device), self.driver_version())

    # -- devices --------------------------------------------------------------------------------
    def create_device_by_path(self, path: str = "", params=None):
        """One GPU (`""`, `N`, `GPU-<uuid>`), or several in one device (`0,1`: each part any of
        those forms; queue affinity bit i selects the i-th, device.py)."""
        uuids = [self._uuid(self._cudevice(i)) for i in range(self._count())]
        parts = path.split(",")
        if len(parts) > 1 and any(not part for part in parts):
            raise HalError(f"empty device in device path '{path}'", status="INVALID_ARGUMENT")
        indices = [select_device(part, uuids, self.default_index) for part in parts]
        if len(set(indices)) != len(indices):
            raise HalError(f"device path '{path}' names a GPU twice", status="INVALID_ARGUMENT")
        first = self._create(self._cudevice(indices[0]), pools=len(indices) == 1)
        try:
            first.add_peers([self._create(self._cudevice(i), pools=False)
                             for i in indices[1:]])
        except BaseException:
            first.close()
            raise
        return first

    def create_device_by_id(self, device_id: int = DEVICE_ID_DEFAULT, params=None):
        if device_id == DEVICE_ID_DEFAULT:
            return self.create_device_by_path("", params)
        return self._create(device_id - 1)

    def _create(self, cudevice: int, pools: bool = True):
        from amdgpu_cli.drivers.cuda.device import CudaDevice

        device = CudaDevice(self.libcuda, cudevice, name=self._name(cudevice),
                            uuid=format_uuid(self._uuid(cudevice)), use_streams=self.use_streams,
                            pools=pools)
        self._devices = [ref for ref in self._devices if ref() is not None]
        self._devices.append(weakref.ref(device))
        return device

    def close(self) -> None:
        for ref in self._devices:
            device = ref()
            if device is not None:
                device.close()
        self._devices = []

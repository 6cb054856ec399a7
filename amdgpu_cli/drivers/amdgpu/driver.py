"""The `amdgpu` HAL driver: loads libhsa, enumerates GPU agents, creates logical devices.

Creating a `Driver` loads the HSA runtime (`hsa_ffi.load`, searching the driver's
`libhsa_search_paths`, then `IREE_HAL_AMDGPU_LIBHSA_PATH`, then the system loader) and calls
`hsa_init`; either failure is one error line: the list of every place searched, or the hsa_init
status with the library that answered it (and, when there is no /dev/kfd, that HSA found no usable
GPU). The driver holds that one `hsa_init` reference until `close()`; every logical device takes
its own (IREE does the same, through a reference-counted libhsa).

Enumeration (`query_available_devices`) and device creation read the agents afresh from HSA and
select GPUs with `topology` (fact sheet §4): the default entry has id 0 and a name built from the
node ids of the default GPU set (`ROCR_VISIBLE_DEVICES: 2 Visible GPU Agents (Nodes 1, 2)`), then
one entry per default GPU, id `1 << i`, path = its UUID, name = `<product name> (Node n)`. No GPUs:
no entries. `ROCR_VISIBLE_DEVICES` is left to the runtime, which filters and reorders the agents
before we see them.
Sources: IREE `driver.c`, `util/topology.c`, `system.c`, `executable.c`.
"""

from __future__ import annotations

import dataclasses
import os
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path

import hsa_ffi
from amdgpu_cli.drivers.amdgpu import topology
from amdgpu_cli.drivers.amdgpu.device import AmdgpuDevice, make_physical_device
from amdgpu_cli.drivers.amdgpu.system import AgentInfo, Agents, enumerate_agents
from amdgpu_cli.hal.driver import DeviceInfo
from amdgpu_cli.hal.driver import Driver as HalDriver
from amdgpu_cli.hal.enums import HalError

DEVICE_ID_DEFAULT = 0


@dataclasses.dataclass(frozen=True)
class DriverOptions:
    libhsa_search_paths: tuple[str, ...] = ()


class HsaCallError(hsa_ffi.HsaError, HalError):
    """A failed HSA call as this driver's runtime raises it: an `hsa_ffi.HsaError` (with the HSA
    status and function) that is a HalError too, so that the VM traps it with its status and the
    tools print it as one line."""


def _load(options: DriverOptions, environ: Mapping[str, str] | None):
    try:
        libhsa = hsa_ffi.load(options.libhsa_search_paths, environ, HsaCallError)
    except hsa_ffi.LibhsaNotFound as error:
        raise HalError(str(error), status=error.status) from None
    try:
        libhsa.init()
    except hsa_ffi.HsaError as error:
        hint = "" if os.path.exists("/dev/kfd") else "; HSA found no usable GPU (no /dev/kfd)"
        raise HalError(f"{error}; using {libhsa.file}{hint}", status=error.status) from None
    return libhsa


def pseudo_device_name(gpus: Sequence[AgentInfo]) -> str:
    """The name of the "all visible GPUs" entry, worded as IREE words it."""
    nodes = ", ".join(str(gpu.node) for gpu in gpus)
    if len(gpus) == 1:
        return f"ROCR_VISIBLE_DEVICES: 1 Visible GPU Agent (Node {nodes})"
    return f"ROCR_VISIBLE_DEVICES: {len(gpus)} Visible GPU Agents (Nodes {nodes})"


def device_infos(agents: Agents) -> list[DeviceInfo]:
    """`query_available_devices` entries for an agent set (empty when there are no GPUs)."""
    gpus = [agents.gpus[i] for i in topology.default_gpus(agents.gpus)]
    if not gpus:
        return []
    return [DeviceInfo(DEVICE_ID_DEFAULT, "", pseudo_device_name(gpus))] + [
        DeviceInfo(1 << i, gpu.uuid, f"{gpu.product_name} (Node {gpu.node})")
        for i, gpu in enumerate(gpus)]


def _device_library(isas: Sequence[str]) -> Path:
    """The device-library code object for a GPU's ISAs (INCOMPATIBLE when none fits)."""
    from amdgpu_cli.drivers.amdgpu import targets

    return targets.device_library_path(
        targets.select_code_object(list(isas), targets.device_library_targets()))


class Driver(HalDriver):
    name = "amdgpu"

    def __init__(self, options: DriverOptions | None = None, *,
                 libhsa_search_paths: Sequence[str] = (),
                 environ: Mapping[str, str] | None = None):
        self.options = options or DriverOptions(tuple(libhsa_search_paths))
        self.libhsa = _load(self.options, environ)
        self._release = weakref.finalize(self, self.libhsa.shut_down)
        self._release.atexit = False

    def __repr__(self) -> str:
        return f"<amdgpu Driver {self.libhsa.file}>"

    def agents(self) -> Agents:
        return enumerate_agents(self.libhsa)

    def query_available_devices(self) -> list[DeviceInfo]:
        return device_infos(self.agents())

    def dump_device_info(self, device_id: int) -> str:
        return "\n"  # what IREE's driver prints today (the rocminfo-like details are a TODO there)

    def create_device_by_path(self, path: str = "", params=None) -> AmdgpuDevice:
        topology.check_params(params or [])
        agents = self.agents()
        return self._create(topology.select_gpus(path, agents.gpus), agents)

    def create_device_by_id(self, device_id: int = DEVICE_ID_DEFAULT, params=None):
        topology.check_params(params or [])
        agents = self.agents()
        return self._create(topology.device_id_to_gpus(device_id, agents.gpus), agents)

    def _create(self, selected: Sequence[int], agents: Agents) -> AmdgpuDevice:
        topology.verify(selected, agents.gpus)
        physical = [make_physical_device(position, ordinal, agents)
                    for position, ordinal in enumerate(selected)]
        for position, device in enumerate(physical[1:], start=1):
            if device.agent.isas != physical[0].agent.isas:
                raise HalError("runtime currently expects all GPU agents must support the same "
                               f"ISAs; gpu_agents[{position}] does not match gpu_agents[0]",
                               status="FAILED_PRECONDITION")
        return AmdgpuDevice(self.libhsa, physical, _device_library(physical[0].agent.isas))

    def close(self) -> None:
        self._release()

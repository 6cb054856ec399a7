"""The amdgpu logical device and the physical GPUs it is made of.

`PhysicalDevice` is one GPU agent as the device uses it: its identity (ordinal in the logical
device, UUID, ISA, CU count, wavefront size), its coarse and fine device-local pools and the pools
of the CPU agent it is paired with (coarse, fine, kernarg). `make_physical_device` applies IREE's
rules (fact sheet §1.2): a device pool is the first GLOBAL, runtime-allocatable pool whose flags
contain COARSE (resp. FINE or EXTENDED_SCOPE_FINE); a host pool must also be accessible by all
agents, and the fine one prefers a pool without KERNARG_INIT; any missing pool is NOT_FOUND; CU
count must be > 0 and wavefront size 32 or 64.

`AmdgpuDevice` holds one `hsa_init` reference for its lifetime (released by `close()`, or by a
finalizer that captures only the runtime, never the device) and the device-library code object
chosen for GPU 0's ISAs. Queues and dispatch are not built yet: every operation that needs
execution raises UNIMPLEMENTED as one line.
Sources: IREE `physical_device.c`, `system.c`, `util/vmem.c`, `logical_device.c`.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

from amdgpu_cli.drivers.amdgpu.system import AgentInfo, Agents, PoolInfo
from amdgpu_cli.hal.device import Device
from amdgpu_cli.hal.enums import HalError
from hsa_ffi import constants as C

_FINE_FLAGS = (C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
               | C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED)


@dataclasses.dataclass(frozen=True)
class HostPools:
    coarse: PoolInfo
    fine: PoolInfo
    kernarg: PoolInfo


@dataclasses.dataclass(frozen=True)
class PhysicalDevice:
    ordinal: int  # position in the logical device (queue-affinity bits 2*ordinal, 2*ordinal+1)
    gpu_ordinal: int  # position among the visible GPU agents
    agent: AgentInfo
    host: AgentInfo
    coarse_pool: PoolInfo
    fine_pool: PoolInfo
    host_pools: HostPools

    @property
    def uuid(self) -> str:
        return self.agent.uuid

    @property
    def isa(self) -> str:
        return self.agent.isas[0]

    @property
    def compute_units(self) -> int:
        return self.agent.compute_units

    @property
    def wavefront_size(self) -> int:
        return self.agent.wavefront_size


def _first(pools: Sequence[PoolInfo], match: Callable[[PoolInfo], bool]) -> PoolInfo | None:
    return next((pool for pool in pools if match(pool)), None)


def device_pools(gpu: AgentInfo) -> tuple[PoolInfo, PoolInfo]:
    """(coarse, fine) device-local pools of a GPU agent."""
    usable = [p for p in gpu.pools if p.is_global and p.alloc_allowed]
    found = []
    for flags in (C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, _FINE_FLAGS):
        pool = _first(usable, lambda p: bool(p.global_flags & flags))
        if pool is None:
            raise HalError(f"no memory pool matching the required flags {flags}; AMDGPU physical "
                           "device requires coarse and fine device-local global memory pools",
                           status="NOT_FOUND")
        found.append(pool)
    return found[0], found[1]


def host_pools(cpu: AgentInfo) -> HostPools:
    """The coarse, fine and kernarg-init pools of a CPU agent that every agent can reach."""
    usable = [p for p in cpu.pools if p.is_global and p.accessible_by_all and p.alloc_allowed]

    def flagged(bit: int) -> list[PoolInfo]:
        return [p for p in usable if p.global_flags & bit]

    kernarg_bit = C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT
    fine = flagged(C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED)
    pools = {"coarse": flagged(C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED),
             "fine": [p for p in fine if not p.global_flags & kernarg_bit] or fine,
             "kernarg": flagged(kernarg_bit)}
    for kind, label in (("coarse", "coarse-grained"), ("fine", "fine-grained"),
                        ("kernarg", "kernarg-init")):
        if not pools[kind]:
            raise HalError(f"no accessible-by-all + {label} shared memory pool is available in "
                           "the system", status="NOT_FOUND")
    return HostPools(**{kind: found[0] for kind, found in pools.items()})


def make_physical_device(ordinal: int, gpu_ordinal: int, agents: Agents) -> PhysicalDevice:
    gpu = agents.gpus[gpu_ordinal]
    host = agents.host_cpu(gpu)
    if host is None:
        raise HalError("topology is invalid; must have at least one CPU agent and one GPU agent",
                       status="INVALID_ARGUMENT")
    if not gpu.isas:
        raise HalError("GPU agent has no reported HSA ISA", status="NOT_FOUND")
    if gpu.compute_units == 0:
        raise HalError(f"HSA reported 0 compute units for device agent ordinal {ordinal}",
                       status="FAILED_PRECONDITION")
    if gpu.wavefront_size not in (32, 64):
        raise HalError(f"HSA reported unsupported wavefront size {gpu.wavefront_size} for device "
                       f"agent ordinal {ordinal} (expected 32 or 64)",
                       status="FAILED_PRECONDITION")
    coarse, fine = device_pools(gpu)
    return PhysicalDevice(ordinal, gpu_ordinal, gpu, host, coarse, fine, host_pools(host))


class AmdgpuDevice(Device):
    """A logical device over one or more GPUs of the same chip."""

    identifier = "amdgpu"

    def __init__(self, libhsa, physical_devices: Sequence[PhysicalDevice],
                 device_library: Path | None):
        super().__init__()
        self.physical_devices = tuple(physical_devices)
        self.device_library = device_library
        libhsa.init()  # this device's own runtime reference, as IREE's system takes one
        self._release = weakref.finalize(self, libhsa.shut_down)
        self._release.atexit = False

    def __repr__(self) -> str:
        uuids = ", ".join(p.uuid for p in self.physical_devices)
        return f"<AmdgpuDevice [{uuids}]>"

    def close(self) -> None:
        super().close()
        self._release()

    def _unimplemented(self, what: str) -> HalError:
        return HalError(f"{what} is not implemented yet by the amdgpu driver",
                        status="UNIMPLEMENTED")

    @property
    def allocator(self):
        raise self._unimplemented("buffer allocation")

    def create_executable_cache(self, identifier: str = "default"):
        raise self._unimplemented("loading executables")

    def queue_alloca(self, *args, **kwargs):
        raise self._unimplemented("queue_alloca")

    def queue_dealloca(self, *args, **kwargs):
        raise self._unimplemented("queue_dealloca")

    def queue_fill(self, *args, **kwargs):
        raise self._unimplemented("queue_fill")

    def queue_update(self, *args, **kwargs):
        raise self._unimplemented("queue_update")

    def queue_copy(self, *args, **kwargs):
        raise self._unimplemented("queue_copy")

    def queue_execute(self, *args, **kwargs):
        raise self._unimplemented("queue_execute")

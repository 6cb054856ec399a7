"""What HSA reports about the machine: CPU and GPU agents, their ISAs and memory pools, as records.

`enumerate_agents(libhsa)` walks `hsa_iterate_agents` once and returns `Agents` (CPUs and GPUs,
each in iteration order, which is the order `ROCR_VISIBLE_DEVICES` left them in). Every HSA call
goes through `Libhsa.check`, which names the call and the status. The records are plain frozen
dataclasses, so selection (topology.py), device building (device.py) and printing (dump.py) work
on them without HSA.

Each GPU is paired with a host CPU agent: `HSA_AMD_AGENT_INFO_NEAREST_CPU` when the runtime
answers it (newer ROCm; 5.2.3 rejects the attribute), else the CPU agent with the same node id,
else the first CPU agent.

Iteration callbacks are cffi ABI-mode callbacks that live for the one synchronous call that uses
them; an exception inside one stops the iteration (the callback returns HSA_STATUS_ERROR) and is
raised again once the HSA call has returned, rather than printed and dropped by cffi.
Sources: IREE `util/topology.c`, `system.c`, `driver.c`; fact sheet §1.2 and §2.2.
"""

from __future__ import annotations

import dataclasses

from hsa_ffi import constants as C

_NAME_BYTES = 64  # HSA_AGENT_INFO_NAME, VENDOR_NAME, PRODUCT_NAME are char[64]
_UUID_BYTES = 32  # IREE reads HSA_AMD_AGENT_INFO_UUID into char[32]

POOL_FLAG_NAMES = (
    (C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT, "kernarg_init"),
    (C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED, "fine"),
    (C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, "coarse"),
    (C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED, "extended_scope_fine"),
)


@dataclasses.dataclass(frozen=True)
class PoolInfo:
    handle: int
    segment: int
    global_flags: int
    size: int
    alloc_max_size: int
    granule: int
    alignment: int
    accessible_by_all: bool
    alloc_allowed: bool

    @property
    def is_global(self) -> bool:
        return self.segment == C.HSA_AMD_SEGMENT_GLOBAL

    @property
    def flag_names(self) -> list[str]:
        return [name for bit, name in POOL_FLAG_NAMES if self.global_flags & bit]


@dataclasses.dataclass(frozen=True)
class AgentInfo:
    handle: int
    is_gpu: bool
    name: str
    vendor_name: str
    node: int
    pools: tuple[PoolInfo, ...]
    # GPU-only properties (empty / 0 for CPU agents).
    product_name: str = ""
    uuid: str = ""
    chip_id: int = 0
    compute_units: int = 0
    wavefront_size: int = 0
    isas: tuple[str, ...] = ()
    nearest_cpu: int | None = None  # agent handle, when the runtime answers NEAREST_CPU


@dataclasses.dataclass(frozen=True)
class Agents:
    cpus: tuple[AgentInfo, ...]
    gpus: tuple[AgentInfo, ...]

    def host_cpu(self, gpu: AgentInfo) -> AgentInfo | None:
        """The CPU agent a GPU is paired with (None only when there are no CPU agents)."""
        for rule in (lambda cpu: cpu.handle == gpu.nearest_cpu, lambda cpu: cpu.node == gpu.node):
            for cpu in self.cpus:
                if rule(cpu):
                    return cpu
        return self.cpus[0] if self.cpus else None


class _Hsa:
    """Typed info queries over one Libhsa (each call checked and named)."""

    def __init__(self, libhsa):
        self.libhsa = libhsa
        self.ffi = libhsa.ffi

    def handle(self, ctype: str, value: int):
        return self.ffi.new(f"{ctype}*", {"handle": value})[0]

    def _get(self, function: str, args: tuple, ctype: str, count: int = 0):
        out = self.ffi.new(f"{ctype}[{count}]" if count else f"{ctype}*")
        self.libhsa.call(function, *args, out)
        return out

    def text(self, function: str, args: tuple, size: int) -> str:
        return self.ffi.string(self._get(function, args, "char", size)).decode("utf-8", "replace")

    def number(self, function: str, args: tuple, ctype: str) -> int:
        return self._get(function, args, ctype)[0]

    def iterate(self, function: str, item_type: str, *leading) -> list[int]:
        """The handles an `hsa_*_iterate_*(…, callback, data)` call visits, in order."""
        found: list[int] = []
        failures: list[BaseException] = []

        def on_error(_type, value, _traceback):
            failures.append(value)
            return C.HSA_STATUS_ERROR

        callback = self.ffi.callback(f"hsa_status_t(*)({item_type}, void*)",
                                     lambda item, _data: found.append(item.handle) or 0,
                                     error=C.HSA_STATUS_ERROR, onerror=on_error)
        status = getattr(self.libhsa.lib, function)(*leading, callback, self.ffi.NULL)
        if failures:
            raise failures[0]
        self.libhsa.check(function, status)
        return found


def _pool(hsa: _Hsa, handle: int) -> PoolInfo:
    pool = hsa.handle("hsa_amd_memory_pool_t", handle)

    def info(attribute: int, ctype: str) -> int:
        return hsa.number("hsa_amd_memory_pool_get_info", (pool, attribute), ctype)

    alloc_allowed = bool(info(C.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, "bool"))

    def allocation(attribute: int) -> int:
        # Granule, alignment and the allocation limit are defined only for allocatable pools.
        return info(attribute, "size_t") if alloc_allowed else 0

    return PoolInfo(
        handle=handle,
        segment=info(C.HSA_AMD_MEMORY_POOL_INFO_SEGMENT, "int"),
        global_flags=info(C.HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, "uint32_t"),
        size=info(C.HSA_AMD_MEMORY_POOL_INFO_SIZE, "size_t"),
        alloc_max_size=allocation(C.HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE),
        granule=allocation(C.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE),
        alignment=allocation(C.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT),
        accessible_by_all=bool(info(C.HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL, "bool")),
        alloc_allowed=alloc_allowed)


def _isa_name(hsa: _Hsa, handle: int) -> str:
    isa = hsa.handle("hsa_isa_t", handle)
    length = hsa.number("hsa_isa_get_info_alt", (isa, C.HSA_ISA_INFO_NAME_LENGTH), "uint32_t")
    return hsa.text("hsa_isa_get_info_alt", (isa, C.HSA_ISA_INFO_NAME), max(length, 1) + 1)


def _nearest_cpu(hsa: _Hsa, agent) -> int | None:
    out = hsa.ffi.new("hsa_agent_t*")
    status = hsa.libhsa.lib.hsa_agent_get_info(agent, C.HSA_AMD_AGENT_INFO_NEAREST_CPU, out)
    return out.handle if status == C.HSA_STATUS_SUCCESS and out.handle else None


def _agent(hsa: _Hsa, handle: int) -> AgentInfo | None:
    agent = hsa.handle("hsa_agent_t", handle)

    def text(attribute: int, size: int = _NAME_BYTES) -> str:
        return hsa.text("hsa_agent_get_info", (agent, attribute), size)

    def number(attribute: int) -> int:
        return hsa.number("hsa_agent_get_info", (agent, attribute), "uint32_t")

    kind = hsa.number("hsa_agent_get_info", (agent, C.HSA_AGENT_INFO_DEVICE), "int")
    if kind not in (C.HSA_DEVICE_TYPE_CPU, C.HSA_DEVICE_TYPE_GPU):
        return None  # DSPs and other agents take no part (as in IREE)
    pools = tuple(_pool(hsa, pool) for pool in hsa.iterate(
        "hsa_amd_agent_iterate_memory_pools", "hsa_amd_memory_pool_t", agent))
    common = dict(handle=handle, name=text(C.HSA_AGENT_INFO_NAME),
                  vendor_name=text(C.HSA_AGENT_INFO_VENDOR_NAME),
                  node=number(C.HSA_AGENT_INFO_NODE), pools=pools)
    if kind == C.HSA_DEVICE_TYPE_CPU:
        return AgentInfo(is_gpu=False, **common)
    return AgentInfo(
        is_gpu=True, **common,
        product_name=text(C.HSA_AMD_AGENT_INFO_PRODUCT_NAME).strip(),
        uuid=text(C.HSA_AMD_AGENT_INFO_UUID, _UUID_BYTES),
        chip_id=number(C.HSA_AMD_AGENT_INFO_CHIP_ID),
        compute_units=number(C.HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT),
        wavefront_size=number(C.HSA_AGENT_INFO_WAVEFRONT_SIZE),
        isas=tuple(_isa_name(hsa, isa) for isa in hsa.iterate(
            "hsa_agent_iterate_isas", "hsa_isa_t", agent)),
        nearest_cpu=_nearest_cpu(hsa, agent))


def enumerate_agents(libhsa) -> Agents:
    """Every CPU and GPU agent of an initialized runtime, with ISAs and memory pools."""
    hsa = _Hsa(libhsa)
    agents = [_agent(hsa, handle) for handle in hsa.iterate("hsa_iterate_agents", "hsa_agent_t")]
    return Agents(cpus=tuple(a for a in agents if a is not None and not a.is_gpu),
                  gpus=tuple(a for a in agents if a is not None and a.is_gpu))

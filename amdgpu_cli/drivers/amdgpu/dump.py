"""`amdgpu dump-devices` as data: one JSON-ready document describing every HSA agent.

`describe(agents, library)` turns the agent records of `system.enumerate_agents` into a plain dict
(schema below) that the CLI prints as JSON or renders as text; nothing here prints. Every GPU the
runtime shows is listed, including those the default device (`--device=amdgpu`) skips because
they differ from GPU 0; `in_default_device` says which.

Schema (version 1; keys are only ever added):
  {"schema_version": 1, "record_type": "amdgpu_devices", "library": <libhsa path>,
   "gpus": [{"ordinal", "uri" (amdgpu://GPU-…), "ordinal_uri" (amdgpu://N), "in_default_device",
             "product_name", "name", "vendor_name", "isas": [...], "uuid", "node", "chip_id",
             "compute_units", "wavefront_size", "host_cpu": {"name", "node"} | null,
             "pools": [POOL, ...]}],
   "cpus": [{"ordinal", "name", "vendor_name", "node", "pools": [POOL, ...]}]}
  POOL = {"segment": "global"|"readonly"|"private"|"group"|<int>, "flags": ["coarse", ...],
          "size", "alloc_max_size", "alignment", "granule" (bytes; 0 when not allocatable),
          "accessible_by_all", "alloc_allowed"}
"""

from __future__ import annotations

from amdgpu_cli.drivers.amdgpu import topology
from amdgpu_cli.drivers.amdgpu.system import AgentInfo, Agents, PoolInfo

SCHEMA_VERSION = 1
_SEGMENTS = {0: "global", 1: "readonly", 2: "private", 3: "group"}  # hsa_amd_segment_t


def _pool(pool: PoolInfo) -> dict:
    return {"segment": _SEGMENTS.get(pool.segment, pool.segment), "flags": pool.flag_names,
            "size": pool.size, "alloc_max_size": pool.alloc_max_size,
            "alignment": pool.alignment, "granule": pool.granule,
            "accessible_by_all": pool.accessible_by_all, "alloc_allowed": pool.alloc_allowed}


def _gpu(ordinal: int, gpu: AgentInfo, agents: Agents, in_default: bool) -> dict:
    host = agents.host_cpu(gpu)
    return {"ordinal": ordinal, "uri": f"amdgpu://{gpu.uuid}", "ordinal_uri": f"amdgpu://{ordinal}",
            "in_default_device": in_default, "product_name": gpu.product_name, "name": gpu.name,
            "vendor_name": gpu.vendor_name, "isas": list(gpu.isas), "uuid": gpu.uuid,
            "node": gpu.node, "chip_id": gpu.chip_id, "compute_units": gpu.compute_units,
            "wavefront_size": gpu.wavefront_size,
            "host_cpu": {"name": host.name, "node": host.node} if host else None,
            "pools": [_pool(p) for p in gpu.pools]}


def describe(agents: Agents, library: str) -> dict:
    default = set(topology.default_gpus(agents.gpus))
    return {"schema_version": SCHEMA_VERSION, "record_type": "amdgpu_devices", "library": library,
            "gpus": [_gpu(i, gpu, agents, i in default) for i, gpu in enumerate(agents.gpus)],
            "cpus": [{"ordinal": i, "name": cpu.name, "vendor_name": cpu.vendor_name,
                      "node": cpu.node, "pools": [_pool(p) for p in cpu.pools]}
                     for i, cpu in enumerate(agents.cpus)]}

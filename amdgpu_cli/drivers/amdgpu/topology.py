"""Which GPU agents a device URI or device id selects: pure functions over agent records.

The inputs are the visible GPU agents in `hsa_iterate_agents` order (after the runtime applied
`ROCR_VISIBLE_DEVICES`); an agent is anything with `vendor_name`, `name`, `chip_id` and `uuid`
attributes (`system.AgentInfo` in the driver, small records in tests). The outputs are GPU
ordinals into that list, in topology order. Nothing here calls HSA.

Rules (IREE `util/topology.c`, `driver.c`, `logical_device.c`; fact sheet §4.2):
  - path empty or `*`: the defaults, every GPU whose vendor, agent name and chip id match GPU 0's;
    the others are skipped without a word;
  - otherwise the path is split on `,`; a fragment starting with `GPU-` (case-sensitive prefix)
    names the GPU whose UUID equals it ignoring case, any other fragment is an ordinal parsed as
    C `strtoul(fragment, 0)` into a uint32 (so `0x1` and `1st` read as 1, as in IREE); a GPU named
    twice is kept once, at its first position;
  - device ids: 0 is the defaults, bit i is GPU ordinal i, selected in ordinal order;
  - a selected topology must be non-empty, fit 2 queues per GPU in 64 queue-affinity bits, and
    every GPU must match the first one (explicit lists are checked here, after selection);
  - URI key/value params are all rejected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from amdgpu_cli.hal.enums import HalError

QUEUES_PER_GPU = 2  # IREE_HAL_AMDGPU_DEFAULT_GPU_AGENT_QUEUE_COUNT
MAX_QUEUES = 64  # IREE_HAL_MAX_QUEUES: bits of a queue-affinity mask


class GpuAgent(Protocol):
    vendor_name: str
    name: str
    chip_id: int
    uuid: str


def check_params(params: Sequence[tuple[str, str]]) -> None:
    """The amdgpu logical device takes no URI params: the first one is an error."""
    if params:
        raise HalError("AMDGPU logical device options do not support key/value parameter "
                       f"'{params[0][0]}'", status="INVALID_ARGUMENT")


def compatible(a: GpuAgent, b: GpuAgent) -> bool:
    """Same vendor, same agent name, same chip id (IREE's test for GPUs in one topology)."""
    return (a.vendor_name, a.name, a.chip_id) == (b.vendor_name, b.name, b.chip_id)


def default_gpus(gpus: Sequence[GpuAgent]) -> list[int]:
    """Every GPU compatible with GPU 0, in order (empty when there are no GPUs)."""
    return [i for i, gpu in enumerate(gpus) if compatible(gpus[0], gpu)]


_STRTOUL = re.compile(r"[ \t\n\v\f\r]*([+-]?)"  # C isspace, then an optional sign
                      r"(0[xX](?=[0-9a-fA-F])[0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


def parse_uint32(text: str) -> int | None:
    """`iree_string_view_atoi_uint32`: C strtoul with base 0, truncated to 32 bits.

    Leading space, a sign and a `0x` / `0` (octal) prefix are accepted and trailing characters
    ignored; None when no digits start the text or it is 16 characters or longer (IREE copies
    it into a 16-byte buffer; 15 characters cannot overflow unsigned long).
    """
    if len(text) >= 16:
        return None
    match = _STRTOUL.match(text)
    if match is None:
        return None
    sign, digits = match.groups()
    value = int(digits, 16 if digits[:2] in ("0x", "0X") else 8 if digits[0] == "0" else 10)
    if sign == "-":
        value = -value % (1 << 64)
    return value & 0xFFFFFFFF


def _find_uuid(fragment: str, gpus: Sequence[GpuAgent]) -> int:
    wanted = fragment.lower()
    for i, gpu in enumerate(gpus):
        if gpu.uuid.lower() == wanted:
            return i
    raise HalError(f"no GPU agent with UUID `{fragment}` found", status="NOT_FOUND")


def _parse_ordinal(fragment: str, gpu_count: int) -> int:
    ordinal = parse_uint32(fragment)
    if ordinal is None:
        raise HalError(f"invalid device specifier `{fragment}`; expected an ordinal (`0`) or a "
                       "device UUID (`GPU-XX...`)", status="INVALID_ARGUMENT")
    if ordinal >= gpu_count:
        raise HalError(f"device ordinal `{ordinal}` out of range; {gpu_count} GPU devices "
                       "available", status="INVALID_ARGUMENT")
    return ordinal


def select_gpus(path: str, gpus: Sequence[GpuAgent]) -> list[int]:
    """GPU ordinals named by a device path (`""`, `*`, `0`, `GPU-…`, `1,GPU-…`), in order."""
    if path in ("", "*"):
        return default_gpus(gpus)
    selected: list[int] = []
    rest = path
    while True:
        fragment, comma, rest = rest.partition(",")
        if fragment.startswith("GPU-"):
            ordinal = _find_uuid(fragment, gpus)
        else:
            ordinal = _parse_ordinal(fragment, len(gpus))
        if ordinal not in selected:
            selected.append(ordinal)
        if not rest:
            return selected


def device_id_to_gpus(device_id: int, gpus: Sequence[GpuAgent]) -> list[int]:
    """GPU ordinals of a device id from `query_available_devices` (0: the defaults)."""
    if device_id == 0:
        return default_gpus(gpus)
    valid = (1 << min(len(gpus), 64)) - 1
    if device_id & ~valid:
        raise HalError(f"GPU agent mask 0x{device_id:016x} selects unavailable GPU ordinals; "
                       f"only {len(gpus)} visible GPU agent(s) are available",
                       status="OUT_OF_RANGE")
    return [i for i in range(len(gpus)) if device_id >> i & 1]


def verify(selected: Sequence[int], gpus: Sequence[GpuAgent]) -> None:
    """The checks a selected topology must pass before a logical device is made from it."""
    if not selected:
        raise HalError("topology is invalid; must have at least one CPU agent and one GPU agent "
                       "with at least one queue, have cpu_agent_count=0, gpu_agent_count=0, "
                       f"gpu_agent_queue_count={QUEUES_PER_GPU}", status="INVALID_ARGUMENT")
    if len(selected) * QUEUES_PER_GPU > MAX_QUEUES:
        raise HalError("topology queue space does not fit in iree_hal_queue_affinity_t "
                       f"(gpu_agent_count={len(selected)}, gpu_agent_queue_count="
                       f"{QUEUES_PER_GPU}, max_total_queues={MAX_QUEUES})", status="OUT_OF_RANGE")
    lead = gpus[selected[0]]
    for position, ordinal in enumerate(selected[1:], start=1):
        if not compatible(lead, gpus[ordinal]):
            raise HalError(f"GPU agent {position} in the topology is incompatible with other "
                           "agents", status="INCOMPATIBLE")

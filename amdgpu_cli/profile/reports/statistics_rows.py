"""`statistics`' rows from the aggregate rows a pass reduced (plain Python, no numpy).

Both ways of reducing, the one-pass native reducer (`statistics_native.py`) and the exact numpy
walk that also gives IREE's errors (`statistics.py`), produce the same aggregate rows (key fields
plus counts, sums and extremes), the first and last clock samples per device, and the function
names; these turn them into the `statistics_summary` row and one `statistics_row` each, with
device ticks scaled to nanoseconds as IREE's statistics sink scales them.

Sources: IREE `hal/utils/statistics_sink.c`, `tooling/profile/statistics.c`.
"""

from __future__ import annotations

from dataclasses import dataclass

from amdgpu_cli.profile.names import MEMORY_EVENT_TYPE_NAMES, QUEUE_EVENT_TYPE_NAMES, U64_MAX, Flags
from amdgpu_cli.profile.reports.summary_rows import Row

ROW_TYPE_NAMES = {1: "dispatch_function", 2: "dispatch_command_buffer",
                  3: "dispatch_command_operation", 4: "queue_device_operation",
                  5: "queue_host_operation", 6: "host_execution_function",
                  7: "host_execution_command_buffer", 8: "host_execution_command_operation",
                  9: "host_execution_queue_operation", 10: "memory_lifecycle"}
NONE, DEVICE_TICK, HOST_NS = 0, 1, 2
TIME_DOMAIN_NAMES = {NONE: "none", DEVICE_TICK: "device_tick", HOST_NS: "iree_host_time_ns"}
DURATION_UNITS = {NONE: "none", DEVICE_TICK: "device_tick", HOST_NS: "ns"}
FLAG_TIMING, FLAG_PAYLOAD_BYTES, FLAG_OPERATION_COUNT, FLAG_TILE_TOTALS = 1, 2, 4, 8
_QUEUE_ROW_TYPES = (4, 5, 9)


@dataclass
class DeviceClock:
    """First and last clock samples of one device, for the sink's tick -> ns scaling."""

    count: int
    unaligned: int
    first: dict
    last: dict

    def _times(self) -> tuple[int, int] | None:
        def cpu(s):
            t = s["host_cpu_timestamp_ns"]
            return t if s["flags"] & Flags.CLOCK_HOST_CPU_TIMESTAMP and t <= (1 << 63) - 1 else None

        def midpoint(s):
            b, e = s["host_time_begin_ns"], s["host_time_end_ns"]
            if not s["flags"] & Flags.CLOCK_HOST_TIME_BRACKET or b < 0 or e < b:
                return None
            return b + (e - b) // 2

        t0, t1 = cpu(self.first), cpu(self.last)
        if t0 is None or t1 is None:
            t0, t1 = midpoint(self.first), midpoint(self.last)
            if t0 is None or t1 is None:
                return None
        return t0, t1

    def scale(self, ticks: int) -> int | None:
        """Nanoseconds for `ticks` device ticks, rounded half up; None without a reliable fit."""
        f, l = self.first, self.last
        if self.count < 2 or self.unaligned:
            return None
        if (not f["flags"] & Flags.CLOCK_DEVICE_TICK or not l["flags"] & Flags.CLOCK_DEVICE_TICK
                or (f["flags"] | l["flags"]) & Flags.CLOCK_DEVICE_TICK_UNALIGNED
                or l["device_tick"] <= f["device_tick"]):
            return None
        times = self._times()
        if times is None or times[1] <= times[0]:
            return None
        if ticks == 0:
            return 0
        span = l["device_tick"] - f["device_tick"]
        ns = (ticks * (times[1] - times[0]) + span // 2) // span
        return ns if ns <= U64_MAX else None


def summary_row(row_count: int, dropped: int) -> Row:
    return Row({"type": "statistics_summary", "row_count": row_count,
                "dropped_record_count": dropped})


def statistics_row(g: dict, clocks: dict[int, DeviceClock], names: dict) -> Row:
    """One `statistics_row` from an aggregate row `g` (its key and reduced values), the device
    clocks and the function names."""
    timed = bool(g["flags"] & FLAG_TIMING)
    domain = g["time_domain"]
    clock = clocks.get(g["physical_device_ordinal"])

    def to_ns(value: int) -> int | None:
        if not timed:
            return None
        if domain == HOST_NS:
            return value
        if domain == DEVICE_TICK and clock is not None:
            return clock.scale(value)
        return None

    rt = g["row_type"]
    if rt in _QUEUE_ROW_TYPES:
        event_name = QUEUE_EVENT_TYPE_NAMES.get(g["event_type"], "unknown")
    elif rt == 10:
        event_name = MEMORY_EVENT_TYPE_NAMES.get(g["event_type"], "unknown")
    else:
        event_name = None
    name = names.get((g["executable_id"], g["function_ordinal"])) or None
    fields = {
        "type": "statistics_row", "row_type": ROW_TYPE_NAMES.get(rt, "unknown"),
        "row_type_value": rt, "time_domain": TIME_DOMAIN_NAMES[domain], "time_domain_value": domain,
        "duration_unit": DURATION_UNITS[domain], "flags": g["flags"], "has_timing": timed,
        "has_payload_bytes": bool(g["flags"] & FLAG_PAYLOAD_BYTES),
        "has_operation_count": bool(g["flags"] & FLAG_OPERATION_COUNT),
        "has_tile_totals": bool(g["flags"] & FLAG_TILE_TOTALS),
        "physical_device_ordinal": g["physical_device_ordinal"], "queue_ordinal": g["queue_ordinal"],
        "event_type": g["event_type"], "event_name": event_name,
        "executable_id": g["executable_id"], "command_buffer_id": g["command_buffer_id"],
        "function_ordinal": g["function_ordinal"], "command_index": g["command_index"],
        "function_name": name, "sample_count": g["sample_count"],
        "invalid_sample_count": g["invalid_sample_count"], "operation_count": g["operation_count"],
        "payload_bytes": g["payload_bytes"], "tile_count": g["tile_count"],
        "tile_duration_sum_ns": g["tile_duration_sum_ns"],
        "first_start_time": g["first_start_time"] if timed else 0,
        "last_end_time": g["last_end_time"] if timed else 0,
        "total_duration": g["total_duration"],
        "minimum_duration": g["minimum_duration"] if timed else 0,
        "maximum_duration": g["maximum_duration"] if timed else 0,
        "total_duration_ns": to_ns(g["total_duration"]),
        "minimum_duration_ns": to_ns(g["minimum_duration"]),
        "maximum_duration_ns": to_ns(g["maximum_duration"]),
    }
    avg = g["total_duration"] // g["sample_count"] if g["sample_count"] else None
    extra = {"average_duration": avg, "average_duration_ns": None if avg is None else to_ns(avg)}
    return Row(fields, extra)

"""`summary`'s rows from what a pass over the bundle gathered (plain Python, no numpy).

Both ways of gathering, the one-pass native reducer (`summary_native.py`) and the exact walk that
also produces IREE's errors (`summary.py`), fill the same counts and `DeviceSummary`s, and these
functions turn them into the `summary` row and one `device_summary` row per device, in IREE's key
order.

Sources: IREE `tooling/profile/summary.c`; ../shared/reference/ireeprof.md sections 3, 4.2 and 7.
"""

from __future__ import annotations

from amdgpu_cli.profile.clock import DeviceClock
from amdgpu_cli.profile.jsonl import Fixed
from amdgpu_cli.profile.names import FAMILIES, Flags

F = Flags


class Row(dict):
    """A JSONL row (the dict, in IREE's key order) plus `extra`: facts only the text view shows."""

    def __init__(self, fields: dict, extra: dict | None = None):
        super().__init__(fields)
        self.extra = extra or {}


class DeviceSummary:
    """What summary gathers for one physical device."""

    def __init__(self, physical_device_ordinal: int):
        self.physical_device_ordinal = physical_device_ordinal
        self.device_records = self.queue_count = self.queue_records = 0
        self.clock: DeviceClock | None = None
        self.min_uncertainty_ns: int | None = None
        self.max_uncertainty_ns = 0
        self.dispatches = self.invalid_dispatches = 0
        self.total_ticks = self.min_ticks = self.max_ticks = 0
        self.earliest_start = self.latest_end = 0
        self.metric_samples = self.metric_values = self.invalid_metric_samples = 0

    @property
    def valid_dispatches(self) -> int:
        return self.dispatches - self.invalid_dispatches


def summary_row(c: dict, chunk_counts) -> Row:
    """The `summary` row: `c` holds the counts by row key, `chunk_counts` the chunks per family."""
    chunks = {key: int(n) for (_, key, _), n in zip(FAMILIES, chunk_counts)}
    g = c.get
    row = {"type": "summary"}
    for k in ("file_records", "session_begin_records", "chunk_records", "session_end_records",
              "non_ok_session_end_records", "unknown_records"):
        row[k] = c[k]
    if c["non_ok_session_end_records"]:
        for k in ("first_non_ok_session_id", "first_non_ok_stream_id", "first_non_ok_event_id",
                  "first_non_ok_status_code", "first_non_ok_status"):
            row[k] = c[k]

    def family(key, *extra):
        row[f"{key}_chunks"] = chunks[key]
        row[f"{key}_records"] = c[f"{key}_records"]
        for name in extra:
            row[name] = g(name, 0)

    row["device_chunks"] = chunks["device"]
    row["queue_chunks"] = chunks["queue"]
    family("executable")
    family("executable_code_object", "executable_code_object_data_bytes")
    family("executable_code_object_load")
    family("executable_function")
    family("command_buffer")
    family("command_operation")
    row["clock_correlation_chunks"] = chunks["clock_correlation"]
    row["dispatch_event_chunks"] = chunks["dispatch_event"]
    family("queue_event")
    family("queue_device_event")
    family("host_execution_event", "invalid_host_execution_event_records",
           "total_host_execution_duration_ns")
    family("command_region_event", "invalid_command_region_event_records",
           "total_command_region_duration_ns")
    family("memory_event")
    family("event_relationship")
    family("counter_set")
    family("counter")
    family("counter_sample")
    family("device_metric_source")
    family("device_metric_descriptor")
    family("device_metric_sample", "device_metric_values", "invalid_device_metric_sample_records")
    family("executable_trace", "executable_trace_data_bytes")
    for k in ("unknown_chunks", "truncated_chunks", "dropped_records"):
        row[k] = c[k]
    return Row(row)

def device_row(d: DeviceSummary) -> Row:
    """One `device_summary` row."""
    clock = d.clock or DeviceClock(d.physical_device_ordinal)
    valid = d.valid_dispatches
    avg_ticks = float(d.total_ticks) / valid if valid else 0.0
    fit = clock.fit()
    covered = (clock.sample_count >= 2 and valid != 0 and clock.unaligned_count == 0
               and bool(int(clock.first["flags"]) & F.CLOCK_DEVICE_TICK)
               and bool(int(clock.last["flags"]) & F.CLOCK_DEVICE_TICK)
               and int(clock.first["device_tick"]) <= d.earliest_start
               and d.latest_end <= int(clock.last["device_tick"]))
    ns_per_tick = fit.ns_per_tick if fit else 0.0
    min_ns = max_ns = total_ns = None
    if fit and valid:
        min_ns, max_ns, total_ns = (fit.ticks_to_ns(d.min_ticks), fit.ticks_to_ns(d.max_ticks),
                                    fit.ticks_to_ns(d.total_ticks))
    has_ns = None not in (min_ns, max_ns, total_ns)
    row = {
        "type": "device_summary", "physical_device_ordinal": d.physical_device_ordinal,
        "device_records": d.device_records, "queue_records": d.queue_records,
        "queues": d.queue_count, "clock_samples": clock.sample_count,
        "invalid_clock_alignment_samples": clock.unaligned_count,
        "clock_fit_available": fit is not None, "ns_per_tick": Fixed(ns_per_tick, 9),
        "tick_frequency_hz": fit.tick_frequency_hz if fit else 0.0,
        "min_clock_uncertainty_ns": d.min_uncertainty_ns or 0,
        "max_clock_uncertainty_ns": d.max_uncertainty_ns,
        "dispatches": d.dispatches, "valid_dispatches": valid,
        "invalid_dispatches": d.invalid_dispatches,
        "min_dispatch_ticks": d.min_ticks if valid else 0, "avg_dispatch_ticks": avg_ticks,
        "max_dispatch_ticks": d.max_ticks if valid else 0,
        "total_dispatch_ticks": d.total_ticks,
        "earliest_dispatch_start_tick": d.earliest_start if valid else 0,
        "latest_dispatch_end_tick": d.latest_end if valid else 0,
        "dispatch_ticks_covered_by_clock_samples": covered,
        "dispatch_time_available": has_ns,
        "min_dispatch_ns": min_ns if has_ns else 0,
        "avg_dispatch_ns": avg_ticks * ns_per_tick if has_ns else 0.0,
        "max_dispatch_ns": max_ns if has_ns else 0,
        "total_dispatch_ns": total_ns if has_ns else 0,
        "device_metric_samples": d.metric_samples, "device_metric_values": d.metric_values,
        "invalid_device_metric_samples": d.invalid_metric_samples,
    }
    extra = {}
    if fit:
        extra["device_delta_ticks"] = fit.tick_span
        extra["host_delta_ns"] = (int(clock.last["host_cpu_timestamp_ns"])
                                  - int(clock.first["host_cpu_timestamp_ns"]))
    return Row(row, extra)

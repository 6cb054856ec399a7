"""`summary` in one native pass over the file, without numpy: what the command line runs first.

`report_file(path)` maps the file, checks its header, and runs `_summary.c`'s `summarize`: one
forward walk over the records and, inside each chunk, its typed records, holding a window of the
file at a time and keeping only the counts, exact sums and per-device state summary prints. The
rows are made by `summary_rows.py`, as for the exact walk.

It returns None, and the caller runs the exact walk (`summary.report` over a `Bundle`), when the
native module is not built or is switched off (`AMDGPU_CLI_PURE_PYTHON=1`), when the file is empty
or its header is not valid, and when the pass meets anything the exact walk must judge (a broken
record, a typed record of the wrong size, length fields that disagree, a sum past 2**64, more than
MAX_DEVICES devices): that walk gives IREE's message for the first such record in file order.

Source: IREE `tooling/profile/summary.c`; ../shared/reference/ireeprof.md sections 1-4.
"""

from __future__ import annotations

import struct

from amdgpu_cli.profile.clock import DeviceClock
from amdgpu_cli.profile.mapped import page_window
from amdgpu_cli.profile.names import FAMILIES, status_name
from amdgpu_cli.profile.native import content_name_table, native_module, on_mapped_bundle
from amdgpu_cli.profile.reports.summary_rows import DeviceSummary, Row, device_row, summary_row

MAX_DEVICES = 256

_SESSION_IDS = struct.Struct("<QQQ")      # record header: session_id, stream_id, event_id at 16
_STATUS_CODE = struct.Struct("<I")        # record header: session_status_code at 96
# Clock correlation: flags, pdo, sample_id, device_tick, host_cpu_timestamp_ns, host time bracket.
_CLOCK = struct.Struct("<4xII4xQQQ16xqq")
_CLOCK_FIELDS = ("flags", "physical_device_ordinal", "sample_id", "device_tick",
                 "host_cpu_timestamp_ns", "host_time_begin_ns", "host_time_end_ns")


def clock_sample(mm, offset: int) -> dict:
    """The clock-correlation fields a clock fit reads, from the record at `offset` (no numpy)."""
    return dict(zip(_CLOCK_FIELDS, _CLOCK.unpack_from(mm, offset)))


def session_end(mm, offset: int) -> dict:
    """The ids and status of the session-end record at `offset`, as summary and explain name them
    after `first_non_ok_`."""
    session, stream, event = _SESSION_IDS.unpack_from(mm, offset + 16)
    (code,) = _STATUS_CODE.unpack_from(mm, offset + 96)
    return {"session_id": session, "stream_id": stream, "event_id": event, "status_code": code,
            "status": status_name(code)}


def report_file(path: str, options=None) -> list[Row] | None:
    """The `summary` rows of the bundle at `path`, or None when the exact walk must run."""
    return on_mapped_bundle(path, _summarize)


def _summarize(mm, first: int, length: int) -> list[Row] | None:
    ffi, lib = native_module()
    totals = ffi.new("summary_totals_t*")
    devices = ffi.new("summary_device_t[]", MAX_DEVICES)
    names, name_lengths = content_name_table(ffi)
    data = ffi.from_buffer("uint8_t[]", mm)
    try:
        rc = lib.summarize(data, length, first, names, name_lengths, len(FAMILIES),
                           page_window(len(mm)), totals, devices, MAX_DEVICES)
    finally:
        ffi.release(data)
    if rc != 0:
        return None
    t = totals
    counts = {
        "file_records": t.file_records, "session_begin_records": t.session_begin_records,
        "chunk_records": t.chunk_records, "session_end_records": t.session_end_records,
        "non_ok_session_end_records": t.non_ok_session_end_records,
        "unknown_records": t.unknown_records,
        "unknown_chunks": t.unknown_chunks, "truncated_chunks": t.truncated_chunks,
        "dropped_records": t.dropped_records,
        "executable_code_object_data_bytes": t.code_object_bytes,
        "executable_trace_data_bytes": t.trace_bytes,
        "device_metric_values": t.metric_values,
        "invalid_device_metric_sample_records": t.invalid_metric_samples,
        "invalid_host_execution_event_records": t.invalid_host_execution,
        "total_host_execution_duration_ns": t.host_execution_ns,
        "invalid_command_region_event_records": t.invalid_command_region,
        "total_command_region_duration_ns": t.command_region_ns,
    }
    for i, (_, key, _) in enumerate(FAMILIES):
        counts[key + "_records"] = t.records[i]
    if t.non_ok_session_end_records:
        for key, value in session_end(mm, t.first_non_ok_offset).items():
            counts["first_non_ok_" + key] = value
    rows = [summary_row(counts, list(t.chunks))]
    for i in range(t.device_count):
        rows.append(device_row(_device(mm, devices[i])))
    return rows


def _device(mm, n) -> DeviceSummary:
    """A DeviceSummary from the native pass's state for one device."""
    d = DeviceSummary(n.physical_device_ordinal)
    d.device_records, d.queue_count, d.queue_records = n.device_records, n.queue_count, n.queue_records
    if n.clock_samples:
        first, last = (clock_sample(mm, at) for at in (n.first_clock_offset, n.last_clock_offset))
        d.clock = DeviceClock(d.physical_device_ordinal, n.clock_samples, n.clock_unaligned,
                              first, last)
    if n.clock_brackets:
        d.min_uncertainty_ns = n.min_uncertainty_ns
        d.max_uncertainty_ns = max(0, n.max_uncertainty_ns)
    d.dispatches, d.invalid_dispatches = n.dispatches, n.invalid_dispatches
    d.total_ticks, d.min_ticks, d.max_ticks = n.total_ticks, n.min_ticks, n.max_ticks
    d.earliest_start, d.latest_end = n.earliest_start, n.latest_end
    d.metric_samples, d.metric_values = n.metric_samples, n.metric_values
    d.invalid_metric_samples = n.invalid_metric_samples
    return d

"""`queue`: queues, dispatch-derived submissions and the queue event streams.

Rows, as `iree-profile queue --format=jsonl` prints them: `queue_summary`; one `queue` row per
queue record; `queue_submission` rows (matched device dispatches grouped by device, queue, stream
and submission); then the `queue_device_event`, `host_execution_event` and `queue_event` records
whose submission matches `--id` and whose type name matches `--filter`, each family in file order.
`--filter` also applies to dispatch function keys, as in iree-profile. With `--dispatch_events`:
the event rows, then a `dispatch_summary` (mode `events`).
"""

from __future__ import annotations

from typing import Iterator


from amdgpu_cli.profile import schema
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports.projection import QUEUE, Projection
from amdgpu_cli.profile.reports.toolkit import RowBlock, RowLayout, Rows, Strings

_TYPE = schema.QUEUE_EVENT_TYPE_NAMES
_STRATEGY = schema.DEPENDENCY_STRATEGY_NAMES


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> Rows:
    return Rows(_parts(bundle, options))


def _parts(bundle: Bundle, options: ReportOptions) -> Iterator:
    p = Projection.build(bundle, QUEUE, options)
    if options.dispatch_events:
        yield from p.event_rows()
        yield p.dispatch_summary_row()
        return
    q = p.queue_query
    d, h = p.device_counts, p.host_counts
    yield {"type": "queue_summary", "filter": options.filter, "queues": len(p.model.queues),
           "queue_events": len(q.queue_events), "queue_device_events": len(q.device_events),
           "host_execution_events": len(q.host_execution_events),
           "truncated_chunks": q.truncated_chunks, "dropped_records": q.dropped_records,
           "submissions": len(p.submission_groups), "matched_dispatches": d.matched,
           "valid_dispatches": d.valid, "invalid_dispatches": d.invalid,
           "matched_host_dispatches": h.matched, "valid_host_dispatches": h.valid,
           "invalid_host_dispatches": h.invalid,
           "host_command_executions": len(p.host_command_groups)}
    for pdo, queue, stream in p.model.queues:
        yield {"type": "queue", "physical_device_ordinal": pdo, "queue_ordinal": queue,
               "stream_id": stream}
    yield from submission_rows(p)
    yield device_event_rows(p)
    yield host_execution_event_rows(p)
    yield queue_event_rows(p)


def submission_rows(p: Projection) -> Iterator[dict]:
    t = p.submission_groups
    for g in range(len(t)):
        timing = p.submission_timing(t, g)
        yield {"type": "queue_submission", "submission_id": int(t["submission_id"][g]),
               "physical_device_ordinal": int(t["pdo"][g]), "queue_ordinal": int(t["queue"][g]),
               "stream_id": int(t["stream"][g]), "dispatches": int(t["count"][g]),
               "valid": int(t["valid"][g]), "invalid": int(t["invalid"][g]),
               "span_ticks": timing["span_ticks"], "total_dispatch_ticks": int(t["total"][g]),
               "clock_fit_available": timing["has_clock_fit"],
               "total_dispatch_time_ns_available": timing["has_total_ns"],
               "span_ns": timing["span_ns"], "total_dispatch_ns": timing["total_dispatch_ns"]}


def device_event_rows(p: Projection) -> RowBlock:
    r = p.queue_query.device_events
    if not len(r):
        return DEVICE_EVENT_ROW.empty()
    start, end = r["start_tick"], r["end_tick"]
    valid = (start != 0) & (end != 0) & (end >= start)
    ticks = (end - start) * valid
    pdo = r["physical_device_ordinal"]
    ns, fitted = p.clocks.ns_column(pdo, ticks, valid)
    return DEVICE_EVENT_ROW.block(
        event_id=r["event_id"], op=Strings.enum(r["type"], _TYPE), flags=r["flags"],
        submission_id=r["submission_id"], command_buffer_id=r["command_buffer_id"],
        allocation_id=r["allocation_id"], physical_device_ordinal=pdo,
        queue_ordinal=r["queue_ordinal"], stream_id=r["stream_id"],
        operation_count=r["operation_count"], payload_length=r["payload_length"],
        start_tick=start, end_tick=end, duration_ticks=ticks, valid=valid,
        clock_fit_available=fitted, duration_ns=ns)


def host_execution_event_rows(p: Projection) -> RowBlock:
    r = p.queue_query.host_execution_events
    if not len(r):
        return HOST_EXECUTION_EVENT_ROW.empty()
    start, end = r["start_host_time_ns"], r["end_host_time_ns"]
    valid = (start >= 0) & (end >= start)
    return HOST_EXECUTION_EVENT_ROW.block(
        event_id=r["event_id"], op=Strings.enum(r["type"], _TYPE), flags=r["flags"],
        status_code=r["status_code"], submission_id=r["submission_id"],
        command_buffer_id=r["command_buffer_id"], command_index=r["command_index"],
        executable_id=r["executable_id"], function_ordinal=r["function_ordinal"],
        allocation_id=r["allocation_id"], physical_device_ordinal=r["physical_device_ordinal"],
        queue_ordinal=r["queue_ordinal"], stream_id=r["stream_id"],
        operation_count=r["operation_count"], payload_length=r["payload_length"],
        tile_count=r["tile_count"], tile_duration_sum_ns=r["tile_duration_sum_ns"],
        start_host_time_ns=start, end_host_time_ns=end, duration_ns=(end - start) * valid,
        valid=valid)


def queue_event_rows(p: Projection) -> RowBlock:
    r = p.queue_query.queue_events
    if not len(r):
        return QUEUE_EVENT_ROW.empty()
    return QUEUE_EVENT_ROW.block(
        event_id=r["event_id"], op=Strings.enum(r["type"], _TYPE), flags=r["flags"],
        dependency_strategy=Strings.enum(r["dependency_strategy"], _STRATEGY),
        submission_id=r["submission_id"], command_buffer_id=r["command_buffer_id"],
        allocation_id=r["allocation_id"], physical_device_ordinal=r["physical_device_ordinal"],
        queue_ordinal=r["queue_ordinal"], stream_id=r["stream_id"],
        host_time_ns=r["host_time_ns"], ready_host_time_ns=r["ready_host_time_ns"],
        wait_count=r["wait_count"], signal_count=r["signal_count"],
        barrier_count=r["barrier_count"], operation_count=r["operation_count"],
        payload_length=r["payload_length"])


DEVICE_EVENT_ROW = RowLayout("queue_device_event", [
    ("event_id", "int"), ("op", "str"), ("flags", "int"), ("submission_id", "int"),
    ("command_buffer_id", "int"), ("allocation_id", "int"), ("physical_device_ordinal", "int"),
    ("queue_ordinal", "int"), ("stream_id", "int"), ("operation_count", "int"),
    ("payload_length", "int"), ("start_tick", "int"), ("end_tick", "int"),
    ("duration_ticks", "int"), ("valid", "bool"), ("clock_fit_available", "bool"),
    ("duration_ns", "int"),
])

HOST_EXECUTION_EVENT_ROW = RowLayout("host_execution_event", [
    ("event_id", "int"), ("op", "str"), ("flags", "int"), ("status_code", "int"),
    ("submission_id", "int"), ("command_buffer_id", "int"), ("command_index", "int"),
    ("executable_id", "int"), ("function_ordinal", "int"), ("allocation_id", "int"),
    ("physical_device_ordinal", "int"), ("queue_ordinal", "int"), ("stream_id", "int"),
    ("operation_count", "int"), ("payload_length", "int"), ("tile_count", "int"),
    ("tile_duration_sum_ns", "int"), ("host_time_domain", "=iree_host_time_ns"),
    ("start_host_time_ns", "int"), ("end_host_time_ns", "int"), ("duration_ns", "int"),
    ("valid", "bool"),
])

QUEUE_EVENT_ROW = RowLayout("queue_event", [
    ("event_id", "int"), ("op", "str"), ("flags", "int"), ("dependency_strategy", "str"),
    ("submission_id", "int"), ("command_buffer_id", "int"), ("allocation_id", "int"),
    ("physical_device_ordinal", "int"), ("queue_ordinal", "int"), ("stream_id", "int"),
    ("host_time_ns", "int"), ("ready_host_time_ns", "int"),
    ("host_time_domain", "=iree_host_time_ns"),
    ("wait_count", "int"), ("signal_count", "int"), ("barrier_count", "int"),
    ("operation_count", "int"), ("payload_length", "int"),
])

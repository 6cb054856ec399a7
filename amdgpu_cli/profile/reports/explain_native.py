"""`explain` in one native pass over the events: what the command line runs first.

`report_file(path, options)` runs `_explain.c`'s pass through `projection_native.passes` (the
metadata view and, without `--filter`, the events in the same walk): each record goes to summary's
reducer (the health counts and every check IREE's summary pass makes), to the dispatch projection
(its tables and the top dispatches), and to explain's own reductions (queue-operation counts, the
header device of each dispatch chunk, the memory balances' high-water marks and pool waits). The
rows are composed by `explain_rows.compose`, as for the exact walk; nothing here needs numpy.

It returns None, and the caller runs the exact walk (`explain.report`), wherever the projection's
pass would (native module off, metadata broken, a torn record, missing metadata, a total past its
limit), when a queue event names a queue the metadata lacks, when a memory balance's totals pass
2**64 - 1, and when more than 64 devices appear in memory events or dispatch chunks: that walk
gives IREE's message.

Source: IREE `tooling/profile/explain.c`.
"""

from __future__ import annotations

from amdgpu_cli.profile.names import U64_MAX
from amdgpu_cli.profile.native import native_module
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reports import projection_native
from amdgpu_cli.profile.reports.aggregates import DISPATCH
from amdgpu_cli.profile.reports.explain_rows import (PRESSURE, Dispatches, Health, Memory,
                                                     QueueOperations, compose,
                                                     memory_pressure_row, top_dispatch_row)
from amdgpu_cli.profile.reports.projection_native import Pass
from amdgpu_cli.profile.reports.summary_native import session_end

# The projection tables explain reads: per function (both domains) and per device submission.
EXPLAIN_TABLES = projection_native.FUNCTION_TABLES + (projection_native._DEVICE_SUBMISSION,)


def report_file(path: str, options: ReportOptions) -> list[dict] | None:
    """The `explain` rows of the bundle at `path`, or None when the exact walk must run."""
    if not projection_native.eligible(DISPATCH, options):
        return None
    ffi, lib = native_module()
    e = ffi.new("explain_t*")
    try:
        p = projection_native.passes(path, DISPATCH, options, ffi.addressof(e[0], "projection"),
                                     scan=lambda *args: lib.explain_scan(*args, e),
                                     run=lambda *args: lib.explain_run(*args, e),
                                     tables=EXPLAIN_TABLES)
        if p is None:
            return None
        queues = e.event_queues
        if any(tuple(queues.rows[3 * i:3 * i + 3]) not in p.model.queues
               for i in range(queues.count)):
            return None
        return compose(_health(e.totals, p.view),
                       Dispatches(p, list(e.dispatch_chunk_devices[0:e.dispatch_chunk_device_count])),
                       _queue_operations(e), _memory(e), _top_dispatches(e.projection, p))
    finally:
        lib.explain_free(e)


def _health(t, view) -> Health:
    first = session_end(view.data, t.first_non_ok_offset) if t.non_ok_session_end_records else None
    return Health(file_records=t.file_records, chunk_records=t.chunk_records,
                   unknown_records=t.unknown_records, unknown_chunks=t.unknown_chunks,
                   truncated_chunks=t.truncated_chunks, dropped_records=t.dropped_records & U64_MAX,
                   non_ok=t.non_ok_session_end_records, first_non_ok=first)


def _queue_operations(e) -> QueueOperations:
    return QueueOperations(events=e.queue_events, strategies=list(e.strategies),
                            counts=list(e.queue_type_counts), payload=list(e.queue_type_bytes))


def _memory(e) -> Memory:
    devices = [e.memory_devices[i] for i in range(e.memory_device_count)]
    rows = [memory_pressure_row(d.physical_device_ordinal,
                                [d.high_water_bytes[b] for b in range(len(PRESSURE))], d.pool_waits)
            for d in devices]
    return Memory(rows=rows, events=e.memory_events,
                   pool_waits=any(d.pool_waits for d in devices))


def _top_dispatches(state, p: Pass) -> list[dict]:
    """The kept dispatches of the domain explain ranks (host spans when no device event is
    valid), longest first; equal durations keep their slot order, as IREE's sort leaves them."""
    host = p.device_counts.valid == 0
    kept = list(state.top_host[0:state.top_host_count] if host
                else state.top_device[0:state.top_device_count])
    signed = (lambda d: d - (1 << 64) if d >= 1 << 63 else d) if host else (lambda d: d)
    kept.sort(key=lambda t: -signed(t.duration))
    rows = []
    for rank, t in enumerate(kept, 1):
        pdo = t.physical_device_ordinal
        fields = {"event_id": t.event_id, "submission_id": t.submission_id,
                  "physical_device_ordinal": pdo, "queue_ordinal": t.queue_ordinal,
                  "stream_id": t.stream_id, "command_buffer_id": t.command_buffer_id,
                  "command_index": t.command_index, "tile_count": t.tile_count,
                  "tile_duration_sum_ns": t.tile_duration_sum_ns}
        key = p.model.functions[(t.executable_id, t.function_ordinal)].key(pdo)
        rows.append(top_dispatch_row(rank, host, fields, key, signed(t.duration), p.model))
    return rows

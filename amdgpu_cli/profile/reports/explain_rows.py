"""explain's rows from its parts, without numpy: what both its paths compose.

The parts are `Health` (IREE's summary pass counts), `Dispatches` (the dispatch projection's
aggregates: per-function and per-submission tables, from `projection.Projection` in numpy columns
or from the native pass in lists), `QueueOperations` and `Memory`; `compose` makes every row
from them: summary, devices, queues (the busy/gap analysis over each queue's submissions), top
functions, the top dispatches the caller ranked, queue operations, memory pressure, hints.
`explain.py` computes the parts by walking the whole bundle, `explain_native.py` by one native
pass. See explain.py for the rows and IREE's rules.

Source: IREE `tooling/profile/explain.c`.
"""

from __future__ import annotations

from amdgpu_cli.profile.clock import ClockFit
from amdgpu_cli.profile.jsonl import Fixed
from amdgpu_cli.profile.model import Model, span_ticks
from amdgpu_cli.profile.names import U64_MAX
from amdgpu_cli.profile.reports.aggregates import Aggregates, values

TOP_FUNCTIONS = 10
TOP_DISPATCHES = 8

DEVICE_TIMING = "device_dispatch_event"
HOST_TIMING = "host_execution_event"

# The device balances explain reports, as memory.py names them, and explain's row keys.
PRESSURE = [("slab", "slab_high_water_bytes"),
            ("pool_reserved", "pool_reserved_high_water_bytes"),
            ("pool_materialized", "pool_materialized_high_water_bytes"),
            ("queue_inflight", "queue_inflight_high_water_bytes"),
            ("buffer", "buffer_high_water_bytes")]

HINTS = {
    "unknown": ("warning", "format", "unknown records or chunks were present; newer producer data "
                "may be missing from this analysis"),
    "truncated": ("error", "format", "truncated chunks were present; timing and lifecycle totals "
                  "may be incomplete"),
    "invalid_dispatch": ("warning", "dispatch", "some dispatch events had missing or reversed "
                         "timestamps and were excluded from timing totals"),
    "invalid_host": ("warning", "dispatch", "some host execution dispatch spans had missing or "
                     "reversed timestamps and were excluded from timing totals"),
    "no_queue_events": ("info", "queue", "queue event records are absent; queue dependency and gap "
                        "hints are limited to dispatch timestamp intervals"),
    "pool_waits": ("warning", "memory", "pool wait events were observed; allocation readiness "
                   "affected the captured queue schedule"),
    "host_fallback": ("info", "dispatch", "device dispatch events are absent; top dispatch "
                      "analysis is using host execution dispatch spans"),
    "no_dispatches": ("info", "dispatch", "no valid dispatch events were captured; enable queue "
                      "profiling on a producer that emits device timestamps"),
}
SESSION_HINT_MESSAGE = "profiling session end records reported non-OK status"


def compose(health: "Health", dispatches: "Dispatches", queue_ops: "QueueOperations",
            memory: "Memory", top_dispatches: list[dict]) -> list[dict]:
    """explain's rows from its parts (this module's exact walk, or explain_native's pass)."""
    model = dispatches.p.model
    devices = list(model.devices)
    for pdo in dispatches.chunk_devices:
        if pdo not in model.devices and pdo not in devices:
            devices.append(pdo)

    rows = [_summary_row(health, dispatches, queue_ops, memory)]
    rows += [_device_row(dispatches, pdo) for pdo in devices]
    rows += [_queue_row(dispatches, key, queue_ops.events) for key in model.queues]
    rows += _top_function_rows(dispatches)
    rows += top_dispatches
    rows.append(queue_ops.row())
    rows += memory.rows
    rows += _hint_rows(health, dispatches, queue_ops, memory)
    return rows



class Health:
    """Bundle health: IREE's summary pass counts (and the first non-OK session end's ids)."""

    def __init__(self, file_records: int, chunk_records: int, unknown_records: int,
                 unknown_chunks: int, truncated_chunks: int, dropped_records: int, non_ok: int,
                 first_non_ok: dict | None):
        self.file_records, self.chunk_records = file_records, chunk_records
        self.unknown_records, self.unknown_chunks = unknown_records, unknown_chunks
        self.truncated_chunks, self.dropped_records = truncated_chunks, dropped_records
        self.non_ok, self.first_non_ok = non_ok, first_non_ok



class Dispatches:
    """The dispatch projection's aggregates (`p`: per-function and per-submission tables, in
    numpy or list columns) and the header device of every dispatch chunk, in file order."""

    def __init__(self, p: Aggregates, chunk_devices: list[int]):
        self.p = p
        self.chunk_devices = chunk_devices

    @property
    def uses_host_timing(self) -> bool:
        return self.p.device_counts.valid == 0 and self.p.host_counts.valid != 0



class QueueOperations:
    """Counts over every queue event: `strategies` (none, inline, device_barrier,
    software_defer), `counts` and `payload` per queue event type 0..11 (payload wrapping like
    IREE's counters)."""

    def __init__(self, events: int, strategies: list[int], counts: list[int], payload: list[int]):
        self.events, self.strategies, self.counts, self.payload = events, strategies, counts, payload

    def row(self) -> dict:
        s, c, p = self.strategies, self.counts, self.payload
        return {"type": "explain_queue_operations", "events": self.events,
                "strategy_none": s[0], "strategy_inline": s[1], "strategy_device_barrier": s[2],
                "strategy_software_defer": s[3], "copy_bytes": p[4], "fill_bytes": p[5],
                "update_bytes": p[6], "read_bytes": p[7], "write_bytes": p[8],
                "dispatches": c[2], "executes": c[3], "allocas": c[9], "deallocas": c[10],
                "host_calls": c[11]}



class Memory:
    """The memory pressure rows (one per device in memory events), the event count, and whether
    any pool wait was seen."""

    def __init__(self, rows: list[dict], events: int, pool_waits: bool):
        self.rows, self.events, self.pool_waits = rows, events, pool_waits



def memory_pressure_row(pdo: int, high_water: list[int], pool_waits: int) -> dict:
    """A device's `explain_memory_pressure` row: high-water bytes in PRESSURE order."""
    row = {"type": "explain_memory_pressure", "physical_device_ordinal": pdo}
    for (_, key), value in zip(PRESSURE, high_water):
        row[key] = value
    row["pool_waits"] = pool_waits
    return row



# --- rows -----------------------------------------------------------------------------------------


def _summary_row(health: Health, dispatches: Dispatches, queue_ops: QueueOperations,
                 memory: Memory) -> dict:
    p = dispatches.p
    model, d, h = p.model, p.device_counts, p.host_counts
    row = {"type": "explain_summary", "file_records": health.file_records,
           "chunk_records": health.chunk_records, "unknown_records": health.unknown_records,
           "unknown_chunks": health.unknown_chunks, "truncated_chunks": health.truncated_chunks,
           "dropped_records": health.dropped_records,
           "non_ok_session_end_records": health.non_ok,
           "dispatches": d.matched, "valid_dispatches": d.valid,
           "invalid_dispatches": d.invalid, "host_dispatches": h.matched,
           "valid_host_dispatches": h.valid, "invalid_host_dispatches": h.invalid,
           "queues": len(model.queues), "queue_events": queue_ops.events,
           "command_buffers": len(model.command_buffers),
           "command_operations": len(model.command_operations),
           "memory_events": memory.events}
    if health.first_non_ok:
        f = health.first_non_ok
        row.update({"first_non_ok_session_id": f["session_id"],
                    "first_non_ok_stream_id": f["stream_id"],
                    "first_non_ok_event_id": f["event_id"],
                    "first_non_ok_status_code": f["status_code"],
                    "first_non_ok_status": f["status"]})
    return row


def _device_row(dispatches: Dispatches, pdo: int) -> dict:
    p = dispatches.p
    fit = p.model.clock_fit(pdo)
    clock = p.model.devices.get(pdo)
    subs = p.submission_groups
    mine = [(earliest, latest) for device, valid, earliest, latest in zip(
        values(subs["pdo"]), values(subs["valid"]), values(subs["earliest"]),
        values(subs["latest"])) if device == pdo and valid != 0]
    if mine:
        visible = span_ticks(min(e for e, _ in mine), max(lat for _, lat in mine))
    else:
        visible = span_ticks(U64_MAX, 0)
    f = p.dispatch_groups
    total = sum(t for device, t in zip(values(f["pdo"]), values(f["total"])) if device == pdo)
    total_ns = fit.ticks_to_ns(total) if fit is not None and total != 0 else None
    return {"type": "explain_device", "physical_device_ordinal": pdo,
            "clock_fit_available": fit is not None,
            "clock_samples": clock.sample_count if clock is not None else 0,
            "visible_span_ticks": visible, "active_dispatch_ticks": total,
            "active_over_visible": Fixed(total / visible if visible > 0.0 else 0.0, 6),
            "tick_frequency_hz": fit.tick_frequency_hz if fit is not None else 0.0,
            "visible_span_ns": visible * fit.ns_per_tick if fit is not None else 0.0,
            "active_dispatch_time_ns_available": total_ns is not None,
            "active_dispatch_ns": total_ns if total_ns is not None else 0}


def _queue_row(dispatches: Dispatches, key: tuple[int, int, int], queue_events: int) -> dict:
    subs = dispatches.p.submission_groups
    mine = [g for g, group in enumerate(zip(values(subs["pdo"]), values(subs["queue"]),
                                            values(subs["stream"]))) if group == key]
    valid, invalid, totals = values(subs["valid"]), values(subs["invalid"]), values(subs["total"])
    earliest, latest = values(subs["earliest"]), values(subs["latest"])
    spans = sorted((earliest[g], latest[g]) for g in mine if valid[g] != 0)
    busy, gaps, gap_total, gap_max = _merged(spans)
    total = sum(totals[g] for g in mine)
    pdo, queue, stream = key
    fit = dispatches.p.model.clock_fit(pdo)
    ns = fit.ns_per_tick if fit is not None else 0.0
    total_ns = fit.ticks_to_ns(total) if fit is not None and spans else None
    gap_ok = queue_events != 0
    return {"type": "explain_queue", "physical_device_ordinal": pdo, "queue_ordinal": queue,
            "stream_id": stream, "submissions": len(mine), "valid_submissions": len(spans),
            "invalid_submissions": sum(1 for g in mine if invalid[g] != 0),
            "busy_ticks": busy, "total_dispatch_ticks": total,
            "clock_fit_available": fit is not None,
            "busy_ns": busy * ns if fit is not None else 0.0,
            "total_dispatch_time_ns_available": total_ns is not None,
            "total_dispatch_ns": total_ns if total_ns is not None else 0,
            "gap_analysis_available": gap_ok, "gaps": gaps if gap_ok else 0,
            "total_gap_ticks": gap_total if gap_ok else 0.0,
            "max_gap_ticks": gap_max if gap_ok else 0.0,
            "total_gap_ns": gap_total * ns if gap_ok and fit is not None else 0.0,
            "max_gap_ns": gap_max * ns if gap_ok and fit is not None else 0.0}


def _merged(spans: list[tuple[int, int]]) -> tuple[float, int, float, float]:
    """(busy, gaps, total gap, longest gap) of [start, end] spans in (start, end) order: each
    merged run and each gap between runs is added, converted to a double, in order (IREE's
    running sums); a span starting after the end reached so far opens a gap."""
    busy = gap_total = 0.0
    gaps = gap_max = 0
    run_start = reach = None
    for start, end in spans:
        if reach is None:
            run_start, reach = start, end
        elif start > reach:
            busy += float(reach - run_start)
            gaps += 1
            gap_total += float(start - reach)
            gap_max = max(gap_max, start - reach)
            run_start, reach = start, end
        else:
            reach = max(reach, end)
    if reach is not None:
        busy += float(reach - run_start)
    return busy, gaps, gap_total, float(gap_max)


def _top_function_rows(dispatches: Dispatches) -> list[dict]:
    p = dispatches.p
    ranks = []
    if dispatches.uses_host_timing:
        f = p.host_groups
        for g in range(len(f)):
            valid = int(f["valid"][g])
            if valid == 0:
                continue
            total = int(f["total"][g])
            ranks.append((float(total), {
                "g": g, "table": f, "total_ticks": 0, "max_ticks": 0,
                "timing_source": HOST_TIMING, "duration_ns_available": True,
                "total_ns": total, "avg_ns": float(f["mean"][g]),
                "max_ns": int(f["max"][g]), "tiles": int(f["tile_count"][g]),
                "tile_ns": int(f["tile_duration_sum_ns"][g])}))
    else:
        f = p.dispatch_groups
        for g in range(len(f)):
            valid = int(f["valid"][g])
            if valid == 0:
                continue
            pdo, total, maximum = int(f["pdo"][g]), int(f["total"][g]), int(f["max"][g])
            fit: ClockFit | None = p.model.clock_fit(pdo)
            max_ns = total_ns = 0
            available = False
            avg = 0.0
            if fit is not None:
                scaled_max = fit.ticks_to_ns(maximum)
                if scaled_max is not None:
                    max_ns = scaled_max
                    scaled_total = fit.ticks_to_ns(total)
                    if scaled_total is not None:
                        total_ns, available = scaled_total, True
                        avg = float(f["mean"][g]) * fit.ns_per_tick  # IREE's running mean
            ranks.append((float(total_ns) if available else float(total), {
                "g": g, "table": f, "total_ticks": total, "max_ticks": maximum,
                "timing_source": DEVICE_TIMING, "duration_ns_available": available,
                "total_ns": total_ns, "avg_ns": avg, "max_ns": max_ns, "tiles": 0, "tile_ns": 0}))
    ranks.sort(key=lambda t: -t[0])  # stable: equal scores keep first-seen order
    out = []
    for rank, (_, r) in enumerate(ranks[:TOP_FUNCTIONS], 1):
        f, g = r["table"], r["g"]
        count, valid = int(f["count"][g]), int(f["valid"][g])
        out.append({"type": "explain_top_function", "rank": rank,
                    "physical_device_ordinal": int(f["pdo"][g]),
                    "executable_id": int(f["executable_id"][g]),
                    "function_ordinal": int(f["function_ordinal"][g]), "key": f["key"][g],
                    "dispatches": count, "valid": valid, "invalid": count - valid,
                    "total_ticks": r["total_ticks"], "max_ticks": r["max_ticks"],
                    "timing_source": r["timing_source"],
                    "duration_ns_available": r["duration_ns_available"],
                    "total_ns": r["total_ns"], "avg_ns": r["avg_ns"], "max_ns": r["max_ns"],
                    "total_tile_count": r["tiles"], "total_tile_duration_sum_ns": r["tile_ns"]})
    return out



def top_dispatch_row(rank: int, host: bool, fields: dict, key: str, duration: int,
                     model: Model) -> dict:
    """One `explain_top_dispatch` row: `fields` holds the event's ids (event, submission, device,
    queue, stream; for host spans also command buffer, command index and tiles)."""
    row = {"type": "explain_top_dispatch", "rank": rank}
    for name in ("event_id", "submission_id", "physical_device_ordinal", "queue_ordinal",
                 "stream_id"):
        row[name] = fields[name]
    if host:
        row.update(command_buffer_id=fields["command_buffer_id"],
                   command_index=fields["command_index"])
    row["key"] = key
    if host:
        row.update(timing_source=HOST_TIMING, duration_ticks=0, duration_ns_available=True,
                   duration_ns=duration, tile_count=fields["tile_count"],
                   tile_duration_sum_ns=fields["tile_duration_sum_ns"])
    else:
        fit = model.clock_fit(fields["physical_device_ordinal"])
        ns = fit.ticks_to_ns(duration) if fit is not None else None
        row.update(timing_source=DEVICE_TIMING, duration_ticks=duration,
                   duration_ns_available=ns is not None,
                   duration_ns=ns if ns is not None else 0, tile_count=0,
                   tile_duration_sum_ns=0)
    return row



def _hint(name: str) -> dict:
    severity, category, message = HINTS[name]
    return {"type": "explain_hint", "severity": severity, "category": category, "message": message}


def _hint_rows(health: Health, dispatches: Dispatches, queue_ops: QueueOperations,
               memory: Memory) -> list[dict]:
    d, h = dispatches.p.device_counts, dispatches.p.host_counts
    out = []
    if health.unknown_records or health.unknown_chunks:
        out.append(_hint("unknown"))
    if health.truncated_chunks:
        out.append(_hint("truncated"))
    if health.non_ok:
        f = health.first_non_ok
        out.append({"type": "explain_hint", "severity": "error", "category": "session",
                    "message": SESSION_HINT_MESSAGE, "non_ok_session_end_records": health.non_ok,
                    "first_non_ok_session_id": f["session_id"],
                    "first_non_ok_stream_id": f["stream_id"],
                    "first_non_ok_event_id": f["event_id"],
                    "first_non_ok_status_code": f["status_code"],
                    "first_non_ok_status": f["status"]})
    if d.invalid:
        out.append(_hint("invalid_dispatch"))
    if h.invalid:
        out.append(_hint("invalid_host"))
    if queue_ops.events == 0:
        out.append(_hint("no_queue_events"))
    if memory.pool_waits:
        out.append(_hint("pool_waits"))
    if dispatches.uses_host_timing:
        out.append(_hint("host_fallback"))
    elif d.valid == 0:
        out.append(_hint("no_dispatches"))
    return out

"""`explain`: an opinionated bottleneck view of one bundle, as iree-profile's `explain` computes it.

Rows, in order (the JSONL rows iree-profile prints, keyed by `type`):

- `explain_summary`: bundle health (records, chunks, unknown/truncated chunks, dropped records,
  non-OK session ends) and coverage (dispatches matched by `--filter`/`--id`, host dispatch spans,
  queues, queue events, command buffers/operations, memory events);
- `explain_device` per device the metadata model knows (devices with clock samples in file order,
  then devices first seen as the header of a dispatch-events chunk): visible span (earliest valid
  dispatch start to latest end over the device's queue submissions), summed active dispatch time,
  their ratio, and nanoseconds through the first/last clock fit;
- `explain_queue` per queue record: submissions (per (queue, submission id) aggregates of matched
  dispatches), busy time = union of each submission's [earliest start, latest end] interval, and
  the gaps between the merged intervals (reported only when the bundle has queue events);
- `explain_top_function` (up to 10) ranked by total time: device dispatch events when any matched
  dispatch is valid, otherwise host-execution dispatch spans (local CPU devices);
- `explain_top_dispatch` (up to 8) the longest individual dispatches, same timing source;
- `explain_queue_operations`: dependency strategy counts, transfer payload bytes and operation
  counts over every queue event;
- `explain_memory_pressure` per device seen in memory events: high-water bytes of the slab, pool
  reservation, pool materialization, queue in-flight and buffer lifecycles, and pool waits;
- `explain_hint` rows: format (unknown or truncated data), session (non-OK end), dispatch (invalid
  timestamps; host fallback; nothing captured), queue (no queue events), memory (pool waits).

`--filter` (a glob over function keys) and `--id` (a dispatch event id) select the device and host
dispatches; queue and memory events are always taken whole.

Failures follow iree-profile: every typed family is walked (torn records and inconsistent
variable-length records are DATA_LOSS), the metadata model's ordering rules apply, every
id-matching dispatch (and host dispatch span) must resolve to queue and function metadata, every
queue event to queue metadata, and counters that would overflow are OUT_OF_RANGE. When several
records are bad, the first in file order is reported.

It is composed from the other reports, as IREE's explain is: the dispatch projection
(`projection.Projection`, DISPATCH mode) matches the device dispatches and host dispatch spans and
aggregates them per function and per queue submission, and the memory accounting
(`memory.Accounting`, device rows) gives the balances' high-water marks and pool waits. What is
explain's own: the health counts, the queue busy/gap analysis, the top-N tables (IREE's
replacement order, replayed only over the few events that can enter them), the queue operation
counts, the hints, and the host span totals IREE refuses (naming the function or command buffer
execution whose total fails). This module computes the parts by walking the whole bundle;
`explain_rows.compose` (no numpy) makes the rows from them, as it does for explain_native's pass.

Sources: IREE `tooling/profile/explain.c` (and the `dispatch.c`, `queue_query.c`, `memory.c`,
`summary.c` aggregations it drives); ../shared/reference/ireeprof.md sections 3, 4.4 and 7.
"""

from __future__ import annotations

import numpy as np

from amdgpu_cli.errors import BundleFormatError, MissingMetadataError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.clock import INT64_MAX
from amdgpu_cli.profile.model import Model
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports.memory import DEVICE_BALANCES, POOL_WAIT, Accounting, balances
from amdgpu_cli.profile.reports.projection import DISPATCH, Events, Projection
from amdgpu_cli.profile.reports.explain_rows import (PRESSURE, TOP_DISPATCHES, Dispatches, Health,
                                                     Memory, QueueOperations, compose,
                                                     memory_pressure_row, top_dispatch_row)
from amdgpu_cli.profile.reports.toolkit import exact_sum, group_ids

U64_MAX = schema.U64_MAX
RT = schema.RecordType

def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> list[dict]:
    """All explain rows; raises (before any row) when the bundle cannot be explained."""
    health = _health(bundle)
    projection, match_failure = Projection.match(bundle, DISPATCH, options)
    model = projection.model

    # The event families are independent; each reports its first failure, and the earliest in
    # file order wins, as in IREE's single event pass.
    failures: list[BundleFormatError] = []

    def attempt(fn, *args):
        try:
            return fn(*args)
        except BundleFormatError as e:
            failures.append(e)
            return None

    # The memory accounting runs first, before the projection's tables exist: its peak memory is
    # the largest. The order does not change which failure is reported.
    memory = attempt(_memory_pressure, bundle)
    queue_ops = attempt(_queue_operations, bundle, model)
    dispatches = attempt(_dispatches, bundle, projection, match_failure)
    if failures:
        raise min(failures, key=lambda e: (e.record_index if e.record_index is not None else -1))
    return compose(health, dispatches, queue_ops, memory, _top_dispatch_rows(dispatches))


# --- small helpers --------------------------------------------------------------------------------


# The names tests/profile/test_explain.py checks grouping and balances under.
_groups = group_ids


def _clamped_running(deltas: list[int], codes: np.ndarray) -> np.ndarray:
    """Per group, the running value of `w = max(0, w + delta)` after each step (w starts at 0):
    memory.py's clamped byte balance, a positive delta opening and a negative one closing."""
    if not deltas:
        return np.zeros(0, object)
    d = np.array(deltas, dtype=object)
    length = np.abs(d)
    exact = int(length.sum()) >= 1 << 62
    walk = balances(codes, int(codes.max()) + 1, (d > 0).astype(bool),
                    length.astype(np.uint64), exact, prev=True)
    return np.maximum(walk.prev_bytes + (d if exact else d.astype(np.int64)), 0)


def _top_slots(durations: np.ndarray, k: int = TOP_DISPATCHES) -> list[int]:
    """IREE's top-k table: indices of the kept events, longest first.

    IREE keeps the first k events, then lets each later event replace the first slot holding the
    current minimum when it is strictly longer; the table is finally sorted by duration, longest
    first, keeping slot order among equal durations. Only events longer than the k-th longest of
    everything before their block can ever enter, so the replay runs over those alone.
    """
    n = len(durations)
    if n == 0:
        return []
    block = 4096
    candidate = np.zeros(n, bool)
    candidate[:k] = True
    kept = durations[:0]
    for start in range(0, n, block):
        chunk = durations[start:start + block]
        if len(kept) >= k:
            candidate[start:start + len(chunk)] |= chunk > kept.min()
        else:
            candidate[start:start + len(chunk)] = True
        merged = np.concatenate([kept, chunk])
        kept = np.sort(merged)[-k:] if len(merged) > k else merged
    slots: list[int] = []
    values: list[int] = []
    for i, d in zip(np.flatnonzero(candidate).tolist(), durations[candidate].tolist()):
        if len(slots) < k:
            slots.append(i)
            values.append(d)
            continue
        low = min(values)
        if d <= low:
            continue
        t = values.index(low)
        slots[t], values[t] = i, d
    order = sorted(range(len(slots)), key=lambda s: -values[s])  # stable, as glibc's qsort is here
    return [slots[s] for s in order]


def _overflow(message: str, record_index: int | None) -> BundleFormatError:
    return BundleFormatError(message, status="OUT_OF_RANGE", record_index=record_index)


# --- health (IREE's summary pass) -----------------------------------------------------------------


def _health(bundle: Bundle) -> Health:
    """Record counts, plus the checks IREE's summary pass makes while counting every family."""
    bundle.check()
    for ct in schema.CONTENT_TYPES[1:]:
        if ct.kind == schema.ContentKind.FIXED:
            bundle.locate(ct.suffix)  # the walk's checks, without copying the records
        else:
            bundle.typed(ct.suffix, strict=True)
    _check_summary_totals(bundle)

    r = bundle.records
    rt = r["record_type"]
    is_chunk = rt == RT.CHUNK
    truncated = is_chunk & ((r["chunk_flags"] & np.uint64(schema.CHUNK_FLAG_TRUNCATED)) != 0)
    ends = np.flatnonzero((rt == RT.SESSION_END) & (r["session_status_code"] != 0))
    first = None
    if len(ends):
        e = r[ends[0]]
        code = int(e["session_status_code"])
        first = {"session_id": int(e["session_id"]), "stream_id": int(e["stream_id"]),
                 "event_id": int(e["event_id"]), "status_code": code,
                 "status": schema.status_name(code)}
    return Health(
        file_records=len(r),
        chunk_records=int(np.count_nonzero(is_chunk)),
        unknown_records=int(np.count_nonzero((rt < RT.SESSION_BEGIN) | (rt > RT.SESSION_END))),
        # the session content type is no chunk family either
        unknown_chunks=int(np.count_nonzero(is_chunk & (r["content_index"] <= 0))),
        truncated_chunks=int(np.count_nonzero(truncated)),
        dropped_records=exact_sum(r["dropped_record_count"][truncated]) & U64_MAX,
        non_ok=len(ends),
        first_non_ok=first,
    )


def _check_summary_totals(bundle: Bundle) -> None:
    """The running totals IREE's summary keeps must fit their unsigned 64-bit counters."""
    d = bundle.locate("dispatch-events")
    start, end = d.columns("start_tick", "end_tick").values()
    valid = (start != 0) & (end != 0) & (end >= start)
    ticks = np.where(valid, end - start, np.uint64(0))
    if exact_sum(ticks) > U64_MAX:
        pdo = bundle.records["physical_device_ordinal"][d.chunk]
        totals: dict[int, int] = {}
        for i, (p, t) in enumerate(zip(pdo.tolist(), ticks.tolist())):
            totals[p] = totals.get(p, 0) + t
            if totals[p] > U64_MAX:
                raise _overflow(f"device summary dispatch tick total overflow device={p}",
                                int(d.chunk[i]))
    for suffix, start, end, what in (
            ("host-execution-events", "start_host_time_ns", "end_host_time_ns",
             "host execution duration"),
            ("command-region-events", "start_host_time_ns", "end_host_time_ns",
             "command region duration")):
        typed = bundle.locate(suffix)
        s, e = typed.columns(start, end).values()
        ok = (s >= 0) & (e >= s)
        spans = np.where(ok, e - np.where(ok, s, 0), 0).astype(np.uint64)
        if exact_sum(spans) > U64_MAX:
            running = np.cumsum(spans.astype(object))
            i = int(np.argmax(running > U64_MAX))
            raise _overflow(f"profile {what} counter overflowed", int(typed.chunk[i]))


# --- dispatches (the dispatch projection) ---------------------------------------------------------


def _dispatches(bundle: Bundle, p: Projection, match_failure) -> Dispatches:
    """The projection's tables, once no matched event fails: the first in file order of the
    projection's metadata failures and the host spans IREE's totals refuse is raised."""
    candidates = [c for c in (match_failure, _host_total_failure(p.host)) if c is not None]
    if candidates:
        order, error = min(candidates, key=lambda c: c[0])
        error.record_index = order[0]
        raise error
    p.aggregate()
    chunk_devices = bundle.records["physical_device_ordinal"][
        bundle.chunk_indices("dispatch-events")]
    return Dispatches(p, [int(pdo) for pdo in dict.fromkeys(chunk_devices.tolist())])


def _host_total_failure(host: Events):
    """IREE adds each valid host span, in file order, into its function's totals and then (with a
    command buffer) its command buffer execution's: int64 duration and tile ns, uint64 tile count.
    A negative tile sum (a function total) or an overflow fails, naming the function or the
    execution. The first span refused, as ((record, 1, row), error), or None."""
    rows, valid = host.rows, host.valid
    terms = (host.duration, rows["tile_duration_sum_ns"], rows["tile_count"])
    negative = np.flatnonzero(valid & (terms[1] < 0))
    end = int(negative[0]) if len(negative) else len(host)  # spans before the first negative
    k, scope = (end, "function") if len(negative) else (None, None)
    if any(exact_sum(t[:end][valid[:end]]) > limit for t, limit in zip(terms, _HOST_LIMITS)):
        k, scope = _first_total_overflow(host, terms, end) or (k, scope)
    if k is None:
        return None
    chunk = int(host.chunk[k])
    if scope == "function":
        message = (f"host dispatch aggregate total overflow device={int(host.pdo[k])} "
                   f"executable={int(rows['executable_id'][k])} "
                   f"function={int(rows['function_ordinal'][k])}")
    else:
        message = (f"host command aggregate total overflow "
                   f"command_buffer={int(rows['command_buffer_id'][k])} "
                   f"submission={int(rows['submission_id'][k])}")
    return (chunk, 1, rows.position(k)), _overflow(message, chunk)


_HOST_LIMITS = (INT64_MAX, INT64_MAX, U64_MAX)


def _first_total_overflow(host: Events, terms, end: int) -> tuple[int, str] | None:
    """The plain recurrence over the valid spans before `end`: (span, scope) of the first
    overflowing total, or None."""
    rows = host.rows
    cb = rows["command_buffer_id"]
    executions, _ = group_ids(cb, rows["submission_id"], host.pdo, host.queue, host.stream)
    totals: dict[tuple, list[int]] = {}
    for k in np.flatnonzero(host.valid[:end]).tolist():
        groups = [("function", int(host.key_index[k]))]
        if int(cb[k]) != 0:
            groups.append(("execution", int(executions[k])))
        for group in groups:
            t = totals.setdefault(group, [0, 0, 0])
            for i, term in enumerate(terms):
                t[i] += int(term[k])
            if any(x > limit for x, limit in zip(t, _HOST_LIMITS)):
                return k, group[0]
    return None


# --- queue events ---------------------------------------------------------------------------------


def _queue_operations(bundle: Bundle, model: Model) -> QueueOperations:
    q = bundle.locate("queue-events")
    rows = q.columns("physical_device_ordinal", "queue_ordinal", "stream_id", "submission_id",
                     "type", "payload_length", "dependency_strategy")
    pdo, queue, stream = rows["physical_device_ordinal"], rows["queue_ordinal"], rows["stream_id"]
    codes, firsts = group_ids(pdo, queue, stream)
    missing = [g for g, i in enumerate(firsts.tolist())
               if (int(pdo[i]), int(queue[i]), int(stream[i])) not in model.queues]
    if missing:
        i = int(np.flatnonzero(np.isin(codes, missing))[0])
        raise MissingMetadataError(
            f"queue event references missing queue metadata device={int(pdo[i])} "
            f"queue={int(queue[i])} stream={int(stream[i])} "
            f"submission={int(rows['submission_id'][i])}", record_index=int(q.chunk[i]))
    types = rows["type"]
    counts = np.bincount(types[types <= 11], minlength=12)
    payload = [int(rows["payload_length"][types == t].sum(dtype=np.uint64)) for t in range(12)]
    strategy = rows["dependency_strategy"]
    strategies = np.bincount(strategy[strategy <= 3], minlength=4)
    return QueueOperations(events=len(q), strategies=[int(x) for x in strategies],
                            counts=[int(x) for x in counts], payload=payload)


# --- memory events (the memory accounting) --------------------------------------------------------


def _memory_pressure(bundle: Bundle) -> Memory:
    acc = Accounting(bundle, ReportOptions(), devices_only=True)
    if acc.overflow is not None:
        position, _ = acc.overflow
        raise _overflow(str(acc.overflow_error()), int(acc.chunk[position]))
    high_water = [acc.device_balances[DEVICE_BALANCES.index(name)].columns["high_water_bytes"]
                  for name, _ in PRESSURE]
    waits = acc.device_type_counts[:, POOL_WAIT]
    out = [memory_pressure_row(pdo, [int(column[d]) for column in high_water], int(waits[d]))
           for d, pdo in enumerate(acc.device_ordinals.tolist())]
    return Memory(rows=out, events=acc.total_events, pool_waits=bool(waits.any()))


def _top_dispatch_rows(dispatches: Dispatches) -> list[dict]:
    p = dispatches.p
    host = p.device_counts.valid == 0
    ev = p.host if host else p.device
    valid_rows = np.flatnonzero(ev.valid)
    out = []
    for rank, i in enumerate(_top_slots(ev.duration[valid_rows]), 1):
        j = int(valid_rows[i])
        r = ev.rows
        fields = {"event_id": int(r["event_id"][j]), "submission_id": int(r["submission_id"][j]),
                  "physical_device_ordinal": int(ev.pdo[j]), "queue_ordinal": int(ev.queue[j]),
                  "stream_id": int(ev.stream[j])}
        if host:
            fields.update(command_buffer_id=int(r["command_buffer_id"][j]),
                          command_index=int(r["command_index"][j]),
                          tile_count=int(r["tile_count"][j]),
                          tile_duration_sum_ns=int(r["tile_duration_sum_ns"][j]))
        out.append(top_dispatch_row(rank, host, fields, ev.keys[ev.key_index[j]],
                                    int(ev.duration[j]), p.model))
    return out



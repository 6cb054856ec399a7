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

Everything is computed over whole numpy columns: events are grouped with one sort per grouping,
running memory balances use the closed form of a clamped running sum, and the top-N dispatch
selection replays IREE's replacement order only over the few events that can enter it.

Sources: IREE `tooling/profile/explain.c` (and the `dispatch.c`, `queue_query.c`, `memory.c`,
`summary.c` aggregations it drives); ../shared/reference/ireeprof.md sections 3, 4.4 and 7.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from amdgpu_cli.errors import BundleFormatError, MissingMetadataError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.clock import ClockFit
from amdgpu_cli.profile.jsonl import Fixed
from amdgpu_cli.profile.model import Model, span_ticks
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle

U32_MAX = schema.U32_MAX
U64_MAX = schema.U64_MAX
INT64_MAX = (1 << 63) - 1
F = schema.Flags
RT = schema.RecordType

TOP_FUNCTIONS = 10
TOP_DISPATCHES = 8

DEVICE_TIMING = "device_dispatch_event"
HOST_TIMING = "host_execution_event"

QUEUE_DISPATCH = 2  # queue event type shared by host-execution spans
# memory event types
(SLAB_ACQUIRE, SLAB_RELEASE, POOL_RESERVE, POOL_MATERIALIZE, POOL_RELEASE, POOL_WAIT, QUEUE_ALLOCA,
 QUEUE_DEALLOCA, BUFFER_ALLOCATE, BUFFER_FREE, BUFFER_IMPORT, BUFFER_UNIMPORT) = range(1, 13)

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


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> list[dict]:
    """All explain rows; raises (before any row) when the bundle cannot be explained."""
    health = _health(bundle)
    model = Model.build(bundle)

    # The event families are independent; each reports its first failure, and the earliest in
    # file order wins, as in IREE's single event pass.
    failures: list[BundleFormatError] = []

    def attempt(fn, *args):
        try:
            return fn(*args)
        except BundleFormatError as e:
            failures.append(e)
            return None

    dispatches = attempt(_dispatch_pass, bundle, model, options)
    hosts = attempt(_host_pass, bundle, model, options)
    queue_ops = attempt(_queue_operations, bundle, model)
    memory = attempt(_memory_pressure, bundle)
    if failures:
        raise min(failures, key=lambda e: (e.record_index if e.record_index is not None else -1))

    devices = list(model.devices)
    for pdo in dispatches.chunk_devices:
        if pdo not in model.devices and pdo not in devices:
            devices.append(pdo)

    rows = [_summary_row(health, model, dispatches, hosts, queue_ops, memory)]
    rows += [_device_row(model, dispatches, pdo) for pdo in devices]
    rows += [_queue_row(model, dispatches, key, queue_ops.events) for key in model.queues]
    rows += _top_function_rows(model, dispatches, hosts)
    rows += _top_dispatch_rows(model, dispatches, hosts)
    rows.append(queue_ops.row())
    rows += memory.rows
    rows += _hint_rows(health, dispatches, hosts, queue_ops, memory)
    return rows


# --- small numpy helpers ------------------------------------------------------------------------


def _exact_sum(values: np.ndarray) -> int:
    """Exact sum of integers in [0, 2**64) (numpy's own uint64 sum wraps)."""
    if len(values) == 0:
        return 0
    v = values.astype(np.uint64, copy=False)
    hi = int((v >> np.uint64(32)).sum(dtype=np.uint64))
    lo = int((v & np.uint64(0xFFFFFFFF)).sum(dtype=np.uint64))
    return (hi << 32) + lo


def _groups(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups rows by equal column values: (group code per row, first row of each group).

    Groups are numbered in the order they first appear, the order IREE's aggregate tables grow in.
    """
    n = len(columns[0])
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.lexsort(columns[::-1])
    change = np.zeros(n, bool)
    change[0] = True
    for column in columns:
        c = column[order]
        change[1:] |= c[1:] != c[:-1]
    first = order[change]  # lexsort is stable: the earliest row of each group
    rank = np.empty(len(first), np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    codes = np.empty(n, np.int64)
    codes[order] = rank[np.cumsum(change) - 1]
    return codes, np.sort(first)


def _reduce(codes: np.ndarray, values: np.ndarray, n_groups: int, ufunc, fill, dtype) -> np.ndarray:
    """ufunc-reduction of values per group code (groups without values get `fill`)."""
    out = np.full(n_groups, fill, dtype)
    if len(codes):
        order = np.argsort(codes, kind="stable")
        c = codes[order]
        starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
        out[c[starts]] = ufunc.reduceat(values[order].astype(dtype, copy=False), starts)
    return out


def _id_mask(ids: np.ndarray, wanted: int) -> np.ndarray:
    if wanted < 0:
        return np.ones(len(ids), bool)
    if wanted > U64_MAX:
        return np.zeros(len(ids), bool)
    return ids == np.uint64(wanted)


def _clamped_running(deltas: list[int], codes: np.ndarray) -> np.ndarray:
    """Per group, the running value of `w = max(0, w + delta)` after each step (w starts at 0).

    That is IREE's byte/count balance on close (`current -= length`, clamped at zero). It has the
    closed form `w_k = s_k - min(0, min_{j<=k} s_j)` over the group's prefix sums `s`, which runs
    as numpy scans when every quantity fits in int64; otherwise the plain recurrence runs.
    """
    n = len(deltas)
    if n == 0:
        return np.zeros(0, object)
    bound = sum(abs(d) for d in deltas) if n < 4096 else None
    if bound is None:
        arr = np.array(deltas, dtype=object)
        bound = int(np.abs(arr).sum())
    n_groups = int(codes.max()) + 1
    if (n_groups + 1) * (2 * bound + 1) < (1 << 62):
        x = np.asarray(deltas, dtype=np.int64)
        order = np.argsort(codes, kind="stable")
        c = codes[order]
        s = np.cumsum(x[order])
        starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
        before = s[starts] - x[order][starts]          # prefix sum before each group begins
        sizes = np.diff(np.r_[starts, n])
        rel = s - np.repeat(before, sizes)             # prefix sums within the group
        dense = np.repeat(np.arange(len(starts), dtype=np.int64), sizes)
        k = 2 * bound + 1                              # later groups sit strictly below earlier
        running_min = np.minimum.accumulate(rel - dense * k) + dense * k
        w = rel - np.minimum(running_min, 0)
        out = np.empty(n, np.int64)
        out[order] = w
        return out
    state: dict[int, int] = {}
    out = np.empty(n, object)
    for i, (g, d) in enumerate(zip(codes.tolist(), deltas)):
        state[g] = max(0, state.get(g, 0) + d)
        out[i] = state[g]
    return out


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


@dataclass
class _Health:
    file_records: int
    chunk_records: int
    unknown_records: int
    unknown_chunks: int
    truncated_chunks: int
    dropped_records: int
    non_ok: int
    first_non_ok: dict | None


def _health(bundle: Bundle) -> _Health:
    """Record counts, plus the checks IREE's summary pass makes while counting every family."""
    bundle.check()
    for ct in schema.CONTENT_TYPES[1:]:
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
    return _Health(
        file_records=len(r),
        chunk_records=int(np.count_nonzero(is_chunk)),
        unknown_records=int(np.count_nonzero((rt < RT.SESSION_BEGIN) | (rt > RT.SESSION_END))),
        # the session content type is no chunk family either
        unknown_chunks=int(np.count_nonzero(is_chunk & (r["content_index"] <= 0))),
        truncated_chunks=int(np.count_nonzero(truncated)),
        dropped_records=_exact_sum(r["dropped_record_count"][truncated]) & U64_MAX,
        non_ok=len(ends),
        first_non_ok=first,
    )


def _check_summary_totals(bundle: Bundle) -> None:
    """The running totals IREE's summary keeps must fit their unsigned 64-bit counters."""
    d = bundle.typed("dispatch-events")
    rows = d.rows
    start, end = rows["start_tick"], rows["end_tick"]
    valid = (start != 0) & (end != 0) & (end >= start)
    ticks = np.where(valid, end - start, np.uint64(0))
    if _exact_sum(ticks) > U64_MAX:
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
        typed = bundle.typed(suffix)
        s, e = typed.rows[start], typed.rows[end]
        ok = (s >= 0) & (e >= s)
        spans = np.where(ok, e - np.where(ok, s, 0), 0).astype(np.uint64)
        if _exact_sum(spans) > U64_MAX:
            running = np.cumsum(spans.astype(object))
            i = int(np.argmax(running > U64_MAX))
            raise _overflow(f"profile {what} counter overflowed", int(typed.chunk[i]))


# --- device dispatch events -----------------------------------------------------------------------


@dataclass
class _Dispatches:
    chunk_devices: list[int]       # header device of every dispatch chunk, in file order
    matched: int
    valid: int
    invalid: int
    # per (device, executable, function) aggregate, in first-seen order
    functions: dict[str, np.ndarray]
    # per (device, queue, stream, submission) aggregate, in first-seen order
    submissions: dict[str, np.ndarray]
    top: list[dict]


def _match_events(model: Model, options: ReportOptions, rows, chunk, pdo, queue, stream,
                  what: str):
    """The events `--id` selects, grouped per (device, executable, function), and which groups
    `--filter` keeps. Every selected event's queue and every group's function must resolve, whether
    or not the filter then keeps it; failures are collected as (row, error) for file-order raising.
    """
    eid, fn = rows["executable_id"], rows["function_ordinal"]
    selected = np.flatnonzero(_id_mask(rows["event_id"], options.id))
    errors = []
    codes, firsts = _groups(pdo[selected], queue[selected], stream[selected])
    missing = [g for g, i in enumerate(firsts.tolist())
               if (int(pdo[selected[i]]), int(queue[selected[i]]), int(stream[selected[i]]))
               not in model.queues]
    if missing:
        i = int(selected[np.flatnonzero(np.isin(codes, missing))[0]])
        errors.append((i, MissingMetadataError(
            f"{what} references missing queue metadata device={int(pdo[i])} "
            f"queue={int(queue[i])} stream={int(stream[i])} "
            f"submission={int(rows['submission_id'][i])}", record_index=int(chunk[i]))))

    codes, firsts = _groups(pdo[selected], eid[selected], fn[selected])
    keep = np.zeros(len(firsts), bool)
    for g, i in enumerate(firsts.tolist()):
        j = int(selected[i])
        try:
            keep[g] = options.matches(model.dispatch_key(int(pdo[j]), int(eid[j]), int(fn[j]), what))
        except MissingMetadataError as e:
            e.record_index = int(chunk[j])  # the group's first row is its first failing event
            errors.append((j, e))
    return selected, codes, firsts, keep, errors


def _dispatch_pass(bundle: Bundle, model: Model, options: ReportOptions) -> _Dispatches:
    d = bundle.typed("dispatch-events")
    rows, chunk = d.rows, d.chunk
    header = bundle.records
    chunk_devices = header["physical_device_ordinal"][bundle.chunk_indices("dispatch-events")]
    pdo = header["physical_device_ordinal"][chunk]
    queue = header["queue_ordinal"][chunk]
    stream = header["stream_id"][chunk]
    eid, fn = rows["executable_id"], rows["function_ordinal"]

    selected, codes, firsts, keep, errors = _match_events(
        model, options, rows, chunk, pdo, queue, stream, "dispatch event")
    if errors:
        raise min(errors, key=lambda t: t[0])[1]

    row_keep = keep[codes]
    matched = selected[row_keep]
    codes = codes[row_keep]
    # renumber the kept groups densely, still in first-seen order
    kept = np.flatnonzero(keep)
    renumber = np.full(len(keep), -1, np.int64)
    renumber[kept] = np.arange(len(kept))
    codes = renumber[codes]
    first_rows = selected[firsts[kept]] if len(kept) else np.zeros(0, np.int64)

    start, end = rows["start_tick"][matched], rows["end_tick"][matched]
    valid = (start != 0) & (end != 0) & (end >= start)
    ticks = np.where(valid, end - start, np.uint64(0))
    n_functions = len(kept)
    functions = {
        "pdo": pdo[first_rows].astype(np.int64), "eid": eid[first_rows],
        "fn": fn[first_rows].astype(np.int64),
        "count": np.bincount(codes, minlength=n_functions),
        "valid": np.bincount(codes[valid], minlength=n_functions),
        "total": _reduce(codes[valid], ticks[valid], n_functions, np.add, 0, np.uint64),
        "max": _reduce(codes[valid], ticks[valid], n_functions, np.maximum, 0, np.uint64),
    }

    s_codes, s_first = _groups(pdo[matched], queue[matched], stream[matched],
                               rows["submission_id"][matched])
    n_subs = len(s_first)
    submissions = {
        "pdo": pdo[matched][s_first], "queue": queue[matched][s_first],
        "stream": stream[matched][s_first],
        "valid": np.bincount(s_codes[valid], minlength=n_subs),
        "invalid": np.bincount(s_codes[~valid], minlength=n_subs),
        "total": _reduce(s_codes[valid], ticks[valid], n_subs, np.add, 0, np.uint64),
        "earliest": _reduce(s_codes[valid], start[valid], n_subs, np.minimum, U64_MAX, np.uint64),
        "latest": _reduce(s_codes[valid], end[valid], n_subs, np.maximum, 0, np.uint64),
    }

    valid_rows = matched[valid]
    top = []
    for i in _top_slots(ticks[valid]):
        j = int(valid_rows[i])
        top.append({"event_id": int(rows["event_id"][j]),
                    "submission_id": int(rows["submission_id"][j]),
                    "pdo": int(pdo[j]), "queue": int(queue[j]), "stream": int(stream[j]),
                    "eid": int(eid[j]), "fn": int(fn[j]), "ticks": int(ticks[valid][i])})
    return _Dispatches(
        chunk_devices=[int(p) for p in dict.fromkeys(chunk_devices.tolist())],
        matched=len(matched), valid=int(np.count_nonzero(valid)),
        invalid=int(np.count_nonzero(~valid)), functions=functions, submissions=submissions,
        top=top)


# --- host-execution dispatch spans ----------------------------------------------------------------


@dataclass
class _Hosts:
    matched: int
    valid: int
    invalid: int
    functions: list[dict]          # per (device, executable, function), first-seen order
    top: list[dict]


def _host_pass(bundle: Bundle, model: Model, options: ReportOptions) -> _Hosts:
    h = bundle.typed("host-execution-events")
    is_dispatch = h.rows["type"] == QUEUE_DISPATCH
    rows, chunk = h.rows[is_dispatch], h.chunk[is_dispatch]
    pdo, queue, stream = rows["physical_device_ordinal"], rows["queue_ordinal"], rows["stream_id"]
    eid, fn = rows["executable_id"], rows["function_ordinal"]

    selected, codes, firsts, keep, errors = _match_events(
        model, options, rows, chunk, pdo, queue, stream, "host dispatch event")

    row_keep = keep[codes]
    matched = selected[row_keep]
    codes = codes[row_keep]
    start, end = rows["start_host_time_ns"][matched], rows["end_host_time_ns"][matched]
    valid = (start >= 0) & (end >= start)
    duration = np.where(valid, end - np.where(valid, start, 0), 0)
    tiles = rows["tile_count"][matched]
    tile_ns = rows["tile_duration_sum_ns"][matched]

    # IREE adds each valid span into int64/uint64 totals that refuse negative or overflowing terms.
    bad = valid & (tile_ns < 0)
    if bad.any():
        i = int(matched[np.argmax(bad)])
        errors.append((i, _overflow(
            f"host dispatch aggregate total overflow device={int(pdo[i])} "
            f"executable={int(eid[i])} function={int(fn[i])}", int(chunk[i]))))
    else:
        overflow_at = _host_total_overflow(rows, matched, valid, duration, tile_ns, tiles, codes)
        if overflow_at is not None:
            i = overflow_at
            errors.append((i, _overflow(
                f"host dispatch aggregate total overflow device={int(pdo[i])} "
                f"executable={int(eid[i])} function={int(fn[i])}", int(chunk[i]))))
    if errors:
        raise min(errors, key=lambda t: t[0])[1]

    kept = np.flatnonzero(keep)
    renumber = np.full(len(keep), -1, np.int64)
    renumber[kept] = np.arange(len(kept))
    codes = renumber[codes]
    n = len(kept)
    v = valid
    count = np.bincount(codes, minlength=n)
    valid_count = np.bincount(codes[v], minlength=n)
    total = _reduce(codes[v], duration[v], n, np.add, 0, np.int64)
    maximum = _reduce(codes[v], duration[v], n, np.maximum, 0, np.int64)
    total_tiles = _reduce(codes[v], tiles[v], n, np.add, 0, np.uint64)
    total_tile_ns = _reduce(codes[v], tile_ns[v], n, np.add, 0, np.int64)
    functions = []
    for g, first in enumerate(firsts[kept].tolist()):
        j = int(selected[first])
        functions.append({
            "pdo": int(pdo[j]), "eid": int(eid[j]), "fn": int(fn[j]), "count": int(count[g]),
            "valid": int(valid_count[g]), "invalid": int(count[g] - valid_count[g]),
            "total_ns": int(total[g]), "max_ns": int(maximum[g]),
            "avg_ns": float(total[g]) / float(valid_count[g]) if valid_count[g] else 0.0,
            "tiles": int(total_tiles[g]), "tile_ns": int(total_tile_ns[g])})

    valid_rows = matched[v]
    top = []
    for i in _top_slots(duration[v]):
        j = int(valid_rows[i])
        top.append({"event_id": int(rows["event_id"][j]),
                    "submission_id": int(rows["submission_id"][j]),
                    "pdo": int(pdo[j]), "queue": int(queue[j]), "stream": int(stream[j]),
                    "command_buffer_id": int(rows["command_buffer_id"][j]),
                    "command_index": int(rows["command_index"][j]),
                    "eid": int(eid[j]), "fn": int(fn[j]), "duration_ns": int(duration[v][i]),
                    "tiles": int(rows["tile_count"][j]),
                    "tile_ns": int(rows["tile_duration_sum_ns"][j])})
    return _Hosts(matched=len(matched), valid=int(np.count_nonzero(v)),
                  invalid=int(np.count_nonzero(~v)), functions=functions, top=top)


def _host_total_overflow(rows, matched, valid, duration, tile_ns, tiles, codes) -> int | None:
    """Row of the first valid span whose function or command-buffer totals overflow, if any."""
    if not valid.any():
        return None
    if (_exact_sum(duration[valid]) <= INT64_MAX and _exact_sum(tile_ns[valid]) <= INT64_MAX
            and _exact_sum(tiles[valid]) <= U64_MAX):
        return None
    cb = rows["command_buffer_id"][matched]
    command_codes, _ = _groups(cb, rows["submission_id"][matched],
                               rows["physical_device_ordinal"][matched],
                               rows["queue_ordinal"][matched], rows["stream_id"][matched])
    totals: dict[tuple, list[int]] = {}
    for k in np.flatnonzero(valid).tolist():
        terms = (int(duration[k]), int(tile_ns[k]), int(tiles[k]))
        groups = [("f", int(codes[k]))]
        if int(cb[k]) != 0:
            groups.append(("c", int(command_codes[k])))
        for group in groups:
            t = totals.setdefault(group, [0, 0, 0])
            t[0] += terms[0]
            t[1] += terms[1]
            t[2] += terms[2]
            if t[0] > INT64_MAX or t[1] > INT64_MAX or t[2] > U64_MAX:
                return int(matched[k])
    return None


# --- queue events ---------------------------------------------------------------------------------


@dataclass
class _QueueOperations:
    events: int
    strategies: list[int]          # none, inline, device_barrier, software_defer
    counts: list[int]              # per queue event type 0..11
    payload: list[int]             # per queue event type 0..11 (wrapping like IREE's counters)

    def row(self) -> dict:
        s, c, p = self.strategies, self.counts, self.payload
        return {"type": "explain_queue_operations", "events": self.events,
                "strategy_none": s[0], "strategy_inline": s[1], "strategy_device_barrier": s[2],
                "strategy_software_defer": s[3], "copy_bytes": p[4], "fill_bytes": p[5],
                "update_bytes": p[6], "read_bytes": p[7], "write_bytes": p[8],
                "dispatches": c[2], "executes": c[3], "allocas": c[9], "deallocas": c[10],
                "host_calls": c[11]}


def _queue_operations(bundle: Bundle, model: Model) -> _QueueOperations:
    q = bundle.typed("queue-events")
    rows = q.rows
    pdo, queue, stream = rows["physical_device_ordinal"], rows["queue_ordinal"], rows["stream_id"]
    codes, firsts = _groups(pdo, queue, stream)
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
    return _QueueOperations(events=len(rows), strategies=[int(x) for x in strategies],
                            counts=[int(x) for x in counts], payload=payload)


# --- memory events --------------------------------------------------------------------------------


@dataclass
class _Memory:
    rows: list[dict]
    events: int
    pool_waits: bool


def _memory_pressure(bundle: Bundle) -> _Memory:
    m = bundle.typed("memory-events")
    rows, n = m.rows, len(m.rows)
    types, length = rows["type"], rows["length"]
    pool_flag = (rows["flags"] & np.uint32(F.MEMORY_POOL_RESERVATION)) != 0
    device_codes, device_first = _groups(rows["physical_device_ordinal"])
    devices = rows["physical_device_ordinal"][device_first].tolist()
    n_devices = len(devices)

    close_materialization = _closes_materialization(rows, types, pool_flag)
    balances = {
        "slab": (types == SLAB_ACQUIRE, types == SLAB_RELEASE),
        "pool_reserved": ((types == POOL_RESERVE) & pool_flag, types == POOL_RELEASE),
        "pool_materialized": (types == POOL_MATERIALIZE,
                              (types == POOL_RELEASE) & close_materialization),
        "queue_inflight": (types == QUEUE_ALLOCA, types == QUEUE_DEALLOCA),
        "buffer": (types == BUFFER_ALLOCATE, types == BUFFER_FREE),
        "import": (types == BUFFER_IMPORT, types == BUFFER_UNIMPORT),
    }
    _check_memory_totals(m, device_codes, balances)

    high_water = {}
    for name, (opens, closes) in balances.items():
        step = opens | closes
        index = np.flatnonzero(step)
        sign = np.where(opens[index], 1, -1)
        deltas = [s * l for s, l in zip(sign.tolist(), length[index].tolist())]
        current = _clamped_running(deltas, device_codes[index])
        high_water[name] = [0] * n_devices
        if current.dtype != object:
            hw = _reduce(device_codes[index], current, n_devices, np.maximum, 0, np.int64)
            high_water[name] = [int(x) for x in hw]
        else:
            for g, w in zip(device_codes[index].tolist(), current.tolist()):
                high_water[name][g] = max(high_water[name][g], w)
    waits = np.bincount(device_codes[types == POOL_WAIT], minlength=n_devices)

    out = []
    for g, pdo in enumerate(devices):
        out.append({"type": "explain_memory_pressure", "physical_device_ordinal": int(pdo),
                    "slab_high_water_bytes": high_water["slab"][g],
                    "pool_reserved_high_water_bytes": high_water["pool_reserved"][g],
                    "pool_materialized_high_water_bytes": high_water["pool_materialized"][g],
                    "queue_inflight_high_water_bytes": high_water["queue_inflight"][g],
                    "buffer_high_water_bytes": high_water["buffer"][g],
                    "pool_waits": int(waits[g])})
    return _Memory(rows=out, events=n, pool_waits=bool(waits.any()))


def _closes_materialization(rows, types, pool_flag) -> np.ndarray:
    """Which pool releases also close a materialization (IREE's per-reservation bookkeeping).

    A flagged release closes the reservation's materialization when that reservation, keyed by
    (device, allocation id, pool id), still has an open materialization count or bytes. Both
    evolve as clamped running sums over the reservation's flagged materialize (+1, +length) and
    release (-1, -length) events, so "still open" is the state before each release.
    """
    out = np.zeros(len(types), bool)
    index = np.flatnonzero(pool_flag & ((types == POOL_MATERIALIZE) | (types == POOL_RELEASE)))
    if not len(index) or not (types[index] == POOL_RELEASE).any():
        return out
    codes, _ = _groups(rows["physical_device_ordinal"][index], rows["allocation_id"][index],
                       rows["pool_id"][index])
    release = types[index] == POOL_RELEASE
    sign = np.where(release, -1, 1)
    count_after = _clamped_running(sign.tolist(), codes)
    byte_deltas = [s * l for s, l in zip(sign.tolist(), rows["length"][index].tolist())]
    bytes_after = _clamped_running(byte_deltas, codes)
    # the state before a step is the state after the previous step of the same reservation
    order = np.argsort(codes, kind="stable")
    c = codes[order]
    first_of_group = np.r_[True, c[1:] != c[:-1]]
    open_after = (count_after[order] != 0) | (bytes_after[order] != 0)
    open_before = np.r_[False, open_after[:-1]] & ~first_of_group
    closes = np.empty(len(index), bool)
    closes[order] = open_before
    out[index] = closes & release
    return out


def _check_memory_totals(m, device_codes, balances) -> None:
    """Each device balance's opened and closed byte totals must fit IREE's uint64 counters."""
    length = m.rows["length"]
    masks = [mask for pair in balances.values() for mask in pair]
    if all(_exact_sum(length[mask]) <= U64_MAX for mask in masks):
        return
    totals: dict[tuple[int, int], int] = {}
    for k in np.flatnonzero(np.logical_or.reduce(masks)).tolist():
        for b, mask in enumerate(masks):
            if mask[k]:
                key = (b, int(device_codes[k]))
                totals[key] = totals.get(key, 0) + int(length[k])
                if totals[key] > U64_MAX:
                    raise _overflow(
                        f"memory accounting overflow for event_id={int(m.rows['event_id'][k])}",
                        int(m.chunk[k]))


# --- rows -----------------------------------------------------------------------------------------


def _summary_row(health: _Health, model: Model, dispatches: _Dispatches, hosts: _Hosts,
                 queue_ops: _QueueOperations, memory: _Memory) -> dict:
    row = {"type": "explain_summary", "file_records": health.file_records,
           "chunk_records": health.chunk_records, "unknown_records": health.unknown_records,
           "unknown_chunks": health.unknown_chunks, "truncated_chunks": health.truncated_chunks,
           "dropped_records": health.dropped_records,
           "non_ok_session_end_records": health.non_ok,
           "dispatches": dispatches.matched, "valid_dispatches": dispatches.valid,
           "invalid_dispatches": dispatches.invalid, "host_dispatches": hosts.matched,
           "valid_host_dispatches": hosts.valid, "invalid_host_dispatches": hosts.invalid,
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


def _device_row(model: Model, dispatches: _Dispatches, pdo: int) -> dict:
    fit = model.clock_fit(pdo)
    clock = model.devices.get(pdo)
    subs = dispatches.submissions
    mine = (subs["pdo"] == pdo) & (subs["valid"] != 0)
    if mine.any():
        visible = span_ticks(int(subs["earliest"][mine].min()), int(subs["latest"][mine].max()))
    else:
        visible = span_ticks(U64_MAX, 0)
    f = dispatches.functions
    total = _exact_sum(f["total"][f["pdo"] == pdo])
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


def _queue_row(model: Model, dispatches: _Dispatches, key: tuple[int, int, int],
               queue_events: int) -> dict:
    pdo, queue, stream = key
    subs = dispatches.submissions
    mine = (subs["pdo"] == pdo) & (subs["queue"] == queue) & (subs["stream"] == stream)
    valid = mine & (subs["valid"] != 0)
    total = _exact_sum(subs["total"][mine])
    busy = gap_total = gap_max = 0.0
    gaps = 0
    if valid.any():
        starts, ends = subs["earliest"][valid], subs["latest"][valid]
        order = np.lexsort((ends, starts))
        starts, ends = starts[order], ends[order]
        reach = np.maximum.accumulate(ends)           # merged end so far
        new = np.r_[False, starts[1:] > reach[:-1]]    # a gap opens before these intervals
        segment_start = np.r_[0, np.flatnonzero(new)]
        segment_end = np.r_[np.flatnonzero(new) - 1, len(starts) - 1]
        busy = float(_exact_sum(reach[segment_end] - starts[segment_start]))
        gap = starts[1:][new[1:]] - reach[:-1][new[1:]]
        gaps = len(gap)
        if gaps:
            gap_total = float(_exact_sum(gap))
            gap_max = float(gap.max())
    fit = model.clock_fit(pdo)
    ns = fit.ns_per_tick if fit is not None else 0.0
    total_ns = (fit.ticks_to_ns(total)
                if fit is not None and np.count_nonzero(valid) != 0 else None)
    gap_ok = queue_events != 0
    return {"type": "explain_queue", "physical_device_ordinal": pdo, "queue_ordinal": queue,
            "stream_id": stream, "submissions": int(np.count_nonzero(mine)),
            "valid_submissions": int(np.count_nonzero(valid)),
            "invalid_submissions": int(np.count_nonzero(mine & (subs["invalid"] != 0))),
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


def _uses_host_timing(dispatches: _Dispatches, hosts: _Hosts) -> bool:
    return dispatches.valid == 0 and hosts.valid != 0


def _top_function_rows(model: Model, dispatches: _Dispatches, hosts: _Hosts) -> list[dict]:
    ranks = []
    if _uses_host_timing(dispatches, hosts):
        for a in hosts.functions:
            if a["valid"] == 0:
                continue
            ranks.append((float(a["total_ns"]), {
                "pdo": a["pdo"], "eid": a["eid"], "fn": a["fn"], "dispatches": a["count"],
                "valid": a["valid"], "invalid": a["invalid"], "total_ticks": 0, "max_ticks": 0,
                "timing_source": HOST_TIMING, "duration_ns_available": True,
                "total_ns": a["total_ns"], "avg_ns": a["avg_ns"], "max_ns": a["max_ns"],
                "tiles": a["tiles"], "tile_ns": a["tile_ns"]}))
    else:
        f = dispatches.functions
        for g in range(len(f["count"])):
            valid = int(f["valid"][g])
            if valid == 0:
                continue
            pdo, total, maximum = int(f["pdo"][g]), int(f["total"][g]), int(f["max"][g])
            fit: ClockFit | None = model.clock_fit(pdo)
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
                        avg = (total / valid) * fit.ns_per_tick
            ranks.append((float(total_ns) if available else float(total), {
                "pdo": pdo, "eid": int(f["eid"][g]), "fn": int(f["fn"][g]),
                "dispatches": int(f["count"][g]), "valid": valid,
                "invalid": int(f["count"][g]) - valid, "total_ticks": total, "max_ticks": maximum,
                "timing_source": DEVICE_TIMING, "duration_ns_available": available,
                "total_ns": total_ns, "avg_ns": avg, "max_ns": max_ns, "tiles": 0, "tile_ns": 0}))
    ranks.sort(key=lambda t: -t[0])  # stable: equal scores keep first-seen order
    out = []
    for rank, (_, r) in enumerate(ranks[:TOP_FUNCTIONS], 1):
        out.append({"type": "explain_top_function", "rank": rank,
                    "physical_device_ordinal": r["pdo"], "executable_id": r["eid"],
                    "function_ordinal": r["fn"],
                    "key": model.dispatch_key(r["pdo"], r["eid"], r["fn"]),
                    "dispatches": r["dispatches"], "valid": r["valid"], "invalid": r["invalid"],
                    "total_ticks": r["total_ticks"], "max_ticks": r["max_ticks"],
                    "timing_source": r["timing_source"],
                    "duration_ns_available": r["duration_ns_available"],
                    "total_ns": r["total_ns"], "avg_ns": r["avg_ns"], "max_ns": r["max_ns"],
                    "total_tile_count": r["tiles"], "total_tile_duration_sum_ns": r["tile_ns"]})
    return out


def _top_dispatch_rows(model: Model, dispatches: _Dispatches, hosts: _Hosts) -> list[dict]:
    out = []
    if dispatches.top:
        for rank, t in enumerate(dispatches.top, 1):
            fit = model.clock_fit(t["pdo"])
            ns = fit.ticks_to_ns(t["ticks"]) if fit is not None else None
            out.append({"type": "explain_top_dispatch", "rank": rank, "event_id": t["event_id"],
                        "submission_id": t["submission_id"], "physical_device_ordinal": t["pdo"],
                        "queue_ordinal": t["queue"], "stream_id": t["stream"],
                        "key": model.dispatch_key(t["pdo"], t["eid"], t["fn"]),
                        "timing_source": DEVICE_TIMING, "duration_ticks": t["ticks"],
                        "duration_ns_available": ns is not None,
                        "duration_ns": ns if ns is not None else 0,
                        "tile_count": 0, "tile_duration_sum_ns": 0})
        return out
    for rank, t in enumerate(hosts.top, 1):
        out.append({"type": "explain_top_dispatch", "rank": rank, "event_id": t["event_id"],
                    "submission_id": t["submission_id"], "physical_device_ordinal": t["pdo"],
                    "queue_ordinal": t["queue"], "stream_id": t["stream"],
                    "command_buffer_id": t["command_buffer_id"],
                    "command_index": t["command_index"],
                    "key": model.dispatch_key(t["pdo"], t["eid"], t["fn"]),
                    "timing_source": HOST_TIMING, "duration_ticks": 0,
                    "duration_ns_available": True, "duration_ns": t["duration_ns"],
                    "tile_count": t["tiles"], "tile_duration_sum_ns": t["tile_ns"]})
    return out


def _hint(name: str) -> dict:
    severity, category, message = HINTS[name]
    return {"type": "explain_hint", "severity": severity, "category": category, "message": message}


def _hint_rows(health: _Health, dispatches: _Dispatches, hosts: _Hosts,
               queue_ops: _QueueOperations, memory: _Memory) -> list[dict]:
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
    if dispatches.invalid:
        out.append(_hint("invalid_dispatch"))
    if hosts.invalid:
        out.append(_hint("invalid_host"))
    if queue_ops.events == 0:
        out.append(_hint("no_queue_events"))
    if memory.pool_waits:
        out.append(_hint("pool_waits"))
    if _uses_host_timing(dispatches, hosts):
        out.append(_hint("host_fallback"))
    elif dispatches.valid == 0:
        out.append(_hint("no_dispatches"))
    return out

"""`statistics`: the aggregate rows of IREE's HAL statistics sink, reduced from a bundle's chunks.

iree-profile feeds every CHUNK record (session markers are skipped, so nothing resets) through the
same reducer `--print_device_statistics` uses. Each source event adds one sample to one or more
aggregate rows, keyed by (row type, time domain, device, queue, event type, executable, command
buffer, function, command index):

  dispatch-events        dispatch_function (when executable and function are known),
                         dispatch_command_buffer, dispatch_command_operation (device ticks; device
                         and queue come from the chunk header)
  queue-device-events    queue_device_operation (device ticks)
  queue-events           queue_host_operation (host ns, from submit to ready)
  host-execution-events  host_execution_queue_operation, _function, _command_buffer,
                         _command_operation (host ns, with tile totals)
  memory-events          memory_lifecycle (count and bytes, no timing)

Rows come out in the order they were first touched. A sample is timed when its span is valid
(device: start != 0 and end >= start; host: start >= 0 and end >= start); untimed samples count as
invalid. Device-tick durations become nanoseconds through the first/last clock samples of the row's
device (host CPU timestamps, else bracket midpoints), as the sink does.

The sink reads fixed records at a fixed stride and ignores their `record_length`: a payload that is
not a whole number of records is DATA_LOSS ("partial record"). Executable functions are walked by
`record_length` and only give names (the first record of a key wins).

Sources: IREE `hal/utils/statistics_sink.c`, `tooling/profile/statistics.c`;
../shared/reference/ireeprof.md section 4.3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from amdgpu_cli.errors import BundleFormatError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports.summary import locate_stride, overflow
from amdgpu_cli.profile.reports.statistics_rows import (DEVICE_TICK, FLAG_OPERATION_COUNT,
                                                        FLAG_PAYLOAD_BYTES, FLAG_TILE_TOTALS,
                                                        FLAG_TIMING, HOST_NS, NONE, DeviceClock,
                                                        statistics_row, summary_row)
from amdgpu_cli.profile.reports.summary_rows import Row
from amdgpu_cli.profile.reports.toolkit import dense_ids, distinct, exact_group_sums, exact_sum

U32_MAX = schema.U32_MAX
U64_MAX = schema.U64_MAX
F = schema.Flags

_KEYS = ("physical_device_ordinal", "queue_ordinal", "event_type", "executable_id",
         "command_buffer_id", "function_ordinal", "command_index")


def _partial(suffix: str) -> str:
    return f"profile statistics chunk '{schema.BY_SUFFIX[suffix].name}' has a partial record"


# --- device clocks ----------------------------------------------------------------------------


_CLOCK_FIELDS = ("flags", "device_tick", "host_cpu_timestamp_ns", "host_time_begin_ns",
                 "host_time_end_ns")


def _device_clocks(bundle: Bundle) -> dict[int, DeviceClock]:
    records = locate_stride(bundle, "clock-correlations", _partial("clock-correlations"))
    if not len(records):
        return {}
    cols = {name: records.field(name) for name in ("physical_device_ordinal", *_CLOCK_FIELDS)}
    pdo = cols["physical_device_ordinal"]
    clocks = {}
    for p in distinct(pdo):
        idx = np.flatnonzero(pdo == p)
        unaligned = int(np.count_nonzero(cols["flags"][idx] & F.CLOCK_DEVICE_TICK_UNALIGNED))
        first = {k: int(cols[k][idx[0]]) for k in _CLOCK_FIELDS}
        last = {k: int(cols[k][idx[-1]]) for k in _CLOCK_FIELDS}
        clocks[p] = DeviceClock(len(idx), unaligned, first, last)
    return clocks


# --- samples and their reduction --------------------------------------------------------------


@dataclass
class _Samples:
    """Samples of one row type: key columns, values, and a file-order key for first touches."""

    row_type: int
    time_domain: int
    keys: dict            # key name -> array or scalar
    timed: np.ndarray     # bool: the sample has a valid span
    start: np.ndarray     # uint64 (0 where untimed)
    end: np.ndarray       # uint64
    order: np.ndarray     # int64, increasing in file order
    operations: np.ndarray | int = 0
    payload: np.ndarray | int = 0
    tiles: np.ndarray | int = 0
    tile_ns: np.ndarray | int = 0


def _u64(a) -> np.ndarray:
    return np.asarray(a).astype(np.uint64, copy=False)


def _group_sums(values: np.ndarray, order: np.ndarray, starts: np.ndarray, what: str) -> list[int]:
    """Exact per-group sums of values below 2**64; a sum past u64 is an error, as in the sink."""
    sums = exact_group_sums(_u64(values)[order], starts)
    if any(s > U64_MAX for s in sums):
        raise overflow(f"profile statistics {what} overflow")
    return sums


def _reduce(s: _Samples) -> list[tuple[int, dict]]:
    """Aggregate rows of one sample batch: [(first order key, row fields)]."""
    n = len(s.order)
    if n == 0:
        return []
    group, groups = dense_ids([s.keys[k] for k in _KEYS if not np.isscalar(s.keys[k])], n)
    # Small group ids sort with numpy's O(n) radix sort.
    order = np.argsort(group.astype(np.uint16) if groups <= 1 << 16 else group, kind="stable")
    g_sorted = group[order]
    starts = np.flatnonzero(np.r_[True, g_sorted[1:] != g_sorted[:-1]])
    counts = np.diff(np.r_[starts, n])
    first = order[starts]                                # first sample of each group (file order)

    valid = s.timed & (s.end >= s.start)
    duration = np.where(valid, s.end - s.start, np.uint64(0))
    vs = valid[order]
    invalid = (counts - np.add.reduceat(vs.astype(np.int64), starts)).tolist()
    any_valid = np.logical_or.reduceat(vs, starts).tolist()
    totals = _group_sums(duration, order, starts, "duration")
    first_start = np.minimum.reduceat(np.where(vs, s.start[order], np.uint64(U64_MAX)), starts).tolist()
    last_end = np.maximum.reduceat(np.where(vs, s.end[order], np.uint64(0)), starts).tolist()
    d_sorted = duration[order]
    min_d = np.minimum.reduceat(np.where(vs, d_sorted, np.uint64(U64_MAX)), starts).tolist()
    max_d = np.maximum.reduceat(d_sorted, starts).tolist()

    def flagged_sums(values, what):
        if np.isscalar(values):
            return [0] * len(starts), [False] * len(starts)
        nonzero = np.logical_or.reduceat(_u64(values)[order] != 0, starts).tolist()
        return _group_sums(values, order, starts, what), nonzero

    operations, has_ops = flagged_sums(s.operations, "operation count")
    payload, has_payload = flagged_sums(s.payload, "payload byte count")
    if np.isscalar(s.tiles):
        tiles, tile_ns, has_tiles = [0] * len(starts), [0] * len(starts), [False] * len(starts)
    else:
        with_tiles = _u64(s.tiles) != 0  # tile durations only count where tiles were reported
        tiles, has_tiles = flagged_sums(s.tiles, "tile count")
        tile_ns = _group_sums(np.where(with_tiles, _u64(s.tile_ns), np.uint64(0)), order, starts,
                              "tile count")

    out = []
    for g in range(len(starts)):
        i = int(first[g])
        flags = ((FLAG_TIMING if any_valid[g] else 0) | (FLAG_PAYLOAD_BYTES if has_payload[g] else 0)
                 | (FLAG_OPERATION_COUNT if has_ops[g] else 0) | (FLAG_TILE_TOTALS if has_tiles[g] else 0))
        key = {k: int(v) if np.isscalar(v) else int(v[i]) for k, v in s.keys.items()}
        out.append((int(s.order[i]), {
            "row_type": s.row_type, "time_domain": s.time_domain, "flags": flags, **key,
            "sample_count": int(counts[g]), "invalid_sample_count": invalid[g],
            "operation_count": operations[g], "payload_bytes": payload[g], "tile_count": tiles[g],
            "tile_duration_sum_ns": tile_ns[g], "first_start_time": first_start[g],
            "last_end_time": last_end[g], "total_duration": totals[g], "minimum_duration": min_d[g],
            "maximum_duration": max_d[g],
        }))
    return out


def _select(s: _Samples, mask: np.ndarray) -> _Samples:
    pick = lambda v: v if np.isscalar(v) else v[mask]  # noqa: E731
    return _Samples(s.row_type, s.time_domain, {k: pick(v) for k, v in s.keys.items()},
                    s.timed[mask], s.start[mask], s.end[mask], s.order[mask], pick(s.operations),
                    pick(s.payload), pick(s.tiles), pick(s.tile_ns))


def _variant(s: _Samples, row_type: int, sub: int, mask=None, **keys) -> _Samples:
    v = _Samples(row_type, s.time_domain, {**s.keys, **keys}, s.timed, s.start, s.end,
                 s.order + sub, s.operations, s.payload, s.tiles, s.tile_ns)
    return v if mask is None else _select(v, mask)


def _dispatch_samples(bundle: Bundle) -> list[_Samples]:
    r = locate_stride(bundle, "dispatch-events", _partial("dispatch-events"), load=True)
    if not len(r):
        return []
    rec = bundle.records
    start, end = r.field("start_tick"), r.field("end_tick")
    exe, func = r.field("executable_id"), r.field("function_ordinal")
    cb, cmd = r.field("command_buffer_id"), r.field("command_index")
    base = _Samples(1, DEVICE_TICK, {
        "physical_device_ordinal": rec["physical_device_ordinal"][r.chunk],
        "queue_ordinal": rec["queue_ordinal"][r.chunk], "event_type": 0, "executable_id": exe,
        "command_buffer_id": 0, "function_ordinal": func, "command_index": U32_MAX,
    }, (start != 0) & (end >= start), start, end, r.offsets * 4)
    return [
        _variant(base, 1, 0, (exe != 0) & (func != U32_MAX)),
        _variant(base, 2, 1, cb != 0, executable_id=0, command_buffer_id=cb,
                 function_ordinal=U32_MAX),
        _variant(base, 3, 2, (cb != 0) & (cmd != U32_MAX), command_buffer_id=cb,
                 command_index=cmd),
    ]


def _queue_device_samples(bundle: Bundle) -> list[_Samples]:
    r = locate_stride(bundle, "queue-device-events", _partial("queue-device-events"), load=True)
    if not len(r):
        return []
    start, end = r.field("start_tick"), r.field("end_tick")
    return [_Samples(4, DEVICE_TICK, {
        "physical_device_ordinal": r.field("physical_device_ordinal"),
        "queue_ordinal": r.field("queue_ordinal"), "event_type": r.field("type"),
        "executable_id": 0, "command_buffer_id": r.field("command_buffer_id"),
        "function_ordinal": U32_MAX, "command_index": U32_MAX,
    }, (start != 0) & (end >= start), start, end, r.offsets * 4,
        operations=r.field("operation_count"), payload=r.field("payload_length"))]


def _host_span(start: np.ndarray, end: np.ndarray):
    timed = (start >= 0) & (end >= start)
    zero = np.uint64(0)
    return timed, np.where(timed, start.astype(np.uint64), zero), np.where(timed, end.astype(np.uint64), zero)


def _queue_samples(bundle: Bundle) -> list[_Samples]:
    r = locate_stride(bundle, "queue-events", _partial("queue-events"), load=True)
    if not len(r):
        return []
    timed, start, end = _host_span(r.field("host_time_ns"), r.field("ready_host_time_ns"))
    return [_Samples(5, HOST_NS, {
        "physical_device_ordinal": r.field("physical_device_ordinal"),
        "queue_ordinal": r.field("queue_ordinal"), "event_type": r.field("type"),
        "executable_id": 0, "command_buffer_id": r.field("command_buffer_id"),
        "function_ordinal": U32_MAX, "command_index": U32_MAX,
    }, timed, start, end, r.offsets * 4, operations=r.field("operation_count"),
        payload=r.field("payload_length"))]


def _host_execution_samples(bundle: Bundle) -> list[_Samples]:
    r = locate_stride(bundle, "host-execution-events", _partial("host-execution-events"), load=True)
    if not len(r):
        return []
    timed, start, end = _host_span(r.field("start_host_time_ns"), r.field("end_host_time_ns"))
    exe, func = r.field("executable_id"), r.field("function_ordinal")
    cb, cmd = r.field("command_buffer_id"), r.field("command_index")
    tile_ns = r.field("tile_duration_sum_ns")
    base = _Samples(9, HOST_NS, {
        "physical_device_ordinal": r.field("physical_device_ordinal"),
        "queue_ordinal": r.field("queue_ordinal"), "event_type": r.field("type"),
        "executable_id": 0, "command_buffer_id": cb, "function_ordinal": U32_MAX,
        "command_index": U32_MAX,
    }, timed, start, end, r.offsets * 4, operations=r.field("operation_count"),
        payload=r.field("payload_length"), tiles=r.field("tile_count"),
        tile_ns=np.where(tile_ns >= 0, tile_ns, 0).astype(np.uint64))
    return [
        base,
        _variant(base, 6, 1, (exe != 0) & (func != U32_MAX), event_type=0, executable_id=exe,
                 command_buffer_id=0, function_ordinal=func),
        _variant(base, 7, 2, cb != 0, event_type=0),
        _variant(base, 8, 3, (cb != 0) & (cmd != U32_MAX), event_type=0, executable_id=exe,
                 function_ordinal=func, command_index=cmd),
    ]


def _memory_samples(bundle: Bundle) -> list[_Samples]:
    r = locate_stride(bundle, "memory-events", _partial("memory-events"), load=True)
    if not len(r):
        return []
    zero = np.zeros(len(r), np.uint64)
    return [_Samples(10, NONE, {
        "physical_device_ordinal": r.field("physical_device_ordinal"),
        "queue_ordinal": r.field("queue_ordinal"), "event_type": r.field("type"),
        "executable_id": 0, "command_buffer_id": 0, "function_ordinal": U32_MAX,
        "command_index": U32_MAX,
    }, np.zeros(len(r), bool), zero, zero, r.offsets * 4, payload=r.field("length"))]


def _function_names(bundle: Bundle) -> dict[tuple[int, int], str]:
    """(executable_id, function_ordinal) -> name; the first record of a key wins, even unnamed."""
    typed = bundle.typed("executable-functions")
    rows = typed.rows
    if not len(rows):
        return {}
    head = schema.FUNCTION.itemsize
    bad = np.flatnonzero(rows["name_length"].astype(np.int64) > rows["record_length"].astype(np.int64) - head)
    if len(bad):
        rec = int(typed.chunk[bad[0]])
        raise BundleFormatError("profile statistics executable-function name length is invalid "
                                f"(record {rec})", record_index=rec)
    names: dict[tuple[int, int], str] = {}
    for i, (exe, ordinal, length) in enumerate(zip(rows["executable_id"].tolist(),
                                                   rows["function_ordinal"].tolist(),
                                                   rows["name_length"].tolist())):
        if (exe, ordinal) not in names:
            names[(exe, ordinal)] = typed.tail(i)[:length].decode("utf-8", "replace")
    return names


# --- the report -------------------------------------------------------------------------------


def _collect(bundle: Bundle):
    """Runs every family; a format error is reported for the earliest bad record, as IREE does."""
    results, errors = {}, []
    steps = {
        "clocks": lambda: _device_clocks(bundle),
        "names": lambda: _function_names(bundle),
        "dispatch": lambda: _dispatch_samples(bundle),
        "queue_device": lambda: _queue_device_samples(bundle),
        "queue": lambda: _queue_samples(bundle),
        "host": lambda: _host_execution_samples(bundle),
        "memory": lambda: _memory_samples(bundle),
    }
    for name, step in steps.items():
        try:
            results[name] = step()
        except BundleFormatError as e:
            errors.append((e.record_index if e.record_index is not None else len(bundle.records), e))
    if errors:
        raise min(errors, key=lambda item: item[0])[1]
    bundle.check()
    return results


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> list[Row]:
    """The `statistics_summary` row, then one `statistics_row` per aggregate row in first-touch order."""
    results = _collect(bundle)
    rec = bundle.records
    chunk = rec["record_type"] == schema.RecordType.CHUNK
    dropped = exact_sum(rec["dropped_record_count"][chunk])
    if dropped > U64_MAX:
        raise overflow("profile statistics dropped record count overflow")

    groups = []
    for name in ("dispatch", "queue_device", "queue", "host", "memory"):
        for samples in results[name]:
            groups.extend(_reduce(samples))
    groups.sort(key=lambda item: item[0])

    clocks, names = results["clocks"], results["names"]
    rows: list[Row] = [summary_row(len(groups), dropped)]
    for _, g in groups:
        rows.append(statistics_row(g, clocks, names))
    return rows

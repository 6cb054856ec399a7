"""`export --format=perfetto`: a bundle as Chrome trace-event JSON (opens in ui.perfetto.dev).

Layout of the trace (JSON Object Format: `{"traceEvents":[...],"displayTimeUnit":"ns",...}`):

- one process per physical device (`pid` = ordinal + 1; `pid` 0 holds records without a device),
  named by `process_name` metadata (producer name, device ordinal, UUID when known);
- per queue (ordinal, stream) a few threads, each named by `thread_name` metadata:
  `queue Q stream S` (device dispatches), `... device ops` (device-timed queue operations),
  `... host execution` (host spans), `... command regions`, `... queue events` (instants at submit
  time), `... memory` (memory instants); queue-less records go to `device-scope ...` threads;
- complete events (`"ph":"X"`) for dispatches (named by function key), device queue operations
  (`queue-device:<op>`), host execution spans (function key, else `host:<op>`) and command regions;
  instants (`"ph":"i"`) for queue events (`queue:<op>`) and memory events (`memory:<type>`);
  counters (`"ph":"C"`) for the running queue-allocated bytes per device (`queue allocation bytes`),
  device metrics (one track per metric, at the sample bracket's midpoint) and hardware counters
  (summed raw values, at the midpoint of the mapped tick range);
- `args` carry the record's ids (event, submission, command buffer, executable, allocation ...).

Time: everything is placed in IREE host time (ns). Device ticks are mapped with the per-device
first/last clock fit against the clock samples' host-time brackets (their midpoints), so device
slices line up with host events; a device whose samples carry no brackets falls back to the driver
CPU timestamp fit. Device events that cannot be placed (invalid tick pair, no clock fit) are left
out and counted in `otherData`. Timestamps are rebased so the earliest event is at 0 and written
as exact decimal microseconds (`ts`, `dur`, three decimals = nanoseconds).

Chrome's JSON importer needs the complete events of one thread to nest; overlapping slices are
spread over extra lane threads (`... #2`, `#3`), keeping nested spans (an execute around its
dispatches) on one thread.

The file is streamed: events are formatted one track at a time, never as one big string.
Missing function metadata for a dispatch is a format error, as in `iree-profile`.
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass, field
from typing import Iterable, TextIO

import numpy as np

from amdgpu_cli.profile import schema
from amdgpu_cli.profile.clock import HOST_CPU_TIMESTAMP_NS, IREE_HOST_TIME_NS, ClockFit
from amdgpu_cli.profile.jsonl import string as json_string
from amdgpu_cli.profile.model import Model
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.tick_columns import map_tick_ranges

U32_MAX = schema.U32_MAX
F = schema.Flags
# Thread order inside a device process, per queue.
BATCH = 8192                   # events formatted and written together
KIND_ORDER = {"dispatch": 0, "device ops": 1, "host execution": 2, "command regions": 3,
              "queue events": 4, "memory": 5}


def _us(ns: int) -> str:
    """Non-negative nanoseconds as exact decimal microseconds."""
    return f"{ns // 1000}.{ns % 1000:03d}"


@dataclass
class Events:
    """One family of timed records on the tracks of their queues."""

    kind: str                   # thread kind (KIND_ORDER) and event category
    phase: str                  # "X" or "i"
    pdo: np.ndarray             # physical device ordinal of each event
    queue: np.ndarray           # queue ordinal (U32_MAX: device scope)
    stream: np.ndarray          # stream id
    start: np.ndarray           # host ns
    end: np.ndarray             # host ns (== start for instants)
    names: list[str]            # JSON text
    args: "_Args"               # formats the JSON args of the events at given indices
    keyed: np.ndarray | None = None   # which events are named by a function key (slices only)

    def __len__(self) -> int:
        return len(self.start)


@dataclass
class _Counter:
    pid: int
    name: str                   # JSON text
    times: list[int] = field(default_factory=list)
    values: list[str] = field(default_factory=list)   # JSON numbers


@dataclass
class TraceStats:
    """What went into the trace (also written to the trace's `otherData`)."""

    slices: dict[str, int] = field(default_factory=dict)
    instants: dict[str, int] = field(default_factory=dict)
    counter_samples: int = 0
    skipped_invalid: int = 0
    skipped_no_clock: int = 0


class _Clocks:
    """Per device: the clock fit that places device ticks in IREE host time (bracket midpoints),
    else in driver CPU time."""

    def __init__(self, model: Model):
        self._model = model

    def fit(self, pdo: int) -> ClockFit | None:
        return (self._model.clock_fit(pdo, IREE_HOST_TIME_NS)
                or self._model.clock_fit(pdo, HOST_CPU_TIMESTAMP_NS))

    def map(self, pdos: np.ndarray, starts: np.ndarray, ends: np.ndarray, stats: TraceStats):
        """Host (start, end) of the events that could be placed, and which ones those are."""
        placed = map_tick_ranges(self.fit, pdos, starts, ends)
        stats.skipped_invalid += int((~placed.valid).sum())
        stats.skipped_no_clock += int((placed.valid & ~placed.placed).sum())
        keep = placed.placed
        return placed.start_ns[keep], placed.end_ns[keep], keep


class _Args:
    """Formats the `args` object of a family's events on demand, for a few rows at a time (the
    text of a million events' args is never held at once)."""

    def __init__(self, template: str, rows: np.ndarray, fields: list[str], extra=None):
        self.template, self.rows, self.fields, self.extra = template, rows, fields, extra

    def __call__(self, index: np.ndarray) -> list[str]:
        rows = self.rows[index]
        columns = []
        for name in self.fields:
            column = rows[name]
            if column.ndim == 2:
                columns.extend(column[:, k].tolist() for k in range(column.shape[1]))
            else:
                columns.append(column.tolist())
        if self.extra is not None:
            columns.append(self.extra(rows))
        return [self.template % args for args in zip(*columns)]


def _named(table: dict[int, str], prefix: str, values: list[int]) -> list[str]:
    cache = {v: json_string(prefix + table.get(v, "unknown")) for v in set(values)}
    return [cache[v] for v in values]


class TraceBuilder:
    """Collects the timed families of a bundle (also used by `plot`)."""

    def __init__(self, bundle: Bundle):
        self.bundle = bundle
        self.model = Model.build(bundle)
        self.clocks = _Clocks(self.model)
        self.stats = TraceStats()
        self.families: list[Events] = []
        self.counters: dict[tuple[int, str], _Counter] = {}
        self._keys: dict[tuple[int, int, int], str] = {}

    def key(self, pdo: int, executable_id: int, ordinal: int) -> str:
        key = self._keys.get((pdo, executable_id, ordinal))
        if key is None:
            key = json_string(self.model.dispatch_key(pdo, executable_id, ordinal))
            self._keys[(pdo, executable_id, ordinal)] = key
        return key

    def counter(self, pdo: int, name: str) -> _Counter:
        pid = _pid(pdo)
        c = self.counters.get((pid, name))
        if c is None:
            c = self.counters[(pid, name)] = _Counter(pid, json_string(name))
        return c

    # --- families

    def dispatches(self) -> None:
        typed = self.bundle.typed("dispatch-events")
        if not len(typed):
            return
        headers = self.bundle.records[typed.chunk]
        pdos = headers["physical_device_ordinal"]
        r = typed.rows
        # Every dispatch needs its function, placed on the timeline or not (as in iree-profile).
        names = [self.key(p, e, o) for p, e, o in zip(
            pdos.tolist(), r["executable_id"].tolist(), r["function_ordinal"].tolist())]
        start, end, keep = self.clocks.map(pdos, r["start_tick"], r["end_tick"], self.stats)
        r, pdos, headers = r[keep], pdos[keep], headers[keep]
        names = [n for n, k in zip(names, keep.tolist()) if k]
        args = _Args('{"event_id":%d,"submission_id":%d,"command_buffer_id":%d,'
                    '"command_index":%d,"executable_id":%d,"function_ordinal":%d,'
                    '"workgroup_count":[%d,%d,%d],"workgroup_size":[%d,%d,%d],'
                    '"start_tick":%d,"end_tick":%d}', r,
                    ["event_id", "submission_id", "command_buffer_id", "command_index",
                     "executable_id", "function_ordinal", "workgroup_count", "workgroup_size",
                     "start_tick", "end_tick"])
        self.families.append(Events("dispatch", "X", pdos, headers["queue_ordinal"],
                                     headers["stream_id"], start, end, names, args,
                                     np.ones(len(r), bool)))

    def device_ops(self) -> None:
        r = self.bundle.typed("queue-device-events").rows
        if not len(r):
            return
        start, end, keep = self.clocks.map(r["physical_device_ordinal"], r["start_tick"],
                                           r["end_tick"], self.stats)
        r = r[keep]
        args = _Args('{"event_id":%d,"submission_id":%d,"command_buffer_id":%d,'
                    '"allocation_id":%d,"operation_count":%d,"payload_length":%d,'
                    '"start_tick":%d,"end_tick":%d}', r,
                    ["event_id", "submission_id", "command_buffer_id", "allocation_id",
                     "operation_count", "payload_length", "start_tick", "end_tick"])
        self.families.append(Events(
            "device ops", "X", r["physical_device_ordinal"], r["queue_ordinal"], r["stream_id"],
            start, end, _named(schema.QUEUE_EVENT_TYPE_NAMES, "queue-device:",
                               r["type"].tolist()), args))

    def host_execution(self) -> None:
        r = self.bundle.typed("host-execution-events").rows
        start, end = r["start_host_time_ns"], r["end_host_time_ns"]
        valid = (start >= 0) & (end >= start)
        self.stats.skipped_invalid += int((~valid).sum())
        r = r[valid]
        if not len(r):
            return
        keyed = ((r["executable_id"] != 0) & (r["function_ordinal"] != U32_MAX)).tolist()
        ops = _named(schema.QUEUE_EVENT_TYPE_NAMES, "host:", r["type"].tolist())
        names = [self.key(p, e, o) if k else op for k, op, p, e, o in zip(
            keyed, ops, r["physical_device_ordinal"].tolist(), r["executable_id"].tolist(),
            r["function_ordinal"].tolist())]
        args = _Args('{"event_id":%d,"submission_id":%d,"command_buffer_id":%d,'
                    '"command_index":%d,"executable_id":%d,"function_ordinal":%d,'
                    '"allocation_id":%d,"workgroup_count":[%d,%d,%d],'
                    '"workgroup_size":[%d,%d,%d],"tile_count":%d,"tile_duration_sum_ns":%d,'
                    '"operation_count":%d}', r,
                    ["event_id", "submission_id", "command_buffer_id", "command_index",
                     "executable_id", "function_ordinal", "allocation_id", "workgroup_count",
                     "workgroup_size", "tile_count", "tile_duration_sum_ns", "operation_count"])
        self.families.append(Events(
            "host execution", "X", r["physical_device_ordinal"], r["queue_ordinal"],
            r["stream_id"], r["start_host_time_ns"], r["end_host_time_ns"], names, args,
            np.array(keyed, bool)))

    def command_regions(self) -> None:
        r = self.bundle.typed("command-region-events").rows
        start, end = r["start_host_time_ns"], r["end_host_time_ns"]
        valid = (start >= 0) & (end >= start)
        self.stats.skipped_invalid += int((~valid).sum())
        r = r[valid]
        if not len(r):
            return
        names = [json_string(f"region {i}") for i in r["index"].tolist()]
        args = _Args('{"event_id":%d,"submission_id":%d,"command_buffer_id":%d,'
                    '"block_sequence":%d,"epoch":%d,"dispatch_count":%d,"tile_count":%d,'
                    '"worker_count":%d}', r,
                    ["event_id", "submission_id", "command_buffer_id", "block_sequence",
                     "epoch", "dispatch_count", "tile_count", "worker_count"])
        self.families.append(Events(
            "command regions", "X", r["physical_device_ordinal"], r["queue_ordinal"],
            r["stream_id"], r["start_host_time_ns"], r["end_host_time_ns"], names, args))

    def queue_events(self) -> None:
        r = self.bundle.typed("queue-events").rows
        known = r["host_time_ns"] > 0
        self.stats.skipped_invalid += int((~known).sum())
        r = r[known]
        if not len(r):
            return
        args = _Args('{"event_id":%d,"submission_id":%d,"command_buffer_id":%d,'
                     '"allocation_id":%d,"ready_host_time_ns":%d,"wait_count":%d,'
                     '"signal_count":%d,"barrier_count":%d,"operation_count":%d,'
                     '"payload_length":%d,"dependency_strategy":%s}', r,
                     ["event_id", "submission_id", "command_buffer_id", "allocation_id",
                      "ready_host_time_ns", "wait_count", "signal_count", "barrier_count",
                      "operation_count", "payload_length"],
                     lambda rows: _named(schema.DEPENDENCY_STRATEGY_NAMES, "",
                                         rows["dependency_strategy"].tolist()))
        self.families.append(Events(
            "queue events", "i", r["physical_device_ordinal"], r["queue_ordinal"], r["stream_id"],
            r["host_time_ns"], r["host_time_ns"],
            _named(schema.QUEUE_EVENT_TYPE_NAMES, "queue:", r["type"].tolist()), args))

    def memory(self) -> None:
        r = self.bundle.typed("memory-events").rows
        known = r["host_time_ns"] > 0
        self.stats.skipped_invalid += int((~known).sum())
        r = r[known]
        if not len(r):
            return
        args = _Args('{"event_id":%d,"allocation_id":%d,"pool_id":%d,"backing_id":%d,'
                    '"submission_id":%d,"memory_type":%d,"buffer_usage":%d,"offset":%d,'
                    '"length":%d,"flags":%d}', r,
                    ["event_id", "allocation_id", "pool_id", "backing_id", "submission_id",
                     "memory_type", "buffer_usage", "offset", "length", "flags"])
        self.families.append(Events(
            "memory", "i", r["physical_device_ordinal"], r["queue_ordinal"],
            np.zeros(len(r), np.uint64), r["host_time_ns"], r["host_time_ns"],
            _named(schema.MEMORY_EVENT_TYPE_NAMES, "memory:", r["type"].tolist()), args))
        # Running bytes of queue allocations per device, in host time order.
        queue_ops = np.nonzero((r["type"] == 7) | (r["type"] == 8))[0]
        order = queue_ops[np.argsort(r["host_time_ns"][queue_ops], kind="stable")]
        totals: dict[int, int] = {}
        for kind, pdo, t, length in zip(r["type"][order].tolist(),
                                        r["physical_device_ordinal"][order].tolist(),
                                        r["host_time_ns"][order].tolist(),
                                        r["length"][order].tolist()):
            total = totals.get(pdo, 0) + (length if kind == 7 else -length)
            totals[pdo] = total
            c = self.counter(pdo, "queue allocation bytes")
            c.times.append(t)
            c.values.append(str(total))

    def metrics(self) -> None:
        typed = self.bundle.typed("device-metric-samples", strict=True)
        descriptors = self.model.metric_descriptors
        data = memoryview(self.bundle.data)
        for row, offset in zip(typed.rows.tolist(), typed.offsets.tolist()):
            _, _, _, source_id, begin, end, _, _, pdo, count = row
            if begin < 0 or end < begin:
                continue
            t = begin + (end - begin) // 2
            base = offset + schema.METRIC_SAMPLE.itemsize
            for j in range(count):
                metric_id, bits = struct.unpack_from("<QQ", data, base + 24 * j)
                d = descriptors.get((source_id, metric_id))
                if d is None:
                    continue
                kind = int(d.record["value_kind"])
                if kind == 1:
                    value = str(bits - (1 << 64) if bits >> 63 else bits)
                elif kind == 2:
                    value = str(bits)
                elif kind == 3:
                    x = struct.unpack("<d", struct.pack("<Q", bits))[0]
                    if x != x or x in (float("inf"), float("-inf")):
                        continue
                    value = repr(x)
                else:
                    continue
                c = self.counter(pdo, d.name or f"metric {metric_id}")
                c.times.append(t)
                c.values.append(value)

    def hardware_counters(self) -> None:
        typed = self.bundle.typed("counter-samples", strict=True)
        if not len(typed):
            return
        counters: dict[int, list[tuple[str, int, int]]] = {}
        catalog = self.bundle.typed("counters", strict=True)
        seen = set()
        for i, row in enumerate(catalog.rows):
            set_id, ordinal = int(row["counter_set_id"]), int(row["counter_ordinal"])
            if (set_id, ordinal) in seen:
                continue
            seen.add((set_id, ordinal))
            block, name, _ = catalog.strings(i, int(row["block_name_length"]),
                                             int(row["name_length"]),
                                             int(row["description_length"]))
            counters.setdefault(set_id, []).append(
                (f"{block}.{name}" if block else name, int(row["sample_value_offset"]),
                 int(row["sample_value_count"])))
        r = typed.rows
        ranged = (r["flags"] & F.SAMPLE_DEVICE_TICK_RANGE) != 0
        data = memoryview(self.bundle.data)
        start, end, placed = self.clocks.map(r["physical_device_ordinal"],
                                             np.where(ranged, r["start_tick"], 0), r["end_tick"],
                                             TraceStats())
        middle = start + (end - start) // 2
        placed_rows = np.nonzero(placed)[0]
        for row, t in zip(placed_rows.tolist(), middle.tolist()):
            set_id, n = int(r["counter_set_id"][row]), int(r["sample_value_count"][row])
            if set_id not in counters:
                continue
            values = struct.unpack_from(f"<{n}Q", data,
                                        int(typed.offsets[row]) + schema.COUNTER_SAMPLE.itemsize)
            pdo = int(r["physical_device_ordinal"][row])
            for name, first, count in counters[set_id]:
                if first + count <= n:
                    c = self.counter(pdo, name)
                    c.times.append(t)
                    c.values.append(str(sum(values[first:first + count])))

    # --- output

    def build(self, *, slices_only: bool = False) -> "TraceBuilder":
        self.dispatches()
        self.device_ops()
        self.host_execution()
        if not slices_only:
            self.command_regions()
            self.queue_events()
            self.memory()
            self.metrics()
            self.hardware_counters()
        return self

    def origin(self) -> int:
        firsts = [int(f.start.min()) for f in self.families if len(f)]
        firsts += [min(c.times) for c in self.counters.values() if c.times]
        return min(firsts) if firsts else 0

    def process_names(self) -> dict[int, str]:
        session = next((self.bundle.name(i) for i, t in enumerate(
            self.bundle.records["record_type"].tolist()) if t == schema.RecordType.SESSION_BEGIN),
            "")
        names = {}
        devices = self.bundle.typed("devices").rows
        for d in devices:
            pdo = int(d["physical_device_ordinal"])
            pid = _pid(pdo)
            if pid in names:
                continue
            label = f"device {pdo}"
            if int(d["flags"]) & F.DEVICE_UUID:
                label += f" {bytes(d['physical_device_uuid']).hex()}"
            names[pid] = f"{session} {label}".strip()
        return names


def _pid(pdo: int) -> int:
    return 0 if pdo == U32_MAX else pdo + 1


def _lanes(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Lane per slice (slices pre-sorted by start, longest first) so that each lane nests."""
    running = np.maximum.accumulate(end)
    if len(start) < 2 or bool(np.all(start[1:] >= running[:-1])):
        return np.zeros(len(start), np.int64)
    stacks: list[list[int]] = []
    lanes = np.empty(len(start), np.int64)
    for k, (s, e) in enumerate(zip(start.tolist(), end.tolist())):
        for lane, stack in enumerate(stacks):
            while stack and stack[-1] <= s:
                stack.pop()
            if not stack or e <= stack[-1]:
                stack.append(e)
                lanes[k] = lane
                break
        else:
            stacks.append([e])
            lanes[k] = len(stacks) - 1
    return lanes


class _Writer:
    """Streams events as comma-separated JSON objects into `"traceEvents":[...]`."""

    def __init__(self, out: TextIO):
        self.out = out
        self.first = True

    def write(self, events: Iterable[str]) -> None:
        events = iter(events)
        while batch := list(itertools.islice(events, BATCH)):
            text = ",\n".join(batch)
            self.out.write(text if self.first else ",\n" + text)
            self.first = False


def write_trace(bundle: Bundle, out: TextIO) -> TraceStats:
    """Writes the bundle as Chrome trace-event JSON; returns what it wrote."""
    builder = TraceBuilder(bundle)
    builder.build()
    origin = builder.origin()
    stats = builder.stats
    process_names = builder.process_names()
    threads: dict[tuple[int, str, int], tuple[int, tuple]] = {}   # (pid, track, lane) -> tid

    out.write('{"displayTimeUnit":"ns","traceEvents":[\n')
    writer = _Writer(out)
    for family in builder.families:
        counts = stats.slices if family.phase == "X" else stats.instants
        counts[family.kind] = counts.get(family.kind, 0) + len(family)
        pids = np.array([_pid(p) for p in family.pdo.tolist()], np.int64)
        track = np.stack([pids, family.queue.astype(np.int64),
                          family.stream.astype(np.uint64).view(np.int64)])
        order = np.lexsort((-(family.end - family.start), family.start, track[2], track[1],
                            track[0]))
        keys = track[:, order].T
        splits = np.nonzero(np.any(keys[1:] != keys[:-1], axis=1))[0] + 1
        for group in np.split(order, splits):
            if not len(group):
                continue
            pid, queue, stream = (int(x) for x in track[:, group[0]])
            stream = stream & ((1 << 64) - 1)
            prefix = ("device-scope" if queue == U32_MAX
                      else f"queue {queue} stream {stream}")
            name = prefix if family.kind == "dispatch" else f"{prefix} {family.kind}"
            sort_key = (queue, stream, KIND_ORDER[family.kind])
            start = family.start[group] - origin
            end = family.end[group] - origin
            lanes = (_lanes(start, end) if family.phase == "X"
                     else np.zeros(len(group), np.int64))
            tids = []
            for lane in range(int(lanes.max()) + 1):
                key = (pid, name, lane)
                if key not in threads:
                    threads[key] = (len(threads) + 1, (*sort_key, lane))
                tids.append(threads[key][0])
            names = family.names
            cat = json_string(family.kind).replace("%", "%%")
            if family.phase == "X":
                template = ('{"name":%s,"cat":' + cat + ',"ph":"X","ts":%s,"dur":%s,"pid":'
                            + str(pid) + ',"tid":%d,"args":%s}')
            else:
                template = ('{"name":%s,"cat":' + cat + ',"ph":"i","s":"t","ts":%s,"pid":'
                            + str(pid) + ',"tid":%d,"args":%s}')
            for k in range(0, len(group), BATCH):
                part = group[k:k + BATCH]
                s_ns, e_ns = start[k:k + BATCH].tolist(), end[k:k + BATCH].tolist()
                tid = [tids[lane] for lane in lanes[k:k + BATCH].tolist()]
                args = family.args(part)
                part = part.tolist()
                if family.phase == "X":
                    writer.write([template % (names[g], _us(a), _us(b - a), t, x)
                                  for g, a, b, t, x in zip(part, s_ns, e_ns, tid, args)])
                else:
                    writer.write([template % (names[g], _us(a), t, x)
                                  for g, a, t, x in zip(part, s_ns, tid, args)])

    for counter in builder.counters.values():
        stats.counter_samples += len(counter.times)
        template = ('{"name":%s,"cat":"counter","ph":"C","ts":%%s,"pid":%d,"tid":0,'
                    '"args":{"value":%%s}}' % (counter.name.replace("%", "%%"), counter.pid))
        writer.write(template % (_us(t - origin), v) for t, v in zip(counter.times,
                                                                       counter.values))

    # Metadata: process and thread names, and an order that follows devices and queues.
    pids = sorted({pid for pid, _, _ in threads} | {c.pid for c in builder.counters.values()}
                  | set(process_names))
    meta = []
    for pid in pids:
        label = process_names.get(pid, "device-scope" if pid == 0 else f"device {pid - 1}")
        meta.append('{"name":"process_name","ph":"M","ts":0,"pid":%d,"tid":0,"args":{"name":%s}}'
                    % (pid, json_string(label)))
        meta.append('{"name":"process_sort_index","ph":"M","ts":0,"pid":%d,"tid":0,'
                    '"args":{"sort_index":%d}}' % (pid, pid))
    ranked = sorted(threads.items(), key=lambda item: (item[0][0], item[1][1]))
    for rank, ((pid, name, lane), (tid, _)) in enumerate(ranked):
        label = name if lane == 0 else f"{name} #{lane + 1}"
        meta.append('{"name":"thread_name","ph":"M","ts":0,"pid":%d,"tid":%d,"args":{"name":%s}}'
                    % (pid, tid, json_string(label)))
        meta.append('{"name":"thread_sort_index","ph":"M","ts":0,"pid":%d,"tid":%d,'
                    '"args":{"sort_index":%d}}' % (pid, tid, rank))
    writer.write(meta)

    other = ('"otherData":{"producer":"amdgpu-profile","time_domain":"iree_host_time_ns",'
             '"origin_ns":%d,%s,"counter_samples":%d,"skipped_invalid":%d,'
             '"skipped_no_clock":%d}' % (
                 origin, ",".join(
                     f'"{kind.replace(" ", "_")}_slices":{n}' for kind, n in stats.slices.items())
                 or '"slices":0', stats.counter_samples, stats.skipped_invalid,
                 stats.skipped_no_clock))
    out.write("\n]," + other + "}\n")
    return stats

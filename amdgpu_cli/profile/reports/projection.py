"""Shared machinery of the four projection reports: `dispatch`, `executable`, `command`, `queue`.

`Projection.build(bundle, mode, options)` does what iree-profile's projection pass does: it builds
the metadata model, then joins every event against it and aggregates, in whole numpy columns:

- device dispatch events (`dispatch-events` chunks; device, queue and stream come from the chunk
  header) and host dispatch spans (`host-execution-events` records of type `dispatch`) are matched
  by `--id` (the id the mode names: event, executable, command buffer or submission), resolved to
  a function key, and matched by `--filter` against that key;
- matched device events are grouped per function (device, executable, function), per command
  buffer execution (command buffer, submission, device, queue, stream; direct dispatches skipped)
  and per queue submission (device, queue, stream, submission); host spans per function and per
  command buffer execution;
- in `queue` mode the queue-events, queue-device-events and host-execution-events records whose
  submission matches `--id` and whose type name matches `--filter` are kept as they are.

Groups are numbered in order of their first matched event in the file, as IREE's aggregate tables
are. Every id-matched event must name a known queue (and, in `command` mode, a known command
buffer) and a known function, else the report fails with DATA_LOSS naming the first such event in
file order.

Numbers follow IREE exactly: durations are valid when `start != 0 && end != 0 && end >= start`
(device ticks) or `start >= 0 && end >= start` (host ns); totals are exact integers (IREE fails
with OUT_OF_RANGE where they overflow); means and standard deviations are IREE's running (Welford)
values with its own Newton square root. Large groups use a two-pass mean and variance, and fall back
to the running computation wherever the printed `%.3f` value could differ.

Sources: IREE runtime/src/iree/tooling/profile/{dispatch.c,projection.c,queue_query.c};
../shared/reference/ireeprof.md sections 4.5-4.8.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from amdgpu_cli.errors import AmdgpuCliError, MissingMetadataError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.clock import INT64_MAX
from amdgpu_cli.profile.tick_columns import scale_ticks
from amdgpu_cli.profile.model import Model
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports.aggregates import (  # noqa: F401 - DISPATCH..QUEUE re-exported
    COMMAND, DISPATCH, DISPATCH_EVENT_ROW, EXECUTABLE, HOST_DISPATCH_EVENT_ROW, HOST_TIMING,
    ID_FIELD, MODES, QUEUE, Aggregates, Counts, Table)
from amdgpu_cli.profile.reports.toolkit import (Columns, RowBlock, Segments, Strings,
                                                 distinct, equals_u64, exact_sum, group_ids,
                                                 interleave, iree_sqrt, welford)

U64_MAX = schema.U64_MAX
HOST_DISPATCH_TYPE = 2  # queue/host-execution event type `dispatch`

# Event fields the aggregate tables read (the key, the timing, the groupings).
_DEVICE_FIELDS = ("executable_id", "function_ordinal", "command_buffer_id", "submission_id",
                  "start_tick", "end_tick")
_HOST_FIELDS = ("physical_device_ordinal", "queue_ordinal", "stream_id", "executable_id",
                "function_ordinal", "command_buffer_id", "submission_id", "start_host_time_ns",
                "end_host_time_ns", "tile_count", "tile_duration_sum_ns")


# --- numeric helpers ------------------------------------------------------------------------------

def _printed_stable(value: float, rel: float) -> bool:
    """True when `%.3f` prints every value within `rel` (relative) of `value` the same."""
    return "%.3f" % (value * (1.0 - rel)) == "%.3f" % (value * (1.0 + rel))


# --- per-device clock fits ------------------------------------------------------------------------

class Clocks:
    """The model's per-device clock fits, and fitted durations over event columns."""

    def __init__(self, model: Model):
        self.fit = model.clock_fit

    def ns_per_tick(self, pdo: int) -> float:
        fit = self.fit(pdo)
        return fit.ns_per_tick if fit is not None else 0.0

    def ns_column(self, pdo: np.ndarray, ticks: np.ndarray, valid: np.ndarray):
        """Per event: (fitted duration ns, 0 where invalid/unfitted/overflowing; fit available)."""
        ns = np.zeros(len(ticks), np.int64)
        available = np.zeros(len(ticks), bool)
        for device in distinct(pdo):
            fit = self.fit(device)
            if fit is None:
                continue
            on_device = pdo == device
            available |= on_device
            pick = np.flatnonzero(on_device & valid)
            ns[pick] = scale_ticks(fit, ticks[pick])[0]
        return ns, available


# --- matched events -------------------------------------------------------------------------------

@dataclass
class Events:
    """The matched events of one timing domain (device dispatches or host dispatch spans)."""

    rows: Columns                   # fields of the matched dispatch-event / host-execution rows
    chunk: np.ndarray               # file record index of each row
    pdo: np.ndarray
    queue: np.ndarray
    stream: np.ndarray
    keys: list[str]                 # function key per key group
    key_index: np.ndarray           # key group of each row
    valid: np.ndarray
    start: np.ndarray
    end: np.ndarray

    duration: np.ndarray = field(init=False)  # valid durations, 0 where invalid

    def __post_init__(self) -> None:
        self.duration = np.where(self.valid, self.end - self.start, 0).astype(self.start.dtype)

    def __len__(self) -> int:
        return len(self.rows)


@dataclass
class QueueQuery:
    """Queue-mode event lists: records kept as they are, in file order."""

    queue_events: Columns
    device_events: Columns
    host_execution_events: Columns
    truncated_chunks: int = 0
    dropped_records: int = 0


class _Failures:
    """Collects DATA_LOSS candidates and raises the one IREE meets first in file order."""

    def __init__(self) -> None:
        self.items: list[tuple[tuple[int, int, int], Exception]] = []

    def add(self, order: tuple[int, int, int], error: Exception) -> None:
        self.items.append((order, error))

    def first(self) -> tuple[tuple[int, int, int], Exception] | None:
        return min(self.items, key=lambda item: item[0]) if self.items else None

    def raise_first(self) -> None:
        if self.items:
            raise self.first()[1]


# --- the projection -------------------------------------------------------------------------------

class Projection(Aggregates):
    """Everything the four projection reports print, computed once per invocation: the
    aggregates (built here from whole columns) and the matched events."""

    def __init__(self, bundle: Bundle, model: Model, mode: str, options: ReportOptions):
        super().__init__(model, mode, options)
        self.bundle = bundle
        self.clocks = Clocks(model)
        self.device: Events | None = None
        self.host: Events | None = None
        self.queue_query: QueueQuery | None = None

    @classmethod
    def build(cls, bundle: Bundle, mode: str, options: ReportOptions) -> "Projection":
        self, failure = cls.match(bundle, mode, options)
        if failure is not None:
            raise failure[1]
        if not options.dispatch_events:
            self.aggregate()
        return self

    @classmethod
    def match(cls, bundle: Bundle, mode: str, options: ReportOptions):
        """The matched events without aggregate tables, and the first metadata failure in file
        order as ((record, 1, row), error) or None, not raised (`build` raises it). Events of a
        function whose metadata is missing are left out; every other id-matched event is kept."""
        if mode not in MODES:
            raise ValueError(mode)
        bundle.check()
        model = Model.build(bundle)
        self = cls(bundle, model, mode, options)
        failures = _Failures()
        if mode == QUEUE:
            self.queue_query = self._queue_query(failures)
        self.device = self._device_events(failures)
        self.host = self._host_events(failures)
        return self, failures.first()

    def aggregate(self) -> None:
        """The per-function, per-command-buffer and per-submission tables of the matched events.
        `queue` prints the submission table and how many host executions there are: where no
        group's total could pass its limit (the totals over every valid event do not), the
        per-function and device execution tables are left empty and the host execution table
        holds its groups alone; else every table is built, for its checks."""
        full = self.mode != QUEUE or not self._totals_fit()
        self._aggregate_device(full)
        self._aggregate_host(full)

    def _totals_fit(self) -> bool:
        """Whether the totals over every valid matched event fit the limits of any group's."""
        d, h = self.device, self.host
        return (exact_sum(d.duration[d.valid]) <= U64_MAX
                and exact_sum(h.duration[h.valid]) <= INT64_MAX
                and exact_sum(h.rows["tile_count"][h.valid]) <= U64_MAX
                and exact_sum(h.rows["tile_duration_sum_ns"][h.valid].clip(0)) <= INT64_MAX)

    # --- id / metadata / key matching -------------------------------------------------------------

    def _fields(self, located, aggregate: tuple[str, ...]) -> tuple[str, ...]:
        """The event fields this run reads, gathered together in one pass over the records."""
        if self.options.dispatch_events:
            return located.content_type.dtype.names  # event rows print nearly every field
        return aggregate + ((ID_FIELD[self.mode],) if self.options.id >= 0 else ())

    def _id_mask(self, rows: Columns) -> np.ndarray | None:
        if self.options.id < 0:
            return None
        return equals_u64(rows[ID_FIELD[self.mode]], self.options.id)

    def _match(self, what: str, rows: Columns, chunk, pdo, queue, stream,
               failures: _Failures) -> tuple[np.ndarray, list[str], np.ndarray]:
        """Validates id-matched rows and resolves their keys.

        Returns (indices of rows matching id and filter, keys, key group of each such row).
        """
        model = self.model
        n = len(rows)
        fail_order = None
        fail_error = None

        def note(row: int, error: Exception) -> None:
            nonlocal fail_order, fail_error
            order = (int(chunk[row]), 1, rows.position(row))
            if fail_order is None or order < fail_order:
                fail_order, fail_error = order, error

        # Queue metadata for every (device, queue, stream).
        _, first = group_ids(pdo, queue, stream)
        for row in first.tolist():
            key = (int(pdo[row]), int(queue[row]), int(stream[row]))
            if key not in model.queues:
                sub = int(rows["submission_id"][row])
                note(row, MissingMetadataError(
                    f"{what} references missing queue metadata device={key[0]} queue={key[1]} "
                    f"stream={key[2]} submission={sub}"))
        # Command-buffer metadata (command mode only).
        if self.mode == COMMAND and n:
            cbs = rows["command_buffer_id"]
            known = np.array(sorted(model.command_buffers), dtype=np.uint64)
            missing = np.flatnonzero((cbs != 0) & ~np.isin(cbs, known))
            if len(missing):
                row0 = int(missing[0])
                note(row0, MissingMetadataError(
                    f"{what} references missing command-buffer metadata command_buffer="
                    f"{int(cbs[row0])} submission={int(rows['submission_id'][row0])}"))
        # Function keys per (device, executable, function).
        kid, kfirst = group_ids(pdo, rows["executable_id"], rows["function_ordinal"])
        keys: list[str | None] = []
        for row in kfirst.tolist():
            try:
                keys.append(model.dispatch_key(int(pdo[row]), int(rows["executable_id"][row]),
                                               int(rows["function_ordinal"][row])))
            except MissingMetadataError as e:
                keys.append(None)
                note(row, e)
        if fail_error is not None:
            failures.add(fail_order, fail_error)
        key_ok = np.array([k is not None and self.options.matches(k) for k in keys], dtype=bool)
        matched = np.flatnonzero(key_ok[kid]) if len(keys) else np.zeros(0, np.intp)
        # Renumber the key groups over the matched rows only.
        used, remap = np.unique(kid[matched], return_inverse=True)
        return matched, [keys[k] for k in used.tolist()], remap.reshape(-1)

    def _device_events(self, failures: _Failures) -> Events:
        located = self.bundle.locate("dispatch-events")
        located.load(*self._fields(located, _DEVICE_FIELDS))
        rows = Columns(located)
        chunk = located.chunk
        if len(rows):
            chunks, inverse = np.unique(chunk, return_inverse=True)
            headers = self.bundle.records[chunks]
            pdo = headers["physical_device_ordinal"][inverse]
            queue = headers["queue_ordinal"][inverse]
            stream = headers["stream_id"][inverse]
        else:
            pdo = queue = np.zeros(0, np.uint32)
            stream = np.zeros(0, np.uint64)
        self.device_counts.total = len(rows)
        id_mask = self._id_mask(rows)
        if id_mask is not None:
            sel = np.flatnonzero(id_mask)
            rows, chunk = rows.take(sel), chunk[sel]
            pdo, queue, stream = pdo[sel], queue[sel], stream[sel]
        matched, keys, key_index = self._match("dispatch event", rows, chunk, pdo, queue,
                                               stream, failures)
        rows = rows.take(matched)
        start, end = rows["start_tick"], rows["end_tick"]
        valid = (start != 0) & (end != 0) & (end >= start)
        events = Events(rows, chunk[matched], pdo[matched], queue[matched], stream[matched],
                        keys, key_index, valid, start, end)
        self._count(self.device_counts, valid)
        return events

    def _host_events(self, failures: _Failures) -> Events:
        located = self.bundle.locate("host-execution-events")
        # Event rows print every field of the dispatch spans alone: those are read for the
        # selected records (Columns), not for every host event.
        located.load("type", *(() if self.options.dispatch_events
                               else self._fields(located, _HOST_FIELDS)))
        rows = Columns.where(located, located["type"] == HOST_DISPATCH_TYPE)
        chunk = located.chunk if rows.index is None else located.chunk[rows.index]
        self.host_counts.total = len(rows)
        id_mask = self._id_mask(rows)
        if id_mask is not None:
            sel = np.flatnonzero(id_mask)
            rows, chunk = rows.take(sel), chunk[sel]
        matched, keys, key_index = self._match(
            "host dispatch event", rows, chunk, rows["physical_device_ordinal"],
            rows["queue_ordinal"], rows["stream_id"], failures)
        rows = rows.take(matched)
        start, end = rows["start_host_time_ns"], rows["end_host_time_ns"]
        valid = (start >= 0) & (end >= start)
        events = Events(rows, chunk[matched], rows["physical_device_ordinal"],
                        rows["queue_ordinal"], rows["stream_id"], keys, key_index, valid,
                        start, end)
        self._count(self.host_counts, valid)
        return events

    @staticmethod
    def _count(counts: Counts, valid: np.ndarray) -> None:
        counts.matched = len(valid)
        counts.valid = int(np.count_nonzero(valid))
        counts.invalid = counts.matched - counts.valid

    # --- queue mode -------------------------------------------------------------------------------

    def _queue_query(self, failures: _Failures) -> QueueQuery:
        bundle, model = self.bundle, self.model
        truncated = dropped = 0
        kept = {}
        for suffix, what in (("queue-events", "queue event"),
                             ("queue-device-events", "queue device event"),
                             ("host-execution-events", "host execution event")):
            headers = bundle.records[bundle.chunk_indices(suffix)]
            flagged = (headers["chunk_flags"] & np.uint64(schema.CHUNK_FLAG_TRUNCATED)) != 0
            truncated += int(flagged.sum())
            dropped += int(headers["dropped_record_count"][flagged].sum(dtype=np.uint64))
            typed = bundle.locate(suffix)  # every field is printed: gathered in one pass
            typed.load(*typed.content_type.dtype.names)
            rows = typed
            mask = np.ones(len(rows), bool)
            if self.options.id >= 0:
                mask &= equals_u64(rows["submission_id"], self.options.id)
            if self.options.filter not in ("", "*") and len(rows):
                types, inverse = np.unique(rows["type"], return_inverse=True)
                ok = np.array([self.options.matches(schema.QUEUE_EVENT_TYPE_NAMES.get(int(t),
                                                                                     "unknown"))
                               for t in types.tolist()], dtype=bool)
                mask &= ok[inverse.reshape(-1)]
            matched = Columns.where(rows, mask)
            _, first = group_ids(matched["physical_device_ordinal"], matched["queue_ordinal"],
                                 matched["stream_id"])
            for row in first.tolist():
                key = (int(matched["physical_device_ordinal"][row]),
                       int(matched["queue_ordinal"][row]), int(matched["stream_id"][row]))
                if key not in model.queues:
                    position = matched.position(row)
                    failures.add((int(typed.chunk[position]), 0, position), MissingMetadataError(
                        f"{what} references missing queue metadata device={key[0]} "
                        f"queue={key[1]} stream={key[2]} "
                        f"submission={int(matched['submission_id'][row])}"))
            kept[suffix] = matched
        return QueueQuery(kept["queue-events"], kept["queue-device-events"],
                          kept["host-execution-events"], truncated, dropped)

    # --- aggregation ------------------------------------------------------------------------------

    def _aggregate_device(self, full: bool = True) -> None:
        ev = self.device
        duration = ev.duration
        if full:  # per function
            gid, first = group_ids(ev.pdo, ev.rows["executable_id"], ev.rows["function_ordinal"])
            table = _timing_table(gid, len(first), ev.valid, ev.start, ev.end, duration, U64_MAX,
                                  "dispatch aggregate tick total overflow")
            table.columns.update(
                pdo=ev.pdo[first], executable_id=ev.rows["executable_id"][first],
                function_ordinal=ev.rows["function_ordinal"][first],
                key=[ev.keys[k] for k in ev.key_index[first].tolist()])
            _last_geometry(table, gid, len(first), ev.rows)
            _welford_columns(table, gid, ev.valid, duration, [self.clocks.ns_per_tick(int(p))
                                                              for p in table["pdo"].tolist()])
            self.dispatch_groups = table
        # Per command-buffer execution (direct dispatches have no command buffer).
        if full:
            sel = np.flatnonzero(ev.rows["command_buffer_id"] != 0)
            self.command_groups = _span_table(
                ev, sel, ("command_buffer_id", "submission_id", "pdo", "queue", "stream"),
                U64_MAX, "command aggregate tick total overflow")
        # Per queue submission.
        self.submission_groups = _span_table(
            ev, np.arange(len(ev)), ("pdo", "queue", "stream", "submission_id"), U64_MAX,
            "queue aggregate tick total overflow")

    def _aggregate_host(self, full: bool = True) -> None:
        ev = self.host
        rows = ev.rows
        if (rows["tile_duration_sum_ns"][ev.valid] < 0).any():
            raise AmdgpuCliError("host dispatch aggregate total overflow", status="OUT_OF_RANGE")
        duration = ev.duration
        if full:
            gid, first = group_ids(ev.pdo, rows["executable_id"], rows["function_ordinal"])
            table = _timing_table(gid, len(first), ev.valid, ev.start, ev.end, duration,
                                  INT64_MAX, "host dispatch aggregate total overflow")
            table.columns.update(
                pdo=ev.pdo[first], executable_id=rows["executable_id"][first],
                function_ordinal=rows["function_ordinal"][first],
                key=[ev.keys[k] for k in ev.key_index[first].tolist()])
            _tile_columns(table, ev.valid, rows)
            _last_geometry(table, gid, len(first), rows)
            _welford_columns(table, gid, ev.valid, duration, None)
            self.host_groups = table
        sel = np.flatnonzero(rows["command_buffer_id"] != 0)
        keys = ("command_buffer_id", "submission_id", "pdo", "queue", "stream")
        if full:
            table = _span_table(ev, sel, keys, INT64_MAX, "host command aggregate total overflow")
            _tile_columns(table, ev.valid[sel], ev.rows.take(sel))
        else:  # the groups alone
            columns = [_column(ev, k)[sel] for k in keys]
            _, first = group_ids(*columns)
            table = Table({k: column[first] for k, column in zip(keys, columns)})
        self.host_command_groups = table

    # --- event rows (--dispatch_events) -----------------------------------------------------------

    def event_rows(self):
        """Matched dispatch_event and host_dispatch_event rows (blocks), in file order."""
        return interleave((self._device_event_rows(), self.device.chunk),
                          (self._host_event_rows(), self.host.chunk))

    def _device_event_rows(self) -> RowBlock:
        ev = self.device
        r = ev.rows
        ticks = ev.duration
        ns, fitted = self.clocks.ns_column(ev.pdo, ticks, ev.valid)
        keys = Strings(ev.key_index, ev.keys)
        return DISPATCH_EVENT_ROW.block(
            physical_device_ordinal=ev.pdo, queue_ordinal=ev.queue, stream_id=ev.stream,
            event_id=r["event_id"], submission_id=r["submission_id"],
            command_buffer_id=r["command_buffer_id"], command_index=r["command_index"],
            executable_id=r["executable_id"], function_ordinal=r["function_ordinal"], key=keys,
            flags=r["flags"], workgroup_count=r["workgroup_count"],
            workgroup_size=r["workgroup_size"], start_tick=ev.start, end_tick=ev.end,
            duration_ticks=ticks, valid=ev.valid, clock_fit_available=fitted, duration_ns=ns)

    def _host_event_rows(self) -> RowBlock:
        ev = self.host
        r = ev.rows
        keys = Strings(ev.key_index, ev.keys)
        return HOST_DISPATCH_EVENT_ROW.block(
            physical_device_ordinal=ev.pdo, queue_ordinal=ev.queue, stream_id=ev.stream,
            event_id=r["event_id"], submission_id=r["submission_id"],
            command_buffer_id=r["command_buffer_id"], command_index=r["command_index"],
            executable_id=r["executable_id"], function_ordinal=r["function_ordinal"], key=keys,
            flags=r["flags"], status_code=r["status_code"], workgroup_count=r["workgroup_count"],
            workgroup_size=r["workgroup_size"], start_host_time_ns=ev.start,
            end_host_time_ns=ev.end, duration_ns=ev.duration, valid=ev.valid,
            tile_count=r["tile_count"], tile_duration_sum_ns=r["tile_duration_sum_ns"])


# --- table builders -------------------------------------------------------------------------------

def _column(ev: Events, name: str) -> np.ndarray:
    if name in ("pdo", "queue", "stream"):
        return getattr(ev, name)
    return ev.rows[name]


def _timing_table(gid, ngroups, valid, start, end, duration, limit, overflow) -> Table:
    """count/valid/invalid, earliest start, latest end, min/max/total duration per group."""
    count = np.bincount(gid, minlength=ngroups).astype(np.int64)
    nvalid = np.bincount(gid[valid], minlength=ngroups).astype(np.int64)
    seg = Segments(gid[valid], ngroups)
    d = duration[valid]
    is_unsigned = start.dtype.kind == "u"
    total = seg.total(d, limit)
    if total is None:
        raise AmdgpuCliError(overflow, status="OUT_OF_RANGE")
    hi = U64_MAX if is_unsigned else INT64_MAX
    return Table({
        "count": count, "valid": nvalid, "invalid": count - nvalid,
        "earliest": seg.reduce(np.minimum, start[valid], hi),
        "latest": seg.reduce(np.maximum, end[valid], 0),
        "min": seg.reduce(np.minimum, d, hi), "max": seg.reduce(np.maximum, d, 0),
        "total": total, "_segments": seg,
    })


def _span_table(ev: Events, sel: np.ndarray, keys: tuple[str, ...], limit: int,
                overflow: str) -> Table:
    columns = [_column(ev, k)[sel] for k in keys]
    gid, first = group_ids(*columns)
    table = _timing_table(gid, len(first), ev.valid[sel], ev.start[sel], ev.end[sel],
                          ev.duration[sel], limit, overflow)
    for name, column in zip(keys, columns):
        table.columns[name] = column[first]
    return table


def _tile_columns(table: Table, valid, rows: Columns) -> None:
    seg: Segments = table["_segments"]
    tiles = seg.total(rows["tile_count"][valid], U64_MAX)
    tile_ns = seg.total(rows["tile_duration_sum_ns"][valid], INT64_MAX)
    if tiles is None or tile_ns is None:
        raise AmdgpuCliError("host dispatch aggregate total overflow", status="OUT_OF_RANGE")
    table.columns["tile_count"] = tiles
    table.columns["tile_duration_sum_ns"] = tile_ns


def _last_geometry(table: Table, gid, ngroups, rows) -> None:
    seg = Segments(gid, ngroups)
    last = seg.reduce(np.maximum, np.arange(len(gid)), 0)
    table.columns["last_workgroup_count"] = rows["workgroup_count"][last]
    table.columns["last_workgroup_size"] = rows["workgroup_size"][last]


# Groups with at most this many valid durations always take IREE's running computation.
_EXACT_WELFORD_LIMIT = 1024


def _welford_columns(table: Table, gid, valid, duration, ns_per_tick: list[float] | None) -> None:
    """IREE's running mean and standard deviation per group.

    Small groups run IREE's recurrence. Large groups take a two-pass mean and variance, which
    differ from the recurrence's by rounding only: by about n ulps for the mean and by about
    mean/stddev ulps for the deviation. Where that could change a printed `%.3f` value (ties,
    near-constant durations), the group runs the recurrence too.
    """
    seg: Segments = table["_segments"]
    n = table["valid"]
    ngroups = len(n)
    mean = np.zeros(ngroups)
    m2 = np.zeros(ngroups)
    d = duration[valid].astype(np.float64)
    if ngroups and len(d):
        total = seg.reduce(np.add, d, 0.0)
        mean = np.where(n > 0, total / np.maximum(n, 1), 0.0)
        m2 = seg.reduce(np.add, (d - mean[gid[valid]]) ** 2, 0.0)
        std = iree_sqrt(np.where(n > 1, m2 / np.maximum(n - 1, 1), 0.0))
        ds = seg.sorted(d)
        for k, g in enumerate(seg.present.tolist()):
            count = int(n[g])
            if count > _EXACT_WELFORD_LIMIT:
                scale = ns_per_tick[g] if ns_per_tick is not None else 1.0
                rel = 1e-9 + 4e-16 * count
                if std[g] > mean[g] * 1e-5 and all(
                        _printed_stable(v, rel) for v in (mean[g], std[g], mean[g] * scale,
                                                          std[g] * scale)):
                    continue
            mean[g], m2[g] = welford(ds[seg.starts[k]:seg.ends[k]].tolist())
    table.columns["mean"] = mean
    table.columns["stddev"] = iree_sqrt(np.where(n > 1, m2 / np.maximum(n - 1, 1), 0.0))

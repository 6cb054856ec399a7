"""`summary`: bundle health, record counts, clock fit and per-device dispatch timing.

Rows are the two JSONL row types iree-profile's `summary` prints: one `summary` row (record, chunk
and typed-record counts of every family) and one `device_summary` row per physical device, in the
order each device first appears in the file (device, queue, clock and metric-sample records by their
own ordinal; dispatch-event chunks by their chunk header's ordinal).

What fails, fails as in iree-profile: every family summary counts is walked as typed records (torn
records are DATA_LOSS), variable records must match their length fields (except executable
functions, which summary only counts), and when several records are bad the first in file order is
reported. No metadata model is needed: summary never joins events to functions or queues.

This is the exact walk over a `Bundle`: the command line first runs the one-pass native reducer
(`summary_native.py`, no numpy), which hands a bundle here whenever this walk must judge it (any
error, any sum past 2**64). Both fill the same counts; `summary_rows.py` makes the rows.

Speed: the high-volume event families are located in place. When every record of a family is
exactly its layout's size (what IREE's writers always produce) the records sit at a fixed stride,
so one vectorized read of the `record_length` column proves the walk, and the few fields summary
needs are gathered straight from the mapped file; anything else takes the reader's exact walk
(`Bundle.typed`), which also produces IREE's error. `locate_fixed` and `FixedRecords` are shared
with `statistics`.

Sources: IREE `tooling/profile/summary.c`; ../shared/reference/ireeprof.md sections 3, 4.2 and 7.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from amdgpu_cli.errors import AmdgpuCliError, BundleFormatError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.clock import DeviceClock
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports.summary_rows import DeviceSummary, Row, device_row, summary_row
from amdgpu_cli.profile.reports.toolkit import distinct, exact_sum

U64_MAX = schema.U64_MAX
F = schema.Flags
_CONTENT_INDEX = {ct.suffix: i for i, ct in enumerate(schema.CONTENT_TYPES)}


def overflow(message: str) -> AmdgpuCliError:
    return AmdgpuCliError(message, status="OUT_OF_RANGE")


# --- locating typed records in place ----------------------------------------------------------


# Plain classes, not dataclasses: this module is on the start-up path of `summary`.

class Chunks(NamedTuple):
    """The CHUNK records of one content type, in file order."""

    index: np.ndarray    # file record index of each chunk
    offset: np.ndarray   # file offset of each payload (int64)
    length: np.ndarray   # payload length (int64)


def chunks_of(bundle: Bundle, suffix: str) -> Chunks:
    index = bundle.chunk_indices(suffix)
    r = bundle.records[index]
    offset = r["offset"].astype(np.int64)
    offset += r["header_length"]
    offset += r["content_type_length"]
    offset += r["name_length"]
    return Chunks(index, offset, r["payload_length"].astype(np.int64))


class FixedRecords:
    """The fixed-size typed records of one content type: where each one is, and its fields on demand.

    `offsets` are file offsets, `chunk` the file record index holding each record, both in file order.
    Fields are gathered from the mapped file through unaligned strided views (no row copies), or taken
    from `rows` when the reader's walk produced them.
    """

    def __init__(self, bundle: Bundle, ct: schema.ContentType, offsets: np.ndarray,
                 chunk: np.ndarray | Chunks, rows: np.ndarray | None = None):
        self.bundle = bundle
        self.ct = ct
        self.offsets = offsets
        self._chunk = chunk  # or, for stride-located records, their Chunks (expanded on demand)
        self.rows = rows

    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def chunk(self) -> np.ndarray:
        if isinstance(self._chunk, Chunks):
            chunks = self._chunk
            self._chunk = np.repeat(chunks.index, chunks.length // self.ct.dtype.itemsize)
        return self._chunk

    def field(self, name: str) -> np.ndarray:
        return self.fields(name)[name]

    def fields(self, *names: str) -> dict[str, np.ndarray]:
        """Several fields at once; in place, one gather covers the span from first to last."""
        if self.rows is not None:
            return {name: self.rows[name] for name in names}
        layout = self.ct.dtype.fields
        start = min(layout[n][1] for n in names)
        end = max(layout[n][1] + layout[n][0].itemsize for n in names)
        span = np.dtype({"names": list(names), "formats": [layout[n][0] for n in names],
                         "offsets": [layout[n][1] - start for n in names], "itemsize": end - start})
        if len(self.offsets) == 0:
            items = np.zeros(0, span)
        else:  # gather raw bytes (a plain copy per record), then read them through the layout
            view = _column_view(self.bundle.data, np.dtype(f"V{span.itemsize}"))
            items = self.bundle.gather(view, self.offsets + start).view(span)
        return {name: np.ascontiguousarray(items[name]) for name in names}


def _column_view(data: np.ndarray, fmt) -> np.ndarray:
    """Every byte offset of `data` read as one `fmt` scalar (an unaligned, overlapping view)."""
    dt = np.dtype(fmt)
    n = len(data) - dt.itemsize + 1
    return np.ndarray(shape=(max(n, 0),), dtype=dt, buffer=data, strides=(1,))


def _stride_offsets(chunks: Chunks, size: int) -> np.ndarray:
    """Record offsets in payloads that hold back-to-back records of `size` bytes."""
    counts = chunks.length // size
    total = int(counts.sum())
    first = np.cumsum(counts) - counts
    offsets = np.repeat(chunks.offset - first * size, counts)
    offsets += np.arange(0, total * size, size, dtype=np.int64)
    return offsets


def locate_fixed(bundle: Bundle, suffix: str) -> FixedRecords:
    """A fixed family's records as IREE's typed-record walk finds them (errors as the reader's)."""
    ct = schema.BY_SUFFIX[suffix]
    size = ct.dtype.itemsize
    chunks = chunks_of(bundle, suffix)
    if not (chunks.length % size).any():
        offsets = _stride_offsets(chunks, size)
        if (bundle.gather(_column_view(bundle.data, "<u4"), offsets) == size).all():
            return FixedRecords(bundle, ct, offsets, chunks)
    typed = bundle.typed(suffix)  # forward-extended or torn records: the exact walk
    return FixedRecords(bundle, ct, typed.offsets.astype(np.int64), typed.chunk, typed.rows)


def locate_stride(bundle: Bundle, suffix: str, message: str, *, load: bool = False) -> FixedRecords:
    """A fixed family's records at a fixed stride, ignoring `record_length` (IREE's statistics sink).

    A payload that is not a whole number of records raises `message` (DATA_LOSS). With `load`, the
    records are also copied into `rows` (worth it when many fields are read).
    """
    ct = schema.BY_SUFFIX[suffix]
    size = ct.dtype.itemsize
    chunks = chunks_of(bundle, suffix)
    bad = np.flatnonzero(chunks.length % size)
    if len(bad):
        rec = int(chunks.index[bad[0]])
        raise BundleFormatError(f"{message} (record {rec})", record_index=rec)
    offsets = _stride_offsets(chunks, size)
    rows = None
    if load and len(offsets):
        if (bundle.gather(_column_view(bundle.data, "<u4"), offsets) == size).all():
            rows = bundle.typed(suffix).rows  # the reader's walk lands on the same records
        else:
            rows = np.empty(len(offsets), ct.dtype)
            flat = rows.view(np.uint8).reshape(len(offsets), size)
            step = max(1, (1 << 22) // size)
            for i in range(0, len(offsets), step):
                part = offsets[i:i + step]
                flat[i:i + len(part)] = bundle.data[part[:, None] + np.arange(size)]
    return FixedRecords(bundle, ct, offsets, chunks, rows)


# --- the summary ------------------------------------------------------------------------------


_CLOCK_FIELDS = ("flags", "physical_device_ordinal", "sample_id", "device_tick",
                 "host_cpu_timestamp_ns", "host_time_begin_ns", "host_time_end_ns")


# Variable families summary validates: (suffix, head fields making up the tail, multiplier, message).
_VARIABLE_CHECKS = {
    "executable-code-objects": (("data_length",), 1,
                                "profile executable code-object data length is inconsistent with "
                                "record length"),
    "counter-sets": (("name_length",), 1, "counter set name length is inconsistent with record length"),
    "counters": (("block_name_length", "name_length", "description_length"), 1,
                 "counter string lengths are inconsistent with record length"),
    "counter-samples": (("sample_value_count",), 8,
                        "counter sample value count is inconsistent with record length"),
    "device-metric-sources": (("name_length",), 1,
                              "device metric source name length is inconsistent with record length"),
    "device-metric-descriptors": (("name_length", "description_length"), 1,
                                  "device metric descriptor string lengths are inconsistent with "
                                  "record length"),
    "device-metric-samples": (("value_count",), schema.METRIC_VALUE.itemsize,
                              "device metric sample value count is inconsistent with record length"),
}


class _Summary:
    def __init__(self, bundle: Bundle):
        self.bundle = bundle
        self.counts: dict = {}          # summary row fields
        self.devices: dict = {}         # pdo -> DeviceSummary
        self.touches: list = []         # (file offsets, pdos) that create devices
        self.errors: list = []          # (record index, error)

    def run(self) -> None:
        b = self.bundle
        rec = b.records
        rtype = rec["record_type"]
        is_chunk = rtype == schema.RecordType.CHUNK
        c = self.counts
        c["file_records"] = len(rec)
        c["session_begin_records"] = int(np.count_nonzero(rtype == schema.RecordType.SESSION_BEGIN))
        c["chunk_records"] = int(np.count_nonzero(is_chunk))
        ends = np.flatnonzero(rtype == schema.RecordType.SESSION_END)
        c["session_end_records"] = len(ends)
        bad_ends = ends[rec["session_status_code"][ends] != 0]
        c["non_ok_session_end_records"] = len(bad_ends)
        c["unknown_records"] = len(rec) - c["session_begin_records"] - c["chunk_records"] - len(ends)
        if len(bad_ends):
            r = rec[bad_ends[0]]
            code = int(r["session_status_code"])
            c["first_non_ok_session_id"] = int(r["session_id"])
            c["first_non_ok_stream_id"] = int(r["stream_id"])
            c["first_non_ok_event_id"] = int(r["event_id"])
            c["first_non_ok_status_code"] = code
            c["first_non_ok_status"] = schema.status_name(code)

        content = rec["content_index"][is_chunk]
        self.chunk_counts = np.bincount(content + 1, minlength=len(schema.CONTENT_TYPES) + 1)[1:]
        # Session-typed chunks have no route in IREE's summary: they count as unknown chunks.
        self.unknown_chunks = int(np.count_nonzero(content < 1))
        truncated = is_chunk & ((rec["chunk_flags"] & np.uint64(schema.CHUNK_FLAG_TRUNCATED)) != 0)
        self.truncated_chunks = int(np.count_nonzero(truncated))
        # IREE adds these without an overflow check: a wrapping u64 sum is the same.
        self.dropped_records = int(rec["dropped_record_count"][truncated].sum(dtype=np.uint64))

        for ct in schema.CONTENT_TYPES[1:]:
            self.records_of(ct.suffix)  # zero counts for absent families
            if self.chunk_counts[_CONTENT_INDEX[ct.suffix]] == 0:
                continue
            try:
                _FAMILIES[ct.suffix](self, ct.suffix)
            except BundleFormatError as e:
                self.errors.append((e.record_index if e.record_index is not None else len(rec), e))
        if self.errors:
            raise min(self.errors, key=lambda item: item[0])[1]
        b.check()
        self._order_devices()

    def records_of(self, suffix: str, count: int | None = None) -> None:
        key = schema.BY_SUFFIX[suffix].key
        if count is not None:
            self.counts[key + "_records"] = count
        else:
            self.counts.setdefault(key + "_records", 0)

    def device(self, pdo: int) -> DeviceSummary:
        d = self.devices.get(pdo)
        if d is None:
            d = self.devices[pdo] = DeviceSummary(pdo)
        return d

    def touch(self, offsets: np.ndarray, pdos: np.ndarray) -> None:
        self.touches.append((np.asarray(offsets, np.int64), np.asarray(pdos, np.int64)))

    def _order_devices(self) -> None:
        if not self.touches:
            self.devices = {}
            return
        offsets = np.concatenate([t[0] for t in self.touches])
        pdos = np.concatenate([t[1] for t in self.touches])
        order = np.argsort(offsets, kind="stable")
        unique, first = np.unique(pdos[order], return_index=True)
        ordered = unique[np.argsort(first)]
        self.devices = {int(p): self.device(int(p)) for p in ordered}

    # --- families -----------------------------------------------------------------------------

    def count_fixed(self, suffix: str) -> FixedRecords:
        records = locate_fixed(self.bundle, suffix)
        self.records_of(suffix, len(records))
        return records

    def count_variable(self, suffix: str):
        typed = self.bundle.typed(suffix)
        check = _VARIABLE_CHECKS.get(suffix)
        if check is not None and len(typed):
            names, multiplier, message = check
            rows = typed.rows
            tail = sum(rows[n].astype(np.uint64) for n in names) * np.uint64(multiplier)
            head = np.uint64(typed.content_type.dtype.itemsize)
            bad = np.flatnonzero(tail != rows["record_length"].astype(np.uint64) - head)
            if len(bad):
                rec = int(typed.chunk[bad[0]])
                raise BundleFormatError(f"{message} (record {rec})", record_index=rec)
        self.records_of(suffix, len(typed))
        return typed

    def devices_family(self, suffix: str) -> None:
        records = locate_fixed(self.bundle, suffix)  # counted per device only
        f = records.fields("physical_device_ordinal", "queue_count")
        pdo = f["physical_device_ordinal"]
        self.touch(records.offsets, pdo)
        for p in distinct(pdo):
            rows = np.flatnonzero(pdo == p)
            d = self.device(p)
            d.device_records += len(rows)
            d.queue_count = int(f["queue_count"][rows[-1]])

    def queues_family(self, suffix: str) -> None:
        records = locate_fixed(self.bundle, suffix)  # counted per device only
        pdo = records.field("physical_device_ordinal")
        self.touch(records.offsets, pdo)
        for p, n in zip(*np.unique(pdo, return_counts=True)):
            self.device(int(p)).queue_records += int(n)

    def code_objects_family(self, suffix: str) -> None:
        typed = self.count_variable(suffix)
        total = exact_sum(typed.rows["data_length"])
        if total > U64_MAX:
            raise overflow("profile executable code-object byte counter overflowed")
        self.counts["executable_code_object_data_bytes"] = total

    def clock_family(self, suffix: str) -> None:
        records = locate_fixed(self.bundle, suffix)
        rows = records.fields(*_CLOCK_FIELDS)
        pdo = rows["physical_device_ordinal"]
        self.touch(records.offsets, pdo)
        flags = rows["flags"]
        begin, end = rows["host_time_begin_ns"], rows["host_time_end_ns"]
        bracket = ((flags & F.CLOCK_HOST_TIME_BRACKET) != 0) & (end >= begin)
        for p in distinct(pdo):
            idx = np.flatnonzero(pdo == p)
            d = self.device(p)
            unaligned = int(np.count_nonzero(flags[idx] & F.CLOCK_DEVICE_TICK_UNALIGNED))
            first, last = ({k: int(v[i]) for k, v in rows.items()} for i in (idx[0], idx[-1]))
            d.clock = DeviceClock(p, len(idx), unaligned, first, last)
            b = idx[bracket[idx]]
            if len(b):
                # int64 wrap-around, as IREE's subtraction would give, for absurd brackets.
                spans = (end[b].astype(np.uint64) - begin[b].astype(np.uint64)).view(np.int64)
                d.min_uncertainty_ns = int(spans.min())
                d.max_uncertainty_ns = max(0, int(spans.max()))

    def dispatch_family(self, suffix: str) -> None:
        records = locate_fixed(self.bundle, suffix)
        rec = self.bundle.records
        chunks = chunks_of(self.bundle, suffix)
        chunk_pdo = rec["physical_device_ordinal"][chunks.index].astype(np.int64)
        self.touch(rec["offset"][chunks.index], chunk_pdo)
        for p in distinct(chunk_pdo):
            self.device(p)
        if not len(records):
            return
        pdo = rec["physical_device_ordinal"][records.chunk]
        ticks = records.fields("start_tick", "end_tick")
        start, end = ticks["start_tick"], ticks["end_tick"]
        invalid = (start == 0) | (end == 0) | (end < start)
        for p in distinct(pdo):
            d = self.device(p)
            mine = pdo == p
            d.dispatches += int(np.count_nonzero(mine))
            d.invalid_dispatches += int(np.count_nonzero(mine & invalid))
            valid = mine & ~invalid
            if not valid.any():
                continue
            s, e = start[valid], end[valid]
            ticks = e - s
            d.total_ticks = exact_sum(ticks)
            if d.total_ticks > U64_MAX:
                raise overflow(f"device summary dispatch tick total overflow device={p}")
            d.min_ticks, d.max_ticks = int(ticks.min()), int(ticks.max())
            d.earliest_start, d.latest_end = int(s.min()), int(e.max())

    def _host_spans(self, suffix: str, start_name: str, end_name: str, key: str, what: str) -> None:
        records = self.count_fixed(suffix)
        spans = records.fields(start_name, end_name)
        start, end = spans[start_name], spans[end_name]
        valid = (start >= 0) & (end >= start)
        self.counts[f"invalid_{key}_records"] = int(len(records) - np.count_nonzero(valid))
        total = exact_sum((end[valid] - start[valid]).astype(np.uint64))
        if total > U64_MAX:
            raise overflow(f"profile {what} duration counter overflowed")
        self.counts[f"total_{what.replace(' ', '_')}_duration_ns"] = total

    def host_execution_family(self, suffix: str) -> None:
        self._host_spans(suffix, "start_host_time_ns", "end_host_time_ns", "host_execution_event",
                         "host execution")

    def command_region_family(self, suffix: str) -> None:
        self._host_spans(suffix, "start_host_time_ns", "end_host_time_ns", "command_region_event",
                         "command region")

    def metric_samples_family(self, suffix: str) -> None:
        typed = self.count_variable(suffix)
        rows = typed.rows
        pdo = rows["physical_device_ordinal"]
        self.touch(typed.offsets, pdo)
        values = rows["value_count"]
        total = exact_sum(values)
        if total > U64_MAX:
            raise overflow("profile device metric value counter overflowed")
        self.counts["device_metric_values"] = total
        begin, end = rows["host_time_begin_ns"], rows["host_time_end_ns"]
        invalid = (begin < 0) | (end < begin)
        self.counts["invalid_device_metric_sample_records"] = int(np.count_nonzero(invalid))
        for p in distinct(pdo):
            mine = pdo == p
            d = self.device(p)
            d.metric_samples = int(np.count_nonzero(mine))
            d.metric_values = exact_sum(values[mine])
            d.invalid_metric_samples = int(np.count_nonzero(mine & invalid))

    def traces_family(self, suffix: str) -> None:
        typed = self.bundle.typed(suffix)
        total = exact_sum(typed.rows["data_length"])
        if total > U64_MAX:
            raise overflow("profile executable trace byte counter overflowed")
        self.records_of(suffix, len(typed))
        self.counts["executable_trace_data_bytes"] = total

def _count_fixed(s: _Summary, suffix: str) -> None:
    s.count_fixed(suffix)


def _count_variable(s: _Summary, suffix: str) -> None:
    s.count_variable(suffix)


def _count_functions(s: _Summary, suffix: str) -> None:
    # Summary only counts functions: the walk checks record lengths, names are never read.
    s.records_of(suffix, len(s.bundle.typed(suffix)))


_FAMILIES = {
    "devices": _Summary.devices_family,
    "queues": _Summary.queues_family,
    "executables": _count_fixed,
    "executable-code-objects": _Summary.code_objects_family,
    "executable-code-object-loads": _count_fixed,
    "executable-functions": _count_functions,
    "command-buffers": _count_fixed,
    "command-operations": _count_fixed,
    "clock-correlations": _Summary.clock_family,
    "dispatch-events": _Summary.dispatch_family,
    "queue-events": _count_fixed,
    "queue-device-events": _count_fixed,
    "host-execution-events": _Summary.host_execution_family,
    "command-region-events": _Summary.command_region_family,
    "memory-events": _count_fixed,
    "event-relationships": _count_fixed,
    "counter-sets": _count_variable,
    "counters": _count_variable,
    "counter-samples": _count_variable,
    "device-metric-sources": _count_variable,
    "device-metric-descriptors": _count_variable,
    "device-metric-samples": _Summary.metric_samples_family,
    "executable-traces": _Summary.traces_family,
}


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> list[Row]:
    """The `summary` row and one `device_summary` row per device, as iree-profile prints them."""
    s = _Summary(bundle)
    s.run()
    counts = dict(s.counts, unknown_chunks=s.unknown_chunks, truncated_chunks=s.truncated_chunks,
                  dropped_records=s.dropped_records)
    return [summary_row(counts, s.chunk_counts), *(device_row(d) for d in s.devices.values())]

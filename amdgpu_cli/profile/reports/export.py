"""`export --format=ireeperf-jsonl`: every record of a bundle as one schema-versioned JSONL row.

Output is byte-for-byte what `iree-profile export` writes (reference ireeprof.md section 6; IREE's
`tooling/profile/export.c`): a `schema` row, then in file order one row per decoded typed record,
one `session` row per session begin/end, and `diagnostic` rows for truncated chunks (before that
chunk's rows), chunks without an export route (`unknown_chunk`; code objects and code-object loads
included) and unknown record types (`unknown_record`).

Two passes, as in IREE. Pass one builds the metadata model (`Model.build`); a failure there stops
the export before anything is written. Pass two streams the rows; a failure there (a torn event
chunk, a dispatch whose function is unknown, a metric value without a descriptor) is raised after
the rows that come before it in file order have been written, exactly where IREE stops.

Speed: bundles can hold millions of events, so rows are not built as dicts. Each row type is one
printf-style template read as a `toolkit.RowLayout`; the records of a block of chunks become
per-field columns with numpy and are rendered in native code. Every chunk's rows are one byte range
of that output; a block's ranges (and its session/diagnostic lines) are put in file order by a sort
on their record index and copied out natively. `report()` offers the same rows as dicts (parsed
back from the text) for callers that want data rather than text.

Device-tick timing blocks (`<T>` in the reference) use the per-device first/last clock fit in the
driver host CPU timestamp domain, with IREE's rounding (`amdgpu_cli.profile.clock`).
"""

from __future__ import annotations

import json
import struct
from typing import Callable, Iterator, TextIO

import numpy as np

from amdgpu_cli.errors import BundleFormatError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.tick_columns import map_tick_ranges
from amdgpu_cli.profile.jsonl import Raw, string as json_string
from amdgpu_cli.profile.model import Model
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports.toolkit import (RowLayout, Sink, Strings, distinct,
                                                 gather_ranges, group_ids)

SCHEMA_VERSION = 15
RecordType = schema.RecordType
F = schema.Flags
U32_MAX = schema.U32_MAX
METRIC_PRODUCER_BASE = 1 << 63
# Content types with an export route, as in IREE's export.c; every other chunk is "unknown".
ROUTES = ("devices", "queues", "executables", "executable-functions", "command-buffers",
          "command-operations", "clock-correlations", "dispatch-events", "queue-events",
          "queue-device-events", "host-execution-events", "command-region-events",
          "memory-events", "event-relationships", "counter-sets", "counters", "counter-samples",
          "device-metric-sources", "device-metric-descriptors", "device-metric-samples",
          "executable-traces")
# Chunks formatted together: at most BLOCK_RECORDS records and about BLOCK_ROWS rows, which bounds
# the memory of the row text in flight.
BLOCK_RECORDS, BLOCK_ROWS = 4096, 65536

SCHEMA_ROW = (
    '{"schema_version":%d,"record_type":"schema","format":"ireeperf-jsonl",'
    '"contract":"schema_versioned_interchange","row_key":"record_type","source_format":"ireeprof",'
    '"source_version_major":%d,"source_version_minor":%d,"time_domains":{'
    '"iree_host_time_ns":"iree_time_now monotonic nanoseconds",'
    '"device_tick":"raw physical-device timestamp ticks",'
    '"driver_host_cpu_timestamp_ns":"driver-sampled CPU timestamp nanoseconds",'
    '"driver_host_system_timestamp":"driver-sampled system timestamp units scaled by '
    'host_system_frequency_hz",'
    '"device_tick_duration_ns":"duration nanoseconds derived from device_tick clock fit"},'
    '"clock_fit":{"basis":"first_last_clock_correlation",'
    '"rounding":"nearest_integer_nanosecond"}}\n'
)


# --- row templates --------------------------------------------------------------------------------

D, S = "%d", "%s"   # an integer field; a field whose argument is already JSON text
TRIPLE = "[%d,%d,%d]"


def _template(record_type: str, fields: list[tuple[str, str]]) -> str:
    """`{"schema_version":15,"record_type":...,"source_record_index":%d,<fields>}` + newline."""
    head = '{"schema_version":%d,"record_type":"%s","source_record_index":%%d' % (
        SCHEMA_VERSION, record_type)
    return head + "".join(f',"{name}":{fragment}' for name, fragment in fields) + "}\n"


def _const(text: str) -> str:
    return json_string(text).replace("%", "%%")


# The timing block of device-tick events: raw ticks, validity, and the clock-fitted host times.
DEVICE_TIME_FIELDS = [
    ("device_tick_domain", _const("device_tick")), ("start_tick", D), ("end_tick", D),
    ("duration_ticks", D), ("valid", S), ("derived_time_available", S),
    ("derived_time_domain", _const("driver_host_cpu_timestamp_ns")),
    ("derived_time_basis", _const("first_last_clock_correlation")),
    ("clock_fit_first_sample_id", D), ("clock_fit_last_sample_id", D),
    ("start_driver_host_cpu_time_ns", D), ("end_driver_host_cpu_time_ns", D),
    ("duration_time_domain", _const("device_tick_duration_ns")), ("duration_ns", D),
]
HOST_DOMAIN = ("host_time_domain", _const("iree_host_time_ns"))

T_SESSION = _template("session", [
    ("event", S), ("session_id", D), ("stream_id", D), ("event_id", D),
    ("session_status_code", D), ("session_status", S)])
T_DIAGNOSTIC = _template("diagnostic", [
    ("severity", S), ("category", S), ("content_type", S), ("message", S)])
T_TRUNCATED = _template("diagnostic", [
    ("severity", _const("error")), ("category", _const("truncated_chunk")), ("content_type", S),
    ("message", _const("chunk was marked truncated by the producer")), ("dropped_records", D)])
T_DEVICE = _template("device", [
    ("physical_device_ordinal", D), ("flags", D), ("queue_count", D),
    ("physical_device_uuid_present", S), ("physical_device_uuid", S)])
T_QUEUE = _template("queue", [
    ("physical_device_ordinal", D), ("queue_ordinal", D), ("stream_id", D)])
T_EXECUTABLE = _template("executable", [
    ("executable_id", D), ("flags", D), ("function_count", D), ("code_object_hash_present", S),
    ("code_object_hash", S)])
T_FUNCTION = _template("executable_function", [
    ("executable_id", D), ("function_ordinal", D), ("flags", D), ("name", S),
    ("constant_count", D), ("binding_count", D), ("parameter_count", D),
    ("workgroup_size", TRIPLE), ("function_hash_present", S), ("function_hash", S)])
T_COMMAND_BUFFER = _template("command_buffer", [
    ("command_buffer_id", D), ("flags", D), ("physical_device_ordinal", D), ("mode", D),
    ("command_categories", D), ("queue_affinity", D)])
T_COMMAND_OPERATION = _template("command_operation", [
    ("command_buffer_id", D), ("command_index", D), ("op", S), ("key", S), ("flags", D),
    ("block_structure", S), ("block_ordinal", D), ("block_command_ordinal", D),
    ("executable_id", D), ("function_ordinal", D), ("binding_count", D),
    ("workgroup_count", TRIPLE), ("workgroup_size", TRIPLE), ("source_ordinal", D),
    ("target_ordinal", D), ("source_offset", D), ("target_offset", D), ("length", D),
    ("target_block_ordinal", D), ("alternate_block_ordinal", D)])
T_CLOCK = _template("clock_correlation", [
    ("sample_id", D), ("flags", D), ("physical_device_ordinal", D),
    ("device_tick_domain", _const("device_tick")), ("device_tick", D),
    ("host_cpu_timestamp_domain", _const("driver_host_cpu_timestamp_ns")),
    ("host_cpu_timestamp_ns", D),
    ("host_system_timestamp_domain", _const("driver_host_system_timestamp")),
    ("host_system_timestamp", D), ("host_system_frequency_hz", D), HOST_DOMAIN,
    ("host_time_begin_ns", D), ("host_time_end_ns", D), ("host_time_uncertainty_ns", D)])
T_DISPATCH = _template("dispatch_event", [
    ("physical_device_ordinal", D), ("queue_ordinal", D), ("stream_id", D), ("event_id", D),
    ("submission_id", D), ("command_buffer_id", D), ("command_index", D), ("executable_id", D),
    ("function_ordinal", D), ("key", S), ("flags", D), ("workgroup_count", TRIPLE),
    ("workgroup_size", TRIPLE), *DEVICE_TIME_FIELDS])
T_QUEUE_DEVICE = _template("queue_device_event", [
    ("physical_device_ordinal", D), ("queue_ordinal", D), ("stream_id", D), ("event_id", D),
    ("submission_id", D), ("command_buffer_id", D), ("allocation_id", D), ("op", S),
    ("type_value", D), ("flags", D), ("payload_length", D), ("operation_count", D),
    *DEVICE_TIME_FIELDS])
T_HOST_EXECUTION = _template("host_execution_event", [
    ("physical_device_ordinal", D), ("queue_ordinal", D), ("stream_id", D), ("event_id", D),
    ("submission_id", D), ("command_buffer_id", D), ("command_index", D), ("executable_id", D),
    ("function_ordinal", D), ("allocation_id", D), ("op", S), ("key", S), ("type_value", D),
    ("flags", D), ("status_code", D), ("workgroup_count", TRIPLE), ("workgroup_size", TRIPLE),
    HOST_DOMAIN, ("start_host_time_ns", D), ("end_host_time_ns", D), ("duration_ns", D),
    ("valid", S), ("payload_length", D), ("tile_count", D), ("tile_duration_sum_ns", D),
    ("operation_count", D)])
T_COMMAND_REGION = _template("command_region_event", [
    ("physical_device_ordinal", D), ("queue_ordinal", D), ("stream_id", D), ("event_id", D),
    ("submission_id", D), ("command_buffer_id", D), ("block_sequence", D), ("region_epoch", D),
    ("region_index", D), ("next_region_index", D), ("flags", D), HOST_DOMAIN,
    ("start_host_time_ns", D), ("end_host_time_ns", D), ("duration_ns", D), ("valid", S),
    ("region_dispatch_count", D), ("region_tile_count", D), ("region_width_bucket", D),
    ("region_lookahead_width_bucket", D), ("next_region_tile_count", D),
    ("next_region_width_bucket", D), ("next_region_lookahead_width_bucket", D),
    ("worker_count", D), ("old_wake_budget", D), ("new_wake_budget", D), ("wake_delta", D),
    ("useful_drain_count", D), ("no_work_drain_count", D),
    ("first_useful_drain_start_host_time_ns", D), ("last_useful_drain_end_host_time_ns", D),
    ("tail_no_work", '{"count":%d,"remaining_tiles":{"min":%d,"max":%d,'
                     '"bucket_counts":[%d,%d,%d,%d,%d,%d,%d,%d]},'
                     '"first_start_host_time_ns":%d,"last_end_host_time_ns":%d,'
                     '"time_sums":{"start_offset_ns":%d,"drain_duration_ns":%d}}'),
    ("retention_keep_active_count", D), ("retention_publish_keep_active_count", D),
    ("retention_keep_warm_count", D)])
T_QUEUE_EVENT = _template("queue_event", [
    ("event_id", D), ("op", S), ("type_value", D), ("flags", D), ("dependency_strategy", S),
    ("submission_id", D), ("command_buffer_id", D), ("allocation_id", D),
    ("physical_device_ordinal", D), ("queue_ordinal", D), ("stream_id", D),
    ("host_time_ns", D), ("ready_host_time_ns", D), HOST_DOMAIN, ("wait_count", D),
    ("signal_count", D), ("barrier_count", D), ("operation_count", D), ("payload_length", D)])
T_MEMORY = _template("memory_event", [
    ("event_id", D), ("event_type", S), ("event_type_value", D), ("flags", D), ("result", D),
    ("host_time_ns", D), ("allocation_id", D), HOST_DOMAIN, ("pool_id", D), ("backing_id", D),
    ("submission_id", D), ("physical_device_ordinal", D), ("queue_ordinal", D),
    ("frontier_entry_count", D), ("memory_type", D), ("buffer_usage", D), ("offset", D),
    ("length", D), ("alignment", D), ("externally_owned", S), ("pool_stats_available", S),
    ("pool_bytes_reserved", D), ("pool_bytes_free", D), ("pool_bytes_committed", D),
    ("pool_budget_limit", D), ("pool_reservation_count", D), ("pool_slab_count", D)])
T_RELATIONSHIP = _template("event_relationship", [
    ("relationship_id", D), ("kind", S), ("kind_value", D), ("source_type", S),
    ("source_type_value", D), ("target_type", S), ("target_type_value", D),
    ("physical_device_ordinal", D), ("queue_ordinal", D), ("stream_id", D), ("source_id", D),
    ("source_secondary_id", D), ("target_id", D), ("target_secondary_id", D)])
T_COUNTER_SET = _template("counter_set", [
    ("counter_set_id", D), ("physical_device_ordinal", D), ("flags", D), ("counter_count", D),
    ("sample_value_count", D), ("name", S)])
T_COUNTER = _template("counter", [
    ("counter_set_id", D), ("counter_ordinal", D), ("physical_device_ordinal", D), ("flags", D),
    ("unit", D), ("sample_value_offset", D), ("sample_value_count", D), ("block", S),
    ("name", S), ("description", S)])
T_COUNTER_SAMPLE = _template("counter_sample", [
    ("sample_id", D), ("counter_set_id", D), ("scope", S), ("scope_value", D),
    ("dispatch_event_id", D), ("submission_id", D), ("command_buffer_id", D),
    ("command_index", D), ("executable_id", D), ("function_ordinal", D),
    ("physical_device_ordinal", D), ("queue_ordinal", D), ("stream_id", D), ("flags", D),
    ("device_tick_range_present", S),
    *[("device_tick_range_valid" if name == "valid" else name, fragment)
      for name, fragment in DEVICE_TIME_FIELDS],
    ("values", S)])
T_METRIC_SOURCE = _template("device_metric_source", [
    ("source_id", D), ("physical_device_ordinal", D), ("device_class", S),
    ("device_class_value", D), ("flags", D), ("source_kind", D), ("source_revision", D),
    ("metric_count", D), ("name", S)])
T_METRIC_DESCRIPTOR = _template("device_metric_descriptor", [
    ("source_id", D), ("metric_id", D), ("builtin", S), ("producer_specific", S), ("flags", D),
    ("unit", S), ("unit_value", D), ("value_kind", S), ("value_kind_value", D), ("semantic", S),
    ("semantic_value", D), ("plot_hint", S), ("plot_hint_value", D), ("name", S),
    ("description", S)])
T_METRIC_SAMPLE = _template("device_metric_sample", [
    ("sample_id", D), ("source_id", D), ("flags", D), ("physical_device_ordinal", D),
    HOST_DOMAIN, ("host_time_begin_ns", D), ("host_time_end_ns", D),
    ("host_time_uncertainty_ns", D), ("source_timestamp_present", S), ("source_timestamp", D),
    ("source_timestamp_frequency_hz", D), ("values", S)])
T_METRIC_VALUE = ('{"metric_id":%d,"name":%s,"unit":%s,"value_kind":%s,"semantic":%s,'
                  '"plot_hint":%s,"flags":%d,"value":%s,"value_bits":%d}')
T_TRACE = _template("executable_trace", [
    ("trace_id", D), ("format", S), ("format_value", D), ("flags", D), ("shader_engine", D),
    ("dispatch_event_id", D), ("submission_id", D), ("command_buffer_id", D),
    ("command_index", D), ("executable_id", D), ("function_ordinal", D),
    ("physical_device_ordinal", D), ("queue_ordinal", D), ("stream_id", D),
    ("record_length", D), ("data_length", D)])


_LAYOUTS: dict[str, RowLayout] = {}  # template -> its layout, made on first use


# --- names, as JSON text --------------------------------------------------------------------------

def _names(table: dict[int, str], default: str = "unknown") -> tuple[dict[int, str], str]:
    return {k: json_string(v) for k, v in table.items()}, json_string(default)


OP_NAMES = _names(schema.COMMAND_OP_NAMES)
QUEUE_TYPE_NAMES = _names(schema.QUEUE_EVENT_TYPE_NAMES)
STRATEGY_NAMES = _names(schema.DEPENDENCY_STRATEGY_NAMES)
MEMORY_TYPE_NAMES = _names(schema.MEMORY_EVENT_TYPE_NAMES)
RELATIONSHIP_NAMES = _names(schema.RELATIONSHIP_TYPE_NAMES)
ENDPOINT_NAMES = _names(schema.ENDPOINT_TYPE_NAMES)
SCOPE_NAMES = _names(schema.COUNTER_SCOPE_NAMES)
DEVICE_CLASS_NAMES = _names(schema.DEVICE_CLASS_NAMES)
TRACE_FORMAT_NAMES = _names(schema.TRACE_FORMAT_NAMES)
# IREE's metric enum strings: value 0 is "none", values it does not know print as "".
METRIC_UNIT_NAMES = _names(schema.METRIC_UNIT_NAMES, "")
METRIC_KIND_NAMES = _names({0: "none", **schema.METRIC_VALUE_KIND_NAMES}, "")
METRIC_SEMANTIC_NAMES = _names({0: "none", **schema.METRIC_SEMANTIC_NAMES}, "")
METRIC_PLOT_NAMES = _names({0: "none", **schema.METRIC_PLOT_HINT_NAMES}, "")


def _lookup(names: tuple[dict[int, str], str], values) -> Strings:
    """The names (JSON text) of a column of enum values."""
    table, default = names
    return Strings.enum(values, table, default)


def _name(names: tuple[dict[int, str], str], value: int) -> str:
    table, default = names
    return table.get(value, default)


def _bools(mask: np.ndarray) -> Strings:
    return Strings(np.asarray(mask, np.int8), ["false", "true"])


def _flag(rows: np.ndarray, name: str, bit: int) -> np.ndarray:
    return (rows[name] & bit) == bit


def _hashes(present: np.ndarray, words: np.ndarray) -> list[str]:
    return [f'"{a:016x}{b:016x}"' if p else "null"
            for p, (a, b) in zip(present.tolist(), words.tolist())]


# --- device tick timing ---------------------------------------------------------------------------

class DeviceTimes:
    """The `<T>` timing columns of device-tick events, from the model's per-device fits."""

    def __init__(self, model: Model):
        self._fit = model.clock_fit

    def columns(self, pdos: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list:
        """duration_ticks, valid, derived_time_available, clock_fit_first/last_sample_id,
        start/end_driver_host_cpu_time_ns, duration_ns: one column each."""
        starts, ends = np.asarray(starts, np.uint64), np.asarray(ends, np.uint64)
        placed = map_tick_ranges(self._fit, pdos, starts, ends)
        valid, derived = placed.valid, placed.placed
        first, last = placed.first_sample_id, placed.last_sample_id
        t_start, t_end = placed.start_ns, placed.end_ns
        with np.errstate(over="ignore"):
            duration = t_end - t_start      # int64, as IREE computes it
        return [np.where(valid, ends - starts, 0), _bools(valid), _bools(derived), first, last,
                t_start, t_end, duration]


def _text(data) -> str:
    """Record bytes as text; bytes that are not UTF-8 survive as surrogates, which `write`
    turns back into the same bytes (IREE copies names through unchanged)."""
    return bytes(data).decode("utf-8", "surrogateescape")


# --- decoded rows per content type ----------------------------------------------------------------

class _Rows:
    """The typed records of one content type, their chunk indices and file offsets.

    When the reader finds a torn record, `rows` holds every record before it and `error` the
    failure, raised once the export reaches that chunk (`error_chunk`)."""

    def __init__(self, bundle: Bundle, ct: schema.ContentType):
        self.ct = ct
        self.error: BundleFormatError | None = None
        self.error_chunk = -1
        self.error_row = -1
        try:
            if ct.kind == schema.ContentKind.FIXED:  # read a block at a time (not held whole)
                located = bundle.locate(ct.suffix)
                self.rows, self.chunk, self.offsets = _Blocks(located), located.chunk, \
                    located.offsets
            else:
                typed = bundle.typed(ct.suffix)
                self.rows, self.chunk, self.offsets = typed.rows, typed.chunk, typed.offsets
        except BundleFormatError as e:
            self.error, self.error_chunk = e, int(e.record_index)
            self.rows, self.chunk, self.offsets = _decode_prefix(bundle, ct, self.error_chunk)
            self.error_row = len(self.rows)
        self.chunk = np.asarray(self.chunk, np.int64)

    def fail_at(self, row: int, error: BundleFormatError) -> None:
        """Records a failure at `row` unless an earlier one is already known."""
        if self.error is None or row < self.error_row:
            self.error, self.error_row, self.error_chunk = error, row, int(self.chunk[row])


class _Blocks:
    """A fixed-size family's records left in the file: `[lo:hi]` copies those records."""

    def __init__(self, located):
        self.located = located

    def __len__(self) -> int:
        return len(self.located)

    def __getitem__(self, selection: slice) -> np.ndarray:
        lo, hi, _ = selection.indices(len(self.located))
        return self.located.records(lo, hi)


def _decode_prefix(bundle: Bundle, ct: schema.ContentType, stop_chunk: int):
    """The records of `ct` up to the first torn one (only used after the reader failed)."""
    size = ct.dtype.itemsize
    data = bundle.data
    heads, owners, offsets = [], [], []
    chunks = bundle.chunk_indices(ct.suffix)
    starts = bundle.payload_offsets()
    for c in chunks[chunks <= stop_chunk].tolist():
        base = int(starts[c])
        length = int(bundle.records["payload_length"][c])
        if ct.kind == schema.ContentKind.TRACE:
            if length >= size:
                head = data[base:base + size].view(ct.dtype)[0]
                if (int(head["record_length"]) == size
                        and int(head["data_length"]) == length - size):
                    heads.append(data[base:base + size].tobytes())
                    owners.append(c)
                    offsets.append(base)
            continue
        o = 0
        while length - o >= size:
            record_length = int(data[base + o:base + o + 4].view("<u4")[0])
            if record_length < size or record_length > length - o:
                break
            heads.append(data[base + o:base + o + size].tobytes())
            owners.append(c)
            offsets.append(base + o)
            o += record_length
    rows = np.frombuffer(b"".join(heads), ct.dtype) if heads else np.zeros(0, ct.dtype)
    return rows, np.array(owners, np.int64), np.array(offsets, np.uint64)


# --- row formatting -------------------------------------------------------------------------------

class _Exporter:
    """Pass two: formats the rows of each content type, a block of chunks at a time."""

    def __init__(self, bundle: Bundle, model: Model):
        self.bundle = bundle
        self.model = model
        self.times = DeviceTimes(model)
        self.data = memoryview(bundle.data)
        self.headers = bundle.records
        self.sink = Sink()  # where a block's rows are rendered (_byte_blocks empties it per block)
        self._keys: dict[tuple[int, int, int], str] = {}
        self._op_keys: dict[tuple[int, int, int], str] = {}
        self._names: dict[str, dict[tuple, list[str]]] = {}
        self.formatters: dict[str, Callable] = {
            suffix: getattr(self, "_" + suffix.replace("-", "_")) for suffix in ROUTES}

    # Each formatter takes (source, lo, hi), appends the rows of source.rows[lo:hi] to the sink
    # and returns where each ends; a formatter that finds a bad record at row k calls
    # source.fail_at(k) and stops before it.

    def format(self, source: _Rows, lo: int, hi: int) -> np.ndarray:
        """The rows source.rows[lo:hi] as JSONL bytes appended to `sink`, and where each row ends
        (fewer rows when a bad record stops them)."""
        if source.error is not None and source.error_row < hi:
            hi = max(lo, source.error_row)
        if hi <= lo:
            return np.zeros(0, np.uint64)
        return self.formatters[source.ct.suffix](source, lo, hi)

    # --- helpers

    def _strings(self, source: _Rows, lo: int, hi: int, *length_fields: str) -> list[list[str]]:
        """The trailing strings of variable records, as JSON text, one column per length field."""
        rows = source.rows[lo:hi]
        size = source.ct.dtype.itemsize
        data = self.data
        lengths = [rows[name].tolist() for name in length_fields]
        columns: list[list[str]] = [[] for _ in length_fields]
        for k, offset in enumerate(source.offsets[lo:hi].tolist()):
            o = offset + size
            for column, n in zip(columns, lengths):
                column.append(json_string(_text(data[o:o + n[k]])))
                o += n[k]
        return columns

    def _check_lengths(self, source: _Rows, lo: int, hi: int, tail: np.ndarray,
                       message: str) -> int:
        """First row whose length fields disagree with its record_length; hi when none."""
        rows = source.rows[lo:hi]
        expected = tail.astype(np.int64) + source.ct.dtype.itemsize
        bad = np.nonzero(rows["record_length"].astype(np.int64) != expected)[0]
        if len(bad):
            row = lo + int(bad[0])
            source.fail_at(row, BundleFormatError(message, record_index=int(source.chunk[row])))
            return row
        return hi

    def _dispatch_key(self, pdo: int, executable_id: int, ordinal: int) -> str:
        key = self._keys.get((pdo, executable_id, ordinal))
        if key is None:
            key = self.model.dispatch_key(pdo, executable_id, ordinal)  # raises when unknown
            raw = self._raw_names("executable-functions", ("executable_id", "function_ordinal"),
                                  ("name_length",)).get((executable_id, ordinal))
            key = json_string(raw[0] if raw and raw[0] else key)
            self._keys[(pdo, executable_id, ordinal)] = key
        return key

    def _raw_names(self, suffix: str, key_fields: tuple[str, ...],
                   length_fields: tuple[str, ...]) -> dict[tuple, list[str]]:
        """First-wins strings of a metadata family by key, with their bytes kept as they are
        (the model's are decoded for display)."""
        names = self._names.get(suffix)
        if names is None:
            typed = self.bundle.typed(suffix)
            names = self._names[suffix] = {}
            for i, row in enumerate(typed.rows):
                key = tuple(int(row[f]) for f in key_fields)
                if key not in names:
                    start = int(typed.offsets[i]) + typed.content_type.dtype.itemsize
                    strings = []
                    for field in length_fields:
                        n = int(row[field])
                        strings.append(_text(self.data[start:start + n]))
                        start += n
                    names[key] = strings
        return names

    def _keys_until_error(self, source: _Rows, lo: int, pdos: np.ndarray,
                          executables: np.ndarray, ordinals: np.ndarray,
                          wanted: np.ndarray | None = None) -> Strings:
        """Function keys (JSON text; `null` where not wanted) of each row, up to the first row
        whose function is unknown (recorded as the source's failure). Each distinct (device,
        executable, function) is looked up once; `wanted` depends on the triple alone."""
        codes, first = group_ids(pdos, executables, ordinals)
        texts: list[str] = []
        stop = len(codes)
        for g, row in enumerate(first.tolist()):
            if wanted is not None and not wanted[row]:
                texts.append("null")
                continue
            triple = (int(pdos[row]), int(executables[row]), int(ordinals[row]))
            try:
                texts.append(self._dispatch_key(*triple))
            except BundleFormatError as e:  # rows of earlier groups all come before this one
                e.record_index = int(source.chunk[lo + row])
                source.fail_at(lo + row, e)
                stop = row
                break
        return Strings(codes[:stop], texts)

    def _render(self, template: str, index, columns: list) -> np.ndarray:
        """The rows appended to `self.sink`; where each ends, counted from where they begin."""
        n = len(index)
        layout = _LAYOUTS.get(template)
        if layout is None:
            layout = _LAYOUTS[template] = RowLayout.from_template(template)
        return layout.block_of([index, *[c[:n] for c in columns]]).render_into(self.sink)

    # --- metadata

    def _devices(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        present = _flag(r, "flags", F.DEVICE_UUID)
        uuids = [f'"{bytes(u).hex()}"' if p else "null"
                 for p, u in zip(present.tolist(), r["physical_device_uuid"].tolist())]
        return self._render(T_DEVICE, s.chunk[lo:hi], [
            r["physical_device_ordinal"], r["flags"], r["queue_count"],
            _bools(present), uuids])

    def _queues(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        return self._render(T_QUEUE, s.chunk[lo:hi], [
            r["physical_device_ordinal"], r["queue_ordinal"],
            r["stream_id"]])

    def _executables(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        present = _flag(r, "flags", F.CODE_OBJECT_HASH)
        return self._render(T_EXECUTABLE, s.chunk[lo:hi], [
            r["executable_id"], r["flags"], r["function_count"],
            _bools(present), _hashes(present, r["code_object_hash"])])

    def _executable_functions(self, s: _Rows, lo: int, hi: int) -> list[str]:
        hi = self._check_lengths(s, lo, hi, s.rows[lo:hi]["name_length"],
                                 "executable function name length is inconsistent")
        r = s.rows[lo:hi]
        present = _flag(r, "flags", F.FUNCTION_HASH)
        wg = r["workgroup_size"]
        return self._render(T_FUNCTION, s.chunk[lo:hi], [
            r["executable_id"], r["function_ordinal"], r["flags"],
            self._strings(s, lo, hi, "name_length")[0], r["constant_count"],
            r["binding_count"], r["parameter_count"], wg[:, 0],
            wg[:, 1], wg[:, 2], _bools(present),
            _hashes(present, r["function_hash"])])

    def _command_buffers(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        return self._render(T_COMMAND_BUFFER, s.chunk[lo:hi], [
            r["command_buffer_id"], r["flags"],
            r["physical_device_ordinal"], r["mode"],
            r["command_categories"], r["queue_affinity"]])

    def _operation_key(self, op_type: int, cid: int, eid: int, ordinal: int) -> str:
        if op_type != 2 or eid == 0 or ordinal == U32_MAX:
            return _name(OP_NAMES, op_type)
        cache_key = (cid, eid, ordinal)
        key = self._op_keys.get(cache_key)
        if key is None:
            buffer = self.model.command_buffers.get(cid)
            if buffer is None:  # pass one rejects these; kept for safety
                raise BundleFormatError(
                    "command operation references missing command-buffer metadata "
                    f"command_buffer={cid}")
            pdo = int(buffer.record["physical_device_ordinal"])
            key = self._op_keys[cache_key] = self._dispatch_key(pdo, eid, ordinal)
        return key

    def _command_operations(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        types, cids = r["type"].tolist(), r["command_buffer_id"].tolist()
        eids, ordinals = r["executable_id"].tolist(), r["function_ordinal"].tolist()
        keys = []
        for k, args in enumerate(zip(types, cids, eids, ordinals)):
            try:
                keys.append(self._operation_key(*args))
            except BundleFormatError as e:
                e.record_index = int(s.chunk[lo + k])
                s.fail_at(lo + k, e)
                break
        wc, wg = r["workgroup_count"], r["workgroup_size"]
        return self._render(T_COMMAND_OPERATION, s.chunk[lo:lo + len(keys)], [
            cids, r["command_index"], _lookup(OP_NAMES, types), keys,
            r["flags"], _bools(_flag(r, "flags", F.OP_BLOCK_STRUCTURE)),
            r["block_ordinal"], r["block_command_ordinal"], eids, ordinals,
            r["binding_count"], wc[:, 0], wc[:, 1], wc[:, 2],
            wg[:, 0], wg[:, 1], wg[:, 2], r["source_ordinal"],
            r["target_ordinal"], r["source_offset"],
            r["target_offset"], r["length"],
            r["target_block_ordinal"], r["alternate_block_ordinal"]])

    def _clock_correlations(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        begin, end = r["host_time_begin_ns"], r["host_time_end_ns"]
        return self._render(T_CLOCK, s.chunk[lo:hi], [
            r["sample_id"], r["flags"], r["physical_device_ordinal"],
            r["device_tick"], r["host_cpu_timestamp_ns"],
            r["host_system_timestamp"], r["host_system_frequency_hz"],
            begin, end, _uncertainty(begin, end)])

    # --- events

    def _dispatch_events(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        chunk = s.chunk[lo:hi]
        h = self.headers[chunk]
        times = self.times.columns(h["physical_device_ordinal"], r["start_tick"], r["end_tick"])
        pdos = h["physical_device_ordinal"]
        starts, ends = r["start_tick"], r["end_tick"]
        eids, ordinals = r["executable_id"], r["function_ordinal"]
        keys = self._keys_until_error(s, lo, pdos, eids, ordinals)
        wc, wg = r["workgroup_count"], r["workgroup_size"]
        return self._render(T_DISPATCH, chunk[:len(keys)], [
            pdos, h["queue_ordinal"], h["stream_id"], r["event_id"],
            r["submission_id"], r["command_buffer_id"],
            r["command_index"], eids, ordinals, keys, r["flags"],
            wc[:, 0], wc[:, 1], wc[:, 2],
            wg[:, 0], wg[:, 1], wg[:, 2], starts, ends, *times])

    def _queue_device_events(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        types = r["type"]
        return self._render(T_QUEUE_DEVICE, s.chunk[lo:hi], [
            r["physical_device_ordinal"], r["queue_ordinal"],
            r["stream_id"], r["event_id"], r["submission_id"],
            r["command_buffer_id"], r["allocation_id"],
            _lookup(QUEUE_TYPE_NAMES, types), types, r["flags"],
            r["payload_length"], r["operation_count"],
            r["start_tick"], r["end_tick"],
            *self.times.columns(r["physical_device_ordinal"], r["start_tick"], r["end_tick"])])

    def _host_execution_events(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        pdos = r["physical_device_ordinal"]
        eids, ordinals = r["executable_id"], r["function_ordinal"]
        wanted = (eids != 0) & (ordinals != U32_MAX)
        keys = self._keys_until_error(s, lo, pdos, eids, ordinals, wanted)
        start, end = r["start_host_time_ns"], r["end_host_time_ns"]
        valid = (start >= 0) & (end >= start)
        types = r["type"]
        wc, wg = r["workgroup_count"], r["workgroup_size"]
        return self._render(T_HOST_EXECUTION, s.chunk[lo:lo + len(keys)], [
            pdos, r["queue_ordinal"], r["stream_id"], r["event_id"],
            r["submission_id"], r["command_buffer_id"],
            r["command_index"], eids, ordinals, r["allocation_id"],
            _lookup(QUEUE_TYPE_NAMES, types), keys, types, r["flags"],
            r["status_code"], wc[:, 0], wc[:, 1], wc[:, 2],
            wg[:, 0], wg[:, 1], wg[:, 2], start,
            end, _durations(start, end, valid), _bools(valid),
            r["payload_length"], r["tile_count"],
            r["tile_duration_sum_ns"], r["operation_count"]])

    def _command_region_events(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        start, end = r["start_host_time_ns"], r["end_host_time_ns"]
        valid = (start >= 0) & (end >= start)
        buckets = r["tail_remaining_tiles_bucket_counts"]
        c = lambda name: r[name]  # noqa: E731
        return self._render(T_COMMAND_REGION, s.chunk[lo:hi], [
            c("physical_device_ordinal"), c("queue_ordinal"), c("stream_id"), c("event_id"),
            c("submission_id"), c("command_buffer_id"), c("block_sequence"), c("epoch"),
            c("index"), c("next_index"), c("flags"), start, end,
            _durations(start, end, valid), _bools(valid), c("dispatch_count"), c("tile_count"),
            c("width_bucket"), c("lookahead_width_bucket"), c("next_tile_count"),
            c("next_width_bucket"), c("next_lookahead_width_bucket"), c("worker_count"),
            c("old_wake_budget"), c("new_wake_budget"), c("wake_delta"),
            c("useful_drain_count"), c("no_work_drain_count"),
            c("first_useful_drain_start_host_time_ns"), c("last_useful_drain_end_host_time_ns"),
            c("tail_count"), c("tail_remaining_tiles_min"), c("tail_remaining_tiles_max"),
            *[buckets[:, k] for k in range(8)],
            c("tail_first_start_host_time_ns"), c("tail_last_end_host_time_ns"),
            c("tail_start_offset_ns"), c("tail_drain_duration_ns"), c("keep_active_count"),
            c("publish_keep_active_count"), c("keep_warm_count")])

    def _queue_events(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        types = r["type"]
        return self._render(T_QUEUE_EVENT, s.chunk[lo:hi], [
            r["event_id"], _lookup(QUEUE_TYPE_NAMES, types), types, r["flags"],
            _lookup(STRATEGY_NAMES, r["dependency_strategy"]),
            r["submission_id"], r["command_buffer_id"],
            r["allocation_id"], r["physical_device_ordinal"],
            r["queue_ordinal"], r["stream_id"], r["host_time_ns"],
            r["ready_host_time_ns"], r["wait_count"],
            r["signal_count"], r["barrier_count"],
            r["operation_count"], r["payload_length"]])

    def _memory_events(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        types = r["type"]
        c = lambda name: r[name]  # noqa: E731
        return self._render(T_MEMORY, s.chunk[lo:hi], [
            c("event_id"), _lookup(MEMORY_TYPE_NAMES, types), types, c("flags"), c("result"),
            c("host_time_ns"), c("allocation_id"), c("pool_id"), c("backing_id"),
            c("submission_id"), c("physical_device_ordinal"), c("queue_ordinal"),
            c("frontier_entry_count"), c("memory_type"), c("buffer_usage"), c("offset"),
            c("length"), c("alignment"),
            _bools(_flag(r, "flags", F.MEMORY_EXTERNALLY_OWNED)),
            _bools(_flag(r, "flags", F.MEMORY_POOL_STATS)), c("pool_bytes_reserved"),
            c("pool_bytes_free"), c("pool_bytes_committed"), c("pool_budget_limit"),
            c("pool_reservation_count"), c("pool_slab_count")])

    def _event_relationships(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        kinds, sources, targets = r["type"].tolist(), r["source_type"].tolist(), \
            r["target_type"].tolist()
        return self._render(T_RELATIONSHIP, s.chunk[lo:hi], [
            r["relationship_id"], _lookup(RELATIONSHIP_NAMES, kinds), kinds,
            _lookup(ENDPOINT_NAMES, sources), sources, _lookup(ENDPOINT_NAMES, targets), targets,
            r["physical_device_ordinal"], r["queue_ordinal"],
            r["stream_id"], r["source_id"], r["source_secondary_id"],
            r["target_id"], r["target_secondary_id"]])

    # --- counters

    def _counter_sets(self, s: _Rows, lo: int, hi: int) -> list[str]:
        hi = self._check_lengths(s, lo, hi, s.rows[lo:hi]["name_length"],
                                 "counter set name length is inconsistent with record length")
        r = s.rows[lo:hi]
        return self._render(T_COUNTER_SET, s.chunk[lo:hi], [
            r["counter_set_id"], r["physical_device_ordinal"],
            r["flags"], r["counter_count"], r["sample_value_count"],
            self._strings(s, lo, hi, "name_length")[0]])

    def _counters(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        tail = (r["block_name_length"].astype(np.int64) + r["name_length"]
                + r["description_length"])
        hi = self._check_lengths(s, lo, hi, tail,
                                 "counter string lengths are inconsistent with record length")
        r = s.rows[lo:hi]
        return self._render(T_COUNTER, s.chunk[lo:hi], [
            r["counter_set_id"], r["counter_ordinal"],
            r["physical_device_ordinal"], r["flags"], r["unit"],
            r["sample_value_offset"], r["sample_value_count"],
            *self._strings(s, lo, hi, "block_name_length", "name_length", "description_length")])

    def _counter_samples(self, s: _Rows, lo: int, hi: int) -> list[str]:
        hi = self._check_lengths(
            s, lo, hi, 8 * s.rows[lo:hi]["sample_value_count"].astype(np.int64),
            "counter sample value count is inconsistent with record length")
        r = s.rows[lo:hi]
        ranged = _flag(r, "flags", F.SAMPLE_DEVICE_TICK_RANGE)
        # Without a device tick range the timing block is all zeros (the raw ticks still print).
        times = self.times.columns(r["physical_device_ordinal"],
                                   np.where(ranged, r["start_tick"], 0), r["end_tick"])
        data = self.data
        values = []
        for offset, count in zip(s.offsets[lo:hi].tolist(), r["sample_value_count"].tolist()):
            v = struct.unpack_from(f"<{count}Q", data, offset + schema.COUNTER_SAMPLE.itemsize)
            values.append("[" + ",".join(map(str, v)) + "]")
        return self._render(T_COUNTER_SAMPLE, s.chunk[lo:hi], [
            r["sample_id"], r["counter_set_id"],
            _lookup(SCOPE_NAMES, r["scope"]), r["scope"],
            r["dispatch_event_id"], r["submission_id"],
            r["command_buffer_id"], r["command_index"],
            r["executable_id"], r["function_ordinal"],
            r["physical_device_ordinal"], r["queue_ordinal"],
            r["stream_id"], r["flags"], _bools(ranged),
            r["start_tick"], r["end_tick"], *times, values])

    # --- device metrics

    def _device_metric_sources(self, s: _Rows, lo: int, hi: int) -> list[str]:
        hi = self._check_lengths(
            s, lo, hi, s.rows[lo:hi]["name_length"],
            "device metric source name length is inconsistent with record length")
        r = s.rows[lo:hi]
        classes = r["device_class"].tolist()
        return self._render(T_METRIC_SOURCE, s.chunk[lo:hi], [
            r["source_id"], r["physical_device_ordinal"],
            _lookup(DEVICE_CLASS_NAMES, classes), classes, r["flags"],
            r["source_kind"], r["source_revision"],
            r["metric_count"], self._strings(s, lo, hi, "name_length")[0]])

    def _device_metric_descriptors(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        hi = self._check_lengths(
            s, lo, hi, r["name_length"].astype(np.int64) + r["description_length"],
            "device metric descriptor string lengths are inconsistent with record length")
        r = s.rows[lo:hi]
        ids = r["metric_id"]
        units, kinds = r["unit"].tolist(), r["value_kind"].tolist()
        semantics, hints = r["semantic"].tolist(), r["plot_hint"].tolist()
        return self._render(T_METRIC_DESCRIPTOR, s.chunk[lo:hi], [
            r["source_id"], ids,
            _bools((ids != 0) & (ids < np.uint64(METRIC_PRODUCER_BASE))),
            _bools(ids >= np.uint64(METRIC_PRODUCER_BASE)), r["flags"],
            _lookup(METRIC_UNIT_NAMES, units), units, _lookup(METRIC_KIND_NAMES, kinds), kinds,
            _lookup(METRIC_SEMANTIC_NAMES, semantics), semantics,
            _lookup(METRIC_PLOT_NAMES, hints), hints,
            *self._strings(s, lo, hi, "name_length", "description_length")])

    def _metric_value(self, source_id: int, metric_id: int, bits: int, flags: int) -> str:
        descriptor = self.model.metric_descriptors[(source_id, metric_id)]
        d = descriptor.record
        kind = int(d["value_kind"])
        if kind == 1:
            value = str(bits - (1 << 64) if bits >> 63 else bits)
        elif kind == 2:
            value = str(bits)
        elif kind == 3:
            value = "%.17g" % struct.unpack("<d", struct.pack("<Q", bits))[0]
        else:
            value = "null"
        return T_METRIC_VALUE % (
            metric_id, json_string(self._raw_names(
                "device-metric-descriptors", ("source_id", "metric_id"),
                ("name_length", "description_length"))[(source_id, metric_id)][0]),
            _name(METRIC_UNIT_NAMES, int(d["unit"])), _name(METRIC_KIND_NAMES, kind),
            _name(METRIC_SEMANTIC_NAMES, int(d["semantic"])),
            _name(METRIC_PLOT_NAMES, int(d["plot_hint"])), flags, value, bits)

    def _device_metric_samples(self, s: _Rows, lo: int, hi: int) -> list[str]:
        hi = self._check_lengths(
            s, lo, hi, schema.METRIC_VALUE.itemsize * s.rows[lo:hi]["value_count"].astype(np.int64),
            "device metric sample value count is inconsistent with record length")
        r = s.rows[lo:hi]
        data = self.data
        descriptors = self.model.metric_descriptors
        values = []
        for k, (offset, count, source_id) in enumerate(zip(
                s.offsets[lo:hi].tolist(), r["value_count"].tolist(), r["source_id"].tolist())):
            base = offset + schema.METRIC_SAMPLE.itemsize
            entries = [struct.unpack_from("<QQI", data, base + 24 * j) for j in range(count)]
            missing = next((m for m, _, _ in entries if (source_id, m) not in descriptors), None)
            if missing is not None:
                row = lo + k
                s.fail_at(row, BundleFormatError(
                    f"device metric sample references missing descriptor source={source_id} "
                    f"metric={missing}", record_index=int(s.chunk[row])))
                break
            values.append("[" + ",".join(self._metric_value(source_id, m, bits, flags)
                                         for m, bits, flags in entries) + "]")
        hi = lo + len(values)
        r = s.rows[lo:hi]
        begin, end = r["host_time_begin_ns"], r["host_time_end_ns"]
        return self._render(T_METRIC_SAMPLE, s.chunk[lo:hi], [
            r["sample_id"], r["source_id"], r["flags"],
            r["physical_device_ordinal"], begin, end,
            _uncertainty(begin, end), _bools(_flag(r, "flags", F.METRIC_SOURCE_TIMESTAMP)),
            r["source_timestamp"], r["source_timestamp_frequency_hz"], values])

    def _executable_traces(self, s: _Rows, lo: int, hi: int) -> np.ndarray:
        r = s.rows[lo:hi]
        formats = r["format"].tolist()
        c = lambda name: r[name]  # noqa: E731
        return self._render(T_TRACE, s.chunk[lo:hi], [
            c("trace_id"), _lookup(TRACE_FORMAT_NAMES, formats), formats, c("flags"),
            c("shader_engine"), c("dispatch_event_id"), c("submission_id"),
            c("command_buffer_id"), c("command_index"), c("executable_id"),
            c("function_ordinal"), c("physical_device_ordinal"), c("queue_ordinal"),
            c("stream_id"), c("record_length"), c("data_length")])


def _uncertainty(begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    return np.where(end >= begin, end - begin, 0)


def _durations(start: np.ndarray, end: np.ndarray, valid: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.where(valid, end - start, 0)


# --- the export -----------------------------------------------------------------------------------

ROUTED = {schema.CONTENT_TYPES.index(schema.BY_SUFFIX[s]): s for s in ROUTES}


def _record_lines(bundle: Bundle, routed: np.ndarray, a: int,
                  b: int) -> tuple[list[int], list[str]]:
    """Session rows and diagnostics of records [a, b), each with its record index."""
    r = bundle.records[a:b]
    is_chunk = r["record_type"] == RecordType.CHUNK
    truncated = is_chunk & ((r["chunk_flags"] & schema.CHUNK_FLAG_TRUNCATED) != 0)
    wanted = ~is_chunk | truncated | ~routed[a:b]
    owners, text = [], []
    for k in np.nonzero(wanted)[0].tolist():
        i, row = a + k, r[k]
        kind = int(row["record_type"])
        if kind in (RecordType.SESSION_BEGIN, RecordType.SESSION_END):
            status = int(row["session_status_code"])
            text.append(T_SESSION % (
                i, '"begin"' if kind == RecordType.SESSION_BEGIN else '"end"',
                int(row["session_id"]), int(row["stream_id"]), int(row["event_id"]), status,
                json_string(schema.status_name(status))))
            owners.append(i)
            continue
        h = bundle.records[i]
        start = int(h["offset"]) + int(h["header_length"])
        content_type = json_string(_text(bundle.data[start:start + int(h["content_type_length"])]))
        if kind != RecordType.CHUNK:
            text.append(T_DIAGNOSTIC % (i, '"warning"', '"unknown_record"', content_type,
                                        '"unknown profile file record type"'))
            owners.append(i)
            continue
        if truncated[k]:
            text.append(T_TRUNCATED % (i, content_type, int(row["dropped_record_count"])))
            owners.append(i)
        if not routed[i]:
            text.append(T_DIAGNOSTIC % (i, '"warning"', '"unknown_chunk"', content_type,
                                        '"unknown profile chunk content type"'))
            owners.append(i)
    return owners, text


def _blocks(count: int, sources: list[_Rows]) -> Iterator[tuple[int, int]]:
    """Record ranges [a, b) of at most BLOCK_RECORDS records and about BLOCK_ROWS rows."""
    weight = np.ones(count, np.int64) * (BLOCK_ROWS // BLOCK_RECORDS)
    for source in sources:
        weight += np.bincount(source.chunk, minlength=count)[:count]
    block = np.cumsum(weight) // BLOCK_ROWS
    starts = np.concatenate([[0], np.nonzero(np.diff(block))[0] + 1]).tolist()
    yield from zip(starts, starts[1:] + [count])


def _byte_blocks(bundle: Bundle) -> Iterator[bytes | memoryview]:
    """The export as JSONL bytes, a block of complete lines at a time, in file order. A block is
    valid until the next is asked for (the buffers are reused)."""
    model = Model.build(bundle)          # pass one: nothing is written if this fails
    h = bundle.header
    yield (SCHEMA_ROW % (SCHEMA_VERSION, int(h["version_major"]), int(h["version_minor"]))).encode()

    exporter = _Exporter(bundle, model)
    ordered = Sink()  # each block's rows in file order (its memory reused block after block)
    records = bundle.records
    is_chunk = records["record_type"] == RecordType.CHUNK
    routed = is_chunk & np.isin(records["content_index"], list(ROUTED))
    sources = [_Rows(bundle, schema.CONTENT_TYPES[index])
               for index in distinct(records["content_index"][routed])]

    record_starts = records["offset"]
    record_ends = record_starts + records["record_length"]
    for a, b in _blocks(len(records), sources):
        if b > a:
            bundle.prefetch(int(record_starts[a]), int(record_ends[b - 1]))  # the block's pages
        # Every piece of the block with its sort key: 2*record for a record's own session row or
        # diagnostics (one line each), 2*record+1 for the typed rows of a chunk (one byte range).
        # A stable sort puts them in file order.
        owners, text = _record_lines(bundle, routed, a, b)
        lines = [t.encode("utf-8", "surrogateescape") for t in text]
        data = exporter.sink  # every row of the block, unordered
        data.clear()
        data.append(b"".join(lines))
        ends = np.cumsum([len(x) for x in lines], dtype=np.uint64)
        keys = [np.asarray(owners, np.int64) * 2]
        starts, stops = [ends - np.asarray([len(x) for x in lines], np.uint64)], [ends]
        failed = None
        for source in sources:
            lo, hi = np.searchsorted(source.chunk, [a, b]).tolist()
            if hi > lo:
                base = len(data)
                row_ends = exporter.format(source, lo, hi)  # rows appended to data
                if len(row_ends):
                    chunk = source.chunk[lo:lo + len(row_ends)]
                    last = np.append(np.flatnonzero(chunk[1:] != chunk[:-1]), len(chunk) - 1)
                    piece_end = row_ends[last]
                    piece_start = np.concatenate(([0], piece_end[:-1])).astype(np.uint64)
                    keys.append(chunk[last] * 2 + 1)
                    starts.append(piece_start + np.uint64(base))
                    stops.append(piece_end + np.uint64(base))
            if source.error is not None and a <= source.error_chunk < b and (
                    failed is None or source.error_chunk < failed.error_chunk):
                failed = source
        keys = np.concatenate(keys)
        starts, stops = np.concatenate(starts), np.concatenate(stops)
        if failed is not None:  # IREE stops inside the failing chunk, after its good rows
            keep = keys <= 2 * failed.error_chunk + 1
            keys, starts, stops = keys[keep], starts[keep], stops[keep]
        order = np.argsort(keys, kind="stable")
        if b > a:
            bundle.release_pages(int(record_ends[b - 1]))  # read: let the file's pages go
        yield gather_ranges(data, starts[order], stops[order], ordered)
        if failed is not None:
            raise failed.error


def lines(bundle: Bundle) -> Iterator[str]:
    """The export as text: blocks of complete JSONL lines, in file order (bytes that are not
    UTF-8 kept as surrogates)."""
    for block in _byte_blocks(bundle):
        yield str(block, "utf-8", "surrogateescape")


def write(bundle: Bundle, out: TextIO) -> None:
    """Writes the export to a text stream (what `amdgpu-profile export` does), byte for byte as
    IREE does: through the stream's binary buffer when it has one, so that names that are not
    UTF-8 come out as the same bytes."""
    raw = getattr(out, "buffer", None)
    if raw is None:
        for text in lines(bundle):
            out.write(text)
        return
    out.flush()
    try:
        for block in _byte_blocks(bundle):
            raw.write(block)
    finally:
        raw.flush()


def _parse_int(text: str) -> int | Raw:
    return Raw(text) if text == "-0" else int(text)  # a %.17g double that looks like an integer


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> Iterator[dict]:
    """The export as dicts in IREE's key order; `jsonl.write_rows` turns them back into the same
    text (doubles are kept as `Raw` so their `%.17g` text survives)."""
    decode = json.JSONDecoder(parse_float=Raw, parse_int=_parse_int).decode
    for text in lines(bundle):
        for line in text.splitlines():
            yield decode(line)

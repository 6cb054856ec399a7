"""The .ireeprof bundle format, version 1.6, declared once.

Every reader, writer, report and test takes its layouts, content types and enumerations from this
module. Layouts are numpy structured dtypes with explicit offsets and item sizes, so a dtype *is*
the wire layout: `np.frombuffer(payload, dtype)` decodes, `array.tobytes()` encodes.

Sources: ../shared/reference/ireeprof.md sections 1-2 (file header, record header, typed payloads,
enumerations), which were checked against IREE 3.13.0's `iree-profile`.

Version rules: readers accept major version 1 with any minor; fixed-size typed records may be longer
than the layout here (forward extension: the tail is skipped); variable-size records must match their
length fields exactly.
"""

from __future__ import annotations

import numpy as np

MAGIC = 0x46505249  # b"IRPF" little-endian
VERSION_MAJOR = 1
VERSION_MINOR = 6
U32_MAX = 0xFFFFFFFF
U64_MAX = 0xFFFFFFFFFFFFFFFF
CONTENT_TYPE_PREFIX = "application/vnd.iree.hal.profile."


def _dtype(size: int, fields: list[tuple[int, str, str | tuple]]) -> np.dtype:
    """Builds a little-endian structured dtype from (offset, type, name) rows."""
    names, formats, offsets = [], [], []
    for offset, fmt, name in fields:
        names.append(name)
        formats.append(fmt)
        offsets.append(offset)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": size})


U8, U16, U32, U64, I32, I64 = "<u1", "<u2", "<u4", "<u8", "<i4", "<i8"

FILE_HEADER = _dtype(24, [
    (0, U32, "magic"), (4, U16, "version_major"), (6, U16, "version_minor"),
    (8, U32, "header_length"), (12, U32, "flags"), (16, U64, "file_length"),
])

RECORD_HEADER = _dtype(104, [
    (0, U64, "record_length"), (8, U64, "payload_length"), (16, U64, "session_id"),
    (24, U64, "stream_id"), (32, U64, "event_id"), (40, U64, "executable_id"),
    (48, U64, "command_buffer_id"), (56, U32, "header_length"), (60, U32, "content_type_length"),
    (64, U32, "name_length"), (68, U32, "physical_device_ordinal"), (72, U32, "queue_ordinal"),
    (80, U64, "chunk_flags"), (88, U64, "dropped_record_count"), (96, U32, "session_status_code"),
    (100, U16, "record_type"), (102, U16, "flags"),
])


class RecordType:
    NONE = 0
    SESSION_BEGIN = 1
    CHUNK = 2
    SESSION_END = 3
    NAMES = {1: "session_begin", 2: "chunk", 3: "session_end"}


CHUNK_FLAG_TRUNCATED = 1

STATUS_NAMES = [
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    "DEFERRED", "INCOMPATIBLE",
]


def status_name(code: int) -> str:
    return STATUS_NAMES[code] if 0 <= code < len(STATUS_NAMES) else "UNKNOWN_STATUS"


def hash_hex(words) -> str:
    """A 128-bit hash (code object, function) as IREE prints it: two u64 words, `%016x%016x`."""
    return f"{int(words[0]):016x}{int(words[1]):016x}"


# --- Typed payload records ------------------------------------------------------------------------

DEVICE = _dtype(32, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U32, "physical_device_ordinal"),
    (12, U32, "queue_count"), (16, (U8, 16), "physical_device_uuid"),
])
QUEUE = _dtype(24, [
    (0, U32, "record_length"), (4, U32, "physical_device_ordinal"), (8, U32, "queue_ordinal"),
    (12, U32, "reserved0"), (16, U64, "stream_id"),
])
EXECUTABLE = _dtype(40, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "executable_id"),
    (16, U32, "function_count"), (20, U32, "reserved0"), (24, (U64, 2), "code_object_hash"),
])
CODE_OBJECT = _dtype(48, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "executable_id"),
    (16, U64, "code_object_id"), (24, U64, "data_length"), (32, (U64, 2), "code_object_hash"),
])
CODE_OBJECT_LOAD = _dtype(40, [
    (0, U32, "record_length"), (4, U32, "physical_device_ordinal"), (8, U64, "executable_id"),
    (16, U64, "code_object_id"), (24, I64, "load_delta"), (32, U64, "load_size"),
])
FUNCTION = _dtype(64, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "executable_id"),
    (16, U32, "function_ordinal"), (20, U32, "constant_count"), (24, U32, "binding_count"),
    (28, U32, "parameter_count"), (32, (U32, 3), "workgroup_size"), (44, U32, "name_length"),
    (48, (U64, 2), "function_hash"),
])
COMMAND_BUFFER = _dtype(48, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "command_buffer_id"), (16, U64, "mode"),
    (24, U64, "command_categories"), (32, U64, "queue_affinity"),
    (40, U32, "physical_device_ordinal"), (44, U32, "reserved0"),
])
COMMAND_OPERATION = _dtype(120, [
    (0, U32, "record_length"), (4, U32, "type"), (8, U32, "flags"), (12, U32, "command_index"),
    (16, U64, "command_buffer_id"), (24, U32, "block_ordinal"), (28, U32, "block_command_ordinal"),
    (32, U64, "executable_id"), (40, U32, "function_ordinal"), (44, U32, "binding_count"),
    (48, (U32, 3), "workgroup_count"), (60, (U32, 3), "workgroup_size"), (72, U64, "source_offset"),
    (80, U64, "target_offset"), (88, U64, "length"), (96, U32, "source_ordinal"),
    (100, U32, "target_ordinal"), (104, U32, "target_block_ordinal"),
    (108, U32, "alternate_block_ordinal"), (112, U32, "reserved0"),
])
CLOCK_CORRELATION = _dtype(72, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U32, "physical_device_ordinal"),
    (12, U32, "reserved0"), (16, U64, "sample_id"), (24, U64, "device_tick"),
    (32, U64, "host_cpu_timestamp_ns"), (40, U64, "host_system_timestamp"),
    (48, U64, "host_system_frequency_hz"), (56, I64, "host_time_begin_ns"),
    (64, I64, "host_time_end_ns"),
])
DISPATCH_EVENT = _dtype(88, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "event_id"), (16, U64, "submission_id"),
    (24, U64, "command_buffer_id"), (32, U64, "executable_id"), (40, U32, "command_index"),
    (44, U32, "function_ordinal"), (48, (U32, 3), "workgroup_count"),
    (60, (U32, 3), "workgroup_size"), (72, U64, "start_tick"), (80, U64, "end_tick"),
])
QUEUE_EVENT = _dtype(104, [
    (0, U32, "record_length"), (4, U32, "type"), (8, U32, "flags"), (12, U32, "dependency_strategy"),
    (16, U64, "event_id"), (24, I64, "host_time_ns"), (32, U64, "submission_id"),
    (40, U64, "command_buffer_id"), (48, U64, "allocation_id"), (56, U64, "stream_id"),
    (64, U32, "physical_device_ordinal"), (68, U32, "queue_ordinal"), (72, U32, "wait_count"),
    (76, U32, "signal_count"), (80, U32, "barrier_count"), (84, U32, "operation_count"),
    (88, U64, "payload_length"), (96, I64, "ready_host_time_ns"),
])
QUEUE_DEVICE_EVENT = _dtype(96, [
    (0, U32, "record_length"), (4, U32, "type"), (8, U32, "flags"), (12, U32, "reserved0"),
    (16, U64, "event_id"), (24, U64, "submission_id"), (32, U64, "command_buffer_id"),
    (40, U64, "allocation_id"), (48, U64, "stream_id"), (56, U64, "payload_length"),
    (64, U32, "physical_device_ordinal"), (68, U32, "queue_ordinal"), (72, U32, "operation_count"),
    (76, U32, "reserved1"), (80, U64, "start_tick"), (88, U64, "end_tick"),
])
HOST_EXECUTION_EVENT = _dtype(152, [
    (0, U32, "record_length"), (4, U32, "type"), (8, U32, "flags"), (12, U32, "status_code"),
    (16, U64, "event_id"), (24, U64, "submission_id"), (32, U64, "command_buffer_id"),
    (40, U64, "executable_id"), (48, U64, "allocation_id"), (56, U64, "stream_id"),
    (64, U32, "physical_device_ordinal"), (68, U32, "queue_ordinal"), (72, U32, "command_index"),
    (76, U32, "function_ordinal"), (80, (U32, 3), "workgroup_count"),
    (92, (U32, 3), "workgroup_size"), (104, I64, "start_host_time_ns"),
    (112, I64, "end_host_time_ns"), (120, U64, "payload_length"), (128, U64, "tile_count"),
    (136, I64, "tile_duration_sum_ns"), (144, U32, "operation_count"), (148, U32, "reserved0"),
])
COMMAND_REGION_EVENT = _dtype(248, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "event_id"), (16, U64, "submission_id"),
    (24, U64, "command_buffer_id"), (32, U64, "stream_id"), (40, U32, "physical_device_ordinal"),
    (44, U32, "queue_ordinal"), (48, U32, "block_sequence"), (52, U32, "epoch"), (56, I32, "index"),
    (60, U32, "dispatch_count"), (64, U32, "tile_count"), (68, U32, "width_bucket"),
    (72, U32, "lookahead_width_bucket"), (76, U32, "useful_drain_count"),
    (80, U32, "no_work_drain_count"), (88, U32, "tail_count"), (92, U32, "tail_remaining_tiles_min"),
    (96, U32, "tail_remaining_tiles_max"), (100, (U32, 8), "tail_remaining_tiles_bucket_counts"),
    (136, I64, "tail_first_start_host_time_ns"), (144, I64, "tail_last_end_host_time_ns"),
    (152, I64, "tail_start_offset_ns"), (160, I64, "tail_drain_duration_ns"),
    (168, I64, "first_useful_drain_start_host_time_ns"),
    (176, I64, "last_useful_drain_end_host_time_ns"), (184, I64, "start_host_time_ns"),
    (192, I64, "end_host_time_ns"), (200, I32, "next_index"), (204, U32, "next_tile_count"),
    (208, U32, "next_width_bucket"), (212, U32, "next_lookahead_width_bucket"),
    (216, U32, "worker_count"), (220, I32, "old_wake_budget"), (224, I32, "new_wake_budget"),
    (228, I32, "wake_delta"), (232, U32, "keep_active_count"), (236, U32, "publish_keep_active_count"),
    (240, U32, "keep_warm_count"),
])
MEMORY_EVENT = _dtype(160, [
    (0, U32, "record_length"), (4, U32, "type"), (8, U32, "flags"), (12, U32, "result"),
    (16, U64, "event_id"), (24, I64, "host_time_ns"), (32, U64, "allocation_id"),
    (40, U64, "pool_id"), (48, U64, "backing_id"), (56, U64, "submission_id"),
    (64, U32, "physical_device_ordinal"), (68, U32, "queue_ordinal"),
    (72, U32, "frontier_entry_count"), (76, U32, "reserved0"), (80, U64, "memory_type"),
    (88, U64, "buffer_usage"), (96, U64, "offset"), (104, U64, "length"), (112, U64, "alignment"),
    (120, U64, "pool_bytes_reserved"), (128, U64, "pool_bytes_free"),
    (136, U64, "pool_bytes_committed"), (144, U64, "pool_budget_limit"),
    (152, U32, "pool_reservation_count"), (156, U32, "pool_slab_count"),
])
EVENT_RELATIONSHIP = _dtype(72, [
    (0, U32, "record_length"), (4, U32, "type"), (8, U64, "relationship_id"),
    (16, U32, "source_type"), (20, U32, "target_type"), (24, U32, "physical_device_ordinal"),
    (28, U32, "queue_ordinal"), (32, U64, "stream_id"), (40, U64, "source_id"),
    (48, U64, "source_secondary_id"), (56, U64, "target_id"), (64, U64, "target_secondary_id"),
])
COUNTER_SET = _dtype(32, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "counter_set_id"),
    (16, U32, "physical_device_ordinal"), (20, U32, "counter_count"),
    (24, U32, "sample_value_count"), (28, U32, "name_length"),
])
COUNTER = _dtype(48, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U32, "unit"),
    (12, U32, "physical_device_ordinal"), (16, U64, "counter_set_id"), (24, U32, "counter_ordinal"),
    (28, U32, "sample_value_offset"), (32, U32, "sample_value_count"),
    (36, U32, "block_name_length"), (40, U32, "name_length"), (44, U32, "description_length"),
])
COUNTER_SAMPLE = _dtype(112, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U32, "scope"), (12, U32, "reserved0"),
    (16, U64, "sample_id"), (24, U64, "counter_set_id"), (32, U64, "dispatch_event_id"),
    (40, U64, "submission_id"), (48, U64, "command_buffer_id"), (56, U64, "executable_id"),
    (64, U64, "stream_id"), (72, U64, "start_tick"), (80, U64, "end_tick"),
    (88, U32, "command_index"), (92, U32, "function_ordinal"), (96, U32, "physical_device_ordinal"),
    (100, U32, "queue_ordinal"), (104, U32, "sample_value_count"), (108, U32, "reserved1"),
])
METRIC_SOURCE = _dtype(40, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "source_id"),
    (16, U32, "physical_device_ordinal"), (20, U32, "device_class"), (24, U32, "source_kind"),
    (28, U32, "source_revision"), (32, U32, "metric_count"), (36, U32, "name_length"),
])
METRIC_DESCRIPTOR = _dtype(48, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "source_id"), (16, U64, "metric_id"),
    (24, U32, "unit"), (28, U32, "value_kind"), (32, U32, "semantic"), (36, U32, "plot_hint"),
    (40, U32, "name_length"), (44, U32, "description_length"),
])
METRIC_SAMPLE = _dtype(64, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "sample_id"), (16, U64, "source_id"),
    (24, I64, "host_time_begin_ns"), (32, I64, "host_time_end_ns"), (40, U64, "source_timestamp"),
    (48, U64, "source_timestamp_frequency_hz"), (56, U32, "physical_device_ordinal"),
    (60, U32, "value_count"),
])
METRIC_VALUE = _dtype(24, [
    (0, U64, "metric_id"), (8, U64, "value_bits"), (16, U32, "flags"), (20, U32, "reserved0"),
])
EXECUTABLE_TRACE = _dtype(88, [
    (0, U32, "record_length"), (4, U32, "format"), (8, U32, "flags"), (12, U32, "shader_engine"),
    (16, U64, "trace_id"), (24, U64, "dispatch_event_id"), (32, U64, "submission_id"),
    (40, U64, "command_buffer_id"), (48, U64, "executable_id"), (56, U64, "stream_id"),
    (64, U32, "command_index"), (68, U32, "function_ordinal"), (72, U32, "physical_device_ordinal"),
    (76, U32, "queue_ordinal"), (80, U64, "data_length"),
])


class ContentKind:
    """How a content type's payload is split into typed records."""

    SESSION = "session"    # begin/end records only
    FIXED = "fixed"        # fixed-size records; record_length may exceed the layout (extension)
    VARIABLE = "variable"  # a fixed head plus trailing bytes that must match its length fields
    TRACE = "trace"        # exactly one 88-byte head, raw bytes to the end of the payload


class ContentType:
    """One `application/vnd.iree.hal.profile.*` content type and its record layout."""

    def __init__(self, suffix: str, key: str, dtype: np.dtype | None, kind: str):
        self.suffix = suffix
        self.name = CONTENT_TYPE_PREFIX + suffix
        self.key = key        # singular snake_case family name used by summary rows
        self.dtype = dtype
        self.kind = kind

    def __repr__(self) -> str:
        return f"ContentType({self.suffix!r})"


# File order of this table is the order summary reports families in.
CONTENT_TYPES: list[ContentType] = [
    ContentType("session", "session", None, ContentKind.SESSION),
    ContentType("devices", "device", DEVICE, ContentKind.FIXED),
    ContentType("queues", "queue", QUEUE, ContentKind.FIXED),
    ContentType("executables", "executable", EXECUTABLE, ContentKind.FIXED),
    ContentType("executable-code-objects", "executable_code_object", CODE_OBJECT, ContentKind.VARIABLE),
    ContentType("executable-code-object-loads", "executable_code_object_load", CODE_OBJECT_LOAD,
                ContentKind.FIXED),
    ContentType("executable-functions", "executable_function", FUNCTION, ContentKind.VARIABLE),
    ContentType("command-buffers", "command_buffer", COMMAND_BUFFER, ContentKind.FIXED),
    ContentType("command-operations", "command_operation", COMMAND_OPERATION, ContentKind.FIXED),
    ContentType("clock-correlations", "clock_correlation", CLOCK_CORRELATION, ContentKind.FIXED),
    ContentType("dispatch-events", "dispatch_event", DISPATCH_EVENT, ContentKind.FIXED),
    ContentType("queue-events", "queue_event", QUEUE_EVENT, ContentKind.FIXED),
    ContentType("queue-device-events", "queue_device_event", QUEUE_DEVICE_EVENT, ContentKind.FIXED),
    ContentType("host-execution-events", "host_execution_event", HOST_EXECUTION_EVENT,
                ContentKind.FIXED),
    ContentType("command-region-events", "command_region_event", COMMAND_REGION_EVENT,
                ContentKind.FIXED),
    ContentType("memory-events", "memory_event", MEMORY_EVENT, ContentKind.FIXED),
    ContentType("event-relationships", "event_relationship", EVENT_RELATIONSHIP, ContentKind.FIXED),
    ContentType("counter-sets", "counter_set", COUNTER_SET, ContentKind.VARIABLE),
    ContentType("counters", "counter", COUNTER, ContentKind.VARIABLE),
    ContentType("counter-samples", "counter_sample", COUNTER_SAMPLE, ContentKind.VARIABLE),
    ContentType("device-metric-sources", "device_metric_source", METRIC_SOURCE, ContentKind.VARIABLE),
    ContentType("device-metric-descriptors", "device_metric_descriptor", METRIC_DESCRIPTOR,
                ContentKind.VARIABLE),
    ContentType("device-metric-samples", "device_metric_sample", METRIC_SAMPLE, ContentKind.VARIABLE),
    ContentType("executable-traces", "executable_trace", EXECUTABLE_TRACE, ContentKind.TRACE),
]
BY_NAME: dict[str, ContentType] = {ct.name: ct for ct in CONTENT_TYPES}
BY_SUFFIX: dict[str, ContentType] = {ct.suffix: ct for ct in CONTENT_TYPES}


def variable_tail_length(ct: ContentType, head: np.void) -> int:
    """Bytes that must follow a variable record's fixed head, from its own length fields."""
    s = ct.suffix
    if s == "executable-code-objects":
        return int(head["data_length"])
    if s == "executable-functions":
        return int(head["name_length"])
    if s == "counter-sets":
        return int(head["name_length"])
    if s == "counters":
        return int(head["block_name_length"]) + int(head["name_length"]) + int(head["description_length"])
    if s == "counter-samples":
        return 8 * int(head["sample_value_count"])
    if s == "device-metric-sources":
        return int(head["name_length"])
    if s == "device-metric-descriptors":
        return int(head["name_length"]) + int(head["description_length"])
    if s == "device-metric-samples":
        return METRIC_VALUE.itemsize * int(head["value_count"])
    raise KeyError(s)


# --- Enumerations ---------------------------------------------------------------------------------

COMMAND_OP_NAMES = {0: "unknown", 1: "barrier", 2: "dispatch", 3: "fill", 4: "copy", 5: "update",
                    6: "profile_marker", 7: "branch", 8: "cond_branch", 9: "return"}
QUEUE_EVENT_TYPE_NAMES = {0: "unknown", 1: "barrier", 2: "dispatch", 3: "execute", 4: "copy",
                          5: "fill", 6: "update", 7: "read", 8: "write", 9: "alloca",
                          10: "dealloca", 11: "host_call"}
DEPENDENCY_STRATEGY_NAMES = {0: "none", 1: "inline", 2: "device_barrier", 3: "software_defer"}
MEMORY_EVENT_TYPE_NAMES = {0: "unknown", 1: "slab_acquire", 2: "slab_release", 3: "pool_reserve",
                           4: "pool_materialize", 5: "pool_release", 6: "pool_wait",
                           7: "queue_alloca", 8: "queue_dealloca", 9: "buffer_allocate",
                           10: "buffer_free", 11: "buffer_import", 12: "buffer_unimport"}
RELATIONSHIP_TYPE_NAMES = {1: "queue_submission_dispatch",
                           2: "queue_submission_queue_device_event",
                           3: "queue_event_host_execution_event",
                           4: "queue_submission_host_execution_event"}
ENDPOINT_TYPE_NAMES = {1: "queue_submission", 2: "queue_event", 3: "dispatch_event",
                       4: "command_operation", 5: "memory_event", 6: "artifact",
                       7: "queue_device_event", 8: "host_execution_event"}
COUNTER_UNIT_NAMES = {0: "none", 1: "count", 2: "cycles", 3: "bytes"}
COUNTER_SCOPE_NAMES = {0: "none", 1: "dispatch", 2: "command_operation", 3: "device_time_range"}
DEVICE_CLASS_NAMES = {0: "none", 1: "cpu", 2: "gpu", 3: "npu", 0x7FFFFFFF: "other"}
METRIC_UNIT_NAMES = {0: "none", 1: "count", 2: "hz", 3: "bytes", 4: "bytes_per_second",
                     5: "millipercent", 6: "millidegrees_celsius", 7: "microwatts",
                     8: "microjoules", 9: "bitfield", 10: "enum"}
METRIC_VALUE_KIND_NAMES = {1: "i64", 2: "u64", 3: "f64"}
METRIC_SEMANTIC_NAMES = {1: "instant", 2: "average", 3: "cumulative", 4: "delta", 5: "state"}
METRIC_PLOT_HINT_NAMES = {1: "number", 2: "memory", 3: "percentage", 4: "frequency",
                          5: "temperature", 6: "power", 7: "energy", 8: "bandwidth"}
TRACE_FORMAT_NAMES = {0: "none", 1: "amdgpu_att"}


class Flags:
    DEVICE_UUID = 1 << 0
    CODE_OBJECT_HASH = 1 << 0
    FUNCTION_HASH = 1 << 0
    # command operation flags
    OP_EXECUTION_BARRIER = 1 << 0
    OP_INDIRECT_PARAMETERS = 1 << 1
    OP_DYNAMIC_BINDINGS = 1 << 2
    OP_STATIC_BINDINGS = 1 << 3
    OP_PREPUBLISHED_ARGUMENTS = 1 << 4
    OP_CONTROL_FLOW = 1 << 5
    OP_BLOCK_STRUCTURE = 1 << 6
    # clock correlation flags
    CLOCK_DEVICE_TICK = 1 << 0
    CLOCK_HOST_CPU_TIMESTAMP = 1 << 1
    CLOCK_HOST_SYSTEM_TIMESTAMP = 1 << 2
    CLOCK_HOST_TIME_BRACKET = 1 << 3
    CLOCK_DEVICE_TICK_UNALIGNED = 1 << 4
    # dispatch event flags
    DISPATCH_COMMAND_BUFFER = 1 << 0
    DISPATCH_INDIRECT_PARAMETERS = 1 << 1
    # queue / device queue event flags
    QUEUE_SOFTWARE_DEFERRED = 1 << 0
    # host execution flags
    HOST_COMMAND_BUFFER = 1 << 0
    HOST_INDIRECT_PARAMETERS = 1 << 1
    HOST_DEFERRED = 1 << 2
    # command region flags
    REGION_COMMAND_BUFFER = 1 << 0
    REGION_BLOCK_TRANSITION = 1 << 1
    REGION_TERMINAL = 1 << 2
    REGION_HAS_NEXT_REGION = 1 << 3
    # memory event flags
    MEMORY_QUEUE_OPERATION = 1 << 0
    MEMORY_WAIT_FRONTIER = 1 << 1
    MEMORY_WAIT_NOTIFICATION = 1 << 2
    MEMORY_POOL_RESERVATION = 1 << 3
    MEMORY_POOL_STATS = 1 << 4
    MEMORY_EXTERNALLY_OWNED = 1 << 5
    # counters
    COUNTER_RAW = 1 << 0
    SAMPLE_DISPATCH_EVENT = 1 << 0
    SAMPLE_COMMAND_OPERATION = 1 << 1
    SAMPLE_DEVICE_TICK_RANGE = 1 << 2
    # metric samples
    METRIC_SOURCE_TIMESTAMP = 1 << 0
    METRIC_PARTIAL = 1 << 1
    # traces
    TRACE_DISPATCH_EVENT = 1 << 0
    TRACE_COMMAND_OPERATION = 1 << 1


BUILTIN_METRIC_NAMES = {
    1: "clock.compute.current", 2: "clock.memory.current", 3: "temperature.edge",
    4: "temperature.hotspot", 5: "temperature.memory", 6: "power.socket", 7: "energy.socket",
    8: "activity.compute", 9: "activity.memory", 10: "memory.local.used",
    11: "memory.local.total", 12: "memory.traffic.read", 13: "memory.traffic.write",
    14: "throttle.status", 15: "performance.tier",
}

for _dt in (DEVICE, QUEUE, EXECUTABLE, CODE_OBJECT, CODE_OBJECT_LOAD, FUNCTION, COMMAND_BUFFER,
            COMMAND_OPERATION, CLOCK_CORRELATION, DISPATCH_EVENT, QUEUE_EVENT, QUEUE_DEVICE_EVENT,
            HOST_EXECUTION_EVENT, COMMAND_REGION_EVENT, MEMORY_EVENT, EVENT_RELATIONSHIP,
            COUNTER_SET, COUNTER, COUNTER_SAMPLE, METRIC_SOURCE, METRIC_DESCRIPTOR, METRIC_SAMPLE,
            EXECUTABLE_TRACE):
    assert _dt.names[0] == "record_length"

"""The .ireeprof bundle format, version 1.6, declared once: its record layouts.

Every reader, writer, report and test takes its layouts, content types and enumerations from this
module. The numbers and names that need no layout (magic, record types, flags, families, status
and enumeration names) are owned by `names.py`, which needs no numpy, and re-exported here. Layouts are numpy structured dtypes with explicit offsets and item sizes, so a dtype *is*
the wire layout: `np.frombuffer(payload, dtype)` decodes, `array.tobytes()` encodes.

Sources: ../shared/reference/ireeprof.md sections 1-2 (file header, record header, typed payloads,
enumerations), which were checked against IREE 3.13.0's `iree-profile`.

Version rules: readers accept major version 1 with any minor; fixed-size typed records may be longer
than the layout here (forward extension: the tail is skipped); variable-size records must match their
length fields exactly.
"""

from __future__ import annotations

import numpy as np

from amdgpu_cli.profile.names import (  # noqa: F401 - re-exported: one import for readers
    BUILTIN_METRIC_NAMES, CHUNK_FLAG_TRUNCATED, COMMAND_OP_NAMES, CONTENT_TYPE_PREFIX,
    COUNTER_SCOPE_NAMES, COUNTER_UNIT_NAMES, DEPENDENCY_STRATEGY_NAMES, DEVICE_CLASS_NAMES,
    ENDPOINT_TYPE_NAMES, FAMILIES, MAGIC, MEMORY_EVENT_TYPE_NAMES, METRIC_PLOT_HINT_NAMES,
    METRIC_SEMANTIC_NAMES, METRIC_UNIT_NAMES, METRIC_VALUE_KIND_NAMES, QUEUE_EVENT_TYPE_NAMES,
    RELATIONSHIP_TYPE_NAMES, STATUS_NAMES, TRACE_FORMAT_NAMES, U32_MAX, U64_MAX, VERSION_MAJOR,
    VERSION_MINOR, ContentKind, Flags, RecordType, hash_hex, status_name)


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


# Every family of `names.FAMILIES` (in its order, the order summary reports them in) and its layout.
_LAYOUTS = {
    "devices": DEVICE, "queues": QUEUE, "executables": EXECUTABLE,
    "executable-code-objects": CODE_OBJECT, "executable-code-object-loads": CODE_OBJECT_LOAD,
    "executable-functions": FUNCTION, "command-buffers": COMMAND_BUFFER,
    "command-operations": COMMAND_OPERATION, "clock-correlations": CLOCK_CORRELATION,
    "dispatch-events": DISPATCH_EVENT, "queue-events": QUEUE_EVENT,
    "queue-device-events": QUEUE_DEVICE_EVENT, "host-execution-events": HOST_EXECUTION_EVENT,
    "command-region-events": COMMAND_REGION_EVENT, "memory-events": MEMORY_EVENT,
    "event-relationships": EVENT_RELATIONSHIP, "counter-sets": COUNTER_SET, "counters": COUNTER,
    "counter-samples": COUNTER_SAMPLE, "device-metric-sources": METRIC_SOURCE,
    "device-metric-descriptors": METRIC_DESCRIPTOR, "device-metric-samples": METRIC_SAMPLE,
    "executable-traces": EXECUTABLE_TRACE,
}
CONTENT_TYPES: list[ContentType] = [ContentType(suffix, key, _LAYOUTS.get(suffix), kind)
                                    for suffix, key, kind in FAMILIES]
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


for _dt in (DEVICE, QUEUE, EXECUTABLE, CODE_OBJECT, CODE_OBJECT_LOAD, FUNCTION, COMMAND_BUFFER,
            COMMAND_OPERATION, CLOCK_CORRELATION, DISPATCH_EVENT, QUEUE_EVENT, QUEUE_DEVICE_EVENT,
            HOST_EXECUTION_EVENT, COMMAND_REGION_EVENT, MEMORY_EVENT, EVENT_RELATIONSHIP,
            COUNTER_SET, COUNTER, COUNTER_SAMPLE, METRIC_SOURCE, METRIC_DESCRIPTOR, METRIC_SAMPLE,
            EXECUTABLE_TRACE):
    assert _dt.names[0] == "record_length"

"""The .ireeprof record layouts as plain data, and a decoder of single records: no numpy.

Each layout is its wire size and its fields as (offset, type, name) rows, the type a numpy-style
little-endian code (`<u4`, `<i8`, ...) or a (code, count) array. `schema.py` makes the numpy
structured dtypes the readers and reports use from these same rows; `Layout.decode` reads one
record into a dict (Python ints, arrays as tuples) with `struct`, for the metadata model, which
is small and read record by record, and is built without importing numpy.

Sources: ../shared/reference/ireeprof.md sections 1-2, checked against IREE 3.13.0's `iree-profile`.
"""

from __future__ import annotations

import struct

_STRUCT_CODES = {"<u1": "B", "<u2": "H", "<u4": "I", "<u8": "Q", "<i4": "i", "<i8": "q"}
_SIZES = {"B": 1, "H": 2, "I": 4, "Q": 8, "i": 4, "q": 8}


class Layout:
    """One record layout: `size` bytes, `fields` as (offset, type, name) rows in offset order."""

    def __init__(self, size: int, fields: list[tuple[int, str | tuple, str]]):
        self.size = size
        self.fields = fields
        self.names = [name for _, _, name in fields]
        self._struct: struct.Struct | None = None  # made on the first decode
        self._arrays: list[int] = []

    def _make_struct(self) -> struct.Struct:
        fmt, at = "<", 0
        for offset, kind, _ in self.fields:
            code, count = (_STRUCT_CODES[kind[0]], kind[1]) if isinstance(kind, tuple) \
                else (_STRUCT_CODES[kind], 0)
            fmt += "x" * (offset - at) + (f"{count}{code}" if count else code)
            at = offset + _SIZES[code] * max(count, 1)
            self._arrays.append(count)
        self._struct = struct.Struct(fmt)
        return self._struct

    def decode(self, buffer, offset: int = 0) -> dict:
        """The record at `offset` of `buffer` as {name: int, or tuple of ints for arrays}."""
        values = (self._struct or self._make_struct()).unpack_from(buffer, offset)
        out, i = {}, 0
        for name, count in zip(self.names, self._arrays):
            if count:
                out[name] = values[i:i + count]
                i += count
            else:
                out[name] = values[i]
                i += 1
        return out


U8, U16, U32, U64, I32, I64 = "<u1", "<u2", "<u4", "<u8", "<i4", "<i8"

FILE_HEADER = Layout(24, [
    (0, U32, "magic"), (4, U16, "version_major"), (6, U16, "version_minor"),
    (8, U32, "header_length"), (12, U32, "flags"), (16, U64, "file_length"),
])

RECORD_HEADER = Layout(104, [
    (0, U64, "record_length"), (8, U64, "payload_length"), (16, U64, "session_id"),
    (24, U64, "stream_id"), (32, U64, "event_id"), (40, U64, "executable_id"),
    (48, U64, "command_buffer_id"), (56, U32, "header_length"), (60, U32, "content_type_length"),
    (64, U32, "name_length"), (68, U32, "physical_device_ordinal"), (72, U32, "queue_ordinal"),
    (80, U64, "chunk_flags"), (88, U64, "dropped_record_count"), (96, U32, "session_status_code"),
    (100, U16, "record_type"), (102, U16, "flags"),
])


# --- Typed payload records ------------------------------------------------------------------------

DEVICE = Layout(32, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U32, "physical_device_ordinal"),
    (12, U32, "queue_count"), (16, (U8, 16), "physical_device_uuid"),
])
QUEUE = Layout(24, [
    (0, U32, "record_length"), (4, U32, "physical_device_ordinal"), (8, U32, "queue_ordinal"),
    (12, U32, "reserved0"), (16, U64, "stream_id"),
])
EXECUTABLE = Layout(40, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "executable_id"),
    (16, U32, "function_count"), (20, U32, "reserved0"), (24, (U64, 2), "code_object_hash"),
])
CODE_OBJECT = Layout(48, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "executable_id"),
    (16, U64, "code_object_id"), (24, U64, "data_length"), (32, (U64, 2), "code_object_hash"),
])
CODE_OBJECT_LOAD = Layout(40, [
    (0, U32, "record_length"), (4, U32, "physical_device_ordinal"), (8, U64, "executable_id"),
    (16, U64, "code_object_id"), (24, I64, "load_delta"), (32, U64, "load_size"),
])
FUNCTION = Layout(64, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "executable_id"),
    (16, U32, "function_ordinal"), (20, U32, "constant_count"), (24, U32, "binding_count"),
    (28, U32, "parameter_count"), (32, (U32, 3), "workgroup_size"), (44, U32, "name_length"),
    (48, (U64, 2), "function_hash"),
])
COMMAND_BUFFER = Layout(48, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "command_buffer_id"), (16, U64, "mode"),
    (24, U64, "command_categories"), (32, U64, "queue_affinity"),
    (40, U32, "physical_device_ordinal"), (44, U32, "reserved0"),
])
COMMAND_OPERATION = Layout(120, [
    (0, U32, "record_length"), (4, U32, "type"), (8, U32, "flags"), (12, U32, "command_index"),
    (16, U64, "command_buffer_id"), (24, U32, "block_ordinal"), (28, U32, "block_command_ordinal"),
    (32, U64, "executable_id"), (40, U32, "function_ordinal"), (44, U32, "binding_count"),
    (48, (U32, 3), "workgroup_count"), (60, (U32, 3), "workgroup_size"), (72, U64, "source_offset"),
    (80, U64, "target_offset"), (88, U64, "length"), (96, U32, "source_ordinal"),
    (100, U32, "target_ordinal"), (104, U32, "target_block_ordinal"),
    (108, U32, "alternate_block_ordinal"), (112, U32, "reserved0"),
])
CLOCK_CORRELATION = Layout(72, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U32, "physical_device_ordinal"),
    (12, U32, "reserved0"), (16, U64, "sample_id"), (24, U64, "device_tick"),
    (32, U64, "host_cpu_timestamp_ns"), (40, U64, "host_system_timestamp"),
    (48, U64, "host_system_frequency_hz"), (56, I64, "host_time_begin_ns"),
    (64, I64, "host_time_end_ns"),
])
DISPATCH_EVENT = Layout(88, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "event_id"), (16, U64, "submission_id"),
    (24, U64, "command_buffer_id"), (32, U64, "executable_id"), (40, U32, "command_index"),
    (44, U32, "function_ordinal"), (48, (U32, 3), "workgroup_count"),
    (60, (U32, 3), "workgroup_size"), (72, U64, "start_tick"), (80, U64, "end_tick"),
])
QUEUE_EVENT = Layout(104, [
    (0, U32, "record_length"), (4, U32, "type"), (8, U32, "flags"), (12, U32, "dependency_strategy"),
    (16, U64, "event_id"), (24, I64, "host_time_ns"), (32, U64, "submission_id"),
    (40, U64, "command_buffer_id"), (48, U64, "allocation_id"), (56, U64, "stream_id"),
    (64, U32, "physical_device_ordinal"), (68, U32, "queue_ordinal"), (72, U32, "wait_count"),
    (76, U32, "signal_count"), (80, U32, "barrier_count"), (84, U32, "operation_count"),
    (88, U64, "payload_length"), (96, I64, "ready_host_time_ns"),
])
QUEUE_DEVICE_EVENT = Layout(96, [
    (0, U32, "record_length"), (4, U32, "type"), (8, U32, "flags"), (12, U32, "reserved0"),
    (16, U64, "event_id"), (24, U64, "submission_id"), (32, U64, "command_buffer_id"),
    (40, U64, "allocation_id"), (48, U64, "stream_id"), (56, U64, "payload_length"),
    (64, U32, "physical_device_ordinal"), (68, U32, "queue_ordinal"), (72, U32, "operation_count"),
    (76, U32, "reserved1"), (80, U64, "start_tick"), (88, U64, "end_tick"),
])
HOST_EXECUTION_EVENT = Layout(152, [
    (0, U32, "record_length"), (4, U32, "type"), (8, U32, "flags"), (12, U32, "status_code"),
    (16, U64, "event_id"), (24, U64, "submission_id"), (32, U64, "command_buffer_id"),
    (40, U64, "executable_id"), (48, U64, "allocation_id"), (56, U64, "stream_id"),
    (64, U32, "physical_device_ordinal"), (68, U32, "queue_ordinal"), (72, U32, "command_index"),
    (76, U32, "function_ordinal"), (80, (U32, 3), "workgroup_count"),
    (92, (U32, 3), "workgroup_size"), (104, I64, "start_host_time_ns"),
    (112, I64, "end_host_time_ns"), (120, U64, "payload_length"), (128, U64, "tile_count"),
    (136, I64, "tile_duration_sum_ns"), (144, U32, "operation_count"), (148, U32, "reserved0"),
])
COMMAND_REGION_EVENT = Layout(248, [
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
MEMORY_EVENT = Layout(160, [
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
EVENT_RELATIONSHIP = Layout(72, [
    (0, U32, "record_length"), (4, U32, "type"), (8, U64, "relationship_id"),
    (16, U32, "source_type"), (20, U32, "target_type"), (24, U32, "physical_device_ordinal"),
    (28, U32, "queue_ordinal"), (32, U64, "stream_id"), (40, U64, "source_id"),
    (48, U64, "source_secondary_id"), (56, U64, "target_id"), (64, U64, "target_secondary_id"),
])
COUNTER_SET = Layout(32, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "counter_set_id"),
    (16, U32, "physical_device_ordinal"), (20, U32, "counter_count"),
    (24, U32, "sample_value_count"), (28, U32, "name_length"),
])
COUNTER = Layout(48, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U32, "unit"),
    (12, U32, "physical_device_ordinal"), (16, U64, "counter_set_id"), (24, U32, "counter_ordinal"),
    (28, U32, "sample_value_offset"), (32, U32, "sample_value_count"),
    (36, U32, "block_name_length"), (40, U32, "name_length"), (44, U32, "description_length"),
])
COUNTER_SAMPLE = Layout(112, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U32, "scope"), (12, U32, "reserved0"),
    (16, U64, "sample_id"), (24, U64, "counter_set_id"), (32, U64, "dispatch_event_id"),
    (40, U64, "submission_id"), (48, U64, "command_buffer_id"), (56, U64, "executable_id"),
    (64, U64, "stream_id"), (72, U64, "start_tick"), (80, U64, "end_tick"),
    (88, U32, "command_index"), (92, U32, "function_ordinal"), (96, U32, "physical_device_ordinal"),
    (100, U32, "queue_ordinal"), (104, U32, "sample_value_count"), (108, U32, "reserved1"),
])
METRIC_SOURCE = Layout(40, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "source_id"),
    (16, U32, "physical_device_ordinal"), (20, U32, "device_class"), (24, U32, "source_kind"),
    (28, U32, "source_revision"), (32, U32, "metric_count"), (36, U32, "name_length"),
])
METRIC_DESCRIPTOR = Layout(48, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "source_id"), (16, U64, "metric_id"),
    (24, U32, "unit"), (28, U32, "value_kind"), (32, U32, "semantic"), (36, U32, "plot_hint"),
    (40, U32, "name_length"), (44, U32, "description_length"),
])
METRIC_SAMPLE = Layout(64, [
    (0, U32, "record_length"), (4, U32, "flags"), (8, U64, "sample_id"), (16, U64, "source_id"),
    (24, I64, "host_time_begin_ns"), (32, I64, "host_time_end_ns"), (40, U64, "source_timestamp"),
    (48, U64, "source_timestamp_frequency_hz"), (56, U32, "physical_device_ordinal"),
    (60, U32, "value_count"),
])
METRIC_VALUE = Layout(24, [
    (0, U64, "metric_id"), (8, U64, "value_bits"), (16, U32, "flags"), (20, U32, "reserved0"),
])
EXECUTABLE_TRACE = Layout(88, [
    (0, U32, "record_length"), (4, U32, "format"), (8, U32, "flags"), (12, U32, "shader_engine"),
    (16, U64, "trace_id"), (24, U64, "dispatch_event_id"), (32, U64, "submission_id"),
    (40, U64, "command_buffer_id"), (48, U64, "executable_id"), (56, U64, "stream_id"),
    (64, U32, "command_index"), (68, U32, "function_ordinal"), (72, U32, "physical_device_ordinal"),
    (76, U32, "queue_ordinal"), (80, U64, "data_length"),
])

""".ireereplay v2.0: every layout and code, declared once (../shared/reference/ireereplay.md §1-§3).

The file is a 24-byte header followed by records back to back (no alignment anywhere): a 96-byte
record header, then `payload_length` bytes whose first part is a fixed struct chosen by
`payload_type` and whose tail holds the variable parts in a fixed order. Layouts here are
`Layout`s: ordered fields (a struct code, or a nested Layout) with explicit pad bytes, so their
`size` is the C struct's and `unpack`/`pack` give and take plain dicts (nested dicts for nested
layouts). Pad bytes are ignored on read (IREE leaves garbage in them) and written as zeros.
"""

from __future__ import annotations

import struct



class _Codes:
    """A namespace of named integer codes (plain ints: `Op.SCOPE_BEGIN == 50`); `members()`
    gives (name, code) pairs in declaration order. Plain classes rather than IntEnums: this
    module is imported by every replay command, `amdgpu-replay dump` among them, whose start-up
    counts."""

    @classmethod
    def members(cls) -> list[tuple[str, int]]:
        return [(k, v) for k, v in vars(cls).items() if k.isupper() and isinstance(v, int)]


MAGIC = 0x50525249  # b"IRRP"
VERSION_MAJOR = 2
VERSION_MINOR = 0

# magic, version_major, version_minor, header_length, flags, file_length
FILE_HEADER = struct.Struct("<IHHIIQ")
FILE_HEADER_SIZE = FILE_HEADER.size  # 24
FILE_LENGTH_OFFSET = 16

# record_length, payload_length, sequence_ordinal, thread_id, device_id, object_id,
# related_object_id, header_length, record_type, record_flags, payload_type, object_type,
# operation_code, status_code, reserved0, (4 pad bytes), reserved1
RECORD_HEADER = struct.Struct("<QQQQQQQIHHIIIII4xQ")
RECORD_HEADER_SIZE = RECORD_HEADER.size  # 96
RECORD_FLAG_OPTIONAL = 1

# FNV-1a-64, the one digest the format defines (file content validation).
FNV1A_64_OFFSET = 0xCBF29CE484222325
FNV1A_64_PRIME = 0x100000001B3
U64_MAX = 0xFFFFFFFFFFFFFFFF


class RecordType(_Codes):
    NONE = 0
    SESSION = 1
    OBJECT = 2
    OPERATION = 3
    BLOB = 4
    UNSUPPORTED = 5


RECORD_TYPE_NAMES = {0: "none", 1: "session", 2: "object", 3: "operation", 4: "blob",
                     5: "unsupported"}


class ObjectType(_Codes):
    NONE = 0
    DEVICE = 1
    ALLOCATOR = 2
    POOL = 3
    BUFFER = 4
    COMMAND_BUFFER = 5
    EXECUTABLE_CACHE = 6
    EXECUTABLE = 7
    SEMAPHORE = 8
    FILE = 9
    EVENT = 10
    CHANNEL = 11
    HOST_CALL = 12


OBJECT_TYPE_NAMES = {0: "none", 1: "device", 2: "allocator", 3: "pool", 4: "buffer",
                     5: "command_buffer", 6: "executable_cache", 7: "executable", 8: "semaphore",
                     9: "file", 10: "event", 11: "channel", 12: "host_call"}


class Op(_Codes):
    DEVICE_TRIM = 1
    DEVICE_QUERY_I64 = 2
    DEVICE_QUERY_CAPABILITIES = 3
    DEVICE_REFINE_TOPOLOGY_EDGE = 4
    DEVICE_ASSIGN_TOPOLOGY_INFO = 5
    DEVICE_CREATE_CHANNEL = 6
    DEVICE_CREATE_COMMAND_BUFFER = 7
    DEVICE_CREATE_EVENT = 8
    DEVICE_CREATE_EXECUTABLE_CACHE = 9
    DEVICE_IMPORT_FILE = 10
    DEVICE_CREATE_SEMAPHORE = 11
    DEVICE_QUERY_QUEUE_POOL_BACKEND = 12
    DEVICE_QUEUE_ALLOCA = 13
    DEVICE_QUEUE_DEALLOCA = 14
    DEVICE_QUEUE_FILL = 15
    DEVICE_QUEUE_UPDATE = 16
    DEVICE_QUEUE_COPY = 17
    DEVICE_QUEUE_READ = 18
    DEVICE_QUEUE_WRITE = 19
    DEVICE_QUEUE_HOST_CALL = 20
    DEVICE_QUEUE_DISPATCH = 21
    DEVICE_QUEUE_EXECUTE = 22
    DEVICE_QUEUE_FLUSH = 23
    DEVICE_PROFILING_BEGIN = 24
    DEVICE_PROFILING_FLUSH = 25
    DEVICE_PROFILING_END = 26
    DEVICE_EXTERNAL_CAPTURE_BEGIN = 27
    DEVICE_EXTERNAL_CAPTURE_END = 28
    SCOPE_BEGIN = 50
    SCOPE_END = 51
    ALLOCATOR_TRIM = 100
    ALLOCATOR_QUERY_MEMORY_HEAPS = 101
    ALLOCATOR_ALLOCATE_BUFFER = 102
    ALLOCATOR_IMPORT_BUFFER = 103
    ALLOCATOR_EXPORT_BUFFER = 104
    ALLOCATOR_VIRTUAL_MEMORY_QUERY_GRANULARITY = 105
    ALLOCATOR_VIRTUAL_MEMORY_RESERVE = 106
    ALLOCATOR_VIRTUAL_MEMORY_RELEASE = 107
    ALLOCATOR_PHYSICAL_MEMORY_ALLOCATE = 108
    ALLOCATOR_PHYSICAL_MEMORY_FREE = 109
    ALLOCATOR_VIRTUAL_MEMORY_MAP = 110
    ALLOCATOR_VIRTUAL_MEMORY_UNMAP = 111
    ALLOCATOR_VIRTUAL_MEMORY_PROTECT = 112
    ALLOCATOR_VIRTUAL_MEMORY_ADVISE = 113
    BUFFER_MAP_RANGE = 200
    BUFFER_UNMAP_RANGE = 201
    BUFFER_INVALIDATE_RANGE = 202
    BUFFER_FLUSH_RANGE = 203
    COMMAND_BUFFER_BEGIN = 300
    COMMAND_BUFFER_END = 301
    COMMAND_BUFFER_BEGIN_DEBUG_GROUP = 302
    COMMAND_BUFFER_END_DEBUG_GROUP = 303
    COMMAND_BUFFER_EXECUTION_BARRIER = 304
    COMMAND_BUFFER_SIGNAL_EVENT = 305
    COMMAND_BUFFER_RESET_EVENT = 306
    COMMAND_BUFFER_WAIT_EVENTS = 307
    COMMAND_BUFFER_ADVISE_BUFFER = 308
    COMMAND_BUFFER_FILL_BUFFER = 309
    COMMAND_BUFFER_UPDATE_BUFFER = 310
    COMMAND_BUFFER_COPY_BUFFER = 311
    COMMAND_BUFFER_COLLECTIVE = 312
    COMMAND_BUFFER_DISPATCH = 313
    EXECUTABLE_CACHE_INFER_FORMAT = 400
    EXECUTABLE_CACHE_CAN_PREPARE_FORMAT = 401
    EXECUTABLE_CACHE_PREPARE_EXECUTABLE = 402
    EXECUTABLE_FUNCTION_COUNT = 500
    EXECUTABLE_FUNCTION_INFO = 501
    EXECUTABLE_FUNCTION_PARAMETERS = 502
    EXECUTABLE_LOOKUP_FUNCTION_BY_NAME = 503


# The dump strings: the enum name, its first word as the receiver, the rest lower case.
_OWNERS = ("ALLOCATOR", "BUFFER", "COMMAND_BUFFER", "EXECUTABLE_CACHE", "EXECUTABLE", "DEVICE")


def _op_name(name: str, code: int) -> str:
    if code in (Op.SCOPE_BEGIN, Op.SCOPE_END):
        return "replay." + name.lower()
    for owner in _OWNERS:
        if name.startswith(owner + "_"):
            return f"{owner.lower()}.{name[len(owner) + 1:].lower()}"
    raise AssertionError(name)


OP_NAMES = {code: _op_name(name, code) for name, code in Op.members()}


class PayloadType(_Codes):
    NONE = 0
    BUFFER_OBJECT = 1
    ALLOCATOR_ALLOCATE_BUFFER = 2
    BUFFER_RANGE = 3
    BUFFER_RANGE_DATA = 4
    COMMAND_BUFFER_OBJECT = 5
    EXECUTABLE_CACHE_OBJECT = 6
    EXECUTABLE_PREPARE = 7
    DISPATCH = 8
    DEVICE_QUEUE_EXECUTE = 9
    SEMAPHORE_OBJECT = 10
    COMMAND_BUFFER_COPY_BUFFER = 11
    DEVICE_QUEUE_ALLOCA = 12
    COMMAND_BUFFER_EXECUTION_BARRIER = 13
    DEVICE_QUEUE_DEALLOCA = 14
    DEVICE_QUEUE_FILL = 15
    DEVICE_QUEUE_UPDATE = 16
    DEVICE_QUEUE_COPY = 17
    COMMAND_BUFFER_FILL_BUFFER = 18
    COMMAND_BUFFER_UPDATE_BUFFER = 19
    EVENT_OBJECT = 20
    COMMAND_BUFFER_EVENT = 21
    COMMAND_BUFFER_WAIT_EVENTS = 22
    FILE_OBJECT = 23
    DEVICE_QUEUE_READ = 24
    DEVICE_QUEUE_WRITE = 25
    ALLOCATOR_IMPORT_BUFFER = 26
    REPLAY_SCOPE = 27


PAYLOAD_NAMES = {code: name.lower() for name, code in PayloadType.members()}


class FileReference(_Codes):
    NONE = 0
    EXTERNAL_PATH = 1
    INLINE_BYTES = 2
    CAPTURED_RANGES = 3


FILE_REFERENCE_NAMES = {0: "none", 1: "external_path", 2: "inline_bytes", 3: "captured_ranges"}


class FileValidation(_Codes):
    NONE = 0
    IDENTITY = 1
    CONTENT_DIGEST = 2


FILE_VALIDATION_NAMES = {0: "none", 1: "identity", 2: "digest"}
DIGEST_FNV1A_64 = 1


class Layout:
    """A packed little-endian C struct: `fields` are (name, code) with code a struct format code
    ("Q", "I", "H", "B", "3I" for a u32[3], "32s" for bytes) or a nested Layout; a name of ""
    is padding (code "4x")."""

    __slots__ = ("name", "fields", "struct", "size", "_plan", "_build")

    def __init__(self, name: str, fields):
        self.name = name
        self.fields = tuple(fields)
        fmt = "<"
        plan = []  # (name, kind, count): kind "v" value, "b" bytes, "a" array, or a Layout
        for field_name, code in self.fields:
            if isinstance(code, Layout):
                fmt += code.struct.format[1:]
                plan.append((field_name, code, None))
            elif code.endswith("x"):
                fmt += code
            elif code.endswith("s"):
                fmt += code
                plan.append((field_name, "b", 1))
            elif code[:-1].isdigit():
                fmt += code
                plan.append((field_name, "a", int(code[:-1])))
            else:
                fmt += code
                plan.append((field_name, "v", 1))
        self.struct = struct.Struct(fmt)
        self.size = self.struct.size
        self._plan = tuple(plan)
        # unpack() builds its dict with one generated expression (readers decode every record's
        # payload; the generic walk in _take costs several times more).
        expression, _ = self._expression(0)
        self._build = eval(f"lambda v: {expression}")  # noqa: S307 - names are our own

    def _expression(self, i: int) -> tuple[str, int]:
        items = []
        for name, kind, count in self._plan:
            if isinstance(kind, Layout):
                inner, i = kind._expression(i)
                items.append(f"{name!r}: {inner}")
            elif kind == "a":
                items.append(f"{name!r}: [{', '.join(f'v[{i + k}]' for k in range(count))}]")
                i += count
            else:
                items.append(f"{name!r}: v[{i}]")
                i += 1
        return "{" + ", ".join(items) + "}", i

    def unpack(self, data, offset: int = 0) -> dict:
        """The fields at `offset` of `data` (the caller checks that `size` bytes are there)."""
        return self._build(self.struct.unpack_from(data, offset))

    def _take(self, values, i: int) -> tuple[dict, int]:
        out = {}
        for name, kind, count in self._plan:
            if isinstance(kind, Layout):
                out[name], i = kind._take(values, i)
            elif kind == "a":
                out[name] = list(values[i:i + count])
                i += count
            else:
                out[name] = values[i]
                i += 1
        return out, i

    def pack(self, fields: dict | None = None, **more) -> bytes:
        """The struct's bytes; absent fields are zero (reserved fields included)."""
        values: list = []
        self._put(dict(fields or {}, **more), values)
        return self.struct.pack(*values)

    def _put(self, fields: dict, values: list) -> None:
        for name, kind, count in self._plan:
            value = fields.get(name)
            if isinstance(kind, Layout):
                kind._put(value or {}, values)
            elif kind == "a":
                value = list(value) if value is not None else [0] * count
                if len(value) != count:
                    raise ValueError(f"{self.name}.{name} takes {count} values")
                values.extend(value)
            else:
                values.append(value if value is not None else (b"" if kind == "b" else 0))


# -- shared sub-structures ---------------------------------------------------------------------
BUFFER_REF = Layout("buffer_ref", [("buffer_id", "Q"), ("offset", "Q"), ("length", "Q"),
                                   ("buffer_slot", "I"), ("reserved0", "I")])
TIMEPOINT = Layout("timepoint", [("semaphore_id", "Q"), ("value", "Q")])
MEMORY_BARRIER = Layout("memory_barrier", [("source_scope", "I"), ("target_scope", "I")])
BUFFER_BARRIER = Layout("buffer_barrier", [("source_scope", "I"), ("target_scope", "I"),
                                           ("buffer_ref", BUFFER_REF)])
ALLOCATION = Layout("allocator_allocate_buffer", [
    ("allocation_size", "Q"), ("queue_affinity", "Q"), ("min_alignment", "Q"), ("usage", "I"),
    ("type", "I"), ("access", "H"), ("reserved0", "H"), ("reserved1", "I")])

# -- payloads: the fixed part of each (the tails are described in TAILS) ------------------------
PAYLOADS: dict[int, Layout] = {
    PayloadType.BUFFER_OBJECT: Layout("buffer_object", [
        ("allocation_size", "Q"), ("byte_offset", "Q"), ("byte_length", "Q"),
        ("queue_affinity", "Q"), ("placement_flags", "I"), ("memory_type", "I"),
        ("allowed_usage", "I"), ("allowed_access", "H"), ("reserved0", "H"), ("reserved1", "I"),
        ("", "4x")]),
    PayloadType.ALLOCATOR_ALLOCATE_BUFFER: ALLOCATION,
    PayloadType.BUFFER_RANGE: Layout("buffer_range", [
        ("byte_offset", "Q"), ("byte_length", "Q"), ("mapping_mode", "I"),
        ("memory_access", "H"), ("reserved0", "H"), ("reserved1", "I"), ("", "4x")]),
    PayloadType.BUFFER_RANGE_DATA: Layout("buffer_range_data", [
        ("byte_offset", "Q"), ("byte_length", "Q"), ("data_length", "Q"), ("mapping_mode", "I"),
        ("memory_access", "H"), ("reserved0", "H"), ("reserved1", "I"), ("", "4x")]),
    PayloadType.COMMAND_BUFFER_OBJECT: Layout("command_buffer_object", [
        ("mode", "I"), ("command_categories", "I"), ("queue_affinity", "Q"),
        ("binding_capacity", "Q")]),
    PayloadType.EXECUTABLE_CACHE_OBJECT: Layout("executable_cache_object", [
        ("identifier_length", "Q"), ("reserved0", "Q")]),
    PayloadType.EXECUTABLE_PREPARE: Layout("executable_prepare", [
        ("queue_affinity", "Q"), ("executable_data_length", "Q"), ("constant_count", "Q"),
        ("caching_mode", "I"), ("executable_format_length", "I"),
        ("executable_metadata_length", "I"), ("reserved1", "I")]),
    PayloadType.DISPATCH: Layout("dispatch", [
        ("executable_id", "Q"), ("queue_affinity", "Q"), ("function_ordinal", "I"),
        ("flags", "I"), ("workgroup_size", "3I"), ("workgroup_count", "3I"),
        ("workgroup_count_ref", BUFFER_REF), ("dynamic_workgroup_local_memory", "I"),
        ("reserved0", "I"), ("wait_semaphore_count", "Q"), ("signal_semaphore_count", "Q"),
        ("constants_length", "Q"), ("binding_count", "Q")]),
    PayloadType.DEVICE_QUEUE_EXECUTE: Layout("device_queue_execute", [
        ("command_buffer_id", "Q"), ("queue_affinity", "Q"), ("flags", "Q"),
        ("wait_semaphore_count", "Q"), ("signal_semaphore_count", "Q"), ("binding_count", "Q")]),
    PayloadType.SEMAPHORE_OBJECT: Layout("semaphore_object", [
        ("queue_affinity", "Q"), ("initial_value", "Q"), ("flags", "Q"), ("reserved0", "Q")]),
    PayloadType.COMMAND_BUFFER_COPY_BUFFER: Layout("command_buffer_copy_buffer", [
        ("source_ref", BUFFER_REF), ("target_ref", BUFFER_REF), ("flags", "I"),
        ("reserved0", "I"), ("reserved1", "Q")]),
    PayloadType.DEVICE_QUEUE_ALLOCA: Layout("device_queue_alloca", [
        ("allocation", ALLOCATION), ("queue_affinity", "Q"), ("flags", "Q"),
        ("wait_semaphore_count", "Q"), ("signal_semaphore_count", "Q")]),
    PayloadType.COMMAND_BUFFER_EXECUTION_BARRIER: Layout("command_buffer_execution_barrier", [
        ("source_stage_mask", "Q"), ("target_stage_mask", "Q"), ("flags", "Q"),
        ("memory_barrier_count", "Q"), ("buffer_barrier_count", "Q")]),
    PayloadType.DEVICE_QUEUE_DEALLOCA: Layout("device_queue_dealloca", [
        ("buffer_ref", BUFFER_REF), ("queue_affinity", "Q"), ("flags", "Q"),
        ("wait_semaphore_count", "Q"), ("signal_semaphore_count", "Q")]),
    PayloadType.DEVICE_QUEUE_FILL: Layout("device_queue_fill", [
        ("target_ref", BUFFER_REF), ("queue_affinity", "Q"), ("flags", "Q"),
        ("wait_semaphore_count", "Q"), ("signal_semaphore_count", "Q"),
        ("pattern_length", "Q")]),
    PayloadType.DEVICE_QUEUE_UPDATE: Layout("device_queue_update", [
        ("target_ref", BUFFER_REF), ("queue_affinity", "Q"), ("flags", "Q"),
        ("source_offset", "Q"), ("data_length", "Q"), ("wait_semaphore_count", "Q"),
        ("signal_semaphore_count", "Q")]),
    PayloadType.DEVICE_QUEUE_COPY: Layout("device_queue_copy", [
        ("source_ref", BUFFER_REF), ("target_ref", BUFFER_REF), ("queue_affinity", "Q"),
        ("flags", "Q"), ("wait_semaphore_count", "Q"), ("signal_semaphore_count", "Q")]),
    PayloadType.COMMAND_BUFFER_FILL_BUFFER: Layout("command_buffer_fill_buffer", [
        ("target_ref", BUFFER_REF), ("flags", "I"), ("reserved0", "I"),
        ("pattern_length", "Q")]),
    PayloadType.COMMAND_BUFFER_UPDATE_BUFFER: Layout("command_buffer_update_buffer", [
        ("target_ref", BUFFER_REF), ("flags", "I"), ("reserved0", "I"), ("source_offset", "Q"),
        ("data_length", "Q")]),
    PayloadType.EVENT_OBJECT: Layout("event_object", [
        ("queue_affinity", "Q"), ("flags", "I"), ("reserved0", "I"), ("reserved1", "Q")]),
    PayloadType.COMMAND_BUFFER_EVENT: Layout("command_buffer_event", [
        ("event_id", "Q"), ("source_stage_mask", "Q")]),
    PayloadType.COMMAND_BUFFER_WAIT_EVENTS: Layout("command_buffer_wait_events", [
        ("source_stage_mask", "Q"), ("target_stage_mask", "Q"), ("event_count", "Q"),
        ("memory_barrier_count", "Q"), ("buffer_barrier_count", "Q"), ("reserved0", "Q")]),
    PayloadType.FILE_OBJECT: Layout("file_object", [
        ("queue_affinity", "Q"), ("file_length", "Q"), ("file_device", "Q"), ("file_inode", "Q"),
        ("file_mtime_ns", "Q"), ("reference_length", "Q"), ("access", "I"), ("flags", "I"),
        ("handle_type", "I"), ("reference_type", "I"), ("validation_type", "I"),
        ("digest_type", "H"), ("reserved0", "H"), ("reserved1", "I"), ("digest", "32s"),
        ("", "4x")]),
    PayloadType.DEVICE_QUEUE_READ: Layout("device_queue_read", [
        ("source_file_id", "Q"), ("source_offset", "Q"), ("target_ref", BUFFER_REF),
        ("queue_affinity", "Q"), ("flags", "Q"), ("captured_data_length", "Q"),
        ("wait_semaphore_count", "Q"), ("signal_semaphore_count", "Q")]),
    PayloadType.DEVICE_QUEUE_WRITE: Layout("device_queue_write", [
        ("source_ref", BUFFER_REF), ("target_file_id", "Q"), ("target_offset", "Q"),
        ("queue_affinity", "Q"), ("flags", "Q"), ("wait_semaphore_count", "Q"),
        ("signal_semaphore_count", "Q")]),
    PayloadType.ALLOCATOR_IMPORT_BUFFER: Layout("allocator_import_buffer", [
        ("allocation", ALLOCATION), ("external_type", "I"), ("external_flags", "I"),
        ("data_length", "Q")]),
    PayloadType.REPLAY_SCOPE: Layout("replay_scope", [
        ("name_length", "Q"), ("flags", "I"), ("reserved0", "I"), ("reserved1", "Q")]),
}

# Payloads whose length must be exactly the fixed struct (no tail).
FIXED_ONLY = frozenset({
    PayloadType.BUFFER_OBJECT, PayloadType.ALLOCATOR_ALLOCATE_BUFFER, PayloadType.BUFFER_RANGE,
    PayloadType.COMMAND_BUFFER_OBJECT, PayloadType.SEMAPHORE_OBJECT,
    PayloadType.COMMAND_BUFFER_COPY_BUFFER, PayloadType.EVENT_OBJECT,
    PayloadType.COMMAND_BUFFER_EVENT})

# The variable tail of each payload, in file order: (part name, how its length is found). A
# length is a fixed field's name (a byte count), or "count:FIELD:SIZE" (FIELD elements of SIZE
# bytes), or "rest" (whatever remains; only where the total is implied by other fields).
TAILS: dict[int, tuple[tuple[str, str], ...]] = {
    PayloadType.BUFFER_RANGE_DATA: (("data", "data_length"),),
    PayloadType.EXECUTABLE_CACHE_OBJECT: (("identifier", "identifier_length"),),
    PayloadType.EXECUTABLE_PREPARE: (
        ("format", "executable_format_length"), ("data", "executable_data_length"),
        ("constants", "count:constant_count:4"), ("metadata", "executable_metadata_length")),
    PayloadType.DISPATCH: (
        ("wait_semaphores", "count:wait_semaphore_count:16"),
        ("signal_semaphores", "count:signal_semaphore_count:16"),
        ("constants", "constants_length"), ("bindings", "count:binding_count:32")),
    PayloadType.DEVICE_QUEUE_EXECUTE: (
        ("wait_semaphores", "count:wait_semaphore_count:16"),
        ("signal_semaphores", "count:signal_semaphore_count:16"),
        ("bindings", "count:binding_count:32")),
    PayloadType.DEVICE_QUEUE_ALLOCA: (
        ("wait_semaphores", "count:wait_semaphore_count:16"),
        ("signal_semaphores", "count:signal_semaphore_count:16")),
    PayloadType.COMMAND_BUFFER_EXECUTION_BARRIER: (
        ("memory_barriers", "count:memory_barrier_count:8"),
        ("buffer_barriers", "count:buffer_barrier_count:40")),
    PayloadType.DEVICE_QUEUE_DEALLOCA: (
        ("wait_semaphores", "count:wait_semaphore_count:16"),
        ("signal_semaphores", "count:signal_semaphore_count:16")),
    PayloadType.DEVICE_QUEUE_FILL: (
        ("wait_semaphores", "count:wait_semaphore_count:16"),
        ("signal_semaphores", "count:signal_semaphore_count:16"), ("pattern", "pattern_length")),
    PayloadType.DEVICE_QUEUE_UPDATE: (
        ("wait_semaphores", "count:wait_semaphore_count:16"),
        ("signal_semaphores", "count:signal_semaphore_count:16"), ("data", "data_length")),
    PayloadType.DEVICE_QUEUE_COPY: (
        ("wait_semaphores", "count:wait_semaphore_count:16"),
        ("signal_semaphores", "count:signal_semaphore_count:16")),
    PayloadType.COMMAND_BUFFER_FILL_BUFFER: (("pattern", "pattern_length"),),
    PayloadType.COMMAND_BUFFER_UPDATE_BUFFER: (("data", "data_length"),),
    PayloadType.COMMAND_BUFFER_WAIT_EVENTS: (
        ("events", "count:event_count:8"), ("memory_barriers", "count:memory_barrier_count:8"),
        ("buffer_barriers", "count:buffer_barrier_count:40")),
    PayloadType.FILE_OBJECT: (("reference", "reference_length"),),
    PayloadType.DEVICE_QUEUE_READ: (
        ("wait_semaphores", "count:wait_semaphore_count:16"),
        ("signal_semaphores", "count:signal_semaphore_count:16"),
        ("captured_data", "captured_data_length")),
    PayloadType.DEVICE_QUEUE_WRITE: (
        ("wait_semaphores", "count:wait_semaphore_count:16"),
        ("signal_semaphores", "count:signal_semaphore_count:16")),
    PayloadType.ALLOCATOR_IMPORT_BUFFER: (("data", "data_length"),),
    PayloadType.REPLAY_SCOPE: (("name", "name_length"),),
}

# Executable metadata (the tail of executable_prepare): a header, a record per function, a
# record per parameter, then the function names concatenated.
METADATA_HEADER = Layout("executable_metadata", [
    ("function_count", "Q"), ("parameter_count", "Q"), ("function_name_storage_length", "Q"),
    ("reserved1", "Q")])
METADATA_FUNCTION = Layout("executable_metadata_function", [
    ("flags", "Q"), ("workgroup_size", "3I"), ("constant_count", "H"), ("binding_count", "H"),
    ("parameter_count", "H"), ("name_length", "H"), ("", "4x")])
METADATA_PARAMETER = Layout("executable_metadata_parameter", [
    ("offset", "H"), ("flags", "H"), ("type", "B"), ("size", "B"), ("reserved0", "H")])



def fnv1a_64(data) -> int:
    """FNV-1a-64 of `data` (bytes-like)."""
    value = FNV1A_64_OFFSET
    for byte in bytes(data):
        value = ((value ^ byte) * FNV1A_64_PRIME) & U64_MAX
    return value


def _check_sizes() -> None:
    expected = {1: 56, 2: 40, 3: 32, 4: 40, 5: 24, 6: 16, 7: 40, 8: 120, 9: 48, 10: 32, 11: 80,
                12: 72, 13: 40, 14: 64, 15: 72, 16: 80, 17: 96, 18: 48, 19: 56, 20: 24, 21: 16,
                22: 48, 23: 112, 24: 88, 25: 80, 26: 56, 27: 24}
    for code, size in expected.items():
        assert PAYLOADS[code].size == size, (PAYLOADS[code].name, PAYLOADS[code].size, size)
    assert METADATA_HEADER.size == 32 and METADATA_FUNCTION.size == 32
    assert METADATA_PARAMETER.size == 8 and BUFFER_BARRIER.size == 40


_check_sizes()

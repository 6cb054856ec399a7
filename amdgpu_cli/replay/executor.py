"""The replay executor: what IREE 3.13.0's `iree_hal_replay_plan_create` / `_plan_execute` do
(runtime/src/iree/hal/replay/execute.c), over our HAL (../shared/reference/ireereplay.md §4).

`plan(replay_file)` walks the records once (the reader checks the container and ordinals), sizes
the object table (max object/related id + 1) and turns every record into a step: a handler and its
decoded arguments. Payloads IREE pre-validates at plan time (scopes, command-buffer barriers and
dispatches, queue_execute) raise here; every other payload is decoded here too, but a decoding
error becomes a step that raises when the record is reached, as IREE reports it then.

`execute(plan, devices, ...)` runs the steps in file order on the calling thread with a fresh
object table: created objects are stored at the creating record's related id (never reused; the
n-th DEVICE object record binds the n-th device), every queue op is followed by a flush and a host
wait on its signal timepoints (so a wait on a later signal hangs, as in IREE), and at the end the
objects are released in reverse id order (buffers, command buffers and executables closed; the
devices and their allocators belong to the caller). Errors are AmdgpuCliError/HalError with
IREE's status and message.

What our HAL lacks is done here, as vm/hal_module.py does it: files (`_ReplayFile`: bytes of an
inline, captured or opened external file; queue_read is a queue_update of those bytes), events
(`_ReplayEvent`: inline queues are already ordered, so signal/reset record nothing and wait_events
records an execution barrier), queue_dispatch (a one-shot command buffer), the executable function
map (captured metadata matched by name to our exports; the ABI check compares constant and binding
counts and the workgroup size: our exports carry no flags or parameter reflection).
Threading: one execution per thread; a Plan is immutable and may be executed concurrently.

Speed: plan() also resolves the steps (`_compile`, see "resolved steps" below): since ids are
never reused, the type every id holds when a record is reached is known at plan time, so each
step whose lookups hold runs in a form with its ids, refs and fences prepared and no table
checks; steps that would fail keep their checked handler and fail exactly as before. An
execution makes the same HAL calls in the same order either way.

`stop_at_dispatch(plan, ordinal, on_dispatch)` (for `amdgpu-replay slice` and its tests) is a
plan that ends at the first execution of one dispatch record: the steps before the queue_execute
that first runs the dispatch's command buffer, then one step that records the commands before the
dispatch (with `after`, the dispatch too) into a new command buffer made like the captured one,
runs it with that queue_execute's waits, signals and binding table, and hands `on_dispatch` a
DispatchState (the bindings resolved through the table to root buffers). A queue_dispatch stops
the same way. The normal steps are untouched: this only builds a shorter step tuple.
"""

from __future__ import annotations

import os
import struct
from typing import Callable, NamedTuple, Sequence

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.enums import WHOLE_BUFFER, HalError
from amdgpu_cli.replay import schema as S
from amdgpu_cli.replay.schema import ObjectType as T, Op, PayloadType as P

__all__ = ["Plan", "plan", "execute", "open_replay", "parse_file_remaps",
           "parse_substitutions", "Substitution", "ObjectTable", "stop_at_dispatch",
           "DispatchState", "ResolvedBinding"]

_U64_MAX = S.U64_MAX
_NONE_TYPE = int(T.NONE)
_OBJECT_TYPE_NAMES = S.OBJECT_TYPE_NAMES
_ALIAS_PROVIDED_DATA = 1
_REF = struct.Struct("<QQQII")
_TIMEPOINT = struct.Struct("<QQ")


def _err(status: str, message: str) -> AmdgpuCliError:
    return AmdgpuCliError(message, status=status)


def _op_name(code: int) -> str:
    return S.OP_NAMES.get(code, "unknown")


def _payload_name(code: int) -> str:
    return S.PAYLOAD_NAMES.get(code, "unknown")


# -- opening ----------------------------------------------------------------------------------

def open_replay(source):
    """A ReplayFile (amdgpu_cli.replay.reader) for a path or bytes."""
    from amdgpu_cli.replay.reader import ReplayFile

    if isinstance(source, (bytes, bytearray, memoryview)):
        return ReplayFile.from_bytes(bytes(source))
    return ReplayFile.open(os.fspath(source))


# -- decoded payload parts --------------------------------------------------------------------

class _Ref(NamedTuple):
    """A captured buffer_ref: direct (buffer_id != 0; root-relative offset) or a slot."""
    buffer_id: int
    offset: int
    length: int  # WHOLE_BUFFER for u64 max
    slot: int


def _ref_at(data, offset: int) -> _Ref:
    buffer_id, off, length, slot, _ = _REF.unpack_from(data, offset)
    return _Ref(buffer_id, off, WHOLE_BUFFER if length == _U64_MAX else length, slot)


def _timepoints(data, offset: int, count: int) -> tuple:
    return tuple(_TIMEPOINT.unpack_from(data, offset + 16 * i) for i in range(count))


def _affinity(value: int) -> int:
    return -1 if value == _U64_MAX else value


class _Step(NamedTuple):
    fn: Callable
    record: object  # the reader's Record
    arg: object


class Plan:
    """The records of one replay, decoded once: `steps` in file order, `object_capacity`,
    `copy_targets` (the direct copy_buffer target refs in file order, for tests and tools)."""

    __slots__ = ("steps", "object_capacity", "record_count", "copy_targets", "fast")

    def __init__(self, steps, object_capacity, record_count, copy_targets, fast=None):
        self.steps = steps
        self.object_capacity = object_capacity
        self.record_count = record_count
        self.copy_targets = copy_targets
        # The same steps in their resolved form (_FastPlan), made by plan(); None: `steps` run.
        self.fast = fast


# -- planning ---------------------------------------------------------------------------------

def plan(replay_file) -> Plan:
    """Decodes every record of `replay_file` (a reader ReplayFile, a path or bytes)."""
    if not hasattr(replay_file, "records"):
        replay_file = open_replay(replay_file)
    steps = []
    capacity = 0
    copy_targets = []
    records = list(replay_file.records())
    for record in records:
        if record.object_id > capacity:
            capacity = record.object_id
        if record.related_object_id > capacity:
            capacity = record.related_object_id
    # IREE sizes its table as the largest id + 1 entries of 16 bytes (and fails as here where
    # that cannot be); ours is sparse above _DENSE_CAPACITY, so a large id costs nothing.
    if capacity >= _U64_MAX:
        raise _err("OUT_OF_RANGE", "replay object id exceeds host size")
    if (capacity + 1) * 16 > _U64_MAX:
        raise _err("OUT_OF_RANGE", "replay object table size overflow")
    timeline_errors = _timeline_errors(replay_file, records)
    for record in records:
        error = timeline_errors.get(record.sequence_ordinal)
        if error is not None:
            steps.append(_Step(_x_raise, record, error))
            continue
        steps.append(_plan_record(replay_file, record, copy_targets))
    steps = tuple(s for s in steps if s is not None)
    return Plan(steps, capacity + 1, len(records), tuple(copy_targets),
                _compile(steps, capacity + 1))


# Queue operations with wait and signal lists, by op code.
_TIMEPOINT_OPS = frozenset({Op.DEVICE_QUEUE_ALLOCA, Op.DEVICE_QUEUE_DEALLOCA, Op.DEVICE_QUEUE_FILL,
                        Op.DEVICE_QUEUE_UPDATE, Op.DEVICE_QUEUE_COPY, Op.DEVICE_QUEUE_READ,
                        Op.DEVICE_QUEUE_WRITE, Op.DEVICE_QUEUE_DISPATCH,
                        Op.DEVICE_QUEUE_EXECUTE})


def _timeline_errors(replay_file, records) -> dict:
    """{record ordinal: the error its execution would end in} for the queue operations whose
    semaphore timepoints cannot work when every queue operation is waited for before the next
    record runs (IREE's executor, ours): a wait on a value no earlier record signals (IREE
    3.13.0 then waits forever; we say so instead) and a signal of a value the semaphore has
    already reached (IREE's semaphore refuses it when it comes). Semaphores the replay does not
    create, and payloads that do not decode, are left to the execution to report."""
    from amdgpu_cli.replay.reader import decode_payload

    reached: dict[int, int] = {}  # semaphore id -> the largest value signalled so far
    errors = {}
    for record in records:
        op = record.operation_code
        if record.record_type != S.RecordType.OPERATION or record.status_code:
            continue
        if op == Op.DEVICE_CREATE_SEMAPHORE:
            try:
                fields = decode_payload(record.payload_type, replay_file.payload(record))
                reached[record.related_object_id] = fields["initial_value"]
            except (AmdgpuCliError, KeyError):
                pass
            continue
        if op not in _TIMEPOINT_OPS:
            continue
        try:
            fields = decode_payload(record.payload_type, replay_file.payload(record))
            waits, signals = fields["wait_semaphores"], fields["signal_semaphores"]
        except (AmdgpuCliError, KeyError):
            continue
        for point in waits:
            value = reached.get(point["semaphore_id"])
            if value is not None and point["value"] > value:
                errors[record.sequence_ordinal] = _err(
                    "FAILED_PRECONDITION",
                    f"replay {_op_name(op)} at sequence {record.sequence_ordinal} waits for "
                    f"semaphore {point['semaphore_id']} to reach {point['value']}, which no "
                    f"earlier operation signals (it would wait forever)")
                break
        else:
            for point in signals:
                value = reached.get(point["semaphore_id"])
                if value is None:
                    continue
                if point["value"] <= value:
                    errors[record.sequence_ordinal] = _err(
                        "INVALID_ARGUMENT", f"semaphore already signaled past {value}")
                    break
                reached[point["semaphore_id"]] = point["value"]
    return errors


_PREVALIDATED = frozenset({Op.SCOPE_BEGIN, Op.SCOPE_END, Op.COMMAND_BUFFER_EXECUTION_BARRIER,
                           Op.COMMAND_BUFFER_DISPATCH, Op.DEVICE_QUEUE_EXECUTE})

_IGNORED = frozenset({
    Op.DEVICE_TRIM, Op.DEVICE_ASSIGN_TOPOLOGY_INFO, Op.DEVICE_QUERY_I64,
    Op.DEVICE_QUERY_CAPABILITIES, Op.DEVICE_QUERY_QUEUE_POOL_BACKEND, Op.DEVICE_PROFILING_BEGIN,
    Op.DEVICE_PROFILING_FLUSH, Op.DEVICE_PROFILING_END, Op.DEVICE_EXTERNAL_CAPTURE_BEGIN,
    Op.DEVICE_EXTERNAL_CAPTURE_END, Op.ALLOCATOR_TRIM, Op.ALLOCATOR_QUERY_MEMORY_HEAPS,
    Op.BUFFER_INVALIDATE_RANGE, Op.COMMAND_BUFFER_BEGIN_DEBUG_GROUP,
    Op.COMMAND_BUFFER_END_DEBUG_GROUP, Op.COMMAND_BUFFER_ADVISE_BUFFER,
    Op.EXECUTABLE_FUNCTION_COUNT, Op.EXECUTABLE_FUNCTION_INFO, Op.EXECUTABLE_FUNCTION_PARAMETERS,
    Op.EXECUTABLE_LOOKUP_FUNCTION_BY_NAME, Op.BUFFER_MAP_RANGE})


def _plan_record(replay_file, record, copy_targets):
    record_type = record.record_type
    if record_type == S.RecordType.SESSION:
        return None
    if record_type == S.RecordType.OBJECT:
        if record.object_type == T.DEVICE:
            return _Step(_x_device_object, record, None)
        if record.object_type == T.ALLOCATOR:
            return _Step(_x_allocator_object, record, None)
        return None
    if record_type == S.RecordType.UNSUPPORTED:
        if record.status_code != 0:
            return None
        return _Step(_x_raise, record, _err(
            "UNIMPLEMENTED", f"replay contains unsupported captured operation "
                             f"{_op_name(record.operation_code)}"))
    if record_type != S.RecordType.OPERATION:
        name = S.RECORD_TYPE_NAMES.get(record_type, "unknown")
        return _Step(_x_raise, record, _err(
            "UNIMPLEMENTED", f"replay record type {name} is not executable"))
    if record.status_code != 0:
        return None  # failed captured calls made nothing; replay follows what the host did next
    op = record.operation_code
    if op in _IGNORED:
        return None
    decoder = _DECODERS.get(op)
    if decoder is None:
        return _Step(_x_raise, record, _err(
            "UNIMPLEMENTED", f"replay operation {_op_name(op)} is not implemented"))
    data = replay_file.payload(record)
    try:
        handler, arg = decoder(record, data)
    except AmdgpuCliError as error:
        if op in _PREVALIDATED:
            raise
        return _Step(_x_raise, record, error)
    if op == Op.COMMAND_BUFFER_COPY_BUFFER and arg[1].buffer_id:
        copy_targets.append(arg[1])
    if handler is None:
        return None
    return _Step(handler, record, arg)


def _require(record, data, payload_type: int, size: int) -> None:
    if record.payload_type != payload_type:
        raise _err("UNIMPLEMENTED", f"replay operation {_op_name(record.operation_code)} "
                                    f"requires payload {_payload_name(payload_type)}")
    if len(data) < size:
        raise _err("DATA_LOSS", f"replay payload {_payload_name(payload_type)} is too short")


def _fixed(record, data, payload_type: int) -> dict:
    layout = S.PAYLOADS[payload_type]
    _require(record, data, payload_type, layout.size)
    return layout.unpack(data)


def _queue_lists(record, data, fields: dict, fixed_size: int, trailing: int):
    """(waits, signals, trailing bytes) of a queue payload, IREE's length check first."""
    waits = fields["wait_semaphore_count"]
    signals = fields["signal_semaphore_count"]
    if fixed_size + 16 * (waits + signals) + trailing != len(data):
        raise _err("DATA_LOSS", "replay queue payload length mismatch")
    cursor = fixed_size
    wait = _timepoints(data, cursor, waits)
    cursor += 16 * waits
    signal = _timepoints(data, cursor, signals)
    cursor += 16 * signals
    return wait, signal, bytes(data[cursor:cursor + trailing])


# Each decoder returns (handler, arg); handler None drops the record.

def _d_scope(record, data):
    fields = _fixed(record, data, P.REPLAY_SCOPE)
    if fields["flags"] or fields["reserved0"] or fields["reserved1"]:
        raise _err("DATA_LOSS", "replay scope payload reserved fields must be zero")
    length = fields["name_length"]
    if length == 0 or 24 + length != len(data):
        raise _err("DATA_LOSS", "replay scope payload name length mismatch")
    name = bytes(data[24:24 + length]).decode("utf-8", "replace")
    return _x_scope, (name, record.operation_code == Op.SCOPE_BEGIN)


def _d_cache(record, data):
    fields = _fixed(record, data, P.EXECUTABLE_CACHE_OBJECT)
    length = fields["identifier_length"]
    if length > len(data) - 16:
        raise _err("DATA_LOSS", "replay executable cache identifier overflow")
    return _x_create_cache, bytes(data[16:16 + length]).decode("utf-8", "replace")


def _d_prepare(record, data):
    fields = _fixed(record, data, P.EXECUTABLE_PREPARE)
    fmt_len = fields["executable_format_length"]
    data_len = fields["executable_data_length"]
    constants = fields["constant_count"]
    meta_len = fields["executable_metadata_length"]
    data_offset = 40 + fmt_len
    constants_offset = data_offset + data_len
    meta_offset = constants_offset + 4 * constants
    if meta_offset + meta_len != len(data):
        raise _err("DATA_LOSS", "replay executable prepare payload length mismatch")
    if meta_len == 0:
        raise _err("DATA_LOSS", "replay executable prepare records require function metadata")
    fmt = bytes(data[40:data_offset]).decode("utf-8", "replace")
    values = struct.unpack_from(f"<{constants}I", data, constants_offset)
    functions = _decode_metadata(data[meta_offset:meta_offset + meta_len],
                                 record.related_object_id)
    return _x_prepare, (fmt, bytes(data[data_offset:constants_offset]), values, functions)


class _Function(NamedTuple):
    name: str
    flags: int
    workgroup_size: tuple
    constant_count: int
    binding_count: int
    parameter_count: int


def _decode_metadata(data, executable_id: int) -> tuple[_Function, ...] | AmdgpuCliError:
    """The captured function list; a format error is returned (IREE reports it after the
    executable is prepared)."""
    if len(data) < 32:
        return _err("DATA_LOSS", "replay executable metadata is too short")
    header = S.METADATA_HEADER.unpack(data)
    if header["reserved1"]:
        return _err("DATA_LOSS", "replay executable metadata reserved fields must be zero")
    count = header["function_count"]
    params = header["parameter_count"]
    names = header["function_name_storage_length"]
    if 32 + 32 * count + 8 * params + names != len(data):
        return _err("DATA_LOSS", "replay executable metadata length mismatch")
    name_base = 32 + 32 * count + 8 * params
    functions = []
    parameter_index = name_offset = 0
    for i in range(count):
        f = S.METADATA_FUNCTION.unpack(data, 32 + 32 * i)
        if (f["parameter_count"] > params - parameter_index
                or f["name_length"] > names - name_offset):
            return _err("DATA_LOSS", "replay executable metadata count mismatch")
        name = bytes(data[name_base + name_offset:name_base + name_offset + f["name_length"]])
        name_offset += f["name_length"]
        if not name:
            return _err("DATA_LOSS", f"replay executable {executable_id} captured function {i} "
                                     f"is missing a name")
        for j in range(f["parameter_count"]):
            if S.METADATA_PARAMETER.unpack(
                    data, 32 + 32 * count + 8 * (parameter_index + j))["reserved0"]:
                return _err("DATA_LOSS", "replay executable parameter metadata reserved "
                                         "fields must be zero")
        parameter_index += f["parameter_count"]
        functions.append(_Function(name.decode("utf-8", "replace"), f["flags"],
                                   tuple(f["workgroup_size"]), f["constant_count"],
                                   f["binding_count"], f["parameter_count"]))
    if parameter_index != params or name_offset != names:
        return _err("DATA_LOSS", "replay executable metadata count mismatch")
    return tuple(functions)


def _d_command_buffer(record, data):
    f = _fixed(record, data, P.COMMAND_BUFFER_OBJECT)
    return _x_create_command_buffer, (f["mode"], f["command_categories"],
                                      _affinity(f["queue_affinity"]), f["binding_capacity"])


def _d_event(record, data):
    _fixed(record, data, P.EVENT_OBJECT)
    return _x_create_event, None


def _d_semaphore(record, data):
    f = _fixed(record, data, P.SEMAPHORE_OBJECT)
    return _x_create_semaphore, f["initial_value"]


def _d_import_file(record, data):
    f = _fixed(record, data, P.FILE_OBJECT)
    if 112 + f["reference_length"] != len(data):
        raise _err("DATA_LOSS", "replay file object payload length mismatch")
    f["reference"] = bytes(data[112:])
    return _x_import_file, f


def _d_allocate(record, data):
    f = _fixed(record, data, P.ALLOCATOR_ALLOCATE_BUFFER)
    return _x_allocate, (f["type"], f["usage"], f["allocation_size"])


def _d_import_buffer(record, data):
    f = _fixed(record, data, P.ALLOCATOR_IMPORT_BUFFER)
    if f["external_type"] != 1:
        raise _err("UNIMPLEMENTED", f"replay import buffer external type {f['external_type']} "
                                    f"is not supported")
    if 56 + f["data_length"] != len(data):
        raise _err("DATA_LOSS", "replay import buffer payload length mismatch")
    allocation = f["allocation"]
    if f["data_length"] > allocation["allocation_size"]:
        raise _err("DATA_LOSS", "replay import buffer data overflows allocation")
    from amdgpu_cli.hal.enums import BufferUsage, MemoryType
    return _x_import_buffer, (allocation["type"] | int(MemoryType.HOST_VISIBLE),
                              allocation["usage"] | int(BufferUsage.MAPPING),
                              allocation["allocation_size"], bytes(data[56:]))


def _d_range_data(record, data):
    if record.payload_type != P.BUFFER_RANGE_DATA:
        return None, None  # a read-only mapping: nothing to replay
    f = _fixed(record, data, P.BUFFER_RANGE_DATA)
    if f["data_length"] > len(data) - 40:
        raise _err("DATA_LOSS", "replay buffer range data overflows payload")
    payload = bytes(data[40:40 + f["data_length"]])
    if len(payload) > f["byte_length"]:
        raise _err("DATA_LOSS", "replay buffer data overflows target range")
    return _x_write_range, (f["byte_offset"], f["byte_length"], f["memory_access"], payload)


def _d_alloca(record, data):
    f = _fixed(record, data, P.DEVICE_QUEUE_ALLOCA)
    wait, signal, _ = _queue_lists(record, data, f, 72, 0)
    a = f["allocation"]
    return _x_queue_alloca, (_affinity(f["queue_affinity"]), wait, signal, a["type"],
                             a["usage"], a["allocation_size"], f["flags"])


def _d_dealloca(record, data):
    f = _fixed(record, data, P.DEVICE_QUEUE_DEALLOCA)
    wait, signal, _ = _queue_lists(record, data, f, 64, 0)
    ref = _ref_at(data, 0)
    return _x_queue_dealloca, (_affinity(f["queue_affinity"]), wait, signal, ref, f["flags"])


def _d_fill(record, data):
    f = _fixed(record, data, P.DEVICE_QUEUE_FILL)
    wait, signal, pattern = _queue_lists(record, data, f, 72, f["pattern_length"])
    return _x_queue_fill, (_affinity(f["queue_affinity"]), wait, signal, _ref_at(data, 0),
                           pattern, f["flags"])


def _d_update(record, data):
    f = _fixed(record, data, P.DEVICE_QUEUE_UPDATE)
    wait, signal, payload = _queue_lists(record, data, f, 80, f["data_length"])
    return _x_queue_update, (_affinity(f["queue_affinity"]), wait, signal, _ref_at(data, 0),
                             payload, f["flags"])


def _d_copy(record, data):
    f = _fixed(record, data, P.DEVICE_QUEUE_COPY)
    wait, signal, _ = _queue_lists(record, data, f, 96, 0)
    return _x_queue_copy, (_affinity(f["queue_affinity"]), wait, signal, _ref_at(data, 0),
                           _ref_at(data, 32), f["flags"])


def _d_read(record, data):
    f = _fixed(record, data, P.DEVICE_QUEUE_READ)
    wait, signal, captured = _queue_lists(record, data, f, 88, f["captured_data_length"])
    return _x_queue_read, (_affinity(f["queue_affinity"]), wait, signal, f["source_file_id"],
                           f["source_offset"], _ref_at(data, 16), captured, f["flags"])


def _d_write(record, data):
    f = _fixed(record, data, P.DEVICE_QUEUE_WRITE)
    wait, signal, _ = _queue_lists(record, data, f, 80, 0)
    return _x_queue_write, (_affinity(f["queue_affinity"]), wait, signal, _ref_at(data, 0),
                            f["target_file_id"], f["target_offset"], f["flags"])


def _barrier_lists(data, offset: int, memory_count: int, buffer_count: int) -> tuple:
    """The buffer barriers' refs (memory barriers carry nothing our HAL takes)."""
    base = offset + 8 * memory_count
    return tuple(_ref_at(data, base + 40 * i + 8) for i in range(buffer_count))


def _d_barrier(record, data):
    f = _fixed(record, data, P.COMMAND_BUFFER_EXECUTION_BARRIER)
    memory, buffers = f["memory_barrier_count"], f["buffer_barrier_count"]
    if 40 + 8 * memory + 40 * buffers != len(data):
        raise _err("DATA_LOSS", "replay execution barrier payload length mismatch")
    return _x_cb_barrier, (f["source_stage_mask"] & 0xFFFFFFFF,
                           f["target_stage_mask"] & 0xFFFFFFFF, f["flags"],
                           _barrier_lists(data, 40, memory, buffers))


def _d_event_op(record, data):
    f = _fixed(record, data, P.COMMAND_BUFFER_EVENT)
    return _x_cb_event, f["event_id"]


def _d_wait_events(record, data):
    f = _fixed(record, data, P.COMMAND_BUFFER_WAIT_EVENTS)
    events, memory, buffers = (f["event_count"], f["memory_barrier_count"],
                               f["buffer_barrier_count"])
    if 48 + 8 * events + 8 * memory + 40 * buffers != len(data):
        raise _err("DATA_LOSS", "replay wait events payload length mismatch")
    ids = struct.unpack_from(f"<{events}Q", data, 48)
    return _x_cb_wait_events, (ids, f["source_stage_mask"] & 0xFFFFFFFF,
                               f["target_stage_mask"] & 0xFFFFFFFF,
                               _barrier_lists(data, 48 + 8 * events, memory, buffers))


def _d_cb_fill(record, data):
    f = _fixed(record, data, P.COMMAND_BUFFER_FILL_BUFFER)
    if 48 + f["pattern_length"] != len(data):
        raise _err("DATA_LOSS", "replay command buffer fill payload length mismatch")
    return _x_cb_fill, (_ref_at(data, 0), bytes(data[48:]), f["flags"])


def _d_cb_update(record, data):
    f = _fixed(record, data, P.COMMAND_BUFFER_UPDATE_BUFFER)
    if 56 + f["data_length"] != len(data):
        raise _err("DATA_LOSS", "replay command buffer update payload length mismatch")
    ref = _ref_at(data, 0)
    if ref.length != f["data_length"]:
        raise _err("DATA_LOSS", "replay command buffer update data length does not match "
                                "target length")
    return _x_cb_update, (ref, bytes(data[56:]), f["flags"])


def _d_cb_copy(record, data):
    f = _fixed(record, data, P.COMMAND_BUFFER_COPY_BUFFER)
    if len(data) != 80:
        raise _err("DATA_LOSS", "replay payload command_buffer_copy_buffer length mismatch")
    return _x_cb_copy, (_ref_at(data, 0), _ref_at(data, 32), f["flags"])


def _dispatch_parts(record, data):
    f = _fixed(record, data, P.DISPATCH)
    waits, signals = f["wait_semaphore_count"], f["signal_semaphore_count"]
    constants, bindings = f["constants_length"], f["binding_count"]
    constants_offset = 120 + 16 * (waits + signals)
    bindings_offset = constants_offset + constants
    if bindings_offset + 32 * bindings != len(data):
        raise _err("DATA_LOSS", "replay dispatch payload length mismatch")
    count_ref = _ref_at(data, 48)
    indirect = count_ref.buffer_id != 0 or count_ref.length not in (0, WHOLE_BUFFER) or \
        count_ref.offset != 0 or count_ref.slot != 0
    return f, (f["executable_id"], f["function_ordinal"], tuple(f["workgroup_count"]),
               count_ref if indirect else None, bytes(data[constants_offset:bindings_offset]),
               tuple(_ref_at(data, bindings_offset + 32 * i) for i in range(bindings)),
               f["flags"])


def _d_cb_dispatch(record, data):
    f = _fixed(record, data, P.DISPATCH)
    if f["wait_semaphore_count"] or f["signal_semaphore_count"]:
        raise _err("UNIMPLEMENTED", "command buffer dispatch semaphore lists are reserved for "
                                    "immediate dispatch")
    _, arg = _dispatch_parts(record, data)
    return _x_cb_dispatch, arg


def _d_queue_dispatch(record, data):
    f, arg = _dispatch_parts(record, data)
    wait = _timepoints(data, 120, f["wait_semaphore_count"])
    signal = _timepoints(data, 120 + 16 * f["wait_semaphore_count"],
                         f["signal_semaphore_count"])
    return _x_queue_dispatch, (_affinity(f["queue_affinity"]), wait, signal, arg)


def _d_queue_execute(record, data):
    f = _fixed(record, data, P.DEVICE_QUEUE_EXECUTE)
    waits, signals, bindings = (f["wait_semaphore_count"], f["signal_semaphore_count"],
                                f["binding_count"])
    if 48 + 16 * (waits + signals) + 32 * bindings != len(data):
        raise _err("DATA_LOSS", "replay queue execute payload length mismatch")
    base = 48 + 16 * (waits + signals)
    return _x_queue_execute, (f["command_buffer_id"], _affinity(f["queue_affinity"]),
                              _timepoints(data, 48, waits), _timepoints(data, 48 + 16 * waits,
                                                                        signals),
                              tuple(_ref_at(data, base + 32 * i) for i in range(bindings)),
                              f["flags"])


def _d_simple(handler):
    return lambda record, data: (handler, None)


# -- execution --------------------------------------------------------------------------------

class _Sparse:
    """A list of `length` slots holding `default` but where set: what ObjectTable keeps for
    tables too large to hold densely (a replay whose ids are sparse and large)."""

    __slots__ = ("values", "length", "default")

    def __init__(self, length: int, default):
        self.values: dict = {}
        self.length = length
        self.default = default

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int):
        return self.values.get(index, self.default)

    def __setitem__(self, index: int, value) -> None:
        if value is self.default or (type(value) is int and value == self.default):
            self.values.pop(index, None)
        else:
            self.values[index] = value

    def set_ids(self) -> list[int]:
        return sorted(self.values, reverse=True)


_DENSE_CAPACITY = 1 << 16


class ObjectTable:
    """The live objects of one execution: `get(id)` the object stored at id (None if none)."""

    __slots__ = ("objects", "types")

    def __init__(self, capacity: int):
        if capacity > _DENSE_CAPACITY:
            self.objects, self.types = _Sparse(capacity, None), _Sparse(capacity, _NONE_TYPE)
        else:
            self.objects = [None] * capacity
            self.types = [_NONE_TYPE] * capacity

    def get(self, object_id: int):
        return self.objects[object_id] if 0 < object_id < len(self.objects) else None

    def stored_ids(self):
        """The ids that may hold an object, highest first (the release order)."""
        objects = self.objects
        if isinstance(objects, _Sparse):
            return objects.set_ids()
        return range(len(objects) - 1, 0, -1)


class _Executor:
    __slots__ = ("table", "objects", "types", "devices", "next_device", "remaps",
                 "substitutions", "on_scope", "executables")

    def __init__(self, plan: Plan, devices, remaps, substitutions, on_scope):
        self.table = ObjectTable(plan.object_capacity)
        self.objects = self.table.objects
        self.types = self.table.types
        self.devices = devices
        self.next_device = 0
        self.remaps = remaps
        self.substitutions = substitutions
        self.on_scope = on_scope

    def lookup(self, object_id: int, object_type: int):
        types = self.types
        if object_id <= 0 or object_id >= len(types):
            raise _err("NOT_FOUND", f"replay object id {object_id} is not defined")
        found = types[object_id]
        if found != object_type:
            # As IREE: an id inside the table that holds nothing reads as type "none".
            raise _err("FAILED_PRECONDITION",
                       f"replay object id {object_id} has type "
                       f"{_OBJECT_TYPE_NAMES.get(found, 'unknown')}; expected "
                       f"{_OBJECT_TYPE_NAMES.get(object_type, 'unknown')}")
        return self.objects[object_id]

    def store(self, object_id: int, object_type: int, value) -> None:
        types = self.types
        if object_id <= 0 or object_id >= len(types):
            _release(object_type, value)
            raise _err("OUT_OF_RANGE",
                       f"replay object id {object_id} exceeds object table capacity")
        if types[object_id] != _NONE_TYPE:
            _release(object_type, value)
            raise _err("ALREADY_EXISTS", f"replay object id {object_id} is already assigned")
        types[object_id] = object_type
        self.objects[object_id] = value

    def ref(self, ref: _Ref):
        from amdgpu_cli.hal.command_buffer import BufferRef

        if ref.buffer_id == 0:
            return BufferRef(None, ref.offset, ref.length, ref.slot)
        return BufferRef(self.lookup(ref.buffer_id, T.BUFFER), ref.offset, ref.length, 0)

    def direct(self, ref: _Ref, message: str):
        if ref.buffer_id == 0:
            raise _err("DATA_LOSS", message)
        return self.lookup(ref.buffer_id, T.BUFFER)

    def fence(self, timepoints):
        """A Fence over (semaphore id, value) timepoints; None when empty."""
        if not timepoints:
            return None
        from amdgpu_cli.hal.fence import Fence

        lookup = self.lookup
        if len(timepoints) == 1:
            semaphore_id, value = timepoints[0]
            return Fence.create(lookup(semaphore_id, T.SEMAPHORE), value)
        return Fence([(lookup(s, T.SEMAPHORE), v) for s, v in timepoints])

    def release(self) -> None:
        objects, types = self.objects, self.types
        for i in self.table.stored_ids():
            value = objects[i]
            if value is not None:
                objects[i] = None
                kind = types[i]
                types[i] = _NONE_TYPE
                _release(kind, value)


def _release(object_type: int, value) -> None:
    if object_type in (T.BUFFER, T.COMMAND_BUFFER):
        value.close()
    elif object_type == T.EXECUTABLE:
        value[0].close()
    elif object_type == T.FILE:
        value.close()


def _flush_and_wait(ex: _Executor, device, affinity: int, signal) -> None:
    device.queue_flush(affinity)
    if signal is not None:
        signal.wait()


def execute(plan: Plan, devices: Sequence, *, file_remaps=(), substitutions=(),
            on_scope: Callable[[str, bool], None] | None = None,
            on_complete: Callable[[ObjectTable], None] | None = None) -> None:
    """One full execution of `plan` on `devices` (in DEVICE record order). `file_remaps`:
    (captured_prefix, replay_prefix) pairs; `substitutions`: Substitution entries;
    `on_scope(name, begin)` is called as scope markers are reached; `on_complete(table)` sees
    the live objects after the last record, before they are released."""
    ex = _Executor(plan, list(devices), tuple(file_remaps), tuple(substitutions), on_scope)
    fast = plan.fast
    if fast is not None:
        try:
            for fn, record, arg in (fast.steps if on_scope is not None else fast.unscoped):
                fn(ex, record, arg)
            if ex.next_device != len(ex.devices):
                raise _err("FAILED_PRECONDITION",
                           f"replay captured {ex.next_device} device(s) but the target device "
                           f"group contains {len(ex.devices)} device(s)")
            if on_complete is not None:
                on_complete(ex.table)
        finally:
            _release_fast(ex, fast.closable)
        return
    try:
        for fn, record, arg in plan.steps:
            fn(ex, record, arg)
        if ex.next_device != len(ex.devices):
            raise _err("FAILED_PRECONDITION",
                       f"replay captured {ex.next_device} device(s) but the target device group "
                       f"contains {len(ex.devices)} device(s)")
        if on_complete is not None:
            on_complete(ex.table)
    finally:
        ex.release()


# Handlers: fn(ex, record, arg).

def _x_raise(ex, record, error):
    raise error


def _x_device_object(ex, record, _):
    if ex.next_device >= len(ex.devices):
        raise _err("OUT_OF_RANGE", "replay references more devices than provided")
    device = ex.devices[ex.next_device]
    ex.next_device += 1
    ex.store(record.object_id, T.DEVICE, device)


def _x_allocator_object(ex, record, _):
    device = ex.lookup(record.device_id, T.DEVICE)
    ex.store(record.object_id, T.ALLOCATOR, device.allocator)


def _x_scope(ex, record, arg):
    if ex.on_scope is not None:
        ex.on_scope(*arg)


def _x_create_cache(ex, record, identifier):
    device = ex.lookup(record.object_id, T.DEVICE)
    cache = device.create_executable_cache(identifier or "default")
    ex.store(record.related_object_id, T.EXECUTABLE_CACHE, cache)


def _x_prepare(ex, record, arg):
    fmt, data, constants, functions = arg
    cache = ex.lookup(record.object_id, T.EXECUTABLE_CACHE)
    executable_id = record.related_object_id
    executable = None
    substitution = _find_substitution(ex.substitutions, executable_id)
    try:
        if substitution is not None:
            try:
                replacement = substitution.data()
                if not replacement:
                    raise _err("INVALID_ARGUMENT", "substituted executable data is empty")
                executable = cache.prepare_executable(
                    substitution.format or _infer_format(replacement, fmt), replacement,
                    constants)
            except AmdgpuCliError as error:
                raise _err(error.status, f"{error}; preparing substitute for captured "
                                         f"executable {executable_id} from "
                                         f"'{substitution.path}'") from None
        else:
            executable = cache.prepare_executable(fmt, data, constants)
        function_map = _function_map(executable_id, functions, executable)
    except BaseException:
        if executable is not None:
            executable.close()
        raise
    ex.store(executable_id, T.EXECUTABLE, (executable, function_map))


def _function_map(executable_id: int, functions, executable) -> tuple[int, ...]:
    """Captured function i -> the loaded export ordinal, by name, with the ABI check."""
    if isinstance(functions, AmdgpuCliError):
        raise functions
    exports = executable.exports
    by_name = {}
    for ordinal, export in enumerate(exports):
        by_name.setdefault(export.name, ordinal)
    mapped = []
    for i, captured in enumerate(functions):
        ordinal = by_name.get(captured.name)
        if ordinal is None:
            raise _err("NOT_FOUND", f"executable has no export named '{captured.name}'; looking "
                                    f"up replay function '{captured.name}' for executable "
                                    f"{executable_id} captured function {i}")
        if ordinal in mapped:
            raise _err("FAILED_PRECONDITION",
                       f"replay executable {executable_id} captured function '{captured.name}' "
                       f"resolves to the same loaded function token as captured function "
                       f"{mapped.index(ordinal)}")
        export = exports[ordinal]
        size = tuple(export.workgroup_size)
        # Our exports reflect no flags or parameters: those are taken as captured.
        if (captured.constant_count != export.constant_count
                or captured.binding_count != export.binding_count
                or captured.workgroup_size != size):
            raise _err("FAILED_PRECONDITION",
                       f"replay executable {executable_id} function {i} ABI mismatch: "
                       f"captured=(flags=0x{captured.flags:016x} "
                       f"constants={captured.constant_count} bindings={captured.binding_count} "
                       f"parameters={captured.parameter_count} workgroup_size="
                       f"[{','.join(map(str, captured.workgroup_size))}]) loaded=("
                       f"flags=0x{captured.flags:016x} constants={export.constant_count} "
                       f"bindings={export.binding_count} parameters={captured.parameter_count} "
                       f"workgroup_size=[{','.join(map(str, size))}])")
        mapped.append(ordinal)
    return tuple(mapped)


def _infer_format(data: bytes, captured_format: str) -> str:
    """What the cache's infer_format would say: an x86-64 ELF is embedded-elf-x86_64; an
    AMDGPU code object or AMD1 container takes the captured format's target."""
    if data[:4] == b"\x7fELF" and len(data) > 20 and struct.unpack_from("<H", data, 18)[0] == 62:
        return "embedded-elf-x86_64"
    return captured_format


def _x_create_command_buffer(ex, record, arg):
    device = ex.lookup(record.object_id, T.DEVICE)
    ex.store(record.related_object_id, T.COMMAND_BUFFER, device.create_command_buffer(*arg))


class _ReplayEvent:
    """A HAL event (our HAL has none; inline queues are ordered, see the module docstring)."""
    __slots__ = ("device",)

    def __init__(self, device):
        self.device = device


def _x_create_event(ex, record, _):
    device = ex.lookup(record.object_id, T.DEVICE)
    ex.store(record.related_object_id, T.EVENT, _ReplayEvent(device))


def _x_create_semaphore(ex, record, initial_value):
    device = ex.lookup(record.object_id, T.DEVICE)
    ex.store(record.related_object_id, T.SEMAPHORE, device.create_semaphore(initial_value))


class _ReplayFile:
    """An imported file: its bytes (None for captured ranges: reads carry their data)."""
    __slots__ = ("data", "writable", "_mmap")

    def __init__(self, data, writable: bool, mapping=None):
        self.data = data
        self.writable = writable
        self._mmap = mapping

    def view(self, offset: int, length: int) -> memoryview:
        if self.data is None:
            raise _err("FAILED_PRECONDITION",
                       "replay queue read requires an imported file or captured data")
        if offset < 0 or length < 0 or offset + length > len(self.data):
            raise _err("OUT_OF_RANGE", f"file range [{offset}, {offset + length}) is outside "
                                       f"the {len(self.data)}-byte file")
        return memoryview(self.data)[offset:offset + length]

    def close(self) -> None:
        if self._mmap is not None:
            self.data = None
            try:
                self._mmap.close()
            except BufferError:
                pass  # a view is still alive: the mapping goes with it
            self._mmap = None


def _remap(remaps, path: str) -> str:
    best = None
    for captured, replay in remaps:
        if captured and path.startswith(captured) and (best is None or
                                                       len(captured) > len(best[0])):
            best = (captured, replay)
    return path if best is None else best[1] + path[len(best[0]):]


def _x_import_file(ex, record, f):
    ex.lookup(record.object_id, T.DEVICE)
    kind = f["reference_type"]
    writable = bool(f["access"] & 2)
    reference = f["reference"]
    if kind == S.FileReference.EXTERNAL_PATH:
        captured = reference.decode("utf-8", "surrogateescape")
        path = _remap(ex.remaps, captured)
        file = _open_external(path, captured, writable, f)
    elif kind == S.FileReference.INLINE_BYTES:
        if f["file_length"] != len(reference):
            raise _err("DATA_LOSS", f"inline replay file length mismatch: file_length="
                                    f"{f['file_length']} reference_length={len(reference)}")
        file = _ReplayFile(bytearray(reference), writable)
    elif kind == S.FileReference.CAPTURED_RANGES:
        file = _ReplayFile(None, writable)
    else:
        raise _err("UNIMPLEMENTED", f"replay file reference type {kind} is not executable")
    ex.store(record.related_object_id, T.FILE, file)


def _open_external(path: str, captured: str, writable: bool, f) -> _ReplayFile:
    import mmap

    try:
        fd = os.open(path, os.O_RDWR if writable else os.O_RDONLY)
    except OSError as error:
        raise _err("NOT_FOUND" if isinstance(error, FileNotFoundError) else "UNAVAILABLE",
                   f"failed to open file '{path}'; opening external replay file '{path}' "
                   f"captured as '{captured}'; use --replay_file_remap=CAPTURED_PREFIX="
                   f"REPLAY_PREFIX if the parameter root moved") from None
    try:
        stat = os.fstat(fd)
        if f["file_length"] != stat.st_size:
            raise _err("FAILED_PRECONDITION",
                       f"external replay file length mismatch for '{path}' captured as "
                       f"'{captured}': captured={f['file_length']} current={stat.st_size}; "
                       f"restore the matching file or fix --replay_file_remap")
        mapping = None
        data = b""
        if stat.st_size:
            mapping = mmap.mmap(fd, stat.st_size, access=mmap.ACCESS_WRITE if writable
                                else mmap.ACCESS_READ)
            data = mapping
        validation = f["validation_type"]
        if validation == S.FileValidation.CONTENT_DIGEST:
            if f["digest_type"] != S.DIGEST_FNV1A_64:
                raise _err("UNIMPLEMENTED", f"external replay file digest type "
                                            f"{f['digest_type']} is not executable")
            expected = struct.unpack_from("<Q", f["digest"])[0]
            actual = _fnv1a_64(data)
            if actual != expected:
                raise _err("FAILED_PRECONDITION",
                           f"external replay file digest mismatch for '{path}' captured as "
                           f"'{captured}': expected=0x{expected:016x} actual=0x{actual:016x}; "
                           f"restore the matching file or fix --replay_file_remap")
        elif validation == S.FileValidation.IDENTITY:
            if f["file_device"] or f["file_inode"] or f["file_mtime_ns"]:
                current = (stat.st_dev, stat.st_ino, stat.st_mtime_ns)
                recorded = (f["file_device"], f["file_inode"], f["file_mtime_ns"])
                if current != recorded:
                    raise _err(
                        "FAILED_PRECONDITION",
                        f"external replay file identity mismatch for '{path}' captured as "
                        f"'{captured}': captured=(dev={recorded[0]}, inode={recorded[1]}, "
                        f"mtime_ns={recorded[2]}) current=(dev={current[0]}, inode={current[1]}, "
                        f"mtime_ns={current[2]}); identity validation is the default and does "
                        f"not read file contents; restore the original file identity, fix "
                        f"--replay_file_remap, or recapture with "
                        f"--device_replay_file_validation=digest when copied/staged files are "
                        f"intentional")
        elif validation != S.FileValidation.NONE:
            raise _err("UNIMPLEMENTED", f"external replay file validation type {validation} is "
                                        f"not executable")
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return _ReplayFile(data, writable, mapping)


def _fnv1a_64(data) -> int:
    """FNV-1a-64 over the file's bytes (a byte loop: digest-validated files are small)."""
    value = S.FNV1A_64_OFFSET
    prime = S.FNV1A_64_PRIME
    mask = _U64_MAX
    for byte in memoryview(data).cast("B"):
        value = ((value ^ byte) * prime) & mask
    return value


def _x_allocate(ex, record, arg):
    allocator = ex.lookup(record.object_id, T.ALLOCATOR)
    ex.store(record.related_object_id, T.BUFFER, allocator.allocate(*arg))


def _x_import_buffer(ex, record, arg):
    allocator = ex.lookup(record.object_id, T.ALLOCATOR)
    memory_type, usage, size, data = arg
    buffer = allocator.allocate(memory_type, usage, size)
    try:
        if data:
            buffer.map_bytes(2, 0, size)[:len(data)] = data
    except BaseException:
        buffer.close()
        raise
    ex.store(record.related_object_id, T.BUFFER, buffer)


def _x_write_range(ex, record, arg):
    offset, length, access, data = arg
    buffer = ex.lookup(record.object_id, T.BUFFER)
    if data:
        buffer.map_bytes(access, offset, length)[:len(data)] = data


def _x_queue_alloca(ex, record, arg):
    affinity, wait, signal, memory_type, usage, size, flags = arg
    device = ex.lookup(record.object_id, T.DEVICE)
    wait, signal = ex.fence(wait), ex.fence(signal)
    buffer = device.queue_alloca(affinity, wait, signal, memory_type, usage, size, 0, flags)
    try:
        _flush_and_wait(ex, device, affinity, signal)
    except BaseException:
        buffer.close()
        raise
    ex.store(record.related_object_id, T.BUFFER, buffer)


def _x_queue_dealloca(ex, record, arg):
    affinity, wait, signal, ref, flags = arg
    device = ex.lookup(record.object_id, T.DEVICE)
    wait, signal = ex.fence(wait), ex.fence(signal)
    buffer = ex.direct(ref, "replay queue dealloca requires a direct buffer reference")
    device.queue_dealloca(affinity, wait, signal, buffer, flags)
    _flush_and_wait(ex, device, affinity, signal)


def _x_queue_fill(ex, record, arg):
    affinity, wait, signal, ref, pattern, flags = arg
    device = ex.lookup(record.object_id, T.DEVICE)
    wait, signal = ex.fence(wait), ex.fence(signal)
    buffer = ex.direct(ref, "replay queue fill requires a direct target buffer reference")
    device.queue_fill(affinity, wait, signal, buffer, ref.offset, ref.length, pattern,
                      len(pattern), flags)
    _flush_and_wait(ex, device, affinity, signal)


def _x_queue_update(ex, record, arg):
    affinity, wait, signal, ref, data, flags = arg
    device = ex.lookup(record.object_id, T.DEVICE)
    wait, signal = ex.fence(wait), ex.fence(signal)
    buffer = ex.direct(ref, "replay queue update requires a direct target buffer reference")
    if len(data) != ref.length:
        raise _err("DATA_LOSS", "replay queue update data length does not match target length")
    device.queue_update(affinity, wait, signal, data, 0, buffer, ref.offset, ref.length, flags)
    _flush_and_wait(ex, device, affinity, signal)


def _x_queue_copy(ex, record, arg):
    affinity, wait, signal, source, target, flags = arg
    device = ex.lookup(record.object_id, T.DEVICE)
    wait, signal = ex.fence(wait), ex.fence(signal)
    if source.buffer_id == 0 or target.buffer_id == 0:
        raise _err("DATA_LOSS", "replay queue copy requires direct source and target buffer "
                                "references")
    if source.length != target.length:
        raise _err("DATA_LOSS", "replay queue copy source and target lengths do not match")
    src = ex.lookup(source.buffer_id, T.BUFFER)
    dst = ex.lookup(target.buffer_id, T.BUFFER)
    device.queue_copy(affinity, wait, signal, src, source.offset, dst, target.offset,
                      source.length, flags)
    _flush_and_wait(ex, device, affinity, signal)


def _x_queue_read(ex, record, arg):
    affinity, wait, signal, file_id, file_offset, ref, captured, flags = arg
    device = ex.lookup(record.object_id, T.DEVICE)
    wait, signal = ex.fence(wait), ex.fence(signal)
    file = ex.lookup(file_id, T.FILE)
    buffer = ex.direct(ref, "replay queue read requires a direct target buffer reference")
    length = ref.length
    if captured:
        if len(captured) != length:
            raise _err("DATA_LOSS", "replay queue read captured data length does not match "
                                    "target length")
        data = captured
    else:
        if length == WHOLE_BUFFER:
            length = buffer.validate_range(ref.offset, length)
        data = file.view(file_offset, length)
    # A file read is an update of the file's bytes (as vm/hal_module.py's queue_read).
    device.queue_update(affinity, wait, signal, data, 0, buffer, ref.offset, length, 0)
    _flush_and_wait(ex, device, affinity, signal)


def _x_queue_write(ex, record, arg):
    affinity, wait, signal, ref, file_id, file_offset, flags = arg
    device = ex.lookup(record.object_id, T.DEVICE)
    wait, signal = ex.fence(wait), ex.fence(signal)
    buffer = ex.direct(ref, "replay queue write requires a direct source buffer reference")
    file = ex.lookup(file_id, T.FILE)
    if not file.writable or file.data is None:
        raise _err("PERMISSION_DENIED", "file is read-only")
    length = buffer.validate_range(ref.offset, ref.length)
    view = file.view(file_offset, length)
    device.queue_barrier(affinity, wait, None)  # order after `wait`
    try:
        view[:] = buffer.read(ref.offset, length)
    except AmdgpuCliError as error:
        if signal is not None:
            signal.fail(HalError(str(error), status=error.status))
        raise
    if signal is not None:
        signal.signal()
    _flush_and_wait(ex, device, affinity, signal)


def _x_cb_begin(ex, record, _):
    ex.lookup(record.object_id, T.COMMAND_BUFFER).begin()


def _x_cb_end(ex, record, _):
    ex.lookup(record.object_id, T.COMMAND_BUFFER).end()


def _x_cb_barrier(ex, record, arg):
    source, target, flags, buffer_refs = arg
    for ref in buffer_refs:
        ex.ref(ref)
    ex.lookup(record.object_id, T.COMMAND_BUFFER).execution_barrier(source, target, flags)


def _x_cb_event(ex, record, event_id):
    ex.lookup(record.object_id, T.COMMAND_BUFFER)
    ex.lookup(event_id, T.EVENT)


def _x_cb_wait_events(ex, record, arg):
    ids, source, target, buffer_refs = arg
    for event_id in ids:
        ex.lookup(event_id, T.EVENT)
    for ref in buffer_refs:
        ex.ref(ref)
    ex.lookup(record.object_id, T.COMMAND_BUFFER).execution_barrier(source, target, 0)


def _x_cb_fill(ex, record, arg):
    ref, pattern, flags = arg
    cb = ex.lookup(record.object_id, T.COMMAND_BUFFER)
    cb.fill_buffer(ex.ref(ref), pattern, len(pattern), flags)


def _x_cb_update(ex, record, arg):
    ref, data, flags = arg
    cb = ex.lookup(record.object_id, T.COMMAND_BUFFER)
    cb.update_buffer(data, 0, ex.ref(ref), flags)


def _x_cb_copy(ex, record, arg):
    source, target, flags = arg
    cb = ex.lookup(record.object_id, T.COMMAND_BUFFER)
    cb.copy_buffer(ex.ref(source), ex.ref(target), flags)


def _record_dispatch(ex, cb, arg) -> None:
    executable_id, ordinal, count, count_ref, constants, bindings, flags = arg
    refs = [ex.ref(r) for r in bindings]
    executable, function_map = ex.lookup(executable_id, T.EXECUTABLE)
    indirect = ex.ref(count_ref) if count_ref is not None else None
    if ordinal >= len(function_map):
        raise _err("OUT_OF_RANGE", f"replay executable {executable_id} does not define captured "
                                   f"function ordinal {ordinal}")
    entry_point = function_map[ordinal]
    if indirect is not None:
        cb.dispatch_indirect(executable, entry_point, indirect, constants, refs, flags)
    else:
        cb.dispatch(executable, entry_point, count, constants, refs, flags)


def _x_cb_dispatch(ex, record, arg):
    # IREE resolves the bindings, then the command buffer, then the executable.
    for ref in arg[5]:
        ex.ref(ref)
    cb = ex.lookup(record.object_id, T.COMMAND_BUFFER)
    _record_dispatch(ex, cb, arg)


def _x_queue_dispatch(ex, record, arg):
    affinity, wait, signal, dispatch = arg
    device = ex.lookup(record.object_id, T.DEVICE)
    wait, signal = ex.fence(wait), ex.fence(signal)
    cb = device.create_command_buffer(1, 3, affinity, 0)  # ONE_SHOT, TRANSFER|DISPATCH
    try:
        cb.begin()
        _record_dispatch(ex, cb, dispatch)
        cb.end()
        device.queue_execute(affinity, wait, signal, cb, (), 0)
        _flush_and_wait(ex, device, affinity, signal)
    finally:
        cb.close()


def _x_queue_execute(ex, record, arg):
    cb_id, affinity, wait, signal, bindings, flags = arg
    wait, signal = ex.fence(wait), ex.fence(signal)
    table = []
    for ref in bindings:
        buffer = ex.lookup(ref.buffer_id, T.BUFFER) if ref.buffer_id else None
        table.append((buffer, ref.offset, ref.length))
    device = ex.lookup(record.object_id, T.DEVICE)
    if cb_id:
        cb = ex.lookup(cb_id, T.COMMAND_BUFFER)
        device.queue_execute(affinity, wait, signal, cb, table, flags)
    elif not bindings:
        device.queue_barrier(affinity, wait, signal, flags)
    else:
        raise _err("DATA_LOSS", "replay queue barrier payload unexpectedly has bindings")
    device.queue_flush(affinity)
    if signal is not None:
        signal.wait()


def _x_queue_flush(ex, record, _):
    ex.lookup(record.object_id, T.DEVICE).queue_flush(-1)


# -- resolved steps ---------------------------------------------------------------------------
#
# Every execution stores the same objects at the same ids in the same order (ids are never
# reused; a store either succeeds or ends the execution), so the type each id holds when a record
# is reached is known at plan time. `_compile` tracks it through the steps: a step whose lookups
# and stores all hold by then gets a resolved form (`_f_*`: its ids, refs and fences prepared,
# no lookups or type checks, the same HAL calls in the same order); any other step (one that
# would fail, or that is rare) keeps its checked handler, which raises exactly as IREE does. The
# resolved handlers keep `types` up to date, so both kinds mix freely. Releasing at the end
# closes the objects the steps can have stored, in reverse id order, as ObjectTable.release.

_T_DEVICE, _T_ALLOCATOR, _T_BUFFER = int(T.DEVICE), int(T.ALLOCATOR), int(T.BUFFER)
_T_COMMAND_BUFFER, _T_CACHE = int(T.COMMAND_BUFFER), int(T.EXECUTABLE_CACHE)
_T_EXECUTABLE, _T_SEMAPHORE = int(T.EXECUTABLE), int(T.SEMAPHORE)
_T_FILE, _T_EVENT = int(T.FILE), int(T.EVENT)
_CLOSABLE = frozenset({_T_BUFFER, _T_COMMAND_BUFFER, _T_EXECUTABLE, _T_FILE})
_BufferRef = None  # hal.command_buffer.BufferRef, imported by _compile
_new_fence = None  # hal.fence.Fence.create
_Fence = None


class _FastPlan:
    """`steps` (resolved where possible), `unscoped` (the same without scope markers, for
    executions without on_scope) and `closable`: (id, type) of every object the steps may
    store that releasing closes, in reverse id order (None: release as ObjectTable does)."""

    __slots__ = ("steps", "unscoped", "closable")

    def __init__(self, steps, unscoped, closable):
        self.steps = steps
        self.unscoped = unscoped
        self.closable = closable


def _release_fast(ex: _Executor, closable) -> None:
    if closable is None:
        ex.release()
        return
    objects, types = ex.objects, ex.types
    for object_id, kind in closable:
        value = objects[object_id]
        if value is not None:
            objects[object_id] = None
            types[object_id] = _NONE_TYPE
            _release(kind, value)
    count = len(objects)
    objects[:] = [None] * count
    types[:] = [_NONE_TYPE] * count


def _timepoint_ids(timepoints) -> list:
    return [(s, _T_SEMAPHORE) for s, _ in timepoints]


def _ref_ids(refs) -> list:
    return [(r.buffer_id, _T_BUFFER) for r in refs if r.buffer_id]


def _effects(fn, record, arg):
    """(lookups, stores) of a step as (id, type) pairs, or None for an unknown handler. A step
    that always raises whatever the table holds has no effects (it ends the execution)."""
    oid, rel = record.object_id, record.related_object_id
    if fn is _x_raise or fn is _x_scope:
        return (), ()
    if fn is _x_device_object:
        return (), ((oid, _T_DEVICE),)
    if fn is _x_allocator_object:
        return ((record.device_id, _T_DEVICE),), ((oid, _T_ALLOCATOR),)
    creates = _CREATES.get(fn)
    if creates is not None:
        return ((oid, creates[0]),), ((rel, creates[1]),)
    if fn is _x_write_range:
        return ((oid, _T_BUFFER),), ()
    if fn in (_x_cb_begin, _x_cb_end):
        return ((oid, _T_COMMAND_BUFFER),), ()
    if fn is _x_queue_flush:
        return ((oid, _T_DEVICE),), ()
    lookups = [(oid, _T_COMMAND_BUFFER)]
    if fn is _x_cb_barrier:
        return _ref_ids(arg[3]) + lookups, ()
    if fn is _x_cb_event:
        return lookups + [(arg, _T_EVENT)], ()
    if fn is _x_cb_wait_events:
        return [(e, _T_EVENT) for e in arg[0]] + _ref_ids(arg[3]) + lookups, ()
    if fn in (_x_cb_fill, _x_cb_update):
        return _ref_ids(arg[:1]) + lookups, ()
    if fn is _x_cb_copy:
        return _ref_ids(arg[:2]) + lookups, ()
    if fn is _x_cb_dispatch:
        executable_id, _, _, count_ref, _, bindings, _ = arg
        return (_ref_ids(bindings) + lookups + [(executable_id, _T_EXECUTABLE)]
                + _ref_ids(() if count_ref is None else (count_ref,))), ()
    # Queue operations: the device, the fences, then what each names.
    if fn is _x_queue_execute:
        cb_id, _, wait, signal, bindings, _ = arg
        if not cb_id and bindings:
            return (), ()  # always raises
        found = _timepoint_ids(wait) + _timepoint_ids(signal) + _ref_ids(bindings) + [
            (oid, _T_DEVICE)]
        return found + ([(cb_id, _T_COMMAND_BUFFER)] if cb_id else []), ()
    if fn is _x_queue_dispatch:
        affinity, wait, signal, dispatch = arg
        executable_id, _, _, count_ref, _, bindings, _ = dispatch
        return ([(oid, _T_DEVICE)] + _timepoint_ids(wait) + _timepoint_ids(signal)
                + _ref_ids(bindings) + [(executable_id, _T_EXECUTABLE)]
                + _ref_ids(() if count_ref is None else (count_ref,))), ()
    if fn in _QUEUE_OPS:
        found = [(oid, _T_DEVICE)] + _timepoint_ids(arg[1]) + _timepoint_ids(arg[2])
        if fn is _x_queue_alloca:
            return found, ((rel, _T_BUFFER),)
        if fn in (_x_queue_dealloca, _x_queue_fill, _x_queue_update):
            return found + _ref_ids(arg[3:4]), ()
        if fn is _x_queue_copy:
            return found + _ref_ids(arg[3:5]), ()
        if fn is _x_queue_read:
            return found + [(arg[3], _T_FILE)] + _ref_ids(arg[5:6]), ()
        if fn is _x_queue_write:
            return found + _ref_ids(arg[3:4]) + [(arg[4], _T_FILE)], ()
    return None


def _compile(steps, capacity: int) -> _FastPlan | None:
    """The resolved form of `steps`; None for an object table too large to model here (the
    execution then makes the table and fails as it does)."""
    global _BufferRef, _new_fence, _Fence
    if capacity > _MAX_MODELLED_CAPACITY:
        return None
    from amdgpu_cli.hal.command_buffer import BufferRef
    from amdgpu_cli.hal.fence import Fence

    _BufferRef, _new_fence, _Fence = BufferRef, Fence.create, Fence
    sim = [_NONE_TYPE] * capacity
    known = True
    resolved = []
    stored = []
    for step in steps:
        effects = _effects(step.fn, step.record, step.arg) if known else None
        if effects is None:
            known = False  # an unknown handler: nothing after it is resolved
            resolved.append(step)
            continue
        lookups, stores = effects
        valid = all(0 < i < capacity and sim[i] == kind for i, kind in lookups) and all(
            0 < i < capacity and sim[i] == _NONE_TYPE for i, _ in stores)
        compiler = _COMPILERS.get(step.fn) if valid else None
        fast = compiler(step.record, step.arg) if compiler is not None else None
        if fast is None:
            resolved.append(step)
        elif fast is not _DROP:
            resolved.append(_Step(fast[0], step.record, fast[1]))
        if valid:
            for i, kind in stores:
                sim[i] = kind
                stored.append((i, kind))
        # else: the step raises, so nothing after it runs; `sim` may stay as it is
    closable = None
    if known:
        closable = tuple(sorted(((i, kind) for i, kind in stored if kind in _CLOSABLE),
                                reverse=True))
    steps = tuple(resolved)
    unscoped = tuple(s for s in steps if s.fn is not _f_scope)
    return _FastPlan(steps, unscoped, closable)


_DROP = object()  # a resolved step with nothing to do
_MAX_MODELLED_CAPACITY = _DENSE_CAPACITY  # fast plans run on the dense table


def _fence_of(objects, timepoints):
    if len(timepoints) == 1:
        semaphore_id, value = timepoints[0]
        return _new_fence(objects[semaphore_id], value)
    return _Fence([(objects[s], v) for s, v in timepoints])


def _tp(timepoints):
    return timepoints or None


def _ref_spec(ref: _Ref):
    """A ref as (buffer id, offset, length, prebuilt BufferRef for slot refs)."""
    if ref.buffer_id:
        return (ref.buffer_id, ref.offset, ref.length, None)
    return (0, ref.offset, ref.length, _BufferRef(None, ref.offset, ref.length, ref.slot))


def _make_ref(objects, spec):
    buffer_id, offset, length, prebuilt = spec
    if prebuilt is not None:
        return prebuilt
    return _BufferRef(objects[buffer_id], offset, length, 0)


def _f_scope(ex, record, arg):
    ex.on_scope(*arg)


def _f_allocator_object(ex, record, arg):
    device_id, object_id = arg
    ex.objects[object_id] = ex.objects[device_id].allocator
    ex.types[object_id] = _T_ALLOCATOR


def _f_create_semaphore(ex, record, arg):
    device_id, initial_value, related = arg
    ex.objects[related] = ex.objects[device_id].create_semaphore(initial_value)
    ex.types[related] = _T_SEMAPHORE


def _f_allocate(ex, record, arg):
    allocator_id, memory_type, usage, size, related = arg
    ex.objects[related] = ex.objects[allocator_id].allocate(memory_type, usage, size)
    ex.types[related] = _T_BUFFER


def _f_create_command_buffer(ex, record, arg):
    device_id, mode, categories, affinity, capacity, related = arg
    ex.objects[related] = ex.objects[device_id].create_command_buffer(mode, categories, affinity,
                                                                      capacity)
    ex.types[related] = _T_COMMAND_BUFFER


def _f_create_cache(ex, record, arg):
    device_id, identifier, related = arg
    ex.objects[related] = ex.objects[device_id].create_executable_cache(identifier)
    ex.types[related] = _T_CACHE


def _f_prepare(ex, record, arg):
    cache_id, executable_id, fmt, data, constants, functions, memo, slow_arg = arg
    if ex.substitutions:
        return _x_prepare(ex, record, slow_arg)
    objects = ex.objects
    executable = objects[cache_id].prepare_executable(fmt, data, constants)
    try:
        exports = executable.exports
        known = memo[0]
        if known is not None and known[0] is exports:
            function_map = known[1]  # the same loaded exports: the same map
        else:
            function_map = _function_map(executable_id, functions, executable)
            memo[0] = (exports, function_map)
    except BaseException:
        executable.close()
        raise
    objects[executable_id] = (executable, function_map)
    ex.types[executable_id] = _T_EXECUTABLE


def _f_import_inline(ex, record, arg):
    reference, writable, related = arg
    # A read-only file is never written: its captured bytes serve every execution.
    ex.objects[related] = _ReplayFile(bytearray(reference) if writable else reference, writable)
    ex.types[related] = _T_FILE


def _f_write_range(ex, record, arg):
    buffer_id, offset, length, access, data, size = arg
    ex.objects[buffer_id].map_bytes(access, offset, length)[:size] = data


def _f_queue_alloca(ex, record, arg):
    device_id, affinity, wait, signal, memory_type, usage, size, flags, related = arg
    objects = ex.objects
    device = objects[device_id]
    wait = None if wait is None else _fence_of(objects, wait)
    signal = None if signal is None else _fence_of(objects, signal)
    buffer = device.queue_alloca(affinity, wait, signal, memory_type, usage, size, 0, flags)
    try:
        device.queue_flush(affinity)
        if signal is not None:
            signal.wait()
    except BaseException:
        buffer.close()
        raise
    objects[related] = buffer
    ex.types[related] = _T_BUFFER


def _f_queue_dealloca(ex, record, arg):
    device_id, affinity, wait, signal, buffer_id, flags = arg
    objects = ex.objects
    device = objects[device_id]
    wait = None if wait is None else _fence_of(objects, wait)
    signal = None if signal is None else _fence_of(objects, signal)
    device.queue_dealloca(affinity, wait, signal, objects[buffer_id], flags)
    device.queue_flush(affinity)
    if signal is not None:
        signal.wait()


def _f_queue_fill(ex, record, arg):
    device_id, affinity, wait, signal, buffer_id, offset, length, pattern, flags = arg
    objects = ex.objects
    device = objects[device_id]
    wait = None if wait is None else _fence_of(objects, wait)
    signal = None if signal is None else _fence_of(objects, signal)
    device.queue_fill(affinity, wait, signal, objects[buffer_id], offset, length, pattern,
                      len(pattern), flags)
    device.queue_flush(affinity)
    if signal is not None:
        signal.wait()


def _f_queue_update(ex, record, arg):
    device_id, affinity, wait, signal, buffer_id, offset, length, data, flags = arg
    objects = ex.objects
    device = objects[device_id]
    wait = None if wait is None else _fence_of(objects, wait)
    signal = None if signal is None else _fence_of(objects, signal)
    device.queue_update(affinity, wait, signal, data, 0, objects[buffer_id], offset, length,
                        flags)
    device.queue_flush(affinity)
    if signal is not None:
        signal.wait()


def _f_queue_copy(ex, record, arg):
    device_id, affinity, wait, signal, source_id, source_offset, target_id, target_offset, \
        length, flags = arg
    objects = ex.objects
    device = objects[device_id]
    wait = None if wait is None else _fence_of(objects, wait)
    signal = None if signal is None else _fence_of(objects, signal)
    device.queue_copy(affinity, wait, signal, objects[source_id], source_offset,
                      objects[target_id], target_offset, length, flags)
    device.queue_flush(affinity)
    if signal is not None:
        signal.wait()


def _f_queue_read(ex, record, arg):
    device_id, affinity, wait, signal, file_id, file_offset, buffer_id, offset, length, \
        captured = arg
    objects = ex.objects
    device = objects[device_id]
    wait = None if wait is None else _fence_of(objects, wait)
    signal = None if signal is None else _fence_of(objects, signal)
    if captured:
        data = captured
    else:
        buffer = objects[buffer_id]
        if length == WHOLE_BUFFER:
            length = buffer.validate_range(offset, length)
        data = objects[file_id].view(file_offset, length)
    device.queue_update(affinity, wait, signal, data, 0, objects[buffer_id], offset, length, 0)
    device.queue_flush(affinity)
    if signal is not None:
        signal.wait()


def _f_queue_execute(ex, record, arg):
    device_id, affinity, wait, signal, cb_id, bindings, flags = arg
    objects = ex.objects
    wait = None if wait is None else _fence_of(objects, wait)
    signal = None if signal is None else _fence_of(objects, signal)
    device = objects[device_id]
    if cb_id:
        table = [(objects[b] if b else None, o, n) for b, o, n in bindings]
        device.queue_execute(affinity, wait, signal, objects[cb_id], table, flags)
    else:
        device.queue_barrier(affinity, wait, signal, flags)
    device.queue_flush(affinity)
    if signal is not None:
        signal.wait()


def _f_queue_flush(ex, record, device_id):
    ex.objects[device_id].queue_flush(-1)


def _f_cb_begin(ex, record, cb_id):
    ex.objects[cb_id].begin()


def _f_cb_end(ex, record, cb_id):
    ex.objects[cb_id].end()


def _f_cb_barrier(ex, record, arg):
    cb_id, source, target, flags = arg
    ex.objects[cb_id].execution_barrier(source, target, flags)


def _f_cb_fill(ex, record, arg):
    cb_id, ref, pattern, flags = arg
    objects = ex.objects
    objects[cb_id].fill_buffer(_make_ref(objects, ref), pattern, len(pattern), flags)


def _f_cb_update(ex, record, arg):
    cb_id, ref, data, flags = arg
    objects = ex.objects
    objects[cb_id].update_buffer(data, 0, _make_ref(objects, ref), flags)


def _f_cb_copy(ex, record, arg):
    cb_id, source, target, flags = arg
    objects = ex.objects
    objects[cb_id].copy_buffer(_make_ref(objects, source), _make_ref(objects, target), flags)


def _f_cb_dispatch(ex, record, arg):
    cb_id, executable_id, ordinal, count, constants, bindings, flags = arg
    objects = ex.objects
    refs = [_BufferRef(objects[b], o, n, 0) if prebuilt is None else prebuilt
            for b, o, n, prebuilt in bindings]
    executable, function_map = objects[executable_id]
    if ordinal >= len(function_map):
        raise _err("OUT_OF_RANGE", f"replay executable {executable_id} does not define captured "
                                   f"function ordinal {ordinal}")
    objects[cb_id].dispatch(executable, function_map[ordinal], count, constants, refs, flags)


def _c_allocator_object(record, arg):
    return _f_allocator_object, (record.device_id, record.object_id)


def _c_create(handler, make_args):
    def compile_create(record, arg):
        return handler, (record.object_id, *make_args(arg), record.related_object_id)
    return compile_create


def _c_scope(record, arg):
    return _f_scope, arg


def _c_prepare(record, arg):
    fmt, data, constants, functions = arg
    return _f_prepare, (record.object_id, record.related_object_id, fmt, data, constants,
                        functions, [None], arg)


def _c_import_file(record, f):
    if f["reference_type"] != S.FileReference.INLINE_BYTES or f["file_length"] != len(
            f["reference"]):
        return None  # external and captured-range files, and errors: the checked handler
    return _f_import_inline, (f["reference"], bool(f["access"] & 2), record.related_object_id)


def _c_write_range(record, arg):
    offset, length, access, data = arg
    if not data:
        return _DROP
    return _f_write_range, (record.object_id, offset, length, access, data, len(data))


def _c_queue_alloca(record, arg):
    affinity, wait, signal, memory_type, usage, size, flags = arg
    return _f_queue_alloca, (record.object_id, affinity, _tp(wait), _tp(signal), memory_type,
                             usage, size, flags, record.related_object_id)


def _c_queue_dealloca(record, arg):
    affinity, wait, signal, ref, flags = arg
    if not ref.buffer_id:
        return None  # raises DATA_LOSS when reached
    return _f_queue_dealloca, (record.object_id, affinity, _tp(wait), _tp(signal),
                               ref.buffer_id, flags)


def _c_queue_fill(record, arg):
    affinity, wait, signal, ref, pattern, flags = arg
    if not ref.buffer_id:
        return None
    return _f_queue_fill, (record.object_id, affinity, _tp(wait), _tp(signal), ref.buffer_id,
                           ref.offset, ref.length, pattern, flags)


def _c_queue_update(record, arg):
    affinity, wait, signal, ref, data, flags = arg
    if not ref.buffer_id or len(data) != ref.length:
        return None  # raises DATA_LOSS when reached
    return _f_queue_update, (record.object_id, affinity, _tp(wait), _tp(signal), ref.buffer_id,
                             ref.offset, ref.length, data, flags)


def _c_queue_copy(record, arg):
    affinity, wait, signal, source, target, flags = arg
    if not source.buffer_id or not target.buffer_id or source.length != target.length:
        return None
    return _f_queue_copy, (record.object_id, affinity, _tp(wait), _tp(signal), source.buffer_id,
                           source.offset, target.buffer_id, target.offset, source.length, flags)


def _c_queue_read(record, arg):
    affinity, wait, signal, file_id, file_offset, ref, captured, flags = arg
    if not ref.buffer_id or (captured and len(captured) != ref.length):
        return None
    return _f_queue_read, (record.object_id, affinity, _tp(wait), _tp(signal), file_id,
                           file_offset, ref.buffer_id, ref.offset, ref.length, captured)


def _c_queue_execute(record, arg):
    cb_id, affinity, wait, signal, bindings, flags = arg
    if not cb_id and bindings:
        return None  # raises DATA_LOSS when reached
    return _f_queue_execute, (record.object_id, affinity, _tp(wait), _tp(signal), cb_id,
                              tuple((r.buffer_id, r.offset, r.length) for r in bindings), flags)


def _c_queue_flush(record, arg):
    return _f_queue_flush, record.object_id


def _c_cb_begin(record, arg):
    return _f_cb_begin, record.object_id


def _c_cb_end(record, arg):
    return _f_cb_end, record.object_id


def _c_cb_barrier(record, arg):
    source, target, flags, _ = arg
    return _f_cb_barrier, (record.object_id, source, target, flags)


def _c_cb_fill(record, arg):
    ref, pattern, flags = arg
    return _f_cb_fill, (record.object_id, _ref_spec(ref), pattern, flags)


def _c_cb_update(record, arg):
    ref, data, flags = arg
    return _f_cb_update, (record.object_id, _ref_spec(ref), data, flags)


def _c_cb_copy(record, arg):
    source, target, flags = arg
    return _f_cb_copy, (record.object_id, _ref_spec(source), _ref_spec(target), flags)


def _c_cb_dispatch(record, arg):
    executable_id, ordinal, count, count_ref, constants, bindings, flags = arg
    if count_ref is not None:
        return None  # indirect: the checked handler
    return _f_cb_dispatch, (record.object_id, executable_id, ordinal, count, constants,
                            tuple(_ref_spec(r) for r in bindings), flags)


# -- stopping at a dispatch (amdgpu-replay slice) -----------------------------------------------

class ResolvedBinding(NamedTuple):
    """A dispatch binding resolved to its root buffer: the captured id of that buffer, the live
    buffer, and the root-relative offset and length (WHOLE_BUFFER resolved)."""
    buffer_id: int
    buffer: object
    offset: int
    length: int


class DispatchState(NamedTuple):
    """One dispatch as it is about to run (or just ran): `workgroup_count` is the captured count,
    or None for an indirect dispatch, whose count buffer range is `workgroup_count_binding`."""
    device: object
    executable_id: int
    function_ordinal: int
    flags: int
    workgroup_count: tuple | None
    workgroup_count_binding: ResolvedBinding | None
    constants: bytes
    bindings: tuple  # ResolvedBinding per captured binding, in order
    table: ObjectTable


def stop_at_dispatch(plan: Plan, ordinal: int, on_dispatch: Callable[[DispatchState], None], *,
                     after: bool = False) -> Plan:
    """A plan that executes `plan` up to the first execution of the dispatch record with sequence
    ordinal `ordinal`, calls `on_dispatch(state)` with every command before it in its command
    buffer done and the dispatch not yet run (`after`: run too), and ends there. Raises
    AmdgpuCliError if that record is no executable dispatch or is never executed."""
    steps = plan.steps
    index = next((i for i, s in enumerate(steps) if s.record.sequence_ordinal == ordinal), None)
    if index is None or steps[index].fn not in (_x_cb_dispatch, _x_queue_dispatch):
        raise _err("INVALID_ARGUMENT", f"record {ordinal} is not an executable dispatch")
    step = steps[index]
    if step.fn is _x_queue_dispatch:
        stop = _Step(_x_stop_queue_dispatch, step.record, (step.arg, after, on_dispatch))
        return Plan(steps[:index] + (stop,), plan.object_capacity, plan.record_count,
                    plan.copy_targets)
    cb_id = step.record.object_id
    begin = next((i for i in range(index - 1, -1, -1)
                  if steps[i].fn is _x_cb_begin and steps[i].record.object_id == cb_id), None)
    create = next((s for s in steps[:index] if s.fn is _x_create_command_buffer
                   and s.record.related_object_id == cb_id), None)
    run = next((i for i in range(index + 1, len(steps)) if steps[i].fn is _x_queue_execute
                and steps[i].arg[0] == cb_id), None)
    if begin is None or create is None or run is None:
        raise _err("NOT_FOUND", f"dispatch record {ordinal} is never executed: no queue_execute "
                                f"of its command buffer {cb_id} follows it")
    recording = tuple(s for s in steps[begin:index + (1 if after else 0)]
                      if s.record.object_id == cb_id
                      and s.record.object_type == T.COMMAND_BUFFER)
    stop = _Step(_x_stop_execute, steps[run].record,
                 (steps[run].arg, create.arg, recording, step.arg, on_dispatch))
    return Plan(steps[:run] + (stop,), plan.object_capacity, plan.record_count,
                plan.copy_targets)


def _x_stop_execute(ex, record, arg):
    execute_arg, create_arg, recording, dispatch, on_dispatch = arg
    cb_id, affinity, wait, signal, bindings, flags = execute_arg
    wait, signal = ex.fence(wait), ex.fence(signal)
    table = [(ex.lookup(ref.buffer_id, T.BUFFER) if ref.buffer_id else None, ref.offset,
              ref.length) for ref in bindings]
    device = ex.lookup(record.object_id, T.DEVICE)
    captured = ex.lookup(cb_id, T.COMMAND_BUFFER)
    prefix = device.create_command_buffer(*create_arg)
    try:
        ex.objects[cb_id] = prefix  # the recorded steps look their command buffer up by id
        try:
            for fn, step_record, step_arg in recording:
                fn(ex, step_record, step_arg)
        finally:
            ex.objects[cb_id] = captured
        prefix.end()
        device.queue_execute(affinity, wait, signal, prefix, table, flags)
        _flush_and_wait(ex, device, affinity, signal)
        on_dispatch(_dispatch_state(ex, device, dispatch, table, bindings))
    finally:
        prefix.close()


def _x_stop_queue_dispatch(ex, record, arg):
    step_arg, after, on_dispatch = arg
    device = ex.lookup(record.object_id, T.DEVICE)
    if after:
        _x_queue_dispatch(ex, record, step_arg)
    else:
        wait = ex.fence(step_arg[1])
        if wait is not None:
            wait.wait()
    on_dispatch(_dispatch_state(ex, device, step_arg[3], (), ()))


def _resolve_binding(ex, ref: _Ref, table, table_refs) -> ResolvedBinding:
    from amdgpu_cli.hal.command_buffer import BufferRef, resolve_ref

    if ref.buffer_id:
        buffer = ex.lookup(ref.buffer_id, T.BUFFER)
        return ResolvedBinding(ref.buffer_id, buffer, ref.offset,
                               buffer.validate_range(ref.offset, ref.length))
    buffer, offset, length = resolve_ref(BufferRef(None, ref.offset, ref.length, ref.slot),
                                         table)
    return ResolvedBinding(table_refs[ref.slot].buffer_id, buffer, offset, length)


def _dispatch_state(ex, device, dispatch, table, table_refs) -> DispatchState:
    executable_id, ordinal, count, count_ref, constants, bindings, flags = dispatch
    resolved = tuple(_resolve_binding(ex, ref, table, table_refs) for ref in bindings)
    count_binding = None
    if count_ref is not None:
        count_binding = _resolve_binding(ex, count_ref._replace(length=12), table, table_refs)
        count = None
    return DispatchState(device, executable_id, ordinal, flags, count, count_binding, constants,
                         resolved, ex.table)


_DECODERS = {
    Op.SCOPE_BEGIN: _d_scope,
    Op.SCOPE_END: _d_scope,
    Op.DEVICE_CREATE_EXECUTABLE_CACHE: _d_cache,
    Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE: _d_prepare,
    Op.DEVICE_CREATE_COMMAND_BUFFER: _d_command_buffer,
    Op.DEVICE_CREATE_EVENT: _d_event,
    Op.DEVICE_IMPORT_FILE: _d_import_file,
    Op.DEVICE_CREATE_SEMAPHORE: _d_semaphore,
    Op.ALLOCATOR_ALLOCATE_BUFFER: _d_allocate,
    Op.ALLOCATOR_IMPORT_BUFFER: _d_import_buffer,
    Op.DEVICE_QUEUE_ALLOCA: _d_alloca,
    Op.DEVICE_QUEUE_DEALLOCA: _d_dealloca,
    Op.DEVICE_QUEUE_FILL: _d_fill,
    Op.DEVICE_QUEUE_UPDATE: _d_update,
    Op.DEVICE_QUEUE_COPY: _d_copy,
    Op.DEVICE_QUEUE_READ: _d_read,
    Op.DEVICE_QUEUE_WRITE: _d_write,
    Op.BUFFER_FLUSH_RANGE: _d_range_data,
    Op.BUFFER_UNMAP_RANGE: _d_range_data,
    Op.COMMAND_BUFFER_BEGIN: _d_simple(_x_cb_begin),
    Op.COMMAND_BUFFER_END: _d_simple(_x_cb_end),
    Op.COMMAND_BUFFER_EXECUTION_BARRIER: _d_barrier,
    Op.COMMAND_BUFFER_SIGNAL_EVENT: _d_event_op,
    Op.COMMAND_BUFFER_RESET_EVENT: _d_event_op,
    Op.COMMAND_BUFFER_WAIT_EVENTS: _d_wait_events,
    Op.COMMAND_BUFFER_DISPATCH: _d_cb_dispatch,
    Op.COMMAND_BUFFER_FILL_BUFFER: _d_cb_fill,
    Op.COMMAND_BUFFER_UPDATE_BUFFER: _d_cb_update,
    Op.COMMAND_BUFFER_COPY_BUFFER: _d_cb_copy,
    Op.DEVICE_QUEUE_DISPATCH: _d_queue_dispatch,
    Op.DEVICE_QUEUE_EXECUTE: _d_queue_execute,
    Op.DEVICE_QUEUE_FLUSH: _d_simple(_x_queue_flush),
}


# Objects made by a step: handler -> (the creator's type, the created object's type).
_CREATES = {
    _x_create_cache: (_T_DEVICE, _T_CACHE),
    _x_prepare: (_T_CACHE, _T_EXECUTABLE),
    _x_create_command_buffer: (_T_DEVICE, _T_COMMAND_BUFFER),
    _x_create_event: (_T_DEVICE, _T_EVENT),
    _x_create_semaphore: (_T_DEVICE, _T_SEMAPHORE),
    _x_import_file: (_T_DEVICE, _T_FILE),
    _x_allocate: (_T_ALLOCATOR, _T_BUFFER),
    _x_import_buffer: (_T_ALLOCATOR, _T_BUFFER),
}
_QUEUE_OPS = frozenset({_x_queue_alloca, _x_queue_dealloca, _x_queue_fill, _x_queue_update,
                        _x_queue_copy, _x_queue_read, _x_queue_write})
_COMPILERS = {
    _x_scope: _c_scope,
    _x_allocator_object: _c_allocator_object,
    _x_create_cache: _c_create(_f_create_cache, lambda identifier: (identifier or "default",)),
    _x_prepare: _c_prepare,
    _x_create_command_buffer: _c_create(_f_create_command_buffer, tuple),
    _x_create_semaphore: _c_create(_f_create_semaphore, lambda value: (value,)),
    _x_allocate: _c_create(_f_allocate, tuple),
    _x_write_range: _c_write_range,
    _x_import_file: _c_import_file,
    _x_queue_alloca: _c_queue_alloca,
    _x_queue_dealloca: _c_queue_dealloca,
    _x_queue_fill: _c_queue_fill,
    _x_queue_update: _c_queue_update,
    _x_queue_copy: _c_queue_copy,
    _x_queue_read: _c_queue_read,
    _x_queue_execute: _c_queue_execute,
    _x_queue_flush: _c_queue_flush,
    _x_cb_begin: _c_cb_begin,
    _x_cb_end: _c_cb_end,
    _x_cb_barrier: _c_cb_barrier,
    _x_cb_fill: _c_cb_fill,
    _x_cb_update: _c_cb_update,
    _x_cb_copy: _c_cb_copy,
    _x_cb_dispatch: _c_cb_dispatch,
}


# -- flags ------------------------------------------------------------------------------------

def parse_file_remaps(values) -> tuple[tuple[str, str], ...]:
    """--replay_file_remap=CAPTURED_PREFIX=REPLAY_PREFIX values."""
    remaps = []
    for value in values:
        captured, sep, replay = value.partition("=")
        if not sep or not captured:
            raise _err("INVALID_ARGUMENT",
                       "--replay_file_remap values must be captured_prefix=replay_prefix")
        remaps.append((captured, replay))
    return tuple(remaps)


class Substitution:
    """One --replay_executable_substitution entry (executable_id 0 = all); its file is read
    once, when first used."""

    __slots__ = ("executable_id", "format", "path", "_data")

    def __init__(self, executable_id: int, executable_format: str, path: str):
        self.executable_id = executable_id
        self.format = executable_format
        self.path = path
        self._data = None

    def data(self) -> bytes:
        if self._data is None:
            try:
                with open(self.path, "rb") as f:
                    self._data = f.read()
            except OSError as error:
                raise _err("NOT_FOUND", f"failed to open file '{self.path}': "
                                        f"{error.strerror}") from None
        return self._data


def _find_substitution(substitutions, executable_id: int):
    for entry in substitutions:
        if entry.executable_id == 0 or entry.executable_id == executable_id:
            return entry
    return None


def parse_substitutions(values) -> tuple[Substitution, ...]:
    """--replay_executable_substitution values (ID=PATH, ID@FORMAT=PATH, all=PATH,
    all@FORMAT=PATH), checked as iree-run-replay checks them; the files are read now."""
    entries = []
    seen = set()
    for value in values:
        selector, sep, path = value.partition("=")
        if not sep or not selector or not path:
            raise _err("INVALID_ARGUMENT",
                       "--replay_executable_substitution values must be EXECUTABLE_ID=PATH, "
                       "EXECUTABLE_ID@FORMAT=PATH, all=PATH, or all@FORMAT=PATH")
        id_text, at, fmt = selector.partition("@")
        if at and (not id_text or not fmt):
            raise _err("INVALID_ARGUMENT",
                       "--replay_executable_substitution selector must be EXECUTABLE_ID, "
                       "EXECUTABLE_ID@FORMAT, all, or all@FORMAT")
        if id_text == "all":
            if len(values) != 1:
                raise _err("INVALID_ARGUMENT",
                           "--replay_executable_substitution all selector cannot be combined "
                           "with other executable substitutions")
            executable_id = 0
        else:
            try:
                executable_id = int(id_text, 10)
            except ValueError:
                executable_id = 0
            if executable_id <= 0 or executable_id > _U64_MAX:
                raise _err("INVALID_ARGUMENT",
                           "--replay_executable_substitution executable selector must be a "
                           "non-zero integer id or all")
            if executable_id in seen:
                raise _err("INVALID_ARGUMENT", f"--replay_executable_substitution repeats "
                                               f"executable id {executable_id}")
            seen.add(executable_id)
        entry = Substitution(executable_id, fmt, path)
        entry.data()
        entries.append(entry)
    return tuple(entries)

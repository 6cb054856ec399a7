"""`amdgpu-replay slice`: one dispatch of a replay cut out into a replay of its own.

Numbering. The dispatches of a replay are its dispatch records, command_buffer.dispatch (313)
and device.queue_dispatch (21) OPERATION records with status OK, numbered 0, 1, 2... in file
order. `list_dispatches()` gives one `DispatchInfo` per dispatch: its record ordinal, executable
id, function name (the prepare record's metadata), workgroup count (None when indirect), binding
count, and whether the replay ever executes it (a command-buffer dispatch runs only when a later
queue_execute submits its command buffer).

Inputs. `slice_dispatch()` executes the replay with our executor on the caller's devices up to
the first execution of dispatch N (executor.stop_at_dispatch: every command before it in its
command buffer already run, with the executing queue_execute's waits and binding table, the
dispatch itself not run), then snapshots the bytes of every buffer range the dispatch binds
(indirect slots resolved through that binding table), its constants and workgroup count (an
indirect count is read from its buffer). Device-only buffers are read through a host-visible
staging buffer (queue_copy).

The slice (../shared/reference/ireereplay.md §7): session; scope `init` holding the DEVICE and
ALLOCATOR object records; the executable cache creation and prepare_executable records with their
captured payloads copied verbatim (format, data, specialization constants, metadata: the
dispatch's function_ordinal still indexes that metadata); per distinct bound root buffer one
allocator.allocate_buffer (type 0x32, usage 0x0b000c03, access 7: what iree-run-module's
uploaded inputs use, §4.3) with its buffer_object record, a map_range (SCOPED, WRITE|DISCARD) and
an unmap_range carrying the snapshot; a semaphore; scope `execute` holding a one-shot command
buffer (begin, the dispatch with direct refs, an execution barrier, end) and the queue_execute
that signals the semaphore; an empty `deinit` scope. Each slice buffer covers the bound ranges of
one captured buffer from the first range's offset rounded down to 256 bytes (offsets keep their
alignment) to the last range's end; refs are rebased onto it. An indirect dispatch becomes a
direct one (its indirect-parameter flags cleared). Object ids are 1 device, 2 allocator, 3 cache,
4 executable, then buffers, the semaphore and the command buffer; every creation is followed by
its OBJECT record, as IREE's recorder writes them.

`iree-benchmark-replay --replay_scope=execute` and `amdgpu-replay bench` on a slice time the one
kernel (plus its submission). Errors are AmdgpuCliError (N out of range, a replay with no
dispatches, a dispatch never executed); the output is written through amdgpu_cli.outputs, so its
path is checked before any work and a failure leaves what was there.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.replay import schema as S
from amdgpu_cli.replay.schema import ObjectType as T, Op, PayloadType as P, RecordType as R

__all__ = ["DispatchInfo", "SliceResult", "list_dispatches", "slice_dispatch", "slice_bytes",
           "read_back", "describe"]

_DISPATCH_OPS = (Op.COMMAND_BUFFER_DISPATCH, Op.DEVICE_QUEUE_DISPATCH)
_REBASE_ALIGNMENT = 256
# What iree-run-module's capture uses for an uploaded input (§4.3): HOST_VISIBLE|DEVICE_LOCAL,
# TRANSFER|DISPATCH_STORAGE|MAPPING_SCOPED|MAPPING_PERSISTENT|MAPPING_ACCESS_RANDOM, READ|WRITE|
# DISCARD.
_INPUT_TYPE = 0x32
_INPUT_USAGE = 0x0B000C03
_INPUT_ACCESS = 0x7
_WRITE_DISCARD = 0x6
_SCOPED = 1
_SEMAPHORE_FLAGS = 0xA  # HOST_INTERRUPT|EXPORTABLE_TIMEPOINTS, as in IREE's captures
_ONE_SHOT = 0x11  # ONE_SHOT|ALLOW_INLINE_EXECUTION
_TRANSFER_DISPATCH = 3
_INDIRECT_PARAMETERS = 0x3  # DYNAMIC_ / STATIC_INDIRECT_PARAMETERS
# The barrier IREE records after each dispatch: DISPATCH|TRANSFER|COMMAND_RETIRE ->
# COMMAND_ISSUE|DISPATCH|TRANSFER, DISPATCH_WRITE -> DISPATCH_READ.
_BARRIER_SOURCE, _BARRIER_TARGET = 0x1C, 0xD
_BARRIER_SCOPES = (8, 4)
_ANY = S.U64_MAX
_DEVICE, _ALLOCATOR, _CACHE, _EXECUTABLE, _FIRST_BUFFER = 1, 2, 3, 4, 5


@dataclass(frozen=True)
class DispatchInfo:
    number: int
    ordinal: int               # the dispatch record's sequence ordinal
    operation: str             # "command_buffer.dispatch" or "device.queue_dispatch"
    command_buffer_id: int     # 0 for a queue dispatch
    executable_id: int
    function_ordinal: int
    function_name: str         # "" when no prepare record names it
    workgroup_count: tuple | None  # None: indirect
    binding_count: int
    constants_length: int
    executed: bool


@dataclass(frozen=True)
class SliceResult:
    dispatch: DispatchInfo
    buffer_count: int
    buffer_bytes: int          # snapshot bytes uploaded
    workgroup_count: tuple
    length: int                # bytes of the slice file


# -- listing ----------------------------------------------------------------------------------

def list_dispatches(replay_file) -> list[DispatchInfo]:
    """Every dispatch of `replay_file` (a reader ReplayFile), numbered in file order."""
    from amdgpu_cli.replay.reader import decode_metadata, decode_payload

    names: dict[int, list[str]] = {}  # executable id -> function names
    found = []  # (record, dispatch fields)
    executions: dict[int, list[int]] = {}  # command buffer id -> queue_execute ordinals
    for record in replay_file.records():
        if record.record_type != R.OPERATION or record.status_code != 0:
            continue
        op = record.operation_code
        if op == Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE:
            fields = decode_payload(P.EXECUTABLE_PREPARE, replay_file.payload(record))
            try:
                names[record.related_object_id] = [
                    f["name"] for f in decode_metadata(fields["metadata"])]
            except AmdgpuCliError:
                names[record.related_object_id] = []
        elif op in _DISPATCH_OPS:
            found.append((record, decode_payload(P.DISPATCH, replay_file.payload(record))))
        elif op == Op.DEVICE_QUEUE_EXECUTE:
            fields = decode_payload(P.DEVICE_QUEUE_EXECUTE, replay_file.payload(record))
            executions.setdefault(fields["command_buffer_id"], []).append(
                record.sequence_ordinal)
    out = []
    for number, (record, f) in enumerate(found):
        queue = record.operation_code == Op.DEVICE_QUEUE_DISPATCH
        cb_id = 0 if queue else record.object_id
        functions = names.get(f["executable_id"], [])
        ordinal = f["function_ordinal"]
        executed = queue or any(o > record.sequence_ordinal for o in executions.get(cb_id, ()))
        out.append(DispatchInfo(
            number, record.sequence_ordinal, S.OP_NAMES[record.operation_code], cb_id,
            f["executable_id"], ordinal, functions[ordinal] if ordinal < len(functions) else "",
            None if _indirect(f["workgroup_count_ref"]) else tuple(f["workgroup_count"]),
            f["binding_count"], f["constants_length"], executed))
    return out


def _indirect(ref: dict) -> bool:
    return bool(ref["buffer_id"] or ref["offset"] or ref["buffer_slot"]
                or ref["length"] not in (0, S.U64_MAX))


def _choose(dispatches: list[DispatchInfo], number: int) -> DispatchInfo:
    if not dispatches:
        raise AmdgpuCliError("the replay has no dispatches", status="NOT_FOUND")
    if not 0 <= number < len(dispatches):
        raise AmdgpuCliError(f"dispatch {number} is out of range; the replay has "
                             f"{len(dispatches)} dispatch(es), 0..{len(dispatches) - 1}",
                             status="OUT_OF_RANGE")
    info = dispatches[number]
    if not info.executed:
        raise AmdgpuCliError(f"dispatch {number} (record {info.ordinal}) is never executed: no "
                             f"queue_execute of command buffer {info.command_buffer_id} follows "
                             f"it", status="NOT_FOUND")
    return info


# -- slicing ----------------------------------------------------------------------------------

def slice_dispatch(source, number: int, output, devices) -> SliceResult:
    """Writes the slice of dispatch `number` of the replay at `source` (a path) to `output` (a
    path, through amdgpu_cli.outputs), its inputs captured on `devices`."""
    from amdgpu_cli.outputs import OutputFile, write_outputs

    target = OutputFile(output)  # the path is checked before any work
    data, result = slice_bytes(source, number, devices)
    write_outputs([(target, data)])
    return result


def slice_bytes(source, number: int, devices) -> tuple[bytes, SliceResult]:
    """The slice of dispatch `number` of `source` (a path or bytes), as bytes."""
    from amdgpu_cli.replay import executor

    replay_file = executor.open_replay(source)
    try:
        info = _choose(list_dispatches(replay_file), number)
        cache_payload, prepare_payload = _executable_payloads(replay_file, info.executable_id)
        plan = executor.plan(replay_file)
    finally:
        replay_file.close()
    seen = []

    def take(state) -> None:
        seen.append(_snapshot(state))

    executor.execute(executor.stop_at_dispatch(plan, info.ordinal, take), devices)
    if not seen:  # the plan ended before it (an earlier failure would have raised)
        raise AmdgpuCliError(f"dispatch {number} (record {info.ordinal}) was not reached",
                             status="INTERNAL")
    snapshot = seen[0]
    data = _write_slice(cache_payload, prepare_payload, snapshot)
    return data, SliceResult(info, len(snapshot.buffers),
                             sum(len(b) for _, b in snapshot.buffers),
                             snapshot.workgroup_count, len(data))


def _executable_payloads(replay_file, executable_id: int) -> tuple[bytes, bytes]:
    """The payloads of the executable's prepare record and of its cache's creation."""
    prepare = None
    caches = {}
    for record in replay_file.records():
        if record.record_type != R.OPERATION or record.status_code != 0:
            continue
        if record.operation_code == Op.DEVICE_CREATE_EXECUTABLE_CACHE:
            caches[record.related_object_id] = bytes(replay_file.payload(record))
        elif (record.operation_code == Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE
              and record.related_object_id == executable_id):
            prepare = record, bytes(replay_file.payload(record))
    if prepare is None:
        raise AmdgpuCliError(f"no prepare_executable record creates executable {executable_id}",
                             status="NOT_FOUND")
    record, payload = prepare
    cache = caches.get(record.object_id)
    if cache is None:
        cache = S.PAYLOADS[P.EXECUTABLE_CACHE_OBJECT].pack()
    return cache, payload


@dataclass
class _Snapshot:
    function_ordinal: int
    flags: int
    workgroup_count: tuple
    constants: bytes
    refs: list            # (slice buffer index, offset in it, length) per binding
    buffers: list         # (captured buffer id, bytes) per slice buffer


def _snapshot(state) -> _Snapshot:
    """The bytes a dispatch reads, grouped by captured root buffer."""
    spans: dict[int, list] = {}  # buffer id -> [buffer, start, end]
    for b in state.bindings:
        span = spans.get(b.buffer_id)
        if span is None:
            spans[b.buffer_id] = [b.buffer, b.offset, b.offset + b.length]
        else:
            span[1] = min(span[1], b.offset)
            span[2] = max(span[2], b.offset + b.length)
    order = list(spans)
    buffers = []
    bases = {}
    for buffer_id in order:
        buffer, start, end = spans[buffer_id]
        base = start - start % _REBASE_ALIGNMENT
        bases[buffer_id] = base
        data = read_back(state.device, buffer, base, end - base) if end > base else b""
        buffers.append((buffer_id, data))
    refs = [(order.index(b.buffer_id), b.offset - bases[b.buffer_id], b.length)
            for b in state.bindings]
    count = state.workgroup_count
    flags = state.flags
    if count is None:
        ref = state.workgroup_count_binding
        raw = read_back(state.device, ref.buffer, ref.offset, 12)
        count = tuple(int.from_bytes(raw[i:i + 4], "little") for i in (0, 4, 8))
        flags &= ~_INDIRECT_PARAMETERS
    return _Snapshot(state.function_ordinal, flags, tuple(count), bytes(state.constants), refs,
                     buffers)


def read_back(device, buffer, offset: int, length: int) -> bytes:
    """[offset, offset + length) of `buffer`: mapped when it is host-visible and mappable, else
    copied on `device`'s queue into a host-visible staging buffer first."""
    from amdgpu_cli.hal.enums import BufferUsage, MemoryType

    if length == 0:
        return b""
    if (int(buffer.memory_type) & MemoryType.HOST_VISIBLE
            and int(buffer.allowed_usage) & BufferUsage.MAPPING_SCOPED):
        return buffer.read(offset, length)
    from amdgpu_cli.hal.fence import Fence

    staging = device.allocator.allocate(
        int(MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE),
        int(BufferUsage.TRANSFER | BufferUsage.MAPPING_SCOPED), length)
    try:
        done = Fence.create(device.create_semaphore(0), 1)
        device.queue_copy(-1, None, done, buffer, offset, staging, 0, length)
        device.queue_flush(-1)
        done.wait()
        return staging.read(0, length)
    finally:
        staging.close()


def _write_slice(cache_payload: bytes, prepare_payload: bytes, snap: _Snapshot) -> bytes:
    from amdgpu_cli.replay.writer import ReplayWriter, buffer_refs, payload, timepoints

    stream = io.BytesIO()
    w = ReplayWriter(stream)
    op, obj = R.OPERATION, R.OBJECT

    def scope(name: str, begin: bool) -> None:
        data = name.encode()
        w.write(op, operation_code=Op.SCOPE_BEGIN if begin else Op.SCOPE_END,
                payload_type=P.REPLAY_SCOPE,
                payload=payload(P.REPLAY_SCOPE, {"name_length": len(data)}, data))

    def create(receiver: int, receiver_type: int, code: int, new_id: int, new_type: int,
               data: bytes, payload_type: int, object_payload: bytes | None = None,
               object_payload_type: int | None = None) -> None:
        """A creation op, then the OBJECT record for what it made (IREE's order, §7.5)."""
        w.write(op, device_id=_DEVICE, object_id=receiver, related_object_id=new_id,
                object_type=receiver_type, operation_code=code, payload_type=payload_type,
                payload=data)
        if object_payload is None:
            object_payload, object_payload_type = data, payload_type
        w.write(obj, device_id=_DEVICE, object_id=new_id, object_type=new_type,
                payload_type=object_payload_type if object_payload else 0,
                payload=object_payload)

    w.session()
    scope("init", True)
    w.write(obj, object_id=_DEVICE, object_type=T.DEVICE)
    w.write(obj, device_id=_DEVICE, object_id=_ALLOCATOR, object_type=T.ALLOCATOR)
    scope("init", False)
    create(_DEVICE, T.DEVICE, Op.DEVICE_CREATE_EXECUTABLE_CACHE, _CACHE, T.EXECUTABLE_CACHE,
           cache_payload, P.EXECUTABLE_CACHE_OBJECT)
    create(_CACHE, T.EXECUTABLE_CACHE, Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE, _EXECUTABLE,
           T.EXECUTABLE, prepare_payload, P.EXECUTABLE_PREPARE, b"", 0)

    ids = []
    for i, (_, data) in enumerate(snap.buffers):
        buffer_id = _FIRST_BUFFER + i
        ids.append(buffer_id)
        size = max(len(data), 4)
        create(_ALLOCATOR, T.ALLOCATOR, Op.ALLOCATOR_ALLOCATE_BUFFER, buffer_id, T.BUFFER,
               payload(P.ALLOCATOR_ALLOCATE_BUFFER, dict(
                   allocation_size=size, queue_affinity=_ANY, usage=_INPUT_USAGE,
                   type=_INPUT_TYPE, access=_INPUT_ACCESS)),
               P.ALLOCATOR_ALLOCATE_BUFFER,
               payload(P.BUFFER_OBJECT, dict(
                   allocation_size=size, byte_length=size, memory_type=_INPUT_TYPE,
                   allowed_usage=_INPUT_USAGE, allowed_access=_INPUT_ACCESS)),
               P.BUFFER_OBJECT)
        w.write(op, device_id=_DEVICE, object_id=buffer_id, object_type=T.BUFFER,
                operation_code=Op.BUFFER_MAP_RANGE, payload_type=P.BUFFER_RANGE,
                payload=payload(P.BUFFER_RANGE, dict(byte_length=size, mapping_mode=_SCOPED,
                                                     memory_access=_WRITE_DISCARD)))
        w.write(op, device_id=_DEVICE, object_id=buffer_id, object_type=T.BUFFER,
                operation_code=Op.BUFFER_UNMAP_RANGE, payload_type=P.BUFFER_RANGE_DATA,
                payload=payload(P.BUFFER_RANGE_DATA, dict(
                    byte_length=size, data_length=len(data), memory_access=_WRITE_DISCARD),
                    data))
    semaphore = _FIRST_BUFFER + len(ids)
    cb = semaphore + 1
    semaphore_payload = payload(P.SEMAPHORE_OBJECT, dict(queue_affinity=_ANY,
                                                         flags=_SEMAPHORE_FLAGS))
    create(_DEVICE, T.DEVICE, Op.DEVICE_CREATE_SEMAPHORE, semaphore, T.SEMAPHORE,
           semaphore_payload, P.SEMAPHORE_OBJECT)

    scope("execute", True)
    create(_DEVICE, T.DEVICE, Op.DEVICE_CREATE_COMMAND_BUFFER, cb, T.COMMAND_BUFFER,
           payload(P.COMMAND_BUFFER_OBJECT, dict(mode=_ONE_SHOT,
                                                 command_categories=_TRANSFER_DISPATCH,
                                                 queue_affinity=_ANY)),
           P.COMMAND_BUFFER_OBJECT)

    def cb_op(code: int, payload_type: int = 0, data: bytes = b"") -> None:
        w.write(op, device_id=_DEVICE, object_id=cb, object_type=T.COMMAND_BUFFER,
                operation_code=code, payload_type=payload_type, payload=data)

    cb_op(Op.COMMAND_BUFFER_BEGIN)
    refs = [dict(buffer_id=ids[index], offset=offset, length=length)
            for index, offset, length in snap.refs]
    cb_op(Op.COMMAND_BUFFER_DISPATCH, P.DISPATCH, payload(P.DISPATCH, dict(
        executable_id=_EXECUTABLE, function_ordinal=snap.function_ordinal,
        flags=snap.flags & 0xFFFFFFFF, workgroup_count=list(snap.workgroup_count),
        constants_length=len(snap.constants), binding_count=len(refs)),
        snap.constants, buffer_refs(refs)))
    source_scope, target_scope = _BARRIER_SCOPES
    cb_op(Op.COMMAND_BUFFER_EXECUTION_BARRIER, P.COMMAND_BUFFER_EXECUTION_BARRIER, payload(
        P.COMMAND_BUFFER_EXECUTION_BARRIER, dict(
            source_stage_mask=_BARRIER_SOURCE, target_stage_mask=_BARRIER_TARGET,
            memory_barrier_count=1),
        S.MEMORY_BARRIER.pack(source_scope=source_scope, target_scope=target_scope)))
    cb_op(Op.COMMAND_BUFFER_END)
    w.write(op, device_id=_DEVICE, object_id=_DEVICE, related_object_id=cb,
            object_type=T.DEVICE, operation_code=Op.DEVICE_QUEUE_EXECUTE,
            payload_type=P.DEVICE_QUEUE_EXECUTE,
            payload=payload(P.DEVICE_QUEUE_EXECUTE, dict(
                command_buffer_id=cb, queue_affinity=_ANY, signal_semaphore_count=1),
                timepoints([(semaphore, 1)])))
    scope("execute", False)
    scope("deinit", True)
    scope("deinit", False)
    w.close()
    return stream.getvalue()


def describe(info: DispatchInfo) -> str:
    """One --list line."""
    count = "indirect" if info.workgroup_count is None else \
        ",".join(str(c) for c in info.workgroup_count)
    line = (f"{info.number} record={info.ordinal} executable={info.executable_id} "
            f"function={info.function_name or '?'} workgroups={count} "
            f"bindings={info.binding_count}")
    return line if info.executed else line + " executed=no"


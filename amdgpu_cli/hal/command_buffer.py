"""CommandBuffer: a recorded, validated list of commands that a device queue executes later.

Owns the recording state machine (initial -> recording (begin) -> executable (end); one-shot buffers
are begun by the VM on create), the command records (NamedTuples) drivers consume (barrier, fill,
update, copy, dispatch, indirect dispatch, collective, debug groups, advise) and IREE's
recording-time validation (command_buffer_validation.c): category allowed, state, binding slots <
binding_capacity, direct buffers' usage/memory type/range, fill pattern size and alignment, copy
lengths equal and direct ranges disjoint, dispatch entry point in range and constants a multiple of
4 bytes. Checks that need the binding table run at execute time (`resolve_ref`), and so do the
dispatch checks every driver makes against the loaded kernel (`check_executable`,
`check_constant_count`, `check_binding_count`, `workgroup_count_source`). UNVALIDATED mode skips
recording checks.

A buffer reference is either direct (`buffer` set; offset/length relative to it) or indirect
(`buffer` None; `slot` names a binding-table entry, offset added to the entry's, length -1 = rest).
Lifetime: the command buffer holds the buffers and executables it records; `close()` drops them.
Threading: record from one thread; once ended it is immutable and may be executed many times
(unless ONE_SHOT).
Replay capture: a command buffer made by a recording device (replay/recorder.py) has `_replay`
set; every recording method then passes its call to `_replay.command`, which runs it unhooked and
writes its record. Otherwise the hook costs one attribute check.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from amdgpu_cli.hal.buffer import Buffer, buffers_overlap
from amdgpu_cli.hal.enums import (
    WHOLE_BUFFER,
    BufferUsage,
    CommandBufferMode,
    CommandCategory,
    DispatchFlags,
    ExecutionStage,
    HalError,
    MemoryType,
    normalize_queue_affinity,
    unpack_collective_op,
)

# update_buffer copies host bytes into the command buffer; IREE caps the size of one update.
MAX_UPDATE_BYTES = 64 * 1024
_ONE_SHOT = int(CommandBufferMode.ONE_SHOT)
_UNVALIDATED = int(CommandBufferMode.UNVALIDATED)
# The checks' flags as plain ints (Buffer.validate_* take ints without enum arithmetic; a
# failing check still reports through the enums).
_DEVICE_VISIBLE = int(MemoryType.DEVICE_VISIBLE)
_USAGE_TRANSFER_SOURCE = int(BufferUsage.TRANSFER_SOURCE)
_USAGE_TRANSFER_TARGET = int(BufferUsage.TRANSFER_TARGET)
_USAGE_DISPATCH_STORAGE_READ = int(BufferUsage.DISPATCH_STORAGE_READ)
_CATEGORY_NONE = int(CommandCategory.NONE)
_CATEGORY_TRANSFER = int(CommandCategory.TRANSFER)
_CATEGORY_DISPATCH = int(CommandCategory.DISPATCH)
# Enum members by value, for the masks and flags each recorded command converts.
_STAGES: dict = {}
_DISPATCH_FLAGS: dict = {}


def _stage(mask) -> ExecutionStage:
    stage = _STAGES.get(mask) if mask.__class__ is int else None
    if stage is None:
        stage = ExecutionStage(mask)
        if mask.__class__ is int and len(_STAGES) < 1024:
            _STAGES[mask] = stage
    return stage


def _dispatch_flags(flags) -> DispatchFlags:
    value = _DISPATCH_FLAGS.get(flags) if flags.__class__ is int else None
    if value is None:
        value = DispatchFlags(flags)
        if flags.__class__ is int and len(_DISPATCH_FLAGS) < 1024:
            _DISPATCH_FLAGS[flags] = value
    return value


class BufferRef(NamedTuple):
    """A recorded command's buffer range: a buffer (direct), or binding-table slot `slot` when
    `buffer` is None (indirect, resolved when the command buffer executes)."""
    buffer: Buffer | None
    offset: int = 0
    length: int = WHOLE_BUFFER
    slot: int = 0

    @classmethod
    def direct(cls, buffer: Buffer, offset: int = 0, length: int = WHOLE_BUFFER) -> BufferRef:
        return cls(buffer, offset, length, 0)

    @classmethod
    def indirect(cls, slot: int, offset: int = 0, length: int = WHOLE_BUFFER) -> BufferRef:
        return cls(None, offset, length, slot)


class Binding(NamedTuple):
    """One binding-table entry: what hal.device.queue.execute.indirect passes as a plain
    (buffer, offset, length) tuple, named."""
    buffer: Buffer | None
    offset: int = 0
    length: int = WHOLE_BUFFER


class ExecutionBarrierCommand(NamedTuple):
    source_stage_mask: ExecutionStage
    target_stage_mask: ExecutionStage
    flags: int = 0


class FillCommand(NamedTuple):
    target: BufferRef
    pattern: bytes
    flags: int = 0


class UpdateCommand(NamedTuple):
    source: bytes  # captured at record time
    target: BufferRef
    flags: int = 0


class CopyCommand(NamedTuple):
    source: BufferRef
    target: BufferRef
    flags: int = 0


class DispatchCommand(NamedTuple):
    executable: object
    entry_point: int
    workgroup_count: tuple[int, int, int] | None  # None when read from workgroup_count_ref
    constants: bytes
    bindings: tuple[BufferRef, ...]
    flags: DispatchFlags = DispatchFlags.NONE
    workgroup_count_ref: BufferRef | None = None


class CollectiveCommand(NamedTuple):
    channel: object
    op: int
    param: int
    send: BufferRef
    recv: BufferRef
    element_count: int


class DebugGroupCommand(NamedTuple):
    label: str | None  # None closes the innermost group


class AdviseBufferCommand(NamedTuple):
    target: BufferRef
    flags: int
    arg0: int
    arg1: int


class CommandBufferState(enum.Enum):
    INITIAL = "initial"
    RECORDING = "recording"
    EXECUTABLE = "executable"
    CLOSED = "closed"


def _pattern(pattern: int | bytes, pattern_length: int) -> bytes:
    if pattern_length not in (1, 2, 4):
        raise HalError(f"fill patterns must be 1, 2 or 4 bytes (pattern_length={pattern_length})",
                       status="INVALID_ARGUMENT")
    if isinstance(pattern, (bytes, bytearray)):
        if len(pattern) != pattern_length:
            raise HalError("fill pattern bytes do not match pattern_length", status="INVALID_ARGUMENT")
        return bytes(pattern)
    return (int(pattern) & ((1 << (8 * pattern_length)) - 1)).to_bytes(pattern_length, "little")


class CommandBuffer:

    vm_type = "hal.command_buffer"  # its VM ref type (see vm/refs.type_matches)
    # A replay capture's recorder (replay/recorder.py), set by the recording device on the
    # command buffers it makes: each recording method then hands its call to `_replay.command`.
    _replay = None
    def __init__(self, device=None, mode: int = CommandBufferMode.ONE_SHOT,
                 categories: int = CommandCategory.ANY, queue_affinity: int = -1,
                 binding_capacity: int = 0):
        if binding_capacity < 0:
            raise HalError(f"invalid binding capacity {binding_capacity}", status="INVALID_ARGUMENT")
        self.device = device
        self.mode = mode
        self.categories = categories
        self.queue_affinity = normalize_queue_affinity(queue_affinity)
        self.binding_capacity = binding_capacity
        self.commands: list = []
        self.state = CommandBufferState.INITIAL
        self.execution_count = 0
        self._debug_depth = 0
        # A driver's replay form of the ended buffer, as (device, form): built on its first
        # execution, reused by every later one (see drivers/local/program.py).
        self.replay: tuple | None = None
        self.profile_id = 0  # numbered by the device that made it (Device.create_command_buffer)
        self.profile_plan = None  # (recorder, plan) of a profiled execution (hal/device.py)

    def __repr__(self) -> str:
        return (f"<CommandBuffer {self.state.value} {len(self.commands)} commands "
                f"mode={self.mode!r} categories={self.categories!r}>")

    @property
    def mode(self) -> CommandBufferMode:
        return self._mode

    @mode.setter
    def mode(self, value) -> None:
        self._mode = CommandBufferMode(value)
        self._validated = not int(self._mode) & _UNVALIDATED

    @property
    def categories(self) -> CommandCategory:
        return self._categories

    @categories.setter
    def categories(self, value) -> None:
        self._categories = CommandCategory(value)
        self._category_bits = int(self._categories)

    @property
    def validated(self) -> bool:
        return self._validated

    # -- state machine --------------------------------------------------------------------------
    def begin(self) -> None:
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "begin", ())
        if self.state is not CommandBufferState.INITIAL:
            raise HalError(f"command buffer cannot begin recording in the {self.state.value} "
                           f"state", status="FAILED_PRECONDITION")
        self.state = CommandBufferState.RECORDING

    def end(self) -> None:
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "end", ())
        self._require_recording()
        if self._debug_depth:
            raise HalError(f"command buffer ended with {self._debug_depth} open debug groups",
                           status="FAILED_PRECONDITION")
        self.state = CommandBufferState.EXECUTABLE

    finalize = end

    def close(self) -> None:
        self.commands = []
        self.replay = None
        self.state = CommandBufferState.CLOSED

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _require_recording(self) -> None:
        if self.state is not CommandBufferState.RECORDING:
            raise HalError("command buffer is not in a recording state; all recording must happen "
                           "between a begin/end pair", status="FAILED_PRECONDITION")

    def _require_category(self, category: int) -> None:
        if self.state is not CommandBufferState.RECORDING:
            self._require_recording()
        if self._validated and category & ~self._category_bits:
            category = CommandCategory(category)
            raise HalError(f"operation requires categories {category!r} but command buffer only "
                           f"supports {self.categories!r}", status="FAILED_PRECONDITION")

    def _validate_ref(self, ref: BufferRef, usage: int, alignment: int = 1) -> None:
        if not self._validated:
            return
        if ref.offset < 0 or (ref.length < 0 and ref.length != WHOLE_BUFFER):
            raise HalError(f"invalid buffer range offset={ref.offset} length={ref.length}",
                           status="INVALID_ARGUMENT")
        if ref.buffer is None:
            if not 0 <= ref.slot < self.binding_capacity:
                raise HalError(f"binding table slot {ref.slot} out of range; command buffer "
                               f"capacity is {self.binding_capacity}", status="OUT_OF_RANGE")
        else:
            ref.buffer.validate_memory_type(_DEVICE_VISIBLE)
            ref.buffer.validate_usage(int(usage))
            ref.buffer.validate_range(ref.offset, ref.length)
        if alignment > 1 and ref.offset % alignment:
            raise HalError(f"buffer offset {ref.offset} does not meet the required alignment of "
                           f"{alignment}", status="INVALID_ARGUMENT")

    def _record(self, command) -> None:
        self.commands.append(command)

    # -- commands -------------------------------------------------------------------------------
    def execution_barrier(self, source_stage_mask: int, target_stage_mask: int, flags: int = 0,
                          ) -> None:
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "execution_barrier", (source_stage_mask, target_stage_mask, flags))
        self._require_category(_CATEGORY_NONE)
        self._record(ExecutionBarrierCommand(_stage(source_stage_mask),
                                             _stage(target_stage_mask), flags))

    def begin_debug_group(self, label: str) -> None:
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "begin_debug_group", (label,))
        self._require_recording()
        self._debug_depth += 1
        self._record(DebugGroupCommand(label))

    def end_debug_group(self) -> None:
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "end_debug_group", ())
        self._require_recording()
        if not self._debug_depth:
            raise HalError("no debug group is open", status="FAILED_PRECONDITION")
        self._debug_depth -= 1
        self._record(DebugGroupCommand(None))

    def advise_buffer(self, target: BufferRef, flags: int = 0, arg0: int = 0, arg1: int = 0) -> None:
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "advise_buffer", (target, flags, arg0, arg1))
        self._require_category(_CATEGORY_NONE)
        self._record(AdviseBufferCommand(target, flags, arg0, arg1))

    def fill_buffer(self, target: BufferRef, pattern: int | bytes, pattern_length: int,
                    flags: int = 0) -> None:
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "fill_buffer", (target, pattern, pattern_length, flags))
        self._require_category(_CATEGORY_TRANSFER)
        data = _pattern(pattern, pattern_length)
        if self._validated:
            length = target.length
            if target.offset % pattern_length or (length != WHOLE_BUFFER and length % pattern_length):
                raise HalError(f"binding offset and/or length do not match the required alignment "
                               f"of one pattern element (offset={target.offset}, length={length}, "
                               f"pattern_length={pattern_length})", status="INVALID_ARGUMENT")
            self._validate_ref(target, _USAGE_TRANSFER_TARGET, pattern_length)
        self._record(FillCommand(target, data, flags))

    def update_buffer(self, source, source_offset: int, target: BufferRef, flags: int = 0) -> None:
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "update_buffer", (source, source_offset, target, flags))
        self._require_category(_CATEGORY_TRANSFER)
        source = memoryview(source).cast("B")
        length = target.length
        if length == WHOLE_BUFFER:
            length = len(source) - source_offset
        if source_offset < 0 or length < 0 or source_offset + length > len(source):
            raise HalError(f"update source range [{source_offset}, {source_offset + length}) is "
                           f"outside the {len(source)}-byte host buffer", status="OUT_OF_RANGE")
        if self._validated and length > MAX_UPDATE_BYTES:
            raise HalError(f"update of {length} bytes exceeds the {MAX_UPDATE_BYTES}-byte limit",
                           status="INVALID_ARGUMENT")
        target = target._replace(length=length)
        self._validate_ref(target, _USAGE_TRANSFER_TARGET)
        self._record(UpdateCommand(bytes(source[source_offset:source_offset + length]), target,
                                   flags))

    def copy_buffer(self, source: BufferRef, target: BufferRef, flags: int = 0) -> None:
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "copy_buffer", (source, target, flags))
        self._require_category(_CATEGORY_TRANSFER)
        if self._validated:
            if source.length != target.length:
                raise HalError(f"copy spans between source and target must match (source_length="
                               f"{source.length}, target_length={target.length})",
                               status="INVALID_ARGUMENT")
            self._validate_ref(source, _USAGE_TRANSFER_SOURCE)
            self._validate_ref(target, _USAGE_TRANSFER_TARGET)
            if source.buffer is not None and target.buffer is not None:
                length = source.buffer.validate_range(source.offset, source.length)
                if buffers_overlap(source.buffer, source.offset, length, target.buffer,
                                   target.offset, length):
                    raise HalError("source and target ranges overlap within the same buffer",
                                   status="INVALID_ARGUMENT")
        self._record(CopyCommand(source, target, flags))

    def _validate_dispatch(self, executable, entry_point: int, constants: bytes,
                           bindings: tuple[BufferRef, ...]) -> None:
        if not self._validated:
            return
        count = getattr(executable, "export_count", None)
        if count is not None and not 0 <= entry_point < count:
            raise HalError(f"entry point ordinal {entry_point} out of range; executable has "
                           f"{count} exports", status="INVALID_ARGUMENT")
        if len(constants) % 4:
            raise HalError(f"invalid constant data length {len(constants)}, must be 4-byte aligned",
                           status="INVALID_ARGUMENT")
        for ref in bindings:
            self._validate_ref(ref, _USAGE_DISPATCH_STORAGE_READ)

    def dispatch(self, executable, entry_point: int, workgroup_count, constants=b"",
                 bindings=(), flags: int = 0) -> None:
        """Record a launch of `entry_point` over workgroup_count = (x, y, z) workgroups.

        `constants` are bytes or a sequence of u32/i32 values (compiled code passes i32s).
        """
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "dispatch", (executable, entry_point, workgroup_count, constants, bindings, flags))
        self._require_category(_CATEGORY_DISPATCH)
        constants = _constant_bytes(constants)
        bindings = tuple(bindings)
        if workgroup_count.__class__ is not tuple or len(workgroup_count) != 3 or not (
                workgroup_count[0].__class__ is workgroup_count[1].__class__
                is workgroup_count[2].__class__ is int):
            workgroup_count = tuple(int(c) for c in workgroup_count)
        if len(workgroup_count) != 3 or any(c < 0 or c > 0xFFFFFFFF for c in workgroup_count):
            raise HalError(f"invalid workgroup count {workgroup_count}", status="INVALID_ARGUMENT")
        self._validate_dispatch(executable, entry_point, constants, bindings)
        self._record(DispatchCommand(executable, entry_point, workgroup_count, constants, bindings,
                                     _dispatch_flags(flags)))

    def dispatch_indirect(self, executable, entry_point: int, workgroup_count_ref: BufferRef,
                          constants=b"", bindings=(), flags: int = 0) -> None:
        """Record a launch whose 3 x u32 workgroup counts are read from a buffer at execute time."""
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "dispatch_indirect", (executable, entry_point, workgroup_count_ref, constants, bindings, flags))
        self._require_category(_CATEGORY_DISPATCH)
        constants = _constant_bytes(constants)
        bindings = tuple(bindings)
        if self._validated:
            if workgroup_count_ref.offset % 4:
                raise HalError(f"workgroup count offset {workgroup_count_ref.offset} is not 4-byte "
                               f"aligned", status="INVALID_ARGUMENT")
            self._validate_ref(workgroup_count_ref._replace(length=12),
                               BufferUsage.DISPATCH_INDIRECT_PARAMETERS)
        self._validate_dispatch(executable, entry_point, constants, bindings)
        flags = DispatchFlags(flags)
        if not flags & (DispatchFlags.STATIC_INDIRECT_PARAMETERS
                        | DispatchFlags.DYNAMIC_INDIRECT_PARAMETERS):
            flags |= DispatchFlags.DYNAMIC_INDIRECT_PARAMETERS
        self._record(DispatchCommand(executable, entry_point, None, constants, bindings, flags,
                                     workgroup_count_ref))

    def collective(self, channel, op: int, param: int, send: BufferRef, recv: BufferRef,
                   element_count: int) -> None:
        if self._replay is not None:  # a replay capture records the call
            return self._replay.command(self, "collective", (channel, op, param, send, recv, element_count))
        self._require_category(_CATEGORY_DISPATCH)
        unpack_collective_op(op)  # validates kind/reduction/element type
        self._record(CollectiveCommand(channel, op, param, send, recv, element_count))

    # -- execution helpers ----------------------------------------------------------------------
    def validate_submission(self, binding_table=()) -> None:
        """Checks at queue-execute time: ended, one-shot not reused, table large enough."""
        if self.state is not CommandBufferState.EXECUTABLE:
            raise HalError(f"command buffer must be ended before submission (state "
                           f"{self.state.value})", status="FAILED_PRECONDITION")
        if self.execution_count and int(self.mode) & _ONE_SHOT:
            raise HalError("one-shot command buffer was already submitted",
                           status="FAILED_PRECONDITION")
        if len(binding_table) < self.binding_capacity:
            raise HalError(f"binding table has {len(binding_table)} entries but the command buffer "
                           f"needs {self.binding_capacity}", status="INVALID_ARGUMENT")


def _constant_bytes(constants) -> bytes:
    if isinstance(constants, (bytes, bytearray, memoryview)):
        return bytes(constants)
    return b"".join((int(c) & 0xFFFFFFFF).to_bytes(4, "little") for c in constants)


# --- the execute-time dispatch checks every driver makes (IREE's messages) -----------------------


def check_executable(executable, kind: type, device: str) -> None:
    """A dispatch's executable must be one this driver's device loaded."""
    if not isinstance(executable, kind):
        raise HalError(f"executable {executable!r} was not loaded by {device} device",
                       status="INVALID_ARGUMENT")


def check_constant_count(expected: int, constant_bytes: int) -> None:
    """`constant_bytes` of push constants must be `expected` u32s."""
    if constant_bytes != 4 * expected:
        raise HalError(f"constant count mismatch, expected {expected} but was provided "
                       f"{constant_bytes // 4}", status="INVALID_ARGUMENT")


def check_binding_count(expected: int, provided: int) -> None:
    if provided != expected:
        raise HalError(f"binding count mismatch, expected {expected} but was provided "
                       f"{provided}", status="INVALID_ARGUMENT")


def workgroup_count_source(ref: BufferRef, binding_table=()) -> tuple[Buffer, int]:
    """(buffer, offset) of an indirect dispatch's three u32 workgroup counts."""
    buffer, offset, length = resolve_ref(ref, binding_table)
    if length < 12:
        raise HalError(f"workgroup count buffer range of {length} bytes is smaller than 3 x u32",
                       status="OUT_OF_RANGE")
    return buffer, offset


def resolve_ref(ref: BufferRef, binding_table=()) -> tuple[Buffer, int, int]:
    """(buffer, offset, length) for a reference; length -1 is resolved against the buffer/slot."""
    if ref.buffer is not None:
        length = ref.buffer.validate_range(ref.offset, ref.length)
        return ref.buffer, ref.offset, length
    if not 0 <= ref.slot < len(binding_table):
        raise HalError(f"binding table slot {ref.slot} out of range; table has "
                       f"{len(binding_table)} entries", status="OUT_OF_RANGE")
    binding = binding_table[ref.slot]
    # A Binding, or the VM's (buffer, offset, length) tuple as hal.device.queue.execute.indirect
    # passes it.
    buffer, offset, slot_size = binding
    if buffer is None:
        raise HalError(f"binding table slot {ref.slot} requires a buffer but none was provided",
                       status="INVALID_ARGUMENT")
    slot_length = buffer.validate_range(offset, slot_size)
    if ref.offset > slot_length:
        raise HalError(f"offset {ref.offset} is outside binding slot {ref.slot} of {slot_length} "
                       f"bytes", status="OUT_OF_RANGE")
    length = slot_length - ref.offset if ref.length == WHOLE_BUFFER else ref.length
    if ref.offset + length > slot_length:
        raise HalError(f"range [{ref.offset}, {ref.offset + length}) is outside binding slot "
                       f"{ref.slot} of {slot_length} bytes", status="OUT_OF_RANGE")
    return buffer, offset + ref.offset, length


def resolve_copy(command: CopyCommand, binding_table=()) -> tuple[Buffer, int, Buffer, int, int]:
    """(source, source offset, target, target offset, length) of a recorded copy, whose two
    resolved spans must be the same length."""
    source, source_offset, length = resolve_ref(command.source, binding_table)
    target, target_offset, target_length = resolve_ref(command.target, binding_table)
    if target_length != length:
        raise HalError("copy spans between source and target must match",
                       status="INVALID_ARGUMENT")
    return source, source_offset, target, target_offset, length

"""Replay of HAL commands as AQL packets: what one host-queue submission of the device emits.

`SubmissionPlan` turns queue operations and the commands of a recorded
`hal.command_buffer.CommandBuffer` into the steps of one `HostQueue.submit` (contract K2): every
step is one AQL kernel dispatch (or an execution barrier, which emits nothing and gives the next
packet the barrier bit). A reusable command buffer is never re-recorded: each `queue_execute`
replays its command list into a new SubmissionPlan, so the packets are emitted again with the
binding table of that submission. Per command:
  - dispatch: one dispatch packet; `hal_kernargs` (reference §6.1) in the kernarg ring; grid =
    workgroup count x the export's workgroup size;
  - indirect dispatch: the same, with the workgroup count read on the host from its host-visible
    buffer when the packets are built (after waits resolved on the host; a count written by work
    the queue waits for on the device is not seen); counts in device-only memory: UNIMPLEMENTED;
  - fill / copy: one device-library blit (`blit.plan_fill` / `plan_copy`);
  - update: the data copied into the kernarg ring, then a copy blit from there; data above
    INLINE_UPDATE_MAX bytes goes to a staging block of the host fine pool instead (the kernarg
    ring is sized for kernargs), closed by a `completions` callback when the submission is done;
  - execution barrier: `submission.barrier()`, the next packet waits for all before it;
  - debug groups, advise: nothing; collectives: UNIMPLEMENTED.

Everything that can fail on the host (binding resolution, ranges, kernel lookup, kernarg packing)
happens when the SubmissionPlan is made, before anything is submitted, so argument errors leave no
half-built submission. Only the kernarg-ring addresses (update sources, kernarg blocks) and the
indirect workgroup counts are filled in by `build()`, which the queue calls once it has reserved
`packet_count` slots and `kernarg_bytes` of ring space. Dispatches with a zero workgroup count emit
no packet (HSA forbids empty grids). `retain` is every buffer and executable the packets touch,
kept alive by the queue until the submission completes.
Profiling: while a session records dispatch events the device sets `profile` (a
`drivers/amdgpu/profiling.SubmissionProfile`); each HAL dispatch then asks it, when its packet is
built, for a completion signal whose timestamps become that dispatch's event (blits are not
dispatch events). With `profile` None nothing of this runs.
Sources: IREE `host_queue_command_buffer.c`, `aql_block_processor.c`, `device/blit.c`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence

from amdgpu_cli.drivers.amdgpu import blit
from amdgpu_cli.drivers.amdgpu.allocator import device_address
from amdgpu_cli.drivers.amdgpu.executable import AmdgpuExecutable
from amdgpu_cli.drivers.amdgpu.kernarg_ring import BLOCK_SIZE  # the kernarg ring's allocation unit
from amdgpu_cli.drivers.amdgpu.kernargs import KernelInfo, hal_kernargs, kernarg_size
from amdgpu_cli.hal.buffer import Buffer, buffers_overlap
from amdgpu_cli.hal.command_buffer import (
    AdviseBufferCommand,
    CollectiveCommand,
    CommandBuffer,
    CopyCommand,
    DebugGroupCommand,
    DispatchCommand,
    ExecutionBarrierCommand,
    FillCommand,
    UpdateCommand,
    check_binding_count,
    check_constant_count,
    check_executable,
    resolve_copy,
    resolve_ref,
    workgroup_count_source,
)
from amdgpu_cli.hal.enums import BufferUsage, DispatchFlags, HalError, MemoryType

INLINE_UPDATE_MAX = 64 * 1024  # larger updates are staged outside the kernarg ring
_STAGING_TYPE = int(MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE)
_STAGING_USAGE = int(BufferUsage.TRANSFER | BufferUsage.MAPPING_SCOPED)
_U32_MAX = 0xFFFFFFFF
_HOST_VISIBLE = int(MemoryType.HOST_VISIBLE)
_CUSTOM_DIRECT_ARGUMENTS = int(DispatchFlags.CUSTOM_DIRECT_ARGUMENTS)


def _ring_bytes(size: int, alignment: int = 16) -> int:
    """Worst-case kernarg-ring bytes of one `submission.kernargs(size, alignment)` call."""
    return -(-max(size, 1) // BLOCK_SIZE) * BLOCK_SIZE + max(alignment, 16)


class SubmissionPlan:
    """The packets of one submission on one physical device, planned on the host."""

    def __init__(self, device_library, physical_device, allocator):
        self.library = device_library
        self.physical = physical_device
        self.allocator = allocator
        self.steps: list[Callable] = []
        self.packet_count = 0
        self.kernarg_bytes = 0
        self.retain: list = []
        self.completions: list[Callable[[], None]] = []  # run once the submission completed
        self.profile = None  # a SubmissionProfile while dispatch events are recorded
        self.submission = None  # the SubmissionProfile of any open session (ids for the device)

    # -- emitted steps ------------------------------------------------------------------------
    def _emit(self, submission, kernel: KernelInfo, kernargs: bytes, grid, workgroup,
              completion_signal: int = 0) -> None:
        address, view = submission.kernargs(len(kernargs), kernel.kernarg_segment_align)
        view[:len(kernargs)] = kernargs
        submission.dispatch(kernel.kernel_object, tuple(workgroup), tuple(grid),
                            kernel.private_segment_size, kernel.group_segment_size, address,
                            completion_signal=completion_signal)

    def _emit_blit(self, submission, launch: blit.BlitLaunch) -> None:
        kernel = self.library.kernel(self.physical.ordinal, launch.kernel)
        self._emit(submission, kernel, launch.kernargs, launch.grid_size, launch.workgroup_size)

    def _blit_budget(self, extra_kernarg_bytes: int = 0) -> None:
        self.packet_count += 1
        self.kernarg_bytes += _ring_bytes(blit.KERNARGS_SIZE) + extra_kernarg_bytes

    def _shape(self) -> dict:
        return {"compute_units": self.physical.compute_units,
                "wavefront_size": self.physical.wavefront_size}

    # -- operations ---------------------------------------------------------------------------
    def barrier(self) -> None:
        self.steps.append(lambda submission: submission.barrier())

    def fill(self, target: Buffer, offset: int, length: int, pattern: bytes) -> None:
        address = device_address(target, offset)
        launch = blit.plan_fill(address, length, int.from_bytes(pattern, "little"), len(pattern),
                                **self._shape())
        self.retain.append(target.root)
        self._blit_budget()
        self.steps.append(lambda submission: self._emit_blit(submission, launch))

    def copy(self, source: Buffer, source_offset: int, target: Buffer, target_offset: int,
             length: int) -> None:
        if buffers_overlap(source, source_offset, length, target, target_offset, length):
            raise HalError("source and target ranges of a copy overlap within the same buffer",
                           status="INVALID_ARGUMENT")
        launch = blit.plan_copy(device_address(source, source_offset),
                                device_address(target, target_offset), length, **self._shape())
        self.retain += [source.root, target.root]
        self._blit_budget()
        self.steps.append(lambda submission: self._emit_blit(submission, launch))

    def update(self, data: bytes, target: Buffer, target_offset: int) -> None:
        if len(data) > INLINE_UPDATE_MAX:
            staging = self.allocator.allocate(_STAGING_TYPE, _STAGING_USAGE, len(data),
                                              physical_ordinal=self.physical.ordinal)
            staging._storage_view()[:] = memoryview(data)
            self.copy(staging, 0, target, target_offset, len(data))
            self.completions.append(staging.close)
            return
        target_address = device_address(target, target_offset)
        self.retain.append(target.root)
        self._blit_budget(_ring_bytes(len(data)))

        def step(submission) -> None:
            source, view = submission.kernargs(max(len(data), 1), 16)
            view[:len(data)] = data
            self._emit_blit(submission, blit.plan_copy(source, target_address, len(data),
                                                       **self._shape()))
        self.steps.append(step)

    def dispatch(self, command: DispatchCommand, binding_table: Sequence,
                 command_index: int = _U32_MAX) -> None:
        executable = command.executable
        check_executable(executable, AmdgpuExecutable, "an amdgpu")
        if int(command.flags) & _CUSTOM_DIRECT_ARGUMENTS:
            raise HalError("custom direct dispatch arguments are not supported by the amdgpu "
                           "driver", status="UNIMPLEMENTED")
        kernel = executable.kernel(self.physical.ordinal, command.entry_point)
        addresses = []
        for ref in command.bindings:
            buffer, offset, _ = resolve_ref(ref, binding_table)
            addresses.append(device_address(buffer, offset))
            self.retain.append(buffer.root)
        constants = command.constants
        check_constant_count(kernel.constant_count, len(constants))
        check_binding_count(kernel.binding_count, len(addresses))
        self.retain.append(executable)
        self.packet_count += 1
        self.kernarg_bytes += _ring_bytes(kernarg_size(kernel), kernel.kernarg_segment_align)
        event = None
        if self.profile is not None:
            event = self.profile.dispatch(executable, command, command_index)
        if command.workgroup_count_ref is None:
            count = command.workgroup_count
            packed = self._pack(kernel, addresses, constants, count)
            if event is None:
                self.steps.append(lambda submission: self._dispatch_step(submission, kernel,
                                                                         packed, count))
            else:
                self.steps.append(lambda submission: self._dispatch_step(submission, kernel,
                                                                         packed, count, event))
            return
        read_count = self._indirect_count(command.workgroup_count_ref, binding_table)

        def step(submission) -> None:
            count = read_count()
            self._dispatch_step(submission, kernel,
                                self._pack(kernel, addresses, constants, count), count, event)
        self.steps.append(step)

    @staticmethod
    def _pack(kernel: KernelInfo, addresses, constants, count) -> bytes | None:
        """The kernargs of one dispatch, or None for an empty grid (no packet)."""
        if not all(count):
            return None
        for axis, (groups, size) in enumerate(zip(count, kernel.workgroup_size)):
            if groups * size > _U32_MAX:
                raise HalError(f"dispatch grid {'xyz'[axis]} of {groups} x {size} work-items "
                               "exceeds 2^32 - 1", status="OUT_OF_RANGE")
        return hal_kernargs(kernel, addresses, constants, count)

    def _dispatch_step(self, submission, kernel: KernelInfo, kernargs: bytes | None,
                       count, event=None) -> None:
        if kernargs is not None:
            grid = tuple(g * s for g, s in zip(count, kernel.workgroup_size))
            signal = 0 if event is None else event.issue(count)
            self._emit(submission, kernel, kernargs, grid, kernel.workgroup_size, signal)

    def _indirect_count(self, ref, binding_table) -> Callable[[], tuple[int, int, int]]:
        buffer, offset = workgroup_count_source(ref, binding_table)
        if not buffer.root._memory_type & _HOST_VISIBLE:
            raise HalError("indirect dispatch with workgroup counts in device-only memory is not "
                           "implemented by the amdgpu driver (the counts are read on the host)",
                           status="UNIMPLEMENTED")
        self.retain.append(buffer.root)
        return lambda: struct.unpack("<3I", buffer._bytes(offset, 12).tobytes())

    def record(self, command_buffer: CommandBuffer, binding_table: Sequence) -> None:
        """Plan every command of a recorded command buffer, in order."""
        for index, command in enumerate(command_buffer.commands):
            if isinstance(command, DispatchCommand):
                self.dispatch(command, binding_table, index)
            elif isinstance(command, FillCommand):
                buffer, offset, length = resolve_ref(command.target, binding_table)
                self.fill(buffer, offset, length, command.pattern)
            elif isinstance(command, CopyCommand):
                self.copy(*resolve_copy(command, binding_table))
            elif isinstance(command, UpdateCommand):
                target, offset, length = resolve_ref(command.target, binding_table)
                self.update(command.source[:length], target, offset)
            elif isinstance(command, ExecutionBarrierCommand):
                self.barrier()
            elif isinstance(command, CollectiveCommand):
                raise HalError("collectives are not supported by the amdgpu driver",
                               status="UNIMPLEMENTED")
            elif not isinstance(command, (DebugGroupCommand, AdviseBufferCommand)):
                raise HalError(f"unknown command {type(command).__name__}", status="INTERNAL")
        self.retain.append(command_buffer)

    # -- the queue's callback -----------------------------------------------------------------
    def build(self, submission) -> None:
        for step in self.steps:
            step(submission)

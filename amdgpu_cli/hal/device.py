"""Device: queues, an allocator, semaphores, command buffers and executables for one logical device.

`Device` is the ABC (what the VM's `hal` module calls); `HostQueueDevice` is a generic base that runs
every queue operation synchronously on the calling thread in submission order: wait on the wait
fence, perform the work on host-visible buffers, signal the signal fence. If the wait fence failed,
or the work fails, the signal fence is failed with that error and the error is raised. Argument
errors raise before anything is waited or signalled. Drivers with real queues override the queue_*
methods; host drivers override only `_dispatch`.
`query_i64(category, key)` returns (ok, value) with ok False for unknown keys (never raises),
matching hal.device.query.i64; the base answers `hal.device.id` glob patterns against `identifier`.
Lifetime: `close()` is idempotent; a device holds its allocator and executable cache.
Sources: IREE runtime/src/iree/hal/device.h, drivers/null/device.c, modules/hal/module.c.
"""

from __future__ import annotations

import abc
import fnmatch

from amdgpu_cli.hal.allocator import Allocator
from amdgpu_cli.hal.buffer import Buffer, fill_bytes
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
    _pattern,
    resolve_copy,
    resolve_ref,
)
from amdgpu_cli.hal.enums import HalError, MemoryAccess, normalize_queue_affinity
from amdgpu_cli.hal.executable import ExecutableCache
from amdgpu_cli.hal.fence import Fence
from amdgpu_cli.hal.semaphore import Semaphore


class Device(abc.ABC):

    vm_type = "hal.device"  # its VM ref type (see vm/refs.type_matches)
    identifier: str = "device"

    def __init__(self, identifier: str | None = None):
        if identifier is not None:
            self.identifier = identifier
        self._closed = False

    @property
    @abc.abstractmethod
    def allocator(self) -> Allocator: ...

    @abc.abstractmethod
    def create_executable_cache(self, identifier: str = "default") -> ExecutableCache: ...

    def query_i64(self, category: str, key: str) -> tuple[bool, int]:
        if category == "hal.device.id":
            return True, int(fnmatch.fnmatchcase(self.identifier, key))
        if category == "hal.executable.format":
            return True, int(self.create_executable_cache().can_prepare_format(key))
        return False, 0

    def create_semaphore(self, initial_value: int = 0) -> Semaphore:
        if initial_value == 0 and initial_value.__class__ is int:  # every hal.fence.create
            return Semaphore.at_zero(self)
        return Semaphore(initial_value, device=self)

    def create_command_buffer(self, mode: int, categories: int, queue_affinity: int = -1,
                              binding_capacity: int = 0) -> CommandBuffer:
        return CommandBuffer(self, mode, categories, queue_affinity, binding_capacity)

    # -- queue operations (wait fence, signal fence may be None) ----------------------------------
    @abc.abstractmethod
    def queue_alloca(self, queue_affinity, wait: Fence | None, signal: Fence | None,
                     memory_type: int, usage: int, byte_length: int, pool: int = 0,
                     flags: int = 0) -> Buffer: ...

    @abc.abstractmethod
    def queue_dealloca(self, queue_affinity, wait, signal, buffer: Buffer, flags: int = 0): ...

    @abc.abstractmethod
    def queue_fill(self, queue_affinity, wait, signal, target: Buffer, offset: int, length: int,
                   pattern: int | bytes, pattern_length: int, flags: int = 0): ...

    @abc.abstractmethod
    def queue_update(self, queue_affinity, wait, signal, source, source_offset: int,
                     target: Buffer, target_offset: int, length: int, flags: int = 0): ...

    @abc.abstractmethod
    def queue_copy(self, queue_affinity, wait, signal, source: Buffer, source_offset: int,
                   target: Buffer, target_offset: int, length: int, flags: int = 0): ...

    @abc.abstractmethod
    def queue_execute(self, queue_affinity, wait, signal, command_buffer: CommandBuffer | None,
                      binding_table=(), flags: int = 0): ...

    def queue_barrier(self, queue_affinity, wait, signal, flags: int = 0):
        self.queue_execute(queue_affinity, wait, signal, None, (), flags)

    def queue_flush(self, queue_affinity=-1) -> None:
        """Nothing is deferred by default."""

    def close(self) -> None:
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class HostQueueDevice(Device):
    """Runs queue work inline, in order, on host-visible buffers."""

    def __init__(self, identifier: str | None = None, *, allocator: Allocator | None = None):
        super().__init__(identifier)
        from amdgpu_cli.hal.allocator import HostAllocator
        self._allocator = allocator if allocator is not None else HostAllocator(self)

    @property
    def allocator(self) -> Allocator:
        return self._allocator

    def _submit(self, queue_affinity, wait: Fence | None, signal: Fence | None, work, *args):
        """Wait on `wait`, run `work(*args)` (None: nothing to do), signal `signal`; a failure
        fails `signal` and raises. Returns what `work` returned."""
        if queue_affinity.__class__ is not int:  # compiled code passes ints: nothing to check
            normalize_queue_affinity(queue_affinity)
        if self._closed:
            raise HalError("device is closed", status="FAILED_PRECONDITION")
        try:
            if wait is not None:
                wait.wait()
            result = work(*args) if work is not None else None
        except HalError as error:
            if signal is not None:
                signal.fail(error)
            raise
        if signal is not None:
            signal.signal()
        return result

    def queue_alloca(self, queue_affinity, wait, signal, memory_type, usage, byte_length, pool=0,
                     flags=0):
        if pool != 0:
            raise HalError(f"allocation pool {pool} is not supported", status="UNIMPLEMENTED")
        return self._submit(queue_affinity, wait, signal, self._allocator.allocate, memory_type,
                            usage, byte_length)

    def queue_dealloca(self, queue_affinity, wait, signal, buffer, flags=0):
        # The buffer object stays valid while referenced; its storage is released on close.
        return self._submit(queue_affinity, wait, signal, None)

    def queue_fill(self, queue_affinity, wait, signal, target, offset, length, pattern,
                   pattern_length, flags=0):
        data = _pattern(pattern, pattern_length) if not isinstance(pattern, bytes) else pattern
        cb = CommandBuffer(self)
        cb.begin()
        from amdgpu_cli.hal.command_buffer import BufferRef
        cb.fill_buffer(BufferRef.direct(target, offset, length), data, len(data), flags)
        cb.end()
        return self.queue_execute(queue_affinity, wait, signal, cb)

    def queue_update(self, queue_affinity, wait, signal, source, source_offset, target,
                     target_offset, length, flags=0):
        src = bytes(memoryview(source).cast("B")[source_offset:source_offset + length])
        if len(src) != length:
            raise HalError("update source range is outside the host buffer", status="OUT_OF_RANGE")
        target.validate_range(target_offset, length)
        return self._submit(queue_affinity, wait, signal, target.write, target_offset, src)

    def queue_copy(self, queue_affinity, wait, signal, source, source_offset, target,
                   target_offset, length, flags=0):
        from amdgpu_cli.hal.command_buffer import BufferRef
        cb = CommandBuffer(self)
        cb.begin()
        cb.copy_buffer(BufferRef.direct(source, source_offset, length),
                       BufferRef.direct(target, target_offset, length), flags)
        cb.end()
        return self.queue_execute(queue_affinity, wait, signal, cb)

    def queue_execute(self, queue_affinity, wait, signal, command_buffer, binding_table=(),
                      flags=0):
        binding_table = tuple(binding_table)
        if command_buffer is not None:
            command_buffer.validate_submission(binding_table)
            command_buffer.execution_count += 1
            return self._submit(queue_affinity, wait, signal, self._execute, command_buffer,
                                binding_table)
        return self._submit(queue_affinity, wait, signal, None)

    # -- command execution --------------------------------------------------------------------
    def _execute(self, command_buffer: CommandBuffer, binding_table) -> None:
        for command in command_buffer.commands:
            # Most frequent first: compiled command buffers are dispatches between barriers.
            if isinstance(command, DispatchCommand):
                self._dispatch(command, binding_table)
            elif isinstance(command, ExecutionBarrierCommand):
                pass  # inline execution is already ordered
            elif isinstance(command, FillCommand):
                buffer, offset, length = resolve_ref(command.target, binding_table)
                if offset % len(command.pattern) or length % len(command.pattern):
                    raise HalError("fill range is not aligned to the pattern length",
                                   status="INVALID_ARGUMENT")
                fill_bytes(buffer.map_bytes(MemoryAccess.WRITE, offset, length), command.pattern)
            elif isinstance(command, UpdateCommand):
                buffer, offset, length = resolve_ref(command.target, binding_table)
                buffer.write(offset, command.source[:length])
            elif isinstance(command, CopyCommand):
                src, src_offset, dst, dst_offset, length = resolve_copy(command, binding_table)
                dst.copy_from(src, src_offset, dst_offset, length)
            elif isinstance(command, CollectiveCommand):
                raise HalError("collectives are not supported on this device",
                               status="UNIMPLEMENTED")
            elif isinstance(command, (DebugGroupCommand, AdviseBufferCommand)):
                pass
            else:
                raise HalError(f"unknown command {type(command).__name__}", status="INTERNAL")

    def _dispatch(self, command: DispatchCommand, binding_table) -> None:
        raise HalError(f"device '{self.identifier}' cannot run dispatches", status="UNIMPLEMENTED")

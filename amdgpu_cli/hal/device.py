"""Device: queues, an allocator, semaphores, command buffers and executables for one logical device.

`Device` is the ABC (what the VM's `hal` module calls); `HostQueueDevice` is a generic base that runs
every queue operation synchronously on the calling thread in submission order: wait on the wait
fence, perform the work on host-visible buffers, signal the signal fence. If the wait fence failed,
or the work fails, the signal fence is failed with that error and the error is raised. Argument
errors raise before anything is waited or signalled. Drivers with real queues override the queue_*
methods; host drivers override only `_dispatch`.
`query_i64(category, key)` returns (ok, value) with ok False for unknown keys (never raises),
matching hal.device.query.i64; the base answers `hal.device.id` glob patterns against `identifier`.
Profiling (hal/profiling.py): `profiling_check(options)` says whether the device can record what
is asked (raising IREE's error when not), `profiling_begin(options, sink)` starts a session,
`profiling_flush()` / `profiling_end()`. `HostQueueDevice` records what IREE's local drivers do
for every queue operation: a queue event (submission ids from 1, wait/signal counts, the
dependency strategy it met), a host-execution span (with one span per dispatch of an executed
command buffer: tile count and tile time), memory events for queue allocations, executable and
command-buffer metadata at first use. A profiled command buffer runs as one natively timed call
where the device can (`_timed_program`), else command by command so each dispatch is timed.
Subclasses choose the flavour (`_profile_*` attributes).
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
from amdgpu_cli.hal.enums import (CommandBufferMode, HalError, MemoryAccess,
                                  normalize_queue_affinity)
from amdgpu_cli.hal.executable import ExecutableCache
from amdgpu_cli.hal.fence import Fence
from amdgpu_cli.hal.semaphore import Semaphore
from amdgpu_cli.hal import profiling as _prof
from amdgpu_cli.hal.profiling import Op, now_ns

_QUEUE_EVENTS = _prof.Family.QUEUE_EVENTS
_HOST_EXECUTION = _prof.Family.HOST_EXECUTION
_QUEUE_EVENT_SIZE = _prof.QUEUE_EVENT_SIZE
_HOST_EXECUTION_EVENT_SIZE = _prof.HOST_EXECUTION_EVENT_SIZE
_U32_MAX = _prof.U32_MAX
_NO_GRID = (0, 0, 0)


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
        command_buffer = CommandBuffer(self, mode, categories, queue_affinity, binding_capacity)
        # Profile ids count the device's command buffers from 1, whether a capture is open or
        # not (IREE's local devices number them at creation).
        self._command_buffer_count = command_buffer.profile_id = \
            getattr(self, "_command_buffer_count", 0) + 1
        return command_buffer

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

    def queue_read_file(self, queue_affinity, wait, signal, source, source_offset: int,
                        target: Buffer, target_offset: int, length: int, flags: int = 0):
        """A queue read of `length` bytes of a file (`source.read_into(offset, view)` fills a
        writable view) at `source_offset` into `target`: here through one host staging copy
        and a queue update; devices whose queues run on the host read straight into the
        buffer's memory."""
        data = bytearray(length)
        source.read_into(source_offset, memoryview(data))
        self.queue_update(queue_affinity, wait, signal, data, 0, target, target_offset, length,
                          flags)

    def queue_flush(self, queue_affinity=-1) -> None:
        """Nothing is deferred by default."""

    # -- profiling (hal/profiling.py) -----------------------------------------------------------
    profiler = None  # the open profile session's Recorder, or None

    def profiling_check(self, options) -> None:
        """Raises HalError unless this device can record `options` (called before any output is
        opened)."""
        raise HalError(f"device '{self.identifier}' does not support HAL-native profiling",
                       status="UNIMPLEMENTED")

    def profiling_begin(self, options, sink) -> None:
        self.profiling_check(options)
        raise HalError("profiling is not implemented", status="UNIMPLEMENTED")

    def _profile_session_start(self) -> int:
        """Refuses a nested capture; the next session id (from 1 per device, as IREE's)."""
        if self.profiler is not None:
            raise HalError(f"cannot nest {self.identifier} profile captures",
                           status="FAILED_PRECONDITION")
        self._profile_sessions = getattr(self, "_profile_sessions", 0) + 1
        return self._profile_sessions

    def profiling_flush(self) -> None:
        recorder = self.profiler
        if recorder is not None:
            recorder.flush()

    def profiling_end(self, status_code: int = 0) -> None:
        """Ends the session (last flush, SESSION_END); raises the first sink error it met."""
        recorder, self.profiler = self.profiler, None
        if recorder is not None:
            recorder.end(status_code)
            if recorder.error is not None:
                raise HalError(f"writing the profile: {recorder.error}", status="DATA_LOSS")

    def close(self) -> None:
        if self.profiler is not None:
            try:
                self.profiling_end()
            except HalError:
                pass  # a profile that could not be written is reported by profiling_end's caller
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
        if self.profiler is not None:
            return self._profiled(Op.ALLOCA, queue_affinity, wait, signal, self._profiled_alloca,
                                  (memory_type, usage, byte_length), payload_length=byte_length)
        return self._submit(queue_affinity, wait, signal, self._alloca_buffer, memory_type,
                            usage, byte_length)

    def _alloca_buffer(self, memory_type, usage, byte_length):
        """The memory of a queue_alloca (a device may order it on its queue)."""
        return self._allocator.allocate(memory_type, usage, byte_length)

    def queue_dealloca(self, queue_affinity, wait, signal, buffer, flags=0):
        # The buffer object stays valid while referenced; its storage is released on close.
        if self.profiler is not None:
            # IREE's local-sync device orders a dealloca as a barrier and records it as one.
            return self._profiled(Op.BARRIER, queue_affinity, wait, signal, None, (),
                                  operation_count=0)
        return self._submit(queue_affinity, wait, signal, None)

    def queue_fill(self, queue_affinity, wait, signal, target, offset, length, pattern,
                   pattern_length, flags=0):
        data = _pattern(pattern, pattern_length) if not isinstance(pattern, bytes) else pattern
        cb = CommandBuffer(self)
        cb.begin()
        from amdgpu_cli.hal.command_buffer import BufferRef
        cb.fill_buffer(BufferRef.direct(target, offset, length), data, len(data), flags)
        cb.end()
        if self.profiler is not None:
            cb.validate_submission(())
            return self._profiled(Op.FILL, queue_affinity, wait, signal, self._execute, (cb, ()),
                                  payload_length=length)
        return self.queue_execute(queue_affinity, wait, signal, cb)

    def queue_update(self, queue_affinity, wait, signal, source, source_offset, target,
                     target_offset, length, flags=0):
        src = bytes(memoryview(source).cast("B")[source_offset:source_offset + length])
        if len(src) != length:
            raise HalError("update source range is outside the host buffer", status="OUT_OF_RANGE")
        target.validate_range(target_offset, length)
        if self.profiler is not None:
            return self._profiled(Op.UPDATE, queue_affinity, wait, signal, target.write,
                                  (target_offset, src), payload_length=length)
        return self._submit(queue_affinity, wait, signal, target.write, target_offset, src)

    def queue_read_file(self, queue_affinity, wait, signal, source, source_offset, target,
                        target_offset, length, flags=0):
        target.validate_range(target_offset, length)
        if self.profiler is not None:
            return self._profiled(Op.READ, queue_affinity, wait, signal, self._read_file,
                                  (source, source_offset, target, target_offset, length),
                                  payload_length=length)
        return self._submit(queue_affinity, wait, signal, self._read_file, source, source_offset,
                            target, target_offset, length)

    @staticmethod
    def _read_file(source, source_offset, target, target_offset, length) -> None:
        source.read_into(source_offset, target.map_bytes(MemoryAccess.WRITE, target_offset,
                                                         length))

    def queue_copy(self, queue_affinity, wait, signal, source, source_offset, target,
                   target_offset, length, flags=0):
        from amdgpu_cli.hal.command_buffer import BufferRef
        cb = CommandBuffer(self)
        cb.begin()
        cb.copy_buffer(BufferRef.direct(source, source_offset, length),
                       BufferRef.direct(target, target_offset, length), flags)
        cb.end()
        if self.profiler is not None:
            cb.validate_submission(())
            return self._profiled(Op.COPY, queue_affinity, wait, signal, self._execute, (cb, ()),
                                  payload_length=length)
        return self.queue_execute(queue_affinity, wait, signal, cb)

    def queue_execute(self, queue_affinity, wait, signal, command_buffer, binding_table=(),
                      flags=0):
        binding_table = tuple(binding_table)
        if command_buffer is not None:
            command_buffer.validate_submission(binding_table)
            command_buffer.execution_count += 1
            if self.profiler is not None:
                return self._profiled(Op.EXECUTE, queue_affinity, wait, signal,
                                      self._execute_profiled, (command_buffer, binding_table),
                                      command_buffer=command_buffer)
            return self._submit(queue_affinity, wait, signal, self._execute, command_buffer,
                                binding_table)
        if self.profiler is not None:
            return self._profiled(Op.BARRIER, queue_affinity, wait, signal, None, (),
                                  operation_count=0)
        return self._submit(queue_affinity, wait, signal, None)

    # -- profiling ------------------------------------------------------------------------------
    # What this device records, as IREE's local drivers do (see hal/profiling.py). Subclasses
    # choose the local-task flavour: command-buffer metadata and regions, command indices on
    # dispatch spans, an execute counted as its operations.
    _profile_families = (_prof.Family.QUEUE_EVENTS | _prof.Family.HOST_EXECUTION
                         | _prof.Family.MEMORY_EVENTS | _prof.Family.EXECUTABLE_METADATA
                         | _prof.Family.COMMAND_REGION_EVENTS)
    _profile_command_buffers = False  # command-buffers / command-operations metadata, regions
    _profile_worker_count = 1
    _profile_op = None  # the queue operation `_profiled` is recording (its work runs under it)

    def profiling_check(self, options) -> None:
        options.check_common()
        unsupported = options.families & ~self._profile_families
        if unsupported:
            raise HalError(f"unsupported local profiling data families 0x{unsupported:x}",
                           status="UNIMPLEMENTED")
        if not options.filter.empty:
            raise HalError("local profiling capture filters require producer-owned dispatch "
                           "events and no unfilterable local data families",
                           status="UNIMPLEMENTED")
        if options.counters:
            raise HalError("local profiling does not support counter set selections",
                           status="UNIMPLEMENTED")

    def profiling_begin(self, options, sink) -> None:
        self.profiling_check(options)
        recorder = _prof.Recorder(sink, self.identifier, options,
                                  session_id=self._profile_session_start())
        recorder.begin([(0, 1)], [(0, 0, 0)])
        self._profile_metadata = bool(options.families & (
            _prof.Family.HOST_EXECUTION | _prof.Family.EXECUTABLE_METADATA
            | _prof.Family.COMMAND_REGION_EVENTS))
        self.profiler = recorder

    def _profiled(self, op, queue_affinity, wait, signal, work, args, *, payload_length=0,
                  operation_count=1, command_buffer=None):
        """`_submit` with a queue event and a host-execution span around it."""
        if queue_affinity.__class__ is not int:  # refused before anything is recorded
            normalize_queue_affinity(queue_affinity)
        recorder = self.profiler
        families = recorder.families
        submission = recorder.next_submission()
        submitted = now_ns()
        wait_count = len(wait) if wait is not None else 0
        if not wait_count:
            strategy, queue_flags = _prof.Strategy.NONE, 0
        elif wait.is_reached():
            strategy, queue_flags = _prof.Strategy.INLINE, 0
        else:
            strategy, queue_flags = (_prof.Strategy.SOFTWARE_DEFER,
                                     _prof.QUEUE_FLAG_SOFTWARE_DEFERRED)
        command_buffer_id = 0
        host_flags = 0
        if command_buffer is not None:
            command_buffer_id, first = recorder.command_buffer_id(command_buffer)
            host_flags = _prof.HOST_FLAG_COMMAND_BUFFER
            if first and self._profile_metadata:
                self._profile_record_command_buffer(recorder, command_buffer, command_buffer_id)
            if self._profile_command_buffers:
                operation_count = len(command_buffer.commands)
        operation = _ProfiledOp(submission, command_buffer_id, wait_count, op, payload_length,
                                operation_count)
        self._profile_op = operation
        span = [submitted, submitted]  # start (= ready: the wait is met), end

        def timed(*work_args):
            span[0] = now_ns()
            result = work(*work_args) if work is not None else None
            span[1] = now_ns()
            return result

        status_code = 0
        try:
            return self._submit(queue_affinity, wait, signal, timed, *args)
        except HalError as error:
            span[1] = now_ns()
            status_code = int(error.code)
            raise
        finally:
            self._profile_op = None
            start, end = span
            # The records as lists in field order (profile.schema's QUEUE_EVENT and
            # HOST_EXECUTION_EVENT layouts, written out: this runs for every queue operation).
            if families & _QUEUE_EVENTS:
                recorder.append("queue-events", [
                    _QUEUE_EVENT_SIZE, op, queue_flags, strategy, 0, submitted, submission,
                    command_buffer_id, operation.allocation_id, 0, 0, 0, wait_count,
                    len(signal) if signal is not None else 0, 0, operation_count, payload_length,
                    start], _prof.QUEUE_EVENT_ID)
            if families & _HOST_EXECUTION:
                recorder.append("host-execution-events", [
                    _HOST_EXECUTION_EVENT_SIZE, op, host_flags, status_code, 0, submission,
                    command_buffer_id, 0, operation.allocation_id, 0, 0, 0, _U32_MAX, _U32_MAX,
                    _NO_GRID, _NO_GRID, start, end, payload_length, 0, 0, operation_count, 0],
                    _prof.HOST_EXECUTION_EVENT_ID)

    def _profiled_alloca(self, memory_type, usage, byte_length):
        """An alloca under profiling: the allocation and its memory event."""
        buffer = self._alloca_buffer(memory_type, usage, byte_length)
        recorder = self.profiler
        if recorder.families & _prof.Family.MEMORY_EVENTS:
            recorder.append("memory-events", _prof.memory_event(
                _prof.MemoryEvent.QUEUE_ALLOCA, flags=_prof.MEMORY_FLAG_QUEUE_OPERATION,
                host_time_ns=now_ns(), submission_id=self._profile_op.submission,
                memory_type=int(buffer.memory_type), buffer_usage=int(buffer.allowed_usage),
                length=byte_length, alignment=1), _prof.MEMORY_EVENT_ID)
        return buffer

    def _profile_executable(self, recorder, executable) -> int:
        """The profile id of an executable, its metadata written on first use."""
        if not recorder.executable_recorded(executable):
            functions = [(e.name, e.constant_count, e.binding_count, tuple(e.workgroup_size))
                         for e in executable.exports]
            return recorder.record_executable(executable, functions)
        return recorder.executable_id(executable)

    def _profile_record_command_buffer(self, recorder, command_buffer, command_buffer_id) -> None:
        """On first submission: the command buffer and its operations (local-task flavour), then
        the executables its dispatches use."""
        executables = []
        for command in command_buffer.commands:
            if isinstance(command, DispatchCommand) and command.executable not in executables:
                executables.append(command.executable)
        if self._profile_command_buffers:
            from amdgpu_cli.profile.writer import record
            mode = int(command_buffer.mode)
            if recorder.options.retains_command_buffer_metadata:
                mode |= int(CommandBufferMode.RETAIN_PROFILE_METADATA)
            recorder.write("command-buffers", record(
                "command-buffers", command_buffer_id=command_buffer_id, mode=mode,
                command_categories=int(command_buffer.categories),
                queue_affinity=int(command_buffer.queue_affinity) & 0xFFFFFFFFFFFFFFFF,
                physical_device_ordinal=0))
            operations = command_operation_records(command_buffer, command_buffer_id, recorder)
            recorder.write("command-operations", operations)
        for executable in executables:
            self._profile_executable(recorder, executable)

    def _execute_profiled(self, command_buffer: CommandBuffer, binding_table) -> None:
        """`_execute` with a host-execution span per dispatch and (local-task flavour) a
        command-region event per barrier-separated region: timed natively in one call where the
        device can (`_timed_program`), else command by command."""
        recorder = self.profiler
        families = recorder.families
        if not (families & _prof.Family.HOST_EXECUTION or (
                self._profile_command_buffers and families & _prof.Family.COMMAND_REGION_EVENTS)):
            self._execute(command_buffer, binding_table)  # nothing to record inside it
            return
        operation = self._profile_op
        timed = self._timed_program(command_buffer, binding_table)
        if timed is not None:
            self._record_timed(recorder, operation, command_buffer, timed)
            return
        spans = families & _prof.Family.HOST_EXECUTION
        regions = self._profile_command_buffers and families & _prof.Family.COMMAND_REGION_EVENTS
        indexed = self._profile_command_buffers
        region = None  # [number, start, dispatches, tiles, end]
        finished = []  # completed regions, written once the next one is known
        for index, command in enumerate(command_buffer.commands):
            if isinstance(command, ExecutionBarrierCommand):
                if region is not None:
                    region[4] = now_ns()
                    finished.append(region)
                    region = None
                continue
            if isinstance(command, (DebugGroupCommand, AdviseBufferCommand)):
                continue
            if regions and region is None:
                region = [len(finished), now_ns(), 0, 0, 0]
            if isinstance(command, DispatchCommand):
                start = now_ns()
                workgroup_count, tile_ns = self._dispatch_profiled(command, binding_table)
                end = now_ns()
                tiles = workgroup_count[0] * workgroup_count[1] * workgroup_count[2]
                if region is not None:
                    region[2] += 1
                    region[3] += tiles
                if spans:
                    executable = command.executable
                    flags = _prof.HOST_FLAG_COMMAND_BUFFER
                    if command.workgroup_count_ref is not None:
                        flags |= _prof.HOST_FLAG_INDIRECT_PARAMETERS
                    recorder.append("host-execution-events", _dispatch_span(
                        flags, operation, self._profile_executable(recorder, executable),
                        index if indexed else _U32_MAX, command.entry_point,
                        tuple(workgroup_count),
                        tuple(executable.exports[command.entry_point].workgroup_size), start,
                        end, tiles, end - start if tile_ns is None else tile_ns),
                        _prof.HOST_EXECUTION_EVENT_ID)
            else:
                self._run_command(command, binding_table)
                if region is not None:
                    region[3] += 1
        if region is not None:
            region[4] = now_ns()
            finished.append(region)
        self._record_regions(recorder, operation, finished)

    def _record_regions(self, recorder, operation, finished) -> None:
        """Command-region events of [number, start, dispatches, tiles, end] regions."""
        for i, (number, start, dispatches, tiles, end) in enumerate(finished):
            last = i == len(finished) - 1
            recorder.append("command-region-events", _prof.command_region_event(
                flags=_prof.REGION_FLAG_COMMAND_BUFFER | (
                    _prof.REGION_FLAG_TERMINAL if last else _prof.REGION_FLAG_HAS_NEXT_REGION),
                submission_id=operation.submission, command_buffer_id=operation.command_buffer_id,
                epoch=number + 1, index=number, dispatch_count=dispatches, tile_count=tiles,
                start_host_time_ns=start, end_host_time_ns=end,
                next_index=-1 if last else number + 1,
                next_tile_count=0 if last else finished[i + 1][3],
                worker_count=self._profile_worker_count), _prof.COMMAND_REGION_EVENT_ID)

    def _record_timed(self, recorder, operation, command_buffer, times) -> None:
        """The events of a natively timed execution (`times`: start, end, summed workgroup ns
        per dispatch, flat), from a plan of the command buffer made once per session: its
        dispatches' fixed fields and its regions' dispatch ranges."""
        plan = command_buffer.profile_plan
        if plan is None or plan[0] is not recorder:
            plan = command_buffer.profile_plan = (recorder, self._profile_plan(recorder,
                                                                                command_buffer))
        dispatches, regions = plan[1]
        if recorder.families & _HOST_EXECUTION:
            append = recorder.append
            for i, (index, executable_id, ordinal, count, size, tiles) in enumerate(dispatches):
                append("host-execution-events", _dispatch_span(
                    _prof.HOST_FLAG_COMMAND_BUFFER, operation, executable_id, index, ordinal,
                    count, size, times[3 * i], times[3 * i + 1], tiles, times[3 * i + 2]),
                    _prof.HOST_EXECUTION_EVENT_ID)
        if regions:
            self._record_regions(recorder, operation, [
                [number, times[3 * first], count, tiles, times[3 * last + 1]]
                for number, (first, last, count, tiles) in enumerate(regions)])

    def _profile_plan(self, recorder, command_buffer):
        """(dispatches, regions) of a command buffer whose commands are dispatches between
        barriers: per dispatch (command index, executable id, ordinal, workgroup count, size,
        tiles); per region (first dispatch, last dispatch, dispatch count, tiles)."""
        indexed = self._profile_command_buffers
        with_regions = indexed and recorder.families & _prof.Family.COMMAND_REGION_EVENTS
        dispatches, regions, current = [], [], None
        for index, command in enumerate(command_buffer.commands):
            if isinstance(command, ExecutionBarrierCommand):
                if current is not None:
                    regions.append(tuple(current))
                    current = None
                continue
            if not isinstance(command, DispatchCommand):
                continue
            count = tuple(command.workgroup_count)
            tiles = count[0] * count[1] * count[2]
            export = command.executable.exports[command.entry_point]
            dispatches.append((index if indexed else _U32_MAX,
                               self._profile_executable(recorder, command.executable),
                               command.entry_point, count, tuple(export.workgroup_size), tiles))
            if with_regions:
                number = len(dispatches) - 1
                if current is None:
                    current = [number, number, 0, 0]
                current[1] = number
                current[2] += 1
                current[3] += tiles
        if current is not None:
            regions.append(tuple(current))
        return dispatches, regions

    def _timed_program(self, command_buffer: CommandBuffer, binding_table):
        """Runs a whole command buffer natively, timing each dispatch: start, end and summed
        workgroup ns per dispatch, flat; None (nothing ran) to go command by command."""
        return None

    def _dispatch_profiled(self, command: DispatchCommand, binding_table):
        """Runs one dispatch; returns (its workgroup count, the summed time of its workgroups in
        ns, or None when only the span is known)."""
        self._dispatch(command, binding_table)
        return tuple(command.workgroup_count or (0, 0, 0)), None

    # -- command execution --------------------------------------------------------------------
    def _execute(self, command_buffer: CommandBuffer, binding_table) -> None:
        for command in command_buffer.commands:
            # Most frequent first: compiled command buffers are dispatches between barriers.
            if isinstance(command, DispatchCommand):
                self._dispatch(command, binding_table)
            elif isinstance(command, ExecutionBarrierCommand):
                pass  # inline execution is already ordered
            else:
                self._run_command(command, binding_table)

    def _run_command(self, command, binding_table) -> None:
        """One command other than a dispatch or a barrier (its callers handle those)."""
        if isinstance(command, FillCommand):
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


def _dispatch_span(flags, operation, executable_id, command_index, ordinal, workgroup_count,
                   workgroup_size, start, end, tiles, tile_ns) -> list:
    """A dispatch's host-execution record as a list in field order (profile.schema's
    HOST_EXECUTION_EVENT layout), under the queue operation being recorded."""
    return [_HOST_EXECUTION_EVENT_SIZE, Op.DISPATCH, flags, 0, 0, operation.submission,
            operation.command_buffer_id, executable_id, 0, 0, 0, 0, command_index, ordinal,
            workgroup_count, workgroup_size, start, end, 0, tiles, tile_ns, 1, 0]


class _ProfiledOp:
    """The queue operation being recorded (what its work adds events under)."""

    __slots__ = ("submission", "command_buffer_id", "wait_count", "allocation_id", "op",
                 "payload_length", "operation_count")

    def __init__(self, submission: int, command_buffer_id: int, wait_count: int, op: int = 0,
                 payload_length: int = 0, operation_count: int = 0):
        self.submission = submission
        self.command_buffer_id = command_buffer_id
        self.wait_count = wait_count
        self.allocation_id = 0
        self.op = op  # Op.*: what a device-side span of this operation is recorded as
        self.payload_length = payload_length
        self.operation_count = operation_count


def command_operation_records(command_buffer, command_buffer_id: int, recorder):
    """The command-operations records of a command buffer (linear: no block structure)."""
    import numpy as np

    from amdgpu_cli.profile.writer import records

    commands = command_buffer.commands
    ops = records("command-operations", len(commands), command_buffer_id=command_buffer_id,
                  command_index=np.arange(len(commands)))
    for i, command in enumerate(commands):
        row = ops[i]
        if isinstance(command, DispatchCommand):
            flags = 0
            if command.workgroup_count_ref is not None:
                flags |= 2  # INDIRECT_PARAMETERS
            if any(ref.buffer is None for ref in command.bindings):
                flags |= 4  # DYNAMIC_BINDINGS
            if any(ref.buffer is not None for ref in command.bindings):
                flags |= 8  # STATIC_BINDINGS
            export = command.executable.exports[command.entry_point]
            row["type"] = _prof.CommandOp.DISPATCH
            row["flags"] = flags
            row["executable_id"] = recorder.executable_id(command.executable)
            row["function_ordinal"] = command.entry_point
            row["binding_count"] = len(command.bindings)
            row["workgroup_count"] = tuple(command.workgroup_count or (0, 0, 0))
            row["workgroup_size"] = tuple(export.workgroup_size)
        elif isinstance(command, ExecutionBarrierCommand):
            row["type"] = _prof.CommandOp.BARRIER
            row["flags"] = 1  # EXECUTION_BARRIER
        elif isinstance(command, FillCommand):
            row["type"] = _prof.CommandOp.FILL
            _ref_fields(row, "target", command.target)
        elif isinstance(command, UpdateCommand):
            row["type"] = _prof.CommandOp.UPDATE
            _ref_fields(row, "target", command.target)
        elif isinstance(command, CopyCommand):
            row["type"] = _prof.CommandOp.COPY
            _ref_fields(row, "source", command.source)
            _ref_fields(row, "target", command.target)
            row["length"] = command.target.length if command.target.length >= 0 else 0
    return ops


def _ref_fields(row, side: str, ref) -> None:
    """A transfer's buffer reference: offset, length, binding slot when indirect, and the
    STATIC_BINDINGS (direct) / DYNAMIC_BINDINGS (binding table) flag."""
    row[f"{side}_offset"] = ref.offset
    if ref.length >= 0:
        row["length"] = ref.length
    if ref.buffer is None:
        row[f"{side}_ordinal"] = ref.slot
        row["flags"] |= 4  # DYNAMIC_BINDINGS
    else:
        row["flags"] |= 8  # STATIC_BINDINGS

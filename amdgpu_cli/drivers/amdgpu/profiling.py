"""amdgpu profiling: one profile session of a logical device, as IREE's amdgpu driver records it.

`check(options, libhsa)` refuses what this driver cannot record (before any file is touched);
`AmdgpuRecorder` (a `hal.profiling.Recorder`) is the session. What it writes (reference
ireeprof.md §5 "AMDGPU driver", IREE `logical_device.c`, `host_queue_profile.c`):

* at begin: `devices` (one per GPU, UUID flag set: the first 16 bytes of the HSA UUID string, as
  IREE), `queues` (two per GPU, stream = (pdo << 32) | queue), and a clock correlation when
  dispatch or device-queue events are asked for;
* at first use, whatever the families: `executables` (CODE_OBJECT_HASH: SipHash of the loaded
  image) and `executable-functions` (FUNCTION_HASH), `command-buffers` and `command-operations`
  (linear: no block structure); with executable-metadata also `executable-code-objects` (the exact
  image) and one `executable-code-object-loads` per GPU (LOAD_DELTA / LOAD_SIZE from the AMD
  loader extension);
* at every flush (and at end): `queue-events` (chunk `amdgpu.queue`, a 64Ki ring that drops and
  says TRUNCATED), `memory-events` (`amdgpu.memory`), then per queue with events one
  `dispatch-events` (`amdgpu.dispatch`), one `queue-device-events` (`amdgpu.queue_device`) and one
  `event-relationships` chunk (`amdgpu.relationships`: queue_submission -> dispatch_event and
  queue_submission -> queue_device_event, ids from 1 per chunk), each with the queue's pdo, queue
  ordinal and stream in the chunk header; then a clock correlation.

Device timing. Dispatch events: the queue's HSA profiler bit is on
(`hsa_amd_profiling_set_profiler_enabled`), each HAL dispatch packet (not blits) carries its own
completion signal from a pool, and once that signal reads 0 `hsa_amd_profiling_get_dispatch_time`
gives its start/end in the HSA system timestamp domain. Device queue events: IREE brackets each
queue operation with PM4 timestamp writes; HSA has no portable equivalent, so here a barrier-AND
no-op with its own signal opens the submission (after every earlier packet) and another closes it
(after every packet of the submission): start = the first's start, end = the second's end.
Clock correlations pair `hsa_system_get_info(TIMESTAMP)` (the domain of those ticks) with its
nanosecond value (host_cpu_timestamp_ns = tick * 1e9 / TIMESTAMP_FREQUENCY) and bracket it with
two IREE host-clock reads; flags DEVICE_TICK | HOST_CPU_TIMESTAMP | HOST_SYSTEM_TIMESTAMP |
HOST_TIME_BRACKET. IREE marks its samples DEVICE_TICK_UNALIGNED when device-queue events are on
(its PM4 ticks and KFD samples come from different counters); ours come from one clock, so they
are aligned and the fit holds for both families.

Capture filters (`--device_profiling_filter_*`) select the dispatches that get a timed event (a
glob over the export name, command buffer id, command index, GPU, queue); the others run untimed.

Events are collected at flush: completed signals are read and returned to the pool, the rest wait
for a later flush; `end` waits (bounded) for the queues to go idle first. Event ids count from 1
per queue (dispatch and device-queue separately), submission ids from 1 per session, as IREE.

Threading: `SubmissionProfile.dispatch` runs where the SubmissionPlan is planned (the caller),
`DispatchEvent.issue` / the markers where the packets are built (the caller, or a queue's
deferred-issue thread, under the queue's submission lock, so ids follow ring order); flush takes
each queue's pending list under its lock. Lifetime: pool signals are destroyed at end, except any
a packet may still write (work that never completed).
"""

from __future__ import annotations

import ctypes
import os
import threading

from amdgpu_cli.hal import profiling as _prof
from amdgpu_cli.hal.enums import HalError
from amdgpu_cli.hal.profiling import Family, Recorder, U32_MAX, now_ns
from hsa_ffi import HsaError
from hsa_ffi import constants as C

RING_CAPACITY = 1 << 16  # IREE's logical-device queue/memory event rings
RING_CHUNK_NAMES = {"queue-events": "amdgpu.queue", "memory-events": "amdgpu.memory"}
TIMESTAMP_FAMILIES = Family.DISPATCH_EVENTS | Family.DEVICE_QUEUE_EVENTS
CLOCK_FAMILIES = (Family.DISPATCH_EVENTS | Family.DEVICE_QUEUE_EVENTS | Family.COUNTER_SAMPLES
                  | Family.EXECUTABLE_TRACES | Family.COUNTER_RANGES)
AQLPROFILE_FAMILIES = Family.COUNTER_SAMPLES | Family.COUNTER_RANGES | Family.EXECUTABLE_TRACES
SUPPORTED = (Family.QUEUE_EVENTS | Family.DEVICE_QUEUE_EVENTS | Family.DISPATCH_EVENTS
             | Family.EXECUTABLE_METADATA | Family.MEMORY_EVENTS | Family.COMMAND_REGION_EVENTS)
AQLPROFILE_NAMES = ("libhsa-amd-aqlprofile64.so.1", "libhsa-amd-aqlprofile64.so")

# DEVICE_TICK | HOST_CPU_TIMESTAMP | HOST_SYSTEM_TIMESTAMP | HOST_TIME_BRACKET
CLOCK_FLAGS = 0x1 | 0x2 | 0x4 | 0x8
DISPATCH_FLAG_COMMAND_BUFFER = 1
DISPATCH_FLAG_INDIRECT_PARAMETERS = 2
END_IDLE_TIMEOUT_S = 60.0


def _unimplemented(message: str) -> HalError:
    return HalError(message, status="UNIMPLEMENTED")


def find_aqlprofile(libhsa) -> str | None:
    """IREE's aqlprofile search (`util/libaqlprofile.c`): IREE_HAL_AMDGPU_LIBAQLPROFILE_PATH, the
    folder of the loaded libhsa, then the bare names. The path that loads, or None."""
    candidates = []
    explicit = os.environ.get("IREE_HAL_AMDGPU_LIBAQLPROFILE_PATH")
    if explicit:
        candidates.append(explicit)
    folder = os.path.dirname(getattr(libhsa, "file", "") or "")
    if folder:
        candidates += [os.path.join(folder, name) for name in AQLPROFILE_NAMES]
    candidates += AQLPROFILE_NAMES
    for candidate in candidates:
        try:
            ctypes.CDLL(candidate)
        except OSError:
            continue
        return candidate
    return None


def check(options, libhsa) -> None:
    """Raises HalError unless the amdgpu driver can record `options` (IREE's order: the common
    checks, then per family)."""
    options.check_common()
    families = options.families
    if families & Family.HOST_EXECUTION:
        raise _unimplemented("AMDGPU profiling does not produce host-execution events (the "
                             "device executes queue work; use dispatch-events or "
                             "device-queue-events)")
    if families & AQLPROFILE_FAMILIES:
        found = find_aqlprofile(libhsa)
        names = ", ".join(_prof.family_names(families & AQLPROFILE_FAMILIES))
        if found is None:
            raise _unimplemented(f"AMDGPU profiling of {names} requires ROCm's aqlprofile "
                                 "library (libhsa-amd-aqlprofile64), which was not found; set "
                                 "IREE_HAL_AMDGPU_LIBAQLPROFILE_PATH or install it")
        raise _unimplemented(f"AMDGPU profiling of {names} through aqlprofile ({found}) is not "
                             "implemented by this driver")
    unsupported = families & ~SUPPORTED
    if unsupported:
        names = ", ".join(_prof.family_names(unsupported))
        raise _unimplemented(f"unsupported AMDGPU profiling data families 0x{unsupported:x} "
                             f"({names})")
    if families & TIMESTAMP_FAMILIES:
        for name in ("hsa_amd_profiling_set_profiler_enabled",
                     "hsa_amd_profiling_get_dispatch_time"):
            if not libhsa.has(name):
                raise _unimplemented(f"AMDGPU dispatch timing requires {name}, which the HSA "
                                     f"runtime {libhsa.path} does not export")


# ---- signals carrying timestamps --------------------------------------------------------------


class SignalPool:
    """Reusable HSA signals at value 1 (a packet's completion decrements it to 0)."""

    def __init__(self, libhsa):
        self.libhsa = libhsa
        self._free: list = []
        self._all: list = []
        self._lock = threading.Lock()

    def acquire(self):
        with self._lock:
            if self._free:
                return self._free.pop()
        out = self.libhsa.ffi.new("hsa_signal_t*")
        self.libhsa.call("hsa_amd_signal_create", 1, 0, self.libhsa.ffi.NULL, 0, out)
        with self._lock:
            self._all.append(out[0])
        return out[0]

    def release(self, signal) -> None:
        self.libhsa.lib.hsa_signal_store_relaxed(signal, 1)
        with self._lock:
            self._free.append(signal)

    def destroy(self, keep=()) -> None:
        """Destroys every signal except `keep` (handles a packet may still write)."""
        kept = {signal.handle for signal in keep}
        with self._lock:
            signals, self._all, self._free = self._all, [], []
        for signal in signals:
            if signal.handle not in kept:
                self.libhsa.call("hsa_signal_destroy", signal)


# ---- per queue ------------------------------------------------------------------------------


class QueueProfile:
    """One host queue's event state: ids, work whose timestamps are not read yet, and events
    read but not yet written."""

    def __init__(self, physical_ordinal: int, queue_ordinal: int, agent):
        self.physical_ordinal = physical_ordinal
        self.queue_ordinal = queue_ordinal
        self.stream_id = (physical_ordinal << 32) | queue_ordinal
        self.agent = agent  # hsa_agent_t of its GPU
        self.lock = threading.Lock()
        self.next_dispatch_id = 1
        self.next_device_id = 1
        self.pending: list = []  # DispatchEvent / DeviceSpan, in issue order
        self.dispatches: list = []  # dispatch-events tuples ready to write
        self.device_events: list = []  # queue-device-events tuples ready to write


class DispatchEvent:
    """One HAL dispatch of a submission: its fields known at planning, its id and signal at
    `issue` (when the packet is built)."""

    __slots__ = ("queue", "pool", "flags", "submission_id", "command_buffer_id", "executable_id",
                 "command_index", "function_ordinal", "workgroup_size", "workgroup_count",
                 "event_id", "signal")

    def __init__(self, queue: QueueProfile, pool: SignalPool, *, flags, submission_id,
                 command_buffer_id, executable_id, command_index, function_ordinal,
                 workgroup_size):
        self.queue, self.pool, self.flags = queue, pool, flags
        self.submission_id, self.command_buffer_id = submission_id, command_buffer_id
        self.executable_id, self.command_index = executable_id, command_index
        self.function_ordinal, self.workgroup_size = function_ordinal, workgroup_size
        self.workgroup_count = (0, 0, 0)
        self.event_id = 0
        self.signal = None

    def issue(self, workgroup_count) -> int:
        """The completion signal handle for this dispatch's packet (its event id taken now)."""
        signal = self.pool.acquire()
        queue = self.queue
        self.workgroup_count = tuple(workgroup_count)
        self.signal = signal
        with queue.lock:
            self.event_id = queue.next_dispatch_id
            queue.next_dispatch_id += 1
            queue.pending.append(self)
        return signal.handle

    def collect(self, libhsa, times) -> bool:
        """Reads the timestamps once the packet completed; True when collected."""
        if libhsa.lib.hsa_signal_load_scacquire(self.signal) != 0:
            return False
        libhsa.call("hsa_amd_profiling_get_dispatch_time", self.queue.agent, self.signal, times)
        self.queue.dispatches.append((
            88, self.flags, self.event_id, self.submission_id, self.command_buffer_id,
            self.executable_id, self.command_index, self.function_ordinal, self.workgroup_count,
            self.workgroup_size, times.start, times.end))
        self.pool.release(self.signal)
        return True

    def signals(self):
        return (self.signal,)


class DeviceSpan:
    """One queue operation's device span: two marker signals (see the module docstring)."""

    __slots__ = ("queue", "pool", "fields", "event_id", "start", "end")

    def __init__(self, queue: QueueProfile, pool: SignalPool, fields: tuple):
        self.queue, self.pool, self.fields = queue, pool, fields  # (op, submission, cb, alloc,
        self.event_id = 0                                         #  payload, operation_count)
        self.start = self.end = None

    def open(self, submission) -> None:
        self.start = self.pool.acquire()
        submission.marker(self.start.handle)

    def close(self, submission) -> None:
        self.end = self.pool.acquire()
        submission.marker(self.end.handle)
        queue = self.queue
        with queue.lock:
            self.event_id = queue.next_device_id
            queue.next_device_id += 1
            queue.pending.append(self)

    def collect(self, libhsa, times) -> bool:
        if libhsa.lib.hsa_signal_load_scacquire(self.end) != 0:
            return False
        libhsa.call("hsa_amd_profiling_get_dispatch_time", self.queue.agent, self.start, times)
        start = times.start
        libhsa.call("hsa_amd_profiling_get_dispatch_time", self.queue.agent, self.end, times)
        op, submission, command_buffer, allocation, payload, operations = self.fields
        queue = self.queue
        queue.device_events.append((
            96, op, 0, 0, self.event_id, submission, command_buffer, allocation, queue.stream_id,
            payload, queue.physical_ordinal, queue.queue_ordinal, operations, 0, start,
            times.end))
        self.pool.release(self.start)
        self.pool.release(self.end)
        return True

    def signals(self):
        return (self.start, self.end)


class SubmissionProfile:
    """What a SubmissionPlan asks while it plans one profiled submission (its `profile`)."""

    __slots__ = ("recorder", "queue", "submission_id", "command_buffer_id")

    def __init__(self, recorder: AmdgpuRecorder, queue: QueueProfile, submission_id: int,
                 command_buffer_id: int = 0):
        self.recorder, self.queue = recorder, queue
        self.submission_id, self.command_buffer_id = submission_id, command_buffer_id

    def dispatch(self, executable, command, command_index: int) -> DispatchEvent | None:
        recorder = self.recorder
        export = executable.exports[command.entry_point]
        capture_filter = recorder.options.filter
        if not capture_filter.empty and not capture_filter.matches(
                export.name, self.command_buffer_id,
                command_index if self.command_buffer_id else U32_MAX,
                self.queue.physical_ordinal, self.queue.queue_ordinal):
            return None  # not selected by --device_profiling_filter_*: no timing, no event
        flags = DISPATCH_FLAG_COMMAND_BUFFER if self.command_buffer_id else 0
        if command.workgroup_count_ref is not None:
            flags |= DISPATCH_FLAG_INDIRECT_PARAMETERS
        return DispatchEvent(
            self.queue, recorder.pool, flags=flags, submission_id=self.submission_id,
            command_buffer_id=self.command_buffer_id,
            executable_id=recorder.record_amdgpu_executable(executable),
            command_index=command_index if self.command_buffer_id else U32_MAX,
            function_ordinal=command.entry_point, workgroup_size=tuple(export.workgroup_size))


# ---- the session --------------------------------------------------------------------------


class AmdgpuRecorder(Recorder):
    """One profile session of an AmdgpuDevice (see the module docstring)."""

    ring_capacity = RING_CAPACITY

    def __init__(self, sink, device, options, *, session_id: int = 1):
        super().__init__(sink, device.identifier, options, session_id=session_id)
        self.device = device
        self.libhsa = device.libhsa
        self.pool = SignalPool(self.libhsa)
        self.dispatch_events = bool(options.families & Family.DISPATCH_EVENTS)
        self.device_queue_events = bool(options.families & Family.DEVICE_QUEUE_EVENTS)
        self.timestamps = bool(options.families & TIMESTAMP_FAMILIES)
        self.clocks = bool(options.families & CLOCK_FAMILIES)
        self.queue_events = bool(options.families & Family.QUEUE_EVENTS)
        self.code_objects = bool(options.families & Family.EXECUTABLE_METADATA)
        self._next_clock_sample = 1
        self._times = self.libhsa.ffi.new("hsa_amd_profiling_dispatch_time_t*")
        self._frequency = None
        physicals = device.physical_devices
        per_device = device.queues_per_device
        self.queues = [QueueProfile(p.ordinal, q, self.libhsa.ffi.new(
            "hsa_agent_t*", {"handle": p.agent.handle})[0])
            for p in physicals for q in range(per_device)]

    # -- chunk headers --------------------------------------------------------------------------
    def chunk_fields(self, suffix: str) -> dict:
        """The logical device's ring chunks are named by family (`amdgpu.queue`, ...)."""
        return {"name": RING_CHUNK_NAMES.get(suffix)}  # None: the producer name

    # -- begin / end ----------------------------------------------------------------------------
    def begin_amdgpu(self) -> None:
        device = self.device
        self.begin([(p.ordinal, device.queues_per_device, _uuid_bytes(p.uuid))
                    for p in device.physical_devices],
                   [(q.physical_ordinal, q.queue_ordinal, q.stream_id) for q in self.queues])
        if self.clocks:
            self._write_clocks()

    def end(self, status_code: int = 0) -> None:
        if self._ended:
            return
        try:
            self.device.wait_idle(END_IDLE_TIMEOUT_S)
        except HalError:
            pass  # a failed or stuck queue: its events stay uncollected
        try:
            super().end(status_code)
        finally:
            outstanding = [s for q in self.queues for event in q.pending
                           for s in event.signals()]
            self.pool.destroy(keep=outstanding)

    # -- flush ------------------------------------------------------------------------------------
    def flush(self) -> None:
        super().flush()  # the queue and memory event rings (named by chunk_fields)
        for queue in self.queues:
            dispatches, device_events = self._collect(queue)
            if not dispatches and not device_events:
                continue
            self.write_device_events("amdgpu", queue.physical_ordinal, queue.queue_ordinal,
                                     queue.stream_id, dispatches, device_events)
        if self.clocks:
            self._write_clocks()

    def _collect(self, queue: QueueProfile) -> tuple[list, list]:
        """Reads every completed pending event of `queue`; returns (dispatches, device events)
        ready to write, each in event-id order."""
        with queue.lock:
            pending, queue.pending = queue.pending, []
        waiting = [event for event in pending if not event.collect(self.libhsa, self._times)]
        with queue.lock:
            queue.pending[:0] = waiting
            dispatches, queue.dispatches = queue.dispatches, []
            device_events, queue.device_events = queue.device_events, []
        dispatches.sort(key=lambda e: e[2])
        device_events.sort(key=lambda e: e[4])
        return dispatches, device_events

    # -- clocks -----------------------------------------------------------------------------------
    def _system_u64(self, attribute: int) -> int:
        out = self.libhsa.ffi.new("uint64_t*")
        self.libhsa.call("hsa_system_get_info", attribute, out)
        return out[0]

    def _write_clocks(self) -> None:
        from amdgpu_cli.profile.writer import records

        if self._frequency is None:
            self._frequency = self._system_u64(C.HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY) or 1
        frequency = self._frequency
        rows = []
        for physical in self.device.physical_devices:
            begin = now_ns()
            tick = self._system_u64(C.HSA_SYSTEM_INFO_TIMESTAMP)
            end = now_ns()
            rows.append((physical.ordinal, self._next_clock_sample, tick,
                         tick * 1_000_000_000 // frequency, begin, end))
            self._next_clock_sample += 1
        self.write("clock-correlations", records(
            "clock-correlations", len(rows), flags=CLOCK_FLAGS,
            physical_device_ordinal=[r[0] for r in rows], sample_id=[r[1] for r in rows],
            device_tick=[r[2] for r in rows], host_cpu_timestamp_ns=[r[3] for r in rows],
            host_system_timestamp=[r[2] for r in rows], host_system_frequency_hz=frequency,
            host_time_begin_ns=[r[4] for r in rows], host_time_end_ns=[r[5] for r in rows]))

    # -- metadata -------------------------------------------------------------------------------
    def record_amdgpu_executable(self, executable) -> int:
        """The profile id of an amdgpu executable; on first use its executables and functions
        records (hashed), with executable-metadata also its code object and loads."""
        loaded = executable.loaded
        executable_id, first = self.record_image_executable(executable, loaded.image,
                                                            code_object=self.code_objects)
        if first and self.code_objects:
            from amdgpu_cli.profile.writer import records

            loads = self._loads(loaded.handle)
            if loads:
                self.write("executable-code-object-loads", records(
                    "executable-code-object-loads", len(loads),
                    physical_device_ordinal=[r[0] for r in loads], executable_id=executable_id,
                    code_object_id=executable_id, load_delta=[r[1] for r in loads],
                    load_size=[r[2] for r in loads]))
        return executable_id

    def _loads(self, executable_handle: int) -> list[tuple[int, int, int]]:
        """(pdo, load delta, load size) per GPU the executable is loaded on (AMD loader
        extension); empty when the runtime has no such table."""
        libhsa, ffi = self.libhsa, self.libhsa.ffi
        table = ffi.new("hsa_ven_amd_loader_1_01_pfn_t*")
        try:
            libhsa.call("hsa_system_get_major_extension_table", C.HSA_EXTENSION_AMD_LOADER, 1,
                        ffi.sizeof("hsa_ven_amd_loader_1_01_pfn_t"), table)
        except HsaError:
            return []
        ordinals = {p.agent.handle: p.ordinal for p in self.device.physical_devices}
        found: list = []
        get_info = table.hsa_ven_amd_loader_loaded_code_object_get_info

        def visit(_executable, loaded, _data):
            agent = ffi.new("hsa_agent_t*")
            delta = ffi.new("int64_t*")
            size = ffi.new("uint64_t*")
            if (get_info(loaded, C.HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT, agent)
                    or get_info(loaded, C.HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_DELTA,
                                delta)
                    or get_info(loaded, C.HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE,
                                size)):
                return 0
            if agent[0].handle in ordinals:
                found.append((ordinals[agent[0].handle], delta[0], size[0]))
            return 0

        callback = ffi.callback("hsa_status_t(hsa_executable_t, hsa_loaded_code_object_t, void*)",
                                visit, onerror=lambda *_: 0)
        status = table.hsa_ven_amd_loader_executable_iterate_loaded_code_objects(
            {"handle": executable_handle}, callback, ffi.NULL)
        if status not in (0, 1):
            return []
        return sorted(found)

    def record_command_buffer(self, command_buffer, physical_ordinal: int) -> int:
        """The profile id of a command buffer; on first submission its command-buffers and
        command-operations records."""
        command_buffer_id, first = self.command_buffer_id(command_buffer)
        if first:
            from amdgpu_cli.hal.command_buffer import DispatchCommand
            from amdgpu_cli.hal.device import command_operation_records
            from amdgpu_cli.hal.enums import CommandBufferMode
            from amdgpu_cli.profile.writer import record

            for command in command_buffer.commands:
                if isinstance(command, DispatchCommand):
                    self.record_amdgpu_executable(command.executable)
            mode = int(command_buffer.mode) | int(CommandBufferMode.RETAIN_PROFILE_METADATA)
            self.write("command-buffers", record(
                "command-buffers", command_buffer_id=command_buffer_id, mode=mode,
                command_categories=int(command_buffer.categories),
                queue_affinity=int(command_buffer.queue_affinity) & 0xFFFFFFFFFFFFFFFF,
                physical_device_ordinal=physical_ordinal))
            self.write("command-operations",
                       command_operation_records(command_buffer, command_buffer_id, self))
        return command_buffer_id

    # -- queue operations ---------------------------------------------------------------------
    def submit(self, host_queue, queue_index: int, waits, signals, build, *, op: int,
               kernarg_bytes: int = 0, packet_count: int = 0, retain=(),
               submission_id: int = 0, command_buffer_id: int = 0, payload_length: int = 0,
               operation_count: int = 1, allocation_id: int = 0) -> None:
        """`HostQueue.submit` with the operation's queue event and device span."""
        from amdgpu_cli.drivers.amdgpu.host_queue import DEFERRED

        queue = self.queues[queue_index]
        if not submission_id:
            submission_id = self.next_submission()
        ready = [0]
        inner = build
        if self.device_queue_events:
            span_fields = (op, submission_id, command_buffer_id, allocation_id, payload_length,
                           operation_count)
            packet_count += 2

            def build(submission):
                ready[0] = now_ns()
                span = DeviceSpan(queue, self.pool, span_fields)
                span.open(submission)
                inner(submission)
                span.close(submission)
        elif self.queue_events:
            def build(submission):
                ready[0] = now_ns()
                inner(submission)
        submitted = now_ns()
        met = host_queue.submit(waits, signals, build, kernarg_bytes=kernarg_bytes,
                                packet_count=packet_count, retain=retain)
        if not self.queue_events:
            return
        barriers = 0
        flags = 0
        if met == DEFERRED:
            strategy, flags = _prof.Strategy.SOFTWARE_DEFER, _prof.QUEUE_FLAG_SOFTWARE_DEFERRED
        elif not waits:
            strategy = _prof.Strategy.NONE
        elif met > 0:
            strategy, barriers = _prof.Strategy.DEVICE_BARRIER, met
        else:
            strategy = _prof.Strategy.INLINE
        self.append("queue-events", _prof.queue_event(
            op, flags=flags, strategy=strategy, host_time_ns=submitted,
            submission_id=submission_id, command_buffer_id=command_buffer_id,
            allocation_id=allocation_id, stream_id=queue.stream_id,
            physical_device_ordinal=queue.physical_ordinal, queue_ordinal=queue.queue_ordinal,
            wait_count=len(waits), signal_count=len(signals), barrier_count=barriers,
            operation_count=operation_count, payload_length=payload_length,
            ready_host_time_ns=ready[0]), _prof.QUEUE_EVENT_ID)

    def memory_event(self, event_type: int, queue_index: int, *, submission_id: int = 0,
                     allocation_id: int = 0, buffer=None, length: int = 0) -> None:
        if not self.families & Family.MEMORY_EVENTS:
            return
        queue = self.queues[queue_index]
        self.append("memory-events", _prof.memory_event(
            event_type, flags=_prof.MEMORY_FLAG_QUEUE_OPERATION, host_time_ns=now_ns(),
            allocation_id=allocation_id, submission_id=submission_id,
            physical_device_ordinal=queue.physical_ordinal, queue_ordinal=queue.queue_ordinal,
            memory_type=int(buffer.memory_type) if buffer is not None else 0,
            buffer_usage=int(buffer.allowed_usage) if buffer is not None else 0,
            length=length, alignment=1), _prof.MEMORY_EVENT_ID)

    # -- HSA switches -------------------------------------------------------------------------
    def enable_queue(self, host_queue, enable: bool = True) -> None:
        if self.timestamps:
            self.libhsa.call("hsa_amd_profiling_set_profiler_enabled", host_queue.hsa_queue,
                             1 if enable else 0)


def _uuid_bytes(uuid: str) -> bytes | None:
    """IREE's 16-byte physical device UUID: the first 16 bytes of HSA's UUID string
    ("GPU-<hex>"); None when the runtime reports none."""
    raw = (uuid or "").encode("ascii", "replace")
    if not raw:
        return None
    return raw[:16].ljust(16, b"\0")


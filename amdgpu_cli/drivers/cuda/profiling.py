"""cuda profiling: one profile session of a cuda device, timed on the GPU with CUDA events.

IREE 3.13.0's CUDA driver records nothing (`CUDA HAL-native profiling is not implemented`); this
session writes what IREE's AMDGPU driver writes for the same families, so every `iree-profile`
report reads it (reference ireeprof.md §2-§5):

* at begin: `devices` (one, its 16-byte CUDA UUID), `queues` (one: pdo 0, queue 0, stream 0) and,
  with dispatch or device-queue events, a clock correlation;
* at first use: `executables` (CODE_OBJECT_HASH: hash of the CDA1 image the driver loaded) and
  `executable-functions` (FUNCTION_HASH), `command-buffers` and `command-operations`; with
  executable-metadata also `executable-code-objects` (the exact CDA1 image; CUDA has no load
  address to report, so no `executable-code-object-loads`);
* at every flush and at end: `queue-events` (`cuda.queue`) and `memory-events` (`cuda.memory`)
  from the host (hal/device.py's `_profiled`), then `dispatch-events` (`cuda.dispatch`),
  `queue-device-events` (`cuda.queue_device`) and `event-relationships` (`cuda.relationships`)
  scoped to the queue, then a clock correlation.

Device ticks. CUDA exposes GPU time only as the distance between two recorded events
(`cuEventElapsedTime`, float milliseconds). Every event the session records goes on the
device's one stream, in order: an anchor at begin, a pair around each timed dispatch
(`--device_profiling_filter_*` select which), a pair around each queue operation with
device-queue-events, and one per clock sample. `Timeline.collect` walks them in record order,
each event's tick = the previous event's tick + round(elapsed(previous, event) in ns). A hop is
short (one dispatch, one gap), so the float's 24-bit mantissa costs under a nanosecond per hop up
to ~16 ms and durations are exact event differences; ticks are nanoseconds, offset so the
anchor's tick is its host time.

Clock correlations: an event recorded on the idle stream and waited for (`cuEventSynchronize`),
bracketed by two host-clock reads; device_tick = that event's tick, host_cpu_timestamp_ns = the
bracket's midpoint (IREE's host clock: CUDA has no driver CPU timestamp to pair with an event),
flags DEVICE_TICK | HOST_CPU_TIMESTAMP | HOST_TIME_BRACKET. iree-profile fits ns_per_tick from
the first and last samples (≈1.0 here); the bracket width is the uncertainty it reports.

Threading: events are recorded only inside the device's stream lock, where the device also
synchronizes the stream after each queue operation (its queue is synchronous), so a flush that
takes the same lock finds every recorded event complete. Events come from a pool and are
destroyed at end (after a last stream synchronize).
"""

from __future__ import annotations

from amdgpu_cli.drivers.cuda.cuda_ffi import CU_EVENT_DEFAULT, CudaError
from amdgpu_cli.hal import profiling as _prof
from amdgpu_cli.hal.enums import HalError
from amdgpu_cli.hal.profiling import Family, Recorder, U32_MAX, now_ns

SUPPORTED = (Family.QUEUE_EVENTS | Family.DISPATCH_EVENTS | Family.DEVICE_QUEUE_EVENTS
             | Family.EXECUTABLE_METADATA | Family.MEMORY_EVENTS)
CLOCK_FAMILIES = Family.DISPATCH_EVENTS | Family.DEVICE_QUEUE_EVENTS
RING_CHUNK_NAMES = {"queue-events": "cuda.queue", "memory-events": "cuda.memory"}
# DEVICE_TICK | HOST_CPU_TIMESTAMP | HOST_TIME_BRACKET
CLOCK_FLAGS = 0x1 | 0x2 | 0x8
DISPATCH_FLAG_COMMAND_BUFFER = 1
DISPATCH_EVENT_SIZE = 88
QUEUE_DEVICE_EVENT_SIZE = 96


def check(options) -> None:
    """Raises HalError unless a cuda device can record `options` (before any file is
    touched)."""
    options.check_common()
    families = options.families
    if families & Family.HOST_EXECUTION:
        raise HalError("CUDA profiling does not produce host-execution events (the device "
                       "executes queue work; use dispatch-events or device-queue-events)",
                       status="UNIMPLEMENTED")
    unsupported = families & ~SUPPORTED
    if unsupported:
        names = ", ".join(_prof.family_names(unsupported)) or f"0x{unsupported:x}"
        raise HalError(f"unsupported CUDA profiling data families: {names}",
                       status="UNIMPLEMENTED")
    if options.counters:
        raise HalError("CUDA profiling does not support counter set selections",
                       status="UNIMPLEMENTED")


class Timeline:
    """The session's CUDA events on one stream, in record order, turned into ticks (see the
    module docstring). `mark()` records one now and returns the cell its tick lands in."""

    def __init__(self, libcuda, stream):
        self.libcuda = libcuda
        self.stream = stream
        self._free: list = []
        self._all: list = []
        self._pending: list = []  # (event, cell) in record order
        self._previous = None  # the last collected event (the next hop's start)
        self._previous_tick = 0
        self._elapsed = libcuda.ffi.new("float*")

    def _event(self):
        if self._free:
            return self._free.pop()
        event = self.libcuda.out("CUevent", "cuEventCreate", CU_EVENT_DEFAULT)
        self._all.append(event)
        return event

    def mark(self) -> list:
        """Records an event now; its tick lands in the returned one-element list at the next
        collect."""
        event = self._event()
        try:
            self.libcuda.call("cuEventRecord", event, self.stream)
        except CudaError:
            self._free.append(event)
            raise
        cell = [None]
        self._pending.append((event, cell))
        return cell

    def sample(self) -> tuple[list, int, int]:
        """A mark on the idle stream, waited for: (its tick cell, host time just before the
        record, host time once it completed)."""
        event = self._event()
        lib = self.libcuda
        begin = now_ns()
        try:
            lib.call("cuEventRecord", event, self.stream)
            lib.call("cuEventSynchronize", event)
        except CudaError:
            self._free.append(event)
            raise
        end = now_ns()
        cell = [None]
        self._pending.append((event, cell))
        return cell, begin, end

    def anchor(self, tick: int) -> None:
        """The first collected event's tick (set before the first collect)."""
        self._previous_tick = tick

    def collect(self) -> None:
        """Ticks for every recorded event (all complete: the caller synchronized the stream).
        An event CUDA cannot time (its work failed) gets no tick and the chain goes on from
        the last good one."""
        pending, self._pending = self._pending, []
        lib = self.libcuda
        elapsed = self._elapsed
        for event, cell in pending:
            previous = self._previous
            if previous is None:
                cell[0] = self._previous_tick
            else:
                if lib.lib.cuEventElapsedTime(elapsed, previous, event) != 0:
                    self._free.append(event)
                    continue
                cell[0] = self._previous_tick + round(elapsed[0] * 1_000_000)
                self._free.append(previous)
            self._previous, self._previous_tick = event, cell[0]

    def destroy(self) -> None:
        events, self._all, self._free, self._pending = self._all, [], [], []
        self._previous = None
        for event in events:
            self.libcuda.lib.cuEventDestroy_v2(event)


class CudaRecorder(Recorder):
    """One profile session of a CudaDevice (see the module docstring)."""

    def __init__(self, sink, device, options, *, session_id: int = 1):
        super().__init__(sink, device.identifier, options, session_id=session_id)
        self.device = device
        families = options.families
        self.dispatch_events = bool(families & Family.DISPATCH_EVENTS)
        self.device_queue_events = bool(families & Family.DEVICE_QUEUE_EVENTS)
        self.clocks = bool(families & CLOCK_FAMILIES)
        self.code_objects = bool(families & Family.EXECUTABLE_METADATA)
        self.timeline = Timeline(device.libcuda, device.stream)
        self._next_clock_sample = 1
        self._next_dispatch_id = 1
        self._next_device_id = 1
        self._dispatches: list = []  # [fields..., start cell, end cell] awaiting ticks
        self._device_spans: list = []
        self._samples: list = []  # (tick cell, host midpoint, bracket begin, bracket end)

    def chunk_fields(self, suffix: str) -> dict:
        return {"name": RING_CHUNK_NAMES.get(suffix)}

    # -- begin / flush / end --------------------------------------------------------------------
    def begin_cuda(self) -> None:
        from amdgpu_cli.drivers.cuda.driver import parse_uuid

        device = self.device
        uuid = device.uuid[4:] if device.uuid.startswith("GPU-") else ""
        self.begin([(0, 1, parse_uuid(uuid) if uuid else None)], [(0, 0, 0)])
        if self.clocks:
            with device._stream_lock:
                device.bind()
                self._clock_sample(first=True)

    def _clock_sample(self, first: bool = False) -> None:
        """Records and waits for one event on the (idle) stream, bracketed by host reads."""
        cell, begin, end = self.timeline.sample()
        host = (begin + end) // 2
        if first:
            self.timeline.anchor(host)
        self._samples.append((cell, host, begin, end))

    def flush(self) -> None:
        super().flush()  # queue and memory event rings
        device = self.device
        with device._stream_lock:
            if self.clocks and not device.context_released:
                try:
                    device.bind()
                    self._clock_sample()
                except HalError:
                    pass  # a broken context: events recorded so far are still collected
                if not device.context_released:
                    self.timeline.collect()
            dispatches, self._dispatches = self._dispatches, []
            spans, self._device_spans = self._device_spans, []
        self._write_events(dispatches, spans)
        self._write_clocks()

    def end(self, status_code: int = 0) -> None:
        if self._ended:
            return
        try:
            super().end(status_code)
        finally:
            device = self.device
            with device._stream_lock:
                if not device.context_released:
                    try:
                        device.bind()
                        device.libcuda.call("cuStreamSynchronize", device.stream)
                    except HalError:
                        pass
                    self.timeline.destroy()

    def _write_events(self, dispatches: list, spans: list) -> None:
        rows = []
        for fields in dispatches:
            start, end = fields[-2][0], fields[-1][0]
            if start is None or end is None:
                continue  # work that failed: CUDA could not time it
            rows.append((*fields[:-2], start, end))
        device_rows = []
        for fields in spans:
            start, end = fields[-2][0], fields[-1][0]
            if start is None or end is None:
                continue
            device_rows.append((*fields[:-2], start, end))
        self.write_device_events("cuda", 0, 0, 0, rows, device_rows)

    def _write_clocks(self) -> None:
        from amdgpu_cli.profile.writer import records

        samples = self._samples
        ready = [s for s in samples if s[0][0] is not None]
        self._samples = [s for s in samples if s[0][0] is None]
        if not ready:
            return
        ids = list(range(self._next_clock_sample, self._next_clock_sample + len(ready)))
        self._next_clock_sample += len(ready)
        self.write("clock-correlations", records(
            "clock-correlations", len(ready), flags=CLOCK_FLAGS, physical_device_ordinal=0,
            sample_id=ids, device_tick=[s[0][0] for s in ready],
            host_cpu_timestamp_ns=[s[1] for s in ready],
            host_time_begin_ns=[s[2] for s in ready], host_time_end_ns=[s[3] for s in ready]))

    # -- metadata -------------------------------------------------------------------------------
    def record_cuda_executable(self, executable) -> int:
        """The profile id of a cuda executable; on first use its records (hashed from its CDA1
        image), with executable-metadata also the image."""
        return self.record_image_executable(executable, executable.image,
                                            code_object=self.code_objects)[0]

    # -- events (called with the stream lock held, context current) --------------------------
    def dispatch(self, operation, command, command_index: int):
        """The (start, end) marks around one dispatch of a profiled command buffer, or None
        when the capture filter leaves it out. Call `mark_end(pair)` after the launch."""
        executable = command.executable
        export = executable.exports[command.entry_point]
        capture_filter = self.options.filter
        if not capture_filter.empty and not capture_filter.matches(
                export.name, operation.command_buffer_id, command_index, 0, 0):
            return None
        flags = DISPATCH_FLAG_COMMAND_BUFFER if operation.command_buffer_id else 0
        event_id = self._next_dispatch_id
        self._next_dispatch_id += 1
        fields = [DISPATCH_EVENT_SIZE, flags, event_id, operation.submission,
                  operation.command_buffer_id, self.record_cuda_executable(executable),
                  command_index if operation.command_buffer_id else U32_MAX,
                  command.entry_point, tuple(command.workgroup_count),
                  tuple(export.workgroup_size), self.timeline.mark(), None]
        return fields

    def dispatch_done(self, fields) -> None:
        fields[-1] = self.timeline.mark()
        self._dispatches.append(fields)

    def span_open(self, operation):
        """A device-queue span's start mark around one queue operation's work."""
        return self.timeline.mark()

    def span_close(self, operation, start) -> None:
        event_id = self._next_device_id
        self._next_device_id += 1
        self._device_spans.append([
            QUEUE_DEVICE_EVENT_SIZE, operation.op, 0, 0, event_id, operation.submission,
            operation.command_buffer_id, operation.allocation_id, 0,
            operation.payload_length, 0, 0, operation.operation_count, 0, start,
            self.timeline.mark()])

"""HAL-native profiling: what a capture asks for, and the recorder a device reports to.

The capture sits at the HAL boundary, as IREE's does (`iree_hal_device_profiling_begin/flush/end`
over an `iree_hal_profile_sink_t`): tooling parses the flags into `ProfilingOptions`, asks the
device whether it can produce them (`Device.profiling_check`, before any file is touched), then
`profiling_begin(options, sink)`, `profiling_flush()` (per benchmark iteration, or from a
background thread every `flush_interval_ms`) and `profiling_end()`. A device that records keeps a
`Recorder`: one profile session on the sink, with

* metadata written as soon as it is known (devices and queues at begin; executables, their
  functions, command buffers and their operations at first use), and
* one event ring per event family (`EventRing`: a bounded list; when full, new events are dropped
  and counted, and the next chunk of that family says so with TRUNCATED), written as one chunk per
  non-empty family at every flush, in IREE's fixed family order.

Events are kept as lists in their record's field order (`queue_event()`, `memory_event()`, ...,
or written out where they are made on a hot path) and become numpy records of `profile.schema`'s
layouts only when flushed, so the cost of a recorded event while the run goes is one list.
Timestamps are `time.monotonic_ns()` (the host clock IREE's local drivers use). Appending is safe
from any thread without a lock (see EventRing); sink writes are serialized by the recorder's lock.

Sources: ../shared/reference/ireeprof.md sections 1, 2 and 5; replay-benchmark-cuda.md section 4;
IREE `runtime/src/iree/tooling/device_util.c` (flag parsing and its messages),
`runtime/src/iree/hal/local/profile.c` (the local recorder's families, rings and errors).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
import weakref
from pathlib import Path
from typing import NamedTuple, Sequence

from amdgpu_cli.hal.enums import HalError

# numpy (through profile.schema / profile.writer) is imported only once a session begins: the
# HAL imports this module on every run.
U32_MAX = 0xFFFFFFFF
CONTENT_TYPE_PREFIX = "application/vnd.iree.hal.profile."
now_ns = time.monotonic_ns


class Family:
    """Profiling data family bits (IREE's `iree_hal_device_profiling_data_families_t`)."""
    QUEUE_EVENTS = 1 << 0
    HOST_EXECUTION = 1 << 1
    DEVICE_QUEUE_EVENTS = 1 << 2
    DISPATCH_EVENTS = 1 << 3
    COUNTER_SAMPLES = 1 << 4
    EXECUTABLE_METADATA = 1 << 5
    EXECUTABLE_TRACES = 1 << 6
    MEMORY_EVENTS = 1 << 7
    DEVICE_METRICS = 1 << 8
    COMMAND_REGION_EVENTS = 1 << 9
    COUNTER_RANGES = 1 << 10


# --device_profiling_mode spellings -> bits (pmc-ranges is an alias of counter-ranges).
FAMILY_NAMES = {
    "queue-events": Family.QUEUE_EVENTS, "host-execution": Family.HOST_EXECUTION,
    "device-queue-events": Family.DEVICE_QUEUE_EVENTS, "dispatch-events": Family.DISPATCH_EVENTS,
    "counters": Family.COUNTER_SAMPLES, "executable-metadata": Family.EXECUTABLE_METADATA,
    "executable-traces": Family.EXECUTABLE_TRACES, "memory-events": Family.MEMORY_EVENTS,
    "device-metrics": Family.DEVICE_METRICS, "command-region-events": Family.COMMAND_REGION_EVENTS,
    "counter-ranges": Family.COUNTER_RANGES, "pmc-ranges": Family.COUNTER_RANGES,
}

# Families whose events refer to command buffers: with any of them IREE's tooling has the HAL
# module mark every command buffer RETAIN_PROFILE_METADATA, and command-buffer records carry it.
COMMAND_BUFFER_FAMILIES = (Family.QUEUE_EVENTS | Family.HOST_EXECUTION
                           | Family.DEVICE_QUEUE_EVENTS | Family.DISPATCH_EVENTS
                           | Family.COUNTER_SAMPLES | Family.EXECUTABLE_METADATA
                           | Family.EXECUTABLE_TRACES | Family.COMMAND_REGION_EVENTS)

# Where named presets live: the repository's profiles/presets (one `<name>.modes` file each),
# then AMDGPU_PROFILE_PRESETS (a folder) when set.
PRESET_DIRS = (Path(__file__).resolve().parents[2] / "profiles" / "presets",)
PRESET_SUFFIX = ".modes"


def preset_dirs() -> list[Path]:
    extra = os.environ.get("AMDGPU_PROFILE_PRESETS")
    return ([Path(extra)] if extra else []) + [d for d in PRESET_DIRS if d.is_dir()]


def presets() -> dict[str, str]:
    """Preset name -> its family list (the file's text without comments), first folder wins."""
    found: dict[str, str] = {}
    for folder in preset_dirs():
        for path in sorted(folder.glob(f"*{PRESET_SUFFIX}")):
            name = path.name[:-len(PRESET_SUFFIX)]
            if name in found:
                continue
            try:
                text = path.read_text()
            except (OSError, UnicodeDecodeError):
                continue
            lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
            found[name] = ",".join(line for line in lines if line)
    return found


def parse_families(text: str, *, _depth: int = 0) -> int:
    """`--device_profiling_mode`'s value -> family bits.

    IREE's grammar: comma-separated family names, spaces around each trimmed, a trailing comma
    allowed, an empty name between commas refused. A name that is not a family may be a preset
    (profiles/presets/<name>.modes), which expands to its own list.
    """
    families = 0
    remaining = text.strip()
    while remaining:
        part, _, remaining = remaining.partition(",")
        part = part.strip()
        remaining = remaining.strip()
        if not part:
            raise HalError("--device_profiling_mode contains an empty data family",
                           status="INVALID_ARGUMENT")
        bit = FAMILY_NAMES.get(part)
        if bit is None:
            preset = presets().get(part) if _depth == 0 else None
            if preset is None:
                raise HalError(f"unsupported profiling data family '{part}'",
                               status="INVALID_ARGUMENT")
            bit = parse_families(preset, _depth=1)
        families |= bit
    return families


def family_names(families: int) -> list[str]:
    seen = []
    for name, bit in FAMILY_NAMES.items():
        if families & bit and name != "pmc-ranges":
            seen.append(name)
    return seen


class CaptureFilter(NamedTuple):
    """`--device_profiling_filter_*`: which operations heavy artifacts are captured for."""
    function: str = ""
    command_buffer: int | None = None
    command_index: int | None = None
    physical_device: int | None = None
    queue: int | None = None

    @property
    def empty(self) -> bool:
        return not self.function and all(
            v is None for v in (self.command_buffer, self.command_index, self.physical_device,
                                self.queue))

    def matches(self, function_name: str, command_buffer_id: int, command_index: int,
                physical_device_ordinal: int, queue_ordinal: int) -> bool:
        """Whether a dispatch is selected (every filter given must match; the function filter is
        a glob over the export name)."""
        import fnmatch

        if self.function and not fnmatch.fnmatchcase(function_name, self.function):
            return False
        return all(want is None or want == have for want, have in (
            (self.command_buffer, command_buffer_id), (self.command_index, command_index),
            (self.physical_device, physical_device_ordinal), (self.queue, queue_ordinal)))

    @classmethod
    def from_flags(cls, function: str = "", command_buffer: int = -1, command_index: int = -1,
                   physical_device: int = -1, queue: int = -1) -> "CaptureFilter":
        """IREE's flag semantics: -1 is unset; command_buffer 0 is refused; the u32 ones must
        fit in 32 bits."""
        if command_buffer == 0:
            raise HalError("--device_profiling_filter_command_buffer must be nonzero",
                           status="INVALID_ARGUMENT")
        values = {}
        for name, value in (("command_index", command_index),
                            ("physical_device", physical_device), ("queue", queue)):
            if value is not None and value >= 0:
                if value > U32_MAX:
                    raise HalError(f"--device_profiling_filter_{name} value exceeds uint32_t",
                                   status="INVALID_ARGUMENT")
                values[name] = value
        return cls(function, command_buffer if command_buffer and command_buffer > 0 else None,
                   **values)


class ProfilingOptions(NamedTuple):
    families: int
    filter: CaptureFilter = CaptureFilter()
    counters: tuple[str, ...] = ()
    flush_interval_ms: int = 0

    def check_common(self) -> None:
        """What every device refuses the same way (IREE's hal/device.c)."""
        if self.families & (Family.COUNTER_SAMPLES | Family.COUNTER_RANGES) and not self.counters:
            raise HalError("counter profiling requires at least one counter set selection",
                           status="INVALID_ARGUMENT")

    @property
    def retains_command_buffer_metadata(self) -> bool:
        return bool(self.families & COMMAND_BUFFER_FAMILIES)


# --- event records (lists in their record's field order; record_length first) -----------------

# Record sizes (profile.schema's layouts; tests/profile checks they agree).
QUEUE_EVENT_SIZE = 104
HOST_EXECUTION_EVENT_SIZE = 152
MEMORY_EVENT_SIZE = 160
COMMAND_REGION_EVENT_SIZE = 248


class Op:
    """Queue / host-execution event types (profile schema names)."""
    BARRIER, DISPATCH, EXECUTE, COPY, FILL, UPDATE, READ, WRITE, ALLOCA, DEALLOCA, HOST_CALL = \
        range(1, 12)


class CommandOp:
    """Command-operation types."""
    BARRIER, DISPATCH, FILL, COPY, UPDATE = 1, 2, 3, 4, 5


class Strategy:
    NONE, INLINE, DEVICE_BARRIER, SOFTWARE_DEFER = 0, 1, 2, 3


class MemoryEvent:
    POOL_RESERVE, POOL_MATERIALIZE, POOL_RELEASE, POOL_WAIT = 3, 4, 5, 6
    QUEUE_ALLOCA, QUEUE_DEALLOCA = 7, 8


QUEUE_FLAG_SOFTWARE_DEFERRED = 1
HOST_FLAG_COMMAND_BUFFER = 1
HOST_FLAG_INDIRECT_PARAMETERS = 2
MEMORY_FLAG_QUEUE_OPERATION = 1
MEMORY_FLAG_POOL_RESERVATION = 8
MEMORY_FLAG_POOL_STATS = 16
REGION_FLAG_COMMAND_BUFFER = 1
REGION_FLAG_TERMINAL = 4
REGION_FLAG_HAS_NEXT_REGION = 8
RELATIONSHIP_SUBMISSION_DISPATCH = 1
RELATIONSHIP_SUBMISSION_QUEUE_DEVICE = 2
ENDPOINT_QUEUE_SUBMISSION = 1
ENDPOINT_DISPATCH_EVENT = 3
ENDPOINT_QUEUE_DEVICE_EVENT = 7


class EventRing:
    """A bounded event list: past `capacity` events (IREE's local default, 4096, rounded to a
    power of two) new events are dropped and counted until the next `take()`.

    Appending takes no lock (a list append and `next()` on a counter are atomic under the GIL);
    `take()` removes only the events it copied, so an append racing with it lands in the next
    take. Events are kept as the lists they were built as and become tuples (what numpy's
    structured arrays take) in `take()`, outside the recorded work."""

    __slots__ = ("events", "capacity", "dropped", "ids", "_lock")

    def __init__(self, capacity: int = 4096):
        self.capacity = 1 << max(0, int(capacity) - 1).bit_length()
        self.events: list = []
        self.dropped = 0
        self.ids = itertools.count(1)
        self._lock = threading.Lock()  # the dropped count only

    def drop(self) -> None:
        with self._lock:
            self.dropped += 1

    def take(self) -> tuple[list, int]:
        events = self.events
        count = len(events)
        taken = [tuple(event) for event in events[:count]]
        del events[:count]
        with self._lock:
            dropped, self.dropped = self.dropped, 0
        return taken, dropped


# Chunk order within a flush (IREE's local recorder): queue, host execution, region, memory; then
# the device families (dispatch, device queue, relationships).
FLUSH_ORDER = ("queue-events", "host-execution-events", "command-region-events", "memory-events",
               "dispatch-events", "queue-device-events", "event-relationships")


class Recorder:
    """One profile session on a sink for one device (see the module docstring).

    `name` is the producer name every chunk carries (the device identifier). Subclasses or
    devices add events with `append(suffix, event)` where `event` is a list in the layout's
    field order, its first element `record_length`, its event id filled in by `append`
    (`id_index`: the list position of event_id, or None for records without one).
    """

    ring_capacity = 4096

    def __init__(self, sink, name: str, options: ProfilingOptions, *, session_id: int = 1):
        from amdgpu_cli.profile.writer import ChunkMetadata

        self._ChunkMetadata = ChunkMetadata
        self.sink = sink
        self.name = name
        self.options = options
        self.families = options.families
        self.session_id = session_id
        self.rings: dict[str, EventRing] = {}
        self._lock = threading.RLock()  # sink writes
        self._executables = weakref.WeakKeyDictionary()
        self._command_buffers = weakref.WeakKeyDictionary()
        self._next_executable_id = 1
        self._next_command_buffer_id = 1
        self._submissions = itertools.count(1)  # next() is atomic: submitters on any thread
        self._ended = False
        self.error: BaseException | None = None  # the first sink failure (reported at end)

    # -- ids ------------------------------------------------------------------------------------
    def next_submission(self) -> int:
        """Submission ids, from 1 per session."""
        return next(self._submissions)

    def ring(self, suffix: str) -> EventRing:
        ring = self.rings.get(suffix)
        if ring is None:
            ring = self.rings[suffix] = EventRing(self.ring_capacity)
        return ring

    def append(self, suffix: str, event: list, id_index: int | None = 1) -> int:
        """Adds one event (a list in field order; element `id_index` set to its event id).
        Returns the event id (0 when dropped)."""
        ring = self.rings.get(suffix) or self.ring(suffix)
        event_id = next(ring.ids)
        events = ring.events
        if len(events) >= ring.capacity:
            ring.drop()
            return 0
        if id_index is not None:
            event[id_index] = event_id
        events.append(event)
        return event_id

    # -- metadata -------------------------------------------------------------------------------
    def executable_id(self, executable) -> int:
        """The profile id of an executable (ids count from 1 per session in order of first
        use); its metadata is written by `record_executable`."""
        known = self._executables.get(executable)
        if known is None:
            known = self._executables[executable] = [self._next_executable_id, False]
            self._next_executable_id += 1
        return known[0]

    def executable_recorded(self, executable) -> bool:
        known = self._executables.get(executable)
        return known is not None and known[1]

    def record_executable(self, executable, functions: Sequence[tuple]) -> int:
        """Writes `executables` + `executable-functions` for an executable the first time;
        `functions` are (name, constant_count, binding_count, workgroup_size) per export.
        Returns its id."""
        executable_id = self.executable_id(executable)
        known = self._executables[executable]
        if known[1]:
            return executable_id
        known[1] = True
        from amdgpu_cli.profile.writer import executable_record, function_record

        self.write("executables", executable_record(executable_id, len(functions)))
        parts = [function_record(executable_id, ordinal, name, constant_count=constants,
                                 binding_count=bindings, workgroup_size=size)
                 for ordinal, (name, constants, bindings, size) in enumerate(functions)]
        self.write("executable-functions", parts)
        return executable_id

    def write_device_events(self, prefix: str, physical_device_ordinal: int,
                            queue_ordinal: int, stream_id: int, dispatches: list,
                            device_events: list) -> None:
        """One queue's device-timed events (tuples in the dispatch-events / queue-device-events
        field order) as `dispatch-events`, `queue-device-events` and `event-relationships`
        chunks (queue_submission -> dispatch_event / queue_device_event, ids from 1 per chunk),
        named `<prefix>.dispatch`, `.queue_device`, `.relationships` and scoped to the queue,
        as IREE's AMDGPU driver writes them."""
        import numpy as np

        from amdgpu_cli.profile import schema
        from amdgpu_cli.profile.writer import records

        scope = dict(physical_device_ordinal=physical_device_ordinal,
                     queue_ordinal=queue_ordinal, stream_id=stream_id)
        if dispatches:
            self.write("dispatch-events",
                       np.array(dispatches, dtype=schema.BY_SUFFIX["dispatch-events"].dtype),
                       name=f"{prefix}.dispatch", **scope)
        if device_events:
            self.write("queue-device-events",
                       np.array(device_events, dtype=schema.BY_SUFFIX["queue-device-events"].dtype),
                       name=f"{prefix}.queue_device", **scope)
        links = [(RELATIONSHIP_SUBMISSION_DISPATCH, ENDPOINT_DISPATCH_EVENT, e[3], e[2])
                 for e in dispatches if e[3]]
        links += [(RELATIONSHIP_SUBMISSION_QUEUE_DEVICE, ENDPOINT_QUEUE_DEVICE_EVENT, e[5], e[4])
                  for e in device_events if e[5]]
        if links:
            self.write("event-relationships", records(
                "event-relationships", len(links), type=[k[0] for k in links],
                relationship_id=np.arange(1, len(links) + 1),
                source_type=ENDPOINT_QUEUE_SUBMISSION, target_type=[k[1] for k in links],
                source_id=[k[2] for k in links], target_id=[k[3] for k in links], **scope),
                name=f"{prefix}.relationships", **scope)

    def record_image_executable(self, executable, image: bytes, *, code_object: bool
                                ) -> tuple[int, bool]:
        """(profile id, True the first time) of an executable loaded from one code-object
        image (a GPU driver's): on first use its `executables` and `executable-functions`
        records, hashed from the image (CODE_OBJECT_HASH, FUNCTION_HASH), and with
        `code_object` the `executable-code-objects` record of the exact image."""
        executable_id = self.executable_id(executable)
        known = self._executables[executable]
        if known[1]:
            return executable_id, False
        known[1] = True
        from amdgpu_cli.profile.writer import (code_object_hash, code_object_record,
                                               executable_record, function_record)

        digest = code_object_hash(image)
        exports = executable.exports
        self.write("executables", executable_record(executable_id, len(exports),
                                                    code_object_hash=digest))
        self.write("executable-functions", [
            function_record(executable_id, ordinal, export.name,
                            constant_count=export.constant_count,
                            binding_count=export.binding_count,
                            workgroup_size=tuple(export.workgroup_size), code_object_hash=digest)
            for ordinal, export in enumerate(exports)])
        if code_object:
            self.write("executable-code-objects", code_object_record(executable_id, image,
                                                                     code_object_hash=digest))
        return executable_id, True

    def command_buffer_id(self, command_buffer) -> tuple[int, bool]:
        """(its profile id, True when this is its first submission in this session): the id
        its device gave it at creation (`profile_id`), else one counted from 1 per session."""
        known = self._command_buffers.get(command_buffer)
        if known is not None:
            return known, False
        command_buffer_id = getattr(command_buffer, "profile_id", 0)
        if not command_buffer_id:
            command_buffer_id = self._next_command_buffer_id
            self._next_command_buffer_id += 1
        self._command_buffers[command_buffer] = command_buffer_id
        return command_buffer_id, True

    # -- the sink ---------------------------------------------------------------------------------
    def _meta(self, suffix: str, dropped: int = 0, name: str | None = None, **fields):
        return self._ChunkMetadata(CONTENT_TYPE_PREFIX + suffix, self.name if name is None
                                   else name, self.session_id, dropped_record_count=dropped,
                                   **fields)

    def write(self, suffix: str, payload, dropped: int = 0, **fields) -> None:
        """One chunk of `suffix` (a numpy array, bytes or a list of them); `fields`: the chunk
        header's (`name` when it is not the producer's, scope fields)."""
        from amdgpu_cli.profile.writer import _join

        with self._lock:
            if self.error is not None or self._ended:
                return
            try:
                self.sink.write(self._meta(suffix, dropped, **fields), _join(payload))
            except (OSError, ValueError) as error:
                self.error = error

    def begin(self, devices: Sequence[tuple], queues: Sequence[tuple[int, int, int]]) -> None:
        """SESSION_BEGIN, then one `devices` chunk ((pdo, queue_count[, 16-byte uuid or None])
        each) and one `queues` chunk ((pdo, queue_ordinal, stream_id) each)."""
        from amdgpu_cli.profile.writer import device_record, records

        self.sink.begin_session(self._meta("session"))
        self.write("devices", [device_record(d[0], d[1], uuid=d[2] if len(d) > 2 else None)
                               for d in devices])
        self.write("queues", records("queues", len(queues),
                                     physical_device_ordinal=[q[0] for q in queues],
                                     queue_ordinal=[q[1] for q in queues],
                                     stream_id=[q[2] for q in queues]))

    def flush(self) -> None:
        """Every non-empty event family (or one with drops to report) as one chunk each."""
        import numpy as np

        from amdgpu_cli.profile import schema

        for suffix in FLUSH_ORDER:
            ring = self.rings.get(suffix)
            if ring is None:
                continue
            events, dropped = ring.take()
            if not events and not dropped:
                continue
            dtype = schema.BY_SUFFIX[suffix].dtype
            payload = np.array(events, dtype=dtype) if events else b""
            self.write(suffix, payload, dropped, **self.chunk_fields(suffix))

    def chunk_fields(self, suffix: str) -> dict:
        """Chunk-header fields of an event family's ring chunks (local: none; a producer may
        name them or scope them)."""
        return {}

    def end(self, status_code: int = 0) -> None:
        """The last flush and SESSION_END (rewriting the header's length); idempotent."""
        if self._ended:
            return
        self.flush()
        with self._lock:
            self._ended = True
            if self.error is None:
                try:
                    self.sink.end_session(self._meta("session"), status_code)
                except (OSError, ValueError) as error:
                    self.error = error


def queue_event(op: int, *, flags: int = 0, strategy: int = 0, host_time_ns: int = 0,
                submission_id: int = 0, command_buffer_id: int = 0, allocation_id: int = 0,
                stream_id: int = 0, physical_device_ordinal: int = 0, queue_ordinal: int = 0,
                wait_count: int = 0, signal_count: int = 0, barrier_count: int = 0,
                operation_count: int = 0, payload_length: int = 0,
                ready_host_time_ns: int = 0) -> list:
    """A queue-events record as a list (event_id at index 4, filled by Recorder.append)."""
    return [QUEUE_EVENT_SIZE, op, flags, strategy, 0, host_time_ns, submission_id,
            command_buffer_id, allocation_id, stream_id, physical_device_ordinal, queue_ordinal,
            wait_count, signal_count, barrier_count, operation_count, payload_length,
            ready_host_time_ns]


QUEUE_EVENT_ID = 4
HOST_EXECUTION_EVENT_ID = 4  # host-execution records are written out where they are made


def memory_event(event_type: int, *, flags: int = 0, result: int = U32_MAX, host_time_ns: int = 0,
                 allocation_id: int = 0, pool_id: int = 0, backing_id: int = 0,
                 submission_id: int = 0, physical_device_ordinal: int = 0, queue_ordinal: int = 0,
                 frontier_entry_count: int = 0, memory_type: int = 0, buffer_usage: int = 0,
                 offset: int = 0, length: int = 0, alignment: int = 0, pool_stats=None) -> list:
    """A memory-events record as a list (event_id at index 4). `pool_stats`: (bytes reserved,
    bytes free, bytes committed, budget limit, reservation count, slab count) or None."""
    stats = pool_stats or (0, 0, 0, 0, 0, 0)
    return [MEMORY_EVENT_SIZE, event_type, flags, result, 0, host_time_ns, allocation_id, pool_id,
            backing_id, submission_id, physical_device_ordinal, queue_ordinal,
            frontier_entry_count, 0, memory_type, buffer_usage, offset, length, alignment,
            *stats]


MEMORY_EVENT_ID = 4


def command_region_event(*, flags: int, submission_id: int, command_buffer_id: int,
                         stream_id: int = 0, physical_device_ordinal: int = 0,
                         queue_ordinal: int = 0, block_sequence: int = 1, epoch: int = 0,
                         index: int = 0, dispatch_count: int = 0, tile_count: int = 0,
                         start_host_time_ns: int = 0, end_host_time_ns: int = 0,
                         next_index: int = -1, next_tile_count: int = 0,
                         worker_count: int = 0) -> list:
    """A command-region-events record as a list (event_id at index 2). Scheduler internals IREE's
    task executor reports (width buckets, drains, wake budgets, retention) are 0: our worker pool
    has no such state."""
    return [COMMAND_REGION_EVENT_SIZE, flags, 0, submission_id, command_buffer_id, stream_id,
            physical_device_ordinal, queue_ordinal, block_sequence, epoch, index, dispatch_count,
            tile_count, 0, 0, 0, 0, 0, 0, 0, (0,) * 8, 0, 0, 0, 0, 0, 0, start_host_time_ns,
            end_host_time_ns, next_index, next_tile_count, 0, 0, worker_count, 0, 0, 0, 0, 0, 0]


COMMAND_REGION_EVENT_ID = 2


class PeriodicFlush:
    """`--device_profiling_flush_interval_ms`: a daemon thread calling `flush()` every interval
    until `stop()`; the first failure is kept in `error` and stops it."""

    def __init__(self, flush, interval_ms: int):
        self._flush = flush
        self._interval = interval_ms / 1000.0
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="amdgpu-profile-flush",
                                        daemon=True)
        self._thread.start()

    def _main(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._flush()
            except BaseException as error:  # noqa: BLE001 - reported by stop()
                self.error = error
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

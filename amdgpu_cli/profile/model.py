"""The metadata model every projection report joins events against.

`Model.build(bundle)` reads the metadata families (queues, executables, functions, command buffers,
command operations, clock correlations, device-metric sources and descriptors) in one pass over the
whole bundle, so events may come before the metadata they reference. It applies the rules IREE's
tools apply (reference ireeprof.md sections 2.1, 2.4, 4 and 7):

- the first record of a key wins (queue by (device, queue, stream); executable by id; function by
  (executable, ordinal); command buffer by id; metric source by id; descriptor by (source, metric));
- a function must come after its executable, and a command operation after its command buffer, in
  file order; command operations must carry block coordinates exactly when flagged BLOCK_STRUCTURE;
  variable-size records must match their length fields. Violations raise BundleFormatError.

Lookups are plain dicts, and records too: each metadata record is decoded by its `layouts.py`
layout into a dict of Python ints (arrays as tuples). The model needs no numpy: it reads a
`source`, the opened `Bundle` or the one-pass reducers' own metadata view, through three members:
`check()` (raises the record-chain error), `typed_records(suffix)` (each typed record's file offset
and chunk record index, in file order, after IREE's typed-record walk and its errors) and `data`
(the file's bytes). Function keys are the function name, or `device<pdo>/executable<id>#<n>`
(`executable<id>#<n>` when the device is unknown) for nameless functions.
"""

from __future__ import annotations

from amdgpu_cli.errors import BundleFormatError, MissingMetadataError
from amdgpu_cli.profile import layouts
from amdgpu_cli.profile.clock import HOST_CPU_TIMESTAMP_NS, ClockFit, DeviceClock
from amdgpu_cli.profile.names import COMMAND_OP_NAMES, U32_MAX, U64_MAX, Flags


class Function:
    """One executable function's metadata (the first record of its key)."""

    __slots__ = ("executable_id", "function_ordinal", "flags", "constant_count", "binding_count",
                 "parameter_count", "workgroup_size", "function_hash", "name")

    def __init__(self, **fields) -> None:
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def key(self, physical_device_ordinal: int = U32_MAX) -> str:
        if self.name:
            return self.name
        return numeric_key(physical_device_ordinal, self.executable_id, self.function_ordinal)


class Executable:
    """An executable's record and its functions, in file order."""

    def __init__(self, record: dict) -> None:
        self.record = record
        self.functions: list[Function] = []

    @property
    def executable_id(self) -> int:
        return self.record["executable_id"]


class CommandBuffer:
    """A command buffer's record and its recorded operations, in file order."""

    def __init__(self, record: dict) -> None:
        self.record = record
        self.operations: list[dict] = []

    @property
    def command_buffer_id(self) -> int:
        return self.record["command_buffer_id"]


class MetricSource:
    def __init__(self, record: dict, name: str) -> None:
        self.record = record
        self.name = name


class MetricDescriptor:
    def __init__(self, record: dict, name: str, description: str) -> None:
        self.record = record
        self.name = name
        self.description = description


def numeric_key(physical_device_ordinal: int, executable_id: int, function_ordinal: int) -> str:
    if physical_device_ordinal == U32_MAX:
        return f"executable{executable_id}#{function_ordinal}"
    return f"device{physical_device_ordinal}/executable{executable_id}#{function_ordinal}"


class Model:
    """Metadata indexed by key, in first-seen order."""

    def __init__(self) -> None:
        self.queues: dict[tuple[int, int, int], dict] = {}
        self.executables: dict[int, Executable] = {}
        self.functions: dict[tuple[int, int], Function] = {}
        self.command_buffers: dict[int, CommandBuffer] = {}
        self.command_operations: list[dict] = []
        self.devices: dict[int, DeviceClock] = {}
        self.metric_sources: dict[int, MetricSource] = {}
        self.metric_descriptors: dict[tuple[int, int], MetricDescriptor] = {}
        self._fits: dict[tuple[int, str], ClockFit | None] = {}

    # --- building ---------------------------------------------------------------------------------

    @classmethod
    def build(cls, source) -> "Model":
        """The model of `source` (a Bundle, or any view with its `check`, `typed_records` and
        `data`): the metadata families in this order, so their errors come in IREE's."""
        source.check()
        model = cls()
        model._add_queues(source)
        model._add_executables(source)
        model._add_command_buffers(source)
        model._add_clocks(source)
        model._add_metrics(source)
        return model

    def _add_queues(self, source) -> None:
        for q, _, _ in _records(source, "queues", layouts.QUEUE):
            key = (q["physical_device_ordinal"], q["queue_ordinal"], q["stream_id"])
            self.queues.setdefault(key, q)

    def _add_executables(self, source) -> None:
        first_chunk: dict[int, int] = {}
        for row, chunk, _ in _records(source, "executables", layouts.EXECUTABLE):
            eid = row["executable_id"]
            if eid not in self.executables:
                self.executables[eid] = Executable(row)
                first_chunk[eid] = chunk
        head = layouts.FUNCTION.size
        for row, chunk, offset in _records(source, "executable-functions", layouts.FUNCTION):
            name_length = row["name_length"]
            if name_length != row["record_length"] - head:
                raise BundleFormatError("executable function name length is inconsistent",
                                        record_index=chunk)
            eid, ordinal = row["executable_id"], row["function_ordinal"]
            if first_chunk.get(eid, chunk + 1) > chunk:
                raise BundleFormatError(
                    "executable function references missing executable metadata "
                    f"executable={eid} function={ordinal}", record_index=chunk)
            if (eid, ordinal) in self.functions:
                continue
            function = Function(
                executable_id=eid, function_ordinal=ordinal, flags=row["flags"],
                constant_count=row["constant_count"], binding_count=row["binding_count"],
                parameter_count=row["parameter_count"], workgroup_size=row["workgroup_size"],
                function_hash=row["function_hash"],
                name=_strings(source, offset + head, name_length)[0])
            self.functions[(eid, ordinal)] = function
            self.executables[eid].functions.append(function)

    def _add_command_buffers(self, source) -> None:
        first_chunk: dict[int, int] = {}
        for row, chunk, _ in _records(source, "command-buffers", layouts.COMMAND_BUFFER):
            cid = row["command_buffer_id"]
            if cid not in self.command_buffers:
                self.command_buffers[cid] = CommandBuffer(row)
                first_chunk[cid] = chunk
        for row, chunk, _ in _records(source, "command-operations", layouts.COMMAND_OPERATION):
            cid, index = row["command_buffer_id"], row["command_index"]
            blocks = (row["block_ordinal"], row["block_command_ordinal"],
                      row["target_block_ordinal"], row["alternate_block_ordinal"])
            if row["flags"] & Flags.OP_BLOCK_STRUCTURE:
                if blocks[0] == U32_MAX or blocks[1] == U32_MAX:
                    raise BundleFormatError(
                        "command operation declares block structure without block coordinates "
                        f"command_buffer={cid} command_index={index}", record_index=chunk)
            elif any(b != U32_MAX for b in blocks):
                raise BundleFormatError(
                    "command operation carries block coordinates without the block structure "
                    f"flag command_buffer={cid} command_index={index}", record_index=chunk)
            if first_chunk.get(cid, chunk + 1) > chunk:
                raise BundleFormatError(
                    "command operation references missing command-buffer metadata "
                    f"command_buffer={cid} command_index={index}", record_index=chunk)
            self.command_buffers[cid].operations.append(row)
            self.command_operations.append(row)

    def _add_clocks(self, source) -> None:
        for sample, _, _ in _records(source, "clock-correlations", layouts.CLOCK_CORRELATION):
            pdo = sample["physical_device_ordinal"]
            self.devices.setdefault(pdo, DeviceClock(pdo)).add(sample)

    def _add_metrics(self, source) -> None:
        head = layouts.METRIC_SOURCE.size
        for row, chunk, offset in _records(source, "device-metric-sources", layouts.METRIC_SOURCE):
            n = row["name_length"]
            if n != row["record_length"] - head:
                raise BundleFormatError(
                    "device metric source name length is inconsistent with record length",
                    record_index=chunk)
            self.metric_sources.setdefault(
                row["source_id"], MetricSource(row, _strings(source, offset + head, n)[0]))
        head = layouts.METRIC_DESCRIPTOR.size
        for row, chunk, offset in _records(source, "device-metric-descriptors",
                                           layouts.METRIC_DESCRIPTOR):
            n, d = row["name_length"], row["description_length"]
            if n + d != row["record_length"] - head:
                raise BundleFormatError(
                    "device metric descriptor string lengths are inconsistent with record length",
                    record_index=chunk)
            key = (row["source_id"], row["metric_id"])
            if key not in self.metric_descriptors:
                self.metric_descriptors[key] = MetricDescriptor(
                    row, *_strings(source, offset + head, n, d))

    # --- lookups ----------------------------------------------------------------------------------

    def clock_fit(self, physical_device_ordinal: int,
                  domain: str = HOST_CPU_TIMESTAMP_NS) -> ClockFit | None:
        """The device's tick fit in `domain` (computed once), or None when there is none."""
        key = (physical_device_ordinal, domain)
        if key not in self._fits:
            device = self.devices.get(physical_device_ordinal)
            self._fits[key] = device.fit(domain) if device is not None else None
        return self._fits[key]

    def function(self, executable_id: int, function_ordinal: int) -> Function | None:
        return self.functions.get((executable_id, function_ordinal))

    def dispatch_key(self, physical_device_ordinal: int, executable_id: int,
                     function_ordinal: int, what: str = "dispatch event") -> str:
        """The function key of a dispatch; raises when its metadata is missing (as IREE does)."""
        function = self.functions.get((executable_id, function_ordinal))
        if function is None:
            missing = ("executable" if executable_id not in self.executables
                       else "executable function")
            raise MissingMetadataError(
                f"{what} references missing {missing} metadata device={physical_device_ordinal} "
                f"executable={executable_id} function={function_ordinal}")
        return function.key(physical_device_ordinal)

    def require_queue(self, physical_device_ordinal: int, queue_ordinal: int, stream_id: int,
                      what: str = "dispatch event chunk") -> dict:
        queue = self.queues.get((physical_device_ordinal, queue_ordinal, stream_id))
        if queue is None:
            raise MissingMetadataError(
                f"{what} references missing queue metadata device={physical_device_ordinal} "
                f"queue={queue_ordinal} stream={stream_id}")
        return queue

    def operation_key(self, operation: dict) -> str:
        """Key of a command operation: a dispatch's function key, else the op name."""
        op_type = operation["type"]
        name = COMMAND_OP_NAMES.get(op_type, "unknown")
        eid, ordinal = operation["executable_id"], operation["function_ordinal"]
        if op_type != 2 or eid == 0 or ordinal == U32_MAX:
            return name
        cid = operation["command_buffer_id"]
        cb = self.command_buffers.get(cid)
        if cb is None:
            raise MissingMetadataError(
                "command operation references missing command-buffer metadata "
                f"command_buffer={cid} command_index={operation['command_index']}")
        return self.dispatch_key(cb.record["physical_device_ordinal"], eid, ordinal)


def span_ticks(earliest_start: int, latest_end: int) -> float:
    """Visible span between the earliest start and the latest end tick (0 when empty)."""
    if earliest_start == U64_MAX or latest_end == 0 or latest_end < earliest_start:
        return 0.0
    return float(latest_end - earliest_start)


def _records(source, suffix: str, layout: layouts.Layout):
    """(record as a dict, chunk record index, file offset) of each typed record of a family."""
    data = source.data
    offsets, chunks = source.typed_records(suffix)
    decode = layout.decode
    return [(decode(data, offset), chunk, offset) for offset, chunk in zip(offsets, chunks)]


def _strings(source, start: int, *lengths: int) -> list[str]:
    """Consecutive strings of the given byte lengths from file offset `start` (UTF-8, invalid
    bytes replaced)."""
    out = []
    for n in lengths:
        out.append(bytes(source.data[start:start + n]).decode("utf-8", "replace"))
        start += n
    return out

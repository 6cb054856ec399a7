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

Lookups are plain dicts. Function keys are the function name, or `device<pdo>/executable<id>#<n>`
(`executable<id>#<n>` when the device is unknown) for nameless functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from amdgpu_cli.errors import BundleFormatError, MissingMetadataError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.clock import HOST_CPU_TIMESTAMP_NS, ClockFit, DeviceClock
from amdgpu_cli.profile.reader import Bundle

U32_MAX = schema.U32_MAX


@dataclass
class Function:
    executable_id: int
    function_ordinal: int
    flags: int
    constant_count: int
    binding_count: int
    parameter_count: int
    workgroup_size: tuple[int, int, int]
    function_hash: tuple[int, int]
    name: str

    def key(self, physical_device_ordinal: int = U32_MAX) -> str:
        if self.name:
            return self.name
        return numeric_key(physical_device_ordinal, self.executable_id, self.function_ordinal)


@dataclass
class Executable:
    record: np.void
    functions: list[Function] = field(default_factory=list)

    @property
    def executable_id(self) -> int:
        return int(self.record["executable_id"])


@dataclass
class CommandBuffer:
    record: np.void
    operations: list[np.void] = field(default_factory=list)

    @property
    def command_buffer_id(self) -> int:
        return int(self.record["command_buffer_id"])


@dataclass
class MetricSource:
    record: np.void
    name: str


@dataclass
class MetricDescriptor:
    record: np.void
    name: str
    description: str


def numeric_key(physical_device_ordinal: int, executable_id: int, function_ordinal: int) -> str:
    if physical_device_ordinal == U32_MAX:
        return f"executable{executable_id}#{function_ordinal}"
    return f"device{physical_device_ordinal}/executable{executable_id}#{function_ordinal}"


class Model:
    """Metadata indexed by key, in first-seen order."""

    def __init__(self) -> None:
        self.queues: dict[tuple[int, int, int], np.void] = {}
        self.executables: dict[int, Executable] = {}
        self.functions: dict[tuple[int, int], Function] = {}
        self.command_buffers: dict[int, CommandBuffer] = {}
        self.command_operations: list[np.void] = []
        self.devices: dict[int, DeviceClock] = {}
        self.metric_sources: dict[int, MetricSource] = {}
        self.metric_descriptors: dict[tuple[int, int], MetricDescriptor] = {}
        self._fits: dict[tuple[int, str], ClockFit | None] = {}

    # --- building ---------------------------------------------------------------------------------

    @classmethod
    def build(cls, bundle: Bundle) -> "Model":
        bundle.check()
        model = cls()
        model._add_queues(bundle)
        model._add_executables(bundle)
        model._add_command_buffers(bundle)
        model._add_clocks(bundle)
        model._add_metrics(bundle)
        return model

    def _add_queues(self, bundle: Bundle) -> None:
        for q in bundle.typed("queues").rows:
            key = (int(q["physical_device_ordinal"]), int(q["queue_ordinal"]), int(q["stream_id"]))
            self.queues.setdefault(key, q)

    def _add_executables(self, bundle: Bundle) -> None:
        executables = bundle.typed("executables")
        first_chunk: dict[int, int] = {}
        for row, chunk in zip(executables.rows, executables.chunk.tolist()):
            eid = int(row["executable_id"])
            if eid not in self.executables:
                self.executables[eid] = Executable(row)
                first_chunk[eid] = chunk
        functions = bundle.typed("executable-functions")
        for i, (row, chunk) in enumerate(zip(functions.rows, functions.chunk.tolist())):
            name_length = int(row["name_length"])
            if name_length != int(row["record_length"]) - schema.FUNCTION.itemsize:
                raise BundleFormatError("executable function name length is inconsistent",
                                        record_index=chunk)
            eid, ordinal = int(row["executable_id"]), int(row["function_ordinal"])
            if first_chunk.get(eid, chunk + 1) > chunk:
                raise BundleFormatError(
                    "executable function references missing executable metadata "
                    f"executable={eid} function={ordinal}", record_index=chunk)
            if (eid, ordinal) in self.functions:
                continue
            function = Function(
                executable_id=eid, function_ordinal=ordinal, flags=int(row["flags"]),
                constant_count=int(row["constant_count"]), binding_count=int(row["binding_count"]),
                parameter_count=int(row["parameter_count"]),
                workgroup_size=tuple(int(x) for x in row["workgroup_size"]),
                function_hash=(int(row["function_hash"][0]), int(row["function_hash"][1])),
                name=functions.strings(i, name_length)[0])
            self.functions[(eid, ordinal)] = function
            self.executables[eid].functions.append(function)

    def _add_command_buffers(self, bundle: Bundle) -> None:
        buffers = bundle.typed("command-buffers")
        first_chunk: dict[int, int] = {}
        for row, chunk in zip(buffers.rows, buffers.chunk.tolist()):
            cid = int(row["command_buffer_id"])
            if cid not in self.command_buffers:
                self.command_buffers[cid] = CommandBuffer(row)
                first_chunk[cid] = chunk
        operations = bundle.typed("command-operations")
        for row, chunk in zip(operations.rows, operations.chunk.tolist()):
            cid, index = int(row["command_buffer_id"]), int(row["command_index"])
            blocks = (int(row["block_ordinal"]), int(row["block_command_ordinal"]),
                      int(row["target_block_ordinal"]), int(row["alternate_block_ordinal"]))
            if int(row["flags"]) & schema.Flags.OP_BLOCK_STRUCTURE:
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

    def _add_clocks(self, bundle: Bundle) -> None:
        for sample in bundle.typed("clock-correlations").rows:
            pdo = int(sample["physical_device_ordinal"])
            self.devices.setdefault(pdo, DeviceClock(pdo)).add(sample)

    def _add_metrics(self, bundle: Bundle) -> None:
        sources = bundle.typed("device-metric-sources")
        for i, row in enumerate(sources.rows):
            n = int(row["name_length"])
            if n != int(row["record_length"]) - schema.METRIC_SOURCE.itemsize:
                raise BundleFormatError(
                    "device metric source name length is inconsistent with record length",
                    record_index=int(sources.chunk[i]))
            self.metric_sources.setdefault(int(row["source_id"]),
                                           MetricSource(row, sources.strings(i, n)[0]))
        descriptors = bundle.typed("device-metric-descriptors")
        for i, row in enumerate(descriptors.rows):
            n, d = int(row["name_length"]), int(row["description_length"])
            if n + d != int(row["record_length"]) - schema.METRIC_DESCRIPTOR.itemsize:
                raise BundleFormatError(
                    "device metric descriptor string lengths are inconsistent with record length",
                    record_index=int(descriptors.chunk[i]))
            key = (int(row["source_id"]), int(row["metric_id"]))
            if key not in self.metric_descriptors:
                self.metric_descriptors[key] = MetricDescriptor(row, *descriptors.strings(i, n, d))

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
                      what: str = "dispatch event chunk") -> np.void:
        queue = self.queues.get((physical_device_ordinal, queue_ordinal, stream_id))
        if queue is None:
            raise MissingMetadataError(
                f"{what} references missing queue metadata device={physical_device_ordinal} "
                f"queue={queue_ordinal} stream={stream_id}")
        return queue

    def operation_key(self, operation: np.void) -> str:
        """Key of a command operation: a dispatch's function key, else the op name."""
        op_type = int(operation["type"])
        name = schema.COMMAND_OP_NAMES.get(op_type, "unknown")
        eid, ordinal = int(operation["executable_id"]), int(operation["function_ordinal"])
        if op_type != 2 or eid == 0 or ordinal == U32_MAX:
            return name
        cid = int(operation["command_buffer_id"])
        cb = self.command_buffers.get(cid)
        if cb is None:
            raise MissingMetadataError(
                "command operation references missing command-buffer metadata "
                f"command_buffer={cid} command_index={int(operation['command_index'])}")
        return self.dispatch_key(int(cb.record["physical_device_ordinal"]), eid, ordinal)


def span_ticks(earliest_start: int, latest_end: int) -> float:
    """Visible span between the earliest start and the latest end tick (0 when empty)."""
    if earliest_start == schema.U64_MAX or latest_end == 0 or latest_end < earliest_start:
        return 0.0
    return float(latest_end - earliest_start)

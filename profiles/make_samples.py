"""Writes the sample .ireeprof bundles in profiles/samples/ with amdgpu_cli's bundle writer.

Usage:
  python profiles/make_samples.py [--out=DIR]      (DIR defaults to profiles/samples)

Samples (all deterministic: the same inputs give byte-identical files):
  amdgpu-sample.ireeprof  one AMDGPU-style session shaped like IREE's AMDGPU driver output: two
                          gfx942 devices, three queues, three executables whose code objects are
                          the real gfx942 ELF images iree-compile builds from examples/models
                          (mlp, conv, attention) with their kernels as functions (names, workgroup
                          sizes, binding counts from the code-object metadata; SipHash identities),
                          two command buffers, clock correlations at begin/flush/end, dispatch and
                          device queue events, relationships, host queue events, memory events,
                          PMC counters (SQ_WAVES, SQ_BUSY_CYCLES per XCC) and device metrics.
  amdgpu-lossy.ireeprof   a small session whose queue and memory event rings overflowed
                          (TRUNCATED chunks with dropped-record counts) and which ended with
                          RESOURCE_EXHAUSTED: what `explain` flags as format/session errors.

The timings are simulated (no GPU ran): a seeded model of queue submissions, dispatch latencies
and clock drift. Needs `iree-compile` (IREE 3.13.0) on PATH for the code objects.
"""

from __future__ import annotations

import argparse
import random
import struct
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import msgpack

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from amdgpu_cli.profile import schema  # noqa: E402
from amdgpu_cli.profile import writer as W  # noqa: E402
from examples.compile import MODELS_DIR, compile_model  # noqa: E402

F = schema.Flags
U32_MAX = schema.U32_MAX
OUT_DIR = Path(__file__).resolve().parent / "samples"
TARGET = "amdgpu-gfx942"
MODELS = ("mlp", "conv", "attention")
DEVICE_NAME = "amdgpu"
TICK_HZ = 100_000_000          # gfx942 timestamp counter
SHADER_CLOCK_HZ = 2_100_000_000
XCC_COUNT = 4                  # raw PMC values per counter (one per XCC)
EM_AMDGPU = 224


# --- Code objects from iree-compile ---------------------------------------------------------------

@dataclass
class Kernel:
    name: str
    workgroup_size: tuple[int, int, int]
    binding_count: int
    constant_count: int
    parameter_count: int


@dataclass
class CodeObject:
    model: str
    image: bytes
    kernels: list[Kernel] = field(default_factory=list)


def _elf_images(blob: bytes) -> list[bytes]:
    """The AMDGPU ELF images embedded in a vmfb (section headers mark each image's end)."""
    images, i = [], 0
    while (i := blob.find(b"\x7fELF", i)) >= 0:
        machine = struct.unpack_from("<H", blob, i + 0x12)[0]
        shoff = struct.unpack_from("<Q", blob, i + 0x28)[0]
        shentsize, shnum = struct.unpack_from("<HH", blob, i + 0x3A)
        size = shoff + shentsize * shnum
        if machine == EM_AMDGPU and i + size <= len(blob):
            images.append(blob[i:i + size])
            i += size
        else:
            i += 4
    return images


def _kernels(image: bytes) -> list[Kernel]:
    """Kernels from the code object's AMDGPU metadata note (msgpack `amdhsa.kernels`)."""
    shoff = struct.unpack_from("<Q", image, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    for k in range(shnum):
        sh_type, sh_offset, sh_size = (struct.unpack_from("<I", image, shoff + k * shentsize + 4)[0],
                                       *struct.unpack_from("<QQ", image, shoff + k * shentsize + 24))
        if sh_type != 7:  # SHT_NOTE
            continue
        o, end = sh_offset, sh_offset + sh_size
        while o < end:
            namesz, descsz, _ = struct.unpack_from("<III", image, o)
            desc = o + 12 + ((namesz + 3) & ~3)
            if image[o + 12:o + 12 + namesz].rstrip(b"\0") == b"AMDGPU":
                meta = msgpack.unpackb(image[desc:desc + descsz])
                out = []
                for kd in meta["amdhsa.kernels"]:
                    args = kd.get(".args", [])
                    buffers = sum(1 for a in args if a[".value_kind"] == "global_buffer")
                    constants = sum(a[".size"] // 4 for a in args if a[".value_kind"] == "by_value")
                    out.append(Kernel(kd[".name"], tuple(kd[".reqd_workgroup_size"]), buffers,
                                      constants, len(args)))
                return out
            o = desc + ((descsz + 3) & ~3)
    raise ValueError("code object has no AMDGPU metadata note")


def compile_code_objects(models=MODELS) -> list[CodeObject]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            vmfb = compile_model(MODELS_DIR / f"{model}.mlir", Path(tmp) / f"{model}.vmfb", TARGET)
            for image in _elf_images(Path(vmfb).read_bytes()):
                out.append(CodeObject(model, image, _kernels(image)))
    return out


# --- A simulated AMDGPU session --------------------------------------------------------------------

class DeviceClock:
    """Device ticks run at TICK_HZ * (1 + drift) from `tick0` at IREE host time `t0`."""

    def __init__(self, pdo: int, tick0: int, t0: int, drift_ppm: float, kfd_offset_ns: int):
        self.pdo, self.tick0, self.t0 = pdo, tick0, t0
        self.rate = TICK_HZ * (1 + drift_ppm * 1e-6) / 1e9
        self.kfd_offset_ns = kfd_offset_ns

    def tick(self, host_ns: int) -> int:
        return self.tick0 + round((host_ns - self.t0) * self.rate)

    def sample(self, sample_id: int, host_ns: int) -> dict:
        """A KFD clock-counter sample bracketed by two IREE host timestamps."""
        return dict(flags=0xF, physical_device_ordinal=self.pdo, sample_id=sample_id,
                    device_tick=self.tick(host_ns + 150), host_cpu_timestamp_ns=host_ns + 150 + self.kfd_offset_ns,
                    host_system_timestamp=host_ns + 150 + self.kfd_offset_ns,
                    host_system_frequency_hz=1_000_000_000, host_time_begin_ns=host_ns,
                    host_time_end_ns=host_ns + 300 + (sample_id * 37) % 200)


@dataclass
class Queue:
    pdo: int
    ordinal: int
    next_event: int = 1
    next_submission: int = 1
    next_device_event: int = 1
    dispatches: list = field(default_factory=list)
    device_events: list = field(default_factory=list)
    counter_samples: list = field(default_factory=list)

    @property
    def stream_id(self) -> int:
        return (self.pdo << 32) | self.ordinal


class AmdgpuSession:
    """Builds the session's records, flush by flush, the way the AMDGPU driver orders them."""

    def __init__(self, w: W.BundleWriter, code_objects: list[CodeObject], seed: int = 2026):
        self.w = w
        self.rng = random.Random(seed)
        self.code_objects = code_objects
        self.t = 1_712_345_000_000  # IREE host time (ns since boot)
        self.clocks = [DeviceClock(0, 81_234_567_000, self.t, 3.5, -2_345),
                       DeviceClock(1, 79_876_543_000, self.t, -7.25, -2_345)]
        self.queues = [Queue(0, 0), Queue(0, 1), Queue(1, 0)]
        self.next_sample = 1
        self.next_counter_sample = 1
        self.next_metric_sample = 1
        self.queue_events: list[dict] = []
        self.memory_events: list[dict] = []
        self.next_queue_event = 1
        self.next_memory_event = 1
        self.next_allocation = 1
        self.functions: dict[int, list[Kernel]] = {}
        self.pool_reserved = 0

    # metadata ------------------------------------------------------------------------------------

    def begin(self) -> None:
        w = self.w
        w.begin_session(1, DEVICE_NAME)
        uuids = [bytes.fromhex("4d49333030582d300001a2b3c4d5e6f7"), bytes.fromhex("4d49333030582d310001a2b3c4d5e6f8")]
        w.chunk("devices", [W.device_record(pdo, sum(q.pdo == pdo for q in self.queues), uuid=uuids[pdo])
                            for pdo in (0, 1)], name=DEVICE_NAME)
        w.chunk("queues", W.records("queues", physical_device_ordinal=[q.pdo for q in self.queues],
                                    queue_ordinal=[q.ordinal for q in self.queues],
                                    stream_id=[q.stream_id for q in self.queues]), name=DEVICE_NAME)
        self.clock_chunk()
        counter_sets, counters = [], []
        for pdo in (0, 1):
            set_id = (pdo << 32) | 1
            counter_sets.append(W.counter_set_record(set_id, pdo, "amdgpu.pmc", counter_count=2,
                                                     sample_value_count=2 * XCC_COUNT))
            counters.append(W.counter_record(set_id, 0, pdo, block="SQ", name="SQ_WAVES",
                                             description="Count number of waves sent to SQs.", unit=1,
                                             sample_value_offset=0, sample_value_count=XCC_COUNT))
            counters.append(W.counter_record(set_id, 1, pdo, block="SQ", name="SQ_BUSY_CYCLES",
                                             description="Clock cycles while SQ is reporting that it is busy.",
                                             unit=2, sample_value_offset=XCC_COUNT, sample_value_count=XCC_COUNT))
        w.chunk("counter-sets", counter_sets, name=DEVICE_NAME)
        w.chunk("counters", counters, name=DEVICE_NAME)
        sources, descriptors = [], []
        for pdo in (0, 1):
            source_id = pdo + 1
            sources.append(W.metric_source_record(source_id, pdo, f"amdgpu.sysfs.0000:{0x0c + 0x20 * pdo:02x}:00.0",
                                                  metric_count=len(METRICS), device_class=2, source_kind=1,
                                                  source_revision=(1 << 8) | 5))
            for metric_id, (name, description, unit, kind, semantic, plot) in METRICS.items():
                descriptors.append(W.metric_descriptor_record(source_id, metric_id, name, description, unit=unit,
                                                              value_kind=kind, semantic=semantic, plot_hint=plot))
        w.chunk("device-metric-sources", sources, name=DEVICE_NAME)
        w.chunk("device-metric-descriptors", descriptors, name=DEVICE_NAME)

    def load_executables(self) -> None:
        """Executables, code objects, per-device loads and functions (incremental metadata)."""
        w, executables, images, loads, functions = self.w, [], [], [], []
        for executable_id, co in enumerate(self.code_objects, start=1):
            h = W.code_object_hash(co.image)
            executables.append(W.executable_record(executable_id, len(co.kernels), code_object_hash=h))
            images.append(W.code_object_record(executable_id, co.image, code_object_hash=h))
            for pdo in (0, 1):
                loads.append(W.record("executable-code-object-loads", physical_device_ordinal=pdo,
                                      executable_id=executable_id, code_object_id=executable_id,
                                      load_delta=0x7F00_0000_0000 + (pdo << 36) + (executable_id << 24),
                                      load_size=(len(co.image) + 0xFFF) & ~0xFFF))
            for ordinal, k in enumerate(co.kernels):
                functions.append(W.function_record(
                    executable_id, ordinal, k.name, constant_count=k.constant_count, binding_count=k.binding_count,
                    parameter_count=k.parameter_count, workgroup_size=k.workgroup_size, code_object_hash=h))
            self.functions[executable_id] = co.kernels
        w.chunk("executables", executables, name=DEVICE_NAME)
        w.chunk("executable-code-objects", images, name=DEVICE_NAME)
        w.chunk("executable-code-object-loads", loads, name=DEVICE_NAME)
        w.chunk("executable-functions", functions, name=DEVICE_NAME)

    def record_command_buffers(self) -> None:
        """One reusable command buffer per model on queue (0,0) / (1,0): dispatches in block 0
        separated by execution barriers, then a return."""
        buffers, ops = [], []
        for cb_id, (executable_id, pdo) in ((1, (1, 0)), (2, (3, 1))):
            buffers.append(W.record("command-buffers", command_buffer_id=cb_id, mode=1, command_categories=3,
                                    queue_affinity=1, physical_device_ordinal=pdo))
            index = 0
            for ordinal, k in enumerate(self.functions[executable_id]):
                if ordinal:
                    ops.append(W.record("command-operations", type=1, command_index=index, command_buffer_id=cb_id,
                                        flags=F.OP_BLOCK_STRUCTURE | F.OP_EXECUTION_BARRIER, block_ordinal=0,
                                        block_command_ordinal=index))
                    index += 1
                ops.append(W.record("command-operations", type=2, command_index=index, command_buffer_id=cb_id,
                                    flags=F.OP_BLOCK_STRUCTURE | F.OP_STATIC_BINDINGS | F.OP_PREPUBLISHED_ARGUMENTS,
                                    block_ordinal=0, block_command_ordinal=index, executable_id=executable_id,
                                    function_ordinal=ordinal, binding_count=k.binding_count,
                                    workgroup_count=self.grid(executable_id, ordinal), workgroup_size=k.workgroup_size))
                index += 1
            ops.append(W.record("command-operations", type=9, command_index=index, command_buffer_id=cb_id,
                                flags=F.OP_BLOCK_STRUCTURE | F.OP_CONTROL_FLOW, block_ordinal=0,
                                block_command_ordinal=index))
        self.w.chunk("command-buffers", buffers, name=DEVICE_NAME)
        self.w.chunk("command-operations", ops, name=DEVICE_NAME)

    @staticmethod
    def grid(executable_id: int, ordinal: int) -> list[int]:
        return [4 * executable_id + 2 * ordinal, 1 + ordinal % 2, 1]

    # events --------------------------------------------------------------------------------------

    def queue_event(self, q: Queue, type_: int, submission_id: int, strategy: int, **fields) -> dict:
        e = dict(type=type_, dependency_strategy=strategy, event_id=self.next_queue_event, host_time_ns=self.t,
                 submission_id=submission_id, stream_id=q.stream_id, physical_device_ordinal=q.pdo,
                 queue_ordinal=q.ordinal, signal_count=1, operation_count=1,
                 ready_host_time_ns=self.t + self.rng.randint(300, 2500))
        e.update(fields)
        self.next_queue_event += 1
        self.queue_events.append(e)
        return e

    def memory_event(self, type_: int, **fields) -> None:
        self.memory_events.append(dict(type=type_, event_id=self.next_memory_event, host_time_ns=self.t, **fields))
        self.next_memory_event += 1

    def submit(self, q: Queue, executable_id: int, command_buffer_id: int) -> None:
        """One submission: queue event, device execution span, dispatches and their counters."""
        rng, clock = self.rng, self.clocks[q.pdo]
        sub = q.next_submission
        q.next_submission += 1
        kernels = self.functions[executable_id]
        if command_buffer_id:
            ev = self.queue_event(q, 3, sub, 1 if sub > 1 else 0, command_buffer_id=command_buffer_id,
                                  wait_count=1 if sub > 1 else 0, operation_count=2 * len(kernels))
        else:
            ev = self.queue_event(q, 2, sub, 2 if sub % 3 == 0 else 0, wait_count=1 if sub % 3 == 0 else 0,
                                  barrier_count=1 if sub % 3 == 0 else 0)
        start = clock.tick(ev["ready_host_time_ns"]) + rng.randint(300, 1500)
        t = start
        command_index = 0
        for ordinal, k in enumerate(kernels if command_buffer_id else kernels[:1]):
            duration = int((200 + 150 * executable_id + 80 * ordinal) * rng.uniform(0.85, 1.3))
            grid = self.grid(executable_id, ordinal)
            event = dict(flags=F.DISPATCH_COMMAND_BUFFER if command_buffer_id else 0, event_id=q.next_event,
                         submission_id=sub, command_buffer_id=command_buffer_id,
                         command_index=command_index if command_buffer_id else U32_MAX,
                         executable_id=executable_id, function_ordinal=ordinal, workgroup_count=grid,
                         workgroup_size=list(k.workgroup_size), start_tick=t, end_tick=t + duration)
            q.next_event += 1
            q.dispatches.append(event)
            waves = grid[0] * grid[1] * grid[2] * -(-k.workgroup_size[0] * k.workgroup_size[1] // 64)
            per_xcc = [waves // XCC_COUNT + (1 if x < waves % XCC_COUNT else 0) for x in range(XCC_COUNT)]
            busy = [int(duration * SHADER_CLOCK_HZ / TICK_HZ * rng.uniform(0.6, 0.95)) for _ in range(XCC_COUNT)]
            q.counter_samples.append(dict(
                values=per_xcc + busy, scope=1, sample_id=self.next_counter_sample,
                flags=F.SAMPLE_DISPATCH_EVENT | F.SAMPLE_DEVICE_TICK_RANGE
                | (F.SAMPLE_COMMAND_OPERATION if command_buffer_id else 0),
                counter_set_id=(q.pdo << 32) | 1, dispatch_event_id=event["event_id"], submission_id=sub,
                command_buffer_id=command_buffer_id, executable_id=executable_id, stream_id=q.stream_id,
                start_tick=event["start_tick"], end_tick=event["end_tick"], function_ordinal=ordinal,
                command_index=event["command_index"], physical_device_ordinal=q.pdo, queue_ordinal=q.ordinal))
            self.next_counter_sample += 1
            t += duration + rng.randint(40, 300)
            command_index += 2
        if command_buffer_id:
            q.device_events.append(dict(type=3, event_id=q.next_device_event, submission_id=sub,
                                        command_buffer_id=command_buffer_id, stream_id=q.stream_id,
                                        physical_device_ordinal=q.pdo, queue_ordinal=q.ordinal,
                                        operation_count=2 * len(kernels), start_tick=start - 80, end_tick=t + 60))
            q.next_device_event += 1

    def alloca(self, q: Queue, length: int) -> int:
        sub = q.next_submission
        q.next_submission += 1
        allocation = self.next_allocation
        self.next_allocation += 1
        self.queue_event(q, 9, sub, 0, allocation_id=allocation, payload_length=length)
        self.pool_reserved += length
        common = dict(allocation_id=allocation, pool_id=0x4BE0_0000 + q.pdo, submission_id=sub,
                      physical_device_ordinal=q.pdo, queue_ordinal=q.ordinal, memory_type=0x32, buffer_usage=0x3003,
                      length=length, alignment=256)
        self.memory_event(7, flags=F.MEMORY_QUEUE_OPERATION, **common)
        self.memory_event(3, flags=F.MEMORY_QUEUE_OPERATION | F.MEMORY_POOL_RESERVATION | F.MEMORY_POOL_STATS,
                          backing_id=0x5A00 + q.pdo, offset=(allocation * 0x10000) % (1 << 24),
                          pool_bytes_reserved=self.pool_reserved, pool_bytes_free=(64 << 20) - self.pool_reserved,
                          pool_bytes_committed=64 << 20, pool_budget_limit=1 << 32,
                          pool_reservation_count=1, pool_slab_count=1, **common)
        start = self.clocks[q.pdo].tick(self.t) + 500
        q.device_events.append(dict(type=9, event_id=q.next_device_event, submission_id=sub, allocation_id=allocation,
                                    stream_id=q.stream_id, payload_length=length, physical_device_ordinal=q.pdo,
                                    queue_ordinal=q.ordinal, operation_count=1, start_tick=start, end_tick=start + 40))
        q.next_device_event += 1
        return allocation

    def dealloca(self, q: Queue, allocation: int, length: int) -> None:
        sub = q.next_submission
        q.next_submission += 1
        self.queue_event(q, 10, sub, 1, allocation_id=allocation, wait_count=1, payload_length=length)
        self.pool_reserved -= length
        common = dict(allocation_id=allocation, pool_id=0x4BE0_0000 + q.pdo, submission_id=sub,
                      physical_device_ordinal=q.pdo, queue_ordinal=q.ordinal, memory_type=0x32, buffer_usage=0x3003,
                      length=length, alignment=256)
        self.memory_event(8, flags=F.MEMORY_QUEUE_OPERATION, **common)
        self.memory_event(5, flags=F.MEMORY_QUEUE_OPERATION | F.MEMORY_POOL_RESERVATION | F.MEMORY_POOL_STATS,
                          backing_id=0x5A00 + q.pdo, pool_bytes_reserved=self.pool_reserved,
                          pool_bytes_free=(64 << 20) - self.pool_reserved, pool_bytes_committed=64 << 20,
                          pool_budget_limit=1 << 32, pool_reservation_count=1, pool_slab_count=1, **common)

    # flushing ------------------------------------------------------------------------------------

    def clock_chunk(self) -> None:
        samples = []
        for clock in self.clocks:
            samples.append(clock.sample(self.next_sample, self.t))
            self.next_sample += 1
            self.t += 1_000
        self.w.chunk("clock-correlations", W.records("clock-correlations", **_columns(samples)), name=DEVICE_NAME)

    def flush(self) -> None:
        """Per-queue event chunks, then the logical device's rings, clocks and metric samples."""
        w = self.w
        for q in self.queues:
            meta = dict(physical_device_ordinal=q.pdo, queue_ordinal=q.ordinal, stream_id=q.stream_id)
            if q.dispatches:
                w.chunk("dispatch-events", W.records("dispatch-events", **_columns(q.dispatches)),
                        name="amdgpu.dispatch", **meta)
            if q.device_events:
                w.chunk("queue-device-events", W.records("queue-device-events", **_columns(q.device_events)),
                        name="amdgpu.queue_device", **meta)
            relationships = [dict(type=1, source_type=1, target_type=3, source_id=d["submission_id"],
                                  target_id=d["event_id"]) for d in q.dispatches]
            relationships += [dict(type=2, source_type=1, target_type=7, source_id=d["submission_id"],
                                   target_id=d["event_id"]) for d in q.device_events if d["submission_id"]]
            if relationships:
                for i, r in enumerate(relationships, start=1):  # ids count from 1 per flush
                    r.update(relationship_id=i, physical_device_ordinal=q.pdo, queue_ordinal=q.ordinal,
                             stream_id=q.stream_id)
                w.chunk("event-relationships", W.records("event-relationships", **_columns(relationships)),
                        name="amdgpu.relationships", **meta)
            if q.counter_samples:
                w.chunk("counter-samples", [W.counter_sample_record(**s) for s in q.counter_samples],
                        name="amdgpu.counter-samples", **meta)
            q.dispatches, q.device_events, q.counter_samples = [], [], []
        if self.queue_events:
            w.chunk("queue-events", W.records("queue-events", **_columns(self.queue_events)), name="amdgpu.queue")
        if self.memory_events:
            w.chunk("memory-events", W.records("memory-events", **_columns(self.memory_events)),
                    name="amdgpu.memory")
        self.queue_events, self.memory_events = [], []
        self.clock_chunk()
        for pdo in (0, 1):
            busy = self.rng.randint(35_000, 92_000)
            values = [(1, 2_100_000_000 - 100_000_000 * pdo), (2, 1_300_000_000),
                      (3, 41_000 + self.rng.randint(0, 9000)), (4, 55_000 + self.rng.randint(0, 12000)),
                      (6, 310_000_000 + self.rng.randint(0, 90_000_000)),
                      (8, busy), (10, (3 << 30) + self.rng.randint(0, 1 << 28)), (11, 192 << 30)]
            w.chunk("device-metric-samples", W.metric_sample_record(
                values, flags=F.METRIC_SOURCE_TIMESTAMP, sample_id=self.next_metric_sample, source_id=pdo + 1,
                host_time_begin_ns=self.t, host_time_end_ns=self.t + 18_000, source_timestamp=self.t // 10,
                source_timestamp_frequency_hz=100_000_000, physical_device_ordinal=pdo),
                name=f"amdgpu.metrics.{pdo}", stream_id=pdo + 1)
            self.next_metric_sample += 1
            self.t += 20_000


# metric_id: (name, description, unit, value_kind, semantic, plot_hint), built-in ids.
METRICS = {
    1: ("clock.compute.current", "Current compute (shader) clock.", 2, 2, 1, 4),
    2: ("clock.memory.current", "Current memory clock.", 2, 2, 1, 4),
    3: ("temperature.edge", "Edge temperature.", 6, 1, 1, 5),
    4: ("temperature.hotspot", "Hotspot (junction) temperature.", 6, 1, 1, 5),
    6: ("power.socket", "Average socket power.", 7, 2, 2, 6),
    8: ("activity.compute", "Graphics/compute activity.", 5, 2, 2, 3),
    10: ("memory.local.used", "Device-local memory in use.", 3, 2, 1, 2),
    11: ("memory.local.total", "Device-local memory size.", 3, 2, 5, 2),
}


def _columns(rows: list[dict]) -> dict:
    """Row dicts -> per-field columns for `W.records`; fields a row leaves out get 0, except the
    ordinals that IREE writes as absent (U32 MAX)."""
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    absent = {"command_index": U32_MAX, "function_ordinal": U32_MAX, "physical_device_ordinal": U32_MAX,
              "queue_ordinal": U32_MAX}
    return {k: [r.get(k, absent.get(k, 0)) for r in rows] for k in keys}


def write_amdgpu_sample(path: Path, code_objects: list[CodeObject]) -> None:
    with W.BundleWriter(path) as w:
        s = AmdgpuSession(w, code_objects)
        s.begin()
        s.t += 2_000_000
        s.load_executables()
        s.record_command_buffers()
        q00, q01, q10 = s.queues
        for flush in range(2):
            for iteration in range(6):
                allocation = s.alloca(q00, 4096 << iteration % 3)
                s.t += s.rng.randint(5_000, 9_000)
                s.submit(q00, 1, command_buffer_id=1)
                s.submit(q01, 2, command_buffer_id=0)
                s.t += s.rng.randint(2_000, 6_000)
                s.submit(q10, 3, command_buffer_id=2)
                s.t += s.rng.randint(30_000, 60_000)
                s.dealloca(q00, allocation, 4096 << iteration % 3)
                s.t += s.rng.randint(10_000, 20_000)
            s.t += 1_000_000
            s.flush()
        w.end_session(0)


def write_lossy_sample(path: Path) -> None:
    """A session whose lossy rings overflowed, ending RESOURCE_EXHAUSTED."""
    t = 1_712_399_000_000
    with W.BundleWriter(path) as w:
        w.begin_session(1, DEVICE_NAME)
        w.chunk("devices", W.device_record(0, 1), name=DEVICE_NAME)
        w.chunk("queues", W.record("queues", physical_device_ordinal=0, queue_ordinal=0), name=DEVICE_NAME)
        n = 16
        w.chunk("queue-events", W.records(
            "queue-events", type=[9, 3, 3, 10] * (n // 4), event_id=list(range(1, n + 1)),
            host_time_ns=[t + 10_000 * i for i in range(n)],
            ready_host_time_ns=[t + 10_000 * i + 700 for i in range(n)],
            submission_id=list(range(1, n + 1)), physical_device_ordinal=0, queue_ordinal=0, signal_count=1,
            operation_count=1), name="amdgpu.queue", dropped_record_count=4080)
        w.chunk("memory-events", W.records(
            "memory-events", type=[7, 8] * (n // 2), event_id=list(range(1, n + 1)),
            host_time_ns=[t + 10_000 * i + 5 for i in range(n)], allocation_id=[1 + i // 2 for i in range(n)],
            flags=F.MEMORY_QUEUE_OPERATION, physical_device_ordinal=0, queue_ordinal=0, length=65536,
            alignment=256), name="amdgpu.memory", dropped_record_count=12)
        w.chunk("memory-events", None, name="amdgpu.memory", dropped_record_count=30)
        w.end_session(8)  # RESOURCE_EXHAUSTED


def write_samples(out_dir: Path = OUT_DIR, code_objects: list[CodeObject] | None = None) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    if code_objects is None:
        code_objects = compile_code_objects()
    paths = [out_dir / "amdgpu-sample.ireeprof", out_dir / "amdgpu-lossy.ireeprof"]
    write_amdgpu_sample(paths[0], code_objects)
    write_lossy_sample(paths[1])
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="output folder")
    args = parser.parse_args(argv)
    for path in write_samples(args.out):
        print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

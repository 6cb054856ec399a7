"""`export --format=ireeperf-jsonl` against IREE 3.13.0's `iree-profile export`.

Our output must be byte-identical to iree-profile's: on every real fixture bundle (local-task and
local-sync captures), and on synthetic AMDGPU-style bundles written here with the schema dtypes,
which carry what local drivers never record: all 23 content types, clock fits (good, unaligned,
single-sample, extrapolated, overflowing), invalid tick pairs, truncated chunks, unknown chunks and
record types, counter and metric samples (f64 values as %.17g). Broken bundles must stop with
iree-profile's exit status after exactly the rows iree-profile wrote before failing.

`Synth` is also used by the Perfetto and plot tests.
"""

from __future__ import annotations

import io
import json
import shutil
import struct
import subprocess
import sys

import numpy as np
import pytest

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.jsonl import dumps
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports import export

MAX = schema.U32_MAX
F = schema.Flags
CLOCK_ALL = (F.CLOCK_DEVICE_TICK | F.CLOCK_HOST_CPU_TIMESTAMP | F.CLOCK_HOST_SYSTEM_TIMESTAMP
             | F.CLOCK_HOST_TIME_BRACKET)


# --- synthetic bundles ----------------------------------------------------------------------------

def typed(dtype: np.dtype, tail: bytes = b"", *, record_length: int | None = None,
          **fields) -> bytes:
    """One typed record of `dtype` (+ trailing bytes) with the given fields set."""
    rec = np.zeros(1, dtype)
    rec["record_length"] = dtype.itemsize + len(tail) if record_length is None else record_length
    for name, value in fields.items():
        rec[name] = value
    return rec.tobytes() + tail


def function(executable_id: int, ordinal: int, name: str, **fields) -> bytes:
    n = name.encode()
    return typed(schema.FUNCTION, n, executable_id=executable_id, function_ordinal=ordinal,
                 name_length=len(n), **fields)


def with_strings(dtype, *strings: str, names: tuple[str, ...], **fields) -> bytes:
    data = [s.encode() for s in strings]
    return typed(dtype, b"".join(data), **dict(zip(names, map(len, data))), **fields)


def metric_sample(values: list[tuple[int, int, int]], **fields) -> bytes:
    tail = b"".join(struct.pack("<QQII", m, bits, flags, 0) for m, bits, flags in values)
    return typed(schema.METRIC_SAMPLE, tail, value_count=len(values), **fields)


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


class Synth:
    """Writes raw .ireeprof bytes: records back to back after a 24-byte header."""

    def __init__(self) -> None:
        self.records: list[bytes] = []

    def record(self, record_type: int, content_type: str | bytes, payload: bytes = b"", *,
               name: str = "amdgpu", session_id: int = 1, stream: int = 0, pdo: int = MAX,
               queue: int = MAX, chunk_flags: int = 0, dropped: int = 0, status: int = 0,
               event_id: int = 0) -> "Synth":
        ct = content_type if isinstance(content_type, bytes) else content_type.encode()
        nm = name.encode()
        h = np.zeros(1, schema.RECORD_HEADER)
        h["header_length"] = schema.RECORD_HEADER.itemsize
        h["record_length"] = schema.RECORD_HEADER.itemsize + len(ct) + len(nm) + len(payload)
        h["payload_length"] = len(payload)
        h["content_type_length"], h["name_length"] = len(ct), len(nm)
        h["session_id"], h["stream_id"], h["event_id"] = session_id, stream, event_id
        h["record_type"] = record_type
        h["physical_device_ordinal"], h["queue_ordinal"] = pdo, queue
        h["chunk_flags"], h["dropped_record_count"] = chunk_flags, dropped
        h["session_status_code"] = status
        self.records.append(h.tobytes() + ct + nm + payload)
        return self

    def chunk(self, suffix: str, *payloads: bytes, **kw) -> "Synth":
        return self.record(schema.RecordType.CHUNK, schema.CONTENT_TYPE_PREFIX + suffix,
                           b"".join(payloads), **kw)

    def begin(self, **kw) -> "Synth":
        return self.record(schema.RecordType.SESSION_BEGIN, schema.CONTENT_TYPE_PREFIX + "session",
                           **kw)

    def end(self, **kw) -> "Synth":
        return self.record(schema.RecordType.SESSION_END, schema.CONTENT_TYPE_PREFIX + "session",
                           **kw)

    def bytes(self, *, tail: bytes = b"", finalized: bool = True) -> bytes:
        body = b"".join(self.records) + tail
        h = np.zeros(1, schema.FILE_HEADER)
        h["magic"], h["version_major"], h["version_minor"] = schema.MAGIC, 1, 6
        h["header_length"] = schema.FILE_HEADER.itemsize
        h["file_length"] = schema.FILE_HEADER.itemsize + len(body) if finalized else 0
        return h.tobytes() + body

    def write(self, path, **kw) -> str:
        with open(path, "wb") as f:
            f.write(self.bytes(**kw))
        return str(path)


def device_metadata(s: Synth) -> Synth:
    """Two GPUs with one queue each, executables with named and nameless functions, one
    command buffer with a few operations, and a clock fit on device 0 only."""
    s.begin()
    s.chunk("devices",
            typed(schema.DEVICE, flags=F.DEVICE_UUID, physical_device_ordinal=0, queue_count=1,
                  physical_device_uuid=list(range(16))),
            typed(schema.DEVICE, physical_device_ordinal=1, queue_count=1))
    s.chunk("queues",
            typed(schema.QUEUE, physical_device_ordinal=0, queue_ordinal=0, stream_id=0),
            typed(schema.QUEUE, physical_device_ordinal=1, queue_ordinal=0, stream_id=1 << 32))
    s.chunk("executables",
            typed(schema.EXECUTABLE, flags=F.CODE_OBJECT_HASH, executable_id=1, function_count=2,
                  code_object_hash=(0x0123456789ABCDEF, 0xFEDCBA9876543210)),
            typed(schema.EXECUTABLE, executable_id=2, function_count=1))
    s.chunk("executable-functions",
            function(1, 0, "matmul_kernel", flags=F.FUNCTION_HASH, function_hash=(1, 2 ** 64 - 1),
                     workgroup_size=(64, 2, 1), constant_count=3, binding_count=4,
                     parameter_count=5),
            function(1, 1, 'odd "name"\n\t\x01 é%d'),
            function(2, 0, ""))
    s.chunk("command-buffers",
            typed(schema.COMMAND_BUFFER, command_buffer_id=7, mode=128, command_categories=3,
                  queue_affinity=2 ** 64 - 1, physical_device_ordinal=0))
    block = dict(block_ordinal=MAX, block_command_ordinal=MAX, target_block_ordinal=MAX,
                 alternate_block_ordinal=MAX, source_ordinal=MAX, target_ordinal=MAX)
    s.chunk("command-operations",
            typed(schema.COMMAND_OPERATION, type=2, command_buffer_id=7, command_index=0,
                  executable_id=1, function_ordinal=0, binding_count=2,
                  workgroup_count=(8, 4, 2), workgroup_size=(64, 1, 1), **block),
            typed(schema.COMMAND_OPERATION, type=2, command_buffer_id=7, command_index=1,
                  executable_id=2, function_ordinal=0, **block),
            typed(schema.COMMAND_OPERATION, type=1, flags=F.OP_EXECUTION_BARRIER,
                  command_buffer_id=7, command_index=2, function_ordinal=MAX, **block),
            typed(schema.COMMAND_OPERATION, type=4, command_buffer_id=7, command_index=3,
                  function_ordinal=MAX, source_offset=16, target_offset=32, length=4096,
                  **{**block, "source_ordinal": 0, "target_ordinal": 1}),
            typed(schema.COMMAND_OPERATION, type=7, flags=F.OP_BLOCK_STRUCTURE | F.OP_CONTROL_FLOW,
                  command_buffer_id=7, command_index=4, function_ordinal=MAX, block_ordinal=0,
                  block_command_ordinal=4, target_block_ordinal=1, alternate_block_ordinal=MAX,
                  source_ordinal=MAX, target_ordinal=MAX),
            typed(schema.COMMAND_OPERATION, type=42, command_buffer_id=7, command_index=5,
                  function_ordinal=MAX, **block))
    s.chunk("clock-correlations",
            typed(schema.CLOCK_CORRELATION, flags=CLOCK_ALL, physical_device_ordinal=0,
                  sample_id=1, device_tick=1_000_000, host_cpu_timestamp_ns=5_000_000_000,
                  host_system_timestamp=77, host_system_frequency_hz=1_000_000_000,
                  host_time_begin_ns=900, host_time_end_ns=1000),
            typed(schema.CLOCK_CORRELATION, flags=CLOCK_ALL | F.CLOCK_DEVICE_TICK_UNALIGNED,
                  physical_device_ordinal=1, sample_id=1, device_tick=10, host_cpu_timestamp_ns=10,
                  host_time_begin_ns=1000, host_time_end_ns=900))
    return s


def full_device_bundle() -> Synth:
    """Every content type, events before and after metadata, and every diagnostic."""
    s = Synth()
    # A dispatch chunk before any metadata (pass one sees the whole file first).
    s.chunk("dispatch-events",
            typed(schema.DISPATCH_EVENT, event_id=1, submission_id=1, executable_id=1,
                  function_ordinal=0, command_index=MAX, workgroup_count=(8, 1, 1),
                  workgroup_size=(64, 1, 1), start_tick=1_100_000, end_tick=1_100_500),
            name="amdgpu.dispatch", pdo=0, queue=0, stream=0)
    device_metadata(s)
    s.chunk("executable-code-objects",
            typed(schema.CODE_OBJECT, b"\x7fELF", executable_id=1, code_object_id=1,
                  data_length=4))
    s.chunk("executable-code-object-loads",
            typed(schema.CODE_OBJECT_LOAD, physical_device_ordinal=0, executable_id=1,
                  code_object_id=1, load_delta=-4096, load_size=8192))
    s.chunk("dispatch-events",
            typed(schema.DISPATCH_EVENT, flags=F.DISPATCH_COMMAND_BUFFER, event_id=2,
                  submission_id=2, command_buffer_id=7, command_index=0, executable_id=1,
                  function_ordinal=0, start_tick=1_200_000, end_tick=1_203_333),
            typed(schema.DISPATCH_EVENT, event_id=3, submission_id=2, executable_id=1,
                  function_ordinal=1, start_tick=0, end_tick=5),                  # invalid
            typed(schema.DISPATCH_EVENT, event_id=4, submission_id=2, executable_id=2,
                  function_ordinal=0, start_tick=900, end_tick=800),              # reversed
            typed(schema.DISPATCH_EVENT, event_id=5, submission_id=3, executable_id=2,
                  function_ordinal=0, start_tick=1, end_tick=3),                  # before the fit
            typed(schema.DISPATCH_EVENT, event_id=6, submission_id=3, executable_id=1,
                  function_ordinal=0, start_tick=2_000_000, end_tick=2 ** 64 - 1),  # overflow
            typed(schema.DISPATCH_EVENT, event_id=7, executable_id=1, function_ordinal=0,
                  start_tick=1_300_001, end_tick=1_300_002, record_length=96) + bytes(8),
            name="amdgpu.dispatch", pdo=0, queue=0, stream=0)
    s.chunk("dispatch-events",
            typed(schema.DISPATCH_EVENT, event_id=1, executable_id=2, function_ordinal=0,
                  start_tick=10, end_tick=20),                          # a device without a fit
            name="amdgpu.dispatch", pdo=1, queue=0, stream=1 << 32)
    s.chunk("clock-correlations",
            typed(schema.CLOCK_CORRELATION, flags=CLOCK_ALL, physical_device_ordinal=0,
                  sample_id=2, device_tick=1_300_000, host_cpu_timestamp_ns=5_000_000_000 + 3001,
                  host_time_begin_ns=2000, host_time_end_ns=2100),
            typed(schema.CLOCK_CORRELATION, flags=CLOCK_ALL, physical_device_ordinal=1,
                  sample_id=2, device_tick=20, host_cpu_timestamp_ns=40))
    s.chunk("queue-events", *[
        typed(schema.QUEUE_EVENT, type=t, flags=t & 1, dependency_strategy=t % 5, event_id=t,
              host_time_ns=1000 * t - 5000, submission_id=t, command_buffer_id=7,
              allocation_id=t * 3, stream_id=0, physical_device_ordinal=0, queue_ordinal=0,
              wait_count=t, signal_count=1, barrier_count=2, operation_count=3,
              payload_length=2 ** 40, ready_host_time_ns=-1 if t == 3 else 1000 * t)
        for t in (*range(12), 99)], name="amdgpu.queue")
    s.chunk("queue-events",
            typed(schema.QUEUE_EVENT, type=9, event_id=100, physical_device_ordinal=0,
                  queue_ordinal=0),
            name="amdgpu.queue", chunk_flags=1, dropped=7)
    s.chunk("queue-events", name="amdgpu.queue", dropped=3, chunk_flags=1)   # drops only
    s.chunk("queue-device-events",
            typed(schema.QUEUE_DEVICE_EVENT, type=3, event_id=1, submission_id=2,
                  command_buffer_id=7, stream_id=0, payload_length=9, physical_device_ordinal=0,
                  queue_ordinal=0, operation_count=3, start_tick=1_250_000, end_tick=1_250_300),
            typed(schema.QUEUE_DEVICE_EVENT, type=9, flags=1, event_id=2, allocation_id=4,
                  physical_device_ordinal=0, queue_ordinal=0, start_tick=5, end_tick=0),
            typed(schema.QUEUE_DEVICE_EVENT, type=77, event_id=3, physical_device_ordinal=1,
                  queue_ordinal=0, stream_id=1 << 32, start_tick=11, end_tick=19),
            name="amdgpu.queue_device")
    s.chunk("host-execution-events",
            typed(schema.HOST_EXECUTION_EVENT, type=2,
                  flags=F.HOST_COMMAND_BUFFER | F.HOST_DEFERRED,
                  status_code=MAX, event_id=1, submission_id=1, command_buffer_id=7,
                  executable_id=1, function_ordinal=1, physical_device_ordinal=0,
                  queue_ordinal=0, command_index=0, workgroup_count=(2, 3, 4),
                  workgroup_size=(8, 8, 1), start_host_time_ns=100, end_host_time_ns=350,
                  payload_length=0, tile_count=24, tile_duration_sum_ns=900, operation_count=1),
            typed(schema.HOST_EXECUTION_EVENT, type=9, status_code=0, event_id=2,
                  function_ordinal=MAX, physical_device_ordinal=0, queue_ordinal=0,
                  command_index=MAX, start_host_time_ns=400, end_host_time_ns=300),  # invalid
            typed(schema.HOST_EXECUTION_EVENT, type=2, event_id=3, executable_id=2,
                  function_ordinal=0, physical_device_ordinal=MAX, queue_ordinal=MAX,
                  start_host_time_ns=-5, end_host_time_ns=10),                    # nameless key
            typed(schema.HOST_EXECUTION_EVENT, type=2, event_id=4, executable_id=2,
                  function_ordinal=0, physical_device_ordinal=1, queue_ordinal=0,
                  start_host_time_ns=500, end_host_time_ns=500),
            name="local.host")
    s.chunk("command-region-events",
            typed(schema.COMMAND_REGION_EVENT, flags=0xF, event_id=1, submission_id=2,
                  command_buffer_id=7, stream_id=0, physical_device_ordinal=0, queue_ordinal=0,
                  block_sequence=3, epoch=4, index=-1, dispatch_count=5, tile_count=6,
                  width_bucket=7, lookahead_width_bucket=8, useful_drain_count=9,
                  no_work_drain_count=10, tail_count=11, tail_remaining_tiles_min=12,
                  tail_remaining_tiles_max=13,
                  tail_remaining_tiles_bucket_counts=list(range(20, 28)),
                  tail_first_start_host_time_ns=-14, tail_last_end_host_time_ns=15,
                  tail_start_offset_ns=16, tail_drain_duration_ns=17,
                  first_useful_drain_start_host_time_ns=18,
                  last_useful_drain_end_host_time_ns=19, start_host_time_ns=1000,
                  end_host_time_ns=2500, next_index=-1, next_tile_count=29, next_width_bucket=30,
                  next_lookahead_width_bucket=31, worker_count=32, old_wake_budget=-33,
                  new_wake_budget=34, wake_delta=-35, keep_active_count=36,
                  publish_keep_active_count=37, keep_warm_count=38),
            typed(schema.COMMAND_REGION_EVENT, event_id=2, index=2, next_index=3,
                  start_host_time_ns=-1, end_host_time_ns=5))
    s.chunk("memory-events", *[
        typed(schema.MEMORY_EVENT, type=t, flags=(t * 7) & 0x3F, result=MAX if t % 2 else 0,
              event_id=t, host_time_ns=1000 + t, allocation_id=t + 100, pool_id=5,
              backing_id=6, submission_id=t, physical_device_ordinal=0, queue_ordinal=0,
              frontier_entry_count=2, memory_type=50, buffer_usage=3, offset=t * 256,
              length=256 * t, alignment=64, pool_bytes_reserved=1 << 33, pool_bytes_free=12,
              pool_bytes_committed=13, pool_budget_limit=2 ** 64 - 1,
              pool_reservation_count=14, pool_slab_count=15)
        for t in (*range(13), 200)], name="amdgpu.memory")
    s.chunk("event-relationships", *[
        typed(schema.EVENT_RELATIONSHIP, type=t, relationship_id=t + 1, source_type=t * 2 % 10,
              target_type=(t * 2 + 1) % 10, physical_device_ordinal=0, queue_ordinal=0,
              stream_id=0, source_id=t, source_secondary_id=MAX, target_id=t + 10,
              target_secondary_id=2)
        for t in range(6)], name="amdgpu.relationships")
    s.chunk("counter-sets",
            with_strings(schema.COUNTER_SET, "amdgpu.pmc", names=("name_length",),
                         counter_set_id=(0 << 32) | 1, physical_device_ordinal=0,
                         counter_count=2, sample_value_count=3))
    s.chunk("counters",
            with_strings(schema.COUNTER, "SQ", "SQ_WAVES", "Raw \"waves\".",
                         names=("block_name_length", "name_length", "description_length"),
                         flags=F.COUNTER_RAW, unit=1, physical_device_ordinal=0,
                         counter_set_id=1, counter_ordinal=0, sample_value_offset=0,
                         sample_value_count=2),
            with_strings(schema.COUNTER, "", "BUSY", "",
                         names=("block_name_length", "name_length", "description_length"),
                         unit=9, physical_device_ordinal=0, counter_set_id=1, counter_ordinal=1,
                         sample_value_offset=2, sample_value_count=1))
    s.chunk("counter-samples",
            typed(schema.COUNTER_SAMPLE, np.array([10, 20, 2 ** 64 - 1], "<u8").tobytes(),
                  flags=F.SAMPLE_DISPATCH_EVENT | F.SAMPLE_DEVICE_TICK_RANGE, scope=1,
                  sample_id=1, counter_set_id=1, dispatch_event_id=2, submission_id=2,
                  command_buffer_id=7, executable_id=1, stream_id=0, start_tick=1_200_000,
                  end_tick=1_203_333, command_index=0, function_ordinal=0,
                  physical_device_ordinal=0, queue_ordinal=0, sample_value_count=3),
            typed(schema.COUNTER_SAMPLE, np.array([1, 2, 3], "<u8").tobytes(),
                  flags=0, scope=3, sample_id=2, counter_set_id=1, start_tick=50, end_tick=60,
                  command_index=MAX, function_ordinal=MAX, physical_device_ordinal=0,
                  queue_ordinal=0, sample_value_count=3),
            typed(schema.COUNTER_SAMPLE, flags=F.SAMPLE_DEVICE_TICK_RANGE, scope=9,
                  sample_id=3, counter_set_id=1, start_tick=70, end_tick=60,
                  command_index=MAX, function_ordinal=MAX, physical_device_ordinal=1,
                  queue_ordinal=0, sample_value_count=0),
            name="amdgpu.counter-samples", pdo=0, queue=0, stream=0)
    s.chunk("device-metric-sources",
            with_strings(schema.METRIC_SOURCE, "amdgpu.sysfs.0000:03:00.0", names=("name_length",),
                         source_id=1, physical_device_ordinal=0, device_class=2, source_kind=1,
                         source_revision=0x0104, metric_count=5),
            with_strings(schema.METRIC_SOURCE, "other", names=("name_length",), source_id=2,
                         physical_device_ordinal=1, device_class=0x7FFFFFFF),
            with_strings(schema.METRIC_SOURCE, "", names=("name_length",), source_id=3,
                         device_class=7))
    def descriptor(source, metric, name, unit, kind, semantic, hint, desc=""):
        return with_strings(schema.METRIC_DESCRIPTOR, name, desc,
                            names=("name_length", "description_length"), source_id=source,
                            metric_id=metric, unit=unit, value_kind=kind, semantic=semantic,
                            plot_hint=hint)

    s.chunk("device-metric-descriptors",
            descriptor(1, 1, "clock.compute.current", 2, 2, 1, 4, "Current \"shader\" clock."),
            descriptor(1, 3, "temperature.edge", 6, 1, 1, 5),
            descriptor(1, 8, "activity.compute", 5, 3, 2, 3),
            descriptor(1, 2 ** 63 + 5, "vendor.thing", 77, 9, 0, 0),
            descriptor(1, 0, "zero", 0, 0, 9, 99))
    s.chunk("device-metric-samples",
            metric_sample([(1, 2_100_000_000, 0), (3, 2 ** 64 - 45_000, 0),
                           (8, f64_bits(0.1), 0), (2 ** 63 + 5, 5, 2), (0, 9, 0)],
                          flags=F.METRIC_SOURCE_TIMESTAMP, sample_id=1, source_id=1,
                          host_time_begin_ns=100, host_time_end_ns=140, source_timestamp=999,
                          source_timestamp_frequency_hz=100_000_000, physical_device_ordinal=0),
            metric_sample([(8, f64_bits(v), 1) for v in (1e300, -0.0, 3.0, 2.5e-310, 1 / 3)],
                          flags=F.METRIC_PARTIAL, sample_id=2, source_id=1,
                          host_time_begin_ns=200, host_time_end_ns=150, physical_device_ordinal=0),
            metric_sample([], sample_id=3, source_id=2),
            name="amdgpu.metrics", stream=1)
    trace = typed(schema.EXECUTABLE_TRACE, format=1, flags=F.TRACE_DISPATCH_EVENT,
                  shader_engine=2, trace_id=1, dispatch_event_id=2, submission_id=2,
                  command_buffer_id=7, executable_id=1, stream_id=0, command_index=0,
                  function_ordinal=0, physical_device_ordinal=0, queue_ordinal=0,
                  data_length=5) + b"\x01\x02\x03\x04\x05"
    s.chunk("executable-traces", trace, name="amdgpu.att", pdo=0, queue=0, event_id=2)
    s.chunk("executable-traces", typed(schema.EXECUTABLE_TRACE, format=5, trace_id=2,
                                       command_index=MAX, function_ordinal=MAX,
                                       physical_device_ordinal=0, queue_ordinal=0))
    s.record(schema.RecordType.CHUNK, "application/x-unknown\"thing\"", b"abc")
    s.record(schema.RecordType.CHUNK, schema.CONTENT_TYPE_PREFIX + "session")
    s.record(schema.RecordType.CHUNK, schema.CONTENT_TYPE_PREFIX + "future-thing", b"\0" * 8,
             chunk_flags=1, dropped=2)
    s.record(4, schema.CONTENT_TYPE_PREFIX + "queues", typed(schema.QUEUE))
    s.record(0, "")
    s.end(status=15)
    s.begin(session_id=2, name="second")
    s.end(session_id=2, status=1234)
    return s


# --- comparison -----------------------------------------------------------------------------------

def ours(data: bytes) -> tuple[str, int]:
    """(text, exit status) of our export, as the CLI would write it."""
    out = []
    try:
        for text in export.lines(Bundle.from_bytes(data)):
            out.append(text)
    except AmdgpuCliError as e:
        return "".join(out), e.exit_code
    return "".join(out), 0


def theirs(iree_profile, path) -> tuple[str, int]:
    result = iree_profile(["export", "--format=ireeperf-jsonl", path])
    return result.stdout, result.returncode


def assert_same(iree_profile, tmp_path, synth: Synth, **kw) -> str:
    path = synth.write(tmp_path / "b.ireeprof", **kw)
    expected, status = theirs(iree_profile, path)
    text, code = ours(open(path, "rb").read())
    assert code == status
    exp_lines, our_lines = expected.splitlines(), text.splitlines()
    for k, (a, b) in enumerate(zip(exp_lines, our_lines)):
        assert b == a, f"line {k}"
    assert len(our_lines) == len(exp_lines)
    assert text == expected
    return text


# --- real bundles ---------------------------------------------------------------------------------

def test_fixture_bundles_match_iree(iree_bundles, iree_profile):
    for key, path in iree_bundles.items():
        expected, status = theirs(iree_profile, path)
        assert status == 0, key
        text, code = ours(path.read_bytes())
        assert code == 0, key
        assert text == expected, key


def test_cli_writes_stdout_and_output_file(iree_bundles, iree_profile, tmp_path):
    path = iree_bundles["mlp-local-task-full"]
    expected, _ = theirs(iree_profile, path)
    run = lambda *args: subprocess.run(  # noqa: E731
        [sys.executable, "-c", "import sys; from amdgpu_cli.cli.main import profile_main; "
         "profile_main(sys.argv[1:])", *map(str, args)], capture_output=True, text=True,
        timeout=60)
    result = run("export", "--format=ireeperf-jsonl", path)
    assert result.returncode == 0 and result.stdout == expected
    out = tmp_path / "out.jsonl"
    result = run("export", "--output", out, path)
    assert result.returncode == 0 and result.stdout == ""
    assert out.read_text() == expected


def test_report_rows_are_dicts_that_write_back_identically(tmp_path, iree_profile):
    text = assert_same(iree_profile, tmp_path, full_device_bundle())
    rows = list(export.report(Bundle.from_bytes(open(tmp_path / "b.ireeprof", "rb").read())))
    assert all(isinstance(r, dict) for r in rows)
    assert "".join(dumps(r) + "\n" for r in rows) == text
    by_type = {}
    for r in rows:
        by_type.setdefault(r["record_type"], []).append(r)
    assert list(by_type["schema"][0])[:3] == ["schema_version", "record_type", "format"]
    dispatch = by_type["dispatch_event"][1]
    assert dispatch["key"] == "matmul_kernel" and dispatch["derived_time_available"] is True


# --- synthetic bundles ----------------------------------------------------------------------------

def test_all_content_types_match_iree(iree_profile, tmp_path):
    text = assert_same(iree_profile, tmp_path, full_device_bundle())
    kinds = {json.loads(line)["record_type"] for line in text.splitlines()}
    assert kinds == {
        "schema", "session", "device", "queue", "executable", "executable_function",
        "command_buffer", "command_operation", "clock_correlation", "dispatch_event",
        "queue_event", "queue_device_event", "host_execution_event", "command_region_event",
        "memory_event", "event_relationship", "counter_set", "counter", "counter_sample",
        "device_metric_source", "device_metric_descriptor", "device_metric_sample",
        "executable_trace", "diagnostic"}
    categories = {json.loads(line).get("category") for line in text.splitlines()}
    assert {"unknown_chunk", "unknown_record", "truncated_chunk"} <= categories


def test_clock_fit_edge_cases_match_iree(iree_profile, tmp_path):
    """Fits from bracket-only samples (none), a single sample, equal ticks, and a big span."""
    s = Synth().begin()
    s.chunk("queues", *[typed(schema.QUEUE, physical_device_ordinal=d, queue_ordinal=0)
                        for d in range(5)])
    s.chunk("executables", typed(schema.EXECUTABLE, executable_id=1, function_count=1))
    s.chunk("executable-functions", function(1, 0, "k"))
    clock = lambda d, sid, tick, ns, flags=CLOCK_ALL: typed(  # noqa: E731
        schema.CLOCK_CORRELATION, flags=flags, physical_device_ordinal=d, sample_id=sid,
        device_tick=tick, host_cpu_timestamp_ns=ns, host_time_begin_ns=min(ns, 2 ** 62),
        host_time_end_ns=min(ns, 2 ** 62) + 10)
    bracket = F.CLOCK_DEVICE_TICK | F.CLOCK_HOST_TIME_BRACKET
    s.chunk("clock-correlations", clock(0, 1, 100, 1000, bracket), clock(0, 2, 200, 2000, bracket),
            clock(1, 1, 100, 1000), clock(2, 1, 100, 1000), clock(2, 2, 100, 2000),
            clock(3, 1, 0, 1000), clock(3, 2, 3, 1001),
            clock(4, 1, 10, 2 ** 62), clock(4, 2, 2 ** 63, 2 ** 63 - 1))
    for d in range(5):
        s.chunk("dispatch-events", *[
            typed(schema.DISPATCH_EVENT, event_id=k, executable_id=1, function_ordinal=0,
                  start_tick=start, end_tick=end)
            for k, (start, end) in enumerate([(1000, 1003), (150, 190), (1, 2),
                                              (2 ** 63, 2 ** 64 - 1), (5, 5)])], pdo=d, queue=0)
    s.end()
    assert_same(iree_profile, tmp_path, s)


def test_big_event_chunks_span_blocks(iree_profile, tmp_path, monkeypatch):
    """Rows of several types interleave correctly across formatting blocks."""
    monkeypatch.setattr(export, "BLOCK_RECORDS", 3)
    s = device_metadata(Synth())
    for k in range(7):
        s.chunk("queue-events", *[typed(schema.QUEUE_EVENT, type=3, event_id=k * 10 + j)
                                  for j in range(k)], chunk_flags=k % 2, dropped=k % 2)
        s.chunk("dispatch-events", *[typed(schema.DISPATCH_EVENT, event_id=k * 10 + j,
                                           executable_id=1, function_ordinal=0,
                                           start_tick=1_000_000 + j, end_tick=1_000_100 + j)
                                     for j in range(3)], pdo=0, queue=0)
        s.record(schema.RecordType.CHUNK, "x-unknown")
    s.end()
    assert_same(iree_profile, tmp_path, s)


# --- broken bundles: the same rows, then the same exit status -------------------------------------

def _events_then(bad: bytes, suffix: str = "dispatch-events", **kw) -> Synth:
    s = device_metadata(Synth())
    s.chunk("queue-events", typed(schema.QUEUE_EVENT, type=3, event_id=1))
    good = typed(schema.DISPATCH_EVENT, event_id=1, executable_id=1, function_ordinal=0,
                 start_tick=1_000_010, end_tick=1_000_020)
    s.chunk("dispatch-events", good, pdo=0, queue=0)
    s.chunk(suffix, bad, **kw)
    s.chunk("queue-events", typed(schema.QUEUE_EVENT, type=3, event_id=2))
    return s.end()


DISPATCH_OK = typed(schema.DISPATCH_EVENT, event_id=9, executable_id=1, function_ordinal=0,
                    start_tick=5, end_tick=6)

BROKEN = {
    "torn dispatch record": (DISPATCH_OK + DISPATCH_OK[:40], "dispatch-events"),
    "short record_length": (DISPATCH_OK + typed(schema.DISPATCH_EVENT, record_length=8),
                            "dispatch-events"),
    "record_length past payload": (typed(schema.MEMORY_EVENT, type=1) + typed(
        schema.MEMORY_EVENT, record_length=400), "memory-events"),
    "unknown function": (DISPATCH_OK + typed(schema.DISPATCH_EVENT, executable_id=1,
                                             function_ordinal=9), "dispatch-events"),
    "unknown executable": (DISPATCH_OK + typed(schema.DISPATCH_EVENT, executable_id=99),
                           "dispatch-events"),
    "host span of unknown function": (typed(schema.HOST_EXECUTION_EVENT, executable_id=5,
                                            function_ordinal=0), "host-execution-events"),
    "torn devices": (typed(schema.DEVICE)[:20], "devices"),
    "counter set name length": (with_strings(schema.COUNTER_SET, "abc", names=(),
                                             name_length=2), "counter-sets"),
    "counter strings": (with_strings(schema.COUNTER, "a", "b", "c",
                                     names=("block_name_length", "name_length")), "counters"),
    "counter sample values": (typed(schema.COUNTER_SAMPLE, bytes(16), sample_value_count=3),
                              "counter-samples"),
    "metric sample values": (typed(schema.METRIC_SAMPLE, bytes(24), value_count=2),
                             "device-metric-samples"),
    "metric without descriptor": (metric_sample([(1, 1, 0)], source_id=1)
                                  + metric_sample([(7, 1, 0)], source_id=1),
                                  "device-metric-samples"),
    "trace record length": (typed(schema.EXECUTABLE_TRACE, b"xy", data_length=2,
                                  record_length=90), "executable-traces"),
    "trace data length": (typed(schema.EXECUTABLE_TRACE, b"xy", data_length=3, record_length=88),
                          "executable-traces"),
    "trace too short": (b"\x58" + bytes(40), "executable-traces"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_event_chunks_stop_where_iree_stops(iree_profile, tmp_path, case):
    bad, suffix = BROKEN[case]
    s = _events_then(bad, suffix, pdo=0, queue=0)
    s.records.insert(-1, Synth().chunk(  # a descriptor for the metric case; harmless elsewhere
        "device-metric-descriptors", with_strings(
            schema.METRIC_DESCRIPTOR, "m", "", names=("name_length", "description_length"),
            source_id=1, metric_id=1, value_kind=2)).records[0])
    text = assert_same(iree_profile, tmp_path, s)
    assert ours(s.bytes())[1] == 1 and text.count("\n") >= 8


def test_pass_one_failures_write_nothing(iree_profile, tmp_path):
    cases = []
    s = Synth().begin()                                   # function before its executable
    s.chunk("executable-functions", function(1, 0, "k"))
    s.chunk("executables", typed(schema.EXECUTABLE, executable_id=1))
    cases.append(s)
    s = device_metadata(Synth())                          # function name length mismatch
    s.chunk("executable-functions", typed(schema.FUNCTION, b"abc", executable_id=1, name_length=2))
    cases.append(s)
    s = device_metadata(Synth())                          # torn queues chunk
    s.chunk("queues", typed(schema.QUEUE)[:10])
    cases.append(s)
    s = device_metadata(Synth())                          # block coordinates without the flag
    s.chunk("command-operations", typed(schema.COMMAND_OPERATION, command_buffer_id=7,
                                        block_ordinal=0))
    cases.append(s)
    for k, s in enumerate(cases):
        path = s.end().write(tmp_path / f"p{k}.ireeprof")
        expected, status = theirs(iree_profile, path)
        assert (expected, status) == ("", 1)
        assert ours(open(path, "rb").read()) == ("", 1)


def test_torn_file_tail_fails_before_any_row(iree_profile, tmp_path):
    s = device_metadata(Synth()).end()
    assert_same(iree_profile, tmp_path, s, tail=b"\x01" * 50, finalized=False)


def test_cli_error_is_one_line_with_iree_status(iree_profile, tmp_path):
    s = _events_then(*BROKEN["unknown function"], pdo=0, queue=0)
    path = s.write(tmp_path / "bad.ireeprof")
    expected, status = theirs(iree_profile, path)
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from amdgpu_cli.cli.main import profile_main; "
         "profile_main(sys.argv[1:])", "export", path], capture_output=True, text=True, timeout=60)
    assert result.returncode == status == 1
    assert result.stdout == expected
    assert len(result.stderr.strip().splitlines()) == 1
    assert "DATA_LOSS" in result.stderr and "Traceback" not in result.stderr


def test_first_failure_in_file_order_wins(iree_profile, tmp_path):
    """A bad dispatch (found while formatting) before a torn memory chunk (found by the reader)."""
    s = device_metadata(Synth())
    s.chunk("dispatch-events", DISPATCH_OK, typed(schema.DISPATCH_EVENT, executable_id=1,
                                                  function_ordinal=7), pdo=0, queue=0)
    s.chunk("memory-events", typed(schema.MEMORY_EVENT)[:100])
    assert_same(iree_profile, tmp_path, s.end())
    s = device_metadata(Synth())
    s.chunk("memory-events", typed(schema.MEMORY_EVENT), typed(schema.MEMORY_EVENT)[:100])
    s.chunk("dispatch-events", DISPATCH_OK, typed(schema.DISPATCH_EVENT, executable_id=1,
                                                  function_ordinal=7), pdo=0, queue=0)
    assert_same(iree_profile, tmp_path, s.end())


def test_names_that_are_not_utf8_come_out_as_the_same_bytes(tmp_path):
    """IREE copies name bytes through unchanged; so must we (through the stream's buffer)."""
    s = device_metadata(Synth())
    bad = b"k\xff\xfe\xc3(name"
    s.chunk("executables", typed(schema.EXECUTABLE, executable_id=5))
    s.chunk("executable-functions", typed(schema.FUNCTION, bad, executable_id=5,
                                          name_length=len(bad)))
    s.chunk("dispatch-events", typed(schema.DISPATCH_EVENT, executable_id=5, start_tick=1,
                                     end_tick=2), pdo=0, queue=0)
    s.chunk("counter-sets", typed(schema.COUNTER_SET, bad, counter_set_id=1,
                                  name_length=len(bad)))
    s.chunk("device-metric-descriptors", typed(
        schema.METRIC_DESCRIPTOR, bad + b"\x80", source_id=1, metric_id=1, value_kind=2,
        name_length=len(bad), description_length=1))
    s.chunk("device-metric-samples", metric_sample([(1, 7, 0)], source_id=1))
    s.record(schema.RecordType.CHUNK, b"application/x-\xe9")
    path = s.end().write(tmp_path / "u.ireeprof")

    binary = shutil.which("iree-profile")
    if not binary:
        pytest.skip("iree-profile not on PATH")
    expected = subprocess.run([binary, "export", "--format=ireeperf-jsonl", path],
                              capture_output=True, timeout=60)
    assert expected.returncode == 0
    assert b"\xff\xfe" in expected.stdout and b"x-\xe9" in expected.stdout
    buffer = io.BytesIO()
    stream = io.TextIOWrapper(buffer, encoding="utf-8")
    export.write(Bundle.open(path), stream)
    stream.flush()
    assert buffer.getvalue() == expected.stdout
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from amdgpu_cli.cli.main import profile_main; "
         "profile_main(sys.argv[1:])", "export", path], capture_output=True, timeout=60)
    assert result.returncode == 0 and result.stdout == expected.stdout

"""The bundle writer produces bundles that IREE 3.13.0's own `iree-profile` reads cleanly, with the
numbers we wrote.

One module-scoped bundle holds a session with every content type (AMDGPU-style: two devices, three
queues, executables with code objects, loads and hashed functions, a command buffer with
block-structured operations, clock correlations at begin and end, dispatch/queue/device-queue/host
execution/command-region/memory events, relationships, counters, device metrics and an executable
trace). The truths the tests compare against are the plain Python values in the spec below, and
timings are recomputed here from the clock fit rules (reference ireeprof.md section 3) with Python
integers; nothing is compared against output of our own reports.
"""

from __future__ import annotations

import io
import json
import os
import struct

import numpy as np
import pytest

from amdgpu_cli.profile import schema
from amdgpu_cli.profile import writer as W
from amdgpu_cli.profile.reader import Bundle

U32_MAX = 0xFFFFFFFF
F = schema.Flags

# --- The spec: every value written, as plain Python ------------------------------------------------

IMAGE_A = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 3 + b"amdgpu-a"
IMAGE_B = b"\x7fELF\x02\x01\x01\x00" + b"kernel-b" * 41 + b"\x01\x02\x03"
UUID0 = bytes(range(0xA0, 0xB0))

# IREE's own golden vectors (runtime/src/iree/hal/drivers/amdgpu/profile_metadata_test.cc).
GOLDEN_CODE_OBJECT = bytes([0x7F, ord("E"), ord("L"), ord("F"), 0x02, 0x01, 0x01, 0x00,
                            ord("I"), ord("R"), ord("E"), ord("E"), 0x00, 0x10, 0x80, 0xFF])


def stream_of(pdo: int, queue: int) -> int:
    return (pdo << 32) | queue


QUEUES = [(0, 0, stream_of(0, 0)), (0, 1, stream_of(0, 1)), (1, 0, stream_of(1, 0))]

CLOCK_BEGIN = [
    dict(flags=0xF, physical_device_ordinal=0, sample_id=1, device_tick=1_000_000,
         host_cpu_timestamp_ns=5_000_000_000, host_system_timestamp=777_000, host_system_frequency_hz=1_000_000_000,
         host_time_begin_ns=9_000_000_000, host_time_end_ns=9_000_000_400),
    dict(flags=0xF, physical_device_ordinal=1, sample_id=2, device_tick=3_000_000,
         host_cpu_timestamp_ns=5_000_000_100, host_system_timestamp=777_100, host_system_frequency_hz=1_000_000_000,
         host_time_begin_ns=9_000_000_100, host_time_end_ns=9_000_000_700),
]
CLOCK_END = [
    # device 0: 10 ns per tick nominal, with an odd span so the rounding matters
    dict(flags=0xF, physical_device_ordinal=0, sample_id=3, device_tick=2_000_003,
         host_cpu_timestamp_ns=5_010_000_007, host_system_timestamp=10_777_000, host_system_frequency_hz=1_000_000_000,
         host_time_begin_ns=9_010_000_000, host_time_end_ns=9_010_000_600),
    # device 1: 1/3 ns per tick-ish
    dict(flags=0xF, physical_device_ordinal=1, sample_id=4, device_tick=33_000_000,
         host_cpu_timestamp_ns=5_010_000_101, host_system_timestamp=10_777_100, host_system_frequency_hz=1_000_000_000,
         host_time_begin_ns=9_010_000_100, host_time_end_ns=9_010_000_500),
]

EXECUTABLES = [dict(executable_id=1, function_count=2, image=IMAGE_A),
               dict(executable_id=2, function_count=1, image=IMAGE_B)]
FUNCTIONS = [
    dict(executable_id=1, function_ordinal=0, name="matmul_kernel", constant_count=2, binding_count=3,
         parameter_count=5, workgroup_size=[64, 1, 1]),
    dict(executable_id=1, function_ordinal=1, name="", constant_count=0, binding_count=1,
         parameter_count=1, workgroup_size=[32, 2, 1]),
    dict(executable_id=2, function_ordinal=0, name="reduce_\u00e9\"q", constant_count=1, binding_count=2,
         parameter_count=3, workgroup_size=[256, 1, 1]),
]
CODE_OBJECT_LOADS = [
    dict(physical_device_ordinal=0, executable_id=1, code_object_id=1, load_delta=0x1000, load_size=0x2000),
    dict(physical_device_ordinal=1, executable_id=1, code_object_id=1, load_delta=-0x3000, load_size=0x4000),
    dict(physical_device_ordinal=1, executable_id=2, code_object_id=2, load_delta=0x5000, load_size=0x600),
]
COMMAND_BUFFERS = [dict(flags=0, command_buffer_id=7, mode=1, command_categories=3, queue_affinity=1,
                        physical_device_ordinal=0)]
COMMAND_OPERATIONS = [
    dict(type=2, flags=F.OP_BLOCK_STRUCTURE | F.OP_STATIC_BINDINGS, command_index=0, command_buffer_id=7,
         block_ordinal=0, block_command_ordinal=0, executable_id=1, function_ordinal=1, binding_count=1,
         workgroup_count=[4, 1, 1], workgroup_size=[32, 2, 1]),
    dict(type=4, flags=F.OP_BLOCK_STRUCTURE | F.OP_DYNAMIC_BINDINGS, command_index=1, command_buffer_id=7,
         block_ordinal=0, block_command_ordinal=1, source_ordinal=0, target_ordinal=1,
         source_offset=16, target_offset=32, length=1024),
    dict(type=1, flags=F.OP_BLOCK_STRUCTURE | F.OP_EXECUTION_BARRIER, command_index=2, command_buffer_id=7,
         block_ordinal=1, block_command_ordinal=0),
    dict(type=9, flags=F.OP_BLOCK_STRUCTURE | F.OP_CONTROL_FLOW, command_index=3, command_buffer_id=7,
         block_ordinal=1, block_command_ordinal=1),
]

# Dispatch chunks: (pdo, queue, stream) from the chunk header, events in the records.
DISPATCHES = {
    QUEUES[0]: [
        dict(flags=0, event_id=1, submission_id=1, executable_id=1, function_ordinal=0,
             workgroup_count=[8, 1, 1], workgroup_size=[64, 1, 1], start_tick=1_100_000, end_tick=1_100_500),
        dict(flags=0, event_id=2, submission_id=1, executable_id=1, function_ordinal=0,
             workgroup_count=[16, 2, 1], workgroup_size=[64, 1, 1], start_tick=1_100_600, end_tick=1_101_333),
        dict(flags=F.DISPATCH_COMMAND_BUFFER, event_id=3, submission_id=2, command_buffer_id=7, command_index=0,
             executable_id=1, function_ordinal=1, workgroup_count=[4, 1, 1], workgroup_size=[32, 2, 1],
             start_tick=1_200_000, end_tick=1_200_123),
        # invalid: never completed
        dict(flags=0, event_id=4, submission_id=3, executable_id=1, function_ordinal=0,
             workgroup_count=[1, 1, 1], workgroup_size=[64, 1, 1], start_tick=1_300_000, end_tick=0),
    ],
    QUEUES[1]: [
        dict(flags=F.DISPATCH_INDIRECT_PARAMETERS, event_id=1, submission_id=4, executable_id=1, function_ordinal=0,
             workgroup_count=[2, 2, 2], workgroup_size=[64, 1, 1], start_tick=1_500_001, end_tick=1_507_778),
        # before the first clock sample: extrapolated
        dict(flags=0, event_id=2, submission_id=5, executable_id=1, function_ordinal=0,
             workgroup_count=[3, 1, 1], workgroup_size=[64, 1, 1], start_tick=999_000, end_tick=999_999),
    ],
    QUEUES[2]: [
        dict(flags=0, event_id=1, submission_id=1, executable_id=2, function_ordinal=0,
             workgroup_count=[100, 1, 1], workgroup_size=[256, 1, 1], start_tick=4_000_000, end_tick=4_000_007),
        dict(flags=0, event_id=2, submission_id=2, executable_id=2, function_ordinal=0,
             workgroup_count=[50, 1, 1], workgroup_size=[256, 1, 1], start_tick=5_000_000, end_tick=5_123_457),
    ],
}

QUEUE_DEVICE_EVENTS = [
    dict(type=3, flags=0, event_id=1, submission_id=2, command_buffer_id=7, allocation_id=0,
         stream_id=QUEUES[0][2], payload_length=0, physical_device_ordinal=0, queue_ordinal=0,
         operation_count=4, start_tick=1_199_900, end_tick=1_200_200),
    dict(type=9, flags=F.QUEUE_SOFTWARE_DEFERRED, event_id=2, submission_id=6, allocation_id=11,
         stream_id=QUEUES[0][2], payload_length=4096, physical_device_ordinal=0, queue_ordinal=0,
         operation_count=1, start_tick=1_500_001, end_tick=1_507_778),
]
RELATIONSHIPS = [
    dict(type=1, relationship_id=1, source_type=1, target_type=3, physical_device_ordinal=0, queue_ordinal=0,
         stream_id=QUEUES[0][2], source_id=1, target_id=1),
    dict(type=1, relationship_id=2, source_type=1, target_type=3, physical_device_ordinal=0, queue_ordinal=0,
         stream_id=QUEUES[0][2], source_id=2, target_id=3),
    dict(type=2, relationship_id=3, source_type=1, target_type=7, physical_device_ordinal=0, queue_ordinal=0,
         stream_id=QUEUES[0][2], source_id=2, target_id=1, source_secondary_id=5, target_secondary_id=6),
]
QUEUE_EVENTS = [
    dict(type=9, flags=0, dependency_strategy=0, event_id=1, host_time_ns=9_001_000_000, submission_id=6,
         allocation_id=11, stream_id=QUEUES[0][2], physical_device_ordinal=0, queue_ordinal=0,
         wait_count=0, signal_count=1, operation_count=1, payload_length=4096, ready_host_time_ns=9_001_000_250),
    dict(type=3, flags=F.QUEUE_SOFTWARE_DEFERRED, dependency_strategy=3, event_id=2, host_time_ns=9_002_000_000,
         submission_id=2, command_buffer_id=7, stream_id=QUEUES[0][2], physical_device_ordinal=0,
         queue_ordinal=0, wait_count=2, signal_count=1, barrier_count=1, operation_count=4,
         ready_host_time_ns=9_002_000_500),
    dict(type=4, flags=0, dependency_strategy=1, event_id=3, host_time_ns=9_003_000_000, submission_id=7,
         stream_id=QUEUES[1][2], physical_device_ordinal=0, queue_ordinal=1, wait_count=1, signal_count=1,
         operation_count=1, payload_length=65536, ready_host_time_ns=0),
    dict(type=10, flags=0, dependency_strategy=2, event_id=4, host_time_ns=9_004_000_000, submission_id=8,
         allocation_id=11, stream_id=QUEUES[2][2], physical_device_ordinal=1, queue_ordinal=0,
         wait_count=1, signal_count=1, barrier_count=1, operation_count=1, ready_host_time_ns=9_004_000_010),
]
HOST_EXECUTION_EVENTS = [
    dict(type=2, flags=0, status_code=0, event_id=1, submission_id=9, executable_id=1, stream_id=QUEUES[0][2],
         physical_device_ordinal=0, queue_ordinal=0, function_ordinal=0, workgroup_count=[8, 1, 1],
         workgroup_size=[64, 1, 1], start_host_time_ns=9_005_000_000, end_host_time_ns=9_005_001_160,
         tile_count=8, tile_duration_sum_ns=9000, operation_count=1),
    dict(type=2, flags=F.HOST_COMMAND_BUFFER | F.HOST_DEFERRED, status_code=0, event_id=2, submission_id=2,
         command_buffer_id=7, command_index=0, executable_id=1, function_ordinal=1, stream_id=QUEUES[0][2],
         physical_device_ordinal=0, queue_ordinal=0, workgroup_count=[4, 1, 1], workgroup_size=[32, 2, 1],
         start_host_time_ns=9_006_000_000, end_host_time_ns=9_006_000_777, tile_count=4,
         tile_duration_sum_ns=2000, operation_count=1),
    dict(type=3, flags=0, event_id=3, submission_id=2, command_buffer_id=7, stream_id=QUEUES[0][2],
         physical_device_ordinal=0, queue_ordinal=0, start_host_time_ns=9_006_000_000,
         end_host_time_ns=9_006_002_000, payload_length=0, operation_count=4),
    # invalid span (end before start)
    dict(type=5, flags=0, event_id=4, submission_id=10, allocation_id=12, stream_id=QUEUES[1][2],
         physical_device_ordinal=0, queue_ordinal=1, start_host_time_ns=9_007_000_000,
         end_host_time_ns=9_006_999_000, payload_length=128, operation_count=1),
]
COMMAND_REGION_EVENTS = [
    dict(flags=F.REGION_COMMAND_BUFFER | F.REGION_HAS_NEXT_REGION, event_id=1, submission_id=2,
         command_buffer_id=7, stream_id=QUEUES[0][2], physical_device_ordinal=0, queue_ordinal=0,
         block_sequence=1, epoch=2, index=0, dispatch_count=3, tile_count=12, width_bucket=4,
         lookahead_width_bucket=5, useful_drain_count=6, no_work_drain_count=7, tail_count=8,
         tail_remaining_tiles_min=1, tail_remaining_tiles_max=40,
         tail_remaining_tiles_bucket_counts=[1, 2, 3, 4, 5, 6, 7, 8],
         tail_first_start_host_time_ns=9_008_000_100, tail_last_end_host_time_ns=9_008_000_900,
         tail_start_offset_ns=11, tail_drain_duration_ns=22,
         first_useful_drain_start_host_time_ns=9_008_000_010, last_useful_drain_end_host_time_ns=9_008_000_990,
         start_host_time_ns=9_008_000_000, end_host_time_ns=9_008_001_000, next_index=1,
         next_tile_count=9, next_width_bucket=2, next_lookahead_width_bucket=3, worker_count=16,
         old_wake_budget=4, new_wake_budget=-2, wake_delta=-6, keep_active_count=13,
         publish_keep_active_count=14, keep_warm_count=15),
    dict(flags=F.REGION_COMMAND_BUFFER | F.REGION_TERMINAL, event_id=2, submission_id=2, command_buffer_id=7,
         stream_id=QUEUES[0][2], physical_device_ordinal=0, queue_ordinal=0, block_sequence=1, epoch=2,
         index=1, dispatch_count=1, tile_count=9, start_host_time_ns=9_008_001_000,
         end_host_time_ns=9_008_001_500, worker_count=16),
]
MEMORY_EVENTS = [
    dict(type=1, flags=0, event_id=1, host_time_ns=9_000_500_000, allocation_id=0, pool_id=0, backing_id=21,
         physical_device_ordinal=0, memory_type=50, length=1 << 20, alignment=4096, result=0),
    dict(type=3, flags=F.MEMORY_POOL_RESERVATION | F.MEMORY_POOL_STATS | F.MEMORY_QUEUE_OPERATION,
         event_id=2, host_time_ns=9_001_000_010, allocation_id=11, pool_id=79597104, backing_id=21,
         submission_id=6, physical_device_ordinal=0, queue_ordinal=0, memory_type=50, buffer_usage=3,
         offset=256, length=4096, alignment=256, pool_bytes_reserved=4096, pool_bytes_free=1040384,
         pool_bytes_committed=1 << 20, pool_budget_limit=1 << 30, pool_reservation_count=1, pool_slab_count=1),
    dict(type=7, flags=F.MEMORY_QUEUE_OPERATION | F.MEMORY_WAIT_FRONTIER, event_id=3, host_time_ns=9_001_000_020,
         allocation_id=11, pool_id=79597104, submission_id=6, physical_device_ordinal=0, queue_ordinal=0,
         frontier_entry_count=2, memory_type=50, buffer_usage=3, length=4096, alignment=256),
    dict(type=9, flags=0, event_id=4, host_time_ns=9_001_500_000, allocation_id=12, physical_device_ordinal=1,
         memory_type=6, buffer_usage=7, length=8192, alignment=64),
    dict(type=10, flags=0, event_id=5, host_time_ns=9_003_500_000, allocation_id=12, physical_device_ordinal=1,
         memory_type=6, buffer_usage=7, length=8192, alignment=64),
    dict(type=8, flags=F.MEMORY_QUEUE_OPERATION, event_id=6, host_time_ns=9_004_000_020, allocation_id=11,
         pool_id=79597104, submission_id=8, physical_device_ordinal=1, queue_ordinal=0, memory_type=50,
         buffer_usage=3, length=4096, alignment=256),
    dict(type=11, flags=F.MEMORY_EXTERNALLY_OWNED, event_id=7, host_time_ns=9_004_500_000, allocation_id=13,
         physical_device_ordinal=0, memory_type=6, length=512, alignment=16),
]
COUNTER_SET_ID = stream_of(0, 1)  # AMDGPU: (pdo << 32) | (selection + 1)
COUNTER_SETS = [dict(counter_set_id=COUNTER_SET_ID, physical_device_ordinal=0, name="amdgpu.pmc",
                     counter_count=2, sample_value_count=3, flags=0)]
COUNTERS = [
    dict(counter_set_id=COUNTER_SET_ID, counter_ordinal=0, physical_device_ordinal=0, block="SQ",
         name="SQ_WAVES", description="Raw waves.", unit=1, sample_value_offset=0, sample_value_count=2,
         flags=F.COUNTER_RAW),
    dict(counter_set_id=COUNTER_SET_ID, counter_ordinal=1, physical_device_ordinal=0, block="SQ",
         name="SQ_BUSY_CYCLES", description="", unit=2, sample_value_offset=2, sample_value_count=1,
         flags=F.COUNTER_RAW),
]
COUNTER_SAMPLES = [
    dict(values=[10, 20, 300], flags=F.SAMPLE_DISPATCH_EVENT | F.SAMPLE_DEVICE_TICK_RANGE, scope=1,
         sample_id=1, counter_set_id=COUNTER_SET_ID, dispatch_event_id=1, submission_id=1, executable_id=1,
         stream_id=QUEUES[0][2], start_tick=1_100_000, end_tick=1_100_500, function_ordinal=0,
         physical_device_ordinal=0, queue_ordinal=0),
    dict(values=[5, 6, 2**40], flags=F.SAMPLE_DISPATCH_EVENT | F.SAMPLE_DEVICE_TICK_RANGE, scope=1,
         sample_id=2, counter_set_id=COUNTER_SET_ID, dispatch_event_id=2, submission_id=1, executable_id=1,
         stream_id=QUEUES[0][2], start_tick=1_100_600, end_tick=1_101_333, function_ordinal=0,
         physical_device_ordinal=0, queue_ordinal=0),
    dict(values=[7, 8, 900], flags=F.SAMPLE_DISPATCH_EVENT | F.SAMPLE_COMMAND_OPERATION | F.SAMPLE_DEVICE_TICK_RANGE,
         scope=1, sample_id=3, counter_set_id=COUNTER_SET_ID, dispatch_event_id=3, submission_id=2,
         command_buffer_id=7, command_index=0, executable_id=1, stream_id=QUEUES[0][2], start_tick=1_200_000,
         end_tick=1_200_123, function_ordinal=1, physical_device_ordinal=0, queue_ordinal=0),
    dict(values=[1, 2, 3], flags=F.SAMPLE_DEVICE_TICK_RANGE, scope=3, sample_id=4, counter_set_id=COUNTER_SET_ID,
         stream_id=QUEUES[0][2], start_tick=1_000_000, end_tick=2_000_000, physical_device_ordinal=0,
         queue_ordinal=0),
]
METRIC_SOURCES = [dict(source_id=1, physical_device_ordinal=0, name="amdgpu.sysfs.0000:03:00.0",
                       metric_count=4, device_class=2, source_kind=1, source_revision=0x0105, flags=0)]
PRODUCER_METRIC = (1 << 63) + 5
METRIC_DESCRIPTORS = [
    dict(source_id=1, metric_id=1, name="clock.compute.current", description="Compute clock.", unit=2,
         value_kind=2, semantic=1, plot_hint=4),
    dict(source_id=1, metric_id=3, name="temperature.edge", description="", unit=6, value_kind=1,
         semantic=1, plot_hint=5),
    dict(source_id=1, metric_id=8, name="activity.compute", description="Busy fraction.", unit=5,
         value_kind=3, semantic=2, plot_hint=3),
    dict(source_id=1, metric_id=PRODUCER_METRIC, name="vendor.thing", description="x", unit=0,
         value_kind=2, semantic=3, plot_hint=1, flags=0),
]
METRIC_SAMPLES = [
    dict(values=[(1, 2_100_000_000), (3, -5000), (8, 0.25, 0), (PRODUCER_METRIC, 2**64 - 1)],
         flags=F.METRIC_SOURCE_TIMESTAMP, sample_id=1, source_id=1, host_time_begin_ns=9_009_000_000,
         host_time_end_ns=9_009_000_300, source_timestamp=123_456, source_timestamp_frequency_hz=100,
         physical_device_ordinal=0),
    dict(values=[(1, 1_900_000_000)], flags=F.METRIC_PARTIAL, sample_id=2, source_id=1,
         host_time_begin_ns=9_010_000_000, host_time_end_ns=9_010_000_100, physical_device_ordinal=0),
]
TRACE = dict(format=1, flags=F.TRACE_DISPATCH_EVENT, shader_engine=2, trace_id=1, dispatch_event_id=1,
             submission_id=1, executable_id=1, stream_id=QUEUES[0][2], function_ordinal=0,
             physical_device_ordinal=0, queue_ordinal=0)
TRACE_BYTES = bytes((i * 7) & 0xFF for i in range(1000))


def fixed(suffix: str, rows: list[dict]) -> np.ndarray:
    """Builds rows one at a time so unset fields keep the writer's absent defaults."""
    out = np.zeros(len(rows), schema.BY_SUFFIX[suffix].dtype)
    for i, r in enumerate(rows):
        out[i] = W.record(suffix, **r)[0]
    return out


# --- Building the bundle -----------------------------------------------------------------------------

class Log:
    """What was written, in file order: (suffix, header metadata, spec rows) per record."""

    def __init__(self, w: W.BundleWriter):
        self.w = w
        self.records: list[tuple[str, dict, list]] = []

    def begin(self, *args, **kw):
        self.w.begin_session(*args, **kw)
        self.records.append(("session-begin", kw, []))

    def end(self, status=0, **kw):
        self.w.end_session(status, **kw)
        self.records.append(("session-end", {"status": status}, []))

    def chunk(self, suffix: str, payload, rows: list, **meta):
        self.w.chunk(suffix, payload, **meta)
        self.records.append((suffix, meta, rows))

    def rows(self, suffix: str) -> list[dict]:
        return [r for s, _, rows in self.records if s == suffix for r in rows]

    def chunks(self, suffix: str) -> int:
        return sum(1 for s, _, _ in self.records if s == suffix)


def write_full_bundle(target) -> Log:
    w = W.BundleWriter(target)
    log = Log(w)
    log.begin(1, "amdgpu-test-device")
    devices = [dict(physical_device_ordinal=0, queue_count=2, flags=F.DEVICE_UUID, uuid=UUID0),
               dict(physical_device_ordinal=1, queue_count=1, flags=0, uuid=None)]
    log.chunk("devices", [W.device_record(d["physical_device_ordinal"], d["queue_count"], uuid=d["uuid"])
                          for d in devices], devices, name="amdgpu")
    queues = [dict(physical_device_ordinal=p, queue_ordinal=q, stream_id=s) for p, q, s in QUEUES]
    log.chunk("queues", fixed("queues", queues), queues, name="amdgpu")
    for e in EXECUTABLES:
        e["code_object_hash"] = W.code_object_hash(e["image"])
    log.chunk("executables", [W.executable_record(e["executable_id"], e["function_count"],
                                                  code_object_hash=e["code_object_hash"]) for e in EXECUTABLES],
              EXECUTABLES, name="amdgpu")
    log.chunk("executable-code-objects",
              [W.code_object_record(e["executable_id"], e["image"]) for e in EXECUTABLES], EXECUTABLES,
              name="amdgpu")
    log.chunk("executable-code-object-loads", fixed("executable-code-object-loads", CODE_OBJECT_LOADS),
              CODE_OBJECT_LOADS, name="amdgpu")
    hashes = {e["executable_id"]: e["code_object_hash"] for e in EXECUTABLES}
    for f in FUNCTIONS:
        f["function_hash"] = W.function_hash(hashes[f["executable_id"]], f["function_ordinal"],
                                             f["constant_count"], f["binding_count"], f["workgroup_size"],
                                             f["name"])
        f["flags"] = F.FUNCTION_HASH
    log.chunk("executable-functions",
              [W.function_record(**{k: v for k, v in f.items() if k != "flags"}) for f in FUNCTIONS],
              FUNCTIONS, name="amdgpu")
    log.chunk("command-buffers", fixed("command-buffers", COMMAND_BUFFERS), COMMAND_BUFFERS, name="amdgpu")
    log.chunk("command-operations", fixed("command-operations", COMMAND_OPERATIONS), COMMAND_OPERATIONS,
              name="amdgpu")
    log.chunk("counter-sets", [W.counter_set_record(**c) for c in COUNTER_SETS], COUNTER_SETS, name="amdgpu")
    log.chunk("counters", [W.counter_record(**c) for c in COUNTERS], COUNTERS, name="amdgpu")
    log.chunk("device-metric-sources", [W.metric_source_record(**m) for m in METRIC_SOURCES], METRIC_SOURCES,
              name="amdgpu")
    log.chunk("device-metric-descriptors", [W.metric_descriptor_record(**m) for m in METRIC_DESCRIPTORS],
              METRIC_DESCRIPTORS, name="amdgpu")
    log.chunk("clock-correlations", fixed("clock-correlations", CLOCK_BEGIN), CLOCK_BEGIN, name="amdgpu")
    for (pdo, queue, stream), events in DISPATCHES.items():
        log.chunk("dispatch-events", fixed("dispatch-events", events), events, name="amdgpu.dispatch",
                  physical_device_ordinal=pdo, queue_ordinal=queue, stream_id=stream)
    log.chunk("queue-device-events", fixed("queue-device-events", QUEUE_DEVICE_EVENTS), QUEUE_DEVICE_EVENTS,
              name="amdgpu.queue_device", physical_device_ordinal=0, queue_ordinal=0, stream_id=QUEUES[0][2])
    log.chunk("event-relationships", fixed("event-relationships", RELATIONSHIPS), RELATIONSHIPS,
              name="amdgpu.relationships", physical_device_ordinal=0, queue_ordinal=0, stream_id=QUEUES[0][2])
    log.chunk("counter-samples",
              [W.counter_sample_record(**s) for s in COUNTER_SAMPLES], COUNTER_SAMPLES,
              name="amdgpu.counter-samples", physical_device_ordinal=0, queue_ordinal=0, stream_id=QUEUES[0][2])
    log.chunk("executable-traces", W.executable_trace_payload(TRACE_BYTES, **TRACE), [TRACE], name="amdgpu.att",
              event_id=1, executable_id=1, physical_device_ordinal=0, queue_ordinal=0, stream_id=QUEUES[0][2])
    log.chunk("queue-events", fixed("queue-events", QUEUE_EVENTS), QUEUE_EVENTS, name="amdgpu.queue")
    log.chunk("host-execution-events", fixed("host-execution-events", HOST_EXECUTION_EVENTS),
              HOST_EXECUTION_EVENTS, name="host")
    log.chunk("command-region-events", fixed("command-region-events", COMMAND_REGION_EVENTS),
              COMMAND_REGION_EVENTS, name="host")
    log.chunk("memory-events", fixed("memory-events", MEMORY_EVENTS), MEMORY_EVENTS, name="amdgpu.memory")
    for s in METRIC_SAMPLES:
        log.chunk("device-metric-samples", W.metric_sample_record(**s), [s], name="amdgpu.metrics",
                  stream_id=s["source_id"])
    log.chunk("clock-correlations", fixed("clock-correlations", CLOCK_END), CLOCK_END, name="amdgpu")
    log.end(0)
    w.close()
    return log


# --- Running the real tool ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def full(tmp_path_factory):
    path = tmp_path_factory.mktemp("writer") / "full.ireeprof"
    log = write_full_bundle(path)
    return path, log


@pytest.fixture(scope="module")
def tool(iree_profile):
    """Runs the real iree-profile; asserts exit 0 and silence on stderr; returns JSONL rows."""

    def run(*args):
        p = iree_profile(list(args))
        assert p.returncode == 0, (args, p.stderr)
        assert p.stderr == "", (args, p.stderr)
        return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]

    return run


def of_type(rows, name, key="type"):
    return [r for r in rows if r.get(key) == name]


# Independent clock-fit arithmetic (reference section 3).
def clock_ends(pdo: int):
    samples = [c for c in CLOCK_BEGIN + CLOCK_END if c["physical_device_ordinal"] == pdo]
    return samples[0], samples[-1]


def fit_duration(pdo: int, ticks: int) -> int:
    first, last = clock_ends(pdo)
    tick_span = last["device_tick"] - first["device_tick"]
    time_span = last["host_cpu_timestamp_ns"] - first["host_cpu_timestamp_ns"]
    return (ticks * time_span + tick_span // 2) // tick_span


def fit_time(pdo: int, tick: int) -> int:
    first, _ = clock_ends(pdo)
    d = tick - first["device_tick"]
    base = first["host_cpu_timestamp_ns"]
    return base + fit_duration(pdo, d) if d >= 0 else base - fit_duration(pdo, -d)


def valid_ticks(e) -> bool:
    return e["start_tick"] != 0 and e["end_tick"] != 0 and e["end_tick"] >= e["start_tick"]


def hexhash(h) -> str:
    return f"{h[0]:016x}{h[1]:016x}"


# --- Tests -------------------------------------------------------------------------------------------

def test_siphash_matches_reference_vectors():
    # SipHash-2-4 paper vectors (key 00..0f, message 00..n-1).
    k0, k1 = W.HASH_KEYS[0]
    assert W.siphash24(b"", k0, k1) == 0x726FDB47DD0E0E31
    assert W.siphash24(bytes(range(8)), k0, k1) == 0x93F5F5799A932462
    assert W.siphash24(bytes(range(15)), k0, k1) == 0xA129CA6149BE45E5
    # IREE's AMDGPU golden hashes.
    assert W.code_object_hash(GOLDEN_CODE_OBJECT) == (0xC928AA6B62B629A9, 0xD1A52F9C3082FBA5)
    assert W.function_hash((0x0706050403020100, 0x1716151413121110), 0, 3, 2, (8, 4, 1),
                           "test_dispatch") == (0x12DBD8B44277F553, 0x873C5D1C5596DCE4)


def test_header_and_file_length(full):
    path, _ = full
    data = path.read_bytes()
    magic, major, minor, header_length, flags, file_length = struct.unpack_from("<IHHIIQ", data)
    assert (magic, major, minor, header_length, flags) == (0x46505249, 1, 6, 24, 0)
    assert data[:4] == b"IRPF"
    assert file_length == len(data)
    # no temporary file left next to it
    assert sorted(os.listdir(path.parent)) == ["full.ireeprof"]


def test_summary_counts(full, tool):
    path, log = full
    rows = tool("summary", "--format=jsonl", path)
    s = of_type(rows, "summary")[0]
    n_chunks = sum(1 for suffix, _, _ in log.records if not suffix.startswith("session"))
    assert s["file_records"] == len(log.records)
    assert (s["session_begin_records"], s["session_end_records"], s["chunk_records"]) == (1, 1, n_chunks)
    assert s["non_ok_session_end_records"] == s["unknown_records"] == s["unknown_chunks"] == 0
    assert s["truncated_chunks"] == s["dropped_records"] == 0
    for ct in schema.CONTENT_TYPES[1:]:
        key = ct.key
        assert s[f"{key}_chunks"] == log.chunks(ct.suffix), key
        if f"{key}_records" in s:
            assert s[f"{key}_records"] == len(log.rows(ct.suffix)), key
    assert s["executable_code_object_data_bytes"] == len(IMAGE_A) + len(IMAGE_B)
    assert s["executable_trace_data_bytes"] == len(TRACE_BYTES)
    assert s["device_metric_values"] == sum(len(m["values"]) for m in METRIC_SAMPLES)
    invalid_host = [e for e in HOST_EXECUTION_EVENTS if e["end_host_time_ns"] < e["start_host_time_ns"]]
    assert s["invalid_host_execution_event_records"] == len(invalid_host)
    assert s["total_host_execution_duration_ns"] == sum(
        e["end_host_time_ns"] - e["start_host_time_ns"] for e in HOST_EXECUTION_EVENTS if e not in invalid_host)
    assert s["total_command_region_duration_ns"] == sum(
        e["end_host_time_ns"] - e["start_host_time_ns"] for e in COMMAND_REGION_EVENTS)

    devices = {d["physical_device_ordinal"]: d for d in of_type(rows, "device_summary")}
    assert sorted(devices) == [0, 1]
    for pdo, d in devices.items():
        events = [e for (p, _, _), evs in DISPATCHES.items() if p == pdo for e in evs]
        valid = [e for e in events if valid_ticks(e)]
        ticks = [e["end_tick"] - e["start_tick"] for e in valid]
        first, last = clock_ends(pdo)
        assert d["clock_samples"] == 2
        assert d["clock_fit_available"] is True
        assert d["queues"] == sum(1 for p, _, _ in QUEUES if p == pdo)
        assert (d["dispatches"], d["valid_dispatches"], d["invalid_dispatches"]) == (
            len(events), len(valid), len(events) - len(valid))
        assert (d["min_dispatch_ticks"], d["max_dispatch_ticks"], d["total_dispatch_ticks"]) == (
            min(ticks), max(ticks), sum(ticks))
        assert d["total_dispatch_ns"] == fit_duration(pdo, sum(ticks))
        assert d["earliest_dispatch_start_tick"] == min(e["start_tick"] for e in valid)
        assert d["latest_dispatch_end_tick"] == max(e["end_tick"] for e in valid)
        uncert = [c["host_time_end_ns"] - c["host_time_begin_ns"] for c in (first, last)]
        assert (d["min_clock_uncertainty_ns"], d["max_clock_uncertainty_ns"]) == (min(uncert), max(uncert))
        ns_per_tick = (last["host_cpu_timestamp_ns"] - first["host_cpu_timestamp_ns"]) / (
            last["device_tick"] - first["device_tick"])
        assert d["ns_per_tick"] == pytest.approx(ns_per_tick, abs=1e-9)


# Export field name for a spec field, where it differs (per export record_type).
EXPORT_NAMES = {
    "type": ("type_value", "op", "kind_value", "event_type_value"),
    "format": ("format_value",),
    "device_class": ("device_class_value",),
    "unit": ("unit_value", "unit"),
    "value_kind": ("value_kind_value",),
    "semantic": ("semantic_value",),
    "plot_hint": ("plot_hint_value",),
    "source_type": ("source_type_value",),
    "target_type": ("target_type_value",),
    "block": ("block",),
    "epoch": ("region_epoch",),
    "index": ("region_index",),
    "next_index": ("next_region_index",),
    "dispatch_count": ("region_dispatch_count",),
    "tile_count": ("region_tile_count", "tile_count"),
    "width_bucket": ("region_width_bucket",),
    "lookahead_width_bucket": ("region_lookahead_width_bucket",),
    "next_tile_count": ("next_region_tile_count",),
    "next_width_bucket": ("next_region_width_bucket",),
    "next_lookahead_width_bucket": ("next_region_lookahead_width_bucket",),
    "keep_active_count": ("retention_keep_active_count",),
    "publish_keep_active_count": ("retention_publish_keep_active_count",),
    "keep_warm_count": ("retention_keep_warm_count",),
}
# Spec keys that are inputs to builders rather than exported fields.
NOT_EXPORTED = {"image", "uuid", "values", "record_length"}


def export_value(row: dict, key: str, want):
    """The export's value for a spec field: same name, `<name>_value`, or a known rename; numeric
    spec values skip the export's enum-name strings."""
    if key.startswith("tail_"):
        tail = row["tail_no_work"]
        sub = key[len("tail_"):]
        if sub.startswith("remaining_tiles_"):
            return tail["remaining_tiles"][sub[len("remaining_tiles_"):]]
        if sub in ("start_offset_ns", "drain_duration_ns"):
            return tail["time_sums"][sub]
        return tail[sub]
    for name in (key + "_value", key, *EXPORT_NAMES.get(key, ())):
        if name in row and not (isinstance(row[name], str) and isinstance(want, int)):
            return row[name]
    if key == "type" and row["record_type"] == "command_operation":
        return {v: k for k, v in schema.COMMAND_OP_NAMES.items()}[row["op"]]
    if key == "dependency_strategy":  # exported by name only
        return {v: k for k, v in schema.DEPENDENCY_STRATEGY_NAMES.items()}[row[key]]
    raise KeyError(f"{row['record_type']} has no field for {key!r}: {sorted(row)}")


def expected_value(key: str, value):
    if key in ("code_object_hash", "function_hash"):
        return hexhash(value)
    return value


EXPORT_TYPES = {
    "devices": "device", "queues": "queue", "executables": "executable",
    "executable-functions": "executable_function", "command-buffers": "command_buffer",
    "command-operations": "command_operation", "clock-correlations": "clock_correlation",
    "dispatch-events": "dispatch_event", "queue-events": "queue_event",
    "queue-device-events": "queue_device_event", "host-execution-events": "host_execution_event",
    "command-region-events": "command_region_event", "memory-events": "memory_event",
    "event-relationships": "event_relationship", "counter-sets": "counter_set", "counters": "counter",
    "counter-samples": "counter_sample", "device-metric-sources": "device_metric_source",
    "device-metric-descriptors": "device_metric_descriptor", "device-metric-samples": "device_metric_sample",
    "executable-traces": "executable_trace",
}


def test_export_rows_equal_written_records(full, tool):
    path, log = full
    rows = tool("export", "--format=ireeperf-jsonl", path)
    assert rows[0]["record_type"] == "schema"
    assert (rows[0]["source_version_major"], rows[0]["source_version_minor"]) == (1, 6)
    by_index: dict[int, list] = {}
    for r in rows[1:]:
        by_index.setdefault(r["source_record_index"], []).append(r)
    assert sorted(by_index) == list(range(len(log.records)))
    compared = 0
    for index, (suffix, meta, spec_rows) in enumerate(log.records):
        got = by_index[index]
        if suffix.startswith("session"):
            assert [r["event"] for r in got] == [suffix.split("-")[1]]
            assert got[0]["session_id"] == 1 and got[0]["session_status"] == "OK"
            continue
        if suffix in ("executable-code-objects", "executable-code-object-loads"):
            # export never decodes these: one unknown-chunk diagnostic each
            assert [(r["record_type"], r["category"]) for r in got] == [("diagnostic", "unknown_chunk")]
            continue
        assert [r["record_type"] for r in got] == [EXPORT_TYPES[suffix]] * len(spec_rows), suffix
        for spec, row in zip(spec_rows, got):
            for key, value in spec.items():
                if key in NOT_EXPORTED:
                    continue
                want = expected_value(key, value)
                assert export_value(row, key, want) == want, (suffix, key, row)
                compared += 1
            if suffix == "dispatch-events":
                assert (row["physical_device_ordinal"], row["queue_ordinal"], row["stream_id"]) == (
                    meta["physical_device_ordinal"], meta["queue_ordinal"], meta["stream_id"])
                check_dispatch_timing(meta["physical_device_ordinal"], spec, row)
            if suffix == "queue-device-events":
                check_dispatch_timing(spec["physical_device_ordinal"], spec, row)
            if suffix == "devices":
                assert row["physical_device_uuid"] == (spec["uuid"].hex() if spec["uuid"] else None)
            if suffix == "counter-samples":
                assert row["values"] == spec["values"]
            if suffix == "device-metric-samples":
                check_metric_values(spec, row)
            if suffix == "executable-traces":
                assert row["data_length"] == len(TRACE_BYTES) and row["record_length"] == 88
            # fields the spec left out carry IREE's absent defaults
            if suffix in ("dispatch-events", "host-execution-events", "queue-device-events"):
                for key in ("command_index", "function_ordinal"):
                    if key in row and key not in spec:
                        assert row[key] == U32_MAX, (suffix, key)
            if suffix == "memory-events" and "result" not in spec:
                assert row["result"] == U32_MAX
            if suffix == "command-operations":
                for key in ("source_ordinal", "target_ordinal", "target_block_ordinal", "alternate_block_ordinal"):
                    if key not in spec:
                        assert row[key] == U32_MAX
                assert row["block_structure"] is True
            if suffix == "command-region-events" and "next_index" not in spec:
                assert row["next_region_index"] == -1
    assert compared > 500


def check_dispatch_timing(pdo, spec, row):
    assert row["duration_ticks"] == (spec["end_tick"] - spec["start_tick"] if valid_ticks(spec) else 0)
    assert row["valid"] is valid_ticks(spec)
    if not valid_ticks(spec):
        return
    first, last = clock_ends(pdo)
    assert row["derived_time_available"] is True
    assert (row["clock_fit_first_sample_id"], row["clock_fit_last_sample_id"]) == (
        first["sample_id"], last["sample_id"])
    start, end = fit_time(pdo, spec["start_tick"]), fit_time(pdo, spec["end_tick"])
    assert (row["start_driver_host_cpu_time_ns"], row["end_driver_host_cpu_time_ns"]) == (start, end)
    assert row["duration_ns"] == end - start


def check_metric_values(spec, row):
    kinds = {d["metric_id"]: d["value_kind"] for d in METRIC_DESCRIPTORS}
    got = row["values"]
    assert [v["metric_id"] for v in got] == [v[0] for v in spec["values"]]
    for want, v in zip(spec["values"], got):
        value = want[1]
        if isinstance(value, float):
            bits = struct.unpack("<Q", struct.pack("<d", value))[0]
        else:
            bits = value & (2**64 - 1)
        assert v["value_bits"] == bits
        if kinds[want[0]] == 3:
            assert float(v["value"]) == value
        else:
            assert int(v["value"]) == value


def test_dispatch_command(full, tool):
    path, _ = full
    rows = tool("dispatch", "--format=jsonl", path)
    groups = {(g["physical_device_ordinal"], g["executable_id"], g["function_ordinal"]): g
              for g in of_type(rows, "dispatch_group")}
    want: dict[tuple, list] = {}
    for (pdo, _, _), events in DISPATCHES.items():
        for e in events:
            want.setdefault((pdo, e["executable_id"], e["function_ordinal"]), []).append(e)
    assert sorted(groups) == sorted(want)
    names = {(f["executable_id"], f["function_ordinal"]): f["name"] for f in FUNCTIONS}
    for key, events in want.items():
        g = groups[key]
        valid = [e for e in events if valid_ticks(e)]
        ticks = [e["end_tick"] - e["start_tick"] for e in valid]
        assert (g["count"], g["valid"], g["invalid"]) == (len(events), len(valid), len(events) - len(valid))
        assert (g["min_ticks"], g["max_ticks"], g["total_ticks"]) == (min(ticks), max(ticks), sum(ticks))
        assert g["total_ns"] == fit_duration(key[0], sum(ticks))
        assert g["last_workgroup_count"] == events[-1]["workgroup_count"]
        assert g["key"] == (names[key[1:]] or f"device{key[0]}/executable{key[1]}#{key[2]}")
    events = tool("dispatch", "--format=jsonl", "--dispatch_events", path)
    per_event = of_type(events, "dispatch_event")
    assert len(per_event) == sum(len(v) for v in DISPATCHES.values())
    for row in per_event:
        spec = next(e for (p, q, s), evs in DISPATCHES.items() for e in evs
                    if (p, q, s) == (row["physical_device_ordinal"], row["queue_ordinal"], row["stream_id"])
                    and e["event_id"] == row["event_id"])
        if valid_ticks(spec):
            # projections convert the tick count (export converts both ends; see the export test)
            assert row["duration_ns"] == fit_duration(row["physical_device_ordinal"],
                                                      spec["end_tick"] - spec["start_tick"])


def test_executable_command(full, tool):
    path, _ = full
    rows = tool("executable", "--format=jsonl", path)
    exes = {r["executable_id"]: r for r in of_type(rows, "executable")}
    assert sorted(exes) == [e["executable_id"] for e in EXECUTABLES]
    for e in EXECUTABLES:
        r = exes[e["executable_id"]]
        assert r["function_count"] == e["function_count"]
        assert r["code_object_hash_present"] is True
        assert r["code_object_hash"] == hexhash(W.code_object_hash(e["image"]))
    funcs = {(r["executable_id"], r["function_ordinal"]): r for r in of_type(rows, "executable_function")}
    for f in FUNCTIONS:
        r = funcs[(f["executable_id"], f["function_ordinal"])]
        assert r["function_hash"] == hexhash(f["function_hash"])
        assert (r["constant_count"], r["binding_count"], r["parameter_count"], r["workgroup_size"]) == (
            f["constant_count"], f["binding_count"], f["parameter_count"], f["workgroup_size"])
        assert r["key"] == (f["name"] or f"executable{f['executable_id']}#{f['function_ordinal']}")
    host = of_type(rows, "executable_function_host_dispatch_group")
    host_dispatches = [e for e in HOST_EXECUTION_EVENTS if e["type"] == 2]
    assert sum(g["dispatches"] for g in host) == len(host_dispatches)
    assert sum(g["total_ns"] for g in host) == sum(e["end_host_time_ns"] - e["start_host_time_ns"]
                                                   for e in host_dispatches)


def test_queue_command(full, tool):
    path, _ = full
    rows = tool("queue", "--format=jsonl", path)
    s = of_type(rows, "queue_summary")[0]
    assert (s["queues"], s["queue_events"], s["queue_device_events"], s["host_execution_events"]) == (
        len(QUEUES), len(QUEUE_EVENTS), len(QUEUE_DEVICE_EVENTS), len(HOST_EXECUTION_EVENTS))
    assert {(q["physical_device_ordinal"], q["queue_ordinal"], q["stream_id"]) for q in of_type(rows, "queue")} \
        == set(QUEUES)
    events = {r["event_id"]: r for r in of_type(rows, "queue_event")}
    for spec in QUEUE_EVENTS:
        r = events[spec["event_id"]]
        assert r["op"] == schema.QUEUE_EVENT_TYPE_NAMES[spec["type"]]
        assert r["dependency_strategy"] == schema.DEPENDENCY_STRATEGY_NAMES[spec["dependency_strategy"]]
        for key in ("host_time_ns", "ready_host_time_ns", "submission_id", "wait_count", "signal_count",
                    "operation_count", "physical_device_ordinal", "queue_ordinal", "stream_id"):
            assert r[key] == spec[key], key
    device_events = {r["event_id"]: r for r in of_type(rows, "queue_device_event")}
    for spec in QUEUE_DEVICE_EVENTS:
        r = device_events[spec["event_id"]]
        assert r["duration_ticks"] == spec["end_tick"] - spec["start_tick"]
        assert r["duration_ns"] == fit_duration(0, spec["end_tick"] - spec["start_tick"])
    subs = {(r["physical_device_ordinal"], r["queue_ordinal"], r["submission_id"]): r
            for r in of_type(rows, "queue_submission")}
    for (pdo, queue, _), evs in DISPATCHES.items():
        for sub in {e["submission_id"] for e in evs}:
            mine = [e for e in evs if e["submission_id"] == sub]
            valid = [e for e in mine if valid_ticks(e)]
            r = subs[(pdo, queue, sub)]
            assert (r["dispatches"], r["valid"]) == (len(mine), len(valid))
            assert r["total_dispatch_ticks"] == sum(e["end_tick"] - e["start_tick"] for e in valid)


def test_counter_command(full, tool):
    path, _ = full
    rows = tool("counter", "--format=jsonl", path)
    s = of_type(rows, "counter_summary")[0]
    assert (s["total_samples"], s["counter_sets"], s["counters"]) == (
        len(COUNTER_SAMPLES), len(COUNTER_SETS), len(COUNTERS))
    cs = of_type(rows, "counter_set")[0]
    assert (cs["counter_set_id"], cs["name"], cs["sample_value_count"]) == (COUNTER_SET_ID, "amdgpu.pmc", 3)
    counters = {c["counter_ordinal"]: c for c in of_type(rows, "counter")}
    for spec in COUNTERS:
        c = counters[spec["counter_ordinal"]]
        assert (c["block"], c["name"], c["description"], c["unit_value"]) == (
            spec["block"], spec["name"], spec["description"], spec["unit"])
    # each group's sum = sum over its samples of the counter's raw value slice
    groups = of_type(rows, "counter_group")
    for spec in COUNTERS:
        lo, n = spec["sample_value_offset"], spec["sample_value_count"]
        total = sum(sum(s["values"][lo:lo + n]) for s in COUNTER_SAMPLES)
        got = sum(float(g["sum"]) for g in groups if g["counter_ordinal"] == spec["counter_ordinal"])
        assert got == pytest.approx(total, rel=1e-12)
    samples = of_type(tool("counter", "--format=jsonl", "--counter_samples", path), "counter_sample")
    assert len(samples) == len(COUNTER_SAMPLES) * len(COUNTERS)
    for row in samples:
        spec = next(s for s in COUNTER_SAMPLES if s["sample_id"] == row["sample_id"])
        c = COUNTERS[row["counter_ordinal"]]
        lo, n = c["sample_value_offset"], c["sample_value_count"]
        assert row["values"] == spec["values"][lo:lo + n]
        assert (row["start_tick"], row["end_tick"]) == (spec["start_tick"], spec["end_tick"])


def test_memory_command(full, tool):
    path, _ = full
    rows = tool("memory", "--format=jsonl", path)
    s = of_type(rows, "memory_summary")[0]
    assert (s["total_events"], s["matched_events"], s["truncated_chunks"], s["dropped_records"]) == (
        len(MEMORY_EVENTS), len(MEMORY_EVENTS), 0, 0)
    events = of_type(rows, "memory_event")
    assert [r["event_id"] for r in events] == [e["event_id"] for e in MEMORY_EVENTS]
    for spec, r in zip(MEMORY_EVENTS, events):
        assert r["event_type"] == schema.MEMORY_EVENT_TYPE_NAMES[spec["type"]]
        for key in ("allocation_id", "length", "host_time_ns", "physical_device_ordinal", "memory_type"):
            assert r[key] == spec[key]
    devices = {d["physical_device_ordinal"]: d for d in of_type(rows, "memory_device")}
    assert devices[0]["queue_allocas"] == sum(1 for e in MEMORY_EVENTS if e["type"] == 7)
    assert devices[1]["buffer_allocates"] == devices[1]["buffer_frees"] == 1
    assert devices[1]["buffer_high_water_bytes"] == 8192


def test_command_command(full, tool):
    path, _ = full
    rows = tool("command", "--format=jsonl", path)
    cbs = of_type(rows, "command_buffer")
    assert [(c["command_buffer_id"], c["mode"], c["command_categories"], c["queue_affinity"]) for c in cbs] == [
        (7, 1, 3, 1)]
    ops = of_type(rows, "command_operation")
    assert [(o["command_index"], o["op"]) for o in ops] == [
        (o["command_index"], schema.COMMAND_OP_NAMES[o["type"]]) for o in COMMAND_OPERATIONS]
    assert ops[1]["length"] == 1024 and ops[0]["key"] == "device0/executable1#1"
    executions = of_type(rows, "command_execution")
    cb_dispatches = [e for evs in DISPATCHES.values() for e in evs if e.get("command_buffer_id") == 7]
    assert sum(x["dispatches"] for x in executions) == len(cb_dispatches)
    assert sum(x["total_dispatch_ticks"] for x in executions) == sum(
        e["end_tick"] - e["start_tick"] for e in cb_dispatches)


def test_statistics_command(full, tool):
    path, _ = full
    rows = tool("statistics", "--format=jsonl", path)
    summary = of_type(rows, "statistics_summary")[0]
    assert summary["dropped_record_count"] == 0
    stats = of_type(rows, "statistics_row")
    fn = [r for r in stats if r["row_type"] == "dispatch_function"]
    total_ticks = sum(e["end_tick"] - e["start_tick"] for evs in DISPATCHES.values() for e in evs if valid_ticks(e))
    assert sum(r["total_duration"] for r in fn) == total_ticks
    host_queue = [r for r in stats if r["row_type"] == "queue_host_operation"]
    assert sum(r["total_duration"] for r in host_queue) == sum(
        e["ready_host_time_ns"] - e["host_time_ns"] for e in QUEUE_EVENTS if e["ready_host_time_ns"])


def test_explain_command(full, tool):
    path, log = full
    rows = tool("explain", "--format=jsonl", path)
    s = of_type(rows, "explain_summary")[0]
    all_dispatches = [e for evs in DISPATCHES.values() for e in evs]
    assert s["file_records"] == len(log.records)
    assert (s["dispatches"], s["valid_dispatches"]) == (
        len(all_dispatches), sum(1 for e in all_dispatches if valid_ticks(e)))
    assert (s["queues"], s["queue_events"], s["command_buffers"], s["command_operations"], s["memory_events"]) == (
        len(QUEUES), len(QUEUE_EVENTS), len(COMMAND_BUFFERS), len(COMMAND_OPERATIONS), len(MEMORY_EVENTS))
    assert s["truncated_chunks"] == s["non_ok_session_end_records"] == 0
    top = of_type(rows, "explain_top_dispatch")
    assert top
    for r in top:
        spec = next(e for (p, q, st), evs in DISPATCHES.items() for e in evs
                    if (p, q, st) == (r["physical_device_ordinal"], r["queue_ordinal"], r["stream_id"])
                    and e["event_id"] == r["event_id"])
        p = r["physical_device_ordinal"]
        assert r["duration_ticks"] == spec["end_tick"] - spec["start_tick"]
        assert r["duration_ns"] == fit_duration(p, spec["end_tick"] - spec["start_tick"])
    # the longest dispatch leads
    assert top[0]["duration_ticks"] == max(e["end_tick"] - e["start_tick"] for e in all_dispatches if valid_ticks(e))


def test_text_commands_accept_bundle(full, iree_profile):
    path, _ = full
    for command in ("summary", "dispatch", "executable", "queue", "counter", "memory", "command",
                    "statistics", "explain", "cat"):
        p = iree_profile([command, path])
        assert (p.returncode, p.stderr) == (0, ""), command


def test_reader_round_trip(full):
    path, log = full
    bundle = Bundle.open(path)
    bundle.check()
    assert len(bundle) == len(log.records)
    assert [bundle.name(i) for i in range(len(bundle))][:2] == ["amdgpu-test-device", "amdgpu"]
    for suffix in EXPORT_TYPES:
        typed = bundle.typed(suffix, strict=True)
        assert len(typed) == len(log.rows(suffix)), suffix
    fns = bundle.typed("executable-functions")
    assert [fns.strings(i, int(fns.rows["name_length"][i]))[0] for i in range(len(fns))] == [
        f["name"] for f in FUNCTIONS]
    images = bundle.typed("executable-code-objects")
    assert [images.tail(i) for i in range(len(images))] == [e["image"] for e in EXECUTABLES]
    dispatch = bundle.typed("dispatch-events").rows
    expected = np.concatenate([fixed("dispatch-events", evs) for evs in DISPATCHES.values()])
    assert dispatch.tobytes() == expected.tobytes()
    memory = bundle.typed("memory-events").rows
    assert memory.tobytes() == fixed("memory-events", MEMORY_EVENTS).tobytes()
    samples = bundle.typed("counter-samples")
    assert [list(np.frombuffer(samples.tail(i), "<u8")) for i in range(len(samples))] == [
        s["values"] for s in COUNTER_SAMPLES]
    traces = bundle.typed("executable-traces")
    assert int(traces.rows["data_length"][0]) == len(TRACE_BYTES)
    assert bytes(bundle.payload(int(traces.chunk[0]))[88:]) == TRACE_BYTES
    chunk_rows = bundle.records[bundle.chunk_indices("dispatch-events")]
    assert [(int(r["physical_device_ordinal"]), int(r["queue_ordinal"]), int(r["stream_id"]))
            for r in chunk_rows] == list(DISPATCHES)


def test_truncated_chunks_and_non_ok_end(tmp_path, tool):
    path = tmp_path / "lossy.ireeprof"
    queue_rows = [dict(type=9, event_id=i, host_time_ns=100 + i, physical_device_ordinal=0, queue_ordinal=0)
                  for i in (1, 2)]
    with W.BundleWriter(path) as w:
        w.begin_session(3, "local-task")
        w.chunk("queues", W.record("queues", physical_device_ordinal=0, queue_ordinal=0))
        w.chunk("queue-events", fixed("queue-events", queue_rows), dropped_record_count=7)  # implies TRUNCATED
        w.chunk("memory-events", None, truncated=True, dropped_record_count=5)  # drops only, no records
        w.chunk("memory-events", W.record("memory-events", type=9, event_id=1, length=64), truncated=True)
        w.end_session(13)
    summary = of_type(tool("summary", "--format=jsonl", path), "summary")[0]
    assert (summary["truncated_chunks"], summary["dropped_records"]) == (3, 12)
    assert (summary["non_ok_session_end_records"], summary["queue_event_records"], summary["memory_event_records"]) == (
        1, 2, 1)
    export = tool("export", "--format=ireeperf-jsonl", path)
    diags = [r for r in export if r["record_type"] == "diagnostic"]
    assert [(d["severity"], d["category"], d["dropped_records"]) for d in diags] == [
        ("error", "truncated_chunk", 7), ("error", "truncated_chunk", 5), ("error", "truncated_chunk", 0)]
    end = [r for r in export if r["record_type"] == "session" and r["event"] == "end"][0]
    assert (end["session_id"], end["session_status_code"], end["session_status"]) == (3, 13, "INTERNAL")
    explain = tool("explain", "--format=jsonl", path)
    hints = {(h["severity"], h["category"]) for h in of_type(explain, "explain_hint")}
    assert {("error", "format"), ("error", "session")} <= hints
    queue = of_type(tool("queue", "--format=jsonl", path), "queue_summary")[0]
    assert (queue["truncated_chunks"], queue["dropped_records"]) == (1, 7)
    memory = of_type(tool("memory", "--format=jsonl", path), "memory_summary")[0]
    assert (memory["truncated_chunks"], memory["dropped_records"]) == (2, 5)
    stats = of_type(tool("statistics", "--format=jsonl", path), "statistics_summary")[0]
    assert stats["dropped_record_count"] == 12
    # our reader sees the same flags
    b = Bundle.open(path)
    chunks = b.records[b.records["record_type"] == schema.RecordType.CHUNK]
    assert chunks["chunk_flags"].tolist() == [0, 1, 1, 1]
    assert chunks["dropped_record_count"].tolist() == [0, 7, 5, 0]


def test_sessions_interleave_and_file_length_tracks_each_end(tool):
    buf = io.BytesIO()
    w = W.BundleWriter(buf)
    w.begin_session(1, "a")
    w.begin_session(2, "b")
    w.chunk("devices", W.device_record(0, 1), session_id=1)
    w.chunk("devices", W.device_record(1, 1))  # current session: 2
    w.end_session(0, session_id=1)
    first_end = len(buf.getvalue())
    assert struct.unpack_from("<Q", buf.getvalue(), 16)[0] == first_end
    w.chunk("unknown/content-type", b"opaque")
    w.sink.write_record(4, W.ChunkMetadata("application/x-test", session_id=2))  # unknown record type
    w.end_session(14)
    w.close()
    data = buf.getvalue()
    assert struct.unpack_from("<Q", data, 16)[0] == len(data)
    b = Bundle.from_bytes(data)
    assert b.records["session_id"].tolist() == [1, 2, 1, 2, 1, 2, 2, 2]
    assert b.records["record_type"].tolist() == [1, 1, 2, 2, 3, 2, 4, 3]
    assert b.records["session_status_code"].tolist()[-1] == 14


def test_session_context_and_custom_sink():
    class Recorder(W.ProfileSink):
        def __init__(self):
            self.calls = []

        def begin_session(self, metadata):
            self.calls.append(("begin", metadata.session_id, metadata.name))

        def write(self, metadata, *parts):
            self.calls.append(("chunk", metadata.content_type, metadata.flags, len(W._join(parts))))

        def end_session(self, metadata, status_code=0):
            self.calls.append(("end", metadata.session_id, status_code))

    sink = Recorder()
    w = W.BundleWriter(sink)
    with w.session(5, "dev") as s:
        s.chunk("queues", W.record("queues", physical_device_ordinal=0, queue_ordinal=0), dropped_record_count=1)
    with pytest.raises(ZeroDivisionError):
        with w.session(6, "dev"):
            1 / 0
    assert sink.calls == [("begin", 5, "dev"), ("chunk", schema.CONTENT_TYPE_PREFIX + "queues", 0, 24),
                          ("end", 5, 0), ("begin", 6, "dev"), ("end", 6, 2)]


def test_unfinished_bundle_has_zero_length_and_reads(tmp_path, tool):
    path = tmp_path / "unfinished.ireeprof"
    w = W.BundleWriter(path, atomic=False)
    w.begin_session(1, "amdgpu")
    w.chunk("devices", W.device_record(0, 1))
    w.close()  # crashed producer: no session end
    assert struct.unpack_from("<Q", path.read_bytes(), 16)[0] == 0
    s = of_type(tool("summary", "--format=jsonl", path), "summary")[0]
    assert (s["session_begin_records"], s["session_end_records"], s["device_chunks"]) == (1, 0, 1)


def test_atomic_path_is_untouched_on_error(tmp_path):
    path = tmp_path / "kept.ireeprof"
    path.write_bytes(b"previous")
    with pytest.raises(RuntimeError):
        with W.BundleWriter(path) as w:
            w.begin_session(1, "x")
            raise RuntimeError("producer failed")
    assert path.read_bytes() == b"previous"
    assert os.listdir(tmp_path) == ["kept.ireeprof"]


def test_writer_rejects_malformed_payloads():
    w = W.BundleWriter(None)
    w.begin_session(1, "x")
    bad_function = bytearray(W.function_record(1, 0, "abc"))
    bad_function[0] += 1  # record_length no longer matches name_length
    with pytest.raises(ValueError):
        w.chunk("executable-functions", bytes(bad_function))
    with pytest.raises(ValueError):
        w.chunk("dispatch-events", b"\x00" * 10)
    with pytest.raises(TypeError):
        w.chunk("dispatch-events", W.records("queues", n=2))
    with pytest.raises(ValueError):
        w.chunk("no-such-type", b"")
    with pytest.raises(KeyError):
        W.records("dispatch-events", no_such_field=1)
    # a zero record_length in a schema array is filled in, not written as garbage
    raw = np.zeros(2, schema.DISPATCH_EVENT)
    w.chunk("dispatch-events", raw)
    w.end_session()
    b = Bundle.from_bytes(w.getvalue())
    assert b.typed("dispatch-events").rows["record_length"].tolist() == [88, 88]


# --- The committed samples (profiles/samples, written by profiles/make_samples.py) -------------------

SAMPLES_DIR = __import__("pathlib").Path(__file__).resolve().parents[2] / "profiles" / "samples"
SAMPLE_COMMANDS = ("summary", "dispatch", "executable", "queue", "counter", "memory", "command", "statistics",
                   "explain")


@pytest.mark.parametrize("name", ["amdgpu-sample.ireeprof", "amdgpu-lossy.ireeprof"])
def test_samples_read_cleanly(name, tool, iree_profile):
    path = SAMPLES_DIR / name
    assert path.stat().st_size < 200_000
    for command in SAMPLE_COMMANDS:
        tool(command, "--format=jsonl", path)
        p = iree_profile([command, path])
        assert (p.returncode, p.stderr) == (0, ""), command
    tool("export", "--format=ireeperf-jsonl", path)


def test_lossy_sample_reports_its_losses(tool):
    s = of_type(tool("summary", "--format=jsonl", SAMPLES_DIR / "amdgpu-lossy.ireeprof"), "summary")[0]
    assert (s["truncated_chunks"], s["dropped_records"], s["non_ok_session_end_records"]) == (3, 4080 + 12 + 30, 1)


def test_samples_are_reproducible(tmp_path, tool):
    """make_samples.py regenerates the committed bytes; the sample's counts follow from the real
    gfx942 code objects it embeds."""
    import shutil
    import sys

    if not shutil.which("iree-compile"):
        pytest.skip("iree-compile not on PATH")
    sys.path.insert(0, str(SAMPLES_DIR.parent))
    try:
        import make_samples
    finally:
        sys.path.remove(str(SAMPLES_DIR.parent))
    code_objects = make_samples.compile_code_objects()
    paths = make_samples.write_samples(tmp_path, code_objects)
    for path in paths:
        assert path.read_bytes() == (SAMPLES_DIR / path.name).read_bytes(), path.name
    rows = tool("summary", "--format=jsonl", SAMPLES_DIR / "amdgpu-sample.ireeprof")
    s = of_type(rows, "summary")[0]
    kernels = [len(co.kernels) for co in code_objects]
    assert s["executable_records"] == len(code_objects) == 3
    assert s["executable_function_records"] == sum(kernels)
    assert s["executable_code_object_data_bytes"] == sum(len(co.image) for co in code_objects)
    # 2 flushes x 6 iterations x (mlp command buffer + one conv dispatch + attention command buffer)
    assert s["counter_sample_records"] == 2 * 6 * (kernels[0] + 1 + kernels[2])
    exe = of_type(tool("executable", "--format=jsonl", SAMPLES_DIR / "amdgpu-sample.ireeprof"), "executable")
    assert [r["code_object_hash"] for r in exe] == [hexhash(W.code_object_hash(co.image)) for co in code_objects]


def test_reencoding_a_real_iree_bundle_is_byte_identical(tmp_path):
    """Every record of a bundle IREE's own file sink wrote, passed through our FileSink with the same
    metadata and payload, gives back the same bytes (header and file_length included)."""
    import shutil
    import subprocess

    if not (shutil.which("iree-compile") and shutil.which("iree-run-module")):
        pytest.skip("iree-compile / iree-run-module not on PATH")
    from examples.compile import MODELS_DIR, compile_model, run_args

    vmfb = compile_model(MODELS_DIR / "mlp.mlir", tmp_path / "mlp.vmfb")
    real = tmp_path / "real.ireeprof"
    p = subprocess.run(["iree-run-module", "--device=local-task", f"--module={vmfb}",
                        *run_args(MODELS_DIR / "mlp.mlir"),
                        "--device_profiling_mode=queue-events,host-execution,memory-events,executable-metadata",
                        f"--device_profiling_output={real}"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    b = Bundle.open(real)
    b.check()
    assert len(b) > 5
    out = io.BytesIO()
    sink = W.FileSink(out)
    for i, r in enumerate(b.records):
        meta = W.ChunkMetadata(b.content_type(i), b.name(i), int(r["session_id"]), int(r["stream_id"]),
                               int(r["event_id"]), int(r["executable_id"]), int(r["command_buffer_id"]),
                               int(r["physical_device_ordinal"]), int(r["queue_ordinal"]), int(r["chunk_flags"]),
                               int(r["dropped_record_count"]))
        if r["record_type"] == schema.RecordType.SESSION_BEGIN:
            sink.begin_session(meta)
        elif r["record_type"] == schema.RecordType.SESSION_END:
            sink.end_session(meta, int(r["session_status_code"]))
        else:
            sink.write(meta, bytes(b.payload(i)))
    # IREE leaves the record header's 4 padding bytes (offset 76) as whatever its stack held; we
    # write zeros. Everything else must match.
    want = bytearray(real.read_bytes())
    for offset in b.records["offset"].tolist():
        want[offset + 76:offset + 80] = bytes(4)
    assert out.getvalue() == bytes(want)

"""`explain` against iree-profile: every real bundle, and synthetic AMDGPU-style bundles.

Local CPU bundles carry no device dispatch events, clock samples or pool waits, so most of
explain's paths are exercised on synthetic bundles written here byte by byte (schema dtypes, a
tiny container writer): several devices and queues, dispatch events with and without a clock fit,
invalid tick pairs, ties in the top-N tables, queue events of every type and strategy, memory
events of every type (pool waits, materializations, releases), truncated, unknown and non-OK
records, and bundles that must fail. Every JSONL row must equal iree-profile's (same keys in the
same order, floats within 1e-9 relative); failures must exit with iree-profile's status.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.jsonl import dumps
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports import explain

from iree_bundles import jsonl_rows

U32_MAX, U64_MAX = schema.U32_MAX, schema.U64_MAX
F = schema.Flags
CLOCK_OK = F.CLOCK_DEVICE_TICK | F.CLOCK_HOST_CPU_TIMESTAMP | F.CLOCK_HOST_SYSTEM_TIMESTAMP | \
    F.CLOCK_HOST_TIME_BRACKET


# --- a minimal bundle writer (raw bytes, independent of amdgpu_cli.profile.writer) ---------------


class Builder:
    def __init__(self):
        self.records: list[bytes] = []

    def record(self, record_type: int, content_type: str, payload: bytes = b"", name: bytes = b"x",
               **fields) -> None:
        ct = content_type.encode()
        h = np.zeros(1, schema.RECORD_HEADER)
        h["header_length"] = 104
        h["content_type_length"] = len(ct)
        h["name_length"] = len(name)
        h["payload_length"] = len(payload)
        h["record_length"] = 104 + len(ct) + len(name) + len(payload)
        h["physical_device_ordinal"] = U32_MAX
        h["queue_ordinal"] = U32_MAX
        h["record_type"] = record_type
        for k, v in fields.items():
            h[k] = v
        self.records.append(h.tobytes() + ct + name + payload)

    def begin(self, session_id: int = 1) -> None:
        self.record(1, schema.CONTENT_TYPE_PREFIX + "session", session_id=session_id)

    def end(self, session_id: int = 1, status: int = 0, **fields) -> None:
        self.record(3, schema.CONTENT_TYPE_PREFIX + "session", session_id=session_id,
                    session_status_code=status, **fields)

    def chunk(self, suffix: str, payload, **fields) -> None:
        if isinstance(payload, np.ndarray):
            payload = payload.tobytes()
        elif isinstance(payload, list):
            payload = b"".join(p.tobytes() if isinstance(p, np.ndarray) else p for p in payload)
        self.record(2, schema.CONTENT_TYPE_PREFIX + suffix, payload, session_id=1, **fields)

    def tobytes(self) -> bytes:
        body = b"".join(self.records)
        h = np.zeros(1, schema.FILE_HEADER)
        h["magic"], h["version_major"], h["version_minor"] = schema.MAGIC, 1, 6
        h["header_length"] = 24
        h["file_length"] = 24 + len(body)
        return h.tobytes() + body

    def write(self, path) -> str:
        path.write_bytes(self.tobytes())
        return str(path)


def fixed(dtype: np.dtype, n: int, **columns) -> np.ndarray:
    rows = np.zeros(n, dtype)
    rows["record_length"] = dtype.itemsize
    for k, v in columns.items():
        rows[k] = v
    return rows


def function(executable_id: int, ordinal: int, name: str) -> bytes:
    head = fixed(schema.FUNCTION, 1, executable_id=executable_id, function_ordinal=ordinal,
                 workgroup_size=[64, 1, 1], name_length=len(name.encode()))
    head["record_length"] = 64 + len(name.encode())
    return head.tobytes() + name.encode()


def clock(pdo: int, sample_id: int, tick: int, host_ns: int, flags: int = CLOCK_OK) -> np.ndarray:
    return fixed(schema.CLOCK_CORRELATION, 1, flags=flags, physical_device_ordinal=pdo,
                 sample_id=sample_id, device_tick=tick, host_cpu_timestamp_ns=host_ns,
                 host_system_timestamp=host_ns, host_system_frequency_hz=1_000_000_000,
                 host_time_begin_ns=host_ns - 100, host_time_end_ns=host_ns + 100)


def stream_of(pdo: int, queue: int) -> int:
    return (pdo << 32) | queue


def metadata(b: Builder, devices=(0, 1, 2), queues_per_device: int = 2,
             names=("matmul_kernel", "conv_kernel", "", "softmax")) -> None:
    """Devices, queues, two executables with (optionally nameless) functions, a command buffer."""
    b.chunk("devices", fixed(schema.DEVICE, len(devices), physical_device_ordinal=list(devices),
                             queue_count=queues_per_device))
    q = [(d, o) for d in devices for o in range(queues_per_device)]
    b.chunk("queues", fixed(schema.QUEUE, len(q), physical_device_ordinal=[d for d, _ in q],
                            queue_ordinal=[o for _, o in q],
                            stream_id=[stream_of(d, o) for d, o in q]))
    b.chunk("executables", fixed(schema.EXECUTABLE, 2, executable_id=[1, 2], function_count=2))
    b.chunk("executable-functions", [function(1, 0, names[0]), function(1, 1, names[1]),
                                     function(2, 0, names[2]), function(2, 1, names[3])])
    b.chunk("command-buffers", fixed(schema.COMMAND_BUFFER, 1, command_buffer_id=7,
                                     physical_device_ordinal=devices[0]))
    b.chunk("command-operations", fixed(schema.COMMAND_OPERATION, 2, type=2, command_buffer_id=7,
                                        command_index=[0, 1], executable_id=1,
                                        function_ordinal=[0, 1], block_ordinal=U32_MAX,
                                        block_command_ordinal=U32_MAX,
                                        target_block_ordinal=U32_MAX,
                                        alternate_block_ordinal=U32_MAX))


def dispatch_chunk(b: Builder, pdo: int, queue: int, events: np.ndarray, **header) -> None:
    fields = dict(physical_device_ordinal=pdo, queue_ordinal=queue, stream_id=stream_of(pdo, queue))
    fields.update(header)
    b.chunk("dispatch-events", events, **fields)


def dispatch_events(rng: np.random.Generator, n: int, first_event: int, first_tick: int,
                    invalid_fraction: float = 0.05, functions=((1, 0), (1, 1), (2, 0), (2, 1))):
    ev = fixed(schema.DISPATCH_EVENT, n)
    ev["event_id"] = np.arange(first_event, first_event + n)
    ev["submission_id"] = first_event // 16 + np.arange(n) // 5
    ev["command_buffer_id"] = np.where(rng.random(n) < 0.5, 7, 0)
    ev["command_index"] = np.where(ev["command_buffer_id"] != 0, rng.integers(0, 2, n), U32_MAX)
    pick = rng.integers(0, len(functions), n)
    ev["executable_id"] = [functions[p][0] for p in pick]
    ev["function_ordinal"] = [functions[p][1] for p in pick]
    ev["workgroup_count"] = [8, 1, 1]
    ev["workgroup_size"] = [64, 1, 1]
    duration = rng.choice([50, 100, 100, 123, 500, 500, 750, 1000], n)  # many ties
    gaps = rng.choice([0, 0, 10, 2000], n)
    start = first_tick + np.cumsum(gaps + np.r_[0, duration[:-1]])
    # some dispatches overlap their predecessor, as concurrent queue work does
    start = start - np.where(rng.random(n) < 0.2, duration // 2, 0)
    ev["start_tick"] = start
    ev["end_tick"] = start + duration
    bad = np.flatnonzero(rng.random(n) < invalid_fraction)
    kinds = rng.integers(0, 3, len(bad))
    for i, kind in zip(bad, kinds):
        if kind == 0:
            ev["start_tick"][i] = 0
        elif kind == 1:
            ev["end_tick"][i] = 0
        else:
            ev["start_tick"][i], ev["end_tick"][i] = ev["end_tick"][i], ev["start_tick"][i] - 1
    return ev


def queue_events(rng: np.random.Generator, n: int, devices, queues_per_device: int) -> np.ndarray:
    ev = fixed(schema.QUEUE_EVENT, n)
    ev["type"] = rng.integers(0, 13, n)            # 12 is beyond host_call: counted nowhere
    ev["dependency_strategy"] = rng.integers(0, 5, n)  # 4 is unknown: counted nowhere
    ev["event_id"] = np.arange(1, n + 1)
    ev["host_time_ns"] = 1_000_000 + np.arange(n) * 100
    ev["ready_host_time_ns"] = ev["host_time_ns"] + 7
    ev["submission_id"] = np.arange(n) // 3
    pdo = rng.choice(list(devices), n)
    q = rng.integers(0, queues_per_device, n)
    ev["physical_device_ordinal"] = pdo
    ev["queue_ordinal"] = q
    ev["stream_id"] = (pdo.astype(np.uint64) << np.uint64(32)) | q.astype(np.uint64)
    ev["payload_length"] = rng.integers(0, 1 << 20, n)
    ev["operation_count"] = 1
    return ev


def memory_events(rng: np.random.Generator, n: int, devices) -> np.ndarray:
    ev = fixed(schema.MEMORY_EVENT, n)
    ev["type"] = rng.choice([0, 1, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 10, 11, 12, 13], n)
    ev["flags"] = np.where(rng.random(n) < 0.7, F.MEMORY_POOL_RESERVATION, 0) | \
        np.where(rng.random(n) < 0.5, F.MEMORY_POOL_STATS, 0)
    ev["event_id"] = np.arange(1, n + 1)
    ev["host_time_ns"] = 2_000_000 + np.arange(n)
    ev["allocation_id"] = rng.integers(1, 6, n)
    ev["pool_id"] = rng.integers(0, 3, n)
    ev["physical_device_ordinal"] = rng.choice(list(devices), n)
    ev["queue_ordinal"] = rng.integers(0, 2, n)
    ev["length"] = rng.choice([64, 256, 4096, 65536, 1 << 20], n)
    ev["pool_bytes_reserved"] = rng.integers(0, 1 << 30, n)
    return ev


def host_dispatches(rng: np.random.Generator, n: int, invalid_fraction: float = 0.1) -> np.ndarray:
    ev = fixed(schema.HOST_EXECUTION_EVENT, n)
    ev["type"] = np.where(rng.random(n) < 0.8, 2, 3)   # dispatch spans, plus some executes
    ev["event_id"] = np.arange(1, n + 1)
    ev["submission_id"] = np.arange(n) // 4
    ev["command_buffer_id"] = np.where(rng.random(n) < 0.5, 7, 0)
    ev["command_index"] = rng.integers(0, 2, n)
    ev["executable_id"] = rng.integers(1, 3, n)
    ev["function_ordinal"] = rng.integers(0, 2, n)
    ev["physical_device_ordinal"] = 0
    ev["queue_ordinal"] = 0
    ev["stream_id"] = 0
    start = 5_000 + np.arange(n) * 1000
    duration = rng.choice([10, 20, 20, 300, 300, 999], n)
    ev["start_host_time_ns"] = start
    ev["end_host_time_ns"] = start + duration
    bad = rng.random(n) < invalid_fraction
    ev["start_host_time_ns"][bad & (rng.random(n) < 0.5)] = -5
    rev = bad & (ev["start_host_time_ns"] >= 0)
    ev["end_host_time_ns"][rev] = ev["start_host_time_ns"][rev] - 1
    ev["tile_count"] = rng.integers(1, 9, n)
    ev["tile_duration_sum_ns"] = rng.integers(0, 500, n)
    return ev


def amdgpu_bundle(seed: int, *, devices=(0, 1, 2), n_events: int = 60, clocks: str = "mixed",
                  with_queue_events: bool = True, with_memory: bool = True, extras: bool = True,
                  names=("matmul_kernel", "conv_kernel", "", "softmax")) -> Builder:
    rng = np.random.default_rng(seed)
    b = Builder()
    b.begin()
    metadata(b, devices, names=names)
    # clock samples: device 0 a good fit, device 1 an unaligned sample (no fit), device 2 a second
    # good fit at another rate; "fit" gives every device a good fit, "none" no samples at all.
    def clocks_at(sample_id: int, scale: int) -> None:
        if clocks == "none":
            return
        rows = []
        for pdo in devices:
            flags = CLOCK_OK
            if clocks == "mixed" and pdo == 1 and sample_id == 2:
                flags |= F.CLOCK_DEVICE_TICK_UNALIGNED
            rate = 10 if pdo != 2 else 3
            rows.append(clock(pdo, sample_id, 1_000_000 * scale, 5_000_000_000 + rate * 1_000_000 *
                              scale + 7 * pdo, flags))
        b.chunk("clock-correlations", rows)

    clocks_at(1, 1)
    event_id = 1
    for round_ in range(2):
        for pdo in devices:
            for queue in range(2):
                n = int(rng.integers(n_events // 2, n_events))
                ev = dispatch_events(rng, n, event_id, 1_100_000 + round_ * 400_000 + queue * 1000)
                event_id += n
                dispatch_chunk(b, pdo, queue, ev)
        clocks_at(2 + round_, 2 + round_)
    if with_queue_events:
        b.chunk("queue-events", queue_events(rng, 40, devices, 2))
        if extras:  # a truncated queue-events chunk that only reports drops
            b.chunk("queue-events", b"", chunk_flags=1, dropped_record_count=7)
    if with_memory:
        b.chunk("memory-events", memory_events(rng, 120, devices))
    if extras:
        b.chunk("vendor-extension", b"\x01\x02\x03")               # unknown content type
        b.record(2, "application/x-unknown", b"abc", session_id=1)  # unknown, not IREE-prefixed
        b.record(4, schema.CONTENT_TYPE_PREFIX + "session")          # unknown record type
        b.chunk("session", b"")                                      # a session chunk is unknown
        b.chunk("memory-events", memory_events(rng, 5, devices), chunk_flags=1,
                dropped_record_count=3)
        b.end(status=13, stream_id=5, event_id=9)
        b.begin(session_id=2)
        b.end(session_id=2, status=8)
    else:
        b.end()
    return b


# --- comparison helpers ---------------------------------------------------------------------------


def ours(path, *args) -> tuple[int, list[dict], str]:
    options = {}
    for a in args:
        k, v = a[2:].split("=", 1)
        options[k] = int(v) if k == "id" else v
    try:
        rows = explain.report(Bundle.open(path), ReportOptions(**options))
    except AmdgpuCliError as e:
        return e.exit_code, [], e.one_line()
    return 0, [json.loads(dumps(r)) for r in rows], ""


def assert_rows_equal(theirs: list[dict], mine: list[dict], context) -> None:
    assert len(mine) == len(theirs), (context, [r["type"] for r in theirs],
                                      [r["type"] for r in mine])
    for t, o in zip(theirs, mine):
        assert list(o) == list(t), (context, t, o)
        for k, v in t.items():
            if isinstance(v, float) or isinstance(o[k], float):
                assert math.isclose(o[k], v, rel_tol=1e-9, abs_tol=1e-9), (context, k, t, o)
            else:
                assert o[k] == v, (context, k, t, o)


def check(iree_profile, path, *args) -> list[dict]:
    """Our rows equal iree-profile's, or both fail with the same exit status."""
    theirs = iree_profile(["explain", "--format=jsonl", *args, path])
    rc, rows, err = ours(path, *args)
    assert rc == theirs.returncode, (path, args, theirs.stderr, err)
    if rc:
        assert err and "\n" not in err
        return []
    assert_rows_equal(jsonl_rows(theirs.stdout), rows, (path, args))
    return rows


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "amdgpu_cli.cli.profile_entry", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


# --- real bundles ---------------------------------------------------------------------------------


def test_every_real_bundle_matches(iree_bundles, iree_profile):
    for key, path in iree_bundles.items():
        rows = check(iree_profile, path)
        if rows:
            # local devices: host-execution timing, so the top dispatch rows carry command ids
            assert rows[0]["type"] == "explain_summary", key


@pytest.mark.parametrize("args", [("--filter=*dispatch_0*",), ("--filter=nothing",), ("--id=3",),
                                  ("--id=999999",), ("--filter=*matmul*", "--id=4")])
def test_real_bundles_with_filter_and_id(iree_bundles, iree_profile, args):
    keys = ["mlp-local-task-all", "conv-local-task-full", "attention-local-task-host-execution",
            "mlp-bench-local-task-all", "loop-local-sync-all", "mlp-local-task-memory-events"]
    for key in keys:
        check(iree_profile, iree_bundles[key], *args)


# --- synthetic AMDGPU-style bundles ---------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_synthetic_amdgpu_bundles(tmp_path, iree_profile, seed):
    path = amdgpu_bundle(seed, clocks=["mixed", "fit", "none"][seed % 3],
                         extras=seed % 2 == 0).write(tmp_path / f"s{seed}.ireeprof")
    rows = check(iree_profile, path)
    types = {r["type"] for r in rows}
    assert {"explain_device", "explain_queue", "explain_top_function",
            "explain_top_dispatch", "explain_memory_pressure"} <= types
    for args in [("--filter=matmul_kernel",), ("--filter=device*",), ("--filter=*_kernel",),
                 ("--filter=nothing",), ("--id=5",), ("--id=40", "--filter=*kernel")]:
        check(iree_profile, path, *args)


def test_synthetic_hints_cover_every_kind(tmp_path, iree_profile):
    path = amdgpu_bundle(0, extras=True).write(tmp_path / "hints.ireeprof")
    rows = check(iree_profile, path)
    hints = {(r["severity"], r["category"]) for r in rows if r["type"] == "explain_hint"}
    assert {("warning", "format"), ("error", "format"), ("error", "session"),
            ("warning", "dispatch"), ("warning", "memory")} <= hints
    summary = rows[0]
    assert summary["non_ok_session_end_records"] == 2
    assert summary["first_non_ok_status"] == "INTERNAL"
    assert summary["truncated_chunks"] == 2 and summary["dropped_records"] == 10

    # no queue events and no valid dispatch: the two info hints
    b = amdgpu_bundle(1, with_queue_events=False, extras=False, n_events=4)
    quiet = check(iree_profile, b.write(tmp_path / "quiet.ireeprof"), "--filter=nothing")
    hints = {(r["severity"], r["category"], r["message"][:12]) for r in quiet
             if r["type"] == "explain_hint"}
    assert ("info", "queue", "queue event ") in hints
    assert ("info", "dispatch", "no valid dis") in hints


def test_synthetic_host_execution_spans(tmp_path, iree_profile):
    """Local-style bundles: host dispatch spans (some invalid) rank functions and dispatches."""
    rng = np.random.default_rng(7)
    b = Builder()
    b.begin()
    metadata(b, devices=(0,), queues_per_device=1)
    b.chunk("queues", fixed(schema.QUEUE, 1, physical_device_ordinal=0, queue_ordinal=0))
    for _ in range(3):
        b.chunk("host-execution-events", host_dispatches(rng, 50))
    b.end()
    path = b.write(tmp_path / "host.ireeprof")
    rows = check(iree_profile, path)
    assert rows[-1]["message"].startswith("device dispatch events are absent")
    assert any(r["type"] == "explain_hint" and "host execution dispatch spans had" in r["message"]
               for r in rows)
    for args in [("--filter=conv*",), ("--id=17",), ("--filter=device0*",)]:
        check(iree_profile, path, *args)


def test_synthetic_top_ties_and_many_events(tmp_path, iree_profile):
    """Thousands of equal-duration dispatches: the top-8 replacement order must match exactly."""
    rng = np.random.default_rng(11)
    b = Builder()
    b.begin()
    metadata(b, devices=(0,))
    b.chunk("clock-correlations", clock(0, 1, 1_000_000, 9_000_000_000))
    ev = dispatch_events(rng, 20_000, 1, 1_100_000, invalid_fraction=0.01)
    dispatch_chunk(b, 0, 0, ev[:12_000])
    dispatch_chunk(b, 0, 1, ev[12_000:])
    b.chunk("clock-correlations", clock(0, 2, 90_000_000, 9_900_000_123))
    b.end()
    check(iree_profile, b.write(tmp_path / "ties.ireeprof"))


def test_memory_balances_with_large_lengths(tmp_path, iree_profile):
    """Byte balances near 2**64 take the exact (non-int64) path."""
    b = Builder()
    b.begin()
    metadata(b, devices=(0,))
    ev = fixed(schema.MEMORY_EVENT, 6, event_id=np.arange(1, 7), physical_device_ordinal=0,
               allocation_id=1, pool_id=1, flags=F.MEMORY_POOL_RESERVATION)
    ev["type"] = [3, 4, 5, 3, 4, 5]
    ev["length"] = [1 << 62, 1 << 62, 1 << 61, 1 << 63, 1 << 61, 1 << 63]
    b.chunk("memory-events", ev)
    b.end()
    rows = check(iree_profile, b.write(tmp_path / "bigmem.ireeprof"))
    memory = next(r for r in rows if r["type"] == "explain_memory_pressure")
    assert memory["pool_reserved_high_water_bytes"] == (1 << 63) + (1 << 61)


def test_memory_heavy_lifecycles(tmp_path, iree_profile):
    """Many events on few reservations: materialize/release interplay and clamped balances."""
    rng = np.random.default_rng(5)
    b = Builder()
    b.begin()
    metadata(b, devices=(0, 1))
    for _ in range(4):
        ev = memory_events(rng, 2000, (0, 1))
        ev["allocation_id"] = rng.integers(1, 4, len(ev))
        ev["pool_id"] = rng.integers(0, 2, len(ev))
        b.chunk("memory-events", ev)
    b.end()
    rows = check(iree_profile, b.write(tmp_path / "memheavy.ireeprof"))
    assert sum(r["type"] == "explain_memory_pressure" for r in rows) == 2


# --- failures -------------------------------------------------------------------------------------


def _failing(tmp_path, name: str, mutate) -> str:
    b = Builder()
    b.begin()
    metadata(b, devices=(0,))
    mutate(b)
    b.end()
    return b.write(tmp_path / f"{name}.ireeprof")


FAILURES = {
    "missing_function": lambda b: dispatch_chunk(
        b, 0, 0, fixed(schema.DISPATCH_EVENT, 1, event_id=3, executable_id=9, start_tick=1,
                       end_tick=2)),
    "missing_queue": lambda b: dispatch_chunk(
        b, 0, 5, fixed(schema.DISPATCH_EVENT, 1, event_id=3, executable_id=1, start_tick=1,
                       end_tick=2)),
    "queue_event_missing_queue": lambda b: b.chunk(
        "queue-events", fixed(schema.QUEUE_EVENT, 1, physical_device_ordinal=4)),
    "host_missing_function": lambda b: b.chunk(
        "host-execution-events", fixed(schema.HOST_EXECUTION_EVENT, 1, type=2, event_id=3,
                                       executable_id=5, stream_id=stream_of(0, 0))),
    "host_negative_tile_sum": lambda b: b.chunk(
        "host-execution-events", fixed(schema.HOST_EXECUTION_EVENT, 1, type=2, event_id=3,
                                       executable_id=1, start_host_time_ns=1,
                                       end_host_time_ns=5, tile_duration_sum_ns=-1)),
    "torn_typed_record": lambda b: b.chunk("counter-samples", b"\x00" * 50),
    "bad_variable_length": lambda b: b.chunk(
        "counter-sets", fixed(schema.COUNTER_SET, 1, name_length=3)),
    "function_before_executable": lambda b: b.chunk(
        "executable-functions", function(3, 0, "early")) or b.chunk(
        "executables", fixed(schema.EXECUTABLE, 1, executable_id=3)),
    "dispatch_tick_overflow": lambda b: dispatch_chunk(
        b, 0, 0, fixed(schema.DISPATCH_EVENT, 2, executable_id=1, start_tick=1,
                       end_tick=U64_MAX)),
    "memory_overflow": lambda b: b.chunk(
        "memory-events", fixed(schema.MEMORY_EVENT, 2, type=9, length=1 << 63)),
}


@pytest.mark.parametrize("name", sorted(FAILURES))
def test_bad_bundles_fail_like_iree(tmp_path, iree_profile, name):
    path = _failing(tmp_path, name, FAILURES[name])
    theirs = iree_profile(["explain", "--format=jsonl", path])
    assert theirs.returncode != 0, theirs.stdout
    check(iree_profile, path)


def test_metadata_errors_only_for_id_matching_events(tmp_path, iree_profile):
    """An unresolvable dispatch fails even when --filter excludes it, but not when --id does."""
    path = _failing(tmp_path, "missing", FAILURES["missing_function"])
    assert check(iree_profile, path, "--filter=nothing") == []
    rows = check(iree_profile, path, "--id=4")
    assert rows and rows[0]["dispatches"] == 0


def test_torn_file_and_empty_bundle(tmp_path, iree_profile):
    data = amdgpu_bundle(2, extras=False).tobytes()
    torn = tmp_path / "torn.ireeprof"
    torn.write_bytes(data[:16] + b"\x00" * 8 + data[24:-50])  # file_length 0, last record cut
    assert check(iree_profile, torn) == []
    empty = tmp_path / "empty.ireeprof"
    empty.write_bytes(Builder().tobytes())
    rows = check(iree_profile, empty)
    assert [r["type"] for r in rows] == ["explain_summary", "explain_queue_operations",
                                         "explain_hint", "explain_hint"]


# --- command line ---------------------------------------------------------------------------------


def test_cli_jsonl_text_and_errors(tmp_path, iree_bundles, iree_profile):
    path = amdgpu_bundle(3, extras=True).write(tmp_path / "cli.ireeprof")
    out = run_cli("explain", "--format=jsonl", "--filter=*kernel", path)
    assert out.returncode == 0, out.stderr
    theirs = iree_profile(["explain", "--format=jsonl", "--filter=*kernel", path])
    assert_rows_equal(jsonl_rows(theirs.stdout), jsonl_rows(out.stdout), "cli")

    for bundle in (path, iree_bundles["mlp-local-task-all"]):
        text = run_cli("explain", bundle)
        assert text.returncode == 0, text.stderr
        lines = text.stdout.splitlines()
        assert lines[0] == "IREE HAL profile explain"
        for section in ("devices", "queues:", "top functions", "top individual dispatches",
                        "queue operations:", "memory pressure", "hints:"):
            assert any(line.startswith(section) for line in lines), section
    text = run_cli("explain", path).stdout
    assert "[error] session: 2 profiling session end record(s) reported non-OK status" in text
    assert "gaps" in text and "clock fit yes" in text

    bad = _failing(tmp_path, "bad", FAILURES["missing_queue"])
    for fmt in ("text", "jsonl"):
        result = run_cli("explain", f"--format={fmt}", bad)
        theirs = iree_profile(["explain", f"--format={fmt}", bad])
        assert result.returncode == theirs.returncode == 1
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert result.stdout == ""


# --- the vectorized helpers against the plain recurrences they replace ----------------------------


def test_clamped_running_matches_the_recurrence():
    rng = np.random.default_rng(3)
    for big in (False, True):
        n = 5000
        codes = rng.integers(0, 7, n)
        scale = (1 << 62) if big else 1000
        deltas = [int(x) * (scale // 1000 if big else 1) for x in rng.integers(-1000, 1000, n)]
        got = explain._clamped_running(deltas, codes)
        assert (got.dtype == object) == big
        state: dict[int, int] = {}
        want = []
        for g, d in zip(codes.tolist(), deltas):
            state[g] = max(0, state.get(g, 0) + d)
            want.append(state[g])
        assert [int(x) for x in got] == want


def test_top_slots_replays_iree_replacement_order():
    rng = np.random.default_rng(4)
    for n, values in ((5, 10), (20_000, 6), (20_000, 10_000), (9000, 3)):
        durations = rng.integers(0, values, n).astype(np.uint64)
        if n == 9000:
            durations = np.sort(durations)  # increasing: every event enters the table
        slots: list[int] = []
        for i, d in enumerate(durations.tolist()):
            if len(slots) < 8:
                slots.append(i)
                continue
            low = min(range(8), key=lambda s: (int(durations[slots[s]]), s))
            if d > int(durations[slots[low]]):
                slots[low] = i
        order = sorted(range(len(slots)), key=lambda s: -int(durations[slots[s]]))  # stable
        want = [slots[s] for s in order]
        assert explain._top_slots(durations) == want


def test_groups_number_in_first_seen_order():
    a = np.array([5, 3, 5, 9, 3, 5], np.uint64)
    b = np.array([1, 1, 1, 0, 2, 1], np.uint32)
    codes, first = explain._groups(a, b)
    assert codes.tolist() == [0, 1, 0, 2, 3, 0]
    assert first.tolist() == [0, 1, 3, 4]


def test_nanosecond_overflow_and_unknown_device(tmp_path, iree_profile):
    """A total that overflows int64 ns keeps ticks only (the max may still convert), and a
    dispatch chunk scoped to no device (ordinal MAX) gets the device-less numeric key."""
    b = Builder()
    b.begin()
    metadata(b, devices=(0,))
    b.chunk("queues", fixed(schema.QUEUE, 1, physical_device_ordinal=U32_MAX, queue_ordinal=0,
                            stream_id=0))
    # 1,000,000 ns per tick
    b.chunk("clock-correlations", clock(0, 1, 1_000, 1_000_000_000))
    ev = fixed(schema.DISPATCH_EVENT, 3, event_id=[1, 2, 3], executable_id=2, function_ordinal=0,
               submission_id=[1, 1, 2])
    ev["start_tick"] = [10, 6_000_000_000_100, 12_000_000_000_200]
    ev["end_tick"] = [6_000_000_000_010, 12_000_000_000_100, 12_000_000_000_300]
    dispatch_chunk(b, 0, 0, ev)
    b.chunk("clock-correlations", clock(0, 2, 2_000, 2_000_000_000))
    dispatch_chunk(b, U32_MAX, 0, fixed(schema.DISPATCH_EVENT, 1, event_id=4, executable_id=2,
                                        function_ordinal=0, start_tick=5, end_tick=9),
                   stream_id=0)
    b.end()
    rows = check(iree_profile, b.write(tmp_path / "ns_overflow.ireeprof"))
    top = [r for r in rows if r["type"] == "explain_top_function"]
    assert top[0]["duration_ns_available"] is False and top[0]["max_ns"] > 0
    assert any(r["key"] == "executable2#0" for r in top)

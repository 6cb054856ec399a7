"""The projection commands (dispatch, executable, command, queue) against iree-profile 3.13.0.

Every JSONL row must equal iree-profile's (same keys in the same order, same values, floats within
1e-9 relative), and every failure must fail there too (exit status 1). Inputs: the real IREE
bundles (local-task / local-sync: host dispatch spans, queue events, command buffers; local-sync
bundles reference a command buffer they never describe, so `command` fails on them), and synthetic
AMDGPU-style bundles written here byte by byte: several devices and queues, clock samples (a good
fit, an unaligned device), device dispatch events (direct and in command buffers, invalid tick
pairs, a group of 2000, a tie-rounding group, a group whose variance defeats IREE's square root),
command buffers with block structure, device queue events, truncated queue-event chunks, unknown
enum values, and broken bundles (missing metadata, torn records, overflowing totals).

The text renderers are checked for line width and for carrying every number iree-profile's text
prints.
"""

from __future__ import annotations

import importlib
import json
import math
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from click.testing import CliRunner

from amdgpu_cli.cli.profile import profile
from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.jsonl import dumps
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports.projection import iree_sqrt, welford

U32_MAX = schema.U32_MAX
U64_MAX = schema.U64_MAX
COMMANDS = ("dispatch", "executable", "command", "queue")
F = schema.Flags


# --- running both tools ---------------------------------------------------------------------------

def ours(command: str, path, **options) -> tuple[int, list[dict] | str]:
    module = importlib.import_module(f"amdgpu_cli.profile.reports.{command}")
    try:
        rows = [json.loads(dumps(r)) for r in module.report(Bundle.open(path),
                                                            ReportOptions(**options))]
    except AmdgpuCliError as e:
        return e.exit_code, str(e)
    return 0, rows


def theirs(iree_profile, command: str, path, **options) -> tuple[int, list[dict] | str]:
    args = [command, "--format=jsonl"]
    if "filter" in options:
        args.append(f"--filter={options['filter']}")
    if "id" in options:
        args.append(f"--id={options['id']}")
    if options.get("dispatch_events"):
        args.append("--dispatch_events")
    proc = iree_profile([*args, path])
    if proc.returncode:
        return proc.returncode, proc.stderr.strip()
    return 0, [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def difference(iree_profile, command: str, path, **options) -> str | None:
    """None when our rows (or failure) equal iree-profile's, else a description."""
    rc_ours, got = ours(command, path, **options)
    rc_theirs, want = theirs(iree_profile, command, path, **options)
    where = f"{command} {options} {path.name}"
    if rc_ours != rc_theirs:
        return f"{where}: exit {rc_ours} ({got if rc_ours else ''}) vs {rc_theirs} " \
               f"({want if rc_theirs else ''})"
    if rc_ours:
        return None
    if len(got) != len(want):
        types = lambda rows: [r.get("type") for r in rows]  # noqa: E731
        return f"{where}: {len(got)} rows vs {len(want)}: {types(got)[:8]} vs {types(want)[:8]}"
    for i, (a, b) in enumerate(zip(got, want)):
        if list(a) != list(b):
            return f"{where}: row {i} keys {list(a)} vs {list(b)}"
        for key in a:
            if not _same(a[key], b[key]):
                return f"{where}: row {i} ({a['type']}) {key}: {a[key]!r} vs {b[key]!r}"
    return None


def check_all(iree_profile, cases) -> None:
    """Runs (command, path, options) cases (iree-profile in parallel) and reports all failures."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda c: difference(iree_profile, c[0], c[1], **c[2]), cases))
    failures = [r for r in results if r]
    assert not failures, "\n".join(failures[:10])


# --- a raw bundle builder (no validation: it must be able to write broken files) ------------------

def typed(dtype: np.dtype, n: int | None = None, **fields) -> np.ndarray:
    """Typed records of `dtype` with the given fields (scalars broadcast, else one per row)."""
    if n is None:
        n = 1
        for name, value in fields.items():
            if np.ndim(value) > len(dtype.fields[name][0].shape):
                n = len(value)
                break
    rows = np.zeros(n, dtype)
    rows["record_length"] = dtype.itemsize
    for name, value in fields.items():
        rows[name] = value
    return rows


def function(executable_id: int, ordinal: int, name: str, **fields) -> bytes:
    raw = name.encode()
    rows = typed(schema.FUNCTION, 1, executable_id=executable_id, function_ordinal=ordinal,
                 name_length=len(raw), **fields)
    rows["record_length"] += len(raw)
    return rows.tobytes() + raw


class Writer:
    """Records of one .ireeprof file, written as IREE's file sink writes them."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def record(self, record_type: int, content: str, payload: bytes = b"", *,
               name: str = "amdgpu", pdo: int = U32_MAX, queue: int = U32_MAX,
               stream: int = 0, flags: int = 0, dropped: int = 0, status: int = 0) -> "Writer":
        content_bytes = (schema.CONTENT_TYPE_PREFIX + content).encode()
        name_bytes = name.encode()
        h = np.zeros(1, schema.RECORD_HEADER)
        h["record_length"] = 104 + len(content_bytes) + len(name_bytes) + len(payload)
        h["payload_length"] = len(payload)
        h["session_id"], h["stream_id"], h["header_length"] = 1, stream, 104
        h["content_type_length"], h["name_length"] = len(content_bytes), len(name_bytes)
        h["physical_device_ordinal"], h["queue_ordinal"] = pdo, queue
        h["chunk_flags"], h["dropped_record_count"] = flags, dropped
        h["session_status_code"], h["record_type"] = status, record_type
        self.parts.append(h.tobytes() + content_bytes + name_bytes + payload)
        return self

    def chunk(self, content: str, *payloads, **header) -> "Writer":
        payload = b"".join(p.tobytes() if isinstance(p, np.ndarray) else p for p in payloads)
        return self.record(2, content, payload, **header)

    def save(self, path) -> None:
        body = b"".join(self.parts)
        h = np.zeros(1, schema.FILE_HEADER)
        h["magic"], h["version_major"], h["version_minor"] = schema.MAGIC, 1, 6
        h["header_length"], h["file_length"] = 24, 24 + len(body)
        path.write_bytes(h.tobytes() + body)


def session(w: Writer, build) -> Writer:
    w.record(1, "session")
    build(w)
    w.record(3, "session")
    return w


# --- synthetic AMDGPU-style content ---------------------------------------------------------------

STREAM_1_0 = 1 << 32


def metadata(w: Writer) -> None:
    w.chunk("devices", typed(schema.DEVICE, physical_device_ordinal=[0, 1], queue_count=[2, 1]))
    w.chunk("queues", typed(schema.QUEUE, physical_device_ordinal=[0, 0, 1],
                            queue_ordinal=[0, 1, 0], stream_id=[0, 1, STREAM_1_0]))
    w.chunk("executables",
            typed(schema.EXECUTABLE, executable_id=[1, 2], function_count=[2, 2],
                  flags=[F.CODE_OBJECT_HASH, 0],
                  code_object_hash=[[0xFE9AA1C65C376BC8, 0x682500EA465C12AE], [0, 0]]),
            typed(schema.EXECUTABLE, executable_id=1, function_count=9))  # duplicate: ignored
    w.chunk("executable-functions",
            function(1, 0, "matmul_kernel", flags=F.FUNCTION_HASH, constant_count=2,
                     binding_count=3, parameter_count=5, workgroup_size=[64, 1, 1],
                     function_hash=[0x1111, 0x2222]),
            function(1, 1, "", binding_count=1, workgroup_size=[32, 2, 1]),
            function(2, 0, "copy_kernel", binding_count=2, workgroup_size=[256, 1, 1]),
            function(2, 1, "matmul_kernel", workgroup_size=[8, 8, 1]),
            function(1, 0, "shadowed_duplicate"))
    bs = F.OP_BLOCK_STRUCTURE
    w.chunk("command-buffers",
            typed(schema.COMMAND_BUFFER, command_buffer_id=[7, 8], mode=[1, 0],
                  command_categories=[3, 1], queue_affinity=[1, U64_MAX],
                  physical_device_ordinal=[0, 1]))
    ops = typed(schema.COMMAND_OPERATION, 10, command_buffer_id=7,
                command_index=np.arange(10), type=[2, 4, 3, 5, 7, 8, 1, 9, 6, 2],
                flags=[bs | F.OP_STATIC_BINDINGS, bs | F.OP_DYNAMIC_BINDINGS, bs, bs,
                       bs | F.OP_CONTROL_FLOW, bs | F.OP_CONTROL_FLOW, bs | 1, bs, bs, bs],
                block_ordinal=[0, 0, 0, 0, 0, 1, 1, 2, 2, 2],
                block_command_ordinal=[0, 1, 2, 3, 4, 0, 1, 0, 1, 2],
                executable_id=[1, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                function_ordinal=[0, U32_MAX, U32_MAX, U32_MAX, U32_MAX, U32_MAX, U32_MAX,
                                  U32_MAX, U32_MAX, 1],
                binding_count=[3, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                workgroup_count=[[4, 1, 1]] + [[0, 0, 0]] * 8 + [[2, 2, 1]],
                workgroup_size=[[64, 1, 1]] + [[0, 0, 0]] * 8 + [[32, 2, 1]],
                source_ordinal=[U32_MAX, 0] + [U32_MAX] * 8,
                target_ordinal=[U32_MAX, 1, 2, 3] + [U32_MAX] * 6,
                source_offset=[0, 16, 0, 0, 0, 0, 0, 0, 0, 0],
                target_offset=[0, 32, 64, 128, 0, 0, 0, 0, 0, 0],
                length=[0, 1024, 4096, 8, 0, 0, 0, 0, 0, 0],
                target_block_ordinal=[U32_MAX] * 4 + [1, 2] + [U32_MAX] * 4,
                alternate_block_ordinal=[U32_MAX] * 5 + [0] + [U32_MAX] * 4)
    w.chunk("command-operations", ops)
    w.chunk("command-operations",
            typed(schema.COMMAND_OPERATION, 2, command_buffer_id=8, command_index=[0, 1],
                  type=[2, 1], flags=[F.OP_STATIC_BINDINGS, 1], executable_id=[2, 0],
                  function_ordinal=[0, U32_MAX], block_ordinal=U32_MAX,
                  block_command_ordinal=U32_MAX, target_block_ordinal=U32_MAX,
                  alternate_block_ordinal=U32_MAX, source_ordinal=U32_MAX,
                  target_ordinal=U32_MAX, workgroup_count=[[16, 1, 1], [0, 0, 0]]))


def clock(pdo: int, sample_id: int, tick: int, host_ns: int, flags: int = 0xF) -> np.ndarray:
    return typed(schema.CLOCK_CORRELATION, flags=flags, physical_device_ordinal=pdo,
                 sample_id=sample_id, device_tick=tick, host_cpu_timestamp_ns=host_ns,
                 host_system_timestamp=host_ns, host_system_frequency_hz=1_000_000_000,
                 host_time_begin_ns=host_ns - 300, host_time_end_ns=host_ns + 300)


def dispatches(start, end, *, event_id=None, submission=1, command_buffer=0, command_index=None,
               executable=1, function=0, workgroup_count=(8, 1, 1),
               workgroup_size=(64, 1, 1), flags=None) -> np.ndarray:
    start = np.asarray(start, np.uint64)
    n = len(start)
    if command_index is None:
        command_index = U32_MAX if not np.any(command_buffer) else np.arange(n) % 10
    if flags is None:
        flags = np.where(np.asarray(command_buffer) != 0, F.DISPATCH_COMMAND_BUFFER, 0)
    return typed(schema.DISPATCH_EVENT, n,
                 event_id=np.arange(1, n + 1) if event_id is None else event_id,
                 submission_id=submission, command_buffer_id=command_buffer,
                 command_index=command_index, executable_id=executable,
                 function_ordinal=function, workgroup_count=list(workgroup_count),
                 workgroup_size=list(workgroup_size), start_tick=start,
                 end_tick=np.asarray(end, np.uint64), flags=flags)


def amdgpu_bundle(w: Writer) -> None:
    """The rich synthetic bundle: see the module docstring."""
    # Events may come before the metadata they reference.
    w.chunk("dispatch-events",
            dispatches([1_100_000, 1_100_600, 0, 1_200_000], [1_100_500, 1_100_723, 1_100_900,
                                                                1_199_000],
                       executable=[1, 1, 1, 2], function=[0, 1, 0, 1], event_id=[1, 2, 3, 4],
                       submission=[1, 1, 2, 2]),
            name="amdgpu.dispatch", pdo=0, queue=0, stream=0)
    w.chunk("clock-correlations", clock(0, 1, 1_000_000, 5_000_000_000),
            clock(1, 1, 10_000, 7_000_000_000))
    metadata(w)
    # Command-buffer dispatches on two queues of device 0.
    w.chunk("dispatch-events",
            dispatches([1_300_000, 1_300_100], [1_300_090, 1_300_350], event_id=[5, 6],
                       submission=3, command_buffer=7, command_index=[0, 9],
                       executable=1, function=[0, 1]),
            name="amdgpu.dispatch", pdo=0, queue=0, stream=0)
    w.chunk("dispatch-events",
            dispatches([1_400_000, 1_400_500, 1_401_000], [1_400_400, 1_400_499, 1_401_333],
                       event_id=[1, 2, 3], submission=[1, 1, 2], command_buffer=[7, 7, 0],
                       command_index=[0, 9, U32_MAX], executable=1,
                       function=[0, 1, 0], workgroup_count=(3, 2, 1)),
            name="amdgpu.dispatch", pdo=0, queue=1, stream=1)
    # A large group (approximate mean/variance path) whose mean is a %.3f tie (k + 1/16), and a
    # small tie group (mean 100.0625): the printed value depends on IREE's running mean.
    rng = np.random.default_rng(1234)
    durations = rng.integers(10, 900, 2048).astype(np.uint64)
    durations[-1] += np.uint64((128 - int(durations.sum())) % 2048)
    starts = 2_000_000 + np.arange(2048, dtype=np.uint64) * 1000
    w.chunk("dispatch-events",
            dispatches(starts, starts + durations, event_id=np.arange(100, 2148),
                       submission=np.arange(2048) // 100 + 10, executable=2, function=0,
                       workgroup_count=(16, 1, 1)),
            name="amdgpu.dispatch", pdo=0, queue=0, stream=0)
    ties = np.array([100] * 15 + [101], np.uint64)
    starts = 3_000_000 + np.arange(16, dtype=np.uint64) * 1000
    w.chunk("dispatch-events",
            dispatches(starts, starts + ties, event_id=np.arange(3000, 3016), submission=40,
                       executable=2, function=1),
            name="amdgpu.dispatch", pdo=0, queue=1, stream=1)
    # Device 1: an unaligned clock (no fit), huge variance, invalid pairs.
    w.chunk("dispatch-events",
            dispatches([10, 20, 30, 5, 0], [11, 20 + 10 ** 13, 31, 4, 0], event_id=[1, 2, 3, 4, 5],
                       submission=[1, 1, 2, 2, 2], command_buffer=[8, 8, 0, 0, 8],
                       command_index=[0, 0, U32_MAX, U32_MAX, 0], executable=[2, 1, 1, 1, 2],
                       function=[0, 1, 1, 1, 0], workgroup_count=(1, 1, 1)),
            name="amdgpu.dispatch", pdo=1, queue=0, stream=STREAM_1_0)
    w.chunk("clock-correlations", clock(1, 2, 20_000, 7_000_100_000, flags=0x1F))
    # Queue events, one chunk truncated; unknown type and strategy values.
    q = typed(schema.QUEUE_EVENT, 6, type=[9, 3, 3, 10, 42, 2],
              dependency_strategy=[0, 1, 3, 2, 9, 1], flags=[0, 0, 1, 0, 0, 0],
              event_id=np.arange(1, 7), host_time_ns=9_000_000_000 + np.arange(6) * 1000,
              ready_host_time_ns=[9_000_000_500, 0, 9_000_002_500, 9_000_003_100, 0,
                                  9_000_005_050],
              submission_id=[1, 2, 3, 4, 5, 2], command_buffer_id=[0, 7, 7, 0, 0, 0],
              allocation_id=[1, 0, 0, 1, 0, 0], stream_id=[0, 0, 1, 0, STREAM_1_0, 0],
              physical_device_ordinal=[0, 0, 0, 0, 1, 0], queue_ordinal=[0, 0, 1, 0, 0, 0],
              wait_count=[0, 2, 1, 0, 0, 1], signal_count=1, barrier_count=[0, 1, 0, 0, 0, 0],
              operation_count=[1, 3, 3, 1, 1, 1], payload_length=[256, 0, 0, 256, 0, 64])
    w.chunk("queue-events", q[:4], name="amdgpu.queue")
    w.chunk("queue-events", q[4:], name="amdgpu.queue", flags=1, dropped=7)
    w.chunk("queue-device-events",
            typed(schema.QUEUE_DEVICE_EVENT, 4, type=[3, 9, 3, 4], event_id=[1, 2, 3, 1],
                  submission_id=[2, 1, 3, 1], command_buffer_id=[7, 0, 7, 8],
                  allocation_id=[0, 1, 0, 0], stream_id=[0, 0, 1, STREAM_1_0],
                  payload_length=[0, 256, 0, 4096], physical_device_ordinal=[0, 0, 0, 1],
                  queue_ordinal=[0, 0, 1, 0], operation_count=[3, 1, 3, 2],
                  start_tick=[1_300_000, 0, 1_400_000, 40], end_tick=[1_300_300, 5, 1_401_400, 90]),
            name="amdgpu.queue_device", pdo=0, queue=0, stream=0)
    # Host execution spans (dispatch spans with a command buffer, and other types).
    w.chunk("host-execution-events",
            typed(schema.HOST_EXECUTION_EVENT, 5, type=[2, 2, 3, 9, 2], flags=[5, 5, 5, 0, 0],
                  status_code=[0, 0, 0, 0, U32_MAX], event_id=[1, 2, 3, 4, 5],
                  submission_id=[2, 2, 2, 1, 6], command_buffer_id=[7, 7, 7, 0, 0],
                  executable_id=[1, 2, 0, 0, 1], allocation_id=[0, 0, 0, 3, 0],
                  stream_id=0, physical_device_ordinal=0, queue_ordinal=0,
                  command_index=[0, 9, U32_MAX, U32_MAX, U32_MAX],
                  function_ordinal=[0, 0, U32_MAX, U32_MAX, 1],
                  workgroup_count=[[1, 1, 1]] * 5, workgroup_size=[[4, 1, 1]] * 5,
                  start_host_time_ns=[9_002_000_000, 9_002_001_500, 9_001_999_000, 9_000_000_100,
                                      -1],
                  end_host_time_ns=[9_002_001_160, 9_002_003_000, 9_002_004_000, 9_000_000_400,
                                    10],
                  tile_count=[1, 4, 0, 0, 2], tile_duration_sum_ns=[1160, 1400, 0, 0, 9],
                  operation_count=[1, 1, 3, 1, 1]))
    w.chunk("clock-correlations", clock(0, 2, 1_999_983, 5_010_000_019))


VARIANTS = [
    {}, {"dispatch_events": True}, {"filter": "matmul_kernel"}, {"filter": "device0/*"},
    {"filter": "executable1#1"}, {"filter": "*copy*"}, {"filter": "dispatch"},
    {"filter": "execute"}, {"id": 1}, {"id": 2}, {"id": 7}, {"id": 8},
    {"id": 1, "dispatch_events": True}, {"filter": "matmul_kernel", "dispatch_events": True},
]


@pytest.fixture(scope="module")
def amdgpu_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("projection") / "amdgpu.ireeprof"
    session(Writer(), amdgpu_bundle).save(path)
    return path


def test_synthetic_amdgpu(iree_profile, amdgpu_path):
    check_all(iree_profile, [(c, amdgpu_path, v) for c in COMMANDS for v in VARIANTS])


def test_synthetic_content_is_exercised(amdgpu_path):
    """The synthetic bundle really has what the comparison is meant to cover."""
    _, rows = ours("dispatch", amdgpu_path)
    groups = [r for r in rows if r["type"] == "dispatch_group"]
    assert any(r["invalid"] for r in groups) and any(r["time_ns_available"] for r in groups)
    assert any(not r["clock_fit_available"] for r in groups)
    tie = next(r for r in groups if r["executable_id"] == 2 and r["function_ordinal"] == 1)
    assert tie["valid"] == 16 and tie["invalid"] == 1
    large = max(groups, key=lambda r: r["count"])
    assert large["valid"] == 2048 and large["total_ticks"] % 2048 == 128
    _, rows = ours("queue", amdgpu_path)
    summary = rows[0]
    assert summary["truncated_chunks"] == 1 and summary["dropped_records"] == 7
    assert {"unknown"} <= {r["op"] for r in rows if r["type"] == "queue_event"}
    _, rows = ours("command", amdgpu_path)
    assert any(r["type"] == "command_operation" and r["block_structure"] for r in rows)
    assert any(r["type"] == "command_execution" for r in rows)


def _with(extra) -> Writer:
    def build(w: Writer) -> None:
        metadata(w)
        w.chunk("clock-correlations", clock(0, 1, 1_000, 1_000), clock(0, 2, 4_000, 2_000))
        extra(w)
    return session(Writer(), build)


BROKEN = {
    # A dispatch whose function was never described: every projection fails, unless --id
    # skips it (the id filter comes before metadata resolution).
    "missing-function": lambda w: w.chunk(
        "dispatch-events", dispatches([1000, 1100], [1050, 1200], event_id=[1, 2],
                                      submission=[1, 2], function=[0, 7]),
        pdo=0, queue=0, stream=0),
    "missing-queue": lambda w: w.chunk(
        "dispatch-events", dispatches([1000], [1050]), pdo=0, queue=5, stream=5),
    "missing-command-buffer": lambda w: w.chunk(
        "dispatch-events", dispatches([1000], [1050], command_buffer=99, command_index=0),
        pdo=0, queue=0, stream=0),
    "host-missing-command-buffer": lambda w: w.chunk(
        "host-execution-events", typed(schema.HOST_EXECUTION_EVENT, type=2, event_id=1,
                                       submission_id=4, command_buffer_id=99, executable_id=1,
                                       function_ordinal=0, physical_device_ordinal=0,
                                       queue_ordinal=0, start_host_time_ns=5,
                                       end_host_time_ns=9)),
    "queue-event-missing-queue": lambda w: w.chunk(
        "queue-events", typed(schema.QUEUE_EVENT, type=3, event_id=1, submission_id=1,
                              physical_device_ordinal=3, queue_ordinal=0)),
    "negative-tile-sum": lambda w: w.chunk(
        "host-execution-events", typed(schema.HOST_EXECUTION_EVENT, type=2, event_id=1,
                                       submission_id=4, executable_id=1, function_ordinal=0,
                                       physical_device_ordinal=0, queue_ordinal=0,
                                       start_host_time_ns=5, end_host_time_ns=9,
                                       tile_count=1, tile_duration_sum_ns=-3)),
    "tick-total-overflow": lambda w: w.chunk(
        "dispatch-events", dispatches([1, 1], [U64_MAX - 1, U64_MAX - 1]),
        pdo=0, queue=0, stream=0),
    "huge-ticks": lambda w: w.chunk(
        "dispatch-events", dispatches([1], [U64_MAX - 1]), pdo=0, queue=0, stream=0),
    "torn-dispatch-events": lambda w: w.chunk(
        "dispatch-events", dispatches([1000], [1050]).tobytes()[:80], pdo=0, queue=0, stream=0),
    "extended-dispatch-record": lambda w: w.chunk(
        "dispatch-events", _extended(dispatches([1000, 2000], [1050, 2500])),
        pdo=0, queue=0, stream=0),
}


def _extended(rows: np.ndarray) -> bytes:
    """Dispatch records with 8 extra (forward-extension) bytes each."""
    rows = rows.copy()
    rows["record_length"] = rows.dtype.itemsize + 8
    return b"".join(r.tobytes() + b"\xab" * 8 for r in rows)


def test_broken_and_edge_bundles(iree_profile, tmp_path):
    cases = []
    for name, extra in BROKEN.items():
        path = tmp_path / f"{name}.ireeprof"
        _with(extra).save(path)
        cases += [(command, path, {}) for command in COMMANDS]
        cases += [(command, path, {"dispatch_events": True}) for command in ("dispatch", "command")]
        cases += [(command, path, {"id": 1}) for command in ("dispatch", "executable")]
    # A function described before its executable: the model itself is broken.
    path = tmp_path / "function-first.ireeprof"
    session(Writer(), lambda w: (w.chunk("executable-functions", function(3, 0, "f")),
                                 w.chunk("executables", typed(schema.EXECUTABLE,
                                                              executable_id=3)))).save(path)
    cases += [(command, path, {}) for command in COMMANDS]
    check_all(iree_profile, cases)


def test_failures_are_one_line_errors(tmp_path):
    path = tmp_path / "missing-function.ireeprof"
    _with(BROKEN["missing-function"]).save(path)
    for command in COMMANDS:
        result = CliRunner().invoke(profile, [command, str(path)])
        assert result.exit_code == 1
        assert "Traceback" not in (result.output or "")
    code, message = ours("dispatch", path)
    assert code == 1 and "missing executable function metadata" in message
    assert ours("dispatch", path, id=1)[0] == 0  # the broken event is not selected


# --- real IREE bundles ----------------------------------------------------------------------------

DETAILED = ("mlp-local-task-all", "mlp-bench-local-task-all", "mlp-local-sync-all")


def test_real_bundles(iree_profile, iree_bundles):
    """Every bundle through every projection; filters, ids and event rows on a few."""
    cases = [(command, path, {}) for path in iree_bundles.values() for command in COMMANDS]
    for key in DETAILED:
        path = iree_bundles[key]
        for command in COMMANDS:
            for options in ({"filter": "*dispatch_0*"}, {"filter": "alloca", "id": 3},
                            {"dispatch_events": True, "id": 3}):
                cases.append((command, path, options))
        cases.append(("dispatch", path, {"dispatch_events": True}))
    check_all(iree_profile, cases)


def test_local_sync_command_fails_like_iree(iree_bundles):
    """local-sync bundles reference command buffer 1 without describing it."""
    code, message = ours("command", iree_bundles["mlp-local-sync-all"])
    assert code == 1 and "command-buffer metadata" in message


# --- text -----------------------------------------------------------------------------------------

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(text))


@pytest.mark.parametrize("command", COMMANDS)
def test_text_carries_iree_numbers(command, iree_profile, iree_bundles, amdgpu_path):
    """Our text is laid out our way, but prints every number iree-profile's text prints."""
    for path in (amdgpu_path, iree_bundles["mlp-local-task-all"],
                 iree_bundles["conv-local-task-full"]):
        want = iree_profile([command, path])
        got = CliRunner().invoke(profile, [command, str(path)])
        assert got.exit_code == want.returncode == 0, got.output
        missing = _numbers(want.stdout) - _numbers(got.output)
        assert not missing, f"{command} {path.name}: missing {sorted(missing)[:10]}"
        long = [line for line in got.output.splitlines() if len(line) > 100]
        assert not long, long[:3]


# --- numerics -------------------------------------------------------------------------------------

def test_iree_sqrt_matches_newton_and_libm():
    values = np.array([0.0, -1.0, 0.25, 2.0, 1e6, 1e12])
    got = iree_sqrt(values)
    assert got[0] == 0.0 and got[1] == 0.0
    np.testing.assert_allclose(got[2:], np.sqrt(values[2:]), rtol=1e-15)
    # 32 Newton steps from the value itself do not reach sqrt(1e30) = 1e15.
    estimate = 1e30
    for _ in range(32):
        estimate = 0.5 * (estimate + 1e30 / estimate)
    assert iree_sqrt(1e30) == estimate and estimate > 1.1e15


def test_welford_matches_statistics():
    data = [float(x) for x in np.random.default_rng(7).integers(0, 10_000, 500)]
    mean, m2 = welford(data)
    assert math.isclose(mean, float(np.mean(data)), rel_tol=1e-12)
    assert math.isclose(m2 / (len(data) - 1), float(np.var(data, ddof=1)), rel_tol=1e-9)

"""`summary` against iree-profile 3.13.0: every JSONL row equal, on the real IREE bundles and on
synthetic AMDGPU-style bundles (written here byte by byte, so they can also be malformed); bad input
fails with iree-profile's exit status and one line on stderr.

The synthetic bundles carry what local drivers never produce: several devices, clock samples (good,
unaligned, single, bracket-only, non-increasing), dispatch events (valid and invalid), device queue
events, counters, device metrics, traces, unknown content and record types, truncated chunks,
non-OK session ends and forward-extended records.
"""

from __future__ import annotations

import contextlib
import io
import math
import struct

import numpy as np
import pytest
from click.testing import CliRunner

from amdgpu_cli.cli.main import profile_main
from amdgpu_cli.cli.profile import profile
from amdgpu_cli.profile import schema

U32_MAX = 0xFFFFFFFF
U64_MAX = 0xFFFFFFFFFFFFFFFF
PREFIX = schema.CONTENT_TYPE_PREFIX
BEGIN, CHUNK, END = 1, 2, 3


# --- a raw bundle builder (no validation: it must be able to write broken files) -------------

def typed(dtype: np.dtype, tail: bytes = b"", record_length: int | None = None, **fields) -> bytes:
    """One typed record: the layout's fields, `tail` after the head, and `record_length`."""
    row = np.zeros(1, dtype)
    for name, value in fields.items():
        row[name] = value
    row["record_length"] = dtype.itemsize + len(tail) if record_length is None else record_length
    return row.tobytes() + tail


def record(record_type: int, content: str, payload: bytes = b"", *, name: str = "synthetic",
           session_id: int = 1, stream_id: int = 0, event_id: int = 0, pdo: int = U32_MAX,
           queue: int = U32_MAX, chunk_flags: int = 0, dropped: int = 0, status: int = 0) -> bytes:
    content_bytes = (content if "/" in content else PREFIX + content).encode()
    name_bytes = name.encode()
    header = np.zeros(1, schema.RECORD_HEADER)
    header["record_length"] = 104 + len(content_bytes) + len(name_bytes) + len(payload)
    header["payload_length"] = len(payload)
    header["session_id"], header["stream_id"], header["event_id"] = session_id, stream_id, event_id
    header["header_length"] = 104
    header["content_type_length"], header["name_length"] = len(content_bytes), len(name_bytes)
    header["physical_device_ordinal"], header["queue_ordinal"] = pdo, queue
    header["chunk_flags"], header["dropped_record_count"] = chunk_flags, dropped
    header["session_status_code"], header["record_type"] = status, record_type
    return header.tobytes() + content_bytes + name_bytes + payload


def chunk(content: str, *records: bytes, **header) -> bytes:
    return record(CHUNK, content, b"".join(records), **header)


def bundle(*records: bytes, file_length: bool = True) -> bytes:
    body = b"".join(records)
    length = 24 + len(body) if file_length else 0
    return struct.pack("<IHHIIQ", schema.MAGIC, 1, 6, 24, 0, length) + body


def session(*chunks: bytes, status: int = 0) -> bytes:
    return (record(BEGIN, "session") + b"".join(chunks) + record(END, "session", status=status))


# --- record helpers ---------------------------------------------------------------------------

def device(pdo, queues):
    return typed(schema.DEVICE, physical_device_ordinal=pdo, queue_count=queues)


def queue(pdo, q):
    return typed(schema.QUEUE, physical_device_ordinal=pdo, queue_ordinal=q, stream_id=(pdo << 32) | q)


def clock(pdo, sample_id, tick, cpu_ns, begin=0, end=0, flags=0xF):
    return typed(schema.CLOCK_CORRELATION, flags=flags, physical_device_ordinal=pdo,
                 sample_id=sample_id, device_tick=tick, host_cpu_timestamp_ns=cpu_ns,
                 host_system_timestamp=cpu_ns // 10, host_system_frequency_hz=100_000_000,
                 host_time_begin_ns=begin, host_time_end_ns=end)


def dispatch(event_id, start, end, exe=1, func=0, cb=0, cmd=U32_MAX, submission=1, **extra):
    return typed(schema.DISPATCH_EVENT, event_id=event_id, submission_id=submission,
                 command_buffer_id=cb, executable_id=exe, command_index=cmd,
                 function_ordinal=func, workgroup_count=[4, 1, 1], workgroup_size=[64, 1, 1],
                 start_tick=start, end_tick=end, **extra)


def function(exe, ordinal, name: bytes, name_length=None):
    return typed(schema.FUNCTION, name, executable_id=exe, function_ordinal=ordinal,
                 name_length=len(name) if name_length is None else name_length,
                 workgroup_size=[64, 1, 1])


def host_exec(event_id, start, end, *, pdo=0, q=0, type_=2, exe=1, func=0, cb=0, cmd=U32_MAX,
              tiles=1, tile_ns=None, ops=1, payload=0):
    return typed(schema.HOST_EXECUTION_EVENT, type=type_, event_id=event_id, submission_id=event_id,
                 command_buffer_id=cb, executable_id=exe, physical_device_ordinal=pdo,
                 queue_ordinal=q, command_index=cmd, function_ordinal=func,
                 start_host_time_ns=start, end_host_time_ns=end, payload_length=payload,
                 tile_count=tiles, tile_duration_sum_ns=(end - start) if tile_ns is None else tile_ns,
                 operation_count=ops)


def queue_event(event_id, type_, t, ready, *, pdo=0, q=0, cb=0, ops=1, payload=0):
    return typed(schema.QUEUE_EVENT, type=type_, event_id=event_id, host_time_ns=t,
                 submission_id=event_id, command_buffer_id=cb, physical_device_ordinal=pdo,
                 queue_ordinal=q, stream_id=(pdo << 32) | q, operation_count=ops,
                 payload_length=payload, ready_host_time_ns=ready)


def queue_device_event(event_id, type_, start, end, *, pdo=0, q=0, cb=0, ops=1, payload=0):
    return typed(schema.QUEUE_DEVICE_EVENT, type=type_, event_id=event_id, submission_id=event_id,
                 command_buffer_id=cb, stream_id=(pdo << 32) | q, payload_length=payload,
                 physical_device_ordinal=pdo, queue_ordinal=q, operation_count=ops,
                 start_tick=start, end_tick=end)


def memory_event(event_id, type_, length, *, pdo=0, q=0):
    return typed(schema.MEMORY_EVENT, type=type_, event_id=event_id, host_time_ns=1000 + event_id,
                 allocation_id=event_id, physical_device_ordinal=pdo, queue_ordinal=q,
                 length=length)


def region(event_id, start, end):
    return typed(schema.COMMAND_REGION_EVENT, event_id=event_id, command_buffer_id=1,
                 physical_device_ordinal=0, queue_ordinal=0, start_host_time_ns=start,
                 end_host_time_ns=end)


def metric_sample(sample_id, pdo, values: int, begin=100, end=200):
    value = np.zeros(values, schema.METRIC_VALUE)
    value["metric_id"], value["value_bits"] = np.arange(1, values + 1), np.arange(values)
    tail = value.tobytes()
    return typed(schema.METRIC_SAMPLE, tail, sample_id=sample_id, source_id=1,
                 host_time_begin_ns=begin, host_time_end_ns=end, physical_device_ordinal=pdo,
                 value_count=values)


def trace(data: bytes, data_length=None):
    head = typed(schema.EXECUTABLE_TRACE, format=1, trace_id=1, dispatch_event_id=7, executable_id=1,
                 data_length=len(data) if data_length is None else data_length)
    return head + data


def amdgpu_bundle() -> bytes:
    """Two devices, three queues, every family, clocks at begin / middle / end."""
    image = bytes(range(200))
    return bundle(session(
        chunk("devices", device(0, 2), device(1, 1)),
        chunk("queues", queue(0, 0), queue(0, 1), queue(1, 0)),
        chunk("executables", typed(schema.EXECUTABLE, executable_id=1, function_count=2)),
        chunk("executable-code-objects", typed(schema.CODE_OBJECT, image, executable_id=1,
                                               code_object_id=1, data_length=len(image))),
        chunk("executable-code-object-loads", typed(schema.CODE_OBJECT_LOAD, executable_id=1,
                                                    code_object_id=1, load_size=4096)),
        chunk("executable-functions", function(1, 0, b"main_dispatch_0"), function(1, 1, b"")),
        chunk("command-buffers", typed(schema.COMMAND_BUFFER, command_buffer_id=7,
                                       physical_device_ordinal=0)),
        chunk("command-operations", typed(schema.COMMAND_OPERATION, type=2, command_buffer_id=7,
                                          executable_id=1), typed(schema.COMMAND_OPERATION, type=1,
                                                                  command_buffer_id=7, command_index=1)),
        chunk("clock-correlations", clock(0, 1, 1_000_000, 5_000_000_000, 9_000, 9_400),
              clock(1, 2, 3_000_000, 5_000_000_100, 9_100, 9_700)),
        chunk("dispatch-events", dispatch(1, 1_100_000, 1_100_500), dispatch(2, 1_150_000, 1_150_123),
              dispatch(3, 0, 1_150_300), dispatch(4, 1_200_000, 1_199_000, cb=7, cmd=0),
              dispatch(5, 1_200_100, 1_200_400, cb=7, cmd=0, func=1),
              pdo=0, queue=0, stream_id=0),
        chunk("dispatch-events", dispatch(6, 1_300_000, 1_300_777, exe=1, func=5, cb=7, cmd=3),
              pdo=0, queue=1, stream_id=1),
        chunk("dispatch-events", dispatch(7, 3_100_000, 3_100_999, exe=0, func=U32_MAX),
              dispatch(8, 3_200_000, 3_200_001, func=1),
              pdo=1, queue=0, stream_id=1 << 32),
        chunk("queue-device-events", queue_device_event(1, 2, 1_090_000, 1_210_000, payload=64),
              queue_device_event(2, 4, 0, 10, q=1), queue_device_event(3, 2, 3_000_500, 3_300_000,
                                                                         pdo=1, ops=3)),
        chunk("event-relationships", typed(schema.EVENT_RELATIONSHIP, type=1, relationship_id=1,
                                           source_type=1, target_type=3, source_id=1, target_id=1)),
        chunk("queue-events", queue_event(1, 2, 1000, 1500), queue_event(2, 9, 2000, 0, payload=256),
              queue_event(3, 3, 3000, 3400, cb=7, ops=4), queue_event(4, 2, -5, 100)),
        chunk("host-execution-events", host_exec(1, 100, 350), host_exec(2, 400, 300),
              host_exec(3, 500, 900, cb=7, cmd=0, tile_ns=-9), host_exec(4, 1000, 1100, tiles=0,
                                                                          tile_ns=55, exe=0)),
        chunk("command-region-events", region(1, 10, 60), region(2, -1, 5), region(3, 70, 71)),
        chunk("memory-events", memory_event(1, 9, 4096), memory_event(2, 10, 0),
              memory_event(3, 3, 1 << 20, pdo=1), memory_event(4, 9, 4096)),
        chunk("counter-sets", typed(schema.COUNTER_SET, b"SQ", counter_set_id=1, counter_count=1,
                                    sample_value_count=2, name_length=2)),
        chunk("counters", typed(schema.COUNTER, b"SQWAVESwaves", unit=1, counter_set_id=1,
                                sample_value_count=2, block_name_length=2, name_length=5,
                                description_length=5)),
        chunk("counter-samples", typed(schema.COUNTER_SAMPLE, struct.pack("<QQ", 11, 22), scope=1,
                                       sample_id=1, counter_set_id=1, dispatch_event_id=1,
                                       sample_value_count=2)),
        chunk("device-metric-sources", typed(schema.METRIC_SOURCE, b"smi", source_id=1,
                                             device_class=2, metric_count=2, name_length=3)),
        chunk("device-metric-descriptors", typed(schema.METRIC_DESCRIPTOR, b"clkclock", source_id=1,
                                                 metric_id=1, unit=2, value_kind=2, semantic=1,
                                                 plot_hint=4, name_length=3, description_length=5)),
        chunk("device-metric-samples", metric_sample(1, 0, 2), metric_sample(2, 1, 3),
              metric_sample(3, 1, 1, begin=-1)),
        chunk("executable-traces", trace(b"\x01\x02\x03\x04\x05")),
        chunk("application/x-unknown", b"whatever"),
        chunk("session", b""),
        chunk("queue-events", queue_event(5, 2, 4000, 4100), chunk_flags=1, dropped=17),
        chunk("memory-events", b"", chunk_flags=1, dropped=3),
        chunk("clock-correlations", clock(0, 3, 1_500_000, 5_005_000_003, 9_500, 9_600),
              clock(1, 4, 3_500_000, 5_000_166_767, 9_550, 9_560)),
        chunk("clock-correlations", clock(0, 5, 2_000_003, 5_010_000_007, 9_800, 10_400),
              clock(1, 6, 4_000_000, 5_000_333_433, 9_900, 9_950)),
    ))


def device_order_bundle() -> bytes:
    """Devices created by a dispatch chunk header, a metric sample, then device records; odd records."""
    return bundle(
        session(
            chunk("dispatch-events", dispatch(1, 10, 20), pdo=3, queue=0),
            chunk("device-metric-samples", metric_sample(1, 5, 1)),
            chunk("devices", device(0, 1), device(3, 4), device(0, 2)),
            chunk("dispatch-events", pdo=7, queue=0),  # an empty chunk still creates its device
            status=13),
        record(4, "session", name="odd"),  # unknown record type
        record(BEGIN, "session", session_id=2),
        record(END, "session", session_id=2, stream_id=9, event_id=8, status=14),
    )


def clock_edges_bundle() -> bytes:
    """One device per clock edge case; each has dispatches so the fit (or its absence) shows."""
    d = [dispatch(1, 1_000_100, 1_000_200)]
    return bundle(session(
        # 0: a single sample
        chunk("clock-correlations", clock(0, 1, 1_000_000, 100)),
        chunk("dispatch-events", *d, pdo=0, queue=0),
        # 1: an unaligned sample between good ones
        chunk("clock-correlations", clock(1, 1, 1_000_000, 100), clock(1, 2, 1_500_000, 150, flags=0x1F),
              clock(1, 3, 2_000_000, 200)),
        chunk("dispatch-events", *d, pdo=1, queue=0),
        # 2: no host CPU timestamp (bracket only)
        chunk("clock-correlations", clock(2, 1, 1_000_000, 0, 10, 20, flags=0x9),
              clock(2, 2, 2_000_000, 0, 30, 40, flags=0x9)),
        chunk("dispatch-events", *d, pdo=2, queue=0),
        # 3: ticks do not increase
        chunk("clock-correlations", clock(3, 1, 2_000_000, 100), clock(3, 2, 1_000_000, 200)),
        chunk("dispatch-events", *d, pdo=3, queue=0),
        # 4: a good fit, dispatches outside the sampled range
        chunk("clock-correlations", clock(4, 1, 1_000_150, 1_000), clock(4, 2, 1_000_160, 1_003)),
        chunk("dispatch-events", *d, pdo=4, queue=0),
        # 5: a good fit whose ns totals overflow int64
        chunk("clock-correlations", clock(5, 1, 1, 1), clock(5, 2, 2, (1 << 62) + 1)),
        chunk("dispatch-events", dispatch(1, 1, 1 << 40), pdo=5, queue=0),
        # 6: a bracket whose end precedes its begin (ignored for uncertainty); no HOST_CPU flag on last
        chunk("clock-correlations", clock(6, 1, 10, 100, 50, 40), clock(6, 2, 20, 200, 60, 61, flags=0xD)),
    ))


def extended_bundle() -> bytes:
    """Forward-extended fixed records (record_length larger than the layout), as a newer writer would."""
    pad = b"\xee" * 8
    return bundle(session(
        chunk("devices", device(0, 1)),
        chunk("clock-correlations", clock(0, 1, 1_000, 10_000), clock(0, 2, 3_000, 30_000)),
        chunk("dispatch-events", dispatch(1, 1_100, 1_900, tail=pad, record_length=96),
              dispatch(2, 2_000, 2_050, tail=pad, record_length=96), pdo=0, queue=0),
        chunk("host-execution-events", host_exec(1, 10, 20), host_exec(2, -1, 5)),
        chunk("queue-events", typed(schema.QUEUE_EVENT, b"\0" * 16, type=2, event_id=1,
                                    host_time_ns=5, ready_host_time_ns=9)),
    ))


SYNTHETIC = {
    "amdgpu": amdgpu_bundle,
    "device_order": device_order_bundle,
    "clock_edges": clock_edges_bundle,
    "header_only": lambda: bundle(),
    "unfinished": lambda: bundle(session(chunk("devices", device(0, 1))), file_length=False),
}


# --- running both tools -----------------------------------------------------------------------

def run_ours(args: list) -> tuple[int, str, str]:
    """Runs `amdgpu-profile` in this process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            profile_main([str(a) for a in args])
        except SystemExit as e:
            code = e.code or 0
    return code, out.getvalue(), err.getvalue()


def jsonl(text: str) -> list[dict]:
    import json

    return [json.loads(line) for line in text.splitlines() if line.strip()]


def assert_rows_equal(theirs: list[dict], ours: list[dict], where: str = "") -> None:
    assert len(ours) == len(theirs), f"{where}: {len(ours)} rows, iree-profile {len(theirs)}"
    for t, o in zip(theirs, ours):
        assert list(o) == list(t), f"{where}: keys differ\n ours   {list(o)}\n theirs {list(t)}"
        for k, v in t.items():
            if isinstance(v, float) and not isinstance(o[k], bool):
                assert math.isclose(o[k], v, rel_tol=1e-9, abs_tol=1e-12), f"{where}: {k} {o[k]} != {v}"
            else:
                assert o[k] == v, f"{where}: {t.get('type')} {k}: ours {o[k]!r}, iree-profile {v!r}"


def compare(command: str, path, iree_profile) -> list[dict]:
    theirs = iree_profile([command, "--format=jsonl", path])
    result = CliRunner().invoke(profile, [command, "--format=jsonl", str(path)],
                                catch_exceptions=False)
    assert theirs.returncode == 0, theirs.stderr
    assert result.exit_code == 0
    rows = jsonl(result.output)
    assert_rows_equal(jsonl(theirs.stdout), rows, f"{command} {path}")
    # Byte-identical where the floats print alike (they always should).
    assert result.output == theirs.stdout
    return rows


def compare_failure(command: str, path, iree_profile) -> str:
    theirs = iree_profile([command, "--format=jsonl", path])
    code, out, err = run_ours([command, "--format=jsonl", path])
    assert theirs.returncode != 0, f"iree-profile accepted {path}"
    assert code == theirs.returncode, (code, err, theirs.stderr)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "internal error" not in err and "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    base = tmp_path_factory.mktemp("summary")
    paths = {}
    for name, make in SYNTHETIC.items():
        paths[name] = base / f"{name}.ireeprof"
        paths[name].write_bytes(make())
    return paths


# --- tests ------------------------------------------------------------------------------------

def test_real_bundles_match(iree_bundles, iree_profile):
    for key, path in sorted(iree_bundles.items()):
        rows = compare("summary", path, iree_profile)
        assert rows[0]["type"] == "summary" and rows[0]["chunk_records"] > 0


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_synthetic_bundles_match(name, synthetic, iree_profile):
    rows = compare("summary", synthetic[name], iree_profile)
    if name == "amdgpu":
        devices = {r["physical_device_ordinal"]: r for r in rows[1:]}
        assert devices[0]["clock_fit_available"] and devices[0]["invalid_dispatches"] == 2
        assert devices[1]["dispatch_time_available"]
        assert rows[0]["truncated_chunks"] == 2 and rows[0]["dropped_records"] == 20
        assert rows[0]["unknown_chunks"] == 2
    if name == "device_order":
        assert [r["physical_device_ordinal"] for r in rows[1:]] == [3, 5, 0, 7]
        assert rows[0]["first_non_ok_status"] == "INTERNAL" and rows[0]["unknown_records"] == 1
    if name == "clock_edges":
        fits = {r["physical_device_ordinal"]: r["clock_fit_available"] for r in rows[1:]}
        assert fits == {0: False, 1: False, 2: False, 3: False, 4: True, 5: True, 6: False}


def test_extended_records_take_the_exact_walk(tmp_path, iree_profile):
    path = tmp_path / "extended.ireeprof"
    path.write_bytes(extended_bundle())
    rows = compare("summary", path, iree_profile)
    assert rows[1]["valid_dispatches"] == 2 and rows[0]["queue_event_records"] == 1


def _bad(*chunks: bytes, **kw) -> bytes:
    return bundle(session(chunk("devices", device(0, 1)), *chunks), **kw)


MALFORMED = {
    # torn or mis-sized typed records, in families summary only counts and in ones it reads
    "dispatch_truncated": _bad(chunk("dispatch-events", dispatch(1, 1, 2)[:80], pdo=0, queue=0)),
    "queue_event_length_small": _bad(chunk("queue-events", typed(schema.QUEUE_EVENT, record_length=10))),
    "memory_length_past_end": _bad(chunk("memory-events", typed(schema.MEMORY_EVENT, record_length=400))),
    "relationship_tail": _bad(chunk("event-relationships", typed(schema.EVENT_RELATIONSHIP) + b"\0" * 8)),
    "host_exec_truncated": _bad(chunk("host-execution-events", host_exec(1, 1, 2)[:100])),
    "command_ops_truncated": _bad(chunk("command-operations", b"\x78\0\0\0" + b"\0" * 50)),
    # variable records whose length fields disagree with record_length
    "counter_sample_values": _bad(chunk("counter-samples", typed(
        schema.COUNTER_SAMPLE, b"\0" * 16, sample_value_count=3))),
    "code_object_length": _bad(chunk("executable-code-objects", typed(
        schema.CODE_OBJECT, b"\0" * 10, data_length=11))),
    "metric_sample_values": _bad(chunk("device-metric-samples", typed(
        schema.METRIC_SAMPLE, b"\0" * 24, value_count=2))),
    "counter_strings": _bad(chunk("counters", typed(schema.COUNTER, b"abc", name_length=2))),
    "trace_length": _bad(chunk("executable-traces", trace(b"1234", data_length=3))),
    "trace_record_length": _bad(chunk("executable-traces", typed(
        schema.EXECUTABLE_TRACE, record_length=92, data_length=4) + b"1234")),
    # the record chain
    "torn_tail": _bad(file_length=False) + b"\0" * 50,
    "typed_error_before_torn_tail": _bad(chunk("queues", queue(0, 0)[:20]), file_length=False) + b"\x01" * 30,
    "bad_magic": b"XXXX" + bundle()[4:],
    "short_file": b"IRPF",
    # a tick total past u64 (IREE: OUT_OF_RANGE)
    "tick_overflow": _bad(chunk("dispatch-events", *(dispatch(i, 1, 1 << 63) for i in range(3)),
                                pdo=0, queue=0)),
}

# Summary only counts executable functions: a name length that disagrees is not its business.
ACCEPTED = {
    "function_name_length": _bad(chunk("executable-functions", function(1, 0, b"abc", name_length=9))),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_bundles_fail_alike(name, tmp_path, iree_profile):
    path = tmp_path / f"{name}.ireeprof"
    path.write_bytes(MALFORMED[name])
    line = compare_failure("summary", path, iree_profile)
    if name == "tick_overflow":
        assert "OUT_OF_RANGE" in line
    elif name == "bad_magic":
        assert "INVALID_ARGUMENT" in line
    else:
        assert "DATA_LOSS" in line


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_what_summary_does_not_check(name, tmp_path, iree_profile):
    path = tmp_path / f"{name}.ireeprof"
    path.write_bytes(ACCEPTED[name])
    compare("summary", path, iree_profile)


def test_first_bad_record_in_file_order_is_reported(tmp_path):
    # Two torn families: the error names the earlier record, whatever the family order.
    path = tmp_path / "two.ireeprof"
    path.write_bytes(_bad(chunk("memory-events", b"\0" * 10), chunk("queues", b"\0" * 10)))
    code, _, err = run_ours(["summary", "--format=jsonl", path])
    assert code == 1 and "memory-events" in err and "(record 2)" in err


def test_text_shows_the_same_numbers(synthetic, iree_bundles, iree_profile):
    for path in (synthetic["amdgpu"], synthetic["device_order"], synthetic["clock_edges"],
                 iree_bundles["mlp-bench-local-task-all"], synthetic["header_only"]):
        theirs = jsonl(iree_profile(["summary", "--format=jsonl", path]).stdout)
        code, out, err = run_ours(["summary", path])
        assert code == 0, err
        assert out.startswith("IREE HAL profile summary\n")
        assert max(len(line) for line in out.splitlines()) <= 100
        s = theirs[0]
        assert f"records: {s['file_records']:,} " in out
        for d in theirs[1:]:
            assert f"device {d['physical_device_ordinal']}: " in out
            if d["clock_fit_available"]:
                assert f"{d['ns_per_tick']:.9f} ns/tick" in out
            else:
                assert "clock fit: unavailable" in out
            if d["dispatch_time_available"]:
                assert f"{d['total_dispatch_ns']:,}\n" in out
        if s["host_execution_event_records"]:
            assert f"{s['host_execution_event_records']:,}" in out
            assert f"total ns {s['total_host_execution_duration_ns']:,}" in out
    code, out, _ = run_ours(["summary", synthetic["amdgpu"]])
    assert "from 1,000,003 ticks over 10,000,007 ns" in out
    assert "      ns     1,230  4,249.990  7,770  17,000\n" in out
    code, out, _ = run_ours(["summary", synthetic["device_order"]])
    assert "status=INTERNAL (13)" in out
    code, out, _ = run_ours(["summary", synthetic["clock_edges"]])
    assert "warning: clock samples not aligned" in out


def test_summary_jsonl_imports_no_rich(synthetic):
    import subprocess
    import sys

    code = ("import sys; from amdgpu_cli.cli.main import profile_main\n"
            "try:\n    profile_main(['summary', '--format=jsonl', sys.argv[1]])\n"
            "except SystemExit:\n    pass\n"
            "print('rich' in sys.modules, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(synthetic["amdgpu"])],
                          capture_output=True, text=True, timeout=60)
    assert proc.stderr.strip().splitlines()[-1] == "False", proc.stderr

"""`export --format=perfetto`: Chrome trace-event JSON that ui.perfetto.dev opens.

The trace is checked against the trace-event format (our own validator below: required keys, known
phases, numeric microsecond timestamps, non-negative durations, well-formed metadata, names for
every process and thread, properly nested complete events per thread) and against the bundle:
slice and instant counts and every duration come from iree-profile's own export of the same
bundle (host spans, queue and memory events) or, for device dispatches, from the clock fit
computed here by hand with exact fractions.
"""

from __future__ import annotations

import decimal
import io
import json
import subprocess
import sys
from collections import Counter, defaultdict
from fractions import Fraction

import numpy as np
import pytest

from amdgpu_cli.profile import schema
from amdgpu_cli.profile.perfetto import write_trace
from amdgpu_cli.profile.reader import Bundle
from tests.profile.test_export import (CLOCK_ALL, MAX, Synth, device_metadata, metric_sample,
                                      typed, with_strings)

F = schema.Flags
PHASES = set("BEXiICbnestfPONDMRc") | {"(", ")"}
METADATA = {"process_name", "process_labels", "process_sort_index", "thread_name",
            "thread_sort_index"}


# --- a trace-event format validator -------------------------------------------------------------

def load(text: str) -> dict:
    return json.loads(text, parse_float=decimal.Decimal)


def validate(trace: dict) -> list[dict]:
    """Checks the JSON Object Format and returns the events."""
    assert isinstance(trace, dict) and isinstance(trace["traceEvents"], list)
    assert trace.get("displayTimeUnit", "ms") in ("ms", "ns")
    events = trace["traceEvents"]
    names = {"process": set(), "thread": set()}
    used = set()
    timed = []
    for e in events:
        assert isinstance(e, dict)
        for key in ("name", "ph", "ts", "pid", "tid"):
            assert key in e, (key, e)
        assert isinstance(e["name"], str)
        assert e["ph"] in PHASES, e
        assert isinstance(e["ts"], (int, decimal.Decimal)) and e["ts"] >= 0, e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        if "args" in e:
            assert isinstance(e["args"], dict)
        if e["ph"] == "M":
            assert e["name"] in METADATA, e
            if e["name"].endswith("_name"):
                assert isinstance(e["args"]["name"], str) and e["args"]["name"]
                names["process" if e["name"] == "process_name" else "thread"].add(
                    e["pid"] if e["name"] == "process_name" else (e["pid"], e["tid"]))
            else:
                assert isinstance(e["args"]["sort_index"], int)
            continue
        timed.append(e)
        if e["ph"] == "X":
            assert isinstance(e["dur"], (int, decimal.Decimal)) and e["dur"] >= 0, e
            used.add((e["pid"], e["tid"]))
        elif e["ph"] == "i":
            assert e.get("s", "t") in ("g", "p", "t")
            used.add((e["pid"], e["tid"]))
        elif e["ph"] == "C":
            assert e["args"] and all(isinstance(v, (int, decimal.Decimal))
                                     for v in e["args"].values()), e
        if "cat" in e:
            assert isinstance(e["cat"], str)
    assert used <= names["thread"]
    assert {pid for pid, _ in used} | {e["pid"] for e in timed} <= names["process"]
    if timed:
        assert min(e["ts"] for e in timed) == 0        # rebased
    # Complete events of one thread nest (Chrome's importer drops the ones that do not).
    per_thread = defaultdict(list)
    for e in timed:
        if e["ph"] == "X":
            per_thread[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for spans in per_thread.values():
        stack = []
        for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1] <= start:
                stack.pop()
            assert not stack or end <= stack[-1], "overlapping slices on one thread"
            stack.append(end)
    return events


def trace_of(path) -> tuple[dict, list[dict]]:
    out = io.StringIO()
    write_trace(Bundle.open(path), out)
    trace = load(out.getvalue())
    return trace, validate(trace)


def ns(value) -> int:
    """Exact nanoseconds of a microsecond timestamp."""
    scaled = decimal.Decimal(value) * 1000
    assert scaled == scaled.to_integral_value()
    return int(scaled)


def iree_export(iree_profile, path) -> list[dict]:
    result = iree_profile(["export", "--format=ireeperf-jsonl", path])
    assert result.returncode == 0
    return [json.loads(line) for line in result.stdout.splitlines()]


# --- real bundles -------------------------------------------------------------------------------

def test_fixture_traces_match_the_bundles(iree_bundles, iree_profile):
    for key, path in iree_bundles.items():
        trace, events = trace_of(path)
        rows = iree_export(iree_profile, path)
        origin = trace["otherData"]["origin_ns"]
        by_type = defaultdict(list)
        for r in rows:
            by_type[r["record_type"]].append(r)

        host = [r for r in by_type["host_execution_event"] if r["valid"]]
        slices = [e for e in events if e["ph"] == "X"]
        assert len(slices) == len(host) + sum(1 for r in by_type["command_region_event"]
                                              if r["valid"]), key
        spans = Counter((r["event_id"], r["submission_id"], r["start_host_time_ns"],
                         r["duration_ns"], r["key"] or "host:" + r["op"]) for r in host)
        got = Counter((e["args"]["event_id"], e["args"]["submission_id"], ns(e["ts"]) + origin,
                       ns(e["dur"]), e["name"]) for e in slices if e["cat"] == "host execution")
        assert got == spans, key

        instants = Counter(e["cat"] for e in events if e["ph"] == "i")
        assert instants["queue events"] == len(by_type["queue_event"]), key
        assert instants["memory"] == len(by_type["memory_event"]), key
        queue = Counter((r["event_id"], r["host_time_ns"], "queue:" + r["op"])
                        for r in by_type["queue_event"])
        assert Counter((e["args"]["event_id"], ns(e["ts"]) + origin, e["name"]) for e in events
                       if e.get("cat") == "queue events") == queue, key

        # The queue allocation counter is the running sum of alloca minus dealloca lengths.
        memory = sorted((r["host_time_ns"], r["event_type"], r["length"])
                        for r in by_type["memory_event"]
                        if r["event_type"] in ("queue_alloca", "queue_dealloca"))
        total, expected = 0, []
        for t, kind, length in memory:
            total += length if kind == "queue_alloca" else -length
            expected.append((t, total))
        counter = [(ns(e["ts"]) + origin, int(e["args"]["value"])) for e in events
                   if e["ph"] == "C" and e["name"] == "queue allocation bytes"]
        assert counter == expected, key


def test_cli_writes_the_trace_file(iree_bundles, tmp_path):
    out = tmp_path / "trace.json"
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from amdgpu_cli.cli.main import profile_main; "
         "profile_main(sys.argv[1:])", "export", "--format=perfetto", f"--output={out}",
         iree_bundles["conv-local-task-full"]], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    events = validate(load(out.read_text()))
    assert any(e["ph"] == "X" for e in events)


# --- a synthetic device bundle ------------------------------------------------------------------

def device_bundle() -> Synth:
    s = device_metadata(Synth())        # device 0: sample 1 at tick 1e6, bracket [900, 1000]
    s.chunk("clock-correlations",
            typed(schema.CLOCK_CORRELATION, flags=CLOCK_ALL, physical_device_ordinal=0,
                  sample_id=2, device_tick=2_000_000, host_cpu_timestamp_ns=5_001_000_001,
                  host_time_begin_ns=1_100_900, host_time_end_ns=1_101_001))
    dispatch = lambda event, ordinal, start, end, eid=1: typed(  # noqa: E731
        schema.DISPATCH_EVENT, event_id=event, submission_id=1, executable_id=eid,
        function_ordinal=ordinal, command_index=MAX, start_tick=start, end_tick=end)
    s.chunk("dispatch-events",
            dispatch(1, 0, 1_000_100, 1_000_400),
            dispatch(2, 1, 1_000_200, 1_000_600),       # overlaps 1: a second lane
            dispatch(3, 0, 1_000_250, 1_000_300),       # inside 1 and 2
            dispatch(4, 0, 1_000_700, 1_000_700),       # zero length
            dispatch(5, 0, 0, 1_000_800),               # invalid: skipped
            dispatch(6, 0, 1_250_000, 1_299_999, eid=2),
            name="amdgpu.dispatch", pdo=0, queue=0, stream=0)
    s.chunk("dispatch-events", dispatch(1, 0, 100, 200, eid=2),   # device 1 has no fit
            name="amdgpu.dispatch", pdo=1, queue=0, stream=1 << 32)
    s.chunk("queue-device-events",
            typed(schema.QUEUE_DEVICE_EVENT, type=3, event_id=1, submission_id=1,
                  physical_device_ordinal=0, queue_ordinal=0, start_tick=1_000_050,
                  end_tick=1_000_900))
    s.chunk("queue-events",
            typed(schema.QUEUE_EVENT, type=3, event_id=1, submission_id=1, host_time_ns=940,
                  physical_device_ordinal=0, queue_ordinal=0, ready_host_time_ns=945))
    s.chunk("host-execution-events",
            typed(schema.HOST_EXECUTION_EVENT, type=2, event_id=1, executable_id=1,
                  function_ordinal=0, physical_device_ordinal=0, queue_ordinal=0,
                  start_host_time_ns=1500, end_host_time_ns=1600),
            typed(schema.HOST_EXECUTION_EVENT, type=9, event_id=2, function_ordinal=MAX,
                  physical_device_ordinal=MAX, queue_ordinal=MAX, start_host_time_ns=1550,
                  end_host_time_ns=1700))
    s.chunk("memory-events",
            typed(schema.MEMORY_EVENT, type=7, event_id=1, host_time_ns=950, length=4096,
                  physical_device_ordinal=0, queue_ordinal=0),
            typed(schema.MEMORY_EVENT, type=8, event_id=2, host_time_ns=1900, length=4096,
                  physical_device_ordinal=0, queue_ordinal=0))
    s.chunk("device-metric-descriptors", typed(
        schema.METRIC_DESCRIPTOR, b"temperature.edge", source_id=1, metric_id=3, unit=6,
        value_kind=1, semantic=1, plot_hint=5, name_length=16))
    s.chunk("device-metric-samples", metric_sample([(3, 45_000, 0)], sample_id=1, source_id=1,
                                                   host_time_begin_ns=1000, host_time_end_ns=1011,
                                                   physical_device_ordinal=0))
    counter = lambda ordinal, block, name, offset, count: with_strings(  # noqa: E731
        schema.COUNTER, block, name, "", names=("block_name_length", "name_length",
                                                "description_length"),
        counter_set_id=1, counter_ordinal=ordinal, sample_value_offset=offset,
        sample_value_count=count)
    s.chunk("counter-sets", with_strings(schema.COUNTER_SET, "amdgpu.pmc", names=("name_length",),
                                         counter_set_id=1, counter_count=2, sample_value_count=3))
    s.chunk("counters", counter(0, "SQ", "SQ_WAVES", 0, 2), counter(1, "", "BUSY", 2, 1))
    sample = lambda sample_id, flags, start, end: typed(  # noqa: E731
        schema.COUNTER_SAMPLE, np.array([10, 20, 5], "<u8").tobytes(), sample_id=sample_id,
        counter_set_id=1, flags=flags, scope=1, start_tick=start, end_tick=end,
        physical_device_ordinal=0, queue_ordinal=0, sample_value_count=3)
    s.chunk("counter-samples",
            sample(1, F.SAMPLE_DISPATCH_EVENT | F.SAMPLE_DEVICE_TICK_RANGE, 1_000_100, 1_000_401),
            sample(2, F.SAMPLE_DISPATCH_EVENT, 1_000_100, 1_000_400))     # no range: no value
    return s.end()


def host_ns(tick: int) -> int:
    """Device 0's tick -> IREE host ns, from the two samples' bracket midpoints."""
    ratio = Fraction(1_100_950 - 950, 2_000_000 - 1_000_000)
    return 950 + int((tick - 1_000_000) * ratio + Fraction(1, 2))   # round half up


def test_device_trace(tmp_path):
    path = device_bundle().write(tmp_path / "d.ireeprof")
    trace, events = trace_of(path)
    origin = trace["otherData"]["origin_ns"]
    assert origin == 940                                  # the queue event is the earliest
    assert trace["otherData"]["skipped_invalid"] == 1
    assert trace["otherData"]["skipped_no_clock"] == 1

    dispatches = {e["args"]["event_id"]: e for e in events if e.get("cat") == "dispatch"}
    assert sorted(dispatches) == [1, 2, 3, 4, 6]
    expected = {1: (1_000_100, 1_000_400), 2: (1_000_200, 1_000_600), 3: (1_000_250, 1_000_300),
                4: (1_000_700, 1_000_700), 6: (1_250_000, 1_299_999)}
    for event_id, (start, end) in expected.items():
        e = dispatches[event_id]
        assert ns(e["ts"]) + origin == host_ns(start)
        assert ns(e["dur"]) == host_ns(end) - host_ns(start)
        assert e["pid"] == 1 and e["ph"] == "X"
    assert dispatches[1]["name"] == dispatches[3]["name"] == "matmul_kernel"
    assert dispatches[2]["name"] == 'odd "name"\n\t\x01 é%d'
    assert dispatches[6]["name"] == "device0/executable2#0"
    assert dispatches[2]["tid"] != dispatches[1]["tid"]   # overlapping: another lane
    assert dispatches[3]["tid"] in (dispatches[1]["tid"], dispatches[2]["tid"])

    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["name"] == "thread_name"}
    assert threads[(1, dispatches[1]["tid"])] == "queue 0 stream 0"
    assert threads[(1, dispatches[2]["tid"])] == "queue 0 stream 0 #2"
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert processes[1] == "amdgpu device 0 000102030405060708090a0b0c0d0e0f"

    ops = [e for e in events if e.get("cat") == "device ops"]
    assert [(e["name"], ns(e["ts"]) + origin, ns(e["dur"])) for e in ops] == [
        ("queue-device:execute", host_ns(1_000_050), host_ns(1_000_900) - host_ns(1_000_050))]
    host = sorted((e["name"], e["pid"], ns(e["ts"]) + origin, ns(e["dur"])) for e in events
                  if e.get("cat") == "host execution")
    assert host == [("host:alloca", 0, 1550, 150), ("matmul_kernel", 1, 1500, 100)]
    counters = [(e["name"], ns(e["ts"]) + origin, e["args"]["value"]) for e in events
                if e["ph"] == "C"]
    middle = (host_ns(1_000_100) + host_ns(1_000_401)) // 2
    assert sorted(counters) == [("BUSY", middle, 5), ("SQ.SQ_WAVES", middle, 30),
                                ("queue allocation bytes", 950, 4096),
                                ("queue allocation bytes", 1900, 0),
                                ("temperature.edge", 1005, 45_000)]
    assert sum(1 for e in events if e["ph"] == "X") == 5 + 1 + 2


def test_empty_bundle_is_a_valid_trace(tmp_path):
    path = Synth().begin().end().write(tmp_path / "e.ireeprof")
    trace, events = trace_of(path)
    assert all(e["ph"] == "M" for e in events)


def test_missing_function_metadata_is_an_error(tmp_path):
    s = device_metadata(Synth())
    s.chunk("dispatch-events", typed(schema.DISPATCH_EVENT, executable_id=9, start_tick=1_000_001,
                                     end_tick=1_000_002), pdo=0, queue=0)
    s.chunk("clock-correlations", typed(
        schema.CLOCK_CORRELATION, flags=CLOCK_ALL, physical_device_ordinal=0, sample_id=2,
        device_tick=2_000_000, host_cpu_timestamp_ns=6_000_000_000, host_time_begin_ns=5000,
        host_time_end_ns=5001))
    path = s.end().write(tmp_path / "m.ireeprof")
    out = tmp_path / "t.json"
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from amdgpu_cli.cli.main import profile_main; "
         "profile_main(sys.argv[1:])", "export", "--format=perfetto", "-o", out, path],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "DATA_LOSS" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()                               # atomic: nothing half-written


@pytest.mark.parametrize("n", [3000])
def test_many_overlapping_slices_spread_over_lanes(tmp_path, n):
    s = device_metadata(Synth())
    s.chunk("clock-correlations", typed(
        schema.CLOCK_CORRELATION, flags=CLOCK_ALL, physical_device_ordinal=0, sample_id=2,
        device_tick=2_000_000, host_cpu_timestamp_ns=6_000_000_000, host_time_begin_ns=1_000_950,
        host_time_end_ns=1_000_950))
    s.chunk("dispatch-events", *[
        typed(schema.DISPATCH_EVENT, event_id=k + 1, executable_id=1, function_ordinal=k % 2,
              start_tick=1_000_000 + 7 * k, end_tick=1_000_000 + 7 * k + 10 + (k % 5) * 13)
        for k in range(n)], pdo=0, queue=0)
    trace, events = trace_of(s.end().write(tmp_path / "o.ireeprof"))
    slices = [e for e in events if e["ph"] == "X"]
    assert len(slices) == n                               # nothing dropped; nesting validated
    assert len({e["tid"] for e in slices}) > 1

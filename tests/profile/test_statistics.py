"""`statistics` against iree-profile 3.13.0: every JSONL row equal (same rows, same order, same
values) on the real IREE bundles and on synthetic bundles with device-side data; bad input fails
with iree-profile's exit status.

The synthetic bundles exercise what the statistics sink does differently from summary: fixed
records read at a fixed stride (record_length ignored, so forward-extended records are a "partial
record" while garbage record lengths pass), dropped records counted on every chunk, tick -> ns
scaling through host CPU timestamps or else bracket midpoints, first-wins function names, and many
randomly keyed events so grouping and first-touch order are checked at scale.
"""

from __future__ import annotations

import numpy as np
import pytest

from .test_summary import (
    U32_MAX, amdgpu_bundle, bundle, chunk, clock, compare, compare_failure, dispatch,
    function, host_exec, jsonl, memory_event, queue_device_event, queue_event, run_ours, session,
    typed,
)
from amdgpu_cli.profile import schema


def clocks_bundle() -> bytes:
    """Devices whose clocks scale differently, names with odd records, stride-only oddities."""
    garbage_length = bytearray(dispatch(3, 500, 900, func=1))
    garbage_length[0:4] = (7).to_bytes(4, "little")  # the sink never reads record_length
    return bundle(session(
        chunk("executable-functions", function(1, 0, b""), function(1, 0, b"shadowed"),
              function(1, 1, b"trimmed-name", name_length=7), function(2, 0, b"other")),
        # 2: brackets only -> midpoints
        chunk("clock-correlations", clock(2, 1, 1_000, 0, 10_000, 10_010, flags=0x9),
              clock(2, 2, 3_000, 0, 30_000, 30_004, flags=0x9)),
        # 4: a fit so steep that scaled durations pass u64
        chunk("clock-correlations", clock(4, 1, 1, 1), clock(4, 2, 2, 1 << 62)),
        # 5: host CPU time on the first sample only -> both fall back to midpoints
        chunk("clock-correlations", clock(5, 1, 100, 7, 1_000, 1_002),
              clock(5, 2, 300, 0, 3_000, 3_002, flags=0x9)),
        # 6: an unaligned sample: ticks stay ticks
        chunk("clock-correlations", clock(6, 1, 100, 1_000), clock(6, 2, 200, 2_000, flags=0x1F)),
        chunk("dispatch-events", dispatch(1, 1_100, 1_600), dispatch(2, 1_200, 1_201, func=1),
              bytes(garbage_length), dispatch(4, 1_300, 1_000, exe=2, cb=9, cmd=4),
              pdo=2, queue=0),
        chunk("dispatch-events", dispatch(1, 10, 20, cb=9, cmd=1), pdo=3, queue=1),  # no clock
        chunk("dispatch-events", dispatch(1, 10, 1 << 12), pdo=4, queue=0),
        chunk("dispatch-events", dispatch(1, 150, 250, func=1), pdo=5, queue=U32_MAX),
        chunk("dispatch-events", dispatch(1, 150, 250, func=1), pdo=6, queue=0),
        chunk("queue-device-events", queue_device_event(1, 3, 1_050, 2_950, pdo=2, cb=9, ops=2,
                                                        payload=8)),
        chunk("application/x-other", b"ignored"),
        chunk("queue-events", queue_event(1, 11, 50, 40), dropped=5),  # dropped without TRUNCATED
        chunk("host-execution-events", host_exec(1, 10, 20, tiles=0, tile_ns=99),
              host_exec(2, 30, 25, tiles=3, tile_ns=-4, exe=2, func=0, cb=9, cmd=U32_MAX)),
        chunk("memory-events", memory_event(1, 1, 0, q=U32_MAX), memory_event(2, 12, 64)),
    ))


def random_bundle(seed: int = 7, chunks: int = 60) -> bytes:
    """Many events with keys from small random sets (and a few large ids), in many chunks."""
    rng = np.random.default_rng(seed)

    def pick(values: list[int]) -> int:  # exact (numpy would turn a mixed list into floats)
        return values[int(rng.integers(len(values)))]

    exes = [1, 2, 1 << 40, (1 << 64) - 1]
    funcs = [0, 1, 2, U32_MAX]
    cbs = [0, 0, 3, 1 << 33, (1 << 64) - 5, (1 << 64) - 2]
    cmds = [0, 1, U32_MAX]
    out = [chunk("executable-functions", function(1, 0, b"f0"), function(1, 1, b"f1"),
                 function(1 << 40, 2, b"far")),
           chunk("clock-correlations", clock(0, 1, 1_000, 50_000), clock(1, 2, 5_000, 50_000)),
           chunk("clock-correlations", clock(0, 3, 900_000, 950_000), clock(1, 4, 905_000, 51_000))]
    event = 0
    for c in range(chunks):
        kind = c % 4
        n = int(rng.integers(1, 40))
        records = []
        for _ in range(n):
            event += 1
            start = int(rng.integers(0, 1_000_000))
            end = start + int(rng.integers(-50, 5_000))
            if kind == 0:
                records.append(dispatch(event, max(start, 0) if rng.random() > 0.05 else 0, max(end, 0),
                                        exe=pick(exes), func=pick(funcs),
                                        cb=pick(cbs), cmd=pick(cmds)))
            elif kind == 1:
                records.append(host_exec(event, start - 10 if rng.random() < 0.03 else start, end,
                                         pdo=int(rng.integers(0, 2)), q=int(rng.integers(0, 3)),
                                         type_=int(rng.integers(0, 12)), exe=pick(exes),
                                         func=pick(funcs), cb=pick(cbs),
                                         cmd=pick(cmds), tiles=int(rng.integers(0, 3)),
                                         tile_ns=int(rng.integers(-5, 500)),
                                         ops=int(rng.integers(0, 3)), payload=int(rng.integers(0, 2)) * 64))
            elif kind == 2:
                records.append(queue_event(event, int(rng.integers(0, 12)), start, end if end > start else 0,
                                           pdo=int(rng.integers(0, 2)), q=int(rng.integers(0, 2)),
                                           cb=pick(cbs), ops=int(rng.integers(0, 4)),
                                           payload=int(rng.integers(0, 3)) * 32))
            else:
                records.append(memory_event(event, int(rng.integers(0, 14)), int(rng.integers(0, 3)) * 4096,
                                            pdo=int(rng.integers(0, 2)), q=int(rng.integers(0, 2))))
        content = ("dispatch-events", "host-execution-events", "queue-events", "memory-events")[kind]
        header = dict(pdo=int(rng.integers(0, 3)), queue=int(rng.integers(0, 2))) if kind == 0 else {}
        out.append(chunk(content, *records, **header))
        if c % 17 == 0:
            out.append(chunk("queue-device-events", queue_device_event(
                event, int(rng.integers(0, 12)), 2_000 + c, 3_000 + 7 * c, pdo=int(rng.integers(0, 2)),
                q=int(rng.integers(0, 2)), cb=pick(cbs), ops=c % 3, payload=c % 2 * 16)))
    return bundle(session(*out))


SYNTHETIC = {"amdgpu": amdgpu_bundle, "clocks": clocks_bundle, "random": random_bundle,
             "header_only": lambda: bundle()}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    base = tmp_path_factory.mktemp("statistics")
    paths = {}
    for name, make in SYNTHETIC.items():
        paths[name] = base / f"{name}.ireeprof"
        paths[name].write_bytes(make())
    return paths


def test_real_bundles_match(iree_bundles, iree_profile):
    for key, path in sorted(iree_bundles.items()):
        rows = compare("statistics", path, iree_profile)
        assert rows[0]["type"] == "statistics_summary"


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_synthetic_bundles_match(name, synthetic, iree_profile):
    rows = compare("statistics", synthetic[name], iree_profile)
    if name == "clocks":
        assert rows[0]["dropped_record_count"] == 5
        by_device = {}
        for r in rows[1:]:
            if r["row_type"] == "dispatch_function":
                by_device.setdefault(r["physical_device_ordinal"], []).append(r)
        span_ns = (30_000 + 30_004) // 2 - (10_000 + 10_010) // 2   # bracket midpoints
        assert by_device[2][0]["total_duration_ns"] == (500 * span_ns + 1_000) // 2_000
        assert by_device[3][0]["total_duration_ns"] is None    # no clock samples
        assert by_device[4][0]["total_duration_ns"] is None    # past u64
        assert by_device[6][0]["total_duration_ns"] is None    # unaligned
        names = {r["function_name"] for r in rows[1:]}
        assert "trimmed" in names and "shadowed" not in names
    if name == "random":
        assert rows[0]["row_count"] > 100


STRIDE_FAILURES = {
    # a newer writer's longer records are a partial record to the sink (summary reads them)
    "extended_dispatch": bundle(session(chunk("dispatch-events", dispatch(1, 1, 2, tail=b"\0" * 8,
                                                                           record_length=96),
                                              pdo=0, queue=0))),
    "queue_events_partial": bundle(session(chunk("queue-events", queue_event(1, 2, 1, 2) + b"\0"))),
    "function_name_too_long": bundle(session(chunk("executable-functions",
                                                   function(1, 0, b"abc", name_length=4)))),
    "function_truncated": bundle(session(chunk("executable-functions", function(1, 0, b"abc")[:40]))),
    "function_length_past_end": bundle(session(chunk("executable-functions",
                                                     typed(schema.FUNCTION, record_length=100)))),
    "clock_partial": bundle(session(chunk("clock-correlations", clock(0, 1, 1, 1)[:70]))),
    "torn_tail": bundle(session(chunk("memory-events", memory_event(1, 1, 8))), file_length=False)
    + b"\0" * 40,
    "duration_overflow": bundle(session(chunk("dispatch-events",
                                              *(dispatch(i, 1, 1 << 63) for i in range(3)),
                                              pdo=0, queue=0))),
}

STRIDE_ACCEPTED = {
    # families the sink never reads, torn: statistics does not notice (summary would fail)
    "torn_counter_samples": bundle(session(chunk("counter-samples", b"\0" * 30),
                                           chunk("memory-events", memory_event(1, 9, 64)))),
    "garbage_record_length": bundle(session(chunk("host-execution-events", typed(
        schema.HOST_EXECUTION_EVENT, record_length=3, start_host_time_ns=1, end_host_time_ns=4,
        type=2, executable_id=1)))),
}


@pytest.mark.parametrize("name", sorted(STRIDE_FAILURES))
def test_malformed_bundles_fail_alike(name, tmp_path, iree_profile):
    path = tmp_path / f"{name}.ireeprof"
    path.write_bytes(STRIDE_FAILURES[name])
    line = compare_failure("statistics", path, iree_profile)
    assert ("OUT_OF_RANGE" if name == "duration_overflow" else "DATA_LOSS") in line


@pytest.mark.parametrize("name", sorted(STRIDE_ACCEPTED))
def test_what_statistics_does_not_check(name, tmp_path, iree_profile):
    path = tmp_path / f"{name}.ireeprof"
    path.write_bytes(STRIDE_ACCEPTED[name])
    compare("statistics", path, iree_profile)


def _scaled(ns: int) -> str:
    if ns >= 1_000_000:
        return f"{ns // 1_000_000}.{(ns % 1_000_000) // 1000:03d} ms"
    if ns >= 1000:
        return f"{ns // 1000}.{ns % 1000:03d} us"
    return f"{ns} ns"


def test_text_shows_the_same_numbers(synthetic, iree_bundles, iree_profile):
    for path in (synthetic["amdgpu"], synthetic["clocks"], iree_bundles["mlp-local-task-full"],
                 iree_bundles["conv-bench-local-task-all"]):
        theirs = jsonl(iree_profile(["statistics", "--format=jsonl", path]).stdout)
        code, out, err = run_ours(["statistics", path])
        assert code == 0, err
        assert out.startswith("IREE HAL device statistics\n")
        assert f"aggregate rows {theirs[0]['row_count']:,}" in out
        for row in theirs[1:]:
            if row["row_type"] == "memory_lifecycle":
                assert f"{row['event_name']}" in out
                continue
            if row["function_name"]:
                assert row["function_name"] in out
            if row["total_duration_ns"] is not None:
                assert _scaled(row["total_duration_ns"]) in out
            elif row["has_timing"]:
                assert f"{row['total_duration']:,} ticks" in out
        totals = sum(r["total_duration_ns"] or 0 for r in theirs[1:]
                     if r["row_type"] == "host_execution_function")
        assert f"host execution functions:        {_scaled(totals)}" in out
    code, out, _ = run_ours(["statistics", synthetic["header_only"]])
    assert code == 0 and "no profiling records captured" in out

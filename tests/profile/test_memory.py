"""`memory` against IREE 3.13.0's iree-profile.

Real local-task/local-sync bundles give pool reservations, materializations and queue allocations.
Synthetic bundles (schema dtypes through the writer) add the rest: all twelve event types with
random flags, ids and lengths (partial closes, EXTERNALLY_OWNED, POOL_STATS, pool_id 0 queue
allocations, truncated chunks), lengths large enough for the exact-integer path and for u64
overflow, and queue-device alloca/dealloca events with clock samples for device lifetimes. Every
JSONL row must equal iree-profile's; broken bundles must fail with its exit status, its rows first
and a one-line error.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from amdgpu_cli.cli.main import profile_main
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.jsonl import dumps
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports import memory as memory_report
from amdgpu_cli.profile.writer import BundleWriter, function_record, records

MAX = schema.U32_MAX
F = schema.Flags
RESERVATION, STATS, EXTERNAL = F.MEMORY_POOL_RESERVATION, F.MEMORY_POOL_STATS, \
    F.MEMORY_EXTERNALLY_OWNED
CLOCK_FLAGS = F.CLOCK_DEVICE_TICK | F.CLOCK_HOST_CPU_TIMESTAMP


# --- running both tools ---------------------------------------------------------------------------

def ours(path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            profile_main(["memory", *args, str(path)])
        except SystemExit as e:
            code = e.code or 0
    return code, out.getvalue(), err.getvalue()


def parse(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def compare(iree_profile, path, *args: str, status: str = "DATA_LOSS") -> list[dict]:
    """Our JSONL must be iree-profile's, byte for byte, and so must the exit status."""
    theirs = iree_profile(["memory", "--format=jsonl", *args, str(path)])
    code, out, err = ours(path, "--format=jsonl", *args)
    assert code == theirs.returncode, (code, theirs.returncode, err, theirs.stderr)
    mine, expected = parse(out), parse(theirs.stdout)
    assert len(mine) == len(expected), (len(mine), len(expected))
    for i, (a, b) in enumerate(zip(mine, expected)):
        assert list(a) == list(b), (i, a, b)
        assert a == b, (i, {k: (a[k], b[k]) for k in b if a[k] != b[k]})
    assert out == theirs.stdout  # the same text too (ints only, no float rounding)
    if code:
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert status in theirs.stderr and status in err, (err, theirs.stderr)
    return expected


# --- real bundles ---------------------------------------------------------------------------------

EVERY_BUNDLE_OPTIONS = [(), ("--id=3",), ("--id=2", "--filter=*release")]
MORE_OPTIONS = [("--id=1",), ("--id=0",), ("--filter=pool_*",), ("--filter=queue_alloca",),
                ("--id=999999",), ("--filter=",), ("--id=-7",)]
REPRESENTATIVE = ("mlp-local-task-all", "conv-local-sync-all", "mlp-bench-local-task-all")


def test_real_bundles_match_iree(iree_bundles, iree_profile):
    assert set(REPRESENTATIVE) <= set(iree_bundles)
    with_allocations = 0
    for key, path in sorted(iree_bundles.items()):
        for args in EVERY_BUNDLE_OPTIONS + (MORE_OPTIONS if key in REPRESENTATIVE else []):
            rows = compare(iree_profile, path, *args)
            if not args:
                with_allocations += rows[-1]["type"] == "memory_allocation"
    assert with_allocations >= 10  # the memory-events captures


# --- synthetic bundles ----------------------------------------------------------------------------

def random_events(rng, n: int, first_id: int, big: bool = False) -> np.ndarray:
    """Events over every type (0 and 13 are unknown) with colliding ids, pools and devices."""
    def sometimes_zero(p, values):
        return np.where(rng.random(n) < p, 0, values)

    lengths = (rng.integers(2**60, 2**61, n, dtype=np.uint64) if big
               else rng.integers(0, 300, n))
    return records(
        "memory-events", n, type=rng.integers(0, 14, n), flags=rng.integers(0, 64, n),
        result=rng.integers(0, 3, n), event_id=sometimes_zero(0.05, np.arange(n) + first_id),
        host_time_ns=rng.integers(-5, 10**6, n), allocation_id=rng.integers(0, 6, n),
        pool_id=sometimes_zero(0.3, rng.integers(1, 4, n)),
        backing_id=sometimes_zero(0.5, rng.integers(1, 100, n)),
        submission_id=sometimes_zero(0.4, rng.integers(1, 9, n)),
        physical_device_ordinal=rng.integers(0, 2, n), queue_ordinal=rng.integers(0, 2, n),
        frontier_entry_count=rng.integers(0, 3, n), memory_type=rng.integers(0, 2, n),
        buffer_usage=rng.integers(0, 1 << 20, n), offset=rng.integers(0, 1000, n),
        length=lengths, alignment=rng.integers(1, 64, n),
        pool_bytes_reserved=rng.integers(0, 10**9, n), pool_bytes_free=rng.integers(0, 10**9, n),
        pool_bytes_committed=rng.integers(0, 10**9, n),
        pool_budget_limit=rng.integers(0, 10**9, n), pool_reservation_count=rng.integers(0, 99, n),
        pool_slab_count=rng.integers(0, 99, n))


def random_bundle(path, seed: int, count: int, big: bool = False) -> str:
    rng = np.random.default_rng(seed)
    with BundleWriter(path) as w:
        w.begin_session(1, "synthetic")
        done = 0
        while done < count:
            n = min(int(rng.integers(0, 60)), count - done)
            truncated = bool(rng.random() < 0.2)
            w.chunk("memory-events", random_events(rng, n, done + 1, big), truncated=truncated,
                    dropped_record_count=int(rng.integers(0, 5)) if truncated else 0)
            done += n
        w.end_session()
    return str(path)


def lifecycle_events() -> np.ndarray:
    """A readable scenario: every type once or more, partial closes, stats, imports."""
    rows = []

    def ev(kind, allocation, length, flags=0, pool=7, **extra):
        rows.append(dict(type=kind, allocation_id=allocation, length=length, flags=flags,
                         pool_id=pool, **extra))

    M = memory_report
    ev(M.SLAB_ACQUIRE, 1, 4096, backing_id=900)
    ev(M.SLAB_RELEASE, 1, 8192)                                   # partial: more bytes than open
    ev(M.SLAB_RELEASE, 1, 0)                                      # partial: nothing open
    ev(M.POOL_RESERVE, 2, 256, RESERVATION | STATS, pool_bytes_reserved=256,
       pool_bytes_free=768, pool_bytes_committed=1024, pool_reservation_count=1,
       pool_slab_count=1)
    ev(M.POOL_WAIT, 2, 0, RESERVATION | F.MEMORY_WAIT_FRONTIER, frontier_entry_count=2)
    ev(M.POOL_MATERIALIZE, 2, 256, RESERVATION | STATS, pool_bytes_reserved=512,
       pool_bytes_free=512, pool_bytes_committed=2048, pool_reservation_count=2,
       pool_slab_count=2, pool_budget_limit=4096)
    ev(M.POOL_RELEASE, 2, 256, RESERVATION | STATS, pool_bytes_reserved=0, pool_bytes_free=2048,
       pool_bytes_committed=2048, pool_reservation_count=0, pool_slab_count=2)
    ev(M.POOL_RELEASE, 2, 256, RESERVATION)                       # nothing left to close
    ev(M.POOL_RESERVE, 3, 64)                                     # unflagged: no lifecycle
    ev(M.POOL_RELEASE, 3, 64)                                     # device balance partial close
    ev(M.QUEUE_ALLOCA, 4, 128, F.MEMORY_QUEUE_OPERATION, submission_id=5, queue_ordinal=0)
    ev(M.QUEUE_DEALLOCA, 4, 128, F.MEMORY_QUEUE_OPERATION, pool=0, submission_id=6,
       queue_ordinal=1)                                           # pool inherited from alloca
    ev(M.BUFFER_ALLOCATE, 5, 1000, backing_id=0)
    ev(M.BUFFER_FREE, 5, 400, backing_id=77)                      # partial bytes stay open
    ev(M.BUFFER_IMPORT, 6, 333, EXTERNAL)
    ev(M.BUFFER_UNIMPORT, 6, 333, EXTERNAL)
    ev(M.BUFFER_IMPORT, 6, 10, EXTERNAL | STATS, pool=0)          # stats without a pool: ignored
    ev(0, 8, 5)                                                   # unknown types still count
    ev(13, 8, 5, STATS, pool=9)                                   # ...and create stats pools
    out = records("memory-events", len(rows), physical_device_ordinal=0,
                  event_id=np.arange(len(rows)) + 1, host_time_ns=np.arange(len(rows)) * 10)
    for i, r in enumerate(rows):
        for k, v in r.items():
            out[k][i] = v
    return out


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    d = tmp_path_factory.mktemp("memory")
    paths = {f"random{seed}": random_bundle(d / f"random{seed}.ireeprof", seed, 1500)
             for seed in (1, 2)}
    paths["big"] = random_bundle(d / "big.ireeprof", 4, 40, big=True)
    paths["overflow"] = random_bundle(d / "overflow.ireeprof", 6, 400, big=True)
    with BundleWriter(d / "lifecycle.ireeprof") as w:
        w.begin_session(1, "synthetic")
        events = lifecycle_events()
        w.chunk("memory-events", events[:9])
        w.chunk("memory-events", events[9:], truncated=True, dropped_record_count=3)
        w.chunk("memory-events", truncated=True, dropped_record_count=2)  # drops only
        w.end_session()
    paths["lifecycle"] = str(d / "lifecycle.ireeprof")
    paths["lifetimes"] = lifetime_bundle(d / "lifetimes.ireeprof")
    return paths


SYNTHETIC_OPTIONS = [(), ("--id=3",), ("--id=0",), ("--id=2",), ("--filter=pool_*",),
                     ("--filter=*a*",), ("--filter=unknown",), ("--id=5", "--filter=queue*"),
                     ("--filter=buffer_[iu]*",), ("--filter=?lab_*",)]


@pytest.mark.parametrize("name", ["random1", "random2", "lifecycle", "big"])
@pytest.mark.parametrize("args", SYNTHETIC_OPTIONS, ids=lambda a: " ".join(a) or "default")
def test_synthetic_bundles_match_iree(iree_profile, synthetic, name, args):
    compare(iree_profile, synthetic[name], *args)


def test_exact_integer_path_matches_iree(iree_profile, synthetic, monkeypatch):
    """The Python-integer balances (used for huge lengths) agree on ordinary bundles too."""
    monkeypatch.setattr(memory_report, "EXACT_BYTES_THRESHOLD", 0.0)
    for args in [(), ("--id=2",), ("--filter=pool_*",)]:
        compare(iree_profile, synthetic["random1"], *args)
        compare(iree_profile, synthetic["lifecycle"], *args)


def test_synthetic_bundles_cover_the_cases(iree_profile, synthetic):
    """Guards the fixtures: what the comparisons above claim to cover is in them."""
    rows = []
    for name in ("random1", "lifecycle"):
        rows += parse(iree_profile(["memory", "--format=jsonl", synthetic[name]]).stdout)
    events = [r for r in rows if r["type"] == "memory_event"]
    assert {r["event_type_value"] for r in events} >= set(range(1, 13)) | {0, 13}
    summaries = [r for r in rows if r["type"] == "memory_summary"]
    assert all(s["partial_lifecycle_closes"] > 0 and s["truncated_matched_events"] > 0
               for s in summaries)
    pools = [r for r in rows if r["type"] == "memory_pool"]
    assert any(p["pool_stats_available"] for p in pools)
    assert any(p["materialized_partial_close_count"] for p in pools)
    allocations = [r for r in rows if r["type"] == "memory_allocation"]
    assert {a["kind"] for a in allocations} == {"slab", "pool_reservation", "queue_allocation",
                                                "buffer_allocation", "imported_buffer"}
    assert any(a["externally_owned"] for a in allocations)
    assert any(a["kind"] == "queue_allocation" and a["pool_id"] == 7 and a["events"] == 2
               for a in allocations)  # the dealloca with pool_id 0 joined its alloca


def test_overflow_fails_like_iree(iree_profile, synthetic):
    rows = compare(iree_profile, synthetic["overflow"], status="OUT_OF_RANGE")
    assert rows and all(r["type"] == "memory_event" for r in rows)


# --- device lifetimes (queue-device events and clocks) -------------------------------------------

def lifetime_bundle(path, *, queues_first: bool = True, missing_queue: bool = False,
                    function_first: bool = False) -> str:
    """Queue allocations joined to device alloca/dealloca events on two devices."""
    mem = []       # (allocation, device, alloca (submission, queue), dealloca (submission, queue))
    qde = []       # (type, device, queue, submission, allocation, event_id, start, end)

    def allocation(aid, pdo, alloca, dealloca, ticks=None, dealloca_ticks=None, pool=3):
        mem.append((aid, pdo, alloca, dealloca, pool))
        if ticks is not None:
            qde.append((9, pdo, alloca[1], alloca[0], aid, 100 + 2 * aid, *ticks))
        if dealloca_ticks is not None:
            qde.append((10, pdo, dealloca[1], dealloca[0], aid, 101 + 2 * aid, *dealloca_ticks))

    allocation(1, 0, (10, 0), (12, 0), (2000, 2100), (5000, 5200))      # valid, 32000 ns
    allocation(2, 0, (11, 1), (13, 1), (0, 2100), (5000, 5200))         # alloca has no start
    allocation(3, 0, (14, 0), (15, 1), (9000, 9100), (3000, 8000))      # ends before it starts
    allocation(4, 1, (16, 0), (17, 0), (10, 20), (30, 40))              # device without a fit
    allocation(5, 0, (18, 0), (19, 0), (100, 200), (300, 400))          # duplicate alloca below
    qde.append((9, 0, 0, 18, 5, 40, 50, 60))                            # lower id wins
    allocation(6, 0, (0, 0), (0, 0), (1, 2), (3, 4))                    # no submission: no join
    allocation(7, 0, (20, 0), (21, 0), (1, 2), (3, 2**64 - 1))          # ns overflows int64
    allocation(8, 0, (22, 1), (23, 1), (1, 2), None)                    # no dealloca event
    allocation(9, 0, (24, 0), (25, 0), (7, 7), (7, 7), pool=0)          # zero ticks, no pool
    qde.append((2, 0, 5, 1, 0, 999, 1, 2))  # a dispatch on an undescribed queue: not checked
    if missing_queue:
        qde.append((10, 1, 3, 1, 0, 998, 1, 2))

    events = []
    for aid, pdo, alloca, dealloca, pool in mem:
        for kind, (submission, queue) in ((memory_report.QUEUE_ALLOCA, alloca),
                                          (memory_report.QUEUE_DEALLOCA, dealloca)):
            events.append(dict(type=kind, allocation_id=aid, physical_device_ordinal=pdo,
                               submission_id=submission, queue_ordinal=queue, pool_id=pool,
                               length=64 * aid, flags=F.MEMORY_QUEUE_OPERATION))
    memory = records("memory-events", len(events), event_id=np.arange(len(events)) + 1,
                     host_time_ns=1_000_000 + 100 * np.arange(len(events)))
    for i, e in enumerate(events):
        for k, v in e.items():
            memory[k][i] = v
    device_events = records("queue-device-events", len(qde))
    for i, (kind, pdo, queue, sub, aid, eid, start, end) in enumerate(qde):
        for k, v in dict(type=kind, physical_device_ordinal=pdo, queue_ordinal=queue,
                         submission_id=sub, allocation_id=aid, event_id=eid, start_tick=start,
                         end_tick=end, stream_id=queue + (pdo << 32)).items():
            device_events[k][i] = v
    queues = records("queues", physical_device_ordinal=[0, 0, 1], queue_ordinal=[0, 1, 0],
                     stream_id=[0, 1, 1 << 32])
    clocks = records("clock-correlations", flags=CLOCK_FLAGS, physical_device_ordinal=[0, 0, 1],
                     sample_id=[1, 2, 1], device_tick=[1000, 101000, 5],
                     host_cpu_timestamp_ns=[5000, 1005000, 77])
    with BundleWriter(path) as w:
        w.begin_session(1, "synthetic")
        if function_first:
            w.chunk("executable-functions", function_record(1, 0, "f"))
        w.chunk("executables", records("executables", executable_id=1, function_count=1))
        if queues_first:
            w.chunk("queues", queues)
        w.chunk("clock-correlations", clocks[:2])
        w.chunk("memory-events", memory)
        w.chunk("queue-device-events", device_events)
        w.chunk("clock-correlations", clocks[2:])
        if not queues_first:
            w.chunk("queues", queues)
        w.end_session()
    return str(path)


@pytest.mark.parametrize("args", [(), ("--id=1",), ("--id=5",), ("--filter=queue_dealloca",)],
                         ids=lambda a: " ".join(a) or "default")
def test_device_lifetimes_match_iree(iree_profile, synthetic, args):
    compare(iree_profile, synthetic["lifetimes"], *args)


def test_device_lifetimes_cover_the_cases(iree_profile, synthetic):
    rows = parse(iree_profile(["memory", "--format=jsonl", synthetic["lifetimes"]]).stdout)
    allocations = {r["allocation_id"]: r for r in rows if r["type"] == "memory_allocation"}
    assert allocations[1]["device_lifetime_duration_ns"] == 32000
    assert allocations[2]["alloca_device_event_id"] and not \
        allocations[2]["device_lifetime_available"]
    assert allocations[4]["device_lifetime_available"] and not \
        allocations[4]["device_lifetime_time_ns_available"]
    assert allocations[5]["alloca_device_event_id"] == 40
    assert allocations[7]["device_lifetime_available"] and not \
        allocations[7]["device_lifetime_time_ns_available"]
    assert allocations[9]["device_lifetime_time_ns_available"]


def random_lifetime_bundle(path, seed: int) -> str:
    """Queue allocations and device events with colliding keys, invalid ticks, three clocks."""
    rng = np.random.default_rng(seed)
    n, m = 300, 400
    memory = records(
        "memory-events", n, type=rng.choice([7, 8, 3, 4, 5], n), flags=rng.integers(0, 64, n),
        event_id=np.arange(n) + 1, allocation_id=rng.integers(0, 3, n),
        pool_id=rng.integers(0, 3, n), length=rng.integers(0, 100, n),
        submission_id=np.where(rng.random(n) < 0.2, 0, rng.integers(1, 3, n)),
        physical_device_ordinal=rng.integers(0, 3, n), host_time_ns=rng.integers(0, 1000, n),
        queue_ordinal=np.where(rng.random(n) < 0.1, MAX, rng.integers(0, 2, n)))
    device_events = records(
        "queue-device-events", m, type=rng.choice([9, 10, 2], m),
        event_id=rng.integers(0, 50, m), submission_id=rng.integers(0, 3, m),
        allocation_id=rng.integers(0, 3, m), physical_device_ordinal=rng.integers(0, 3, m),
        queue_ordinal=rng.integers(0, 2, m), end_tick=rng.integers(0, 10**6, m),
        start_tick=np.where(rng.random(m) < 0.1, 0, rng.integers(0, 10**6, m)))
    device_events["stream_id"] = device_events["queue_ordinal"]
    queues = records("queues", physical_device_ordinal=np.repeat([0, 1, 2], 2),
                     queue_ordinal=[0, 1] * 3, stream_id=[0, 1] * 3)
    clocks = records("clock-correlations", flags=[3, 3, 3, 3, 3, 19],
                     physical_device_ordinal=[0, 1, 2, 0, 1, 2], sample_id=[1, 1, 1, 2, 2, 2],
                     device_tick=[10, 10, 10, 3 * 10**6, 10**5, 10**6],
                     host_cpu_timestamp_ns=[100, 100, 100, 10**9, 7 * 10**8, 10**9])
    with BundleWriter(path) as w:
        w.begin_session(1, "synthetic")
        w.chunk("queues", queues)
        w.chunk("clock-correlations", clocks[:3])
        w.chunk("memory-events", memory)
        w.chunk("queue-device-events", device_events)
        w.chunk("clock-correlations", clocks[3:])
        w.end_session()
    return str(path)


def test_random_device_lifetimes_match_iree(iree_profile, tmp_path):
    joined = 0
    for seed in (1, 2, 3):
        path = random_lifetime_bundle(tmp_path / f"life{seed}.ireeprof", seed)
        rows = compare(iree_profile, path)
        compare(iree_profile, path, "--id=2")
        joined += sum(r.get("device_lifetime_time_ns_available", False) for r in rows)
    assert joined  # some lifetimes were scaled to nanoseconds


# --- broken bundles -------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", ["queues_last", "missing_queue", "function_first"])
def test_metadata_errors_match_iree(iree_profile, tmp_path, variant):
    """The device-lifetime join checks metadata as IREE does: in JSONL and with --id only."""
    path = lifetime_bundle(tmp_path / "b.ireeprof", queues_first=variant != "queues_last",
                           missing_queue=variant == "missing_queue",
                           function_first=variant == "function_first")
    compare(iree_profile, path)
    compare(iree_profile, path, "--id=1")
    code, _, err = ours(path)
    assert code == iree_profile(["memory", path]).returncode == 0, err
    code, _, err = ours(path, "--id=1")
    assert code == iree_profile(["memory", "--id=1", path]).returncode == 1
    assert len(err.strip().splitlines()) == 1 and "DATA_LOSS" in err


def test_torn_and_cut_bundles_match_iree(iree_profile, synthetic, tmp_path):
    data = open(synthetic["lifecycle"], "rb").read()
    bundle = Bundle.open(synthetic["lifecycle"])
    last = bundle.records[-1]
    # A final record cut short in a file whose header says "still being written".
    cut = bytearray(data[:int(last["offset"]) + 50])
    cut[16:24] = bytes(8)
    (tmp_path / "cut.ireeprof").write_bytes(bytes(cut))
    compare(iree_profile, tmp_path / "cut.ireeprof")
    # A memory-events payload that ends inside a record.
    with BundleWriter(tmp_path / "torn.ireeprof", check=False) as w:
        w.begin_session(1, "synthetic")
        w.chunk("memory-events", lifecycle_events()[:3])
        w.chunk("memory-events", lifecycle_events()[:2].tobytes()[:250])
        w.end_session()
    compare(iree_profile, tmp_path / "torn.ireeprof")
    for path in (tmp_path / "cut.ireeprof", tmp_path / "torn.ireeprof"):
        code, _, err = ours(path)
        assert code == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


# --- library and text views ----------------------------------------------------------------------

def test_rows_read_like_dicts(synthetic):
    """Rendered rows are mappings whose dumps() is their dict's dumps()."""
    rows = list(memory_report.report(Bundle.open(synthetic["lifetimes"]), ReportOptions()))
    for row in rows:
        assert dumps(row) == dumps(dict(row))
    allocation = next(r for r in rows if r["type"] == "memory_allocation")
    assert allocation["open_at_end"] is False and allocation["kind"] == "queue_allocation"


def run_text(path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="100", NO_COLOR="1")
    code = "import sys; from amdgpu_cli.cli.main import profile_main; profile_main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, "memory", *args, str(path)],
                          capture_output=True, text=True, env=env, timeout=60)


TEXT_CASES = [("lifecycle", {}), ("lifecycle", {"id": 2}), ("lifetimes", {"id": 1}),
              ("random1", {"filter": "pool_*"}), ("random1", {"id": 3})]


@pytest.mark.parametrize("name,options", TEXT_CASES, ids=lambda c: str(c))
def test_text_view(synthetic, name, options):
    """The text view fits 100 columns and shows what the JSONL rows hold."""
    path = synthetic[name]
    args = [f"--{k}={v}" for k, v in options.items()]
    proc = run_text(path, *args)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(len(line) <= 100 for line in lines)
    expected = list(memory_report.report(Bundle.open(path), ReportOptions(**options)))
    summary = next(r for r in expected if r["type"] == "memory_summary")
    assert f"{summary['matched_events']} matched of {summary['total_events']}" in proc.stdout
    for pool in (r for r in expected if r["type"] == "memory_pool"):
        assert f"pool {pool['kind']}: device {pool['physical_device_ordinal']}  " \
               f"id {pool['pool_id']}" in proc.stdout
    allocations = [r for r in expected if r["type"] == "memory_allocation"]
    shown = [line for line in lines if line.startswith("allocation ")]
    assert len(shown) == (len(allocations) if "id" in options else 0)
    for allocation in allocations:
        if allocation["device_lifetime_time_ns_available"]:
            assert f"{allocation['device_lifetime_duration_ns']} ns" in proc.stdout


def test_text_view_of_broken_bundle(tmp_path):
    (tmp_path / "bad.ireeprof").write_bytes(b"IRPF" + bytes(20))
    proc = run_text(tmp_path / "bad.ireeprof")
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("seed", range(4))
def test_balance_walks_agree_with_the_recurrence(seed, monkeypatch):
    """The balances three ways (the native loop, the whole-column numpy walk, and the plain
    recurrence memory.py uses near 2**64) on random opens and closes: equal, field for field,
    with the state each event found."""
    rng = np.random.default_rng(seed)
    n, count = 5000, int(rng.integers(1, 40))
    group = rng.integers(0, count, n)
    is_open = rng.random(n) < rng.uniform(0.3, 0.7)
    length = rng.integers(0, 1 << int(rng.integers(1, 40)), n).astype(np.uint64)
    exact = memory_report._balances_exact(group, count, is_open, length, True)
    native = memory_report.balances(group, count, is_open, length, prev=True)
    monkeypatch.setenv("AMDGPU_CLI_PURE_PYTHON", "1")
    numpy_walk = memory_report.balances(group, count, is_open, length, prev=True)
    for walk in (native, numpy_walk):
        for name in memory_report.BALANCE_FIELDS:
            assert walk.columns[name].tolist() == exact.columns[name].tolist(), name
        assert walk.prev_count.tolist() == exact.prev_count.tolist()
        assert walk.prev_bytes.tolist() == exact.prev_bytes.tolist()

"""explain's one-pass native path (`_explain.c`, `reports/explain_native.py`).

The command line runs it first and falls back to the exact walk (`explain.report`) when it
declines. Here: its layout facts against schema.py's dtypes; that it really runs (on the real
bundles, declining only where iree-profile itself fails, and on synthetic bundles with queue and
memory events, host spans, ties for the top table, byte balances near 2**64); and, with `--filter` /
`--id` variants and on hundreds of mutated bundles, that the command's output or failure is
iree-profile's.
"""

from __future__ import annotations

import numpy as np
import pytest

from amdgpu_cli.profile import native, schema
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reports import explain_native

from .native_support import assert_layout, assert_like_iree, mutations
from .test_explain import (F, Builder, amdgpu_bundle, clock, dispatch_chunk, dispatch_events, fixed,
                           host_dispatches, memory_events, metadata)

pytestmark = pytest.mark.skipif(native.scan is None, reason="native module not built in this install")

# The fields _explain.c reads itself (its EXPLAIN_FIELDS table); the rest are summary's and the
# projection's, checked by their own tests.
_FIELDS = [
    ("queue-events", "type"), ("queue-events", "dependency_strategy"),
    ("queue-events", "stream_id"), ("queue-events", "physical_device_ordinal"),
    ("queue-events", "queue_ordinal"), ("queue-events", "payload_length"),
    ("memory-events", "type"), ("memory-events", "flags"), ("memory-events", "allocation_id"),
    ("memory-events", "pool_id"), ("memory-events", "physical_device_ordinal"),
    ("memory-events", "length"),
]


def test_layout_matches_schema():
    lib = native.native_module()[1]
    assert_layout(lib.explain_layout, _FIELDS)
    assert lib.EXPLAIN_MEMORY_POOL_RESERVATION == F.MEMORY_POOL_RESERVATION


def _host_bundle() -> Builder:
    rng = np.random.default_rng(7)
    b = Builder()
    b.begin()
    metadata(b, devices=(0,), queues_per_device=1)
    b.chunk("queues", fixed(schema.QUEUE, 1, physical_device_ordinal=0, queue_ordinal=0))
    for _ in range(3):
        b.chunk("host-execution-events", host_dispatches(rng, 50))
    b.end()
    return b


def _ties_bundle() -> Builder:
    rng = np.random.default_rng(11)
    b = Builder()
    b.begin()
    metadata(b, devices=(0,))
    b.chunk("clock-correlations", clock(0, 1, 1_000_000, 9_000_000_000))
    ev = dispatch_events(rng, 20_000, 1, 1_100_000, invalid_fraction=0.01)
    dispatch_chunk(b, 0, 0, ev[:12_000])
    dispatch_chunk(b, 0, 1, ev[12_000:])
    b.end()
    return b


def _memory_bundle(large: bool) -> Builder:
    """Many events on few reservations, or (large) byte balances near 2**64."""
    b = Builder()
    b.begin()
    metadata(b, devices=(0, 1))
    if large:
        ev = fixed(schema.MEMORY_EVENT, 6, event_id=np.arange(1, 7), physical_device_ordinal=0,
                   allocation_id=1, pool_id=1, flags=F.MEMORY_POOL_RESERVATION)
        ev["type"] = [3, 4, 5, 3, 4, 5]
        ev["length"] = [1 << 62, 1 << 62, 1 << 61, 1 << 63, 1 << 61, 1 << 63]
        b.chunk("memory-events", ev)
    else:
        rng = np.random.default_rng(5)
        for _ in range(4):
            ev = memory_events(rng, 2000, (0, 1))
            ev["allocation_id"] = rng.integers(1, 4, len(ev))
            ev["pool_id"] = rng.integers(0, 2, len(ev))
            b.chunk("memory-events", ev)
    b.end()
    return b


SYNTHETIC = {
    "amdgpu-0": lambda: amdgpu_bundle(0),
    "amdgpu-3-fit": lambda: amdgpu_bundle(3, clocks="fit", extras=False),
    "amdgpu-4-no-clocks": lambda: amdgpu_bundle(4, clocks="none", with_queue_events=False),
    "host-spans": _host_bundle,
    "top-ties": _ties_bundle,
    "memory-lifecycles": lambda: _memory_bundle(False),
    "memory-near-2**64": lambda: _memory_bundle(True),
}
VARIANTS = [[], ["--filter=matmul*"], ["--filter=*conv*"], ["--filter=nothing"], ["--id=5"],
            ["--id=0"], ["--id=40", "--filter=*kernel"]]


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_synthetic_bundles_take_the_pass_and_match_iree_profile(name, tmp_path, iree_profile):
    path = SYNTHETIC[name]().write(tmp_path / f"{name}.ireeprof")
    for extra in VARIANTS:
        code = assert_like_iree(["explain", "--format=jsonl", *extra, path], iree_profile, name)
        if code == 0 and not extra:
            assert explain_native.report_file(str(path), ReportOptions()) is not None, name


def test_real_bundles_take_the_pass_and_match_iree_profile(iree_bundles, iree_profile):
    for key, path in sorted(iree_bundles.items()):
        code = assert_like_iree(["explain", "--format=jsonl", path], iree_profile, key)
        if explain_native.report_file(str(path), ReportOptions()) is None:
            assert code != 0, key  # declining is right only where the report fails
    for key in [k for k in sorted(iree_bundles) if "local-task-all" in k][:3]:
        for extra in (["--filter=*dispatch_0*"], ["--id=3"], ["--filter=nothing"]):
            assert_like_iree(["explain", "--format=jsonl", *extra, iree_bundles[key]],
                             iree_profile, key)


def test_mutated_bundles_match_iree_profile(tmp_path, iree_bundles, iree_profile):
    native_ran = 0
    cases = (mutations(seed=20261127, count=120, base=amdgpu_bundle(2, extras=False).tobytes())
             + mutations(seed=20261130, count=80,
                          base=iree_bundles["attention-local-task-all"].read_bytes()))
    for label, data in cases:
        path = tmp_path / "m.ireeprof"
        path.write_bytes(data)
        code = assert_like_iree(["explain", "--format=jsonl", path], iree_profile, label)
        if code == 0:  # (a bad file header fails inside report_file, as in the exact path)
            native_ran += explain_native.report_file(str(path), ReportOptions()) is not None
    assert native_ran > len(cases) // 3

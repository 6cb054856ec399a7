"""The IREE-generated .ireeprof corpus is real and decodable by iree-profile."""

from __future__ import annotations

import pytest

from iree_bundles import BUNDLE_SPECS, jsonl_rows

MIN_BUNDLES = 25


def _summary(iree_profile, path) -> dict:
    proc = iree_profile(["summary", "--format=jsonl", path])
    assert proc.returncode == 0, f"{path.name}: {proc.stderr.strip()}"
    rows = [r for r in jsonl_rows(proc.stdout) if r.get("type") == "summary"]
    assert len(rows) == 1, f"{path.name}: expected one summary row"
    return rows[0]


def test_bundle_set(iree_bundles):
    assert set(iree_bundles) == set(BUNDLE_SPECS)
    assert len(iree_bundles) >= MIN_BUNDLES
    models = {BUNDLE_SPECS[k].model for k in iree_bundles}
    assert len(models) >= 5
    for key in ("mlp-local-task-all", "mlp-local-sync-all",
                "conv-local-task-queue-events", "mlp-bench-local-task-all"):
        assert key in iree_bundles


@pytest.mark.parametrize("key", sorted(BUNDLE_SPECS))
def test_bundle_valid(key, iree_bundles, iree_profile):
    path = iree_bundles[key]
    with open(path, "rb") as f:
        assert f.read(4) == b"IRPF", f"{path.name}: bad magic"
    summary = _summary(iree_profile, path)
    assert summary["chunk_records"] > 0
    assert summary["non_ok_session_end_records"] == 0
    assert summary["truncated_chunks"] == 0
    modes = BUNDLE_SPECS[key].modes
    if "host-execution" in modes:
        assert summary["host_execution_event_records"] > 0
    if "queue-events" in modes:
        assert summary["queue_event_records"] > 0
    if "memory-events" in modes:
        assert summary["memory_event_records"] > 0
    if BUNDLE_SPECS[key].tool == "bench":
        # Many iterations: far more events than a single invocation.
        assert summary["host_execution_event_records"] > 20

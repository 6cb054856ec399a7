"""One table of evidence: every report's JSONL rows equal iree-profile's on every bundle.

The bundles are the real IREE captures built at test time (local-task and local-sync, every
profiling family those drivers accept, seven models) and the device-side sample bundles written by
our writer (dispatch events, clock fits, counters, metrics, code objects). Rows compare as parsed
JSON: same keys in the same order, equal values, floats within 1e-9 relative. Where iree-profile
fails (e.g. `command` on local-sync bundles, which reference an undescribed command buffer) we must
fail with the same exit status. Per-command test files go deeper (filters, ids, synthetic edge cases).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.profile.test_bad_input import run_ours

REPO = Path(__file__).resolve().parents[2]
SAMPLES = sorted((REPO / "profiles" / "samples").glob("*.ireeprof"))

CASES = [
    ["summary"], ["statistics"], ["explain"], ["executable"], ["executable", "--dispatch_events"],
    ["dispatch"], ["dispatch", "--dispatch_events"], ["command"], ["queue"],
    ["queue", "--dispatch_events"], ["counter"], ["counter", "--counter_samples"], ["memory"],
    ["export"],
]


def _args(case: list[str], path: Path) -> list[str]:
    if case[0] == "export":
        return ["export", "--format=ireeperf-jsonl", "--output=-", str(path)]
    return [*case, "--format=jsonl", str(path)]


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return False
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0) or a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _rows(text: str) -> list:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(c).replace("--", ""))
def test_rows_equal_iree_profile(case, iree_bundles, iree_profile):
    assert SAMPLES, "profiles/samples has no sample bundles"
    compared = 0
    for path in [*iree_bundles.values(), *SAMPLES]:
        theirs = iree_profile(_args(case, path))
        code, out, err = run_ours(_args(case, path))
        assert code == theirs.returncode, (path.name, err, theirs.stderr)
        if code != 0:
            continue
        ours_rows, their_rows = _rows(out), _rows(theirs.stdout)
        assert len(ours_rows) == len(their_rows), path.name
        for i, (a, b) in enumerate(zip(ours_rows, their_rows)):
            assert _same(a, b), (path.name, i, a, b)
        compared += len(their_rows)
    assert compared > 0

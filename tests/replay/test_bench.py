"""`amdgpu-replay bench` against iree-benchmark-replay 3.13.0 on the same captures (IREE's own).

- JSON that json.load reads with the same keys, benchmark names (`BM_replay/process_time/
  real_time`, `BM_replay/scope:NAME/process_time/manual_time`), run types, aggregate rows,
  iteration counts and time unit (ms) as IREE's; console rows that line up as IREE's.
- Scoped time is the time inside the scope: less than the whole replay's.
- A capture flushes once per iteration when profiled, as iree-benchmark-replay does.
- Bad input: an unknown scope, a missing file, several files: one line, exit 1, before timing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("iree-benchmark-replay", "amdgpu-replay")),
    reason="iree-benchmark-replay and amdgpu-replay must be on PATH")

STEM = "softmax"


def _run(tool: list[str], *args):
    return subprocess.run([*tool, *map(str, args)], capture_output=True, text=True, timeout=300)


def iree(*args):
    return _run(["iree-benchmark-replay"], *args)


def ours(*args):
    return _run(["amdgpu-replay", "bench"], *args)


def _json(tool, *args) -> dict:
    done = tool("--benchmark_format=json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


SAME = ("name", "family_index", "per_family_instance_index", "run_name", "run_type",
        "repetitions", "repetition_index", "threads", "aggregate_name", "aggregate_unit",
        "iterations", "time_unit")


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
@pytest.mark.parametrize("scope", ["", "execute"])
def test_json_matches_iree(iree_captures, device, scope):
    path = iree_captures(STEM).path
    flags = [f"--device={device}", "--benchmark_min_time=10x", "--benchmark_repetitions=2"]
    if scope:
        flags.append(f"--replay_scope={scope}")
    theirs, mine = _json(iree, *flags, path), _json(ours, *flags, path)
    assert list(mine) == list(theirs) == ["context", "benchmarks"]
    assert list(mine["context"]) == list(theirs["context"])
    assert len(mine["benchmarks"]) == len(theirs["benchmarks"]) == 2 + 4
    for a, b in zip(mine["benchmarks"], theirs["benchmarks"]):
        assert list(a) == list(b)
        assert {k: a[k] for k in SAME if k in a} == {k: b[k] for k in SAME if k in b}
        assert a["real_time"] > 0 and a["cpu_time"] > 0
    expected = (f"BM_replay/scope:{scope}/process_time/manual_time" if scope
                else "BM_replay/process_time/real_time")
    assert mine["benchmarks"][0]["name"] == expected


def _shape(line: str) -> str:
    head, _, _ = line.partition("items_per_second=")
    return re.sub(r" *[0-9][0-9.]*", lambda m: "#" * len(m.group()), head)


def test_console_lines_up_as_iree(iree_captures):
    path = iree_captures(STEM).path
    flags = ["--device=local-sync", "--benchmark_min_time=10x", "--benchmark_repetitions=2"]
    theirs, mine = iree(*flags, path), ours(*flags, path)
    assert theirs.returncode == mine.returncode == 0, mine.stderr
    a, b = mine.stdout.splitlines(), theirs.stdout.splitlines()
    assert a[:3] == b[:3]
    assert [_shape(x) for x in a[3:]] == [_shape(x) for x in b[3:]]


def test_scope_counts_only_its_part(iree_captures):
    path = iree_captures(STEM).path
    flags = ["--device=local-sync", "--benchmark_min_time=30x"]
    whole = _json(ours, *flags, path)["benchmarks"][0]["real_time"]
    init = _json(ours, *flags, "--replay_scope=init", path)["benchmarks"][0]["real_time"]
    assert 0 < init < whole


def _content_types(bundle) -> list[str]:
    done = subprocess.run(["iree-profile", "cat", str(bundle)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return [line.split("profile.")[-1] for line in done.stdout.splitlines()
            if line.strip().startswith("content_type:")]


@pytest.mark.skipif(not shutil.which("iree-profile"), reason="iree-profile not on PATH")
def test_profiled_bench_flushes_every_iteration(iree_captures, tmp_path):
    """As iree-benchmark-replay: a flush after every timed iteration, so a 7x benchmark's bundle
    holds the same chunks as IREE's: seven queue-event chunks."""
    path = iree_captures(STEM).path
    bundles = {}
    for name, tool in (("ours", ours), ("iree", iree)):
        bundles[name] = tmp_path / f"{name}.ireeprof"
        done = tool("--device=local-task", "--benchmark_min_time=7x",
                    "--device_profiling_mode=queue-events",
                    f"--device_profiling_output={bundles[name]}", path)
        assert done.returncode == 0, done.stderr
    mine, theirs = _content_types(bundles["ours"]), _content_types(bundles["iree"])
    assert mine == theirs
    assert mine.count("queue-events") == 7


@pytest.mark.parametrize("case", ["scope", "missing", "two_files"])
def test_bad_input_is_one_line(iree_captures, tmp_path, case):
    path = iree_captures(STEM).path
    args = {"scope": ["--replay_scope=nope", path], "missing": [tmp_path / "none.ireereplay"],
            "two_files": [path, path]}[case]
    done = ours("--benchmark_min_time=2x", *args)
    assert done.returncode == 1, done.stdout
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ") and "internal error" not in lines[-1]
    assert "Traceback" not in done.stderr
    assert not done.stdout

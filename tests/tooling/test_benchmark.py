"""`amdgpu-benchmark` against iree-benchmark-module 3.13.0 (Google Benchmark v1.9.5 inside).

- Formatting: one iree-benchmark-module run writes its console (or CSV) report to stdout and its
  JSON to --benchmark_out; our formatters given that JSON's numbers must print IREE's stdout
  byte for byte (times, SI counters, percentages, rules, CSV number forms).
- Structure: the same module, function and flags through both tools: JSON that json.load reads
  with the same context keys, benchmark names, row keys in order, run types, aggregate rows,
  iteration counts and units; console rows whose columns line up the same way.
- Iteration counts: `Nx` with --batch_size rounds up to batches, as IREE does.
- Bad flags and paths: one line, exit 2 (usage) or 1, before any timing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from amdgpu_cli.tooling import benchmark as bm

ROOT = Path(__file__).resolve().parents[2]
MLP_ARGS = ["--function=predict", "--input=1x16xf32=1"]


@pytest.fixture(scope="module")
def mlp(tmp_path_factory) -> Path:
    from examples.compile import CompileError, compile_model

    if not shutil.which("iree-benchmark-module"):
        pytest.skip("iree-benchmark-module not on PATH")
    try:
        return compile_model(ROOT / "examples" / "models" / "mlp.mlir",
                             tmp_path_factory.mktemp("bench") / "mlp.vmfb")
    except CompileError as e:
        pytest.skip(f"iree-compile unavailable: {e}")


def iree(*args) -> subprocess.CompletedProcess:
    return subprocess.run(["iree-benchmark-module", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def ours(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from amdgpu_cli.cli.main import "
                           "benchmark_main; benchmark_main()", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def rows_of(document: dict) -> list[bm.Run]:
    """Google Benchmark's JSON rows as our report rows."""
    return [bm.Run(r["name"], r["run_name"], r["run_type"], r["repetitions"],
                   r.get("repetition_index", 0), r["iterations"], r["real_time"], r["cpu_time"],
                   r["time_unit"], r["items_per_second"], r.get("aggregate_name", ""),
                   r.get("aggregate_unit", ""), r["family_index"])
            for r in document["benchmarks"]]


@pytest.mark.parametrize("unit", ["ms", "us", "ns"])
def test_console_report_prints_iree_numbers_exactly(mlp, tmp_path, unit):
    out = tmp_path / "run.json"
    result = iree("--device=local-task", f"--module={mlp}", *MLP_ARGS,
                  "--benchmark_min_time=30x", "--benchmark_repetitions=3", f"--time_unit={unit}",
                  f"--benchmark_out={out}", "--benchmark_out_format=json")
    assert result.returncode == 0, result.stderr
    rows = rows_of(json.loads(out.read_text()))
    assert bm.console_text(rows, bm.name_width(rows, 3)) == result.stdout


def test_csv_report_prints_iree_numbers_exactly(mlp, tmp_path):
    out = tmp_path / "run.json"
    result = iree("--device=local-task", f"--module={mlp}", *MLP_ARGS,
                  "--benchmark_min_time=30x", "--benchmark_repetitions=2", "--time_unit=us",
                  "--benchmark_format=csv", f"--benchmark_out={out}",
                  "--benchmark_out_format=json")
    assert result.returncode == 0, result.stderr
    assert bm.csv_text(rows_of(json.loads(out.read_text()))) == result.stdout


def _json(tool, mlp, *extra) -> dict:
    result = tool("--device=local-task", f"--module={mlp}", *MLP_ARGS, "--benchmark_format=json",
                  *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_json_has_iree_keys_names_and_aggregates(mlp):
    flags = ["--benchmark_min_time=20x", "--benchmark_repetitions=3"]
    theirs, mine = _json(iree, mlp, *flags), _json(ours, mlp, *flags)
    assert list(mine) == list(theirs) == ["context", "benchmarks"]
    assert list(mine["context"]) == list(theirs["context"])
    assert [list(c) for c in mine["context"]["caches"]] == \
        [list(c) for c in theirs["context"]["caches"]]
    assert len(mine["benchmarks"]) == len(theirs["benchmarks"]) == 3 + 4
    same = ("name", "family_index", "per_family_instance_index", "run_name", "run_type",
            "repetitions", "repetition_index", "threads", "aggregate_name", "aggregate_unit",
            "iterations", "time_unit")
    for a, b in zip(mine["benchmarks"], theirs["benchmarks"]):
        assert list(a) == list(b)
        assert {k: a[k] for k in same if k in a} == {k: b[k] for k in same if k in b}
        assert a["real_time"] > 0 and a["cpu_time"] > 0 and a["items_per_second"] > 0


def test_units_batches_and_single_runs_match_iree(mlp):
    for flags in (["--benchmark_min_time=50x", "--batch_size=16", "--time_unit=us"],
                  ["--benchmark_min_time=7x", "--time_unit=ns"]):
        theirs, mine = _json(iree, mlp, *flags), _json(ours, mlp, *flags)
        key = [(r["name"], r["iterations"], r["time_unit"]) for r in theirs["benchmarks"]]
        assert [(r["name"], r["iterations"], r["time_unit"]) for r in mine["benchmarks"]] == key


def _shape(line: str) -> str:
    """A console row with each right-aligned number (and its padding) blanked and the counter
    value dropped: where the columns fall."""
    head, _, _ = line.partition("items_per_second=")
    return re.sub(r" *[0-9][0-9.]*", lambda m: "#" * len(m.group()), head)


def test_console_lines_up_as_iree(mlp):
    flags = ["--benchmark_min_time=20x", "--benchmark_repetitions=2"]
    theirs = iree("--device=local-task", f"--module={mlp}", *MLP_ARGS, *flags)
    mine = ours("--device=local-task", f"--module={mlp}", *MLP_ARGS, *flags)
    assert theirs.returncode == mine.returncode == 0, mine.stderr
    a, b = mine.stdout.splitlines(), theirs.stdout.splitlines()
    assert a[:3] == b[:3]  # the rules and the header
    assert [_shape(x) for x in a[3:]] == [_shape(x) for x in b[3:]]
    # The context block on stderr: the same lines but for the date and our executable.
    assert [x.split(" ")[0] for x in mine.stderr.splitlines()[1:]] == \
        [x.split(" ")[0] for x in theirs.stderr.splitlines()[1:]]


def test_min_time_in_seconds_runs_at_least_that_long(mlp):
    document = _json(ours, mlp, "--benchmark_min_time=0.2s")
    row = document["benchmarks"][0]
    assert row["iterations"] * row["real_time"] / 1e3 >= 0.2


def test_benchmark_out_writes_a_file_and_keeps_stdout(mlp, tmp_path):
    out = tmp_path / "out.json"
    result = ours("--device=local-task", f"--module={mlp}", *MLP_ARGS,
                  "--benchmark_min_time=5x", f"--benchmark_out={out}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1].startswith("Benchmark")
    assert json.loads(out.read_text())["benchmarks"][0]["iterations"] == 5


@pytest.mark.parametrize("flags, status, text", [
    (["--function=predict", "--benchmark_min_time=abc"], 2, "--benchmark_min_time"),
    (["--function=predict", "--benchmark_repetitions=0"], 2, "--benchmark_repetitions"),
    (["--function=predict", "--time_unit=s"], 2, "--time_unit"),
    (["--function=nope"], 1, "no function `nope`"),
    (["--function=predict", "--input=2x2xf32=1"], 1, "parsing function inputs"),
])
def test_bad_flags_are_one_line(mlp, flags, status, text):
    result = ours("--device=local-task", f"--module={mlp}", "--input=1x16xf32=1",
                  "--benchmark_min_time=5x", *flags)
    assert result.returncode == status, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and text in lines[0], result.stderr


def test_a_directory_as_benchmark_out_fails_before_timing(mlp, tmp_path):
    result = ours("--device=local-task", f"--module={mlp}", *MLP_ARGS,
                  "--benchmark_min_time=5x", f"--benchmark_out={tmp_path}")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [f"error: cannot write `{tmp_path}`: is a directory"]


@pytest.mark.parametrize("flag", ["--benchmark_report_aggregates_only=true",
                                  "--benchmark_display_aggregates_only=true"])
def test_aggregates_only_flags_select_the_rows_iree_selects(mlp, flag):
    flags = ["--benchmark_min_time=5x", "--benchmark_repetitions=2", flag]
    for fmt in ("json", "console"):
        theirs = iree("--device=local-task", f"--module={mlp}", *MLP_ARGS, *flags,
                      f"--benchmark_format={fmt}")
        mine = ours("--device=local-task", f"--module={mlp}", *MLP_ARGS, *flags,
                    f"--benchmark_format={fmt}")
        assert theirs.returncode == mine.returncode == 0, mine.stderr
        if fmt == "json":
            names = [[r["name"] for r in json.loads(p.stdout)["benchmarks"]] for p in (mine, theirs)]
        else:
            names = [[x.split()[0] for x in p.stdout.splitlines()[3:]] for p in (mine, theirs)]
        assert names[0] == names[1]

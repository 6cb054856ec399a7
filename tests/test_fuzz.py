"""The parser fuzzers (bench/fuzz) as tests.

- Every committed finding in tests/fuzz/regressions/<target>/ runs through its target's harness:
  it may only raise project errors (AmdgpuCliError), and quickly (a former hang stays fixed).
- Each target fuzzes for AMDGPU_FUZZ_SECONDS (default 45) from the fixed seed corpus that
  bench/fuzz/seeds.py builds with IREE's tools, with libFuzzer -seed=1 and a fresh working
  corpus, two targets at a time; no crash, hang or memory blow-up may turn up.
  AMDGPU_FUZZ_SECONDS=0 skips the fuzzing (the regressions still run).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.fuzz.targets import TARGETS, one_input  # noqa: E402

REGRESSIONS = Path(__file__).resolve().parent / "fuzz" / "regressions"
FUZZ_SECONDS = float(os.environ.get("AMDGPU_FUZZ_SECONDS", "45"))
REGRESSION_SECONDS = 5.0  # generous: the fuzzers call 2 s a hang, but CI machines are shared


def _regression_files() -> list[Path]:
    return sorted(p for p in REGRESSIONS.glob("*/*") if p.is_file() and not p.name.startswith("."))


def test_regression_directories_name_targets():
    for directory in REGRESSIONS.iterdir():
        if directory.is_dir():
            assert directory.name in TARGETS, f"{directory} is not a fuzz target's directory"


@pytest.mark.parametrize("path", _regression_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_regression(path: Path):
    target = TARGETS[path.parent.name]
    start = time.monotonic()
    one_input(target, path.read_bytes())  # anything but an AmdgpuCliError fails the test
    elapsed = time.monotonic() - start
    assert elapsed < REGRESSION_SECONDS, f"{path.name} took {elapsed:.1f} s"


@pytest.fixture(scope="module")
def fuzz_results(tmp_path_factory):
    if FUZZ_SECONDS <= 0:
        pytest.skip("AMDGPU_FUZZ_SECONDS=0")
    pytest.importorskip("atheris")
    from concurrent.futures import ThreadPoolExecutor

    from bench.fuzz.run import fuzz_target
    from bench.fuzz.seeds import build_seeds

    out = tmp_path_factory.mktemp("fuzz")
    seeds = build_seeds(out / "seeds")

    def run(name: str):
        return fuzz_target(name, seconds=FUZZ_SECONDS, runs=None, seed=1, timeout=5, rss_mb=2048,
                           out=out, seeds=seeds[name], fresh_corpus=True)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {r.target: r for r in pool.map(run, TARGETS)}


@pytest.mark.parametrize("name", list(TARGETS))
def test_fuzz(name: str, fuzz_results):
    result = fuzz_results[name]
    tracebacks = [p.with_suffix(".txt").read_text() for p in result.crashes if p.with_suffix(".txt").exists()]
    details = "\n".join([*(str(p) for p in result.crashes + result.hangs + result.ooms), *result.other,
                         *tracebacks[:3]])
    assert result.found == 0, f"{name}: {result.found} finding(s) in {result.inputs} inputs\n{details}"
    assert result.inputs > 0, f"{name}: the fuzzer ran no inputs"


def test_file_sizes_are_checked_before_reading(tmp_path, monkeypatch):
    """Shapes read from a file header or named for `=@file` are checked against the file's size
    before anything is allocated: a tiny file claiming 400 GB is an end-of-file error (the `input`
    harness runs under a lower allocation cap, so this one runs with the real one)."""
    from amdgpu_cli.tooling.io import parse_inputs
    from amdgpu_cli.tooling.values import FunctionIOError

    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.bin").write_bytes(bytes(64))
    with pytest.raises(FunctionIOError, match="end-of-file"):
        parse_inputs(["100000000000xf32=@b.bin"])
    (tmp_path / "huge.npy").write_bytes((REGRESSIONS / "npy" / "huge-shape").read_bytes())
    with pytest.raises(FunctionIOError, match="end-of-file"):
        parse_inputs(["@huge.npy"])

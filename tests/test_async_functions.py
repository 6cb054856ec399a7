"""Coarse-fences (async) functions, as modules compiled with --iree-execution-model=async-external
export them: the tools append a wait fence (none) and a signal fence and wait on it, as IREE's
do. Judged by iree-run-module / iree-benchmark-module on the same module."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from capture_parity import capture, differences
from examples.compile import compile_model
from iree_tools import iree_compile_or_skip

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("iree-run-module", "iree-benchmark-module",
                                      "iree-profile")),
    reason="IREE 3.13.0 runtime tools must be on PATH")
ARGS = ["--function=predict", "--input=1x16xf32=1"]


@pytest.fixture(scope="module")
def async_mlp(tmp_path_factory) -> Path:
    iree_compile_or_skip()
    return compile_model(ROOT / "examples" / "models" / "mlp.mlir",
                         tmp_path_factory.mktemp("async") / "mlp_async.vmfb",
                         extra_flags=["--iree-execution-model=async-external"])


def _run(tool: str, device: str, vmfb: Path, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([tool, f"--device={device}", f"--module={vmfb}", *ARGS, *extra],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("device", ["local-task", "local-sync"])
def test_run_prints_what_iree_prints(device, async_mlp):
    iree = _run("iree-run-module", device, async_mlp)
    ours = _run("amdgpu-run", device, async_mlp)
    assert iree.returncode == ours.returncode == 0, ours.stderr
    assert ours.stdout == iree.stdout
    assert "async func @predict" in subprocess.run(
        ["iree-dump-module", str(async_mlp)], capture_output=True, text=True).stdout


def test_benchmark_rows_as_iree(async_mlp):
    rows = {}
    for tool in ("amdgpu-benchmark", "iree-benchmark-module"):
        done = _run(tool, "local-task", async_mlp, "--benchmark_format=json",
                    "--benchmark_min_time=20x")
        assert done.returncode == 0, done.stderr
        rows[tool] = json.loads(done.stdout)["benchmarks"]
    for ours, theirs in zip(rows["amdgpu-benchmark"], rows["iree-benchmark-module"]):
        assert ours.keys() == theirs.keys()
        assert (ours["name"], ours["iterations"]) == (theirs["name"], theirs["iterations"])


def test_capture_of_an_async_call_matches_iree(async_mlp, tmp_path):
    ours, theirs = tmp_path / "ours.ireeprof", tmp_path / "iree.ireeprof"
    families = "queue-events,host-execution,memory-events,command-region-events," \
               "executable-metadata"
    a = capture(["amdgpu-run"], "local-task", async_mlp, ARGS, families, ours)
    b = capture(["iree-run-module"], "local-task", async_mlp, ARGS, families, theirs)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert differences(shutil.which("iree-profile"), ours, theirs) == []

"""Several `--module`s: a library module and a main module that imports from it (`lib.scale`),
compiled separately, run and benchmarked and profiled as iree-run-module /
iree-benchmark-module do them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from capture_parity import FAMILIES, differences
from examples.compile import compile_model
from iree_tools import iree_compile_or_skip

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("iree-run-module", "iree-benchmark-module",
                                      "iree-profile")),
    reason="IREE 3.13.0 runtime tools must be on PATH")

LIBRARY = """
module @lib {
  func.func @scale(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant dense<2.0> : tensor<4xf32>
    %0 = arith.mulf %arg0, %c : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
MAIN = """
module @main {
  func.func private @lib.scale(tensor<4xf32>) -> tensor<4xf32>
  func.func @run(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @lib.scale(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = arith.addf %0, %arg0 : tensor<4xf32>
    return %1 : tensor<4xf32>
  }
}
"""
ARGS = ["--function=run", "--input=4xf32=1 2 3 4"]


@pytest.fixture(scope="module")
def modules(tmp_path_factory) -> list[Path]:
    iree_compile_or_skip()
    folder = tmp_path_factory.mktemp("modules")
    out = []
    for name, text in (("lib", LIBRARY), ("main", MAIN)):
        (folder / f"{name}.mlir").write_text(text)
        out.append(compile_model(folder / f"{name}.mlir", folder / f"{name}.vmfb"))
    return out


def _run(tool: str, device: str, paths, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([tool, f"--device={device}", *[f"--module={p}" for p in paths],
                           *ARGS, *extra], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("device", ["local-task", "local-sync"])
def test_run_with_a_library_module(device, modules):
    iree = _run("iree-run-module", device, modules)
    ours = _run("amdgpu-run", device, modules)
    assert iree.returncode == ours.returncode == 0, ours.stderr
    assert ours.stdout == iree.stdout
    assert "4xf32=3 6 9 12" in ours.stdout  # 2x + x, by hand


def test_missing_library_is_one_line(modules):
    iree = _run("iree-run-module", "local-task", modules[1:])
    ours = _run("amdgpu-run", "local-task", modules[1:])
    assert iree.returncode == ours.returncode == 1
    assert "NOT_FOUND" in ours.stderr and "'lib'" in ours.stderr
    assert len(ours.stderr.strip().splitlines()) == 1


def test_benchmark_with_a_library_module(modules):
    rows = {}
    for tool in ("amdgpu-benchmark", "iree-benchmark-module"):
        done = _run(tool, "local-task", modules, "--benchmark_format=json",
                    "--benchmark_min_time=10x")
        assert done.returncode == 0, done.stderr
        rows[tool] = [(r["name"], r["iterations"]) for r in json.loads(done.stdout)["benchmarks"]]
    assert rows["amdgpu-benchmark"] == rows["iree-benchmark-module"]


def test_capture_across_modules_matches_iree(modules, tmp_path):
    bundles = {}
    for tool in ("amdgpu-run", "iree-run-module"):
        bundles[tool] = tmp_path / f"{tool}.ireeprof"
        done = _run(tool, "local-task", modules, f"--device_profiling_mode={','.join(FAMILIES)}",
                    f"--device_profiling_output={bundles[tool]}")
        assert done.returncode == 0, done.stderr
    assert differences(shutil.which("iree-profile"), bundles["amdgpu-run"],
                       bundles["iree-run-module"]) == []

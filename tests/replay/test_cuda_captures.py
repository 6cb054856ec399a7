"""Replays IREE 3.13.0 captured on a real NVIDIA H100 with its cuda driver (tests/replay/data,
README.md there): our reader and dump read them exactly as iree-dump-replay does, and our
executor plans every record and refuses their executables (format `cuda-nvptx-fb`) on the CPU
drivers with the status iree-run-replay gives. Replaying them on a GPU needs our cuda driver,
which does not exist yet (issue 16); data/cuda_captures.txt holds the results to check then."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_dump import IREE_DUMP, assert_same, needs_iree  # noqa: E402

from amdgpu_cli.replay import executor

DATA = Path(__file__).parent / "data"
CAPTURES = sorted(DATA.glob("*_cuda.ireereplay"))


def test_captures_present():
    assert [p.name for p in CAPTURES] == [
        "conv2d_cuda.ireereplay", "dynamic_shapes_cuda.ireereplay", "matmul_cuda.ireereplay",
        "mlp_cuda.ireereplay", "softmax_cuda.ireereplay"]


@needs_iree
@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_cuda_capture_dumps_as_iree(path):
    """Acceptance 2: a capture made by IREE on a real NVIDIA GPU dumps identically."""
    assert IREE_DUMP
    status, _ = assert_same(path)
    assert status == 0


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_cuda_capture_plans_and_needs_a_cuda_device(path):
    """Every record of the capture decodes; on local-sync its CUDA executable finds no loader,
    which iree-run-replay reports as NOT_FOUND too."""
    from amdgpu_cli.hal.registry import default_registry
    from amdgpu_cli.errors import AmdgpuCliError

    plan = executor.plan(path)
    devices = default_registry().create_devices(["local-sync"])
    try:
        with pytest.raises(AmdgpuCliError) as failure:
            executor.execute(plan, devices)
        assert failure.value.status == "NOT_FOUND"
        assert "cuda-nvptx-fb" in str(failure.value)
    finally:
        for d in devices:
            d.close()


@pytest.mark.skipif(not shutil.which("iree-run-replay"), reason="iree-run-replay not on PATH")
@pytest.mark.parametrize("path", CAPTURES[:1], ids=lambda p: p.stem)
def test_iree_refuses_cuda_capture_on_cpu_the_same_way(path):
    import subprocess

    done = subprocess.run(["iree-run-replay", "--device=local-sync", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "NOT_FOUND" in done.stderr and "cuda-nvptx-fb" in done.stderr

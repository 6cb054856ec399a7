"""The cuda driver on a real NVIDIA GPU: `amdgpu-run --device=cuda` prints what IREE's
`iree-run-module --device=cuda` prints, case by case (scripts/cuda_gpu_check.py's cases).

Marked `gpu`; skipped (with the reason) unless libcuda loads and reports a device. Modules come
from `CUDA_TEST_MODULES` (a directory made by `scripts/cuda_gpu_check.py --compile DIR`: the
GPU machine has no iree-compile) or are compiled here for cuda-sm_80. IREE's tool is
`IREE_RUN_MODULE` or the iree-run-module on PATH.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.gpu


def _check_module():
    spec = importlib.util.spec_from_file_location("cuda_gpu_check",
                                                  REPO / "scripts/cuda_gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _gpu_reason() -> str | None:
    """None when a CUDA device is usable, else why not (only "unavailable" errors skip)."""
    from amdgpu_cli.drivers.cuda import cuda_ffi

    try:
        libcuda = cuda_ffi.load()
    except cuda_ffi.LibcudaNotFound as error:
        return f"no libcuda: {error}"
    try:
        libcuda.call("cuInit", 0)
    except cuda_ffi.CudaError as error:
        if error.error_name in ("CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_NOT_INITIALIZED"):
            return f"libcuda has no device: {error}"
        raise
    if libcuda.out("int", "cuDeviceGetCount") == 0:
        return "libcuda reports 0 devices"
    return None


@pytest.fixture(scope="module")
def cuda_modules(tmp_path_factory) -> Path:
    reason = _gpu_reason()
    if reason:
        print(f"skipping cuda GPU tests: {reason}")
        pytest.skip(reason)
    given = os.environ.get("CUDA_TEST_MODULES")
    if given:
        return Path(given)
    if not (os.environ.get("IREE_COMPILE") or shutil.which("iree-compile")):
        pytest.skip("no CUDA_TEST_MODULES and no iree-compile to make the modules")
    out = tmp_path_factory.mktemp("cuda-modules")
    _check_module().compile_modules(out)
    return out


def _cases():
    given = os.environ.get("CUDA_TEST_MODULES")
    if given and (Path(given) / "manifest.json").is_file():
        return [c["id"] for c in json.loads((Path(given) / "manifest.json").read_text())["cases"]]
    return ["mlp:predict:0", "matmul:", "softmax:", "dynamic_shapes:", "conv2d:", "layernorm:",
            "reductions:", "broadcast:", "i8_ops:"]


@pytest.mark.parametrize("case", _cases())
def test_cuda_matches_iree(cuda_modules, case):
    check = _check_module()
    if not (os.environ.get("IREE_RUN_MODULE") or shutil.which("iree-run-module")):
        pytest.skip("no iree-run-module (set IREE_RUN_MODULE)")
    rows = check.compare(cuda_modules, only=case)
    assert rows, f"no case matches {case}"
    for row in rows:
        assert row["ours"]["returncode"] == row["iree"]["returncode"], (
            row["id"], row["ours"]["stderr"], row["iree"]["stderr"])
        assert row["ours"]["stdout"] == row["iree"]["stdout"], (row["id"], row["difference"])


def test_cuda_list_devices_matches_iree(cuda_modules):
    import subprocess
    import sys

    if not (os.environ.get("IREE_RUN_MODULE") or shutil.which("iree-run-module")):
        pytest.skip("no iree-run-module (set IREE_RUN_MODULE)")
    iree = _check_module().iree_run_module()
    entry = "import sys; from amdgpu_cli.cli.main import run_main; run_main(sys.argv[1:])"
    for flag in ("--list_devices=cuda", "--dump_devices=cuda"):
        theirs = subprocess.run([*iree, flag], capture_output=True, text=True, timeout=120)
        ours = subprocess.run([sys.executable, "-c", entry, flag], capture_output=True,
                              text=True, timeout=120)
        assert (ours.returncode, ours.stdout) == (theirs.returncode, theirs.stdout), flag

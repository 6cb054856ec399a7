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


# Where IREE's cuda driver fails and we deliberately do not (seen on an H100 with 3.13.0).
KNOWN_IREE_FAILURES = {
    "dynamic_shapes:scale_rows:2": "a 0-row input: IREE launches an empty grid and fails with "
                                   "CUDA_ERROR_INVALID_VALUE; we launch nothing and print the "
                                   "empty result, as iree-run-module does on the CPU drivers",
}


@pytest.mark.parametrize("case", _cases())
def test_cuda_matches_iree(cuda_modules, case):
    check = _check_module()
    if not (os.environ.get("IREE_RUN_MODULE") or shutil.which("iree-run-module")):
        pytest.skip("no iree-run-module (set IREE_RUN_MODULE)")
    rows = check.compare(cuda_modules, only=case)
    assert rows, f"no case matches {case}"
    for row in rows:
        if row["id"] in KNOWN_IREE_FAILURES:
            assert row["ours"]["returncode"] == 0, row["ours"]["stderr"]
            assert "CUDA_ERROR_INVALID_VALUE" in row["iree"]["stderr"]
            continue
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


def _iree_tool(name: str) -> str:
    """An IREE tool beside IREE_RUN_MODULE (the unpacked wheel), else on PATH."""
    base = os.environ.get("IREE_RUN_MODULE")
    if base and (Path(base).parent / name).is_file():
        return str(Path(base).parent / name)
    found = shutil.which(name)
    if not found:
        pytest.skip(f"{name} not found")
    return found


CUDA_CAPTURES = sorted((REPO / "tests/replay/data").glob("*_cuda.ireereplay"))


@pytest.mark.parametrize("path", CUDA_CAPTURES, ids=lambda p: p.stem)
def test_iree_cuda_captures_replay_on_our_driver(cuda_modules, path):
    """Replays IREE made on an H100 run on our cuda driver, as they run in iree-run-replay."""
    import subprocess

    from amdgpu_cli.hal.registry import default_registry
    from amdgpu_cli.replay import executor

    assert subprocess.run([_iree_tool("iree-run-replay"), "--device=cuda", str(path)],
                          capture_output=True, timeout=120).returncode == 0
    devices = default_registry().create_devices(["cuda"])
    try:
        executor.execute(executor.plan(path), devices)
    finally:
        for device in devices:
            device.close()


def test_capture_on_cuda_matches_iree(cuda_modules, tmp_path):
    """Our capture of a call on cuda: iree-dump-replay shows IREE's own capture's record
    sequence (kind, operation, payload type, status), iree-run-replay runs it, and its results
    sidecar verifies."""
    import subprocess
    import sys

    args = [f"--module={cuda_modules / 'mlp.vmfb'}", "--function=predict",
            "--input=1x16xf32=1", "--device=cuda"]
    ours, theirs = tmp_path / "ours.ireereplay", tmp_path / "iree.ireereplay"
    entry = "import sys; from amdgpu_cli.cli.{0} import {1}; {1}(sys.argv[1:])"
    run = [sys.executable, "-c", entry.format("main", "run_main")]
    replay = [sys.executable, "-c", entry.format("replay_entry", "main")]
    done = subprocess.run([*run, *args, f"--device_replay_output={ours}",
                           "--device_replay_results"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([_iree_tool("iree-run-module"), *args,
                           f"--device_replay_output={theirs}"], capture_output=True, timeout=120)
    assert done.returncode == 0

    def signature(path):
        dump = subprocess.run([_iree_tool("iree-dump-replay"), "--format=jsonl", str(path)],
                              capture_output=True, text=True, timeout=120)
        assert dump.returncode == 0, dump.stderr
        rows = [json.loads(line) for line in dump.stdout.splitlines()[2:]]
        return [(r["kind"], r["operation"], r["payload_type"], r["status"]) for r in rows]

    assert signature(ours) == signature(theirs)
    assert subprocess.run([_iree_tool("iree-run-replay"), "--device=cuda", str(ours)],
                          capture_output=True, timeout=120).returncode == 0
    done = subprocess.run([*replay, "run", "--device=cuda", "--verify", str(ours)],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (
        0, "[SUCCESS] all function outputs matched their expected values.\n"), done.stderr

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


# -- profiles on cuda -------------------------------------------------------------------------------

def _entry(tool: str) -> list[str]:
    import sys

    mains = {"run": "main:run_main", "benchmark": "main:benchmark_main",
             "profile": "main:profile_main"}
    module, function = mains[tool].split(":")
    return [sys.executable, "-c", f"import sys; from amdgpu_cli.cli.{module} import {function}; "
            f"{function}(sys.argv[1:])"]


def _manifest(cuda_modules: Path) -> dict:
    return json.loads((cuda_modules / "manifest.json").read_text())


def _jsonl(command: list[str]) -> list[dict]:
    import subprocess

    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (command, done.stderr)
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.parametrize("case", _cases())
def test_profile_every_dispatch_timed(cuda_modules, case, tmp_path):
    """`--device_profiling_mode=queue-events,dispatch-events` on cuda: iree-profile and ours
    read the bundle with the same dispatch rows, and every dispatch has a device duration."""
    import subprocess

    found = [c for c in _manifest(cuda_modules)["cases"] if c["id"] == case]
    if not found:
        pytest.skip(f"{case} not in the manifest")
    out = tmp_path / "cuda.ireeprof"
    done = subprocess.run([*_entry("run"), "--device=cuda",
                           f"--module={cuda_modules / found[0]['module']}", *found[0]["args"],
                           "--device_profiling_mode=queue-events,dispatch-events",
                           f"--device_profiling_output={out}"],
                          capture_output=True, text=True, timeout=300)
    if case in KNOWN_IREE_FAILURES:
        assert done.returncode == 0, done.stderr
    assert done.returncode == 0, done.stderr
    iree_profile = _iree_tool("iree-profile")
    for extra in ([], ["--dispatch_events"]):
        theirs = _jsonl([iree_profile, "dispatch", "--format=jsonl", *extra, str(out)])
        ours = _jsonl([*_entry("profile"), "dispatch", "--format=jsonl", *extra, str(out)])
        assert ours == theirs
    events = [r for r in theirs if r["type"] == "dispatch_event"]
    for row in events:
        assert row["valid"] and row["clock_fit_available"] and row["duration_ticks"] > 0, row
    queue = _jsonl([iree_profile, "queue", "--format=jsonl", str(out)])
    executes = [r for r in queue if r.get("type") == "queue_event" and r["op"] == "execute"]
    assert len({r["submission_id"] for r in events}) <= len(executes)


def _kernel_time_with_cuda_events(vmfb: Path, dispatches: list[dict], repeats: int = 50
                                  ) -> float:
    """Seconds per run of `dispatches` (profile rows: key, workgroup_count, workgroup_size),
    each kernel launched `repeats` times back to back between one CUDA event pair, on buffers
    of 8 MiB per binding, straight through libcuda (not our driver): the kernels' PTX comes
    from the module's CDA1 executable."""
    from amdgpu_cli.drivers.cuda import cuda_ffi
    from amdgpu_cli.formats.cuda_executable import parse_cda1
    from amdgpu_cli.formats.vmfb import load_vmfb

    definitions = [parse_cda1(bytes(segment.data)) for segment in load_vmfb(vmfb).rodata
                   if bytes(segment.data[:4]) == b"CDA1"]
    lib = cuda_ffi.load()
    ffi = lib.ffi
    lib.call("cuInit", 0)
    device = lib.out("CUdevice", "cuDeviceGet", 0)
    context = lib.out("CUcontext", "cuDevicePrimaryCtxRetain", device)
    lib.call("cuCtxSetCurrent", context)
    stream = lib.out("CUstream", "cuStreamCreate", 1)
    start, end = (lib.out("CUevent", "cuEventCreate", 0) for _ in range(2))
    total = 0.0
    for row in dispatches:
        export, ptx = next((e, d.modules[e.module_ordinal]) for d in definitions
                           for e in d.exports if e.name == row["key"])
        handle = ffi.new("CUmodule*")
        lib.call("cuModuleLoadDataEx", handle, ffi.new("char[]", bytes(ptx) + b"\0"), 0,
                 ffi.NULL, ffi.NULL)
        function = lib.out("CUfunction", "cuModuleGetFunction", handle[0], export.name.encode())
        lib.call("cuFuncSetAttribute", function, 8, export.block_shared_memory_size)
        pointers = [lib.out("CUdeviceptr", "cuMemAlloc_v2", 8 << 20)
                    for _ in range(export.binding_count)]
        for pointer in pointers:
            lib.call("cuMemsetD8Async", pointer, 0, 8 << 20, stream)
        slots = ffi.new("uint64_t[]", pointers + [0] * export.constant_count or [0])
        params = ffi.new("void*[]", [ffi.cast("void*", slots + i)
                                     for i in range(len(pointers) + export.constant_count)] or 1)
        grid, block = row["workgroup_count"], export.block_dims
        launch = lambda: lib.call("cuLaunchKernel", function, *grid, *block,  # noqa: E731
                                  export.block_shared_memory_size, stream, params, ffi.NULL)
        launch()  # warm
        lib.call("cuEventRecord", start, stream)
        for _ in range(repeats):
            launch()
        lib.call("cuEventRecord", end, stream)
        lib.call("cuEventSynchronize", end)
        elapsed = ffi.new("float*")
        lib.call("cuEventElapsedTime", elapsed, start, end)
        total += elapsed[0] / 1000 / repeats
        for pointer in pointers:
            lib.call("cuMemFree_v2", pointer)
        lib.call("cuModuleUnload", handle[0])
    return total


def test_profile_matmul_dispatch_time_matches_cuda_events(cuda_modules, tmp_path):
    """The 1024^3 f32 matmul under amdgpu-benchmark with dispatch-events: the mean per-iteration
    sum of its dispatch durations is within 10% of the same kernels timed with CUDA events
    directly (back-to-back launches, no driver of ours)."""
    import subprocess

    extras = _manifest(cuda_modules).get("extras", {})
    if "matmul1024" not in extras:
        pytest.skip("no matmul1024 in the manifest")
    file, args = extras["matmul1024"]
    vmfb = cuda_modules / file
    out = tmp_path / "matmul.ireeprof"
    done = subprocess.run([*_entry("benchmark"), "--device=cuda", f"--module={vmfb}", *args,
                           "--benchmark_min_time=30x", "--device_profiling_mode=dispatch-events",
                           f"--device_profiling_output={out}"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [r for r in _jsonl([_iree_tool("iree-profile"), "dispatch", "--format=jsonl",
                               "--dispatch_events", str(out)]) if r["type"] == "dispatch_event"]
    assert rows and all(r["valid"] and r["duration_ns"] > 0 for r in rows)
    submissions = sorted({r["submission_id"] for r in rows})
    per_iteration = [sum(r["duration_ns"] for r in rows if r["submission_id"] == s)
                     for s in submissions[len(submissions) // 2:]]  # warm half
    ours = sum(per_iteration) / len(per_iteration) / 1e9
    first = [r for r in rows if r["submission_id"] == submissions[-1]]
    reference = _kernel_time_with_cuda_events(vmfb, first)
    print(f"matmul1024 dispatch sum: profile {ours * 1e6:.1f} us, CUDA events "
          f"{reference * 1e6:.1f} us, ratio {ours / reference:.3f}")
    assert abs(ours / reference - 1) <= 0.10


# -- bad input on a GPU machine ------------------------------------------------------------------

def _one_line_failure(command: list[str], env=None, *, words: tuple[str, ...]) -> None:
    import subprocess

    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, (command, done.returncode, done.stderr)
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_bad_input_on_a_gpu_machine(cuda_modules, tmp_path):
    """No libcuda, a CUDA-less machine (no visible device), a bad index, a bad UUID, PTX that
    fails to JIT, an allocation larger than the GPU: one line, exit 1, no traceback."""
    from amdgpu_cli.drivers.cuda import cuda_ffi

    mlp = cuda_modules / "mlp.vmfb"
    run = [*_entry("run"), f"--module={mlp}", "--function=predict", "--input=1x16xf32=1"]
    env = dict(os.environ, **{cuda_ffi.SKIP_SYSTEM_ENV: "1"})
    env.pop(cuda_ffi.PATH_ENV, None)
    env["LD_LIBRARY_PATH"] = ""
    _one_line_failure([*run, "--device=cuda"], env, words=("UNAVAILABLE", "libcuda"))
    hidden = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    _one_line_failure([*run, "--device=cuda"], hidden, words=("CUDA",))
    _one_line_failure([*run, "--device=cuda://7"], words=("NOT_FOUND", "device 7 not found"))
    _one_line_failure([*run, "--device=cuda://GPU-ffffffff-ffff-ffff-ffff-ffffffffffff"],
                      words=("NOT_FOUND", "GPU-ffffffff-ffff-ffff-ffff-ffffffffffff"))
    data = mlp.read_bytes()
    assert b".target sm_80" in data
    broken = tmp_path / "mlp_sm99.vmfb"
    broken.write_bytes(data.replace(b".target sm_80", b".target sm_99"))
    _one_line_failure([*_entry("run"), "--device=cuda", f"--module={broken}",
                       "--function=predict", "--input=1x16xf32=1"],
                      words=("cuModuleLoadDataEx",))
    extras = _manifest(cuda_modules).get("extras", {})
    if "alloc_n" in extras:
        _one_line_failure([*_entry("run"), "--device=cuda",
                           f"--module={cuda_modules / extras['alloc_n'][0]}", "--function=zeros",
                           "--input=100000000000000"], words=("RESOURCE_EXHAUSTED",))


@pytest.mark.parametrize("name", ["mlp", "ex_attention", "matmul1024"])
def test_python_api_arrays_equal_iree(cuda_modules, name, tmp_path):
    """`amdgpu_cli.load_module(..., device="cuda")` returns the arrays iree-run-module
    --device=cuda writes with --output (same GPU), element for element."""
    import subprocess

    import numpy as np

    import amdgpu_cli
    from amdgpu_cli.tooling.io import parse_input

    manifest = _manifest(cuda_modules)
    modules = dict(manifest.get("extras", {}))
    for case in manifest["cases"]:
        modules.setdefault(Path(case["module"]).stem, [case["module"], case["args"]])
    if name not in modules:
        pytest.skip(f"{name} not in the manifest")
    file, args = modules[name]
    function = next(a.split("=", 1)[1] for a in args if a.startswith("--function="))
    inputs = [a.split("=", 1)[1] for a in args if a.startswith("--input=")]
    out = tmp_path / "iree.npy"
    done = subprocess.run([_iree_tool("iree-run-module"), "--device=cuda",
                           f"--module={cuda_modules / file}", *args, f"--output=@{out}"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    module = amdgpu_cli.load_module(str(cuda_modules / file), device="cuda")
    try:
        arrays = [parse_input(text).array for text in inputs]
        result = getattr(module, function)(*arrays)
    finally:
        module.close()
    expected = np.load(out)
    assert result.dtype == expected.dtype and np.array_equal(result, expected)

"""The cuda driver without a GPU: its pure parts (URIs, the --dump_devices text, kernel parameter
packing, heaps, library search, status mapping), the missing-library one-line error through the
CLI, and the whole driver against `mockcuda`, a libcuda stand-in built here from the C source
below (host memory for every heap, copies and fills done on the host, kernel launches logged, not
run). The mock checks what it can of each call (context current, PTX NUL-terminated and holding
the kernel, parameters pointing into live allocations); kernels compute nothing, so results are
not compared here: tests/drivers/test_cuda_gpu.py and scripts/cuda_gpu_check.py do that on a GPU.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from amdgpu_cli.drivers.cuda import cuda_ffi
from amdgpu_cli.drivers.cuda.allocator import HEAP_DEVICE, HEAP_HOST, HEAP_MANAGED, heap_for
from amdgpu_cli.drivers.cuda.command_buffer import fill_call, pack_kernel_params, param_offsets
from amdgpu_cli.drivers.cuda.driver import (
    DUMP_ATTRIBUTES,
    format_device_dump,
    format_uuid,
    parse_uuid,
    select_device,
)
from amdgpu_cli.hal.enums import BufferUsage, HalError, MemoryType
from tests.drivers.mockcuda import build_mockcuda

REPO = Path(__file__).resolve().parents[2]
UUIDS = [bytes(range(16)), bytes(range(16, 32)), bytes([0xAB] * 16)]


# -- URIs ---------------------------------------------------------------------------------------

def test_uuid_format_matches_nvidia_smi():
    assert format_uuid(bytes(range(16))) == "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f"
    assert format_uuid(bytes([0xAB] * 16)) == "GPU-abababab-abab-abab-abab-abababababab"
    assert parse_uuid("00010203-0405-0607-0809-0a0b0c0d0e0f") == bytes(range(16))
    assert parse_uuid("000102030405060708090A0B0C0D0E0F") == bytes(range(16))


@pytest.mark.parametrize("path, expected", [
    ("", 0), ("0", 0), ("1", 1), ("2", 2), ("+1", 1),
    ("GPU-10111213-1415-1617-1819-1a1b1c1d1e1f", 1),
    ("GPU-abababab-abab-abab-abab-abababababab", 2),
])
def test_select_device(path, expected):
    assert select_device(path, UUIDS) == expected


def test_select_default_index_and_errors():
    assert select_device("", UUIDS, default_index=2) == 2
    cases = [
        ("", [], 0, "UNAVAILABLE", "no compatible CUDA devices were found"),
        ("", UUIDS, 3, "NOT_FOUND", "default device 3 not found (of 3 enumerated)"),
        ("3", UUIDS, 0, "NOT_FOUND", "device 3 not found (of 3 enumerated)"),
        ("-1", UUIDS, 0, "NOT_FOUND", "device -1 not found (of 3 enumerated)"),
        ("GPU-ffffffff-abab-abab-abab-abababababab", UUIDS, 0, "NOT_FOUND",
         "CUDA device with UUID GPU-ffffffff-abab-abab-abab-abababababab not found"),
        ("GPU-xyz", UUIDS, 0, "INVALID_ARGUMENT", "invalid GPU UUID: 'xyz'"),
        ("GPU-0001", UUIDS, 0, "INVALID_ARGUMENT", "invalid GPU UUID: '0001'"),
        ("nvidia0", UUIDS, 0, "UNIMPLEMENTED", "unsupported device path"),
    ]
    for path, uuids, default, status, message in cases:
        with pytest.raises(HalError) as info:
            select_device(path, uuids, default)
        assert (info.value.status, str(info.value)) == (status, message), path


def test_device_uri_forms_split_to_paths():
    from amdgpu_cli.hal.registry import DeviceUri

    for uri, path in (("cuda", ""), ("cuda://", ""), ("cuda:1", "1"), ("cuda://1", "1"),
                      ("cuda://GPU-00010203-0405-0607-0809-0a0b0c0d0e0f",
                       "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f")):
        parsed = DeviceUri.parse(uri)
        assert (parsed.driver, parsed.path) == ("cuda", path)


# -- --dump_devices -----------------------------------------------------------------------------

H100 = {
    "COMPUTE_CAPABILITY_MAJOR": 9, "COMPUTE_CAPABILITY_MINOR": 0,
    "MAX_BLOCK_DIM_X": 1024, "MAX_BLOCK_DIM_Y": 1024, "MAX_BLOCK_DIM_Z": 64,
    "MAX_GRID_DIM_X": 2147483647, "MAX_GRID_DIM_Y": 65535, "MAX_GRID_DIM_Z": 65535,
    "MAX_THREADS_PER_BLOCK": 1024, "MAX_REGISTERS_PER_BLOCK": 65536,
    "MAX_SHARED_MEMORY_PER_BLOCK": 49152,
    "MAX_THREADS_PER_MULTIPROCESSOR": 2048, "MAX_BLOCKS_PER_MULTIPROCESSOR": 32,
    "MAX_REGISTERS_PER_MULTIPROCESSOR": 65536, "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": 233472,
    "INTEGRATED": 0, "UNIFIED_ADDRESSING": 1, "MANAGED_MEMORY": 1, "CAN_MAP_HOST_MEMORY": 1,
    "PAGEABLE_MEMORY_ACCESS": 0, "CONCURRENT_MANAGED_ACCESS": 1, "MEMORY_POOLS_SUPPORTED": 1,
    "L2_CACHE_SIZE": 52428800, "CAN_USE_64_BIT_STREAM_MEM_OPS": 1,
    "TIMELINE_SEMAPHORE_INTEROP_SUPPORTED": 1, "MEM_SYNC_DOMAIN_COUNT": 4,
    "MULTIPROCESSOR_COUNT": 132, "CLOCK_RATE": 1980000, "WARP_SIZE": 32,
    "KERNEL_EXEC_TIMEOUT": 0,
}

H100_DUMP = """
- gpu-compute-capability: 9.0
- driver-max-cuda-version: 13.0

- launch-max-block-dims: (1024, 1024, 64)
- launch-max-grid-dims: (2147483647, 65535, 65535)

- block-max-thread-count: 1024
- block-max-32-bit-register-count: 65536
- block-max-shared-memory: 49152 bytes

- multiprocessor-max-thread-count: 2048
- multiprocessor-max-block-count: 32
- multiprocessor-max-32-bit-register-count: 65536
- multiprocessor-max-shared-memory: 233472 bytes

- memory-is-integrated-memory: 0
- memory-has-unified-address-space: 1
- memory-supports-managed-memory: 1
- memory-can-map-host-memory-to-device: 1
- memory-supports-pageable-memory-access-from-device: 0
- memory-supports-concurrent-managed-access: 1
- memory-supports-memory-pools: 1
- memory-l2-cache-size: 52428800 bytes

- sync-supports-64-bit-stream-mem-ops: 1
- sync-supports-timeline-semaphore-interop: 1
- sync-mem-domain-count: 4

- gpu-multiprocessor-count: 132
- gpu-clock-rate: 1980000 kHz
- gpu-warp-size: 32
- kernel-has-execution-timeout: 0
"""


def test_dump_text_as_iree_prints_it():
    assert set(DUMP_ATTRIBUTES) == set(H100)
    assert format_device_dump(H100, 13000) == H100_DUMP
    assert "- driver-max-cuda-version: 12.4\n" in format_device_dump(H100, 12040)


def test_dump_attribute_numbers_are_cuda_h_values():
    # A few spot checks against cuda.h (CUDA 12.x CUdevice_attribute).
    a = cuda_ffi.ATTRIBUTES
    assert (a["MAX_BLOCK_DIM_X"], a["WARP_SIZE"], a["L2_CACHE_SIZE"]) == (2, 10, 38)
    assert (a["COMPUTE_CAPABILITY_MAJOR"], a["COMPUTE_CAPABILITY_MINOR"]) == (75, 76)
    assert (a["MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"], a["MEMORY_POOLS_SUPPORTED"]) == (97, 115)
    assert (a["CAN_USE_64_BIT_STREAM_MEM_OPS"], a["MEM_SYNC_DOMAIN_COUNT"]) == (122, 126)


# -- kernel parameters --------------------------------------------------------------------------

def test_params_pointers_then_constants_in_8_byte_slots():
    constants = struct.pack("<3I", 1, 0xFFFFFFFF, 0x80000000)
    payload = pack_kernel_params([0x1122334455667788, 0x10], constants, 3)
    assert payload == (struct.pack("<Q", 0x1122334455667788) + struct.pack("<Q", 0x10)
                       + b"\x01\0\0\0" + b"\0" * 4 + b"\xff" * 4 + b"\0" * 4
                       + b"\0\0\0\x80" + b"\0" * 4)
    assert param_offsets(5) == [0, 8, 16, 24, 32]


def test_params_counts_come_from_the_export():
    # Extra constants beyond the export's count are not passed; too few is an error.
    assert pack_kernel_params([], struct.pack("<2I", 7, 9), 1) == struct.pack("<Q", 7)
    assert pack_kernel_params([], b"", 0) == b""
    with pytest.raises(HalError, match="provides 1 constants but the kernel expects 2"):
        pack_kernel_params([0], struct.pack("<I", 1), 2)


def test_fill_functions_by_pattern_length():
    assert fill_call(b"\x7f") == ("cuMemsetD8Async", 0x7F)
    assert fill_call(b"\x01\x02") == ("cuMemsetD16Async", 0x0201)
    assert fill_call(b"\x01\x02\x03\x04") == ("cuMemsetD32Async", 0x04030201)
    with pytest.raises(HalError) as info:
        fill_call(b"\0" * 8)
    assert info.value.status == "INTERNAL"


def test_heaps():
    device_local, host_local = int(MemoryType.DEVICE_LOCAL), int(MemoryType.HOST_LOCAL)
    visible = int(MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE)
    assert heap_for(device_local, int(BufferUsage.DEFAULT)) == HEAP_DEVICE
    assert heap_for(device_local, int(BufferUsage.MAPPING_SCOPED)) == HEAP_MANAGED
    assert heap_for(visible, 0) == HEAP_MANAGED
    assert heap_for(visible, 0, managed=False) == HEAP_HOST
    assert heap_for(host_local | int(MemoryType.DEVICE_VISIBLE), 0) == HEAP_HOST


# -- library loading and errors -----------------------------------------------------------------

def test_versioned_symbols_and_required_table():
    for name in ("cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
                 "cuStreamDestroy_v2", "cuDevicePrimaryCtxRelease_v2",
                 "cuMemHostGetDevicePointer_v2", "cuEventDestroy_v2", "cuLaunchKernel"):
        assert name in cuda_ffi.REQUIRED
    assert "cuMemAlloc" not in cuda_ffi.REQUIRED and "cuStreamDestroy" not in cuda_ffi.REQUIRED


def test_candidates_order():
    env = {cuda_ffi.PATH_ENV: "/opt/cuda/lib"}
    assert cuda_ffi.candidates(["/x/libcuda.so.535", "/dir"], env) == [
        "/x/libcuda.so.535", "/dir/libcuda.so.1", "/dir/libcuda.so",
        "/opt/cuda/lib/libcuda.so.1", "/opt/cuda/lib/libcuda.so", "libcuda.so.1", "libcuda.so"]
    assert cuda_ffi.candidates([], {cuda_ffi.SKIP_SYSTEM_ENV: "1"}) == []


def test_missing_library_is_one_unavailable_line(tmp_path):
    env = {cuda_ffi.SKIP_SYSTEM_ENV: "1", cuda_ffi.PATH_ENV: str(tmp_path)}
    with pytest.raises(cuda_ffi.LibcudaNotFound) as info:
        cuda_ffi.load([], env)
    error = info.value
    assert error.status == "UNAVAILABLE"
    text = error.one_line()
    assert text.startswith("UNAVAILABLE; CUDA driver library 'libcuda.so'/'nvcuda.dll' not "
                           "available; please ensure installed and in dynamic library search "
                           "path: tried ")
    assert f"{tmp_path}/libcuda.so.1" in text and "skipped" in text and "\n" not in text


def test_status_mapping():
    s = cuda_ffi.cuda_status
    assert s("CUDA_ERROR_OUT_OF_MEMORY") == "RESOURCE_EXHAUSTED"
    assert s("CUDA_ERROR_INVALID_PTX") == "FAILED_PRECONDITION"
    assert s("CUDA_ERROR_ILLEGAL_ADDRESS") == "ABORTED"
    assert s("CUDA_ERROR_INVALID_CONTEXT") == "INTERNAL"
    assert s("CUDA_ERROR_UNKNOWN") == "UNKNOWN"
    error = cuda_ffi.CudaError("cuInit", 100, "CUDA_ERROR_NO_DEVICE",
                               "no CUDA-capable device is detected")
    assert error.one_line() == ("FAILED_PRECONDITION; CUDA error 'CUDA_ERROR_NO_DEVICE' (100): "
                                "no CUDA-capable device is detected; cuInit")


def _cli(*args, env=None) -> subprocess.CompletedProcess:
    entry = "import sys; from amdgpu_cli.cli.main import run_main; run_main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", entry, *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=env)


def _no_libcuda_env() -> dict:
    env = dict(os.environ)
    env[cuda_ffi.SKIP_SYSTEM_ENV] = "1"
    env.pop(cuda_ffi.PATH_ENV, None)
    return env


@pytest.fixture(scope="module")
def mlp_cuda(tmp_path_factory) -> Path:
    """examples/models/mlp.mlir compiled for cuda sm_80 (the precompiled one when
    CUDA_TEST_MODULES names a directory holding it)."""
    from examples.compile import CompileError, compile_model

    given = os.environ.get("CUDA_TEST_MODULES")
    if given and (Path(given) / "mlp.vmfb").is_file():
        return Path(given) / "mlp.vmfb"
    out = tmp_path_factory.mktemp("cuda") / "mlp.vmfb"
    try:
        return compile_model(REPO / "examples/models/mlp.mlir", out, "cuda-sm_80")
    except CompileError as error:
        pytest.skip(f"cannot compile for cuda here: {error}")


def test_run_without_libcuda_is_one_line_exit_1(mlp_cuda):
    result = _cli("--device=cuda", f"--module={mlp_cuda}", "--function=predict",
                  "--input=1x64xf32=1", env=_no_libcuda_env())
    assert result.returncode == 1, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "UNAVAILABLE" in lines[0] and "libcuda" in lines[0]


def test_list_drivers_names_cuda_and_list_devices_skips_it():
    env = _no_libcuda_env()
    drivers = _cli("--list_drivers", env=env)
    assert drivers.returncode == 0
    assert "            cuda: NVIDIA CUDA HAL driver (via dylib)\n" in drivers.stdout
    every = _cli("--list_devices", env=env)
    assert every.returncode == 0 and "cuda://" not in every.stdout
    named = _cli("--list_devices=cuda", env=env)
    assert named.returncode == 1 and named.stdout == ""
    assert "UNAVAILABLE" in named.stderr


@pytest.mark.parametrize("families, message", [
    ("host-execution", "CUDA profiling does not produce host-execution events"),
    ("command-region-events", "unsupported CUDA profiling data families: command-region-events"),
    ("device-metrics", "unsupported CUDA profiling data families: device-metrics"),
])
def test_profiling_families_cuda_cannot_record(families, message):
    from amdgpu_cli.drivers.cuda.profiling import check
    from amdgpu_cli.hal.profiling import ProfilingOptions, parse_families

    with pytest.raises(HalError) as info:
        check(ProfilingOptions(parse_families(f"queue-events,{families}")))
    assert info.value.status == "UNIMPLEMENTED" and str(info.value).startswith(message)
    check(ProfilingOptions(parse_families(
        "queue-events,dispatch-events,device-queue-events,executable-metadata,memory-events")))


# -- the whole driver against mockcuda ------------------------------------------------------------



@pytest.fixture(scope="module")
def mockcuda(tmp_path_factory) -> Path:
    """A freshly built mock libcuda (skips when there is no C compiler)."""
    return build_mockcuda(tmp_path_factory.mktemp("mockcuda"))


@pytest.fixture
def mock_env(mockcuda, tmp_path):
    env = _no_libcuda_env()
    env.update({cuda_ffi.PATH_ENV: str(mockcuda), "MOCKCUDA_LOG": str(tmp_path / "mock.log"),
                "MOCKCUDA_DEVICES": "2"})
    return env


def _mock_log(env) -> list[str]:
    path = Path(env["MOCKCUDA_LOG"])
    return path.read_text().splitlines() if path.exists() else []


def test_mock_list_and_dump_devices(mock_env):
    listed = _cli("--list_devices=cuda", env=mock_env)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout == ("cuda://GPU-00010203-0405-0607-0809-0a0b0c0d0e0f\n"
                             "cuda://GPU-10111213-1415-1617-1819-1a1b1c1d1e1f\n")
    dumped = _cli("--dump_devices=cuda", env=mock_env)
    assert dumped.returncode == 0, dumped.stderr
    assert "# --device=cuda://GPU-10111213-1415-1617-1819-1a1b1c1d1e1f\n#   Mock GPU 1\n" \
        in dumped.stdout
    assert dumped.stdout.count("- gpu-compute-capability: 9.0\n") == 2


def test_mock_runs_a_cuda_module_end_to_end(mock_env, mlp_cuda):
    for device in ("cuda", "cuda://1", "cuda://GPU-10111213-1415-1617-1819-1a1b1c1d1e1f"):
        Path(mock_env["MOCKCUDA_LOG"]).unlink(missing_ok=True)
        result = _cli(f"--device={device}", f"--module={mlp_cuda}", "--function=predict",
                      "--input=1x16xf32=1", env=mock_env)
        assert result.returncode == 0, result.stderr
        # Kernels do not run on the mock: the result buffer comes back as the mock left fresh
        # memory (0xCD bytes: -4.31602E+08 as f32). queue_alloca's memory is stream-ordered
        # and, as in IREE, not zeroed.
        assert result.stdout == ("EXEC @predict\nresult[0]: hal.buffer_view\n1x8xf32=["
                                 + " ".join(["-4.31602E+08"] * 8) + "]\n")
        log = _mock_log(mock_env)
        assert "alloc-async 64" in log and "free-async" in log
        launches = [line for line in log if line.startswith("launch ")]
        assert [line.split()[1] for line in launches] == [
            "predict_dispatch_0_matmul_1x32x16_f32", "predict_dispatch_1_matmul_1x8x32_f32"]
        assert all(" block 32 1 1 " in line and "BAD" not in line and " p:ok" in line
                   for line in launches), launches
        assert log[-1].endswith("live=0"), log  # every allocation freed before the context


def test_mock_wrong_uri_is_one_line(mock_env, mlp_cuda):
    result = _cli("--device=cuda://5", f"--module={mlp_cuda}", "--function=predict",
                  "--input=1x16xf32=1", env=mock_env)
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert "NOT_FOUND" in result.stderr and "device 5 not found (of 2 enumerated)" in result.stderr


@pytest.fixture
def mock_device(mockcuda, monkeypatch, tmp_path):
    from amdgpu_cli.drivers.cuda.driver import Driver

    monkeypatch.setenv("MOCKCUDA_DEVICES", "1")
    driver = Driver(libcuda_search_paths=[str(mockcuda)],
                    environ={cuda_ffi.SKIP_SYSTEM_ENV: "1"})
    device = driver.create_device_by_path("0")
    yield device
    device.close()
    driver.close()


def _sync(device):
    from amdgpu_cli.hal.fence import Fence

    return Fence.create(device.create_semaphore(0), 1)


def test_mock_transfers_every_heap(mock_device):
    """Update, fill (1/2/4-byte patterns), copy and readback, byte for byte, on each heap."""
    from amdgpu_cli.tooling.run import _download

    device = mock_device
    kinds = [(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT),
             (MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE,
              BufferUsage.DEFAULT | BufferUsage.MAPPING),
             (MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE,
              BufferUsage.TRANSFER | BufferUsage.MAPPING_SCOPED)]
    for memory_type, usage in kinds:
        a = device.allocator.allocate(memory_type, usage, 256)
        b = device.allocator.allocate(memory_type, usage, 256)
        assert _download(device, a, 0, 256) == bytes(256)  # zeroed (the mock fills 0xCD)
        data = bytes(range(256))
        fence = _sync(device)
        device.queue_update(-1, None, fence, data, 0, a, 0, 256)
        fence.wait()
        fence = _sync(device)
        device.queue_fill(-1, None, fence, a, 16, 8, 0xAB, 1)
        fence.wait()
        fence = _sync(device)
        device.queue_fill(-1, None, fence, a, 32, 8, 0x1234, 2)
        fence.wait()
        fence = _sync(device)
        device.queue_fill(-1, None, fence, a, 64, 8, 0x01020304, 4)
        fence.wait()
        fence = _sync(device)
        device.queue_copy(-1, None, fence, a, 8, b, 100, 120)
        fence.wait()
        expected_a = bytearray(data)
        expected_a[16:24] = b"\xab" * 8
        expected_a[32:40] = b"\x34\x12" * 4
        expected_a[64:72] = b"\x04\x03\x02\x01" * 2
        expected_b = bytearray(256)
        expected_b[100:220] = expected_a[8:128]
        assert _download(device, a, 0, 256) == bytes(expected_a)
        assert _download(device, b, 0, 256) == bytes(expected_b)
        assert _download(device, b.subspan(100, 16), 0, 16) == bytes(expected_a[8:24])
        assert a.memory_type & MemoryType.DEVICE_VISIBLE
    # Earlier iterations' buffers (and the readback staging) were freed when collected.
    assert device.allocator.live_blocks == 2
    with pytest.raises(HalError) as info:
        device.allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, 64).map_range()
    assert info.value.status == "PERMISSION_DENIED"


def test_mock_dealloca_frees_and_close_frees_everything(mock_device):
    device = mock_device
    fence = _sync(device)
    buffer = device.queue_alloca(-1, None, fence, MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT,
                                 100)
    fence.wait()
    before = device.allocator.live_blocks
    fence = _sync(device)
    device.queue_dealloca(-1, None, fence, buffer)
    fence.wait()
    assert device.allocator.live_blocks == before - 1 and buffer.closed
    device.allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, 10)
    device.close()
    assert device._allocator.live_blocks == 0


def test_mock_jit_failure_carries_the_log(mock_device):
    cache = mock_device.create_executable_cache()
    with pytest.raises(HalError) as info:
        cache._load_module(b".version 7.6\n.entry MOCK_JIT_FAIL()\n{}\n")
    text = str(info.value)
    assert info.value.status == "FAILED_PRECONDITION"
    assert text.startswith("CUDA error 'CUDA_ERROR_INVALID_PTX' (218): a PTX JIT compilation "
                           "failed; cuModuleLoadDataEx; mismatched target chip?")
    assert text.endswith("JIT error log: ptxas fatal : mock failure")


def test_mock_query_and_formats(mock_device):
    assert mock_device.query_i64("hal.device.id", "cuda*") == (True, 1)
    assert mock_device.query_i64("hal.executable.format", "cuda-nvptx-fb") == (True, 1)
    assert mock_device.query_i64("hal.executable.format", "embedded-elf-x86_64") == (True, 0)
    assert mock_device.query_i64("cuda.device", "compute_capability_major") == (True, 9)
    assert mock_device.query_i64("cuda.device", "nope") == (False, 0)


# -- profiling against mockcuda: ticks from the mock GPU clock ------------------------------------

NS_PER_WORKGROUP = 250_000  # how long the mock GPU "runs" one workgroup


def _iree_profile_rows(report: str, bundle: Path, *extra) -> list[dict]:
    tool = shutil.which("iree-profile")
    if tool is None:
        pytest.skip("iree-profile (IREE 3.13.0) not on PATH")
    done = subprocess.run([tool, report, "--format=jsonl", *extra, str(bundle)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_mock_profile_times_each_dispatch_on_the_device_clock(mock_env, mlp_cuda, tmp_path):
    """Dispatch and device-queue events come from CUDA events on the stream: with the mock GPU
    running each workgroup for NS_PER_WORKGROUP, every dispatch iree-profile reads lasts at least
    that long (and not much longer), in launch order, with a clock fit; iree-profile and ours read
    the bundle with the same rows."""
    mock_env["MOCKCUDA_NS_PER_WORKGROUP"] = str(NS_PER_WORKGROUP)
    out = tmp_path / "cuda.ireeprof"
    result = _cli("--device=cuda", f"--module={mlp_cuda}", "--function=predict",
                  "--input=1x16xf32=1", "--device_profiling_mode=queue-events,dispatch-events,"
                  "device-queue-events,executable-metadata,memory-events",
                  f"--device_profiling_output={out}", env=mock_env)
    assert result.returncode == 0, result.stderr
    launches = [line.split() for line in _mock_log(mock_env) if line.startswith("launch ")]
    dispatches = [r for r in _iree_profile_rows("dispatch", out, "--dispatch_events")
                  if r["type"] == "dispatch_event"]
    assert [d["key"] for d in dispatches] == [line[1] for line in launches]
    for row, line in zip(dispatches, launches):
        groups = int(line[3]) * int(line[4]) * int(line[5])
        assert row["valid"] and row["clock_fit_available"], row
        # Ticks are the GPU clock's nanoseconds (the fit to host time is within a few percent
        # on a loaded machine: the clock brackets are host reads around Python calls).
        assert groups * NS_PER_WORKGROUP <= row["duration_ticks"] < groups * NS_PER_WORKGROUP + 5e6
        assert row["workgroup_count"] == [int(v) for v in line[3:6]]
        assert row["workgroup_size"] == [int(v) for v in line[7:10]]
    summary = _iree_profile_rows("summary", out)
    device = [r for r in summary if r["type"] == "device_summary"][0]
    assert device["clock_fit_available"] and 0.95 < device["ns_per_tick"] < 1.05, device
    assert device["dispatches"] == device["valid_dispatches"] == len(launches)
    queue = _iree_profile_rows("queue", out)
    device_events = [r for r in queue if r["type"] == "queue_device_event"]
    assert device_events and all(r["duration_ns"] >= 0 for r in device_events)
    executes = [r for r in device_events if r["op"] == "execute"]
    assert executes and all(r["duration_ns"] >= NS_PER_WORKGROUP for r in executes)
    # Both readers, every report the bundle feeds, the same rows.
    for report in ("summary", "dispatch", "queue", "executable", "command", "memory"):
        ours = subprocess.run(["amdgpu-profile", report, "--format=jsonl", str(out)],
                              capture_output=True, text=True, timeout=120)
        assert ours.returncode == 0, ours.stderr
        assert [json.loads(line) for line in ours.stdout.splitlines()] == \
            _iree_profile_rows(report, out), report
    assert "events-destroyed" in _mock_log(mock_env)  # every CUDA event the session made


def test_mock_profile_filter_times_only_selected_dispatches(mock_env, mlp_cuda, tmp_path):
    out = tmp_path / "cuda.ireeprof"
    result = _cli("--device=cuda", f"--module={mlp_cuda}", "--function=predict",
                  "--input=1x16xf32=1", "--device_profiling_mode=dispatch-events",
                  "--device_profiling_filter_function=*dispatch_1*",
                  f"--device_profiling_output={out}", env=mock_env)
    assert result.returncode == 0, result.stderr
    rows = [r for r in _iree_profile_rows("dispatch", out, "--dispatch_events")
            if r["type"] == "dispatch_event"]
    assert [r["key"] for r in rows] == ["predict_dispatch_1_matmul_1x8x32_f32"]


def test_mock_profile_refusals_are_one_line(mock_env, mlp_cuda, tmp_path):
    out = tmp_path / "x.ireeprof"
    result = _cli("--device=cuda", f"--module={mlp_cuda}", "--function=predict",
                  "--input=1x16xf32=1", "--device_profiling_mode=host-execution",
                  f"--device_profiling_output={out}", env=mock_env)
    assert result.returncode == 1 and not out.exists()
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "CUDA profiling does not produce host-execution events" in result.stderr


# -- queues: asynchronous, deferred waits, graphs ---------------------------------------------------

def test_mock_queue_waits_do_not_block_the_caller(mock_device):
    """An operation waiting on a host semaphore returns at once and runs when the semaphore is
    signalled; one waiting on work already issued on the stream is issued at once; a failed wait
    fails the operation's signal fence."""
    from amdgpu_cli.hal.fence import Fence
    from amdgpu_cli.hal.semaphore import Semaphore
    from amdgpu_cli.tooling.run import _download

    device = mock_device
    buffer = device.allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, 64)
    host = Semaphore(0)
    first, second = Fence.create(Semaphore(0), 1), Fence.create(Semaphore(0), 1)
    device.queue_fill(-1, Fence.create(host, 1), first, buffer, 0, 64, 0x11, 1)
    device.queue_fill(-1, first, second, buffer, 32, 32, 0x22, 1)  # waits on deferred work
    assert not first.is_reached() and not second.is_reached()
    assert _download(device, buffer, 0, 64) == bytes(64)  # nothing ran yet
    host.signal(1)  # issues the first fill, which issues the second
    second.wait(timeout=10)
    assert first.is_reached()
    assert _download(device, buffer, 0, 64) == b"\x11" * 32 + b"\x22" * 32
    # Stream order meets a wait on issued work: issued at once, signalled when it completes.
    third, fourth = Fence.create(Semaphore(0), 1), Fence.create(Semaphore(0), 1)
    device.queue_fill(-1, None, third, buffer, 0, 16, 0x33, 1)
    device.queue_fill(-1, third, fourth, buffer, 16, 16, 0x44, 1)
    fourth.wait(timeout=10)
    assert _download(device, buffer, 0, 32) == b"\x33" * 16 + b"\x44" * 16
    # A failed wait fails the signal, whether it failed before or after the submission.
    doomed, out = Semaphore(0), Fence.create(Semaphore(0), 1)
    device.queue_fill(-1, Fence.create(doomed, 1), out, buffer, 0, 64, 0x55, 1)
    doomed.fail("ABORTED", "upstream failed")
    with pytest.raises(HalError) as info:
        out.wait(timeout=10)
    assert info.value.status == "ABORTED"
    with pytest.raises(HalError):
        device.queue_fill(-1, Fence.create(doomed, 1), Fence.create(Semaphore(0), 1), buffer,
                          0, 64, 0x66, 1)
    assert _download(device, buffer, 0, 32) == b"\x33" * 16 + b"\x44" * 16


def test_mock_notify_at_is_reached_without_a_waiter(mock_device):
    """Nobody waits: a callback parked on a fence of stream work still runs (the completion
    thread), and a query sees the signal once the work completed."""
    import threading

    from amdgpu_cli.hal.fence import Fence
    from amdgpu_cli.hal.semaphore import Semaphore

    device = mock_device
    buffer = device.allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, 64)
    semaphore = Semaphore(0)
    device.queue_fill(-1, None, Fence.create(semaphore, 1), buffer, 0, 64, 1, 1)
    called = threading.Event()
    semaphore.notify_at(1, called.set)
    assert called.wait(10)
    assert semaphore.query() == 1


@pytest.mark.parametrize("streams, graphs", [(None, True), ("false", True), ("true", False)])
def test_mock_reusable_command_buffers_run_as_graphs(mock_env, mlp_cuda, streams, graphs):
    """By default (and with --cuda_use_streams=false) the model's reusable command buffer is
    captured once as a CUDA graph and launched each iteration; =true issues it command by
    command. The same kernels run either way."""
    flags = [] if streams is None else [f"--cuda_use_streams={streams}"]
    entry = ("import sys; from amdgpu_cli.cli.main import benchmark_main; "
             "benchmark_main(sys.argv[1:])")
    result = subprocess.run([sys.executable, "-c", entry, "--device=cuda", f"--module={mlp_cuda}",
                             "--function=predict", "--input=1x16xf32=1",
                             "--benchmark_min_time=4x", *flags],
                            capture_output=True, text=True, timeout=120, env=mock_env)
    assert result.returncode == 0, result.stderr
    log = _mock_log(mock_env)
    launches = [line.split()[1] for line in log if line.startswith("launch ")]
    assert launches == ["predict_dispatch_0_matmul_1x32x16_f32",
                        "predict_dispatch_1_matmul_1x8x32_f32"] * (len(launches) // 2)
    assert len(launches) >= 8
    assert (log.count("graph-launch") == len(launches) // 2) is graphs
    assert (0 < log.count("graph-instantiate") <= log.count("graph-launch")) is graphs
    assert log.count("graph-destroy") == log.count("graph-instantiate")


def test_mock_two_gpus_in_one_device(mock_env, mlp_cuda):
    """cuda://0,1: both contexts reach each other's memory (peer access both ways), the run
    prints what one GPU prints; a GPU named twice, an empty part, or GPUs that cannot reach
    each other: one line, exit 1."""
    one = _cli("--device=cuda", f"--module={mlp_cuda}", "--function=predict",
               "--input=1x16xf32=1", env=mock_env)
    Path(mock_env["MOCKCUDA_LOG"]).unlink(missing_ok=True)
    two = _cli("--device=cuda://0,1", f"--module={mlp_cuda}", "--function=predict",
               "--input=1x16xf32=1", env=mock_env)
    assert (two.returncode, two.stdout) == (0, one.stdout), two.stderr
    log = _mock_log(mock_env)
    assert "peer-access 0 1" in log and "peer-access 1 0" in log
    assert log.count("load-module 5335") == 2  # the executable in both contexts
    for uri, words in (("cuda://0,0", "names a GPU twice"), ("cuda://0,", "empty device"),
                       ("cuda://0,7", "device 7 not found")):
        bad = _cli(f"--device={uri}", f"--module={mlp_cuda}", "--function=predict",
                   "--input=1x16xf32=1", env=mock_env)
        assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
        assert words in bad.stderr
    apart = _cli("--device=cuda://0,1", f"--module={mlp_cuda}", "--function=predict",
                 "--input=1x16xf32=1", env={**mock_env, "MOCKCUDA_NO_PEERS": "1"})
    assert apart.returncode == 1 and "cannot access each other's memory" in apart.stderr
    assert len(apart.stderr.strip().splitlines()) == 1

"""Acceptance 4: faults on the amdgpu driver give one clear error and leave the process usable.

The faults: a kernel code object for the wrong ISA, an allocation larger than the pool, a wait
that times out, and a queue error injected by softhsa (`"faults"` in its config; see
tests/softhsa/README.md).
Each runs through `amdgpu-run` in a subprocess (exit 1, exactly one stderr line naming the IREE
status and the cause, nothing hangs) and, where it is clearer, in process through the HAL and the
tooling Session, where the same process then creates a new device and runs the next invocation.

The modules are compiled here by iree-compile from MODULE_MLIR for gfx942 and for gfx1100. The truth
for "wrong ISA" is the compiler's own output: the gfx1100 module, and a gfx942 module whose code
object carries the ELF e_flags (EF_AMDGPU_MACH, amd_hsa_elf.h) that iree-compile wrote for gfx1100.
Statuses follow the fact sheet (§2.4: HSA_STATUS_ERROR_EXCEPTION -> DATA_LOSS; pool exhaustion ->
RESOURCE_EXHAUSTED) and IREE's semaphore rules (a timed-out wait is DEADLINE_EXCEEDED).
"""

from __future__ import annotations

import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.enums import BufferUsage, HalError, MemoryType
from amdgpu_cli.hal.fence import Fence
from amdgpu_cli.hal.registry import default_registry
from amdgpu_cli.tooling.run import Session
from amdgpu_cli.tooling.values import Tensor
from tests.iree_tools import iree_compile_or_skip

from .softhsa_agents import private_softhsa

MODULE_MLIR = """
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @square(%x: tensor<524288xf32>) -> tensor<524288xf32> {
  %0 = arith.mulf %x, %x : tensor<524288xf32>
  return %0 : tensor<524288xf32>
}
"""
ADD_ARGS = ["--function=add", "--input=4xf32=1", "--input=4xf32=2"]
BIG_INPUT_BYTES = 524288 * 4  # @square's input: 2 MiB

MIB = 1 << 20
GFX942 = "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"
E_FLAGS = 0x30  # offset of e_flags in the ELF64 header
CLI_TIMEOUT = 120  # seconds; a hang fails the test instead of stalling the suite
AMDGPU_RUN = [sys.executable, "-c",
              "import sys; from amdgpu_cli.cli.main import run_main; run_main(sys.argv[1:])"]

TINY_POOL = {"name": "gfx942", "isa": GFX942,
             "pools": [{"flags": ["coarse"], "size": MIB},
                       {"flags": ["fine"], "size": 16 * MIB}]}
# GPU 0: a 1 MiB coarse pool whose blocks may be as large as 64 MiB (so a too-large request reaches
# hsa_amd_memory_pool_allocate). GPU 1: every queue fails at its first packet.
IN_PROCESS_CONFIG = {
    "agents": [{**TINY_POOL, "pools": [{"flags": ["coarse"], "size": MIB,
                                        "alloc_max_size": 64 * MIB},
                                       {"flags": ["fine"], "size": 16 * MIB}]},
               {"name": "gfx942", "isa": GFX942,
                "faults": {"queue_error_after_packets": 0,
                           "queue_error_status": "HSA_STATUS_ERROR_EXCEPTION"}}],
}


def _code_object_offset(data: bytes) -> int:
    """Where the one embedded AMDGPU code object (ELF) starts inside a .vmfb."""
    first = data.find(b"\x7fELF")
    assert first >= 0 and data.find(b"\x7fELF", first + 1) == -1, "expected exactly one ELF"
    return first


@pytest.fixture(scope="module")
def modules(tmp_path_factory) -> dict[str, Path]:
    """{"gfx942", "gfx1100", "patched"}: .vmfb paths (see the module docstring)."""
    from examples.compile import target_flags

    compiler = iree_compile_or_skip(
        "iree-compile not on PATH: the fault modules are compiled at test time")
    out = tmp_path_factory.mktemp("fault_modules")
    source = out / "faults.mlir"
    source.write_text(MODULE_MLIR)
    paths = {}
    for arch in ("gfx942", "gfx1100"):
        paths[arch] = out / f"faults_{arch}.vmfb"
        subprocess.run([compiler, *target_flags(f"amdgpu-{arch}"), str(source), "-o",
                        str(paths[arch])], check=True, capture_output=True, timeout=300)
    good = bytearray(paths["gfx942"].read_bytes())
    wrong = paths["gfx1100"].read_bytes()
    at, wrong_at = _code_object_offset(good), _code_object_offset(wrong)
    assert struct.unpack_from("<I", good, at + E_FLAGS) != struct.unpack_from("<I", wrong,
                                                                               wrong_at + E_FLAGS)
    good[at + E_FLAGS:at + E_FLAGS + 4] = wrong[wrong_at + E_FLAGS:wrong_at + E_FLAGS + 4]
    paths["patched"] = out / "faults_gfx942_with_gfx1100_code.vmfb"
    paths["patched"].write_bytes(bytes(good))
    return paths


def amdgpu_run(softhsa_lib, env, module: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**env, "AMDGPU_LIBHSA_SKIP_SYSTEM": "1"}
    env.pop("IREE_HAL_AMDGPU_LIBHSA_PATH", None)
    return subprocess.run([*AMDGPU_RUN, "--device=amdgpu",
                           f"--amdgpu_libhsa_search_path={softhsa_lib}", f"--module={module}",
                           *args], capture_output=True, text=True, env=env, timeout=CLI_TIMEOUT)


def one_error_line(result: subprocess.CompletedProcess, status: str) -> str:
    """The single stderr line of a failed run, checked to start with `error: STATUS;`."""
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: {status}; "), result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


# ---- through amdgpu-run ----


def test_cli_module_compiled_for_another_isa(softhsa_lib, softhsa_env, modules):
    # The module's own device selection finds no device for its gfx1100 target: IREE's
    # message, compiled into the module, names the target it wanted.
    line = one_error_line(amdgpu_run(softhsa_lib, softhsa_env(), modules["gfx1100"], *ADD_ARGS),
                          "INCOMPATIBLE")
    assert "gfx1100" in line and "not found or unavailable" in line


def test_cli_code_object_for_another_isa_names_both(softhsa_lib, softhsa_env, modules):
    line = one_error_line(amdgpu_run(softhsa_lib, softhsa_env(), modules["patched"], *ADD_ARGS),
                          "INCOMPATIBLE")
    assert "gfx1100" in line and GFX942 in line
    ok = amdgpu_run(softhsa_lib, softhsa_env(), modules["gfx942"], *ADD_ARGS)
    assert ok.returncode == 0 and ok.stdout.startswith("EXEC @add\n"), ok.stderr


def test_cli_input_larger_than_the_pool(softhsa_lib, softhsa_env, modules):
    env = softhsa_env({"agents": [TINY_POOL]})
    line = one_error_line(amdgpu_run(softhsa_lib, env, modules["gfx942"], "--function=square",
                                     "--input=524288xf32=1"), "RESOURCE_EXHAUSTED")
    assert str(BIG_INPUT_BYTES) in line and str(MIB) in line
    ok = amdgpu_run(softhsa_lib, env, modules["gfx942"], *ADD_ARGS)  # small work still fits
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("after", [0, 3])
def test_cli_injected_queue_error(softhsa_lib, softhsa_env, modules, after):
    faults = {"queue_error_after_packets": after,
              "queue_error_status": "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION"}
    started = time.monotonic()
    result = amdgpu_run(softhsa_lib, softhsa_env({"faults": faults}), modules["gfx942"],
                        *ADD_ARGS)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION" in result.stderr
    assert time.monotonic() - started < 60
    ok = amdgpu_run(softhsa_lib, softhsa_env(), modules["gfx942"], *ADD_ARGS)
    assert ok.returncode == 0, ok.stderr


# ---- in process ----


@pytest.fixture(scope="module")
def registry(softhsa_lib, tmp_path_factory):
    """A registry whose amdgpu driver runs on a private softhsa with IN_PROCESS_CONFIG."""
    private = tmp_path_factory.mktemp("softhsa_faults")
    registry = default_registry().with_options(
        {"amdgpu": {"libhsa_search_paths": [str(private)]}})
    with private_softhsa(softhsa_lib, private, IN_PROCESS_CONFIG):
        driver = registry.driver("amdgpu")
    yield registry
    driver.close()


def run_next_invocation(registry, modules) -> None:
    """A fresh device on GPU 0 loads the gfx942 module and calls @add to completion."""
    with Session(str(modules["gfx942"]), ["amdgpu://0"], registry=registry) as session:
        values = [Tensor.from_array(np.ones(4, np.float32)) for _ in range(2)]
        results = session.call("add", values)
        assert len(results) == 1 and isinstance(results[0], Tensor)


def test_wrong_isa_then_the_next_invocation(registry, modules):
    with pytest.raises(AmdgpuCliError) as info:
        Session(str(modules["patched"]), ["amdgpu://0"], registry=registry)
    assert info.value.status == "INCOMPATIBLE"
    assert "gfx1100" in str(info.value) and GFX942 in str(info.value)
    run_next_invocation(registry, modules)


def test_pool_exhaustion_then_the_next_invocation(registry, modules):
    device = registry.create_device("amdgpu://0")
    try:
        allocator = device.allocator
        with pytest.raises(HalError) as info:  # one request larger than the whole pool
            allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, 2 * MIB)
        assert info.value.status == "RESOURCE_EXHAUSTED" and str(2 * MIB) in str(info.value)
        first = allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, 600 * 1024)
        with pytest.raises(HalError) as info:  # the pool has run out
            allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, 600 * 1024)
        assert info.value.status == "RESOURCE_EXHAUSTED"
        first.close()  # its bytes go back to the pool
        allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, 600 * 1024).close()
    finally:
        device.close()
    run_next_invocation(registry, modules)


def test_waits_time_out_and_the_work_still_runs_later(registry, modules):
    device = registry.create_device("amdgpu://0")
    try:
        gate = device.create_semaphore(0)
        for wait in (lambda: gate.wait(1, timeout=0.1),
                     lambda: Fence.create(gate, 1).wait(timeout=0.1)):
            started = time.monotonic()
            with pytest.raises(HalError) as info:
                wait()
            assert info.value.status == "DEADLINE_EXCEEDED"
            assert 0.09 <= time.monotonic() - started < 5
        target = device.allocator.allocate(MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE,
                                           BufferUsage.TRANSFER | BufferUsage.MAPPING_SCOPED, 64)
        done = Fence.create(device.create_semaphore(0), 1)
        device.queue_fill(-1, Fence.create(gate, 1), done, target, 0, 64, 0x5A, 1)
        with pytest.raises(HalError) as info:
            done.wait(timeout=0.2)
        assert info.value.status == "DEADLINE_EXCEEDED"
        assert target.read() == bytes(64)  # not run while its wait is open
        gate.signal(1)
        done.wait(timeout=10)
        assert target.read() == b"\x5A" * 64
    finally:
        device.close()
    run_next_invocation(registry, modules)


def _close_within(device, seconds: float) -> None:
    closer = threading.Thread(target=device.close, daemon=True)
    closer.start()
    closer.join(seconds)
    assert not closer.is_alive(), f"closing the failed device took more than {seconds} s"


def test_injected_queue_error_fails_the_work_then_the_next_invocation(registry, modules):
    device = registry.create_device("amdgpu://1")  # every queue fails at its first packet
    try:
        target = device.allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, 256)
        done = Fence.create(device.create_semaphore(0), 1)
        try:
            device.queue_fill(-1, None, done, target, 0, 256, 0x11, 1)
        except HalError as error:  # a queue may also report it at once
            assert "HSA_STATUS_ERROR_EXCEPTION" in str(error)
        with pytest.raises(HalError) as info:
            done.wait(timeout=10)
        failure = info.value
        assert failure.status == "DATA_LOSS", failure  # fact sheet §2.4: EXCEPTION -> DATA_LOSS
        assert "HSA_STATUS_ERROR_EXCEPTION" in str(failure) and "\n" not in str(failure)
        later = Fence.create(device.create_semaphore(0), 1)
        with pytest.raises(HalError) as info:  # the failed queue takes no new work
            device.queue_fill(-1, None, later, target, 0, 256, 0x22, 1)
            later.wait(timeout=10)
        assert info.value.status == "DATA_LOSS"
    finally:
        _close_within(device, 10)
    run_next_invocation(registry, modules)

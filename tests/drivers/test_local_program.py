"""Recorded command buffers replayed as one native program (drivers/local/program.py) and the
worker pool under it: results against numpy, failures, concurrency, fallbacks, pool shutdown.

The kernel is a small executable library written here in C against the ABI structs the native
helper declares (`_dispatch_build.ABI_CDEF`) and built with the system C compiler as a
freestanding shared object, which the embedded-ELF loader loads like an iree-compile output:
`add_const` computes out[x] = in[x] + constants[0] per workgroup x, returns 7 from workgroup
constants[1] (a kernel failure on demand) and busy-loops constants[2] times first (so a dispatch
costs enough to be shared with the pool rather than run inline).
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time

import numpy as np
import pytest

pytest.importorskip("amdgpu_cli.drivers.local._dispatch",
                    reason="native helper not built (python amdgpu_cli/drivers/local/_dispatch_build.py)")

from amdgpu_cli.drivers.local import Driver, LocalDevice, LocalExecutable, WorkerPool  # noqa: E402
from amdgpu_cli.drivers.local._dispatch_build import ABI_CDEF  # noqa: E402
from amdgpu_cli.hal.command_buffer import Binding, BufferRef  # noqa: E402
from amdgpu_cli.hal.enums import (  # noqa: E402
    BufferUsage,
    CommandCategory,
    HalError,
    MemoryType,
)
from amdgpu_cli.hal.fence import Fence  # noqa: E402

CC = shutil.which("cc") or shutil.which("gcc")
FORMAT = "embedded-elf-x86_64"
NEVER = 0xFFFFFFFF  # no workgroup fails
GRID = 64
SLOW = 20000  # busy-loop iterations per workgroup: ~tens of microseconds per dispatch

LIBRARY_SOURCE = "#include <stdint.h>\n#include <stddef.h>\n" + ABI_CDEF + r"""
static int add_const(const iree_hal_executable_environment_v0_t* env,
                     const iree_hal_executable_dispatch_state_v0_t* state,
                     const iree_hal_executable_workgroup_state_v0_t* wg) {
    (void)env;
    for (volatile uint32_t i = 0; i < state->constants[2]; ++i) {}
    if (wg->workgroup_id_x == state->constants[1]) return 7;
    const uint32_t* in = (const uint32_t*)state->binding_ptrs[0];
    uint32_t* out = (uint32_t*)state->binding_ptrs[1];
    out[wg->workgroup_id_x] = in[wg->workgroup_id_x] + state->constants[0];
    return 0;
}
static const iree_hal_executable_dispatch_v0_t ptrs[] = {add_const};
static const iree_hal_executable_dispatch_attrs_v0_t attrs[] = {{0, 0, 3, 2, 1, 1, 1, 0, {0}}};
static const char* const names[] = {"add_const"};
static const iree_hal_executable_library_header_t header = {6, "program_test", 0, 0};
static const iree_hal_executable_library_v0_t library = {
    &header, {0, NULL}, {1, ptrs, attrs, NULL, NULL, names, NULL, NULL, NULL, NULL}, {0}, {0, NULL}};
__attribute__((visibility("default")))
const iree_hal_executable_library_header_t** iree_hal_executable_library_query(
        uint32_t max_version, const iree_hal_executable_environment_v0_t* env) {
    (void)env;
    return max_version >= 6 ? (const iree_hal_executable_library_header_t**)&library : NULL;
}
"""


@pytest.fixture(scope="module")
def elf(tmp_path_factory) -> bytes:
    if CC is None:
        pytest.skip("no C compiler to build the test executable library")
    d = tmp_path_factory.mktemp("program_lib")
    (d / "lib.c").write_text(LIBRARY_SOURCE)
    subprocess.run([CC, "-shared", "-fPIC", "-nostdlib", "-O1", "-fno-stack-protector",
                    "-o", str(d / "lib.so"), str(d / "lib.c")], check=True, timeout=120)
    return (d / "lib.so").read_bytes()


@pytest.fixture(params=["local-sync", "local-task"])
def device(request):
    with Driver(request.param).create_default_device() as dev:
        yield dev


def _buffer(device, values: np.ndarray | None = None):
    buffer = device.allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, GRID * 4)
    buffer.write(0, (values if values is not None else np.zeros(GRID, np.uint32)).tobytes())
    return buffer


def _u32(buffer) -> np.ndarray:
    return np.frombuffer(buffer.read(), dtype=np.uint32)


def _chain(device, executable, steps, mode=0):
    """A reusable command buffer of dispatches over slots: step i reads slot i and writes slot
    i + 1 with constants steps[i] = (value, fail_at, spin), a barrier after each."""
    cb = device.create_command_buffer(mode, CommandCategory.ANY, -1, len(steps) + 1)
    cb.begin()
    for i, constants in enumerate(steps):
        cb.dispatch(executable, 0, (GRID, 1, 1), list(constants),
                    [BufferRef.indirect(i), BufferRef.indirect(i + 1)])
        cb.execution_barrier(28, 13, 0)
    cb.end()
    return cb


def _table(buffers):
    return [Binding(b, 0, len(b)) for b in buffers]


def test_chain_runs_as_one_program_and_matches_numpy(elf, device):
    exe = device.create_executable_cache().prepare_executable(FORMAT, elf)
    # The first step is slow (shared with the pool on local-task), the rest inline: each step
    # reads what the one before wrote, so a missing barrier shows as a wrong sum.
    steps = [(1, NEVER, SLOW), (10, NEVER, 0), (100, NEVER, 0), (1000, NEVER, SLOW)]
    cb = _chain(device, exe, steps)
    rng = np.random.default_rng(0)
    for _ in range(3):  # the first execution builds the program, later ones replay it
        data = rng.integers(0, 1 << 20, GRID, dtype=np.uint32)
        buffers = [_buffer(device, data)] + [_buffer(device) for _ in steps]
        signal = Fence.create_at(1, device=device)
        device.queue_execute(-1, None, signal, cb, _table(buffers))
        assert signal.is_reached()
        np.testing.assert_array_equal(_u32(buffers[-1]), data + 1111)
        np.testing.assert_array_equal(_u32(buffers[2]), data + 11)
    assert cb.replay[0] is device and cb.replay[1] is not None  # replayed natively


def test_third_dispatch_failure_stops_the_program(elf, device):
    exe = device.create_executable_cache().prepare_executable(FORMAT, elf)
    steps = [(1, NEVER, 0), (2, NEVER, 0), (3, 5, 0), (4, NEVER, 0)]
    cb = _chain(device, exe, steps)
    data = np.arange(GRID, dtype=np.uint32)
    buffers = [_buffer(device, data)] + [_buffer(device) for _ in steps]
    signal = Fence.create_at(1, device=device)
    with pytest.raises(HalError, match=r"^add_const returned 7 in workgroup \(5, 0, 0\)$") as info:
        device.queue_execute(-1, None, signal, cb, _table(buffers))
    assert info.value.status == "INTERNAL"
    assert signal.failure is not None
    assert cb.replay[1] is not None
    np.testing.assert_array_equal(_u32(buffers[1]), data + 1)
    np.testing.assert_array_equal(_u32(buffers[2]), data + 3)
    np.testing.assert_array_equal(_u32(buffers[4]), np.zeros(GRID, np.uint32))  # never ran


def test_program_runs_concurrently_from_two_threads(elf):
    with LocalDevice("local-task", worker_count=3) as device:
        exe = device.create_executable_cache().prepare_executable(FORMAT, elf)
        cb = _chain(device, exe, [(3, NEVER, SLOW), (4, NEVER, 0), (5, NEVER, SLOW)])
        errors = []

        def worker(seed: int, buffers) -> None:
            rng = np.random.default_rng(seed)
            try:
                for _ in range(30):
                    data = rng.integers(0, 1 << 20, GRID, dtype=np.uint32)
                    buffers[0].write(0, data.tobytes())
                    device.queue_execute(-1, None, None, cb, _table(buffers))
                    np.testing.assert_array_equal(_u32(buffers[-1]), data + 12)
            except BaseException as error:  # reported by the main thread
                errors.append(error)

        # Buffers are allocated up front: only the executions run concurrently.
        threads = [threading.Thread(target=worker, args=(seed, [_buffer(device) for _ in range(4)]))
                   for seed in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert not errors, errors


def test_unusual_binding_table_takes_the_per_command_path(elf):
    """A slot at an offset that is not 64-byte aligned runs on a staged copy; aligned tables
    before and after it replay natively. All three match numpy."""
    with Driver("local-sync").create_default_device() as device:
        exe = device.create_executable_cache().prepare_executable(FORMAT, elf)
        cb = _chain(device, exe, [(7, NEVER, 0)])
        data = np.arange(GRID, dtype=np.uint32) * 3
        for offset in (0, 4, 0):
            src = device.allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT,
                                            GRID * 4 + 64)
            src.write(offset, data.tobytes())
            out = _buffer(device)
            device.queue_execute(-1, None, None, cb, [Binding(src, offset, GRID * 4),
                                                      Binding(out, 0, GRID * 4)])
            np.testing.assert_array_equal(_u32(out), data + 7)


def test_closed_executable_fails_as_before(elf):
    with Driver("local-sync").create_default_device() as device:
        exe = device.create_executable_cache().prepare_executable(FORMAT, elf)
        cb = _chain(device, exe, [(1, NEVER, 0)])
        buffers = [_buffer(device), _buffer(device)]
        device.queue_execute(-1, None, None, cb, _table(buffers))
        exe.close()
        with pytest.raises(HalError, match="executable is closed") as info:
            device.queue_execute(-1, None, None, cb, _table(buffers))
        assert info.value.status == "FAILED_PRECONDITION"


def _aligned_u32(values) -> np.ndarray:
    raw = np.zeros(len(values) * 4 + 64, dtype=np.uint8)
    start = -raw.ctypes.data % 64
    array = raw[start:start + len(values) * 4]
    array.view(np.uint32)[:] = values
    return array


def test_pool_dispatches_from_two_threads_and_shuts_down_idle(elf):
    pool = WorkerPool(4)
    exe = LocalExecutable.from_elf(elf, pool=pool)
    errors = []

    def worker(value: int) -> None:
        try:
            for _ in range(20):
                data = _aligned_u32(np.arange(GRID) * value)
                out = _aligned_u32(np.zeros(GRID))
                assert exe.dispatch(0, (GRID, 1, 1), [value, NEVER, 2000], [data, out]) == GRID
                np.testing.assert_array_equal(out.view(np.uint32), np.arange(GRID) * value + value)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(v,)) for v in (2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    time.sleep(0.05)  # past the workers' spin: they are asleep
    closer = threading.Thread(target=pool.close)
    closer.start()
    closer.join(10)
    assert not closer.is_alive()
    exe.close()


def test_pool_shuts_down_right_after_a_dispatch(elf):
    """Closing while the workers still spin for the next job joins them too."""
    for _ in range(5):
        pool = WorkerPool(3)
        with LocalExecutable.from_elf(elf, pool=pool) as exe:
            exe.dispatch(0, (GRID, 1, 1), [1, NEVER, 0],
                         [_aligned_u32(np.zeros(GRID)), _aligned_u32(np.zeros(GRID))])
        closer = threading.Thread(target=pool.close)
        closer.start()
        closer.join(10)
        assert not closer.is_alive()


# -- zero-length bindings (issue 12, finding 3) --------------------------------------------------

def zero_length_bindings_check(elf_path: str, identifier: str) -> None:
    """Dispatches whose input binding has length 0 (a slot range, a slot ref, a direct ref) on
    the program path (reusable buffer) and the per-command path (one-shot): the kernel, which
    ignores binding lengths, reads the buffer at its offset, as under IREE (whose map_range
    gives base + offset for an empty range). Run in a subprocess by the test below."""
    with Driver(identifier).create_default_device() as device:
        exe = device.create_executable_cache().prepare_executable(
            FORMAT, open(elf_path, "rb").read())
        data = np.arange(GRID, dtype=np.uint32) * 5
        src = _buffer(device, data)
        for mode in (0, 1):  # reusable: ReplayProgram; ONE_SHOT: LocalDevice._dispatch
            for name, ref, table in (
                    ("empty slot", BufferRef.indirect(0), [Binding(src, 0, 0)]),
                    ("empty ref", BufferRef.indirect(0, 0, 0), [Binding(src, 0, GRID * 4)]),
                    ("empty direct ref", BufferRef.direct(src, 0, 0), [Binding(src, 0, 64)])):
                out = _buffer(device)
                cb = device.create_command_buffer(mode, CommandCategory.ANY, -1, 2)
                cb.begin()
                cb.dispatch(exe, 0, (GRID, 1, 1), [9, NEVER, 0], [ref, BufferRef.indirect(1)])
                cb.end()
                device.queue_execute(-1, None, None, cb, [*table, Binding(out, 0, GRID * 4)])
                np.testing.assert_array_equal(_u32(out), data + 9, err_msg=f"{name}, mode {mode}")
                assert (cb.replay[1] is not None) == (mode == 0)


@pytest.mark.parametrize("identifier", ["local-sync", "local-task"])
def test_zero_length_binding_points_into_its_buffer(elf, identifier, tmp_path):
    import os
    import sys
    from pathlib import Path

    path = tmp_path / "lib.so"
    path.write_bytes(elf)
    root = Path(__file__).resolve().parents[2]
    script = ("import sys; from tests.drivers.test_local_program import "
              "zero_length_bindings_check as check; check(sys.argv[1], sys.argv[2])")
    env = dict(os.environ,
               PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-X", "faulthandler", "-c", script, str(path),
                           identifier], capture_output=True, text=True, timeout=120, env=env,
                          cwd=root)
    assert proc.returncode == 0, f"exit {proc.returncode}:\n{proc.stderr[-2000:]}"

"""The local driver and device: executables from real .vmfb files run through HAL command buffers.

Each model (the ones tests/drivers/test_local_executable.py uses) is compiled for llvm-cpu; the
executable's format string and ELF are taken from the module's rodata (via formats.vmfb), the
executable is prepared through the device's cache, and one dispatch — workgroup count, constants
and binding sizes read from the same compile's VM assembly — is recorded and submitted with
queue_execute and fences. Outputs are checked against numpy.
"""

from __future__ import annotations

import struct
import subprocess

import numpy as np
import pytest

pytest.importorskip("amdgpu_cli.drivers.local._dispatch",
                    reason="native helper not built (python amdgpu_cli/drivers/local/_dispatch_build.py)")

from amdgpu_cli.drivers.local import Driver, LocalDevice, LocalHalExecutable  # noqa: E402
from amdgpu_cli.formats.vmfb import load_vmfb  # noqa: E402
from amdgpu_cli.hal.command_buffer import Binding, BufferRef  # noqa: E402
from amdgpu_cli.hal.driver import DeviceInfo  # noqa: E402
from amdgpu_cli.hal.enums import (  # noqa: E402
    BufferUsage,
    CommandBufferMode,
    CommandCategory,
    HalError,
    MemoryType,
)
from amdgpu_cli.hal.fence import Fence  # noqa: E402
from amdgpu_cli.hal.registry import default_registry  # noqa: E402
from tests.drivers.test_local_executable import (  # noqa: E402
    CPU_FLAGS,
    EXPECTED,
    INPUTS,
    IREE_COMPILE,
    MODELS,
    _resolve_dispatch,
)

needs_compiler = pytest.mark.skipif(IREE_COMPILE is None, reason="iree-compile is not installed")

FORMAT = "embedded-elf-x86_64"
DEVICE_LOCAL = MemoryType.DEVICE_LOCAL
USAGE = BufferUsage.DEFAULT


class Model:
    def __init__(self, name, executable_format, elf, dispatch):
        self.name, self.format, self.elf, self.dispatch = name, executable_format, elf, dispatch


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Model]:
    if IREE_COMPILE is None:
        pytest.skip("iree-compile is not installed")
    out = {}
    for name, text in MODELS.items():
        d = tmp_path_factory.mktemp(name)
        src = d / f"{name}.mlir"
        src.write_text(text)
        vmfb = d / f"{name}.vmfb"
        subprocess.run([IREE_COMPILE, *CPU_FLAGS, str(src), "-o", str(vmfb)], check=True, timeout=300)
        vm_asm = subprocess.run([IREE_COMPILE, *CPU_FLAGS, str(src), "--output-format=vm-asm", "-o", "-"],
                                check=True, timeout=300, capture_output=True, text=True).stdout
        module = load_vmfb(vmfb)
        segments = [bytes(s.data) for s in module.rodata]
        [elf] = [s for s in segments if s.startswith(b"\x7fELF")]
        [fmt] = [s.decode() for s in segments if s.startswith(b"embedded-elf-")]
        out[name] = Model(name, fmt, elf, _resolve_dispatch(vm_asm))
    return out


@pytest.fixture(params=["local-sync", "local-task"])
def device(request):
    with Driver(request.param).create_default_device() as dev:
        yield dev


def _buffers(device, model: Model):
    lengths = model.dispatch["binding_lengths"]
    inputs = INPUTS[model.name]
    buffers = []
    for array, length in zip(inputs, lengths):
        assert array.nbytes == length
        buf = device.allocator.allocate(DEVICE_LOCAL, USAGE, length)
        buf.write(0, array.tobytes())
        buffers.append(buf)
    out = device.allocator.allocate(DEVICE_LOCAL, USAGE, lengths[-1])
    out.fill(0, lengths[-1], 0x7FC00000, 4)  # NaN: catches an output that is never written
    buffers.append(out)
    return buffers


def _expected(model: Model) -> np.ndarray:
    return EXPECTED[model.name](*INPUTS[model.name]).astype(np.float32).reshape(-1)


def _record(device, executable, model: Model, refs, capacity=0, mode=CommandBufferMode.ONE_SHOT):
    cb = device.create_command_buffer(mode, CommandCategory.ANY, -1, capacity)
    cb.begin()
    cb.dispatch(executable, 0, model.dispatch["workgroup_count"], model.dispatch["constants"], refs)
    cb.execution_barrier(28, 13, 0)
    cb.end()
    return cb


# -- driver ------------------------------------------------------------------------------------


def test_driver_lists_one_default_device():
    for name in ("local-sync", "local-task"):
        driver = Driver(name)
        assert driver.name == name
        assert driver.query_available_devices() == [DeviceInfo(0, "", "default")]
        with pytest.raises(HalError, match="device paths not yet implemented") as info:
            driver.create_device_by_path("0")
        assert info.value.status == "NOT_FOUND"


def test_registry_creates_local_devices():
    for uri, identifier in (("local-sync", "local-sync"), ("local-task://", "local-task"),
                            ("local", "local-sync")):
        with default_registry().create_device(uri) as dev:
            assert isinstance(dev, LocalDevice)
            assert dev.identifier == identifier


def test_query_answers_match_iree_local_devices():
    with Driver("local-sync").create_default_device() as dev:
        assert dev.query_i64("hal.device.id", "local*") == (True, 1)
        assert dev.query_i64("hal.device.id", "amdgpu") == (True, 0)
        assert dev.query_i64("hal.executable.format", FORMAT) == (True, 1)
        assert dev.query_i64("hal.executable.format", "rocm-hsaco-fb") == (True, 0)
        assert dev.query_i64("hal.device", "concurrency") == (True, 1)
        assert dev.query_i64("hal.dispatch", "concurrency") == (True, 1)
        ok, sse3 = dev.query_i64("hal.cpu", "sse3")
        assert ok and sse3 in (0, 1)
        assert dev.query_i64("hal.cpu", "no-such-feature") == (False, 0)
        assert dev.query_i64("hal.bogus", "x") == (False, 0)
    with Driver("local-task").create_default_device() as dev:
        assert dev.query_i64("hal.device.id", "local-task") == (True, 1)
        assert dev.query_i64("hal.device", "concurrency") == (True, 1)
        ok, workers = dev.query_i64("hal.dispatch", "concurrency")
        assert ok and workers == dev.worker_count >= 1


def test_unsupported_format_is_one_line_not_found():
    with Driver("local-sync").create_default_device() as dev:
        cache = dev.create_executable_cache()
        assert not cache.can_prepare_format("vmvx-bytecode-fb")
        with pytest.raises(HalError) as info:
            cache.prepare_executable("vmvx-bytecode-fb", b"\0" * 16)
        assert info.value.status == "NOT_FOUND"
        assert info.value.one_line() == ("NOT_FOUND; no executable loader registered for the given "
                                         "executable format 'vmvx-bytecode-fb'")


def test_bad_elf_is_a_hal_error():
    with Driver("local-sync").create_default_device() as dev:
        with pytest.raises(HalError):
            dev.create_executable_cache().prepare_executable(FORMAT, b"not an elf at all")


# -- executables and dispatches ----------------------------------------------------------------


@needs_compiler
@pytest.mark.parametrize("name", list(MODELS))
def test_executable_from_vmfb_rodata(models, name):
    model = models[name]
    assert model.format == FORMAT
    with Driver("local-sync").create_default_device() as dev:
        exe = dev.create_executable_cache().prepare_executable(model.format, model.elf, ())
        assert isinstance(exe, LocalHalExecutable)
        assert exe.export_count == 1
        info = exe.export(0)
        assert exe.lookup_export(info.name) == 0
        assert info.binding_count == len(model.dispatch["binding_lengths"])
        assert info.constant_count == len(model.dispatch["constants"])


@needs_compiler
@pytest.mark.parametrize("name", list(MODELS))
def test_direct_dispatch_matches_numpy(models, device, name):
    model = models[name]
    exe = device.create_executable_cache().prepare_executable(model.format, model.elf)
    buffers = _buffers(device, model)
    cb = _record(device, exe, model, [BufferRef.direct(b) for b in buffers])
    signal = Fence.create_at(1, device=device)
    device.queue_execute(-1, None, signal, cb)
    signal.wait()
    got = np.frombuffer(buffers[-1].read(), dtype=np.float32)
    np.testing.assert_allclose(got, _expected(model), rtol=1e-4, atol=1e-4)


@needs_compiler
def test_binding_table_dispatch_reused(models, device):
    """A memoized (reusable) command buffer whose bindings are table slots, run twice."""
    model = models["add"]
    exe = device.create_executable_cache().prepare_executable(model.format, model.elf)
    n = len(model.dispatch["binding_lengths"])
    cb = _record(device, exe, model, [BufferRef.indirect(i) for i in range(n)], capacity=n,
                 mode=0)
    for _ in range(2):
        buffers = _buffers(device, model)
        wait = Fence.create_at(1, device=device)
        signal = Fence.create_at(1, device=device)
        wait.signal()
        device.queue_execute(-1, wait, signal, cb, [Binding(b, 0, len(b)) for b in buffers])
        assert signal.is_reached()
        got = np.frombuffer(buffers[-1].read(), dtype=np.float32)
        np.testing.assert_allclose(got, _expected(model), rtol=1e-5)


@needs_compiler
def test_binding_at_offset_in_one_allocation(models):
    """Bindings as windows of one buffer, including one at an offset that is not 64-aligned."""
    model = models["add"]
    lengths = model.dispatch["binding_lengths"]
    with Driver("local-sync").create_default_device() as dev:
        exe = dev.create_executable_cache().prepare_executable(model.format, model.elf)
        offsets = [0, lengths[0] + 64, lengths[0] + lengths[1] + 128 + 4]
        big = dev.allocator.allocate(DEVICE_LOCAL, USAGE, offsets[-1] + lengths[-1] + 64)
        a, b = INPUTS["add"]
        big.write(offsets[0], a.tobytes())
        big.write(offsets[1], b.tobytes())
        refs = [BufferRef.direct(big, o, n) for o, n in zip(offsets, lengths)]
        cb = _record(dev, exe, model, refs)
        dev.queue_execute(-1, None, None, cb)
        got = np.frombuffer(big.read(offsets[2], lengths[2]), dtype=np.float32)
        np.testing.assert_allclose(got, a + b, rtol=1e-6)
        assert cb.execution_count == 1


@needs_compiler
def test_indirect_dispatch_reads_counts_at_execute_time(models):
    model = models["mm"]
    with Driver("local-sync").create_default_device() as dev:
        exe = dev.create_executable_cache().prepare_executable(model.format, model.elf)
        buffers = _buffers(dev, model)
        counts = dev.allocator.allocate(DEVICE_LOCAL, USAGE | BufferUsage.DISPATCH_INDIRECT_PARAMETERS, 12)
        cb = dev.create_command_buffer(CommandBufferMode.ONE_SHOT, CommandCategory.ANY)
        cb.begin()
        cb.dispatch_indirect(exe, 0, BufferRef.direct(counts, 0, 12), model.dispatch["constants"],
                             [BufferRef.direct(b) for b in buffers])
        cb.end()
        counts.write(0, struct.pack("<3I", *model.dispatch["workgroup_count"]))  # after recording
        dev.queue_execute(-1, None, None, cb)
        got = np.frombuffer(buffers[-1].read(), dtype=np.float32)
        np.testing.assert_allclose(got, _expected(model), rtol=1e-4, atol=1e-4)


@needs_compiler
def test_registry_device_runs_queue_ops_and_dispatch(models):
    model = models["red"]
    with default_registry().create_device("local-sync") as dev:
        exe = dev.create_executable_cache().prepare_executable(model.format, model.elf)
        lengths = model.dispatch["binding_lengths"]
        staging = dev.allocator.allocate(DEVICE_LOCAL, USAGE, lengths[0])
        staging.write(0, INPUTS["red"][0].tobytes())
        f1, f2, f3 = (Fence.create_at(1, device=dev) for _ in range(3))
        inp = dev.queue_alloca(-1, None, f1, DEVICE_LOCAL, USAGE, lengths[0])
        out = dev.queue_alloca(-1, f1, f2, DEVICE_LOCAL, USAGE, lengths[1])
        dev.queue_copy(-1, f2, None, staging, 0, inp, 0, lengths[0])
        dev.queue_fill(-1, None, None, out, 0, lengths[1], 0xFFFFFFFF, 4)
        cb = _record(dev, exe, model, [BufferRef.direct(inp), BufferRef.direct(out)])
        dev.queue_execute(-1, f2, f3, cb)
        assert f3.is_reached()
        got = np.frombuffer(out.read(), dtype=np.float32)
        np.testing.assert_allclose(got, _expected(model), rtol=1e-4, atol=1e-4)


# -- failures ------------------------------------------------------------------------------------


@needs_compiler
def test_failing_dispatch_fails_the_signal_fence(models):
    model = models["add"]
    with Driver("local-sync").create_default_device() as dev:
        exe = dev.create_executable_cache().prepare_executable(model.format, model.elf)
        buffers = _buffers(dev, model)
        cb = dev.create_command_buffer(CommandBufferMode.ONE_SHOT, CommandCategory.ANY)
        cb.begin()
        cb.dispatch(exe, 0, model.dispatch["workgroup_count"], [1, 2, 3],
                    [BufferRef.direct(b) for b in buffers])
        cb.end()
        signal = Fence.create_at(1, device=dev)
        with pytest.raises(HalError, match="constant count mismatch") as info:
            dev.queue_execute(-1, None, signal, cb)
        assert info.value.status == "INVALID_ARGUMENT"
        assert signal.failure is not None
        with pytest.raises(HalError):
            signal.wait()


@needs_compiler
def test_missing_binding_slot_fails_the_signal_fence(models):
    model = models["add"]
    with Driver("local-sync").create_default_device() as dev:
        exe = dev.create_executable_cache().prepare_executable(model.format, model.elf)
        n = len(model.dispatch["binding_lengths"])
        cb = _record(dev, exe, model, [BufferRef.indirect(i) for i in range(n)], capacity=n)
        signal = Fence.create_at(1, device=dev)
        with pytest.raises(HalError, match="requires a buffer"):
            dev.queue_execute(-1, None, signal, cb, [Binding(None)] * n)
        assert signal.failure is not None


@needs_compiler
def test_closed_device_closes_its_executables(models):
    model = models["add"]
    dev = Driver("local-sync").create_default_device()
    exe = dev.create_executable_cache().prepare_executable(model.format, model.elf)
    dev.close()
    assert exe._closed

"""amdgpu device queue operations on softhsa (acceptance 2 and the memory/fault parts of 4).

Fills, copies and updates go through AQL dispatches of the device-library kernels, which softhsa
runs in C on the real memory; a random program of them (unaligned offsets and lengths included,
spread over the four queues of two GPUs and chained on one timeline) must leave exactly the bytes
numpy computes. Memory placement is checked against HSA's own view (`hsa_amd_pointer_info`)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from amdgpu_cli.drivers.amdgpu import Driver, blit
from amdgpu_cli.hal.enums import BufferUsage, HalError, MemoryAccess, MemoryType
from amdgpu_cli.hal.fence import Fence

from .softhsa_agents import CONFIG, GIB, private_driver, private_softhsa

SIZE = 4096
HOST_VISIBLE = MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE
HOST_LOCAL = MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE
MAPPABLE = BufferUsage.DEFAULT | BufferUsage.MAPPING_SCOPED
LENGTHS = (0, 1, 2, 3, 4, 7, 8, 12, 16, 24, 63, 64, 100, 127, 128, 129, 200, 256, 1000, 1024, 3000)


@pytest.fixture(scope="module")
def driver(softhsa_lib, tmp_path_factory):
    yield from private_driver(softhsa_lib, tmp_path_factory.mktemp("softhsa_device_ops"))


@pytest.fixture
def device(driver):
    device = driver.create_device_by_path("0,1", [])
    yield device
    device.close()


class Timeline:
    """Chains queue operations on one semaphore: each waits for the previous one's value."""

    def __init__(self, device):
        self.semaphore = device.create_semaphore(0)
        self.value = 0

    def next(self) -> tuple[Fence | None, Fence]:
        wait = Fence.create(self.semaphore, self.value) if self.value else None
        self.value += 1
        return wait, Fence.create(self.semaphore, self.value)

    def finish(self) -> None:
        self.semaphore.wait(self.value, timeout=30)


def read_back(device, timeline, buffer) -> np.ndarray:
    if buffer.memory_type & MemoryType.HOST_VISIBLE:
        timeline.finish()
        return buffer.map_range(MemoryAccess.READ).copy()
    staging = device.allocator.allocate(HOST_LOCAL, MAPPABLE, buffer.byte_length)
    wait, signal = timeline.next()
    device.queue_copy(-1, wait, signal, buffer, 0, staging, 0, buffer.byte_length)
    timeline.finish()
    return staging.map_range(MemoryAccess.READ).copy()


def aligned(rng: random.Random, limit: int, unit: int) -> tuple[int, int]:
    """A random (offset, length) inside `limit` bytes, both multiples of `unit`."""
    length = min(rng.choice(LENGTHS) // unit * unit, limit // unit * unit)
    offset = rng.randrange(0, (limit - length) // unit + 1) * unit
    return offset, length


def test_fill_copy_update_match_numpy(device):
    rng = random.Random(1234)
    types = (MemoryType.DEVICE_LOCAL, HOST_VISIBLE, HOST_LOCAL)
    buffers = [device.allocator.allocate(t, MAPPABLE if t != MemoryType.DEVICE_LOCAL
                                         else BufferUsage.DEFAULT, SIZE) for t in types]
    expected = [np.zeros(SIZE, np.uint8) for _ in buffers]
    timeline = Timeline(device)
    used = set()
    for step in range(150):
        affinity = 1 << (step % 4)  # the four queues of both GPUs, in turn
        wait, signal = timeline.next()
        kind = rng.choice(("fill", "copy", "update"))
        target = rng.randrange(3)
        if kind == "fill":
            width = rng.choice((1, 2, 4))  # the HAL's pattern sizes
            offset, length = aligned(rng, SIZE, width)
            pattern = rng.getrandbits(8 * width)
            device.queue_fill(affinity, wait, signal, buffers[target], offset, length, pattern,
                              width)
            tiled = np.frombuffer(pattern.to_bytes(width, "little"), np.uint8)
            expected[target][offset:offset + length] = np.tile(tiled, length // width)
            address = buffers[target].base_address + offset
            used.add(blit.plan_fill(address, length, pattern, width, compute_units=304,
                                    wavefront_size=64).kernel)
        elif kind == "update":
            offset, length = aligned(rng, SIZE, 1)
            data = rng.randbytes(length)
            source_offset = rng.randrange(8)
            device.queue_update(affinity, wait, signal, b"\xee" * source_offset + data,
                                source_offset, buffers[target], offset, length)
            expected[target][offset:offset + length] = np.frombuffer(data, np.uint8)
        else:
            source = rng.randrange(3)
            half = SIZE // 2  # within one buffer: one half to the other, never overlapping
            limit = half if source == target else SIZE
            source_offset, length = aligned(rng, limit, 1)
            target_offset = rng.randrange(0, limit - length + 1)
            if source == target:
                if rng.getrandbits(1):
                    source_offset += half
                else:
                    target_offset += half
            device.queue_copy(affinity, wait, signal, buffers[source], source_offset,
                              buffers[target], target_offset, length)
            expected[target][target_offset:target_offset + length] = \
                expected[source][source_offset:source_offset + length].copy()
            used.add(blit.plan_copy(buffers[source].base_address + source_offset,
                                    buffers[target].base_address + target_offset, length,
                                    compute_units=304, wavefront_size=64).kernel)
    for buffer, want in zip(buffers, expected):
        np.testing.assert_array_equal(read_back(device, timeline, buffer), want)
    assert len(used) >= 9, sorted(used)  # every blit kernel but fill_x8 (8-byte patterns)


def test_large_fill_and_copy(device):
    """Transfers larger than one grid (304 CUs x 4 x 64 work-items): the grid-stride loops."""
    size = 8 << 20
    first = device.allocator.allocate(HOST_VISIBLE, MAPPABLE, size)
    second = device.allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, size)
    timeline = Timeline(device)
    device.queue_fill(-1, *timeline.next(), first, 0, size, 0x01020304, 4)
    device.queue_update(-1, *timeline.next(), b"\xaa" * 3, 0, first, 5, 3)
    device.queue_copy(-1, *timeline.next(), first, 1, second, 3, size - 5)
    device.queue_copy(-1, *timeline.next(), second, 0, first, 0, size)
    timeline.finish()
    want = np.tile(np.array([4, 3, 2, 1], np.uint8), size // 4)
    want[5:8] = 0xAA
    want = np.concatenate([np.zeros(3, np.uint8), want[1:size - 4], np.zeros(2, np.uint8)])
    np.testing.assert_array_equal(first.map_range(MemoryAccess.READ), want)


def test_large_update_is_staged_and_released(device):
    """An update larger than the kernarg ring could hold goes through a host staging block, which
    returns to its pool once the update completed."""
    size = 3 << 20
    buffer = device.allocator.allocate(HOST_VISIBLE, MAPPABLE, size + 8)
    data = np.random.default_rng(5).integers(0, 256, size, np.uint8)
    live = device.allocator.live_blocks
    timeline = Timeline(device)
    device.queue_update(1, *timeline.next(), memoryview(data), 0, buffer, 5, size)
    timeline.finish()
    device.wait_idle(10)
    np.testing.assert_array_equal(buffer.map_range(MemoryAccess.READ, 5, size), data)
    assert buffer.read(0, 5) == bytes(5) and buffer.read(size + 5) == bytes(3)
    assert device.allocator.live_blocks == live


def pointer_info(driver, buffer) -> tuple[int, int, set[int]]:
    """(owner agent, block size, accessible agents) of a buffer, as HSA reports them."""
    ffi, keep = driver.libhsa.ffi, []
    alloc = ffi.callback("void*(size_t)", lambda n: keep.append(ffi.new("char[]", n)) or keep[-1])
    info = ffi.new("hsa_amd_pointer_info_t*", {"size": ffi.sizeof("hsa_amd_pointer_info_t")})
    count, agents = ffi.new("uint32_t*"), ffi.new("hsa_agent_t**")
    driver.libhsa.call("hsa_amd_pointer_info", ffi.cast("void*", buffer.base_address), info,
                       alloc, count, agents)
    return (info.agentOwner.handle, info.sizeInBytes,
            {agents[0][i].handle for i in range(count[0])})


def test_memory_types_choose_pools_and_mapping(driver, device):
    first, second = device.physical_devices
    everyone = {first.agent.handle, second.agent.handle, first.host.handle, second.host.handle}
    cases = ((MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, first.agent.handle, False),
             (HOST_VISIBLE, MAPPABLE, first.agent.handle, True),
             (MemoryType.DEVICE_LOCAL, MAPPABLE, first.agent.handle, True),
             (HOST_LOCAL, MAPPABLE, first.host.handle, True))
    for memory_type, usage, owner, mappable in cases:
        buffer = device.allocator.allocate(memory_type, usage, 100)
        got_owner, size, accessible = pointer_info(driver, buffer)
        assert (got_owner, size >= 100) == (owner, True)
        assert everyone <= accessible
        assert bool(buffer.memory_type & MemoryType.HOST_VISIBLE) == mappable
        if mappable:
            buffer.write(10, b"xyz")
            assert buffer.read(10, 3) == b"xyz"
        else:
            with pytest.raises(HalError) as info:
                buffer.map_range(MemoryAccess.READ)
            assert info.value.status == "PERMISSION_DENIED"
    # queue_alloca places memory on the physical device of the queue it names (bit 2: GPU 1).
    timeline = Timeline(device)
    buffer = device.queue_alloca(1 << 2, *timeline.next(), MemoryType.DEVICE_LOCAL,
                                 BufferUsage.DEFAULT, 256)
    timeline.finish()
    assert pointer_info(driver, buffer)[0] == second.agent.handle
    live = device.allocator.live_blocks
    device.queue_dealloca(1 << 2, *timeline.next(), buffer)
    device.wait_idle(10)
    assert buffer.closed and device.allocator.live_blocks == live - 1  # back to the pool
    kept = device.allocator.allocate(HOST_VISIBLE, MAPPABLE, 64)  # not from queue_alloca
    device.queue_dealloca(-1, *timeline.next(), kept)
    device.wait_idle(10)
    assert not kept.closed


def test_allocation_larger_than_the_pool(device):
    too_big = 193 * GIB  # the configured pools hold 192 GiB
    with pytest.raises(HalError) as info:
        device.allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, too_big)
    line = info.value.one_line()
    assert line.startswith("RESOURCE_EXHAUSTED; ") and str(too_big) in line and "\n" not in line
    signal = Fence.create(device.create_semaphore(0), 1)
    with pytest.raises(HalError):
        device.queue_alloca(-1, None, signal, MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT,
                            too_big)
    assert signal.failure is not None and signal.failure.status == "RESOURCE_EXHAUSTED"
    # The device is still usable.
    buffer = device.allocator.allocate(HOST_VISIBLE, MAPPABLE, 64)
    timeline = Timeline(device)
    device.queue_fill(-1, *timeline.next(), buffer, 0, 64, 7, 1)
    timeline.finish()
    assert buffer.read() == b"\x07" * 64


def test_wait_that_times_out_then_proceeds(device):
    buffer = device.allocator.allocate(HOST_VISIBLE, MAPPABLE, 16)
    gate, done = device.create_semaphore(0), device.create_semaphore(0)
    device.queue_fill(-1, Fence.create(gate, 1), Fence.create(done, 1), buffer, 0, 16, 0x5A, 1)
    with pytest.raises(HalError) as info:
        done.wait(1, timeout=0.2)
    assert info.value.status == "DEADLINE_EXCEEDED"
    assert buffer.read() == bytes(16)  # not run before its wait
    gate.signal(1)
    done.wait(1, timeout=10)
    assert buffer.read() == b"\x5a" * 16


def test_argument_errors_raise_before_submitting(device):
    buffer = device.allocator.allocate(HOST_VISIBLE, MAPPABLE, 64)
    signal = Fence.create(device.create_semaphore(0), 1)
    for operation, status in (
            (lambda: device.queue_fill(-1, None, signal, buffer, 1, 4, 0, 2), "INVALID_ARGUMENT"),
            (lambda: device.queue_fill(-1, None, signal, buffer, 0, 65, 0, 1), "OUT_OF_RANGE"),
            (lambda: device.queue_copy(-1, None, signal, buffer, 0, buffer, 8, 16),
             "INVALID_ARGUMENT"),
            (lambda: device.queue_update(-1, None, signal, b"ab", 0, buffer, 0, 3),
             "OUT_OF_RANGE"),
            (lambda: device.queue_fill(1 << 5, None, signal, buffer, 0, 4, 0, 1),
             "INVALID_ARGUMENT")):
        with pytest.raises(HalError) as info:
            operation()
        assert info.value.status == status
    assert signal.failure is None and signal.query().name == "DEFERRED"


def test_queue_affinity_selects_device_and_queue(device):
    assert [device.queue_index(a) for a in (-1, 1, 2, 4, 8, 0b1100, 0xF0 | 2)] == [
        0, 0, 1, 2, 3, 2, 1]
    queue = device.host_queue(3)
    assert (queue.physical_device.ordinal, queue.index) == (1, 1)


def test_close_releases_everything(driver):
    device = driver.create_device_by_path("0,1", [])
    allocator = device.allocator
    buffers = [allocator.allocate(t, MAPPABLE, 1 << 20) for t in (HOST_VISIBLE, HOST_LOCAL)]
    timeline = Timeline(device)
    device.queue_fill(2, *timeline.next(), buffers[0], 0, 1 << 20, 1, 1)
    timeline.finish()
    assert allocator.live_blocks == 2
    device.close()
    device.close()  # idempotent
    assert allocator.live_blocks == 0 and all(b.closed for b in buffers)
    with pytest.raises(HalError) as info:
        device.allocator.allocate(HOST_VISIBLE, MAPPABLE, 16)
    assert info.value.status == "FAILED_PRECONDITION"
    again = driver.create_device_by_path("0,1", [])  # a new device in the same process
    try:
        buffer = again.allocator.allocate(HOST_VISIBLE, MAPPABLE, 32)
        timeline = Timeline(again)
        again.queue_fill(-1, *timeline.next(), buffer, 0, 32, 0xC3, 1)
        timeline.finish()
        assert buffer.read() == b"\xc3" * 32
    finally:
        again.close()


def test_queue_error_fails_the_fences_and_the_next_device_runs(softhsa_lib, tmp_path):
    """softhsa reports a queue error in place of each queue's third packet (as a GPU exception)."""
    with private_softhsa(softhsa_lib, tmp_path,
                         {**CONFIG, "faults": {"queue_error_after_packets": 2}}):
        driver = Driver(libhsa_search_paths=[str(tmp_path)])
    try:
        for attempt in range(2):  # the second device proves the process can go on
            device = driver.create_device_by_path("0", [])
            buffer = device.allocator.allocate(HOST_VISIBLE, MAPPABLE, 64)
            fences = [Fence.create(device.create_semaphore(0), 1) for _ in range(3)]
            for value, fence in enumerate(fences):
                device.queue_fill(-1, None, fence, buffer, 0, 64, value + 1, 1)
            fences[1].wait(timeout=10)
            assert buffer.read() == b"\x02" * 64
            with pytest.raises(HalError) as info:
                fences[2].wait(timeout=10)
            line = info.value.one_line()
            assert "HSA_STATUS_ERROR_EXCEPTION" in line and "\n" not in line
            with pytest.raises(HalError):
                device.queue_fill(-1, None, None, buffer, 0, 64, 9, 1)
            device.close()
    finally:
        driver.close()


def test_immutable_import_is_copied_into_device_memory(driver, device):
    data = bytes(range(200))
    usage = BufferUsage.DEFAULT | BufferUsage.SHARING_IMMUTABLE
    buffer = device.allocator.import_host(data, MemoryType.DEVICE_LOCAL, usage, writable=False)
    assert pointer_info(driver, buffer)[1] >= 200  # a real HSA block, addressable by the GPUs
    assert buffer.map_range(MemoryAccess.READ).tobytes() == data
    with pytest.raises(HalError):
        buffer.write(0, b"x")  # read-only, as the source was
    assert device.allocator.import_host(bytearray(data), MemoryType.DEVICE_LOCAL,
                                        BufferUsage.DEFAULT, writable=True) is None

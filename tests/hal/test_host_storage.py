"""Host buffer storage without numpy: HostAllocator's raw (bytearray-backed) storage, the raw
transfer helpers (`write`, `fill`, `copy_from`, `read`) checked against numpy doing the same on a
copy, the numpy views of `map_range` aliasing that storage both ways, host imports, closed
buffers, and the modules of the run path importing without numpy."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from amdgpu_cli.hal import BufferUsage, HalError, HostAllocator, MemoryAccess, MemoryType
from amdgpu_cli.hal.buffer import Buffer, fill_bytes, host_address

DL = MemoryType.DEVICE_LOCAL
IMMUTABLE = BufferUsage.DEFAULT | BufferUsage.SHARING_IMMUTABLE
SIZE = 256


def _random_buffer(rng, size=SIZE):
    """A host buffer filled with random bytes through a numpy view, and a numpy copy of them."""
    buffer = HostAllocator().allocate(DL, BufferUsage.DEFAULT, size)
    expected = rng.integers(0, 256, size, dtype=np.uint8)
    buffer.map_range(MemoryAccess.WRITE)[:] = expected
    return buffer, expected.copy()


@pytest.mark.parametrize("size", [0, 1, 63, 64, 100, 4097])
def test_raw_storage_is_aligned_zeroed_and_aliased_by_numpy(size):
    buffer = HostAllocator().allocate(DL, BufferUsage.DEFAULT, size)
    assert type(buffer._storage) is memoryview and buffer._storage.nbytes == size
    storage, address, length = buffer.host_range(int(MemoryAccess.READ))
    assert length == size and address == host_address(storage)
    if size:
        assert address % 64 == 0
    assert buffer.read() == bytes(size)
    view = buffer.map_range()
    assert view.dtype == np.uint8 and view.shape == (size,) and not view.any()
    if size:
        assert view.ctypes.data == address
    # The root's numpy view is made once and shared by every mapping.
    assert buffer._storage_view() is buffer._storage_view()


def test_small_allocations_are_disjoint_zeroed_and_aligned_across_slabs():
    """Many small buffers (carved from shared slabs, several slabs' worth): every one starts
    64-byte aligned at its own address, reads as zeros, and no two overlap. Each is filled with
    its own byte value; afterwards every buffer still holds only its own value."""
    import random
    import threading

    allocator = HostAllocator()
    rng = random.Random(7)
    sizes = [rng.choice([0, 1, 7, 32, 63, 64, 65, 100, 128, 1000, 4095, 4096, 4097])
             for _ in range(600)]

    def allocate_all(out):
        for size in sizes:
            out.append(allocator.allocate(DL, BufferUsage.DEFAULT, size))

    buffers, other_thread = [], []
    worker = threading.Thread(target=allocate_all, args=(other_thread,))
    worker.start()
    allocate_all(buffers)
    worker.join()
    buffers += other_thread
    assert sum(b.byte_length for b in buffers) > 3 * 64 * 1024  # crossed slab boundaries
    spans = []
    for k, buffer in enumerate(buffers):
        size = buffer.byte_length
        storage, address, length = buffer.host_range(int(MemoryAccess.READ))
        assert length == size and address == host_address(storage)
        assert address % 64 == 0
        assert buffer.read() == bytes(size)
        if size:
            spans.append((address, address + size, k))
        buffer.fill(0, size, bytes([k % 251 + 1]))
    spans.sort()
    for (_, end, _), (start, _, _) in zip(spans, spans[1:]):
        assert end <= start
    for k, buffer in enumerate(buffers):
        assert buffer.read() == bytes([k % 251 + 1]) * buffer.byte_length


def test_writes_are_visible_both_ways():
    rng = np.random.default_rng(1)
    buffer, expected = _random_buffer(rng)
    before = buffer.map_range(MemoryAccess.WRITE)  # mapped before the raw writes below
    assert buffer.read() == expected.tobytes()
    data = rng.integers(0, 256, 40, dtype=np.uint8)
    buffer.write(24, data.tobytes())
    expected[24:64] = data
    assert np.array_equal(before, expected)
    before[100:110] = 7  # numpy -> raw
    expected[100:110] = 7
    assert buffer.read() == expected.tobytes()
    assert buffer.subspan(100, 10).read() == bytes([7] * 10)
    mapped = buffer.subspan(96).map_bytes(MemoryAccess.WRITE, 8, 4)  # raw mapping, no numpy
    assert type(mapped) is memoryview and bytes(mapped) == expected[104:108].tobytes()
    mapped[:] = b"wxyz"
    expected[104:108] = np.frombuffer(b"wxyz", np.uint8)
    assert np.array_equal(before, expected)


def test_write_takes_any_contiguous_buffer():
    buffer = HostAllocator().allocate(DL, BufferUsage.DEFAULT, 32)
    values = np.arange(4, dtype=np.float32).reshape(2, 2)
    buffer.write(4, values)
    buffer.write(20, memoryview(bytearray(b"abcd")))
    assert buffer.read(4, 16) == values.tobytes()
    assert buffer.read(20, 4) == b"abcd"


@pytest.mark.parametrize("pattern_length", [1, 2, 4, 8])
@pytest.mark.parametrize("units", [0, 1, 3, 17])
def test_fill_matches_numpy(pattern_length, units):
    rng = np.random.default_rng(pattern_length * 100 + units)
    buffer, expected = _random_buffer(rng)
    view = buffer.map_range()
    pattern = 0x8877665544332211 & ((1 << (8 * pattern_length)) - 1)
    offset = 3 * pattern_length
    buffer.fill(offset, units * pattern_length, pattern, pattern_length)
    word = np.frombuffer(pattern.to_bytes(pattern_length, "little"), np.uint8)
    expected[offset:offset + units * pattern_length] = np.tile(word, units)
    assert np.array_equal(view, expected)
    assert buffer.read() == expected.tobytes()


def test_fill_bytes_on_a_misaligned_window():
    target = bytearray(50)
    fill_bytes(memoryview(target)[1:41], b"\x01\x02\x03\x04")
    expected = np.zeros(50, np.uint8)
    expected[1:41] = np.tile(np.array([1, 2, 3, 4], np.uint8), 10)
    assert bytes(target) == expected.tobytes()


@pytest.mark.parametrize("source, target, length", [
    (0, 10, 100),    # overlapping, target after source
    (10, 0, 100),    # overlapping, target before source
    (5, 5, 50),      # the same range
    (0, 128, 128),   # disjoint halves
    (200, 3, 1),
])
def test_copy_within_one_allocation_is_memmove(source, target, length):
    rng = np.random.default_rng(source * 1000 + target)
    buffer, expected = _random_buffer(rng)
    view = buffer.map_range()
    buffer.copy_from(buffer, source, target, length)
    expected[target:target + length] = expected[source:source + length].copy()
    assert np.array_equal(view, expected)


def test_copy_between_subspans_of_one_and_two_allocations():
    rng = np.random.default_rng(7)
    first, first_expected = _random_buffer(rng)
    second, second_expected = _random_buffer(rng)
    # Subspans of one allocation that overlap: [16, 144) and [48, 176).
    low, high = first.subspan(16, 128), first.subspan(48, 128)
    high.copy_from(low, 0, 0, 100)
    first_expected[48:148] = first_expected[16:116].copy()
    assert np.array_equal(first.map_range(), first_expected)
    second.subspan(64).copy_from(first.subspan(8, 32), 4, 10, 20)
    second_expected[74:94] = first_expected[12:32]
    assert second.read() == second_expected.tobytes()


def test_import_host_bytes_is_read_only_and_aliased():
    allocator = HostAllocator()
    data = bytes(range(64))
    assert allocator.import_host(data, DL, BufferUsage.DEFAULT) is None  # needs IMMUTABLE
    buffer = allocator.import_host(data, DL, IMMUTABLE)
    assert buffer.read(8, 8) == data[8:16]
    view = buffer.map_range()
    assert not view.flags.writeable and view.ctypes.data == host_address(data)
    for write in (lambda: buffer.write(0, b"x"), lambda: buffer.fill(0, 4, 0, 1),
                  lambda: buffer.map_range(MemoryAccess.WRITE),
                  lambda: buffer.map_bytes(MemoryAccess.WRITE)):
        with pytest.raises(HalError) as error:
            write()
        assert error.value.status == "PERMISSION_DENIED"
    assert not buffer.map_range(MemoryAccess.ANY).flags.writeable


def test_import_host_bytearray_aliases_it_both_ways():
    allocator = HostAllocator()
    data = bytearray(32)
    buffer = allocator.import_host(data, DL, BufferUsage.DEFAULT)
    assert buffer.allowed_access == MemoryAccess.ALL
    buffer.write(4, b"abcd")
    assert data[4:8] == b"abcd"
    data[10:12] = b"xy"
    assert buffer.read(10, 2) == b"xy" and bytes(buffer.map_range()[10:12]) == b"xy"
    buffer.map_range(MemoryAccess.WRITE)[0] = 9
    assert data[0] == 9
    # Imported read-only on request: the same checks as for immutable bytes.
    frozen = allocator.import_host(data, DL, IMMUTABLE, writable=False)
    assert frozen.allowed_access == MemoryAccess.READ
    assert not frozen.map_range(MemoryAccess.ANY).flags.writeable
    with pytest.raises(HalError) as error:
        frozen.write(0, b"x")
    assert error.value.status == "PERMISSION_DENIED"


def test_closed_buffer_fails_every_access():
    allocator = HostAllocator()
    other = allocator.allocate(DL, BufferUsage.DEFAULT, 64)
    buffer = allocator.allocate(DL, BufferUsage.DEFAULT, 64)
    span = buffer.subspan(8, 16)
    buffer.close()
    buffer.close()  # harmless
    assert allocator.statistics.live_buffers == 1
    for target in (buffer, span):
        for access in (target.read, lambda: target.write(0, b"x"),
                       lambda: target.fill(0, 4, 0, 1), target.map_range, target.as_array,
                       lambda: target.map_bytes(MemoryAccess.READ),
                       lambda: target.host_range(int(MemoryAccess.READ)),
                       lambda: target.subspan(0, 1), lambda: other.copy_from(target, 0, 0, 4),
                       lambda: target.copy_from(other, 0, 0, 4)):
            with pytest.raises(HalError) as error:
                access()
            assert error.value.status == "FAILED_PRECONDITION"


def test_numpy_storage_is_still_accepted():
    array = np.zeros(128, np.uint8)
    buffer = Buffer(array, memory_type=DL | MemoryType.HOST_VISIBLE,
                    allowed_usage=BufferUsage.DEFAULT | BufferUsage.MAPPING_SCOPED)
    buffer.write(0, b"\x01\x02")
    buffer.fill(4, 4, 0xAABBCCDD, 4)
    assert list(array[:8]) == [1, 2, 0, 0, 0xDD, 0xCC, 0xBB, 0xAA]
    assert buffer.map_range().ctypes.data == array.ctypes.data
    assert buffer.as_array("<u4")[1] == 0xAABBCCDD
    for bad in (None, np.zeros(4, np.int8), np.zeros((2, 2), np.uint8), np.zeros(8, np.uint8)[::2],
                memoryview(bytearray(8)).cast("I")):
        with pytest.raises(TypeError):
            Buffer(bad, memory_type=DL, allowed_usage=BufferUsage.DEFAULT)


def test_run_path_modules_import_without_numpy():
    code = ("import sys\n"
            "import amdgpu_cli.hal.allocator, amdgpu_cli.hal.buffer, amdgpu_cli.hal.buffer_view\n"
            "import amdgpu_cli.vm.hal_module, amdgpu_cli.formats.vmfb, amdgpu_cli.siphash\n"
            "import amdgpu_cli.drivers.local.device\n"
            "print('numpy' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"

import numpy as np
import pytest

from amdgpu_cli.hal import (BufferRef, BufferUsage, BufferView, CommandBuffer, ElementType, Fence,
                            HalError, HostAllocator, MemoryType, StatusCode)
from amdgpu_cli.hal.null import NullDevice

DL = MemoryType.DEVICE_LOCAL


def test_allocation_is_aligned_and_counted():
    a = HostAllocator()
    b = a.allocate(DL, BufferUsage.DEFAULT, 100)
    assert b.map_range().ctypes.data % 64 == 0
    assert b.memory_type & MemoryType.HOST_VISIBLE and b.allowed_usage & BufferUsage.MAPPING_SCOPED
    assert a.statistics.live_buffers == 1
    b.close()
    assert a.statistics.live_buffers == 0
    with pytest.raises(HalError):
        b.read()


@pytest.mark.parametrize("plen", [1, 2, 4, 8])
@pytest.mark.parametrize("offset_units", [0, 1, 3])
def test_fill_matches_numpy(plen, offset_units):
    b = HostAllocator().allocate(DL, BufferUsage.DEFAULT, 64)
    pattern = 0x1122334455667788 & ((1 << (8 * plen)) - 1)
    off, length = offset_units * plen, 5 * plen
    b.fill(off, length, pattern, plen)
    expected = np.zeros(64, np.uint8)
    expected[off:off + length] = np.tile(np.frombuffer(pattern.to_bytes(plen, "little"), np.uint8), 5)
    assert np.array_equal(np.frombuffer(b.read(), np.uint8), expected)
    if plen > 1:
        with pytest.raises(HalError):
            b.fill(1, plen, pattern, plen)


def test_subspan_copy_and_bounds():
    a = HostAllocator()
    b = a.allocate(DL, BufferUsage.DEFAULT, 32)
    b.write(0, np.arange(32, dtype=np.uint8))
    s = b.subspan(5, 10)
    assert s.read() == bytes(range(5, 15))
    c = a.allocate(DL, BufferUsage.DEFAULT, 16)
    c.copy_from(s, 3, 1, 7)
    assert c.read()[1:8] == bytes(range(8, 15))
    with pytest.raises(HalError) as e:
        s.subspan(8, 3)
    assert e.value.status == "OUT_OF_RANGE"


def test_usage_and_access_checks():
    a = HostAllocator()
    buf = a.import_host(b"abcd", DL, BufferUsage.DEFAULT | BufferUsage.SHARING_IMMUTABLE)
    assert buf.read() == b"abcd"
    with pytest.raises(HalError) as e:
        buf.write(0, b"x")
    assert e.value.status == "PERMISSION_DENIED"
    assert a.import_host(b"abcd", DL, BufferUsage.DEFAULT) is None


def test_buffer_view_roundtrip():
    a = HostAllocator()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = BufferView.from_numpy(a, x)
    assert v.type_string() == "2x3xf32" and v.element_type == ElementType.FLOAT_32
    assert np.array_equal(v.to_numpy(), x)
    v.assert_matches("input0", ElementType.FLOAT_32, 1, (2, 3))
    with pytest.raises(HalError, match="input0"):
        v.assert_matches("input0", ElementType.FLOAT_32, 1, (3, 2))
    iv = BufferView.from_numpy(a, np.zeros(4, np.int32))
    iv.assert_matches("x", ElementType.SINT_32, 1, (4,))  # same-width integers pass
    with pytest.raises(HalError):
        BufferView(v.buffer, (100,), ElementType.FLOAT_32)


def test_command_buffer_execution_on_null_device():
    dev = NullDevice()
    a = dev.allocator
    src = a.allocate(DL, BufferUsage.DEFAULT, 16)
    dst = a.allocate(DL, BufferUsage.DEFAULT, 16)
    cb = dev.create_command_buffer(0, 3, -1, binding_capacity=2)
    cb.begin()
    cb.fill_buffer(BufferRef.indirect(0, 0, 16), 0xAB, 1)
    cb.execution_barrier(28, 13)
    cb.update_buffer(b"\x01\x02\x03", 0, BufferRef.indirect(0, 5, 3))
    cb.copy_buffer(BufferRef.indirect(0, 2, 8), BufferRef.indirect(1, 1, 8))
    cb.end()
    signal = Fence.create_at(1)
    for _ in range(2):  # reusable (not one-shot)
        dst.fill(0, 16, 0, 1)
        dev.queue_execute(-1, None, signal if _ == 0 else None, cb, [(src, 0, 16), (dst, 0, 16)])
    expected_src = np.full(16, 0xAB, np.uint8); expected_src[5:8] = [1, 2, 3]
    expected_dst = np.zeros(16, np.uint8); expected_dst[1:9] = expected_src[2:10]
    assert np.array_equal(np.frombuffer(src.read(), np.uint8), expected_src)
    assert np.array_equal(np.frombuffer(dst.read(), np.uint8), expected_dst)
    assert signal.query() == StatusCode.OK


def test_command_buffer_validation():
    dev = NullDevice()
    b = dev.allocator.allocate(DL, BufferUsage.DEFAULT, 16)
    cb = CommandBuffer(dev, 1, 1)
    with pytest.raises(HalError) as e:
        cb.fill_buffer(BufferRef.direct(b), 0, 1)
    assert e.value.status == "FAILED_PRECONDITION"
    cb.begin()
    with pytest.raises(HalError):
        cb.fill_buffer(BufferRef.direct(b, 2, 4), 0, 4)  # misaligned
    with pytest.raises(HalError):
        cb.fill_buffer(BufferRef.direct(b), 0, 3)
    with pytest.raises(HalError):
        cb.copy_buffer(BufferRef.direct(b, 0, 8), BufferRef.direct(b, 4, 8))  # overlap
    with pytest.raises(HalError) as e:
        cb.dispatch(None, 0, (1, 1, 1))  # TRANSFER-only buffer
    assert e.value.status == "FAILED_PRECONDITION"
    host_only = dev.allocator.allocate(MemoryType.HOST_LOCAL, BufferUsage.DEFAULT, 16)
    with pytest.raises(HalError) as e:
        cb.fill_buffer(BufferRef.direct(host_only), 0, 1)
    assert e.value.status == "PERMISSION_DENIED"
    cb.end()
    dev.queue_execute(-1, None, None, cb)
    with pytest.raises(HalError):
        dev.queue_execute(-1, None, None, cb)  # one-shot reuse


def test_dispatch_unimplemented_fails_signal_fence():
    dev = NullDevice()
    cb = dev.create_command_buffer(1, 3)
    cb.begin()
    cb.dispatch(object(), 0, (1, 1, 1), [1, 2])
    cb.end()
    signal = Fence.create_at(1)
    with pytest.raises(HalError) as e:
        dev.queue_execute(-1, None, signal, cb)
    assert e.value.status == "UNIMPLEMENTED"
    assert signal.query() == StatusCode.UNIMPLEMENTED
    ok, v = dev.query_i64("hal.device.id", "nu*")
    assert ok and v == 1
    assert dev.query_i64("hal.executable.format", "embedded-elf-x86_64") == (True, 0)
    assert dev.query_i64("bogus", "k") == (False, 0)


def test_queue_ops_ordered_by_fences():
    dev = NullDevice()
    f1, f2 = Fence.create_at(1), Fence.create_at(1)
    buf = dev.queue_alloca(-1, None, f1, DL, BufferUsage.DEFAULT, 8)
    dev.queue_fill(-1, f1, f2, buf, 0, 8, 0x0102, 2)
    dev.queue_update(-1, f2, None, b"\xff", 0, buf, 7, 1)
    assert buf.read() == b"\x02\x01\x02\x01\x02\x01\x02\xff"

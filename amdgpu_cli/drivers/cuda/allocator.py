"""The cuda allocator: HAL buffers backed by CUDA allocations of one device's primary context.

Heaps (reference replay-benchmark-cuda.md §3.10; `heap_for` is the pure choice):
  - HOST_LOCAL requested (bit 0x40): pinned host memory, `cuMemHostAlloc(PORTABLE | DEVICEMAP)`,
    device address from `cuMemHostGetDevicePointer_v2` -> HOST_LOCAL | DEVICE_VISIBLE
    (IREE adds WRITECOMBINED unless HOST_CACHED; we never do: the tools read these back);
  - HOST_VISIBLE or a MAPPING usage requested: managed memory, `cuMemAllocManaged(ATTACH_GLOBAL)`
    -> DEVICE_LOCAL | HOST_VISIBLE | HOST_COHERENT, as IREE; on a device without concurrent
    managed access, pinned host memory instead (IREE's downgrade);
  - anything else: `cuMemAlloc_v2` -> DEVICE_LOCAL only (MAPPING usages dropped; map_range is
    PERMISSION_DENIED). Such a root buffer still answers `read`/`write` with a copy on the
    device's stream, so host code that reads or writes a whole allocation works on every heap.
Host-visible buffers are zeroed on the host; device-only ones by `cuMemsetD8Async` on the
device's stream (ordered before any later use; IREE does not zero, the HAL promises it here).
Every allocation is at least 64 bytes (CUDA refuses 0). Immutable host imports (the VM's rodata)
are copied into managed memory; writable ones are refused (None): pinning the caller's memory
(`cuMemHostRegister`) is not done.

Queue allocations (`allocate_queued` / `free_queued`: queue_alloca / queue_dealloca) are not
zeroed (as in IREE). Device memory is stream-ordered where the device has memory pools
(`cuMemAllocAsync` / `cuMemFreeAsync` on the device's stream, from its default pool, as IREE's
cuda driver does with its stream-ordered pools): no host synchronization. Other heaps (managed
memory for results the host maps) keep given-back blocks for the next queue allocation of the
same size (`_free`), so a loop of calls does not allocate and free managed memory each time.

Lifetime: a buffer's memory is freed by `close()`, by a finalizer capturing only the allocator
and the pointers (never the buffer), by `free_queued`, or by `CudaAllocator.close()` (device
close), whichever comes first; freeing is idempotent. Nothing is freed at interpreter exit.
`cuMemFree` waits for work using the memory (CUDA synchronizes it), so a buffer dropped while
the stream still reads it is freed safely; `cuMemFreeAsync` is ordered after it on the stream.
Sources: IREE `cuda_allocator.c`, `cuda_buffer.c`.
"""

from __future__ import annotations

import threading
import weakref

from amdgpu_cli.hal.allocator import Allocator
from amdgpu_cli.hal.buffer import WHOLE_BUFFER, Buffer
from amdgpu_cli.hal.enums import (
    BufferCompatibility,
    BufferUsage,
    HalError,
    MemoryAccess,
    MemoryType,
)

_HOST_LOCAL_BIT = 1 << 6
_HOST_VISIBLE = int(MemoryType.HOST_VISIBLE)
_MAPPING = int(BufferUsage.MAPPING_SCOPED | BufferUsage.MAPPING_PERSISTENT)
_ACCESS_ALL = int(MemoryAccess.ALL)
MINIMUM_ALLOCATION = 64
RECYCLE_LIMIT = 256 << 20  # bytes of given-back queue allocations kept for reuse (see _free)

HEAP_DEVICE = "device"
HEAP_MANAGED = "managed"
HEAP_HOST = "host"
HEAP_MEMORY_TYPES = {
    HEAP_DEVICE: int(MemoryType.DEVICE_LOCAL),
    HEAP_MANAGED: int(MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE
                      | MemoryType.HOST_COHERENT),
    HEAP_HOST: int(MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE),
}


def heap_for(memory_type: int, usage: int, managed: bool = True) -> str:
    """The heap serving a request (`managed`: the device has concurrent managed access)."""
    memory_type, usage = int(memory_type), int(usage)
    if memory_type & _HOST_LOCAL_BIT:
        return HEAP_HOST
    if memory_type & _HOST_VISIBLE or usage & _MAPPING:
        return HEAP_MANAGED if managed else HEAP_HOST
    return HEAP_DEVICE


class CudaBuffer(Buffer):
    """A root buffer over one CUDA allocation; `device_pointer` is its device address."""

    def __init__(self, allocator: CudaAllocator, heap: str, device_pointer: int,
                 host_pointer: int, byte_length: int, *, memory_type: int, usage: int,
                 recycle: int = 0):
        if heap == HEAP_DEVICE:
            # No host storage: the fields Buffer.__init__ sets, with none (map_range refuses
            # first: the memory type is not HOST_VISIBLE).
            self._storage = None
            self._array = None
            self._root = None
            self.allocator = allocator
            self._memory_type = memory_type
            self._allowed_usage = usage
            self._allowed_access = _ACCESS_ALL
            self.byte_offset = 0
            self.byte_length = self._allocation_size = byte_length
            self._preserve_count = 1
            self._closed = False
            self._address = None
        else:
            ffi = allocator.ffi
            raw = ffi.buffer(ffi.cast("void*", host_pointer), max(byte_length, 1))
            storage = memoryview(raw)[:byte_length]  # bytes ("B"): no numpy on this path
            super().__init__(storage, memory_type=memory_type, allowed_usage=usage,
                             allowed_access=MemoryAccess.ALL, allocator=allocator)
        self.heap = heap
        self.device_pointer = device_pointer
        self.queue_allocated = False  # set by queue_alloca: queue_dealloca then frees it
        self._free = weakref.finalize(self, allocator._free, heap, device_pointer, host_pointer,
                                      recycle)
        self._free.atexit = False

    def close(self) -> None:
        if not self._closed:
            super().close()
            self._free()

    # Device-only memory: whole-allocation host transfers go through the device's stream.
    def read(self, offset: int = 0, length: int = WHOLE_BUFFER) -> bytes:
        if self._memory_type & _HOST_VISIBLE:
            return super().read(offset, length)
        self._check_open()
        length = self.validate_range(offset, length)
        out = bytearray(length)
        if length:
            self.allocator.device.copy_to_host(self.device_pointer + offset, out)
        return bytes(out)

    def write(self, offset: int, data) -> None:
        if self._memory_type & _HOST_VISIBLE:
            return super().write(offset, data)
        self._check_open()
        source = memoryview(data).cast("B")
        self.validate_range(offset, source.nbytes)
        if source.nbytes:
            self.allocator.device.copy_from_host(self.device_pointer + offset, source)


def device_pointer(buffer: Buffer, offset: int = 0) -> int:
    """The device address of byte `offset` of a buffer (or subspan) a CudaAllocator made."""
    root = buffer.root
    if not isinstance(root, CudaBuffer):
        raise HalError(f"buffer {buffer!r} was not allocated by a cuda allocator; the device "
                       "cannot address it", status="INVALID_ARGUMENT")
    if root.closed:
        raise HalError("buffer is closed", status="FAILED_PRECONDITION")
    return root.device_pointer + buffer.byte_offset + offset


class CudaAllocator(Allocator):
    """CUDA memory for one device (its context is made current around every call)."""

    # The status a host import fails with under replay capture (replay/recorder.py), as IREE
    # 3.13.0's cuda allocator gives it (seen on an H100: allocator.import_buffer INVALID_ARGUMENT).
    captured_import_status = "INVALID_ARGUMENT"

    def __init__(self, device, libcuda, *, managed: bool = True, pools: bool = False):
        super().__init__(device, "cuda")
        self.libcuda = libcuda
        self.ffi = libcuda.ffi
        self.managed = managed
        self.pools = pools  # stream-ordered allocation (cuMemAllocAsync) for queue allocations
        self._recycled: dict[tuple[str, int], list[tuple[int, int]]] = {}  # see _free
        self._recycled_bytes = 0
        self._pointer_out = self.ffi.new("CUdeviceptr*")  # used under the device's stream lock
        # (heap, device pointer) -> host pointer, every allocation not yet freed.
        self._live: dict[tuple[str, int], int] = {}
        self._refs: dict[tuple[str, int], weakref.ref] = {}
        self._blocks_lock = threading.RLock()
        self._closed = False

    def query_compatibility(self, memory_type, usage, byte_length=0):
        memory_type, usage = int(MemoryType(memory_type)), int(BufferUsage(usage))
        heap = heap_for(memory_type, usage, self.managed)
        compatibility = BufferCompatibility.ALLOCATABLE | BufferCompatibility.IMPORTABLE
        if usage & int(BufferUsage.TRANSFER):
            compatibility |= BufferCompatibility.QUEUE_TRANSFER
        if usage & int(BufferUsage.DISPATCH):
            compatibility |= BufferCompatibility.QUEUE_DISPATCH
        if not HEAP_MEMORY_TYPES[heap] & _HOST_VISIBLE:
            usage &= ~_MAPPING
        return compatibility, MemoryType(HEAP_MEMORY_TYPES[heap]), BufferUsage(usage)

    def allocate(self, memory_type, usage, byte_length) -> CudaBuffer:
        if byte_length < 0:
            raise HalError(f"invalid allocation size {byte_length}", status="INVALID_ARGUMENT")
        if self._closed:
            raise HalError("allocator is closed", status="FAILED_PRECONDITION")
        memory_type, usage = int(MemoryType(memory_type)), int(BufferUsage(usage))
        heap = heap_for(memory_type, usage, self.managed)
        if not HEAP_MEMORY_TYPES[heap] & _HOST_VISIBLE:
            usage &= ~_MAPPING
        size = max(byte_length, MINIMUM_ALLOCATION)
        device_ptr, host_ptr = self._allocate_block(heap, size)
        return self._adopt(heap, device_ptr, host_ptr, byte_length, usage, zero=size)

    def _adopt(self, heap: str, device_ptr: int, host_ptr: int, byte_length: int, usage: int,
               *, recycle: int = 0, zero: int = 0) -> CudaBuffer:
        """The buffer over a block just allocated (registered with `_live`), zeroed (`zero`:
        the block's size) or not; the block is freed if that fails."""
        try:
            buffer = CudaBuffer(self, heap, device_ptr, host_ptr, byte_length,
                                memory_type=HEAP_MEMORY_TYPES[heap], usage=usage,
                                recycle=recycle)
            if zero and heap == HEAP_DEVICE:
                self.device.memset_zero(device_ptr, zero)
            elif zero and byte_length:
                import ctypes  # memset on the host pointer: no numpy on this path

                ctypes.memset(host_ptr, 0, byte_length)
        except BaseException:
            self._free(heap, device_ptr, host_ptr)
            raise
        with self._blocks_lock:
            self._refs[heap, device_ptr] = weakref.ref(buffer)
        self._record_allocation(buffer)
        return buffer

    def allocate_queued(self, memory_type, usage, byte_length) -> CudaBuffer:
        """A queue_alloca's buffer: device memory from the stream's pool (the caller holds the
        device's stream lock, context current), else `allocate`."""
        memory_type, usage = int(memory_type), int(usage)
        heap = heap_for(memory_type, usage, self.managed)
        if byte_length < 0 or self._closed:
            return self.allocate(memory_type, usage, byte_length)
        size = max(byte_length, MINIMUM_ALLOCATION)
        if heap != HEAP_DEVICE or not self.pools:
            return self._allocate_recycled(heap, size, byte_length, usage)
        out = self._pointer_out
        result = self.libcuda.lib.cuMemAllocAsync(out, size, self.device.stream)
        if result:
            error = self.libcuda.error("cuMemAllocAsync", result)
            raise HalError(f"cannot allocate {size} bytes of {heap} memory: {error}",
                           status=error.status)
        device_ptr = int(out[0])
        with self._blocks_lock:
            self._live[heap, device_ptr] = 0
        return self._adopt(heap, device_ptr, 0, byte_length, usage & ~_MAPPING)

    def _allocate_recycled(self, heap: str, size: int, byte_length: int, usage: int
                           ) -> CudaBuffer:
        """A queue allocation outside the stream's pool: a block of the same heap and size that
        an earlier queue allocation gave back, else a fresh one; not zeroed (as IREE)."""
        with self._blocks_lock:
            blocks = self._recycled.get((heap, size))
            block = blocks.pop() if blocks else None
            if block is not None:
                self._recycled_bytes -= size
                self._live[heap, block[0]] = block[1]
        device_ptr, host_ptr = block if block is not None else self._allocate_block(heap, size)
        if not HEAP_MEMORY_TYPES[heap] & _HOST_VISIBLE:
            usage &= ~_MAPPING
        return self._adopt(heap, device_ptr, host_ptr, byte_length, usage, recycle=size)

    def free_queued(self, buffer: CudaBuffer) -> None:
        """A queue_dealloca: stream-ordered free of pool memory (the caller holds the stream
        lock), else `close()`."""
        key = (buffer.heap, buffer.device_pointer)
        if not self.pools or buffer.heap != HEAP_DEVICE or buffer.closed:
            buffer.close()
            return
        with self._blocks_lock:
            if self._live.pop(key, None) is None:
                return
            self._refs.pop(key, None)
        buffer._free.detach()
        Buffer.close(buffer)
        self.libcuda.call("cuMemFreeAsync", buffer.device_pointer, self.device.stream)

    def _allocate_block(self, heap: str, size: int) -> tuple[int, int]:
        """(device pointer, host pointer or 0) of a fresh block."""
        from amdgpu_cli.drivers.cuda.cuda_ffi import (CU_MEM_ATTACH_GLOBAL,
                                                     CU_MEMHOSTALLOC_DEVICEMAP,
                                                     CU_MEMHOSTALLOC_PORTABLE, CudaError)

        lib, ffi = self.libcuda, self.ffi
        self.device.bind()
        try:
            if heap == HEAP_DEVICE:
                device_ptr, host_ptr = lib.out("CUdeviceptr", "cuMemAlloc_v2", size), 0
            elif heap == HEAP_MANAGED:
                device_ptr = lib.out("CUdeviceptr", "cuMemAllocManaged", size,
                                     CU_MEM_ATTACH_GLOBAL)
                host_ptr = device_ptr
            else:
                pointer = lib.out("void*", "cuMemHostAlloc", size,
                                  CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP)
                host_ptr = int(ffi.cast("uintptr_t", pointer))
                try:
                    device_ptr = lib.out("CUdeviceptr", "cuMemHostGetDevicePointer_v2",
                                         pointer, 0)
                except CudaError:
                    lib.call("cuMemFreeHost", pointer)
                    raise
        except CudaError as error:
            raise HalError(f"cannot allocate {size} bytes of {heap} memory: {error}",
                           status=error.status) from None
        with self._blocks_lock:
            self._live[heap, device_ptr] = host_ptr
        return int(device_ptr), host_ptr

    def _free(self, heap: str, device_ptr: int, host_ptr: int, recycle: int = 0) -> None:
        """Return a block (once; a no-op once the allocator freed everything). A queue
        allocation's block (`recycle`: its size) is kept for the next queue allocation of that
        heap and size, up to RECYCLE_LIMIT bytes in all. Reuse is safe without waiting: the one
        stream orders the next owner's work after the last one's, and the host touches the
        memory only behind fences."""
        with self._blocks_lock:
            if self._live.pop((heap, device_ptr), None) is None:
                return
            self._refs.pop((heap, device_ptr), None)
            if recycle and not self._closed and \
                    self._recycled_bytes + recycle <= RECYCLE_LIMIT:
                self._recycled.setdefault((heap, recycle), []).append((device_ptr, host_ptr))
                self._recycled_bytes += recycle
                return
        self._release_block(heap, device_ptr, host_ptr)

    def _release_block(self, heap: str, device_ptr: int, host_ptr: int) -> None:
        self.device.bind()
        if heap == HEAP_HOST:
            self.libcuda.call("cuMemFreeHost", self.ffi.cast("void*", host_ptr))
        else:
            self.libcuda.call("cuMemFree_v2", device_ptr)

    def import_host(self, data, memory_type, usage, *, writable=None):
        """Immutable host bytes are copied into managed (host-visible) memory; writable ones
        cannot be aliased without pinning them, so they are refused (None)."""
        view = memoryview(data).cast("B")
        if writable is None:
            writable = not view.readonly
        if writable:
            return None
        buffer = self.allocate(int(memory_type) | _HOST_VISIBLE, int(usage) | _MAPPING,
                               view.nbytes)
        if view.nbytes:
            buffer.write(0, view)
        buffer.allowed_access = MemoryAccess.READ
        return buffer

    @property
    def live_blocks(self) -> int:
        with self._blocks_lock:
            return len(self._live)

    def close(self) -> None:
        """Close every buffer still open and free its memory (device close)."""
        self._closed = True
        with self._blocks_lock:
            live = list(self._live.items())
            refs = dict(self._refs)
        for (heap, device_ptr), host_ptr in live:
            ref = refs.get((heap, device_ptr))
            buffer = ref() if ref is not None else None
            if buffer is not None:
                buffer.close()
            self._free(heap, device_ptr, host_ptr)
        with self._blocks_lock:
            recycled, self._recycled, self._recycled_bytes = self._recycled, {}, 0
        for (heap, _), blocks in recycled.items():
            for device_ptr, host_ptr in blocks:
                self._release_block(heap, device_ptr, host_ptr)

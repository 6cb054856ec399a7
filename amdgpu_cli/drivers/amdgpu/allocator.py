"""The amdgpu allocator: HAL buffers backed by HSA memory-pool allocations.

Owns `PoolBuffer` (a root `hal.buffer.Buffer` over one `hsa_amd_memory_pool_allocate` block; its
host view is a numpy array over the returned pointer, which under HSA's unified addressing is also
the device address) and `AmdgpuAllocator`, which picks the pool per reference §1.4:
  - HOST_LOCAL requested (bit 0x40): the CPU agent's fine pool -> HOST_LOCAL | DEVICE_VISIBLE;
  - HOST_VISIBLE or a MAPPING usage requested: the GPU's fine pool -> DEVICE_LOCAL | HOST_VISIBLE |
    HOST_COHERENT;
  - anything else (DEVICE_LOCAL, the default): the GPU's coarse pool -> DEVICE_LOCAL (not
    mappable: MAPPING usages are dropped, map_range is PERMISSION_DENIED).
`allocate(..., physical_ordinal=i)` uses GPU i's pools (queue_alloca passes its queue's GPU);
allocator.allocate from the VM uses GPU 0's.
Every block is made accessible (`hsa_amd_agents_allow_access`) to every GPU of the logical device
and to their CPU agents, so any queue may use any buffer. A request larger than the pool's
`ALLOC_MAX_SIZE` is RESOURCE_EXHAUSTED before any HSA call; the pool running out
(HSA_STATUS_ERROR_OUT_OF_RESOURCES) is RESOURCE_EXHAUSTED too, naming the pool and the size.
Immutable host imports (the VM's rodata constants) are copied into a fine-pool block; writable
imports are refused (None) because pinning host memory (`hsa_amd_memory_lock`) is not used.

Lifetime: a buffer's block is freed by `close()`, by a finalizer that captures only the allocator
and the pointer (never the buffer), or by `AmdgpuAllocator.close()` (device close), whichever
comes first; freeing is idempotent. Queue work keeps the buffers it touches alive (`retain`), so
a block is never freed by the finalizer under in-flight work. Threading: the live-block table is
guarded by a lock.
Sources: IREE `allocator.c`, `buffer.c`, `physical_device.c` (pool choice).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence

import numpy as np

from amdgpu_cli.hal.allocator import Allocator
from amdgpu_cli.hal.buffer import Buffer
from amdgpu_cli.hal.enums import (
    BufferCompatibility,
    BufferUsage,
    HalError,
    MemoryAccess,
    MemoryType,
)
from hsa_ffi import HsaError

_HOST_LOCAL_BIT = 1 << 6  # the bit HOST_LOCAL adds to HOST_VISIBLE | HOST_COHERENT
_HOST_VISIBLE = int(MemoryType.HOST_VISIBLE)
_MAPPING = int(BufferUsage.MAPPING_SCOPED | BufferUsage.MAPPING_PERSISTENT)
_MINIMUM_BLOCK = 64  # zero-length buffers still get a real (distinct) device address

HEAP_DEVICE = "device coarse"
HEAP_DEVICE_HOST_VISIBLE = "device fine"
HEAP_HOST = "host fine"
HEAP_MEMORY_TYPES = {
    HEAP_DEVICE: int(MemoryType.DEVICE_LOCAL),
    HEAP_DEVICE_HOST_VISIBLE: int(MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE
                                  | MemoryType.HOST_COHERENT),
    HEAP_HOST: int(MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE),
}


def heap_for(memory_type: int, usage: int) -> str:
    """The heap (pool kind) serving a requested memory type and usage (reference §1.4)."""
    if memory_type & _HOST_LOCAL_BIT:
        return HEAP_HOST
    if memory_type & _HOST_VISIBLE or usage & _MAPPING:
        return HEAP_DEVICE_HOST_VISIBLE
    return HEAP_DEVICE


class PoolBuffer(Buffer):
    """A root buffer over one HSA pool block; `device_address` is valid on every agent."""

    def __init__(self, allocator: AmdgpuAllocator, pointer: int, byte_length: int, *,
                 memory_type: int, usage: int, heap: str):
        storage = np.frombuffer(allocator.ffi.buffer(allocator.ffi.cast("void*", pointer),
                                                     max(byte_length, 1)), dtype=np.uint8)
        super().__init__(storage[:byte_length], memory_type=memory_type, allowed_usage=usage,
                         allowed_access=MemoryAccess.ALL, allocator=allocator)
        self.base_address = pointer
        self.heap = heap
        self.queue_allocated = False  # set by queue_alloca: queue_dealloca then frees the block
        self._free = weakref.finalize(self, allocator._free, pointer)
        self._free.atexit = False

    def close(self) -> None:
        if not self._closed:
            super().close()
            self._free()


def device_address(buffer: Buffer, offset: int = 0) -> int:
    """The device address of byte `offset` of a buffer (or subspan) backed by a PoolBuffer."""
    root = buffer.root
    if not isinstance(root, PoolBuffer):
        raise HalError(f"buffer {buffer!r} was not allocated by an amdgpu allocator; the device "
                       "cannot address it", status="INVALID_ARGUMENT")
    if root.closed:
        raise HalError("buffer is closed", status="FAILED_PRECONDITION")
    return root.base_address + buffer.byte_offset + offset


class AmdgpuAllocator(Allocator):
    """Pool-backed buffers for the physical devices of one logical device."""

    def __init__(self, device, libhsa, physical_devices: Sequence):
        super().__init__(device, "amdgpu")
        self.libhsa = libhsa
        self.ffi = libhsa.ffi
        self.physical_devices = tuple(physical_devices)
        agents = {p.agent.handle: None for p in self.physical_devices}
        agents.update({p.host.handle: None for p in self.physical_devices})
        self._agents = self.ffi.new("hsa_agent_t[]", [{"handle": h} for h in agents])
        # pointer -> weak reference to its buffer (None while being made), every block not freed.
        self._live: dict[int, weakref.ref | None] = {}
        # Re-entrant: a GC inside a locked section may run a buffer finalizer, which calls _free.
        self._blocks_lock = threading.RLock()
        self._closed = False

    def _pool(self, heap: str, physical_ordinal: int):
        physical = self.physical_devices[physical_ordinal]
        return {HEAP_DEVICE: physical.coarse_pool, HEAP_DEVICE_HOST_VISIBLE: physical.fine_pool,
                HEAP_HOST: physical.host_pools.fine}[heap]

    def query_compatibility(self, memory_type, usage, byte_length=0):
        memory_type, usage = int(MemoryType(memory_type)), int(BufferUsage(usage))
        heap = heap_for(memory_type, usage)
        compatibility = BufferCompatibility.ALLOCATABLE | BufferCompatibility.IMPORTABLE
        if usage & int(BufferUsage.TRANSFER):
            compatibility |= BufferCompatibility.QUEUE_TRANSFER
        if usage & int(BufferUsage.DISPATCH):
            compatibility |= BufferCompatibility.QUEUE_DISPATCH
        if byte_length > self._pool(heap, 0).alloc_max_size:
            compatibility &= ~BufferCompatibility.ALLOCATABLE
        if not HEAP_MEMORY_TYPES[heap] & _HOST_VISIBLE:
            usage &= ~_MAPPING
        return compatibility, MemoryType(HEAP_MEMORY_TYPES[heap]), BufferUsage(usage)

    def allocate(self, memory_type, usage, byte_length, *, physical_ordinal: int = 0
                 ) -> PoolBuffer:
        if byte_length < 0:
            raise HalError(f"invalid allocation size {byte_length}", status="INVALID_ARGUMENT")
        if self._closed:
            raise HalError("allocator is closed", status="FAILED_PRECONDITION")
        memory_type, usage = int(MemoryType(memory_type)), int(BufferUsage(usage))
        heap = heap_for(memory_type, usage)
        pool = self._pool(heap, physical_ordinal)
        if not HEAP_MEMORY_TYPES[heap] & _HOST_VISIBLE:
            usage &= ~_MAPPING
        if byte_length > pool.alloc_max_size:
            raise HalError(f"allocation of {byte_length} bytes exceeds the {heap} pool of "
                           f"physical device {physical_ordinal} (at most {pool.alloc_max_size} "
                           "bytes per allocation)", status="RESOURCE_EXHAUSTED")
        pointer = self._allocate_block(pool, max(byte_length, _MINIMUM_BLOCK), heap)
        buffer = PoolBuffer(self, pointer, byte_length, memory_type=HEAP_MEMORY_TYPES[heap],
                            usage=usage, heap=heap)
        with self._blocks_lock:
            self._live[pointer] = weakref.ref(buffer)
        self._record_allocation(buffer)
        return buffer

    def _allocate_block(self, pool, size: int, heap: str) -> int:
        out = self.ffi.new("void**")
        handle = self.ffi.new("hsa_amd_memory_pool_t*", {"handle": pool.handle})[0]
        try:
            self.libhsa.call("hsa_amd_memory_pool_allocate", handle, size, 0, out)
        except HsaError as error:
            raise HalError(f"cannot allocate {size} bytes from the {heap} pool: {error}",
                           status=error.status) from None
        pointer = int(self.ffi.cast("uintptr_t", out[0]))
        with self._blocks_lock:
            self._live[pointer] = None
        try:
            self.libhsa.call("hsa_amd_agents_allow_access", len(self._agents), self._agents,
                             self.ffi.NULL, out[0])
        except HsaError as error:
            self._free(pointer)
            raise HalError(str(error), status=error.status) from None
        return pointer

    def _free(self, pointer: int) -> None:
        """Return a block to its pool (once; nothing after the allocator closed)."""
        with self._blocks_lock:
            if self._live.pop(pointer, None) is None:
                return
        self.libhsa.call("hsa_amd_memory_pool_free", self.ffi.cast("void*", pointer))

    def import_host(self, data, memory_type, usage, *, writable=None):
        """Immutable host bytes are copied into a host-visible block; writable ones cannot be
        aliased by the device without pinning, so they are refused (None)."""
        view = memoryview(data).cast("B")
        if writable is None:
            writable = not view.readonly
        if writable:
            return None
        # Host memory stays mappable once imported, as the bytes it came from were.
        buffer = self.allocate(int(memory_type) | _HOST_VISIBLE, int(usage) | _MAPPING,
                               view.nbytes)
        if view.nbytes:
            buffer._storage_view()[:] = np.frombuffer(view, dtype=np.uint8)
        buffer.allowed_access = MemoryAccess.READ
        return buffer

    @property
    def live_blocks(self) -> int:
        with self._blocks_lock:
            return len(self._live)

    def close(self) -> None:
        """Close every buffer still open and free its block (device close)."""
        self._closed = True
        with self._blocks_lock:
            live = list(self._live.items())
        for pointer, ref in live:
            buffer = ref() if ref is not None else None
            if buffer is not None:
                buffer.close()
            self._free(pointer)

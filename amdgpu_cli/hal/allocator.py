"""Allocator: creates buffers for a device and says which memory types/usages it can serve.

Owns: `Allocator` (the ABC every driver implements: `query_compatibility`, `allocate`, `import_host`,
statistics) and `HostAllocator`, the allocator of host drivers: zeroed 64-byte aligned storage (a
window of a bytearray, no numpy), memory made host-local and device-local at once, mapping usage
always added (as IREE's heap allocator does, because host devices copy through mappings). Host
imports alias the caller's bytes.

Lifetime: a buffer holds its allocator; the allocator holds its device (may be None in tests). Closing
a buffer returns its bytes to the statistics; there is no pooling. Allocations of up to 4 KiB are
carved from 64 KiB slabs, one per thread (`_aligned_bytes`), whose memory goes when their last
buffer does.
Threading: statistics are updated under a lock; allocation itself is thread-safe.
Sources: IREE runtime/src/iree/hal/allocator.h, allocator_heap.c.
"""

from __future__ import annotations

import abc
import threading
import weakref
from typing import TYPE_CHECKING

from amdgpu_cli.hal.buffer import Buffer, _flag_int, allocated_buffer, host_address
from amdgpu_cli.hal.enums import (
    BufferCompatibility,
    BufferUsage,
    HalError,
    MemoryAccess,
    MemoryType,
)

ALLOCATION_ALIGNMENT = 64

# Plain-int masks for the hot paths (enum.Flag arithmetic costs microseconds per operation).
_DEVICE_LOCAL = int(MemoryType.DEVICE_LOCAL)
_DEVICE_VISIBLE = int(MemoryType.DEVICE_VISIBLE)
_HOST_VISIBLE = int(MemoryType.HOST_VISIBLE)
# `~MemoryType.OPTIMAL` is the complement within MemoryType's bits (higher bits drop out).
_NOT_OPTIMAL = int(~MemoryType.OPTIMAL)
_USAGE_TRANSFER = int(BufferUsage.TRANSFER)
_USAGE_DISPATCH = int(BufferUsage.DISPATCH)
_HOST_USAGE = int(BufferUsage.MAPPING_SCOPED | BufferUsage.MAPPING_PERSISTENT
                  | BufferUsage.MAPPING_ACCESS_RANDOM | BufferUsage.TRANSFER)
_HOST_COMPATIBILITY = int(BufferCompatibility.ALLOCATABLE | BufferCompatibility.IMPORTABLE
                          | BufferCompatibility.EXPORTABLE)
_QUEUE_TRANSFER = int(BufferCompatibility.QUEUE_TRANSFER)
_QUEUE_DISPATCH = int(BufferCompatibility.QUEUE_DISPATCH)
_ALLOCATABLE = int(BufferCompatibility.ALLOCATABLE)

if TYPE_CHECKING:
    import numpy as np


class AllocatorStatistics:
    """Byte and buffer counts of one allocator (a plain slotted class: cheap to define)."""

    __slots__ = ("host_bytes_allocated", "host_bytes_freed", "host_bytes_peak",
                 "device_bytes_allocated", "device_bytes_freed", "device_bytes_peak",
                 "live_buffers")

    def __init__(self, host_bytes_allocated: int = 0, host_bytes_freed: int = 0,
                 host_bytes_peak: int = 0, device_bytes_allocated: int = 0,
                 device_bytes_freed: int = 0, device_bytes_peak: int = 0, live_buffers: int = 0):
        self.host_bytes_allocated = host_bytes_allocated
        self.host_bytes_freed = host_bytes_freed
        self.host_bytes_peak = host_bytes_peak
        self.device_bytes_allocated = device_bytes_allocated
        self.device_bytes_freed = device_bytes_freed
        self.device_bytes_peak = device_bytes_peak
        self.live_buffers = live_buffers

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)}" for name in self.__slots__)
        return f"AllocatorStatistics({fields})"


def aligned_storage(byte_length: int, alignment: int = ALLOCATION_ALIGNMENT) -> np.ndarray:
    """A zeroed 1-D uint8 numpy array of `byte_length` bytes whose first byte is
    `alignment`-aligned (the local driver's staging of misaligned bindings)."""
    import numpy as np
    return np.frombuffer(_aligned_bytes(byte_length, alignment)[0], dtype=np.uint8)


# Small allocations are carved from slabs: one bytearray and one address lookup per slab
# instead of per buffer (compiled functions allocate their transients on every call). Chunks
# start 64-byte aligned and are never handed out twice, so each is zeroed; a slab's memory is
# freed when the last buffer carved from it is.
_SLAB_BYTES = 64 * 1024
_SLAB_LIMIT = 4 * 1024  # larger allocations get a bytearray of their own
# Each thread carves from a slab of its own (no lock on the way): `_slabs.slab` is
# [view, address of its first byte, its size, next offset].
_slabs = threading.local()


def _aligned_bytes(byte_length: int, alignment: int = ALLOCATION_ALIGNMENT
                   ) -> tuple[memoryview, int]:
    """`byte_length` zeroed bytes whose first byte is `alignment`-aligned, as a memoryview
    (of a bytearray), and that byte's address."""
    if byte_length <= _SLAB_LIMIT and alignment == ALLOCATION_ALIGNMENT:
        try:
            slab = _slabs.slab
        except AttributeError:  # this thread's first small allocation
            slab = _slabs.slab = [None, 0, -1, 0]  # size -1: made below, even for 0 bytes
        view, base, size, start = slab
        end = start + byte_length
        if end > size:
            view, base = _aligned_bytes(_SLAB_BYTES + _SLAB_LIMIT)
            size = _SLAB_BYTES + _SLAB_LIMIT
            slab[0], slab[1], slab[2] = view, base, size
            start, end = 0, byte_length
        slab[3] = -(-end // ALLOCATION_ALIGNMENT) * ALLOCATION_ALIGNMENT
        return view[start:end], base + start
    try:
        raw = bytearray(byte_length + alignment)
    except (MemoryError, OverflowError):
        raise HalError(f"unable to allocate {byte_length} bytes of host memory",
                       status="RESOURCE_EXHAUSTED") from None
    address = host_address(raw)
    start = -address % alignment
    return memoryview(raw)[start:start + byte_length], address + start


class Allocator(abc.ABC):
    """Creates buffers with the memory types and usages a device supports."""

    vm_type = "hal.allocator"  # its VM ref type (see vm/refs.type_matches)

    def __init__(self, device=None, identifier: str = "allocator"):
        self.device = device
        self.identifier = identifier
        self.statistics = AllocatorStatistics()
        self._lock = threading.Lock()

    @abc.abstractmethod
    def query_compatibility(self, memory_type: int, usage: int, byte_length: int = 0
                            ) -> tuple[BufferCompatibility, MemoryType, BufferUsage]:
        """(compatibility, adjusted memory type, adjusted usage) for a would-be allocation."""

    @abc.abstractmethod
    def allocate(self, memory_type: int, usage: int, byte_length: int) -> Buffer:
        """A new zero-initialised buffer; raises RESOURCE_EXHAUSTED / INVALID_ARGUMENT."""

    def import_host(self, data, memory_type: int, usage: int, *, writable: bool | None = None
                    ) -> Buffer | None:
        """A buffer aliasing host bytes (hal.allocator.import); None if this allocator cannot."""
        return None

    # `--print_statistics`: count a buffer as freed when it is garbage-collected, not only when
    # it is closed (a weakref finalizer per buffer: off unless asked for).
    track_frees = False

    def _record_allocation(self, buffer: Buffer) -> None:
        if self.track_frees:
            buffer._freed_by = weakref.finalize(
                buffer, self._count_free, buffer._memory_type & _DEVICE_LOCAL == _DEVICE_LOCAL,
                buffer._allocation_size)
        with self._lock:
            stats = self.statistics
            stats.live_buffers += 1
            if buffer._memory_type & _DEVICE_LOCAL == _DEVICE_LOCAL:
                stats.device_bytes_allocated += buffer._allocation_size
                live = stats.device_bytes_allocated - stats.device_bytes_freed
                if live > stats.device_bytes_peak:  # not max(): a call fewer per allocation
                    stats.device_bytes_peak = live
            else:
                stats.host_bytes_allocated += buffer._allocation_size
                live = stats.host_bytes_allocated - stats.host_bytes_freed
                if live > stats.host_bytes_peak:
                    stats.host_bytes_peak = live

    def _on_buffer_closed(self, buffer: Buffer) -> None:
        finalizer = getattr(buffer, "_freed_by", None)
        if finalizer is not None:
            finalizer.detach()  # counted now, not again when it is collected
        self._count_free(buffer._memory_type & _DEVICE_LOCAL == _DEVICE_LOCAL,
                         buffer._allocation_size)

    def _count_free(self, device_local: bool, size: int) -> None:
        with self._lock:
            stats = self.statistics
            stats.live_buffers -= 1
            if device_local:
                stats.device_bytes_freed += size
            else:
                stats.host_bytes_freed += size

    def statistics_text(self) -> str:
        """iree_hal_allocator_statistics_format's lines (after IREE's `[[ ... ]]` header)."""
        stats = self.statistics
        lines = []
        for label, peak, allocated, freed in (
                ("  HOST_LOCAL", stats.host_bytes_peak, stats.host_bytes_allocated,
                 stats.host_bytes_freed),
                ("DEVICE_LOCAL", stats.device_bytes_peak, stats.device_bytes_allocated,
                 stats.device_bytes_freed)):
            lines.append(f"{label}: {peak:12d}B peak / {allocated:12d}B allocated / "
                         f"{freed:12d}B freed / {allocated - freed:12d}B live\n")
        return "".join(lines)


# HostAllocator._query's answers by (memory type, usage) as compiled code passes them (plain
# ints): a module asks the same few questions on every call.
_QUERY_ANSWERS: dict[tuple[int, int], tuple[int, int, int]] = {}


class HostAllocator(Allocator):
    """Host memory for host drivers: every buffer is host-local and device-local host bytes."""

    def __init__(self, device=None, identifier: str = "host", *, limit_bytes: int | None = None):
        super().__init__(device, identifier)
        self.limit_bytes = limit_bytes

    def query_compatibility(self, memory_type, usage, byte_length=0):
        compatibility, memory_type, usage = self._query(memory_type, usage)
        return (BufferCompatibility(compatibility), MemoryType(memory_type), BufferUsage(usage))

    @staticmethod
    def _query(memory_type, usage) -> tuple[int, int, int]:
        """query_compatibility's answer as plain ints."""
        # Compiled code passes non-negative ints: those skip _flag_int's call.
        if memory_type.__class__ is not int or memory_type < 0:
            memory_type = _flag_int(memory_type, MemoryType)
        if usage.__class__ is not int or usage < 0:
            usage = _flag_int(usage, BufferUsage)
        compatibility = _HOST_COMPATIBILITY
        # Queue use needs DEVICE_VISIBLE, so mistakes that would break on a GPU show up here too.
        if memory_type & _DEVICE_VISIBLE:
            if usage & _USAGE_TRANSFER:
                compatibility |= _QUEUE_TRANSFER
            if usage & _USAGE_DISPATCH:
                compatibility |= _QUEUE_DISPATCH
        memory_type = (memory_type | _HOST_VISIBLE) & _NOT_OPTIMAL
        usage |= _HOST_USAGE
        return compatibility, memory_type, usage

    def allocate(self, memory_type, usage, byte_length):
        memory_type, usage = self.resolve(memory_type, usage, byte_length)
        if self.limit_bytes is not None:
            stats = self.statistics
            live = (stats.host_bytes_allocated - stats.host_bytes_freed
                    + stats.device_bytes_allocated - stats.device_bytes_freed)
            if live + byte_length > self.limit_bytes:
                raise HalError(f"allocation of {byte_length} bytes exceeds the allocator limit of "
                               f"{self.limit_bytes} bytes", status="RESOURCE_EXHAUSTED")
        storage, address = _aligned_bytes(byte_length)
        buffer = allocated_buffer(storage, address, memory_type, usage, self)
        self._record_allocation(buffer)
        return buffer

    def resolve(self, memory_type, usage, byte_length) -> tuple[int, int]:
        """The memory type and usage (plain ints) a buffer of these parameters gets; raises
        INVALID_ARGUMENT for a negative size or parameters it cannot allocate. Allocations of
        host memory made elsewhere (a device's queue pool) check through it too."""
        if byte_length < 0:
            raise HalError(f"invalid allocation size {byte_length}", status="INVALID_ARGUMENT")
        if type(self).query_compatibility is HostAllocator.query_compatibility:
            answer = _QUERY_ANSWERS.get((memory_type, usage))
            if answer is None:
                answer = self._query(memory_type, usage)
                if (memory_type.__class__ is int and usage.__class__ is int
                        and len(_QUERY_ANSWERS) < 256):
                    _QUERY_ANSWERS[memory_type, usage] = answer
            compatibility, memory_type, usage = answer
        else:  # a subclass answers differently
            compatibility, memory_type, usage = self.query_compatibility(memory_type, usage,
                                                                         byte_length)
            memory_type, usage = _flag_int(memory_type, MemoryType), _flag_int(usage, BufferUsage)
        if not compatibility & _ALLOCATABLE:
            raise HalError("allocator cannot allocate a buffer with the given parameters",
                           status="INVALID_ARGUMENT")
        return memory_type, usage

    def import_host(self, data, memory_type, usage, *, writable=None):
        """Alias host bytes without copying. Read-only sources need SHARING_IMMUTABLE usage."""
        view = memoryview(data).cast("B")
        if writable is None:
            writable = not view.readonly
        if not writable and not BufferUsage(usage) & BufferUsage.SHARING_IMMUTABLE:
            return None
        _, memory_type, usage = self.query_compatibility(memory_type, usage, view.nbytes)
        # An import that is not writable aliases the bytes read-only, even when they are not.
        storage = view if writable else view.toreadonly()
        access = MemoryAccess.ALL if writable else MemoryAccess.READ
        return Buffer(storage, memory_type=memory_type, allowed_usage=usage, allowed_access=access,
                      allocator=None)

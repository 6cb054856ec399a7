"""TransientPool: the memory a local-task device's queue allocations (`queue_alloca`) come from.

IREE's local-task queue serves transient allocations from a pool of 64 MiB slabs rather than the
heap, and releases them on `queue_dealloca`; so do we. A slab is an anonymous mapping (pages are
committed by the OS on first touch, so an idle slab costs address space only). Reservations are
rounded up to 64 bytes (the HAL's buffer alignment) and placed first-fit; released ranges merge
with their free neighbours. A request larger than a slab gets a slab of its own size.

A reservation whose buffer is never deallocated (a result handed back to the caller) is released
when the buffer is garbage-collected (the buffer holds the reservation; its `__del__` releases). The contents of pool memory are whatever the last user
left: transients are not zeroed, as in IREE.

`stats()` gives the numbers IREE puts in pool memory events: bytes reserved, bytes free, bytes
committed (slab bytes), budget limit (0: none), reservation count, slab count.
Threading: every method takes the pool's lock.
"""

from __future__ import annotations

import mmap
import threading

from amdgpu_cli.hal.buffer import host_address

SLAB_BYTES = 64 << 20
GRANULE = 64


class Reservation:
    """A reserved range of a slab. Released by `TransientPool.release`, or when the last
    reference goes (the buffer made over it was dropped without a dealloca)."""

    __slots__ = ("pool", "slab", "offset", "length", "address", "fresh", "profile_id",
                 "released")

    def __init__(self, pool: "TransientPool", slab: "_Slab", offset: int, length: int,
                 fresh: bool, profile_id: int):
        self.pool = pool
        self.slab = slab
        self.offset = offset
        self.length = length
        self.address = slab.address + offset
        self.fresh = fresh
        self.profile_id = profile_id  # reservations are numbered from 1 per pool
        self.released = False

    def __del__(self):
        if not self.released:
            self.pool.release(self)


class _Slab:
    __slots__ = ("memory", "view", "address", "size", "free", "high_water")

    def __init__(self, size: int):
        self.memory = mmap.mmap(-1, size)
        self.view = memoryview(self.memory)
        self.address = host_address(self.memory)
        self.size = size
        self.free = [[0, size]]  # [offset, length], sorted by offset, never adjacent
        self.high_water = 0  # bytes below this were reserved at least once


class TransientPool:
    def __init__(self, slab_bytes: int = SLAB_BYTES):
        self.slab_bytes = slab_bytes
        self._slabs: list[_Slab] = []
        self._lock = threading.Lock()
        self.bytes_reserved = 0
        self.reservation_count = 0
        self._reservations_made = 0

    def reserve(self, byte_length: int) -> Reservation:
        length = max(GRANULE, -(-byte_length // GRANULE) * GRANULE)
        with self._lock:
            for slab in self._slabs:
                for i, (offset, size) in enumerate(slab.free):
                    if size >= length:
                        return self._take(slab, i, offset, size, length)
            slab = _Slab(max(self.slab_bytes, length))
            self._slabs.append(slab)
            return self._take(slab, 0, 0, slab.size, length)

    def _take(self, slab: _Slab, index: int, offset: int, size: int, length: int) -> Reservation:
        if size == length:
            del slab.free[index]
        else:
            slab.free[index] = [offset + length, size - length]
        fresh = offset + length > slab.high_water
        slab.high_water = max(slab.high_water, offset + length)
        self.bytes_reserved += length
        self.reservation_count += 1
        self._reservations_made += 1
        return Reservation(self, slab, offset, length, fresh, self._reservations_made)

    def release(self, reservation: Reservation) -> None:
        with self._lock:
            if reservation.released:
                return
            reservation.released = True
            slab = reservation.slab
            start, end = reservation.offset, reservation.offset + reservation.length
            free = slab.free
            i = 0
            while i < len(free) and free[i][0] < start:
                i += 1
            if i and free[i - 1][0] + free[i - 1][1] == start:  # merge with the one before
                i -= 1
                start = free[i][0]
                del free[i]
            if i < len(free) and free[i][0] == end:  # and the one after
                end += free[i][1]
                del free[i]
            free.insert(i, [start, end - start])
            self.bytes_reserved -= reservation.length
            self.reservation_count -= 1

    def stats(self) -> tuple[int, int, int, int, int, int]:
        with self._lock:
            committed = sum(slab.size for slab in self._slabs)
            return (self.bytes_reserved, committed - self.bytes_reserved, committed, 0,
                    self.reservation_count, len(self._slabs))

    def storage(self, reservation: Reservation, byte_length: int) -> memoryview:
        return reservation.slab.view[reservation.offset:reservation.offset + byte_length]

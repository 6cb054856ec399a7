"""The kernarg ring of one host queue: 64-byte blocks of host memory the GPU reads kernargs from.

A ring of `block_count` (a power of two) 64-byte blocks over memory the host queue allocated from
the paired CPU agent's kernarg-init pool (reference §5.3, IREE `util/kernarg_ring.h`). Positions
are monotonic block counts: `write` (next free block) and `reclaimed` (every block before it is
free again). A span never wraps: when it would cross the end of the ring the tail fragment is
skipped, so a multi-block span is contiguous. Space is reclaimed only when the queue's completion
drain retires the epoch that used it (`reclaim(position)`, the write position recorded at the end
of that epoch's submission) — never on garbage collection.

Threading: one producer at a time (the host queue's submission lock) allocates and may `rewind` its
own allocations when a submission is abandoned before publication; the completion thread reclaims.
A full ring blocks the producer on a Condition until a reclaim, the queue's failure (`check`
raises it) or the deadline (DEADLINE_EXCEEDED).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from amdgpu_cli.hal.enums import HalError

BLOCK_SIZE = 64
MAX_ALIGNMENT = BLOCK_SIZE  # every span starts on a block, so any alignment up to 64 holds


class KernargRing:
    def __init__(self, base_address: int, block_count: int, ffi):
        if block_count <= 0 or block_count & (block_count - 1):
            raise HalError(f"kernarg ring capacity {block_count} blocks must be a power of two",
                           status="INVALID_ARGUMENT")
        self.base_address = base_address
        self.block_count = block_count
        self._ffi = ffi
        self._write = 0
        self._reclaimed = 0
        self._cond = threading.Condition()

    @property
    def position(self) -> int:
        """The write position (blocks handed out so far, tail skips included)."""
        return self._write

    @property
    def in_use(self) -> int:
        """Blocks allocated and not yet reclaimed."""
        with self._cond:
            return self._write - self._reclaimed

    def _span(self, blocks: int) -> tuple[int, int] | None:
        """(start position, end position) for `blocks`, or None if the ring is too full now."""
        offset = self._write % self.block_count
        start = self._write if offset + blocks <= self.block_count else \
            self._write + self.block_count - offset  # skip the tail: spans never wrap
        end = start + blocks
        return (start, end) if end - self._reclaimed <= self.block_count else None

    def allocate(self, size: int, alignment: int = 16, *, deadline: float,
                 check: Callable[[], None] = lambda: None) -> tuple[int, memoryview]:
        """(device address, writable view of `size` bytes); blocks while the ring is full."""
        if alignment <= 0 or alignment & (alignment - 1) or alignment > MAX_ALIGNMENT:
            raise HalError(f"kernarg alignment {alignment} must be a power of two <= "
                           f"{MAX_ALIGNMENT}", status="INVALID_ARGUMENT")
        blocks = max(1, -(-size // BLOCK_SIZE))
        if blocks > self.block_count:
            raise HalError(f"{size} bytes of kernargs exceed the kernarg ring "
                           f"({self.block_count * BLOCK_SIZE} bytes)", status="RESOURCE_EXHAUSTED")
        with self._cond:
            while (span := self._span(blocks)) is None:
                check()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise HalError("kernarg ring did not drain: no earlier submission completed in "
                                   "time", status="DEADLINE_EXCEEDED")
                self._cond.wait(min(remaining, 0.05))
            start, self._write = span
        address = self.base_address + (start % self.block_count) * BLOCK_SIZE
        return address, memoryview(self._ffi.buffer(self._ffi.cast("uint8_t*", address), size))

    def rewind(self, position: int) -> None:
        """Give back everything allocated since `position` (an abandoned, unpublished submission).
        """
        with self._cond:
            self._write = position
            self._cond.notify_all()

    def reclaim(self, position: int) -> None:
        """Every block before `position` is free again (its epoch completed)."""
        with self._cond:
            if position > self._reclaimed:
                self._reclaimed = position
                self._cond.notify_all()

    def wake(self) -> None:
        """Wake a blocked allocator so it re-runs its `check` (the queue failed or is closing)."""
        with self._cond:
            self._cond.notify_all()

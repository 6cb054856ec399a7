"""Buffer: a byte range of one allocation, with IREE's memory type, usage and access rules.

Owns: the allocation's host-visible storage (one flat memoryview of bytes that every subspan
shares), the range checks (`validate_range`), the usage/access/memory-type checks IREE applies
before a buffer is used, and the host-side transfer helpers (`map_bytes`, `read`, `write`, `fill`,
`copy_from`; `host_range` for native code), which work on those bytes without numpy. `map_range`,
`as_array` and `_storage_view()` return numpy views of the same memory (numpy is imported there,
on first use; a root keeps its numpy view, so writes through either are visible in both).

A root buffer's storage is any 1-D, C-contiguous byte buffer: a memoryview (host allocators: a
64-byte aligned window of a bytearray; host imports: the caller's bytes) or a 1-D uint8 numpy
array (the amdgpu driver's pool blocks). Its host address comes from cffi (`host_address`).

Lifetime: a buffer holds its allocator (buffer -> allocator -> device); a subspan holds its root
buffer. `close()` releases the storage of a root buffer (subspans only drop their reference); closing
twice is harmless, any later access raises FAILED_PRECONDITION.

Threading: buffers have no locks; queue ordering (semaphores/fences) orders writers and readers.
Sources: IREE runtime/src/iree/hal/buffer.h, buffer.c (validate_range, validate_usage, fill pattern
rules, allocation preserve counter).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import _cffi_backend

from amdgpu_cli.hal.enums import (
    WHOLE_BUFFER,
    BufferUsage,
    HalError,
    MemoryAccess,
    MemoryType,
)

# Plain-int masks for the hot paths (enum.Flag arithmetic costs microseconds per operation). The
# public attributes stay enums; `_flag_int` normalises a value the way constructing the enum does.
_READ = int(MemoryAccess.READ)
_WRITE = int(MemoryAccess.WRITE)
_DISCARD = int(MemoryAccess.DISCARD)
_WRITE_OR_DISCARD = _WRITE | _DISCARD
_ACCESS_ALL = int(MemoryAccess.ALL)
_ACCESS_ANY = int(MemoryAccess.ANY)
# What survives `MemoryAccess(x) & ~(MAY_ALIAS | UNALIGNED | ANY)`: the complement is taken within
# the flag's bits, so bits above them drop out too.
_ACCESS_CHECKED = int(~(MemoryAccess.MAY_ALIAS | MemoryAccess.UNALIGNED | MemoryAccess.ANY))
_HOST_VISIBLE = int(MemoryType.HOST_VISIBLE)
_MAPPING = int(BufferUsage.MAPPING_SCOPED | BufferUsage.MAPPING_PERSISTENT)

if TYPE_CHECKING:
    import numpy as np

# cffi's backend alone (no compiled module): ~1 ms to import where ctypes costs ~5 ms.
_new = object.__new__
_ffi = _cffi_backend.FFI()
_cast = _ffi.cast
_from_buffer = _ffi.from_buffer


def host_address(data) -> int:
    """The host address of the first byte of a contiguous buffer-protocol object (read-only
    ones included). Valid while `data` lives and is not resized."""
    return int(_cast("uintptr_t", _from_buffer(data)))


def _byte_storage(storage) -> memoryview:
    """A root buffer's storage as a flat memoryview of bytes; TypeError unless it is 1-D,
    C-contiguous uint8 (a numpy uint8 array and a memoryview of format "B" both are)."""
    if storage.__class__ is not memoryview:
        try:
            storage = memoryview(storage)
        except TypeError:
            raise TypeError("a root buffer needs 1-D uint8 storage") from None
    if storage.format != "B" or storage.ndim != 1 or not storage.c_contiguous:
        raise TypeError("a root buffer needs 1-D uint8 storage")
    return storage


def _flag_int(value, flag_type) -> int:
    """int(flag_type(value)) without building the enum for the usual non-negative ints."""
    kind = type(value)
    if kind is flag_type:
        return int(value)  # flag values are never negative
    if kind is int and value >= 0:
        return value
    return int(flag_type(value))


def _pattern_bytes(pattern: int | bytes, pattern_length: int | None = None) -> bytes:
    """The fill pattern as bytes: an int gives its low `pattern_length` bytes, little-endian."""
    if isinstance(pattern, (bytes, bytearray, memoryview)):
        data = bytes(pattern)
        if pattern_length is not None and pattern_length != len(data):
            raise HalError("fill pattern length does not match the pattern bytes",
                           status="INVALID_ARGUMENT")
    else:
        if pattern_length not in (1, 2, 4, 8):
            raise HalError(f"fill patterns must be 1, 2, 4 or 8 bytes (pattern_length={pattern_length})",
                           status="INVALID_ARGUMENT")
        data = (int(pattern) & ((1 << (8 * pattern_length)) - 1)).to_bytes(pattern_length, "little")
    if len(data) not in (1, 2, 4, 8):
        raise HalError(f"fill patterns must be 1, 2, 4 or 8 bytes (pattern_length={len(data)})",
                       status="INVALID_ARGUMENT")
    return data


def allocated_buffer(storage: memoryview, address: int, memory_type: int, usage: int,
                     allocator) -> Buffer:
    """`Buffer(storage, memory_type=..., allowed_usage=..., allocator=...)` with every access
    allowed, for an allocator's fresh storage (a flat byte memoryview whose first byte is at
    `address`) and plain non-negative int flags: no checks, and the address already known.
    Every queue allocation of a compiled function makes one."""
    buffer = _new(Buffer)
    buffer._storage = storage
    buffer._array = None
    buffer._root = None
    buffer.allocator = allocator
    buffer._memory_type = memory_type
    buffer._allowed_usage = usage
    buffer._allowed_access = _ACCESS_ALL
    buffer.byte_offset = 0
    buffer.byte_length = buffer._allocation_size = len(storage)
    buffer._preserve_count = 1
    buffer._closed = False
    buffer._address = (storage, address)
    return buffer


class Buffer:
    """A [byte_offset, byte_offset + byte_length) window of an allocation."""

    vm_type = "hal.buffer"  # its VM ref type (see vm/refs.type_matches)

    def __init__(self, storage, *, memory_type: int, allowed_usage: int,
                 allowed_access: int = _ACCESS_ALL, allocator=None, byte_offset: int = 0,
                 byte_length: int | None = None, root: Buffer | None = None):
        if root is None:
            storage = _byte_storage(storage)
            allocation_size = storage.nbytes
        else:
            allocation_size = root.allocation_size
        if byte_length is None:
            byte_length = allocation_size - byte_offset
        if byte_offset < 0 or byte_length < 0 or byte_offset + byte_length > allocation_size:
            raise HalError(f"buffer range [{byte_offset}, {byte_offset + byte_length}) is outside "
                           f"the allocation of {allocation_size} bytes", status="OUT_OF_RANGE")
        self._storage = storage if root is None else None  # memoryview of the allocation
        self._array = None  # a root's numpy view of _storage, made by _storage_view
        self._root = root
        self.allocator = allocator if root is None else root.allocator
        # Plain ints; the enum-typed `memory_type` / `allowed_usage` / `allowed_access` are properties.
        # What allocators pass, non-negative ints, needs no _flag_int call.
        if memory_type.__class__ is not int or memory_type < 0:
            memory_type = _flag_int(memory_type, MemoryType)
        if allowed_usage.__class__ is not int or allowed_usage < 0:
            allowed_usage = _flag_int(allowed_usage, BufferUsage)
        if allowed_access.__class__ is not int or allowed_access < 0:
            allowed_access = _flag_int(allowed_access, MemoryAccess)
        self._memory_type = memory_type
        self._allowed_usage = allowed_usage
        self._allowed_access = allowed_access
        self.byte_offset = byte_offset
        self.byte_length = byte_length
        self._allocation_size = allocation_size
        # IREE's allocation "preserve" counter (hal.buffer.allocation.preserve/discard/is_terminal).
        self._preserve_count = 1
        self._closed = False
        self._address = None  # (storage, its base address), cached by _storage_address

    # -- identity ------------------------------------------------------------------------------
    @property
    def memory_type(self) -> MemoryType:
        return MemoryType(self._memory_type)

    @memory_type.setter
    def memory_type(self, value) -> None:
        self._memory_type = _flag_int(value, MemoryType)

    @property
    def allowed_usage(self) -> BufferUsage:
        return BufferUsage(self._allowed_usage)

    @allowed_usage.setter
    def allowed_usage(self, value) -> None:
        self._allowed_usage = _flag_int(value, BufferUsage)

    @property
    def allowed_access(self) -> MemoryAccess:
        return MemoryAccess(self._allowed_access)

    @allowed_access.setter
    def allowed_access(self, value) -> None:
        self._allowed_access = _flag_int(value, MemoryAccess)

    @property
    def root(self) -> Buffer:
        """The buffer that owns the allocation (self for a root buffer)."""
        return self if self._root is None else self._root

    @property
    def allocation_size(self) -> int:
        return self._allocation_size

    @property
    def closed(self) -> bool:
        return self._closed or (self._root is not None and self._root.closed)

    def __len__(self) -> int:
        return self.byte_length

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.byte_length} bytes at +{self.byte_offset} "
                f"type={self.memory_type!r} usage=0x{int(self.allowed_usage):x}>")

    # -- lifetime ------------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._address = None
        if self._root is None:
            if self.allocator is not None:
                self.allocator._on_buffer_closed(self)
            self._storage = None
            self._array = None

    def __enter__(self) -> Buffer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- allocation preserve counter -----------------------------------------------------------
    def allocation_preserve(self) -> None:
        self.root._preserve_count += 1

    def allocation_discard(self) -> bool:
        """Decrement; True when this was the last reference (the allocation may be released)."""
        root = self.root
        was_last = root._preserve_count == 1
        root._preserve_count = max(0, root._preserve_count - 1)
        return was_last

    def allocation_is_terminal(self) -> bool:
        return self.root._preserve_count == 1

    # -- checks --------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed or (self._root is not None and self._root.closed):  # `closed`, inline
            raise HalError("buffer is closed", status="FAILED_PRECONDITION")

    def validate_range(self, offset: int, length: int = WHOLE_BUFFER) -> int:
        """Check [offset, offset+length) lies in this buffer; returns the length (-1 resolved)."""
        if offset < 0 or offset > self.byte_length:
            raise HalError(f"offset {offset} is outside the buffer of {self.byte_length} bytes",
                           status="OUT_OF_RANGE")
        if length == WHOLE_BUFFER:
            return self.byte_length - offset
        if length < 0 or offset + length > self.byte_length:
            raise HalError(f"range [{offset}, {offset + length}) is outside the buffer of "
                           f"{self.byte_length} bytes", status="OUT_OF_RANGE")
        return length

    def validate_usage(self, required: int) -> None:
        if type(required) is int and required >= 0 and not required & ~self._allowed_usage:
            return  # nothing missing even before the enum's complement drops unknown bits
        missing = BufferUsage(required) & ~self.allowed_usage
        if missing:
            raise HalError(f"buffer usage 0x{int(self.allowed_usage):x} lacks required usage "
                           f"0x{int(missing):x}", status="PERMISSION_DENIED")

    def validate_access(self, required: int) -> None:
        required = int(required) & _ACCESS_CHECKED
        # DISCARD is a hint that needs WRITE, not a separate permission.
        if required & _DISCARD:
            required = (required & ~_DISCARD) | _WRITE
        missing = required & ~self._allowed_access
        if missing:
            raise HalError(f"buffer access 0x{int(self.allowed_access):x} lacks required access "
                           f"0x{int(missing):x}", status="PERMISSION_DENIED")

    def validate_memory_type(self, required: int) -> None:
        if type(required) is int and required >= 0 and not required & ~self._memory_type:
            return  # nothing missing even before the enum's complement drops unknown bits
        missing = MemoryType(required) & ~self.memory_type
        if missing:
            raise HalError(f"buffer memory type 0x{int(self.memory_type):x} lacks required type "
                           f"0x{int(missing):x}", status="PERMISSION_DENIED")

    # -- views ---------------------------------------------------------------------------------
    def subspan(self, offset: int, length: int = WHOLE_BUFFER) -> Buffer:
        """A buffer over [offset, offset+length) of this one, sharing its allocation."""
        if (offset == 0 and self._root is None and not self._closed
                and (length == self.byte_length or length == WHOLE_BUFFER)):
            return self  # all of an open root buffer: every tensor a compiled function returns
        self._check_open()
        length = self.validate_range(offset, length)
        if offset == 0 and length == self.byte_length:
            return self
        return Buffer(None, memory_type=self._memory_type, allowed_usage=self._allowed_usage,
                      allowed_access=self._allowed_access, byte_offset=self.byte_offset + offset,
                      byte_length=length, root=self.root)

    def _byte_view(self) -> memoryview:
        """The whole allocation's storage (a flat memoryview of bytes)."""
        storage = self._storage if self._root is None else self._root._storage
        if storage is None:
            raise HalError("buffer is closed", status="FAILED_PRECONDITION")
        return storage

    def _bytes(self, offset: int, length: int) -> memoryview:
        """[offset, offset + length) of this buffer as a memoryview of the storage, unchecked."""
        start = self.byte_offset + offset
        return self._byte_view()[start:start + length]

    def _storage_view(self) -> np.ndarray:
        """The whole allocation as a 1-D uint8 numpy array over the storage (writable unless the
        storage is read-only), made once per root."""
        root = self if self._root is None else self._root
        array = root._array
        if array is None:
            import numpy as np
            array = root._array = np.frombuffer(root._byte_view(), dtype=np.uint8)
        return array

    def _storage_address(self) -> tuple[memoryview, int]:
        """(the allocation's storage, the host address of its first byte), cached per root."""
        root = self if self._root is None else self._root
        cached = root._address
        if cached is None:
            storage = root._byte_view()
            cached = root._address = (storage, host_address(storage))
        return cached

    def host_range(self, access: int, offset: int = 0, length: int = WHOLE_BUFFER
                   ) -> tuple[memoryview, int, int]:
        """map_range's checks for `access` (an int) and the range, then (the allocation's storage,
        the host address of byte `offset`, the length with WHOLE_BUFFER resolved): what native
        code takes instead of a view. Every binding of every CPU dispatch is resolved through it,
        so the usual case (an open, mappable, plain Buffer whose address is cached) is one call."""
        root = self if self._root is None else self._root
        cached = root._address
        if cached is not None and type(self) is Buffer and not self._closed and not root._closed:
            required = access & _ACCESS_CHECKED
            if required & _DISCARD:  # DISCARD is a hint that needs WRITE
                required = (required & ~_DISCARD) | _WRITE
            size = self.byte_length - offset if length == WHOLE_BUFFER else length
            if (self._memory_type & _HOST_VISIBLE and self._allowed_usage & _MAPPING
                    and not required & ~self._allowed_access
                    and offset >= 0 and size >= 0 and offset + size <= self.byte_length):
                return cached[0], cached[1] + self.byte_offset + offset, size
        # Anything else: the checks one at a time, raising the exact error.
        self._check_mappable(access)
        length = self.validate_range(offset, length)
        storage, base = self._storage_address()
        return storage, base + self.byte_offset + offset, length

    def map_bytes(self, access: int, offset: int = 0, length: int = WHOLE_BUFFER) -> memoryview:
        """map_range without numpy: the same checks, then the range as a memoryview of the
        storage (writable when the storage is; `access` is what the checks enforce)."""
        storage, _, length = self.host_range(access, offset, length)
        start = self.byte_offset + offset
        return storage[start:start + length]

    def map_range(self, access: int = MemoryAccess.READ, offset: int = 0,
                  length: int = WHOLE_BUFFER) -> np.ndarray:
        """A uint8 numpy view of the range; read-only unless `access` includes WRITE/DISCARD."""
        access = int(access)
        _, _, length = self.host_range(access, offset, length)
        start = self.byte_offset + offset
        view = self._storage_view()[start:start + length]
        if not access & _WRITE_OR_DISCARD:
            view.flags.writeable = False  # a fresh slice: the storage's own view stays as it is
        return view

    def _check_mappable(self, access: int) -> None:
        """map_range's checks before the range: open, host-visible, mapping usage, `access`."""
        root = self._root
        if self._closed or (root is not None and root.closed):
            raise HalError("buffer is closed", status="FAILED_PRECONDITION")
        if not self._memory_type & _HOST_VISIBLE:
            raise HalError("buffer is not host-visible and cannot be mapped",
                           status="PERMISSION_DENIED")
        if not self._allowed_usage & _MAPPING:
            raise HalError("buffer was not allocated with a MAPPING usage", status="PERMISSION_DENIED")
        required = access & _ACCESS_CHECKED
        if required & _DISCARD:
            required = (required & ~_DISCARD) | _WRITE
        if required & ~self._allowed_access:
            self.validate_access(access)  # raises with the message

    # -- host transfers (mapping-based, like iree_hal_buffer_map_read/write/fill/copy) ----------
    def read(self, offset: int = 0, length: int = WHOLE_BUFFER) -> bytes:
        return bytes(self.map_bytes(_READ, offset, length))

    def write(self, offset: int, data) -> None:
        """Copy the bytes of `data` (any C-contiguous buffer) to [offset, offset + their size)."""
        src = memoryview(data).cast("B")
        self.map_bytes(_WRITE, offset, src.nbytes)[:] = src

    def fill(self, offset: int, length: int, pattern: int | bytes, pattern_length: int | None = None
             ) -> None:
        """Repeat `pattern` over the range; offset and length must be multiples of its size."""
        data = _pattern_bytes(pattern, pattern_length)
        length = self.validate_range(offset, length)
        if offset % len(data) or length % len(data):
            raise HalError(f"fill offset {offset} and length {length} must be multiples of the "
                           f"pattern length {len(data)}", status="INVALID_ARGUMENT")
        fill_bytes(self.map_bytes(_WRITE, offset, length), data)

    def copy_from(self, source: Buffer, source_offset: int, target_offset: int, length: int) -> None:
        """Copy `length` bytes from `source` (memmove semantics: overlap is allowed here)."""
        src = source.map_bytes(_READ, source_offset, length)
        # memoryview slice assignment copies with memmove when the ranges overlap.
        self.map_bytes(_WRITE, target_offset, src.nbytes)[:] = src

    def as_array(self, dtype="u1", access: int = MemoryAccess.READ) -> np.ndarray:
        """The whole buffer viewed as a 1-D numpy array of `dtype`."""
        return self.map_range(access).view(dtype)


def fill_bytes(target, pattern: bytes) -> None:
    """Fill a writable byte buffer (a memoryview, a uint8 array) with a repeated 1/2/4/8-byte
    pattern; its length is a multiple of the pattern's. The filled prefix is copied onto the rest,
    doubling each step: no temporary as large as the range is made."""
    target = memoryview(target).cast("B")
    size = target.nbytes
    if not size:
        return
    filled = len(pattern)
    target[:filled] = pattern
    while filled < size:
        step = min(filled, size - filled)
        target[filled:filled + step] = target[:step]
        filled += step


def buffers_overlap(a: Buffer, a_offset: int, a_length: int, b: Buffer, b_offset: int,
                    b_length: int) -> bool:
    """True when the two ranges share bytes of the same allocation."""
    if a.root is not b.root:
        return False
    a0 = a.byte_offset + a_offset
    b0 = b.byte_offset + b_offset
    return a0 < b0 + b_length and b0 < a0 + a_length

"""BufferView: a buffer seen as a shaped, typed tensor (shape, element type, encoding).

Owns: byte-length validation of a view against its buffer, `assert_matches` (the checks of the VM's
`hal.buffer_view.assert`, in IREE's order), and numpy conversion (`to_numpy`, `from_numpy`: numpy is
imported there, on first use).
A view holds its buffer (a subspan when created over part of one); it owns nothing to close.
Sources: IREE runtime/src/iree/hal/buffer_view.h/.c, modules/hal/module.c (buffer_view.assert).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from amdgpu_cli.hal.buffer import Buffer
from amdgpu_cli.hal.enums import (
    WHOLE_BUFFER,
    BufferUsage,
    EncodingType,
    HalError,
    MemoryAccess,
    MemoryType,
    element_bit_count,
    element_is_integer,
    element_numerical_type,
    element_packed_byte_count,
    element_type_from_dtype,
    element_type_to_dtype,
    format_element_type,
)

if TYPE_CHECKING:
    import numpy as np


def dense_byte_length(shape, element_type: int) -> int:
    """Bytes a dense row-major tensor of `shape` needs (sub-byte elements pack)."""
    return element_packed_byte_count(element_type, math.prod(shape))


# A plain int: comparing with the enum member costs more, on every hal.buffer_view.create.
_DENSE_ROW_MAJOR = int(EncodingType.DENSE_ROW_MAJOR)
_new = object.__new__


class BufferView:

    vm_type = "hal.buffer_view"  # its VM ref type (see vm/refs.type_matches)
    def __init__(self, buffer: Buffer, shape, element_type: int,
                 encoding_type: int = EncodingType.DENSE_ROW_MAJOR):
        shape = tuple(map(int, shape))
        if shape and min(shape) < 0:
            raise HalError(f"negative dimension in shape {shape}", status="INVALID_ARGUMENT")
        self.buffer = buffer
        self.shape = shape
        self.element_type = int(element_type)
        self.encoding_type = int(encoding_type)
        if self.encoding_type == _DENSE_ROW_MAJOR:  # dense_byte_length without its wrapper call
            needed = element_packed_byte_count(self.element_type, math.prod(shape))
            if needed > buffer.byte_length:
                raise HalError(f"buffer of {buffer.byte_length} bytes is too small for a "
                               f"{self.type_string()} view ({needed} bytes)", status="OUT_OF_RANGE")

    @classmethod
    def create(cls, buffer: Buffer, offset: int, length: int, shape, element_type: int,
               encoding_type: int = EncodingType.DENSE_ROW_MAJOR) -> BufferView:
        """hal.buffer_view.create: a view over buffer[offset:offset+length] (a subspan if partial)."""
        return cls(buffer.subspan(offset, length), shape, element_type, encoding_type)

    @classmethod
    def of_ints(cls, buffer: Buffer, offset: int, length: int, shape: tuple[int, ...],
                element_type: int, encoding_type: int) -> BufferView:
        """`create` for what compiled code passes, on every call that returns a tensor: a tuple
        of Python ints for the shape and plain ints for the types. The same checks and errors,
        without the conversions."""
        buffer = buffer.subspan(offset, length)
        for dim in shape:
            if dim < 0:
                raise HalError(f"negative dimension in shape {shape}", status="INVALID_ARGUMENT")
        view = _new(cls)
        view.buffer = buffer
        view.shape = shape
        view.element_type = element_type
        view.encoding_type = encoding_type
        if encoding_type == _DENSE_ROW_MAJOR:  # element_packed_byte_count, inline
            needed = (math.prod(shape) * (element_type & 0xFF) + 7) // 8
            if needed > buffer.byte_length:
                raise HalError(f"buffer of {buffer.byte_length} bytes is too small for a "
                               f"{view.type_string()} view ({needed} bytes)", status="OUT_OF_RANGE")
        return view

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def element_count(self) -> int:
        return math.prod(self.shape)

    @property
    def byte_length(self) -> int:
        return dense_byte_length(self.shape, self.element_type)

    def dim(self, index: int) -> int:
        if not 0 <= index < len(self.shape):
            raise HalError(f"dimension {index} out of range for rank {len(self.shape)}",
                           status="OUT_OF_RANGE")
        return self.shape[index]

    def type_string(self) -> str:
        """`2x3xf32` (`f32` for rank 0), as IREE's tools print a buffer view's shape and type."""
        return "x".join([*map(str, self.shape), format_element_type(self.element_type)])

    def __repr__(self) -> str:
        return f"<BufferView {self.type_string()}>"

    def assert_matches(self, message: str, element_type: int, encoding_type: int, shape) -> None:
        """hal.buffer_view.assert: encoding, element type, rank, then each dimension."""
        if self.encoding_type != EncodingType.OPAQUE and self.encoding_type != encoding_type:
            raise HalError(f"{message} encoding mismatch; expected {encoding_type} but have "
                           f"{self.encoding_type}", status="INVALID_ARGUMENT")
        actual = self.element_type
        # The exact match (every call of a compiled function) first: the rest is for the others.
        if actual != element_type and element_numerical_type(actual) != 0 and not (
                element_is_integer(actual) and element_is_integer(element_type)
                and element_bit_count(actual) == element_bit_count(element_type)):
            raise HalError(f"{message} element type mismatch; expected "
                           f"{format_element_type(element_type)} (0x{element_type:08X}) but have "
                           f"{format_element_type(actual)} (0x{actual:08X})",
                           status="INVALID_ARGUMENT")
        shape = tuple(map(int, shape))
        if len(shape) != len(self.shape):
            raise HalError(f"{message} shape rank mismatch; expected {len(shape)} but have "
                           f"{len(self.shape)}", status="INVALID_ARGUMENT")
        for i, (want, have) in enumerate(zip(shape, self.shape)):
            if want != have:
                raise HalError(f"{message} shape dimension {i} mismatch; expected {want} but have "
                               f"{have}", status="INVALID_ARGUMENT")

    def to_numpy(self) -> np.ndarray:
        """A copy of the contents as a numpy array (needs a numpy dtype and a mappable buffer)."""
        dtype = element_type_to_dtype(self.element_type)
        if dtype is None:
            raise HalError(f"element type {format_element_type(self.element_type)} has no numpy "
                           f"equivalent", status="UNIMPLEMENTED")
        raw = self.buffer.map_range(MemoryAccess.READ, 0, self.byte_length)
        return raw.view(dtype).reshape(self.shape).copy()

    @classmethod
    def from_numpy(cls, allocator, array, *, element_type: int | None = None,
                   memory_type: int = MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE,
                   usage: int = BufferUsage.DEFAULT | BufferUsage.MAPPING_SCOPED) -> BufferView:
        """Allocate a buffer from `allocator`, copy `array` in, return a dense view over it."""
        import numpy as np
        array = np.asarray(array)
        if element_type is None:
            element_type = element_type_from_dtype(array.dtype)
        dtype = element_type_to_dtype(element_type)
        if dtype is not None:
            array = array.astype(dtype, copy=False)
        data = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
        buffer = allocator.allocate(memory_type, usage, data.nbytes)
        buffer.write(0, data)
        return cls(buffer, array.shape, element_type)


__all__ = ["BufferView", "dense_byte_length", "WHOLE_BUFFER"]

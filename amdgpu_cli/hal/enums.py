"""HAL enumerations, status codes and the HAL error type.

Owns every numeric value the HAL shares with IREE: memory types, memory access, buffer usage, element
and encoding types, command-buffer modes and categories, execution stages, dispatch flags, collective
ops, queue affinity and semaphore payload limits. The values are IREE's (runtime/src/iree/hal/buffer.h,
buffer_view.h, command_buffer.h, semaphore.h, queue.h; hal VM module v7) because compiled .vmfb code
passes them as plain integers. Also the element-type string grammar of IREE's string_util.c
(`f32`, `i1`, `si8`, `bf16`, `f8E4M3FN`, `*64`) and the mapping to numpy dtypes (numpy is imported
only by the two functions that convert, on first use).

No state, no threads; import-safe from every other HAL module.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from amdgpu_cli.errors import STATUS_NAMES, AmdgpuCliError

if TYPE_CHECKING:
    import numpy as np


# IREE status codes (what vm.fail, fence.query and failed semaphores carry), from errors.py's table.
StatusCode = enum.IntEnum("StatusCode", {name: code for code, name in enumerate(STATUS_NAMES)},
                          module=__name__)


class HalError(AmdgpuCliError):
    """A HAL failure, carrying the IREE status it corresponds to (`status` name, `code` number)."""

    status = "INTERNAL"

    def __init__(self, message: str, *, status: str | StatusCode | None = None):
        if isinstance(status, StatusCode):
            status = status.name
        if status is not None and status not in StatusCode.__members__:
            raise ValueError(f"unknown IREE status name {status!r}")
        super().__init__(message, status=status)

    @property
    def code(self) -> StatusCode:
        return StatusCode[self.status]


class MemoryType(enum.IntFlag):
    NONE = 0
    OPTIMAL = 1 << 0
    HOST_VISIBLE = 1 << 1
    HOST_COHERENT = 1 << 2
    HOST_CACHED = 1 << 3
    HOST_LOCAL = HOST_VISIBLE | HOST_COHERENT | (1 << 6)  # 0x46
    OPTIMAL_FOR_HOST = OPTIMAL | HOST_LOCAL
    DEVICE_VISIBLE = 1 << 4
    DEVICE_LOCAL = DEVICE_VISIBLE | (1 << 5)  # 0x30
    OPTIMAL_FOR_DEVICE = OPTIMAL | DEVICE_LOCAL


class MemoryAccess(enum.IntFlag):
    NONE = 0
    READ = 1 << 0
    WRITE = 1 << 1
    DISCARD = 1 << 2
    DISCARD_WRITE = WRITE | DISCARD
    MAY_ALIAS = 1 << 3
    UNALIGNED = 1 << 4
    ANY = 1 << 5
    ALL = READ | WRITE | DISCARD


class BufferUsage(enum.IntFlag):
    NONE = 0
    TRANSFER_SOURCE = 1 << 0
    TRANSFER_TARGET = 1 << 1
    TRANSFER = TRANSFER_SOURCE | TRANSFER_TARGET
    DISPATCH_INDIRECT_PARAMETERS = 1 << 8
    DISPATCH_UNIFORM_READ = 1 << 9
    DISPATCH_STORAGE_READ = 1 << 10
    DISPATCH_STORAGE_WRITE = 1 << 11
    DISPATCH_STORAGE = DISPATCH_STORAGE_READ | DISPATCH_STORAGE_WRITE
    DISPATCH_IMAGE_READ = 1 << 12
    DISPATCH_IMAGE_WRITE = 1 << 13
    DISPATCH_IMAGE = DISPATCH_IMAGE_READ | DISPATCH_IMAGE_WRITE
    DISPATCH = (DISPATCH_INDIRECT_PARAMETERS | DISPATCH_UNIFORM_READ | DISPATCH_STORAGE
                | DISPATCH_IMAGE)
    SHARING_EXPORT = 1 << 16
    SHARING_REPLICATE = 1 << 17
    SHARING_CONCURRENT = 1 << 18
    SHARING_IMMUTABLE = 1 << 19
    MAPPING_SCOPED = 1 << 24
    MAPPING_PERSISTENT = 1 << 25
    MAPPING_OPTIONAL = 1 << 26
    MAPPING_ACCESS_RANDOM = 1 << 27
    MAPPING_ACCESS_SEQUENTIAL_WRITE = 1 << 28
    MAPPING = MAPPING_SCOPED | MAPPING_PERSISTENT
    DEFAULT = TRANSFER | DISPATCH_STORAGE  # 0xC03


class BufferCompatibility(enum.IntFlag):
    NONE = 0
    ALLOCATABLE = 1 << 0
    IMPORTABLE = 1 << 1
    EXPORTABLE = 1 << 2
    QUEUE_TRANSFER = 1 << 10
    QUEUE_DISPATCH = 1 << 11
    LOW_PERFORMANCE = 1 << 20


class NumericalType(enum.IntEnum):
    UNKNOWN = 0x00
    INTEGER = 0x10
    INTEGER_SIGNED = 0x11
    INTEGER_UNSIGNED = 0x12
    BOOLEAN = 0x13
    FLOAT = 0x20
    FLOAT_IEEE = 0x21
    FLOAT_BRAIN = 0x22
    FLOAT_COMPLEX = 0x23
    FLOAT_8_E5M2 = 0x24
    FLOAT_8_E4M3FN = 0x25
    FLOAT_8_E5M2_FNUZ = 0x26
    FLOAT_8_E4M3_FNUZ = 0x27
    FLOAT_8_E8M0_FNU = 0x28


def make_element_type(numerical_type: int, bit_count: int) -> int:
    """IREE's element type encoding: numerical type in bits 24..31, bit count in bits 0..7."""
    return ((int(numerical_type) & 0xFF) << 24) | (int(bit_count) & 0xFF)


class ElementType(enum.IntEnum):
    """The named element types; any `make_element_type` value is also valid where an int is taken."""

    NONE = make_element_type(NumericalType.UNKNOWN, 0)
    OPAQUE_8 = make_element_type(NumericalType.UNKNOWN, 8)
    OPAQUE_16 = make_element_type(NumericalType.UNKNOWN, 16)
    OPAQUE_32 = make_element_type(NumericalType.UNKNOWN, 32)
    OPAQUE_64 = make_element_type(NumericalType.UNKNOWN, 64)
    BOOL_8 = make_element_type(NumericalType.BOOLEAN, 8)
    INT_4 = make_element_type(NumericalType.INTEGER, 4)
    SINT_4 = make_element_type(NumericalType.INTEGER_SIGNED, 4)
    UINT_4 = make_element_type(NumericalType.INTEGER_UNSIGNED, 4)
    INT_8 = make_element_type(NumericalType.INTEGER, 8)
    SINT_8 = make_element_type(NumericalType.INTEGER_SIGNED, 8)
    UINT_8 = make_element_type(NumericalType.INTEGER_UNSIGNED, 8)
    INT_16 = make_element_type(NumericalType.INTEGER, 16)
    SINT_16 = make_element_type(NumericalType.INTEGER_SIGNED, 16)
    UINT_16 = make_element_type(NumericalType.INTEGER_UNSIGNED, 16)
    INT_32 = make_element_type(NumericalType.INTEGER, 32)
    SINT_32 = make_element_type(NumericalType.INTEGER_SIGNED, 32)
    UINT_32 = make_element_type(NumericalType.INTEGER_UNSIGNED, 32)
    INT_64 = make_element_type(NumericalType.INTEGER, 64)
    SINT_64 = make_element_type(NumericalType.INTEGER_SIGNED, 64)
    UINT_64 = make_element_type(NumericalType.INTEGER_UNSIGNED, 64)
    FLOAT_16 = make_element_type(NumericalType.FLOAT_IEEE, 16)
    FLOAT_32 = make_element_type(NumericalType.FLOAT_IEEE, 32)
    FLOAT_64 = make_element_type(NumericalType.FLOAT_IEEE, 64)
    BFLOAT_16 = make_element_type(NumericalType.FLOAT_BRAIN, 16)
    COMPLEX_FLOAT_64 = make_element_type(NumericalType.FLOAT_COMPLEX, 64)
    COMPLEX_FLOAT_128 = make_element_type(NumericalType.FLOAT_COMPLEX, 128)
    FLOAT_8_E5M2 = make_element_type(NumericalType.FLOAT_8_E5M2, 8)
    FLOAT_8_E4M3_FN = make_element_type(NumericalType.FLOAT_8_E4M3FN, 8)
    FLOAT_8_E5M2_FNUZ = make_element_type(NumericalType.FLOAT_8_E5M2_FNUZ, 8)
    FLOAT_8_E4M3_FNUZ = make_element_type(NumericalType.FLOAT_8_E4M3_FNUZ, 8)
    FLOAT_8_E8M0_FNU = make_element_type(NumericalType.FLOAT_8_E8M0_FNU, 8)


def element_numerical_type(element_type: int) -> int:
    return (int(element_type) >> 24) & 0xFF


def element_bit_count(element_type: int) -> int:
    return int(element_type) & 0xFF


def element_is_integer(element_type: int) -> bool:
    """True for the integer family (signless, signed, unsigned, bool): all INTEGER bits set."""
    nt = element_numerical_type(element_type)
    return (nt & NumericalType.INTEGER) == NumericalType.INTEGER


def element_is_float(element_type: int) -> bool:
    nt = element_numerical_type(element_type)
    return (nt & NumericalType.FLOAT) == NumericalType.FLOAT


def element_dense_byte_count(element_type: int) -> int:
    """Bytes one element takes when stored unpacked: ceil(bits / 8)."""
    return (element_bit_count(element_type) + 7) // 8


def element_packed_byte_count(element_type: int, element_count: int) -> int:
    """Bytes `element_count` elements take when sub-byte elements pack (8 x i4 -> 4 bytes)."""
    return (element_count * element_bit_count(element_type) + 7) // 8


# Names that are not prefix + bit count (IREE's string_util.c matches them whole, before `f`).
F8_ELEMENT_NAMES = {
    NumericalType.FLOAT_8_E5M2: "f8E5M2",
    NumericalType.FLOAT_8_E4M3FN: "f8E4M3FN",
    NumericalType.FLOAT_8_E5M2_FNUZ: "f8E5M2FNUZ",
    NumericalType.FLOAT_8_E4M3_FNUZ: "f8E4M3FNUZ",
    NumericalType.FLOAT_8_E8M0_FNU: "f8E8M0FNU",
}
# Name prefixes in the order IREE tries them when parsing (`i1` and the f8 names first, whole).
ELEMENT_NAME_PREFIXES = (
    ("i", NumericalType.INTEGER),
    ("si", NumericalType.INTEGER_SIGNED),
    ("ui", NumericalType.INTEGER_UNSIGNED),
    ("f", NumericalType.FLOAT_IEEE),
    ("bf", NumericalType.FLOAT_BRAIN),
    ("cf", NumericalType.FLOAT_COMPLEX),
    ("x", NumericalType.UNKNOWN),
    ("*", NumericalType.UNKNOWN),
)
_FORMAT_PREFIX = {
    NumericalType.INTEGER: "i",
    NumericalType.INTEGER_SIGNED: "si",
    NumericalType.INTEGER_UNSIGNED: "ui",
    NumericalType.FLOAT_IEEE: "f",
    NumericalType.FLOAT_BRAIN: "bf",
    NumericalType.FLOAT_COMPLEX: "cf",
}


def format_element_type(element_type: int) -> str:
    """FLOAT_32 -> `f32`, BOOL_8 -> `i1`, opaque -> `*N`, as iree_hal_format_element_type.

    Parsing the names (with IREE's C number quirks) is `amdgpu_cli.tooling.element_types`'s job.
    """
    nt = element_numerical_type(element_type)
    bits = element_bit_count(element_type)
    if bits == 8 and nt in F8_ELEMENT_NAMES:
        return F8_ELEMENT_NAMES[nt]
    if nt == NumericalType.BOOLEAN:
        return "i1"
    return f"{_FORMAT_PREFIX.get(nt, '*')}{bits}"


# Element type -> the little-endian numpy dtype string (made a dtype only when asked for).
_NUMPY_DTYPE_CODES = {
    ElementType.BOOL_8: "?",
    ElementType.INT_8: "i1",
    ElementType.SINT_8: "i1",
    ElementType.UINT_8: "u1",
    ElementType.INT_16: "<i2",
    ElementType.SINT_16: "<i2",
    ElementType.UINT_16: "<u2",
    ElementType.INT_32: "<i4",
    ElementType.SINT_32: "<i4",
    ElementType.UINT_32: "<u4",
    ElementType.INT_64: "<i8",
    ElementType.SINT_64: "<i8",
    ElementType.UINT_64: "<u8",
    ElementType.FLOAT_16: "<f2",
    ElementType.FLOAT_32: "<f4",
    ElementType.FLOAT_64: "<f8",
    ElementType.COMPLEX_FLOAT_64: "<c8",
    ElementType.COMPLEX_FLOAT_128: "<c16",
}


def element_type_to_dtype(element_type: int) -> np.dtype | None:
    """The little-endian numpy dtype for an element type; None where numpy has none (bf16, f8, i4)."""
    code = _NUMPY_DTYPE_CODES.get(element_type)
    if code is None:
        return None
    import numpy as np
    return np.dtype(code)


def element_type_from_dtype(dtype: np.dtype) -> int:
    """numpy dtype -> element type; signless integers (`i32`) for signed kinds, as iree-run-module does."""
    import numpy as np
    dtype = np.dtype(dtype)
    kind, size = dtype.kind, dtype.itemsize * 8
    if kind == "b":
        return ElementType.BOOL_8
    if kind == "i":
        return make_element_type(NumericalType.INTEGER, size)
    if kind == "u":
        return make_element_type(NumericalType.INTEGER_UNSIGNED, size)
    if kind == "f":
        return make_element_type(NumericalType.FLOAT_IEEE, size)
    if kind == "c":
        return make_element_type(NumericalType.FLOAT_COMPLEX, size)
    raise HalError(f"numpy dtype {dtype} has no HAL element type", status="INVALID_ARGUMENT")


class EncodingType(enum.IntEnum):
    OPAQUE = 0
    DENSE_ROW_MAJOR = 1


class CommandBufferMode(enum.IntFlag):
    DEFAULT = 0
    ONE_SHOT = 1 << 0
    ALLOW_INLINE_EXECUTION = 1 << 4
    UNVALIDATED = 1 << 5
    UNRETAINED = 1 << 6
    RETAIN_PROFILE_METADATA = 1 << 7
    RETAIN_DISPATCH_METADATA = 1 << 8


class CommandCategory(enum.IntFlag):
    NONE = 0
    TRANSFER = 1 << 0
    DISPATCH = 1 << 1
    ANY = TRANSFER | DISPATCH


class ExecutionStage(enum.IntFlag):
    NONE = 0
    COMMAND_ISSUE = 1 << 0
    COMMAND_PROCESS = 1 << 1
    DISPATCH = 1 << 2
    TRANSFER = 1 << 3
    COMMAND_RETIRE = 1 << 4
    HOST = 1 << 5


class AccessScope(enum.IntFlag):
    NONE = 0
    INDIRECT_COMMAND_READ = 1 << 0
    CONSTANT_READ = 1 << 1
    DISPATCH_READ = 1 << 2
    DISPATCH_WRITE = 1 << 3
    TRANSFER_READ = 1 << 4
    TRANSFER_WRITE = 1 << 5
    HOST_READ = 1 << 6
    HOST_WRITE = 1 << 7
    MEMORY_READ = 1 << 8
    MEMORY_WRITE = 1 << 9


class DispatchFlags(enum.IntFlag):
    NONE = 0
    DYNAMIC_INDIRECT_PARAMETERS = 1 << 0
    STATIC_INDIRECT_PARAMETERS = 1 << 1
    CUSTOM_DIRECT_ARGUMENTS = 1 << 2
    DYNAMIC_INDIRECT_ARGUMENTS = 1 << 3
    STATIC_INDIRECT_ARGUMENTS = 1 << 4
    ALLOW_INLINE_EXECUTION = 1 << 5
    BORROW_RESOURCE_LIFETIMES = 1 << 6


class CollectiveKind(enum.IntEnum):
    ALL_GATHER = 0
    ALL_REDUCE = 1
    ALL_TO_ALL = 2
    BROADCAST = 3
    REDUCE = 4
    REDUCE_SCATTER = 5
    SEND = 6
    RECV = 7
    SEND_RECV = 8


class CollectiveReduction(enum.IntEnum):
    NONE = 0
    SUM = 1
    PRODUCT = 2
    MINIMUM = 3
    MAXIMUM = 4
    AVERAGE = 5


class CollectiveElementType(enum.IntEnum):
    SINT_8 = 0
    UINT_8 = 1
    SINT_16 = 2
    UINT_16 = 3
    SINT_32 = 4
    UINT_32 = 5
    SINT_64 = 6
    UINT_64 = 7
    FLOAT_16 = 8
    FLOAT_32 = 9
    FLOAT_64 = 10
    BFLOAT_16 = 11


def unpack_collective_op(op: int) -> tuple[CollectiveKind, CollectiveReduction, CollectiveElementType]:
    """The packed u32 `iree_hal_collective_op_t`: kind byte 0, reduction byte 1, element type byte 2."""
    try:
        return (CollectiveKind(op & 0xFF), CollectiveReduction((op >> 8) & 0xFF),
                CollectiveElementType((op >> 16) & 0xFF))
    except ValueError as exc:
        raise HalError(f"unknown collective operation 0x{op:08x}", status="INVALID_ARGUMENT") from exc


class SemaphoreCompatibility(enum.IntFlag):
    NONE = 0
    HOST_WAIT = 1 << 0
    DEVICE_WAIT = 1 << 1
    HOST_SIGNAL = 1 << 2
    DEVICE_SIGNAL = 1 << 3
    HOST_ONLY = HOST_WAIT | HOST_SIGNAL
    DEVICE_ONLY = DEVICE_WAIT | DEVICE_SIGNAL
    ALL = HOST_ONLY | DEVICE_ONLY


# Queue affinity is a 64-bit mask of queues; all bits set (-1 as i64) means "any queue".
QUEUE_AFFINITY_ANY = (1 << 64) - 1

# Semaphore payloads stay below INT32_MAX (Vulkan's minimum timeline difference); a payload at or
# above FAILURE_VALUE means the semaphore failed.
SEMAPHORE_MAX_VALUE = 2147483647 - 1
SEMAPHORE_FAILURE_VALUE = SEMAPHORE_MAX_VALUE + 1

# A length of -1 (IREE_HAL_WHOLE_BUFFER) means "to the end of the buffer/slot".
WHOLE_BUFFER = -1


def normalize_queue_affinity(affinity: int) -> int:
    """Accept i64 -1 (what compiled code passes) as well as the u64 mask."""
    return int(affinity) & QUEUE_AFFINITY_ANY

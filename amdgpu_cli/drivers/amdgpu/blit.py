"""Launch planning for the device-library fill and copy kernels (device_binaries/src/blit.cl).

`plan_fill()` and `plan_copy()` choose the kernel for a transfer, write its 24-byte kernarg struct
and size its grid, exactly as IREE's `device/blit.c` does (reference §7 "Blit launch", "Fill kernel
choice", "Copy kernel choice"). The caller (queue operations, command-buffer replay) puts the
kernargs in the kernarg ring and emits one dispatch packet with setup 3, the kernel's `KernelInfo`
for the object and segment sizes, and the grid and workgroup sizes planned here.

Launch shape: workgroup = (wavefront size, 1, 1); the kernels run grid-stride loops over "blocks"
(one or more elements per work-item), so the grid is the block count capped at
compute units x 4 workgroups x workgroup size work-items, split across y only if it would not fit in
32 bits. A transfer of zero blocks (zero length) still gets a launch: the 1x1x1 no-op grid IREE
emits, whose single work-item finds nothing to do; so a queue operation always has its packet.

Kernarg structs (IREE `device/blit.h`): fill {target u64, element_length u64, pattern u64},
copy {source u64, target u64, element_length u64}; element_length counts the kernel's elements,
except for the two *_unaligned_x16 kernels where it is a byte length. Pure: no HSA calls.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from amdgpu_cli.hal.enums import HalError

PREFIX = "iree_hal_amdgpu_device_buffer_"
FILL_X1 = PREFIX + "fill_x1"
FILL_X2 = PREFIX + "fill_x2"
FILL_X4 = PREFIX + "fill_x4"
FILL_X8 = PREFIX + "fill_x8"
FILL_BLOCK_X16 = PREFIX + "fill_block_x16"
FILL_BLOCK_UNALIGNED_X16 = PREFIX + "fill_block_unaligned_x16"
COPY_X1 = PREFIX + "copy_x1"
COPY_BLOCK_X4 = PREFIX + "copy_block_x4"
COPY_BLOCK_X8 = PREFIX + "copy_block_x8"
COPY_BLOCK_X16 = PREFIX + "copy_block_x16"
COPY_BLOCK_UNALIGNED_X16 = PREFIX + "copy_block_unaligned_x16"

BLIT_KERNELS = (FILL_X1, FILL_X2, FILL_X4, FILL_X8, FILL_BLOCK_X16, FILL_BLOCK_UNALIGNED_X16,
                COPY_X1, COPY_BLOCK_X4, COPY_BLOCK_X8, COPY_BLOCK_X16, COPY_BLOCK_UNALIGNED_X16)

WORKGROUPS_PER_COMPUTE_UNIT = 4
UNALIGNED_MIN_BYTES = 128  # below this the byte kernels (fill_x1.., copy_x1) are used
VECTOR_BYTES = 16  # the *_x16 kernels' element
FILL_X16_BLOCK = 4  # 16-byte elements per work-item in fill_block_x16 / _unaligned_x16
FILL_X4_BLOCK = 16  # u32 per work-item in fill_x4
COPY_X16_BLOCK = 1
COPY_X8_BLOCK = 8
COPY_X4_BLOCK = 16
KERNARGS_SIZE = 24
_U32_MAX = 0xFFFFFFFF

_KERNARGS = struct.Struct("<QQQ")
_FILL_BY_PATTERN = {1: FILL_X1, 2: FILL_X2, 4: FILL_X4, 8: FILL_X8}
_PATTERN_MASKS = {1: 0xFF, 2: 0xFFFF, 4: 0xFFFFFFFF, 8: (1 << 64) - 1}
_PATTERN_REPEATS = {1: 0x0101010101010101, 2: 0x0001000100010001, 4: 0x0000000100000001, 8: 1}
# Copy kernels for aligned transfers, widest first: (alignment, kernel, elements per block).
_ALIGNED_COPIES = ((16, COPY_BLOCK_X16, COPY_X16_BLOCK), (8, COPY_BLOCK_X8, COPY_X8_BLOCK),
                   (4, COPY_BLOCK_X4, COPY_X4_BLOCK))


@dataclass(frozen=True)
class BlitLaunch:
    kernel: str  # kernel name, without `.kd`
    kernargs: bytes  # the 24-byte struct
    grid_size: tuple[int, int, int]  # work-items
    workgroup_size: tuple[int, int, int]


def extend_pattern(pattern: int, pattern_length: int) -> int:
    """The 1/2/4/8-byte `pattern` repeated to fill 8 bytes."""
    return (pattern & _PATTERN_MASKS[pattern_length]) * _PATTERN_REPEATS[pattern_length]


def grid_size(block_count: int, *, compute_units: int, wavefront_size: int) -> tuple[int, int, int]:
    """Work-items for `block_count` blocks: capped, one row while it fits in u32, else split over y."""
    max_workgroups = min(compute_units * WORKGROUPS_PER_COMPUTE_UNIT, _U32_MAX)
    items = min(block_count, max_workgroups * wavefront_size)
    if items == 0:
        return (1, 1, 1)
    if items <= _U32_MAX:
        return (items, 1, 1)
    x = 1 + (items - 1) // _U32_MAX  # the smallest x that keeps y in range
    return (x, 1 + (items - 1) // x, 1)


def _launch(kernel: str, kernargs: bytes, blocks: int, compute_units: int, wavefront_size: int) -> BlitLaunch:
    if compute_units <= 0 or wavefront_size not in (32, 64):
        raise HalError(f"blit launch needs compute units > 0 and a wavefront size of 32 or 64, got "
                       f"{compute_units} and {wavefront_size}", status="INVALID_ARGUMENT")
    return BlitLaunch(kernel, kernargs, grid_size(blocks, compute_units=compute_units, wavefront_size=wavefront_size),
                      (wavefront_size, 1, 1))


def _ceil_div(value: int, divisor: int) -> int:
    return -(-value // divisor)


def plan_fill(target_address: int, length: int, pattern: int, pattern_length: int, *,
              compute_units: int, wavefront_size: int) -> BlitLaunch:
    """Fill `length` bytes at `target_address` with the little-endian `pattern_length`-byte pattern.

    The target address and length must be multiples of the pattern length (1, 2, 4 or 8)."""
    if pattern_length not in _FILL_BY_PATTERN:
        raise HalError(f"fill pattern length {pattern_length} is not 1, 2, 4 or 8", status="INVALID_ARGUMENT")
    if target_address % pattern_length or length % pattern_length:
        raise HalError(f"fill target {target_address:#x} and length {length} must be multiples of the "
                       f"{pattern_length}-byte pattern", status="INVALID_ARGUMENT")
    pattern &= _PATTERN_MASKS[pattern_length]
    if target_address % VECTOR_BYTES == 0 and length % VECTOR_BYTES == 0:
        kernel, count = FILL_BLOCK_X16, length // VECTOR_BYTES
        blocks, pattern = _ceil_div(count, FILL_X16_BLOCK), extend_pattern(pattern, pattern_length)
    elif pattern_length <= 4 and target_address % 4 == 0 and length % 4 == 0:
        kernel, count = FILL_X4, length // 4
        blocks, pattern = _ceil_div(count, FILL_X4_BLOCK), extend_pattern(pattern, pattern_length)
    elif length >= UNALIGNED_MIN_BYTES:
        kernel, count = FILL_BLOCK_UNALIGNED_X16, length  # a byte length for this kernel
        blocks, pattern = _ceil_div(length // VECTOR_BYTES, FILL_X16_BLOCK), extend_pattern(pattern, pattern_length)
    else:
        kernel, count = _FILL_BY_PATTERN[pattern_length], length // pattern_length
        blocks = count
    return _launch(kernel, _KERNARGS.pack(target_address, count, pattern), blocks, compute_units, wavefront_size)


def plan_copy(source_address: int, target_address: int, length: int, *,
              compute_units: int, wavefront_size: int) -> BlitLaunch:
    """Copy `length` bytes from `source_address` to `target_address` (ranges must not overlap)."""
    for alignment, kernel, block in _ALIGNED_COPIES:
        if source_address % alignment == 0 and target_address % alignment == 0 and length % alignment == 0:
            count = length // alignment
            blocks = _ceil_div(count, block)
            break
    else:
        if length >= UNALIGNED_MIN_BYTES:
            kernel, count = COPY_BLOCK_UNALIGNED_X16, length  # a byte length for this kernel
            blocks = _ceil_div(length // VECTOR_BYTES, COPY_X16_BLOCK)
        else:
            kernel, count = COPY_X1, length
            blocks = length
    return _launch(kernel, _KERNARGS.pack(source_address, target_address, count), blocks,
                   compute_units, wavefront_size)

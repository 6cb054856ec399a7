"""Kernel records and the HAL ABI kernarg layout of IREE-compiled AMDGPU dispatches.

`KernelInfo` is what the driver knows about one kernel on one physical device: the HSA symbol's
kernel object and segment sizes, the workgroup size and binding/constant counts of the HAL export,
and the code-object metadata's `.args`. `hal_kernargs()` writes the kernarg segment for one
dispatch and `decode_hal_kernargs()` reads one back (for tests and the dispatch-log checks).

Layout (reference §6.1, IREE `device/dispatch.h`), with B bindings and C constants:

    [0, 8B)              u64 device address of each binding, in binding order
    [8B, 8B + 4C)        u32 constants
    padding              zeros up to E = 8B + align8(4C)
    [E, ...)             implicit ("hidden") arguments, only when kernarg_segment_size > E;
                         the segment is then max(kernarg_segment_size, E + 124) bytes

The implicit arguments are written where the metadata's `hidden_*` `.args` say (LLVM code object
v5); a kernel whose metadata lists none gets the §6.1 layout relative to E. Values: block counts =
workgroup counts, group sizes = workgroup size, grid_dims = 3, dynamic LDS size as given; every
other hidden argument (remainders, global offsets, printf/hostcall buffers, queues...) is zero.

Everything per kernel (offsets, the zero-filled template with the constant hidden values) is
computed once when the `KernelInfo` is made; per dispatch only the bindings, constants, block
counts and dynamic LDS size are packed. Pure: no HSA calls, no state.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from amdgpu_cli.formats.amdgpu_code_object import KernelArg
from amdgpu_cli.hal.enums import HalError

IMPLICIT_ARGS_SIZE = 124  # bytes of the hidden block IREE covers (LLVM reserves 256)
MAX_KERNARG_ALIGNMENT = 64
GRID_DIMS = 3

# The §6.1 layout of the hidden block, relative to E: (value_kind, offset, size). Used when the
# metadata lists no hidden arguments; the fields IREE leaves zero are listed for decoding.
DEFAULT_IMPLICIT_ARGS: tuple[tuple[str, int, int], ...] = (
    ("hidden_block_count_x", 0, 4), ("hidden_block_count_y", 4, 4), ("hidden_block_count_z", 8, 4),
    ("hidden_group_size_x", 12, 2), ("hidden_group_size_y", 14, 2), ("hidden_group_size_z", 16, 2),
    ("hidden_remainder_x", 18, 2), ("hidden_remainder_y", 20, 2), ("hidden_remainder_z", 22, 2),
    ("hidden_global_offset_x", 40, 8), ("hidden_global_offset_y", 48, 8),
    ("hidden_global_offset_z", 56, 8), ("hidden_grid_dims", 64, 2),
    ("hidden_printf_buffer", 72, 8), ("hidden_hostcall_buffer", 80, 8),
    ("hidden_multigrid_sync_arg", 88, 8), ("hidden_heap_v1", 96, 8), ("hidden_default_queue", 104, 8),
    ("hidden_completion_action", 112, 8), ("hidden_dynamic_lds_size", 120, 4),
)

_BLOCK_COUNT_KINDS = ("hidden_block_count_x", "hidden_block_count_y", "hidden_block_count_z")
_GROUP_SIZE_KINDS = ("hidden_group_size_x", "hidden_group_size_y", "hidden_group_size_z")
_DYNAMIC_LDS_KIND = "hidden_dynamic_lds_size"
_INT_STRUCTS = {size: struct.Struct("<" + letter) for size, letter in ((1, "B"), (2, "H"), (4, "I"), (8, "Q"))}
_U32_MASK = 0xFFFFFFFF


def _align8(value: int) -> int:
    return (value + 7) & ~7


@dataclass(frozen=True)
class _Layout:
    """Per-kernel kernarg plan, derived once from a KernelInfo."""

    size: int  # bytes hal_kernargs returns
    explicit_end: int  # E
    bindings: struct.Struct  # B little-endian u64 at 0
    constants: struct.Struct  # C little-endian u32 at 8B
    template: bytes  # `size` bytes: zeros plus the hidden values that never change per dispatch
    block_counts: tuple[tuple[struct.Struct, int, int], ...]  # (Struct, offset, axis)
    dynamic_lds: tuple[struct.Struct, int] | None
    hidden: tuple[tuple[str, struct.Struct, int], ...]  # every hidden argument: (kind, Struct, offset)


@dataclass(frozen=True)
class KernelInfo:
    """One kernel of a loaded executable on one physical device (all sizes in bytes)."""

    name: str
    symbol: str  # `<name>.kd`
    kernel_object: int  # HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT on that device
    kernarg_segment_size: int
    kernarg_segment_align: int
    group_segment_size: int
    private_segment_size: int
    workgroup_size: tuple[int, int, int]
    binding_count: int
    constant_count: int
    args: tuple[KernelArg, ...] = ()  # the metadata `.args` (may be empty)
    wavefront_size: int = 64
    layout: _Layout = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        align = self.kernarg_segment_align
        if align <= 0 or align & (align - 1) or align > MAX_KERNARG_ALIGNMENT:
            raise HalError(f"kernel {self.name} has kernarg alignment {align}; it must be a power of two "
                           f"at most {MAX_KERNARG_ALIGNMENT}", status="INVALID_ARGUMENT")
        object.__setattr__(self, "layout", _layout(self))


def _hidden_args(info: KernelInfo, explicit_end: int) -> list[tuple[str, int, int]]:
    """(value_kind, absolute offset, size) of every hidden argument: from the metadata, else §6.1."""
    listed = [(arg.value_kind, arg.offset, arg.size) for arg in info.args if arg.value_kind.startswith("hidden_")]
    if listed:
        return listed
    return [(kind, explicit_end + offset, size) for kind, offset, size in DEFAULT_IMPLICIT_ARGS]


def _layout(info: KernelInfo) -> _Layout:
    explicit_end = 8 * info.binding_count + _align8(4 * info.constant_count)
    bindings = struct.Struct(f"<{info.binding_count}Q")
    constants = struct.Struct(f"<{info.constant_count}I")
    if info.kernarg_segment_size <= explicit_end:
        return _Layout(explicit_end, explicit_end, bindings, constants, bytes(explicit_end), (), None, ())
    size = max(info.kernarg_segment_size, explicit_end + IMPLICIT_ARGS_SIZE)
    template = bytearray(size)
    block_counts, dynamic_lds, hidden = [], None, []
    for kind, offset, arg_size in _hidden_args(info, explicit_end):
        if offset < explicit_end or offset + arg_size > size:
            raise HalError(f"kernel {info.name} hidden argument {kind} at [{offset}, +{arg_size}) lies outside "
                           f"the implicit-argument block [{explicit_end}, {size})", status="INVALID_ARGUMENT")
        packer = _INT_STRUCTS.get(arg_size)
        if packer is None:
            continue  # an opaque block (e.g. hidden_none padding): stays zero, not decoded
        hidden.append((kind, packer, offset))
        if kind in _BLOCK_COUNT_KINDS:
            block_counts.append((packer, offset, _BLOCK_COUNT_KINDS.index(kind)))
        elif kind in _GROUP_SIZE_KINDS:
            packer.pack_into(template, offset, info.workgroup_size[_GROUP_SIZE_KINDS.index(kind)])
        elif kind == "hidden_grid_dims":
            packer.pack_into(template, offset, GRID_DIMS)
        elif kind == _DYNAMIC_LDS_KIND:
            dynamic_lds = (packer, offset)
    return _Layout(size, explicit_end, bindings, constants, bytes(template), tuple(block_counts), dynamic_lds,
                   tuple(hidden))


def kernarg_size(info: KernelInfo) -> int:
    """Bytes `hal_kernargs` produces for this kernel (what to reserve in the kernarg ring)."""
    return info.layout.size


def _constant_bytes(info: KernelInfo, constants) -> bytes:
    if isinstance(constants, (bytes, bytearray, memoryview)):
        data = bytes(constants)
        if len(data) != 4 * info.constant_count:
            raise HalError(f"kernel {info.name} takes {info.constant_count} constants "
                           f"({4 * info.constant_count} bytes), got {len(data)} bytes", status="INVALID_ARGUMENT")
        return data
    if len(constants) != info.constant_count:
        raise HalError(f"kernel {info.name} takes {info.constant_count} constants, got {len(constants)}",
                       status="INVALID_ARGUMENT")
    try:
        return info.layout.constants.pack(*constants)
    except struct.error:  # i32 values (the VM passes signed constants): stored as their u32 bits
        return info.layout.constants.pack(*(int(c) & _U32_MASK for c in constants))


def hal_kernargs(info: KernelInfo, binding_addresses: Sequence[int], constants,
                 workgroup_count: Sequence[int], dynamic_lds: int = 0) -> bytes:
    """The kernarg segment of one dispatch (`kernarg_size(info)` bytes).

    `constants` are u32/i32 ints or their little-endian bytes (as recorded command buffers hold them).
    """
    layout = info.layout
    if len(binding_addresses) != info.binding_count:
        raise HalError(f"kernel {info.name} takes {info.binding_count} bindings, got {len(binding_addresses)}",
                       status="INVALID_ARGUMENT")
    data = bytearray(layout.template)
    layout.bindings.pack_into(data, 0, *binding_addresses)
    start = 8 * info.binding_count
    constant_data = _constant_bytes(info, constants)
    data[start:start + len(constant_data)] = constant_data
    for packer, offset, axis in layout.block_counts:
        try:
            packer.pack_into(data, offset, workgroup_count[axis])
        except struct.error:  # a code object that declares a block count narrower than the grid
            raise HalError(f"kernel {info.name}: workgroup count {workgroup_count[axis]} does not "
                           f"fit its {packer.size}-byte hidden block count",
                           status="OUT_OF_RANGE") from None
    if dynamic_lds and layout.dynamic_lds is not None:
        packer, offset = layout.dynamic_lds
        packer.pack_into(data, offset, dynamic_lds)
    return bytes(data)


def decode_hal_kernargs(info: KernelInfo, data: bytes) -> tuple[list[int], list[int], dict[str, int]]:
    """(binding addresses, constants as u32, {hidden value_kind: value}) read back from a segment."""
    layout = info.layout
    if len(data) < layout.explicit_end:
        raise HalError(f"kernel {info.name} kernargs are {len(data)} bytes, shorter than the "
                       f"{layout.explicit_end} explicit bytes", status="INVALID_ARGUMENT")
    bindings = list(layout.bindings.unpack_from(data, 0))
    constants = list(layout.constants.unpack_from(data, 8 * info.binding_count))
    hidden = {kind: packer.unpack_from(data, offset)[0]
              for kind, packer, offset in layout.hidden if offset + packer.size <= len(data)}
    return bindings, constants, hidden

"""HAL kernargs (drivers/amdgpu/kernargs.py) against the code objects iree-compile produces.

For a static matmul and a dynamic-shape add compiled for gfx942 and gfx1100 (see
tests/amdgpu_executables.py), `hal_kernargs` must put every binding address, constant
and implicit argument at the offset the kernel's own metadata `.args` give (read with llvm-readobj-19
+ msgpack, not with our parser), with the values passed, zeros everywhere else, and the segment
size reference §6.1 gives: E = 8B + align8(4C), implicit block only when kernarg_segment_size > E,
then max(kernarg_segment_size, E + 124) bytes. `decode_hal_kernargs` must round-trip. A kernel
without hidden-argument metadata gets §6.1's offsets, typed here from the reference table.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import pytest

from amdgpu_cli.drivers.amdgpu.kernargs import KernelInfo, decode_hal_kernargs, hal_kernargs, kernarg_size
from amdgpu_cli.formats.amdgpu_executable import parse_amdgpu_executable
from amdgpu_cli.hal.enums import HalError
from tests.amdgpu_executables import CASE_IDS, CASES, compiled_cases

KERNEL_OBJECT = 0x7F12_3456_0000
BINDINGS = [0x7F00_0000_1000, 0x7F00_0010_0040, 0x7F00_0200_0080]
CONSTANTS = [7, 0xFFFF_FFFE, 0x8000_0000, 12345]
WORKGROUP_COUNT = (300, 2, 5)
_FORMATS = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return compiled_cases(tmp_path_factory)


def kernel_info(blob: bytes) -> KernelInfo:
    """A KernelInfo as the driver builds it: the AMD1 export plus the code object's kernel."""
    executable = parse_amdgpu_executable(blob)
    (export,) = executable.exports
    kernel = executable.code_object_info.kernel(export.name)
    return KernelInfo(name=kernel.name, symbol=kernel.symbol, kernel_object=KERNEL_OBJECT,
                      kernarg_segment_size=kernel.kernarg_segment_size,
                      kernarg_segment_align=kernel.kernarg_segment_align,
                      group_segment_size=kernel.group_segment_fixed_size,
                      private_segment_size=kernel.private_segment_fixed_size,
                      workgroup_size=export.workgroup_size, binding_count=export.binding_count,
                      constant_count=export.constant_count, args=kernel.args,
                      wavefront_size=kernel.wavefront_size)


def expected_value(arg: dict, binding: Iterator[int], constant: Iterator[int], metadata: dict) -> int | None:
    """What IREE writes for one metadata argument (None: an opaque block that must stay zero)."""
    kind = arg[".value_kind"]
    if kind == "global_buffer":
        return next(binding)
    if kind == "by_value":
        return next(constant)
    axis = kind[-1:]
    if kind.startswith("hidden_block_count_"):
        return WORKGROUP_COUNT["xyz".index(axis)]
    if kind.startswith("hidden_group_size_"):
        return metadata[".reqd_workgroup_size"]["xyz".index(axis)]
    if kind == "hidden_grid_dims":
        return 3
    return 0


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_kernargs_follow_the_metadata_args(compiled, case):
    built = compiled[case]
    info = kernel_info(built.blob)
    (metadata,) = built.metadata["amdhsa.kernels"]
    bindings, constants = BINDINGS[:info.binding_count], CONSTANTS[:info.constant_count]
    data = hal_kernargs(info, bindings, constants, WORKGROUP_COUNT)

    explicit_end = 8 * info.binding_count + (4 * info.constant_count + 7) // 8 * 8
    size = metadata[".kernarg_segment_size"]
    assert len(data) == (max(size, explicit_end + 124) if size > explicit_end else explicit_end)
    assert len(data) == kernarg_size(info)
    covered = bytearray(len(data))
    binding, constant = iter(bindings), iter(constants)
    for arg in metadata[".args"]:
        offset, width = arg[".offset"], arg[".size"]
        value = expected_value(arg, binding, constant, metadata)
        if value is not None and width in _FORMATS:
            assert struct.unpack_from(_FORMATS[width], data, offset)[0] == value, arg
        covered[offset:offset + width] = b"\1" * width
    assert next(binding, None) is None and next(constant, None) is None  # every value was placed
    assert all(byte == 0 for byte, used in zip(data, covered) if not used)


def test_dynamic_add_on_gfx1100_is_the_reference_measurement(compiled):
    """Reference §6.1 [measured]: 3 bindings + 4 constants, E = 40, kernarg size 296, hidden args at
    40 (block_count_x), 52 (group_size_x), 58 (remainder_x), 80/88/96 (global offsets), 104
    (grid_dims); workgroup [32, 1, 1], wave32."""
    info = kernel_info(compiled["dynamic", "gfx1100"].blob)
    assert (info.binding_count, info.constant_count, info.kernarg_segment_size) == (3, 4, 296)
    assert (info.workgroup_size, info.wavefront_size) == ((32, 1, 1), 32)
    data = hal_kernargs(info, BINDINGS, CONSTANTS, WORKGROUP_COUNT)
    assert len(data) == 296
    assert struct.unpack_from("<3Q4I", data, 0) == (*BINDINGS, *CONSTANTS)
    assert struct.unpack_from("<3I3H", data, 40) == (*WORKGROUP_COUNT, 32, 1, 1)
    assert struct.unpack_from("<H", data, 104) == (3,)
    assert data[58:104] == bytes(46) and data[106:] == bytes(296 - 106)


def test_static_matmul_on_gfx942_has_no_implicit_args(compiled):
    info = kernel_info(compiled["matmul", "gfx942"].blob)
    assert (info.binding_count, info.constant_count, info.kernarg_segment_size) == (3, 0, 24)
    assert hal_kernargs(info, BINDINGS, [], WORKGROUP_COUNT) == struct.pack("<3Q", *BINDINGS)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_decode_round_trips(compiled, case):
    built = compiled[case]
    info = kernel_info(built.blob)
    bindings, constants = BINDINGS[:info.binding_count], CONSTANTS[:info.constant_count]
    data = hal_kernargs(info, bindings, constants, WORKGROUP_COUNT)
    decoded_bindings, decoded_constants, hidden = decode_hal_kernargs(info, data)
    assert (decoded_bindings, decoded_constants) == (bindings, constants)
    (metadata,) = built.metadata["amdhsa.kernels"]
    listed = {a[".value_kind"] for a in metadata[".args"] if a[".value_kind"].startswith("hidden_")}
    assert set(hidden) == listed
    if listed:
        assert [hidden[f"hidden_block_count_{axis}"] for axis in "xyz"] == list(WORKGROUP_COUNT)
        assert [hidden[f"hidden_group_size_{axis}"] for axis in "xyz"] == list(info.workgroup_size)


# ---- the §6.1 layout for kernels without hidden-argument metadata ---------------------------------


def synthetic(kernarg_segment_size: int, bindings: int = 3, constants: int = 3, args=()) -> KernelInfo:
    return KernelInfo(name="k", symbol="k.kd", kernel_object=KERNEL_OBJECT,
                      kernarg_segment_size=kernarg_segment_size, kernarg_segment_align=8,
                      group_segment_size=0, private_segment_size=0, workgroup_size=(64, 4, 2),
                      binding_count=bindings, constant_count=constants, args=args)


def test_fallback_layout_is_the_reference_table():
    info = synthetic(296)  # E = 24 + align8(12) = 40
    data = hal_kernargs(info, BINDINGS, CONSTANTS[:3], WORKGROUP_COUNT, dynamic_lds=4096)
    assert len(data) == 296
    assert struct.unpack_from("<3Q3I", data, 0) == (*BINDINGS, *CONSTANTS[:3])
    assert data[36:40] == bytes(4)  # padding to E
    e = 40
    assert struct.unpack_from("<3I", data, e + 0) == WORKGROUP_COUNT  # hidden_block_count_{x,y,z}
    assert struct.unpack_from("<3H", data, e + 12) == (64, 4, 2)  # hidden_group_size_{x,y,z}
    assert data[e + 18:e + 64] == bytes(46)  # remainders, reserved, global offsets
    assert struct.unpack_from("<H", data, e + 64) == (3,)  # hidden_grid_dims
    assert data[e + 66:e + 120] == bytes(54)  # printf, hostcall, multigrid, heap, queue, completion
    assert struct.unpack_from("<I", data, e + 120) == (4096,)  # hidden_dynamic_lds_size
    assert data[e + 124:] == bytes(296 - e - 124)


def test_implicit_block_is_at_least_124_bytes():
    assert len(hal_kernargs(synthetic(100), BINDINGS, CONSTANTS[:3], WORKGROUP_COUNT)) == 40 + 124


def test_no_implicit_block_when_the_segment_ends_at_e():
    data = hal_kernargs(synthetic(40), BINDINGS, CONSTANTS[:3], WORKGROUP_COUNT)
    assert data == struct.pack("<3Q3I4x", *BINDINGS, *CONSTANTS[:3])
    assert decode_hal_kernargs(synthetic(40), data) == (BINDINGS, CONSTANTS[:3], {})


def test_constants_as_bytes_and_signed_ints():
    info = synthetic(40)
    as_ints = hal_kernargs(info, BINDINGS, [-1, -2, 3], WORKGROUP_COUNT)
    as_bytes = hal_kernargs(info, BINDINGS, struct.pack("<3i", -1, -2, 3), WORKGROUP_COUNT)
    assert as_ints == as_bytes
    assert decode_hal_kernargs(info, as_ints)[1] == [0xFFFFFFFF, 0xFFFFFFFE, 3]


@pytest.mark.parametrize("bindings,constants,message", [
    (BINDINGS[:2], CONSTANTS[:3], "3 bindings, got 2"),
    (BINDINGS, CONSTANTS, "3 constants, got 4"),
    (BINDINGS, b"\0" * 8, "12 bytes"),
])
def test_wrong_counts_are_invalid_arguments(bindings, constants, message):
    with pytest.raises(HalError, match=message) as raised:
        hal_kernargs(synthetic(296), bindings, constants, WORKGROUP_COUNT)
    assert raised.value.status == "INVALID_ARGUMENT"


@pytest.mark.parametrize("align", [0, 3, 128])
def test_kernarg_alignment_must_be_a_power_of_two_at_most_64(align):
    with pytest.raises(HalError, match="alignment"):
        KernelInfo(name="k", symbol="k.kd", kernel_object=0, kernarg_segment_size=8, kernarg_segment_align=align,
                   group_segment_size=0, private_segment_size=0, workgroup_size=(1, 1, 1),
                   binding_count=1, constant_count=0)

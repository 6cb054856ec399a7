"""The blit kernels' code (device_binaries/src/blit.cl), run on the host: right bytes for any grid.

There is no AMD GPU here, so clang-19 compiles the same OpenCL C for x86-64 with the AMDGPU
work-item builtins redirected to a tiny harness; the test then plays the dispatch (every work-item
of a 1-D or 2-D grid, partial workgroups included) and compares the buffer with numpy's answer.
Bytes outside the range must stay untouched. Argument units are those of IREE's device/blit.c:
elements of the kernel's width, bytes for the *_unaligned_x16 kernels.
"""

from __future__ import annotations

import ctypes
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

SOURCE = Path(__file__).resolve().parents[2] / "device_binaries" / "src" / "blit.cl"
PRELUDE = """
unsigned host_group_id(int dim);
unsigned host_item_id(int dim);
__constant void* host_packet(void);
#define __builtin_amdgcn_workgroup_id_x() host_group_id(0)
#define __builtin_amdgcn_workgroup_id_y() host_group_id(1)
#define __builtin_amdgcn_workitem_id_x() host_item_id(0)
#define __builtin_amdgcn_workitem_id_y() host_item_id(1)
#define __builtin_amdgcn_dispatch_ptr() host_packet()
#define amdgpu_flat_work_group_size(lo, hi) unused
"""
HARNESS = """
#include <stdint.h>
unsigned ids[4];            /* group x, group y, item x, item y */
unsigned char packet[64];   /* hsa_kernel_dispatch_packet_t */
unsigned host_group_id(int dim) { return ids[dim]; }
unsigned host_item_id(int dim) { return ids[2 + dim]; }
const void* host_packet(void) { return packet; }
"""
PREFIX = "iree_hal_amdgpu_device_buffer_"
SENTINEL = 0xCC
SLACK = 160  # sentinel bytes around each range: more than any kernel's block, so overruns show
GRIDS = [  # (grid x, grid y, workgroup x): one item, partial workgroups, a 2-D grid
    (1, 1, 1), (5, 1, 4), (64, 1, 32), (7, 3, 2),
]


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    clang, cc = shutil.which("clang-19"), shutil.which("gcc") or shutil.which("cc")
    if clang is None or cc is None:
        pytest.fail("clang-19 and a host C compiler are needed (.ci/run installs clang-19)")
    work = tmp_path_factory.mktemp("blit_host")
    (work / "prelude.h").write_text(PRELUDE)
    (work / "harness.c").write_text(HARNESS)
    subprocess.run([clang, "-x", "cl", "-cl-std=CL2.0", "-target", "x86_64-linux-gnu", "-O1", "-fPIC",
                    "-include", str(work / "prelude.h"), "-c", str(SOURCE), "-o", str(work / "blit.o")],
                   check=True, capture_output=True)
    subprocess.run([cc, "-shared", "-fPIC", str(work / "harness.c"), str(work / "blit.o"), "-o",
                    str(work / "libblit.so")], check=True, capture_output=True)
    return ctypes.CDLL(str(work / "libblit.so"))


def _dispatch(lib, name: str, argtypes: list, args: list, grid: tuple[int, int, int]) -> None:
    grid_x, grid_y, group_x = grid
    kernel = getattr(lib, PREFIX + name)
    kernel.argtypes, kernel.restype = argtypes, None
    packet = (ctypes.c_ubyte * 64).in_dll(lib, "packet")
    struct.pack_into("<HHHHHHIII", packet, 0, 0, 3, group_x, 1, 1, 0, grid_x, grid_y, 1)
    ids = (ctypes.c_uint * 4).in_dll(lib, "ids")
    for y in range(grid_y):
        for x in range(grid_x):
            ids[0], ids[1], ids[2], ids[3] = x // group_x, y, x % group_x, 0
            kernel(*args)


def _buffer(size: int) -> np.ndarray:
    return np.full(size + SLACK, SENTINEL, dtype=np.uint8)


def _address(buffer: np.ndarray, offset: int) -> int:
    return buffer.ctypes.data + offset


FILLS = {  # kernel -> (element width, pattern ctype)
    "fill_x1": (1, ctypes.c_uint8), "fill_x2": (2, ctypes.c_uint16), "fill_x4": (4, ctypes.c_uint32),
    "fill_x8": (8, ctypes.c_uint64), "fill_block_x16": (16, ctypes.c_uint64),
}
PATTERN = 0x1122334455667788


@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("name", sorted(FILLS))
@pytest.mark.parametrize("elements", [0, 1, 3, 17, 70])
def test_fill(lib, name, elements, grid):
    width, pattern_type = FILLS[name]
    pattern = PATTERN & ((1 << (8 * min(width, 8))) - 1)
    buffer = _buffer(elements * width)
    _dispatch(lib, name, [ctypes.c_void_p, ctypes.c_uint64, pattern_type],
              [_address(buffer, 16), elements, pattern], grid)
    one = np.frombuffer(pattern.to_bytes(min(width, 8), "little"), dtype=np.uint8)
    expected = _buffer(elements * width)
    expected[16:16 + elements * width] = np.tile(one, elements * width // len(one))
    np.testing.assert_array_equal(buffer, expected)


@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("offset, length", [(3, 0), (1, 5), (5, 16), (7, 129), (16, 200), (9, 333)])
def test_fill_block_unaligned_x16_takes_a_byte_length(lib, offset, length, grid):
    buffer = _buffer(length + 16)
    _dispatch(lib, "fill_block_unaligned_x16", [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64],
              [_address(buffer, offset), length, PATTERN], grid)
    expected = _buffer(length + 16)
    expected[offset:offset + length] = np.resize(np.frombuffer(PATTERN.to_bytes(8, "little"), np.uint8), length)
    np.testing.assert_array_equal(buffer, expected)


COPIES = {"copy_x1": 1, "copy_block_x4": 4, "copy_block_x8": 8, "copy_block_x16": 16}


@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("name", sorted(COPIES))
@pytest.mark.parametrize("elements", [0, 1, 15, 33, 70])
def test_copy(lib, name, elements, grid):
    size = elements * COPIES[name]
    source = np.random.default_rng(elements).integers(0, 256, size + SLACK, dtype=np.uint8)
    target = _buffer(size)
    _dispatch(lib, name, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64],
              [_address(source, 32), _address(target, 16), elements], grid)
    expected = _buffer(size)
    expected[16:16 + size] = source[32:32 + size]
    np.testing.assert_array_equal(target, expected)


@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("source_offset, target_offset, length", [
    (0, 0, 0), (1, 3, 7), (3, 0, 16), (5, 9, 130), (0, 1, 257),
])
def test_copy_block_unaligned_x16_takes_a_byte_length(lib, source_offset, target_offset, length, grid):
    source = np.random.default_rng(length).integers(0, 256, length + SLACK, dtype=np.uint8)
    target = _buffer(length + 16)
    _dispatch(lib, "copy_block_unaligned_x16", [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64],
              [_address(source, source_offset), _address(target, target_offset), length], grid)
    expected = _buffer(length + 16)
    expected[target_offset:target_offset + length] = source[source_offset:source_offset + length]
    np.testing.assert_array_equal(target, expected)

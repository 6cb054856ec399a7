"""Blit launch planning (drivers/amdgpu/blit.py) against reference §7 and the real device library.

The kernel choice, element_length unit, block count and grid of every case below are worked out by
hand from reference §7's tables ("Fill kernel choice", "Copy kernel choice", "Blit launch": block
sizes 4 x 16 bytes for fill_block_x16, 16 u32 for fill_x4, 16 u32 / 8 u64 / 1 x 16 bytes for the
copy blocks; the unaligned kernels take bytes and count 16-byte vectors in blocks; the grid is the
block count capped at CUs x 4 x wavefront work-items; zero blocks launch 1x1x1). Then the planned
launches run through the committed gfx942 device library on softhsa (which executes those kernels
in C on real memory) and must give numpy's bytes, for unaligned offsets and lengths and for grids
small enough that the kernels' grid-stride loops go round many times.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from amdgpu_cli.drivers.amdgpu import blit
from amdgpu_cli.drivers.amdgpu.blit import BlitLaunch, grid_size, plan_copy, plan_fill
from amdgpu_cli.hal.enums import HalError
from hsa_ffi import constants as C
from tests.softhsa.kernels import Loader, readobj_metadata
from tests.softhsa.session import private_softhsa

LIBRARY = Path(__file__).resolve().parents[3] / "device_binaries" / "amdgcn-amd-amdhsa--gfx942.hsaco"
P = "iree_hal_amdgpu_device_buffer_"
MI300 = dict(compute_units=304, wavefront_size=64)  # cap 304 * 4 * 64 = 77824 work-items


def kernargs_fields(launch: BlitLaunch) -> tuple[int, int, int]:
    assert len(launch.kernargs) == 24
    return struct.unpack("<3Q", launch.kernargs)


# (target, length, pattern_length) -> (kernel, element_length, blocks)
FILL_CASES = [
    ((0x1000, 256, 1), ("fill_block_x16", 16, 4)),  # 16-byte aligned: 16 elements, 4 per block
    ((0x1000, 4096, 4), ("fill_block_x16", 256, 64)),
    ((0x1000, 0, 4), ("fill_block_x16", 0, 0)),  # zero length: still a (no-op) launch
    ((0x1004, 64, 4), ("fill_x4", 16, 1)),  # 4-byte aligned: 16 u32 per block
    ((0x1000, 12, 4), ("fill_x4", 3, 1)),
    ((0x1002, 200, 2), ("fill_block_unaligned_x16", 200, 3)),  # bytes; 12 vectors in blocks of 4
    ((0x1001, 128, 1), ("fill_block_unaligned_x16", 128, 2)),
    ((0x1008, 136, 8), ("fill_block_unaligned_x16", 136, 2)),  # 8-byte pattern never takes fill_x4
    ((0x1001, 127, 1), ("fill_x1", 127, 127)),  # below 128 bytes: one element per work-item
    ((0x1002, 6, 2), ("fill_x2", 3, 3)),
    ((0x1008, 40, 8), ("fill_x8", 5, 5)),
    ((0x1000, 8, 8), ("fill_x8", 1, 1)),
]

# (source, target, length) -> (kernel, element_length, blocks)
COPY_CASES = [
    ((0x1000, 0x2000, 4096), ("copy_block_x16", 256, 256)),  # one 16-byte element per block
    ((0x1000, 0x2000, 0), ("copy_block_x16", 0, 0)),
    ((0x1008, 0x2000, 64), ("copy_block_x8", 8, 1)),  # 8 u64 per block
    ((0x1008, 0x2008, 200), ("copy_block_x8", 25, 4)),
    ((0x1004, 0x2000, 100), ("copy_block_x4", 25, 2)),  # 16 u32 per block
    ((0x1000, 0x2010, 36), ("copy_block_x4", 9, 1)),
    ((0x1001, 0x2000, 300), ("copy_block_unaligned_x16", 300, 18)),  # bytes; 18 whole vectors
    ((0x1000, 0x2002, 128), ("copy_block_unaligned_x16", 128, 8)),
    ((0x1001, 0x2003, 127), ("copy_x1", 127, 127)),
    ((0x1000, 0x2000, 6), ("copy_x1", 6, 6)),
]

# (compute units, wavefront size) -> work-item cap
DEVICES = [((304, 64), 77824), ((96, 32), 12288), ((2, 64), 512), ((1, 32), 128)]


@pytest.mark.parametrize("device,cap", DEVICES)
@pytest.mark.parametrize("args,expected", FILL_CASES)
def test_fill_kernel_choice_and_grid(args, expected, device, cap):
    target, length, pattern_length = args
    kernel, element_length, blocks = expected
    launch = plan_fill(target, length, 0x5A, pattern_length, compute_units=device[0], wavefront_size=device[1])
    assert launch.kernel == P + kernel
    assert kernargs_fields(launch)[:2] == (target, element_length)
    assert launch.workgroup_size == (device[1], 1, 1)
    assert launch.grid_size == ((min(blocks, cap), 1, 1) if blocks else (1, 1, 1))


@pytest.mark.parametrize("device,cap", DEVICES)
@pytest.mark.parametrize("args,expected", COPY_CASES)
def test_copy_kernel_choice_and_grid(args, expected, device, cap):
    source, target, length = args
    kernel, element_length, blocks = expected
    launch = plan_copy(source, target, length, compute_units=device[0], wavefront_size=device[1])
    assert launch.kernel == P + kernel
    assert kernargs_fields(launch) == (source, target, element_length)
    assert launch.workgroup_size == (device[1], 1, 1)
    assert launch.grid_size == ((min(blocks, cap), 1, 1) if blocks else (1, 1, 1))


def test_large_transfers_are_capped():
    launch = plan_copy(0, 1 << 40, 1 << 30, **MI300)  # 2^26 blocks of 16 bytes
    assert launch.grid_size == (77824, 1, 1)


@pytest.mark.parametrize("items", [(1 << 32) - 1, 1 << 32, (1 << 36) + 12345, 3 * ((1 << 32) - 1)])
def test_grids_beyond_32_bits_split_over_y(items):
    x, y, z = grid_size(items, compute_units=1 << 31, wavefront_size=64)
    assert z == 1 and 1 <= x <= 0xFFFFFFFF and 1 <= y <= 0xFFFFFFFF
    assert x * y >= items and x * y - items < x  # covers every block, overshoots by less than a row
    if items <= 0xFFFFFFFF:
        assert (x, y) == (items, 1)
    else:
        assert (items + (x - 1) - 1) // (x - 1) > 0xFFFFFFFF  # x is the smallest width that fits y


# Pattern as written into the kernargs: the blocked and unaligned kernels take the pattern repeated
# to 8 bytes; the elementwise fill_x1/_x2/_x8 take it as is.
PATTERNS = [
    ((0x1000, 64, 0xAB, 1), 0xABABABABABABABAB),
    ((0x1000, 64, 0x1234, 2), 0x1234123412341234),
    ((0x1004, 8, 0x1234, 2), 0x1234123412341234),  # fill_x4
    ((0x1001, 200, 0xCD, 1), 0xCDCDCDCDCDCDCDCD),  # unaligned
    ((0x1004, 200, 0xDEADBEEF, 4), 0xDEADBEEFDEADBEEF),  # fill_x4
    ((0x1008, 136, 0x0102030405060708, 8), 0x0102030405060708),
    ((0x1001, 3, 0xEF, 1), 0xEF),  # fill_x1
    ((0x1002, 4, 0xBEEF, 2), 0xBEEF),  # fill_x2 (target not 4-aligned)
]


@pytest.mark.parametrize("args,pattern", PATTERNS)
def test_pattern_extension(args, pattern):
    target, length, value, pattern_length = args
    assert kernargs_fields(plan_fill(target, length, value, pattern_length, **MI300))[2] == pattern


@pytest.mark.parametrize("args,message", [
    ((0x1000, 12, 0, 3), "pattern length 3"),
    ((0x1002, 8, 0, 4), "multiples"),
    ((0x1000, 6, 0, 4), "multiples"),
])
def test_fill_argument_errors(args, message):
    with pytest.raises(HalError, match=message) as raised:
        plan_fill(*args, **MI300)
    assert raised.value.status == "INVALID_ARGUMENT"


def test_blit_kernels_are_the_device_library_kernels():
    names = {k[".name"] for k in readobj_metadata(LIBRARY)["amdhsa.kernels"]}
    assert set(blit.BLIT_KERNELS) == names and len(blit.BLIT_KERNELS) == 11


# ---- the planned launches run through the real device library on softhsa ----------------------

SMALL_GPU = {"compute_units": 2, "wavefront_size": 64}  # 512 work-items: long grid-stride loops
CONFIG = {"agents": [{"name": "gfx942", "isa": "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", **SMALL_GPU}]}
BUFFER = 80_000
PATTERN = 0x8877665544332211


@pytest.fixture(scope="module")
def gpu(softhsa_lib, tmp_path_factory):
    with private_softhsa(softhsa_lib, tmp_path_factory).running(CONFIG) as session:
        hsa = Loader(session)
        agent, cpu = hsa.gpus()[0], hsa.cpus()[0]
        executable = hsa.load(LIBRARY.read_bytes(), agent)
        queue = hsa.queue(agent)
        kernarg_ptr = hsa.allocate(hsa.pool(cpu, C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT), 64)
        pool = hsa.pool(agent, C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)
        source, target = hsa.allocate(pool, BUFFER), hsa.allocate(pool, BUFFER)
        yield hsa, agent, executable, queue, kernarg_ptr, source, target
        for pointer in (source, target, kernarg_ptr):
            hsa.hsa.call("hsa_amd_memory_pool_free", pointer)
        hsa.hsa.call("hsa_executable_destroy", executable)


def view(hsa, pointer) -> tuple[int, np.ndarray]:
    return int(hsa.ffi.cast("uintptr_t", pointer)), np.frombuffer(hsa.ffi.buffer(pointer, BUFFER), dtype=np.uint8)


def run(gpu, launch: BlitLaunch) -> None:
    hsa, agent, executable, queue, kernarg_ptr, *_ = gpu
    kernel = hsa.kernel(executable, launch.kernel, agent)
    hsa.ffi.memmove(kernarg_ptr, launch.kernargs, len(launch.kernargs))
    assert hsa.dispatch(queue, kernel.kernel_object, launch.grid_size, launch.workgroup_size, kernarg_ptr,
                        group=kernel.group_size, private=kernel.private_size)


# (offset, length, pattern_length): every fill kernel, unaligned starts and tails, long loops.
FILLS = [(0, 0, 1), (1, 1, 1), (3, 127, 1), (5, 128, 1), (7, 1001, 1), (2, 6, 2), (2, 130, 2),
         (4, 12, 4), (4, 4000, 4), (12, 260, 4), (8, 40, 8), (8, 136, 8), (16, 4096, 8),
         (16, 20000, 2), (0, 40000, 4), (1, 65001, 1)]
# (source offset, target offset, length)
COPIES = [(0, 0, 0), (1, 2, 1), (3, 5, 127), (1, 0, 128), (5, 11, 1003), (8, 24, 200), (4, 8, 100),
          (0, 0, 4096), (16, 32, 65536), (3, 7, 30000), (4, 12, 50000), (8, 16, 40008)]


@pytest.mark.parametrize("offset,length,pattern_length", FILLS)
def test_planned_fill_gives_numpys_bytes(gpu, offset, length, pattern_length):
    hsa, *_, target_ptr = gpu
    address, target = view(hsa, target_ptr)
    target[:] = np.random.default_rng(length).integers(0, 256, BUFFER, dtype=np.uint8)
    expected = target.copy()
    pattern = np.frombuffer(PATTERN.to_bytes(8, "little")[:pattern_length], dtype=np.uint8)
    expected[offset:offset + length] = np.resize(pattern, length)
    run(gpu, plan_fill(address + offset, length, PATTERN, pattern_length, **SMALL_GPU))
    np.testing.assert_array_equal(target, expected)


@pytest.mark.parametrize("source_offset,target_offset,length", COPIES)
def test_planned_copy_gives_numpys_bytes(gpu, source_offset, target_offset, length):
    hsa, *_, source_ptr, target_ptr = gpu
    source_address, source = view(hsa, source_ptr)
    target_address, target = view(hsa, target_ptr)
    rng = np.random.default_rng(length)
    source[:] = rng.integers(0, 256, BUFFER, dtype=np.uint8)
    target[:] = rng.integers(0, 256, BUFFER, dtype=np.uint8)
    expected = target.copy()
    expected[target_offset:target_offset + length] = source[source_offset:source_offset + length]
    run(gpu, plan_copy(source_address + source_offset, target_address + target_offset, length, **SMALL_GPU))
    np.testing.assert_array_equal(target, expected)

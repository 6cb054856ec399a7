"""Fills and copies through the real device-library code object, run by softhsa.

The gfx942 code object that device_binaries/ commits is loaded on a softhsa gfx942 agent; each
builtin kernel is dispatched through an AQL queue with IREE's kernarg layout and launch shape
(workgroup = wavefront size, grid = block count), and the bytes are compared with numpy.
The expected results follow the kernels' definitions in IREE's device/blit.c: element_length counts
1/2/4/8-byte elements for fill_x1.._x8, 16-byte elements for fill_block_x16 and copy_block_x16,
u32 for copy_block_x4, u64 for copy_block_x8, bytes for copy_x1 and both *_unaligned_x16 kernels
(whose fill repeats the 8-byte pattern from the target's first byte).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hsa_ffi import constants as C
from tests.softhsa.kernels import Loader, readobj_metadata
from tests.softhsa.session import private_softhsa

BINARIES = Path(__file__).resolve().parents[2] / "device_binaries"
LIBRARY = BINARIES / "amdgcn-amd-amdhsa--gfx942.hsaco"
PREFIX = "iree_hal_amdgpu_device_buffer_"
CONFIG = {"agents": [{"name": "gfx942", "isa": "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
                      "wavefront_size": 64, "compute_units": 304}]}
BUFFER = 4096
PATTERN = 0x8877665544332211

# kernel -> (bytes per element_length unit, pattern bytes in the kernargs and period of the fill)
FILLS = {"fill_x1": (1, 1), "fill_x2": (2, 2), "fill_x4": (4, 4), "fill_x8": (8, 8),
         "fill_block_x16": (16, 8), "fill_block_unaligned_x16": (1, 8)}
COPIES = {"copy_x1": 1, "copy_block_x4": 4, "copy_block_x8": 8, "copy_block_x16": 16,
          "copy_block_unaligned_x16": 1}

BLIT_KERNELS = {PREFIX + name for name in [*FILLS, *COPIES]}
# A processor each generic code object covers (reference §7), for the agent that loads it.
COVERED_BY = {"gfx9-generic": "gfx900", "gfx10-1-generic": "gfx1010", "gfx10-3-generic": "gfx1031",
              "gfx11-generic": "gfx1103", "gfx12-generic": "gfx1201"}


@pytest.fixture(scope="module")
def running(softhsa_lib, tmp_path_factory):
    with private_softhsa(softhsa_lib, tmp_path_factory).running(CONFIG) as session:
        yield Loader(session)


@pytest.fixture(scope="module")
def device(running):
    """(Loader, gfx942 agent, executable, queue, kernarg pointer, buffer pool)."""
    hsa = running
    gpu, cpu = hsa.gpus()[0], hsa.cpus()[0]
    executable = hsa.load(LIBRARY.read_bytes(), gpu)
    queue = hsa.queue(gpu)
    kernargs = hsa.allocate(hsa.pool(cpu, C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT), 64)
    pool = hsa.pool(gpu, C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)
    yield hsa, gpu, executable, queue, kernargs, pool
    hsa.hsa.call("hsa_executable_destroy", executable)


class Buffer:
    """A pool allocation seen as a numpy byte array (softhsa device memory is host memory)."""

    def __init__(self, hsa: Loader, pool, size: int, seed: int):
        self.hsa, self.size = hsa, size
        self.ptr = hsa.allocate(pool, size)
        self.array = np.frombuffer(hsa.ffi.buffer(self.ptr, size), dtype=np.uint8)
        self.array[:] = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8)

    def address(self, offset: int) -> int:
        return int(self.hsa.ffi.cast("uintptr_t", self.ptr)) + offset

    def free(self):
        self.hsa.hsa.call("hsa_amd_memory_pool_free", self.ptr)


def fill_kernargs(target: int, count: int, pattern: int, pattern_size: int) -> bytes:
    """{target u64, element_length u64, pattern}: u8/u16/u32 patterns give 20 bytes, u64 24."""
    return (target.to_bytes(8, "little") + count.to_bytes(8, "little")
            + (pattern & ((1 << (8 * pattern_size)) - 1)).to_bytes(max(pattern_size, 4), "little"))


def copy_kernargs(source: int, target: int, count: int) -> bytes:
    return source.to_bytes(8, "little") + target.to_bytes(8, "little") + count.to_bytes(8, "little")


def run(device, name: str, kernargs: bytes, count: int, timeout_ns: int = 5_000_000_000) -> bool:
    """Dispatch `name` as IREE launches blits: workgroup = wavefront, one work-item per block."""
    hsa, gpu, executable, queue, kernarg_ptr, _ = device
    kernel = hsa.kernel(executable, PREFIX + name, gpu)
    assert len(kernargs) == kernel.kernarg_size
    hsa.ffi.memmove(kernarg_ptr, kernargs, len(kernargs))
    grid = max(1, min(count, 304 * 4 * 64))
    return hsa.dispatch(queue, kernel.kernel_object, (grid, 1, 1), (64, 1, 1), kernarg_ptr,
                        group=kernel.group_size, private=kernel.private_size, timeout_ns=timeout_ns)


def fill_cases():
    for name, (unit, period) in FILLS.items():
        aligned = 16 if "block_x16" in name else unit
        for offset, count in [(0, 0), (0, 1), (aligned, 3), (3 * aligned, 200 // unit), (0, 1024 // unit)]:
            yield name, unit, period, offset, count
    # The unaligned kernel takes any byte offset and length (IREE uses it for >= 128 bytes).
    for offset, length in [(1, 127), (3, 128), (7, 1001), (13, 16), (5, 0)]:
        yield "fill_block_unaligned_x16", 1, 8, offset, length


@pytest.mark.parametrize("name,unit,period,offset,count", list(fill_cases()))
def test_fill_writes_the_pattern_over_exactly_the_range(device, name, unit, period, offset, count):
    hsa, *_, pool = device
    target = Buffer(hsa, pool, BUFFER, seed=offset + count)
    expected = target.array.copy()
    pattern = np.frombuffer(PATTERN.to_bytes(8, "little")[:period], dtype=np.uint8)
    expected[offset:offset + count * unit] = np.resize(pattern, count * unit)
    assert run(device, name, fill_kernargs(target.address(offset), count, PATTERN, period), count)
    np.testing.assert_array_equal(target.array, expected)
    target.free()


def copy_cases():
    for name, unit in COPIES.items():
        for source_offset, target_offset, count in [(0, 0, 0), (0, 0, 1), (unit, 2 * unit, 5),
                                                    (16 * unit, 0, 1000 // unit)]:
            yield name, unit, source_offset, target_offset, count
    for source_offset, target_offset, length in [(1, 2, 127), (3, 0, 128), (5, 11, 1003), (0, 7, 17)]:
        yield "copy_block_unaligned_x16", 1, source_offset, target_offset, length
    yield "copy_x1", 1, 3, 5, 77


@pytest.mark.parametrize("name,unit,source_offset,target_offset,count", list(copy_cases()))
def test_copy_moves_exactly_the_range(device, name, unit, source_offset, target_offset, count):
    hsa, *_, pool = device
    source = Buffer(hsa, pool, BUFFER, seed=1)
    target = Buffer(hsa, pool, BUFFER, seed=2)
    expected = target.array.copy()
    length = count * unit
    expected[target_offset:target_offset + length] = source.array[source_offset:source_offset + length]
    kernargs = copy_kernargs(source.address(source_offset), target.address(target_offset), count)
    assert run(device, name, kernargs, count)
    np.testing.assert_array_equal(target.array, expected)
    source.free()
    target.free()


def test_blit_outside_any_allocation_fails_the_queue(device):
    """A fill that would run past its allocation is a queue error (as a GPU page fault would be)."""
    hsa, gpu, executable, _, kernarg_ptr, pool = device
    errors = []
    queue = hsa.queue(gpu, on_error=errors.append)
    target = Buffer(hsa, pool, BUFFER, seed=3)
    before = target.array.copy()
    start = BUFFER - 128  # 17 u64 = 136 bytes: 8 past the end
    kernargs = fill_kernargs(target.address(start), 17, PATTERN, 8)
    assert not run((hsa, gpu, executable, queue, kernarg_ptr, pool), "fill_x8", kernargs, 17,
                   timeout_ns=200_000_000)
    assert errors == [C.HSA_STATUS_ERROR_EXCEPTION]
    np.testing.assert_array_equal(target.array, before)
    target.free()


@pytest.mark.parametrize("path", sorted(BINARIES.glob("*.hsaco")), ids=lambda p: p.stem.split("--")[1])
def test_every_committed_code_object_loads_on_its_targets(softhsa_lib, tmp_path_factory, path):
    """Each device_binaries code object loads on an agent of its target (for a generic object, a
    processor it covers) and has the blit kernels with the kernarg sizes llvm-readobj reads."""
    target = path.stem.split("--")[1]
    processor = COVERED_BY.get(target, target)
    config = {"agents": [{"name": processor, "isa": f"amdgcn-amd-amdhsa--{processor}"}]}
    with private_softhsa(softhsa_lib, tmp_path_factory).running(config) as session:
        hsa = Loader(session)
        gpu = hsa.gpus()[0]
        executable = hsa.load(path.read_bytes(), gpu)
        kernels = {k[".name"]: k for k in readobj_metadata(path)["amdhsa.kernels"]}
        assert BLIT_KERNELS <= set(kernels)
        for name in BLIT_KERNELS:
            assert hsa.kernel(executable, name, gpu).kernarg_size == kernels[name][".kernarg_segment_size"]
        hsa.hsa.call("hsa_executable_destroy", executable)

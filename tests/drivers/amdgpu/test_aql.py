"""AQL packet emitters (drivers/amdgpu/aql.py) against the C compiler's layout of the HSA headers.

A small cffi API-mode module is compiled against Debian's ROCm 5.2.3 `hsa.h` / `hsa_ext_amd.h`: it
fills a real `hsa_kernel_dispatch_packet_t`, `hsa_barrier_and_packet_t`, `hsa_barrier_or_packet_t`
and `hsa_amd_barrier_value_packet_t` field by field (header bits composed from the headers' own
`hsa_packet_header_t` / `hsa_fence_scope_t` enums), over a 0xCC-filled slot. Our bytes must equal
those 64 bytes exactly, so every offset, width and reserved field is checked. `write_packet` is run
on a 0xCC-prefilled slot, and the first words are checked against reference §5.1's table.
"""

from __future__ import annotations

import importlib
import random
import shutil
import sys
from pathlib import Path

import pytest

from amdgpu_cli.drivers.amdgpu import aql

cffi = pytest.importorskip("cffi")

HEADER_DIR = Path("/usr/include/hsa")
pytestmark = pytest.mark.skipif(
    not (HEADER_DIR / "hsa_ext_amd.h").exists() or shutil.which("gcc") is None,
    reason="needs the ROCm HSA headers (libhsa-runtime-dev) and a C compiler")

CDEF = """
uint16_t make_header(uint8_t type, int barrier, int acquire, int release);
void fill_dispatch(uint8_t* slot, uint16_t header, uint16_t wx, uint16_t wy, uint16_t wz,
                   uint32_t gx, uint32_t gy, uint32_t gz, uint32_t private_size, uint32_t group_size,
                   uint64_t kernel_object, uint64_t kernarg, uint64_t completion);
void fill_barrier_and(uint8_t* slot, uint16_t header, uint64_t* deps, uint64_t completion);
void fill_barrier_or(uint8_t* slot, uint16_t header, uint64_t* deps, uint64_t completion);
void fill_barrier_value(uint8_t* slot, uint16_t header, uint64_t signal, int64_t value, int64_t mask,
                        uint32_t cond, uint64_t completion);
"""

SOURCE = """
#include <string.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

uint16_t make_header(uint8_t type, int barrier, int acquire, int release) {
  return (uint16_t)((type << HSA_PACKET_HEADER_TYPE) | ((barrier ? 1 : 0) << HSA_PACKET_HEADER_BARRIER) |
                    (acquire << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (release << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
}

void fill_dispatch(uint8_t* slot, uint16_t header, uint16_t wx, uint16_t wy, uint16_t wz,
                   uint32_t gx, uint32_t gy, uint32_t gz, uint32_t private_size, uint32_t group_size,
                   uint64_t kernel_object, uint64_t kernarg, uint64_t completion) {
  hsa_kernel_dispatch_packet_t* p = (hsa_kernel_dispatch_packet_t*)slot;
  p->header = header;
  p->setup = 3 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  p->workgroup_size_x = wx; p->workgroup_size_y = wy; p->workgroup_size_z = wz;
  p->reserved0 = 0;
  p->grid_size_x = gx; p->grid_size_y = gy; p->grid_size_z = gz;
  p->private_segment_size = private_size;
  p->group_segment_size = group_size;
  p->kernel_object = kernel_object;
  p->kernarg_address = (void*)(uintptr_t)kernarg;
  p->reserved2 = 0;
  p->completion_signal.handle = completion;
}

#define FILL_BARRIER(NAME, TYPE)                                                          \\
  void NAME(uint8_t* slot, uint16_t header, uint64_t* deps, uint64_t completion) {         \\
    TYPE* p = (TYPE*)slot;                                                                  \\
    p->header = header;                                                                     \\
    p->reserved0 = 0;                                                                       \\
    p->reserved1 = 0;                                                                       \\
    for (int i = 0; i < 5; ++i) p->dep_signal[i].handle = deps[i];                          \\
    p->reserved2 = 0;                                                                       \\
    p->completion_signal.handle = completion;                                               \\
  }
FILL_BARRIER(fill_barrier_and, hsa_barrier_and_packet_t)
FILL_BARRIER(fill_barrier_or, hsa_barrier_or_packet_t)

void fill_barrier_value(uint8_t* slot, uint16_t header, uint64_t signal, int64_t value, int64_t mask,
                        uint32_t cond, uint64_t completion) {
  hsa_amd_barrier_value_packet_t* p = (hsa_amd_barrier_value_packet_t*)slot;
  p->header.header = header;
  p->header.AmdFormat = HSA_AMD_PACKET_TYPE_BARRIER_VALUE;
  p->header.reserved = 0;
  p->reserved0 = 0;
  p->signal.handle = signal;
  p->value = value;
  p->mask = mask;
  p->cond = cond;
  p->reserved1 = 0;
  p->reserved2 = 0;
  p->reserved3 = 0;
  p->completion_signal.handle = completion;
}
"""


@pytest.fixture(scope="module")
def c(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("aql_c")
    builder = cffi.FFI()
    builder.cdef(CDEF)
    builder.set_source("_aql_layout_check", SOURCE, extra_compile_args=["-Wall", "-Wextra", "-Werror"])
    builder.compile(tmpdir=str(tmp), verbose=False)
    sys.path.insert(0, str(tmp))
    try:
        return importlib.import_module("_aql_layout_check")
    finally:
        sys.path.remove(str(tmp))


def slot(ffi):
    return ffi.new("uint8_t[64]", b"\xcc" * 64)


def c_header(c, packet_type, barrier, acquire, release) -> int:
    return c.lib.make_header(packet_type, barrier, acquire, release)


SCOPES = [0, 1, 2]
rng = random.Random(1234)


def u(bits: int) -> int:
    return rng.getrandbits(bits)


@pytest.mark.parametrize("packet_type", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("barrier", [False, True])
@pytest.mark.parametrize("acquire", SCOPES)
@pytest.mark.parametrize("release", SCOPES)
def test_header_word_matches_the_header_enums(c, packet_type, barrier, acquire, release):
    word = aql.header_word(packet_type, barrier=barrier, acquire=acquire, release=release, setup=0x1234)
    assert word & 0xFFFF == c_header(c, packet_type, barrier, acquire, release)
    assert word >> 16 == 0x1234


# Reference §5.1's table of first words.
FIRST_WORDS = [
    (dict(packet_type=aql.PACKET_TYPE_KERNEL_DISPATCH, barrier=True, acquire=2, release=2, setup=3), 0x00031502),
    (dict(packet_type=aql.PACKET_TYPE_KERNEL_DISPATCH, barrier=True, acquire=1, release=1, setup=3), 0x00030B02),
    (dict(packet_type=aql.PACKET_TYPE_KERNEL_DISPATCH, barrier=True, acquire=1, release=2, setup=3), 0x00031302),
    (dict(packet_type=aql.PACKET_TYPE_BARRIER_AND, barrier=True, acquire=0, release=0), 0x00000103),
    (dict(packet_type=aql.PACKET_TYPE_BARRIER_AND, barrier=True, acquire=2, release=0), 0x00000503),
    (dict(packet_type=aql.PACKET_TYPE_VENDOR_SPECIFIC, barrier=True, acquire=1, release=0,
          setup=aql.AMD_PACKET_TYPE_BARRIER_VALUE), 0x00020300),
]


@pytest.mark.parametrize("fields,expected", FIRST_WORDS)
def test_first_words_of_the_reference_table(fields, expected):
    packet_type = fields.pop("packet_type")
    assert aql.header_word(packet_type, **fields) == expected


def test_constants_match_the_headers():
    from hsa_ffi import constants as C

    assert (aql.PACKET_TYPE_VENDOR_SPECIFIC, aql.PACKET_TYPE_INVALID, aql.PACKET_TYPE_KERNEL_DISPATCH,
            aql.PACKET_TYPE_BARRIER_AND, aql.PACKET_TYPE_AGENT_DISPATCH, aql.PACKET_TYPE_BARRIER_OR) == (
        C.HSA_PACKET_TYPE_VENDOR_SPECIFIC, C.HSA_PACKET_TYPE_INVALID, C.HSA_PACKET_TYPE_KERNEL_DISPATCH,
        C.HSA_PACKET_TYPE_BARRIER_AND, C.HSA_PACKET_TYPE_AGENT_DISPATCH, C.HSA_PACKET_TYPE_BARRIER_OR)
    assert (aql.FENCE_SCOPE_NONE, aql.FENCE_SCOPE_AGENT, aql.FENCE_SCOPE_SYSTEM) == (
        C.HSA_FENCE_SCOPE_NONE, C.HSA_FENCE_SCOPE_AGENT, C.HSA_FENCE_SCOPE_SYSTEM)
    assert (aql.CONDITION_EQ, aql.CONDITION_NE, aql.CONDITION_LT, aql.CONDITION_GTE) == (
        C.HSA_SIGNAL_CONDITION_EQ, C.HSA_SIGNAL_CONDITION_NE, C.HSA_SIGNAL_CONDITION_LT,
        C.HSA_SIGNAL_CONDITION_GTE)
    assert aql.INVALID_WORD == C.HSA_PACKET_TYPE_INVALID


@pytest.mark.parametrize("seed", range(8))
def test_dispatch_packet_equals_hsa_kernel_dispatch_packet_t(c, seed):
    rng.seed(seed)
    wg, grid = (u(16), u(16), u(16)), (u(32), u(32), u(32))
    private, group, kernel_object, kernarg, completion = u(32), u(32), u(64), u(64), u(64)
    header = c_header(c, aql.PACKET_TYPE_KERNEL_DISPATCH, seed % 2, seed % 3, (seed + 1) % 3)
    expected = slot(c.ffi)
    c.lib.fill_dispatch(expected, header, *wg, *grid, private, group, kernel_object, kernarg, completion)
    word = aql.header_word(aql.PACKET_TYPE_KERNEL_DISPATCH, barrier=bool(seed % 2), acquire=seed % 3,
                           release=(seed + 1) % 3, setup=aql.DISPATCH_SETUP_3D)
    body = aql.dispatch_body(workgroup_size=wg, grid_size=grid, private_segment_size=private,
                             group_segment_size=group, kernel_object=kernel_object, kernarg_address=kernarg,
                             completion_signal=completion)
    assert aql.packet_bytes(word, body) == bytes(c.ffi.buffer(expected))


@pytest.mark.parametrize("kind", ["and", "or"])
@pytest.mark.parametrize("count", [0, 1, 3, 5])
def test_barrier_packets_equal_the_header_structs(c, kind, count):
    rng.seed(count)
    deps = [u(64) | 1 for _ in range(count)]
    completion = u(64)
    packet_type = aql.PACKET_TYPE_BARRIER_AND if kind == "and" else aql.PACKET_TYPE_BARRIER_OR
    header = c_header(c, packet_type, True, 2, 0)
    expected = slot(c.ffi)
    fill = c.lib.fill_barrier_and if kind == "and" else c.lib.fill_barrier_or
    fill(expected, header, c.ffi.new("uint64_t[5]", deps + [0] * (5 - count)), completion)
    body = (aql.barrier_and_body if kind == "and" else aql.barrier_or_body)(deps, completion)
    word = aql.header_word(packet_type, barrier=True, acquire=2, release=0)
    assert aql.packet_bytes(word, body) == bytes(c.ffi.buffer(expected))


def test_barrier_takes_at_most_five_dependencies():
    with pytest.raises(ValueError, match="at most 5"):
        aql.barrier_and_body([1] * 6)


@pytest.mark.parametrize("value,mask,cond", [
    ((1 << 62) - 1 - 41, aql.INT64_MAX, aql.CONDITION_LT),  # an epoch wait: E0 - N + 1
    (0, -1, aql.CONDITION_EQ),
    (-5, 0x0F0F, aql.CONDITION_GTE),
    (123, 1 << 40, aql.CONDITION_NE),
])
def test_barrier_value_packet_equals_hsa_amd_barrier_value_packet_t(c, value, mask, cond):
    signal, completion = 0x7F00_1234_5678, 0x7F00_AAAA_0000
    header = c_header(c, aql.PACKET_TYPE_VENDOR_SPECIFIC, True, 1, 0)
    expected = slot(c.ffi)
    c.lib.fill_barrier_value(expected, header, signal, value, mask, cond, completion)
    word = aql.header_word(aql.PACKET_TYPE_VENDOR_SPECIFIC, barrier=True, acquire=1, release=0,
                           setup=aql.AMD_PACKET_TYPE_BARRIER_VALUE)
    body = aql.barrier_value_body(signal=signal, value=value, mask=mask, condition=cond,
                                  completion_signal=completion)
    assert aql.packet_bytes(word, body) == bytes(c.ffi.buffer(expected))


def test_write_packet_fills_every_byte_of_a_prefilled_slot(c):
    ffi = c.ffi
    ring = ffi.new("uint8_t[192]", b"\xcc" * 192)  # an aligned slot inside, bytes around it
    base = int(ffi.cast("uintptr_t", ring))
    start = (base + 63) & ~63
    assert start + 128 <= base + 192
    word = aql.header_word(aql.PACKET_TYPE_KERNEL_DISPATCH, barrier=True, acquire=2, release=2, setup=3)
    body = aql.dispatch_body(workgroup_size=(64, 1, 1), grid_size=(4096, 1, 1), private_segment_size=0,
                             group_segment_size=256, kernel_object=0x1000, kernarg_address=0x2000,
                             completion_signal=0x3000)
    aql.write_packet(start, word, body, ffi)
    offset = start - base
    written = bytes(ffi.buffer(ring))
    expected = slot(ffi)
    c.lib.fill_dispatch(expected, word & 0xFFFF, 64, 1, 1, 4096, 1, 1, 0, 256, 0x1000, 0x2000, 0x3000)
    assert written[offset:offset + 64] == bytes(ffi.buffer(expected))
    assert set(written[:offset]) <= {0xCC} and set(written[offset + 64:]) == {0xCC}


def test_invalid_word_marks_a_slot_unpublished(c):
    ffi = c.ffi
    ring = ffi.new("uint8_t[64]", b"\xcc" * 64)
    aql.write_packet(int(ffi.cast("uintptr_t", ring)), aql.INVALID_WORD, aql.barrier_and_body(), ffi)
    data = bytes(ffi.buffer(ring))
    assert data[0] == 1 and data[1:] == bytes(63)  # type INVALID; header bits and body all zero

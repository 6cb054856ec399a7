"""AQL packet emitters: the 64-byte packets a host queue writes into its HSA ring, as pure functions.

Owns the wire layout of every packet the amdgpu driver emits (kernel dispatch, barrier-AND,
barrier-OR and AMD's BARRIER_VALUE vendor packet) and the publication protocol for one ring slot.
Nothing here calls HSA, takes locks or keeps state; the host queue reserves slots, asks these
functions for bytes and publishes them in order.

A packet is split in two parts, because the HSA packet processor may read a slot the moment its
header becomes valid:
  - the *first word* (bytes 0..3): `header | setup << 16`, from `header_word()`;
  - the *body* (bytes 4..63, 60 bytes): from `dispatch_body()`, `barrier_and_body()`, ... with every
    reserved field zero.
`write_packet()` writes the body first and the first word last, as one aligned 32-bit store.

Header bits (HSA spec, `hsa_packet_header_t` in hsa.h): type in bits 0..7, barrier bit 8, acquire
fence scope bits 9..10, release fence scope bits 11..12. The setup half-word is the number of grid
dimensions for a dispatch (the driver always uses 3), 0 for barriers and the AmdFormat for vendor
packets (BARRIER_VALUE = 2, hsa_ext_amd.h). Field offsets follow hsa.h / hsa_ext_amd.h (ROCm 5.2.3)
and reference §5.1; tests compare with the C compiler's layout of those structs.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from hsa_ffi import constants as C

# The values are hsa_ffi.constants' (the HSA headers' names); these are the driver's short names.
# hsa_packet_type_t
PACKET_TYPE_VENDOR_SPECIFIC = C.HSA_PACKET_TYPE_VENDOR_SPECIFIC
PACKET_TYPE_INVALID = C.HSA_PACKET_TYPE_INVALID
PACKET_TYPE_KERNEL_DISPATCH = C.HSA_PACKET_TYPE_KERNEL_DISPATCH
PACKET_TYPE_BARRIER_AND = C.HSA_PACKET_TYPE_BARRIER_AND
PACKET_TYPE_AGENT_DISPATCH = C.HSA_PACKET_TYPE_AGENT_DISPATCH
PACKET_TYPE_BARRIER_OR = C.HSA_PACKET_TYPE_BARRIER_OR

# hsa_packet_header_t: bit positions in the 16-bit header.
HEADER_TYPE = C.HSA_PACKET_HEADER_TYPE
HEADER_BARRIER = C.HSA_PACKET_HEADER_BARRIER
HEADER_ACQUIRE_FENCE_SCOPE = C.HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE
HEADER_RELEASE_FENCE_SCOPE = C.HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE
HEADER_BARRIER_BIT = 1 << HEADER_BARRIER

# hsa_fence_scope_t
FENCE_SCOPE_NONE = C.HSA_FENCE_SCOPE_NONE
FENCE_SCOPE_AGENT = C.HSA_FENCE_SCOPE_AGENT
FENCE_SCOPE_SYSTEM = C.HSA_FENCE_SCOPE_SYSTEM

# hsa_amd_packet_type_t (the AmdFormat byte of a vendor packet, carried in the setup half-word).
AMD_PACKET_TYPE_BARRIER_VALUE = C.HSA_AMD_PACKET_TYPE_BARRIER_VALUE

# hsa_signal_condition_t
CONDITION_EQ = C.HSA_SIGNAL_CONDITION_EQ
CONDITION_NE = C.HSA_SIGNAL_CONDITION_NE
CONDITION_LT = C.HSA_SIGNAL_CONDITION_LT
CONDITION_GTE = C.HSA_SIGNAL_CONDITION_GTE

DISPATCH_SETUP_3D = 3  # setup: dimensions in bits 0..1
PACKET_SIZE = 64
BODY_SIZE = PACKET_SIZE - 4
MAX_BARRIER_DEPENDENCIES = 5
INT64_MAX = (1 << 63) - 1
_U64 = (1 << 64) - 1

# An unpublished slot: type INVALID, everything else zero. The packet processor stops at it.
INVALID_WORD = PACKET_TYPE_INVALID << HEADER_TYPE

# Bytes 4..63 of each packet kind (hsa.h / hsa_ext_amd.h field order; `x` bytes are reserved zeros).
#   dispatch: workgroup_size[3] u16, reserved0 u16, grid_size[3] u32, private/group segment u32,
#             kernel_object u64, kernarg_address u64, reserved2 u64, completion_signal u64
_DISPATCH_BODY = struct.Struct("<3H2x3III QQ8xQ")
#   barrier-AND/OR: reserved1 u32, dep_signal[5] u64, reserved2 u64, completion_signal u64
_BARRIER_BODY = struct.Struct("<4x5Q8xQ")
#   BARRIER_VALUE: reserved0 u32, signal u64, value i64, mask i64, cond u32, reserved1 u32,
#                  reserved2 u64, reserved3 u64, completion_signal u64
_BARRIER_VALUE_BODY = struct.Struct("<4xQQQI4x16xQ")
_WORD = struct.Struct("<I")
assert _DISPATCH_BODY.size == _BARRIER_BODY.size == _BARRIER_VALUE_BODY.size == BODY_SIZE


def header_word(packet_type: int, *, barrier: bool, acquire: int, release: int, setup: int = 0) -> int:
    """The first 32-bit word of a packet: the 16-bit header with `setup` in the upper half."""
    return (packet_type
            | (HEADER_BARRIER_BIT if barrier else 0)
            | acquire << HEADER_ACQUIRE_FENCE_SCOPE
            | release << HEADER_RELEASE_FENCE_SCOPE
            | setup << 16)


def dispatch_body(*, workgroup_size: Sequence[int], grid_size: Sequence[int], private_segment_size: int,
                  group_segment_size: int, kernel_object: int, kernarg_address: int,
                  completion_signal: int = 0) -> bytes:
    """Bytes 4..63 of a kernel dispatch packet; `grid_size` counts work-items, not workgroups."""
    wx, wy, wz = workgroup_size
    gx, gy, gz = grid_size
    return _DISPATCH_BODY.pack(wx, wy, wz, gx, gy, gz, private_segment_size, group_segment_size,
                               kernel_object, kernarg_address, completion_signal)


def _dependencies(dep_signals: Sequence[int]) -> Sequence[int]:
    count = len(dep_signals)
    if count == MAX_BARRIER_DEPENDENCIES:
        return dep_signals
    if count > MAX_BARRIER_DEPENDENCIES:
        raise ValueError(f"a barrier packet takes at most {MAX_BARRIER_DEPENDENCIES} dependencies, got {count}")
    return (*dep_signals, *(0,) * (MAX_BARRIER_DEPENDENCIES - count))


def barrier_and_body(dep_signals: Sequence[int] = (), completion_signal: int = 0) -> bytes:
    """Bytes 4..63 of a barrier-AND packet: waits until every non-null dependency reads 0."""
    return _BARRIER_BODY.pack(*_dependencies(dep_signals), completion_signal)


def barrier_or_body(dep_signals: Sequence[int] = (), completion_signal: int = 0) -> bytes:
    """Bytes 4..63 of a barrier-OR packet: waits until any non-null dependency reads 0.

    Same body layout as barrier-AND (only the header's type differs)."""
    return _BARRIER_BODY.pack(*_dependencies(dep_signals), completion_signal)


def barrier_value_body(*, signal: int, value: int, mask: int, condition: int, completion_signal: int = 0) -> bytes:
    """Bytes 4..63 of AMD's BARRIER_VALUE packet: waits until `(load(signal) & mask) <condition> value`.

    `value` and `mask` are i64 in the packet; negative values are stored as two's complement. The
    first word is `header_word(PACKET_TYPE_VENDOR_SPECIFIC, ..., setup=AMD_PACKET_TYPE_BARRIER_VALUE)`."""
    return _BARRIER_VALUE_BODY.pack(signal, value & _U64, mask & _U64, condition, completion_signal)


def packet_bytes(word: int, body: bytes) -> bytes:
    """The whole 64-byte packet (for logs and tests; the ring itself is written by `write_packet`)."""
    return _WORD.pack(word) + body


def write_packet(slot_address: int, word: int, body: bytes, ffi) -> None:
    """Publish one packet into the ring slot at `slot_address` (64-byte aligned host memory).

    The body goes first (bytes 4..63), then the first word as a single aligned 32-bit store through a
    `uint32_t*`: the moment the type stops reading INVALID, the packet processor may consume the
    slot, so the word must land after every body byte and in one piece. On x86-64 stores are not
    reordered with earlier stores (TSO), and cffi compiles `p[0] = word` to one 4-byte `mov`, so
    this store is a release at the hardware level (reference §5.3); a compiler barrier is implied
    by the call boundary between the two cffi operations.
    """
    ffi.memmove(ffi.cast("uint8_t*", slot_address + 4), body, BODY_SIZE)
    ffi.cast("uint32_t*", slot_address)[0] = word

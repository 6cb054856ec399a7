"""SipHash-2-4 (Aumasson & Bernstein), the keyed 64-bit hash IREE uses for profile identities
(code-object and function hashes) and for the VM's `buffer.hash`. Pure Python; one implementation
for both users.
"""

from __future__ import annotations

import struct

M64 = (1 << 64) - 1


def siphash24(data: bytes, k0: int, k1: int) -> int:
    """Standard SipHash-2-4 of `data` with the 128-bit key (k0, k1), as a u64."""
    v0 = 0x736F6D6570736575 ^ k0
    v1 = 0x646F72616E646F6D ^ k1
    v2 = 0x6C7967656E657261 ^ k0
    v3 = 0x7465646279746573 ^ k1

    def rounds(v0, v1, v2, v3, count):
        for _ in range(count):
            v0 = (v0 + v1) & M64
            v1 = ((v1 << 13) | (v1 >> 51)) & M64
            v1 ^= v0
            v0 = ((v0 << 32) | (v0 >> 32)) & M64
            v2 = (v2 + v3) & M64
            v3 = ((v3 << 16) | (v3 >> 48)) & M64
            v3 ^= v2
            v0 = (v0 + v3) & M64
            v3 = ((v3 << 21) | (v3 >> 43)) & M64
            v3 ^= v0
            v2 = (v2 + v1) & M64
            v1 = ((v1 << 17) | (v1 >> 47)) & M64
            v1 ^= v2
            v2 = ((v2 << 32) | (v2 >> 32)) & M64
        return v0, v1, v2, v3

    data = bytes(data)
    whole = len(data) - len(data) % 8
    for m in struct.unpack_from(f"<{whole // 8}Q", data):
        v3 ^= m
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = ((len(data) & 0xFF) << 56) | int.from_bytes(data[whole:], "little")
    v3 ^= last
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


def siphash24_keyed(key: bytes, data: bytes) -> int:
    """SipHash-2-4 with the key given as its 16 bytes (two little-endian u64 words)."""
    k0, k1 = struct.unpack("<QQ", key)
    return siphash24(data, k0, k1)

"""What the tests of the one-pass native reducers share: their layout tables against schema.py,
one command run with both tools, and mutated bundles."""

from __future__ import annotations

import random

from amdgpu_cli.profile import native, schema

from .test_summary import amdgpu_bundle, run_ours


def assert_layout(layout, fields: list[tuple[str, str]]) -> None:
    """A reducer's field table (`layout(families, offsets, capacity)`: the family and offset of
    each field it reads) equals schema.py's dtypes, field for field."""
    ffi, _ = native.native_module()
    families, offsets = (ffi.new("uint32_t[]", 64) for _ in range(2))
    assert layout(families, offsets, 64) == len(fields)
    for i, (suffix, field) in enumerate(fields):
        ct = schema.BY_SUFFIX[suffix]
        assert schema.CONTENT_TYPES[families[i]] is ct, (i, suffix)
        assert offsets[i] == ct.dtype.fields[field][1], (suffix, field)


def assert_like_iree(args: list, iree_profile, label: str = "") -> int:
    """`args` (a report, `--format=jsonl`, the bundle last) run with ours and iree-profile: the
    same exit status, the same output, or on failure no output and one error line. The status."""
    theirs = iree_profile(args)
    code, out, err = run_ours(args)
    assert code == theirs.returncode, (label, args, err, theirs.stderr)
    if code == 0:
        assert out == theirs.stdout, (label, args)
    else:
        assert out == "" and err.count("\n") == 1 and "Traceback" not in err, (label, err)
    return code


def mutations(seed: int, count: int, base: bytes | None = None) -> list[tuple[str, bytes]]:
    """A bundle (the rich synthetic one by default) with bytes flipped, 4/8-byte fields set to
    edge values, or cut short."""
    base = amdgpu_bundle() if base is None else base
    rng = random.Random(seed)
    out = []
    edges = [0, 1, 0xFF, 0xFFFFFFFF, 0x7FFFFFFF, 1 << 31, 88, 104, 248]
    for i in range(count):
        data = bytearray(base)
        kind = i % 3
        if kind == 0:
            at = rng.randrange(24, len(data))
            data[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            at = rng.randrange(24, len(data) - 8) & ~3
            width = rng.choice((4, 8))
            value = rng.choice(edges) if width == 4 else rng.choice(edges + [(1 << 64) - 1, 1 << 63])
            data[at:at + width] = value.to_bytes(width, "little")
        else:
            data = data[:rng.randrange(24, len(data))]
        out.append((f"mutation {i} ({('flip', 'field', 'cut')[kind]})", bytes(data)))
    return out

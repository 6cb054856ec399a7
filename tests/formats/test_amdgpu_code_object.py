"""parse_code_object against llvm-readobj-19 and clang-19 output, the e_flags rules of LLVM's
AMDGPUUsage ("ELF Code Object": EI_ABIVERSION 1..4 = v3..v6; v3 xnack 0x100 / sramecc 0x200 bits;
v4+ xnack field 0x300 and sramecc field 0xC00 with any 1, off 2, on 3; generic version in bits 24..31,
v6 only), and corrupt input (truncations, byte flips) that must raise CodeObjectError only.
"""

from __future__ import annotations

import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from amdgpu_cli.formats.amdgpu_code_object import CodeObjectError, parse_code_object
from tests.device_binaries import readobj

ROOT = Path(__file__).resolve().parents[2]
GFX942 = (ROOT / "device_binaries" / "amdgcn-amd-amdhsa--gfx942.hsaco").read_bytes()
GFX11_GENERIC = (ROOT / "device_binaries" / "amdgcn-amd-amdhsa--gfx11-generic.hsaco").read_bytes()
E_FLAGS_OFFSET = 48
KERNEL_SOURCE = """
__kernel __attribute__((reqd_work_group_size(64, 2, 1)))
void scale(__global float* restrict out, __global const float* restrict in, float factor, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) out[i] = in[i] * factor;
}
"""


def _with(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def _with_flags(data: bytes, e_flags: int, abi_version: int | None = None) -> bytes:
    data = _with(data, E_FLAGS_OFFSET, "<I", e_flags)
    return data if abi_version is None else _with(data, 8, "<B", abi_version)


def _clang_code_object(tmp_path: Path, mcpu: str) -> Path:
    clang, lld = shutil.which("clang-19"), shutil.which("ld.lld-19")
    if clang is None or lld is None:
        pytest.fail("clang-19 / ld.lld-19 not installed (.ci/run installs them)")
    source = tmp_path / "scale.cl"
    source.write_text(KERNEL_SOURCE)
    obj, out = tmp_path / "scale.o", tmp_path / f"{mcpu.replace(':', '_')}.hsaco"
    subprocess.run([clang, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", f"-mcpu={mcpu}",
                    "-nogpulib", "-O2", "-c", str(source), "-o", str(obj)], check=True, capture_output=True)
    subprocess.run([lld, "-shared", str(obj), "-o", str(out)], check=True, capture_output=True)
    return out


@pytest.mark.parametrize("mcpu, target_id, wave", [
    ("gfx942:sramecc+:xnack-", "gfx942:sramecc+:xnack-", 64),
    ("gfx90a:xnack+", "gfx90a:xnack+", 64),
    ("gfx1100", "gfx1100", 32),
])
def test_clang_kernel_parses_as_llvm_readobj_reads_it(tmp_path, mcpu, target_id, wave):
    path = _clang_code_object(tmp_path, mcpu)
    header, kernels = readobj.header(path), readobj.kernels(path)
    parsed = parse_code_object(path.read_bytes())
    assert parsed.target_id == target_id
    assert parsed.target == target_id.split(":")[0]
    assert (parsed.e_flags, parsed.abi_version, parsed.code_object_version) == \
        (header["e_flags"], header["abi_version"], header["abi_version"] + 2)
    assert parsed.metadata["amdhsa.target"] == f"amdgcn-amd-amdhsa--{mcpu}"
    [kernel] = parsed.kernels
    truth = kernels["scale"]
    assert kernel.name == "scale" and kernel.symbol == truth["symbol"] == "scale.kd"
    assert kernel.reqd_workgroup_size == (64, 2, 1)
    assert kernel.wavefront_size == truth["wavefront_size"] == wave
    assert (kernel.kernarg_segment_size, kernel.kernarg_segment_align) == \
        (truth["kernarg_segment_size"], truth["kernarg_segment_align"])
    assert [(a.offset, a.size, a.value_kind) for a in kernel.args] == \
        [(a["offset"], a["size"], a["value_kind"]) for a in truth["args"]]
    assert [a.access for a in kernel.args[:2]] == ["write_only", "read_only"]
    assert kernel.descriptor.kernarg_size == truth["kernarg_segment_size"]


@pytest.mark.parametrize("e_flags, abi_version, sramecc, xnack, target_id", [
    (0x04C | 0xC00 | 0x200, 3, "on", "off", "gfx942:sramecc+:xnack-"),
    (0x04C | 0x800 | 0x300, 2, "off", "on", "gfx942:sramecc-:xnack+"),
    (0x04C | 0x400 | 0x100, 3, "any", "any", "gfx942"),
    (0x04C, 3, "unsupported", "unsupported", "gfx942"),
    (0x04C | 0x100, 1, "off", "on", "gfx942:sramecc-:xnack+"),  # v3: bits set = on, clear = off
    (0x041, 1, "unsupported", "unsupported", "gfx1100"),  # v3 on a processor without the features
    (0x03F | 0x200, 1, "on", "off", "gfx90a:sramecc+:xnack-"),
])
def test_feature_bits_per_code_object_version(e_flags, abi_version, sramecc, xnack, target_id):
    parsed = parse_code_object(_with_flags(GFX942, e_flags, abi_version))
    assert (parsed.sramecc, parsed.xnack, parsed.target_id) == (sramecc, xnack, target_id)
    assert parsed.code_object_version == abi_version + 2


def test_generic_target_and_version():
    parsed = parse_code_object(GFX11_GENERIC)
    assert (parsed.target, parsed.generic_version, parsed.code_object_version) == ("gfx11-generic", 1, 6)
    assert parsed.is_generic
    assert parse_code_object(_with_flags(GFX11_GENERIC, 0x2000054)).generic_version == 2


@pytest.mark.parametrize("data, message", [
    (_with_flags(GFX942, 0x027), "unknown processor EF_AMDGPU_MACH 0x27"),
    (_with_flags(GFX942, 0x054), "generic target gfx11-generic needs code object v6"),
    (_with_flags(GFX11_GENERIC, 0x054), "generic target gfx11-generic has no generic version"),
    (_with_flags(GFX11_GENERIC, 0x100004C), "exact target gfx942 carries generic version 1"),
    (_with(GFX942, 7, "<B", 0), "EI_OSABI 0"),
    (_with(GFX942, 8, "<B", 5), "EI_ABIVERSION 5"),
    (_with(GFX942, 18, "<H", 0x3E), "e_machine 0x3e is not EM_AMDGPU (0xe0)"),
    (b"\x7fELF" + bytes(12), "shorter than the 64-byte ELF64 header"),
    (b"", "shorter than the 64-byte ELF64 header"),
])
def test_bad_headers_raise_one_error(data, message):
    with pytest.raises(CodeObjectError, match="AMDGPU code object") as caught:
        parse_code_object(data)
    assert message in str(caught.value)
    assert caught.value.one_line().startswith("INVALID_ARGUMENT; ")


def _note_desc_offset(data: bytes) -> int:
    """File offset of the metadata note's msgpack payload (first note after the AMDGPU owner)."""
    return data.index(b"AMDGPU\0") + 8


def test_corrupt_metadata_note():
    at = _note_desc_offset(GFX942)
    with pytest.raises(CodeObjectError, match="not valid msgpack"):
        parse_code_object(_with(GFX942, at, "<B", 0xC1))  # 0xC1 is never used in msgpack
    (descsz,) = struct.unpack_from("<I", GFX942, at - 16)  # descsz: 8 bytes before the note's name
    as_bin = _with(_with(GFX942, at, "<B", 0xC5), at + 1, ">H", descsz - 3)  # one bin16 filling the note
    with pytest.raises(CodeObjectError, match="not a msgpack map"):
        parse_code_object(as_bin)


def test_missing_kernel_descriptor_symbol():
    name = b"iree_hal_amdgpu_device_buffer_fill_x1.kd\0"
    in_dynstr = GFX942.index(name)  # .dynstr precedes .strtab; msgpack strings carry no NUL
    data = bytearray(GFX942)
    data[in_dynstr + len(name) - 2] = ord("x")
    with pytest.raises(CodeObjectError, match="descriptor symbol iree_hal_amdgpu_device_buffer_fill_x1.kd"):
        parse_code_object(bytes(data))


def test_kernel_lookup():
    parsed = parse_code_object(GFX942)
    assert parsed.kernel("iree_hal_amdgpu_device_buffer_copy_x1").kernarg_segment_size == 24
    with pytest.raises(CodeObjectError) as caught:
        parsed.kernel("nope")
    assert caught.value.status == "NOT_FOUND"


def _parse_or_our_error(data: bytes) -> None:
    try:
        parse_code_object(data)
    except CodeObjectError:
        pass


def test_truncations_raise_only_our_error():
    step = max(1, len(GFX942) // 700)
    for size in [*range(0, 1100), *range(1100, len(GFX942), step)]:
        _parse_or_our_error(GFX942[:size])


@pytest.mark.parametrize("seed", range(8))
def test_byte_flips_raise_only_our_error(seed):
    rng = random.Random(seed)
    note = _note_desc_offset(GFX11_GENERIC)
    for _ in range(400):
        data = bytearray(GFX11_GENERIC)
        for _ in range(rng.randint(1, 6)):
            # Half the flips land in the header, program headers and metadata note, where structure lives.
            at = rng.randrange(note + 7000) if rng.random() < 0.5 else rng.randrange(len(data))
            data[at] = rng.randrange(256)
        _parse_or_our_error(bytes(data))

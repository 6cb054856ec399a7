"""AMDGPU code objects (HSA ELF): target from e_flags, kernels from the NT_AMDGPU_METADATA note.

`parse_code_object(data)` reads a raw code object (an ELF64 ET_DYN for e_machine EM_AMDGPU, as
ld.lld links it) and returns a `CodeObject`: the processor the code was built for (`target`,
e.g. `gfx942` or `gfx11-generic`), its target id with the sramecc/xnack settings e_flags record
(`gfx942:sramecc+:xnack-`; "any" and "unsupported" settings are left out, as LLVM and IREE
spell target ids), the code-object version, the decoded msgpack metadata, and one `Kernel` per
`amdhsa.kernels` entry with the 64-byte kernel descriptor its `.kd` symbol names.

Only parsing: nothing is loaded. The generic ELF work (header, program headers, dynamic symbols)
is `formats/elf.py`'s; this module adds the AMDGPU header rules, the note walk and the metadata
schema. Every offset and field is checked, so arbitrary bytes raise `CodeObjectError`
(INVALID_ARGUMENT, one line) and never IndexError, struct.error or a msgpack exception.

Sources (facts): LLVM AMDGPUUsage "ELF Code Object" (EI_OSABI 64 = HSA, EI_ABIVERSION 1..4 =
code object v3..v6, e_flags EF_AMDGPU_MACH in bits 0-7, v4+ xnack in 0x300 and sramecc in 0xC00,
v6 generic version in bits 24-31, note type 32 owner "AMDGPU", kernel descriptor layout) and
LLVM's ELF.h EF_AMDGPU_MACH_* values, as IREE's `util/code_object_target.c` also tabulates them.
IREE's AMD1 executable container is not handled here (raw code objects only).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import msgpack

from amdgpu_cli.formats.elf import ElfFormatError, ElfImage, parse_elf

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
PT_NOTE = 4
NT_AMDGPU_METADATA = 32
NOTE_OWNER = b"AMDGPU\0"
KERNEL_DESCRIPTOR_SIZE = 64

# EI_ABIVERSION -> code object version.
CODE_OBJECT_VERSIONS = {1: 3, 2: 4, 3: 5, 4: 6}

EF_AMDGPU_MACH = 0x0FF
EF_AMDGPU_FEATURE_XNACK_V3 = 0x100
EF_AMDGPU_FEATURE_SRAMECC_V3 = 0x200
EF_AMDGPU_FEATURE_XNACK_V4 = 0x300
EF_AMDGPU_FEATURE_SRAMECC_V4 = 0xC00
EF_AMDGPU_GENERIC_VERSION_SHIFT = 24

# v4+ two-bit feature fields, as multiples of the field's lowest bit.
_V4_FEATURE_STATES = {0: "unsupported", 1: "any", 2: "off", 3: "on"}

# EF_AMDGPU_MACH value -> (processor, supports sramecc, supports xnack).
MACHINES: dict[int, tuple[str, bool, bool]] = {
    0x020: ("gfx600", False, False), 0x021: ("gfx601", False, False),
    0x022: ("gfx700", False, False), 0x023: ("gfx701", False, False),
    0x024: ("gfx702", False, False), 0x025: ("gfx703", False, False),
    0x026: ("gfx704", False, False), 0x028: ("gfx801", False, True),
    0x029: ("gfx802", False, False), 0x02A: ("gfx803", False, False),
    0x02B: ("gfx810", False, True), 0x02C: ("gfx900", False, True),
    0x02D: ("gfx902", False, True), 0x02E: ("gfx904", False, True),
    0x02F: ("gfx906", True, True), 0x030: ("gfx908", True, True),
    0x031: ("gfx909", False, True), 0x032: ("gfx90c", False, True),
    0x033: ("gfx1010", False, True), 0x034: ("gfx1011", False, True),
    0x035: ("gfx1012", False, True), 0x036: ("gfx1030", False, False),
    0x037: ("gfx1031", False, False), 0x038: ("gfx1032", False, False),
    0x039: ("gfx1033", False, False), 0x03A: ("gfx602", False, False),
    0x03B: ("gfx705", False, False), 0x03C: ("gfx805", False, False),
    0x03D: ("gfx1035", False, False), 0x03E: ("gfx1034", False, False),
    0x03F: ("gfx90a", True, True), 0x040: ("gfx940", True, True),
    0x041: ("gfx1100", False, False), 0x042: ("gfx1013", False, True),
    0x043: ("gfx1150", False, False), 0x044: ("gfx1103", False, False),
    0x045: ("gfx1036", False, False), 0x046: ("gfx1101", False, False),
    0x047: ("gfx1102", False, False), 0x048: ("gfx1200", False, False),
    0x049: ("gfx1250", False, False), 0x04A: ("gfx1151", False, False),
    0x04B: ("gfx941", True, True), 0x04C: ("gfx942", True, True),
    0x04E: ("gfx1201", False, False), 0x04F: ("gfx950", True, True),
    0x050: ("gfx1310", False, False), 0x051: ("gfx9-generic", False, True),
    0x052: ("gfx10-1-generic", False, True), 0x053: ("gfx10-3-generic", False, False),
    0x054: ("gfx11-generic", False, False), 0x055: ("gfx1152", False, False),
    0x058: ("gfx1153", False, False), 0x059: ("gfx12-generic", False, False),
    0x05A: ("gfx1251", False, False), 0x05B: ("gfx12-5-generic", False, False),
    0x05C: ("gfx1172", False, False), 0x05D: ("gfx1170", False, False),
    0x05E: ("gfx1171", False, False), 0x05F: ("gfx9-4-generic", True, True),
}

_NOTE_HEADER = struct.Struct("<III")
_DESCRIPTOR_HEAD = struct.Struct("<IIIIq")  # group, private, kernarg size, reserved, entry offset


class CodeObjectError(ElfFormatError):
    """Bytes that are not a well-formed AMDGPU code object."""

    status = "INVALID_ARGUMENT"


@dataclass(frozen=True)
class KernelArg:
    offset: int
    size: int
    value_kind: str
    address_space: str | None = None
    access: str | None = None  # `.actual_access`, else `.access`


@dataclass(frozen=True)
class KernelDescriptor:
    """The fields of the 64-byte `amd_kernel_code_t` successor (`<name>.kd`) a loader reads."""

    address: int  # vaddr of the descriptor in the code object
    group_segment_fixed_size: int
    private_segment_fixed_size: int
    kernarg_size: int
    kernel_code_entry_byte_offset: int


@dataclass(frozen=True)
class Kernel:
    name: str
    symbol: str  # `<name>.kd`
    kernarg_segment_size: int
    kernarg_segment_align: int
    group_segment_fixed_size: int
    private_segment_fixed_size: int
    wavefront_size: int
    reqd_workgroup_size: tuple[int, int, int] | None
    args: tuple[KernelArg, ...]
    descriptor: KernelDescriptor


@dataclass(frozen=True)
class CodeObject:
    target: str  # processor: `gfx942`, `gfx11-generic`
    target_id: str  # processor plus explicit features: `gfx942:sramecc+:xnack-`
    sramecc: str  # "on", "off", "any" or "unsupported"
    xnack: str
    abi_version: int  # EI_ABIVERSION (1..4)
    code_object_version: int  # 3..6
    e_flags: int
    generic_version: int  # 0 unless a v6 generic target
    metadata: dict[str, Any]
    kernels: tuple[Kernel, ...]

    @property
    def is_generic(self) -> bool:
        return self.target.endswith("-generic")

    def kernel(self, name: str) -> Kernel:
        for kernel in self.kernels:
            if kernel.name == name:
                return kernel
        raise CodeObjectError(f"code object for {self.target_id} has no kernel {name!r}", status="NOT_FOUND")


def _fail(message: str) -> CodeObjectError:
    return CodeObjectError(f"AMDGPU code object: {message}")


# ----------------------------------------------------------------------------------------------
# Header and target


def _target_from_header(data: bytes, e_flags: int) -> tuple[str, str, str, int, int]:
    """(processor, sramecc, xnack, abi_version, generic_version) from the ELF identification and e_flags."""
    if data[7] != ELFOSABI_AMDGPU_HSA:
        raise _fail(f"EI_OSABI {data[7]} is not ELFOSABI_AMDGPU_HSA ({ELFOSABI_AMDGPU_HSA})")
    abi_version = data[8]
    if abi_version not in CODE_OBJECT_VERSIONS:
        raise _fail(f"EI_ABIVERSION {abi_version} is not a supported code object version (v3..v6)")
    mach = e_flags & EF_AMDGPU_MACH
    if mach not in MACHINES:
        raise _fail(f"unknown processor EF_AMDGPU_MACH {mach:#x} in e_flags {e_flags:#x}")
    processor, has_sramecc, has_xnack = MACHINES[mach]
    if abi_version == 1:  # v3: one bit per feature, set = on
        sramecc = "on" if e_flags & EF_AMDGPU_FEATURE_SRAMECC_V3 else ("off" if has_sramecc else "unsupported")
        xnack = "on" if e_flags & EF_AMDGPU_FEATURE_XNACK_V3 else ("off" if has_xnack else "unsupported")
    else:
        sramecc = _V4_FEATURE_STATES[(e_flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10]
        xnack = _V4_FEATURE_STATES[(e_flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8]
    generic_version = e_flags >> EF_AMDGPU_GENERIC_VERSION_SHIFT if abi_version == 4 else 0
    generic = processor.endswith("-generic")
    if generic and abi_version != 4:
        raise _fail(f"generic target {processor} needs code object v6, not v{CODE_OBJECT_VERSIONS[abi_version]}")
    if generic and generic_version == 0:
        raise _fail(f"generic target {processor} has no generic version in e_flags {e_flags:#x}")
    if not generic and generic_version:
        raise _fail(f"exact target {processor} carries generic version {generic_version}")
    return processor, sramecc, xnack, abi_version, generic_version


def format_target_id(processor: str, sramecc: str, xnack: str) -> str:
    """`processor[:sramecc±][:xnack±]`: only explicit on/off settings are written."""
    parts = [processor]
    for name, state in (("sramecc", sramecc), ("xnack", xnack)):
        if state in ("on", "off"):
            parts.append(f"{name}{'+' if state == 'on' else '-'}")
    return ":".join(parts)


# ----------------------------------------------------------------------------------------------
# Metadata note


def _align4(value: int) -> int:
    return (value + 3) & ~3


def _notes(image: ElfImage):
    """(owner bytes, type, desc bytes) for every note in the PT_NOTE segments."""
    data = image.data
    for ph in image.program_headers:
        if ph.type != PT_NOTE:
            continue
        if ph.offset > len(data) or ph.filesz > len(data) - ph.offset:
            raise _fail(f"PT_NOTE segment [{ph.offset:#x}, +{ph.filesz:#x}) lies outside the file")
        offset, end = ph.offset, ph.offset + ph.filesz
        while offset < end:
            if end - offset < _NOTE_HEADER.size:
                raise _fail(f"note header at {offset:#x} is truncated")
            namesz, descsz, note_type = _NOTE_HEADER.unpack_from(data, offset)
            name_at = offset + _NOTE_HEADER.size
            desc_at = name_at + _align4(namesz)
            next_at = desc_at + _align4(descsz)
            if next_at > end:
                raise _fail(f"note at {offset:#x} (name {namesz} bytes, desc {descsz} bytes) overruns its segment")
            yield data[name_at:name_at + namesz], note_type, data[desc_at:desc_at + descsz]
            offset = next_at


def _metadata(image: ElfImage) -> dict[str, Any]:
    found = [desc for owner, kind, desc in _notes(image) if owner == NOTE_OWNER and kind == NT_AMDGPU_METADATA]
    if not found:
        raise _fail("no NT_AMDGPU_METADATA note (type 32, owner AMDGPU)")
    if len(found) > 1:
        raise _fail(f"{len(found)} NT_AMDGPU_METADATA notes; expected one")
    try:
        metadata = msgpack.unpackb(found[0], raw=False, strict_map_key=True)
    except (ValueError, TypeError, msgpack.UnpackException) as error:
        raise _fail(f"metadata note is not valid msgpack: {error}") from None
    if not isinstance(metadata, dict):
        raise _fail("metadata note is not a msgpack map")
    return metadata


def _field(entry: dict, key: str, kind: type, where: str, default: Any = ...) -> Any:
    if key not in entry:
        if default is ...:
            raise _fail(f"{where} has no {key}")
        return default
    value = entry[key]
    if kind is int and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise _fail(f"{where} {key} is {value!r}, not a non-negative integer")
    if kind is not int and not isinstance(value, kind):
        raise _fail(f"{where} {key} is {type(value).__name__}, not {kind.__name__}")
    return value


def _arg(entry: Any, where: str) -> KernelArg:
    if not isinstance(entry, dict):
        raise _fail(f"{where} is not a map")
    access = _field(entry, ".actual_access", str, where, None)
    return KernelArg(
        offset=_field(entry, ".offset", int, where),
        size=_field(entry, ".size", int, where),
        value_kind=_field(entry, ".value_kind", str, where),
        address_space=_field(entry, ".address_space", str, where, None),
        access=access if access is not None else _field(entry, ".access", str, where, None),
    )


def _workgroup_size(entry: dict, where: str) -> tuple[int, int, int] | None:
    value = _field(entry, ".reqd_workgroup_size", list, where, None)
    if value is None:
        return None
    if len(value) != 3 or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value):
        raise _fail(f"{where} .reqd_workgroup_size {value!r} is not three positive integers")
    return tuple(value)


def _descriptor(image: ElfImage, symbol_name: str) -> KernelDescriptor:
    symbol = image.symbol(symbol_name)
    if symbol is None:
        raise _fail(f"kernel descriptor symbol {symbol_name} is not defined")
    for ph in image.load_segments:
        if ph.vaddr <= symbol.value and symbol.value + KERNEL_DESCRIPTOR_SIZE <= ph.vaddr + ph.filesz:
            at = ph.offset + symbol.value - ph.vaddr
            group, private, kernarg, _reserved, entry = _DESCRIPTOR_HEAD.unpack_from(image.data, at)
            return KernelDescriptor(symbol.value, group, private, kernarg, entry)
    raise _fail(f"kernel descriptor {symbol_name} at {symbol.value:#x} is not inside a file-backed segment")


def _kernel(image: ElfImage, entry: Any, index: int) -> Kernel:
    where = f"amdhsa.kernels[{index}]"
    if not isinstance(entry, dict):
        raise _fail(f"{where} is not a map")
    name = _field(entry, ".name", str, where)
    where = f"kernel {name}"
    symbol = _field(entry, ".symbol", str, where)
    align = _field(entry, ".kernarg_segment_align", int, where)
    if align == 0 or align & (align - 1):
        raise _fail(f"{where} .kernarg_segment_align {align} is not a power of two")
    args = _field(entry, ".args", list, where, [])
    return Kernel(
        name=name,
        symbol=symbol,
        kernarg_segment_size=_field(entry, ".kernarg_segment_size", int, where),
        kernarg_segment_align=align,
        group_segment_fixed_size=_field(entry, ".group_segment_fixed_size", int, where),
        private_segment_fixed_size=_field(entry, ".private_segment_fixed_size", int, where),
        wavefront_size=_field(entry, ".wavefront_size", int, where),
        reqd_workgroup_size=_workgroup_size(entry, where),
        args=tuple(_arg(arg, f"{where} arg {i}") for i, arg in enumerate(args)),
        descriptor=_descriptor(image, symbol),
    )


# ----------------------------------------------------------------------------------------------


def parse_code_object(data: bytes) -> CodeObject:
    """Parse and check a raw AMDGPU code object; raises `CodeObjectError` on anything malformed."""
    try:
        image = parse_elf(data, machine=None)
    except ElfFormatError as error:
        raise _fail(str(error)) from None
    if image.header.machine != EM_AMDGPU:
        raise _fail(f"e_machine {image.header.machine:#x} is not EM_AMDGPU ({EM_AMDGPU:#x})")
    processor, sramecc, xnack, abi_version, generic_version = _target_from_header(image.data, image.header.flags)
    metadata = _metadata(image)
    entries = _field(metadata, "amdhsa.kernels", list, "metadata", [])
    kernels = tuple(_kernel(image, entry, i) for i, entry in enumerate(entries))
    return CodeObject(
        target=processor,
        target_id=format_target_id(processor, sramecc, xnack),
        sramecc=sramecc,
        xnack=xnack,
        abi_version=abi_version,
        code_object_version=CODE_OBJECT_VERSIONS[abi_version],
        e_flags=image.header.flags,
        generic_version=generic_version,
        metadata=metadata,
        kernels=kernels,
    )

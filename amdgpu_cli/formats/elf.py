"""ELF64 little-endian reader: header, program headers, dynamic section, dynamic symbols, relocations.

Owns only parsing: it never maps, patches or runs anything. Every offset, size and count read from
the file is checked against the file's bounds (and, for addresses, against the PT_LOAD segments)
before it is used, so arbitrary bytes raise `ElfFormatError` (one line) and never an IndexError or
struct.error. Used by the CPU driver's embedded-ELF loader (`drivers/local/elf_loader.py`), which
then only has to trust what `parse_elf` returns. Headers, symbols and relocations are NamedTuples
(cheap to define: every run of a CPU module imports this).

Scope: what IREE's llvm-cpu `embedded-elf-*` shared objects and ordinary ET_DYN objects need —
DT_RELA / DT_JMPREL (RELA only), DT_HASH or DT_GNU_HASH or `.dynsym` section for the symbol count,
DT_INIT / DT_INIT_ARRAY. Sources: the System V gABI and x86-64 psABI; IREE
`runtime/src/iree/hal/local/elf/elf_module.c` and `elf_types.h` for which checks a loader needs.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from amdgpu_cli.errors import AmdgpuCliError

ELF_MAGIC = b"\x7fELF"
ELFCLASS64 = 2
ELFDATA2LSB = 1
ET_EXEC = 2
ET_DYN = 3
EM_X86_64 = 0x3E
EM_AARCH64 = 0xB7

PT_LOAD = 1
PT_DYNAMIC = 2
PF_X, PF_W, PF_R = 1, 2, 4

DT_NULL, DT_NEEDED, DT_PLTRELSZ, DT_HASH, DT_STRTAB, DT_SYMTAB = 0, 1, 2, 4, 5, 6
DT_RELA, DT_RELASZ, DT_RELAENT, DT_STRSZ, DT_SYMENT = 7, 8, 9, 10, 11
DT_INIT, DT_FINI = 12, 13
DT_REL, DT_PLTREL, DT_TEXTREL, DT_JMPREL = 17, 20, 22, 23
DT_INIT_ARRAY, DT_INIT_ARRAYSZ = 25, 27
DT_GNU_HASH = 0x6FFFFEF5

SHT_DYNSYM = 11

EHDR_SIZE = 64
PHDR_SIZE = 56
SHDR_SIZE = 64
SYM_SIZE = 24
RELA_SIZE = 24
DYN_SIZE = 16

MAX_PROGRAM_HEADERS = 256
MAX_SYMBOLS = 1 << 20
MAX_RELOCATIONS = 1 << 22

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_PHDR = struct.Struct("<IIQQQQQQ")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SYM = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")
_DYN = struct.Struct("<qQ")


class ElfFormatError(AmdgpuCliError):
    """Bytes that are not a loadable ELF64 object of the kind the caller needs."""

    status = "INVALID_ARGUMENT"


class ElfHeader(NamedTuple):
    type: int
    machine: int
    entry: int
    phoff: int
    shoff: int
    flags: int
    phnum: int
    shnum: int
    shentsize: int


class ProgramHeader(NamedTuple):
    type: int
    flags: int
    offset: int
    vaddr: int
    filesz: int
    memsz: int
    align: int


class Symbol(NamedTuple):
    name: str
    value: int
    size: int
    info: int
    shndx: int

    @property
    def defined(self) -> bool:
        return self.shndx != 0


class Relocation(NamedTuple):
    offset: int  # virtual address patched
    type: int
    symbol: int  # index into ElfImage.symbols (0 = none)
    addend: int


class ElfImage:
    """A parsed, bounds-checked ELF64 object. `data` is the whole file; the parser fills in the
    dynamic section, symbols, relocations and init entries after construction."""

    __slots__ = ("data", "header", "program_headers", "dynamic", "symbols", "relocations",
                 "init_function", "init_array")

    def __init__(self, data: bytes, header: ElfHeader, program_headers: list[ProgramHeader]):
        self.data = data
        self.header = header
        self.program_headers = program_headers
        self.dynamic: list[tuple[int, int]] = []
        self.symbols: list[Symbol] = []
        self.relocations: list[Relocation] = []
        self.init_function: int | None = None  # DT_INIT vaddr
        # DT_INIT_ARRAY (vaddr, entry count); the entries are read after relocation
        self.init_array: tuple[int, int] | None = None

    @property
    def load_segments(self) -> list[ProgramHeader]:
        return [p for p in self.program_headers if p.type == PT_LOAD]

    def span(self) -> tuple[int, int]:
        """(lowest vaddr, highest vaddr + memsz) over PT_LOAD segments."""
        loads = self.load_segments
        return min(p.vaddr for p in loads), max(p.vaddr + p.memsz for p in loads)

    def symbol(self, name: str) -> Symbol | None:
        for s in self.symbols:
            if s.name == name and s.defined:
                return s
        return None

    def segment_for(self, vaddr: int, size: int = 1) -> ProgramHeader | None:
        """The PT_LOAD segment whose memory image holds [vaddr, vaddr + size), or None."""
        for p in self.load_segments:
            if p.vaddr <= vaddr and vaddr + size <= p.vaddr + p.memsz:
                return p
        return None


def _fail(message: str) -> ElfFormatError:
    return ElfFormatError(f"ELF: {message}")


def _check_range(data_len: int, offset: int, size: int, what: str) -> None:
    if offset < 0 or size < 0 or offset > data_len or size > data_len - offset:
        raise _fail(f"{what} [{offset:#x}, +{size:#x}) lies outside the {data_len}-byte file")


def _file_offset(image: ElfImage, vaddr: int, size: int, what: str) -> int:
    """File offset of a file-backed virtual range (inside one segment's filesz)."""
    for p in image.load_segments:
        if p.vaddr <= vaddr and vaddr + size <= p.vaddr + p.filesz:
            return p.offset + (vaddr - p.vaddr)
    raise _fail(f"{what} at vaddr {vaddr:#x} (+{size:#x}) is not inside any file-backed PT_LOAD segment")


def _cstring(data: bytes, start: int, end: int, what: str) -> str:
    if start < 0 or start >= end:
        raise _fail(f"{what} string offset {start:#x} outside the string table")
    stop = data.find(b"\0", start, end)
    if stop < 0:
        raise _fail(f"{what} string at {start:#x} is not NUL-terminated inside the string table")
    return data[start:stop].decode("utf-8", "replace")


def parse_header(data: bytes, *, machine: int | None = EM_X86_64) -> ElfHeader:
    if len(data) < EHDR_SIZE:
        raise _fail(f"file is {len(data)} bytes, shorter than the 64-byte ELF64 header")
    (ident, e_type, e_machine, e_version, e_entry, e_phoff, e_shoff, e_flags, e_ehsize, e_phentsize,
     e_phnum, e_shentsize, e_shnum, _e_shstrndx) = _EHDR.unpack_from(data, 0)
    if ident[:4] != ELF_MAGIC:
        raise _fail("bad magic (not an ELF file)")
    if ident[4] != ELFCLASS64:
        raise _fail(f"EI_CLASS {ident[4]} is not ELFCLASS64")
    if ident[5] != ELFDATA2LSB:
        raise _fail(f"EI_DATA {ident[5]} is not little-endian")
    if ident[6] != 1 or e_version != 1:
        raise _fail("unsupported ELF version")
    if e_type not in (ET_DYN, ET_EXEC):
        raise _fail(f"e_type {e_type} is not ET_DYN or ET_EXEC")
    if machine is not None and e_machine != machine:
        raise _fail(f"e_machine {e_machine:#x} does not match the host ({machine:#x})")
    if e_ehsize < EHDR_SIZE:
        raise _fail(f"e_ehsize {e_ehsize} is too small")
    if e_phnum == 0 or e_phnum > MAX_PROGRAM_HEADERS:
        raise _fail(f"e_phnum {e_phnum} out of range")
    if e_phentsize != PHDR_SIZE:
        raise _fail(f"e_phentsize {e_phentsize} is not {PHDR_SIZE}")
    _check_range(len(data), e_phoff, e_phnum * PHDR_SIZE, "program header table")
    return ElfHeader(e_type, e_machine, e_entry, e_phoff, e_shoff, e_flags, e_phnum, e_shnum, e_shentsize)


def _parse_program_headers(data: bytes, header: ElfHeader) -> list[ProgramHeader]:
    phdrs = []
    for i in range(header.phnum):
        p_type, p_flags, p_offset, p_vaddr, _paddr, p_filesz, p_memsz, p_align = _PHDR.unpack_from(
            data, header.phoff + i * PHDR_SIZE)
        ph = ProgramHeader(p_type, p_flags, p_offset, p_vaddr, p_filesz, p_memsz, p_align)
        if p_type == PT_LOAD:
            _check_range(len(data), p_offset, p_filesz, f"PT_LOAD segment {i}")
            if p_filesz > p_memsz:
                raise _fail(f"PT_LOAD segment {i} has filesz {p_filesz:#x} > memsz {p_memsz:#x}")
            if p_vaddr + p_memsz >= 1 << 40:
                raise _fail(f"PT_LOAD segment {i} vaddr {p_vaddr:#x}+{p_memsz:#x} is implausibly large")
            if p_align > 1 and (p_vaddr - p_offset) % p_align != 0 and p_align <= 4096:
                raise _fail(f"PT_LOAD segment {i} vaddr and offset disagree modulo alignment")
        elif p_type == PT_DYNAMIC:
            _check_range(len(data), p_offset, p_filesz, f"PT_DYNAMIC segment {i}")
        phdrs.append(ph)
    loads = sorted((p for p in phdrs if p.type == PT_LOAD), key=lambda p: p.vaddr)
    if not loads:
        raise _fail("no PT_LOAD segments")
    for a, b in zip(loads, loads[1:]):
        if a.vaddr + a.memsz > b.vaddr:
            raise _fail(f"PT_LOAD segments at {a.vaddr:#x} and {b.vaddr:#x} overlap")
    return phdrs


def _parse_dynamic(image: ElfImage) -> None:
    dyn_headers = [p for p in image.program_headers if p.type == PT_DYNAMIC]
    if not dyn_headers:
        return
    if len(dyn_headers) > 1:
        raise _fail("more than one PT_DYNAMIC segment")
    ph = dyn_headers[0]
    data = image.data
    entries = []
    for i in range(ph.filesz // DYN_SIZE):
        tag, value = _DYN.unpack_from(data, ph.offset + i * DYN_SIZE)
        if tag == DT_NULL:
            break
        entries.append((tag, value))
    image.dynamic = entries
    tags: dict[int, int] = {}
    for tag, value in entries:
        tags.setdefault(tag, value)

    if DT_REL in tags:
        raise _fail("DT_REL relocations are not supported (only RELA)")
    if DT_NEEDED in tags:
        raise _fail("object depends on other shared libraries (DT_NEEDED); only self-contained objects load")

    # Dynamic symbol table.
    if DT_SYMTAB in tags:
        if DT_STRTAB not in tags or DT_STRSZ not in tags:
            raise _fail("DT_SYMTAB without DT_STRTAB/DT_STRSZ")
        if tags.get(DT_SYMENT, SYM_SIZE) != SYM_SIZE:
            raise _fail(f"DT_SYMENT {tags[DT_SYMENT]} is not {SYM_SIZE}")
        strsz = tags[DT_STRSZ]
        str_off = _file_offset(image, tags[DT_STRTAB], strsz, "dynamic string table")
        count = _symbol_count(image, tags)
        if count > MAX_SYMBOLS:
            raise _fail(f"{count} dynamic symbols is too many")
        sym_off = _file_offset(image, tags[DT_SYMTAB], count * SYM_SIZE, "dynamic symbol table")
        symbols = []
        for i in range(count):
            st_name, st_info, _other, st_shndx, st_value, st_size = _SYM.unpack_from(data, sym_off + i * SYM_SIZE)
            name = _cstring(data, str_off + st_name, str_off + strsz, f"symbol {i}") if st_name else ""
            symbols.append(Symbol(name, st_value, st_size, st_info, st_shndx))
        image.symbols = symbols

    # Relocations: DT_RELA table and the PLT table (must also be RELA).
    relocs: list[Relocation] = []
    if DT_RELA in tags or DT_RELASZ in tags:
        if tags.get(DT_RELAENT, RELA_SIZE) != RELA_SIZE:
            raise _fail(f"DT_RELAENT {tags[DT_RELAENT]} is not {RELA_SIZE}")
        relocs += _read_relas(image, tags.get(DT_RELA, 0), tags.get(DT_RELASZ, 0), "DT_RELA")
    if DT_JMPREL in tags or DT_PLTRELSZ in tags:
        if tags.get(DT_PLTREL, DT_RELA) != DT_RELA:
            raise _fail("DT_PLTREL is not DT_RELA")
        relocs += _read_relas(image, tags.get(DT_JMPREL, 0), tags.get(DT_PLTRELSZ, 0), "DT_JMPREL")
    for r in relocs:
        if r.symbol >= max(len(image.symbols), 1):
            raise _fail(f"relocation at {r.offset:#x} names symbol {r.symbol}, past the symbol table")
    image.relocations = relocs

    if tags.get(DT_INIT):
        image.init_function = tags[DT_INIT]
    if DT_INIT_ARRAY in tags:
        size = tags.get(DT_INIT_ARRAYSZ, 0)
        if size % 8:
            raise _fail(f"DT_INIT_ARRAYSZ {size} is not a multiple of 8")
        # Init array entries are normally patched by R_X86_64_RELATIVE; the loader reads them from
        # the relocated image, so only record where they are.
        if size and image.segment_for(tags[DT_INIT_ARRAY], size) is None:
            raise _fail("DT_INIT_ARRAY lies outside the PT_LOAD segments")
        image.init_array = (tags[DT_INIT_ARRAY], size // 8)


def _read_relas(image: ElfImage, vaddr: int, size: int, what: str) -> list[Relocation]:
    if size == 0:
        return []
    if size % RELA_SIZE:
        raise _fail(f"{what} size {size} is not a multiple of {RELA_SIZE}")
    if size // RELA_SIZE > MAX_RELOCATIONS:
        raise _fail(f"{what} holds too many relocations")
    off = _file_offset(image, vaddr, size, what)
    out = []
    for i in range(size // RELA_SIZE):
        r_offset, r_info, r_addend = _RELA.unpack_from(image.data, off + i * RELA_SIZE)
        out.append(Relocation(r_offset, r_info & 0xFFFFFFFF, r_info >> 32, r_addend))
    return out


def _symbol_count(image: ElfImage, tags: dict[int, int]) -> int:
    data = image.data
    if DT_HASH in tags:
        off = _file_offset(image, tags[DT_HASH], 8, "DT_HASH")
        _nbucket, nchain = struct.unpack_from("<II", data, off)
        return nchain
    if DT_GNU_HASH in tags:
        return _gnu_hash_symbol_count(image, tags[DT_GNU_HASH])
    # Fall back to the section headers' SHT_DYNSYM entry.
    h = image.header
    if h.shoff and h.shnum and h.shentsize == SHDR_SIZE:
        _check_range(len(data), h.shoff, h.shnum * SHDR_SIZE, "section header table")
        for i in range(h.shnum):
            sh = _SHDR.unpack_from(data, h.shoff + i * SHDR_SIZE)
            if sh[1] == SHT_DYNSYM:
                return sh[5] // SYM_SIZE
    raise _fail("cannot size the dynamic symbol table (no DT_HASH, DT_GNU_HASH or .dynsym section)")


def _gnu_hash_symbol_count(image: ElfImage, vaddr: int) -> int:
    data = image.data
    off = _file_offset(image, vaddr, 16, "DT_GNU_HASH")
    nbuckets, symoffset, bloom_size, _shift = struct.unpack_from("<IIII", data, off)
    buckets_off = 16 + bloom_size * 8
    _file_offset(image, vaddr, buckets_off + nbuckets * 4, "DT_GNU_HASH buckets")
    buckets = struct.unpack_from(f"<{nbuckets}I", data, off + buckets_off)
    last = max(buckets, default=0)
    if last < symoffset:
        return symoffset
    chain_vaddr = vaddr + buckets_off + nbuckets * 4
    index = last
    while True:
        if index - symoffset > MAX_SYMBOLS:
            raise _fail("DT_GNU_HASH chain does not terminate")
        entry_off = _file_offset(image, chain_vaddr + (index - symoffset) * 4, 4, "DT_GNU_HASH chain")
        (value,) = struct.unpack_from("<I", data, entry_off)
        index += 1
        if value & 1:
            return index


def parse_elf(data: bytes, *, machine: int | None = EM_X86_64) -> ElfImage:
    """Parse and bounds-check an ELF64 LE object; `machine=None` accepts any e_machine."""
    data = bytes(data)
    header = parse_header(data, machine=machine)
    image = ElfImage(data=data, header=header, program_headers=_parse_program_headers(data, header))
    _parse_dynamic(image)
    return image

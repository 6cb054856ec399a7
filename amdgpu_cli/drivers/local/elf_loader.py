"""Embedded-ELF loader: IREE llvm-cpu executable libraries mapped and queried without the system loader.

Owns: mapping an ELF's PT_LOAD segments into one anonymous region, applying its x86_64 RELA
relocations, setting page protections, running DT_INIT / DT_INIT_ARRAY, calling the exported
`iree_hal_executable_library_query`, and reading the v0 library it returns (exports, their
dispatch attributes, imports, executable constants). Resolves the library's imports against the
native helper's host-import table (optional `?name` imports may stay unresolved).

Safety order: everything read from the file is checked by `formats.elf.parse_elf`; every
relocation target, init function and the query symbol are checked against the segments before the
image is patched or any code runs; the image is built and relocated in a Python bytearray and
copied into the mapping only once it is complete. Pointers returned by the library are checked to
lie inside the mapping before they are read. Code that runs (init functions, the query, kernels)
is trusted — as in IREE, a faulting kernel takes the process down.

Lifetime: `ElfLibrary.close()` (or the context manager, or a `weakref.finalize` backstop holding
only the address and size) unmaps the image. Nothing may call into the library after that.

Sources: /work/shared/reference/vmfb.md §5.1; IREE `runtime/src/iree/hal/local/elf/elf_module.c`,
`elf/arch/x86_64.c`, `executable_library.h`, `executable_library_util.c`, `loaders/embedded_elf_loader.c`.
"""

from __future__ import annotations

import struct
import weakref
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.formats.elf import (
    EM_X86_64,
    PF_R,
    PF_W,
    PF_X,
    ElfFormatError,
    ElfImage,
    parse_elf,
)

from ._dispatch import ffi, lib

LIBRARY_VERSION = 6  # IREE_HAL_EXECUTABLE_LIBRARY_VERSION_0_6 (IREE 3.13.0)
QUERY_SYMBOL = "iree_hal_executable_library_query"
MAX_IMAGE_SIZE = 1 << 30
MAX_EXPORTS = 1 << 16
MAX_IMPORTS = 1 << 12
MAX_CONSTANTS = 1 << 16
MAX_NAME_LENGTH = 4096
MAX_DISPATCH_CONSTANTS = 64  # IREE_HAL_EXECUTABLE_MAX_CONSTANT_COUNT
MAX_DISPATCH_BINDINGS = 64  # IREE_HAL_EXECUTABLE_MAX_BINDING_COUNT
DISPATCH_FLAG_SEQUENTIAL = 1
DISPATCH_FLAG_WORKGROUP_SIZE_DYNAMIC = 2
LOCAL_MEMORY_PAGE_SIZE = 4096
STT_FUNC = 2

# x86_64 relocation types (psABI) and the bytes each patches.
R_X86_64_NONE, R_X86_64_64, R_X86_64_PC32 = 0, 1, 2
R_X86_64_COPY, R_X86_64_GLOB_DAT, R_X86_64_JUMP_SLOT, R_X86_64_RELATIVE = 5, 6, 7, 8
R_X86_64_32, R_X86_64_32S = 10, 11
_RELOC_WIDTH = {R_X86_64_64: 8, R_X86_64_PC32: 4, R_X86_64_GLOB_DAT: 8, R_X86_64_JUMP_SLOT: 8,
                R_X86_64_RELATIVE: 8, R_X86_64_32: 4, R_X86_64_32S: 4}


class ElfLoadError(AmdgpuCliError):
    """An ELF that parses but cannot be loaded as an executable library."""

    status = "FAILED_PRECONDITION"


class ExportInfo(NamedTuple):
    """One dispatch function of a library (`exports.*[ordinal]` and its `dispatch_attrs_v0`)."""

    ordinal: int
    name: str
    address: int
    flags: int
    local_memory_pages: int
    constant_count: int
    binding_count: int
    workgroup_size: tuple[int, int, int]
    tag: str | None = None

    @property
    def local_memory_size(self) -> int:
        return self.local_memory_pages * LOCAL_MEMORY_PAGE_SIZE

    @property
    def sequential(self) -> bool:
        return bool(self.flags & DISPATCH_FLAG_SEQUENTIAL)


def _page_size() -> int:
    return int(lib.lx_page_size())


def _unmap(address: int, size: int) -> None:
    lib.lx_unmap(ffi.cast("void*", address), size)


class ElfLibrary:
    """A loaded executable library: mapped image, environment and the v0 library's contents."""

    def __init__(self, data: bytes, *, executable_constants: Sequence[int] | None = None,
                 host_imports: Mapping[str, int] | None = None):
        image = parse_elf(data, machine=EM_X86_64)
        self._image = image
        page = _page_size()
        lo, hi = image.span()
        map_lo = lo - lo % page
        map_hi = -(-hi // page) * page
        size = map_hi - map_lo
        if size <= 0 or size > MAX_IMAGE_SIZE:
            raise ElfLoadError(f"ELF: image span {size:#x} bytes is empty or too large")
        self.size = size
        self._map_lo = map_lo

        # Check everything the loader will act on before touching memory.
        self._check_relocations(image)
        query = image.symbol(QUERY_SYMBOL)
        if query is None:
            raise ElfLoadError(f"ELF: no dynamic symbol {QUERY_SYMBOL}; not an IREE executable library")
        # The query is the first code run: insist on a sized function wholly inside executable code,
        # which also catches most corrupted symbol tables before anything jumps into them.
        if query.info & 0xF != STT_FUNC or query.size == 0:
            raise ElfFormatError(f"ELF: {QUERY_SYMBOL} is not a sized function symbol")
        self._check_code(image, query.value, QUERY_SYMBOL, query.size)

        errno = ffi.new("int*")
        mapping = lib.lx_map(size, errno)
        if mapping == ffi.NULL:
            raise ElfLoadError(f"mmap of {size} bytes failed (errno {errno[0]})", status="RESOURCE_EXHAUSTED")
        self.address = int(ffi.cast("uintptr_t", mapping))
        self._finalizer = weakref.finalize(self, _unmap, self.address, size)
        self._finalizer.atexit = False  # kernels may still be referenced at exit; the OS reclaims the pages
        try:
            self._bias = self.address - map_lo  # runtime address = bias + vaddr
            body = self._build_image(image)
            ffi.memmove(mapping, bytes(body), size)
            self._protect(image, page)
            self._run_initializers(image, body)
            self._query(query.value, executable_constants, host_imports or {})
        except BaseException:
            self.close()
            raise

    # -- loading steps --------------------------------------------------------------------

    def _check_relocations(self, image: ElfImage) -> None:
        for r in image.relocations:
            if r.type == R_X86_64_NONE:
                continue
            width = _RELOC_WIDTH.get(r.type)
            if width is None:
                raise ElfLoadError(f"ELF: unsupported x86_64 relocation type {r.type} at {r.offset:#x}")
            if image.segment_for(r.offset, width) is None:
                raise ElfFormatError(f"ELF: relocation at {r.offset:#x} (+{width}) lies outside the PT_LOAD segments")
            if r.type != R_X86_64_RELATIVE and r.symbol:
                sym = image.symbols[r.symbol]
                if not sym.defined and not (sym.info >> 4 == 2):  # undefined and not weak
                    raise ElfLoadError(f"ELF: relocation needs undefined symbol {sym.name!r}; "
                                       "executable libraries must be self-contained")

    def _check_code(self, image: ElfImage, vaddr: int, what: str, size: int = 1) -> None:
        seg = image.segment_for(vaddr, size)
        if seg is None or not seg.flags & PF_X:
            raise ElfFormatError(f"ELF: {what} at {vaddr:#x} is not inside an executable segment")

    def _build_image(self, image: ElfImage) -> bytearray:
        body = bytearray(self.size)
        for seg in image.load_segments:
            start = seg.vaddr - self._map_lo
            body[start:start + seg.filesz] = image.data[seg.offset:seg.offset + seg.filesz]
        bias = self._bias
        for r in image.relocations:
            if r.type == R_X86_64_NONE:
                continue
            where = r.offset - self._map_lo
            sym_value = 0
            if r.symbol:
                sym = image.symbols[r.symbol]
                sym_value = bias + sym.value if sym.defined else 0
            if r.type == R_X86_64_RELATIVE:
                value, fmt = bias + r.addend, "<Q"
            elif r.type == R_X86_64_64:
                value, fmt = sym_value + r.addend, "<Q"
            elif r.type in (R_X86_64_GLOB_DAT, R_X86_64_JUMP_SLOT):
                value, fmt = sym_value, "<Q"
            elif r.type == R_X86_64_PC32:
                value, fmt = sym_value + r.addend - (bias + r.offset), "<i"
            elif r.type == R_X86_64_32:
                value, fmt = sym_value + r.addend, "<I"
            else:  # R_X86_64_32S
                value, fmt = sym_value + r.addend, "<i"
            if fmt == "<Q":
                value &= (1 << 64) - 1
            elif not (-(1 << 31) <= value < (1 << 31) if fmt == "<i" else 0 <= value < (1 << 32)):
                raise ElfLoadError(f"ELF: relocation type {r.type} at {r.offset:#x} overflows 32 bits")
            struct.pack_into(fmt, body, where, value)
        return body

    def _protect(self, image: ElfImage, page: int) -> None:
        prot_by_page: dict[int, int] = {}
        for seg in image.load_segments:
            prot = ((lib.PROT_READ if seg.flags & PF_R else 0) | (lib.PROT_WRITE if seg.flags & PF_W else 0)
                    | (lib.PROT_EXEC if seg.flags & PF_X else 0))
            first = (seg.vaddr - self._map_lo) // page
            last = (seg.vaddr + max(seg.memsz, 1) - 1 - self._map_lo) // page
            for p in range(first, last + 1):
                prot_by_page[p] = prot_by_page.get(p, 0) | prot
        for p in range(self.size // page):
            prot = prot_by_page.get(p, lib.PROT_NONE)
            rc = lib.lx_protect(ffi.cast("void*", self.address + p * page), page, prot)
            if rc:
                raise ElfLoadError(f"mprotect failed (errno {rc})")

    def _run_initializers(self, image: ElfImage, body: bytearray) -> None:
        targets = []
        if image.init_function:
            targets.append(image.init_function)
        if image.init_array:
            vaddr, count = image.init_array
            for i in range(count):
                (addr,) = struct.unpack_from("<Q", body, vaddr - self._map_lo + 8 * i)
                if addr in (0, (1 << 64) - 1):
                    continue
                targets.append(addr - self._bias)
        for vaddr in targets:
            self._check_code(image, vaddr, "initializer")
        for vaddr in targets:
            lib.lx_call_init(ffi.cast("void*", self._bias + vaddr))

    def _in_image(self, address: int, size: int, what: str) -> None:
        """Fail unless [address, address + size) lies inside one readable segment of the image."""
        seg = None
        if self.address <= address and address + size <= self.address + self.size:
            seg = self._image.segment_for(address - self._bias, size)
        if seg is None or not seg.flags & PF_R:
            raise ElfLoadError(f"executable library: {what} at {address:#x} points outside the loaded image")

    def _string(self, pointer, what: str) -> str:
        address = int(ffi.cast("uintptr_t", pointer))
        self._in_image(address, 1, what)
        limit = min(MAX_NAME_LENGTH, self.address + self.size - address)
        return ffi.string(ffi.cast("char*", pointer), limit).decode("utf-8", "replace")

    def _array(self, pointer, count: int, ctype: str, what: str):
        if count == 0:
            return None
        address = int(ffi.cast("uintptr_t", pointer))
        self._in_image(address, count * ffi.sizeof(ctype), what)
        return ffi.cast(ctype + "*", pointer)

    def _query(self, query_vaddr: int, executable_constants: Sequence[int] | None,
               host_imports: Mapping[str, int]) -> None:
        env = ffi.new("iree_hal_executable_environment_v0_t*")
        lib.lx_environment_init(env)
        self.environment = env
        result = lib.lx_call_query(ffi.cast("void*", self._bias + query_vaddr), LIBRARY_VERSION, env)
        if result == ffi.NULL:
            raise ElfLoadError(f"executable library does not support ABI version {LIBRARY_VERSION} "
                               "(query returned NULL)")
        self._in_image(int(ffi.cast("uintptr_t", result)), 8, "library pointer")
        header_ptr = result[0]
        self._in_image(int(ffi.cast("uintptr_t", header_ptr)), ffi.sizeof("iree_hal_executable_library_header_t"),
                       "library header")
        header = header_ptr[0]
        if header.version != LIBRARY_VERSION:
            raise ElfLoadError(f"executable library version {header.version} is not {LIBRARY_VERSION}")
        if header.sanitizer != 0:
            raise ElfLoadError(f"executable library is built for sanitizer {header.sanitizer}; not supported")
        self.version = header.version
        self.name = self._string(header.name, "library name") if header.name != ffi.NULL else ""
        self.features = header.features
        self._in_image(int(ffi.cast("uintptr_t", result)), ffi.sizeof("iree_hal_executable_library_v0_t"),
                       "library")
        library = ffi.cast("iree_hal_executable_library_v0_t*", result)[0]
        self._read_exports(library)
        self._read_imports(library, env, host_imports)
        self._bind_constants(library, env, executable_constants)

    def _read_exports(self, library) -> None:
        table = library.exports
        count = table.count
        if count > MAX_EXPORTS:
            raise ElfLoadError(f"executable library declares {count} exports")
        if count and (table.attrs == ffi.NULL or table.names == ffi.NULL or table.ptrs == ffi.NULL):
            raise ElfLoadError("executable library exports lack function pointers, names or dispatch attributes")
        ptrs = self._array(table.ptrs, count, "void*", "export table")
        attrs = self._array(table.attrs, count, "iree_hal_executable_dispatch_attrs_v0_t", "dispatch attributes")
        names = self._array(table.names, count, "char*", "export names")
        tags = self._array(table.tags, count, "char*", "export tags") if table.tags != ffi.NULL else None
        exports = []
        for i in range(count):
            fn = int(ffi.cast("uintptr_t", ptrs[i]))
            self._check_code(self._image, fn - self._bias, f"export {i}")
            if names[i] == ffi.NULL:
                raise ElfLoadError(f"executable library export {i} has no name")
            name = self._string(names[i], f"export {i} name")
            if not name:
                raise ElfLoadError(f"executable library export {i} has an empty name")
            a = attrs[i]
            if a.constant_count > MAX_DISPATCH_CONSTANTS or a.binding_count > MAX_DISPATCH_BINDINGS:
                raise ElfLoadError(f"export {name} needs {a.constant_count} constants and {a.binding_count} "
                                   f"bindings; limits are {MAX_DISPATCH_CONSTANTS} and {MAX_DISPATCH_BINDINGS}")
            tag = self._string(tags[i], f"export {i} tag") if tags is not None and tags[i] != ffi.NULL else None
            exports.append(ExportInfo(
                ordinal=i, name=name, address=fn, flags=int(a.flags), local_memory_pages=a.local_memory_pages,
                constant_count=a.constant_count, binding_count=a.binding_count,
                workgroup_size=(a.workgroup_size_x, a.workgroup_size_y, a.workgroup_size_z), tag=tag))
        self.exports = exports

    def _read_imports(self, library, env, host_imports: Mapping[str, int]) -> None:
        count = library.imports.count
        if count > MAX_IMPORTS:
            raise ElfLoadError(f"executable library declares {count} imports")
        symbols = self._array(library.imports.symbols, count, "char*", "import table")
        names = [self._string(symbols[i], f"import {i}") for i in range(count)]
        self.imports = names
        if not count:
            return
        funcs = ffi.new("iree_hal_executable_import_v0_t[]", count)
        contexts = ffi.new("void*[]", count)
        for i, raw in enumerate(names):
            optional = raw.startswith("?")
            name = raw[1:] if optional else raw
            address = host_imports.get(name)
            fn = ffi.cast("void*", address) if address else lib.lx_host_import(name.encode())
            if fn == ffi.NULL and not optional:
                raise ElfLoadError(f"executable library imports {name!r}, which this runtime does not provide",
                                   status="NOT_FOUND")
            funcs[i] = ffi.cast("iree_hal_executable_import_v0_t", fn)
        env.import_funcs = funcs
        env.import_contexts = ffi.cast("const void**", contexts)
        self._import_storage = (funcs, contexts)

    def _bind_constants(self, library, env, executable_constants: Sequence[int] | None) -> None:
        count = library.constants.count
        given = list(executable_constants or [])
        if count > MAX_CONSTANTS or count != len(given):
            raise ElfLoadError(f"executable library needs {count} executable constants but {len(given)} were given")
        self.constant_count = count
        if count:
            storage = ffi.new("uint32_t[]", [v & 0xFFFFFFFF for v in given])
            env.constants = storage
            self._constant_storage = storage

    # -- lifetime ---------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    @property
    def liveness(self):
        """An object whose `alive` is True until the library is closed (a check without the
        property chain, for code that checks on every dispatch)."""
        return self._finalizer

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> ElfLibrary:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def load_elf_library(data: bytes, *, executable_constants: Sequence[int] | None = None,
                     host_imports: Mapping[str, int] | None = None) -> ElfLibrary:
    """Map, relocate and query an embedded-ELF executable library (raises AmdgpuCliError subclasses)."""
    return ElfLibrary(data, executable_constants=executable_constants, host_imports=host_imports)

"""The .vmfb container: a bytecode module (`BytecodeModuleDef` FlatBuffer) plus external rodata.

Owns the file layout and the module metadata; it decodes no bytecode (`vm.decoder` does that).

File layout (IREE 3.13.0, bytecode 17.0):
    [ZIP local file header "PK\\3\\4" (30 bytes + name + extra), only in the default polyglot form]
    u32 size prefix S
    S bytes of FlatBuffer, identifier "IREE"
    rodata base = align_up(end of the FlatBuffer, 64): external rodata segments live at
    file[rodata base + external_data_offset :][:external_data_length] (the offsets already count
    any ZIP headers interleaved by the polyglot writer); the rest (ZIP entries, central directory)
    is ignored.

`load_vmfb(path_or_bytes)` returns a `BytecodeModule` of immutable records (mostly NamedTuples,
which every run defines at import far more cheaply than frozen dataclasses). Rodata, bytecode and
the file itself are zero-copy memoryviews (a path is memory-mapped, read-only); they stay valid for
as long as the module object lives. Everything a corrupt or truncated file can break raises
`VmfbFormatError` (status INVALID_ARGUMENT, one line), with the checks IREE's loader makes:
FlatBuffer bounds, required names, signature/descriptor counts, export ordinals, function spans and
register counts, external rodata bounds, feature bits and the bytecode version (major 17, minor
<= 0). Function bodies are checked by `vm.decoder.verify`.

Sources: ../../shared/reference/vmfb.md section 1; IREE runtime/src/iree/schemas/
bytecode_module_def.fbs (field slots), vm/bytecode/archive.c, vm/bytecode/verifier.c.
"""

from __future__ import annotations

import enum
import mmap
import os
import struct
from dataclasses import dataclass, field
from typing import NamedTuple

from amdgpu_cli.errors import AmdgpuCliError, InputFileError
from amdgpu_cli.formats.flatbuffer import FlatBuffer, Table

__all__ = [
    "BYTECODE_VERSION_MAJOR",
    "BYTECODE_VERSION_MINOR",
    "FUNCTION_DESCRIPTOR",
    "BytecodeModule",
    "Container",
    "ExportFunction",
    "FeatureBits",
    "FunctionDescriptor",
    "FunctionSignature",
    "ImportFunction",
    "ModuleDependency",
    "ModuleState",
    "RodataSegment",
    "VmfbFormatError",
    "load_vmfb",
    "split_cconv",
]

BYTECODE_VERSION_MAJOR = 17
BYTECODE_VERSION_MINOR = 0
FILE_IDENTIFIER = b"IREE"
RODATA_ALIGNMENT = 64
ZIP_LOCAL_HEADER = b"PK\x03\x04"
ZIP_LOCAL_HEADER_SIZE = 30
# Largest register counts a function descriptor may declare (ordinals are 15 / 14 bits wide).
MAX_I32_REGISTERS = 0x7FFF
MAX_REF_REGISTERS = 0x3FFF
CCONV_TYPE_CHARS = frozenset("iIfFrv")


class VmfbFormatError(AmdgpuCliError):
    """A .vmfb file (or bytes) that breaks the container or module format."""

    status = "INVALID_ARGUMENT"


class FeatureBits(enum.IntFlag):
    """Module and function requirement bits (`FeatureBits` in the schema)."""

    EXT_F32 = 1
    EXT_F64 = 2
    YIELD = 4
    UNWIND = 8


# Everything this runtime implements (a plain int: IntFlag's ~ would drop the unknown bits).
SUPPORTED_FEATURES = int(FeatureBits.EXT_F32 | FeatureBits.EXT_F64 | FeatureBits.YIELD | FeatureBits.UNWIND)

# Dependency and import flags share values: REQUIRED = 1 (the default), OPTIONAL = 2.
FLAG_REQUIRED = 1
FLAG_OPTIONAL = 2

# struct FunctionDescriptor (20 bytes), one per internal function: i32 bytecode_offset,
# i32 bytecode_length, u32 requirements, i16 reserved, i16 block_count, i16 i32_register_count,
# i16 ref_register_count.
FUNCTION_DESCRIPTOR = struct.Struct("<iiIhhhh")


class _Slot:
    """Field slots of the schema tables this module reads (index in the .fbs declaration)."""

    # BytecodeModuleDef
    NAME, VERSION, REQUIREMENTS, ATTRS, TYPES, DEPENDENCIES, IMPORTS, EXPORTS = range(8)
    SIGNATURES, RODATA, RWDATA, MODULE_STATE, DESCRIPTORS, BYTECODE_VERSION, BYTECODE = range(8, 15)
    DEBUG_DATABASE = 15
    # AttrDef {key, value}; TypeDef {full_name}
    ATTR_KEY, ATTR_VALUE = 0, 1
    TYPE_NAME = 0
    # FunctionSignatureDef {calling_convention, attrs}
    SIG_CCONV, SIG_ATTRS = 0, 1
    # ModuleDependencyDef {name, minimum_version, flags}
    DEP_NAME, DEP_MIN_VERSION, DEP_FLAGS = 0, 1, 2
    # ImportFunctionDef {full_name, signature, flags}
    IMPORT_NAME, IMPORT_SIGNATURE, IMPORT_FLAGS = 0, 1, 2
    # ExportFunctionDef {local_name, internal_ordinal}
    EXPORT_NAME, EXPORT_ORDINAL = 0, 1
    # RodataSegmentDef {compression_type (union: tag, value), embedded_data, external offset, length}
    RODATA_COMPRESSION, RODATA_EMBEDDED, RODATA_EXT_OFFSET, RODATA_EXT_LENGTH = 0, 2, 3, 4
    # RwdataSegmentDef {byte_size}; ModuleStateDef {global_bytes_capacity, global_ref_count}
    RWDATA_SIZE = 0
    STATE_BYTES, STATE_REFS = 0, 1
    # DebugDatabaseDef {location_table (union vector: 2 slots), functions}; FunctionSourceMapDef
    DEBUG_FUNCTIONS = 2
    SOURCE_MAP_NAME = 0


# CompressionTypeDef union tags: 0 = NONE (treated as uncompressed), 1 = UncompressedDataDef.
_COMPRESSION_UNCOMPRESSED = 1


def split_cconv(cconv: str) -> tuple[str, str]:
    """Split a calling convention "0<args>_<results>" into its argument and result fragments.

    `v` (void) is dropped, so `0v_i` gives ("", "i"). Spans `C...D` are kept as written.
    Raises VmfbFormatError for a malformed string.
    """
    if not cconv or cconv[0] != "0" or "_" not in cconv:
        raise VmfbFormatError(f"malformed calling convention {cconv!r}")
    args, _, results = cconv[1:].partition("_")
    for fragment in (args, results):
        depth = 0
        for ch in fragment:
            if ch == "C":
                depth += 1
                if depth > 1:
                    raise VmfbFormatError(f"nested variadic span in calling convention {cconv!r}")
            elif ch == "D":
                depth -= 1
                if depth < 0:
                    raise VmfbFormatError(f"unbalanced variadic span in calling convention {cconv!r}")
            elif ch not in CCONV_TYPE_CHARS:
                raise VmfbFormatError(f"unknown type {ch!r} in calling convention {cconv!r}")
        if depth:
            raise VmfbFormatError(f"unbalanced variadic span in calling convention {cconv!r}")
    return args.replace("v", ""), results.replace("v", "")


class FunctionSignature(NamedTuple):
    """A calling convention string plus reflection attributes (e.g. iree.abi.declaration)."""

    cconv: str | None
    attrs: dict[str, str]

    @property
    def arguments(self) -> str:
        """Argument type chars (`v` dropped); raises VmfbFormatError if the cconv is malformed."""
        return split_cconv(self.cconv or "")[0]

    @property
    def results(self) -> str:
        return split_cconv(self.cconv or "")[1]


class ModuleDependency(NamedTuple):
    name: str
    minimum_version: int
    flags: int

    @property
    def optional(self) -> bool:
        return bool(self.flags & FLAG_OPTIONAL)


class ImportFunction(NamedTuple):
    """Import ordinal `ordinal`: bytecode calls it as func attr `0x80000000 | ordinal`."""

    ordinal: int
    full_name: str
    signature: FunctionSignature
    flags: int

    @property
    def cconv(self) -> str | None:
        return self.signature.cconv

    @property
    def optional(self) -> bool:
        return bool(self.flags & FLAG_OPTIONAL)

    @property
    def module_name(self) -> str:
        return self.full_name.partition(".")[0]

    @property
    def function_name(self) -> str:
        return self.full_name.partition(".")[2]


class ExportFunction(NamedTuple):
    name: str
    internal_ordinal: int


@dataclass(frozen=True)
class FunctionDescriptor:  # a dataclass still: tests derive broken modules with dataclasses.replace
    """Where internal function `ordinal` lives in `bytecode` and how many registers it uses."""

    ordinal: int
    bytecode_offset: int
    bytecode_length: int
    requirements: int
    block_count: int
    i32_register_count: int
    ref_register_count: int


class RodataSegment:
    """Read-only data segment `ordinal`; `data` aliases the file (embedded or external).
    A slotted class (len() is the data's length, so not a NamedTuple; not a dataclass: cheaper
    to define at import)."""

    __slots__ = ("ordinal", "data", "external", "file_offset")

    def __init__(self, ordinal: int, data: memoryview, external: bool, file_offset: int):
        self.ordinal = ordinal
        self.data = data
        self.external = external
        self.file_offset = file_offset  # absolute position of the bytes in the file

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        return (f"RodataSegment(ordinal={self.ordinal}, {len(self.data)} bytes, "
                f"external={self.external}, file_offset={self.file_offset})")


class ModuleState(NamedTuple):
    global_bytes_capacity: int = 0
    global_ref_count: int = 0


class Container(NamedTuple):
    """How the module sits in its file."""

    polyglot_zip: bool
    flatbuffer_offset: int  # file offset of the FlatBuffer (just after the size prefix)
    flatbuffer_size: int
    rodata_base: int
    file_size: int
    bytecode_offset: int  # file offset of bytecode_data (function bodies)


@dataclass(frozen=True, eq=False)
class BytecodeModule:
    source: str
    name: str
    version: int
    requirements: int
    attrs: dict[str, str]
    types: tuple[str, ...]
    dependencies: tuple[ModuleDependency, ...]
    imports: tuple[ImportFunction, ...]
    exports: tuple[ExportFunction, ...]
    signatures: tuple[FunctionSignature, ...]  # one per internal function
    functions: tuple[FunctionDescriptor, ...]  # one per internal function
    rodata: tuple[RodataSegment, ...]
    rwdata_sizes: tuple[int, ...]
    state: ModuleState
    bytecode_version: tuple[int, int]
    bytecode: memoryview
    container: Container
    file: memoryview = field(repr=False)
    # debug_database.functions[i].local_name as stored. IREE names internal function i by it, but
    # 3.13.0 does not keep the list 1:1 with the functions (it can be short or misaligned): use it
    # for display parity with IREE's tools only.
    debug_function_names: tuple[str | None, ...] = ()

    @property
    def exports_by_name(self) -> dict[str, int]:
        """Export name -> internal function ordinal."""
        return {e.name: e.internal_ordinal for e in self.exports}

    def export_names(self, ordinal: int) -> list[str]:
        return [e.name for e in self.exports if e.internal_ordinal == ordinal]

    def function_label(self, ordinal: int) -> str:
        """A name for messages: the first export naming the function, else `module@ordinal`."""
        names = self.export_names(ordinal)
        return f"{self.name}.{names[0]}" if names else f"{self.name}@{ordinal}"

    def internal_function_name(self, ordinal: int) -> str | None:
        """The name IREE's runtime and tools give internal function `ordinal` (debug database)."""
        if ordinal < len(self.debug_function_names):
            return self.debug_function_names[ordinal] or None
        return None

    def function_bytecode(self, ordinal: int) -> memoryview:
        d = self.functions[ordinal]
        return self.bytecode[d.bytecode_offset:d.bytecode_offset + d.bytecode_length]


# -----------------------------------------------------------------------------------------------


def load_vmfb(path_or_bytes) -> BytecodeModule:
    """Parse a .vmfb from a path or a bytes-like object. Raises VmfbFormatError / InputFileError."""
    if isinstance(path_or_bytes, (str, os.PathLike)):
        source = os.fspath(path_or_bytes)
        data = _map_file(source)
    else:
        source = "<memory>"
        data = memoryview(path_or_bytes).cast("B")
    try:
        return _parse(data, source)
    except VmfbFormatError as e:
        raise VmfbFormatError(f"{source}: {e}") from None


def _map_file(path: str) -> memoryview:
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return memoryview(b"")
            return memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
    except OSError as e:
        from pathlib import PurePath  # the path as pathlib spells it; not imported on success

        raise InputFileError(f"cannot read module file {str(PurePath(path))!r}: "
                             f"{e.strerror or e}") from None


def _locate_flatbuffer(data: memoryview) -> tuple[bool, int, int]:
    """(is polyglot zip, FlatBuffer start, FlatBuffer size) in the file."""
    size = len(data)
    start = 0
    polyglot = size >= ZIP_LOCAL_HEADER_SIZE and bytes(data[:4]) == ZIP_LOCAL_HEADER
    if polyglot:
        name_len = int.from_bytes(data[26:28], "little")
        extra_len = int.from_bytes(data[28:30], "little")
        start = ZIP_LOCAL_HEADER_SIZE + name_len + extra_len
        if start > size:
            raise VmfbFormatError("file is a ZIP archive but too short to hold a module")
    if size - start < 16:
        raise VmfbFormatError(f"module data is missing or shorter than 16 bytes ({size - start} bytes)")
    length = int.from_bytes(data[start:start + 4], "little")
    if length > size - start - 4:
        raise VmfbFormatError(
            f"FlatBuffer size prefix {length} exceeds the {size - start - 4} bytes that follow it")
    return polyglot, start + 4, length


def _attrs(table: Table, slot: int, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for attr in table.tables(slot, what):
        key = attr.string(_Slot.ATTR_KEY, "", name="key")
        out[key] = attr.string(_Slot.ATTR_VALUE, "", name="value")
    return out


def _signature(table: Table | None) -> FunctionSignature:
    if table is None:
        return FunctionSignature(None, {})
    return FunctionSignature(
        table.string(_Slot.SIG_CCONV, name="calling_convention"),
        _attrs(table, _Slot.SIG_ATTRS, "attrs"),
    )


def _parse(data: memoryview, source: str) -> BytecodeModule:
    polyglot, fb_start, fb_size = _locate_flatbuffer(data)
    rodata_base = -(-(fb_start + fb_size) // RODATA_ALIGNMENT) * RODATA_ALIGNMENT
    fb = FlatBuffer(data[fb_start:fb_start + fb_size], error=VmfbFormatError)
    root = fb.root(FILE_IDENTIFIER)
    root.what = "module"
    S = _Slot

    name = root.string(S.NAME, name="name")
    if not name:
        raise VmfbFormatError("module has no name")
    requirements = root.scalar(S.REQUIREMENTS, "I", 0, "requirements")
    _check_features(requirements, "module")

    types = []
    for i, t in enumerate(root.tables(S.TYPES, "types")):
        type_name = t.string(S.TYPE_NAME, name="full_name")
        if not type_name:
            raise VmfbFormatError(f"types[{i}] has no name")
        types.append(type_name)

    dependencies = []
    for i, t in enumerate(root.tables(S.DEPENDENCIES, "dependencies")):
        dep_name = t.string(S.DEP_NAME, name="name")
        if not dep_name:
            raise VmfbFormatError(f"dependencies[{i}] has no module name")
        dependencies.append(ModuleDependency(
            dep_name, t.scalar(S.DEP_MIN_VERSION, "I", 0, "minimum_version"),
            t.scalar(S.DEP_FLAGS, "I", FLAG_REQUIRED, "flags")))

    imports = []
    for i, t in enumerate(root.tables(S.IMPORTS, "imported_functions")):
        full_name = t.string(S.IMPORT_NAME, name="full_name")
        if not full_name:
            raise VmfbFormatError(f"imports[{i}] has no full_name")
        imports.append(ImportFunction(
            i, full_name, _signature(t.table(S.IMPORT_SIGNATURE, "signature")),
            t.scalar(S.IMPORT_FLAGS, "I", FLAG_REQUIRED, "flags")))

    signatures = tuple(_signature(t) for t in root.tables(S.SIGNATURES, "function_signatures"))

    raw_descriptors = root.structs(S.DESCRIPTORS, FUNCTION_DESCRIPTOR, "function_descriptors") or []
    if len(signatures) != len(raw_descriptors):
        raise VmfbFormatError(
            f"function signature and descriptor tables differ in length "
            f"({len(signatures)} vs {len(raw_descriptors)})")

    exports = []
    for i, t in enumerate(root.tables(S.EXPORTS, "exported_functions")):
        local_name = t.string(S.EXPORT_NAME, name="local_name")
        if not local_name:
            raise VmfbFormatError(f"exports[{i}] has no local_name")
        ordinal = t.scalar(S.EXPORT_ORDINAL, "i", 0, "internal_ordinal")
        if not 0 <= ordinal < len(raw_descriptors):
            raise VmfbFormatError(
                f"exports[{i}] ({local_name}) internal_ordinal {ordinal} out of range "
                f"({len(raw_descriptors)} functions)")
        exports.append(ExportFunction(local_name, ordinal))

    version_word = root.scalar(S.BYTECODE_VERSION, "I", 0, "bytecode_version")
    major, minor = version_word >> 16, version_word & 0xFFFF
    if major != BYTECODE_VERSION_MAJOR or minor > BYTECODE_VERSION_MINOR:
        raise VmfbFormatError(
            f"bytecode version mismatch; supported {BYTECODE_VERSION_MAJOR}.{BYTECODE_VERSION_MINOR}, "
            f"module has {major}.{minor}")

    span = root.byte_span(S.BYTECODE, "bytecode_data")
    bytecode_offset = fb_start + span[0] if span else fb_start
    bytecode = data[bytecode_offset:bytecode_offset + (span[1] if span else 0)]
    functions = tuple(_descriptor(i, d, len(bytecode)) for i, d in enumerate(raw_descriptors))

    rodata = []
    for i, t in enumerate(root.tables(S.RODATA, "rodata_segments")):
        rodata.append(_rodata_segment(i, t, data, fb_start, rodata_base))

    rwdata_sizes = []
    for i, t in enumerate(root.tables(S.RWDATA, "rwdata_segments")):
        size = t.scalar(S.RWDATA_SIZE, "i", 0, "byte_size")
        if size < 0:
            raise VmfbFormatError(f"rwdata[{i}] has a negative size {size}")
        rwdata_sizes.append(size)

    state_table = root.table(S.MODULE_STATE, "module_state")
    state = ModuleState()
    if state_table is not None:
        state = ModuleState(state_table.scalar(S.STATE_BYTES, "i", 0, "global_bytes_capacity"),
                            state_table.scalar(S.STATE_REFS, "i", 0, "global_ref_count"))
        if state.global_bytes_capacity < 0 or state.global_ref_count < 0:
            raise VmfbFormatError(f"module state has negative sizes {state}")

    debug_names: tuple[str | None, ...] = ()
    debug = root.table(S.DEBUG_DATABASE, "debug_database")
    if debug is not None:
        debug_names = tuple(t.string(S.SOURCE_MAP_NAME, name="local_name")
                            for t in debug.tables(S.DEBUG_FUNCTIONS, "functions"))

    return BytecodeModule(
        source=source,
        name=name,
        version=root.scalar(S.VERSION, "I", 0, "version"),
        requirements=requirements,
        attrs=_attrs(root, S.ATTRS, "attrs"),
        types=tuple(types),
        dependencies=tuple(dependencies),
        imports=tuple(imports),
        exports=tuple(exports),
        signatures=signatures,
        functions=functions,
        rodata=tuple(rodata),
        rwdata_sizes=tuple(rwdata_sizes),
        state=state,
        bytecode_version=(major, minor),
        bytecode=bytecode,
        container=Container(polyglot, fb_start, fb_size, rodata_base, len(data), bytecode_offset),
        file=data,
        debug_function_names=debug_names,
    )


def _check_features(bits: int, what: str) -> None:
    unsupported = bits & ~SUPPORTED_FEATURES
    if unsupported:
        raise VmfbFormatError(f"{what} requires unsupported features 0x{unsupported:08X}")


def _descriptor(i: int, d: tuple, bytecode_size: int) -> FunctionDescriptor:
    """A FUNCTION_DESCRIPTOR tuple, checked against the bytecode and the register limits."""
    offset, length, requirements, _reserved, block_count, i32_count, ref_count = d
    desc = FunctionDescriptor(
        ordinal=i,
        bytecode_offset=offset,
        bytecode_length=length,
        requirements=requirements,
        block_count=block_count,
        i32_register_count=i32_count,
        ref_register_count=ref_count,
    )
    if desc.block_count <= 0:
        raise VmfbFormatError(f"functions[{i}] declares {desc.block_count} blocks; at least 1 is required")
    if length <= 0:
        raise VmfbFormatError(f"functions[{i}] has an empty bytecode span")
    if offset < 0 or offset + length > bytecode_size:
        raise VmfbFormatError(
            f"functions[{i}] bytecode span {offset}+{length} lies outside the {bytecode_size}-byte bytecode")
    if not (0 <= desc.i32_register_count <= MAX_I32_REGISTERS and 0 <= desc.ref_register_count <= MAX_REF_REGISTERS):
        raise VmfbFormatError(
            f"functions[{i}] register counts out of range "
            f"(i32 {desc.i32_register_count}, ref {desc.ref_register_count})")
    _check_features(desc.requirements, f"functions[{i}]")
    return desc


def _rodata_segment(i: int, t: Table, data: memoryview, fb_start: int, rodata_base: int) -> RodataSegment:
    S = _Slot
    tag, _ = t.union(S.RODATA_COMPRESSION, "compression_type")
    if tag not in (0, _COMPRESSION_UNCOMPRESSED):
        raise VmfbFormatError(f"rodata[{i}] uses unsupported compression type {tag}")
    embedded = t.byte_span(S.RODATA_EMBEDDED, "embedded_data")
    if embedded is not None:
        start = fb_start + embedded[0]
        return RodataSegment(i, data[start:start + embedded[1]], False, start)
    offset = t.scalar(S.RODATA_EXT_OFFSET, "Q", 0, "external_data_offset")
    length = t.scalar(S.RODATA_EXT_LENGTH, "Q", 0, "external_data_length")
    start = rodata_base + offset
    if start + length > len(data):
        raise VmfbFormatError(
            f"rodata[{i}] external reference {offset}+{length} lies outside the file "
            f"(rodata base {rodata_base}, file size {len(data)})")
    return RodataSegment(i, data[start:start + length], True, start)


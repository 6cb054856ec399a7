"""AMDGPU HAL executables: IREE's AMD1 container, or a raw HSACO code object.

`parse_amdgpu_executable(data)` returns an `AmdgpuExecutableDef`: the ISA the producer names, one
`ExportDef` per HAL entry point (in entry-point order) and the code-object bytes to hand the HSA
loader, plus the parsed code object (`formats/amdgpu_code_object.py`) for its target and metadata.

AMD1 container (IREE `runtime/src/iree/schemas/amdgpu_executable_def.fbs`, reference §6.2):

    [0, 64)   file header: magic "AMD1", u32 version (0), u64 content_size, reserved
    [64, ..)  FlatBuffer, file identifier "AMD1", root ExecutableDef:
                0 isa: string           producer's target id, e.g. "gfx942"
                1 exports: [ExportDef]  0 symbol_name (with ".kd"), 1 workgroup_size: Dims{x,y,z u32},
                                        2 constant_count u32, 3 binding_flags [u64] (its length is the
                                        binding count; bit 0 READ_ONLY, bit 1 INDIRECT), 4 debug_info
                2 modules: [ModuleDef]  0 image: string (the ELF); exactly one module is supported
                3 source_files

Raw HSACO (anything not starting with "AMD1"): the exports come from the NT_AMDGPU_METADATA kernels,
as IREE's `util/hsaco_metadata.c` projects them: `global_buffer` arguments (8 bytes) are bindings
(READ_ONLY when the access is read_only), `by_value` arguments of a multiple of 4 bytes add that
many u32 constants, `hidden_*` arguments are skipped, any other visible kind is rejected; a kernel
without `.reqd_workgroup_size` gets (1, 1, 1).

Every read is bounds-checked: malformed input raises `AmdgpuExecutableError` (INVALID_ARGUMENT, or
INCOMPATIBLE for an unknown container version), never IndexError or struct.error.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.formats.amdgpu_code_object import CodeObject, CodeObjectError, Kernel, parse_code_object
from amdgpu_cli.formats.flatbuffer import FlatBuffer, Table

MAGIC = b"AMD1"
FILE_HEADER = struct.Struct("<4sIQ48x")  # magic, version, content_size, reserved
SUPPORTED_VERSION = 0

BINDING_READ_ONLY = 1 << 0
BINDING_INDIRECT = 1 << 1

# Slots of the AMD1 schema tables.
_EXECUTABLE_ISA, _EXECUTABLE_EXPORTS, _EXECUTABLE_MODULES = 0, 1, 2
_EXPORT_SYMBOL, _EXPORT_WORKGROUP_SIZE, _EXPORT_CONSTANT_COUNT, _EXPORT_BINDING_FLAGS = 0, 1, 2, 3
_MODULE_IMAGE = 0
_DIMS = struct.Struct("<3I")
_DYNAMIC_WORKGROUP_SIZE = (1, 1, 1)


class AmdgpuExecutableError(AmdgpuCliError):
    """Bytes that are not a well-formed AMD1 executable or raw AMDGPU code object."""

    status = "INVALID_ARGUMENT"


@dataclass(frozen=True)
class ExportDef:
    symbol_name: str  # the HSA kernel symbol, `<name>.kd`
    workgroup_size: tuple[int, int, int]
    constant_count: int
    binding_flags: tuple[int, ...]  # one entry per binding

    @property
    def binding_count(self) -> int:
        return len(self.binding_flags)

    @property
    def name(self) -> str:
        """The kernel name (the symbol without `.kd`)."""
        return self.symbol_name.removesuffix(".kd")


@dataclass(frozen=True)
class AmdgpuExecutableDef:
    isa: str
    exports: tuple[ExportDef, ...]
    code_object: bytes  # the ELF image for hsa_code_object_reader_create_from_memory
    code_object_info: CodeObject  # its parsed header (target from e_flags) and metadata


class _FlatBufferError(AmdgpuExecutableError):
    """Raised by the FlatBuffer reader; re-raised with the container named."""


def _fail(message: str, status: str | None = None) -> AmdgpuExecutableError:
    return AmdgpuExecutableError(f"AMDGPU executable: {message}", status=status)


def _parse_code_object(image: bytes) -> CodeObject:
    try:
        return parse_code_object(image)
    except CodeObjectError as error:
        raise _fail(str(error)) from None


# ----------------------------------------------------------------------------------------------
# AMD1


def _flatbuffer(data: memoryview) -> FlatBuffer:
    if len(data) < FILE_HEADER.size:
        raise _fail(f"{len(data)} bytes are less than the {FILE_HEADER.size}-byte AMD1 header")
    _magic, version, content_size = FILE_HEADER.unpack_from(data, 0)
    if version != SUPPORTED_VERSION:
        raise _fail(f"AMD1 version {version} is not supported (expected {SUPPORTED_VERSION})",
                    status="INCOMPATIBLE")
    if content_size == 0:
        raise _fail("AMD1 content size is zero")
    available = len(data) - FILE_HEADER.size
    if content_size > available:
        raise _fail(f"AMD1 content size {content_size} exceeds the {available} bytes after the header")
    return FlatBuffer(data[FILE_HEADER.size:FILE_HEADER.size + content_size], error=_FlatBufferError)


def _export(table: Table, index: int) -> ExportDef:
    where = f"exports[{index}]"
    symbol = table.string(_EXPORT_SYMBOL, "", name="symbol_name")
    if not symbol:
        raise _fail(f"{where} symbol name is empty")
    position = table.field_position(_EXPORT_WORKGROUP_SIZE)
    if position is None:
        raise _fail(f"{where} ({symbol}) has no workgroup size")
    if position + _DIMS.size > table.pos + table.table_size:  # the table itself is inside the buffer
        raise _fail(f"{where}.workgroup_size lies outside its table")
    workgroup_size = _DIMS.unpack_from(table.fb.data, position)
    flags = table.scalars(_EXPORT_BINDING_FLAGS, "Q", name="binding_flags") or []
    return ExportDef(symbol_name=symbol, workgroup_size=workgroup_size,
                     constant_count=table.scalar(_EXPORT_CONSTANT_COUNT, "I", 0, "constant_count"),
                     binding_flags=tuple(flags))


def _parse_amd1(data: memoryview) -> AmdgpuExecutableDef:
    root = _flatbuffer(data).root(MAGIC)
    isa = root.string(_EXECUTABLE_ISA, "", name="isa")
    modules = root.tables(_EXECUTABLE_MODULES, name="modules")
    if len(modules) != 1:
        raise _fail(f"{len(modules)} modules; exactly one code object is supported")
    span = modules[0].byte_span(_MODULE_IMAGE, name="image")
    if not span or not span[1]:
        raise _fail("modules[0] image is empty")
    image = bytes(modules[0].fb.data[span[0]:span[0] + span[1]])
    exports = tuple(_export(table, i) for i, table in enumerate(root.tables(_EXECUTABLE_EXPORTS, name="exports")))
    return AmdgpuExecutableDef(isa=isa, exports=exports, code_object=image, code_object_info=_parse_code_object(image))


# ----------------------------------------------------------------------------------------------
# Raw HSACO


def _raw_export(kernel: Kernel) -> ExportDef:
    flags: list[int] = []
    constant_bytes = 0
    for i, arg in enumerate(kernel.args):
        where = f"kernel {kernel.name} argument {i}"
        if arg.value_kind.startswith("hidden_"):
            continue
        if arg.value_kind == "global_buffer":
            if arg.size != 8:
                raise _fail(f"{where} is a global_buffer of {arg.size} bytes, not 8")
            flags.append(BINDING_READ_ONLY if arg.access == "read_only" else 0)
        elif arg.value_kind == "by_value":
            if arg.size % 4:
                raise _fail(f"{where} is a by_value argument of {arg.size} bytes, not a whole number of "
                            f"32-bit constants")
            constant_bytes += arg.size
        else:
            raise _fail(f"{where} has value kind {arg.value_kind!r}; only global_buffer and by_value map to "
                        f"HAL bindings and constants")
    return ExportDef(symbol_name=kernel.symbol, workgroup_size=kernel.reqd_workgroup_size or _DYNAMIC_WORKGROUP_SIZE,
                     constant_count=constant_bytes // 4, binding_flags=tuple(flags))


def _parse_hsaco(data: memoryview) -> AmdgpuExecutableDef:
    image = bytes(data)
    info = _parse_code_object(image)
    return AmdgpuExecutableDef(isa=info.target_id, exports=tuple(_raw_export(k) for k in info.kernels),
                               code_object=image, code_object_info=info)


def parse_amdgpu_executable(data) -> AmdgpuExecutableDef:
    """Parse an AMD1 container or a raw HSACO code object (any bytes-like object)."""
    view = memoryview(data).cast("B")
    if bytes(view[:4]) == MAGIC:
        try:
            return _parse_amd1(view)
        except _FlatBufferError as error:
            raise _fail(f"AMD1 {error}") from None
    return _parse_hsaco(view)

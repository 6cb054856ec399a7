"""CUDA HAL executables: IREE's `cuda-nvptx-fb` format, the CDA1 container.

`parse_cda1(data)` returns a `CudaExecutableDef`: the PTX text of each module and one `CudaExport`
per HAL entry point (in entry-point order), after every check IREE's CUDA driver makes before its
first CUDA call that does not depend on the device. `check_device_limits` is the rest: the checks
against the device's block-dimension and opt-in shared-memory limits (native_executable.c queries
them with cuDeviceGetAttribute). `is_cda1(data)` says whether bytes claim to be this container.

CDA1 container (IREE `runtime/src/iree/schemas/cuda_executable_def.fbs` and
`executable_debug_info.fbs`; reference replay-benchmark-cuda.md §3.5):

    [0, 64)   file header: magic "CDA1", u32 version (0), u64 content_size, 48 reserved bytes
    [64, ..)  FlatBuffer, file identifier "CDA1", root ExecutableDef (namespace iree.hal.cuda):
                0 exports: [ExportDef]   0 module_ordinal u32, 1 kernel_name string,
                                         2 block_dims BlockDims{x,y,z u32} (inline struct),
                                         3 block_shared_memory_size u32, 4 constant_count u32,
                                         5 binding_flags [u64] (its length is the binding count;
                                           bit 0 READ_ONLY, bit 1 INDIRECT),
                                         6 debug_info iree.hal.debug.ExportDef
                1 modules: [ModuleDef]   0 ptx_image string (PTX only: no cubin, the driver JITs it)
                2 source_files: [iree.hal.debug.SourceFileDef]  0 path string, 1 content [u8]
    iree.hal.debug.ExportDef:          0 name string, 1 location FileLineLocDef,
                                       2 stage_locations [StageLocationDef]
    iree.hal.debug.FileLineLocDef:     0 filename string, 1 line i32
    iree.hal.debug.StageLocationDef:   0 stage string, 1 location FileLineLocDef

Checks, in IREE's order (executable_header.c, native_executable.c, executable_debug_info.c):
header magic, non-zero content size, version 0 (INCOMPATIBLE otherwise), content within the data
(OUT_OF_RANGE); the FlatBuffer's identifier and every offset, length and string terminator (the
flatcc verifier's job); every module's PTX non-empty; per export: module_ordinal < module count,
kernel_name non-empty, block_dims present, constant_count <= 64, at most 16 bindings, and debug
info whose filenames and stage names are non-empty where present. IREE looks kernels up by
kernel_name (reflection reports it too); debug_info.name is the producer's name, equal to it in
compiler output.

Malformed input raises `CudaExecutableError` (a one-line AmdgpuCliError; INVALID_ARGUMENT unless
IREE gives the failure another status), never IndexError, struct.error or UnicodeDecodeError.
The result holds copies (bytes, str): it does not keep the caller's buffer alive.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.formats.flatbuffer import FlatBuffer, Table

__all__ = [
    "BINDING_INDIRECT", "BINDING_READ_ONLY", "FORMAT", "MAGIC", "MAX_BINDING_COUNT", "MAX_CONSTANT_COUNT",
    "CudaExecutableDef", "CudaExecutableError", "CudaExport", "CudaSourceFile", "check_device_limits",
    "is_cda1", "parse_cda1",
]

FORMAT = "cuda-nvptx-fb"  # the executable format string of vmfbs and replay captures
MAGIC = b"CDA1"  # header magic and FlatBuffer file identifier
FILE_HEADER = struct.Struct("<4sIQ48x")  # magic, version, content_size, reserved
SUPPORTED_VERSION = 0

BINDING_READ_ONLY = 1 << 0
BINDING_INDIRECT = 1 << 1

# IREE_HAL_CUDA_MAX_DISPATCH_{CONSTANT,BINDING}_COUNT (drivers/cuda/native_executable.h).
MAX_CONSTANT_COUNT = 64
MAX_BINDING_COUNT = 16

# Slots of the schema tables.
_EXECUTABLE_EXPORTS, _EXECUTABLE_MODULES, _EXECUTABLE_SOURCE_FILES = 0, 1, 2
(_EXPORT_MODULE_ORDINAL, _EXPORT_KERNEL_NAME, _EXPORT_BLOCK_DIMS, _EXPORT_SHARED_MEMORY,
 _EXPORT_CONSTANT_COUNT, _EXPORT_BINDING_FLAGS, _EXPORT_DEBUG_INFO) = range(7)
_MODULE_PTX_IMAGE = 0
_SOURCE_FILE_PATH, _SOURCE_FILE_CONTENT = 0, 1
_DEBUG_NAME, _DEBUG_LOCATION, _DEBUG_STAGE_LOCATIONS = 0, 1, 2
_LOCATION_FILENAME, _LOCATION_LINE = 0, 1
_STAGE_NAME, _STAGE_LOCATION = 0, 1
_BLOCK_DIMS = struct.Struct("<3I")


class CudaExecutableError(AmdgpuCliError):
    """Bytes that are not a well-formed CDA1 executable (or one the device cannot run)."""

    status = "INVALID_ARGUMENT"


class CudaExport(NamedTuple):
    name: str  # kernel_name: the PTX .entry IREE looks up and reports
    module_ordinal: int  # index into CudaExecutableDef.modules
    block_dims: tuple[int, int, int]
    block_shared_memory_size: int  # dynamic shared memory per block, bytes
    constant_count: int  # 32-bit push constants, passed after the bindings
    binding_count: int  # == len(binding_flags)
    binding_flags: tuple[int, ...]  # BINDING_READ_ONLY | BINDING_INDIRECT per binding
    # Optional debug information (empty / 0 when the producer left it out).
    debug_name: str = ""
    source_filename: str = ""  # debug_info.location
    source_line: int = 0
    stage_locations: tuple[tuple[str, str, int], ...] = ()  # (stage, filename, line)


class CudaSourceFile(NamedTuple):
    path: str
    content: bytes


class CudaExecutableDef(NamedTuple):
    modules: tuple[bytes, ...]  # PTX text per module, as stored (without the string's NUL)
    exports: tuple[CudaExport, ...]
    source_files: tuple[CudaSourceFile, ...] = ()


class _FlatBufferError(CudaExecutableError):
    """Raised by the FlatBuffer reader; re-raised with the container named."""


def _fail(message: str, status: str | None = None) -> CudaExecutableError:
    return CudaExecutableError(f"CUDA executable: {message}", status=status)


def is_cda1(data) -> bool:
    """Whether `data` (any bytes-like object) starts with the CDA1 header magic; nothing is checked."""
    return bytes(memoryview(data).cast("B")[:4]) == MAGIC


def _flatbuffer(data: memoryview) -> FlatBuffer:
    if len(data) < FILE_HEADER.size:
        raise _fail(f"{len(data)} bytes are less than the {FILE_HEADER.size}-byte CDA1 header")
    magic, version, content_size = FILE_HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise _fail(f"file identifier is {magic!r}, expected {MAGIC!r}")
    if content_size == 0:
        raise _fail("CDA1 content size is zero")
    if version != SUPPORTED_VERSION:
        raise _fail(f"CDA1 version {version} is not supported (expected {SUPPORTED_VERSION})",
                    status="INCOMPATIBLE")
    available = len(data) - FILE_HEADER.size
    if content_size > available:
        raise _fail(f"CDA1 content size {content_size} exceeds the {available} bytes after the header",
                    status="OUT_OF_RANGE")
    return FlatBuffer(data[FILE_HEADER.size:FILE_HEADER.size + content_size], error=_FlatBufferError)


def _bytes(table: Table, slot: int, name: str, *, string: bool) -> bytes:
    """A string's (or [ubyte]'s) bytes; b"" when absent. A string must be NUL-terminated inside
    the buffer, as the flatcc verifier requires (CUDA reads the PTX up to that NUL)."""
    span = table.byte_span(slot, name)
    if span is None:
        return b""
    start, length = span
    fb = table.fb
    if string:
        fb.check_range(start + length, 1, f"{table.what}.{name} terminator")
        if fb.data[start + length] != 0:
            raise fb.fail(f"{table.what}.{name} at offset {start - 4} is not NUL-terminated")
    return bytes(fb.data[start:start + length])


def _text(table: Table, slot: int, name: str) -> str:
    raw = _bytes(table, slot, name, string=True)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise table.fb.fail(f"{table.what}.{name} is not valid UTF-8") from None


def _location(table: Table | None, where: str) -> tuple[str, int]:
    """(filename, line) of a FileLineLocDef; a present one needs a non-empty filename."""
    if table is None:
        return "", 0
    filename = _text(table, _LOCATION_FILENAME, "filename")
    if not filename:
        raise _fail(f"{where}: debug info field `filename` is empty")
    return filename, table.scalar(_LOCATION_LINE, "i", 0, "line")


def _debug_info(table: Table | None, where: str) -> dict:
    if table is None:
        return {}
    filename, line = _location(table.table(_DEBUG_LOCATION, "location"), f"{where}.debug_info.location")
    stages = []
    for i, stage_table in enumerate(table.tables(_DEBUG_STAGE_LOCATIONS, "stage_locations")):
        stage_where = f"{where}.debug_info.stage_locations[{i}]"
        stage = _text(stage_table, _STAGE_NAME, "stage")
        if not stage:
            raise _fail(f"{stage_where}: debug info field `stage` is empty")
        stages.append((stage, *_location(stage_table.table(_STAGE_LOCATION, "location"), stage_where)))
    return {"debug_name": _text(table, _DEBUG_NAME, "name"), "source_filename": filename,
            "source_line": line, "stage_locations": tuple(stages)}


def _export(table: Table, index: int, module_count: int) -> CudaExport:
    where = f"exports[{index}]"
    module_ordinal = table.scalar(_EXPORT_MODULE_ORDINAL, "I", 0, "module_ordinal")
    if module_ordinal >= module_count:
        raise _fail(f"{where} module_ordinal {module_ordinal} is out of bounds {module_count}")
    name = _text(table, _EXPORT_KERNEL_NAME, "kernel_name")
    if not name:
        raise _fail(f"{where} name is empty")
    position = table.field_position(_EXPORT_BLOCK_DIMS)
    if position is None:
        raise _fail(f"{where} ({name}) block dims are missing")
    if position + _BLOCK_DIMS.size > table.pos + table.table_size:  # the table itself is inside the buffer
        raise _fail(f"{where}.block_dims lies outside its table")
    block_dims = _BLOCK_DIMS.unpack_from(table.fb.data, position)
    shared_memory = table.scalar(_EXPORT_SHARED_MEMORY, "I", 0, "block_shared_memory_size")
    constant_count = table.scalar(_EXPORT_CONSTANT_COUNT, "I", 0, "constant_count")
    if constant_count > MAX_CONSTANT_COUNT:
        raise _fail(f"{where} constant_count {constant_count} exceeds maximum of {MAX_CONSTANT_COUNT}")
    flags = tuple(table.scalars(_EXPORT_BINDING_FLAGS, "Q", "binding_flags") or ())
    if len(flags) > MAX_BINDING_COUNT:
        raise _fail(f"{where} binding_flags count {len(flags)} exceeds maximum of {MAX_BINDING_COUNT}")
    debug = _debug_info(table.table(_EXPORT_DEBUG_INFO, "debug_info"), where)
    return CudaExport(name=name, module_ordinal=module_ordinal, block_dims=block_dims,
                      block_shared_memory_size=shared_memory, constant_count=constant_count,
                      binding_count=len(flags), binding_flags=flags, **debug)


def _parse(data: memoryview) -> CudaExecutableDef:
    root = _flatbuffer(data).root(MAGIC)
    modules = []
    for i, module in enumerate(root.tables(_EXECUTABLE_MODULES, "modules")):
        ptx = _bytes(module, _MODULE_PTX_IMAGE, "ptx_image", string=True)
        if not ptx:
            raise _fail(f"modules[{i}] contents are empty")
        modules.append(ptx)
    exports = tuple(_export(table, i, len(modules))
                    for i, table in enumerate(root.tables(_EXECUTABLE_EXPORTS, "exports")))
    source_files = tuple(
        CudaSourceFile(_text(table, _SOURCE_FILE_PATH, "path"),
                       _bytes(table, _SOURCE_FILE_CONTENT, "content", string=False))
        for table in root.tables(_EXECUTABLE_SOURCE_FILES, "source_files"))
    return CudaExecutableDef(modules=tuple(modules), exports=exports, source_files=source_files)


def parse_cda1(data) -> CudaExecutableDef:
    """Parse and check a CDA1 executable (any bytes-like object); see the module docstring."""
    view = memoryview(data).cast("B")
    try:
        return _parse(view)
    except _FlatBufferError as error:
        raise _fail(f"CDA1 {error}") from None


def check_device_limits(executable: CudaExecutableDef, max_block_dims: tuple[int, int, int],
                        max_block_shared_memory_size: int) -> None:
    """The checks IREE makes against the device before loading: every export's block dims within
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_{X,Y,Z} and its dynamic shared memory within
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN. Raises CudaExecutableError."""
    for i, export in enumerate(executable.exports):
        if any(dim > limit for dim, limit in zip(export.block_dims, max_block_dims)):
            raise _fail(f"exports[{i}] block dims {'x'.join(map(str, export.block_dims))} exceeds device "
                        f"maximum {'x'.join(map(str, max_block_dims))}")
        if export.block_shared_memory_size > max_block_shared_memory_size:
            raise _fail(f"exports[{i}] requires {export.block_shared_memory_size}B of shared memory and "
                        f"exceeds the device maximum of {max_block_shared_memory_size}B per block")

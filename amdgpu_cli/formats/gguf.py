"""GGUF (versions 2 and 3): layout and tensor index parser.

Layout (little-endian; ggml `docs/gguf.md`; IREE `io/formats/gguf/gguf_parser.c`):

    u32 magic "GGUF", u32 version (2 or 3), u64 tensor_count, u64 metadata_kv_count
    metadata_kv[metadata_kv_count]: string key, u32 value_type, value
    tensor_info[tensor_count]:      string name, u32 n_dimensions, u64 dimensions[n_dimensions],
                                    u32 ggml_type, u64 offset (relative to tensor_data)
    padding to `alignment`, then tensor_data to the end of the file
    string = u64 length + bytes (no NUL)

Metadata values: scalars of `VALUE_SIZES`, strings, or arrays (u32 element type, u64 count, the
elements; arrays of arrays are rejected). Only `general.alignment` (must be u32) is used: it sets
the alignment of tensor_data (default 32). Sizes are not stored, so each tensor's byte length is
computed as IREE does: element_count * block bytes / block elements for its ggml type
(`GGML_TYPES`, QK_K = 256); a type outside the table is UNIMPLEMENTED.

IREE returns no entries, without reading the metadata, when tensor_count is 0; so does this.
Where IREE's C would misbehave this reader is stricter, with one-line errors: element counts and
ranges past 2**64 (IREE wraps), types 4 and 5 (removed Q4_2/Q4_3; IREE divides by a zero block
size), an alignment of 0 or not a power of two (ggml rejects it; IREE's align-up goes wrong), and
tensor_data starting past the end of the file (IREE's available size would wrap).
"""

from __future__ import annotations

import struct

from amdgpu_cli.formats.parameters import ParameterEntry, ParameterFormatError, decode_key

__all__ = ["GGML_TYPES", "MAGIC", "VALUE_SIZES", "parse"]

MAGIC = 0x46554747  # b"GGUF" read as a little-endian u32
MIN_VERSION, MAX_VERSION = 2, 3
DEFAULT_ALIGNMENT = 32
ALIGNMENT_KEY = b"general.alignment"

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_HEADER = struct.Struct("<IIQQ")

# Metadata value types: fixed element sizes; STRING and ARRAY are variable.
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
VALUE_SIZES = {UINT8: 1, INT8: 1, UINT16: 2, INT16: 2, UINT32: 4, INT32: 4, FLOAT32: 4, BOOL: 1,
               UINT64: 8, INT64: 8, FLOAT64: 8}

# ggml tensor types IREE sizes: type -> (name, elements per block, bytes per block).
QK_K = 256
GGML_TYPES = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2),
    2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 40),
    10: ("Q2_K", QK_K, 84), 11: ("Q3_K", QK_K, 110), 12: ("Q4_K", QK_K, 144),
    13: ("Q5_K", QK_K, 176), 14: ("Q6_K", QK_K, 210), 15: ("Q8_K", QK_K, 292),
    16: ("I8", 1, 1), 17: ("I16", 1, 2), 18: ("I32", 1, 4),
}

_U64_LIMIT = 1 << 64


def _error(message: str, status: str) -> ParameterFormatError:
    return ParameterFormatError(message, status=status)


class _Reader:
    """A cursor over the header bytes; every read is bounds-checked with IREE's messages."""

    __slots__ = ("data", "pos")

    def __init__(self, data: memoryview, pos: int = 0):
        self.data = data
        self.pos = pos

    def value(self, size: int) -> memoryview:
        if len(self.data) - self.pos < size:
            raise _error(f"file buffer underrun parsing {size} byte value", "OUT_OF_RANGE")
        view = self.data[self.pos:self.pos + size]
        self.pos += size
        return view

    def u32(self) -> int:
        return _U32.unpack(self.value(4))[0]

    def u64(self) -> int:
        return _U64.unpack(self.value(8))[0]

    def array(self, count: int, element_size: int) -> memoryview:
        total = count * element_size
        if len(self.data) - self.pos < total:
            raise _error("file buffer underrun parsing array", "OUT_OF_RANGE")
        view = self.data[self.pos:self.pos + total]
        self.pos += total
        return view

    def string(self) -> memoryview:
        return self.array(self.u64(), 1)


def _skip_array(reader: _Reader, value_type: int, count: int) -> None:
    if value_type in VALUE_SIZES:
        reader.array(count, VALUE_SIZES[value_type])
    elif value_type == STRING:
        for _ in range(count):  # each string takes >= 8 bytes, so a huge count underruns quickly
            reader.string()
    elif value_type == ARRAY:
        raise _error("nested arrays not supported in gguf", "INVALID_ARGUMENT")
    else:
        raise _error(f"unsupported metadata value type {value_type}", "INVALID_ARGUMENT")


def _metadata(reader: _Reader, count: int) -> int:
    """Walk the metadata pairs; returns the tensor_data alignment."""
    alignment = DEFAULT_ALIGNMENT
    for _ in range(count):
        key = reader.string()
        value_type = reader.u32()
        if value_type in VALUE_SIZES:
            value = reader.value(VALUE_SIZES[value_type])
        elif value_type == STRING:
            value = reader.string()
        elif value_type == ARRAY:
            element_type = reader.u32()
            _skip_array(reader, element_type, reader.u64())
        else:
            raise _error(f"unsupported metadata value type {value_type}", "INVALID_ARGUMENT")
        if key == ALIGNMENT_KEY:
            if value_type != UINT32:
                raise _error("general.alignment metadata value must be uint32", "INVALID_ARGUMENT")
            alignment = _U32.unpack(value)[0]
            if alignment == 0 or alignment & (alignment - 1):
                raise _error(f"general.alignment {alignment} is not a power of two", "INVALID_ARGUMENT")
    return alignment


def _tensor_info(reader: _Reader):
    name = reader.string()
    n_dimensions = reader.u32()
    dimensions = reader.array(n_dimensions, 8)
    ggml_type = reader.u32()
    offset = reader.u64()
    return name, dimensions, ggml_type, offset


def _storage_size(name: str, dimensions: memoryview, ggml_type: int) -> int:
    traits = GGML_TYPES.get(ggml_type)
    if traits is None:
        raise _error(f"GGML tensor type {ggml_type} not supported", "UNIMPLEMENTED")
    _, block_elements, block_bytes = traits
    dims = [d for (d,) in _U64.iter_unpack(dimensions)]
    count = 1
    if 0 not in dims:
        for d in dims:
            count *= d
            if count >= _U64_LIMIT:
                raise _error(f"tensor '{name}' element count overflows 64 bits", "OUT_OF_RANGE")
    else:
        count = 0
    return count * block_bytes // block_elements


def parse(data) -> list[ParameterEntry]:
    """The tensors of a GGUF file (bytes-like), in file order."""
    data = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
    reader = _Reader(data)
    magic = reader.u32()
    if magic != MAGIC:
        raise _error(f"GGUF file magic missing or invalid {magic:08X}; expected {MAGIC:08X}",
                     "INVALID_ARGUMENT")
    version = reader.u32()
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise _error(f"GGUF format version {version} is unsupported; expected version "
                     f"{MIN_VERSION}-{MAX_VERSION}", "UNIMPLEMENTED")
    tensor_count = reader.u64()
    kv_count = reader.u64()
    if tensor_count == 0:
        return []
    alignment = _metadata(reader, kv_count)

    # Tensor infos are variable-length: walk them once to find where tensor_data starts.
    infos = []
    for _ in range(tensor_count):  # each info takes >= 24 bytes, so a huge count underruns quickly
        infos.append(_tensor_info(reader))
    data_offset = -(-reader.pos // alignment) * alignment
    available = max(0, len(data) - data_offset)

    entries = []
    for raw_name, dimensions, ggml_type, offset in infos:
        name = decode_key(raw_name)
        size = _storage_size(name, dimensions, ggml_type)
        end = offset + size
        if end > available:
            raise _error(f"entry has data offsets outside of the available data (begin={offset}, "
                         f"end={end}, available={available})", "INVALID_ARGUMENT")
        entries.append(ParameterEntry(name, size, data_offset + offset, None))
    return entries

"""IREE parameter archive (.irpa), version 0.0: layout and index parser.

Layout (all little-endian, packed; IREE `schemas/parameter_archive.h`). A file holds one or more
archives; each header may link to the next by `next_header_offset`, and every offset in a header
is relative to that header's own position (so archives concatenate without re-encoding):

    header prefix (32): u32 magic "IRPA", u16 version_major, u16 version_minor,
                        u64 header_size, u64 next_header_offset (0: none), u64 flags
    header v0    (88):  prefix, u64 entry_count, then three {u64 offset, u64 length} ranges:
                        entry_segment, metadata_segment, storage_segment
    entry header (60):  u64 entry_size, u32 type, u64 flags, {offset, length} name,
                        {offset, length} metadata (both in the metadata segment),
                        u64 minimum_alignment
    splat entry  (85):  entry header, u64 length, u8 pattern[16], u8 pattern_length
    data entry   (76):  entry header, {offset, length} storage (in the storage segment)

Entries follow one another in the entry segment, each padded to 16 bytes. Types: 0 SKIP (ignored,
though its name and metadata references are still checked), 1 SPLAT, 2 DATA, 3 EXTERNAL (not
supported by IREE's parser: UNIMPLEMENTED). A data entry's length is its storage length.

Checks and messages follow IREE's `io/formats/irpa/irpa_parser.c` in its order. Where IREE's C
arithmetic could wrap (offset + length past 2**64, an entry table walked past its end) or where it
reads a linked header's fields from the first header, this reader uses the layout as documented:
sums are exact, so a wrapped range is out of range, and each linked archive is read from its own
header. Overlapping ranges are legal (the format allows entries to share storage).
"""

from __future__ import annotations

import struct

from amdgpu_cli.formats.parameters import ParameterEntry, ParameterFormatError, decode_key

__all__ = ["HEADER_PREFIX", "HEADER_V0", "ENTRY_HEADER", "SPLAT_ENTRY", "DATA_ENTRY", "MAGIC", "parse"]

MAGIC = 0x41505249  # b"IRPA" read as a little-endian u32
ENTRY_ALIGNMENT = 16
ENTRY_TYPE_SKIP, ENTRY_TYPE_SPLAT, ENTRY_TYPE_DATA, ENTRY_TYPE_EXTERNAL = 0, 1, 2, 3
SPLAT_PATTERN_CAPACITY = 16

HEADER_PREFIX = struct.Struct("<IHHQQQ")  # magic, major, minor, header_size, next_header_offset, flags
HEADER_V0 = struct.Struct("<IHHQQQ" "Q" "QQ" "QQ" "QQ")  # prefix, entry_count, entry/metadata/storage
ENTRY_HEADER = struct.Struct("<QIQ" "QQ" "QQ" "Q")  # size, type, flags, name, metadata, min alignment
SPLAT_ENTRY = struct.Struct("<QIQQQQQQ" "Q16sB")  # entry header, length, pattern, pattern_length
DATA_ENTRY = struct.Struct("<QIQQQQQQ" "QQ")  # entry header, storage {offset, length}

assert (HEADER_PREFIX.size, HEADER_V0.size, ENTRY_HEADER.size) == (32, 88, 60)
assert (SPLAT_ENTRY.size, DATA_ENTRY.size) == (85, 76)


def _error(message: str, status: str) -> ParameterFormatError:
    return ParameterFormatError(message, status=status)


def _check_file_range(file_size: int, base: int, offset: int, length: int, what: str) -> None:
    if length and base + offset + length > file_size:
        start = base + offset
        raise _error(f"file segment out of range ({start} to {start + length - 1} for {length}, "
                     f"file_size={file_size}); {what}", "OUT_OF_RANGE")


def _check_segment_ref(offset: int, length: int, segment_length: int, segment: str, what: str) -> None:
    if length and offset + length > segment_length:
        raise _error(f"{segment} segment reference out of range ({offset} to {offset + length - 1} "
                     f"for {length}, segment_size={segment_length}); {what}", "OUT_OF_RANGE")


def parse(data) -> list[ParameterEntry]:
    """Every entry of every linked archive in `data` (bytes-like), in file order."""
    data = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
    file_size = len(data)
    entries: list[ParameterEntry] = []
    base = 0
    while True:
        if file_size < base + HEADER_PREFIX.size:
            raise _error("not enough bytes for a valid IRPA header; file may be empty or truncated",
                         "INVALID_ARGUMENT")
        magic, major, minor, header_size, next_offset, _flags = HEADER_PREFIX.unpack_from(data, base)
        if magic != MAGIC:
            raise _error(f"IRPA file magic missing or invalid {magic:08X}; expected {MAGIC:08X}",
                         "INVALID_ARGUMENT")
        if base + header_size > file_size:
            raise _error(f"file buffer underrun parsing header of reported size {header_size} "
                         f"(only {file_size - base} bytes available)", "OUT_OF_RANGE")
        if next_offset and file_size < base + next_offset + HEADER_PREFIX.size:
            raise _error(f"file buffer underrun verifying linked header at offset {base + next_offset} "
                         f"(only {file_size} bytes available)", "OUT_OF_RANGE")
        if major != 0:
            raise _error(f"IRPA major version {major}.{minor} not supported by this runtime", "UNIMPLEMENTED")
        if minor > 0:
            raise _error(f"IRPA version {major}.{minor} not supported (major supported but minor is "
                         f"newer than the runtime trying to parse it)", "UNIMPLEMENTED")
        if header_size != HEADER_V0.size:
            raise _error(f"IRPA v0 header expected to be exactly {HEADER_V0.size} bytes but was "
                         f"reported as {header_size}", "INVALID_ARGUMENT")
        _parse_v0(data, base, entries)
        if not next_offset:
            return entries
        base += next_offset  # strictly increasing, so the chain ends


def _parse_v0(data: memoryview, base: int, entries: list[ParameterEntry]) -> None:
    file_size = len(data)
    fields = HEADER_V0.unpack_from(data, base)
    entry_count = fields[6]
    entry_off, entry_len, meta_off, meta_len, storage_off, storage_len = fields[7:13]
    _check_file_range(file_size, base, entry_off, entry_len, "verifying entry table")
    _check_file_range(file_size, base, meta_off, meta_len, "verifying metadata segment")
    _check_file_range(file_size, base, storage_off, storage_len, "verifying storage segment")

    offset = base + entry_off
    remaining = entry_len
    for _ in range(entry_count):  # each pass consumes >= 64 bytes of the verified table or raises
        if remaining < ENTRY_HEADER.size:
            raise _error("entry table truncated; insufficient bytes for base entry header", "OUT_OF_RANGE")
        (entry_size, entry_type, _flags, name_off, name_len, md_off, md_len,
         _alignment) = ENTRY_HEADER.unpack_from(data, offset)
        if entry_size < ENTRY_HEADER.size or remaining < entry_size:
            raise _error("entry table truncated; insufficient bytes for sized header", "OUT_OF_RANGE")
        entry_at = offset
        aligned = -(-entry_size // ENTRY_ALIGNMENT) * ENTRY_ALIGNMENT
        offset += aligned
        remaining = max(0, remaining - aligned)  # IREE's u64 would wrap here on a ragged last entry

        _check_segment_ref(name_off, name_len, meta_len, "metadata", "resolving entry name")
        _check_segment_ref(md_off, md_len, meta_len, "metadata", "resolving entry metadata")
        meta_base = base + meta_off
        key = decode_key(data[meta_base + name_off:meta_base + name_off + name_len])
        metadata = bytes(data[meta_base + md_off:meta_base + md_off + md_len])

        if entry_type == ENTRY_TYPE_SKIP:
            continue
        if entry_type == ENTRY_TYPE_SPLAT:
            if entry_size < SPLAT_ENTRY.size:
                raise _error("splat entry length underflow", "OUT_OF_RANGE")
            fields = SPLAT_ENTRY.unpack_from(data, entry_at)
            length, pattern, pattern_length = fields[8:11]
            if pattern_length > SPLAT_PATTERN_CAPACITY:
                raise _error(f"splat pattern length {pattern_length} out of bounds "
                             f"{SPLAT_PATTERN_CAPACITY}", "INVALID_ARGUMENT")
            entries.append(ParameterEntry(key, length, None, pattern[:pattern_length], metadata))
        elif entry_type == ENTRY_TYPE_DATA:
            if entry_size < DATA_ENTRY.size:
                raise _error("data entry length underflow", "OUT_OF_RANGE")
            ref_off, ref_len = DATA_ENTRY.unpack_from(data, entry_at)[8:10]
            _check_segment_ref(ref_off, ref_len, storage_len, "storage", f"parameter '{key}'")
            file_offset = base + storage_off + ref_off if ref_len else 0
            entries.append(ParameterEntry(key, ref_len, file_offset, None, metadata))
        else:
            raise _error(f"parser does not support entry type {entry_type}", "UNIMPLEMENTED")

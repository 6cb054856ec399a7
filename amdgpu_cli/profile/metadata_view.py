"""The metadata of a mapped bundle, for the one-pass reducers: no numpy.

`MetadataView.walk(mm, first, length, scan, skip)` runs a native record walk (`_pass.c`'s
`scan_table`, or a reducer's pass that does the same and reads the events on the way) that keeps
every record but the chunks of the `skip` families in a small table, a block at a time. The view
then serves `model.Model.build` as the opened `Bundle` does (`check`, `typed_records`, `data`),
finding each family's typed records with the reader's native walk (`gather_typed`).

The view never judges: where the chain breaks, a pass declines or a typed record is torn, it
raises `Declined` and the caller runs the exact path over the whole bundle, which gives IREE's
message for it. Record numbers in the view count only the records it keeps.
"""

from __future__ import annotations

import struct

from amdgpu_cli.profile import layouts
from amdgpu_cli.profile.mapped import page_window
from amdgpu_cli.profile.names import FAMILIES, RecordType
from amdgpu_cli.profile.native import content_name_table, native_module

_SCAN_OK, _SCAN_FULL = 0, 1
_BLOCK = 4096  # table entries a walk fills before it returns for more room
# A table entry (_scan.h scan_entry_t: file offset, the 104-byte record header, content index):
# offset, payload_length, header_length, content_type_length, name_length, record_type, index.
_ENTRY = struct.Struct("<Q8xQ40xIII32xH2xi4x")
_FAMILY_INDEX = {suffix: i for i, (suffix, _, _) in enumerate(FAMILIES)}
_SIZES = {"queues": layouts.QUEUE.size, "executables": layouts.EXECUTABLE.size,
          "executable-functions": layouts.FUNCTION.size,
          "command-buffers": layouts.COMMAND_BUFFER.size,
          "command-operations": layouts.COMMAND_OPERATION.size,
          "clock-correlations": layouts.CLOCK_CORRELATION.size,
          "device-metric-sources": layouts.METRIC_SOURCE.size,
          "device-metric-descriptors": layouts.METRIC_DESCRIPTOR.size}


class Declined(Exception):
    """The view cannot stand in for the bundle here: the exact path must run."""


def skip_mask(suffixes) -> int:
    """The walk's `skip` bits for the families named."""
    return sum(1 << _FAMILY_INDEX[s] for s in suffixes)


class MetadataView:
    """The records a walk kept (`entries`: payload offset, payload length, record type, content
    index per record) over the mapped file `data`."""

    def __init__(self, data, entries: list[tuple[int, int, int, int]]):
        self.data = data
        self.entries = entries

    @classmethod
    def walk(cls, data, first: int, length: int, scan=None, skip: int = 0) -> "MetadataView":
        """The view of a mapped bundle whose header said `first` and `length`; `scan` stands in
        for `scan_table` (its arguments, its return code). Raises Declined where the walk stops
        before the end (a broken chain, or a pass that declined)."""
        ffi, lib = native_module()
        scan = scan or lib.scan_table
        names, name_lengths = content_name_table(ffi)
        src = ffi.from_buffer("uint8_t[]", data)
        table = ffi.new("scan_entry_t[]", _BLOCK)
        count, next_offset = ffi.new("uint64_t*"), ffi.new("uint64_t*")
        entries = []
        offset = first
        try:
            while True:
                code = scan(src, length, offset, names, name_lengths, len(FAMILIES),
                            page_window(len(data)), skip, table, _BLOCK, count, next_offset)
                for (at, payload, header, type_length, name, kind, index) in _ENTRY.iter_unpack(
                        ffi.buffer(table, count[0] * _ENTRY.size)):
                    entries.append((at + header + type_length + name, payload, kind, index))
                offset = next_offset[0]
                if code == _SCAN_OK:
                    return cls(data, entries)
                if code != _SCAN_FULL or count[0] < _BLOCK:  # an error, or a pass that declined
                    raise Declined
        finally:
            ffi.release(src)

    def check(self) -> None:
        """The chain was whole (`walk` declines otherwise)."""

    def typed_records(self, suffix: str) -> tuple[list[int], list[int]]:
        """Each typed record's file offset and record number, in file order, for the metadata
        families the model reads; Declined where a record is torn or mis-sized."""
        ffi, lib = native_module()
        index = _FAMILY_INDEX[suffix]
        chunks = [(i, offset, n) for i, (offset, n, kind, content) in enumerate(self.entries)
                  if kind == RecordType.CHUNK and content == index]
        if not chunks:
            return [], []
        size = _SIZES[suffix]
        capacity = sum(n for _, _, n in chunks) // size
        offsets = ffi.new("uint64_t[]", [offset for _, offset, _ in chunks])
        lengths = ffi.new("uint64_t[]", [n for _, _, n in chunks])
        out_chunk = ffi.new("int64_t[]", max(capacity, 1))
        out_offset = ffi.new("uint64_t[]", max(capacity, 1))
        count, bad_chunk, bad_offset = (ffi.new("uint64_t*") for _ in range(3))
        src = ffi.from_buffer("uint8_t[]", self.data)
        try:
            code = lib.gather_typed(src, offsets, lengths, len(chunks), size, ffi.NULL, capacity,
                                    out_chunk, out_offset, count, bad_chunk, bad_offset)
        finally:
            ffi.release(src)
        if code != _SCAN_OK:
            raise Declined
        n = count[0]
        return (ffi.unpack(out_offset, n),
                [chunks[c][0] for c in ffi.unpack(out_chunk, n)])

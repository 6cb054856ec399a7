"""Reads .ireeprof bundles: one pass over the record chain, typed records on demand.

`Bundle.open(path)` maps the file (no copy), checks the file header, and walks the record chain into
`records`, a numpy table (`RECORD_TABLE`) holding each record's offset, its 104-byte header fields
and the index of its content type in `schema.CONTENT_TYPES` (-1 when unknown). A record that breaks
the chain stops the walk: `records` keeps every record before it and `error` says what broke, so
`cat` can print what came before and every other command calls `check()` first, as IREE's tools do.

`typed(suffix)` decodes every typed record of one content type, in file order, into one contiguous
array of that type's dtype (fixed head only; `tail()` gives a variable record's trailing bytes).
Typed-record errors surface only when a command asks for that content type, which is how IREE's
commands behave too: each fails on the families it decodes. `locate(suffix)` makes the same walk
for a fixed-size family without copying the records (their offsets), and `Located.columns` then
gathers only the fields asked, each record read once.

Validation rules and messages follow ../shared/reference/ireeprof.md sections 1, 2.1 and 7.
The record walk and the typed gather have a native fast path (`_scan`, built by setup.py) and a
pure-Python path with identical checks; `AMDGPU_CLI_PURE_PYTHON=1` forces the latter.
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path

import numpy as np

from amdgpu_cli.errors import BundleFormatError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.mapped import WINDOW_BYTES, map_file, page_window
from amdgpu_cli.profile.native import CONTENT_NAMES, content_name_table, native_enabled
from amdgpu_cli.profile.native import scan as _native

RECORD_TABLE = np.dtype({
    "names": ["offset", *schema.RECORD_HEADER.names, "content_index"],
    "formats": ["<u8", *[schema.RECORD_HEADER.fields[n][0] for n in schema.RECORD_HEADER.names], "<i4"],
    "offsets": [0, *[8 + schema.RECORD_HEADER.fields[n][1] for n in schema.RECORD_HEADER.names], 112],
    "itemsize": 120,
})

# Scan error codes (shared with _scan_build.SOURCE) and the messages IREE gives them.
_SCAN_MESSAGES = {
    2: "profile record is too small for header",
    3: "profile record reserved flags must be zero",
    4: "profile record extends past file end",
    5: "profile record header length is invalid",
    6: "profile record data lengths do not match",
}
_SCAN_OK, _SCAN_FULL, _TYPED_TRUNCATED, _TYPED_LENGTH = 0, 1, 7, 8

_HEADER = struct.Struct("<QQQQQQQIIIII4xQQIHH")


class Typed:
    """All typed records of one content type, in file order."""

    def __init__(self, bundle: "Bundle", ct: schema.ContentType, rows: np.ndarray,
                 chunk: np.ndarray, offsets: np.ndarray):
        self.bundle = bundle
        self.content_type = ct
        self.rows = rows          # structured array, dtype ct.dtype (fixed head of each record)
        self.chunk = chunk        # file record index that holds each row
        self.offsets = offsets    # file offset of each row

    def __len__(self) -> int:
        return len(self.rows)

    def tail(self, i: int) -> bytes:
        """The bytes of row i after its fixed head, up to its record_length."""
        start = int(self.offsets[i]) + self.content_type.dtype.itemsize
        end = int(self.offsets[i]) + int(self.rows["record_length"][i])
        return bytes(self.bundle.data[start:end])

    def strings(self, i: int, *lengths: int) -> list[str]:
        """Splits row i's tail into consecutive strings of the given byte lengths."""
        tail = self.tail(i)
        out, o = [], 0
        for n in lengths:
            out.append(tail[o:o + n].decode("utf-8", "replace"))
            o += n
        return out

    def check_variable_lengths(self) -> None:
        """Variable records must end exactly where their length fields say (IREE: DATA_LOSS)."""
        ct = self.content_type
        if ct.kind != schema.ContentKind.VARIABLE:
            return
        head = ct.dtype.itemsize
        rl = self.rows["record_length"].astype(np.int64)
        expected = _variable_tail_lengths(ct, self.rows) + head
        bad = np.nonzero(rl != expected)[0]
        if len(bad):
            raise BundleFormatError(
                f"profile chunk '{ct.name}' has a record whose length fields do not match its "
                f"record_length", record_index=int(self.chunk[bad[0]]))


class Located:
    """The typed records of one fixed-size content type, found in the mapped file but not copied:
    each record's file offset and chunk. `columns(*names)` gathers fields on demand, one
    contiguous array per field, reading each record once for all the fields asked together
    (copying whole records of up to 248 bytes is the slow part on large bundles; reports read a
    few fields). Columns are kept once gathered; after the first gather, any field not yet there
    brings all the others with it (one more pass, not one per field). `load` is `columns` for
    its effect."""

    def __init__(self, bundle: "Bundle", ct: schema.ContentType, chunk: np.ndarray,
                 offsets: np.ndarray, rows: np.ndarray | None = None):
        self.bundle = bundle
        self.content_type = ct
        self.chunk = chunk        # file record index that holds each record
        self.offsets = offsets    # file offset of each record (uint64)
        self._rows = rows         # the records, when `typed` already copied them
        self._columns: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.offsets)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns(name)[name]

    def load(self, *names: str) -> None:
        self.columns(*names)

    def records(self, lo: int, hi: int) -> np.ndarray:
        """Records lo..hi whole, as one structured array (a copy): for readers that go through
        a family a block at a time instead of holding all of it."""
        if self._rows is not None:
            return self._rows[lo:hi]
        dtype = self.content_type.dtype
        out = np.empty(max(0, hi - lo), dtype)
        if len(out):
            ffi, lib = _native.ffi, _native.lib
            offsets = np.ascontiguousarray(self.offsets[lo:hi], np.uint64)
            lib.gather_fields(ffi.from_buffer("uint8_t[]", self.bundle.data),
                              ffi.cast("uint64_t*", offsets.ctypes.data), len(out),
                              ffi.new("uint32_t[]", [0]), ffi.new("uint32_t[]", [dtype.itemsize]),
                              1, ffi.new("uint8_t*[]", [ffi.cast("uint8_t*", ffi.from_buffer(out))]))
        return out

    def columns(self, *names: str) -> dict[str, np.ndarray]:
        missing = [n for n in dict.fromkeys(names) if n not in self._columns]
        if missing and self._columns:
            # A field beyond the ones first gathered: a reader that goes on to read more (event
            # rows, one record's fields) would pay a pass per field, so the rest come in one.
            missing = [n for n in self.content_type.dtype.names if n not in self._columns]
        if missing:
            self._columns.update(self._gather(missing))
        return {n: self._columns[n] for n in names}

    def gathered(self, name: str) -> np.ndarray | None:
        """Field `name`'s column if it is gathered already, else None."""
        return self._columns.get(name)

    def gather_at(self, index: np.ndarray, names) -> dict[str, np.ndarray]:
        """Fields of the records at `index` (ascending positions) only, one column each, in one
        pass: for a selection of a family whose other records are never read (not kept)."""
        return self._gather(list(names), index)

    def _gather(self, names: list[str], index: np.ndarray | None = None) -> dict[str, np.ndarray]:
        layout = self.content_type.dtype.fields
        if self._rows is not None:
            rows = self._rows if index is None else self._rows[index]
            return {name: np.ascontiguousarray(rows[name]) for name in names}
        n = len(self.offsets) if index is None else len(index)
        out = {name: np.empty(n, layout[name][0]) for name in names}
        if not n:
            return out
        bundle = self.bundle
        ffi, lib = _native.ffi, _native.lib
        field_offsets = ffi.new("uint32_t[]", [layout[name][1] for name in names])
        field_sizes = ffi.new("uint32_t[]", [layout[name][0].itemsize for name in names])
        columns = [ffi.cast("uint8_t*", ffi.from_buffer(out[name])) for name in names]
        outs = ffi.new("uint8_t*[]", columns)
        src = ffi.from_buffer("uint8_t[]", bundle.data)
        offsets = np.ascontiguousarray(self.offsets if index is None else self.offsets[index],
                                       np.uint64)
        offsets_p = ffi.cast("uint64_t*", ffi.from_buffer(offsets))
        for lo, hi in bundle.windows(offsets, offsets + np.uint64(self.content_type.dtype.itemsize)):
            for k, name in enumerate(names):
                outs[k] = columns[k] + lo * layout[name][0].itemsize
            lib.gather_fields(src, offsets_p + lo, hi - lo, field_offsets, field_sizes, len(names),
                              outs)
        bundle.release_pages()
        return out


def _variable_tail_lengths(ct: schema.ContentType, rows: np.ndarray) -> np.ndarray:
    s, r = ct.suffix, rows
    i64 = lambda name: r[name].astype(np.int64)  # noqa: E731
    if s == "executable-code-objects":
        return i64("data_length")
    if s in ("executable-functions", "counter-sets", "device-metric-sources"):
        return i64("name_length")
    if s == "counters":
        return i64("block_name_length") + i64("name_length") + i64("description_length")
    if s == "counter-samples":
        return 8 * i64("sample_value_count")
    if s == "device-metric-descriptors":
        return i64("name_length") + i64("description_length")
    if s == "device-metric-samples":
        return schema.METRIC_VALUE.itemsize * i64("value_count")
    raise KeyError(s)


class Bundle:
    """An opened .ireeprof file. Use `Bundle.open(path)` or `Bundle.from_bytes(data)`."""

    def __init__(self, data: np.ndarray, path: str = "<memory>", keepalive=None):
        self.path = path
        self.data = data                       # uint8 view of the whole file
        self._keepalive = keepalive
        self._typed: dict[str, Typed] = {}
        self._chunks_by_content: list[np.ndarray] | None = None
        self._located: dict[str, Located] = {}
        self.error: BundleFormatError | None = None
        self.header = self._parse_header()
        self.first_record_offset = int(self.header["header_length"])
        file_length = int(self.header["file_length"])
        self.logical_length = file_length if file_length else len(data)
        self.records = self._scan()

    # --- opening ----------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike) -> "Bundle":
        """The bundle at `path` (the one-pass reducers read a mapped file's metadata through
        metadata_view.py instead)."""
        path = os.fspath(path)
        mm = map_file(path)
        if mm is None:
            return cls(np.zeros(0, np.uint8), path)
        return cls(np.frombuffer(mm, dtype=np.uint8), path, keepalive=mm)

    @classmethod
    def from_bytes(cls, data: bytes) -> "Bundle":
        return cls(np.frombuffer(bytes(data), dtype=np.uint8))

    def _parse_header(self) -> np.void:
        data = self.data
        if len(data) < schema.FILE_HEADER.itemsize:
            raise BundleFormatError("profile file is too small for header")
        h = data[:schema.FILE_HEADER.itemsize].view(schema.FILE_HEADER)[0]
        if int(h["magic"]) != schema.MAGIC:
            raise BundleFormatError("invalid IREE HAL profile file magic", status="INVALID_ARGUMENT")
        if int(h["version_major"]) != schema.VERSION_MAJOR:
            raise BundleFormatError(
                f"unsupported IREE HAL profile file version {int(h['version_major'])}."
                f"{int(h['version_minor'])}", status="INVALID_ARGUMENT")
        if int(h["header_length"]) < schema.FILE_HEADER.itemsize:
            raise BundleFormatError("profile file header length is too small")
        if int(h["header_length"]) > len(data):
            raise BundleFormatError("profile file header extends past file end")
        if int(h["flags"]) != 0:
            raise BundleFormatError("profile file reserved flags must be zero")
        if int(h["file_length"]) != 0 and int(h["file_length"]) < int(h["header_length"]):
            raise BundleFormatError("profile file length is before the first record")
        if int(h["file_length"]) > len(data):
            raise BundleFormatError("profile file length extends past file contents")
        return h

    # --- the record chain -------------------------------------------------------------------------

    def _scan(self) -> np.ndarray:
        start, end = self.first_record_offset, self.logical_length
        if native_enabled():
            table, code, offset = _scan_native(self.data, start, end, self.page_window)
        else:
            table, code, offset = _scan_python(self.data, start, end)
        if code != _SCAN_OK:
            self.error = BundleFormatError(
                f"{_SCAN_MESSAGES[code]} (record {len(table)} at offset {offset})",
                record_index=len(table))
        return table

    @property
    def page_window(self) -> int:
        """The window a native pass pages the data by: `mapped.page_window` for a file mapping
        (0 for a small file), 0 (no paging advice) for data in memory, whose pages must not be
        let go."""
        return page_window(len(self.data)) if self._keepalive is not None else 0

    def release_pages(self, end: int | None = None) -> None:
        """Lets go of the mapped file pages read so far (all of them, or those before `end`): the
        data stays in the page cache and is mapped again on the next read, but no longer counts
        in this process's resident memory. Called after each pass that reads the whole file."""
        mm = self._keepalive
        dontneed = getattr(mmap, "MADV_DONTNEED", None)
        if mm is None or dontneed is None or not self.page_window:
            return
        length = len(mm) if end is None else min(len(mm), end) // mmap.PAGESIZE * mmap.PAGESIZE
        if length > 0:
            try:
                mm.madvise(dontneed, 0, length)
            except (OSError, ValueError):  # pragma: no cover - advice only
                pass

    def prefetch(self, start: int, end: int) -> None:
        """Maps the file pages of [start, end) in one go (MADV_POPULATE_READ, Linux 5.14+): a
        pass about to read a window faults it in at once instead of page by page."""
        mm = self._keepalive
        if mm is None or not _POPULATE_READ or not self.page_window:
            return
        start = max(0, start) // mmap.PAGESIZE * mmap.PAGESIZE
        end = min(len(mm), end)
        if end > start:
            try:
                mm.madvise(_POPULATE_READ, start, end - start)
            except (OSError, ValueError):  # an older kernel: the pass faults pages in itself
                pass

    def windows(self, starts: np.ndarray, ends: np.ndarray):
        """(lo, hi) index ranges of ascending file ranges [starts, ends), one per WINDOW_BYTES of
        the file: each window is mapped in one go before the caller reads it, and let go once it
        has."""
        for lo, hi in _windows(starts):
            self.prefetch(int(starts[lo]), int(ends[hi - 1]))
            yield lo, hi
            self.release_pages(int(starts[hi - 1]))

    def gather(self, view: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """view[offsets] for a view over the mapped file (e.g. every byte offset read as one
        field) and ascending offsets, a window of the file at a time, letting pages go behind."""
        parts = [view[offsets[lo:hi]] for lo, hi in self.windows(offsets, offsets + view.itemsize)]
        if not parts:
            return view[offsets]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def check(self) -> None:
        """Raises the record-chain error, if the walk stopped on one."""
        if self.error is not None:
            raise self.error

    def __len__(self) -> int:
        return len(self.records)

    def _string(self, i: int, skip: int, length: int) -> str:
        r = self.records[i]
        start = int(r["offset"]) + int(r["header_length"]) + skip
        return bytes(self.data[start:start + length]).decode("utf-8", "replace")

    def content_type(self, i: int) -> str:
        r = self.records[i]
        return self._string(i, 0, int(r["content_type_length"]))

    def name(self, i: int) -> str:
        r = self.records[i]
        return self._string(i, int(r["content_type_length"]), int(r["name_length"]))

    def payload_offsets(self) -> np.ndarray:
        r = self.records
        return (r["offset"] + r["header_length"] + r["content_type_length"] + r["name_length"]).astype(np.uint64)

    def payload(self, i: int) -> np.ndarray:
        r = self.records[i]
        start = int(r["offset"]) + int(r["header_length"]) + int(r["content_type_length"]) + int(r["name_length"])
        return self.data[start:start + int(r["payload_length"])]

    def chunk_indices(self, suffix: str) -> np.ndarray:
        """Indices of the CHUNK records of one content type, in file order."""
        if self._chunks_by_content is None:
            # One stable grouping of every chunk by content type (int8 codes sort by radix).
            r = self.records
            codes = np.where(r["record_type"] == schema.RecordType.CHUNK, r["content_index"], -2)
            codes = codes.astype(np.int8)
            order = np.argsort(codes, kind="stable")
            bounds = np.searchsorted(codes[order], np.arange(-1, len(schema.CONTENT_TYPES) + 1))
            self._chunks_by_content = [order[bounds[i]:bounds[i + 1]]
                                       for i in range(1, len(schema.CONTENT_TYPES) + 1)]
        return self._chunks_by_content[schema.CONTENT_TYPES.index(schema.BY_SUFFIX[suffix])]

    # --- typed records ----------------------------------------------------------------------------

    def typed(self, suffix: str, *, strict: bool = False) -> Typed:
        """Every typed record of one content type; `strict` also checks variable-record lengths."""
        typed = self._typed.get(suffix)
        if typed is None:
            typed = self._typed[suffix] = self._decode(schema.BY_SUFFIX[suffix])
        if strict:
            typed.check_variable_lengths()
        return typed

    def typed_records(self, suffix: str) -> tuple[list[int], list[int]]:
        """Each typed record's file offset and chunk record index, in file order (`typed`'s walk
        and errors): what the metadata model decodes its records from."""
        typed = self.typed(suffix)
        return typed.offsets.tolist(), typed.chunk.tolist()

    def locate(self, suffix: str) -> Located:
        """Where every typed record of one fixed-size content type is, without copying them: the
        same walk and the same errors as `typed`, for reports that read a few fields of many
        records (`Located.columns`)."""
        located = self._located.get(suffix)
        if located is None:
            ct = schema.BY_SUFFIX[suffix]
            if suffix in self._typed or not native_enabled():
                typed = self.typed(suffix)
                located = Located(self, ct, typed.chunk, typed.offsets.astype(np.uint64),
                                  typed.rows)
            else:
                _, chunk, offsets = self._walk(ct, locate_only=True)
                located = Located(self, ct, chunk, offsets)
            self._located[suffix] = located
        return located

    def _decode(self, ct: schema.ContentType) -> Typed:
        if ct.kind == schema.ContentKind.TRACE:
            chunks = self.chunk_indices(ct.suffix)
            r = self.records[chunks]
            offsets = (r["offset"] + r["header_length"] + r["content_type_length"]
                       + r["name_length"]).astype(np.uint64)
            return self._decode_traces(ct, chunks, offsets, r["payload_length"].astype(np.uint64))
        rows, chunk, row_offsets = self._walk(ct)
        return Typed(self, ct, rows.view(ct.dtype).reshape(-1), chunk, row_offsets)

    def _walk(self, ct: schema.ContentType, locate_only: bool = False):
        """IREE's typed-record walk over every chunk of `ct`: (rows, chunk, offsets), rows None
        when only locating; a torn or mis-sized record raises IREE's DATA_LOSS error."""
        chunks = self.chunk_indices(ct.suffix)
        r = self.records[chunks]
        offsets = (r["offset"] + r["header_length"] + r["content_type_length"] + r["name_length"]).astype(np.uint64)
        lengths = r["payload_length"].astype(np.uint64)
        size = ct.dtype.itemsize
        if native_enabled():
            code, rows, chunk, row_offsets, bad = _gather_native(self.data, offsets, lengths, size,
                                                                 self.windows, locate_only)
        else:
            code, rows, chunk, row_offsets, bad = _gather_python(self.data, offsets, lengths, size)
        self.release_pages()
        if code != _SCAN_OK:
            bad_chunk, bad_offset = bad
            rec = int(chunks[bad_chunk])
            if code == _TYPED_TRUNCATED:
                msg = f"profile chunk '{ct.name}' has a truncated typed record"
            else:
                length = int(self.data[int(offsets[bad_chunk]) + bad_offset:][:4].view("<u4")[0])
                msg = f"profile chunk '{ct.name}' has invalid typed record length {length}"
            raise BundleFormatError(f"{msg} (record {rec})", record_index=rec)
        return rows, chunks[chunk], row_offsets

    def _decode_traces(self, ct, chunks, offsets, lengths) -> Typed:
        size = ct.dtype.itemsize
        rows = np.zeros(len(chunks), ct.dtype)
        for k, (o, n) in enumerate(zip(offsets.tolist(), lengths.tolist())):
            rec = int(chunks[k])
            if n < size:
                raise BundleFormatError(f"profile chunk '{ct.name}' has a truncated typed record "
                                        f"(record {rec})", record_index=rec)
            head = self.data[o:o + size].view(ct.dtype)[0]
            if int(head["record_length"]) != size:
                raise BundleFormatError("profile executable trace chunk record length must exclude "
                                        f"raw trace bytes (record {rec})", record_index=rec)
            if int(head["data_length"]) != n - size:
                raise BundleFormatError("profile executable trace chunk data length is inconsistent "
                                        f"with payload length (record {rec})", record_index=rec)
            rows[k] = head
        return Typed(self, ct, rows, chunks.astype(np.int64), offsets)


# --- scan implementations ---------------------------------------------------------------------

def _scan_native(data: np.ndarray, start: int, end: int, window: int = 0):
    """The record walk in native code (_pass.c `scan_table`): one call fills the table while a
    helper thread maps the file a window ahead and the walk lets go of the pages behind it. The
    table is allocated for the most records the file could hold; only its used part is touched.
    `window` is the pager's (0 unless `data` is a file mapping)."""
    ffi, lib = _native.ffi, _native.lib
    names, lengths = content_name_table(ffi)
    src = ffi.from_buffer("uint8_t[]", data)
    parts = []
    offset = start
    count, next_offset = ffi.new("uint64_t*"), ffi.new("uint64_t*")
    while True:
        capacity = max(16, min(1 << 24, (end - offset) // 104 + 1))
        block = np.empty(capacity, RECORD_TABLE)
        code = lib.scan_table(src, end, offset, names, lengths, len(CONTENT_NAMES), window, 0,
                    ffi.cast("scan_entry_t*", ffi.from_buffer(block)), capacity, count, next_offset)
        parts.append(block[:count[0]])
        offset = next_offset[0]
        if code != _SCAN_FULL:
            break
    table = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return table, code, offset


def _scan_python(data: np.ndarray, start: int, end: int):
    buf = memoryview(data)
    content_index = {n: i for i, n in enumerate(CONTENT_NAMES)}
    rows = []
    offset, code = start, _SCAN_OK
    unpack = _HEADER.unpack_from
    while offset < end:
        remaining = end - offset
        if remaining < 104:
            code = 2
            break
        h = unpack(buf, offset)
        (record_length, payload_length, _, _, _, _, _, header_length, ct_len, name_len,
         _, _, _, _, _, _, flags) = h
        if flags != 0:
            code = 3
            break
        if record_length > remaining:
            code = 4
            break
        if header_length < 104 or header_length > record_length:
            code = 5
            break
        if ct_len + name_len + payload_length != record_length - header_length:
            code = 6
            break
        ct = bytes(buf[offset + header_length:offset + header_length + ct_len])
        rows.append((offset, *h, content_index.get(ct, -1)))
        offset += record_length
    table = np.array(rows, dtype=RECORD_TABLE) if rows else np.zeros(0, RECORD_TABLE)
    return table, code, offset


def _gather_native(data, offsets, lengths, size, windows=None, locate_only=False):
    """Copies the typed records of the given payloads (only finds them with `locate_only`: rows
    None), a window of the file at a time (`windows(starts, ends)`, default `_windows`: the
    payload ranges to copy at once)."""
    ffi, lib = _native.ffi, _native.lib
    capacity = int(lengths.sum()) // size if len(lengths) else 0
    out = np.empty(0 if locate_only else capacity * size, np.uint8)
    chunk = np.empty(capacity, np.int64)
    row_offsets = np.empty(capacity, np.uint64)
    count, bad_chunk, bad_offset = ffi.new("uint64_t*"), ffi.new("uint64_t*"), ffi.new("uint64_t*")
    offsets = np.ascontiguousarray(offsets, np.uint64)
    lengths = np.ascontiguousarray(lengths, np.uint64)
    src = ffi.from_buffer("uint8_t[]", data)
    out_p = ffi.NULL if locate_only else ffi.cast("uint8_t*", ffi.from_buffer(out))
    chunk_p = ffi.cast("int64_t*", ffi.from_buffer(chunk))
    rows_p = ffi.cast("uint64_t*", ffi.from_buffer(row_offsets))
    offsets_p = ffi.cast("uint64_t*", ffi.from_buffer(offsets))
    lengths_p = ffi.cast("uint64_t*", ffi.from_buffer(lengths))
    n, code, bad = 0, _SCAN_OK, (0, 0)
    for lo, hi in (_windows(offsets) if windows is None else windows(offsets, offsets + lengths)):
        code = lib.gather_typed(src, offsets_p + lo, lengths_p + lo, hi - lo, size,
                                ffi.NULL if locate_only else out_p + n * size, capacity - n,
                                chunk_p + n, rows_p + n, count,
                                bad_chunk, bad_offset)
        chunk[n:n + count[0]] += lo
        n += count[0]
        if code != _SCAN_OK:
            bad = (lo + bad_chunk[0], bad_offset[0])
            break
    return code, None if locate_only else out[:n * size], chunk[:n], row_offsets[:n], bad


_POPULATE_READ = getattr(mmap, "MADV_POPULATE_READ", 22 if os.uname().sysname == "Linux" else 0)


def _windows(offsets: np.ndarray):
    """(lo, hi) index ranges of ascending file offsets, one per WINDOW_BYTES of the file."""
    if not len(offsets):
        return
    first, last = int(offsets[0]), int(offsets[-1])
    bounds = np.arange(first + WINDOW_BYTES, last + 1, WINDOW_BYTES, dtype=np.uint64)
    cuts = [0, *np.searchsorted(offsets, bounds).tolist(), len(offsets)]
    for lo, hi in zip(cuts, cuts[1:]):
        if hi > lo:
            yield lo, hi


def _gather_python(data, offsets, lengths, size):
    buf = memoryview(data)
    pieces, chunk, row_offsets = [], [], []
    for c, (base, length) in enumerate(zip(offsets.tolist(), lengths.tolist())):
        o = 0
        while o < length:
            remaining = length - o
            if remaining < size:
                return _TYPED_TRUNCATED, None, None, None, (c, o)
            record_length = struct.unpack_from("<I", buf, base + o)[0]
            if record_length < size or record_length > remaining:
                return _TYPED_LENGTH, None, None, None, (c, o)
            pieces.append(buf[base + o:base + o + size])
            chunk.append(c)
            row_offsets.append(base + o)
            o += record_length
    rows = np.frombuffer(b"".join(pieces), np.uint8)
    return (_SCAN_OK, rows, np.array(chunk, np.int64), np.array(row_offsets, np.uint64), None)


def open_bundle(path: str | os.PathLike) -> Bundle:
    return Bundle.open(Path(path))

"""Rows of one shape: `RowLayout` (a row type, its keys in IREE's order and how each value
prints) and `RowBlock` (rows of a layout held as whole columns).

A report's many same-shaped rows (one per event, execution or group) are a block. `jsonl.write_rows`
renders a block in native code (`_rows.c`, a few hundred nanoseconds a row) from numpy columns, or
with the layout's one `%` format per row from lists (`RowLayout.plain`: a few thousand rows render
faster that way than numpy imports) and wherever the native module is off. Iterating a block gives
`BlockRow`s, read-only mappings, for the text views and the tests. `Strings` holds a string column
as codes into its distinct texts.

numpy is imported by the methods that use it, so a report that renders plain blocks needs none.
"""

from __future__ import annotations

import gc
import json
from itertools import accumulate
from collections.abc import Mapping
from typing import TYPE_CHECKING, Iterable, Iterator

from amdgpu_cli.profile.jsonl import string
from amdgpu_cli.profile.native import native_enabled, native_module

if TYPE_CHECKING:
    import numpy as np


def _numpy():
    import numpy  # noqa: PLC0415 - imported where a method needs it (see the module docstring)

    return numpy


# Kinds of row values, as _rows.c numbers them.
_UINT, _INT, _BOOL, _STR, _TRIPLE, _DOUBLE = 0, 1, 2, 3, 4, 5

_BUFFER_BYTES = 1 << 20
_PREFIX_PAD = 32  # _rows.c reads each field prefix as a fixed 32-byte move (PREFIX_COPY)


class Strided:
    """A column read in place from memory that outlives the block (a native pass's array of
    structs): element i is `width` bytes (1, 2, 4 or 8; `signed` or not) at `address + i *
    stride`, or with `triple` three such values one after the other. `keep`: what owns that
    memory (kept alive with the column)."""

    __slots__ = ("ffi", "address", "count", "stride", "width", "signed", "triple", "keep")

    def __init__(self, ffi, address: int, count: int, stride: int, width: int,
                 signed: bool = False, triple: bool = False, keep=None):
        self.ffi, self.address, self.count, self.stride = ffi, address, count, stride
        self.width, self.signed, self.triple, self.keep = width, signed, triple, keep

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(self.count)
            if step != 1:
                raise IndexError("a strided column takes contiguous slices only")
            return Strided(self.ffi, self.address + start * self.stride, max(0, stop - start),
                           self.stride, self.width, self.signed, self.triple, self.keep)
        if not 0 <= i < self.count:
            raise IndexError(i)
        ctype = f"{'' if self.signed else 'u'}int{8 * self.width}_t*"
        p = self.ffi.cast(ctype, self.address + i * self.stride)
        return [p[0], p[1], p[2]] if self.triple else p[0]

    def tolist(self) -> list:
        return [self[i] for i in range(self.count)]


class Strings:
    """A string column as codes into a table of distinct texts (no per-row Python strings)."""

    __slots__ = ("codes", "texts")

    def __init__(self, codes, texts: list[str]):
        self.codes = codes if isinstance(codes, Strided) else _numpy().asarray(codes)
        self.texts = list(texts)

    @classmethod
    def of(cls, values: Iterable[str]) -> "Strings":
        index: dict[str, int] = {}
        codes = [index.setdefault(v, len(index)) for v in values]
        return cls(_numpy().array(codes, _numpy().int64), list(index))

    @classmethod
    def enum(cls, values, names: dict[int, str], unknown: str = "unknown") -> "Strings":
        """Names of enum values; values without a name read `unknown` (as IREE prints them)."""
        np = _numpy()
        v = np.asarray(values)
        if v.dtype.kind not in "iu":
            v = v.astype(np.uint64) if v.size else v.astype(np.int64)
        dtype = np.uint64 if v.dtype.kind == "u" else np.int64
        info = np.iinfo(dtype)
        keys = sorted(k for k in names if info.min <= k <= info.max)
        table = np.array(keys, dtype)
        texts = [names[k] for k in keys] + [unknown]
        if not len(table):
            return cls(np.zeros(len(v), np.int64), texts)
        where = np.minimum(np.searchsorted(table, v), len(table) - 1)
        return cls(np.where(table[where] == v, where, len(table)).astype(np.int64), texts)

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, selection) -> "Strings":
        return Strings(self.codes[selection], self.texts)


class RowLayout:
    """The keys of one row type and how each value prints.

    `fields` are (key, kind): `int`, `bool`, `str` (escaped JSON string), `json` (a `Strings` whose
    texts are JSON already, printed as they are), `list` (an [n, 3] integer
    column printed as [a,b,c]), `float` (a double with three decimals) or `=text`, a constant string.
    Rows start with `"type":<row_type>`, or with `head`, JSON text that opens the object (then the
    rows read only as JSONL, e.g. the export's `{"schema_version":...,"record_type":...`).
    """

    def __init__(self, row_type: str, fields: list[tuple[str, str]], head: str | None = None):
        self.row_type = row_type
        self.keys = ("type",) + tuple(k for k, _ in fields)
        self.constants = {"type": row_type}
        self.kinds: dict[str, str] = {}
        # The native renderer's view: (key, kind, text before the value). Constant fields fold
        # into the text before the next value (or into the row's tail).
        self.head = '{"type":' + string(row_type) if head is None else head
        self.variable: list[tuple[str, str, str]] = []
        pending = ""
        for key, kind in fields:
            if kind.startswith("="):
                self.constants[key] = kind[1:]
                pending += f',"{key}":{string(kind[1:])}'
                continue
            if kind not in ("int", "bool", "str", "json", "list", "float"):
                raise ValueError(f"unknown row value kind {kind!r}")
            self.kinds[key] = kind
            self.variable.append((key, kind, pending + f',"{key}":'))
            pending = ""
        self.tail = pending + "}"
        self.format = self._format()

    def block(self, **columns) -> "RowBlock":
        """Rows from whole columns (numpy arrays, lists, or `Strings` for `str`), one per element."""
        return self._block({key: _column(columns[key], kind) for key, kind in self.kinds.items()},
                           columns, plain=False)

    def plain(self, **columns) -> "RowBlock":
        """Rows from columns of Python values (lists: `str` texts, `list` triples), held as they
        are and rendered by the `%` format: for a few thousand rows, quicker than importing
        numpy for the native renderer."""
        return self._block({key: list(columns[key]) for key in self.kinds}, columns, plain=True)

    def _block(self, prepared: dict, given: dict, plain: bool) -> "RowBlock":
        missing = set(given) - set(self.kinds)
        if missing:
            raise KeyError(f"{self.row_type} has no field {sorted(missing)[0]}")
        lengths = {len(c) for c in prepared.values()}
        if len(lengths) > 1:
            raise ValueError(f"{self.row_type} columns differ in length")
        return RowBlock(self, prepared, lengths.pop() if lengths else 0, plain)

    def empty(self) -> "RowBlock":
        return RowBlock(self, {}, 0)

    @classmethod
    def from_template(cls, template: str) -> "RowLayout":
        """A layout for a printf-style line (`%d` an integer, `%s` JSON text, `%%` a percent sign,
        one trailing newline): its values are positional (`block_of`)."""
        body = template[:-1] if template.endswith("\n") else template
        pieces = [p.replace("\0", "%") for p in body.replace("%%", "\0").split("%")]
        layout = cls.__new__(cls)
        layout.row_type = ""
        layout.keys = ()
        layout.constants = {}
        layout.kinds = {}
        layout.variable = []
        layout.head = pieces[0]
        prefix = ""
        for k, piece in enumerate(pieces[1:]):
            kind = {"d": "int", "s": "json"}[piece[0]]
            layout.kinds[str(k)] = kind
            layout.variable.append((str(k), kind, prefix))
            prefix = piece[1:]
        layout.tail = prefix
        layout.format = layout._format()
        return layout

    def _format(self) -> str:
        """The row as one `%` format over the values' JSON texts (the pure-Python renderer)."""
        esc = lambda text: text.replace("%", "%%")  # noqa: E731
        return (esc(self.head) + "".join(esc(prefix) + "%s" for _, _, prefix in self.variable)
                + esc(self.tail))

    def block_of(self, columns: list) -> "RowBlock":
        """Rows from columns given in the order of the layout's values."""
        return self.block(**{key: c for (key, _, _), c in zip(self.variable, columns)})


def _column(values, kind: str):
    if kind in ("str", "json"):
        return values if isinstance(values, Strings) else Strings.of(values)
    if isinstance(values, Strided):
        return values
    np = _numpy()
    if kind == "bool":
        return np.asarray(values, dtype=bool)
    a = np.asarray(values)
    if kind == "float":
        return a.astype(np.float64, copy=False)
    if a.dtype.kind not in "iub":
        if a.size == 0:
            a = a.astype(np.int64)
        else:  # Python ints that numpy could not type, or another dtype
            try:
                a = np.asarray(values, dtype=np.int64)
            except OverflowError:
                a = np.asarray(values, dtype=np.uint64)
    if kind == "list" and (a.ndim != 2 or a.shape[1:] != (3,)):
        a = a.reshape(len(a), 3)
    if kind == "list" and a.strides[1] != a.itemsize:
        a = np.ascontiguousarray(a)
    return a


class RowBlock:
    """Rows of one layout held as columns. Iterating gives `BlockRow`s; `write_jsonl` renders.
    `plain`: the columns are lists of Python values (`RowLayout.plain`), else numpy arrays and
    `Strings` (`RowLayout.block`)."""

    def __init__(self, layout: RowLayout, columns: dict, count: int, plain: bool = False):
        self.layout = layout
        self.columns = columns
        self.count = count
        self.plain = plain

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, selection) -> "RowBlock":
        """The rows `selection` (a slice, or for numpy columns an index array) picks."""
        columns = {k: c[selection] for k, c in self.columns.items()}
        count = len(next(iter(columns.values()))) if columns else len(range(self.count)[selection])
        return RowBlock(self.layout, columns, count, self.plain)

    def __iter__(self) -> Iterator["BlockRow"]:
        enabled = gc.isenabled()
        gc.disable()  # many small tracked objects: collector passes cost more than the rows
        try:
            rows = [BlockRow(self, i) for i in range(self.count)]
        finally:
            if enabled:
                gc.enable()
        return iter(rows)

    def value(self, i: int, key: str):
        constant = self.layout.constants.get(key)
        if constant is not None:
            return constant
        column, kind = self.columns[key], self.layout.kinds[key]
        if self.plain:
            value = column[i]
            return json.loads(value) if kind == "json" else list(value) if kind == "list" \
                else value
        if kind == "str":
            return column.texts[int(column.codes[i])]
        if kind == "json":
            return json.loads(column.texts[int(column.codes[i])])
        if kind == "bool":
            return bool(column[i])
        if kind == "list":
            return [int(x) for x in column[i]]
        if kind == "float":
            return float(column[i])
        return int(column[i])

    # --- rendering

    def texts(self) -> list[str]:
        """One JSON object text per row (the pure-Python renderer)."""
        ordered = []
        for key, kind, _ in self.layout.variable:
            column = self.columns[key]
            if self.plain:
                ordered.append(_plain_texts(column, kind))
            elif kind in ("str", "json"):
                escaped = [string(t) for t in column.texts] if kind == "str" else column.texts
                ordered.append([escaped[c] for c in column.codes.tolist()])
            elif kind == "bool":
                ordered.append(["true" if v else "false" for v in column.tolist()])
            elif kind == "list":
                ordered.append(["[%d,%d,%d]" % tuple(v) for v in column.tolist()])
            elif kind == "float":
                ordered.append(["%.3f" % v for v in column.tolist()])
            else:
                ordered.append(column.tolist())
        fmt = self.layout.format
        return [fmt % values for values in zip(*ordered)] if ordered else [fmt] * self.count

    def text(self) -> str:
        """The rows as JSON Lines text (names that are not UTF-8 kept as surrogates)."""
        if self.plain or not native_enabled():
            return "".join(t + "\n" for t in self.texts())
        return b"".join(bytes(c) for c in self._render()).decode("utf-8", "surrogateescape")

    def write_jsonl(self, out) -> None:
        """Writes the rows as JSON Lines to a text stream (its binary buffer when it has one)."""
        if not self.count:
            return
        if self.plain or not native_enabled():
            for text in self.texts():
                out.write(text)
                out.write("\n")
            return
        raw = getattr(out, "buffer", None)
        if raw is not None:
            out.flush()
            for chunk in self._render():
                raw.write(chunk)
            raw.flush()
        else:
            for chunk in self._render():
                out.write(bytes(chunk).decode("utf-8", "surrogateescape"))

    def render_bytes(self) -> tuple[bytearray, "np.ndarray"]:
        """All rows as JSONL bytes (UTF-8; surrogates back to their bytes), and the offset where
        each row ends."""
        out = bytearray()
        return out, self.render_into(out)

    def render_into(self, out: "bytearray | Sink") -> "np.ndarray":
        """Appends all rows to `out` as JSONL bytes; where each row ends, counted from where the
        rows begin."""
        np = _numpy()
        if self.plain or not native_enabled():
            lines = [(t + "\n").encode("utf-8", "surrogateescape") for t in self.texts()]
            if isinstance(out, Sink):
                out.append(b"".join(lines))
            else:
                out += b"".join(lines)
            return np.cumsum([len(x) for x in lines], dtype=np.uint64)
        ends = np.zeros(self.count, np.uint64)
        if isinstance(out, Sink) and out._native:
            self._render_into_sink(out, ends)
            return ends
        for chunk in self._render(ends):
            out += chunk
        return ends

    def _fields(self):
        """The native renderer's arguments: (row_field_t array, field count, head, tail, the
        most bytes a row takes, what must stay alive while it renders). numpy only for numpy
        columns."""
        ffi, lib = native_module()
        layout = self.layout
        fields = ffi.new("row_field_t[]", max(1, len(layout.variable)))
        keep = []
        for f, (key, kind, prefix) in enumerate(layout.variable):
            d = fields[f]
            prefix_bytes = prefix.encode()
            padded = prefix_bytes + bytes(_PREFIX_PAD)  # the renderer copies prefixes whole
            keep.append(padded)
            d.prefix = ffi.from_buffer(padded)
            d.prefix_len = len(prefix_bytes)
            column = self.columns[key]
            if kind in ("str", "json"):
                texts = [(string(t) if kind == "str" else t).encode("utf-8", "surrogateescape")
                         for t in column.texts]
                ends = ffi.new("uint64_t[]", list(accumulate(len(t) for t in texts)) or 1)
                blob = b"".join(texts) or b"\0"
                keep += [blob, ends]
                d.strings = ffi.from_buffer(blob)
                d.string_ends = ends
                d.string_count = len(texts)
                column = column.codes
                if isinstance(column, Strided):
                    column = Strided(column.ffi, column.address, column.count, column.stride,
                                     column.width, False, False, column.keep)
                else:
                    if column.dtype.kind not in "iu":
                        column = column.astype(_numpy().int64)
                    if column.dtype.kind == "i":  # -1: out of the table
                        column = column.view(column.dtype.str.replace("i", "u"))
            keep.append(column)
            if isinstance(column, Strided):
                d.base = ffi.cast("const uint8_t*", column.address)
                d.stride, d.width = column.stride, column.width
                d.kind = {"int": _INT if column.signed else _UINT, "bool": _BOOL, "str": _STR,
                          "json": _STR, "list": _TRIPLE}[kind]
                d.digits = 3
                continue
            d.base = ffi.cast("const uint8_t*", column.__array_interface__["data"][0])
            d.stride = column.strides[0] if column.ndim else 0
            d.width = column.itemsize
            d.kind = {"int": _INT if column.dtype.kind == "i" else _UINT, "bool": _BOOL,
                      "str": _STR, "json": _STR, "list": _TRIPLE, "float": _DOUBLE}[kind]
            d.digits = 3
        head, tail = layout.head.encode(), (layout.tail + "\n").encode()
        count = len(layout.variable)
        bound = lib.row_bound(fields, count, len(head), len(tail))
        return fields, count, head, tail, bound, keep

    def _render(self, row_ends: "np.ndarray | None" = None) -> Iterator[memoryview]:
        """The rows rendered a buffer at a time; with `row_ends`, fills in where each row ends
        (offsets into everything yielded)."""
        ffi, lib = native_module()
        fields, count, head, tail, bound, keep = self._fields()
        size = max(_BUFFER_BYTES, 2 * bound)
        buffer = bytearray(size)
        view = memoryview(buffer)
        out = ffi.from_buffer(buffer)
        written, bad = ffi.new("uint64_t*"), ffi.new("int*")
        ends = ffi.NULL
        if row_ends is not None:
            ends = ffi.cast("uint64_t*", row_ends.ctypes.data)
        row, base = 0, 0
        while row < self.count:
            first = row
            row = lib.render_rows(fields, count, head, len(head), tail, len(tail), bound, row,
                                  self.count, out, size, written, bad, ends)
            if row_ends is not None and base:
                row_ends[first:row] += _numpy().uint64(base)
            base += written[0]
            yield view[:written[0]]
            self._check(bad[0], row)

    def _render_into_sink(self, sink: "Sink", row_ends: "np.ndarray") -> None:
        """The rows rendered straight onto the end of `sink`; `row_ends` gets where each ends."""
        ffi, lib = native_module()
        fields, count, head, tail, bound, keep = self._fields()
        written, bad = ffi.new("uint64_t*"), ffi.new("int*")
        ends = ffi.cast("uint64_t*", row_ends.ctypes.data)
        row, start = 0, sink.length
        while row < self.count:
            first = row
            sink.reserve(max(_BUFFER_BYTES, 2 * bound))
            at = sink.length
            row = lib.render_rows(fields, count, head, len(head), tail, len(tail), bound, row,
                                  self.count, sink.tail(), sink.capacity - at, written, bad, ends)
            if at > start:
                row_ends[first:row] += _numpy().uint64(at - start)
            sink.length += written[0]
            self._check(bad[0], row)

    def _check(self, bad: int, row: int) -> None:
        if bad:
            raise ValueError(f"{self.layout.row_type} row {row}: string code outside its table")


class Sink:
    """Bytes appended to one buffer that grows without being cleared first (the native module's
    memory; a bytearray without it) and keeps its memory when emptied: a writer rendering block
    after block maps its pages once, and copies nothing to grow a block. `view()` is valid until
    the next change."""

    def __init__(self):
        self.length = 0
        self.capacity = 0
        self._native = native_enabled()
        self._memory = None if self._native else bytearray()

    def __len__(self) -> int:
        return self.length

    def clear(self) -> None:
        self.length = 0
        if not self._native:
            self._memory = bytearray()

    def reserve(self, n: int) -> None:
        """Room for `n` more bytes (native memory only)."""
        if self.capacity - self.length >= n:
            return
        ffi = native_module()[0]
        capacity = max(2 * self.capacity, self.length + n)
        memory = _uncleared(ffi)("char[]", capacity)
        if self.length:
            ffi.memmove(memory, self._memory, self.length)
        self._memory, self.capacity = memory, capacity

    def tail(self):
        """Where the next byte goes (a native pointer)."""
        return self._memory + self.length

    def pointer(self):
        """The first byte (a native pointer)."""
        return self._memory

    def append(self, data) -> None:
        n = len(data)
        if not self._native:
            self._memory += data
        elif n:
            self.reserve(n)
            native_module()[0].memmove(self.tail(), data, n)
        self.length += n

    def view(self) -> memoryview:
        if not self._native:
            return memoryview(self._memory)
        if not self.length:
            return memoryview(b"")
        return memoryview(native_module()[0].buffer(self._memory, self.length))


_ALLOCATOR = []


def _uncleared(ffi):
    """cffi's allocator that leaves new memory as it is (made once)."""
    if not _ALLOCATOR:
        _ALLOCATOR.append(ffi.new_allocator(should_clear_after_alloc=False))
    return _ALLOCATOR[0]


class BlockRow(Mapping):
    """One row of a block; reads like a dict in IREE's key order."""

    __slots__ = ("_block", "_index")

    def __init__(self, block: RowBlock, index: int):
        self._block = block
        self._index = index

    def __getitem__(self, key: str):
        if key not in self._block.layout.constants and key not in self._block.columns:
            raise KeyError(key)
        return self._block.value(self._index, key)

    def __iter__(self):
        return iter(self._block.layout.keys)

    def __len__(self) -> int:
        return len(self._block.layout.keys)

    def json(self) -> str:
        return self._block[self._index:self._index + 1].texts()[0]


def _plain_texts(column: list, kind: str) -> list:
    """The JSON text of each value of a plain column (ints as they are: `%s` prints them)."""
    if kind == "str":
        return [string(t) for t in column]
    if kind == "bool":
        return ["true" if v else "false" for v in column]
    if kind == "list":
        return ["[%d,%d,%d]" % tuple(v) for v in column]
    if kind == "float":
        return ["%.3f" % v for v in column]
    return column

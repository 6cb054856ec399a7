"""The pieces every report is built from.

Numbers: `exact_sum` / `exact_group_sums` (integer sums below 2**64 without numpy's wrap-around),
`iree_sqrt` and `welford` (IREE's libm-free square root and running mean/variance), `equals_u64`
(an id filter over a u64 column). Grouping: `group_ids` numbers groups in order of their first row
(IREE's aggregate tables grow that way), `dense_ids` numbers them in no particular order (faster),
`Segments` reduces per group keeping file order inside each, `Columns` reads selected rows of a
structured array one field at a time.

Rows: a report's many same-shaped rows (one per event) are a `RowBlock`: one `RowLayout` (the row
type, its keys in IREE's order and each value's kind) over whole columns. `jsonl.write_rows` renders
a block in native code (`_rows.c`, a few hundred nanoseconds a row); iterating a block gives
`BlockRow`s, read-only mappings, for the text views and the tests. A report whose rows mix dicts and
blocks returns them as `Rows`, which iterates one row at a time and hands `write_rows` the blocks.

Without the native module (`AMDGPU_CLI_PURE_PYTHON=1`, or a build without it) the same text comes
from one `%` format per row.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Mapping
from typing import Iterable, Iterator

import numpy as np

from amdgpu_cli.profile.native import native_enabled, native_module
from amdgpu_cli.profile.jsonl import string

U64_MAX = (1 << 64) - 1


# --- numbers --------------------------------------------------------------------------------------

def exact_sum(values: np.ndarray) -> int:
    """Exact sum of integers in [0, 2**64) (numpy's uint64 sum would wrap)."""
    if len(values) == 0:
        return 0
    v = values.astype(np.uint64, copy=False)
    if len(v) < (1 << 32):
        hi = int((v >> np.uint64(32)).sum(dtype=np.uint64))
        lo = int((v & np.uint64(0xFFFFFFFF)).sum(dtype=np.uint64))
        return (hi << 32) + lo
    return sum(int(x) for x in v)  # pragma: no cover - over four billion values


def exact_group_sums(values: np.ndarray, starts: np.ndarray) -> list[int]:
    """Exact sums of integers in [0, 2**64) over the segments of `values` that begin at `starts`
    (fewer than 2**32 values per segment)."""
    v = np.asarray(values).astype(np.uint64, copy=False)
    hi = np.add.reduceat(v >> np.uint64(32), starts).tolist()
    lo = np.add.reduceat(v & np.uint64(0xFFFFFFFF), starts).tolist()
    return [(h << 32) + low for h, low in zip(hi, lo)]


def iree_sqrt(values) -> np.ndarray:
    """IREE's square root: 32 Newton steps from max(value, 1); 0 for value <= 0.

    IREE's tools avoid libm; for very large values 32 steps do not converge, and the printed
    standard deviation is whatever the iteration reached, so this repeats it step for step.
    """
    v = np.asarray(values, dtype=np.float64)
    estimate = np.where(v >= 1.0, v, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(32):
            estimate = 0.5 * (estimate + v / estimate)
    return np.where(v > 0.0, estimate, 0.0)


def welford(values: list[float]) -> tuple[float, float]:
    """IREE's running mean and sum of squared deviations over `values`, in order."""
    mean = m2 = 0.0
    n = 0
    for x in values:
        n += 1
        delta = x - mean
        mean += delta / n
        m2 += delta * (x - mean)
    return mean, m2


def equals_u64(column: np.ndarray, value: int) -> np.ndarray:
    """column == value for a u64 column and any Python int (none match past u64)."""
    if value > U64_MAX or value < 0:
        return np.zeros(len(column), bool)
    return column == np.uint64(value)


# --- grouping -------------------------------------------------------------------------------------

def group_ids(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups rows by the tuple of `columns`.

    Returns (group id of each row, index of each group's first row); groups are numbered in
    order of their first row.
    """
    n = len(columns[0])
    if n == 0:
        return np.zeros(0, np.intp), np.zeros(0, np.intp)
    varying = [c for c in columns if not (c[0] == c[-1] and (c == c[0]).all())]
    if not varying:
        return np.zeros(n, np.intp), np.zeros(1, np.intp)
    if len(varying) == 1:
        code = varying[0]
    else:
        code = np.zeros(n, np.int64)
        for column in varying:
            _, inverse = np.unique(column, return_inverse=True)
            code = code * (int(inverse.max()) + 1) + inverse.reshape(-1)
            _, code = np.unique(code, return_inverse=True)
            code = code.reshape(-1)
    change = code[1:] != code[:-1]
    if (code[1:] >= code[:-1]).all():  # already in first-seen order: no sort needed
        first = np.concatenate(([0], np.flatnonzero(change) + 1))
        gid = np.concatenate(([0], np.cumsum(change))).astype(np.intp)
        return gid, first
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), np.intp)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], first[order]


def _dense_codes(column: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense codes 0..k-1 for one key column, and k."""
    lo, hi = column.min(), column.max()
    if int(hi) - int(lo) < 1 << 20:  # ordinals and close ids: the offset is the code
        return (column - lo).astype(np.int64), int(hi) - int(lo) + 1
    values, codes = np.unique(column, return_inverse=True)
    return codes.reshape(-1).astype(np.int64), len(values)


def dense_ids(columns: list[np.ndarray], n: int) -> tuple[np.ndarray, int]:
    """One id per distinct combination of the key columns (ids dense, in no particular order),
    and the number of ids."""
    code, size = np.zeros(n, np.int64), 1
    for column in columns:
        c, k = _dense_codes(np.asarray(column))
        if k == 1:
            continue
        if size * k >= 1 << 62:  # too many combinations to pack: compact what we have first
            _, code = np.unique(code, return_inverse=True)
            code, size = code.reshape(-1).astype(np.int64), int(code.max()) + 1
        code, size = code * k + c, size * k
    if size <= 1 << 24:
        present = np.zeros(size, bool)
        present[code] = True
        ids = np.cumsum(present) - 1
        return ids[code], int(present.sum())
    _, ids = np.unique(code, return_inverse=True)
    ids = ids.reshape(-1)
    return ids, int(ids.max()) + 1 if len(ids) else 0


class Columns:
    """Selected rows of a structured array (all of them without `index`), one contiguous column
    per field, gathered on first use. Copying whole records (up to 152 bytes each) is the slow
    part on large bundles; reports read a dozen fields at most."""

    def __init__(self, rows, index: np.ndarray | None = None):
        self._rows = rows
        self.index = index
        self._cache: dict[str, np.ndarray] = {}
        self._length = len(rows) if index is None else len(index)

    @classmethod
    def where(cls, rows, mask: np.ndarray) -> "Columns":
        """The rows `mask` selects; all of them without an index (no copy of any column)."""
        return cls(rows, None if mask.all() else np.flatnonzero(mask))

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, name: str) -> np.ndarray:
        column = self._cache.get(name)
        if column is None:
            if self.index is not None and hasattr(self._rows, "gather_at") and \
                    self._rows.gathered(name) is None:
                # A field the source has not gathered (it gathered what its reader reads): read
                # it, and with it every field not here yet, in one pass over the selected
                # records only (a reader past its fields reads records whole: event rows).
                names = [n for n in self._rows.content_type.dtype.names
                         if n not in self._cache and self._rows.gathered(n) is None]
                self._cache.update(self._rows.gather_at(self.index, names))
                return self._cache[name]
            column = self._rows[name]
            column = np.ascontiguousarray(column) if self.index is None else column[self.index]
            self._cache[name] = column
        return column

    def position(self, i: int) -> int:
        """Row i of this selection as a row of the underlying array."""
        return i if self.index is None else int(self.index[i])

    def take(self, index: np.ndarray) -> "Columns":
        """The rows `index` picks (positions in this selection)."""
        if len(index) == self._length and (not len(index) or (np.diff(index) == 1).all()
                                           and index[0] == 0):
            return self  # every row, in order: no copies
        if not isinstance(self._rows, np.ndarray):
            return Columns(self, index)
        return Columns(self._rows, index if self.index is None else self.index[index])


class Segments:
    """Per-group reductions over a subset of rows, keeping file order inside each group."""

    def __init__(self, gid: np.ndarray, ngroups: int):
        self.ngroups = ngroups
        if len(gid) < 2 or (gid[1:] >= gid[:-1]).all():
            self.order = None
            g = gid
        else:
            self.order = np.argsort(gid, kind="stable")
            g = gid[self.order]
        if len(g):
            self.starts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
        else:
            self.starts = np.zeros(0, np.intp)
        self.present = g[self.starts]
        self.ends = np.append(self.starts[1:], len(g))

    def sorted(self, values: np.ndarray) -> np.ndarray:
        return values if self.order is None else values[self.order]

    def reduce(self, ufunc, values: np.ndarray, fill) -> np.ndarray:
        out = np.full(self.ngroups, fill, dtype=values.dtype)
        if len(self.starts):
            out[self.present] = ufunc.reduceat(self.sorted(values), self.starts)
        return out

    def total(self, values: np.ndarray, limit: int) -> np.ndarray | None:
        """Exact per-group sums of non-negative integers; None when one exceeds `limit`."""
        out = self.reduce(np.add, values, 0)
        if not len(self.starts):
            return out
        approx = self.reduce(np.add, values.astype(np.float64), 0.0)
        suspicious = np.flatnonzero(approx >= 2.0 ** 62)
        if len(suspicious):
            data = self.sorted(values)
            where = {int(g): k for k, g in enumerate(self.present.tolist())}
            for g in suspicious.tolist():
                k = where[g]
                exact = sum(data[self.starts[k]:self.ends[k]].tolist())
                if exact > limit:
                    return None
                out[g] = exact
        return out


# --- rows -----------------------------------------------------------------------------------------

# Kinds of row values, as _rows.c numbers them.
_UINT, _INT, _BOOL, _STR, _TRIPLE, _DOUBLE = 0, 1, 2, 3, 4, 5

_BUFFER_BYTES = 1 << 20
_PREFIX_PAD = 32  # _rows.c reads each field prefix as a fixed 32-byte move (PREFIX_COPY)


class Strings:
    """A string column as codes into a table of distinct texts (no per-row Python strings)."""

    __slots__ = ("codes", "texts")

    def __init__(self, codes, texts: list[str]):
        self.codes = np.asarray(codes)
        self.texts = list(texts)

    @classmethod
    def of(cls, values: Iterable[str]) -> "Strings":
        index: dict[str, int] = {}
        codes = [index.setdefault(v, len(index)) for v in values]
        return cls(np.array(codes, np.int64), list(index))

    @classmethod
    def enum(cls, values: np.ndarray, names: dict[int, str], unknown: str = "unknown") -> "Strings":
        """Names of enum values; values without a name read `unknown` (as IREE prints them)."""
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
        prepared = {}
        for key, kind in self.kinds.items():
            prepared[key] = _column(columns[key], kind)
        missing = set(columns) - set(self.kinds)
        if missing:
            raise KeyError(f"{self.row_type} has no field {sorted(missing)[0]}")
        lengths = {len(c) for c in prepared.values()}
        if len(lengths) > 1:
            raise ValueError(f"{self.row_type} columns differ in length")
        return RowBlock(self, prepared, lengths.pop() if lengths else 0)

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
    """Rows of one layout held as columns. Iterating gives `BlockRow`s; `write_jsonl` renders."""

    def __init__(self, layout: RowLayout, columns: dict, count: int):
        self.layout = layout
        self.columns = columns
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, selection) -> "RowBlock":
        """The rows `selection` (a slice or an index array) picks, as a block."""
        columns = {k: c[selection] for k, c in self.columns.items()}
        count = len(next(iter(columns.values()))) if columns else len(range(self.count)[selection])
        return RowBlock(self.layout, columns, count)

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
            if kind in ("str", "json"):
                escaped = [string(t) for t in column.texts] if kind == "str" else column.texts
                ordered.append([escaped[c] for c in column.codes.tolist()])
            elif kind == "bool":
                ordered.append(np.where(column, "true", "false").tolist())
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
        if not native_enabled():
            return "".join(t + "\n" for t in self.texts())
        return b"".join(bytes(c) for c in self._render()).decode("utf-8", "surrogateescape")

    def write_jsonl(self, out) -> None:
        """Writes the rows as JSON Lines to a text stream (its binary buffer when it has one)."""
        if not self.count:
            return
        if not native_enabled():
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

    def render_bytes(self) -> tuple[bytearray, np.ndarray]:
        """All rows as JSONL bytes (UTF-8; surrogates back to their bytes), and the offset where
        each row ends."""
        out = bytearray()
        return out, self.render_into(out)

    def render_into(self, out: bytearray) -> np.ndarray:
        """Appends all rows to `out` as JSONL bytes; where each row ends, counted from where the
        rows begin."""
        if not native_enabled():
            lines = [(t + "\n").encode("utf-8", "surrogateescape") for t in self.texts()]
            out += b"".join(lines)
            return np.cumsum([len(x) for x in lines], dtype=np.uint64)
        ends = np.zeros(self.count, np.uint64)
        for chunk in self._render(ends):
            out += chunk
        return ends

    def _render(self, row_ends: np.ndarray | None = None) -> Iterator[memoryview]:
        """The rows rendered a buffer at a time; with `row_ends`, fills in where each row ends
        (offsets into everything yielded)."""
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
                ends = np.cumsum([len(t) for t in texts], dtype=np.uint64)
                blob = b"".join(texts) or b"\0"
                keep += [blob, ends]
                d.strings = ffi.from_buffer(blob)
                d.string_ends = ffi.cast("const uint64_t*", ends.ctypes.data)
                d.string_count = len(texts)
                column = column.codes
                if column.dtype.kind not in "iu":
                    column = column.astype(np.int64)
                if column.dtype.kind == "i":
                    column = column.view(column.dtype.str.replace("i", "u"))  # -1: out of table
            keep.append(column)
            d.base = ffi.cast("const uint8_t*", column.__array_interface__["data"][0])
            d.stride = column.strides[0] if column.ndim else 0
            d.width = column.itemsize
            d.kind = {"int": _INT if column.dtype.kind == "i" else _UINT, "bool": _BOOL,
                      "str": _STR, "json": _STR, "list": _TRIPLE, "float": _DOUBLE}[kind]
            d.digits = 3
        head, tail = layout.head.encode(), (layout.tail + "\n").encode()
        count = len(layout.variable)
        bound = lib.row_bound(fields, count, len(head), len(tail))
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
                row_ends[first:row] += np.uint64(base)
            base += written[0]
            yield view[:written[0]]
            if bad[0]:
                raise ValueError(f"{layout.row_type} row {row}: string code outside its table")


def gather_ranges(data: bytes, starts: np.ndarray, ends: np.ndarray) -> bytes | bytearray:
    """The byte ranges [starts[k], ends[k]) of `data`, concatenated in order."""
    starts = np.ascontiguousarray(starts, np.uint64)
    ends = np.ascontiguousarray(ends, np.uint64)
    if not native_enabled():
        return b"".join(data[a:b] for a, b in zip(starts.tolist(), ends.tolist()))
    ffi, lib = native_module()
    out = bytearray(int((ends - starts).sum()))
    if out:
        lib.copy_ranges(ffi.from_buffer(data), ffi.cast("const uint64_t*", starts.ctypes.data),
                        ffi.cast("const uint64_t*", ends.ctypes.data), len(starts),
                        ffi.from_buffer(out))
    return out


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


def interleave(*sources: tuple[RowBlock, np.ndarray]) -> Iterator[RowBlock]:
    """Rows of several blocks merged by a sort key per row (each block already in key order);
    on equal keys the earlier block's rows come first. Yields runs as blocks."""
    sources = [(b, np.asarray(k)) for b, k in sources if len(b)]
    if len(sources) <= 1:
        yield from (b for b, _ in sources)
        return
    keys = np.concatenate([k for _, k in sources])
    which = np.concatenate([np.full(len(b), s, np.intp) for s, (b, _) in enumerate(sources)])
    order = np.lexsort((which, keys))
    picked = which[order]
    starts = np.flatnonzero(np.concatenate(([True], picked[1:] != picked[:-1])))
    ends = np.append(starts[1:], len(picked))
    first = np.cumsum([0] + [len(b) for b, _ in sources])
    for a, b in zip(starts.tolist(), ends.tolist()):
        s = int(picked[a])
        lo = int(order[a]) - first[s]
        yield sources[s][0][lo:lo + (b - a)]


class Rows:
    """A report's rows in order: dicts and `RowBlock`s. Iterates one row at a time; `parts()`
    gives the dicts and blocks themselves (what `jsonl.write_rows` renders)."""

    def __init__(self, parts: Iterable):
        self._parts = iter(parts)
        self._current: Iterator | None = None

    def parts(self) -> Iterator:
        return self._parts

    def __iter__(self) -> "Rows":
        return self

    def __next__(self):
        while True:
            if self._current is not None:
                row = next(self._current, None)
                if row is not None:
                    return row
                self._current = None
            part = next(self._parts)
            if isinstance(part, RowBlock):
                self._current = iter(part)
            else:
                return part

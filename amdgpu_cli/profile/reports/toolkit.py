"""The pieces every report is built from.

Numbers: `exact_sum` / `exact_group_sums` (integer sums below 2**64 without numpy's wrap-around),
`iree_sqrt` and `welford` (IREE's libm-free square root and running mean/variance), `equals_u64`
(an id filter over a u64 column). Grouping: `group_ids` numbers groups in order of their first row
(IREE's aggregate tables grow that way), `dense_ids` numbers them in no particular order (faster),
`Segments` reduces per group keeping file order inside each, `Columns` reads selected rows of a
structured array one field at a time.

Rows: the row layouts and blocks are `rows.py`'s (re-exported here: `RowLayout`, `RowBlock`,
`BlockRow`, `Strings`; `Rows` is jsonl.py's); `gather_ranges` copies byte ranges of a file and
`interleave` merges blocks in file order.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from amdgpu_cli.profile.jsonl import Rows  # noqa: F401 - re-exported
from amdgpu_cli.profile.native import native_enabled, native_module
from amdgpu_cli.profile.reports.aggregates import iree_sqrt as sqrt_of
from amdgpu_cli.profile.reports.rows import (  # noqa: F401 - re-exported: the reports' one import
    BlockRow, RowBlock, RowLayout, Sink, Strings)

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
    """`aggregates.iree_sqrt` (IREE's libm-free square root) of each value of an array."""
    v = np.asarray(values, dtype=np.float64)
    return np.array([sqrt_of(x) for x in v.ravel().tolist()], np.float64).reshape(v.shape)


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


def distinct(values: np.ndarray) -> list[int]:
    """The distinct values, ascending. (Plain `np.unique(a)` imports numpy.ma, 20-40 ms, in
    numpy 2: asking for the counts too does not.)"""
    return np.unique(values, return_counts=True)[0].tolist()


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

def gather_ranges(data, starts: np.ndarray, ends: np.ndarray, out: Sink | None = None):
    """The byte ranges [starts[k], ends[k]) of `data` (bytes, or a `Sink`), concatenated in
    order: new bytes, or, given `out` (a Sink, emptied first), a view of `out`."""
    starts = np.ascontiguousarray(starts, np.uint64)
    ends = np.ascontiguousarray(ends, np.uint64)
    source = data.view() if isinstance(data, Sink) else data
    if out is not None:
        out.clear()
    if not native_enabled():
        joined = b"".join(source[a:b] for a, b in zip(starts.tolist(), ends.tolist()))
        if out is None:
            return joined
        out.append(joined)
        return out.view()
    ffi, lib = native_module()
    size = int((ends - starts).sum())
    if out is None:
        target = bytearray(size)
        pointer = ffi.from_buffer(target) if size else None
    else:
        out.reserve(size)
        target, pointer = None, out.pointer()
    if size:
        lib.copy_ranges(data.pointer() if isinstance(data, Sink) else ffi.from_buffer(source),
                        ffi.cast("const uint64_t*", starts.ctypes.data),
                        ffi.cast("const uint64_t*", ends.ctypes.data), len(starts), pointer)
    if out is None:
        return target
    out.length = size
    return out.view()


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

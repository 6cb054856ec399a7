"""`memory`: memory-event rows and lifecycle accounting, as iree-profile's `memory` command.

Every memory event that passes the filters (`--filter` globs the event type name, `--id` keeps
events whose event_id or allocation_id equals it) is accounted, in file order, into:

- a device row per physical device: counts per event type and six balances (slab provider
  events, pool reservations, pool materializations, queue in-flight allocations, buffer
  allocations, buffer imports);
- a pool row per (lifecycle kind, device, pool id, memory type): a lifecycle balance, a
  materialization balance, and the last/extreme pool statistics of POOL_STATS events;
- an allocation row per (lifecycle kind, device, allocation id, pool id): first/last event,
  submission and queue, the same two balances and, for queue allocations, the device lifetime
  joined from the queue-device alloca/dealloca events and scaled by the device clock fit.

A balance opens on acquire/reserve/alloca/allocate/import and closes on the matching release/
dealloca/free/unimport; a close that finds no open count, or more bytes than are open, is a
partial close (clamped at zero). A pool_release closes the materialized balance only when its
reservation still has materialized bytes or count open. Queue allocations whose events carry
pool_id 0 inherit the pool of the most recently created allocation with the same id.

Rows, as `iree-profile memory --format=jsonl` prints them: every matched `memory_event`, then
`memory_summary`, `memory_device`, `memory_pool` and `memory_allocation` rows, each list in
creation order. The queue-device join (and the metadata checks it brings, which fail like IREE's)
only happens in JSONL or with `--id`, as in IREE.

The accounting is whole-column numpy: balances are clamped running sums, computed per group as
`S - min(0, running min of S)`. When the event lengths could overflow int64 the same balances are
computed exactly with Python integers, failing as IREE does (OUT_OF_RANGE) on u64 overflow.

Source: IREE runtime/src/iree/tooling/profile/memory.c; reference ireeprof.md section 4.10.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Iterator

import numpy as np

from amdgpu_cli.errors import AmdgpuCliError, BundleFormatError, MissingMetadataError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.native import native_enabled, native_module
from amdgpu_cli.profile.options import ReportOptions, key_matches
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports.toolkit import (Columns, RowBlock, RowLayout, Rows, Strings,
                                                 group_ids)

F = schema.Flags
U32_MAX = schema.U32_MAX
HOST_TIME_DOMAIN = "iree_host_time_ns"
QUEUE_EVENT_ALLOCA, QUEUE_EVENT_DEALLOCA = 9, 10

# Memory event types.
(SLAB_ACQUIRE, SLAB_RELEASE, POOL_RESERVE, POOL_MATERIALIZE, POOL_RELEASE, POOL_WAIT,
 QUEUE_ALLOCA, QUEUE_DEALLOCA, BUFFER_ALLOCATE, BUFFER_FREE, BUFFER_IMPORT,
 BUFFER_UNIMPORT) = range(1, 13)
TYPE_NAMES = [schema.MEMORY_EVENT_TYPE_NAMES.get(t, "unknown") for t in range(13)]

# Lifecycle kinds (index 0 = none), named as IREE names them.
KIND_NAMES = ["", "slab", "pool_reservation", "queue_allocation", "buffer_allocation",
              "imported_buffer"]
SLAB, POOL_RESERVATION, QUEUE_ALLOCATION, BUFFER_ALLOCATION, IMPORTED_BUFFER = range(1, 6)
# Event type -> lifecycle kind of the pool row it is counted in (pool events: any flags).
_POOL_KIND = np.array([0, SLAB, SLAB] + [POOL_RESERVATION] * 4 + [QUEUE_ALLOCATION] * 2
                      + [BUFFER_ALLOCATION] * 2 + [IMPORTED_BUFFER] * 2, np.int64)
_CLOSES = np.zeros(13, bool)
_CLOSES[[SLAB_RELEASE, POOL_RELEASE, QUEUE_DEALLOCA, BUFFER_FREE, BUFFER_UNIMPORT]] = True
_OPENS = np.zeros(13, bool)
_OPENS[[SLAB_ACQUIRE, BUFFER_ALLOCATE, BUFFER_IMPORT, QUEUE_ALLOCA]] = True  # + flagged reserve

# Device balances, in JSON prefix order, with the event types that open and close each.
DEVICE_BALANCES = ["slab", "pool_reserved", "pool_materialized", "queue_inflight", "buffer",
                   "imported_buffer"]
_DEVICE_OPEN = {SLAB_ACQUIRE: 0, POOL_RESERVE: 1, POOL_MATERIALIZE: 2, QUEUE_ALLOCA: 3,
                BUFFER_ALLOCATE: 4, BUFFER_IMPORT: 5}
_DEVICE_CLOSE = {SLAB_RELEASE: 0, POOL_RELEASE: 1, QUEUE_DEALLOCA: 3, BUFFER_FREE: 4,
                 BUFFER_UNIMPORT: 5}
DEVICE_COUNTS = [("slab_acquires", SLAB_ACQUIRE), ("slab_releases", SLAB_RELEASE),
                 ("pool_reserves", POOL_RESERVE), ("pool_materializes", POOL_MATERIALIZE),
                 ("pool_releases", POOL_RELEASE), ("pool_waits", POOL_WAIT),
                 ("queue_allocas", QUEUE_ALLOCA), ("queue_deallocas", QUEUE_DEALLOCA),
                 ("buffer_allocates", BUFFER_ALLOCATE), ("buffer_frees", BUFFER_FREE),
                 ("buffer_imports", BUFFER_IMPORT), ("buffer_unimports", BUFFER_UNIMPORT)]

BALANCE_FIELDS = ["current_count", "high_water_count", "total_open_count", "total_close_count",
                  "partial_close_count", "current_bytes", "high_water_bytes", "total_open_bytes",
                  "total_close_bytes", "partial_close_bytes"]

# Above this many bytes in total the int64 fast path could overflow: use exact integers.
EXACT_BYTES_THRESHOLD = float(1 << 62)


# --- rows that render themselves ----------------------------------------------------------------

EVENT_LAYOUT = RowLayout("memory_event", [
    ("event_id", "int"), ("event_type", "str"), ("event_type_value", "int"), ("flags", "int"),
    ("result", "int"), ("host_time_ns", "int"), ("allocation_id", "int"),
    ("host_time_domain", "=" + HOST_TIME_DOMAIN), ("pool_id", "int"), ("backing_id", "int"),
    ("submission_id", "int"), ("physical_device_ordinal", "int"), ("queue_ordinal", "int"),
    ("frontier_entry_count", "int"), ("memory_type", "int"), ("buffer_usage", "int"),
    ("offset", "int"), ("length", "int"), ("alignment", "int"), ("externally_owned", "bool"),
    ("pool_stats_available", "bool"), ("pool_bytes_reserved", "int"), ("pool_bytes_free", "int"),
    ("pool_bytes_committed", "int"), ("pool_budget_limit", "int"),
    ("pool_reservation_count", "int"), ("pool_slab_count", "int"),
])

_BALANCE_LAYOUT = lambda prefix: [(f"{prefix}_{f}", "int") for f in BALANCE_FIELDS]  # noqa: E731

ALLOCATION_LAYOUT = RowLayout("memory_allocation", [
    ("kind", "str"), ("physical_device_ordinal", "int"), ("allocation_id", "int"),
    ("pool_id", "int"), ("backing_id", "int"), ("externally_owned", "bool"),
    ("memory_type", "int"), ("buffer_usage", "int"), ("events", "int"), ("waits", "int"),
    ("materializes", "int"), ("open_at_end", "bool"), ("first_event_id", "int"),
    ("last_event_id", "int"), ("first_host_time_ns", "int"), ("last_host_time_ns", "int"),
    ("host_time_domain", "=" + HOST_TIME_DOMAIN), ("duration_ns", "int"), ("first_submission_id", "int"),
    ("last_submission_id", "int"), ("first_queue_ordinal", "int"),
    ("last_queue_ordinal", "int"), ("alloca_device_event_id", "int"),
    ("dealloca_device_event_id", "int"), ("device_lifetime_available", "bool"),
    ("device_lifetime_start_tick", "int"), ("device_lifetime_end_tick", "int"),
    ("device_lifetime_duration_ticks", "int"), ("device_lifetime_time_ns_available", "bool"),
    ("device_lifetime_duration_ns", "int"),
] + _BALANCE_LAYOUT("lifecycle") + _BALANCE_LAYOUT("materialized"))


# --- grouping and balances ----------------------------------------------------------------------

def _segments(group: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stable order by group; segment starts in that order; segment index of each sorted row."""
    order = np.argsort(group, kind="stable")
    g = group[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if len(g) else np.zeros(0, np.int64)
    seg = np.cumsum(np.r_[True, g[1:] != g[:-1]]) - 1 if len(g) else np.zeros(0, np.int64)
    return order, starts, seg


def _segmented_cumsum(values: np.ndarray, starts: np.ndarray, seg: np.ndarray) -> np.ndarray:
    total = np.cumsum(values)
    base = total[starts] - values[starts]
    return total - base[seg]


def _segmented_cummin(values: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Running minimum restarting at each segment (segments numbered in ascending order)."""
    # Rank so that every later segment ranks below all earlier ones; a global running minimum
    # of the ranks then never reaches back into an earlier segment.
    order = np.lexsort((values, -seg))
    rank = np.empty(len(values), np.int64)
    rank[order] = np.arange(len(values))
    return values[order[np.minimum.accumulate(rank)]]


class Balances:
    """Per-group balance columns (BALANCE_FIELDS), and the state each event found."""

    def __init__(self, count: int):
        self.columns = {name: np.zeros(count, np.uint64) for name in BALANCE_FIELDS}
        self.prev_count = None   # per input event: open count before it
        self.prev_bytes = None   # per input event: open bytes before it
        self.overflow_at = None  # input position of the first u64 overflow (exact path)

    def row(self, g: int, prefix: str) -> dict:
        return {f"{prefix}_{name}": int(self.columns[name][g]) for name in BALANCE_FIELDS}



def balances(group: np.ndarray, count: int, is_open: np.ndarray, length: np.ndarray,
             exact: bool = False, prev: bool = False) -> Balances:
    """Opens and closes (events in file order) applied to `count` balances; with `prev`, also
    the state each event found (`prev_count`, `prev_bytes`: two values per event, kept only
    where asked)."""
    if exact:
        return _balances_exact(group, count, is_open, length, prev)
    if native_enabled():
        return _balances_native(group, count, is_open, length, prev)
    out = Balances(count)
    n = len(group)
    if prev:
        out.prev_count = np.zeros(n, np.int64)
        out.prev_bytes = np.zeros(n, np.int64)
    if n == 0:
        return out
    order, starts, seg = _segments(group)
    ends = np.r_[starts[1:], n] - 1
    opened = is_open[order]
    closed = ~opened
    ln = length[order].astype(np.int64)
    walks = []
    for delta in (np.where(opened, 1, -1), np.where(opened, ln, -ln)):
        s = _segmented_cumsum(delta, starts, seg)
        after = s - np.minimum(_segmented_cummin(s, seg), 0)
        before = np.empty_like(after)
        before[1:] = after[:-1]
        before[starts] = 0
        walks.append((after, before))
    (count_after, count_before), (bytes_after, bytes_before) = walks
    over = closed & (ln > bytes_before)
    partial = closed & ((count_before == 0) | over)
    partial_bytes = np.where(over, ln - bytes_before, 0)
    g = group[order][starts]
    c = out.columns
    c["current_count"][g] = count_after[ends]
    c["high_water_count"][g] = np.maximum(np.maximum.reduceat(count_after, starts), 0)
    c["total_open_count"][g] = np.add.reduceat(opened.astype(np.int64), starts)
    c["total_close_count"][g] = np.add.reduceat(closed.astype(np.int64), starts)
    c["partial_close_count"][g] = np.add.reduceat(partial.astype(np.int64), starts)
    c["current_bytes"][g] = bytes_after[ends]
    c["high_water_bytes"][g] = np.maximum(np.maximum.reduceat(bytes_after, starts), 0)
    c["total_open_bytes"][g] = np.add.reduceat(np.where(opened, ln, 0), starts)
    c["total_close_bytes"][g] = np.add.reduceat(np.where(closed, ln, 0), starts)
    c["partial_close_bytes"][g] = np.add.reduceat(partial_bytes, starts)
    if prev:
        out.prev_count[order] = count_before
        out.prev_bytes[order] = bytes_before
    return out


def _balances_native(group, count, is_open, length, prev: bool) -> Balances:
    """The same balances as one loop over the events in C (_balances.c); lengths total below
    2**62, so no total can overflow."""
    ffi, lib = native_module()
    out = Balances(count)
    n = len(group)
    g = np.ascontiguousarray(group, np.int64)
    opened = np.ascontiguousarray(is_open, bool).view(np.uint8)
    ln = np.ascontiguousarray(length, np.uint64)
    table = np.zeros((count, len(BALANCE_FIELDS)), np.uint64)
    if prev:
        out.prev_count, out.prev_bytes = np.empty(n, np.int64), np.empty(n, np.int64)
    pointer = lambda a, t: ffi.cast(t, a.ctypes.data) if a is not None else ffi.NULL  # noqa: E731
    stop = lib.balances_run(pointer(g, "int64_t*"), pointer(opened, "uint8_t*"),
                            pointer(ln, "uint64_t*"), n, count, pointer(table, "uint64_t*"),
                            pointer(out.prev_count, "int64_t*"), pointer(out.prev_bytes, "int64_t*"))
    if stop != n:
        raise ValueError(f"balance group {int(g[stop])} outside 0..{count - 1}")
    for k, name in enumerate(BALANCE_FIELDS):
        out.columns[name] = np.ascontiguousarray(table[:, k])
    return out


def _balances_exact(group, count, is_open, length, prev: bool) -> Balances:
    """The same balances with Python integers; notes where a u64 total would first overflow."""
    limit = schema.U64_MAX
    out = Balances(count)
    state = [[0] * 10 for _ in range(count)]
    n = len(group)
    prev_count, prev_bytes = [0] * n, [0] * n
    names = BALANCE_FIELDS
    cur_c, hw_c, open_c, close_c, part_c, cur_b, hw_b, open_b, close_b, part_b = range(10)
    for i, (g, op, ln) in enumerate(zip(group.tolist(), is_open.tolist(), length.tolist())):
        s = state[g]
        prev_count[i], prev_bytes[i] = s[cur_c], s[cur_b]
        if op:
            s[open_c] += 1
            s[cur_c] += 1
            s[open_b] += ln
            s[cur_b] += ln
            s[hw_c] = max(s[hw_c], s[cur_c])
            s[hw_b] = max(s[hw_b], s[cur_b])
            bad = s[open_b] > limit or s[cur_b] > limit
        else:
            s[close_c] += 1
            s[close_b] += ln
            was_empty = s[cur_c] == 0
            s[cur_c] = max(s[cur_c] - 1, 0)
            extra = ln - s[cur_b] if ln > s[cur_b] else 0
            s[cur_b] = 0 if extra else s[cur_b] - ln
            if was_empty or extra:
                s[part_c] += 1
                s[part_b] += extra
            bad = s[close_b] > limit or s[part_b] > limit
        if bad and out.overflow_at is None:
            out.overflow_at = i
    for g, s in enumerate(state):
        for k, name in enumerate(names):
            out.columns[name][g] = min(s[k], limit)
    if prev:
        out.prev_count = np.array(prev_count, dtype=object)
        out.prev_bytes = np.array(prev_bytes, dtype=object)
    return out


def _type_index(rows: np.ndarray) -> np.ndarray:
    """Event types with every unknown type folded into 0 ("unknown")."""
    raw = rows["type"].astype(np.int64)
    return np.where(raw <= 12, raw, 0)


def matching(rows: np.ndarray, options: ReportOptions) -> np.ndarray:
    """Which events pass --filter (a glob over the type name) and --id (event or allocation)."""
    names = np.array([key_matches(name, options.filter) for name in TYPE_NAMES])
    matched = names[_type_index(rows)]
    if options.id >= 0:
        matched &= (rows["event_id"] == options.id) | (rows["allocation_id"] == options.id)
    return matched


def events_before(bundle: Bundle, record_index: int, options: ReportOptions) -> Columns:
    """The matched events IREE reads before failing in record `record_index`: every memory-event
    chunk before it, and the whole records at the start of that record when it is one."""
    size = schema.MEMORY_EVENT.itemsize
    pieces = []
    for c in bundle.chunk_indices("memory-events").tolist():
        if c > record_index:
            break
        payload = bytes(bundle.payload(c))
        o = 0
        while len(payload) - o >= size:
            length = int.from_bytes(payload[o:o + 4], "little")
            if length < size or length > len(payload) - o:
                break
            pieces.append(payload[o:o + size])
            o += length
    rows = np.frombuffer(b"".join(pieces), schema.MEMORY_EVENT)
    return Columns.where(rows, matching(rows, options))


# --- the accounting -----------------------------------------------------------------------------

class Accounting:
    """Devices, pools and allocations of the matched memory events (whole columns); with
    `devices_only`, the device counts and balances alone (no pool or allocation rows)."""

    def __init__(self, bundle: Bundle, options: ReportOptions, devices_only: bool = False):
        typed = bundle.locate("memory-events")  # most fields are read: gathered in one pass
        typed.load(*typed.content_type.dtype.names)
        rows = typed
        records = bundle.records
        chunk_flags = records["chunk_flags"][typed.chunk] if len(rows) else np.zeros(0, np.uint64)
        chunks = bundle.chunk_indices("memory-events")
        truncated_chunks = (records["chunk_flags"][chunks] & schema.CHUNK_FLAG_TRUNCATED) != 0
        self.filter = options.filter
        self.id_filter = options.id
        self.total_events = len(rows)
        self.truncated_chunks = int(truncated_chunks.sum())
        self.dropped_records = int(records["dropped_record_count"][chunks][truncated_chunks]
                                   .astype(object).sum())

        type_index = _type_index(rows)
        matched = matching(rows, options)
        self.index = np.flatnonzero(matched)
        self.chunk = typed.chunk[self.index]  # file record of each matched event
        self.events = ev = Columns(rows, None if matched.all() else self.index)
        self.matched_events = len(ev)
        self.truncated_matched_events = int(
            ((chunk_flags[self.index] & schema.CHUNK_FLAG_TRUNCATED) != 0).sum())
        self.t = t = type_index[self.index]
        flags = ev["flags"]
        reservation = (flags & F.MEMORY_POOL_RESERVATION) != 0
        self.overflow: tuple[int, int] | None = None  # (event position, accounting stage)
        self.exact = float(ev["length"].astype(np.float64).sum()) >= EXACT_BYTES_THRESHOLD
        self.length = ev["length"]

        opens = _OPENS[t] | ((t == POOL_RESERVE) & reservation)
        closes = _CLOSES[t]
        pool_kind = _POOL_KIND[t]
        alloc_kind = np.where((pool_kind == POOL_RESERVATION) & ~reservation, 0, pool_kind)
        pool_id = self._resolve_pool_ids(ev, alloc_kind)

        # Allocations first: a pool_release closes materialized bytes only while its own
        # reservation still has some open, which is that allocation's running state.
        in_alloc = np.flatnonzero(alloc_kind != 0)
        if devices_only:  # only the materialization walk below needs allocation groups
            in_alloc = in_alloc[np.isin(t[in_alloc], (POOL_MATERIALIZE, POOL_RELEASE))]
        alloc_group, alloc_first = group_ids(
            alloc_kind[in_alloc], ev["physical_device_ordinal"][in_alloc].astype(np.int64),
            ev["allocation_id"][in_alloc], pool_id[in_alloc])
        self.alloc_count = len(alloc_first)
        at = t[in_alloc]
        mat = np.flatnonzero((at == POOL_MATERIALIZE) | (at == POOL_RELEASE))
        walk = balances(alloc_group[mat], self.alloc_count, at[mat] == POOL_MATERIALIZE,
                        self.length[in_alloc][mat], self.exact, prev=True)
        close_materialization = np.zeros(len(ev), bool)
        releasing = at[mat] == POOL_RELEASE
        close_materialization[in_alloc[mat][releasing]] = (
            (walk.prev_count[releasing] != 0) | (walk.prev_bytes[releasing] != 0)).astype(bool)
        mat_open = t == POOL_MATERIALIZE
        mat_close = close_materialization  # only pool_release events can be set

        del walk, releasing, at, mat, type_index, chunk_flags, matched  # (peak memory)
        self._devices(ev, t, reservation, mat_close)
        if devices_only:  # explain's memory pressure: the device rows alone
            return
        self._pools(ev, t, flags, pool_kind, pool_id, opens, closes, mat_open, mat_close)
        del pool_kind, reservation
        self._allocations(ev, in_alloc, alloc_group, alloc_first, alloc_kind, pool_id, opens,
                          closes, mat_open, mat_close)

    # -- pieces ---------------------------------------------------------------------------------

    def _devices(self, ev: Columns, t: np.ndarray, reservation: np.ndarray,
                 mat_close: np.ndarray) -> None:
        """Per device: event counts per type and the six balances."""
        pdo = ev["physical_device_ordinal"].astype(np.int64)
        device_group, device_first = group_ids(pdo)
        self.device_ordinals = pdo[device_first]
        ndev = len(device_first)
        self.device_type_counts = np.bincount(device_group * 13 + t, minlength=ndev * 13) \
            .reshape(ndev, 13) if ndev else np.zeros((0, 13), np.int64)
        self.device_event_counts = np.bincount(device_group, minlength=ndev)
        self.device_balances = []
        for b in range(len(DEVICE_BALANCES)):
            open_types = [k for k, v in _DEVICE_OPEN.items() if v == b]
            close_types = [k for k, v in _DEVICE_CLOSE.items() if v == b]
            is_open = np.isin(t, open_types)
            if b == 1:
                is_open &= reservation
            is_close = mat_close.copy() if b == 2 else np.isin(t, close_types)
            sel = np.flatnonzero(is_open | is_close)
            bal = balances(device_group[sel], ndev, is_open[sel], self.length[sel], self.exact)
            self._check(bal, sel, 0)
            self.device_balances.append(bal)

    def _pools(self, ev: Columns, t, flags, pool_kind, pool_id, opens, closes, mat_open,
               mat_close) -> None:
        """Pools: one row per (kind, device, pool, memory type) of every event, plus the pool
        reservation row of each POOL_STATS sample, created right after the event's own row."""
        pdo = ev["physical_device_ordinal"].astype(np.int64)
        in_pool = np.flatnonzero(pool_kind != 0)
        stats = np.flatnonzero(((flags & F.MEMORY_POOL_STATS) != 0) & (ev["pool_id"] != 0))
        candidates = np.r_[in_pool, stats]
        position = np.r_[2 * in_pool, 2 * stats + 1]
        kinds = np.r_[pool_kind[in_pool], np.full(len(stats), POOL_RESERVATION)]
        pools_id = np.r_[pool_id[in_pool], ev["pool_id"][stats]]
        order = np.argsort(position, kind="stable")
        candidates, kinds, pools_id = candidates[order], kinds[order], pools_id[order]
        is_stats = np.r_[np.zeros(len(in_pool), bool), np.ones(len(stats), bool)][order]
        pool_group, pool_first = group_ids(
            kinds, pdo[candidates], pools_id, ev["memory_type"][candidates])
        npool = len(pool_first)
        self.pool_count = npool
        self.pool_kind = kinds[pool_first]
        self.pool_device = pdo[candidates[pool_first]]
        self.pool_id = pools_id[pool_first]
        self.pool_memory_type = ev["memory_type"][candidates[pool_first]]
        self.pool_usage = _or_reduce(pool_group, npool, ev["buffer_usage"][candidates])
        pg = pool_group[~is_stats]
        pe = candidates[~is_stats]
        self.pool_events = np.bincount(pg, minlength=npool)
        self.pool_waits = np.bincount(pg[t[pe] == POOL_WAIT], minlength=npool)
        self.pool_materializes = np.bincount(pg[t[pe] == POOL_MATERIALIZE], minlength=npool)
        sel = np.flatnonzero(opens[pe] | closes[pe])
        self.pool_lifecycle = balances(pg[sel], npool, opens[pe][sel],
                                       self.length[pe][sel], self.exact)
        self._check(self.pool_lifecycle, pe[sel], 1)
        sel = np.flatnonzero(mat_open[pe] | mat_close[pe])
        self.pool_materialized = balances(pg[sel], npool, mat_open[pe][sel],
                                          self.length[pe][sel], self.exact)
        self._check(self.pool_materialized, pe[sel], 1)
        self._pool_stats(pool_group[is_stats], npool, ev.take(candidates[is_stats]))

    def _resolve_pool_ids(self, ev: Columns, alloc_kind: np.ndarray) -> np.ndarray:
        """Queue allocations with pool_id 0 take the pool of the latest allocation of their id."""
        pool_id = ev["pool_id"].copy()
        queue = alloc_kind == QUEUE_ALLOCATION
        zero = queue & (pool_id == 0)
        if not zero.any():
            return pool_id
        pdo = ev["physical_device_ordinal"].tolist()
        aid = ev["allocation_id"].tolist()
        affected = {(pdo[i], aid[i]) for i in np.flatnonzero(zero).tolist()}
        latest: dict[tuple[int, int], int] = {}
        created: set[tuple[int, int, int]] = set()
        for i in np.flatnonzero(queue).tolist():
            key = (pdo[i], aid[i])
            if key not in affected:
                continue
            pool = int(pool_id[i]) or latest.get(key, 0)
            pool_id[i] = pool
            if (*key, pool) not in created:
                created.add((*key, pool))
                latest[key] = pool
        return pool_id

    def _check(self, bal: Balances, positions: np.ndarray, what: int) -> None:
        """Notes a u64 overflow; IREE fails at the first overflowing event (device accounting
        before pool before allocation accounting)."""
        if bal.overflow_at is None:
            return
        at = (int(positions[bal.overflow_at]), what)
        if self.overflow is None or at < self.overflow:
            self.overflow = at

    def overflow_error(self) -> AmdgpuCliError | None:
        if self.overflow is None:
            return None
        position, what = self.overflow
        event_id = int(self.events["event_id"][position])
        scope = ("", "pool ", "allocation ")[what]
        return AmdgpuCliError(f"memory {scope}accounting overflow for event_id={event_id}",
                              status="OUT_OF_RANGE")

    def _pool_stats(self, group: np.ndarray, count: int, samples: Columns) -> None:
        self.pool_stats_samples = np.bincount(group, minlength=count)
        names = ["pool_bytes_reserved", "pool_bytes_free", "pool_bytes_committed",
                 "pool_budget_limit", "pool_reservation_count", "pool_slab_count"]
        self.pool_stats = {n: np.zeros(count, np.uint64) for n in names}
        for n in ("pool_bytes_reserved_high_water", "pool_bytes_free_low_water",
                  "pool_bytes_committed_high_water", "pool_reservation_high_water_count",
                  "pool_slab_high_water_count"):
            self.pool_stats[n] = np.zeros(count, np.uint64)
        if len(group) == 0:
            return
        order, starts, _ = _segments(group)
        ends = np.r_[starts[1:], len(group)] - 1
        g = group[order][starts]
        s = samples.take(order)
        for n in names:
            self.pool_stats[n][g] = s[n][ends]
        for n, src in (("pool_bytes_reserved_high_water", "pool_bytes_reserved"),
                       ("pool_bytes_committed_high_water", "pool_bytes_committed"),
                       ("pool_reservation_high_water_count", "pool_reservation_count"),
                       ("pool_slab_high_water_count", "pool_slab_count")):
            self.pool_stats[n][g] = np.maximum.reduceat(s[src], starts)
        self.pool_stats["pool_bytes_free_low_water"][g] = np.minimum.reduceat(
            s["pool_bytes_free"], starts)

    def _allocations(self, ev, in_alloc, group, first, alloc_kind, pool_id, opens, closes,
                     mat_open, mat_close) -> None:
        count = len(first)

        def picked(name: str, positions: np.ndarray) -> np.ndarray:  # (-1 positions masked)
            return ev[name][in_alloc[positions]]

        def column(name: str) -> np.ndarray:  # one field of every allocation event (transient)
            return ev[name][in_alloc]

        self.alloc_kind = alloc_kind[in_alloc][first]
        self.alloc_device = picked("physical_device_ordinal", first)
        self.alloc_id = picked("allocation_id", first)
        self.alloc_pool = pool_id[in_alloc][first]
        at = self.t[in_alloc]
        self.alloc_events_count = np.bincount(group, minlength=count)
        self.alloc_waits = np.bincount(group[at == POOL_WAIT], minlength=count)
        self.alloc_materializes = np.bincount(group[at == POOL_MATERIALIZE], minlength=count)
        self.alloc_flags = _or_reduce(group, count, column("flags"))
        self.alloc_memory_type = _or_reduce(group, count, column("memory_type"))
        self.alloc_usage = _or_reduce(group, count, column("buffer_usage"))
        last = _last_where(group, count, np.ones(len(group), bool))
        # IREE takes the first event while first_event_id is still 0: the first event with a
        # nonzero id, or the last event when every id is 0.
        first_event = _first_where(group, count, column("event_id") != 0)
        first_event = np.where(first_event < 0, last, first_event)
        self.alloc_first_event_id = picked("event_id", first_event)
        self.alloc_last_event_id = picked("event_id", last)
        self.alloc_first_time = picked("host_time_ns", first_event)
        self.alloc_last_time = picked("host_time_ns", last)
        submitted = column("submission_id") != 0
        fs = _first_where(group, count, submitted)
        ls = _last_where(group, count, submitted)
        self.alloc_first_submission = np.where(fs >= 0, picked("submission_id", fs), 0)
        self.alloc_first_queue = np.where(fs >= 0, picked("queue_ordinal", fs), U32_MAX)
        self.alloc_last_submission = np.where(ls >= 0, picked("submission_id", ls), 0)
        self.alloc_last_queue = np.where(ls >= 0, picked("queue_ordinal", ls), U32_MAX)
        fb = _first_where(group, count, column("backing_id") != 0)
        self.alloc_backing = np.where(fb >= 0, picked("backing_id", fb), 0)
        sel = np.flatnonzero(opens[in_alloc] | closes[in_alloc])
        self.alloc_lifecycle = balances(group[sel], count, opens[in_alloc][sel],
                                        self.length[in_alloc[sel]], self.exact)
        self._check(self.alloc_lifecycle, in_alloc[sel], 2)
        sel = np.flatnonzero(mat_open[in_alloc] | mat_close[in_alloc])
        self.alloc_materialized = balances(group[sel], count, mat_open[in_alloc][sel],
                                           self.length[in_alloc[sel]], self.exact)
        self._check(self.alloc_materialized, in_alloc[sel], 2)
        lc, mc = self.alloc_lifecycle.columns, self.alloc_materialized.columns
        self.alloc_open_at_end = (lc["current_bytes"] != 0) | (mc["current_bytes"] != 0)
        self.partial_lifecycle_closes = int(lc["partial_close_count"].astype(object).sum()
                                            + mc["partial_close_count"].astype(object).sum())


def _or_reduce(group: np.ndarray, count: int, values: np.ndarray) -> np.ndarray:
    out = np.zeros(count, np.uint64)
    if len(group):
        order, starts, _ = _segments(group)
        out[group[order][starts]] = np.bitwise_or.reduceat(values[order].astype(np.uint64),
                                                           starts)
    return out


def _first_where(group: np.ndarray, count: int, mask: np.ndarray) -> np.ndarray:
    """Per group, the first row index where mask holds (-1 if none)."""
    out = np.full(count, -1, np.int64)
    rows = np.flatnonzero(mask)
    out[group[rows][::-1]] = rows[::-1]  # the last write wins: the first row
    return out


def _last_where(group: np.ndarray, count: int, mask: np.ndarray) -> np.ndarray:
    out = np.full(count, -1, np.int64)
    rows = np.flatnonzero(mask)
    out[group[rows]] = rows
    return out


# --- device lifetimes of queue allocations ------------------------------------------------------

class DeviceLifetimes:
    """Queue alloca/dealloca device events, joined to queue allocations (JSONL and --id only)."""

    def __init__(self, bundle: Bundle):
        from amdgpu_cli.profile.model import Model

        self.model = Model.build(bundle)
        typed = bundle.typed("queue-device-events")
        rows = typed.rows
        keep = np.flatnonzero((rows["type"] == QUEUE_EVENT_ALLOCA)
                              | (rows["type"] == QUEUE_EVENT_DEALLOCA))
        rows, chunks = rows[keep], typed.chunk[keep]
        self._check_queues(bundle, rows, chunks)
        # The lowest event id wins among events with the same key (IREE: sorted, lower bound).
        order = np.argsort(rows["event_id"], kind="stable")[::-1]
        self.events: dict[tuple, tuple[int, int, int]] = {}
        cols = [rows[n][order].tolist() for n in (
            "physical_device_ordinal", "queue_ordinal", "type", "submission_id",
            "allocation_id", "event_id", "start_tick", "end_tick")]
        for pdo, queue, kind, sub, aid, eid, start, end in zip(*cols):
            self.events[(pdo, queue, kind, sub, aid)] = (eid, start, end)

    def _check_queues(self, bundle: Bundle, rows: np.ndarray, chunks: np.ndarray) -> None:
        # IREE reads records in file order: a queue must be described before its events.
        queues = bundle.typed("queues")
        first: dict[tuple[int, int, int], int] = {}
        for key, chunk in zip(zip(queues.rows["physical_device_ordinal"].tolist(),
                                  queues.rows["queue_ordinal"].tolist(),
                                  queues.rows["stream_id"].tolist()), queues.chunk.tolist()):
            first.setdefault(key, chunk)
        if len(rows) == 0:
            return
        keys, inverse = np.unique(
            np.stack([rows["physical_device_ordinal"].astype(np.uint64),
                      rows["queue_ordinal"].astype(np.uint64), rows["stream_id"]], axis=1),
            axis=0, return_inverse=True)
        described_at = np.array([first.get(tuple(int(x) for x in k), -1) for k in keys])
        at = described_at[inverse.reshape(-1)]
        bad = np.flatnonzero((at < 0) | (chunks < at))
        if len(bad):
            r = rows[bad[0]]
            raise MissingMetadataError(
                "queue device event references missing queue metadata "
                f"device={int(r['physical_device_ordinal'])} queue={int(r['queue_ordinal'])} "
                f"stream={int(r['stream_id'])} submission={int(r['submission_id'])}",
                record_index=int(chunks[bad[0]]))

    def resolve(self, acc: Accounting) -> dict[str, list]:
        """Lifetime columns for every allocation row."""
        cols = _no_lifetimes(acc.alloc_count)
        if not self.events:
            return cols
        fits: dict[int, object] = {}
        queue_rows = np.flatnonzero(acc.alloc_kind == QUEUE_ALLOCATION).tolist()
        pdo, aid = acc.alloc_device.tolist(), acc.alloc_id.tolist()
        fsub, fq = acc.alloc_first_submission.tolist(), acc.alloc_first_queue.tolist()
        lsub, lq = acc.alloc_last_submission.tolist(), acc.alloc_last_queue.tolist()
        for i in queue_rows:
            alloca = self._find(pdo[i], fq[i], QUEUE_EVENT_ALLOCA, fsub[i], aid[i])
            dealloca = self._find(pdo[i], lq[i], QUEUE_EVENT_DEALLOCA, lsub[i], aid[i])
            cols["alloca"][i] = alloca[0] if alloca else 0
            cols["dealloca"][i] = dealloca[0] if dealloca else 0
            if not (_valid(alloca) and _valid(dealloca)) or dealloca[2] < alloca[1]:
                continue
            ticks = dealloca[2] - alloca[1]
            cols["available"][i] = True
            cols["start"][i], cols["end"][i], cols["ticks"][i] = alloca[1], dealloca[2], ticks
            if pdo[i] not in fits:
                fits[pdo[i]] = self.model.clock_fit(pdo[i])
            fit = fits[pdo[i]]
            ns = fit.ticks_to_ns(ticks) if fit is not None else None
            if ns is not None:
                cols["ns_available"][i] = True
                cols["ns"][i] = ns
        return cols

    def _find(self, pdo, queue, kind, submission, allocation_id):
        if submission == 0 or queue == U32_MAX:
            return None
        return self.events.get((pdo, queue, kind, submission, allocation_id))


def _valid(event) -> bool:
    return event is not None and event[1] != 0 and event[2] != 0 and event[2] >= event[1]


def _no_lifetimes(count: int) -> dict[str, list]:
    cols = {name: [0] * count for name in ("alloca", "dealloca", "start", "end", "ticks", "ns")}
    cols["available"] = [False] * count
    cols["ns_available"] = [False] * count
    return cols


# --- the report ---------------------------------------------------------------------------------

class MemoryReport:
    """Iterating gives the JSONL rows; `text_rows()` the rows the text view needs."""

    def __init__(self, bundle: Bundle, options: ReportOptions):
        self.bundle = bundle
        self.options = options

    def __iter__(self) -> Iterator[Mapping]:
        return Rows(self.parts())

    def parts(self) -> Iterator:
        """The JSONL rows as dicts and row blocks (what `jsonl.write_rows` renders)."""
        return self.rows(events=True, join_device_events=True, allocations=True)

    def text_rows(self) -> Iterator[Mapping]:
        """Summary, devices, pools; allocations only with --id (as iree-profile's text)."""
        by_id = self.options.id >= 0
        return Rows(self.rows(events=False, join_device_events=by_id, allocations=by_id))

    def rows(self, *, events: bool, join_device_events: bool,
             allocations: bool) -> Iterator[Mapping]:
        bundle = self.bundle
        try:
            acc = Accounting(bundle, self.options)
        except BundleFormatError as error:  # a torn memory-events chunk
            if events and error.record_index is not None:
                yield event_rows(events_before(bundle, error.record_index, self.options))
            raise
        # IREE reads the file once, record by record, and stops at the first failure: memory
        # accounting overflow, metadata the device-lifetime join rejects, or a broken record
        # chain. Rows for events read before it are out already.
        failures = []
        if acc.overflow is not None:
            position = acc.overflow[0]
            failures.append((int(acc.chunk[position]), position, acc.overflow_error()))
        lifetimes = None
        try:
            if join_device_events:
                lifetimes = DeviceLifetimes(bundle)
            else:
                bundle.check()
        except BundleFormatError as error:
            record = len(bundle.records) if error.record_index is None else error.record_index
            failures.append((record, int(np.searchsorted(acc.chunk, record)), error))
        if failures:
            _, stop, error = min(failures, key=lambda f: (f[0], f[1]))
            if events:
                yield event_rows(acc.events, stop)
            raise error
        if events:
            yield event_rows(acc.events)
        yield summary_row(acc)
        yield from device_rows(acc)
        yield from pool_rows(acc)
        if allocations:
            yield allocation_rows(acc, lifetimes)


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> MemoryReport:
    return MemoryReport(bundle, options)


def event_rows(ev: Columns, stop: int | None = None) -> RowBlock:
    """The `memory_event` rows of the matched events (the first `stop` of them)."""
    if stop is not None and stop < len(ev):
        ev = ev.take(np.arange(stop))
    if len(ev) == 0:
        return EVENT_LAYOUT.empty()
    t = ev["type"].astype(np.int64)
    flags = ev["flags"]
    names = ("event_id", "type", "flags", "result", "host_time_ns", "allocation_id", "pool_id",
             "backing_id", "submission_id", "physical_device_ordinal", "queue_ordinal",
             "frontier_entry_count", "memory_type", "buffer_usage", "offset", "length",
             "alignment", "pool_bytes_reserved", "pool_bytes_free", "pool_bytes_committed",
             "pool_budget_limit", "pool_reservation_count", "pool_slab_count")
    columns = {name: ev[name] for name in names}
    columns["event_type_value"] = columns.pop("type")
    return EVENT_LAYOUT.block(
        event_type=Strings(np.where(t <= 12, t, 0), TYPE_NAMES),
        externally_owned=(flags & F.MEMORY_EXTERNALLY_OWNED) != 0,
        pool_stats_available=(flags & F.MEMORY_POOL_STATS) != 0, **columns)


def summary_row(acc: Accounting) -> dict:
    return {"type": "memory_summary", "filter": acc.filter, "id_filter": acc.id_filter,
            "total_events": acc.total_events, "matched_events": acc.matched_events,
            "truncated_chunks": acc.truncated_chunks, "dropped_records": acc.dropped_records,
            "truncated_matched_events": acc.truncated_matched_events,
            "devices": len(acc.device_ordinals), "pools": acc.pool_count,
            "allocation_lifecycles": acc.alloc_count,
            "open_allocation_lifecycles": int(acc.alloc_open_at_end.sum()),
            "partial_lifecycle_closes": acc.partial_lifecycle_closes}


def device_rows(acc: Accounting) -> Iterator[dict]:
    for d, pdo in enumerate(acc.device_ordinals.tolist()):
        row = {"type": "memory_device", "physical_device_ordinal": pdo,
               "events": int(acc.device_event_counts[d])}
        for name, event_type in DEVICE_COUNTS:
            row[name] = int(acc.device_type_counts[d, event_type])
        for prefix, bal in zip(DEVICE_BALANCES, acc.device_balances):
            row.update(bal.row(d, prefix))
        yield row


def pool_rows(acc: Accounting) -> Iterator[dict]:
    s = acc.pool_stats
    for p in range(acc.pool_count):
        row = {"type": "memory_pool", "kind": KIND_NAMES[int(acc.pool_kind[p])],
               "physical_device_ordinal": int(acc.pool_device[p]), "pool_id": int(acc.pool_id[p]),
               "memory_type": int(acc.pool_memory_type[p]),
               "buffer_usage": int(acc.pool_usage[p]), "events": int(acc.pool_events[p]),
               "waits": int(acc.pool_waits[p]), "materializes": int(acc.pool_materializes[p])}
        row.update(acc.pool_lifecycle.row(p, "lifecycle"))
        row.update(acc.pool_materialized.row(p, "materialized"))
        samples = int(acc.pool_stats_samples[p])
        row["pool_stats_available"] = samples != 0
        row["pool_stats_samples"] = samples
        for name in ("pool_bytes_reserved", "pool_bytes_reserved_high_water", "pool_bytes_free",
                     "pool_bytes_free_low_water", "pool_bytes_committed",
                     "pool_bytes_committed_high_water", "pool_budget_limit",
                     "pool_reservation_count", "pool_reservation_high_water_count",
                     "pool_slab_count", "pool_slab_high_water_count"):
            row[name] = int(s[name][p])
        yield row


def allocation_rows(acc: Accounting, lifetimes: DeviceLifetimes | None) -> RowBlock:
    n = acc.alloc_count
    if n == 0:
        return ALLOCATION_LAYOUT.empty()
    life = lifetimes.resolve(acc) if lifetimes is not None else _no_lifetimes(n)
    first_time = acc.alloc_first_time.astype(np.int64)
    last_time = acc.alloc_last_time.astype(np.int64)
    duration = np.where(last_time >= first_time, last_time - first_time, 0)
    balances = {f"{prefix}_{name}": bal.columns[name]
                for prefix, bal in (("lifecycle", acc.alloc_lifecycle),
                                    ("materialized", acc.alloc_materialized))
                for name in BALANCE_FIELDS}
    return ALLOCATION_LAYOUT.block(
        kind=Strings(acc.alloc_kind, KIND_NAMES), physical_device_ordinal=acc.alloc_device,
        allocation_id=acc.alloc_id, pool_id=acc.alloc_pool, backing_id=acc.alloc_backing,
        externally_owned=(acc.alloc_flags & F.MEMORY_EXTERNALLY_OWNED) != 0,
        memory_type=acc.alloc_memory_type, buffer_usage=acc.alloc_usage,
        events=acc.alloc_events_count, waits=acc.alloc_waits,
        materializes=acc.alloc_materializes, open_at_end=acc.alloc_open_at_end,
        first_event_id=acc.alloc_first_event_id, last_event_id=acc.alloc_last_event_id,
        first_host_time_ns=first_time, last_host_time_ns=last_time, duration_ns=duration,
        first_submission_id=acc.alloc_first_submission,
        last_submission_id=acc.alloc_last_submission,
        first_queue_ordinal=acc.alloc_first_queue, last_queue_ordinal=acc.alloc_last_queue,
        alloca_device_event_id=life["alloca"], dealloca_device_event_id=life["dealloca"],
        device_lifetime_available=life["available"],
        device_lifetime_start_tick=life["start"], device_lifetime_end_tick=life["end"],
        device_lifetime_duration_ticks=life["ticks"],
        device_lifetime_time_ns_available=life["ns_available"],
        device_lifetime_duration_ns=life["ns"], **balances)

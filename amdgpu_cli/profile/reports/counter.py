"""`counter`: hardware counter sets, counters and statistics of their samples (iree-profile counter).

Rows, in order (reference ireeprof.md section 4.9):

- with `--counter_samples`, one `counter_sample` row per matched (sample, counter), in file order;
- one `counter_summary` row;
- one `counter_set` row per counter set and one `counter` row per counter, first-seen order;
- one `counter_group` row per aggregate group, in the order groups were first matched.

A group is keyed by (device, queue, stream, scope, counter set, counter, command buffer, executable,
function). A sample's value for one counter is the sum (as doubles, in slice order) of the raw
values the counter owns, `values[sample_value_offset : +sample_value_count]`; groups keep samples,
raw value count, min, max, sum and a running (Welford) mean and variance, whose square root is taken
with IREE's fixed 32-step Newton iteration so large variances print the same digits.

Matching: `--id` keeps samples whose sample, dispatch event, submission or command-buffer id equals
it; `--filter` keeps a (sample, counter) pair when the glob matches the function key (`unattributed`
for samples with no executable or function), the counter set name, the block name or the counter
name. A sample counts as matched when any of its counters is.

Failures (DATA_LOSS, exit 1), in the order IREE meets them: the metadata model; counter-set and
counter records (strings must fill the record, a counter must follow its counter set in file order);
then per sample in file order: value bytes that do not fill the record, an unknown counter set, a
value count that differs from the set's, a function that cannot be resolved (checked before the id
filter), and for id-matched samples a set without counters or a matched counter whose slice runs
past the values. With `--counter_samples` the rows of earlier samples are already out when a sample
fails, as with iree-profile. Duplicate counter sets and counters: the first record wins.

Source: IREE runtime/src/iree/tooling/profile/counter.c.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from amdgpu_cli.errors import BundleFormatError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.model import Model
from amdgpu_cli.profile.options import ReportOptions, key_matches
from amdgpu_cli.profile.reader import Bundle, Typed
from amdgpu_cli.profile.reports.toolkit import RowBlock, RowLayout, Rows, Strings, group_ids, iree_sqrt

U32_MAX = schema.U32_MAX
SAMPLE_HEAD = schema.COUNTER_SAMPLE.itemsize
F = schema.Flags


def unit_name(unit: int) -> str:
    return schema.COUNTER_UNIT_NAMES.get(unit, "unknown")


def scope_name(scope: int) -> str:
    return schema.COUNTER_SCOPE_NAMES.get(scope, "unknown")


# --- metadata -------------------------------------------------------------------------------------

@dataclass
class CounterSet:
    counter_set_id: int
    physical_device_ordinal: int
    flags: int
    counter_count: int          # as recorded; the counters actually seen are `counters`
    sample_value_count: int
    name: str
    counters: list["Counter"] = field(default_factory=list)


@dataclass
class Counter:
    counter_set_id: int
    counter_ordinal: int
    physical_device_ordinal: int
    flags: int
    unit: int
    sample_value_offset: int
    sample_value_count: int
    block: str
    name: str
    description: str


@dataclass
class Catalog:
    """Counter sets and counters, first record of each key wins, in first-seen order."""

    sets: dict[int, CounterSet] = field(default_factory=dict)
    counters: list[Counter] = field(default_factory=list)

    @classmethod
    def read(cls, bundle: Bundle) -> "Catalog":
        catalog = cls()
        sets = bundle.typed("counter-sets")
        counters = bundle.typed("counters")
        # Both families in file order: a counter may only refer to a set seen before it.
        order = sorted([(int(c), 0, i) for i, c in enumerate(sets.chunk.tolist())]
                       + [(int(c), 1, i) for i, c in enumerate(counters.chunk.tolist())])
        seen: set[tuple[int, int]] = set()
        for chunk, kind, i in order:
            if kind == 0:
                catalog._add_set(sets, i, chunk)
            else:
                catalog._add_counter(counters, i, chunk, seen)
        return catalog

    def _add_set(self, typed, i: int, chunk: int) -> None:
        row = typed.rows[i]
        n = int(row["name_length"])
        if n != int(row["record_length"]) - schema.COUNTER_SET.itemsize:
            raise BundleFormatError("counter set name length is inconsistent with record length",
                                    record_index=chunk)
        set_id = int(row["counter_set_id"])
        if set_id in self.sets:
            return
        self.sets[set_id] = CounterSet(
            counter_set_id=set_id, physical_device_ordinal=int(row["physical_device_ordinal"]),
            flags=int(row["flags"]), counter_count=int(row["counter_count"]),
            sample_value_count=int(row["sample_value_count"]), name=typed.strings(i, n)[0])

    def _add_counter(self, typed, i: int, chunk: int, seen: set) -> None:
        row = typed.rows[i]
        lengths = (int(row["block_name_length"]), int(row["name_length"]),
                   int(row["description_length"]))
        if sum(lengths) != int(row["record_length"]) - schema.COUNTER.itemsize:
            raise BundleFormatError("counter string lengths are inconsistent with record length",
                                    record_index=chunk)
        set_id, ordinal = int(row["counter_set_id"]), int(row["counter_ordinal"])
        counter_set = self.sets.get(set_id)
        if counter_set is None:
            raise BundleFormatError(
                "counter references missing counter-set metadata "
                f"counter_set={set_id} counter_ordinal={ordinal}", record_index=chunk)
        if (set_id, ordinal) in seen:
            return
        seen.add((set_id, ordinal))
        block, name, description = typed.strings(i, *lengths)
        counter = Counter(
            counter_set_id=set_id, counter_ordinal=ordinal,
            physical_device_ordinal=int(row["physical_device_ordinal"]), flags=int(row["flags"]),
            unit=int(row["unit"]), sample_value_offset=int(row["sample_value_offset"]),
            sample_value_count=int(row["sample_value_count"]), block=block, name=name,
            description=description)
        self.counters.append(counter)
        counter_set.counters.append(counter)


# --- aggregation ----------------------------------------------------------------------------------

# Sample fields that, with the counter, key an aggregate group.
GROUP_FIELDS = ("physical_device_ordinal", "queue_ordinal", "stream_id", "scope", "executable_id",
                "function_ordinal", "command_buffer_id")


@dataclass
class Group:
    where: dict[str, int]        # GROUP_FIELDS of the group's samples
    counter_set: CounterSet
    counter: Counter
    function_key: str
    samples: int = 0
    raw_values: int = 0
    minimum: float = 0.0
    mean: float = 0.0
    m2: float = 0.0
    maximum: float = 0.0
    total: float = 0.0
    first_sample_id: int = 0
    last_sample_id: int = 0

    def add_all(self, values: list[float], sample_ids: list[int]) -> None:
        """Accumulates values in order, exactly as IREE's running aggregate does."""
        n, mean, m2, total = self.samples, self.mean, self.m2, self.total
        lo = self.minimum if n else float("inf")
        hi = self.maximum if n else float("-inf")
        for v in values:
            n += 1
            if v < lo:
                lo = v
            if v > hi:
                hi = v
            total += v
            delta = v - mean
            mean += delta / n
            m2 += delta * (v - mean)
        self.samples, self.mean, self.m2, self.total = n, mean, m2, total
        self.minimum, self.maximum = lo, hi
        self.raw_values += len(values) * self.counter.sample_value_count
        if self.first_sample_id == 0:
            # IREE takes the first nonzero sample id as the group's first.
            nonzero = [s for s in sample_ids if s != 0]
            if nonzero:
                self.first_sample_id = nonzero[0]
        if sample_ids:
            self.last_sample_id = sample_ids[-1]

    @property
    def stddev(self) -> float:
        return float(iree_sqrt(self.m2 / (self.samples - 1) if self.samples > 1 else 0.0))

    def row(self) -> dict:
        w, c = self.where, self.counter
        return {
            "type": "counter_group", "physical_device_ordinal": w["physical_device_ordinal"],
            "queue_ordinal": w["queue_ordinal"], "stream_id": w["stream_id"],
            "scope": scope_name(w["scope"]), "scope_value": w["scope"],
            "counter_set_id": c.counter_set_id, "counter_set": self.counter_set.name,
            "counter_ordinal": c.counter_ordinal, "counter": c.name, "block": c.block,
            "unit": unit_name(c.unit), "command_buffer_id": w["command_buffer_id"],
            "executable_id": w["executable_id"], "function_ordinal": w["function_ordinal"],
            "key": self.function_key,
            "samples": self.samples, "raw_values": self.raw_values,
            "min": self.minimum if self.samples else 0.0,
            "avg": self.mean if self.samples else 0.0, "stddev": self.stddev,
            "max": self.maximum if self.samples else 0.0, "sum": self.total,
            "first_sample_id": self.first_sample_id, "last_sample_id": self.last_sample_id,
        }


# --- samples --------------------------------------------------------------------------------------

class _SampleTable:
    """Vectorised per-sample facts: which set, which key, whether it matches, whether it fails."""

    def __init__(self, bundle: Bundle, model: Model, catalog: Catalog, options: ReportOptions,
                 typed: Typed):
        self.bundle, self.model, self.catalog, self.options = bundle, model, catalog, options
        self.typed = typed
        rows = typed.rows
        self.rows = rows
        n = self.n = len(rows)
        flags = bundle.records["chunk_flags"][typed.chunk] if n else np.zeros(0, np.uint64)
        self.truncated = (flags & np.uint64(schema.CHUNK_FLAG_TRUNCATED)) != 0

        # Counter sets as dense indices; -1 when the sample names an unknown set.
        self.set_list = list(catalog.sets.values())
        position = {s.counter_set_id: i for i, s in enumerate(self.set_list)}
        ids, inverse = np.unique(rows["counter_set_id"], return_inverse=True)
        lookup = np.array([position.get(int(x), -1) for x in ids.tolist()], np.int64)
        self.set_index = lookup[inverse.reshape(-1)] if n else np.zeros(0, np.int64)

        self.counter_matches = {id(c): _counter_matches(s, c, options.filter)
                                for s in self.set_list for c in s.counters}
        self._resolve_keys()
        self._find_failure()

    def _resolve_keys(self) -> None:
        """Function key per sample (index into `keys`); a failed resolution is kept for later."""
        rows, n = self.rows, self.n
        self.keys: list[str] = ["unattributed"]
        self.key_errors: dict[int, BundleFormatError] = {}
        self.key_index = np.zeros(n, np.int64)
        attributed = (rows["executable_id"] != 0) & (rows["function_ordinal"] != U32_MAX)
        where = np.nonzero(attributed)[0]
        if len(where):
            columns = [rows[name][where] for name in
                       ("physical_device_ordinal", "executable_id", "function_ordinal")]
            inverse, first = group_ids(*columns)
            base = len(self.keys)
            for j, head in enumerate(first.tolist()):
                d, e, f = (int(c[head]) for c in columns)
                try:
                    self.keys.append(self.model.dispatch_key(d, e, f))
                except BundleFormatError as error:
                    self.keys.append("")
                    self.key_errors[base + j] = error
            self.key_index[where] = base + inverse
        key_match = np.array([key_matches(k, self.options.filter) for k in self.keys], bool)
        self.key_match = key_match[self.key_index]

    def _find_failure(self) -> None:
        """The first sample that fails, and why (IREE stops there)."""
        rows, n, opts = self.rows, self.n, self.options
        sets = self.set_list
        set_ok = self.set_index >= 0
        safe = np.where(set_ok, self.set_index, 0)
        set_values = np.array([s.sample_value_count for s in sets] or [0], np.int64)[safe]
        set_counters = np.array([len(s.counters) for s in sets] or [0], np.int64)[safe]
        # Per set: does it hold a counter whose slice runs past the values, in total and among
        # counters that match the filter on their own names?
        bad_any = np.array([any(_bad_layout(s, c) for c in s.counters) for s in sets] or [False])
        bad_named = np.array([any(_bad_layout(s, c) and self.counter_matches[id(c)]
                                  for c in s.counters) for s in sets] or [False])
        self.any_named = np.array([any(self.counter_matches[id(c)] for c in s.counters)
                                   for s in sets] or [False])[safe]

        count = rows["sample_value_count"].astype(np.int64)
        if opts.id < 0:
            self.id_match = np.ones(n, bool)
        else:
            want = np.uint64(opts.id)
            self.id_match = ((rows["sample_id"] == want) | (rows["dispatch_event_id"] == want)
                             | (rows["submission_id"] == want)
                             | (rows["command_buffer_id"] == want))
        key_failed = np.zeros(len(self.keys), bool)
        key_failed[list(self.key_errors)] = True
        checks = [
            rows["record_length"].astype(np.int64) - SAMPLE_HEAD != 8 * count,
            ~set_ok,
            set_ok & (count != set_values),
            key_failed[self.key_index],
            self.id_match & set_ok & (set_counters == 0),
            self.id_match & set_ok & np.where(self.key_match, bad_any[safe], bad_named[safe]),
        ]
        failed = np.logical_or.reduce(checks) if n else np.zeros(0, bool)
        hits = np.nonzero(failed)[0]
        self.fail_at = int(hits[0]) if len(hits) else n
        self.fail_reason = (next(k for k, c in enumerate(checks) if c[self.fail_at])
                            if len(hits) else None)

    # --- the failing sample ---------------------------------------------------------------------

    def failure(self) -> tuple[list[tuple[Counter, float, list[int]]], BundleFormatError]:
        """Pairs IREE still handles for the failing sample before its error, and the error."""
        i, reason = self.fail_at, self.fail_reason
        row = self.rows[i]
        sample_id, set_id = int(row["sample_id"]), int(row["counter_set_id"])
        where = f"sample={sample_id} counter_set={set_id}"
        if reason == 0:
            return [], BundleFormatError(
                "counter sample value count is inconsistent with record length")
        if reason == 1:
            return [], BundleFormatError(
                f"counter sample references missing counter-set metadata {where}")
        if reason == 2:
            return [], BundleFormatError(
                f"counter sample value count does not match counter-set metadata {where}")
        if reason == 3:
            return [], self.key_errors[int(self.key_index[i])]
        if reason == 4:
            return [], BundleFormatError(
                f"counter sample references counter set with no counter metadata {where}")
        counter_set = self.set_list[int(self.set_index[i])]
        values = np.frombuffer(self.typed.tail(i), "<u8")
        done = []
        for counter in counter_set.counters:
            if not (self.key_match[i] or self.counter_matches[id(counter)]):
                continue
            if _bad_layout(counter_set, counter):
                return done, BundleFormatError(
                    "counter sample value layout is inconsistent with counter metadata "
                    f"counter_set={counter.counter_set_id} "
                    f"counter_ordinal={counter.counter_ordinal}")
            raw = values[counter.sample_value_offset:
                         counter.sample_value_offset + counter.sample_value_count]
            done.append((counter, _sum(raw.reshape(1, -1))[0], raw.tolist()))
        raise AssertionError("failing sample did not fail")  # pragma: no cover

    # --- the good samples -----------------------------------------------------------------------

    def pairs(self, with_raw: bool) -> "_Pairs":
        """Every matched (sample, counter) pair before the failing sample, in IREE's order."""
        limit = self.fail_at
        live = self.id_match[:limit]
        pairs = _Pairs()
        for s, counter_set in enumerate(self.set_list):
            members = np.nonzero(live & (self.set_index[:limit] == s))[0]
            if not len(members) or not counter_set.counters:
                continue
            matrix = self._values(members, counter_set.sample_value_count)
            key_match = self.key_match[members]
            for position, counter in enumerate(counter_set.counters):
                keep = key_match | self.counter_matches[id(counter)]
                if not keep.any():
                    continue
                rows = np.nonzero(keep)[0]
                lo = counter.sample_value_offset
                raw = matrix[rows, lo:lo + counter.sample_value_count]
                pairs.add(members[rows], position, counter, _sum(raw),
                          raw.tolist() if with_raw else None)
        pairs.finish()
        return pairs

    def _values(self, members: np.ndarray, count: int) -> np.ndarray:
        """The raw u64 values of the given samples (all of one set), one row per sample."""
        data = self.bundle.data
        base = self.typed.offsets[members].astype(np.int64) + SAMPLE_HEAD
        matrix = np.empty((len(members), count), np.uint64)
        byte = np.arange(8, dtype=np.int64)
        for j in range(count):
            cells = data[(base + 8 * j)[:, None] + byte]
            matrix[:, j] = np.ascontiguousarray(cells).view("<u8").reshape(-1)
        return matrix


def _counter_matches(counter_set: CounterSet, counter: Counter, glob: str) -> bool:
    return (key_matches(counter_set.name, glob) or key_matches(counter.block, glob)
            or key_matches(counter.name, glob))


def _bad_layout(counter_set: CounterSet, counter: Counter) -> bool:
    total = counter_set.sample_value_count
    return (counter.sample_value_offset > total
            or total - counter.sample_value_offset < counter.sample_value_count)


def _sum(raw: np.ndarray) -> np.ndarray:
    """Row sums as IREE computes them: each u64 converted to double, added left to right."""
    out = np.zeros(raw.shape[0], np.float64)
    for j in range(raw.shape[1]):
        out += raw[:, j].astype(np.float64)
    return out


class _Pairs:
    """Matched (sample, counter) pairs, built one counter of one set (a "part") at a time, then
    put in IREE's order: by sample, then by the counter's place in its set."""

    def __init__(self) -> None:
        self.counters: list[Counter] = []
        self.raw: list[list | None] = []
        self._parts: list[tuple] = []

    def add(self, samples, position, counter, values, raw) -> None:
        self._parts.append((samples, position, values))
        self.counters.append(counter)
        self.raw.append(raw)

    def finish(self) -> None:
        parts = self._parts
        if not parts:
            self.sample = self.part = self.index = np.zeros(0, np.int64)
            self.value = np.zeros(0, np.float64)
            return
        sample = np.concatenate([p[0] for p in parts])
        position = np.concatenate([np.full(len(p[0]), p[1], np.int64) for p in parts])
        part = np.concatenate([np.full(len(p[0]), k, np.int64) for k, p in enumerate(parts)])
        index = np.concatenate([np.arange(len(p[0]), dtype=np.int64) for p in parts])
        value = np.concatenate([p[2] for p in parts])
        order = np.lexsort((position, sample))
        self.sample, self.part, self.index = sample[order], part[order], index[order]
        self.value = value[order]

    def __len__(self) -> int:
        return len(self.sample)


def _groups(table: _SampleTable, pairs: _Pairs) -> list[Group]:
    """Aggregate groups of the matched pairs, in first-matched order."""
    if not len(pairs):
        return []
    rows = {name: table.rows[name][pairs.sample] for name in GROUP_FIELDS + ("sample_id",)}
    columns = [pairs.part] + [rows[name] for name in GROUP_FIELDS]
    group_of_pair, first = group_ids(*columns)
    by_group = np.argsort(group_of_pair, kind="stable")
    bounds = np.searchsorted(group_of_pair[by_group], np.arange(len(first) + 1))
    sample_ids = rows["sample_id"]

    groups = []
    for g in range(len(first)):
        pick = by_group[bounds[g]:bounds[g + 1]]
        head = int(pick[0])
        counter = pairs.counters[int(pairs.part[head])]
        where = {name: int(rows[name][head]) for name in GROUP_FIELDS}
        group = Group(where=where, counter_set=table.catalog.sets[counter.counter_set_id],
                      counter=counter,
                      function_key=table.keys[int(table.key_index[pairs.sample[head]])])
        group.add_all(pairs.value[pick].tolist(), sample_ids[pick].tolist())
        groups.append(group)
    return groups


SAMPLE_ROW = RowLayout("counter_sample", [
    ("sample_id", "int"), ("counter_set_id", "int"), ("counter_set", "str"),
    ("counter_ordinal", "int"), ("counter", "str"), ("block", "str"), ("unit", "str"),
    ("scope", "str"), ("scope_value", "int"), ("dispatch_event_id", "int"),
    ("submission_id", "int"), ("command_buffer_id", "int"), ("command_index", "int"),
    ("executable_id", "int"), ("function_ordinal", "int"), ("key", "str"),
    ("physical_device_ordinal", "int"), ("queue_ordinal", "int"), ("stream_id", "int"),
    ("flags", "int"), ("device_tick_range_present", "bool"), ("device_tick_domain", "=device_tick"),
    ("start_tick", "int"), ("end_tick", "int"), ("duration_ticks", "int"),
    ("device_tick_range_valid", "bool"), ("value", "float"), ("values", "json"),
])


def _sample_rows(table: _SampleTable, pairs: _Pairs) -> RowBlock:
    """One `counter_sample` row per matched (sample, counter) pair."""
    raw = [pairs.raw[k][j] for k, j in zip(pairs.part.tolist(), pairs.index.tolist())]
    return _sample_block(table, pairs.sample, pairs.counters, pairs.part, pairs.value, raw)


def _sample_block(table: _SampleTable, sample: np.ndarray, counters: list, part: np.ndarray,
                  value, raw: list) -> RowBlock:
    """`counter_sample` rows: sample `sample[i]` (a row of table.rows) read through counter
    `counters[part[i]]`, with its value and raw values."""
    r = table.rows[sample]
    start, end = r["start_tick"], r["end_tick"]
    has_range = (r["flags"] & F.SAMPLE_DEVICE_TICK_RANGE) != 0
    valid = has_range & (start != 0) & (end != 0) & (end >= start)
    sets = table.catalog.sets
    values = ["[" + ",".join(map(str, v)) + "]" for v in raw]
    return SAMPLE_ROW.block(
        sample_id=r["sample_id"], counter_set_id=r["counter_set_id"],
        counter_set=Strings(part, [sets[c.counter_set_id].name for c in counters]),
        counter_ordinal=np.array([c.counter_ordinal for c in counters] or [0], np.int64)[part],
        counter=Strings(part, [c.name for c in counters]),
        block=Strings(part, [c.block for c in counters]),
        unit=Strings(part, [unit_name(c.unit) for c in counters]),
        scope=Strings.enum(r["scope"], schema.COUNTER_SCOPE_NAMES), scope_value=r["scope"],
        dispatch_event_id=r["dispatch_event_id"], submission_id=r["submission_id"],
        command_buffer_id=r["command_buffer_id"], command_index=r["command_index"],
        executable_id=r["executable_id"], function_ordinal=r["function_ordinal"],
        key=Strings(table.key_index[sample], table.keys),
        physical_device_ordinal=r["physical_device_ordinal"], queue_ordinal=r["queue_ordinal"],
        stream_id=r["stream_id"], flags=r["flags"], device_tick_range_present=has_range,
        start_tick=start, end_tick=end, duration_ticks=np.where(valid, end - start, 0),
        device_tick_range_valid=valid, value=np.asarray(value, np.float64),
        values=Strings.of(values))


def _readable_samples(bundle: Bundle, bad_chunk: int) -> Typed:
    """The sample records IREE reads before a torn one: whole chunks before `bad_chunk`, then the
    records of `bad_chunk` up to the one that breaks."""
    ct = schema.BY_SUFFIX["counter-samples"]
    size = ct.dtype.itemsize
    data = bundle.data
    chunks = [int(c) for c in bundle.chunk_indices("counter-samples") if c <= bad_chunk]
    starts = bundle.payload_offsets()
    offsets, owners = [], []
    for c in chunks:
        base, length = int(starts[c]), int(bundle.records["payload_length"][c])
        o = 0
        while length - o >= size:
            record_length = int(data[base + o:base + o + 4].view("<u4")[0])
            if record_length < size or record_length > length - o:
                break
            offsets.append(base + o)
            owners.append(c)
            o += record_length
    at = np.array(offsets, np.int64)
    raw = data[at[:, None] + np.arange(size)] if len(at) else np.zeros((0, size), np.uint8)
    rows = np.ascontiguousarray(raw).view(ct.dtype).reshape(-1)
    return Typed(bundle, ct, rows, np.array(owners, np.int64), at.astype(np.uint64))


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> Rows:
    return Rows(_parts(bundle, options))


def _parts(bundle: Bundle, options: ReportOptions) -> Iterator:
    bundle.check()
    model = Model.build(bundle)
    catalog = Catalog.read(bundle)
    try:
        samples, torn = bundle.typed("counter-samples"), None
    except BundleFormatError as error:
        if error.record_index is None:
            raise
        # IREE handles (and prints) every sample before the torn record, then fails.
        samples, torn = _readable_samples(bundle, error.record_index), error
    table = _SampleTable(bundle, model, catalog, options, samples)
    pairs = table.pairs(with_raw=options.counter_samples)
    if options.counter_samples:
        yield _sample_rows(table, pairs)
    if table.fail_at == table.n and torn is not None:
        raise torn
    if table.fail_at < table.n:
        done, error = table.failure()
        if options.counter_samples and done:
            n = len(done)
            yield _sample_block(table, np.full(n, table.fail_at), [c for c, _, _ in done],
                                np.arange(n), [float(v) for _, v, _ in done],
                                [raw for _, _, raw in done])
        raise error

    limit = table.fail_at
    matched = table.id_match & (table.key_match | table.any_named)
    groups = _groups(table, pairs)
    yield {"type": "counter_summary", "filter": options.filter, "id_filter": options.id,
           "mode": "samples" if options.counter_samples else "aggregate",
           "total_samples": limit, "matched_samples": int(matched.sum()),
           "truncated_matched_samples": int((matched & table.truncated).sum()),
           "counter_sets": len(catalog.sets), "counters": len(catalog.counters),
           "aggregate_groups": len(groups)}
    for s in catalog.sets.values():
        yield {"type": "counter_set", "counter_set_id": s.counter_set_id,
               "physical_device_ordinal": s.physical_device_ordinal, "flags": s.flags,
               "counter_count": s.counter_count, "sample_value_count": s.sample_value_count,
               "name": s.name}
    for c in catalog.counters:
        yield {"type": "counter", "counter_set_id": c.counter_set_id,
               "counter_ordinal": c.counter_ordinal,
               "physical_device_ordinal": c.physical_device_ordinal, "flags": c.flags,
               "unit": unit_name(c.unit), "unit_value": c.unit,
               "sample_value_offset": c.sample_value_offset,
               "sample_value_count": c.sample_value_count, "block": c.block, "name": c.name,
               "description": c.description}
    for group in groups:
        yield group.row()

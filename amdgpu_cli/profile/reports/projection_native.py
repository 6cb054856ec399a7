"""The aggregate tables (or the event rows) of `dispatch`, `executable` and `command` in one native
pass over the events.

`build(path, mode, options)` maps the bundle and has `_projection.c` fill, from the events, the
same tables `Projection.aggregate` builds from whole columns, while a `MetadataView` keeps the
records that are not events (the metadata model is built from it, without numpy). Without
`--filter` the view and the events come from one walk, and the queues, functions and command
buffers the events named are checked against the model afterwards; with it, the model comes
first and the pass is told each function's key verdict per device, the queues and, in `command`
mode, the command buffers. The result is a `Pass`: the aggregates the reports print as they print
the exact `Projection`'s, in lists (numpy columns for tables past LIST_GROUPS groups). With
`--dispatch_events` the pass keeps every matched event in its own array instead of tables, and
`Pass.event_rows` renders them from there (rows.Strided columns), device events' durations fitted
once the model's clocks are known; the pass's memory lives as long as the rows.

It returns None, and the caller runs the exact path (`Projection.build` over the whole bundle),
when the native module is not built or switched off, for `queue` mode, when the record chain or
the metadata is broken, and when the pass meets
anything that path reports as an error (a torn event record, missing metadata, a total past its
limit): that path gives IREE's message for it.

Sources: IREE runtime/src/iree/tooling/profile/{dispatch.c,projection.c}.
"""

from __future__ import annotations

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.profile import layouts
from amdgpu_cli.profile.metadata_view import Declined, MetadataView, skip_mask
from amdgpu_cli.profile.model import Model
from amdgpu_cli.profile.native import (content_name_table, native_enabled, native_module,
                                       open_mapped)
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.mapped import page_window
from amdgpu_cli.profile.names import FAMILIES
from amdgpu_cli.profile.reports.aggregates import (COMMAND, DISPATCH, DISPATCH_EVENT_ROW,
                                                   EXECUTABLE, HOST_DISPATCH_EVENT_ROW, ID_FIELD,
                                                   Aggregates, Counts, Table, iree_sqrt, values)
from amdgpu_cli.profile.reports.rows import RowBlock, Strided, Strings

# Event families the pass reads itself: the metadata view leaves their chunks out.
EVENT_FAMILIES = ("dispatch-events", "queue-events", "queue-device-events", "host-execution-events",
                  "command-region-events", "memory-events", "event-relationships",
                  "counter-samples", "device-metric-samples", "executable-traces")
_DEVICE_FUNCTION, _DEVICE_EXECUTION, _DEVICE_SUBMISSION, _HOST_FUNCTION, _HOST_EXECUTION = range(5)
# The tables each report reads; the pass leaves the others out (the execution and submission
# tables hold a group per command buffer execution or submission: most of a pass's work).
FUNCTION_TABLES = (_DEVICE_FUNCTION, _HOST_FUNCTION)
TABLES = {DISPATCH: FUNCTION_TABLES, EXECUTABLE: FUNCTION_TABLES,
          COMMAND: FUNCTION_TABLES + (_DEVICE_EXECUTION, _HOST_EXECUTION)}
_EXECUTION_KEYS = ("command_buffer_id", "submission_id", "pdo", "queue", "stream")
_SUBMISSION_KEYS = ("pdo", "queue", "stream", "submission_id")
_FUNCTION_KEYS = ("pdo", "executable_id", "function_ordinal")
# Tables with more groups than this come back as numpy columns (numpy is worth importing for
# them, and the reports render many rows from whole columns); smaller ones as lists.
LIST_GROUPS = 16384


class Pass(Aggregates):
    """The aggregates of one native pass, and the mapped file's metadata view it was joined with
    (`view.data`: the file, mapped while this object lives). With --dispatch_events, the pass's
    matched events too (`event_rows`), held in the pass's memory while this object lives."""

    def __init__(self, view: MetadataView, model: Model, mode: str, options: ReportOptions):
        super().__init__(model, mode, options)
        self.view = view
        self._events = None  # (the pass's state, each function row's key) with --dispatch_events

    def event_rows(self) -> list[RowBlock]:
        """The matched dispatch_event and host_dispatch_event rows in file order: a block per
        run of one kind, read in place from the pass's array of events."""
        state, keys = self._events
        ffi = native_module()[0]
        n, size = state.event_count, ffi.sizeof("projection_event_t")
        if not n:
            return []
        base = int(ffi.cast("uintptr_t", state.events))
        hosts = memoryview(ffi.buffer(state.events, n * size)).cast("B")[
            ffi.offsetof("projection_event_t", "host")::size].tobytes()  # one byte per event
        blocks, start = [], 0
        while start < n:  # a run of one kind ends where the other kind's byte first appears
            host = hosts[start]
            end = hosts.find(b"\0" if host else b"\1", start)
            end = n if end < 0 else end
            blocks.append(_event_block(ffi, state, base + start * size, end - start, bool(host),
                                       keys))
            start = end
        return blocks


def build(path: str, mode: str, options: ReportOptions) -> Pass | None:
    """The aggregates of the bundle at `path` from the native pass, or None (exact path)."""
    if not eligible(mode, options):
        return None
    ffi, lib = native_module()
    owner = ffi.new("projection_t*")
    # The events of --dispatch_events are read in place: the pass's memory goes with the rows.
    state = ffi.gc(owner, lambda _, owner=owner: lib.projection_free(owner))
    return passes(path, mode, options, state,
                  scan=lambda *args: lib.projection_scan(*args, state),
                  run=lambda *args: lib.projection_run(*args, state))


def eligible(mode: str, options: ReportOptions) -> bool:
    """Whether the pass can give `mode`'s tables (or events) under `options` (else: the exact
    path)."""
    return native_enabled() and mode in (DISPATCH, EXECUTABLE, COMMAND) and options.id < 1 << 63


def passes(path: str, mode: str, options: ReportOptions, state, scan, run,
           tables: tuple[int, ...] | None = None) -> Pass | None:
    """The aggregates from the native pass over the bundle at `path`: `state` is the pass's
    `projection_t*`; `scan(...)` is `projection_scan` (the record table and the events in one
    pass) and `run(...)` `projection_run` (the events alone), or a pass that does the same and
    more (explain's), each called with their arguments but the state. `tables`: those filled
    (default: what `mode`'s report reads; the others are left empty). None: exact path."""
    ffi, lib = native_module()
    _settings(state, mode, options)
    wanted = () if options.dispatch_events else TABLES[mode] if tables is None else tables
    state.tables_left_out = sum(1 << t for t in range(5) if t not in wanted)
    state.keep_events = options.dispatch_events
    mapped = open_mapped(path)
    if mapped is None:
        return None
    try:
        if options.filter in ("", "*"):
            return _one_pass(ffi, state, mapped, mode, options, scan)
        return _two_passes(ffi, lib, state, mapped, mode, options, run)
    except (Declined, AmdgpuCliError):
        return None


def _settings(state, mode: str, options: ReportOptions) -> None:
    state.id = options.id if options.id >= 0 else -1
    state.device_id_offset = _field_offset(layouts.DISPATCH_EVENT, ID_FIELD[mode])
    state.host_id_offset = _field_offset(layouts.HOST_EXECUTION_EVENT, ID_FIELD[mode])
    state.check_command_buffers = mode == COMMAND


def _field_offset(layout: layouts.Layout, name: str) -> int:
    return next(offset for offset, _, field in layout.fields if field == name)


def _one_pass(ffi, state, mapped, mode: str, options: ReportOptions, scan) -> Pass | None:
    """Without --filter every event with known metadata is matched, so the metadata view and the
    events come from one pass: the pass notes the queues, functions and command buffers the
    events name, checked against the model afterwards."""
    state.deferred = 1
    view = MetadataView.walk(*mapped, scan=scan, skip=skip_mask(EVENT_FAMILIES))
    model = Model.build(view)
    s = state
    if (any(tuple(s.queues.rows[3 * i:3 * i + 3]) not in model.queues
            for i in range(s.queues.count))
            or any(s.buffers.rows[i] not in model.command_buffers for i in range(s.buffers.count))):
        return None
    keys: list[str] = []
    index: dict[str, int] = {}
    key_of: dict[tuple[int, int, int], int] = {}
    row_keys: list[str] = []
    for i in range(s.functions.count):
        pdo, executable, ordinal = s.functions.rows[4 * i:4 * i + 3]
        function = model.functions.get((executable, ordinal))
        if function is None:
            return None
        key = function.key(pdo)
        row_keys.append(key)
        key_of[(pdo, executable, ordinal)] = index.setdefault(key, len(keys))
        if len(index) > len(keys):
            keys.append(key)
    return _aggregates(ffi, state, view, model, mode, options, keys, row_keys, key_of)


def _two_passes(ffi, lib, state, mapped, mode: str, options: ReportOptions, native_run
                ) -> Pass | None:
    """With --filter the pass needs each function's verdict first: the metadata view, then the
    events."""
    data, first, length = mapped
    view = MetadataView.walk(data, first, length, skip=skip_mask(EVENT_FAMILIES))
    model = Model.build(view)
    known = _know(lib, state, model, mode, options)
    if known is None:
        return None
    keys, row_keys = known
    names, name_lengths = content_name_table(ffi)
    src = ffi.from_buffer("uint8_t[]", data)
    try:
        rc = native_run(src, length, first, names, name_lengths, len(FAMILIES),
                        page_window(len(data)))
    finally:
        ffi.release(src)
    if rc != 0:
        return None
    return _aggregates(ffi, state, view, model, mode, options, keys, row_keys)


def _know(lib, state, model: Model, mode: str, options: ReportOptions
          ) -> tuple[list[str], list[str]] | None:
    """Hands the model's functions (key verdicts per device), queues and command buffers to the
    pass: the distinct keys that pass `--filter`, by the index the pass keeps per group, and the
    key of each function row the pass holds (in the order they were handed over)."""
    keys: list[str] = []
    row_keys: list[str] = []
    index: dict[str, int] = {}
    devices = sorted({pdo for pdo, _, _ in model.queues})
    failed = 0
    for (executable, ordinal), function in model.functions.items():
        for pdo in devices:
            key = function.key(pdo)
            row_keys.append(key)
            k = -1
            if options.matches(key):
                k = index.setdefault(key, len(keys))
                if k == len(keys):
                    keys.append(key)
            failed |= lib.projection_know_function(state, pdo, executable, ordinal, k)
    for pdo, queue, stream in model.queues:
        failed |= lib.projection_know_queue(state, pdo, queue, stream)
    if mode == COMMAND:
        for cid in model.command_buffers:
            failed |= lib.projection_know_command_buffer(state, cid)
    return None if failed else (keys, row_keys)


def _groups(ffi, table):
    """A pass table's groups, as (count, column): `column(name)` reads one field of every group
    (a list, or a numpy column past LIST_GROUPS groups), `column(name, i)`
    element i of an array field, `code=` another type for the field's bits ("q": int64)."""
    n = table.count
    size = ffi.sizeof("projection_group_t")
    raw = memoryview(ffi.buffer(table.groups, n * size)) if n else memoryview(b"")
    if n > LIST_GROUPS:
        import numpy as np  # noqa: PLC0415 - only for large tables

        def read(code: str, offset: int):
            return np.frombuffer(raw, np.dtype(code))[offset::size // _WIDTH[code]].copy()
    else:
        def read(code: str, offset: int):
            return raw.cast(code)[offset::size // _WIDTH[code]].tolist() if n else []

    def column(name: str, i: int = 0, code: str | None = None):
        offset = ffi.offsetof("projection_group_t", name)
        kind = code or _FIELD_CODES.get(name, "Q")
        return read(kind, offset // _WIDTH[kind] + i)

    return n, column


_WIDTH = {"Q": 8, "q": 8, "d": 8, "I": 4}
_FIELD_CODES = {"mean": "d", "m2": "d", "key_index": "q", "last_workgroup_count": "I",
                "last_workgroup_size": "I"}


def _minus(a, b):
    return [x - y for x, y in zip(a, b)] if isinstance(a, list) else a - b


def _triples(column, n: int):
    """[x, y, z] per group of a 3-element u32 field."""
    parts = [column(i) for i in range(3)]
    if isinstance(parts[0], list):
        return [list(t) for t in zip(*parts)]
    import numpy as np  # noqa: PLC0415 - a large table's columns are numpy already

    return np.stack(parts, axis=1) if n else np.zeros((0, 3), np.uint32)


def _timing(groups, host: bool, key_names: tuple[str, ...]) -> Table:
    """The columns `projection._timing_table` gives (plus the group keys), from a pass table."""
    n, column = groups
    count, valid = column("count", code="q"), column("valid", code="q")
    columns = {"count": count, "valid": valid, "invalid": _minus(count, valid)}
    for name in ("earliest", "latest", "min", "max", "total"):
        columns[name] = column(name, code="q" if host else "Q")
    for i, name in enumerate(key_names):
        columns[name] = column("k", i)
    return Table(columns)


def _function_table(groups, host: bool, keys: list[str], key_of: dict | None) -> Table:
    n, column = groups
    table = _timing(groups, host, _FUNCTION_KEYS)
    if key_of is None:
        index = values(column("key_index"))
    else:  # one pass: keys were found after it, per (device, executable, function)
        index = [key_of[k] for k in zip(*(values(column("k", i)) for i in range(3)))]
    stddev = [iree_sqrt(m / (v - 1)) if v > 1 else 0.0
              for m, v in zip(values(column("m2")), values(table["valid"]))]
    mean = column("mean")
    if not isinstance(mean, list):  # numpy columns: this one too
        import numpy as np  # noqa: PLC0415

        stddev = np.array(stddev, np.float64)
    table.columns.update(
        key=[keys[k] for k in index],
        last_workgroup_count=_triples(lambda i: column("last_workgroup_count", i), n),
        last_workgroup_size=_triples(lambda i: column("last_workgroup_size", i), n),
        mean=mean, stddev=stddev)
    if host:
        _tiles(table, groups)
    return table


def _tiles(table: Table, groups) -> None:
    _, column = groups
    table.columns["tile_count"] = column("tile_count")
    table.columns["tile_duration_sum_ns"] = column("tile_duration_sum_ns", code="q")


def _aggregates(ffi, state, view: MetadataView, model: Model, mode: str, options: ReportOptions,
                keys: list[str], row_keys: list[str], key_of: dict | None = None
                ) -> Pass:
    p = Pass(view, model, mode, options)
    if options.dispatch_events:
        lib = native_module()[1]
        for pdo in model.devices:
            fit = model.clock_fit(pdo)
            if fit is not None and pdo <= 0xFFFFFFFF:
                lib.projection_events_fit(state, pdo, fit.tick_span, fit.time_span_ns)
        p._events = (state, row_keys)
    s = state
    p.device_counts = Counts(s.device_total, s.device_matched, s.device_valid,
                             s.device_matched - s.device_valid)
    p.host_counts = Counts(s.host_total, s.host_matched, s.host_valid,
                           s.host_matched - s.host_valid)
    groups = [_groups(ffi, s.tables[i]) for i in range(5)]
    p.dispatch_groups = _function_table(groups[_DEVICE_FUNCTION], False, keys, key_of)
    p.command_groups = _timing(groups[_DEVICE_EXECUTION], False, _EXECUTION_KEYS)
    p.submission_groups = _timing(groups[_DEVICE_SUBMISSION], False, _SUBMISSION_KEYS)
    p.host_groups = _function_table(groups[_HOST_FUNCTION], True, keys, key_of)
    p.host_command_groups = _timing(groups[_HOST_EXECUTION], True, _EXECUTION_KEYS)
    _tiles(p.host_command_groups, groups[_HOST_EXECUTION])
    return p


# --dispatch_events rows: each key but `key` and the event field it reads (None: the same name).
_DEVICE_EVENT_FIELDS = {"start_tick": "start", "end_tick": "end", "duration_ticks": "duration"}
_HOST_EVENT_FIELDS = {"start_host_time_ns": "start", "end_host_time_ns": "end"}
_SIGNED = {"start", "end", "duration_ns", "tile_duration_sum_ns"}  # host spans: int64


def _event_block(ffi, state, address: int, count: int, host: bool, keys: list[str]) -> RowBlock:
    """A run of one kind of event, `count` from `address` in the pass's array, as a row block."""
    layout = HOST_DISPATCH_EVENT_ROW if host else DISPATCH_EVENT_ROW
    renamed = _HOST_EVENT_FIELDS if host else _DEVICE_EVENT_FIELDS
    size = ffi.sizeof("projection_event_t")
    fields = dict(ffi.typeof("projection_event_t").fields)
    columns = {}
    for key in layout.kinds:
        name = "function" if key == "key" else renamed.get(key, key)
        f = fields[name]
        triple = f.type.kind == "array"
        column = Strided(ffi, address + f.offset, count, size,
                         ffi.sizeof(f.type.item if triple else f.type),
                         signed=host and name in _SIGNED, triple=triple, keep=state)
        columns[key] = Strings(column, keys) if key == "key" else column
    return layout.block(**columns)

"""The aggregate tables of `dispatch`, `executable` and `command` in one native pass over the events.

`build(path, mode, options)` opens the bundle without its event chunks (`Bundle.open(without=)`:
the record table and the metadata model stay small) and has `_projection.c` fill, from the
events, the same tables `Projection.aggregate` builds from whole columns. Without `--filter` the
record table and the events come from one pass, and the queues, functions and command buffers
the events named are checked against the model afterwards; with it, the model comes first and
the pass is told each function's key verdict per device, the queues and, in `command` mode, the
command buffers. The result is a `Projection` the reports print as they print the exact one.

It returns None, and the caller runs the exact path (`Projection.build` over the whole bundle),
when the native module is not built or switched off, for `--dispatch_events` and `queue` mode
(per-event rows), when the record chain or the metadata is broken, and when the pass meets
anything that path reports as an error (a torn event record, missing metadata, a total past its
limit): that path gives IREE's message for it.

Sources: IREE runtime/src/iree/tooling/profile/{dispatch.c,projection.c}.
"""

from __future__ import annotations

import numpy as np

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.model import Model
from amdgpu_cli.profile.native import content_name_table, native_enabled, native_module
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports.projection import (_ID_FIELD, COMMAND, DISPATCH, EXECUTABLE,
                                                   Counts, Projection, Table)
from amdgpu_cli.profile.reports.toolkit import iree_sqrt

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


def build(path: str, mode: str, options: ReportOptions) -> Projection | None:
    """The projection of the bundle at `path` with its aggregate tables, or None (exact path)."""
    if not eligible(mode, options):
        return None
    ffi, lib = native_module()
    state = ffi.new("projection_t*")
    try:
        return passes(path, mode, options, state,
                      scan=lambda *args: lib.projection_scan(*args, state),
                      run=lambda *args: lib.projection_run(*args, state))
    finally:
        lib.projection_free(state)


def eligible(mode: str, options: ReportOptions) -> bool:
    """Whether the pass can give `mode`'s tables under `options` (else: the exact path)."""
    return (native_enabled() and mode in (DISPATCH, EXECUTABLE, COMMAND)
            and not options.dispatch_events and options.id < 1 << 63)


def passes(path: str, mode: str, options: ReportOptions, state, scan, run,
           tables: tuple[int, ...] | None = None) -> Projection | None:
    """The projection from the native pass over the bundle at `path`: `state` is the pass's
    `projection_t*`; `scan(...)` is `projection_scan` (the record table and the events in one
    pass) and `run(...)` `projection_run` (the events alone), or a pass that does the same and
    more (explain's), each called with their arguments but the state. `tables`: those filled
    (default: what `mode`'s report reads; the others are left empty). None: exact path."""
    ffi, lib = native_module()
    _settings(state, mode, options)
    wanted = TABLES[mode] if tables is None else tables
    state.tables_left_out = sum(1 << t for t in range(5) if t not in wanted)
    if options.filter in ("", "*"):
        return _one_pass(ffi, state, path, mode, options, scan)
    return _two_passes(ffi, lib, state, path, mode, options, run)


def _settings(state, mode: str, options: ReportOptions) -> None:
    state.id = options.id if options.id >= 0 else -1
    state.device_id_offset = schema.DISPATCH_EVENT.fields[_ID_FIELD[mode]][1]
    state.host_id_offset = schema.HOST_EXECUTION_EVENT.fields[_ID_FIELD[mode]][1]
    state.check_command_buffers = mode == COMMAND


def _one_pass(ffi, state, path: str, mode: str, options: ReportOptions, native_scan
              ) -> Projection | None:
    """Without --filter every event with known metadata is matched, so the metadata view and the
    events come from one pass: the pass notes the queues, functions and command buffers the
    events name, checked against the model afterwards."""
    state.deferred = 1
    declined = []

    def scan(*args):
        code = native_scan(*args)
        if code == 1 and args[-2][0] < args[-3]:  # stopped with room left: the pass declined
            declined.append(True)
            return 0
        return code

    bundle = Bundle.open(path, without=EVENT_FAMILIES, scan=scan)
    if declined or bundle.error is not None:
        return None
    try:
        model = Model.build(bundle)
    except AmdgpuCliError:
        return None
    s = state
    if (any(tuple(s.queues.rows[3 * i:3 * i + 3]) not in model.queues
            for i in range(s.queues.count))
            or any(s.buffers.rows[i] not in model.command_buffers for i in range(s.buffers.count))):
        return None
    keys: list[str] = []
    index: dict[str, int] = {}
    key_of: dict[tuple[int, int, int], int] = {}
    for i in range(s.functions.count):
        pdo, executable, ordinal = s.functions.rows[4 * i:4 * i + 3]
        function = model.functions.get((executable, ordinal))
        if function is None:
            return None
        key = function.key(pdo)
        key_of[(pdo, executable, ordinal)] = index.setdefault(key, len(keys))
        if len(index) > len(keys):
            keys.append(key)
    return _projection(ffi, state, bundle, model, mode, options, keys, key_of)


def _two_passes(ffi, lib, state, path: str, mode: str, options: ReportOptions, native_run
                ) -> Projection | None:
    """With --filter the pass needs each function's verdict first: the metadata view, then the
    events."""
    bundle = Bundle.open(path, without=EVENT_FAMILIES)
    if bundle.error is not None:
        return None
    try:
        model = Model.build(bundle)
    except AmdgpuCliError:
        return None
    keys = _know(lib, state, model, mode, options)
    if keys is None:
        return None
    names, name_lengths = content_name_table(ffi)
    data = ffi.from_buffer("uint8_t[]", bundle.data)
    try:
        rc = native_run(data, bundle.logical_length, bundle.first_record_offset, names,
                        name_lengths, len(schema.CONTENT_TYPES), bundle.page_window)
    finally:
        ffi.release(data)
    if rc != 0:
        return None
    return _projection(ffi, state, bundle, model, mode, options, keys)


def _know(lib, state, model: Model, mode: str, options: ReportOptions) -> list[str] | None:
    """Hands the model's functions (key verdicts per device), queues and command buffers to the
    pass; the distinct keys that pass `--filter`, by the index the pass keeps per group."""
    keys: list[str] = []
    index: dict[str, int] = {}
    devices = sorted({pdo for pdo, _, _ in model.queues})
    failed = 0
    for (executable, ordinal), function in model.functions.items():
        for pdo in devices:
            key = function.key(pdo)
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
    return None if failed else keys


def _groups(ffi, table) -> np.ndarray:
    """A pass table's groups as a structured array over the pass's memory (not a copy: the
    tables built from it copy every column they keep, before the pass's memory is freed)."""
    layout = np.dtype({
        "names": ["k", "count", "valid", "earliest", "latest", "min", "max", "total", "tile_count",
                  "tile_duration_sum_ns", "mean", "m2", "last_workgroup_count",
                  "last_workgroup_size", "key_index"],
        "formats": [("<u8", (5,)), "<u8", "<u8", "<u8", "<u8", "<u8", "<u8", "<u8", "<u8", "<u8",
                    "<f8", "<f8", ("<u4", (3,)), ("<u4", (3,)), "<i8"],
        "offsets": [ffi.offsetof("projection_group_t", name) for name in (
            "k", "count", "valid", "earliest", "latest", "min", "max", "total", "tile_count",
            "tile_duration_sum_ns", "mean", "m2", "last_workgroup_count", "last_workgroup_size",
            "key_index")],
        "itemsize": ffi.sizeof("projection_group_t"),
    })
    n = table.count
    if n == 0:
        return np.zeros(0, layout)
    return np.frombuffer(ffi.buffer(table.groups, n * layout.itemsize), layout)


def _timing(g: np.ndarray, host: bool, key_names: tuple[str, ...]) -> Table:
    """The columns `_timing_table` gives (plus the group keys), from a pass table."""
    values = np.int64 if host else np.uint64
    count = g["count"].astype(np.int64)
    valid = g["valid"].astype(np.int64)
    columns = {"count": count, "valid": valid, "invalid": count - valid}
    for name in ("earliest", "latest", "min", "max", "total"):
        columns[name] = g[name].copy().view(values)
    for i, name in enumerate(key_names):
        columns[name] = g["k"][:, i].copy()
    return Table(columns)


def _function_table(g: np.ndarray, host: bool, keys: list[str], key_of: dict | None) -> Table:
    table = _timing(g, host, _FUNCTION_KEYS)
    n = table["valid"]
    if key_of is None:
        index = g["key_index"].tolist()
    else:  # one pass: keys were found after it, per (device, executable, function)
        index = [key_of[tuple(k)] for k in g["k"][:, :3].tolist()]
    table.columns.update(
        key=[keys[k] for k in index],
        last_workgroup_count=g["last_workgroup_count"].copy(),
        last_workgroup_size=g["last_workgroup_size"].copy(),
        mean=g["mean"].copy(),
        stddev=iree_sqrt(np.where(n > 1, g["m2"] / np.maximum(n - 1, 1), 0.0)))
    if host:
        _tiles(table, g)
    return table


def _tiles(table: Table, g: np.ndarray) -> None:
    table.columns["tile_count"] = g["tile_count"].copy()
    table.columns["tile_duration_sum_ns"] = g["tile_duration_sum_ns"].copy().view(np.int64)


def _projection(ffi, state, bundle: Bundle, model: Model, mode: str, options: ReportOptions,
                keys: list[str], key_of: dict | None = None) -> Projection:
    p = Projection(bundle, model, mode, options)
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

"""`command`: command buffers, their recorded operations and their executions.

Rows, as `iree-profile command --format=jsonl` prints them: `command_summary`; `command_buffer` rows
(`--id` selects one command buffer id); `command_operation` rows whose op name or key matches
`--filter` (all operations in file order, or only the selected buffer's); `command_execution` rows
(device dispatches grouped by command buffer, submission, device, queue and stream) and
`command_host_execution` rows (the same for host dispatch spans). Every dispatch with a command
buffer id must name a described command buffer (real local-sync bundles do not: DATA_LOSS, as
iree-profile). With `--dispatch_events`: the event rows, then a `dispatch_summary` (mode `events`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from amdgpu_cli.profile.jsonl import Rows
from amdgpu_cli.profile.names import COMMAND_OP_NAMES, Flags
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reports import projection_native
from amdgpu_cli.profile.reports.aggregates import COMMAND, HOST_TIMING, Aggregates
from amdgpu_cli.profile.reports.rows import RowBlock, RowLayout

if TYPE_CHECKING:
    from amdgpu_cli.profile.reader import Bundle


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> Rows:
    from amdgpu_cli.profile.reports.projection import Projection

    return Rows(_parts(Projection.build(bundle, COMMAND, options), options))


def report_file(path: str, options: ReportOptions = ReportOptions()) -> Rows | None:
    """The rows from one native pass over the events (`projection_native`), or None where the
    exact path (`report` over a whole Bundle) must run."""
    p = projection_native.build(path, COMMAND, options)
    return None if p is None else Rows(_parts(p, options))


def _parts(p: Aggregates, options: ReportOptions) -> Iterator:
    if options.dispatch_events:
        yield from p.event_rows()
        yield p.dispatch_summary_row()
        return
    model = p.model
    if options.id >= 0:
        buffer = model.command_buffers.get(options.id)
        operations = buffer.operations if buffer is not None else []
    else:
        operations = model.command_operations
    matched = []
    for op in operations:
        name = COMMAND_OP_NAMES.get(int(op["type"]), "unknown")
        key = model.operation_key(op)
        if options.matches(name) or options.matches(key):
            matched.append((op, name, key))
    d, h = p.device_counts, p.host_counts
    yield {"type": "command_summary", "filter": options.filter,
           "command_buffers": len(model.command_buffers), "executions": len(p.command_groups),
           "host_executions": len(p.host_command_groups),
           "command_operations": len(model.command_operations),
           "matched_command_operations": len(matched), "matched_dispatches": d.matched,
           "valid_dispatches": d.valid, "invalid_dispatches": d.invalid,
           "matched_host_dispatches": h.matched, "valid_host_dispatches": h.valid,
           "invalid_host_dispatches": h.invalid}
    for cid, buffer in model.command_buffers.items():
        if options.id >= 0 and cid != options.id:
            continue
        r = buffer.record
        yield {"type": "command_buffer", "command_buffer_id": cid,
               "physical_device_ordinal": int(r["physical_device_ordinal"]),
               "mode": int(r["mode"]), "command_categories": int(r["command_categories"]),
               "queue_affinity": int(r["queue_affinity"])}
    for op, name, key in matched:
        yield operation_row(op, name, key)
    yield from execution_rows(p)
    yield host_execution_rows(p)


def operation_row(op, name: str, key: str) -> dict:
    flags = int(op["flags"])
    return {"type": "command_operation", "command_buffer_id": int(op["command_buffer_id"]),
            "command_index": int(op["command_index"]), "op": name, "flags": flags,
            "block_structure": bool(flags & Flags.OP_BLOCK_STRUCTURE),
            "block_ordinal": int(op["block_ordinal"]),
            "block_command_ordinal": int(op["block_command_ordinal"]), "key": key,
            "executable_id": int(op["executable_id"]),
            "function_ordinal": int(op["function_ordinal"]),
            "binding_count": int(op["binding_count"]),
            "workgroup_count": list(op["workgroup_count"]),
            "workgroup_size": list(op["workgroup_size"]),
            "source_ordinal": int(op["source_ordinal"]),
            "target_ordinal": int(op["target_ordinal"]),
            "source_offset": int(op["source_offset"]),
            "target_offset": int(op["target_offset"]), "length": int(op["length"]),
            "target_block_ordinal": int(op["target_block_ordinal"]),
            "alternate_block_ordinal": int(op["alternate_block_ordinal"])}


def execution_rows(p: Aggregates) -> Iterator[dict]:
    t = p.command_groups
    for g in range(len(t)):
        timing = p.submission_timing(t, g)
        yield {"type": "command_execution", "command_buffer_id": int(t["command_buffer_id"][g]),
               "submission_id": int(t["submission_id"][g]),
               "physical_device_ordinal": int(t["pdo"][g]),
               "queue_ordinal": int(t["queue"][g]), "stream_id": int(t["stream"][g]),
               "dispatches": int(t["count"][g]), "valid": int(t["valid"][g]),
               "invalid": int(t["invalid"][g]), "span_ticks": timing["span_ticks"],
               "total_dispatch_ticks": int(t["total"][g]),
               "clock_fit_available": timing["has_clock_fit"],
               "total_dispatch_time_ns_available": timing["has_total_ns"],
               "span_ns": timing["span_ns"], "total_dispatch_ns": timing["total_dispatch_ns"]}


def host_execution_rows(p: Aggregates) -> RowBlock:
    """The command_host_execution rows: a block over the table's columns (numpy, or plain lists
    from a small table of the native pass)."""
    t = p.host_command_groups
    if not len(t):
        return HOST_EXECUTION_ROW.empty()
    valid = t["valid"]
    columns = {key: t[name] for key, name in _HOST_EXECUTION_COLUMNS}
    if isinstance(valid, list):
        columns["span_ns"] = [latest - earliest if n else 0
                              for latest, earliest, n in zip(t["latest"], t["earliest"], valid)]
        return HOST_EXECUTION_ROW.plain(**columns)
    columns["span_ns"] = (t["latest"] - t["earliest"]) * (valid != 0)
    return HOST_EXECUTION_ROW.block(**columns)


# Each key of a command_host_execution row but the span, and the table column it comes from.
_HOST_EXECUTION_COLUMNS = [
    ("command_buffer_id", "command_buffer_id"), ("submission_id", "submission_id"),
    ("physical_device_ordinal", "pdo"), ("queue_ordinal", "queue"), ("stream_id", "stream"),
    ("dispatches", "count"), ("valid", "valid"), ("invalid", "invalid"),
    ("total_dispatch_ns", "total"), ("total_tile_count", "tile_count"),
    ("total_tile_duration_sum_ns", "tile_duration_sum_ns"),
]

HOST_EXECUTION_ROW = RowLayout("command_host_execution", [
    *[(k, "=" + v) for k, v in HOST_TIMING.items()],
    ("command_buffer_id", "int"), ("submission_id", "int"), ("physical_device_ordinal", "int"),
    ("queue_ordinal", "int"), ("stream_id", "int"), ("dispatches", "int"), ("valid", "int"),
    ("invalid", "int"), ("span_ns", "int"), ("total_dispatch_ns", "int"),
    ("total_tile_count", "int"), ("total_tile_duration_sum_ns", "int"),
])

"""`executable`: the executable and function catalog joined with dispatch timing.

Rows, as `iree-profile executable --format=jsonl` prints them: `executable_summary`; then per
executable (file order; `--id` selects one executable id) an `executable` row and, per function
whose key matches `--filter` (nameless functions are keyed `executable<id>#<ordinal>` here), an
`executable_function` row followed by its `executable_function_dispatch_group` rows (device
dispatches, per device) and `executable_function_host_dispatch_group` rows (host spans).
With `--dispatch_events`: the event rows, then a `dispatch_summary` (mode `events`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Iterator

from amdgpu_cli.profile.jsonl import Rows
from amdgpu_cli.profile.names import Flags, hash_hex
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reports import projection_native
from amdgpu_cli.profile.reports.aggregates import EXECUTABLE, HOST_TIMING, Aggregates, values

if TYPE_CHECKING:
    from amdgpu_cli.profile.reader import Bundle


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> Rows:
    from amdgpu_cli.profile.reports.projection import Projection

    return Rows(_parts(Projection.build(bundle, EXECUTABLE, options), options))


def report_file(path: str, options: ReportOptions = ReportOptions()) -> Rows | None:
    """The rows from one native pass over the events (`projection_native`), or None where the
    exact path (`report` over a whole Bundle) must run."""
    p = projection_native.build(path, EXECUTABLE, options)
    return None if p is None else Rows(_parts(p, options))


def _parts(p: Aggregates, options: ReportOptions) -> Iterator:
    if options.dispatch_events:
        yield from p.event_rows()
        yield p.dispatch_summary_row()
        return
    model = p.model
    d, h = p.device_counts, p.host_counts
    yield {"type": "executable_summary", "filter": options.filter,
           "executables": len(model.executables), "functions": len(model.functions),
           "matched_dispatches": d.matched, "valid_dispatches": d.valid,
           "invalid_dispatches": d.invalid, "matched_host_dispatches": h.matched,
           "valid_host_dispatches": h.valid, "invalid_host_dispatches": h.invalid}
    device = _groups_by_function(p.dispatch_groups)
    host = _groups_by_function(p.host_groups)
    for executable in model.executables.values():
        record = executable.record
        eid = record["executable_id"]
        if options.id >= 0 and eid != options.id:
            continue
        flags = record["flags"]
        has_hash = bool(flags & Flags.CODE_OBJECT_HASH)
        yield {"type": "executable", "executable_id": eid, "flags": flags,
               "function_count": record["function_count"],
               "code_object_hash_present": has_hash,
               "code_object_hash": hash_hex(record["code_object_hash"]) if has_hash else None}
        for function in executable.functions:
            key = function.key()
            if not options.matches(key):
                continue
            has_hash = bool(function.flags & Flags.FUNCTION_HASH)
            yield {"type": "executable_function", "executable_id": eid,
                   "function_ordinal": function.function_ordinal, "flags": function.flags,
                   "key": key, "constant_count": function.constant_count,
                   "binding_count": function.binding_count,
                   "parameter_count": function.parameter_count,
                   "workgroup_size": list(function.workgroup_size),
                   "function_hash_present": has_hash,
                   "function_hash": hash_hex(function.function_hash) if has_hash else None}
            ident = (eid, function.function_ordinal)
            for g in device.get(ident, ()):
                yield _device_group(p, g, key)
            for g in host.get(ident, ()):
                yield _host_group(p, g, key)


def _groups_by_function(table) -> dict[tuple[int, int], list[int]]:
    out: dict[tuple[int, int], list[int]] = defaultdict(list)
    if len(table):
        for g, ident in enumerate(zip(values(table["executable_id"]),
                                      values(table["function_ordinal"]))):
            out[ident].append(g)
    return out


def _device_group(p: Aggregates, g: int, key: str) -> dict:
    t = p.dispatch_groups
    valid, total = int(t["valid"][g]), int(t["total"][g])
    average = total / float(valid) if valid else 0.0
    timing = p.dispatch_timing(g, average)
    return {"type": "executable_function_dispatch_group",
            "physical_device_ordinal": int(t["pdo"][g]),
            "executable_id": int(t["executable_id"][g]),
            "function_ordinal": int(t["function_ordinal"][g]), "key": key,
            "dispatches": int(t["count"][g]), "valid": valid, "invalid": int(t["invalid"][g]),
            "min_ticks": int(t["min"][g]) if valid else 0, "avg_ticks": average,
            "max_ticks": int(t["max"][g]) if valid else 0, "total_ticks": total,
            "clock_fit_available": timing["has_clock_fit"],
            "time_ns_available": timing["has_time_ns"], "min_ns": timing["min_ns"],
            "avg_ns": timing["avg_ns"], "max_ns": timing["max_ns"],
            "total_ns": timing["total_ns"]}


def _host_group(p: Aggregates, g: int, key: str) -> dict:
    t = p.host_groups
    valid = int(t["valid"][g])
    return {"type": "executable_function_host_dispatch_group", **HOST_TIMING,
            "physical_device_ordinal": int(t["pdo"][g]),
            "executable_id": int(t["executable_id"][g]),
            "function_ordinal": int(t["function_ordinal"][g]), "key": key,
            "dispatches": int(t["count"][g]), "valid": valid, "invalid": int(t["invalid"][g]),
            "min_ns": int(t["min"][g]) if valid else 0,
            "avg_ns": float(t["mean"][g]) if valid else 0.0,
            "stddev_ns": float(t["stddev"][g]), "max_ns": int(t["max"][g]) if valid else 0,
            "total_ns": int(t["total"][g]), "total_tile_count": int(t["tile_count"][g]),
            "total_tile_duration_sum_ns": int(t["tile_duration_sum_ns"][g])}

"""`dispatch`: per-function dispatch timing aggregates, or one row per dispatch event.

Rows, as `iree-profile dispatch --format=jsonl` prints them: `dispatch_summary`, then one
`dispatch_group` per (device, executable, function) of matched device dispatch events and one
`host_dispatch_group` per function of matched host dispatch spans, each in first-seen order. With
`--dispatch_events`: the matched `dispatch_event` / `host_dispatch_event` rows in file order, then
the summary (mode `events`). `--id` selects a dispatch event id. See projection.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from amdgpu_cli.profile.jsonl import Rows
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reports import projection_native
from amdgpu_cli.profile.reports.aggregates import DISPATCH, HOST_TIMING, Aggregates, values

if TYPE_CHECKING:
    from amdgpu_cli.profile.reader import Bundle


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> Rows:
    from amdgpu_cli.profile.reports.projection import Projection

    return Rows(_parts(Projection.build(bundle, DISPATCH, options), options))


def report_file(path: str, options: ReportOptions = ReportOptions()) -> Rows | None:
    """The rows from one native pass over the events (`projection_native`), or None where the
    exact path (`report` over a whole Bundle) must run."""
    p = projection_native.build(path, DISPATCH, options)
    return None if p is None else Rows(_parts(p, options))


def _parts(p: Aggregates, options: ReportOptions) -> Iterator:
    if options.dispatch_events:
        yield from p.event_rows()
        yield p.dispatch_summary_row()
        return
    yield p.dispatch_summary_row()
    yield from device_groups(p)
    yield from host_groups(p)


def device_groups(p: Aggregates) -> Iterator[dict]:
    t = p.dispatch_groups
    columns = zip(values(t["pdo"]), values(t["executable_id"]), values(t["function_ordinal"]),
                  t["key"], values(t["count"]), values(t["valid"]), values(t["invalid"]),
                  values(t["min"]), values(t["max"]), values(t["total"]), values(t["mean"]),
                  values(t["stddev"]), values(t["last_workgroup_count"]),
                  values(t["last_workgroup_size"]))
    for g, (pdo, exe, fn, key, count, valid, invalid, lo, hi, total, mean, std, wc, ws) in \
            enumerate(columns):
        timing = p.dispatch_timing(g, mean)
        has_ns = timing["has_time_ns"]
        npt = timing["ns_per_tick"]
        yield {"type": "dispatch_group", "physical_device_ordinal": pdo, "executable_id": exe,
               "function_ordinal": fn, "key": key, "count": count, "valid": valid,
               "invalid": invalid, "min_ticks": lo if valid else 0,
               "avg_ticks": mean if valid else 0.0, "stddev_ticks": std,
               "max_ticks": hi if valid else 0, "total_ticks": total,
               "clock_fit_available": timing["has_clock_fit"], "time_ns_available": has_ns,
               "min_ns": timing["min_ns"], "avg_ns": timing["avg_ns"],
               "stddev_ns": std * npt if has_ns else 0.0, "max_ns": timing["max_ns"],
               "total_ns": timing["total_ns"], "last_workgroup_count": wc,
               "last_workgroup_size": ws}


def host_groups(p: Aggregates) -> Iterator[dict]:
    t = p.host_groups
    if not len(t):
        return
    columns = zip(values(t["pdo"]), values(t["executable_id"]), values(t["function_ordinal"]),
                  t["key"], values(t["count"]), values(t["valid"]), values(t["invalid"]),
                  values(t["min"]), values(t["max"]), values(t["total"]), values(t["mean"]),
                  values(t["stddev"]), values(t["tile_count"]),
                  values(t["tile_duration_sum_ns"]), values(t["last_workgroup_count"]),
                  values(t["last_workgroup_size"]))
    for (pdo, exe, fn, key, count, valid, invalid, lo, hi, total, mean, std, tiles, tile_ns, wc,
         ws) in columns:
        yield {"type": "host_dispatch_group", **HOST_TIMING, "physical_device_ordinal": pdo,
               "executable_id": exe, "function_ordinal": fn, "key": key, "count": count,
               "valid": valid, "invalid": invalid, "min_ns": lo if valid else 0,
               "avg_ns": mean if valid else 0.0, "stddev_ns": std,
               "max_ns": hi if valid else 0, "total_ns": total, "total_tile_count": tiles,
               "total_tile_duration_sum_ns": tile_ns, "last_workgroup_count": wc,
               "last_workgroup_size": ws}

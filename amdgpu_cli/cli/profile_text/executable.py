"""Text for `executable`: each executable, its functions, and per function the device and host
dispatch timing (small tables; `dispatches=0` when a function never ran)."""

from __future__ import annotations

from amdgpu_cli.cli.profile_text.dispatch import fields, table


def render(rows, out) -> None:
    rows = list(rows)
    s = rows[0]
    out.write("IREE HAL profile executable summary\n")
    out.write(f"filter: {s['filter']}\n")
    fields(out, "", [("executables", s["executables"]), ("functions", s["functions"]),
                     ("matched_dispatches", s["matched_dispatches"]),
                     ("valid", s["valid_dispatches"]), ("invalid", s["invalid_dispatches"]),
                     ("matched_host_dispatches", s["matched_host_dispatches"]),
                     ("host_valid", s["valid_host_dispatches"]),
                     ("host_invalid", s["invalid_host_dispatches"])])
    pending = False  # a function row whose timing rows have not been seen yet
    for r in rows[1:]:
        kind = r["type"]
        if kind in ("executable", "executable_function") and pending:
            out.write("    dispatches=0\n")
        pending = False
        if kind == "executable":
            out.write("\n")
            fields(out, "", [("executable", r["executable_id"]),
                             ("functions", r["function_count"]), ("flags", r["flags"]),
                             ("code_object_hash", r["code_object_hash"] or "unavailable")])
        elif kind == "executable_function":
            out.write(f"  function {r['function_ordinal']}: {r['key']}\n")
            fields(out, "    ", [("flags", r["flags"]), ("constants", r["constant_count"]),
                                 ("bindings", r["binding_count"]),
                                 ("parameters", r["parameter_count"]),
                                 ("workgroup_size", r["workgroup_size"]),
                                 ("function_hash", r["function_hash"] or "unavailable")])
            pending = True
        elif kind == "executable_function_dispatch_group":
            fields(out, "    ", [("device", r["physical_device_ordinal"]),
                                 ("dispatches", r["dispatches"]), ("valid", r["valid"]),
                                 ("invalid", r["invalid"])])
            stats = [["ticks", r["min_ticks"], r["avg_ticks"], r["max_ticks"],
                      r["total_ticks"]]]
            if r["time_ns_available"]:
                stats.append(["ns", r["min_ns"], r["avg_ns"], r["max_ns"], r["total_ns"]])
            table(out, "      ", ["", "min", "avg", "max", "total"], stats)
        elif kind == "executable_function_host_dispatch_group":
            fields(out, "    ", [("timing", "host_execution"),
                                 ("device", r["physical_device_ordinal"]),
                                 ("dispatches", r["dispatches"]), ("valid", r["valid"]),
                                 ("invalid", r["invalid"]), ("tile_count", r["total_tile_count"]),
                                 ("tile_sum_ns", r["total_tile_duration_sum_ns"])])
            table(out, "      ", ["", "min", "avg", "stddev", "max", "total"],
                  [["ns", r["min_ns"], r["avg_ns"], r["stddev_ns"], r["max_ns"],
                    r["total_ns"]]])
    if pending:
        out.write("    dispatches=0\n")

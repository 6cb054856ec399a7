"""Text for `command`: per command buffer its operations, then its device and host executions
as aligned tables."""

from __future__ import annotations

from collections import defaultdict

from amdgpu_cli.cli.profile_text.dispatch import fields, table

U32_MAX = 0xFFFFFFFF


def render(rows, out) -> None:
    rows = list(rows)
    s = rows[0]
    out.write("IREE HAL profile command-buffer summary\n")
    out.write(f"filter: {s['filter']}\n")
    fields(out, "", [("command_buffers", s["command_buffers"]), ("executions", s["executions"]),
                     ("host_executions", s["host_executions"]),
                     ("command_operations", s["command_operations"]),
                     ("matched_command_operations", s["matched_command_operations"]),
                     ("matched_dispatches", s["matched_dispatches"]),
                     ("valid", s["valid_dispatches"]), ("invalid", s["invalid_dispatches"]),
                     ("matched_host_dispatches", s["matched_host_dispatches"]),
                     ("host_valid", s["valid_host_dispatches"]),
                     ("host_invalid", s["invalid_host_dispatches"])])
    operations = defaultdict(list)
    executions = defaultdict(list)
    host_executions = defaultdict(list)
    buffers = []
    for r in rows[1:]:
        kind = r["type"]
        if kind == "command_buffer":
            buffers.append(r)
        elif kind == "command_operation":
            operations[r["command_buffer_id"]].append(r)
        elif kind == "command_execution":
            executions[r["command_buffer_id"]].append(r)
        elif kind == "command_host_execution":
            host_executions[r["command_buffer_id"]].append(r)
    for b in buffers:
        cid = b["command_buffer_id"]
        out.write("\n")
        fields(out, "", [("command_buffer", cid), ("device", b["physical_device_ordinal"]),
                         ("mode", b["mode"]), ("categories", b["command_categories"]),
                         ("queue_affinity", b["queue_affinity"])])
        ops = operations.get(cid, ())
        if ops:
            out.write("  operations:\n")
        for op in ops:
            _operation(out, op)
        device = executions.get(cid, ())
        if device:
            out.write("  device executions (ticks; ns through the device clock fit):\n")
            table(out, "    ", ["submission", "queue/stream", "count", "valid", "invalid",
                                "span_ticks", "total_ticks", "span_ns", "total_ns"],
                  [[e["submission_id"], f"{e['queue_ordinal']}/{e['stream_id']}",
                    e["dispatches"],
                    e["valid"], e["invalid"], e["span_ticks"], e["total_dispatch_ticks"],
                    e["span_ns"] if e["total_dispatch_time_ns_available"] else None,
                    e["total_dispatch_ns"] if e["total_dispatch_time_ns_available"] else None]
                   for e in device])
        host = host_executions.get(cid, ())
        if host:
            out.write("  host executions (host execution spans, ns):\n")
            table(out, "    ", ["submission", "queue/stream", "count", "valid", "invalid",
                                "span_ns", "total_ns", "tiles", "tile_sum_ns"],
                  [[e["submission_id"], f"{e['queue_ordinal']}/{e['stream_id']}",
                    e["dispatches"],
                    e["valid"], e["invalid"], e["span_ns"], e["total_dispatch_ns"],
                    e["total_tile_count"], e["total_tile_duration_sum_ns"]] for e in host])


def _operation(out, op: dict) -> None:
    kind = op["op"]
    head = f"    [{op['command_index']}] {kind}"
    out.write(head + (f" {op['key']}\n" if kind == "dispatch" else "\n"))
    pairs = [("flags", f"0x{op['flags']:x}")]
    if op["block_structure"]:
        pairs += [("block", op["block_ordinal"]), ("local", op["block_command_ordinal"])]
    if kind == "dispatch":
        pairs += [("executable", op["executable_id"]), ("function", op["function_ordinal"]),
                  ("bindings", op["binding_count"]), ("workgroups", op["workgroup_count"]),
                  ("workgroup_size", op["workgroup_size"])]
    elif kind in ("fill", "update"):
        pairs += [("target", op["target_ordinal"]), ("target_offset", op["target_offset"]),
                  ("length", op["length"])]
    elif kind == "copy":
        pairs += [("source", op["source_ordinal"]), ("source_offset", op["source_offset"]),
                  ("target", op["target_ordinal"]), ("target_offset", op["target_offset"]),
                  ("length", op["length"])]
    elif kind in ("branch", "cond_branch"):
        pairs += [("target_block", op["target_block_ordinal"]),
                  ("alternate_block", op["alternate_block_ordinal"])]
    fields(out, "        ", pairs)

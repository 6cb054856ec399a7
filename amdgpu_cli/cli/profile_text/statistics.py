"""Text for `statistics`: totals, then aligned columns of timed rows grouped by kind, then memory rows.

Like iree-profile's text it shows count, total and average per row (min and max are in the JSONL
rows); kinds come in first-seen order, rows in iree-profile's order within a kind. Durations print
as iree-profile prints them (ns, us or ms with three decimals); device rows whose ticks cannot be
converted print `N ticks`; rows without timing print `-`. The average is the total over all
samples of the row (invalid ones included), as in iree-profile.
"""

from __future__ import annotations

_KINDS = {
    "dispatch_function": "dispatches by function",
    "dispatch_command_buffer": "dispatches by command buffer",
    "dispatch_command_operation": "dispatches by command buffer operation",
    "queue_device_operation": "device queue operations",
    "queue_host_operation": "host queue operations (submit to ready)",
    "host_execution_function": "host execution by function",
    "host_execution_command_buffer": "host execution by command buffer",
    "host_execution_command_operation": "host execution by command buffer operation",
    "host_execution_queue_operation": "host execution by queue operation",
}
# The totals iree-profile prints, and the row kinds that make them up.
_TOTALS = [("dispatch functions", "dispatch_function"),
           ("host execution functions", "host_execution_function"),
           ("host execution queue operations", "host_execution_queue_operation"),
           ("device queue operations", "queue_device_operation"),
           ("host queue submit-to-ready", "queue_host_operation")]


_KEY_WIDTH = 48  # longer keys get a line of their own


def scaled(ns: int) -> str:
    if ns >= 1_000_000:
        return f"{ns // 1_000_000}.{(ns % 1_000_000) // 1000:03d} ms"
    if ns >= 1000:
        return f"{ns // 1000}.{ns % 1000:03d} us"
    return f"{ns} ns"


def _duration(row, raw: int | None, ns: int | None) -> str:
    if not row["has_timing"] or raw is None:
        return "-"
    if ns is not None:
        return scaled(ns)
    return f"{raw:,} ticks" if row["time_domain"] == "device_tick" else "-"


def _queue(row) -> str:
    return f"p={row['physical_device_ordinal']} q={row['queue_ordinal']}"


def _key(row, with_queue: bool = False) -> str:
    kind = row["row_type"]
    if kind in ("queue_device_operation", "queue_host_operation", "host_execution_queue_operation"):
        cmdbuf = f" cmdbuf={row['command_buffer_id']}" if row["command_buffer_id"] else ""
        return f"{_queue(row)} {row['event_name']}{cmdbuf}"
    if with_queue:  # the kind spans several queues: say which one
        return f"{_queue(row)} {_key(row)}"
    if kind in ("dispatch_function", "host_execution_function"):
        return row["function_name"] or (f"executable={row['executable_id']} "
                                        f"function={row['function_ordinal']}")
    parts = [f"cmdbuf={row['command_buffer_id']}"]
    if row["command_index"] != 0xFFFFFFFF:
        parts.append(f"cmd={row['command_index']}")
        if row["function_name"]:
            parts.append(row["function_name"])
    return " ".join(parts)


def _notes(row) -> str:
    notes = []
    if row["invalid_sample_count"]:
        notes.append(f"invalid {row['invalid_sample_count']:,}")
    if row["operation_count"]:
        notes.append(f"ops {row['operation_count']:,}")
    if row["tile_count"]:
        notes.append(f"tiles {row['tile_count']:,} ({scaled(row['tile_duration_sum_ns'])})")
    if row["payload_bytes"]:
        notes.append(f"{row['payload_bytes']:,} B")
    return ", ".join(notes)


def _average(row) -> tuple[int | None, int | None]:
    extra = getattr(row, "extra", None)
    if extra is not None:
        return extra["average_duration"], extra["average_duration_ns"]
    count = row["sample_count"]  # a plain JSONL row: near enough
    if not count:
        return None, None
    ns = row["total_duration_ns"]
    return row["total_duration"] // count, None if ns is None else ns // count


def render(rows, out) -> None:
    rows = list(rows)
    summary, rows = rows[0], rows[1:]

    def w(text: str = "") -> None:
        out.write(text + "\n")

    w("IREE HAL device statistics")
    if not rows and not summary["dropped_record_count"]:
        w("  no profiling records captured")
        return
    line = f"  aggregate rows {summary['row_count']:,}"
    if summary["dropped_record_count"]:
        line += f", dropped records {summary['dropped_record_count']:,}"
    w(line)
    if not rows:
        return

    totals = {kind: 0 for _, kind in _TOTALS}
    unscaled = 0
    for row in rows:
        ns = row["total_duration_ns"]
        if row["has_timing"] and ns is None:
            unscaled += 1
        if row["row_type"] in totals and ns is not None:
            totals[row["row_type"]] += ns
    for label, kind in _TOTALS:
        w(f"  {label + ':':33s}{scaled(totals[kind])}")
    if unscaled:
        w(f"  rows whose ticks could not be converted to ns: {unscaled}")

    kinds: dict[str, list] = {}
    for r in rows:
        if r["row_type"] in _KINDS:
            kinds.setdefault(r["row_type"], []).append(r)
    memory = [r for r in rows if r["row_type"] == "memory_lifecycle"]
    cells = {}
    for kind, members in kinds.items():
        cells[kind] = []
        several = len({(r["physical_device_ordinal"], r["queue_ordinal"]) for r in members}) > 1
        for r in members:
            avg, avg_ns = _average(r)
            cells[kind].append((_key(r, several), f"{r['sample_count']:,}",
                                _duration(r, r["total_duration"], r["total_duration_ns"]),
                                _duration(r, avg, avg_ns), _notes(r)))
    flat = [c for kind_cells in cells.values() for c in kind_cells]
    widths = [len(c[0]) + 2 for c in flat] + [len(_KINDS[k]) for k in kinds]
    widths += [len(f"  {_queue(r)} {r['event_name']}") for r in memory]
    if memory:
        widths.append(len("memory lifecycle events"))
    kw = min(_KEY_WIDTH, max(widths))
    cw = max(5, *(len(c[1]) for c in flat)) if flat else 5
    tw = max(5, *(len(c[2]) for c in flat), *(len(c[3]) for c in flat)) if flat else 5
    for kind, kind_cells in cells.items():
        w()
        w(f"{_KINDS[kind]:<{kw}}  {'count':>{cw}}  {'total':>{tw}}  {'avg':>{tw}}  notes")
        for key, count, total, avg, notes in kind_cells:
            key = "  " + key
            if len(key) > kw:
                w(key)
                key = ""
            w(f"{key:<{kw}}  {count:>{cw}}  {total:>{tw}}  {avg:>{tw}}  {notes}".rstrip())

    if memory:
        w()
        cells = [(f"  {_queue(r)} {r['event_name']}",
                  f"{r['sample_count']:,}", f"{r['payload_bytes']:,}") for r in memory]
        cw = max(5, *(len(c[1]) for c in cells))
        bw = max(5, *(len(c[2]) for c in cells))
        w(f"{'memory lifecycle events':<{kw}}  {'count':>{cw}}  {'bytes':>{bw}}")
        for key, count, nbytes in cells:
            if len(key) > kw:
                w(key)
                key = ""
            w(f"{key:<{kw}}  {count:>{cw}}  {nbytes:>{bw}}")

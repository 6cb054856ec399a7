"""Text for `counter`: summary lines, the counter sets and counters, then one table per counter
whose rows are its aggregate groups (in report order).

Each group row shows the function key and, below it, where the samples came from: scope, device
(d), queue (q), stream (s), command buffer (cb), executable#function (fn) and the first..last
sample ids. Integral statistics print without decimals, others with three; values of 1e12 or more
in scientific notation (the JSONL rows carry the exact figures).
"""

from __future__ import annotations

U32_MAX = 0xFFFFFFFF


def _number(v: float) -> str:
    """Integral values without decimals, others with three; very large ones in 7 digits."""
    if abs(v) >= 1e12:
        return f"{v:.6e}"
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.3f}"


def _function(row: dict) -> str:
    if row["executable_id"] == 0 and row["function_ordinal"] == U32_MAX:
        return "-"
    ordinal = "-" if row["function_ordinal"] == U32_MAX else row["function_ordinal"]
    return f"{row['executable_id']}#{ordinal}"


RICH = True  # drawn through a rich Console, not written as plain lines


def render(rows, console) -> None:
    from rich import box
    from rich.table import Table

    rows = list(rows)
    summary = next(r for r in rows if r["type"] == "counter_summary")
    sets = [r for r in rows if r["type"] == "counter_set"]
    counters = [r for r in rows if r["type"] == "counter"]
    groups = [r for r in rows if r["type"] == "counter_group"]

    console.print("IREE HAL profile counter summary", style="bold")
    line = f"filter: {summary['filter']}"
    if summary["id_filter"] >= 0:
        line += f"   id: {summary['id_filter']}"
    console.print(line)
    console.print(
        f"samples: {summary['total_samples']} total, {summary['matched_samples']} matched, "
        f"{summary['truncated_matched_samples']} matched from truncated chunks")
    console.print(f"counter sets: {summary['counter_sets']}   counters: {summary['counters']}   "
                  f"groups: {summary['aggregate_groups']}")

    def table(title: str) -> Table:
        console.print()
        return Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                     pad_edge=False, show_edge=False)

    if sets:
        t = table("Counter sets")
        for name, justify in (("Set", "right"), ("Device", "right"), ("Counters", "right"),
                              ("Values", "right"), ("Flags", "right"), ("Name", "left")):
            t.add_column(name, justify=justify, overflow="fold")
        for s in sets:
            t.add_row(str(s["counter_set_id"]), str(s["physical_device_ordinal"]),
                      str(s["counter_count"]), str(s["sample_value_count"]), str(s["flags"]),
                      s["name"])
        console.print(t)

    if counters:
        t = table("Counters")
        for name, justify in (("Counter", "right"), ("Device", "right"), ("Block", "left"),
                              ("Name", "left"), ("Unit", "left"), ("Values", "left"),
                              ("Flags", "right"), ("Description", "left")):
            t.add_column(name, justify=justify, overflow="fold")
        for c in counters:
            offset = c["sample_value_offset"]
            t.add_row(f"{c['counter_set_id']}#{c['counter_ordinal']}",
                      str(c["physical_device_ordinal"]), c["block"], c["name"], c["unit"],
                      f"[{offset},{offset + c['sample_value_count']})", str(c["flags"]),
                      c["description"])
        console.print(t)

    # One table per counter, its groups in report order.
    by_counter: dict[tuple, list[dict]] = {}
    for g in groups:
        by_counter.setdefault((g["counter_set_id"], g["counter_ordinal"]), []).append(g)
    for members in by_counter.values():
        first = members[0]
        t = table(f"{first['counter_set']} / {first['block']}.{first['counter']}  "
                  f"[{first['unit']}]  counter {first['counter_set_id']}#"
                  f"{first['counter_ordinal']}")
        t.add_column("Key / where", overflow="fold", min_width=24, ratio=1)
        for name in ("Samples", "Min", "Avg", "Stddev", "Max", "Sum"):
            t.add_column(name, justify="right", overflow="fold")
        for g in members:
            where = (f"{g['scope']} d{g['physical_device_ordinal']} q{g['queue_ordinal']} "
                     f"s{g['stream_id']} cb{g['command_buffer_id']} fn {_function(g)} "
                     f"ids {g['first_sample_id']}..{g['last_sample_id']}")
            t.add_row(f"{g['key']}\n  {where}",
                      f"{g['samples']}\n{g['raw_values']} raw", _number(g["min"]),
                      _number(g["avg"]), _number(g["stddev"]), _number(g["max"]),
                      _number(g["sum"]))
        console.print(t)
    if not groups:
        console.print("groups: none" if sets else "no counter data in this bundle")

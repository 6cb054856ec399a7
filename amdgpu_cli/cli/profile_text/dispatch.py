"""Text for `dispatch`: the counts, then one block per function group with a small timing table.

Also holds the plain-text helpers the other projection renderers (executable, command, queue)
share: `fields` packs `name=value` pairs into lines of at most 100 columns, `table` prints aligned
columns (numbers right-aligned, `%.3f` for averages).
"""

from __future__ import annotations

from typing import Iterable

WIDTH = 100


def value_text(v) -> str:
    if v is None:
        return "-"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, (list, tuple)):
        return "x".join(str(x) for x in v)
    return str(v)


def fields(out, indent: str, pairs: Iterable[tuple[str, object]], width: int = WIDTH) -> None:
    """Writes `name=value` tokens, wrapping at `width` with continuation lines indented 2 more."""
    line = indent
    first = True
    for name, v in pairs:
        token = f"{name}={value_text(v)}" if name else value_text(v)
        if not first and len(line) + 1 + len(token) > width:
            out.write(line + "\n")
            line = indent + "  " + token
        else:
            line = line + ("" if first else " ") + token
        first = False
    out.write(line + "\n")


def table(out, indent: str, headers: list[str], rows: list[list], width: int = WIDTH) -> None:
    """Aligned columns: numbers right-aligned, text left-aligned, `-` for absent values.

    Rows that would not fit in `width` columns are printed as `name=value` lines instead.
    """
    columns = list(zip(*rows)) if rows else [() for _ in headers]
    texts, numeric = [], []
    for column in columns:
        if all(type(v) is int for v in column):
            texts.append(list(map(str, column)))
            numeric.append(bool(column))
        else:
            texts.append([value_text(v) for v in column])
            numeric.append(bool(column) and all(
                v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))
                for v in column))
    widths = [max([len(h)] + list(map(len, t))) for h, t in zip(headers, texts)]
    if len(indent) + sum(widths) + 2 * (len(widths) - 1) > width:
        for row in rows:
            fields(out, indent, [(h or "at", v) for h, v in zip(headers, row)], width)
        return
    fmt = indent + "  ".join(("%%%ds" if num else "%%-%ds") % w
                             for num, w in zip(numeric, widths))
    out.write((fmt % tuple(headers)).rstrip() + "\n")
    if rows:
        out.write("\n".join((fmt % line).rstrip() for line in zip(*texts)) + "\n")


def render(rows, out) -> None:
    rows = list(rows)
    summary = next(r for r in rows if r["type"] == "dispatch_summary")
    out.write("IREE HAL profile dispatch summary\n")
    out.write(f"filter: {summary['filter']}\n")
    fields(out, "", [("dispatches: total", summary["total_dispatches"]),
                     ("matched", summary["matched_dispatches"]),
                     ("valid", summary["valid_dispatches"]),
                     ("invalid", summary["invalid_dispatches"]),
                     ("groups", summary["aggregate_groups"])])
    fields(out, "", [("host_dispatches: total", summary["total_host_dispatches"]),
                     ("matched", summary["matched_host_dispatches"]),
                     ("valid", summary["valid_host_dispatches"]),
                     ("invalid", summary["invalid_host_dispatches"]),
                     ("groups", summary["host_aggregate_groups"])])
    device = [r for r in rows if r["type"] == "dispatch_group"]
    host = [r for r in rows if r["type"] == "host_dispatch_group"]
    if device:
        out.write("\ndevice dispatch groups (device ticks; ns through the device clock fit):\n")
        for r in device:
            _device_group(out, r)
    if host:
        out.write("\nhost dispatch groups (host execution spans, ns):\n")
        for r in host:
            _host_group(out, r)


def _group_head(out, r: dict) -> None:
    out.write(f"  {r['key']}\n")
    fields(out, "    ", [("device", r["physical_device_ordinal"]),
                         ("executable", r["executable_id"]),
                         ("function", r["function_ordinal"]), ("count", r["count"]),
                         ("valid", r["valid"]), ("invalid", r["invalid"])])
    fields(out, "    ", [("last_geometry: workgroup_count", r["last_workgroup_count"]),
                         ("workgroup_size", r["last_workgroup_size"])])


def _device_group(out, r: dict) -> None:
    _group_head(out, r)
    if not r["valid"]:
        return
    stats = [["ticks", r["min_ticks"], r["avg_ticks"], r["stddev_ticks"], r["max_ticks"],
              r["total_ticks"]]]
    if r["time_ns_available"]:
        stats.append(["ns", r["min_ns"], r["avg_ns"], r["stddev_ns"], r["max_ns"],
                      r["total_ns"]])
    table(out, "    ", ["", "min", "avg", "stddev", "max", "total"], stats)
    if not r["time_ns_available"]:
        out.write("    ns: unavailable (no clock fit for this device)\n")


def _host_group(out, r: dict) -> None:
    _group_head(out, r)
    if not r["valid"]:
        return
    table(out, "    ", ["", "min", "avg", "stddev", "max", "total", "tiles", "tile_sum"],
          [["ns", r["min_ns"], r["avg_ns"], r["stddev_ns"], r["max_ns"], r["total_ns"],
            r["total_tile_count"], r["total_tile_duration_sum_ns"]]])

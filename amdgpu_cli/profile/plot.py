"""`plot`: a PNG with a timeline of timed work and the top functions by total time.

Top panel: one row per (device, queue, kind) track with a bar per slice: device dispatches, device
queue operations and host execution spans, in IREE host time relative to the earliest slice
(device ticks mapped exactly as in the Perfetto export, `amdgpu_cli.profile.perfetto`). Bars of
the top functions get their colour; everything else is grey. A row with more bars than can be drawn
shows instead how busy the track is (fraction of each of 1000 time bins covered by its slices, as
the bar height), so a million events still plot in seconds.

Bottom panel: horizontal bars of the top-N function keys by total duration (device dispatches and
host dispatch spans), labelled with call counts.

matplotlib is optional (`pip install amdgpu_cli[plot]`) and imported only here, with the Agg
backend. The PNG goes through `amdgpu_cli.outputs` (checked before drawing; a regular file is
replaced atomically, `-` is standard output, a device or FIFO is written in place).
"""

from __future__ import annotations

import io
import json
import os

import numpy as np

from amdgpu_cli.outputs import OutputFile, write_outputs
from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.profile.perfetto import KIND_ORDER, TraceBuilder
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.schema import U32_MAX

WIDTH_IN, HEIGHT_IN, DPI = 14, 8, 100          # 1400 x 800 pixels
MAX_BARS_PER_ROW = 20_000
OTHER_COLOR = "#b0b0b0"
BUSY_COLOR = "#4c72b0"
BINS = 1000                                     # busy-fraction bins of a dense timeline row


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise AmdgpuCliError("plot needs matplotlib: pip install amdgpu_cli[plot]",
                             status="UNAVAILABLE") from None
    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    return Figure


def _busy(start: np.ndarray, end: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Busy time inside each bin [edges[k], edges[k+1]) (overlapping slices count twice)."""
    s, e = np.sort(start), np.sort(end)
    cs, ce = np.concatenate([[0.0], np.cumsum(s)]), np.concatenate([[0.0], np.cumsum(e)])
    ns, ne = np.searchsorted(s, edges), np.searchsorted(e, edges)
    # Work done before x: sum over started slices of (x - start) minus the same for ended ones.
    work = (ns * edges - cs[ns]) - (ne * edges - ce[ne])
    return np.diff(work)


def summarize(bundle: Bundle) -> tuple[list[tuple[str, np.ndarray, np.ndarray, list[str]]],
                                       list[tuple[str, int, int]]]:
    """(rows, functions): per track its label, slice start/end ns and function names (or ""),
    and per function key its total ns and count, largest first."""
    families = TraceBuilder(bundle).build(slices_only=True).families
    decoded: dict[str, str] = {}
    rows = []
    totals: dict[str, list[int]] = {}
    for family in families:
        names = [decoded.setdefault(n, json.loads(n)) for n in family.names]
        keyed = family.keyed.tolist() if family.keyed is not None else [False] * len(names)
        labels = [n if k else "" for n, k in zip(names, keyed)]
        for name, k, s, e in zip(names, keyed, family.start.tolist(), family.end.tolist()):
            if k:
                entry = totals.setdefault(name, [0, 0])
                entry[0] += e - s
                entry[1] += 1
        tracks: dict[tuple[int, int, int], list[int]] = {}
        for i, key in enumerate(zip(family.pdo.tolist(), family.queue.tolist(),
                                    family.stream.tolist())):
            tracks.setdefault(key, []).append(i)
        for (pdo, queue, stream), idx in sorted(tracks.items()):
            where = "device-scope" if queue == U32_MAX else f"q{queue} s{stream}"
            device = "?" if pdo == U32_MAX else str(pdo)
            label = f"dev{device} {where} {family.kind}"
            idx = np.asarray(idx)
            order = idx[np.argsort(family.start[idx], kind="stable")]
            rows.append(((pdo, queue, stream, KIND_ORDER[family.kind]), label,
                         family.start[order], family.end[order], [labels[i] for i in order]))
    rows.sort(key=lambda row: row[0])
    functions = sorted(((name, t, n) for name, (t, n) in totals.items()),
                       key=lambda item: (-item[1], item[0]))
    return [row[1:] for row in rows], functions


def plot(bundle: Bundle, output_path: str, *, top: int = 10) -> None:
    """Draws the timeline and the top-`top` functions chart to `output_path` (PNG)."""
    output = OutputFile(output_path)  # a bad path fails here, before any drawing
    Figure = _matplotlib()
    rows, functions = summarize(bundle)
    top_functions = functions[:max(top, 0)]
    palette = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
        "#bcbd22", "#7f7f7f", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
    ]
    colors = {name: palette[i % len(palette)] for i, (name, _, _) in enumerate(top_functions)}

    fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI)
    timeline, bars = fig.subplots(2, 1, gridspec_kw={"height_ratios": [3, 2]})
    name = os.path.basename(getattr(bundle, "path", "") or "")
    total = sum(len(r[1]) for r in rows)
    fig.suptitle(f"{name}: {total} timed slices, {len(functions)} functions")

    if rows:
        origin = min(int(r[1][0]) for r in rows if len(r[1]))
        span = max(int(r[2].max()) for r in rows if len(r[2])) - origin
        scale, unit = _time_unit(span)
        labels = []
        for y, (label, start, end, names) in enumerate(rows):
            labels.append(label + (" (busy)" if len(start) > MAX_BARS_PER_ROW else ""))
            s = (start - origin) / scale
            e = (end - origin) / scale
            if len(s) > MAX_BARS_PER_ROW:
                # Too many bars to draw: show how busy the track is, per pixel-wide bin.
                edges = np.linspace(0.0, max(span / scale, 1e-9), BINS + 1)
                width = edges[1] - edges[0]
                busy = np.minimum(_busy(s, e, edges) / width, 1.0)
                timeline.bar(edges[:-1], 0.8 * busy, width=width, bottom=y + 0.4 - 0.8 * busy,
                             align="edge", color=BUSY_COLOR, linewidth=0)
                continue
            fill = [colors.get(n, OTHER_COLOR) for n in names]
            # Zero-length slices still get a visible sliver.
            widths = np.maximum(e - s, span / scale / 5000.0 if span else 1e-3)
            timeline.broken_barh(list(zip(s.tolist(), widths.tolist())), (y - 0.4, 0.8),
                                 facecolors=fill, edgecolor="none")
        timeline.set_yticks(range(len(rows)), labels, fontsize=8)
        timeline.set_ylim(len(rows) - 0.5, -0.5)
        timeline.set_xlim(0, max(span / scale, 1e-9) * 1.01)
        timeline.set_xlabel(f"time since first slice ({unit})")
    else:
        timeline.text(0.5, 0.5, "no timed events in this bundle", ha="center", va="center",
                      transform=timeline.transAxes)
        timeline.set_yticks([])
    timeline.set_title("timeline", fontsize=10, loc="left")
    timeline.grid(axis="x", alpha=0.3)

    if top_functions:
        scale, unit = _time_unit(top_functions[0][1])
        labels = [_short(n) for n, _, _ in top_functions]
        values = [t / scale for _, t, _ in top_functions]
        positions = range(len(top_functions))
        bars.barh(positions, values, color=[colors[n] for n, _, _ in top_functions])
        bars.set_yticks(positions, labels, fontsize=8)
        bars.invert_yaxis()
        for y, (v, (_, _, count)) in enumerate(zip(values, top_functions)):
            bars.text(v, y, f" {count}x", va="center", fontsize=7)
        bars.set_xlabel(f"total time ({unit})")
    else:
        bars.text(0.5, 0.5, "no function-keyed slices", ha="center", va="center",
                  transform=bars.transAxes)
        bars.set_yticks([])
    bars.set_title(f"top {len(top_functions)} functions by total time", fontsize=10, loc="left")
    bars.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    _save(fig, output)


def _time_unit(span_ns: float) -> tuple[float, str]:
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if span_ns >= 10 * scale:
            return scale, unit
    return 1.0, "ns"


def _short(name: str, limit: int = 60) -> str:
    """A label matplotlib draws verbatim: control characters escaped, `$` not taken as math."""
    name = "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)
    if len(name) > limit:
        name = name[:limit - 3] + "..."
    return name.replace("$", r"\$")


def _save(fig, output: OutputFile) -> None:
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=DPI)
    write_outputs([(output, png.getvalue())])

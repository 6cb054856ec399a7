"""`amdgpu profile` / `amdgpu-profile`: read and report .ireeprof bundles (iree-profile's commands).

Flags mirror iree-profile's (`--format=jsonl`, `--dispatch_events`, ...); dashed spellings work too.
Each command gets its report's rows (summary, statistics and the dispatch/executable/command
aggregates first try their one native pass, `report_file(path, options)`; otherwise, or when that
returns None, the bundle is opened and `report()` runs), and either writes them as JSONL or hands
them to the command's text renderer.
"""

from __future__ import annotations

import importlib
import sys

import click

FORMATS = ("text", "jsonl")


def _format_option(choices=FORMATS, default="text"):
    return click.option("--format", "fmt", type=click.Choice(choices), default=default,
                        show_default=True, help="Output format.")


_filter_option = click.option("--filter", "filter_", default="*", show_default=True,
                              help="Glob over function keys, op names or event type names.")
def _clamp_id(ctx, param, value: int) -> int:
    # iree-profile parses --id as a signed 64-bit integer (saturating); negative means "all".
    return max(-(1 << 63), min((1 << 63) - 1, value))


_id_option = click.option("--id", "id_", type=int, default=-1, callback=_clamp_id,
                          help="Only rows for this id (see each command's help).")
_dispatch_events_option = click.option(
    "--dispatch_events", "--dispatch-events", "dispatch_events", is_flag=True,
    help="Emit one row per dispatch event (jsonl only).")
_file_argument = click.argument("file")


@click.group("profile", context_settings={"help_option_names": ["-h", "--help"]})
def profile() -> None:
    """Read and report IREE HAL profile bundles (.ireeprof), as iree-profile does."""


def _open(path: str):
    from amdgpu_cli.cli.terminal import progress
    from amdgpu_cli.profile.reader import Bundle

    with progress(f"reading {path}"):
        return Bundle.open(path)


def _emit(command: str, path: str, fmt: str, first=None, **options) -> None:
    """Runs one report and writes its rows as JSONL or as text. `first(path, options)`, when
    given, is a quicker way to the same rows that returns None where the report itself must run."""
    from amdgpu_cli.profile.options import ReportOptions

    opts = ReportOptions(**options)
    if opts.dispatch_events and fmt != "jsonl":
        raise click.UsageError("--dispatch_events requires --format=jsonl")
    if opts.counter_samples and fmt != "jsonl":
        raise click.UsageError("--counter_samples requires --format=jsonl")
    from amdgpu_cli.cli.terminal import progress

    with progress(f"{command}: {path}"):
        rows = first(path, opts) if first is not None else None
        if rows is None:
            from amdgpu_cli.profile.reader import Bundle

            module = importlib.import_module(f"amdgpu_cli.profile.reports.{command}")
            rows = module.report(Bundle.open(path), opts)
        if fmt != "jsonl" and hasattr(rows, "__next__"):
            rows = list(rows)  # a lazy report: do the work while the activity bar is up
    if fmt == "jsonl":
        from amdgpu_cli.profile.jsonl import write_rows

        write_rows(sys.stdout, rows)
        return
    renderer = importlib.import_module(f"amdgpu_cli.cli.profile_text.{command}")
    if getattr(renderer, "RICH", False):
        from amdgpu_cli.cli.terminal import console

        renderer.render(rows, console())
    else:
        renderer.render(rows, sys.stdout)


@profile.command("cat")
@_format_option()
@_file_argument
def cat_command(fmt: str, file: str) -> None:
    """Raw record dump: the file header and every record header."""
    _emit("cat", file, fmt)


@profile.command("summary")
@_format_option()
@_file_argument
def summary_command(fmt: str, file: str) -> None:
    """Bundle health, record counts, clock fit and per-device dispatch timing."""
    from amdgpu_cli.profile.reports.summary_native import report_file

    _emit("summary", file, fmt, first=report_file)


@profile.command("statistics")
@_format_option()
@_file_argument
def statistics_command(fmt: str, file: str) -> None:
    """Aggregate statistics rows reduced from the raw chunks."""
    from amdgpu_cli.profile.reports.statistics_native import report_file

    _emit("statistics", file, fmt, first=report_file)


@profile.command("explain")
@_format_option()
@_filter_option
@_id_option
@_file_argument
def explain_command(fmt: str, filter_: str, id_: int, file: str) -> None:
    """Bottleneck view: device and queue utilisation, top functions and dispatches, hints.

    --id selects a dispatch event id."""
    from amdgpu_cli.profile.reports.explain_native import report_file

    _emit("explain", file, fmt, first=report_file, filter=filter_, id=id_)


def _projection(name: str, help_text: str):
    @profile.command(name, help=help_text)
    @_format_option()
    @_filter_option
    @_id_option
    @_dispatch_events_option
    @_file_argument
    def command(fmt: str, filter_: str, id_: int, dispatch_events: bool, file: str) -> None:
        first = _report_file(name) if name != "queue" else None
        _emit(name, file, fmt, first=first, filter=filter_, id=id_,
              dispatch_events=dispatch_events)

    return command


def _report_file(name: str):
    """A projection report's one-pass path (`report_file`), imported when the command runs."""
    def first(path: str, options):
        return importlib.import_module(f"amdgpu_cli.profile.reports.{name}").report_file(path, options)

    return first


_projection("dispatch", "Per-function dispatch timing aggregates, or event rows. --id: event id.")
_projection("executable", "Executables and functions joined with dispatch timing. --id: executable id.")
_projection("command", "Command buffers, their operations and executions. --id: command buffer id.")
_projection("queue", "Queues, submissions and queue events. --id: submission id.")


@profile.command("counter")
@_format_option()
@_filter_option
@_id_option
@click.option("--counter_samples", "--counter-samples", "counter_samples", is_flag=True,
              help="Emit one row per sample and counter (jsonl only).")
@_file_argument
def counter_command(fmt: str, filter_: str, id_: int, counter_samples: bool, file: str) -> None:
    """Hardware counter sets, counters and sample aggregates. --id: a sample or related id."""
    _emit("counter", file, fmt, filter=filter_, id=id_, counter_samples=counter_samples)


@profile.command("memory")
@_format_option()
@_filter_option
@_id_option
@_file_argument
def memory_command(fmt: str, filter_: str, id_: int, file: str) -> None:
    """Memory lifecycle events and high-water summaries. --id: event or allocation id."""
    _emit("memory", file, fmt, filter=filter_, id=id_)


@profile.command("export")
@_format_option(("ireeperf-jsonl", "perfetto"), default="ireeperf-jsonl")
@click.option("--output", "-o", "output", default="-", show_default=True,
              help="Output path, or - for stdout (a file is replaced atomically).")
@_file_argument
def export_command(fmt: str, output: str, file: str) -> None:
    """Decoded interchange export: ireeperf-jsonl (as iree-profile), or a Perfetto/Chrome trace
    (JSON trace-event format, opens directly in ui.perfetto.dev)."""
    from amdgpu_cli.cli.terminal import output_stream

    bundle = _open(file)
    if fmt == "perfetto":
        from amdgpu_cli.profile.perfetto import write_trace

        with output_stream(output) as out:
            write_trace(bundle, out)
    else:
        from amdgpu_cli.profile.reports.export import write

        with output_stream(output) as out:
            write(bundle, out)  # preformatted lines: dict rows are too slow for 1M events


@profile.command("plot")
@click.option("--output", "-o", "output", required=True,
              help="PNG file to write (a file is replaced atomically; - for stdout).")
@click.option("--top", default=10, show_default=True, help="Functions in the top-functions chart.")
@_file_argument
def plot_command(output: str, top: int, file: str) -> None:
    """Draws a timeline and a top-functions chart to a PNG (needs matplotlib: the `plot` extra)."""
    from amdgpu_cli.profile.plot import plot

    bundle = _open(file)
    plot(bundle, output, top=top)

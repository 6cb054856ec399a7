"""`amdgpu profile` / `amdgpu-profile`: read and report .ireeprof bundles (iree-profile's commands).

The click commands: their flags (mirroring iree-profile's: `--format=jsonl`, `--dispatch_events`,
...; dashed spellings work too), help and usage errors. What each command does once parsed is
cli/profile_commands.py's, which also runs plain command lines without importing click (the
console script tries that first).
"""

from __future__ import annotations

import click

from amdgpu_cli.cli.profile_commands import EXPORT_FORMATS, FORMATS, clamp_id, run, usage_problem


def _format_option(choices=FORMATS, default="text"):
    return click.option("--format", "fmt", type=click.Choice(choices), default=default,
                        show_default=True, help="Output format.")


_filter_option = click.option("--filter", "filter_", default="*", show_default=True,
                              help="Glob over function keys, op names or event type names.")
_id_option = click.option("--id", "id_", type=int, default=-1,
                          callback=lambda ctx, param, value: clamp_id(value),
                          help="Only rows for this id (see each command's help).")
_dispatch_events_option = click.option(
    "--dispatch_events", "--dispatch-events", "dispatch_events", is_flag=True,
    help="Emit one row per dispatch event (jsonl only).")
_file_argument = click.argument("file")


@click.group("profile", context_settings={"help_option_names": ["-h", "--help"]})
def profile() -> None:
    """Read and report IREE HAL profile bundles (.ireeprof), as iree-profile does."""


def _emit(command: str, file: str, fmt: str, **options) -> None:
    problem = usage_problem(fmt, options.get("dispatch_events", False),
                            options.get("counter_samples", False))
    if problem:
        raise click.UsageError(problem)
    run(command, file, fmt, **options)


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
    _emit("summary", file, fmt)


@profile.command("statistics")
@_format_option()
@_file_argument
def statistics_command(fmt: str, file: str) -> None:
    """Aggregate statistics rows reduced from the raw chunks."""
    _emit("statistics", file, fmt)


@profile.command("explain")
@_format_option()
@_filter_option
@_id_option
@_file_argument
def explain_command(fmt: str, filter_: str, id_: int, file: str) -> None:
    """Bottleneck view: device and queue utilisation, top functions and dispatches, hints.

    --id selects a dispatch event id."""
    _emit("explain", file, fmt, filter_=filter_, id_=id_)


def _projection(name: str, help_text: str):
    @profile.command(name, help=help_text)
    @_format_option()
    @_filter_option
    @_id_option
    @_dispatch_events_option
    @_file_argument
    def command(fmt: str, filter_: str, id_: int, dispatch_events: bool, file: str) -> None:
        _emit(name, file, fmt, filter_=filter_, id_=id_, dispatch_events=dispatch_events)

    return command


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
    _emit("counter", file, fmt, filter_=filter_, id_=id_, counter_samples=counter_samples)


@profile.command("memory")
@_format_option()
@_filter_option
@_id_option
@_file_argument
def memory_command(fmt: str, filter_: str, id_: int, file: str) -> None:
    """Memory lifecycle events and high-water summaries. --id: event or allocation id."""
    _emit("memory", file, fmt, filter_=filter_, id_=id_)


@profile.command("export")
@_format_option(EXPORT_FORMATS, default=EXPORT_FORMATS[0])
@click.option("--output", "-o", "output", default="-", show_default=True,
              help="Output path, or - for stdout (a file is replaced atomically).")
@_file_argument
def export_command(fmt: str, output: str, file: str) -> None:
    """Decoded interchange export: ireeperf-jsonl (as iree-profile), or a Perfetto/Chrome trace
    (JSON trace-event format, opens directly in ui.perfetto.dev)."""
    _emit("export", file, fmt, output=output)


@profile.command("plot")
@click.option("--output", "-o", "output", required=True,
              help="PNG file to write (a file is replaced atomically; - for stdout).")
@click.option("--top", default=10, show_default=True, help="Functions in the top-functions chart.")
@_file_argument
def plot_command(output: str, top: int, file: str) -> None:
    """Draws a timeline and a top-functions chart to a PNG (needs matplotlib: the `plot` extra)."""
    from amdgpu_cli.cli.profile_commands import open_bundle
    from amdgpu_cli.profile.plot import plot

    plot(open_bundle(file), output, top=top)

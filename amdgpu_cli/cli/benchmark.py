"""`amdgpu benchmark` / `amdgpu-benchmark`: time a module's functions, as iree-benchmark-module does.

Flags mirror iree-benchmark-module's and Google Benchmark's (underscore and dashed spellings).
The command builds BenchmarkOptions, sets up `amdgpu_cli.tooling.benchmark.Benchmarks`, runs them
and prints the rows: the machine's context on stderr, the report on stdout (`--benchmark_format`),
and `--benchmark_out` written through `amdgpu_cli.outputs` (path checked before any work).
"""

from __future__ import annotations

import functools

import click

from amdgpu_cli.cli.run import (_flag, driver_flags, module_flags, parameter_flags,
                                profiling_flags, replay_flags)


class BenchmarkFlags:
    """Google Benchmark's flags as the command got them (`benchmark_flags`)."""

    def __init__(self, repetitions, min_time, min_warmup_time, fmt, out, out_format,
                 report_aggregates_only, display_aggregates_only, time_unit, driver_options):
        self.repetitions = repetitions
        self.format = fmt
        self.out = out
        self.out_format = out_format
        self.report_aggregates_only = report_aggregates_only
        self.display_aggregates_only = display_aggregates_only
        # BenchmarkOptions' keyword arguments for these flags.
        self.options = {
            "repetitions": repetitions, "min_time": min_time,
            "min_warmup_time": min_warmup_time, "time_unit": time_unit,
            "driver_options": driver_options}

    def out_file(self):
        """The --benchmark_out file, its path checked now (before any timing), or None."""
        if not self.out:
            return None
        from amdgpu_cli.outputs import OutputFile

        return OutputFile(self.out)


def benchmark_flags(command):
    """Google Benchmark's flags (and the driver flags), shared by amdgpu-benchmark
    and amdgpu-replay bench; the command receives them as one `benchmark` (BenchmarkFlags)."""
    flags = [
        _flag("benchmark_repetitions", type=int, default=1, show_default=True,
              help="Repetitions; two or more add mean, median, stddev and cv rows."),
        _flag("benchmark_min_time", default="0.5s", show_default=True, metavar="TIME",
              help="`<seconds>s` to run at least that long, or `<N>x` for exactly N iterations."),
        _flag("benchmark_min_warmup_time", type=float, default=0.0, show_default=True,
              metavar="SECONDS", help="Untimed warm-up before the first repetition."),
        _flag("benchmark_format", type=click.Choice(["console", "json", "csv"]),
              default="console", show_default=True, help="The report on stdout."),
        _flag("benchmark_out", default="", metavar="FILE", help="Also write the report to FILE."),
        _flag("benchmark_out_format", type=click.Choice(["console", "json", "csv"]),
              default="json", show_default=True, help="The format of --benchmark_out."),
        _flag("benchmark_report_aggregates_only", type=bool, default=False, is_flag=False,
              flag_value=True, metavar="[=BOOL]", help="Only the aggregate rows, in every report."),
        _flag("benchmark_display_aggregates_only", type=bool, default=False, is_flag=False,
              flag_value=True, metavar="[=BOOL]", help="Only the aggregate rows on stdout."),
        _flag("time_unit", type=click.Choice(["ms", "us", "ns"]), default=None,
              help="The unit of the times (default ms)."),
    ]

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        kwargs["benchmark"] = BenchmarkFlags(
            kwargs.pop("benchmark_repetitions"), kwargs.pop("benchmark_min_time"),
            kwargs.pop("benchmark_min_warmup_time"), kwargs.pop("benchmark_format"),
            kwargs.pop("benchmark_out"), kwargs.pop("benchmark_out_format"),
            kwargs.pop("benchmark_report_aggregates_only"),
            kwargs.pop("benchmark_display_aggregates_only"), kwargs.pop("time_unit"),
            kwargs.pop("driver_options"))
        return command(*args, **kwargs)

    for flag in reversed(flags):
        wrapper = flag(wrapper)
    return driver_flags(wrapper)


def print_reports(rows, context: dict, flags: BenchmarkFlags, out_file, statistics: str) -> None:
    """The report on stdout (--benchmark_format), --benchmark_out through amdgpu_cli.outputs,
    then allocator statistics on stderr (after the report, as iree-benchmark-module prints
    them)."""
    import sys

    from amdgpu_cli.tooling import benchmark as tool

    if flags.report_aggregates_only:
        rows = [r for r in rows if r.run_type == "aggregate"] or rows
    shown = rows
    if flags.display_aggregates_only:
        shown = [r for r in rows if r.run_type == "aggregate"] or rows
    width = tool.name_width(rows, flags.repetitions)

    def report(fmt: str, selected) -> str:
        if fmt == "json":
            return tool.json_text(context, selected)
        if fmt == "csv":
            return tool.csv_text(selected)
        return tool.console_text(selected, width)

    sys.stdout.write(report(flags.format, shown))
    sys.stdout.flush()
    if out_file is not None:
        from amdgpu_cli.outputs import write_outputs

        write_outputs([(out_file, report(flags.out_format, rows).encode())])
    if statistics:
        sys.stderr.write(statistics)
        sys.stderr.flush()


@click.command("benchmark", context_settings={"help_option_names": ["-h", "--help"]})
@module_flags("The function to time (default: every exported function without arguments).")
@_flag("batch_size", type=int, default=1, show_default=True,
       help="Iterations counted per call (modules that repeat their dispatches N times).")
@benchmark_flags
@parameter_flags
@profiling_flags
@replay_flags
def benchmark(device, module, function, input, batch_size, benchmark, parameters,
              parameter_mode, profiling, print_statistics, replay) -> None:
    """Time functions of an IREE module (.vmfb) and report like iree-benchmark-module."""
    import sys

    from amdgpu_cli.cli.terminal import progress
    from amdgpu_cli.tooling import benchmark as tool

    if not module:
        raise click.UsageError("no --module= specified")
    options = tool.BenchmarkOptions(
        modules=module, devices=device, function=function, inputs=input, batch_size=batch_size,
        profiling=profiling, print_statistics=print_statistics, replay=replay,
        parameters=parameters, parameter_mode=parameter_mode, **benchmark.options)
    out_file = benchmark.out_file()  # a bad path fails now, before any timing
    with tool.Benchmarks(options) as benchmarks:
        context = tool.context()
        sys.stderr.write(tool.context_text(context))
        sys.stderr.flush()
        with progress("benchmarking") as show:
            rows = benchmarks.run(progress=show)
    statistics = benchmarks.session.statistics_text() if print_statistics else ""
    print_reports(rows, context, benchmark, out_file, statistics)

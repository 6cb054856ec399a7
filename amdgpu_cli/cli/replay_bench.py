"""`amdgpu-replay bench`: time whole executions of a .ireereplay, as iree-benchmark-replay does.

Flags as iree-benchmark-replay's: --device (repeatable), --replay_scope, --replay_file_remap,
--replay_executable_substitution, the Google Benchmark flags amdgpu-benchmark takes and the
--device_profiling_* flags (a capture flushed after every iteration). The loop is
amdgpu_cli.replay.bench; the reports are amdgpu-benchmark's (console, JSON, CSV).
"""

from __future__ import annotations

import click

from amdgpu_cli.cli.benchmark import benchmark_flags, print_reports
from amdgpu_cli.cli.replay_run import target_flags
from amdgpu_cli.cli.run import _flag, profiling_flags


@click.command("bench", context_settings={"help_option_names": ["-h", "--help"]})
@target_flags
@_flag("replay_scope", default="", metavar="NAME",
       help="Time only what lies inside the replay's scope markers of this name "
            "(manual time; the whole replay still runs).")
@benchmark_flags
@profiling_flags
@click.argument("files", nargs=-1, metavar="FILE")
def command(device, replay_file_remap, replay_executable_substitution, replay_scope, benchmark,
            profiling, print_statistics, files) -> None:
    """Time executions of a HAL replay (.ireereplay) (iree-benchmark-replay)."""
    import sys

    from amdgpu_cli.cli.terminal import progress
    from amdgpu_cli.errors import AmdgpuCliError
    from amdgpu_cli.replay import executor
    from amdgpu_cli.replay.bench import ReplayBenchmark
    from amdgpu_cli.tooling import benchmark as tool

    if len(files) != 1:
        raise AmdgpuCliError("expected one replay file path argument", status="INVALID_ARGUMENT")
    options = tool.BenchmarkOptions(modules=list(files), devices=device, profiling=profiling,
                                    print_statistics=print_statistics, **benchmark.options)
    from amdgpu_cli.tooling.profiling import Capture

    capture = Capture.from_flags(profiling)  # flags and the output path, checked now (or None)
    out_file = benchmark.out_file()  # a bad --benchmark_out path fails before any work
    remaps = executor.parse_file_remaps(replay_file_remap)
    substitutions = executor.parse_substitutions(replay_executable_substitution)
    with ReplayBenchmark(files[0], options, scope=replay_scope, remaps=remaps,
                         substitutions=substitutions, capture=capture) as bench:
        context = tool.context()
        sys.stderr.write(tool.context_text(context))
        sys.stderr.flush()
        with progress("benchmarking") as show:
            rows = bench.run(progress=show)
        statistics = ("".join(d.allocator.statistics_text() for d in bench.devices)
                      if print_statistics else "")
    print_reports(rows, context, benchmark, out_file, statistics)

"""`amdgpu-replay run`: execute a .ireereplay once on our devices, as iree-run-replay does.

Flags as iree-run-replay's: --device (repeatable; the n-th device binds the n-th captured device;
default as amdgpu-run's), --replay_file_remap, --replay_executable_substitution, the
--device_profiling_* flags (a Capture begun before the execution and ended after it, as amdgpu-run
does). Success prints nothing; errors are one status line (exit 1). `--verify` (ours) checks the
results against a capture's results sidecar (amdgpu_cli.replay.verify). The work is
amdgpu_cli.replay.executor's plan + execute.
"""

from __future__ import annotations

import click

from amdgpu_cli.cli.run import _flag, driver_flags, profiling_flags


def target_flags(command):
    """--device, --replay_file_remap and --replay_executable_substitution: where a replay runs
    and what it reads instead of what was captured (shared by run and bench)."""
    flags = [
        _flag("device", multiple=True, metavar="URI",
              help="A HAL device URI (local-sync, local-task, amdgpu...); repeat for several, "
                   "in the captured device order."),
        _flag("replay_file_remap", multiple=True, metavar="CAPTURED_PREFIX=REPLAY_PREFIX",
              help="Rewrite the longest matching prefix of captured external file paths; "
                   "repeatable."),
        _flag("replay_executable_substitution", multiple=True, metavar="ID[@FORMAT]=PATH",
              help="Replace a captured executable (ID, or `all`) with the file at PATH; "
                   "repeatable."),
    ]
    for flag in reversed(flags):
        command = flag(command)
    return command


@click.command("run", context_settings={"help_option_names": ["-h", "--help"]})
@target_flags
@driver_flags
@_flag("verify", is_flag=True,
       help="Check the replay's results against what the captured run read back (the "
            "FILE.results sidecar of a capture made with --device_replay_results); prints "
            "[SUCCESS] or [FAILED] blocks as --expected_output does, exit 1 on a mismatch.")
@profiling_flags
@click.argument("files", nargs=-1, metavar="FILE")
def command(device, replay_file_remap, replay_executable_substitution,
            driver_options, verify, profiling, print_statistics, files) -> None:
    """Execute a HAL replay (.ireereplay) once (iree-run-replay)."""
    import sys

    from amdgpu_cli.errors import AmdgpuCliError
    from amdgpu_cli.hal.registry import default_registry
    from amdgpu_cli.replay import executor
    from amdgpu_cli.tooling.run import DEFAULT_DEVICE

    if len(files) != 1:
        raise AmdgpuCliError("expected one replay file path argument", status="INVALID_ARGUMENT")
    from amdgpu_cli.tooling.profiling import Capture, capturing

    capture = Capture.from_flags(profiling)  # flags and the output path, checked now (or None)
    remaps = executor.parse_file_remaps(replay_file_remap)
    substitutions = executor.parse_substitutions(replay_executable_substitution)
    registry = default_registry().with_options(driver_options)
    outcomes = None
    replay_file = executor.open_replay(files[0])
    try:
        plan = executor.plan(replay_file)
        if verify:
            from amdgpu_cli.replay.verify import checking_plan, load_results

            plan, outcomes = checking_plan(plan, replay_file, load_results(files[0]))
    finally:
        replay_file.close()
    devices = registry.create_devices(list(device), default=DEFAULT_DEVICE)
    try:
        with capturing(capture, devices):
            executor.execute(plan, devices, file_remaps=remaps, substitutions=substitutions)
        if print_statistics:
            sys.stderr.write("".join(d.allocator.statistics_text() for d in devices))
    finally:
        for d in devices:
            d.close()
    if outcomes is not None:
        from amdgpu_cli.replay.verify import report

        ok, text = report(outcomes)
        sys.stdout.write(text)
        sys.stdout.flush()
        if not ok:
            sys.exit(1)

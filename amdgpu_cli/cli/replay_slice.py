"""`amdgpu-replay slice`: cut one dispatch out of a .ireereplay into a replay of its own
(amdgpu_cli.replay.slice says what the slice holds and how its inputs are captured).

`slice --list F` prints one line per dispatch (number, record ordinal, executable, function,
workgroup count, bindings; `executed=no` marks a dispatch the replay never runs) to stdout.
`slice --dispatch=N F -o OUT` executes F on --device (repeatable, as `replay run`; default
local-task) up to dispatch N and writes the slice to OUT, then a one-line summary to stderr.
A bad N, a replay with no dispatches or a dispatch never executed: one `error:` line, exit 1;
flag misuse: exit 2.
"""

from __future__ import annotations

import click

from amdgpu_cli.cli.run import _flag, driver_flags


@click.command("slice", context_settings={"help_option_names": ["-h", "--help"]})
@_flag("dispatch", type=int, default=None, metavar="N",
       help="The dispatch to cut out (numbered from 0 in file order; see --list).")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Where to write the slice (.ireereplay; `-` for stdout).")
@click.option("--list", "list_", is_flag=True, help="List the replay's dispatches and exit.")
@_flag("device", multiple=True, metavar="URI",
       help="A HAL device URI to capture the inputs on (local-sync, local-task, amdgpu...); "
            "repeat for several, in the captured device order.")
@driver_flags
@click.argument("file")
def command(dispatch, output, list_, device, driver_options, file) -> None:
    """Write a replay holding only dispatch N of FILE, its inputs as captured data."""
    import sys

    from amdgpu_cli.replay import slice as slicer
    from amdgpu_cli.replay.reader import ReplayFile

    if list_:
        if dispatch is not None or output is not None:
            raise click.UsageError("--list takes no --dispatch or --output")
        with ReplayFile.open(file) as replay_file:
            rows = slicer.list_dispatches(replay_file)
        sys.stdout.write("".join(slicer.describe(row) + "\n" for row in rows))
        return
    if dispatch is None:
        raise click.UsageError("missing --dispatch=N (or --list)")
    if output is None:
        raise click.UsageError("missing -o/--output")

    from amdgpu_cli.hal.registry import default_registry
    from amdgpu_cli.outputs import OutputFile

    OutputFile(output)  # a bad path fails before any device opens (slice_dispatch checks again)
    registry = default_registry().with_options(driver_options)
    devices = registry.create_devices(list(device), default="local-task")
    try:
        result = slicer.slice_dispatch(file, dispatch, output, devices)
    finally:
        for d in devices:
            d.close()
    info = result.dispatch
    sys.stderr.write(
        f"slice of dispatch {info.number} (record {info.ordinal}, "
        f"{info.function_name or 'executable ' + str(info.executable_id)}, workgroups "
        f"{','.join(map(str, result.workgroup_count))}): {result.buffer_count} buffer(s), "
        f"{result.buffer_bytes} input bytes, {result.length} bytes written to {output}\n")

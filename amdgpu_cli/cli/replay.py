"""`amdgpu replay` / `amdgpu-replay`: IREE's replay tools (iree-dump-replay, iree-run-replay,
iree-benchmark-replay) as one group, plus `slice`.

Each subcommand lives in its own module (`cli/replay_<name>.py`, attribute `command`) and is
imported only when named, so `amdgpu-replay dump` does not import the HAL.
"""

from __future__ import annotations

import importlib

import click

_COMMANDS = {
    "dump": "Print a replay's records (iree-dump-replay).",
    "run": "Execute a replay on a device (iree-run-replay).",
    "bench": "Time a replay's execution (iree-benchmark-replay).",
    "slice": "Cut one dispatch out of a replay into a replay of its own.",
}


class _ReplayGroup(click.Group):
    def list_commands(self, ctx) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx, name):
        if name not in _COMMANDS:
            return None
        return importlib.import_module(f"amdgpu_cli.cli.replay_{name}").command


@click.group("replay", cls=_ReplayGroup,
             context_settings={"help_option_names": ["-h", "--help"]})
def replay() -> None:
    """Dump, run, benchmark and slice HAL replays (.ireereplay)."""

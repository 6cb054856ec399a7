"""`amdgpu replay` / `amdgpu-replay`: IREE's replay tools (iree-dump-replay, iree-run-replay,
iree-benchmark-replay) as one group, plus `slice`.

Each subcommand lives in its own module (`cli/replay_<name>.py`, attribute `command`, named in
`_COMMANDS`) and is imported only when named, so `amdgpu-replay dump` does not import the HAL.
"""

from __future__ import annotations

import importlib

import click

# subcommand -> the module whose `command` it is
_COMMANDS = {
    "dump": "amdgpu_cli.cli.replay_dump",  # iree-dump-replay
    "run": "amdgpu_cli.cli.replay_run",  # iree-run-replay
    "bench": "amdgpu_cli.cli.replay_bench",  # iree-benchmark-replay
    "slice": "amdgpu_cli.cli.replay_slice",  # one dispatch cut out into a replay of its own
}


class _ReplayGroup(click.Group):
    def list_commands(self, ctx) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx, name):
        if name not in _COMMANDS:
            return None
        return importlib.import_module(_COMMANDS[name]).command


@click.group("replay", cls=_ReplayGroup,
             context_settings={"help_option_names": ["-h", "--help"]})
def replay() -> None:
    """Dump, run, benchmark and slice HAL replays (.ireereplay)."""

"""`amdgpu-replay dump` (iree-dump-replay): a replay's header, summary and records as text or
JSONL, byte for byte what IREE 3.13.0 prints (amdgpu_cli.replay.dump).

A --format other than text or jsonl fails as IREE's does (INVALID_ARGUMENT, exit 1); a missing
or extra file argument is a usage error (exit 2), as in our other commands. `--format jsonl`
(space-separated) is accepted too.
"""

from __future__ import annotations

import click


@click.command("dump", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--format", "fmt", default="text", show_default=True, metavar="text|jsonl",
              help="Output format: text (one line per record) or jsonl (one JSON object per "
                   "line; payload bytes appear as replay-file ranges).")
@click.argument("file")
def command(fmt: str, file: str) -> None:
    """Print FILE's header, summary and records, as iree-dump-replay does."""
    from amdgpu_cli.replay.dump import dump_file

    dump_file(file, fmt)

"""`amdgpu-replay`'s console script. `amdgpu-replay dump [--format=text|jsonl] FILE` runs here
without importing click (a third of a dump's start-up: iree-dump-replay answers in tens of
milliseconds, and so should we); every other command line goes to the click group
(amdgpu_cli.cli.replay) as before."""

from __future__ import annotations

import sys


def _dump_arguments(args: list[str]) -> tuple[str, str, bool] | None:
    """(format, file, debug) when `args` is a plain dump command line, else None."""
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    if len(args) < 2 or args[0] != "dump":
        return None
    fmt, rest = "text", args[1:]
    if rest[0].startswith("--format="):
        fmt, rest = rest[0][len("--format="):], rest[1:]
    if len(rest) != 1 or rest[0].startswith("-"):
        return None  # a usage error, --help, another flag: click says what is wrong
    return fmt, rest[0], debug


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    fast = _dump_arguments(args)
    if fast is None:
        from amdgpu_cli.cli.main import replay_main

        replay_main(argv)
        return
    from amdgpu_cli.cli.boundary import enter, guarded
    from amdgpu_cli.replay.dump import dump_file

    fmt, path, debug = fast

    def run() -> None:
        with guarded(debug):
            dump_file(path, fmt)
            sys.stdout.flush()

    enter(run, argv)


if __name__ == "__main__":
    main()

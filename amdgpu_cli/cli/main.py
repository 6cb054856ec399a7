"""Entry points. `amdgpu` is the root group; `amdgpu-profile` etc. enter its subcommands directly.

This is the one place errors become exit statuses: project errors print as one line on stderr with
exit 1 (usage errors 2); `--debug` anywhere on the command line shows the traceback instead.

Run as console scripts (no `argv` given), the entry points end the process with `os._exit` once
stdout and stderr are flushed: tearing down the interpreter (numpy's and every module's objects,
OpenBLAS's threads) costs tens of milliseconds of a short run and releases nothing the OS does not.
Everything with an effect outside the process is finished by then: commands close their devices
and write output files atomically before they return, and no finalizer runs at exit (each one is
registered with `atexit = False`). Called with `argv` (tests, embedding), they raise SystemExit.
Console scripts also default OPENBLAS_NUM_THREADS to 1: the tools never call BLAS, and the worker
threads OpenBLAS starts when numpy is imported spin on the cores the local-task pool needs.
"""

from __future__ import annotations

import sys

from amdgpu_cli import __version__


def _root():
    """The `amdgpu` group and its subcommands (click is imported here: `amdgpu-profile` runs
    plain command lines without it)."""
    import click

    from amdgpu_cli.cli.benchmark import benchmark
    from amdgpu_cli.cli.devices import dump_devices
    from amdgpu_cli.cli.profile import profile
    from amdgpu_cli.cli.replay import replay
    from amdgpu_cli.cli.run import run

    @click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
    @click.version_option(__version__, prog_name="amdgpu")
    def cli() -> None:
        """IREE's run, profile and replay tools for AMD GPUs (and the CPU and CUDA drivers).

        Add --debug anywhere to see tracebacks for errors.
        """

    for command in (benchmark, dump_devices, profile, replay, run):
        cli.add_command(command)
    return cli


def _run(command, prog_name: str, argv: list[str] | None = None) -> None:
    import click

    from amdgpu_cli.cli.boundary import guarded
    from amdgpu_cli.cli.terminal import error

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    if isinstance(command, click.Group) and not args:
        names = ", ".join(sorted(command.commands))
        error(f"missing command (one of: {names}; see '{prog_name} --help')")
        sys.exit(2)
    with guarded(debug):
        try:
            try:
                command.main(args=args, prog_name=prog_name, standalone_mode=False)
            except SystemExit:
                # click turns EPIPE into exit 1 after wrapping the streams; a reader that went
                # away is not an error for a report, so take it as the broken pipe it was.
                if isinstance(sys.stdout, click.utils.PacifyFlushWrapper):
                    raise BrokenPipeError from None
                raise
            # Inside the guard: a reader that went away shows here, as a BrokenPipeError.
            sys.stdout.flush()
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except click.exceptions.Abort:
            error("aborted")
            sys.exit(130)
        except click.UsageError as e:
            if debug:
                raise
            hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
            error(f"{e.format_message()}{hint}")
            sys.exit(2)
        except click.ClickException as e:
            if debug:
                raise
            error(e.format_message())
            sys.exit(e.exit_code)


def _enter(command, prog_name: str, argv: list[str] | None) -> None:
    """Runs `command`; a console script (`argv` None) then ends without interpreter teardown."""
    from amdgpu_cli.cli.boundary import enter

    enter(lambda: _run(command, prog_name, argv), argv)


def main(argv: list[str] | None = None) -> None:
    _enter(_root(), "amdgpu", argv)


def profile_main(argv: list[str] | None = None) -> None:
    # A plain command line runs without click (cli/profile_commands.py); any other goes to the
    # click commands, for their help and usage errors.
    from amdgpu_cli.cli.boundary import enter, guarded
    from amdgpu_cli.cli.profile_commands import plain

    args = list(sys.argv[1:] if argv is None else argv)
    call = plain([a for a in args if a != "--debug"])
    if call is None:
        from amdgpu_cli.cli.profile import profile

        _enter(profile, "amdgpu-profile", argv)
        return

    def run_plain() -> None:
        with guarded("--debug" in args):
            call()
            sys.stdout.flush()  # inside the guard: a reader that went away is a BrokenPipeError

    enter(run_plain, argv)


def run_main(argv: list[str] | None = None) -> None:
    # Only the run command: `amdgpu-run` need not import (and build) the profile commands.
    from amdgpu_cli.cli.run import run

    _enter(run, "amdgpu-run", argv)


def benchmark_main(argv: list[str] | None = None) -> None:
    from amdgpu_cli.cli.benchmark import benchmark

    _enter(benchmark, "amdgpu-benchmark", argv)


def replay_main(argv: list[str] | None = None) -> None:
    from amdgpu_cli.cli.replay import replay

    _enter(replay, "amdgpu-replay", argv)

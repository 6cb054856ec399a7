"""`amdgpu-profile`'s plain command-line parser (cli/profile_commands.py) against click's.

The console script runs a plain command line without importing click; every line it takes must
mean exactly what click's commands (cli/profile.py) make of it, and every line click would reject
must go to click (so its usage messages stay the only ones). Click is the truth here: each line,
hand-picked or drawn at random from the flags' spellings and values, is parsed by both.
"""

from __future__ import annotations

import random
import subprocess
import sys

import click
import pytest

from amdgpu_cli.cli.profile import profile
from amdgpu_cli.cli.profile_commands import COMMANDS, parse


def _click_parse(args: list[str]):
    """What click's command makes of `args`: (command, params) or the exception it raises."""
    command = profile.commands.get(args[0]) if args else None
    if command is None:
        return click.UsageError("no such command")
    try:
        ctx = command.make_context(args[0], list(args[1:]))
    except (click.UsageError, click.exceptions.Exit) as e:
        return e
    return args[0], ctx.params


def _agrees(args: list[str]) -> None:
    parsed = parse(list(args))
    if parsed is None:
        return
    truth = _click_parse(args)
    assert not isinstance(truth, Exception), (args, truth)
    name, params = truth
    command, file, fmt, options = parsed
    assert command == name
    assert {"file": file, "fmt": fmt, **options} == params, args


def test_commands_take_the_options_click_declares():
    for name, takes in COMMANDS.items():
        declared = {p.name for p in profile.commands[name].params}
        assert declared == {"file", *takes}, name
    assert set(profile.commands) - set(COMMANDS) == {"plot"}  # plot always goes through click


@pytest.mark.parametrize("args", [
    ["summary", "b.ireeprof"],
    ["summary", "--format=jsonl", "b.ireeprof"],
    ["summary", "b.ireeprof", "--format", "text"],
    ["dispatch", "--format=jsonl", "--dispatch_events", "b"],
    ["dispatch", "--format=jsonl", "--dispatch-events", "--filter=*x*", "--id=7", "b"],
    ["executable", "--id", "18446744073709551616", "b"],
    ["command", "--id=-99999999999999999999", "--filter=", "b"],
    ["queue", "--filter", "a?c", "b"],
    ["counter", "--format=jsonl", "--counter_samples", "b"],
    ["counter", "--format=jsonl", "--counter-samples", "--id= 12 ", "b"],
    ["memory", "--id=+3", "b"],
    ["export", "b", "-o", "out.json", "--format=perfetto"],
    ["export", "--output=x", "b"],
    ["explain", "--format=jsonl", "--id=1_000", "b"],
    ["cat", "--format=jsonl", ""],
])
def test_plain_lines_parse_as_click_parses_them(args):
    assert parse(args) is not None, args
    _agrees(args)


@pytest.mark.parametrize("args", [
    [], ["summary"], ["nosuch", "b"], ["summary", "-h"], ["summary", "--help", "b"],
    ["summary", "b", "c"], ["summary", "--format=xml", "b"], ["summary", "--filter=x", "b"],
    ["dispatch", "--dispatch_events", "b"], ["counter", "--counter_samples", "b"],
    ["dispatch", "--id=abc", "b"], ["dispatch", "--id", "-5", "b"], ["dispatch", "--format"],
    ["dispatch", "--dispatch_events=1", "--format=jsonl", "b"], ["dispatch", "--", "b"],
    ["dispatch", "--id=1", "--id=2", "b"], ["export", "-o=x", "b"], ["export", "-ox", "b"],
    ["export", "--format=jsonl", "b"], ["summary", "-"], ["plot", "-o", "x.png", "b"],
    ["summary", "--fo=jsonl", "b"],
])
def test_other_lines_go_to_click(args):
    assert parse(args) is None


def test_random_lines_agree_with_click():
    tokens = ["b.ireeprof", "c", "--format=jsonl", "--format=text", "--format", "jsonl", "text",
              "--format=perfetto", "--format=ireeperf-jsonl", "--filter=*", "--filter", "x*",
              "--id=3", "--id", "4", "--id=-1", "--id=x", "--dispatch_events",
              "--dispatch-events", "--counter_samples", "--counter-samples", "-o", "out",
              "--output=o", "--output", "-", "--", "-h", "--debug", "=", ""]
    rng = random.Random(19)
    taken = 0
    for _ in range(8000):
        command = rng.choice([*COMMANDS, "plot", "bogus"])
        args = [command, *(rng.choice(tokens) for _ in range(rng.randint(0, 6)))]
        taken += parse(args) is not None
        _agrees(args)
    assert taken > 200  # the draw exercises the plain parser, not only its refusals


def test_console_script_runs_plain_lines_without_click(tmp_path):
    # The point of the plain parser: a report that needs no click does not import it.
    bundle = tmp_path / "empty.ireeprof"
    bundle.write_bytes(b"")
    code = ("import sys; from amdgpu_cli.cli.main import profile_main\n"
            "try:\n    profile_main(sys.argv[1:])\n"
            "except SystemExit as e:\n    print(e.code, 'click' in sys.modules)\n")
    plain = subprocess.run([sys.executable, "-c", code, "summary", str(bundle)],
                           capture_output=True, text=True)
    usage = subprocess.run([sys.executable, "-c", code, "summary", "--format=xml", str(bundle)],
                           capture_output=True, text=True)
    assert plain.stdout.split() == ["1", "False"], plain
    assert plain.stderr.startswith("error: ") and plain.stderr.count("\n") == 1
    assert usage.stdout.split() == ["2", "True"], usage
    assert "Invalid value for '--format'" in usage.stderr


def test_every_report_command_names_modules_that_exist():
    import importlib

    from amdgpu_cli.cli.profile_commands import _MODULES

    assert set(_MODULES) == set(COMMANDS) - {"export"}
    for name, (first, exact, text) in _MODULES.items():
        assert first is None or hasattr(importlib.import_module(first), "report_file"), name
        assert hasattr(importlib.import_module(exact), "report"), name
        assert hasattr(importlib.import_module(text), "render"), name

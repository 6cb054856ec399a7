"""What each `amdgpu-profile` command does once its flags are parsed, and a parser for plain
command lines: both without click.

A report on a small bundle is mostly start-up, and importing click is a third of it. `plain(args)`
takes the command lines that need none of click's machinery (a known command, its own long options
each given at most once with a valid value, one file) and returns the call that runs them; every
other line (help, a usage error, an unknown or repeated option, `--`, a file named like an option)
gives None and goes to the click commands of cli/profile.py, whose messages stay the only usage
messages. Both paths parse into the same values and call the same functions below, so a command
behaves the same whichever parsed it (tests/test_cli_profile_plain.py compares the two).
"""

from __future__ import annotations

import importlib
import sys

FORMATS = ("text", "jsonl")
EXPORT_FORMATS = ("ireeperf-jsonl", "perfetto")
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1

# The options each command takes, by parameter name (cli/profile.py declares the same ones to
# click, with their help; test_cli_profile_plain checks the two agree).
COMMANDS: dict[str, tuple[str, ...]] = {
    "cat": ("fmt",),
    "summary": ("fmt",),
    "statistics": ("fmt",),
    "explain": ("fmt", "filter_", "id_"),
    "dispatch": ("fmt", "filter_", "id_", "dispatch_events"),
    "executable": ("fmt", "filter_", "id_", "dispatch_events"),
    "command": ("fmt", "filter_", "id_", "dispatch_events"),
    "queue": ("fmt", "filter_", "id_", "dispatch_events"),
    "counter": ("fmt", "filter_", "id_", "counter_samples"),
    "memory": ("fmt", "filter_", "id_"),
    "export": ("fmt", "output"),
}
# Spellings on the command line -> parameter name; flags take no value.
_SPELLINGS = {"--format": "fmt", "--filter": "filter_", "--id": "id_", "--output": "output",
              "-o": "output", "--dispatch_events": "dispatch_events",
              "--dispatch-events": "dispatch_events", "--counter_samples": "counter_samples",
              "--counter-samples": "counter_samples"}
_FLAGS = ("dispatch_events", "counter_samples")
_DEFAULTS = {"filter_": "*", "id_": -1, "dispatch_events": False, "counter_samples": False,
             "output": "-"}

# Each report's modules, imported when the command runs: (its quicker way to the rows, where it
# has one: `report_file(path, options)`, None where the report must run over the opened bundle;
# the report itself: `report(bundle, options)`; its text renderer).
_MODULES = {
    "cat": (None, "amdgpu_cli.profile.reports.cat", "amdgpu_cli.cli.profile_text.cat"),
    "summary": ("amdgpu_cli.profile.reports.summary_native", "amdgpu_cli.profile.reports.summary",
                "amdgpu_cli.cli.profile_text.summary"),
    "statistics": ("amdgpu_cli.profile.reports.statistics_native",
                   "amdgpu_cli.profile.reports.statistics",
                   "amdgpu_cli.cli.profile_text.statistics"),
    "explain": ("amdgpu_cli.profile.reports.explain_native", "amdgpu_cli.profile.reports.explain",
                "amdgpu_cli.cli.profile_text.explain"),
    "dispatch": ("amdgpu_cli.profile.reports.dispatch", "amdgpu_cli.profile.reports.dispatch",
                 "amdgpu_cli.cli.profile_text.dispatch"),
    "executable": ("amdgpu_cli.profile.reports.executable",
                   "amdgpu_cli.profile.reports.executable",
                   "amdgpu_cli.cli.profile_text.executable"),
    "command": ("amdgpu_cli.profile.reports.command", "amdgpu_cli.profile.reports.command",
                "amdgpu_cli.cli.profile_text.command"),
    "queue": (None, "amdgpu_cli.profile.reports.queue", "amdgpu_cli.cli.profile_text.queue"),
    "counter": (None, "amdgpu_cli.profile.reports.counter", "amdgpu_cli.cli.profile_text.counter"),
    "memory": (None, "amdgpu_cli.profile.reports.memory", "amdgpu_cli.cli.profile_text.memory"),
}


def clamp_id(value: int) -> int:
    """iree-profile parses --id as a signed 64-bit integer (saturating); negative means "all"."""
    return max(I64_MIN, min(I64_MAX, value))


def usage_problem(fmt: str, dispatch_events: bool = False, counter_samples: bool = False
                  ) -> str | None:
    """What is wrong with a combination of valid options, if anything (a usage error)."""
    if dispatch_events and fmt != "jsonl":
        return "--dispatch_events requires --format=jsonl"
    if counter_samples and fmt != "jsonl":
        return "--counter_samples requires --format=jsonl"
    return None


def run(command: str, file: str, fmt: str, **options) -> None:
    """Runs one parsed command (its options named as in `COMMANDS`, each one it takes given)."""
    if command == "export":
        export(file, fmt, options["output"])
        return
    report(command, file, fmt, filter=options.get("filter_", "*"), id=options.get("id_", -1),
           dispatch_events=options.get("dispatch_events", False),
           counter_samples=options.get("counter_samples", False))


def report(command: str, path: str, fmt: str, **options) -> None:
    """Runs one report and writes its rows as JSONL or as text: its quicker way first, where it
    has one and that gives rows, else the report over the opened bundle."""
    from amdgpu_cli.cli.terminal import progress
    from amdgpu_cli.profile.options import ReportOptions

    opts = ReportOptions(**options)
    with progress(f"{command}: {path}"):
        first, exact, _ = _MODULES[command]
        rows = None if first is None else importlib.import_module(first).report_file(path, opts)
        if rows is None:
            from amdgpu_cli.profile.reader import Bundle

            rows = importlib.import_module(exact).report(Bundle.open(path), opts)
        if fmt != "jsonl" and hasattr(rows, "__next__"):
            rows = list(rows)  # a lazy report: do the work while the activity bar is up
    if fmt == "jsonl":
        from amdgpu_cli.profile.jsonl import write_rows

        write_rows(sys.stdout, rows)
        return
    renderer = importlib.import_module(_MODULES[command][2])
    if getattr(renderer, "RICH", False):
        from amdgpu_cli.cli.terminal import console

        renderer.render(rows, console())
    else:
        renderer.render(rows, sys.stdout)


def open_bundle(path: str):
    from amdgpu_cli.cli.terminal import progress
    from amdgpu_cli.profile.reader import Bundle

    with progress(f"reading {path}"):
        return Bundle.open(path)


def export(file: str, fmt: str, output: str) -> None:
    from amdgpu_cli.cli.terminal import output_stream

    bundle = open_bundle(file)
    if fmt == "perfetto":
        from amdgpu_cli.profile.perfetto import write_trace

        with output_stream(output) as out:
            write_trace(bundle, out)
    else:
        from amdgpu_cli.profile.reports.export import write

        with output_stream(output) as out:
            write(bundle, out)  # preformatted lines: dict rows are too slow for 1M events


def plain(args: list[str]):
    """The call that runs `args` (a command and its arguments, `--debug` taken out) when they are
    a plain command line, else None (click parses it)."""
    parsed = parse(args)
    if parsed is None:
        return None
    command, file, fmt, options = parsed
    return lambda: run(command, file, fmt, **options)


def parse(args: list[str]) -> tuple[str, str, str, dict] | None:
    """(command, file, format, options by parameter name) of a plain command line, else None."""
    if not args or args[0] not in COMMANDS:
        return None
    command, takes = args[0], COMMANDS[args[0]]
    values: dict[str, object] = {}
    file = None
    rest = iter(args[1:])
    for token in rest:
        if not token.startswith("-"):
            if file is not None:
                return None
            file = token
            continue
        spelling, eq, value = token.partition("=")
        name = _SPELLINGS.get(spelling)
        if name not in takes or name in values or (eq and spelling == "-o"):
            return None
        if name in _FLAGS:
            if eq:
                return None
            values[name] = True
            continue
        if not eq:
            value = next(rest, None)
            if value is None or value.startswith("-"):
                return None
        values[name] = value
    if file is None:
        return None
    fmt = values.pop("fmt", FORMATS[0] if command != "export" else EXPORT_FORMATS[0])
    if fmt not in (EXPORT_FORMATS if command == "export" else FORMATS):
        return None
    if "id_" in values:
        try:
            values["id_"] = clamp_id(int(values["id_"]))
        except ValueError:
            return None
    options = {name: values.get(name, _DEFAULTS[name]) for name in takes if name != "fmt"}
    if usage_problem(fmt, options.get("dispatch_events", False),
                     options.get("counter_samples", False)):
        return None
    return command, file, fmt, options

"""Speed and peak memory of `amdgpu-profile` against IREE's `iree-profile`, every report, three sizes.

Usage:
  python bench/profile_speed.py [--sizes=20,300,1500] [--runs=N] [--work=DIR] [--native]
                                [--no-bytecode-cache] [FILE]

Bundles (made once, cached in DIR, default build/bench): examples/models/attention.mlir is
compiled for llvm-cpu and run under

  iree-benchmark-module --device=local-task --module=attention.vmfb <its RUN-ARGS>
      --benchmark_min_time=<N>x --device_profiling_mode=queue-events,host-execution,memory-events

with N = round(size_MB * 1e6 / 3400) iterations (a capture takes about 3400 bytes per iteration:
20 MB ~ 5900x, 300 MB ~ 88000x, 1500 MB ~ 440000x); --sizes picks which (MB, default all three).
A tiny bundle (a few KB: one iree-run-module call of the same model, same profiling modes) gives
the start-up rows. Captures are written to NAME.partial and renamed only once complete. With FILE,
that bundle alone is timed instead.

Reports, each run as `TOOL REPORT FILE` with stdout to /dev/null:
  summary|statistics|explain|executable|dispatch|command|queue|memory --format=jsonl,
  dispatch --dispatch_events --format=jsonl, export --format=ireeperf-jsonl,
  export --format=perfetto (ours alone: iree-profile has no such export; its columns show '-'),
  and the text `summary` (timed only: the two text layouts differ by design).
The tiny bundle gets `summary` and `summary --format=jsonl` only.

Before a JSONL report is timed, both tools write it once to files in a temporary directory under
DIR, which are compared by streamed SHA-256 (`identical` / `DIFFERENT` in the output column) and
then deleted; that run is also the warm-up. Text and perfetto rows get one warm-up run to /dev/null,
except on bundles of 1 GB or more, where the JSONL rows before them have already warmed the page
cache and Python bytecode.

Wall time is the best of --runs timed runs per tool, ours and IREE's alternated (default 3, and 1
for bundles of 1 GB or more, where one report takes ours a minute or two; an explicit --runs applies
to every bundle). Peak RSS is the largest ru_maxrss over those same timed runs. Each command is
started through a small launcher (`python -S -E -c ...`, bench/timing.py run_measured) that forks,
execs the tool and reaps it with wait4(), timing fork to reap: Linux folds a process's pre-exec
address space into its ru_maxrss, so forking the tool straight from this (larger) process would
report this process's size. The launcher is about 8 MB resident; what its forked child holds at
exec, about 5 MB, is a floor under every RSS figure (printed as `RSS floor`: the launcher running
/bin/true), below both tools' footprints on any real bundle (the bare native iree-profile alone
needs about 2 MB on the tiny bundle, so --native start-up rows show the floor). MB are 10^6 bytes.

`ours` is the `amdgpu-profile` console script and `iree` the `iree-profile` console script pip
installs (a Python wrapper that runs the native tool as a subprocess: its time includes that
interpreter's start-up, its RSS is the larger of the wrapper's and the native tool's, since wait4
counts waited-for descendants); --native times the bare binary inside the iree package instead.
Both scripts come from this interpreter's scripts directory, so no shell shims (pyenv, conda) sit in
front. Ratios are ours / iree (below 1.0: we are faster or smaller). Python bytecode is cached in
DIR/pycache as in any install, even where PYTHONDONTWRITEBYTECODE is set; --no-bytecode-cache times
what that setting costs. The last lines give, per bundle, the worst time and RSS ratios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# bench/ is sys.path[0]
from timing import BenchError, Measured, child_env, console_script, run_measured, same_file  # noqa: E402
from examples.compile import MODELS_DIR, CompileError, compile_model, run_args  # noqa: E402

MODEL = "attention"
PROFILING_MODES = "queue-events,host-execution,memory-events"
BYTES_PER_ITERATION = 3400  # measured for MODEL under PROFILING_MODES (IREE 3.13.0)
DEFAULT_SIZES_MB = (20, 300, 1500)
BIG_BUNDLE_BYTES = 1_000_000_000  # at or above: 1 timed run by default, no separate warm-ups
TINY_LIMIT_BYTES = 64 * 1024
CAPTURE_TIMEOUT_S = 3600
REPORT_TIMEOUT_S = 3600

# (label, arguments before FILE, kind): kind "jsonl" is compared with IREE's output, "text" is
# timed only, "ours" has no IREE counterpart.
REPORTS = [
    ("summary --format=jsonl", ["summary", "--format=jsonl"], "jsonl"),
    ("statistics --format=jsonl", ["statistics", "--format=jsonl"], "jsonl"),
    ("explain --format=jsonl", ["explain", "--format=jsonl"], "jsonl"),
    ("executable --format=jsonl", ["executable", "--format=jsonl"], "jsonl"),
    ("dispatch --format=jsonl", ["dispatch", "--format=jsonl"], "jsonl"),
    ("dispatch --dispatch_events --format=jsonl",
     ["dispatch", "--dispatch_events", "--format=jsonl"], "jsonl"),
    ("command --format=jsonl", ["command", "--format=jsonl"], "jsonl"),
    ("queue --format=jsonl", ["queue", "--format=jsonl"], "jsonl"),
    ("memory --format=jsonl", ["memory", "--format=jsonl"], "jsonl"),
    ("export --format=ireeperf-jsonl", ["export", "--format=ireeperf-jsonl"], "jsonl"),
    ("export --format=perfetto", ["export", "--format=perfetto", "--output=-"], "ours"),
    ("summary (text)", ["summary"], "text"),
]
STARTUP_REPORTS = [
    ("summary (text)", ["summary"], "text"),
    ("summary --format=jsonl", ["summary", "--format=jsonl"], "jsonl"),
]
LABEL_WIDTH = max(len(label) for label, _, _ in REPORTS)


# --- bundles ---------------------------------------------------------------------------------

def iterations_for(size_mb: float) -> int:
    return max(1, round(size_mb * 1e6 / BYTES_PER_ITERATION))


def _capture(out: Path, cmd_before_output: list[str], flag: str, what: str) -> Path:
    """Run a capture command writing OUT.partial (through `flag`), then rename it to OUT."""
    partial = out.with_name(out.name + ".partial")
    partial.unlink(missing_ok=True)
    cmd = [*cmd_before_output, f"{flag}={partial}"]
    print(f"capturing {out.name} ({what}) ...", file=sys.stderr, flush=True)
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=CAPTURE_TIMEOUT_S)
        if proc.returncode != 0 or not partial.is_file() or partial.stat().st_size == 0:
            lines = [ln.strip() for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
            raise BenchError(f"{Path(cmd[0]).name} failed capturing {out.name}: "
                             f"{lines[-1] if lines else f'exit status {proc.returncode}'}")
        os.replace(partial, out)
    except subprocess.TimeoutExpired:
        raise BenchError(f"{Path(cmd[0]).name} took over {CAPTURE_TIMEOUT_S} s "
                         f"capturing {out.name}") from None
    except OSError as e:
        raise BenchError(f"cannot capture {out.name}: {e}") from None
    finally:
        partial.unlink(missing_ok=True)
    return out


class Bundles:
    """The cached bundles in WORK, captured on first use; the model is compiled at most once."""

    def __init__(self, work: Path):
        self.work = work
        self.mlir = MODELS_DIR / f"{MODEL}.mlir"
        self._vmfb: Path | None = None

    def _module(self) -> Path:
        if self._vmfb is None:
            if not self.mlir.is_file():
                raise BenchError(f"no model {self.mlir}")
            self.work.mkdir(parents=True, exist_ok=True)
            try:
                self._vmfb = compile_model(self.mlir, self.work / f"{MODEL}.vmfb", target="llvm-cpu")
            except CompileError as e:
                raise BenchError(str(e)) from None
        return self._vmfb

    def sized(self, size_mb: float) -> Path:
        iterations = iterations_for(size_mb)
        out = self.work / f"{MODEL}-bench-{iterations}x.ireeprof"
        if out.is_file() and out.stat().st_size > 0:
            return out
        vmfb = self._module()
        free = shutil.disk_usage(self.work).free
        if free < 1.2 * size_mb * 1e6:
            raise BenchError(f"{free / 1e6:.0f} MB free in {self.work}, "
                             f"not enough for a {size_mb:g} MB bundle")
        cmd = [console_script("iree-benchmark-module"), "--device=local-task", f"--module={vmfb}",
               *run_args(self.mlir), f"--benchmark_min_time={iterations}x",
               f"--device_profiling_mode={PROFILING_MODES}"]
        return _capture(out, cmd, "--device_profiling_output",
                        f"{iterations} iterations, about {size_mb:g} MB")

    def tiny(self) -> Path:
        out = self.work / f"{MODEL}-tiny.ireeprof"
        if not (out.is_file() and out.stat().st_size > 0):
            vmfb = self._module()
            cmd = [console_script("iree-run-module"), "--device=local-task", f"--module={vmfb}",
                   *run_args(self.mlir), f"--device_profiling_mode={PROFILING_MODES}"]
            _capture(out, cmd, "--device_profiling_output", "one call")
        size = out.stat().st_size
        if size > TINY_LIMIT_BYTES:
            raise BenchError(f"{out} is {size} bytes; the start-up bundle should be a few KB")
        return out


# --- timing ----------------------------------------------------------------------------------

class Row:
    """One report on one bundle: best wall time and peak RSS per tool, and the output check."""

    def __init__(self, label: str):
        self.label = label
        self.best: list[float | None] = [None, None]
        self.rss_kib: list[int | None] = [None, None]
        self.output = ""
        self.identical: bool | None = None

    @property
    def time_ratio(self) -> float | None:
        ours, theirs = self.best
        return ours / theirs if ours is not None and theirs else None

    @property
    def rss_ratio(self) -> float | None:
        ours, theirs = self.rss_kib
        return ours / theirs if ours is not None and theirs else None


def _failure(who: str, m: Measured) -> str:
    reason = m.error or f"exit status {m.returncode}"
    return f"{who} failed: {reason[:70]}"


def time_report(label: str, args: list[str], kind: str, bundle: Path, tools: list[str],
                runs: int, warm_up: bool, scratch: Path, env: dict) -> Row:
    row = Row(label)
    cmds = [[tool, *args, str(bundle)] for tool in tools]
    if kind == "ours":
        cmds[1] = None
    ok = [cmd is not None for cmd in cmds]
    notes = []
    if kind == "jsonl":  # the comparison run, which is also the warm-up
        outs = [scratch / "ours.out", scratch / "iree.out"]
        try:
            results = [run_measured(cmd, env, stdout=out, timeout=REPORT_TIMEOUT_S)
                       for cmd, out in zip(cmds, outs)]
            for i, who in enumerate(("ours", "iree")):
                if results[i].returncode != 0:
                    ok[i] = False
                    notes.append(_failure(who, results[i]))
            if all(ok):
                row.identical = same_file(*outs)
                size = outs[0].stat().st_size
                notes.append(f"{'identical' if row.identical else 'DIFFERENT'} "
                             f"({_size_text(size)})")
        finally:
            for out in outs:
                out.unlink(missing_ok=True)
    elif warm_up:
        for i, cmd in enumerate(cmds):
            if cmd is not None:
                m = run_measured(cmd, env, timeout=REPORT_TIMEOUT_S)
                if m.returncode != 0:
                    ok[i] = False
                    notes.append(_failure(("ours", "iree")[i], m))
    for _ in range(runs):
        for i, cmd in enumerate(cmds):
            if not ok[i]:
                continue
            m = run_measured(cmd, env, timeout=REPORT_TIMEOUT_S)
            if m.returncode != 0:  # failed without a warm-up (big bundles) or only now
                ok[i] = False
                row.best[i] = row.rss_kib[i] = None
                notes.append(_failure(("ours", "iree")[i], m))
                continue
            row.best[i] = m.wall_s if row.best[i] is None else min(row.best[i], m.wall_s)
            row.rss_kib[i] = max(row.rss_kib[i] or 0, m.maxrss_kib)
    if kind == "text" and not notes:
        notes.append("text, not compared")
    elif kind == "ours" and not notes:
        notes.append("ours only")
    row.output = "; ".join(notes)
    return row


# --- printing --------------------------------------------------------------------------------

def _size_text(size: int) -> str:
    if size < 100_000:
        return f"{size / 1e3:.1f} KB"
    return f"{size / 1e6:.1f} MB"


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


HEADER = (f"{'report':{LABEL_WIDTH}s} {'ours s':>8s} {'iree s':>8s} {'ratio':>6s} "
          f"{'ours MB':>8s} {'iree MB':>8s} {'rss ratio':>10s}  output")


def print_row(row: Row) -> None:
    mb = [None if kib is None else kib * 1024 / 1e6 for kib in row.rss_kib]
    print(f"{row.label:{LABEL_WIDTH}s} {_num(row.best[0], '8.3f'):>8s} "
          f"{_num(row.best[1], '8.3f'):>8s} {_num(row.time_ratio, '6.2f'):>6s} "
          f"{_num(mb[0], '8.1f'):>8s} {_num(mb[1], '8.1f'):>8s} "
          f"{_num(row.rss_ratio, '10.2f'):>10s}  {row.output}", flush=True)


def verdict(name: str, rows: list[Row]) -> str:
    timed = [r for r in rows if r.time_ratio is not None]
    sized = [r for r in rows if r.rss_ratio is not None]
    parts = [f"{name}:"]
    if timed:
        worst = max(timed, key=lambda r: r.time_ratio)
        parts.append(f"worst time ratio {worst.time_ratio:.2f} ({worst.label}),")
    else:
        parts.append("no time ratio,")
    if sized:
        worst = max(sized, key=lambda r: r.rss_ratio)
        parts.append(f"worst RSS ratio {worst.rss_ratio:.2f} ({worst.label});")
    else:
        parts.append("no RSS ratio;")
    compared = [r for r in rows if r.identical is not None]
    same = sum(1 for r in compared if r.identical)
    parts.append(f"{same}/{len(compared)} JSONL outputs identical")
    failed = [r.label for r in rows if "failed" in r.output]
    if failed:
        parts.append(f"; failed: {', '.join(failed)}")
    return " ".join(parts)


# --- main ------------------------------------------------------------------------------------

def _native_iree_profile() -> str:
    try:
        from iree import _runtime_libs
    except ImportError:
        raise BenchError("the iree runtime package is not installed") from None
    path = Path(_runtime_libs.__path__[0]) / "iree-profile"
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise BenchError(f"no native iree-profile at {path}")
    return str(path)


def _parse_sizes(text: str) -> list[float]:
    try:
        sizes = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of sizes in MB: {text!r}") from None
    if not sizes or any(s <= 0 for s in sizes):
        raise argparse.ArgumentTypeError(f"sizes must be positive MB values: {text!r}")
    return sizes


def run(args) -> int:
    work = Path(args.work)
    ours = console_script("amdgpu-profile")
    native = _native_iree_profile()
    theirs = native if args.native else console_script("iree-profile")
    env = child_env(work, args.bytecode_cache)

    # Which bundles: (heading, path, start-up rows only, iterations captured or None). All are
    # captured before anything is timed.
    bundles: list[tuple[str, Path, bool, int | None]] = []
    if args.file:
        path = Path(args.file)
        if not path.is_file():
            raise BenchError(f"no such file {path}")
        bundles.append((path.name, path, False, None))
    else:
        maker = Bundles(work)
        tiny = maker.tiny()
        bundles.append(("start-up", tiny, True, None))
        for size_mb in args.sizes:
            path = maker.sized(size_mb)
            bundles.append((f"{size_mb:g} MB bundle", path, False,
                            iterations_for(size_mb)))
    work.mkdir(parents=True, exist_ok=True)

    floor_cmd = shutil.which("true") or "/bin/true"
    floor = run_measured([floor_cmd], env)
    cache = "cached" if args.bytecode_cache else "as the environment says"
    runs_text = (f"best of {args.runs} timed run{'s' * (args.runs > 1)}" if args.runs is not None
                 else "best of 3 timed runs (1 for bundles of 1 GB or more)")
    print(f"ours: {ours}\niree: {theirs}" + ("" if args.native else f"\n      (native: {native})"))
    print(f"{runs_text} per tool, alternated; wall seconds fork to exit, output to "
          f"/dev/null; peak RSS = max ru_maxrss over the timed runs; Python bytecode {cache}")
    print(f"RSS floor (the launcher running {floor_cmd}): {floor.maxrss_kib * 1024 / 1e6:.1f} MB")

    verdicts = []
    with tempfile.TemporaryDirectory(prefix="profile_speed-", dir=work) as scratch:
        for heading, path, startup, iterations in bundles:
            size = path.stat().st_size
            big = size >= BIG_BUNDLE_BYTES
            runs = args.runs if args.runs is not None else (1 if big else 3)
            detail = _size_text(size)
            if iterations:
                detail += f", {iterations} iterations, {size / iterations:.0f} B/iteration"
            print(f"\n== {heading}: {path} ({detail}); {runs} timed run{'s' * (runs > 1)} ==")
            print(HEADER)
            print("-" * len(HEADER), flush=True)
            rows = []
            for label, report_args, kind in (STARTUP_REPORTS if startup else REPORTS):
                row = time_report(label, report_args, kind, path, [ours, theirs], runs,
                                  warm_up=not big, scratch=Path(scratch), env=env)
                print_row(row)
                rows.append(row)
            verdicts.append(verdict(f"{heading} ({_size_text(size)})", rows))
    print("\nverdict (ratios are ours / iree):")
    for line in verdicts:
        print(f"  {line}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="profile_speed.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", help="bundle to time instead of the generated ones")
    parser.add_argument("--work", default="build/bench",
                        help="bundle cache and scratch directory (default build/bench)")
    parser.add_argument("--sizes", type=_parse_sizes, default=list(DEFAULT_SIZES_MB),
                        help="bundle sizes in MB, comma-separated (default 20,300,1500)")
    parser.add_argument("--runs", type=int, default=None,
                        help="timed runs per tool and report (default 3; 1 for bundles >= 1 GB)")
    parser.add_argument("--native", action="store_true",
                        help="time the bare iree-profile binary instead of pip's console script")
    parser.add_argument("--no-bytecode-cache", dest="bytecode_cache", action="store_false",
                        help="leave PYTHONDONTWRITEBYTECODE as it is (Python recompiles sources "
                             "on every run where it is set)")
    args = parser.parse_args(argv)
    if args.runs is not None and args.runs < 1:
        parser.error("--runs must be at least 1")
    try:
        return run(args)
    except BenchError as e:
        print(f"profile_speed.py: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("profile_speed.py: error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""Cold `amdgpu-run` on the 12.6 M-parameter encoder against `iree-run-module`: wall time, peak RSS.

Usage:
  python bench/model_speed.py [--work=DIR] [--runs=N] [--device=D] [--model=NAME] [--format=F]

The model is tests/onnx_models.py's `encoder4` (four transformer encoder layers, d_model 512,
12.6 M f32 parameters, imported from ONNX with its weights in an .irpa), compiled for llvm-cpu
and cached in DIR (default build/bench/onnx_models; $IREE_MODEL_CACHE if set). Both tools run
the same command:

  TOOL --device=local-task --module=encoder4.vmfb --parameters=model=encoder4.irpa
       --parameter_mode=MODE --function=main --input=@encoder4.input.npy

for MODE preload (IREE reads the whole file into memory at startup) and file (reads from the
file as needed), each timed as a whole process: wall clock from spawn to exit, output to
/dev/null, best of N runs after one warm-up, the two tools' runs alternated. Peak RSS is each
child's peak resident set as `/usr/bin/time -f %M` reports it (GNU time runs in front of both tools
alike; see run_once), the smallest over the same runs. Both console scripts come from this
interpreter's scripts directory, Python bytecode is cached under DIR/pycache as in any install, and
the two tools' stdout is compared first (`identical` / `DIFFERENT`).

Reference rows, as bench/run_speed.py's `floor`: the interpreter alone
(`python -c "import os; os._exit(0)"`), with click imported (`import os, click; os._exit(0)`), and
with amdgpu-run's own code loaded but no device or model (`amdgpu-run --list_drivers`), their wall
time and peak RSS. The last is the interpreter baseline the RSS goal allows on top of IREE's: what
running the tool costs before any model (iree-run-module's own such cost is a few MiB).

A last pair of rows runs the corpus' smallest model (`cnn`, 5.4 k parameters) the same way: what
amdgpu-run's resident set exceeds iree-run-module's by on a model with next to no weights is the
runtime baseline (the interpreter with our VM, HAL and native helpers loaded), a second allowance
the `vs runtime` column checks against.

Goals (ratio ours / IREE): wall <= 2.0; peak RSS <= IREE's + the interpreter baseline (the
`rss goal` column prints the allowance in MiB and ok / over).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for path in (REPO, REPO / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

# bench/ is sys.path[0]
from timing import BenchError, child_env, console_script, outputs_match  # noqa: E402

import onnx_models  # noqa: E402

MODES = ("preload", "file")
WALL_GOAL = 2.0
BARE_SCRIPT = "import os; os._exit(0)"
FLOOR_SCRIPT = "import os, click; os._exit(0)"  # what every amdgpu-run pays first (run_speed.py)
TOOL_FLOOR = "amdgpu-run --list_drivers"  # the interpreter with the tool's code, no model


TIME = "/usr/bin/time"  # GNU time: `-f %M` is its child's peak RSS in KiB


def run_once(cmd: list[str], env: dict, work: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS bytes, exit status) of one whole process.

    The peak RSS comes from GNU time run in front (its own fork starts small). A child this
    process spawns directly would report at least this process's peak RSS (Linux carries the
    parent's high-water mark into ru_maxrss across fork and exec), and this process holds the
    model's weights after building them. Without /usr/bin/time it falls back to os.wait4, and
    the table says so.
    """
    use_time = os.access(TIME, os.X_OK)
    report = work / "peak_rss.txt"
    argv = [TIME, "-f", "%M", "-o", str(report), *cmd] if use_time else cmd
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code  # already reaped
    if use_time:
        lines = report.read_text().split()
        rss = int(lines[-1]) * 1024 if lines and lines[-1].isdigit() else 0
    else:
        rss = usage.ru_maxrss * 1024
    return wall, rss, code


def measure_pair(ours: list[str], theirs: list[str], runs: int, env: dict, work: Path):
    """[(best wall, least peak RSS) or None] for both commands, their runs alternated after one
    warm-up each."""
    cmds = (ours, theirs)
    ok = [run_once(cmd, env, work)[2] == 0 for cmd in cmds]
    best = [[float("inf"), float("inf")] for _ in cmds]
    for _ in range(runs):
        for i, cmd in enumerate(cmds):
            if ok[i]:
                wall, rss, code = run_once(cmd, env, work)
                if code:
                    ok[i] = False
                    continue
                best[i] = [min(best[i][0], wall), min(best[i][1], rss)]
    return [tuple(b) if good else None for b, good in zip(best, ok)]


def _mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def _ms(s: float) -> str:
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.3f} s"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="model_speed.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default=os.environ.get("IREE_MODEL_CACHE",
                                                         "build/bench/onnx_models"),
                        help="model cache directory (default $IREE_MODEL_CACHE or "
                             "build/bench/onnx_models)")
    parser.add_argument("--runs", type=int, default=5,
                        help="processes per measurement after one warm-up, best taken (default 5)")
    parser.add_argument("--device", default="local-task", help="device URI (default local-task)")
    parser.add_argument("--model", default="encoder4", choices=onnx_models.MODELS,
                        help="corpus model (default encoder4)")
    parser.add_argument("--format", default="irpa", choices=("irpa", "safetensors", "gguf"),
                        help="parameter file format (default irpa)")
    args = parser.parse_args(argv)
    work = Path(args.work)
    try:
        ours_run, iree_run = console_script("amdgpu-run"), console_script("iree-run-module")
        work.mkdir(parents=True, exist_ok=True)
        print(f"building {args.model} in {work} ...", file=sys.stderr, flush=True)
        model = onnx_models.build(args.model, work)
    except (BenchError, onnx_models.ModelError) as e:
        print(f"model_speed.py: error: {e}", file=sys.stderr)
        return 1
    env = child_env(work)
    size = model.parameters(args.format).stat().st_size
    print(f"model: {args.model}, {onnx_models.parameter_count(args.model):,} parameters, "
          f"{model.parameters(args.format).name} {_mib(size)}; device {args.device}")
    print(f"ours: {ours_run}\nIREE: {iree_run}")
    rss_from = (f"{TIME} -f %M" if os.access(TIME, os.X_OK) else
                "os.wait4 ru_maxrss (no /usr/bin/time: includes this process's own peak)")
    print(f"best of {args.runs} processes after one warm-up, tools alternated; peak RSS = "
          f"least of those runs, from {rss_from}; cpus: {os.cpu_count()}\n")

    # Interpreter baselines (no IREE counterpart: the second command is just the first again).
    floors = {}
    tool_floor = [ours_run, "--list_drivers"]
    for key, cmd in ((BARE_SCRIPT, [sys.executable, "-c", BARE_SCRIPT]),
                     (FLOOR_SCRIPT, [sys.executable, "-c", FLOOR_SCRIPT]),
                     (TOOL_FLOOR, tool_floor)):
        (result, _) = measure_pair(cmd, cmd, args.runs, env, work)
        floors[key] = result
    baseline_rss = floors[TOOL_FLOOR][1] if floors[TOOL_FLOOR] else 0

    header = (f"{'workload':32s} {'ours':>10s} {'IREE':>10s} {'ratio':>6s} {'goal':>8s}   "
              f"{'ours RSS':>11s} {'IREE RSS':>11s} {'over IREE':>11s} {'rss goal':>16s}  note")
    print(header)
    print("-" * len(header))
    for mode in MODES:
        common = [f"--device={args.device}", *model.run_args(args.format),
                  f"--parameter_mode={mode}"]
        same = outputs_match([ours_run, *common], [iree_run, *common], env)
        note = ("output identical" if same else
                "amdgpu-run failed" if same is None else "output DIFFERENT")
        ours, theirs = measure_pair([ours_run, *common], [iree_run, *common], args.runs, env, work)
        label = f"{args.model} cold run ({mode})"
        if ours is None or theirs is None:
            print(f"{label:32s} {'-':>10s} {'-':>10s}  {note if ours is None else 'iree failed'}")
            continue
        ratio = ours[0] / theirs[0]
        wall_verdict = "ok" if ratio <= WALL_GOAL else f"> {WALL_GOAL:g}"
        over = ours[1] - theirs[1]
        rss_verdict = (f"<={_mib(baseline_rss)} " + ("ok" if over <= baseline_rss else "over"))
        print(f"{label:32s} {_ms(ours[0]):>10s} {_ms(theirs[0]):>10s} {ratio:6.2f} "
              f"{wall_verdict:>8s}"
              f"   {_mib(ours[1]):>11s} {_mib(theirs[1]):>11s} {_mib(over):>11s} {rss_verdict:>16s}"
              f"  {note}", flush=True)
    small = onnx_models.build("cnn", work)
    common = [f"--device={args.device}", *small.run_args(args.format)]
    ours, theirs = measure_pair([ours_run, *common], [iree_run, *common], args.runs, env, work)
    if ours is not None and theirs is not None:
        print(f"{'runtime baseline: cnn':32s} {_ms(ours[0]):>10s} {_ms(theirs[0]):>10s} "
              f"{ours[0] / theirs[0]:6.2f} {'':>8s}   {_mib(ours[1]):>11s} {_mib(theirs[1]):>11s} "
              f"{_mib(ours[1] - theirs[1]):>11s}  (what our runtime costs over IREE's with "
              f"no weights)")
    for script, label in ((BARE_SCRIPT, "floor: interpreter alone"),
                          (FLOOR_SCRIPT, "floor: import click"),
                          (TOOL_FLOOR, "floor: amdgpu-run --list_drivers")):
        r = floors[script]
        if r is None:
            print(f"{label:32s} failed")
            continue
        note = "  (the interpreter baseline)" if script == TOOL_FLOOR else ""
        print(f"{label:32s} {_ms(r[0]):>10s} {'':>10s} {'':>6s} {'':>8s}   {_mib(r[1]):>11s}"
              f"{note}")
    print(f"\nwall goal: ours / IREE <= {WALL_GOAL:g}; RSS goal: ours <= IREE + "
          f"{_mib(baseline_rss)} (the interpreter baseline: amdgpu-run --list_drivers' peak RSS)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

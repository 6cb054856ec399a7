"""Speed of running modules (`load_module` calls and `amdgpu-run`) against IREE 3.13.0's runtime.

Usage:
  python bench/run_speed.py [--work=DIR] [--runs=N] [--rounds=N] [--min-time=SECONDS]
                            [--models=a,b,c] [--skip-matmul] [--skip-cold] [--skip-per-call]
                            [--host-arrays] [--profile[=N]]

Modules are compiled once and cached in DIR (default build/bench): the small models from
examples/models (default mlp, conv, attention, and scale: scalar arguments and a scalar result)
for llvm-cpu as examples/compile.py builds them
(`--iree-llvmcpu-target-cpu=generic`), called with the inputs of their `// RUN-ARGS:` line, and a
1024x1024x1024 f32 matmul (MLIR written by this script, inputs all ones) compiled with
`--iree-llvmcpu-target-cpu=host`. Both tools always run the same .vmfb.

Per call (the two `local-*` rows of each model, the matmul row):
  IREE  `iree-benchmark-module --device=D --benchmark_format=json --benchmark_repetitions=N
        --benchmark_min_time=T`, the best `real_time` per iteration over the N repetitions
        (converted from the JSON's `time_unit`). It uploads the inputs once and reuses them.
  ours  in this process: `amdgpu_cli.load_module(vmfb, device=D)`, the tensor inputs uploaded
        once (`Module.upload`) and results left on the device (`device_results=True`), which is
        the work iree-benchmark-module times; a few warm-up calls, then N timed repetitions, each
        of as many back-to-back calls as fill T (timeit's autorange, at least 1 call: a handful
        for the matmul); the best mean per call. With --host-arrays, numpy arrays go in and come
        out of every call instead (each call then also uploads its inputs and reads back results).
Each per-call row alternates the two sides --rounds times (default 2) and keeps each side's best,
so load from other processes on the machine does not fall on one side only.
Cold start: `amdgpu-run --device=local-task --module=... --function=... --input=...` against
  `iree-run-module` with the same arguments, each timed as a whole process (wall clock from
  spawn to exit, output to /dev/null), best of N runs after one warm-up run, the two tools' runs
  alternated. Both console scripts come from this interpreter's scripts directory (no
  pyenv/conda shims in front), Python bytecode is cached under WORK/pycache as in any install,
  and the two tools' stdout is compared first (`identical` / `DIFFERENT`) so the timings are of
  the same work.
  A last reference row, `floor`, times this interpreter doing only `import click` and exiting as
  amdgpu-run exits (os._exit, without interpreter teardown), against iree-run-module on the first
  model: the part of every cold ratio that no change to amdgpu_cli can remove (a plain run does
  not import numpy; tests/test_run_without_numpy.py).

The ratio is ours / IREE (below 1.0 means we are faster). Goals: small models <= 1.0x local-task,
matmul <= 1.02x local-task, cold start <= 2x (the local-sync rows carry no goal: reference only). With --profile, each small model's call loop on
local-task is then run under cProfile and its top N functions (by cumulative time, then by own
time) are printed.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from timing import BenchError, best_of_pair, child_env, console_script, outputs_match  # noqa: E402  (bench/ is sys.path[0])
from examples.compile import (  # noqa: E402
    MODELS_DIR, CompileError, compile_model, iree_compile_binary, run_args, target_flags,
)

SMALL_MODELS = ("mlp", "conv", "attention", "scale")
DEVICES = ("local-task", "local-sync")
GOALS = {"small": 1.0, "matmul": 1.02, "cold": 2.0}
# What every amdgpu-run pays before its own code: the interpreter and click, then its exit
# (cli/main.py).
FLOOR_SCRIPT = "import os, click; os._exit(0)"

MATMUL_N = 1024
MATMUL_MLIR = f"""\
// RUN-ARGS: --function=matmul --input={MATMUL_N}x{MATMUL_N}xf32=1 --input={MATMUL_N}x{MATMUL_N}xf32=1
// {MATMUL_N}x{MATMUL_N}x{MATMUL_N} f32 matmul, written by bench/run_speed.py.
module @matmul {{
  func.func @matmul(%a: tensor<{MATMUL_N}x{MATMUL_N}xf32>, %b: tensor<{MATMUL_N}x{MATMUL_N}xf32>)
      -> tensor<{MATMUL_N}x{MATMUL_N}xf32> {{
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<{MATMUL_N}x{MATMUL_N}xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<{MATMUL_N}x{MATMUL_N}xf32>)
        -> tensor<{MATMUL_N}x{MATMUL_N}xf32>
    %r = linalg.matmul ins(%a, %b : tensor<{MATMUL_N}x{MATMUL_N}xf32>, tensor<{MATMUL_N}x{MATMUL_N}xf32>)
        outs(%f : tensor<{MATMUL_N}x{MATMUL_N}xf32>) -> tensor<{MATMUL_N}x{MATMUL_N}xf32>
    return %r : tensor<{MATMUL_N}x{MATMUL_N}xf32>
  }}
}}
"""



def _last_line(text: str, fallback) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else str(fallback)


# -- modules ---------------------------------------------------------------------------------------

class Workload:
    def __init__(self, name: str, vmfb: Path, args: list[str]):
        self.name = name
        self.vmfb = vmfb
        self.args = args  # --function=... --input=...

    @property
    def function(self) -> str:
        for a in self.args:
            if a.startswith("--function="):
                return a.split("=", 1)[1]
        raise BenchError(f"{self.name}: no --function in RUN-ARGS")

    @property
    def inputs(self) -> list[str]:
        return [a.split("=", 1)[1] for a in self.args if a.startswith("--input=")]


def small_workload(work: Path, model: str) -> Workload:
    mlir = MODELS_DIR / f"{model}.mlir"
    if not mlir.is_file():
        raise BenchError(f"no model {mlir}")
    out = work / f"{model}.vmfb"
    if not (out.is_file() and out.stat().st_size > 0
            and out.stat().st_mtime >= mlir.stat().st_mtime):
        print(f"compiling {out.name} ...", file=sys.stderr, flush=True)
        try:
            compile_model(mlir, out, target="llvm-cpu")
        except CompileError as e:
            raise BenchError(str(e)) from None
    return Workload(model, out, run_args(mlir))


def matmul_workload(work: Path) -> Workload:
    name = f"matmul{MATMUL_N}-host"
    mlir = work / f"{name}.mlir"
    out = work / f"{name}.vmfb"
    work.mkdir(parents=True, exist_ok=True)
    if not mlir.is_file() or mlir.read_text() != MATMUL_MLIR:
        mlir.write_text(MATMUL_MLIR)
        out.unlink(missing_ok=True)
    if not (out.is_file() and out.stat().st_size > 0):
        print(f"compiling {out.name} ...", file=sys.stderr, flush=True)
        flags = [f for f in target_flags("llvm-cpu") if not f.startswith("--iree-llvmcpu-target-cpu=")]
        partial = out.with_name(out.name + ".partial")
        try:
            cmd = [iree_compile_binary(), *flags, "--iree-llvmcpu-target-cpu=host", str(mlir),
                   "-o", str(partial)]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (CompileError, OSError, subprocess.TimeoutExpired) as e:
            raise BenchError(f"iree-compile: {str(e).splitlines()[0]}") from None
        if proc.returncode != 0 or not partial.is_file():
            partial.unlink(missing_ok=True)
            raise BenchError(f"iree-compile {mlir.name}: {_last_line(proc.stderr, proc.returncode)}")
        os.replace(partial, out)
    return Workload("matmul 1024^3 f32", out, run_args(mlir))


# -- per-call timing -------------------------------------------------------------------------------

_UNIT_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def iree_per_call(w: Workload, device: str, repetitions: int, min_time: float) -> float:
    """Best real_time per iteration (seconds) of iree-benchmark-module over `repetitions`."""
    cmd = [console_script("iree-benchmark-module"), f"--device={device}", f"--module={w.vmfb}",
           *w.args, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
           f"--benchmark_min_time={min_time:g}s"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise BenchError(f"iree-benchmark-module: {_last_line(proc.stderr, proc.returncode)}")
    text = proc.stdout
    try:
        data = json.loads(text[text.index("{"):])
        times = [b["real_time"] * _UNIT_S[b.get("time_unit", "ns")]
                 for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    except (ValueError, KeyError, TypeError) as e:
        raise BenchError(f"iree-benchmark-module: unreadable JSON ({e})") from None
    if not times:
        raise BenchError("iree-benchmark-module: no iteration results")
    return min(times)


def _inputs_as_arrays(w: Workload, arg_chars: str) -> list:
    from amdgpu_cli.tooling.io import parse_inputs
    from amdgpu_cli.tooling.values import Tensor

    values = parse_inputs(w.inputs, arg_chars)
    return [v.array.copy() if isinstance(v, Tensor) else v for v in values]


def _open(w: Workload, device: str, host_arrays: bool = False):
    """(module, callable, arguments): tensors resident on the device unless `host_arrays`."""
    import amdgpu_cli
    import numpy as np

    module = amdgpu_cli.load_module(w.vmfb, device=device)
    arg_chars, _ = module._session.cconv(w.function)
    args = _inputs_as_arrays(w, arg_chars)
    if host_arrays:
        return module, module.function(w.function), args
    args = [module.upload(a) if isinstance(a, np.ndarray) else a for a in args]
    return module, module.function(w.function, device_results=True), args


def _autorange(fn, args, min_time: float) -> int:
    """Smallest count in 1, 2, 5, 10, 20, 50, ... whose loop takes at least `min_time`."""
    n = 1
    while True:
        for k in (1, 2, 5):
            count = n * k
            start = time.perf_counter()
            for _ in range(count):
                fn(*args)
            if time.perf_counter() - start >= min_time:
                return count
        n *= 10


def ours_per_call(w: Workload, device: str, repetitions: int, min_time: float,
                  host_arrays: bool = False) -> float:
    """Best mean seconds per `load_module` call over `repetitions` loops of >= min_time each."""
    try:
        module, fn, args = _open(w, device, host_arrays)
    except Exception as e:  # noqa: BLE001 - one line per failing row
        raise BenchError(f"load_module: {type(e).__name__}: {str(e).splitlines()[0]}") from None
    try:
        for _ in range(3):
            fn(*args)
        count = _autorange(fn, args, min_time)
        best = float("inf")
        for _ in range(repetitions):
            start = time.perf_counter()
            for _ in range(count):
                fn(*args)
            best = min(best, (time.perf_counter() - start) / count)
        return best
    except Exception as e:  # noqa: BLE001
        raise BenchError(f"call: {type(e).__name__}: {str(e).splitlines()[0]}") from None
    finally:
        module.close()


def profile_calls(w: Workload, device: str, seconds: float, top: int) -> str:
    module, fn, args = _open(w, device)
    try:
        for _ in range(3):
            fn(*args)
        count = _autorange(fn, args, seconds / 4)  # cProfile slows the loop down
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(count):
            fn(*args)
        prof.disable()
    finally:
        module.close()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    per_call = stats.total_tt / count
    flags = sum(v[2] for k, v in stats.stats.items() if k[0].endswith("enum.py"))
    buf.write(f"{w.name} on {device}: {count} calls under cProfile, {per_call * 1e6:.0f} us per "
              f"call profiled; enum.Flag arithmetic {flags / stats.total_tt:.0%} of it\n")
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return buf.getvalue()


# -- cold start ------------------------------------------------------------------------------------

# -- table -----------------------------------------------------------------------------------------

def _fmt_time(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 1.0:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def _row(label: str, ours: float | None, theirs: float | None, goal: float | None,
         note: str = "") -> None:
    """One table row; `goal` None: a reference row, with no verdict."""
    if ours is None or theirs is None:
        ratio, verdict = "-", ""
    else:
        r = ours / theirs
        ratio = f"{r:.2f}"
        verdict = "" if goal is None else "ok" if r <= goal else f"goal <= {goal:g}"
    print(f"{label:40s} {_fmt_time(ours):>10s} {_fmt_time(theirs):>10s} {ratio:>7s}  "
          f"{verdict:14s} {note}".rstrip(), flush=True)


def _error_row(label: str, e: Exception) -> None:
    print(f"{label:40s} {'-':>10s} {'-':>10s} {'-':>7s}  error: {e}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="run_speed.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default="build/bench", help="cache directory (default build/bench)")
    parser.add_argument("--runs", type=int, default=5,
                        help="repetitions / processes per measurement, best taken (default 5)")
    parser.add_argument("--min-time", "--min_time", dest="min_time", type=float, default=0.5,
                        help="seconds per repetition of per-call loops (default 0.5)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="per-call measurements alternate IREE and ours this many times, "
                             "best kept (default 2)")
    parser.add_argument("--models", default=",".join(SMALL_MODELS),
                        help="small models from examples/models (default mlp,conv,attention,scale)")
    parser.add_argument("--skip-matmul", action="store_true", help="leave out the matmul row")
    parser.add_argument("--skip-cold", action="store_true", help="leave out the cold-start rows")
    parser.add_argument("--skip-per-call", action="store_true",
                        help="leave out the per-call rows (the matmul row included)")
    parser.add_argument("--host-arrays", action="store_true",
                        help="per-call rows pass numpy arrays in and out of every call")
    parser.add_argument("--profile", nargs="?", type=int, const=25, default=0, metavar="N",
                        help="then cProfile each small model's calls on local-task, top N (25)")
    args = parser.parse_args(argv)
    work = Path(args.work)
    try:
        work.mkdir(parents=True, exist_ok=True)
        models = [m for m in args.models.split(",") if m]
        small = [small_workload(work, m) for m in models]
        matmul = None if args.skip_matmul or args.skip_per_call else matmul_workload(work)
        ours_run, iree_run = console_script("amdgpu-run"), console_script("iree-run-module")
        console_script("iree-benchmark-module")
    except BenchError as e:
        print(f"run_speed.py: error: {e}", file=sys.stderr)
        return 1

    arrays = ("numpy arrays in and out of every call" if args.host_arrays else
              "inputs uploaded once, results left on the device")
    print(f"ours: amdgpu_cli.load_module in-process ({arrays}); {ours_run}")
    print(f"IREE: {console_script('iree-benchmark-module')}; {iree_run}")
    print(f"per call: best of {args.rounds} x {args.runs} repetitions of >= {args.min_time:g}s each; "
          f"cold start: best of {args.runs} processes after one warm-up; cpus: {os.cpu_count()}\n")
    header = f"{'workload':40s} {'ours':>10s} {'IREE':>10s} {'ratio':>7s}  {'goal':14s} note"
    print(header)
    print("-" * (len(header) + 10))

    def per_call_row(w: Workload, device: str, goal: float | None) -> None:
        label = f"{w.name} per call ({device})"
        theirs = mine = float("inf")
        try:
            for _ in range(args.rounds):  # alternated, so load from elsewhere hits both sides
                theirs = min(theirs, iree_per_call(w, device, args.runs, args.min_time))
                mine = min(mine, ours_per_call(w, device, args.runs, args.min_time,
                                               args.host_arrays))
        except (BenchError, subprocess.TimeoutExpired) as e:
            _error_row(label, e)
            return
        _row(label, mine, theirs, goal)

    if not args.skip_per_call:
        for w in small:
            for device in DEVICES:  # the goal is against local-task; local-sync is for reference
                per_call_row(w, device, GOALS["small"] if device == "local-task" else None)
        if matmul is not None:
            per_call_row(matmul, "local-task", GOALS["matmul"])
    if not args.skip_cold:
        env = child_env(work)
        for w in small:
            label = f"{w.name} cold run (local-task)"
            common = ["--device=local-task", f"--module={w.vmfb}", *w.args]
            same = outputs_match([ours_run, *common], [iree_run, *common], env)
            check = "output identical" if same else ("amdgpu-run failed" if same is None
                                                     else "output DIFFERENT")
            mine, theirs = best_of_pair([ours_run, *common], [iree_run, *common], args.runs, env)
            _row(label, mine, theirs, GOALS["cold"], check)
        if small:
            common = ["--device=local-task", f"--module={small[0].vmfb}", *small[0].args]
            floor, theirs = best_of_pair([sys.executable, "-c", FLOOR_SCRIPT],
                                         [iree_run, *common], args.runs, env)
            _row(f"floor: import click (vs {small[0].name})", floor, theirs, None,
                 "the interpreter and click alone")

    if args.profile:
        print()
        for w in small:
            try:
                print(profile_calls(w, "local-task", args.min_time * args.runs, args.profile))
            except Exception as e:  # noqa: BLE001
                print(f"{w.name}: profile failed: {type(e).__name__}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

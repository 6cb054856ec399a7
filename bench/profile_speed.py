"""Speed of `amdgpu-profile` against IREE's `iree-profile` on one large bundle.

Usage:
  python bench/profile_speed.py [--work=DIR] [--runs=N] [--model=NAME] [--min-time=3s] [FILE]

Without FILE, a bundle is made once and cached in DIR (default build/bench): the model from
examples/models (default mlp) is compiled for llvm-cpu and run under iree-benchmark-module with
`--benchmark_min_time=3s --device=local-task
--device_profiling_mode=queue-events,host-execution,memory-events`, which records a few hundred
thousand chunks.

Each command is timed as a whole process, the way a user runs it (wall clock from spawn to exit,
output to /dev/null), best of N runs after one warm-up run:

  summary FILE                    (text, the default format)
  summary --format=jsonl FILE
  dispatch --format=jsonl FILE    ('unavailable' when amdgpu-profile cannot run it)

`ours` is the `amdgpu-profile` console script and `iree-profile` the console script pip installs
(a small Python wrapper that runs the native tool), both taken from this interpreter's scripts
directory so no shell shims (pyenv, conda) sit in front of either; `native` is the bare binary
inside the iree package, for reference. The ratio is ours / iree-profile. Python bytecode is cached
(in WORK/pycache) as in any normal install, even where PYTHONDONTWRITEBYTECODE is set;
--no-bytecode-cache times what that setting costs. Before timing, the JSONL
outputs of both tools are compared (byte for byte) so the timings are of the same work.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from timing import BenchError, best_of, child_env, console_script, outputs_match  # noqa: E402  (bench/ is sys.path[0])
from examples.compile import MODELS_DIR, CompileError, compile_model, run_args  # noqa: E402

PROFILING_MODES = "queue-events,host-execution,memory-events"
COMMANDS = [
    ("summary", ["summary"]),
    ("summary --format=jsonl", ["summary", "--format=jsonl"]),
    ("dispatch --format=jsonl", ["dispatch", "--format=jsonl"]),
]



def _native_iree_profile() -> str | None:
    try:
        from iree import _runtime_libs
    except ImportError:
        return None
    path = Path(_runtime_libs.__path__[0]) / "iree-profile"
    return str(path) if path.is_file() else None


def make_bundle(work: Path, model: str, min_time: str) -> Path:
    """The cached benchmark bundle for `model`, captured once with iree-benchmark-module."""
    out = work / f"{model}-bench-{min_time}.ireeprof"
    if out.is_file() and out.stat().st_size > 0:
        return out
    mlir = MODELS_DIR / f"{model}.mlir"
    if not mlir.is_file():
        raise BenchError(f"no model {mlir}")
    work.mkdir(parents=True, exist_ok=True)
    try:
        vmfb = compile_model(mlir, work / f"{model}.vmfb", target="llvm-cpu")
    except CompileError as e:
        raise BenchError(str(e)) from None
    partial = out.with_name(out.name + ".partial")
    partial.unlink(missing_ok=True)
    cmd = [console_script("iree-benchmark-module"), "--device=local-task", f"--module={vmfb}",
           *run_args(mlir), f"--benchmark_min_time={min_time}",
           f"--device_profiling_mode={PROFILING_MODES}", f"--device_profiling_output={partial}"]
    print(f"capturing {out.name} ...", file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        raise BenchError(f"iree-benchmark-module failed: {lines[-1] if lines else proc.returncode}")
    os.replace(partial, out)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="profile_speed.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", help="bundle to time (default: the cached capture)")
    parser.add_argument("--work", default="build/bench", help="cache directory (default build/bench)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per command (default 5)")
    parser.add_argument("--model", default="mlp", help="model in examples/models (default mlp)")
    parser.add_argument("--min-time", "--min_time", dest="min_time", default="3s",
                        help="iree-benchmark-module --benchmark_min_time (default 3s)")
    parser.add_argument("--no-bytecode-cache", dest="bytecode_cache", action="store_false",
                        help="leave PYTHONDONTWRITEBYTECODE as it is (Python recompiles sources "
                             "on every run where it is set)")
    args = parser.parse_args(argv)
    try:
        path = Path(args.file) if args.file else make_bundle(Path(args.work), args.model, args.min_time)
        if not path.is_file():
            raise BenchError(f"no such file {path}")
        ours, theirs = console_script("amdgpu-profile"), console_script("iree-profile")
    except BenchError as e:
        print(f"profile_speed.py: error: {e}", file=sys.stderr)
        return 1
    native = _native_iree_profile()
    env = child_env(Path(args.work), args.bytecode_cache)

    size_mb = path.stat().st_size / 1e6
    print(f"bundle: {path} ({size_mb:.1f} MB)")
    print(f"ours:   {ours}\ntheirs: {theirs}\nnative: {native or 'not found'}")
    cache = "cached" if args.bytecode_cache else "as the environment says"
    print(f"best of {args.runs} runs, wall seconds per process; Python bytecode {cache}\n")
    header = f"{'command':26s} {'ours':>8s} {'iree-profile':>13s} {'ratio':>7s} {'native':>8s}  output"
    print(header)
    print("-" * len(header))
    for label, command in COMMANDS:
        mine = best_of([ours, *command, str(path)], args.runs, env)
        theirs_s = best_of([theirs, *command, str(path)], args.runs, env)
        native_s = best_of([native, *command, str(path)], args.runs, env) if native else None
        check = ""
        if "--format=jsonl" in command:
            same = outputs_match([ours, *command, str(path)], [theirs, *command, str(path)], env)
            check = "identical" if same else ("-" if same is None else "DIFFERENT")
        if mine is None or theirs_s is None:
            print(f"{label:26s} {'unavailable':>8s} "
                  f"{'-' if theirs_s is None else f'{theirs_s:.3f}':>13s} {'-':>7s} "
                  f"{'-' if native_s is None else f'{native_s:.3f}':>8s}  {check}")
            continue
        ratio = mine / theirs_s
        print(f"{label:26s} {mine:8.3f} {theirs_s:13.3f} {ratio:7.2f} "
              f"{'-' if native_s is None else f'{native_s:.3f}':>8s}  {check}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

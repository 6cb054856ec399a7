"""What profiling costs, and amdgpu-benchmark against iree-benchmark-module, on the same modules.

Usage:
  python bench/capture_speed.py [--work=DIR] [--models=mlp,conv,attention] [--min-time=SECONDS]
                                [--rounds=N] [--device=local-task]

For each model (compiled by bench/run_speed.py's rules into DIR, default build/bench), both
benchmark tools run the same .vmfb with `--benchmark_format=json --benchmark_min_time=T`
(default 1s), once plain and once with `--device_profiling_mode=queue-events,host-execution
--device_profiling_output=<tmp>` (a flush after every iteration, as both tools do), alternating
the tools --rounds times (default 2) and keeping each configuration's best `real_time` per
iteration. Printed per model:

  plain      per call, ours and IREE's, and ours / IREE           (goal <= 1.0 on local-task)
  profiled   per call with the capture on, ours and IREE's, ratio
  added      what the capture adds per call (profiled - plain), ours and IREE's, and the ratio
             of the two factors (ours profiled/plain) / (IREE profiled/plain)   (goal <= 1.0)

Timings are wall time per iteration as each tool reports it (the whole call, capture included;
flushes are outside the timing in both tools). The machine is shared: compare ratios only.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from run_speed import small_workload  # noqa: E402

UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
MODE = "queue-events,host-execution"


def per_call(tool: str, device: str, vmfb: Path, function: str, inputs, min_time: float,
             profile_to: Path | None) -> float:
    argv = [tool, f"--device={device}", f"--module={vmfb}", f"--function={function}",
            *[f"--input={i}" for i in inputs], "--benchmark_format=json",
            f"--benchmark_min_time={min_time}s"]
    if profile_to is not None:
        argv += [f"--device_profiling_mode={MODE}", f"--device_profiling_output={profile_to}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    row = json.loads(done.stdout)["benchmarks"][0]
    return row["real_time"] * UNITS[row["time_unit"]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=str(ROOT / "build" / "bench"))
    parser.add_argument("--models", default="mlp,conv,attention")
    parser.add_argument("--min-time", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--device", default="local-task")
    args = parser.parse_args(argv)
    ours_tool = shutil.which("amdgpu-benchmark")
    iree_tool = shutil.which("iree-benchmark-module")
    if not ours_tool or not iree_tool:
        raise SystemExit("amdgpu-benchmark and iree-benchmark-module must be on PATH")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    models = [small_workload(work, name) for name in args.models.split(",")]
    print(f"device {args.device}, min time {args.min_time}s, best of {args.rounds} rounds; "
          f"profiled mode {MODE}")
    print(f"{'model':10s} {'':9s} {'ours':>11s} {'IREE':>11s} {'ratio':>7s}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            best = {}
            for _ in range(args.rounds):
                for side, tool in (("ours", ours_tool), ("iree", iree_tool)):
                    for profiled in (False, True):
                        out = Path(tmp) / f"{side}.ireeprof" if profiled else None
                        t = per_call(tool, args.device, model.vmfb, model.function,
                                     model.inputs, args.min_time, out)
                        key = (side, profiled)
                        best[key] = min(best.get(key, t), t)

            def us(t: float) -> str:
                return f"{t * 1e6:9.1f}us"

            plain = best["ours", False], best["iree", False]
            prof = best["ours", True], best["iree", True]
            added = prof[0] - plain[0], prof[1] - plain[1]
            factor = (prof[0] / plain[0]) / (prof[1] / plain[1])
            print(f"{model.name:10s} {'plain':9s} {us(plain[0])} {us(plain[1])} "
                  f"{plain[0] / plain[1]:6.2f}x")
            print(f"{'':10s} {'profiled':9s} {us(prof[0])} {us(prof[1])} "
                  f"{prof[0] / prof[1]:6.2f}x")
            print(f"{'':10s} {'added':9s} {us(added[0])} {us(added[1])} "
                  f"{factor:6.2f}x  (ours x{prof[0] / plain[0]:.2f} vs IREE "
                  f"x{prof[1] / plain[1]:.2f})")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

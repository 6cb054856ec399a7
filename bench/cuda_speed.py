"""Speed on a real NVIDIA GPU: ours against IREE 3.13.0's cuda driver, same GPU, one run.

Usage (on the GPU machine, where IREE's runtime wheel is unpacked; no iree-compile there):
  python bench/cuda_speed.py MODULES [--iree=DIR] [--min-time=SECONDS] [--rounds=N]
                             [--runs=N] [--device=URI]

MODULES: a directory made here by `python scripts/cuda_gpu_check.py --compile MODULES` (its
manifest.json lists the extras this script times: examples/models mlp, conv and attention and the
1024^3 f32 matmul, all compiled for cuda-sm_80). --iree: the folder holding IREE's tools
(default /tmp/iree/iree/_runtime_libs, where DEVELOPERS.md's recipe unpacks the wheel).

Per call: `amdgpu-benchmark` against `iree-benchmark-module`, both `--device=cuda
--benchmark_format=json --benchmark_min_time=T` on the same .vmfb and RUN line; each side's
`real_time` per iteration, the tools alternated --rounds times (default 2), best of each. Ours
runs three ways: as it is by default (the ratio; reusable command buffers as CUDA graphs),
`--cuda_use_streams=true` (every command buffer issued on the stream command by command, IREE's
default) and `=false` (graphs, as the default: a check that the default is what it says).
Cold: `amdgpu-run` against `iree-run-module`, the whole process timed (spawn to exit, output to
/dev/null), best of --runs (default 6) after one warm-up, alternated; their stdout is compared
first so the timings are of the same work.

Prints one row per workload: ours, IREE, ratio (ours / IREE; below 1.0 we are faster). Goals
(issue 16): per call <= 1.0 for the matmul and <= 1.5 for the small models, cold <= 1.5.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
PER_CALL = ("mlp", "ex_conv", "ex_attention", "matmul1024")
GOALS = {"matmul1024": 1.0}
SMALL_GOAL = 1.5
COLD_GOAL = 1.5


def _ours(tool: str) -> list[str]:
    found = shutil.which(f"amdgpu-{tool}")
    if found:
        return [found]
    main = {"run": "run_main", "benchmark": "benchmark_main"}[tool]
    return [sys.executable, "-c",
            f"import sys; from amdgpu_cli.cli.main import {main}; {main}(sys.argv[1:])"]


def per_call(tool: list[str], device: str, vmfb: Path, args: list[str], min_time: str
             ) -> tuple[float | None, str]:
    done = subprocess.run([*tool, f"--device={device}", f"--module={vmfb}", *args,
                           "--benchmark_format=json", f"--benchmark_min_time={min_time}"],
                          capture_output=True, text=True, timeout=600)
    if done.returncode:
        return None, (done.stderr.strip().splitlines() or ["failed"])[-1][:200]
    row = json.loads(done.stdout)["benchmarks"][0]
    return row["real_time"] * UNITS[row["time_unit"]], ""


def cold(tool: list[str], device: str, vmfb: Path, args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([*tool, f"--device={device}", f"--module={vmfb}", *args],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", type=Path)
    parser.add_argument("--iree", type=Path, default=Path("/tmp/iree/iree/_runtime_libs"))
    parser.add_argument("--min-time", default="2s")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--device", default="cuda")
    options = parser.parse_args(argv)
    manifest = json.loads((options.modules / "manifest.json").read_text())
    extras = dict(manifest.get("extras", {}))
    for case in manifest["cases"]:  # mlp is one of the comparison cases
        extras.setdefault(Path(case["module"]).stem, [case["module"], case["args"]])
    iree_bench = [str(options.iree / "iree-benchmark-module")]
    iree_run = [str(options.iree / "iree-run-module")]
    ours_bench, ours_run = _ours("benchmark"), _ours("run")
    print(f"{'workload':36s} {'ours':>12s} {'IREE':>12s} {'ratio':>7s}  goal")
    met = True
    # Ours both ways: command buffers on the stream (the default) and as CUDA graphs.
    sides = (("ours", ours_bench), ("ours-streams", [*ours_bench, "--cuda_use_streams=true"]),
             ("ours-graphs", [*ours_bench, "--cuda_use_streams=false"]), ("iree", iree_bench))
    for name in PER_CALL:
        if name not in extras:
            print(f"{name}: not in the manifest")
            continue
        file, args = extras[name]
        vmfb = options.modules / file
        best: dict[str, float] = {}
        errors = []
        for _ in range(options.rounds):
            for side, tool in sides:
                seconds, error = per_call(tool, options.device, vmfb, args, options.min_time)
                if seconds is None:
                    errors.append(f"{side}: {error}")
                else:
                    best[side] = min(best.get(side, seconds), seconds)
        if len(best) < len(sides):
            print(f"{name} per call: failed ({'; '.join(errors)})")
            met = False
            continue
        ratio = best["ours"] / best["iree"]
        goal = GOALS.get(name, SMALL_GOAL)
        met &= ratio <= goal
        print(f"{name + ' per call':36s} {best['ours'] * 1e6:10.1f}us {best['iree'] * 1e6:10.1f}us "
              f"{ratio:6.2f}x  <= {goal}", flush=True)
        for side, label in (("ours-streams", "  (ours, --cuda_use_streams=true)"),
                            ("ours-graphs", "  (ours, --cuda_use_streams=false)")):
            print(f"{label:36s} {best[side] * 1e6:10.1f}us {'':>12s} "
                  f"{best[side] / best['iree']:6.2f}x", flush=True)
    for name in ("mlp",):
        file, args = extras[name]
        vmfb = options.modules / file
        outputs = [subprocess.run([*tool, f"--device={options.device}", f"--module={vmfb}",
                                   *args], capture_output=True, text=True, timeout=600).stdout
                   for tool in (ours_run, iree_run)]
        same = "identical" if outputs[0] == outputs[1] else "DIFFERENT"
        times = {"ours": [], "iree": []}
        for _ in range(options.runs + 1):
            for side, tool in (("ours", ours_run), ("iree", iree_run)):
                times[side].append(cold(tool, options.device, vmfb, args))
        ours, theirs = min(times["ours"][1:]), min(times["iree"][1:])
        met &= ours / theirs <= COLD_GOAL
        print(f"{name + ' cold run (' + same + ')':36s} {ours * 1e3:10.1f}ms "
              f"{theirs * 1e3:10.1f}ms {ours / theirs:6.2f}x  <= {COLD_GOAL}", flush=True)
    print("goals met" if met else "goals NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())

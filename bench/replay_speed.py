"""Replay speed: `amdgpu-replay bench` against `iree-benchmark-replay`, and `amdgpu-replay dump`
against `iree-dump-replay` on a 100 MB capture, same machine, same run.

Usage:
  python bench/replay_speed.py [--work=DIR] [--models=mlp,conv,attention] [--min-time=SECONDS]
                               [--rounds=N] [--devices=local-sync,local-task] [--dump-mb=100]
                               [--skip-dump] [--skip-bench]

Captures are IREE's own: `iree-run-module --device=local-task --device_replay_output=F` on the
small models of examples/models (compiled by bench/run_speed.py's rules into DIR, default
build/bench), so both tools replay the same file.

bench   for each capture and device, both tools run `--benchmark_format=json
        --benchmark_min_time=T` (default 1s) on the capture, alternated --rounds times (default
        2); each side's best `real_time` per iteration (one whole replay: executables loaded,
        buffers made and uploaded, every queue op waited for, everything released) is kept.
        Goal: ours / IREE <= 1.0.
dump    a capture of about --dump-mb MB (a model adding two f32 vectors, its two inputs given as
        .npy files, so the capture carries them as upload data) is dumped by both tools, text
        and JSONL, output to /dev/null; best of 5 whole-process runs each after a warm-up,
        alternated (our bytecode cached under WORK/pycache, as bench/timing.py's child_env). Goal:
        ours / IREE <= 1.0.
The machine is shared and noisy: compare ratios only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from run_speed import small_workload  # noqa: E402
from timing import BenchError, child_env, console_script  # noqa: E402

UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
BIG_MLIR = """\
func.func @add(%a: tensor<{n}xf32>, %b: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %0 = arith.addf %a, %b : tensor<{n}xf32>
  return %0 : tensor<{n}xf32>
}}
"""


def capture(vmfb: Path, function: str, inputs, out: Path, device: str = "local-task") -> None:
    argv = [console_script("iree-run-module"), f"--device={device}", f"--module={vmfb}",
            f"--function={function}", *[f"--input={i}" for i in inputs],
            f"--device_replay_output={out}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise BenchError(f"{' '.join(argv)} failed: {done.stderr.strip()}")


def per_replay(tool: str, device: str, replay: Path, min_time: float) -> float:
    argv = [tool, f"--device={device}", "--benchmark_format=json",
            f"--benchmark_min_time={min_time}s", str(replay)]
    if Path(tool).name == "amdgpu-replay":
        argv.insert(1, "bench")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise BenchError(f"{' '.join(argv)} failed: {done.stderr.strip()[-400:]}")
    row = json.loads(done.stdout)["benchmarks"][0]
    return row["real_time"] * UNITS[row["time_unit"]]


def big_capture(work: Path, megabytes: int) -> Path:
    """A capture of about `megabytes` MB: two f32 input vectors uploaded as captured data."""
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from examples.compile import compile_model

    n = megabytes * (1 << 20) // 8  # two inputs of 4 bytes per element
    out = work / f"replay_big_{megabytes}mb.ireereplay"
    if out.is_file():
        return out
    mlir = work / f"replay_big_{n}.mlir"
    vmfb = mlir.with_suffix(".vmfb")
    if not vmfb.is_file():
        mlir.write_text(BIG_MLIR.format(n=n))
        print(f"compiling {vmfb.name} ...", file=sys.stderr, flush=True)
        compile_model(mlir, vmfb, target="llvm-cpu")
    npy = work / f"replay_big_{n}.npy"
    if not npy.is_file():
        np.save(npy, np.arange(n, dtype=np.float32))
    capture(vmfb, "add", [f"@{npy}", f"@{npy}"], out)
    return out


def timed(argv: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=900,
                          env=env)
    if done.returncode:
        raise BenchError(f"{' '.join(argv)} failed: {done.stderr.decode().strip()[-400:]}")
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=str(ROOT / "build" / "bench"))
    parser.add_argument("--models", default="mlp,conv,attention")
    parser.add_argument("--min-time", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--devices", default="local-sync,local-task")
    parser.add_argument("--dump-mb", type=int, default=100)
    parser.add_argument("--skip-dump", action="store_true")
    parser.add_argument("--skip-bench", action="store_true")
    args = parser.parse_args(argv)
    try:
        ours = console_script("amdgpu-replay")
        iree_bench = console_script("iree-benchmark-replay")
        iree_dump = console_script("iree-dump-replay")
    except BenchError as e:
        raise SystemExit(str(e))
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    print(f"ours: {ours}; IREE: {iree_bench}, {iree_dump}")
    print(f"{'workload':44s} {'ours':>11s} {'IREE':>11s} {'ratio':>7s}  goal")
    print("-" * 82)
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_bench:
            for name in args.models.split(","):
                model = small_workload(work, name)
                replay = Path(tmp) / f"{name}.ireereplay"
                capture(model.vmfb, model.function, model.inputs, replay)
                for device in args.devices.split(","):
                    best = {}
                    for _ in range(args.rounds):
                        for side, tool in (("ours", ours), ("iree", iree_bench)):
                            t = per_replay(tool, device, replay, args.min_time)
                            best[side] = min(best.get(side, t), t)
                    label = f"{name} replay per iteration ({device})"
                    print(f"{label:44s} {best['ours'] * 1e3:9.3f}ms {best['iree'] * 1e3:9.3f}ms "
                          f"{best['ours'] / best['iree']:6.2f}x  <= 1", flush=True)
        if not args.skip_dump:
            big = big_capture(work, args.dump_mb)
            size = big.stat().st_size / 1e6
            env = child_env(work)  # our bytecode cached, as in any install
            for fmt in ("text", "jsonl"):
                mine = [ours, "dump", f"--format={fmt}", str(big)]
                theirs = [iree_dump, f"--format={fmt}", str(big)]
                timed(mine, env)  # warm-up: bytecode written, the file in the page cache
                timed(theirs, env)
                best = {"ours": float("inf"), "iree": float("inf")}
                for _ in range(5):
                    best["ours"] = min(best["ours"], timed(mine, env))
                    best["iree"] = min(best["iree"], timed(theirs, env))
                label = f"dump {size:.0f} MB capture (--format={fmt})"
                print(f"{label:44s} {best['ours'] * 1e3:9.1f}ms {best['iree'] * 1e3:9.1f}ms "
                      f"{best['ours'] / best['iree']:6.2f}x  <= 1", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        raise SystemExit(f"error: {e}")

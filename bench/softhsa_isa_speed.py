#!/usr/bin/env python3
"""How fast softhsa's machine-code interpreter (tests/softhsa/src/isa.c) runs real kernels:
a 3x3 convolution (1x34x34x16 * 3x3x16x32 f32) and a row softmax (256x1024 f32), compiled by
iree-compile for gfx942 and gfx1100, run with `amdgpu-run --device=amdgpu` on softhsa with
SOFTHSA_EXECUTE=1 SOFTHSA_STATS=1, which reports per dispatch the wave instructions retired and
the time taken. Prints, per target and model, the instructions, seconds and instructions per
second of the heaviest dispatch, and the whole run's wall time; and checks the results against
the llvm-cpu build (amdgpu-run --expected_output with iree-run-module's values).

  python bench/softhsa_isa_speed.py [--work DIR]

No IREE baseline exists for this (IREE has no software GPU); the figure is the interpreter's own.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "examples"), str(REPO)]

from tests.softhsa.agents import AGENTS  # noqa: E402

MODELS = {
    "conv": ("""
func.func @main(%x: tensor<1x34x34x16xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<1x32x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x32x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x34x34x16xf32>, tensor<3x3x16x32xf32>)
       outs(%f : tensor<1x32x32x32xf32>) -> tensor<1x32x32x32xf32>
  return %r : tensor<1x32x32x32xf32>
}
""", ["--input=1x34x34x16xf32=0.5", "--input=3x3x16x32xf32=0.25"]),
    "softmax": ("""
func.func @main(%x: tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  %e = tensor.empty() : tensor<256x1024xf32>
  %r = linalg.softmax dimension(1) ins(%x : tensor<256x1024xf32>)
       outs(%e : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  return %r : tensor<256x1024xf32>
}
""", ["--input=256x1024xf32=0.75"]),
}
STATS = re.compile(r"softhsa stats: (\S+): (\d+) instructions \(per wave\) in ([0-9.]+) s")


def compile_model(source: str, target: str, out: Path) -> Path:
    from compile import target_flags

    mlir = out.with_suffix(".mlir")
    mlir.write_text(source)
    subprocess.run([os.environ.get("IREE_COMPILE", "iree-compile"), str(mlir),
                    *target_flags(target), "-o", str(out)], check=True)
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="isa-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    softhsa = work / "softhsa"
    subprocess.run([sys.executable, "-m", "tests.softhsa.build", str(softhsa)], cwd=REPO,
                   check=True, capture_output=True)
    print(f"{'target':8} {'model':8} {'heaviest dispatch':>22} {'instructions':>13} "
          f"{'seconds':>8} {'per second':>11} {'run wall':>9}")
    for name, (source, inputs) in MODELS.items():
        cpu = compile_model(source, "llvm-cpu", work / f"{name}-cpu.vmfb")
        npy = work / f"{name}-expected.npy"
        subprocess.run(["iree-run-module", "--device=local-sync", f"--module={cpu}",
                        "--function=main", *inputs, f"--output=@{npy}"], check=True,
                       capture_output=True)
        expected = [f"--expected_output=@{npy}"]
        for target in ("gfx942", "gfx1100"):
            vmfb = compile_model(source, f"amdgpu-{target}", work / f"{name}-{target}.vmfb")
            config = work / f"{target}.json"
            config.write_text(json.dumps({"agents": [AGENTS[target]]}))
            env = dict(os.environ, SOFTHSA_EXECUTE="1", SOFTHSA_STATS="1",
                       SOFTHSA_CONFIG=str(config), AMDGPU_LIBHSA_SKIP_SYSTEM="1")
            start = time.perf_counter()
            run = subprocess.run(["amdgpu-run", "--device=amdgpu",
                                  f"--amdgpu_libhsa_search_path={softhsa}", f"--module={vmfb}",
                                  "--function=main", *inputs, *expected],
                                 capture_output=True, text=True, env=env)
            wall = time.perf_counter() - start
            if run.returncode != 0 or "[SUCCESS]" not in run.stdout:
                print(f"{target} {name}: FAILED\n{run.stdout}{run.stderr}")
                return 1
            kernel, count, seconds = max(((m.group(1), int(m.group(2)), float(m.group(3)))
                                          for m in STATS.finditer(run.stderr)),
                                         key=lambda row: row[1])
            print(f"{target:8} {name:8} {kernel[-22:]:>22} {count:13d} {seconds:8.3f} "
                  f"{count / seconds:11.0f} {wall:8.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

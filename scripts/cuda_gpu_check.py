#!/usr/bin/env python3
"""Check `amdgpu-run --device=cuda` against IREE's `iree-run-module --device=cuda` on a GPU.

Two steps, on two machines:

  python scripts/cuda_gpu_check.py --compile OUTDIR
      Here (with iree-compile): compiles examples/models/mlp.mlir and the corpus models
      matmul, softmax, dynamic_shapes, conv2d, layernorm, reductions, broadcast, i8_ops for cuda
      (target cuda-sm_80: PTX that the driver JITs for sm_80 and newer, an H100's sm_90
      included) into OUTDIR/<name>.vmfb, and writes OUTDIR/manifest.json:
        {"schema_version": 1, "target": "cuda-sm_80",
         "cases": [{"id": "matmul:matmul:0", "module": "matmul.vmfb", "args": [...]}, ...],
         "skipped": {"<model>": "<why it did not compile>"},
         "extras": {"matmul1024": ["matmul1024.vmfb", [args]], ...}}
      (extras: modules the GPU tests and bench/cuda_speed.py use beside the cases: the 1024^3
      f32 matmul, examples/models conv and attention, tests/drivers/data/alloc_n.mlir)
      (args: the model's RUN line: --function and --input flags, without --device/--module).

  python scripts/cuda_gpu_check.py OUTDIR [--json RESULTS.json] [--filter TEXT]
      On the GPU machine (python3, numpy, our wheel, IREE's runtime tools; no iree-compile):
      runs every case with IREE's iree-run-module (`IREE_RUN_MODULE`, else the one on PATH) and
      with our amdgpu-run (`AMDGPU_RUN`, else the one on PATH, else `python -m` of our CLI), both
      `--device=cuda` (`CUDA_DEVICE` overrides, e.g. cuda://1; `OURS_CUDA_DEVICE` / --ours-device
      ours alone, e.g. cuda://0,1 for two GPUs in one device), compares exit status and stdout,
      prints one row per case (identical / DIFFERENT, with the first differing line and our
      stderr's first line) and exits 1 if any case differs. --json writes every output.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = "cuda-sm_80"
CORPUS_MODELS = ("matmul", "softmax", "dynamic_shapes", "conv2d", "layernorm", "reductions",
                 "broadcast", "i8_ops")
TIMEOUT_S = 300


# -- compile (needs iree-compile and this repository) ---------------------------------------------

def compile_modules(out_dir: Path, models=CORPUS_MODELS, *, with_mlp: bool = True) -> dict:
    """Compile the modules into out_dir and write manifest.json; returns the manifest."""
    sys.path.insert(0, str(REPO))
    sys.path.append(str(REPO / "tests"))  # after the stdlib: tests/profile is a package
    from examples.compile import CompileError, compile_model, run_args

    import corpus_util

    out_dir.mkdir(parents=True, exist_ok=True)
    cases, skipped = [], {}
    if with_mlp:
        mlir = REPO / "examples/models/mlp.mlir"
        try:
            compile_model(mlir, out_dir / "mlp.vmfb", TARGET)
            cases.append({"id": "mlp:predict:0", "module": "mlp.vmfb", "args": run_args(mlir)})
        except CompileError as error:
            skipped["mlp"] = str(error)
    for name in models:
        mlir = corpus_util.CORPUS_DIR / f"{name}.mlir"
        try:
            flags = corpus_util.compile_flags(mlir, TARGET)[len(_target_flags()):]
            compile_model(mlir, out_dir / f"{name}.vmfb", TARGET, extra_flags=flags)
        except CompileError as error:
            skipped[name] = str(error)
            continue
        for case in corpus_util.load_cases(mlir):
            cases.append({"id": case.id, "module": f"{name}.vmfb", "args": list(case.args)})
    # Modules the GPU tests and bench/cuda_speed.py use beside the cases: name -> [file, RUN
    # args] (the bench's examples and 1024^3 matmul, an allocation sized by its input).
    sys.path.append(str(REPO / "bench"))
    from run_speed import MATMUL_MLIR

    matmul = out_dir / "matmul1024.mlir"
    matmul.write_text(MATMUL_MLIR)
    extras = {}
    for name, mlir in (("matmul1024", matmul), ("ex_conv", REPO / "examples/models/conv.mlir"),
                       ("ex_attention", REPO / "examples/models/attention.mlir"),
                       ("alloc_n", REPO / "tests/drivers/data/alloc_n.mlir")):
        try:
            compile_model(mlir, out_dir / f"{name}.vmfb", TARGET)
            extras[name] = [f"{name}.vmfb", run_args(mlir)]
        except CompileError as error:
            skipped[name] = str(error)
    manifest = {"schema_version": 1, "target": TARGET, "cases": cases, "skipped": skipped,
                "extras": extras}
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def _target_flags() -> list[str]:
    from examples.compile import target_flags

    return target_flags(TARGET)


# -- run (GPU machine) ------------------------------------------------------------------------------

def iree_run_module() -> list[str]:
    explicit = os.environ.get("IREE_RUN_MODULE")
    if explicit:
        return [explicit]
    found = shutil.which("iree-run-module")
    if not found:
        raise SystemExit("iree-run-module not found (set IREE_RUN_MODULE)")
    return [found]


def amdgpu_run() -> list[str]:
    explicit = os.environ.get("AMDGPU_RUN")
    if explicit:
        return shlex.split(explicit)
    found = shutil.which("amdgpu-run")
    if found:
        return [found]
    return [sys.executable, "-c",
            "import sys; from amdgpu_cli.cli.main import run_main; run_main(sys.argv[1:])"]


def run_case(tool: list[str], module: Path, args: list[str], device: str) -> dict:
    start = time.perf_counter()
    try:
        proc = subprocess.run([*tool, f"--device={device}", f"--module={module}", *args],
                              capture_output=True, text=True, timeout=TIMEOUT_S)
        result = {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}
    except subprocess.TimeoutExpired:
        result = {"returncode": None, "stdout": "", "stderr": f"timed out after {TIMEOUT_S}s"}
    result["seconds"] = round(time.perf_counter() - start, 3)
    return result


def first_difference(a: str, b: str) -> str:
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}: iree {x[:80]!r} vs ours {y[:80]!r}"
    if len(la) != len(lb):
        return f"iree has {len(la)} lines, ours {len(lb)}"
    return "same lines (whitespace differs)"


def compare(out_dir: Path, *, only: str = "", device: str = "", ours_device: str = ""
            ) -> list[dict]:
    manifest = json.loads((out_dir / "manifest.json").read_text())
    device = device or os.environ.get("CUDA_DEVICE", "cuda")
    ours_device = ours_device or os.environ.get("OURS_CUDA_DEVICE", device)
    iree, ours = iree_run_module(), amdgpu_run()
    rows = []
    for case in manifest["cases"]:
        if only and only not in case["id"]:
            continue
        module = out_dir / case["module"]
        reference = run_case(iree, module, case["args"], device)
        mine = run_case(ours, module, case["args"], ours_device)
        same = (reference["returncode"] == mine["returncode"]
                and reference["stdout"] == mine["stdout"])
        rows.append({"id": case["id"], "identical": same, "iree": reference, "ours": mine,
                     "difference": "" if same else (
                         f"exit {reference['returncode']} vs {mine['returncode']}"
                         if reference["returncode"] != mine["returncode"]
                         else first_difference(reference["stdout"], mine["stdout"]))})
    return rows


def print_table(rows: list[dict], skipped: dict, out=sys.stdout) -> None:
    width = max([len(r["id"]) for r in rows] + [4])
    out.write(f"{'case':<{width}}  {'result':<9}  {'iree s':>7}  {'ours s':>7}  detail\n")
    for row in rows:
        detail = row["difference"]
        err = (row["ours"]["stderr"].strip().splitlines() or [""])[0]
        if not row["identical"] and err:
            detail = f"{detail}; ours: {err[:160]}"
        elif row["iree"]["returncode"] not in (0, None) and row["identical"]:
            detail = "both failed the same way"
        out.write(f"{row['id']:<{width}}  {'identical' if row['identical'] else 'DIFFERENT':<9}  "
                  f"{row['iree']['seconds']:7.2f}  {row['ours']['seconds']:7.2f}  {detail}\n")
    for name, why in skipped.items():
        out.write(f"{name:<{width}}  {'skipped':<9}  {'':>7}  {'':>7}  not compiled: {why}\n")
    differ = sum(not r["identical"] for r in rows)
    out.write(f"\n{len(rows) - differ} identical, {differ} different, {len(skipped)} not "
              "compiled\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path, help="modules + manifest.json")
    parser.add_argument("--compile", action="store_true",
                        help="compile the modules into DIR (needs iree-compile)")
    parser.add_argument("--json", type=Path, help="write every case's outputs here")
    parser.add_argument("--filter", default="", help="only cases whose id contains this")
    parser.add_argument("--device", default="", help="device URI (default cuda)")
    parser.add_argument("--ours-device", default="", help="our device URI (default --device)")
    options = parser.parse_args(argv)
    if options.compile:
        manifest = compile_modules(options.dir)
        print(f"{len(manifest['cases'])} cases in {options.dir / 'manifest.json'}")
        for name, why in manifest["skipped"].items():
            print(f"not compiled: {name}: {why}")
        return 0
    rows = compare(options.dir, only=options.filter, device=options.device,
                   ours_device=options.ours_device)
    skipped = json.loads((options.dir / "manifest.json").read_text()).get("skipped", {})
    print_table(rows, skipped)
    if options.json:
        options.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 1 if any(not r["identical"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

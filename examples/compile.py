"""Compile the example MLIR models with iree-compile.

Usage:
  python examples/compile.py [--target=TARGET[,TARGET...]] [--out=DIR] [models...]

TARGET is one of llvm-cpu, amdgpu-<gfx arch> (e.g. amdgpu-gfx942,
amdgpu-gfx1100), cuda-<sm arch> (e.g. cuda-sm_80), or "all" for the four
standard targets. Models are .mlir paths or bare names of files in
examples/models (e.g. "mlp"); with none given, every model there is compiled.
Outputs are written to DIR/<model>.vmfb for llvm-cpu and
DIR/<model>-<target>.vmfb for other targets (DIR defaults to build/models).

Every model file starts with a line
  // RUN-ARGS: --function=predict --input=1x16xf32=1
giving arguments for iree-run-module; run_args() parses it.

Library use (import as examples.compile):
  compile_model(mlir_path, out_path, target="llvm-cpu") -> Path
  run_args(mlir_path) -> list[str]
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent / "models"
DEFAULT_OUT = Path("build") / "models"
STANDARD_TARGETS = ("llvm-cpu", "amdgpu-gfx942", "amdgpu-gfx1100", "cuda-sm_80")
RUN_ARGS_PREFIX = "// RUN-ARGS:"
COMPILE_TIMEOUT_S = 300


class CompileError(RuntimeError):
    """A model could not be compiled; str() is a single line."""


def iree_compile_binary() -> str:
    """Path of iree-compile ($IREE_COMPILE overrides PATH lookup)."""
    explicit = os.environ.get("IREE_COMPILE")
    if explicit:
        return explicit
    found = shutil.which("iree-compile")
    if not found:
        raise CompileError("iree-compile not found on PATH (set IREE_COMPILE)")
    return found


def target_flags(target: str) -> list[str]:
    """iree-compile flags selecting a target (flag names as of IREE 3.13.0)."""
    if target == "llvm-cpu":
        return [
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            "--iree-llvmcpu-target-cpu=generic",
        ]
    m = re.fullmatch(r"(?:amdgpu|rocm|hip)-(gfx[0-9a-z]+)", target)
    if m:
        return ["--iree-hal-target-device=amdgpu", f"--iree-rocm-target={m.group(1)}"]
    m = re.fullmatch(r"cuda-(sm_[0-9]+[a-z]?)", target)
    if m:
        return ["--iree-hal-target-device=cuda", f"--iree-cuda-target={m.group(1)}"]
    raise CompileError(
        f"unknown target '{target}' (expected llvm-cpu, amdgpu-gfxNNN or cuda-sm_NN)"
    )


def _first_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "error:" in ln:
            return ln
    return lines[0] if lines else "no diagnostic output"


def compile_model(mlir_path, out_path, target: str = "llvm-cpu", extra_flags=()) -> Path:
    """Compile one MLIR file to a .vmfb (`extra_flags` after the target's, e.g.
    --iree-execution-model=async-external); returns out_path. Raises CompileError."""
    mlir_path = Path(mlir_path)
    out_path = Path(out_path)
    if not mlir_path.is_file():
        raise CompileError(f"model not found: {mlir_path}")
    flags = [*target_flags(target), *extra_flags]
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = out_path.with_name(out_path.name + ".partial")
    cmd = [iree_compile_binary(), *flags, str(mlir_path), "-o", str(tmp_path)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        tmp_path.unlink(missing_ok=True)
        raise CompileError(
            f"{mlir_path.name} [{target}]: iree-compile timed out after {COMPILE_TIMEOUT_S}s"
        ) from None
    except OSError as e:
        raise CompileError(f"cannot run iree-compile: {e}") from None
    if proc.returncode != 0 or not tmp_path.is_file():
        tmp_path.unlink(missing_ok=True)
        raise CompileError(
            f"{mlir_path.name} [{target}]: {_first_error_line(proc.stderr or proc.stdout)}"
        )
    os.replace(tmp_path, out_path)
    return out_path


def run_args(mlir_path) -> list[str]:
    """iree-run-module arguments from the model's '// RUN-ARGS:' line."""
    mlir_path = Path(mlir_path)
    with open(mlir_path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            line = line.strip()
            if line.startswith(RUN_ARGS_PREFIX):
                return shlex.split(line[len(RUN_ARGS_PREFIX):])
            if i >= 20:
                break
    raise ValueError(f"{mlir_path}: no '{RUN_ARGS_PREFIX}' line")


def model_paths(names=()) -> list[Path]:
    """Resolve model names/paths; all models in examples/models if none."""
    if not names:
        return sorted(MODELS_DIR.glob("*.mlir"))
    paths = []
    for name in names:
        p = Path(name)
        if not p.is_file():
            candidate = MODELS_DIR / (name if name.endswith(".mlir") else name + ".mlir")
            if candidate.is_file():
                p = candidate
            else:
                raise CompileError(f"model not found: {name}")
        paths.append(p)
    return paths


def output_path(out_dir, mlir_path, target: str) -> Path:
    stem = Path(mlir_path).stem
    name = f"{stem}.vmfb" if target == "llvm-cpu" else f"{stem}-{target}.vmfb"
    return Path(out_dir) / name


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 1 (argparse default: usage + exit 2)
        print(f"compile.py: error: {message}", file=sys.stderr)
        sys.exit(1)


def main(argv=None) -> int:
    parser = _Parser(
        prog="compile.py",
        description="Compile example MLIR models with iree-compile.",
    )
    parser.add_argument(
        "--target",
        default="llvm-cpu",
        help="llvm-cpu | amdgpu-gfx942 | amdgpu-gfx1100 | cuda-sm_80 | all "
        "(comma-separated list allowed; default llvm-cpu)",
    )
    parser.add_argument(
        "--out", default=str(DEFAULT_OUT), help=f"output directory (default {DEFAULT_OUT})"
    )
    parser.add_argument("models", nargs="*", help="model .mlir paths or names")
    args = parser.parse_args(argv)

    targets = []
    for t in args.target.split(","):
        t = t.strip()
        if t == "all":
            targets.extend(STANDARD_TARGETS)
        elif t:
            targets.append(t)
    try:
        for t in targets:
            target_flags(t)
        models = model_paths(args.models)
        iree_compile_binary()
    except CompileError as e:
        print(f"compile.py: error: {e}", file=sys.stderr)
        return 1
    if not models:
        print(f"compile.py: error: no models found in {MODELS_DIR}", file=sys.stderr)
        return 1

    failed = 0
    for target in targets:
        for mlir in models:
            out = output_path(args.out, mlir, target)
            try:
                compile_model(mlir, out, target)
            except CompileError as e:
                failed += 1
                print(f"compile.py: error: {e}", file=sys.stderr)
                continue
            print(out)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("compile.py: error: interrupted", file=sys.stderr)
        sys.exit(1)

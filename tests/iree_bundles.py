"""Build real .ireeprof profile bundles with the installed IREE tools.

build_bundles(out_dir) compiles the example models (examples/models/*.mlir)
for llvm-cpu and captures HAL profiling bundles with iree-run-module and
iree-benchmark-module on the local-task and local-sync devices. Bundles that
already exist in out_dir are reused, so a persistent out_dir acts as a cache.

Keys are "<model>-<device>-<modes>" for iree-run-module captures and
"<model>-bench-<device>-<modes>" for iree-benchmark-module captures, where
<modes> is "all" (queue-events,host-execution,memory-events), "full" (all
families the local devices support) or the single family name, e.g.
"mlp-local-task-all", "conv-local-task-queue-events",
"mlp-bench-local-task-all". BUNDLE_SPECS describes each key.

Profiling families the local (CPU) HAL devices reject in IREE 3.13.0
(UNIMPLEMENTED): dispatch-events, device-queue-events (and the GPU-only
counters/device-metrics/executable-traces families).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from examples.compile import MODELS_DIR, compile_model, run_args  # noqa: E402

ALL_MODES = ("queue-events", "host-execution", "memory-events")
FULL_MODES = ALL_MODES + ("executable-metadata", "command-region-events")
SINGLE_MODES = (
    "queue-events",
    "host-execution",
    "memory-events",
    "executable-metadata",
    "command-region-events",
)
RUN_TIMEOUT_S = 120
BENCH_ARGS = ("--benchmark_repetitions=2", "--benchmark_min_time=20x")


@dataclass(frozen=True)
class BundleSpec:
    key: str
    model: str  # model stem in examples/models
    tool: str  # "run" (iree-run-module) or "bench" (iree-benchmark-module)
    device: str  # "local-task" | "local-sync"
    modes: tuple[str, ...]  # --device_profiling_mode families

    @property
    def mode_flag(self) -> str:
        return ",".join(self.modes)


def _modes_label(modes: tuple[str, ...]) -> str:
    if modes == ALL_MODES:
        return "all"
    if modes == FULL_MODES:
        return "full"
    return "+".join(modes)


def _spec(model: str, tool: str, device: str, modes: tuple[str, ...]) -> BundleSpec:
    middle = f"bench-{device}" if tool == "bench" else device
    return BundleSpec(f"{model}-{middle}-{_modes_label(modes)}", model, tool, device, modes)


def _make_specs() -> dict[str, BundleSpec]:
    specs: list[BundleSpec] = []
    all_models = ("mlp", "conv", "attention", "elementwise", "dynamic", "multi_result", "loop")
    for model in all_models:
        for device in ("local-task", "local-sync"):
            specs.append(_spec(model, "run", device, ALL_MODES))
    for model in ("mlp", "conv"):
        for mode in SINGLE_MODES:
            specs.append(_spec(model, "run", "local-task", (mode,)))
        specs.append(_spec(model, "run", "local-task", FULL_MODES))
    specs.append(_spec("attention", "run", "local-task", ("host-execution",)))
    specs.append(_spec("attention", "run", "local-task", ("command-region-events",)))
    specs.append(_spec("mlp", "bench", "local-task", ALL_MODES))
    specs.append(_spec("conv", "bench", "local-task", ALL_MODES))
    specs.append(_spec("mlp", "bench", "local-sync", ALL_MODES))
    return {s.key: s for s in specs}


BUNDLE_SPECS: dict[str, BundleSpec] = _make_specs()


class BundleBuildError(RuntimeError):
    """A bundle could not be produced; str() is a short message."""


def _tool(name: str) -> str:
    env = os.environ.get(name.upper().replace("-", "_"))  # e.g. IREE_RUN_MODULE
    if env:
        return env
    found = shutil.which(name)
    if not found:
        raise BundleBuildError(f"{name} not found on PATH")
    return found


def tools_available() -> bool:
    """True when iree-compile, iree-run-module and iree-benchmark-module exist."""
    try:
        for name in ("iree-compile", "iree-run-module", "iree-benchmark-module"):
            _tool(name)
    except BundleBuildError:
        return False
    return True


def jsonl_rows(text: str) -> list[dict]:
    """Parse JSON-lines output (blank lines ignored) into a list of dicts."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _compile(model: str, vmfb_dir: Path) -> Path:
    mlir = MODELS_DIR / f"{model}.mlir"
    out = vmfb_dir / f"{model}.vmfb"
    if out.is_file() and out.stat().st_mtime >= mlir.stat().st_mtime:
        return out
    return compile_model(mlir, out, target="llvm-cpu")


def _capture(spec: BundleSpec, vmfb: Path, out: Path) -> Path:
    mlir = MODELS_DIR / f"{spec.model}.mlir"
    tmp = out.with_name(out.stem + ".partial.ireeprof")
    tmp.unlink(missing_ok=True)
    tool = "iree-benchmark-module" if spec.tool == "bench" else "iree-run-module"
    cmd = [
        _tool(tool),
        f"--device={spec.device}",
        f"--module={vmfb}",
        *run_args(mlir),
        f"--device_profiling_mode={spec.mode_flag}",
        f"--device_profiling_output={tmp}",
    ]
    if spec.tool == "bench":
        cmd.extend(BENCH_ARGS)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        tmp.unlink(missing_ok=True)
        raise BundleBuildError(f"{spec.key}: {tool} timed out") from None
    if proc.returncode != 0 or not tmp.is_file() or tmp.stat().st_size == 0:
        tmp.unlink(missing_ok=True)
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        detail = lines[-1].strip() if lines else f"exit {proc.returncode}"
        raise BundleBuildError(f"{spec.key}: {tool} failed: {detail}")
    os.replace(tmp, out)
    return out


def build_bundles(out_dir: Path, keys=None) -> dict[str, Path]:
    """Produce the bundles (all of BUNDLE_SPECS, or just `keys`) in out_dir.

    Returns {key: path to <key>.ireeprof}. Existing bundles are reused.
    Raises BundleBuildError (or examples.compile.CompileError) on failure.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    specs = [BUNDLE_SPECS[k] for k in (keys if keys is not None else BUNDLE_SPECS)]
    wanted = {s.key: out_dir / f"{s.key}.ireeprof" for s in specs}
    todo = [s for s in specs if not wanted[s.key].is_file()]
    if not todo:
        return wanted

    vmfb_dir = out_dir / "vmfb"
    models = sorted({s.model for s in todo})
    workers = max(1, min(len(models), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        vmfbs = dict(zip(models, pool.map(lambda m: _compile(m, vmfb_dir), models)))
    # Captures run one at a time: local-task spawns a worker per core and
    # concurrent runs would only distort the recorded timings.
    for spec in todo:
        _capture(spec, vmfbs[spec.model], wanted[spec.key])
    return wanted


if __name__ == "__main__":
    import time

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build/bundles")
    t0 = time.monotonic()
    try:
        result = build_bundles(target)
    except Exception as e:  # one-line CLI error
        print(f"iree_bundles: error: {e}", file=sys.stderr)
        sys.exit(1)
    for key, path in result.items():
        print(f"{key}\t{path}")
    print(f"{len(result)} bundles in {time.monotonic() - t0:.1f}s", file=sys.stderr)

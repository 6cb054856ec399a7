"""Memory of the Python API over many calls and many load/close cycles: it must stay flat.

Usage:
  python bench/memory_flat.py [--work=DIR] [--model=mlp] [--devices=local-sync,local-task]
                              [--calls=20000] [--cycles=300] [--tracemalloc]

The model (default mlp, from examples/models, compiled for llvm-cpu into DIR, default
build/bench, as bench/run_speed.py compiles it) is called with the inputs of its `// RUN-ARGS:`
line as numpy arrays, results read back to numpy: what a Python user does. Per device, in this
process:
  calls   one `load_module`, WARMUP_CALLS calls, then --calls calls of its function;
  cycles  WARMUP_CYCLES cycles, then --cycles cycles of `load_module` + one call + `close()`.
Each phase prints the process's resident set size (VmRSS of /proc/self/status, after
gc.collect()) at its start, after the warm-up and at every quarter, the growth from the warm-up
to the end in total and per call / cycle, and FLAT or GROWS: growth above GROWTH_LIMIT_BYTES
(allocator noise and numpy's caches stay well below it; a leak of one small object per call
or one executable per cycle does not). With --tracemalloc the Python heap's growth over the same
span is printed too, with the sites that grew most, and the verdict is on the Python heap (tracing
slows every call a few times, and RSS then includes tracemalloc's own tables).
Exit status: 0 when every phase is flat, 1 otherwise, 2 when the benchmark cannot run.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from run_speed import small_workload  # noqa: E402  (bench/ is sys.path[0])
from timing import BenchError  # noqa: E402

WARMUP_CALLS = 1000
WARMUP_CYCLES = 50  # the first few dozen cycles still fill caches (allocator arenas, type caches)
GROWTH_LIMIT_BYTES = 4 << 20
TOP_SITES = 3  # --tracemalloc: the allocation sites that grew most, per phase


def rss_bytes() -> int:
    """This process's resident set size, after a full collection."""
    gc.collect()
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise BenchError("no VmRSS in /proc/self/status")


def _mib(n: int) -> str:
    return f"{n / (1 << 20):8.2f} MiB"


class Phase:
    """RSS (and optionally the traced Python heap) at the marks of one phase."""

    def __init__(self, name: str, count: int, unit: str, trace: bool):
        self.name, self.count, self.unit, self.trace = name, count, unit, trace
        self.marks: list[tuple[str, int, int]] = []  # (label, rss, traced bytes)
        self.mark("start")

    def mark(self, label: str) -> None:
        traced = tracemalloc.get_traced_memory()[0] if self.trace else 0
        self.marks.append((label, rss_bytes(), traced))
        if self.trace and label == "after warm-up":
            self.snapshot = tracemalloc.take_snapshot()

    def report(self) -> bool:
        print(f"  {self.name}")
        for label, rss, traced in self.marks:
            extra = f"   python heap {_mib(traced)}" if self.trace else ""
            print(f"    {label:>16}  RSS {_mib(rss)}{extra}")
        warm = next(m for m in self.marks if m[0] == "after warm-up")
        end = self.marks[-1]
        growth = end[1] - warm[1]
        # Traced, RSS also holds tracemalloc's own tables: the Python heap is what is judged.
        flat = (end[2] - warm[2] if self.trace else growth) <= GROWTH_LIMIT_BYTES
        line = (f"    growth after warm-up: {growth / (1 << 20):+.2f} MiB over {self.count} "
                f"{self.unit}s ({growth / self.count:+.1f} bytes per {self.unit})")
        if self.trace:
            heap = end[2] - warm[2]
            line += (f"; python heap {heap / (1 << 20):+.2f} MiB "
                     f"({heap / self.count:+.1f} B/{self.unit})")
        print(line + ("   FLAT" if flat else "   GROWS"))
        if self.trace:  # where the Python heap grew most since the warm-up
            diff = tracemalloc.take_snapshot().compare_to(self.snapshot, "lineno")
            for stat in sorted(diff, key=lambda d: -d.size_diff)[:TOP_SITES]:
                if stat.size_diff > 0:
                    frame = stat.traceback[0]
                    print(f"      {stat.size_diff:+9d} B  {stat.count_diff:+6d} blocks  "
                          f"{frame.filename}:{frame.lineno}")
        return flat


def _quarters(total: int) -> set[int]:
    return {total * q // 4 for q in (1, 2, 3, 4)}


def measure_calls(vmfb: Path, function: str, inputs: list[str], device: str, calls: int,
                  trace: bool) -> bool:
    import amdgpu_cli

    phase = Phase(f"{calls} calls of {function} (one load_module)", calls, "call", trace)
    with amdgpu_cli.load_module(vmfb, device=device) as module:
        args = _inputs_as_arrays_for(module, function, inputs)
        f = module.function(function)
        for _ in range(WARMUP_CALLS):
            f(*args)
        phase.mark("after warm-up")
        marks = _quarters(calls)
        start = time.perf_counter()
        for i in range(1, calls + 1):
            f(*args)
            if i in marks:
                phase.mark(f"after {i}")
        elapsed = time.perf_counter() - start
    print(f"  ({device}: {elapsed / calls * 1e6:.1f} us per call)")
    return phase.report()


def measure_cycles(vmfb: Path, function: str, inputs: list[str], device: str, cycles: int,
                   trace: bool) -> bool:
    import amdgpu_cli

    phase = Phase(f"{cycles} load_module + call + close cycles", cycles, "cycle", trace)
    args = None

    def cycle():
        nonlocal args
        module = amdgpu_cli.load_module(vmfb, device=device)
        try:
            if args is None:
                args = _inputs_as_arrays_for(module, function, inputs)
            module.function(function)(*args)
        finally:
            module.close()

    for _ in range(WARMUP_CYCLES):
        cycle()
    phase.mark("after warm-up")
    marks = _quarters(cycles)
    start = time.perf_counter()
    for i in range(1, cycles + 1):
        cycle()
        if i in marks:
            phase.mark(f"after {i}")
    elapsed = time.perf_counter() - start
    print(f"  ({device}: {elapsed / cycles * 1e3:.2f} ms per cycle)")
    return phase.report()


def _inputs_as_arrays_for(module, function: str, inputs: list[str]) -> list:
    """The --input values as numpy arrays (scalars as they parse), as run_speed makes them."""
    from amdgpu_cli.tooling.io import parse_inputs
    from amdgpu_cli.tooling.values import Tensor

    values = parse_inputs(inputs, module._session.cconv(function)[0])
    return [v.array.copy() if isinstance(v, Tensor) else v for v in values]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=str(REPO / "build" / "bench"))
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--devices", default="local-sync,local-task")
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--cycles", type=int, default=300)
    parser.add_argument("--tracemalloc", action="store_true")
    args = parser.parse_args(argv)
    try:
        w = small_workload(Path(args.work), args.model)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.tracemalloc:
        tracemalloc.start()
    print(f"model {w.name} ({w.vmfb.name}), @{w.function}; flat = at most "
          f"{GROWTH_LIMIT_BYTES >> 20} MiB of RSS growth after the warm-up")
    flat = True
    for device in args.devices.split(","):
        print(f"{device}:")
        flat &= measure_calls(w.vmfb, w.function, w.inputs, device, args.calls, args.tracemalloc)
        flat &= measure_cycles(w.vmfb, w.function, w.inputs, device, args.cycles,
                               args.tracemalloc)
    print("memory flat" if flat else "memory GROWS")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())

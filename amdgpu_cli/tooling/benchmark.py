"""`amdgpu-benchmark`: iree-benchmark-module's measurement loop and Google Benchmark's reports.

What is measured (iree-benchmark-module 3.13.0, Google Benchmark v1.9.5 semantics):
- One benchmark per function, named `BM_<function>/process_time/real_time`: wall time and
  process CPU time (every thread of the process) per iteration; `items_per_second` is iterations
  over wall time. Devices, module, context and inputs are made once, outside the timing; each
  pass of the loop is one synchronous call of the function (so it includes waiting for the
  device), counting `batch_size` iterations (modules compiled to repeat their dispatches).
- Iteration counts as Google Benchmark finds them: `Nx` runs exactly N (rounded up to a multiple
  of the batch); a time runs 1, then more (x10 while a run is under a tenth of the time, else
  1.4 x the time over what the last run took) until a run lasts the time; only that run counts.
  Repetitions reuse the first one's count. `min_warmup_time` runs the same search untimed first.
- Aggregates (two or more repetitions): mean, median, stddev (n - 1), cv (stddev / mean, a
  percentage) of the per-iteration times and of items_per_second; their `iterations` is the
  repetition count.
- Without `--function`, every export that is not internal (`__` prefix, `$`) and takes no
  arguments (a coarse-fences export: none but its two fences) is benchmarked, in export order.
  A coarse-fences call gets a new signal fence and is waited on, inside the timing.
- `--device_replay_output` (replay/recorder.py): the capture wraps the devices (scope `init`),
  set-up and input uploads fall outside every scope, and every timed iteration is one `execute`
  scope, as iree-benchmark-module records; no untimed trial call is made (it would be recorded).

Reports (`console_text`, `json_text`, `csv_text`, `context_text`) are Google Benchmark's,
character for character where the numbers allow: the console rule and columns (`%10.3f`-style
times, SI-suffixed counters), JSON keys and `%.16e` floats, CSV columns. The context describes
this machine as Google Benchmark reads it (Linux /proc and /sys), with our own executable and
`library_version`.
"""

from __future__ import annotations

import math
import os
import socket
import statistics
import sys
import time
from typing import Callable, NamedTuple, Sequence

from amdgpu_cli import __version__
from amdgpu_cli.errors import AmdgpuCliError, UsageError

TIME_UNITS = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0}
MAX_ITERATIONS = 1_000_000_000
STATISTICS = ("mean", "median", "stddev", "cv")


class BenchmarkOptions:
    """What to benchmark and how (flags as iree-benchmark-module and Google Benchmark spell them)."""

    __slots__ = ("modules", "devices", "function", "inputs", "driver_options", "batch_size",
                 "repetitions", "min_time", "min_warmup_time", "time_unit",
                 "report_aggregates_only", "display_aggregates_only", "profiling",
                 "print_statistics", "replay", "parameters", "parameter_mode")

    def __init__(self, *, modules: Sequence[str], devices: Sequence[str] = (), function: str = "",
                 inputs: Sequence[str] = (), driver_options: dict | None = None,
                 batch_size: int = 1, repetitions: int = 1, min_time: str = "0.5s",
                 min_warmup_time: float = 0.0, time_unit: str | None = None,
                 report_aggregates_only: bool = False, display_aggregates_only: bool = False,
                 profiling=None, print_statistics: bool = False, replay=None,
                 parameters: Sequence = (), parameter_mode: str = "file"):
        self.modules = list(modules)
        self.parameters = list(parameters)  # --parameters: [scope=]path (or (scope, path))
        self.parameter_mode = parameter_mode
        self.devices = list(devices)
        self.function = function
        self.inputs = list(inputs)
        self.driver_options = driver_options or {}
        if batch_size < 1:
            raise UsageError(f"--batch_size must be at least 1, got {batch_size}")
        self.batch_size = batch_size
        if repetitions < 1:
            raise UsageError(f"--benchmark_repetitions must be at least 1, got {repetitions}")
        self.repetitions = repetitions
        self.min_time = parse_min_time(min_time)
        if min_warmup_time < 0:
            raise UsageError("--benchmark_min_warmup_time must not be negative")
        self.min_warmup_time = min_warmup_time
        if time_unit is not None and time_unit not in ("ms", "us", "ns"):
            raise AmdgpuCliError("unsupported time unit", status="INVALID_ARGUMENT")
        self.time_unit = time_unit or "ms"
        self.report_aggregates_only = report_aggregates_only
        self.display_aggregates_only = display_aggregates_only
        self.profiling = profiling  # tooling.capture_flags.ProfilingFlags or None
        self.replay = replay  # tooling.capture_flags.ReplayFlags or None
        self.print_statistics = print_statistics


def parse_min_time(text: str) -> float | int:
    """`--benchmark_min_time`: `20x` (an int: exact iterations) or `0.5s` / `0.5` (float seconds)."""
    value = text.strip()
    try:
        if value.endswith("x"):
            count = int(value[:-1])
            if count < 1:
                raise ValueError
            return count
        seconds = float(value[:-1] if value.endswith("s") else value)
        if not math.isfinite(seconds) or seconds <= 0:
            raise ValueError
        return seconds
    except ValueError:
        raise UsageError(f"--benchmark_min_time: expected `<N>x` or `<seconds>s`, got "
                         f"'{text}'") from None


class Run(NamedTuple):
    """One reported row: a repetition (`run_type` "iteration") or an aggregate."""

    name: str
    run_name: str
    run_type: str            # "iteration" | "aggregate"
    repetitions: int
    repetition_index: int    # iteration rows only
    iterations: int          # aggregates: the repetition count
    real_time: float         # per iteration in `time_unit` (cv rows: the fraction)
    cpu_time: float
    time_unit: str
    items_per_second: float
    aggregate_name: str = ""
    aggregate_unit: str = ""  # "time" | "percentage"
    family_index: int = 0


# -- measuring --------------------------------------------------------------------------------

def benchmark_functions(session, name: str) -> list[str]:
    """`--function`, or every public export that takes no arguments (a coarse-fences export:
    none but its two fences)."""
    from amdgpu_cli.tooling.run import select_function

    if name:
        return [select_function(session.module, name)]
    return [e.name for e in session.module.exports
            if not e.name.startswith("__") and "$" not in e.name
            and not session.input_chars(e.name)[0]]


def _timed(call: Callable[[], object], passes: int, flush: Callable[[], None] | None = None,
           manual: bool = False) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) of `passes` calls. With `flush` (a profile capture),
    it runs after every call with the timer paused, as iree-benchmark-module flushes profiling
    after every iteration. With `manual`, each call returns the seconds it counts (Google
    Benchmark's manual time) and those are summed instead of the wall clock."""
    if flush is None and not manual:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for _ in range(passes):
            call()
        return time.perf_counter() - wall0, time.process_time() - cpu0
    import gc

    wall = cpu = 0.0
    for _ in range(passes):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        counted = call()
        wall += counted if manual else time.perf_counter() - wall0
        cpu += time.process_time() - cpu0
        if flush is not None:
            flush()
            # The flush's garbage is collected here too, with the timer paused, rather than by
            # a collection it would trigger inside the next timed call.
            gc.collect(0)
    return wall, cpu


def _passes(iterations: int, batch: int) -> tuple[int, int]:
    """(calls, counted iterations) for at least `iterations` counted in batches of `batch`."""
    calls = -(-iterations // batch)
    return calls, calls * batch


def find_iterations(call: Callable[[], object], min_time: float, batch: int,
                    flush: Callable[[], None] | None = None, manual: bool = False
                    ) -> tuple[int, float, float]:
    """Google Benchmark's search for an iteration count lasting `min_time` seconds of measured
    time (wall, or manual); returns the final run's (iterations, time, cpu)."""
    iterations = 1
    while True:
        calls, counted = _passes(iterations, batch)
        wall, cpu = _timed(call, calls, flush, manual)
        if counted >= MAX_ITERATIONS or wall >= min_time:
            return counted, wall, cpu
        multiplier = min_time * 1.4 / max(wall, 1e-9)
        if wall / min_time <= 0.1:
            multiplier = 10.0
        iterations = min(MAX_ITERATIONS, int(round(max(multiplier * counted, counted + 1.0))))


def measure(call: Callable[[], object], options: BenchmarkOptions, name: str,
            progress: Callable[[str], None] | None = None,
            flush: Callable[[], None] | None = None, manual: bool = False) -> list[Run]:
    """The repetitions of one benchmark (plus its aggregates) as report rows; `flush` runs after
    every call, untimed (profiling). With `manual`, `call` returns the seconds each iteration
    counts and the benchmark is named `.../manual_time` (Google Benchmark's UseManualTime)."""
    scale = TIME_UNITS[options.time_unit]
    full = f"BM_{name}/process_time/{'manual_time' if manual else 'real_time'}"
    if options.min_warmup_time > 0:
        find_iterations(call, options.min_warmup_time, options.batch_size, flush, manual)
    rows: list[Run] = []
    iterations = None
    for index in range(options.repetitions):
        if progress is not None:
            progress(f"{full}: repetition {index + 1} of {options.repetitions}")
        if iterations is not None:
            wall, cpu = _timed(call, _passes(iterations, options.batch_size)[0], flush, manual)
        elif isinstance(options.min_time, int):
            calls, iterations = _passes(options.min_time, options.batch_size)
            wall, cpu = _timed(call, calls, flush, manual)
        else:
            iterations, wall, cpu = find_iterations(call, options.min_time, options.batch_size,
                                                    flush, manual)
        rows.append(Run(full, full, "iteration", options.repetitions, index, iterations,
                        wall * scale / iterations, cpu * scale / iterations, options.time_unit,
                        iterations / wall if wall > 0 else 0.0))
    if options.repetitions > 1:
        rows += aggregates(rows)
    return rows


def aggregates(rows: Sequence[Run]) -> list[Run]:
    """mean, median, stddev and cv rows of repetitions `rows` (Google Benchmark's statistics)."""
    first = rows[0]
    out = []
    columns = [[r.real_time for r in rows], [r.cpu_time for r in rows],
               [r.items_per_second for r in rows]]
    for stat in STATISTICS:
        if stat == "mean":
            values = [statistics.fmean(c) for c in columns]
        elif stat == "median":
            values = [statistics.median(c) for c in columns]
        elif stat == "stddev":
            values = [statistics.stdev(c) for c in columns]
        else:
            values = [statistics.stdev(c) / statistics.fmean(c) if statistics.fmean(c) else 0.0
                      for c in columns]
        out.append(Run(f"{first.run_name}_{stat}", first.run_name, "aggregate", len(rows), 0,
                       len(rows), values[0], values[1], first.time_unit, values[2], stat,
                       "percentage" if stat == "cv" else "time", first.family_index))
    return out


class Benchmarks:
    """The one-time set-up (devices, module, context, inputs), then `run()` to measure; as
    iree-benchmark-module registers its benchmarks before Google Benchmark starts, set-up errors
    come before any report. A context manager: closing releases the devices."""

    def __init__(self, options: BenchmarkOptions, *, registry=None):
        from amdgpu_cli.hal.registry import default_registry
        from amdgpu_cli.tooling.capture_flags import profiling_capture, replay_capture
        from amdgpu_cli.tooling.io import parse_inputs
        from amdgpu_cli.tooling.run import Session, _annotate, to_vm

        if not options.modules:
            raise UsageError("no --module= specified")
        self.options = options
        self.capture = profiling_capture(options.profiling)  # flags and path, checked now
        self.replay = replay_capture(options.replay)  # flags and path, checked now
        registry = (registry or default_registry()).with_options(options.driver_options)
        try:
            self.session = Session(options.modules[-1], options.devices, registry=registry,
                                   track_memory=options.print_statistics,
                                   libraries=options.modules[:-1], replay=self.replay,
                                   parameters=options.parameters,
                                   parameter_mode=options.parameter_mode)
        except BaseException:
            if self.replay is not None:
                self.replay.end()
            raise
        recorder = self.session.replay
        try:
            if self.capture is not None:
                try:
                    self.capture.check(self.session.devices)
                except AmdgpuCliError as e:
                    raise _annotate(e, "beginning device profiling") from None
            names = benchmark_functions(self.session, options.function)
            if not names:
                raise AmdgpuCliError("no benchmarkable function: pass --function= (without it "
                                     "only exported functions that take no arguments are "
                                     "benchmarked)", status="NOT_FOUND")
            self.calls: list[tuple[str, Callable[[], object]]] = []
            for name in names:
                arg_chars, asynchronous = self.session.input_chars(name)
                try:
                    inputs = parse_inputs(options.inputs, arg_chars, numpy_scalars=False)
                    vm_args = [to_vm(v, ch, self.session.device)
                               for v, ch in zip(inputs, arg_chars)]
                except AmdgpuCliError as e:
                    raise _annotate(e, "parsing function inputs") from None
                if len(vm_args) != len(arg_chars):
                    raise AmdgpuCliError(f"input list and function mismatch; expected "
                                         f"{len(arg_chars)} arguments but passed "
                                         f"{len(vm_args)}", status="INVALID_ARGUMENT")
                vm_call = self.session.context.caller(name)
                if asynchronous:
                    # A coarse-fences call: new fences each time, the call, then the wait for its
                    # signal fence (iree-benchmark-module times the call and the wait; making
                    # the fences is timed here too: a few microseconds).
                    def call(vm_call=vm_call, args=vm_args, fences=self.session.async_fences):
                        wait, finish = fences()
                        vm_call([*args, wait, finish])
                        finish.wait()
                else:
                    def call(vm_call=vm_call, args=vm_args):
                        vm_call(args)
                if recorder is not None:  # one `execute` scope per iteration
                    def call(call=call, recorder=recorder):
                        recorder.scope_begin("execute")
                        call()
                        recorder.scope_end("execute")
                if self.capture is None and recorder is None:
                    # (a capture records every call, as IREE's does: no trial call then)
                    try:
                        call()  # fails here, once, rather than inside the timing loop
                    except AmdgpuCliError as e:
                        raise _annotate(e, f"invoking function '{name}'") from None
                self.calls.append((name, call))
        except BaseException:
            self.session.close()
            if self.replay is not None:
                self.replay.end()
            raise

    def run(self, progress: Callable[[str], None] | None = None) -> list[Run]:
        """Every benchmark's rows, in function order. A profile capture spans all of them (as in
        IREE: begun after set-up, flushed after every iteration, ended after the last)."""
        from amdgpu_cli.tooling.profiling import capturing

        rows: list[Run] = []
        with capturing(self.capture, self.session.devices) as flush:
            for family, (name, call) in enumerate(self.calls):
                try:
                    rows += [r._replace(family_index=family)
                             for r in measure(call, self.options, name, progress, flush)]
                except AmdgpuCliError as e:
                    from amdgpu_cli.tooling.run import _annotate

                    raise _annotate(e, f"invoking function '{name}'") from None
        return rows

    def close(self) -> None:
        if self.capture is not None and self.capture.active:
            self.capture.abort()
        self.calls = []  # the inputs they hold go now (--print_statistics counts them freed)
        try:
            self.session.close()
        finally:
            if self.replay is not None:
                self.replay.end()

    def __enter__(self) -> Benchmarks:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- reports ----------------------------------------------------------------------------------

def context(executable: str | None = None) -> dict:
    """What Google Benchmark reports about the machine (date, host, CPUs, caches, load)."""
    mhz = _cpu_mhz()
    return {
        "date": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
        "host_name": socket.gethostname(),
        "executable": executable or (os.path.abspath(sys.argv[0]) if os.path.isfile(sys.argv[0])
                                     else sys.executable),
        "num_cpus": os.cpu_count() or 1,
        "mhz_per_cpu": int(mhz),
        "mhz": mhz,  # the console block's figure (not a JSON key)
        "cpu_scaling_enabled": _cpu_scaling_enabled(),
        "aslr_enabled": _read("/proc/sys/kernel/randomize_va_space").strip() not in ("", "0"),
        "caches": _caches(),
        "load_avg": list(os.getloadavg()),
        "library_version": f"amdgpu_cli {__version__}",
        "library_build_type": "release",
        "json_schema_version": 1,
    }


def context_text(ctx: dict) -> str:
    """The block Google Benchmark prints on stderr before a console report."""
    lines = [ctx["date"], f"Running {ctx['executable']}",
             f"Run on ({ctx['num_cpus']} X {ctx['mhz']:g} MHz CPU "
             f"{'s' if ctx['num_cpus'] > 1 else ''})"]
    if ctx["caches"]:
        lines.append("CPU Caches:")
        for c in ctx["caches"]:
            sharing = f" (x{ctx['num_cpus'] // c['num_sharing']})" if c["num_sharing"] else ""
            lines.append(f"  L{c['level']} {c['type']} {c['size'] // 1024} KiB{sharing}")
    lines.append("Load Average: " + ", ".join(f"{v:.2f}" for v in ctx["load_avg"]))
    if ctx["cpu_scaling_enabled"]:
        lines.append("***WARNING*** CPU scaling is enabled, the benchmark real time measurements "
                     "may be noisy and will incur extra overhead.")
    if ctx["aslr_enabled"]:
        lines.append("***WARNING*** ASLR is enabled, the results may have unreproducible noise "
                     "in them.")
    return "\n".join(lines) + "\n"


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _cpu_mhz() -> float:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("cpu MHz"):
            try:
                return float(line.split(":", 1)[1])
            except ValueError:
                break
    return 0.0


def _cpu_scaling_enabled() -> bool:
    governor = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").strip()
    return bool(governor) and governor != "performance"


def _caches() -> list[dict]:
    caches = []
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(e for e in os.listdir(base) if e.startswith("index"))
    except OSError:
        return caches
    for entry in entries:
        path = f"{base}/{entry}"
        size_text = _read(f"{path}/size").strip()
        try:
            size = int(size_text[:-1]) * {"K": 1024, "M": 1 << 20}.get(size_text[-1], 1)
            level = int(_read(f"{path}/level"))
        except (ValueError, IndexError):
            continue
        shared = _read(f"{path}/shared_cpu_list").strip()
        caches.append({"type": _read(f"{path}/type").strip(), "level": level, "size": size,
                       "num_sharing": _cpu_count(shared)})
    return caches


def _cpu_count(cpu_list: str) -> int:
    count = 0
    for part in filter(None, cpu_list.split(",")):
        low, _, high = part.partition("-")
        try:
            count += int(high or low) - int(low) + 1
        except ValueError:
            return 0
    return count


def name_width(rows: Sequence[Run], repetitions: int) -> int:
    """Google Benchmark's name column: the longest benchmark name, plus room for `_median`."""
    width = max([10, *(len(r.run_name) for r in rows)])
    return width + (1 + max(map(len, STATISTICS)) if repetitions > 1 else 0)


def _format_time(value: float) -> str:
    if value < 1.0:
        return f"{value:10.3f}"
    if value < 10.0:
        return f"{value:10.2f}"
    if value < 100.0:
        return f"{value:10.1f}"
    if value > 9999999999:
        return f"{value:1.4e}"
    return f"{value:10.0f}"


_BIG_PREFIXES = "kMGTPEZY"
_SMALL_PREFIXES = "munpfazy"


def human_number(value: float, one_k: float = 1000.0) -> str:
    """Google Benchmark's HumanReadableNumber: 6 significant digits and an SI prefix."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    threshold = 1.0  # Google Benchmark: max(1, 10^-precision) with precision 1
    big = threshold * one_k - 1
    if value > big:
        scaled = value
        for prefix in _BIG_PREFIXES:
            scaled /= one_k
            if scaled <= big:
                return f"{sign}{scaled:g}{prefix}"
        return f"{sign}{value:g}"
    if value < threshold and value < 0.01:
        scaled = value
        for prefix in _SMALL_PREFIXES:
            scaled *= one_k
            if scaled >= threshold:
                return f"{sign}{scaled:g}{prefix}"
    return f"{sign}{value:g}"


def console_text(rows: Sequence[Run], width: int, *, header: bool = True) -> str:
    """Google Benchmark's console report (no colours)."""
    out = []
    if header:
        title = f"{'Benchmark':<{width}} {'Time':>13} {'CPU':>15} {'Iterations':>12} UserCounters..."
        out += ["-" * len(title), title, "-" * len(title)]
    for r in rows:
        line = f"{r.name:<{width}} "
        if r.aggregate_unit == "percentage":
            line += f"{100 * r.real_time:10.2f} {'%':<4} {100 * r.cpu_time:10.2f} {'%':<4} "
            counter = f"{100 * r.items_per_second:.2f}%"
        else:
            line += (f"{_format_time(r.real_time)} {r.time_unit:<4} "
                     f"{_format_time(r.cpu_time)} {r.time_unit:<4} ")
            counter = f"{human_number(r.items_per_second)}/s"
        line += f"{r.iterations:10d} items_per_second={counter}"
        out.append(line)
    return "".join(f"{line}\n" for line in out)


def _json_float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "-Infinity" if value < 0 else "Infinity"
    return f"{value:.16e}"


def _json_string(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


def json_text(ctx: dict, rows: Sequence[Run]) -> str:
    """Google Benchmark's JSON report (the same keys, order and number formats)."""
    def kv(key, value, indent):
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        elif isinstance(value, float):
            text = _json_float(value)
        else:
            text = _json_string(str(value))
        return f"{indent}{_json_string(key)}: {text}"

    lines = ["{", '  "context": {']
    pad = "    "
    body = [kv(k, ctx[k], pad) for k in ("date", "host_name", "executable", "num_cpus",
                                         "mhz_per_cpu", "cpu_scaling_enabled", "aslr_enabled")]
    caches = ",\n".join(
        "      {\n" + ",\n".join(kv(k, c[k], "        ")
                                 for k in ("type", "level", "size", "num_sharing"))
        + "\n      }" for c in ctx["caches"])
    body.append(f'{pad}"caches": [\n{caches}\n{pad}]')
    body.append(f'{pad}"load_avg": [' + ",".join(f"{v:g}" for v in ctx["load_avg"]) + "]")
    body += [kv(k, ctx[k], pad) for k in ("library_version", "library_build_type",
                                          "json_schema_version")]
    lines.append(",\n".join(body))
    lines.append("  },")
    lines.append('  "benchmarks": [')
    entries = []
    ind = "      "
    for r in rows:
        fields = [kv("name", r.name, ind), kv("family_index", r.family_index, ind),
                  kv("per_family_instance_index", 0, ind), kv("run_name", r.run_name, ind),
                  kv("run_type", r.run_type, ind), kv("repetitions", r.repetitions, ind)]
        if r.run_type != "aggregate":
            fields.append(kv("repetition_index", r.repetition_index, ind))
        fields.append(kv("threads", 1, ind))
        if r.run_type == "aggregate":
            fields += [kv("aggregate_name", r.aggregate_name, ind),
                       kv("aggregate_unit", r.aggregate_unit, ind)]
        fields += [kv("iterations", r.iterations, ind), kv("real_time", r.real_time, ind),
                   kv("cpu_time", r.cpu_time, ind), kv("time_unit", r.time_unit, ind),
                   kv("items_per_second", r.items_per_second, ind)]
        entries.append("    {\n" + ",\n".join(fields) + "\n    }")
    lines.append(",\n".join(entries))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def csv_text(rows: Sequence[Run], *, header: bool = True) -> str:
    """Google Benchmark's CSV report."""
    out = []
    if header:
        out.append("name,iterations,real_time,cpu_time,time_unit,bytes_per_second,"
                   "items_per_second,label,error_occurred,error_message")
    for r in rows:
        unit = "" if r.aggregate_unit == "percentage" else r.time_unit
        name = r.name.replace('"', '""')
        out.append(f'"{name}",{r.iterations},{r.real_time:g},{r.cpu_time:g},{unit},,'
                   f"{r.items_per_second:g},,,")
    return "".join(f"{line}\n" for line in out)

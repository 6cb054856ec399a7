"""The replay benchmark loop: what iree-benchmark-replay 3.13.0 times (../shared/reference/
ireereplay.md §5.4), measured and reported by amdgpu_cli.tooling.benchmark (Google Benchmark's
iteration search, repetitions, aggregates and reports).

- Set-up, untimed and once: the replay is planned (every payload decoded), the devices made, a
  profile capture begun when asked for.
- One iteration is one whole execution of the plan with a fresh object table: executables
  prepared, buffers allocated and uploaded, every queue op waited for, everything released.
- Unscoped, the benchmark is `BM_replay/process_time/real_time`: wall time per iteration.
- With a scope name it is `BM_replay/scope:NAME/process_time/manual_time`: the whole replay still
  runs, and each iteration's time is the sum of the intervals from an outermost `scope_begin`
  of that name to its `scope_end` (a same-name scope nested inside is counted once), the clock
  read as each marker is reached.
- A profile capture is flushed after every iteration with the timer paused.

Where IREE aborts inside an iteration (exit 250 through its wrapper) for a scope name no marker
has, an end before its begin or a scope left open, we fail with one line and exit 1; a name no
marker has is found when the replay is planned, before any timing.
"""

from __future__ import annotations

import time
from typing import Callable

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.replay import executor
from amdgpu_cli.replay.schema import Op

__all__ = ["ReplayBenchmark"]


class _ScopeTimer:
    """Sums one iteration's time inside the outermost scopes named `name` (on_scope callback)."""

    __slots__ = ("name", "depth", "started", "total")

    def __init__(self, name: str):
        self.name = name
        self.depth = 0
        self.started = 0.0
        self.total = 0.0

    def __call__(self, name: str, begin: bool) -> None:
        if name != self.name:
            return
        now = time.perf_counter()
        if begin:
            if self.depth == 0:
                self.started = now
            self.depth += 1
        else:
            if self.depth == 0:
                raise AmdgpuCliError(f"replay scope '{name}' ended before it began",
                                     status="FAILED_PRECONDITION")
            self.depth -= 1
            if self.depth == 0:
                self.total += now - self.started

    def take(self) -> float:
        if self.depth:
            raise AmdgpuCliError(f"replay scope '{self.name}' was not ended",
                                 status="FAILED_PRECONDITION")
        total, self.total = self.total, 0.0
        return total


def scope_names(plan) -> set[str]:
    """The names of the scope markers a plan holds."""
    return {arg[0] for fn, record, arg in plan.steps
            if record.operation_code == Op.SCOPE_BEGIN and isinstance(arg, tuple) and arg}


class ReplayBenchmark:
    """One replay benchmark: set up now (plan, devices), measured by `run()`; close releases the
    devices."""

    def __init__(self, path: str, options, *, registry=None, scope: str = "", remaps=(),
                 substitutions=(), capture=None):
        from amdgpu_cli.hal.registry import default_registry
        from amdgpu_cli.tooling.run import DEFAULT_DEVICE

        self.options = options
        self.scope = scope
        self.capture = capture
        self.remaps = tuple(remaps)
        self.substitutions = tuple(substitutions)
        replay_file = executor.open_replay(path)
        try:
            self.plan = executor.plan(replay_file)
        finally:
            replay_file.close()
        if scope and scope not in scope_names(self.plan):
            raise AmdgpuCliError(f"--replay_scope='{scope}' did not match any replay scope marker",
                                 status="NOT_FOUND")
        registry = (registry or default_registry()).with_options(options.driver_options)
        self.devices = registry.create_devices(list(options.devices), default=DEFAULT_DEVICE)
        try:
            if capture is not None:
                capture.check(self.devices)
        except BaseException:
            self.close()
            raise

    @property
    def name(self) -> str:
        return f"replay/scope:{self.scope}" if self.scope else "replay"

    def _call(self) -> Callable[[], float | None]:
        plan, devices = self.plan, self.devices
        remaps, substitutions = self.remaps, self.substitutions
        run = executor.execute
        if not self.scope:
            def call():
                run(plan, devices, file_remaps=remaps, substitutions=substitutions)
            return call
        timer = _ScopeTimer(self.scope)

        def scoped():
            run(plan, devices, file_remaps=remaps, substitutions=substitutions, on_scope=timer)
            return timer.take()
        return scoped

    def run(self, progress: Callable[[str], None] | None = None) -> list:
        """The report rows (repetitions, then aggregates)."""
        from amdgpu_cli.tooling.benchmark import measure
        from amdgpu_cli.tooling.profiling import capturing

        with capturing(self.capture, self.devices) as flush:
            return measure(self._call(), self.options, self.name, progress, flush,
                           manual=bool(self.scope))

    def close(self) -> None:
        for device in getattr(self, "devices", ()):
            device.close()
        self.devices = []

    def __enter__(self) -> ReplayBenchmark:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

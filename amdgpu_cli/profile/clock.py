"""Device tick -> nanosecond conversion from clock-correlation samples (IREE's first/last fit).

Per physical device the fit uses the first and the last clock sample in file order. It exists when
there are at least two samples, none marked DEVICE_TICK_UNALIGNED, both ends carry DEVICE_TICK and
the chosen host time (HOST_CPU_TIMESTAMP <= INT64_MAX, or for the IREE host domain a valid
HOST_TIME_BRACKET midpoint), and both tick and time strictly increase. Durations are
`floor((ticks * time_span + tick_span // 2) / tick_span)` in exact integer arithmetic; timestamps
are `first_time +/- duration(|tick - first_tick|)`. Source: reference ireeprof.md section 3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from amdgpu_cli.profile import schema

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
F = schema.Flags

HOST_CPU_TIMESTAMP_NS = "host_cpu_timestamp_ns"
IREE_HOST_TIME_NS = "iree_host_time_ns"


@dataclass
class DeviceClock:
    """The clock samples seen for one physical device."""

    physical_device_ordinal: int
    sample_count: int = 0
    unaligned_count: int = 0
    first: np.void | None = None
    last: np.void | None = None

    def add(self, sample: np.void) -> None:
        if int(sample["flags"]) & F.CLOCK_DEVICE_TICK_UNALIGNED:
            self.unaligned_count += 1
        if self.sample_count == 0:
            self.first = sample
        self.last = sample
        self.sample_count += 1

    def fit(self, domain: str = HOST_CPU_TIMESTAMP_NS) -> "ClockFit | None":
        if self.sample_count < 2 or self.unaligned_count:
            return None
        first, last = self.first, self.last
        ff, lf = int(first["flags"]), int(last["flags"])
        if not (ff & F.CLOCK_DEVICE_TICK) or not (lf & F.CLOCK_DEVICE_TICK):
            return None
        if (ff | lf) & F.CLOCK_DEVICE_TICK_UNALIGNED:
            return None
        t0, t1 = _sample_time(first, domain), _sample_time(last, domain)
        if t0 is None or t1 is None:
            return None
        k0, k1 = int(first["device_tick"]), int(last["device_tick"])
        if k1 <= k0 or t1 <= t0:
            return None
        return ClockFit(domain, int(first["sample_id"]), int(last["sample_id"]), k0, k1, t0, t1)


def _sample_time(sample: np.void, domain: str) -> int | None:
    flags = int(sample["flags"])
    if domain == HOST_CPU_TIMESTAMP_NS:
        t = int(sample["host_cpu_timestamp_ns"])
        if not flags & F.CLOCK_HOST_CPU_TIMESTAMP or t > INT64_MAX:
            return None
        return t
    begin, end = int(sample["host_time_begin_ns"]), int(sample["host_time_end_ns"])
    if not flags & F.CLOCK_HOST_TIME_BRACKET or begin < 0 or end < begin:
        return None
    return begin + (end - begin) // 2


@dataclass(frozen=True)
class ClockFit:
    time_domain: str
    first_sample_id: int
    last_sample_id: int
    first_tick: int
    last_tick: int
    first_time_ns: int
    last_time_ns: int

    @property
    def tick_span(self) -> int:
        return self.last_tick - self.first_tick

    @property
    def time_span_ns(self) -> int:
        return self.last_time_ns - self.first_time_ns

    @property
    def ns_per_tick(self) -> float:
        return float(self.time_span_ns) / float(self.tick_span)

    @property
    def tick_frequency_hz(self) -> float:
        ns = self.ns_per_tick
        return 1e9 / ns if ns > 0.0 else 0.0

    def ticks_to_ns(self, ticks: int) -> int | None:
        """Rounded duration of `ticks` device ticks; None when it overflows int64."""
        if ticks == 0:
            return 0
        ns = (ticks * self.time_span_ns + self.tick_span // 2) // self.tick_span
        return ns if ns <= INT64_MAX else None

    def map_tick(self, tick: int) -> int | None:
        """Host time of a device tick (extrapolated outside the sampled range)."""
        if tick >= self.first_tick:
            d = self.ticks_to_ns(tick - self.first_tick)
            if d is None or self.first_time_ns > INT64_MAX - d:
                return None
            return self.first_time_ns + d
        d = self.ticks_to_ns(self.first_tick - tick)
        if d is None or self.first_time_ns < INT64_MIN + d:
            return None
        return self.first_time_ns - d


def device_clocks(bundle) -> dict[int, DeviceClock]:
    """Clock samples per physical device ordinal, from every clock-correlations chunk."""
    clocks: dict[int, DeviceClock] = {}
    typed = bundle.typed("clock-correlations")
    for sample in typed.rows:
        pdo = int(sample["physical_device_ordinal"])
        clocks.setdefault(pdo, DeviceClock(pdo)).add(sample)
    return clocks


# --- whole columns of ticks ----------------------------------------------------------------------

U64_MAX = (1 << 64) - 1


def scale_ticks(fit: ClockFit, ticks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`ticks_to_ns` over an array: (int64 ns, which ones fit in int64).

    Exact: in uint64 when the largest product fits, else in Python integers (object arrays)."""
    ticks = np.asarray(ticks, np.uint64)
    if not len(ticks):
        return np.zeros(0, np.int64), np.zeros(0, bool)
    span, time_span, half = fit.tick_span, fit.time_span_ns, fit.tick_span // 2
    if int(ticks.max()) * time_span + half <= U64_MAX:
        ns = (ticks * np.uint64(time_span) + np.uint64(half)) // np.uint64(span)
        ok = ns <= np.uint64(INT64_MAX)
    else:
        ns = (ticks.astype(object) * time_span + half) // span
        ok = np.asarray(ns <= INT64_MAX, bool)
    return np.where(ok, ns, 0).astype(np.int64), ok


def map_ticks(fit: ClockFit, ticks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`map_tick` over an array: (int64 host times, which ones mapped without overflow)."""
    ticks = np.asarray(ticks, np.uint64)
    k0, t0 = np.uint64(fit.first_tick), fit.first_time_ns
    after = ticks >= k0
    ns, ok = scale_ticks(fit, np.where(after, ticks - k0, k0 - ticks))
    # Python ints for the limits: t0 may sit anywhere in int64.
    ok &= np.where(after, ns <= INT64_MAX - t0, ns <= t0 - INT64_MIN)
    ns = np.where(ok, ns, 0)
    return np.where(after, np.int64(t0) + ns, np.int64(t0) - ns), ok


@dataclass
class TickRanges:
    """Device (start, end) tick pairs placed in host time, one entry per event."""

    valid: np.ndarray            # start != 0, end != 0, end >= start
    placed: np.ndarray           # valid, a fit exists for the device, both ends mapped, end >= start
    start_ns: np.ndarray         # int64 host times (0 where not placed)
    end_ns: np.ndarray
    first_sample_id: np.ndarray  # the fit's clock samples (0 where not placed)
    last_sample_id: np.ndarray


def map_tick_ranges(fit_of, pdos: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> TickRanges:
    """Places each event's ticks with its device's fit; `fit_of(pdo)` returns a ClockFit or None."""
    pdos = np.asarray(pdos)
    starts, ends = np.asarray(starts, np.uint64), np.asarray(ends, np.uint64)
    n = len(starts)
    valid = (starts != 0) & (ends != 0) & (ends >= starts)
    out = TickRanges(valid, np.zeros(n, bool), np.zeros(n, np.int64), np.zeros(n, np.int64),
                     np.zeros(n, np.uint64), np.zeros(n, np.uint64))
    for pdo in np.unique(pdos[valid]).tolist():
        fit = fit_of(pdo)
        if fit is None:
            continue
        rows = np.flatnonzero(valid & (pdos == pdo))
        a, ok_a = map_ticks(fit, starts[rows])
        b, ok_b = map_ticks(fit, ends[rows])
        ok = ok_a & ok_b & (b >= a)
        rows = rows[ok]
        out.placed[rows] = True
        out.start_ns[rows], out.end_ns[rows] = a[ok], b[ok]
        out.first_sample_id[rows], out.last_sample_id[rows] = fit.first_sample_id, fit.last_sample_id
    return out

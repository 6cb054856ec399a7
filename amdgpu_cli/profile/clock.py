"""Device tick -> nanosecond conversion from clock-correlation samples (IREE's first/last fit).

Per physical device the fit uses the first and the last clock sample in file order. It exists when
there are at least two samples, none marked DEVICE_TICK_UNALIGNED, both ends carry DEVICE_TICK and
the chosen host time (HOST_CPU_TIMESTAMP <= INT64_MAX, or for the IREE host domain a valid
HOST_TIME_BRACKET midpoint), and both tick and time strictly increase. Durations are
`floor((ticks * time_span + tick_span // 2) / tick_span)` in exact integer arithmetic; timestamps
are `first_time +/- duration(|tick - first_tick|)`. Source: reference ireeprof.md section 3.

One tick or one fit at a time, in plain Python (`summary` uses it without numpy); the same
conversions over whole columns are in `tick_columns.py`.
"""

from __future__ import annotations

from amdgpu_cli.profile.names import Flags

INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
F = Flags

HOST_CPU_TIMESTAMP_NS = "host_cpu_timestamp_ns"
IREE_HOST_TIME_NS = "iree_host_time_ns"


class DeviceClock:
    """The clock samples seen for one physical device: how many, how many unaligned, the first
    and the last (mappings of the clock-correlation fields)."""

    def __init__(self, physical_device_ordinal: int, sample_count: int = 0,
                 unaligned_count: int = 0, first: dict | None = None, last: dict | None = None):
        self.physical_device_ordinal = physical_device_ordinal
        self.sample_count = sample_count
        self.unaligned_count = unaligned_count
        self.first = first
        self.last = last

    def add(self, sample: dict) -> None:
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


def _sample_time(sample: dict, domain: str) -> int | None:
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


class ClockFit:
    """A first/last fit of device ticks to one host time domain."""

    __slots__ = ("time_domain", "first_sample_id", "last_sample_id", "first_tick", "last_tick",
                 "first_time_ns", "last_time_ns")

    def __init__(self, time_domain: str, first_sample_id: int, last_sample_id: int,
                 first_tick: int, last_tick: int, first_time_ns: int, last_time_ns: int):
        self.time_domain = time_domain
        self.first_sample_id = first_sample_id
        self.last_sample_id = last_sample_id
        self.first_tick = first_tick
        self.last_tick = last_tick
        self.first_time_ns = first_time_ns
        self.last_time_ns = last_time_ns

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

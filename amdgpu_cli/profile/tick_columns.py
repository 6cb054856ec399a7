"""Device tick -> nanosecond conversion over whole columns (numpy): `clock.py`'s fit applied to
arrays of ticks, exactly (uint64 where the largest product fits, else Python integers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from amdgpu_cli.profile.clock import INT64_MAX, INT64_MIN, ClockFit

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
    # (not plain np.unique: that imports numpy.ma, 20-40 ms, in numpy 2; toolkit.distinct)
    for pdo in np.unique(pdos[valid], return_counts=True)[0].tolist():
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

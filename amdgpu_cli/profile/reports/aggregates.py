"""What the projection reports print from, without numpy: the aggregate tables and their timing.

`Aggregates` holds one invocation's metadata model, the matched/valid counts of each timing domain
and five group tables (per function on the device and on the host, per command buffer execution on
each, per device submission); `dispatch`, `executable`, `command` and `explain` make their rows
from it. `projection.Projection` fills it from whole numpy columns (and adds the matched events);
`projection_native` fills it from its native pass, with tables of plain lists where they are small,
so a report on a small bundle never imports numpy. `values(column)` reads a column of either kind
as a list of Python numbers.

Sources: IREE runtime/src/iree/tooling/profile/{dispatch.c,projection.c}.
"""

from __future__ import annotations

from amdgpu_cli.profile.names import U64_MAX
from amdgpu_cli.profile.reports.rows import RowLayout

DISPATCH, EXECUTABLE, COMMAND, QUEUE = "dispatch", "executable", "command", "queue"
MODES = (DISPATCH, EXECUTABLE, COMMAND, QUEUE)
HOST_TIMING = {"timing_source": "host_execution_event", "time_domain": "iree_host_time_ns",
               "duration_time_domain": "iree_host_duration_ns"}
# The event field `--id` selects on, per mode.
ID_FIELD = {DISPATCH: "event_id", EXECUTABLE: "executable_id", COMMAND: "command_buffer_id",
            QUEUE: "submission_id"}

# The rows of --dispatch_events (the exact path renders them from numpy columns, the native pass
# from its own array of events).
_HOST_TIMING_FIELDS = [(k, "=" + v) for k, v in HOST_TIMING.items()]

DISPATCH_EVENT_ROW = RowLayout("dispatch_event", [
    ("physical_device_ordinal", "int"), ("queue_ordinal", "int"), ("stream_id", "int"),
    ("event_id", "int"), ("submission_id", "int"), ("command_buffer_id", "int"),
    ("command_index", "int"), ("executable_id", "int"), ("function_ordinal", "int"),
    ("key", "str"), ("flags", "int"), ("workgroup_count", "list"), ("workgroup_size", "list"),
    ("start_tick", "int"), ("end_tick", "int"), ("duration_ticks", "int"), ("valid", "bool"),
    ("clock_fit_available", "bool"), ("device_tick_domain", "=device_tick"),
    ("duration_time_domain", "=device_tick_duration_ns"), ("duration_ns", "int"),
])

HOST_DISPATCH_EVENT_ROW = RowLayout("host_dispatch_event", _HOST_TIMING_FIELDS + [
    ("physical_device_ordinal", "int"), ("queue_ordinal", "int"), ("stream_id", "int"),
    ("event_id", "int"), ("submission_id", "int"), ("command_buffer_id", "int"),
    ("command_index", "int"), ("executable_id", "int"), ("function_ordinal", "int"),
    ("key", "str"), ("flags", "int"), ("status_code", "int"), ("workgroup_count", "list"),
    ("workgroup_size", "list"), ("start_host_time_ns", "int"), ("end_host_time_ns", "int"),
    ("duration_ns", "int"), ("valid", "bool"), ("tile_count", "int"),
    ("tile_duration_sum_ns", "int"),
])


def iree_sqrt(value: float) -> float:
    """IREE's square root: 32 Newton steps from max(value, 1); 0 for value <= 0 (and NaN).

    IREE's tools avoid libm; for very large values 32 steps do not converge, and the printed
    standard deviation is whatever the iteration reached, so this repeats it step for step.
    """
    if not value > 0.0:
        return 0.0
    estimate = value if value >= 1.0 else 1.0
    for _ in range(32):
        estimate = 0.5 * (estimate + value / estimate)
    return estimate


def values(column) -> list:
    """A table column (a list, or a numpy array) as a list of Python numbers."""
    return column if isinstance(column, list) else column.tolist()


class Counts:
    """Events of one timing domain: in the file, matched by --id/--filter, valid, invalid."""

    def __init__(self, total: int = 0, matched: int = 0, valid: int = 0, invalid: int = 0):
        self.total, self.matched, self.valid, self.invalid = total, matched, valid, invalid


class Table:
    """Per-group columns (numpy arrays or lists), one entry per group in first-seen order."""

    def __init__(self, columns: dict | None = None):
        self.columns = {} if columns is None else columns

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def __getitem__(self, name):
        return self.columns[name]


class Aggregates:
    """The counts and group tables of one projection report, and the timing it prints."""

    def __init__(self, model, mode: str, options):
        self.model = model
        self.mode = mode
        self.options = options
        self.fit = model.clock_fit     # a device's clock fit (or None), computed once
        self.device_counts = Counts()
        self.host_counts = Counts()
        self.dispatch_groups = Table()
        self.command_groups = Table()
        self.submission_groups = Table()
        self.host_groups = Table()
        self.host_command_groups = Table()

    def dispatch_timing(self, g: int, average: float) -> dict:
        """Fitted ns of device dispatch group `g` (IREE's projection dispatch timing)."""
        t = self.dispatch_groups
        pdo = int(t["pdo"][g])
        fit = self.fit(pdo)
        npt = fit.ns_per_tick if fit is not None else 0.0
        times = None
        if fit is not None and int(t["valid"][g]):
            times = [fit.ticks_to_ns(int(t[name][g])) for name in ("min", "max", "total")]
            if None in times:
                times = None
        return {"has_clock_fit": fit is not None, "has_time_ns": times is not None,
                "ns_per_tick": npt, "min_ns": times[0] if times else 0,
                "max_ns": times[1] if times else 0, "total_ns": times[2] if times else 0,
                "avg_ns": average * npt if times else 0.0}

    def submission_timing(self, table: Table, g: int) -> dict:
        """Span and fitted total of one execution/submission group (IREE's submission timing)."""
        pdo = int(table["pdo"][g])
        earliest, latest = int(table["earliest"][g]), int(table["latest"][g])
        span = 0.0 if (earliest == U64_MAX or latest == 0 or latest < earliest) \
            else float(latest - earliest)
        fit = self.fit(pdo)
        total_ns = None
        if fit is not None and int(table["valid"][g]):
            total_ns = fit.ticks_to_ns(int(table["total"][g]))
        return {"span_ticks": span, "has_clock_fit": fit is not None,
                "has_total_ns": total_ns is not None,
                "span_ns": span * fit.ns_per_tick if fit is not None else 0.0,
                "total_dispatch_ns": total_ns if total_ns is not None else 0}

    def dispatch_summary_row(self) -> dict:
        d, h = self.device_counts, self.host_counts
        return {"type": "dispatch_summary",
                "mode": "events" if self.options.dispatch_events else "aggregate",
                "filter": self.options.filter, "total_dispatches": d.total,
                "matched_dispatches": d.matched, "valid_dispatches": d.valid,
                "invalid_dispatches": d.invalid, "aggregate_groups": len(self.dispatch_groups),
                "total_host_dispatches": h.total, "matched_host_dispatches": h.matched,
                "valid_host_dispatches": h.valid, "invalid_host_dispatches": h.invalid,
                "host_aggregate_groups": len(self.host_groups)}

"""`statistics` in one native pass over the file, without numpy: what the command line runs first.

`report_file(path)` maps the file and runs `_statistics.c`'s `statistics_run`: IREE's statistics
sink reduced in one forward walk (a hash table of aggregate rows in first-touch order, the first
and last clock samples per device, the first name of each function), holding a window of the file
at a time. The rows are made by `statistics_rows.py`, as for the exact walk.

It returns None, and the caller runs the exact walk (`statistics.report` over a `Bundle`), when
the native module is not built or is switched off (`AMDGPU_CLI_PURE_PYTHON=1`), when the file is
empty or its header is not valid, and when the pass meets anything that walk reports as an error:
it then gives IREE's message for the first bad record in file order.

Sources: IREE `hal/utils/statistics_sink.c`, `tooling/profile/statistics.c`.
"""

from __future__ import annotations

from amdgpu_cli.profile.mapped import page_window
from amdgpu_cli.profile.names import FAMILIES
from amdgpu_cli.profile.native import content_name_table, native_module, on_mapped_bundle
from amdgpu_cli.profile.reports.statistics_rows import DeviceClock, statistics_row, summary_row
from amdgpu_cli.profile.reports.summary_native import clock_sample
from amdgpu_cli.profile.reports.summary_rows import Row

_GROUP_FIELDS = ("row_type", "time_domain", "flags", "physical_device_ordinal", "queue_ordinal",
                 "event_type", "executable_id", "command_buffer_id", "function_ordinal",
                 "command_index", "sample_count", "invalid_sample_count", "operation_count",
                 "payload_bytes", "tile_count", "tile_duration_sum_ns", "first_start_time",
                 "last_end_time", "total_duration", "minimum_duration", "maximum_duration")


def report_file(path: str, options=None) -> list[Row] | None:
    """The `statistics` rows of the bundle at `path`, or None when the exact walk must run."""
    return on_mapped_bundle(path, _reduce)


def _reduce(mm, first: int, length: int) -> list[Row] | None:
    ffi, lib = native_module()
    state = ffi.new("statistics_t*")
    names, name_lengths = content_name_table(ffi)
    data = ffi.from_buffer("uint8_t[]", mm)
    try:
        if lib.statistics_run(data, length, first, names, name_lengths, len(FAMILIES),
                              page_window(len(mm)), state) != 0:
            return None
        s = state
        clocks = {}
        for i in range(s.clock_count):
            c = s.clocks[i]
            first_sample, last_sample = (clock_sample(mm, at)
                                         for at in (c.first_offset, c.last_offset))
            clocks[c.physical_device_ordinal] = DeviceClock(c.count, c.unaligned, first_sample,
                                                            last_sample)
        functions = {}
        for i in range(s.name_count):
            n = s.names[i]
            name = mm[n.name_offset:n.name_offset + n.name_length]
            functions[(n.executable_id, n.function_ordinal)] = name.decode("utf-8", "replace")
        rows = [summary_row(s.group_count, s.dropped_records)]
        for i in range(s.group_count):
            g = s.groups[i]
            rows.append(statistics_row({k: getattr(g, k) for k in _GROUP_FIELDS}, clocks,
                                       functions))
        return rows
    finally:
        lib.statistics_free(state)
        ffi.release(data)

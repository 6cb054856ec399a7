"""The profiling flags of run and benchmark: from flags to a capture over the HAL's profiling API.

IREE's tooling (`runtime/src/iree/tooling/device_util.c`) in our own words:

* `ProfilingFlags` (tooling/capture_flags.py) holds the flags as given;
  `Capture.from_flags(flags)` checks them before any work (mode without output, output without
  mode, statistics with an output, unknown families, filter values) and checks the output path;
  `None` when no profiling was asked for.
* `capture.check(devices)` asks every device whether it can record the families (IREE asks at
  begin, after it has created the file; we ask first, so a refused family leaves the path as it
  was).
* `capture.begin(devices)` publishes the output file (the old file is replaced at this moment;
  records stream into the new one, each in one write, so a killed run leaves whole records) and
  opens one profile session per device on one file sink; with `--device_profiling_flush_interval_ms`
  a background thread flushes every interval.
* `capture.flush()` (benchmarks: after every iteration, outside the timing), `capture.end()`
  (sessions end, the header gets its length, the file is synced) or `capture.abort()`.
* `--print_device_statistics` records into memory instead (queue and host-execution events when
  no mode is given) and `end()` prints IREE's statistics block to stderr.
"""

from __future__ import annotations

import contextlib
import sys
from typing import IO, Sequence

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.enums import HalError
from amdgpu_cli.hal.profiling import (CaptureFilter, Family, PeriodicFlush, ProfilingOptions,
                                      parse_families)
from amdgpu_cli.tooling.capture_flags import ProfilingFlags


def _invalid(message: str) -> HalError:
    return HalError(message, status="INVALID_ARGUMENT")


class Capture:
    """One profiling capture over a run's or a benchmark's devices (see the module docstring)."""

    def __init__(self, options: ProfilingOptions, output: str = "", *,
                 statistics: bool = False):
        self.options = options
        self.statistics = statistics
        self._output = None
        if output:
            from amdgpu_cli.outputs import OutputFile

            self._output = OutputFile(output, read=True)  # a bad path fails here, before work
        self._devices: list = []
        self._writer = None
        self._file: IO[bytes] | None = None
        self._periodic: PeriodicFlush | None = None

    @classmethod
    def from_flags(cls, flags: ProfilingFlags) -> Capture | None:
        if not flags.requested:
            return None
        mode = flags.mode.strip()
        if flags.print_device_statistics and flags.output:
            raise _invalid("--print_device_statistics cannot be combined with "
                           "--device_profiling_output")
        if not flags.print_device_statistics:
            if mode and not flags.output:
                raise _invalid("--device_profiling_mode requires --device_profiling_output")
            if flags.output and not mode:
                raise _invalid("--device_profiling_output requires --device_profiling_mode")
        families = parse_families(mode)
        if flags.print_device_statistics and not families:
            families = Family.QUEUE_EVENTS | Family.HOST_EXECUTION
        if flags.flush_interval_ms < 0:
            raise _invalid("--device_profiling_flush_interval_ms must be non-negative")
        capture_filter = CaptureFilter.from_flags(
            flags.filter_function, flags.filter_command_buffer, flags.filter_command_index,
            flags.filter_physical_device, flags.filter_queue)
        options = ProfilingOptions(families, capture_filter, tuple(flags.counters),
                                   int(flags.flush_interval_ms))
        return cls(options, flags.output, statistics=flags.print_device_statistics)

    def check(self, devices: Sequence) -> None:
        for device in devices:
            device.profiling_check(self.options)

    def begin(self, devices: Sequence) -> None:
        from amdgpu_cli.profile.writer import BundleWriter, FileSink

        self.check(devices)  # again here: a refused family must never reach the published file
        if self._output is not None:
            self._file = self._output.publish()
            sink = FileSink(self._file, flush_records=True)
            self._writer = BundleWriter(sink)
        else:
            self._writer = BundleWriter(None)
        try:
            for device in devices:
                device.profiling_begin(self.options, self._writer.sink)
                self._devices.append(device)
        except BaseException:
            self.abort()
            raise
        if self.options.flush_interval_ms:
            self._periodic = PeriodicFlush(self.flush, self.options.flush_interval_ms)

    @property
    def active(self) -> bool:
        return bool(self._devices)

    def flush(self) -> None:
        for device in list(self._devices):
            device.profiling_flush()

    def end(self, stderr: IO[str] | None = None) -> None:
        """Ends every session; raises the first failure (a sink write error) after all ended."""
        error = None
        if self._periodic is not None:
            self._periodic.stop()
            error = self._periodic.error
            self._periodic = None
        devices, self._devices = self._devices, []
        for device in devices:
            try:
                device.profiling_end()
            except AmdgpuCliError as e:
                error = error or e
        if self._output is not None and self._file is not None:
            self._file = None
            self._output.commit()
        if error is not None:
            if isinstance(error, AmdgpuCliError):
                raise error
            raise HalError(f"profiling flush failed: {error}", status="DATA_LOSS")
        if self.statistics and self._writer is not None:
            print_statistics(self._writer.getvalue(), stderr or sys.stderr)

    def abort(self) -> None:
        """Ends the sessions without raising; what was written stays (a partial capture)."""
        try:
            self.end()
        except AmdgpuCliError:
            pass


@contextlib.contextmanager
def capturing(capture: Capture | None, devices: Sequence):
    """`capture` (None: no capture) begun on `devices` around the block, ended after it, or
    aborted (what was written stays) when the block raises; yields its flush (None without a
    capture) for the caller to call between iterations."""
    if capture is None:
        yield None
        return
    capture.begin(devices)
    try:
        yield capture.flush
    except BaseException:
        capture.abort()
        raise
    capture.end()


def print_statistics(bundle_bytes: bytes, out: IO[str]) -> None:
    """IREE's `--print_device_statistics` block for the captured bundle."""
    from amdgpu_cli.cli.profile_text.statistics import scaled
    from amdgpu_cli.profile.reader import Bundle
    from amdgpu_cli.profile.reports import statistics

    rows = statistics.report(Bundle.from_bytes(bundle_bytes))
    summary, rows = rows[0], rows[1:]
    totals = {"dispatch_function": 0, "host_execution_function": 0,
              "host_execution_queue_operation": 0, "queue_device_operation": 0,
              "queue_host_operation": 0}
    for row in rows:
        if row["row_type"] in totals and row["total_duration_ns"] is not None:
            totals[row["row_type"]] += row["total_duration_ns"]
    lines = ["", "IREE HAL device statistics:", f"  aggregate_rows={summary['row_count']}"]
    if summary["dropped_record_count"]:
        lines.append(f"  dropped_records={summary['dropped_record_count']}")
    lines += [f"  dispatch_function_total={scaled(totals['dispatch_function'])}",
              f"  host_execution_function_total={scaled(totals['host_execution_function'])}",
              f"  host_execution_queue_total={scaled(totals['host_execution_queue_operation'])}",
              f"  device_queue_total={scaled(totals['queue_device_operation'])}",
              f"  host_queue_ready_total={scaled(totals['queue_host_operation'])}"]
    prefixes = {"queue_host_operation": "host_queue", "host_execution_queue_operation":
                "host_execute_queue", "queue_device_operation": "device_queue"}
    for row in rows:
        kind = row["row_type"]
        where = f"p={row['physical_device_ordinal']} q={row['queue_ordinal']}"
        if kind == "memory_lifecycle":
            lines.append(f"  memory {where} {row['event_name']} count={row['sample_count']} "
                         f"bytes={row['payload_bytes']}")
            continue
        if kind in prefixes:
            head = f"{prefixes[kind]} {where} {row['event_name']}"
        elif kind == "host_execution_function":
            head = f"host_execute {row['function_name'] or _fallback_key(row)}"
        elif kind == "dispatch_function":
            head = f"dispatch {row['function_name'] or _fallback_key(row)}"
        else:
            continue  # per command buffer / operation rows are counted, not printed (as IREE)
        count = row["sample_count"]
        total = row["total_duration_ns"] or 0
        text = (f"  {head}  count={count} total={scaled(total)} "
                f"avg={scaled(total // count if count else 0)}")
        if row["has_operation_count"] and kind in prefixes:
            text += f" operations={row['operation_count']}"
        if row["has_payload_bytes"] and row["payload_bytes"]:
            text += f" payload={row['payload_bytes']}B"
        if row["has_tile_totals"] and row["tile_count"]:
            text += f" tiles={row['tile_count']} tile_sum={scaled(row['tile_duration_sum_ns'])}"
        lines.append(text)
    out.write("\n".join(lines) + "\n")
    out.flush()


def _fallback_key(row) -> str:
    return f"executable{row['executable_id']}#{row['function_ordinal']}"

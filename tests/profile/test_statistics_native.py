"""`statistics`' one-pass native reducer (`_statistics.c`, `reports/statistics_native.py`).

The command line runs it first and falls back to the exact walk when it declines, so every
`statistics` parity test in test_statistics.py already checks it against iree-profile. Here: its
layout facts against schema.py's dtypes, that it really runs (does not decline) on valid bundles
and imports no numpy, and, on hundreds of mutated bundles (the ones test_summary_native.py makes,
plus sums past 2**64), that the command's output or failure is iree-profile's.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from amdgpu_cli.profile import native
from amdgpu_cli.profile.reports import statistics_native

from .native_support import assert_layout, assert_like_iree, mutations
from .test_summary import (SYNTHETIC, amdgpu_bundle, bundle, chunk, dispatch, host_exec,
                           memory_event, queue_event, session)

pytestmark = pytest.mark.skipif(native.scan is None, reason="native module not built in this install")

# The fields _statistics.c reads, by family suffix (the order of its STAT_FIELDS table).
_FIELDS = [
    ("clock-correlations", "flags"), ("clock-correlations", "physical_device_ordinal"),
    ("dispatch-events", "executable_id"), ("dispatch-events", "command_buffer_id"),
    ("dispatch-events", "command_index"), ("dispatch-events", "function_ordinal"),
    ("dispatch-events", "start_tick"), ("dispatch-events", "end_tick"),
    ("queue-device-events", "type"), ("queue-device-events", "command_buffer_id"),
    ("queue-device-events", "payload_length"), ("queue-device-events", "physical_device_ordinal"),
    ("queue-device-events", "queue_ordinal"), ("queue-device-events", "operation_count"),
    ("queue-device-events", "start_tick"), ("queue-device-events", "end_tick"),
    ("queue-events", "type"), ("queue-events", "host_time_ns"),
    ("queue-events", "command_buffer_id"), ("queue-events", "physical_device_ordinal"),
    ("queue-events", "queue_ordinal"), ("queue-events", "operation_count"),
    ("queue-events", "payload_length"), ("queue-events", "ready_host_time_ns"),
    ("host-execution-events", "type"), ("host-execution-events", "command_buffer_id"),
    ("host-execution-events", "executable_id"), ("host-execution-events", "physical_device_ordinal"),
    ("host-execution-events", "queue_ordinal"), ("host-execution-events", "command_index"),
    ("host-execution-events", "function_ordinal"), ("host-execution-events", "start_host_time_ns"),
    ("host-execution-events", "end_host_time_ns"), ("host-execution-events", "payload_length"),
    ("host-execution-events", "tile_count"), ("host-execution-events", "tile_duration_sum_ns"),
    ("host-execution-events", "operation_count"),
    ("memory-events", "type"), ("memory-events", "physical_device_ordinal"),
    ("memory-events", "queue_ordinal"), ("memory-events", "length"),
    ("executable-functions", "executable_id"), ("executable-functions", "function_ordinal"),
    ("executable-functions", "name_length"),
]


def test_layout_matches_schema():
    assert_layout(native.native_module()[1].statistics_layout, _FIELDS)


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_native_pass_runs_on_valid_bundles(name, tmp_path):
    path = tmp_path / "b.ireeprof"
    path.write_bytes(SYNTHETIC[name]())
    rows = statistics_native.report_file(str(path))
    assert rows is not None and rows[0]["type"] == "statistics_summary"


def test_real_bundles_take_the_native_pass(iree_bundles):
    for key, path in iree_bundles.items():
        assert statistics_native.report_file(str(path)) is not None, key


def test_statistics_imports_no_numpy(tmp_path):
    path = tmp_path / "b.ireeprof"
    path.write_bytes(amdgpu_bundle())
    code = ("import sys; from amdgpu_cli.cli.main import profile_main\n"
            "try:\n    profile_main(['statistics', '--format=jsonl', sys.argv[1]])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'rich') if m in sys.modules), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                          timeout=60)
    assert '"statistics_summary"' in proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr


def _overflowing() -> dict[str, bytes]:
    """Bundles whose sums pass 2**64 (the native pass must leave them to the exact walk)."""
    half = (1 << 63) - 1
    return {
        "duration": bundle(session(chunk("host-execution-events",
                                         *(host_exec(i, 0, half) for i in range(3))))),
        "ticks": bundle(session(chunk("dispatch-events",
                                      *(dispatch(i, 1, (1 << 64) - 1) for i in range(2)),
                                      pdo=0, queue=0, stream_id=0))),
        "payload": bundle(session(chunk("memory-events",
                                        *(memory_event(i, 9, 1 << 63) for i in range(2))))),
        "queue_payload": bundle(session(chunk("queue-events",
                                              *(queue_event(i, 2, 1, 2, payload=1 << 63)
                                                for i in range(2))))),
        "dropped": bundle(session(chunk("memory-events", b"", chunk_flags=1, dropped=1 << 63),
                                  chunk("memory-events", b"", chunk_flags=1, dropped=1 << 63))),
    }


def test_mutated_bundles_match_iree_profile(tmp_path, iree_profile):
    cases = list(_overflowing().items()) + mutations(seed=20261127, count=240)
    native_ran = 0
    for name, data in cases:
        path = tmp_path / "m.ireeprof"
        path.write_bytes(data)
        assert_like_iree(["statistics", "--format=jsonl", path], iree_profile, name)
        native_ran += statistics_native.report_file(str(path)) is not None
    assert native_ran > len(cases) // 3

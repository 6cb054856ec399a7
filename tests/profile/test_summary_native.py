"""`summary`'s one-pass native reducer (`_summary.c`, `reports/summary_native.py`).

The command line runs it first and falls back to the exact walk when it declines, so every
`summary` parity test in test_summary.py already checks it against iree-profile. Here: its layout
facts against schema.py's dtypes, that it really runs (does not decline) on valid bundles and
imports no numpy, and, on hundreds of mutated bundles (bytes flipped, fields set to edge values,
sums past 2**64, files cut short), that the command's output or failure is iree-profile's.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from amdgpu_cli.profile import native, schema
from amdgpu_cli.profile.reports import summary_native

from .native_support import assert_layout, assert_like_iree, mutations
from .test_summary import (SYNTHETIC, amdgpu_bundle, bundle, chunk, dispatch, host_exec, session,
                           typed)

pytestmark = pytest.mark.skipif(native.scan is None, reason="native module not built in this install")

# The fields _summary.c reads, by family suffix (the order of its FIELDS table).
_FIELDS = [
    ("devices", "physical_device_ordinal"), ("devices", "queue_count"),
    ("queues", "physical_device_ordinal"), ("executable-code-objects", "data_length"),
    ("clock-correlations", "flags"), ("clock-correlations", "physical_device_ordinal"),
    ("clock-correlations", "host_time_begin_ns"), ("clock-correlations", "host_time_end_ns"),
    ("dispatch-events", "start_tick"), ("dispatch-events", "end_tick"),
    ("host-execution-events", "start_host_time_ns"), ("host-execution-events", "end_host_time_ns"),
    ("command-region-events", "start_host_time_ns"), ("command-region-events", "end_host_time_ns"),
    ("counter-sets", "name_length"), ("counters", "block_name_length"), ("counters", "name_length"),
    ("counters", "description_length"), ("counter-samples", "sample_value_count"),
    ("device-metric-sources", "name_length"), ("device-metric-descriptors", "name_length"),
    ("device-metric-descriptors", "description_length"),
    ("device-metric-samples", "host_time_begin_ns"), ("device-metric-samples", "host_time_end_ns"),
    ("device-metric-samples", "physical_device_ordinal"), ("device-metric-samples", "value_count"),
    ("executable-traces", "data_length"),
]


def test_layout_matches_schema():
    ffi, lib = native.native_module()
    sizes = ffi.new("uint32_t[]", 64)
    assert_layout(lambda families, offsets, n: lib.summary_layout(families, offsets, sizes, n),
                  _FIELDS)
    for i, ct in enumerate(schema.CONTENT_TYPES):
        assert sizes[i] == (ct.dtype.itemsize if ct.dtype is not None else 0), ct.suffix


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_native_pass_runs_on_valid_bundles(name, tmp_path):
    path = tmp_path / "b.ireeprof"
    path.write_bytes(SYNTHETIC[name]())
    rows = summary_native.report_file(str(path))
    if name == "header_only" or name == "unfinished":
        assert rows is not None and rows[0]["file_records"] == (0 if name == "header_only" else 3)
    else:
        assert rows is not None and rows[0]["type"] == "summary"


def test_real_bundles_take_the_native_pass(iree_bundles):
    for key, path in iree_bundles.items():
        assert summary_native.report_file(str(path)) is not None, key


def test_summary_imports_no_numpy(tmp_path):
    path = tmp_path / "b.ireeprof"
    path.write_bytes(amdgpu_bundle())
    code = ("import sys; from amdgpu_cli.cli.main import profile_main\n"
            "try:\n    profile_main(['summary', sys.argv[1]])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'rich') if m in sys.modules), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                          timeout=60)
    assert "IREE HAL profile summary" in proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr


def _overflowing() -> dict[str, bytes]:
    """Bundles whose sums pass 2**64, or whose lengths need all 64 bits (the native pass must
    leave them to the exact walk)."""
    half = (1 << 63) - 1
    return {
        "code_object_length_top_bit": bundle(session(chunk("executable-code-objects", typed(
            schema.CODE_OBJECT, b"", executable_id=1, code_object_id=1,
            data_length=(1 << 63) + 5)))),
        "host_span_sum": bundle(session(chunk("host-execution-events",
                                              *(host_exec(i, 0, half) for i in range(3))))),
        "dispatch_tick_sum": bundle(session(chunk("dispatch-events",
                                                  *(dispatch(i, 1, (1 << 64) - 1) for i in range(2)),
                                                  pdo=0, queue=0, stream_id=0))),
    }


def test_mutated_bundles_match_iree_profile(tmp_path, iree_profile):
    cases = list(_overflowing().items()) + mutations(seed=20261126, count=240)
    native_ran = 0
    for name, data in cases:
        path = tmp_path / "m.ireeprof"
        path.write_bytes(data)
        assert_like_iree(["summary", "--format=jsonl", path], iree_profile, name)
        native_ran += summary_native.report_file(str(path)) is not None
    # Most mutations leave a valid bundle that the native pass itself summarizes.
    assert native_ran > len(cases) // 3

"""The projection reports' one-pass native path (`_projection.c`, `reports/projection_native.py`).

The command line runs it first for `dispatch`, `executable` and `command` (aggregate mode) and
falls back to the exact path when it declines, so every parity test of those reports checks it
against iree-profile. Here: its layout facts against schema.py's dtypes, that it really runs on
the real bundles (declining only where iree-profile itself fails), and, with `--filter` / `--id`
variants and on hundreds of mutated bundles, that the command's output or failure is
iree-profile's.
"""

from __future__ import annotations

import numpy as np
import pytest

from amdgpu_cli.profile import native, schema
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reports import command as command_report
from amdgpu_cli.profile.reports import dispatch as dispatch_report
from amdgpu_cli.profile.reports import executable as executable_report

from .native_support import assert_layout, assert_like_iree, mutations
from .test_summary import (bundle, chunk, clock, device, dispatch, function, host_exec, queue,
                           session, typed)

pytestmark = pytest.mark.skipif(native.scan is None, reason="native module not built in this install")

REPORTS = {"dispatch": dispatch_report, "executable": executable_report,
           "command": command_report}

# The fields _projection.c reads (the order of its PROJ_FIELDS table).
_FIELDS = [
    ("dispatch-events", "event_id"), ("dispatch-events", "command_index"),
    ("dispatch-events", "submission_id"), ("dispatch-events", "command_buffer_id"),
    ("dispatch-events", "executable_id"), ("dispatch-events", "function_ordinal"),
    ("dispatch-events", "workgroup_count"), ("dispatch-events", "workgroup_size"),
    ("dispatch-events", "start_tick"), ("dispatch-events", "end_tick"),
    ("host-execution-events", "type"), ("host-execution-events", "submission_id"),
    ("host-execution-events", "event_id"), ("host-execution-events", "command_index"),
    ("host-execution-events", "command_buffer_id"), ("host-execution-events", "executable_id"),
    ("host-execution-events", "stream_id"), ("host-execution-events", "physical_device_ordinal"),
    ("host-execution-events", "queue_ordinal"), ("host-execution-events", "function_ordinal"),
    ("host-execution-events", "workgroup_count"), ("host-execution-events", "workgroup_size"),
    ("host-execution-events", "start_host_time_ns"), ("host-execution-events", "end_host_time_ns"),
    ("host-execution-events", "tile_count"), ("host-execution-events", "tile_duration_sum_ns"),
    ("dispatch-events", "flags"), ("host-execution-events", "flags"),
    ("host-execution-events", "status_code"),
]


def device_bundle() -> bytes:
    """Two devices and their metadata; device dispatch events (valid, invalid, direct and in a
    command buffer, on several queues) and host dispatch spans."""
    return bundle(session(
        chunk("devices", device(0, 2), device(1, 1)),
        chunk("queues", queue(0, 0), queue(0, 1), queue(1, 0)),
        chunk("executables", typed(schema.EXECUTABLE, executable_id=1, function_count=2)),
        chunk("executable-functions", function(1, 0, b"main_dispatch_0"), function(1, 1, b"")),
        chunk("command-buffers", typed(schema.COMMAND_BUFFER, command_buffer_id=7,
                                       physical_device_ordinal=0)),
        chunk("clock-correlations", clock(0, 1, 1_000_000, 5_000_000_000, 9_000, 9_400),
              clock(1, 2, 3_000_000, 5_000_000_100, 9_100, 9_700)),
        chunk("dispatch-events", dispatch(1, 1_100_000, 1_100_500), dispatch(2, 1_150_000, 1_150_123),
              dispatch(3, 0, 1_150_300), dispatch(4, 1_200_000, 1_199_000, cb=7, cmd=0),
              dispatch(5, 1_200_100, 1_200_400, cb=7, cmd=0, func=1),
              pdo=0, queue=0, stream_id=0),
        chunk("dispatch-events", dispatch(6, 1_300_000, 1_300_777, exe=1, func=1, cb=7, cmd=3,
                                          submission=2),
              pdo=0, queue=1, stream_id=1),
        chunk("dispatch-events", dispatch(7, 3_100_000, 3_100_999, func=0),
              dispatch(8, 3_200_000, 3_200_001, func=1, submission=3),
              pdo=1, queue=0, stream_id=1 << 32),
        chunk("clock-correlations", clock(0, 3, 1_500_000, 5_005_000_003, 9_500, 9_600),
              clock(1, 4, 3_500_000, 5_000_166_767, 9_550, 9_560)),
        chunk("host-execution-events", host_exec(1, 100, 350), host_exec(2, 400, 300),
              host_exec(3, 500, 900, cb=7, cmd=0), host_exec(4, 1000, 1100, func=1)),
    ))


def test_layout_matches_schema():
    assert_layout(native.native_module()[1].projection_layout, _FIELDS)


def test_real_bundles_take_the_native_pass(iree_bundles, iree_profile):
    for key, path in sorted(iree_bundles.items()):
        for name, module in REPORTS.items():
            if module.report_file(str(path), ReportOptions()) is None:
                # Declining is right only where the report fails (missing metadata, overflow).
                assert iree_profile([name, "--format=jsonl", path]).returncode != 0, (name, key)


VARIANTS = [[], ["--filter=main*"], ["--filter=*dispatch_0*"], ["--filter=nothing"], ["--id=1"],
            ["--id=7"], ["--id=0"], ["--filter=?ain*", "--id=1"]]


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_options_match_iree_profile(name, iree_bundles, iree_profile, tmp_path):
    synthetic = tmp_path / "device.ireeprof"
    synthetic.write_bytes(device_bundle())
    paths = [synthetic] + [p for k, p in sorted(iree_bundles.items()) if "local-task" in k][:3]
    for path in paths:
        for extra in VARIANTS:
            assert_like_iree([name, "--format=jsonl", *extra, path], iree_profile)


def test_mutated_bundles_match_iree_profile(tmp_path, iree_bundles, iree_profile):
    native_ran = 0
    cases = (mutations(seed=20261128, count=100, base=device_bundle())
             + mutations(seed=20261129, count=80,
                          base=iree_bundles["attention-local-task-all"].read_bytes()))
    for label, data in cases:
        path = tmp_path / "m.ireeprof"
        path.write_bytes(data)
        for name, module in REPORTS.items():
            code = assert_like_iree([name, "--format=jsonl", path], iree_profile, label)
            if code == 0:  # (a bad file header fails inside report_file, as in the exact path)
                native_ran += module.report_file(str(path), ReportOptions()) is not None
    assert native_ran > len(cases) // 2


def _overflow_bundle(host: bool) -> bytes:
    """Two functions' dispatches in one command buffer execution: each function's total fits its
    limit, the execution's (and, on the device, the submission's) does not."""
    half = 1 << 63 if not host else 1 << 62
    if host:
        events = chunk("host-execution-events",
                       host_exec(1, 0, half, cb=7, cmd=0, func=0, tile_ns=0),
                       host_exec(1, 0, half, cb=7, cmd=1, func=1, tile_ns=0))
    else:
        events = chunk("dispatch-events", dispatch(1, 1, 1 + half, cb=7, cmd=0, func=0),
                       dispatch(2, 1, 1 + half, cb=7, cmd=1, func=1), pdo=0, queue=0, stream_id=0)
    return bundle(session(
        chunk("devices", device(0, 1)), chunk("queues", queue(0, 0)),
        chunk("executables", typed(schema.EXECUTABLE, executable_id=1, function_count=2)),
        chunk("executable-functions", function(1, 0, b"a"), function(1, 1, b"b")),
        chunk("command-buffers", typed(schema.COMMAND_BUFFER, command_buffer_id=7,
                                       physical_device_ordinal=0)),
        events))


@pytest.mark.parametrize("host", [False, True], ids=["device", "host"])
def test_tables_left_out_still_fail_like_iree(host, tmp_path, iree_profile):
    """A report reads some of the five tables and the pass fills only those; a total that
    overflows in a table left out must still fail as iree-profile fails."""
    path = tmp_path / "overflow.ireeprof"
    path.write_bytes(_overflow_bundle(host))
    for name in (*REPORTS, "explain", "queue"):  # (queue: the exact path leaves tables out too)
        assert_like_iree([name, "--format=jsonl", path], iree_profile, name)


@pytest.mark.parametrize("mode", ["dispatch", "command"])
def test_tables_own_their_memory(mode, tmp_path):
    """The pass's memory is freed when `build` returns and the rows are made after: every column
    of the tables must be memory of its own (one-group tables included: a one-element strided
    view counts as contiguous, so only an explicit copy owns its data)."""
    from amdgpu_cli.profile.reports import projection_native

    path = tmp_path / "device.ireeprof"
    path.write_bytes(device_bundle())
    p = projection_native.build(str(path), mode, ReportOptions())
    assert p is not None
    for name in ("dispatch_groups", "command_groups", "submission_groups", "host_groups",
                 "host_command_groups"):
        for key, column in getattr(p, name).columns.items():
            if isinstance(column, np.ndarray):
                owner = column
                while isinstance(owner, np.ndarray) and owner.base is not None:
                    owner = owner.base
                assert isinstance(owner, np.ndarray), (name, key)


def _rows_text(rows) -> str:
    import io

    from amdgpu_cli.profile.jsonl import write_rows

    out = io.StringIO()
    write_rows(out, rows)
    return out.getvalue()


def test_list_and_numpy_tables_give_the_same_rows(iree_bundles, tmp_path, monkeypatch):
    # Small tables come back as lists, large ones (past LIST_GROUPS) as numpy columns; with the
    # limit at 0 every table takes the numpy side, which must print the same bytes.
    from amdgpu_cli.profile.reports import explain_native, projection_native

    synthetic = tmp_path / "device.ireeprof"
    synthetic.write_bytes(device_bundle())
    reports = {**REPORTS, "explain": explain_native}
    compared = 0
    for path in [synthetic, *(p for _, p in sorted(iree_bundles.items()))]:
        for name, module in reports.items():
            for options in (ReportOptions(), ReportOptions(filter="*dispatch*")):
                monkeypatch.setattr(projection_native, "LIST_GROUPS", 1 << 20)
                listed = module.report_file(str(path), options)
                monkeypatch.setattr(projection_native, "LIST_GROUPS", 0)
                numpy_rows = module.report_file(str(path), options)
                assert (listed is None) == (numpy_rows is None), (name, path)
                if listed is not None:
                    assert _rows_text(listed) == _rows_text(numpy_rows), (name, path, options)
                    compared += 1
    assert compared > 50


def test_metadata_view_builds_the_bundles_model(iree_bundles, tmp_path):
    # The one-pass reports build the model from the mapped file's metadata view; the exact path
    # from the opened Bundle. Same records, same order, whichever built it.
    from amdgpu_cli.profile.mapped import valid_header
    from amdgpu_cli.profile.metadata_view import MetadataView, skip_mask
    from amdgpu_cli.profile.model import Model
    from amdgpu_cli.profile.reader import Bundle
    from amdgpu_cli.profile.reports.projection_native import EVENT_FAMILIES

    def facts(model: Model):
        return (model.queues, [(e.record, [vars_of(f) for f in e.functions])
                               for e in model.executables.values()],
                [(c.record, c.operations) for c in model.command_buffers.values()],
                model.command_operations,
                {p: (d.sample_count, d.unaligned_count, d.first, d.last)
                 for p, d in model.devices.items()},
                {k: (s.record, s.name) for k, s in model.metric_sources.items()},
                {k: (d.record, d.name, d.description) for k, d in model.metric_descriptors.items()})

    def vars_of(function):
        return {name: getattr(function, name) for name in function.__slots__}

    synthetic = tmp_path / "device.ireeprof"
    synthetic.write_bytes(device_bundle())
    for path in [synthetic, *(p for _, p in sorted(iree_bundles.items()))]:
        data = path.read_bytes()
        first, length = valid_header(data)
        view = MetadataView.walk(data, first, length, skip=skip_mask(EVENT_FAMILIES))
        assert facts(Model.build(view)) == facts(Model.build(Bundle.open(path))), path


def test_aggregate_reports_import_no_numpy(iree_bundles, iree_profile):
    # A report whose one pass takes it (summary, statistics, explain, dispatch, executable,
    # command: aggregates of a small bundle) runs without importing numpy, and prints what
    # iree-profile prints.
    import subprocess
    import sys

    path = iree_bundles["attention-local-task-all"]
    code = ("import sys; from amdgpu_cli.cli.main import profile_main\n"
            "try:\n    profile_main(sys.argv[1:])\n"
            "finally:\n    sys.stderr.write('numpy' if 'numpy' in sys.modules else 'clean')\n")
    for name in ("summary", "statistics", "explain", "dispatch", "executable", "command"):
        ours = subprocess.run([sys.executable, "-c", code, name, "--format=jsonl", str(path)],
                              capture_output=True, text=True)
        assert ours.returncode == 0 and ours.stderr == "clean", (name, ours.stderr)
        assert ours.stdout == iree_profile([name, "--format=jsonl", path]).stdout, name


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_dispatch_events_match_iree_profile(name, iree_bundles, iree_profile, tmp_path):
    # --dispatch_events from the pass's own array of events (rows read in place), with the
    # option variants, on the synthetic two-device bundle (clock fits, invalid and reversed
    # ticks, host spans) and real ones; the pass must have taken them.
    synthetic = tmp_path / "device.ireeprof"
    synthetic.write_bytes(device_bundle())
    paths = [synthetic] + [p for k, p in sorted(iree_bundles.items()) if "local-task" in k][:3]
    for path in paths:
        for extra in VARIANTS:
            options = ReportOptions(dispatch_events=True,
                                    **{k.lstrip("-"): (int(v) if k == "--id" else v) for k, v in
                                       (e.split("=", 1) for e in extra)})
            assert REPORTS[name].report_file(str(path), options) is not None, (path, extra)
            assert_like_iree([name, "--format=jsonl", "--dispatch_events", *extra, path],
                             iree_profile)


def test_event_rows_read_like_the_exact_paths(iree_bundles, tmp_path):
    # The native event blocks (columns read in place from the pass's memory) as mappings, row by
    # row, against the exact path's (numpy columns); and after the pass's other objects are gone.
    import gc

    from amdgpu_cli.profile.reader import Bundle

    synthetic = tmp_path / "device.ireeprof"
    synthetic.write_bytes(device_bundle())
    options = ReportOptions(dispatch_events=True)
    for path in [synthetic, iree_bundles["attention-local-task-all"]]:
        native_rows = dispatch_report.report_file(str(path), options)
        gc.collect()
        exact_rows = dispatch_report.report(Bundle.open(path), options)
        ours = [dict(row) for row in native_rows]
        assert ours == [dict(row) for row in exact_rows], path
        assert len(ours) >= 5  # some events and the summary

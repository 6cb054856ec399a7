"""amdgpu device profiling on softhsa: `amdgpu-run --device=amdgpu --device_profiling_mode=...`.

Truth and oracle:
- softhsa's dispatch log (one JSON line per kernel it ran, in execution order) is the truth for
  which kernels ran, with which grid, in which order: the bundle's dispatch events must match it
  one to one (function name = logged kernel, workgroup count x workgroup size = logged grid,
  event-id order = log order).
- IREE 3.13.0's `iree-profile` reads the bundle: its `dispatch --dispatch_events` rows must show
  every event valid (start < end) with a clock fit (duration_ns = end - start on softhsa, whose
  ticks are nanoseconds), and our `amdgpu-profile` must print the same rows, command by command.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_util import compile_corpus, load_corpus, model_paths

MODE = "queue-events,device-queue-events,dispatch-events,executable-metadata"
CASE_IDS = ["matmul:matmul:0", "softmax:softmax:0", "dynamic_shapes:scale_rows:0"]
AMDGPU_RUN = [sys.executable, "-c",
              "import sys; from amdgpu_cli.cli.main import run_main; run_main(sys.argv[1:])"]
AMDGPU_PROFILE = [sys.executable, "-c",
                  "import sys; from amdgpu_cli.cli.main import profile_main; "
                  "profile_main(sys.argv[1:])"]
TIMEOUT_S = 120


def _iree_profile() -> str:
    found = shutil.which("iree-profile")
    if found is None:
        pytest.skip("iree-profile (IREE 3.13.0) not on PATH")
    return found


@pytest.fixture(scope="module")
def vmfbs(tmp_path_factory):
    """{stem: vmfb} of the models CASE_IDS use, compiled for gfx942."""
    if not (os.environ.get("IREE_COMPILE") or shutil.which("iree-compile")):
        pytest.skip("iree-compile not on PATH")
    stems = {case_id.split(":")[0] for case_id in CASE_IDS}
    cache = os.environ.get("IREE_CORPUS_CACHE")
    out = Path(cache) / "amdgpu-gfx942" if cache else tmp_path_factory.mktemp("gfx942")
    return compile_corpus(out, paths=[p for p in model_paths() if p.stem in stems],
                          target="amdgpu-gfx942")


def _environment(config: Path) -> dict:
    env = dict(os.environ)
    for name in ("ROCR_VISIBLE_DEVICES", "IREE_HAL_AMDGPU_LIBHSA_PATH",
                 "IREE_HAL_AMDGPU_LIBAQLPROFILE_PATH"):
        env.pop(name, None)
    env["SOFTHSA_CONFIG"] = str(config)
    env["AMDGPU_LIBHSA_SKIP_SYSTEM"] = "1"
    return env


def _run(softhsa_lib, tmp_path, vmfb, args, mode=MODE, extra=()):
    """(process, bundle path, softhsa log lines) of one profiled `amdgpu-run`."""
    log = tmp_path / "dispatch.jsonl"
    config = tmp_path / "softhsa.json"
    config.write_text(json.dumps({"log": str(log)}))
    bundle = tmp_path / "out.ireeprof"
    proc = subprocess.run([*AMDGPU_RUN, "--device=amdgpu",
                           f"--amdgpu_libhsa_search_path={softhsa_lib}", f"--module={vmfb}",
                           *args, f"--device_profiling_mode={mode}",
                           f"--device_profiling_output={bundle}", *extra],
                          capture_output=True, text=True, env=_environment(config),
                          timeout=TIMEOUT_S)
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return proc, bundle, lines


def _jsonl(argv: list[str]) -> list[dict]:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert (proc.returncode, proc.stderr) == (0, ""), argv
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_dispatch_events_match_softhsa_log(vmfbs, softhsa_lib, tmp_path, case_id):
    iree_profile = _iree_profile()
    case = next(c for c in load_corpus() if c.id == case_id)
    proc, bundle, logged = _run(softhsa_lib, tmp_path, vmfbs[case.stem], case.args)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert logged, "softhsa logged no dispatch"

    rows = _jsonl([iree_profile, "dispatch", "--format=jsonl", "--dispatch_events", str(bundle)])
    events = [row for row in rows if row["type"] == "dispatch_event"]
    assert len(events) == len(logged)
    assert [e["event_id"] for e in events] == list(range(1, len(events) + 1))
    for event, line in zip(events, logged):
        assert event["key"] == line["kernel"]
        grid = [c * s for c, s in zip(event["workgroup_count"], event["workgroup_size"])]
        assert grid == line["grid"]
        assert event["workgroup_size"] == line["workgroup"]
        assert (event["physical_device_ordinal"], event["queue_ordinal"],
                event["stream_id"]) == (0, 0, 0)
        assert event["submission_id"] > 0 and event["command_buffer_id"] > 0
        assert 0 < event["start_tick"] < event["end_tick"]
        assert event["valid"] and event["clock_fit_available"]
        # softhsa's ticks are CLOCK_MONOTONIC ns: the fit must be the identity
        assert event["duration_ns"] == event["end_tick"] - event["start_tick"]
    starts = [e["start_tick"] for e in events]
    assert starts == sorted(starts)

    summary = _jsonl([iree_profile, "summary", "--format=jsonl", str(bundle)])
    device = next(row for row in summary if row["type"] == "device_summary")
    assert device["clock_fit_available"] and device["clock_samples"] >= 2
    assert device["dispatch_ticks_covered_by_clock_samples"]


@pytest.mark.parametrize("case_id", CASE_IDS[:2])
def test_ours_agrees_with_iree_profile(vmfbs, softhsa_lib, tmp_path, case_id):
    iree_profile = _iree_profile()
    case = next(c for c in load_corpus() if c.id == case_id)
    proc, bundle, _ = _run(softhsa_lib, tmp_path, vmfbs[case.stem], case.args)
    assert proc.returncode == 0, proc.stderr
    for command in (["dispatch"], ["dispatch", "--dispatch_events"], ["queue"],
                    ["queue", "--dispatch_events"], ["command"], ["executable"], ["summary"]):
        argv = [command[0], "--format=jsonl", *command[1:], str(bundle)]
        assert _jsonl([*AMDGPU_PROFILE, *argv]) == _jsonl([iree_profile, *argv]), command


def test_queue_and_device_queue_events(vmfbs, softhsa_lib, tmp_path):
    iree_profile = _iree_profile()
    case = next(c for c in load_corpus() if c.id == CASE_IDS[0])
    proc, bundle, _ = _run(softhsa_lib, tmp_path, vmfbs[case.stem], case.args)
    assert proc.returncode == 0, proc.stderr
    rows = _jsonl([iree_profile, "queue", "--format=jsonl", str(bundle)])
    host = [r for r in rows if r["type"] == "queue_event"]
    device = [r for r in rows if r["type"] == "queue_device_event"]
    assert host and [r["op"] for r in host] == [r["op"] for r in device]
    assert "execute" in [r["op"] for r in host]
    for h, d in zip(host, device):
        assert h["submission_id"] == d["submission_id"]
        assert d["valid"] and d["clock_fit_available"] and d["start_tick"] < d["end_tick"]
        assert h["host_time_ns"] <= h["ready_host_time_ns"] or h["ready_host_time_ns"] == 0


def test_without_device_timing(vmfbs, softhsa_lib, tmp_path):
    """queue-events alone: no clock correlations, no dispatch events, metadata still written."""
    iree_profile = _iree_profile()
    case = next(c for c in load_corpus() if c.id == CASE_IDS[0])
    proc, bundle, logged = _run(softhsa_lib, tmp_path, vmfbs[case.stem], case.args,
                                mode="queue-events")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert logged
    rows = _jsonl([iree_profile, "summary", "--format=jsonl", str(bundle)])
    device = next(row for row in rows if row["type"] == "device_summary")
    assert device["clock_samples"] == 0 and device["dispatches"] == 0


@pytest.mark.parametrize("mode,extra,words", [
    ("host-execution", [], "host-execution"),
    ("counters", ["--device_profiling_counter=SQ_WAVES"], "aqlprofile"),
    ("executable-traces", [], "aqlprofile"),
    ("device-metrics", [], "0x100"),
])
def test_refused_families(vmfbs, softhsa_lib, tmp_path, mode, extra, words):
    case = next(c for c in load_corpus() if c.id == CASE_IDS[0])
    proc, bundle, logged = _run(softhsa_lib, tmp_path, vmfbs[case.stem], case.args, mode=mode,
                                extra=extra)
    assert proc.returncode == 1
    assert "UNIMPLEMENTED" in proc.stderr or "unimplemented" in proc.stderr.lower(), proc.stderr
    assert words in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not logged  # refused before anything ran


def test_capture_filter_selects_dispatches(vmfbs, softhsa_lib, tmp_path):
    """--device_profiling_filter_function: only dispatches of matching exports get timed events
    (softhsa still runs every kernel); a pattern matching nothing records no dispatch event."""
    iree_profile = _iree_profile()
    case = next(c for c in load_corpus() if c.id == "softmax:softmax:0")
    for i, (pattern, expected) in enumerate((
            ("*dispatch_1*", ["softmax_dispatch_1_reduction_2x4_f32"]),
            ("no_such_function", []))):
        (tmp_path / str(i)).mkdir()
        proc, bundle, logged = _run(softhsa_lib, tmp_path / str(i), vmfbs[case.stem], case.args,
                                    extra=[f"--device_profiling_filter_function={pattern}"])
        assert (proc.returncode, proc.stderr) == (0, "")
        assert len(logged) == 2
        rows = _jsonl([iree_profile, "dispatch", "--format=jsonl", "--dispatch_events",
                       str(bundle)])
        assert [r["key"] for r in rows if r["type"] == "dispatch_event"] == expected

"""Profile captures written by amdgpu-run / amdgpu-benchmark on local-task and local-sync, judged by
IREE 3.13.0: the same run captured by iree-run-module (or iree-benchmark-module) and by us must
read the same in iree-profile's reports once what legitimately differs is removed
(tests/capture_parity.py says what and why); both readers must read both bundles; a killed capture
stays readable; bad flags fail before anything is written."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from capture_parity import FAMILIES, capture, differences, normalize, report_rows
from corpus_util import load_corpus

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("iree-run-module", "iree-profile", "amdgpu-run",
                                      "iree-benchmark-module", "amdgpu-benchmark")),
    reason="IREE 3.13.0 tools and our commands must be on PATH")

DEVICES = ("local-task", "local-sync")
FULL = ",".join(FAMILIES)
# One RUN line per corpus model.
CASES = {case.stem: case for case in reversed(load_corpus())}
MODEL_WITH_TRANSFERS = "pad_slice"  # fills and copies in its command buffer


def _iree_profile() -> str:
    return shutil.which("iree-profile")


def _reports(device: str):
    # local-sync never writes command-buffer metadata though its events name command buffers, so
    # iree-profile's `command` report cannot read real local-sync bundles (IREE's or ours).
    return [r for r in ("summary", "command", "queue", "memory", "dispatch")
            if not (device == "local-sync" and r == "command")]


def _pair(tmp_path: Path, vmfb: Path, args, device: str, families: str, tag: str = ""):
    ours, theirs = tmp_path / f"ours{tag}.ireeprof", tmp_path / f"iree{tag}.ireeprof"
    with ThreadPoolExecutor(2) as pool:
        a, b = pool.map(lambda job: capture(*job), [
            (["amdgpu-run"], device, vmfb, args, families, ours),
            (["iree-run-module"], device, vmfb, args, families, theirs)])
    assert b.returncode == 0, b.stderr
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout  # the run itself printed the same
    return ours, theirs


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("stem", sorted(CASES))
def test_corpus_capture_matches_iree(stem, device, vmfbs, tmp_path):
    """Acceptance 1: every corpus model, every family IREE accepts on local drivers at once."""
    case = CASES[stem]
    ours, theirs = _pair(tmp_path, vmfbs[stem], case.args, device, FULL)
    assert differences(_iree_profile(), ours, theirs, _reports(device)) == []
    # Our reader reads both bundles, and sees in them what IREE's reader sees.
    for bundle in (ours, theirs):
        done = subprocess.run(["amdgpu-profile", "summary", "--format=jsonl", str(bundle)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        mine = [normalize(json.loads(line)) for line in done.stdout.splitlines()]
        assert mine == [normalize(r) for r in report_rows(_iree_profile(), "summary", bundle)]


@pytest.mark.parametrize("device", DEVICES)
def test_every_family_set_matches_iree(device, vmfbs, tmp_path):
    """Acceptance 1: every non-empty combination of the five families, on a model whose command
    buffer also fills and copies."""
    case = CASES[MODEL_WITH_TRANSFERS]
    combos = [",".join(c) for n in range(1, len(FAMILIES) + 1)
              for c in itertools.combinations(FAMILIES, n)]
    failures = {}
    for i, families in enumerate(combos):
        ours, theirs = _pair(tmp_path, vmfbs[case.stem], case.args, device, families, f"-{i}")
        found = differences(_iree_profile(), ours, theirs, ("summary", "queue", "memory"))
        if found:
            failures[families] = found[:3]
        ours.unlink()
        theirs.unlink()
    assert failures == {}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("family,bit", [("device-queue-events", 0x4), ("dispatch-events", 0x8),
                                        ("device-metrics", 0x100),
                                        ("executable-traces", 0x40)])
def test_families_iree_refuses_are_refused(family, bit, device, vmfbs, tmp_path):
    case = CASES["matmul"]
    out = tmp_path / "keep.ireeprof"
    out.write_bytes(b"old contents")
    a = capture(["amdgpu-run"], device, vmfbs["matmul"], case.args, f"queue-events,{family}", out)
    b = capture(["iree-run-module"], device, vmfbs["matmul"], case.args,
                f"queue-events,{family}", tmp_path / "iree.ireeprof")
    assert a.returncode == b.returncode == 1
    reason = f"UNIMPLEMENTED; unsupported local profiling data families 0x{bit:x}"
    assert reason in b.stderr
    assert reason in a.stderr and len(a.stderr.strip().splitlines()) == 1
    assert "Traceback" not in a.stderr
    assert out.read_bytes() == b"old contents"  # refused before the file was touched


def _flags_run(vmfb: Path, args, *flags, tool="amdgpu-run"):
    return subprocess.run([tool, "--device=local-task", f"--module={vmfb}", *args, *flags],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("flags,iree_words", [
    (["--device_profiling_mode=nonsense", "--device_profiling_output={out}"],
     "unsupported profiling data family 'nonsense'"),
    (["--device_profiling_mode=,queue-events", "--device_profiling_output={out}"],
     "--device_profiling_mode contains an empty data family"),
    (["--device_profiling_output={out}"],
     "--device_profiling_output requires --device_profiling_mode"),
    (["--device_profiling_mode=queue-events"],
     "--device_profiling_mode requires --device_profiling_output"),
    (["--device_profiling_mode=queue-events", "--device_profiling_output={out}",
      "--device_profiling_filter_function=no_such_function"],
     "local profiling capture filters require producer-owned dispatch events"),
    (["--device_profiling_mode=counters", "--device_profiling_output={out}"],
     "counter profiling requires at least one counter set selection"),
    (["--print_device_statistics", "--device_profiling_output={out}"],
     "--print_device_statistics cannot be combined with --device_profiling_output"),
])
@pytest.mark.parametrize("tool", ["amdgpu-run", "amdgpu-benchmark"])
def test_bad_profiling_flags(flags, iree_words, tool, vmfbs, tmp_path):
    """Acceptance 5: one line, exit 1, no traceback, the file at the output path untouched."""
    case = CASES["matmul"]
    out = tmp_path / "keep.ireeprof"
    out.write_bytes(b"old contents")
    iree_flags = [f.format(out=tmp_path / "iree.ireeprof") for f in flags]
    flags = [f.format(out=out) for f in flags]
    iree = _flags_run(vmfbs["matmul"], case.args, *iree_flags, tool="iree-run-module")
    assert iree.returncode == 1 and iree_words in iree.stderr
    extra = ["--benchmark_min_time=1x"] if tool == "amdgpu-benchmark" else []
    done = _flags_run(vmfbs["matmul"], case.args, *flags, *extra, tool=tool)
    assert done.returncode == 1, done.stderr
    assert iree_words in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "EXEC" not in done.stdout  # refused before the run
    assert out.read_bytes() == b"old contents"


@pytest.mark.parametrize("target,reason", [("dir", "is a directory"),
                                           ("missing/x.ireeprof", "No such file or directory")])
def test_unwritable_output_path(target, reason, vmfbs, tmp_path):
    (tmp_path / "dir").mkdir()
    case = CASES["matmul"]
    done = _flags_run(vmfbs["matmul"], case.args, "--device_profiling_mode=queue-events",
                      f"--device_profiling_output={tmp_path / target}")
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: cannot write `{tmp_path / target}`: {reason}"
    assert "EXEC" not in done.stdout


def _content_types(bundle: Path) -> list[str]:
    done = subprocess.run([_iree_profile(), "cat", str(bundle)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return [line.split("profile.")[-1] for line in done.stdout.splitlines()
            if line.strip().startswith("content_type:")]


@pytest.mark.parametrize("device", DEVICES)
def test_benchmark_flushes_once_per_iteration(device, vmfbs, tmp_path):
    """Acceptance 3: with profiling on, a benchmark of N iterations writes the chunks IREE's
    writes: metadata once, one chunk per event family per iteration."""
    case = CASES["matmul"]
    bundles = {}
    for tool in ("amdgpu-benchmark", "iree-benchmark-module"):
        bundles[tool] = tmp_path / f"{tool}.ireeprof"
        done = subprocess.run(
            [tool, f"--device={device}", f"--module={vmfbs['matmul']}", *case.args,
             "--benchmark_min_time=7x", f"--device_profiling_mode={FULL}",
             f"--device_profiling_output={bundles[tool]}"],
            capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    ours, theirs = _content_types(bundles["amdgpu-benchmark"]), \
        _content_types(bundles["iree-benchmark-module"])
    assert ours == theirs
    assert ours.count("queue-events") == 7
    assert differences(_iree_profile(), bundles["amdgpu-benchmark"],
                       bundles["iree-benchmark-module"], _reports(device)) == []


def test_killed_capture_stays_readable(vmfbs, tmp_path):
    """Acceptance 4: a local-task benchmark capture killed with SIGKILL at five moments leaves a
    file both readers accept (the same exit status)."""
    case = CASES["matmul"]
    out = tmp_path / "killed.ireeprof"
    statuses = []
    for delay in (0.05, 0.2, 0.45, 0.8, 1.3):
        out.unlink(missing_ok=True)
        proc = subprocess.Popen(
            ["amdgpu-benchmark", "--device=local-task", f"--module={vmfbs['matmul']}",
             *case.args, "--benchmark_min_time=30s", f"--device_profiling_mode={FULL}",
             f"--device_profiling_output={out}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while (not out.exists() or out.stat().st_size <= 24) and time.monotonic() < deadline:
                assert proc.poll() is None, "the benchmark ended before it was killed"
                time.sleep(0.01)
            time.sleep(delay)  # the capture is streaming: kill it somewhere in there
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        iree = subprocess.run([_iree_profile(), "summary", str(out)], capture_output=True,
                              text=True, timeout=120)
        ours = subprocess.run(["amdgpu-profile", "summary", str(out)], capture_output=True,
                              text=True, timeout=120)
        assert iree.returncode == ours.returncode, (iree.stderr, ours.stderr)
        statuses.append(iree.returncode)
        assert "Traceback" not in ours.stderr
        size = out.stat().st_size
        iree_rows = report_rows(_iree_profile(), "summary", out)
        assert iree_rows[0]["chunk_records"] > 0, size
    assert statuses == [0] * 5  # each record reaches the file whole, in one write


def test_preset_names_expand_to_their_families(vmfbs, tmp_path):
    """A preset (profiles/presets/<name>.modes) records what its family list records: the
    local-all preset against IREE's capture with the five families spelled out."""
    case = CASES["matmul"]
    ours, theirs = tmp_path / "ours.ireeprof", tmp_path / "iree.ireeprof"
    a = capture(["amdgpu-run"], "local-task", vmfbs["matmul"], case.args, "local-all", ours)
    b = capture(["iree-run-module"], "local-task", vmfbs["matmul"], case.args, FULL, theirs)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert differences(_iree_profile(), ours, theirs, _reports("local-task")) == []


@pytest.mark.parametrize("tool,extra", [("amdgpu-run", []),
                                        ("amdgpu-benchmark", ["--benchmark_min_time=3x"])])
def test_print_statistics(tool, extra, vmfbs):
    """--print_statistics: IREE's allocator block (its layout from iree-run-module's own output),
    with our allocator's numbers: the run's only allocator buffers are its input tensors (what
    numpy says they hold), all freed by the end."""
    import re

    case = CASES["matmul"]
    iree = _flags_run(vmfbs["matmul"], case.args, "--print_statistics", tool="iree-run-module")
    ours = _flags_run(vmfbs["matmul"], case.args, "--print_statistics", *extra, tool=tool)
    assert iree.returncode == ours.returncode == 0, ours.stderr

    def block(stderr: str) -> list[str]:
        lines = stderr.splitlines()
        start = lines.index("Device: local-task")
        return lines[start:start + 4]

    shape = re.compile(r" +\d+B")  # " " + a number right-aligned in 12 columns + "B"
    assert [shape.sub(" NB", line) for line in block(ours.stderr)] == \
        [shape.sub(" NB", line) for line in block(iree.stderr)]
    for line in block(ours.stderr)[2:]:
        assert all(len(m) == 14 for m in re.findall(r" +\d+B", line.split(":", 1)[1]))
    import numpy as np
    from amdgpu_cli.tooling.io import parse_inputs

    input_bytes = sum(np.asarray(v.array).nbytes for v in parse_inputs(case.inputs, "rr"))
    device = [int(n) for n in re.findall(r"(\d+)B", block(ours.stderr)[3])]
    assert device == [input_bytes, input_bytes, input_bytes, 0]  # peak, allocated, freed, live


def test_periodic_flush_streams_chunks_while_the_run_goes(tmp_path):
    """--device_profiling_flush_interval_ms: a background thread flushes while calls run (no
    iteration flushes here), so the events arrive in several chunks; every call's events are
    there once (iree-profile counts them), none dropped."""
    import numpy as np

    import amdgpu_cli
    from amdgpu_cli.tooling.profiling import Capture, ProfilingFlags
    from examples.compile import compile_model

    vmfb = tmp_path / "mlp.vmfb"
    compile_model(Path(__file__).resolve().parent.parent / "examples" / "models" / "mlp.mlir",
                  vmfb, target="llvm-cpu")
    out = tmp_path / "periodic.ireeprof"
    capture = Capture.from_flags(ProfilingFlags(mode="queue-events", output=str(out),
                                                flush_interval_ms=5))
    module = amdgpu_cli.load_module(vmfb, device="local-task")
    try:
        predict = module.function("predict", device_results=True)
        x = module.upload(np.ones((1, 16), np.float32))
        predict(x)
        capture.begin(module._session.devices)
        # Calls go on until the file has grown while they ran (chunks written by the flush
        # thread, not by end()) three times, or 20 s on a machine too loaded to get there.
        calls, growths, size = 0, 0, out.stat().st_size
        deadline = time.monotonic() + 20
        while growths < 3 and time.monotonic() < deadline:
            predict(x)
            calls += 1
            now = out.stat().st_size
            growths, size = growths + (now > size), now
        capture.end()
    finally:
        module.close()
    chunks = _content_types(out).count("queue-events")
    assert chunks > 2, chunks
    summary = report_rows(_iree_profile(), "summary", out)[0]
    # alloca, alloca, execute, dealloca per call: each recorded once, or counted as dropped when
    # the flush thread fell behind and the ring was full (IREE's lossy families do the same)
    assert summary["queue_event_records"] + summary["dropped_records"] == 4 * calls, summary


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["", "queue-events,memory-events",
                                  "host-execution,command-region-events"])
@pytest.mark.parametrize("stem", ["matmul", MODEL_WITH_TRANSFERS])
def test_print_device_statistics_as_iree(stem, mode, device, vmfbs):
    """--print_device_statistics: the same block as iree-run-module's, line for line, once the
    times (which no two runs share) are masked."""
    import re

    case = CASES[stem]
    flags = ["--print_device_statistics"] + ([f"--device_profiling_mode={mode}"] if mode else [])
    blocks = []
    for tool in ("amdgpu-run", "iree-run-module"):
        done = subprocess.run([tool, f"--device={device}", f"--module={vmfbs[stem]}", *case.args,
                               *flags], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        blocks.append(re.sub(r"[0-9.]+ (ns|us|ms|s)\b", "T", done.stderr))
    assert blocks[0] == blocks[1]
    assert "IREE HAL device statistics:" in blocks[0]

"""Capture (`--device_replay_output`) against IREE 3.13.0's own captures of the same calls.

For every corpus model (its first RUN line), `amdgpu-run --device=local-task
--device_replay_output=F` must print what it prints without capture, IREE's `iree-run-replay`
must run F on local-task and local-sync, and `iree-dump-replay --format=jsonl F` must give the
records IREE's capture of the same call gives (tests/replay/conftest.py `iree_captures`):

- SIGNATURE: per record, in order, (record kind, object type, operation, payload type, status).
  This is the acceptance criterion.
- then every other field the dumper prints, except IGNORED_FIELDS (below, with why). Today the
  set is empty: ids, lengths, offsets, payload fields all equal IREE's. What the dumper does not
  print differs by design only: pad bytes (IREE leaves stack garbage in them, §1.2/§1.3) and
  nothing else we know of.

Also: amdgpu-benchmark against iree-benchmark-module (`--benchmark_min_time=3x`: scope init, then
one `execute` per iteration), flag and path errors (one line, the file at the path untouched),
a capture killed with SIGKILL (whole records, file_length 0, readable), the results sidecar,
and a capture of a gfx942 model on amdgpu over softhsa that iree-dump-replay reads.
Subprocess pairs run two at a time (ThreadPoolExecutor), so the file stays near a minute on two
cores.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.replay.conftest import CASES, iree_replay_tools_available

pytestmark = pytest.mark.skipif(not iree_replay_tools_available(),
                                reason="IREE 3.13.0 replay tools not on PATH")

AMDGPU_RUN = [sys.executable, "-c",
              "import sys; from amdgpu_cli.cli.main import run_main; run_main(sys.argv[1:])"]
AMDGPU_BENCHMARK = [sys.executable, "-c", "import sys; from amdgpu_cli.cli.main import "
                    "benchmark_main; benchmark_main(sys.argv[1:])"]
STEMS = sorted(CASES)
SIGNATURE = ("kind", "object_type", "operation", "payload_type", "status")
# Dumper fields not compared with IREE's, and why. Empty: our records equal IREE's field for
# field (ids: one shared counter reserved before each creating call, as IREE's; lengths: the same
# executable bytes, inline file bytes and payload layouts; offsets follow from the lengths).
# Fields would go here, e.g. "file_offset", if a record of ours ever differed in length.
IGNORED_FIELDS: frozenset[str] = frozenset()


def _run(argv, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300,
                          **kwargs)


def _dump(path) -> list[dict]:
    done = _run(["iree-dump-replay", "--format=jsonl", path])
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()][2:]  # file, summary


def _signature(rows) -> list[tuple]:
    return [tuple(row[k] for k in SIGNATURE) for row in rows]


def _strip(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in IGNORED_FIELDS}


def _first_difference(ours, theirs) -> str:
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            return f"record #{i}: ours {a} != IREE's {b}"
    return f"record counts: ours {len(ours)} != IREE's {len(theirs)}"


# -- amdgpu-run over the corpus -----------------------------------------------------------------

@pytest.fixture(scope="module")
def corpus_captures(iree_captures, vmfbs, tmp_path_factory):
    """{stem: outcome} for every corpus model, two models at a time: our capture's stdout and
    the plain run's, IREE's capture, both dumps, and iree-run-replay's exit on both devices."""
    out = tmp_path_factory.mktemp("captures")

    def one(stem: str) -> dict:
        case = CASES[stem]
        iree = iree_captures(stem, "local-task")
        path = out / f"{stem}.ireereplay"
        base = [*AMDGPU_RUN, "--device=local-task", f"--module={vmfbs[stem]}", *case.args]
        captured = _run([*base, f"--device_replay_output={path}"])
        plain = _run(base)
        result = {"captured": captured, "plain": plain, "iree": iree, "path": path}
        if captured.returncode == 0:
            result["ours"] = _dump(path)
            result["theirs"] = _dump(iree.path)
            result["replays"] = {device: _run(["iree-run-replay", f"--device={device}", path])
                                 for device in ("local-task", "local-sync")}
        return result

    with ThreadPoolExecutor(2) as pool:
        return dict(zip(STEMS, pool.map(one, STEMS)))


@pytest.mark.parametrize("stem", STEMS)
def test_run_capture_matches_iree(corpus_captures, stem):
    outcome = corpus_captures[stem]
    captured, plain = outcome["captured"], outcome["plain"]
    assert (captured.returncode, captured.stderr) == (0, ""), captured.stderr
    assert captured.stdout == plain.stdout  # capture changes nothing the run prints
    assert captured.stdout == outcome["iree"].stdout  # ... which is what iree-run-module prints
    ours, theirs = outcome["ours"], outcome["theirs"]
    assert _signature(ours) == _signature(theirs), \
        _first_difference(_signature(ours), _signature(theirs))
    assert [_strip(r) for r in ours] == [_strip(r) for r in theirs], \
        _first_difference([_strip(r) for r in ours], [_strip(r) for r in theirs])
    for device, done in outcome["replays"].items():
        assert (done.returncode, done.stderr) == (0, ""), f"iree-run-replay --device={device}"


def test_run_capture_is_closed(corpus_captures):
    """The header's file_length is the file's size (the recorder closed it)."""
    path = corpus_captures["matmul"]["path"]
    data = path.read_bytes()
    assert data[:4] == b"IRRP" and struct.unpack_from("<Q", data, 16)[0] == len(data)


# -- amdgpu-benchmark -----------------------------------------------------------------------------

@pytest.mark.parametrize("stem", ["matmul", "softmax"])
def test_benchmark_capture_matches_iree(vmfbs, tmp_path, stem):
    case = CASES[stem]
    ours, theirs = tmp_path / "ours.ireereplay", tmp_path / "iree.ireereplay"
    common = ["--device=local-task", f"--module={vmfbs[stem]}", *case.args,
              "--benchmark_min_time=3x"]
    with ThreadPoolExecutor(2) as pool:
        mine = pool.submit(_run, [*AMDGPU_BENCHMARK, *common, f"--device_replay_output={ours}"])
        iree = pool.submit(_run, ["iree-benchmark-module", *common,
                                  f"--device_replay_output={theirs}"])
        mine, iree = mine.result(), iree.result()
    assert mine.returncode == 0, mine.stderr
    assert iree.returncode == 0, iree.stderr
    rows, truth = _dump(ours), _dump(theirs)
    assert _signature(rows) == _signature(truth), _first_difference(_signature(rows),
                                                                    _signature(truth))
    assert [_strip(r) for r in rows] == [_strip(r) for r in truth]
    scopes = [(r["operation"], r["payload"]["name"]) for r in rows
              if r["operation"].startswith("replay.scope")]
    assert scopes == [("replay.scope_begin", "init"), ("replay.scope_end", "init")] + \
        [("replay.scope_begin", "execute"), ("replay.scope_end", "execute")] * 3
    done = _run(["iree-run-replay", "--device=local-sync", ours])
    assert (done.returncode, done.stderr) == (0, "")


# -- flags, paths, kills --------------------------------------------------------------------------

@pytest.mark.parametrize("flag, message", [
    ("--device_replay_file_policy=bogus",
     "INVALID_ARGUMENT; --device_replay_file_policy must be `reference`, `capture-ranges`, "
     "`capture-all`, or `fail`; got `bogus`"),
    ("--device_replay_file_validation=bogus",
     "INVALID_ARGUMENT; --device_replay_file_validation must be `identity` or `digest`; "
     "got `bogus`"),
])
@pytest.mark.parametrize("tool", ["run", "benchmark"])
def test_bad_flag_values(vmfbs, tmp_path, tool, flag, message):
    """One line, exit 1 (IREE's message and status), the file already at the path untouched."""
    path = tmp_path / "kept.ireereplay"
    path.write_bytes(b"old contents")
    argv = AMDGPU_RUN if tool == "run" else AMDGPU_BENCHMARK
    done = _run([*argv, "--device=local-task", f"--module={vmfbs['matmul']}",
                 *CASES["matmul"].args, f"--device_replay_output={path}", flag])
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"error: {message}"]
    assert path.read_bytes() == b"old contents"


def test_unwritable_output(vmfbs, tmp_path):
    missing = tmp_path / "missing" / "x.ireereplay"
    done = _run([*AMDGPU_RUN, "--device=local-task", f"--module={vmfbs['matmul']}",
                 *CASES["matmul"].args, f"--device_replay_output={missing}"])
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and str(missing) in done.stderr
    assert not missing.parent.exists()


def test_results_flag_needs_output(vmfbs):
    done = _run([*AMDGPU_RUN, f"--module={vmfbs['matmul']}", *CASES["matmul"].args,
                 "--device_replay_results"])
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: INVALID_ARGUMENT; --device_replay_results requires --device_replay_output"]


def test_error_before_the_run_keeps_the_file(tmp_path):
    path = tmp_path / "kept.ireereplay"
    path.write_bytes(b"old contents")
    done = _run([*AMDGPU_RUN, f"--module={tmp_path / 'absent.vmfb'}",
                 f"--device_replay_output={path}"])
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert path.read_bytes() == b"old contents"


def test_killed_capture_is_readable(vmfbs, tmp_path):
    """SIGKILL mid-benchmark: every record whole, file_length 0, iree-dump-replay reads it."""
    path = tmp_path / "killed.ireereplay"
    proc = subprocess.Popen([*AMDGPU_BENCHMARK, "--device=local-task",
                             f"--module={vmfbs['matmul']}", *CASES["matmul"].args,
                             "--benchmark_min_time=60s", f"--device_replay_output={path}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # some iterations in: past set-up, records streaming
            if path.exists() and path.stat().st_size > 200_000:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the capture did not grow")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    data = path.read_bytes()
    assert struct.unpack_from("<Q", data, 16)[0] == 0
    rows = _dump(path)
    assert rows[0]["kind"] == "session"
    assert sum(r["operation"] == "replay.scope_begin" for r in rows) > 2
    end = rows[-1]["file_offset"] + rows[-1]["record_length"]
    assert end <= len(data)


# -- the results sidecar --------------------------------------------------------------------------

def test_results_sidecar(vmfbs, tmp_path):
    import msgpack

    stem = "reductions"  # two results in one allocation
    path = tmp_path / "r.ireereplay"
    done = _run([*AMDGPU_RUN, "--device=local-task", f"--module={vmfbs[stem]}",
                 *CASES[stem].args, f"--device_replay_output={path}",
                 "--device_replay_results"])
    assert done.returncode == 0, done.stderr
    document = msgpack.unpackb((tmp_path / "r.ireereplay.results").read_bytes())
    assert document["format"] == "amdgpu-replay-results" and document["version"] == 1
    assert document["replay"] == "r.ireereplay"
    rows = {r["sequence_ordinal"]: r for r in _dump(path)}
    printed = [line for line in done.stdout.splitlines() if "=" in line]
    assert len(document["results"]) == len(printed)
    for entry, line in zip(document["results"], printed):
        for ordinal in entry["sequence_ordinals"]:
            record = rows[ordinal]
            assert record["operation"] == "buffer.map_range"
            assert record["object_id"] == entry["buffer_id"]
            assert record["payload"]["memory_access"] == 1  # read-only
            assert record["payload"]["byte_length"] == entry["mapped_length"]
        assert entry["sequence_ordinal"] == entry["sequence_ordinals"][0]
        assert len(entry["data"]) == entry["byte_length"]
        assert line.startswith("x".join(map(str, entry["shape"])) + "x" + entry["element_type"])
        elements = 1
        for dim in entry["shape"]:
            elements *= dim
        bits = int("".join(c for c in entry["element_type"] if c.isdigit()))
        assert entry["byte_length"] == elements * bits // 8


# -- amdgpu over softhsa --------------------------------------------------------------------------

def test_amdgpu_softhsa_capture(softhsa_lib, softhsa_env, tmp_path):
    """A gfx942 corpus model captured on amdgpu (softhsa); iree-dump-replay reads it, and it has
    the same record sequence as a local-task capture of the llvm-cpu build of that call."""
    from corpus_util import compile_corpus

    if not (os.environ.get("IREE_COMPILE") or shutil.which("iree-compile")):
        pytest.skip("iree-compile not on PATH")
    cache = os.environ.get("IREE_CORPUS_CACHE")
    out_dir = Path(cache) / "amdgpu-gfx942" if cache else tmp_path / "gfx942"
    stem = "matmul"
    vmfb = compile_corpus(out_dir, jobs=1, target="amdgpu-gfx942",
                          paths=[CASES[stem].mlir])[stem]
    path = tmp_path / "amdgpu.ireereplay"
    env = softhsa_env(AMDGPU_LIBHSA_SKIP_SYSTEM="1")
    env.pop("IREE_HAL_AMDGPU_LIBHSA_PATH", None)
    done = _run([*AMDGPU_RUN, "--device=amdgpu", f"--amdgpu_libhsa_search_path={softhsa_lib}",
                 f"--module={vmfb}", *CASES[stem].args, f"--device_replay_output={path}"],
                env=env)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    rows = _dump(path)
    prepares = [r for r in rows if r["operation"] == "executable_cache.prepare_executable"]
    assert prepares and all(r["status"] == "OK" for r in rows)
    assert any(r["operation"] == "command_buffer.dispatch" for r in rows)
    assert [r["payload"]["name"] for r in rows if r["operation"] == "replay.scope_begin"] == \
        ["init", "execute", "deinit"]

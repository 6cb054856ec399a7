"""`amdgpu-replay slice` against IREE 3.13.0's captures and tools.

Truth: IREE's tools and the full replay. For corpus models whose capture has several dispatches,
every dispatch the capture executes is sliced; iree-dump-replay reads each slice and
iree-run-replay --device=local-task runs it; our executor runs it and the bytes of every range the
slice's dispatch binds equal what that dispatch left in the same ranges of the full replay
(executor.stop_at_dispatch(after=True) on the capture). Dispatches the capture never executes are
refused with one error line. `--list` agrees with iree-dump-replay's dispatch records.
"""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from click.testing import CliRunner

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.registry import default_registry
from amdgpu_cli.replay import executor as X
from amdgpu_cli.replay import schema as S
from amdgpu_cli.replay import slice as slicer
from amdgpu_cli.replay.reader import ReplayFile, decode_payload

MODELS = ("layernorm", "softmax", "float_math", "i64_ops")
DEVICE = "local-task"


def run(*args, timeout=60) -> subprocess.CompletedProcess:
    return subprocess.run([*args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def device():
    made = default_registry().create_device(DEVICE)
    yield made
    made.close()


@pytest.fixture(scope="module")
def captures(iree_captures):
    return {stem: iree_captures(stem, DEVICE).path for stem in MODELS}


def _iree_dispatch_records(path) -> list[int]:
    """The ordinals of the OK dispatch records, as iree-dump-replay lists them."""
    done = run("iree-dump-replay", str(path))
    assert done.returncode == 0, done.stderr
    return [int(m.group(1)) for m in re.finditer(
        r"#(\d+) operation .* status=OK .*op=(?:command_buffer\.dispatch\(313\)|"
        r"device\.queue_dispatch\(21\))", done.stdout)]


def _after(plan, ordinal, device) -> list[bytes]:
    """The bytes of each range dispatch record `ordinal` binds, right after it first ran."""
    seen = []

    def take(state):
        seen.append([slicer.read_back(state.device, b.buffer, b.offset, b.length)
                     for b in state.bindings])

    X.execute(X.stop_at_dispatch(plan, ordinal, take, after=True), [device])
    assert len(seen) == 1
    return seen[0]


def _slice_result(data: bytes, device) -> list[bytes]:
    """Runs a slice in-process; the bytes of each range its dispatch binds, afterwards."""
    with ReplayFile.from_bytes(data) as f:
        dispatches = [decode_payload(S.PayloadType.DISPATCH, f.payload(r))
                      for r in f.records()
                      if r.operation_code == S.Op.COMMAND_BUFFER_DISPATCH]
        assert len(dispatches) == 1
        refs = [(b["buffer_id"], b["offset"], b["length"]) for b in dispatches[0]["bindings"]]
    seen = []
    X.execute(X.plan(data), [device], on_complete=lambda table: seen.extend(
        slicer.read_back(device, table.get(i), offset, length) for i, offset, length in refs))
    return seen


@pytest.mark.parametrize("stem", MODELS)
def test_every_dispatch_slices(captures, device, tmp_path, stem):
    path = captures[stem]
    with ReplayFile.open(path) as f:
        dispatches = slicer.list_dispatches(f)
    assert [d.ordinal for d in dispatches] == _iree_dispatch_records(path)
    executed = [d for d in dispatches if d.executed]
    assert len(executed) >= 2, f"{stem}: pick a model with several executed dispatches"
    plan = X.plan(path)
    files = []
    for info in dispatches:
        if not info.executed:
            with pytest.raises(AmdgpuCliError, match="is never executed"):
                slicer.slice_bytes(path, info.number, [device])
            continue
        data, result = slicer.slice_bytes(path, info.number, [device])
        assert result.dispatch == info and result.length == len(data)
        out = tmp_path / f"{stem}.{info.number}.ireereplay"
        out.write_bytes(data)
        files.append(out)
        expected = _after(plan, info.ordinal, device)
        got = _slice_result(data, device)
        assert got == expected, f"{stem} dispatch {info.number}: slice output differs"
    # IREE's tools accept every slice.
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(lambda p: run("iree-run-replay", f"--device={DEVICE}", str(p)),
                             files))
        dumps = list(pool.map(lambda p: run("iree-dump-replay", str(p)), files))
    for p, done, dump in zip(files, runs, dumps):
        assert (done.returncode, done.stderr) == (0, ""), f"iree-run-replay {p.name}: {done.stderr}"
        assert dump.returncode == 0, f"iree-dump-replay {p.name}: {dump.stderr}"
        assert "strict_replay_supported: yes" in dump.stdout


def test_dispatch_writes_something(captures, device):
    """The comparison above is not vacuous: each executed dispatch changes a bound range. (On
    a fresh device: a device's queue_alloca memory is recycled, so a reused one may hold what
    the same dispatch wrote in an earlier execution.)"""
    for stem in MODELS:
        path = captures[stem]
        with ReplayFile.open(path) as f:
            executed = [d for d in slicer.list_dispatches(f) if d.executed]
        plan = X.plan(path)
        for info in executed:
            before = []
            fresh = default_registry().create_device(DEVICE)
            try:
                X.execute(X.stop_at_dispatch(plan, info.ordinal, lambda state: before.extend(
                    slicer.read_back(state.device, b.buffer, b.offset, b.length)
                    for b in state.bindings)), [fresh])
            finally:
                fresh.close()
            assert before != _after(plan, info.ordinal, device), (stem, info.number)


def test_slice_holds_one_dispatch(captures, device):
    """The slice's records: what the module docstring promises, in IREE's shapes."""
    path = captures["layernorm"]
    data, result = slicer.slice_bytes(path, 1, [device])
    with ReplayFile.from_bytes(data) as f:
        records = list(f.records())
        ops = [r.operation_code for r in records if r.record_type == S.RecordType.OPERATION]
        payloads = {r.sequence_ordinal: bytes(f.payload(r)) for r in records}
    Op = S.Op
    assert ops.count(Op.COMMAND_BUFFER_DISPATCH) == 1
    assert ops.count(Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE) == 1
    assert ops.count(Op.ALLOCATOR_ALLOCATE_BUFFER) == result.buffer_count
    assert ops.count(Op.BUFFER_UNMAP_RANGE) == result.buffer_count
    assert ops.count(Op.DEVICE_QUEUE_EXECUTE) == 1
    # The prepare payload is the captured one, byte for byte.
    with ReplayFile.open(path) as f:
        captured = [bytes(f.payload(r)) for r in f.records()
                    if r.operation_code == Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE]
    prepared = [payloads[r.sequence_ordinal] for r in records
                if r.operation_code == Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE]
    assert prepared == captured
    names = [bytes(payloads[r.sequence_ordinal][24:]).decode() for r in records
             if r.operation_code in (Op.SCOPE_BEGIN, Op.SCOPE_END)]
    assert names == ["init", "init", "execute", "execute", "deinit", "deinit"]


# -- the command --------------------------------------------------------------------------------

def test_cli_list_and_slice(captures, tmp_path):
    from amdgpu_cli.cli.replay_slice import command

    path = captures["softmax"]
    result = CliRunner().invoke(command, ["--list", str(path)], catch_exceptions=False)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    ordinals = _iree_dispatch_records(path)
    assert len(lines) == len(ordinals)
    for n, (line, ordinal) in enumerate(zip(lines, ordinals)):
        assert re.fullmatch(rf"{n} record={ordinal} executable=\d+ function=\S+ "
                            rf"workgroups=(\d+,\d+,\d+|indirect) bindings=\d+( executed=no)?",
                            line), line

    out = tmp_path / "slice.ireereplay"
    done = run("amdgpu-replay", "slice", "--dispatch=1", f"--device={DEVICE}", str(path),
               "-o", str(out))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert "slice of dispatch 1" in done.stderr
    done = run("amdgpu-replay", "run", f"--device={DEVICE}", str(out))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    done = run("iree-benchmark-replay", f"--device={DEVICE}", "--replay_scope=execute",
               "--benchmark_min_time=3x", str(out))
    assert done.returncode == 0 and "BM_replay/scope:execute" in done.stdout, done.stderr


def test_amdgpu_bench_times_the_slice(captures, device, tmp_path):
    import amdgpu_cli.cli.benchmark as benchmark_cli

    if not hasattr(benchmark_cli, "benchmark_flags"):
        pytest.skip("amdgpu-replay bench is not usable yet: amdgpu_cli.cli.benchmark has no "
                    "benchmark_flags (work in progress elsewhere)")
    out = tmp_path / "slice.ireereplay"
    out.write_bytes(slicer.slice_bytes(captures["softmax"], 0, [device])[0])
    done = run("amdgpu-replay", "bench", f"--device={DEVICE}", "--replay_scope=execute",
               "--benchmark_min_time=3x", str(out))
    assert done.returncode == 0 and "BM_replay/scope:execute" in done.stdout, done.stderr


def _one_error_line(done, text: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and text in lines[0], lines[0]


def test_cli_bad_input(captures, iree_captures, tmp_path):
    path = str(captures["softmax"])
    existing = tmp_path / "existing.ireereplay"
    existing.write_bytes(b"keep me")

    done = run("amdgpu-replay", "slice", "--dispatch=99", path, "-o", str(existing))
    _one_error_line(done, "dispatch 99 is out of range; the replay has 3 dispatch(es)")
    done = run("amdgpu-replay", "slice", "--dispatch=-1", path, "-o", str(existing))
    _one_error_line(done, "dispatch -1 is out of range")
    done = run("amdgpu-replay", "slice", "--dispatch=2", path, "-o", str(existing))
    _one_error_line(done, "dispatch 2 (record 27) is never executed")
    scalars = str(iree_captures("scalars", DEVICE).path)  # a capture with no dispatch
    done = run("amdgpu-replay", "slice", "--dispatch=0", scalars, "-o", str(existing))
    _one_error_line(done, "the replay has no dispatches")
    assert run("amdgpu-replay", "slice", "--list", scalars).stdout == ""
    # Unwritable outputs fail before any work, naming the path.
    for bad in (tmp_path, existing / "under_a_file.ireereplay",
                tmp_path / "missing" / "out.ireereplay"):
        done = run("amdgpu-replay", "slice", "--dispatch=0", path, "-o", str(bad))
        _one_error_line(done, f"cannot write `{bad}`")
    assert existing.read_bytes() == b"keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing.ireereplay"]
    # Usage errors: exit 2.
    for args in (["--list", "--dispatch=0", path], [path, "-o", str(existing)],
                 ["--dispatch=0", path], ["--dispatch=x", path, "-o", str(existing)], []):
        done = run("amdgpu-replay", "slice", *args)
        assert done.returncode == 2, (args, done.stderr)
    assert existing.read_bytes() == b"keep me"


# -- other dispatch shapes ------------------------------------------------------------------------

def test_direct_refs_and_constants(iree_captures, device, tmp_path):
    """dynamic_shapes' dispatch binds direct refs and takes 16 bytes of constants; its slice is
    a fixed point (slicing the slice gives the same bytes)."""
    path = iree_captures("dynamic_shapes", DEVICE).path
    with ReplayFile.open(path) as f:
        (info,) = slicer.list_dispatches(f)
    assert info.constants_length == 16
    data, _ = slicer.slice_bytes(path, 0, [device])
    assert _slice_result(data, device) == _after(X.plan(path), info.ordinal, device)
    out = tmp_path / "dynamic.ireereplay"
    out.write_bytes(data)
    assert run("iree-run-replay", f"--device={DEVICE}", str(out)).returncode == 0
    assert slicer.slice_bytes(out, 0, [device])[0] == data


def _as_queue_dispatch(data: bytes) -> bytes:
    """A slice whose command buffer (create, begin, dispatch, barrier, end, queue_execute)
    becomes one device.queue_dispatch signalling the slice's semaphore."""
    from io import BytesIO

    from amdgpu_cli.replay.writer import ReplayWriter, timepoints

    Op, P = S.Op, S.PayloadType
    out = BytesIO()
    w = ReplayWriter(out)
    with ReplayFile.from_bytes(data) as f:
        records = [(r, bytes(f.payload(r))) for r in f.records()]
    semaphore = next(r.related_object_id for r, _ in records
                     if r.operation_code == Op.DEVICE_CREATE_SEMAPHORE)
    cb = next(r.related_object_id for r, _ in records
              if r.operation_code == Op.DEVICE_CREATE_COMMAND_BUFFER)
    for r, payload in records:
        if r.object_id == cb or r.related_object_id == cb:
            if r.operation_code != Op.COMMAND_BUFFER_DISPATCH:
                continue
            fields = S.PAYLOADS[P.DISPATCH].unpack(payload)
            fields.update(queue_affinity=S.U64_MAX, signal_semaphore_count=1)
            w.write(S.RecordType.OPERATION, device_id=1, object_id=1,
                    related_object_id=fields["executable_id"], object_type=S.ObjectType.DEVICE,
                    operation_code=Op.DEVICE_QUEUE_DISPATCH, payload_type=P.DISPATCH,
                    payload=S.PAYLOADS[P.DISPATCH].pack(fields)
                    + timepoints([(semaphore, 1)]) + payload[120:])
            continue
        w.write(r.record_type, device_id=r.device_id, object_id=r.object_id,
                related_object_id=r.related_object_id, object_type=r.object_type,
                operation_code=r.operation_code, payload_type=r.payload_type, payload=payload)
    w.close()
    return out.getvalue()


def test_queue_dispatch(captures, device, tmp_path):
    data, _ = slicer.slice_bytes(captures["layernorm"], 1, [device])
    queued = _as_queue_dispatch(data)
    path = tmp_path / "queued.ireereplay"
    path.write_bytes(queued)
    done = run("iree-run-replay", f"--device={DEVICE}", str(path))
    assert done.returncode == 0, done.stderr
    with ReplayFile.from_bytes(queued) as f:
        (info,) = slicer.list_dispatches(f)
    assert info.operation == "device.queue_dispatch" and info.executed
    sliced, _ = slicer.slice_bytes(path, 0, [device])
    assert _slice_result(sliced, device) == _after(X.plan(queued), info.ordinal, device)
    assert _slice_result(sliced, device) == _slice_result(data, device)

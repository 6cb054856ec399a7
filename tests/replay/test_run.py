"""`amdgpu-replay run` and the replay executor against IREE 3.13.0's own captures.

Truth: iree-run-replay's exit status (and status name) on the same file. Every corpus model,
captured by iree-run-module on local-task and on local-sync, replays on local-sync and local-task
(in-process, through amdgpu_cli.replay.executor); a few are read back and compared with what
iree-run-module printed; §6's error cases are made by editing a real capture and must fail with
iree-run-replay's status.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.registry import default_registry
from amdgpu_cli.replay import executor as X
from amdgpu_cli.replay import schema as S
from amdgpu_cli.replay.reader import ReplayFile
from tests.replay.conftest import CASES

CAPTURE_DEVICES = ("local-task", "local-sync")
REPLAY_DEVICES = ("local-sync", "local-task")


def iree_run_replay(path, *flags) -> subprocess.CompletedProcess:
    return subprocess.run(["iree-run-replay", *flags, str(path)], capture_output=True, text=True,
                          timeout=60)


def iree_status(done: subprocess.CompletedProcess) -> str:
    """The status name of iree-run-replay's error line ('OK' when it succeeded)."""
    if done.returncode == 0:
        return "OK"
    match = re.search(r": ([A-Z_]+); ", done.stderr)
    assert match, done.stderr
    return match.group(1)


@pytest.fixture(scope="module")
def devices():
    made = {uri: default_registry().create_device(uri) for uri in REPLAY_DEVICES}
    yield made
    for device in made.values():
        device.close()


@pytest.fixture(scope="module")
def all_captures(iree_captures):
    """{(stem, capture device): Capture} for the whole corpus, made two at a time, each with
    iree-run-replay's verdict on it."""
    keys = [(stem, device) for stem in sorted(CASES) for device in CAPTURE_DEVICES]
    with ThreadPoolExecutor(2) as pool:
        captures = dict(zip(keys, pool.map(lambda k: iree_captures(*k), keys)))
        verdicts = dict(zip(keys, pool.map(
            lambda k: iree_run_replay(captures[k].path, "--device=local-sync"), keys)))
    return captures, verdicts


def replay(path_or_bytes, devices, **options):
    """Plan + execute in-process; the status name ('OK' on success)."""
    try:
        X.execute(X.plan(path_or_bytes), devices, **options)
    except AmdgpuCliError as error:
        return error.status
    return "OK"


# -- every corpus model -----------------------------------------------------------------------

@pytest.mark.parametrize("capture_device", CAPTURE_DEVICES)
def test_corpus_replays(all_captures, devices, capture_device):
    captures, verdicts = all_captures
    failures = []
    for (stem, device), capture in captures.items():
        if device != capture_device:
            continue
        assert verdicts[stem, device].returncode == 0, verdicts[stem, device].stderr
        plan = X.plan(capture.path)
        for uri, target in devices.items():
            try:
                X.execute(plan, [target])
            except AmdgpuCliError as error:
                failures.append(f"{stem} ({device} capture) on {uri}: {error.one_line()}")
    assert not failures, "\n".join(failures)


def test_cli_runs_quietly(all_captures, tmp_path):
    from click.testing import CliRunner

    from amdgpu_cli.cli.replay_run import command

    capture = all_captures[0]["matmul", "local-task"]
    for uri in REPLAY_DEVICES:
        result = CliRunner().invoke(command, [f"--device={uri}", str(capture.path)],
                                    catch_exceptions=False)
        assert result.exit_code == 0 and result.output == ""


def test_cli_errors_are_one_line(all_captures):
    capture = all_captures[0]["matmul", "local-task"]
    for args in ([], [str(capture.path), str(capture.path)]):
        done = subprocess.run(["amdgpu-replay", "run", *args], capture_output=True, text=True)
        assert done.returncode == 1
        assert done.stderr.strip().endswith(
            "INVALID_ARGUMENT; expected one replay file path argument")
        assert iree_run_replay(*args).returncode == 1 if args else True
    done = subprocess.run(["amdgpu-replay", "run", "--device=local-sync",
                           "--device=local-sync", str(capture.path)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1
    assert "FAILED_PRECONDITION; replay captured 1 device(s) but the target device group " \
           "contains 2 device(s)" in done.stderr


# -- results ----------------------------------------------------------------------------------

_DTYPES = {"f32": np.float32, "i32": np.int32, "f16": np.float16, "i64": np.int64}
_NUMBER = re.compile(r"[-+]?(?:nan|inf|\d+\.?\d*(?:e[-+]?\d+)?)", re.I)


def _printed_values(stdout: str) -> np.ndarray:
    """The elements of the last result iree-run-module printed."""
    text = stdout.strip().splitlines()[-1]
    shape, _, values = text.partition("=")
    return np.array([float(v) for v in _NUMBER.findall(values)], dtype=np.float64)


@pytest.mark.parametrize("stem", ["matmul", "softmax", "layernorm", "conv2d", "dynamic_shapes",
                                  "reductions"])
def test_replay_computes_the_printed_result(all_captures, devices, stem):
    captures, _ = all_captures
    for capture_device in CAPTURE_DEVICES:
        capture = captures[stem, capture_device]
        dtype = re.search(r"x?(f32|i32|f16|i64)=", capture.stdout.strip().splitlines()[-1])
        assert dtype, capture.stdout
        plan = X.plan(capture.path)
        target = plan.copy_targets[-1]  # the readback copy into the host buffer
        for uri, device in devices.items():
            seen = {}

            def grab(table):
                seen["bytes"] = table.get(target.buffer_id).read(target.offset, target.length)

            X.execute(plan, [device], on_complete=grab)
            got = np.frombuffer(seen["bytes"], dtype=_DTYPES[dtype.group(1)])
            expected = _printed_values(capture.stdout)
            got = got[:expected.size].astype(np.float64)
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5,
                                       err_msg=f"{stem} ({capture_device} capture) on {uri}")


# -- error cases (§6), made by editing a real capture ----------------------------------------

class Edit:
    """A capture as editable records: [header fields dict, payload bytearray]."""

    def __init__(self, path):
        with ReplayFile.open(path) as f:
            self.records = [[r._asdict(), bytearray(f.payload(r))] for r in f.records()]

    def find(self, op=None, record_type=S.RecordType.OPERATION, nth=0):
        hits = [i for i, (h, _) in enumerate(self.records)
                if h["record_type"] == record_type and (op is None or h["operation_code"] == op)]
        return hits[nth]

    def insert(self, index, payload=b"", **header):
        fields = dict(device_id=0, object_id=0, related_object_id=0, record_type=3,
                      record_flags=0, payload_type=0, object_type=0, operation_code=0,
                      status_code=0, thread_id=0)
        fields.update(header)
        self.records.insert(index, [fields, bytearray(payload)])

    def bytes(self) -> bytes:
        out = bytearray()
        for ordinal, (h, payload) in enumerate(self.records):
            out += S.RECORD_HEADER.pack(
                96 + len(payload), len(payload), ordinal, 0, h["device_id"], h["object_id"],
                h["related_object_id"], 96, h["record_type"], h["record_flags"],
                h["payload_type"], h["object_type"], h["operation_code"], h["status_code"], 0, 0)
            out += payload
        total = S.FILE_HEADER_SIZE + len(out)
        return S.FILE_HEADER.pack(S.MAGIC, 2, 0, 24, 0, total) + bytes(out)


def _same_status(tmp_path, name, data, devices, *flags, expected=None, **options):
    path = tmp_path / f"{name}.ireereplay"
    path.write_bytes(data)
    iree = iree_status(iree_run_replay(path, "--device=local-sync", *flags))
    ours = replay(path, [devices["local-sync"]], **options)
    assert ours == iree, f"{name}: ours {ours}, iree-run-replay {iree}"
    if expected is not None:
        assert iree == expected, name
    return path


def _metadata_offset(payload: bytearray) -> int:
    f = S.PAYLOADS[S.PayloadType.EXECUTABLE_PREPARE].unpack(payload)
    return (40 + f["executable_format_length"] + f["executable_data_length"]
            + 4 * f["constant_count"])


def test_error_cases_match_iree(all_captures, devices, tmp_path):
    source = all_captures[0]["matmul", "local-task"].path
    Op = S.Op

    e = Edit(source)  # an executable id no header mentions: beyond the table
    struct.pack_into("<Q", e.records[e.find(Op.COMMAND_BUFFER_DISPATCH)][1], 0, 777)
    _same_status(tmp_path, "undefined_payload_id", e.bytes(), devices, expected="NOT_FOUND")

    e = Edit(source)  # an id inside the table that holds nothing
    e.records[e.find(Op.COMMAND_BUFFER_BEGIN)][0]["object_id"] = 77
    _same_status(tmp_path, "undefined_header_id", e.bytes(), devices,
                 expected="FAILED_PRECONDITION")

    e = Edit(source)
    e.records[e.find(Op.DEVICE_QUERY_I64)][0]["operation_code"] = 999
    _same_status(tmp_path, "unknown_op", e.bytes(), devices, expected="UNIMPLEMENTED")

    for status, expected in ((0, "UNIMPLEMENTED"), (12, "OK")):
        e = Edit(source)
        header = e.records[e.find(Op.DEVICE_QUERY_I64)][0]
        header.update(record_type=S.RecordType.UNSUPPORTED,
                      operation_code=Op.DEVICE_QUEUE_HOST_CALL, status_code=status)
        _same_status(tmp_path, f"unsupported_{status}", e.bytes(), devices, expected=expected)

    e = Edit(source)
    e.records[e.find(Op.DEVICE_QUERY_I64)][0]["record_type"] = S.RecordType.BLOB
    _same_status(tmp_path, "blob", e.bytes(), devices, expected="UNIMPLEMENTED")

    e = Edit(source)  # a failed captured dispatch is skipped: the run still succeeds
    e.records[e.find(Op.COMMAND_BUFFER_DISPATCH)][0]["status_code"] = 9
    _same_status(tmp_path, "failed_dispatch", e.bytes(), devices, expected="OK")

    e = Edit(source)
    prepare = e.records[e.find(Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE)][1]
    prepare[40:40 + 19] = b"embedded-elf-arm_64"
    _same_status(tmp_path, "other_backend", e.bytes(), devices, expected="NOT_FOUND")

    e = Edit(source)
    record = e.records[e.find(Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE)]
    del record[1][_metadata_offset(record[1]):]
    struct.pack_into("<I", record[1], 32, 0)
    _same_status(tmp_path, "no_metadata", e.bytes(), devices, expected="DATA_LOSS")

    e = Edit(source)
    payload = e.records[e.find(Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE)][1]
    payload[-1] ^= 0x20  # the last name's last letter changes case
    _same_status(tmp_path, "renamed_function", e.bytes(), devices, expected="NOT_FOUND")

    e = Edit(source)
    payload = e.records[e.find(Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE)][1]
    at = _metadata_offset(payload) + 32 + 22  # function 0's binding_count
    struct.pack_into("<H", payload, at, struct.unpack_from("<H", payload, at)[0] + 1)
    _same_status(tmp_path, "abi_mismatch", e.bytes(), devices,
                 expected="FAILED_PRECONDITION")

    e = Edit(source)  # a session-only file: no devices captured
    e.records = e.records[:1]
    _same_status(tmp_path, "session_only", e.bytes(), devices,
                 expected="FAILED_PRECONDITION")

    e = Edit(source)  # two captured devices, one given
    first = e.find(None, S.RecordType.OBJECT)
    e.insert(first + 1, object_id=500, record_type=S.RecordType.OBJECT,
             object_type=S.ObjectType.DEVICE)
    _same_status(tmp_path, "more_devices", e.bytes(), devices, expected="OUT_OF_RANGE")


def _with_file_read(source, reference_type: int, reference: bytes, *, file_length: int,
                    identity=(0, 0, 0), validation=0, digest=0, captured=b"") -> bytes:
    """The capture with an imported file (id 900) read into the first uploaded input."""
    P, Op = S.PayloadType, S.Op
    e = Edit(source)
    unmap = e.find(Op.BUFFER_UNMAP_RANGE)
    header, data = e.records[unmap]
    target = header["object_id"]
    length = S.PAYLOADS[P.BUFFER_RANGE_DATA].unpack(data)["byte_length"]
    file_object = S.PAYLOADS[P.FILE_OBJECT].pack(
        queue_affinity=S.U64_MAX, file_length=file_length, file_device=identity[0],
        file_inode=identity[1], file_mtime_ns=identity[2], reference_length=len(reference),
        access=1, handle_type=1, reference_type=reference_type, validation_type=validation,
        digest_type=1 if validation == 2 else 0,
        digest=struct.pack("<Q", digest) + bytes(24)) + reference
    read = S.PAYLOADS[P.DEVICE_QUEUE_READ].pack(
        source_file_id=900, source_offset=0,
        target_ref=dict(buffer_id=target, offset=0, length=length), queue_affinity=S.U64_MAX,
        captured_data_length=len(captured)) + captured
    e.insert(unmap + 1, read, device_id=1, object_id=1, related_object_id=target,
             payload_type=P.DEVICE_QUEUE_READ, object_type=S.ObjectType.DEVICE,
             operation_code=Op.DEVICE_QUEUE_READ)
    e.insert(unmap + 1, file_object, device_id=1, object_id=1, related_object_id=900,
             payload_type=P.FILE_OBJECT, object_type=S.ObjectType.DEVICE,
             operation_code=Op.DEVICE_IMPORT_FILE)
    return e.bytes()


def test_imported_files_match_iree(all_captures, devices, tmp_path):
    source = all_captures[0]["matmul", "local-task"].path
    content = np.arange(6, dtype=np.float32).tobytes()  # the 2x3 input's 24 bytes
    param = tmp_path / "params" / "weights.bin"
    param.parent.mkdir()
    param.write_bytes(content)
    st = os.stat(param)
    identity = (st.st_dev, st.st_ino, st.st_mtime_ns)
    external = S.FileReference.EXTERNAL_PATH
    path = str(param).encode()

    _same_status(tmp_path, "external_ok", _with_file_read(
        source, external, path, file_length=24, identity=identity, validation=1), devices,
        expected="OK")
    _same_status(tmp_path, "external_missing", _with_file_read(
        source, external, b"/nonexistent/weights.bin", file_length=24, validation=1), devices,
        expected="NOT_FOUND")
    _same_status(tmp_path, "external_length", _with_file_read(
        source, external, path, file_length=25, validation=0), devices,
        expected="FAILED_PRECONDITION")

    moved = tmp_path / "moved"
    moved.mkdir()
    shutil.copy2(param, moved / "weights.bin")  # a copy: same bytes and mtime, new inode
    remap = f"{param.parent}={moved}"
    data = _with_file_read(source, external, path, file_length=24, identity=identity,
                           validation=1)
    _same_status(tmp_path, "remap_identity", data, devices, f"--replay_file_remap={remap}",
                 file_remaps=X.parse_file_remaps([remap]), expected="FAILED_PRECONDITION")
    digest = S.fnv1a_64(content)
    data = _with_file_read(source, external, path, file_length=24, identity=identity,
                           validation=2, digest=digest)
    # The longest prefix wins: the shorter one points nowhere.
    remaps = [f"{tmp_path}=/nonexistent", remap]
    _same_status(tmp_path, "remap_digest", data, devices,
                 *[f"--replay_file_remap={r}" for r in remaps],
                 file_remaps=X.parse_file_remaps(remaps), expected="OK")
    data = _with_file_read(source, external, path, file_length=24, identity=identity,
                           validation=2, digest=digest ^ 1)
    _same_status(tmp_path, "digest_mismatch", data, devices, expected="FAILED_PRECONDITION")

    os.utime(param, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    _same_status(tmp_path, "identity_mtime", _with_file_read(
        source, external, path, file_length=24, identity=identity, validation=1), devices,
        expected="FAILED_PRECONDITION")

    _same_status(tmp_path, "inline", _with_file_read(
        source, S.FileReference.INLINE_BYTES, content, file_length=24), devices, expected="OK")
    _same_status(tmp_path, "captured_ranges", _with_file_read(
        source, S.FileReference.CAPTURED_RANGES, path, file_length=24, captured=content),
        devices, expected="OK")
    _same_status(tmp_path, "captured_ranges_no_data", _with_file_read(
        source, S.FileReference.CAPTURED_RANGES, path, file_length=24), devices,
        expected="FAILED_PRECONDITION")


def test_file_read_lands_in_the_buffer(all_captures, devices):
    """An inline file read over the 2x3 input replays into the same result iree-run-module
    printed for [[0 1 2][3 4 5]] x B."""
    capture = all_captures[0]["matmul", "local-task"]
    content = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32).tobytes()
    plan = X.plan(_with_file_read(capture.path, S.FileReference.INLINE_BYTES, content,
                                  file_length=24))
    target = plan.copy_targets[-1]
    seen = {}
    X.execute(plan, [devices["local-sync"]], on_complete=lambda t: seen.setdefault(
        "v", np.frombuffer(t.get(target.buffer_id).read(target.offset, target.length),
                           np.float32)))
    np.testing.assert_allclose(seen["v"], _printed_values(capture.stdout))


def test_flag_parsing():
    with pytest.raises(AmdgpuCliError, match="captured_prefix=replay_prefix"):
        X.parse_file_remaps(["nothing"])
    for values, message in ((["x"], "values must be"), (["0=/p"], "non-zero integer"),
                            (["all=/p", "3=/p"], "cannot be combined"),
                            (["@fmt=/p"], "selector must be")):
        with pytest.raises(AmdgpuCliError, match=message):
            X.parse_substitutions(values)


def test_substitution(all_captures, devices, tmp_path):
    capture = all_captures[0]["matmul", "local-task"]
    e = Edit(capture.path)
    index = e.find(S.Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE)
    executable_id = e.records[index][0]["related_object_id"]
    payload = e.records[index][1]
    f = S.PAYLOADS[S.PayloadType.EXECUTABLE_PREPARE].unpack(payload)
    start = 40 + f["executable_format_length"]
    elf = tmp_path / "exe.so"
    elf.write_bytes(payload[start:start + f["executable_data_length"]])
    for flag in (f"{executable_id}={elf}", f"all@embedded-elf-x86_64={elf}"):
        _same_status(tmp_path, "substitution", capture.path.read_bytes(), devices,
                     f"--replay_executable_substitution={flag}",
                     substitutions=X.parse_substitutions([flag]), expected="OK")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x7fELF" + bytes(60))
    flag = f"{executable_id}@embedded-elf-x86_64={junk}"
    ours = replay(capture.path, [devices["local-sync"]],
                  substitutions=X.parse_substitutions([flag]))
    assert ours != "OK"
    assert iree_status(iree_run_replay(capture.path, "--device=local-sync",
                                       f"--replay_executable_substitution={flag}")) != "OK"


# -- amdgpu on softhsa ------------------------------------------------------------------------

def test_transfer_replay_on_amdgpu_softhsa(all_captures, softhsa_lib, softhsa_env, tmp_path):
    """The queue work of a real capture (uploads, alloca, command buffers with barriers, the
    readback copy, semaphores) replays on amdgpu over softhsa. Its executables are stripped:
    iree-run-module cannot capture on amdgpu here, and an llvm-cpu capture's executables are
    x86 code (a gfx942 capture of our own awaits the capture side)."""
    e = Edit(all_captures[0]["matmul", "local-task"].path)
    dropped = {S.Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE, S.Op.COMMAND_BUFFER_DISPATCH,
               S.Op.EXECUTABLE_LOOKUP_FUNCTION_BY_NAME}
    e.records = [r for r in e.records if not (r[0]["record_type"] == S.RecordType.OPERATION
                                              and r[0]["operation_code"] in dropped)]
    path = tmp_path / "transfers.ireereplay"
    path.write_bytes(e.bytes())
    assert iree_run_replay(path, "--device=local-sync").returncode == 0
    done = subprocess.run(["amdgpu-replay", "run", "--device=amdgpu",
                           f"--amdgpu_libhsa_search_path={softhsa_lib}", str(path)],
                          capture_output=True, text=True, env=softhsa_env(), timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")

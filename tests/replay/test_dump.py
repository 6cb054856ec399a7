"""`amdgpu-replay dump` against IREE 3.13.0's iree-dump-replay, the independent truth.

- Every corpus model, captured by IREE itself on local-task and local-sync: text and JSONL
  output equal byte for byte.
- Hand-made files (one record of every payload type; the edge cases of ireereplay.md §6; wrong
  payload sizes for every payload type): exit status and stdout equal, and our stderr is one
  line with IREE's status and message (IREE's `file.c:123: ` prefix set aside).
- ~2000 random mutations of real captures: each is a clean dump or a one-line error with exit
  1 (never a traceback or a hang); a few hundred are also compared with IREE.

Ours runs in-process (amdgpu_cli.cli.main.replay_main) for speed; IREE's tool as a subprocess.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_util import load_corpus

from amdgpu_cli.cli.main import replay_main
from amdgpu_cli.replay import schema
from amdgpu_cli.replay.reader import ReplayFile, ReplayFormatError, decode_metadata, \
    decode_payload
from amdgpu_cli.replay.schema import PayloadType as P, RecordType as R

sys.path.insert(0, str(Path(__file__).parent))
import replay_samples as samples  # noqa: E402



def _iree_dump_binary() -> str | None:
    """The native iree-dump-replay the wheel's console script runs (calling it directly saves
    the ~40 ms Python start-up of the wrapper per call); the PATH tool otherwise."""
    try:
        import iree._runtime_libs as libs

        native = Path(libs.__file__).parent / "iree-dump-replay"
        if native.is_file():
            return str(native)
    except ImportError:
        pass
    return shutil.which("iree-dump-replay")


IREE_DUMP = _iree_dump_binary()
needs_iree = pytest.mark.skipif(IREE_DUMP is None, reason="iree-dump-replay not on PATH")
STEMS = sorted({case.stem for case in load_corpus()})
DEVICES = ("local-task", "local-sync")
_IREE_PREFIX = re.compile(r"^\S+:\d+: ")


def ours(args, command=("dump",)) -> tuple[int, bytes, str]:
    """Runs `amdgpu-replay dump ARGS` in-process: (exit status, stdout bytes, stderr text)."""
    out = io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    stderr = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            replay_main([*command, *map(str, args)])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    stdout.flush()
    data = out.getvalue()
    stdout.detach()
    return code, data, stderr.getvalue()


def iree(args) -> tuple[int, bytes, str]:
    done = subprocess.run([IREE_DUMP, *map(str, args)], capture_output=True, timeout=60)
    return done.returncode, done.stdout, done.stderr.decode("utf-8", "replace")


def iree_message(stderr: str) -> str:
    """IREE's `STATUS; message` (its first line, the source location set aside)."""
    return _IREE_PREFIX.sub("", stderr.strip().splitlines()[0]) if stderr.strip() else ""


def our_message(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) <= 1, f"more than one stderr line: {stderr!r}"
    if not lines:
        return ""
    assert lines[0].startswith("error: "), lines[0]
    assert "internal error" not in lines[0] and "Traceback" not in stderr, stderr
    return lines[0][len("error: "):]


def assert_same(path, *extra, messages: bool = True) -> tuple[int, bytes]:
    """Both tools on `path` (text and jsonl): same status, stdout, and error line."""
    for fmt in ("text", "jsonl"):
        args = [f"--format={fmt}", *extra, path]
        want = iree(args)
        got = ours(args)
        assert got[0] == want[0], (fmt, got[2], want[2])
        assert got[1] == want[1], fmt
        if messages:
            assert our_message(got[2]) == iree_message(want[2]), fmt
        else:
            our_message(got[2])
    return want[0], want[1]


# -- IREE's own captures of the corpus ----------------------------------------------------------
@needs_iree
@pytest.mark.parametrize("stem", STEMS)
def test_corpus_captures_match_iree(stem, iree_captures):
    for device in DEVICES:
        capture = iree_captures(stem, device)
        code, out = assert_same(capture.path)
        assert code == 0 and out.startswith(b'{"kind":"file"')


# -- hand-made files -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("replay_dump")


def _write(workdir, name: str, data: bytes) -> Path:
    path = workdir / f"{name}.ireereplay"
    path.write_bytes(data)
    return path


@needs_iree
def test_every_payload_type_matches_iree(workdir):
    path = _write(workdir, "every_payload", samples.every_payload_file())
    code, out = assert_same(path)
    assert code == 0
    text = ours([path])[1]
    assert b"strict_replay_supported: no" in text and b"status= object=unknown(77)" in text


def _records(data: bytes):
    return list(ReplayFile.from_bytes(data).records())


def _put(data: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def _edge_cases() -> dict[str, bytes]:
    base = samples.every_payload_file()
    recs = _records(base)
    r5 = recs[5].file_offset
    header_ext = (schema.FILE_HEADER.pack(schema.MAGIC, 2, 0, 32, 0, len(base) + 8)
                  + bytes(8) + base[24:])
    open_file = _put(base, 16, "<Q", 0)
    entries = samples.prologue()
    wide = samples.record_bytes(3, R.OPERATION, device_id=1, object_id=1, object_type=1,
                                operation_code=50, payload_type=P.REPLAY_SCOPE,
                                payload=samples.scope(b"wide"))
    wide = (_put(wide, 0, "<Q", len(wide) + 8)[:56] + struct.pack("<I", 104) + wide[60:96]
            + b"\xee" * 8 + wide[96:])
    cases = {
        "base": base,
        "truncated_after_close": base[:-10],
        "open_cut_mid_record": open_file[:r5 + 50],
        "open_cut_in_record_header": open_file[:r5 + 40 - 30],
        "open_cut_at_boundary": open_file[:r5],
        "open_complete": open_file,
        "trailing_bytes": base + b"\x00garbage" * 8,
        "bad_magic": b"XRRP" + base[4:],
        "major_3": _put(base, 4, "<H", 3),
        "minor_9": _put(base, 6, "<H", 9),
        "header_flags": _put(base, 12, "<I", 1),
        "header_length_32": header_ext,
        "header_length_20": _put(base, 8, "<I", 20),
        "header_length_past_end": _put(base, 8, "<I", len(base) + 1),
        "file_length_before_records": _put(base, 16, "<Q", 10),
        "too_small": base[:20],
        "header_only": _put(base[:24], 16, "<Q", 24),
        "header_only_open": open_file[:24],
        "record_header_104": samples.build(entries + [dict(record_type=R.OPERATION,
                                                           raw=wide)]),
        "sequence_gap": _put(base, recs[3].file_offset + 16, "<Q", 4),
        "sequence_restart": _put(base, recs[3].file_offset + 16, "<Q", 0),
        "record_flag_bit1": _put(base, recs[2].file_offset + 62, "<H", 2),
        "record_flag_optional": _put(base, recs[2].file_offset + 62, "<H", 1),
        "unknown_type_required": _put(base, recs[2].file_offset + 60, "<H", 9),
        "unknown_type_optional": _put(_put(base, recs[2].file_offset + 60, "<H", 9),
                                      recs[2].file_offset + 62, "<H", 1),
        "type_none_required": _put(base, recs[2].file_offset + 60, "<H", 0),
        "type_none_optional": _put(_put(base, recs[2].file_offset + 60, "<H", 0),
                                   recs[2].file_offset + 62, "<H", 1),
        "reserved0": _put(base, recs[4].file_offset + 80, "<I", 1),
        "reserved1": _put(base, recs[4].file_offset + 88, "<Q", 1),
        "pad_garbage": _put(base, recs[4].file_offset + 84, "<I", 0xDEADBEEF),
        "record_length_past_end": _put(base, recs[4].file_offset, "<Q", len(base)),
        "record_length_huge": _put(base, recs[4].file_offset, "<Q", schema.U64_MAX),
        "record_header_length_95": _put(base, recs[4].file_offset + 56, "<I", 95),
        "record_header_length_past_record": _put(base, recs[4].file_offset + 56, "<I", 4000),
        "payload_length_mismatch": _put(base, recs[4].file_offset + 8, "<Q", 1),
        "unknown_op_999": _put(base, recs[4].file_offset + 72, "<I", 999),
        "op_zero": _put(base, recs[4].file_offset + 72, "<I", 0),
        "status_unknown": _put(base, recs[4].file_offset + 76, "<I", 1000),
        "payload_type_99": _put(base, recs[4].file_offset + 64, "<I", 99),
        "payload_type_0_with_bytes": _put(base, recs[4].file_offset + 64, "<I", 0),
    }
    return cases


def _payload_cases() -> dict[str, bytes]:
    """Every payload type with a payload one byte longer, one shorter, and cut to its fixed
    size minus one; plus overflows and field-level checks (reserved, counts, metadata)."""
    cases = {}
    entries = samples.prologue()

    def file_with(payload_type: int, data: bytes, op: int = 2, record_type=R.OPERATION):
        return samples.build(entries + [
            dict(record_type=R.OPERATION, device_id=1, object_id=1, object_type=1,
                 operation_code=9),
            dict(record_type=record_type, device_id=1, object_id=1, object_type=1,
                 operation_code=op, payload_type=payload_type, payload=data)])

    for record_type, op, payload_type, data in samples.every_payload():
        name = schema.PAYLOAD_NAMES[payload_type]
        fixed = schema.PAYLOADS[payload_type].size
        cases[f"{name}_plus_one"] = file_with(payload_type, data + b"\x00", op, record_type)
        cases[f"{name}_minus_one"] = file_with(payload_type, data[:-1], op, record_type)
        cases[f"{name}_short"] = file_with(payload_type, data[:fixed - 1], op, record_type)
        cases[f"{name}_empty"] = file_with(payload_type, b"", op, record_type)
    by_type = {pt: (rt, op, data) for rt, op, pt, data in samples.every_payload()}
    dispatch = by_type[P.DISPATCH][2]
    cases["dispatch_as_queue_execute"] = file_with(P.DEVICE_QUEUE_EXECUTE, dispatch, 21)
    for label, count in (("count_overflow", 1 << 60), ("length_overflow", (1 << 60) - 1),
                         ("count_max", schema.U64_MAX)):
        for payload_type, offset in ((P.DISPATCH, 88), (P.DEVICE_QUEUE_EXECUTE, 24),
                                     (P.DEVICE_QUEUE_ALLOCA, 56), (P.DEVICE_QUEUE_FILL, 48),
                                     (P.COMMAND_BUFFER_EXECUTION_BARRIER, 24),
                                     (P.COMMAND_BUFFER_WAIT_EVENTS, 16)):
            data = _put(by_type[payload_type][2], offset, "<Q", count)
            cases[f"{schema.PAYLOAD_NAMES[payload_type]}_{label}"] = file_with(
                payload_type, data, by_type[payload_type][1])
    dispatch_bindings = _put(dispatch, 112, "<Q", (1 << 59) - 1)
    cases["dispatch_bindings_overflow"] = file_with(P.DISPATCH, dispatch_bindings, 21)
    cases["dispatch_constants_overflow"] = file_with(
        P.DISPATCH, _put(dispatch, 104, "<Q", schema.U64_MAX - 100), 21)
    prepare = by_type[P.EXECUTABLE_PREPARE][2]
    cases["prepare_constant_overflow"] = file_with(
        P.EXECUTABLE_PREPARE, _put(prepare, 16, "<Q", 1 << 62), 402)
    cases["prepare_data_wrap"] = file_with(
        P.EXECUTABLE_PREPARE, _put(prepare, 8, "<Q", schema.U64_MAX - 10), 402)
    cases["prepare_no_metadata"] = file_with(P.EXECUTABLE_PREPARE, samples._prepare(b""), 402)
    cases["prepare_metadata_short"] = file_with(
        P.EXECUTABLE_PREPARE, samples._prepare(b"\x00" * 31), 402)
    meta = samples.metadata([b"f0"])
    cases["prepare_metadata_reserved"] = file_with(
        P.EXECUTABLE_PREPARE, samples._prepare(_put(meta, 24, "<Q", 1)), 402)
    cases["prepare_metadata_mismatch"] = file_with(
        P.EXECUTABLE_PREPARE, samples._prepare(meta + b"x"), 402)
    cases["prepare_metadata_function_overflow"] = file_with(
        P.EXECUTABLE_PREPARE, samples._prepare(_put(meta, 0, "<Q", 1 << 59)), 402)
    scope = samples.scope(b"init")
    cases["scope_name_zero"] = file_with(P.REPLAY_SCOPE, samples.scope(b""), 50)
    cases["scope_flags"] = file_with(P.REPLAY_SCOPE, _put(scope, 8, "<I", 1), 50)
    cases["scope_reserved1"] = file_with(P.REPLAY_SCOPE, _put(scope, 16, "<Q", 1), 50)
    cases["scope_name_length_huge"] = file_with(
        P.REPLAY_SCOPE, _put(scope, 0, "<Q", schema.U64_MAX), 50)
    cases["import_data_past_record"] = file_with(
        P.ALLOCATOR_IMPORT_BUFFER, _put(by_type[P.ALLOCATOR_IMPORT_BUFFER][2], 48, "<Q", 17),
        103)
    cases["file_object_in_operation"] = file_with(P.FILE_OBJECT, b"\x00" * 10, 10)
    cases["queue_read_short_in_object"] = file_with(
        P.DEVICE_QUEUE_READ, b"\x00" * 10, 0, R.OBJECT)
    cases["fill_pattern_wrap"] = file_with(
        P.COMMAND_BUFFER_FILL_BUFFER,
        _put(by_type[P.COMMAND_BUFFER_FILL_BUFFER][2], 40, "<Q", schema.U64_MAX - 46), 309)
    return cases


EDGE_CASES = _edge_cases()
PAYLOAD_CASES = _payload_cases()


@needs_iree
@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_case_matches_iree(name, workdir):
    assert_same(_write(workdir, name, EDGE_CASES[name]))


@needs_iree
def test_payload_checks_match_iree(workdir):
    failures = []
    for name, data in sorted(PAYLOAD_CASES.items()):
        try:
            assert_same(_write(workdir, name, data))
        except AssertionError as e:
            failures.append(f"{name}: {e}")
    assert not failures, "\n".join(failures)


@needs_iree
def test_files_and_flags_match_iree(workdir, tmp_path):
    good = _write(workdir, "flags_good", samples.every_payload_file())
    empty = tmp_path / "empty.ireereplay"
    empty.write_bytes(b"")
    for args in (["--format=xml", good], ["--format=", good], [tmp_path / "missing"],
                 [tmp_path], [empty]):
        want, got = iree(args), ours(args)
        assert got[0] == want[0] == 1, (args, got[2])
        assert got[1] == want[1] == b""
        assert our_message(got[2]).split(";")[0] != "", got[2]
    # status and message equal where IREE's come from the dumper rather than its file layer
    for args in (["--format=xml", good], [tmp_path / "missing"]):
        assert our_message(ours(args)[2]) == iree_message(iree(args)[2])
    # `--format jsonl` (space-separated) works, unlike IREE's flag parser
    assert ours(["--format", "jsonl", good])[1] == iree(["--format=jsonl", good])[1]
    # wrong argument count: a usage error (exit 2), as in our other commands
    assert ours([])[0] == 2
    assert ours([good, good])[0] == 2


# -- the reader API ------------------------------------------------------------------------------
def test_reader_api_decodes_every_payload():
    data = samples.every_payload_file()
    replay = ReplayFile.from_bytes(data)
    assert (replay.version_major, replay.header_length, replay.end) == (2, 24, len(data))
    seen = {}
    for record in replay.records():
        assert record.payload_offset == record.file_offset + record.header_length
        if record.payload_type in schema.PAYLOADS:
            seen[record.payload_type] = decode_payload(record.payload_type,
                                                       replay.payload(record))
    assert set(seen) == set(schema.PAYLOADS)
    execute = seen[P.DEVICE_QUEUE_EXECUTE]
    assert execute["wait_semaphores"] == [{"semaphore_id": 8, "value": 1},
                                          {"semaphore_id": 9, "value": 3}]
    assert execute["bindings"][1]["offset"] == 64 and execute["bindings_offset"] == 48 + 48
    dispatch = seen[P.DISPATCH]
    assert bytes(dispatch["constants"]) == b"\x01" * 10 and dispatch["constants_offset"] == 168
    prepare = seen[P.EXECUTABLE_PREPARE]
    assert prepare["constants"] == [3, 4] and bytes(prepare["format"]) == b"embedded-elf-x86_64"
    functions = decode_metadata(prepare["metadata"])
    assert [f["name"] for f in functions] == ["main_dispatch_0", "f1"]
    assert functions[0]["parameters"] == [{"offset": 0, "flags": 0, "type": 1, "size": 8,
                                           "reserved0": 0}]
    assert seen[P.COMMAND_BUFFER_WAIT_EVENTS]["events"] == [12, 13]
    assert bytes(seen[P.REPLAY_SCOPE]["name"]).endswith(b" name")
    with pytest.raises(ReplayFormatError) as e:
        decode_payload(P.DISPATCH, memoryview(b"\x00" * 119))
    assert (e.value.status, str(e.value)) == ("DATA_LOSS", "replay dispatch payload is short")
    with pytest.raises(ReplayFormatError) as e:
        decode_metadata(memoryview(samples.metadata([b"f0"])[:-1]))
    assert str(e.value) == "replay executable metadata length mismatch"
    replay.close()


def test_open_errors_are_one_line(tmp_path):
    from amdgpu_cli.errors import AmdgpuCliError

    for path in (tmp_path / "missing", tmp_path):
        with pytest.raises(AmdgpuCliError) as e:
            ReplayFile.open(path)
        assert "\n" not in e.value.one_line()
    path = tmp_path / "ok.ireereplay"
    path.write_bytes(samples.every_payload_file())
    with ReplayFile.open(path) as replay:
        assert len(list(replay.records())) > 30


# -- mutations -----------------------------------------------------------------------------------
MUTATIONS = 2000
COMPARED = MUTATIONS  # the native tool takes ~2 ms a call: compare every one


def _mutate(rng: random.Random, data: bytes, offsets: list[int]) -> bytes:
    kind = rng.randrange(7)
    out = bytearray(data)
    if kind == 0:  # truncation, with or without an open header
        out = out[:rng.randrange(len(out))]
        if rng.random() < 0.5 and len(out) >= 24:
            struct.pack_into("<Q", out, 16, 0)
        return bytes(out)
    if kind == 1:  # bit flips anywhere
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        return bytes(out)
    record = rng.choice(offsets)
    if kind == 2:  # a record header field: length, payload length, ordinal, ids, header length
        field = rng.choice((0, 8, 16, 24, 32, 40, 48))
        value = rng.choice((0, 1, 95, 96, 97, rng.randrange(1 << 16), schema.U64_MAX,
                            struct.unpack_from("<Q", out, record + field)[0] + rng.choice((-1, 1))))
        struct.pack_into("<Q", out, record + field, value & schema.U64_MAX)
        return bytes(out)
    if kind == 3:  # the small header fields: header length, type, flags, payload/object/op/status
        field, fmt = rng.choice(((56, "<I"), (60, "<H"), (62, "<H"), (64, "<I"), (68, "<I"),
                                 (72, "<I"), (76, "<I"), (80, "<I")))
        limit = 1 << (8 * struct.calcsize(fmt))
        struct.pack_into(fmt, out, record + field, rng.choice((0, 1, 2, 5, 27, 28, 99,
                                                               rng.randrange(limit))))
        return bytes(out)
    if kind in (4, 5):  # a payload count or length (8-byte words after the record header)
        length = struct.unpack_from("<Q", out, record + 8)[0]
        if length < 8:
            return bytes(out)
        offset = record + 96 + 8 * rng.randrange(min(length, 128) // 8)
        value = rng.choice((0, 1, 2, 1 << 59, 1 << 60, (1 << 60) - 1, schema.U64_MAX,
                            schema.U64_MAX - 100, rng.randrange(1 << 64),
                            struct.unpack_from("<Q", out, offset)[0] + rng.choice((-1, 1))))
        struct.pack_into("<Q", out, offset, value & schema.U64_MAX)
        return bytes(out)
    # kind 6: the file header
    field, fmt = rng.choice(((0, "<I"), (4, "<H"), (6, "<H"), (8, "<I"), (12, "<I"), (16, "<Q")))
    limit = 1 << (8 * struct.calcsize(fmt))
    value = rng.choice((0, 1, 2, 24, 32, len(data), len(data) - 1, rng.randrange(limit)))
    struct.pack_into(fmt, out, field, value % limit)
    return bytes(out)


@needs_iree
def test_mutations_fail_cleanly(iree_captures, workdir):
    sources = [iree_captures(stem, device).path.read_bytes()
               for stem, device in (("broadcast", "local-sync"), ("dynamic_shapes", "local-task"))
               if stem in STEMS]
    sources.append(samples.every_payload_file())
    offsets = [[r.file_offset for r in _records(data)] for data in sources]
    rng = random.Random(20260821)
    compared = 0
    path = workdir / "mutant.ireereplay"
    for i in range(MUTATIONS):
        data = sources[i % len(sources)]
        mutant = _mutate(rng, data, offsets[i % len(sources)])
        path.write_bytes(mutant)
        fmt = "--format=jsonl" if i % 2 else "--format=text"
        code, out, err = ours([fmt, path])
        assert code in (0, 1), (i, code, err)
        message = our_message(err)
        assert (code == 0) == (message == ""), (i, err)
        if i % max(1, MUTATIONS // COMPARED) == 0 and compared < COMPARED:
            compared += 1
            want = iree([fmt, path])
            assert (code, out, message) == (want[0], want[1], iree_message(want[2])), i
    assert compared >= COMPARED * 0.9

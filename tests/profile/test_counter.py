"""`counter` against IREE 3.13.0's iree-profile.

Local drivers record no counters, so most bundles here are synthetic AMDGPU-style ones written with
the schema dtypes: counter sets on two devices, per-shader-engine counter slices, dispatch- and
command-operation-scoped samples, unattributed device-time-range samples, invalid tick ranges, a
truncated samples chunk, a nameless function, huge values. Every JSONL row must equal
iree-profile's; broken bundles must fail with iree-profile's exit status and the same rows first.
"""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest

from amdgpu_cli.cli.main import profile_main
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.jsonl import dumps
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports import counter as counter_report

MAX = schema.U32_MAX
F = schema.Flags
DISPATCH = F.SAMPLE_DISPATCH_EVENT | F.SAMPLE_DEVICE_TICK_RANGE
OPERATION = DISPATCH | F.SAMPLE_COMMAND_OPERATION


# --- a small bundle writer (schema dtypes, raw bytes) ---------------------------------------------

def typed(dtype: np.dtype, tail: bytes = b"", **fields) -> bytes:
    rec = np.zeros(1, dtype)
    rec["record_length"] = dtype.itemsize + len(tail)
    for name, v in fields.items():
        rec[name] = v
    return rec.tobytes() + tail


def counter_set(set_id, pdo, counters, values, name, **extra) -> bytes:
    n = name.encode()
    return typed(schema.COUNTER_SET, n, counter_set_id=set_id, physical_device_ordinal=pdo,
                 counter_count=counters, sample_value_count=values, name_length=len(n), **extra)


def counter(set_id, ordinal, pdo, offset, count, block, name, description="", unit=1,
            flags=F.COUNTER_RAW, **extra) -> bytes:
    b, n, d = block.encode(), name.encode(), description.encode()
    return typed(schema.COUNTER, b + n + d, counter_set_id=set_id, counter_ordinal=ordinal,
                 physical_device_ordinal=pdo, sample_value_offset=offset,
                 sample_value_count=count, block_name_length=len(b), name_length=len(n),
                 description_length=len(d), unit=unit, flags=flags, **extra)


def sample(sample_id, set_id, values, *, pdo=0, queue=0, stream=0, scope=1, flags=DISPATCH,
           executable=1, function=0, event=0, submission=0, command_buffer=0, command_index=MAX,
           start=0, end=0, **extra) -> bytes:
    raw = np.asarray(values, np.uint64).tobytes()
    return typed(schema.COUNTER_SAMPLE, raw, sample_id=sample_id, counter_set_id=set_id,
                 physical_device_ordinal=pdo, queue_ordinal=queue, stream_id=stream, scope=scope,
                 flags=flags, executable_id=executable, function_ordinal=function,
                 dispatch_event_id=event, submission_id=submission,
                 command_buffer_id=command_buffer, command_index=command_index, start_tick=start,
                 end_tick=end, sample_value_count=len(values), **extra)


def function(executable_id, ordinal, name) -> bytes:
    n = name.encode()
    return typed(schema.FUNCTION, n, executable_id=executable_id, function_ordinal=ordinal,
                 name_length=len(n), workgroup_size=(64, 1, 1))


class Writer:
    def __init__(self) -> None:
        self.records: list[bytes] = []

    def record(self, record_type, content_type: str, payload: bytes = b"", *, name="amdgpu",
               pdo=MAX, queue=MAX, stream=0, chunk_flags=0, dropped=0, status=0) -> "Writer":
        ct, nm = content_type.encode(), name.encode()
        h = np.zeros(1, schema.RECORD_HEADER)
        h["header_length"] = schema.RECORD_HEADER.itemsize
        h["record_length"] = schema.RECORD_HEADER.itemsize + len(ct) + len(nm) + len(payload)
        h["payload_length"] = len(payload)
        h["content_type_length"], h["name_length"] = len(ct), len(nm)
        h["session_id"], h["stream_id"], h["record_type"] = 1, stream, record_type
        h["physical_device_ordinal"], h["queue_ordinal"] = pdo, queue
        h["chunk_flags"], h["dropped_record_count"] = chunk_flags, dropped
        h["session_status_code"] = status
        self.records.append(h.tobytes() + ct + nm + payload)
        return self

    def chunk(self, suffix: str, *payloads: bytes, **kw) -> "Writer":
        return self.record(schema.RecordType.CHUNK, schema.CONTENT_TYPE_PREFIX + suffix,
                           b"".join(payloads), **kw)

    def session(self, begin: bool) -> "Writer":
        kind = schema.RecordType.SESSION_BEGIN if begin else schema.RecordType.SESSION_END
        return self.record(kind, schema.CONTENT_TYPE_PREFIX + "session")

    def write(self, path) -> str:
        body = b"".join(self.records)
        h = np.zeros(1, schema.FILE_HEADER)
        h["magic"], h["version_major"], h["version_minor"] = schema.MAGIC, 1, 6
        h["header_length"] = schema.FILE_HEADER.itemsize
        h["file_length"] = schema.FILE_HEADER.itemsize + len(body)
        with open(path, "wb") as f:
            f.write(h.tobytes() + body)
        return str(path)


def base_metadata(w: Writer) -> Writer:
    """Two devices, one queue each, two executables (one function without a name)."""
    w.session(True)
    w.chunk("devices", typed(schema.DEVICE, physical_device_ordinal=0, queue_count=1),
            typed(schema.DEVICE, physical_device_ordinal=1, queue_count=1))
    w.chunk("queues", typed(schema.QUEUE, physical_device_ordinal=0, queue_ordinal=0, stream_id=0),
            typed(schema.QUEUE, physical_device_ordinal=1, queue_ordinal=0, stream_id=1 << 32))
    w.chunk("executables", typed(schema.EXECUTABLE, executable_id=1, function_count=2),
            typed(schema.EXECUTABLE, executable_id=2, function_count=1))
    w.chunk("executable-functions", function(1, 0, "matmul_kernel"), function(1, 1, "reduce_sum"),
            function(2, 0, ""))
    w.chunk("command-buffers", typed(schema.COMMAND_BUFFER, command_buffer_id=7,
                                     physical_device_ordinal=0))
    return w


def counter_catalog(w: Writer) -> Writer:
    w.chunk("counter-sets",
            counter_set(1, 0, 3, 7, "amdgpu.pmc"),
            counter_set(2, 1, 2, 5, "amdgpu.pmc"),
            counter_set(3, 0, 1, 2, "amdgpu.range"),
            counter_set(1, 0, 9, 9, "duplicate-ignored"))
    w.chunk("counters",
            counter(1, 0, 0, 0, 4, "SQ", "SQ_WAVES", "Waves per shader engine."),
            counter(1, 1, 0, 4, 1, "GRBM", "GRBM_GUI_ACTIVE", "GPU busy \"cycles\".", unit=2),
            counter(1, 2, 0, 5, 2, "TCC", "TCC_HIT", "L2 hits\tper channel", unit=3, flags=0),
            counter(1, 0, 0, 0, 1, "DUP", "DUPLICATE_IGNORED"),
            counter(2, 0, 1, 0, 4, "SQ", "SQ_WAVES", "Waves per shader engine."),
            counter(2, 1, 1, 4, 1, "SQ", "SQ_INSTS_VALU", unit=0))
    w.chunk("counters", counter(3, 0, 0, 0, 2, "GRBM", "GRBM_COUNT", unit=9))
    return w


def rich_bundle(path) -> str:
    rng = np.random.default_rng(1234)
    w = counter_catalog(base_metadata(Writer()))
    dispatches, next_id = [], 1
    for k in range(60):  # dispatch-scoped samples on device 0, two functions, some in a cb
        func = k % 2
        in_cb = k % 3 == 0
        start = 1_000_000 + 1000 * k
        dispatches.append(sample(
            next_id, 1, rng.integers(0, 5000, 7), function=func, event=100 + k,
            submission=10 + k // 4, command_buffer=7 if in_cb else 0,
            command_index=k if in_cb else MAX, flags=OPERATION if in_cb else DISPATCH,
            scope=2 if in_cb else 1, start=start, end=start + int(rng.integers(1, 900))))
        next_id += 1
    w.chunk("counter-samples", *dispatches[:30], pdo=0, queue=0, stream=0)
    # A truncated chunk (dropped records) with the rest of device 0's samples.
    w.chunk("counter-samples", *dispatches[30:], pdo=0, queue=0, stream=0, chunk_flags=1,
            dropped=3)
    # Device 1: the nameless function (numeric key), stream id past 32 bits, huge values.
    big = [2**63 + 1, 2**64 - 1, 2**53 + 1, 12345, 9_007_199_254_740_993]
    dev1 = [sample(next_id + j, 2, big if j % 2 else rng.integers(0, 10**12, 5), pdo=1,
                   stream=1 << 32, executable=2, function=0, event=500 + j, submission=77,
                   start=5000 + j, end=6000 + j) for j in range(6)]
    next_id += 6
    # Invalid tick ranges: zero start, end before start, range flag absent.
    dev1 += [sample(next_id, 2, [1, 2, 3, 4, 5], pdo=1, stream=1 << 32, executable=2, start=0,
                    end=10),
             sample(next_id + 1, 2, [6, 7, 8, 9, 10], pdo=1, stream=1 << 32, executable=2,
                    start=50, end=40),
             sample(next_id + 2, 2, [0, 0, 0, 0, 0], pdo=1, stream=1 << 32, executable=2,
                    flags=F.SAMPLE_DISPATCH_EVENT, start=3, end=9)]
    next_id += 3
    w.chunk("counter-samples", *dev1, pdo=1, queue=0, stream=1 << 32)
    # Unattributed device-time-range samples (set 3); sample id 0 first to test first_sample_id.
    ranges = [sample(sid, 3, [10 * sid + 1, 7], scope=3, flags=F.SAMPLE_DEVICE_TICK_RANGE,
                     executable=0, function=MAX, start=2_000_000 + sid, end=2_000_500 + sid)
              for sid in (0, next_id, next_id + 1)]
    # One range sample with an executable but no function ordinal stays unattributed too.
    ranges.append(sample(next_id + 2, 3, [5, 5], scope=3, flags=F.SAMPLE_DEVICE_TICK_RANGE,
                         executable=1, function=MAX, start=1, end=2))
    # A scope value IREE has no name for.
    ranges.append(sample(next_id + 3, 3, [8, 9], scope=9, flags=0, executable=0, function=MAX))
    w.chunk("counter-samples", *ranges, pdo=0, queue=0, stream=0)
    w.chunk("counter-samples", pdo=0, queue=0, stream=0, chunk_flags=1, dropped=5)  # empty
    w.session(False)
    return w.write(path)


# --- running both tools ---------------------------------------------------------------------------

def ours(path, *args: str) -> tuple[int, str, str]:
    """Runs amdgpu-profile counter in-process; (exit status, stdout, stderr)."""
    import contextlib

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            profile_main(["counter", *args, str(path)])
        except SystemExit as e:
            code = e.code or 0
    return code, out.getvalue(), err.getvalue()


def theirs(iree_profile, path, *args: str):
    proc = iree_profile(["counter", *args, str(path)])
    return proc.returncode, proc.stdout, proc.stderr


def parse(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def assert_rows_equal(mine: list[dict], expected: list[dict]) -> None:
    assert len(mine) == len(expected), (len(mine), len(expected))
    for i, (a, b) in enumerate(zip(mine, expected)):
        assert list(a) == list(b), (i, list(a), list(b))
        for k in b:
            x, y = a[k], b[k]
            if isinstance(y, float) and not isinstance(y, bool):
                assert isinstance(x, float), (i, k, x, y)
                assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9), (i, k, x, y)
            else:
                assert x == y and type(x) is type(y), (i, k, x, y)


def compare(iree_profile, path, *args: str) -> list[dict]:
    code_t, out_t, err_t = theirs(iree_profile, path, "--format=jsonl", *args)
    code_o, out_o, err_o = ours(path, "--format=jsonl", *args)
    assert code_o == code_t, (code_o, code_t, err_o, err_t)
    assert_rows_equal(parse(out_o), parse(out_t))
    if code_t:
        assert len(err_o.strip().splitlines()) == 1 and "Traceback" not in err_o
        assert "DATA_LOSS" in err_t and "DATA_LOSS" in err_o, (err_o, err_t)
    return parse(out_t)


@pytest.fixture(scope="module")
def rich(tmp_path_factory):
    return rich_bundle(tmp_path_factory.mktemp("counter") / "rich.ireeprof")


# --- agreement with iree-profile ------------------------------------------------------------------

OPTION_SETS = [
    (), ("--counter_samples",),
    ("--filter=matmul*",), ("--filter=matmul*", "--counter_samples"),
    ("--filter=SQ_WAVES",), ("--filter=TCC",), ("--filter=GRBM*", "--counter_samples"),
    ("--filter=amdgpu.range",), ("--filter=unattributed", "--counter_samples"),
    ("--filter=device1/executable2#0", "--counter_samples"), ("--filter=no-such-thing",),
    ("--filter=",), ("--filter=*_sum",), ("--filter=SQ_?AVES", "--counter_samples"),
    ("--id=3",), ("--id=3", "--counter_samples"),  # a sample id (and nothing else)
    ("--id=7",), ("--id=7", "--counter_samples"),  # command buffer id and sample id 7
    ("--id=104",), ("--id=12", "--filter=reduce*"), ("--id=77", "--counter_samples"),
    ("--id=0", "--counter_samples"), ("--id=999999",), ("--id=-5",),
]


@pytest.mark.parametrize("args", OPTION_SETS, ids=lambda a: " ".join(a) or "default")
def test_rich_bundle_matches_iree(iree_profile, rich, args):
    rows = compare(iree_profile, rich, *args)
    assert rows[0]["type"] in ("counter_summary", "counter_sample")


def test_rich_bundle_exercises_the_cases(iree_profile, rich):
    """Guards the fixture itself: the comparison above covers what it claims to."""
    rows = parse(theirs(iree_profile, rich, "--format=jsonl", "--counter_samples")[1])
    samples = [r for r in rows if r["type"] == "counter_sample"]
    groups = [r for r in rows if r["type"] == "counter_group"]
    summary = next(r for r in rows if r["type"] == "counter_summary")
    assert summary["truncated_matched_samples"] == 30
    assert {r["scope"] for r in groups} == {"dispatch", "command_operation", "device_time_range",
                                            "unknown"}
    assert {r["key"] for r in groups} >= {"matmul_kernel", "reduce_sum", "unattributed",
                                          "device1/executable2#0"}
    assert any(not r["device_tick_range_valid"] and r["device_tick_range_present"]
               for r in samples)
    assert any(len(r["values"]) == 4 for r in samples)
    assert any(r["first_sample_id"] != 0 and r["key"] == "unattributed" for r in groups)
    assert any(r["stddev"] > 1e18 for r in groups)  # IREE's unconverged square root


def test_values_are_slice_sums(rich):
    """Each sample value is the sum of its counter's raw slice (numpy truth)."""
    bundle = Bundle.open(rich)
    rows = list(counter_report.report(bundle, ReportOptions(counter_samples=True)))
    samples = bundle.typed("counter-samples")
    by_id = {int(r["sample_id"]): i for i, r in enumerate(samples.rows)}
    for r in (r for r in rows if r["type"] == "counter_sample"):
        raw = np.frombuffer(samples.tail(by_id[r["sample_id"]]), "<u8")
        catalog = {(c["counter_set_id"], c["counter_ordinal"]): c
                   for c in rows if c["type"] == "counter"}
        c = catalog[(r["counter_set_id"], r["counter_ordinal"])]
        lo = c["sample_value_offset"]
        expected = raw[lo:lo + c["sample_value_count"]]
        assert r["values"] == expected.tolist()
        assert r["value"] == pytest.approx(float(expected.astype(np.float64).sum()), rel=1e-12)


def test_fixture_bundles_match_iree(iree_profile, iree_bundles):
    """IREE's own local-driver bundles: no counters, but every row must still agree."""
    for n, key in enumerate(sorted(iree_bundles)):
        compare(iree_profile, iree_bundles[key])
        if n % 4 == 0:
            compare(iree_profile, iree_bundles[key], "--counter_samples", "--filter=x*", "--id=3")


# --- broken bundles -------------------------------------------------------------------------------

def _good_samples() -> list[bytes]:
    return [sample(1, 1, [1, 2, 3, 4, 5, 6, 7], event=1, start=10, end=20),
            sample(2, 1, [7, 6, 5, 4, 3, 2, 1], function=1, event=2, start=30, end=45)]


def _broken(kind: str) -> Writer:
    if kind == "function_before_executable":
        w = Writer().session(True)
        w.chunk("executable-functions", function(1, 0, "early"))
        w.chunk("executables", typed(schema.EXECUTABLE, executable_id=1, function_count=1))
        counter_catalog(w)
        w.chunk("counter-samples", *_good_samples()[:1])
        return w
    w = base_metadata(Writer())
    if kind == "counter_before_set":
        w.chunk("counters", counter(1, 0, 0, 0, 4, "SQ", "SQ_WAVES"))
        counter_catalog(w)
        w.chunk("counter-samples", *_good_samples())
        return w
    if kind == "set_name_length":
        bad = bytearray(counter_set(9, 0, 1, 1, "abc"))
        bad[28] = 2  # name_length one short of the record
        w.chunk("counter-sets", bytes(bad))
        return w
    if kind == "counter_string_length":
        counter_catalog(w)
        bad = bytearray(counter(1, 5, 0, 0, 1, "SQ", "X"))
        bad[44] = 4  # description_length past the record
        w.chunk("counters", bytes(bad))
        return w
    counter_catalog(w)
    good = _good_samples()
    bad = {
        "unknown_set": sample(3, 42, [1, 2]),
        "value_count_vs_set": sample(3, 1, [1, 2, 3]),
        "missing_function": sample(3, 1, [0] * 7, executable=1, function=9),
        "missing_executable": sample(3, 1, [0] * 7, executable=5, function=0),
        "extra_value_bytes": typed(schema.COUNTER_SAMPLE, b"\0" * 60, sample_id=3,
                                   counter_set_id=1, sample_value_count=7, executable_id=1),
    }.get(kind)
    if kind == "set_without_counters":
        w.chunk("counter-sets", counter_set(5, 0, 0, 1, "empty"))
        bad = sample(3, 5, [1])
    if kind == "bad_layout":
        w.chunk("counter-sets", counter_set(6, 0, 2, 3, "layout"))
        w.chunk("counters", counter(6, 0, 0, 0, 2, "A", "OK_COUNTER"),
                counter(6, 1, 0, 2, 5, "B", "PAST_END"))
        bad = sample(3, 6, [1, 2, 3])
    if kind == "torn_chunk":
        w.chunk("counter-samples", *good)
        w.chunk("counter-samples", good[0], good[1][:150])  # one whole record, then a torn one
        return w
    w.chunk("counter-samples", *good, bad, *good)
    return w


BROKEN = ["function_before_executable", "counter_before_set", "set_name_length",
          "counter_string_length", "unknown_set", "value_count_vs_set", "missing_function", "missing_executable", "extra_value_bytes",
          "set_without_counters", "bad_layout", "torn_chunk"]


@pytest.mark.parametrize("kind", BROKEN)
def test_broken_bundle_fails_like_iree(iree_profile, tmp_path, kind):
    path = _broken(kind).write(tmp_path / f"{kind}.ireeprof")
    for args in ((), ("--counter_samples",)):
        code, _, err = theirs(iree_profile, path, "--format=jsonl", *args)
        assert code == 1, (kind, err)
        compare(iree_profile, path, *args)
    code, out, err = ours(path)  # text: nothing printed, one line on stderr
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1


def test_failures_that_filters_avoid(iree_profile, tmp_path):
    """A bad counter layout fails only where the counter is matched; a missing function fails
    even when --id would skip the sample (IREE resolves keys first)."""
    path = _broken("bad_layout").write(tmp_path / "layout.ireeprof")
    compare(iree_profile, path, "--filter=OK_COUNTER", "--counter_samples")
    compare(iree_profile, path, "--id=1", "--counter_samples")
    assert theirs(iree_profile, path, "--format=jsonl", "--filter=OK_COUNTER")[0] == 0
    path = _broken("missing_function").write(tmp_path / "function.ireeprof")
    compare(iree_profile, path, "--id=1", "--counter_samples")
    assert theirs(iree_profile, path, "--format=jsonl", "--id=1")[0] == 1


# --- text -----------------------------------------------------------------------------------------

def test_text_output(rich):
    from rich.console import Console

    from amdgpu_cli.cli.profile_text import counter as text

    bundle = Bundle.open(rich)
    rows = list(counter_report.report(bundle, ReportOptions()))
    buf = io.StringIO()
    text.render(rows, Console(file=buf, width=100, markup=False, emoji=False, highlight=False))
    out = buf.getvalue()
    assert max(len(line) for line in out.splitlines()) <= 100
    summary = rows[0]
    assert f"{summary['total_samples']} total, {summary['matched_samples']} matched" in out
    for needle in ("amdgpu.pmc / SQ.SQ_WAVES", "matmul_kernel", "device1/executable2#0",
                   "unattributed", "device_time_range", "L2 hits", "[0,4)"):
        assert needle in out, needle
    group = next(r for r in rows if r["type"] == "counter_group")
    assert text._number(group["sum"]) in out


def test_text_cli_runs(rich, iree_profile):
    code, out, err = ours(rich)
    assert code == 0 and "IREE HAL profile counter summary" in out and err == ""
    # --counter_samples is JSONL only. iree-profile rejects the combination with exit 1; a flag
    # misuse is a usage error here, exit 2, like every other usage error of ours.
    code, out, err = ours(rich, "--counter_samples")
    assert theirs(iree_profile, rich, "--counter_samples")[0] == 1
    assert code == 2
    assert out == "" and "requires --format=jsonl" in err


def test_jsonl_text_identical_to_iree_bytes(iree_profile, rich):
    """Beyond values: our JSONL lines are byte-identical on the rich bundle."""
    bundle = Bundle.open(rich)
    mine = "".join(dumps(r) + "\n" for r in counter_report.report(
        bundle, ReportOptions(counter_samples=True)))
    assert mine == theirs(iree_profile, rich, "--format=jsonl", "--counter_samples")[1]

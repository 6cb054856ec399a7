"""The reports' shared toolkit: native row rendering, name tables, merging, sums and grouping.

Truths: Python's json module (every rendered line must parse back to the column values numpy
holds), printf-style formatting of the same values, plain-Python reference computations, and
iree-profile itself for whole reports rendered by the native and the pure-Python paths.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from amdgpu_cli.profile import reader
from amdgpu_cli.profile.jsonl import write_rows
from amdgpu_cli.profile.reports.toolkit import (RowLayout, Rows, Strings, dense_ids, exact_sum,
                                                gather_ranges, group_ids, interleave)

native = pytest.mark.skipif(reader._native is None, reason="native module not built in this install")

U64_MAX = (1 << 64) - 1
I64_MIN = -(1 << 63)

LAYOUT = RowLayout("sample_row", [
    ("u64", "int"), ("i64", "int"), ("u8", "int"), ("i16", "int"), ("flag", "bool"),
    ("name", "str"), ("domain", "=iree_host_time_ns"), ("triple", "list"), ("value", "float"),
    ("raw", "json"),
])

NAMES = ['plain', 'quote " and \\ backslash', "tab\tnew\nline\x01\x1f", "caf\u00e9 \u2028 \U0001f600",
         "", "bad \udcff byte"]


def _columns(n: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    u64 = rng.integers(0, U64_MAX, n, dtype=np.uint64, endpoint=True)
    u64[:2] = [0, U64_MAX][:n]
    i64 = rng.integers(I64_MIN, (1 << 63) - 1, n, dtype=np.int64, endpoint=True)
    i64[:2] = [I64_MIN, -1][:n]
    return {
        "u64": u64, "i64": i64, "u8": rng.integers(0, 255, n, dtype=np.uint8),
        "i16": rng.integers(-32768, 32767, n, dtype=np.int16), "flag": rng.random(n) < 0.5,
        "name": Strings(rng.integers(0, len(NAMES), n), NAMES),
        "triple": rng.integers(0, 1 << 32, (n, 3), dtype=np.uint64),
        "value": rng.normal(0, 1e6, n), "raw": Strings(rng.integers(0, 3, n), ["null", "[1,2]", '{"a":-0}']),
    }


def _expected_line(columns: dict, i: int) -> str:
    """Row i written field by field with Python's own formatting (IREE's %.3f for doubles)."""
    c = columns
    escaped = json.dumps(c["name"].texts[c["name"].codes[i]], ensure_ascii=False)
    return ('{"type":"sample_row",' + f'"u64":{int(c["u64"][i])},"i64":{int(c["i64"][i])},'
            f'"u8":{int(c["u8"][i])},"i16":{int(c["i16"][i])},'
            f'"flag":{"true" if c["flag"][i] else "false"},"name":{escaped},'
            '"domain":"iree_host_time_ns",'
            f'"triple":[{",".join(str(int(x)) for x in c["triple"][i])}],'
            f'"value":{"%.3f" % c["value"][i]},"raw":{c["raw"].texts[c["raw"].codes[i]]}}}')


@native
@pytest.mark.parametrize("count", [0, 1, 7, 20000])
def test_native_rendering_equals_python_formatting(count, monkeypatch):
    columns = _columns(count)
    block = LAYOUT.block(**columns)
    native_text = block.text()
    monkeypatch.setenv("AMDGPU_CLI_PURE_PYTHON", "1")
    python_text = block.text()
    assert native_text == python_text
    lines = native_text.split("\n")
    assert lines.pop() == ""
    assert len(lines) == count
    for i in range(0, count, max(1, count // 500)):
        assert lines[i] == _expected_line(columns, i)


@native
def test_rendered_rows_parse_back_to_the_columns():
    columns = _columns(3000, seed=7)
    text = LAYOUT.block(**columns).text()
    for i, line in enumerate(text.split("\n")[:-1]):
        row = json.loads(line)
        assert list(row) == list(LAYOUT.keys)
        assert row["u64"] == int(columns["u64"][i]) and row["i64"] == int(columns["i64"][i])
        assert row["u8"] == int(columns["u8"][i]) and row["i16"] == int(columns["i16"][i])
        assert row["flag"] is bool(columns["flag"][i])
        assert row["name"] == NAMES[columns["name"].codes[i]]
        assert row["triple"] == [int(x) for x in columns["triple"][i]]
        assert row["value"] == pytest.approx(round(float(columns["value"][i]), 3), abs=1e-3)


def test_block_rows_read_like_dicts():
    columns = _columns(5, seed=3)
    rows = list(LAYOUT.block(**columns))
    for i, row in enumerate(rows):
        assert row["type"] == "sample_row" and row["domain"] == "iree_host_time_ns"
        assert row["u64"] == int(columns["u64"][i]) and row["flag"] is bool(columns["flag"][i])
        assert row["raw"] == json.loads(columns["raw"].texts[columns["raw"].codes[i]])
        assert row.json() == _expected_line(columns, i)


@native
def test_write_rows_uses_the_binary_buffer_and_keeps_bytes():
    columns = _columns(40)
    block = LAYOUT.block(**columns)
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape")
    write_rows(out, Rows([{"type": "head", "n": 1}, block, {"type": "tail"}]))
    out.flush()
    data = raw.getvalue()
    expected = "".join(_expected_line(columns, i) + "\n" for i in range(40))
    assert data == (b'{"type":"head","n":1}\n' + expected.encode("utf-8", "surrogateescape")
                    + b'{"type":"tail"}\n')
    assert b"bad \xff byte" in data  # a name that was not UTF-8 comes back as its bytes
    text = io.StringIO()
    write_rows(text, Rows([{"type": "head", "n": 1}, block, {"type": "tail"}]))
    assert text.getvalue().encode("utf-8", "surrogateescape") == data


def test_rows_before_a_failure_are_written():
    def parts():
        yield {"type": "first"}
        yield LAYOUT.block(**_columns(3))
        yield {"type": "second"}
        raise RuntimeError("stop")

    out = io.StringIO()
    with pytest.raises(RuntimeError):
        write_rows(out, Rows(parts()))
    lines = out.getvalue().split("\n")
    assert lines.pop() == ""
    assert lines[0] == '{"type":"first"}' and lines[-1] == '{"type":"second"}' and len(lines) == 5


def test_template_layouts_render_printf_lines():
    template = '{"a":%d,"b":[%d,%d],"s":%s,"pct":"100%%"}\n'
    layout = RowLayout.from_template(template)
    cols = [np.array([1, -2]), np.array([3, 4], np.uint32), np.array([U64_MAX, 0], np.uint64),
            Strings(np.array([0, 1]), ['"x"', "null"])]
    data, ends = layout.block_of(cols).render_bytes()
    expected = "".join(template % (a, b, c, s) for a, b, c, s in
                       zip([1, -2], [3, 4], [U64_MAX, 0], ['"x"', "null"])).encode()
    assert data == expected
    assert ends.tolist() == [expected.index(b"\n") + 1, len(expected)]


def test_enum_names_sparse_and_unknown():
    names = {0: "none", 5: "five", 1 << 40: "far"}
    values = np.array([0, 5, 1 << 40, 3, U64_MAX, 6], np.uint64)
    s = Strings.enum(values, names, "unknown")
    assert [s.texts[c] for c in s.codes] == ["none", "five", "far", "unknown", "unknown", "unknown"]
    signed = Strings.enum(np.array([-1, 0, 5], np.int64), names)
    assert [signed.texts[c] for c in signed.codes] == ["unknown", "none", "five"]


def test_interleave_merges_by_key_earlier_block_first_on_ties():
    a = RowLayout("a", [("i", "int")]).block(i=np.arange(5))
    b = RowLayout("b", [("i", "int")]).block(i=np.arange(4))
    ka, kb = np.array([1, 1, 3, 7, 9]), np.array([0, 1, 3, 8])
    merged = [(r["type"], r["i"]) for block in interleave((a, ka), (b, kb)) for r in block]
    reference = sorted([(k, 0, "a", i) for i, k in enumerate(ka)] + [(k, 1, "b", i) for i, k in enumerate(kb)])
    assert merged == [(t, i) for _, _, t, i in reference]


def test_gather_ranges_and_sums_and_groups():
    data = bytes(range(256)) * 4
    starts, ends = np.array([10, 0, 500]), np.array([20, 3, 500])
    assert bytes(gather_ranges(data, starts, ends)) == data[10:20] + data[0:3]
    values = np.array([U64_MAX, U64_MAX, 5], np.uint64)
    assert exact_sum(values) == 2 * U64_MAX + 5
    a = np.array([3, 1, 3, 2, 1, 3])
    b = np.array([0, 0, 0, 1, 0, 1])
    gid, first = group_ids(a, b)
    seen = {}
    for i, key in enumerate(zip(a.tolist(), b.tolist())):
        seen.setdefault(key, len(seen))
        assert gid[i] == seen[key]
    assert first.tolist() == [list(zip(a.tolist(), b.tolist())).index(k) for k in seen]
    ids, count = dense_ids([a, b], len(a))
    assert count == len(seen)
    pairs = list(zip(a.tolist(), b.tolist()))
    assert all((ids[i] == ids[j]) == (pairs[i] == pairs[j]) for i in range(6) for j in range(6))


@native
@pytest.mark.parametrize("command", [["queue"], ["memory"], ["dispatch", "--dispatch_events"],
                                     ["command"], ["export", "--format=ireeperf-jsonl"], ["cat"]])
def test_pure_python_and_native_reports_equal_iree_profile(iree_bundles, iree_profile, command):
    path = iree_bundles["attention-local-task-all"]
    fmt = [] if "--format=ireeperf-jsonl" in command else ["--format=jsonl"]
    theirs = iree_profile([*command, *fmt, path])
    assert theirs.returncode == 0, theirs.stderr
    for pure in ("0", "1"):
        env = dict(os.environ, AMDGPU_CLI_PURE_PYTHON=pure)
        ours = subprocess.run([sys.executable, "-m", "amdgpu_cli.cli.profile_entry", *command, *fmt,
                               str(path)], capture_output=True, text=True, env=env, timeout=120)
        assert ours.returncode == 0, ours.stderr
        assert ours.stdout == theirs.stdout, (command, pure)


@pytest.mark.parametrize("count", [0, 1, 300])
def test_plain_blocks_render_and_read_as_column_blocks(count):
    # `RowLayout.plain` (lists, the `%` format, no numpy) against `block` (numpy columns and, where
    # built, the native renderer), and both against the expected text.
    columns = _columns(count, seed=11)
    names = columns["name"]
    raw = columns["raw"]
    listed = {key: (value.tolist() if hasattr(value, "tolist") else value)
              for key, value in columns.items()}
    listed["name"] = [names.texts[c] for c in names.codes.tolist()]
    listed["raw"] = [raw.texts[c] for c in raw.codes.tolist()]
    plain = LAYOUT.plain(**listed)
    assert plain.text() == LAYOUT.block(**columns).text()
    assert [line + "\n" for line in plain.texts()] == [_expected_line(columns, i) + "\n"
                                                       for i in range(count)]
    assert [dict(row) for row in plain] == [dict(row) for row in LAYOUT.block(**columns)]
    out = io.StringIO()
    write_rows(out, Rows([{"type": "before"}, plain]))
    assert out.getvalue() == '{"type":"before"}\n' + plain.text()


@pytest.mark.parametrize("pure", [False, True], ids=["native", "pure-python"])
def test_sink_rendering_and_gathering_equal_bytearrays(pure, monkeypatch):
    # The export renders block after block onto a reused Sink (native memory, not cleared) and
    # gathers its ranges into another: the same bytes and row ends as with fresh bytearrays,
    # across several render buffers and after the sink is emptied and filled again.
    from amdgpu_cli.profile.reports.toolkit import Sink, gather_ranges

    if pure:
        monkeypatch.setenv("AMDGPU_CLI_PURE_PYTHON", "1")
    sink, gathered = Sink(), Sink()
    for count, seed in ((20000, 5), (300, 6), (0, 7)):
        block = LAYOUT.block(**_columns(count, seed=seed))
        expected = bytearray(b"head\n")
        expected_ends = block.render_into(expected)
        sink.clear()
        sink.append(b"head\n")
        ends = block.render_into(sink)
        assert bytes(sink.view()) == bytes(expected)
        assert ends.tolist() == expected_ends.tolist()
        starts = np.array([5, 0] if count else [0], np.uint64)
        stops = np.array([len(expected), 5] if count else [5], np.uint64)
        assert bytes(gather_ranges(sink, starts, stops, gathered)) == \
            bytes(gather_ranges(bytes(expected), starts, stops))

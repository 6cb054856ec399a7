"""formats.parameters (+ irpa, gguf, safetensors) against files other tools wrote and IREE's reading.

Independent truths:
- the files: `.irpa` by IREE 3.13.0's `iree-create-parameters` (data with patterns, splats) and
  `iree-convert-parameters` (from .gguf/.safetensors, with --splat/--strip), `.gguf` by the `gguf`
  package's GGUFWriter (checked again with its GGUFReader), `.safetensors` by
  `safetensors.numpy.save_file`; the arrays written are the expected bytes;
- IREE's reading: `iree-dump-parameters --parameters=FILE` prints the index (start, end, length,
  key; `-` for splats), `--extract=KEY=OUT` (preload mode) writes a file-backed entry's bytes, and
  for corrupt files its one error line carries the status our error must carry too — except
  where IREE's C arithmetic wraps or divides by zero (marked, and then not run through IREE).
Corrupt inputs are hand-patched from the real files with the offsets of IREE's
`schemas/parameter_archive.h` written out here, or hand-built GGUF/safetensors bytes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from amdgpu_cli.errors import AmdgpuCliError, InputFileError
from amdgpu_cli.formats.parameters import (
    MAX_SPLAT_VIEW_BYTES,
    ParameterFormatError,
    format_for_path,
    open_parameters,
)


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} not on PATH")
    return found


def _run(tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([_tool(tool), *args], capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"{tool} {' '.join(args)} failed:\n{proc.stderr}")
    return proc


_DUMP_ROW = re.compile(r"^\s*(\d+|-)\s*\|\s*(\d+|-)\s*\|\s*(\d+)\s*\|\s*`(.*)`$")


def iree_dump(path: Path) -> list[tuple[int | None, int, str]]:
    """IREE's index of `path`: (file start or None for a splat, length, key) per entry."""
    rows = []
    for line in _run("iree-dump-parameters", f"--parameters={path}").stdout.splitlines():
        m = _DUMP_ROW.match(line)
        if m:
            start, end, length, key = m.groups()
            rows.append((None if start == "-" else int(start), int(length), key))
            if start != "-":
                assert int(end) == int(start) + int(length)
    return rows


def iree_extract(path: Path, key: str, tmp_path: Path) -> bytes:
    out = tmp_path / f"extract-{abs(hash(key))}.bin"
    _run("iree-dump-parameters", "--parameter_mode=preload", f"--parameters={path}",
         f"--extract={key}={out}")
    return out.read_bytes()


def iree_status(path: Path) -> str:
    """The status name of IREE's error reading `path` (iree-dump-parameters must fail)."""
    proc = _run("iree-dump-parameters", f"--parameters={path}", check=False)
    assert proc.returncode != 0, f"IREE accepted {path.name}:\n{proc.stdout}"
    m = re.search(r"\b([A-Z_]+); ", proc.stderr)
    assert m, proc.stderr
    return m.group(1)


def our_index(path: Path) -> list[tuple[int | None, int, str]]:
    with open_parameters(path) as archive:
        return [(e.file_offset, e.length, e.key) for e in archive.entries.values()]


# -- files written by other tools ------------------------------------------------------------------


@pytest.fixture(scope="module")
def created_irpa(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("irpa") / "created.irpa"
    # IREE 3.13.0 fails ("write failed") on data patterns of elements wider than a byte: i8 only.
    _run("iree-create-parameters", "--data=weights.a=16xi8=5", "--data=zeros=3xi8",
         "--data=pattern16=16xi8=-3", "--splat=splat.i16=16xi16=7", "--splat=splat.f64=2xf64=1.5",
         "--splat=splat.f32=4096xf32=4.1", f"--output={path}")
    return path


GGUF_ARRAYS = {
    "tok.weight": np.arange(6, dtype=np.float32).reshape(2, 3),
    "half": np.arange(5, dtype=np.float16),
    "blk.0.q8": np.arange(68 * 2, dtype=np.uint8).reshape(2, 68),  # written raw as Q8_0: 2 blocks/row
}


@pytest.fixture(scope="module")
def gguf_file(tmp_path_factory) -> Path:
    gguf = pytest.importorskip("gguf")
    path = tmp_path_factory.mktemp("gguf") / "model.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_uint32("x.count", 3)
    writer.add_string("x.name", "hello")
    writer.add_array("x.ints", [1, 2, 3])
    writer.add_array("x.strings", ["a", "bc", ""])
    writer.add_float64("x.f64", 1.25)
    writer.add_bool("x.flag", True)
    for name, array in GGUF_ARRAYS.items():
        raw = gguf.GGMLQuantizationType.Q8_0 if array.dtype == np.uint8 else None
        writer.add_tensor(name, array, raw_dtype=raw)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


SAFETENSORS_ARRAYS = {
    "model.embed": np.arange(12, dtype=np.float32).reshape(3, 4),
    "bias": np.array([1, -2, 3], np.int64),
    "scalar": np.array(7, np.int8),
    "empty": np.zeros((0, 4), np.float16),
}


@pytest.fixture(scope="module")
def safetensors_file(tmp_path_factory) -> Path:
    st = pytest.importorskip("safetensors.numpy")
    path = tmp_path_factory.mktemp("st") / "model.safetensors"
    st.save_file(SAFETENSORS_ARRAYS, str(path), metadata={"format": "np"})
    return path


def test_created_irpa_matches_iree(created_irpa, tmp_path):
    assert our_index(created_irpa) == iree_dump(created_irpa)
    with open_parameters(created_irpa) as archive:
        e = archive.entries
        assert list(e) == [k for _, _, k in iree_dump(created_irpa)]
        assert (e["weights.a"].length, e["zeros"].length, e["pattern16"].length) == (16, 3, 16)
        assert e["splat.i16"].splat == b"\x07\x00" and e["splat.i16"].length == 32
        assert e["splat.f64"].splat == struct.pack("<d", 1.5) and e["splat.f64"].length == 16
        assert e["splat.f32"].splat == struct.pack("<f", 4.1) and e["splat.f32"].length == 16384
        assert bytes(archive.view("splat.i16")) == b"\x07\x00" * 16
        assert bytes(archive.view("splat.f32")) == struct.pack("<f", 4.1) * 4096
        for key in ("weights.a", "zeros", "pattern16"):
            assert e[key].file_offset is not None and e[key].splat is None
            assert bytes(archive.view(key)) == iree_extract(created_irpa, key, tmp_path)
        assert bytes(archive.view("zeros")) == b"\0\0\0"
        assert bytes(archive.view("weights.a")) == b"\5" * 16
        assert bytes(archive.view("pattern16")) == b"\xfd" * 16


def test_gguf_matches_writer_and_iree(gguf_file, tmp_path):
    gguf = pytest.importorskip("gguf")
    assert our_index(gguf_file) == iree_dump(gguf_file)
    reader = gguf.GGUFReader(str(gguf_file))
    with open_parameters(gguf_file) as archive:
        assert list(archive.entries) == list(GGUF_ARRAYS)
        for tensor in reader.tensors:
            entry = archive.entries[tensor.name]
            assert (entry.file_offset, entry.length) == (tensor.data_offset, tensor.n_bytes)
        for name, array in GGUF_ARRAYS.items():
            assert bytes(archive.view(name)) == array.tobytes()
            assert bytes(archive.view(name)) == iree_extract(gguf_file, name, tmp_path)


def test_gguf_custom_alignment(tmp_path):
    gguf = pytest.importorskip("gguf")
    path = tmp_path / "aligned.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_custom_alignment(256)
    writer.add_tensor("a", np.arange(3, dtype=np.float32))
    writer.add_tensor("b", np.arange(70, dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    assert our_index(path) == iree_dump(path)
    with open_parameters(path) as archive:
        assert all(e.file_offset % 256 == 0 for e in archive.entries.values())
        assert bytes(archive.view("b")) == np.arange(70, dtype=np.float16).tobytes()


def test_safetensors_matches_writer_and_iree(safetensors_file, tmp_path):
    assert our_index(safetensors_file) == iree_dump(safetensors_file)
    with open_parameters(safetensors_file) as archive:
        assert set(archive.entries) == set(SAFETENSORS_ARRAYS)  # __metadata__ is not an entry
        for name, array in SAFETENSORS_ARRAYS.items():
            assert bytes(archive.view(name)) == array.tobytes()
            if array.nbytes:
                assert bytes(archive.view(name)) == iree_extract(safetensors_file, name, tmp_path)


def test_converted_irpa(gguf_file, safetensors_file, tmp_path):
    out = tmp_path / "converted.irpa"
    _run("iree-convert-parameters", f"--parameters={gguf_file}", f"--parameters={safetensors_file}",
         "--exclude=empty", "--rename=bias=renamed.bias", "--splat=half=f16=1.0", f"--output={out}")
    assert our_index(out) == iree_dump(out)
    with open_parameters(out) as archive:
        for name, array in {**GGUF_ARRAYS, **SAFETENSORS_ARRAYS}.items():
            if name in ("empty", "half", "bias"):
                continue
            assert bytes(archive.view(name)) == array.tobytes()
        assert bytes(archive.view("renamed.bias")) == SAFETENSORS_ARRAYS["bias"].tobytes()
        half = archive.entries["half"]
        assert half.splat == np.float16(1.0).tobytes() and half.length == 10
        assert "empty" not in archive
    stripped = tmp_path / "stripped.irpa"
    _run("iree-convert-parameters", f"--parameters={out}", "--strip", f"--output={stripped}")
    assert our_index(stripped) == iree_dump(stripped)
    with open_parameters(stripped) as archive:
        assert all(e.file_offset is None and e.splat is not None for e in archive.entries.values())
        assert bytes(archive.view("tok.weight")) == bytes(24)


def test_empty_archives(tmp_path):
    path = tmp_path / "empty.irpa"
    _run("iree-create-parameters", f"--output={path}")
    assert our_index(path) == iree_dump(path) == []
    gguf_empty = tmp_path / "empty.gguf"
    gguf_empty.write_bytes(struct.pack("<IIQQ", 0x46554747, 3, 0, 5))  # no tensors: metadata unread
    assert our_index(gguf_empty) == iree_dump(gguf_empty) == []
    st_empty = tmp_path / "empty.safetensors"
    st_empty.write_bytes(struct.pack("<Q", 2) + b"{}")
    assert our_index(st_empty) == iree_dump(st_empty) == []


def test_linked_archives(created_irpa, tmp_path):
    """Two archives in one file, the first linking to the second (offsets relative to each header)."""
    first = bytearray(created_irpa.read_bytes())
    second_path = tmp_path / "second.irpa"
    _run("iree-create-parameters", "--data=second.x=8xi8=9", "--splat=second.s=4xi8=1",
         f"--output={second_path}")
    second = second_path.read_bytes()
    struct.pack_into("<Q", first, 16, len(first))
    path = tmp_path / "linked.irpa"
    path.write_bytes(bytes(first) + second)
    with open_parameters(path) as archive, open_parameters(second_path) as alone:
        assert list(archive.entries) == [*our_index_keys(created_irpa), *alone.entries]
        x = archive.entries["second.x"]
        assert x.file_offset == len(first) + alone.entries["second.x"].file_offset
        assert bytes(archive.view("second.x")) == bytes(alone.view("second.x"))


def our_index_keys(path: Path) -> list[str]:
    return [k for _, _, k in our_index(path)]


# -- format choice, files, lifetime -------------------------------------------------------------------


def test_format_chosen_by_extension(created_irpa, tmp_path):
    assert format_for_path("a/b/model.GGUF") == "gguf"
    assert format_for_path("x.tar.safetensors") == "safetensors"
    assert format_for_path("dir.irpa/irpa") == "irpa"  # no dot: the name is the extension
    upper = tmp_path / "UPPER.IRPA"
    upper.write_bytes(created_irpa.read_bytes())
    assert our_index(upper) == iree_dump(upper)
    other = tmp_path / "params.bin"
    other.write_bytes(created_irpa.read_bytes())
    with pytest.raises(ParameterFormatError, match=r"unsupported file format `bin`") as info:
        open_parameters(other)
    assert info.value.status == iree_status(other) == "UNIMPLEMENTED"
    # The magic does not choose: an archive named .gguf is a GGUF magic error, in IREE too.
    wrong = tmp_path / "archive.gguf"
    wrong.write_bytes(created_irpa.read_bytes())
    with pytest.raises(ParameterFormatError, match="GGUF file magic missing or invalid 41505249"):
        open_parameters(wrong)
    assert iree_status(wrong) == "INVALID_ARGUMENT"


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(InputFileError, match="failed to open file") as info:
        open_parameters(tmp_path / "nope.irpa")
    assert info.value.status == "NOT_FOUND" == iree_status(tmp_path / "nope.irpa")
    (tmp_path / "dir.irpa").mkdir()
    with pytest.raises(InputFileError):
        open_parameters(tmp_path / "dir.irpa")


def test_lifetime_and_zero_copy(created_irpa):
    archive = open_parameters(created_irpa)
    entry = archive.entries["weights.a"]
    view = archive.view("weights.a")
    assert view.readonly
    assert os.pread(archive.fileno(), entry.length, entry.file_offset) == bytes(view)
    assert archive.file_size == created_irpa.stat().st_size
    archive.close()  # a live view keeps the mapping; close neither fails nor invalidates it
    assert bytes(view) == os.pread(os.open(created_irpa, os.O_RDONLY), entry.length, entry.file_offset)
    view.release()
    assert archive.closed
    with pytest.raises(ParameterFormatError, match="closed"):
        archive.view("weights.a")
    archive.close()  # idempotent
    with open_parameters(created_irpa) as again:
        with pytest.raises(ParameterFormatError, match="no parameter found in index with key 'nope'") as info:
            again.view("nope")
        assert info.value.status == "NOT_FOUND"


# -- corrupt inputs ----------------------------------------------------------------------------------

# IRPA offsets (schemas/parameter_archive.h, packed little-endian): header fields, then entries.
H_MAGIC, H_MAJOR, H_MINOR, H_SIZE, H_NEXT = 0, 4, 6, 8, 16
H_COUNT, H_ENTRY_OFF, H_ENTRY_LEN, H_META_OFF, H_META_LEN, H_STORE_OFF, H_STORE_LEN = 32, 40, 48, 56, 64, 72, 80
E_SIZE, E_TYPE, E_NAME_OFF, E_NAME_LEN = 0, 8, 20, 28
E_SPLAT_PATTERN_LEN = 84
E_DATA_OFF, E_DATA_LEN = 60, 68


def _irpa_entries(data: bytes) -> dict[str, int]:
    """Entry offsets of a single-archive file by key (walked with the offsets above)."""
    count, = struct.unpack_from("<Q", data, H_COUNT)
    at = struct.unpack_from("<Q", data, H_ENTRY_OFF)[0]
    meta = struct.unpack_from("<Q", data, H_META_OFF)[0]
    out = {}
    for _ in range(count):
        size, = struct.unpack_from("<Q", data, at + E_SIZE)
        name_off, name_len = struct.unpack_from("<QQ", data, at + E_NAME_OFF)
        out[data[meta + name_off:meta + name_off + name_len].decode()] = at
        at += -(-size // 16) * 16
    return out


def _patch(data: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


# (id, function(original bytes, entry offsets) -> bytes, expected status, does IREE agree)
# IREE disagrees (False: it wraps and accepts, or crashes) only where its C arithmetic overflows.
IRPA_CASES = [
    ("empty", lambda d, e: b"", "INVALID_ARGUMENT", True),
    ("short-prefix", lambda d, e: d[:31], "INVALID_ARGUMENT", True),
    ("bad-magic", lambda d, e: b"IRPB" + d[4:], "INVALID_ARGUMENT", True),
    ("header-size-past-eof", lambda d, e: _patch(d, H_SIZE, "<Q", 1 << 40), "OUT_OF_RANGE", True),
    ("next-header-past-eof", lambda d, e: _patch(d, H_NEXT, "<Q", len(d)), "OUT_OF_RANGE", True),
    ("major-1", lambda d, e: _patch(d, H_MAJOR, "<H", 1), "UNIMPLEMENTED", True),
    ("minor-1", lambda d, e: _patch(d, H_MINOR, "<H", 1), "UNIMPLEMENTED", True),
    ("header-size-89", lambda d, e: _patch(d, H_SIZE, "<Q", 89), "INVALID_ARGUMENT", True),
    ("entry-segment-past-eof", lambda d, e: _patch(d, H_ENTRY_LEN, "<Q", len(d)), "OUT_OF_RANGE", True),
    ("metadata-segment-past-eof", lambda d, e: _patch(d, H_META_OFF, "<Q", 1 << 62), "OUT_OF_RANGE", True),
    ("storage-segment-wraps", lambda d, e: _patch(_patch(d, H_STORE_OFF, "<Q", (1 << 64) - 16),
                                                  H_STORE_LEN, "<Q", 32), "OUT_OF_RANGE", False),
    ("truncated-storage", lambda d, e: d[:520], "OUT_OF_RANGE", True),
    ("entry-count-past-table", lambda d, e: _patch(d, H_COUNT, "<Q", 1 << 62), "OUT_OF_RANGE", True),
    ("entry-size-small", lambda d, e: _patch(d, e["zeros"] + E_SIZE, "<Q", 59), "OUT_OF_RANGE", True),
    ("entry-size-huge", lambda d, e: _patch(d, e["zeros"] + E_SIZE, "<Q", 1 << 63), "OUT_OF_RANGE", True),
    ("name-past-metadata", lambda d, e: _patch(d, e["zeros"] + E_NAME_OFF, "<Q", 1 << 20), "OUT_OF_RANGE", True),
    ("name-length-wraps", lambda d, e: _patch(d, e["zeros"] + E_NAME_LEN, "<Q", (1 << 64) - 1),
     "OUT_OF_RANGE", False),
    ("entry-type-external", lambda d, e: _patch(d, e["zeros"] + E_TYPE, "<I", 3), "UNIMPLEMENTED", True),
    ("entry-type-unknown", lambda d, e: _patch(d, e["zeros"] + E_TYPE, "<I", 77), "UNIMPLEMENTED", True),
    ("data-as-splat", lambda d, e: _patch(d, e["zeros"] + E_TYPE, "<I", 1), "OUT_OF_RANGE", True),
    ("splat-pattern-17", lambda d, e: _patch(d, e["splat.i16"] + E_SPLAT_PATTERN_LEN, "<B", 17),
     "INVALID_ARGUMENT", True),
    ("storage-ref-past-segment", lambda d, e: _patch(d, e["zeros"] + E_DATA_OFF, "<Q", 1 << 30),
     "OUT_OF_RANGE", True),
    ("storage-ref-wraps", lambda d, e: _patch(_patch(d, e["zeros"] + E_DATA_OFF, "<Q", 2),
                                              e["zeros"] + E_DATA_LEN, "<Q", (1 << 64) - 1),
     "OUT_OF_RANGE", False),
]


def _check_error(tmp_path: Path, name: str, data: bytes, status: str, iree_agrees: bool | None) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(AmdgpuCliError) as info:
        open_parameters(path)
    error = info.value
    assert error.status == status, error.one_line()
    assert "\n" not in error.one_line() and str(path) in str(error)
    assert len(error.one_line()) < 400
    if iree_agrees:
        assert iree_status(path) == status


@pytest.mark.parametrize("case", IRPA_CASES, ids=[c[0] for c in IRPA_CASES])
def test_corrupt_irpa(case, created_irpa, tmp_path):
    name, corrupt, status, iree_agrees = case
    data = created_irpa.read_bytes()
    _check_error(tmp_path, f"{name}.irpa", corrupt(data, _irpa_entries(data)), status, iree_agrees)


def test_irpa_overlap_and_huge_splat(created_irpa, tmp_path):
    """IREE allows entries to share storage; a huge splat indexes fine and is never materialized."""
    data = created_irpa.read_bytes()
    entries = _irpa_entries(data)
    a = struct.unpack_from("<QQ", data, entries["weights.a"] + E_DATA_OFF)
    data = _patch(data, entries["pattern16"] + E_DATA_OFF, "<Q", a[0])
    data = _patch(data, entries["splat.f64"] + 60, "<Q", 1 << 60)  # splat length
    path = tmp_path / "overlap.irpa"
    path.write_bytes(data)
    assert our_index(path) == iree_dump(path)
    with open_parameters(path) as archive:
        assert bytes(archive.view("pattern16")) == bytes(archive.view("weights.a"))
        assert archive.entries["splat.f64"].length == 1 << 60 > MAX_SPLAT_VIEW_BYTES
        with pytest.raises(ParameterFormatError) as info:
            archive.view("splat.f64")
        assert info.value.status == "RESOURCE_EXHAUSTED"


# -- GGUF, built by hand ---------------------------------------------------------------------------


def _gs(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def gguf_bytes(kvs=(), tensors=(), *, version=3, alignment=32, data=b"", tensor_count=None, kv_count=None):
    """A GGUF file: kvs = [(key, type, raw value bytes)], tensors = [(name, dims, type, offset)]."""
    out = struct.pack("<IIQQ", 0x46554747, version, len(tensors) if tensor_count is None else tensor_count,
                      len(kvs) if kv_count is None else kv_count)
    for key, value_type, raw in kvs:
        out += _gs(key) + struct.pack("<I", value_type) + raw
    for name, dims, ggml_type, offset in tensors:
        out += _gs(name) + struct.pack(f"<I{len(dims)}QIQ", len(dims), *dims, ggml_type, offset)
    out += bytes(-len(out) % alignment)
    return out + data


F32 = 0
ONE = [(b"t", [4], F32, 0)]
DATA16 = bytes(range(16))

GGUF_CASES = [
    ("empty", b"", "INVALID_ARGUMENT", True),  # IREE fails to map an empty file, before parsing
    ("bad-magic", b"GGUX" + gguf_bytes(tensors=ONE, data=DATA16)[4:], "INVALID_ARGUMENT", True),
    ("version-1", gguf_bytes(tensors=ONE, data=DATA16, version=1), "UNIMPLEMENTED", True),
    ("version-4", gguf_bytes(tensors=ONE, data=DATA16, version=4), "UNIMPLEMENTED", True),
    ("header-truncated", gguf_bytes(tensors=ONE)[:20], "OUT_OF_RANGE", True),
    ("kv-count-huge", gguf_bytes(tensors=ONE, kv_count=1 << 62), "OUT_OF_RANGE", True),
    ("tensor-count-huge", gguf_bytes(tensors=ONE, tensor_count=1 << 62, data=DATA16), "OUT_OF_RANGE", True),
    ("key-length-huge", struct.pack("<IIQQQ", 0x46554747, 3, 1, 1, (1 << 64) - 1) + b"k" * 16,
     "OUT_OF_RANGE", True),
    ("value-type-13", gguf_bytes([(b"k", 13, b"")], ONE, data=DATA16), "INVALID_ARGUMENT", True),
    ("value-truncated", gguf_bytes([(b"k", 10, b"\1\2")], [], tensor_count=1), "OUT_OF_RANGE", True),
    ("string-value-huge", gguf_bytes([(b"k", 8, struct.pack("<Q", 1 << 40))], ONE, data=DATA16),
     "OUT_OF_RANGE", True),
    ("nested-array", gguf_bytes([(b"k", 9, struct.pack("<IQ", 9, 1))], ONE, data=DATA16),
     "INVALID_ARGUMENT", True),
    ("array-type-bad", gguf_bytes([(b"k", 9, struct.pack("<IQ", 99, 1))], ONE, data=DATA16),
     "INVALID_ARGUMENT", True),
    ("array-count-huge", gguf_bytes([(b"k", 9, struct.pack("<IQ", 10, 1 << 40))], ONE, data=DATA16),
     "OUT_OF_RANGE", True),
    ("array-bytes-wrap", gguf_bytes([(b"k", 9, struct.pack("<IQ", 10, 1 << 61))], ONE, data=DATA16),
     "OUT_OF_RANGE", False),
    ("string-array-huge", gguf_bytes([(b"k", 9, struct.pack("<IQ", 8, 1 << 62) + _gs(b"x"))], ONE,
                                     data=DATA16), "OUT_OF_RANGE", True),
    ("alignment-u64", gguf_bytes([(b"general.alignment", 10, struct.pack("<Q", 64))], ONE, data=DATA16),
     "INVALID_ARGUMENT", True),
    ("alignment-zero", gguf_bytes([(b"general.alignment", 4, struct.pack("<I", 0))], ONE, data=DATA16),
     "INVALID_ARGUMENT", None),
    ("alignment-3", gguf_bytes([(b"general.alignment", 4, struct.pack("<I", 3))], ONE, data=DATA16),
     "INVALID_ARGUMENT", None),
    ("tensor-type-bf16", gguf_bytes(tensors=[(b"t", [4], 30, 0)], data=DATA16), "UNIMPLEMENTED", True),
    ("tensor-type-removed-4", gguf_bytes(tensors=[(b"t", [32], 4, 0)], data=DATA16), "UNIMPLEMENTED", None),
    ("tensor-past-data", gguf_bytes(tensors=[(b"t", [4], F32, 4)], data=DATA16), "INVALID_ARGUMENT", True),
    ("tensor-data-truncated", gguf_bytes(tensors=[(b"t", [8], F32, 0)], data=DATA16), "INVALID_ARGUMENT", True),
    ("tensor-offset-wraps", gguf_bytes(tensors=[(b"t", [4], F32, (1 << 64) - 8)], data=DATA16),
     "INVALID_ARGUMENT", True),
    ("dims-overflow", gguf_bytes(tensors=[(b"t", [1 << 40, 1 << 40], F32, 0)], data=DATA16),
     "OUT_OF_RANGE", False),
    ("dims-count-huge", struct.pack("<IIQQ", 0x46554747, 3, 1, 0) + _gs(b"t") + struct.pack("<I", 0xFFFFFFFF)
     + bytes(64),
     "OUT_OF_RANGE", None),
    ("tensor-info-truncated", gguf_bytes(tensors=ONE)[:-40], "OUT_OF_RANGE", True),
]


@pytest.mark.parametrize("case", GGUF_CASES, ids=[c[0] for c in GGUF_CASES])
def test_corrupt_gguf(case, tmp_path):
    name, data, status, iree_agrees = case
    _check_error(tmp_path, f"{name}.gguf", data, status, iree_agrees)


def test_hand_built_gguf(tmp_path):
    """The hand builder agrees with IREE on good files too (so the corrupt cases test what they say)."""
    tensors = [(b"a", [2, 2], F32, 0), (b"zero", [0, 5], F32, 16), (b"q", [64], 8, 32)]  # Q8_0: 68 bytes
    kvs = [(b"general.alignment", 4, struct.pack("<I", 64)), (b"s", 9, struct.pack("<IQ", 8, 2) + _gs(b"x") + _gs(b""))]
    path = tmp_path / "hand.gguf"
    path.write_bytes(gguf_bytes(kvs, tensors, alignment=64, data=bytes(range(100))))
    assert our_index(path) == iree_dump(path)
    assert [length for _, length, _ in our_index(path)] == [16, 0, 68]


# -- safetensors, built by hand ---------------------------------------------------------------------


def st_bytes(header, data=bytes(32), *, declared=None) -> bytes:
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if declared is None else declared) + text + data


def _st_entry(begin, end):
    return {"dtype": "U8", "shape": [end - begin], "data_offsets": [begin, end]}


ST_CASES = [
    ("empty", b"", "INVALID_ARGUMENT", True),
    ("short", b"\1\0\0", "OUT_OF_RANGE", True),
    ("header-past-eof", st_bytes({"a": _st_entry(0, 4)}, declared=1 << 40), "OUT_OF_RANGE", True),
    ("header-length-max", st_bytes({}, declared=(1 << 64) - 1), "OUT_OF_RANGE", True),
    ("unterminated-json", st_bytes(b'{"a": {"data_offsets": [0, 4]}'), "INVALID_ARGUMENT", True),
    ("not-an-object", st_bytes([1, 2]), "INVALID_ARGUMENT", True),
    ("entry-not-object", st_bytes({"a": 5}), "INVALID_ARGUMENT", True),
    ("no-data-offsets", st_bytes({"a": {"dtype": "F32", "shape": [1]}}), "NOT_FOUND", True),
    ("offsets-one", st_bytes({"a": {"data_offsets": [4]}}), "INVALID_ARGUMENT", True),
    # IREE's strtoull reads "4, 8" as 4 and accepts this; we reject it.
    ("offsets-three", st_bytes({"a": {"data_offsets": [0, 4, 8]}}), "INVALID_ARGUMENT", False),
    ("offsets-strings", st_bytes({"a": {"data_offsets": ["0", "4"]}}), "INVALID_ARGUMENT", True),
    ("offsets-object", st_bytes({"a": {"data_offsets": {"0": 4}}}), "INVALID_ARGUMENT", True),
    ("offsets-too-big", st_bytes({"a": {"data_offsets": [0, 1 << 64]}}), "INVALID_ARGUMENT", True),
    ("begin-after-end", st_bytes({"a": _st_entry(8, 4)}), "INVALID_ARGUMENT", True),
    ("end-past-data", st_bytes({"a": _st_entry(0, 33)}), "INVALID_ARGUMENT", True),
    ("data-truncated", st_bytes({"a": _st_entry(0, 4), "b": _st_entry(4, 64)}), "INVALID_ARGUMENT", True),
    ("deep-nesting", st_bytes(b'{"a": ' + b"[" * 100000 + b"]" * 100000 + b"}"), None, None),
    ("huge-number", st_bytes(b'{"a": {"data_offsets": [0, 1' + b"0" * 5000 + b"]}}"), "INVALID_ARGUMENT", None),
    ("not-utf8", st_bytes(b'{"\xff": {"data_offsets": [0, 4]}}'), "INVALID_ARGUMENT", False),
]


@pytest.mark.parametrize("case", ST_CASES, ids=[c[0] for c in ST_CASES])
def test_corrupt_safetensors(case, tmp_path):
    name, data, status, iree_agrees = case
    if status is None:  # IREE caps JSON depth with RESOURCE_EXHAUSTED; Python's parser: INVALID_ARGUMENT
        status = "INVALID_ARGUMENT"
    _check_error(tmp_path, f"{name}.safetensors", data, status, iree_agrees)


def test_safetensors_overlap_order_and_duplicates(tmp_path):
    """As in IREE: header order, overlapping ranges accepted, first of duplicate keys served."""
    header = b'{"z": {"data_offsets": [0, 8]}, "a": {"data_offsets": [4, 12]}, "z": {"data_offsets": [1, 2]}}'
    path = tmp_path / "overlap.safetensors"
    path.write_bytes(st_bytes(header, bytes(range(16))))
    dumped = iree_dump(path)
    assert [k for _, _, k in dumped] == ["z", "a", "z"]
    with open_parameters(path) as archive:
        assert list(archive.entries) == ["z", "a"]
        assert [(e.file_offset, e.length, e.key) for e in archive.entries.values()] == dumped[:2]
        assert bytes(archive.view("a")) == bytes(range(4, 12))


@pytest.mark.parametrize("suffix", ["irpa", "gguf", "safetensors"])
def test_every_truncation_is_one_line(suffix, created_irpa, gguf_file, safetensors_file, tmp_path):
    """Every prefix of a real file either parses (then every view is in bounds) or fails cleanly."""
    source = {"irpa": created_irpa, "gguf": gguf_file, "safetensors": safetensors_file}[suffix]
    data = source.read_bytes()
    path = tmp_path / f"cut.{suffix}"
    for cut in sorted(set(range(0, min(len(data), 700))) | set(range(0, len(data), 61))):
        path.write_bytes(data[:cut])
        try:
            with open_parameters(path) as archive:
                for key, entry in archive.entries.items():
                    if entry.splat is None:
                        assert len(archive.view(key)) == entry.length
        except AmdgpuCliError as error:
            assert "\n" not in error.one_line()

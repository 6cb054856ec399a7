"""The record walk and typed decoding, against iree-profile's `cat` and between our two scan paths."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from amdgpu_cli.profile import reader, schema
from amdgpu_cli.profile.reader import Bundle

from iree_bundles import jsonl_rows


def _ours(args, env=None):
    return subprocess.run([sys.executable, "-m", "amdgpu_cli.cli.profile_entry", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture(scope="module")
def some_bundles(iree_bundles):
    keys = ["mlp-local-task-all", "conv-local-sync-all", "attention-local-task-command-region-events",
            "mlp-bench-local-task-all", "conv-local-task-full"]
    return {k: iree_bundles[k] for k in keys}


@pytest.mark.parametrize("fmt", ["jsonl", "text"])
def test_cat_matches_iree_profile_byte_for_byte(iree_bundles, iree_profile, fmt):
    for key, path in iree_bundles.items():
        theirs = iree_profile(["cat", f"--format={fmt}", path])
        ours = _ours(["cat", f"--format={fmt}", path])
        assert theirs.returncode == 0, theirs.stderr
        assert ours.returncode == 0, ours.stderr
        assert ours.stdout == theirs.stdout, key


def test_native_and_python_paths_agree(some_bundles, monkeypatch):
    if reader._native is None:
        pytest.skip("native scanner not built in this install")
    for key, path in some_bundles.items():
        native = Bundle.open(path)
        monkeypatch.setenv("AMDGPU_CLI_PURE_PYTHON", "1")
        pure = Bundle.open(path)
        monkeypatch.delenv("AMDGPU_CLI_PURE_PYTHON")
        assert len(native.records) == len(pure.records) and (native.records == pure.records).all(), key
        for ct in schema.CONTENT_TYPES[1:]:
            n = native.typed(ct.suffix)
            monkeypatch.setenv("AMDGPU_CLI_PURE_PYTHON", "1")
            p = pure.typed(ct.suffix)
            monkeypatch.delenv("AMDGPU_CLI_PURE_PYTHON")
            assert n.rows.tobytes() == p.rows.tobytes(), (key, ct.suffix)
            assert np.array_equal(n.chunk, p.chunk) and np.array_equal(n.offsets, p.offsets)


def test_typed_counts_match_iree_summary(some_bundles, iree_profile):
    """Every family's typed-record count equals the count iree-profile's summary reports."""
    for key, path in some_bundles.items():
        summary = jsonl_rows(iree_profile(["summary", "--format=jsonl", path]).stdout)[0]
        bundle = Bundle.open(path)
        for ct in schema.CONTENT_TYPES[1:]:
            field = f"{ct.key}_records"
            if field in summary:
                assert len(bundle.typed(ct.suffix)) == summary[field], (key, field)
            assert len(bundle.chunk_indices(ct.suffix)) == summary[f"{ct.key}_chunks"], (key, ct.key)


def test_records_match_raw_struct_decoding(some_bundles):
    """Record offsets and lengths agree with a direct struct walk written here from the spec."""
    import struct

    for path in some_bundles.values():
        data = path.read_bytes()
        header_length, file_length = struct.unpack_from("<I", data, 8)[0], struct.unpack_from("<Q", data, 16)[0]
        end = file_length or len(data)
        offsets, o = [], header_length
        while o < end:
            offsets.append(o)
            o += struct.unpack_from("<Q", data, o)[0]
        bundle = Bundle.open(path)
        assert bundle.records["offset"].tolist() == offsets


@pytest.mark.parametrize("pure", [False, True])
def test_torn_typed_record_is_data_loss(some_bundles, tmp_path, pure, monkeypatch):
    """A queue-events chunk whose first typed record claims a too-large length fails like IREE."""
    if pure:
        monkeypatch.setenv("AMDGPU_CLI_PURE_PYTHON", "1")
    path = some_bundles["mlp-local-task-all"]
    bundle = Bundle.open(path)
    chunk = int(bundle.chunk_indices("queue-events")[0])
    r = bundle.records[chunk]
    payload = int(r["offset"]) + int(r["header_length"]) + int(r["content_type_length"]) + int(r["name_length"])
    data = bytearray(path.read_bytes())
    data[payload:payload + 4] = (0xFFFF).to_bytes(4, "little")
    bad = tmp_path / "bad.ireeprof"
    bad.write_bytes(bytes(data))
    from amdgpu_cli.errors import BundleFormatError

    with pytest.raises(BundleFormatError, match="invalid typed record length 65535"):
        Bundle.open(bad).typed("queue-events")


def test_native_walk_leaves_data_in_memory_untouched(some_bundles):
    """The native passes page a file mapping (letting go of pages behind them); data in memory
    must be read as it is: letting go of anonymous pages would zero them. Page-aligned anonymous
    memory is where that would show."""
    import mmap
    from pathlib import Path

    if reader._native is None:
        pytest.skip("native scanner not built in this install")
    for key, path in some_bundles.items():
        original = Path(path).read_bytes()
        anonymous = mmap.mmap(-1, len(original) + mmap.PAGESIZE)
        anonymous[:len(original)] = original
        before = bytes(anonymous)
        bundle = Bundle(np.frombuffer(anonymous, np.uint8)[:len(original)])
        assert len(bundle.records) and bundle.error is None, key
        for ct in schema.CONTENT_TYPES[1:]:
            if ct.kind == schema.ContentKind.FIXED:
                bundle.locate(ct.suffix).columns(*ct.dtype.names)
        assert bytes(anonymous) == before, key
        del bundle

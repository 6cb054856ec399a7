"""Corrupt and malformed bundles: every command gives one-line errors (or a report) with iree-profile's
exit status, and never a traceback, a crash or a hang (acceptance point 3).

Our tool runs in-process (fast enough for thousands of inputs); iree-profile runs as a subprocess on
the inputs where its verdict is compared.
"""

from __future__ import annotations

import contextlib
import io
import random
import struct
import time

import pytest

from amdgpu_cli.cli.main import profile_main

COMMANDS = ["cat", "summary", "statistics", "explain", "executable", "dispatch", "command",
            "counter", "memory", "queue", "export"]


def run_ours(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            profile_main([str(a) for a in args])
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue()


def command_args(command: str, path) -> list[str]:
    if command == "export":
        return ["export", "--format=ireeperf-jsonl", "--output=-", str(path)]
    return [command, "--format=jsonl", str(path)]


def assert_clean_failure_or_report(code: int, err: str, context) -> None:
    assert "Traceback" not in err, context
    assert "internal error" not in err, (context, err)
    if code != 0:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1, (context, err)
        assert lines[0].startswith("error: "), (context, err)


@pytest.fixture(scope="module")
def small_bundle(iree_bundles):
    """The smallest real bundle that still has several content types."""
    path = min((p for k, p in iree_bundles.items() if k.endswith("-all") and "bench" not in k),
               key=lambda p: p.stat().st_size)
    return path


def _write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _header(magic=0x46505249, major=1, minor=6, header_length=24, flags=0, file_length=0) -> bytes:
    return struct.pack("<IHHIIQ", magic, major, minor, header_length, flags, file_length)


@pytest.mark.parametrize("command", COMMANDS)
def test_malformed_headers_match_iree_profile(command, tmp_path, iree_profile, small_bundle):
    body = small_bundle.read_bytes()[24:]
    cases = {
        "empty": b"",
        "short": b"IRPF",
        "wrong-magic": _header(magic=0x12345678) + body,
        "major-2": _header(major=2) + body,
        "minor-99": _header(minor=99) + body,
        "flags": _header(flags=1) + body,
        "header-too-small": _header(header_length=8) + body,
        "header-past-end": _header(header_length=1 << 20) + body,
        "file-length-past-end": _header(file_length=1 << 40) + body,
        "file-length-before-records": _header(file_length=10) + body,
        "header-only": _header(),
        "text": b"this is not a profile bundle at all\n" * 4,
    }
    for name, data in cases.items():
        path = _write(tmp_path, f"{name}.ireeprof", data)
        theirs = iree_profile(command_args(command, path))
        code, _, err = run_ours(command_args(command, path))
        assert_clean_failure_or_report(code, err, (command, name))
        assert code == theirs.returncode, (command, name, err, theirs.stderr)


@pytest.mark.parametrize("command", COMMANDS)
def test_missing_and_unreadable_files(command, tmp_path, iree_profile):
    for path in (tmp_path / "does-not-exist.ireeprof", tmp_path):
        theirs = iree_profile(command_args(command, path))
        code, _, err = run_ours(command_args(command, path))
        assert_clean_failure_or_report(code, err, (command, path))
        assert code == theirs.returncode == 1


def _record_boundaries(data: bytes) -> list[int]:
    header_length = struct.unpack_from("<I", data, 8)[0]
    offsets, o = [], header_length
    while o < len(data):
        offsets.append(o)
        o += struct.unpack_from("<Q", data, o)[0]
    return offsets + [len(data)]


@pytest.mark.parametrize("command", COMMANDS)
def test_truncation_at_every_offset(command, tmp_path, iree_profile, small_bundle):
    """Finalized bundles cut anywhere, and unfinished ones (file_length 0) cut anywhere.

    Every offset runs through our tool; iree-profile judges record boundaries (and one byte either
    side), where the interesting verdicts change, plus a random sample of other offsets.
    """
    data = small_bundle.read_bytes()
    unfinished = data[:16] + b"\0" * 8 + data[24:]
    rng = random.Random(f"truncate-{command}")
    boundaries = _record_boundaries(data)
    judged = {b + d for b in boundaries for d in (-1, 0, 1) if 0 <= b + d < len(data)}
    judged |= set(rng.sample(range(len(data)), 24))
    stride = 1 if command in ("cat", "summary", "dispatch") else 5
    for variant, blob in (("final", data), ("unfinished", unfinished)):
        for cut in range(0, len(blob), stride if variant == "final" else 1):
            path = _write(tmp_path, "cut.ireeprof", blob[:cut])
            code, _, err = run_ours(command_args(command, path))
            assert_clean_failure_or_report(code, err, (command, variant, cut))
            if variant == "final":
                assert code == 1, (command, cut)
            elif cut in judged:
                theirs = iree_profile(command_args(command, path))
                assert code == theirs.returncode, (command, variant, cut, err, theirs.stderr)


@pytest.mark.parametrize("command", COMMANDS)
def test_random_byte_flips(command, tmp_path, iree_profile, iree_bundles):
    """A bounded loop of random mutations of real bundles: same exit status as iree-profile."""
    sources = [iree_bundles[k] for k in ("mlp-local-task-all", "conv-local-task-full",
                                         "attention-local-task-command-region-events",
                                         "elementwise-local-sync-all")]
    rng = random.Random(f"flips-{command}")
    deadline = time.monotonic() + 20
    for trial in range(60):
        if time.monotonic() > deadline:
            break
        data = bytearray(rng.choice(sources).read_bytes())
        for _ in range(rng.choice((1, 1, 2, 4, 16))):
            pos = rng.randrange(len(data))
            data[pos] = rng.randrange(256) if rng.random() < 0.7 else data[pos] ^ (1 << rng.randrange(8))
        path = _write(tmp_path, f"flip-{trial}.ireeprof", bytes(data))
        theirs = iree_profile(command_args(command, path))
        code, _, err = run_ours(command_args(command, path))
        assert_clean_failure_or_report(code, err, (command, trial))
        assert code == theirs.returncode, (command, trial, err, theirs.stderr)

"""`amdgpu-run --device_replay_results` + `amdgpu-replay run --verify`: a replay's results checked
against what the captured run read back (amdgpu_cli.replay.verify).

The truth is iree-run-module: the results our capture keeps in its sidecar must print exactly as
iree-run-module printed them for the same call, and a replay of the capture on either local driver
must reproduce them (`[SUCCESS]`, exit 0). A result changed in the sidecar must be reported as
iree-run-module reports an `--expected_output` mismatch (`[FAILED] result[i]: ...`, exit 1); a
missing, corrupt or foreign sidecar is one error line and exit 1. The .ireereplay written beside a
sidecar still runs in iree-run-replay.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import msgpack
import pytest

from amdgpu_cli.tooling.element_types import ElementType
from amdgpu_cli.tooling.io import format_buffer_view
from amdgpu_cli.tooling.values import Tensor

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("iree-run-module", "iree-run-replay", "amdgpu-run",
                                      "amdgpu-replay")),
    reason="IREE 3.13.0 tools and our commands must be on PATH")

# Results of several element types, ranks and counts.
MODELS = ("matmul", "softmax", "int_ops", "i8_ops", "f16_ops", "casts", "layernorm",
          "reductions", "conv2d", "i1_logic")


def _run(argv, **kw):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300,
                          **kw)


def _capture(tmp_path: Path, vmfb: Path, args, name: str = "ours.ireereplay") -> Path:
    path = tmp_path / name
    done = _run(["amdgpu-run", "--device=local-task", f"--module={vmfb}", *args,
                 f"--device_replay_output={path}", "--device_replay_results"])
    assert done.returncode == 0, done.stderr
    return path


def _printed_results(stdout: str) -> list[str]:
    """The buffer-view texts iree-run-module printed, in result order."""
    lines = stdout.splitlines()
    return [lines[i + 1] for i, line in enumerate(lines)
            if line.startswith("result[") and line.endswith("hal.buffer_view")]


@pytest.mark.parametrize("stem", MODELS)
def test_verify_reproduces_iree_results(stem, replay_cases, vmfbs, tmp_path):
    case = replay_cases[stem]
    iree = _run(["iree-run-module", "--device=local-task", f"--module={vmfbs[stem]}",
                 *case.args])
    assert iree.returncode == 0, iree.stderr
    path = _capture(tmp_path, vmfbs[stem], case.args)
    document = msgpack.unpackb(Path(f"{path}.results").read_bytes(), raw=False)
    kept = [format_buffer_view(Tensor.from_bytes(ElementType.parse(r["element_type"]),
                                                 r["shape"], r["data"]))
            for r in document["results"]]
    assert kept and kept == _printed_results(iree.stdout)
    for device in ("local-sync", "local-task"):
        done = _run(["amdgpu-replay", "run", f"--device={device}", "--verify", path])
        assert done.returncode == 0, done.stderr
        assert done.stdout == "[SUCCESS] all function outputs matched their expected values.\n"
    # The file beside the sidecar is still a replay IREE runs.
    assert _run(["iree-run-replay", "--device=local-task", path]).returncode == 0


def test_verify_reports_a_changed_result(replay_cases, vmfbs, tmp_path):
    case = replay_cases["matmul"]
    path = _capture(tmp_path, vmfbs["matmul"], case.args)
    sidecar = Path(f"{path}.results")
    document = msgpack.unpackb(sidecar.read_bytes(), raw=False)
    data = bytearray(document["results"][0]["data"])
    data[4:8] = struct.pack("<f", 1234.5)  # element 1 of the f32 result
    document["results"][0]["data"] = bytes(data)
    sidecar.write_bytes(msgpack.packb(document, use_bin_type=True))
    done = _run(["amdgpu-replay", "run", "--verify", path])
    assert done.returncode == 1
    assert done.stdout.startswith("[FAILED] result[0]: element at index 1 (")
    assert "does not match the expected (1234.5)" in done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("damage", ["missing", "garbage", "wrong_format", "foreign"])
def test_verify_bad_sidecar_is_one_line(damage, replay_cases, vmfbs, tmp_path):
    case = replay_cases["matmul"]
    path = _capture(tmp_path, vmfbs["matmul"], case.args)
    sidecar = Path(f"{path}.results")
    if damage == "missing":
        sidecar.unlink()
    elif damage == "garbage":
        sidecar.write_bytes(b"\xc1\xc1 not msgpack")
    elif damage == "wrong_format":
        sidecar.write_bytes(msgpack.packb({"format": "something-else", "version": 1}))
    else:  # the sidecar of another model's capture
        other = _capture(tmp_path, vmfbs["softmax"], replay_cases["softmax"].args,
                         "other.ireereplay")
        sidecar.write_bytes(Path(f"{other}.results").read_bytes())
    done = _run(["amdgpu-replay", "run", "--verify", path])
    assert done.returncode == 1, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "internal error" not in lines[0]


def test_results_flag_needs_an_output(replay_cases, vmfbs):
    case = replay_cases["matmul"]
    done = _run(["amdgpu-run", f"--module={vmfbs['matmul']}", *case.args,
                 "--device_replay_results"])
    assert done.returncode in (1, 2)
    assert len(done.stderr.strip().splitlines()) == 1

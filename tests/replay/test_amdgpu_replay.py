"""amdgpu over softhsa: a capture made by amdgpu-run replays through amdgpu-replay run with the
same dispatch log (acceptance 3).

softhsa logs every dispatch it consumes (kernel, grid, workgroup, segment sizes, kernarg bytes);
the capture run and the replay run each log into a file of their own. The logs must agree entry
for entry, in order, except for the binding pointers at the head of each kernarg segment (HAL
kernarg layout: 8 bytes per binding, then the constants): buffers live at other addresses in
another process. The number of bindings of each kernel comes from the capture's executable
metadata, so the comparison keeps every constant byte.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.replay.conftest import CASES

PYTHON_ENTRY = "import sys; from amdgpu_cli.cli.{0} import {1}; {1}(sys.argv[1:])"
AMDGPU_RUN = [sys.executable, "-c", PYTHON_ENTRY.format("main", "run_main")]
AMDGPU_REPLAY = [sys.executable, "-c", PYTHON_ENTRY.format("replay_entry", "main")]
MODELS = ("matmul", "softmax", "dynamic_shapes", "conv2d")


@pytest.fixture(scope="module")
def gfx942_vmfbs(tmp_path_factory):
    from corpus_util import compile_corpus

    if not (os.environ.get("IREE_COMPILE") or shutil.which("iree-compile")):
        pytest.skip("iree-compile not on PATH")
    cache = os.environ.get("IREE_CORPUS_CACHE")
    out_dir = Path(cache) / "amdgpu-gfx942" if cache else tmp_path_factory.mktemp("gfx942")
    return compile_corpus(out_dir, jobs=2, target="amdgpu-gfx942",
                          paths=[CASES[stem].mlir for stem in MODELS])


def _environment(directory: Path, name: str) -> tuple[dict, Path]:
    log = directory / f"{name}.jsonl"
    config = directory / f"{name}.json"
    config.write_text(json.dumps({"log": str(log)}))
    env = dict(os.environ)
    for variable in ("ROCR_VISIBLE_DEVICES", "IREE_HAL_AMDGPU_LIBHSA_PATH"):
        env.pop(variable, None)
    env.update(SOFTHSA_CONFIG=str(config), AMDGPU_LIBHSA_SKIP_SYSTEM="1")
    return env, log


def _log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _binding_counts(replay: Path) -> dict[str, int]:
    """{function name: binding count} from the capture's executable metadata."""
    from amdgpu_cli.replay.reader import ReplayFile, decode_metadata, decode_payload
    from amdgpu_cli.replay.schema import Op

    counts = {}
    with ReplayFile.open(replay) as f:
        for record in f.records():
            if record.operation_code == Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE:
                fields = decode_payload(record.payload_type, f.payload(record))
                for function in decode_metadata(fields["metadata"]):
                    counts[function["name"]] = function["binding_count"]
    return counts


@pytest.mark.parametrize("stem", MODELS)
def test_softhsa_capture_replays_with_the_same_dispatch_log(stem, gfx942_vmfbs, softhsa_lib,
                                                            tmp_path):
    replay = tmp_path / f"{stem}.ireereplay"
    env, captured_log = _environment(tmp_path, "capture")
    done = subprocess.run(
        [*AMDGPU_RUN, "--device=amdgpu", f"--amdgpu_libhsa_search_path={softhsa_lib}",
         f"--module={gfx942_vmfbs[stem]}", *CASES[stem].args, f"--device_replay_output={replay}"],
        capture_output=True, text=True, timeout=300, env=env)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    env, replayed_log = _environment(tmp_path, "replay")
    done = subprocess.run(
        [*AMDGPU_REPLAY, "run", "--device=amdgpu", f"--amdgpu_libhsa_search_path={softhsa_lib}",
         str(replay)], capture_output=True, text=True, timeout=300, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done.stderr
    captured, replayed = _log(captured_log), _log(replayed_log)
    bindings = _binding_counts(replay)
    assert any(e["kernel"] in bindings for e in captured)  # the model's kernels ran
    assert len(replayed) == len(captured)
    for a, b in zip(captured, replayed):
        pointers = 8 * bindings.get(a["kernel"], 0)
        for key in ("agent", "kernel", "grid", "workgroup", "kernarg_segment_size",
                    "group_segment_size", "private_segment_size", "dynamic_group_segment_size"):
            assert a[key] == b[key], (key, a, b)
        # The kernarg bytes after the binding pointers: constants (and, for the device
        # library's blit kernels, nothing is compared but the shape above).
        if pointers:
            assert a["kernarg"][2 * pointers:] == b["kernarg"][2 * pointers:], (a, b)

"""Replay fixtures: IREE 3.13.0's own captures of the corpus, the truth our replay tools are
judged against.

iree_captures:  session-scoped callable(stem, device="local-task") -> Capture: the corpus
                model's first RUN line run once by `iree-run-module --device=D
                --device_replay_output=F` (F cached per session; IREE_REPLAY_CACHE=DIR keeps
                them between sessions), with what that run printed.
replay_cases:   {stem: corpus Case}, one RUN line per model (the first).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from corpus_util import load_corpus

IREE_REPLAY_TOOLS = ("iree-run-module", "iree-dump-replay", "iree-run-replay",
                     "iree-benchmark-replay")


def iree_replay_tools_available() -> bool:
    return all(shutil.which(tool) for tool in IREE_REPLAY_TOOLS)


# One RUN line per corpus model: the first of each file.
CASES = {case.stem: case for case in reversed(load_corpus())}


@dataclass(frozen=True)
class Capture:
    path: Path       # the .ireereplay IREE wrote
    vmfb: Path       # the module it ran
    args: tuple      # the RUN line's arguments (--function, --input, ...)
    device: str
    stdout: str      # what iree-run-module printed (the results)


@pytest.fixture(scope="session")
def replay_cases():
    return CASES


@pytest.fixture(scope="session")
def iree_captures(vmfbs, tmp_path_factory):
    if not iree_replay_tools_available():
        pytest.skip("IREE 3.13.0 replay tools (iree-run-module, iree-dump-replay, "
                    "iree-run-replay, iree-benchmark-replay) not on PATH")
    cache = os.environ.get("IREE_REPLAY_CACHE")
    out_dir = Path(cache) if cache else tmp_path_factory.mktemp("iree_captures")
    out_dir.mkdir(parents=True, exist_ok=True)
    made: dict[tuple[str, str], Capture] = {}

    def get(stem: str, device: str = "local-task") -> Capture:
        key = (stem, device)
        if key in made:
            return made[key]
        case = CASES[stem]
        vmfb = vmfbs[stem]
        path = out_dir / f"{stem}.{device}.ireereplay"
        done = subprocess.run(
            ["iree-run-module", f"--device={device}", f"--module={vmfb}", *case.args,
             f"--device_replay_output={path}"],
            capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        made[key] = Capture(path, vmfb, tuple(case.args), device, done.stdout)
        return made[key]

    return get

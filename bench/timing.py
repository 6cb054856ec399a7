"""Helpers the bench scripts share: finding console scripts, and timing whole processes.

Timed processes keep Python bytecode (under WORK/pycache, so the source tree stays clean) even where
PYTHONDONTWRITEBYTECODE is set, so they load it as any installed package does; warm-up runs write it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import time
from pathlib import Path


class BenchError(RuntimeError):
    """A one-line reason the benchmark cannot run."""


def console_script(name: str) -> str:
    """`name` from this interpreter's scripts directory (no shell shims in front), else PATH."""
    candidate = Path(sysconfig.get_path("scripts")) / name
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    found = shutil.which(name)
    if not found:
        raise BenchError(f"{name} not found")
    return found


def child_env(work: Path, bytecode_cache: bool = True) -> dict[str, str]:
    """The environment timed processes run in (see the module docstring)."""
    env = dict(os.environ)
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str((work / "pycache").resolve())
    return env


def run_once(cmd: list[str], env: dict) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start, proc.returncode


def best_of(cmd: list[str], runs: int, env: dict) -> float | None:
    """Best wall time of `runs` runs after a warm-up; None when the command fails."""
    _, code = run_once(cmd, env)
    if code != 0:
        return None
    return min(run_once(cmd, env)[0] for _ in range(runs))


def best_of_pair(ours: list[str], theirs: list[str], runs: int, env: dict):
    """best_of for two commands, their runs alternated (one warm-up each first)."""
    codes = [run_once(ours, env)[1], run_once(theirs, env)[1]]
    best = [float("inf"), float("inf")]
    for _ in range(runs):
        for i, cmd in enumerate((ours, theirs)):
            if codes[i] == 0:
                best[i] = min(best[i], run_once(cmd, env)[0])
    return tuple(None if code else b for code, b in zip(codes, best))


def outputs_match(ours: list[str], theirs: list[str], env: dict) -> bool | None:
    """Whether both commands print the same stdout (None when ours fails)."""
    a = subprocess.run(ours, capture_output=True, env=env)
    b = subprocess.run(theirs, capture_output=True, env=env)
    if a.returncode != 0:
        return None
    return a.stdout == b.stdout

#!/usr/bin/env python3
"""Run every corpus case compiled for an AMD GPU on softhsa executing the machine code
(SOFTHSA_EXECUTE=1) and compare with local-sync: the progress meter of issue 17's interpreter
(tests/softhsa/src/isa.c).

  python scripts/softhsa_corpus.py [--target=gfx942|gfx1100] [FILTER]

Needs the corpus compiled (build/corpus, build/corpus/amdgpu-<target>: tests/corpus_util.py) and
softhsa built (`python -m tests.softhsa.build DIR`; SOFTHSA_DIR names it, default build/softhsa).
Prints OK / FAIL per case (a failure with the softhsa error line, or the first differing output
line) and the totals. Floats match within iree-run-module's default --expected_output
thresholds (OK~); everything else must be the same text.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def close(ours: str, reference: str) -> bool:
    """The same text, or the same but for floats within iree-run-module's default
    --expected_output thresholds (absolute 1e-4 for f32 / f64, 1e-3 for f16 and bf16; a NaN's
    sign is not compared)."""
    if ours == reference:
        return True
    import re

    a_lines, b_lines = ours.splitlines(), reference.splitlines()
    if len(a_lines) != len(b_lines):
        return False
    for a_line, b_line in zip(a_lines, b_lines):
        if a_line == b_line:
            continue
        threshold = 1e-3 if re.search(r"x(f16|bf16)=", b_line) else 1e-4
        a_tokens = re.split(r"([\s\[\]=]+)", a_line)
        b_tokens = re.split(r"([\s\[\]=]+)", b_line)
        if len(a_tokens) != len(b_tokens):
            return False
        for x, y in zip(a_tokens, b_tokens):
            if x == y:
                continue
            try:
                fx, fy = float(x.replace("INF", "inf")), float(y.replace("INF", "inf"))
            except ValueError:
                return False
            if fx != fx and fy != fy:
                continue
            if not abs(fx - fy) <= threshold:
                return False
    return True


def main(argv: list[str]) -> int:
    import json
    import tempfile

    sys.path[:0] = [str(REPO / "tests"), str(REPO)]
    from corpus_util import load_corpus
    from tests.softhsa.agents import AGENTS

    target = next((a.split("=", 1)[1] for a in argv if a.startswith("--target=")), "gfx942")
    argv = [a for a in argv if not a.startswith("--target=")]
    only = argv[0] if argv else ""
    config = Path(tempfile.mkdtemp()) / "softhsa.json"
    config.write_text(json.dumps({"agents": [AGENTS[target]]}))
    softhsa = os.environ.get("SOFTHSA_DIR", str(REPO / "build" / "softhsa"))
    if not (Path(softhsa) / "libhsa-runtime64.so").is_file():
        subprocess.run([sys.executable, "-m", "tests.softhsa.build", softhsa], cwd=REPO,
                       check=True, capture_output=True)
    env = dict(os.environ, SOFTHSA_EXECUTE="1", SOFTHSA_CONFIG=str(config))
    env.pop("ROCR_VISIBLE_DEVICES", None)
    ok = bad = 0
    for case in load_corpus():
        if only and only not in case.id:
            continue
        gpu = REPO / f"build/corpus/amdgpu-{target}" / f"{case.stem}.vmfb"
        cpu = REPO / "build/corpus" / f"{case.stem}.vmfb"
        if not gpu.is_file() or not cpu.is_file():
            continue
        ours = subprocess.run(["amdgpu-run", "--device=amdgpu", f"--module={gpu}",
                               f"--amdgpu_libhsa_search_path={softhsa}", *case.args],
                              capture_output=True, text=True, env=env, timeout=300)
        reference = subprocess.run(["amdgpu-run", "--device=local-sync", f"--module={cpu}",
                                    *case.args], capture_output=True, text=True, timeout=300)
        if ours.returncode == reference.returncode and close(ours.stdout, reference.stdout):
            ok += 1
            print(f"OK   {case.id}" if ours.stdout == reference.stdout else
                  f"OK~  {case.id} (floats within tolerance)")
            continue
        bad += 1
        why = next((line for line in ours.stderr.splitlines() if "softhsa" in line), "")
        if not why:
            pairs = zip(ours.stdout.splitlines(), reference.stdout.splitlines())
            why = next((f"{a[:70]} (local-sync: {b[:70]})" for a, b in pairs if a != b),
                       "output differs")
        print(f"FAIL {case.id}: {why[:200]}")
    print(f"{ok} match, {bad} differ")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""amdgpu-run's usual path runs without numpy, and still prints what iree-run-module prints.

`import numpy` costs more start-up time than iree-run-module's whole run, so the CLI loads it only
where it is needed (.npy files, narrow floats, scalars, --expected_output, the Python API). This
test runs every corpus RUN line whose inputs are written inline and whose arguments and results
are tensors of plain element types (i1/i8/i16/i32/i64, f32, f64) through the console entry point
in one child process where numpy cannot be imported at all (`sys.modules["numpy"] = None`): any
`import numpy` on the path fails the run, and every stdout must equal iree-run-module's.
"""

from __future__ import annotations

import json
import subprocess
import sys

from corpus_util import CORPUS_DIR, load_corpus, parse_signatures

PLAIN_TYPES = {"i1", "i8", "i16", "i32", "i64", "si8", "si16", "si32", "si64", "ui8", "ui16",
               "ui32", "ui64", "f32", "f64"}

CHILD = """
import contextlib, io, json, sys
sys.modules["numpy"] = None  # any `import numpy` from here on raises ImportError
from amdgpu_cli.cli.main import run_main
outcomes = []
for argv in json.load(sys.stdin):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            run_main(argv)
            code = 0
        except SystemExit as e:
            code = e.code or 0
    outcomes.append((code, out.getvalue(), err.getvalue()))
json.dump(outcomes, sys.stdout)
"""


def _plain_tensor(type_str: str) -> bool:
    return type_str.startswith("tensor<") and type_str[len("tensor<"):-1].split("x")[-1] in PLAIN_TYPES


def plain_cases(scalars: bool = False):
    """Corpus cases with inline inputs, tensor arguments and tensor results of plain types; with
    `scalars`, the cases with at least one scalar argument or result of a plain type instead."""
    signatures = {}
    for path in sorted(CORPUS_DIR.glob("*.mlir")):
        signatures[path.stem] = {s.name: s for s in parse_signatures(path)}
    out = []
    for case in load_corpus():
        sig = signatures[case.stem].get(case.function)
        if sig is None:
            continue
        types = sig.args + sig.results
        if scalars:
            if not all(t in PLAIN_TYPES or _plain_tensor(t) for t in types) or all(
                    _plain_tensor(t) for t in types):
                continue
        elif not all(_plain_tensor(t) for t in types):
            continue
        if any(not (a.startswith("--function=") or a.startswith("--input=")) for a in case.args):
            continue
        if any(value[:1] in "@+" for value in case.inputs):
            continue
        out.append(case)
    return out


def test_plain_runs_import_no_numpy_and_match_iree(vmfbs, iree_run):
    cases = plain_cases()
    covered = {t for c in cases for t in _element_types(c)}
    # The filter must keep a real sample, not silently select nothing.
    assert {"f32", "i32", "i64", "i8", "i16", "i1"} <= covered, covered
    argvs = [["--device=local-task", f"--module={vmfbs[c.stem]}", *c.args] for c in cases]
    child = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(argvs),
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stderr[-2000:]
    outcomes = json.loads(child.stdout)
    for case, (code, stdout, stderr) in zip(cases, outcomes):
        ref = iree_run(["--device=local-sync", f"--module={vmfbs[case.stem]}", *case.args])
        assert (code, stdout) == (ref.returncode, ref.stdout), f"{case.id}: {stderr}"


def test_scalar_runs_import_no_numpy_and_match_iree(vmfbs, iree_run):
    """The same, for the runs with scalar arguments or results (`--input=2.5`, `result[0]:
    i32=7`): scalars travel as tooling Scalars, not numpy scalars."""
    cases = plain_cases(scalars=True)
    scalar_types = {t for c in cases for t in _signature_types(c) if t in PLAIN_TYPES}
    assert {"i32", "i64", "f32", "f64"} <= scalar_types, scalar_types
    argvs = [["--device=local-task", f"--module={vmfbs[c.stem]}", *c.args] for c in cases]
    child = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(argvs),
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stderr[-2000:]
    outcomes = json.loads(child.stdout)
    assert len(outcomes) == len(cases) > 50
    for case, (code, stdout, stderr) in zip(cases, outcomes):
        ref = iree_run(["--device=local-sync", f"--module={vmfbs[case.stem]}", *case.args])
        assert (code, stdout) == (ref.returncode, ref.stdout), f"{case.id}: {stderr}"


def _signature_types(case) -> list[str]:
    sig = {s.name: s for s in parse_signatures(case.mlir)}[case.function]
    return [*sig.args, *sig.results]


def _element_types(case) -> set[str]:
    sig = {s.name: s for s in parse_signatures(case.mlir)}[case.function]
    return {t[len("tensor<"):-1].split("x")[-1] for t in sig.args + sig.results}

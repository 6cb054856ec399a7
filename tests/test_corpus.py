"""Validate the amdgpu-run test corpus (tests/corpus/*.mlir) itself.

Every model is compiled for llvm-cpu (two at a time) and every `// RUN:` line
is run with `iree-run-module --device=local-sync`; each must exit 0 and print
at least one `result[` line. Structural tests check the RUN lines and that the
corpus covers the element types and features the amdgpu-run executor needs.
Our own executor is later compared against these same runs.

Set IREE_CORPUS_CACHE=DIR to compile into / reuse a persistent DIR.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from corpus_util import CORPUS_DIR, Signature, load_corpus, model_paths, parse_signatures

RUN_TIMEOUT_S = 60
CASES = load_corpus()
ELEMENT_TYPES = {"i1", "i8", "i16", "i32", "i64", "f16", "f32", "f64"}
SCALAR_TYPES = {"i32", "i64", "f32", "f64"}


def _tool(env_var: str, name: str) -> str | None:
    return os.environ.get(env_var) or shutil.which(name)


@pytest.fixture(scope="session")
def run_module():
    binary = _tool("IREE_RUN_MODULE", "iree-run-module")
    if not binary:
        pytest.skip("iree-run-module not on PATH")

    def run(vmfb, args):
        return subprocess.run(
            [binary, "--device=local-sync", f"--module={vmfb}", *args],
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            timeout=RUN_TIMEOUT_S,
        )

    return run


# ---------------------------------------------------------------------------
# The corpus compiles and every RUN line runs.


def test_every_model_compiles(corpus_build):
    vmfbs, errors = corpus_build
    assert not errors, "\n".join(errors.values())
    assert set(vmfbs) == {p.stem for p in model_paths()}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_run_line(case, corpus_build, run_module):
    vmfbs, errors = corpus_build
    if case.stem in errors:
        pytest.fail(f"model did not compile: {errors[case.stem]}")
    proc = run_module(vmfbs[case.stem], case.args)
    detail = f"args: {case.args}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-2000:]}"
    assert proc.returncode == 0, detail
    assert proc.stdout.startswith(f"EXEC @{case.function}\n"), detail
    assert re.search(r"^result\[0\]: \S", proc.stdout, re.M), detail


# ---------------------------------------------------------------------------
# Structure of the corpus files.


def test_corpus_size():
    paths = model_paths()
    assert len(paths) >= 25
    assert (CORPUS_DIR / "README.md").is_file()
    readme = (CORPUS_DIR / "README.md").read_text()
    missing = [p.name for p in paths if p.name not in readme]
    assert not missing, f"not described in tests/corpus/README.md: {missing}"


def test_run_lines_are_well_formed():
    by_model: dict = {}
    for case in CASES:
        by_model.setdefault(case.mlir, []).append(case)
        assert all(a.startswith("--") for a in case.args), (
            f"{case.id}: every RUN argument must be a --flag (quote inputs with spaces): {case.args}"
        )
        assert all(a.startswith(("--function=", "--input=")) for a in case.args), case.id
    for path in model_paths():
        assert path in by_model, f"{path.name}: no RUN line"
        public = {s.name: s for s in parse_signatures(path) if s.public}
        run_funcs = {c.function for c in by_model[path]}
        assert run_funcs <= set(public), f"{path.name}: RUN line names an unknown export"
        assert set(public) <= run_funcs, f"{path.name}: exports never run: {set(public) - run_funcs}"
        for case in by_model[path]:
            n_args = len(public[case.function].args)
            assert len(case.inputs) == n_args, f"{case.id}: {len(case.inputs)} inputs for {n_args} arguments"


def test_input_grammar_variety():
    inputs = [i for c in CASES for i in c.inputs]
    scalar = [i for i in inputs if "=" not in i]
    tensors = [i for i in inputs if "=" in i]
    assert any(re.fullmatch(r"-?[0-9.e+-]+", i) for i in scalar), "decimal scalar"
    assert any(i.startswith("0x") for i in scalar), "hex scalar"
    assert any(i.startswith("-") for i in scalar), "negative scalar"
    assert any(i == "(ignored)" for i in inputs), "(ignored) scalar"
    assert any(re.fullmatch(r"[0-9x]+[a-z0-9]+=\S+", i) for i in tensors), "splat tensor"
    assert any("[" in i for i in tensors), "bracketed tensor"
    assert any(re.search(r"=.*\b0x[0-9a-fA-F]+", i) for i in tensors), "hex tensor element"
    assert any(re.search(r"= ?-|\s-[0-9]", i) for i in tensors), "negative tensor element"
    assert any(re.match(r"[a-z]+[0-9]+=", i) for i in tensors), "rank-0 / no shape"
    assert any(re.match(r"0x", i) for i in tensors), "empty (0-sized) tensor"


# ---------------------------------------------------------------------------
# Coverage of what the amdgpu-run executor must handle.


def _signatures() -> list[Signature]:
    return [s for p in model_paths() for s in parse_signatures(p) if s.public]


def _corpus_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in model_paths())


def test_element_type_coverage():
    sigs = _signatures()
    arg_types = {Signature.element_type(t) for s in sigs for t in s.args}
    result_types = {Signature.element_type(t) for s in sigs for t in s.results}
    assert ELEMENT_TYPES <= arg_types, f"missing argument element types {ELEMENT_TYPES - arg_types}"
    assert ELEMENT_TYPES <= result_types, f"missing result element types {ELEMENT_TYPES - result_types}"


def test_signature_feature_coverage():
    sigs = _signatures()
    all_types = [t for s in sigs for t in (*s.args, *s.results)]
    assert any(Signature.is_dynamic(t) for t in all_types), "dynamic dimension"
    assert any(Signature.is_dynamic(t) for s in sigs for t in s.results), "dynamic result"
    scalar_args = {t for s in sigs for t in s.args if not t.startswith("tensor<")}
    scalar_results = {t for s in sigs for t in s.results if not t.startswith("tensor<")}
    assert SCALAR_TYPES <= scalar_args, f"scalar arguments missing {SCALAR_TYPES - scalar_args}"
    assert SCALAR_TYPES <= scalar_results, f"scalar results missing {SCALAR_TYPES - scalar_results}"
    assert any(len(s.results) >= 3 for s in sigs), "several results"
    assert any(not s.args for s in sigs), "export without arguments"
    assert any(t.startswith("tensor<") and "x" not in t[7:] for t in all_types), "rank-0 tensor"


@pytest.mark.parametrize(
    "needle",
    [
        "scf.while",
        "scf.if",
        "scf.for",
        "util.global private mutable",
        "util.global.load",
        "util.global.store",
        "util.initializer",
        "linalg.matmul",
        "linalg.batch_matmul",
        "linalg.conv_2d_nhwc_hwcf",
        "linalg.softmax",
        "math.rsqrt",
        "linalg.transpose",
        "tensor.expand_shape",
        "tensor.collapse_shape",
        "tensor.pad",
        "tensor.extract_slice",
        "tensor.insert_slice",
        "tensor.extract",
        "linalg.broadcast",
        "math.fpowi",
        "math.fma",
        "arith.bitcast",
        "arith.uitofp",
        "arith.fptosi",
        "arith.divui",
        "arith.remsi",
        "arith.shrui",
        'dense<"0x',
    ],
)
def test_op_coverage(needle):
    assert needle in _corpus_text()


def test_large_constant():
    """At least one dense constant of 64 KB or more."""
    sizes = [len(m.group(1)) // 2 for m in re.finditer(r'dense<"0x([0-9A-Fa-f]+)">', _corpus_text())]
    assert sizes and max(sizes) >= 64 * 1024

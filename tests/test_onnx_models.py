"""Real models: `--parameters` (irpa, gguf, safetensors) and models imported from ONNX.

The corpus is tests/onnx_models.py: a small CNN, a transformer encoder block and a 4-layer encoder
of 12.6 M parameters, written as ONNX graphs with seeded random weights, imported with
`iree-import-onnx --externalize-params` (weights in NAME.irpa, scope `model`), the same weights
also written as NAME.safetensors and NAME.gguf under the same keys, and compiled for llvm-cpu;
plus modules whose weights `iree-compile --iree-parameter-export` moved into an archive.

Checked, against iree-run-module 3.13.0 run on the same files:
  - every model prints byte for byte what iree-run-module prints, with `--parameters=model=FILE`,
    on local-sync and local-task, with `--parameter_mode=preload` and `--parameter_mode=file`
    (amdgpu-run run as a process, as a user runs it);
  - the Python API (`load_module(vmfb, device=..., parameters={"model": path})`) returns the
    arrays iree-run-module writes with `--output=@FILE.npy`;
  - one model's weights as .irpa, .gguf and .safetensors give identical output (iree-run-module's
    .npy files byte for byte, and amdgpu-run's stdout for each format);
  - modules built with --iree-parameter-export print what iree-run-module prints;
  - the 12.6 M encoder, compiled for gfx942, runs on `--device=amdgpu` over softhsa to
    completion (exit 0; softhsa does not compute IREE's kernels, so its numbers are not checked).

Set IREE_MODEL_CACHE=DIR to keep the imported and compiled models between sessions (the 12.6 M
encoder takes the longest; `python tests/onnx_models.py DIR` builds the llvm-cpu ones).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("gguf")
pytest.importorskip("safetensors")

import onnx_models  # noqa: E402
from onnx_models import FUNCTION, MODELS, SCOPE  # noqa: E402

DEVICES = ("local-sync", "local-task")
MODES = ("preload", "file")
FORMATS = ("irpa", "safetensors", "gguf")
EXPORTED = ("cnn", "encoder_block")  # graphs also compiled with --iree-parameter-export
RUN_TIMEOUT_S = 300

# `amdgpu-run` (pyproject: amdgpu_cli.cli.main:run_main) on this interpreter.
AMDGPU_RUN = [sys.executable, "-c",
              "import sys; from amdgpu_cli.cli.main import run_main; run_main(sys.argv[1:])"]


def _have(tool: str) -> bool:
    return bool((Path(sys.executable).parent / tool).is_file() or shutil.which(tool))


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory) -> Path:
    for tool in ("iree-import-onnx", "iree-compile", "iree-run-module"):
        if not _have(tool):
            pytest.skip(f"{tool} not on PATH")
    cache = os.environ.get("IREE_MODEL_CACHE")
    return Path(cache) if cache else tmp_path_factory.mktemp("onnx_models")


@pytest.fixture(scope="session")
def model(model_dir):
    """`model(name, target="llvm-cpu") -> onnx_models.Model`, built (or found cached) once."""
    built: dict = {}

    def get(name: str, target: str = "llvm-cpu") -> onnx_models.Model:
        if (name, target) not in built:
            built[name, target] = onnx_models.build(name, model_dir, target)
        return built[name, target]
    return get


@pytest.fixture(scope="session")
def exported_model(model_dir):
    built: dict = {}

    def get(name: str) -> onnx_models.Exported:
        if name not in built:
            built[name] = onnx_models.exported(name, model_dir)
        return built[name]
    return get


@pytest.fixture(scope="session")
def reference(iree_run, tmp_path_factory):
    """`reference(args) -> (stdout, [output .npy bytes])`: iree-run-module's run, once per args,
    failing the test when iree-run-module fails (the IREE side must work for every case)."""
    directory = tmp_path_factory.mktemp("iree_outputs")
    cache: dict = {}

    def get(args: list[str], outputs: int = 1):
        key = tuple(args)
        if key not in cache:
            files = [directory / f"{len(cache)}-{i}.npy" for i in range(outputs)]
            proc = iree_run([*args, *[f"--output=@{f}" for f in files]])
            assert proc.returncode == 0, f"iree-run-module {' '.join(args)}: {proc.stderr}"
            printed = iree_run(args)
            assert printed.returncode == 0, printed.stderr
            cache[key] = (printed.stdout, [f.read_bytes() for f in files])
        return cache[key]
    return get


def _ours(args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*AMDGPU_RUN, *args], capture_output=True, text=True, env=env,
                          timeout=RUN_TIMEOUT_S)


def _npy(data: bytes) -> np.ndarray:
    import io

    return np.load(io.BytesIO(data))


# -- the corpus itself -----------------------------------------------------------------------------

def test_corpus_shapes():
    """The models are what the issue asks for: the encoder is 'about 12 M parameters'."""
    assert 11_000_000 <= onnx_models.parameter_count("encoder4") <= 13_000_000
    ops = {n.op_type for n in onnx_models.onnx_model("encoder_block")[0].graph.node}
    assert {"LayerNormalization", "Softmax", "Erf", "MatMul", "Transpose", "Add"} <= ops
    ops = {n.op_type for n in onnx_models.onnx_model("cnn")[0].graph.node}
    assert {"Conv", "Relu", "MaxPool", "GlobalAveragePool", "Gemm"} <= ops
    # Seeded: two builds write the same graph.
    assert onnx_models.onnx_model("cnn")[0].SerializeToString() == \
        onnx_models.onnx_model("cnn")[0].SerializeToString()


@pytest.mark.parametrize("name", MODELS)
def test_archives_hold_the_module_keys(model, name):
    """The module reads parameters by key; the three archives hold exactly those keys."""
    import gguf
    from safetensors.numpy import load_file

    m = model(name)
    keys = onnx_models.parameter_keys(m.mlir)
    arrays = onnx_models.weights(onnx_models.onnx_model(name)[0])
    assert keys and set(keys) <= set(arrays)
    stored = load_file(str(m.safetensors))
    assert sorted(stored) == sorted(keys)
    for key in keys:
        np.testing.assert_array_equal(stored[key], arrays[key])
    reader = gguf.GGUFReader(str(m.gguf))
    assert sorted(t.name for t in reader.tensors) == sorted(keys)
    for t in reader.tensors:
        assert bytes(t.data.tobytes()) == arrays[t.name].tobytes()


# -- amdgpu-run against iree-run-module ------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", MODELS)
def test_cli_matches_iree(model, reference, name, device, mode):
    m = model(name)
    args = [f"--device={device}", *m.run_args("irpa"), f"--parameter_mode={mode}"]
    expected, _ = reference(args)
    assert expected.startswith(f"EXEC @{FUNCTION}\nresult[0]: hal.buffer_view\n")
    proc = _ours(args)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == expected


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", MODELS)
def test_python_api_matches_iree(model, reference, name, device):
    import amdgpu_cli

    m = model(name)
    _, (expected,) = reference([f"--device={device}", *m.run_args("irpa")])
    x = np.load(m.input)
    with amdgpu_cli.load_module(m.vmfb, device=device, parameters={SCOPE: str(m.irpa)}) as module:
        got = getattr(module, FUNCTION)(x)
        again = getattr(module, FUNCTION)(x)  # parameters stay loaded between calls
    want = _npy(expected)
    assert np.asarray(got).dtype == want.dtype and np.asarray(got).shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(again), want)


# -- one model's weights in three formats ----------------------------------------------------------

@pytest.mark.parametrize("name", MODELS)
def test_formats_give_identical_iree_output(model, reference, name):
    """IREE's own reading of the three archives agrees (so the files are right)."""
    m = model(name)
    runs = {fmt: reference(["--device=local-sync", *m.run_args(fmt)]) for fmt in FORMATS}
    assert runs["safetensors"] == runs["irpa"]
    assert runs["gguf"] == runs["irpa"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_formats_give_identical_output(model, reference, fmt, mode):
    m = model("encoder_block")
    expected, _ = reference(["--device=local-sync", *m.run_args("irpa")])
    proc = _ours(["--device=local-sync", *m.run_args(fmt), f"--parameter_mode={mode}"])
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == expected


@pytest.mark.parametrize("fmt", ("safetensors", "gguf"))
def test_python_api_reads_every_format(model, reference, fmt):
    import amdgpu_cli

    m = model("cnn")
    _, (expected,) = reference(["--device=local-sync", *m.run_args("irpa")])
    with amdgpu_cli.load_module(m.vmfb, device="local-sync",
                                parameters={SCOPE: str(m.parameters(fmt))}) as module:
        got = getattr(module, FUNCTION)(np.load(m.input))
    np.testing.assert_array_equal(np.asarray(got), _npy(expected))


# -- modules whose parameters iree-compile exported ------------------------------------------------

# iree-run-module 3.13.0 on local-task often fails loading encoder_block-exported (whose
# layer-norm weights the export stored as splat entries), with either --parameter_mode:
# "transient_buffer.c:80: FAILED_PRECONDITION; transient buffer has not been committed" from the
# initializer's hal.fence.await -- a race in IREE's runtime (it passes now and then; every
# local-sync run we tried passed). Where it fails, amdgpu-run is compared with IREE's local-sync
# run instead.
IREE_SPLAT_RACE = "transient buffer has not been committed"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", EXPORTED)
def test_exported_parameters_match_iree(exported_model, reference, name, device, mode):
    e = exported_model(name)
    args = [f"--device={device}", *e.run_args(), f"--parameter_mode={mode}"]
    try:
        expected, _ = reference(args)
    except AssertionError as failure:
        if device != "local-task" or IREE_SPLAT_RACE not in str(failure):
            raise
        expected, _ = reference(["--device=local-sync", *args[1:]])
    # The exported module computes what the module with inline weights computes.
    inline, _ = reference(["--device=local-sync", f"--module={e.inline_vmfb}",
                           f"--function={e.function}", f"--input=@{e.input}"])
    assert expected == inline
    ours = _ours(args)
    assert (ours.returncode, ours.stderr) == (0, "")
    assert ours.stdout == expected


# -- the 12.6 M encoder on the amdgpu driver, over softhsa -----------------------------------------

def test_encoder4_runs_on_amdgpu_over_softhsa(model, softhsa_lib, softhsa_env):
    m = model("encoder4", "amdgpu-gfx942")
    for mode in MODES:
        proc = _ours(["--device=amdgpu", f"--amdgpu_libhsa_search_path={softhsa_lib}",
                      *m.run_args("irpa"), f"--parameter_mode={mode}"],
                     env=softhsa_env(AMDGPU_LIBHSA_SKIP_SYSTEM="1"))
        assert (proc.returncode, proc.stderr) == (0, ""), mode
        assert proc.stdout.startswith(f"EXEC @{FUNCTION}\nresult[0]: hal.buffer_view\n1x32x16xf32=")

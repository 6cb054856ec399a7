"""Real-shaped models as ONNX graphs, their weights as parameter files, and their modules.

The corpus of tests/test_onnx_models.py and bench/model_speed.py. Each model is an ONNX graph
written here with `onnx.helper`, its weights drawn from a seeded numpy generator (so every build
writes the same bytes):

  cnn            a small CNN: two Conv+Relu (+MaxPool), GlobalAveragePool, Flatten, Gemm
                 (input 1x3x32x32, 10 logits)
  encoder_block  one transformer encoder block: LayerNormalization, 4-head self-attention
                 (MatMul, Reshape, Transpose, Softmax), residuals, a GELU feed-forward
                 (input 1x16x64)
  encoder4       four such blocks, d_model 512, 8 heads, feed-forward 2048, and an output
                 projection: 12.6 M parameters (input 1x32x512)

Every model is imported with `iree-import-onnx --externalize-params --num-elements-threshold=8
--save-params-to=NAME.irpa` (scope `model`; every weight and bias a parameter, the scalars and
shapes left inline), so its module's
globals name parameters by their ONNX initializer names, and compiled for llvm-cpu (the flags of
examples/compile.py). The same weights are also written, under the same keys, as NAME.safetensors
(the `safetensors` package) and NAME.gguf (the `gguf` package); the one module reads any of the
three. The model's input is NAME.input.npy (seeded too).

`exported(name)` builds the other kind of parameter module: the imported module with its weights
put back inline (as public globals, see _inline_weights) and compiled with
`--iree-parameter-export=model=NAME-exported.irpa --iree-parameter-export-minimum-size=0`, which
moves them into that archive and leaves parameter references in NAME-exported.vmfb; the inline
module is compiled as is too (NAME-inline.vmfb, needing no parameters), for reference.

Everything lands in one directory: $IREE_MODEL_CACHE, or the caller's. A build is redone when its
key (a hash of the ONNX bytes, the tool paths and the flags) changes.

Library use (import as onnx_models; tests put tests/ on sys.path):
  MODELS                                     the names above
  build(name, out_dir, target="llvm-cpu") -> Model   (vmfb, irpa, safetensors, gguf, input, ...)
  exported(name, out_dir) -> Exported                 (vmfb, irpa, inline_vmfb, input, function)
  python tests/onnx_models.py [OUT_DIR [NAME...]]     build, then print iree-run-module's output
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from examples.compile import (  # noqa: E402
    CompileError, _first_error_line, iree_compile_binary, target_flags,
)

MODELS = ("cnn", "encoder_block", "encoder4")
SCOPE = "model"
FUNCTION = "main"  # the ONNX graph's name, which iree-import-onnx makes the function's
OPSET = 17
# Initializers of at least this many elements become parameters (every weight and bias); scalars
# and shapes stay in the module.
EXTERNALIZE_MIN_ELEMENTS = 8
IMPORT_TIMEOUT_S = 300
COMPILE_TIMEOUT_S = 900  # encoder4 for gfx942 is the slowest


class ModelError(RuntimeError):
    """A model could not be imported, compiled or written; str() is a single line."""


# -- ONNX graphs -----------------------------------------------------------------------------------

class _Graph:
    """Nodes and seeded initializers of one graph under construction."""

    def __init__(self, seed: int):
        import numpy as np

        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.weights: dict = {}  # name -> numpy array, in creation order
        self._n = 0
        self._consts: set = set()

    def tmp(self, hint: str) -> str:
        self._n += 1
        return f"{hint}_{self._n}"

    def weight(self, name: str, shape, scale: float | None = None, value: float | None = None):
        import numpy as np

        if value is not None:
            array = np.full(shape, value, dtype=np.float32)
        else:
            fan_in = shape[-1] if len(shape) == 1 else int(np.prod(shape[:-1])) if len(shape) == 2 \
                else int(np.prod(shape[1:]))
            s = scale if scale is not None else 1.0 / max(1, fan_in) ** 0.5
            array = (self.rng.standard_normal(shape) * s).astype(np.float32)
        self.weights[name] = array
        return name

    def scalar(self, name: str, value: float) -> str:
        """A shared f32 scalar initializer (made once)."""
        import numpy as np

        self.weights.setdefault(name, np.asarray(value, dtype=np.float32))
        return name

    def const_i64(self, name: str, values) -> str:
        """An i64 Constant node (not an initializer: shapes stay in the module, and GGUF as IREE
        reads it has no i64 tensors)."""
        import numpy as np
        from onnx import helper, numpy_helper

        if name not in self._consts:
            self._consts.add(name)
            self.nodes.append(helper.make_node(
                "Constant", [], [name],
                value=numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)))
        return name

    def op(self, op_type: str, inputs, hint: str | None = None, **attrs) -> str:
        from onnx import helper

        out = self.tmp(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def model(self, x_name: str, x_shape, y_name: str, y_shape):
        from onnx import TensorProto, helper, numpy_helper

        self.nodes.append(helper.make_node("Identity", [y_name], ["output"]))
        graph = helper.make_graph(
            self.nodes, FUNCTION,
            [helper.make_tensor_value_info(x_name, TensorProto.FLOAT, list(x_shape))],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT, list(y_shape))],
            initializer=[numpy_helper.from_array(a, n) for n, a in self.weights.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="amdgpu_cli tests/onnx_models.py")
        model.ir_version = 8
        return model


def _cnn():
    g = _Graph(seed=1)
    h = g.op("Conv", ["input", g.weight("conv1.weight", (16, 3, 3, 3)),
                      g.weight("conv1.bias", (16,), scale=0.1)], pads=[1, 1, 1, 1])
    h = g.op("Relu", [h])
    h = g.op("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    h = g.op("Conv", [h, g.weight("conv2.weight", (32, 16, 3, 3)),
                      g.weight("conv2.bias", (32,), scale=0.1)], pads=[1, 1, 1, 1])
    h = g.op("Relu", [h])
    h = g.op("GlobalAveragePool", [h])
    h = g.op("Flatten", [h], axis=1)
    y = g.op("Gemm", [h, g.weight("fc.weight", (10, 32)), g.weight("fc.bias", (10,), scale=0.1)],
             transB=1)
    return g.model("input", (1, 3, 32, 32), y, (1, 10)), (1, 3, 32, 32)


def _gelu(g: _Graph, x: str) -> str:
    # 0.5 * x * (1 + erf(x / sqrt(2))), opset 17 has no Gelu.
    half, one = g.scalar("const.half", 0.5), g.scalar("const.one", 1.0)
    rsqrt2 = g.scalar("const.rsqrt2", 2 ** -0.5)
    e = g.op("Erf", [g.op("Mul", [x, rsqrt2])])
    return g.op("Mul", [g.op("Mul", [x, half]), g.op("Add", [e, one])], hint="gelu")


def _encoder_layer(g: _Graph, x: str, prefix: str, seq: int, d: int, heads: int, ff: int) -> str:
    hd = d // heads
    p = prefix

    def linear(h, name, n_in, n_out):
        w = g.weight(f"{p}.{name}.weight", (n_in, n_out))
        b = g.weight(f"{p}.{name}.bias", (n_out,), scale=0.02)
        return g.op("Add", [g.op("MatMul", [h, w]), b])

    def layer_norm(h, name):
        return g.op("LayerNormalization", [h, g.weight(f"{p}.{name}.weight", (d,), value=1.0),
                                           g.weight(f"{p}.{name}.bias", (d,), value=0.0)],
                    axis=-1, epsilon=1e-5)

    split = g.const_i64("const.split_heads", [1, seq, heads, hd])
    merge = g.const_i64("const.merge_heads", [1, seq, d])
    scale = g.scalar("const.attn_scale", hd ** -0.5)

    h = layer_norm(x, "ln1")
    q, k, v = (g.op("Transpose", [g.op("Reshape", [linear(h, n, d, d), split])], perm=perm)
               for n, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])))
    scores = g.op("Mul", [g.op("MatMul", [q, k]), scale])
    attn = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
    attn = g.op("Reshape", [g.op("Transpose", [attn], perm=[0, 2, 1, 3]), merge])
    x = g.op("Add", [x, linear(attn, "out", d, d)], hint="residual")
    h = layer_norm(x, "ln2")
    h = linear(_gelu(g, linear(h, "ff1", d, ff)), "ff2", ff, d)
    return g.op("Add", [x, h], hint="residual")


def _encoder(seed: int, layers: int, seq: int, d: int, heads: int, ff: int, out: int | None):
    g = _Graph(seed=seed)
    x = "input"
    for i in range(layers):
        x = _encoder_layer(g, x, f"l{i}", seq, d, heads, ff)
    shape = (1, seq, d)
    if out is not None:
        x = g.op("MatMul", [x, g.weight("head.weight", (d, out))])
        shape = (1, seq, out)
    return g.model("input", (1, seq, d), x, shape), (1, seq, d)


def onnx_model(name: str):
    """(onnx.ModelProto, input shape) of a corpus model."""
    if name == "cnn":
        return _cnn()
    if name == "encoder_block":
        return _encoder(seed=2, layers=1, seq=16, d=64, heads=4, ff=256, out=None)
    if name == "encoder4":
        return _encoder(seed=3, layers=4, seq=32, d=512, heads=8, ff=2048, out=16)
    raise ModelError(f"unknown model {name!r} (expected one of {', '.join(MODELS)})")


def weights(model) -> dict:
    """{initializer name: numpy array} of an ONNX model."""
    from onnx import numpy_helper

    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def parameter_count(name: str) -> int:
    model, _ = onnx_model(name)
    return sum(int(a.size) for a in weights(model).values())


# -- building --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Model:
    name: str
    vmfb: Path
    mlir: Path
    irpa: Path
    safetensors: Path
    gguf: Path
    input: Path  # .npy
    function: str = FUNCTION

    def parameters(self, fmt: str = "irpa") -> Path:
        return {"irpa": self.irpa, "safetensors": self.safetensors, "gguf": self.gguf}[fmt]

    def run_args(self, fmt: str = "irpa") -> list[str]:
        """iree-run-module flags after --device: module, parameters, function, input."""
        return [f"--module={self.vmfb}", f"--parameters={SCOPE}={self.parameters(fmt)}",
                f"--function={self.function}", f"--input=@{self.input}"]


@dataclass(frozen=True)
class Exported:
    name: str
    vmfb: Path  # parameters exported by iree-compile
    irpa: Path
    inline_vmfb: Path  # the same graph with its weights inline
    input: Path
    function: str = FUNCTION

    def run_args(self) -> list[str]:
        return [f"--module={self.vmfb}", f"--parameters={SCOPE}={self.irpa}",
                f"--function={self.function}", f"--input=@{self.input}"]


def _tool(name: str) -> str:
    candidate = Path(sys.executable).parent / name
    if candidate.is_file():
        return str(candidate)
    found = shutil.which(name)
    if not found:
        raise ModelError(f"{name} not found on PATH")
    return found


def _key(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else str(part).encode())
        h.update(b"\0")
    return h.hexdigest()


def _current(outputs: list[Path], key_file: Path, key: str) -> bool:
    return (all(p.is_file() for p in outputs) and key_file.is_file()
            and key_file.read_text().strip() == key)


def _run(cmd: list[str], what: str, timeout: int) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ModelError(f"{what}: timed out after {timeout}s") from None
    if proc.returncode != 0:
        raise ModelError(f"{what}: {_first_error_line(proc.stderr or proc.stdout)}")


def _import(model, onnx_path: Path, mlir: Path, irpa: Path | None) -> None:
    """iree-import-onnx, externalizing every initializer into `irpa` (None: weights inline)."""
    import onnx

    onnx.save(model, str(onnx_path))
    cmd = [_tool("iree-import-onnx"), str(onnx_path), "-o", str(mlir)]
    if irpa is not None:
        cmd += ["--externalize-params", f"--num-elements-threshold={EXTERNALIZE_MIN_ELEMENTS}",
                f"--params-scope={SCOPE}", f"--save-params-to={irpa}"]
    try:
        _run(cmd, f"iree-import-onnx {onnx_path.name}", IMPORT_TIMEOUT_S)
    finally:
        onnx_path.unlink(missing_ok=True)  # as large as the weights; rebuilt from the seed


def _compile(mlir: Path, vmfb: Path, target: str, extra=()) -> None:
    partial = vmfb.with_name(vmfb.name + ".partial")
    try:
        cmd = [iree_compile_binary(), *target_flags(target), *extra, str(mlir), "-o", str(partial)]
    except CompileError as e:
        raise ModelError(str(e)) from None
    try:
        _run(cmd, f"iree-compile {mlir.name} [{target}]", COMPILE_TIMEOUT_S)
    except ModelError:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, vmfb)


_PARAM_RE = re.compile(r'#(?:flow|stream)\.parameter\.named<"([^"]*)"::"([^"]*)">')


def parameter_keys(mlir: Path) -> list[str]:
    """The keys (scope `model`) the imported MLIR's globals read, in order of appearance."""
    keys = []
    for scope, key in _PARAM_RE.findall(mlir.read_text(encoding="utf-8")):
        if scope == SCOPE and key not in keys:
            keys.append(key)
    return keys


def write_safetensors(arrays: dict, path: Path) -> None:
    from safetensors.numpy import save_file

    partial = path.with_name(path.name + ".partial")
    save_file({k: a.copy() if a.ndim else a.reshape(()) for k, a in arrays.items()}, str(partial))
    os.replace(partial, path)


def write_gguf(arrays: dict, path: Path) -> None:
    """A GGUF file holding `arrays` under their keys (the tensor bytes as numpy lays them out)."""
    import gguf
    import numpy as np

    partial = path.with_name(path.name + ".partial")
    writer = gguf.GGUFWriter(str(partial), arch="amdgpu_cli_test")
    for key, array in arrays.items():
        if len(key.encode()) >= 64:  # GGML_MAX_NAME
            raise ModelError(f"gguf: tensor name {key!r} too long")
        writer.add_tensor(key, np.ascontiguousarray(array) if array.ndim else array.reshape(1))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(partial, path)


def _write_input(path: Path, shape, seed: int) -> None:
    import numpy as np

    array = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    partial = path.with_name(path.name + ".partial.npy")
    np.save(partial, array)
    os.replace(partial, path)


def build(name: str, out_dir, target: str = "llvm-cpu") -> Model:
    """Import `name`, write its parameters in the three formats and compile it (cached)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model, input_shape = onnx_model(name)
    stem = out_dir / name
    onnx_path, mlir = stem.with_suffix(".onnx"), stem.with_suffix(".mlir")
    irpa, st = stem.with_suffix(".irpa"), stem.with_suffix(".safetensors")
    gg = stem.with_suffix(".gguf")
    inp = out_dir / f"{name}.input.npy"
    data = model.SerializeToString()

    import_key = _key(data, os.path.realpath(_tool("iree-import-onnx")), "import-v1")
    import_file = out_dir / f"{name}.import.key"
    if not _current([mlir, irpa, st, gg, inp], import_file, import_key):
        import_file.unlink(missing_ok=True)
        _import(model, onnx_path, mlir, irpa)
        arrays = weights(model)
        keys = parameter_keys(mlir)
        missing = [k for k in keys if k not in arrays]
        if missing or not keys:
            raise ModelError(f"{name}: the imported module reads keys {missing or keys} that are "
                             f"not initializers")
        chosen = {k: arrays[k] for k in keys}
        write_safetensors(chosen, st)
        write_gguf(chosen, gg)
        _write_input(inp, input_shape, seed=100 + MODELS.index(name))
        import_file.write_text(import_key + "\n")

    vmfb = out_dir / (f"{name}.vmfb" if target == "llvm-cpu" else f"{name}-{target}.vmfb")
    flags = target_flags(target)
    key = _key(mlir.read_bytes(), os.path.realpath(iree_compile_binary()), *flags)
    key_file = vmfb.with_name(vmfb.name + ".key")
    if not _current([vmfb], key_file, key):
        key_file.unlink(missing_ok=True)
        _compile(mlir, vmfb, target)
        key_file.write_text(key + "\n")
    return Model(name, vmfb, mlir, irpa, st, gg, inp)


def _inline_weights(mlir_text: str, arrays: dict) -> str:
    """The imported module with each parameter global given its weights inline, as a public
    global: iree-compile 3.13.0's export pass moves initialized globals into the archive, but
    private immutable ones are folded into their uses before it runs (and inline ONNX constants
    become arith.constant), which it leaves alone."""
    def inline(match: re.Match) -> str:
        symbol, key, type_ = match.group(1), match.group(3), match.group(4)
        data = arrays[key].tobytes().hex().upper()
        return f'util.global public @{symbol} = dense<"0x{data}"> : {type_}'

    text, count = re.subn(
        r'util\.global private @(\S+) = #(?:flow|stream)\.parameter\.named<"([^"]*)"::"([^"]*)"> : '
        r'(tensor<[^>]*>)', inline, mlir_text)
    if not count:
        raise ModelError("no parameter globals to inline")
    return text


def exported(name: str, out_dir) -> Exported:
    """`name` with its weights inline, compiled as is and with --iree-parameter-export (cached)."""
    out_dir = Path(out_dir)
    base = build(name, out_dir)
    mlir = out_dir / f"{name}-inline.mlir"
    inline_vmfb = out_dir / f"{name}-inline.vmfb"
    vmfb = out_dir / f"{name}-exported.vmfb"
    irpa = out_dir / f"{name}-exported.irpa"
    export = [f"--iree-parameter-export={SCOPE}={irpa}", "--iree-parameter-export-minimum-size=0"]
    key = _key(base.mlir.read_bytes(), os.path.realpath(iree_compile_binary()),
               *target_flags("llvm-cpu"), *export[1:], "export-v1")
    key_file = out_dir / f"{name}-exported.key"
    if not _current([inline_vmfb, vmfb, irpa], key_file, key):
        key_file.unlink(missing_ok=True)
        mlir.write_text(_inline_weights(base.mlir.read_text(encoding="utf-8"),
                                        weights(onnx_model(name)[0])), encoding="utf-8")
        _compile(mlir, inline_vmfb, "llvm-cpu")
        irpa.unlink(missing_ok=True)
        _compile(mlir, vmfb, "llvm-cpu", export)
        if not irpa.is_file():
            raise ModelError(f"iree-compile {mlir.name} {export[0]}: wrote no {irpa.name}")
        key_file.write_text(key + "\n")
    return Exported(name, vmfb, irpa, inline_vmfb, base.input)


def _main(argv: list[str]) -> int:
    default = os.environ.get("IREE_MODEL_CACHE", "build/onnx_models")
    out_dir = Path(argv[0] if argv else default)
    names = argv[1:] or list(MODELS)
    run = _tool("iree-run-module")
    for name in names:
        m = build(name, out_dir)
        print(f"== {name}: {parameter_count(name):,} parameters, {m.vmfb}", flush=True)
        for fmt in ("irpa", "safetensors", "gguf"):
            proc = subprocess.run([run, "--device=local-sync", *m.run_args(fmt)],
                                  capture_output=True, text=True)
            print(f"-- {fmt} rc={proc.returncode}")
            sys.stdout.write(proc.stdout + proc.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

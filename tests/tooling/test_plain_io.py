"""The numpy-free function I/O of amdgpu-run's usual path, against independent truths.

Inline tensors of the plain element types (i8..i64 signless/si/ui, f32, f64, and the hex-byte
types such as i1) are parsed into bytes and printed from bytes without numpy. Checked here:
* a whole run (parse, upload, call, read back, print) executes no `import numpy` in tooling/,
  and prints what iree-run-module prints for the same edge values;
* integer elements are stored as numpy's C casts store them, and printed as numpy reads them;
* f32 / f64 text is read bit for bit as glibc's strtof / strtod (what IREE calls) read it,
  ties and NaN payloads included;
* a Tensor made from bytes keeps its public surface (numpy storage made on demand).
"""

from __future__ import annotations

import copy
import ctypes
import ctypes.util
import json
import random
import struct
import subprocess
import sys
from array import array
from pathlib import Path

import numpy as np
import pytest

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.tooling import Tensor, format_result, parse_input
from amdgpu_cli.tooling.element_types import ElementType, c_strtod
from examples.compile import compile_model
from tests.iree_tools import iree_compile_or_skip

ECHO = 12

# Edge values of every plain element type: wrap-around, range ends, signed zeros, sub-normals,
# f32 ties (16777217 rounds to even; 3.4028235677973366e38 to infinity), NaN payloads, i1 hex.
PLAIN_INPUTS = [
    "6xi8=-128 -1 0 127 128 255",
    "3xsi8=-128 127 -1000",
    "4xui16=0 65535 0x10 010",
    "5xi32=-2147483648 2147483647 4294967296 0x80000000 -1",
    "4xui32=0 4294967295 -1 0xffffffff",
    "3xi64=-9223372036854775808 9223372036854775807 -0x8000000000000000",
    "3xui64=18446744073709551615 -1 0",
    "2x3xf32=16777217 16777219 16777217.000000001 -0 1.4e-45 -3.4028235677973366e38",
    "4xf32=0x1.000001p0 0x1.8p-149 3.4028235677973362e38 nan(0x12)",
    "4xf64=-0 4.9406564584124654e-324 1.7976931348623157e308 -nan(0x12345)",
    "4xi1=01 00 FE zz",
    "2x2xi32=7",
]


def _echo_source() -> str:
    args = ", ".join(f"%a{i}: tensor<f32>" for i in range(ECHO))
    names = ", ".join(f"%a{i}" for i in range(ECHO))
    types = ", ".join(["tensor<f32>"] * ECHO)
    return f"func.func @echo({args}) -> ({types}) {{ return {names} : {types} }}\n"


@pytest.fixture(scope="module")
def echo_vmfb(tmp_path_factory) -> Path:
    """A module whose @echo hands its tensor arguments back (iree-run-module 3.13.0 does not
    assert their shape or type, so any element type goes through)."""
    iree_compile_or_skip()
    work = tmp_path_factory.mktemp("plain_io")
    source = work / "echo.mlir"
    source.write_text(_echo_source())
    return compile_model(source, work / "echo.vmfb")


# Runs amdgpu_cli.tooling.run.run in a fresh interpreter that records every `import numpy`
# statement executed from tooling/ (even once numpy is loaded, e.g. by the HAL).
_TRACED_RUN = """
import builtins, io, json, sys
hits = []
original = builtins.__import__
def traced(name, *args, **kwargs):
    caller = sys._getframe(1).f_code.co_filename
    if name.split(".")[0] == "numpy" and "/amdgpu_cli/tooling/" in caller:
        hits.append(f"{caller}:{sys._getframe(1).f_lineno}")
    return original(name, *args, **kwargs)
builtins.__import__ = traced
from amdgpu_cli.tooling.run import RunOptions, run
module, inputs = json.loads(sys.argv[1])
out = io.StringIO()
run(RunOptions(modules=[module], devices=["local-sync"], function="echo", inputs=inputs), out)
print(json.dumps({"stdout": out.getvalue(), "numpy_imports": hits}))
"""


def test_usual_run_imports_no_numpy_in_tooling_and_prints_like_iree(echo_vmfb, iree_run):
    assert len(PLAIN_INPUTS) == ECHO
    proc = subprocess.run(
        [sys.executable, "-c", _TRACED_RUN, json.dumps([str(echo_vmfb), PLAIN_INPUTS])],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    ours = json.loads(proc.stdout)
    assert ours["numpy_imports"] == []
    iree = iree_run([f"--module={echo_vmfb}", "--device=local-sync", "--function=echo",
                     *[f"--input={text}" for text in PLAIN_INPUTS]])
    assert iree.returncode == 0, iree.stderr
    assert ours["stdout"] == iree.stdout


# -- integers: numpy's C casts are the truth ----------------------------------------------------

# type -> (smallest, largest) value the parser accepts (IREE's string_util.c ranges)
_INTEGER_RANGES = {
    "i8": (-(2**7), 2**8 - 1), "si8": (-(2**31), 2**7 - 1), "ui8": (0, 2**8 - 1),
    "i16": (-(2**15), 2**16 - 1), "si16": (-(2**31), 2**15 - 1), "ui16": (0, 2**16 - 1),
    # 32-bit types read at most 15 characters (IREE's 16-byte scratch buffer), then truncate.
    "i32": (1 - 10**14, 10**14 - 1), "si32": (1 - 10**14, 10**14 - 1),
    "ui32": (1 - 10**14, 10**14 - 1),
    "i64": (-(2**63), 2**63 - 1), "si64": (-(2**63), 2**63 - 1),
    "ui64": (-(2**64 - 1), 2**64 - 1),
}  # fmt: skip


def _c_cast(value: int, dtype: np.dtype) -> int:
    """numpy's C cast of a 64-bit integer to `dtype`, as a Python int."""
    source = np.uint64 if value > 2**63 - 1 else np.int64
    if value < -(2**63):  # strtoul's unsigned negation: -v is 2**64 - v
        value, source = value % 2**64, np.uint64
    return int(np.array([value], dtype=source).astype(dtype)[0])


@pytest.mark.parametrize("type_name", sorted(_INTEGER_RANGES))
def test_integer_elements_store_c_casts_and_print_them(type_name):
    rng = random.Random(type_name)
    lo, hi = _INTEGER_RANGES[type_name]
    values = [lo, hi, 0, -1 if lo < 0 else 1] + [rng.randint(lo, hi) for _ in range(60)]
    texts = [str(v) if rng.random() < 0.7 else f"{'-' if v < 0 else ''}{hex(abs(v))}"
             for v in values]  # fmt: skip
    tensor = parse_input(f"{len(values)}x{type_name}=" + " ".join(texts))
    dtype = ElementType.parse(type_name).storage_dtype
    expected = np.array([_c_cast(v, dtype) for v in values], dtype=dtype)
    assert tensor.tobytes() == expected.tobytes()
    printed = " ".join(str(v) for v in expected.tolist())
    assert format_result(tensor) == f"hal.buffer_view\n{len(values)}x{type_name}={printed}"


# -- floats: glibc's strtof / strtod are the truth ----------------------------------------------

_LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
_LIBC.strtof.restype, _LIBC.strtof.argtypes = ctypes.c_float, [ctypes.c_char_p, ctypes.c_void_p]
_LIBC.strtod.restype, _LIBC.strtod.argtypes = ctypes.c_double, [ctypes.c_char_p, ctypes.c_void_p]


def _libc_bits(text: str, single: bool) -> bytes:
    """The bytes glibc's strtof / strtod store for text (the hardware casts keep NaN payloads)."""
    if single:
        return array("f", [_LIBC.strtof(text.encode(), None)]).tobytes()
    return struct.pack("<d", _LIBC.strtod(text.encode(), None))


def _float_texts() -> list[str]:
    rng = random.Random(7)
    texts = []
    for _ in range(200):
        digits = rng.choice("123456789") + "".join(
            rng.choice("0123456789") for _ in range(rng.randint(0, 17)))
        point = rng.randint(0, len(digits))
        texts.append(f"{digits[:point]}.{digits[point:]}e{rng.randint(-44, 38)}")
    for _ in range(100):  # f32 midpoints exactly, and a hair either side of them
        bits = rng.getrandbits(31) % 0x7F7FFFFF
        low, high = (struct.unpack("<f", struct.pack("<I", b))[0] for b in (bits, bits + 1))
        middle = (low + high) / 2  # exact in a double
        texts += [repr(middle), middle.hex()]  # the shortest decimal may sit off the tie
    texts += ["16777217", "16777217.000000001", "16777216.999999999", "3.4028235677973366e38",
              "3.4028235677973362e38", "3.40282356779733661e38", "1.4e-45", "7.1e-46",
              "0x1.8p-149", "0x1.000001p0", "0x1.0000010001p0", "-0", "-0x0p0", "+0.0e999",
              "1e39", "-1e309", "inf", "-INFINITY", "nan", "-nan", "nan(0x12)", "-nan(0x12)",
              "nan(0x7fffff)", "nan(0x12345678)", "nan(077)", "nan(zz)", "1.5abc",
              " 2.5"]  # fmt: skip
    return [t for t in texts if len(t) < 32]  # IREE's scratch buffer takes up to 31 characters


@pytest.mark.parametrize("type_name", ["f32", "f64"])
def test_float_text_reads_as_glibc_reads_it(type_name):
    single = type_name == "f32"
    for text in _float_texts():
        value = c_strtod(text, single=single)
        truth = _libc_bits(text, single)
        if value is None:  # underflow to zero: IREE rejects what C flags with ERANGE
            assert truth.strip(b"\0") in (b"", b"\x80"), text
            with pytest.raises(AmdgpuCliError, match="invalid"):
                parse_input(f"1x{type_name}=[{text}]")
            continue
        assert array("f" if single else "d", [value]).tobytes() == truth, text
        assert parse_input(f"1x{type_name}=[{text}]").tobytes() == truth, text


def test_f32_splat_and_signed_zero_bytes():
    assert parse_input("3xf32=-0").tobytes() == struct.pack("<3f", -0.0, -0.0, -0.0)
    assert parse_input("2xf32=nan(0x12) -nan(0x12)").tobytes() == struct.pack(
        "<2I", 0x7FC00012, 0xFFC00012)


# -- Tensor made from bytes --------------------------------------------------------------------

def test_tensor_from_bytes_makes_numpy_storage_on_demand():
    data = np.arange(-3, 3, dtype="<i2").tobytes()
    tensor = Tensor.from_bytes(ElementType.parse("si16"), [2, 3], data)
    assert tensor.shape == (2, 3) and tensor.nbytes == 12 and tensor.tobytes() == data
    storage = tensor.storage
    assert storage is tensor.storage  # made once
    np.testing.assert_array_equal(storage, np.arange(-3, 3, dtype="<i2").reshape(2, 3))
    assert not storage.flags.writeable
    unsigned = tensor.retyped("ui16")
    assert unsigned.tobytes() == data
    np.testing.assert_array_equal(unsigned.array, storage.view("<u2"))
    assert repr(tensor) == repr(Tensor.from_array(storage, "si16"))
    copied = copy.deepcopy(tensor)
    assert copied.tobytes() == data and copied.element_type == tensor.element_type
    with pytest.raises(AttributeError):
        tensor.shape = (6,)
    with pytest.raises(ValueError):
        Tensor.from_bytes(ElementType.parse("f32"), [2], b"\0" * 4)

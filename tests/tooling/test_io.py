"""amdgpu_cli.tooling.io against the real iree-run-module (IREE 3.13.0).

Every expectation is computed at test time by the IREE tools: a small module is compiled once,
then iree-run-module runs it with the same --input / --output / --expected_output strings we
hand to our parser, printer, writer and checker, and the bytes must agree.

The workhorse is @echo16: sixteen `tensor<f32>` arguments returned unchanged. iree-run-module
3.13.0 hands the argument buffer views straight back, with no shape or type assertion, so it
echoes any element type and shape; one run checks sixteen input strings.
"""

from __future__ import annotations

import io
import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.tooling import (
    Equality,
    StorageBuffer,
    Tensor,
    compare_expected,
    format_result,
    format_results,
    parse_input,
    parse_inputs,
    write_output,
    write_outputs,
)
from amdgpu_cli.tooling.element_types import ElementType

IREE_COMPILE = shutil.which("iree-compile")
IREE_RUN = shutil.which("iree-run-module")
pytestmark = pytest.mark.skipif(
    not (IREE_COMPILE and IREE_RUN), reason="iree-compile / iree-run-module not on PATH"
)

ECHO = 16
SCALARS_CCONV = "iiiiIIIIffffFFFF"


def _module_source() -> str:
    args = ", ".join(f"%a{i}: tensor<f32>" for i in range(ECHO))
    names = ", ".join(f"%a{i}" for i in range(ECHO))
    types = ", ".join(["tensor<f32>"] * ECHO)
    kinds = ["i32"] * 4 + ["i64"] * 4 + ["f32"] * 4 + ["f64"] * 4
    s_args = ", ".join(f"%s{i}: {t}" for i, t in enumerate(kinds))
    s_names = ", ".join(f"%s{i}" for i in range(len(kinds)))
    return f"""
func.func @echo16({args}) -> ({types}) {{ return {names} : {types} }}
func.func @echo1(%a: tensor<f32>) -> tensor<f32> {{ return %a : tensor<f32> }}
func.func @scalars16({s_args}) -> ({", ".join(kinds)}) {{ return {s_names} : {", ".join(kinds)} }}
func.func @constants() -> (tensor<4xi1>, tensor<4xi8>, tensor<3xi16>, tensor<3xi32>, tensor<3xi64>,
                           tensor<5xf16>, tensor<4xbf16>, tensor<5xf32>, tensor<4xf64>) {{
  %0 = arith.constant dense<[true, false, false, true]> : tensor<4xi1>
  %1 = arith.constant dense<[-128, -1, 0, 127]> : tensor<4xi8>
  %2 = arith.constant dense<[-32768, 7, 32767]> : tensor<3xi16>
  %3 = arith.constant dense<[-2147483648, 0, 2147483647]> : tensor<3xi32>
  %4 = arith.constant dense<[-9223372036854775808, 1, 9223372036854775807]> : tensor<3xi64>
  %5 = arith.constant dense<[0.1, 65504.0, 6.0e-8, -0.0, 0x7E00]> : tensor<5xf16>
  %6 = arith.constant dense<[0.1, 3.0e38, 1.0e-40, 0xFF80]> : tensor<4xbf16>
  %7 = arith.constant dense<[0.1, 1.0e-45, 3.4028235e38, 0x7FC00000, 0xFF800000]> : tensor<5xf32>
  %8 = arith.constant dense<[0.1, 1.0e-310, 1.0e300, 0xFFF8000000000000]> : tensor<4xf64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4xi1>, tensor<4xi8>, tensor<3xi16>,
      tensor<3xi32>, tensor<3xi64>, tensor<5xf16>, tensor<4xbf16>, tensor<5xf32>, tensor<4xf64>
}}
func.func @lst() -> !util.list<?> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %l = util.list.create %c4 : !util.list<?>
  util.list.resize %l, %c4 : !util.list<?>
  %v = arith.constant 5 : i32
  util.list.set %l[%c0], %v : i32 -> !util.list<?>
  %t = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %bv = hal.tensor.export %t : tensor<2xf32> -> !hal.buffer_view
  util.list.set %l[%c1], %bv : !hal.buffer_view -> !util.list<?>
  %inner = util.list.create %c1 : !util.list<?>
  util.list.resize %inner, %c1 : !util.list<?>
  %f = arith.constant 2.5 : f32
  util.list.set %inner[%c0], %f : f32 -> !util.list<?>
  util.list.set %l[%c2], %inner : !util.list<?> -> !util.list<?>
  return %l : !util.list<?>
}}
"""


@pytest.fixture(scope="module")
def vmfb(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("io_module")
    source = work / "io.mlir"
    source.write_text(_module_source())
    out = work / "io.vmfb"
    subprocess.run(
        [
            IREE_COMPILE,
            "--iree-hal-target-device=local",
            "--iree-hal-local-target-device-backends=llvm-cpu",
            "--iree-llvmcpu-target-cpu=generic",
            "--iree-input-demote-f64-to-f32=false",
            str(source),
            "-o",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out


def run_iree(vmfb: Path, function: str, flags: list[str], cwd: Path | None = None):
    return subprocess.run(
        [IREE_RUN, f"--module={vmfb}", "--device=local-sync", f"--function={function}", *flags],
        capture_output=True,
        cwd=cwd,
        timeout=120,
    )


def iree_stdout(proc, function: str) -> str:
    """stdout after the `EXEC @fn` line, asserting the run succeeded."""
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    text = proc.stdout.decode()
    head = f"EXEC @{function}\n"
    assert text.startswith(head), text
    return text[len(head) :]


def echo_batches(inputs: list[str]):
    """Groups of 16 inputs, the last padded with a harmless rank-0 tensor."""
    for i in range(0, len(inputs), ECHO):
        batch = inputs[i : i + ECHO]
        yield batch + ["f32=0"] * (ECHO - len(batch))


def assert_echo_prints(vmfb: Path, inputs: list[str], max_element_count: int | None = None):
    extra = [] if max_element_count is None else [f"--output_max_element_count={max_element_count}"]
    for batch in echo_batches(inputs):
        proc = run_iree(vmfb, "echo16", [f"--input={t}" for t in batch] + extra)
        expected = iree_stdout(proc, "echo16")
        ours = format_results(parse_inputs(batch, "r" * ECHO), max_element_count)
        for line_iree, line_ours, text in zip(
            _per_result(expected), _per_result(ours), batch
        ):
            assert line_ours == line_iree, f"input {text!r}"
        assert ours == expected


def _per_result(text: str) -> list[str]:
    return re.split(r"(?m)^(?=result\[)", text)[1:]


# --------------------------------------------------------------------------------------------
# Parsing and printing tensors
# --------------------------------------------------------------------------------------------

TENSOR_INPUTS = [
    "2x3xf32=[1 2 3][4 5 1e20]",
    "2x3xf32=1,2,3,4,5,6",
    "2x3xf32=[[1, 2, 3], [4, 5, 6]]",
    " 2x3xf32=1\t2\n3 4 5 6 ",
    '"2xf32=1 2"',
    "4xf32=0.5",
    "4xf32",
    "4xf32=",
    "xf32=1",
    "f32=7",
    "0xf32=",
    "2x0xf32",
    "3x0x2xi32",
    "2xf32=[1][2]",
    "2xf32=1,,2",
    "4xf32=1e-45 -1e-45 3.4028235e38 1e39",
    "6xf32=inf -inf nan -nan INFINITY NaN",
    "4xf32=0x1p-149 0x1.fffffep127 0x.8 0x",
    "5xf32=1234565 123456.5 0.1 1e-5 100000",
    "6xf32=1e15 1e16 1e-4 1e-5 999999.5 9999995",
    "3xf32=3.5abc 1. .5",
    "4xf32=nan(0x12) -nan(5) nan(zz) nan()",
    "4xf64=1e308 1e-308 4.9e-324 2.2250738585072014e-308",
    "3xf64=0.1 -0 nan",
    "8xf16=1 65504 65519 65520 6e-8 2.98e-8 3e-8 -0",
    "6xf16=0.1 0.2 0.3 1.0009765625 1.00048828125 1.00146484375",
    "4xf16=-nan nan inf 1e-7",
    "4xbf16=1.00390625 1.01171875 3.4e38 1e-40",
    "3xbf16=inf -nan 0.1",
    "i1=01",
    "4xi1=01 00 02 FF",
    "2xi1=zz 0g",
    "6xi8=-128 -1 0 127 128 255",
    "3xsi8=-128 127 -1000",
    "3xui8=0 255 0x7f",
    "4xi16=-32768 65535 0x7fff 010",
    "3xsi16=-32768 32767 -70000",
    "3xui16=0 65535 0x10",
    "5xi32=-2147483648 2147483647 4294967296 0x80000000 -1",
    "3xsi32=-2147483648 2147483647 -5",
    "4xui32=0 4294967295 -1 0xffffffff",
    "4xi64=-9223372036854775808 9223372036854775807 0x7fffffffffffffff -0x8000000000000000",
    "2xsi64=-9223372036854775808 42",
    "3xui64=18446744073709551615 -1 0",
    "4xi32=08 010 0x 1e3",
    "3xi32=-0 +12 +0x10",
    "2xf32=1.00000000000000000000000000001 +2.5",
    "2xi8=4294967297 -4294967295",
    "2xcf64=0011223344556677 8899aabbccddeeff",
    "1xcf128=000102030405060708090a0b0c0d0e0f",
    "2x*16=0aFF 0304",
    "2x*8=ab cd",
    "2x*32=deadbeef 01020304",
    "2xf8E5M2=1.5 -3",
    "4xf8E4M3FN=448 480 1e9 nan",
    "3xf8E5M2FNUZ=1 -0 nan",
    "4xf8E4M3FNUZ=0.1 240 -0 1e-9",
    "5xf8E8M0FNU=1 0.75 0.74 1e38 -1",
    "2x2x2xf32=[[1 2][3 4]][[5 6][7 8]]",
    "3x32xf32=0.5",
    "3x2x2xi32=3",
    "40x40xf32=1.5",
    "2x3xf32 =1 2 3 4 5 6",
]


def test_tensor_text_inputs_print_like_iree(vmfb):
    assert_echo_prints(vmfb, TENSOR_INPUTS)


@pytest.mark.parametrize("count", [0, 1, 5, 8, 1023, -1])
def test_output_max_element_count_elides_like_iree(vmfb, count):
    inputs = ["3x32xf32=0.5", "3x2x2xi32=3", "2x3xf64=0.1", "4xf32=1 2 3 4", "xf32=2",
              "2x0x3xi8", "40x40xi8=7", "2x2x2x2xi1=01", "3xi32=1 2 3"]  # fmt: skip
    assert_echo_prints(vmfb, inputs, count)


def _random_bits(rng: np.random.Generator, dtype: str, count: int) -> np.ndarray:
    return rng.integers(0, 256, size=count * np.dtype(dtype).itemsize, dtype=np.uint8)


def test_raw_binary_bit_patterns_print_like_iree(vmfb, tmp_path):
    """Random bit patterns (NaN payloads, sub-normals, ...) through `=@file.bin`."""
    rng = np.random.default_rng(1234)
    inputs = []
    for type_name in ["f32", "f64", "f16", "bf16", "f8E5M2", "f8E4M3FN", "f8E5M2FNUZ",
                      "f8E4M3FNUZ", "f8E8M0FNU", "i8", "ui16", "si32", "ui64", "i1"]:  # fmt: skip
        et = ElementType.parse(type_name)
        count = 300 if et.byte_size > 1 else 256
        if et.byte_size == 1:
            data = np.arange(256, dtype=np.uint8).tobytes()  # every pattern
        else:
            data = _random_bits(rng, f"u{et.byte_size}", count).tobytes()
        path = tmp_path / f"{type_name}.bin"
        path.write_bytes(data)
        inputs.append(f"{count}x{type_name}=@{path}")
    assert_echo_prints(vmfb, inputs, -1)


def _float_texts(rng: random.Random) -> list[str]:
    """Decimal and hex texts, including ones that sit on or next to f32 rounding ties."""
    texts = []
    for _ in range(48):
        # A leading non-zero digit and |exponent| <= 38 keep every value above f32's smallest
        # sub-normal, so none of these underflow (underflow is an error, tested elsewhere).
        tail = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 16)))
        digits = rng.choice("123456789") + tail
        point = rng.randint(0, len(digits))
        texts.append(f"{digits[:point]}.{digits[point:]}e{rng.randint(-38, 38)}")
    for _ in range(48):  # magnitudes where f16, bf16 and the f8 types have their values
        value = rng.choice([-1, 1]) * 2 ** rng.uniform(-26, 18)
        texts.append(rng.choice(["%.3g", "%.6g", "%.9g", "%r"]) % value)
    for _ in range(24):
        value = struct.unpack("<f", struct.pack("<I", rng.getrandbits(32) & 0x7F7FFFFF))[0]
        texts.append(repr(value))
    # Exact f32 midpoints and values just off them: a double can land on the midpoint.
    texts += ["1.000000059604644775390625", "1.0000000596046447753906251",
              "1.0000000596046447753906249", "0x1.000001p0", "0x1.00000100000000001p0",
              "0x1.000003p0", "0x1.0000030000000001p0", "16777217", "16777219",
              "3.4028235677973366e38", "3.40282357e38", "1.4e-45", "7.1e-46", "7.0065e-46",
              "0x1.fffffefffffffffffp127", "0x1.ffffffp127", "65519.99", "65520",
              "nan(0x12)", "-nan(5)", "nan(077)", "nan(0x7fffff)", "nan(zz)", "-inf"]  # fmt: skip
    return texts


@pytest.mark.parametrize(
    "type_name",
    ["f32", "f64", "f16", "bf16", "f8E5M2", "f8E4M3FN", "f8E5M2FNUZ", "f8E4M3FNUZ", "f8E8M0FNU"],
)
def test_float_text_parses_to_the_same_bits(vmfb, tmp_path, type_name):
    """--output=@/+ raw bytes of the echoed inputs must equal ours, so parsing is bit exact."""
    texts = [t for t in _float_texts(random.Random(type_name)) if len(t) < 32]
    specs = [f"{len(texts[i::ECHO])}x{type_name}=" + " ".join(texts[i::ECHO]) for i in range(ECHO)]
    specs = [s for s in specs if "=" in s and not s.startswith("0x")]
    specs += ["f32=0"] * (ECHO - len(specs))
    out = tmp_path / "iree.bin"
    outputs = [f"@{out}"] + [f"+{out}"] * (ECHO - 1)
    flags = [f"--input={s}" for s in specs] + [f"--output={o}" for o in outputs]
    proc = run_iree(vmfb, "echo16", flags)
    assert proc.returncode == 0, proc.stderr.decode()
    ours = tmp_path / "ours.bin"
    write_outputs(parse_inputs(specs, "r" * ECHO), [f"@{ours}"] + [f"+{ours}"] * (ECHO - 1))
    assert ours.read_bytes() == out.read_bytes()


def test_constants_from_a_module_print_like_iree(vmfb):
    f16 = np.array([0.1, 65504.0, 6.0e-8, -0.0, np.nan])
    ours = [
        Tensor.from_array(np.array([True, False, False, True])),
        Tensor.from_array(np.array([-128, -1, 0, 127], dtype=np.int8)),
        Tensor.from_array(np.array([-32768, 7, 32767], dtype=np.int16)),
        Tensor.from_array(np.array([-(2**31), 0, 2**31 - 1], dtype=np.int32)),
        Tensor.from_array(np.array([-(2**63), 1, 2**63 - 1], dtype=np.int64)),
        Tensor.from_array(f16, "f16"),
        Tensor.from_array(np.array([0.1, 3.0e38, 1.0e-40, -np.inf]), "bf16"),
        Tensor.from_array(np.array([0.1, 1e-45, 3.4028235e38, np.nan, -np.inf], np.float32)),
        Tensor.from_array(np.array([0.1, 1.0e-310, 1.0e300, -np.nan])),
    ]
    assert format_results(ours) == iree_stdout(run_iree(vmfb, "constants", []), "constants")


def test_nested_list_prints_like_iree(vmfb):
    value = [np.int32(5), np.array([1.0, 2.0], dtype=np.float32), [np.float32(2.5)], None]
    assert format_results([value]) == iree_stdout(run_iree(vmfb, "lst", []), "lst")


# --------------------------------------------------------------------------------------------
# Scalars
# --------------------------------------------------------------------------------------------

SCALAR_ROWS = [
    ["-5", "0x10", "010", "08", "-9223372036854775808", "0x7fffffffffffffff", "-0x10", "1e3",
     "3.5", "-nan", "1e-45", "0x1.8p1", "-nan", "1e-310", "123456.5", "infinity"],
    [" 7 ", "1e3", "3.9", "4294967297", "(null)", "(ignored)", "9223372036854775807", "42abc",
     "1234565", "1e39", "nan(0x12)", "-0", "0.1", "1e308", "2.5e-5", "1e16"],
    ["(null)", "0x", "-2147483649", "-12", "077", "0", "-1", "-0x8000000000000000",
     "100000", "1e-5", "123456789", "(ignored)", "-inf", "4.9e-324", "1e100", "0x1p-1074"],
]  # fmt: skip


@pytest.mark.parametrize("row", range(len(SCALAR_ROWS)))
def test_scalar_inputs_print_like_iree(vmfb, row):
    inputs = SCALAR_ROWS[row]
    proc = run_iree(vmfb, "scalars16", [f"--input={t}" for t in inputs])
    assert format_results(parse_inputs(inputs, SCALARS_CCONV)) == iree_stdout(proc, "scalars16")


def test_scalar_outputs_write_like_iree(vmfb, tmp_path):
    inputs = SCALAR_ROWS[0]
    flags = [f"--input={t}" for t in inputs]
    def specs_for(d: Path) -> list[str]:
        return [f"@{d}/s.npy", *[f"+{d}/s.npy"] * 7, f"@{d}/s.bin", *[f"+{d}/s.bin"] * 6, "-"]

    (tmp_path / "iree").mkdir()
    (tmp_path / "ours").mkdir()
    flags += [f"--output={s}" for s in specs_for(tmp_path / "iree")]
    proc = run_iree(vmfb, "scalars16", flags)
    stdout = io.StringIO()
    write_outputs(parse_inputs(inputs, SCALARS_CCONV), specs_for(tmp_path / "ours"), stdout=stdout)
    assert stdout.getvalue() == iree_stdout(proc, "scalars16")
    for name in ("s.npy", "s.bin"):
        assert (tmp_path / "ours" / name).read_bytes() == (tmp_path / "iree" / name).read_bytes()


# --------------------------------------------------------------------------------------------
# Files: .npy and raw binary inputs
# --------------------------------------------------------------------------------------------


@pytest.fixture
def npy_files(tmp_path) -> dict[str, Path]:
    files = {}
    many = tmp_path / "many.npy"
    with open(many, "wb") as f:
        np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3))
        np.save(f, np.array([-1, 2**31 - 1], dtype=np.int32))
        np.save(f, np.array([0, 255], dtype=np.uint8))
        np.save(f, np.array([True, False]))
        np.save(f, np.array([1.5, -0.0, 65504], dtype=np.float16))
        np.save(f, np.array(7, dtype=np.int64))
        np.save(f, np.array([1 + 2j], dtype=np.complex64))
        np.save(f, np.zeros((0, 3)))
        np.save(f, np.array([-3], dtype=np.int8))
        np.save(f, np.array([2**64 - 1], dtype=np.uint64))
        np.save(f, np.arange(24, dtype=np.float64).reshape(2, 3, 4))
    files["many"] = many
    files["one"] = tmp_path / "one.npy"
    np.save(files["one"], np.array([[1, 2], [3, 4]], dtype=np.int16))
    files["bin"] = tmp_path / "x.bin"
    files["bin"].write_bytes(np.arange(8, dtype=np.float32).tobytes())
    files["void"] = tmp_path / "void.npy"
    np.save(files["void"], np.frombuffer(b"\x01\x02\x03\x04", dtype="V2"))
    files["fortran"] = tmp_path / "fortran.npy"
    np.save(files["fortran"], np.asfortranarray(np.ones((2, 2), dtype=np.float32)))
    files["bigendian"] = tmp_path / "big.npy"
    np.save(files["bigendian"], np.ones(2, dtype=">f4"))
    files["badmagic"] = tmp_path / "bad.npy"
    files["badmagic"].write_bytes(b"NOTNPY" + bytes(100))
    files["empty"] = tmp_path / "empty.npy"
    files["empty"].write_bytes(b"")
    files["truncated"] = tmp_path / "trunc.npy"
    files["truncated"].write_bytes(files["one"].read_bytes()[:-2])
    files["unicode"] = tmp_path / "unicode.npy"
    np.save(files["unicode"], np.array(["ab"]))
    return files


def test_npy_inputs_read_like_iree(vmfb, npy_files):
    many, one, binary = npy_files["many"], npy_files["one"], npy_files["bin"]
    inputs = [f"@{many}", f"+{many}", f"@{many}", f"+{many}", f"*{many}", f"+{one}",
              f"2xf32=@{binary}", f"3xf32=+{binary}"]  # fmt: skip
    # `*` consumes the 9 arrays left after the second, so this is exactly 16 values.
    flags = [f"--input={t}" for t in inputs]
    values = parse_inputs(inputs, "r" * ECHO)
    assert len(values) == ECHO
    assert format_results(values) == iree_stdout(run_iree(vmfb, "echo16", flags), "echo16")


def test_raw_binary_continues_and_rewinds_like_iree(vmfb, npy_files):
    binary, void = npy_files["bin"], npy_files["void"]
    inputs = [f"2xf32=@{binary}", f"2xf32=+{binary}", f"xf32=+{binary}", f"4xf32=@{binary}",
              f"2xi16=+{binary}", f"&2xf32=+{binary}", f"2xi8=@{binary}", f"@{void}"]  # fmt: skip
    inputs += ["f32=0"] * (ECHO - len(inputs))
    proc = run_iree(vmfb, "echo16", [f"--input={t}" for t in inputs])
    assert format_results(parse_inputs(inputs, "r" * ECHO)) == iree_stdout(proc, "echo16")


def test_single_parse_input_reads_first_array(npy_files):
    first = parse_input(f"+{npy_files['many']}")
    assert isinstance(first, Tensor) and first.shape == (2, 3)
    assert np.array_equal(first.array, np.arange(6, dtype=np.float32).reshape(2, 3))


# --------------------------------------------------------------------------------------------
# --output
# --------------------------------------------------------------------------------------------

OUTPUT_INPUTS = [
    "2x3xf32=[1 2 3][4 5 6]", "3xi32=-1 0 1", "4xi1=01 00 01 00", "2xui8=1 255", "xf64=2.5",
    "2xsi16=-2 3", "2xf16=1.5 -2", "0x3xf32", "2xcf64=0011223344556677 8899aabbccddeeff",
    "2x*16=0102 0304", "(null)", "&4xi8=1 2 3 4", "3xui64=1 2 3", "1x1x1x1xi64=-7",
    "2xf32=nan inf", "4xf32=1 2 3 4",
]  # fmt: skip


def _output_specs(directory: Path) -> list[str]:
    return [f"@{directory}/a.npy", *[f"+{directory}/a.npy"] * 11, f"@{directory}/b.bin",
            f"+{directory}/b.bin", "-", ""]  # fmt: skip


def test_outputs_write_like_iree(vmfb, tmp_path):
    (tmp_path / "iree").mkdir()
    (tmp_path / "ours").mkdir()
    proc = run_iree(
        vmfb,
        "echo16",
        [f"--input={t}" for t in OUTPUT_INPUTS]
        + [f"--output={s}" for s in _output_specs(tmp_path / "iree")],
    )
    values = parse_inputs(OUTPUT_INPUTS, "r" * ECHO)
    stdout = io.StringIO()
    write_outputs(values, _output_specs(tmp_path / "ours"), stdout=stdout)
    assert stdout.getvalue() == iree_stdout(proc, "echo16")
    for name in ("a.npy", "b.bin"):
        assert (tmp_path / "ours" / name).read_bytes() == (tmp_path / "iree" / name).read_bytes()
    # And numpy reads our .npy stream back as the values we wrote.
    with open(tmp_path / "ours" / "a.npy", "rb") as f:
        loaded = [np.load(f) for _ in range(12)]
    assert np.array_equal(loaded[0], np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32))
    assert loaded[2].dtype == bool and loaded[2].tolist() == [True, False, True, False]
    assert loaded[10].shape == (0,) and loaded[11].tolist() == [1, 2, 3, 4]


def test_output_single_spec_to_stdout_and_npy(tmp_path):
    out = io.StringIO()
    write_output(np.int32(49), "-", stdout=out)
    write_output(np.array([1.5, 2.5], dtype=np.float32), "-", stdout=out)
    assert out.getvalue() == "i32=49\nhal.buffer_view\n2xf32=1.5 2.5\n"
    write_output(np.float32(3.5), f"@{tmp_path}/s.npy")
    assert np.load(tmp_path / "s.npy").dtype == np.float32
    assert np.load(tmp_path / "s.npy").shape == ()


@pytest.mark.parametrize(
    "inputs,specs",
    [
        (["2xbf16=1 2"], ["@{d}/x.npy"]),  # bf16 has no npy descr in IREE
        (["2xf8E5M2=1 2"], ["@{d}/x.npy"]),
        (["2xf32=1 2"], ["{d}/x.npy"]),  # neither @ nor +
        (["2xf32=1 2"], ["@{d}/missing/x.npy"]),
        (["2xf32=1 2", "2xf32=1 2"], ["-"]),  # count mismatch
    ],
)
def test_bad_outputs_fail_like_iree(vmfb, tmp_path, inputs, specs):
    specs = [s.format(d=tmp_path) for s in specs]
    function = "echo1" if len(inputs) == 1 else "echo16"
    if function == "echo16":
        inputs = inputs + ["f32=0"] * (ECHO - len(inputs))
    flags = [f"--input={t}" for t in inputs] + [f"--output={s}" for s in specs]
    proc = run_iree(vmfb, function, flags)
    assert proc.returncode != 0
    values = parse_inputs(inputs)
    with pytest.raises(AmdgpuCliError) as info:
        write_outputs(values, specs, stdout=io.StringIO())
    _assert_same_error(info.value, proc.stderr.decode(), compare_status="missing" not in specs[0])


# --------------------------------------------------------------------------------------------
# --expected_output
# --------------------------------------------------------------------------------------------

CF64 = "2xcf64=0011223344556677 8899aabbccddeeff"
EXPECTED_CASES = [
    (["4xf32=1 2 3 4"], ["4xf32=1 2 3 4"], []),
    (["4xf32=1 2 3 4.00001"], ["4xf32=1 2 3 4"], []),
    (["4xf32=1 2 3 4.001"], ["4xf32=1 2 3 4"], []),
    (["4xf32=1 2 3 4.001"], ["4xf32=1 2 3 4"], ["--expected_f32_threshold=0.01"]),
    (["4xf32=1 2 3 4.00001"], ["4xf32=1 2 3 4"], ["--equality_mode=exact"]),
    (["4xf32=1 2 3 1004"], ["4xf32=1 2 3 1000"], ["--expected_rtol=0.01"]),
    (["3xf32=nan inf -inf"], ["3xf32=nan inf -inf"], []),
    (["2xf32=inf 1"], ["2xf32=1 inf"], []),
    (["4xf32=1 2 3 4"], ["2x2xf32=1 2 3 4"], []),
    (["4xf32=1 2 3 4"], ["4xf16=1 2 3 4"], []),
    (["3xi32=1 2 3"], ["3xi32=1 2 4"], []),
    (["3xi32=1 2 3"], ["3xsi32=1 2 3"], []),
    (["2xi1=01 00"], ["2xi1=01 01"], []),
    (["2xf16=1 2"], ["2xf16=1.0009765625 2"], []),
    (["2xf16=1 2"], ["2xf16=1.0009765625 2"], ["--expected_f16_threshold=0.01"]),
    (["2xbf16=1 2"], ["2xbf16=1.0078125 2"], []),
    (["2xbf16=1 2"], ["2xbf16=1.0078125 2"], ["--expected_bf16_threshold=0.001"]),
    (["2xf64=1 2"], ["2xf64=1.0001 2"], ["--expected_f64_threshold=0.001"]),
    (["2xf64=1 2"], ["2xf64=1.001 2"], []),
    (["4xf32=1 2 3 4", "2xi8=1 2"], ["(ignored)", "2xi8=1 3"], []),
    (["4xf32=1 2 3 4", "2xi8=1 2"], ["4xf32=1 2 3 4"], []),
    (["(null)"], ["4xf32=1 2 3 4"], []),
    (["&4xi8=1 2 3 4"], ["4xi8=1 2 3 4"], []),
    (["40x40xf32=1"], ["40x40xf32=2"], []),
    (["2x*16=0102 0304"], ["2x*16=0102 0305"], []),
    ([CF64], [CF64.replace("eeff", "eeef")], []),
    ([CF64], [CF64], []),
]


@pytest.mark.parametrize("case", range(len(EXPECTED_CASES)))
def test_expected_output_verdicts_match_iree(vmfb, case):
    inputs, expected, flags = EXPECTED_CASES[case]
    function = "echo1" if len(inputs) == 1 else "echo16"
    if function == "echo16":
        inputs = inputs + ["f32=0"] * (ECHO - len(inputs))
        expected = expected + (["f32=0"] * (ECHO - len(expected)) if len(expected) > 1 else [])
    proc = run_iree(
        vmfb,
        function,
        [f"--input={t}" for t in inputs] + [f"--expected_output={e}" for e in expected] + flags,
    )
    equality = Equality(**{_flag_field(f): _flag_value(f) for f in flags})
    actual = parse_inputs(inputs, "r" * len(inputs))
    ok, message = compare_expected(actual, expected, equality=equality)
    assert proc.returncode in (0, 1), proc.stderr.decode()
    assert (proc.returncode == 0) == ok
    head = f"EXEC @{function}\n"
    assert message == proc.stdout.decode()[len(head) :]


def _flag_field(flag: str) -> str:
    name = flag.split("=")[0].removeprefix("--")
    return {"equality_mode": "mode", "expected_rtol": "rtol"}.get(name) or (
        name.removeprefix("expected_").replace("_threshold", "_atol")
    )


def _flag_value(flag: str):
    value = flag.split("=", 1)[1]
    return value if "mode" in flag else float(value)


def test_expected_output_on_scalars_always_fails_like_iree(vmfb):
    """IREE 3.13.0 never matches primitive results, even equal ones."""
    inputs = SCALAR_ROWS[1]
    expected = ["7", "1", "3", "1", "0", "(ignored)", "9223372036854775807", "42", "1234565",
                "inf", "nan", "0", "0.1", "1e308", "2.5e-5", "1e16"]  # fmt: skip
    proc = run_iree(
        vmfb,
        "scalars16",
        [f"--input={t}" for t in inputs] + [f"--expected_output={e}" for e in expected],
    )
    ok, message = compare_expected(parse_inputs(inputs, SCALARS_CCONV), expected)
    assert proc.returncode == 1 and not ok
    assert message == proc.stdout.decode()[len("EXEC @scalars16\n") :]


def test_expected_output_from_npy_is_signed(vmfb, tmp_path):
    path = tmp_path / "e.npy"
    np.save(path, np.array([1, 2, 3], dtype=np.int32))
    for inputs in (["3xi32=1 2 3"], ["3xsi32=1 2 3"]):
        proc = run_iree(vmfb, "echo1", [f"--input={inputs[0]}", f"--expected_output=@{path}"])
        ok, message = compare_expected(parse_inputs(inputs, "r"), [f"@{path}"])
        assert (proc.returncode == 0) == ok
        assert message == proc.stdout.decode()[len("EXEC @echo1\n") :]


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

_IREE_ERROR = re.compile(r"^(?:\S+:\d+: )?([A-Z_]+); (.*)$", re.S)


def _assert_same_error(error: AmdgpuCliError, iree_stderr: str, *, compare_status: bool = True):
    line = error.one_line()
    assert "\n" not in line
    m = _IREE_ERROR.match(iree_stderr.strip())
    assert m, iree_stderr
    status, rest = m.groups()
    if not compare_status:
        return
    assert error.status == status, (line, iree_stderr)
    annotation = r"(?:; )?(?:parsing input `|outputting results|parsing expected)"
    iree_core = re.split(annotation, rest)[0]
    ours_core = re.split(annotation, str(error))[0]
    if iree_core:
        assert ours_core == iree_core, (line, iree_stderr)


BAD_TENSOR_INPUTS = [
    "4xf32=1 2", "2xf32=1 2 3", "2xf32=1 2 3,", "2xf32=1 abc", "2xq32=1", "xf32=1,2",
    "2x-1xf32=1", "2xx3xf32=1", "2xi8=256", "2xi8=-129", "2xsi8=128", "2xui8=-1",
    "2xui16=65536", "2xi16=65536", "2xsi16=32768", "2xi1=1", "2xi1=0x01", "f32", "=1",
    "2xf32=1e-50", "2xf64=1e-400", "3", "1x2", "2xi0=1", "2xi300=1", "2xf8=1 2",
    '2xf32="1 2"', "", "2xf32=[]", "1xf32=,", "2xi32=99999999999999999999",
    "2xi32=0123456789012345678", "2xf32=1.000000000000000000000000000001", "2xf32=7e-46",
    "1x" * 129 + "f32", "2xf32=@/dev/null", "2xf32= @x.bin", "i1", "2x3xf32=1 2 3 4 5 6 7",
]  # fmt: skip


@pytest.mark.parametrize("text", BAD_TENSOR_INPUTS)
def test_bad_tensor_inputs_fail_like_iree(vmfb, text):
    proc = run_iree(vmfb, "echo1", [f"--input={text}"])
    assert proc.returncode != 0, proc.stdout
    with pytest.raises(AmdgpuCliError) as info:
        parse_inputs([text], "r")
    _assert_same_error(info.value, proc.stderr.decode())


BAD_SCALAR_INPUTS = [
    ("abc", 0), ("-", 0), ("99999999999999999999", 4), ("012345678901234567", 0),
    ("1e-46", 8), ("1e-400", 12), ("x", 8), ("@{d}/a.npy", 0), ("@{d}/a.npy", 12),
    ("1.000000000000000000000000000001", 8), ("0x8000000000000000", 4), ("", 3),
]  # fmt: skip


@pytest.mark.parametrize("text,position", BAD_SCALAR_INPUTS)
def test_bad_scalar_inputs_fail_like_iree(vmfb, tmp_path, text, position):
    text = text.format(d=tmp_path)
    inputs = ["0"] * position + [text] + ["0"] * (len(SCALARS_CCONV) - position - 1)
    np.save(tmp_path / "a.npy", np.zeros(2, dtype=np.float32))
    proc = run_iree(vmfb, "scalars16", [f"--input={t}" for t in inputs])
    assert proc.returncode != 0
    with pytest.raises(AmdgpuCliError) as info:
        parse_inputs(inputs, SCALARS_CCONV)
    _assert_same_error(info.value, proc.stderr.decode())


def test_odd_scalar_literals_parse_like_iree(vmfb):
    """Random values as decimal and C hex-float text, plus literals C reads only partly."""
    rng = random.Random(7)
    rows = [["0x", "2xf32=1", "1e3", "0b101", "0x", "0x10p", "077", "9e18",
             "0x", "0x1p", "1e", ".5e-3", "0x", "0X1.8P1", "-.5", "1e-310"]]  # fmt: skip
    for _ in range(4):
        row = [str(rng.randint(-(2**31), 2**31 - 1)) for _ in range(2)]
        row += [hex(rng.randint(0, 2**31 - 1)), oct(rng.randint(0, 2**20)).replace("0o", "0")]
        row += [str(rng.randint(-(2**63), 2**63 - 1)) for _ in range(2)]
        row += [hex(rng.randint(0, 2**63 - 1)), "-" + hex(rng.randint(0, 2**63))]
        singles = [struct.unpack("<f", struct.pack("<I", rng.getrandbits(31) % 0x7F800000))[0]
                   for _ in range(4)]  # fmt: skip
        row += [float.hex(singles[0]), repr(singles[1]), "%.9g" % singles[2], "%.3e" % singles[3]]
        finite_bits = [rng.getrandbits(63) % 0x7FF0000000000000 for _ in range(4)]
        doubles = [struct.unpack("<d", struct.pack("<Q", b))[0] for b in finite_bits]
        row += [float.hex(doubles[0]), repr(doubles[1]), "%.17g" % doubles[2], "%.6g" % doubles[3]]
        rows.append([t if len(t) < 32 else t[:31] for t in row])
    for row in rows:
        proc = run_iree(vmfb, "scalars16", [f"--input={t}" for t in row])
        assert format_results(parse_inputs(row, SCALARS_CCONV)) == iree_stdout(proc, "scalars16")


@pytest.mark.parametrize(
    "name", ["fortran", "bigendian", "badmagic", "empty", "truncated", "unicode", "missing"]
)
def test_bad_npy_inputs_fail_like_iree(vmfb, npy_files, name):
    path = npy_files.get(name, Path("/nonexistent/x.npy"))
    proc = run_iree(vmfb, "echo1", [f"--input=@{path}"])
    assert proc.returncode != 0
    with pytest.raises(AmdgpuCliError) as info:
        parse_inputs([f"@{path}"], "r")
    _assert_same_error(info.value, proc.stderr.decode(), compare_status=name != "missing")


def test_too_many_inputs_fail_like_iree(vmfb, npy_files):
    for inputs in (["1xf32=1", "1xf32=2"], [f"*{npy_files['many']}"]):
        proc = run_iree(vmfb, "echo1", [f"--input={t}" for t in inputs])
        with pytest.raises(AmdgpuCliError) as info:
            parse_inputs(inputs, "r")
        _assert_same_error(info.value, proc.stderr.decode())


# --------------------------------------------------------------------------------------------
# Library-only behaviour (no oracle needed)
# --------------------------------------------------------------------------------------------


def test_parse_input_infers_scalar_kinds():
    assert parse_input("42") == np.int32(42) and isinstance(parse_input("42"), np.int32)
    assert isinstance(parse_input("0x100000000"), np.int64)
    assert isinstance(parse_input("3.5"), np.float32)
    assert isinstance(parse_input("3.5", "f64"), np.float64)
    assert parse_input("(null)") is None
    assert isinstance(parse_input("&2xf32=1"), StorageBuffer)
    assert parse_input("2xi1=01 00").array.tolist() == [True, False]


def test_bf16_array_needs_ml_dtypes_or_fails_cleanly():
    tensor = parse_input("2xbf16=1.5 -2")
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        with pytest.raises(AmdgpuCliError, match="ml_dtypes"):
            tensor.array
    else:
        assert tensor.array.astype(np.float32).tolist() == [1.5, -2.0]
        assert format_result(Tensor.from_array(tensor.array)) == format_result(tensor)


def test_errors_are_one_line():
    with pytest.raises(AmdgpuCliError) as info:
        parse_input("4xf32=1\n2", "r")
    assert "\n" not in info.value.one_line()

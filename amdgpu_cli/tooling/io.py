"""Function I/O of amdgpu-run: `--input` values in, results out, exactly as iree-run-module.

What this module owns
* Values. A function argument or result is one of
    - `None`: a null ref or an empty variant (prints `(null)`);
    - a numpy scalar `np.int32`, `np.int64`, `np.float32`, `np.float64` (also `np.int8`,
      `np.int16`): a VM primitive value; a Python `int` counts as i64 and a `float` as f64;
    - `Tensor`: the host image of a `hal.buffer_view` (IREE element type + dense bytes);
    - `StorageBuffer`: the host image of a bare `hal.buffer` (what an `&...` input passes);
    - `bytes`/`bytearray`/`memoryview`: a `vm.buffer`;
    - a `list`/`tuple` of values: a `vm.list`.
  A plain `np.ndarray` is accepted wherever a Tensor is and converted with `Tensor.from_array`.
* Parsing (`parse_input`, `parse_inputs`): the whole `--input` grammar of IREE 3.13.0's
  `iree/tooling/function_io.c` and `hal/string_util.c`, driven by the function's cconv
  (`i`, `I`, `f`, `F`, `r`): `(null)`, `@`/`+`/`*file.npy`, `&tensor`, C-literal scalars, and
  `[shape x]type[=data]` with bracket/comma/space separated or splatted data or `=@file.bin`.
  Numbers are read the way C's strtol/strtof read them (see element_types), so `010` is 8,
  `1e3` as an i32 is 1 and `1e-50` as an f32 is an error.
* Printing (`format_result`, `format_results`): `result[i]: ` lines, `%G` element text, hex for
  i1 and opaque types, `--output_max_element_count` elision.
* Outputs (`write_output`, `write_outputs`): `--output=` empty / `-` / `@file` / `+file`,
  .npy written byte for byte like IREE's numpy_io (other suffixes get the raw bytes).
* Checking (`compare_expected`): `--expected_output` with IREE's matchers, tolerances, messages
  and its 3.13.0 quirk that scalar results never match.

Errors a user can cause raise `FunctionIOError` (an AmdgpuCliError) whose `status` is the IREE
status code name and whose message carries IREE's wording where IREE has one, followed by the
same `parsing input `...`` annotation. Files named by inputs that cannot be opened raise
`InputFileError`.

Threading: none; every call is self-contained except an explicit `InputFiles`, which is not
thread-safe (neither is IREE's stream list).

Sources: IREE runtime/src/iree/tooling/{function_io.c,numpy_io.c,comparison.cc,
buffer_view_matchers.c,process_results.c}, hal/{string_util.c,buffer_view_util.c}.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from typing import IO, Any, Iterable, Sequence, Union

import numpy as np

from amdgpu_cli.errors import AmdgpuCliError, InputFileError
from amdgpu_cli.tooling.element_types import (
    F16,
    F32,
    F64,
    BF16,
    I8,
    ElementType,
    NumericalType,
    c_strtod,
    c_strtol,
    c_strtoul,
    decode_narrow_float,
    encode_narrow_float,
    is_c_float_literal,
)

__all__ = [
    "DEFAULT_MAX_ELEMENT_COUNT",
    "Equality",
    "FunctionIOError",
    "InputFiles",
    "StorageBuffer",
    "Tensor",
    "Value",
    "compare_expected",
    "format_buffer_view",
    "format_result",
    "format_results",
    "npy_bytes",
    "parse_input",
    "parse_inputs",
    "read_npy",
    "write_output",
    "write_outputs",
]

DEFAULT_MAX_ELEMENT_COUNT = 1024  # iree-run-module's --output_max_element_count
_MAX_RANK = 128  # IREE rejects shapes of higher rank
_MAX_ALLOCATION = 1 << 40  # refuse absurd shapes instead of asking numpy for petabytes
_C_SPACE = " \t\n\v\f\r"
_SEPARATORS = frozenset(_C_SPACE + ",[]")


class FunctionIOError(AmdgpuCliError):
    """A bad --input / --output / --expected_output value; `status` is IREE's code name."""


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Tensor:
    """Host image of a `hal.buffer_view`: an IREE element type and dense row-major storage.

    `storage` is C-contiguous, has the tensor's shape and the element type's storage dtype
    (raw bits for bf16/f8, uint8 for i1, `V<n>` for opaque types), so the IREE element type is
    never lost to numpy's coarser dtypes (si32 and i32 are both int32 there).
    """

    element_type: ElementType
    storage: np.ndarray

    type_name = "hal.buffer_view"

    def __post_init__(self):
        storage = np.asarray(self.storage)
        if not storage.flags.c_contiguous:
            storage = storage.copy(order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        if storage.dtype != self.element_type.storage_dtype:
            raise TypeError(
                f"storage dtype {storage.dtype} does not hold {self.element_type.name} elements"
            )
        object.__setattr__(self, "storage", storage)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.storage.shape)

    @property
    def nbytes(self) -> int:
        return self.storage.nbytes

    def tobytes(self) -> bytes:
        return self.storage.tobytes()

    @property
    def array(self) -> np.ndarray:
        """The values in the user-facing dtype (bool for i1; ml_dtypes for bf16 and f8)."""
        dtype = self.element_type.numpy_dtype
        if self.element_type.is_boolean:
            return self.storage != 0
        return self.storage.view(dtype)

    @classmethod
    def from_bytes(cls, element_type: ElementType, shape: Sequence[int], data) -> Tensor:
        dtype = element_type.storage_dtype
        storage = np.frombuffer(bytes(data), dtype=dtype).reshape(tuple(shape))
        return cls(element_type, storage.copy())

    @classmethod
    def from_array(cls, array, element_type: ElementType | str | None = None) -> Tensor:
        """Wraps a numpy array; integers default to signless `iN`, bool to i1.

        With an explicit element type the values are converted to it (through IREE's own
        f32 rounding for f16, bf16 and the f8 types).
        """
        array = np.asarray(array)
        if isinstance(element_type, str):
            element_type = ElementType.parse(element_type)
        if element_type is None:
            element_type = ElementType.from_numpy_dtype(array.dtype)
        storage_dtype = element_type.storage_dtype
        if array.dtype == storage_dtype:
            storage = array.copy()
        elif element_type.is_boolean:
            storage = (array != 0).astype(storage_dtype)
        elif element_type.narrow_float is not None:
            if array.dtype.kind == "V" and array.dtype.itemsize == storage_dtype.itemsize:
                storage = array.view(storage_dtype).copy()  # ml_dtypes values: keep the bits
            else:
                bits = encode_narrow_float(array.astype(np.float32), element_type.narrow_float)
                storage = _from_bits(bits, storage_dtype)
        else:
            storage = array.astype(storage_dtype)
        return cls(element_type, storage)

    def retyped(self, element_type: ElementType | str) -> Tensor:
        """The same bytes seen as another element type of the same width."""
        if isinstance(element_type, str):
            element_type = ElementType.parse(element_type)
        return Tensor(element_type, self.storage.view(element_type.storage_dtype))

    def __repr__(self) -> str:
        return f"Tensor({format_buffer_view(self, 8)})"


@dataclass(frozen=True)
class StorageBuffer:
    """Host image of a bare `hal.buffer` (no shape or element type)."""

    data: bytes

    type_name = "hal.buffer"


Value = Union[None, np.generic, int, float, Tensor, StorageBuffer, bytes, list]

_SCALAR_NAMES = {
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}


def _normalize(value: Any) -> Any:
    """Python ints/floats and numpy arrays to the canonical value kinds."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("booleans are not VM values; use np.int32 or an i1 Tensor")
    if isinstance(value, int):
        return np.int64(value)
    if isinstance(value, float):
        return np.float64(value)
    if isinstance(value, np.ndarray):
        return Tensor.from_array(value)
    if isinstance(value, np.generic) and value.dtype not in _SCALAR_NAMES:
        raise TypeError(f"numpy scalar of dtype {value.dtype} is not a VM value")
    return value


def _type_name(value: Any) -> str:
    """IREE's name for a variant's type (`iree_vm_append_variant_type_string`)."""
    if value is None:
        return "empty"
    if isinstance(value, np.generic):
        return _SCALAR_NAMES[value.dtype]
    if isinstance(value, (Tensor, StorageBuffer)):
        return value.type_name
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "vm.buffer"
    if isinstance(value, (list, tuple)):
        return "vm.list"
    raise TypeError(f"{type(value).__name__} is not a function I/O value")


# --------------------------------------------------------------------------------------------
# Input files shared between inputs (IREE's iree_io_stream_list_t)
# --------------------------------------------------------------------------------------------


class InputFiles:
    """Files opened by `@`, `+` and `*` inputs, keyed by their verbatim path.

    `@path` rewinds (or opens) the file; `+path` and `*path` continue where the previous input
    from that path stopped, which is how several arrays are read from one .npy file in order.
    """

    def __init__(self):
        self._files: dict[str, IO[bytes]] = {}

    def open(self, path: str, *, append: bool) -> IO[bytes]:
        f = self._files.get(path)
        if f is not None:
            if not append:
                f.seek(0)
            return f
        try:
            f = open(path, "rb")
        except OSError as e:
            raise InputFileError(
                f"unable to open file `{path}`: {e.strerror or e}", status=_os_error_status(e)
            ) from None
        self._files[path] = f
        return f

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()

    def __enter__(self) -> InputFiles:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _os_error_status(e: OSError) -> str:
    if isinstance(e, FileNotFoundError):
        return "NOT_FOUND"
    if isinstance(e, PermissionError):
        return "PERMISSION_DENIED"
    return "UNKNOWN"


def _read_exact(f: IO[bytes], size: int) -> bytes:
    data = f.read(size)
    if len(data) != size:
        raise FunctionIOError("end-of-file encountered during read", status="OUT_OF_RANGE")
    return data


def _at_end(f: IO[bytes]) -> bool:
    position = f.tell()
    return position == os.fstat(f.fileno()).st_size


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------

_CCONV_ALIASES = {"i32": "i", "i64": "I", "f32": "f", "f64": "F", "i": "i", "I": "I",
                  "f": "f", "F": "F", "r": "r"}  # fmt: skip


class _Cconv:
    """The argument cconv being consumed; `chars=None` infers each kind from the text."""

    def __init__(self, chars: str | None):
        self.chars = chars
        self.position = 0
        self.inferred = "r"

    def peek(self) -> str | None:
        if self.chars is None:
            return self.inferred
        return self.chars[self.position] if self.position < len(self.chars) else None

    def take_any(self) -> str:
        kind = self.peek()
        if kind is None:
            raise FunctionIOError("function expected fewer input values")
        self.position += 1
        return kind

    def take(self, expected: str) -> None:
        kind = self.take_any()
        if kind != expected:
            raise FunctionIOError(
                f"function signature mismatch: expected cconv type `{expected}` "
                f"but provided type `{kind}`"
            )


def parse_input(
    text: str, expected: str | None = None, *, files: InputFiles | None = None
) -> Value:
    """Parses one `--input` value.

    `expected` is the argument's cconv kind: `i` (or `i32`), `I` (`i64`), `f` (`f32`),
    `F` (`f64`) or `r` (a ref: tensor, buffer, null). With None the kind is inferred: a complete
    integer literal is an i32 (i64 when it does not fit), a complete float literal an f32, and
    anything else a ref. `files` shares open files with other inputs (see `InputFiles`).
    A `*file.npy` input must go through `parse_inputs`, as it can yield any number of values.
    """
    values = parse_inputs([text], None if expected is None else _cconv_chars(expected), files=files)
    if len(values) != 1:
        raise FunctionIOError(
            f"input `{text.strip(_C_SPACE)}` gave {len(values)} values; use parse_inputs"
        )
    return values[0]


def parse_inputs(
    texts: Iterable[str], cconv: str | None = None, *, files: InputFiles | None = None
) -> list[Value]:
    """Parses `--input` values in order against the function's argument cconv.

    `cconv` is the argument fragment of the function's calling convention (`rri` of `0rri_r`),
    or one of the aliases `i32`/`i64`/`f32`/`f64`; None infers each value's kind as
    `parse_input` does. Like iree-run-module, this consumes one cconv character per value
    produced, fails when the inputs need more than the cconv has, and does not check that all
    of it was used (a short argument list is the caller's error to report).
    """
    if isinstance(texts, str):
        raise TypeError("parse_inputs takes a sequence of input strings, not one string")
    cursor = _Cconv(None if cconv is None else _cconv_chars(cconv))
    owned = files is None
    files = files if files is not None else InputFiles()
    values: list[Value] = []
    try:
        for raw in texts:
            text = raw.strip(_C_SPACE)
            if cursor.chars is None:
                cursor.inferred = _infer_kind(text)
            try:
                _parse_value_into(text, cursor, values, files)
            except AmdgpuCliError as e:
                raise type(e)(f"{e}; parsing input `{text}`", status=e.status) from None
    finally:
        if owned:
            files.close()
    return values


def _cconv_chars(cconv: str) -> str:
    if cconv in _CCONV_ALIASES:
        return _CCONV_ALIASES[cconv]
    return cconv


def _infer_kind(text: str) -> str:
    integer = c_strtol(text, 64)
    if integer is not None and _is_complete_integer(text):
        return "i" if -(1 << 31) <= integer < (1 << 31) else "I"
    if _is_complete_float(text):
        return "f"
    return "r"


def _is_complete_integer(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    if body[:2] in ("0x", "0X"):
        return len(body) > 2 and all(c in "0123456789abcdefABCDEF" for c in body[2:])
    return body.isdigit() and body.isascii()


def _is_complete_float(text: str) -> bool:
    return is_c_float_literal(text) and c_strtod(text, single=True) is not None


def _parse_value_into(text: str, cconv: _Cconv, out: list, files: InputFiles) -> None:
    if not text:
        raise FunctionIOError("no value specified for input")
    if text in ("(null)", "(ignored)"):
        out.append(_null_of_kind(cconv.take_any()))
    elif text[0] in "@+*":
        _parse_npy_file_into(text, cconv, out, files)
    elif text[0] == "&":
        cconv.take("r")
        out.append(StorageBuffer(_parse_tensor(text[1:], files).tobytes()))
    elif cconv.peek() != "r":
        out.append(_parse_primitive(cconv.take_any(), text))
    else:
        cconv.take("r")
        if "=" not in text and "x" not in text:
            raise FunctionIOError(
                "invalid tensor specification, requires at least a shape/type (`4x2xf32=...`)"
            )
        out.append(_parse_tensor(text, files))


def _null_of_kind(kind: str) -> Value:
    zeros = {"i": np.int32(0), "I": np.int64(0), "f": np.float32(0), "F": np.float64(0)}
    if kind == "r":
        return None
    if kind not in zeros:
        raise FunctionIOError(f"unimplemented cconv type `{kind}`", status="UNIMPLEMENTED")
    return zeros[kind]


def _parse_primitive(kind: str, text: str) -> Value:
    if kind == "i":
        value, name = c_strtol(text, 32, max_chars=16), "i32"
        value = None if value is None else np.int32(value)
    elif kind == "I":
        value, name = c_strtol(text, 64), "i64"
        value = None if value is None else np.int64(value)
    elif kind == "f":
        value, name = c_strtod(text, single=True), "f32"
    elif kind == "F":
        value, name = c_strtod(text), "f64"
    else:
        raise FunctionIOError(f"unimplemented cconv type `{kind}`", status="UNIMPLEMENTED")
    if value is None:
        raise FunctionIOError(f"parsing value `{text}` as {name}")
    return value


def _parse_npy_file_into(text: str, cconv: _Cconv, out: list, files: InputFiles) -> None:
    append = text[0] != "@"
    splat = text[0] == "*"
    path = text[1:]
    if not path.endswith(".npy"):
        raise FunctionIOError(
            "only numpy (.npy) files are supported for metadata-less variant I/O",
            status="UNIMPLEMENTED",
        )
    f = files.open(path, append=append)
    if not splat:
        cconv.take("r")
        out.append(read_npy(f))
        return
    while not _at_end(f):
        cconv.take("r")
        out.append(read_npy(f))


def _split_shape_and_type(text: str) -> tuple[list[int], ElementType, str | None]:
    """`[shape x]type[=data]` -> (shape, element type, data text or None)."""
    value = text.strip(_C_SPACE)
    if value.startswith('"'):
        value = value[1:]
    if value.endswith('"'):
        value = value[:-1]
    if not value:
        raise FunctionIOError("empty string input")
    shape_and_type, sep, data = value.partition("=")
    last_x = shape_and_type.rfind("x")
    if last_x < 0:
        shape_text, type_text = "", shape_and_type
    else:
        shape_text, type_text = shape_and_type[:last_x], shape_and_type[last_x + 1 :]
    shape = _parse_shape(shape_text)
    element_type = ElementType.parse(type_text)
    return shape, element_type, (data if sep else None)


def _parse_shape(text: str) -> list[int]:
    """`2x3x4` -> [2, 3, 4] with IREE's rules (C integers, no empty or negative dims)."""
    if not text:
        return []
    rank = text.count("x") + 1
    if rank > _MAX_RANK:
        raise FunctionIOError(
            f"a shape rank of {rank} is just a little bit excessive, eh?",
            status="RESOURCE_EXHAUSTED",
        )
    dims: list[int] = []
    for part in text.split("x"):
        if not part:
            break
        dim = c_strtol(part, 64)
        if dim is None or dim < 0:
            raise FunctionIOError(f"shape[{len(dims)}] invalid value '{part}' of '{text}'")
        dims.append(dim)
    if len(dims) != rank:
        raise FunctionIOError(f"invalid shape specification: '{text}'")
    return dims


def _checked_size(shape: Sequence[int], element_type: ElementType) -> tuple[int, np.dtype]:
    if element_type.bit_count == 0:
        raise FunctionIOError("opaque element types cannot be indexed")
    dtype = element_type.storage_dtype
    count = math.prod(shape)
    if count * dtype.itemsize > _MAX_ALLOCATION:
        raise FunctionIOError(
            f"cannot allocate a {'x'.join(map(str, shape))}x{element_type} buffer "
            f"({count * dtype.itemsize} bytes)",
            status="RESOURCE_EXHAUSTED",
        )
    return count, dtype


def _parse_tensor(text: str, files: InputFiles) -> Tensor:
    metadata, sep, contents = text.partition("=")
    if sep and contents[:1] in ("@", "+"):
        shape, element_type, _ = _split_shape_and_type(metadata)
        f = files.open(contents[1:], append=contents[0] != "@")
        count, dtype = _checked_size(shape, element_type)
        data = _read_exact(f, count * dtype.itemsize)
        return Tensor(element_type, np.frombuffer(data, dtype=dtype).reshape(shape).copy())
    shape, element_type, data = _split_shape_and_type(text)
    count, dtype = _checked_size(shape, element_type)
    if not data:
        return Tensor(element_type, np.zeros(shape, dtype=dtype))
    flat = _parse_elements(data, element_type, count)
    return Tensor(element_type, flat.reshape(shape))


def _tokens(data: str) -> list[tuple[str, bool]]:
    """Element tokens and whether each one ended at a separator (vs. the end of the text)."""
    tokens = []
    start = None
    for i, c in enumerate(data):
        if c in _SEPARATORS:
            if start is not None:
                tokens.append((data[start:i], True))
                start = None
        elif start is None:
            start = i
    if start is not None:
        tokens.append((data[start:], False))
    return tokens


def _parse_elements(data: str, element_type: ElementType, capacity: int) -> np.ndarray:
    """IREE's `iree_hal_parse_buffer_elements`: tokens -> flat storage (splat, under/overflow)."""
    parse = _element_parser(element_type)
    parsed = []
    for token, separated in _tokens(data):
        if len(parsed) >= capacity:
            # IREE words the overflow differently for a token that ends the text.
            what = "output data buffer overflow" if separated else "output data overflow"
            raise FunctionIOError(
                f"{what}: element_capacity={capacity} < dst_i={len(parsed)}{'+' * separated}",
                status="OUT_OF_RANGE",
            )
        parsed.append(parse(token))
    if len(parsed) < capacity and not (len(parsed) == 1 and capacity > 1):
        raise FunctionIOError(
            f"input data string underflow: dst_i={len(parsed)} < element_capacity={capacity}",
            status="OUT_OF_RANGE",
        )
    packed = _pack_elements(parsed, element_type)
    return np.repeat(packed, capacity) if len(packed) < capacity else packed  # one value splats


def _int_parser(element_type: ElementType, lo: int | None = None, hi: int | None = None):
    """Integer tokens: read as C (unsigned) long, cut to 32 bits for types up to 32 bits wide,
    then range-checked; the final cast to the element width happens when packing."""
    name = element_type.name
    wide = element_type.bit_count > 32
    read = c_strtoul if element_type.numerical_type == NumericalType.INTEGER_UNSIGNED else c_strtol
    width, max_chars = (64, 32) if wide else (32, 16)

    def parse(token: str) -> int:
        value = read(token, width, max_chars=max_chars)
        if value is None or (hi is not None and value > hi) or (lo is not None and value < lo):
            raise FunctionIOError(f"invalid {name} element `{token}`")
        return value

    return parse


def _element_parser(element_type: ElementType):
    """A token -> element value function for one element type (string_util.c rules)."""
    nt, bits = element_type.numerical_type, element_type.bit_count
    if bits in (8, 16) and nt == NumericalType.INTEGER:
        # Signless 8/16-bit: anything from the signed minimum to the unsigned maximum.
        return _int_parser(element_type, -(1 << (bits - 1)), (1 << bits) - 1)
    if bits in (8, 16) and nt == NumericalType.INTEGER_SIGNED:
        return _int_parser(element_type, hi=(1 << (bits - 1)) - 1)  # no lower bound: it wraps
    if bits in (8, 16) and nt == NumericalType.INTEGER_UNSIGNED:
        return _int_parser(element_type, hi=(1 << bits) - 1)
    if bits in (32, 64) and nt in (
        NumericalType.INTEGER,
        NumericalType.INTEGER_SIGNED,
        NumericalType.INTEGER_UNSIGNED,
    ):
        return _int_parser(element_type)
    if element_type.narrow_float is not None or element_type in (F32, F64):
        single = element_type != F64
        name = element_type.name

        def parse_float(token: str):
            value = c_strtod(token, single=single)
            if value is None:
                raise FunctionIOError(f"invalid {name} element `{token}`")
            return value

        return parse_float
    size = element_type.byte_size

    def parse_hex(token: str) -> bytes:
        if len(token) != size * 2:
            raise FunctionIOError(
                "binary hex element count mismatch: "
                f"buffer length={len(token)} < expected={size * 2}"
            )
        # IREE's table maps anything that is not a hex digit to 0.
        nibbles = [_hex_nibble(c) for c in token]
        return bytes(hi << 4 | lo for hi, lo in zip(nibbles[::2], nibbles[1::2]))

    return parse_hex


def _bits(storage: np.ndarray) -> np.ndarray:
    """Storage seen as unsigned integers of the same width (f16 storage is np.float16)."""
    return storage.view(f"<u{storage.dtype.itemsize}")


def _from_bits(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return bits.astype(f"<u{dtype.itemsize}").view(dtype)


def _hex_nibble(c: str) -> int:
    return int(c, 16) if c in "0123456789abcdefABCDEF" else 0


def _pack_elements(parsed: list, element_type: ElementType) -> np.ndarray:
    dtype = element_type.storage_dtype
    if not parsed:
        return np.zeros(0, dtype=dtype)
    if isinstance(parsed[0], bytes):
        return np.frombuffer(b"".join(parsed), dtype=dtype).copy()
    fmt = element_type.narrow_float
    if fmt is not None:
        return _from_bits(encode_narrow_float(np.array(parsed, dtype=np.float32), fmt), dtype)
    if dtype.kind in "iu":
        # The C cast to the element width: keep the low bits, whatever the sign.
        mask = (1 << (dtype.itemsize * 8)) - 1
        unsigned_dtype = np.dtype(f"<u{dtype.itemsize}")
        low_bits = np.array([v & mask for v in parsed], dtype=np.uint64)
        return low_bits.astype(unsigned_dtype).view(dtype)
    return np.array(parsed, dtype=dtype)


# --------------------------------------------------------------------------------------------
# .npy files (IREE numpy_io.c)
# --------------------------------------------------------------------------------------------

_NPY_MAGIC = b"\x93NUMPY"


def read_npy(f: IO[bytes]) -> Tensor:
    """Reads the next ndarray from an open .npy stream, with IREE's acceptance rules.

    Integers come back signed (`<i4` is si32), Fortran order and big-endian data are
    rejected, and the header dict is scanned the way IREE scans it.
    """
    if _at_end(f):
        raise FunctionIOError("end-of-file", status="OUT_OF_RANGE")
    prefix = f.read(8)
    if len(prefix) != 8:
        raise FunctionIOError(
            "end-of-file encountered during read; unable to read entire header prefix",
            status="OUT_OF_RANGE",
        )
    if prefix[:6] != _NPY_MAGIC:
        raise FunctionIOError("npy header magic mismatch")
    major, minor = prefix[6], prefix[7]
    if major == 0 or major > 3:
        raise FunctionIOError(f"npy version {major}.{minor} not supported", status="UNIMPLEMENTED")
    length_size = 2 if major == 1 else 4
    length_bytes = f.read(length_size)
    if len(length_bytes) != length_size:
        raise FunctionIOError(
            f"end-of-file encountered during read; failed to read version {major}.{minor} "
            f"{length_size}-byte header length",
            status="OUT_OF_RANGE",
        )
    header_length = int.from_bytes(length_bytes, "little")
    header = f.read(header_length)
    if len(header) != header_length:
        raise FunctionIOError(
            "end-of-file encountered during read; "
            f"failed to read header string of {header_length} bytes",
            status="OUT_OF_RANGE",
        )
    element_type, shape, dense = _parse_npy_header(header.decode("latin-1"))
    if not dense:
        raise FunctionIOError(
            "unimplemented encoding type size calculation", status="UNIMPLEMENTED"
        )
    count, dtype = _checked_size(shape, element_type)
    size = count * dtype.itemsize
    data = f.read(size)
    if len(data) != size:
        raise FunctionIOError(
            f"end-of-file encountered during read; failed to read npy contents of {size} bytes",
            status="OUT_OF_RANGE",
        )
    return Tensor(element_type, np.frombuffer(data, dtype=dtype).reshape(shape).copy())


def _parse_npy_header(header: str) -> tuple[ElementType, list[int], bool]:
    text = header.strip(_C_SPACE)
    if text.startswith("{"):
        text = text[1:]
    if text.endswith("}"):
        text = text[:-1]
    element_type = ElementType(NumericalType.UNKNOWN, 0)
    shape: list[int] = []
    dense = False
    while text:
        key, sep, text = text.partition(":")
        if not sep:
            raise FunctionIOError("malformed header dict")
        key = key[1:] if key.startswith("'") else key
        key = key[:-1] if key.endswith("'") else key
        text = text.strip(_C_SPACE)
        if text.startswith("True"):
            value, text = "True", text[4:]
        elif text.startswith("False"):
            value, text = "False", text[5:]
        elif text.startswith("'"):
            value, _, text = text[1:].partition("'")
        elif text.startswith("("):
            value, _, text = text[1:].partition(")")
        else:
            raise FunctionIOError("malformed header dict")
        if not text.startswith(","):
            raise FunctionIOError("malformed header dict")
        text = text[1:].strip(_C_SPACE)
        if key == "descr":
            element_type = ElementType.from_npy_descr(value)
        elif key == "fortran_order":
            if value != "False":
                raise FunctionIOError(
                    "fortran order arrays not supported", status="UNIMPLEMENTED"
                )
            dense = True
        elif key == "shape":
            shape = _parse_npy_shape(value)
    return element_type, shape, dense


def _parse_npy_shape(value: str) -> list[int]:
    if not value:
        return []
    body = value[:-1] if value.endswith(",") else value
    rank = body.count(",") + 1
    if rank > _MAX_RANK:
        raise FunctionIOError(f"shape rank {rank} too large; be reasonable please")
    parts = value.split(",")
    dims = []
    for i in range(rank):
        part = parts[i].strip(_C_SPACE) if i < len(parts) else ""
        dim = c_strtoul(part, 64)
        if dim is None:
            raise FunctionIOError(f"invalid dimension {i} value {part}")
        dims.append(dim)
    return dims


def npy_bytes(tensor: Tensor) -> bytes:
    """One ndarray in IREE's .npy layout (v1.0, or v2.0 for a header over 65535 bytes)."""
    if tensor.shape:
        dims = ", ".join(str(d) for d in tensor.shape) + ("," if len(tensor.shape) == 1 else "")
    else:
        dims = ""
    descr = tensor.element_type.npy_descr
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({dims}), }}"
    encoded = header.encode("latin-1")
    v2 = len(encoded) > 65535
    unpadded = 8 + (4 if v2 else 2) + len(encoded) + 1
    padding = -unpadded % 64
    length = (len(encoded) + padding + 1).to_bytes(4 if v2 else 2, "little")
    version = b"\x02\x00" if v2 else b"\x01\x00"
    return _NPY_MAGIC + version + length + encoded + b" " * padding + b"\n" + tensor.tobytes()


# --------------------------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------------------------


def _c_float(value: float, upper: bool) -> str:
    """C's `%G` / `%g` (NaN keeps its sign, as glibc prints it)."""
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return text.upper() if upper else text
    return ("%G" if upper else "%g") % value


def _element_formatter(element_type: ElementType):
    """flat storage -> list of element strings (`iree_hal_format_element`)."""
    nt, bits = element_type.numerical_type, element_type.bit_count
    if bits in (8, 16, 32, 64) and nt in (
        NumericalType.INTEGER,
        NumericalType.INTEGER_SIGNED,
        NumericalType.INTEGER_UNSIGNED,
    ):
        return lambda flat: [str(v) for v in flat.tolist()]
    fmt = element_type.narrow_float
    if fmt is not None:
        return lambda flat: [
            _c_float(v, True) for v in _widen(decode_narrow_float(_bits(flat), fmt)).tolist()
        ]
    if element_type in (F32, F64):
        return lambda flat: [_c_float(v, True) for v in _widen(flat).tolist()]
    size = element_type.byte_size
    return lambda flat: [
        flat[i : i + 1].tobytes().hex().upper() if size else "" for i in range(len(flat))
    ]


def format_buffer_view(tensor: Tensor, max_element_count: int | None = None) -> str:
    """`2x3xf32=[1 2 3][4 5 6]`, eliding past `max_element_count` elements like IREE."""
    budget = _budget(max_element_count)
    shape = tensor.shape
    prefix = ("x".join(str(d) for d in shape) + "x") if shape else ""
    flat = tensor.storage.reshape(-1)
    formatter = _element_formatter(tensor.element_type)
    parts: list[str] = []
    remaining = [budget]

    def leaf(offset: int, length: int) -> None:
        count = min(remaining[0], length)
        remaining[0] -= count
        parts.append(" ".join(formatter(flat[offset : offset + count])))
        if count < length:
            parts.append("...")

    def nested(offset: int, dims: tuple[int, ...]) -> None:
        if len(dims) <= 1:
            leaf(offset, dims[0] if dims else 1)
            return
        stride = math.prod(dims[1:])
        for i in range(dims[0]):
            parts.append("[")
            nested(offset + i * stride, dims[1:])
            parts.append("]")

    nested(0, shape)
    return f"{prefix}{tensor.element_type.name}={''.join(parts)}"


def _budget(max_element_count: int | None) -> int:
    if max_element_count is None:
        return DEFAULT_MAX_ELEMENT_COUNT
    # IREE stores the flag in a size_t: a negative count means "no limit".
    return max_element_count if max_element_count >= 0 else sys.maxsize


def format_result(value: Value, max_element_count: int | None = None) -> str:
    """One value as iree-run-module prints it after `result[i]: ` (no trailing newline).

    `i32=42`, `f32=3.5` (`%g`), `(null)`, `hal.buffer_view\\n4xf32=1 2 3 4`, `hal.buffer\\n(no
    printer)`, and for a list `vm.list\\n` followed by `child_list[j]: ...\\n` lines.
    """
    value = _normalize(value)
    if value is None:
        return "(null)"
    if isinstance(value, np.generic):
        name = _SCALAR_NAMES[value.dtype]
        if value.dtype.kind == "f":
            return f"{name}={_c_float(float(value), False)}"
        return f"{name}={int(value)}"
    if isinstance(value, Tensor):
        return f"hal.buffer_view\n{format_buffer_view(value, max_element_count)}"
    if isinstance(value, (list, tuple)):
        return "vm.list\n" + "".join(
            f"child_list[{i}]: {format_result(v, max_element_count)}\n" for i, v in enumerate(value)
        )
    return f"{_type_name(value)}\n(no printer)"


def format_results(values: Sequence[Value], max_element_count: int | None = None) -> str:
    """What iree-run-module prints for a result list (after `EXEC @fn`), newlines included."""
    return "".join(
        f"result[{i}]: {format_result(v, max_element_count)}\n" for i, v in enumerate(values)
    )


# --------------------------------------------------------------------------------------------
# Outputs
# --------------------------------------------------------------------------------------------


def write_outputs(
    values: Sequence[Value],
    specs: Sequence[str],
    *,
    max_element_count: int | None = None,
    stdout: IO[str] | None = None,
) -> None:
    """Handles one `--output=` spec per result, in order (IREE's `iree_tooling_write_variants`)."""
    if len(values) != len(specs):
        raise FunctionIOError(
            f"{len(specs)} outputs specified but the provided variant list only has "
            f"{len(values)} elements",
            status="OUT_OF_RANGE",
        )
    for value, spec in zip(values, specs):
        write_output(value, spec, max_element_count=max_element_count, stdout=stdout)


def write_output(
    value: Value,
    spec: str,
    *,
    max_element_count: int | None = None,
    stdout: IO[str] | None = None,
) -> None:
    """One `--output=` spec: `` ignores, `-` prints, `@path` overwrites, `+path` appends.

    Paths ending in `.npy` get an ndarray in IREE's npy layout (scalars have shape (), buffers
    are i8 vectors, null is an empty i8 vector); other paths get the raw bytes.
    """
    value = _normalize(value)
    if not spec:
        return
    if spec == "-":
        (stdout or sys.stdout).write(format_result(value, max_element_count) + "\n")
        return
    if spec[0] == "@":
        mode = "wb"
    elif spec[0] == "+":
        mode = "ab"
    else:
        raise FunctionIOError(
            f"unsupported output mode specification '{spec}'", status="UNIMPLEMENTED"
        )
    path = spec[1:]
    try:
        f = open(path, mode)
    except OSError as e:
        raise FunctionIOError(
            f"unable to open file `{path}`: {e.strerror or e}", status=_os_error_status(e)
        ) from None
    with f:
        tensor = _as_buffer_view(value)
        f.write(npy_bytes(tensor) if path.endswith(".npy") else tensor.tobytes())


def _as_buffer_view(value: Value) -> Tensor:
    """IREE's `iree_tooling_create_buffer_view_from_variant`."""
    if value is None:
        return Tensor(I8, np.zeros(0, dtype=np.int8))
    if isinstance(value, Tensor):
        return value
    if isinstance(value, StorageBuffer):
        return Tensor(I8, np.frombuffer(value.data, dtype=np.int8).copy())
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Tensor(I8, np.frombuffer(bytes(value), dtype=np.int8).copy())
    if isinstance(value, np.generic):
        return Tensor.from_array(np.array(value), _SCALAR_NAMES[value.dtype])
    raise FunctionIOError(
        "unsupported output source type; expected: !hal.buffer, !hal.buffer_view, !vm.buffer"
    )


# --------------------------------------------------------------------------------------------
# --expected_output
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Equality:
    """IREE's comparison flags: `--equality_mode`, `--expected_*_threshold`, `--expected_rtol`."""

    mode: str = "approximate"
    f16_atol: float = 0.001
    f32_atol: float = 0.0001
    f64_atol: float = 0.0001
    bf16_atol: float = 0.01
    rtol: float = 1e-5

    def __post_init__(self):
        if self.mode not in ("approximate", "exact"):
            raise FunctionIOError(
                f"unknown equality mode '{self.mode}' (expected approximate or exact)"
            )

    def atol_for(self, element_type: ElementType) -> float | None:
        """The absolute tolerance of a float type (flags are C floats except f64's)."""
        f32 = lambda x: float(np.float32(x))  # noqa: E731
        return {
            F16: lambda: f32(self.f16_atol),
            F32: lambda: f32(self.f32_atol),
            F64: lambda: float(self.f64_atol),
            BF16: lambda: f32(self.bf16_atol),
        }.get(element_type, lambda: None)()


_SUCCESS = "[SUCCESS] all function outputs matched their expected values.\n"


def compare_expected(
    actual: Sequence[Value],
    expected_specs: Sequence[str],
    *,
    cconv: str | None = None,
    equality: Equality | None = None,
) -> tuple[bool, str]:
    """Checks results against `--expected_output` values; returns (ok, stdout text).

    The text is what iree-run-module prints: `[FAILED] ...` blocks for each mismatch, or the
    `[SUCCESS] ...` line. `cconv` is the function's result cconv; by default it is derived
    from the actual values. Badly formed expected values raise FunctionIOError.
    """
    actual = [_normalize(v) for v in actual]
    equality = equality or Equality()
    if cconv is None:
        cconv = "".join(_cconv_of(v) for v in actual)
    try:
        expected = parse_inputs(expected_specs, cconv)
    except AmdgpuCliError as e:
        raise type(e)(f"{e}; parsing expected function outputs", status=e.status) from None
    if len(expected) != len(actual):
        return False, (
            f"[FAILED] expected {len(expected)} list elements but {len(actual)} provided\n"
        )
    lines = []
    ok = True
    for i, (e, a) in enumerate(zip(expected, actual)):
        failure = _compare_variants(i, e, a, equality)
        if failure:
            ok = False
            lines.append(failure)
    if ok:
        lines.append(_SUCCESS)
    return ok, "".join(lines)


def _cconv_of(value: Value) -> str:
    if isinstance(value, np.generic):
        return {"i8": "i", "i16": "i", "i32": "i", "i64": "I", "f32": "f", "f64": "F"}[
            _SCALAR_NAMES[value.dtype]
        ]
    return "r"


def _compare_variants(index: int, expected: Value, actual: Value, equality: Equality) -> str:
    if expected is None:
        return ""  # an expected (null)/(ignored) ref is a wildcard
    if isinstance(expected, Tensor) and isinstance(actual, Tensor):
        return _compare_buffer_views(index, expected, actual, equality)
    # IREE 3.13.0 inverts its same-type test for primitive values, so scalars always land
    # here, even when they are equal.
    return (
        f"[FAILED] result[{index}]: variant types mismatch; expected {_type_name(expected)} "
        f"but got {_type_name(actual)}\n"
    )


def _shape_and_type(tensor: Tensor) -> str:
    dims = "".join(f"{d}x" for d in tensor.shape)
    return f"{dims}{tensor.element_type.name}"


def _compare_buffer_views(index: int, expected: Tensor, actual: Tensor, equality: Equality) -> str:
    why = _match_buffer_view(expected, actual, equality)
    if why is None:
        return ""
    return (
        f"[FAILED] result[{index}]: {why}; expected that the view is equal to contents of a "
        f"view of {_shape_and_type(expected)}\n  expected:\n"
        f"{format_buffer_view(expected, DEFAULT_MAX_ELEMENT_COUNT)}\n  actual:\n"
        f"{format_buffer_view(actual, DEFAULT_MAX_ELEMENT_COUNT)}\n"
    )


def _match_buffer_view(expected: Tensor, actual: Tensor, equality: Equality) -> str | None:
    """None when equal, else IREE's description of the first difference."""
    if expected.shape != actual.shape or expected.element_type != actual.element_type:
        return (
            f"metadata is {_shape_and_type(actual)}; expected that the view matches "
            f"{_shape_and_type(expected)}"
        )
    element_type = actual.element_type
    e_flat = expected.storage.reshape(-1)
    a_flat = actual.storage.reshape(-1)
    atol = equality.atol_for(element_type) if equality.mode == "approximate" else None
    if atol is not None:
        e_values, a_values = _as_float64(e_flat, element_type), _as_float64(a_flat, element_type)
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.abs(a_values - e_values) <= atol + equality.rtol * np.abs(e_values)
            good = (a_values == e_values) | (np.isnan(a_values) & np.isnan(e_values)) | (
                np.isfinite(e_values) & close
            )
    else:
        size = element_type.byte_size
        e_bytes = np.frombuffer(e_flat.tobytes(), dtype=np.uint8).reshape(-1, size)
        a_bytes = np.frombuffer(a_flat.tobytes(), dtype=np.uint8).reshape(-1, size)
        good = np.all(e_bytes == a_bytes, axis=1)
    bad = np.flatnonzero(~good)
    if not bad.size:
        return None
    i = int(bad[0])
    formatter = _element_formatter(element_type)
    return (
        f"element at index {i} ({formatter(a_flat[i : i + 1])[0]}) does not match the "
        f"expected ({formatter(e_flat[i : i + 1])[0]})"
    )


def _as_float64(flat: np.ndarray, element_type: ElementType) -> np.ndarray:
    fmt = element_type.narrow_float
    if fmt is not None:
        return _widen(decode_narrow_float(_bits(flat), fmt))
    return _widen(flat)


def _widen(values: np.ndarray) -> np.ndarray:
    """float -> float64, as C promotes for printf (signalling NaNs become quiet, silently)."""
    with np.errstate(invalid="ignore"):
        return values.astype(np.float64)

"""Function I/O of amdgpu-run: `--input` values in, results out, exactly as iree-run-module.

What this module owns
* Parsing (`parse_input`, `parse_inputs`): the whole `--input` grammar of IREE 3.13.0's
  `iree/tooling/function_io.c` and `hal/string_util.c`, driven by the function's cconv
  (`i`, `I`, `f`, `F`, `r`): `(null)`, `@`/`+`/`*file.npy`, `&tensor`, C-literal scalars, and
  `[shape x]type[=data]` with bracket/comma/space separated or splatted data or `=@file.bin`.
  Numbers are read the way C's strtol/strtof read them (see element_types), so `010` is 8,
  `1e3` as an i32 is 1 and `1e-50` as an f32 is an error.
* Printing (`format_result`, `format_results`): `result[i]: ` lines, `%G` element text, hex for
  i1 and opaque types, `--output_max_element_count` elision.
* Outputs (`output_targets`, `write_outputs`): `--output=` empty / `-` / `@file` / `+file`,
  .npy written byte for byte like IREE's numpy_io (other suffixes get the raw bytes); paths are
  checked before the run, and files written through `amdgpu_cli.outputs` once every result's
  bytes are ready.
The values themselves live in `values`, .npy reading and writing in `npy`, and the
`--expected_output` check in `expected`.

numpy: the integer types, f32, f64 and the hex-byte types are parsed into bytes and printed from
bytes with struct / array / memoryview (`ElementType.python_format`), so the usual run never
imports numpy; scalar values are `Scalar`s for the tools (`parse_inputs(numpy_scalars=False)`),
numpy scalars for library callers. f16, bf16 and the f8 types (IREE's codecs in `narrow_float`),
.npy files and scalars written to files import it where they are handled.

Errors a user can cause raise `FunctionIOError` (an AmdgpuCliError) whose `status` is the IREE
status code name and whose message carries IREE's wording where IREE has one, followed by the
same `parsing input `...`` annotation. Files named by inputs that cannot be opened raise
`InputFileError`.

Threading: none; every call is self-contained except an explicit `InputFiles`, which is not
thread-safe (neither is IREE's stream list).

Sources: IREE runtime/src/iree/tooling/{function_io.c,process_results.c},
hal/{string_util.c,buffer_view_util.c}.
"""

from __future__ import annotations

import sys
from array import array
from typing import IO, TYPE_CHECKING, Iterable, Sequence

from amdgpu_cli.errors import AmdgpuCliError, InputFileError
from amdgpu_cli.tooling.element_types import (
    F32,
    F64,
    I8,
    ElementType,
    NumericalType,
    c_strtod,
    c_strtol,
    c_strtoul,
    is_c_float_literal,
)
from amdgpu_cli.tooling.values import (
    _C_SPACE,
    _MAX_RANK,
    DEFAULT_MAX_ELEMENT_COUNT,
    FunctionIOError,
    Scalar,
    StorageBuffer,
    Tensor,
    Value,
    _c_float,
    _checked_size,
    _normalize,
    _numpy_scalar,
    _scalar_name,
    _type_name,
    format_buffer_view,
    vm_scalar,
)
from amdgpu_cli.tooling.values import numpy_scalars as _numpy_scalars

if TYPE_CHECKING:
    from amdgpu_cli.outputs import OutputFile

__all__ = [
    "DEFAULT_MAX_ELEMENT_COUNT",
    "InputFiles",
    "format_buffer_view",
    "format_result",
    "format_results",
    "parse_input",
    "parse_inputs",
    "output_targets",
    "write_output",
    "write_outputs",
]

_SEPARATORS = frozenset(_C_SPACE + ",[]")


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
        except ValueError as e:  # a NUL inside the path (library callers; argv cannot hold one)
            raise InputFileError(
                f"unable to open file `{path!r}`: {e}", status="INVALID_ARGUMENT"
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
    from amdgpu_cli.tooling.npy import _remaining

    # Checked first: f.read(size) allocates `size` bytes before it reads any (a shape of
    # terabytes would end in MemoryError instead of this error).
    data = f.read(size) if size <= _remaining(f) else b""
    if len(data) != size:
        raise FunctionIOError("end-of-file encountered during read", status="OUT_OF_RANGE")
    return data


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
    texts: Iterable[str], cconv: str | None = None, *, files: InputFiles | None = None,
    numpy_scalars: bool = True,
) -> list[Value]:
    """Parses `--input` values in order against the function's argument cconv.

    `cconv` is the argument fragment of the function's calling convention (`rri` of `0rri_r`),
    or one of the aliases `i32`/`i64`/`f32`/`f64`; None infers each value's kind as
    `parse_input` does. Like iree-run-module, this consumes one cconv character per value
    produced, fails when the inputs need more than the cconv has, and does not check that all
    of it was used (a short argument list is the caller's error to report). Scalar values are
    numpy scalars, or with `numpy_scalars=False` `Scalar`s (the tools: no numpy imported).
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
    return _numpy_scalars(values) if numpy_scalars else values


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


# cconv kind -> (IREE's name, the C reader of its text)
_PRIMITIVES = {
    "i": ("i32", lambda text: c_strtol(text, 32, max_chars=16)),
    "I": ("i64", lambda text: c_strtol(text, 64)),
    "f": ("f32", lambda text: c_strtod(text, single=True)),
    "F": ("f64", c_strtod),
}


def _primitive(kind: str) -> tuple:
    if kind not in _PRIMITIVES:
        raise FunctionIOError(f"unimplemented cconv type `{kind}`", status="UNIMPLEMENTED")
    return _PRIMITIVES[kind]


def _null_of_kind(kind: str) -> Value:
    if kind == "r":
        return None
    _primitive(kind)  # raises for a kind that is no VM primitive
    return vm_scalar(kind, 0)


def _parse_primitive(kind: str, text: str) -> Value:
    name, read = _primitive(kind)
    value = read(text)
    if value is None:
        raise FunctionIOError(f"parsing value `{text}` as {name}")
    return vm_scalar(kind, value)


def _parse_npy_file_into(text: str, cconv: _Cconv, out: list, files: InputFiles) -> None:
    append = text[0] != "@"
    splat = text[0] == "*"
    path = text[1:]
    if not path.endswith(".npy"):
        raise FunctionIOError(
            "only numpy (.npy) files are supported for metadata-less variant I/O",
            status="UNIMPLEMENTED",
        )
    from amdgpu_cli.tooling.npy import _at_end, read_npy

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


def _parse_tensor(text: str, files: InputFiles) -> Tensor:
    metadata, sep, contents = text.partition("=")
    if sep and contents[:1] in ("@", "+"):
        shape, element_type, _ = _split_shape_and_type(metadata)
        f = files.open(contents[1:], append=contents[0] != "@")
        count, size = _checked_size(shape, element_type)
        return Tensor.from_bytes(element_type, shape, _read_exact(f, count * size))
    shape, element_type, data = _split_shape_and_type(text)
    count, size = _checked_size(shape, element_type)
    if not data:
        return Tensor.from_bytes(element_type, shape, bytes(count * size))
    return Tensor.from_bytes(element_type, shape, _parse_elements(data, element_type, count))


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


def _parse_elements(data: str, element_type: ElementType, capacity: int) -> bytes:
    """IREE's `iree_hal_parse_buffer_elements`: tokens -> dense bytes (splat, under/overflow)."""
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
    return packed * capacity if len(parsed) < capacity else packed  # one value splats


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


def _hex_nibble(c: str) -> int:
    return int(c, 16) if c in "0123456789abcdefABCDEF" else 0


def _pack_elements(parsed: list, element_type: ElementType) -> bytes:
    """Parsed element values -> their dense bytes, as C stores them in the element type."""
    if not parsed or isinstance(parsed[0], bytes):
        return b"".join(parsed)
    if element_type.narrow_float is not None:
        return _encode_narrow_floats(parsed, element_type)
    code = element_type.python_format
    if code in ("f", "d"):
        return array(code, parsed).tobytes()  # the C cast (floats are already rounded)
    # The C cast to the element width: keep the low bits, whatever the sign.
    mask = (1 << element_type.bit_count) - 1
    return array(code.upper(), [v & mask for v in parsed]).tobytes()


def _encode_narrow_floats(values: list[float], element_type: ElementType) -> bytes:
    """f32 values -> f16 / bf16 / f8 bytes through IREE's codecs (numpy)."""
    import numpy as np

    from amdgpu_cli.tooling.narrow_float import encode_narrow_float

    bits = encode_narrow_float(np.array(values, dtype=np.float32), element_type.narrow_float)
    return bits.astype(f"<u{element_type.storage_size}").tobytes()


# --------------------------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------------------------


def format_result(value: Value, max_element_count: int | None = None) -> str:
    """One value as iree-run-module prints it after `result[i]: ` (no trailing newline).

    `i32=42`, `f32=3.5` (`%g`), `(null)`, `hal.buffer_view\\n4xf32=1 2 3 4`, `hal.buffer\\n(no
    printer)`, and for a list `vm.list\\n` followed by `child_list[j]: ...\\n` lines.
    """
    value = _normalize(value)
    if value is None:
        return "(null)"
    if isinstance(value, Tensor):
        return f"hal.buffer_view\n{format_buffer_view(value, max_element_count)}"
    if _numpy_scalar(value):
        value = Scalar(_scalar_name(value), float(value) if value.dtype.kind == "f" else int(value))
    if value.__class__ is Scalar:
        if value.type_name[0] == "f":
            return f"{value.type_name}={_c_float(value.value, False)}"
        return f"{value.type_name}={value.value}"
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


def output_targets(specs: Sequence[str]) -> dict[int, OutputFile]:
    """The file of each `@path` / `+path` spec, by position, checked now: a path that cannot be
    written (a directory, a missing folder) fails before any work is done."""
    from amdgpu_cli.outputs import OutputFile

    return {i: OutputFile(spec[1:], append=spec[0] == "+")
            for i, spec in enumerate(specs) if spec[:1] in ("@", "+")}


def write_outputs(
    values: Sequence[Value],
    specs: Sequence[str],
    *,
    max_element_count: int | None = None,
    stdout: IO[str] | None = None,
    targets: dict[int, OutputFile] | None = None,
) -> None:
    """Handles one `--output=` spec per result, in order (IREE's `iree_tooling_write_variants`):
    `` ignores, `-` prints, `@path` overwrites, `+path` appends.

    Every output's bytes are made before anything is written, and the files are made visible
    together (`amdgpu_cli.outputs.write_outputs`), so a failing output leaves every file as it was.
    Paths ending in `.npy` get an ndarray in IREE's npy layout (scalars have shape (), buffers are
    i8 vectors, null is an empty i8 vector); other paths get the raw bytes. `targets` are the
    files `output_targets(specs)` checked earlier (made here otherwise).
    """
    from amdgpu_cli import outputs

    if len(values) != len(specs):
        raise FunctionIOError(
            f"{len(specs)} outputs specified but the provided variant list only has "
            f"{len(values)} elements",
            status="OUT_OF_RANGE",
        )
    if targets is None:
        targets = output_targets(specs)
    printed: list[str] = []
    files: dict[str, list] = {}  # the real path -> [OutputFile, bytes]: repeated paths accumulate
    for i, (value, spec) in enumerate(zip(values, specs)):
        value = _normalize(value)
        if not spec:
            continue
        if spec == "-":
            printed.append(format_result(value, max_element_count) + "\n")
            continue
        if spec[0] not in ("@", "+"):
            raise FunctionIOError(
                f"unsupported output mode specification '{spec}'", status="UNIMPLEMENTED"
            )
        target = targets[i]
        data = _output_bytes(value, spec[1:])
        entry = files.get(target.key)
        if entry is None:
            files[target.key] = [target, data]
        elif target.append:
            entry[1] += data
        else:  # a later `@` of the same path: only its bytes count, over the file's old contents
            entry[0].append = False
            entry[1] = data
    if printed:
        (stdout or sys.stdout).write("".join(printed))
    if files:
        if printed:
            (stdout or sys.stdout).flush()
        outputs.write_outputs([(target, data) for target, data in files.values()])


def write_output(
    value: Value,
    spec: str,
    *,
    max_element_count: int | None = None,
    stdout: IO[str] | None = None,
) -> None:
    """One `--output=` spec (see `write_outputs`)."""
    write_outputs([value], [spec], max_element_count=max_element_count, stdout=stdout)


def _output_bytes(value: Value, path: str) -> bytes:
    tensor = _as_buffer_view(value)
    if path.endswith(".npy"):
        from amdgpu_cli.tooling.npy import npy_bytes

        return npy_bytes(tensor)
    return tensor.tobytes()


def _as_buffer_view(value: Value) -> Tensor:
    """IREE's `iree_tooling_create_buffer_view_from_variant`."""
    if isinstance(value, Tensor):
        return value
    if value is None:
        value = b""
    if isinstance(value, StorageBuffer):
        value = value.data
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return Tensor.from_bytes(I8, (len(data),), data)
    if value.__class__ is Scalar:
        value = value.numpy()
    if _numpy_scalar(value):
        import numpy as np

        return Tensor.from_array(np.array(value), _scalar_name(value))
    raise FunctionIOError(
        "unsupported output source type; expected: !hal.buffer, !hal.buffer_view, !vm.buffer"
    )

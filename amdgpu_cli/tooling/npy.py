"""The .npy files of function I/O, read and written as IREE 3.13.0's numpy_io.c does.

What this module owns
* Reading (`read_npy`): the next ndarray from an open stream, with IREE's acceptance rules:
  versions 1 to 3, the header dict scanned the way IREE scans it, integers read as signed
  (`<i4` is si32), Fortran order and big-endian data rejected. Arrays follow one another in
  one file; `_at_end` tells a `*file.npy` input when to stop.
* Writing (`npy_bytes`): one Tensor in IREE's layout, v1.0 (v2.0 for a header over 65535
  bytes), byte for byte.

Errors raise `FunctionIOError` with IREE's wording and status.

Threading: none; the caller owns the stream and its position.

Sources: IREE runtime/src/iree/tooling/numpy_io.c.
"""

from __future__ import annotations

import os
from typing import IO

from amdgpu_cli.tooling.element_types import ElementType, NumericalType, c_strtoul
from amdgpu_cli.tooling.values import (
    _C_SPACE,
    _MAX_RANK,
    FunctionIOError,
    Tensor,
    _checked_size,
)

__all__ = ["npy_bytes", "read_npy"]

def _at_end(f: IO[bytes]) -> bool:
    position = f.tell()
    return position == os.fstat(f.fileno()).st_size


def _remaining(f: IO[bytes]) -> int:
    """Bytes left in the file. Sizes read from a header are checked against it before reading:
    `f.read(n)` allocates n bytes up front, so a header claiming terabytes would otherwise end
    in MemoryError instead of IREE's end-of-file error."""
    return max(0, os.fstat(f.fileno()).st_size - f.tell())


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
    header = f.read(header_length) if header_length <= _remaining(f) else b""
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
    count, element_size = _checked_size(shape, element_type)
    size = count * element_size
    data = f.read(size) if size <= _remaining(f) else b""
    if len(data) != size:
        raise FunctionIOError(
            f"end-of-file encountered during read; failed to read npy contents of {size} bytes",
            status="OUT_OF_RANGE",
        )
    return Tensor.from_bytes(element_type, shape, data)


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

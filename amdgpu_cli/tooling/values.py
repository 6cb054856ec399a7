"""Function I/O values: the host images of what an IREE function takes and returns.

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
* The helpers the other function I/O modules share: `_normalize` (Python numbers and arrays to
  the kinds above), `_type_name` (IREE's name for a value's type), the storage bit views
  (`_bits`, `_from_bits`, `_widen`) and the shape limits every reader enforces (`_checked_size`).
* `FunctionIOError`, the error of every function I/O module: an AmdgpuCliError whose `status`
  is the IREE status code name and whose message carries IREE's wording where IREE has one.

Threading: none; everything here is a pure function or a frozen dataclass.

Sources: IREE runtime/src/iree/tooling/function_io.c, hal/buffer_view_util.c.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence, Union

import numpy as np

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.tooling.element_types import ElementType, encode_narrow_float

__all__ = ["FunctionIOError", "StorageBuffer", "Tensor", "Value"]

_MAX_RANK = 128  # IREE rejects shapes of higher rank
_MAX_ALLOCATION = 1 << 40  # refuse absurd shapes instead of asking numpy for petabytes
_C_SPACE = " \t\n\v\f\r"


class FunctionIOError(AmdgpuCliError):
    """A bad --input / --output / --expected_output value; `status` is IREE's code name."""


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
        from amdgpu_cli.tooling.io import format_buffer_view  # io imports this module

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


def _bits(storage: np.ndarray) -> np.ndarray:
    """Storage seen as unsigned integers of the same width (f16 storage is np.float16)."""
    return storage.view(f"<u{storage.dtype.itemsize}")


def _from_bits(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return bits.astype(f"<u{dtype.itemsize}").view(dtype)


def _widen(values: np.ndarray) -> np.ndarray:
    """float -> float64, as C promotes for printf (signalling NaNs become quiet, silently)."""
    with np.errstate(invalid="ignore"):
        return values.astype(np.float64)

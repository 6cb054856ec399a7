"""Function I/O values: the host images of what an IREE function takes and returns.

What this module owns
* Values. A function argument or result is one of
    - `None`: a null ref or an empty variant (prints `(null)`);
    - `Scalar` (the tools' own, no numpy) or a numpy scalar `np.int32`, `np.int64`,
      `np.float32`, `np.float64` (also `np.int8`, `np.int16`): a VM primitive value; a Python
      `int` counts as i64 and a `float` as f64;
    - `Tensor`: the host image of a `hal.buffer_view` (IREE element type + dense bytes);
    - `StorageBuffer`: the host image of a bare `hal.buffer` (what an `&...` input passes);
    - `bytes`/`bytearray`/`memoryview`: a `vm.buffer`;
    - a `list`/`tuple` of values: a `vm.list`.
  A plain `np.ndarray` is accepted wherever a Tensor is and converted with `Tensor.from_array`.
* The helpers the other function I/O modules share: `_normalize` (Python numbers and arrays to
  the kinds above), `_type_name` and `_scalar_name` (IREE's name for a value's type), the
  storage bit views (`_bits`, `_from_bits`, `_widen`) and the shape limits every reader enforces
  (`_checked_size`).
* `FunctionIOError`, the error of every function I/O module: an AmdgpuCliError whose `status`
  is the IREE status code name and whose message carries IREE's wording where IREE has one.

numpy: imported here only to make numpy values (`Scalar.numpy`, plain Python numbers). A Tensor
built from bytes (parsed inputs, results) stays bytes until its numpy `storage` is asked for, and
scalars stay `Scalar`s; numpy values (scalars, arrays) can only exist once numpy is imported, so
the checks for them look numpy up in `sys.modules` instead of importing it.

Threading: none; everything here is a pure function or an immutable value.

Sources: IREE runtime/src/iree/tooling/function_io.c, hal/buffer_view_util.c.
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Any, Sequence, Union

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.tooling.element_types import ElementType

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FunctionIOError", "StorageBuffer", "Tensor", "Value"]

_MAX_RANK = 128  # IREE rejects shapes of higher rank
_MAX_ALLOCATION = 1 << 40  # refuse absurd shapes instead of asking for petabytes
_C_SPACE = " \t\n\v\f\r"


class FunctionIOError(AmdgpuCliError):
    """A bad --input / --output / --expected_output value; `status` is IREE's code name."""


class _Immutable:
    """Refuses attribute assignment and deletion (a frozen dataclass's behaviour, without the
    dataclass: cheaper to define at start-up). Subclasses fill their slots in `__init__` with
    `object.__setattr__`."""

    __slots__ = ()

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"cannot assign to field '{name}': {type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field '{name}': {type(self).__name__} is immutable")


class Tensor(_Immutable):
    """Host image of a `hal.buffer_view`: an IREE element type and dense row-major elements.

    The elements are held as bytes (`from_bytes`: parsed inputs and read-back results, no numpy
    involved) or as a numpy array (`Tensor(element_type, storage)`, `from_array`); the other
    form is made when first asked for and kept. `storage` is C-contiguous, has the tensor's
    shape and the element type's storage dtype (raw bits for bf16/f8, uint8 for i1, `V<n>` for
    opaque types), so the IREE element type is never lost to numpy's coarser dtypes (si32 and
    i32 are both int32 there); made from bytes, it is a read-only view of them.
    Immutable: attributes cannot be set. Equality is identity.
    """

    __slots__ = ("element_type", "shape", "_data", "_storage")

    type_name = "hal.buffer_view"

    element_type: ElementType
    shape: tuple[int, ...]

    def __init__(self, element_type: ElementType, storage: np.ndarray):
        import numpy as np

        storage = np.asarray(storage)
        if not storage.flags.c_contiguous:
            storage = storage.copy(order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        if storage.dtype != element_type.storage_dtype:
            raise TypeError(
                f"storage dtype {storage.dtype} does not hold {element_type.name} elements"
            )
        _set(self, element_type, tuple(storage.shape), None, storage)

    @classmethod
    def from_bytes(cls, element_type: ElementType, shape: Sequence[int], data) -> Tensor:
        """The tensor whose dense little-endian elements are `data` (copied unless bytes)."""
        shape = tuple(shape)
        data = bytes(data)
        if len(data) != math.prod(shape) * element_type.storage_size:
            raise ValueError(
                f"{len(data)} bytes do not hold a {'x'.join(map(str, shape)) or 'scalar'} "
                f"tensor of {element_type.name}"
            )
        tensor = cls.__new__(cls)
        _set(tensor, element_type, shape, data, None)
        return tensor

    @property
    def nbytes(self) -> int:
        data = self._data
        return len(data) if data is not None else self._storage.nbytes

    def tobytes(self) -> bytes:
        data = self._data
        return data if data is not None else self._storage.tobytes()

    @property
    def data(self):
        """The elements' bytes as a bytes-like object, without a copy (a byte view of the
        numpy storage for a tensor made from an array)."""
        data = self._data
        return data if data is not None else memoryview(self._storage.reshape(-1).view("u1"))

    @property
    def storage(self) -> np.ndarray:
        """The elements as a numpy array (for a tensor made from bytes: a read-only view of
        them, made on first use)."""
        storage = self._storage
        if storage is None:
            import numpy as np

            dtype = self.element_type.storage_dtype
            storage = np.frombuffer(self._data, dtype=dtype).reshape(self.shape)
            object.__setattr__(self, "_storage", storage)
        return storage

    @property
    def array(self) -> np.ndarray:
        """The values in the user-facing dtype (bool for i1; ml_dtypes for bf16 and f8)."""
        dtype = self.element_type.numpy_dtype
        if self.element_type.is_boolean:
            return self.storage != 0
        return self.storage.view(dtype)

    @classmethod
    def from_array(cls, array, element_type: ElementType | str | None = None) -> Tensor:
        """Wraps a numpy array; integers default to signless `iN`, bool to i1.

        With an explicit element type the values are converted to it (through IREE's own
        f32 rounding for f16, bf16 and the f8 types).
        """
        import numpy as np

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
                from amdgpu_cli.tooling.narrow_float import encode_narrow_float

                bits = encode_narrow_float(array.astype(np.float32), element_type.narrow_float)
                storage = _from_bits(bits, storage_dtype)
        else:
            storage = array.astype(storage_dtype)
        return cls(element_type, storage)

    def retyped(self, element_type: ElementType | str) -> Tensor:
        """The same bytes seen as another element type of the same width."""
        if isinstance(element_type, str):
            element_type = ElementType.parse(element_type)
        if self._data is not None and element_type.storage_size == self.element_type.storage_size:
            return Tensor.from_bytes(element_type, self.shape, self._data)
        return Tensor(element_type, self.storage.view(element_type.storage_dtype))

    def __repr__(self) -> str:
        return f"Tensor({format_buffer_view(self, 8)})"

    def __reduce__(self):  # copy and pickle (the default would assign the slots)
        return Tensor.from_bytes, (self.element_type, self.shape, self.tobytes())


def _set(tensor: Tensor, element_type: ElementType, shape: tuple[int, ...], data, storage) -> None:
    """Fills a new Tensor's slots (past its __setattr__, which refuses every assignment)."""
    setattr_ = object.__setattr__
    setattr_(tensor, "element_type", element_type)
    setattr_(tensor, "shape", shape)
    setattr_(tensor, "_data", data)
    setattr_(tensor, "_storage", storage)


class StorageBuffer(_Immutable):
    """Host image of a bare `hal.buffer` (no shape or element type); equal when the bytes are."""

    __slots__ = ("data",)

    type_name = "hal.buffer"

    def __init__(self, data: bytes):
        object.__setattr__(self, "data", data)

    def __eq__(self, other) -> bool:
        if other.__class__ is not StorageBuffer:
            return NotImplemented
        return self.data == other.data

    def __hash__(self) -> int:
        return hash(self.data)

    def __repr__(self) -> str:
        return f"StorageBuffer(data={self.data!r})"

    def __reduce__(self):  # copy and pickle (the default would assign the slot)
        return StorageBuffer, (self.data,)


class Scalar(_Immutable):
    """A VM primitive (i32, i64, f32, f64) as the tools carry it without numpy: IREE's
    `type_name` and the Python `value` (a signed int of that width, or a float the type holds
    exactly). The tools parse scalar inputs into these and read scalar results into them;
    `numpy()` is the numpy scalar the Python API (and `parse_input`) hands out instead."""

    __slots__ = ("type_name", "value")

    def __init__(self, type_name: str, value: int | float):
        object.__setattr__(self, "type_name", type_name)
        object.__setattr__(self, "value", value)

    def __int__(self) -> int:
        return int(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __eq__(self, other) -> bool:
        if other.__class__ is not Scalar:
            return NotImplemented
        return (self.type_name, self.value) == (other.type_name, other.value)

    def __hash__(self) -> int:
        return hash((self.type_name, self.value))

    def __repr__(self) -> str:
        return f"Scalar({self.type_name}={self.value!r})"

    def __reduce__(self):
        return Scalar, (self.type_name, self.value)

    def numpy(self):
        import numpy as np

        return getattr(np, _NUMPY_SCALAR_TYPES[self.type_name])(self.value)


Value = Union[None, Scalar, "np.generic", int, float, Tensor, StorageBuffer, bytes, list]

# IREE's names of the numpy scalar types that are VM values, by (dtype kind, itemsize).
_SCALAR_NAMES = {("i", 1): "i8", ("i", 2): "i16", ("i", 4): "i32", ("i", 8): "i64",
                 ("f", 4): "f32", ("f", 8): "f64"}  # fmt: skip
_NUMPY_SCALAR_TYPES = {"i32": "int32", "i64": "int64", "f32": "float32", "f64": "float64"}

# cconv char of a VM primitive -> IREE's name of its type.
VM_SCALAR_NAMES = {"i": "i32", "I": "i64", "f": "f32", "F": "f64"}


def vm_scalar(ch: str, value: int | float) -> Scalar:
    """A VM primitive of cconv char `ch` (i, I, f, F) as a host value (no numpy)."""
    return Scalar(VM_SCALAR_NAMES[ch], value)


def numpy_vm_scalar(ch: str, value: int | float):
    """The same value as the numpy scalar the Python API hands out (numpy is imported)."""
    import numpy as np

    return getattr(np, _NUMPY_SCALAR_TYPES[VM_SCALAR_NAMES[ch]])(value)


def numpy_scalars(values: list) -> list:
    """`values` with each Scalar replaced by its numpy scalar (what the Python API returns)."""
    return [v.numpy() if v.__class__ is Scalar else v for v in values]


def _numpy_scalar(value: Any) -> bool:
    """True for a numpy scalar; numpy need not be imported (then there can be none)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.generic)


def _scalar_name(value: Any) -> str | None:
    """IREE's name for a numpy scalar's type (`i32`, `f64`...); None when it is no VM value."""
    return _SCALAR_NAMES.get((value.dtype.kind, value.dtype.itemsize))


def _normalize(value: Any) -> Any:
    """Python ints/floats and numpy arrays to the canonical value kinds."""
    if value is None or value.__class__ is Tensor or value.__class__ is Scalar:
        return value
    np = sys.modules.get("numpy")
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        raise TypeError("booleans are not VM values; use np.int32 or an i1 Tensor")
    if isinstance(value, (int, float)):
        import numpy as np

        return np.int64(value) if isinstance(value, int) else np.float64(value)
    if np is None:
        return value
    if isinstance(value, np.ndarray):
        return Tensor.from_array(value)
    if isinstance(value, np.generic) and _scalar_name(value) is None:
        raise TypeError(f"numpy scalar of dtype {value.dtype} is not a VM value")
    return value


def _type_name(value: Any) -> str:
    """IREE's name for a variant's type (`iree_vm_append_variant_type_string`)."""
    if value is None:
        return "empty"
    if value.__class__ is Scalar:
        return value.type_name
    if _numpy_scalar(value):
        return _scalar_name(value)
    if isinstance(value, (Tensor, StorageBuffer)):
        return value.type_name
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "vm.buffer"
    if isinstance(value, (list, tuple)):
        return "vm.list"
    raise TypeError(f"{type(value).__name__} is not a function I/O value")


def _checked_size(shape: Sequence[int], element_type: ElementType) -> tuple[int, int]:
    """(element count, bytes per element) of a shape IREE would allocate."""
    if element_type.bit_count == 0:
        raise FunctionIOError("opaque element types cannot be indexed")
    size = element_type.storage_size
    count = math.prod(shape)
    if count * size > _MAX_ALLOCATION:
        raise FunctionIOError(
            f"cannot allocate a {'x'.join(map(str, shape))}x{element_type} buffer "
            f"({count * size} bytes)",
            status="RESOURCE_EXHAUSTED",
        )
    return count, size


def _bits(storage: np.ndarray) -> np.ndarray:
    """Storage seen as unsigned integers of the same width (f16 storage is np.float16)."""
    return storage.view(f"<u{storage.dtype.itemsize}")


def _from_bits(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return bits.astype(f"<u{dtype.itemsize}").view(dtype)


def _widen(values: np.ndarray) -> np.ndarray:
    """float -> float64, as C promotes for printf (signalling NaNs become quiet, silently)."""
    import numpy as np

    with np.errstate(invalid="ignore"):
        return values.astype(np.float64)


# --------------------------------------------------------------------------------------------
# Printing a tensor as IREE prints a buffer view
# --------------------------------------------------------------------------------------------

DEFAULT_MAX_ELEMENT_COUNT = 1024  # iree-run-module's --output_max_element_count


def _c_float(value: float, upper: bool) -> str:
    """C's `%G` / `%g` (NaN keeps its sign, as glibc prints it)."""
    if math.isnan(value):
        text = "-nan" if math.copysign(1.0, value) < 0 else "nan"
        return text.upper() if upper else text
    return ("%G" if upper else "%g") % value


def _flat_elements(tensor: Tensor):
    """A tensor's elements as `_element_formatter`'s functions take them: a memoryview of the
    types Python reads (the numpy storage for the narrow floats, whose codecs need it)."""
    element_type = tensor.element_type
    if element_type.narrow_float is not None:
        return tensor.storage.reshape(-1)
    view = memoryview(tensor.data)
    code = element_type.python_format
    return view.cast(code) if code else view


def _element_formatter(element_type: ElementType):
    """(flat elements, start, stop) -> element strings (`iree_hal_format_element`), where the
    flat elements are what `_flat_elements` gives."""
    fmt = element_type.narrow_float
    if fmt is not None:

        def narrow_floats(flat, start: int, stop: int) -> list[str]:
            from amdgpu_cli.tooling.narrow_float import decode_narrow_float

            values = _widen(decode_narrow_float(_bits(flat[start:stop]), fmt))
            return [_c_float(v, True) for v in values.tolist()]

        return narrow_floats
    code = element_type.python_format
    if code in ("f", "d"):  # f32 -> double (tolist) is exact and keeps a NaN's sign
        return lambda flat, start, stop: [_c_float(v, True) for v in flat[start:stop].tolist()]
    if code is not None:
        return lambda flat, start, stop: [str(v) for v in flat[start:stop].tolist()]
    size = element_type.byte_size
    return lambda flat, start, stop: [
        flat[i * size : (i + 1) * size].hex().upper() for i in range(start, stop)
    ]


def format_buffer_view(tensor: Tensor, max_element_count: int | None = None) -> str:
    """`2x3xf32=[1 2 3][4 5 6]`, eliding past `max_element_count` elements like IREE."""
    budget = _budget(max_element_count)
    shape = tensor.shape
    prefix = ("x".join(str(d) for d in shape) + "x") if shape else ""
    flat = _flat_elements(tensor)
    formatter = _element_formatter(tensor.element_type)
    parts: list[str] = []
    remaining = [budget]

    def leaf(offset: int, length: int) -> None:
        count = min(remaining[0], length)
        remaining[0] -= count
        parts.append(" ".join(formatter(flat, offset, offset + count)))
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

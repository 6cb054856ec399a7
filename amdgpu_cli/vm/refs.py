"""VM reference types: `!vm.buffer` (VmBuffer), `!vm.list<T>` (VmList) and the ref-type rules.

A ref register holds `None` (null) or a Python object. Reference counting is Python's own; the
interpreter only honours *move* semantics (a moved-from register becomes null), which is what
compiled code can observe. A native object (a HAL buffer view, a fence, ...) takes part in type
checks by carrying a `vm_type` class attribute naming its registered type without the `!`
(`"hal.buffer_view"`); objects without one are accepted wherever a ref is expected.

Errors are `VmTrap`s with IREE's status names: out-of-range indices and lengths are OUT_OF_RANGE,
writes to read-only (rodata) buffers PERMISSION_DENIED, null or mistyped refs INVALID_ARGUMENT.
List get/set convert between the op's value type and the list's element type the way IREE's
`iree_vm_list_convert_value_type` does: integer to integer by C cast, f32 <-> f64 by C cast, any
other pair yields 0. Source: runtime/src/iree/vm/{list.c,buffer.c,ref.c} (3.13.0).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable

from amdgpu_cli.errors import AmdgpuCliError

__all__ = ["VmBuffer", "VmList", "VmTrap", "ref_type_name", "type_matcher", "type_matches"]

class VmTrap(AmdgpuCliError):
    """A runtime trap while executing VM code (vm.fail, bounds, bad refs, unresolved imports).

    `status` is the IREE status name; the interpreter prefixes the message with the function and
    bytecode offset where it happened (`module.main+0000001F: ...`).
    """

    status = "INTERNAL"

    def __init__(self, message: str, *, status: str | None = None, function: str = "",
                 offset: int | None = None):
        self.raw_message = message
        self.function = function
        self.offset = offset
        where = function if offset is None else f"{function}+{offset:08X}"
        super().__init__(f"{where}: {message}" if where else message, status=status)

    def located(self, function: str, offset: int) -> VmTrap:
        """The same trap, located at `function+offset` unless it already names a place."""
        if self.function:
            return self
        return VmTrap(self.raw_message, status=self.status, function=function, offset=offset)

    @classmethod
    def null(cls, what: str) -> VmTrap:
        """The trap for a null ref where `what` must be one (INVALID_ARGUMENT)."""
        return cls(f"{what} is null", status="INVALID_ARGUMENT")


# -- ref types ------------------------------------------------------------------------------------

def _base_type(name: str) -> str:
    """`!vm.list<i32>` -> `vm.list` (every list shares one registered type, as in IREE)."""
    name = name.lstrip("!")
    return name.partition("<")[0]


def ref_type_name(value) -> str | None:
    """The registered type name of a ref value (`vm.buffer`, `vm.list`, `hal.fence`), or None."""
    if value is None:
        return None
    return getattr(value, "vm_type", None)


def type_matches(value, type_name: str) -> bool:
    """Whether ref `value` may be stored as module type `type_name` (null always may)."""
    return type_matcher(type_name)(value)


def _any_ref(value) -> bool:
    return True


@functools.lru_cache(maxsize=None)
def type_matcher(type_name: str) -> Callable[[object], bool]:
    """`type_matches(·, type_name)` with the name parsed once: what ops checking one static type
    on every execution (global loads and stores) keep."""
    base = _base_type(type_name)
    if base in ("vm.ref", "?", ""):
        return _any_ref

    def matches(value) -> bool:
        if value is None:
            return True
        actual = getattr(value, "vm_type", None)
        return actual is None or actual == base
    return matches


# -- buffers --------------------------------------------------------------------------------------

class VmBuffer:
    """A byte buffer (`!vm.buffer`); rodata buffers alias the module file and are read-only."""

    vm_type = "vm.buffer"
    __slots__ = ("data", "readonly", "alignment", "__weakref__")

    def __init__(self, data, *, readonly: bool = False, alignment: int = 16):
        if isinstance(data, int):
            data = bytearray(data)
        self.data = memoryview(data).cast("B") if not isinstance(data, bytearray) else memoryview(data)
        self.readonly = readonly or self.data.readonly
        self.alignment = alignment

    def __len__(self) -> int:
        return len(self.data)

    def __bytes__(self) -> bytes:
        return bytes(self.data)

    def __repr__(self) -> str:
        return f"VmBuffer({len(self.data)} bytes{', readonly' if self.readonly else ''})"

    def check_range(self, offset: int, length: int) -> None:
        if offset < 0 or length < 0 or offset + length > len(self.data):
            raise VmTrap(f"out-of-range buffer access: [{offset}, {offset + length}) of a "
                         f"{len(self.data)}-byte buffer", status="OUT_OF_RANGE")

    def check_writable(self) -> None:
        if self.readonly:
            raise VmTrap("buffer is read-only and cannot be mapped for writing",
                         status="PERMISSION_DENIED")

    def load(self, fmt: struct.Struct, element_offset: int):
        size = fmt.size
        offset = element_offset * size
        self.check_range(offset, size)
        return fmt.unpack_from(self.data, offset)[0]

    def store(self, fmt: struct.Struct, element_offset: int, value) -> None:
        self.check_writable()
        size = fmt.size
        offset = element_offset * size
        self.check_range(offset, size)
        fmt.pack_into(self.data, offset, value)

    def fill(self, fmt: struct.Struct, element_offset: int, element_count: int, value) -> None:
        self.check_writable()
        size = fmt.size
        self.check_range(element_offset * size, element_count * size)
        start = element_offset * size
        self.data[start:start + element_count * size] = fmt.pack(value) * element_count


# -- lists ----------------------------------------------------------------------------------------

_INT_BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}
_VALUE_TYPES = ("i8", "i16", "i32", "i64", "f32", "f64")


def _wrap_signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _f32(value: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def convert_value(value, source: str, target: str):
    """IREE's list value conversion (int<->int C cast, f32<->f64 cast, anything else 0)."""
    if source == target:
        return value
    if source in _INT_BITS and target in _INT_BITS:
        return _wrap_signed(value, _INT_BITS[target])
    if source == "f32" and target == "f64":
        return float(value)
    if source == "f64" and target == "f32":
        return _f32(value)
    return 0.0 if target in ("f32", "f64") else 0


def list_element_type(type_name: str) -> str:
    """`!vm.list<i32>` / `i32` -> "i32"; `!vm.opaque` (list.alloc of `!vm.list<?>`) -> "variant";
    anything else is a ref type -> "ref"."""
    inner = type_name
    if inner.startswith("!vm.list<") and inner.endswith(">"):
        inner = inner[len("!vm.list<"):-1]
    if inner in _VALUE_TYPES:
        return inner
    if inner in ("?", "any", "variant", "!vm.opaque", "opaque"):
        return "variant"
    return "ref"


class VmList:
    """A growable typed list (`!vm.list<T>`): value elements, refs, or variants.

    Value elements are stored as Python ints (signed, wrapped to the element width) and floats
    (f32 values already rounded). Variant elements are `(value_type, value)` pairs, refs are
    `("ref", obj)`, empty slots `None`.
    """

    vm_type = "vm.list"
    __slots__ = ("element_type", "ref_type", "items", "capacity", "__weakref__")

    def __init__(self, element_type: str = "variant", capacity: int = 0, *, ref_type: str = ""):
        if element_type not in (*_VALUE_TYPES, "ref", "variant"):
            raise ValueError(f"unknown list element type {element_type!r}")
        if capacity < 0:
            raise VmTrap(f"negative list capacity {capacity}", status="INVALID_ARGUMENT")
        self.element_type = element_type
        self.ref_type = ref_type  # for typed ref lists: the module type name, e.g. "!vm.buffer"
        self.items: list = []
        self.capacity = capacity

    @classmethod
    def of_type(cls, type_name: str, capacity: int = 0) -> VmList:
        element = list_element_type(type_name)
        return cls(element, capacity, ref_type=type_name if element == "ref" else "")

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"VmList<{self.element_type}>({self.items!r})"

    def _empty(self):
        if self.element_type in _INT_BITS:
            return 0
        if self.element_type in ("f32", "f64"):
            return 0.0
        return None

    def reserve(self, minimum_capacity: int) -> None:
        if minimum_capacity > self.capacity:
            self.capacity = minimum_capacity

    def resize(self, new_size: int) -> None:
        if new_size < 0:
            raise VmTrap(f"negative list size {new_size}", status="OUT_OF_RANGE")
        n = len(self.items)
        if new_size < n:
            del self.items[new_size:]
        else:
            empty = self._empty()
            self.items.extend([empty] * (new_size - n))
        if new_size > self.capacity:
            self.capacity = new_size

    def _check_index(self, index: int) -> None:
        if not 0 <= index < len(self.items):
            raise VmTrap(f"list index {index} out of bounds (size {len(self.items)})",
                         status="OUT_OF_RANGE")

    def get_value(self, index: int, value_type: str):
        """Element `index` converted to `value_type` ("i32", "i64", "f32", "f64")."""
        self._check_index(index)
        item = self.items[index]
        et = self.element_type
        if et == "variant":
            if item is None or item[0] == "ref":
                return 0.0 if value_type in ("f32", "f64") else 0
            return convert_value(item[1], item[0], value_type)
        if et == "ref":
            raise VmTrap("list does not hold values", status="FAILED_PRECONDITION")
        return convert_value(item, et, value_type)

    def set_value(self, index: int, value, value_type: str) -> None:
        self._check_index(index)
        et = self.element_type
        if et == "variant":
            self.items[index] = (value_type, value)
        elif et == "ref":
            raise VmTrap("list does not hold values", status="FAILED_PRECONDITION")
        else:
            self.items[index] = convert_value(value, value_type, et)

    def get_ref(self, index: int, type_name: str | None = None):
        """Element `index` as a ref; null when it holds no ref or one of another type."""
        self._check_index(index)
        item = self.items[index]
        if self.element_type == "variant":
            if item is None or item[0] != "ref":
                return None
            item = item[1]
        elif self.element_type != "ref":
            raise VmTrap("list does not hold refs", status="FAILED_PRECONDITION")
        if item is not None and type_name is not None and not type_matches(item, type_name):
            return None
        return item

    def set_ref(self, index: int, value) -> None:
        self._check_index(index)
        if self.element_type == "variant":
            self.items[index] = None if value is None else ("ref", value)
        elif self.element_type == "ref":
            if self.ref_type and not type_matches(value, self.ref_type):
                raise VmTrap(f"ref of type {ref_type_name(value)} cannot be stored in a list of "
                             f"{self.ref_type}", status="INVALID_ARGUMENT")
            self.items[index] = value
        else:
            raise VmTrap("list does not hold refs", status="FAILED_PRECONDITION")

    def python_values(self) -> list:
        """The elements as plain Python values (variants unwrapped)."""
        if self.element_type == "variant":
            return [None if item is None else item[1] for item in self.items]
        return list(self.items)

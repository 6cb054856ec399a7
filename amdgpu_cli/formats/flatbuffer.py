"""A small FlatBuffer reader: tables, vtables, scalars, strings, vectors and unions.

Owns the generic wire rules of FlatBuffers (all little-endian) and nothing schema-specific; format
modules (`vmfb`, the executable containers) name their fields by slot number on top of it.

    buffer      u32 root offset at 0, optional 4-byte file identifier at 4
    table       i32 at the table start: table_start - value = its vtable
    vtable      u16 vtable_size, u16 table_size, then one u16 per field slot: the field's offset
                inside the table, 0 (or past vtable_size) when the field is absent
    reference   a u32 stored in a field or vector element, relative to where it is stored; it
                points at a table, a string (u32 length + bytes + NUL) or a vector (u32 count +
                elements: scalars and structs inline, tables/strings as references)
    union       two slots: a u8 type tag (0 = NONE), then a reference to the member table

Every read is bounds-checked before it happens. A buffer that breaks a rule raises the `error`
class given to `FlatBuffer` (a subclass of AmdgpuCliError, `FlatBufferError` by default) with a
one-line message; no IndexError, struct.error or ValueError escapes. Reads return Python values
or zero-copy memoryviews of the caller's buffer, which must outlive them.
"""

from __future__ import annotations

import struct

from amdgpu_cli.errors import AmdgpuCliError

__all__ = ["FlatBuffer", "FlatBufferError", "Table"]


class FlatBufferError(AmdgpuCliError):
    """A FlatBuffer whose offsets or sizes do not fit the buffer."""

    status = "INVALID_ARGUMENT"


_U8 = struct.Struct("<B")
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")

# Scalar format letters accepted by Table.scalar / Table.scalars (struct module letters).
_SCALAR_SIZES = {"b": 1, "B": 1, "?": 1, "h": 2, "H": 2, "i": 4, "I": 4, "q": 8, "Q": 8, "f": 4, "d": 8}


class FlatBuffer:
    """A view over one FlatBuffer. `data` is anything that exports a byte buffer."""

    __slots__ = ("data", "size", "error", "_structs")

    def __init__(self, data, *, error: type[AmdgpuCliError] = FlatBufferError):
        self.data = memoryview(data).cast("B")
        self.size = len(self.data)
        self.error = error
        self._structs: dict[str, struct.Struct] = {}

    # -- raw reads -------------------------------------------------------------------------

    def fail(self, message: str) -> AmdgpuCliError:
        return self.error(f"FlatBuffer: {message}")

    def check_range(self, pos: int, length: int, what: str) -> None:
        if pos < 0 or length < 0 or pos + length > self.size:
            raise self.fail(f"{what} at offset {pos} (+{length} bytes) is outside the {self.size}-byte buffer")

    def read(self, fmt: str, pos: int, what: str = "value"):
        s = self._structs.get(fmt)
        if s is None:
            s = self._structs[fmt] = struct.Struct("<" + fmt)
        self.check_range(pos, s.size, what)
        return s.unpack_from(self.data, pos)[0]

    def u32(self, pos: int, what: str = "offset") -> int:
        self.check_range(pos, 4, what)
        return _U32.unpack_from(self.data, pos)[0]

    def deref(self, pos: int, what: str) -> int:
        """Follow the u32 reference stored at `pos`; returns the absolute target position."""
        target = pos + self.u32(pos, what)
        if target >= self.size:
            raise self.fail(f"{what} at offset {pos} points past the end of the buffer ({target})")
        return target

    # -- entry points ----------------------------------------------------------------------

    def identifier(self) -> bytes:
        self.check_range(4, 4, "file identifier")
        return bytes(self.data[4:8])

    def root(self, identifier: bytes | None = None) -> Table:
        """The root table; with `identifier`, the 4 bytes after the root offset must equal it."""
        if self.size < 8:
            raise self.fail(f"buffer of {self.size} bytes is too small to hold a root table")
        if identifier is not None and self.identifier() != identifier:
            got = self.identifier()
            raise self.fail(f"file identifier is {got!r}, expected {identifier!r}")
        return self.table_at(self.deref(0, "root table offset"), "root table")

    def table_at(self, pos: int, what: str = "table") -> Table:
        self.check_range(pos, 4, what)
        vtable = pos - _I32.unpack_from(self.data, pos)[0]
        self.check_range(vtable, 4, f"{what} vtable")
        vt_size, table_size = struct.unpack_from("<HH", self.data, vtable)
        if vt_size < 4 or vt_size % 2:
            raise self.fail(f"{what} at offset {pos} has a bad vtable size {vt_size}")
        self.check_range(vtable, vt_size, f"{what} vtable")
        if table_size < 4:
            raise self.fail(f"{what} at offset {pos} has a bad inline size {table_size}")
        self.check_range(pos, table_size, what)
        return Table(self, pos, vtable, vt_size, table_size, what)

    def vector_at(self, pos: int, elem_size: int, what: str) -> tuple[int, int]:
        """(start of elements, count) of the vector at `pos`, with all its bytes in range."""
        count = self.u32(pos, f"{what} length")
        start = pos + 4
        if count * elem_size > self.size - start:
            raise self.fail(f"{what} at offset {pos} holds {count} elements, more than the buffer")
        return start, count

    def string_at(self, pos: int, what: str) -> str:
        start, length = self.vector_at(pos, 1, what)
        raw = bytes(self.data[start:start + length])
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(f"{what} at offset {pos} is not valid UTF-8") from None


class Table:
    """One table: read its fields by slot number (the field's index in the schema)."""

    __slots__ = ("fb", "pos", "vtable", "vt_size", "table_size", "what")

    def __init__(self, fb: FlatBuffer, pos: int, vtable: int, vt_size: int, table_size: int, what: str):
        self.fb = fb
        self.pos = pos
        self.vtable = vtable
        self.vt_size = vt_size
        self.table_size = table_size
        self.what = what

    def _field(self, slot: int, size: int, name: str) -> int | None:
        """Absolute position of a present field whose inline part is `size` bytes, or None."""
        entry = 4 + 2 * slot
        if entry + 2 > self.vt_size:
            return None
        offset = _U16.unpack_from(self.fb.data, self.vtable + entry)[0]
        if offset == 0:
            return None
        if offset + size > self.table_size:
            raise self.fb.fail(
                f"{self.what}.{name} lies outside its table (offset {offset}, table size {self.table_size})")
        return self.pos + offset

    def field_position(self, slot: int) -> int | None:
        """Buffer position of a present field's inline value (a scalar or a reference), else None."""
        return self._field(slot, 0, f"slot {slot}")

    def has(self, slot: int) -> bool:
        entry = 4 + 2 * slot
        return entry + 2 <= self.vt_size and _U16.unpack_from(self.fb.data, self.vtable + entry)[0] != 0

    # -- scalars ---------------------------------------------------------------------------

    def scalar(self, slot: int, fmt: str, default=0, name: str = "field"):
        pos = self._field(slot, _SCALAR_SIZES[fmt], name)
        if pos is None:
            return default
        return self.fb.read(fmt, pos, f"{self.what}.{name}")

    # -- references ------------------------------------------------------------------------

    def _ref(self, slot: int, name: str) -> int | None:
        pos = self._field(slot, 4, name)
        if pos is None:
            return None
        return self.fb.deref(pos, f"{self.what}.{name}")

    def string(self, slot: int, default: str | None = None, name: str = "string") -> str | None:
        target = self._ref(slot, name)
        if target is None:
            return default
        return self.fb.string_at(target, f"{self.what}.{name}")

    def table(self, slot: int, name: str = "table") -> Table | None:
        target = self._ref(slot, name)
        if target is None:
            return None
        return self.fb.table_at(target, f"{self.what}.{name}")

    def bytes(self, slot: int, name: str = "bytes") -> memoryview | None:
        """A [ubyte] vector as a zero-copy memoryview, or None when absent."""
        span = self.byte_span(slot, name)
        if span is None:
            return None
        return self.fb.data[span[0]:span[0] + span[1]]

    def byte_span(self, slot: int, name: str = "bytes") -> tuple[int, int] | None:
        """(position in the buffer, length) of a [ubyte] vector, or None when absent."""
        target = self._ref(slot, name)
        if target is None:
            return None
        return self.fb.vector_at(target, 1, f"{self.what}.{name}")

    def scalars(self, slot: int, fmt: str, name: str = "vector") -> list | None:
        target = self._ref(slot, name)
        if target is None:
            return None
        size = _SCALAR_SIZES[fmt]
        start, count = self.fb.vector_at(target, size, f"{self.what}.{name}")
        return list(struct.unpack_from(f"<{count}{fmt}", self.fb.data, start))

    def structs(self, slot: int, layout: struct.Struct, name: str = "structs") -> list[tuple] | None:
        """A vector of structs, each unpacked with `layout` (a little-endian struct.Struct whose
        size is the struct's) into a tuple; None when absent."""
        target = self._ref(slot, name)
        if target is None:
            return None
        start, count = self.fb.vector_at(target, layout.size, f"{self.what}.{name}")
        return list(layout.iter_unpack(self.fb.data[start:start + count * layout.size]))

    def _refs(self, slot: int, name: str) -> list[int] | None:
        target = self._ref(slot, name)
        if target is None:
            return None
        start, count = self.fb.vector_at(target, 4, f"{self.what}.{name}")
        return [self.fb.deref(start + 4 * i, f"{self.what}.{name}[{i}]") for i in range(count)]

    def tables(self, slot: int, name: str = "tables") -> list[Table]:
        """A vector of tables (empty list when absent)."""
        refs = self._refs(slot, name)
        if refs is None:
            return []
        return [self.fb.table_at(p, f"{self.what}.{name}[{i}]") for i, p in enumerate(refs)]

    def strings(self, slot: int, name: str = "strings") -> list[str]:
        refs = self._refs(slot, name)
        if refs is None:
            return []
        return [self.fb.string_at(p, f"{self.what}.{name}[{i}]") for i, p in enumerate(refs)]

    def union(self, slot: int, name: str = "union") -> tuple[int, Table | None]:
        """(type tag, member table) of the union whose tag lives in `slot` (value in slot + 1)."""
        tag = self.scalar(slot, "B", 0, f"{name}_type")
        if tag == 0:
            return 0, None
        return tag, self.table(slot + 1, name)

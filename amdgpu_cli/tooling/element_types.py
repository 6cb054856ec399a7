"""IREE HAL element types: names, 32-bit codes, host formats, numpy dtypes, C number parsing.

An element type is IREE's `iree_hal_element_type_t`: a numerical type in the top byte and a
bit count in the low byte (`f32` = 0x21000020). The codes, the
numerical-type enum, the name tables and the formatter live in `amdgpu_cli.hal.enums`; this module
owns

* `ElementType`: the value, its IREE spelling (`i1`, `si8`, `ui32`, `bf16`, `cf64`, `*16`,
  `f8E4M3FN`) and the parser for that spelling, with the same C quirks as
  `iree_hal_parse_element_type` (the bit count goes through `strtoul` base 0, so `i0x20` is i32).
* host formats without numpy: `storage_size` (bytes per element) and `python_format`, the
  struct/array/memoryview format of the integer types, f32 and f64, which is how the usual run
  path parses and prints them.
* numpy mapping (numpy imported on first use): the *storage* dtype an element's bytes are kept
  in (bf16 and the f8 types are kept as raw unsigned bits, `i1` as uint8, opaque types as
  `V<n>`), the *user-facing* dtype (`bool` for i1, `ml_dtypes.bfloat16` for bf16 — only if
  ml_dtypes is installed), and the .npy `descr` rules of IREE's numpy_io (`<i4` reads as si32).
* C number parsing as IREE's `iree_string_view_ato*` do it: `c_strtol`, `c_strtoul`, and
  `c_strtod`, correctly rounded to f64 or (directly, not through a double) to f32.
* the narrow float formats (`NarrowFloatFormat`); their codecs, which need numpy, are in
  `narrow_float`.

Sub-byte element types (`i4`) are parsed but have no storage dtype; using them raises.

Sources: IREE runtime/src/iree/hal/buffer_view.h (codes), hal/string_util.c (names),
tooling/numpy_io.c (descr), base/internal/math.h (narrow float formats).
"""

from __future__ import annotations

import math
import re
import struct
from typing import TYPE_CHECKING, NamedTuple

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.enums import (
    ELEMENT_NAME_PREFIXES,
    F8_ELEMENT_NAMES,
    NumericalType,
    format_element_type,
)

if TYPE_CHECKING:
    from fractions import Fraction

    import numpy as np

__all__ = [
    "ElementType",
    "ElementTypeError",
    "NumericalType",
    "c_strtod",
    "is_c_float_literal",
    "c_strtoul",
    "c_strtol",
    "NARROW_FLOAT_FORMATS",
    "NarrowFloatFormat",
    "ml_dtypes_or_error",
]


class ElementTypeError(AmdgpuCliError):
    """An element type that cannot be parsed or used."""


_F8_BY_NAME = {name: nt for nt, name in F8_ELEMENT_NAMES.items()}

# ml_dtypes names of the f8 types, for the user-facing dtype.
_F8_ML_DTYPES = {
    NumericalType.FLOAT_8_E5M2: "float8_e5m2",
    NumericalType.FLOAT_8_E4M3FN: "float8_e4m3fn",
    NumericalType.FLOAT_8_E5M2_FNUZ: "float8_e5m2fnuz",
    NumericalType.FLOAT_8_E4M3_FNUZ: "float8_e4m3fnuz",
    NumericalType.FLOAT_8_E8M0_FNU: "float8_e8m0fnu",
}


# --------------------------------------------------------------------------------------------
# C integer parsing (strtol / strtoul with base 0), as IREE's iree_string_view_atoi_* use it.
# --------------------------------------------------------------------------------------------

_C_SPACE = " \t\n\v\f\r"
_HEX = frozenset("0123456789abcdefABCDEF")
_OCT = frozenset("01234567")
_DEC = frozenset("0123456789")


def _c_integer_prefix(text: str) -> tuple[bool, int] | None:
    """The (negative, magnitude) a base-0 strtol reads from the start of text, or None."""
    i = 0
    n = len(text)
    while i < n and text[i] in _C_SPACE:
        i += 1
    negative = False
    if i < n and text[i] in "+-":
        negative = text[i] == "-"
        i += 1
    if i + 2 < n and text[i] == "0" and text[i + 1] in "xX" and text[i + 2] in _HEX:
        j = i + 2
        while j < n and text[j] in _HEX:
            j += 1
        return negative, int(text[i + 2 : j], 16)
    if i < n and text[i] == "0":
        j = i + 1
        while j < n and text[j] in _OCT:
            j += 1
        return negative, int(text[i:j], 8)
    j = i
    while j < n and text[j] in _DEC:
        j += 1
    if j == i:
        return None
    return negative, int(text[i:j])


def c_strtol(text: str, bits: int = 64, *, max_chars: int = 32) -> int | None:
    """IREE's `iree_string_view_atoi_int{32,64}`: strtol/strtoll base 0 on a 64-bit C long.

    Leading whitespace and trailing garbage are ignored, `0x` is hex and a leading `0` octal.
    Returns None where IREE fails: no digits, a value outside the 64-bit range, or a string of
    `max_chars` or more characters (IREE copies it into a fixed scratch buffer: 16 for the
    32-bit forms, 32 for the 64-bit ones). The result is truncated to `bits`, as the C cast does.
    """
    if len(text) >= max_chars:
        return None
    parsed = _c_integer_prefix(text)
    if parsed is None:
        return None
    negative, magnitude = parsed
    value = -magnitude if negative else magnitude
    if not -(1 << 63) <= value < (1 << 63):
        return None
    return _wrap_signed(value, bits)


def c_strtoul(text: str, bits: int = 64, *, max_chars: int = 32) -> int | None:
    """IREE's `iree_string_view_atoi_uint{32,64}`: strtoul base 0, truncated to `bits`.

    As in C, a leading minus negates in unsigned arithmetic (`-1` is all ones).
    """
    if len(text) >= max_chars:
        return None
    parsed = _c_integer_prefix(text)
    if parsed is None:
        return None
    negative, magnitude = parsed
    if magnitude >= (1 << 64):
        return None
    value = (-magnitude) % (1 << 64) if negative else magnitude
    return value & ((1 << bits) - 1)


def _wrap_signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


# --------------------------------------------------------------------------------------------
# C float parsing (strtof / strtod in the C locale), as IREE's iree_string_view_ato{f,d} use it.
# --------------------------------------------------------------------------------------------

_C_FLOAT = re.compile(
    r"""[ \t\n\v\f\r]*(?P<sign>[+-]?)(?:
        0[xX](?=\.?[0-9a-fA-F])(?P<hexint>[0-9a-fA-F]*)(?:\.(?P<hexfrac>[0-9a-fA-F]*))?
            (?:[pP](?P<hexexp>[+-]?[0-9]+))?
      | (?P<inf>[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)
      | (?P<nan>[nN][aA][nN])(?:\((?P<payload>[0-9A-Za-z_]*)\))?
      | (?=\.?[0-9])(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?:[eE](?P<exp>[+-]?[0-9]+))?
    )""",
    re.VERBOSE,
)

_F32_MAX_ROUNDING_EDGE = float(2**128 - 2**103)  # halfway between f32 max and 2**128


def _c_float_fields(text: str):
    """Matches the longest strtod-style numeric prefix; None when there is none."""
    m = _C_FLOAT.match(text)
    if not m:
        return None
    if m.group("hexint") is not None:
        fields = ("hex", m.group("hexint"), m.group("hexfrac") or "", m.group("hexexp"))
        return m.group("sign"), fields
    if m.group("inf"):
        return m.group("sign"), ("inf",)
    if m.group("nan"):
        return m.group("sign"), ("nan", m.group("payload"))
    return m.group("sign"), ("dec", m.group("int") or "0", m.group("frac") or "", m.group("exp"))


def is_c_float_literal(text: str) -> bool:
    """True when strtod would consume all of text (leading whitespace aside)."""
    m = _C_FLOAT.match(text)
    return bool(m) and m.end() == len(text)


def _exact_value(fields) -> Fraction:
    """The exact value of a finite match (hex exponents are clamped far outside any range)."""
    from fractions import Fraction  # only hex literals and f32 ties need it: not loaded at start-up

    kind, whole, frac, exp = fields
    if kind == "hex":
        mantissa = int(whole + frac, 16) if (whole + frac) else 0
        if not mantissa:
            return Fraction(0)  # whatever the exponent (2 ** 10**10 would take minutes)
        exponent = int(exp or 0) - 4 * len(frac)
        if exponent + mantissa.bit_length() > 1100:
            exponent = 1100
        elif exponent + mantissa.bit_length() < -1200:
            exponent = -1200 - mantissa.bit_length()
        return Fraction(mantissa) * Fraction(2) ** exponent
    digits = (whole + frac).lstrip("0")
    if not digits:
        return Fraction(0)
    # Decimal exponents are clamped the same way: past 10**400 every value overflows and below
    # 10**-400 every value underflows, so the result is the same and 10**exp stays small.
    exponent = int(exp or 0)
    exponent = min(exponent, len(frac) + 400)
    exponent = max(exponent, len(frac) - 400 - len(digits))
    return Fraction(f"{whole}.{frac}e{exponent}")


def _has_nonzero_digit(fields) -> bool:
    return any(c not in "0" for c in fields[1] + fields[2])


def _nan_bits(negative: bool, payload: str | None, double: bool) -> int:
    """glibc's NaN with an optional n-char payload (kept only when it parses as a number)."""
    mant_bits = 52 if double else 23
    quiet = 1 << (mant_bits - 1)
    value = 0
    if payload:
        parsed = _c_integer_prefix(payload)
        if parsed is not None and _c_integer_span(payload) == len(payload):
            value = parsed[1] & (quiet - 1)
    exp_mask = (0x7FF << 52) if double else (0xFF << 23)
    sign = (1 << (63 if double else 31)) if negative else 0
    return sign | exp_mask | quiet | value


def _c_integer_span(text: str) -> int:
    """How many characters a base-0 strtoul consumes (digits only; no sign or spaces here)."""
    if len(text) > 2 and text[0] == "0" and text[1] in "xX" and text[2] in _HEX:
        j = 2
        while j < len(text) and text[j] in _HEX:
            j += 1
        return j
    alphabet = _OCT if text[:1] == "0" else _DEC
    j = 0
    while j < len(text) and text[j] in alphabet:
        j += 1
    return j


def c_strtod(text: str, *, single: bool = False, max_chars: int = 32) -> float | None:
    """IREE's `iree_string_view_atod` (or `atof` with single=True), correctly rounded.

    Returns a float — with single=True the f32 result, which a double holds exactly (NaN
    payloads widened as C widens them, so `array("f", ...)` gets the same bits back) — or None
    where IREE fails: no number at the start, a string of `max_chars` or more characters, or a
    non-zero number that underflows to zero (C reports ERANGE and IREE then rejects it).
    Overflow gives infinity, as in C.
    """
    if len(text) >= max_chars:
        return None
    parsed = _c_float_fields(text)
    if parsed is None:
        return None
    sign, fields = parsed
    negative = sign == "-"
    if fields[0] == "inf":
        return -math.inf if negative else math.inf
    if fields[0] == "nan":
        return _nan(negative, fields[1], single)
    if fields[0] == "hex":
        exact = _exact_value(fields)
        double = _fraction_to_double(exact)
    else:
        exact = None
        double = float(f"{fields[1]}.{fields[2]}e{fields[3] or 0}")
    value = _round_to_single(double, fields, exact) if single else double
    if value == 0 and _has_nonzero_digit(fields):
        return None  # underflow: C sets ERANGE and IREE treats that as a parse failure
    return -value if negative else value


_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_F32_INFINITY_BITS = 0x7F800000


def _nan(negative: bool, payload: str | None, single: bool) -> float:
    """glibc's NaN as a float; an f32 NaN is widened the way C widens it (payload << 29)."""
    if not single:
        return _F64.unpack(_U64.pack(_nan_bits(negative, payload, double=True)))[0]
    bits = _nan_bits(negative, payload, double=False)
    widened = (bits >> 31) << 63 | 0x7FF << 52 | (bits & 0x7FFFFF) << 29
    return _F64.unpack(_U64.pack(widened))[0]


def _fraction_to_double(exact: Fraction) -> float:
    try:
        return exact.numerator / exact.denominator  # int / int is correctly rounded in CPython
    except OverflowError:
        return math.inf


def _f32_bits(value: float) -> int:
    """The bits of a non-negative double rounded to f32 (C's cast: nearest even; inf past max)."""
    try:
        return _U32.unpack(_F32.pack(value))[0]
    except OverflowError:
        return _F32_INFINITY_BITS


def _f32_value(bits: int) -> float:
    return _F32.unpack(_U32.pack(bits))[0]


def _round_to_single(double: float, fields, exact: Fraction | None) -> float:
    """Rounds a non-negative number to float32 directly, not through a double tie."""
    bits = _f32_bits(double)
    single = _f32_value(bits)
    if single == double or math.isinf(double):
        return single
    # Only a double sitting exactly halfway between two floats can round the wrong way.
    # The f32 neighbour on the double's side: one step up or down in the (positive) bits.
    other = _f32_value(bits + 1 if single < double else bits - 1)
    if math.isinf(single) or math.isinf(other):
        midpoint = _F32_MAX_ROUNDING_EDGE
    else:
        midpoint = (single + other) / 2
    if double != midpoint:
        return single
    if exact is None:
        exact = _exact_value(fields)
    # A Fraction compares with a (finite) float exactly.
    if exact == midpoint:
        return single  # a true tie: the cast already rounded it to even
    high, low = (single, other) if single > other else (other, single)
    return high if exact > midpoint else low


# --------------------------------------------------------------------------------------------
# ElementType
# --------------------------------------------------------------------------------------------


class ElementType(NamedTuple):
    """One `iree_hal_element_type_t`: numerical type (top byte) and bit count (low byte).

    A NamedTuple, as NarrowFloatFormat: cheaper than a dataclass to define at start-up."""

    numerical_type: int
    bit_count: int

    # -- codes and names ----------------------------------------------------------------------

    @property
    def code(self) -> int:
        return ((self.numerical_type & 0xFF) << 24) | (self.bit_count & 0xFF)

    @classmethod
    def from_code(cls, code: int) -> ElementType:
        return cls((code >> 24) & 0xFF, code & 0xFF)

    @classmethod
    def parse(cls, name: str) -> ElementType:
        """Parses an IREE element type name (`f32`, `i1`, `si8`, `x16`, `f8E5M2`, ...)."""
        if name == "i1":
            return cls(NumericalType.BOOLEAN, 8)
        if name in _F8_BY_NAME:
            return cls(_F8_BY_NAME[name], 8)
        for prefix, numerical_type in ELEMENT_NAME_PREFIXES:
            if name.startswith(prefix):
                break
        else:
            raise ElementTypeError(f"unhandled element type prefix in '{name}'")
        bit_count = c_strtoul(name[len(prefix) :], 32, max_chars=16)
        if bit_count is None or bit_count > 0xFF:
            raise ElementTypeError(f"out of range bit count in '{name}'")
        return cls(numerical_type, bit_count)

    @property
    def name(self) -> str:
        """The IREE spelling, as `iree_hal_format_element_type` writes it."""
        return format_element_type(self.code)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"ElementType({self.name})"

    # -- classification -----------------------------------------------------------------------

    @property
    def byte_size(self) -> int:
        """Bytes per element in a dense buffer (`iree_hal_element_dense_byte_count`)."""
        return (self.bit_count + 7) // 8

    @property
    def is_boolean(self) -> bool:
        return self.numerical_type == NumericalType.BOOLEAN

    @property
    def is_integer(self) -> bool:
        """Signless, signed, unsigned or boolean integer (IREE's `is_integer` bit test)."""
        return (self.numerical_type & NumericalType.INTEGER) == NumericalType.INTEGER

    @property
    def is_float(self) -> bool:
        return (self.numerical_type & NumericalType.FLOAT) == NumericalType.FLOAT

    @property
    def is_opaque(self) -> bool:
        return self.numerical_type == NumericalType.UNKNOWN

    @property
    def narrow_float(self) -> NarrowFloatFormat | None:
        """The codec for f16, bf16 and the f8 types; None for every other type."""
        return NARROW_FLOAT_FORMATS.get((self.numerical_type, self.bit_count))

    # -- host formats -------------------------------------------------------------------------

    @property
    def storage_size(self) -> int:
        """Bytes one element takes in dense storage; sub-byte and zero-width types raise."""
        bits = self.bit_count
        if bits == 0 or bits % 8:
            raise ElementTypeError(
                f"element type {self.name} is not a whole number of bytes; not supported",
                status="UNIMPLEMENTED",
            )
        return bits // 8

    @property
    def python_format(self) -> str | None:
        """The struct / array / memoryview format of one element (native little-endian), for
        the types Python reads without numpy: the integers, f32 and f64. None for the others."""
        return _PYTHON_FORMATS.get(self)

    # -- numpy --------------------------------------------------------------------------------

    @property
    def storage_dtype(self) -> np.dtype:
        """The dtype whose bytes hold one element exactly (little-endian)."""
        import numpy as np

        nt, bits = self.numerical_type, self.bit_count
        size = self.storage_size  # raises for the types no dtype holds
        if nt in (NumericalType.INTEGER, NumericalType.INTEGER_SIGNED) and bits in (8, 16, 32, 64):
            return np.dtype(f"<i{size}")
        if nt == NumericalType.INTEGER_UNSIGNED and bits in (8, 16, 32, 64):
            return np.dtype(f"<u{size}")
        if nt == NumericalType.BOOLEAN and bits == 8:
            return np.dtype("u1")
        if nt == NumericalType.FLOAT_IEEE and bits in (16, 32, 64):
            return np.dtype(f"<f{size}")
        if nt == NumericalType.FLOAT_COMPLEX and bits in (64, 128):
            return np.dtype(f"<c{size}")
        if self.narrow_float is not None:
            return np.dtype(f"<u{size}")
        return np.dtype(f"V{size}")

    @property
    def numpy_dtype(self) -> np.dtype:
        """The dtype a user sees: bool for i1, ml_dtypes types for bf16 and f8."""
        import numpy as np

        nt = self.numerical_type
        if nt == NumericalType.BOOLEAN and self.bit_count == 8:
            return np.dtype(bool)
        if nt == NumericalType.FLOAT_BRAIN and self.bit_count == 16:
            return np.dtype(ml_dtypes_or_error(self.name).bfloat16)
        if nt in _F8_ML_DTYPES and self.bit_count == 8:
            module = ml_dtypes_or_error(self.name)
            dtype_name = _F8_ML_DTYPES[nt]
            if not hasattr(module, dtype_name):
                raise ElementTypeError(
                    f"{self.name} needs a newer ml_dtypes (no ml_dtypes.{dtype_name})",
                    status="UNIMPLEMENTED",
                )
            return np.dtype(getattr(module, dtype_name))
        return self.storage_dtype

    @classmethod
    def from_numpy_dtype(cls, dtype) -> ElementType:
        """The element type for a numpy dtype; integers map to signless `iN`."""
        import numpy as np

        dtype = np.dtype(dtype)
        if dtype.kind == "b":
            return I1
        if dtype.kind == "i":
            return cls(NumericalType.INTEGER, dtype.itemsize * 8)
        if dtype.kind == "u":
            return cls(NumericalType.INTEGER_UNSIGNED, dtype.itemsize * 8)
        if dtype.kind == "f" and dtype.itemsize in (2, 4, 8):
            return cls(NumericalType.FLOAT_IEEE, dtype.itemsize * 8)
        if dtype.kind == "c":
            return cls(NumericalType.FLOAT_COMPLEX, dtype.itemsize * 8)
        if dtype.kind == "V" and dtype.fields is None and dtype.itemsize:
            if dtype.name == "bfloat16":
                return BF16
            for nt, ml_name in _F8_ML_DTYPES.items():
                if dtype.name == ml_name:
                    return cls(nt, 8)
            return cls(NumericalType.UNKNOWN, dtype.itemsize * 8)
        raise ElementTypeError(f"numpy dtype {dtype} has no IREE element type")

    # -- .npy ---------------------------------------------------------------------------------

    @classmethod
    def from_npy_descr(cls, descr: str) -> ElementType:
        """IREE's reading of an .npy `descr`: `<i4` is si32 (signed), `|b1` is i1."""
        if descr[:1] == ">":
            raise ElementTypeError(
                f"big-endian data type '{descr}' unsupported", status="UNIMPLEMENTED"
            )
        if descr[:1] in ("|", "=", "<"):
            descr = descr[1:]
        if not descr:
            raise ElementTypeError("descr missing kind")
        kind, width = descr[0], descr[1:]
        numerical_type = {
            "b": NumericalType.BOOLEAN,
            "i": NumericalType.INTEGER_SIGNED,
            "u": NumericalType.INTEGER_UNSIGNED,
            "f": NumericalType.FLOAT_IEEE,
            "c": NumericalType.FLOAT_COMPLEX,
            "V": NumericalType.UNKNOWN,
        }.get(kind)
        if numerical_type is None:
            raise ElementTypeError(f"unsupported data type {kind}", status="UNIMPLEMENTED")
        byte_width = c_strtoul(width, 32, max_chars=16)
        if byte_width is None:
            raise ElementTypeError("invalid descr byte width")
        # IREE ORs the bit count into the code unmasked; widths over 255 bits spill upward.
        return cls.from_code(((numerical_type << 24) | (byte_width * 8)) & 0xFFFFFFFF)

    @property
    def npy_descr(self) -> str:
        """The `descr` IREE writes for this type; bf16, f8 and others have none."""
        kind = {
            NumericalType.UNKNOWN: "V",
            NumericalType.BOOLEAN: "b",
            NumericalType.INTEGER: "i",
            NumericalType.INTEGER_SIGNED: "i",
            NumericalType.INTEGER_UNSIGNED: "u",
            NumericalType.FLOAT_IEEE: "f",
            NumericalType.FLOAT_COMPLEX: "c",
        }.get(self.numerical_type)
        if kind is None:
            raise ElementTypeError("unsupported data encoding", status="UNIMPLEMENTED")
        return f"{'|' if self.byte_size == 1 else '<'}{kind}{self.byte_size}"


def ml_dtypes_or_error(what: str):
    """Imports ml_dtypes, or raises a one-line error naming the type that needed it."""
    try:
        import ml_dtypes
    except ImportError:
        raise ElementTypeError(
            f"{what} arrays need the ml_dtypes package (pip install ml_dtypes)",
            status="UNIMPLEMENTED",
        ) from None
    return ml_dtypes


I1 = ElementType(NumericalType.BOOLEAN, 8)
I8 = ElementType(NumericalType.INTEGER, 8)
SI8 = ElementType(NumericalType.INTEGER_SIGNED, 8)
UI8 = ElementType(NumericalType.INTEGER_UNSIGNED, 8)
I16 = ElementType(NumericalType.INTEGER, 16)
SI16 = ElementType(NumericalType.INTEGER_SIGNED, 16)
UI16 = ElementType(NumericalType.INTEGER_UNSIGNED, 16)
I32 = ElementType(NumericalType.INTEGER, 32)
SI32 = ElementType(NumericalType.INTEGER_SIGNED, 32)
UI32 = ElementType(NumericalType.INTEGER_UNSIGNED, 32)
I64 = ElementType(NumericalType.INTEGER, 64)
SI64 = ElementType(NumericalType.INTEGER_SIGNED, 64)
UI64 = ElementType(NumericalType.INTEGER_UNSIGNED, 64)
F16 = ElementType(NumericalType.FLOAT_IEEE, 16)
F32 = ElementType(NumericalType.FLOAT_IEEE, 32)
F64 = ElementType(NumericalType.FLOAT_IEEE, 64)
BF16 = ElementType(NumericalType.FLOAT_BRAIN, 16)
CF64 = ElementType(NumericalType.FLOAT_COMPLEX, 64)
CF128 = ElementType(NumericalType.FLOAT_COMPLEX, 128)
F8E5M2 = ElementType(NumericalType.FLOAT_8_E5M2, 8)
F8E4M3FN = ElementType(NumericalType.FLOAT_8_E4M3FN, 8)
F8E5M2FNUZ = ElementType(NumericalType.FLOAT_8_E5M2_FNUZ, 8)
F8E4M3FNUZ = ElementType(NumericalType.FLOAT_8_E4M3_FNUZ, 8)
F8E8M0FNU = ElementType(NumericalType.FLOAT_8_E8M0_FNU, 8)

_PYTHON_FORMATS = {
    **{ElementType(nt, 8 << i): "bhiq"[i] for i in range(4)
       for nt in (NumericalType.INTEGER, NumericalType.INTEGER_SIGNED)},
    **{ElementType(NumericalType.INTEGER_UNSIGNED, 8 << i): "BHIQ"[i] for i in range(4)},
    F32: "f",
    F64: "d",
}

__all__ += [
    "I1", "I8", "SI8", "UI8", "I16", "SI16", "UI16", "I32", "SI32", "UI32", "I64", "SI64",
    "UI64", "F16", "F32", "F64", "BF16", "CF64", "CF128", "F8E5M2", "F8E4M3FN", "F8E5M2FNUZ",
    "F8E4M3FNUZ", "F8E8M0FNU",
]  # fmt: skip


# --------------------------------------------------------------------------------------------
# Narrow float formats (IREE base/internal/math.h); the codecs are in narrow_float.
# --------------------------------------------------------------------------------------------


class NarrowFloatFormat(NamedTuple):
    """A float narrower than f32, described the way IREE's generic codec takes it."""

    exp_bits: int
    mantissa_bits: int
    have_infinity: bool
    have_nan: bool
    bias_tweak: int = 0
    nan_as_neg_zero: bool = False
    e8m0: bool = False  # the exponent-only scale type has its own codec

    @property
    def exp_bias(self) -> int:
        return self.bias_tweak + (1 << (self.exp_bits - 1)) - 1


NARROW_FLOAT_FORMATS: dict[tuple[int, int], NarrowFloatFormat] = {
    (NumericalType.FLOAT_IEEE, 16): NarrowFloatFormat(5, 10, True, True),
    (NumericalType.FLOAT_BRAIN, 16): NarrowFloatFormat(8, 7, True, True),
    (NumericalType.FLOAT_8_E5M2, 8): NarrowFloatFormat(5, 2, True, True),
    (NumericalType.FLOAT_8_E4M3FN, 8): NarrowFloatFormat(4, 3, False, True),
    (NumericalType.FLOAT_8_E5M2_FNUZ, 8): NarrowFloatFormat(5, 2, False, True, 1, True),
    (NumericalType.FLOAT_8_E4M3_FNUZ, 8): NarrowFloatFormat(4, 3, False, True, 1, True),
    (NumericalType.FLOAT_8_E8M0_FNU, 8): NarrowFloatFormat(8, 0, False, True, e8m0=True),
}

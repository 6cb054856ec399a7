"""The VM's numerics, as the IREE 3.13.0 x86-64 runtime computes them: integer wraparound and C
division (a VmTrap where the runtime would crash), f32/f64 bit patterns and rounding, the
float <-> int conversions, libm through cffi (the same bits as the runtime's expf, powf, ...),
and the calling-convention conversions between raw register values and host values.
interpreter.py builds its op closures from these. See interpreter.py's docstring for the rules.
"""

from __future__ import annotations

import math
import struct

from amdgpu_cli.vm.refs import VmTrap

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF
SIGN32 = 0x80000000
SIGN64 = 0x8000000000000000

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
_S_I8, _S_U8 = struct.Struct("<b"), struct.Struct("<B")
_S_I16, _S_U16 = struct.Struct("<h"), struct.Struct("<H")

F32_DEFAULT_NAN = 0xFFC00000  # x86's "QNaN indefinite": what 0/0, inf-inf produce
F64_DEFAULT_NAN = 0xFFF8000000000000


# -- libm (the runtime calls the C library; so do we, for identical bits) ---------------------------

def _load_libm():
    import cffi

    ffi = cffi.FFI()
    unary_f = ("fabsf ceilf floorf roundf atanf cosf sinf expf exp2f expm1f logf log10f log1pf "
               "log2f sqrtf tanhf erff").split()
    unary_d = [n[:-1] for n in unary_f]
    ffi.cdef("\n".join(
        [f"float {n}(float);" for n in unary_f] + [f"double {n}(double);" for n in unary_d] +
        ["float atan2f(float, float); double atan2(double, double);",
         "float powf(float, float); double pow(double, double);",
         "float remainderf(float, float); double remainder(double, double);",
         "float fmodf(float, float);",
         "long lroundf(float); long long llroundf(float);",
         "long lround(double); long long llround(double);"]))
    for name in ("libm.so.6", None):
        try:
            lib = ffi.dlopen(name)
            break
        except OSError:
            continue
    else:
        raise ImportError("cannot load the C math library")
    return _CompatLibm(ffi, lib)


class _CompatLibm:
    """libm as IREE's runtime binds it: the pip 3.13.0 tools import exp, exp2, log, log2 and pow
    at the old `GLIBC_2.2.5` symbol version (SVID wrappers: e.g. log(-1) is +nan, where the
    default `GLIBC_2.29` version gives -nan). Those are looked up with dlvsym; everything else
    (the f32 functions included, which the runtime takes at their default versions) as usual."""

    _OLD_VERSION = ("exp", "exp2", "log", "log2", "pow")

    def __init__(self, ffi, lib):
        self._lib = lib
        try:
            dl = ffi.dlopen(None)
            ffi.cdef("void *dlopen(const char *, int); void *dlvsym(void *, const char *, const char *);")
            handle = dl.dlopen(b"libm.so.6", 1)  # RTLD_LAZY
        except (OSError, AttributeError, ffi.error):
            handle = ffi.NULL
        for name in self._OLD_VERSION:
            ptr = dl.dlvsym(handle, name.encode(), b"GLIBC_2.2.5") if handle != ffi.NULL else ffi.NULL
            if ptr != ffi.NULL:
                sig = "double(*)(double, double)" if name == "pow" else "double(*)(double)"
                setattr(self, name, ffi.cast(sig, ptr))

    def __getattr__(self, name):
        value = getattr(self._lib, name)
        setattr(self, name, value)
        return value


class _LazyLibm:
    """`_libm`, loaded on first use: building the cffi declarations imports pycparser (tens of
    milliseconds that most runs, whose functions use no libm op, need not pay at start-up)."""

    _impl = None

    def __getattr__(self, name):
        impl = _LazyLibm._impl
        if impl is None:
            impl = _LazyLibm._impl = _load_libm()
        value = getattr(impl, name)
        setattr(self, name, value)
        return value


_libm = _LazyLibm()


# -- value helpers --------------------------------------------------------------------------------

def s32(v: int) -> int:
    return v - 0x100000000 if v & SIGN32 else v


def s64(v: int) -> int:
    return v - 0x10000000000000000 if v & SIGN64 else v


def f32_value(bits: int) -> float:
    return _F32.unpack(_U32.pack(bits))[0]


def f32_bits(x: float) -> int:
    """Round a double to f32 (C cast) and return its bits."""
    try:
        return _U32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return 0x7F800000 if x > 0 else 0xFF800000


def f64_value(bits: int) -> float:
    return _F64.unpack(_U64.pack(bits))[0]


def f64_bits(x: float) -> int:
    return _U64.unpack(_F64.pack(x))[0]


def _round_f32(x: float) -> float:
    return f32_value(f32_bits(x))


def _div(a: float, b: float, default_nan: float) -> float:
    if b == 0.0:
        if a != a:
            return a
        if a == 0.0:
            return default_nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


_F32_NAN = f32_value(F32_DEFAULT_NAN)
_F64_NAN = f64_value(F64_DEFAULT_NAN)


def _f32_to_u64(x: float) -> int:
    """(uint64_t)x for a float already rounded to an integer value, as x86-64 clang emits it."""
    if x != x or x >= 18446744073709551616.0 or x <= -9223372036854775809.0:
        return SIGN64
    return int(x) & M64


def _int_to_f32(v: int) -> float:
    """(float)v for a 64-bit integer: rounded once, to nearest even, straight to f32 (going through
    a double would round twice and could land one f32 step off on a tie)."""
    magnitude = -v if v < 0 else v
    shift = magnitude.bit_length() - 24  # f32 keeps 24 significant bits
    if shift > 0:
        kept, dropped = magnitude >> shift, magnitude & ((1 << shift) - 1)
        half = 1 << (shift - 1)
        if dropped > half or (dropped == half and kept & 1):
            kept += 1
        magnitude = kept << shift
    return float(-magnitude if v < 0 else magnitude)


def _fpowi(base: float, n: int, rnd) -> float:
    r = 1.0
    b = base
    e = abs(n)
    while e:
        if e & 1:
            r = rnd(r * b)
        b = rnd(b * b)
        e >>= 1
    if n < 0:
        r = rnd(_div(1.0, r, _F64_NAN))
    return r


def _ctlz(v: int, width: int) -> int:
    return width - v.bit_length()


# -- host <-> raw marshalling -------------------------------------------------------------------------

def host_to_raw(ch: str, value):
    """A host value (int, float, ref) -> the raw form of cconv type `ch`."""
    if ch == "i":
        return int(value) & M32
    if ch == "I":
        return int(value) & M64
    if ch == "f":
        return f32_bits(float(value))
    if ch == "F":
        return f64_bits(float(value))
    return value


def raw_to_host(ch: str, raw):
    if ch == "i":
        return s32(raw)
    if ch == "I":
        return s64(raw)
    if ch == "f":
        return f32_value(raw)
    if ch == "F":
        return f64_value(raw)
    return raw


def cconv_slots(fragment: str) -> list[tuple[str, int]]:
    """Entry ABI: (type char, register index) per argument; I/F take an even-aligned pair."""
    out = []
    ni = nr = 0
    for ch in fragment:
        if ch in "if":
            out.append((ch, ni))
            ni += 1
        elif ch in "IF":
            ni += ni & 1
            out.append((ch, ni))
            ni += 2
        elif ch == "r":
            out.append((ch, nr))
            nr += 1
        else:
            raise VmTrap(f"unsupported type {ch!r} in an internal calling convention",
                         status="INVALID_ARGUMENT")
    return out


def _cconv_items(fragment: str) -> list[str]:
    """Top-level cconv items: single chars, or a span body `C...D` kept as 'C<body>'."""
    items = []
    i = 0
    while i < len(fragment):
        if fragment[i] == "C":
            end = fragment.index("D", i)
            items.append("C" + fragment[i + 1:end])
            i = end + 1
        else:
            items.append(fragment[i])
            i += 1
    return items


def _trap_div() -> VmTrap:
    return VmTrap("integer division by zero or overflow (a native SIGFPE in IREE's runtime)",
                  status="INTERNAL")


# Integer binary ops on unsigned raw values: name -> (i32 fn, i64 fn).
def _sdiv(a, b):
    if b == 0:
        raise _trap_div()
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _srem(a, b):
    if b == 0:
        raise _trap_div()
    rm = abs(a) % abs(b)
    return -rm if a < 0 else rm


def _udiv(a, b):
    if b == 0:
        raise _trap_div()
    return a // b


def _urem(a, b):
    if b == 0:
        raise _trap_div()
    return a % b


def _int_binary(kind: str, bits: int):
    mask = (1 << bits) - 1
    sign = 1 << (bits - 1)
    smin = -sign

    def sv(v):
        return v - (1 << bits) if v & sign else v

    if kind == "add":
        return lambda a, b: (a + b) & mask
    if kind == "sub":
        return lambda a, b: (a - b) & mask
    if kind == "mul":
        return lambda a, b: (a * b) & mask
    if kind == "div.s":
        def f(a, b):
            a, b = sv(a), sv(b)
            if a == smin and b == -1:
                raise _trap_div()
            return _sdiv(a, b) & mask
        return f
    if kind == "div.u":
        return _udiv
    if kind == "rem.s":
        def f(a, b):
            a, b = sv(a), sv(b)
            if a == smin and b == -1:
                raise _trap_div()
            return _srem(a, b) & mask
        return f
    if kind == "rem.u":
        return _urem
    if kind == "and":
        return lambda a, b: a & b
    if kind == "or":
        return lambda a, b: a | b
    if kind == "xor":
        return lambda a, b: a ^ b
    if kind == "min.s":
        return lambda a, b: b if sv(b) < sv(a) else a
    if kind == "min.u":
        return lambda a, b: b if b < a else a
    if kind == "max.s":
        return lambda a, b: b if sv(a) < sv(b) else a
    if kind == "max.u":
        return lambda a, b: b if a < b else a
    return None


def _int_unary(kind: str, bits: int):
    mask = (1 << bits) - 1
    sign = 1 << (bits - 1)
    if kind == "not":
        return lambda a: a ^ mask
    if kind == "abs":
        return lambda a: ((1 << bits) - a) & mask if a & sign else a
    if kind == "ctlz":
        return lambda a: bits - a.bit_length()
    return None


def _float_ops(bits: int):
    """(to_float, to_bits, round, default NaN, libm names suffix) for f32 / f64."""
    if bits == 32:
        return f32_value, f32_bits, _round_f32, _F32_NAN, "f"
    return f64_value, f64_bits, float, _F64_NAN, ""


_FLOAT_UNARY_LIBM = {"ceil", "floor", "round", "atan", "cos", "sin", "exp", "exp2", "expm1", "log",
                     "log10", "log1p", "log2", "sqrt", "tanh", "erf"}

"""Op builders for the VM's arithmetic: integer and float ops, shifts, compares, conversions.

Each builder is `builder(fb, o, *row) -> op`, called once per instruction by op_table.py with the
function's `FunctionBuilder` `fb`, the instruction's operands `o` (field name -> value) and the
row's parameters from the op table (a kind such as "div.s" and a bit width, a compare predicate,
a conversion's reader / function / writer); it returns the closure `op(i, r)` that runs it. The
semantics are numerics.py's (see interpreter.py's docstring for the rules).
"""

from __future__ import annotations

import math

from amdgpu_cli.vm.numerics import (
    M32, M64, SIGN32, _div, _f32_to_u64, _float_ops, _fpowi, _int_binary, _int_to_f32, _int_unary,
    _libm, _round_f32, f32_bits, f32_value, f64_bits, f64_value, s32, s64,
)

# -- integer arithmetic -----------------------------------------------------------------------


def int_arith(fb, o, kind: str, bits: int):
    """`kind` is numerics' name for the op ("add", "div.s", "ctlz", ...) or "fma"."""
    d = o["result"].index
    if bits == 32:
        if kind == "fma":
            a, b, c = o["first"].index, o["second"].index, o["third"].index

            def op(i, r):
                i[d] = (i[a] * i[b] + i[c]) & M32
            return op
        f = _int_binary(kind, 32)
        if f is not None:
            a, b = o["left"].index, o["right"].index
            if kind == "add":
                def op(i, r):
                    i[d] = (i[a] + i[b]) & M32
                return op

            def op(i, r):
                i[d] = f(i[a], i[b])
            return op
        f = _int_unary(kind, 32)
        a = o["operand"].index

        def op(i, r):
            i[d] = f(i[a])
        return op
    if kind == "fma":
        a, b, c = o["first"].index, o["second"].index, o["third"].index

        def op(i, r):
            v = ((i[a] | i[a + 1] << 32) * (i[b] | i[b + 1] << 32)
                 + (i[c] | i[c + 1] << 32)) & M64
            i[d] = v & M32
            i[d + 1] = v >> 32
        return op
    f = _int_binary(kind, 64)
    if f is not None:
        a, b = o["left"].index, o["right"].index

        def op(i, r):
            v = f(i[a] | i[a + 1] << 32, i[b] | i[b + 1] << 32)
            i[d] = v & M32
            i[d + 1] = v >> 32
        return op
    f = _int_unary(kind, 64)
    a = o["operand"].index

    def op(i, r):
        v = f(i[a] | i[a + 1] << 32)
        i[d] = v & M32
        i[d + 1] = v >> 32
    return op


def shift(fb, o, kind: str, bits: int):
    """`kind`: "shl", "shr.s" or "shr.u"; the amount is masked to the width."""
    a, n, d = o["operand"].index, o["amount"].index, o["result"].index
    if bits == 32:
        if kind == "shl":
            def op(i, r):
                i[d] = (i[a] << (i[n] & 31)) & M32
        elif kind == "shr.s":
            def op(i, r):
                i[d] = (s32(i[a]) >> (i[n] & 31)) & M32
        else:
            def op(i, r):
                i[d] = i[a] >> (i[n] & 31)
        return op
    if kind == "shl":
        def f(v, k):
            return (v << k) & M64
    elif kind == "shr.s":
        def f(v, k):
            return (s64(v) >> k) & M64
    else:
        def f(v, k):
            return v >> k

    def op(i, r):
        v = f(i[a] | i[a + 1] << 32, i[n] & 63)
        i[d] = v & M32
        i[d + 1] = v >> 32
    return op


# -- float arithmetic -------------------------------------------------------------------------

_FLOAT_BINARY = frozenset(("add", "sub", "mul", "div", "rem", "min", "max", "atan2", "pow"))


def float_arith(fb, o, kind: str, bits: int):
    """`kind`: a binary op, "fma", "fpowi", "abs", "neg", "rsqrt", "round.even" or the name of a
    one-argument libm function ("ceil", "exp", ...)."""
    d = o["result"].index
    if bits == 32:
        rd = lambda i, n: f32_value(i[n])  # noqa: E731

        def wr(i, n, x):
            i[n] = f32_bits(x)
    else:
        def rd(i, n):
            return f64_value(i[n] | i[n + 1] << 32)

        def wr(i, n, x):
            v = f64_bits(x)
            i[n] = v & M32
            i[n + 1] = v >> 32
    _, _, rnd, dnan, sfx = _float_ops(bits)
    if kind in _FLOAT_BINARY:
        a, b = o["left"].index, o["right"].index
        if kind == "add":
            f = lambda x, y: x + y  # noqa: E731
        elif kind == "sub":
            f = lambda x, y: x - y  # noqa: E731
        elif kind == "mul":
            f = lambda x, y: x * y  # noqa: E731
        elif kind == "div":
            f = lambda x, y: _div(x, y, dnan)  # noqa: E731
        elif kind == "rem":
            f = getattr(_libm, "remainder" + sfx)
        elif kind == "atan2":
            f = getattr(_libm, "atan2" + sfx)
        elif kind == "pow":
            f = getattr(_libm, "pow" + sfx)
        else:
            # min/max return one operand's exact bits (NaN payloads included).
            is_min = kind == "min"
            if bits == 32:
                def op(i, r):
                    x, y = f32_value(i[a]), f32_value(i[b])
                    i[d] = i[b] if ((y < x) if is_min else (x < y)) else i[a]
            else:
                def op(i, r):
                    x, y = rd(i, a), rd(i, b)
                    src = b if ((y < x) if is_min else (x < y)) else a
                    i[d], i[d + 1] = i[src], i[src + 1]
            return op

        def op(i, r):
            wr(i, d, f(rd(i, a), rd(i, b)))
        return op
    if kind == "fma":  # unfused in the 3.13.0 x86-64 build
        a, b, c = o["first"].index, o["second"].index, o["third"].index

        def op(i, r):
            wr(i, d, rnd(rd(i, a) * rd(i, b)) + rd(i, c))
        return op
    if kind == "fpowi":
        a, e = o["base"].index, o["exponent"].index

        def op(i, r):
            wr(i, d, _fpowi(rd(i, a), s32(i[e]), rnd))
        return op
    a = o["operand"].index
    if kind in ("abs", "neg"):
        if bits == 32:
            if kind == "abs":
                def op(i, r):
                    i[d] = i[a] & 0x7FFFFFFF
            else:
                def op(i, r):
                    i[d] = i[a] ^ SIGN32
        else:
            if kind == "abs":
                def op(i, r):
                    i[d], i[d + 1] = i[a], i[a + 1] & 0x7FFFFFFF
            else:
                def op(i, r):
                    i[d], i[d + 1] = i[a], i[a + 1] ^ SIGN32
        return op
    if kind == "rsqrt":
        sq = getattr(_libm, "sqrt" + sfx)

        def op(i, r):
            wr(i, d, _div(1.0, sq(rd(i, a)), dnan))
        return op
    if kind == "round.even":  # IREE's pre-C23 emulation
        rf = getattr(_libm, "round" + sfx)

        def even(x):
            y = rf(x)
            if abs(x - y) == 0.5 and math.fmod(y, 2.0) != 0:
                y = y - 1.0 if y > 0.0 else y + 1.0
            return y

        def op(i, r):
            wr(i, d, even(rd(i, a)))
        return op
    f = getattr(_libm, kind + sfx)

    def op(i, r):
        wr(i, d, f(rd(i, a)))
    return op


# -- compares ---------------------------------------------------------------------------------

def compare(fb, o, pred: str, ty: str, mod: str = ""):
    """cmp.<pred>.<ty>[.<mod>]: `mod` is "s"/"u" for signed/unsigned ints, "o"/"u" for ordered/
    unordered floats (.o is false on NaN, but see ne; .u is true on NaN)."""
    d = o["result"].index
    if ty == "ref":
        if pred == "nz":
            a = o["operand"].index

            def op(i, r):
                i[d] = int(r[a] is not None)
            return op
        a, b = o["left"].index, o["right"].index
        if pred == "eq":
            def op(i, r):
                i[d] = int(r[a] is r[b])
        else:
            def op(i, r):
                i[d] = int(r[a] is not r[b])
        return op
    if ty in ("i32", "i64"):
        if ty == "i64":
            def rd(i, n):
                return i[n] | i[n + 1] << 32
            conv = s64
        else:
            def rd(i, n):
                return i[n]
            conv = s32
        if pred == "nz":
            a = o["operand"].index

            def op(i, r):
                i[d] = int(rd(i, a) != 0)
            return op
        a, b = o["left"].index, o["right"].index
        if pred == "eq":
            def op(i, r):
                i[d] = int(rd(i, a) == rd(i, b))
        elif pred == "ne":
            def op(i, r):
                i[d] = int(rd(i, a) != rd(i, b))
        elif mod == "s":
            def op(i, r):
                i[d] = int(conv(rd(i, a)) < conv(rd(i, b)))
        else:
            def op(i, r):
                i[d] = int(rd(i, a) < rd(i, b))
        return op
    if ty == "f32":
        def rdf(i, n):
            return f32_value(i[n])
    else:
        def rdf(i, n):
            return f64_value(i[n] | i[n + 1] << 32)
    if pred == "nan":
        a = o["operand"].index

        def op(i, r):
            x = rdf(i, a)
            i[d] = int(x != x)
        return op
    a, b = o["left"].index, o["right"].index
    test = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y,
            "lt": lambda x, y: x < y, "lte": lambda x, y: x <= y}[pred]
    # The runtime's `ne.o` is C `!=`, which is true on NaN (ops.h), unlike LLVM's `one`.
    unordered_value = mod == "u" or pred == "ne"

    def op(i, r):
        x, y = rdf(i, a), rdf(i, b)
        if x != x or y != y:
            i[d] = int(unordered_value)
        else:
            i[d] = int(test(x, y))
    return op


# -- conversions ------------------------------------------------------------------------------
#
# A conversion row names how its operand is read ("i32", "i64": the raw u32 / u64; "f32",
# "f64": the float value), the function applied, and how the result is written (the same four).
# The functions are the runtime's: C truncation and sign extension, int -> float rounding,
# float -> int through lround / llround (an f64 source is rounded to f32 first where the
# runtime converts through float).

def trunc_i8(v):
    return v & 0xFF


def trunc_i16(v):
    return v & 0xFFFF


def trunc_i32(v):
    return v & M32


def sext_i8(v):
    return (v & 0xFF) - ((v & 0x80) << 1)


def sext_i16(v):
    return (v & 0xFFFF) - ((v & 0x8000) << 1)


def same(v):
    return v


def si32_to_float(v):
    return float(s32(v))


def si64_to_float(v):
    return float(s64(v))


def si64_to_f32(v):
    return _int_to_f32(s64(v))


def f32_lround(x):
    return _libm.lroundf(x)


def f32_llround(x):
    return _libm.llroundf(x)


def f32_round_u64(x):
    return _f32_to_u64(_libm.roundf(x))


def f64_lround_f32(x):
    return _libm.lroundf(_round_f32(x))


def f64_llround_f32(x):
    return _libm.llroundf(_round_f32(x))


def f64_lround(x):
    return _libm.lround(x)


def f64_llround(x):
    return _libm.llround(x)


def convert(fb, o, source: str, f, result: str):
    a, d = o["operand"].index, o["result"].index
    if source == "i32":
        def rd(i):
            return i[a]
    elif source == "i64":
        def rd(i):
            return i[a] | i[a + 1] << 32
    elif source == "f32":
        def rd(i):
            return f32_value(i[a])
    else:
        def rd(i):
            return f64_value(i[a] | i[a + 1] << 32)

    def w64(i, v):
        v &= M64
        i[d] = v & M32
        i[d + 1] = v >> 32

    if result == "i32":
        def wr(i, v):
            i[d] = v & M32
    elif result == "i64":
        wr = w64
    elif result == "f32":
        def wr(i, x):
            i[d] = f32_bits(x)
    else:
        def wr(i, x):
            w64(i, f64_bits(x))

    def op(i, r):
        wr(i, f(rd(i)))
    return op

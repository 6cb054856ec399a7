"""IREE's narrow float codecs (f16, bf16, f8), vectorised over numpy arrays.

IREE parses and prints f16, bf16 and the f8 types through its own conversions
(`iree_math_f32_to_f16` and friends), which are not plain IEEE conversions: every NaN becomes the
all-ones pattern on the way in and a positive NaN on the way out, and a few sub-normal corner
cases flush to zero. Reproducing them bit for bit is what keeps our output identical. The formats
themselves (`NarrowFloatFormat`) live in element_types; this module is imported only when a
narrow float is parsed, printed or compared, so that numpy stays out of the usual run path.

Threading: none; pure functions.

Sources: IREE runtime/src/iree/base/internal/math.h.
"""

from __future__ import annotations

import numpy as np

from amdgpu_cli.tooling.element_types import NarrowFloatFormat

__all__ = ["decode_narrow_float", "encode_narrow_float"]


def decode_narrow_float(bits, fmt: NarrowFloatFormat) -> np.ndarray:
    """Narrow float bit patterns -> float32, as IREE's `iree_math_*_to_f32` (NaN is positive)."""
    src = np.asarray(bits).astype(np.int64)
    if fmt.e8m0:
        out = np.ldexp(1.0, src - 127)
        return np.where(src == 0xFF, np.nan, out).astype(np.float32)
    mbits, ebits = fmt.mantissa_bits, fmt.exp_bits
    sign_mask = 1 << (ebits + mbits)
    mant_mask = (1 << mbits) - 1
    exp_mask = sign_mask - (1 << mbits)
    sign = np.where(src & sign_mask, -1.0, 1.0)
    exp = src & exp_mask
    mant = src & mant_mask
    biased_exp = exp >> mbits
    significand = (mant + (1 << mbits)).astype(np.float64)
    normal = sign * np.ldexp(significand, biased_exp - fmt.exp_bias - mbits)
    subnormal = sign * np.ldexp(mant.astype(np.float64), 1 - fmt.exp_bias - mbits)
    out = np.where(exp == 0, subnormal, normal)
    top = exp == exp_mask
    if fmt.have_infinity:
        out = np.where(top, sign * np.inf, out)
        if fmt.have_nan:
            out = np.where(top & (mant != 0), np.nan, out)
    elif fmt.have_nan and not fmt.nan_as_neg_zero:
        out = np.where(top & (mant == mant_mask), np.nan, out)
    if fmt.have_nan and fmt.nan_as_neg_zero:
        out = np.where(src == sign_mask, np.nan, out)
    return out.astype(np.float32)


def _bias_to_nearest_even(value: np.ndarray, shift) -> np.ndarray:
    even_bit = np.left_shift(np.int64(1), shift)
    odd_bit = even_bit >> 1
    return value + np.where(value & even_bit, odd_bit, odd_bit - 1)


def encode_narrow_float(values, fmt: NarrowFloatFormat) -> np.ndarray:
    """float32 values -> narrow bit patterns (int64), as IREE's `iree_math_f32_to_*`.

    Round to nearest even, with IREE's handling of NaN (all mantissa bits set), overflow and
    sub-normal results.
    """
    f32 = np.ascontiguousarray(values, dtype=np.float32)
    if fmt.e8m0:
        return _encode_e8m0(f32)
    u = f32.view(np.uint32).astype(np.int64)
    ebits, mbits = fmt.exp_bits, fmt.mantissa_bits
    dst_sign_shift = ebits + mbits
    dst_sign_mask = 1 << dst_sign_shift
    dst_mant_mask = (1 << mbits) - 1
    dst_exp_mask = dst_sign_mask - (1 << mbits)
    dst_bias = fmt.exp_bias
    shift_normal = 23 - mbits

    dst_sign = (u & 0x80000000) >> (31 - dst_sign_shift)
    f32_exp = u & 0x7F800000
    f32_mant = u & 0x7FFFFF
    arith_exp = (f32_exp >> 23) - 127

    is_special = f32_exp == 0x7F800000
    is_zero_or_sub = f32_exp == 0
    is_finite_normal = ~is_special & ~is_zero_or_sub

    gen_nan = is_special & (f32_mant != 0)
    gen_inf = is_special & (f32_mant == 0)
    dst_exp = np.zeros_like(u)
    dst_mant = np.zeros_like(u)

    # f32 zero or sub-normal: only bf16 (same exponent width) keeps sub-normals.
    if ebits == 8:
        sub = _bias_to_nearest_even(f32_mant, shift_normal) >> shift_normal
        dst_mant = np.where(is_zero_or_sub, sub, dst_mant)

    overflow = is_finite_normal & (arith_exp > (1 << (ebits - 1)) - int(fmt.have_infinity))
    gen_inf |= overflow
    underflow = is_finite_normal & ~overflow & (arith_exp + dst_bias <= 0)
    normal = is_finite_normal & ~overflow & ~underflow

    # Results that are sub-normal (or zero) in the destination.
    shift = (shift_normal - arith_exp + (1 - dst_bias)).astype(np.int64)
    in_range = (shift >= 0) & (shift <= 23)
    safe_shift = np.where(in_range, shift, 0)
    effective = (1 << 23) + f32_mant
    sub_mant = np.where(
        in_range, _bias_to_nearest_even(effective, safe_shift) >> safe_shift, 0
    )
    dst_mant = np.where(underflow, sub_mant, dst_mant)

    # Normal results: round the mantissa, carrying into the exponent.
    biased = _bias_to_nearest_even(f32_mant, shift_normal)
    carry = biased > 0x7FFFFF
    biased = np.where(carry, 0, biased)
    n_exp = ((arith_exp + carry + dst_bias) << mbits)
    dst_exp = np.where(normal, n_exp, dst_exp)
    dst_mant = np.where(normal, biased >> shift_normal, dst_mant)
    if not fmt.have_infinity:
        gen_nan |= normal & (n_exp > dst_exp_mask)

    result = dst_sign | dst_exp | dst_mant
    if fmt.nan_as_neg_zero:
        result = np.where((dst_exp == 0) & (dst_mant == 0), 0, result)
    if fmt.have_infinity:
        result = np.where(gen_inf, dst_sign | dst_exp_mask, result)
    elif fmt.have_nan:
        gen_nan |= gen_inf
    else:
        result = np.where(gen_inf, dst_sign | dst_exp_mask | dst_mant_mask, result)
    if not fmt.have_nan:
        nan_bits = 0
    elif fmt.nan_as_neg_zero:
        nan_bits = dst_sign_mask
    else:
        nan_bits = dst_sign | dst_exp_mask | dst_mant_mask
    return np.where(gen_nan, nan_bits, result).astype(np.int64)


def _encode_e8m0(f32: np.ndarray) -> np.ndarray:
    mantissa, exp = np.frexp(f32)
    rounded = exp.astype(np.int64) - (mantissa < 0.75)
    biased = np.clip(rounded + 127, 0, 0xFF)
    out = np.where(f32 <= 0, 0, biased)
    return np.where(~np.isfinite(f32), 0xFF, out).astype(np.int64)

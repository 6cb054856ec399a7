"""softhsa's AMDGPU interpreter (tests/softhsa/src/isa.c), instruction family by instruction family:
hand-written gfx942 kernels (kernels/gfx942_<family>.s, assembled by llvm-mc-19 and linked by
ld.lld-19 through tests.softhsa.test_isa's helpers) run on softhsa with SOFTHSA_EXECUTE=1, and what
they store is compared with values computed here in numpy (or Python integers / fractions), never
with the interpreter's own output. Each kernel takes {in, out}, reads per-lane inputs from `in`
in columns of 64 dwords and stores one column per result; a Check collects every mismatch so
one wrong instruction does not hide the others, and a queue error (an instruction the
interpreter does not run) fails the test while what was stored before it is still compared.

1. gfx942_salu.s `salu`: SOP2 s_add_u32/s_addc_u32 96-bit carry chain, s_sub_u32/s_subb_u32,
   s_sub_i32 overflow (SCC), s_mul_i32, s_mul_hi_u32/i32, s_lshl/lshr/ashr 32 and 64,
   s_bfe_u32, s_and/or/xor_b64, s_cselect_b32/b64; SOPK s_movk_i32; SOP1 s_not_b32/b64,
   s_brev_b32, s_mov_b64, s_and/or_saveexec_b64 (EXEC masking a v_mov); SOPC signed / unsigned /
   64-bit compares driving s_cbranch_scc0/scc1, s_branch, a backward loop, s_cbranch_execz/
   execnz/vccz.
2. gfx942_smem.s `smem`: s_load_dword/x2/x4/x8/x16 at immediate offsets and an SGPR offset.
3. gfx942_vop1.s: `vop1_cvt` v_cvt_f32_i32/u32, v_cvt_i32/u32_f32 (rounding, saturation, NaN ->
   0), v_cvt_f16_f32 (overflow, f16 denormals, ties) / v_cvt_f32_f16, v_ffbh_u32/i32,
   v_bfrev_b32, v_not_b32; `vop1_math` v_rcp/sqrt/rsq/log/exp_f32 within 1 ulp of the
   correctly rounded value, specials exact; `vop1_round` v_floor/ceil/trunc/rndne/fract_f32,
   v_frexp_mant/exp (signed zeros, denormals, inf, NaN); `vop1_f64` v_cvt_f64_f32/f32_f64/
   i32_f64/u32_f64/f64_i32/f64_u32, v_floor/rndne/trunc_f64.
4. gfx942_vop2.s: `vop2_float` v_add/sub/subrev/mul/min/max_f32 (NaN operands: IEEE-mode min/max
   give the other operand; inf, overflow, denormals, ties), v_fmac_f32, v_fmamk/fmaak_f32 (fused
   results checked against an exact fraction-based truth); `vop2_int` v_mul_u32_u24,
   v_mul_i32_i24, v_mul_hi_u32_u24, v_lshlrev/lshrrev/ashrrev, v_and/or/xor, v_cndmask_b32 with
   VCC from v_cmp; `vop2_carry` v_add_co/addc_co (VCC and SGPR-pair carries), v_sub_co/subb_co,
   v_subrev_co.
5. gfx942_vop3.s: `vop3_float` v_fma_f32/f64 (with abs/neg), v_ldexp_f32, v_cndmask_b32_e64 with
   abs/neg and an SGPR-pair mask, v_add_f32_e64 with modifiers; `vop3_int` v_mad_u32_u24,
   v_mad_u64_u32 (carry out), v_bfe_u32/i32, v_bfi_b32, v_alignbit_b32, v_lshl_add_u32,
   v_add3_u32, v_perm_b32 (all selector kinds); `vop3_{min3,max3,med3}_{f32,i32}` one kernel
   each (NaN operands for the f32 forms); `vop3_div` the f32 division sequence clang-19 emits
   (v_div_scale x2, v_rcp, v_fma/v_fmac chain, v_div_fmas, v_div_fixup), bit-exact against
   numpy float32 division incl. overflow, denormal results, 0/0, x/0, inf/inf.
6. gfx942_vopc.s `vopc`: v_cmp_{eq,lt,gt,le,ge,lg,neq,nlt,ngt,nle,nge,nlg,u,o}_f32 with NaN and
   signed zeros, the _e64 form with modifiers, v_cmp_class_f32 (quiet vs signalling NaN), signed
   / unsigned 32-bit and 64-bit integer compares; masks stored through v_cndmask_b32.
7. gfx942_vop3p.s `vop3p`: v_pk_fma/mul/add_f32 with op_sel/op_sel_hi/neg_lo/neg_hi,
   v_pk_add_u16 (with op_sel), v_pk_mov_b32.
8. gfx942_dpp.s `dpp_sdwa`: DPP quad_perm, row_shl/shr/ror, row_mirror, row_half_mirror,
   row_bcast:15/31, bound_ctrl, row_mask/bank_mask on v_mov and VOP2 ops (expected lanes from
   the GCN3/Vega manual's definitions); SDWA byte/word source selects, sext, dst_sel with
   UNUSED_PAD/SEXT/PRESERVE on VOP1 and VOP2.
9. gfx942_ds.s: `ds_ops` ds_write/read_b32/b64/b128, ds_write2/read2_b32 and _b64 with
   offset0/offset1 (a read2 whose address register is its destination), ds_write_b8/b16,
   ds_read_u8/i8/u16/i16; `ds_barrier` 4 waves of a 256-lane workgroup exchanging values
   through LDS across s_barrier.
10. gfx942_mubuf.s `mubuf`: buffer_load/store dword/x2/x4, ubyte/sbyte/ushort/sshort/byte/short,
    offen, idxen with a stride, idxen+offen, soffset, instruction offset; num_records clipping
    of raw-buffer loads (0) and stores (dropped) and of indices.
11. gfx942_global.s `global_flat`: global loads/stores with an SGPR base (saddr) and with 64-bit
    VGPR addresses, byte/short sign and zero extension, negative immediate offsets,
    flat_load/store_dword.
12. gfx942_mfma.s `mfma`: v_mfma_f32_16x16x4_f32 and v_mfma_i32_16x16x32_i8 against numpy matmul
    (MI300 operand layouts), in place (D = C) and with D overlapping the A operand.
13. gfx942_denorm.s `denorm_keep` / `denorm_flush`: the kernel descriptor's FLOAT_DENORM_MODE_32
    (3: f32 denormals kept; 0: flushed to zero of their sign, as inputs and as results).
"""

from __future__ import annotations

import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tests.softhsa.kernels import KERNELS_DIR
from tests.softhsa.test_isa import Array, assemble, dispatch
from tests.softhsa.test_isa import pytestmark as LLVM_TOOLS

pytestmark = LLVM_TOOLS  # the toolchain these kernels need (llvm-mc-19, ld.lld-19)

LANES = 64
SENTINEL = 0xA5A5A5A5  # what every out dword holds before the kernel runs
F32 = np.float32
U32 = np.uint32


# ---- running a family kernel ---------------------------------------------------------------------

def run(gpu, tmp_path: Path, family: str, kernel: str, inputs: list[np.ndarray], out_cols: int,
        check: "Check", items: int = LANES, workgroup: int = LANES) -> np.ndarray:
    """Dispatch `kernel` of kernels/gfx942_<family>.s over `items` work-items with kernargs {in,
    out}: `in` is `inputs` laid end to end (each a column of 64 dwords, or 2 columns of 64
    qwords); `out` is `out_cols` * `items` dwords preset to SENTINEL, returned as (out_cols, items)
    uint32. A queue error (an instruction the interpreter does not run) is a failure of `check`,
    and what the kernel stored before it is still compared: the kernels store their results as
    they go, the rarer instructions last."""
    hsa, _, _, pool = gpu
    words = [np.ascontiguousarray(column).view(U32).ravel() for column in inputs]
    data = np.concatenate(words) if words else np.zeros(1, U32)
    source = Array(hsa, pool, data)
    out = Array(hsa, pool, np.full(out_cols * items, SENTINEL, U32))
    hsaco = assemble(KERNELS_DIR / f"gfx942_{family}.s", tmp_path)
    errors: list = []
    ok = dispatch(gpu, hsaco, kernel, struct.pack("<QQ", source.address, out.address), items,
                  workgroup, errors=errors, timeout_ns=5_000_000_000)
    if not ok:
        check.failures.append(f"the queue stopped with error {errors} (41: aperture violation, "
                              "42: illegal instruction; stderr names the instruction)")
    return out.array.reshape(out_cols, items).copy()


class Check:
    """Collects every mismatch of a kernel's outputs (so one wrong instruction does not hide the
    others) and fails once at the end, naming the instruction, lanes, inputs, expected and got."""

    def __init__(self, kernel: str):
        self.kernel = kernel
        self.failures: list[str] = []

    def _report(self, label, bad, got, want, inputs):
        lanes = np.flatnonzero(bad)[:6]
        lines = [f"{label}: {bad.sum()} lane(s) wrong"]
        for lane in lanes:
            shown = ", ".join(_show(x[lane]) for x in inputs)
            lines.append(f"    lane {lane}: inputs ({shown}) expected {_show(want[lane])}, "
                         f"got {_show(got[lane])}")
        self.failures.append("\n".join(lines))

    def bits(self, label, got, want, *inputs):
        """Exact: the same bit patterns (uint32 / int32 arrays)."""
        got, want = np.asarray(got), np.asarray(want)
        mask = np.uint64(0xFFFFFFFF)
        bad = got.astype(np.uint64) & mask != want.astype(np.int64).astype(np.uint64) & mask
        if bad.any():
            self._report(label, bad, got, want, inputs)

    def f32(self, label, got_bits, want, *inputs):
        """Exact f32: the same bits (so -0 differs from +0), any NaN matching any NaN."""
        got = np.asarray(got_bits, U32).view(F32)
        want = np.asarray(want, F32)
        same = (got.view(U32) == want.view(U32)) | (np.isnan(got) & np.isnan(want))
        if not same.all():
            self._report(label, ~same, got, want, inputs)

    def f64(self, label, got, want, *inputs):
        got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
        same = (got.view(np.uint64) == want.view(np.uint64)) | (np.isnan(got) & np.isnan(want))
        if not same.all():
            self._report(label, ~same, got, want, inputs)

    def ulp(self, label, got_bits, want, *inputs, nulp=1):
        """Within `nulp` units in the last place of the f32 truth; specials (NaN, inf, 0) exact."""
        got = np.asarray(got_bits, U32).view(F32)
        want = np.asarray(want, F32)
        special = ~np.isfinite(want) | (want == 0)
        same = (got.view(U32) == want.view(U32)) | (np.isnan(got) & np.isnan(want))
        ordinary = ~special & np.isfinite(got)
        distance = np.abs(got.view(np.int32).astype(np.int64)
                          - want.view(np.int32).astype(np.int64))
        near = ordinary & (np.sign(got) == np.sign(want)) & (distance <= nulp)
        ok = np.where(special, same, near)
        if not ok.all():
            self._report(f"{label} (max {nulp} ulp)", ~ok, got, want, inputs)

    def done(self):
        assert not self.failures, f"{self.kernel}:\n" + "\n".join(self.failures)


def _show(x) -> str:
    if isinstance(x, (np.floating, float)):
        bits = np.asarray(x, F32).view(U32) if np.asarray(x).dtype == F32 else None
        return f"{float(x)!r}" + (f" (0x{int(bits):08x})" if bits is not None else "")
    if isinstance(x, (np.integer, int)):
        return f"0x{int(x) & 0xFFFFFFFFFFFFFFFF:x}"
    return repr(x)


def f32_bits(values) -> np.ndarray:
    return np.asarray(values, F32).view(U32)


def u32(values) -> np.ndarray:
    return np.asarray([int(v) & 0xFFFFFFFF for v in values], U32)


def fill(specials, n: int, rng, low: float, high: float, dtype=F32) -> np.ndarray:
    """`specials` first, then random values in [low, high) up to n lanes."""
    specials = np.asarray(specials, dtype)
    rest = rng.uniform(low, high, n - len(specials)).astype(dtype)
    return np.concatenate([specials, rest])


def round_f32(exact: Fraction) -> F32:
    """The f32 nearest to an exact rational (ties to even): an independent fused-multiply-add
    truth (rounding through f64 could round twice)."""
    with np.errstate(over="ignore"):
        guess = F32(float(exact))
    if not np.isfinite(guess):
        return guess
    best = None
    for candidate in (np.nextafter(guess, F32(-np.inf)), guess, np.nextafter(guess, F32(np.inf))):
        if not np.isfinite(candidate):
            continue
        distance = abs(Fraction(float(candidate)) - exact)
        key = (distance, int(candidate.view(U32)) & 1)
        if best is None or key < best[0]:
            best = (key, candidate)
    return best[1]


def fma32(a, b, c) -> np.ndarray:
    """a * b + c rounded once to f32, computed exactly with fractions."""
    out = []
    for x, y, z in zip(np.asarray(a, F32), np.asarray(b, F32), np.asarray(c, F32)):
        if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(z)):
            with np.errstate(invalid="ignore"):
                out.append(F32(np.float64(x) * np.float64(y) + np.float64(z)))
            continue
        value = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        if value == 0:  # -0 only for (-0 product) + (-0)
            negative = x * y == 0 and np.signbit(x) != np.signbit(y) and z == 0 and np.signbit(z)
            out.append(F32(-0.0) if negative else F32(0.0))
        else:
            out.append(round_f32(value))
    return np.asarray(out, F32)


# ---- 1. scalar ALU -------------------------------------------------------------------------------

def test_scalar_alu(gpu, tmp_path):
    x = [0xFFFFFFF0, 0x12345678, 0x00000020, 0x80000001, 0xFFFFFFF9, 5, 0xDEADBEEF, 0x00F0F00F]
    check = Check("salu")
    out = run(gpu, tmp_path, "salu", "salu", [np.asarray(x + [0] * 56, U32)], 2, check)
    got = out[0].astype(np.int64)
    M = 0xFFFFFFFF
    s = lambda v: v - (1 << 32) if v & 0x80000000 else v  # noqa: E731 (signed view)
    want = {}
    total = ((x[6] << 64) | (x[1] << 32) | x[0]) + ((x[7] << 64) | (x[3] << 32) | x[2])
    want.update({0: total & M, 1: (total >> 32) & M, 2: (total >> 64) & M,
                 3: int(x[0] + x[2] > M)})
    a64, b64 = (x[1] << 32) | x[0], (x[3] << 32) | x[2]
    diff = a64 - b64
    want.update({4: diff & M, 5: (diff >> 32) & M, 6: int(diff < 0)})
    sub = s(x[3]) - s(x[5])
    want.update({7: sub & M, 8: int(not -2**31 <= sub < 2**31)})
    want[9] = (s(x[4]) * s(x[6])) & M
    want[10] = (x[6] * x[1]) >> 32
    want[11] = ((s(x[4]) * s(x[6])) >> 32) & M
    want[12] = (x[1] << 4) & M
    want[13] = x[3] >> 31
    want[14] = (s(x[3]) >> 4) & M
    want[15] = (s(x[6]) >> 5) & M
    M64 = (1 << 64) - 1
    p01, p23, p67 = a64, b64, (x[7] << 32) | x[6]
    signed64 = lambda v: v - (1 << 64) if v >> 63 else v  # noqa: E731
    for k, v in ((16, (p01 << 36) & M64), (18, p23 >> 33), (20, (signed64(p23) >> 33) & M64),
                 (22, (p67 << 4) & M64), (26, p01 & p67), (28, p01 | p67), (30, p01 ^ p67),
                 (34, p01 if x[5] == 5 else p67), (40, p67), (42, ~p23 & M64)):
        want[k], want[k + 1] = v & M, v >> 32
    want[24] = (x[6] >> 4) & 0xFFF
    want[25] = x[6] >> 20
    want[32] = x[1] if s(x[4]) > s(x[5]) else x[6]
    want[33] = x[1] if x[4] > x[5] else x[6]
    want[36], want[37] = 0xFFFF8001, 0x7FFF
    want[38] = ~x[1] & M
    want[39] = int(f"{x[1]:032b}"[::-1], 2)
    # bit b: the b-th branch fell through (s_cbranch_scc0 falls through when SCC is 1, scc1 when 0)
    falls = [s(x[4]) < s(x[5]), not x[4] < x[5], s(x[3]) >= s(x[5]), x[3] >= x[5], True,
             not x[0] != x[0], a64 == a64, not a64 != b64, False, s(x[4]) == -7]
    want[44] = sum(1 << b for b, f in enumerate(falls) if f)
    want[45] = x[5] * (x[5] + 1) // 2
    partial = 0x0000FFFF_0000000F
    want.update({46: M, 47: M, 48: 1, 49: partial & M, 50: partial >> 32, 51: partial & M,
                 52: partial >> 32, 53: M, 54: M, 55: 8})
    for k in sorted(want):
        check.bits(f"scalar result {k}", got[k:k + 1], [want[k]])
    lanes = np.arange(LANES)
    check.bits("v_mov_b32 under EXEC from s_and_saveexec_b64", out[1],
               np.where((partial >> lanes) & 1, M, 0))
    check.done()


# ---- 2. SMEM -------------------------------------------------------------------------------------

def test_scalar_memory_loads(gpu, tmp_path):
    words = (np.arange(256, dtype=np.uint64) * 0x01010101 + 0x9E3779B9).astype(U32)
    check = Check("smem")
    out = run(gpu, tmp_path, "smem", "smem", [words], 1, check)
    want = np.concatenate([words[[1, 6, 7]], words[16:20], words[64:72], words[129:131],
                           words[240:256]])
    check.bits("s_load_dword/x2/x4/x8/x2 (soffset)/x16", out[0, :len(want)], want)
    check.done()


# ---- 3. VOP1 -------------------------------------------------------------------------------------

def wide(out: np.ndarray, col: int) -> np.ndarray:
    """The 64 f64 values a kernel stored (8 bytes a lane) from out column `col` on."""
    return out[col:col + 2].ravel().view(np.float64)


def f32_to_int(x, low: int, high: int) -> np.ndarray:
    """v_cvt_{i,u}32_f{32,64}: truncate toward zero, saturate, NaN -> 0."""
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        v = np.clip(np.trunc(np.nan_to_num(x, nan=0.0)), low, high)
    return v.astype(np.int64)


def clz32(n: int) -> int:
    return 32 - int(n).bit_length() if n else 0xFFFFFFFF


def test_vop1_conversions(gpu, tmp_path):
    rng = np.random.default_rng(31)
    x = fill([0.0, -0.0, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.7, 2147483520.0, 2147483648.0,
              -2147483648.0, -2147483904.0, 4294967040.0, 4294967296.0, 1e10, -1e10, np.inf,
              -np.inf, np.nan, 65504.0, 65519.99, 65520.0, 1e5, 6e-8, 1e-9, 2.0**-25,
              1.0009765625, 1.00048828125, 1.00146484375, 1e-40, -3.75, 123456.78],
             LANES, rng, -1e6, 1e6)
    n = u32([0, 1, -1, 0x7FFFFFFF, 0x80000000, 16777217, -16777217, 16777219, 0x7FFFFFC0,
             0xFFFFFFFF, 0x80000001, 0x00010000, 0x3C00, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x8000,
             0xABCD3555, 0x00FF0000, 0x40000000, 0x0000FFFF]
            + list(rng.integers(0, 2**32, LANES - 22)))
    check = Check("vop1_cvt")
    out = run(gpu, tmp_path, "vop1", "vop1_cvt", [x, n], 10, check)
    ni = n.view(np.int32)
    check.f32("v_cvt_f32_i32", out[0], ni.astype(F32), n)
    check.f32("v_cvt_f32_u32", out[1], n.astype(F32), n)
    check.bits("v_cvt_i32_f32", out[2], f32_to_int(x, -2**31, 2**31 - 1), x)
    check.bits("v_cvt_u32_f32", out[3], f32_to_int(x, 0, 2**32 - 1), x)
    with np.errstate(over="ignore"):
        half = x.astype(np.float16)
    got_half = (out[4] & 0xFFFF).astype(np.uint16).view(np.float16)
    same = ((got_half.view(np.uint16) == half.view(np.uint16))
            | (np.isnan(got_half) & np.isnan(half)))
    check.bits("v_cvt_f16_f32 (low half)", np.where(same, 0, 1), np.zeros(LANES), x)
    check.f32("v_cvt_f32_f16", out[5],
              (n & 0xFFFF).astype(np.uint16).view(np.float16).astype(F32), n)
    check.bits("v_ffbh_u32", out[6], [clz32(v) for v in n], n)
    check.bits("v_bfrev_b32", out[7], [int(f"{int(v):032b}"[::-1], 2) for v in n], n)
    check.bits("v_ffbh_i32", out[8],
               [0xFFFFFFFF if v in (0, -1) else clz32(v if v >= 0 else ~v) for v in ni.tolist()], n)
    check.bits("v_not_b32", out[9], ~n, n)
    check.done()


def test_vop1_transcendentals(gpu, tmp_path):
    rng = np.random.default_rng(32)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 4.0, 0.25, 2.0, -1.0, -4.0, 1e-30, 3e30,
                0.5, 9.0, 1e-20, 2.0**-100, 2.0**100]
    x = np.concatenate([np.asarray(specials, F32),
                        (2.0 ** rng.uniform(-100, 100, LANES - len(specials))).astype(F32)])
    x[len(specials)::3] *= -1  # negative operands: rcp keeps the sign, the others give NaN
    e = fill([0.0, -0.0, 1.0, -1.0, 0.5, 10.0, -10.5, 127.0, 127.99, 128.0, -126.0, np.inf,
              -np.inf, np.nan, 3.3219280948873622, 1e-8], LANES, rng, -125.0, 127.0)
    check = Check("vop1_math")
    out = run(gpu, tmp_path, "vop1", "vop1_math", [x, e], 5, check)
    d = x.astype(np.float64)
    with np.errstate(all="ignore"):
        check.ulp("v_rcp_f32", out[0], (1.0 / d).astype(F32), x)
        check.ulp("v_sqrt_f32", out[1], np.sqrt(d).astype(F32), x)
        check.ulp("v_rsq_f32", out[2], (1.0 / np.sqrt(d)).astype(F32), x)
        check.ulp("v_log_f32", out[3], np.log2(d).astype(F32), x)
        check.ulp("v_exp_f32", out[4], np.exp2(e.astype(np.float64)).astype(F32), e)
    check.done()


def test_vop1_rounding(gpu, tmp_path):
    rng = np.random.default_rng(33)
    x = fill([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, -0.0, 0.0, 1e-40, -1e-40, -1e-10, 8388607.5,
              8388608.0, 1e20, -1e20, np.inf, -np.inf, np.nan, 0.3, -0.3, 12345.678, -7.25,
              1.0, -1.0, 0.75, 3e-39, -2.0**-149], LANES, rng, -1000.0, 1000.0)
    check = Check("vop1_round")
    out = run(gpu, tmp_path, "vop1", "vop1_round", [x], 7, check)
    check.f32("v_floor_f32", out[0], np.floor(x), x)
    check.f32("v_ceil_f32", out[1], np.ceil(x), x)
    check.f32("v_trunc_f32", out[2], np.trunc(x), x)
    check.f32("v_rndne_f32", out[3], np.rint(x), x)
    almost_one = np.asarray(0x3F7FFFFF, U32).view(F32)
    with np.errstate(invalid="ignore"):
        fract = np.minimum(x - np.floor(x), almost_one)  # NaN for inf and NaN
    fract_lanes = x.view(U32) != np.asarray(-0.0, F32).view(U32)  # fract(-0): not pinned down
    check.f32("v_fract_f32", out[4][fract_lanes], fract[fract_lanes], x[fract_lanes])
    mant, exp = np.frexp(x)
    finite = np.isfinite(x)
    check.f32("v_frexp_mant_f32", out[5], np.where(finite, mant, x), x)
    check.bits("v_frexp_exp_i32_f32", out[6], np.where(finite, exp, 0), x)
    check.done()


def test_vop1_f64_conversions(gpu, tmp_path):
    rng = np.random.default_rng(34)
    d = fill([0.0, -0.0, 1.5, -2.5, 2147483647.0, 2147483647.9, 2147483648.0, -2147483648.0,
              -2147483649.0, 4294967295.0, 4294967295.5, 4294967296.0, -0.5, 1e300, -1e300,
              np.inf, -np.inf, np.nan, 3.4028235677973366e38, 3.4028236e38, 1e-45, 1.4e-45,
              1e-50, 1.0000000596046448, 1.0000001788139343, 0.1, 2.5, 3.5, -3.5, 1e15 + 0.5],
             LANES, rng, -1e10, 1e10, np.float64)
    x = fill([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3.4e38, 0.1], LANES, rng, -1e5, 1e5)
    n = u32([0, 1, -1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]
            + list(rng.integers(0, 2**32, LANES - 6)))
    check = Check("vop1_f64")
    out = run(gpu, tmp_path, "vop1", "vop1_f64", [d, x, n], 15, check)
    check.f64("v_cvt_f64_f32", wide(out, 0), x.astype(np.float64), x)
    with np.errstate(over="ignore"):
        check.f32("v_cvt_f32_f64", out[2], d.astype(F32), d)
    check.bits("v_cvt_i32_f64", out[3], f32_to_int(d, -2**31, 2**31 - 1), d)
    check.bits("v_cvt_u32_f64", out[4], f32_to_int(d, 0, 2**32 - 1), d)
    check.f64("v_cvt_f64_i32", wide(out, 5), n.view(np.int32).astype(np.float64), n)
    check.f64("v_cvt_f64_u32", wide(out, 7), n.astype(np.float64), n)
    check.f64("v_floor_f64", wide(out, 9), np.floor(d), d)
    check.f64("v_rndne_f64", wide(out, 11), np.rint(d), d)
    check.f64("v_trunc_f64", wide(out, 13), np.trunc(d), d)
    check.done()


# ---- 4. VOP2 -------------------------------------------------------------------------------------

def test_vop2_float(gpu, tmp_path):
    rng = np.random.default_rng(41)
    one_ulp = 1 + 2.0**-23
    pairs = [(np.nan, 1.0), (1.0, np.nan), (np.nan, np.nan), (np.inf, -np.inf), (np.inf, np.inf),
             (-np.inf, 2.0), (0.0, -0.0), (-0.0, -0.0), (3e38, 3e38), (1e-40, 1e-40),
             (1e-20, 1e-20), (1.0, 2.0**-24), (one_ulp, 2.0**-24), (0.1, 0.2), (-5.0, 3.0),
             (1.5, -0.0), (np.nan, -np.inf), (-7.0, np.nan), (one_ulp, one_ulp), (1e-38, 0.5),
             (16777216.0, 1.0), (-3.0, -3.0)]
    a = fill([p[0] for p in pairs], LANES, rng, -100.0, 100.0)
    b = fill([p[1] for p in pairs], LANES, rng, -100.0, 100.0)
    c = fill([0.0] * 18 + [-(1 + 2.0**-22), -0.0, -16777216.0, 9.0], LANES, rng, -100.0, 100.0)
    check = Check("vop2_float")
    out = run(gpu, tmp_path, "vop2", "vop2_float", [a, b, c], 9, check)
    with np.errstate(all="ignore"):
        check.f32("v_add_f32", out[0], a + b, a, b)
        check.f32("v_sub_f32", out[1], a - b, a, b)
        check.f32("v_subrev_f32", out[2], b - a, a, b)
        check.f32("v_mul_f32", out[3], a * b, a, b)
    # IEEE mode: a quiet NaN operand gives the other operand. (min/max of +0 and -0: not pinned.)
    signed_zeros = (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
    keep = ~signed_zeros
    check.f32("v_min_f32", out[4][keep], np.fmin(a, b)[keep], a[keep], b[keep])
    check.f32("v_max_f32", out[5][keep], np.fmax(a, b)[keep], a[keep], b[keep])
    check.f32("v_fmac_f32", out[6], fma32(a, b, c), a, b, c)
    check.f32("v_fmamk_f32", out[7], fma32(a, np.full(LANES, 1.5, F32), b), a, b)
    check.f32("v_fmaak_f32", out[8], fma32(a, b, np.full(LANES, -0.75, F32)), a, b)
    check.done()


def _sext24(v: np.ndarray) -> np.ndarray:
    v = (v & 0xFFFFFF).astype(np.int64)
    return np.where(v & 0x800000, v - (1 << 24), v)


def test_vop2_integer(gpu, tmp_path):
    rng = np.random.default_rng(42)
    a = u32([0, 1, 31, 32, 33, 0xFFFFFFFF, 0x00FFFFFF, 0x00800000, 0x7FFFFF, 0x12345678, 4, 63,
             0x80000000, 0xFFFFFF00] + list(rng.integers(0, 2**32, LANES - 14)))
    b = u32([0xFFFFFFFF, 0x80000000, 0x80000000, 0x80000001, 0xF0F0F0F0, 0x00FFFFFF, 0x00FFFFFF,
             0x00800000, 0xFF800000, 0x9ABCDEF0, 0x7FFFFFFF, 1, 0x12345678, 0]
            + list(rng.integers(0, 2**32, LANES - 14)))
    check = Check("vop2_int")
    out = run(gpu, tmp_path, "vop2", "vop2_int", [a, b], 10, check)
    a64, b64 = a.astype(np.uint64), b.astype(np.uint64)
    shift = a64 & 31
    check.bits("v_mul_u32_u24", out[0], ((a64 & 0xFFFFFF) * (b64 & 0xFFFFFF)) & 0xFFFFFFFF, a, b)
    check.bits("v_mul_i32_i24", out[1], (_sext24(a) * _sext24(b)) & 0xFFFFFFFF, a, b)
    check.bits("v_lshlrev_b32", out[2], (b64 << shift) & 0xFFFFFFFF, a, b)
    check.bits("v_lshrrev_b32", out[3], b64 >> shift, a, b)
    check.bits("v_ashrrev_i32", out[4], b.view(np.int32).astype(np.int64) >> shift.astype(np.int64),
               a, b)
    check.bits("v_and_b32", out[5], a & b, a, b)
    check.bits("v_or_b32", out[6], a | b, a, b)
    check.bits("v_xor_b32", out[7], a ^ b, a, b)
    check.bits("v_cndmask_b32 (vcc from v_cmp_gt_u32)", out[8], np.maximum(a, b), a, b)
    check.bits("v_mul_hi_u32_u24", out[9], ((a64 & 0xFFFFFF) * (b64 & 0xFFFFFF)) >> 32, a, b)
    check.done()


def test_vop2_carry_chains(gpu, tmp_path):
    rng = np.random.default_rng(43)
    a_lo = u32([0xFFFFFFFF, 0xFFFFFFFF, 0, 0, 1, 0x80000000] + list(rng.integers(0, 2**32, 58)))
    a_hi = u32([0, 0xFFFFFFFF, 0, 5, 0, 0x7FFFFFFF] + list(rng.integers(0, 2**32, 58)))
    b_lo = u32([1, 1, 1, 0, 1, 0x80000000] + list(rng.integers(0, 2**32, 58)))
    b_hi = u32([0, 0, 0, 6, 0, 0x80000000] + list(rng.integers(0, 2**32, 58)))
    check = Check("vop2_carry")
    out = run(gpu, tmp_path, "vop2", "vop2_carry", [a_lo, a_hi, b_lo, b_hi], 11, check)
    A = a_lo.astype(object) | (a_hi.astype(object) << 32)
    B = b_lo.astype(object) | (b_hi.astype(object) << 32)
    total, diff = A + B, A - B
    check.bits("v_add_co_u32 (lo)", out[0], [v & 0xFFFFFFFF for v in total], a_lo, b_lo)
    check.bits("v_addc_co_u32 (hi)", out[1], [(v >> 32) & 0xFFFFFFFF for v in total], a_hi, b_hi)
    check.bits("carry out of v_addc_co_u32", out[2], [v >> 64 for v in total], a_hi, b_hi)
    check.bits("v_sub_co_u32 (lo)", out[3], [v & 0xFFFFFFFF for v in diff], a_lo, b_lo)
    check.bits("v_subb_co_u32 (hi)", out[4], [(v >> 32) & 0xFFFFFFFF for v in diff], a_hi, b_hi)
    check.bits("borrow out of v_subb_co_u32", out[5], [int(v < 0) for v in diff], a_hi, b_hi)
    check.bits("v_subrev_co_u32", out[6], (b_lo.astype(np.int64) - a_lo) & 0xFFFFFFFF, a_lo, b_lo)
    check.bits("borrow out of v_subrev_co_u32", out[7], (a_lo > b_lo).astype(int), a_lo, b_lo)
    check.bits("v_add_co_u32_e64 (lo, carry to SGPRs)", out[8], [v & 0xFFFFFFFF for v in total])
    check.bits("v_addc_co_u32_e64 (hi)", out[9], [(v >> 32) & 0xFFFFFFFF for v in total])
    check.bits("carry out of v_addc_co_u32_e64", out[10], [v >> 64 for v in total])
    check.done()


# ---- 5. VOP3 -------------------------------------------------------------------------------------

def fma64(x, y, z) -> np.ndarray:
    """a * b + c rounded once to f64 (exact fractions; specials through plain f64 arithmetic)."""
    out = []
    for a, b, c in zip(x, y, z):
        if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
            with np.errstate(invalid="ignore"):
                out.append(a * b + c)
        else:
            value = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
            try:
                rounded = float(value)  # correctly rounded
            except OverflowError:
                rounded = np.inf if value > 0 else -np.inf
            out.append(rounded if value != 0 else
                       (-0.0 if a * b == 0 and np.signbit(a) != np.signbit(b) and np.signbit(c)
                        else 0.0))
    return np.asarray(out, np.float64)


# Edge cases of the fused multiply-adds (the first lanes of a, b, c and of the f64 x, y, z; the
# rest random): rounding at the last bit, NaN, infinities, signed zeros, overflow, denormals.
FMA_EDGES_F32 = (
    [1 + 2.0**-23, 1.5, np.nan, np.inf, -2.0, 0.0, -0.0, 3e38, 1e-40, 1.0, -1.0, 0.1],
    [1 + 2.0**-23, -2.0, 1.0, 0.0, np.nan, -0.0, 5.0, 2.0, 1e-40, np.inf, -3.0, 0.1],
    [-(1 + 2.0**-22), 0.25, 1.0, 1.0, 1.0, -0.0, -0.0, -3e38, 0.0, -np.inf, -0.0, -0.01])
FMA_EDGES_F64 = ([1 + 2.0**-52, 1e308, -0.0, np.inf], [1 + 2.0**-52, 10.0, 0.0, 0.0],
                 [-(1 + 2.0**-51), -1e308, -0.0, 1.0])


def fma_inputs(lanes: int, rng) -> list[np.ndarray]:
    """a, b, c (f32) and x, y, z (f64) for `lanes` lanes: FMA_EDGES_* first, then random."""
    return ([fill(edges, lanes, rng, -50.0, 50.0) for edges in FMA_EDGES_F32]
            + [fill(edges, lanes, rng, -1e3, 1e3, np.float64) for edges in FMA_EDGES_F64])


def test_vop3_float(gpu, tmp_path):
    rng = np.random.default_rng(51)
    a, b, c, x, y, z = fma_inputs(LANES, rng)
    n = u32([0, 1, -1, 200, -200, -140, -149, 127, -126, 3, -3, 30]
            + list(rng.integers(-30, 30, LANES - 12)))
    check = Check("vop3_float")
    out = run(gpu, tmp_path, "vop3", "vop3_float", [a, b, c, x, y, z, n], 9, check)
    check.f32("v_fma_f32", out[0], fma32(a, b, c), a, b, c)
    check.f32("v_fma_f32 -a, |b|, -c", out[1], fma32(-a, np.abs(b), -c), a, b, c)
    with np.errstate(over="ignore"):
        check.f32("v_ldexp_f32", out[2], np.ldexp(a, n.view(np.int32)), a, n)
    with np.errstate(invalid="ignore"):
        check.f32("v_cndmask_b32_e64 -a, |b|, s[20:21] (a < b)", out[3],
                  np.where(a < b, np.abs(b), -a), a, b)
        check.f32("v_add_f32_e64 |a|, -b", out[4], np.abs(a) - b, a, b)
    check.f64("v_fma_f64", wide(out, 5), fma64(x, y, z), x, y, z)
    check.f64("v_fma_f64 -x, y, |z|", wide(out, 7), fma64(-x, y, np.abs(z)), x, y, z)
    check.done()


def _s32(v) -> np.ndarray:
    return np.asarray(v, U32).view(np.int32).astype(np.int64)


def test_vop3_integer(gpu, tmp_path):
    rng = np.random.default_rng(52)
    a = u32([0xFFFFFFFF, 0x80000000, 0x12345678, 0xF0F0F0F0, 0xFFFFFFFF, 0xDEADBEEF, 0x00FFFFFF,
             0x87654321] + list(rng.integers(0, 2**32, LANES - 8)))
    b = u32([0xFFFFFFFF, 31, 4, 28, 0, 36, 0x00FFFFFF, 16]
            + list(rng.integers(0, 2**32, LANES - 8)))
    c = u32([0xFFFFFFFF, 1, 8, 8, 32, 0, 0xFF000001, 20] + list(rng.integers(0, 2**32, LANES - 8)))
    selectors = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 0xFF, 0x0C]
    s = u32([sum(int(rng.choice(selectors)) << (8 * i) for i in range(4)) for _ in range(LANES)])
    check = Check("vop3_int")
    out = run(gpu, tmp_path, "vop3", "vop3_int", [a, b, c, s], 11, check)
    A, B, C = (v.astype(object) for v in (a, b, c))
    check.bits("v_mad_u32_u24", out[0], [((p & 0xFFFFFF) * (q & 0xFFFFFF) + r) & 0xFFFFFFFF
                                         for p, q, r in zip(A, B, C)], a, b, c)
    mad = [p * q + ((p << 32) | r) for p, q, r in zip(A, B, C)]
    check.bits("v_mad_u64_u32 (lo)", out[1], [v & 0xFFFFFFFF for v in mad], a, b, c)
    check.bits("v_mad_u64_u32 (hi)", out[2], [(v >> 32) & 0xFFFFFFFF for v in mad], a, b, c)
    check.bits("v_mad_u64_u32 (carry out)", out[3], [v >> 64 for v in mad], a, b, c)
    offset, width = B & 31, C & 31
    ubfe = [(p >> o) & ((1 << w) - 1) for p, o, w in zip(A, offset, width)]
    check.bits("v_bfe_u32", out[4], ubfe, a, b, c)
    sbfe = []
    for p, o, w in zip(_s32(a).tolist(), offset, width):
        f = (p >> o) & ((1 << w) - 1)
        sbfe.append(f - (1 << w) if w and (f >> (w - 1)) & 1 else f)
    check.bits("v_bfe_i32", out[5], sbfe, a, b, c)
    check.bits("v_bfi_b32", out[6], (a & b) | (~a & c), a, b, c)
    check.bits("v_alignbit_b32", out[7], [(((p << 32) | q) >> (r & 31)) & 0xFFFFFFFF
                                          for p, q, r in zip(A, B, C)], a, b, c)
    check.bits("v_lshl_add_u32", out[8], [((p << (q & 31)) + r) & 0xFFFFFFFF
                                          for p, q, r in zip(A, B, C)], a, b, c)
    check.bits("v_add3_u32", out[9], [(p + q + r) & 0xFFFFFFFF for p, q, r in zip(A, B, C)],
               a, b, c)
    check.bits("v_perm_b32", out[10], perm_b32(A, B, s), a, b, s)
    check.done()


def perm_b32(A, B, selects) -> list[int]:
    """v_perm_b32 per the ISA manual: each result byte picks a byte of {a, b} (0-3 b's, 4-7 a's),
    a sign fill (8-11: the top bit of b's byte 1 / 3, a's byte 1 / 3), zero (12) or 0xFF (13+)."""
    out = []
    for p, q, sel in zip(A, B, np.asarray(selects).astype(object)):
        pool = (int(p) << 32) | int(q)  # byte 0 = b's byte 0, byte 4 = a's byte 0
        word = 0
        for i in range(4):
            k = (int(sel) >> (8 * i)) & 0xFF
            if k < 8:
                byte = (pool >> (8 * k)) & 0xFF
            elif k < 12:
                byte = 0xFF if (pool >> {8: 15, 9: 31, 10: 47, 11: 63}[k]) & 1 else 0
            else:
                byte = 0 if k == 12 else 0xFF
            word |= byte << (8 * i)
        out.append(word)
    return out


def _minmax_inputs(kind: str, rng):
    if kind == "f32":
        a = fill([np.nan, 1.0, 2.0, -np.inf, 5.0, np.nan, 3.0, -1.0], LANES, rng, -100, 100)
        b = fill([1.0, np.nan, 1.0, 7.0, np.inf, np.nan, 3.0, -2.0], LANES, rng, -100, 100)
        c = fill([2.0, 3.0, np.nan, 0.5, -5.0, 4.0, 3.0, -3.0], LANES, rng, -100, 100)
        return a, b, c
    a = u32([-5, 0x7FFFFFFF, 0x80000000, 7, 7] + list(rng.integers(0, 2**32, LANES - 5)))
    b = u32([3, 0x80000000, 0, 7, -7] + list(rng.integers(0, 2**32, LANES - 5)))
    c = u32([0, 1, -1, 7, 0] + list(rng.integers(0, 2**32, LANES - 5)))
    return a, b, c


def _ieee_min3(a, b, c):
    return np.fmin(np.fmin(a, b), c)


def _ieee_max3(a, b, c):
    return np.fmax(np.fmax(a, b), c)


def _med3_f32(a, b, c):
    # MI300 / Vega manuals: a NaN operand gives min3 (IEEE mode: the NaN ignored), else the median
    with np.errstate(invalid="ignore"):
        median = np.median(np.stack([a, b, c]), axis=0).astype(F32)
    nan = np.isnan(a) | np.isnan(b) | np.isnan(c)
    return np.where(nan, _ieee_min3(a, b, c), median)


@pytest.mark.parametrize("op", ["min3_f32", "max3_f32", "med3_f32", "min3_i32", "max3_i32",
                                "med3_i32"])
def test_vop3_three_operand_min_max(gpu, tmp_path, op):
    a, b, c = _minmax_inputs(op[-3:], np.random.default_rng(53))
    check = Check(f"vop3_{op}")
    out = run(gpu, tmp_path, "vop3", f"vop3_{op}", [a, b, c], 1, check)
    if op.endswith("f32"):
        want = {"min3": _ieee_min3, "max3": _ieee_max3, "med3": _med3_f32}[op[:4]](a, b, c)
        check.f32(f"v_{op}", out[0], want, a, b, c)
    else:
        stack = np.stack([_s32(a), _s32(b), _s32(c)])
        want = {"min3": stack.min(0), "max3": stack.max(0), "med3": np.median(stack, 0)}[op[:4]]
        check.bits(f"v_{op}", out[0], want.astype(np.int64), a, b, c)
    check.done()


def test_vop3_f32_division_sequence(gpu, tmp_path):
    rng = np.random.default_rng(54)
    pairs = [(3.4e38, 0.5), (1e-38, 1e-10), (0.0, 0.0), (1.0, 0.0), (-1.0, 0.0), (1.0, -0.0),
             (np.inf, np.inf), (1e-38, 1e3), (1.0, 3.0), (2.0, 3.0), (1e30, 1e-30), (1e-30, 1e30),
             (5e-39, 3.0), (1.0, 1e-39), (1.0, 3e-39), (0.0, 5.0), (-0.0, 5.0), (5.0, np.inf),
             (np.inf, 5.0), (np.nan, 1.0), (1.0, np.nan), (-7.0, 2.0), (1e-45, 2.0),
             (3e-45, 2.0), (3.4028235e38, 3.4028235e38), (1.1754944e-38, 3.0), (6.0, -3.0),
             (1.0, 1e38), (1e-7, 3e37), (2.0**127, 2.0**-126)]
    n = np.asarray([p[0] for p in pairs], F32)
    d = np.asarray([p[1] for p in pairs], F32)
    count = LANES - len(pairs)
    signs = rng.choice([-1.0, 1.0], (2, count))
    n = np.concatenate([n, (signs[0] * 2.0 ** rng.uniform(-140, 127, count)).astype(F32)])
    d = np.concatenate([d, (signs[1] * 2.0 ** rng.uniform(-140, 127, count)).astype(F32)])
    check = Check("vop3_div")
    out = run(gpu, tmp_path, "vop3", "vop3_div", [n, d], 1, check)
    with np.errstate(all="ignore"):
        check.f32("n / d (v_div_scale, v_rcp, v_fma, v_div_fmas, v_div_fixup)", out[0], n / d, n, d)
    check.done()


# ---- 6. VOPC -------------------------------------------------------------------------------------

def f32_class(x: np.ndarray) -> np.ndarray:
    """The v_cmp_class bit of each value: 0 signalling NaN, 1 quiet NaN, 2 -inf, 3 -normal,
    4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf."""
    bits = x.view(U32)
    negative = (bits >> 31) == 1
    exponent, mantissa = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    return np.select(
        [np.isnan(x) & ((mantissa >> 22) == 0), np.isnan(x), np.isinf(x) & negative,
         np.isinf(x), (exponent == 0) & (mantissa == 0) & negative,
         (exponent == 0) & (mantissa == 0),
         (exponent == 0) & negative, exponent == 0, negative],
        [0, 1, 2, 9, 5, 6, 4, 7, 3], 8)


def test_vopc_compares(gpu, tmp_path):
    rng = np.random.default_rng(61)
    snan = np.asarray(0x7F800001, U32).view(F32)
    a = fill([np.nan, 1.0, np.nan, 1.0, 2.0, 0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-40, 3.0, -5.0,
              np.inf, 7.5, 7.5], LANES, rng, -4, 4)
    b = fill([1.0, np.nan, np.nan, 2.0, 1.0, -0.0, 0.0, np.inf, np.inf, 1e-40, 1e-40, 3.0, -4.0,
              np.nan, 7.5, -7.5], LANES, rng, -4, 4)
    a[32:48] = np.round(a[32:48])  # some equal pairs among the random ones
    b[32:48] = np.round(a[32:48] * rng.choice([1, -1, 0.5], 16)).astype(F32)
    # class: the value in a, the mask in m (a few lanes get an sNaN / a single class bit)
    a[16:20] = [snan, snan, np.nan, -np.nan]
    m = u32([1 << int(k) for k in rng.integers(0, 10, 32)] + list(rng.integers(0, 1024, 32)))
    m[16:20] = [1, 2, 1, 2]  # sNaN / qNaN told apart by mask bits 0 and 1
    i = u32([0, -1, 5, 0x80000000, 0x7FFFFFFF, 7, -7, 3] + list(rng.integers(-4, 4, 56)))
    j = u32([0, 1, -5, 0x7FFFFFFF, 0x80000000, 7, 7, 3] + list(rng.integers(-4, 4, 56)))
    u64 = lambda values: np.asarray([int(v) % 2**64 for v in values], np.uint64)  # noqa: E731
    x = u64([0, -1, 2**63, 2**32, 5, 2**63 - 1] + list(rng.integers(-3, 3, 58)))
    y = u64([0, 1, 2**63 - 1, 2**32 - 1, 5, 2**63] + list(rng.integers(-3, 3, 58)))
    check = Check("vopc")
    out = run(gpu, tmp_path, "vopc", "vopc", [a, b, i, j, x, y, m], 29, check)
    with np.errstate(invalid="ignore"):
        unordered = np.isnan(a) | np.isnan(b)
        f32 = {"eq": a == b, "lt": a < b, "gt": a > b, "le": a <= b, "ge": a >= b,
               "lg": (a < b) | (a > b), "neq": ~(a == b), "nlt": ~(a < b), "ngt": ~(a > b),
               "nle": ~(a <= b), "nge": ~(a >= b), "nlg": ~((a < b) | (a > b)),
               "u": unordered, "o": ~unordered}
        for col, (name, want) in enumerate(f32.items()):
            if col >= 16:
                break
            valid = (np.arange(LANES) < 16) | (np.arange(LANES) >= 20)  # 16-19 hold sNaNs
            check.bits(f"v_cmp_{name}_f32", out[col][valid], want[valid].astype(int),
                       a[valid], b[valid])
        check.bits("v_cmp_gt_f32_e64 |a|, -b", out[14][valid],
                   (np.abs(a) > -b)[valid].astype(int), a[valid], b[valid])
    check.bits("v_cmp_class_f32", out[15], (m >> f32_class(a)) & 1, a, m)
    si, sj = i.view(np.int32), j.view(np.int32)
    ints = [("lt_i32", si < sj), ("lt_u32", i < j), ("ge_i32", si >= sj), ("ge_u32", i >= j),
            ("eq_u32", i == j), ("ne_i32", si != sj), ("gt_i32", si > sj), ("le_u32", i <= j)]
    for col, (name, want) in enumerate(ints):
        check.bits(f"v_cmp_{name}", out[16 + col], want.astype(int), i, j)
    sx, sy = x.view(np.int64), y.view(np.int64)
    longs = [("lt_i64", sx < sy), ("lt_u64", x < y), ("eq_u64", x == y), ("ge_i64", sx >= sy),
             ("gt_u64 (e64)", x > y)]
    for col, (name, want) in enumerate(longs):
        check.bits(f"v_cmp_{name}", out[24 + col], want.astype(int), x, y)
    check.done()


# ---- 7. VOP3P ------------------------------------------------------------------------------------

def test_vop3p_packed(gpu, tmp_path):
    cols = [quarters_(LANES, seed) for seed in range(71, 77)]
    a_lo, a_hi, b_lo, b_hi, c_lo, c_hi = cols
    rng = np.random.default_rng(77)
    p = u32([0xFFFF0001, 0x80008000, 0x7FFF0000] + list(rng.integers(0, 2**32, LANES - 3)))
    q = u32([0x0001FFFF, 0x80008000, 0x00017FFF] + list(rng.integers(0, 2**32, LANES - 3)))
    check = Check("vop3p")
    out = run(gpu, tmp_path, "vop3p", "vop3p", [*cols, p, q], 14, check)
    check.f32("v_pk_fma_f32 (lo)", out[0], fma32(a_lo, b_lo, c_lo))
    check.f32("v_pk_fma_f32 (hi)", out[1], fma32(a_hi, b_hi, c_hi))
    check.f32("v_pk_fma_f32 op_sel/neg (lo = -a.hi * b.lo + c.lo)", out[2],
              fma32(-a_hi, b_lo, c_lo))
    check.f32("v_pk_fma_f32 op_sel/neg (hi = a.lo * b.hi - c.hi)", out[3],
              fma32(a_lo, b_hi, -c_hi))
    check.f32("v_pk_mul_f32 (lo = a.lo * b.hi)", out[4], a_lo * b_hi)
    check.f32("v_pk_mul_f32 (hi = -a.hi * -b.lo)", out[5], (-a_hi) * (-b_lo))
    check.f32("v_pk_add_f32 (lo = a.lo - b.lo)", out[6], a_lo - b_lo)
    check.f32("v_pk_add_f32 (hi = a.lo + b.hi)", out[7], a_lo + b_hi)
    lo, hi = lambda v: v & 0xFFFF, lambda v: v >> 16  # noqa: E731
    check.bits("v_pk_add_u16", out[8],
               ((lo(p) + lo(q)) & 0xFFFF) | (((hi(p) + hi(q)) & 0xFFFF) << 16),
               p, q)
    check.bits("v_pk_add_u16 op_sel:[1,0] op_sel_hi:[0,1]", out[9],
               ((hi(p) + lo(q)) & 0xFFFF) | (((lo(p) + hi(q)) & 0xFFFF) << 16), p, q)
    check.f32("v_pk_mov_b32 op_sel:[1,0] (lo = a.hi)", out[10], a_hi)
    check.f32("v_pk_mov_b32 op_sel:[1,0] (hi = b.lo)", out[11], b_lo)
    check.f32("v_pk_mov_b32 op_sel:[0,1] (lo = a.lo)", out[12], a_lo)
    check.f32("v_pk_mov_b32 op_sel:[0,1] (hi = b.hi)", out[13], b_hi)
    check.done()


def quarters_(n: int, seed: int) -> np.ndarray:
    """Multiples of 1/4 in [-16, 16): products and sums stay exact in f32."""
    return (np.random.default_rng(seed).integers(-64, 64, n) / 4).astype(F32)


# ---- 8. DPP and SDWA -----------------------------------------------------------------------------

def dpp_expected(x, y, old, source, op=lambda s, b: s, row_mask=0xF, bank_mask=0xF, bound=False):
    """GCN3 / Vega ISA manual DPP: lane l reads src0 from lane source(l) (None: out of range);
    rows off in row_mask and banks (lane bits 3:2) off in bank_mask do not write; an invalid
    source writes with src0 = 0 under bound_ctrl, else not at all."""
    out = []
    for lane in range(LANES):
        if not (row_mask >> (lane // 16)) & 1 or not (bank_mask >> ((lane >> 2) & 3)) & 1:
            out.append(int(old[lane]))
            continue
        src = source(lane)
        if src is None and not bound:
            out.append(int(old[lane]))
            continue
        out.append(op(0 if src is None else int(x[src]), int(y[lane])) & 0xFFFFFFFF)
    return out


def _byte(v, k):
    return (v >> (8 * k)) & 0xFF


def _word(v, k):
    return (v >> (16 * k)) & 0xFFFF


def _sext(v, bits):
    v = np.asarray(v, np.int64)
    return np.where(v >> (bits - 1) & 1, v - (1 << bits), v)


def test_dpp_and_sdwa(gpu, tmp_path):
    rng = np.random.default_rng(81)
    x = u32(rng.integers(0, 2**32, LANES))
    y = u32(rng.integers(0, 2**32, LANES))
    old = u32([0xDEAD0000 | lane for lane in range(LANES)])
    check = Check("dpp_sdwa")
    out = run(gpu, tmp_path, "dpp", "dpp_sdwa", [x, y, old], 17, check)
    quad = lambda sel: lambda l: (l & ~3) + sel[l & 3]  # noqa: E731
    cases = [
        ("quad_perm:[3,2,1,0]", dict(source=quad([3, 2, 1, 0]))),
        ("quad_perm:[1,1,0,2] bank_mask:0x5", dict(source=quad([1, 1, 0, 2]), bank_mask=0x5)),
        ("row_shl:1", dict(source=lambda l: l + 1 if l % 16 + 1 < 16 else None)),
        ("row_shr:3 bound_ctrl", dict(source=lambda l: l - 3 if l % 16 >= 3 else None, bound=True)),
        ("row_ror:5", dict(source=lambda l: (l & ~15) + (l % 16 - 5) % 16)),
        ("row_mirror", dict(source=lambda l: (l & ~15) + 15 - l % 16)),
        ("row_half_mirror", dict(source=lambda l: (l & ~7) + 7 - l % 8)),
        ("row_bcast:15 row_mask:0xa", dict(source=lambda l: (l // 16) * 16 - 1 if l >= 16 else None,
                                           row_mask=0xA)),
        ("row_bcast:31 row_mask:0xc", dict(source=lambda l: 31 if l >= 32 else None, row_mask=0xC)),
        ("v_add_u32_dpp row_shr:1 bound_ctrl",
         dict(source=lambda l: l - 1 if l % 16 >= 1 else None, bound=True, op=lambda s, b: s + b)),
        ("v_sub_u32_dpp row_mirror row_mask:0x5 bank_mask:0xe",
         dict(source=lambda l: (l & ~15) + 15 - l % 16, row_mask=0x5, bank_mask=0xE,
              op=lambda s, b: s - b)),
    ]
    for col, (name, kwargs) in enumerate(cases):
        check.bits(f"DPP {name}", out[col], dpp_expected(x, y, old, **kwargs), x, y)
    X, Y, O = (v.astype(np.int64) for v in (x, y, old))
    check.bits("SDWA v_mov_b32 dst_sel:WORD_1 UNUSED_PRESERVE src0_sel:BYTE_2", out[11],
               (O & 0xFFFF) | (_byte(X, 2) << 16), x)
    check.bits("SDWA v_mov_b32 dst_sel:BYTE_1 UNUSED_PAD src0_sel:WORD_1", out[12],
               (_word(X, 1) & 0xFF) << 8, x)
    check.bits("SDWA v_add_u32 sext(BYTE_0) + WORD_1", out[13],
               (_sext(_byte(X, 0), 8) + _word(Y, 1)) & 0xFFFFFFFF, x, y)
    diff = (_byte(X, 3) - _byte(Y, 1)) & 0xFFFF
    check.bits("SDWA v_sub_u32 BYTE_3 - BYTE_1 dst_sel:WORD_0 UNUSED_SEXT", out[14],
               _sext(diff, 16) & 0xFFFFFFFF, x, y)
    check.f32("SDWA v_cvt_f32_i32 sext(BYTE_1)", out[15], _sext(_byte(X, 1), 8).astype(F32), x)
    check.bits("SDWA v_and_b32 WORD_0 & WORD_1 dst_sel:BYTE_2 UNUSED_PRESERVE", out[16],
               (O & ~0xFF0000) | (((_word(X, 0) & _word(Y, 1)) & 0xFF) << 16), x, y)
    check.done()


# ---- 9. DS / LDS ---------------------------------------------------------------------------------

def test_lds_reads_and_writes(gpu, tmp_path):
    rng = np.random.default_rng(91)
    cols = [u32(rng.integers(0, 2**32, LANES)) for _ in range(9)]
    x, y0, y1, z0, z1, z2, z3, p, q = cols
    x[:8] = u32([0x80FF7F01, 0x00008000, 0xFFFFFFFF, 0x7F807F80, 0, 1, 0x8000FF00, 0x12345678])
    check = Check("ds_ops")
    out = run(gpu, tmp_path, "ds", "ds_ops", cols, 20, check)
    mirror = np.arange(LANES)[::-1]
    for col, (name, want) in enumerate([
            ("ds_write_b32 / ds_read_b32", x), ("ds_read_b64 (lo)", y0), ("ds_read_b64 (hi)", y1),
            ("ds_read2_b32 (address = destination) offset0", p), ("ds_read2_b32 offset1", q),
            ("ds_read2_b64 offset0 (lo)", y0), ("ds_read2_b64 offset0 (hi)", y1),
            ("ds_read2_b64 offset1 (lo)", z0), ("ds_read2_b64 offset1 (hi)", z1)]):
        check.bits(name, out[col], want[mirror])
    lanes = np.arange(LANES)
    check.bits("ds_read_u8", out[9], x.view(np.uint8)[lanes])
    check.bits("ds_read_i8", out[10], x.view(np.int8)[64 + lanes].astype(np.int64))
    check.bits("ds_read_u16", out[11], x.view(np.uint16)[lanes])
    check.bits("ds_read_i16", out[12], x.view(np.int16)[64 + lanes].astype(np.int64))
    check.bits("ds_write_b8 / ds_read_u8", out[13], (x & 0xFF)[mirror])
    check.bits("ds_write_b16 / ds_read_u16", out[14], (x & 0xFFFF)[mirror])
    for i, z in enumerate((z0, z1, z2, z3)):
        check.bits(f"ds_write_b128 / ds_read_b128 [{i}]", out[16 + i], z[mirror])
    check.done()


def test_lds_exchange_across_four_waves_with_barriers(gpu, tmp_path):
    rng = np.random.default_rng(92)
    values = u32(rng.integers(0, 2**32, 256))
    check = Check("ds_barrier")
    out = run(gpu, tmp_path, "ds", "ds_barrier", [values], 2, check, items=256, workgroup=256)
    t = np.arange(256)
    sums = (values[255 - t].astype(np.uint64) + values[(t + 64) % 256]) & 0xFFFFFFFF
    check.bits("after s_barrier: in[255-t] + in[(t+64)%256]", out[0], sums)
    check.bits("after two more s_barrier: sum[255-t]", out[1], sums[255 - t])
    check.done()


# ---- 10. MUBUF / 11. GLOBAL and FLAT -------------------------------------------------------------

def _memory_words(seed: int) -> np.ndarray:
    words = u32(np.random.default_rng(seed).integers(0, 2**32, 256))
    words[25:32] = u32([0x807F80FF, 0x0180FF7F, 0xFFFF8000, 0x7FFF0001, 0x80000080, 0, 0xFFFFFFFF])
    return words


def test_mubuf_loads_and_stores(gpu, tmp_path):
    D = _memory_words(101)
    check = Check("mubuf")
    out = run(gpu, tmp_path, "mubuf", "mubuf", [D[0:64], D[64:128], D[128:192], D[192:256]], 24,
              check)
    L = np.arange(LANES)
    raw_bytes = D.view(np.uint8)
    check.bits("buffer_load_dword offen, num_records 216 (past it: 0)",
               out[0], np.where(4 * L + 4 <= 216, D[L], 0))
    check.bits("buffer_load_dword offen soffset:32 offset:16", out[1], D[L + 12])
    check.bits("buffer_load_dwordx2 [0]", out[2], D[2 * L])
    check.bits("buffer_load_dwordx2 [1]", out[3], D[2 * L + 1])
    for i in range(4):
        check.bits(f"buffer_load_dwordx4 [{i}]", out[4 + i], D[4 * L + i])
    check.bits("buffer_load_ubyte offset:100", out[8], raw_bytes[100 + L])
    check.bits("buffer_load_sbyte offset:100", out[9],
               raw_bytes.view(np.int8)[100 + L].astype(np.int64))
    check.bits("buffer_load_ushort offset:6", out[10], D.view(np.uint16)[3 + L])
    check.bits("buffer_load_sshort offset:6", out[11], D.view(np.int16)[3 + L].astype(np.int64))
    check.bits("buffer_load_dword idxen stride 12 offset:4 (index >= 40: 0)", out[12],
               np.where(L < 40, D[np.minimum(3 * L + 1, 255)], 0))
    check.bits("buffer_load_dword idxen offen (offset 8)", out[13],
               np.where(L < 40, D[np.minimum(3 * L + 2, 255)], 0))
    check.bits("buffer_store_dword num_records 200 (past it: dropped)", out[14],
               np.where(4 * L + 4 <= 200, D[L + 12], SENTINEL))
    halves = np.full(128, 0xA5A5, np.uint16)
    halves[:64] = raw_bytes[100 + L]
    check.bits("buffer_store_short", out[15], halves.view(U32))
    check.bits("buffer_store_dwordx2", out[16:18].ravel(), D[:128])
    stored = np.full(256, 0xA5, np.uint8)
    stored[:64] = raw_bytes[100 + L]
    check.bits("buffer_store_byte", out[18], stored.view(U32))
    check.bits("buffer_store_dword soffset + offset", out[19], np.where(4 * L + 4 <= 216, D[L], 0))
    check.bits("buffer_store_dwordx4", out[20:24].ravel(), D)
    check.done()


def test_global_and_flat_loads_and_stores(gpu, tmp_path):
    D = _memory_words(111)
    check = Check("global_flat")
    out = run(gpu, tmp_path, "global", "global_flat", [D[0:64], D[64:128], D[128:192], D[192:256]],
              21, check)
    L = np.arange(LANES)
    raw_bytes = D.view(np.uint8)
    check.bits("global_load_dword saddr offset:-512", out[0], D[L])
    check.bits("global_load_dwordx2 vaddr [0]", out[1], D[2 * L])
    check.bits("global_load_dwordx2 vaddr [1]", out[2], D[2 * L + 1])
    for i in range(4):
        check.bits(f"global_load_dwordx4 [{i}]", out[3 + i], D[4 * L + i])
    check.bits("global_load_ubyte offset:-200", out[7], raw_bytes[100 + L])
    check.bits("global_load_sbyte offset:-200", out[8],
               raw_bytes.view(np.int8)[100 + L].astype(np.int64))
    check.bits("global_load_ushort offset:-506", out[9], D.view(np.uint16)[3 + L])
    check.bits("global_load_sshort offset:-506", out[10], D.view(np.int16)[3 + L].astype(np.int64))
    check.bits("flat_load_dword offset:4", out[11], D[2 * L + 1])
    halves = np.full(128, 0xA5A5, np.uint16)
    halves[:64] = D.view(np.uint16)[3 + L]
    check.bits("global_store_short", out[12], halves.view(U32))
    stored = np.full(256, 0xA5, np.uint8)
    stored[:64] = raw_bytes[100 + L]
    check.bits("global_store_byte saddr", out[13], stored.view(U32))
    check.bits("global_store_dwordx2 offset:-256", out[14:16].ravel(), D[:128])
    check.bits("global_store_dwordx4 saddr", out[16:20].ravel(), D)
    check.bits("flat_store_dword", out[20], D[2 * L + 1])
    check.done()


# ---- 12. MFMA ------------------------------------------------------------------------------------

def _c_layout(D: np.ndarray) -> np.ndarray:
    """16x16 D -> (4 registers, 64 lanes): D[i][j] in lane j + 16*(i//4), register i % 4."""
    out = np.zeros((4, LANES), D.dtype)
    for i in range(16):
        for j in range(16):
            out[i % 4, j + 16 * (i // 4)] = D[i, j]
    return out


def test_mfma(gpu, tmp_path):
    rng = np.random.default_rng(121)
    A = rng.integers(-8, 8, (16, 4)).astype(F32)
    B = rng.integers(-8, 8, (4, 16)).astype(F32)
    C = rng.integers(-50, 50, (16, 16)).astype(F32)
    A8 = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    B8 = rng.integers(-128, 128, (32, 16)).astype(np.int8)
    C8 = rng.integers(-2**20, 2**20, (16, 16)).astype(np.int32)
    a_col = np.asarray([A[l % 16, l // 16] for l in range(LANES)], F32)
    b_col = np.asarray([B[l // 16, l % 16] for l in range(LANES)], F32)
    a8 = np.stack([A8[l % 16, 8 * (l // 16):8 * (l // 16) + 8] for l in range(LANES)])
    b8 = np.stack([B8[8 * (l // 16):8 * (l // 16) + 8, l % 16] for l in range(LANES)])
    inputs = [a_col, b_col, *_c_layout(C), a8.ravel().view(U32), b8.ravel().view(U32),
              *_c_layout(C8).view(U32)]
    check = Check("mfma")
    out = run(gpu, tmp_path, "mfma", "mfma", inputs, 16, check)
    D = A.astype(np.float64) @ B + C  # small integers: exact
    D8 = A8.astype(np.int64) @ B8.astype(np.int64) + C8
    check.f32("v_mfma_f32_16x16x4_f32", out[0:4].ravel(), _c_layout(D.astype(F32)).ravel())
    check.f32("v_mfma_f32_16x16x4_f32 (D = C)", out[4:8].ravel(), _c_layout(D.astype(F32)).ravel())
    check.bits("v_mfma_i32_16x16x32_i8", out[8:12].ravel(), _c_layout(D8 & 0xFFFFFFFF).ravel())
    check.f32("v_mfma_f32_16x16x4_f32 (D overlaps A)", out[12:16].ravel(),
              _c_layout((A.astype(np.float64) @ B + D).astype(F32)).ravel())
    check.done()


# ---- 13. the descriptor's f32 denormal mode --------------------------------------------------

def _flushed(values: np.ndarray) -> np.ndarray:
    """f32 denormals replaced by a zero of their sign."""
    values = np.asarray(values, F32)
    return np.where(np.abs(values) < np.finfo(F32).tiny, np.copysign(F32(0), values), values)


@pytest.mark.parametrize("kernel", ["denorm_keep", "denorm_flush"])
def test_denormal_mode_from_the_descriptor(gpu, tmp_path, kernel):
    """FLOAT_DENORM_MODE_32 = 3 keeps f32 denormals; = 0 flushes them, read and written."""
    x = F32([1e-40, -1e-40, 1e-38, 2e-38, 1.0, -3e-39, 0.0, 1e-45] + [1.5] * (LANES - 8))
    y = F32([1e-40, 1e-40, 1e-38, -1.5e-38, 1e-40, 2.0, -1e-40, 1.0] + [0.25] * (LANES - 8))
    check = Check(kernel)
    out = run(gpu, tmp_path, "denorm", kernel, [x, y], 5, check)
    flush = kernel == "denorm_flush"
    a, b = (_flushed(x), _flushed(y)) if flush else (x, y)
    result = _flushed if flush else (lambda v: np.asarray(v, F32))
    with np.errstate(all="ignore"):
        maximum = np.where((a == 0) & (b == 0), np.where(np.signbit(a), b, a), np.fmax(a, b))
        check.f32("v_mul_f32 1.0, x", out[0], result(a * F32(1)), x)
        check.f32("v_add_f32 x, y", out[1], result(a + b), x, y)
        check.f32("v_fma_f32 x, y, 0", out[2], result(fma32(a, b, np.zeros_like(a))), x, y)
        check.f32("v_max_f32 x, y", out[3], result(maximum), x, y)
        check.f32("v_mul_f32 2^-10, x", out[4], result(a * F32(2.0**-10)), x)
    check.done()

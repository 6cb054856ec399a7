"""softhsa's AMDGPU interpreter (tests/softhsa/src/isa.c) on gfx1100 (RDNA3 / GFX11, wave32):
hand-written kernels (kernels/gfx1100_<family>.s, assembled by llvm-mc-19 -mcpu=gfx1100 and linked
by ld.lld-19, `.amdhsa_wavefront_size32 1`, metadata `.wavefront_size: 32`) dispatched on a
softhsa machine whose GPU agent is gfx1100 with 32-lane waves, SOFTHSA_EXECUTE=1. What they store
is compared with numpy / Python integers / fractions, never with the interpreter's own output
(the `Check` collector of test_isa_families: every mismatch is reported, a queue error fails the
test while what was stored before it is still compared). The kernels test what GFX11 changes
from GFX9:

1. gfx1100_wave32.s `masks`: 32-bit EXEC / VCC (exec_lo, vcc_lo); v_cmpx_*_e32 / _e64 write EXEC
   only; s_and_saveexec_b32 / s_and_not1_saveexec_b32 / s_or_b32 exec_lo; v_cndmask_b32 with
   vcc_lo and with an SGPR mask; v_add_co_u32 (SGPR carry) + v_add_co_ci_u32 chains (e64 and e32),
   v_sub_co_ci_u32; v_mad_u64_u32 with a `null` carry; run as one full wave and as a 64-item
   workgroup of 45 items (the second wave partial: only 13 lanes on).
2. gfx1100_salu.s `salu`: SOP2/SOPK/SOP1/SOPC with GFX11 opcodes, s_delay_alu / s_nop between
   them, M0 and NULL as destinations, branches on SCC / VCCZ / EXECZ in wave32.
3. gfx1100_smem.s `smem`: s_load_b32/b64/b128/b256/b512, immediate and SGPR (+ immediate) offsets.
4. gfx1100_vop_t16.s `vop_t16`: true16 VOP1 / VOP2 / VOPC operands (v1.l / v1.h) in the 32-bit
   encodings: a write to one half keeps the other (encoded with .long where llvm-mc-19 has only
   the fake16 form, see the kernel).
5. gfx1100_vop3.s `vop3`: VOP3 literals, abs / neg, op_sel on 16-bit ops, three-operand integer
   ops, v_maxmin_f32; `vop3_div`: clang-19's gfx1100 f32 division sequence, bit-exact.
6. gfx1100_vopd.s `vopd`: VOPD dual issue, including pairs where one half reads a register the
   other writes (both read before either writes).
7. gfx1100_vop3p.s `vop3p`: v_fma_mix_f32 / mixlo / mixhi, v_pk_* 16-bit; `wmma`:
   v_wmma_i32_16x16x16_iu8 (signedness by neg_lo) and v_wmma_f32_16x16x16_f16 against numpy
   matmul. Wave32 operand layout (RDNA3 ISA manual, GPUOpen's "How to accelerate AI applications
   on RDNA 3 using WMMA"): A row i in lanes i and i + 16 (16 elements packed in order in the lane's
   VGPRs: 4 VGPRs of int8, 8 VGPRs of f16), B column j in lanes j and j + 16 (element k of the
   column at position k), C / D 16x16 32-bit: D[r][c] in VGPR r / 2 of lane c + 16 * (r % 2).
8. gfx1100_dpp.s `dpp`: DPP16 (quad_perm, row_shl/shr/ror, row_mirror, row_half_mirror,
   row_share, row_xmask, bound_ctrl, row / bank masks) and DPP8 on v_mov_b32 / v_add_*; the
   cross-row v_permlanex16_b32 and v_permlane16_b32.
9. gfx1100_ds.s `ds_ops` (GFX11 DS names, 2addr forms, d16 loads), `ds_barrier` (4 waves of a
   128-item workgroup exchanging through LDS across s_barrier).
10. gfx1100_mem.s `mubuf` (GFX11 buffer resources, b32..b128, u8/i8/u16/i16, b8/b16 stores,
    offen, idxen, soffset, num_records clipping), `global` (saddr, `off` with 64-bit VGPR
    addresses, negative offsets, global_load_d16_b16 / d16_hi_b16 keeping the other half).
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from hsa_ffi import constants as C
from tests.softhsa.kernels import KERNELS_DIR
from tests.softhsa.test_isa import Array, assemble, dispatch
from tests.softhsa.test_isa import pytestmark as LLVM_TOOLS
from tests.softhsa.test_isa_families import Check, fill, fma32, fma64, fma_inputs, perm_b32, u32

pytestmark = LLVM_TOOLS  # the toolchain these kernels need (llvm-mc-19, ld.lld-19)

WAVE = 32
WIDTH = 64  # dwords in a column of in / out (a column holds up to 64 work-items)
SENTINEL = 0xA5A5A5A5
F32, F16, U32 = np.float32, np.float16, np.uint32
M32 = 0xFFFFFFFF


def assemble11(source: Path, out_dir: Path) -> Path:
    return assemble(source, out_dir, "gfx1100")


def test_the_agent_is_gfx1100_wave32(gpu11):
    hsa, agent, _, _ = gpu11
    size = hsa.ffi.new("uint32_t*")
    hsa.hsa.call("hsa_agent_get_info", agent, C.HSA_AGENT_INFO_WAVEFRONT_SIZE, size)
    assert size[0] == 32


def run(gpu, tmp_path: Path, family: str, kernel: str, inputs: list[np.ndarray], out_words: int,
        check: Check, items: int = WAVE, workgroup: int = WAVE, pad: bool = True) -> np.ndarray:
    """Dispatch `kernel` of kernels/gfx1100_<family>.s over `items` work-items, kernargs {in, out}.
    `in`: `inputs` laid end to end, each padded to a 64-dword column when `pad` (a column of 32 or
    64 per-lane dwords, or a 64-bit column of 32 lanes); `out`: `out_words` dwords preset to
    SENTINEL, returned as uint32. A queue error is a failure of `check`; what the kernel stored
    before it is still compared."""
    hsa, _, _, pool = gpu
    words = []
    for column in inputs:
        w = np.ascontiguousarray(column).view(U32).ravel()
        if pad and len(w) % WIDTH:
            w = np.concatenate([w, np.zeros(WIDTH - len(w) % WIDTH, U32)])
        words.append(w)
    data = np.concatenate(words) if words else np.zeros(1, U32)
    source = Array(hsa, pool, data)
    out = Array(hsa, pool, np.full(out_words, SENTINEL, U32))
    hsaco = assemble11(KERNELS_DIR / f"gfx1100_{family}.s", tmp_path)
    errors: list = []
    ok = dispatch(gpu, hsaco, kernel, struct.pack("<QQ", source.address, out.address), items,
                  workgroup, errors=errors, timeout_ns=5_000_000_000)
    if not ok:
        check.failures.append(f"the queue stopped with error {errors} (41: aperture violation, "
                              "42: illegal instruction; stderr names the instruction)")
    return out.array.copy()


def columns(out: np.ndarray, count: int, lanes: int = WAVE) -> np.ndarray:
    """out as (count, lanes): column c, work-items 0..lanes-1."""
    return out[:count * WIDTH].reshape(count, WIDTH)[:, :lanes]


def rand_u32(rng, n: int = WAVE) -> np.ndarray:
    return rng.integers(0, 2**32, n, dtype=np.uint64).astype(U32)


def halves(lo, hi) -> np.ndarray:
    """u32 words from 16-bit low and high halves (any 16-bit dtype)."""
    lo = np.asarray(lo).view(np.uint16).astype(np.uint32)
    hi = np.asarray(hi).view(np.uint16).astype(np.uint32)
    return (lo | (hi << 16)).astype(U32)


def lo16(w) -> np.ndarray:
    return (np.asarray(w, U32) & 0xFFFF).astype(np.uint16)


def hi16(w) -> np.ndarray:
    return (np.asarray(w, U32) >> 16).astype(np.uint16)


def f16_of(bits16) -> np.ndarray:
    return np.asarray(bits16, np.uint16).view(F16)


def s32(v) -> np.ndarray:
    return np.asarray(v, U32).view(np.int32).astype(np.int64)


# ---- 1. wave32 masks -----------------------------------------------------------------------------

@pytest.mark.parametrize("items, workgroup", [(32, 32), (45, 64), (64, 64)])
def test_wave32_exec_and_vcc_masks(gpu11, tmp_path, items, workgroup):
    rng = np.random.default_rng(11)
    a_lo = u32([0, 1, 0xFFFFFFFF, 0x80000000, 5, 7, 0x7FFFFFFF, 0x40000000]
               + list(rng.integers(0, 2**32, 56)))
    b_lo = u32([0, 0xFFFFFFFF, 1, 0x7FFFFFFF, 7, 5, 0x80000000, 0x3FFFFFFF]
               + list(rng.integers(0, 2**32, 56)))
    a_hi = u32([0xFFFFFFFF, 0, 0xFFFFFFFF, 1] + list(rng.integers(0, 2**32, 60)))
    b_hi = u32([0, 0, 0, 0xFFFFFFFF] + list(rng.integers(0, 2**32, 60)))
    check = Check(f"masks ({items} items)")
    out = run(gpu11, tmp_path, "wave32", "masks", [a_lo, a_hi, b_lo, b_hi], 32 * WIDTH, check,
              items, workgroup)
    got = out[:32 * WIDTH].reshape(32, WIDTH)
    t = np.arange(WIDTH)
    live = t < items
    wave = t // WAVE

    def mask(cond) -> np.ndarray:
        """Per work-item: its wave's 32-bit mask of `cond` over the wave's live lanes."""
        bits = [sum(1 << (u - 32 * w) for u in range(32 * w, 32 * w + 32) if live[u] and cond[u])
                for w in (0, 1)]
        return np.asarray([bits[w] for w in wave], np.uint64)

    def col(k, label, want, *inputs):
        g = got[k][live]
        check.bits(label, g, np.asarray(want)[live], *(np.asarray(x)[live] for x in inputs))

    exec0 = mask(np.ones(WIDTH, bool))
    gt_u = a_lo > b_lo
    lt_i = s32(a_lo) < s32(b_lo)
    col(0, "exec_lo at entry", exec0)
    col(1, "v_cndmask_b32_e32 (vcc_lo = a >u b)", np.where(gt_u, a_lo, b_lo), a_lo, b_lo)
    col(2, "vcc_lo from v_cmp_gt_u32_e32", mask(gt_u), a_lo, b_lo)
    col(3, "v_cndmask_b32_e64 with an SGPR mask (a <i b)", np.where(lt_i, b_lo, a_lo), a_lo, b_lo)
    col(4, "SGPR mask from v_cmp_lt_i32_e64", mask(lt_i), a_lo, b_lo)
    col(5, "v_cmpx_gt_u32_e32: lanes left on", gt_u.astype(int), a_lo, b_lo)
    col(6, "exec_lo after v_cmpx_gt_u32_e32", mask(gt_u), a_lo, b_lo)
    col(7, "vcc_lo after v_cmpx_e32 (not written)", np.full(WIDTH, 0x5A5A0F0F), a_lo, b_lo)
    lit = s32(a_lo) < 0x40000000
    col(8, "v_cmpx_lt_i32_e64 a, 0x40000000: lanes left on", np.where(lit, 2, 0), a_lo)
    col(9, "exec_lo after v_cmpx_lt_i32_e64", mask(lit), a_lo)
    col(10, "s_and_saveexec_b32 (3) / s_and_not1_saveexec_b32 (4)",
        np.where(gt_u, 3, np.where(lt_i, 4, 0)), a_lo, b_lo)
    col(11, "s_and_saveexec_b32: saved EXEC", exec0)
    col(12, "s_and_not1_saveexec_b32: saved EXEC", mask(gt_u), a_lo, b_lo)
    A = a_lo.astype(object) | (a_hi.astype(object) << 32)
    B = b_lo.astype(object) | (b_hi.astype(object) << 32)
    total, diff = A + B, A - B
    lo = lambda v: [x & M32 for x in v]  # noqa: E731
    hi = lambda v: [(x >> 32) & M32 for x in v]  # noqa: E731
    col(13, "v_add_co_u32 (SGPR carry) lo", lo(total), a_lo, b_lo)
    col(14, "v_add_co_ci_u32_e64 hi", hi(total), a_hi, b_hi)
    col(15, "carry out of v_add_co_ci_u32_e64", [x >> 64 for x in total], a_hi, b_hi)
    col(16, "v_add_co_u32 (vcc_lo) lo", lo(total), a_lo, b_lo)
    col(17, "v_add_co_ci_u32_e32 hi", hi(total), a_hi, b_hi)
    col(18, "carry out of v_add_co_ci_u32_e32 (vcc_lo)", [x >> 64 for x in total], a_hi, b_hi)
    col(19, "v_sub_co_u32 lo", lo(diff), a_lo, b_lo)
    col(20, "v_sub_co_ci_u32_e64 hi", hi(diff), a_hi, b_hi)
    col(21, "borrow out of v_sub_co_ci_u32_e64", [int(x < 0) for x in diff], a_hi, b_hi)
    mad = [p * q + r for p, q, r in zip(a_lo.astype(object), a_hi.astype(object), B)]
    col(22, "v_mad_u64_u32 null carry (lo)", lo(mad), a_lo, a_hi, b_lo)
    col(23, "v_mad_u64_u32 null carry (hi)", hi(mad), a_lo, a_hi, b_hi)
    col(24, "v_mad_u64_u32 SGPR carry (lo)", lo(mad), a_lo, a_hi, b_lo)
    col(25, "v_mad_u64_u32 SGPR carry (hi)", hi(mad), a_lo, a_hi, b_hi)
    col(26, "v_mad_u64_u32 carry out", [x >> 64 for x in mad], a_lo, a_hi, b_hi)
    col(27, "v_readfirstlane_b32 (the wave's first live lane)", a_lo[32 * wave], a_lo)
    col(28, "s_bcnt1_i32_b32 vcc_lo", [bin(int(m)).count("1") for m in mask(gt_u)])
    dead = ~live
    if dead.any():  # lanes past `items` are off: they store nothing
        check.bits("columns of lanes past the grid (untouched)", got[:29, dead].ravel(),
                   np.full(29 * dead.sum(), SENTINEL))
    check.done()


# ---- 2. SALU / 3. SMEM ---------------------------------------------------------------------------

def test_scalar_alu(gpu11, tmp_path):
    x = [0xFFFFFFF0, 0x12345678, 0x00000020, 0x80000001, 0xFFFFFFF9, 5, 0xDEADBEEF, 0x00F0F00F]
    check = Check("salu")
    got = run(gpu11, tmp_path, "salu", "salu", [np.asarray(x, U32)], 64, check)
    s = lambda v: v - (1 << 32) if v & 0x80000000 else v  # noqa: E731
    M64 = (1 << 64) - 1
    want = {}
    total = ((x[6] << 64) | (x[1] << 32) | x[0]) + ((x[7] << 64) | (x[3] << 32) | x[2])
    want.update({0: total & M32, 1: (total >> 32) & M32, 2: (total >> 64) & M32,
                 3: int(x[0] + x[2] > M32)})
    want[4] = (s(x[4]) * s(x[6])) & M32
    want[5] = (x[6] * x[1]) >> 32
    want[6] = ((s(x[4]) * s(x[6])) >> 32) & M32
    p01, p23 = (x[1] << 32) | x[0], (x[3] << 32) | x[2]
    sp23 = p23 - (1 << 64) if p23 >> 63 else p23
    for k, v in ((7, (p01 << 36) & M64), (9, p23 >> 33), (11, (sp23 >> 33) & M64)):
        want[k], want[k + 1] = v & M32, v >> 32
    want[13] = x[6] & ~x[7] & M32
    want[14] = (x[6] | ~x[7]) & M32
    want[15] = x[1] if s(x[4]) > s(x[5]) else x[6]
    want[16] = x[1] if x[4] > x[5] else x[6]
    want[17] = (x[6] >> 4) & 0xFFF
    f = (x[6] >> 20) & 0xFF
    want[18] = (f - 256 if f & 0x80 else f) & M32
    want[19] = (x[1] * -3) & M32
    want[20] = 0xFFFF8001
    falls = [s(x[4]) < s(x[5]), not x[4] < x[5], s(x[3]) >= s(x[5]), x[5] == 5, p01 != p23,
             bool(x[6] & 1), False, False]
    want[21] = sum(1 << b for b, fell in enumerate(falls) if fell)
    want[22] = x[5] * (x[5] + 1) // 2
    want[23] = x[1]
    want[24] = int(x[0] + x[2] > M32)
    want[25] = x[6]
    h = x[3] & 0xFFFF
    want[26] = (h - 0x10000 if h & 0x8000 else h) & M32
    want[27] = bin(x[6]).count("1")
    want[28] = (x[2] & -x[2]).bit_length() - 1 if x[2] else M32
    want[29] = 0b1111
    names = {0: "s_add_u32", 1: "s_addc_u32", 2: "s_addc_u32 (2)", 3: "SCC of s_add_u32",
             4: "s_mul_i32", 5: "s_mul_hi_u32", 6: "s_mul_hi_i32", 7: "s_lshl_b64 lo",
             8: "s_lshl_b64 hi", 9: "s_lshr_b64 lo", 10: "s_lshr_b64 hi", 11: "s_ashr_i64 lo",
             12: "s_ashr_i64 hi", 13: "s_and_not1_b32", 14: "s_or_not1_b32",
             15: "s_cmp_gt_i32 + s_cselect_b32", 16: "s_cmp_gt_u32 + s_cselect_b32",
             17: "s_bfe_u32", 18: "s_bfe_i32", 19: "s_mulk_i32", 20: "s_movk_i32",
             21: "s_cmp_* + s_cbranch_scc0/scc1 / s_branch (bit b: branch b fell through)",
             22: "backward s_cbranch_scc1 loop", 23: "s_mov_b32 m0 / from m0",
             24: "s_add_u32 null (SCC only)", 25: "s_mov_b32 null (nothing written)",
             26: "s_sext_i32_i16", 27: "s_bcnt1_i32_b32", 28: "s_ctz_i32_b32",
             29: "s_cbranch_vccz / vccnz / execz / execnz (wave32)"}
    for k in sorted(want):
        check.bits(f"[{k}] {names[k]}", got[k:k + 1], [want[k]], np.asarray(x, U32))
    check.done()


def test_scalar_memory_loads(gpu11, tmp_path):
    words = (np.arange(256, dtype=np.uint64) * 0x01010101 + 0x9E3779B9).astype(U32)
    check = Check("smem")
    got = run(gpu11, tmp_path, "smem", "smem", [words], 64, check)
    want = np.concatenate([words[[1, 6, 7]], words[16:20], words[64:72], words[129:131],
                           words[133:134], words[240:256]])
    labels = (["s_load_b32 0x4", "s_load_b64 0x18 [0]", "s_load_b64 0x18 [1]"]
              + [f"s_load_b128 0x40 [{i}]" for i in range(4)]
              + [f"s_load_b256 0x100 [{i}]" for i in range(8)]
              + ["s_load_b64 SGPR offset 0x204 [0]", "s_load_b64 SGPR offset 0x204 [1]",
                 "s_load_b32 SGPR offset 0x200 + offset:0x14"]
              + [f"s_load_b512 0x3c0 [{i}]" for i in range(16)])
    for k, label in enumerate(labels):
        check.bits(label, got[k:k + 1], want[k:k + 1])
    check.done()


# ---- 4. true16 VOP1 / VOP2 / VOPC ----------------------------------------------------------------

def f16_bits(values) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(values, F32).astype(F16).view(np.uint16)


def same_f16(got_bits, want_bits) -> np.ndarray:
    """0 where the f16 bit patterns agree (any NaN matching any NaN), else 1."""
    g, w = f16_of(got_bits), f16_of(want_bits)
    return np.where((np.asarray(got_bits) == np.asarray(want_bits)) | (np.isnan(g) & np.isnan(w)),
                    0, 1)


def test_true16_vop1_vop2_vopc(gpu11, tmp_path):
    rng = np.random.default_rng(41)
    x = fill([0.0, -0.0, 1.5, 65504.0, 65520.0, 1e5, 6e-8, 2.0**-25, 1.0009765625,
              1.00048828125, np.inf, np.nan, -3.75, 1e-9], WAVE, rng, -1000.0, 1000.0)
    hl = fill([0.0, -0.0, 1.0, np.inf, -np.inf, 6e-8, 0.5, np.nan, 3.0, -2.0], WAVE, rng, -50, 50,
              F16)
    hh = fill([-0.0, 0.0, 2.0, 1.0, -np.inf, 6e-5, -0.5, 1.0, np.nan, -2.0], WAVE, rng, -50, 50,
              F16)
    gl = fill([0.0, 0.0, 1.0, -np.inf, 1.0, 6e-8, 0.5, 2.0, 3.0, -2.0], WAVE, rng, -50, 50, F16)
    gh = fill([0.0, -0.0, 65504.0, 1.0, 2.0, -6e-5, 0.25, np.nan, 1.0, -2.0], WAVE, rng, -50, 50,
              F16)
    gl[20:26] = hl[20:26]  # some equal pairs for v_cmp_eq_f16
    gl[26:28] = hh[26:28]
    h, g = halves(hl, hh), halves(gl, gh)
    u = u32([0x80000001, 0x0001FFFF, 0x7FFF8000, 0x12341234, 0xFFFF0000]
            + list(rng.integers(0, 2**32, WAVE - 5)))
    old = u32([0xDEAD0000 | lane for lane in range(WAVE)])
    check = Check("vop_t16")
    out = run(gpu11, tmp_path, "vop_t16", "vop_t16", [x, h, u, g, old], 32 * WIDTH, check)
    got = out.reshape(32, WIDTH)[:, :WAVE]
    O = old.astype(np.uint32)
    cvt = f16_bits(x).astype(U32)
    check.bits("v_cvt_f16_f32_e32 v10.h (f16 bits equal; 1 = differ)",
               same_f16(hi16(got[0]), cvt), np.zeros(WAVE), x)
    check.bits("v_cvt_f16_f32_e32 v10.h keeps v10.l", lo16(got[0]), lo16(O), x)
    check.bits("v_cvt_f16_f32_e32 v11.l (f16 bits equal; 1 = differ)",
               same_f16(lo16(got[1]), cvt), np.zeros(WAVE), x)
    check.bits("v_cvt_f16_f32_e32 v11.l keeps v11.h", hi16(got[1]), hi16(O), x)
    check.f32("v_cvt_f32_f16_e32 v12, v3.h", got[2], hh.astype(F32), h)
    check.f32("v_cvt_f32_f16_e32 v13, v3.l", got[3], hl.astype(F32), h)
    check.bits("v_cvt_u32_u16_e32 v14, v4.h", got[4], hi16(u), u)
    check.bits("v_cvt_i32_i16_e32 v15, v4.h", got[5], hi16(u).view(np.int16).astype(np.int64), u)
    check.bits("v_mov_b16_e32 v16.h, v4.l", got[6], halves(lo16(O), lo16(u)), u)
    check.bits("v_mov_b16_e32 v17.l, v4.h", got[7], halves(hi16(u), hi16(O)), u)
    with np.errstate(all="ignore"):
        add = (hl + gh).view(np.uint16)  # numpy's f16 ops round once (f32 intermediate: exact
        mul = (hh * gl).view(np.uint16)  # enough for +, * of two f16)
    # IEEE mode: a NaN operand gives the other one; +0 > -0 (RDNA3 ISA, V_MAX_F16)
    mx = np.where((hh == 0) & (gh == 0), np.where(np.signbit(hh), gh, hh),
                  np.fmax(hh, gh)).view(np.uint16)
    check.bits("v_add_f16_e32 v18.h, v3.l, v5.h (1 = differ)", same_f16(hi16(got[8]), add),
               np.zeros(WAVE), h, g)
    check.bits("v_add_f16_e32 v18.h keeps v18.l", lo16(got[8]), lo16(O), h, g)
    check.bits("v_mul_f16_e32 v19.l, v3.h, v5.l (1 = differ)", same_f16(lo16(got[9]), mul),
               np.zeros(WAVE), h, g)
    check.bits("v_mul_f16_e32 v19.l keeps v19.h", hi16(got[9]), hi16(O), h, g)
    check.bits("v_max_f16_e32 v20.h, v3.h, v5.h (1 = differ)", same_f16(hi16(got[10]), mx),
               np.zeros(WAVE), h, g)
    check.bits("v_max_f16_e32 v20.h keeps v20.l", lo16(got[10]), lo16(O), h, g)
    with np.errstate(invalid="ignore"):
        check.bits("v_cmp_lt_f16_e32 v3.h, v5.l", got[11], (hh < gl).astype(int), h, g)
        check.bits("v_cmp_eq_f16_e32 v3.l, v5.l", got[14], (hl == gl).astype(int), h, g)
    check.bits("v_cmp_lt_u16_e32 v4.h, v4.l", got[12], (hi16(u) < lo16(u)).astype(int), u)
    check.bits("v_cmp_gt_i16_e32 v4.l, v4.h", got[13],
               (lo16(u).view(np.int16) > hi16(u).view(np.int16)).astype(int), u)
    xb = x.view(U32).astype(np.int64)
    check.bits("v_add_nc_u32_e32", got[15], xb + u, x, u)
    check.bits("v_sub_nc_u32_e32", got[16], xb - u, x, u)
    check.bits("v_xnor_b32_e32", got[17], ~(xb ^ u), x, u)
    check.done()


# ---- 5. VOP3 -------------------------------------------------------------------------------------

def test_vop3(gpu11, tmp_path):
    rng = np.random.default_rng(51)
    x, y, z, d0, d1, d2 = fma_inputs(WAVE, rng)
    a = u32([0xFFFFFFFF, 0x80000000, 0x12345678, 0, 1, 0xDEADBEEF, 0x00FF00FF]
            + list(rng.integers(0, 2**32, WAVE - 7)))
    b = u32([1, 31, 32, 33, 0xFFFFFFFF, 4, 0x0000FFFF] + list(rng.integers(0, 2**32, WAVE - 7)))
    c = u32([0xFFFFFFFF, 7, 0, 31, 32, 0x80000000, 0xFFFF0001]
            + list(rng.integers(0, 2**32, WAVE - 7)))
    sel = u32([0x0C0D0E0F, 0x08090A0B, 0x00010203, 0x07060504, 0x0F0E0D0C]
              + [int.from_bytes(bytes(rng.integers(0, 14, 4).astype(np.uint8)), "little")
                 for _ in range(WAVE - 5)])
    old = u32([0xBEEF0000 | lane for lane in range(WAVE)])
    check = Check("vop3")
    out = run(gpu11, tmp_path, "vop3", "vop3", [a, b, c, x, y, z, d0, d1, d2, sel, old],
              32 * WIDTH, check)
    got = out.reshape(32, WIDTH)[:, :WAVE]
    with np.errstate(all="ignore"):
        check.f32("v_add_f32_e64 |x|, -y", got[0], np.abs(x) + -y, x, y)
        check.f32("v_mul_f32_e64 -|x|, 0x40490fdb (literal)", got[1],
                  -np.abs(x) * np.asarray(0x40490FDB, U32).view(F32), x)
    check.f32("v_fma_f32 x, 1.5 (literal), -z", got[2], fma32(x, np.full(WAVE, 1.5, F32), -z), x, z)
    check.f32("v_fma_f32 -|x|, y, |z|", got[3], fma32(-np.abs(x), y, np.abs(z)), x, y, z)
    check.f64("v_fma_f64 -d0, d1, |d2|", out.reshape(32, WIDTH)[4].copy().view(np.float64),
              fma64(-d0, d1, np.abs(d2)), d0, d1, d2)
    A, B, Cc = (v.astype(object) for v in (a, b, c))
    check.bits("v_xor3_b32", got[6], a ^ b ^ c, a, b, c)
    check.bits("v_add3_u32", got[7], [(p + q + r) & M32 for p, q, r in zip(A, B, Cc)], a, b, c)
    check.bits("v_lshl_or_b32", got[8], [((p << (q & 31)) & M32) | r for p, q, r in zip(A, B, Cc)],
               a, b, c)
    check.bits("v_bfe_u32", got[9], [(p >> (q & 31)) & ((1 << (r & 31)) - 1)
                                     for p, q, r in zip(A, B, Cc)], a, b, c)
    check.bits("v_alignbit_b32", got[10], [(((p << 32) | q) >> (r & 31)) & M32
                                           for p, q, r in zip(A, B, Cc)], a, b, c)
    check.bits("v_perm_b32", got[11], perm_b32(A, B, sel), a, b, sel)
    with np.errstate(invalid="ignore"):
        lt = x < y
    check.f32("v_cndmask_b32_e64 -x, |y|, s (x < y)", got[12], np.where(lt, np.abs(y), -x), x, y)
    check.bits("v_cndmask_b16 op_sel:[1,0,0,1] (hi = x < y ? b.l : a.h, lo kept)", got[13],
               halves(lo16(old), np.where(lt, lo16(b), hi16(a))), a, b, old)
    check.bits("v_cndmask_b16 op_sel:[0,1,0,0] (lo = x < y ? b.h : a.l, hi kept)", got[14],
               halves(np.where(lt, hi16(b), lo16(a)), hi16(old)), a, b, old)
    check.bits("v_add_nc_u16 op_sel:[1,1,1] (hi = a.h + b.h, lo kept)", got[15],
               halves(lo16(old), ((hi16(a).astype(int) + hi16(b)) & 0xFFFF).astype(np.uint16)),
               a, b, old)
    finite = ~(np.isnan(x) | np.isnan(y) | np.isnan(z))
    check.f32("v_maxmin_f32 min(max(x, y), z)", got[16][finite],
              np.fmin(np.fmax(x, y), z)[finite], x[finite], y[finite], z[finite])
    check.bits("v_lshl_add_u32", got[17], [((p << (q & 31)) + r) & M32
                                           for p, q, r in zip(A, B, Cc)], a, b, c)
    check.bits("v_and_or_b32", got[18], (a & b) | c, a, b, c)
    check.bits("v_or3_b32", got[19], a | b | c, a, b, c)
    check.bits("v_mul_lo_u32", got[20], [(p * q) & M32 for p, q in zip(A, B)], a, b)
    check.bits("v_mul_hi_u32", got[21], [(p * q) >> 32 for p, q in zip(A, B)], a, b)
    check.bits("v_add_nc_u32_e64 a, 0x12345678 (literal)", got[22],
               [(p + 0x12345678) & M32 for p in A], a)
    check.done()


def test_vop3_f32_division_sequence(gpu11, tmp_path):
    rng = np.random.default_rng(54)
    pairs = [(3.4e38, 0.5), (1e-38, 1e-10), (0.0, 0.0), (1.0, 0.0), (-1.0, 0.0), (1.0, -0.0),
             (np.inf, np.inf), (1e-38, 1e3), (1.0, 3.0), (2.0, 3.0), (1e30, 1e-30), (1e-30, 1e30),
             (5e-39, 3.0), (1.0, 1e-39), (1.0, 3e-39), (0.0, 5.0), (-0.0, 5.0), (5.0, np.inf),
             (np.inf, 5.0), (np.nan, 1.0), (1.0, np.nan), (-7.0, 2.0), (1e-45, 2.0),
             (3e-45, 2.0), (3.4028235e38, 3.4028235e38), (1.1754944e-38, 3.0), (6.0, -3.0),
             (2.0**127, 2.0**-126)]
    n = np.asarray([p[0] for p in pairs], F32)
    d = np.asarray([p[1] for p in pairs], F32)
    count = WAVE - len(pairs)
    signs = rng.choice([-1.0, 1.0], (2, count))
    n = np.concatenate([n, (signs[0] * 2.0 ** rng.uniform(-140, 127, count)).astype(F32)])
    d = np.concatenate([d, (signs[1] * 2.0 ** rng.uniform(-140, 127, count)).astype(F32)])
    check = Check("vop3_div")
    out = run(gpu11, tmp_path, "vop3", "vop3_div", [n, d], WIDTH, check)
    with np.errstate(all="ignore"):
        check.f32("n / d (v_div_scale, v_rcp, v_fma, v_fmac, v_div_fmas, v_div_fixup)",
                  out[:WAVE], n / d, n, d)
    check.done()


# ---- 6. VOPD -------------------------------------------------------------------------------------

def quarters(n: int, seed: int) -> np.ndarray:
    """Multiples of 1/4 in [-16, 16): products and sums exact in f32."""
    return (np.random.default_rng(seed).integers(-64, 64, n) / 4).astype(F32)


def test_vopd_dual_issue(gpu11, tmp_path):
    a, b, c, e = (quarters(WAVE, seed) for seed in (61, 62, 63, 64))
    rng = np.random.default_rng(65)
    i, j, k = rand_u32(rng), rand_u32(rng), rand_u32(rng)
    check = Check("vopd")
    out = run(gpu11, tmp_path, "vopd", "vopd", [a, b, c, e, i, j, k], 32 * WIDTH, check)
    got = out.reshape(32, WIDTH)[:, :WAVE]
    q = np.full(WAVE, 0.75, F32)
    for col, label, want in [
            (0, "v_dual_mul_f32 (X)", a * b), (1, "v_dual_add_f32 (Y)", c + e),
            (2, "v_dual_fmac_f32 (X)", fma32(a, b, c)), (3, "v_dual_mov_b32 (Y)", c),
            (4, "v_dual_fmaak_f32 (X, literal 0.75)", fma32(a, b, q)),
            (5, "v_dual_fmamk_f32 (Y, literal 0.75)", fma32(c, q, e)),
            (6, "v_dual_cndmask_b32 (X, vcc_lo = a < b)", np.where(a < b, b, a)),
            (8, "v_dual_sub_f32 (X)", a - b), (10, "v_dual_subrev_f32 (X)", b - a),
            (12, "v_dual_max_f32 (X)", np.fmax(a, b)), (13, "v_dual_min_f32 (Y)", np.fmin(c, e)),
            (14, "v_dual_add_f32 v24 (X)", a + b),
            (15, "v_dual_mul_f32 v25, v24 (Y reads X's destination: the old v24 = c)", c * e),
            (16, "v_dual_mul_f32 v26, v27 (X reads Y's destination: the old v27 = e)", e * b),
            (17, "v_dual_mov_b32 v27 (Y)", a), (18, "v_dual_mov_b32 2.0 (X, inline)",
                                                np.full(WAVE, 2.0, F32)),
            (19, "v_dual_add_f32 -1.0, e (Y, inline)", e - 1)]:
        check.f32(label, got[col], want, a, b, c, e)
    I, J, K = (v.astype(np.int64) for v in (i, j, k))
    check.bits("v_dual_lshlrev_b32 (Y) i << (k & 31)", got[7], (I << (K & 31)) & M32, i, k)
    check.bits("v_dual_add_nc_u32 (Y) k + i", got[9], (K + I) & M32, k, i)
    check.bits("v_dual_and_b32 (Y) k & i", got[11], K & I, k, i)
    check.done()


# ---- 7. VOP3P and WMMA ---------------------------------------------------------------------------

def test_vop3p_mix_and_packed(gpu11, tmp_path):
    rng = np.random.default_rng(71)
    halfs = lambda: (rng.integers(-16, 16, WAVE) / 2).astype(F16)  # noqa: E731 (multiples of 1/2)
    fourths = lambda: (rng.integers(-64, 64, WAVE) / 4).astype(F16)  # noqa: E731
    pl, ph, ql, qh = halfs(), halfs(), halfs(), halfs()
    rl, rh = fourths(), fourths()
    f = quarters(WAVE, 72)
    p, q, r = halves(pl, ph), halves(ql, qh), halves(rl, rh)
    u, w = rand_u32(rng), rand_u32(rng)
    u[:4] = u32([0x80007FFF, 0xFFFF0001, 0x00010000, 0x7FFF8000])
    w[:4] = u32([0x00010001, 0x000F0010, 0xFFFFFFFF, 0x80008000])
    old = u32([0xBEEF0000 | lane for lane in range(WAVE)])
    check = Check("vop3p")
    out = run(gpu11, tmp_path, "vop3p", "vop3p", [p, q, r, f, old, u, w], 16 * WIDTH, check)
    got = out.reshape(16, WIDTH)[:, :WAVE]
    F = lambda v: v.astype(F32)  # noqa: E731 (f16 -> f32, exact)
    # Every value below is exact in f16 and f32 (small multiples of 1/4): no rounding question.
    check.f32("v_fma_mix_f32 p.l * q.l + f (f32)", got[0], fma32(F(pl), F(ql), f), p, q, f)
    check.f32("v_fma_mix_f32 op_sel:[1,0,1] p.h * q.l + r.h", got[1], fma32(F(ph), F(ql), F(rh)),
              p, q, r)
    check.f32("v_fma_mix_f32 -p.l * |q.h| + f", got[2], fma32(-F(pl), np.abs(F(qh)), f), p, q, f)
    mixlo = fma32(F(pl), F(ql), f).astype(F16)
    mixhi = fma32(F(ph), F(qh), F(rl)).astype(F16)
    check.bits("v_fma_mixlo_f16 p.l * q.l + f (hi kept)", got[3], halves(mixlo, hi16(old)),
               p, q, f)
    check.bits("v_fma_mixhi_f16 op_sel:[1,1,0] p.h * q.h + r.l (lo kept)", got[4],
               halves(lo16(old), mixhi), p, q, r)
    check.bits("v_pk_add_f16", got[5], halves(pl + ql, ph + qh), p, q)
    check.bits("v_pk_mul_f16 op_sel:[1,0] op_sel_hi:[0,1]", got[6], halves(ph * ql, pl * qh), p, q)
    check.bits("v_pk_fma_f16 neg_lo:[1,0,0] neg_hi:[0,0,1]", got[7],
               halves(-pl * ql + rl, ph * qh - rh), p, q, r)
    ul, uh, wl, wh = (x.astype(np.int64) for x in (lo16(u), hi16(u), lo16(w), hi16(w)))
    check.bits("v_pk_add_u16 op_sel:[1,0] op_sel_hi:[0,1]", got[8],
               ((uh + wl) & 0xFFFF) | (((ul + wh) & 0xFFFF) << 16), u, w)
    check.bits("v_pk_lshlrev_b16 w, u", got[9],
               ((ul << (wl & 15)) & 0xFFFF) | (((uh << (wh & 15)) & 0xFFFF) << 16), u, w)
    sx = lambda v: np.where(v & 0x8000, v - 0x10000, v)  # noqa: E731
    check.bits("v_pk_max_i16", got[10], (np.maximum(sx(ul), sx(wl)) & 0xFFFF)
               | ((np.maximum(sx(uh), sx(wh)) & 0xFFFF) << 16), u, w)
    check.bits("v_pk_sub_u16", got[11], ((ul - wl) & 0xFFFF) | (((uh - wh) & 0xFFFF) << 16), u, w)
    check.done()


def _d_layout(D: np.ndarray) -> np.ndarray:
    """16x16 32-bit D -> lane-major (32 lanes, 8 dwords): D[r][c] in dword r // 2 of lane
    c + 16 * (r % 2)."""
    out = np.zeros((WAVE, 8), D.dtype)
    for r in range(16):
        for c_ in range(16):
            out[c_ + 16 * (r % 2), r // 2] = D[r, c_]
    return out


def test_wmma(gpu11, tmp_path):
    rng = np.random.default_rng(75)
    A8 = rng.integers(0, 256, (16, 16)).astype(np.uint8)
    B8 = rng.integers(0, 256, (16, 16)).astype(np.uint8)
    A8[0, :4] = [0x80, 0xFF, 0x7F, 0x01]
    C = rng.integers(-2**24, 2**24, (16, 16)).astype(np.int32)
    Ah = rng.integers(-8, 8, (16, 16)).astype(F16)
    Bh = rng.integers(-8, 8, (16, 16)).astype(F16)
    Cf = rng.integers(-100, 100, (16, 16)).astype(F32)
    lanes = np.arange(WAVE) % 16
    a8 = A8[lanes]                      # lane l: row l % 16
    b8 = B8.T[lanes]                    # lane l: column l % 16
    ah = Ah[lanes]
    bh = Bh.T[lanes]
    blob = np.concatenate([a8.ravel().view(U32), b8.ravel().view(U32),
                           _d_layout(C).ravel().view(U32), ah.ravel().view(U32),
                           bh.ravel().view(U32), _d_layout(Cf).ravel().view(U32)])
    assert blob.nbytes == 5120
    check = Check("wmma")
    out = run(gpu11, tmp_path, "vop3p", "wmma", [blob], 5 * 256 + 8 * WAVE, check, pad=False)
    res = [out[256 * k:256 * k + 256] for k in range(5)]
    signed = lambda m: m.view(np.int8).astype(np.int64)  # noqa: E731
    unsigned = lambda m: m.astype(np.int64)  # noqa: E731
    C64 = C.astype(np.int64)
    for k, label, want in [
            (0, "v_wmma_i32_16x16x16_iu8 neg_lo:[1,1,0] (A, B signed)",
             signed(A8) @ signed(B8) + C64),
            (1, "v_wmma_i32_16x16x16_iu8 (A, B unsigned)", unsigned(A8) @ unsigned(B8) + C64),
            (2, "v_wmma_i32_16x16x16_iu8 neg_lo:[1,0,0] (A signed, B unsigned)",
             signed(A8) @ unsigned(B8) + C64)]:
        check.bits(label, res[k], _d_layout(want & M32).ravel())
    D = Ah.astype(np.float64) @ Bh.astype(np.float64) + Cf  # small integers: exact
    check.f32("v_wmma_f32_16x16x16_f16", res[3], _d_layout(D.astype(F32)).ravel())
    D2 = Ah.astype(np.float64) @ Bh.astype(np.float64) + D
    check.f32("v_wmma_f32_16x16x16_f16 in place (C = D = the previous result)", res[4],
              _d_layout(D2.astype(F32)).ravel())
    check.done()


# ---- 8. DPP16 / DPP8 / permlane ------------------------------------------------------------------

def dpp_expected(x, y, old, source, op=lambda s, b: s, row_mask=0xF, bank_mask=0xF, bound=False):
    """DPP16: lane l reads src0 from lane source(l) (None: invalid); a lane whose row (l // 16) is
    off in row_mask or whose bank ((l >> 2) & 3) is off in bank_mask keeps old; an invalid source
    gives src0 = 0 under bound_ctrl, else the lane keeps old."""
    out = []
    for lane in range(WAVE):
        if not (row_mask >> (lane // 16)) & 1 or not (bank_mask >> ((lane >> 2) & 3)) & 1:
            out.append(int(old[lane]))
            continue
        src = source(lane)
        if src is None and not bound:
            out.append(int(old[lane]))
            continue
        out.append(op(0 if src is None else x[src], y[lane]))
    return out


def test_dpp_and_permlane(gpu11, tmp_path):
    rng = np.random.default_rng(81)
    x, y = rand_u32(rng), rand_u32(rng)
    old = u32([0xDEAD0000 | lane for lane in range(WAVE)])
    f, g = quarters(WAVE, 82), quarters(WAVE, 83)
    check = Check("dpp")
    out = run(gpu11, tmp_path, "dpp", "dpp", [x, y, old, f, g], 16 * WIDTH, check)
    got = out.reshape(16, WIDTH)[:, :WAVE]
    X, Y = [int(v) for v in x], [int(v) for v in y]
    row = lambda l: l & ~15  # noqa: E731
    quad = lambda sel: lambda l: (l & ~3) + sel[l & 3]  # noqa: E731
    cases = [
        (0, "quad_perm:[3,2,1,0]", dict(source=quad([3, 2, 1, 0]))),
        (1, "quad_perm:[1,1,0,2] bank_mask:0x5", dict(source=quad([1, 1, 0, 2]), bank_mask=0x5)),
        (2, "row_shl:1", dict(source=lambda l: l + 1 if l % 16 + 1 < 16 else None)),
        (3, "row_shr:3 bound_ctrl:1", dict(source=lambda l: l - 3 if l % 16 >= 3 else None,
                                           bound=True)),
        (4, "row_ror:5", dict(source=lambda l: row(l) + (l % 16 - 5) % 16)),
        (5, "row_mirror", dict(source=lambda l: row(l) + 15 - l % 16)),
        (6, "row_half_mirror", dict(source=lambda l: (l & ~7) + 7 - l % 8)),
        (7, "row_share:5 row_mask:0x2", dict(source=lambda l: row(l) + 5, row_mask=0x2)),
        (8, "row_xmask:6", dict(source=lambda l: row(l) + ((l % 16) ^ 6))),
        (9, "v_add_nc_u32_dpp row_shr:1 bound_ctrl:1",
         dict(source=lambda l: l - 1 if l % 16 >= 1 else None, bound=True,
              op=lambda s, b: (s + b) & M32)),
        (15, "row_shl:15 (no bound_ctrl)",
         dict(source=lambda l: l + 15 if l % 16 == 0 else None)),
    ]
    for col, name, kwargs in cases:
        check.bits(f"DPP16 {name}", got[col], dpp_expected(X, Y, old, **kwargs), x, y)
    F, G = list(f), list(g)
    want = dpp_expected(F, G, old.view(F32), lambda l: row(l) + 15 - l % 16, row_mask=0x1,
                        bank_mask=0xE, op=lambda s, b: F32(s) + F32(b))
    check.f32("DPP16 v_add_f32_dpp row_mirror row_mask:0x1 bank_mask:0xe", got[10],
              np.asarray(want, F32), f, g)
    sel8 = [1, 0, 3, 2, 7, 7, 0, 4]
    check.bits("DPP8 v_mov_b32 dpp8:[1,0,3,2,7,7,0,4]", got[11],
               [X[(l & ~7) + sel8[l & 7]] for l in range(WAVE)], x)
    sel8 = [3, 2, 1, 0, 7, 6, 5, 4]
    check.f32("DPP8 v_add_f32 dpp8:[3,2,1,0,7,6,5,4]", got[12],
              np.asarray([F[(l & ~7) + sel8[l & 7]] + G[l] for l in range(WAVE)], F32), f, g)
    select = 0x2C4E6A08 | (0xF1D3B597 << 32)
    nib = lambda l: (select >> (4 * (l % 16))) & 15  # noqa: E731
    check.bits("v_permlanex16_b32 (the other row)", got[13],
               [X[(16 - row(l)) + nib(l)] for l in range(WAVE)], x)
    check.bits("v_permlane16_b32 (the lane's own row)", got[14],
               [X[row(l) + nib(l)] for l in range(WAVE)], x)
    check.done()


# ---- 9. DS / LDS ---------------------------------------------------------------------------------

def test_lds_reads_and_writes(gpu11, tmp_path):
    rng = np.random.default_rng(91)
    cols = [rand_u32(rng) for _ in range(9)]
    x, y0, y1, z0, z1, z2, z3, p, q = cols
    x[:8] = u32([0x80FF7F01, 0x00008000, 0xFFFFFFFF, 0x7F807F80, 0, 1, 0x8000FF00, 0x12345678])
    check = Check("ds_ops")
    out = run(gpu11, tmp_path, "ds", "ds_ops", cols, 32 * WIDTH, check)
    got = out.reshape(32, WIDTH)[:, :WAVE]
    L = np.arange(WAVE)
    m = WAVE - 1 - L
    for col, (name, want) in enumerate([
            ("ds_store_b32 / ds_load_b32", x), ("ds_load_b64 (lo)", y0), ("ds_load_b64 (hi)", y1),
            ("ds_load_2addr_b32 (address = destination) offset0", p),
            ("ds_load_2addr_b32 offset1", q),
            ("ds_load_b128 [0]", z0), ("ds_load_b128 [1]", z1), ("ds_load_b128 [2]", z2),
            ("ds_load_b128 [3]", z3),
            ("ds_load_2addr_b64 offset0 (lo)", y0), ("ds_load_2addr_b64 offset0 (hi)", y1),
            ("ds_load_2addr_b64 offset1 (lo)", z0), ("ds_load_2addr_b64 offset1 (hi)", z1)]):
        check.bits(name, got[col], want[m])
    check.bits("ds_load_u8", got[13], x.view(np.uint8)[L])
    check.bits("ds_load_i8 offset:64", got[14], x.view(np.int8)[64 + L].astype(np.int64))
    check.bits("ds_load_u16", got[15], x.view(np.uint16)[L])
    check.bits("ds_load_i16 offset:64", got[16], x.view(np.int16)[32 + L].astype(np.int64))
    check.bits("ds_store_b8 / ds_load_u8", got[17], (x & 0xFF)[m])
    check.bits("ds_store_b16 / ds_load_u16", got[18], (x & 0xFFFF)[m])
    check.bits("ds_load_u16_d16 (hi kept)", got[19],
               0xCAFE0000 | x.view(np.uint16)[L].astype(np.int64))
    check.bits("ds_load_u16_d16_hi (lo kept)", got[20],
               (x.view(np.uint16)[L].astype(np.int64) << 16) | 0xBABE)
    check.done()


def test_lds_exchange_across_four_waves_with_barriers(gpu11, tmp_path):
    rng = np.random.default_rng(92)
    values = rand_u32(rng, 128)
    check = Check("ds_barrier")
    out = run(gpu11, tmp_path, "ds", "ds_barrier", [values], 256, check, items=128, workgroup=128)
    t = np.arange(128)
    sums = (values[127 - t].astype(np.uint64) + values[(t + 32) % 128]) & M32
    check.bits("after s_barrier: in[127-t] + in[(t+32)%128]", out[:128], sums)
    check.bits("after another s_barrier: sum[127-t]", out[128:], sums[127 - t])
    check.done()


# ---- 10. MUBUF and GLOBAL ------------------------------------------------------------------------

def _memory_words(seed: int) -> np.ndarray:
    words = rand_u32(np.random.default_rng(seed), 256)
    words[25:32] = u32([0x807F80FF, 0x0180FF7F, 0xFFFF8000, 0x7FFF0001, 0x80000080, 0, 0xFFFFFFFF])
    return words


def _stored(words_per_lane: np.ndarray, count: int) -> np.ndarray:
    """`count` 64-dword columns whose first words are `words_per_lane`, the rest SENTINEL."""
    out = np.full(count * WIDTH, SENTINEL, U32)
    out[:len(words_per_lane)] = words_per_lane
    return out


def test_mubuf_loads_and_stores(gpu11, tmp_path):
    D = _memory_words(101)
    check = Check("mubuf")
    out = run(gpu11, tmp_path, "mem", "mubuf", [D], 26 * WIDTH, check)
    got = out.reshape(26, WIDTH)
    L = np.arange(WAVE)
    raw = D.view(np.uint8)
    w = lambda c: got[c, :WAVE]  # noqa: E731
    check.bits("buffer_load_b32 offen, num_records 100 (past it: 0)", w(0),
               np.where(4 * L + 4 <= 100, D[L], 0))
    check.bits("buffer_load_b32 offen soffset:32 offset:16", w(1), D[L + 12])
    for i in range(2):
        check.bits(f"buffer_load_b64 [{i}]", w(2 + i), D[2 * L + i])
    for i in range(3):
        check.bits(f"buffer_load_b96 [{i}]", w(4 + i), D[3 * L + i])
    for i in range(4):
        check.bits(f"buffer_load_b128 [{i}]", w(7 + i), D[4 * L + i])
    check.bits("buffer_load_u8 offset:100", w(11), raw[100 + L])
    check.bits("buffer_load_i8 offset:100", w(12), raw.view(np.int8)[100 + L].astype(np.int64))
    check.bits("buffer_load_u16 offset:6", w(13), D.view(np.uint16)[3 + L])
    check.bits("buffer_load_i16 offset:6", w(14), D.view(np.int16)[3 + L].astype(np.int64))
    check.bits("buffer_load_b32 idxen stride 12 offset:4 (index >= 20: 0)", w(15),
               np.where(L < 20, D[3 * L + 1], 0))
    check.bits("buffer_load_b32 idxen offen (offset 8)", w(16), np.where(L < 20, D[3 * L + 2], 0))
    check.bits("buffer_store_b32 offset:256, num_records 336 (past it: dropped)", got[17],
               _stored(np.where(L < 20, D[L], SENTINEL), 1))
    h = np.full(2 * WIDTH, 0xA5A5, np.uint16)
    h[:WAVE] = D[L] & 0xFFFF
    check.bits("buffer_store_b16", got[18], h.view(U32))
    b = np.full(4 * WIDTH, 0xA5, np.uint8)
    b[:WAVE] = D[L] & 0xFF
    check.bits("buffer_store_b8", got[19], b.view(U32))
    check.bits("buffer_store_b64", got[20], D[:64])
    check.bits("buffer_store_b96", got[21:23].ravel(), _stored(D[:96], 2))
    check.bits("buffer_store_b128", got[23:25].ravel(), D[:128])
    check.bits("buffer_store_b32 soffset:2304 offset:4", got[25],
               np.concatenate([[SENTINEL], D[:WAVE], np.full(WIDTH - WAVE - 1, SENTINEL)]))
    check.done()


def test_global_loads_and_stores(gpu11, tmp_path):
    D = _memory_words(111)
    check = Check("global")
    out = run(gpu11, tmp_path, "mem", "global", [D], 23 * WIDTH, check)
    got = out.reshape(23, WIDTH)
    L = np.arange(WAVE)
    raw = D.view(np.uint8)
    w = lambda c: got[c, :WAVE]  # noqa: E731
    check.bits("global_load_b32 saddr offset:-512", w(0), D[L])
    for i in range(2):
        check.bits(f"global_load_b64 off (64-bit VGPR address) [{i}]", w(1 + i), D[2 * L + i])
    for i in range(3):
        check.bits(f"global_load_b96 off [{i}]", w(3 + i), D[3 * L + i])
    for i in range(4):
        check.bits(f"global_load_b128 saddr [{i}]", w(6 + i), D[4 * L + i])
    check.bits("global_load_u8 offset:-200", w(10), raw[100 + L])
    check.bits("global_load_i8 offset:-200", w(11), raw.view(np.int8)[100 + L].astype(np.int64))
    check.bits("global_load_u16 offset:-506", w(12), D.view(np.uint16)[3 + L])
    check.bits("global_load_i16 offset:-506", w(13), D.view(np.int16)[3 + L].astype(np.int64))
    half = D.view(np.uint16)[L].astype(np.int64)
    check.bits("global_load_d16_b16 (hi kept)", w(14), 0xCAFE0000 | half)
    check.bits("global_load_d16_hi_b16 off offset:-64 (lo kept)", w(15), (half << 16) | 0xBABE)
    h = np.full(2 * WIDTH, 0xA5A5, np.uint16)
    h[:WAVE] = D[L] & 0xFFFF
    check.bits("global_store_b16", got[16], h.view(U32))
    b = np.full(4 * WIDTH, 0xA5, np.uint8)
    b[:WAVE] = D[L] & 0xFF
    check.bits("global_store_b8 saddr", got[17], b.view(U32))
    check.bits("global_store_b64 saddr offset:-256", got[18], D[:64])
    check.bits("global_store_b96 off offset:768", got[19:21].ravel(), _stored(D[:96], 2))
    check.bits("global_store_b128 saddr", got[21:23].ravel(), D[:128])
    check.done()

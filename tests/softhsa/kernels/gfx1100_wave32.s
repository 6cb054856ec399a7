// The shared macros and descriptor boilerplate: gfx1100_common.inc.
.include "gfx1100_common.inc"

// masks: wave32 EXEC / VCC are 32-bit. In columns 0-3 = a_lo, a_hi, b_lo, b_hi (u32). Dispatched
// with 32 items (one wave) or 45 / 64 items in a 64-item workgroup (two waves, the second partial:
// EXEC starts with only its first 13 lanes). Out columns:
//  0 exec_lo at entry            1 cndmask_e32(vcc_lo = a_lo >u b_lo) = unsigned max
//  2 vcc_lo (the wave's mask)    3 cndmask_e64 with an SGPR mask (a_lo <i b_lo) = signed max
//  4 that SGPR mask              5 1 where v_cmpx_gt_u32_e32 left the lane on, else 0
//  6 exec_lo after v_cmpx_e32    7 vcc_lo after v_cmpx_e32 (v_cmpx writes EXEC only: unchanged)
//  8 2 where v_cmpx_lt_i32_e64 (literal) left the lane on   9 exec_lo after it
// 10 3 under s_and_saveexec_b32 (a >u b), else 4 under s_and_not1_saveexec_b32 (a <i b), else 0
// 11 the first saveexec's saved EXEC   12 the second's (EXEC after the first)
// 13-15 64-bit a + b through v_add_co_u32 (SGPR carry) + v_add_co_ci_u32_e64: lo, hi, carry out
// 16-18 the same through vcc_lo and v_add_co_ci_u32_e32
// 19-21 a - b: v_sub_co_u32 + v_sub_co_ci_u32_e64: lo, hi, borrow out
// 22-23 v_mad_u64_u32 null carry: a_lo * a_hi + b (64-bit)   24-26 the same, carry to s34
// 27 v_readfirstlane_b32 of a_lo      28 s_bcnt1_i32_b32 of the vcc_lo mask
KERNEL masks
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  LOAD v5, 3
  v_mov_b32_e32 v10, exec_lo
  STORE 0, v10
  s_waitcnt vmcnt(0)
  v_cmp_gt_u32_e32 vcc_lo, v2, v4
  v_cndmask_b32_e32 v11, v4, v2, vcc_lo      // vcc bit set: src1 (a), else src0 (b)
  v_mov_b32_e32 v12, vcc_lo
  s_mov_b32 s37, vcc_lo                   // s_bcnt1 of it at the end (rarer instructions last)
  v_cmp_lt_i32_e64 s21, v2, v4
  v_cndmask_b32_e64 v13, v2, v4, s21
  v_mov_b32_e32 v14, s21
  STORE 1, v11
  STORE 2, v12
  STORE 3, v13
  STORE 4, v14
  // v_cmpx (GFX10+): EXEC only, VCC untouched
  s_mov_b32 s22, exec_lo
  s_mov_b32 vcc_lo, 0x5a5a0f0f
  v_mov_b32_e32 v15, 0
  v_cmpx_gt_u32_e32 v2, v4
  v_mov_b32_e32 v15, 1
  s_mov_b32 s23, exec_lo
  s_mov_b32 exec_lo, s22
  v_mov_b32_e32 v16, s23
  v_mov_b32_e32 v17, vcc_lo
  v_mov_b32_e32 v18, 0
  v_cmpx_lt_i32_e64 v2, 0x40000000
  v_mov_b32_e32 v18, 2
  s_mov_b32 s26, exec_lo
  s_mov_b32 exec_lo, s22
  v_mov_b32_e32 v19, s26
  STORE 5, v15
  STORE 6, v16
  STORE 7, v17
  STORE 8, v18
  STORE 9, v19
  // saveexec: EXEC &= a >u b, then EXEC = (a <i b) & ~EXEC, then EXEC |= the saved EXEC
  v_mov_b32_e32 v20, 0
  v_cmp_gt_u32_e32 vcc_lo, v2, v4
  s_and_saveexec_b32 s24, vcc_lo
  v_mov_b32_e32 v20, 3
  s_and_not1_saveexec_b32 s25, s21
  v_mov_b32_e32 v20, 4
  s_or_b32 exec_lo, exec_lo, s24
  v_mov_b32_e32 v21, s24
  v_mov_b32_e32 v22, s25
  STORE 10, v20
  STORE 11, v21
  STORE 12, v22
  // carry chains: SGPR carries (VOP3) and vcc_lo (VOP2 e32)
  v_add_co_u32 v23, s30, v2, v4
  v_add_co_ci_u32_e64 v24, s31, v3, v5, s30
  v_cndmask_b32_e64 v25, 0, 1, s31
  STORE 13, v23
  STORE 14, v24
  STORE 15, v25
  NEXT_OUT
  v_add_co_u32 v26, vcc_lo, v2, v4
  v_add_co_ci_u32_e32 v27, vcc_lo, v3, v5, vcc_lo
  v_cndmask_b32_e64 v28, 0, 1, vcc_lo
  v_sub_co_u32 v29, s32, v2, v4
  v_sub_co_ci_u32_e64 v30, s33, v3, v5, s32
  v_cndmask_b32_e64 v31, 0, 1, s33
  STORE 0, v26
  STORE 1, v27
  STORE 2, v28
  STORE 3, v29
  STORE 4, v30
  STORE 5, v31
  v_mad_u64_u32 v[32:33], null, v2, v3, v[4:5]
  v_mad_u64_u32 v[34:35], s34, v2, v3, v[4:5]
  v_cndmask_b32_e64 v36, 0, 1, s34
  STORE 6, v32
  STORE 7, v33
  STORE 8, v34
  STORE 9, v35
  STORE 10, v36
  v_readfirstlane_b32 s35, v2
  s_bcnt1_i32_b32 s36, s37
  v_mov_b32_e32 v37, s35
  v_mov_b32_e32 v38, s36
  STORE 11, v37
  STORE 12, v38
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: masks, .symbol: masks.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

// The shared macros and descriptor boilerplate: gfx1100_common.inc.
.include "gfx1100_common.inc"

// vopd: VOPD dual issue (two VALU ops in one 64-bit word; both read their sources before either
// writes). In columns 0-3 a, b, c, e (f32, multiples of 1/4: every result exact), 4-6 i, j, k
// (u32). Out columns:
//  0-1 v_dual_mul_f32 a*b :: v_dual_add_f32 c+e
//  2-3 v_dual_fmac_f32 (acc = c) c + a*b :: v_dual_mov_b32 c
//  4-5 v_dual_fmaak_f32 a*b + 0.75 :: v_dual_fmamk_f32 c*0.75 + e (one shared literal)
//  6-7 v_dual_cndmask_b32 (vcc_lo = a < b) ? b : a :: v_dual_lshlrev_b32 i << (k & 31)
//  8-9 v_dual_sub_f32 a-b :: v_dual_add_nc_u32 k+i     10-11 v_dual_subrev_f32 b-a :: v_dual_and_b32 k&i
// 12-13 v_dual_max_f32 max(a, b) :: v_dual_min_f32 min(c, e)
// 14-15 v24 = c; v_dual_add_f32 v24 = a+b :: v_dual_mul_f32 v25 = v24 * e (Y reads X's destination:
//       the old v24, so c*e)
// NEXT: 0-1 v27 = e; v_dual_mul_f32 v26 = v27 * b :: v_dual_mov_b32 v27 = a (X reads Y's
//       destination: e*b), then a
//  2-3 v_dual_mov_b32 2.0 :: v_dual_add_f32 -1.0 + e (inline constants)
KERNEL vopd
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  LOAD v5, 3
  LOAD v6, 4
  LOAD v7, 5
  LOAD v8, 6
  s_waitcnt vmcnt(0)
  v_dual_mul_f32 v10, v2, v3 :: v_dual_add_f32 v11, v4, v5
  v_mov_b32_e32 v12, v4
  v_dual_fmac_f32 v12, v2, v3 :: v_dual_mov_b32 v13, v4
  v_dual_fmaak_f32 v14, v2, v3, 0x3f400000 :: v_dual_fmamk_f32 v15, v4, 0x3f400000, v5
  v_cmp_lt_f32_e32 vcc_lo, v2, v3
  v_dual_cndmask_b32 v16, v2, v3 :: v_dual_lshlrev_b32 v17, v8, v6
  v_dual_sub_f32 v18, v2, v3 :: v_dual_add_nc_u32 v19, v8, v6
  v_dual_subrev_f32 v20, v2, v3 :: v_dual_and_b32 v21, v8, v6
  v_dual_max_f32 v22, v2, v3 :: v_dual_min_f32 v23, v4, v5
  v_mov_b32_e32 v24, v4
  v_dual_add_f32 v24, v2, v3 :: v_dual_mul_f32 v25, v24, v5
  v_mov_b32_e32 v27, v5
  v_dual_mul_f32 v26, v27, v3 :: v_dual_mov_b32 v27, v2
  v_dual_mov_b32 v30, 2.0 :: v_dual_add_f32 v31, -1.0, v5
  .irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
    STORE \k, v[10+\k]
  .endr
  NEXT_OUT
  STORE 0, v26
  STORE 1, v27
  STORE 2, v30
  STORE 3, v31
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: vopd, .symbol: vopd.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

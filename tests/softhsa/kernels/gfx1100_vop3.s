// The shared macros and descriptor boilerplate: gfx1100_common.inc.
.include "gfx1100_common.inc"

// vop3: VOP3 with a 32-bit literal (GFX11 allows one), abs / neg, op_sel on 16-bit ops, the
// three-operand integer ops. In columns: 0-2 a, b, c (u32), 3-5 x, y, z (f32), 6 d0, 7 d1, 8 d2
// (f64: a 64-dword column holds 32 lanes' 64-bit values), 9 s (v_perm selector), 10 old. Out
// columns:
//  0 |x| + -y (v_add_f32_e64)   1 -|x| * 0x40490fdb (pi, literal)   2 fma(x, 1.5 literal, -z)
//  3 fma(-|x|, y, |z|)   4 v_fma_f64 -d0 * d1 + |d2| (column 5 unused)   6 v_xor3_b32   7 v_add3_u32
//  8 v_lshl_or_b32 (a << (b & 31)) | c   9 v_bfe_u32 a, b, c   10 v_alignbit_b32 a, b, c
// 11 v_perm_b32 a, b, s   12 v_cndmask_b32_e64 -x, |y| under s21 = (x < y)
// 13 v_cndmask_b16 op_sel:[1,0,0,1] on old: hi = s21 ? b.l : a.h (lo kept)
// 14 v_cndmask_b16 op_sel:[0,1,0,0] on old: lo = s21 ? b.h : a.l (hi kept)
// 15 v_add_nc_u16 op_sel:[1,1,1] on old: hi = a.h + b.h (lo kept)
// 16 v_maxmin_f32 min(max(x, y), z)   17 v_lshl_add_u32   18 v_and_or_b32   19 v_or3_b32
// 20 v_mul_lo_u32 a * b   21 v_mul_hi_u32 a * b   22 v_add_nc_u32_e64 a + 0x12345678 (literal)
KERNEL vop3
  PROLOGUE
  LOAD v4, 0
  LOAD v5, 1
  LOAD v6, 2
  LOAD v7, 3
  LOAD v8, 4
  LOAD v9, 5
  LOAD64 v[40:41], 6
  LOAD64 v[42:43], 7
  LOAD64 v[44:45], 8
  LOAD v46, 9
  LOAD v47, 10
  s_waitcnt vmcnt(0)
  v_add_f32_e64 v10, |v7|, -v8
  v_mul_f32_e64 v11, -|v7|, 0x40490fdb
  v_fma_f32 v12, v7, 0x3fc00000, -v9
  v_fma_f32 v13, -|v7|, v8, |v9|
  v_fma_f64 v[14:15], -v[40:41], v[42:43], |v[44:45]|
  v_xor3_b32 v16, v4, v5, v6
  v_add3_u32 v17, v4, v5, v6
  v_lshl_or_b32 v18, v4, v5, v6
  v_bfe_u32 v19, v4, v5, v6
  v_alignbit_b32 v20, v4, v5, v6
  v_perm_b32 v21, v4, v5, v46
  v_cmp_lt_f32_e64 s21, v7, v8
  v_cndmask_b32_e64 v22, -v7, |v8|, s21
  v_mov_b32_e32 v26, v47
  v_mov_b32_e32 v27, v47
  v_mov_b32_e32 v28, v47
  .long 0xd65d481a, 0x00560b04           // v_cndmask_b16 v26, v4, v5, s21 op_sel:[1,0,0,1] (hi = s21 ? v5.l : v4.h)
  .long 0xd65d101b, 0x00560b04           // v_cndmask_b16 v27, v4, v5, s21 op_sel:[0,1,0,0] (lo = s21 ? v5.h : v4.l)
  v_add_nc_u16 v28, v4, v5 op_sel:[1,1,1]
  STORE 0, v10
  STORE 1, v11
  STORE 2, v12
  STORE 3, v13
  STORE64 4, v[14:15]
  STORE 6, v16
  STORE 7, v17
  STORE 8, v18
  STORE 9, v19
  STORE 10, v20
  STORE 11, v21
  STORE 12, v22
  STORE 13, v26
  STORE 14, v27
  STORE 15, v28
  NEXT_OUT
  v_maxmin_f32 v30, v7, v8, v9
  v_lshl_add_u32 v31, v4, v5, v6
  v_and_or_b32 v32, v4, v5, v6
  v_or3_b32 v33, v4, v5, v6
  v_mul_lo_u32 v34, v4, v5
  v_mul_hi_u32 v35, v4, v5
  v_add_nc_u32_e64 v36, v4, 0x12345678
  STORE 0, v30
  STORE 1, v31
  STORE 2, v32
  STORE 3, v33
  STORE 4, v34
  STORE 5, v35
  STORE 6, v36
  s_endpgm

// vop3_div: in columns 0 n, 1 d (f32); out column 0 = n / d through the sequence clang-19 emits
// for gfx1100 with -cl-fp32-correctly-rounded-divide-sqrt (f32 denormals on: no s_denorm_mode).
KERNEL vop3_div
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  s_waitcnt vmcnt(0)
  v_div_scale_f32 v4, null, v3, v3, v2
  v_div_scale_f32 v7, vcc_lo, v2, v3, v2
  v_rcp_f32_e32 v5, v4
  s_delay_alu instid0(TRANS32_DEP_1)
  v_fma_f32 v6, -v4, v5, 1.0
  v_fmac_f32_e32 v5, v6, v5
  v_mul_f32_e32 v6, v7, v5
  v_fma_f32 v8, -v4, v6, v7
  v_fmac_f32_e32 v6, v8, v5
  v_fma_f32 v4, -v4, v6, v7
  v_div_fmas_f32 v4, v4, v5, v6
  v_div_fixup_f32 v2, v4, v3, v2
  STORE 0, v2
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: vop3, .symbol: vop3.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop3_div, .symbol: vop3_div.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

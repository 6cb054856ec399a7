// The shared macros and descriptor boilerplate: gfx1100_common.inc.
.include "gfx1100_common.inc"

// vop3p: mixed-precision FMA and packed 16-bit math. In columns 0 p, 1 q, 2 r (f16 pairs), 3 f
// (f32), 4 old, 5 u, 6 w (u16 pairs). For v_fma_mix*, op_sel_hi[i] = 1 makes source i an f16
// (its half chosen by op_sel[i]), 0 an f32. Out columns:
//  0 mix_f32 p.l * q.l + f     1 mix_f32 p.h * q.l + r.h     2 mix_f32 -p.l * |q.h| + f
//  3 v13 = old; mixlo_f16 p.l * q.l + f (hi kept)    4 v14 = old; mixhi_f16 p.h * q.h + r.l (lo kept)
//  5 v_pk_add_f16 p + q    6 v_pk_mul_f16 op_sel:[1,0] op_sel_hi:[0,1]: lo p.h*q.l, hi p.l*q.h
//  7 v_pk_fma_f16 neg_lo:[1,0,0] neg_hi:[0,0,1]: lo -p.l*q.l + r.l, hi p.h*q.h - r.h
//  8 v_pk_add_u16 op_sel:[1,0] op_sel_hi:[0,1]: lo u.h + w.l, hi u.l + w.h
//  9 v_pk_lshlrev_b16 w, u: u.x << (w.x & 15)   10 v_pk_max_i16 u, w   11 v_pk_sub_u16 u, w
KERNEL vop3p
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  LOAD v5, 3
  LOAD v6, 4
  LOAD v7, 5
  LOAD v8, 6
  s_waitcnt vmcnt(0)
  v_fma_mix_f32 v10, v2, v3, v5 op_sel_hi:[1,1,0]
  v_fma_mix_f32 v11, v2, v3, v4 op_sel:[1,0,1] op_sel_hi:[1,1,1]
  v_fma_mix_f32 v12, -v2, |v3|, v5 op_sel:[0,1,0] op_sel_hi:[1,1,0]
  v_mov_b32_e32 v13, v6
  v_mov_b32_e32 v14, v6
  v_fma_mixlo_f16 v13, v2, v3, v5 op_sel_hi:[1,1,0]
  v_fma_mixhi_f16 v14, v2, v3, v4 op_sel:[1,1,0] op_sel_hi:[1,1,1]
  .irp k, 0,1,2,3,4
    STORE \k, v[10+\k]
  .endr
  v_pk_add_f16 v15, v2, v3
  v_pk_mul_f16 v16, v2, v3 op_sel:[1,0] op_sel_hi:[0,1]
  v_pk_fma_f16 v17, v2, v3, v4 neg_lo:[1,0,0] neg_hi:[0,0,1]
  v_pk_add_u16 v18, v7, v8 op_sel:[1,0] op_sel_hi:[0,1]
  v_pk_lshlrev_b16 v19, v8, v7
  v_pk_max_i16 v20, v7, v8
  v_pk_sub_u16 v21, v7, v8
  .irp k, 5,6,7,8,9,10,11
    STORE \k, v[10+\k]
  .endr
  s_endpgm

// wmma: wave32 RDNA3 WMMA, lane-major in/out (not columns). in bytes: 0 A8 (lane l: 16 int8 =
// row l % 16 of A), 512 B8 (lane l: column l % 16 of B, B[k][j] at byte k), 1024 C (lane l: 8
// dwords, C[2v + l / 16][l % 16] in dword v), 2048 Ah (lane l: 16 f16 = row l % 16), 3072 Bh
// (lane l: column l % 16), 4096 Cf (f32, the C layout). out: five 1024-byte results in the C
// layout: iu8 signed A and B (neg_lo:[1,1,0]), iu8 unsigned, iu8 signed A only (neg_lo:[1,0,0]),
// f32_16x16x16_f16, the f16 one again in place (D = C = the previous result).
KERNEL wmma, 96
  PROLOGUE
  v_lshlrev_b32_e32 v60, 4, v0
  v_lshlrev_b32_e32 v59, 5, v0
  global_load_b128 v[8:11], v60, s[4:5]
  global_load_b128 v[12:15], v60, s[4:5] offset:512
  global_load_b128 v[16:19], v59, s[4:5] offset:1024
  global_load_b128 v[20:23], v59, s[4:5] offset:1040
  global_load_b128 v[24:27], v59, s[4:5] offset:2048
  global_load_b128 v[28:31], v59, s[4:5] offset:2064
  global_load_b128 v[32:35], v59, s[4:5] offset:3072
  global_load_b128 v[36:39], v59, s[4:5] offset:3088
  NEXT_IN
  global_load_b128 v[40:43], v59, s[4:5]
  global_load_b128 v[44:47], v59, s[4:5] offset:16
  s_waitcnt vmcnt(0)
  v_wmma_i32_16x16x16_iu8 v[48:55], v[8:11], v[12:15], v[16:23] neg_lo:[1,1,0]
  v_wmma_i32_16x16x16_iu8 v[64:71], v[8:11], v[12:15], v[16:23]
  v_wmma_i32_16x16x16_iu8 v[72:79], v[8:11], v[12:15], v[16:23] neg_lo:[1,0,0]
  v_wmma_f32_16x16x16_f16 v[80:87], v[24:31], v[32:39], v[40:47]
  global_store_b128 v59, v[48:51], s[6:7]
  global_store_b128 v59, v[52:55], s[6:7] offset:16
  global_store_b128 v59, v[64:67], s[6:7] offset:1024
  global_store_b128 v59, v[68:71], s[6:7] offset:1040
  global_store_b128 v59, v[72:75], s[6:7] offset:2048
  global_store_b128 v59, v[76:79], s[6:7] offset:2064
  global_store_b128 v59, v[80:83], s[6:7] offset:3072
  global_store_b128 v59, v[84:87], s[6:7] offset:3088
  v_wmma_f32_16x16x16_f16 v[80:87], v[24:31], v[32:39], v[80:87]
  NEXT_OUT
  global_store_b128 v59, v[80:83], s[6:7]
  global_store_b128 v59, v[84:87], s[6:7] offset:16
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: vop3p, .symbol: vop3p.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: wmma, .symbol: wmma.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 96, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

// The shared macros and descriptor boilerplate: gfx1100_common.inc.
.include "gfx1100_common.inc"

// vop_t16: 16-bit VOP1 / VOP2 / VOPC operands in the 32-bit encodings name register halves
// (true16: v3.l = bits 15:0, v3.h = bits 31:16; a write to one half keeps the other).
// llvm-mc-19 assembles only the fake16 forms of most of these for gfx1100, so they are encoded
// with .long (the instruction each stands for in its comment): in a VOP1/VOP2/VOPC VGPR field,
// bit 7 selects the high half of register (field & 127). v_mov_b16 is llvm-mc's own true16 syntax.
// In columns: 0 x (f32), 1 h (f16 pair), 2 u (u16 pair), 3 g (f16 pair), 4 old (a preset
// destination). Out columns:
//  0 v10 = old; cvt_f16_f32 v10.h, x      1 v11 = old; cvt_f16_f32 v11.l, x
//  2 cvt_f32_f16 h.h    3 cvt_f32_f16 h.l    4 cvt_u32_u16 u.h    5 cvt_i32_i16 u.h
//  6 v16 = old; v_mov_b16 v16.h, u.l       7 v17 = old; v_mov_b16 v17.l, u.h
//  8 v18 = old; add_f16 v18.h, h.l, g.h    9 v19 = old; mul_f16 v19.l, h.h, g.l
// 10 v20 = old; max_f16 v20.h, h.h, g.h
// 11-14 (as 0/1 through v_cndmask_b32 on vcc_lo) cmp_lt_f16 h.h < g.l, cmp_lt_u16 u.h < u.l,
//       cmp_gt_i16 u.l > u.h, cmp_eq_f16 h.l == g.l
// 15 v_add_nc_u32_e32 x_bits + u (GFX11 name), 16 v_sub_nc_u32_e32, 17 v_xnor_b32_e32
KERNEL vop_t16
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  LOAD v5, 3
  LOAD v6, 4
  s_waitcnt vmcnt(0)
  v_mov_b32_e32 v10, v6
  v_mov_b32_e32 v11, v6
  v_mov_b32_e32 v16, v6
  v_mov_b32_e32 v17, v6
  v_mov_b32_e32 v18, v6
  v_mov_b32_e32 v19, v6
  v_mov_b32_e32 v20, v6
  .long 0x7f141502                       // v_cvt_f16_f32_e32 v10.h, v2
  .long 0x7e161502                       // v_cvt_f16_f32_e32 v11.l, v2
  .long 0x7e181783                       // v_cvt_f32_f16_e32 v12, v3.h
  .long 0x7e1a1703                       // v_cvt_f32_f16_e32 v13, v3.l
  .long 0x7e1cd784                       // v_cvt_u32_u16_e32 v14, v4.h
  .long 0x7e1ed584                       // v_cvt_i32_i16_e32 v15, v4.h
  v_mov_b16_e32 v16.h, v4.l
  v_mov_b16_e32 v17.l, v4.h
  .long 0x65250b03                       // v_add_f16_e32 v18.h, v3.l, v5.h
  .long 0x6a260b83                       // v_mul_f16_e32 v19.l, v3.h, v5.l
  STORE 0, v10
  STORE 1, v11
  STORE 2, v12
  STORE 3, v13
  STORE 4, v14
  STORE 5, v15
  STORE 6, v16
  STORE 7, v17
  STORE 8, v18
  STORE 9, v19
  .long 0x73290b83                       // v_max_f16_e32 v20.h, v3.h, v5.h
  STORE 10, v20
  .long 0x7c020b83                       // v_cmp_lt_f16_e32 vcc_lo, v3.h, v5.l
  v_cndmask_b32_e64 v21, 0, 1, vcc_lo
  .long 0x7c720984                       // v_cmp_lt_u16_e32 vcc_lo, v4.h, v4.l
  v_cndmask_b32_e64 v22, 0, 1, vcc_lo
  .long 0x7c690904                       // v_cmp_gt_i16_e32 vcc_lo, v4.l, v4.h
  v_cndmask_b32_e64 v23, 0, 1, vcc_lo
  .long 0x7c040b03                       // v_cmp_eq_f16_e32 vcc_lo, v3.l, v5.l
  v_cndmask_b32_e64 v24, 0, 1, vcc_lo
  v_add_nc_u32_e32 v25, v2, v4
  v_sub_nc_u32_e32 v26, v2, v4
  v_xnor_b32_e32 v27, v2, v4
  STORE 11, v21
  STORE 12, v22
  STORE 13, v23
  STORE 14, v24
  STORE 15, v25
  NEXT_OUT
  STORE 0, v26
  STORE 1, v27
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: vop_t16, .symbol: vop_t16.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

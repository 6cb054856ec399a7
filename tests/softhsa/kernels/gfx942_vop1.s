// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// vop1_cvt: in column 0 = f32 x, column 1 = i32 n. Conversions and bit scans, one out column
// each: cvt_f32_i32(n), cvt_f32_u32(n), cvt_i32_f32(x), cvt_u32_f32(x), cvt_f16_f32(x),
// cvt_f32_f16(n[15:0]), ffbh_u32(n), bfrev_b32(n), ffbh_i32(n), not_b32(n).
KERNEL vop1_cvt
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  s_waitcnt vmcnt(0)
  v_cvt_f32_i32_e32 v10, v3
  v_cvt_f32_u32_e32 v11, v3
  v_cvt_i32_f32_e32 v12, v2
  v_cvt_u32_f32_e32 v13, v2
  v_mov_b32_e32 v14, 0                    // the f16 result lands in the low half
  v_cvt_f16_f32_e32 v14, v2
  v_cvt_f32_f16_e32 v15, v3
  v_ffbh_u32_e32 v16, v3
  v_bfrev_b32_e32 v17, v3
  v_ffbh_i32_e32 v18, v3
  v_not_b32_e32 v19, v3
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
  s_endpgm

// vop1_math: in column 0 = f32 x (rcp / sqrt / rsq / log2 operand), column 1 = f32 e (exp2
// operand). Out: rcp(x), sqrt(x), rsq(x), log(x), exp(e).
KERNEL vop1_math
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  s_waitcnt vmcnt(0)
  v_rcp_f32_e32 v10, v2
  v_sqrt_f32_e32 v11, v2
  v_rsq_f32_e32 v12, v2
  v_log_f32_e32 v13, v2
  v_exp_f32_e32 v14, v3
  STORE 0, v10
  STORE 1, v11
  STORE 2, v12
  STORE 3, v13
  STORE 4, v14
  s_endpgm

// vop1_round: in column 0 = f32 x. Out: floor, ceil, trunc, rndne, fract, frexp_mant,
// frexp_exp_i32 of x (v_fract_f32 runs and stores last: see run() in the test).
KERNEL vop1_round
  PROLOGUE
  LOAD v2, 0
  s_waitcnt vmcnt(0)
  v_floor_f32_e32 v10, v2
  v_ceil_f32_e32 v11, v2
  v_trunc_f32_e32 v12, v2
  v_rndne_f32_e32 v13, v2
  v_frexp_mant_f32_e32 v15, v2
  v_frexp_exp_i32_f32_e32 v16, v2
  STORE 0, v10
  STORE 1, v11
  STORE 2, v12
  STORE 3, v13
  STORE 5, v15
  STORE 6, v16
  v_fract_f32_e32 v14, v2
  STORE 4, v14
  s_endpgm

// vop1_f64: in columns 0-1 = f64 d, column 2 = f32 x, column 3 = i32 n. Out (f64 results take
// two columns): cvt_f64_f32(x) @0, cvt_f32_f64(d) @2, cvt_i32_f64(d) @3, cvt_u32_f64(d) @4,
// cvt_f64_i32(n) @5, cvt_f64_u32(n) @7, floor_f64(d) @9, rndne_f64(d) @11, trunc_f64(d) @13.
KERNEL vop1_f64
  PROLOGUE
  LOAD64 v[2:3], 0
  LOAD v4, 2
  LOAD v5, 3
  s_waitcnt vmcnt(0)
  v_cvt_f64_f32_e32 v[10:11], v4
  v_cvt_f32_f64_e32 v12, v[2:3]
  v_cvt_i32_f64_e32 v13, v[2:3]
  v_cvt_u32_f64_e32 v14, v[2:3]
  v_cvt_f64_i32_e32 v[16:17], v5
  v_cvt_f64_u32_e32 v[18:19], v5
  v_floor_f64_e32 v[20:21], v[2:3]
  v_rndne_f64_e32 v[22:23], v[2:3]
  v_trunc_f64_e32 v[24:25], v[2:3]
  STORE64 0, v[10:11]
  STORE 2, v12
  STORE 3, v13
  STORE 4, v14
  STORE64 5, v[16:17]
  STORE64 7, v[18:19]
  STORE64 9, v[20:21]
  STORE64 11, v[22:23]
  STORE64 13, v[24:25]
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: vop1_cvt, .symbol: vop1_cvt.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop1_math, .symbol: vop1_math.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop1_round, .symbol: vop1_round.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop1_f64, .symbol: vop1_f64.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// vop3_float: in columns 0-2 = f32 a, b, c; columns 3-4, 5-6, 7-8 = f64 x, y, z; column 9 = i32
// n. Out: fma(a,b,c) @0, fma(-a,|b|,-c) @1, ldexp(a,n) @2, cndmask_e64(-a, |b|, mask a<b in an
// SGPR pair) @3, add_f32_e64(|a|, -b) @4, fma_f64(x,y,z) @5-6, fma_f64(-x,y,|z|) @7-8.
KERNEL vop3_float
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  LOAD64 v[6:7], 3
  LOAD64 v[8:9], 5
  LOAD64 v[10:11], 7
  LOAD v5, 9
  s_waitcnt vmcnt(0)
  v_fma_f32 v20, v2, v3, v4
  v_fma_f32 v21, -v2, |v3|, -v4
  v_ldexp_f32 v22, v2, v5
  v_cmp_lt_f32_e64 s[20:21], v2, v3
  v_cndmask_b32_e64 v23, -v2, |v3|, s[20:21]  // mask ? |b| : -a
  v_add_f32_e64 v24, |v2|, -v3
  v_fma_f64 v[26:27], v[6:7], v[8:9], v[10:11]
  v_fma_f64 v[28:29], -v[6:7], v[8:9], |v[10:11]|
  STORE 0, v20
  STORE 1, v21
  STORE 2, v22
  STORE 3, v23
  STORE 4, v24
  STORE64 5, v[26:27]
  STORE64 7, v[28:29]
  s_endpgm

// vop3_int: in columns 0-3 = u32 a, b, c, s (s: a v_perm_b32 selector). Out: mad_u32_u24(a,b,c)
// @0, mad_u64_u32(a, b, {c, a}) lo/hi/carry @1-3, bfe_u32(a, b, c) @4, bfe_i32(a, b, c) @5,
// bfi_b32(a, b, c) @6, alignbit(a, b, c) @7, lshl_add_u32(a, b, c) @8, add3_u32 @9,
// perm_b32(a, b, s) @10.
KERNEL vop3_int
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  LOAD v5, 3
  s_waitcnt vmcnt(0)
  v_mad_u32_u24 v20, v2, v3, v4
  v_mov_b32_e32 v8, v4                    // v[8:9] = {lo: c, hi: a}, the 64-bit addend
  v_mov_b32_e32 v9, v2
  v_mad_u64_u32 v[22:23], s[20:21], v2, v3, v[8:9]
  v_cndmask_b32_e64 v24, 0, 1, s[20:21]
  v_bfe_u32 v25, v2, v3, v4               // offset b[4:0], width c[4:0]
  v_bfe_i32 v26, v2, v3, v4
  v_bfi_b32 v27, v2, v3, v4               // (a & b) | (~a & c)
  v_alignbit_b32 v28, v2, v3, v4          // ({a, b} >> c[4:0])[31:0]
  v_lshl_add_u32 v29, v2, v3, v4          // (a << b[4:0]) + c
  v_add3_u32 v30, v2, v3, v4
  v_perm_b32 v31, v2, v3, v5
  STORE 0, v20
  STORE 1, v22
  STORE 2, v23
  STORE 3, v24
  STORE 4, v25
  STORE 5, v26
  STORE 6, v27
  STORE 7, v28
  STORE 8, v29
  STORE 9, v30
  STORE 10, v31
  s_endpgm

// vop3_<op>: one three-operand min / max / median each (in columns 0-2 = a, b, c; out column 0),
// so that an op the interpreter lacks stops only its own kernel.
.macro MINMAX op
KERNEL vop3_\op
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  s_waitcnt vmcnt(0)
  v_\op v10, v2, v3, v4
  STORE 0, v10
  s_endpgm
.endm
MINMAX min3_f32
MINMAX max3_f32
MINMAX med3_f32
MINMAX min3_i32
MINMAX max3_i32
MINMAX med3_i32

// vop3_div: in columns 0, 1 = f32 n, d; out column 0 = n / d by the sequence clang-19 emits for
// an OpenCL `a / b` with -cl-fp32-correctly-rounded-divide-sqrt on gfx942 (registers renamed):
// scale the operands away from overflow / denormals, refine 1/d by Newton-Raphson with fused
// multiply-adds, undo the scale (v_div_fmas, VCC) and patch the special cases (v_div_fixup).
KERNEL vop3_div
  PROLOGUE
  LOAD v2, 0                              // n
  LOAD v3, 1                              // d
  s_waitcnt vmcnt(0)
  v_div_scale_f32 v10, s[20:21], v3, v3, v2
  v_rcp_f32_e32 v11, v10
  v_div_scale_f32 v12, vcc, v2, v3, v2
  v_fma_f32 v13, -v10, v11, 1.0
  v_fmac_f32_e32 v11, v13, v11
  v_mul_f32_e32 v13, v12, v11
  v_fma_f32 v14, -v10, v13, v12
  v_fmac_f32_e32 v13, v14, v11
  v_fma_f32 v10, -v10, v13, v12
  v_div_fmas_f32 v10, v10, v11, v13
  v_div_fixup_f32 v15, v10, v3, v2
  STORE 0, v15
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: vop3_float, .symbol: vop3_float.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop3_int, .symbol: vop3_int.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop3_min3_f32, .symbol: vop3_min3_f32.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop3_max3_f32, .symbol: vop3_max3_f32.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop3_med3_f32, .symbol: vop3_med3_f32.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop3_min3_i32, .symbol: vop3_min3_i32.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop3_max3_i32, .symbol: vop3_max3_i32.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop3_med3_i32, .symbol: vop3_med3_i32.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop3_div, .symbol: vop3_div.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

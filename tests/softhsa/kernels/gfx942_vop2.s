// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// vop2_float: in columns 0, 1, 2 = f32 a, b, c. Out: a+b, a-b, b-a (subrev), a*b, min(a,b),
// max(a,b), fmac (c + a*b, fused, into a register holding c), fmamk a*1.5+b, fmaak a*b-0.75.
KERNEL vop2_float
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  s_waitcnt vmcnt(0)
  v_add_f32_e32 v10, v2, v3
  v_sub_f32_e32 v11, v2, v3
  v_subrev_f32_e32 v12, v2, v3
  v_mul_f32_e32 v13, v2, v3
  v_min_f32_e32 v14, v2, v3
  v_max_f32_e32 v15, v2, v3
  v_mov_b32_e32 v16, v4
  v_fmac_f32_e32 v16, v2, v3              // v16 = v2 * v3 + v16
  v_fmamk_f32 v17, v2, 0x3fc00000, v3     // v2 * 1.5 + v3 (the literal K in the middle)
  v_fmaak_f32 v18, v2, v3, 0xbf400000     // v2 * v3 + -0.75
  STORE 0, v10
  STORE 1, v11
  STORE 2, v12
  STORE 3, v13
  STORE 4, v14
  STORE 5, v15
  STORE 6, v16
  STORE 7, v17
  STORE 8, v18
  s_endpgm

// vop2_int: in columns 0, 1 = u32 a, b. Out: mul_u32_u24, mul_i32_i24, lshlrev (b << a),
// lshrrev, ashrrev, and, or, xor, cndmask(a, b, vcc = a > b unsigned) (= max), mul_hi_u32_u24
// (last).
KERNEL vop2_int
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  s_waitcnt vmcnt(0)
  v_mul_u32_u24_e32 v10, v2, v3
  v_mul_i32_i24_e32 v11, v2, v3
  v_lshlrev_b32_e32 v12, v2, v3           // the shift count is the first operand
  v_lshrrev_b32_e32 v13, v2, v3
  v_ashrrev_i32_e32 v14, v2, v3
  v_and_b32_e32 v15, v2, v3
  v_or_b32_e32 v16, v2, v3
  v_xor_b32_e32 v17, v2, v3
  v_cmp_gt_u32_e32 vcc, v2, v3
  v_cndmask_b32_e32 v18, v3, v2, vcc      // vcc ? v2 : v3
  STORE 0, v10
  STORE 1, v11
  STORE 2, v12
  STORE 3, v13
  STORE 4, v14
  STORE 5, v15
  STORE 6, v16
  STORE 7, v17
  STORE 8, v18
  v_mul_hi_u32_u24_e32 v19, v2, v3
  STORE 9, v19
  s_endpgm

// vop2_carry: in columns 0-3 = u32 a_lo, a_hi, b_lo, b_hi. Out: the 64-bit sum a + b through VCC
// (lo, hi, carry out), the 64-bit difference a - b (lo, hi, borrow out), b_lo - a_lo by
// v_subrev_co_u32 (value, borrow), and the sum again with the carries in SGPR pairs (VOP3).
KERNEL vop2_carry
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  LOAD v5, 3
  s_waitcnt vmcnt(0)
  v_add_co_u32_e32 v10, vcc, v2, v4
  v_addc_co_u32_e32 v11, vcc, v3, v5, vcc
  v_cndmask_b32_e64 v12, 0, 1, vcc
  v_sub_co_u32_e32 v13, vcc, v2, v4
  v_subb_co_u32_e32 v14, vcc, v3, v5, vcc
  v_cndmask_b32_e64 v15, 0, 1, vcc
  v_subrev_co_u32_e32 v16, vcc, v2, v4    // v4 - v2
  v_cndmask_b32_e64 v17, 0, 1, vcc
  v_add_co_u32_e64 v18, s[10:11], v2, v4
  v_addc_co_u32_e64 v19, s[12:13], v3, v5, s[10:11]
  v_cndmask_b32_e64 v20, 0, 1, s[12:13]
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
  STORE 10, v20
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: vop2_float, .symbol: vop2_float.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop2_int, .symbol: vop2_int.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: vop2_carry, .symbol: vop2_carry.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

// ---- shared boilerplate (the same in every gfx942_*.s) -----------------------------------------
// Every kernel takes kernargs {in: u64, out: u64}; the workgroup is one wave of 64 lanes unless the
// test says otherwise. "Column" c of in/out is 64 dwords at byte 256*c, dword `lane` belonging
// to that lane.
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.macro KERNEL name, vgprs=64, lds=0
  .rodata
  .p2align 6
  .amdhsa_kernel \name
    .amdhsa_user_sgpr_kernarg_segment_ptr 1      // s[0:1]
    .amdhsa_system_sgpr_workgroup_id_x 1         // s2
    .amdhsa_next_free_vgpr \vgprs
    .amdhsa_next_free_sgpr 96
    .amdhsa_accum_offset \vgprs
    .amdhsa_kernarg_size 16
    .amdhsa_group_segment_fixed_size \lds
    .amdhsa_float_denorm_mode_32 3               // f32 denormals kept
    .amdhsa_float_denorm_mode_16_64 3
    .amdhsa_ieee_mode 1
  .end_amdhsa_kernel
  .text
  .globl \name
  .p2align 8
  .type \name,@function
\name:
.endm
// s[4:5] = in, s[6:7] = out, v0 = lane (work-item id x), v1 = 4 * lane, v63 = 8 * lane
.macro PROLOGUE
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_and_b32_e32 v0, 0x3ff, v0
  v_lshlrev_b32_e32 v1, 2, v0
  v_lshlrev_b32_e32 v63, 3, v0
  s_waitcnt lgkmcnt(0)
.endm
.macro LOAD reg, col                             // reg = in column `col` (col < 16)
  global_load_dword \reg, v1, s[4:5] offset:256*(\col)
.endm
.macro STORE col, reg                            // out column `col` (col < 16) = reg
  global_store_dword v1, \reg, s[6:7] offset:256*(\col)
.endm
.macro LOAD64 reg, col                           // a 64-bit lane value from columns col, col+1
  global_load_dwordx2 \reg, v63, s[4:5] offset:256*(\col)
.endm
.macro STORE64 col, reg
  global_store_dwordx2 v63, \reg, s[6:7] offset:256*(\col)
.endm
.macro NEXT_OUT                                  // out += 16 columns: the next STORE 0 is column 16
  s_add_u32 s6, s6, 4096
  s_addc_u32 s7, s7, 0
.endm
// -------------------------------------------------------------------------------------------------

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

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

// dpp_sdwa: in columns 0, 1, 2 = u32 x, y, old. Every result register first holds `old`, so a
// lane that a DPP row / bank mask (or an invalid source lane without bound_ctrl) keeps from
// writing shows old. Out columns, in order:
//  0 quad_perm:[3,2,1,0]            1 quad_perm:[1,1,0,2] bank_mask:0x5   2 row_shl:1
//  3 row_shr:3 bound_ctrl (0 for invalid lanes)                        4 row_ror:5
//  5 row_mirror                      6 row_half_mirror                 7 row_bcast:15 row_mask:0xa
//  8 row_bcast:31 row_mask:0xc       9 v_add_u32_dpp x(row_shr:1), y bound_ctrl
// 10 v_sub_u32_dpp x(row_mirror), y row_mask:0x5 bank_mask:0xe
// SDWA: 11 v_mov dst WORD_1 (preserve) <- x BYTE_2     12 v_mov dst BYTE_1 (pad) <- x WORD_1
// 13 v_add_u32 sext(x BYTE_0) + y WORD_1               14 v_sub_u32 x BYTE_3 - y BYTE_1 into WORD_0, upper sign-extended
// 15 v_cvt_f32_i32 of sext(x BYTE_1)                   16 v_and_b32 x WORD_0 & y WORD_1 into BYTE_2 (preserve)
.macro DPP col, ctrl:vararg
  v_mov_b32_e32 v10, v4
  v_mov_b32_dpp v10, v2 \ctrl
  STORE \col, v10
.endm
KERNEL dpp_sdwa
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  s_waitcnt vmcnt(0)
  DPP 0, quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
  DPP 1, quad_perm:[1,1,0,2] row_mask:0xf bank_mask:0x5
  DPP 2, row_shl:1 row_mask:0xf bank_mask:0xf
  DPP 3, row_shr:3 row_mask:0xf bank_mask:0xf bound_ctrl:0
  DPP 4, row_ror:5 row_mask:0xf bank_mask:0xf
  DPP 5, row_mirror row_mask:0xf bank_mask:0xf
  DPP 6, row_half_mirror row_mask:0xf bank_mask:0xf
  DPP 7, row_bcast:15 row_mask:0xa bank_mask:0xf
  DPP 8, row_bcast:31 row_mask:0xc bank_mask:0xf
  v_mov_b32_e32 v10, v4
  v_add_u32_dpp v10, v2, v3 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:0
  STORE 9, v10
  v_mov_b32_e32 v10, v4
  v_sub_u32_dpp v10, v2, v3 row_mirror row_mask:0x5 bank_mask:0xe
  STORE 10, v10
  v_mov_b32_e32 v10, v4
  v_mov_b32_sdwa v10, v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_2
  STORE 11, v10
  v_mov_b32_e32 v10, v4
  v_mov_b32_sdwa v10, v2 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:WORD_1
  STORE 12, v10
  v_add_u32_sdwa v10, sext(v2), v3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:WORD_1
  STORE 13, v10
  v_sub_u32_sdwa v10, v2, v3 dst_sel:WORD_0 dst_unused:UNUSED_SEXT src0_sel:BYTE_3 src1_sel:BYTE_1
  STORE 14, v10
  v_cvt_f32_i32_sdwa v10, sext(v2) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1
  STORE 15, v10
  NEXT_OUT
  v_mov_b32_e32 v10, v4
  v_and_b32_sdwa v10, v2, v3 dst_sel:BYTE_2 dst_unused:UNUSED_PRESERVE src0_sel:WORD_0 src1_sel:WORD_1
  STORE 0, v10
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: dpp_sdwa, .symbol: dpp_sdwa.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

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

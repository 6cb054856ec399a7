// The shared macros and descriptor boilerplate: gfx1100_common.inc.
.include "gfx1100_common.inc"

// dpp: GFX10+ DPP16 (rows of 16 lanes: two rows in a wave32; row_share / row_xmask new, no
// row_bcast / wave shifts), DPP8 (lane l reads lane (l & ~7) + sel[l & 7]) and the cross-row
// permutes. In columns 0 x, 1 y (u32), 2 old (every destination preset to it), 3 f, 4 g (f32).
// Out columns: 0 quad_perm:[3,2,1,0]  1 quad_perm:[1,1,0,2] bank_mask:0x5  2 row_shl:1
//  3 row_shr:3 bound_ctrl:1  4 row_ror:5  5 row_mirror  6 row_half_mirror
//  7 row_share:5 row_mask:0x2 (lane 5 of the row, only row 1 writes)  8 row_xmask:6 (lane ^ 6)
//  9 v_add_nc_u32_dpp x[src] + y row_shr:1 bound_ctrl:1  10 v_add_f32_dpp f[src] + g row_mirror
//    row_mask:0x1 bank_mask:0xe  11 v_mov_b32 dpp8:[1,0,3,2,7,7,0,4]
// 12 v_add_f32 dpp8:[3,2,1,0,7,6,5,4] f[src] + g   13 v_permlanex16_b32 x, s_lo, s_hi: lane l reads
//    lane (l < 16 ? 16 : 0) + nibble (l % 16) of s_lo:s_hi as a 64-bit select (the other row)
// 14 v_permlane16_b32 the same in the lane's own row   15 row_shl:15 (no bound_ctrl: only the
//    row's lane 0 has a source, the others keep old)
KERNEL dpp
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  LOAD v5, 3
  LOAD v6, 4
  s_waitcnt vmcnt(0)
  .irp k, 10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25
    v_mov_b32_e32 v\k, v4
  .endr
  v_mov_b32_dpp v10, v2 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v11, v2 quad_perm:[1,1,0,2] row_mask:0xf bank_mask:0x5
  v_mov_b32_dpp v12, v2 row_shl:1 row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v13, v2 row_shr:3 row_mask:0xf bank_mask:0xf bound_ctrl:1
  v_mov_b32_dpp v14, v2 row_ror:5 row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v15, v2 row_mirror row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v16, v2 row_half_mirror row_mask:0xf bank_mask:0xf
  v_mov_b32_dpp v17, v2 row_share:5 row_mask:0x2 bank_mask:0xf
  v_mov_b32_dpp v18, v2 row_xmask:6 row_mask:0xf bank_mask:0xf
  v_add_nc_u32_dpp v19, v2, v3 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
  v_add_f32_dpp v20, v5, v6 row_mirror row_mask:0x1 bank_mask:0xe
  v_mov_b32_dpp v21, v2 dpp8:[1,0,3,2,7,7,0,4]
  v_add_f32_dpp v22, v5, v6 dpp8:[3,2,1,0,7,6,5,4]
  v_mov_b32_dpp v25, v2 row_shl:15 row_mask:0xf bank_mask:0xf
  .irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,15
    STORE \k, v[10+\k]
  .endr
  s_mov_b32 s20, 0x2c4e6a08                // the permutes last (stored as they go)
  s_mov_b32 s21, 0xf1d3b597
  v_permlanex16_b32 v23, v2, s20, s21
  STORE 13, v23
  v_permlane16_b32 v24, v2, s20, s21
  STORE 14, v24
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: dpp, .symbol: dpp.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

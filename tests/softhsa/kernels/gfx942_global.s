// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// global_flat: in = 256 u32 words D (columns 0-3). Out columns: 0 saddr base in+512 with
// offset:-512 (D[L]), 1-2 global_load_dwordx2 through a 64-bit VGPR address (D[2L], D[2L+1]),
// 3-6 dwordx4 (D[4L..4L+3]), 7 ubyte / 8 sbyte at byte 100+L (address +300, offset:-200),
// 9 ushort / 10 sshort at byte 6+2L (address +512, offset:-506), 11 flat_load_dword offset:4
// (D[2L+1]); stores: 12 global_store_short (64-bit address) of column 9, 13 global_store_byte
// (saddr) of column 7, 14-15 global_store_dwordx2 (64-bit address +256, offset:-256),
// 16-19 global_store_dwordx4 (saddr), 20 flat_store_dword.
KERNEL global_flat
  PROLOGUE
  v_lshlrev_b32_e32 v20, 4, v0            // 16L
  v_lshlrev_b32_e32 v21, 1, v0            // 2L
  s_add_u32 s8, s4, 512
  s_addc_u32 s9, s5, 0
  global_load_dword v10, v1, s[8:9] offset:-512
  v_mov_b32_e32 v13, s5                   // v[12:13] = in + 8L
  v_add_co_u32_e32 v12, vcc, s4, v63
  v_addc_co_u32_e32 v13, vcc, 0, v13, vcc
  global_load_dwordx2 v[14:15], v[12:13], off
  v_mov_b32_e32 v23, s5                   // v[22:23] = in + 16L
  v_add_co_u32_e32 v22, vcc, s4, v20
  v_addc_co_u32_e32 v23, vcc, 0, v23, vcc
  global_load_dwordx4 v[16:19], v[22:23], off
  v_mov_b32_e32 v25, s5                   // v[24:25] = in + L + 300
  v_add_co_u32_e32 v24, vcc, s4, v0
  v_addc_co_u32_e32 v25, vcc, 0, v25, vcc
  v_add_co_u32_e32 v24, vcc, 300, v24
  v_addc_co_u32_e32 v25, vcc, 0, v25, vcc
  global_load_ubyte v26, v[24:25], off offset:-200
  global_load_sbyte v27, v[24:25], off offset:-200
  v_mov_b32_e32 v29, s9                   // v[28:29] = (in + 512) + 2L
  v_add_co_u32_e32 v28, vcc, s8, v21
  v_addc_co_u32_e32 v29, vcc, 0, v29, vcc
  global_load_ushort v30, v[28:29], off offset:-506
  global_load_sshort v31, v[28:29], off offset:-506
  flat_load_dword v32, v[12:13] offset:4
  s_waitcnt vmcnt(0) lgkmcnt(0)
  STORE 0, v10
  STORE 1, v14
  STORE 2, v15
  STORE 3, v16
  STORE 4, v17
  STORE 5, v18
  STORE 6, v19
  STORE 7, v26
  STORE 8, v27
  STORE 9, v30
  STORE 10, v31
  STORE 11, v32
  s_add_u32 s10, s6, 12*256               // v[34:35] = out column 12 + 2L
  s_addc_u32 s11, s7, 0
  v_mov_b32_e32 v35, s11
  v_add_co_u32_e32 v34, vcc, s10, v21
  v_addc_co_u32_e32 v35, vcc, 0, v35, vcc
  global_store_short v[34:35], v30, off
  v_add_u32_e32 v36, 13*256, v0
  global_store_byte v36, v26, s[6:7]
  s_add_u32 s10, s6, 15*256               // v[38:39] = out column 14 + 8L + 256
  s_addc_u32 s11, s7, 0
  v_mov_b32_e32 v39, s11
  v_add_co_u32_e32 v38, vcc, s10, v63
  v_addc_co_u32_e32 v39, vcc, 0, v39, vcc
  global_store_dwordx2 v[38:39], v[14:15], off offset:-256
  NEXT_OUT
  global_store_dwordx4 v20, v[16:19], s[6:7]
  s_add_u32 s10, s6, 4*256                // v[40:41] = out column 20 + 4L
  s_addc_u32 s11, s7, 0
  v_mov_b32_e32 v41, s11
  v_add_co_u32_e32 v40, vcc, s10, v1
  v_addc_co_u32_e32 v41, vcc, 0, v41, vcc
  flat_store_dword v[40:41], v32
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: global_flat, .symbol: global_flat.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

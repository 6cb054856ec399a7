// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// smem: scalar memory loads from `in` (256 u32 words, word i at byte 4i) at immediate and SGPR
// offsets; every loaded SGPR is copied to a VGPR and stored by all lanes to out[k] (SOUT k).
.macro SOUT k, sreg
  v_mov_b32_e32 v2, \sreg
  global_store_dword v3, v2, s[6:7] offset:4*(\k)
.endm
KERNEL smem
  PROLOGUE
  v_mov_b32_e32 v3, 0
  s_mov_b32 s30, 0x204
  s_load_dword s8, s[4:5], 0x4            // word 1
  s_load_dwordx2 s[10:11], s[4:5], 0x18   // words 6, 7
  s_load_dwordx4 s[12:15], s[4:5], 0x40   // words 16..19
  s_load_dwordx8 s[16:23], s[4:5], 0x100  // words 64..71
  s_load_dwordx2 s[24:25], s[4:5], s30    // offset from an SGPR: words 129, 130
  s_load_dwordx16 s[32:47], s[4:5], 0x3c0 // words 240..255
  s_waitcnt lgkmcnt(0)
  SOUT 0, s8
  SOUT 1, s10
  SOUT 2, s11
  SOUT 3, s12
  SOUT 4, s13
  SOUT 5, s14
  SOUT 6, s15
  SOUT 7, s16
  SOUT 8, s17
  SOUT 9, s18
  SOUT 10, s19
  SOUT 11, s20
  SOUT 12, s21
  SOUT 13, s22
  SOUT 14, s23
  SOUT 15, s24
  SOUT 16, s25
  .irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
    SOUT 17+\k, s[32+\k]
  .endr
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: smem, .symbol: smem.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

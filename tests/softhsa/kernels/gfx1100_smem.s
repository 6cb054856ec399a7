// The shared macros and descriptor boilerplate: gfx1100_common.inc.
.include "gfx1100_common.inc"

// smem: in = 256 dwords w[0..255]. Out dwords 0..: s_load_b32 w[1] (offset 0x4),
// s_load_b64 w[6:8] (0x18), s_load_b128 w[16:20] (0x40), s_load_b256 w[64:72] (0x100),
// s_load_b64 with an SGPR offset (0x204) w[129:131], s_load_b32 SGPR offset 0x200 + offset:0x14
// w[133], s_load_b512 w[240:256] (0x3c0).
KERNEL smem
  PROLOGUE
  s_mov_b32 s60, 0x204
  s_mov_b32 s61, 0x200
  s_clause 0x6
  s_load_b32 s8, s[4:5], 0x4
  s_load_b64 s[10:11], s[4:5], 0x18
  s_load_b128 s[12:15], s[4:5], 0x40
  s_load_b256 s[16:23], s[4:5], 0x100
  s_load_b64 s[24:25], s[4:5], s60
  s_load_b32 s26, s[4:5], s61 offset:0x14
  s_load_b512 s[32:47], s[4:5], 0x3c0
  s_waitcnt lgkmcnt(0)
  SSTORE 0, s8
  SSTORE 1, s10
  SSTORE 2, s11
  SSTORE 3, s12
  SSTORE 4, s13
  SSTORE 5, s14
  SSTORE 6, s15
  SSTORE 7, s16
  SSTORE 8, s17
  SSTORE 9, s18
  SSTORE 10, s19
  SSTORE 11, s20
  SSTORE 12, s21
  SSTORE 13, s22
  SSTORE 14, s23
  SSTORE 15, s24
  SSTORE 16, s25
  SSTORE 17, s26
  .irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
    SSTORE 18+\k, s[32+\k]
  .endr
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: smem, .symbol: smem.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

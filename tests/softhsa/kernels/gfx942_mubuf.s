// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// mubuf: in = 256 u32 words D (columns 0-3). Buffer resources (V#: base, stride << 16 | base
// bits 47:32, num_records, 0x27000 = 32-bit data format): s[8:11] raw over in with 216 bytes,
// s[12:15] raw over in (64 KiB: no clipping here), s[16:19] over in with a 12-byte stride and
// 40 records, s[20:23] raw over out column 14 with 200 bytes, s[24:27] raw over out (64 KiB).
// Out columns: 0 dword offen (clipped: lanes past byte 216 read 0), 1 dword offen + soffset 32 +
// offset:16, 2-3 dwordx2, 4-7 dwordx4, 8 ubyte / 9 sbyte at byte 100+L, 10 ushort / 11 sshort
// at byte 6+2L, 12 idxen offset:4 (D[3L+1], 0 for L >= 40), 13 idxen+offen (D[3L+2]);
// stores: 14 dword clipped at 200 bytes (lanes >= 50 dropped), 15 short (column 8's low half
// at 2L), 16-17 dwordx2 at 8L, 18 byte at L, 19 dword at soffset 32 + offset:32 (- 64 from the
// base), 20-23 dwordx4 at 16L.
KERNEL mubuf
  PROLOGUE
  v_lshlrev_b32_e32 v20, 4, v0            // 16L
  v_lshlrev_b32_e32 v21, 1, v0            // 2L
  s_mov_b32 s8, s4
  s_and_b32 s9, s5, 0xffff
  s_movk_i32 s10, 216
  s_mov_b32 s11, 0x27000
  s_mov_b32 s12, s4
  s_and_b32 s13, s5, 0xffff
  s_mov_b32 s14, 0x10000
  s_mov_b32 s15, 0x27000
  s_mov_b32 s16, s4
  s_and_b32 s17, s5, 0xffff
  s_or_b32 s17, s17, 0xc0000              // stride 12
  s_movk_i32 s18, 40
  s_mov_b32 s19, 0x27000
  s_add_u32 s20, s6, 14*256
  s_addc_u32 s21, s7, 0
  s_and_b32 s21, s21, 0xffff
  s_movk_i32 s22, 200
  s_mov_b32 s23, 0x27000
  s_mov_b32 s24, s6
  s_and_b32 s25, s7, 0xffff
  s_mov_b32 s26, 0x10000
  s_mov_b32 s27, 0x27000
  s_movk_i32 s30, 32
  buffer_load_dword v10, v1, s[8:11], 0 offen
  buffer_load_dword v11, v1, s[12:15], s30 offen offset:16
  buffer_load_dwordx2 v[12:13], v63, s[12:15], 0 offen
  buffer_load_dwordx4 v[14:17], v20, s[12:15], 0 offen
  buffer_load_ubyte v18, v0, s[12:15], 0 offen offset:100
  buffer_load_sbyte v19, v0, s[12:15], 0 offen offset:100
  buffer_load_ushort v22, v21, s[12:15], 0 offen offset:6
  buffer_load_sshort v23, v21, s[12:15], 0 offen offset:6
  buffer_load_dword v24, v0, s[16:19], 0 idxen offset:4
  v_mov_b32_e32 v26, v0                   // {index, offset} = {L, 8}
  v_mov_b32_e32 v27, 8
  buffer_load_dword v25, v[26:27], s[16:19], 0 idxen offen
  s_waitcnt vmcnt(0)
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
  STORE 10, v22
  STORE 11, v23
  STORE 12, v24
  STORE 13, v25
  buffer_store_dword v11, v1, s[20:23], 0 offen
  s_movk_i32 s31, 15*256
  buffer_store_short v18, v21, s[24:27], s31 offen
  s_movk_i32 s31, 16*256
  buffer_store_dwordx2 v[12:13], v63, s[24:27], s31 offen
  s_movk_i32 s31, 18*256
  buffer_store_byte v18, v0, s[24:27], s31 offen
  s_movk_i32 s31, 19*256-64+32
  buffer_store_dword v10, v1, s[24:27], s31 offen offset:32
  s_movk_i32 s31, 20*256
  buffer_store_dwordx4 v[14:17], v20, s[24:27], s31 offen
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: mubuf, .symbol: mubuf.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

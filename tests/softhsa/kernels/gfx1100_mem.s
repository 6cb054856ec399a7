// The shared macros and descriptor boilerplate: gfx1100_common.inc.
.include "gfx1100_common.inc"

// mubuf: GFX11 buffer resources (V#): dword1 = base_hi | stride << 16, dword2 = num_records,
// dword3 = 0x31004000 for raw buffers (OOB_SELECT 3: an access past num_records bytes reads 0 and
// is not written) and 0x01004000 with a stride (OOB_SELECT 0: index >= num_records is out of
// range). in = 256 dwords D (columns 0-3). Resources: s[8:11] in, 100 bytes; s[12:15] in, 1024
// bytes; s[16:19] in, stride 12, 20 records; s[24:27] out + 4096, 4096 bytes; s[28:31]
// out + 4096, 336 bytes. Out columns (L = lane):
//  0 buffer_load_b32 offen 4L (100 bytes: L >= 25 read 0)  1 offen 4L soffset 32 offset:16
//  2-3 buffer_load_b64 8L  4-6 buffer_load_b96 12L  7-10 buffer_load_b128 16L
// 11 buffer_load_u8 offen L offset:100  12 buffer_load_i8  13 buffer_load_u16 offen 2L offset:6
// 14 buffer_load_i16   15 buffer_load_b32 idxen (index L) offset:4 (L >= 20: 0)
// NEXT: 0 idxen offen (L, 8)  1 buffer_store_b32 D[L] offen 4L offset:256 (336 bytes: L >= 20
//  dropped)  2 buffer_store_b16 D[L] at 512 + 2L  3 buffer_store_b8 D[L] at 768 + L
//  4 buffer_store_b64 (D[2L], D[2L+1]) at 1024 + 8L  5-6 buffer_store_b96 at 1280 + 12L
//  7-8 buffer_store_b128 at 1792 + 16L   9 buffer_store_b32 D[L] offen 4L soffset 2304 offset:4
KERNEL mubuf
  PROLOGUE
  s_mov_b32 s8, s4
  s_and_b32 s9, s5, 0xffff
  s_mov_b32 s10, 100
  s_mov_b32 s11, 0x31004000
  s_mov_b64 s[12:13], s[8:9]
  s_movk_i32 s14, 0x400
  s_mov_b32 s15, 0x31004000
  s_mov_b32 s16, s4
  s_or_b32 s17, s9, 12 << 16
  s_mov_b32 s18, 20
  s_mov_b32 s19, 0x01004000
  s_mov_b32 s20, 32
  v_lshlrev_b32_e32 v60, 4, v0            // 16L
  v_mul_u32_u24_e32 v59, 12, v0           // 12L
  v_lshlrev_b32_e32 v58, 1, v0            // 2L
  buffer_load_b32 v10, v1, s[8:11], 0 offen
  buffer_load_b32 v11, v1, s[12:15], s20 offen offset:16
  buffer_load_b64 v[12:13], v63, s[12:15], 0 offen
  buffer_load_b96 v[14:16], v59, s[12:15], 0 offen
  buffer_load_b128 v[17:20], v60, s[12:15], 0 offen
  buffer_load_u8 v21, v0, s[12:15], 0 offen offset:100
  buffer_load_i8 v22, v0, s[12:15], 0 offen offset:100
  buffer_load_u16 v23, v58, s[12:15], 0 offen offset:6
  buffer_load_i16 v24, v58, s[12:15], 0 offen offset:6
  buffer_load_b32 v25, v0, s[16:19], 0 idxen offset:4
  v_mov_b32_e32 v40, v0
  v_mov_b32_e32 v41, 8
  buffer_load_b32 v26, v[40:41], s[16:19], 0 idxen offen
  buffer_load_b32 v27, v1, s[12:15], 0 offen             // D[L] for the stores
  s_waitcnt vmcnt(0)
  .irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
    STORE \k, v[10+\k]
  .endr
  NEXT_OUT
  STORE 0, v26
  s_mov_b32 s24, s6
  s_and_b32 s25, s7, 0xffff
  s_movk_i32 s26, 0x1000
  s_mov_b32 s27, 0x31004000
  s_mov_b64 s[28:29], s[24:25]
  s_movk_i32 s30, 0x150                   // 336
  s_mov_b32 s31, 0x31004000
  s_movk_i32 s32, 0x900                   // 2304
  buffer_store_b32 v27, v1, s[28:31], 0 offen offset:256
  buffer_store_b16 v27, v58, s[24:27], 0 offen offset:512
  buffer_store_b8 v27, v0, s[24:27], 0 offen offset:768
  buffer_store_b64 v[12:13], v63, s[24:27], 0 offen offset:1024
  buffer_store_b96 v[14:16], v59, s[24:27], 0 offen offset:1280
  buffer_store_b128 v[17:20], v60, s[24:27], 0 offen offset:1792
  buffer_store_b32 v27, v1, s[24:27], s32 offen offset:4
  s_endpgm

// global: GLOBAL loads / stores with an SGPR base (saddr, 32-bit VGPR offset) and with 64-bit
// VGPR addresses (`off`), negative immediate offsets, d16 loads into half registers.
// in = 256 dwords D (columns 0-3). Out columns (L = lane, old = 0xcafebabe):
//  0 global_load_b32 saddr (4L + 512) offset:-512   1-2 global_load_b64 off (in + 8L)
//  3-5 global_load_b96 off (in + 12L)   6-9 global_load_b128 saddr 16L
// 10 global_load_u8 saddr (L + 300) offset:-200   11 global_load_i8 (the same byte)
// 12 global_load_u16 saddr (2L + 512) offset:-506  13 global_load_i16
// 14 global_load_d16_b16 saddr 2L into old (hi kept)
// 15 global_load_d16_hi_b16 off (in + 2L + 64) offset:-64 into old (lo kept)
// NEXT: 0 global_store_b16 D[L] at 2L   1 global_store_b8 D[L] saddr at 256 + L
//  2 global_store_b64 (D[2L], D[2L+1]) saddr (8L + 768) offset:-256
//  3-4 global_store_b96 off (out + 768 + 12L)   5-6 global_store_b128 saddr 1280 + 16L
KERNEL global
  PROLOGUE
  v_lshlrev_b32_e32 v60, 4, v0            // 16L
  v_mul_u32_u24_e32 v59, 12, v0           // 12L
  v_lshlrev_b32_e32 v58, 1, v0            // 2L
  v_add_nc_u32_e32 v57, 0x200, v1
  v_add_co_u32 v2, s20, s4, v63           // in + 8L
  v_add_co_ci_u32_e64 v3, null, s5, 0, s20
  v_add_co_u32 v4, vcc_lo, s4, v59        // in + 12L
  v_add_co_ci_u32_e32 v5, vcc_lo, s5, v62, vcc_lo
  v_add_co_u32 v6, vcc_lo, s4, v58        // in + 2L + 64
  v_add_co_ci_u32_e32 v7, vcc_lo, s5, v62, vcc_lo
  v_add_co_u32 v6, vcc_lo, v6, 64
  v_add_co_ci_u32_e32 v7, vcc_lo, 0, v7, vcc_lo
  v_add_nc_u32_e32 v56, 0x12c, v0         // L + 300
  v_add_nc_u32_e32 v55, 0x200, v58        // 2L + 512
  global_load_b32 v10, v57, s[4:5] offset:-512
  global_load_b64 v[11:12], v[2:3], off
  global_load_b96 v[13:15], v[4:5], off
  global_load_b128 v[16:19], v60, s[4:5]
  global_load_u8 v20, v56, s[4:5] offset:-200
  global_load_i8 v21, v56, s[4:5] offset:-200
  global_load_u16 v22, v55, s[4:5] offset:-506
  global_load_i16 v23, v55, s[4:5] offset:-506
  v_mov_b32_e32 v24, 0xcafebabe
  v_mov_b32_e32 v25, 0xcafebabe
  global_load_d16_b16 v24, v58, s[4:5]
  global_load_d16_hi_b16 v25, v[6:7], off offset:-64
  global_load_b32 v26, v1, s[4:5]         // D[L] for the stores
  s_waitcnt vmcnt(0)
  .irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
    STORE \k, v[10+\k]
  .endr
  NEXT_OUT
  global_store_b16 v58, v26, s[6:7]
  v_add_nc_u32_e32 v54, 0x100, v0
  global_store_b8 v54, v26, s[6:7]
  v_add_nc_u32_e32 v53, 0x300, v63
  global_store_b64 v53, v[11:12], s[6:7] offset:-256
  v_add_co_u32 v8, vcc_lo, s6, v59         // out + 768 + 12L
  v_add_co_ci_u32_e32 v9, vcc_lo, s7, v62, vcc_lo
  global_store_b96 v[8:9], v[13:15], off offset:768
  v_add_nc_u32_e32 v52, 0x500, v60
  global_store_b128 v52, v[16:19], s[6:7]
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: mubuf, .symbol: mubuf.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: global, .symbol: global.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

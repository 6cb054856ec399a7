// The shared macros and descriptor boilerplate: gfx1100_common.inc.
.include "gfx1100_common.inc"

// ds_ops: one wave of 32; lane L writes, then reads what lane m = 31 - L wrote. In columns 0 x,
// 1-2 y (a 64-bit pair), 3-6 z (128 bits), 7 p, 8 q. LDS layout: x at 4L; y at 256 + 8L; p, q at
// 512 + 4L, 640 + 4L (ds_store_2addr_b32 offset0:128 offset1:160, dword units); z at 1024 + 16L;
// y and z.01 at 2048 + 8L, 2304 + 8L (ds_store_2addr_b64 offset0:0 offset1:32, qword units);
// bytes x & 0xff at 3072 + L; halves x & 0xffff at 3200 + 2L. Out columns:
//  0 ds_load_b32 x[m]  1-2 ds_load_b64 y[m]  3-4 ds_load_2addr_b32 p[m], q[m] (its address register
//  is its destination)  5-8 ds_load_b128 z[m]  9-12 ds_load_2addr_b64 y[m], z.01[m]
// 13 ds_load_u8 byte L of the x region  14 ds_load_i8 byte 64 + L  15 ds_load_u16 half L
// NEXT: 0 ds_load_i16 half 32 + L  1 ds_store_b8 / ds_load_u8 (x & 0xff)[m]
//  2 ds_store_b16 / ds_load_u16 (x & 0xffff)[m]  3 ds_load_u16_d16 half L into old 0xcafebabe
//    (hi kept)  4 ds_load_u16_d16_hi half L into old (lo kept)
KERNEL ds_ops, 64, 4096
  PROLOGUE
  .irp k, 0,1,2,3,4,5,6,7,8
    LOAD v[2+\k], \k
  .endr
  v_sub_nc_u32_e32 v11, 31, v0            // m
  v_lshlrev_b32_e32 v12, 2, v11           // 4m
  v_lshlrev_b32_e32 v13, 3, v11           // 8m
  v_lshlrev_b32_e32 v14, 4, v0            // 16L
  v_lshlrev_b32_e32 v15, 4, v11           // 16m
  s_waitcnt vmcnt(0)
  ds_store_b32 v1, v2
  ds_store_b64 v63, v[3:4] offset:256
  ds_store_2addr_b32 v1, v9, v10 offset0:128 offset1:160
  ds_store_b128 v14, v[5:8] offset:1024
  v_add_nc_u32_e32 v16, 0x800, v63
  ds_store_2addr_b64 v16, v[3:4], v[5:6] offset1:32
  ds_store_b8 v0, v2 offset:3072
  v_lshlrev_b32_e32 v17, 1, v0            // 2L
  ds_store_b16 v17, v2 offset:3200
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_load_b32 v20, v12
  ds_load_b64 v[21:22], v13 offset:256
  v_mov_b32_e32 v23, v12
  ds_load_2addr_b32 v[23:24], v23 offset0:128 offset1:160
  ds_load_b128 v[25:28], v15 offset:1024
  v_add_nc_u32_e32 v18, 0x800, v13
  ds_load_2addr_b64 v[29:32], v18 offset1:32
  ds_load_u8 v33, v0
  ds_load_i8 v34, v0 offset:64
  ds_load_u16 v35, v17
  ds_load_i16 v36, v17 offset:64
  ds_load_u8 v37, v11 offset:3072
  v_lshlrev_b32_e32 v19, 1, v11           // 2m
  ds_load_u16 v38, v19 offset:3200
  v_mov_b32_e32 v39, 0xcafebabe
  v_mov_b32_e32 v40, 0xcafebabe
  s_waitcnt lgkmcnt(0)
  .irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
    STORE \k, v[20+\k]
  .endr
  NEXT_OUT
  .irp k, 0,1,2
    STORE \k, v[36+\k]
  .endr
  ds_load_u16_d16 v39, v17                // the d16 loads last
  ds_load_u16_d16_hi v40, v17
  s_waitcnt lgkmcnt(0)
  STORE 3, v39
  STORE 4, v40
  s_endpgm

// ds_barrier: a 128-item workgroup = 4 waves of 32. in: 128 dwords v[t]; out: 2 x 128 dwords.
// Each item stores v[t] at 4t; s_barrier; sum = v[127 - t] + v[(t + 32) % 128] (another wave's
// values) stored at out[t] and at LDS 512 + 4t; s_barrier; out[128 + t] = sum[127 - t].
KERNEL ds_barrier, 64, 1024
  PROLOGUE
  global_load_b32 v2, v1, s[4:5]
  v_sub_nc_u32_e32 v3, 127, v0            // 127 - t
  v_lshlrev_b32_e32 v3, 2, v3
  v_add_nc_u32_e32 v4, 32, v0
  v_and_b32_e32 v4, 127, v4
  v_lshlrev_b32_e32 v4, 2, v4
  s_waitcnt vmcnt(0)
  ds_store_b32 v1, v2
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_load_b32 v5, v3
  ds_load_b32 v6, v4
  s_waitcnt lgkmcnt(0)
  v_add_nc_u32_e32 v7, v5, v6
  global_store_b32 v1, v7, s[6:7]
  ds_store_b32 v1, v7 offset:512
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_load_b32 v8, v3 offset:512
  s_waitcnt lgkmcnt(0)
  global_store_b32 v1, v8, s[6:7] offset:512
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: ds_ops, .symbol: ds_ops.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 4096, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: ds_barrier, .symbol: ds_barrier.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 1024, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

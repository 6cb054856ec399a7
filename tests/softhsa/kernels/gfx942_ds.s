// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// ds_ops (one wave, 4 KiB of LDS): in columns 0-8 = u32 x, y0, y1, z0..z3, p, q. Lane L writes
// x (b32 at 4L), {y0,y1} (b64 at 256+8L), p and q (write2_b32 at 1792+4L, offsets 0 and 64
// dwords), {y0,y1} and {z0,z1} (write2_b64 at 2304+8L, offsets 0 and 64 qwords), x's low byte
// (b8 at 3328+L) and low half (b16 at 3392+2L); then reads what the mirrored lane R = 63-L
// wrote. Out columns: x[R] @0, y[R] @1-2, read2_b32 with the address register as destination
// p[R], q[R] @3-4, read2_b64 y[R], z0z1[R] @5-8, u8 of byte L @9, i8 of byte 64+L @10, u16 of
// half L @11, i16 of half 64+L @12, the b8 and b16 round trips of x[R] @13-14; last, b128:
// {z0..z3} written at 768+16L and read back from R @16-19.
KERNEL ds_ops, 64, 4096
  PROLOGUE
  .irp c, 0,1,2,3,4,5,6,7,8
    LOAD v[11+\c], \c                     // v11 = x, v[12:13] = y, v[14:17] = z, v18 = p, v19 = q
  .endr
  s_waitcnt vmcnt(0)
  v_lshlrev_b32_e32 v20, 4, v0            // 16L
  v_lshlrev_b32_e32 v21, 1, v0            // 2L
  ds_write_b32 v1, v11
  ds_write_b64 v63, v[12:13] offset:256
  v_add_u32_e32 v22, 0x700, v1            // 1792 + 4L
  ds_write2_b32 v22, v18, v19 offset0:0 offset1:64
  v_add_u32_e32 v23, 0x900, v63           // 2304 + 8L
  ds_write2_b64 v23, v[12:13], v[14:15] offset0:0 offset1:64
  ds_write_b8 v0, v11 offset:3328
  ds_write_b16 v21, v11 offset:3392
  s_waitcnt lgkmcnt(0)
  v_sub_u32_e32 v24, 63, v0               // R
  v_lshlrev_b32_e32 v25, 2, v24           // 4R
  v_lshlrev_b32_e32 v26, 3, v24           // 8R
  v_lshlrev_b32_e32 v27, 4, v24           // 16R
  v_lshlrev_b32_e32 v28, 1, v24           // 2R
  ds_read_b32 v29, v25
  ds_read_b64 v[30:31], v26 offset:256
  v_add_u32_e32 v40, 0x700, v25
  ds_read2_b32 v[40:41], v40 offset0:0 offset1:64   // the address register is overwritten
  v_add_u32_e32 v42, 0x900, v26
  ds_read2_b64 v[44:47], v42 offset0:0 offset1:64
  ds_read_u8 v48, v0
  ds_read_i8 v49, v0 offset:64
  ds_read_u16 v50, v21
  ds_read_i16 v51, v21 offset:128
  ds_read_u8 v52, v24 offset:3328
  ds_read_u16 v53, v28 offset:3392
  s_waitcnt lgkmcnt(0)
  STORE 0, v29
  STORE 1, v30
  STORE 2, v31
  STORE 3, v40
  STORE 4, v41
  STORE 5, v44
  STORE 6, v45
  STORE 7, v46
  STORE 8, v47
  STORE 9, v48
  STORE 10, v49
  STORE 11, v50
  STORE 12, v51
  STORE 13, v52
  STORE 14, v53
  NEXT_OUT
  ds_write_b128 v20, v[14:17] offset:768
  s_waitcnt lgkmcnt(0)
  ds_read_b128 v[36:39], v27 offset:768
  s_waitcnt lgkmcnt(0)
  STORE 0, v36
  STORE 1, v37
  STORE 2, v38
  STORE 3, v39
  s_endpgm

// ds_barrier: a 256-lane workgroup (4 waves). Work-item t (v0) writes in[t] to LDS; after
// s_barrier it reads the values of work-items 255-t and (t+64) % 256 (other waves) and sums them
// (out[t], first 256 dwords); after a second barrier the sums overwrite LDS and, after a third,
// t reads the sum of 255-t (out[256 + t]).
KERNEL ds_barrier, 64, 1024
  PROLOGUE
  LOAD v2, 0                              // in[t] (v1 = 4t)
  s_waitcnt vmcnt(0)
  ds_write_b32 v1, v2
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_sub_u32_e32 v3, 255, v0
  v_lshlrev_b32_e32 v3, 2, v3             // 4 * (255 - t)
  v_add_u32_e32 v5, 64, v0
  v_and_b32_e32 v5, 255, v5
  v_lshlrev_b32_e32 v5, 2, v5             // 4 * ((t + 64) % 256)
  ds_read_b32 v4, v3
  ds_read_b32 v6, v5
  s_waitcnt lgkmcnt(0)
  v_add_u32_e32 v7, v4, v6
  s_barrier                               // every wave has read before anyone overwrites
  ds_write_b32 v1, v7
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_read_b32 v8, v3
  s_waitcnt lgkmcnt(0)
  STORE 0, v7
  STORE 4, v8                             // 4 columns of 64 = the second 256 dwords
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: ds_ops, .symbol: ds_ops.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 4096, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: ds_barrier, .symbol: ds_barrier.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 1024, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

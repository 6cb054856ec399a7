// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// mfma: in column 0 = A (16x4 f32, A[i][k] in lane i+16k), 1 = B (4x16, B[k][j] in lane j+16k),
// 2-5 = C (16x16 f32, C[i][j] in lane j+16*(i/4), column i%4); 6-7 = A8 (16x32 i8, lane i+16g
// holding A8[i][8g..8g+7]), 8-9 = B8 (32x16 i8, lane j+16g holding B8[8g..8g+7][j]), 10-13 = C8
// (i32, laid out as C). Out: 0-3 A*B+C (f32), 4-7 the same with the destination = C's registers,
// 8-11 A8*B8+C8 (i32), 12-15 A*B + (A*B+C) with the destination overlapping the A operand.
KERNEL mfma
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  LOAD v5, 3
  LOAD v6, 4
  LOAD v7, 5
  LOAD64 v[8:9], 6
  LOAD64 v[10:11], 8
  LOAD v12, 10
  LOAD v13, 11
  LOAD v14, 12
  LOAD v15, 13
  s_waitcnt vmcnt(0)
  v_mfma_f32_16x16x4_f32 v[20:23], v2, v3, v[4:7]
  v_mfma_f32_16x16x4_f32 v[4:7], v2, v3, v[4:7]      // in place: D = C's registers
  v_mfma_i32_16x16x32_i8 v[24:27], v[8:9], v[10:11], v[12:15]
  s_nop 7
  s_nop 7
  v_mov_b32_e32 v30, v2
  s_nop 1
  v_mfma_f32_16x16x4_f32 v[30:33], v30, v3, v[20:23] // D's first register is the A operand
  s_nop 7
  s_nop 7
  .irp r, 0,1,2,3
    STORE \r, v[20+\r]
    STORE 4+\r, v[4+\r]
    STORE 8+\r, v[24+\r]
    STORE 12+\r, v[30+\r]
  .endr
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: mfma, .symbol: mfma.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

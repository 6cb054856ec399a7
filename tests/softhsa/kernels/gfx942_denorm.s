// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// denorm_keep / denorm_flush: the same f32 arithmetic under the descriptor's
// FLOAT_DENORM_MODE_32 = 3 (denormals kept) and = 0 (inputs and results flushed to zero of their
// sign). In columns 0 x, 1 y (f32). Out columns: 0 x * 1.0, 1 x + y, 2 fma(x, y, 0),
// 3 max(x, y), 4 x * 2^-10 (a normal number made denormal).
.macro DENORM_BODY
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  s_waitcnt vmcnt(0)
  v_mul_f32_e32 v10, 1.0, v2
  v_add_f32_e32 v11, v2, v3
  v_fma_f32 v12, v2, v3, 0
  v_max_f32_e32 v13, v2, v3
  v_mul_f32_e32 v14, 0x3a800000, v2            // 2^-10
  STORE 0, v10
  STORE 1, v11
  STORE 2, v12
  STORE 3, v13
  STORE 4, v14
  s_endpgm
.endm

KERNEL denorm_keep
  DENORM_BODY
KERNEL denorm_flush, denorm=0
  DENORM_BODY

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: denorm_keep, .symbol: denorm_keep.kd, .kernarg_segment_size: 16,
      .kernarg_segment_align: 8, .group_segment_fixed_size: 0, .private_segment_fixed_size: 0,
      .wavefront_size: 64, .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
  - { .name: denorm_flush, .symbol: denorm_flush.kd, .kernarg_segment_size: 16,
      .kernarg_segment_align: 8, .group_segment_fixed_size: 0, .private_segment_fixed_size: 0,
      .wavefront_size: 64, .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

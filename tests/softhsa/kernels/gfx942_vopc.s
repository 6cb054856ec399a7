// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// vopc: in columns 0, 1 = f32 a, b; 2, 3 = u32 i, j; 4-5, 6-7 = 64-bit x, y; 8 = class masks m.
// Each comparison's lane mask (VCC, or an SGPR pair for the _e64 forms) becomes 0 / 1 per lane
// through v_cndmask_b32 and is stored, one out column per comparison, in the order below.
.macro CMP kind, op, col, s0, s1
  v_cmp_\op\()_\kind\()_e32 vcc, \s0, \s1
  v_cndmask_b32_e64 v20, 0, 1, vcc
  STORE \col, v20
.endm
KERNEL vopc
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  LOAD v5, 3
  LOAD64 v[6:7], 4
  LOAD64 v[8:9], 6
  LOAD v10, 8
  s_waitcnt vmcnt(0)
  CMP f32, eq, 0, v2, v3                  // columns 0-13: f32, ordered and unordered forms
  CMP f32, lt, 1, v2, v3
  CMP f32, gt, 2, v2, v3
  CMP f32, le, 3, v2, v3
  CMP f32, ge, 4, v2, v3
  CMP f32, lg, 5, v2, v3
  CMP f32, neq, 6, v2, v3
  CMP f32, nlt, 7, v2, v3
  CMP f32, ngt, 8, v2, v3
  CMP f32, nle, 9, v2, v3
  CMP f32, nge, 10, v2, v3
  CMP f32, nlg, 11, v2, v3
  CMP f32, u, 12, v2, v3
  CMP f32, o, 13, v2, v3
  v_cmp_gt_f32_e64 s[20:21], |v2|, -v3    // column 14: VOP3 form, modifiers, SGPR-pair mask
  v_cndmask_b32_e64 v20, 0, 1, s[20:21]
  STORE 14, v20
  v_cmp_class_f32_e32 vcc, v2, v10        // column 15: class of a against mask m
  v_cndmask_b32_e64 v20, 0, 1, vcc
  STORE 15, v20
  NEXT_OUT
  CMP i32, lt, 0, v4, v5                  // columns 16-23: 32-bit integers
  CMP u32, lt, 1, v4, v5
  CMP i32, ge, 2, v4, v5
  CMP u32, ge, 3, v4, v5
  CMP u32, eq, 4, v4, v5
  CMP i32, ne, 5, v4, v5
  CMP i32, gt, 6, v4, v5
  CMP u32, le, 7, v4, v5
  CMP i64, lt, 8, v[6:7], v[8:9]          // columns 24-28: 64-bit integers
  CMP u64, lt, 9, v[6:7], v[8:9]
  CMP u64, eq, 10, v[6:7], v[8:9]
  CMP i64, ge, 11, v[6:7], v[8:9]
  v_cmp_gt_u64_e64 s[22:23], v[6:7], v[8:9]
  v_cndmask_b32_e64 v20, 0, 1, s[22:23]
  STORE 12, v20
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: vopc, .symbol: vopc.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

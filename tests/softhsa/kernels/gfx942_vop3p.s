// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// vop3p: in columns 0-5 = f32 a.lo, a.hi, b.lo, b.hi, c.lo, c.hi (three register pairs);
// columns 6, 7 = u32 p, q (two u16 halves each). Out (two columns per f32 pair):
// pk_fma(a, b, c) @0, pk_fma with op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[1,0,0] neg_hi:[0,0,1]
// @2, pk_mul op_sel:[0,1] op_sel_hi:[1,0] neg_hi:[1,1] @4, pk_add neg_lo:[0,1] op_sel_hi:[0,1] @6,
// pk_add_u16(p, q) @8, pk_add_u16 op_sel:[1,0] op_sel_hi:[0,1] @9, pk_mov op_sel:[1,0] @10,
// pk_mov op_sel:[0,1] @12.
KERNEL vop3p
  PROLOGUE
  LOAD v2, 0
  LOAD v3, 1
  LOAD v4, 2
  LOAD v5, 3
  LOAD v6, 4
  LOAD v7, 5
  LOAD v8, 6
  LOAD v9, 7
  s_waitcnt vmcnt(0)
  v_pk_fma_f32 v[10:11], v[2:3], v[4:5], v[6:7]
  v_pk_fma_f32 v[12:13], v[2:3], v[4:5], v[6:7] op_sel:[1,0,0] op_sel_hi:[0,1,1] neg_lo:[1,0,0] neg_hi:[0,0,1]
  v_pk_mul_f32 v[14:15], v[2:3], v[4:5] op_sel:[0,1] op_sel_hi:[1,0] neg_hi:[1,1]
  v_pk_add_f32 v[16:17], v[2:3], v[4:5] op_sel_hi:[0,1] neg_lo:[0,1]
  v_pk_add_u16 v18, v8, v9
  v_pk_add_u16 v19, v8, v9 op_sel:[1,0] op_sel_hi:[0,1]
  v_pk_mov_b32 v[20:21], v[2:3], v[4:5] op_sel:[1,0]
  v_pk_mov_b32 v[22:23], v[2:3], v[4:5] op_sel:[0,1]
  .irp r, 10,11,12,13,14,15,16,17,18,19,20,21,22,23
    STORE (\r-10), v\r
  .endr
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: vop3p, .symbol: vop3p.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

// ---- shared boilerplate (the same in every gfx942_*.s) -----------------------------------------
// Every kernel takes kernargs {in: u64, out: u64}; the workgroup is one wave of 64 lanes unless the
// test says otherwise. "Column" c of in/out is 64 dwords at byte 256*c, dword `lane` belonging
// to that lane.
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.macro KERNEL name, vgprs=64, lds=0
  .rodata
  .p2align 6
  .amdhsa_kernel \name
    .amdhsa_user_sgpr_kernarg_segment_ptr 1      // s[0:1]
    .amdhsa_system_sgpr_workgroup_id_x 1         // s2
    .amdhsa_next_free_vgpr \vgprs
    .amdhsa_next_free_sgpr 96
    .amdhsa_accum_offset \vgprs
    .amdhsa_kernarg_size 16
    .amdhsa_group_segment_fixed_size \lds
    .amdhsa_float_denorm_mode_32 3               // f32 denormals kept
    .amdhsa_float_denorm_mode_16_64 3
    .amdhsa_ieee_mode 1
  .end_amdhsa_kernel
  .text
  .globl \name
  .p2align 8
  .type \name,@function
\name:
.endm
// s[4:5] = in, s[6:7] = out, v0 = lane (work-item id x), v1 = 4 * lane, v63 = 8 * lane
.macro PROLOGUE
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_and_b32_e32 v0, 0x3ff, v0
  v_lshlrev_b32_e32 v1, 2, v0
  v_lshlrev_b32_e32 v63, 3, v0
  s_waitcnt lgkmcnt(0)
.endm
.macro LOAD reg, col                             // reg = in column `col` (col < 16)
  global_load_dword \reg, v1, s[4:5] offset:256*(\col)
.endm
.macro STORE col, reg                            // out column `col` (col < 16) = reg
  global_store_dword v1, \reg, s[6:7] offset:256*(\col)
.endm
.macro LOAD64 reg, col                           // a 64-bit lane value from columns col, col+1
  global_load_dwordx2 \reg, v63, s[4:5] offset:256*(\col)
.endm
.macro STORE64 col, reg
  global_store_dwordx2 v63, \reg, s[6:7] offset:256*(\col)
.endm
.macro NEXT_OUT                                  // out += 16 columns: the next STORE 0 is column 16
  s_add_u32 s6, s6, 4096
  s_addc_u32 s7, s7, 0
.endm
// -------------------------------------------------------------------------------------------------

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

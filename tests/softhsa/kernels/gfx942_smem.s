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
// s[4:5] = in, s[6:7] = out, v0 = lane (work-item id x), v1 = 4 * lane
.macro PROLOGUE
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  v_and_b32_e32 v0, 0x3ff, v0
  v_lshlrev_b32_e32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
.endm
.macro LOAD reg, col                             // reg = in column `col` (col < 16)
  global_load_dword \reg, v1, s[4:5] offset:256*(\col)
.endm
.macro STORE col, reg                            // out column `col` (col < 16) = reg
  global_store_dword v1, \reg, s[6:7] offset:256*(\col)
.endm
.macro NEXT_OUT                                  // out += 16 columns: the next STORE 0 is column 16
  s_add_u32 s6, s6, 4096
  s_addc_u32 s7, s7, 0
.endm
// -------------------------------------------------------------------------------------------------

// smem: scalar memory loads from `in` (256 u32 words, word i at byte 4i) at immediate and SGPR
// offsets; every loaded SGPR is copied to a VGPR and stored by all lanes to out[k] (SOUT k).
.macro SOUT k, sreg
  v_mov_b32_e32 v2, \sreg
  global_store_dword v3, v2, s[6:7] offset:4*(\k)
.endm
KERNEL smem
  PROLOGUE
  v_mov_b32_e32 v3, 0
  s_mov_b32 s30, 0x204
  s_load_dword s8, s[4:5], 0x4            // word 1
  s_load_dwordx2 s[10:11], s[4:5], 0x18   // words 6, 7
  s_load_dwordx4 s[12:15], s[4:5], 0x40   // words 16..19
  s_load_dwordx8 s[16:23], s[4:5], 0x100  // words 64..71
  s_load_dwordx2 s[24:25], s[4:5], s30    // offset from an SGPR: words 129, 130
  s_load_dwordx16 s[32:47], s[4:5], 0x3c0 // words 240..255
  s_waitcnt lgkmcnt(0)
  SOUT 0, s8
  SOUT 1, s10
  SOUT 2, s11
  SOUT 3, s12
  SOUT 4, s13
  SOUT 5, s14
  SOUT 6, s15
  SOUT 7, s16
  SOUT 8, s17
  SOUT 9, s18
  SOUT 10, s19
  SOUT 11, s20
  SOUT 12, s21
  SOUT 13, s22
  SOUT 14, s23
  SOUT 15, s24
  SOUT 16, s25
  .irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
    SOUT 17+\k, s[32+\k]
  .endr
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: smem, .symbol: smem.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

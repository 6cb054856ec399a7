// ---- shared boilerplate (the same in every gfx1100_*.s) ----------------------------------------
// gfx1100 (RDNA3, wave32). Every kernel takes kernargs {in: u64, out: u64}. "Column" c of in/out is
// 64 dwords at byte 256*c, dword `id` belonging to work-item `id` of the (single) workgroup; a wave
// is 32 lanes, so a 32-item dispatch fills the first half of each column.
.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
.macro KERNEL name, vgprs=64, lds=0
  .rodata
  .p2align 6
  .amdhsa_kernel \name
    .amdhsa_user_sgpr_kernarg_segment_ptr 1      // s[0:1]
    .amdhsa_system_sgpr_workgroup_id_x 1         // s2
    .amdhsa_wavefront_size32 1
    .amdhsa_next_free_vgpr \vgprs
    .amdhsa_next_free_sgpr 96
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
// s[4:5] = in, s[6:7] = out, v0 = work-item id x (GFX11 packs the ids: x in bits 9:0),
// v1 = 4 * id, v63 = 8 * id, v62 = 0
.macro PROLOGUE
  s_load_b128 s[4:7], s[0:1], 0x0
  v_and_b32_e32 v0, 0x3ff, v0
  v_lshlrev_b32_e32 v1, 2, v0
  v_lshlrev_b32_e32 v63, 3, v0
  v_mov_b32_e32 v62, 0
  s_waitcnt lgkmcnt(0)
.endm
.macro LOAD reg, col                             // reg = in column `col` (col < 16)
  global_load_b32 \reg, v1, s[4:5] offset:256*(\col)
.endm
.macro STORE col, reg                            // out column `col` (col < 16) = reg
  global_store_b32 v1, \reg, s[6:7] offset:256*(\col)
.endm
.macro LOAD64 reg, col                           // a 64-bit lane value from columns col, col+1
  global_load_b64 \reg, v63, s[4:5] offset:256*(\col)
.endm
.macro STORE64 col, reg
  global_store_b64 v63, \reg, s[6:7] offset:256*(\col)
.endm
.macro SSTORE k, sreg                            // out dword k (k < 1024) = a scalar (every lane
  v_mov_b32_e32 v61, \sreg                      // stores the same value to the same address)
  global_store_b32 v62, v61, s[6:7] offset:4*(\k)
.endm
.macro NEXT_OUT                                  // out += 16 columns: the next STORE 0 is column 16
  s_add_u32 s6, s6, 4096
  s_addc_u32 s7, s7, 0
.endm
.macro NEXT_IN                                   // in += 16 columns
  s_add_u32 s4, s4, 4096
  s_addc_u32 s5, s5, 0
.endm
// -------------------------------------------------------------------------------------------------

// smem: in = 256 dwords w[0..255]. Out dwords 0..: s_load_b32 w[1] (offset 0x4),
// s_load_b64 w[6:8] (0x18), s_load_b128 w[16:20] (0x40), s_load_b256 w[64:72] (0x100),
// s_load_b64 with an SGPR offset (0x204) w[129:131], s_load_b32 SGPR offset 0x200 + offset:0x14
// w[133], s_load_b512 w[240:256] (0x3c0).
KERNEL smem
  PROLOGUE
  s_mov_b32 s60, 0x204
  s_mov_b32 s61, 0x200
  s_clause 0x6
  s_load_b32 s8, s[4:5], 0x4
  s_load_b64 s[10:11], s[4:5], 0x18
  s_load_b128 s[12:15], s[4:5], 0x40
  s_load_b256 s[16:23], s[4:5], 0x100
  s_load_b64 s[24:25], s[4:5], s60
  s_load_b32 s26, s[4:5], s61 offset:0x14
  s_load_b512 s[32:47], s[4:5], 0x3c0
  s_waitcnt lgkmcnt(0)
  SSTORE 0, s8
  SSTORE 1, s10
  SSTORE 2, s11
  SSTORE 3, s12
  SSTORE 4, s13
  SSTORE 5, s14
  SSTORE 6, s15
  SSTORE 7, s16
  SSTORE 8, s17
  SSTORE 9, s18
  SSTORE 10, s19
  SSTORE 11, s20
  SSTORE 12, s21
  SSTORE 13, s22
  SSTORE 14, s23
  SSTORE 15, s24
  SSTORE 16, s25
  SSTORE 17, s26
  .irp k, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
    SSTORE 18+\k, s[32+\k]
  .endr
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: smem, .symbol: smem.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

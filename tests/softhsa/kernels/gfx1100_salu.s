// The shared macros and descriptor boilerplate: gfx1100_common.inc.
.include "gfx1100_common.inc"

// salu: GFX11 SOP opcodes. in dwords 0-7 = x0..x7 (s[8:15]). Each result is stored to one out
// dword (SSTORE k). s_delay_alu / s_clause / s_nop / s_waitcnt between instructions change nothing.
//  0-2 96-bit (x6:x1:x0) + (x7:x3:x2) through s_add_u32 / s_addc_u32   3 SCC of the low add
//  4 s_mul_i32 x4*x6   5 s_mul_hi_u32 x6*x1   6 s_mul_hi_i32 x4*x6
//  7-8 s_lshl_b64 (x1:x0) << 36   9-10 s_lshr_b64 (x3:x2) >> 33   11-12 s_ashr_i64 (x3:x2) >> 33
// 13 s_and_not1_b32 x6 & ~x7   14 s_or_not1_b32 x6 | ~x7
// 15 s_cselect_b32 (x4 >i x5 ? x1 : x6)   16 the same with s_cmp_gt_u32
// 17 s_bfe_u32 x6, 12 bits at 4   18 s_bfe_i32 x6, 8 bits at 20
// 19 s_mulk_i32 x1 * -3   20 s_movk_i32 0x8001 (sign-extended)
// 21 bit b set: the b-th s_cmp + s_cbranch fell through (see the truth in the test)
// 22 sum 1..x5 by a backward s_cbranch_scc1 loop
// 23 m0 <- x1, read back   24 s_add_u32 null, x0, x2 (SCC only) -> s_cselect 1/0
// 25 x6 copied, then s_mov_b32 null, 0 (nothing written): the copy still x6
// 26 s_sext_i32_i16 x3   27 s_bcnt1_i32_b32 x6   28 s_ff1_i32_b32 x2 (s_ctz_i32_b32)
// 29 bit 0: s_cbranch_vccz taken with vcc_lo = 0; bit 1: s_cbranch_vccnz taken with vcc_lo != 0;
//    bit 2: s_cbranch_execz taken with exec_lo = 0; bit 3: s_cbranch_execnz taken after restoring
KERNEL salu
  PROLOGUE
  s_load_b256 s[8:15], s[4:5], 0x0
  s_waitcnt lgkmcnt(0)
  s_add_u32 s20, s8, s10
  s_cselect_b32 s23, 1, 0
  s_delay_alu instid0(SALU_CYCLE_1)
  s_addc_u32 s21, s9, s11
  s_nop 3
  s_addc_u32 s22, s14, s15
  SSTORE 0, s20
  SSTORE 1, s21
  SSTORE 2, s22
  SSTORE 3, s23
  s_mul_i32 s24, s12, s14
  s_mul_hi_u32 s25, s14, s9
  s_mul_hi_i32 s26, s12, s14
  SSTORE 4, s24
  SSTORE 5, s25
  SSTORE 6, s26
  s_lshl_b64 s[28:29], s[8:9], 36
  s_lshr_b64 s[30:31], s[10:11], 33
  s_ashr_i64 s[32:33], s[10:11], 33
  SSTORE 7, s28
  SSTORE 8, s29
  SSTORE 9, s30
  SSTORE 10, s31
  SSTORE 11, s32
  SSTORE 12, s33
  s_and_not1_b32 s34, s14, s15
  s_or_not1_b32 s35, s14, s15
  SSTORE 13, s34
  SSTORE 14, s35
  s_cmp_gt_i32 s12, s13
  s_cselect_b32 s36, s9, s14
  s_cmp_gt_u32 s12, s13
  s_cselect_b32 s37, s9, s14
  s_bfe_u32 s38, s14, (12 << 16) | 4
  s_mov_b32 s40, s9
  s_mulk_i32 s40, 0xfffd
  s_movk_i32 s41, 0x8001
  SSTORE 15, s36
  SSTORE 16, s37
  SSTORE 17, s38
  SSTORE 19, s40
  SSTORE 20, s41
  // branches: bit b of s42 is set when the b-th branch falls through
  s_mov_b32 s42, 0
  s_cmp_lt_i32 s12, s13
  s_cbranch_scc0 .Lb1
  s_or_b32 s42, s42, 1
.Lb1:
  s_cmp_lt_u32 s12, s13
  s_cbranch_scc1 .Lb2
  s_or_b32 s42, s42, 2
.Lb2:
  s_cmp_ge_i32 s11, s13
  s_cbranch_scc0 .Lb3
  s_or_b32 s42, s42, 4
.Lb3:
  s_cmpk_eq_u32 s13, 5
  s_cbranch_scc0 .Lb4
  s_or_b32 s42, s42, 8
.Lb4:
  s_cmp_lg_u64 s[8:9], s[10:11]
  s_cbranch_scc0 .Lb5
  s_or_b32 s42, s42, 16
.Lb5:
  s_bitcmp1_b32 s14, 0
  s_cbranch_scc0 .Lb6
  s_or_b32 s42, s42, 32
.Lb6:
  s_cmp_eq_u64 s[8:9], s[8:9]
  s_cbranch_scc1 .Lb7
  s_or_b32 s42, s42, 64
.Lb7:
  s_branch .Lb8
  s_or_b32 s42, s42, 128
.Lb8:
  SSTORE 21, s42
  // loop: s43 = x5 + (x5 - 1) + ... + 1
  s_mov_b32 s43, 0
  s_mov_b32 s44, s13
.Lloop:
  s_add_u32 s43, s43, s44
  s_sub_u32 s44, s44, 1
  s_cmp_lg_u32 s44, 0
  s_cbranch_scc1 .Lloop
  SSTORE 22, s43
  s_mov_b32 m0, s9
  s_nop 0
  s_mov_b32 s45, m0
  s_add_u32 null, s8, s10
  s_cselect_b32 s46, 1, 0
  s_mov_b32 s47, s14
  s_mov_b32 null, 0
  s_sext_i32_i16 s48, s11
  s_bcnt1_i32_b32 s49, s14
  s_ctz_i32_b32 s50, s10
  SSTORE 23, s45
  SSTORE 24, s46
  SSTORE 25, s47
  SSTORE 26, s48
  SSTORE 27, s49
  SSTORE 28, s50
  // vccz / vccnz / execz / execnz (wave32: vcc_lo and exec_lo)
  s_mov_b32 s51, 0
  s_mov_b32 vcc_lo, 0
  s_cbranch_vccz .Lv1
  s_branch .Lv2
.Lv1:
  s_or_b32 s51, s51, 1
.Lv2:
  s_mov_b32 vcc_lo, 0x80000000
  s_cbranch_vccnz .Lv3
  s_branch .Lv4
.Lv3:
  s_or_b32 s51, s51, 2
.Lv4:
  s_mov_b32 s52, exec_lo
  s_mov_b32 exec_lo, 0
  s_cbranch_execz .Lv5
  s_branch .Lv6
.Lv5:
  s_or_b32 s51, s51, 4
.Lv6:
  s_mov_b32 exec_lo, s52
  s_cbranch_execnz .Lv7
  s_branch .Lv8
.Lv7:
  s_or_b32 s51, s51, 8
.Lv8:
  SSTORE 29, s51
  s_bfe_i32 s39, s14, (8 << 16) | 20          // stored last
  SSTORE 18, s39
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: salu, .symbol: salu.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 32,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

// The shared macros and descriptor boilerplate: gfx942_common.inc.
.include "gfx942_common.inc"

// salu: scalar ALU. in column 0 holds eight u32 x0..x7 (read with one s_load_dwordx8 into
// s8..s15); each result is an SGPR copied to a VGPR and stored by every lane to the same dword
// out[k] (SOUT k). Column 1 holds a per-lane result written under a partial EXEC.
.macro SOUT k, sreg
  v_mov_b32_e32 v2, \sreg
  global_store_dword v3, v2, s[6:7] offset:4*(\k)
.endm
KERNEL salu
  PROLOGUE
  s_load_dwordx8 s[8:15], s[4:5], 0x0
  v_mov_b32_e32 v3, 0                     // v3 = 0: every lane stores scalar results at out + 4k
  s_waitcnt lgkmcnt(0)
  // 96-bit add {x6:x1:x0} + {x7:x3:x2}: the carry rides in SCC from word to word
  s_add_u32 s16, s8, s10
  s_cselect_b32 s19, 1, 0                 // the low word's carry (s_cselect leaves SCC alone)
  s_addc_u32 s17, s9, s11
  s_addc_u32 s18, s14, s15
  SOUT 0, s16
  SOUT 1, s17
  SOUT 2, s18
  SOUT 3, s19
  // 64-bit subtract {x1:x0} - {x3:x2} with the borrow in SCC, and the final borrow
  s_sub_u32 s16, s8, s10
  s_subb_u32 s17, s9, s11
  s_cselect_b32 s18, 1, 0
  SOUT 4, s16
  SOUT 5, s17
  SOUT 6, s18
  s_sub_i32 s16, s11, s13                 // 0x80000001 - 5: signed overflow sets SCC
  s_cselect_b32 s17, 1, 0
  SOUT 7, s16
  SOUT 8, s17
  s_mul_i32 s16, s12, s14                 // low 32 bits of x4 * x6
  SOUT 9, s16
  s_mul_hi_u32 s16, s14, s9               // high 32 bits, unsigned
  SOUT 10, s16
  s_mul_hi_i32 s16, s12, s14              // high 32 bits, signed
  SOUT 11, s16
  s_lshl_b32 s16, s9, 4
  SOUT 12, s16
  s_lshr_b32 s16, s11, 31
  SOUT 13, s16
  s_ashr_i32 s16, s11, 4
  SOUT 14, s16
  s_ashr_i32 s16, s14, s13                // shift count from a register (x5 = 5)
  SOUT 15, s16
  s_lshl_b64 s[16:17], s[8:9], 36
  SOUT 16, s16
  SOUT 17, s17
  s_lshr_b64 s[16:17], s[10:11], 33
  SOUT 18, s16
  SOUT 19, s17
  s_ashr_i64 s[16:17], s[10:11], 33
  SOUT 20, s16
  SOUT 21, s17
  s_lshl_b64 s[16:17], s[14:15], 4        // bits cross from the low into the high word
  SOUT 22, s16
  SOUT 23, s17
  s_bfe_u32 s16, s14, 0x000c0004          // 12 bits from bit 4 (width in [22:16], offset [4:0])
  SOUT 24, s16
  s_bfe_u32 s16, s14, 0x00100014          // 16 bits from bit 20: only 12 exist
  SOUT 25, s16
  s_and_b64 s[16:17], s[8:9], s[14:15]
  SOUT 26, s16
  SOUT 27, s17
  s_or_b64 s[16:17], s[8:9], s[14:15]
  SOUT 28, s16
  SOUT 29, s17
  s_xor_b64 s[16:17], s[8:9], s[14:15]
  SOUT 30, s16
  SOUT 31, s17
  s_cmp_gt_i32 s12, s13                   // -7 > 5 (signed): false
  s_cselect_b32 s16, s9, s14
  SOUT 32, s16
  s_cmp_gt_u32 s12, s13                   // 0xfffffff9 > 5 (unsigned): true
  s_cselect_b32 s16, s9, s14
  SOUT 33, s16
  s_cmp_eq_u32 s13, 5
  s_cselect_b64 s[16:17], s[8:9], s[14:15]
  SOUT 34, s16
  SOUT 35, s17
  s_movk_i32 s16, 0x8001                  // SOPK: the 16-bit immediate sign-extended
  SOUT 36, s16
  s_movk_i32 s16, 0x7fff
  SOUT 37, s16
  s_not_b32 s16, s9
  SOUT 38, s16
  s_brev_b32 s16, s9
  SOUT 39, s16
  s_mov_b64 s[16:17], s[14:15]
  SOUT 40, s16
  SOUT 41, s17
  s_not_b64 s[16:17], s[10:11]
  SOUT 42, s16
  SOUT 43, s17
  // SOPC compares steering conditional branches: bit b of s16 is set when the s_or_b32 after
  // branch b runs (the branch was not taken)
  s_mov_b32 s16, 0
  s_cmp_lt_i32 s12, s13                   // -7 < 5 signed: true -> not taken
  s_cbranch_scc0 .Lsalu_b0
  s_or_b32 s16, s16, 1
.Lsalu_b0:
  s_cmp_lt_u32 s12, s13                   // unsigned: false -> not taken
  s_cbranch_scc1 .Lsalu_b1
  s_or_b32 s16, s16, 2
.Lsalu_b1:
  s_cmp_ge_i32 s11, s13                   // 0x80000001 >= 5 signed: false -> taken
  s_cbranch_scc0 .Lsalu_b2
  s_or_b32 s16, s16, 4
.Lsalu_b2:
  s_cmp_ge_u32 s11, s13                   // unsigned: true -> not taken
  s_cbranch_scc0 .Lsalu_b3
  s_or_b32 s16, s16, 8
.Lsalu_b3:
  s_cmp_le_i32 s12, s12                   // true -> not taken
  s_cbranch_scc0 .Lsalu_b4
  s_or_b32 s16, s16, 16
.Lsalu_b4:
  s_cmp_lg_u32 s8, s8                     // false -> not taken
  s_cbranch_scc1 .Lsalu_b5
  s_or_b32 s16, s16, 32
.Lsalu_b5:
  s_cmp_eq_u64 s[8:9], s[8:9]             // true -> not taken
  s_cbranch_scc0 .Lsalu_b6
  s_or_b32 s16, s16, 64
.Lsalu_b6:
  s_cmp_lg_u64 s[8:9], s[10:11]           // true -> taken
  s_cbranch_scc1 .Lsalu_b7
  s_or_b32 s16, s16, 0x80
.Lsalu_b7:
  s_branch .Lsalu_b8                      // always taken
  s_or_b32 s16, s16, 0x100
.Lsalu_b8:
  s_cmp_eq_i32 s12, -7                    // an inline constant operand: true -> not taken
  s_cbranch_scc0 .Lsalu_b9
  s_or_b32 s16, s16, 0x200
.Lsalu_b9:
  SOUT 44, s16
  // a counted loop with a backward branch: s17 = x5 + (x5 - 1) + ... + 1
  s_mov_b32 s17, 0
  s_mov_b32 s18, s13
.Lsalu_loop:
  s_add_u32 s17, s17, s18
  s_sub_u32 s18, s18, 1
  s_cmp_lg_u32 s18, 0
  s_cbranch_scc1 .Lsalu_loop
  SOUT 45, s17
  // saveexec: EXEC = 0x0000ffff_0000000f & EXEC, the old EXEC (all 64 lanes) saved
  s_mov_b32 s24, 0x0000000f
  s_mov_b32 s25, 0x0000ffff
  v_mov_b32_e32 v4, 0
  s_and_saveexec_b64 s[26:27], s[24:25]
  s_cselect_b32 s28, 1, 0                 // SCC = (new EXEC != 0)
  v_mov_b32_e32 v4, -1                    // only lanes 0-3 and 32-47 write
  s_mov_b64 s[30:31], exec
  s_or_saveexec_b64 s[32:33], s[26:27]    // EXEC = all again, s[32:33] = the partial mask
  s_mov_b64 s[34:35], exec
  STORE 1, v4
  SOUT 46, s26
  SOUT 47, s27
  SOUT 48, s28
  SOUT 49, s30
  SOUT 50, s31
  SOUT 51, s32
  SOUT 52, s33
  SOUT 53, s34
  SOUT 54, s35
  // EXEC / VCC branches: only the last s_or_b32 (8) runs
  s_mov_b32 s16, 0
  s_mov_b64 s[36:37], exec
  s_and_b64 exec, exec, 0
  s_cbranch_execz .Lsalu_e0
  s_or_b32 s16, s16, 1
.Lsalu_e0:
  s_mov_b64 exec, s[36:37]
  s_cbranch_execnz .Lsalu_e1
  s_or_b32 s16, s16, 2
.Lsalu_e1:
  s_mov_b64 vcc, 0
  s_cbranch_vccz .Lsalu_e2
  s_or_b32 s16, s16, 4
.Lsalu_e2:
  s_or_b32 s16, s16, 8
  SOUT 55, s16
  s_endpgm

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - { .name: salu, .symbol: salu.kd, .kernarg_segment_size: 16, .kernarg_segment_align: 8,
      .group_segment_fixed_size: 0, .private_segment_fixed_size: 0, .wavefront_size: 64,
      .sgpr_count: 96, .vgpr_count: 64, .max_flat_workgroup_size: 256,
      .args: [ { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global },
               { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global } ] }
...
.end_amdgpu_metadata

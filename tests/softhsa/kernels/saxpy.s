// saxpy: out[i] = a * x[i] + y[i] for i < n, hand-written GFX9 assembly (llvm-mc-19), one
// work-item per element (the workgroup size read from the dispatch packet), kernargs {x, y, out:
// u64; a: f32; n: u32}. Run by softhsa's machine-code
// interpreter in tests/softhsa/test_isa.py against numpy.
.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
.text
.globl saxpy
.p2align 8
.type saxpy,@function
saxpy:
  s_load_dword s16, s[0:1], 0x4            // dispatch packet: workgroup_size_x | y << 16
  s_load_dwordx4 s[8:11], s[2:3], 0x0      // x, y
  s_load_dwordx2 s[12:13], s[2:3], 0x10    // out
  s_load_dwordx2 s[14:15], s[2:3], 0x18    // a, n
  s_waitcnt lgkmcnt(0)
  s_and_b32 s16, s16, 0xffff
  s_mul_i32 s17, s4, s16                   // the group's first work-item (s4: workgroup id x)
  v_and_b32_e32 v0, 0x3ff, v0              // work-item id x (packed ids)
  v_add_u32_e32 v0, s17, v0
  v_cmp_gt_u32_e32 vcc, s15, v0            // i < n
  s_and_saveexec_b64 s[18:19], vcc
  s_cbranch_execz .Lend
  v_lshlrev_b32_e32 v1, 2, v0
  global_load_dword v5, v1, s[8:9]
  global_load_dword v6, v1, s[10:11]
  s_waitcnt vmcnt(0)
  v_fma_f32 v7, s14, v5, v6
  global_store_dword v1, v7, s[12:13]
.Lend:
  s_endpgm
.Lsaxpy_end:
  .size saxpy, .Lsaxpy_end-saxpy

.rodata
.p2align 6
.amdhsa_kernel saxpy
  .amdhsa_user_sgpr_dispatch_ptr 1
  .amdhsa_user_sgpr_kernarg_segment_ptr 1
  .amdhsa_system_sgpr_workgroup_id_x 1
  .amdhsa_next_free_vgpr 8
  .amdhsa_next_free_sgpr 20
  .amdhsa_accum_offset 8
  .amdhsa_kernarg_size 32
.end_amdhsa_kernel

.amdgpu_metadata
---
amdhsa.version: [ 1, 2 ]
amdhsa.kernels:
  - .name: saxpy
    .symbol: saxpy.kd
    .kernarg_segment_size: 32
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 64
    .sgpr_count: 20
    .vgpr_count: 8
    .max_flat_workgroup_size: 256
    .args:
      - { .size: 8, .offset: 0, .value_kind: global_buffer, .address_space: global }
      - { .size: 8, .offset: 8, .value_kind: global_buffer, .address_space: global }
      - { .size: 8, .offset: 16, .value_kind: global_buffer, .address_space: global }
      - { .size: 4, .offset: 24, .value_kind: by_value }
      - { .size: 4, .offset: 28, .value_kind: by_value }
...
.end_amdgpu_metadata

// c = a + b over n floats, one work-item each (workgroups of 64): compiled by clang-19 at test
// time and run by softhsa's machine-code interpreter (tests/softhsa/test_isa.py), which also
// patches its v_add_f32 into v_sub_f32.
__kernel void __attribute__((reqd_work_group_size(64, 1, 1)))
vadd(__global const float* a, __global const float* b, __global float* c, uint n) {
  const uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) c[i] = a[i] + b[i];
}

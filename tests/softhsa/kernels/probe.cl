// Test kernels for softhsa's loader tests, compiled at test time by clang-19 (see __init__.py).
// `probe`: one buffer and two by-value u32 (kernarg 16, no LDS, no scratch).
// `tiles`: a fixed workgroup size, 1 KiB of LDS and a dynamically indexed private array, so the
// group and private segment sizes in its metadata are nonzero.
// softhsa never runs these: they are loaded, queried and logged. With -nogpulib, work-item ids
// come from the builtins (get_global_id needs the device library).

__kernel void probe(__global uint* out, uint a, uint b) {
  out[__builtin_amdgcn_workitem_id_x()] = a + b;
}

__kernel void __attribute__((reqd_work_group_size(64, 1, 1)))
tiles(__global uint* out, uint n) {
  __local uint tile[256];
  volatile uint scratch[64];
  const uint i = __builtin_amdgcn_workitem_id_x();
  scratch[(i * 7) & 63] = n;
  tile[i] = scratch[i & 63];
  __builtin_amdgcn_s_barrier();
  out[i] = tile[(i + 1) & 255];
}

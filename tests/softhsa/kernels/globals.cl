// Program-scope variables for softhsa's loader tests: an initialized value and a pointer to it,
// which the linker turns into an R_AMDGPU_RELATIVE64 dynamic relocation. Compiled with
// -fvisibility=protected so both appear in .dynsym, where the loader looks symbols up.

__global uint probe_counter = 7;
__global uint* __global probe_pointer = &probe_counter;

__kernel void bump(void) { *probe_pointer += 1; }

/* softhsa: IREE's device-library blit kernels run on the host (see softhsa_blit.h). */
#include "softhsa_blit.h"

#include <string.h>

typedef struct blit_kernel {
  const char* name;
  int is_copy;
  uint32_t unit;         /* bytes per element_length unit */
  uint32_t pattern_size; /* fills: bytes of the kernarg pattern (u8/u16/u32/u64), which is also
                            the period with which it repeats along the target */
} blit_kernel_t;

static const blit_kernel_t kKernels[] = {
    {"iree_hal_amdgpu_device_buffer_fill_x1", 0, 1, 1},
    {"iree_hal_amdgpu_device_buffer_fill_x2", 0, 2, 2},
    {"iree_hal_amdgpu_device_buffer_fill_x4", 0, 4, 4},
    {"iree_hal_amdgpu_device_buffer_fill_x8", 0, 8, 8},
    /* Each 16-byte element is {pattern, pattern}. */
    {"iree_hal_amdgpu_device_buffer_fill_block_x16", 0, 16, 8},
    /* Byte length; byte i is pattern byte (i & 7). */
    {"iree_hal_amdgpu_device_buffer_fill_block_unaligned_x16", 0, 1, 8},
    {"iree_hal_amdgpu_device_buffer_copy_x1", 1, 1, 0},
    {"iree_hal_amdgpu_device_buffer_copy_block_x4", 1, 4, 0},
    {"iree_hal_amdgpu_device_buffer_copy_block_x8", 1, 8, 0},
    {"iree_hal_amdgpu_device_buffer_copy_block_x16", 1, 16, 0},
    /* Byte length. */
    {"iree_hal_amdgpu_device_buffer_copy_block_unaligned_x16", 1, 1, 0},
};

int softhsa_blit_kernel_index(const char* name, size_t length) {
  for (size_t i = 0; i < sizeof(kKernels) / sizeof(kKernels[0]); ++i)
    if (strlen(kKernels[i].name) == length && memcmp(kKernels[i].name, name, length) == 0) return (int)i;
  return -1;
}

static uint64_t read_u64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

int softhsa_blit_decode(int index, const uint8_t* kernargs, uint64_t kernarg_size,
                        softhsa_blit_t* out_blit) {
  const blit_kernel_t* k = &kKernels[index];
  memset(out_blit, 0, sizeof(*out_blit));
  out_blit->is_copy = k->is_copy;
  out_blit->unit = k->unit;
  if (k->is_copy) {
    if (kernarg_size < 24) return -1;
    out_blit->source = read_u64(kernargs);
    out_blit->target = read_u64(kernargs + 8);
    out_blit->count = read_u64(kernargs + 16);
  } else {
    if (kernarg_size < 16 + (uint64_t)k->pattern_size) return -1;
    out_blit->target = read_u64(kernargs);
    out_blit->count = read_u64(kernargs + 8);
    memcpy(&out_blit->pattern, kernargs + 16, k->pattern_size); /* little-endian widening */
    out_blit->pattern_size = k->pattern_size;
  }
  return out_blit->count > UINT64_MAX / out_blit->unit ? -1 : 0;
}

uint64_t softhsa_blit_length(const softhsa_blit_t* blit) { return blit->count * blit->unit; }

void softhsa_blit_run(const softhsa_blit_t* blit) {
  const uint64_t length = softhsa_blit_length(blit);
  uint8_t* target = (uint8_t*)(uintptr_t)blit->target;
  if (blit->is_copy) {
    memmove(target, (const void*)(uintptr_t)blit->source, length);
    return;
  }
  uint8_t pattern[8];
  memcpy(pattern, &blit->pattern, sizeof(pattern));
  for (uint64_t i = 0; i < length; ++i) target[i] = pattern[i % blit->pattern_size];
}

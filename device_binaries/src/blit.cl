// Device-library blit kernels: buffer fills and copies for amdgpu_cli's HSA driver.
//
// Names, argument order, kernarg layouts and length units follow IREE's amdgpu device library
// (runtime/src/iree/hal/drivers/amdgpu/device/blit.c), so the host side can plan a fill or copy
// exactly as IREE does:
//   fill kernels:  (target pointer @0, u64 element_length @8, pattern @16)
//                  pattern is u8/u16/u32 for fill_x1/_x2/_x4 (kernarg 20 bytes), u64 otherwise (24)
//   copy kernels:  (source pointer @0, target pointer @8, u64 element_length @16)   (24 bytes)
// element_length counts elements of the kernel's width (1, 2, 4, 8 or 16 bytes), except in the two
// *_unaligned_x16 kernels, where it is a byte length.
//
// Every kernel walks its range with a grid-stride loop over "blocks" (one or more elements per
// work-item), so any grid covers the whole range; the host sizes the grid from the same block
// sizes (below) and caps it. Work-item ids come from the AMDGPU builtins and the dispatch packet
// (no device libraries are linked: built with -nogpulib), so no hidden kernel arguments exist.

// The first 24 bytes of an hsa_kernel_dispatch_packet_t (HSA spec / hsa.h): header and setup,
// workgroup size x/y/z, reserved, grid size x/y/z.
typedef struct {
  ushort header;
  ushort setup;
  ushort workgroup_size[3];
  ushort reserved0;
  uint grid_size[3];
} dispatch_packet_head_t;

// A 16-byte vector that may sit at any byte address (packed: loads/stores make no alignment claim).
typedef struct __attribute__((packed)) {
  ulong2 value;
} unaligned_ulong2_t;

#define KERNEL __kernel __attribute__((amdgpu_flat_work_group_size(1, 1024)))

// Work-items per block in the blocked kernels (the host computes grids with the same numbers).
#define FILL_X4_BLOCK 16        // u32 elements per work-item in fill_x4
#define FILL_X16_BLOCK 4        // 16-byte elements per work-item in fill_block_x16 / unaligned
#define COPY_X4_BLOCK 16        // u32 elements per work-item in copy_block_x4
#define COPY_X8_BLOCK 8         // u64 elements per work-item in copy_block_x8
#define COPY_X16_BLOCK 1        // 16-byte elements per work-item in copy_block_x16 / unaligned

static inline __constant dispatch_packet_head_t* packet(void) {
  return (__constant dispatch_packet_head_t*)__builtin_amdgcn_dispatch_ptr();
}

// Linear work-item index over a 2-D grid (the host splits very large grids across y).
static inline ulong linear_id(void) {
  __constant dispatch_packet_head_t* p = packet();
  const ulong x = (ulong)__builtin_amdgcn_workgroup_id_x() * p->workgroup_size[0] +
                  __builtin_amdgcn_workitem_id_x();
  const ulong y = (ulong)__builtin_amdgcn_workgroup_id_y() * p->workgroup_size[1] +
                  __builtin_amdgcn_workitem_id_y();
  return y * p->grid_size[0] + x;
}

// Work-items in the whole grid: the stride of every grid-stride loop.
static inline ulong grid_items(void) {
  __constant dispatch_packet_head_t* p = packet();
  return (ulong)p->grid_size[0] * p->grid_size[1];
}

// Advances a grid-stride index; false once the next index would wrap around 2^64.
static inline bool step(ulong* index, ulong stride) {
  if (*index > (ulong)-1 - stride) return false;
  *index += stride;
  return true;
}

static inline ulong min_u64(ulong a, ulong b) { return a < b ? a : b; }

// Byte `offset` of an 8-byte repetition of the fill pattern.
static inline uchar pattern_byte(ulong pattern, ulong offset) {
  return (uchar)(pattern >> ((offset & 7) * 8));
}

// One element per work-item: fill_x1, fill_x2, fill_x8.
#define FILL_ELEMENTWISE(NAME, T)                                                     \
  KERNEL void NAME(__global T* restrict target, ulong element_length, T pattern) {    \
    const ulong stride = grid_items();                                                \
    for (ulong i = linear_id(); i < element_length;) {                                \
      target[i] = pattern;                                                            \
      if (!step(&i, stride)) break;                                                   \
    }                                                                                 \
  }

FILL_ELEMENTWISE(iree_hal_amdgpu_device_buffer_fill_x1, uchar)
FILL_ELEMENTWISE(iree_hal_amdgpu_device_buffer_fill_x2, ushort)
FILL_ELEMENTWISE(iree_hal_amdgpu_device_buffer_fill_x8, ulong)

// BLOCK elements per work-item; the last block may be short.
#define FILL_BLOCKED(NAME, T, PATTERN_T, BLOCK, SPLAT)                                \
  KERNEL void NAME(__global T* restrict target, ulong element_length,                 \
                   PATTERN_T pattern) {                                               \
    const T value = SPLAT;                                                            \
    const ulong stride = grid_items();                                                \
    for (ulong block = linear_id();;) {                                               \
      const ulong first = block * BLOCK;                                              \
      if (first >= element_length) return;                                            \
      const ulong count = min_u64(BLOCK, element_length - first);                  \
      for (ulong i = 0; i < count; ++i) target[first + i] = value;                    \
      if (!step(&block, stride)) return;                                              \
    }                                                                                 \
  }

FILL_BLOCKED(iree_hal_amdgpu_device_buffer_fill_x4, uint, uint, FILL_X4_BLOCK, pattern)
FILL_BLOCKED(iree_hal_amdgpu_device_buffer_fill_block_x16, ulong2, ulong, FILL_X16_BLOCK,
             ((ulong2)(pattern, pattern)))

#define COPY_BLOCKED(NAME, T, BLOCK)                                                  \
  KERNEL void NAME(__global const T* restrict source, __global T* restrict target,    \
                   ulong element_length) {                                            \
    const ulong stride = grid_items();                                                \
    for (ulong block = linear_id();;) {                                               \
      const ulong first = block * BLOCK;                                              \
      if (first >= element_length) return;                                            \
      const ulong count = min_u64(BLOCK, element_length - first);                  \
      for (ulong i = 0; i < count; ++i) target[first + i] = source[first + i];        \
      if (!step(&block, stride)) return;                                              \
    }                                                                                 \
  }

COPY_BLOCKED(iree_hal_amdgpu_device_buffer_copy_x1, uchar, 1)
COPY_BLOCKED(iree_hal_amdgpu_device_buffer_copy_block_x4, uint, COPY_X4_BLOCK)
COPY_BLOCKED(iree_hal_amdgpu_device_buffer_copy_block_x8, ulong, COPY_X8_BLOCK)
COPY_BLOCKED(iree_hal_amdgpu_device_buffer_copy_block_x16, ulong2, COPY_X16_BLOCK)

// Byte-length fill at any alignment: whole 16-byte vectors in blocks of FILL_X16_BLOCK, then the
// 0..15 tail bytes, written by the work-item that owns the last block (or item 0 when there are
// no whole vectors). The host uses it only when target and length are multiples of the pattern
// length, so byte offsets are in phase with the pattern.
KERNEL void iree_hal_amdgpu_device_buffer_fill_block_unaligned_x16(
    __global unaligned_ulong2_t* restrict target, ulong element_length, ulong pattern) {
  const ulong vectors = element_length / 16;
  const ulong blocks = (vectors + FILL_X16_BLOCK - 1) / FILL_X16_BLOCK;
  const ulong tail_owner = blocks ? blocks - 1 : 0;
  const ulong2 value = (ulong2)(pattern, pattern);
  __global uchar* bytes = (__global uchar*)target;
  const ulong stride = grid_items();
  for (ulong block = linear_id(); block <= tail_owner;) {
    const ulong first = block * FILL_X16_BLOCK;
    const ulong count = min_u64(FILL_X16_BLOCK, vectors - first);
    for (ulong i = 0; i < count; ++i) target[first + i].value = value;
    if (block == tail_owner) {
      for (ulong b = vectors * 16; b < element_length; ++b) bytes[b] = pattern_byte(pattern, b);
    }
    if (!step(&block, stride)) return;
  }
}

// Byte-length copy at any alignment: whole 16-byte vectors, then the tail bytes (as above).
KERNEL void iree_hal_amdgpu_device_buffer_copy_block_unaligned_x16(
    __global const unaligned_ulong2_t* restrict source,
    __global unaligned_ulong2_t* restrict target, ulong element_length) {
  const ulong vectors = element_length / 16;
  const ulong blocks = (vectors + COPY_X16_BLOCK - 1) / COPY_X16_BLOCK;
  const ulong tail_owner = blocks ? blocks - 1 : 0;
  __global const uchar* source_bytes = (__global const uchar*)source;
  __global uchar* target_bytes = (__global uchar*)target;
  const ulong stride = grid_items();
  for (ulong block = linear_id(); block <= tail_owner;) {
    const ulong first = block * COPY_X16_BLOCK;
    const ulong count = min_u64(COPY_X16_BLOCK, vectors - first);
    for (ulong i = 0; i < count; ++i) target[first + i].value = source[first + i].value;
    if (block == tail_owner) {
      for (ulong b = vectors * 16; b < element_length; ++b) target_bytes[b] = source_bytes[b];
    }
    if (!step(&block, stride)) return;
  }
}

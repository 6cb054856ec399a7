/* softhsa: IREE's device-library blit kernels executed on the host.
 *
 * Names and kernarg layouts follow IREE runtime/src/iree/hal/drivers/amdgpu/device/blit.c:
 *   fill  {target u64 @0, element_length u64 @8, pattern @16 (u8/u16/u32 for _x1/_x2/_x4, else u64)}
 *   copy  {source u64 @0, target u64 @8, element_length u64 @16}
 * element_length counts elements of the kernel's unit: 1/2/4/8 bytes for fill_x1.._x8, 16 bytes
 * for fill_block_x16 and copy_block_x16, 4 for copy_block_x4, 8 for copy_block_x8, 1 for copy_x1;
 * the *_unaligned_x16 kernels take a byte length. The device kernels are grid-stride loops, so a
 * dispatch of any grid covers the whole range: softhsa runs each dispatch as one operation. */
#ifndef SOFTHSA_BLIT_H
#define SOFTHSA_BLIT_H

#include <stddef.h>
#include <stdint.h>

/* One decoded blit: `unit` bytes per element, `count` elements. */
typedef struct softhsa_blit {
  int is_copy;
  uint64_t target;
  uint64_t source;   /* copies only */
  uint64_t pattern;  /* fills only: the kernarg pattern widened to 64 bits */
  uint32_t pattern_size; /* fills: byte i of the target gets pattern byte i % pattern_size */
  uint64_t unit;
  uint64_t count;
} softhsa_blit_t;

/* Index in the device-library kernel table for the kernel named by `length` bytes of `name`
 * (the symbol without ".kd"), or -1. */
int softhsa_blit_kernel_index(const char* name, size_t length);

/* Decodes the kernargs of kernel `index` (kernarg_size bytes at `kernargs`). Returns -1 when the
 * kernargs are too short or the byte length overflows. */
int softhsa_blit_decode(int index, const uint8_t* kernargs, uint64_t kernarg_size,
                        softhsa_blit_t* out_blit);

/* Byte length the blit touches (count * unit); callers validate the ranges before running. */
uint64_t softhsa_blit_length(const softhsa_blit_t* blit);

void softhsa_blit_run(const softhsa_blit_t* blit);

#endif /* SOFTHSA_BLIT_H */

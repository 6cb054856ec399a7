/* softhsa: an interpreter of AMDGPU machine code (gfx942: GFX9, wave64; gfx1100: GFX11, wave32), so that a kernel
 * dispatch runs the code object's own instructions instead of being logged.
 *
 * softhsa_isa_run() executes one kernel-dispatch packet: every workgroup of the grid, each as
 * ceil(workgroup size / wavefront size) waves run round-robin between barriers, starting at the
 * kernel descriptor's entry point with the registers the hardware sets up from the descriptor
 * (user SGPRs: private segment buffer, dispatch pointer, queue pointer, kernarg segment pointer,
 * dispatch id, flat scratch init, private segment size, in that order when enabled; then system
 * SGPRs: workgroup ids X/Y/Z, workgroup info; VGPR 0: the packed work-item ids, x in bits 9:0,
 * y in 19:10, z in 29:20, as gfx90a and later pack them). Sources: LLVM AMDGPUUsage ("Kernel
 * Descriptor", "Initial Kernel Execution State"), AMD's "AMD Instinct MI300 ISA" manual.
 *
 * What it does not know stops the dispatch: an instruction it cannot decode or run gives
 * HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION with a message naming the encoding, opcode and address; a
 * memory access outside every live allocation gives HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION.
 * Coverage grows family by family (tests/softhsa/test_isa.py runs kernels against numpy); until it
 * covers the corpus, dispatches run here only when SOFTHSA_EXECUTE=1 (dispatch.c). */
#ifndef SOFTHSA_ISA_H
#define SOFTHSA_ISA_H

#include <hsa/hsa.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  const uint8_t* descriptor;                 /* the 64-byte kernel descriptor */
  const hsa_kernel_dispatch_packet_t* packet;
  uint32_t wavefront_size;                   /* 64 (GFX9) */
  uint32_t group_segment_size;               /* LDS bytes per workgroup */
  int gfx11;                                 /* RDNA3 (GFX11, wave32) machine code, else GFX9 */
} softhsa_isa_dispatch_t;

/* HSA_STATUS_SUCCESS, or the error status with a one-line reason in `message`; `retired` (if
 * not NULL) receives how many instructions the waves ran. */
hsa_status_t softhsa_isa_run(const softhsa_isa_dispatch_t* dispatch, char* message,
                             size_t message_size, uint64_t* retired);

#endif /* SOFTHSA_ISA_H */

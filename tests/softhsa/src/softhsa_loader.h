/* softhsa: the loader half — code-object readers, executables, symbols, the AMD loader extension
 * table, and running kernel-dispatch packets (contract C2).
 *
 * The queue thread (core) calls softhsa_loader_run_dispatch() for each kernel-dispatch packet once
 * its barrier and waits are satisfied and before it signals completion. A packet whose
 * kernel_object was not handed out by HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, or whose
 * device-library kernel would touch memory outside a live allocation, returns an error status:
 * the queue goes to the error state. Device-library kernels (softhsa_blit.h) run in C; every
 * other kernel is recorded as one JSON line through softhsa_log_json(), or, with
 * SOFTHSA_EXECUTE=1, run by the machine-code interpreter (softhsa_isa.h). */
#ifndef SOFTHSA_LOADER_H
#define SOFTHSA_LOADER_H

#include <hsa/hsa.h>
#include <stddef.h>
#include <stdint.h>

#include "softhsa_core.h"

#define SOFTHSA_AMD_LOADER_EXTENSION 0x201 /* HSA_EXTENSION_AMD_LOADER */

/* softhsa_loader_run_dispatch (declared in softhsa_core.h) returns HSA_STATUS_SUCCESS, or the
 * queue error: HSA_STATUS_ERROR_EXCEPTION for what the loader rejects, the interpreter's
 * ILLEGAL_INSTRUCTION / MEMORY_APERTURE_VIOLATION (softhsa_isa.h). */

/* Frees every reader, executable and load image (hsa_shut_down, reference count 0). */
void softhsa_loader_reset(void);

/* Fills up to `table_length` bytes of an hsa_ven_amd_loader_1_03_pfn_t for extension 0x201,
 * version 1. With table_length 0 (table may be NULL) it only answers whether it is supported. */
hsa_status_t softhsa_loader_extension_table(uint16_t extension, uint16_t version_major,
                                            size_t table_length, void* table);

#endif /* SOFTHSA_LOADER_H */

/* softhsa: the loader's shared state — structs, the live lists and the lock — used by loader.c
 * (readers, executables, symbols), loader_ext.c (the AMD loader extension) and dispatch.c.
 *
 * Handles are pointers to these structs; every entry point first finds the handle in the live
 * lists (softhsa_loader_find_*), so stale or made-up handles give an error status, not a crash.
 * The lists and everything reachable from them are guarded by one recursive mutex
 * (softhsa_loader_lock), recursive so that loader-extension callbacks may call back into the
 * loader. */
#ifndef SOFTHSA_LOADER_STATE_H
#define SOFTHSA_LOADER_STATE_H

#include <hsa/hsa.h>
#include <stddef.h>
#include <stdint.h>

#include "softhsa_core.h"

typedef struct softhsa_executable softhsa_executable_t;
typedef struct softhsa_loaded_object softhsa_loaded_object_t;

typedef struct softhsa_symbol {
  softhsa_loaded_object_t* owner;
  char* name;         /* ELF symbol name, ".kd" included for kernels */
  int is_kernel;
  uint64_t address;   /* kernel descriptor or variable, inside the load image */
  uint64_t size;      /* variables */
  uint32_t kernarg_size, kernarg_align, group_size, private_size;
  int dynamic_callstack;
  int blit_index;     /* device-library kernel, or -1 */
} softhsa_symbol_t;

struct softhsa_loaded_object {
  softhsa_executable_t* executable;
  softhsa_agent_t* agent;
  hsa_agent_t agent_handle;
  uint8_t* storage; /* the code object bytes */
  size_t storage_size;
  uint8_t* image;      /* inside the mapping, aligned to the largest p_align */
  uint64_t image_size;
  void* mapping;       /* anonymous mmap: zeroed pages, touched only where segments are copied */
  size_t mapping_size;
  int64_t delta; /* load address - lowest PT_LOAD vaddr */
  softhsa_symbol_t* symbols;
  size_t symbol_count;
  softhsa_loaded_object_t* next;
};

struct softhsa_executable {
  hsa_profile_t profile;
  hsa_default_float_rounding_mode_t rounding;
  int frozen;
  softhsa_loaded_object_t* objects; /* load order */
  softhsa_executable_t* next;
};

void softhsa_loader_lock(void);
void softhsa_loader_unlock(void);
/* The live executables, newest first (callers hold the lock). */
softhsa_executable_t* softhsa_loader_executables(void);
softhsa_executable_t* softhsa_loader_find_executable(uint64_t handle);
softhsa_loaded_object_t* softhsa_loader_find_loaded_object(uint64_t handle);
/* The loaded object whose load image contains `address`. */
softhsa_loaded_object_t* softhsa_loader_find_image(uint64_t address);
/* The kernel whose descriptor is at `kernel_object`. */
softhsa_symbol_t* softhsa_loader_find_kernel(uint64_t kernel_object);

#endif /* SOFTHSA_LOADER_STATE_H */

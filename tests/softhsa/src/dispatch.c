/* softhsa: running a kernel-dispatch packet (softhsa_loader_run_dispatch, see softhsa_loader.h).
 * The kernargs, and a device-library kernel's target (and source) range, must lie inside one live
 * allocation (hsa_amd_pointer_info), else the dispatch fails as a GPU page fault would. Device-
 * library kernels then run in C; every other kernel becomes one JSON line in the dispatch log, or
 * with SOFTHSA_EXECUTE=1 runs on the machine-code interpreter (isa.c). */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "softhsa_blit.h"
#include "softhsa_core.h"
#include "softhsa_isa.h"
#include "softhsa_loader.h"
#include "softhsa_loader_state.h"

/* 1 when [address, address + length) lies inside one live allocation (hsa_amd_pointer_info). */
static int range_allocated(uint64_t address, uint64_t length) {
  if (length == 0) return 1;
  hsa_amd_pointer_info_t info;
  memset(&info, 0, sizeof(info));
  info.size = sizeof(info);
  if (hsa_amd_pointer_info((const void*)(uintptr_t)address, &info, NULL, NULL, NULL) !=
          HSA_STATUS_SUCCESS ||
      info.type == HSA_EXT_POINTER_TYPE_UNKNOWN) {
    return 0;
  }
  const uint64_t base = (uintptr_t)info.agentBaseAddress;
  return address >= base && address - base <= info.sizeInBytes &&
         length <= info.sizeInBytes - (address - base);
}

static int run_blit(const softhsa_symbol_t* kernel, const uint8_t* kernargs) {
  softhsa_blit_t blit;
  if (softhsa_blit_decode(kernel->blit_index, kernargs, kernel->kernarg_size, &blit)) return -1;
  const uint64_t length = softhsa_blit_length(&blit);
  if (!range_allocated(blit.target, length) ||
      (blit.is_copy && !range_allocated(blit.source, length))) {
    fprintf(stderr, "softhsa: %s touches memory outside any allocation\n", kernel->name);
    return -1;
  }
  softhsa_blit_run(&blit);
  return 0;
}

static int log_dispatch(const softhsa_agent_t* agent, const softhsa_symbol_t* kernel,
                        const hsa_kernel_dispatch_packet_t* packet, const uint8_t* kernargs) {
  const size_t capacity = 1024 + strlen(kernel->name) + 2 * (size_t)kernel->kernarg_size;
  char* line = malloc(capacity);
  if (!line) return -1;
  const uint32_t dynamic_group = packet->group_segment_size > kernel->group_size
                                      ? packet->group_segment_size - kernel->group_size
                                      : 0;
  int n = snprintf(line, capacity,
                   "{\"agent\": %u, \"kernel\": \"%.*s\", \"grid\": [%u, %u, %u], "
                   "\"workgroup\": [%u, %u, %u], \"kernarg_address\": %llu, \"kernarg\": \"",
                   softhsa_agent_index(agent), (int)(strlen(kernel->name) - 3), kernel->name,
                   packet->grid_size_x, packet->grid_size_y, packet->grid_size_z,
                   packet->workgroup_size_x, packet->workgroup_size_y, packet->workgroup_size_z,
                   (unsigned long long)(uintptr_t)packet->kernarg_address);
  for (uint32_t i = 0; i < kernel->kernarg_size; ++i) n += sprintf(line + n, "%02x", kernargs[i]);
  snprintf(line + n, capacity - (size_t)n,
           "\", \"kernarg_segment_size\": %u, \"group_segment_size\": %u, "
           "\"private_segment_size\": %u, \"dynamic_group_segment_size\": %u}",
           kernel->kernarg_size, kernel->group_size, kernel->private_size, dynamic_group);
  softhsa_log_json(line);
  free(line);
  return 0;
}

/* SOFTHSA_EXECUTE=1: run the kernel's machine code (softhsa_isa.h) after logging it; SOFTHSA_STATS=1
 * adds how many instructions it ran and how fast. */
static hsa_status_t execute(const softhsa_agent_t* agent, const softhsa_symbol_t* kernel,
                            const hsa_kernel_dispatch_packet_t* packet) {
  const uint32_t group = packet->group_segment_size > kernel->group_size
                             ? packet->group_segment_size : kernel->group_size;
  softhsa_isa_dispatch_t dispatch = {
      .descriptor = (const uint8_t*)(uintptr_t)kernel->address, .packet = packet,
      .wavefront_size = softhsa_agent_wavefront_size(agent), .group_segment_size = group,
      .gfx11 = strstr(softhsa_agent_isa_name(agent), "--gfx11") != NULL};
  char message[512] = "";
  uint64_t retired = 0;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  const hsa_status_t status = softhsa_isa_run(&dispatch, message, sizeof(message), &retired);
  clock_gettime(CLOCK_MONOTONIC, &end);
  if (getenv("SOFTHSA_STATS")) {  /* the interpreter's speed, per dispatch */
    const double seconds = (double)(end.tv_sec - start.tv_sec) + 1e-9 * (double)(end.tv_nsec - start.tv_nsec);
    fprintf(stderr, "softhsa stats: %.*s: %llu instructions (per wave) in %.6f s: %.0f per second\n",
            (int)(strlen(kernel->name) - 3), kernel->name, (unsigned long long)retired, seconds,
            seconds > 0 ? (double)retired / seconds : 0.0);
  }
  if (status != HSA_STATUS_SUCCESS)
    fprintf(stderr, "softhsa: %.*s: %s\n", (int)(strlen(kernel->name) - 3), kernel->name, message);
  return status;
}

hsa_status_t softhsa_loader_run_dispatch(softhsa_agent_t* agent,
                                         const hsa_kernel_dispatch_packet_t* packet) {
  softhsa_loader_lock();
  const softhsa_symbol_t* kernel = softhsa_loader_find_kernel(packet->kernel_object);
  hsa_status_t result = HSA_STATUS_ERROR_EXCEPTION;
  if (!kernel) {
    fprintf(stderr, "softhsa: dispatch of unknown kernel_object 0x%llx\n",
            (unsigned long long)packet->kernel_object);
  } else if (kernel->owner->agent != agent) {
    fprintf(stderr, "softhsa: %s was loaded for another agent\n", kernel->name);
  } else if (!range_allocated((uintptr_t)packet->kernarg_address, kernel->kernarg_size)) {
    fprintf(stderr, "softhsa: %s: kernargs outside any allocation\n", kernel->name);
  } else {
    const uint8_t* kernargs = packet->kernarg_address;
    const char* mode = getenv("SOFTHSA_EXECUTE");
    if (kernel->blit_index >= 0) {
      result = run_blit(kernel, kernargs) ? HSA_STATUS_ERROR_EXCEPTION : HSA_STATUS_SUCCESS;
    } else if (log_dispatch(agent, kernel, packet, kernargs)) {
      result = HSA_STATUS_ERROR_EXCEPTION;
    } else {
      result = mode && strcmp(mode, "1") == 0 ? execute(agent, kernel, packet)
                                              : HSA_STATUS_SUCCESS;
    }
  }
  softhsa_loader_unlock();
  return result;
}

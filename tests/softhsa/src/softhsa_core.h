/* softhsa core: the state every source file shares (agents, pools, ISAs, the init reference count)
 * and the interface the loader half (loader.c, helper C) uses.
 *
 * Lifetime: hsa_init (reference count 0 -> 1) reads the configuration (config.c) into one immutable
 * softhsa_system_t; hsa_shut_down (1 -> 0) destroys queues and allocations and frees it. Handles
 * (hsa_agent_t, hsa_amd_memory_pool_t, hsa_region_t, hsa_isa_t) are the addresses of the structs
 * below; lookups compare a handle against the system's own arrays, so a stale or made-up handle
 * is rejected instead of dereferenced. Signals and queues are separate (signal.c, queue.c).
 *
 * Threading: the system is read-only between init and shut-down; allocation bookkeeping takes
 * memory.c's mutex; signals share one mutex/condvar for wake-ups (signal.c). */
#ifndef SOFTHSA_CORE_H
#define SOFTHSA_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/amd_hsa_queue.h>
#include <hsa/amd_hsa_signal.h>

#define SOFTHSA_EXPORT __attribute__((visibility("default")))

/* First statement of every entry point that needs hsa_init. */
#define SOFTHSA_REQUIRE_INIT()                                           \
  do {                                                                   \
    if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED; \
  } while (0)

/* Attribute ids that newer ROCm headers add and softhsa answers too (values from IREE's
 * hsa-runtime-headers fork; see reference §2.1). */
#define SOFTHSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY 0xA016
#define SOFTHSA_AMD_AGENT_INFO_NUM_XCC 0xA111
#define SOFTHSA_AMD_AGENT_INFO_DRIVER_UID 0xA112
#define SOFTHSA_AMD_AGENT_INFO_NEAREST_CPU 0xA113
#define SOFTHSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED 0x204
#define SOFTHSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED 0x205
#define SOFTHSA_AMD_SYSTEM_INFO_XNACK_ENABLED 0x206
#define SOFTHSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_REC_GRANULE 18

#define SOFTHSA_NAME_MAX 64
#define SOFTHSA_AGENT_MAX 64
#define SOFTHSA_POOL_MAX 8

typedef struct softhsa_agent softhsa_agent_t;

/* Injected faults (config "faults", global or per GPU; config.c). */
typedef struct softhsa_faults {
  /* Each queue of the agent fails instead of running its packet number N (counted from 0, per
   * queue): the queue processor reports `queue_error_status` through the error callback and
   * stops. UINT64_MAX: never. */
  uint64_t queue_error_after_packets;
  hsa_status_t queue_error_status;
} softhsa_faults_t;

typedef struct softhsa_isa {
  char name[SOFTHSA_NAME_MAX];
} softhsa_isa_t;

typedef struct softhsa_region {
  struct softhsa_pool* pool;
} softhsa_region_t;

typedef struct softhsa_pool {
  softhsa_agent_t* owner;
  uint32_t global_flags; /* HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_* bits */
  uint64_t size;
  uint64_t alloc_max_size;
  uint64_t granule;
  uint64_t alignment;
  bool alloc_allowed;
  bool accessible_by_all;
  uint64_t used;           /* bytes allocated now; guarded by memory.c's mutex */
  softhsa_region_t region; /* the same memory seen through hsa_agent_iterate_regions */
} softhsa_pool_t;

struct softhsa_agent {
  bool is_gpu;
  uint32_t index; /* among visible agents of its kind, in iteration order */
  char name[SOFTHSA_NAME_MAX];
  char vendor_name[SOFTHSA_NAME_MAX];
  char product_name[SOFTHSA_NAME_MAX];
  char uuid[SOFTHSA_NAME_MAX];
  softhsa_isa_t* isa; /* NULL for CPUs */
  char isa_name_pending[SOFTHSA_NAME_MAX]; /* config.c: the ISA name until `isa` is interned */
  uint32_t chip_id;
  uint32_t node;
  uint32_t compute_units;
  uint32_t wavefront_size;
  uint32_t simds_per_cu;
  uint32_t max_waves_per_cu;
  uint32_t shader_engines;
  uint32_t shader_arrays_per_se;
  uint32_t bdfid;
  uint32_t domain;
  uint32_t asic_revision;
  uint32_t max_clock_mhz;
  uint32_t hdp_registers[2]; /* what HSA_AMD_AGENT_INFO_HDP_FLUSH points at */
  uint32_t nearest_cpu_index; /* config.c: index into the CPU list */
  softhsa_agent_t* nearest_cpu;
  uint32_t pool_count;
  softhsa_pool_t pools[SOFTHSA_POOL_MAX];
  softhsa_faults_t faults; /* GPUs only */
};

typedef struct softhsa_system {
  uint32_t agent_count; /* CPUs first, then visible GPUs */
  softhsa_agent_t agents[SOFTHSA_AGENT_MAX];
  uint32_t isa_count;
  softhsa_isa_t isas[SOFTHSA_AGENT_MAX];
  char* log_path; /* NULL: no dispatch log */
} softhsa_system_t;

/* ---- interface used by the loader half (contract C2) ---- */
softhsa_agent_t* softhsa_agent_from_handle(uint64_t handle);
int softhsa_agent_is_gpu(const softhsa_agent_t* agent);
const char* softhsa_agent_isa_name(const softhsa_agent_t* agent);
uint32_t softhsa_agent_wavefront_size(const softhsa_agent_t* agent);
/* The agent's index among visible GPUs (the "agent" field of the dispatch log). */
uint32_t softhsa_agent_index(const softhsa_agent_t* agent);
int softhsa_initialized(void);
void softhsa_log_json(const char* line);
uint64_t softhsa_now_ticks(void);

/* ---- implemented by the loader half (softhsa_loader.h; loader*.c, dispatch.c) ---- */
hsa_status_t softhsa_loader_run_dispatch(softhsa_agent_t* agent,
                                         const hsa_kernel_dispatch_packet_t* packet);
void softhsa_loader_reset(void);
/* With table NULL and table_length 0: SUCCESS when (extension, version_major) is supported. */
hsa_status_t softhsa_loader_extension_table(uint16_t extension, uint16_t version_major,
                                            size_t table_length, void* table);

/* ---- internal to the core ---- */
softhsa_system_t* softhsa_system(void); /* NULL when not initialized */
/* Parses the JSON at `path` (NULL: defaults) and applies ROCR_VISIBLE_DEVICES (`visible`, NULL when
 * unset). On failure returns NULL and writes one line naming the problem into `error`. */
softhsa_system_t* softhsa_config_load(const char* path, const char* visible, char* error,
                                      size_t error_size);
void softhsa_config_free(softhsa_system_t* system);
softhsa_pool_t* softhsa_pool_from_handle(uint64_t handle);
void softhsa_memory_release_all(void);
void softhsa_queue_destroy_all(void);
/* Signal wake-ups (signal.c). Every API value change calls softhsa_signal_notify. A waiter calls
 * softhsa_wait_until, which re-evaluates `ready` under the wake-up mutex after each notification
 * and at least every millisecond (so values written straight into an amd_signal_t, or a packet
 * header written into a ring, are seen too). Returns true once `ready` holds, false at the
 * deadline (UINT64_MAX: none). */
void softhsa_signal_notify(void);
bool softhsa_wait_until(bool (*ready)(void* context), void* context, uint64_t deadline_ticks);
uint64_t softhsa_deadline_after(uint64_t timeout_ticks);
bool softhsa_condition_holds(hsa_signal_condition_t condition, int64_t value, int64_t compare);
int64_t softhsa_signal_value(hsa_signal_t signal); /* acquire load */
void softhsa_signal_add(hsa_signal_t signal, int64_t delta); /* acquire-release, then wakes */
void softhsa_signal_set(hsa_signal_t signal, int64_t value); /* release store, then wakes */
hsa_status_t softhsa_signal_new(int64_t initial, hsa_signal_t* out);
/* A doorbell-kind signal (AMD_SIGNAL_KIND_DOORBELL, as ROCr gives queues): its value lives at
 * `target`, which is also its hardware_doorbell_ptr, so stores through the API or straight through
 * the pointer both ring it. */
hsa_status_t softhsa_doorbell_new(uint64_t* target, hsa_signal_t* out);
void softhsa_signal_free(hsa_signal_t signal);

#endif /* SOFTHSA_CORE_H */

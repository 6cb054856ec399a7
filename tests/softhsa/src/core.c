/* softhsa core: hsa_init / hsa_shut_down, status strings, system and agent queries, ISAs, the
 * extension entry points (delegated to the loader half) and the dispatch log.
 *
 * hsa_init is reference counted like ROCr's: the first call reads the configuration, the last
 * hsa_shut_down destroys queues, frees allocations and resets the loader. Every entry point except
 * hsa_init and hsa_status_string answers HSA_STATUS_ERROR_NOT_INITIALIZED before that. Agent
 * attribute values follow ROCr's GpuAgent::GetInfo / CpuAgent::GetInfo where those are constants
 * (queue sizes 64..131072, grid limits, NEAR rounding, BASE profile for GPUs, FULL for CPUs). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "softhsa_core.h"

static pthread_mutex_t g_init_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static uint32_t g_refcount;               /* guarded by g_init_mutex */
static softhsa_system_t* volatile g_system; /* non-NULL exactly while initialized */

/* ---- shared helpers ---- */

softhsa_system_t* softhsa_system(void) { return g_system; }

int softhsa_initialized(void) { return g_system != NULL; }

uint64_t softhsa_now_ticks(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void softhsa_log_json(const char* line) {
  softhsa_system_t* system = g_system;
  if (!system || !system->log_path) return;
  pthread_mutex_lock(&g_log_mutex);
  FILE* file = fopen(system->log_path, "a");
  if (file) {
    fputs(line, file);
    fputc('\n', file);
    fclose(file);
  }
  pthread_mutex_unlock(&g_log_mutex);
}

softhsa_agent_t* softhsa_agent_from_handle(uint64_t handle) {
  softhsa_system_t* system = g_system;
  if (!system) return NULL;
  for (uint32_t i = 0; i < system->agent_count; ++i) {
    if ((uint64_t)(uintptr_t)&system->agents[i] == handle) return &system->agents[i];
  }
  return NULL;
}

int softhsa_agent_is_gpu(const softhsa_agent_t* agent) { return agent->is_gpu; }

const char* softhsa_agent_isa_name(const softhsa_agent_t* agent) {
  return agent->isa ? agent->isa->name : "";
}

uint32_t softhsa_agent_wavefront_size(const softhsa_agent_t* agent) {
  return agent->wavefront_size;
}

uint32_t softhsa_agent_index(const softhsa_agent_t* agent) { return agent->index; }

/* ---- init ---- */

SOFTHSA_EXPORT hsa_status_t hsa_init(void) {
  hsa_status_t status = HSA_STATUS_SUCCESS;
  pthread_mutex_lock(&g_init_mutex);
  if (g_refcount == UINT32_MAX) {
    status = HSA_STATUS_ERROR_REFCOUNT_OVERFLOW;
  } else if (g_refcount == 0) {
    const char* path = getenv("SOFTHSA_CONFIG");
    char error[512];
    softhsa_system_t* system =
        softhsa_config_load(path, getenv("ROCR_VISIBLE_DEVICES"), error, sizeof(error));
    if (system) {
      g_system = system;
    } else {
      fprintf(stderr, "softhsa: SOFTHSA_CONFIG=%s: %s\n", path ? path : "", error);
      status = HSA_STATUS_ERROR;
    }
  }
  if (status == HSA_STATUS_SUCCESS) g_refcount++;
  pthread_mutex_unlock(&g_init_mutex);
  return status;
}

SOFTHSA_EXPORT hsa_status_t hsa_shut_down(void) {
  pthread_mutex_lock(&g_init_mutex);
  if (g_refcount == 0) {
    pthread_mutex_unlock(&g_init_mutex);
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  }
  if (--g_refcount == 0) {
    softhsa_queue_destroy_all();
    softhsa_loader_reset();
    softhsa_memory_release_all();
    softhsa_system_t* system = g_system;
    g_system = NULL;
    softhsa_config_free(system);
  }
  pthread_mutex_unlock(&g_init_mutex);
  return HSA_STATUS_SUCCESS;
}

/* ---- status strings (our own wording) ---- */

typedef struct {
  int status; /* int: the AMD codes are a separate enum in hsa_ext_amd.h */
  const char* text;
} status_text_t;

/* Each text starts with the status name, as ROCr's do. */
#define STATUS(name, text) {name, #name ": " text}

static const status_text_t kStatusText[] = {
    STATUS(HSA_STATUS_SUCCESS, "the call succeeded."),
    STATUS(HSA_STATUS_INFO_BREAK, "an iteration callback asked to stop early."),
    STATUS(HSA_STATUS_ERROR, "a generic error occurred."),
    STATUS(HSA_STATUS_ERROR_INVALID_ARGUMENT, "an argument is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_QUEUE_CREATION,
           "the agent cannot create a queue of this kind."),
    STATUS(HSA_STATUS_ERROR_INVALID_ALLOCATION,
           "the allocation is not allowed in this memory pool or region."),
    STATUS(HSA_STATUS_ERROR_INVALID_AGENT, "the agent handle is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_REGION, "the region handle is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_SIGNAL, "the signal handle is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_QUEUE, "the queue is invalid."),
    STATUS(HSA_STATUS_ERROR_OUT_OF_RESOURCES, "the runtime ran out of resources."),
    STATUS(HSA_STATUS_ERROR_INVALID_PACKET_FORMAT,
           "a queued packet has an invalid or unsupported format."),
    STATUS(HSA_STATUS_ERROR_RESOURCE_FREE, "a resource could not be released."),
    STATUS(HSA_STATUS_ERROR_NOT_INITIALIZED, "hsa_init has not been called."),
    STATUS(HSA_STATUS_ERROR_REFCOUNT_OVERFLOW, "the runtime reference count overflowed."),
    STATUS(HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS, "the arguments do not fit together."),
    STATUS(HSA_STATUS_ERROR_INVALID_INDEX, "the index is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_ISA, "the ISA is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_ISA_NAME, "the ISA name is not known."),
    STATUS(HSA_STATUS_ERROR_INVALID_CODE_OBJECT, "the code object is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_EXECUTABLE, "the executable is invalid."),
    STATUS(HSA_STATUS_ERROR_FROZEN_EXECUTABLE, "the executable is frozen."),
    STATUS(HSA_STATUS_ERROR_INVALID_SYMBOL_NAME, "no symbol has this name."),
    STATUS(HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED, "the variable is already defined."),
    STATUS(HSA_STATUS_ERROR_VARIABLE_UNDEFINED, "the variable is undefined."),
    STATUS(HSA_STATUS_ERROR_EXCEPTION, "a packet raised an exception while executing."),
    STATUS(HSA_STATUS_ERROR_INVALID_CODE_SYMBOL, "the code symbol is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL, "the executable symbol is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_FILE, "the file descriptor is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER, "the code object reader is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_CACHE, "the cache is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_WAVEFRONT, "the wavefront is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP, "the signal group is invalid."),
    STATUS(HSA_STATUS_ERROR_INVALID_RUNTIME_STATE,
           "the runtime is in a state that does not allow this call."),
    STATUS(HSA_STATUS_ERROR_FATAL, "the runtime hit an unrecoverable error."),
    STATUS(HSA_STATUS_ERROR_INVALID_MEMORY_POOL, "the memory pool handle is invalid."),
    STATUS(HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
           "a memory access fell outside its aperture."),
    STATUS(HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION, "a kernel executed an illegal instruction."),
    STATUS(HSA_STATUS_ERROR_MEMORY_FAULT, "a kernel caused a memory fault."),
    STATUS(HSA_STATUS_CU_MASK_REDUCED, "the compute-unit mask was reduced to the units present."),
};
#undef STATUS

SOFTHSA_EXPORT hsa_status_t hsa_status_string(hsa_status_t status, const char** status_string) {
  if (!status_string) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < sizeof(kStatusText) / sizeof(kStatusText[0]); ++i) {
    if (kStatusText[i].status == (int)status) {
      *status_string = kStatusText[i].text;
      return HSA_STATUS_SUCCESS;
    }
  }
  return HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

/* ---- system ---- */

static void set_extension_bits(uint8_t* mask) {
  memset(mask, 0, 128);
  mask[HSA_EXTENSION_AMD_PROFILER / 8] |= (uint8_t)(1u << (HSA_EXTENSION_AMD_PROFILER % 8));
  mask[HSA_EXTENSION_AMD_LOADER / 8] |= (uint8_t)(1u << (HSA_EXTENSION_AMD_LOADER % 8));
}

SOFTHSA_EXPORT hsa_status_t hsa_system_get_info(hsa_system_info_t attribute, void* value) {
  SOFTHSA_REQUIRE_INIT();
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch ((int)attribute) {
    case HSA_SYSTEM_INFO_VERSION_MAJOR: *(uint16_t*)value = 1; break;
    case HSA_SYSTEM_INFO_VERSION_MINOR: *(uint16_t*)value = 1; break;
    case HSA_SYSTEM_INFO_TIMESTAMP: *(uint64_t*)value = softhsa_now_ticks(); break;
    case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY: *(uint64_t*)value = 1000000000u; break;
    case HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT: *(uint64_t*)value = UINT64_MAX; break;
    case HSA_SYSTEM_INFO_ENDIANNESS: *(hsa_endianness_t*)value = HSA_ENDIANNESS_LITTLE; break;
    case HSA_SYSTEM_INFO_MACHINE_MODEL:
      *(hsa_machine_model_t*)value = HSA_MACHINE_MODEL_LARGE;
      break;
    case HSA_SYSTEM_INFO_EXTENSIONS: set_extension_bits(value); break;
    case HSA_AMD_SYSTEM_INFO_BUILD_VERSION: *(const char**)value = "softhsa"; break;
    case HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED: *(bool*)value = true; break;
    case HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT: *(bool*)value = false; break;
    case SOFTHSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED: *(bool*)value = false; break;
    case SOFTHSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED: *(bool*)value = false; break;
    case SOFTHSA_AMD_SYSTEM_INFO_XNACK_ENABLED: *(bool*)value = false; break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_system_major_extension_supported(uint16_t extension,
                                                                 uint16_t version_major,
                                                                 uint16_t* version_minor,
                                                                 bool* result) {
  SOFTHSA_REQUIRE_INIT();
  if (!version_minor || !result) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = extension == HSA_EXTENSION_AMD_LOADER && version_major == 1 &&
            softhsa_loader_extension_table(extension, version_major, 0, NULL) ==
                HSA_STATUS_SUCCESS;
  if (*result) *version_minor = 3;
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_system_get_major_extension_table(uint16_t extension,
                                                                 uint16_t version_major,
                                                                 size_t table_length, void* table) {
  SOFTHSA_REQUIRE_INIT();
  if (!table || table_length == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return softhsa_loader_extension_table(extension, version_major, table_length, table);
}

/* ---- agents ---- */

SOFTHSA_EXPORT hsa_status_t hsa_iterate_agents(hsa_status_t (*callback)(hsa_agent_t agent,
                                                                        void* data),
                                               void* data) {
  SOFTHSA_REQUIRE_INIT();
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  softhsa_system_t* system = softhsa_system();
  for (uint32_t i = 0; i < system->agent_count; ++i) {
    hsa_status_t status = callback((hsa_agent_t){(uint64_t)(uintptr_t)&system->agents[i]}, data);
    if (status != HSA_STATUS_SUCCESS) return status;
  }
  return HSA_STATUS_SUCCESS;
}

static void put_name(void* value, const char* text) {
  memset(value, 0, SOFTHSA_NAME_MAX);
  strncpy(value, text, SOFTHSA_NAME_MAX - 1);
}

/* Answers the attributes every HSA agent has (hsa.h); returns INVALID_ARGUMENT for others. */
static hsa_status_t core_agent_info(const softhsa_agent_t* a, int attribute, void* value) {
  const uint32_t gpu = a->is_gpu;
  switch (attribute) {
    case HSA_AGENT_INFO_NAME: put_name(value, a->name); break;
    case HSA_AGENT_INFO_VENDOR_NAME: put_name(value, a->vendor_name); break;
    case HSA_AGENT_INFO_FEATURE:
      *(hsa_agent_feature_t*)value = gpu ? HSA_AGENT_FEATURE_KERNEL_DISPATCH : 0;
      break;
    case HSA_AGENT_INFO_MACHINE_MODEL:
      *(hsa_machine_model_t*)value = HSA_MACHINE_MODEL_LARGE;
      break;
    case HSA_AGENT_INFO_PROFILE:
      *(hsa_profile_t*)value = gpu ? HSA_PROFILE_BASE : HSA_PROFILE_FULL;
      break;
    case HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE:
      *(hsa_default_float_rounding_mode_t*)value = HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR;
      break;
    case HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: /* ROCr answers NEAR here too */
      *(hsa_default_float_rounding_mode_t*)value = HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR;
      break;
    case HSA_AGENT_INFO_FAST_F16_OPERATION: *(bool*)value = gpu; break; /* every gfx9+ GPU */
    case HSA_AGENT_INFO_WAVEFRONT_SIZE: *(uint32_t*)value = a->wavefront_size; break;
    case HSA_AGENT_INFO_WORKGROUP_MAX_DIM: {
      uint16_t dims[3] = {1024, 1024, 1024};
      memcpy(value, dims, sizeof(dims));
      if (!gpu) memset(value, 0, sizeof(dims));
      break;
    }
    case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE: *(uint32_t*)value = gpu ? 1024 : 0; break;
    case HSA_AGENT_INFO_GRID_MAX_DIM: {
      hsa_dim3_t dims = {gpu ? INT32_MAX : 0, gpu ? UINT16_MAX : 0, gpu ? UINT16_MAX : 0};
      memcpy(value, &dims, sizeof(dims));
      break;
    }
    case HSA_AGENT_INFO_GRID_MAX_SIZE: *(uint32_t*)value = gpu ? UINT32_MAX : 0; break;
    case HSA_AGENT_INFO_FBARRIER_MAX_SIZE: *(uint32_t*)value = gpu ? 32 : 0; break;
    case HSA_AGENT_INFO_QUEUES_MAX: *(uint32_t*)value = gpu ? 128 : 0; break;
    case HSA_AGENT_INFO_QUEUE_MIN_SIZE: *(uint32_t*)value = gpu ? 64 : 0; break;
    case HSA_AGENT_INFO_QUEUE_MAX_SIZE: *(uint32_t*)value = gpu ? 131072 : 0; break;
    case HSA_AGENT_INFO_QUEUE_TYPE: *(hsa_queue_type32_t*)value = HSA_QUEUE_TYPE_MULTI; break;
    case HSA_AGENT_INFO_NODE: *(uint32_t*)value = a->node; break;
    case HSA_AGENT_INFO_DEVICE:
      *(hsa_device_type_t*)value = gpu ? HSA_DEVICE_TYPE_GPU : HSA_DEVICE_TYPE_CPU;
      break;
    case HSA_AGENT_INFO_CACHE_SIZE: {
      uint32_t sizes[4] = {16 * 1024, 4 * 1024 * 1024, 0, 0};
      memcpy(value, sizes, sizeof(sizes));
      break;
    }
    case HSA_AGENT_INFO_ISA: *(hsa_isa_t*)value = (hsa_isa_t){(uint64_t)(uintptr_t)a->isa}; break;
    case HSA_AGENT_INFO_EXTENSIONS: /* ROCr sets only the profiler bit (and optional ones) */
      memset(value, 0, 128);
      if (gpu) {
        ((uint8_t*)value)[HSA_EXTENSION_AMD_PROFILER / 8] |=
            (uint8_t)(1u << (HSA_EXTENSION_AMD_PROFILER % 8));
      }
      break;
    case HSA_AGENT_INFO_VERSION_MAJOR: *(uint16_t*)value = 1; break;
    case HSA_AGENT_INFO_VERSION_MINOR: *(uint16_t*)value = 1; break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

/* Answers the AMD attributes (hsa_ext_amd.h, plus the newer ids softhsa_core.h lists). */
static hsa_status_t amd_agent_info(const softhsa_agent_t* a, int attribute, void* value) {
  const uint32_t gpu = a->is_gpu;
  switch (attribute) {
    case HSA_AMD_AGENT_INFO_CHIP_ID: *(uint32_t*)value = a->chip_id; break;
    case HSA_AMD_AGENT_INFO_CACHELINE_SIZE: *(uint32_t*)value = gpu ? 128 : 64; break;
    case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT: *(uint32_t*)value = a->compute_units; break;
    case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY: *(uint32_t*)value = a->max_clock_mhz; break;
    case HSA_AMD_AGENT_INFO_DRIVER_NODE_ID: *(uint32_t*)value = a->node; break;
    case HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS: *(uint32_t*)value = gpu ? 4 : 0; break;
    case HSA_AMD_AGENT_INFO_BDFID: *(uint32_t*)value = a->bdfid; break;
    case HSA_AMD_AGENT_INFO_MEMORY_WIDTH: *(uint32_t*)value = gpu ? 8192 : 0; break;
    case HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY: *(uint32_t*)value = gpu ? 1300 : 0; break;
    case HSA_AMD_AGENT_INFO_PRODUCT_NAME: put_name(value, gpu ? a->product_name : a->name); break;
    case HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU: *(uint32_t*)value = a->max_waves_per_cu; break;
    case HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU: *(uint32_t*)value = a->simds_per_cu; break;
    case HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES: *(uint32_t*)value = a->shader_engines; break;
    case HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE:
      *(uint32_t*)value = a->shader_arrays_per_se;
      break;
    case HSA_AMD_AGENT_INFO_HDP_FLUSH: { /* CPUs: two NULL registers */
      hsa_amd_hdp_flush_t flush = {gpu ? (uint32_t*)&a->hdp_registers[0] : NULL,
                                   gpu ? (uint32_t*)&a->hdp_registers[1] : NULL};
      memcpy(value, &flush, sizeof(flush));
      break;
    }
    case HSA_AMD_AGENT_INFO_DOMAIN: *(uint32_t*)value = a->domain; break;
    case HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES: *(bool*)value = gpu; break;
    case HSA_AMD_AGENT_INFO_UUID: strcpy(value, a->uuid); break;
    case HSA_AMD_AGENT_INFO_ASIC_REVISION: *(uint32_t*)value = a->asic_revision; break;
    case HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS: *(bool*)value = !gpu; break;
    case HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT:
      *(uint32_t*)value = a->compute_units;
      break;
    case SOFTHSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY: *(uint64_t*)value = 1000000000u; break;
    case SOFTHSA_AMD_AGENT_INFO_NUM_XCC: *(uint32_t*)value = gpu ? 1 : 0; break;
    case SOFTHSA_AMD_AGENT_INFO_DRIVER_UID: *(uint32_t*)value = 0x1000 + a->node; break;
    case SOFTHSA_AMD_AGENT_INFO_NEAREST_CPU: {
      const softhsa_agent_t* cpu = gpu ? a->nearest_cpu : a;
      *(hsa_agent_t*)value = (hsa_agent_t){(uint64_t)(uintptr_t)cpu};
      break;
    }
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute,
                                               void* value) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_agent_t* a = softhsa_agent_from_handle(agent.handle);
  if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (core_agent_info(a, (int)attribute, value) == HSA_STATUS_SUCCESS) return HSA_STATUS_SUCCESS;
  return amd_agent_info(a, (int)attribute, value);
}

/* ---- ISAs ---- */

static softhsa_isa_t* isa_from_handle(uint64_t handle) {
  softhsa_system_t* system = softhsa_system();
  for (uint32_t i = 0; i < system->isa_count; ++i) {
    if ((uint64_t)(uintptr_t)&system->isas[i] == handle) return &system->isas[i];
  }
  return NULL;
}

SOFTHSA_EXPORT hsa_status_t hsa_isa_from_name(const char* name, hsa_isa_t* isa) {
  SOFTHSA_REQUIRE_INIT();
  if (!name || !isa) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  softhsa_system_t* system = softhsa_system();
  for (uint32_t i = 0; i < system->isa_count; ++i) {
    if (strcmp(system->isas[i].name, name) == 0) {
      isa->handle = (uint64_t)(uintptr_t)&system->isas[i];
      return HSA_STATUS_SUCCESS;
    }
  }
  return HSA_STATUS_ERROR_INVALID_ISA_NAME;
}

SOFTHSA_EXPORT hsa_status_t hsa_agent_iterate_isas(hsa_agent_t agent,
                                                   hsa_status_t (*callback)(hsa_isa_t isa,
                                                                            void* data),
                                                   void* data) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_agent_t* a = softhsa_agent_from_handle(agent.handle);
  if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!a->isa) return HSA_STATUS_SUCCESS;
  return callback((hsa_isa_t){(uint64_t)(uintptr_t)a->isa}, data);
}

SOFTHSA_EXPORT hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, hsa_isa_info_t attribute,
                                                 void* value) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_isa_t* i = isa_from_handle(isa.handle);
  if (!i) return HSA_STATUS_ERROR_INVALID_ISA;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch ((int)attribute) {
    case HSA_ISA_INFO_NAME_LENGTH: *(uint32_t*)value = (uint32_t)strlen(i->name) + 1; break;
    case HSA_ISA_INFO_NAME: memcpy(value, i->name, strlen(i->name) + 1); break;
    case HSA_ISA_INFO_MACHINE_MODELS: {
      bool models[2] = {false, true}; /* indexed by hsa_machine_model_t: SMALL, LARGE */
      memcpy(value, models, sizeof(models));
      break;
    }
    case HSA_ISA_INFO_PROFILES: {
      bool profiles[2] = {true, false}; /* BASE, FULL */
      memcpy(value, profiles, sizeof(profiles));
      break;
    }
    case HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES: {
      bool modes[3] = {false, true, true}; /* DEFAULT, ZERO, NEAR */
      memcpy(value, modes, sizeof(modes));
      break;
    }
    case HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: {
      bool modes[3] = {false, true, true};
      memcpy(value, modes, sizeof(modes));
      break;
    }
    case HSA_ISA_INFO_FAST_F16_OPERATION: *(bool*)value = false; break;
    case HSA_ISA_INFO_WORKGROUP_MAX_DIM: {
      uint16_t dims[3] = {1024, 1024, 1024};
      memcpy(value, dims, sizeof(dims));
      break;
    }
    case HSA_ISA_INFO_WORKGROUP_MAX_SIZE: *(uint32_t*)value = 1024; break;
    case HSA_ISA_INFO_GRID_MAX_DIM: {
      hsa_dim3_t dims = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
      memcpy(value, &dims, sizeof(dims));
      break;
    }
    case HSA_ISA_INFO_GRID_MAX_SIZE: *(uint64_t*)value = UINT64_MAX; break;
    case HSA_ISA_INFO_FBARRIER_MAX_SIZE: *(uint32_t*)value = 32; break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

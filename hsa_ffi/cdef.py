"""cffi declarations (ABI mode) of the HSA core and AMD-extension subset the amdgpu driver uses.

Pinned to the ROCm **5.2.3** headers (Debian `libhsa-runtime-dev`: `hsa.h`, `hsa_ext_amd.h` with AMD
interface version 1.0, `hsa_ven_amd_loader.h`, `amd_hsa_queue.h`, `amd_hsa_signal.h`), x86-64 large
model (`HSA_LARGE_MODEL`, so every `base_address` / `kernarg_address` is a plain pointer).

- `CDEF_CORE` holds only what those headers declare; every function in it is exported by ROCm 5.2.3's
  `libhsa-runtime64.so.1` and by `tests/softhsa`. `tests/hsa_ffi/test_api_mode.py` compiles this very
  text in cffi API mode against the real headers, so a wrong field, offset or signature fails there.
- C enum types are declared as `typedef int <name>;` (HSA enums are int-sized); their values live in
  `hsa_ffi.constants` under the header names.
- Struct and handle types keep the headers' struct tags (`struct hsa_agent_s`, ...), so a cdef type
  and a header type are the same C type in the API-mode check.
- `CDEF_NEW` holds what newer ROCm adds (IREE's fork headers, AMD interface 1.14): dma-buf export,
  the virtual-memory (`vmem`) API, `hsa_amd_signal_wait_all` and `hsa_amd_queue_get_info`, with their
  types. ABI mode resolves a function only when it is first used, so declaring these is harmless with
  a 5.2.3 library; callers ask `Libhsa.has(name)` before using one. The newer enum values (agent info
  NEAREST_CPU, system info VIRTUAL_MEM_API_SUPPORTED, ...) are plain constants in `constants.py`.
"""

from __future__ import annotations

import re

CDEF_CORE = r"""
/* ---- scalar and enum types ---------------------------------------------------------------- */
typedef int hsa_status_t;
typedef int hsa_access_permission_t;
typedef int hsa_endianness_t;
typedef int hsa_machine_model_t;
typedef int hsa_profile_t;
typedef int hsa_system_info_t;
typedef int hsa_extension_t;
typedef int hsa_agent_feature_t;
typedef int hsa_device_type_t;
typedef int hsa_default_float_rounding_mode_t;
typedef int hsa_agent_info_t;
typedef int hsa_signal_condition_t;
typedef int hsa_wait_state_t;
typedef int hsa_queue_type_t;
typedef int hsa_queue_feature_t;
typedef int hsa_packet_type_t;
typedef int hsa_fence_scope_t;
typedef int hsa_packet_header_t;
typedef int hsa_region_segment_t;
typedef int hsa_region_global_flag_t;
typedef int hsa_region_info_t;
typedef int hsa_isa_info_t;
typedef int hsa_executable_state_t;
typedef int hsa_symbol_kind_t;
typedef int hsa_executable_symbol_info_t;
typedef int hsa_amd_agent_info_t;
typedef int hsa_amd_segment_t;
typedef int hsa_amd_memory_pool_global_flag_t;
typedef int hsa_amd_memory_pool_info_t;
typedef int hsa_amd_memory_pool_access_t;
typedef int hsa_amd_link_info_type_t;
typedef int hsa_amd_agent_memory_pool_info_t;
typedef int hsa_amd_pointer_type_t;
typedef int hsa_ven_amd_loader_code_object_storage_type_t;
typedef int hsa_ven_amd_loader_loaded_code_object_info_t;

typedef int64_t hsa_signal_value_t;
typedef uint32_t hsa_queue_type32_t;
typedef uint32_t hsa_signal_condition32_t;
typedef uint8_t hsa_amd_packet_type8_t;
typedef uint32_t amd_queue_properties32_t;
typedef int64_t amd_signal_kind64_t;
typedef int hsa_file_t;

/* ---- opaque handles (8 bytes, passed by value) ---------------------------------------------- */
typedef struct hsa_agent_s { uint64_t handle; } hsa_agent_t;
typedef struct hsa_cache_s { uint64_t handle; } hsa_cache_t;
typedef struct hsa_signal_s { uint64_t handle; } hsa_signal_t;
typedef struct hsa_region_s { uint64_t handle; } hsa_region_t;
typedef struct hsa_isa_s { uint64_t handle; } hsa_isa_t;
typedef struct hsa_code_object_reader_s { uint64_t handle; } hsa_code_object_reader_t;
typedef struct hsa_executable_s { uint64_t handle; } hsa_executable_t;
typedef struct hsa_loaded_code_object_s { uint64_t handle; } hsa_loaded_code_object_t;
typedef struct hsa_executable_symbol_s { uint64_t handle; } hsa_executable_symbol_t;
typedef struct hsa_amd_memory_pool_s { uint64_t handle; } hsa_amd_memory_pool_t;

/* ---- plain structs ------------------------------------------------------------------------- */
typedef struct hsa_dim3_s { uint32_t x; uint32_t y; uint32_t z; } hsa_dim3_t;

typedef struct hsa_queue_s {
  hsa_queue_type32_t type;
  uint32_t features;
  void* base_address;
  hsa_signal_t doorbell_signal;
  uint32_t size;
  uint32_t reserved1;
  uint64_t id;
} hsa_queue_t;

typedef struct hsa_kernel_dispatch_packet_s {
  uint16_t header;
  uint16_t setup;
  uint16_t workgroup_size_x;
  uint16_t workgroup_size_y;
  uint16_t workgroup_size_z;
  uint16_t reserved0;
  uint32_t grid_size_x;
  uint32_t grid_size_y;
  uint32_t grid_size_z;
  uint32_t private_segment_size;
  uint32_t group_segment_size;
  uint64_t kernel_object;
  void* kernarg_address;
  uint64_t reserved2;
  hsa_signal_t completion_signal;
} hsa_kernel_dispatch_packet_t;

typedef struct hsa_agent_dispatch_packet_s {
  uint16_t header;
  uint16_t type;
  uint32_t reserved0;
  void* return_address;
  uint64_t arg[4];
  uint64_t reserved2;
  hsa_signal_t completion_signal;
} hsa_agent_dispatch_packet_t;

typedef struct hsa_barrier_and_packet_s {
  uint16_t header;
  uint16_t reserved0;
  uint32_t reserved1;
  hsa_signal_t dep_signal[5];
  uint64_t reserved2;
  hsa_signal_t completion_signal;
} hsa_barrier_and_packet_t;

typedef struct hsa_barrier_or_packet_s {
  uint16_t header;
  uint16_t reserved0;
  uint32_t reserved1;
  hsa_signal_t dep_signal[5];
  uint64_t reserved2;
  hsa_signal_t completion_signal;
} hsa_barrier_or_packet_t;

typedef struct hsa_amd_packet_header_s {
  uint16_t header;
  hsa_amd_packet_type8_t AmdFormat;
  uint8_t reserved;
} hsa_amd_vendor_packet_header_t;

typedef struct hsa_amd_barrier_value_packet_s {
  hsa_amd_vendor_packet_header_t header;
  uint32_t reserved0;
  hsa_signal_t signal;
  hsa_signal_value_t value;
  hsa_signal_value_t mask;
  hsa_signal_condition32_t cond;
  uint32_t reserved1;
  uint64_t reserved2;
  uint64_t reserved3;
  hsa_signal_t completion_signal;
} hsa_amd_barrier_value_packet_t;

typedef struct hsa_amd_hdp_flush_s {
  uint32_t* HDP_MEM_FLUSH_CNTL;
  uint32_t* HDP_REG_FLUSH_CNTL;
} hsa_amd_hdp_flush_t;

typedef struct hsa_amd_profiling_dispatch_time_s {
  uint64_t start;
  uint64_t end;
} hsa_amd_profiling_dispatch_time_t;

typedef struct hsa_amd_memory_pool_link_info_s {
  uint32_t min_latency;
  uint32_t max_latency;
  uint32_t min_bandwidth;
  uint32_t max_bandwidth;
  bool atomic_support_32bit;
  bool atomic_support_64bit;
  bool coherent_support;
  hsa_amd_link_info_type_t link_type;
  uint32_t numa_distance;
} hsa_amd_memory_pool_link_info_t;

typedef struct hsa_amd_pointer_info_s {
  uint32_t size;
  hsa_amd_pointer_type_t type;
  void* agentBaseAddress;
  void* hostBaseAddress;
  size_t sizeInBytes;
  void* userData;
  hsa_agent_t agentOwner;
  uint32_t global_flags;
} hsa_amd_pointer_info_t;

/* ROCr's queue and signal objects (amd_hsa_queue.h / amd_hsa_signal.h; both 64-byte aligned in C). */
typedef struct amd_queue_s {
  hsa_queue_t hsa_queue;
  uint32_t reserved1[4];
  volatile uint64_t write_dispatch_id;
  uint32_t group_segment_aperture_base_hi;
  uint32_t private_segment_aperture_base_hi;
  uint32_t max_cu_id;
  uint32_t max_wave_id;
  volatile uint64_t max_legacy_doorbell_dispatch_id_plus_1;
  volatile uint32_t legacy_doorbell_lock;
  uint32_t reserved2[9];
  volatile uint64_t read_dispatch_id;
  uint32_t read_dispatch_id_field_base_byte_offset;
  uint32_t compute_tmpring_size;
  uint32_t scratch_resource_descriptor[4];
  uint64_t scratch_backing_memory_location;
  uint64_t scratch_backing_memory_byte_size;
  uint32_t scratch_wave64_lane_byte_size;
  amd_queue_properties32_t queue_properties;
  uint32_t reserved3[2];
  hsa_signal_t queue_inactive_signal;
  uint32_t reserved4[14];
} amd_queue_t;

typedef struct amd_signal_s {
  amd_signal_kind64_t kind;
  union {
    volatile int64_t value;
    volatile uint32_t* legacy_hardware_doorbell_ptr;
    volatile uint64_t* hardware_doorbell_ptr;
  };
  uint64_t event_mailbox_ptr;
  uint32_t event_id;
  uint32_t reserved1;
  uint64_t start_ts;
  uint64_t end_ts;
  union {
    amd_queue_t* queue_ptr;
    uint64_t reserved2;
  };
  uint32_t reserved3[2];
} amd_signal_t;

/* ---- AMD loader extension table (hsa_system_get_major_extension_table, HSA_EXTENSION_AMD_LOADER) -- */
typedef struct hsa_ven_amd_loader_segment_descriptor_s {
  hsa_agent_t agent;
  hsa_executable_t executable;
  hsa_ven_amd_loader_code_object_storage_type_t code_object_storage_type;
  const void* code_object_storage_base;
  size_t code_object_storage_size;
  size_t code_object_storage_offset;
  const void* segment_base;
  size_t segment_size;
} hsa_ven_amd_loader_segment_descriptor_t;

typedef struct hsa_ven_amd_loader_1_01_pfn_s {
  hsa_status_t (*hsa_ven_amd_loader_query_host_address)(
      const void* device_address, const void** host_address);
  hsa_status_t (*hsa_ven_amd_loader_query_segment_descriptors)(
      hsa_ven_amd_loader_segment_descriptor_t* segment_descriptors, size_t* num_segment_descriptors);
  hsa_status_t (*hsa_ven_amd_loader_query_executable)(
      const void* device_address, hsa_executable_t* executable);
  hsa_status_t (*hsa_ven_amd_loader_executable_iterate_loaded_code_objects)(
      hsa_executable_t executable,
      hsa_status_t (*callback)(hsa_executable_t executable,
                               hsa_loaded_code_object_t loaded_code_object, void* data),
      void* data);
  hsa_status_t (*hsa_ven_amd_loader_loaded_code_object_get_info)(
      hsa_loaded_code_object_t loaded_code_object,
      hsa_ven_amd_loader_loaded_code_object_info_t attribute, void* value);
} hsa_ven_amd_loader_1_01_pfn_t;

typedef struct hsa_ven_amd_loader_1_03_pfn_s {
  hsa_status_t (*hsa_ven_amd_loader_query_host_address)(
      const void* device_address, const void** host_address);
  hsa_status_t (*hsa_ven_amd_loader_query_segment_descriptors)(
      hsa_ven_amd_loader_segment_descriptor_t* segment_descriptors, size_t* num_segment_descriptors);
  hsa_status_t (*hsa_ven_amd_loader_query_executable)(
      const void* device_address, hsa_executable_t* executable);
  hsa_status_t (*hsa_ven_amd_loader_executable_iterate_loaded_code_objects)(
      hsa_executable_t executable,
      hsa_status_t (*callback)(hsa_executable_t executable,
                               hsa_loaded_code_object_t loaded_code_object, void* data),
      void* data);
  hsa_status_t (*hsa_ven_amd_loader_loaded_code_object_get_info)(
      hsa_loaded_code_object_t loaded_code_object,
      hsa_ven_amd_loader_loaded_code_object_info_t attribute, void* value);
  hsa_status_t (*hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size)(
      hsa_file_t file, size_t offset, size_t size, hsa_code_object_reader_t* code_object_reader);
  hsa_status_t (*hsa_ven_amd_loader_iterate_executables)(
      hsa_status_t (*callback)(hsa_executable_t executable, void* data), void* data);
} hsa_ven_amd_loader_1_03_pfn_t;

/* ---- init, system ---------------------------------------------------------------------------- */
hsa_status_t hsa_init(void);
hsa_status_t hsa_shut_down(void);
hsa_status_t hsa_status_string(hsa_status_t status, const char** status_string);
hsa_status_t hsa_system_get_info(hsa_system_info_t attribute, void* value);
hsa_status_t hsa_system_major_extension_supported(uint16_t extension, uint16_t version_major,
                                                  uint16_t* version_minor, bool* result);
hsa_status_t hsa_system_get_major_extension_table(uint16_t extension, uint16_t version_major,
                                                  size_t table_length, void* table);

/* ---- agents, ISAs, regions, memory pools ------------------------------------------------------ */
hsa_status_t hsa_iterate_agents(hsa_status_t (*callback)(hsa_agent_t agent, void* data), void* data);
hsa_status_t hsa_agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void* value);
hsa_status_t hsa_agent_iterate_isas(hsa_agent_t agent,
                                    hsa_status_t (*callback)(hsa_isa_t isa, void* data), void* data);
hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, hsa_isa_info_t attribute, void* value);
hsa_status_t hsa_isa_from_name(const char* name, hsa_isa_t* isa);
hsa_status_t hsa_agent_iterate_regions(hsa_agent_t agent,
                                       hsa_status_t (*callback)(hsa_region_t region, void* data),
                                       void* data);
hsa_status_t hsa_region_get_info(hsa_region_t region, hsa_region_info_t attribute, void* value);
hsa_status_t hsa_amd_agent_iterate_memory_pools(
    hsa_agent_t agent, hsa_status_t (*callback)(hsa_amd_memory_pool_t memory_pool, void* data),
    void* data);
hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t memory_pool,
                                          hsa_amd_memory_pool_info_t attribute, void* value);
hsa_status_t hsa_amd_agent_memory_pool_get_info(hsa_agent_t agent, hsa_amd_memory_pool_t memory_pool,
                                                hsa_amd_agent_memory_pool_info_t attribute,
                                                void* value);

/* ---- memory ---------------------------------------------------------------------------------- */
hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t memory_pool, size_t size,
                                          uint32_t flags, void** ptr);
hsa_status_t hsa_amd_memory_pool_free(void* ptr);
hsa_status_t hsa_amd_agents_allow_access(uint32_t num_agents, const hsa_agent_t* agents,
                                         const uint32_t* flags, const void* ptr);
hsa_status_t hsa_memory_copy(void* dst, const void* src, size_t size);
hsa_status_t hsa_amd_pointer_info(const void* ptr, hsa_amd_pointer_info_t* info,
                                  void* (*alloc)(size_t), uint32_t* num_agents_accessible,
                                  hsa_agent_t** accessible);

/* ---- signals --------------------------------------------------------------------------------- */
hsa_status_t hsa_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                               const hsa_agent_t* consumers, hsa_signal_t* signal);
hsa_status_t hsa_amd_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                                   const hsa_agent_t* consumers, uint64_t attributes,
                                   hsa_signal_t* signal);
hsa_status_t hsa_signal_destroy(hsa_signal_t signal);
hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t signal);
hsa_signal_value_t hsa_signal_load_relaxed(hsa_signal_t signal);
void hsa_signal_store_screlease(hsa_signal_t signal, hsa_signal_value_t value);
void hsa_signal_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value);
void hsa_signal_silent_store_relaxed(hsa_signal_t signal, hsa_signal_value_t value);
hsa_signal_value_t hsa_signal_exchange_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value);
hsa_signal_value_t hsa_signal_cas_scacq_screl(hsa_signal_t signal, hsa_signal_value_t expected,
                                              hsa_signal_value_t value);
void hsa_signal_add_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value);
void hsa_signal_add_relaxed(hsa_signal_t signal, hsa_signal_value_t value);
void hsa_signal_subtract_scacq_screl(hsa_signal_t signal, hsa_signal_value_t value);
void hsa_signal_subtract_relaxed(hsa_signal_t signal, hsa_signal_value_t value);
hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t signal, hsa_signal_condition_t condition,
                                             hsa_signal_value_t compare_value, uint64_t timeout_hint,
                                             hsa_wait_state_t wait_state_hint);
hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t signal, hsa_signal_condition_t condition,
                                           hsa_signal_value_t compare_value, uint64_t timeout_hint,
                                           hsa_wait_state_t wait_state_hint);
uint32_t hsa_amd_signal_wait_any(uint32_t signal_count, hsa_signal_t* signals,
                                 hsa_signal_condition_t* conds, hsa_signal_value_t* values,
                                 uint64_t timeout_hint, hsa_wait_state_t wait_hint,
                                 hsa_signal_value_t* satisfying_value);

/* ---- queues ---------------------------------------------------------------------------------- */
hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                              void (*callback)(hsa_status_t status, hsa_queue_t* source, void* data),
                              void* data, uint32_t private_segment_size, uint32_t group_segment_size,
                              hsa_queue_t** queue);
hsa_status_t hsa_queue_destroy(hsa_queue_t* queue);
uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t* queue);
uint64_t hsa_queue_load_read_index_relaxed(const hsa_queue_t* queue);
uint64_t hsa_queue_load_write_index_scacquire(const hsa_queue_t* queue);
uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t* queue);
void hsa_queue_store_write_index_relaxed(const hsa_queue_t* queue, uint64_t value);
void hsa_queue_store_write_index_screlease(const hsa_queue_t* queue, uint64_t value);
uint64_t hsa_queue_add_write_index_scacq_screl(const hsa_queue_t* queue, uint64_t value);
uint64_t hsa_queue_add_write_index_relaxed(const hsa_queue_t* queue, uint64_t value);
uint64_t hsa_queue_cas_write_index_scacq_screl(const hsa_queue_t* queue, uint64_t expected,
                                               uint64_t value);

/* ---- code objects and executables ------------------------------------------------------------ */
hsa_status_t hsa_code_object_reader_create_from_memory(const void* code_object, size_t size,
                                                       hsa_code_object_reader_t* code_object_reader);
hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t code_object_reader);
hsa_status_t hsa_executable_create_alt(hsa_profile_t profile,
                                       hsa_default_float_rounding_mode_t default_float_rounding_mode,
                                       const char* options, hsa_executable_t* executable);
hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t executable, hsa_agent_t agent,
                                                   hsa_code_object_reader_t code_object_reader,
                                                   const char* options,
                                                   hsa_loaded_code_object_t* loaded_code_object);
hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char* options);
hsa_status_t hsa_executable_validate_alt(hsa_executable_t executable, const char* options,
                                         uint32_t* result);
hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t executable, const char* symbol_name,
                                               const hsa_agent_t* agent,
                                               hsa_executable_symbol_t* symbol);
hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t executable_symbol,
                                            hsa_executable_symbol_info_t attribute, void* value);
hsa_status_t hsa_executable_destroy(hsa_executable_t executable);

/* ---- profiling ------------------------------------------------------------------------------- */
hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t* queue, int enable);
hsa_status_t hsa_amd_profiling_get_dispatch_time(hsa_agent_t agent, hsa_signal_t signal,
                                                 hsa_amd_profiling_dispatch_time_t* time);
"""

CDEF_NEW = r"""
/* Newer ROCm only (absent from 5.2.3): check Libhsa.has(name) before calling. */
typedef int hsa_amd_memory_type_t;
typedef int hsa_queue_info_attribute_t;
typedef struct hsa_amd_vmem_alloc_handle_s { uint64_t handle; } hsa_amd_vmem_alloc_handle_t;
typedef struct hsa_amd_memory_access_desc_s {
  hsa_access_permission_t permissions;
  hsa_agent_t agent_handle;
} hsa_amd_memory_access_desc_t;

hsa_status_t hsa_amd_portable_export_dmabuf(const void* ptr, size_t size, int* dmabuf,
                                            uint64_t* offset);
hsa_status_t hsa_amd_portable_close_dmabuf(int dmabuf);
hsa_status_t hsa_amd_vmem_address_reserve_align(void** va, size_t size, uint64_t address,
                                                uint64_t alignment, uint64_t flags);
hsa_status_t hsa_amd_vmem_address_free(void* va, size_t size);
hsa_status_t hsa_amd_vmem_set_access(void* va, size_t size, const hsa_amd_memory_access_desc_t* desc,
                                     size_t desc_cnt);
hsa_status_t hsa_amd_vmem_handle_create(hsa_amd_memory_pool_t pool, size_t size,
                                        hsa_amd_memory_type_t type, uint64_t flags,
                                        hsa_amd_vmem_alloc_handle_t* memory_handle);
hsa_status_t hsa_amd_vmem_handle_release(hsa_amd_vmem_alloc_handle_t memory_handle);
hsa_status_t hsa_amd_vmem_map(void* va, size_t size, size_t in_offset,
                              hsa_amd_vmem_alloc_handle_t memory_handle, uint64_t flags);
hsa_status_t hsa_amd_vmem_unmap(void* va, size_t size);
uint32_t hsa_amd_signal_wait_all(uint32_t signal_count, hsa_signal_t* signals,
                                 hsa_signal_condition_t* conds, hsa_signal_value_t* values,
                                 uint64_t timeout_hint, hsa_wait_state_t wait_hint,
                                 hsa_signal_value_t* satisfying_values);
hsa_status_t hsa_amd_queue_get_info(hsa_queue_t* queue, hsa_queue_info_attribute_t attribute,
                                    void* value);
"""



def _function_names(cdef: str) -> tuple[str, ...]:
    """Names of the functions a cdef declares at top level (struct members are indented)."""
    return tuple(re.findall(r"^[A-Za-z_][\w ]*?[\s*](hsa_\w+)\(", cdef, flags=re.MULTILINE))


CORE_FUNCTIONS = _function_names(CDEF_CORE)
NEW_FUNCTIONS = _function_names(CDEF_NEW)

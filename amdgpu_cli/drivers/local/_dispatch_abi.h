/* The executable library ABI (v0, version 6) as IREE's executable_library.h declares it,
 * field by field: what the CPU driver's native helper and the loaded kernels share. Read by
 * _dispatch_build.py as cffi declarations and included by _dispatch_helper.c. Sizes are checked by the
 * tests against ../shared/reference/vmfb.md section 5.1. Plain declarations only. */

typedef struct {
    uint32_t version;
    const char* name;
    uint32_t features;
    int32_t sanitizer;
} iree_hal_executable_library_header_t;

typedef int (*iree_hal_executable_import_v0_t)(void* params, void* context, void* reserved);
typedef int (*iree_hal_executable_import_thunk_v0_t)(iree_hal_executable_import_v0_t fn_ptr,
                                                      void* params, void* context, void* reserved);

typedef struct {
    uint32_t count;
    const char* const* symbols;
} iree_hal_executable_import_table_v0_t;

typedef struct {
    uint64_t data[8];
} iree_hal_processor_v0_t;

typedef struct {
    const uint32_t* constants;
    iree_hal_executable_import_thunk_v0_t import_thunk;
    const iree_hal_executable_import_v0_t* import_funcs;
    const void** import_contexts;
    iree_hal_processor_v0_t processor;
} iree_hal_executable_environment_v0_t;

typedef struct {
    uint32_t workgroup_size_x;
    uint32_t workgroup_size_y;
    uint16_t workgroup_size_z;
    uint16_t constant_count;
    uint32_t workgroup_count_x;
    uint32_t workgroup_count_y;
    uint16_t workgroup_count_z;
    uint8_t max_concurrency;
    uint8_t binding_count;
    const uint32_t* constants;
    void* const* binding_ptrs;
    const size_t* binding_lengths;
} iree_hal_executable_dispatch_state_v0_t;

typedef struct {
    uint32_t workgroup_id_x;
    uint32_t workgroup_id_y;
    uint16_t workgroup_id_z;
    uint16_t reserved;
    uint32_t processor_id;
    void* local_memory;
    uint32_t local_memory_size;
} iree_hal_executable_workgroup_state_v0_t;

typedef int (*iree_hal_executable_dispatch_v0_t)(
    const iree_hal_executable_environment_v0_t* environment,
    const iree_hal_executable_dispatch_state_v0_t* dispatch_state,
    const iree_hal_executable_workgroup_state_v0_t* workgroup_state);

typedef struct {
    uint64_t flags;
    uint16_t local_memory_pages;
    uint8_t constant_count;
    uint8_t binding_count;
    uint32_t workgroup_size_x;
    uint32_t workgroup_size_y;
    uint16_t workgroup_size_z;
    uint16_t parameter_count;
    uint64_t reserved_1[5];
} iree_hal_executable_dispatch_attrs_v0_t;

typedef struct {
    uint32_t line;
    uint32_t path_length;
    const char* path;
} iree_hal_executable_source_location_v0_t;

typedef struct {
    uint32_t count;
    const iree_hal_executable_dispatch_v0_t* ptrs;
    const iree_hal_executable_dispatch_attrs_v0_t* attrs;
    const void** params;
    const void* occupancy;
    const char* const* names;
    const char* const* tags;
    const char* const* parameter_names;
    const iree_hal_executable_source_location_v0_t* source_locations;
    const void* stage_locations;
} iree_hal_executable_export_table_v0_t;

typedef struct {
    uint32_t count;
} iree_hal_executable_constant_table_v0_t;

typedef struct {
    uint32_t count;
    const void* files;
} iree_hal_executable_source_file_table_v0_t;

typedef struct {
    const iree_hal_executable_library_header_t* header;
    iree_hal_executable_import_table_v0_t imports;
    iree_hal_executable_export_table_v0_t exports;
    iree_hal_executable_constant_table_v0_t constants;
    iree_hal_executable_source_file_table_v0_t sources;
} iree_hal_executable_library_v0_t;

/* softhsa: the AMD loader extension (hsa_ven_amd_loader.h, table version 1.03) over the loader's
 * state. softhsa's device memory is host memory, so host and device addresses coincide; every code
 * object is kept in memory, so CODE_OBJECT_STORAGE_FILE is not answered. */
#include <hsa/hsa.h>
#include <hsa/hsa_ven_amd_loader.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "softhsa_core.h"
#include "softhsa_loader.h"
#include "softhsa_loader_state.h"

static void put_u32(void* value, uint32_t v) { memcpy(value, &v, sizeof(v)); }

SOFTHSA_EXPORT hsa_status_t hsa_ven_amd_loader_query_host_address(const void* device_address,
                                                                  const void** host_address) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!device_address || !host_address) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  softhsa_loader_lock();
  const int found = softhsa_loader_find_image((uintptr_t)device_address) != NULL;
  softhsa_loader_unlock();
  if (!found) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *host_address = device_address; /* softhsa's device memory is host memory */
  return HSA_STATUS_SUCCESS;
}

/* One descriptor per loaded code object (its whole load image is one segment). With
 * *num_segment_descriptors 0 the count is returned; a smaller nonzero array is an error. */
SOFTHSA_EXPORT hsa_status_t hsa_ven_amd_loader_query_segment_descriptors(
    hsa_ven_amd_loader_segment_descriptor_t* segment_descriptors, size_t* num_segment_descriptors) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!num_segment_descriptors) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  softhsa_loader_lock();
  size_t count = 0;
  for (softhsa_executable_t* e = softhsa_loader_executables(); e; e = e->next)
    for (softhsa_loaded_object_t* o = e->objects; o; o = o->next) ++count;
  hsa_status_t status = HSA_STATUS_SUCCESS;
  if (*num_segment_descriptors == 0) {
    *num_segment_descriptors = count;
  } else if (*num_segment_descriptors < count || !segment_descriptors) {
    status = HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
  } else {
    size_t i = 0;
    for (softhsa_executable_t* e = softhsa_loader_executables(); e; e = e->next)
      for (softhsa_loaded_object_t* o = e->objects; o; o = o->next, ++i) {
        segment_descriptors[i] = (hsa_ven_amd_loader_segment_descriptor_t){
            .agent = o->agent_handle,
            .executable = {(uint64_t)(uintptr_t)e},
            .code_object_storage_type = HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY,
            .code_object_storage_base = o->storage,
            .code_object_storage_size = o->storage_size,
            .code_object_storage_offset = 0,
            .segment_base = o->image,
            .segment_size = o->image_size,
        };
      }
    *num_segment_descriptors = count;
  }
  softhsa_loader_unlock();
  return status;
}

SOFTHSA_EXPORT hsa_status_t hsa_ven_amd_loader_query_executable(const void* device_address,
                                                                hsa_executable_t* executable) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!device_address || !executable) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  softhsa_loader_lock();
  const softhsa_loaded_object_t* o = softhsa_loader_find_image((uintptr_t)device_address);
  if (o) executable->handle = (uint64_t)(uintptr_t)o->executable;
  softhsa_loader_unlock();
  return o ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

SOFTHSA_EXPORT hsa_status_t hsa_ven_amd_loader_executable_iterate_loaded_code_objects(
    hsa_executable_t executable,
    hsa_status_t (*callback)(hsa_executable_t, hsa_loaded_code_object_t, void*), void* data) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  softhsa_loader_lock();
  softhsa_executable_t* exe = softhsa_loader_find_executable(executable.handle);
  hsa_status_t status = exe ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  for (softhsa_loaded_object_t* o = exe ? exe->objects : NULL; o && status == HSA_STATUS_SUCCESS; o = o->next)
    status = callback(executable, (hsa_loaded_code_object_t){(uint64_t)(uintptr_t)o}, data);
  softhsa_loader_unlock();
  return status == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : status;
}

/* ROCr's URI form for code objects loaded from memory. */
static int memory_uri(const softhsa_loaded_object_t* o, char* out, size_t out_size) {
  return snprintf(out, out_size, "memory://%d#offset=0x%llx&size=%llu", (int)getpid(),
                  (unsigned long long)(uintptr_t)o->storage, (unsigned long long)o->storage_size);
}

static hsa_status_t loaded_object_info(const softhsa_loaded_object_t* o,
                                       hsa_ven_amd_loader_loaded_code_object_info_t attribute,
                                       void* value) {
  const uint64_t base = (uintptr_t)o->image, base_storage = (uintptr_t)o->storage;
  const uint64_t storage_size = o->storage_size;
  char uri[128];
  const int uri_length = memory_uri(o, uri, sizeof(uri));
  switch (attribute) {
    case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_EXECUTABLE:
      ((hsa_executable_t*)value)->handle = (uint64_t)(uintptr_t)o->executable;
      break;
    case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_KIND:
      put_u32(value, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT);
      break;
    case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT:
      memcpy(value, &o->agent_handle, sizeof(hsa_agent_t));
      break;
    case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_TYPE:
      put_u32(value, HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY);
      break;
    case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_BASE:
      memcpy(value, &base_storage, sizeof(uint64_t));
      break;
    case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_SIZE:
      memcpy(value, &storage_size, sizeof(uint64_t));
      break;
    case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_DELTA:
      memcpy(value, &o->delta, sizeof(int64_t));
      break;
    case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE:
      memcpy(value, &base, sizeof(uint64_t));
      break;
    case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE:
      memcpy(value, &o->image_size, sizeof(uint64_t));
      break;
    case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH: put_u32(value, (uint32_t)uri_length); break;
    case HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI: memcpy(value, uri, (size_t)uri_length); break;
    default: /* CODE_OBJECT_STORAGE_FILE: softhsa keeps every code object in memory */
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_ven_amd_loader_loaded_code_object_get_info(
    hsa_loaded_code_object_t loaded_code_object,
    hsa_ven_amd_loader_loaded_code_object_info_t attribute, void* value) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  softhsa_loader_lock();
  const softhsa_loaded_object_t* o = softhsa_loader_find_loaded_object(loaded_code_object.handle);
  const hsa_status_t status = o ? loaded_object_info(o, attribute, value) : HSA_STATUS_ERROR_INVALID_ARGUMENT;
  softhsa_loader_unlock();
  return status;
}

SOFTHSA_EXPORT hsa_status_t hsa_ven_amd_loader_iterate_executables(
    hsa_status_t (*callback)(hsa_executable_t, void*), void* data) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  softhsa_loader_lock();
  hsa_status_t status = HSA_STATUS_SUCCESS;
  for (softhsa_executable_t* e = softhsa_loader_executables(); e && status == HSA_STATUS_SUCCESS; e = e->next)
    status = callback((hsa_executable_t){(uint64_t)(uintptr_t)e}, data);
  softhsa_loader_unlock();
  return status == HSA_STATUS_INFO_BREAK ? HSA_STATUS_SUCCESS : status;
}

hsa_status_t softhsa_loader_extension_table(uint16_t extension, uint16_t version_major,
                                            size_t table_length, void* table) {
  if (extension != SOFTHSA_AMD_LOADER_EXTENSION || version_major != 1) {
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  if (table_length && !table) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const hsa_ven_amd_loader_1_03_pfn_t pfn = {
      hsa_ven_amd_loader_query_host_address,
      hsa_ven_amd_loader_query_segment_descriptors,
      hsa_ven_amd_loader_query_executable,
      hsa_ven_amd_loader_executable_iterate_loaded_code_objects,
      hsa_ven_amd_loader_loaded_code_object_get_info,
      hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size,
      hsa_ven_amd_loader_iterate_executables,
  };
  if (table_length) memcpy(table, &pfn, table_length < sizeof(pfn) ? table_length : sizeof(pfn));
  return HSA_STATUS_SUCCESS;
}

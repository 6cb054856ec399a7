/* softhsa: code-object readers, executables and symbols (contract C2; interface in
 * softhsa_loader.h).
 *
 * Objects: a reader owns a private copy of the code-object bytes. Loading a reader on an agent
 * creates a loaded code object inside the executable: another copy of the bytes (so the loader
 * extension's CODE_OBJECT_STORAGE_* stays valid after the reader is destroyed), a load image
 * holding every PT_LOAD segment at its vaddr in one page-aligned zeroed mapping (relocated by
 * R_AMDGPU_RELATIVE64), and one symbol record per kernel (`name.kd`) and global variable.
 * KERNEL_OBJECT is the address of the kernel descriptor inside the load image, as in ROCr; the
 * dispatch path maps it back to its record.
 *
 * Handles, the live lists and the lock: softhsa_loader_state.h. Target checks: softhsa_target.h.
 * The AMD loader extension is loader_ext.c, the dispatch path dispatch.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
#endif
#include <errno.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ven_amd_loader.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "softhsa_blit.h"
#include "softhsa_core.h"
#include "softhsa_elf.h"
#include "softhsa_loader.h"
#include "softhsa_loader_state.h"
#include "softhsa_msgpack.h"
#include "softhsa_target.h"

#define KERNEL_DESCRIPTOR_SIZE 64
#define IMAGE_MIN_ALIGNMENT 4096

typedef struct reader {
  uint8_t* data;
  size_t size;
  struct reader* next;
} reader_t;

static pthread_mutex_t g_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static reader_t* g_readers;
static softhsa_executable_t* g_executables;

void softhsa_loader_lock(void) { pthread_mutex_lock(&g_lock); }
void softhsa_loader_unlock(void) { pthread_mutex_unlock(&g_lock); }
softhsa_executable_t* softhsa_loader_executables(void) { return g_executables; }

/* ---- handles ---------------------------------------------------------------------------------- */

static reader_t* find_reader(uint64_t handle) {
  for (reader_t* r = g_readers; r; r = r->next)
    if ((uint64_t)(uintptr_t)r == handle) return r;
  return NULL;
}

softhsa_executable_t* softhsa_loader_find_executable(uint64_t handle) {
  for (softhsa_executable_t* e = g_executables; e; e = e->next)
    if ((uint64_t)(uintptr_t)e == handle) return e;
  return NULL;
}

softhsa_loaded_object_t* softhsa_loader_find_loaded_object(uint64_t handle) {
  for (softhsa_executable_t* e = g_executables; e; e = e->next)
    for (softhsa_loaded_object_t* o = e->objects; o; o = o->next)
      if ((uint64_t)(uintptr_t)o == handle) return o;
  return NULL;
}

/* Visits every symbol of every live executable until `match` returns 1. */
static softhsa_symbol_t* find_symbol_where(int (*match)(const softhsa_symbol_t*, uint64_t), uint64_t key) {
  for (softhsa_executable_t* e = g_executables; e; e = e->next)
    for (softhsa_loaded_object_t* o = e->objects; o; o = o->next)
      for (size_t i = 0; i < o->symbol_count; ++i)
        if (match(&o->symbols[i], key)) return &o->symbols[i];
  return NULL;
}

static int is_record(const softhsa_symbol_t* s, uint64_t handle) { return (uint64_t)(uintptr_t)s == handle; }

static int is_descriptor(const softhsa_symbol_t* s, uint64_t address) {
  return s->is_kernel && s->address == address;
}

softhsa_symbol_t* softhsa_loader_find_kernel(uint64_t kernel_object) {
  return find_symbol_where(is_descriptor, kernel_object);
}

softhsa_loaded_object_t* softhsa_loader_find_image(uint64_t address) {
  for (softhsa_executable_t* e = g_executables; e; e = e->next)
    for (softhsa_loaded_object_t* o = e->objects; o; o = o->next)
      if (address >= (uintptr_t)o->image && address - (uintptr_t)o->image < o->image_size) return o;
  return NULL;
}

/* ---- code-object readers ---------------------------------------------------------------------- */

static hsa_status_t reader_create(uint8_t* data, size_t size, hsa_code_object_reader_t* out) {
  softhsa_elf_t elf;
  if (softhsa_elf_open(data, size, &elf)) {
    free(data);
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  reader_t* reader = calloc(1, sizeof(*reader));
  if (!reader) {
    free(data);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  reader->data = data;
  reader->size = size;
  pthread_mutex_lock(&g_lock);
  reader->next = g_readers;
  g_readers = reader;
  pthread_mutex_unlock(&g_lock);
  out->handle = (uint64_t)(uintptr_t)reader;
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_code_object_reader_create_from_memory(
    const void* code_object, size_t size, hsa_code_object_reader_t* code_object_reader) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!code_object || !size || !code_object_reader) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  uint8_t* copy = malloc(size); /* malloc alignment keeps the ELF tables aligned */
  if (!copy) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memcpy(copy, code_object, size);
  return reader_create(copy, size, code_object_reader);
}

static hsa_status_t reader_from_file(hsa_file_t file, size_t offset, size_t size,
                                     hsa_code_object_reader_t* out) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!out || !size) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  uint8_t* data = malloc(size);
  if (!data) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pread(file, data + done, size - done, (off_t)(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      free(data);
      return HSA_STATUS_ERROR_INVALID_FILE;
    }
    done += (size_t)n;
  }
  return reader_create(data, size, out);
}

SOFTHSA_EXPORT hsa_status_t hsa_code_object_reader_create_from_file(
    hsa_file_t file, hsa_code_object_reader_t* code_object_reader) {
  const off_t end = lseek(file, 0, SEEK_END);
  if (end <= 0) return HSA_STATUS_ERROR_INVALID_FILE;
  return reader_from_file(file, 0, (size_t)end, code_object_reader);
}

SOFTHSA_EXPORT hsa_status_t hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size(
    hsa_file_t file, size_t offset, size_t size, hsa_code_object_reader_t* code_object_reader) {
  return reader_from_file(file, offset, size, code_object_reader);
}

SOFTHSA_EXPORT hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t code_object_reader) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_lock);
  reader_t** link = &g_readers;
  while (*link && (uint64_t)(uintptr_t)*link != code_object_reader.handle) link = &(*link)->next;
  reader_t* reader = *link;
  if (reader) *link = reader->next;
  pthread_mutex_unlock(&g_lock);
  if (!reader) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  free(reader->data);
  free(reader);
  return HSA_STATUS_SUCCESS;
}

/* ---- executables ------------------------------------------------------------------------------ */

SOFTHSA_EXPORT hsa_status_t hsa_executable_create_alt(
    hsa_profile_t profile, hsa_default_float_rounding_mode_t default_float_rounding_mode,
    const char* options, hsa_executable_t* executable) {
  (void)options;
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!executable || (profile != HSA_PROFILE_BASE && profile != HSA_PROFILE_FULL) ||
      (unsigned)default_float_rounding_mode > HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR) {
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  softhsa_executable_t* exe = calloc(1, sizeof(*exe));
  if (!exe) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  exe->profile = profile;
  exe->rounding = default_float_rounding_mode;
  pthread_mutex_lock(&g_lock);
  exe->next = g_executables;
  g_executables = exe;
  pthread_mutex_unlock(&g_lock);
  executable->handle = (uint64_t)(uintptr_t)exe;
  return HSA_STATUS_SUCCESS;
}

static void free_loaded_object(softhsa_loaded_object_t* o) {
  for (size_t i = 0; i < o->symbol_count; ++i) free(o->symbols[i].name);
  free(o->symbols);
  if (o->mapping) munmap(o->mapping, o->mapping_size);
  free(o->storage);
  free(o);
}

static void free_executable(softhsa_executable_t* exe) {
  while (exe->objects) {
    softhsa_loaded_object_t* o = exe->objects;
    exe->objects = o->next;
    free_loaded_object(o);
  }
  free(exe);
}

SOFTHSA_EXPORT hsa_status_t hsa_executable_destroy(hsa_executable_t executable) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_lock);
  softhsa_executable_t** link = &g_executables;
  while (*link && (uint64_t)(uintptr_t)*link != executable.handle) link = &(*link)->next;
  softhsa_executable_t* exe = *link;
  if (exe) *link = exe->next;
  pthread_mutex_unlock(&g_lock);
  if (!exe) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  free_executable(exe);
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char* options) {
  (void)options;
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  pthread_mutex_lock(&g_lock);
  softhsa_executable_t* exe = softhsa_loader_find_executable(executable.handle);
  hsa_status_t status = HSA_STATUS_SUCCESS;
  if (!exe) status = HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  else if (exe->frozen) status = HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  else exe->frozen = 1;
  pthread_mutex_unlock(&g_lock);
  return status;
}

SOFTHSA_EXPORT hsa_status_t hsa_executable_validate_alt(hsa_executable_t executable,
                                                        const char* options, uint32_t* result) {
  (void)options;
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!result) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_lock);
  const int found = softhsa_loader_find_executable(executable.handle) != NULL;
  pthread_mutex_unlock(&g_lock);
  if (!found) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  *result = 0; /* every load was checked when it was made */
  return HSA_STATUS_SUCCESS;
}

/* ---- kernel metadata (NT_AMDGPU_METADATA) ----------------------------------------------------- */

typedef struct kernel_meta {
  const char* symbol;
  uint32_t symbol_len;
  uint64_t kernarg_size, kernarg_align, group_size, private_size;
  int dynamic_stack;
} kernel_meta_t;

static const struct { const char* key; size_t offset; } kMetaFields[] = {
    {".kernarg_segment_size", offsetof(kernel_meta_t, kernarg_size)},
    {".kernarg_segment_align", offsetof(kernel_meta_t, kernarg_align)},
    {".group_segment_fixed_size", offsetof(kernel_meta_t, group_size)},
    {".private_segment_fixed_size", offsetof(kernel_meta_t, private_size)},
};

static int parse_kernel_value(softhsa_msgpack_t* r, const char* key, uint32_t key_len,
                              kernel_meta_t* k) {
  if (softhsa_msgpack_str_eq(key, key_len, ".symbol"))
    return softhsa_msgpack_str(r, &k->symbol, &k->symbol_len);
  if (softhsa_msgpack_str_eq(key, key_len, ".uses_dynamic_stack"))
    return softhsa_msgpack_bool(r, &k->dynamic_stack);
  for (size_t i = 0; i < sizeof(kMetaFields) / sizeof(kMetaFields[0]); ++i) {
    if (!softhsa_msgpack_str_eq(key, key_len, kMetaFields[i].key)) continue;
    uint64_t value = 0;
    if (softhsa_msgpack_uint(r, &value) || value > UINT32_MAX) return -1;
    memcpy((uint8_t*)k + kMetaFields[i].offset, &value, sizeof(value));
    return 0;
  }
  return softhsa_msgpack_skip(r);
}

static int parse_kernel(softhsa_msgpack_t* r, kernel_meta_t* k) {
  uint32_t count = 0;
  memset(k, 0, sizeof(*k));
  if (softhsa_msgpack_map(r, &count)) return -1;
  for (uint32_t i = 0; i < count; ++i) {
    const char* key;
    uint32_t key_len;
    if (softhsa_msgpack_str(r, &key, &key_len) || parse_kernel_value(r, key, key_len, k)) return -1;
  }
  return k->symbol ? 0 : -1;
}

/* Parses amdhsa.kernels into a malloc'd array (strings point into the note). */
static int parse_metadata(const uint8_t* note, size_t size, kernel_meta_t** out_kernels,
                          size_t* out_count) {
  softhsa_msgpack_t r = {note, note + size};
  uint32_t count = 0;
  if (softhsa_msgpack_map(&r, &count)) return -1;
  for (uint32_t i = 0; i < count; ++i) {
    const char* key;
    uint32_t key_len, kernel_count;
    if (softhsa_msgpack_str(&r, &key, &key_len)) return -1;
    if (!softhsa_msgpack_str_eq(key, key_len, "amdhsa.kernels")) {
      if (softhsa_msgpack_skip(&r)) return -1;
      continue;
    }
    /* Each kernel map takes at least one byte, which bounds the allocation. */
    if (softhsa_msgpack_array(&r, &kernel_count) || kernel_count > size) return -1;
    kernel_meta_t* kernels = calloc(kernel_count ? kernel_count : 1, sizeof(*kernels));
    if (!kernels) return -1;
    for (uint32_t k = 0; k < kernel_count; ++k) {
      if (parse_kernel(&r, &kernels[k])) {
        free(kernels);
        return -1;
      }
    }
    *out_kernels = kernels;
    *out_count = kernel_count;
    return 0;
  }
  return -1;
}

/* ---- loading ---------------------------------------------------------------------------------- */

typedef struct symbol_scan {
  softhsa_loaded_object_t* object;
  const kernel_meta_t* kernels;
  size_t kernel_count;
  uint64_t min_vaddr;
  size_t capacity;
  int failed;
} symbol_scan_t;

static const kernel_meta_t* find_kernel_meta(const symbol_scan_t* scan, const char* name) {
  for (size_t i = 0; i < scan->kernel_count; ++i)
    if (softhsa_msgpack_str_eq(scan->kernels[i].symbol, scan->kernels[i].symbol_len, name))
      return &scan->kernels[i];
  return NULL;
}

/* 1 when [vaddr, vaddr + size) lies inside the load image. */
static int in_image(const symbol_scan_t* scan, uint64_t vaddr, uint64_t size) {
  const uint64_t image_size = scan->object->image_size;
  return vaddr >= scan->min_vaddr && vaddr - scan->min_vaddr <= image_size &&
         size <= image_size - (vaddr - scan->min_vaddr);
}

static void fill_kernel(softhsa_symbol_t* s, const kernel_meta_t* meta) {
  s->is_kernel = 1;
  s->kernarg_size = (uint32_t)meta->kernarg_size;
  s->kernarg_align = (uint32_t)meta->kernarg_align;
  s->group_size = (uint32_t)meta->group_size;
  s->private_size = (uint32_t)meta->private_size;
  s->dynamic_callstack = meta->dynamic_stack;
  s->blit_index = softhsa_blit_kernel_index(s->name, strlen(s->name) - 3 /* ".kd" */);
}

static int add_symbol(const char* name, const softhsa_elf_symbol_t* sym, void* user) {
  symbol_scan_t* scan = user;
  if (sym->type != STT_OBJECT) return 0;
  const size_t len = strlen(name);
  const int is_kernel = len > 3 && strcmp(name + len - 3, ".kd") == 0;
  const kernel_meta_t* meta = is_kernel ? find_kernel_meta(scan, name) : NULL;
  if ((is_kernel && !meta) ||
      !in_image(scan, sym->value, is_kernel ? KERNEL_DESCRIPTOR_SIZE : sym->size)) {
    scan->failed = 1;
    return 1;
  }
  softhsa_loaded_object_t* o = scan->object;
  if (o->symbol_count == scan->capacity) {
    const size_t capacity = scan->capacity ? scan->capacity * 2 : 16;
    softhsa_symbol_t* grown = realloc(o->symbols, capacity * sizeof(*grown));
    if (!grown) {
      scan->failed = 1;
      return 1;
    }
    o->symbols = grown;
    scan->capacity = capacity;
  }
  softhsa_symbol_t* s = &o->symbols[o->symbol_count];
  memset(s, 0, sizeof(*s));
  s->owner = o;
  s->name = strdup(name);
  s->address = (uint64_t)((int64_t)sym->value + o->delta);
  s->size = sym->size;
  s->blit_index = -1;
  if (!s->name) {
    scan->failed = 1;
    return 1;
  }
  ++o->symbol_count;
  if (is_kernel) fill_kernel(s, meta);
  return 0;
}

/* Every kernel named by the metadata must have its descriptor symbol. */
static int all_kernels_found(const softhsa_loaded_object_t* o, const kernel_meta_t* kernels, size_t count) {
  for (size_t k = 0; k < count; ++k) {
    int found = 0;
    for (size_t i = 0; i < o->symbol_count && !found; ++i)
      found = softhsa_msgpack_str_eq(kernels[k].symbol, kernels[k].symbol_len, o->symbols[i].name);
    if (!found) return 0;
  }
  return 1;
}

static hsa_status_t load_image(softhsa_loaded_object_t* o, const softhsa_elf_t* elf) {
  const uint8_t* note;
  size_t note_size;
  kernel_meta_t* kernels = NULL;
  size_t kernel_count = 0;
  uint64_t lo, hi, align;
  if (softhsa_elf_metadata_note(elf, &note, &note_size) ||
      parse_metadata(note, note_size, &kernels, &kernel_count) ||
      softhsa_elf_load_extent(elf, &lo, &hi, &align)) {
    free(kernels);
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  if (align < IMAGE_MIN_ALIGNMENT) align = IMAGE_MIN_ALIGNMENT;
  const uint64_t size = hi - lo;
  if (align & (align - 1) || align > (1u << 21) || size > (1ull << 32)) {
    free(kernels);
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  o->image_size = size;
  o->mapping_size = size + align;
  o->mapping = mmap(NULL, o->mapping_size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (o->mapping == MAP_FAILED) {
    o->mapping = NULL;
    free(kernels);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  o->image = (uint8_t*)(((uintptr_t)o->mapping + align - 1) & ~(uintptr_t)(align - 1));
  o->delta = (int64_t)((uintptr_t)o->image - lo);
  symbol_scan_t scan = {o, kernels, kernel_count, lo, 0, 0};
  hsa_status_t status = HSA_STATUS_SUCCESS;
  if (softhsa_elf_load(elf, o->image, lo, size, o->delta) ||
      softhsa_elf_for_each_symbol(elf, add_symbol, &scan) || scan.failed ||
      !all_kernels_found(o, kernels, kernel_count)) {
    status = HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  free(kernels);
  return status;
}

SOFTHSA_EXPORT hsa_status_t hsa_executable_load_agent_code_object(
    hsa_executable_t executable, hsa_agent_t agent, hsa_code_object_reader_t code_object_reader,
    const char* options, hsa_loaded_code_object_t* loaded_code_object) {
  (void)options;
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  softhsa_agent_t* target_agent = softhsa_agent_from_handle(agent.handle);
  if (!target_agent) return HSA_STATUS_ERROR_INVALID_AGENT;
  pthread_mutex_lock(&g_lock);
  softhsa_executable_t* exe = softhsa_loader_find_executable(executable.handle);
  reader_t* reader = find_reader(code_object_reader.handle);
  softhsa_loaded_object_t* o = NULL;
  softhsa_elf_t elf;
  hsa_status_t status = HSA_STATUS_SUCCESS;
  if (!exe) status = HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  else if (exe->frozen) status = HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  else if (!reader) status = HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  else if (!(o = calloc(1, sizeof(*o))) || !(o->storage = malloc(reader->size)))
    status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  if (status == HSA_STATUS_SUCCESS) {
    memcpy(o->storage, reader->data, reader->size);
    o->storage_size = reader->size;
    o->executable = exe;
    o->agent = target_agent;
    o->agent_handle = agent;
    if (softhsa_elf_open(o->storage, o->storage_size, &elf)) status = HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    else status = softhsa_target_check(&elf, target_agent);
  }
  if (status == HSA_STATUS_SUCCESS) status = load_image(o, &elf);
  if (status == HSA_STATUS_SUCCESS) {
    softhsa_loaded_object_t** tail = &exe->objects;
    while (*tail) tail = &(*tail)->next;
    *tail = o;
    if (loaded_code_object) loaded_code_object->handle = (uint64_t)(uintptr_t)o;
  } else if (o) {
    free_loaded_object(o);
  }
  pthread_mutex_unlock(&g_lock);
  return status;
}

/* ---- symbols ---------------------------------------------------------------------------------- */

SOFTHSA_EXPORT hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t executable,
                                                              const char* symbol_name,
                                                              const hsa_agent_t* agent,
                                                              hsa_executable_symbol_t* symbol) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!symbol_name || !symbol) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_lock);
  softhsa_executable_t* exe = softhsa_loader_find_executable(executable.handle);
  hsa_status_t status = exe ? HSA_STATUS_ERROR_INVALID_SYMBOL_NAME : HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  softhsa_loaded_object_t* o = exe ? exe->objects : NULL;
  for (; o && status != HSA_STATUS_SUCCESS; o = o->next) {
    if (agent && agent->handle != o->agent_handle.handle) continue;
    for (size_t i = 0; i < o->symbol_count; ++i) {
      if (strcmp(o->symbols[i].name, symbol_name) == 0) {
        symbol->handle = (uint64_t)(uintptr_t)&o->symbols[i];
        status = HSA_STATUS_SUCCESS;
        break;
      }
    }
  }
  pthread_mutex_unlock(&g_lock);
  return status;
}

static void put_u32(void* value, uint32_t v) { memcpy(value, &v, sizeof(v)); }

/* Attributes that both kernels and variables have; returns 1 when `attribute` was one of them. */
static int common_symbol_info(const softhsa_symbol_t* s, hsa_executable_symbol_info_t attribute,
                              void* value) {
  switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
      put_u32(value, s->is_kernel ? HSA_SYMBOL_KIND_KERNEL : HSA_SYMBOL_KIND_VARIABLE);
      return 1;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH: put_u32(value, (uint32_t)strlen(s->name)); return 1;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME: /* not NUL-terminated (hsa.h) */
      memcpy(value, s->name, strlen(s->name));
      return 1;
    case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH: put_u32(value, 0); return 1;
    case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME: return 1;
    case HSA_EXECUTABLE_SYMBOL_INFO_AGENT:
      memcpy(value, &s->owner->agent_handle, sizeof(hsa_agent_t));
      return 1;
    case HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE: put_u32(value, HSA_SYMBOL_LINKAGE_PROGRAM); return 1;
    case HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION: *(bool*)value = true; return 1;
    default: return 0;
  }
}

static hsa_status_t kernel_symbol_info(const softhsa_symbol_t* s, hsa_executable_symbol_info_t attribute,
                                       void* value) {
  switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT: memcpy(value, &s->address, sizeof(uint64_t)); break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE: put_u32(value, s->kernarg_size); break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT: put_u32(value, s->kernarg_align); break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE: put_u32(value, s->group_size); break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE: put_u32(value, s->private_size); break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK: *(bool*)value = s->dynamic_callstack; break;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION: put_u32(value, 0); break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t variable_symbol_info(const softhsa_symbol_t* s, hsa_executable_symbol_info_t attribute,
                                         void* value) {
  switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS: memcpy(value, &s->address, sizeof(uint64_t)); break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION: put_u32(value, HSA_VARIABLE_ALLOCATION_AGENT); break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT: put_u32(value, HSA_VARIABLE_SEGMENT_GLOBAL); break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT: put_u32(value, 1); break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE: put_u32(value, (uint32_t)s->size); break;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST: *(bool*)value = false; break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t executable_symbol,
                                                           hsa_executable_symbol_info_t attribute,
                                                           void* value) {
  if (!softhsa_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  pthread_mutex_lock(&g_lock);
  const softhsa_symbol_t* s = find_symbol_where(is_record, executable_symbol.handle);
  hsa_status_t status = HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL;
  if (s) {
    if (common_symbol_info(s, attribute, value)) status = HSA_STATUS_SUCCESS;
    else if (s->is_kernel) status = kernel_symbol_info(s, attribute, value);
    else status = variable_symbol_info(s, attribute, value);
  }
  pthread_mutex_unlock(&g_lock);
  return status;
}

void softhsa_loader_reset(void) {
  pthread_mutex_lock(&g_lock);
  while (g_executables) {
    softhsa_executable_t* e = g_executables;
    g_executables = e->next;
    free_executable(e);
  }
  while (g_readers) {
    reader_t* r = g_readers;
    g_readers = r->next;
    free(r->data);
    free(r);
  }
  pthread_mutex_unlock(&g_lock);
}

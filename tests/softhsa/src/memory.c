/* softhsa memory: memory pools and regions of each agent, allocation, access and pointer queries.
 *
 * Every pool is host memory (the tests have no GPU): an allocation is an anonymous mapping, so it
 * is zeroed and only touched pages cost memory. A pool tracks the bytes it has handed out; going
 * past its `size` is HSA_STATUS_ERROR_OUT_OF_RESOURCES, one request over `alloc_max_size` is
 * HSA_STATUS_ERROR_INVALID_ALLOCATION (the statuses hsa_ext_amd.h documents). Allocations live in a
 * list under one mutex so free, pointer_info and allow_access find them by any interior address.
 *
 * Access (hsa_amd_agent_memory_pool_get_info ACCESS) follows ROCr's MemoryRegion::GetAccessInfo:
 * the owner, and a CPU asking about another CPU's (system) pool, are ALLOWED_BY_DEFAULT; everything
 * else is DISALLOWED_BY_DEFAULT — a GPU needs hsa_amd_agents_allow_access even for system memory,
 * and peer GPU memory is treated as reachable over xGMI (never NEVER_ALLOWED). ACCESSIBLE_BY_ALL is
 * the pool's configured flag (ROCr: true exactly for system pools, the default here too).
 * allow_access records the extra agents, which hsa_amd_pointer_info then lists. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "softhsa_core.h"

typedef struct allocation {
  struct allocation* next;
  void* mapping; /* what munmap takes */
  size_t mapping_size;
  uint8_t* base; /* aligned start handed to the caller */
  size_t size;   /* rounded to the pool granule */
  softhsa_pool_t* pool;
  uint32_t allowed_count;
  hsa_agent_t allowed[SOFTHSA_AGENT_MAX];
} allocation_t;

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static allocation_t* g_allocations; /* guarded by g_mutex */

/* hsa_ext_amd.h declares the AMD status codes in an enum of their own. */
#define INVALID_POOL ((hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL)

softhsa_pool_t* softhsa_pool_from_handle(uint64_t handle) {
  softhsa_system_t* system = softhsa_system();
  if (!system) return NULL;
  for (uint32_t a = 0; a < system->agent_count; ++a) {
    softhsa_agent_t* agent = &system->agents[a];
    for (uint32_t p = 0; p < agent->pool_count; ++p) {
      if ((uint64_t)(uintptr_t)&agent->pools[p] == handle) return &agent->pools[p];
    }
  }
  return NULL;
}

static softhsa_pool_t* pool_from_region(uint64_t handle) {
  softhsa_system_t* system = softhsa_system();
  for (uint32_t a = 0; a < system->agent_count; ++a) {
    softhsa_agent_t* agent = &system->agents[a];
    for (uint32_t p = 0; p < agent->pool_count; ++p) {
      if ((uint64_t)(uintptr_t)&agent->pools[p].region == handle) return &agent->pools[p];
    }
  }
  return NULL;
}

/* ---- pools ---- */

SOFTHSA_EXPORT hsa_status_t hsa_amd_agent_iterate_memory_pools(
    hsa_agent_t agent, hsa_status_t (*callback)(hsa_amd_memory_pool_t memory_pool, void* data),
    void* data) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_agent_t* a = softhsa_agent_from_handle(agent.handle);
  if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t p = 0; p < a->pool_count; ++p) {
    hsa_amd_memory_pool_t pool = {(uint64_t)(uintptr_t)&a->pools[p]};
    hsa_status_t status = callback(pool, data);
    if (status != HSA_STATUS_SUCCESS) return status;
  }
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t memory_pool,
                                                         hsa_amd_memory_pool_info_t attribute,
                                                         void* value) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_pool_t* pool = softhsa_pool_from_handle(memory_pool.handle);
  if (!pool) return INVALID_POOL;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch ((int)attribute) {
    case HSA_AMD_MEMORY_POOL_INFO_SEGMENT:
      *(hsa_amd_segment_t*)value = HSA_AMD_SEGMENT_GLOBAL;
      break;
    case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS: *(uint32_t*)value = pool->global_flags; break;
    case HSA_AMD_MEMORY_POOL_INFO_SIZE: *(size_t*)value = pool->size; break;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED: *(bool*)value = pool->alloc_allowed; break;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE: *(size_t*)value = pool->granule; break;
    case SOFTHSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_REC_GRANULE:
      *(size_t*)value = pool->granule;
      break;
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT: *(size_t*)value = pool->alignment; break;
    case HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL: *(bool*)value = pool->accessible_by_all; break;
    case HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE: *(size_t*)value = pool->alloc_max_size; break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

/* ROCr's MemoryRegion::GetAccessInfo, with every GPU pair on one xGMI hive. */
static hsa_amd_memory_pool_access_t pool_access(const softhsa_agent_t* agent,
                                                const softhsa_pool_t* pool) {
  if (pool->owner == agent) return HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT;
  if (!pool->owner->is_gpu && !agent->is_gpu) return HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT;
  return HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT;
}

SOFTHSA_EXPORT hsa_status_t hsa_amd_agent_memory_pool_get_info(
    hsa_agent_t agent, hsa_amd_memory_pool_t memory_pool,
    hsa_amd_agent_memory_pool_info_t attribute, void* value) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_agent_t* a = softhsa_agent_from_handle(agent.handle);
  if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
  softhsa_pool_t* pool = softhsa_pool_from_handle(memory_pool.handle);
  if (!pool) return INVALID_POOL;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch ((int)attribute) {
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS:
      *(hsa_amd_memory_pool_access_t*)value = pool_access(a, pool);
      break;
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS:
      *(uint32_t*)value = pool->owner == a ? 0 : 1;
      break;
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO: {
      if (pool->owner == a) break; /* no hops: nothing to write */
      hsa_amd_memory_pool_link_info_t link;
      memset(&link, 0, sizeof(link));
      link.link_type = pool->owner->is_gpu && a->is_gpu ? HSA_AMD_LINK_INFO_TYPE_XGMI
                                                        : HSA_AMD_LINK_INFO_TYPE_PCIE;
      link.numa_distance = 20;
      memcpy(value, &link, sizeof(link));
      break;
    }
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

/* ---- regions: the same pools through the older API (ROCr: every pool is a region) ---- */

SOFTHSA_EXPORT hsa_status_t hsa_agent_iterate_regions(hsa_agent_t agent,
                                                      hsa_status_t (*callback)(hsa_region_t region,
                                                                               void* data),
                                                      void* data) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_agent_t* a = softhsa_agent_from_handle(agent.handle);
  if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t p = 0; p < a->pool_count; ++p) {
    hsa_status_t status = callback((hsa_region_t){(uint64_t)(uintptr_t)&a->pools[p].region}, data);
    if (status != HSA_STATUS_SUCCESS) return status;
  }
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_region_get_info(hsa_region_t region, hsa_region_info_t attribute,
                                                void* value) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_pool_t* pool = pool_from_region(region.handle);
  if (!pool) return HSA_STATUS_ERROR_INVALID_REGION;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch ((int)attribute) {
    case HSA_REGION_INFO_SEGMENT: *(hsa_region_segment_t*)value = HSA_REGION_SEGMENT_GLOBAL; break;
    case HSA_REGION_INFO_GLOBAL_FLAGS: {
      /* The region flag bits have the same values as the pool flags (hsa.h / hsa_ext_amd.h). */
      *(uint32_t*)value = pool->global_flags & 7u;
      break;
    }
    case HSA_REGION_INFO_SIZE: *(size_t*)value = pool->size; break;
    case HSA_REGION_INFO_ALLOC_MAX_SIZE: *(size_t*)value = pool->alloc_max_size; break;
    case HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE: *(uint32_t*)value = 0; break;
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED: *(bool*)value = pool->alloc_allowed; break;
    case HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE: *(size_t*)value = pool->granule; break;
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT: *(size_t*)value = pool->alignment; break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

/* ---- allocation ---- */

static allocation_t* find_allocation_locked(const void* ptr) {
  const uint8_t* p = ptr;
  for (allocation_t* a = g_allocations; a; a = a->next) {
    if (p >= a->base && p < a->base + a->size) return a;
  }
  return NULL;
}

SOFTHSA_EXPORT hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t memory_pool,
                                                         size_t size, uint32_t flags, void** ptr) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_pool_t* pool = softhsa_pool_from_handle(memory_pool.handle);
  if (!pool) return INVALID_POOL;
  /* flags: 0, or HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG (4) from newer headers. */
  if (!ptr || size == 0 || (flags & ~4u) != 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!pool->alloc_allowed || size > pool->alloc_max_size) {
    return HSA_STATUS_ERROR_INVALID_ALLOCATION;
  }
  size_t rounded = (size + pool->granule - 1) / pool->granule * pool->granule;
  allocation_t* record = calloc(1, sizeof(*record));
  if (!record) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  pthread_mutex_lock(&g_mutex);
  hsa_status_t status = HSA_STATUS_SUCCESS;
  if (rounded > pool->size - pool->used) {
    status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  } else {
    size_t mapping_size = rounded + pool->alignment;
    void* mapping = mmap(NULL, mapping_size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapping == MAP_FAILED) {
      status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    } else {
      uintptr_t mask = (uintptr_t)pool->alignment - 1;
      record->next = g_allocations;
      record->mapping = mapping;
      record->mapping_size = mapping_size;
      record->base = (uint8_t*)(((uintptr_t)mapping + mask) & ~mask);
      record->size = rounded;
      record->pool = pool;
      g_allocations = record;
      pool->used += rounded;
      *ptr = record->base;
    }
  }
  pthread_mutex_unlock(&g_mutex);
  if (status != HSA_STATUS_SUCCESS) free(record);
  return status;
}

static void release(allocation_t* a) {
  a->pool->used -= a->size;
  munmap(a->mapping, a->mapping_size);
  free(a);
}

SOFTHSA_EXPORT hsa_status_t hsa_amd_memory_pool_free(void* ptr) {
  SOFTHSA_REQUIRE_INIT();
  if (!ptr) return HSA_STATUS_SUCCESS;
  pthread_mutex_lock(&g_mutex);
  hsa_status_t status = HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (allocation_t** link = &g_allocations; *link; link = &(*link)->next) {
    if ((*link)->base == ptr) {
      allocation_t* a = *link;
      *link = a->next;
      release(a);
      status = HSA_STATUS_SUCCESS;
      break;
    }
  }
  pthread_mutex_unlock(&g_mutex);
  return status;
}

void softhsa_memory_release_all(void) {
  pthread_mutex_lock(&g_mutex);
  while (g_allocations) {
    allocation_t* a = g_allocations;
    g_allocations = a->next;
    release(a);
  }
  pthread_mutex_unlock(&g_mutex);
}

SOFTHSA_EXPORT hsa_status_t hsa_amd_agents_allow_access(uint32_t num_agents,
                                                        const hsa_agent_t* agents,
                                                        const uint32_t* flags, const void* ptr) {
  SOFTHSA_REQUIRE_INIT();
  (void)flags; /* reserved, NULL in every caller */
  if (num_agents == 0 || !agents || !ptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < num_agents; ++i) {
    if (!softhsa_agent_from_handle(agents[i].handle)) return HSA_STATUS_ERROR_INVALID_AGENT;
  }
  pthread_mutex_lock(&g_mutex);
  allocation_t* a = find_allocation_locked(ptr);
  if (a) {
    for (uint32_t i = 0; i < num_agents; ++i) {
      bool seen = false;
      for (uint32_t j = 0; j < a->allowed_count; ++j) {
        seen |= a->allowed[j].handle == agents[i].handle;
      }
      if (!seen && a->allowed_count < SOFTHSA_AGENT_MAX) a->allowed[a->allowed_count++] = agents[i];
    }
  }
  pthread_mutex_unlock(&g_mutex);
  /* ROCr also accepts pointers it did not allocate (system memory); nothing to record then. */
  return HSA_STATUS_SUCCESS;
}

/* Agents that can reach `a`: by default (pool access) or through allow_access. */
static uint32_t accessible_agents(const allocation_t* a, hsa_agent_t* out) {
  softhsa_system_t* system = softhsa_system();
  uint32_t n = 0;
  for (uint32_t i = 0; i < system->agent_count; ++i) {
    softhsa_agent_t* agent = &system->agents[i];
    hsa_agent_t handle = {(uint64_t)(uintptr_t)agent};
    bool allowed = pool_access(agent, a->pool) == HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT;
    for (uint32_t j = 0; j < a->allowed_count; ++j) {
      allowed |= a->allowed[j].handle == handle.handle;
    }
    if (allowed) out[n++] = handle;
  }
  return n;
}

SOFTHSA_EXPORT hsa_status_t hsa_amd_pointer_info(const void* ptr, hsa_amd_pointer_info_t* info,
                                                 void* (*alloc)(size_t),
                                                 uint32_t* num_agents_accessible,
                                                 hsa_agent_t** accessible) {
  SOFTHSA_REQUIRE_INIT();
  if (!ptr || !info || info->size < sizeof(uint32_t) + sizeof(int)) {
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  if ((num_agents_accessible || accessible) && !(alloc && num_agents_accessible && accessible)) {
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  hsa_amd_pointer_info_t result;
  memset(&result, 0, sizeof(result));
  result.size = info->size < sizeof(result) ? info->size : (uint32_t)sizeof(result);
  result.type = HSA_EXT_POINTER_TYPE_UNKNOWN;
  hsa_agent_t agents[SOFTHSA_AGENT_MAX];
  uint32_t agent_count = 0;
  pthread_mutex_lock(&g_mutex);
  allocation_t* a = find_allocation_locked(ptr);
  if (a) {
    result.type = HSA_EXT_POINTER_TYPE_HSA;
    result.agentBaseAddress = a->base;
    result.hostBaseAddress = a->base;
    result.sizeInBytes = a->size;
    result.agentOwner = (hsa_agent_t){(uint64_t)(uintptr_t)a->pool->owner};
    result.global_flags = a->pool->global_flags;
    agent_count = accessible_agents(a, agents);
  }
  pthread_mutex_unlock(&g_mutex);
  memcpy(info, &result, result.size);
  if (alloc) {
    *num_agents_accessible = agent_count;
    *accessible = alloc(sizeof(hsa_agent_t) * (agent_count ? agent_count : 1));
    if (!*accessible) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    memcpy(*accessible, agents, sizeof(hsa_agent_t) * agent_count);
  }
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_memory_copy(void* dst, const void* src, size_t size) {
  SOFTHSA_REQUIRE_INIT();
  if (!dst || !src) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  memmove(dst, src, size);
  return HSA_STATUS_SUCCESS;
}

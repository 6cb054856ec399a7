/* softhsa: the agent configuration (contract C2) -> softhsa_system_t.
 *
 * The JSON file named by SOFTHSA_CONFIG is read at hsa_init. Every key is optional; an absent file
 * name gives one CPU and one gfx942 GPU. Unknown keys and wrong types are errors (a typo in a test
 * configuration should fail loudly, not silently fall back to a default). ROCR_VISIBLE_DEVICES
 * then filters and reorders the GPUs the way ROCr's RvdFilter does: a comma list of GPU indices
 * (into the configured GPU list) or UUIDs (`GPU-` and a unique prefix, case-insensitive); the list
 * ends at the first token that is empty, unknown, ambiguous, out of range or repeated; set but
 * empty hides every GPU. `faults` (top level: every GPU; in a GPU: that GPU, on top of the top
 * level) injects queue errors (softhsa_faults_t). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "softhsa_core.h"

#define ISA_PREFIX "amdgcn-amd-amdhsa--"
#define GiB (UINT64_C(1) << 30)

typedef struct {
  char* error;
  size_t error_size;
  char path[128]; /* where in the document, e.g. "agents[1].pools[0]" */
  softhsa_faults_t faults; /* the top-level "faults": every GPU starts from these */
} ctx_t;

static bool fail(ctx_t* ctx, const char* key, const char* message) {
  snprintf(ctx->error, ctx->error_size, "%s%s%s: %s", ctx->path, ctx->path[0] ? "." : "", key,
           message);
  return false;
}

static bool expect(ctx_t* ctx, const softhsa_json_t* v, softhsa_json_kind_t kind) {
  if (v->kind == kind) return true;
  char message[96];
  snprintf(message, sizeof(message), "expected %s, got %s", softhsa_json_kind_name(kind),
           softhsa_json_kind_name(v->kind));
  return fail(ctx, v->key ? v->key : "", message);
}

static bool read_string(ctx_t* ctx, const softhsa_json_t* v, char* out, size_t size) {
  if (!expect(ctx, v, SOFTHSA_JSON_STRING)) return false;
  if (strlen(v->string) >= size) return fail(ctx, v->key, "string too long");
  strcpy(out, v->string);
  return true;
}

static bool read_u64(ctx_t* ctx, const softhsa_json_t* v, uint64_t* out) {
  if (!expect(ctx, v, SOFTHSA_JSON_INT)) return false;
  if (v->integer < 0) return fail(ctx, v->key, "must not be negative");
  *out = (uint64_t)v->integer;
  return true;
}

static bool read_u32(ctx_t* ctx, const softhsa_json_t* v, uint32_t* out) {
  uint64_t value = 0;
  if (!read_u64(ctx, v, &value)) return false;
  if (value > UINT32_MAX) return fail(ctx, v->key, "does not fit in 32 bits");
  *out = (uint32_t)value;
  return true;
}

static bool read_bool(ctx_t* ctx, const softhsa_json_t* v, bool* out) {
  if (!expect(ctx, v, SOFTHSA_JSON_BOOL)) return false;
  *out = v->boolean;
  return true;
}

static bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

/* ---- pools ---- */

static void pool_defaults(softhsa_pool_t* pool, uint32_t flags, uint64_t size, bool for_cpu) {
  memset(pool, 0, sizeof(*pool));
  pool->global_flags = flags;
  pool->size = size;
  pool->alloc_max_size = size;
  pool->granule = 4096;
  pool->alignment = 4096;
  pool->alloc_allowed = true;
  pool->accessible_by_all = for_cpu;
}

static bool read_flags(ctx_t* ctx, const softhsa_json_t* v, uint32_t* out) {
  static const struct { const char* name; uint32_t bit; } kFlags[] = {
      {"kernarg_init", HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT},
      {"fine", HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED},
      {"coarse", HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED},
      {"extended_scope_fine", 8},
  };
  if (!expect(ctx, v, SOFTHSA_JSON_ARRAY)) return false;
  *out = 0;
  for (const softhsa_json_t* item = v->child; item; item = item->next) {
    if (item->kind != SOFTHSA_JSON_STRING) return fail(ctx, "flags", "expected strings");
    size_t i = 0;
    while (i < sizeof(kFlags) / sizeof(kFlags[0]) && strcmp(kFlags[i].name, item->string) != 0) i++;
    if (i == sizeof(kFlags) / sizeof(kFlags[0])) {
      return fail(ctx, "flags",
                  "unknown flag (known: kernarg_init, fine, coarse, extended_scope_fine)");
    }
    *out |= kFlags[i].bit;
  }
  return true;
}

static bool read_pool(ctx_t* ctx, const softhsa_json_t* obj, softhsa_pool_t* pool, bool for_cpu) {
  if (!expect(ctx, obj, SOFTHSA_JSON_OBJECT)) return false;
  pool_defaults(pool, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, 64 * GiB, for_cpu);
  bool max_given = false;
  for (const softhsa_json_t* m = obj->child; m; m = m->next) {
    bool ok;
    if (!strcmp(m->key, "flags")) ok = read_flags(ctx, m, &pool->global_flags);
    else if (!strcmp(m->key, "size")) ok = read_u64(ctx, m, &pool->size);
    else if (!strcmp(m->key, "alloc_max_size"))
      ok = max_given = read_u64(ctx, m, &pool->alloc_max_size);
    else if (!strcmp(m->key, "granule")) ok = read_u64(ctx, m, &pool->granule);
    else if (!strcmp(m->key, "alignment")) ok = read_u64(ctx, m, &pool->alignment);
    else if (!strcmp(m->key, "alloc_allowed")) ok = read_bool(ctx, m, &pool->alloc_allowed);
    else if (!strcmp(m->key, "accessible_by_all")) ok = read_bool(ctx, m, &pool->accessible_by_all);
    else ok = fail(ctx, m->key, "unknown key");
    if (!ok) return false;
  }
  if (!max_given) pool->alloc_max_size = pool->size;
  if (pool->granule == 0) return fail(ctx, "granule", "must be > 0");
  if (!is_power_of_two(pool->alignment)) return fail(ctx, "alignment", "must be a power of two");
  return true;
}

static bool read_pools(ctx_t* ctx, const softhsa_json_t* v, softhsa_agent_t* agent) {
  if (!expect(ctx, v, SOFTHSA_JSON_ARRAY)) return false;
  size_t base = strlen(ctx->path);
  agent->pool_count = 0;
  for (const softhsa_json_t* item = v->child; item; item = item->next) {
    if (agent->pool_count == SOFTHSA_POOL_MAX) return fail(ctx, "pools", "too many pools");
    snprintf(ctx->path + base, sizeof(ctx->path) - base, ".pools[%u]", agent->pool_count);
    if (!read_pool(ctx, item, &agent->pools[agent->pool_count], !agent->is_gpu)) return false;
    agent->pool_count++;
  }
  ctx->path[base] = '\0';
  return true;
}

/* ---- faults ---- */

/* The statuses ROCr's AQL queue passes to the error callback for queue and wave errors (its
 * queue-event and exception handlers), plus the generic HSA_STATUS_ERROR. */
static const struct { const char* name; hsa_status_t status; } kQueueErrors[] = {
    {"HSA_STATUS_ERROR", HSA_STATUS_ERROR},
    {"HSA_STATUS_ERROR_INVALID_ARGUMENT", HSA_STATUS_ERROR_INVALID_ARGUMENT},
    {"HSA_STATUS_ERROR_INVALID_ALLOCATION", HSA_STATUS_ERROR_INVALID_ALLOCATION},
    {"HSA_STATUS_ERROR_OUT_OF_RESOURCES", HSA_STATUS_ERROR_OUT_OF_RESOURCES},
    {"HSA_STATUS_ERROR_INVALID_PACKET_FORMAT", HSA_STATUS_ERROR_INVALID_PACKET_FORMAT},
    {"HSA_STATUS_ERROR_INVALID_ISA", HSA_STATUS_ERROR_INVALID_ISA},
    {"HSA_STATUS_ERROR_INVALID_CODE_OBJECT", HSA_STATUS_ERROR_INVALID_CODE_OBJECT},
    {"HSA_STATUS_ERROR_EXCEPTION", HSA_STATUS_ERROR_EXCEPTION},
    {"HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION", (hsa_status_t)HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION},
    {"HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION",
     (hsa_status_t)HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION},
    {"HSA_STATUS_ERROR_MEMORY_FAULT", (hsa_status_t)HSA_STATUS_ERROR_MEMORY_FAULT},
};

static bool read_queue_error(ctx_t* ctx, const softhsa_json_t* v, hsa_status_t* out) {
  char name[SOFTHSA_NAME_MAX];
  if (!read_string(ctx, v, name, sizeof(name))) return false;
  for (size_t i = 0; i < sizeof(kQueueErrors) / sizeof(kQueueErrors[0]); ++i) {
    if (!strcmp(name, kQueueErrors[i].name)) {
      *out = kQueueErrors[i].status;
      return true;
    }
  }
  return fail(ctx, "queue_error_status", "not a queue error status (HSA_STATUS_ERROR_EXCEPTION, "
              "HSA_STATUS_ERROR_MEMORY_FAULT, ...)");
}

/* Reads a "faults" object into `faults`; keys it does not name keep their value. */
static bool read_faults(ctx_t* ctx, const softhsa_json_t* obj, softhsa_faults_t* faults) {
  if (!expect(ctx, obj, SOFTHSA_JSON_OBJECT)) return false;
  size_t base = strlen(ctx->path);
  snprintf(ctx->path + base, sizeof(ctx->path) - base, "%sfaults", base ? "." : "");
  bool ok = true;
  for (const softhsa_json_t* m = obj->child; m && ok; m = m->next) {
    if (!strcmp(m->key, "queue_error_after_packets"))
      ok = read_u64(ctx, m, &faults->queue_error_after_packets);
    else if (!strcmp(m->key, "queue_error_status"))
      ok = read_queue_error(ctx, m, &faults->queue_error_status);
    else ok = fail(ctx, m->key, "unknown key (known: queue_error_after_packets, "
                   "queue_error_status)");
  }
  if (ok) ctx->path[base] = '\0';
  return ok;
}

/* ---- agents ---- */

typedef struct {
  const char* processor;
  const char* product_name;
  uint32_t chip_id;
  uint32_t compute_units;
} known_gpu_t;

static const known_gpu_t kKnownGpus[] = {
    {"gfx942", "AMD Instinct MI300X", 0x74A1, 304},
    {"gfx950", "AMD Instinct MI355X", 0x75A3, 256},
    {"gfx90a", "AMD Instinct MI210", 0x740F, 104},
    {"gfx1100", "Radeon RX 7900 XTX", 0x744C, 96},
    {"gfx1201", "AMD Radeon RX 9070 XT", 0x7550, 64},
};

/* The processor part of an ISA name: "amdgcn-amd-amdhsa--gfx942:sramecc+" -> "gfx942". */
static void isa_processor(const char* isa, char* out, size_t size) {
  const size_t prefix = strlen(ISA_PREFIX);
  const char* p = strncmp(isa, ISA_PREFIX, prefix) == 0 ? isa + prefix : isa;
  size_t n = strcspn(p, ":");
  if (n >= size) n = size - 1;
  memcpy(out, p, n);
  out[n] = '\0';
}

static void gpu_defaults(softhsa_agent_t* agent, uint32_t config_index) {
  memset(agent, 0, sizeof(*agent));
  agent->is_gpu = true;
  strcpy(agent->vendor_name, "AMD");
  snprintf(agent->uuid, sizeof(agent->uuid), "GPU-%016" PRIx64,
           UINT64_C(0x5f0ff7a1e0000000) + config_index);
  agent->wavefront_size = 0; /* derived from the ISA after reading */
  agent->simds_per_cu = 4;
  agent->max_waves_per_cu = 32;
  agent->shader_engines = 4;
  agent->shader_arrays_per_se = 2;
  agent->bdfid = (config_index + 1) << 8; /* bus N+1, device 0, function 0 */
  agent->max_clock_mhz = 2100;
  agent->pool_count = 2;
  pool_defaults(&agent->pools[0], HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, 64 * GiB, false);
  pool_defaults(&agent->pools[1], HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED, 64 * GiB, false);
}

static void cpu_defaults(softhsa_agent_t* agent, uint32_t config_index) {
  memset(agent, 0, sizeof(*agent));
  strcpy(agent->name, "AMD EPYC 9654");
  strcpy(agent->vendor_name, "CPU");
  strcpy(agent->uuid, "CPU-XX");
  agent->node = config_index;
  agent->compute_units = 192;
  agent->max_clock_mhz = 2400;
  agent->pool_count = 2;
  pool_defaults(&agent->pools[0],
                HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED |
                    HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,
                1024 * GiB, true);
  pool_defaults(&agent->pools[1], HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, 1024 * GiB,
                true);
}

/* Fills what the GPU's keys did not give from its ISA: name/ISA from each other, wavefront size
 * (64 on gfx9, else 32), and the product name, chip id and CU count of a known chip. */
static bool gpu_finish(ctx_t* ctx, softhsa_agent_t* agent, const char* isa, uint32_t cpu_count,
                       uint32_t config_index, bool node_given) {
  char full_isa[SOFTHSA_NAME_MAX];
  if (isa[0]) {
    if (strncmp(isa, ISA_PREFIX, strlen(ISA_PREFIX)) != 0) {
      return fail(ctx, "isa", "must start with " ISA_PREFIX);
    }
    strcpy(full_isa, isa);
  } else if (agent->name[0]) {
    if (strlen(agent->name) + strlen(ISA_PREFIX) >= sizeof(full_isa)) {
      return fail(ctx, "name", "too long");
    }
    strcpy(full_isa, ISA_PREFIX);
    strcat(full_isa, agent->name);
  } else {
    strcpy(full_isa, ISA_PREFIX "gfx942:sramecc+:xnack-");
  }
  char processor[SOFTHSA_NAME_MAX];
  isa_processor(full_isa, processor, sizeof(processor));
  if (!agent->name[0]) strcpy(agent->name, processor);
  if (!agent->wavefront_size) agent->wavefront_size = strncmp(processor, "gfx9", 4) == 0 ? 64 : 32;
  if (agent->wavefront_size != 32 && agent->wavefront_size != 64) {
    return fail(ctx, "wavefront_size", "must be 32 or 64");
  }
  for (size_t i = 0; i < sizeof(kKnownGpus) / sizeof(kKnownGpus[0]); ++i) {
    if (strcmp(kKnownGpus[i].processor, processor) != 0) continue;
    if (!agent->product_name[0]) strcpy(agent->product_name, kKnownGpus[i].product_name);
    if (!agent->chip_id) agent->chip_id = kKnownGpus[i].chip_id;
    if (!agent->compute_units) agent->compute_units = kKnownGpus[i].compute_units;
  }
  if (!agent->product_name[0]) strcpy(agent->product_name, "AMD Radeon Graphics");
  if (!agent->compute_units) agent->compute_units = 64;
  if (!node_given) agent->node = cpu_count + config_index;
  /* The ISA pointer is resolved once the visible GPUs are known; stash the name meanwhile. */
  strcpy(agent->isa_name_pending, full_isa);
  return true;
}

static bool read_agent(ctx_t* ctx, const softhsa_json_t* obj, softhsa_agent_t* agent,
                       uint32_t cpu_count, uint32_t config_index) {
  if (!expect(ctx, obj, SOFTHSA_JSON_OBJECT)) return false;
  bool gpu = agent->is_gpu;
  char isa[SOFTHSA_NAME_MAX] = "";
  bool node_given = false;
  for (const softhsa_json_t* m = obj->child; m; m = m->next) {
    const char* k = m->key;
    bool ok;
    if (!strcmp(k, "name")) ok = read_string(ctx, m, agent->name, sizeof(agent->name));
    else if (!strcmp(k, "vendor_name"))
      ok = read_string(ctx, m, agent->vendor_name, sizeof(agent->vendor_name));
    else if (!strcmp(k, "node")) ok = node_given = read_u32(ctx, m, &agent->node);
    else if (!strcmp(k, "compute_units")) ok = read_u32(ctx, m, &agent->compute_units);
    else if (!strcmp(k, "pools")) ok = read_pools(ctx, m, agent);
    else if (!gpu) ok = fail(ctx, k, "unknown key");
    else if (!strcmp(k, "isa")) ok = read_string(ctx, m, isa, sizeof(isa));
    else if (!strcmp(k, "uuid")) ok = read_string(ctx, m, agent->uuid, sizeof(agent->uuid));
    else if (!strcmp(k, "product_name"))
      ok = read_string(ctx, m, agent->product_name, sizeof(agent->product_name));
    else if (!strcmp(k, "chip_id")) ok = read_u32(ctx, m, &agent->chip_id);
    else if (!strcmp(k, "wavefront_size")) ok = read_u32(ctx, m, &agent->wavefront_size);
    else if (!strcmp(k, "simds_per_cu")) ok = read_u32(ctx, m, &agent->simds_per_cu);
    else if (!strcmp(k, "max_waves_per_cu")) ok = read_u32(ctx, m, &agent->max_waves_per_cu);
    else if (!strcmp(k, "shader_engines")) ok = read_u32(ctx, m, &agent->shader_engines);
    else if (!strcmp(k, "bdfid")) ok = read_u32(ctx, m, &agent->bdfid);
    else if (!strcmp(k, "domain")) ok = read_u32(ctx, m, &agent->domain);
    else if (!strcmp(k, "asic_revision")) ok = read_u32(ctx, m, &agent->asic_revision);
    else if (!strcmp(k, "nearest_cpu")) ok = read_u32(ctx, m, &agent->nearest_cpu_index);
    else if (!strcmp(k, "faults")) ok = read_faults(ctx, m, &agent->faults);
    else ok = fail(ctx, k, "unknown key");
    if (!ok) return false;
  }
  if (!gpu) return true;
  if (strncmp(agent->uuid, "GPU-", 4) != 0) return fail(ctx, "uuid", "must start with GPU-");
  if (agent->nearest_cpu_index >= cpu_count && cpu_count) {
    return fail(ctx, "nearest_cpu", "no such CPU");
  }
  return gpu_finish(ctx, agent, isa, cpu_count, config_index, node_given);
}

/* Reads `agents` or `cpus`; NULL array -> one default agent. */
static bool read_agent_list(ctx_t* ctx, const softhsa_json_t* array, bool gpu, softhsa_agent_t* out,
                            uint32_t* count, uint32_t cpu_count) {
  const char* key = gpu ? "agents" : "cpus";
  *count = 0;
  if (array && !expect(ctx, array, SOFTHSA_JSON_ARRAY)) return false;
  const softhsa_json_t* item = array ? array->child : NULL;
  uint32_t wanted = array ? 0 : 1;
  for (const softhsa_json_t* i = item; i; i = i->next) wanted++;
  if (wanted > SOFTHSA_AGENT_MAX / 2) return fail(ctx, key, "too many agents");
  for (uint32_t n = 0; n < wanted; ++n) {
    softhsa_agent_t* agent = &out[n];
    if (gpu) gpu_defaults(agent, n);
    else cpu_defaults(agent, n);
    if (gpu) agent->faults = ctx->faults;
    snprintf(ctx->path, sizeof(ctx->path), "%s[%u]", key, n);
    bool ok = item ? read_agent(ctx, item, agent, cpu_count, n)
                   : (!gpu || gpu_finish(ctx, agent, "", cpu_count, n, false));
    if (!ok) return false;
    if (item) item = item->next;
  }
  ctx->path[0] = '\0';
  *count = wanted;
  return true;
}

/* ---- ROCR_VISIBLE_DEVICES (ROCr's RvdFilter, core/runtime/amd_filter_device.cpp) ---- */

/* A UUID token matches a device whose UUID starts with it (compared upper-cased, 5..20 characters);
 * it must match exactly one device. */
static int find_by_uuid(const softhsa_agent_t* gpus, uint32_t count, const char* token) {
  size_t length = strlen(token);
  if (length < 5 || length > 20) return -1;
  int found = -1;
  for (uint32_t i = 0; i < count; ++i) {
    if (strncasecmp(gpus[i].uuid, token, length) != 0) continue;
    if (found != -1) return -1; /* ambiguous */
    found = (int)i;
  }
  return found;
}

/* An index token is a whole C integer literal (strtol base 0: decimal, 0x hex, 0 octal). */
static int find_by_index(uint32_t count, const char* token) {
  char* end = NULL;
  errno = 0;
  long index = strtol(token, &end, 0);
  if (end == token || *end != '\0' || errno != 0 || index < 0 || index >= (long)count) return -1;
  return (int)index;
}

/* Copies the next comma-separated token (trimmed, upper-cased) into `out`; returns the rest of the
 * list, or NULL after the last token. */
static const char* next_token(const char* list, char* out, size_t size) {
  const char* comma = strchr(list, ',');
  size_t length = comma ? (size_t)(comma - list) : strlen(list);
  while (length && isspace((unsigned char)*list)) list++, length--;
  while (length && isspace((unsigned char)list[length - 1])) length--;
  if (length >= size) length = size - 1;
  for (size_t i = 0; i < length; ++i) out[i] = (char)toupper((unsigned char)list[i]);
  out[length] = '\0';
  return comma ? comma + 1 : NULL;
}

/* Writes the order of visible GPUs (indices into `gpus`) and returns how many. At most `count`
 * tokens are read; an empty, unknown, ambiguous, out-of-range or repeated token ends the list. */
static uint32_t visible_order(const softhsa_agent_t* gpus, uint32_t count, const char* visible,
                              uint32_t* order) {
  if (!visible) {
    for (uint32_t i = 0; i < count; ++i) order[i] = i;
    return count;
  }
  uint32_t n = 0;
  const char* rest = visible[0] ? visible : NULL; /* set but empty: no GPU */
  for (uint32_t t = 0; rest && t < count; ++t) {
    char token[64];
    rest = next_token(rest, token, sizeof(token));
    int index = token[0] == 'G' ? find_by_uuid(gpus, count, token) : find_by_index(count, token);
    if (index < 0) break;
    bool seen = false;
    for (uint32_t j = 0; j < n; ++j) seen |= order[j] == (uint32_t)index;
    if (seen) break;
    order[n++] = (uint32_t)index;
  }
  return n;
}

/* ---- assembly ---- */

static softhsa_isa_t* intern_isa(softhsa_system_t* system, const char* name) {
  for (uint32_t i = 0; i < system->isa_count; ++i) {
    if (strcmp(system->isas[i].name, name) == 0) return &system->isas[i];
  }
  softhsa_isa_t* isa = &system->isas[system->isa_count++];
  strcpy(isa->name, name);
  return isa;
}

static void assemble(softhsa_system_t* system, const softhsa_agent_t* cpus, uint32_t cpu_count,
                     const softhsa_agent_t* gpus, const uint32_t* order, uint32_t gpu_count) {
  for (uint32_t i = 0; i < cpu_count; ++i) {
    system->agents[i] = cpus[i];
    system->agents[i].index = i;
  }
  for (uint32_t i = 0; i < gpu_count; ++i) {
    softhsa_agent_t* agent = &system->agents[cpu_count + i];
    *agent = gpus[order[i]];
    agent->index = i;
    agent->isa = intern_isa(system, agent->isa_name_pending);
    agent->nearest_cpu = cpu_count ? &system->agents[agent->nearest_cpu_index] : NULL;
  }
  system->agent_count = cpu_count + gpu_count;
  for (uint32_t a = 0; a < system->agent_count; ++a) {
    softhsa_agent_t* agent = &system->agents[a];
    for (uint32_t p = 0; p < agent->pool_count; ++p) {
      agent->pools[p].owner = agent;
      agent->pools[p].region.pool = &agent->pools[p];
      agent->pools[p].used = 0;
    }
  }
}

static char* read_file(const char* path, size_t* length, char* error, size_t error_size) {
  FILE* file = fopen(path, "rb");
  if (!file) {
    snprintf(error, error_size, "cannot open: %s", strerror(errno));
    return NULL;
  }
  char* text = NULL;
  size_t size = 0;
  char chunk[4096];
  size_t got;
  while ((got = fread(chunk, 1, sizeof(chunk), file)) > 0) {
    char* grown = realloc(text, size + got + 1);
    if (!grown) break;
    text = grown;
    memcpy(text + size, chunk, got);
    size += got;
  }
  fclose(file);
  if (!text) text = calloc(1, 1);
  *length = size;
  return text;
}

static bool read_document(ctx_t* ctx, const softhsa_json_t* root, softhsa_system_t* system,
                          const char* visible) {
  const softhsa_json_t* agents = NULL;
  const softhsa_json_t* cpus_json = NULL;
  const softhsa_json_t* faults = NULL;
  if (root) {
    if (!expect(ctx, root, SOFTHSA_JSON_OBJECT)) return false;
    for (const softhsa_json_t* m = root->child; m; m = m->next) {
      if (!strcmp(m->key, "agents")) agents = m;
      else if (!strcmp(m->key, "cpus")) cpus_json = m;
      else if (!strcmp(m->key, "log")) {
        if (!expect(ctx, m, SOFTHSA_JSON_STRING)) return false;
        system->log_path = strdup(m->string);
      } else if (!strcmp(m->key, "faults")) faults = m;
      else return fail(ctx, m->key, "unknown key (known: agents, cpus, log, faults)");
    }
  }
  if (faults && !read_faults(ctx, faults, &ctx->faults)) return false;
  static softhsa_agent_t cpus[SOFTHSA_AGENT_MAX / 2];
  static softhsa_agent_t gpus[SOFTHSA_AGENT_MAX / 2];
  uint32_t cpu_count = 0, gpu_count = 0;
  if (!read_agent_list(ctx, cpus_json, false, cpus, &cpu_count, 0)) return false;
  if (!read_agent_list(ctx, agents, true, gpus, &gpu_count, cpu_count)) return false;
  uint32_t order[SOFTHSA_AGENT_MAX / 2];
  uint32_t visible_count = visible_order(gpus, gpu_count, visible, order);
  assemble(system, cpus, cpu_count, gpus, order, visible_count);
  return true;
}

softhsa_system_t* softhsa_config_load(const char* path, const char* visible, char* error,
                                      size_t error_size) {
  softhsa_system_t* system = calloc(1, sizeof(*system));
  if (!system) {
    snprintf(error, error_size, "out of memory");
    return NULL;
  }
  ctx_t ctx = {error, error_size, "", {UINT64_MAX, HSA_STATUS_ERROR_EXCEPTION}};
  softhsa_json_t* root = NULL;
  bool ok = true;
  if (path && path[0]) {
    size_t length = 0;
    char* text = read_file(path, &length, error, error_size);
    ok = text != NULL;
    if (ok) {
      root = softhsa_json_parse(text, length, error, error_size);
      ok = root != NULL;
    }
    free(text);
  }
  ok = ok && read_document(&ctx, root, system, visible);
  softhsa_json_free(root);
  if (!ok) {
    softhsa_config_free(system);
    return NULL;
  }
  return system;
}

void softhsa_config_free(softhsa_system_t* system) {
  if (!system) return;
  free(system->log_path);
  free(system);
}

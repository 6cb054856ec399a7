/* softhsa signals: an hsa_signal_t handle is the address of a 64-byte amd_signal_t
 * (amd_hsa_signal.h: kind @0, value @8, start_ts @32, end_ts @40), as in ROCr, so a driver may read
 * the value and the dispatch timestamps straight from memory.
 *
 * Every operation is a real __atomic builtin with the ordering its name says (scacquire = acquire,
 * screlease = release, scacq_screl = acq_rel). Wake-ups: one process-wide mutex and condition
 * variable. A waiter registers (g_waiters), then re-checks its predicate under the mutex; a writer
 * changes the value, then broadcasts if anyone is registered. Because both sides use seq_cst on the
 * value and the counter, a change is never missed; waits still wake at least every millisecond so
 * writes that bypass the API (a driver storing into amd_signal_t.value) are noticed. The "silent"
 * stores skip the broadcast, as the HSA spec allows. timeout_hint is in timestamp ticks (1 ns). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "softhsa_core.h"

#define SIGNAL_MAGIC UINT64_C(0x736f66747369676e) /* "softsign" */
#define POLL_NS 1000000u

typedef struct {
  amd_signal_t amd; /* first: the handle is its address */
  uint64_t magic;
} softhsa_signal_t;

_Static_assert(sizeof(amd_signal_t) == 64, "amd_signal_t is 64 bytes");

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond;
static pthread_once_t g_cond_once = PTHREAD_ONCE_INIT;
static uint32_t g_waiters;

static void init_cond(void) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&g_cond, &attr);
  pthread_condattr_destroy(&attr);
}

/* ---- wake-ups ---- */

void softhsa_signal_notify(void) {
  if (__atomic_load_n(&g_waiters, __ATOMIC_SEQ_CST) == 0) return;
  pthread_once(&g_cond_once, init_cond);
  pthread_mutex_lock(&g_mutex);
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_mutex);
}

uint64_t softhsa_deadline_after(uint64_t timeout_ticks) {
  uint64_t now = softhsa_now_ticks();
  return timeout_ticks > UINT64_MAX - now ? UINT64_MAX : now + timeout_ticks;
}

bool softhsa_wait_until(bool (*ready)(void* context), void* context, uint64_t deadline_ticks) {
  if (ready(context)) return true;
  pthread_once(&g_cond_once, init_cond);
  __atomic_add_fetch(&g_waiters, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_lock(&g_mutex);
  bool satisfied;
  while (!(satisfied = ready(context))) {
    uint64_t now = softhsa_now_ticks();
    if (now >= deadline_ticks) break;
    uint64_t until = deadline_ticks - now < POLL_NS ? deadline_ticks : now + POLL_NS;
    struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
    pthread_cond_timedwait(&g_cond, &g_mutex, &ts);
  }
  pthread_mutex_unlock(&g_mutex);
  __atomic_sub_fetch(&g_waiters, 1, __ATOMIC_SEQ_CST);
  return satisfied;
}

bool softhsa_condition_holds(hsa_signal_condition_t condition, int64_t value, int64_t compare) {
  switch (condition) {
    case HSA_SIGNAL_CONDITION_EQ: return value == compare;
    case HSA_SIGNAL_CONDITION_NE: return value != compare;
    case HSA_SIGNAL_CONDITION_LT: return value < compare;
    case HSA_SIGNAL_CONDITION_GTE: return value >= compare;
  }
  return false;
}

/* ---- handles ---- */

static volatile int64_t* value_ptr(hsa_signal_t signal) {
  amd_signal_t* amd = (amd_signal_t*)(uintptr_t)signal.handle;
  if (amd->kind == AMD_SIGNAL_KIND_DOORBELL) return (volatile int64_t*)amd->hardware_doorbell_ptr;
  return &amd->value;
}

static hsa_status_t signal_alloc(int64_t kind, hsa_signal_t* out, softhsa_signal_t** made) {
  softhsa_signal_t* s = aligned_alloc(64, (sizeof(softhsa_signal_t) + 63) / 64 * 64);
  if (!s) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memset(s, 0, sizeof(*s));
  s->amd.kind = kind;
  s->magic = SIGNAL_MAGIC;
  *made = s;
  out->handle = (uint64_t)(uintptr_t)&s->amd;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t softhsa_signal_new(int64_t initial, hsa_signal_t* out) {
  softhsa_signal_t* s = NULL;
  hsa_status_t status = signal_alloc(AMD_SIGNAL_KIND_USER, out, &s);
  if (status == HSA_STATUS_SUCCESS) __atomic_store_n(&s->amd.value, initial, __ATOMIC_SEQ_CST);
  return status;
}

hsa_status_t softhsa_doorbell_new(uint64_t* target, hsa_signal_t* out) {
  softhsa_signal_t* s = NULL;
  hsa_status_t status = signal_alloc(AMD_SIGNAL_KIND_DOORBELL, out, &s);
  if (status == HSA_STATUS_SUCCESS) s->amd.hardware_doorbell_ptr = target;
  return status;
}

static softhsa_signal_t* signal_from_handle(hsa_signal_t signal) {
  softhsa_signal_t* s = (softhsa_signal_t*)(uintptr_t)signal.handle;
  return s && s->magic == SIGNAL_MAGIC ? s : NULL;
}

void softhsa_signal_free(hsa_signal_t signal) {
  softhsa_signal_t* s = signal_from_handle(signal);
  if (!s) return;
  s->magic = 0;
  free(s);
}

int64_t softhsa_signal_value(hsa_signal_t signal) {
  return __atomic_load_n(value_ptr(signal), __ATOMIC_ACQUIRE);
}

void softhsa_signal_add(hsa_signal_t signal, int64_t delta) {
  __atomic_add_fetch(value_ptr(signal), delta, __ATOMIC_SEQ_CST);
  softhsa_signal_notify();
}

void softhsa_signal_set(hsa_signal_t signal, int64_t value) {
  __atomic_store_n(value_ptr(signal), value, __ATOMIC_SEQ_CST);
  softhsa_signal_notify();
}

/* ---- creation ---- */

SOFTHSA_EXPORT hsa_status_t hsa_amd_signal_create(hsa_signal_value_t initial_value,
                                                  uint32_t num_consumers,
                                                  const hsa_agent_t* consumers,
                                                  uint64_t attributes, hsa_signal_t* signal) {
  SOFTHSA_REQUIRE_INIT();
  if (!signal || (num_consumers && !consumers)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < num_consumers; ++i) {
    if (!softhsa_agent_from_handle(consumers[i].handle)) return HSA_STATUS_ERROR_INVALID_AGENT;
  }
  if (attributes & ~(uint64_t)(HSA_AMD_SIGNAL_AMD_GPU_ONLY | HSA_AMD_SIGNAL_IPC)) {
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return softhsa_signal_new(initial_value, signal);
}

SOFTHSA_EXPORT hsa_status_t hsa_signal_create(hsa_signal_value_t initial_value,
                                              uint32_t num_consumers, const hsa_agent_t* consumers,
                                              hsa_signal_t* signal) {
  return hsa_amd_signal_create(initial_value, num_consumers, consumers, 0, signal);
}

SOFTHSA_EXPORT hsa_status_t hsa_signal_destroy(hsa_signal_t signal) {
  SOFTHSA_REQUIRE_INIT();
  if (signal.handle == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!signal_from_handle(signal)) return HSA_STATUS_ERROR_INVALID_SIGNAL;
  softhsa_signal_free(signal);
  return HSA_STATUS_SUCCESS;
}

/* ---- value operations, one per memory-order suffix ---- */

#define ORDER_scacquire __ATOMIC_ACQUIRE
#define ORDER_relaxed __ATOMIC_RELAXED
#define ORDER_screlease __ATOMIC_RELEASE
#define ORDER_scacq_screl __ATOMIC_ACQ_REL
/* A failed compare-exchange may not use a release order. */
#define FAIL_ORDER_scacquire __ATOMIC_ACQUIRE
#define FAIL_ORDER_relaxed __ATOMIC_RELAXED
#define FAIL_ORDER_screlease __ATOMIC_RELAXED
#define FAIL_ORDER_scacq_screl __ATOMIC_ACQUIRE

#define DEFINE_LOAD(order)                                                             \
  SOFTHSA_EXPORT hsa_signal_value_t hsa_signal_load_##order(hsa_signal_t signal) {     \
    return __atomic_load_n(value_ptr(signal), ORDER_##order);                          \
  }

#define DEFINE_STORE(order)                                                                   \
  SOFTHSA_EXPORT void hsa_signal_store_##order(hsa_signal_t signal, hsa_signal_value_t value) { \
    __atomic_store_n(value_ptr(signal), value, ORDER_##order);                                \
    softhsa_signal_notify();                                                                  \
  }                                                                                           \
  SOFTHSA_EXPORT void hsa_signal_silent_store_##order(hsa_signal_t signal,                    \
                                                      hsa_signal_value_t value) {             \
    __atomic_store_n(value_ptr(signal), value, ORDER_##order);                                \
  }

#define DEFINE_RMW(name, builtin, order)                                                    \
  SOFTHSA_EXPORT void hsa_signal_##name##_##order(hsa_signal_t signal, hsa_signal_value_t value) { \
    builtin(value_ptr(signal), value, ORDER_##order);                                       \
    softhsa_signal_notify();                                                                \
  }

#define DEFINE_EXCHANGE_CAS(order)                                                          \
  SOFTHSA_EXPORT hsa_signal_value_t hsa_signal_exchange_##order(hsa_signal_t signal,        \
                                                               hsa_signal_value_t value) {  \
    hsa_signal_value_t old = __atomic_exchange_n(value_ptr(signal), value, ORDER_##order);  \
    softhsa_signal_notify();                                                                \
    return old;                                                                             \
  }                                                                                         \
  SOFTHSA_EXPORT hsa_signal_value_t hsa_signal_cas_##order(                                 \
      hsa_signal_t signal, hsa_signal_value_t expected, hsa_signal_value_t value) {         \
    hsa_signal_value_t observed = expected;                                                 \
    __atomic_compare_exchange_n(value_ptr(signal), &observed, value, false, ORDER_##order,  \
                                FAIL_ORDER_##order);                                        \
    softhsa_signal_notify();                                                                \
    return observed;                                                                        \
  }

#define DEFINE_ALL_RMW(order)                          \
  DEFINE_RMW(add, __atomic_add_fetch, order)           \
  DEFINE_RMW(subtract, __atomic_sub_fetch, order)      \
  DEFINE_RMW(and, __atomic_and_fetch, order)           \
  DEFINE_RMW(or, __atomic_or_fetch, order)             \
  DEFINE_RMW(xor, __atomic_xor_fetch, order)           \
  DEFINE_EXCHANGE_CAS(order)

DEFINE_LOAD(scacquire)
DEFINE_LOAD(relaxed)
DEFINE_STORE(relaxed)
DEFINE_STORE(screlease)
DEFINE_ALL_RMW(scacq_screl)
DEFINE_ALL_RMW(scacquire)
DEFINE_ALL_RMW(relaxed)
DEFINE_ALL_RMW(screlease)

/* ---- waits ---- */

typedef struct {
  uint32_t count;
  const hsa_signal_t* signals;
  const hsa_signal_condition_t* conditions;
  const hsa_signal_value_t* values;
  uint32_t satisfied;  /* index of the signal that satisfied its condition */
  int64_t observed;    /* its value then */
} wait_any_t;

static bool any_ready(void* context) {
  wait_any_t* w = context;
  for (uint32_t i = 0; i < w->count; ++i) {
    if (w->signals[i].handle == 0) continue;
    int64_t value = softhsa_signal_value(w->signals[i]);
    if (softhsa_condition_holds(w->conditions[i], value, w->values[i])) {
      w->satisfied = i;
      w->observed = value;
      return true;
    }
  }
  return false;
}

static hsa_signal_value_t wait_one(hsa_signal_t signal, hsa_signal_condition_t condition,
                                   hsa_signal_value_t compare_value, uint64_t timeout_hint) {
  wait_any_t w = {1, &signal, &condition, &compare_value, 0, 0};
  if (softhsa_wait_until(any_ready, &w, softhsa_deadline_after(timeout_hint))) return w.observed;
  return softhsa_signal_value(signal);
}

SOFTHSA_EXPORT hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t signal,
                                                            hsa_signal_condition_t condition,
                                                            hsa_signal_value_t compare_value,
                                                            uint64_t timeout_hint,
                                                            hsa_wait_state_t wait_state_hint) {
  (void)wait_state_hint;
  return wait_one(signal, condition, compare_value, timeout_hint);
}

SOFTHSA_EXPORT hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t signal,
                                                          hsa_signal_condition_t condition,
                                                          hsa_signal_value_t compare_value,
                                                          uint64_t timeout_hint,
                                                          hsa_wait_state_t wait_state_hint) {
  (void)wait_state_hint;
  return wait_one(signal, condition, compare_value, timeout_hint);
}

SOFTHSA_EXPORT uint32_t hsa_amd_signal_wait_any(uint32_t signal_count, hsa_signal_t* signals,
                                                hsa_signal_condition_t* conds,
                                                hsa_signal_value_t* values, uint64_t timeout_hint,
                                                hsa_wait_state_t wait_hint,
                                                hsa_signal_value_t* satisfying_value) {
  (void)wait_hint;
  if (signal_count == 0 || !signals || !conds || !values) return UINT32_MAX;
  wait_any_t w = {signal_count, signals, conds, values, 0, 0};
  if (!softhsa_wait_until(any_ready, &w, softhsa_deadline_after(timeout_hint))) return UINT32_MAX;
  if (satisfying_value) *satisfying_value = w.observed;
  return w.satisfied;
}

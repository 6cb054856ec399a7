/* softhsa queues: user-mode AQL queues as real ring buffers, each consumed by one thread.
 *
 * hsa_queue_create returns the hsa_queue_t at the start of a 256-byte, 64-aligned amd_queue_t
 * (amd_hsa_queue.h), so the write and read indices are amd_queue_t.write_dispatch_id (@56) and
 * read_dispatch_id (@128) and a driver may use them directly, as IREE does. The ring holds `size`
 * 64-byte packets, every header INVALID until the producer publishes it. The doorbell is a
 * doorbell-kind signal whose value is also reachable through amd_signal_t.hardware_doorbell_ptr.
 *
 * The packet processor (one thread per queue) sleeps until the doorbell is written, then runs
 * packets from read_dispatch_id on while their headers are valid. Like the hardware it needs the
 * doorbell, so a forgotten doorbell shows up as a hang. It runs packets strictly one at a time,
 * so the barrier bit holds trivially. Per packet: acquire fence; execute (kernel dispatch -> the
 * loader half; barrier-AND / -OR / AMD BARRIER_VALUE -> wait on their signals); release fence; set
 * the header back to INVALID; advance read_dispatch_id (release); with profiling on, write the
 * start/end ticks into the completion amd_signal_t; decrement the completion signal. A packet it
 * cannot run (AGENT_DISPATCH, an unknown type or vendor format: INVALID_PACKET_FORMAT; a dispatch
 * the loader rejects: HSA_STATUS_ERROR_EXCEPTION) calls the error callback once, sets
 * queue_inactive_signal to the status, and stops the queue. An injected fault (the agent's
 * faults.queue_error_after_packets, config.c) takes the same path in place of the packet it
 * names, with the configured status: the packet is not run and its completion signal is left. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "softhsa_core.h"

#define MIN_PACKETS 64u
#define MAX_PACKETS 131072u
#define PACKET_TYPE(header) ((header) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1))
#define AMD_FORMAT_BARRIER_VALUE 2

_Static_assert(sizeof(amd_queue_t) == 256, "amd_queue_t is 256 bytes");
_Static_assert(offsetof(amd_queue_t, write_dispatch_id) == 56, "write_dispatch_id @56");
_Static_assert(offsetof(amd_queue_t, read_dispatch_id) == 128, "read_dispatch_id @128");

typedef void (*queue_callback_t)(hsa_status_t status, hsa_queue_t* source, void* data);

typedef struct softhsa_queue {
  amd_queue_t amd; /* first: hsa_queue_t* is its address */
  struct softhsa_queue* next; /* live-queue list, guarded by g_mutex */
  softhsa_agent_t* agent;
  queue_callback_t callback;
  void* callback_data;
  uint8_t* ring;
  uint64_t doorbell_value; /* the doorbell signal's value; UINT64_MAX = never rung */
  /* Packet-processor state (queue thread only): asleep until the doorbell value differs from the
   * one it read when it last found no packet. */
  bool awake;
  uint64_t doorbell_when_idle;
  uint64_t packets_run; /* for the injected fault */
  int stop;                /* set by destroy / inactivate / shut-down */
  pthread_t thread;
} softhsa_queue_t;

typedef enum { RAN, STOPPED, FAILED } outcome_t;

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static softhsa_queue_t* g_queues;
static uint64_t g_next_id;

/* ---- the packet processor ---- */

static bool stopping(const softhsa_queue_t* q) {
  return __atomic_load_n(&q->stop, __ATOMIC_ACQUIRE);
}

static uint8_t* slot(softhsa_queue_t* q, uint64_t id) {
  return q->ring + (id & (q->amd.hsa_queue.size - 1)) * 64;
}

/* Like a command processor: once woken by a doorbell write it runs every valid packet, and it goes
 * back to sleep at the first INVALID header. Any change of the doorbell value wakes it (producers of
 * a MULTI queue may ring out of order, so the value itself is not a limit). The doorbell is read
 * before the header: a producer publishes the header before ringing, so a sleep decided on an
 * INVALID header always compares against a doorbell value from before that ring. */
static bool packet_ready(void* context) {
  softhsa_queue_t* q = context;
  if (stopping(q)) return true;
  uint64_t doorbell = __atomic_load_n(&q->doorbell_value, __ATOMIC_ACQUIRE);
  uint64_t id = __atomic_load_n(&q->amd.read_dispatch_id, __ATOMIC_RELAXED);
  uint16_t header = __atomic_load_n((uint16_t*)slot(q, id), __ATOMIC_ACQUIRE);
  if (!q->awake && doorbell == q->doorbell_when_idle) return false;
  q->awake = PACKET_TYPE(header) != HSA_PACKET_TYPE_INVALID;
  if (!q->awake) q->doorbell_when_idle = doorbell;
  return q->awake;
}

typedef struct {
  softhsa_queue_t* queue;
  const uint8_t* packet;
} barrier_wait_t;

static bool barrier_ready(void* context) {
  barrier_wait_t* w = context;
  if (stopping(w->queue)) return true;
  const uint8_t* p = w->packet;
  switch (PACKET_TYPE(*(const uint16_t*)p)) {
    case HSA_PACKET_TYPE_BARRIER_AND:
    case HSA_PACKET_TYPE_BARRIER_OR: {
      const hsa_barrier_and_packet_t* b = (const hsa_barrier_and_packet_t*)p;
      bool is_and = PACKET_TYPE(b->header) == HSA_PACKET_TYPE_BARRIER_AND;
      bool any_signal = false;
      for (int i = 0; i < 5; ++i) {
        if (b->dep_signal[i].handle == 0) continue;
        any_signal = true;
        bool zero = softhsa_signal_value(b->dep_signal[i]) == 0;
        if (is_and && !zero) return false;
        if (!is_and && zero) return true;
      }
      return is_and || !any_signal; /* OR with only null signals completes at once */
    }
    default: {
      const hsa_amd_barrier_value_packet_t* b = (const hsa_amd_barrier_value_packet_t*)p;
      if (b->signal.handle == 0) return true;
      int64_t value = softhsa_signal_value(b->signal) & b->mask;
      return softhsa_condition_holds(b->cond, value, b->value);
    }
  }
}

static outcome_t wait_barrier(softhsa_queue_t* q, const uint8_t* packet) {
  barrier_wait_t w = {q, packet};
  softhsa_wait_until(barrier_ready, &w, UINT64_MAX);
  return stopping(q) ? STOPPED : RAN;
}

static outcome_t run_packet(softhsa_queue_t* q, const uint8_t* packet, hsa_status_t* error) {
  uint16_t header = *(const uint16_t*)packet;
  switch (PACKET_TYPE(header)) {
    case HSA_PACKET_TYPE_KERNEL_DISPATCH:
      *error = softhsa_loader_run_dispatch(q->agent, (const hsa_kernel_dispatch_packet_t*)packet);
      return *error == HSA_STATUS_SUCCESS ? RAN : FAILED;
    case HSA_PACKET_TYPE_BARRIER_AND:
    case HSA_PACKET_TYPE_BARRIER_OR:
      return wait_barrier(q, packet);
    case HSA_PACKET_TYPE_VENDOR_SPECIFIC:
      if (packet[2] == AMD_FORMAT_BARRIER_VALUE) return wait_barrier(q, packet);
      break;
    default:
      break;
  }
  *error = HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
  return FAILED;
}

static void fail_queue(softhsa_queue_t* q, hsa_status_t status) {
  softhsa_signal_set(q->amd.queue_inactive_signal, (int64_t)status);
  if (q->callback) q->callback(status, &q->amd.hsa_queue, q->callback_data);
}

static void complete_packet(softhsa_queue_t* q, uint64_t id, hsa_signal_t completion,
                            uint64_t start, uint64_t end) {
  __atomic_store_n((uint16_t*)slot(q, id), (uint16_t)HSA_PACKET_TYPE_INVALID, __ATOMIC_RELEASE);
  __atomic_store_n(&q->amd.read_dispatch_id, id + 1, __ATOMIC_RELEASE);
  if (completion.handle == 0) return;
  uint32_t properties = __atomic_load_n(&q->amd.queue_properties, __ATOMIC_ACQUIRE);
  if (properties & AMD_QUEUE_PROPERTIES_ENABLE_PROFILING) {
    amd_signal_t* amd = (amd_signal_t*)(uintptr_t)completion.handle;
    amd->start_ts = start;
    amd->end_ts = end;
  }
  softhsa_signal_add(completion, -1);
}

static void* queue_main(void* arg) {
  softhsa_queue_t* q = arg;
  for (;;) {
    softhsa_wait_until(packet_ready, q, UINT64_MAX);
    if (stopping(q)) break;
    if (q->packets_run == q->agent->faults.queue_error_after_packets) {
      fail_queue(q, q->agent->faults.queue_error_status);
      break;
    }
    uint64_t id = q->amd.read_dispatch_id;
    uint8_t packet[64] __attribute__((aligned(64)));
    memcpy(packet, slot(q, id), sizeof(packet));
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* acquire fence (any scope) */
    uint64_t start = softhsa_now_ticks();
    hsa_status_t error = HSA_STATUS_SUCCESS;
    outcome_t outcome = run_packet(q, packet, &error);
    if (outcome == STOPPED) break;
    if (outcome == FAILED) {
      fail_queue(q, error);
      break;
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* release fence (any scope) */
    uint64_t end = softhsa_now_ticks();
    complete_packet(q, id, ((const hsa_kernel_dispatch_packet_t*)packet)->completion_signal, start,
                    end);
    q->packets_run++;
  }
  return NULL;
}

/* ---- lifetime ---- */

static softhsa_queue_t* queue_from_handle(const hsa_queue_t* queue) {
  softhsa_queue_t* found = NULL;
  pthread_mutex_lock(&g_mutex);
  for (softhsa_queue_t* q = g_queues; q; q = q->next) {
    if (&q->amd.hsa_queue == queue) found = q;
  }
  pthread_mutex_unlock(&g_mutex);
  return found;
}

static void queue_free(softhsa_queue_t* q) {
  softhsa_signal_free(q->amd.hsa_queue.doorbell_signal); /* no-op on a null handle */
  softhsa_signal_free(q->amd.queue_inactive_signal);
  free(q->ring);
  free(q);
}

static hsa_status_t queue_init(softhsa_queue_t* q, softhsa_agent_t* agent, uint32_t size,
                               hsa_queue_type32_t type) {
  q->agent = agent;
  q->doorbell_value = UINT64_MAX;
  q->doorbell_when_idle = UINT64_MAX;
  q->ring = aligned_alloc(64, (size_t)size * 64);
  if (!q->ring) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memset(q->ring, 0, (size_t)size * 64);
  for (uint32_t i = 0; i < size; ++i) {
    *(uint16_t*)(q->ring + (size_t)i * 64) = HSA_PACKET_TYPE_INVALID;
  }
  hsa_queue_t* h = &q->amd.hsa_queue;
  h->type = type;
  h->features = HSA_QUEUE_FEATURE_KERNEL_DISPATCH;
  h->base_address = q->ring;
  h->size = size;
  hsa_status_t status = softhsa_doorbell_new(&q->doorbell_value, &h->doorbell_signal);
  if (status == HSA_STATUS_SUCCESS) status = softhsa_signal_new(0, &q->amd.queue_inactive_signal);
  q->amd.read_dispatch_id_field_base_byte_offset =
      (uint32_t)offsetof(amd_queue_t, read_dispatch_id);
  q->amd.max_cu_id = agent->compute_units ? agent->compute_units - 1 : 0;
  q->amd.max_wave_id = agent->max_waves_per_cu ? agent->max_waves_per_cu - 1 : 0;
  q->amd.queue_properties = AMD_QUEUE_PROPERTIES_IS_PTR64;
  return status;
}

SOFTHSA_EXPORT hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size,
                                             hsa_queue_type32_t type, queue_callback_t callback,
                                             void* data, uint32_t private_segment_size,
                                             uint32_t group_segment_size, hsa_queue_t** queue) {
  (void)private_segment_size;
  (void)group_segment_size;
  SOFTHSA_REQUIRE_INIT();
  softhsa_agent_t* a = softhsa_agent_from_handle(agent.handle);
  if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!queue) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!a->is_gpu) return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;
  if (type != HSA_QUEUE_TYPE_MULTI && type != HSA_QUEUE_TYPE_SINGLE) {
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  /* ROCr's GpuAgent::QueueCreate: not a power of two or below the minimum -> INVALID_ARGUMENT,
   * above the maximum -> OUT_OF_RESOURCES. */
  if ((size & (size - 1)) != 0 || size < MIN_PACKETS) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (size > MAX_PACKETS) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  softhsa_queue_t* q = aligned_alloc(64, (sizeof(softhsa_queue_t) + 63) / 64 * 64);
  if (!q) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memset(q, 0, sizeof(*q));
  q->callback = callback;
  q->callback_data = data;
  hsa_status_t status = queue_init(q, a, size, type);
  if (status == HSA_STATUS_SUCCESS && pthread_create(&q->thread, NULL, queue_main, q) != 0) {
    status = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  if (status != HSA_STATUS_SUCCESS) {
    queue_free(q);
    return status;
  }
  pthread_mutex_lock(&g_mutex);
  q->amd.hsa_queue.id = g_next_id++;
  q->next = g_queues;
  g_queues = q;
  pthread_mutex_unlock(&g_mutex);
  *queue = &q->amd.hsa_queue;
  return HSA_STATUS_SUCCESS;
}

static void stop_and_free(softhsa_queue_t* q) {
  __atomic_store_n(&q->stop, 1, __ATOMIC_RELEASE);
  softhsa_signal_notify();
  if (pthread_equal(pthread_self(), q->thread)) {
    pthread_detach(q->thread); /* destroyed from its own error callback: it exits right after */
  } else {
    pthread_join(q->thread, NULL);
  }
  queue_free(q);
}

/* Removes `queue` from the live list; NULL when it is not a live queue. */
static softhsa_queue_t* unlink_queue(const hsa_queue_t* queue) {
  softhsa_queue_t* found = NULL;
  pthread_mutex_lock(&g_mutex);
  for (softhsa_queue_t** link = &g_queues; *link; link = &(*link)->next) {
    if (&(*link)->amd.hsa_queue == queue) {
      found = *link;
      *link = found->next;
      break;
    }
  }
  pthread_mutex_unlock(&g_mutex);
  return found;
}

SOFTHSA_EXPORT hsa_status_t hsa_queue_destroy(hsa_queue_t* queue) {
  SOFTHSA_REQUIRE_INIT();
  if (!queue) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  softhsa_queue_t* q = unlink_queue(queue);
  if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
  stop_and_free(q);
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_queue_inactivate(hsa_queue_t* queue) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_queue_t* q = queue ? queue_from_handle(queue) : NULL;
  if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
  __atomic_store_n(&q->stop, 1, __ATOMIC_RELEASE);
  softhsa_signal_notify();
  return HSA_STATUS_SUCCESS;
}

void softhsa_queue_destroy_all(void) {
  pthread_mutex_lock(&g_mutex);
  softhsa_queue_t* list = g_queues;
  g_queues = NULL;
  pthread_mutex_unlock(&g_mutex);
  while (list) {
    softhsa_queue_t* next = list->next;
    stop_and_free(list);
    list = next;
  }
}

/* ---- indices (amd_queue_t fields), one function per memory-order suffix ---- */

#define ORDER_scacquire __ATOMIC_ACQUIRE
#define ORDER_relaxed __ATOMIC_RELAXED
#define ORDER_screlease __ATOMIC_RELEASE
#define ORDER_scacq_screl __ATOMIC_ACQ_REL
#define FAIL_ORDER_scacquire __ATOMIC_ACQUIRE
#define FAIL_ORDER_relaxed __ATOMIC_RELAXED
#define FAIL_ORDER_screlease __ATOMIC_RELAXED
#define FAIL_ORDER_scacq_screl __ATOMIC_ACQUIRE

#define AMD(queue) ((amd_queue_t*)(uintptr_t)(queue))

#define DEFINE_LOADS(order)                                                                  \
  SOFTHSA_EXPORT uint64_t hsa_queue_load_read_index_##order(const hsa_queue_t* queue) {      \
    return __atomic_load_n(&AMD(queue)->read_dispatch_id, ORDER_##order);                    \
  }                                                                                          \
  SOFTHSA_EXPORT uint64_t hsa_queue_load_write_index_##order(const hsa_queue_t* queue) {     \
    return __atomic_load_n(&AMD(queue)->write_dispatch_id, ORDER_##order);                   \
  }

#define DEFINE_STORES(order)                                                                   \
  SOFTHSA_EXPORT void hsa_queue_store_write_index_##order(const hsa_queue_t* queue,            \
                                                          uint64_t value) {                    \
    __atomic_store_n(&AMD(queue)->write_dispatch_id, value, ORDER_##order);                    \
  }                                                                                            \
  SOFTHSA_EXPORT void hsa_queue_store_read_index_##order(const hsa_queue_t* queue,             \
                                                         uint64_t value) {                     \
    __atomic_store_n(&AMD(queue)->read_dispatch_id, value, ORDER_##order);                     \
  }

#define DEFINE_RMWS(order)                                                                     \
  SOFTHSA_EXPORT uint64_t hsa_queue_add_write_index_##order(const hsa_queue_t* queue,          \
                                                            uint64_t value) {                  \
    return __atomic_fetch_add(&AMD(queue)->write_dispatch_id, value, ORDER_##order);           \
  }                                                                                            \
  SOFTHSA_EXPORT uint64_t hsa_queue_cas_write_index_##order(const hsa_queue_t* queue,          \
                                                            uint64_t expected, uint64_t value) { \
    uint64_t observed = expected;                                                              \
    __atomic_compare_exchange_n(&AMD(queue)->write_dispatch_id, &observed, value, false,       \
                                ORDER_##order, FAIL_ORDER_##order);                            \
    return observed;                                                                           \
  }

DEFINE_LOADS(scacquire)
DEFINE_LOADS(relaxed)
DEFINE_STORES(relaxed)
DEFINE_STORES(screlease)
DEFINE_RMWS(scacq_screl)
DEFINE_RMWS(scacquire)
DEFINE_RMWS(relaxed)
DEFINE_RMWS(screlease)

/* ---- profiling ---- */

SOFTHSA_EXPORT hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t* queue, int enable) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_queue_t* q = queue ? queue_from_handle(queue) : NULL;
  if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
  if (enable) {
    __atomic_or_fetch(&q->amd.queue_properties, AMD_QUEUE_PROPERTIES_ENABLE_PROFILING,
                      __ATOMIC_RELEASE);
  } else {
    __atomic_and_fetch(&q->amd.queue_properties, ~(uint32_t)AMD_QUEUE_PROPERTIES_ENABLE_PROFILING,
                       __ATOMIC_RELEASE);
  }
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_amd_profiling_get_dispatch_time(
    hsa_agent_t agent, hsa_signal_t signal, hsa_amd_profiling_dispatch_time_t* time) {
  SOFTHSA_REQUIRE_INIT();
  softhsa_agent_t* a = softhsa_agent_from_handle(agent.handle);
  if (!a || !a->is_gpu) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (signal.handle == 0) return HSA_STATUS_ERROR_INVALID_SIGNAL;
  if (!time) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const amd_signal_t* amd = (const amd_signal_t*)(uintptr_t)signal.handle;
  time->start = __atomic_load_n(&amd->start_ts, __ATOMIC_ACQUIRE);
  time->end = __atomic_load_n(&amd->end_ts, __ATOMIC_ACQUIRE);
  return HSA_STATUS_SUCCESS;
}

SOFTHSA_EXPORT hsa_status_t hsa_amd_profiling_convert_tick_to_system_domain(hsa_agent_t agent,
                                                                            uint64_t agent_tick,
                                                                            uint64_t* system_tick) {
  SOFTHSA_REQUIRE_INIT();
  if (!softhsa_agent_from_handle(agent.handle)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!system_tick) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *system_tick = agent_tick; /* agent and system clocks are the same nanosecond clock */
  return HSA_STATUS_SUCCESS;
}

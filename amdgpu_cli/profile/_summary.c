/* `summary` in one forward pass over a mapped .ireeprof file (reports/summary.py's fast path).
 *
 * The pass walks the record chain and, inside each chunk of a family summary reads, the typed
 * records, keeping only what summary prints: counts per family, a few exact sums, and one small
 * state per physical device (created in the order devices are first seen, which is file order).
 * It decides nothing the exact path (reports/summary_exact.py) would judge differently: at the
 * first thing that path reports as an error (a broken record chain, a torn or mis-sized typed
 * record, a sum past 2**64, more devices than `device_capacity`) it stops and returns
 * SUMMARY_EXACT_PATH, and the caller runs the exact path, which produces IREE's message.
 *
 * Memory and cores: the file is read once, front to back, a window at a time: a helper thread maps
 * each window in one go (MADV_POPULATE_READ, Linux 5.14+) a little ahead of the walk, and the walk
 * lets go (MADV_DONTNEED) of the windows behind it, so the pass holds a few windows of the file
 * however large it is, and mapping pages and reading them use both cores. `data` must be the
 * start of the mapping (page aligned) for the advice to apply; the advice is only advice.
 *
 * Layout facts (record sizes, field offsets) are the ones schema.py's dtypes give; the test
 * suite compares `summary_layout()` with them field by field.
 */
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

enum { SUMMARY_OK = 0, SUMMARY_EXACT_PATH = 1 };

#define SUMMARY_FAMILIES 24

typedef struct {
    uint64_t file_records, session_begin_records, chunk_records, session_end_records;
    uint64_t non_ok_session_end_records, unknown_records, first_non_ok_offset;
    uint64_t unknown_chunks, truncated_chunks, dropped_records;
    uint64_t chunks[SUMMARY_FAMILIES];
    uint64_t records[SUMMARY_FAMILIES];
    uint64_t code_object_bytes, trace_bytes, metric_values, invalid_metric_samples;
    uint64_t invalid_host_execution, host_execution_ns;
    uint64_t invalid_command_region, command_region_ns;
    uint64_t device_count;
} summary_totals_t;

typedef struct {
    uint64_t physical_device_ordinal;
    uint64_t device_records, queue_count, queue_records;
    uint64_t clock_samples, clock_unaligned, first_clock_offset, last_clock_offset;
    uint64_t clock_brackets;
    int64_t min_uncertainty_ns, max_uncertainty_ns;
    uint64_t dispatches, invalid_dispatches, total_ticks, min_ticks, max_ticks;
    uint64_t earliest_start, latest_end;
    uint64_t metric_samples, metric_values, invalid_metric_samples;
} summary_device_t;

/* Families by their index in schema.CONTENT_TYPES. */
enum {
    F_SESSION = 0, F_DEVICES = 1, F_QUEUES = 2, F_CODE_OBJECTS = 4, F_FUNCTIONS = 6,
    F_CLOCKS = 9, F_DISPATCHES = 10, F_HOST_EXECUTION = 13, F_COMMAND_REGIONS = 14,
    F_COUNTER_SETS = 17, F_COUNTERS = 18, F_COUNTER_SAMPLES = 19, F_METRIC_SOURCES = 20,
    F_METRIC_DESCRIPTORS = 21, F_METRIC_SAMPLES = 22, F_TRACES = 23,
};

/* Fixed head size of each family's typed records (0: session, no typed records). */
static const uint32_t RECORD_SIZE[SUMMARY_FAMILIES] = {
    0, 32, 24, 40, 48, 40, 64, 48, 120, 72, 88, 104, 96, 152, 248, 160, 72, 32, 48, 112, 40, 48,
    64, 88,
};

/* Field offsets summary reads (name, family, offset): summary_layout() hands them to the tests. */
#define FIELDS(X)                                                              \
    X(DEVICE_PDO, F_DEVICES, 8) X(DEVICE_QUEUE_COUNT, F_DEVICES, 12)            \
    X(QUEUE_PDO, F_QUEUES, 4)                                                  \
    X(CODE_OBJECT_DATA_LENGTH, F_CODE_OBJECTS, 24)                             \
    X(CLOCK_FLAGS, F_CLOCKS, 4) X(CLOCK_PDO, F_CLOCKS, 8)                       \
    X(CLOCK_HOST_BEGIN, F_CLOCKS, 56) X(CLOCK_HOST_END, F_CLOCKS, 64)           \
    X(DISPATCH_START, F_DISPATCHES, 72) X(DISPATCH_END, F_DISPATCHES, 80)       \
    X(HOST_START, F_HOST_EXECUTION, 104) X(HOST_END, F_HOST_EXECUTION, 112)     \
    X(REGION_START, F_COMMAND_REGIONS, 184) X(REGION_END, F_COMMAND_REGIONS, 192) \
    X(COUNTER_SET_NAME_LENGTH, F_COUNTER_SETS, 28)                             \
    X(COUNTER_BLOCK_NAME_LENGTH, F_COUNTERS, 36)                               \
    X(COUNTER_NAME_LENGTH, F_COUNTERS, 40)                                     \
    X(COUNTER_DESCRIPTION_LENGTH, F_COUNTERS, 44)                              \
    X(SAMPLE_VALUE_COUNT, F_COUNTER_SAMPLES, 104)                              \
    X(SOURCE_NAME_LENGTH, F_METRIC_SOURCES, 36)                                \
    X(DESCRIPTOR_NAME_LENGTH, F_METRIC_DESCRIPTORS, 40)                        \
    X(DESCRIPTOR_DESCRIPTION_LENGTH, F_METRIC_DESCRIPTORS, 44)                 \
    X(METRIC_HOST_BEGIN, F_METRIC_SAMPLES, 24) X(METRIC_HOST_END, F_METRIC_SAMPLES, 32) \
    X(METRIC_PDO, F_METRIC_SAMPLES, 56) X(METRIC_VALUE_COUNT, F_METRIC_SAMPLES, 60) \
    X(TRACE_DATA_LENGTH, F_TRACES, 80)

#define AS_ENUM(name, family, offset) name = offset,
enum { FIELDS(AS_ENUM) };
#undef AS_ENUM

#define METRIC_VALUE_SIZE 24
#define CLOCK_DEVICE_TICK_UNALIGNED (1u << 4)
#define CLOCK_HOST_TIME_BRACKET (1u << 3)

/* Record header fields (schema.RECORD_HEADER). */
#define H_RECORD_LENGTH 0
#define H_PAYLOAD_LENGTH 8
#define H_HEADER_LENGTH 56
#define H_CONTENT_TYPE_LENGTH 60
#define H_NAME_LENGTH 64
#define H_PDO 68
#define H_CHUNK_FLAGS 80
#define H_DROPPED 88
#define H_STATUS 96
#define H_RECORD_TYPE 100
#define H_FLAGS 102
#define HEADER_SIZE 104

static uint64_t u64_at(const uint8_t* p) { uint64_t v; memcpy(&v, p, 8); return v; }
static int64_t i64_at(const uint8_t* p) { int64_t v; memcpy(&v, p, 8); return v; }
static uint32_t u32_at(const uint8_t* p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint16_t u16_at(const uint8_t* p) { uint16_t v; memcpy(&v, p, 2); return v; }

/* a + b into *sum; nonzero when it passes 2**64 - 1. */
static int add_u64(uint64_t* sum, uint64_t b) {
    uint64_t s = *sum + b;
    if (s < b) return 1;
    *sum = s;
    return 0;
}

int summary_layout(uint32_t* families, uint32_t* offsets, uint32_t* sizes, int capacity) {
    int n = 0;
#define AS_ROW(name, family, offset) \
    if (n < capacity) { families[n] = family; offsets[n] = offset; } ++n;
    FIELDS(AS_ROW)
#undef AS_ROW
    for (int i = 0; i < SUMMARY_FAMILIES && i < capacity; ++i) sizes[i] = RECORD_SIZE[i];
    return n;
}

/* The pages of the file, a window at a time. A helper thread maps windows ahead of the walk
 * (MADV_POPULATE_READ), at most PAGER_AHEAD windows past it, so mapping pages (most of the cost
 * of a pass over a large file) and reading them run on two cores; the walk lets go of the windows
 * behind it (MADV_DONTNEED). Without the helper (it could not start), the walk faults pages in. */
#define PAGER_AHEAD 2

typedef struct {
    const uint8_t* data;
    uint64_t length;
    uint64_t window;
    uint64_t released;           /* pages before this offset are let go */
    volatile uint64_t reached;   /* the walk's offset, for the helper (atomic accesses) */
    volatile int done;
    pthread_t helper;
    int helper_started;
} pager_t;

static void* pager_helper(void* arg) {
    pager_t* p = (pager_t*)arg;
    for (uint64_t start = 0; start < p->length; start += p->window) {
        while (!__atomic_load_n(&p->done, __ATOMIC_RELAXED) &&
               start > __atomic_load_n(&p->reached, __ATOMIC_RELAXED) + PAGER_AHEAD * p->window) {
            struct timespec pause = {0, 50000};
            nanosleep(&pause, NULL);
        }
        if (__atomic_load_n(&p->done, __ATOMIC_RELAXED)) break;
        uint64_t end = start + p->window < p->length ? start + p->window : p->length;
        madvise((void*)(p->data + start), end - start, MADV_POPULATE_READ);
    }
    return NULL;
}

static void pager_start(pager_t* p) {
    p->helper_started = p->length > p->window &&
                        pthread_create(&p->helper, NULL, pager_helper, p) == 0;
    if (!p->helper_started) madvise((void*)p->data, p->length, MADV_POPULATE_READ);
}

static void pager_stop(pager_t* p) {
    __atomic_store_n(&p->done, 1, __ATOMIC_RELAXED);
    if (p->helper_started) pthread_join(p->helper, NULL);
    if (p->length > p->released)
        madvise((void*)(p->data + p->released), p->length - p->released, MADV_DONTNEED);
}

/* Called with the offset about to be read: tells the helper, lets go of windows well behind. */
static void pager_reach(pager_t* p, uint64_t offset) {
    __atomic_store_n(&p->reached, offset, __ATOMIC_RELAXED);
    if (offset >= p->released + 2 * p->window) {
        uint64_t upto = (offset - p->window) / p->window * p->window;
        madvise((void*)(p->data + p->released), upto - p->released, MADV_DONTNEED);
        p->released = upto;
    }
}

typedef struct {
    summary_totals_t* t;
    summary_device_t* devices;
    uint64_t capacity;
} state_t;

static summary_device_t* device_of(state_t* s, uint64_t pdo) {
    summary_totals_t* t = s->t;
    for (uint64_t i = 0; i < t->device_count; ++i)
        if (s->devices[i].physical_device_ordinal == pdo) return &s->devices[i];
    if (t->device_count == s->capacity) return NULL;
    summary_device_t* d = &s->devices[t->device_count++];
    memset(d, 0, sizeof(*d));
    d->physical_device_ordinal = pdo;
    return d;
}

/* Bytes a variable record's length fields say follow its head; -1 for families without them. */
static int64_t variable_tail(int family, const uint8_t* r) {
    switch (family) {
        case F_CODE_OBJECTS: return (int64_t)u64_at(r + CODE_OBJECT_DATA_LENGTH);
        case F_COUNTER_SETS: return u32_at(r + COUNTER_SET_NAME_LENGTH);
        case F_COUNTERS:
            return (int64_t)u32_at(r + COUNTER_BLOCK_NAME_LENGTH) + u32_at(r + COUNTER_NAME_LENGTH) +
                   u32_at(r + COUNTER_DESCRIPTION_LENGTH);
        case F_COUNTER_SAMPLES: return 8 * (int64_t)u32_at(r + SAMPLE_VALUE_COUNT);
        case F_METRIC_SOURCES: return u32_at(r + SOURCE_NAME_LENGTH);
        case F_METRIC_DESCRIPTORS:
            return (int64_t)u32_at(r + DESCRIPTOR_NAME_LENGTH) + u32_at(r + DESCRIPTOR_DESCRIPTION_LENGTH);
        case F_METRIC_SAMPLES: return METRIC_VALUE_SIZE * (int64_t)u32_at(r + METRIC_VALUE_COUNT);
        default: return -1;
    }
}

/* Host spans (host execution, command regions): valid when 0 <= start <= end. */
static int host_span(const uint8_t* r, int start_at, int end_at, uint64_t* invalid, uint64_t* total) {
    int64_t start = i64_at(r + start_at), end = i64_at(r + end_at);
    if (start < 0 || end < start) { ++*invalid; return 0; }
    return add_u64(total, (uint64_t)end - (uint64_t)start);
}

/* One typed record of `family` at `r` (record_length `length`, file offset `offset`). */
static int on_record(state_t* s, int family, const uint8_t* r, uint32_t length, uint64_t offset,
                     uint64_t chunk_pdo) {
    summary_totals_t* t = s->t;
    summary_device_t* d;
    int64_t tail = variable_tail(family, r);
    if (tail >= 0 && (uint64_t)tail != (uint64_t)length - RECORD_SIZE[family]) return 1;
    ++t->records[family];
    switch (family) {
        case F_DEVICES:
            if (!(d = device_of(s, u32_at(r + DEVICE_PDO)))) return 1;
            ++d->device_records;
            d->queue_count = u32_at(r + DEVICE_QUEUE_COUNT);
            return 0;
        case F_QUEUES:
            if (!(d = device_of(s, u32_at(r + QUEUE_PDO)))) return 1;
            ++d->queue_records;
            return 0;
        case F_CODE_OBJECTS:
            return add_u64(&t->code_object_bytes, u64_at(r + CODE_OBJECT_DATA_LENGTH));
        case F_CLOCKS: {
            if (!(d = device_of(s, u32_at(r + CLOCK_PDO)))) return 1;
            uint32_t flags = u32_at(r + CLOCK_FLAGS);
            if (d->clock_samples++ == 0) d->first_clock_offset = offset;
            d->last_clock_offset = offset;
            if (flags & CLOCK_DEVICE_TICK_UNALIGNED) ++d->clock_unaligned;
            int64_t begin = i64_at(r + CLOCK_HOST_BEGIN), end = i64_at(r + CLOCK_HOST_END);
            if ((flags & CLOCK_HOST_TIME_BRACKET) && end >= begin) {
                int64_t span = (int64_t)((uint64_t)end - (uint64_t)begin);
                if (d->clock_brackets++ == 0) {
                    d->min_uncertainty_ns = d->max_uncertainty_ns = span;
                } else {
                    if (span < d->min_uncertainty_ns) d->min_uncertainty_ns = span;
                    if (span > d->max_uncertainty_ns) d->max_uncertainty_ns = span;
                }
            }
            return 0;
        }
        case F_DISPATCHES: {
            if (!(d = device_of(s, chunk_pdo))) return 1;
            uint64_t start = u64_at(r + DISPATCH_START), end = u64_at(r + DISPATCH_END);
            ++d->dispatches;
            if (start == 0 || end == 0 || end < start) { ++d->invalid_dispatches; return 0; }
            uint64_t ticks = end - start;
            if (d->dispatches - d->invalid_dispatches == 1) {
                d->min_ticks = d->max_ticks = ticks;
                d->earliest_start = start;
                d->latest_end = end;
            } else {
                if (ticks < d->min_ticks) d->min_ticks = ticks;
                if (ticks > d->max_ticks) d->max_ticks = ticks;
                if (start < d->earliest_start) d->earliest_start = start;
                if (end > d->latest_end) d->latest_end = end;
            }
            return add_u64(&d->total_ticks, ticks);
        }
        case F_HOST_EXECUTION:
            return host_span(r, HOST_START, HOST_END, &t->invalid_host_execution, &t->host_execution_ns);
        case F_COMMAND_REGIONS:
            return host_span(r, REGION_START, REGION_END, &t->invalid_command_region,
                             &t->command_region_ns);
        case F_METRIC_SAMPLES: {
            if (!(d = device_of(s, u32_at(r + METRIC_PDO)))) return 1;
            uint32_t values = u32_at(r + METRIC_VALUE_COUNT);
            int64_t begin = i64_at(r + METRIC_HOST_BEGIN), end = i64_at(r + METRIC_HOST_END);
            int invalid = begin < 0 || end < begin;
            ++d->metric_samples;
            d->invalid_metric_samples += invalid;
            t->invalid_metric_samples += invalid;
            return add_u64(&d->metric_values, values) | add_u64(&t->metric_values, values);
        }
        default:
            return 0;
    }
}

/* The typed records of one chunk's payload (IREE's typed-record walk). */
static int on_payload(state_t* s, pager_t* pager, int family, const uint8_t* data,
                      uint64_t payload, uint64_t length, uint64_t chunk_pdo) {
    uint32_t size = RECORD_SIZE[family];
    if (family == F_TRACES) {  /* one head, then the raw trace bytes to the payload's end */
        const uint8_t* r = data + payload;
        if (length < size || u32_at(r) != size || u64_at(r + TRACE_DATA_LENGTH) != length - size)
            return 1;
        ++s->t->records[family];
        return add_u64(&s->t->trace_bytes, u64_at(r + TRACE_DATA_LENGTH));
    }
    uint64_t o = 0;
    while (o < length) {
        uint64_t remaining = length - o;
        if (remaining < size) return 1;
        pager_reach(pager, payload + o);
        const uint8_t* r = data + payload + o;
        uint32_t record_length = u32_at(r);
        if (record_length < size || record_length > remaining) return 1;
        if (on_record(s, family, r, record_length, payload + o, chunk_pdo)) return 1;
        o += record_length;
    }
    return 0;
}

/* The record chain, and each chunk's typed records. */
static int walk(state_t* s, pager_t* pager, const uint8_t* data, uint64_t length, uint64_t offset,
                const uint8_t* types, const uint32_t* type_lengths, int type_count) {
    summary_totals_t* t = s->t;
    while (offset < length) {
        pager_reach(pager, offset);
        uint64_t remaining = length - offset;
        if (remaining < HEADER_SIZE) return SUMMARY_EXACT_PATH;
        const uint8_t* h = data + offset;
        if (u16_at(h + H_FLAGS) != 0) return SUMMARY_EXACT_PATH;
        uint64_t record_length = u64_at(h + H_RECORD_LENGTH);
        if (record_length > remaining) return SUMMARY_EXACT_PATH;
        uint32_t header_length = u32_at(h + H_HEADER_LENGTH);
        if (header_length < HEADER_SIZE || header_length > record_length) return SUMMARY_EXACT_PATH;
        uint64_t ct_len = u32_at(h + H_CONTENT_TYPE_LENGTH), name_len = u32_at(h + H_NAME_LENGTH);
        uint64_t payload_len = u64_at(h + H_PAYLOAD_LENGTH);
        uint64_t sum = ct_len + name_len + payload_len;
        if (sum < payload_len || sum != record_length - header_length) return SUMMARY_EXACT_PATH;
        ++t->file_records;
        switch (u16_at(h + H_RECORD_TYPE)) {
            case 1: ++t->session_begin_records; break;
            case 3:
                ++t->session_end_records;
                if (u32_at(h + H_STATUS) != 0 && t->non_ok_session_end_records++ == 0)
                    t->first_non_ok_offset = offset;
                break;
            case 2: {
                ++t->chunk_records;
                int family = -1;
                const uint8_t* ct = h + header_length;
                const uint8_t* name = types;
                for (int i = 0; i < type_count; ++i) {
                    if (type_lengths[i] == ct_len && memcmp(name, ct, ct_len) == 0) { family = i; break; }
                    name += type_lengths[i];
                }
                if (u64_at(h + H_CHUNK_FLAGS) & 1) {
                    ++t->truncated_chunks;
                    t->dropped_records += u64_at(h + H_DROPPED);  /* wraps, as IREE's sum does */
                }
                if (family < 1) ++t->unknown_chunks;
                if (family < 0) break;
                ++t->chunks[family];
                if (family == F_SESSION || family >= SUMMARY_FAMILIES) break;
                uint64_t pdo = u32_at(h + H_PDO);
                if (family == F_DISPATCHES && !device_of(s, pdo)) return SUMMARY_EXACT_PATH;
                uint64_t payload = offset + header_length + ct_len + name_len;
                if (on_payload(s, pager, family, data, payload, payload_len, pdo))
                    return SUMMARY_EXACT_PATH;
                break;
            }
            default: ++t->unknown_records; break;
        }
        offset += record_length;
    }
    return SUMMARY_OK;
}

int summarize(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
              const uint32_t* type_lengths, int type_count, uint64_t window,
              summary_totals_t* totals, summary_device_t* devices, uint64_t device_capacity) {
    memset(totals, 0, sizeof(*totals));
    state_t s = {totals, devices, device_capacity};
    pager_t pager = {.data = data, .length = length, .window = window};
    pager_start(&pager);
    int rc = walk(&s, &pager, data, length, offset, types, type_lengths, type_count);
    pager_stop(&pager);
    return rc;
}

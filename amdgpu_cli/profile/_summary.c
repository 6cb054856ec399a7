/* `summary` in one forward pass over a mapped .ireeprof file (reports/summary_native.py).
 *
 * The pass walks the record chain and, inside each chunk of a family summary reads, the typed
 * records, keeping only what summary prints: counts per family, a few exact sums, and one small
 * state per physical device (created in the order devices are first seen, which is file order).
 * It decides nothing the exact path (reports/summary.py) would judge differently: at the
 * first thing that path reports as an error (a broken record chain, a torn or mis-sized typed
 * record, a sum past 2**64, more devices than `device_capacity`) it stops and returns
 * PASS_EXACT_PATH, and the caller runs the exact path, which produces IREE's message.
 *
 * The pass itself (record chain, paging, helper thread) is _pass.c's.
 *
 * Layout facts (record sizes, field offsets) are the ones schema.py's dtypes give; the test
 * suite compares `summary_layout()` with them field by field.
 */
#define SUMMARY_FAMILIES PASS_FAMILIES
_Static_assert(sizeof(((summary_totals_t*)0)->chunks) / sizeof(uint64_t) == SUMMARY_FAMILIES,
               "_scan.h: summary_totals_t counts one slot per family");


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

FIELD_OFFSETS(FIELDS)

#define METRIC_VALUE_SIZE 24

int summary_layout(uint32_t* families, uint32_t* offsets, uint32_t* sizes, int capacity) {
    int n = 0;
    FIELD_ROWS(FIELDS)
    for (int i = 0; i < SUMMARY_FAMILIES && i < capacity; ++i) sizes[i] = RECORD_SIZE[i];
    return n;
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

/* Bytes a variable record's length fields say follow its head, into *tail; 0 for families
 * whose records carry no such fields (fixed families, and functions, which summary only counts). */
static int variable_tail(int family, const uint8_t* r, uint64_t* tail) {
    switch (family) {
        case F_CODE_OBJECTS: *tail = u64_at(r + CODE_OBJECT_DATA_LENGTH); return 1;
        case F_COUNTER_SETS: *tail = u32_at(r + COUNTER_SET_NAME_LENGTH); return 1;
        case F_COUNTERS:
            *tail = (uint64_t)u32_at(r + COUNTER_BLOCK_NAME_LENGTH) + u32_at(r + COUNTER_NAME_LENGTH) +
                    u32_at(r + COUNTER_DESCRIPTION_LENGTH);
            return 1;
        case F_COUNTER_SAMPLES: *tail = 8 * (uint64_t)u32_at(r + SAMPLE_VALUE_COUNT); return 1;
        case F_METRIC_SOURCES: *tail = u32_at(r + SOURCE_NAME_LENGTH); return 1;
        case F_METRIC_DESCRIPTORS:
            *tail = (uint64_t)u32_at(r + DESCRIPTOR_NAME_LENGTH) +
                    u32_at(r + DESCRIPTOR_DESCRIPTION_LENGTH);
            return 1;
        case F_METRIC_SAMPLES:
            *tail = METRIC_VALUE_SIZE * (uint64_t)u32_at(r + METRIC_VALUE_COUNT);
            return 1;
        default: return 0;
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
    uint64_t tail;
    if (variable_tail(family, r, &tail) && tail != (uint64_t)length - RECORD_SIZE[family]) return 1;
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
    for (uint64_t o = 0; o < length;) {
        uint64_t at = payload + o;
        uint32_t record_length;
        const uint8_t* r = pass_typed_next(pager, data, payload, length, size, &o, &record_length);
        if (!r || on_record(s, family, r, record_length, at, chunk_pdo)) return 1;
    }
    return 0;
}

/* One record of the chain. */
static int on_chain_record(void* ctx, pager_t* pager, const uint8_t* data, const uint8_t* h,
                           uint64_t offset, int family, uint64_t payload, uint64_t payload_length) {
    state_t* s = (state_t*)ctx;
    summary_totals_t* t = s->t;
    ++t->file_records;
    switch (u16_at(h + H_RECORD_TYPE)) {
        case RECORD_TYPE_SESSION_BEGIN: ++t->session_begin_records; return 0;
        case RECORD_TYPE_SESSION_END:
            ++t->session_end_records;
            if (u32_at(h + H_STATUS) != 0 && t->non_ok_session_end_records++ == 0)
                t->first_non_ok_offset = offset;
            return 0;
        case RECORD_TYPE_CHUNK: break;
        default: ++t->unknown_records; return 0;
    }
    ++t->chunk_records;
    if (u64_at(h + H_CHUNK_FLAGS) & 1) {
        ++t->truncated_chunks;
        t->dropped_records += u64_at(h + H_DROPPED);  /* wraps, as IREE's sum does */
    }
    if (family < 1) ++t->unknown_chunks;
    if (family < 0) return 0;
    ++t->chunks[family];
    if (family == F_SESSION) return 0;
    uint64_t pdo = u32_at(h + H_PDO);
    if (family == F_DISPATCHES && !device_of(s, pdo)) return 1;
    return on_payload(s, pager, family, data, payload, payload_length, pdo);
}

int summarize(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
              const uint32_t* type_lengths, int type_count, uint64_t window,
              summary_totals_t* totals, summary_device_t* devices, uint64_t device_capacity) {
    memset(totals, 0, sizeof(*totals));
    state_t s = {totals, devices, device_capacity};
    return pass_walk(data, length, offset, types, type_lengths, type_count, window, on_chain_record,
                     &s);
}

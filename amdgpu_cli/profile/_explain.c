/* `explain` in one forward pass over a mapped .ireeprof file (reports/explain_native.py).
 *
 * explain is composed of other reports, and so is its pass: each record goes to
 *   - the reader's record table (less the event chunks: the metadata view), when asked;
 *   - summary's reducer (_summary.c): the health counts and every check IREE's summary pass makes
 *     (record chain, torn or mis-sized typed records, totals past 2**64);
 *   - the dispatch projection (_projection.c), keeping the top dispatches;
 *   - explain's own: queue-operation counts over the queue events, the header device of every
 *     dispatch chunk, and the device memory balances of memory.py's accounting (the high-water
 *     marks and pool waits explain prints).
 *
 * Memory balances, as memory.py keeps them per device: an open adds an event's length, a close
 * takes it away, clamped at zero; the high-water mark is the largest balance after any event.
 * Slab: acquire / release. Pool reserved: reserve with the reservation flag / any release.
 * Pool materialized: any materialize / a flagged release whose reservation (device, allocation,
 * pool) still had a materialization open (count or bytes) before it. Queue in flight: alloca /
 * dealloca. Buffers: allocate / free. Imported buffers: import / unimport (not printed, but its
 * totals are checked like the rest).
 *
 * It declines (PASS_EXACT_PATH) wherever the parts do, when a balance's opened or closed bytes
 * pass 2**64 - 1 (IREE: OUT_OF_RANGE), when more than 64 devices appear in the memory events or
 * dispatch chunks, and when memory runs out; the caller then runs reports/explain.py, which
 * gives IREE's message.
 */

#define EXPLAIN_FIELDS(X)                                                                   \
    X(QE_TYPE, F_QUEUE_EVENTS, 4) X(QE_STRATEGY, F_QUEUE_EVENTS, 12)                         \
    X(QE_STREAM, F_QUEUE_EVENTS, 56) X(QE_PDO, F_QUEUE_EVENTS, 64)                           \
    X(QE_QUEUE, F_QUEUE_EVENTS, 68) X(QE_PAYLOAD, F_QUEUE_EVENTS, 88)                        \
    X(ME_TYPE, F_MEMORY_EVENTS, 4) X(ME_FLAGS, F_MEMORY_EVENTS, 8)                           \
    X(ME_ALLOCATION, F_MEMORY_EVENTS, 32) X(ME_POOL, F_MEMORY_EVENTS, 40)                    \
    X(ME_PDO, F_MEMORY_EVENTS, 64) X(ME_LENGTH, F_MEMORY_EVENTS, 104)

FIELD_OFFSETS(EXPLAIN_FIELDS)

FIELD_LAYOUT(explain_layout, EXPLAIN_FIELDS)

#define EXPLAIN_DEVICES 64
_Static_assert(sizeof(((explain_t*)0)->memory_devices) / sizeof(memory_device_t) == EXPLAIN_DEVICES,
               "_scan.h: explain_t holds EXPLAIN_DEVICES memory devices");
_Static_assert(sizeof(((explain_t*)0)->dispatch_chunk_devices) / sizeof(uint32_t) == EXPLAIN_DEVICES,
               "_scan.h: explain_t holds EXPLAIN_DEVICES dispatch chunk devices");

/* Memory event types and the balances (memory.py DEVICE_BALANCES order). */
enum { SLAB_ACQUIRE = 1, SLAB_RELEASE, POOL_RESERVE, POOL_MATERIALIZE, POOL_RELEASE, POOL_WAIT,
       QUEUE_ALLOCA, QUEUE_DEALLOCA, BUFFER_ALLOCATE, BUFFER_FREE, BUFFER_IMPORT, BUFFER_UNIMPORT };
enum { B_SLAB, B_POOL_RESERVED, B_POOL_MATERIALIZED, B_QUEUE_INFLIGHT, B_BUFFER, B_IMPORTED };
#define QUEUE_EVENT_TYPES 12
#define DEPENDENCY_STRATEGIES 4

static int balance_open(memory_device_t* d, int b, uint64_t length) {
    if (add_u64(&d->open_bytes[b], length)) return 1;
    d->bytes[b] += length;  /* at most the opened total */
    if (d->bytes[b] > d->high_water_bytes[b]) d->high_water_bytes[b] = d->bytes[b];
    return 0;
}

static int balance_close(memory_device_t* d, int b, uint64_t length) {
    if (add_u64(&d->close_bytes[b], length)) return 1;
    d->bytes[b] = length > d->bytes[b] ? 0 : d->bytes[b] - length;
    return 0;
}

static memory_device_t* memory_device(explain_t* e, uint64_t pdo) {
    for (uint64_t i = 0; i < e->memory_device_count; ++i)
        if (e->memory_devices[i].physical_device_ordinal == pdo) return &e->memory_devices[i];
    if (e->memory_device_count == EXPLAIN_DEVICES) return NULL;
    memory_device_t* d = &e->memory_devices[e->memory_device_count++];
    memset(d, 0, sizeof(*d));
    d->physical_device_ordinal = pdo;
    return d;
}

static int on_memory_event(explain_t* e, const uint8_t* r) {
    ++e->memory_events;
    memory_device_t* d = memory_device(e, u32_at(r + ME_PDO));
    if (!d) return 1;
    uint32_t type = u32_at(r + ME_TYPE);
    int reservation = (u32_at(r + ME_FLAGS) & EXPLAIN_MEMORY_POOL_RESERVATION) != 0;
    uint64_t length = u64_at(r + ME_LENGTH);
    switch (type) {
        case SLAB_ACQUIRE: return balance_open(d, B_SLAB, length);
        case SLAB_RELEASE: return balance_close(d, B_SLAB, length);
        case POOL_RESERVE: return reservation ? balance_open(d, B_POOL_RESERVED, length) : 0;
        case POOL_WAIT: ++d->pool_waits; return 0;
        case QUEUE_ALLOCA: return balance_open(d, B_QUEUE_INFLIGHT, length);
        case QUEUE_DEALLOCA: return balance_close(d, B_QUEUE_INFLIGHT, length);
        case BUFFER_ALLOCATE: return balance_open(d, B_BUFFER, length);
        case BUFFER_FREE: return balance_close(d, B_BUFFER, length);
        case BUFFER_IMPORT: return balance_open(d, B_IMPORTED, length);
        case BUFFER_UNIMPORT: return balance_close(d, B_IMPORTED, length);
        case POOL_MATERIALIZE: case POOL_RELEASE: break;
        default: return 0;
    }
    int materialize = type == POOL_MATERIALIZE;
    if (!materialize && balance_close(d, B_POOL_RESERVED, length)) return 1;
    int was_open = 0;
    if (reservation) {  /* the reservation's own materialized count and bytes */
        uint64_t row[5] = {d->physical_device_ordinal, u64_at(r + ME_ALLOCATION),
                           u64_at(r + ME_POOL), 0, 0};
        uint64_t at = key_rows_add(&e->materialized, row, 5, 3);
        if (!at) return 1;
        uint64_t* state = e->materialized.rows + (at - 1) * 5 + 3;  /* count, bytes */
        if (materialize) {
            ++state[0];
            state[1] += length;  /* at most the device's opened total, checked below */
        } else {
            was_open = state[0] != 0 || state[1] != 0;
            state[0] = state[0] ? state[0] - 1 : 0;
            state[1] = length > state[1] ? 0 : state[1] - length;
        }
    }
    if (materialize) return balance_open(d, B_POOL_MATERIALIZED, length);
    return was_open ? balance_close(d, B_POOL_MATERIALIZED, length) : 0;
}

static int on_queue_event(explain_t* e, const uint8_t* r) {
    ++e->queue_events;
    uint64_t key[3] = {u32_at(r + QE_PDO), u32_at(r + QE_QUEUE), u64_at(r + QE_STREAM)};
    if (memcmp(key, e->last_event_queue, sizeof(key)) != 0) {  /* events come in runs per queue */
        if (!key_rows_add(&e->event_queues, key, 3, 3)) return 1;
        memcpy(e->last_event_queue, key, sizeof(key));
    }
    uint32_t type = u32_at(r + QE_TYPE), strategy = u32_at(r + QE_STRATEGY);
    if (type < QUEUE_EVENT_TYPES) {
        ++e->queue_type_counts[type];
        e->queue_type_bytes[type] += u64_at(r + QE_PAYLOAD);  /* wraps, as IREE's counter does */
    }
    if (strategy < DEPENDENCY_STRATEGIES) ++e->strategies[strategy];
    return 0;
}

static int note_chunk_device(explain_t* e, uint32_t pdo) {
    for (uint64_t i = 0; i < e->dispatch_chunk_device_count; ++i)
        if (e->dispatch_chunk_devices[i] == pdo) return 0;
    if (e->dispatch_chunk_device_count == EXPLAIN_DEVICES) return 1;
    e->dispatch_chunk_devices[e->dispatch_chunk_device_count++] = pdo;
    return 0;
}

typedef struct {
    table_t* table;                /* NULL: no record table */
    state_t summary;
    summary_device_t summary_devices[EXPLAIN_DEVICES];
    explain_t* e;
} explain_pass_t;

static int explain_record(void* ctx, pager_t* pager, const uint8_t* data, const uint8_t* h,
                          uint64_t offset, int family, uint64_t payload, uint64_t length) {
    explain_pass_t* x = (explain_pass_t*)ctx;
    explain_t* e = x->e;
    if (x->table && table_record(x->table, pager, data, h, offset, family, payload, length))
        return 1;
    if (on_chain_record(&x->summary, pager, data, h, offset, family, payload, length) ||
        projection_record(&e->projection, pager, data, h, offset, family, payload, length))
        return 1;
    if (u16_at(h + H_RECORD_TYPE) != RECORD_TYPE_CHUNK) return 0;
    if (family == F_DISPATCHES) return note_chunk_device(e, u32_at(h + H_PDO));
    if (family != F_QUEUE_EVENTS && family != F_MEMORY_EVENTS) return 0;
    uint32_t size = RECORD_SIZE[family];
    for (uint64_t o = 0; o < length;) {
        uint32_t record_length;
        const uint8_t* r = pass_typed_next(pager, data, payload, length, size, &o, &record_length);
        if (!r) return 1;
        if (family == F_QUEUE_EVENTS ? on_queue_event(e, r) : on_memory_event(e, r)) return 1;
    }
    return 0;
}

static int explain_pass(const uint8_t* data, uint64_t length, uint64_t* offset,
                        const uint8_t* types, const uint32_t* type_lengths, int type_count,
                        uint64_t window, table_t* table, explain_t* e) {
    explain_pass_t* x = (explain_pass_t*)calloc(1, sizeof(explain_pass_t));
    if (!x) return PASS_EXACT_PATH;
    x->table = table;
    x->summary.t = &e->totals;
    x->summary.devices = x->summary_devices;
    x->summary.capacity = EXPLAIN_DEVICES;
    x->e = e;
    memset(&e->totals, 0, sizeof(e->totals));
    memset(e->projection.last_queue, 0xFF, sizeof(e->projection.last_queue));
    memset(e->last_event_queue, 0xFF, sizeof(e->last_event_queue));
    e->projection.keep_top = 1;
    int rc = pass_walk_from(data, length, offset, types, type_lengths, type_count, window,
                            explain_record, x);
    free(x);
    return rc;
}

/* The events alone (the metadata view was read before: --filter). */
int explain_run(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                const uint32_t* type_lengths, int type_count, uint64_t window, explain_t* e) {
    return explain_pass(data, length, &offset, types, type_lengths, type_count, window, NULL, e);
}

/* The record table (less the `skip` families) and the events in one pass, as projection_scan.
 * PASS_STOPPED: the table is full or the pass declined (`*out_count` < `capacity` tells which). */
int explain_scan(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                 const uint32_t* type_lengths, int type_count, uint64_t window, uint32_t skip,
                 scan_entry_t* out, uint64_t capacity, uint64_t* out_count,
                 uint64_t* next_offset, explain_t* e) {
    table_t table = {out, 0, capacity, skip};
    int rc = explain_pass(data, length, &offset, types, type_lengths, type_count, window, &table, e);
    *out_count = table.count;
    *next_offset = offset;
    return rc;
}

void explain_free(explain_t* e) {
    projection_free(&e->projection);
    key_rows_free(&e->event_queues);
    key_rows_free(&e->materialized);
}

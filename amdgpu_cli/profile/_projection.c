/* The projection reports' aggregate tables (`dispatch`, `executable`, `command`) in one forward
 * pass over a mapped .ireeprof file (reports/projection_native.py).
 *
 * What reports/projection.py computes from whole columns, reduced as the pass goes: device
 * dispatch events (device, queue and stream from their chunk header) and host dispatch spans
 * (host-execution-events of type dispatch) that match `--id` and whose function key the caller
 * allowed (its `--filter` verdict per (device, executable, function), computed from the metadata
 * model) are counted and added to five tables, each a hash table of groups kept in the order of
 * their first event: per function and per command-buffer execution for both domains, per queue
 * submission for device events. A group keeps counts, exact totals, extremes, the last event's
 * workgroup geometry and IREE's running (Welford) mean and squared deviations, in file order.
 * With `keep_events` (--dispatch_events) the matched events are kept instead, each as its row
 * prints it, in file order; projection_events_fit fills in a device's fitted durations after.
 *
 * The pass declines (PASS_EXACT_PATH) at anything reports/projection.py reports as an error: a
 * torn or mis-sized event record, an id-matched event whose queue, function (or, in command
 * mode, command buffer) the metadata does not know, a total past its limit (2**64 - 1 for device
 * ticks, 2**63 - 1 for host ns), a negative host tile duration on a valid span; and when memory
 * runs out. The caller then runs the exact path, which gives IREE's message.
 *
 * The pass itself (record chain, paging, helper thread) is _pass.c's; `projection_free` releases
 * what a run allocated, whatever it returned.
 */

enum {
    TABLE_DEVICE_FUNCTION, TABLE_DEVICE_EXECUTION, TABLE_DEVICE_SUBMISSION, TABLE_HOST_FUNCTION,
    TABLE_HOST_EXECUTION, PROJECTION_TABLES
};
_Static_assert(sizeof(((projection_t*)0)->tables) / sizeof(projection_table_t) == PROJECTION_TABLES,
               "_scan.h: projection_t.tables holds one table per TABLE_*");


#define I64_MAX_U ((uint64_t)INT64_MAX)

/* Field offsets (schema.py's dtypes; checked by the tests through projection_layout). */
#define PROJ_FIELDS(X)                                                                      \
    X(PD_EVENT, F_DISPATCHES, 8) X(PD_COMMAND_INDEX, F_DISPATCHES, 40)                       \
    X(PD_SUBMISSION, F_DISPATCHES, 16) X(PD_COMMAND_BUFFER, F_DISPATCHES, 24)                \
    X(PD_EXECUTABLE, F_DISPATCHES, 32) X(PD_FUNCTION, F_DISPATCHES, 44)                      \
    X(PD_WORKGROUP_COUNT, F_DISPATCHES, 48) X(PD_WORKGROUP_SIZE, F_DISPATCHES, 60)            \
    X(PD_START, F_DISPATCHES, 72) X(PD_END, F_DISPATCHES, 80)                                \
    X(PH_TYPE, F_HOST_EXECUTION, 4) X(PH_SUBMISSION, F_HOST_EXECUTION, 24)                   \
    X(PH_EVENT, F_HOST_EXECUTION, 16) X(PH_COMMAND_INDEX, F_HOST_EXECUTION, 72)              \
    X(PH_COMMAND_BUFFER, F_HOST_EXECUTION, 32) X(PH_EXECUTABLE, F_HOST_EXECUTION, 40)         \
    X(PH_STREAM, F_HOST_EXECUTION, 56) X(PH_PDO, F_HOST_EXECUTION, 64)                       \
    X(PH_QUEUE, F_HOST_EXECUTION, 68) X(PH_FUNCTION, F_HOST_EXECUTION, 76)                   \
    X(PH_WORKGROUP_COUNT, F_HOST_EXECUTION, 80) X(PH_WORKGROUP_SIZE, F_HOST_EXECUTION, 92)    \
    X(PH_START, F_HOST_EXECUTION, 104) X(PH_END, F_HOST_EXECUTION, 112)                      \
    X(PH_TILES, F_HOST_EXECUTION, 128) X(PH_TILE_NS, F_HOST_EXECUTION, 136)                  \
    X(PD_FLAGS, F_DISPATCHES, 4) X(PH_FLAGS, F_HOST_EXECUTION, 8)                           \
    X(PH_STATUS, F_HOST_EXECUTION, 12)

FIELD_OFFSETS(PROJ_FIELDS)

#define H_STREAM 24
#define HOST_DISPATCH_TYPE 2

FIELD_LAYOUT(projection_layout, PROJ_FIELDS)

/* The metadata the caller knows: a function's key index (-1: its key does not pass --filter),
 * a queue, a command buffer. */
int projection_know_function(projection_t* p, uint64_t device, uint64_t executable,
                             uint64_t function, int64_t key_index) {
    uint64_t row[4] = {device, executable, function, (uint64_t)key_index};
    return !key_rows_add(&p->functions, row, 4, 3);
}

int projection_know_queue(projection_t* p, uint64_t device, uint64_t queue, uint64_t stream) {
    uint64_t row[3] = {device, queue, stream};
    return !key_rows_add(&p->queues, row, 3, 3);
}

int projection_know_command_buffer(projection_t* p, uint64_t id) {
    return !key_rows_add(&p->buffers, &id, 1, 1);
}

void projection_free(projection_t* p) {
    for (int t = 0; t < PROJECTION_TABLES; ++t) {
        free(p->tables[t].groups);
        free(p->tables[t].slots);
    }
    key_rows_free(&p->functions);
    key_rows_free(&p->queues);
    key_rows_free(&p->buffers);
    free(p->events);
    memset(p, 0, sizeof(*p));
}

static uint64_t group_key_hash(const projection_group_t* g) { return hash_words(g->k, 5); }

static int same_group_key(const uint64_t* a, const uint64_t* b) {
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4];
}

/* The group of `table` keyed `k` (made, in first-touch order, on first use); NULL: out of memory. */
static projection_group_t* group_of(projection_table_t* t, const uint64_t k[5], int host) {
    if (t->last && same_group_key(t->groups[t->last - 1].k, k))
        return &t->groups[t->last - 1];
    if (!t->slots || (t->count + 1) * 2 > t->mask + 1) {
        uint64_t n = t->slots ? (t->mask + 1) * 2 : 64;
        uint64_t* fresh = (uint64_t*)calloc(n, sizeof(uint64_t));
        if (!fresh) return NULL;
        for (uint64_t i = 0; i < t->count; ++i) {
            uint64_t at = group_key_hash(&t->groups[i]) & (n - 1);
            while (fresh[at]) at = (at + 1) & (n - 1);
            fresh[at] = i + 1;
        }
        free(t->slots);
        t->slots = fresh;
        t->mask = n - 1;
    }
    uint64_t at = hash_words(k, 5) & t->mask;
    for (uint64_t slot; (slot = t->slots[at]) != 0; at = (at + 1) & t->mask) {
        if (same_group_key(t->groups[slot - 1].k, k)) {
            t->last = slot;
            return &t->groups[slot - 1];
        }
    }
    if (t->count == t->capacity) {
        uint64_t n = t->capacity ? t->capacity * 2 : 64;
        projection_group_t* g = (projection_group_t*)realloc(t->groups, n * sizeof(*g));
        if (!g) return NULL;
        t->groups = g;
        t->capacity = n;
    }
    projection_group_t* g = &t->groups[t->count++];
    memset(g, 0, sizeof(*g));
    memcpy(g->k, k, sizeof(g->k));
    g->earliest = g->min = host ? I64_MAX_U : UINT64_MAX;
    g->key_index = -1;
    t->slots[at] = t->count;
    t->last = t->count;
    return g;
}

/* One matched event into a group: timing, and with `welford` the running mean. */
static int add_timing(projection_group_t* g, int valid, uint64_t start, uint64_t end,
                      uint64_t limit, int host, int welford) {
    ++g->count;
    if (!valid) return 0;
    ++g->valid;
    uint64_t duration = end - start;
    if (host) {
        if ((int64_t)start < (int64_t)g->earliest) g->earliest = start;
        if ((int64_t)end > (int64_t)g->latest) g->latest = end;
    } else {
        if (start < g->earliest) g->earliest = start;
        if (end > g->latest) g->latest = end;
    }
    if (duration < g->min) g->min = duration;
    if (duration > g->max) g->max = duration;
    if (add_u64(&g->total, duration) || g->total > limit) return 1;
    if (welford) {
        double x = host ? (double)(int64_t)duration : (double)duration;
        double delta = x - g->mean;
        g->mean += delta / (double)g->valid;
        g->m2 += delta * (x - g->mean);
    }
    return 0;
}

static int add_tiles(projection_group_t* g, int valid, uint64_t tiles, int64_t tile_ns) {
    if (!valid) return 0;
    if (add_u64(&g->tile_count, tiles)) return 1;
    if (add_u64(&g->tile_duration_sum_ns, (uint64_t)tile_ns) || g->tile_duration_sum_ns > I64_MAX_U)
        return 1;
    return 0;
}

/* explain's top-dispatch table: the first TOP_DISPATCHES valid matched events, then each later
 * one strictly longer than the shortest kept takes the first slot holding that shortest (host
 * durations compare as int64). explain sorts the slots by duration afterwards. */
#define TOP_DISPATCHES 8
_Static_assert(sizeof(((projection_t*)0)->top_device) / sizeof(top_dispatch_t) == TOP_DISPATCHES,
               "_scan.h: projection_t keeps TOP_DISPATCHES dispatches per domain");

static int shorter(uint64_t a, uint64_t b, int host) {
    return host ? (int64_t)a < (int64_t)b : a < b;
}

static void keep_top(projection_t* p, const projection_event_t* e) {
    int host = e->host;
    top_dispatch_t* top = host ? p->top_host : p->top_device;
    uint32_t* n = host ? &p->top_host_count : &p->top_device_count;
    uint32_t slot = *n;
    if (slot == TOP_DISPATCHES) {
        slot = 0;
        for (uint32_t i = 1; i < TOP_DISPATCHES; ++i)
            if (shorter(top[i].duration, top[slot].duration, host)) slot = i;
        if (!shorter(top[slot].duration, e->duration, host)) return;
    } else {
        ++*n;
    }
    top_dispatch_t* t = &top[slot];
    t->duration = e->duration;
    t->event_id = e->event_id;
    t->submission_id = e->submission_id;
    t->command_buffer_id = e->command_buffer_id;
    t->executable_id = e->executable_id;
    t->stream_id = e->stream_id;
    t->tile_count = e->tile_count;
    t->tile_duration_sum_ns = e->tile_duration_sum_ns;
    t->physical_device_ordinal = e->physical_device_ordinal;
    t->queue_ordinal = e->queue_ordinal;
    t->function_ordinal = e->function_ordinal;
    t->command_index = e->command_index;
}

static int wanted(const projection_t* p, int table) { return !((p->tables_left_out >> table) & 1); }

/* One matched event as its --dispatch_events row prints it (tiles only for host spans). */
static void event_of(projection_event_t* e, int host, const uint8_t* r, uint64_t pdo,
                     uint64_t queue, uint64_t stream, uint64_t function_row, int valid,
                     uint64_t start, uint64_t end, const uint8_t* workgroups) {
    memset(e, 0, sizeof(*e));
    e->stream_id = stream;
    e->start = start;
    e->end = end;
    e->duration = valid ? end - start : 0;
    e->function = function_row;
    e->physical_device_ordinal = (uint32_t)pdo;
    e->queue_ordinal = (uint32_t)queue;
    e->host = (uint8_t)host;
    e->valid = (uint8_t)valid;
    memcpy(e->workgroup_count, workgroups, 12);
    memcpy(e->workgroup_size, workgroups + 12, 12);
    if (host) {
        e->event_id = u64_at(r + PH_EVENT);
        e->submission_id = u64_at(r + PH_SUBMISSION);
        e->command_buffer_id = u64_at(r + PH_COMMAND_BUFFER);
        e->executable_id = u64_at(r + PH_EXECUTABLE);
        e->command_index = u32_at(r + PH_COMMAND_INDEX);
        e->function_ordinal = u32_at(r + PH_FUNCTION);
        e->flags = u32_at(r + PH_FLAGS);
        e->status_code = u32_at(r + PH_STATUS);
        e->tile_count = u64_at(r + PH_TILES);
        e->tile_duration_sum_ns = i64_at(r + PH_TILE_NS);
        e->duration_ns = e->duration;
    } else {
        e->event_id = u64_at(r + PD_EVENT);
        e->submission_id = u64_at(r + PD_SUBMISSION);
        e->command_buffer_id = u64_at(r + PD_COMMAND_BUFFER);
        e->executable_id = u64_at(r + PD_EXECUTABLE);
        e->command_index = u32_at(r + PD_COMMAND_INDEX);
        e->function_ordinal = u32_at(r + PD_FUNCTION);
        e->flags = u32_at(r + PD_FLAGS);
    }
}

/* --dispatch_events: the event appended to the kept ones. Nonzero: out of memory. */
static int keep_event(projection_t* p, const projection_event_t* e) {
    if (p->event_count == p->event_capacity) {
        uint64_t n = p->event_capacity ? p->event_capacity * 2 : 4096;
        projection_event_t* grown = (projection_event_t*)realloc(p->events, n * sizeof(*grown));
        if (!grown) return 1;
        p->events = grown;
        p->event_capacity = n;
    }
    p->events[p->event_count++] = *e;
    return 0;
}

/* The fitted duration of the device's kept events (clock.py's ticks_to_ns: rounded, 0 where it
 * passes int64), once the caller knows the device's clock fit. */
void projection_events_fit(projection_t* p, uint32_t device, uint64_t tick_span,
                           uint64_t time_span) {
    for (uint64_t i = 0; i < p->event_count; ++i) {
        projection_event_t* e = &p->events[i];
        if (e->host || e->physical_device_ordinal != device) continue;
        e->clock_fit_available = 1;
        if (!e->valid) continue;
        unsigned __int128 ns =
            ((unsigned __int128)e->duration * time_span + tick_span / 2) / tick_span;
        e->duration_ns = ns <= (unsigned __int128)INT64_MAX ? (uint64_t)ns : 0;
    }
}

/* One event of either domain, after its id matched. Nonzero: decline. */
static int on_dispatch(projection_t* p, int host, const uint8_t* r, uint64_t pdo, uint64_t queue,
                       uint64_t stream, uint64_t executable, uint64_t function,
                       uint64_t command_buffer, uint64_t submission, int valid, uint64_t start,
                       uint64_t end, const uint8_t* workgroups) {
    uint64_t qkey[3] = {pdo, queue, stream};
    uint64_t fkey[4] = {pdo, executable, function, (uint64_t)-1};
    int64_t key_index = -1;
    uint64_t function_row;  /* + 1 */
    if (p->deferred) {  /* everything matches; the caller checks what was seen afterwards */
        if (memcmp(qkey, p->last_queue, sizeof(qkey)) != 0) {
            if (projection_know_queue(p, pdo, queue, stream)) return 1;
            memcpy(p->last_queue, qkey, sizeof(qkey));
        }
        if (p->check_command_buffers && command_buffer != 0 &&
            projection_know_command_buffer(p, command_buffer))
            return 1;
        if (!(function_row = key_rows_add(&p->functions, fkey, 4, 3))) return 1;
    } else {
        if (memcmp(qkey, p->last_queue, sizeof(qkey)) != 0) {  /* events come in runs per queue */
            if (!key_rows_find(&p->queues, qkey, 3, 3)) return 1;
            memcpy(p->last_queue, qkey, sizeof(qkey));
        }
        if (p->check_command_buffers && command_buffer != 0 &&
            !key_rows_find(&p->buffers, &command_buffer, 1, 1))
            return 1;
        uint64_t f = function_row = key_rows_find(&p->functions, fkey, 4, 3);
        if (!f) return 1;
        key_index = (int64_t)p->functions.rows[(f - 1) * 4 + 3];
        if (key_index < 0) return 0;  /* the function's key does not pass --filter */
    }
    if (host && valid && i64_at(r + PH_TILE_NS) < 0) return 1;  /* IREE: total overflow */
    uint64_t limit = host ? I64_MAX_U : UINT64_MAX;
    if (host) {
        ++p->host_matched;
        p->host_valid += valid;
    } else {
        ++p->device_matched;
        p->device_valid += valid;
    }
    if ((p->keep_top && valid) || p->keep_events) {
        projection_event_t e;
        event_of(&e, host, r, pdo, queue, stream, function_row - 1, valid, start, end,
                 workgroups);
        if (p->keep_top && valid) keep_top(p, &e);
        if (p->keep_events && keep_event(p, &e)) return 1;
    }
    uint64_t tiles = host ? u64_at(r + PH_TILES) : 0;
    int64_t tile_ns = host ? i64_at(r + PH_TILE_NS) : 0;
    if (p->tables_left_out && valid) {
        /* No group's total can pass its limit while the total over every valid event does not:
         * the tables left out need no checks of their own. */
        if (host ? add_u64(&p->host_ns_sum, end - start) || p->host_ns_sum > I64_MAX_U ||
                       add_u64(&p->host_tile_count_sum, tiles) ||
                       add_u64(&p->host_tile_ns_sum, (uint64_t)tile_ns) ||
                       p->host_tile_ns_sum > I64_MAX_U
                 : add_u64(&p->device_tick_sum, end - start))
            return 1;
    }
    if (wanted(p, host ? TABLE_HOST_FUNCTION : TABLE_DEVICE_FUNCTION)) {
        uint64_t k[5] = {pdo, executable, function, 0, 0};
        projection_group_t* g =
            group_of(&p->tables[host ? TABLE_HOST_FUNCTION : TABLE_DEVICE_FUNCTION], k, host);
        if (!g) return 1;
        g->key_index = key_index;
        memcpy(g->last_workgroup_count, workgroups, 12);
        memcpy(g->last_workgroup_size, workgroups + 12, 12);
        if (add_timing(g, valid, start, end, limit, host, 1)) return 1;
        if (host && add_tiles(g, valid, tiles, tile_ns)) return 1;
    }
    if (command_buffer != 0 && wanted(p, host ? TABLE_HOST_EXECUTION : TABLE_DEVICE_EXECUTION)) {
        uint64_t e[5] = {command_buffer, submission, pdo, queue, stream};
        projection_group_t* g =
            group_of(&p->tables[host ? TABLE_HOST_EXECUTION : TABLE_DEVICE_EXECUTION], e, host);
        if (!g || add_timing(g, valid, start, end, limit, host, 0)) return 1;
        if (host && add_tiles(g, valid, tiles, tile_ns)) return 1;
    }
    if (!host && wanted(p, TABLE_DEVICE_SUBMISSION)) {
        uint64_t s[5] = {pdo, queue, stream, submission, 0};
        projection_group_t* g = group_of(&p->tables[TABLE_DEVICE_SUBMISSION], s, 0);
        if (!g || add_timing(g, valid, start, end, limit, 0, 0)) return 1;
    }
    return 0;
}

static int id_matches(const projection_t* p, const uint8_t* r, uint32_t offset) {
    return p->id < 0 || u64_at(r + offset) == (uint64_t)p->id;
}

static int projection_record(void* ctx, pager_t* pager, const uint8_t* data, const uint8_t* h,
                             uint64_t offset, int family, uint64_t payload, uint64_t length) {
    projection_t* p = (projection_t*)ctx;
    (void)offset;
    if (u16_at(h + H_RECORD_TYPE) != RECORD_TYPE_CHUNK) return 0;
    if (family != F_DISPATCHES && family != F_HOST_EXECUTION) return 0;
    uint32_t size = RECORD_SIZE[family];
    uint64_t pdo = u32_at(h + H_PDO), queue = u32_at(h + H_QUEUE), stream = u64_at(h + H_STREAM);
    for (uint64_t o = 0; o < length;) {
        uint32_t record_length;
        const uint8_t* r = pass_typed_next(pager, data, payload, length, size, &o, &record_length);
        if (!r) return 1;
        if (family == F_DISPATCHES) {
            ++p->device_total;
            if (!id_matches(p, r, p->device_id_offset)) continue;
            uint64_t start = u64_at(r + PD_START), end = u64_at(r + PD_END);
            int valid = start != 0 && end != 0 && end >= start;
            if (on_dispatch(p, 0, r, pdo, queue, stream, u64_at(r + PD_EXECUTABLE),
                            u32_at(r + PD_FUNCTION), u64_at(r + PD_COMMAND_BUFFER),
                            u64_at(r + PD_SUBMISSION), valid, start, end, r + PD_WORKGROUP_COUNT))
                return 1;
        } else {
            if (u32_at(r + PH_TYPE) != HOST_DISPATCH_TYPE) continue;
            ++p->host_total;
            if (!id_matches(p, r, p->host_id_offset)) continue;
            int64_t start = i64_at(r + PH_START), end = i64_at(r + PH_END);
            int valid = start >= 0 && end >= start;
            if (on_dispatch(p, 1, r, u32_at(r + PH_PDO), u32_at(r + PH_QUEUE),
                            u64_at(r + PH_STREAM), u64_at(r + PH_EXECUTABLE),
                            u32_at(r + PH_FUNCTION), u64_at(r + PH_COMMAND_BUFFER),
                            u64_at(r + PH_SUBMISSION), valid, (uint64_t)start, (uint64_t)end,
                            r + PH_WORKGROUP_COUNT))
                return 1;
        }
    }
    return 0;
}

int projection_run(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                   const uint32_t* type_lengths, int type_count, uint64_t window,
                   projection_t* p) {
    memset(p->last_queue, 0xFF, sizeof(p->last_queue));
    return pass_walk(data, length, offset, types, type_lengths, type_count, window,
                     projection_record, p);
}

typedef struct {
    table_t table;
    projection_t* projection;
} scan_and_project_t;

static int scan_and_project_record(void* ctx, pager_t* pager, const uint8_t* data,
                                   const uint8_t* h, uint64_t offset, int family, uint64_t payload,
                                   uint64_t length) {
    scan_and_project_t* s = (scan_and_project_t*)ctx;
    return table_record(&s->table, pager, data, h, offset, family, payload, length) ||
           projection_record(s->projection, pager, data, h, offset, family, payload, length);
}

/* scan_table and projection_run in one pass: the record table (less the `skip` families) and,
 * from the event chunks, the projection. PASS_STOPPED: the table is full or the projection
 * declined (`*out_count` < `capacity` tells which). */
int projection_scan(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                    const uint32_t* type_lengths, int type_count, uint64_t window, uint32_t skip,
                    scan_entry_t* out, uint64_t capacity, uint64_t* out_count,
                    uint64_t* next_offset, projection_t* p) {
    scan_and_project_t s = {{out, 0, capacity, skip}, p};
    memset(p->last_queue, 0xFF, sizeof(p->last_queue));
    int rc = pass_walk_from(data, length, &offset, types, type_lengths, type_count, window,
                            scan_and_project_record, &s);
    *out_count = s.table.count;
    *next_offset = offset;
    return rc;
}

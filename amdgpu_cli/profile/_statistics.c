/* `statistics` in one forward pass over a mapped .ireeprof file (reports/statistics_native.py).
 *
 * IREE's statistics sink, reduced as the pass goes: each event record adds one sample to one or
 * more aggregate rows, keyed by (row type, device, queue, event type, executable, command buffer,
 * function, command index) in a hash table whose rows are kept in the order they were first
 * touched (file order, then the order of a record's row types: what reports/statistics.py sorts
 * by). Event families are read at a fixed stride, as the sink reads them; clock samples keep the
 * first and last per device; executable functions give the name of each (executable, function)
 * key's first record.
 *
 * Anything reports/statistics.py reports as an error (a broken record, a payload that is not a
 * whole number of records, a bad function record, a sum past 2**64) ends the pass with
 * PASS_EXACT_PATH; so does running out of memory. The caller then runs that exact path.
 *
 * The pass itself (record chain, paging, helper thread) is _pass.c's; `statistics_free` releases
 * what a run allocated, whatever it returned.
 */

/* Row types, time domains and row flags (reports/statistics_rows.py). */
enum { DOMAIN_NONE = 0, DOMAIN_DEVICE_TICK = 1, DOMAIN_HOST_NS = 2 };
enum { FLAG_TIMING = 1, FLAG_PAYLOAD_BYTES = 2, FLAG_OPERATION_COUNT = 4, FLAG_TILE_TOTALS = 8 };

/* Field offsets the sink reads, per family (schema.py's dtypes; checked by the tests through
 * statistics_layout). */
#define STAT_FIELDS(X)                                                                    \
    X(ST_CLOCK_FLAGS, F_CLOCKS, 4) X(ST_CLOCK_PDO, F_CLOCKS, 8)                                  \
    X(ST_DISPATCH_EXECUTABLE, F_DISPATCHES, 32) X(ST_DISPATCH_COMMAND_BUFFER, F_DISPATCHES, 24)  \
    X(ST_DISPATCH_COMMAND_INDEX, F_DISPATCHES, 40) X(ST_DISPATCH_FUNCTION, F_DISPATCHES, 44)      \
    X(ST_DISPATCH_START, F_DISPATCHES, 72) X(ST_DISPATCH_END, F_DISPATCHES, 80)                  \
    X(ST_QDEV_TYPE, F_QUEUE_DEVICE_EVENTS, 4) X(ST_QDEV_COMMAND_BUFFER, F_QUEUE_DEVICE_EVENTS, 32) \
    X(ST_QDEV_PAYLOAD, F_QUEUE_DEVICE_EVENTS, 56) X(ST_QDEV_PDO, F_QUEUE_DEVICE_EVENTS, 64)       \
    X(ST_QDEV_QUEUE, F_QUEUE_DEVICE_EVENTS, 68) X(ST_QDEV_OPERATIONS, F_QUEUE_DEVICE_EVENTS, 72)  \
    X(ST_QDEV_START, F_QUEUE_DEVICE_EVENTS, 80) X(ST_QDEV_END, F_QUEUE_DEVICE_EVENTS, 88)         \
    X(ST_QUEUE_TYPE, F_QUEUE_EVENTS, 4) X(ST_QUEUE_HOST_TIME, F_QUEUE_EVENTS, 24)                 \
    X(ST_QUEUE_COMMAND_BUFFER, F_QUEUE_EVENTS, 40) X(ST_QUEUE_PDO, F_QUEUE_EVENTS, 64)            \
    X(ST_QUEUE_QUEUE, F_QUEUE_EVENTS, 68) X(ST_QUEUE_OPERATIONS, F_QUEUE_EVENTS, 84)              \
    X(ST_QUEUE_PAYLOAD, F_QUEUE_EVENTS, 88) X(ST_QUEUE_READY_TIME, F_QUEUE_EVENTS, 96)            \
    X(ST_HOST_TYPE, F_HOST_EXECUTION, 4) X(ST_HOST_COMMAND_BUFFER, F_HOST_EXECUTION, 32)          \
    X(ST_HOST_EXECUTABLE, F_HOST_EXECUTION, 40) X(ST_HOST_PDO, F_HOST_EXECUTION, 64)              \
    X(ST_HOST_QUEUE, F_HOST_EXECUTION, 68) X(ST_HOST_COMMAND_INDEX, F_HOST_EXECUTION, 72)         \
    X(ST_HOST_FUNCTION, F_HOST_EXECUTION, 76) X(ST_HOST_START_TIME, F_HOST_EXECUTION, 104)        \
    X(ST_HOST_END_TIME, F_HOST_EXECUTION, 112) X(ST_HOST_PAYLOAD, F_HOST_EXECUTION, 120)          \
    X(ST_HOST_TILES, F_HOST_EXECUTION, 128) X(ST_HOST_TILE_NS, F_HOST_EXECUTION, 136)             \
    X(ST_HOST_OPERATIONS, F_HOST_EXECUTION, 144)                                               \
    X(ST_MEMORY_TYPE, F_MEMORY_EVENTS, 4) X(ST_MEMORY_PDO, F_MEMORY_EVENTS, 64)                   \
    X(ST_MEMORY_QUEUE, F_MEMORY_EVENTS, 68) X(ST_MEMORY_LENGTH, F_MEMORY_EVENTS, 104)             \
    X(ST_FUNCTION_EXECUTABLE, F_FUNCTIONS, 8) X(ST_FUNCTION_ORDINAL, F_FUNCTIONS, 16)             \
    X(ST_FUNCTION_NAME_LENGTH, F_FUNCTIONS, 44)

FIELD_OFFSETS(STAT_FIELDS)

FIELD_LAYOUT(statistics_layout, STAT_FIELDS)

void statistics_free(statistics_t* s) {
    free(s->groups);
    free(s->clocks);
    free(s->names);
    free(s->group_slots);
    free(s->name_slots);
    memset(s, 0, sizeof(*s));
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xBF58476D1CE4E5B9ull;
}

/* Grows an array of `size`-byte items to hold one more; nonzero when out of memory. */
static int reserve(void** items, uint64_t* capacity, uint64_t count, size_t size) {
    if (count < *capacity) return 0;
    uint64_t n = *capacity ? *capacity * 2 : 64;
    void* p = realloc(*items, n * size);
    if (!p) return 1;
    *items = p;
    *capacity = n;
    return 0;
}

/* A table of 2**k slots at most half full, holding `count` entries hashed by `hash_of(i)`. */
static int rehash(uint64_t** slots, uint64_t* mask, uint64_t count,
                  uint64_t (*hash_of)(const statistics_t*, uint64_t), const statistics_t* s) {
    if (*slots && (count + 1) * 2 <= *mask + 1) return 0;
    uint64_t n = *slots ? (*mask + 1) * 2 : 256;
    uint64_t* fresh = (uint64_t*)calloc(n, sizeof(uint64_t));
    if (!fresh) return 1;
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t at = hash_of(s, i) & (n - 1);
        while (fresh[at]) at = (at + 1) & (n - 1);
        fresh[at] = i + 1;
    }
    free(*slots);
    *slots = fresh;
    *mask = n - 1;
    return 0;
}

/* Independent products, folded once: cheap enough to run per sample. */
static uint64_t group_hash(const statistics_group_t* g) {
    uint64_t h = ((uint64_t)g->row_type * 0x9E3779B97F4A7C15ull) ^
                 ((uint64_t)g->physical_device_ordinal * 0xC2B2AE3D27D4EB4Full) ^
                 ((uint64_t)g->queue_ordinal * 0x165667B19E3779F9ull) ^
                 ((uint64_t)g->event_type * 0xD6E8FEB86659FD93ull) ^
                 (g->executable_id * 0xFF51AFD7ED558CCDull) ^
                 (g->command_buffer_id * 0xC4CEB9FE1A85EC53ull) ^
                 ((uint64_t)g->function_ordinal * 0x94D049BB133111EBull) ^
                 ((uint64_t)g->command_index * 0xBF58476D1CE4E5B9ull);
    return h ^ (h >> 29);
}

static uint64_t group_hash_at(const statistics_t* s, uint64_t i) { return group_hash(&s->groups[i]); }

static int same_key(const statistics_group_t* a, const statistics_group_t* b) {
    return a->row_type == b->row_type && a->physical_device_ordinal == b->physical_device_ordinal &&
           a->queue_ordinal == b->queue_ordinal && a->event_type == b->event_type &&
           a->executable_id == b->executable_id && a->command_buffer_id == b->command_buffer_id &&
           a->function_ordinal == b->function_ordinal && a->command_index == b->command_index;
}

/* One sample's values. */
typedef struct {
    int timed;
    uint64_t start, end, operations, payload, tiles, tile_ns;
} sample_t;

/* Adds `v` to the row `key` names (made on first touch); nonzero on overflow or out of memory.
 * Each row type remembers the row it touched last: events of a steady workload repeat. */
static int add_sample(statistics_t* s, const statistics_group_t* key, const sample_t* v) {
    statistics_group_t* g = NULL;
    uint64_t last = s->last_group[key->row_type & 15];
    if (last && same_key(&s->groups[last - 1], key)) g = &s->groups[last - 1];
    if (!g) {
        if (rehash(&s->group_slots, &s->group_mask, s->group_count, group_hash_at, s)) return 1;
        uint64_t at = group_hash(key) & s->group_mask;
        for (uint64_t slot; (slot = s->group_slots[at]) != 0; at = (at + 1) & s->group_mask) {
            if (same_key(&s->groups[slot - 1], key)) { g = &s->groups[slot - 1]; break; }
        }
        if (!g) {
            if (reserve((void**)&s->groups, &s->group_capacity, s->group_count, sizeof(*g))) return 1;
            g = &s->groups[s->group_count++];
            *g = *key;
            g->first_start_time = g->minimum_duration = UINT64_MAX;
            s->group_slots[at] = s->group_count;
        }
        s->last_group[key->row_type & 15] = (uint64_t)(g - s->groups) + 1;
    }
    ++g->sample_count;
    if (v->timed && v->end >= v->start) {
        uint64_t duration = v->end - v->start;
        g->flags |= FLAG_TIMING;
        if (add_u64(&g->total_duration, duration)) return 1;
        if (v->start < g->first_start_time) g->first_start_time = v->start;
        if (v->end > g->last_end_time) g->last_end_time = v->end;
        if (duration < g->minimum_duration) g->minimum_duration = duration;
        if (duration > g->maximum_duration) g->maximum_duration = duration;
    } else {
        ++g->invalid_sample_count;
    }
    if (v->operations) g->flags |= FLAG_OPERATION_COUNT;
    if (v->payload) g->flags |= FLAG_PAYLOAD_BYTES;
    if (v->tiles) {
        g->flags |= FLAG_TILE_TOTALS;
        if (add_u64(&g->tile_duration_sum_ns, v->tile_ns)) return 1;
    }
    return add_u64(&g->operation_count, v->operations) | add_u64(&g->payload_bytes, v->payload) |
           add_u64(&g->tile_count, v->tiles);
}

static statistics_group_t key_of(uint32_t row_type, uint32_t domain, uint32_t pdo, uint32_t queue,
                                 uint32_t event_type, uint64_t executable, uint64_t command_buffer,
                                 uint32_t function, uint32_t command_index) {
    statistics_group_t k;
    memset(&k, 0, sizeof(k));
    k.row_type = row_type;
    k.time_domain = domain;
    k.physical_device_ordinal = pdo;
    k.queue_ordinal = queue;
    k.event_type = event_type;
    k.executable_id = executable;
    k.command_buffer_id = command_buffer;
    k.function_ordinal = function;
    k.command_index = command_index;
    return k;
}

/* Host spans count when 0 <= start <= end; their ends are read as unsigned from then on. */
static sample_t host_sample(int64_t start, int64_t end) {
    sample_t v;
    memset(&v, 0, sizeof(v));
    v.timed = start >= 0 && end >= start;
    if (v.timed) { v.start = (uint64_t)start; v.end = (uint64_t)end; }
    return v;
}

static sample_t device_sample(uint64_t start, uint64_t end) {
    sample_t v;
    memset(&v, 0, sizeof(v));
    v.timed = start != 0 && end >= start;
    v.start = start;
    v.end = end;
    return v;
}

static int on_event(statistics_t* s, int family, const uint8_t* r, uint32_t chunk_pdo,
                    uint32_t chunk_queue) {
    statistics_group_t k;
    sample_t v;
    switch (family) {
        case F_DISPATCHES: {
            uint64_t exe = u64_at(r + ST_DISPATCH_EXECUTABLE), cb = u64_at(r + ST_DISPATCH_COMMAND_BUFFER);
            uint32_t func = u32_at(r + ST_DISPATCH_FUNCTION), cmd = u32_at(r + ST_DISPATCH_COMMAND_INDEX);
            v = device_sample(u64_at(r + ST_DISPATCH_START), u64_at(r + ST_DISPATCH_END));
            if (exe != 0 && func != U32_NONE) {
                k = key_of(1, DOMAIN_DEVICE_TICK, chunk_pdo, chunk_queue, 0, exe, 0, func, U32_NONE);
                if (add_sample(s, &k, &v)) return 1;
            }
            if (cb != 0) {
                k = key_of(2, DOMAIN_DEVICE_TICK, chunk_pdo, chunk_queue, 0, 0, cb, U32_NONE, U32_NONE);
                if (add_sample(s, &k, &v)) return 1;
            }
            if (cb != 0 && cmd != U32_NONE) {
                k = key_of(3, DOMAIN_DEVICE_TICK, chunk_pdo, chunk_queue, 0, exe, cb, func, cmd);
                if (add_sample(s, &k, &v)) return 1;
            }
            return 0;
        }
        case F_QUEUE_DEVICE_EVENTS:
            v = device_sample(u64_at(r + ST_QDEV_START), u64_at(r + ST_QDEV_END));
            v.operations = u32_at(r + ST_QDEV_OPERATIONS);
            v.payload = u64_at(r + ST_QDEV_PAYLOAD);
            k = key_of(4, DOMAIN_DEVICE_TICK, u32_at(r + ST_QDEV_PDO), u32_at(r + ST_QDEV_QUEUE),
                       u32_at(r + ST_QDEV_TYPE), 0, u64_at(r + ST_QDEV_COMMAND_BUFFER), U32_NONE, U32_NONE);
            return add_sample(s, &k, &v);
        case F_QUEUE_EVENTS:
            v = host_sample(i64_at(r + ST_QUEUE_HOST_TIME), i64_at(r + ST_QUEUE_READY_TIME));
            v.operations = u32_at(r + ST_QUEUE_OPERATIONS);
            v.payload = u64_at(r + ST_QUEUE_PAYLOAD);
            k = key_of(5, DOMAIN_HOST_NS, u32_at(r + ST_QUEUE_PDO), u32_at(r + ST_QUEUE_QUEUE),
                       u32_at(r + ST_QUEUE_TYPE), 0, u64_at(r + ST_QUEUE_COMMAND_BUFFER), U32_NONE,
                       U32_NONE);
            return add_sample(s, &k, &v);
        case F_HOST_EXECUTION: {
            uint32_t pdo = u32_at(r + ST_HOST_PDO), queue = u32_at(r + ST_HOST_QUEUE);
            uint64_t exe = u64_at(r + ST_HOST_EXECUTABLE), cb = u64_at(r + ST_HOST_COMMAND_BUFFER);
            uint32_t func = u32_at(r + ST_HOST_FUNCTION), cmd = u32_at(r + ST_HOST_COMMAND_INDEX);
            int64_t tile_ns = i64_at(r + ST_HOST_TILE_NS);
            v = host_sample(i64_at(r + ST_HOST_START_TIME), i64_at(r + ST_HOST_END_TIME));
            v.operations = u32_at(r + ST_HOST_OPERATIONS);
            v.payload = u64_at(r + ST_HOST_PAYLOAD);
            v.tiles = u64_at(r + ST_HOST_TILES);
            v.tile_ns = tile_ns >= 0 ? (uint64_t)tile_ns : 0;
            k = key_of(9, DOMAIN_HOST_NS, pdo, queue, u32_at(r + ST_HOST_TYPE), 0, cb, U32_NONE, U32_NONE);
            if (add_sample(s, &k, &v)) return 1;
            if (exe != 0 && func != U32_NONE) {
                k = key_of(6, DOMAIN_HOST_NS, pdo, queue, 0, exe, 0, func, U32_NONE);
                if (add_sample(s, &k, &v)) return 1;
            }
            if (cb != 0) {
                k = key_of(7, DOMAIN_HOST_NS, pdo, queue, 0, 0, cb, U32_NONE, U32_NONE);
                if (add_sample(s, &k, &v)) return 1;
            }
            if (cb != 0 && cmd != U32_NONE) {
                k = key_of(8, DOMAIN_HOST_NS, pdo, queue, 0, exe, cb, func, cmd);
                if (add_sample(s, &k, &v)) return 1;
            }
            return 0;
        }
        case F_MEMORY_EVENTS:
            memset(&v, 0, sizeof(v));
            v.payload = u64_at(r + ST_MEMORY_LENGTH);
            k = key_of(10, DOMAIN_NONE, u32_at(r + ST_MEMORY_PDO), u32_at(r + ST_MEMORY_QUEUE),
                       u32_at(r + ST_MEMORY_TYPE), 0, 0, U32_NONE, U32_NONE);
            return add_sample(s, &k, &v);
        default:
            return 0;
    }
}

static int on_clock(statistics_t* s, const uint8_t* r, uint64_t offset) {
    uint64_t pdo = u32_at(r + ST_CLOCK_PDO);
    statistics_clock_t* c = NULL;
    for (uint64_t i = 0; i < s->clock_count; ++i)
        if (s->clocks[i].physical_device_ordinal == pdo) { c = &s->clocks[i]; break; }
    if (!c) {
        if (reserve((void**)&s->clocks, &s->clock_capacity, s->clock_count, sizeof(*c))) return 1;
        c = &s->clocks[s->clock_count++];
        memset(c, 0, sizeof(*c));
        c->physical_device_ordinal = pdo;
        c->first_offset = offset;
    }
    ++c->count;
    if (u32_at(r + ST_CLOCK_FLAGS) & CLOCK_DEVICE_TICK_UNALIGNED) ++c->unaligned;
    c->last_offset = offset;
    return 0;
}

static uint64_t name_hash_at(const statistics_t* s, uint64_t i) {
    return mix(s->names[i].executable_id, s->names[i].function_ordinal);
}

/* An executable function record: the first of each (executable, function) names it. */
static int on_function(statistics_t* s, const uint8_t* r, uint32_t record_length, uint64_t offset) {
    uint32_t name_length = u32_at(r + ST_FUNCTION_NAME_LENGTH);
    if (name_length > record_length - RECORD_SIZE[F_FUNCTIONS]) return 1;
    if (rehash(&s->name_slots, &s->name_mask, s->name_count, name_hash_at, s)) return 1;
    uint64_t exe = u64_at(r + ST_FUNCTION_EXECUTABLE);
    uint32_t ordinal = u32_at(r + ST_FUNCTION_ORDINAL);
    uint64_t at = mix(exe, ordinal) & s->name_mask;
    for (uint64_t slot; (slot = s->name_slots[at]) != 0; at = (at + 1) & s->name_mask) {
        const statistics_name_t* n = &s->names[slot - 1];
        if (n->executable_id == exe && n->function_ordinal == ordinal) return 0;
    }
    if (reserve((void**)&s->names, &s->name_capacity, s->name_count, sizeof(statistics_name_t)))
        return 1;
    statistics_name_t* n = &s->names[s->name_count++];
    n->executable_id = exe;
    n->function_ordinal = ordinal;
    n->name_offset = offset + RECORD_SIZE[F_FUNCTIONS];
    n->name_length = name_length;
    s->name_slots[at] = s->name_count;
    return 0;
}

static int statistics_record(void* ctx, pager_t* pager, const uint8_t* data, const uint8_t* h,
                             uint64_t offset, int family, uint64_t payload, uint64_t length) {
    statistics_t* s = (statistics_t*)ctx;
    (void)offset;
    if (u16_at(h + H_RECORD_TYPE) != RECORD_TYPE_CHUNK) return 0;
    if (add_u64(&s->dropped_records, u64_at(h + H_DROPPED))) return 1;
    if (family == F_FUNCTIONS) {  /* walked by record_length, as the reader's typed walk */
        uint32_t size = RECORD_SIZE[family];
        for (uint64_t o = 0; o < length;) {
            uint64_t at = payload + o;
            uint32_t record_length;
            const uint8_t* r = pass_typed_next(pager, data, payload, length, size, &o,
                                               &record_length);
            if (!r || on_function(s, r, record_length, at)) return 1;
        }
        return 0;
    }
    if (family != F_CLOCKS && family != F_DISPATCHES && family != F_QUEUE_DEVICE_EVENTS &&
        family != F_QUEUE_EVENTS && family != F_HOST_EXECUTION && family != F_MEMORY_EVENTS)
        return 0;
    uint32_t size = RECORD_SIZE[family];  /* the sink's fixed stride; record_length is not read */
    if (length % size) return 1;
    uint32_t pdo = u32_at(h + H_PDO), queue = u32_at(h + H_QUEUE);
    for (uint64_t o = 0; o < length; o += size) {
        pager_reach(pager, payload + o);
        const uint8_t* r = data + payload + o;
        if (family == F_CLOCKS ? on_clock(s, r, payload + o) : on_event(s, family, r, pdo, queue))
            return 1;
    }
    return 0;
}

int statistics_run(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                   const uint32_t* type_lengths, int type_count, uint64_t window,
                   statistics_t* out) {
    memset(out, 0, sizeof(*out));
    return pass_walk(data, length, offset, types, type_lengths, type_count, window,
                     statistics_record, out);
}

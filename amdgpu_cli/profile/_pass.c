/* One forward pass over a mapped .ireeprof file: what the reader's record table (`scan_table`)
 * and the one-pass reducers (_summary.c, _statistics.c, _projection.c) share.
 *
 * `pass_walk` walks the record chain from the first record to the logical end, checking every
 * record header as reader.py's walk does, and hands each record to a callback with its family
 * (the index of its content type in schema.CONTENT_TYPES, -1 unknown). A broken record ends the
 * pass with reader.py's scan code for it; a callback that returns nonzero ends it with
 * PASS_STOPPED (a reducer declining: its caller then runs the report's exact path, which gives
 * IREE's message). `pass_typed_next` steps through a chunk's typed records as the reader's typed
 * walk does.
 *
 * Memory and cores: the file is read once, front to back, a window at a time: a helper thread maps
 * each window in one go (MADV_POPULATE_READ, Linux 5.14+) a little ahead of the walk, and the walk
 * lets go (MADV_DONTNEED) of the windows behind it, so the pass holds a few windows of the file
 * however large it is, and mapping pages and reading them use both cores. Only for a file
 * mapping, from its start (page aligned): the caller passes a window of 0 for any other memory.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* PASS_STOPPED: the callback ended the pass. The chain errors are reader.py's scan codes. */
enum { PASS_OK = 0, PASS_STOPPED = 1, PASS_TOO_SMALL = 2, PASS_FLAGS = 3, PASS_PAST_END = 4,
       PASS_HEADER_LENGTH = 5, PASS_LENGTHS = 6 };
#define PASS_EXACT_PATH PASS_STOPPED

#define PASS_FAMILIES 24

/* Families by their index in schema.CONTENT_TYPES. */
enum {
    F_SESSION = 0, F_DEVICES = 1, F_QUEUES = 2, F_CODE_OBJECTS = 4, F_FUNCTIONS = 6,
    F_CLOCKS = 9, F_DISPATCHES = 10, F_QUEUE_EVENTS = 11, F_QUEUE_DEVICE_EVENTS = 12,
    F_HOST_EXECUTION = 13, F_COMMAND_REGIONS = 14, F_MEMORY_EVENTS = 15, F_COUNTER_SETS = 17,
    F_COUNTERS = 18, F_COUNTER_SAMPLES = 19, F_METRIC_SOURCES = 20, F_METRIC_DESCRIPTORS = 21,
    F_METRIC_SAMPLES = 22, F_TRACES = 23,
};

/* Fixed head size of each family's typed records (0: session, no typed records). */
static const uint32_t RECORD_SIZE[PASS_FAMILIES] = {
    0, 32, 24, 40, 48, 40, 64, 48, 120, 72, 88, 104, 96, 152, 248, 160, 72, 32, 48, 112, 40, 48,
    64, 88,
};

#define RECORD_TYPE_SESSION_BEGIN 1
#define RECORD_TYPE_CHUNK 2
#define RECORD_TYPE_SESSION_END 3
#define CLOCK_DEVICE_TICK_UNALIGNED (1u << 4)
#define CLOCK_HOST_TIME_BRACKET (1u << 3)
#define U32_NONE 0xFFFFFFFFu

/* Record header fields (schema.RECORD_HEADER). */
#define H_RECORD_LENGTH 0
#define H_PAYLOAD_LENGTH 8
#define H_HEADER_LENGTH 56
#define H_CONTENT_TYPE_LENGTH 60
#define H_NAME_LENGTH 64
#define H_PDO 68
#define H_QUEUE 72
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

/* A reducer's field table: FIELDS(X) lists X(name, family, offset), the record fields it reads
 * (schema.py's offsets). FIELD_OFFSETS(FIELDS) makes each name an enum constant of its offset;
 * FIELD_LAYOUT(fn, FIELDS) defines `int fn(families, offsets, capacity)`, which hands the table
 * to the tests (it returns the field count, filling at most `capacity` rows). */
#define FIELD_ENUM_(name, family, offset) name = offset,
#define FIELD_ROW_(name, family, offset) \
    if (n < capacity) { families[n] = family; offsets[n] = offset; } ++n;
#define FIELD_OFFSETS(FIELDS) enum { FIELDS(FIELD_ENUM_) };
#define FIELD_ROWS(FIELDS) FIELDS(FIELD_ROW_)
#define FIELD_LAYOUT(fn, FIELDS)                                           \
    int fn(uint32_t* families, uint32_t* offsets, int capacity) {          \
        int n = 0;                                                         \
        FIELD_ROWS(FIELDS)                                                 \
        return n;                                                          \
    }

/* *sum += b; nonzero (and *sum unchanged) when that passes 2**64 - 1. */
static int add_u64(uint64_t* sum, uint64_t b) {
    uint64_t s = *sum + b;
    if (s < b) return 1;
    *sum = s;
    return 0;
}

/* --- keyed rows (key_rows_t in _scan.h): the metadata sets and small keyed tables of the reducers */

static uint64_t hash_words(const uint64_t* w, int n) {
    static const uint64_t K[5] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full,
                                  0x165667B19E3779F9ull, 0xD6E8FEB86659FD93ull,
                                  0xFF51AFD7ED558CCDull};
    uint64_t h = 0;
    for (int i = 0; i < n; ++i) h ^= w[i] * K[i];
    return h ^ (h >> 29);
}

/* The row (index + 1) whose key is `key`, or 0. */
static uint64_t key_rows_find(const key_rows_t* t, const uint64_t* key, int width, int keyed) {
    if (!t->slots) return 0;
    for (uint64_t at = hash_words(key, keyed) & t->mask, slot; (slot = t->slots[at]) != 0;
         at = (at + 1) & t->mask) {
        if (memcmp(t->rows + (slot - 1) * width, key, keyed * sizeof(uint64_t)) == 0) return slot;
    }
    return 0;
}

/* The row (index + 1) keyed as `row`, added (all `width` words) when there is none; 0 when out
 * of memory. */
static uint64_t key_rows_add(key_rows_t* t, const uint64_t* row, int width, int keyed) {
    uint64_t found = key_rows_find(t, row, width, keyed);
    if (found) return found;
    if (!t->slots || (t->count + 1) * 2 > t->mask + 1) {  /* regrow the index: at most half full */
        uint64_t n = t->slots ? (t->mask + 1) * 2 : 64;
        uint64_t* fresh = (uint64_t*)calloc(n, sizeof(uint64_t));
        if (!fresh) return 0;
        for (uint64_t i = 0; i < t->count; ++i) {
            uint64_t at = hash_words(t->rows + i * width, keyed) & (n - 1);
            while (fresh[at]) at = (at + 1) & (n - 1);
            fresh[at] = i + 1;
        }
        free(t->slots);
        t->slots = fresh;
        t->mask = n - 1;
    }
    if (t->count == t->capacity) {
        uint64_t n = t->capacity ? t->capacity * 2 : 64;
        uint64_t* rows = (uint64_t*)realloc(t->rows, n * width * sizeof(uint64_t));
        if (!rows) return 0;
        t->rows = rows;
        t->capacity = n;
    }
    memcpy(t->rows + t->count * width, row, width * sizeof(uint64_t));
    uint64_t at = hash_words(row, keyed) & t->mask;
    while (t->slots[at]) at = (at + 1) & t->mask;
    t->slots[at] = ++t->count;
    return t->count;
}

static void key_rows_free(key_rows_t* t) {
    free(t->rows);
    free(t->slots);
    memset(t, 0, sizeof(*t));
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

/* A window of 0 turns the pager off: the data is not a file mapping (letting go of anonymous
 * pages would zero them, and page rounding would reach past the buffer), or paging is not
 * wanted. */
static void pager_start(pager_t* p) {
    if (p->window == 0) return;
    p->helper_started = p->length > p->window &&
                        pthread_create(&p->helper, NULL, pager_helper, p) == 0;
    if (!p->helper_started) madvise((void*)p->data, p->length, MADV_POPULATE_READ);
}

static void pager_stop(pager_t* p) {
    if (p->window == 0) return;
    __atomic_store_n(&p->done, 1, __ATOMIC_RELAXED);
    if (p->helper_started) pthread_join(p->helper, NULL);
    if (p->length > p->released)
        madvise((void*)(p->data + p->released), p->length - p->released, MADV_DONTNEED);
}

/* Called with the offset about to be read: tells the helper, lets go of windows well behind. */
static void pager_reach(pager_t* p, uint64_t offset) {
    if (p->window == 0) return;
    __atomic_store_n(&p->reached, offset, __ATOMIC_RELAXED);
    if (offset >= p->released + 2 * p->window) {
        uint64_t upto = (offset - p->window) / p->window * p->window;
        madvise((void*)(p->data + p->released), upto - p->released, MADV_DONTNEED);
        p->released = upto;
    }
}

/* One step of IREE's typed-record walk over the payload of `length` bytes at file offset
 * `payload`: the record at `*o` (call while *o < length), its record_length in `*record_length`,
 * `*o` moved past it; NULL when the rest is torn (shorter than `size`, or a record_length below
 * `size` or past the payload's end). */
static const uint8_t* pass_typed_next(pager_t* pager, const uint8_t* data, uint64_t payload,
                                      uint64_t length, uint32_t size, uint64_t* o,
                                      uint32_t* record_length) {
    uint64_t remaining = length - *o;
    if (remaining < size) return NULL;
    pager_reach(pager, payload + *o);
    const uint8_t* r = data + payload + *o;
    *record_length = u32_at(r);
    if (*record_length < size || *record_length > remaining) return NULL;
    *o += *record_length;
    return r;
}

/* A record: `h` its header at file offset `offset`, `family` the index of its content type
 * (-1: unknown), and where its payload is. Nonzero: end the pass. */
typedef int (*pass_record_fn)(void* ctx, pager_t* pager, const uint8_t* data, const uint8_t* h,
                              uint64_t offset, int family, uint64_t payload, uint64_t payload_length);

/* The index of content type `ct` (`ct_len` bytes) among `types`, or -1. The family last seen
 * with the same length is tried first: consecutive records mostly repeat a few families. */
static int family_of(const uint8_t* ct, uint64_t ct_len, const uint8_t* types,
                     const uint32_t* type_lengths, int type_count, const uint64_t* starts,
                     int* last_by_length) {
    int* last = &last_by_length[ct_len & 255];
    if (*last >= 0 && type_lengths[*last] == ct_len && memcmp(types + starts[*last], ct, ct_len) == 0)
        return *last;
    for (int i = 0; i < type_count && i < PASS_FAMILIES; ++i) {
        if (type_lengths[i] == ct_len && memcmp(types + starts[i], ct, ct_len) == 0) {
            *last = i;
            return i;
        }
    }
    return -1;
}

static int pass_chain(const uint8_t* data, uint64_t length, uint64_t* at, const uint8_t* types,
                      const uint32_t* type_lengths, int type_count, pager_t* pager,
                      pass_record_fn on_record, void* ctx) {
    uint64_t offset = *at;
    int rc = PASS_OK;
    uint64_t starts[PASS_FAMILIES];
    int last_by_length[256];
    for (int i = 0, o = 0; i < type_count && i < PASS_FAMILIES; o += type_lengths[i++]) starts[i] = o;
    for (int i = 0; i < 256; ++i) last_by_length[i] = -1;
    while (offset < length) {
        pager_reach(pager, offset);
        uint64_t remaining = length - offset;
        if (remaining < HEADER_SIZE) { rc = PASS_TOO_SMALL; break; }
        const uint8_t* h = data + offset;
        if (u16_at(h + H_FLAGS) != 0) { rc = PASS_FLAGS; break; }
        uint64_t record_length = u64_at(h + H_RECORD_LENGTH);
        if (record_length > remaining) { rc = PASS_PAST_END; break; }
        uint32_t header_length = u32_at(h + H_HEADER_LENGTH);
        if (header_length < HEADER_SIZE || header_length > record_length) {
            rc = PASS_HEADER_LENGTH;
            break;
        }
        uint64_t ct_len = u32_at(h + H_CONTENT_TYPE_LENGTH), name_len = u32_at(h + H_NAME_LENGTH);
        uint64_t payload_len = u64_at(h + H_PAYLOAD_LENGTH);
        uint64_t sum = ct_len + name_len + payload_len;
        if (sum < payload_len || sum != record_length - header_length) { rc = PASS_LENGTHS; break; }
        int family = family_of(h + header_length, ct_len, types, type_lengths, type_count,
                               starts, last_by_length);
        if (on_record(ctx, pager, data, h, offset, family, offset + header_length + ct_len + name_len,
                      payload_len)) {
            rc = PASS_STOPPED;
            break;
        }
        offset += record_length;
    }
    *at = offset;
    return rc;
}

/* The whole pass: the chain from `*at` to `length`, pages mapped ahead and let go behind; `*at`
 * ends where the pass stopped. */
static int pass_walk_from(const uint8_t* data, uint64_t length, uint64_t* at, const uint8_t* types,
                          const uint32_t* type_lengths, int type_count, uint64_t window,
                          pass_record_fn on_record, void* ctx) {
    pager_t pager = {.data = data, .length = length, .window = window};
    pager_start(&pager);
    int rc = pass_chain(data, length, at, types, type_lengths, type_count, &pager, on_record, ctx);
    pager_stop(&pager);
    return rc;
}

static int pass_walk(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                     const uint32_t* type_lengths, int type_count, uint64_t window,
                     pass_record_fn on_record, void* ctx) {
    return pass_walk_from(data, length, &offset, types, type_lengths, type_count, window, on_record,
                          ctx);
}

/* --- the reader's record table (reader.py `_scan_native`) ------------------------------------- */

typedef struct {
    scan_entry_t* out;
    uint64_t count, capacity;
    uint32_t skip;  /* families whose chunks stay out of the table (bit per family) */
} table_t;

static int table_record(void* ctx, pager_t* pager, const uint8_t* data, const uint8_t* h,
                        uint64_t offset, int family, uint64_t payload, uint64_t payload_length) {
    table_t* t = (table_t*)ctx;
    (void)pager; (void)data; (void)payload; (void)payload_length;
    if (family >= 0 && (t->skip >> family) & 1 && u16_at(h + H_RECORD_TYPE) == RECORD_TYPE_CHUNK)
        return 0;
    if (t->count == t->capacity) return 1;
    scan_entry_t* e = &t->out[t->count++];
    e->offset = offset;
    memcpy(e->header, h, HEADER_SIZE);
    e->content_index = family;
    e->reserved = 0;
    return 0;
}

/* Every record from `offset` into `out` (at most `capacity`): the reader's `records` table,
 * less the chunks of the families `skip` names (bit per family). Returns PASS_OK, PASS_STOPPED
 * when `out` is full, or the chain error; `*next_offset` is where it stopped. Content types are
 * matched for every record, chunks or not, as the table holds. */
int scan_table(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
               const uint32_t* type_lengths, int type_count, uint64_t window, uint32_t skip,
               scan_entry_t* out, uint64_t capacity, uint64_t* out_count, uint64_t* next_offset) {
    table_t t = {out, 0, capacity, skip};
    int rc = pass_walk_from(data, length, &offset, types, type_lengths, type_count, window,
                            table_record, &t);
    *out_count = t.count;
    *next_offset = offset;
    return rc;
}

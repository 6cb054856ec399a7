"""Builds `amdgpu_cli.profile._scan`: the bundle scanner's native fast path (cffi API mode).

The C code does only what is too slow in Python for bundles of hundreds of thousands of records:
walking the record chain, copying fixed-size typed records into contiguous arrays, rendering
JSONL rows from columns (`_rows.c`, for `reports/toolkit.RowLayout`), and `summary`'s whole work
in one pass (`_summary.c`, for `reports/summary_native.py`). It checks
exactly what `reader.py`'s pure-Python path checks, returns the same error codes, and the tests
run both paths on the same bundles. Built by `pip install` (setup.py `cffi_modules`); when it is
absent, the reader uses the Python path.
"""

from pathlib import Path

from cffi import FFI

CDEF = """
typedef struct {
    uint64_t offset;
    uint8_t header[104];
    int32_t content_index;
    uint32_t reserved;
} scan_entry_t;

int scan_table(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
               const uint32_t* type_lengths, int type_count, uint64_t window, uint32_t skip,
               scan_entry_t* out, uint64_t capacity, uint64_t* out_count, uint64_t* next_offset);

int gather_typed(const uint8_t* data, const uint64_t* payload_offsets,
                 const uint64_t* payload_lengths, uint64_t chunk_count, uint32_t size,
                 uint8_t* out, uint64_t capacity, int64_t* out_chunk, uint64_t* out_offset,
                 uint64_t* out_count, uint64_t* out_bad_chunk, uint64_t* out_bad_offset);

typedef struct {
    const uint8_t* base;
    int64_t stride;
    int32_t kind;
    int32_t width;
    int32_t digits;
    int32_t prefix_len;
    const char* prefix;
    const char* strings;
    const uint64_t* string_ends;
    uint64_t string_count;
} row_field_t;

uint64_t row_bound(const row_field_t* fields, int count, uint64_t head_len, uint64_t tail_len);

uint64_t render_rows(const row_field_t* fields, int count, const char* head, uint64_t head_len,
                     const char* tail, uint64_t tail_len, uint64_t bound, uint64_t begin,
                     uint64_t end, char* out, uint64_t capacity, uint64_t* written, int* bad,
                     uint64_t* row_ends);

uint64_t copy_ranges(const uint8_t* src, const uint64_t* starts, const uint64_t* ends, uint64_t n,
                     uint8_t* dst);

void gather_fields(const uint8_t* data, const uint64_t* offsets, uint64_t n,
                   const uint32_t* field_offsets, const uint32_t* field_sizes, int count,
                   uint8_t** outs);

typedef struct {
    uint64_t file_records, session_begin_records, chunk_records, session_end_records;
    uint64_t non_ok_session_end_records, unknown_records, first_non_ok_offset;
    uint64_t unknown_chunks, truncated_chunks, dropped_records;
    uint64_t chunks[24];
    uint64_t records[24];
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

int summary_layout(uint32_t* families, uint32_t* offsets, uint32_t* sizes, int capacity);

int summarize(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
              const uint32_t* type_lengths, int type_count, uint64_t window,
              summary_totals_t* totals, summary_device_t* devices, uint64_t device_capacity);

typedef struct {
    uint32_t row_type, time_domain, physical_device_ordinal, queue_ordinal;
    uint32_t event_type, function_ordinal, command_index, flags;
    uint64_t executable_id, command_buffer_id;
    uint64_t sample_count, invalid_sample_count, operation_count, payload_bytes;
    uint64_t tile_count, tile_duration_sum_ns, first_start_time, last_end_time;
    uint64_t total_duration, minimum_duration, maximum_duration;
} statistics_group_t;

typedef struct {
    uint64_t physical_device_ordinal, count, unaligned, first_offset, last_offset;
} statistics_clock_t;

typedef struct {
    uint64_t executable_id, name_offset;
    uint32_t function_ordinal, name_length;
} statistics_name_t;

typedef struct {
    statistics_group_t* groups;
    uint64_t group_count, group_capacity;
    statistics_clock_t* clocks;
    uint64_t clock_count, clock_capacity;
    statistics_name_t* names;
    uint64_t name_count, name_capacity;
    uint64_t dropped_records;
    uint64_t* group_slots;
    uint64_t group_mask;
    uint64_t* name_slots;
    uint64_t name_mask;
    uint64_t last_group[16];
} statistics_t;

int statistics_layout(uint32_t* families, uint32_t* offsets, int capacity);
int statistics_run(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                   const uint32_t* type_lengths, int type_count, uint64_t window,
                   statistics_t* out);
void statistics_free(statistics_t* s);

typedef struct {
    uint64_t k[5];
    uint64_t count, valid;
    uint64_t earliest, latest, min, max, total;
    uint64_t tile_count, tile_duration_sum_ns;
    double mean, m2;
    uint32_t last_workgroup_count[3], last_workgroup_size[3];
    int64_t key_index;
} projection_group_t;

typedef struct {
    projection_group_t* groups;
    uint64_t count, capacity;
    uint64_t* slots;
    uint64_t mask;
    uint64_t last;
} projection_table_t;

typedef struct {
    int64_t id;
    uint32_t device_id_offset, host_id_offset;
    int check_command_buffers;
    int deferred;
    projection_table_t tables[5];
    uint64_t device_total, device_matched, device_valid;
    uint64_t host_total, host_matched, host_valid;
    uint64_t* functions;
    uint64_t function_count, function_capacity;
    uint64_t* function_slots;
    uint64_t function_mask;
    uint64_t* queues;
    uint64_t queue_count, queue_capacity;
    uint64_t* queue_slots;
    uint64_t queue_mask;
    uint64_t* buffers;
    uint64_t buffer_count, buffer_capacity;
    uint64_t* buffer_slots;
    uint64_t buffer_mask;
    uint64_t last_queue[3];
} projection_t;

int projection_layout(uint32_t* families, uint32_t* offsets, int capacity);
int projection_know_function(projection_t* p, uint64_t device, uint64_t executable,
                             uint64_t function, int64_t key_index);
int projection_know_queue(projection_t* p, uint64_t device, uint64_t queue, uint64_t stream);
int projection_know_command_buffer(projection_t* p, uint64_t id);
int projection_run(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                   const uint32_t* type_lengths, int type_count, uint64_t window,
                   projection_t* p);
void projection_free(projection_t* p);
int projection_scan(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                    const uint32_t* type_lengths, int type_count, uint64_t window, uint32_t skip,
                    scan_entry_t* out, uint64_t capacity, uint64_t* out_count,
                    uint64_t* next_offset, projection_t* p);
"""

SOURCE = r"""
#include <stdint.h>
#include <string.h>

typedef struct {
    uint64_t offset;
    uint8_t header[104];
    int32_t content_index;
    uint32_t reserved;
} scan_entry_t;

/* Error codes shared with reader.py (ScanError). */
enum { SCAN_OK = 0, SCAN_FULL = 1, SCAN_TOO_SMALL = 2, SCAN_FLAGS = 3, SCAN_PAST_END = 4,
       SCAN_HEADER_LENGTH = 5, SCAN_LENGTHS = 6, TYPED_TRUNCATED = 7, TYPED_LENGTH = 8 };

static uint32_t rd32(const uint8_t* p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* Fields of records at `offsets`, one contiguous column each: field k (at `field_offsets[k]`
 * in a record, `field_sizes[k]` bytes) of record i lands at outs[k] + i * field_sizes[k]. Each
 * record is read once, however many fields are taken. */
void gather_fields(const uint8_t* data, const uint64_t* offsets, uint64_t n,
                   const uint32_t* field_offsets, const uint32_t* field_sizes, int count,
                   uint8_t** outs) {
    for (uint64_t i = 0; i < n; ++i) {
        const uint8_t* r = data + offsets[i];
        for (int k = 0; k < count; ++k) {
            uint32_t size = field_sizes[k];
            const uint8_t* src = r + field_offsets[k];
            uint8_t* dst = outs[k] + i * size;
            switch (size) {  /* constant sizes: the copies become plain loads and stores */
                case 1: memcpy(dst, src, 1); break;
                case 2: memcpy(dst, src, 2); break;
                case 4: memcpy(dst, src, 4); break;
                case 8: memcpy(dst, src, 8); break;
                default: memcpy(dst, src, size); break;
            }
        }
    }
}

int gather_typed(const uint8_t* data, const uint64_t* payload_offsets,
                 const uint64_t* payload_lengths, uint64_t chunk_count, uint32_t size,
                 uint8_t* out, uint64_t capacity, int64_t* out_chunk, uint64_t* out_offset,
                 uint64_t* out_count, uint64_t* out_bad_chunk, uint64_t* out_bad_offset) {
    uint64_t n = 0;
    for (uint64_t c = 0; c < chunk_count; ++c) {
        const uint8_t* p = data + payload_offsets[c];
        uint64_t length = payload_lengths[c], o = 0;
        while (o < length) {
            uint64_t remaining = length - o;
            *out_bad_chunk = c;
            *out_bad_offset = o;
            if (remaining < size) { *out_count = n; return TYPED_TRUNCATED; }
            uint32_t record_length = rd32(p + o);
            if (record_length < size || record_length > remaining) { *out_count = n; return TYPED_LENGTH; }
            if (n == capacity) { *out_count = n; return SCAN_FULL; }
            if (out) memcpy(out + n * (uint64_t)size, p + o, size);  /* NULL: locate only */
            out_chunk[n] = (int64_t)c;
            out_offset[n] = payload_offsets[c] + o;
            ++n;
            o += record_length;
        }
    }
    *out_count = n;
    return SCAN_OK;
}
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
# The JSONL row renderer (reports/toolkit.py's RowLayout) and the one-pass reducers (the pass in
# _pass.c; summary's and statistics' reductions) are plain C in their own files, one unit here.
_HERE = Path(__file__).resolve().parent
_C_FILES = ("_rows.c", "_pass.c", "_summary.c", "_statistics.c", "_projection.c")
ffibuilder.set_source("amdgpu_cli.profile._scan",
                      SOURCE + "".join((_HERE / name).read_text() for name in _C_FILES),
                      extra_compile_args=["-O2", "-pthread"],
                      extra_link_args=["-pthread"])

if __name__ == "__main__":
    ffibuilder.compile(verbose=False)

/* The native profile module's interface (amdgpu_cli.profile._scan): every type and function
 * Python calls, read by _scan_build.py both as cffi's declarations and as the head of the C unit,
 * so the structs have one definition. Plain declarations only: cffi parses this file. */

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
    int32_t width;               /* element bytes: 1, 2, 4 or 8 */
    int32_t digits;              /* ROW_DOUBLE: decimals */
    int32_t prefix_len;
    const char* prefix;
    const char* strings;         /* ROW_STR: the texts back to back */
    const uint64_t* string_ends; /* ROW_STR: end offset of each text */
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
    uint64_t chunks[24];   /* per family of schema.CONTENT_TYPES */
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
    uint64_t* group_slots;   /* open addressing: group index + 1, 0 when empty */
    uint64_t group_mask;
    uint64_t* name_slots;
    uint64_t name_mask;
    uint64_t last_group[16];  /* per row type: the row touched last, + 1 */
} statistics_t;

int statistics_layout(uint32_t* families, uint32_t* offsets, int capacity);
int statistics_run(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                   const uint32_t* type_lengths, int type_count, uint64_t window,
                   statistics_t* out);
void statistics_free(statistics_t* s);

/* Rows of `width` words kept in insertion order, the first `keyed` words of each its key, with an
 * open-addressing index (row + 1 per slot, 0 empty; at most half full). _pass.c's key_rows_*. */
typedef struct {
    uint64_t* rows;
    uint64_t count, capacity;
    uint64_t* slots;
    uint64_t mask;
} key_rows_t;

/* One dispatch (device event or host span) as explain's top-dispatch table keeps it. */
typedef struct {
    uint64_t duration;   /* ticks (device) or int64 ns (host) */
    uint64_t event_id, submission_id, command_buffer_id, executable_id, stream_id, tile_count;
    int64_t tile_duration_sum_ns;
    uint32_t physical_device_ordinal, queue_ordinal, function_ordinal, command_index;
} top_dispatch_t;

typedef struct {
    uint64_t k[5];   /* function: device, executable, function; execution: command buffer,
                        submission, device, queue, stream; submission: device, queue, stream,
                        submission */
    uint64_t count, valid;
    uint64_t earliest, latest, min, max, total;  /* host tables: int64 values in these bits */
    uint64_t tile_count, tile_duration_sum_ns;
    double mean, m2;
    uint32_t last_workgroup_count[3], last_workgroup_size[3];
    int64_t key_index;
} projection_group_t;

typedef struct {
    projection_group_t* groups;
    uint64_t count, capacity;
    uint64_t* slots;   /* group index + 1, 0 when empty */
    uint64_t mask;
    uint64_t last;     /* the group touched last, + 1 */
} projection_table_t;

/* One matched dispatch (a device event or a host span), as --dispatch_events prints it. */
typedef struct {
    uint64_t event_id, submission_id, command_buffer_id, executable_id, stream_id;
    uint64_t start, end;             /* ticks, or host ns (int64 bits) */
    uint64_t duration;               /* end - start where valid, else 0 */
    uint64_t duration_ns;            /* device: fitted by projection_events_fit; host: duration */
    uint64_t tile_count;
    int64_t tile_duration_sum_ns;
    uint64_t function;               /* row of projection_t.functions (its key) */
    uint32_t physical_device_ordinal, queue_ordinal, command_index, function_ordinal, flags,
             status_code;
    uint32_t workgroup_count[3], workgroup_size[3];
    uint8_t host, valid, clock_fit_available, reserved[5];
} projection_event_t;

typedef struct {
    /* inputs */
    int64_t id;                      /* --id, or -1 */
    uint32_t device_id_offset, host_id_offset;  /* the id field of each event layout */
    int check_command_buffers;       /* command mode: every command buffer must be known */
    int deferred;                    /* no --filter: the known sets below collect what events
                                        name instead, for the caller to check against metadata */
    uint32_t tables_left_out;        /* bit per TABLE_*: tables the report does not print */
    /* outputs */
    projection_table_t tables[5];    /* TABLE_DEVICE_FUNCTION ... TABLE_HOST_EXECUTION */
    uint64_t device_total, device_matched, device_valid;
    uint64_t host_total, host_matched, host_valid;
    /* with tables left out: totals over every valid matched event (their limits bound all) */
    uint64_t device_tick_sum, host_ns_sum, host_tile_count_sum, host_tile_ns_sum;
    /* known metadata (filled by projection_know_*), or, deferred, what the events named */
    key_rows_t functions;            /* (device, executable, function; key index) rows */
    key_rows_t queues;               /* (device, queue, stream) rows */
    key_rows_t buffers;              /* command buffer ids */
    uint64_t last_queue[3];          /* the queue found last (all ones: none yet) */
    /* explain: the longest valid matched events of each domain, in IREE's replacement order */
    int keep_top;
    top_dispatch_t top_device[8], top_host[8];
    uint32_t top_device_count, top_host_count;
    /* --dispatch_events: every matched event, in file order */
    int keep_events;
    projection_event_t* events;
    uint64_t event_count, event_capacity;
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
void projection_events_fit(projection_t* p, uint32_t device, uint64_t tick_span,
                           uint64_t time_span);
int projection_scan(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                    const uint32_t* type_lengths, int type_count, uint64_t window, uint32_t skip,
                    scan_entry_t* out, uint64_t capacity, uint64_t* out_count,
                    uint64_t* next_offset, projection_t* p);

/* explain: one pass = the metadata record table, summary's health counts and checks, the dispatch
 * projection (with the top dispatches), queue-operation counts, memory high-water marks. */
#define EXPLAIN_MEMORY_POOL_RESERVATION 8   /* schema.Flags.MEMORY_POOL_RESERVATION */

typedef struct {
    uint64_t physical_device_ordinal;
    uint64_t bytes[6], high_water_bytes[6], open_bytes[6], close_bytes[6];  /* memory.py's
                                                                 DEVICE_BALANCES, in its order */
    uint64_t pool_waits;
} memory_device_t;

typedef struct {
    projection_t projection;
    summary_totals_t totals;
    uint64_t queue_events, queue_type_counts[12], queue_type_bytes[12], strategies[4];
    key_rows_t event_queues;         /* (device, queue, stream) of the queue events */
    uint64_t last_event_queue[3];
    uint64_t memory_events;
    memory_device_t memory_devices[64];
    uint64_t memory_device_count;
    key_rows_t materialized;         /* (device, allocation, pool; open count, bytes) */
    uint32_t dispatch_chunk_devices[64];
    uint64_t dispatch_chunk_device_count;
} explain_t;

int explain_layout(uint32_t* families, uint32_t* offsets, int capacity);
int explain_run(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                const uint32_t* type_lengths, int type_count, uint64_t window, explain_t* e);
int explain_scan(const uint8_t* data, uint64_t length, uint64_t offset, const uint8_t* types,
                 const uint32_t* type_lengths, int type_count, uint64_t window, uint32_t skip,
                 scan_entry_t* out, uint64_t capacity, uint64_t* out_count,
                 uint64_t* next_offset, explain_t* e);
void explain_free(explain_t* e);

uint64_t balances_run(const int64_t* group, const uint8_t* is_open, const uint64_t* length,
                      uint64_t n, uint64_t count, uint64_t* out, int64_t* prev_count,
                      int64_t* prev_bytes);

/* The helper's own types, shared by its cffi declarations (_dispatch_build.py) and _dispatch_helper.c.
 * Plain declarations only: cffi parses this file. */

typedef struct lx_pool lx_pool_t;

typedef struct {
    int32_t status;          /* 0 ok; kernel's return value; -1 local memory allocation failed */
    uint32_t workgroup_id_x;
    uint32_t workgroup_id_y;
    uint32_t workgroup_id_z;
    uint64_t workgroups_run;
    uint32_t step;           /* lx_program_run: the failing step */
    uint64_t tile_ns;        /* lx_dispatch with `timed`: workgroup run times summed over workers */
} lx_dispatch_result_t;

/* One dispatch of a program (see lx_program_run). */
typedef struct {
    void* function;
    const iree_hal_executable_environment_v0_t* environment;
    const uint32_t* constants;
    uint16_t constant_count;
    uint8_t binding_count;
    uint8_t sequential;      /* runs on the calling thread only */
    uint32_t local_memory_size;
    uint32_t workgroup_size[3];
    uint32_t workgroup_count[3];
    uint32_t first_binding;  /* its bindings: [first_binding, first_binding + binding_count) */
    uint32_t cost_ns;        /* written by lx_program_run: serial cost of its last run (a hint) */
} lx_step_t;

/* A step's binding: `source` indexes the addresses/lengths given to each run. */
typedef struct {
    uint32_t source;
    uint32_t whole;          /* 1: the rest of the source from `offset` (length ignored) */
    uint64_t offset;
    uint64_t length;
} lx_step_binding_t;

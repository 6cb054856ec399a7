/* The CPU driver's native helper (amdgpu_cli.drivers.local._dispatch, built by
 * _dispatch_build.py with cffi): pages for loaded code, the executable environment, and the
 * worker pool that runs a dispatch's workgroups and a program's steps. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <xmmintrin.h>
#endif
#include "_dispatch_abi.h"
#include "_dispatch.h"


/* ---- pages ---------------------------------------------------------------------------- */

void* lx_map(size_t size, int* out_errno) {
    void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { *out_errno = errno; return NULL; }
    *out_errno = 0;
    return p;
}
int lx_protect(void* addr, size_t size, int prot) { return mprotect(addr, size, prot) ? errno : 0; }
int lx_unmap(void* addr, size_t size) { return munmap(addr, size) ? errno : 0; }
size_t lx_page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* ---- environment ------------------------------------------------------------------------ */

/* Every import call goes through here (IREE uses the thunk for FFI/ABI conversion; we call
   straight through). */
static int lx_import_thunk(iree_hal_executable_import_v0_t fn, void* params, void* context,
                           void* reserved) {
    return fn(params, context, reserved);
}

/* Host functions an executable may import by name. IREE 3.13.0 llvm-cpu kernels link their
   ukernels and math in, so none are needed today; the table is where new ones go. */
typedef struct { const char* name; void* fn; } lx_host_import_t;
static const lx_host_import_t lx_host_imports[] = { { NULL, NULL } };

void* lx_host_import(const char* name) {
    for (const lx_host_import_t* e = lx_host_imports; e->name; ++e) {
        if (strcmp(e->name, name) == 0) return e->fn;
    }
    return NULL;
}

#if defined(__x86_64__)
typedef struct { uint32_t eax, ebx, ecx, edx; } lx_regs_t;
static lx_regs_t lx_cpuid(uint32_t leaf, uint32_t sub) {
    lx_regs_t r = {0, 0, 0, 0};
    __cpuid_count(leaf, sub, r.eax, r.ebx, r.ecx, r.edx);
    return r;
}
static lx_regs_t lx_cpuid_checked(uint32_t leaf, uint32_t sub, uint32_t max_base, uint32_t max_ext) {
    lx_regs_t zero = {0, 0, 0, 0};
    if (leaf < 0x80000000u ? leaf > max_base : leaf > max_ext) return zero;
    if (sub && sub > lx_cpuid(leaf, 0).eax) return zero;
    return lx_cpuid(leaf, sub);
}
#define LX_BIT(out, dst, reg, src) do { if ((reg) & (1u << (src))) (out) |= 1ull << (dst); } while (0)
static uint64_t lx_x86_64_features(void) {
    uint32_t max_base = lx_cpuid(0, 0).eax;
    uint32_t max_ext = lx_cpuid(0x80000000u, 0).eax;
    if (max_ext < 0x80000000u) max_ext = 0;
    lx_regs_t l1 = lx_cpuid_checked(1, 0, max_base, max_ext);
    lx_regs_t l7 = lx_cpuid_checked(7, 0, max_base, max_ext);
    lx_regs_t l7s1 = lx_cpuid_checked(7, 1, max_base, max_ext);
    lx_regs_t ld = lx_cpuid_checked(0xD, 0, max_base, max_ext);
    lx_regs_t le1 = lx_cpuid_checked(0x80000001u, 0, max_base, max_ext);
    uint64_t o = 0;
    LX_BIT(o, 0, l1.ecx, 0); LX_BIT(o, 1, l1.ecx, 9); LX_BIT(o, 2, l1.ecx, 19);
    LX_BIT(o, 3, l1.ecx, 20); LX_BIT(o, 4, le1.ecx, 6);
    if ((ld.eax & 0x7) == 0x7) {            /* OS saves YMM state */
        LX_BIT(o, 10, l1.ecx, 28); LX_BIT(o, 11, l1.ecx, 12); LX_BIT(o, 12, le1.ecx, 16);
        LX_BIT(o, 13, le1.ecx, 11); LX_BIT(o, 14, l1.ecx, 29); LX_BIT(o, 15, l7.ebx, 5);
    }
    if ((ld.eax & 0xE7) == 0xE7) {          /* OS saves ZMM state */
        LX_BIT(o, 20, l7.ebx, 16); LX_BIT(o, 21, l7.ebx, 28); LX_BIT(o, 22, l7.ebx, 31);
        LX_BIT(o, 23, l7.ebx, 17); LX_BIT(o, 24, l7.ebx, 30); LX_BIT(o, 25, l7.ebx, 21);
        LX_BIT(o, 26, l7.ecx, 1); LX_BIT(o, 27, l7.ecx, 14); LX_BIT(o, 28, l7.ecx, 11);
        LX_BIT(o, 29, l7.ecx, 6); LX_BIT(o, 30, l7.ecx, 12); LX_BIT(o, 31, l7s1.eax, 5);
        LX_BIT(o, 32, l7.edx, 23);
    }
    if ((ld.eax & 0x60000) == 0x60000) {    /* OS saves AMX tile state */
        LX_BIT(o, 50, l7.edx, 24); LX_BIT(o, 51, l7.edx, 25); LX_BIT(o, 52, l7.edx, 22);
    }
    return o;
}
#endif

void lx_environment_init(iree_hal_executable_environment_v0_t* env) {
    memset(env, 0, sizeof(*env));
    env->import_thunk = lx_import_thunk;
#if defined(__x86_64__)
    env->processor.data[0] = lx_x86_64_features();
#endif
}

typedef const iree_hal_executable_library_header_t** (*lx_query_fn_t)(
    uint32_t, const iree_hal_executable_environment_v0_t*);

const iree_hal_executable_library_header_t** lx_call_query(
        void* query_fn, uint32_t max_version, const iree_hal_executable_environment_v0_t* env) {
    return ((lx_query_fn_t)query_fn)(max_version, env);
}

void lx_call_init(void* fn) { ((void (*)(void))fn)(); }

/* ---- dispatch ----------------------------------------------------------------------------- */

typedef struct {
    const iree_hal_executable_environment_v0_t* env;
    iree_hal_executable_dispatch_v0_t fn;
    const iree_hal_executable_dispatch_state_v0_t* state;
    uint32_t local_memory_size;
    uint64_t total;
    uint64_t next;       /* atomic: next linear workgroup index */
    uint64_t run;        /* atomic: workgroups completed */
    uint32_t workers;    /* atomic: threads that ran at least one workgroup */
    int32_t failed;      /* atomic: set once by the first failing worker */
    int32_t timed;       /* time every workgroup (a profiled dispatch) */
    uint64_t tile_ns;    /* atomic: summed workgroup times when timed */
    lx_dispatch_result_t error;
} lx_job_t;

static uint64_t lx_now_ns(void);

static void lx_fail(lx_job_t* job, int32_t status, const iree_hal_executable_workgroup_state_v0_t* wg) {
    int32_t expected = 0;
    if (__atomic_compare_exchange_n(&job->failed, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        job->error.status = status;
        if (wg) {
            job->error.workgroup_id_x = wg->workgroup_id_x;
            job->error.workgroup_id_y = wg->workgroup_id_y;
            job->error.workgroup_id_z = wg->workgroup_id_z;
        }
    }
}

/* Claims workgroups until none are left. The local-memory arena is allocated (and zeroed) only
 * once a workgroup was claimed: a worker that joins a finished job costs nothing. */
static void lx_run_worker_body(lx_job_t* job, uint32_t worker) {
    const iree_hal_executable_dispatch_state_v0_t* s = job->state;
    iree_hal_executable_workgroup_state_v0_t wg;
    memset(&wg, 0, sizeof(wg));
    wg.processor_id = worker;
    wg.local_memory_size = job->local_memory_size;
    void* arena = NULL;
    const uint64_t cx = s->workgroup_count_x, cy = s->workgroup_count_y;
    uint64_t done = 0, tile_ns = 0;
    for (;;) {
        if (__atomic_load_n(&job->failed, __ATOMIC_RELAXED)) break;
        uint64_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (i >= job->total) break;
        if (job->local_memory_size && !arena) {
            size_t size = ((size_t)job->local_memory_size + 63) & ~(size_t)63;
            arena = aligned_alloc(64, size);
            if (!arena) { lx_fail(job, -1, NULL); break; }
            memset(arena, 0, size);
            wg.local_memory = arena;
        }
        wg.workgroup_id_x = (uint32_t)(i % cx);
        wg.workgroup_id_y = (uint32_t)((i / cx) % cy);
        wg.workgroup_id_z = (uint16_t)(i / (cx * cy));
        uint64_t started = job->timed ? lx_now_ns() : 0;
        int rc = job->fn(job->env, s, &wg);
        if (job->timed) tile_ns += lx_now_ns() - started;
        if (rc != 0) { lx_fail(job, rc, &wg); break; }
        ++done;
    }
    if (tile_ns) __atomic_fetch_add(&job->tile_ns, tile_ns, __ATOMIC_RELAXED);
    if (done) {
        __atomic_fetch_add(&job->run, done, __ATOMIC_RELAXED);
        __atomic_fetch_add(&job->workers, 1, __ATOMIC_RELAXED);
    }
    free(arena);
}

/* Kernels run with denormals flushed to zero (MXCSR FTZ and DAZ), as IREE's CPU runtime runs
 * them; the thread's own mode is restored afterwards. */
static void lx_run_worker(lx_job_t* job, uint32_t worker) {
    const unsigned int saved_csr = _mm_getcsr();
    _mm_setcsr(saved_csr | 0x8040u);
    lx_run_worker_body(job, worker);
    _mm_setcsr(saved_csr);
}

/* ---- worker pool ----------------------------------------------------------------------------
 * Handoff without locks: the caller publishes a job by storing `job` and bumping `generation`;
 * workers join it by incrementing `active` and then re-reading `job`. The caller, once its own
 * share is claimed, clears `job` and waits for `active` to drain, so a job (on the caller's stack)
 * is never touched after it returns; these pairs are seq_cst (store one word, then load the
 * other), so either the worker sees NULL or the caller sees the worker in `active`. Waiting is
 * spin-then-block: bounded `pause` spinning (an idle worker catches the next dispatch of a
 * program, or the next call, within microseconds), then a futex sleep, so idle workers and a
 * caller waiting on a long workgroup use no CPU. `sleepers` / `waiting` say who to wake. */

#define LX_IDLE_SPIN_NS 50000   /* a worker waits this long for the next job before sleeping */
#define LX_DRAIN_SPIN_NS 50000  /* the caller waits this long for workers before sleeping */
/* A program step whose last run cost less than this (serial time) runs on the calling thread:
 * below it, waking a worker (a futex wake, then tens of microseconds until it is scheduled)
 * costs more than the worker could take off the caller. */
#define LX_INLINE_NS 20000

struct lx_pool {
    pthread_mutex_t run_lock;      /* one caller at a time: a dispatch or a whole program */
    uint32_t worker_count;         /* including the caller's thread */
    uint32_t thread_count;         /* threads actually started */
    pthread_t* threads;
    _Alignas(64) lx_job_t* job;    /* atomic: the published job, NULL between jobs */
    uint32_t generation;           /* atomic futex word: bumped per job and at shutdown */
    uint32_t sleepers;             /* atomic: workers blocked on `generation` */
    int32_t shutdown;              /* atomic */
    _Alignas(64) uint32_t active;  /* atomic futex word: workers inside a job */
    uint32_t waiting;              /* atomic: the caller is blocked on `active` */
};

static void lx_futex_wait(uint32_t* word, uint32_t value) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}
static void lx_futex_wake(uint32_t* word, int count) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}
static uint64_t lx_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
static inline void lx_pause(void) {
#if defined(__x86_64__)
    _mm_pause();
#endif
}

/* Spins until *word != value or `budget_ns` passed; returns the last value read. */
static uint32_t lx_spin_while(const uint32_t* word, uint32_t value, uint64_t budget_ns) {
    uint64_t deadline = 0;
    for (uint32_t i = 0;; ++i) {
        uint32_t now = __atomic_load_n(word, __ATOMIC_ACQUIRE);
        if (now != value) return now;
        if ((i & 63) == 63) {   /* the clock read is the costly part: every 64 pauses */
            uint64_t t = lx_now_ns();
            if (!deadline) deadline = t + budget_ns;
            else if (t >= deadline) return now;
        }
        lx_pause();
    }
}

/* A worker: the next generation after `seen` (spin, then sleep). */
static uint32_t lx_next_generation(lx_pool_t* pool, uint32_t seen) {
    uint32_t gen = lx_spin_while(&pool->generation, seen, LX_IDLE_SPIN_NS);
    while (gen == seen) {
        __atomic_fetch_add(&pool->sleepers, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&pool->generation, __ATOMIC_SEQ_CST) == seen)
            lx_futex_wait(&pool->generation, seen);
        __atomic_fetch_sub(&pool->sleepers, 1, __ATOMIC_SEQ_CST);
        gen = __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE);
    }
    return gen;
}

/* Publishes `job`; of the sleeping workers, wakes no more than could get a workgroup besides
 * the caller's (the others see the job only if they are spinning, or at the next wake). */
static void lx_publish(lx_pool_t* pool, lx_job_t* job) {
    __atomic_store_n(&pool->job, job, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&pool->generation, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&pool->sleepers, __ATOMIC_SEQ_CST)) {
        uint64_t wanted = job->total - 1;
        lx_futex_wake(&pool->generation, wanted < INT32_MAX ? (int)wanted : INT32_MAX);
    }
}

/* The caller: unpublish the job and wait until no worker is inside it. */
static void lx_retire(lx_pool_t* pool) {
    __atomic_store_n(&pool->job, NULL, __ATOMIC_SEQ_CST);
    uint32_t active = __atomic_load_n(&pool->active, __ATOMIC_SEQ_CST);
    if (!active) return;
    active = lx_spin_while(&pool->active, active, LX_DRAIN_SPIN_NS);
    while (active) {
        __atomic_store_n(&pool->waiting, 1, __ATOMIC_SEQ_CST);
        active = __atomic_load_n(&pool->active, __ATOMIC_SEQ_CST);
        if (active) lx_futex_wait(&pool->active, active);
        active = __atomic_load_n(&pool->active, __ATOMIC_SEQ_CST);
    }
    __atomic_store_n(&pool->waiting, 0, __ATOMIC_RELAXED);
}

typedef struct { lx_pool_t* pool; uint32_t index; } lx_worker_arg_t;

static void* lx_worker_main(void* p) {
    lx_worker_arg_t arg = *(lx_worker_arg_t*)p;
    free(p);
    lx_pool_t* pool = arg.pool;
    uint32_t seen = 0;   /* generation 0 is never a job: the pool starts there */
    for (;;) {
        seen = lx_next_generation(pool, seen);
        if (__atomic_load_n(&pool->shutdown, __ATOMIC_ACQUIRE)) break;
        __atomic_fetch_add(&pool->active, 1, __ATOMIC_SEQ_CST);
        lx_job_t* job = __atomic_load_n(&pool->job, __ATOMIC_SEQ_CST);
        if (job) lx_run_worker(job, arg.index);
        if (__atomic_sub_fetch(&pool->active, 1, __ATOMIC_SEQ_CST) == 0
                && __atomic_load_n(&pool->waiting, __ATOMIC_SEQ_CST)) {
            lx_futex_wake(&pool->active, 1);
        }
    }
    return NULL;
}

lx_pool_t* lx_pool_create(uint32_t worker_count) {
    if (worker_count < 1) worker_count = 1;
    if (worker_count > 255) worker_count = 255;   /* max_concurrency is a u8 */
    lx_pool_t* pool = aligned_alloc(64, (sizeof(*pool) + 63) & ~(size_t)63);
    if (!pool) return NULL;
    memset(pool, 0, sizeof(*pool));
    pthread_mutex_init(&pool->run_lock, NULL);
    pool->threads = calloc(worker_count, sizeof(pthread_t));
    if (!pool->threads) { free(pool); return NULL; }
    pool->worker_count = 1;
    for (uint32_t i = 1; i < worker_count; ++i) {
        lx_worker_arg_t* arg = malloc(sizeof(*arg));
        if (!arg) break;
        arg->pool = pool;
        arg->index = i;
        if (pthread_create(&pool->threads[pool->thread_count], NULL, lx_worker_main, arg) != 0) {
            free(arg);
            break;
        }
        pool->thread_count++;
        pool->worker_count++;
    }
    return pool;
}

void lx_pool_destroy(lx_pool_t* pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->run_lock);   /* waits out a caller still running */
    __atomic_store_n(&pool->shutdown, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&pool->generation, 1, __ATOMIC_SEQ_CST);
    lx_futex_wake(&pool->generation, INT32_MAX);
    pthread_mutex_unlock(&pool->run_lock);
    for (uint32_t i = 0; i < pool->thread_count; ++i) pthread_join(pool->threads[i], NULL);
    pthread_mutex_destroy(&pool->run_lock);
    free(pool->threads);
    free(pool);
}

uint32_t lx_pool_size(const lx_pool_t* pool) { return pool ? pool->worker_count : 1; }

/* Runs one dispatch to completion: inline when there is no pool to share it with (or one
 * workgroup), else on the pool, whose run_lock the caller holds. `*workers`: the threads that
 * ran workgroups. */
static int lx_run_job(lx_pool_t* pool, const iree_hal_executable_environment_v0_t* env,
                      void* dispatch_fn, const iree_hal_executable_dispatch_state_v0_t* state,
                      uint32_t local_memory_size, lx_dispatch_result_t* out, uint32_t* workers,
                      int timed) {
    lx_job_t job;
    memset(&job, 0, sizeof(job));
    job.timed = timed;
    job.env = env;
    job.fn = (iree_hal_executable_dispatch_v0_t)dispatch_fn;
    job.state = state;
    job.local_memory_size = local_memory_size;
    job.total = (uint64_t)state->workgroup_count_x * state->workgroup_count_y * state->workgroup_count_z;
    *workers = 0;
    if (job.total == 0) { memset(out, 0, sizeof(*out)); return 0; }
    if (!pool || pool->thread_count == 0 || job.total == 1) {
        lx_run_worker(&job, 0);
    } else {
        lx_publish(pool, &job);
        lx_run_worker(&job, 0);
        lx_retire(pool);
    }
    *out = job.error;
    out->workgroups_run = job.run;
    out->tile_ns = job.tile_ns;
    *workers = job.workers;
    return job.error.status;
}

/* Takes the pool's run_lock unless there is no pool to share work with; 1 when taken. */
static int lx_pool_lock(lx_pool_t* pool) {
    if (!pool || pool->thread_count == 0) return 0;
    pthread_mutex_lock(&pool->run_lock);
    return 1;
}

int lx_dispatch(lx_pool_t* pool, const iree_hal_executable_environment_v0_t* env,
                void* dispatch_fn, const iree_hal_executable_dispatch_state_v0_t* state,
                uint32_t local_memory_size, lx_dispatch_result_t* out, int timed) {
    int locked = lx_pool_lock(pool);
    uint32_t workers;
    int status = lx_run_job(pool, env, dispatch_fn, state, local_memory_size, out, &workers,
                            timed);
    if (locked) pthread_mutex_unlock(&pool->run_lock);
    out->step = 0;
    return status;
}

/* The dispatch state of `step`: its binding pointers/lengths written to `pointers`/`lengths`
 * from `sources` ((address, length) pairs): a binding's address is its source's address plus
 * its offset, also when its length is 0 (IREE maps a zero-length range to base + offset, and
 * compiled kernels address their bindings from it), and a `whole` binding takes the rest of
 * its source. program.py checked every range against its source before the call, so nothing
 * here can underflow or point past a source. */
static void lx_step_state(const lx_step_t* step, const lx_step_binding_t* bindings,
                          const uint64_t* sources, uint8_t max_concurrency, void** pointers,
                          size_t* lengths, iree_hal_executable_dispatch_state_v0_t* state) {
    for (uint32_t b = 0; b < step->binding_count; ++b) {
        const lx_step_binding_t* binding = &bindings[step->first_binding + b];
        const uint64_t* source = &sources[2 * binding->source];
        uint64_t length = binding->whole ? source[1] - binding->offset : binding->length;
        lengths[b] = (size_t)length;
        pointers[b] = (void*)(uintptr_t)(source[0] + binding->offset);
    }
    memset(state, 0, sizeof(*state));
    state->workgroup_size_x = step->workgroup_size[0];
    state->workgroup_size_y = step->workgroup_size[1];
    state->workgroup_size_z = (uint16_t)step->workgroup_size[2];
    state->constant_count = step->constant_count;
    state->workgroup_count_x = step->workgroup_count[0];
    state->workgroup_count_y = step->workgroup_count[1];
    state->workgroup_count_z = (uint16_t)step->workgroup_count[2];
    state->max_concurrency = step->sequential ? 1 : max_concurrency;
    state->binding_count = step->binding_count;
    state->constants = step->constants;
    state->binding_ptrs = pointers;
    state->binding_lengths = lengths;
}

/* Runs `steps` in order, each to completion before the next starts (the barrier every recorded
 * dispatch is followed by on an in-order queue). A step runs inline when its last run was cheap
 * (LX_INLINE_NS); its `cost_ns` is the one field written (relaxed: concurrent runs of one
 * program may race on it harmlessly). The pool is taken at the first step that uses it and held
 * to the end, so no other thread's work lands between two pooled steps, while inline steps need
 * no lock and cheap programs from several threads run side by side. The first failing step
 * stops the program: `out->step` names it. Returns its status (0: all ran). */
int lx_program_run(lx_pool_t* pool, uint8_t max_concurrency, lx_step_t* steps,
                   uint32_t step_count, const lx_step_binding_t* bindings,
                   const uint64_t* sources, lx_dispatch_result_t* out, uint64_t* times) {
    /* times (profiling; NULL: untimed): per step its start and end (CLOCK_MONOTONIC ns) and the
     * run times of its workgroups summed over the workers. */
    void* pointers[256];   /* binding_count is a u8 */
    size_t lengths[256];
    iree_hal_executable_dispatch_state_v0_t state;
    uint64_t workgroups_run = 0;
    int status = 0;
    int locked = 0;
    memset(out, 0, sizeof(*out));
    for (uint32_t i = 0; i < step_count; ++i) {
        lx_step_t* step = &steps[i];
        lx_step_state(step, bindings, sources, max_concurrency, pointers, lengths, &state);
        uint32_t cost = __atomic_load_n(&step->cost_ns, __ATOMIC_RELAXED);
        lx_pool_t* step_pool = step->sequential || (cost && cost < LX_INLINE_NS) ? NULL : pool;
        if (step_pool && !locked) locked = lx_pool_lock(step_pool);
        uint32_t workers;
        uint64_t start = lx_now_ns();
        status = lx_run_job(step_pool, step->environment, step->function, &state,
                            step->local_memory_size, out, &workers, times != NULL);
        uint64_t end = lx_now_ns();
        if (times) {
            times[3 * i] = start;
            times[3 * i + 1] = end;
            times[3 * i + 2] = out->tile_ns;
        }
        uint64_t serial = (end - start) * (workers ? workers : 1);
        __atomic_store_n(&step->cost_ns, serial > UINT32_MAX ? UINT32_MAX : (uint32_t)serial,
                         __ATOMIC_RELAXED);
        workgroups_run += out->workgroups_run;
        if (status) { out->step = i; break; }
    }
    if (locked) pthread_mutex_unlock(&pool->run_lock);
    out->workgroups_run = workgroups_run;
    return status;
}

"""mockcuda: a libcuda stand-in for tests without a GPU, built from the C source below.

Host memory for every heap; copies and fills run on the host at once; kernel launches are logged
(MOCKCUDA_LOG), not run, and keep the mock GPU "busy" for MOCKCUDA_NS_PER_WORKGROUP per
workgroup (events read that clock; synchronizing waits for it); stream capture records launches
into graphs that a graph launch logs again; MOCKCUDA_DEVICES GPUs (default 1), every pair able to
reach each other's memory unless MOCKCUDA_NO_PEERS is set. The mock checks what it can of each
call (context current, PTX NUL-terminated and holding the kernel, parameters pointing into live
allocations). Used by tests/drivers/test_cuda_pure.py and the HAL conformance suite.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

MOCKCUDA_C = r"""/* mockcuda: a libcuda stand-in for tests without a GPU. Host memory for every heap; copies and
   fills run on the host at once; kernel launches are logged (MOCKCUDA_LOG), not run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct { char bytes[16]; } CUuuid;
typedef struct { int device; int refs; } ctx_t;
typedef struct { char* image; } module_t;
typedef struct { char name[256]; int nparams; char kinds[64]; } func_t;
typedef struct { int capturing; char* captured; size_t captured_length; } stream_t;
typedef struct { char* lines; } graph_t;

#define OK 0
#define E_INVALID_VALUE 1
#define E_NOT_INITIALIZED 3
#define E_INVALID_DEVICE 101
#define E_INVALID_CONTEXT 201
#define E_INVALID_PTX 218
#define E_INVALID_HANDLE 400
#define E_NOT_FOUND 500

static int g_init = 0;
static ctx_t g_ctx[8];
static __thread ctx_t* t_current = NULL;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct alloc { uintptr_t ptr; size_t size; int kind; struct alloc* next; } alloc_t;
static alloc_t* g_allocs = NULL;
static long g_live = 0;
static long long g_busy_until_ns = 0;
static long g_events = 0;

static long long host_now(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ll + t.tv_nsec;
}
/* The mock GPU clock: the host clock, or later while launched work is still "running". */
static long long gpu_now(void) {
  long long now = host_now();
  return now > g_busy_until_ns ? now : g_busy_until_ns;
}
static void wait_idle(void) {
  long long left = g_busy_until_ns - host_now();
  if (left > 0) {
    struct timespec t = { left / 1000000000ll, left % 1000000000ll };
    nanosleep(&t, NULL);
  }
}

static int device_count(void) {
  const char* s = getenv("MOCKCUDA_DEVICES");
  return s ? atoi(s) : 1;
}

static void logf_(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void logf_(const char* fmt, ...) {
  const char* path = getenv("MOCKCUDA_LOG");
  if (!path) return;
  FILE* f = fopen(path, "a");
  if (!f) return;
  va_list ap; va_start(ap, fmt); vfprintf(f, fmt, ap); va_end(ap);
  fclose(f);
}

CUresult cuGetErrorName(CUresult e, const char** s) {
  switch (e) {
    case OK: *s = "CUDA_SUCCESS"; return OK;
    case E_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return OK;
    case E_NOT_INITIALIZED: *s = "CUDA_ERROR_NOT_INITIALIZED"; return OK;
    case E_INVALID_DEVICE: *s = "CUDA_ERROR_INVALID_DEVICE"; return OK;
    case E_INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; return OK;
    case E_INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; return OK;
    case E_INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; return OK;
    case E_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return OK;
    case 600: *s = "CUDA_ERROR_NOT_READY"; return OK;
    case 900: *s = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; return OK;
  }
  *s = NULL; return E_INVALID_VALUE;
}
CUresult cuGetErrorString(CUresult e, const char** s) {
  const char* name;
  if (cuGetErrorName(e, &name)) { *s = NULL; return E_INVALID_VALUE; }
  *s = e == E_INVALID_PTX ? "a PTX JIT compilation failed" : "mock error";
  return OK;
}
CUresult cuInit(unsigned int flags) { g_init = 1; return flags ? E_INVALID_VALUE : OK; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return OK; }
#define NEED_INIT if (!g_init) return E_NOT_INITIALIZED
#define NEED_CTX if (!t_current || !t_current->refs) return E_INVALID_CONTEXT
CUresult cuDeviceGetCount(int* n) { NEED_INIT; *n = device_count(); return OK; }
CUresult cuDeviceGet(CUdevice* d, int i) {
  NEED_INIT; if (i < 0 || i >= device_count()) return E_INVALID_DEVICE; *d = i; return OK;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  NEED_INIT; if (d < 0 || d >= device_count()) return E_INVALID_DEVICE;
  snprintf(name, len, "Mock GPU %d", d); return OK;
}
CUresult cuDeviceGetUuid(CUuuid* u, CUdevice d) {
  NEED_INIT; if (d < 0 || d >= device_count()) return E_INVALID_DEVICE;
  for (int i = 0; i < 16; ++i) u->bytes[i] = (char)(d * 16 + i);
  return OK;
}
CUresult cuDeviceGetAttribute(int* v, int attr, CUdevice d) {
  NEED_INIT; if (d < 0 || d >= device_count()) return E_INVALID_DEVICE;
  switch (attr) {
    case 1: *v = 1024; break; case 2: *v = 1024; break; case 3: *v = 1024; break;
    case 4: *v = 64; break; case 5: *v = 2147483647; break; case 6: case 7: *v = 65535; break;
    case 8: *v = 49152; break; case 10: *v = 32; break; case 12: *v = 65536; break;
    case 13: *v = 1980000; break; case 16: *v = 132; break; case 38: *v = 52428800; break;
    case 39: *v = 2048; break; case 41: *v = 1; break; case 75: *v = 9; break;
    case 76: *v = 0; break; case 81: *v = 233472; break; case 82: *v = 65536; break;
    case 83: *v = 1; break; case 89: *v = 1; break; case 97: *v = 232448; break;
    case 106: *v = 32; break; case 115: *v = 1; break; case 122: *v = 1; break;
    case 126: *v = 4; break; case 19: *v = 1; break;
    default: *v = 0;
  }
  return OK;
}
CUresult cuDeviceTotalMem_v2(size_t* b, CUdevice d) { NEED_INIT; *b = 1ull << 34; return OK; }
CUresult cuDevicePrimaryCtxRetain(ctx_t** c, CUdevice d) {
  NEED_INIT; if (d < 0 || d >= device_count()) return E_INVALID_DEVICE;
  g_ctx[d].device = d; g_ctx[d].refs++; *c = &g_ctx[d]; return OK;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  if (d < 0 || d >= device_count() || !g_ctx[d].refs) return E_INVALID_DEVICE;
  if (--g_ctx[d].refs == 0) logf_("context-destroyed %d live=%ld\n", d, g_live);
  return OK;
}
CUresult cuCtxSetCurrent(ctx_t* c) { t_current = c; return OK; }
CUresult cuCtxPushCurrent_v2(ctx_t* c) { t_current = c; return OK; }
CUresult cuCtxPopCurrent_v2(ctx_t** c) { if (c) *c = t_current; t_current = NULL; return OK; }
CUresult cuDeviceCanAccessPeer(int* can, CUdevice d, CUdevice peer) {
  NEED_INIT; if (d < 0 || d >= device_count() || peer < 0 || peer >= device_count())
    return E_INVALID_DEVICE;
  *can = getenv("MOCKCUDA_NO_PEERS") ? 0 : d != peer; return OK;
}
CUresult cuCtxEnablePeerAccess(ctx_t* peer, unsigned int flags) {
  NEED_CTX; if (!peer || peer == t_current || flags) return E_INVALID_VALUE;
  logf_("peer-access %d %d\n", t_current->device, peer->device); return OK;
}

CUresult cuModuleLoadDataEx(module_t** m, const void* image, unsigned int n, int* options,
                            void** values) {
  NEED_CTX;
  if (n != 2 || options[0] != 5 || options[1] != 6) return E_INVALID_VALUE;
  const char* text = (const char*)image;
  if (!strstr(text, ".entry")) return E_INVALID_PTX;
  if (strstr(text, "MOCK_JIT_FAIL")) {
    snprintf((char*)values[0], (size_t)(uintptr_t)values[1], "ptxas fatal : mock failure");
    return E_INVALID_PTX;
  }
  module_t* mod = calloc(1, sizeof(*mod));
  mod->image = strdup(text);
  *m = mod;
  logf_("load-module %zu\n", strlen(text));
  return OK;
}
CUresult cuModuleGetFunction(func_t** f, module_t* m, const char* name) {
  NEED_CTX;
  char pattern[300];
  snprintf(pattern, sizeof(pattern), ".entry %s(", name);
  const char* at = strstr(m->image, pattern);
  if (!at) return E_NOT_FOUND;
  func_t* fn = calloc(1, sizeof(*fn));
  snprintf(fn->name, sizeof(fn->name), "%s", name);
  const char* p = at + strlen(pattern);
  const char* end = strchr(p, ')');
  while ((p = strstr(p, ".param")) && p < end) {
    p += 6;
    while (*p == ' ') ++p;
    fn->kinds[fn->nparams++] = strncmp(p, ".u64", 4) == 0 ? 'p' : 'c';
  }
  *f = fn;
  return OK;
}
CUresult cuModuleUnload(module_t* m) { NEED_CTX; free(m->image); free(m); return OK; }
CUresult cuFuncSetAttribute(func_t* f, int attr, int value) {
  NEED_CTX; if (attr != 8 || value < 0) return E_INVALID_VALUE; return OK;
}

static CUresult track(void* p, size_t size, int kind, CUdeviceptr* out) {
  if (!p) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  memset(p, 0xCD, size);  /* not zeroed: the driver must zero */
  alloc_t* a = malloc(sizeof(*a));
  a->ptr = (uintptr_t)p; a->size = size; a->kind = kind;
  pthread_mutex_lock(&g_lock); a->next = g_allocs; g_allocs = a; g_live++;
  pthread_mutex_unlock(&g_lock);
  *out = (CUdeviceptr)(uintptr_t)p;
  return OK;
}
static CUresult untrack(uintptr_t p, int kind) {
  pthread_mutex_lock(&g_lock);
  for (alloc_t** a = &g_allocs; *a; a = &(*a)->next) {
    if ((*a)->ptr == p && (*a)->kind == kind) {
      alloc_t* dead = *a; *a = dead->next; g_live--;
      pthread_mutex_unlock(&g_lock);
      free((void*)dead->ptr); free(dead); return OK;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return E_INVALID_VALUE;
}
static int in_allocation(uintptr_t p, size_t n) {
  pthread_mutex_lock(&g_lock);
  for (alloc_t* a = g_allocs; a; a = a->next)
    if (p >= a->ptr && p + n <= a->ptr + a->size) { pthread_mutex_unlock(&g_lock); return 1; }
  pthread_mutex_unlock(&g_lock);
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr* d, size_t n) {
  NEED_CTX; if (!n) return E_INVALID_VALUE; return track(aligned_alloc(256, (n + 255) & ~255ull), n, 0, d);
}
CUresult cuMemAllocManaged(CUdeviceptr* d, size_t n, unsigned int flags) {
  NEED_CTX; if (!n || flags != 1) return E_INVALID_VALUE;
  return track(aligned_alloc(256, (n + 255) & ~255ull), n, 0, d);
}
CUresult cuMemHostAlloc(void** p, size_t n, unsigned int flags) {
  NEED_CTX; if (!n) return E_INVALID_VALUE;
  CUdeviceptr d; CUresult r = track(aligned_alloc(256, (n + 255) & ~255ull), n, 1, &d);
  *p = (void*)(uintptr_t)d; return r;
}
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* d, void* p, unsigned int flags) {
  NEED_CTX; if (flags || !in_allocation((uintptr_t)p, 1)) return E_INVALID_VALUE;
  *d = (CUdeviceptr)(uintptr_t)p; return OK;
}
CUresult cuMemFree_v2(CUdeviceptr d) { NEED_CTX; return untrack((uintptr_t)d, 0); }
CUresult cuMemFreeHost(void* p) { NEED_CTX; return untrack((uintptr_t)p, 1); }

#define NEED_STREAM if (!s) return E_INVALID_HANDLE
#define NOT_CAPTURING if (s->capturing) return 900
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* h, size_t n, stream_t* s) {
  NEED_CTX; NEED_STREAM; NOT_CAPTURING; if (!in_allocation(d, n)) return E_INVALID_VALUE;
  memcpy((void*)(uintptr_t)d, h, n); return OK;
}
CUresult cuMemcpyDtoHAsync_v2(void* h, CUdeviceptr d, size_t n, stream_t* s) {
  NEED_CTX; NEED_STREAM; NOT_CAPTURING; if (!in_allocation(d, n)) return E_INVALID_VALUE;
  memcpy(h, (void*)(uintptr_t)d, n); return OK;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr src, size_t n, stream_t* s) {
  NEED_CTX; NEED_STREAM; NOT_CAPTURING; if (!in_allocation(d, n) || !in_allocation(src, n)) return E_INVALID_VALUE;
  memmove((void*)(uintptr_t)d, (void*)(uintptr_t)src, n); return OK;
}
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr src, size_t n, stream_t* s) {
  return cuMemcpyDtoDAsync_v2(d, src, n, s);
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, stream_t* s) {
  NEED_CTX; NEED_STREAM; NOT_CAPTURING; if (!in_allocation(d, n)) return E_INVALID_VALUE;
  memset((void*)(uintptr_t)d, v, n); return OK;
}
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, stream_t* s) {
  NEED_CTX; NEED_STREAM; NOT_CAPTURING; if (d % 2 || !in_allocation(d, 2 * n)) return E_INVALID_VALUE;
  for (size_t i = 0; i < n; ++i) ((unsigned short*)(uintptr_t)d)[i] = v;
  return OK;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, stream_t* s) {
  NEED_CTX; NEED_STREAM; NOT_CAPTURING; if (d % 4 || !in_allocation(d, 4 * n)) return E_INVALID_VALUE;
  for (size_t i = 0; i < n; ++i) ((unsigned int*)(uintptr_t)d)[i] = v;
  return OK;
}
CUresult cuLaunchKernel(func_t* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, stream_t* s, void** params,
                        void** extra) {
  NEED_CTX; NEED_STREAM;
  if (!gx || !gy || !gz || !bx || !by || !bz || extra) return E_INVALID_VALUE;
  if (f->nparams && !params) return E_INVALID_VALUE;
  char line[4096];
  int at = snprintf(line, sizeof(line), "launch %s grid %u %u %u block %u %u %u smem %u params",
                    f->name, gx, gy, gz, bx, by, bz, smem);
  for (int i = 0; i < f->nparams && at < 4000; ++i) {
    if (f->kinds[i] == 'p') {
      uint64_t v = *(uint64_t*)params[i];
      at += snprintf(line + at, sizeof(line) - at, " p:%s", in_allocation(v, 1) ? "ok" : "BAD");
    } else {
      at += snprintf(line + at, sizeof(line) - at, " c:%u", *(uint32_t*)params[i]);
    }
  }
  if (s->capturing) {  /* recorded into the graph being captured, not run */
    size_t n = strlen(line);
    s->captured = realloc(s->captured, s->captured_length + n + 2);
    memcpy(s->captured + s->captured_length, line, n);
    s->captured[s->captured_length + n] = '\n';
    s->captured_length += n + 1;
    s->captured[s->captured_length] = 0;
    return OK;
  }
  logf_("%s\n", line);
  /* The mock GPU "runs" each workgroup for MOCKCUDA_NS_PER_WORKGROUP ns: it is busy that long
     after the launch (events record when the work before them is done; synchronizing waits). */
  const char* per = getenv("MOCKCUDA_NS_PER_WORKGROUP");
  if (per) g_busy_until_ns = gpu_now() + (long long)atoll(per) * gx * gy * gz;
  return OK;
}
CUresult cuStreamCreate(stream_t** s, unsigned int flags) {
  NEED_CTX; if (flags != 1) return E_INVALID_VALUE; *s = calloc(1, sizeof(stream_t)); return OK;
}
/* Stream capture records launches only; any other operation while capturing is refused with
   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (900), which the driver answers by issuing on the
   stream. A graph launch logs its launches again. */
CUresult cuStreamBeginCapture_v2(stream_t* s, int mode) {
  NEED_CTX; NEED_STREAM; if (s->capturing || mode != 1) return E_INVALID_VALUE;
  s->capturing = 1; s->captured = calloc(1, 1); s->captured_length = 0; return OK;
}
CUresult cuStreamEndCapture(stream_t* s, graph_t** g) {
  NEED_CTX; NEED_STREAM; if (!s->capturing) return E_INVALID_VALUE;
  s->capturing = 0; *g = calloc(1, sizeof(graph_t)); (*g)->lines = s->captured;
  s->captured = NULL; return OK;
}
CUresult cuGraphInstantiateWithFlags(graph_t** e, graph_t* g, unsigned long long flags) {
  NEED_CTX; if (!g || flags) return E_INVALID_VALUE;
  *e = calloc(1, sizeof(graph_t)); (*e)->lines = strdup(g->lines); logf_("graph-instantiate\n");
  return OK;
}
CUresult cuGraphLaunch(graph_t* e, stream_t* s) {
  NEED_CTX; NEED_STREAM; if (!e) return E_INVALID_HANDLE;
  logf_("graph-launch\n%s", e->lines); return OK;
}
CUresult cuGraphExecDestroy(graph_t* e) { free(e->lines); free(e); logf_("graph-destroy\n"); return OK; }
CUresult cuGraphDestroy(graph_t* g) { free(g->lines); free(g); return OK; }
CUresult cuStreamSynchronize(stream_t* s) { NEED_CTX; NEED_STREAM; wait_idle(); return OK; }
CUresult cuStreamDestroy_v2(stream_t* s) { NEED_CTX; NEED_STREAM; free(s); return OK; }
/* Events read the mock GPU clock (gpu_now). */
typedef struct { int recorded; long long ns; } event_t;
CUresult cuEventCreate(event_t** e, unsigned int flags) {
  NEED_CTX; if (flags) return E_INVALID_VALUE; *e = calloc(1, sizeof(event_t)); g_events++;
  return OK;
}
CUresult cuEventRecord(event_t* e, stream_t* s) {
  NEED_CTX; NEED_STREAM; if (!e) return E_INVALID_HANDLE;
  e->ns = gpu_now(); e->recorded = 1;
  logf_("event-record\n");
  return OK;
}
CUresult cuEventQuery(event_t* e) {
  NEED_CTX; if (!e || !e->recorded) return E_INVALID_HANDLE;
  return host_now() >= e->ns ? OK : 600; /* CUDA_ERROR_NOT_READY */
}
CUresult cuMemAllocAsync(CUdeviceptr* d, size_t n, stream_t* s) {
  NEED_CTX; NEED_STREAM; if (!n) return E_INVALID_VALUE;
  logf_("alloc-async %zu\n", n);
  return track(aligned_alloc(256, (n + 255) & ~255ull), n, 0, d);
}
CUresult cuMemFreeAsync(CUdeviceptr d, stream_t* s) {
  NEED_CTX; NEED_STREAM; logf_("free-async\n"); return untrack((uintptr_t)d, 0);
}
CUresult cuEventSynchronize(event_t* e) {
  NEED_CTX; if (!e || !e->recorded) return E_INVALID_HANDLE;
  wait_idle(); return OK;
}
CUresult cuEventElapsedTime(float* ms, event_t* a, event_t* b) {
  NEED_CTX; if (!a || !b || !a->recorded || !b->recorded) return E_INVALID_HANDLE;
  *ms = (float)((double)(b->ns - a->ns) / 1e6); return OK;
}
CUresult cuEventDestroy_v2(event_t* e) {
  free(e); if (--g_events == 0) logf_("events-destroyed\n"); return OK;
}
"""


def build_mockcuda(folder: Path) -> Path:
    """Compiles the mock into folder/libcuda.so.1 (skips the calling test without a C compiler)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build mockcuda")
    (folder / "mockcuda.c").write_text(MOCKCUDA_C)
    library = folder / "libcuda.so.1"
    subprocess.run([compiler, "-shared", "-fPIC", "-O1", "-o", str(library),
                    str(folder / "mockcuda.c"), "-lpthread"], check=True)
    return library

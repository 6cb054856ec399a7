/* softhsa: the AMDGPU machine-code interpreter (softhsa_isa.h). GFX9 encodings (gfx942).
 *
 * Encodings (AMD Instinct MI300 ISA, "Microcode Formats"; field positions checked against
 * llvm-mc-19 --show-encoding): SOP2 [31:30]=2, SOPK [31:28]=11, SOP1/SOPC/SOPP [31:23]=
 * 0x17d/0x17e/0x17f, SMEM [31:26]=0x30, VOP2 [31]=0, VOP1 [31:25]=0x3f, VOPC [31:25]=0x3e,
 * VOP3 [31:26]=0x34, VOP3P [31:23]=0x1a7, FLAT/GLOBAL [31:26]=0x37. Operand codes: 0-101 SGPRs,
 * 106/107 VCC, 124 M0, 126/127 EXEC, 128-192 integers 0..64, 193-208 -1..-16, 240-248 float
 * constants, 251 VCCZ, 252 EXECZ, 253 SCC, 255 a 32-bit literal after the instruction, 256-511
 * VGPRs. Floating point is the host's IEEE single/double arithmetic with fused multiply-add
 * (fmaf/fma), round to nearest even; denormals are kept (the corpus kernels' mode). */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softhsa_isa.h"
#include "softhsa_loader_state.h"

#define MAX_LANES 64
#define SGPRS 128
#define VGPRS 512

typedef struct {
  uint32_t s[SGPRS];        /* SGPRs; VCC, M0 and EXEC live apart */
  uint64_t exec, vcc;
  uint32_t m0;
  int scc;
  uint32_t (*v)[MAX_LANES]; /* VGPRs [register][lane] */
  uint64_t pc;              /* byte address of the next instruction */
  int done, waiting;        /* s_endpgm reached; stopped at s_barrier */
} wave_t;

typedef struct {
  const softhsa_isa_dispatch_t* d;
  uint32_t lanes;
  uint8_t* lds;
  uint64_t base, limit;     /* the last allocation a memory access was found in */
  hsa_status_t status;
  char* message;
  size_t message_size;
  int trace;                /* SOFTHSA_TRACE=N: each instruction, v0-v15 of lane N to stderr */
  uint64_t entry;
  int gfx11;                /* RDNA3 encodings (wave32); else GFX9 (wave64) */
  uint64_t code_base, code_end;  /* the loaded image the kernel's instructions come from */
  uint64_t retired;         /* instructions run (per wave) */
  int flush_in, flush_out;  /* f32 denormals flushed to zero (the descriptor's FLOAT_DENORM_MODE_32) */
} run_t;

static hsa_status_t fail(run_t* r, hsa_status_t status, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
#include <stdarg.h>
static hsa_status_t fail(run_t* r, hsa_status_t status, const char* fmt, ...) {
  if (r->status == HSA_STATUS_SUCCESS) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, r->message_size, fmt, ap);
    va_end(ap);
    r->status = status;
  }
  return status;
}

static const char* mnemonic_at(const run_t* r, uint64_t at);

/* An instruction the interpreter does not run: the queue error, naming the instruction (its
 * mnemonic as LLVM spells it, read back from the code) and where it is. */
static hsa_status_t illegal(run_t* r, const wave_t* w, const char* family, uint32_t op,
                            uint64_t at) {
  (void)w;
  return fail(r, (hsa_status_t)HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION,
              "softhsa cannot run %s (%s, opcode %u) at 0x%llx (code offset 0x%llx)",
              mnemonic_at(r, at), family, op, (unsigned long long)at,
              (unsigned long long)(at - r->code_base));
}

/* A pointer to `length` bytes at `address` inside one live allocation (or the dispatch packet),
 * or NULL (and the aperture error). */
static uint8_t* memory(run_t* r, uint64_t address, uint64_t length) {
  /* The dispatch packet (the dispatch pointer's target) lives in the queue's ring. */
  const uint64_t packet = (uintptr_t)r->d->packet;
  if (address >= packet && length <= 64 && address - packet <= 64 - length)
    return (uint8_t*)(uintptr_t)address;
  if (address >= r->base && length <= r->limit - r->base && address - r->base <= r->limit - r->base - length)
    return (uint8_t*)(uintptr_t)address;
  hsa_amd_pointer_info_t info;
  memset(&info, 0, sizeof(info));
  info.size = sizeof(info);
  if (hsa_amd_pointer_info((const void*)(uintptr_t)address, &info, NULL, NULL, NULL) ==
          HSA_STATUS_SUCCESS && info.type != HSA_EXT_POINTER_TYPE_UNKNOWN) {
    const uint64_t base = (uintptr_t)info.agentBaseAddress;
    if (address >= base && address - base <= info.sizeInBytes &&
        length <= info.sizeInBytes - (address - base)) {
      r->base = base;
      r->limit = base + info.sizeInBytes;
      return (uint8_t*)(uintptr_t)address;
    }
  }
  /* The code object's load image (constants the kernel reads beside its code). */
  const softhsa_loaded_object_t* object = softhsa_loader_find_image(address);
  if (object) {
    const uint64_t base = (uintptr_t)object->image;
    if (address - base <= object->image_size && length <= object->image_size - (address - base))
      return (uint8_t*)(uintptr_t)address;
  }
  fail(r, (hsa_status_t)HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
       "softhsa: a %llu-byte access at 0x%llx is outside every allocation",
       (unsigned long long)length, (unsigned long long)address);
  return NULL;
}

/* ---- operands ---------------------------------------------------------------------------- */

static const float FLOAT_CONSTANTS[9] = {0.5f, -0.5f, 1.0f, -1.0f, 2.0f, -2.0f, 4.0f, -4.0f,
                                         0.15915494f};
static const double DOUBLE_CONSTANTS[9] = {0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0,
                                           0.15915494309189532};

typedef struct {
  uint32_t literal;
  int has_literal;
} decode_t;

/* Code 104 stands for GFX11's NULL (reads 0, writes go nowhere). */
static int known_scalar(uint32_t code) {
  return code < 102 || code == 104 || code == 106 || code == 107 || code == 124 || code == 126 ||
         code == 127 || (code >= 128 && code <= 208) || (code >= 240 && code <= 248) ||
         code == 251 || code == 252 || code == 253 || code == 255;
}

/* A 32-bit scalar operand (also the scalar half of a vector operand below 256). */
static uint32_t sread(const wave_t* w, uint32_t code, const decode_t* k) {
  if (code < 102) return w->s[code];
  switch (code) {
    case 106: return (uint32_t)w->vcc;
    case 107: return (uint32_t)(w->vcc >> 32);
    case 124: return w->m0;
    case 126: return (uint32_t)w->exec;
    case 127: return (uint32_t)(w->exec >> 32);
    case 251: return w->vcc == 0;
    case 252: return w->exec == 0;
    case 253: return (uint32_t)w->scc;
    case 255: return k->literal;
  }
  if (code >= 128 && code <= 192) return code - 128;
  if (code >= 193 && code <= 208) return (uint32_t)(-(int32_t)(code - 192));
  if (code >= 240 && code <= 248) {
    uint32_t bits;
    memcpy(&bits, &FLOAT_CONSTANTS[code - 240], 4);
    return bits;
  }
  return 0;
}

/* A 64-bit scalar operand: a register pair, or an inline constant / literal widened (integers
 * sign-extended, float constants as doubles). */
static uint64_t sread64(const wave_t* w, uint32_t code, const decode_t* k) {
  if (code < 102) return w->s[code] | (uint64_t)w->s[code + 1] << 32;
  if (code == 106) return w->vcc;
  if (code == 126) return w->exec;
  if (code >= 128 && code <= 192) return code - 128;
  if (code >= 193 && code <= 208) return (uint64_t)(-(int64_t)(code - 192));
  if (code >= 240 && code <= 248) {
    uint64_t bits;
    memcpy(&bits, &DOUBLE_CONSTANTS[code - 240], 8);
    return bits;
  }
  if (code == 255) return k->literal;
  return sread(w, code, k);
}

static void swrite(wave_t* w, uint32_t code, uint32_t value) {
  if (code < 102) w->s[code] = value;
  else if (code == 106) w->vcc = (w->vcc & ~0xffffffffull) | value;
  else if (code == 107) w->vcc = (w->vcc & 0xffffffffull) | (uint64_t)value << 32;
  else if (code == 124) w->m0 = value;
  else if (code == 126) w->exec = (w->exec & ~0xffffffffull) | value;
  else if (code == 127) w->exec = (w->exec & 0xffffffffull) | (uint64_t)value << 32;
}

static void swrite64(wave_t* w, uint32_t code, uint64_t value) {
  if (code == 106) w->vcc = value;
  else if (code == 126) w->exec = value;
  else {
    swrite(w, code, (uint32_t)value);
    swrite(w, code + 1, (uint32_t)(value >> 32));
  }
}

/* A lane mask (a comparison's result, carries) to an SGPR pair, or to one SGPR on wave32. */
static void mask_write(const run_t* r, wave_t* w, uint32_t code, uint64_t mask) {
  if (r->lanes == 32) swrite(w, code, (uint32_t)mask);
  else swrite64(w, code, mask);
}

static uint32_t vread(const wave_t* w, uint32_t code, uint32_t lane, const decode_t* k) {
  return code >= 256 ? w->v[code - 256][lane] : sread(w, code, k);
}

static uint64_t vread64(const wave_t* w, uint32_t code, uint32_t lane, const decode_t* k) {
  if (code >= 256) return w->v[code - 256][lane] | (uint64_t)w->v[code - 255][lane] << 32;
  return sread64(w, code, k);
}

static float as_f(uint32_t bits) { float f; memcpy(&f, &bits, 4); return f; }

/* IEEE-mode min / max as the VALU computes them: a quiet NaN loses to a number, -0 < +0. */
static float max_hw(float a, float b) {
  return a == 0 && b == 0 ? (signbit(a) ? b : a) : fmaxf(a, b);
}
static float min_hw(float a, float b) {
  return a == 0 && b == 0 ? (signbit(a) ? a : b) : fminf(a, b);
}
static uint32_t f_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

static int active(const wave_t* w, uint32_t lane) { return (w->exec >> lane) & 1; }

/* ---- scalar ALU ---------------------------------------------------------------------------- */

static hsa_status_t sop2(run_t* r, wave_t* w, uint32_t word, const decode_t* k, uint64_t at) {
  const uint32_t op = (word >> 23) & 0x7f, dst = (word >> 16) & 0x7f;
  const uint32_t c0 = word & 0xff, c1 = (word >> 8) & 0xff;
  const uint32_t a = sread(w, c0, k), b = sread(w, c1, k);
  const uint64_t a64 = sread64(w, c0, k), b64 = sread64(w, c1, k);
  uint64_t wide;
  switch (op) {
    case 0: wide = (uint64_t)a + b; swrite(w, dst, (uint32_t)wide); w->scc = wide >> 32; break;
    case 1: swrite(w, dst, a - b); w->scc = b > a; break;
    case 2: swrite(w, dst, a + b);
      w->scc = ((int32_t)(a ^ ~b) & (int32_t)(a ^ (a + b))) < 0; break;
    case 3: swrite(w, dst, a - b);
      w->scc = ((int32_t)(a ^ b) & (int32_t)(a ^ (a - b))) < 0; break;
    case 4: wide = (uint64_t)a + b + (uint64_t)w->scc; swrite(w, dst, (uint32_t)wide);
      w->scc = wide >> 32; break;
    case 5: wide = (uint64_t)a - b - (uint64_t)w->scc; swrite(w, dst, (uint32_t)wide);
      w->scc = (uint64_t)b + (uint64_t)w->scc > a; break;
    case 6: w->scc = (int32_t)a < (int32_t)b; swrite(w, dst, w->scc ? a : b); break;
    case 7: w->scc = a < b; swrite(w, dst, w->scc ? a : b); break;
    case 8: w->scc = (int32_t)a > (int32_t)b; swrite(w, dst, w->scc ? a : b); break;
    case 9: w->scc = a > b; swrite(w, dst, w->scc ? a : b); break;
    case 10: swrite(w, dst, w->scc ? a : b); break;
    case 11: swrite64(w, dst, w->scc ? a64 : b64); break;
    case 12: swrite(w, dst, a & b); w->scc = (a & b) != 0; break;
    case 13: swrite64(w, dst, a64 & b64); w->scc = (a64 & b64) != 0; break;
    case 14: swrite(w, dst, a | b); w->scc = (a | b) != 0; break;
    case 15: swrite64(w, dst, a64 | b64); w->scc = (a64 | b64) != 0; break;
    case 16: swrite(w, dst, a ^ b); w->scc = (a ^ b) != 0; break;
    case 17: swrite64(w, dst, a64 ^ b64); w->scc = (a64 ^ b64) != 0; break;
    case 18: swrite(w, dst, a & ~b); w->scc = (a & ~b) != 0; break;
    case 19: swrite64(w, dst, a64 & ~b64); w->scc = (a64 & ~b64) != 0; break;
    case 20: swrite(w, dst, a | ~b); w->scc = (a | ~b) != 0; break;
    case 21: swrite64(w, dst, a64 | ~b64); w->scc = (a64 | ~b64) != 0; break;
    case 28: swrite(w, dst, a << (b & 31)); w->scc = (a << (b & 31)) != 0; break;
    case 29: swrite64(w, dst, a64 << (b & 63)); w->scc = (a64 << (b & 63)) != 0; break;
    case 30: swrite(w, dst, a >> (b & 31)); w->scc = (a >> (b & 31)) != 0; break;
    case 31: swrite64(w, dst, a64 >> (b & 63)); w->scc = (a64 >> (b & 63)) != 0; break;
    case 32: swrite(w, dst, (uint32_t)((int32_t)a >> (b & 31)));
      w->scc = ((int32_t)a >> (b & 31)) != 0; break;
    case 33: swrite64(w, dst, (uint64_t)((int64_t)a64 >> (b & 63)));
      w->scc = ((int64_t)a64 >> (b & 63)) != 0; break;
    case 22: swrite(w, dst, ~(a & b)); w->scc = ~(a & b) != 0; break;
    case 24: swrite(w, dst, ~(a | b)); w->scc = ~(a | b) != 0; break;
    case 26: swrite(w, dst, ~(a ^ b)); w->scc = ~(a ^ b) != 0; break;
    case 34: swrite(w, dst, ((1u << (a & 31)) - 1) << (b & 31)); break;  /* s_bfm_b32 */
    case 38: {  /* s_bfe_i32: offset b[4:0], width b[22:16], sign-extended */
      const uint32_t off = b & 31, width = (b >> 16) & 0x7f;
      const int32_t v = width == 0 ? 0 : width >= 32 ? (int32_t)a >> off
                        : (int32_t)((a >> off) << (32 - width)) >> (32 - width);
      swrite(w, dst, (uint32_t)v); w->scc = v != 0; break;
    }
    case 42: { const int32_t d = (int32_t)a - (int32_t)b; const uint32_t v = d < 0 ? -(uint32_t)d : (uint32_t)d;
      swrite(w, dst, v); w->scc = v != 0; break; }
    case 50: swrite(w, dst, (a & 0xffff) | b << 16); break;            /* s_pack_ll_b32_b16 */
    case 51: swrite(w, dst, (a & 0xffff) | (b & 0xffff0000u)); break;  /* s_pack_lh */
    case 52: swrite(w, dst, a >> 16 | (b & 0xffff0000u)); break;       /* s_pack_hh */
    case 36: swrite(w, dst, a * b); break;
    case 37: {  /* s_bfe_u32: offset b[4:0], width b[22:16] */
      const uint32_t off = b & 31, width = (b >> 16) & 0x7f;
      const uint32_t v = width == 0 ? 0 : width >= 32 ? a >> off : (a >> off) & ((1u << width) - 1);
      swrite(w, dst, v); w->scc = v != 0; break;
    }
    case 44: swrite(w, dst, (uint32_t)(((uint64_t)a * b) >> 32)); break;
    case 45: swrite(w, dst, (uint32_t)(((int64_t)(int32_t)a * (int32_t)b) >> 32)); break;
    case 46: case 47: case 48: case 49: {  /* s_lshl{1..4}_add_u32 */
      wide = ((uint64_t)a << (op - 45)) + b;
      swrite(w, dst, (uint32_t)wide); w->scc = wide >> 32; break;
    }
    default: return illegal(r, w, "SOP2", op, at);
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t sopk(run_t* r, wave_t* w, uint32_t word, uint64_t at) {
  const uint32_t op = (word >> 23) & 0x1f, dst = (word >> 16) & 0x7f;
  const int32_t simm = (int16_t)(word & 0xffff);
  const uint32_t d = sread(w, dst, NULL), u = (uint32_t)simm & 0xffff;
  switch (op) {
    case 0: swrite(w, dst, (uint32_t)simm); break;
    case 1: if (w->scc) swrite(w, dst, (uint32_t)simm); break;  /* s_cmovk_i32 */
    case 2: w->scc = (int32_t)d == simm; break;
    case 3: w->scc = (int32_t)d != simm; break;
    case 4: w->scc = (int32_t)d > simm; break;
    case 5: w->scc = (int32_t)d >= simm; break;
    case 6: w->scc = (int32_t)d < simm; break;
    case 7: w->scc = (int32_t)d <= simm; break;
    case 8: w->scc = d == u; break;
    case 9: w->scc = d != u; break;
    case 10: w->scc = d > u; break;
    case 11: w->scc = d >= u; break;
    case 12: w->scc = d < u; break;
    case 13: w->scc = d <= u; break;
    case 14: {  /* s_addk_i32: SCC is the signed overflow */
      const uint32_t v = d + (uint32_t)simm;
      w->scc = ((int32_t)(d ^ ~(uint32_t)simm) & (int32_t)(d ^ v)) < 0;
      swrite(w, dst, v);
      break;
    }
    case 15: swrite(w, dst, d * (uint32_t)simm); break;  /* s_mulk_i32 */
    default: return illegal(r, w, "SOPK", op, at);
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t sop1(run_t* r, wave_t* w, uint32_t word, const decode_t* k, uint64_t at) {
  const uint32_t op = (word >> 8) & 0xff, dst = (word >> 16) & 0x7f, c0 = word & 0xff;
  const uint32_t a = sread(w, c0, k);
  const uint64_t a64 = sread64(w, c0, k);
  uint64_t saved;
  switch (op) {
    case 0: swrite(w, dst, a); break;
    case 1: swrite64(w, dst, a64); break;
    case 4: swrite(w, dst, ~a); w->scc = ~a != 0; break;
    case 5: swrite64(w, dst, ~a64); w->scc = ~a64 != 0; break;
    case 8: { uint32_t v = 0; for (int i = 0; i < 32; ++i) v |= ((a >> i) & 1u) << (31 - i);
      swrite(w, dst, v); break; }
    case 10: case 11: case 12: case 13: {  /* s_bcnt0/1_i32_b32/b64 */
      const uint64_t x = op & 1 ? a64 : a;
      const uint32_t v = (uint32_t)__builtin_popcountll(op < 12 ? ~x & (op & 1 ? ~0ull : 0xffffffffull) : x);
      swrite(w, dst, v); w->scc = v != 0; break;
    }
    case 16: swrite(w, dst, a ? (uint32_t)__builtin_ctz(a) : 0xffffffffu); break;  /* s_ff1 */
    case 17: swrite(w, dst, a64 ? (uint32_t)__builtin_ctzll(a64) : 0xffffffffu); break;
    case 18: swrite(w, dst, a ? (uint32_t)__builtin_clz(a) : 0xffffffffu); break;  /* s_flbit */
    case 19: swrite(w, dst, a64 ? (uint32_t)__builtin_clzll(a64) : 0xffffffffu); break;
    case 20: {  /* s_flbit_i32: the first bit unlike the sign, from the top */
      const uint32_t v = (int32_t)a < 0 ? ~a : a;
      swrite(w, dst, v ? (uint32_t)__builtin_clz(v) : 0xffffffffu); break;
    }
    case 22: swrite(w, dst, (uint32_t)(int32_t)(int8_t)a); break;
    case 23: swrite(w, dst, (uint32_t)(int32_t)(int16_t)a); break;
    case 48: { const uint32_t v = (int32_t)a < 0 ? -a : a; swrite(w, dst, v); w->scc = v != 0; break; }
    case 28: swrite64(w, dst, at + 4); break;  /* s_getpc_b64: the next instruction */
    case 29: w->pc = a64; break;              /* s_setpc_b64 */
    case 32: case 33: case 34: case 35: {     /* s_{and,or,xor,andn2}_saveexec_b64 */
      saved = w->exec;
      w->exec = op == 32 ? a64 & saved : op == 33 ? a64 | saved : op == 34 ? a64 ^ saved
                                                                 : a64 & ~saved;
      swrite64(w, dst, saved);
      w->scc = w->exec != 0;
      break;
    }
    case 0xa0: case 0xa1: case 0xa2: case 0xa3: {  /* the same on 32-bit masks (GFX11 wave32) */
      const uint32_t lo = (uint32_t)w->exec;
      const uint32_t v = op == 0xa0 ? a & lo : op == 0xa1 ? a | lo : op == 0xa2 ? a ^ lo : a & ~lo;
      w->exec = v;
      swrite(w, dst, lo);
      w->scc = v != 0;
      break;
    }
    default: return illegal(r, w, "SOP1", op, at);
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t sopc(run_t* r, wave_t* w, uint32_t word, const decode_t* k, uint64_t at) {
  const uint32_t op = (word >> 16) & 0x7f;
  const uint32_t a = sread(w, word & 0xff, k), b = sread(w, (word >> 8) & 0xff, k);
  const int32_t sa = (int32_t)a, sb = (int32_t)b;
  switch (op) {
    case 0: w->scc = sa == sb; break;
    case 1: w->scc = sa != sb; break;
    case 2: w->scc = sa > sb; break;
    case 3: w->scc = sa >= sb; break;
    case 4: w->scc = sa < sb; break;
    case 5: w->scc = sa <= sb; break;
    case 6: w->scc = a == b; break;
    case 7: w->scc = a != b; break;
    case 8: w->scc = a > b; break;
    case 9: w->scc = a >= b; break;
    case 10: w->scc = a < b; break;
    case 11: w->scc = a <= b; break;
    case 12: w->scc = ((a >> (b & 31)) & 1) == 0; break;  /* s_bitcmp0_b32 */
    case 13: w->scc = ((a >> (b & 31)) & 1) == 1; break;
    case 14: w->scc = ((sread64(w, word & 0xff, k) >> (b & 63)) & 1) == 0; break;
    case 15: w->scc = ((sread64(w, word & 0xff, k) >> (b & 63)) & 1) == 1; break;
    case 18: w->scc = sread64(w, word & 0xff, k) == sread64(w, (word >> 8) & 0xff, k); break;
    case 19: w->scc = sread64(w, word & 0xff, k) != sread64(w, (word >> 8) & 0xff, k); break;
    default: return illegal(r, w, "SOPC", op, at);
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t sopp(run_t* r, wave_t* w, uint32_t word, uint64_t at) {
  const uint32_t op = (word >> 16) & 0x7f;
  const uint64_t target = at + 4 + 4 * (int64_t)(int16_t)(word & 0xffff);
  switch (op) {
    case 0: case 12: case 14: case 15: break;  /* s_nop, s_waitcnt, s_sleep, s_setprio */
    case 1: w->done = 1; break;
    case 2: w->pc = target; break;
    case 4: if (!w->scc) w->pc = target; break;
    case 5: if (w->scc) w->pc = target; break;
    case 6: if (w->vcc == 0) w->pc = target; break;
    case 7: if (w->vcc != 0) w->pc = target; break;
    case 8: if (w->exec == 0) w->pc = target; break;
    case 9: if (w->exec != 0) w->pc = target; break;
    case 10: w->waiting = 1; break;
    default: return illegal(r, w, "SOPP", op, at);
  }
  return HSA_STATUS_SUCCESS;
}

/* s_load_dword (op 0), x2, x4, x8, x16 (op 4) into SGPRs from sdata on. */
static hsa_status_t scalar_load(run_t* r, wave_t* w, uint32_t op, uint32_t sdata,
                                uint64_t address) {
  const uint32_t count = 1u << op;
  const uint8_t* p = memory(r, address, 4ull * count);
  if (!p) return r->status;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t v;
    memcpy(&v, p + 4 * i, 4);
    swrite(w, sdata + i, v);
  }
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t smem(run_t* r, wave_t* w, uint32_t word, uint32_t word1, uint64_t at) {
  const uint32_t op = (word >> 18) & 0xff, sdata = (word >> 6) & 0x7f;
  const uint32_t sbase = (word & 0x3f) << 1;
  const int imm = (word >> 17) & 1;
  if (op > 4) return illegal(r, w, "SMEM", op, at);
  const uint64_t base = w->s[sbase] | (uint64_t)w->s[sbase + 1] << 32;
  const uint64_t offset = imm ? (word1 & 0xfffff) : w->s[word1 & 0x7f];
  return scalar_load(r, w, op, sdata, base + offset);
}

/* ---- vector ALU -------------------------------------------------------------------------- */

/* The VOP2 / VOP1 / VOPC operations, one lane: `op` in the VOP3 numbering (VOPC 0..0xff, VOP2
 * 0x100 + op, VOP1 0x140 + op), sources already read (modifiers applied by the caller for
 * floats). Returns 0 when the op is unknown. `carry_in`/`carry_out` for the carry ops; `cmp`
 * receives a comparison's result. */
typedef struct {
  uint32_t a, b, c;
  uint64_t a64, b64, c64;
  int carry_in;
  int carry_out;
  int cmp;
  uint32_t result;
  uint64_t result64;
  int wide;  /* result64 is the result */
} lane_t;

static int compare_f64(uint32_t op, double a, double b);

/* f32 comparisons are the f64 ones on the widened values (widening keeps order and NaN). */
static int compare_f32(uint32_t op, float a, float b) { return compare_f64(op, a, b); }

static int compare_int(uint32_t op, int64_t sa, int64_t sb, uint64_t ua, uint64_t ub,
                       int is_signed) {
  switch (op & 7) {
    case 0: return 0;
    case 1: return is_signed ? sa < sb : ua < ub;
    case 2: return ua == ub;
    case 3: return is_signed ? sa <= sb : ua <= ub;
    case 4: return is_signed ? sa > sb : ua > ub;
    case 5: return ua != ub;
    case 6: return is_signed ? sa >= sb : ua >= ub;
    default: return 1;
  }
}

static double as_d(uint64_t bits) { double d; memcpy(&d, &bits, 8); return d; }
static uint64_t d_bits(double d) { uint64_t b; memcpy(&b, &d, 8); return b; }
static float half(uint32_t bits) { _Float16 h; uint16_t v = (uint16_t)bits; memcpy(&h, &v, 2); return (float)h; }
static uint32_t half_bits(float f) { _Float16 h = (_Float16)f; uint16_t v; memcpy(&v, &h, 2); return v; }

/* Which operands of an op (VOP3 numbering) are 64-bit: bit 0 src0, bit 1 src1, bit 2 src2. */
static uint32_t wide_sources(uint32_t op) {
  if ((op >= 0x60 && op <= 0x6f) || (op >= 0xe0 && op <= 0xef)) return 3;
  switch (op) {
    case 0x12: case 0x143: case 0x14f: case 0x155: case 0x157: case 0x159: case 0x15a:
    case 0x165: case 0x166: case 0x170: case 0x171: case 0x178: case 0x284: return 1;
    case 0x280: case 0x281: return 3;
    case 0x104: case 0x1cc: case 0x1df: case 0x1e1: case 0x1e3: return 7;
    case 0x208: return 5;
    case 0x28f: case 0x290: case 0x291: return 2;
  }
  return 0;
}

/* v_cmp_class: mask bits 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0,
   7 +denormal, 8 +normal, 9 +inf. `nan`: 1 signalling, 2 quiet (the fraction's top bit). */
static int class_bit(int nan, int inf, int zero, int subnormal, int negative, uint32_t mask) {
  int bit;
  if (nan) bit = nan == 2 ? 1 : 0;
  else if (inf) bit = negative ? 2 : 9;
  else if (zero) bit = negative ? 5 : 6;
  else if (subnormal) bit = negative ? 4 : 7;
  else bit = negative ? 3 : 8;
  return (mask >> bit) & 1;
}

static int class_of(uint64_t bits, uint32_t mask) {
  double x;
  memcpy(&x, &bits, 8);
  return class_bit(isnan(x) ? 1 + (int)((bits >> 51) & 1) : 0, isinf(x), x == 0,
                   fpclassify(x) == FP_SUBNORMAL, signbit(x) != 0, mask);
}

static int class_f32(uint32_t bits, uint32_t mask) {  /* classified as an f32 (its own denormals) */
  const float x = as_f(bits);
  return class_bit(isnan(x) ? 1 + (int)((bits >> 22) & 1) : 0, isinf(x), x == 0,
                   fpclassify(x) == FP_SUBNORMAL, signbit(x) != 0, mask);
}

static int compare_f64(uint32_t op, double a, double b) {
  switch (op & 0xf) {
    case 0: return 0;
    case 1: return a < b;
    case 2: return a == b;
    case 3: return a <= b;
    case 4: return a > b;
    case 5: return a < b || a > b;
    case 6: return a >= b;
    case 7: return !isnan(a) && !isnan(b);
    case 8: return isnan(a) || isnan(b);
    case 9: return !(a >= b);
    case 10: return !(a < b || a > b);
    case 11: return !(a > b);
    case 12: return !(a <= b);
    case 13: return !(a == b);
    case 14: return !(a < b);
    default: return 1;
  }
}

static uint32_t f32_to_u32(float f) {
  return isnan(f) || f <= 0 ? 0 : f >= 4294967296.0f ? 0xffffffffu : (uint32_t)f;
}
static uint32_t f32_to_i32(float f) {
  return isnan(f) ? 0 : f <= -2147483648.0f ? 0x80000000u
                      : f >= 2147483648.0f ? 0x7fffffffu : (uint32_t)(int32_t)f;
}
static uint32_t f64_to_u32(double f) {
  return isnan(f) || f <= 0 ? 0 : f >= 4294967295.0 ? 0xffffffffu : (uint32_t)f;
}
static uint32_t f64_to_i32(double f) {
  return isnan(f) ? 0 : f <= -2147483648.0 ? 0x80000000u
                      : f >= 2147483647.0 ? 0x7fffffffu : (uint32_t)(int32_t)f;
}
static int32_t clamp_i32(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static int exponent_f32(double x);
static int exponent_f64(double x);

/* v_div_fixup: the special cases of numerator / denominator (S2 / S1) the reciprocal iteration
 * that produced `quotient` (S0) cannot, per the MI300 manual's pseudocode. */
static double div_fixup(double quotient, double denominator, double numerator,
                        int (*exponent_of)(double), int underflow_gap) {
  const int negative = signbit(denominator) != signbit(numerator);
  if (isnan(numerator)) return numerator;
  if (isnan(denominator)) return denominator;
  if ((denominator == 0 && numerator == 0) || (isinf(denominator) && isinf(numerator))) return NAN;
  if (denominator == 0 || isinf(numerator)) return negative ? -INFINITY : INFINITY;
  if (isinf(denominator) || numerator == 0) return negative ? -0.0 : 0.0;
  if (exponent_of(numerator) - exponent_of(denominator) < underflow_gap) return negative ? -0.0 : 0.0;
  if (isnan(quotient)) return negative ? -INFINITY : INFINITY;  /* the scaled iteration overflowed */
  return negative ? -fabs(quotient) : fabs(quotient);
}

static int denormal_f64(double x);

/* v_div_scale_{f32,f64} (the manuals' pseudocode): `value` (the numerator or the denominator)
 * scaled by 2^+-bias when the division's Newton-Raphson steps would meet subnormals or
 * overflow; *post_scale says whether v_div_fmas must scale the quotient back. `exponent_of`
 * gives the biased exponent, `denormal` whether a value is subnormal in the operand's format;
 * `mantissa` is its fraction width. */
static double div_scale(double value, double denominator, double numerator, int bias,
                        int mantissa, int exponent_gap, int (*exponent_of)(double),
                        int (*denormal)(double), double (*narrow)(double), int* post_scale) {
  *post_scale = 0;
  if (numerator == 0 || denominator == 0) return NAN;
  if (exponent_of(numerator) - exponent_of(denominator) >= exponent_gap) {
    *post_scale = 1;
    return value == denominator ? ldexp(value, bias) : value;
  }
  if (denormal(denominator)) return ldexp(value, bias);
  /* The reciprocal is tested as an f64 for both formats, as the pseudocode writes it. */
  const double reciprocal = 1.0 / denominator, quotient = narrow(numerator / denominator);
  if (denormal_f64(reciprocal) && denormal(quotient)) {
    *post_scale = 1;
    return value == denominator ? ldexp(value, bias) : value;
  }
  if (denormal_f64(reciprocal)) return ldexp(value, -bias);
  if (denormal(quotient)) {
    *post_scale = 1;
    return value == numerator ? ldexp(value, bias) : value;
  }
  if (exponent_of(numerator) <= mantissa) return ldexp(value, bias);
  return value;
}

static int exponent_f32(double x) { return (int)((f_bits((float)x) >> 23) & 0xff); }
static int exponent_f64(double x) { uint64_t b; memcpy(&b, &x, 8); return (int)((b >> 52) & 0x7ff); }
static int denormal_f32(double x) { return fpclassify((float)x) == FP_SUBNORMAL; }
static int denormal_f64(double x) { return fpclassify(x) == FP_SUBNORMAL; }
static double narrow_f32(double x) { return (float)x; }
static double narrow_f64(double x) { return x; }

/* The ops beyond valu()'s first set: f64, f16, 16-bit integers, conversions, transcendentals,
 * bit manipulation, three-operand min/max/median. */
static int valu_more(uint32_t op, lane_t* l) {
  const uint32_t a = l->a, b = l->b, c = l->c;
  const float fa = as_f(a), fb = as_f(b), fc = as_f(c);
  const double da = as_d(l->a64), db = as_d(l->b64), dc = as_d(l->c64);
  if (op >= 0x60 && op <= 0x6f) { l->cmp = compare_f64(op, da, db); return 1; }
  if (op >= 0x20 && op <= 0x2f) { l->cmp = compare_f32(op, half(a), half(b)); return 1; }
  if (op >= 0xa8 && op <= 0xaf) {  /* v_cmp_*_u16 */
    l->cmp = compare_int(op, 0, 0, a & 0xffff, b & 0xffff, 0); return 1;
  }
  if (op >= 0xa0 && op <= 0xa7) {
    l->cmp = compare_int(op, (int16_t)a, (int16_t)b, a & 0xffff, b & 0xffff, 1); return 1;
  }
  switch (op) {
    case 0x10: l->cmp = class_f32(a, b); return 1;
    case 0x12: l->cmp = class_of(l->a64, b); return 1;
    /* VOP2 */
    case 0x104: l->result64 = d_bits(fma(da, db, dc)); l->wide = 1; return 1;  /* v_fmac_f64 */
    case 0x11f: l->result = half_bits(half(a) + half(b)); return 1;
    case 0x122: l->result = half_bits(half(a) * half(b)); return 1;
    case 0x126: l->result = (a + b) & 0xffff; return 1;
    case 0x127: l->result = (a - b) & 0xffff; return 1;
    case 0x129: l->result = (a * b) & 0xffff; return 1;
    case 0x12a: l->result = ((b & 0xffff) << (a & 15)) & 0xffff; return 1;
    case 0x12b: l->result = (b & 0xffff) >> (a & 15); return 1;
    case 0x12c: l->result = (uint32_t)((int16_t)b >> (a & 15)) & 0xffff; return 1;
    case 0x130: l->result = (uint16_t)((int16_t)a > (int16_t)b ? a : b); return 1;
    case 0x120: l->result = half_bits(half(a) - half(b)); return 1;
    case 0x121: l->result = half_bits(half(b) - half(a)); return 1;
    case 0x12d: l->result = half_bits(max_hw(half(a), half(b))); return 1;
    case 0x12e: l->result = half_bits(min_hw(half(a), half(b))); return 1;
    case 0x12f: l->result = (a & 0xffff) > (b & 0xffff) ? a & 0xffff : b & 0xffff; return 1;
    case 0x131: l->result = (a & 0xffff) < (b & 0xffff) ? a & 0xffff : b & 0xffff; return 1;
    case 0x132: l->result = (uint16_t)((int16_t)a < (int16_t)b ? a : b); return 1;
    case 0x13d: l->result = ~(a ^ b); return 1;                         /* v_xnor_b32 */
    case 0x40c: l->result = f_bits(min_hw(max_hw(fa, fb), fc)); return 1;  /* v_maxmin_f32 */
    case 0x40d: l->result = f_bits(max_hw(min_hw(fa, fb), fc)); return 1;  /* v_minmax_f32 */
    case 0x40e: { const uint32_t m = a > b ? a : b; l->result = m < c ? m : c; return 1; }
    case 0x40f: { const uint32_t m = a < b ? a : b; l->result = m > c ? m : c; return 1; }
    case 0x410: { const int32_t m = (int32_t)a > (int32_t)b ? (int32_t)a : (int32_t)b;
      l->result = (uint32_t)(m < (int32_t)c ? m : (int32_t)c); return 1; }
    case 0x411: { const int32_t m = (int32_t)a < (int32_t)b ? (int32_t)a : (int32_t)b;
      l->result = (uint32_t)(m > (int32_t)c ? m : (int32_t)c); return 1; }
    /* VOP1 */
    case 0x143: l->result = f64_to_i32(da); return 1;
    case 0x144: l->result64 = d_bits((double)(int32_t)a); l->wide = 1; return 1;
    case 0x14a: l->result = half_bits(fa); return 1;
    case 0x14b: l->result = f_bits(half(a)); return 1;
    case 0x14f: l->result = f_bits((float)da); return 1;
    case 0x150: l->result64 = d_bits((double)fa); l->wide = 1; return 1;
    case 0x151: l->result = f_bits((float)(a & 0xff)); return 1;
    case 0x155: l->result = f64_to_u32(da); return 1;
    case 0x156: l->result64 = d_bits((double)a); l->wide = 1; return 1;
    case 0x157: l->result64 = d_bits(trunc(da)); l->wide = 1; return 1;
    case 0x159: l->result64 = d_bits(nearbyint(da)); l->wide = 1; return 1;
    case 0x15a: l->result64 = d_bits(floor(da)); l->wide = 1; return 1;
    case 0x158: l->result64 = d_bits(ceil(da)); l->wide = 1; return 1;
    case 0x15b:  /* v_fract_f32: x - floor(x), below 1; NaN for infinities */
      l->result = f_bits(isinf(fa) || isnan(fa) ? NAN : fminf(fa - floorf(fa), 0x1.fffffep-1f));
      return 1;
    case 0x15c: l->result = f_bits(truncf(fa)); return 1;
    case 0x15d: l->result = f_bits(ceilf(fa)); return 1;
    case 0x15e: l->result = f_bits(nearbyintf(fa)); return 1;
    case 0x15f: l->result = f_bits(floorf(fa)); return 1;
    case 0x160: l->result = f_bits(exp2f(fa)); return 1;
    case 0x161: l->result = f_bits(log2f(fa)); return 1;
    case 0x162: case 0x163: l->result = f_bits(1.0f / fa); return 1;
    case 0x164: l->result = f_bits(1.0f / sqrtf(fa)); return 1;
    case 0x165: l->result64 = d_bits(1.0 / da); l->wide = 1; return 1;
    case 0x166: l->result64 = d_bits(1.0 / sqrt(da)); l->wide = 1; return 1;
    case 0x167: l->result = f_bits(sqrtf(fa)); return 1;
    case 0x16b: l->result = ~a; return 1;
    case 0x16c: { uint32_t v = 0; for (int i = 0; i < 32; ++i) v |= ((a >> i) & 1u) << (31 - i);
      l->result = v; return 1; }
    case 0x16d: l->result = a ? (uint32_t)__builtin_clz(a) : 0xffffffffu; return 1;
    case 0x16f: {  /* v_ffbh_i32: the first bit that differs from the sign, from the top */
      const uint32_t v = (int32_t)a < 0 ? ~a : a;
      l->result = (a == 0 || a == 0xffffffffu) ? 0xffffffffu : (uint32_t)__builtin_clz(v);
      return 1;
    }
    case 0x170: { int e = 0; if (isfinite(da)) frexp(da, &e); l->result = (uint32_t)e; return 1; }
    case 0x171: { int e; l->result64 = d_bits(isfinite(da) ? frexp(da, &e) : da); l->wide = 1; return 1; }
    case 0x173: { int e = 0; if (isfinite(fa)) frexpf(fa, &e); l->result = (uint32_t)e; return 1; }
    case 0x174: { int e; l->result = f_bits(isfinite(fa) ? frexpf(fa, &e) : fa); return 1; }
    case 0x17a: l->result = half_bits((float)(int16_t)a); return 1;
    case 0x17c: { const float h = half(a);
      l->result = (uint16_t)(isnan(h) ? 0 : h <= -32768.0f ? -32768 : h >= 32767.0f ? 32767 : (int16_t)h);
      return 1; }
    /* VOP3 */
    case 0x1c9: { const uint32_t off = b & 31, width = c & 31;
      l->result = width == 0 ? 0 : (uint32_t)(((int32_t)(a << (32 - off - width))) >> (32 - width));
      if (off + width > 32) l->result = (uint32_t)((int32_t)a >> off);
      return 1; }
    case 0x1ca: l->result = (a & b) | (~a & c); return 1;               /* v_bfi_b32 */
    case 0x1cc: l->result64 = d_bits(fma(da, db, dc)); l->wide = 1; return 1;
    case 0x107: l->result = (uint32_t)(((int64_t)((int32_t)(a << 8) >> 8) *
                                        (int64_t)((int32_t)(b << 8) >> 8)) >> 32); return 1;
    case 0x109: l->result = (uint32_t)(((uint64_t)(a & 0xffffff) * (b & 0xffffff)) >> 32); return 1;
    case 0x1d0: l->result = f_bits(min_hw(min_hw(fa, fb), fc)); return 1;
    case 0x1d2: { uint32_t m = a < b ? a : b; l->result = c < m ? c : m; return 1; }
    case 0x1d4: { int32_t m = (int32_t)a > (int32_t)b ? (int32_t)a : (int32_t)b;
      l->result = (uint32_t)((int32_t)c > m ? (int32_t)c : m); return 1; }
    case 0x1d5: { uint32_t m = a > b ? a : b; l->result = c > m ? c : m; return 1; }
    case 0x1d6:  /* v_med3_f32: with a NaN operand, min3 (the manual's pseudocode) */
      if (isnan(fa) || isnan(fb) || isnan(fc)) l->result = f_bits(min_hw(min_hw(fa, fb), fc));
      else l->result = f_bits(max_hw(min_hw(fa, fb), min_hw(max_hw(fa, fb), fc)));
      return 1;
    case 0x1d8: { const uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
      l->result = c < lo ? lo : c > hi ? hi : c; return 1; }
    case 0x1d1: { int32_t m = (int32_t)a < (int32_t)b ? (int32_t)a : (int32_t)b;
      l->result = (uint32_t)((int32_t)c < m ? (int32_t)c : m); return 1; }
    case 0x1d3: l->result = f_bits(max_hw(max_hw(fa, fb), fc)); return 1;
    case 0x1d7: { const int32_t x = (int32_t)a, y = (int32_t)b, z = (int32_t)c;
      const int32_t lo = x < y ? x : y, hi = x < y ? y : x;
      l->result = (uint32_t)clamp_i32(z, lo, hi); return 1; }
    case 0x1de: l->result = f_bits((float)div_fixup(fa, fb, fc, exponent_f32, -150)); return 1;
    case 0x1df: l->result64 = d_bits(div_fixup(da, db, dc, exponent_f64, -1075)); l->wide = 1; return 1;
    case 0x1e0:  /* v_div_scale_f32 */
      l->result = f_bits((float)div_scale(fa, fb, fc, 64, 23, 96, exponent_f32, denormal_f32,
                                          narrow_f32, &l->carry_out));
      return 1;
    case 0x1e1:
      l->result64 = d_bits(div_scale(da, db, dc, 128, 52, 768, exponent_f64, denormal_f64,
                                     narrow_f64, &l->carry_out));
      l->wide = 1;
      return 1;
    case 0x1e2: {  /* v_div_fmas_f32: VCC (from v_div_scale) scales the result back */
      /* The scaled result is rounded once (the fused sum scaled in f64, exact there). */
      l->result = f_bits(l->carry_in ? (float)ldexp(fma((double)fa, (double)fb, (double)fc),
                                                    exponent_f32(fc) > 127 ? 64 : -64)
                                     : fmaf(fa, fb, fc));
      return 1;
    }
    case 0x1e3: {
      double v = fma(da, db, dc);
      if (l->carry_in) v = ldexp(v, exponent_f64(dc) > 1023 ? 128 : -128);
      l->result64 = d_bits(v);
      l->wide = 1;
      return 1;
    }
    case 0x1ed: {  /* v_perm_b32: byte selects from {b, a} */
      const uint64_t bytes = (uint64_t)a << 32 | b;
      uint32_t v = 0;
      for (int i = 0; i < 4; ++i) {
        const uint32_t sel = (c >> (8 * i)) & 0xff;
        uint32_t byte;
        if (sel < 8) byte = (uint32_t)(bytes >> (8 * sel)) & 0xff;
        else if (sel == 12) byte = 0;
        else if (sel > 12) byte = 0xff;
        else byte = ((bytes >> (8 * (2 * (sel - 8) + 1) + 7)) & 1) ? 0xff : 0;
        v |= byte << (8 * i);
      }
      l->result = v; return 1;
    }
    case 0x1f8: { int16_t m = (int16_t)a > (int16_t)b ? (int16_t)a : (int16_t)b;
      l->result = (uint16_t)((int16_t)c > m ? (int16_t)c : m); return 1; }
    case 0x207: l->result = half_bits(isnan(half(b)) || isnan(half(c)) ? NAN : half(a)); return 1;
    case 0x280: l->result64 = d_bits(da + db); l->wide = 1; return 1;
    case 0x281: l->result64 = d_bits(da * db); l->wide = 1; return 1;
    case 0x284: l->result64 = d_bits(ldexp(da, (int32_t)b)); l->wide = 1; return 1;
    case 0x28b: l->result = (uint32_t)__builtin_popcount(a) + b; return 1;
    case 0x2a0: l->result = (a & 0xffff) | (b & 0xffff) << 16; return 1;  /* v_pack_b32_f16 */
  }
  return 0;
}

static int valu(uint32_t op, lane_t* l) {
  const uint32_t a = l->a, b = l->b;
  const float fa = as_f(a), fb = as_f(b);
  l->wide = 0;
  if (valu_more(op, l)) return 1;
  if (op >= 0x40 && op <= 0x4f) { l->cmp = compare_f32(op, fa, fb); return 1; }
  if (op >= 0xc0 && op <= 0xc7) { l->cmp = compare_int(op, (int32_t)a, (int32_t)b, a, b, 1); return 1; }
  if (op >= 0xc8 && op <= 0xcf) { l->cmp = compare_int(op, 0, 0, a, b, 0); return 1; }
  if (op >= 0xe0 && op <= 0xe7) {
    l->cmp = compare_int(op, (int64_t)l->a64, (int64_t)l->b64, l->a64, l->b64, 1); return 1;
  }
  if (op >= 0xe8 && op <= 0xef) { l->cmp = compare_int(op, 0, 0, l->a64, l->b64, 0); return 1; }
  uint64_t wide;
  switch (op) {
    case 0x100: l->result = l->carry_in ? b : a; return 1;            /* v_cndmask_b32 */
    case 0x101: l->result = f_bits(fa + fb); return 1;
    case 0x102: l->result = f_bits(fa - fb); return 1;
    case 0x103: l->result = f_bits(fb - fa); return 1;
    case 0x105: l->result = f_bits(fa * fb); return 1;
    case 0x106: l->result = (uint32_t)((int32_t)(a << 8) >> 8) * (uint32_t)((int32_t)(b << 8) >> 8); return 1;
    case 0x108: l->result = (a & 0xffffff) * (b & 0xffffff); return 1;
    case 0x10a: l->result = f_bits(min_hw(fa, fb)); return 1;
    case 0x10b: l->result = f_bits(max_hw(fa, fb)); return 1;
    case 0x10c: l->result = (int32_t)a < (int32_t)b ? a : b; return 1;
    case 0x10d: l->result = (int32_t)a > (int32_t)b ? a : b; return 1;
    case 0x10e: l->result = a < b ? a : b; return 1;
    case 0x10f: l->result = a > b ? a : b; return 1;
    case 0x110: l->result = b >> (a & 31); return 1;                   /* v_lshrrev_b32 */
    case 0x111: l->result = (uint32_t)((int32_t)b >> (a & 31)); return 1;
    case 0x112: l->result = b << (a & 31); return 1;                   /* v_lshlrev_b32 */
    case 0x113: l->result = a & b; return 1;
    case 0x114: l->result = a | b; return 1;
    case 0x115: l->result = a ^ b; return 1;
    case 0x117: l->result = f_bits(fmaf(fa, as_f(l->c), fb)); return 1;  /* v_fmamk: a*K+b */
    case 0x118: l->result = f_bits(fmaf(fa, fb, as_f(l->c))); return 1;  /* v_fmaak: a*b+K */
    case 0x119: wide = (uint64_t)a + b; l->result = (uint32_t)wide; l->carry_out = wide >> 32; return 1;
    case 0x11a: l->result = a - b; l->carry_out = b > a; return 1;
    case 0x11b: l->result = b - a; l->carry_out = a > b; return 1;
    case 0x11c: wide = (uint64_t)a + b + (uint64_t)l->carry_in; l->result = (uint32_t)wide;
      l->carry_out = wide >> 32; return 1;
    case 0x11d: l->result = a - b - (uint32_t)l->carry_in;
      l->carry_out = (uint64_t)b + (uint64_t)l->carry_in > a; return 1;
    case 0x11e: l->result = b - a - (uint32_t)l->carry_in;
      l->carry_out = (uint64_t)a + (uint64_t)l->carry_in > b; return 1;
    case 0x134: l->result = a + b; return 1;                           /* v_add_u32 */
    case 0x135: l->result = a - b; return 1;
    case 0x136: l->result = b - a; return 1;
    case 0x13b: l->result = f_bits(fmaf(fa, fb, as_f(l->c))); return 1; /* v_fmac_f32: c is dst */
    case 0x141: l->result = a; return 1;                               /* v_mov_b32 */
    case 0x145: l->result = f_bits((float)(int32_t)a); return 1;
    case 0x146: l->result = f_bits((float)a); return 1;
    case 0x147: l->result = f32_to_u32(fa); return 1;
    case 0x148: l->result = f32_to_i32(fa); return 1;
    case 0x178: l->result64 = l->a64; l->wide = 1; return 1;           /* v_mov_b64 */
    case 0x137:  /* v_dot2c_f32_f16: the f16 pairs' products added to the destination */
      l->result = f_bits(fmaf(half(a >> 16), half(b >> 16), fmaf(half(a), half(b), as_f(l->c))));
      return 1;
    /* softhsa-private numbers for GFX11 operations GFX9 lacks (gen_gfx11_map.py) */
    case 0x400: l->result = (l->carry_in ? b : a) & 0xffff; return 1;  /* v_cndmask_b16 */
    case 0x401: case 0x402: l->result = a & 0xffff; return 1;         /* v_mov_b16, cvt_u32_u16 */
    case 0x403: l->result = a ^ b ^ l->c; return 1;                    /* v_xor3_b32 */
    case 0x405: l->result = (uint32_t)(int32_t)(int16_t)a; return 1;   /* v_cvt_i32_i16 */
    case 0x407: l->result = a & b & 0xffff; return 1;                  /* v_and_b16 */
    case 0x408: l->result = (a | b) & 0xffff; return 1;                /* v_or_b16 */
    case 0x409: l->result = (a ^ b) & 0xffff; return 1;                /* v_xor_b16 */
    case 0x40a: l->result = ~a & 0xffff; return 1;                     /* v_not_b16 */
    /* VOP3-only */
    case 0x1c3: l->result = (a & 0xffffff) * (b & 0xffffff) + l->c; return 1;
    case 0x1c8: { const uint32_t off = b & 31, width = l->c & 31;
      l->result = width == 0 ? 0 : (a >> off) & (width == 32 ? 0xffffffffu : (1u << width) - 1);
      return 1; }
    case 0x1cb: l->result = f_bits(fmaf(fa, fb, as_f(l->c))); return 1;  /* v_fma_f32 */
    case 0x1ce: l->result = (uint32_t)((((uint64_t)a << 32) | b) >> (l->c & 31)); return 1;
    case 0x1fd: l->result = (a << (b & 31)) + l->c; return 1;          /* v_lshl_add_u32 */
    case 0x1fe: l->result = (a + b) << (l->c & 31); return 1;          /* v_add_lshl_u32 */
    case 0x1ff: l->result = a + b + l->c; return 1;                    /* v_add3_u32 */
    case 0x200: l->result = (a << (b & 31)) | l->c; return 1;          /* v_lshl_or_b32 */
    case 0x201: l->result = (a & b) | l->c; return 1;                  /* v_and_or_b32 */
    case 0x202: l->result = a | b | l->c; return 1;                    /* v_or3_b32 */
    case 0x208: l->result64 = (l->a64 << (b & 7)) + l->c64; l->wide = 1; return 1;
    case 0x28f: l->result64 = l->b64 << (a & 63); l->wide = 1; return 1;  /* v_lshlrev_b64 */
    case 0x290: l->result64 = l->b64 >> (a & 63); l->wide = 1; return 1;
    case 0x291: l->result64 = (uint64_t)((int64_t)l->b64 >> (a & 63)); l->wide = 1; return 1;
    case 0x285: l->result = a * b; return 1;                           /* v_mul_lo_u32 */
    case 0x286: l->result = (uint32_t)(((uint64_t)a * b) >> 32); return 1;
    case 0x288: l->result = f_bits(ldexpf(fa, (int32_t)b)); return 1;
  }
  return 0;
}

/* Float source modifiers (VOP3 abs/neg) on a 32-bit operand. */
static uint32_t modify(uint32_t bits, int abs_bit, int neg_bit) {
  if (abs_bit) bits &= 0x7fffffffu;
  if (neg_bit) bits ^= 0x80000000u;
  return bits;
}

static int float_op(uint32_t op) {
  return (op >= 0x40 && op <= 0x4f) || (op >= 0x60 && op <= 0x6f) || op == 0x10 || op == 0x100 ||
         op == 0x12 || op == 0x101 || op == 0x102 || op == 0x103 || op == 0x104 ||
         op == 0x105 || op == 0x10a || op == 0x10b || op == 0x117 || op == 0x118 ||
         op == 0x13b || op == 0x147 || op == 0x148 || (op >= 0x14f && op <= 0x174) ||
         (op >= 0x1cb && op <= 0x1cc) || (op >= 0x1d3 && op <= 0x1d3) ||
         (op >= 0x1de && op <= 0x1e3) || op == 0x280 || op == 0x281 || op == 0x284 ||
         op == 0x40c || op == 0x40d ||
         op == 0x288;
}

/* An f32 denormal flushed to a zero of its sign. */
static uint32_t flush32(uint32_t bits) {
  return (bits & 0x7f800000u) == 0 ? bits & 0x80000000u : bits;
}

/* Float source modifiers on a 64-bit operand. */
static uint64_t modify64(uint64_t bits, int abs_bit, int neg_bit) {
  if (abs_bit) bits &= ~(1ull << 63);
  if (neg_bit) bits ^= 1ull << 63;
  return bits;
}

/* Per-lane operands of a DPP or SDWA instruction (the second dword's lane moves and
 * selections, applied before the op), the lanes allowed to write, and SDWA's destination
 * selection. */
typedef struct {
  uint32_t a[MAX_LANES], b[MAX_LANES];
  int has_b;
  uint64_t enabled;
  int sdwa;
  uint32_t dst_sel, dst_unused;
} override_t;

/* One VALU instruction over the active lanes. `op` in the VOP3 numbering; `sdst`: where a
 * comparison / carry-out mask goes (106 for VCC in the 32-bit encodings); `carry`: the mask a
 * cndmask / carry-in reads. */
static hsa_status_t valu_all(run_t* r, wave_t* w, uint32_t op, uint32_t vdst, uint32_t src0,
                             uint32_t src1, uint32_t src2, uint32_t sdst, uint64_t carry,
                             uint32_t abs, uint32_t neg, const decode_t* k, uint64_t at,
                             const char* family, const override_t* over, uint32_t op_sel) {
  const int is_cmp = op < 0x100;
  /* v_cmpx_*: the result is also (on GFX11 only) the new EXEC; the comparison is the v_cmp_*
     beside it (bit 4 above 0x20, bit 0 for the class tests). */
  const int is_cmpx = is_cmp && (op >= 0x20 ? (op & 0x10) != 0 : op >= 0x10 && (op & 1));
  if (is_cmpx) op = op >= 0x20 ? op & ~0x10u : op & ~1u;
  const int reads_c = op == 0x13b || op == 0x137 || op == 0x104 || op == 0x117 || op == 0x118 ||
                      (op >= 0x403 && op <= 0x411) || (op >= 0x1c0 && op < 0x280);
  const uint32_t wide = wide_sources(op);
  const int floats = float_op(op);
  const int half_floats = (abs || neg) && (op == 0x14b || op == 0x11f || op == 0x122 ||
                                           op == 0x207 || op == 0x17c ||
                                           (op >= 0x28 && op <= 0x2f));
  uint64_t mask = 0, carries = 0;
  for (uint32_t lane = 0; lane < r->lanes; ++lane) {
    if (!active(w, lane)) continue;
    if (over && !((over->enabled >> lane) & 1)) continue;
    lane_t l;
    memset(&l, 0, sizeof(l));
    l.a = over ? over->a[lane] : vread(w, src0, lane, k);
    l.b = over && over->has_b ? over->b[lane] : vread(w, src1, lane, k);
    if (reads_c) l.c = op == 0x13b || op == 0x137 ? w->v[vdst][lane] : vread(w, src2, lane, k);
    if (op == 0x117 || op == 0x118) l.c = k->literal;
    if (wide & 1) l.a64 = vread64(w, src0, lane, k);
    if (wide & 2) l.b64 = vread64(w, src1, lane, k);
    if (wide & 4) l.c64 = op == 0x104 ? (w->v[vdst][lane] | (uint64_t)w->v[vdst + 1][lane] << 32)
                                      : vread64(w, src2, lane, k);
    if (half_floats) {  /* f16 operands: the modifiers act on bit 15 */
      l.a = (l.a & ((abs & 1) ? 0xffff7fffu : ~0u)) ^ ((neg & 1) ? 0x8000u : 0);
      l.b = (l.b & ((abs & 2) ? 0xffff7fffu : ~0u)) ^ ((neg & 2) ? 0x8000u : 0);
      l.c = (l.c & ((abs & 4) ? 0xffff7fffu : ~0u)) ^ ((neg & 4) ? 0x8000u : 0);
    }
    if (floats) {
      /* an f64 literal gives the high half */
      if ((wide & 1) && src0 == 255) l.a64 = (uint64_t)k->literal << 32;
      if ((wide & 2) && src1 == 255) l.b64 = (uint64_t)k->literal << 32;
      if ((wide & 4) && src2 == 255) l.c64 = (uint64_t)k->literal << 32;
      l.a = modify(l.a, abs & 1, neg & 1);
      l.b = modify(l.b, abs & 2, neg & 2);
      l.c = modify(l.c, abs & 4, neg & 4);
      l.a64 = modify64(l.a64, abs & 1, neg & 1);
      l.b64 = modify64(l.b64, abs & 2, neg & 2);
      l.c64 = modify64(l.c64, abs & 4, neg & 4);
    }
    if (floats && r->flush_in) {
      l.a = flush32(l.a);
      l.b = flush32(l.b);
      l.c = flush32(l.c);
    }
    if (op_sel) {  /* VOP3 op_sel on 16-bit operands: the high halves */
      if (op_sel & 1) l.a >>= 16;
      if (op_sel & 2) l.b >>= 16;
      if (op_sel & 4) l.c >>= 16;
    }
    l.carry_in = (carry >> lane) & 1;
    if (!valu(op, &l)) return illegal(r, w, family, op, at);
    if (floats && r->flush_out && !l.wide && !is_cmp) l.result = flush32(l.result);
    if (is_cmp) {
      mask |= (uint64_t)l.cmp << lane;
    } else if (l.wide) {
      w->v[vdst][lane] = (uint32_t)l.result64;
      w->v[vdst + 1][lane] = (uint32_t)(l.result64 >> 32);
    } else if (op_sel & 8) {  /* the result into the high half */
      w->v[vdst][lane] = (w->v[vdst][lane] & 0xffffu) | l.result << 16;
    } else if (op_sel & 16) {  /* a 16-bit result into the low half, the high half kept */
      w->v[vdst][lane] = (w->v[vdst][lane] & 0xffff0000u) | (l.result & 0xffffu);
    } else if (over && over->sdwa && over->dst_sel != 6) {
      /* SDWA: the result's low bits into the selected byte / word; the rest zero, sign or
         the old value (dst_unused PAD / SEXT / PRESERVE). */
      const uint32_t sel = over->dst_sel, shift = sel < 4 ? 8 * sel : 16 * (sel - 4);
      const uint32_t width = sel < 4 ? 8 : 16, field = (1u << width) - 1;
      uint32_t value = (l.result & field) << shift;
      if (over->dst_unused == 2) {
        value |= w->v[vdst][lane] & ~(field << shift);
      } else if (over->dst_unused == 1 && (l.result >> (width - 1)) & 1) {
        value |= ~0u << (shift + width);
      }
      w->v[vdst][lane] = value;
    } else {
      w->v[vdst][lane] = l.result;
    }
    carries |= (uint64_t)l.carry_out << lane;
  }
  if (is_cmpx) {
    w->exec = mask;
    if (!r->gfx11) mask_write(r, w, sdst, mask);
  } else if (is_cmp) {
    mask_write(r, w, sdst, mask);
  } else if (((op >= 0x119 && op <= 0x11e) || op == 0x1e0 || op == 0x1e1) && sdst != 0xffffffffu) {
    mask_write(r, w, sdst, carries);
  }
  return HSA_STATUS_SUCCESS;
}

/* A VOP3 instruction's fields, decoded from either generation's encoding (`op` in the GFX9
 * numbering; `sdst` the VOP3b scalar destination; `op_sel` already limited to 16-bit ops, bit 4
 * asking a low-half result to keep the high half). */
typedef struct {
  uint32_t op, vdst, src0, src1, src2, abs, neg, sdst, op_sel;
} vop3_t;

static hsa_status_t vop3_run(run_t* r, wave_t* w, const vop3_t* f, const decode_t* k,
                             uint64_t at) {
  const uint32_t op = f->op, vdst = f->vdst, src0 = f->src0, src1 = f->src1, src2 = f->src2;
  const uint32_t abs = f->abs, neg = f->neg, op_sel = f->op_sel;
  if (op < 0x100) {  /* VOPC promoted: the mask to an SGPR pair */
    return valu_all(r, w, op, 0, src0, src1, 0, vdst, 0, abs, neg, k, at, "VOP3", NULL, op_sel);
  }
  if (op == 0x289) {  /* v_readlane_b32 sdst, vsrc, lane */
    swrite(w, vdst, vread(w, src0, sread(w, src1, k) % r->lanes, k));
    return HSA_STATUS_SUCCESS;
  }
  if (op == 0x28a) {  /* v_writelane_b32 vdst, ssrc, lane */
    w->v[vdst][sread(w, src1, k) % r->lanes] = sread(w, src0, k);
    return HSA_STATUS_SUCCESS;
  }
  if (op == 0x404 || op == 0x40b) {
    /* v_permlanex16_b32: each lane reads the other row of 16 in its half; v_permlane16_b32 its
       own row; the lane within the row from the 4-bit selects in src1 (lanes 0-7), src2 (8-15) */
    const uint64_t select = sread(w, src1, k) | (uint64_t)sread(w, src2, k) << 32;
    uint32_t out[MAX_LANES];
    if (src0 < 256) return illegal(r, w, "VOP3 v_permlane with a scalar source", op, at);
    for (uint32_t lane = 0; lane < r->lanes; ++lane) {
      const uint32_t row = op == 0x404 ? (lane & ~31u) | ((lane & 16) ^ 16) : lane & ~15u;
      const uint32_t from = row + (uint32_t)((select >> (4 * (lane & 15))) & 15);
      out[lane] = w->v[src0 - 256][from];
    }
    for (uint32_t lane = 0; lane < r->lanes; ++lane)
      if (active(w, lane)) w->v[vdst][lane] = out[lane];
    return HSA_STATUS_SUCCESS;
  }
  if (op == 0x1e8 || op == 0x1e9) {  /* v_mad_u64_u32 / v_mad_i64_i32 (VOP3b) */
    const uint32_t sdst = f->sdst;
    uint64_t carries = 0;
    for (uint32_t lane = 0; lane < r->lanes; ++lane) {
      if (!active(w, lane)) continue;
      const uint32_t a = vread(w, src0, lane, k), b = vread(w, src1, lane, k);
      const uint64_t c = vread64(w, src2, lane, k);
      const unsigned __int128 product = op == 0x1e8
          ? (unsigned __int128)a * b
          : (unsigned __int128)(__int128)((int64_t)(int32_t)a * (int32_t)b);
      const unsigned __int128 sum = product + c;
      w->v[vdst][lane] = (uint32_t)sum;
      w->v[vdst + 1][lane] = (uint32_t)(sum >> 32);
      carries |= (uint64_t)((sum >> 64) & 1) << lane;
    }
    mask_write(r, w, sdst, carries);
    return HSA_STATUS_SUCCESS;
  }
  if (op == 0x1e0 || op == 0x1e1) {  /* v_div_scale (VOP3b): the post-scale mask to sdst */
    return valu_all(r, w, op, vdst, src0, src1, src2, f->sdst, 0, 0, neg, k, at, "VOP3", NULL, 0);
  }
  if (op >= 0x119 && op <= 0x11e) {  /* carry ops (VOP3b): carry in from src2 */
    return valu_all(r, w, op, vdst, src0, src1, 0, f->sdst, sread64(w, src2, k), 0, 0, k, at,
                    "VOP3", NULL, 0);
  }
  /* v_cndmask_b32_e64 / _b16 read their mask from src2; v_div_fmas reads VCC */
  const uint64_t carry = op == 0x100 || op == 0x400 ? sread64(w, src2, k)
                         : (op == 0x1e2 || op == 0x1e3) ? w->vcc : 0;
  return valu_all(r, w, op, vdst, src0, src1, src2, 0xffffffffu, carry, abs, neg, k, at,
                  "VOP3", NULL, op_sel);
}

/* GFX9 VOP3: [25:16] op, [15] clamp, [14:11] op_sel, [10:8] abs (VOP3b: sdst [14:8]), [7:0]
 * vdst; second dword src0 [8:0], src1 [17:9], src2 [26:18], omod [28:27], neg [31:29]. */
static hsa_status_t vop3(run_t* r, wave_t* w, uint32_t word, uint32_t word1, const decode_t* k,
                         uint64_t at) {
  const uint32_t op = (word >> 16) & 0x3ff;
  /* op_sel [14:11] selects halves of 16-bit operands (and of the result) */
  const int halves = op == 0x14b || op == 0x14a || op == 0x11f || op == 0x122 ||
                     (op >= 0x126 && op <= 0x130) || op == 0x17a || op == 0x17c ||
                     op == 0x1f8 || op == 0x207 || (op >= 0x28 && op <= 0x2f) ||
                     (op >= 0xa0 && op <= 0xaf);
  const vop3_t f = {op, word & 0xff, word1 & 0x1ff, (word1 >> 9) & 0x1ff, (word1 >> 18) & 0x1ff,
                    (word >> 8) & 7, (word1 >> 29) & 7, (word >> 8) & 0x7f,
                    halves ? (word >> 11) & 15 : 0};
  return vop3_run(r, w, &f, k, at);
}

/* VOP3P: packed math. The f32 forms (gfx940) take 64-bit register pairs as two f32 lanes; the
 * 16-bit forms two halves of one dword. op_sel picks each source's half for the low result,
 * op_sel_hi for the high one; neg / neg_hi negate per half. MFMA: a 16x16 block of D = A * B + C
 * over the wave (A 16xK: element (i, k) in lane i + 16 * (k / per_lane); B Kx16: (k, j) in lane
 * j + 16 * (k / per_lane); C/D: (i, j) in lane j + 16 * (i / 4), register i % 4), per the MI300
 * manual's matrix layouts. */
static uint32_t half_of(uint64_t pair, int high) { return (uint32_t)(high ? pair >> 32 : pair); }

static uint64_t vop3p_source(const wave_t* w, uint32_t code, uint32_t lane, const decode_t* k) {
  if (code >= 256) return w->v[code - 256][lane] | (uint64_t)w->v[code - 255][lane] << 32;
  if (code < 102 || code == 106 || code == 126) return sread64(w, code, k);
  const uint32_t value = sread(w, code, k);  /* an inline constant: both halves */
  return value | (uint64_t)value << 32;
}

static hsa_status_t mfma(run_t* r, wave_t* w, uint32_t op, uint32_t vdst, uint32_t src0,
                         uint32_t src1, uint32_t src2, const decode_t* k, uint64_t at) {
  if (r->lanes != 64) return illegal(r, w, "MFMA", op, at);
  float fd[64][4];
  int32_t id[64][4];
  const int integer = op == 0x57;
  if (op != 0x45 && !integer) return illegal(r, w, "MFMA", op, at);
  const uint32_t depth = integer ? 32 : 4, per_lane = integer ? 8 : 1;
  for (uint32_t i = 0; i < 16; ++i) {
    for (uint32_t j = 0; j < 16; ++j) {
      const uint32_t lane = j + 16 * (i / 4), reg = i % 4;
      const uint32_t c_code = src2 >= 256 ? src2 + reg : src2;  /* a constant C: every reg */
      double sum = as_f(vread(w, c_code, lane, k));
      int64_t isum = (int32_t)vread(w, c_code, lane, k);
      for (uint32_t kk = 0; kk < depth; ++kk) {
        const uint32_t a_lane = i + 16 * (kk / per_lane), b_lane = j + 16 * (kk / per_lane);
        if (integer) {
          const uint64_t a = vread64(w, src0, a_lane, k), b = vread64(w, src1, b_lane, k);
          isum += (int64_t)(int8_t)(a >> (8 * (kk % 8))) * (int8_t)(b >> (8 * (kk % 8)));
        } else {
          sum += (double)as_f(vread(w, src0, a_lane, k)) * as_f(vread(w, src1, b_lane, k));
        }
      }
      fd[lane][reg] = (float)sum;
      id[lane][reg] = (int32_t)isum;
    }
  }
  for (uint32_t lane = 0; lane < 64; ++lane)
    for (uint32_t reg = 0; reg < 4; ++reg)
      w->v[vdst + reg][lane] = integer ? (uint32_t)id[lane][reg] : f_bits(fd[lane][reg]);
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t vop3p(run_t* r, wave_t* w, uint32_t word, uint32_t word1, const decode_t* k,
                          uint64_t at) {
  const uint32_t op = (word >> 16) & 0x7f, vdst = word & 0xff;
  const uint32_t src0 = word1 & 0x1ff, src1 = (word1 >> 9) & 0x1ff, src2 = (word1 >> 18) & 0x1ff;
  const uint32_t op_sel = (word >> 11) & 7;
  const uint32_t op_sel_hi = ((word1 >> 27) & 3) | ((word >> 14) & 1) << 2;
  const uint32_t neg_lo = (word1 >> 29) & 7, neg_hi = (word >> 8) & 7;
  if (op >= 0x40) return mfma(r, w, op, vdst, src0, src1, src2, k, at);
  for (uint32_t lane = 0; lane < r->lanes; ++lane) {
    if (!active(w, lane)) continue;
    const uint64_t a = vop3p_source(w, src0, lane, k), b = vop3p_source(w, src1, lane, k);
    const uint64_t c = op == 0x30 ? vop3p_source(w, src2, lane, k) : 0;
    uint32_t lo, hi;
    if (op >= 0x30 && op <= 0x32) {  /* v_pk_fma_f32, v_pk_mul_f32, v_pk_add_f32 */
      float x[2], y[2], z[2];
      for (int h = 0; h < 2; ++h) {
        const uint32_t sel = h ? op_sel_hi : op_sel, neg = h ? neg_hi : neg_lo;
        x[h] = as_f(modify(half_of(a, sel & 1), 0, neg & 1));
        y[h] = as_f(modify(half_of(b, sel & 2), 0, neg & 2));
        z[h] = as_f(modify(half_of(c, sel & 4), 0, neg & 4));
      }
      float d[2];
      for (int h = 0; h < 2; ++h)
        d[h] = op == 0x30 ? fmaf(x[h], y[h], z[h]) : op == 0x31 ? x[h] * y[h] : x[h] + y[h];
      lo = f_bits(d[0]);
      hi = f_bits(d[1]);
    } else if (op >= 0x20 && op <= 0x22) {
      /* v_fma_mix_f32 / mixlo_f16 / mixhi_f16: each source an f32 (op_sel_hi 0) or the f16 half
         op_sel picks; neg_lo negates, neg_hi takes the absolute value */
      const uint64_t sources[3] = {a, b, vop3p_source(w, src2, lane, k)};
      float x[3];
      for (int i = 0; i < 3; ++i) {
        const uint32_t bits = (uint32_t)sources[i];
        x[i] = (op_sel_hi >> i) & 1 ? half((op_sel >> i) & 1 ? bits >> 16 : bits) : as_f(bits);
        if ((neg_hi >> i) & 1) x[i] = fabsf(x[i]);
        if ((neg_lo >> i) & 1) x[i] = -x[i];
      }
      const float d = fmaf(x[0], x[1], x[2]);
      const uint32_t old = w->v[vdst][lane];
      w->v[vdst][lane] = op == 0x20 ? f_bits(d)
                         : op == 0x21 ? (old & 0xffff0000u) | half_bits(d)
                                      : (old & 0xffffu) | half_bits(d) << 16;
      continue;
    } else if (op >= 0x0e && op <= 0x12) {
      /* v_pk_fma / add / mul / min / max _f16: per half, op_sel (low) / op_sel_hi (high) pick
         each source's half, neg_lo / neg_hi negate */
      const uint32_t x[3] = {(uint32_t)a, (uint32_t)b, (uint32_t)vop3p_source(w, src2, lane, k)};
      uint32_t out = 0;
      for (int h = 0; h < 2; ++h) {
        const uint32_t sel = h ? op_sel_hi : op_sel, neg = h ? neg_hi : neg_lo;
        float v[3];
        for (int i = 0; i < 3; ++i) {
          v[i] = half((sel >> i) & 1 ? x[i] >> 16 : x[i]);
          if ((neg >> i) & 1) v[i] = -v[i];
        }
        const float d = op == 0x0e ? fmaf(v[0], v[1], v[2]) : op == 0x0f ? v[0] + v[1]
                        : op == 0x10 ? v[0] * v[1] : op == 0x11 ? min_hw(v[0], v[1])
                                                              : max_hw(v[0], v[1]);
        out |= half_bits(d) << (16 * h);
      }
      w->v[vdst][lane] = out;
      continue;
    } else if (op == 0x33) {  /* v_pk_mov_b32 */
      lo = half_of(a, op_sel & 1);
      hi = half_of(b, op_sel & 2);
    } else if ((op >= 0x01 && op <= 0x08) || (op >= 0x0a && op <= 0x0d)) {
      /* 16-bit integer pairs: v_pk_mul_lo_u16, add/sub_i16, lshlrev/lshrrev/ashrrev_b16,
         max/min_i16, add/sub/max/min_u16 (op_sel / op_sel_hi pick each source's half) */
      uint32_t out = 0;
      for (int h = 0; h < 2; ++h) {
        const uint32_t sel = h ? op_sel_hi : op_sel;
        const uint32_t x = ((sel & 1) ? (uint32_t)a >> 16 : (uint32_t)a) & 0xffff;
        const uint32_t y = ((sel & 2) ? (uint32_t)b >> 16 : (uint32_t)b) & 0xffff;
        const int32_t sx = (int16_t)x, sy = (int16_t)y;
        uint32_t v;
        switch (op) {
          case 0x01: v = x * y; break;
          case 0x02: case 0x0a: v = x + y; break;
          case 0x03: case 0x0b: v = x - y; break;
          case 0x04: v = y << (x & 15); break;
          case 0x05: v = y >> (x & 15); break;
          case 0x06: v = (uint32_t)(sy >> (x & 15)); break;
          case 0x07: v = (uint32_t)(sx > sy ? sx : sy); break;
          case 0x08: v = (uint32_t)(sx < sy ? sx : sy); break;
          case 0x0c: v = x > y ? x : y; break;
          default: v = x < y ? x : y; break;
        }
        out |= (v & 0xffff) << (16 * h);
      }
      w->v[vdst][lane] = out;
      continue;
    } else {
      return illegal(r, w, "VOP3P", op, at);
    }
    w->v[vdst][lane] = lo;
    w->v[vdst + 1][lane] = hi;
  }
  return HSA_STATUS_SUCCESS;
}

/* DPP: src0 read from another lane of the row / wave (dpp_ctrl), rows and banks masked;
 * an invalid or inactive source lane reads 0 with BOUND_CTRL, else the lane does not write. */
static int dpp_source(uint32_t ctrl, uint32_t lane, uint32_t lanes) {
  const uint32_t row = lane & ~15u, in_row = lane & 15;
  if (ctrl <= 0xff) return (int)((lane & ~3u) + ((ctrl >> (2 * (lane & 3))) & 3));
  if (ctrl >= 0x101 && ctrl <= 0x10f) return in_row + (ctrl & 15) < 16 ? (int)(lane + (ctrl & 15)) : -1;
  if (ctrl >= 0x111 && ctrl <= 0x11f) return in_row >= (ctrl & 15) ? (int)(lane - (ctrl & 15)) : -1;
  if (ctrl >= 0x121 && ctrl <= 0x12f) return (int)(row + ((in_row - (ctrl & 15)) & 15));
  switch (ctrl) {
    case 0x130: return lane + 1 < lanes ? (int)lane + 1 : -1;
    case 0x134: return (int)((lane + 1) % lanes);
    case 0x138: return lane ? (int)lane - 1 : -1;
    case 0x13c: return (int)((lane + lanes - 1) % lanes);
    case 0x140: return (int)(row + 15 - in_row);
    case 0x141: return (int)((lane & ~7u) + 7 - (lane & 7));
    case 0x142: return row ? (int)row - 1 : -1;                    /* row_bcast:15 */
    case 0x143: return lane >= 32 ? 31 : -1;                       /* row_bcast:31 */
  }
  if (ctrl >= 0x150 && ctrl <= 0x15f) return (int)(row + (ctrl & 15));          /* row_share */
  if (ctrl >= 0x160 && ctrl <= 0x16f) return (int)(row + (in_row ^ (ctrl & 15))); /* row_xmask */
  return -2;  /* unknown control */
}

static hsa_status_t dpp_fill(run_t* r, const wave_t* w, uint32_t x, uint32_t src1,
                             const decode_t* k, override_t* o, int floats, uint64_t at) {
  const uint32_t ctrl = (x >> 8) & 0x1ff, bound = (x >> 19) & 1;
  const uint32_t bank_mask = (x >> 24) & 15, row_mask = (x >> 28) & 15, src0 = x & 0xff;
  o->enabled = 0;
  o->has_b = 1;
  o->sdwa = 0;
  for (uint32_t lane = 0; lane < r->lanes; ++lane) {
    if (!((row_mask >> (lane / 16)) & 1) || !((bank_mask >> ((lane >> 2) & 3)) & 1)) continue;
    const int from = dpp_source(ctrl, lane, r->lanes);
    if (from == -2) return fail(r, (hsa_status_t)HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION,
                                "softhsa cannot run DPP control 0x%x at 0x%llx", ctrl,
                                (unsigned long long)at);
    uint32_t a;
    if (from < 0 || !active(w, (uint32_t)from)) {
      if (!bound) continue;
      a = 0;
    } else {
      a = w->v[src0][from];
    }
    uint32_t b = vread(w, src1, lane, k);
    if (floats) {
      a = modify(a, (x >> 21) & 1, (x >> 20) & 1);
      b = modify(b, (x >> 23) & 1, (x >> 22) & 1);
    }
    o->a[lane] = a;
    o->b[lane] = b;
    o->enabled |= 1ull << lane;
  }
  return HSA_STATUS_SUCCESS;
}

static uint32_t sdwa_select(uint32_t value, uint32_t sel, int sext) {
  if (sel >= 6) return value;
  const uint32_t shift = sel < 4 ? 8 * sel : 16 * (sel - 4), width = sel < 4 ? 8 : 16;
  uint32_t field = (value >> shift) & ((1u << width) - 1);
  if (sext && ((field >> (width - 1)) & 1)) field |= ~0u << width;
  return field;
}

/* SDWA: byte / word selections of src0 and src1 (sign-extended on request), float modifiers;
 * src0 or src1 may be an SGPR (the s0 / s1 bits). */
static void sdwa_fill(run_t* r, const wave_t* w, uint32_t x, uint32_t src1, const decode_t* k,
                      override_t* o, int floats, int compare) {
  const uint32_t src0 = (x & 0xff) + (((x >> 23) & 1) ? 0 : 256);
  const uint32_t sel0 = (x >> 16) & 7, sel1 = (x >> 24) & 7;
  const int sext0 = (x >> 19) & 1, sext1 = (x >> 27) & 1;
  const uint32_t b_code = ((x >> 31) & 1) ? src1 - 256 : src1;
  o->enabled = ~0ull;
  o->has_b = 1;
  o->sdwa = !compare;
  o->dst_sel = (x >> 8) & 7;
  o->dst_unused = (x >> 11) & 3;
  for (uint32_t lane = 0; lane < r->lanes; ++lane) {
    uint32_t a = sdwa_select(vread(w, src0, lane, k), sel0, sext0);
    uint32_t b = sdwa_select(vread(w, b_code, lane, k), sel1, sext1);
    if (floats) {
      a = modify(a, (x >> 21) & 1, (x >> 20) & 1);
      b = modify(b, (x >> 29) & 1, (x >> 28) & 1);
    }
    o->a[lane] = a;
    o->b[lane] = b;
  }
}

/* ---- vector memory --------------------------------------------------------------------------- */

static hsa_status_t flat(run_t* r, wave_t* w, uint32_t word, uint32_t word1, uint64_t at) {
  const uint32_t op = (word >> 18) & 0x7f, seg = (word >> 14) & 3;
  const int32_t offset = (int32_t)(word << 19) >> 19;  /* 13-bit signed */
  const uint32_t addr = word1 & 0xff, data = (word1 >> 8) & 0xff, saddr = (word1 >> 16) & 0x7f;
  const uint32_t vdst = word1 >> 24;
  if (seg == 1) return illegal(r, w, "SCRATCH", op, at);
  uint32_t dwords, store, size = 4, sign = 0, d16 = 0;  /* d16: 1 low half, 2 high half */
  if (op >= 32 && op <= 37) {  /* *_d16(_hi) loads: into one half, the other kept */
    dwords = 1; store = 0; size = op < 36 ? 1 : 2; sign = op == 34 || op == 35; d16 = 1 + (op & 1);
  } else if (op == 25 || op == 27) {  /* store_byte / short _d16_hi: from the high half */
    dwords = 1; store = 1; size = op == 25 ? 1 : 2; d16 = 2;
  } else if (op >= 20 && op <= 23) { dwords = op - 19; store = 0; }
  else if (op >= 28 && op <= 31) { dwords = op - 27; store = 1; }
  else if (op >= 16 && op <= 19) { dwords = 1; store = 0; size = op < 18 ? 1 : 2; sign = op & 1; }
  else if (op == 24 || op == 26) { dwords = 1; store = 1; size = op == 24 ? 1 : 2; }
  else return illegal(r, w, seg == 2 ? "GLOBAL" : "FLAT", op, at);
  for (uint32_t lane = 0; lane < r->lanes; ++lane) {
    if (!active(w, lane)) continue;
    uint64_t address;
    if (seg == 2 && saddr != 0x7f) {  /* SGPR base + 32-bit VGPR offset */
      address = (w->s[saddr] | (uint64_t)w->s[saddr + 1] << 32) + w->v[addr][lane];
    } else {
      address = w->v[addr][lane] | (uint64_t)w->v[addr + 1][lane] << 32;
    }
    address += (int64_t)offset;
    uint8_t* p = memory(r, address, (uint64_t)size * dwords);
    if (!p) return r->status;
    for (uint32_t i = 0; i < dwords; ++i) {
      if (store) {
        const uint32_t value = d16 == 2 ? w->v[data + i][lane] >> 16 : w->v[data + i][lane];
        memcpy(p + size * i, &value, size);
      } else {
        uint32_t value = 0;
        memcpy(&value, p + size * i, size);
        if (sign) value = size == 1 ? (uint32_t)(int32_t)(int8_t)value
                                    : (uint32_t)(int32_t)(int16_t)value;
        if (d16 == 1) value = (w->v[vdst + i][lane] & 0xffff0000u) | (value & 0xffff);
        if (d16 == 2) value = (w->v[vdst + i][lane] & 0xffffu) | value << 16;
        w->v[vdst + i][lane] = value;
      }
    }
  }
  return HSA_STATUS_SUCCESS;
}

/* MUBUF: a buffer resource (V#, 4 SGPRs: base [47:0], stride [61:48], num_records [95:64]),
 * index (IDXEN) and offset (OFFEN) VGPRs, the SGPR offset and the instruction's 12-bit offset.
 * Range checking as the MI300 manual gives it for the kernels IREE emits (raw buffers, stride 0:
 * each dword / element whose bytes pass num_records reads 0 and is not written; with a stride,
 * an index at or past num_records). */
static hsa_status_t mubuf(run_t* r, wave_t* w, uint32_t word, uint32_t word1, const decode_t* k,
                          uint64_t at) {
  const uint32_t op = (word >> 18) & 0x7f, inst_offset = word & 0xfff;
  const int offen = (word >> 12) & 1, idxen = (word >> 13) & 1;
  const uint32_t vaddr = word1 & 0xff, vdata = (word1 >> 8) & 0xff;
  const uint32_t srsrc = ((word1 >> 16) & 0x1f) * 4, soffset = sread(w, word1 >> 24, k);
  const uint64_t base = w->s[srsrc] | (uint64_t)(w->s[srsrc + 1] & 0xffff) << 32;
  const uint32_t stride = (w->s[srsrc + 1] >> 16) & 0x3fff, records = w->s[srsrc + 2];
  uint32_t size, count, store, sign = 0;
  switch (op) {
    case 16: size = 1; count = 1; store = 0; break;
    case 17: size = 1; count = 1; store = 0; sign = 1; break;
    case 18: size = 2; count = 1; store = 0; break;
    case 19: size = 2; count = 1; store = 0; sign = 1; break;
    case 20: case 21: case 22: case 23: size = 4; count = op - 19; store = 0; break;
    case 24: size = 1; count = 1; store = 1; break;
    case 26: size = 2; count = 1; store = 1; break;
    case 28: case 29: case 30: case 31: size = 4; count = op - 27; store = 1; break;
    default: return illegal(r, w, "MUBUF", op, at);
  }
  for (uint32_t lane = 0; lane < r->lanes; ++lane) {
    if (!active(w, lane)) continue;
    const uint64_t index = idxen ? w->v[vaddr][lane] : 0;
    const uint64_t offset = (uint64_t)(offen ? w->v[vaddr + idxen][lane] : 0) + inst_offset;
    const int index_out = stride != 0 && index >= records;
    for (uint32_t i = 0; i < count; ++i) {
      const uint64_t element = offset + (uint64_t)i * size;
      const int out = index_out || (stride == 0 && element + size + soffset > records);
      uint32_t value = 0;
      if (!out) {
        uint8_t* p = memory(r, base + soffset + element + index * stride, size);
        if (!p) return r->status;
        if (store) {
          memcpy(p, &w->v[vdata + i][lane], size);
          continue;
        }
        memcpy(&value, p, size);
        if (sign && size == 1) value = (uint32_t)(int32_t)(int8_t)value;
        if (sign && size == 2) value = (uint32_t)(int32_t)(int16_t)value;
      }
      if (!store) w->v[vdata + i][lane] = value;
    }
  }
  return HSA_STATUS_SUCCESS;
}

/* DS: LDS reads and writes at VGPR address + offset (the *2 forms: two elements at offset0 and
 * offset1 times the element size); an access past the workgroup's LDS reads 0 / is dropped. */
static hsa_status_t ds(run_t* r, wave_t* w, uint32_t word, uint32_t word1, uint64_t at) {
  const uint32_t op = (word >> 17) & 0xff, offset0 = word & 0xff, offset1 = (word >> 8) & 0xff;
  const uint32_t addr = word1 & 0xff, data0 = (word1 >> 8) & 0xff, data1 = (word1 >> 16) & 0xff;
  const uint32_t vdst = word1 >> 24;
  const uint32_t lds_size = r->d->group_segment_size;
  uint32_t size, pair = 0, store, sign = 0, d16 = 0;  /* d16: 1 low half, 2 high half */
  switch (op) {
    case 13: size = 4; store = 1; break;           /* ds_write_b32 */
    case 14: size = 4; store = 1; pair = 1; break; /* ds_write2_b32 */
    case 30: size = 1; store = 1; break;           /* ds_write_b8 */
    case 31: size = 2; store = 1; break;           /* ds_write_b16 */
    case 77: size = 8; store = 1; break;           /* ds_write_b64 */
    case 78: size = 8; store = 1; pair = 1; break; /* ds_write2_b64 */
    case 54: size = 4; store = 0; break;           /* ds_read_b32 */
    case 55: size = 4; store = 0; pair = 1; break; /* ds_read2_b32 */
    case 57: size = 1; store = 0; sign = 1; break; /* ds_read_i8 */
    case 58: size = 1; store = 0; break;           /* ds_read_u8 */
    case 59: size = 2; store = 0; sign = 1; break; /* ds_read_i16 */
    case 60: size = 2; store = 0; break;           /* ds_read_u16 */
    case 118: size = 8; store = 0; break;          /* ds_read_b64 */
    case 84: size = 1; store = 1; d16 = 2; break;   /* ds_write_b8_d16_hi */
    case 85: size = 2; store = 1; d16 = 2; break;   /* ds_write_b16_d16_hi */
    case 86: case 87: case 88: case 89: case 90: case 91:  /* ds_read_{u8,i8,u16}_d16(_hi) */
      size = op < 90 ? 1 : 2; store = 0; sign = op == 88 || op == 89; d16 = 1 + (op & 1); break;
    case 119: size = 8; store = 0; pair = 1; break; /* ds_read2_b64 */
    case 222: size = 12; store = 1; break;         /* ds_write_b96 */
    case 223: size = 16; store = 1; break;         /* ds_write_b128 */
    case 254: size = 12; store = 0; break;         /* ds_read_b96 */
    case 255: size = 16; store = 0; break;         /* ds_read_b128 */
    default: return illegal(r, w, "DS", op, at);
  }
  const uint32_t dwords = size < 4 ? 1 : size / 4;
  for (uint32_t lane = 0; lane < r->lanes; ++lane) {
    if (!active(w, lane)) continue;
    const uint32_t base = w->v[addr][lane];  /* read once: the destination may be the address */
    for (uint32_t part = 0; part <= pair; ++part) {
      const uint64_t address = (uint64_t)base +
          (pair ? (uint64_t)(part ? offset1 : offset0) * size : offset0 | offset1 << 8);
      const int out = address + size > lds_size;
      const uint32_t reg = store ? (part ? data1 : data0) : vdst + part * dwords;
      for (uint32_t i = 0; i < dwords; ++i) {
        const uint32_t piece = size < 4 ? size : 4;
        if (store) {
          const uint32_t value = d16 == 2 ? w->v[reg + i][lane] >> 16 : w->v[reg + i][lane];
          if (!out) memcpy(r->lds + address + 4 * i, &value, piece);
        } else {
          uint32_t value = 0;
          if (!out) memcpy(&value, r->lds + address + 4 * i, piece);
          if (sign && size == 1) value = (uint32_t)(int32_t)(int8_t)value;
          if (sign && size == 2) value = (uint32_t)(int32_t)(int16_t)value;
          if (d16 == 1) value = (w->v[reg + i][lane] & 0xffff0000u) | (value & 0xffff);
          if (d16 == 2) value = (w->v[reg + i][lane] & 0xffffu) | value << 16;
          w->v[reg + i][lane] = value;
        }
      }
    }
  }
  return HSA_STATUS_SUCCESS;
}

/* ---- the instruction loop -------------------------------------------------------------------- */

/* The instruction word at a code address (the load image is host memory). */
static uint32_t fetch(uint64_t address) {
  uint32_t word;
  memcpy(&word, (const void*)(uintptr_t)address, 4);
  return word;
}

/* The common part of the short VALU encodings (VOP1 / VOP2 / VOPC), once decoded: `op` in the
 * GFX9 VOP3 numbering, `over` the DPP / SDWA / true16 operands when there are any. */
static hsa_status_t vop_short(run_t* r, wave_t* w, uint32_t op, const char* family,
                              uint32_t vdst, uint32_t src0, uint32_t src1, uint32_t sdst,
                              const override_t* over, const decode_t* k, uint64_t at,
                              uint32_t op_sel) {
  if (op == 0x142) {  /* v_readfirstlane_b32 (vdst is an SGPR) */
    uint32_t lane = 0;
    while (lane < r->lanes && !active(w, lane)) ++lane;
    swrite(w, vdst, vread(w, src0, lane < r->lanes ? lane : 0, k));
    return HSA_STATUS_SUCCESS;
  }
  if (family[3] == 'C')
    return valu_all(r, w, op, 0, src0, src1, 0, sdst, 0, 0, 0, k, at, family, over, op_sel);
  const uint32_t carry_dst = (op >= 0x119 && op <= 0x11e) ? 106 : 0xffffffffu;
  const uint64_t carry = (op == 0x100 || (op >= 0x11c && op <= 0x11e)) ? w->vcc : 0;
  return valu_all(r, w, op, vdst, src0, src1, 0, carry_dst, carry, 0, 0, k, at, family, over,
                  op_sel);
}

/* The address after an instruction of `length` bytes at `at`, and its 32-bit literal (the dword
 * after it) into k when `literal` (an operand code 255, or an op that always has one). */
static uint64_t past(uint64_t at, uint32_t length, int literal, decode_t* k) {
  if (!literal) return at + length;
  k->literal = fetch(at + length);
  return at + length + 4;
}

/* One GFX9 instruction at `at` (w->pc moved past it first, so branches can set it). */
static hsa_status_t gfx9_step(run_t* r, wave_t* w, uint64_t at, uint32_t word) {
  decode_t k = {0, 0};
  if ((word >> 30) == 2 && (word >> 28) != 0xb && (word >> 23) < 0x17d) {  /* SOP2 */
    if (!known_scalar(word & 0xff) || !known_scalar((word >> 8) & 0xff))
      return illegal(r, w, "SOP2 operand", word & 0xffff, at);
    w->pc = past(at, 4, (word & 0xff) == 255 || ((word >> 8) & 0xff) == 255, &k);
    return sop2(r, w, word, &k, at);
  }
  if ((word >> 28) == 0xb && (word >> 23) < 0x17d) {  /* SOPK (below SOP1/C/P) */
    w->pc = at + 4;
    return sopk(r, w, word, at);
  }
  if ((word >> 23) == 0x17d) {
    w->pc = past(at, 4, (word & 0xff) == 255, &k);
    return sop1(r, w, word, &k, at);
  }
  if ((word >> 23) == 0x17e) {
    w->pc = past(at, 4, (word & 0xff) == 255 || ((word >> 8) & 0xff) == 255, &k);
    return sopc(r, w, word, &k, at);
  }
  if ((word >> 23) == 0x17f) {
    w->pc = at + 4;
    return sopp(r, w, word, at);
  }
  if ((word >> 26) == 0x30) {  /* SMEM */
    w->pc = at + 8;
    return smem(r, w, word, fetch(at + 4), at);
  }
  if ((word >> 31) == 0 || (word >> 25) == 0x3f || (word >> 25) == 0x3e) {
    /* VOP2 / VOP1 / VOPC: src0 [8:0] (a VGPR or scalar code), vsrc1 [16:9] */
    uint32_t src0 = word & 0x1ff;
    uint32_t op, vdst = (word >> 17) & 0xff, src1 = ((word >> 9) & 0xff) + 256;
    const char* family;
    if ((word >> 25) == 0x3f) { op = 0x140 + ((word >> 9) & 0xff); family = "VOP1"; }
    else if ((word >> 25) == 0x3e) { op = (word >> 17) & 0xff; family = "VOPC"; }
    else { op = 0x100 + ((word >> 25) & 0x3f); family = "VOP2"; }
    const int k_literal = op == 0x117 || op == 0x118;
    override_t over_storage, *over = NULL;
    uint32_t sdst = 106, length = 4;
    if (src0 == 0xf9 || src0 == 0xfa) {  /* SDWA / DPP: a second dword */
      const uint32_t x = fetch(at + 4);
      length = 8;
      over = &over_storage;
      if (src0 == 0xfa) {
        if (dpp_fill(r, w, x, src1, &k, over, float_op(op), at)) return r->status;
      } else {
        sdwa_fill(r, w, x, src1, &k, over, float_op(op), family[3] == 'C');
        if (family[3] == 'C' && ((x >> 15) & 1)) sdst = (x >> 8) & 0x7f;
      }
      src0 = 256 + (x & 0xff);
    } else if (src0 == 255 || k_literal) {
      k.literal = fetch(at + 4);
      length = 8;
    }
    w->pc = at + length;
    return vop_short(r, w, op, family, vdst, src0, src1, sdst, over, &k, at, 0);
  }
  if ((word >> 23) == 0x1a7) {  /* VOP3P (and MFMA) */
    w->pc = at + 8;
    return vop3p(r, w, word, fetch(at + 4), &k, at);
  }
  if ((word >> 26) == 0x34) {  /* VOP3 */
    const uint32_t word1 = fetch(at + 4);
    if ((word1 & 0x1ff) == 255 || ((word1 >> 9) & 0x1ff) == 255 || ((word1 >> 18) & 0x1ff) == 255)
      return illegal(r, w, "VOP3 literal", (word >> 16) & 0x3ff, at);
    w->pc = at + 8;
    return vop3(r, w, word, word1, &k, at);
  }
  w->pc = at + 8;
  if ((word >> 26) == 0x38) return mubuf(r, w, word, fetch(at + 4), &k, at);
  if ((word >> 26) == 0x36) return ds(r, w, word, fetch(at + 4), at);
  if ((word >> 26) == 0x37) return flat(r, w, word, fetch(at + 4), at);  /* FLAT / GLOBAL */
  return illegal(r, w, "encoding", word >> 23, at);
}

/* ---- GFX11 (RDNA3, wave32) ----------------------------------------------------------------
 * Each encoding is decoded with GFX11's field layout and its opcode mapped onto the GFX9 opcode
 * of the same operation (isa_gfx11_map.h, generated from llvm-mc-19 by gen_gfx11_map.py), so
 * one set of semantics serves both generations. Layouts from AMD's "RDNA3 Instruction Set
 * Architecture" (Microcode Formats), each checked with llvm-mc-19 --show-encoding: SMEM
 * [31:26]=0x3d, VOP3 0x35, VOPD 0x32, VOP3P [31:24]=0xcc; SOP*, VOP1/2/C, DS, FLAT and MUBUF
 * at the GFX9 prefixes with moved fields. Scalar codes: 124 is NULL, 125 M0. */
#include "isa_gfx11_map.h"

static uint32_t g11_scalar(uint32_t code) { return code == 124 ? 104 : code == 125 ? 124 : code; }
static uint32_t g11_source(uint32_t code) { return code < 256 ? g11_scalar(code) : code; }

static const uint32_t F16_CONSTANTS[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000,
                                          0x4400, 0xc400, 0x3118};

/* A 16-bit operand of a true16 instruction: a VGPR field's bit 7 names the high half. */
static uint32_t source16(const wave_t* w, uint32_t code, uint32_t lane, const decode_t* k) {
  if (code >= 256) {
    const uint32_t index = code - 256;
    return (w->v[index & 127][lane] >> (index & 128 ? 16 : 0)) & 0xffff;
  }
  if (code >= 240 && code <= 248) return F16_CONSTANTS[code - 240];
  return sread(w, code, k) & 0xffff;
}

/* The operands of a short-encoding true16 instruction (`flags`: bit 0 src0, bit 1 src1, bit 2
 * the destination are 16-bit); the destination half goes to *op_sel (8 high, 16 low). */
static void g11_true16(run_t* r, const wave_t* w, uint32_t flags, uint32_t src0, uint32_t src1,
                       uint32_t* vdst, override_t* o, const decode_t* k, uint32_t* op_sel) {
  o->enabled = w->exec;
  o->has_b = 1;
  o->sdwa = 0;
  for (uint32_t lane = 0; lane < r->lanes; ++lane) {
    o->a[lane] = flags & 1 ? source16(w, src0, lane, k) : vread(w, src0, lane, k);
    o->b[lane] = flags & 2 ? source16(w, src1, lane, k) : vread(w, src1, lane, k);
  }
  if (flags & 4) {
    *op_sel = *vdst & 128 ? 8 : 16;
    *vdst &= 127;
  }
}

/* DPP8 (src0 233, 234 with fetch-inactive): lane i reads lane (i & ~7) + select[i % 8]. */
static void dpp8_fill(run_t* r, const wave_t* w, uint32_t x, uint32_t src1, int fetch_inactive,
                      const decode_t* k, override_t* o) {
  o->enabled = w->exec;
  o->has_b = 1;
  o->sdwa = 0;
  for (uint32_t lane = 0; lane < r->lanes; ++lane) {
    const uint32_t from = (lane & ~7u) + ((x >> (8 + 3 * (lane & 7))) & 7);
    o->a[lane] = active(w, from) || fetch_inactive ? w->v[x & 0xff][from] : 0;
    o->b[lane] = vread(w, src1, lane, k);
  }
}

static hsa_status_t g11_vop_short(run_t* r, wave_t* w, uint64_t at, uint32_t word) {
  decode_t k = {0, 0};
  uint32_t src0 = g11_source(word & 0x1ff), vdst = (word >> 17) & 0xff;
  uint32_t src1 = ((word >> 9) & 0xff) + 256, op, flags, op11;
  const char* family;
  if ((word >> 25) == 0x3f) {
    op11 = (word >> 9) & 0xff; op = GFX11_VOP1[op11]; flags = GFX11_VOP1_T16[op11]; family = "VOP1";
  } else if ((word >> 25) == 0x3e) {
    op11 = vdst; op = GFX11_VOPC[op11]; flags = GFX11_VOPC_T16[op11]; family = "VOPC";
  } else {
    op11 = (word >> 25) & 0x3f; op = GFX11_VOP2[op11]; flags = GFX11_VOP2_T16[op11];
    family = "VOP2";
  }
  if (op >= GFX11_NOP) return illegal(r, w, family, op11, at);
  if (op == 0x142) vdst = g11_scalar(vdst);
  uint32_t length = 4, op_sel = 0;
  override_t over_storage, *over = NULL;
  if (src0 == 0xfa || src0 == 0xe9 || src0 == 0xea) {  /* DPP16 / DPP8: a second dword */
    const uint32_t x = fetch(at + 4);
    length = 8;
    over = &over_storage;
    if (flags) return illegal(r, w, "true16 DPP", op, at);
    if (src0 == 0xfa) {
      if (dpp_fill(r, w, x, src1, &k, over, float_op(op), at)) return r->status;
    } else {
      dpp8_fill(r, w, x, src1, src0 == 0xea, &k, over);
    }
    src0 = 256 + (x & 0xff);
  } else {
    if (src0 == 255 || op == 0x117 || op == 0x118) { k.literal = fetch(at + 4); length = 8; }
    if (flags) {
      over = &over_storage;
      g11_true16(r, w, flags, src0, src1, &vdst, over, &k, &op_sel);
    }
  }
  w->pc = at + length;
  return vop_short(r, w, op, family, vdst, src0, src1, 106, over, &k, at, op_sel);
}

static hsa_status_t g11_vop3(run_t* r, wave_t* w, uint32_t word, uint32_t word1,
                             const decode_t* k, uint64_t at) {
  const uint32_t op11 = (word >> 16) & 0x3ff, op = GFX11_VOP3[op11], flags = GFX11_VOP3_T16[op11];
  if (op >= GFX11_NOP) return illegal(r, w, "VOP3", op11, at);
  vop3_t f = {op, word & 0xff, g11_source(word1 & 0x1ff), g11_source((word1 >> 9) & 0x1ff),
              g11_source((word1 >> 18) & 0x1ff), (word >> 8) & 7, (word1 >> 29) & 7,
              g11_scalar((word >> 8) & 0x7f), 0};
  if (op < 0x100 || op == 0x289) f.vdst = g11_scalar(f.vdst);  /* an SGPR destination */
  if (flags) {  /* 16-bit operands: op_sel [14:11] picks halves; a low-half result keeps the high */
    f.op_sel = (word >> 11) & 15;
    if ((flags & 4) && !(f.op_sel & 8)) f.op_sel |= 16;
  }
  return vop3_run(r, w, &f, k, at);
}

/* VOPD: two VALU operations issued together, each reading its sources before either writes.
 * X: [25:22] op, src0 [8:0], vsrc1 [16:9], vdst second dword [31:24]; Y: [21:17] op, src0 and
 * vsrc1 at the same places in the second dword, vdst [23:17] << 1 | the other bit of X's. */
static const uint16_t VOPD_OPS[19] = {
    0x13b, 0x118, 0x117, 0x105, 0x101, 0x102, 0x103, 0x406, 0x141, 0x100, 0x10b, 0x10a,
    0x137, GFX11_NONE, GFX11_NONE, GFX11_NONE, 0x134, 0x112, 0x113};

static hsa_status_t g11_vopd(run_t* r, wave_t* w, uint32_t word, uint64_t at) {
  const uint32_t word1 = fetch(at + 4);
  const uint32_t opx = (word >> 22) & 15, opy = (word >> 17) & 31;
  const uint32_t ops[2] = {VOPD_OPS[opx], opy < 19 ? VOPD_OPS[opy] : GFX11_NONE};
  const uint32_t vdstx = word1 >> 24;
  const uint32_t vdst[2] = {vdstx, (((word1 >> 17) & 0x7f) << 1) | ((vdstx & 1) ^ 1)};
  const uint32_t src0[2] = {g11_source(word & 0x1ff), g11_source(word1 & 0x1ff)};
  const uint32_t src1[2] = {256 + ((word >> 9) & 0xff), 256 + ((word1 >> 9) & 0xff)};
  if (ops[0] == GFX11_NONE || ops[1] == GFX11_NONE) return illegal(r, w, "VOPD", word >> 17 & 0x1ff, at);
  decode_t k = {0, 0};
  w->pc = past(at, 8, src0[0] == 255 || src0[1] == 255 || ops[0] == 0x117 || ops[0] == 0x118 ||
                          ops[1] == 0x117 || ops[1] == 0x118, &k);
  uint32_t out[2][MAX_LANES];
  for (int half_op = 0; half_op < 2; ++half_op) {
    const uint32_t op = ops[half_op];
    for (uint32_t lane = 0; lane < r->lanes; ++lane) {
      if (!active(w, lane)) continue;
      lane_t l;
      memset(&l, 0, sizeof(l));
      l.a = vread(w, src0[half_op], lane, &k);
      l.b = vread(w, src1[half_op], lane, &k);
      l.c = op == 0x117 || op == 0x118 ? k.literal : w->v[vdst[half_op]][lane];
      l.carry_in = (w->vcc >> lane) & 1;
      if (op == 0x406) {  /* v_dual_mul_dx9_zero_f32: 0 times anything is 0 */
        l.result = as_f(l.a) == 0 || as_f(l.b) == 0 ? 0 : f_bits(as_f(l.a) * as_f(l.b));
      } else if (!valu(op, &l)) {
        return illegal(r, w, "VOPD", op, at);
      }
      out[half_op][lane] = l.result;
    }
  }
  for (int half_op = 0; half_op < 2; ++half_op)
    for (uint32_t lane = 0; lane < r->lanes; ++lane)
      if (active(w, lane)) w->v[vdst[half_op]][lane] = out[half_op][lane];
  return HSA_STATUS_SUCCESS;
}

/* v_wmma_i32_16x16x16_iu8 (VOP3P 0x44; neg_lo bits 0/1: A/B signed) and
 * v_wmma_f32_16x16x16_f16 (0x40) on wave32: row i of A in lane i (and its copy in i + 16),
 * column j of B in lane j, K along the registers (4 bytes / 2 halves per VGPR); D[r][c] (and C)
 * in VGPR r / 2 of lane c + 16 * (r % 2). */
static hsa_status_t wmma(run_t* r, wave_t* w, uint32_t op, uint32_t word, uint32_t word1,
                         const decode_t* k, uint64_t at) {
  const uint32_t vdst = word & 0xff, src0 = word1 & 0x1ff, src1 = (word1 >> 9) & 0x1ff;
  const uint32_t src2 = g11_source((word1 >> 18) & 0x1ff), neg_lo = (word1 >> 29) & 7;
  if (r->lanes != 32 || src0 < 256 || src1 < 256) return illegal(r, w, "WMMA", op, at);
  const uint32_t a = src0 - 256, b = src1 - 256;
  uint32_t d[16][16];
  for (uint32_t i = 0; i < 16; ++i) {
    for (uint32_t j = 0; j < 16; ++j) {
      const uint32_t c = vread(w, src2 >= 256 ? src2 + i / 2 : src2, j + 16 * (i % 2), k);
      if (op == 0x44) {
        int64_t sum = (int32_t)c;
        for (uint32_t kk = 0; kk < 16; ++kk) {
          const uint32_t x = (w->v[a + kk / 4][i] >> (8 * (kk % 4))) & 0xff;
          const uint32_t y = (w->v[b + kk / 4][j] >> (8 * (kk % 4))) & 0xff;
          sum += (int64_t)(neg_lo & 1 ? (int8_t)x : (int32_t)x) *
                 (int64_t)(neg_lo & 2 ? (int8_t)y : (int32_t)y);
        }
        d[i][j] = (uint32_t)sum;
      } else {
        float sum = as_f(c);
        for (uint32_t kk = 0; kk < 16; ++kk)
          sum = fmaf(half(w->v[a + kk / 2][i] >> (16 * (kk % 2))),
                     half(w->v[b + kk / 2][j] >> (16 * (kk % 2))), sum);
        d[i][j] = f_bits(sum);
      }
    }
  }
  for (uint32_t i = 0; i < 16; ++i)
    for (uint32_t j = 0; j < 16; ++j) w->v[vdst + i / 2][j + 16 * (i % 2)] = d[i][j];
  return HSA_STATUS_SUCCESS;
}

/* One GFX11 instruction at `at`. */
static hsa_status_t gfx11_step(run_t* r, wave_t* w, uint64_t at, uint32_t word) {
  decode_t k = {0, 0};
  if ((word >> 30) == 2 && (word >> 23) < 0x17d) {  /* SOP2, SOPK */
    if ((word >> 28) == 0xb) {
      const uint32_t op = GFX11_SOPK[(word >> 23) & 0x1f];
      w->pc = at + 4;
      if (op == GFX11_NOP) return HSA_STATUS_SUCCESS;
      if (op >= GFX11_NOP) return illegal(r, w, "SOPK", (word >> 23) & 0x1f, at);
      return sopk(r, w, (0xbu << 28) | op << 23 | g11_scalar((word >> 16) & 0x7f) << 16 |
                            (word & 0xffff), at);
    }
    const uint32_t op = GFX11_SOP2[(word >> 23) & 0x7f];
    const uint32_t s0 = g11_scalar(word & 0xff), s1 = g11_scalar((word >> 8) & 0xff);
    w->pc = past(at, 4, s0 == 255 || s1 == 255, &k);
    if (op >= GFX11_NOP) return illegal(r, w, "SOP2", (word >> 23) & 0x7f, at);
    if (!known_scalar(s0) || !known_scalar(s1)) return illegal(r, w, "SOP2 operand", word & 0xffff, at);
    return sop2(r, w, 2u << 30 | op << 23 | g11_scalar((word >> 16) & 0x7f) << 16 | s1 << 8 | s0,
                &k, at);
  }
  if ((word >> 23) == 0x17d) {  /* SOP1 */
    const uint32_t op = GFX11_SOP1[(word >> 8) & 0xff], s0 = g11_scalar(word & 0xff);
    w->pc = past(at, 4, s0 == 255, &k);
    if (op >= GFX11_NOP) return illegal(r, w, "SOP1", (word >> 8) & 0xff, at);
    return sop1(r, w, 0x17du << 23 | g11_scalar((word >> 16) & 0x7f) << 16 | op << 8 | s0, &k, at);
  }
  if ((word >> 23) == 0x17e) {  /* SOPC */
    const uint32_t op = GFX11_SOPC[(word >> 16) & 0x7f];
    const uint32_t s0 = g11_scalar(word & 0xff), s1 = g11_scalar((word >> 8) & 0xff);
    w->pc = past(at, 4, s0 == 255 || s1 == 255, &k);
    if (op >= GFX11_NOP) return illegal(r, w, "SOPC", (word >> 16) & 0x7f, at);
    return sopc(r, w, 0x17eu << 23 | op << 16 | s1 << 8 | s0, &k, at);
  }
  if ((word >> 23) == 0x17f) {  /* SOPP */
    const uint32_t op = GFX11_SOPP[(word >> 16) & 0x7f];
    w->pc = at + 4;
    if (op == GFX11_NOP) return HSA_STATUS_SUCCESS;
    if (op >= GFX11_NOP) return illegal(r, w, "SOPP", (word >> 16) & 0x7f, at);
    return sopp(r, w, (word & ~(0x7fu << 16)) | op << 16, at);
  }
  if ((word >> 31) == 0 || (word >> 25) == 0x3f || (word >> 25) == 0x3e)
    return g11_vop_short(r, w, at, word);
  const uint32_t word1 = fetch(at + 4);
  w->pc = at + 8;
  switch (word >> 26) {
    case 0x3d: {  /* SMEM: sbase [5:0], sdata [12:6], op [25:18]; offset [20:0], soffset [31:25] */
      const uint32_t op = GFX11_SMEM[(word >> 18) & 0xff], sbase = (word & 0x3f) << 1;
      if (op > 4) return illegal(r, w, "SMEM", (word >> 18) & 0xff, at);
      const uint64_t base = w->s[sbase] | (uint64_t)w->s[sbase + 1] << 32;
      const int64_t offset = (int32_t)(word1 << 11) >> 11;
      return scalar_load(r, w, op, (word >> 6) & 0x7f,
                         base + (uint64_t)offset + sread(w, g11_scalar(word1 >> 25), &k));
    }
    case 0x35:  /* VOP3, a literal allowed */
      w->pc = past(at, 8, (word1 & 0x1ff) == 255 || ((word1 >> 9) & 0x1ff) == 255 ||
                              ((word1 >> 18) & 0x1ff) == 255, &k);
      return g11_vop3(r, w, word, word1, &k, at);
    case 0x32: return g11_vopd(r, w, word, at);
    case 0x33: {  /* VOP3P: [31:24] = 0xcc */
      if ((word >> 24) != 0xcc) break;
      const uint32_t op11 = (word >> 16) & 0x7f;
      if (op11 == 0x40 || op11 == 0x44) return wmma(r, w, op11, word, word1, &k, at);
      const uint32_t op = GFX11_VOP3P[op11];
      if (op >= GFX11_NOP) return illegal(r, w, "VOP3P", op11, at);
      const uint32_t sources = g11_source(word1 & 0x1ff) | g11_source((word1 >> 9) & 0x1ff) << 9 |
                               g11_source((word1 >> 18) & 0x1ff) << 18;
      return vop3p(r, w, 0x1a7u << 23 | op << 16 | (word & 0xffff),
                   (word1 & 0xf8000000u) | sources, &k, at);
    }
    case 0x36: {  /* DS: op [25:18] (GFX9 [24:17]) */
      const uint32_t op = GFX11_DS[(word >> 18) & 0xff];
      if (op >= GFX11_NOP) return illegal(r, w, "DS", (word >> 18) & 0xff, at);
      return ds(r, w, 0x36u << 26 | op << 17 | (word & 0xffff), word1, at);
    }
    case 0x37: {  /* FLAT / GLOBAL: seg [17:16] (GFX9 [15:14]); saddr NULL (124) is "off" */
      const uint32_t op = GFX11_FLAT[(word >> 18) & 0x7f], saddr = (word1 >> 16) & 0x7f;
      if (op >= GFX11_NOP) return illegal(r, w, "FLAT", (word >> 18) & 0x7f, at);
      return flat(r, w, 0x37u << 26 | op << 18 | ((word >> 16) & 3) << 14 | (word & 0x1fff),
                  (word1 & 0xff00ffffu) | (saddr == 124 ? 0x7fu : saddr) << 16, at);
    }
    case 0x38: {  /* MUBUF: op [25:18]; offen / idxen in the second dword's bits 22 / 23 */
      const uint32_t op = GFX11_MUBUF[(word >> 18) & 0xff];
      if (op >= GFX11_NOP) return illegal(r, w, "MUBUF", (word >> 18) & 0xff, at);
      return mubuf(r, w, 0x38u << 26 | op << 18 | ((word1 >> 22) & 1) << 12 |
                             ((word1 >> 23) & 1) << 13 | (word & 0xfff),
                   (word1 & 0x001fffffu) | g11_scalar(word1 >> 24) << 24, &k, at);
    }
  }
  return illegal(r, w, "encoding", word >> 23, at);
}

/* The mnemonic of the instruction at `at` (isa_gfx11_map.h's tables, both generations). */
static const char* mnemonic_at(const run_t* r, uint64_t at) {
  if (at < r->code_base || at + 4 > r->code_end) return "an instruction outside the code object";
  const uint32_t word = fetch(at);
  const char* name = NULL;
  if ((word >> 30) == 2 && (word >> 23) < 0x17d) {
    name = (word >> 28) == 0xb ? (r->gfx11 ? GFX11_NAMES_SOPK : GFX9_NAMES_SOPK)[(word >> 23) & 0x1f]
                               : (r->gfx11 ? GFX11_NAMES_SOP2 : GFX9_NAMES_SOP2)[(word >> 23) & 0x7f];
  } else if ((word >> 23) == 0x17d) {
    name = (r->gfx11 ? GFX11_NAMES_SOP1 : GFX9_NAMES_SOP1)[(word >> 8) & 0xff];
  } else if ((word >> 23) == 0x17e) {
    name = (r->gfx11 ? GFX11_NAMES_SOPC : GFX9_NAMES_SOPC)[(word >> 16) & 0x7f];
  } else if ((word >> 23) == 0x17f) {
    name = (r->gfx11 ? GFX11_NAMES_SOPP : GFX9_NAMES_SOPP)[(word >> 16) & 0x7f];
  } else if ((word >> 31) == 0 || (word >> 25) == 0x3f || (word >> 25) == 0x3e) {
    const uint32_t vop1 = (word >> 9) & 0xff, vop2 = (word >> 25) & 0x3f, vopc = (word >> 17) & 0xff;
    if (r->gfx11)
      name = (word >> 25) == 0x3f ? GFX11_NAMES_VOP1[vop1] : (word >> 25) == 0x3e
                                  ? GFX11_NAMES_VOPC[vopc] : GFX11_NAMES_VOP2[vop2];
    else
      name = GFX9_NAMES_VOP3[(word >> 25) == 0x3f ? 0x140 + vop1 : (word >> 25) == 0x3e
                                                 ? vopc : 0x100 + vop2];
  } else if (r->gfx11) {
    switch (word >> 26) {
      case 0x3d: name = GFX11_NAMES_SMEM[(word >> 18) & 0xff]; break;
      case 0x35: name = GFX11_NAMES_VOP3[(word >> 16) & 0x3ff]; break;
      case 0x33: name = GFX11_NAMES_VOP3P[(word >> 16) & 0x7f]; break;
      case 0x32: name = "a VOPD pair"; break;
      case 0x36: name = GFX11_NAMES_DS[(word >> 18) & 0xff]; break;
      case 0x37: name = GFX11_NAMES_FLAT[(word >> 18) & 0x7f]; break;
      case 0x38: name = GFX11_NAMES_MUBUF[(word >> 18) & 0xff]; break;
    }
  } else if ((word >> 23) == 0x1a7) {
    name = GFX9_NAMES_VOP3P[(word >> 16) & 0x7f];
  } else {
    switch (word >> 26) {
      case 0x30: name = GFX9_NAMES_SMEM[(word >> 18) & 0xff]; break;
      case 0x34: name = GFX9_NAMES_VOP3[(word >> 16) & 0x3ff]; break;
      case 0x36: name = GFX9_NAMES_DS[(word >> 17) & 0xff]; break;
      case 0x37: name = GFX9_NAMES_FLAT[(word >> 18) & 0x7f]; break;
      case 0x38: name = GFX9_NAMES_MUBUF[(word >> 18) & 0x7f]; break;
    }
  }
  return name ? name : "an instruction LLVM does not decode either";
}

/* Runs `w` until it ends, waits at a barrier or fails. */
static hsa_status_t step_wave(run_t* r, wave_t* w) {
  uint64_t budget = 1ull << 32;  /* a runaway loop is an error, not a hang */
  while (!w->done && !w->waiting) {
    if (!budget--) return fail(r, HSA_STATUS_ERROR, "softhsa: a wave ran 2^32 instructions");
    const uint64_t at = w->pc;
    if (at < r->code_base || at + 12 > r->code_end)
      return fail(r, (hsa_status_t)HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                  "softhsa: the program counter 0x%llx left the code object",
                  (unsigned long long)at);
    const uint32_t word = fetch(at);
    if (r->trace) {
      fprintf(stderr, "softhsa trace %llx %08x %08x exec=%llx vcc=%llx scc=%d v:",
              (unsigned long long)(at - r->entry), word, fetch(at + 4),
              (unsigned long long)w->exec, (unsigned long long)w->vcc, w->scc);
      for (int i = 0; i < 16; ++i) fprintf(stderr, " %x", w->v[i][r->trace - 1]);
      fprintf(stderr, "\n");
    }
    ++r->retired;
    const hsa_status_t status = r->gfx11 ? gfx11_step(r, w, at, word) : gfx9_step(r, w, at, word);
    if (status != HSA_STATUS_SUCCESS) return status;
  }
  return HSA_STATUS_SUCCESS;
}

/* ---- dispatch -------------------------------------------------------------------------------- */

hsa_status_t softhsa_isa_run(const softhsa_isa_dispatch_t* d, char* message, size_t message_size,
                             uint64_t* retired) {
  run_t r = {.d = d, .lanes = d->wavefront_size, .status = HSA_STATUS_SUCCESS,
             .message = message, .message_size = message_size};
  const hsa_kernel_dispatch_packet_t* p = d->packet;
  r.gfx11 = d->gfx11;
  if (r.lanes != (r.gfx11 ? 32u : 64u)) {
    return fail(&r, (hsa_status_t)HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION,
                "softhsa runs GFX9 machine code in wave64 and GFX11 in wave32; this agent has "
                "wave%u", r.lanes);
  }
  const uint8_t* kd = d->descriptor;
  int64_t entry_offset;
  uint32_t rsrc2, rsrc1;
  uint16_t properties;
  memcpy(&entry_offset, kd + 16, 8);
  memcpy(&rsrc1, kd + 48, 4);
  memcpy(&rsrc2, kd + 52, 4);
  memcpy(&properties, kd + 56, 2);
  /* COMPUTE_PGM_RSRC1 FLOAT_DENORM_MODE_32 [17:16]: 0 flush inputs and results, 1 results,
     2 inputs, 3 keep both */
  const uint32_t denorm_mode = (rsrc1 >> 16) & 3;
  r.flush_in = denorm_mode == 0 || denorm_mode == 2;
  r.flush_out = denorm_mode == 0 || denorm_mode == 1;
  const uint64_t entry = (uintptr_t)kd + (uint64_t)entry_offset;
  r.entry = entry;
  const softhsa_loaded_object_t* code = softhsa_loader_find_image(entry);
  if (!code) return fail(&r, (hsa_status_t)HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION,
                         "softhsa: the kernel's entry 0x%llx is outside every code object",
                         (unsigned long long)entry);
  r.code_base = (uintptr_t)code->image;
  r.code_end = r.code_base + code->image_size;
  r.trace = getenv("SOFTHSA_TRACE") ? 1 + atoi(getenv("SOFTHSA_TRACE")) % 64 : 0;
  const uint32_t wg[3] = {p->workgroup_size_x ? p->workgroup_size_x : 1,
                          p->workgroup_size_y ? p->workgroup_size_y : 1,
                          p->workgroup_size_z ? p->workgroup_size_z : 1};
  const uint32_t grid[3] = {p->grid_size_x, p->grid_size_y ? p->grid_size_y : 1,
                            p->grid_size_z ? p->grid_size_z : 1};
  const uint32_t groups[3] = {(grid[0] + wg[0] - 1) / wg[0], (grid[1] + wg[1] - 1) / wg[1],
                              (grid[2] + wg[2] - 1) / wg[2]};
  const uint32_t items = wg[0] * wg[1] * wg[2];
  const uint32_t wave_count = (items + r.lanes - 1) / r.lanes;
  if (rsrc2 & 1) return fail(&r, (hsa_status_t)HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION,
                             "softhsa does not give kernels private (scratch) memory yet");
  wave_t* waves = calloc(wave_count, sizeof(wave_t));
  uint32_t (*vgprs)[VGPRS][MAX_LANES] = calloc(wave_count, sizeof(*vgprs));
  r.lds = calloc(1, d->group_segment_size ? d->group_segment_size : 1);
  if (!waves || !vgprs || !r.lds) {
    free(waves); free(vgprs); free(r.lds);
    return fail(&r, HSA_STATUS_ERROR_OUT_OF_RESOURCES, "softhsa: out of host memory");
  }
  for (uint32_t gz = 0; gz < groups[2] && r.status == HSA_STATUS_SUCCESS; ++gz)
  for (uint32_t gy = 0; gy < groups[1] && r.status == HSA_STATUS_SUCCESS; ++gy)
  for (uint32_t gx = 0; gx < groups[0] && r.status == HSA_STATUS_SUCCESS; ++gx) {
    memset(r.lds, 0, d->group_segment_size ? d->group_segment_size : 1);
    for (uint32_t i = 0; i < wave_count; ++i) {
      wave_t* w = &waves[i];
      memset(w, 0, sizeof(*w));
      w->v = vgprs[i];
      w->pc = entry;
      uint32_t s = 0;
      const uint64_t kernargs = (uintptr_t)p->kernarg_address;
      const uint64_t packet = (uintptr_t)p;
      if (properties & 1) s += 4;  /* private segment buffer: none given */
      if (properties & 2) { w->s[s++] = (uint32_t)packet; w->s[s++] = (uint32_t)(packet >> 32); }
      if (properties & 4) s += 2;  /* queue pointer */
      if (properties & 8) { w->s[s++] = (uint32_t)kernargs; w->s[s++] = (uint32_t)(kernargs >> 32); }
      if (properties & 16) s += 2;  /* dispatch id */
      if (properties & 32) s += 2;  /* flat scratch init */
      if (properties & 64) s += 1;  /* private segment size */
      s = (rsrc2 >> 1) & 0x1f;  /* the descriptor's USER_SGPR_COUNT is where system SGPRs start */
      if (rsrc2 & (1u << 7)) w->s[s++] = gx;
      if (rsrc2 & (1u << 8)) w->s[s++] = gy;
      if (rsrc2 & (1u << 9)) w->s[s++] = gz;
      /* Lanes past the workgroup's last work-item start inactive. */
      for (uint32_t lane = 0; lane < r.lanes; ++lane) {
        const uint32_t item = i * r.lanes + lane;
        if (item >= items) continue;
        const uint32_t x = item % wg[0], y = (item / wg[0]) % wg[1], z = item / (wg[0] * wg[1]);
        const uint64_t gxi = (uint64_t)gx * wg[0] + x, gyi = (uint64_t)gy * wg[1] + y,
                       gzi = (uint64_t)gz * wg[2] + z;
        if (gxi >= grid[0] || gyi >= grid[1] || gzi >= grid[2]) continue;  /* partial groups */
        w->exec |= 1ull << lane;
        w->v[0][lane] = x | y << 10 | z << 20;
      }
    }
    /* Round-robin between barriers: every wave runs to its end or the next barrier. */
    for (;;) {
      int running = 0, waiting = 0;
      for (uint32_t i = 0; i < wave_count && r.status == HSA_STATUS_SUCCESS; ++i) {
        if (waves[i].done) continue;
        step_wave(&r, &waves[i]);
        running += !waves[i].done;
        waiting += waves[i].waiting;
      }
      if (r.status != HSA_STATUS_SUCCESS || !running) break;
      if (waiting) for (uint32_t i = 0; i < wave_count; ++i) waves[i].waiting = 0;
    }
  }
  free(waves);
  free(vgprs);
  free(r.lds);
  if (retired) *retired = r.retired;
  return r.status;
}

/* softhsa: bounds-checked MessagePack reader (see softhsa_msgpack.h for the contract). */
#include "softhsa_msgpack.h"

#include <string.h>

static int have(const softhsa_msgpack_t* r, size_t n) {
  return (size_t)(r->end - r->p) >= n;
}

/* Big-endian unsigned integer of `n` bytes at `p`. */
static uint64_t be(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

/* Reads a length-prefixed header: `fix_mask`/`fix_tag` describe the fix form (count in the low
 * bits), `tag16`/`tag32` the 16- and 32-bit forms; `tag8` is 0 when the kind has no 8-bit form. */
static int read_header(softhsa_msgpack_t* r, uint8_t fix_mask, uint8_t fix_tag, uint8_t tag8,
                       uint8_t tag16, uint8_t tag32, uint32_t* out_count) {
  if (!have(r, 1)) return -1;
  const uint8_t tag = r->p[0];
  size_t width = 0;
  if ((tag & fix_mask) == fix_tag) {
    *out_count = tag & (uint8_t)~fix_mask;
    r->p += 1;
    return 0;
  }
  if (tag8 && tag == tag8) width = 1;
  else if (tag == tag16) width = 2;
  else if (tag == tag32) width = 4;
  else return -1;
  if (!have(r, 1 + width)) return -1;
  *out_count = (uint32_t)be(r->p + 1, width);
  r->p += 1 + width;
  return 0;
}

int softhsa_msgpack_map(softhsa_msgpack_t* r, uint32_t* out_count) {
  return read_header(r, 0xF0, 0x80, 0, 0xDE, 0xDF, out_count);
}

int softhsa_msgpack_array(softhsa_msgpack_t* r, uint32_t* out_count) {
  return read_header(r, 0xF0, 0x90, 0, 0xDC, 0xDD, out_count);
}

int softhsa_msgpack_str(softhsa_msgpack_t* r, const char** out_str, uint32_t* out_len) {
  const uint8_t* start = r->p;
  uint32_t len = 0;
  if (read_header(r, 0xE0, 0xA0, 0xD9, 0xDA, 0xDB, &len)) return -1;
  if (!have(r, len)) {
    r->p = start;
    return -1;
  }
  *out_str = (const char*)r->p;
  *out_len = len;
  r->p += len;
  return 0;
}

int softhsa_msgpack_uint(softhsa_msgpack_t* r, uint64_t* out_value) {
  if (!have(r, 1)) return -1;
  const uint8_t tag = r->p[0];
  if (tag <= 0x7F) {
    *out_value = tag;
    r->p += 1;
    return 0;
  }
  size_t width;
  int is_signed = 0;
  switch (tag) {
    case 0xCC: width = 1; break;
    case 0xCD: width = 2; break;
    case 0xCE: width = 4; break;
    case 0xCF: width = 8; break;
    case 0xD0: width = 1; is_signed = 1; break;
    case 0xD1: width = 2; is_signed = 1; break;
    case 0xD2: width = 4; is_signed = 1; break;
    case 0xD3: width = 8; is_signed = 1; break;
    default: return -1;
  }
  if (!have(r, 1 + width)) return -1;
  const uint64_t v = be(r->p + 1, width);
  if (is_signed && (v >> (width * 8 - 1)) & 1) return -1; /* negative */
  *out_value = v;
  r->p += 1 + width;
  return 0;
}

int softhsa_msgpack_bool(softhsa_msgpack_t* r, int* out_value) {
  if (!have(r, 1) || (r->p[0] != 0xC2 && r->p[0] != 0xC3)) return -1;
  *out_value = r->p[0] == 0xC3;
  r->p += 1;
  return 0;
}

/* Size of the payload that follows a scalar/bytes tag, or -1 for containers and unknown tags. */
static int scalar_size(const softhsa_msgpack_t* r, uint64_t* out_size) {
  const uint8_t tag = r->p[0];
  if (tag <= 0x7F || tag >= 0xE0 || tag == 0xC0 || tag == 0xC2 || tag == 0xC3) {
    *out_size = 1;
    return 0;
  }
  if ((tag & 0xE0) == 0xA0) {
    *out_size = 1 + (uint64_t)(tag & 0x1F);
    return 0;
  }
  static const struct { uint8_t tag; uint8_t len_width; uint8_t fixed; } kinds[] = {
      {0xC4, 1, 0}, {0xC5, 2, 0}, {0xC6, 4, 0},                /* bin 8/16/32 */
      {0xC7, 1, 1}, {0xC8, 2, 1}, {0xC9, 4, 1},                /* ext 8/16/32 (+type byte) */
      {0xCA, 0, 4}, {0xCB, 0, 8},                              /* float 32/64 */
      {0xCC, 0, 1}, {0xCD, 0, 2}, {0xCE, 0, 4}, {0xCF, 0, 8},  /* uint */
      {0xD0, 0, 1}, {0xD1, 0, 2}, {0xD2, 0, 4}, {0xD3, 0, 8},  /* int */
      {0xD4, 0, 2}, {0xD5, 0, 3}, {0xD6, 0, 5}, {0xD7, 0, 9}, {0xD8, 0, 17}, /* fixext */
      {0xD9, 1, 0}, {0xDA, 2, 0}, {0xDB, 4, 0},                /* str 8/16/32 */
  };
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); ++i) {
    if (kinds[i].tag != tag) continue;
    if (!have(r, 1 + (size_t)kinds[i].len_width)) return -1;
    *out_size = 1 + (uint64_t)kinds[i].len_width + kinds[i].fixed +
                be(r->p + 1, kinds[i].len_width);
    return 0;
  }
  return -1;
}

static int skip_at_depth(softhsa_msgpack_t* r, int depth) {
  if (depth > SOFTHSA_MSGPACK_MAX_DEPTH || !have(r, 1)) return -1;
  uint32_t count = 0;
  if (softhsa_msgpack_array(r, &count) == 0) {
    for (uint32_t i = 0; i < count; ++i)
      if (skip_at_depth(r, depth + 1)) return -1;
    return 0;
  }
  if (softhsa_msgpack_map(r, &count) == 0) {
    for (uint32_t i = 0; i < count; ++i)
      if (skip_at_depth(r, depth + 1) || skip_at_depth(r, depth + 1)) return -1;
    return 0;
  }
  uint64_t size = 0;
  if (scalar_size(r, &size) || !have(r, size)) return -1;
  r->p += size;
  return 0;
}

int softhsa_msgpack_skip(softhsa_msgpack_t* r) {
  const uint8_t* start = r->p;
  if (skip_at_depth(r, 0)) {
    r->p = start;
    return -1;
  }
  return 0;
}

int softhsa_msgpack_str_eq(const char* str, uint32_t len, const char* literal) {
  return strlen(literal) == len && memcmp(str, literal, len) == 0;
}

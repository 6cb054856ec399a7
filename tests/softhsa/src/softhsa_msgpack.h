/* softhsa: a bounds-checked MessagePack reader, just enough for the NT_AMDGPU_METADATA note.
 *
 * A reader is a cursor over [p, end). Every function returns 0 on success and -1 when the next
 * value is not of the asked kind or would run past the end; on failure the cursor is left where it
 * was. Strings are returned as (pointer, length) views into the buffer, never NUL-terminated.
 * Nesting is limited (SOFTHSA_MSGPACK_MAX_DEPTH) so a hostile note cannot exhaust the stack.
 * Format: https://github.com/msgpack/msgpack/blob/master/spec.md */
#ifndef SOFTHSA_MSGPACK_H
#define SOFTHSA_MSGPACK_H

#include <stddef.h>
#include <stdint.h>

#define SOFTHSA_MSGPACK_MAX_DEPTH 32

typedef struct softhsa_msgpack {
  const uint8_t* p;
  const uint8_t* end;
} softhsa_msgpack_t;

int softhsa_msgpack_map(softhsa_msgpack_t* r, uint32_t* out_count);
int softhsa_msgpack_array(softhsa_msgpack_t* r, uint32_t* out_count);
int softhsa_msgpack_str(softhsa_msgpack_t* r, const char** out_str, uint32_t* out_len);
/* Accepts any non-negative integer (positive fixint, uint8..64, non-negative int8..64). */
int softhsa_msgpack_uint(softhsa_msgpack_t* r, uint64_t* out_value);
int softhsa_msgpack_bool(softhsa_msgpack_t* r, int* out_value);
/* Skips one complete value of any kind, nested containers included. */
int softhsa_msgpack_skip(softhsa_msgpack_t* r);
/* 1 when the string view equals the NUL-terminated `literal`. */
int softhsa_msgpack_str_eq(const char* str, uint32_t len, const char* literal);

#endif /* SOFTHSA_MSGPACK_H */

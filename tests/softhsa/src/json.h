/* softhsa: a small JSON reader for the configuration file (RFC 8259 subset: no \u escapes beyond
 * ASCII). softhsa_json_parse builds a tree of softhsa_json_t nodes; numbers without a fraction or
 * exponent are kept exactly as int64 (pool sizes exceed a double's exact range only past 2^53, but
 * exactness is cheap). Errors carry the byte offset. The tree is freed with softhsa_json_free. */
#ifndef SOFTHSA_JSON_H
#define SOFTHSA_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  SOFTHSA_JSON_NULL,
  SOFTHSA_JSON_BOOL,
  SOFTHSA_JSON_INT,
  SOFTHSA_JSON_REAL,
  SOFTHSA_JSON_STRING,
  SOFTHSA_JSON_ARRAY,
  SOFTHSA_JSON_OBJECT,
} softhsa_json_kind_t;

typedef struct softhsa_json {
  softhsa_json_kind_t kind;
  bool boolean;
  int64_t integer;
  double real;
  char* string;               /* STRING value */
  char* key;                  /* the member name when the parent is an OBJECT */
  struct softhsa_json* child; /* first element / member */
  struct softhsa_json* next;  /* next sibling */
} softhsa_json_t;

/* Returns NULL on a syntax error, with a message in `error`. */
softhsa_json_t* softhsa_json_parse(const char* text, size_t length, char* error, size_t error_size);
void softhsa_json_free(softhsa_json_t* node);
const char* softhsa_json_kind_name(softhsa_json_kind_t kind);

#endif /* SOFTHSA_JSON_H */

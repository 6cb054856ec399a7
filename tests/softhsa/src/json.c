/* softhsa: JSON reader (see json.h). Recursive descent with a depth limit. */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

typedef struct {
  const char* p;
  const char* begin;
  const char* end;
  char* error;
  size_t error_size;
} parser_t;

static softhsa_json_t* parse_value(parser_t* ps, int depth);

static void fail(parser_t* ps, const char* what) {
  if (ps->error[0] == '\0') {
    snprintf(ps->error, ps->error_size, "invalid JSON at byte %td: %s", ps->p - ps->begin, what);
  }
}

static void skip_space(parser_t* ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) {
    ps->p++;
  }
}

static bool take(parser_t* ps, char c) {
  skip_space(ps);
  if (ps->p < ps->end && *ps->p == c) {
    ps->p++;
    return true;
  }
  return false;
}

static bool take_word(parser_t* ps, const char* word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0) {
    ps->p += n;
    return true;
  }
  return false;
}

static softhsa_json_t* new_node(softhsa_json_kind_t kind) {
  softhsa_json_t* node = calloc(1, sizeof(*node));
  if (node) node->kind = kind;
  return node;
}

static char* parse_string_raw(parser_t* ps) {
  if (!take(ps, '"')) {
    fail(ps, "expected a string");
    return NULL;
  }
  char* out = malloc((size_t)(ps->end - ps->p) + 1);
  if (!out) return NULL;
  size_t n = 0;
  while (ps->p < ps->end && *ps->p != '"') {
    char c = *ps->p++;
    if ((unsigned char)c < 0x20) break;
    if (c == '\\') {
      if (ps->p >= ps->end) break;
      char e = *ps->p++;
      switch (e) {
        case '"': case '\\': case '/': c = e; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u': {
          unsigned v = 0;
          if (ps->end - ps->p < 4 || sscanf(ps->p, "%4x", &v) != 1 || v > 0x7F) {
            free(out);
            fail(ps, "only ASCII \\u escapes are supported");
            return NULL;
          }
          ps->p += 4;
          c = (char)v;
          break;
        }
        default:
          free(out);
          fail(ps, "bad escape in string");
          return NULL;
      }
    }
    out[n++] = c;
  }
  if (ps->p >= ps->end || *ps->p != '"') {
    free(out);
    fail(ps, "unterminated string");
    return NULL;
  }
  ps->p++;
  out[n] = '\0';
  return out;
}

static softhsa_json_t* parse_number(parser_t* ps) {
  const char* start = ps->p;
  bool real = false;
  if (ps->p < ps->end && *ps->p == '-') ps->p++;
  while (ps->p < ps->end && strchr("0123456789.eE+-", *ps->p)) {
    if (strchr(".eE", *ps->p)) real = true;
    ps->p++;
  }
  char buffer[64];
  size_t n = (size_t)(ps->p - start);
  if (n == 0 || n >= sizeof(buffer)) {
    fail(ps, "bad number");
    return NULL;
  }
  memcpy(buffer, start, n);
  buffer[n] = '\0';
  char* stop = NULL;
  softhsa_json_t* node = new_node(real ? SOFTHSA_JSON_REAL : SOFTHSA_JSON_INT);
  if (!node) return NULL;
  if (real) {
    node->real = strtod(buffer, &stop);
  } else {
    node->integer = strtoll(buffer, &stop, 10);
    node->real = (double)node->integer;
  }
  if (*stop != '\0') {
    free(node);
    ps->p = start;
    fail(ps, "bad number");
    return NULL;
  }
  return node;
}

/* Parses `[v, ...]` or `{"k": v, ...}` after the opening bracket. */
static softhsa_json_t* parse_container(parser_t* ps, int depth, bool object) {
  softhsa_json_t* node = new_node(object ? SOFTHSA_JSON_OBJECT : SOFTHSA_JSON_ARRAY);
  if (!node) return NULL;
  char close = object ? '}' : ']';
  if (take(ps, close)) return node;
  softhsa_json_t** tail = &node->child;
  do {
    char* key = NULL;
    if (object) {
      skip_space(ps);
      key = parse_string_raw(ps);
      if (!key || !take(ps, ':')) {
        free(key);
        fail(ps, "expected \"key\":");
        softhsa_json_free(node);
        return NULL;
      }
    }
    softhsa_json_t* value = parse_value(ps, depth + 1);
    if (!value) {
      free(key);
      softhsa_json_free(node);
      return NULL;
    }
    value->key = key;
    *tail = value;
    tail = &value->next;
  } while (take(ps, ','));
  if (!take(ps, close)) {
    fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
    softhsa_json_free(node);
    return NULL;
  }
  return node;
}

static softhsa_json_t* parse_value(parser_t* ps, int depth) {
  if (depth > MAX_DEPTH) {
    fail(ps, "nested too deeply");
    return NULL;
  }
  skip_space(ps);
  if (ps->p >= ps->end) {
    fail(ps, "unexpected end of input");
    return NULL;
  }
  char c = *ps->p;
  if (c == '{' || c == '[') {
    ps->p++;
    return parse_container(ps, depth, c == '{');
  }
  if (c == '"') {
    char* s = parse_string_raw(ps);
    if (!s) return NULL;
    softhsa_json_t* node = new_node(SOFTHSA_JSON_STRING);
    if (!node) {
      free(s);
      return NULL;
    }
    node->string = s;
    return node;
  }
  bool is_true = take_word(ps, "true");
  if (is_true || take_word(ps, "false")) {
    softhsa_json_t* node = new_node(SOFTHSA_JSON_BOOL);
    if (node) node->boolean = is_true;
    return node;
  }
  if (take_word(ps, "null")) return new_node(SOFTHSA_JSON_NULL);
  if (c == '-' || (c >= '0' && c <= '9')) return parse_number(ps);
  fail(ps, "unexpected character");
  return NULL;
}

softhsa_json_t* softhsa_json_parse(const char* text, size_t length, char* error,
                                   size_t error_size) {
  parser_t ps = {text, text, text + length, error, error_size};
  error[0] = '\0';
  softhsa_json_t* root = parse_value(&ps, 0);
  if (root) {
    skip_space(&ps);
    if (ps.p != ps.end) {
      fail(&ps, "trailing characters");
      softhsa_json_free(root);
      return NULL;
    }
  } else {
    fail(&ps, "out of memory");
  }
  return root;
}

void softhsa_json_free(softhsa_json_t* node) {
  while (node) {
    softhsa_json_t* next = node->next;
    softhsa_json_free(node->child);
    free(node->string);
    free(node->key);
    free(node);
    node = next;
  }
}

const char* softhsa_json_kind_name(softhsa_json_kind_t kind) {
  static const char* const names[] = {"null", "boolean", "integer", "number", "string", "array",
                                      "object"};
  return names[kind];
}

/* JSON Lines rows from columns: the native half of profile/reports/toolkit.py's RowLayout.
 *
 * A row is `head`, then for each field its prefix (`,"key":`) and value, then `tail`. Values come
 * from columns: element i of a column is at base + i * stride. Integers print in decimal, booleans
 * as true/false, strings as one of a table of ready JSON texts picked by an integer code column,
 * triples as [a,b,c], doubles with printf's %.Nf (what IREE's tools print). Rows are rendered until
 * the output buffer cannot hold the next one; the caller writes the buffer and calls again.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { ROW_UINT = 0, ROW_INT = 1, ROW_BOOL = 2, ROW_STR = 3, ROW_TRIPLE = 4, ROW_DOUBLE = 5,
       ROW_CONST = 6 };


static uint64_t load_uint(const uint8_t* p, int width) {
    switch (width) {
    case 1: return *p;
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static int64_t load_int(const uint8_t* p, int width) {
    switch (width) {
    case 1: return (int8_t)*p;
    case 2: { int16_t v; memcpy(&v, p, 2); return v; }
    case 4: { int32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
    }
}

/* Decimal digits two at a time. Every value's slot in a row's bound has room for 21 bytes, so
 * the digits are copied as one fixed 20-byte move (the bytes past them are overwritten next). */
static const char DIGIT_PAIRS[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static char* put_uint(char* o, uint64_t v) {
    if (v < 10) {
        *o = (char)('0' + v);
        return o + 1;
    }
    char buffer[48];
    char* end = buffer + 20;
    char* p = end;
    while (v >= 100) {
        uint64_t q = v / 100;
        p -= 2;
        memcpy(p, DIGIT_PAIRS + 2 * (v - q * 100), 2);
        v = q;
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, DIGIT_PAIRS + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    memcpy(o, p, 20);  /* p + 20 stays inside buffer */
    return o + (end - p);
}

static char* put_int(char* o, int64_t v) {
    if (v < 0) { *o++ = '-'; return put_uint(o, (uint64_t)0 - (uint64_t)v); }
    return put_uint(o, (uint64_t)v);
}

/* Field prefixes this short are copied as one fixed move of PREFIX_COPY bytes: the caller pads
 * every prefix to be readable that far, and a row's bound leaves room for the overshoot. */
#define PREFIX_COPY 32

/* The most bytes one row can take (and room for the fixed-size moves past its end). */
uint64_t row_bound(const row_field_t* fields, int count, uint64_t head_len, uint64_t tail_len) {
    uint64_t n = head_len + tail_len + PREFIX_COPY;
    for (int f = 0; f < count; ++f) {
        const row_field_t* d = &fields[f];
        n += (uint64_t)d->prefix_len;
        switch (d->kind) {
        case ROW_STR: {
            uint64_t longest = 0, start = 0;
            for (uint64_t s = 0; s < d->string_count; ++s) {
                if (d->string_ends[s] - start > longest) longest = d->string_ends[s] - start;
                start = d->string_ends[s];
            }
            n += longest;
            break;
        }
        case ROW_TRIPLE: n += 3 * 21 + 4; break;
        case ROW_DOUBLE: n += 320 + (uint64_t)d->digits; break;
        case ROW_CONST: break;
        default: n += 21; break;
        }
    }
    return n;
}

/* Renders rows [begin, end) into out (capacity bytes, at least one row's bound); returns the
 * first row not rendered and stores the bytes written. With row_ends, row_ends[i] is where row i
 * ends in out. A string code outside the table stops rendering there and returns that row with
 * *bad set. */
uint64_t render_rows(const row_field_t* fields, int count, const char* head, uint64_t head_len,
                     const char* tail, uint64_t tail_len, uint64_t bound, uint64_t begin,
                     uint64_t end, char* out, uint64_t capacity, uint64_t* written, int* bad,
                     uint64_t* row_ends) {
    char* o = out;
    char* limit = out + capacity;
    uint64_t i = begin;
    *bad = 0;
    for (; i < end; ++i) {
        if ((uint64_t)(limit - o) < bound) break;
        char* row_start = o;
        memcpy(o, head, head_len);
        o += head_len;
        for (int f = 0; f < count; ++f) {
            const row_field_t* d = &fields[f];
            if (d->prefix_len <= PREFIX_COPY) {  /* one fixed move: prefixes are padded */
                memcpy(o, d->prefix, PREFIX_COPY);
            } else {
                memcpy(o, d->prefix, (size_t)d->prefix_len);
            }
            o += d->prefix_len;
            const uint8_t* p = d->base + (int64_t)i * d->stride;
            switch (d->kind) {
            case ROW_UINT: o = put_uint(o, load_uint(p, d->width)); break;
            case ROW_INT: o = put_int(o, load_int(p, d->width)); break;
            case ROW_BOOL:
                if (load_uint(p, d->width)) { memcpy(o, "true", 4); o += 4; }
                else { memcpy(o, "false", 5); o += 5; }
                break;
            case ROW_STR: {
                uint64_t s = load_uint(p, d->width);
                if (s >= d->string_count) { *bad = 1; *written = (uint64_t)(row_start - out); return i; }
                uint64_t start = s ? d->string_ends[s - 1] : 0;
                memcpy(o, d->strings + start, (size_t)(d->string_ends[s] - start));
                o += d->string_ends[s] - start;
                break;
            }
            case ROW_TRIPLE:
                *o++ = '[';
                o = put_uint(o, load_uint(p, d->width));
                *o++ = ',';
                o = put_uint(o, load_uint(p + d->width, d->width));
                *o++ = ',';
                o = put_uint(o, load_uint(p + 2 * d->width, d->width));
                *o++ = ']';
                break;
            case ROW_DOUBLE: {
                double v;
                memcpy(&v, p, 8);
                o += snprintf(o, 320 + (size_t)d->digits, "%.*f", d->digits, v);
                break;
            }
            default: break;
            }
        }
        memcpy(o, tail, tail_len);
        o += tail_len;
        if (row_ends) row_ends[i] = (uint64_t)(o - out);
    }
    *written = (uint64_t)(o - out);
    return i;
}

/* Concatenates the byte ranges [starts[k], ends[k]) of src, in order, into dst. */
uint64_t copy_ranges(const uint8_t* src, const uint64_t* starts, const uint64_t* ends, uint64_t n,
                     uint8_t* dst) {
    uint64_t o = 0;
    for (uint64_t k = 0; k < n; ++k) {
        memcpy(dst + o, src + starts[k], (size_t)(ends[k] - starts[k]));
        o += ends[k] - starts[k];
    }
    return o;
}

"""Builds `amdgpu_cli.profile._scan`: the bundle scanner's native fast path (cffi API mode).

The C code does only what is too slow in Python for bundles of hundreds of thousands of records:
walking the record chain, copying fixed-size typed records into contiguous arrays, rendering
JSONL rows from columns (`_rows.c`, for `reports/toolkit.RowLayout`), and `summary`'s whole work
in one pass (`_summary.c`, for `reports/summary_native.py`). It checks
exactly what `reader.py`'s pure-Python path checks, returns the same error codes, and the tests
run both paths on the same bundles. Built by `pip install` (setup.py `cffi_modules`); when it is
absent, the reader uses the Python path.
"""

from pathlib import Path

from cffi import FFI

CDEF = (Path(__file__).resolve().parent / "_scan.h").read_text()

SOURCE = r"""
#include <stdint.h>
#include <string.h>

/* Error codes shared with reader.py (ScanError). */
enum { SCAN_OK = 0, SCAN_FULL = 1, SCAN_TOO_SMALL = 2, SCAN_FLAGS = 3, SCAN_PAST_END = 4,
       SCAN_HEADER_LENGTH = 5, SCAN_LENGTHS = 6, TYPED_TRUNCATED = 7, TYPED_LENGTH = 8 };

static uint32_t rd32(const uint8_t* p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* Fields of records at `offsets`, one contiguous column each: field k (at `field_offsets[k]`
 * in a record, `field_sizes[k]` bytes) of record i lands at outs[k] + i * field_sizes[k]. Each
 * record is read once, however many fields are taken. */
void gather_fields(const uint8_t* data, const uint64_t* offsets, uint64_t n,
                   const uint32_t* field_offsets, const uint32_t* field_sizes, int count,
                   uint8_t** outs) {
    for (uint64_t i = 0; i < n; ++i) {
        const uint8_t* r = data + offsets[i];
        for (int k = 0; k < count; ++k) {
            uint32_t size = field_sizes[k];
            const uint8_t* src = r + field_offsets[k];
            uint8_t* dst = outs[k] + i * size;
            switch (size) {  /* constant sizes: the copies become plain loads and stores */
                case 1: memcpy(dst, src, 1); break;
                case 2: memcpy(dst, src, 2); break;
                case 4: memcpy(dst, src, 4); break;
                case 8: memcpy(dst, src, 8); break;
                default: memcpy(dst, src, size); break;
            }
        }
    }
}

int gather_typed(const uint8_t* data, const uint64_t* payload_offsets,
                 const uint64_t* payload_lengths, uint64_t chunk_count, uint32_t size,
                 uint8_t* out, uint64_t capacity, int64_t* out_chunk, uint64_t* out_offset,
                 uint64_t* out_count, uint64_t* out_bad_chunk, uint64_t* out_bad_offset) {
    uint64_t n = 0;
    for (uint64_t c = 0; c < chunk_count; ++c) {
        const uint8_t* p = data + payload_offsets[c];
        uint64_t length = payload_lengths[c], o = 0;
        while (o < length) {
            uint64_t remaining = length - o;
            *out_bad_chunk = c;
            *out_bad_offset = o;
            if (remaining < size) { *out_count = n; return TYPED_TRUNCATED; }
            uint32_t record_length = rd32(p + o);
            if (record_length < size || record_length > remaining) { *out_count = n; return TYPED_LENGTH; }
            if (n == capacity) { *out_count = n; return SCAN_FULL; }
            if (out) memcpy(out + n * (uint64_t)size, p + o, size);  /* NULL: locate only */
            out_chunk[n] = (int64_t)c;
            out_offset[n] = payload_offsets[c] + o;
            ++n;
            o += record_length;
        }
    }
    *out_count = n;
    return SCAN_OK;
}
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
# The JSONL row renderer (reports/toolkit.py's RowLayout) and the one-pass reducers (the pass in
# _pass.c; summary's and statistics' reductions) are plain C in their own files, one unit here.
_HERE = Path(__file__).resolve().parent
_C_FILES = ("_rows.c", "_pass.c", "_summary.c", "_statistics.c", "_projection.c",
           "_explain.c", "_balances.c")
ffibuilder.set_source("amdgpu_cli.profile._scan",
                      "#include <stdint.h>\n" + CDEF + SOURCE
                      + "".join((_HERE / name).read_text() for name in _C_FILES),
                      extra_compile_args=["-O2", "-pthread"],
                      extra_link_args=["-pthread"])

if __name__ == "__main__":
    ffibuilder.compile(verbose=False)

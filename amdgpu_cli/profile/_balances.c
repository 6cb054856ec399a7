/* Memory balances (reports/memory.py `balances`): opens and closes, in file order, applied to
 * per-group byte and count balances, as IREE's memory report keeps them.
 *
 * An open adds one to the count and its length to the bytes; a close takes one away (a close on
 * an empty count is partial) and its length away from the bytes, clamped at zero (the part that
 * finds no open bytes is a partial close of that many bytes). Per group: current and high-water
 * count and bytes, total opened and closed counts and bytes, partial closes and their bytes, in
 * memory.BALANCE_FIELDS order. With `prev_count` / `prev_bytes`, each event's group state before
 * it. The caller uses this only where the lengths total below 2**62, so nothing here can
 * overflow (memory.py's exact recurrence handles the rest).
 */

enum { BAL_CURRENT_COUNT, BAL_HIGH_WATER_COUNT, BAL_OPEN_COUNT, BAL_CLOSE_COUNT,
       BAL_PARTIAL_COUNT, BAL_CURRENT_BYTES, BAL_HIGH_WATER_BYTES, BAL_OPEN_BYTES,
       BAL_CLOSE_BYTES, BAL_PARTIAL_BYTES, BAL_FIELDS };

/* `group[i]` in [0, count) for every event; `out` holds count * BAL_FIELDS zeros. Returns the
 * first event whose group is out of range, or n. */
uint64_t balances_run(const int64_t* group, const uint8_t* is_open, const uint64_t* length,
                      uint64_t n, uint64_t count, uint64_t* out, int64_t* prev_count,
                      int64_t* prev_bytes) {
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t g = (uint64_t)group[i];
        if (g >= count) return i;
        uint64_t* s = out + g * BAL_FIELDS;
        uint64_t ln = length[i];
        if (prev_count) prev_count[i] = (int64_t)s[BAL_CURRENT_COUNT];
        if (prev_bytes) prev_bytes[i] = (int64_t)s[BAL_CURRENT_BYTES];
        if (is_open[i]) {
            ++s[BAL_OPEN_COUNT];
            if (++s[BAL_CURRENT_COUNT] > s[BAL_HIGH_WATER_COUNT])
                s[BAL_HIGH_WATER_COUNT] = s[BAL_CURRENT_COUNT];
            s[BAL_OPEN_BYTES] += ln;
            s[BAL_CURRENT_BYTES] += ln;
            if (s[BAL_CURRENT_BYTES] > s[BAL_HIGH_WATER_BYTES])
                s[BAL_HIGH_WATER_BYTES] = s[BAL_CURRENT_BYTES];
        } else {
            ++s[BAL_CLOSE_COUNT];
            s[BAL_CLOSE_BYTES] += ln;
            int was_empty = s[BAL_CURRENT_COUNT] == 0;
            if (!was_empty) --s[BAL_CURRENT_COUNT];
            uint64_t extra = ln > s[BAL_CURRENT_BYTES] ? ln - s[BAL_CURRENT_BYTES] : 0;
            s[BAL_CURRENT_BYTES] = extra ? 0 : s[BAL_CURRENT_BYTES] - ln;
            if (was_empty || extra) {
                ++s[BAL_PARTIAL_COUNT];
                s[BAL_PARTIAL_BYTES] += extra;
            }
        }
    }
    return n;
}

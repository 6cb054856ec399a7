"""Text for `explain`: health, per-device and per-queue utilisation, top functions and dispatches,
queue operations, memory pressure and hints.

Shows what iree-profile's text shows, built from the JSONL rows alone, as short labelled lines
(ranked entries take two: the function, then its numbers) that read at 100 columns. Tick spans are
whole numbers (IREE prints them as %.3f doubles); ratios and averages keep three decimals.
"""

from __future__ import annotations


def _n(v) -> str:
    return f"{int(v):,}"


def _f(v, digits: int = 3) -> str:
    return f"{v:,.{digits}f}"


def _ticks(v: float) -> str:
    return f"{v:,.0f}" if float(v).is_integer() else _f(v)


RICH = True  # drawn through a rich Console, not written as plain lines


def render(rows, console) -> None:
    rows = list(rows)
    by_type: dict[str, list[dict]] = {}
    for row in rows:
        by_type.setdefault(row["type"], []).append(row)

    def w(item) -> None:
        console.print(item, soft_wrap=isinstance(item, str))

    s = by_type["explain_summary"][0]
    w("IREE HAL profile explain")
    w(f"health: {_n(s['file_records'])} records, {_n(s['chunk_records'])} chunks; "
      f"unknown records {s['unknown_records']}, unknown chunks {s['unknown_chunks']}, "
      f"truncated chunks {s['truncated_chunks']}, dropped records {_n(s['dropped_records'])}")
    if s["non_ok_session_end_records"]:
        w(f"session status: {s['non_ok_session_end_records']} non-OK session end(s); first: "
          f"session_id={s['first_non_ok_session_id']} stream_id={s['first_non_ok_stream_id']} "
          f"event_id={s['first_non_ok_event_id']} "
          f"status={s['first_non_ok_status']} ({s['first_non_ok_status_code']})")
    w(f"coverage: dispatches {_n(s['dispatches'])} (valid {_n(s['valid_dispatches'])}, "
      f"invalid {_n(s['invalid_dispatches'])}); host dispatches {_n(s['host_dispatches'])} "
      f"(valid {_n(s['valid_host_dispatches'])}, invalid {_n(s['invalid_host_dispatches'])})")
    w(f"          queues {s['queues']}, queue events {_n(s['queue_events'])}, "
      f"command buffers {_n(s['command_buffers'])}, command operations "
      f"{_n(s['command_operations'])}, memory events {_n(s['memory_events'])}")

    _devices(w, by_type.get("explain_device", []))
    _queues(w, by_type.get("explain_queue", []))
    _top_functions(w, by_type.get("explain_top_function", []))
    _top_dispatches(w, by_type.get("explain_top_dispatch", []))
    _queue_operations(w, by_type["explain_queue_operations"][0])
    _memory(w, by_type.get("explain_memory_pressure", []))
    _hints(w, by_type.get("explain_hint", []))


def _devices(w, devices: list[dict]) -> None:
    w("devices:" if devices else "devices: none")
    for d in devices:
        fit = (f"clock fit yes ({d['clock_samples']} samples, "
               f"{_f(d['tick_frequency_hz'])} Hz)" if d["clock_fit_available"]
               else f"clock fit no ({d['clock_samples']} samples)")
        w(f"  device {d['physical_device_ordinal']}: {fit}")
        line = (f"    visible span {_ticks(d['visible_span_ticks'])} ticks, active dispatch "
                f"{_n(d['active_dispatch_ticks'])} ticks, active/visible "
                f"{d['active_over_visible']:.3f}")
        w(line)
        if d["active_dispatch_time_ns_available"]:
            w(f"    visible span {_f(d['visible_span_ns'])} ns, active dispatch "
              f"{_n(d['active_dispatch_ns'])} ns")


def _queues(w, queues: list[dict]) -> None:
    w("queues:" if queues else "queues: none")
    for q in queues:
        w(f"  device {q['physical_device_ordinal']} queue {q['queue_ordinal']} stream "
          f"{q['stream_id']}: submissions {_n(q['submissions'])} (valid "
          f"{_n(q['valid_submissions'])}, invalid {_n(q['invalid_submissions'])})")
        line = (f"    busy {_ticks(q['busy_ticks'])} ticks, dispatch total "
                f"{_n(q['total_dispatch_ticks'])} ticks")
        if q["total_dispatch_time_ns_available"]:
            line += (f"; busy {_f(q['busy_ns'])} ns, dispatch total "
                     f"{_n(q['total_dispatch_ns'])} ns")
        w(line)
        if q["gap_analysis_available"]:
            line = (f"    gaps {_n(q['gaps'])}: total {_ticks(q['total_gap_ticks'])} ticks, "
                    f"max {_ticks(q['max_gap_ticks'])} ticks")
            if q["clock_fit_available"]:
                line += f" (total {_f(q['total_gap_ns'])} ns, max {_f(q['max_gap_ns'])} ns)"
            w(line)
        else:
            w("    gaps: unavailable without queue events")


def _top_functions(w, ranks: list[dict]) -> None:
    if not ranks:
        w("top functions by total dispatch time: none")
        return
    w(f"top functions by total dispatch time (timing: {ranks[0]['timing_source']}):")
    for r in ranks:
        w(f"  #{r['rank']:<2} {r['key']}  (device {r['physical_device_ordinal']}, executable "
          f"{r['executable_id']}, function {r['function_ordinal']})")
        line = (f"      count {_n(r['dispatches'])} (valid {_n(r['valid'])}, invalid "
                f"{_n(r['invalid'])})")
        if r["timing_source"] == "host_execution_event":
            line += (f"; tiles {_n(r['total_tile_count'])}, tile sum "
                     f"{_n(r['total_tile_duration_sum_ns'])} ns")
        else:
            line += f"; ticks total {_n(r['total_ticks'])}, max {_n(r['max_ticks'])}"
        if r["duration_ns_available"]:
            line += (f"; total {_n(r['total_ns'])} ns, avg {_f(r['avg_ns'])} ns, max "
                     f"{_n(r['max_ns'])} ns")
        w(line)


def _top_dispatches(w, tops: list[dict]) -> None:
    if not tops:
        w("top individual dispatches: none")
        return
    w(f"top individual dispatches (timing: {tops[0]['timing_source']}):")
    for t in tops:
        w(f"  #{t['rank']:<2} {t['key']}  (event {t['event_id']}, submission "
          f"{t['submission_id']}, device {t['physical_device_ordinal']}, queue "
          f"{t['queue_ordinal']}, stream {t['stream_id']})")
        if t["timing_source"] == "host_execution_event":
            line = (f"      {_n(t['duration_ns'])} ns; tiles {_n(t['tile_count'])}, tile sum "
                    f"{_n(t['tile_duration_sum_ns'])} ns")
            if t["command_buffer_id"]:
                line += (f"; command buffer {t['command_buffer_id']}, command index "
                         f"{t['command_index']}")
        else:
            line = f"      {_n(t['duration_ticks'])} ticks"
            if t["duration_ns_available"]:
                line += f" = {_n(t['duration_ns'])} ns"
        w(line)


def _queue_operations(w, q: dict) -> None:
    w(f"queue operations: {_n(q['events'])} events; dependency strategies: none "
      f"{_n(q['strategy_none'])}, inline {_n(q['strategy_inline'])}, device_barrier "
      f"{_n(q['strategy_device_barrier'])}, software_defer {_n(q['strategy_software_defer'])}")
    w(f"  transfer payload bytes: copy {_n(q['copy_bytes'])}, fill {_n(q['fill_bytes'])}, "
      f"update {_n(q['update_bytes'])}, read {_n(q['read_bytes'])}, "
      f"write {_n(q['write_bytes'])}")
    w(f"  operation counts: dispatch {_n(q['dispatches'])}, execute {_n(q['executes'])}, "
      f"alloca {_n(q['allocas'])}, dealloca {_n(q['deallocas'])}, "
      f"host_call {_n(q['host_calls'])}")


def _memory(w, devices: list[dict]) -> None:
    if not devices:
        w("memory pressure: no memory events")
        return
    w("memory pressure (high-water bytes):")
    for d in devices:
        w(f"  device {d['physical_device_ordinal']}: slab {_n(d['slab_high_water_bytes'])}, "
          f"pool reserved {_n(d['pool_reserved_high_water_bytes'])}, pool materialized "
          f"{_n(d['pool_materialized_high_water_bytes'])}, queue in-flight "
          f"{_n(d['queue_inflight_high_water_bytes'])}, buffer "
          f"{_n(d['buffer_high_water_bytes'])}; pool waits {_n(d['pool_waits'])}")


def _hints(w, hints: list[dict]) -> None:
    w("hints:" if hints else "hints: none")
    for h in hints:
        message = h["message"]
        if h["category"] == "session":
            message = (f"{h['non_ok_session_end_records']} profiling session end record(s) "
                       f"reported non-OK status; first session_id={h['first_non_ok_session_id']} "
                       f"stream_id={h['first_non_ok_stream_id']} "
                       f"event_id={h['first_non_ok_event_id']} "
                       f"status={h['first_non_ok_status']}({h['first_non_ok_status_code']})")
        w(f"  [{h['severity']}] {h['category']}: {message}")

"""Text for `summary`: record totals, aligned columns of the families present, one block per device.

Shows what iree-profile's text shows (families with no chunks are left out of the table; their
counts are zero), laid out to read at 100 columns.
"""

from __future__ import annotations

# (summary key, label, extra fields for the notes column)
_FAMILIES = [
    ("device", "devices", ()), ("queue", "queues", ()), ("executable", "executables", ()),
    ("executable_code_object", "executable code objects", ("executable_code_object_data_bytes",)),
    ("executable_code_object_load", "code object loads", ()),
    ("executable_function", "executable functions", ()),
    ("command_buffer", "command buffers", ()), ("command_operation", "command operations", ()),
    ("clock_correlation", "clock correlations", ()), ("dispatch_event", "dispatch events", ()),
    ("queue_event", "queue events", ()), ("queue_device_event", "queue device events", ()),
    ("host_execution_event", "host execution events",
     ("invalid_host_execution_event_records", "total_host_execution_duration_ns")),
    ("command_region_event", "command region events",
     ("invalid_command_region_event_records", "total_command_region_duration_ns")),
    ("memory_event", "memory events", ()), ("event_relationship", "event relationships", ()),
    ("counter_set", "counter sets", ()), ("counter", "counters", ()),
    ("counter_sample", "counter samples", ()),
    ("device_metric_source", "device metric sources", ()),
    ("device_metric_descriptor", "device metric descriptors", ()),
    ("device_metric_sample", "device metric samples",
     ("device_metric_values", "invalid_device_metric_sample_records")),
    ("executable_trace", "executable traces", ("executable_trace_data_bytes",)),
]
_NOTE_LABELS = {
    "executable_code_object_data_bytes": "data bytes",
    "invalid_host_execution_event_records": "invalid",
    "total_host_execution_duration_ns": "total ns",
    "invalid_command_region_event_records": "invalid",
    "total_command_region_duration_ns": "total ns",
    "device_metric_values": "values",
    "invalid_device_metric_sample_records": "invalid",
    "executable_trace_data_bytes": "data bytes",
}


def _n(v) -> str:
    return f"{v:,}"


def render(rows, out) -> None:
    rows = list(rows)
    summary = next(r for r in rows if r["type"] == "summary")
    devices = [r for r in rows if r["type"] == "device_summary"]

    def w(text: str) -> None:
        out.write(text + "\n")

    s = summary
    w("IREE HAL profile summary")
    w(f"records: {_n(s['file_records'])} (session_begin {s['session_begin_records']}, "
      f"chunks {_n(s['chunk_records'])}, session_end {s['session_end_records']}, "
      f"non-OK session_end {s['non_ok_session_end_records']}, unknown {s['unknown_records']})")
    if s["non_ok_session_end_records"]:
        w(f"first non-OK session end: session_id={s['first_non_ok_session_id']} "
          f"stream_id={s['first_non_ok_stream_id']} event_id={s['first_non_ok_event_id']} "
          f"status={s['first_non_ok_status']} ({s['first_non_ok_status_code']})")
    w(f"chunks: unknown {s['unknown_chunks']}, truncated {s['truncated_chunks']}, "
      f"dropped records {_n(s['dropped_records'])}")

    table = []
    for key, label, extra in _FAMILIES:
        chunks = s[f"{key}_chunks"]
        if not chunks:
            continue
        records = s.get(f"{key}_records")
        notes = ", ".join(f"{_NOTE_LABELS[k]} {_n(s[k])}" for k in extra)
        table.append((label, _n(chunks), "" if records is None else _n(records), notes))
    if table:
        table.insert(0, ("family", "chunks", "records", "notes"))
        widths = [max(len(row[i]) for row in table) for i in range(3)]
        for label, chunks, records, notes in table:
            w(f"  {label:<{widths[0]}}  {chunks:>{widths[1]}}  {records:>{widths[2]}}  {notes}".rstrip())
        w("  (families without chunks are not listed; device, queue, clock and dispatch records "
          "are")
        w("   counted per device below)")
    else:
        w("no typed chunks")

    w("devices:" if devices else "devices: none")
    for d in devices:
        _device(w, d)


def _device(w, d) -> None:
    extra = getattr(d, "extra", {})
    w(f"  device {d['physical_device_ordinal']}: device records {d['device_records']}, "
      f"queues {d['queue_records']}/{d['queues']}")
    w(f"    clock samples {d['clock_samples']}, bracket uncertainty "
      f"{_n(d['min_clock_uncertainty_ns'])}..{_n(d['max_clock_uncertainty_ns'])} ns, "
      f"unaligned {d['invalid_clock_alignment_samples']}")
    if d["invalid_clock_alignment_samples"]:
        w("    warning: clock samples not aligned with event ticks; no host timeline for this "
          "device")
    if d["clock_fit_available"]:
        w(f"    clock fit: {d['ns_per_tick']:.9f} ns/tick ({d['tick_frequency_hz']:,.3f} Hz)")
        if "device_delta_ticks" in extra:
            w(f"      from {_n(extra['device_delta_ticks'])} ticks over {_n(extra['host_delta_ns'])} ns "
              "between the first and last samples")
    else:
        w("    clock fit: unavailable")
    w(f"    dispatches {_n(d['dispatches'])} (valid {_n(d['valid_dispatches'])}, "
      f"invalid {_n(d['invalid_dispatches'])})")
    if d["valid_dispatches"]:
        covered = "yes" if d["dispatch_ticks_covered_by_clock_samples"] else "no"
        w(f"      tick range {d['earliest_dispatch_start_tick']}..{d['latest_dispatch_end_tick']}"
          f" (inside the clock samples: {covered})")
        table = [("", "min", "avg", "max", "total"),
                 ("ticks", _n(d["min_dispatch_ticks"]), f"{d['avg_dispatch_ticks']:,.3f}",
                  _n(d["max_dispatch_ticks"]), _n(d["total_dispatch_ticks"]))]
        if d["dispatch_time_available"]:
            table.append(("ns", _n(d["min_dispatch_ns"]), f"{d['avg_dispatch_ns']:,.3f}",
                          _n(d["max_dispatch_ns"]), _n(d["total_dispatch_ns"])))
        widths = [max(len(row[i]) for row in table) for i in range(5)]
        for row in table:
            w("      " + row[0].ljust(widths[0]) + "".join(
                "  " + cell.rjust(width) for cell, width in zip(row[1:], widths[1:])))
        if not d["dispatch_time_available"] and d["clock_fit_available"]:
            w("      ns: unavailable (out of range)")
    w(f"    device metrics: samples {_n(d['device_metric_samples'])}, "
      f"values {_n(d['device_metric_values'])}, invalid {_n(d['invalid_device_metric_samples'])}")

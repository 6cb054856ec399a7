"""Text for `queue`: per queue its dispatch submissions, device queue events, host execution
events and host queue events, each as an aligned table."""

from __future__ import annotations

from collections import defaultdict

from amdgpu_cli.cli.profile_text.dispatch import fields, table


def _queue_key(r: dict) -> tuple[int, int, int]:
    return r["physical_device_ordinal"], r["queue_ordinal"], r["stream_id"]


def render(rows, out) -> None:
    rows = list(rows)
    s = rows[0]
    out.write("IREE HAL profile queue summary\n")
    out.write(f"filter: {s['filter']}\n")
    fields(out, "", [("queues", s["queues"]), ("queue_events", s["queue_events"]),
                     ("queue_device_events", s["queue_device_events"]),
                     ("host_execution_events", s["host_execution_events"]),
                     ("truncated_chunks", s["truncated_chunks"]),
                     ("dropped_records", s["dropped_records"]),
                     ("submissions", s["submissions"]),
                     ("matched_dispatches", s["matched_dispatches"]),
                     ("valid", s["valid_dispatches"]), ("invalid", s["invalid_dispatches"])])
    fields(out, "", [("host_dispatches: matched", s["matched_host_dispatches"]),
                     ("valid", s["valid_host_dispatches"]),
                     ("invalid", s["invalid_host_dispatches"]),
                     ("command_executions", s["host_command_executions"])])
    queues = []
    sections = defaultdict(lambda: defaultdict(list))
    for r in rows[1:]:
        if r["type"] == "queue":
            queues.append(_queue_key(r))
        else:
            sections[_queue_key(r)][r["type"]].append(r)
    for key in queues:
        out.write(f"\nqueue device={key[0]} ordinal={key[1]} stream={key[2]}\n")
        section = sections.get(key, {})
        _submissions(out, section.get("queue_submission", ()))
        _device_events(out, section.get("queue_device_event", ()))
        _host_execution_events(out, section.get("host_execution_event", ()))
        _queue_events(out, section.get("queue_event", ()))
        if not section:
            out.write("  (no submissions or events)\n")


def _submissions(out, rows) -> None:
    if not rows:
        return
    out.write("  submissions (device dispatches; ticks, ns through the device clock fit):\n")
    table(out, "    ", ["submission", "dispatches", "valid", "invalid", "span_ticks",
                        "total_ticks", "span_ns", "total_ns"],
          [[r["submission_id"], r["dispatches"], r["valid"], r["invalid"], r["span_ticks"],
            r["total_dispatch_ticks"],
            r["span_ns"] if r["total_dispatch_time_ns_available"] else None,
            r["total_dispatch_ns"] if r["total_dispatch_time_ns_available"] else None]
           for r in rows])


def _device_events(out, rows) -> None:
    if not rows:
        return
    out.write("  device queue events (ticks):\n")
    table(out, "    ", ["event", "type", "submission", "command_buffer", "allocation", "ops",
                        "ticks", "valid", "ns"],
          [[r["event_id"], r["op"], r["submission_id"], r["command_buffer_id"],
            r["allocation_id"], r["operation_count"], r["duration_ticks"], r["valid"],
            r["duration_ns"] if r["valid"] and r["clock_fit_available"] else None]
           for r in rows])


def _host_execution_events(out, rows) -> None:
    if not rows:
        return
    out.write("  host execution events (ns):\n")
    table(out, "    ", ["event", "type", "submission", "command_buffer", "allocation", "ops",
                        "tiles", "ns", "tile_sum_ns", "valid"],
          [[r["event_id"], r["op"], r["submission_id"], r["command_buffer_id"],
            r["allocation_id"], r["operation_count"], r["tile_count"], r["duration_ns"],
            r["tile_duration_sum_ns"], r["valid"]] for r in rows])


def _queue_events(out, rows) -> None:
    if not rows:
        return
    out.write("  host queue events (iree host time ns; w/s/b = waits/signals/barriers):\n")
    table(out, "    ", ["event", "type", "submission", "strategy", "submit_ns", "ready_ns",
                        "w/s/b", "ops", "bytes"],
          [[r["event_id"], r["op"], r["submission_id"], r["dependency_strategy"],
            r["host_time_ns"], r["ready_host_time_ns"],
            f"{r['wait_count']}/{r['signal_count']}/{r['barrier_count']}",
            r["operation_count"], r["payload_length"]] for r in rows])

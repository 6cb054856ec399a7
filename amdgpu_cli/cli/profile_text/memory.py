"""Text for `memory`: the summary, one block per device and pool, and (with --id) per allocation.

Each block leads with its identity and counters and then a balance table, so devices, pools and
allocations read alike: open/peak = lifecycles open at the end / at most; bytes, peak bytes =
bytes open at the end / at most; opened, closed = bytes ever opened / closed; partial = closes
that found nothing (or too few bytes) open, as count/bytes. Event rows are JSONL only, as in
iree-profile.
"""

from __future__ import annotations

from amdgpu_cli.profile.reports.memory import (
    BALANCE_FIELDS, DEVICE_BALANCES, DEVICE_COUNTS, MemoryReport)

_BALANCE_NAMES = {
    "slab": "slab provider", "pool_reserved": "pool reserved",
    "pool_materialized": "pool materialized", "queue_inflight": "queue in-flight",
    "buffer": "buffer allocs", "imported_buffer": "buffer imports",
    "lifecycle": "lifecycle", "materialized": "materialized",
}


RICH = True  # drawn through a rich Console, not written as plain lines


def render(rows, console) -> None:
    if isinstance(rows, MemoryReport):
        rows = rows.text_rows()
    for row in rows:
        kind = row["type"]
        if kind == "memory_summary":
            _summary(row, console)
        elif kind == "memory_device":
            _device(row, console)
        elif kind == "memory_pool":
            _pool(row, console)
        elif kind == "memory_allocation":
            _allocation(row, console)


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _summary(row, console) -> None:
    line = _printer(console)
    line("IREE HAL profile memory summary", style="bold")
    line(f"filter: {row['filter']}")
    if row["id_filter"] >= 0:
        line(f"id filter: {row['id_filter']} (event or allocation id)")
    line(f"events: {row['matched_events']} matched of {row['total_events']}")
    line(f"truncated chunks {row['truncated_chunks']}  dropped records "
         f"{row['dropped_records']}  matched events in truncated chunks "
         f"{row['truncated_matched_events']}")
    line(f"devices {row['devices']}  pools {row['pools']}  allocation lifecycles "
         f"{row['allocation_lifecycles']}  open at end {row['open_allocation_lifecycles']}  "
         f"partial closes {row['partial_lifecycle_closes']}")


def _printer(console):
    """Prints one line as is: no wrapping (tables fit the width, plain lines stay whole)."""
    def line(text: str = "", **style) -> None:
        console.print(text, soft_wrap=True, **style)
    return line


def _balance_table(console, row, prefixes) -> None:
    """An aligned table (never truncating a number), indented under its block."""
    header = ["balance", "open/peak", "bytes", "peak bytes", "opened", "closed", "partial"]
    cells = [header]
    for prefix in prefixes:
        b = {f: row[f"{prefix}_{f}"] for f in BALANCE_FIELDS}
        cells.append([_BALANCE_NAMES[prefix], f"{b['current_count']}/{b['high_water_count']}",
                      str(b["current_bytes"]), str(b["high_water_bytes"]),
                      str(b["total_open_bytes"]), str(b["total_close_bytes"]),
                      f"{b['partial_close_count']}/{b['partial_close_bytes']}"])
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = _printer(console)
    for k, r in enumerate(cells):
        text = "  " + r[0].ljust(widths[0]) + "".join(
            "  " + cell.rjust(w) for cell, w in zip(r[1:], widths[1:]))
        line(text, style="dim" if k == 0 else None)


def _device(row, console) -> None:
    line = _printer(console)
    counts = {name: row[name] for name, _ in DEVICE_COUNTS}
    line()
    line(f"device {row['physical_device_ordinal']}: {row['events']} events", style="bold")
    line(
        f"  slab acquire/release {counts['slab_acquires']}/{counts['slab_releases']}  "
        f"pool reserve/materialize/release/wait {counts['pool_reserves']}/"
        f"{counts['pool_materializes']}/{counts['pool_releases']}/{counts['pool_waits']}")
    line(
        f"  queue alloca/dealloca {counts['queue_allocas']}/{counts['queue_deallocas']}  "
        f"buffer allocate/free {counts['buffer_allocates']}/{counts['buffer_frees']}  "
        f"buffer import/unimport {counts['buffer_imports']}/{counts['buffer_unimports']}")
    _balance_table(console, row, DEVICE_BALANCES)


def _pool(row, console) -> None:
    line = _printer(console)
    line()
    line(
        f"pool {row['kind']}: device {row['physical_device_ordinal']}  id {row['pool_id']}  "
        f"memory_type {row['memory_type']}  buffer_usage {row['buffer_usage']}", style="bold")
    line(f"  events {row['events']}  waits {row['waits']}  materializes {row['materializes']}")
    if row["pool_stats_available"]:
        line(f"  pool stats: {row['pool_stats_samples']} samples (last / extreme)")
        line(f"    reserved {row['pool_bytes_reserved']} / "
             f"{row['pool_bytes_reserved_high_water']}  free {row['pool_bytes_free']} / "
             f"{row['pool_bytes_free_low_water']}  committed {row['pool_bytes_committed']} / "
             f"{row['pool_bytes_committed_high_water']}")
        line(f"    budget {row['pool_budget_limit']}  reservations "
             f"{row['pool_reservation_count']} / {row['pool_reservation_high_water_count']}  "
             f"slabs {row['pool_slab_count']} / {row['pool_slab_high_water_count']}")
    prefixes = ["lifecycle"] + (["materialized"] if row["kind"] == "pool_reservation" else [])
    _balance_table(console, row, prefixes)


def _allocation(row, console) -> None:
    line = _printer(console)
    line()
    line(
        f"allocation {row['kind']}: device {row['physical_device_ordinal']}  "
        f"id {row['allocation_id']}  pool {row['pool_id']}  backing {row['backing_id']}",
        style="bold")
    line(
        f"  events {row['events']}  waits {row['waits']}  materializes {row['materializes']}  "
        f"open at end {_yes(row['open_at_end'])}  "
        f"externally owned {_yes(row['externally_owned'])}")
    line(f"  memory_type {row['memory_type']}  buffer_usage {row['buffer_usage']}  "
         f"first/last event {row['first_event_id']}/{row['last_event_id']}")
    line(f"  host time {row['first_host_time_ns']}..{row['last_host_time_ns']} ns "
         f"({row['duration_ns']} ns)")
    line(f"  submissions {row['first_submission_id']}..{row['last_submission_id']}  "
         f"queues {_queue(row['first_queue_ordinal'])}..{_queue(row['last_queue_ordinal'])}")
    if row["kind"] == "queue_allocation":
        text = (f"  device lifetime: available {_yes(row['device_lifetime_available'])}  "
                f"alloca event {row['alloca_device_event_id']}  "
                f"dealloca event {row['dealloca_device_event_id']}")
        line(text)
        text = f"    ticks {row['device_lifetime_duration_ticks']}"
        if row["device_lifetime_available"]:
            text += (f" ({row['device_lifetime_start_tick']}.."
                     f"{row['device_lifetime_end_tick']})")
        if row["device_lifetime_time_ns_available"]:
            text += f"  {row['device_lifetime_duration_ns']} ns"
        line(text)
    _balance_table(console, row, ["lifecycle", "materialized"])


def _queue(ordinal: int) -> str:
    return "-" if ordinal == 0xFFFFFFFF else str(ordinal)

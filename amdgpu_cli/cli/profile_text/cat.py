"""Text for `cat`: the header, then one block per record (iree-profile's layout)."""

from __future__ import annotations


def render(rows, out) -> None:
    for row in rows:
        if row["type"] == "file":
            out.write("IREE HAL profile bundle\n"
                      f"version: {row['version_major']}.{row['version_minor']}\n"
                      f"header_length: {row['header_length']}\n"
                      f"flags: 0x{row['flags']:08x}\n"
                      "records:\n")
            continue
        out.write(
            f"[{row['index']}] {row['record_type']} record_length={row['record_length']} "
            f"payload_length={row['payload_length']}\n"
            f"  content_type: {row['content_type']}\n"
            f"  name: {row['name']}\n"
            f"  session_id={row['session_id']} stream_id={row['stream_id']} "
            f"event_id={row['event_id']}\n"
            f"  executable_id={row['executable_id']} command_buffer_id={row['command_buffer_id']}\n"
            f"  physical_device_ordinal={row['physical_device_ordinal']} "
            f"queue_ordinal={row['queue_ordinal']}\n"
            f"  chunk_flags=0x{row['chunk_flags']:016x} session_status_code="
            f"{row['session_status_code']} session_status={row['session_status']}\n")

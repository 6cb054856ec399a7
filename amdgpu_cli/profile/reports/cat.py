"""`cat`: the file header and every record header, as iree-profile's `cat` prints them.

Records before a broken one are still reported; the chain error is raised after them (exit 1), as
iree-profile does.
"""

from __future__ import annotations

from typing import Iterator

from amdgpu_cli.profile import schema
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> Iterator[dict]:
    h = bundle.header
    yield {"type": "file", "magic": "IRPF", "version_major": int(h["version_major"]),
           "version_minor": int(h["version_minor"]), "header_length": int(h["header_length"]),
           "flags": int(h["flags"])}
    for index, r in enumerate(bundle.records.tolist()):
        (_, record_length, payload_length, session_id, stream_id, event_id, executable_id,
         command_buffer_id, _, _, _, pdo, queue, chunk_flags, _, status, record_type, _, _) = r
        yield {"type": "record", "index": index,
               "record_type": schema.RecordType.NAMES.get(record_type, "unknown"),
               "record_type_value": record_type, "record_length": record_length,
               "payload_length": payload_length, "content_type": bundle.content_type(index),
               "name": bundle.name(index), "session_id": session_id, "stream_id": stream_id,
               "event_id": event_id, "executable_id": executable_id,
               "command_buffer_id": command_buffer_id, "physical_device_ordinal": pdo,
               "queue_ordinal": queue, "chunk_flags": chunk_flags, "session_status_code": status,
               "session_status": schema.status_name(status)}
    bundle.check()

"""`cat`: the file header and every record header, as iree-profile's `cat` prints them.

Records before a broken one are still reported; the chain error is raised after them (exit 1), as
iree-profile does. The record rows are one row block over the record table's columns.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from amdgpu_cli.profile import schema
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle
from amdgpu_cli.profile.reports.toolkit import RowLayout, Rows, Strings, distinct

RECORD_ROW = RowLayout("record", [
    ("index", "int"), ("record_type", "str"), ("record_type_value", "int"),
    ("record_length", "int"), ("payload_length", "int"), ("content_type", "str"),
    ("name", "str"), ("session_id", "int"), ("stream_id", "int"), ("event_id", "int"),
    ("executable_id", "int"), ("command_buffer_id", "int"), ("physical_device_ordinal", "int"),
    ("queue_ordinal", "int"), ("chunk_flags", "int"), ("session_status_code", "int"),
    ("session_status", "str"),
])


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> Rows:
    return Rows(_parts(bundle))


def _parts(bundle: Bundle) -> Iterator:
    h = bundle.header
    yield {"type": "file", "magic": "IRPF", "version_major": int(h["version_major"]),
           "version_minor": int(h["version_minor"]), "header_length": int(h["header_length"]),
           "flags": int(h["flags"])}
    r = bundle.records
    content_types, names = _strings(bundle)
    status = r["session_status_code"]
    statuses = distinct(status)
    yield RECORD_ROW.block(
        index=np.arange(len(r)), record_type=Strings.enum(r["record_type"], schema.RecordType.NAMES),
        record_type_value=r["record_type"], record_length=r["record_length"],
        payload_length=r["payload_length"], content_type=content_types, name=names,
        session_id=r["session_id"], stream_id=r["stream_id"], event_id=r["event_id"],
        executable_id=r["executable_id"], command_buffer_id=r["command_buffer_id"],
        physical_device_ordinal=r["physical_device_ordinal"], queue_ordinal=r["queue_ordinal"],
        chunk_flags=r["chunk_flags"], session_status_code=status,
        session_status=Strings(np.searchsorted(statuses, status),
                               [schema.status_name(c) for c in statuses]))
    bundle.check()


def _strings(bundle: Bundle) -> tuple[Strings, Strings]:
    """Each record's content type and name; each distinct one decoded once."""
    r = bundle.records
    start = (r["offset"] + r["header_length"]).tolist()
    ct_len = r["content_type_length"].tolist()
    name_len = r["name_length"].tolist()
    data = bundle.data
    index: dict[bytes, int] = {}
    codes = ([], [])
    for s, c, n in zip(start, ct_len, name_len):
        codes[0].append(index.setdefault(bytes(data[s:s + c]), len(index)))
        codes[1].append(index.setdefault(bytes(data[s + c:s + c + n]), len(index)))
    texts = [raw.decode("utf-8", "replace") for raw in index]
    return Strings(np.array(codes[0], np.int64), texts), Strings(np.array(codes[1], np.int64), texts)

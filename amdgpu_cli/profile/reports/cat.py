"""`cat`: the file header and every record header, as iree-profile's `cat` prints them.

Records before a broken one are still reported; the chain error is raised after them (exit 1), as
iree-profile does. Rows are prerendered from whole columns: a bundle can hold a million records.
"""

from __future__ import annotations

from typing import Iterator

from amdgpu_cli.profile import jsonl, schema
from amdgpu_cli.profile.options import ReportOptions
from amdgpu_cli.profile.reader import Bundle

_FIELDS = ("record_length", "payload_length", "session_id", "stream_id", "event_id",
           "executable_id", "command_buffer_id", "physical_device_ordinal", "queue_ordinal",
           "chunk_flags", "session_status_code")


class _RecordRow(dict, jsonl.Prerendered):
    """A `record` row that also carries its JSON text (written as is by jsonl.dumps)."""

    __slots__ = ("text",)

    def json(self) -> str:
        return self.text


def report(bundle: Bundle, options: ReportOptions = ReportOptions()) -> Iterator[dict]:
    h = bundle.header
    yield {"type": "file", "magic": "IRPF", "version_major": int(h["version_major"]),
           "version_minor": int(h["version_minor"]), "header_length": int(h["header_length"]),
           "flags": int(h["flags"])}
    records = bundle.records
    columns = [records[name].tolist() for name in _FIELDS]
    record_types = records["record_type"].tolist()
    strings = _strings(bundle)
    type_names = {t: schema.RecordType.NAMES.get(t, "unknown") for t in set(record_types)}
    status_names = {c: schema.status_name(c) for c in set(columns[10])}
    for index, values in enumerate(zip(*columns)):
        (content_type, ct_json), (name, name_json) = strings[index]
        record_type, status = record_types[index], values[10]
        row = _RecordRow(
            type="record", index=index, record_type=type_names[record_type],
            record_type_value=record_type, record_length=values[0], payload_length=values[1],
            content_type=content_type, name=name, session_id=values[2], stream_id=values[3],
            event_id=values[4], executable_id=values[5], command_buffer_id=values[6],
            physical_device_ordinal=values[7], queue_ordinal=values[8], chunk_flags=values[9],
            session_status_code=status, session_status=status_names[status])
        row.text = (
            f'{{"type":"record","index":{index},"record_type":"{type_names[record_type]}",'
            f'"record_type_value":{record_type},"record_length":{values[0]},'
            f'"payload_length":{values[1]},"content_type":{ct_json},"name":{name_json},'
            f'"session_id":{values[2]},"stream_id":{values[3]},"event_id":{values[4]},'
            f'"executable_id":{values[5]},"command_buffer_id":{values[6]},'
            f'"physical_device_ordinal":{values[7]},"queue_ordinal":{values[8]},'
            f'"chunk_flags":{values[9]},"session_status_code":{status},'
            f'"session_status":"{status_names[status]}"}}')
        yield row
    bundle.check()


def _strings(bundle: Bundle) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """Each record's content type and name, as (text, JSON text); each distinct one decoded once."""
    r = bundle.records
    start = (r["offset"] + r["header_length"]).tolist()
    ct_len = r["content_type_length"].tolist()
    name_len = r["name_length"].tolist()
    data = bundle.data
    cache: dict[bytes, tuple[str, str]] = {}

    def decoded(raw: bytes) -> tuple[str, str]:
        found = cache.get(raw)
        if found is None:
            text = raw.decode("utf-8", "replace")
            found = cache[raw] = (text, jsonl.string(text))
        return found

    return [(decoded(bytes(data[s:s + c])), decoded(bytes(data[s + c:s + c + n])))
            for s, c, n in zip(start, ct_len, name_len)]

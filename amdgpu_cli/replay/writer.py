"""Writes .ireereplay v2.0 files: the header, then records as they come, then the final length.

`ReplayWriter` does not own its stream (the caller opens it through `amdgpu_cli.outputs`). Every
record reaches the stream in one write, so a capture killed part way leaves whole records and a
header whose `file_length` is 0, which readers take as "parse to the end" (as IREE's do). On a
seekable stream `close()` writes the final `file_length`.
"""

from __future__ import annotations

import threading
from typing import BinaryIO

from amdgpu_cli.replay import schema
from amdgpu_cli.replay.schema import PAYLOADS, RECORD_HEADER, RECORD_HEADER_SIZE, RecordType


def file_header(file_length: int = 0) -> bytes:
    return schema.FILE_HEADER.pack(schema.MAGIC, schema.VERSION_MAJOR, schema.VERSION_MINOR,
                                   schema.FILE_HEADER_SIZE, 0, file_length)


def record_bytes(ordinal: int, record_type: int, *, device_id: int = 0, object_id: int = 0,
                 related_object_id: int = 0, object_type: int = 0, operation_code: int = 0,
                 status_code: int = 0, payload_type: int = 0, payload: bytes = b"",
                 flags: int = 0) -> bytes:
    """One record (header and payload) as bytes."""
    header = RECORD_HEADER.pack(
        RECORD_HEADER_SIZE + len(payload), len(payload), ordinal, 0, device_id, object_id,
        related_object_id, RECORD_HEADER_SIZE, record_type, flags, payload_type, object_type,
        operation_code, status_code, 0, 0)
    return header + payload


def payload(payload_type: int, fields: dict | None = None, *tail) -> bytes:
    """A payload: the fixed struct of `payload_type` from `fields`, then the tail parts (bytes
    or lists of sub-struct dicts, in schema.TAILS order) concatenated."""
    parts = [PAYLOADS[payload_type].pack(fields or {})]
    for part in tail:
        parts.append(part if isinstance(part, (bytes, bytearray, memoryview)) else b"".join(part))
    return b"".join(bytes(p) for p in parts)


def timepoints(points) -> bytes:
    """(semaphore id, value) pairs as timepoint structs."""
    return b"".join(schema.TIMEPOINT.pack(semaphore_id=s, value=v) for s, v in points)


def buffer_refs(refs) -> bytes:
    """buffer_ref dicts as structs."""
    return b"".join(schema.BUFFER_REF.pack(ref) for ref in refs)


class ReplayWriter:
    """Appends records with consecutive ordinals to `stream` (thread-safe: one lock orders them,
    as IREE's recorder orders calls)."""

    def __init__(self, stream: BinaryIO):
        self._stream = stream
        self._lock = threading.Lock()
        self._ordinal = 0
        self._length = schema.FILE_HEADER_SIZE
        try:
            self._base = stream.tell() if stream.seekable() else None
        except (AttributeError, OSError, ValueError):
            self._base = None
        stream.write(file_header(0))
        stream.flush()
        self.closed = False

    @property
    def length(self) -> int:
        """Bytes written so far, the header included."""
        return self._length

    @property
    def record_count(self) -> int:
        return self._ordinal

    def write(self, record_type: int, **fields) -> int:
        """Appends one record (fields as `record_bytes` takes them); returns its ordinal."""
        with self._lock:
            ordinal = self._ordinal
            data = record_bytes(ordinal, record_type, **fields)
            self._stream.write(data)
            self._stream.flush()
            self._ordinal += 1
            self._length += len(data)
            return ordinal

    def session(self) -> int:
        return self.write(RecordType.SESSION)

    def close(self) -> None:
        """Writes the final file_length (where the stream can seek) and flushes."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            stream = self._stream
            if self._base is not None:
                end = stream.tell()
                stream.seek(self._base + schema.FILE_LENGTH_OFFSET)
                stream.write(self._length.to_bytes(8, "little"))
                stream.seek(end)
            stream.flush()

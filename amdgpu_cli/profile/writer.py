"""Writes .ireeprof bundles: a profile sink interface, the file sink, record builders and hashes.

Three layers, each usable on its own:

* `ProfileSink` is the interface a profiling producer (our runtime's drivers) talks to, shaped like
  IREE's `iree_hal_profile_sink_t`: `begin_session(meta)`, `write(meta, *parts)`,
  `end_session(meta, status_code)`, `close()`. `ChunkMetadata` is the per-call chunk metadata.
  `FileSink` writes the .ireeprof container exactly as IREE's file sink does: a 24-byte header with
  `file_length` 0, then records back to back with no padding; every session end appends the end
  record and rewrites the header with the current length. A chunk with `dropped_record_count != 0`
  always carries the TRUNCATED flag.
* `BundleWriter` is the convenient front end: a context manager over a path (written through a
  temporary file renamed into place on success), a binary file object, or memory (`None`;
  `getvalue()` returns the bytes). `begin_session` / `chunk` / `end_session` / `session()`.
* Record builders: `records(suffix, **columns)` builds fixed records of any content type as a numpy
  array of the schema's dtype (record_length set, IREE's "absent" defaults filled in), and one
  helper per variable-length type (`function_record`, `code_object_record`, `counter_set_record`,
  `counter_record`, `counter_sample_record`, `metric_source_record`, `metric_descriptor_record`,
  `metric_sample_record`) returns encoded bytes with every length field derived from the data.
  `executable_trace_payload` builds the one-header-plus-raw-bytes payload of a trace chunk.
  `code_object_hash` / `function_hash` compute the SipHash-2-4 identities IREE's AMDGPU driver
  writes.

Layouts come only from `schema` (no layout is declared here). `chunk()` checks typed payloads
against the reader's rules (the record_length chain; variable records end exactly where their length
fields say) before anything reaches the file, so a builder mistake fails in the producer rather than
in `iree-profile`.

Threading: a sink is not thread-safe; producers serialize their calls (IREE's drivers flush from one
thread per session). Sources: ../shared/reference/ireeprof.md sections 1, 2 and 5 (hashes);
IREE `runtime/src/iree/hal/utils/profile_file.c` (file sink) and
`runtime/src/iree/hal/drivers/amdgpu/profile_metadata.c` (hashes).
"""

from __future__ import annotations

import abc
import contextlib
import io
import os
import struct
import sys
from dataclasses import dataclass
from typing import BinaryIO, Iterator, Sequence, Union

import numpy as np

from amdgpu_cli.outputs import OutputFile
from amdgpu_cli.siphash import siphash24
from amdgpu_cli.profile import schema
from amdgpu_cli.profile.schema import U32_MAX, U64_MAX, RecordType, hash_hex

if sys.byteorder != "little":  # pragma: no cover - every supported host is little-endian
    raise ImportError("the .ireeprof writer needs a little-endian host")

SESSION_CONTENT_TYPE = schema.CONTENT_TYPE_PREFIX + "session"

Payload = Union[None, bytes, bytearray, memoryview, np.ndarray, Sequence["Payload"]]


# --- Sink interface -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ChunkMetadata:
    """What a producer says about one chunk (or a session begin/end): IREE's chunk metadata."""

    content_type: str = SESSION_CONTENT_TYPE
    name: str | bytes = ""
    session_id: int = 0
    stream_id: int = 0
    event_id: int = 0
    executable_id: int = 0
    command_buffer_id: int = 0
    physical_device_ordinal: int = U32_MAX
    queue_ordinal: int = U32_MAX
    flags: int = 0                 # chunk flags (bit0 TRUNCATED); chunks only
    dropped_record_count: int = 0  # chunks only; nonzero implies TRUNCATED


class ProfileSink(abc.ABC):
    """Receives profiling sessions and chunks from a producer (IREE's `iree_hal_profile_sink_t`).

    Parts passed to `write` are borrowed: a sink copies or writes them before returning.
    """

    @abc.abstractmethod
    def begin_session(self, metadata: ChunkMetadata) -> None: ...

    @abc.abstractmethod
    def write(self, metadata: ChunkMetadata, *parts: Payload) -> None: ...

    @abc.abstractmethod
    def end_session(self, metadata: ChunkMetadata, status_code: int = 0) -> None: ...

    def close(self) -> None:
        """Releases the sink's resources; further calls are errors."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class FileSink(ProfileSink):
    """Writes the .ireeprof container to a binary stream, as IREE's file sink does.

    The stream should be seekable so session ends can rewrite the header's `file_length`; on a
    non-seekable stream (a pipe) the header keeps `file_length` 0, which readers take as "parse to
    the end". The sink does not own the stream: `close()` only flushes it.
    """

    def __init__(self, stream: BinaryIO, *, flush_records: bool = False):
        self._stream = stream
        # flush_records: every record reaches the file in one write as it is made (a streaming
        # capture: a killed producer leaves whole records only).
        self._flush_records = flush_records
        self._seekable = _seekable(stream)
        self._base = stream.tell() if self._seekable else 0
        self._offset = schema.FILE_HEADER.itemsize
        self._closed = False
        stream.write(_file_header(0))
        if flush_records:
            stream.flush()

    @property
    def offset(self) -> int:
        """Bytes written so far, header included (the next record's offset in the bundle)."""
        return self._offset

    def begin_session(self, metadata: ChunkMetadata) -> None:
        self.write_record(RecordType.SESSION_BEGIN, metadata)

    def write(self, metadata: ChunkMetadata, *parts: Payload) -> None:
        self.write_record(RecordType.CHUNK, metadata, parts)

    def end_session(self, metadata: ChunkMetadata, status_code: int = 0) -> None:
        self.write_record(RecordType.SESSION_END, metadata, status_code=status_code)
        self._patch_file_length()

    def write_record(self, record_type: int, metadata: ChunkMetadata, parts: Payload = None, *,
                     status_code: int = 0) -> int:
        """Appends one record of any type (tests use this for unknown record types).

        Chunk flags and dropped counts are kept for CHUNK records only and the status code for
        SESSION_END only, as IREE's sink does. Returns the record's offset.
        """
        if self._closed:
            raise ValueError("profile sink is closed")
        content_type = _encode(metadata.content_type)
        name = _encode(metadata.name)
        payload = _join(parts)
        flags, dropped = 0, 0
        if record_type == RecordType.CHUNK:
            flags, dropped = int(metadata.flags), int(metadata.dropped_record_count)
            if dropped:
                flags |= schema.CHUNK_FLAG_TRUNCATED
        header_length = schema.RECORD_HEADER.itemsize
        h = np.zeros(1, schema.RECORD_HEADER)
        h["record_length"] = header_length + len(content_type) + len(name) + len(payload)
        h["payload_length"] = len(payload)
        h["session_id"] = metadata.session_id
        h["stream_id"] = metadata.stream_id
        h["event_id"] = metadata.event_id
        h["executable_id"] = metadata.executable_id
        h["command_buffer_id"] = metadata.command_buffer_id
        h["header_length"] = header_length
        h["content_type_length"] = len(content_type)
        h["name_length"] = len(name)
        h["physical_device_ordinal"] = metadata.physical_device_ordinal
        h["queue_ordinal"] = metadata.queue_ordinal
        h["chunk_flags"] = flags
        h["dropped_record_count"] = dropped
        h["session_status_code"] = status_code if record_type == RecordType.SESSION_END else 0
        h["record_type"] = record_type
        offset = self._offset
        self._stream.write(b"".join((h.tobytes(), content_type, name, payload)))
        if self._flush_records:
            self._stream.flush()
        self._offset += int(h["record_length"][0])
        return offset

    def _patch_file_length(self) -> None:
        if not self._seekable:
            return
        self._stream.seek(self._base)
        self._stream.write(_file_header(self._offset))
        self._stream.seek(self._base + self._offset)
        if self._flush_records:
            self._stream.flush()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._stream.flush()


def _file_header(file_length: int) -> bytes:
    h = np.zeros(1, schema.FILE_HEADER)
    h["magic"] = schema.MAGIC
    h["version_major"] = schema.VERSION_MAJOR
    h["version_minor"] = schema.VERSION_MINOR
    h["header_length"] = schema.FILE_HEADER.itemsize
    h["file_length"] = file_length
    return h.tobytes()


def _seekable(stream) -> bool:
    try:
        return bool(stream.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _encode(text: str | bytes) -> bytes:
    return text.encode("utf-8") if isinstance(text, str) else bytes(text)


def _join(parts: Payload) -> bytes:
    """Concatenates a payload given as bytes, numpy arrays or (nested) sequences of them."""
    if parts is None:
        return b""
    if isinstance(parts, (bytes, bytearray, memoryview)):
        return bytes(parts)
    if isinstance(parts, np.ndarray):
        return np.ascontiguousarray(parts).tobytes()
    return b"".join(_join(p) for p in parts)


# --- The convenient writer ------------------------------------------------------------------------

class BundleWriter:
    """Writes one .ireeprof bundle: sessions, chunks, and the header's final length.

    `target` is a path (written through `amdgpu_cli.outputs`: a regular file is replaced only when
    the writer closes without an exception; `atomic=False` writes the path directly, so a crashed
    producer leaves a readable partial bundle), a binary file object (left open), `None` (memory;
    read it with `getvalue()`), or any `ProfileSink`.

        with BundleWriter("out.ireeprof") as w:
            w.begin_session(1, "amdgpu")
            w.chunk("devices", records("devices", physical_device_ordinal=[0, 1], queue_count=1))
            w.end_session()

    `chunk()` and `end_session()` apply to the most recently begun open session unless
    `session_id` is given; sessions may interleave.
    """

    def __init__(self, target: str | os.PathLike | BinaryIO | ProfileSink | None = None, *,
                 atomic: bool = True, check: bool = True):
        self.check = check
        self._path = None
        self._tmp = None
        self._owned = None
        self._memory = None
        self._sessions: dict[int, ChunkMetadata] = {}
        if isinstance(target, ProfileSink):
            self.sink = target
        elif target is None:
            self._memory = io.BytesIO()
            self.sink = FileSink(self._memory)
        elif isinstance(target, (str, os.PathLike)):
            self._path = os.fspath(target)
            if atomic:
                self._tmp = OutputFile(self._path, read=True)
                self._owned = self._tmp.open()
            else:
                self._owned = open(self._path, "w+b")
            self.sink = FileSink(self._owned)
        else:
            self.sink = FileSink(target)

    # --- sessions ---------------------------------------------------------------------------------

    def begin_session(self, session_id: int = 1, name: str | bytes = "", *, stream_id: int = 0,
                      event_id: int = 0, physical_device_ordinal: int = U32_MAX,
                      queue_ordinal: int = U32_MAX) -> None:
        """Writes a SESSION_BEGIN record; `name` is the producer name (e.g. the device id)."""
        if session_id in self._sessions:
            raise ValueError(f"profile session {session_id} is already open")
        meta = ChunkMetadata(SESSION_CONTENT_TYPE, name, session_id, stream_id, event_id,
                             physical_device_ordinal=physical_device_ordinal,
                             queue_ordinal=queue_ordinal)
        self._sessions[session_id] = meta
        self.sink.begin_session(meta)

    def end_session(self, status_code: int = 0, *, session_id: int | None = None) -> None:
        """Writes the SESSION_END record (IREE status code; 0 = OK) with the begin's metadata."""
        session_id = self._current(session_id)
        if session_id not in self._sessions:
            raise ValueError(f"profile session {session_id} is not open")
        self.sink.end_session(self._sessions.pop(session_id), status_code)

    @contextlib.contextmanager
    def session(self, session_id: int = 1, name: str | bytes = "",
                **metadata) -> Iterator["_Session"]:
        """A session ended on exit: with `status_code` as set on the yielded object (default OK),
        or UNKNOWN (2) when the block raises."""
        self.begin_session(session_id, name, **metadata)
        handle = _Session(self, session_id)
        try:
            yield handle
        except BaseException:
            self.end_session(2, session_id=session_id)
            raise
        self.end_session(handle.status_code, session_id=session_id)

    def _current(self, session_id: int | None) -> int:
        if session_id is not None:
            return session_id
        return next(reversed(self._sessions)) if self._sessions else 0

    # --- chunks -----------------------------------------------------------------------------------

    def chunk(self, content_type: str, payload: Payload = None, *, name: str | bytes = "",
              session_id: int | None = None, stream_id: int = 0, event_id: int = 0,
              executable_id: int = 0, command_buffer_id: int = 0,
              physical_device_ordinal: int = U32_MAX, queue_ordinal: int = U32_MAX,
              truncated: bool = False, dropped_record_count: int = 0) -> None:
        """Writes one CHUNK record.

        `content_type` is a suffix of `application/vnd.iree.hal.profile.` (`"dispatch-events"`) or
        a full content-type string containing `/` (unknown types are written as given, unchecked).
        `payload`: bytes, a numpy array of the content type's dtype (record_length 0 is filled in
        as the dtype size), or a sequence of those, concatenated.
        """
        full, ct = _content_type(content_type)
        parts = _prepare(ct, payload)
        if self.check and ct is not None:
            check_payload(ct, parts)
        meta = ChunkMetadata(full, name, self._current(session_id), stream_id, event_id,
                             executable_id, command_buffer_id, physical_device_ordinal,
                             queue_ordinal, schema.CHUNK_FLAG_TRUNCATED if truncated else 0,
                             dropped_record_count)
        self.sink.write(meta, parts)

    # --- finishing --------------------------------------------------------------------------------

    def getvalue(self) -> bytes:
        """The bundle bytes written so far (memory targets only)."""
        if self._memory is None:
            raise ValueError("getvalue() needs a memory BundleWriter (target None)")
        return self._memory.getvalue()

    def close(self) -> None:
        """Flushes and, for path targets, closes and renames the file into place."""
        self.sink.close()
        if self._owned is not None:
            owned, self._owned = self._owned, None
            if self._tmp is not None:
                self._tmp.commit()  # syncs, names and closes the file
                self._tmp = None
            else:
                owned.close()

    def abort(self) -> None:
        """Closes and drops the temporary file of an atomic path target (the path is untouched)."""
        owned, self._owned = self._owned, None
        if self._tmp is not None:
            self._tmp.discard()  # closes the file
            self._tmp = None
        elif owned is not None:
            owned.close()

    def __enter__(self) -> "BundleWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None and self._tmp is not None:
            self.abort()
        else:
            self.close()


class _Session:
    """A handle on one open session of a `BundleWriter` (from `BundleWriter.session()`)."""

    def __init__(self, writer: BundleWriter, session_id: int):
        self.writer = writer
        self.session_id = session_id
        self.status_code = 0

    def chunk(self, content_type: str, payload: Payload = None, **metadata) -> None:
        metadata.setdefault("session_id", self.session_id)
        self.writer.chunk(content_type, payload, **metadata)


def _content_type(content_type: str) -> tuple[str, schema.ContentType | None]:
    ct = schema.BY_SUFFIX.get(content_type) or schema.BY_NAME.get(content_type)
    if ct is not None:
        if ct.kind == schema.ContentKind.SESSION:
            raise ValueError("session records are written by begin_session/end_session")
        return ct.name, ct
    if "/" not in content_type:
        raise ValueError(f"unknown profile content type suffix {content_type!r}")
    return content_type, None


def _prepare(ct: schema.ContentType | None, payload: Payload) -> list:
    """Flattens a payload into parts, filling record_length 0 in arrays of the chunk's dtype."""
    if payload is None:
        return []
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return [bytes(payload)]
    if isinstance(payload, np.ndarray):
        if ct is not None and payload.dtype.names and payload.dtype != ct.dtype:
            # numpy drops padding when it merges structured arrays (np.concatenate); same fields
            # are copied back into the wire layout with zero padding, anything else is an error.
            if ct.dtype.names is None or set(payload.dtype.names) != set(ct.dtype.names):
                raise TypeError(f"{ct.suffix} records need the schema dtype for {ct.suffix}, "
                                f"not {payload.dtype}")
            wire = np.zeros(payload.shape, ct.dtype)
            for field in ct.dtype.names:
                wire[field] = payload[field]
            payload = wire
        if payload.dtype.names and "record_length" in payload.dtype.names and len(payload) \
                and not payload["record_length"].all():
            payload = payload.copy()
            payload["record_length"][payload["record_length"] == 0] = payload.dtype.itemsize
        return [payload]
    out: list = []
    for p in payload:
        out.extend(_prepare(ct, p))
    return out


def check_payload(ct: schema.ContentType, parts: Payload) -> None:
    """Raises ValueError when a payload breaks the typed-record rules IREE's reader enforces."""
    if ct.kind == schema.ContentKind.FIXED and isinstance(parts, list) and all(
            isinstance(p, np.ndarray) and p.dtype == ct.dtype for p in parts):
        for p in parts:  # whole arrays: one vectorized length check
            if len(p) and (p["record_length"] != ct.dtype.itemsize).any():
                raise ValueError(f"{ct.suffix} record_length must be {ct.dtype.itemsize}")
        return
    data = _join(parts)
    size = ct.dtype.itemsize
    if ct.kind == schema.ContentKind.TRACE:
        if len(data) < size:
            raise ValueError("executable trace payload is shorter than its header")
        head = np.frombuffer(data[:size], ct.dtype)[0]
        if int(head["record_length"]) != size or int(head["data_length"]) != len(data) - size:
            raise ValueError("executable trace header lengths do not match the payload")
        return
    o = 0
    while o < len(data):
        if len(data) - o < size:
            raise ValueError(f"{ct.suffix} payload ends inside a record at byte {o}")
        head = np.frombuffer(data[o:o + size], ct.dtype)[0]
        length = int(head["record_length"])
        if length < size or length > len(data) - o:
            raise ValueError(f"{ct.suffix} record at byte {o} has invalid record_length {length}")
        if ct.kind == schema.ContentKind.VARIABLE:
            want = size + schema.variable_tail_length(ct, head)
            if length != want:
                raise ValueError(f"{ct.suffix} record at byte {o}: record_length {length} but its "
                                 f"length fields need {want}")
        o += length


# --- Record builders ------------------------------------------------------------------------------

# Fields IREE writes as "absent" when a record does not use them (reference section 2.3).
_ABSENT_MAX = ("physical_device_ordinal", "queue_ordinal", "command_index", "function_ordinal",
               "block_ordinal", "block_command_ordinal", "source_ordinal", "target_ordinal",
               "target_block_ordinal", "alternate_block_ordinal")
_ABSENT_BY_SUFFIX = {
    "host-execution-events": {"status_code": U32_MAX},
    "memory-events": {"result": U32_MAX},
    "command-region-events": {"index": -1, "next_index": -1},
}


def records(content_type: str, n: int | None = None, **columns) -> np.ndarray:
    """Fixed-layout records of one content type as an array of the schema's dtype.

    Each keyword is a field name with a scalar (broadcast to every row) or one value per row; the
    row count is `n` or the length of the per-row columns. `record_length` is the dtype size;
    fields not given are 0, except IREE's "absent" sentinels: U32 MAX for ordinals and indices
    (physical_device_ordinal, queue_ordinal, command_index, function_ordinal, block and
    source/target ordinals), host-execution status_code and memory result, -1 for command-region
    index/next_index. For variable-length types this builds the fixed head only (see the helpers).
    """
    ct = schema.BY_SUFFIX.get(content_type) or schema.BY_NAME.get(content_type)
    if ct is None or ct.dtype is None:
        raise ValueError(f"no record layout for content type {content_type!r}")
    dtype = ct.dtype
    for key in columns:
        if key not in dtype.names:
            raise KeyError(f"{ct.suffix} records have no field {key!r}")
    if n is None:
        n = 1
        for key, value in columns.items():
            sub = dtype.fields[key][0].shape
            shape = np.shape(value)
            if len(shape) > len(sub):
                n = shape[0]
                break
    out = np.zeros(n, dtype)
    out["record_length"] = dtype.itemsize
    for key in _ABSENT_MAX:
        if key in dtype.names:
            out[key] = U32_MAX
    for key, value in _ABSENT_BY_SUFFIX.get(ct.suffix, {}).items():
        out[key] = value
    for key, value in columns.items():
        out[key] = value
    return out


def record(content_type: str, **fields) -> np.ndarray:
    """One fixed-layout record (a length-1 array); see `records`."""
    return records(content_type, 1, **fields)


def _variable(content_type: str, tail: bytes, **fields) -> bytes:
    head = record(content_type, **fields)
    head["record_length"] = head.dtype.itemsize + len(tail)
    ct = schema.BY_SUFFIX[content_type]
    want = schema.variable_tail_length(ct, head[0])
    if want != len(tail):
        raise ValueError(f"{content_type}: length fields say {want} trailing bytes, "
                         f"got {len(tail)}")
    return head.tobytes() + tail


def device_record(physical_device_ordinal: int, queue_count: int, *,
                  uuid: bytes | None = None) -> np.ndarray:
    """A `devices` record; the UUID flag is set when a 16-byte `uuid` is given."""
    fields = dict(physical_device_ordinal=physical_device_ordinal, queue_count=queue_count)
    if uuid is not None:
        if len(uuid) != 16:
            raise ValueError("physical device uuid must be 16 bytes")
        fields.update(flags=schema.Flags.DEVICE_UUID,
                      physical_device_uuid=np.frombuffer(bytes(uuid), np.uint8))
    return record("devices", **fields)


def executable_record(executable_id: int, function_count: int, *,
                      code_object_hash: Sequence[int] | None = None) -> np.ndarray:
    """An `executables` record; the hash flag is set when `code_object_hash` is given."""
    fields = dict(executable_id=executable_id, function_count=function_count)
    if code_object_hash is not None:
        fields.update(flags=schema.Flags.CODE_OBJECT_HASH, code_object_hash=list(code_object_hash))
    return record("executables", **fields)


def function_record(executable_id: int, function_ordinal: int, name: str | bytes = "", *,
                    constant_count: int = 0, binding_count: int = 0, parameter_count: int = 0,
                    workgroup_size: Sequence[int] = (0, 0, 0),
                    function_hash: Sequence[int] | None = None,
                    code_object_hash: Sequence[int] | None = None,
                    flags: int | None = None) -> bytes:
    """An `executable-functions` record + name.

    The FUNCTION_HASH flag is set when a hash is given, or computed from `code_object_hash` and
    this record's own fields (as IREE's AMDGPU driver does).
    """
    name = _encode(name)
    if function_hash is None and code_object_hash is not None:
        function_hash = _function_hash(code_object_hash, function_ordinal, constant_count,
                                       binding_count, workgroup_size, name)
    if flags is None:
        flags = schema.Flags.FUNCTION_HASH if function_hash is not None else 0
    return _variable("executable-functions", name, flags=flags, executable_id=executable_id,
                     function_ordinal=function_ordinal, constant_count=constant_count,
                     binding_count=binding_count, parameter_count=parameter_count,
                     workgroup_size=list(workgroup_size), name_length=len(name),
                     function_hash=list(function_hash or (0, 0)))


def code_object_record(executable_id: int, data: bytes, *, code_object_id: int | None = None,
                       code_object_hash: Sequence[int] | None = None,
                       flags: int | None = None) -> bytes:
    """An `executable-code-objects` record + the exact image bytes.

    `code_object_id` defaults to `executable_id` (IREE's AMDGPU convention); the hash defaults to
    `code_object_hash(data)` with the CODE_OBJECT_HASH flag.
    """
    data = bytes(data)
    if code_object_hash is None:
        code_object_hash = _code_object_hash(data)
    if flags is None:
        flags = schema.Flags.CODE_OBJECT_HASH
    return _variable("executable-code-objects", data, flags=flags, executable_id=executable_id,
                     code_object_id=executable_id if code_object_id is None else code_object_id,
                     data_length=len(data), code_object_hash=list(code_object_hash))


def counter_set_record(counter_set_id: int, physical_device_ordinal: int, name: str | bytes, *,
                       counter_count: int, sample_value_count: int, flags: int = 0) -> bytes:
    """A `counter-sets` record + name."""
    name = _encode(name)
    return _variable("counter-sets", name, flags=flags, counter_set_id=counter_set_id,
                     physical_device_ordinal=physical_device_ordinal, counter_count=counter_count,
                     sample_value_count=sample_value_count, name_length=len(name))


def counter_record(counter_set_id: int, counter_ordinal: int, physical_device_ordinal: int, *,
                   block: str | bytes, name: str | bytes, description: str | bytes = "",
                   unit: int = 1, sample_value_offset: int = 0, sample_value_count: int = 1,
                   flags: int = schema.Flags.COUNTER_RAW) -> bytes:
    """A `counters` record + block name, name and description (in that order)."""
    block, name, description = _encode(block), _encode(name), _encode(description)
    return _variable("counters", block + name + description, flags=flags, unit=unit,
                     physical_device_ordinal=physical_device_ordinal,
                     counter_set_id=counter_set_id, counter_ordinal=counter_ordinal,
                     sample_value_offset=sample_value_offset,
                     sample_value_count=sample_value_count, block_name_length=len(block),
                     name_length=len(name), description_length=len(description))


def counter_sample_record(values: Sequence[int], **fields) -> bytes:
    """A `counter-samples` record + its u64 values; other fields as keywords (see `records`)."""
    tail = np.asarray(values, dtype=np.uint64).astype("<u8").tobytes()
    return _variable("counter-samples", tail, sample_value_count=len(values), **fields)


def metric_source_record(source_id: int, physical_device_ordinal: int, name: str | bytes, *,
                         metric_count: int, device_class: int = 2, source_kind: int = 0,
                         source_revision: int = 0, flags: int = 0) -> bytes:
    """A `device-metric-sources` record + name (device_class 2 = gpu)."""
    name = _encode(name)
    return _variable("device-metric-sources", name, flags=flags, source_id=source_id,
                     physical_device_ordinal=physical_device_ordinal, device_class=device_class,
                     source_kind=source_kind, source_revision=source_revision,
                     metric_count=metric_count, name_length=len(name))


def metric_descriptor_record(source_id: int, metric_id: int, name: str | bytes,
                             description: str | bytes = "", *, unit: int = 0, value_kind: int = 2,
                             semantic: int = 1, plot_hint: int = 1, flags: int = 0) -> bytes:
    """A `device-metric-descriptors` record + name and description (value_kind 2 = u64)."""
    name, description = _encode(name), _encode(description)
    return _variable("device-metric-descriptors", name + description, flags=flags,
                     source_id=source_id, metric_id=metric_id, unit=unit, value_kind=value_kind,
                     semantic=semantic, plot_hint=plot_hint, name_length=len(name),
                     description_length=len(description))


def metric_value_bits(value: int | float) -> int:
    """The u64 `value_bits` of a metric value: two's complement for ints, IEEE bits for floats."""
    if isinstance(value, float):
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    return int(value) & U64_MAX


def metric_sample_record(values: Sequence[tuple] | np.ndarray, **fields) -> bytes:
    """A `device-metric-samples` record + values.

    `values`: an array of `schema.METRIC_VALUE`, or (metric_id, value[, flags]) tuples whose value
    is an int (i64/u64) or a float (f64), encoded with `metric_value_bits`.
    """
    if isinstance(values, np.ndarray):
        table = values.astype(schema.METRIC_VALUE)
    else:
        table = np.zeros(len(values), schema.METRIC_VALUE)
        for i, v in enumerate(values):
            table[i]["metric_id"] = v[0]
            table[i]["value_bits"] = metric_value_bits(v[1])
            table[i]["flags"] = v[2] if len(v) > 2 else 0
    return _variable("device-metric-samples", table.tobytes(), value_count=len(table), **fields)


def executable_trace_payload(data: bytes, **fields) -> bytes:
    """An `executable-traces` chunk payload: one 88-byte header then the raw trace bytes."""
    data = bytes(data)
    head = record("executable-traces", data_length=len(data), **fields)
    return head.tobytes() + data


# --- Hashes ---------------------------------------------------------------------------------------

HASH_KEYS = ((0x0706050403020100, 0x0F0E0D0C0B0A0908), (0x1716151413121110, 0x1F1E1D1C1B1A1918))


def hash128(data: bytes) -> tuple[int, int]:
    """IREE's 128-bit profile identity: SipHash-2-4 under its two fixed keys."""
    return tuple(siphash24(data, k0, k1) for k0, k1 in HASH_KEYS)


def code_object_hash(data: bytes) -> tuple[int, int]:
    """`code_object_hash` of an exact loaded code-object image."""
    return hash128(data)


def function_hash(code_object_hash: Sequence[int], function_ordinal: int, constant_count: int,
                  binding_count: int, workgroup_size: Sequence[int],
                  name: str | bytes) -> tuple[int, int]:
    """`function_hash`: the code-object hash, ordinal, u16 constant/binding counts, workgroup size
    and length-prefixed name, little-endian, under `hash128`."""
    name = _encode(name)
    blob = struct.pack("<QQIHH3IQ", code_object_hash[0], code_object_hash[1], function_ordinal,
                       constant_count, binding_count, *workgroup_size, len(name)) + name
    return hash128(blob)


# The builders' parameters are named after these functions; they call them through these aliases.
_code_object_hash = code_object_hash
_function_hash = function_hash


__all__ = [
    "ChunkMetadata", "ProfileSink", "FileSink", "BundleWriter", "check_payload",
    "records", "record", "device_record", "executable_record", "function_record",
    "code_object_record", "counter_set_record", "counter_record", "counter_sample_record",
    "metric_source_record", "metric_descriptor_record", "metric_value_bits",
    "metric_sample_record", "executable_trace_payload", "siphash24", "hash128",
    "code_object_hash", "function_hash", "hash_hex", "HASH_KEYS", "SESSION_CONTENT_TYPE",
]

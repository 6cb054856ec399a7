"""Reads .ireereplay v2.0 files: the header, the record chain, and payloads on demand.

`ReplayFile.open(path)` maps the file (no copy) and checks the 24-byte header; `records()` walks
the records in file order and checks each one as IREE's reader does (file_reader.c: the checks,
their order, their status and message), plus the contiguous sequence ordinals every IREE consumer
requires. A record that breaks the chain raises `ReplayFormatError` when the walk reaches it, so
a caller that streams sees every record before it. Parsing stops at the header's `file_length`,
or at the real end of the file when that is 0 (a capture that never closed).

`payload_layout()` / `decode_payload()` check a payload against its type exactly as
iree-dump-replay does (hal/replay/dump.c): the same checks in the same order, the same status
(DATA_LOSS for lengths, OUT_OF_RANGE where a count or offset overflows 64 bits) and message.
Layouts come from `schema` (PAYLOADS, TAILS); nothing here redeclares one. Payload bytes are
never copied: byte parts are memoryviews into the mapping, valid until `close()`.

Sources: ../shared/reference/ireereplay.md §1-§3 and §6; IREE runtime/src/iree/hal/replay/
file_reader.c (container checks), dump.c (payload checks), execute.c (metadata checks).
"""

from __future__ import annotations

import mmap
import os
import struct
from collections import namedtuple

from amdgpu_cli.errors import AmdgpuCliError, InputFileError
from amdgpu_cli.replay import schema
from amdgpu_cli.replay.schema import PAYLOADS, RECORD_HEADER, RECORD_HEADER_SIZE, PayloadType

U64_MAX = schema.U64_MAX
_KNOWN_RECORD_TYPES = frozenset((1, 2, 3, 4, 5))  # NONE (0) is not a known type to IREE


class ReplayFormatError(AmdgpuCliError):
    """A replay file that breaks the format; `status` is the IREE status IREE's tools give the
    same failure and the message is IREE's text. `offset` is the file offset of the record at
    fault (None for the file header)."""

    status = "DATA_LOSS"

    def __init__(self, message: str, *, status: str | None = None, offset: int | None = None):
        super().__init__(message, status=status)
        self.offset = offset


# One record's header fields and where its payload starts (payload_offset: the absolute file
# offset). A collections.namedtuple: typing's costs `amdgpu-replay dump` start-up time.
Record = namedtuple("Record", (
    "file_offset", "record_length", "payload_length", "sequence_ordinal", "thread_id",
    "device_id", "object_id", "related_object_id", "header_length", "record_type",
    "record_flags", "payload_type", "object_type", "operation_code", "status_code",
    "payload_offset"))


_make_record = Record._make


class ReplayFile:
    """One .ireereplay file, mapped read-only. Use as a context manager or call `close()`."""

    def __init__(self, data, *, path: str | None = None, keepalive=None):
        self.path = path
        self._keepalive = keepalive
        self._data = data  # bytes-like supporting the buffer protocol
        self._view = memoryview(data)
        self.size = len(self._view)
        try:
            self._parse_header()
        except ReplayFormatError:
            self._view.release()  # so that open() can unmap the file
            raise

    @classmethod
    def open(cls, path: str | os.PathLike) -> "ReplayFile":
        path = os.fspath(path)
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size == 0:
                    # IREE fails to map an empty file (INVALID_ARGUMENT) before reading it.
                    raise InputFileError(f"failed to map file '{path}': the file is empty",
                                         status="INVALID_ARGUMENT")
                mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except FileNotFoundError:
            raise InputFileError(f"failed to open file '{path}'") from None
        except IsADirectoryError:
            raise InputFileError(f"failed to map file '{path}': is a directory") from None
        except PermissionError:
            raise InputFileError(f"failed to open file '{path}': permission denied",
                                 status="PERMISSION_DENIED") from None
        except (OSError, ValueError) as e:
            raise InputFileError(f"failed to read '{path}': {getattr(e, 'strerror', None) or e}",
                                 status="UNAVAILABLE") from None
        try:
            return cls(mm, path=path, keepalive=mm)
        except BaseException:
            mm.close()
            raise

    @classmethod
    def from_bytes(cls, data) -> "ReplayFile":
        return cls(bytes(data))

    def close(self) -> None:
        try:
            self._view.release()
        except BufferError:  # views of it still held (payloads); the GC releases them later
            pass
        if isinstance(self._keepalive, mmap.mmap):
            try:
                self._keepalive.close()
            except BufferError:  # payload views still exported; the GC unmaps it later
                pass
        self._keepalive = None

    def __enter__(self) -> "ReplayFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def data(self) -> memoryview:
        """The whole file (a view into the mapping)."""
        return self._view

    def _parse_header(self) -> None:
        size = self.size
        if size < schema.FILE_HEADER_SIZE:
            raise ReplayFormatError("replay file is too small for header")
        magic, major, minor, header_length, flags, file_length = \
            schema.FILE_HEADER.unpack_from(self._view, 0)
        if magic != schema.MAGIC:
            raise ReplayFormatError("invalid IREE HAL replay file magic",
                                    status="INVALID_ARGUMENT")
        if major != schema.VERSION_MAJOR:
            raise ReplayFormatError("unsupported IREE HAL replay file version",
                                    status="INVALID_ARGUMENT")
        if header_length < schema.FILE_HEADER_SIZE:
            raise ReplayFormatError("replay file header length is too small")
        if header_length > size:
            raise ReplayFormatError("replay file header extends past file end")
        if flags != 0:
            raise ReplayFormatError("replay file reserved flags must be zero")
        if file_length != 0 and file_length < header_length:
            raise ReplayFormatError("replay file length is before the first record")
        if file_length > size:
            raise ReplayFormatError("replay file length extends past file contents")
        self.version_major = major
        self.version_minor = minor
        self.header_length = header_length
        self.flags = flags
        self.file_length = file_length
        self.end = file_length or size

    def records(self):
        """Every record in file order, checked as IREE's reader checks them; raises
        ReplayFormatError at the first record that breaks the chain."""
        data = self._view
        end = self.end
        offset = self.header_length
        unpack = RECORD_HEADER.unpack_from
        ordinal = 0
        while offset < end:
            if end - offset < RECORD_HEADER_SIZE:
                raise ReplayFormatError("replay record is too small for header", offset=offset)
            values = unpack(data, offset)
            (record_length, payload_length, sequence, _thread, _dev, _obj, _rel, header_length,
             record_type, record_flags, _pt, _ot, _op, _st, reserved0, reserved1) = values
            if record_flags & ~schema.RECORD_FLAG_OPTIONAL:
                raise ReplayFormatError("replay record reserved flags must be zero",
                                        offset=offset)
            if record_type not in _KNOWN_RECORD_TYPES and not (
                    record_flags & schema.RECORD_FLAG_OPTIONAL):
                raise ReplayFormatError("unknown required replay record type",
                                        status="UNIMPLEMENTED", offset=offset)
            if reserved0 or reserved1:
                raise ReplayFormatError("replay record reserved fields must be zero",
                                        offset=offset)
            if record_length > end - offset:
                raise ReplayFormatError("replay record extends past file end", offset=offset)
            if header_length < RECORD_HEADER_SIZE or header_length > record_length:
                raise ReplayFormatError("replay record header length is invalid",
                                        offset=offset)
            if payload_length != record_length - header_length:
                raise ReplayFormatError("replay record payload length does not match",
                                        offset=offset)
            if sequence != ordinal:
                raise ReplayFormatError("replay record sequence ordinal mismatch",
                                        offset=offset)
            yield _make_record((offset, *values[:14], offset + header_length))
            offset += record_length
            ordinal += 1

    def payload(self, record: Record) -> memoryview:
        """The record's payload bytes (a view into the mapping, no copy)."""
        start = record.payload_offset
        return self._view[start:start + record.payload_length]


# -- payload checks ------------------------------------------------------------------------------
# How iree-dump-replay checks each payload type, and the words its messages use:
#   exact:   length must equal the fixed struct          "replay payload type N has X bytes; ..."
#   extends: one byte part that must fit (trailing bytes allowed) "<what> extends past record"
#   single:  one byte part; fixed + part == length exactly        "<what> length mismatch"
#   layout:  several parts; counts and sums checked in 64 bits    "<what> count/length overflow",
#            "<what> length mismatch"
_EXACT, _EXTENDS, _SINGLE, _LAYOUT, _PREPARE, _SCOPE = range(6)

_CHECKS: dict[int, tuple[int, str, str]] = {
    # payload type: (kind, "is short" message subject, message subject for the tail)
    PayloadType.BUFFER_OBJECT: (_EXACT, "", ""),
    PayloadType.ALLOCATOR_ALLOCATE_BUFFER: (_EXACT, "", ""),
    PayloadType.BUFFER_RANGE: (_EXACT, "", ""),
    PayloadType.COMMAND_BUFFER_OBJECT: (_EXACT, "", ""),
    PayloadType.SEMAPHORE_OBJECT: (_EXACT, "", ""),
    PayloadType.COMMAND_BUFFER_COPY_BUFFER: (_EXACT, "", ""),
    PayloadType.EVENT_OBJECT: (_EXACT, "", ""),
    PayloadType.COMMAND_BUFFER_EVENT: (_EXACT, "", ""),
    PayloadType.ALLOCATOR_IMPORT_BUFFER: (
        _EXTENDS, "replay import buffer payload", "replay import buffer data"),
    PayloadType.BUFFER_RANGE_DATA: (
        _EXTENDS, "replay buffer range data payload", "replay buffer range data"),
    PayloadType.EXECUTABLE_CACHE_OBJECT: (
        _EXTENDS, "replay executable cache payload", "replay executable cache identifier"),
    PayloadType.FILE_OBJECT: (_SINGLE, "replay file object payload", "replay file object payload"),
    PayloadType.COMMAND_BUFFER_FILL_BUFFER: (
        _SINGLE, "replay command buffer fill payload", "replay command buffer fill payload"),
    PayloadType.COMMAND_BUFFER_UPDATE_BUFFER: (
        _SINGLE, "replay command buffer update payload", "replay command buffer update payload"),
    PayloadType.REPLAY_SCOPE: (_SCOPE, "replay scope payload", "replay scope payload"),
    PayloadType.EXECUTABLE_PREPARE: (
        _PREPARE, "replay executable prepare payload", "replay executable prepare payload"),
    PayloadType.DISPATCH: (_LAYOUT, "replay dispatch payload", "replay dispatch payload"),
    PayloadType.DEVICE_QUEUE_EXECUTE: (
        _LAYOUT, "replay queue execute payload", "replay queue execute payload"),
    PayloadType.DEVICE_QUEUE_ALLOCA: (
        _LAYOUT, "replay queue alloca payload", "replay queue alloca payload"),
    PayloadType.DEVICE_QUEUE_DEALLOCA: (
        _LAYOUT, "replay queue dealloca payload", "replay queue payload"),
    PayloadType.DEVICE_QUEUE_FILL: (_LAYOUT, "replay queue fill payload", "replay queue payload"),
    PayloadType.DEVICE_QUEUE_UPDATE: (
        _LAYOUT, "replay queue update payload", "replay queue payload"),
    PayloadType.DEVICE_QUEUE_COPY: (_LAYOUT, "replay queue copy payload", "replay queue payload"),
    PayloadType.DEVICE_QUEUE_READ: (_LAYOUT, "replay queue read payload", "replay queue payload"),
    PayloadType.DEVICE_QUEUE_WRITE: (
        _LAYOUT, "replay queue write payload", "replay queue payload"),
    PayloadType.COMMAND_BUFFER_EXECUTION_BARRIER: (
        _LAYOUT, "replay execution barrier payload", "replay execution barrier payload"),
    PayloadType.COMMAND_BUFFER_WAIT_EVENTS: (
        _LAYOUT, "replay wait events payload", "replay wait events payload"),
}

# Each tail part: (name, length field, element size or 0 for a byte count).


def _parse_tails():
    parts = {}
    for code, tail in schema.TAILS.items():
        out = []
        for name, spec in tail:
            if spec.startswith("count:"):
                _, field, size = spec.split(":")
                out.append((name, field, int(size)))
            else:
                out.append((name, spec, 0))
        parts[code] = tuple(out)
    return parts


_TAIL_PARTS = _parse_tails()
_ELEMENTS = {
    "wait_semaphores": schema.TIMEPOINT, "signal_semaphores": schema.TIMEPOINT,
    "bindings": schema.BUFFER_REF, "memory_barriers": schema.MEMORY_BARRIER,
    "buffer_barriers": schema.BUFFER_BARRIER,
}


def payload_layout(payload_type: int, data) -> tuple[dict, dict]:
    """Checks `data` as a payload of `payload_type` exactly as iree-dump-replay does and
    returns (fixed fields, parts): parts maps each tail part's name to (offset in the payload,
    byte size, element size or 0 for bytes), in file order. An unknown payload type or NONE
    gives ({}, {})."""
    check = _CHECKS.get(payload_type)
    if check is None:
        return {}, {}
    kind, short_subject, subject = check
    layout = PAYLOADS[payload_type]
    n = len(data)
    fixed = layout.size
    if kind == _EXACT:
        if n != fixed:
            raise ReplayFormatError(
                f"replay payload type {payload_type} has {n} bytes; expected {fixed}")
        return layout.unpack(data), {}
    if n < fixed:
        raise ReplayFormatError(f"{short_subject} is short")
    fields = layout.unpack(data)
    tail = _TAIL_PARTS[payload_type]
    if kind == _EXTENDS:
        name, field, _ = tail[0]
        length = fields[field]
        if length > n - fixed:
            raise ReplayFormatError(f"{subject} extends past record")
        return fields, {name: (fixed, length, 0)}
    if kind == _SCOPE:
        if fields["flags"] or fields["reserved0"] or fields["reserved1"]:
            raise ReplayFormatError("replay scope payload reserved fields must be zero")
        length = fields["name_length"]
        if fixed + length != n or length == 0:
            raise ReplayFormatError("replay scope payload name length mismatch")
        return fields, {"name": (fixed, length, 0)}
    if kind == _SINGLE:
        name, field, _ = tail[0]
        length = fields[field]
        if fixed + length != n:
            raise ReplayFormatError(f"{subject} length mismatch")
        return fields, {name: (fixed, length, 0)}
    if kind == _PREPARE:
        return fields, _prepare_layout(fields, n)
    # _LAYOUT: element counts times sizes must fit 64 bits (OUT_OF_RANGE otherwise); every sum
    # but the last must too; the last sum must equal the payload length (DATA_LOSS).
    sizes = []
    for name, field, element in tail:
        length = fields[field] * element if element else fields[field]
        if element and length > U64_MAX:
            raise ReplayFormatError(f"{subject} count overflow", status="OUT_OF_RANGE")
        sizes.append(length)
    parts = {}
    offset = fixed
    last = len(tail) - 1
    for i, ((name, field, element), length) in enumerate(zip(tail, sizes)):
        parts[name] = (offset, length, element)
        offset += length
        if i < last and offset > U64_MAX:
            raise ReplayFormatError(f"{subject} length overflow", status="OUT_OF_RANGE")
    if offset > U64_MAX or offset != n:
        raise ReplayFormatError(f"{subject} length mismatch")
    return fields, parts


def _prepare_layout(fields: dict, n: int) -> dict:
    constant_bytes = fields["constant_count"] * 4
    if constant_bytes > U64_MAX:
        raise ReplayFormatError("replay executable prepare payload overflow",
                                status="OUT_OF_RANGE")
    format_offset = PAYLOADS[PayloadType.EXECUTABLE_PREPARE].size
    data_offset = format_offset + fields["executable_format_length"]
    constants_offset = data_offset + fields["executable_data_length"]
    metadata_offset = constants_offset + constant_bytes
    total = metadata_offset + fields["executable_metadata_length"]
    # Any 64-bit overflow along the way fails the same "mismatch" check in IREE.
    if total != n:
        raise ReplayFormatError("replay executable prepare payload length mismatch")
    return {"format": (format_offset, fields["executable_format_length"], 0),
            "data": (data_offset, fields["executable_data_length"], 0),
            "constants": (constants_offset, constant_bytes, 4),
            "metadata": (metadata_offset, fields["executable_metadata_length"], 0)}


def metadata_header(data) -> dict | None:
    """The executable metadata header (the tail of executable_prepare), checked as the dumper
    checks it; None when the metadata is empty."""
    n = len(data)
    if n < schema.METADATA_HEADER.size:
        if n == 0:
            return None
        raise ReplayFormatError("replay executable metadata is too short")
    header = schema.METADATA_HEADER.unpack(data)
    if header["reserved1"]:
        raise ReplayFormatError("replay executable metadata reserved fields must be zero")
    expected = (schema.METADATA_HEADER.size
                + header["function_count"] * schema.METADATA_FUNCTION.size
                + header["parameter_count"] * schema.METADATA_PARAMETER.size
                + header["function_name_storage_length"])
    # Overflowing 64 bits anywhere fails the same check in IREE.
    if expected != n:
        raise ReplayFormatError("replay executable metadata length mismatch")
    return header


def decode_payload(payload_type: int, data: memoryview) -> dict:
    """The payload's fixed fields (schema.PAYLOADS[...].unpack) plus each tail part of
    schema.TAILS: list parts as lists (dicts for structs, ints for event ids and constants),
    byte parts as memoryviews; every part also gives `<part>_offset`, its offset from the
    payload start. Checks are the dumper's (see payload_layout); raises ReplayFormatError."""
    fields, parts = payload_layout(payload_type, data)
    view = data if isinstance(data, memoryview) else memoryview(data)
    for name, (offset, length, element) in parts.items():
        fields[name + "_offset"] = offset
        if not element:
            fields[name] = view[offset:offset + length]
        elif name == "constants":
            fields[name] = list(view[offset:offset + length].cast("B").cast("I")) \
                if length else []
        elif name == "events":
            fields[name] = [v for (v,) in struct.iter_unpack("<Q", view[offset:offset + length])]
        else:
            layout = _ELEMENTS[name]
            fields[name] = [layout.unpack(view, offset + i * element)
                            for i in range(length // element)]
    return fields


def decode_metadata(data) -> list[dict]:
    """The functions of an executable_prepare metadata tail, in order: each a dict with name
    (str), name_bytes, flags, workgroup_size, constant_count, binding_count, parameter_count and
    parameters (dicts with offset, flags, type, size, reserved0). Structural checks are
    execute.c's: sizes, reserved header field, per-function counts against the totals, names
    consuming the whole name storage. Empty names and non-zero parameter reserved0 are left to
    the caller (IREE checks those per function, interleaved with the executable lookup)."""
    view = data if isinstance(data, memoryview) else memoryview(data)
    header = metadata_header(view)
    if header is None:
        raise ReplayFormatError("replay executable metadata is too short")
    function_count = header["function_count"]
    parameter_count = header["parameter_count"]
    names_length = header["function_name_storage_length"]
    function_base = schema.METADATA_HEADER.size
    parameter_base = function_base + function_count * schema.METADATA_FUNCTION.size
    name_base = parameter_base + parameter_count * schema.METADATA_PARAMETER.size
    functions = []
    parameter_index = 0
    name_offset = 0
    for i in range(function_count):
        function = schema.METADATA_FUNCTION.unpack(view, function_base + i * 32)
        count = function["parameter_count"]
        name_length = function["name_length"]
        if count > parameter_count - parameter_index or name_length > names_length - name_offset:
            raise ReplayFormatError("replay executable metadata count mismatch")
        name_bytes = bytes(view[name_base + name_offset:name_base + name_offset + name_length])
        name_offset += name_length
        function["name_bytes"] = name_bytes
        function["name"] = name_bytes.decode("utf-8", "replace")
        function["parameters"] = [
            schema.METADATA_PARAMETER.unpack(view, parameter_base + (parameter_index + j) * 8)
            for j in range(count)]
        parameter_index += count
        functions.append(function)
    if parameter_index != parameter_count or name_offset != names_length:
        raise ReplayFormatError("replay executable metadata count mismatch")
    return functions

"""Hand-made .ireereplay files for the dump tests: one record of every payload type (with
non-trivial field values) and the edge cases of ../shared/reference/ireereplay.md §6.

Everything is built with amdgpu_cli.replay.writer and schema, so a layout mistake there shows
up as a difference from iree-dump-replay's output on these files.
"""

from __future__ import annotations

from amdgpu_cli.replay import schema
from amdgpu_cli.replay.schema import PayloadType as P, RecordType as R
from amdgpu_cli.replay.writer import buffer_refs, file_header, payload, record_bytes, timepoints

ANY = schema.U64_MAX


def container(records: list[bytes], *, file_length: int | None = None, trailing: bytes = b"",
              header: bytes | None = None) -> bytes:
    body = b"".join(records)
    head = header if header is not None else file_header(0)
    total = len(head) + len(body)
    if header is None:
        head = file_header(total if file_length is None else file_length)
    return head + body + trailing


def _ref(buffer_id=0, offset=0, length=0, slot=0):
    return {"buffer_id": buffer_id, "offset": offset, "length": length, "buffer_slot": slot}


def _alloc(**more):
    fields = {"allocation_size": 4096, "queue_affinity": ANY, "min_alignment": 64,
              "usage": 0x0B000C03, "type": 0x32, "access": 7}
    fields.update(more)
    return fields


def every_payload() -> list[tuple[int, int, int, bytes]]:
    """(record type, op code, payload type, payload) for every payload type, in code order."""
    waits = timepoints([(8, 1), (9, 3)])
    signals = timepoints([(10, 2)])
    binding_table = buffer_refs([_ref(6, 0, 128), _ref(7, 64, 512, 0)])
    out = [
        (R.OBJECT, 0, P.BUFFER_OBJECT, payload(P.BUFFER_OBJECT, {
            "allocation_size": 1024, "byte_offset": 16, "byte_length": 1000,
            "queue_affinity": ANY, "placement_flags": 1, "memory_type": 0x30,
            "allowed_usage": 0x0B000C03, "allowed_access": 7})),
        (R.OPERATION, 102, P.ALLOCATOR_ALLOCATE_BUFFER,
         payload(P.ALLOCATOR_ALLOCATE_BUFFER, _alloc())),
        (R.OPERATION, 200, P.BUFFER_RANGE, payload(P.BUFFER_RANGE, {
            "byte_offset": 8, "byte_length": 256, "mapping_mode": 1, "memory_access": 6})),
        (R.OPERATION, 201, P.BUFFER_RANGE_DATA, payload(P.BUFFER_RANGE_DATA, {
            "byte_offset": 0, "byte_length": 16, "data_length": 12, "memory_access": 6},
            bytes(range(12)))),
        (R.OPERATION, 7, P.COMMAND_BUFFER_OBJECT, payload(P.COMMAND_BUFFER_OBJECT, {
            "mode": 0x11, "command_categories": 3, "queue_affinity": ANY,
            "binding_capacity": 3})),
        (R.OPERATION, 9, P.EXECUTABLE_CACHE_OBJECT, payload(P.EXECUTABLE_CACHE_OBJECT, {
            "identifier_length": 5}, b"cache")),
        (R.OPERATION, 402, P.EXECUTABLE_PREPARE, _prepare()),
        (R.OPERATION, 21, P.DISPATCH, payload(P.DISPATCH, {
            "executable_id": 4, "queue_affinity": 1, "function_ordinal": 2, "flags": 0x10,
            "workgroup_size": [64, 1, 1], "workgroup_count": [3, 2, 1],
            "workgroup_count_ref": _ref(0, 8, 12, 1), "dynamic_workgroup_local_memory": 1024,
            "wait_semaphore_count": 2, "signal_semaphore_count": 1, "constants_length": 10,
            "binding_count": 2}, waits, signals, b"\x01" * 10, binding_table)),
        (R.OPERATION, 22, P.DEVICE_QUEUE_EXECUTE, payload(P.DEVICE_QUEUE_EXECUTE, {
            "command_buffer_id": 5, "queue_affinity": ANY, "flags": 0,
            "wait_semaphore_count": 2, "signal_semaphore_count": 1, "binding_count": 2},
            waits, signals, binding_table)),
        (R.OPERATION, 11, P.SEMAPHORE_OBJECT, payload(P.SEMAPHORE_OBJECT, {
            "queue_affinity": ANY, "initial_value": 5, "flags": 0xA})),
        (R.OPERATION, 311, P.COMMAND_BUFFER_COPY_BUFFER, payload(P.COMMAND_BUFFER_COPY_BUFFER, {
            "source_ref": _ref(6, 0, 64), "target_ref": _ref(0, 16, 64, 2), "flags": 3})),
        (R.OPERATION, 13, P.DEVICE_QUEUE_ALLOCA, payload(P.DEVICE_QUEUE_ALLOCA, {
            "allocation": _alloc(queue_affinity=2), "queue_affinity": 1, "flags": 4,
            "wait_semaphore_count": 2, "signal_semaphore_count": 1}, waits, signals)),
        (R.OPERATION, 304, P.COMMAND_BUFFER_EXECUTION_BARRIER, payload(
            P.COMMAND_BUFFER_EXECUTION_BARRIER, {
                "source_stage_mask": 0x1C, "target_stage_mask": 0xD, "flags": 1,
                "memory_barrier_count": 1, "buffer_barrier_count": 1},
            schema.MEMORY_BARRIER.pack(source_scope=8, target_scope=4),
            schema.BUFFER_BARRIER.pack(source_scope=8, target_scope=4,
                                       buffer_ref=_ref(6, 0, 64)))),
        (R.OPERATION, 14, P.DEVICE_QUEUE_DEALLOCA, payload(P.DEVICE_QUEUE_DEALLOCA, {
            "buffer_ref": _ref(6, 0, 4096), "queue_affinity": ANY, "flags": 0,
            "wait_semaphore_count": 0, "signal_semaphore_count": 1}, signals)),
        (R.OPERATION, 15, P.DEVICE_QUEUE_FILL, payload(P.DEVICE_QUEUE_FILL, {
            "target_ref": _ref(6, 4, 64), "queue_affinity": ANY, "flags": 0,
            "wait_semaphore_count": 1, "signal_semaphore_count": 1, "pattern_length": 4},
            timepoints([(8, 1)]), signals, b"\xab\xcd\xef\x01")),
        (R.OPERATION, 16, P.DEVICE_QUEUE_UPDATE, payload(P.DEVICE_QUEUE_UPDATE, {
            "target_ref": _ref(6, 0, 8), "queue_affinity": ANY, "flags": 0, "source_offset": 3,
            "data_length": 8, "wait_semaphore_count": 0, "signal_semaphore_count": 1},
            signals, b"12345678")),
        (R.OPERATION, 17, P.DEVICE_QUEUE_COPY, payload(P.DEVICE_QUEUE_COPY, {
            "source_ref": _ref(6, 0, 8), "target_ref": _ref(7, 8, 8), "queue_affinity": ANY,
            "flags": 0, "wait_semaphore_count": 1, "signal_semaphore_count": 0},
            timepoints([(8, 1)]))),
        (R.OPERATION, 309, P.COMMAND_BUFFER_FILL_BUFFER, payload(P.COMMAND_BUFFER_FILL_BUFFER, {
            "target_ref": _ref(0, 0, 32, 1), "flags": 0, "pattern_length": 2}, b"\x00\x01")),
        (R.OPERATION, 310, P.COMMAND_BUFFER_UPDATE_BUFFER, payload(
            P.COMMAND_BUFFER_UPDATE_BUFFER, {
                "target_ref": _ref(6, 0, 4), "flags": 0, "source_offset": 12,
                "data_length": 4}, b"abcd")),
        (R.OPERATION, 8, P.EVENT_OBJECT, payload(P.EVENT_OBJECT, {
            "queue_affinity": ANY, "flags": 2})),
        (R.OPERATION, 305, P.COMMAND_BUFFER_EVENT, payload(P.COMMAND_BUFFER_EVENT, {
            "event_id": 12, "source_stage_mask": 0x1C})),
        (R.OPERATION, 307, P.COMMAND_BUFFER_WAIT_EVENTS, payload(
            P.COMMAND_BUFFER_WAIT_EVENTS, {
                "source_stage_mask": 0x1C, "target_stage_mask": 0xD, "event_count": 2,
                "memory_barrier_count": 1, "buffer_barrier_count": 0},
            (12).to_bytes(8, "little") + (13).to_bytes(8, "little"),
            schema.MEMORY_BARRIER.pack(source_scope=8, target_scope=4))),
        (R.OBJECT, 0, P.FILE_OBJECT, _file_object(1, 1, b"/tmp/weights.bin")),
        (R.OBJECT, 0, P.FILE_OBJECT, _file_object(2, 0, b"inline-bytes")),
        (R.OBJECT, 0, P.FILE_OBJECT, _file_object(3, 2, b"/tmp/ranges.bin")),
        (R.OBJECT, 0, P.FILE_OBJECT, _file_object(7, 9, b"")),
        (R.OPERATION, 18, P.DEVICE_QUEUE_READ, payload(P.DEVICE_QUEUE_READ, {
            "source_file_id": 20, "source_offset": 128, "target_ref": _ref(6, 0, 4),
            "queue_affinity": ANY, "flags": 0, "captured_data_length": 4,
            "wait_semaphore_count": 1, "signal_semaphore_count": 1},
            timepoints([(8, 1)]), signals, b"\x01\x02\x03\x04")),
        (R.OPERATION, 19, P.DEVICE_QUEUE_WRITE, payload(P.DEVICE_QUEUE_WRITE, {
            "source_ref": _ref(6, 0, 4), "target_file_id": 20, "target_offset": 64,
            "queue_affinity": ANY, "flags": 0, "wait_semaphore_count": 0,
            "signal_semaphore_count": 1}, signals)),
        (R.OPERATION, 103, P.ALLOCATOR_IMPORT_BUFFER, payload(P.ALLOCATOR_IMPORT_BUFFER, {
            "allocation": _alloc(allocation_size=16), "external_type": 1,
            "external_flags": 0, "data_length": 16}, bytes(16))),
        (R.OPERATION, 50, P.REPLAY_SCOPE, scope(b'we"ird\\\n\t\x01\xc3\xa9 name')),
    ]
    return out


def scope(name: bytes) -> bytes:
    return payload(P.REPLAY_SCOPE, {"name_length": len(name)}, name)


def _file_object(reference_type: int, validation_type: int, reference: bytes) -> bytes:
    digest = (0x0123456789ABCDEF).to_bytes(8, "little") + bytes(24)
    return payload(P.FILE_OBJECT, {
        "queue_affinity": ANY, "file_length": 4096, "file_device": 2049, "file_inode": 1234,
        "file_mtime_ns": 1700000000123456789, "reference_length": len(reference), "access": 1,
        "flags": 0, "handle_type": 1, "reference_type": reference_type,
        "validation_type": validation_type, "digest_type": 1, "digest": digest}, reference)


def metadata(names: list[bytes], parameters: list[list[dict]] | None = None) -> bytes:
    parameters = parameters or [[] for _ in names]
    total = sum(len(p) for p in parameters)
    parts = [schema.METADATA_HEADER.pack(function_count=len(names), parameter_count=total,
                                         function_name_storage_length=sum(map(len, names)))]
    for name, params in zip(names, parameters):
        parts.append(schema.METADATA_FUNCTION.pack(
            flags=0, workgroup_size=[64, 1, 1], constant_count=1, binding_count=2,
            parameter_count=len(params), name_length=len(name)))
    for params in parameters:
        parts.extend(schema.METADATA_PARAMETER.pack(p) for p in params)
    parts.extend(names)
    return b"".join(parts)


def _prepare(meta: bytes | None = None) -> bytes:
    fmt = b"embedded-elf-x86_64"
    data = b"\x7fELF" + bytes(60)
    meta = metadata([b"main_dispatch_0", b"f1"], [[{"offset": 0, "flags": 0, "type": 1,
                                                   "size": 8}], []]) if meta is None else meta
    return payload(P.EXECUTABLE_PREPARE, {
        "queue_affinity": ANY, "executable_data_length": len(data), "constant_count": 2,
        "caching_mode": 7, "executable_format_length": len(fmt),
        "executable_metadata_length": len(meta)},
        fmt, data, (3).to_bytes(4, "little") + (4).to_bytes(4, "little"), meta)


def prologue() -> list[dict]:
    """Session, device and allocator records (as record_bytes keyword sets)."""
    return [dict(record_type=R.SESSION),
            dict(record_type=R.OBJECT, object_id=1, object_type=1),
            dict(record_type=R.OBJECT, device_id=1, object_id=2, object_type=2)]


def build(entries: list[dict], **container_args) -> bytes:
    """A file of `entries` (record_bytes keyword sets, ordinals assigned in order)."""
    records = []
    for ordinal, fields in enumerate(entries):
        fields = dict(fields)
        record_type = fields.pop("record_type")
        ordinal = fields.pop("ordinal", ordinal)
        raw = fields.pop("raw", None)
        records.append(raw if raw is not None else record_bytes(ordinal, record_type, **fields))
    return container(records, **container_args)


def every_payload_file() -> bytes:
    entries = prologue()
    for record_type, op, payload_type, data in every_payload():
        entries.append(dict(record_type=record_type, device_id=1, object_id=3,
                            related_object_id=4, object_type=1 if op else 4,
                            operation_code=op, payload_type=payload_type, payload=data))
    # a failed call, an unsupported record, an unknown status code, unknown object type
    entries.append(dict(record_type=R.OPERATION, device_id=1, object_id=1, object_type=1,
                        operation_code=10, status_code=9))
    entries.append(dict(record_type=R.UNSUPPORTED, device_id=1, object_id=1, object_type=1,
                        operation_code=20))
    entries.append(dict(record_type=R.OPERATION, device_id=1, object_id=1, object_type=77,
                        operation_code=2, status_code=99))
    entries.append(dict(record_type=R.BLOB))
    entries.append(dict(record_type=R.OPERATION, device_id=1, object_id=1, object_type=1,
                        operation_code=2, payload=b"raw"))
    return build(entries)

"""`amdgpu-replay dump`: a replay's header, summary and records as text or JSONL, byte for byte
what IREE 3.13.0's iree-dump-replay prints (hal/replay/dump.c).

Order of work, as IREE's: the header is checked, then a pre-pass walks every record (container
checks, sequence ordinals, file_object and queue_read payloads, which the summary needs), then
the header/summary lines and one line per record are written while the records are formatted.
A payload that fails its checks stops the dump there: the lines already formatted are written,
the error is raised (the CLI prints it on stderr, exit 1). A record's line is written whole or
not at all.

Output is bytes (`out` is a binary stream): scope names are printed as the raw bytes the file
holds, like IREE's, so every str here is latin-1 (one char per byte) and encoded as latin-1.
"""

from __future__ import annotations


from amdgpu_cli.errors import STATUS_NAMES
from amdgpu_cli.replay import schema
from amdgpu_cli.replay.reader import ReplayFile, ReplayFormatError, payload_layout, \
    metadata_header
from amdgpu_cli.replay.schema import PayloadType as P, RecordType

FORMATS = ("text", "jsonl")
U64 = schema.U64_MAX

_RECORD_TYPES = schema.RECORD_TYPE_NAMES
_OBJECT_TYPES = schema.OBJECT_TYPE_NAMES
_OPS = {0: "none", **schema.OP_NAMES}
_PAYLOADS = schema.PAYLOAD_NAMES
_STATUS = dict(enumerate(STATUS_NAMES))  # unknown codes print as "" (IREE's default)
_FILE_REFERENCES = schema.FILE_REFERENCE_NAMES
_FILE_VALIDATIONS = schema.FILE_VALIDATION_NAMES
_FILE_OBJECT_SIZE = schema.PAYLOADS[P.FILE_OBJECT].size
_QUEUE_READ = schema.PAYLOADS[P.DEVICE_QUEUE_READ]
_TIMEPOINTS = schema.TIMEPOINT.struct
_BUFFER_REFS = schema.BUFFER_REF.struct

# JSON string escapes, per byte (latin-1 char), as IREE's dumper writes them.
_JSON_ESCAPES = {i: "\\u%04x" % i for i in range(0x20)}
_JSON_ESCAPES.update({0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t",
                      0x22: '\\"', 0x5C: "\\\\"})


def _json_string(text: str) -> str:
    return '"' + text.translate(_JSON_ESCAPES) + '"'


class Summary:
    """What the pre-pass counts (the dumper's file summary)."""

    __slots__ = ("records", "objects", "operations", "unsupported", "scope_begin", "scope_end",
                 "files", "external", "inline", "ranges", "unknown_reference",
                 "identity", "digest", "no_validation", "unknown_validation",
                 "external_bytes", "inline_bytes", "range_bytes", "captured_read_bytes")

    def __init__(self):
        for name in self.__slots__:
            setattr(self, name, 0)

    @property
    def environment_referenced(self) -> bool:
        return self.external != 0

    @property
    def hermetic(self) -> bool:
        return not self.environment_referenced and self.unknown_reference == 0

    @property
    def strict_replay_supported(self) -> bool:
        return (self.unsupported == 0 and self.unknown_reference == 0
                and self.unknown_validation == 0)


def scan(replay: ReplayFile) -> tuple[list, Summary]:
    """The pre-pass: every record (checked) and the summary."""
    summary = Summary()
    records = []
    data = replay.data
    for record in replay.records():
        records.append(record)
        record_type = record.record_type
        if record_type == RecordType.OBJECT:
            summary.objects += 1
            if record.payload_type == P.FILE_OBJECT:
                _scan_file_object(summary, data, record)
        elif record_type == RecordType.OPERATION:
            summary.operations += 1
            if record.operation_code == schema.Op.SCOPE_BEGIN:
                summary.scope_begin += 1
            elif record.operation_code == schema.Op.SCOPE_END:
                summary.scope_end += 1
            if record.payload_type == P.DEVICE_QUEUE_READ:
                if record.payload_length < _QUEUE_READ.size:
                    raise ReplayFormatError("replay queue read payload is short",
                                            offset=record.file_offset)
                captured = _QUEUE_READ.unpack(data, record.payload_offset)["captured_data_length"]
                summary.captured_read_bytes = (summary.captured_read_bytes + captured) & U64
        elif record_type == RecordType.UNSUPPORTED:
            summary.unsupported += 1
    summary.records = len(records)
    return records, summary


def _scan_file_object(summary: Summary, data, record) -> None:
    if record.payload_length < _FILE_OBJECT_SIZE:
        raise ReplayFormatError("replay file object payload is short", offset=record.file_offset)
    fields = schema.PAYLOADS[P.FILE_OBJECT].unpack(data, record.payload_offset)
    if _FILE_OBJECT_SIZE + fields["reference_length"] != record.payload_length:
        raise ReplayFormatError("replay file object payload length mismatch",
                                offset=record.file_offset)
    summary.files += 1
    reference = fields["reference_type"]
    if reference == schema.FileReference.EXTERNAL_PATH:
        summary.external += 1
        summary.external_bytes = (summary.external_bytes + fields["file_length"]) & U64
    elif reference == schema.FileReference.INLINE_BYTES:
        summary.inline += 1
        summary.inline_bytes = (summary.inline_bytes + fields["reference_length"]) & U64
    elif reference == schema.FileReference.CAPTURED_RANGES:
        summary.ranges += 1
        summary.range_bytes = (summary.range_bytes + fields["file_length"]) & U64
    else:
        summary.unknown_reference += 1
    validation = fields["validation_type"]
    if validation == schema.FileValidation.NONE:
        summary.no_validation += 1
    elif validation == schema.FileValidation.IDENTITY:
        summary.identity += 1
    elif validation == schema.FileValidation.CONTENT_DIGEST:
        summary.digest += 1
    else:
        summary.unknown_validation += 1


# -- header lines --------------------------------------------------------------------------------
def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def text_header(replay: ReplayFile, s: Summary) -> str:
    return (
        f"IREE HAL replay v{replay.version_major}.{replay.version_minor}\n"
        f"file_length: {replay.end}\nheader_length: {replay.header_length}\nsummary:\n"
        f"  hermetic: {_yes(s.hermetic)}\n"
        f"  environment_referenced: {_yes(s.environment_referenced)}\n"
        f"  strict_replay_supported: {_yes(s.strict_replay_supported)}\n"
        f"  records: total={s.records} objects={s.objects} operations={s.operations}"
        f" unsupported={s.unsupported}\n"
        f"  scopes: begin={s.scope_begin} end={s.scope_end}\n"
        f"  files: total={s.files} external={s.external} inline={s.inline} ranges={s.ranges}"
        f" unknown={s.unknown_reference}\n"
        f"  file_bytes: external={s.external_bytes} inline={s.inline_bytes}"
        f" ranges={s.range_bytes} captured_reads={s.captured_read_bytes}\n"
        f"  file_validation: identity={s.identity} digest={s.digest} none={s.no_validation}"
        f" unknown={s.unknown_validation}\nrecords:\n")


def _bool(flag: bool) -> str:
    return "true" if flag else "false"


def jsonl_header(replay: ReplayFile, s: Summary) -> str:
    return (
        f'{{"kind":"file","version_major":{replay.version_major},'
        f'"version_minor":{replay.version_minor},"header_length":{replay.header_length},'
        f'"flags":{replay.flags},"file_length":{replay.end}}}\n'
        f'{{"kind":"summary","hermetic":{_bool(s.hermetic)},'
        f'"environment_referenced":{_bool(s.environment_referenced)},'
        f'"strict_replay_supported":{_bool(s.strict_replay_supported)},'
        f'"record_count":{s.records},"object_count":{s.objects},'
        f'"operation_count":{s.operations},"unsupported_count":{s.unsupported},'
        f'"scope_begin_count":{s.scope_begin},"scope_end_count":{s.scope_end},'
        f'"file_object_count":{s.files},"external_file_count":{s.external},'
        f'"inline_file_count":{s.inline},"range_file_count":{s.ranges},'
        f'"unknown_file_reference_count":{s.unknown_reference},'
        f'"external_file_total_length":{s.external_bytes},'
        f'"inline_file_total_length":{s.inline_bytes},'
        f'"range_file_total_length":{s.range_bytes},'
        f'"captured_read_total_length":{s.captured_read_bytes},'
        f'"file_validation":{{"identity":{s.identity},"digest":{s.digest},'
        f'"none":{s.no_validation},"unknown":{s.unknown_validation}}}}}\n')


# -- payload fields: text ------------------------------------------------------------------------
# Each takes (fields, parts {name: (offset, size, element)}, payload file offset, payload
# view) and returns the text after the record line's `range=[...]`.
def _t_ref(label: str, ref: dict) -> str:
    return (f" {label}={{buffer_id={ref['buffer_id']} offset={ref['offset']}"
            f" length={ref['length']} slot={ref['buffer_slot']}}}")


def _t_range(label: str, base: int, part) -> str:
    return f" {label}=[{base + part[0]}, +{part[1]}]"


def _t_queue_ranges(parts, base) -> str:
    return (_t_range("wait_range", base, parts["wait_semaphores"])
            + _t_range("signal_range", base, parts["signal_semaphores"]))


def _t_allocation(a: dict) -> str:
    return (f" allocation_size={a['allocation_size']} queue_affinity={a['queue_affinity']}"
            f" min_alignment={a['min_alignment']} usage=0x{a['usage']:08x}"
            f" type=0x{a['type']:08x} access=0x{a['access']:04x}")


def _t_counts(f: dict) -> str:
    return f" wait_count={f['wait_semaphore_count']} signal_count={f['signal_semaphore_count']}"


def _text_scope(f, parts, base, view):
    off, size, _ = parts["name"]
    return ' name="' + str(view[off:off + size], "latin-1") + '"'


def _text_prepare(f, parts, base, view):
    text = (f" queue_affinity={f['queue_affinity']} caching_mode=0x{f['caching_mode']:08x}"
            + _t_range("format_range", base, parts["format"])
            + _t_range("data_range", base, parts["data"])
            + _t_range("constants_range", base, parts["constants"])
            + _t_range("metadata_range", base, parts["metadata"]))
    header = _metadata(parts, view)
    if header is not None:
        text += (f" metadata_functions={header['function_count']}"
                 f" metadata_parameters={header['parameter_count']}"
                 f" metadata_function_name_storage_length="
                 f"{header['function_name_storage_length']}")
    return text


def _metadata(parts, view):
    off, size, _ = parts["metadata"]
    return metadata_header(view[off:off + size])


def _digest(f) -> int:
    return int.from_bytes(f["digest"][:8], "little")


def _text_file(f, parts, base, view):
    return (f" queue_affinity={f['queue_affinity']} file_length={f['file_length']}"
            f" access=0x{f['access']:08x} flags=0x{f['flags']:08x}"
            f" handle_type={f['handle_type']}"
            f" reference_type={_FILE_REFERENCES.get(f['reference_type'], 'unknown')}"
            f"({f['reference_type']}) file_device={f['file_device']}"
            f" file_inode={f['file_inode']} file_mtime_ns={f['file_mtime_ns']}"
            f" validation_type={_FILE_VALIDATIONS.get(f['validation_type'], 'unknown')}"
            f"({f['validation_type']}) digest_type={f['digest_type']}"
            f" digest_fnv1a64=0x{_digest(f):016x}"
            + _t_range("reference_range", base, parts["reference"]))


def _text_dispatch(f, parts, base, view):
    c, s = f["workgroup_count"], f["workgroup_size"]
    return (f" executable_id={f['executable_id']} queue_affinity={f['queue_affinity']}"
            f" function_ordinal={f['function_ordinal']} flags=0x{f['flags']:08x}"
            f" workgroup_count=[{c[0]},{c[1]},{c[2]}] workgroup_size=[{s[0]},{s[1]},{s[2]}]"
            + _t_counts(f)
            + _t_range("constants_range", base, parts["constants"])
            + _t_range("bindings_range", base, parts["bindings"])
            + _t_ref("workgroup_count_ref", f["workgroup_count_ref"]))


def _timepoints(view, part):
    off, size, _ = part
    return _TIMEPOINTS.iter_unpack(view[off:off + size]) if size else ()


def _refs(view, part):
    off, size, _ = part
    return _BUFFER_REFS.iter_unpack(view[off:off + size]) if size else ()


def _text_execute(f, parts, base, view):
    waits = ",".join(f"{{semaphore_id={s} value={v}}}"
                     for s, v in _timepoints(view, parts["wait_semaphores"]))
    signals = ",".join(f"{{semaphore_id={s} value={v}}}"
                       for s, v in _timepoints(view, parts["signal_semaphores"]))
    bindings = ",".join(f"{{buffer_id={b} offset={o} length={n} slot={slot}}}"
                        for b, o, n, slot, _ in _refs(view, parts["bindings"]))
    return (f" command_buffer_id={f['command_buffer_id']} queue_affinity={f['queue_affinity']}"
            f" flags=0x{f['flags']:016x}" + _t_counts(f) + _t_queue_ranges(parts, base)
            + _t_range("bindings_range", base, parts["bindings"])
            + f" wait_semaphores=[{waits}] signal_semaphores=[{signals}] bindings=[{bindings}]")


def _text_alloca(f, parts, base, view):
    return (_t_allocation(f["allocation"])
            + f" submit_queue_affinity={f['queue_affinity']} flags=0x{f['flags']:016x}"
            + _t_counts(f) + _t_queue_ranges(parts, base))


def _t_queue(f) -> str:
    return f" queue_affinity={f['queue_affinity']} flags=0x{f['flags']:016x}"


def _text_dealloca(f, parts, base, view):
    return (_t_queue(f) + _t_counts(f) + _t_queue_ranges(parts, base)
            + _t_ref("buffer_ref", f["buffer_ref"]))


def _text_queue_fill(f, parts, base, view):
    return (_t_queue(f) + _t_counts(f) + _t_queue_ranges(parts, base)
            + _t_range("pattern_range", base, parts["pattern"])
            + _t_ref("target_ref", f["target_ref"]))


def _text_queue_update(f, parts, base, view):
    return (_t_queue(f) + f" source_offset={f['source_offset']}" + _t_counts(f)
            + _t_queue_ranges(parts, base) + _t_range("data_range", base, parts["data"])
            + _t_ref("target_ref", f["target_ref"]))


def _text_queue_copy(f, parts, base, view):
    return (_t_queue(f) + _t_counts(f) + _t_queue_ranges(parts, base)
            + _t_ref("source_ref", f["source_ref"]) + _t_ref("target_ref", f["target_ref"]))


def _text_queue_read(f, parts, base, view):
    return (f" source_file_id={f['source_file_id']} source_offset={f['source_offset']}"
            + _t_queue(f) + f" captured_data_length={f['captured_data_length']}"
            + _t_counts(f) + _t_queue_ranges(parts, base)
            + _t_range("captured_data_range", base, parts["captured_data"])
            + _t_ref("target_ref", f["target_ref"]))


def _text_queue_write(f, parts, base, view):
    return (f" target_file_id={f['target_file_id']} target_offset={f['target_offset']}"
            + _t_queue(f) + _t_counts(f) + _t_queue_ranges(parts, base)
            + _t_ref("source_ref", f["source_ref"]))


def _t_stages(f) -> str:
    return (f" source_stage_mask=0x{f['source_stage_mask']:016x}"
            f" target_stage_mask=0x{f['target_stage_mask']:016x}")


def _text_barrier(f, parts, base, view):
    return (_t_stages(f) + f" flags=0x{f['flags']:016x}"
            f" memory_count={f['memory_barrier_count']} buffer_count={f['buffer_barrier_count']}"
            + _t_range("memory_barriers_range", base, parts["memory_barriers"])
            + _t_range("buffer_barriers_range", base, parts["buffer_barriers"]))


def _text_wait_events(f, parts, base, view):
    return (_t_stages(f) + f" event_count={f['event_count']}"
            f" memory_count={f['memory_barrier_count']} buffer_count={f['buffer_barrier_count']}"
            + _t_range("events_range", base, parts["events"])
            + _t_range("memory_barriers_range", base, parts["memory_barriers"])
            + _t_range("buffer_barriers_range", base, parts["buffer_barriers"]))


_TEXT = {
    P.REPLAY_SCOPE: _text_scope,
    P.BUFFER_OBJECT: lambda f, parts, base, view: (
        f" allocation_size={f['allocation_size']} byte_offset={f['byte_offset']}"
        f" byte_length={f['byte_length']} queue_affinity={f['queue_affinity']}"
        f" placement_flags=0x{f['placement_flags']:08x} memory_type=0x{f['memory_type']:08x}"
        f" allowed_usage=0x{f['allowed_usage']:08x} allowed_access=0x{f['allowed_access']:04x}"),
    P.ALLOCATOR_ALLOCATE_BUFFER: lambda f, parts, base, view: _t_allocation(f),
    P.ALLOCATOR_IMPORT_BUFFER: lambda f, parts, base, view: (
        _t_allocation(f["allocation"]) + f" external_type={f['external_type']}"
        f" external_flags=0x{f['external_flags']:08x}"
        + _t_range("data_range", base, parts["data"])),
    P.BUFFER_RANGE: lambda f, parts, base, view: (
        f" byte_offset={f['byte_offset']} byte_length={f['byte_length']}"
        f" mapping_mode=0x{f['mapping_mode']:08x} memory_access=0x{f['memory_access']:04x}"),
    P.BUFFER_RANGE_DATA: lambda f, parts, base, view: (
        f" byte_offset={f['byte_offset']} byte_length={f['byte_length']}"
        + _t_range("data_range", base, parts["data"])
        + f" memory_access=0x{f['memory_access']:04x}"),
    P.COMMAND_BUFFER_OBJECT: lambda f, parts, base, view: (
        f" mode=0x{f['mode']:08x} categories=0x{f['command_categories']:08x}"
        f" queue_affinity={f['queue_affinity']} binding_capacity={f['binding_capacity']}"),
    P.EXECUTABLE_CACHE_OBJECT: lambda f, parts, base, view: _t_range(
        "identifier_range", base, parts["identifier"]),
    P.EXECUTABLE_PREPARE: _text_prepare,
    P.SEMAPHORE_OBJECT: lambda f, parts, base, view: (
        f" queue_affinity={f['queue_affinity']} initial_value={f['initial_value']}"
        f" flags=0x{f['flags']:016x}"),
    P.EVENT_OBJECT: lambda f, parts, base, view: (
        f" queue_affinity={f['queue_affinity']} flags=0x{f['flags']:08x}"),
    P.FILE_OBJECT: _text_file,
    P.DISPATCH: _text_dispatch,
    P.DEVICE_QUEUE_EXECUTE: _text_execute,
    P.DEVICE_QUEUE_ALLOCA: _text_alloca,
    P.DEVICE_QUEUE_DEALLOCA: _text_dealloca,
    P.DEVICE_QUEUE_FILL: _text_queue_fill,
    P.DEVICE_QUEUE_UPDATE: _text_queue_update,
    P.DEVICE_QUEUE_COPY: _text_queue_copy,
    P.DEVICE_QUEUE_READ: _text_queue_read,
    P.DEVICE_QUEUE_WRITE: _text_queue_write,
    P.COMMAND_BUFFER_EXECUTION_BARRIER: _text_barrier,
    P.COMMAND_BUFFER_EVENT: lambda f, parts, base, view: (
        f" event_id={f['event_id']} source_stage_mask=0x{f['source_stage_mask']:016x}"),
    P.COMMAND_BUFFER_WAIT_EVENTS: _text_wait_events,
    P.COMMAND_BUFFER_FILL_BUFFER: lambda f, parts, base, view: (
        f" flags=0x{f['flags']:08x}" + _t_range("pattern_range", base, parts["pattern"])
        + _t_ref("target", f["target_ref"])),
    P.COMMAND_BUFFER_UPDATE_BUFFER: lambda f, parts, base, view: (
        f" flags=0x{f['flags']:08x} source_offset={f['source_offset']}"
        + _t_range("data_range", base, parts["data"]) + _t_ref("target", f["target_ref"])),
    P.COMMAND_BUFFER_COPY_BUFFER: lambda f, parts, base, view: (
        f" flags=0x{f['flags']:08x}" + _t_ref("source", f["source_ref"])
        + _t_ref("target", f["target_ref"])),
}


# -- payload fields: JSON ------------------------------------------------------------------------
def _j_range(name: str, offset: int, length: int) -> str:
    return (f',"{name}":{{"offset":{offset},"length":{length},"uncompressed_length":{length},'
            f'"compression_type":0,"digest_type":0}}')


def _j_part(name: str, base: int, part) -> str:
    return _j_range(name, base + part[0], part[1])


def _j_ref(name: str, ref: dict) -> str:
    return (f',"{name}":{{"buffer_id":{ref["buffer_id"]},"offset":{ref["offset"]},'
            f'"length":{ref["length"]},"buffer_slot":{ref["buffer_slot"]}}}')


def _j_fields(f: dict, names) -> str:
    return ",".join(f'"{name}":{f[name]}' for name in names)


def _j_queue_ranges(parts, base) -> str:
    return (_j_part("wait_semaphores_range", base, parts["wait_semaphores"])
            + _j_part("signal_semaphores_range", base, parts["signal_semaphores"]))


_ALLOCATION_FIELDS = ("allocation_size", "queue_affinity", "min_alignment", "usage", "type",
                      "access")
_QUEUE_FIELDS = ("queue_affinity", "flags", "wait_semaphore_count", "signal_semaphore_count")


def _json_scope(f, parts, base, view):
    off, size, _ = parts["name"]
    return ',"payload":{"name":' + _json_string(str(view[off:off + size], "latin-1")) + "}"


def _json_prepare(f, parts, base, view):
    text = (',"payload":{' + _j_fields(f, (
        "queue_affinity", "caching_mode", "executable_format_length", "executable_data_length",
        "constant_count", "executable_metadata_length"))
        + _j_part("format_range", base, parts["format"])
        + _j_part("data_range", base, parts["data"])
        + _j_part("constants_range", base, parts["constants"])
        + _j_part("metadata_range", base, parts["metadata"]))
    header = _metadata(parts, view)
    if header is not None:
        text += (f',"metadata_function_count":{header["function_count"]}'
                 f',"metadata_parameter_count":{header["parameter_count"]}'
                 f',"metadata_function_name_storage_length":'
                 f'{header["function_name_storage_length"]}')
    return text + "}"


def _json_file(f, parts, base, view):
    return (',"payload":{' + _j_fields(f, (
        "queue_affinity", "file_length", "file_device", "file_inode", "file_mtime_ns",
        "reference_length", "access", "flags", "handle_type", "reference_type"))
        + f',"reference_type_name":"{_FILE_REFERENCES.get(f["reference_type"], "unknown")}"'
        + f',"validation_type":{f["validation_type"]}'
        + f',"validation_type_name":"{_FILE_VALIDATIONS.get(f["validation_type"], "unknown")}"'
        + f',"digest_type":{f["digest_type"]},"digest_fnv1a64":"0x{_digest(f):016x}"'
        + _j_part("reference_range", base, parts["reference"]) + "}")


def _json_dispatch(f, parts, base, view):
    c, s = f["workgroup_count"], f["workgroup_size"]
    return (',"payload":{' + _j_fields(f, ("executable_id", "queue_affinity",
                                           "function_ordinal", "flags"))
            + f',"workgroup_count":[{c[0]},{c[1]},{c[2]}],"workgroup_size":[{s[0]},{s[1]},{s[2]}],'
            + _j_fields(f, ("dynamic_workgroup_local_memory", "wait_semaphore_count",
                            "signal_semaphore_count", "constants_length", "binding_count"))
            + _j_ref("workgroup_count_ref", f["workgroup_count_ref"])
            + _j_queue_ranges(parts, base)
            + _j_part("constants_range", base, parts["constants"])
            + _j_part("bindings_range", base, parts["bindings"]) + "}")


def _json_execute(f, parts, base, view):
    waits = ",".join(f'{{"semaphore_id":{s},"value":{v}}}'
                     for s, v in _timepoints(view, parts["wait_semaphores"]))
    signals = ",".join(f'{{"semaphore_id":{s},"value":{v}}}'
                       for s, v in _timepoints(view, parts["signal_semaphores"]))
    bindings = ",".join(f'{{"buffer_id":{b},"offset":{o},"length":{n},"buffer_slot":{slot}}}'
                        for b, o, n, slot, _ in _refs(view, parts["bindings"]))
    return (',"payload":{' + _j_fields(f, ("command_buffer_id", "queue_affinity", "flags",
                                           "wait_semaphore_count", "signal_semaphore_count",
                                           "binding_count"))
            + _j_queue_ranges(parts, base) + _j_part("bindings_range", base, parts["bindings"])
            + f',"wait_semaphores":[{waits}],"signal_semaphores":[{signals}]'
            + f',"bindings":[{bindings}]}}')


def _json_alloca(f, parts, base, view):
    a = f["allocation"]
    return (f',"payload":{{"allocation_size":{a["allocation_size"]}'
            f',"allocation_queue_affinity":{a["queue_affinity"]}'
            f',"min_alignment":{a["min_alignment"]},"usage":{a["usage"]},"type":{a["type"]}'
            f',"access":{a["access"]},' + _j_fields(f, _QUEUE_FIELDS)
            + _j_queue_ranges(parts, base) + "}")


_JSON = {
    P.REPLAY_SCOPE: _json_scope,
    P.BUFFER_OBJECT: lambda f, parts, base, view: ',"payload":{' + _j_fields(f, (
        "allocation_size", "byte_offset", "byte_length", "queue_affinity", "placement_flags",
        "memory_type", "allowed_usage", "allowed_access")) + "}",
    P.ALLOCATOR_ALLOCATE_BUFFER: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, _ALLOCATION_FIELDS) + "}"),
    P.ALLOCATOR_IMPORT_BUFFER: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f["allocation"], _ALLOCATION_FIELDS) + ","
        + _j_fields(f, ("external_type", "external_flags"))
        + _j_part("data_range", base, parts["data"]) + "}"),
    P.BUFFER_RANGE: lambda f, parts, base, view: ',"payload":{' + _j_fields(f, (
        "byte_offset", "byte_length", "mapping_mode", "memory_access")) + "}",
    P.BUFFER_RANGE_DATA: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, ("byte_offset", "byte_length", "mapping_mode",
                                       "memory_access"))
        + _j_part("data_range", base, parts["data"]) + "}"),
    P.COMMAND_BUFFER_OBJECT: lambda f, parts, base, view: ',"payload":{' + _j_fields(f, (
        "mode", "command_categories", "queue_affinity", "binding_capacity")) + "}",
    P.EXECUTABLE_CACHE_OBJECT: lambda f, parts, base, view: (
        f',"payload":{{"identifier_length":{f["identifier_length"]}'
        + _j_part("identifier_range", base, parts["identifier"]) + "}"),
    P.EXECUTABLE_PREPARE: _json_prepare,
    P.SEMAPHORE_OBJECT: lambda f, parts, base, view: ',"payload":{' + _j_fields(f, (
        "queue_affinity", "initial_value", "flags")) + "}",
    P.EVENT_OBJECT: lambda f, parts, base, view: ',"payload":{' + _j_fields(f, (
        "queue_affinity", "flags")) + "}",
    P.FILE_OBJECT: _json_file,
    P.DISPATCH: _json_dispatch,
    P.DEVICE_QUEUE_EXECUTE: _json_execute,
    P.DEVICE_QUEUE_ALLOCA: _json_alloca,
    P.DEVICE_QUEUE_DEALLOCA: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, _QUEUE_FIELDS) + _j_ref("buffer_ref", f["buffer_ref"])
        + _j_queue_ranges(parts, base) + "}"),
    P.DEVICE_QUEUE_FILL: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, (*_QUEUE_FIELDS, "pattern_length"))
        + _j_ref("target_ref", f["target_ref"]) + _j_queue_ranges(parts, base)
        + _j_part("pattern_range", base, parts["pattern"]) + "}"),
    P.DEVICE_QUEUE_UPDATE: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, ("queue_affinity", "flags", "source_offset",
                                       "wait_semaphore_count", "signal_semaphore_count",
                                       "data_length"))
        + _j_ref("target_ref", f["target_ref"]) + _j_queue_ranges(parts, base)
        + _j_part("data_range", base, parts["data"]) + "}"),
    P.DEVICE_QUEUE_COPY: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, _QUEUE_FIELDS) + _j_ref("source_ref", f["source_ref"])
        + _j_ref("target_ref", f["target_ref"]) + _j_queue_ranges(parts, base) + "}"),
    P.DEVICE_QUEUE_READ: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, ("source_file_id", "source_offset", "queue_affinity",
                                       "flags", "captured_data_length",
                                       "wait_semaphore_count", "signal_semaphore_count"))
        + _j_ref("target_ref", f["target_ref"]) + _j_queue_ranges(parts, base)
        + _j_part("captured_data_range", base, parts["captured_data"]) + "}"),
    P.DEVICE_QUEUE_WRITE: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, ("target_file_id", "target_offset", *_QUEUE_FIELDS))
        + _j_ref("source_ref", f["source_ref"]) + _j_queue_ranges(parts, base) + "}"),
    P.COMMAND_BUFFER_EXECUTION_BARRIER: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, ("source_stage_mask", "target_stage_mask", "flags",
                                       "memory_barrier_count", "buffer_barrier_count"))
        + _j_part("memory_barriers_range", base, parts["memory_barriers"])
        + _j_part("buffer_barriers_range", base, parts["buffer_barriers"]) + "}"),
    P.COMMAND_BUFFER_EVENT: lambda f, parts, base, view: ',"payload":{' + _j_fields(f, (
        "event_id", "source_stage_mask")) + "}",
    P.COMMAND_BUFFER_WAIT_EVENTS: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, ("source_stage_mask", "target_stage_mask", "event_count",
                                       "memory_barrier_count", "buffer_barrier_count"))
        + _j_part("events_range", base, parts["events"])
        + _j_part("memory_barriers_range", base, parts["memory_barriers"])
        + _j_part("buffer_barriers_range", base, parts["buffer_barriers"]) + "}"),
    P.COMMAND_BUFFER_FILL_BUFFER: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, ("flags", "pattern_length"))
        + _j_ref("target", f["target_ref"]) + _j_part("pattern_range", base, parts["pattern"])
        + "}"),
    P.COMMAND_BUFFER_UPDATE_BUFFER: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, ("flags", "source_offset", "data_length"))
        + _j_ref("target", f["target_ref"]) + _j_part("data_range", base, parts["data"]) + "}"),
    P.COMMAND_BUFFER_COPY_BUFFER: lambda f, parts, base, view: (
        ',"payload":{' + _j_fields(f, ("flags",)) + _j_ref("source", f["source_ref"])
        + _j_ref("target", f["target_ref"]) + "}"),
}


# -- records -------------------------------------------------------------------------------------
def _payload(record, view, formatters) -> str:
    """The fields text of a record's payload (a type `formatters` has), checked as IREE
    checks it."""
    formatter = formatters[record.payload_type]
    start = record.payload_offset
    payload = view[start:start + record.payload_length]
    try:
        fields, parts = payload_layout(record.payload_type, payload)
        return formatter(fields, parts, start, payload)
    except ReplayFormatError as e:
        e.offset = record.file_offset
        raise


def text_record(record, view) -> str:
    (offset, _, length, ordinal, thread, device, obj, related, _, record_type, _,
     payload_type, object_type, op, status, payload_offset) = record
    line = (f"  @{offset} #{ordinal} {_RECORD_TYPES.get(record_type, 'unknown'):<11}"
            f" dev={device} obj={obj} rel={related} thread={thread}"
            f" status={_STATUS.get(status, '')}")
    if object_type:
        line += f" object={_OBJECT_TYPES.get(object_type, 'unknown')}({object_type})"
    if op:
        line += f" op={_OPS.get(op, 'unknown')}({op})"
    if payload_type or length:
        line += (f" payload={_PAYLOADS.get(payload_type, 'unknown')}({payload_type})"
                 f" range=[{payload_offset}, +{length}]")
        if payload_type in _TEXT:
            line += _payload(record, view, _TEXT)
    return line + "\n"


def jsonl_record(record, view) -> str:
    (offset, record_length, length, ordinal, thread, device, obj, related, _, record_type,
     flags, payload_type, object_type, op, status, payload_offset) = record
    line = (f'{{"kind":"{_RECORD_TYPES.get(record_type, "unknown")}","file_offset":{offset}'
            f',"record_length":{record_length},"payload_length":{length}'
            f',"sequence_ordinal":{ordinal},"thread_id":{thread},"device_id":{device}'
            f',"object_id":{obj},"related_object_id":{related}'
            f',"record_type_code":{record_type},"record_flags":{flags}'
            f',"object_type":"{_OBJECT_TYPES.get(object_type, "unknown")}"'
            f',"object_type_code":{object_type},"operation":"{_OPS.get(op, "unknown")}"'
            f',"operation_code":{op},"status_code":{status}'
            f',"status":"{_STATUS.get(status, "")}"'
            f',"payload_type":"{_PAYLOADS.get(payload_type, "unknown")}"'
            f',"payload_type_code":{payload_type},"payload_range":{{"offset":{payload_offset}'
            f',"length":{length},"uncompressed_length":{length}'
            f',"compression_type":0,"digest_type":0}}')
    if payload_type:
        line += _payload(record, view, _JSON) if payload_type in _JSON else ',"payload":null'
    return line + "}\n"


_FLUSH_BYTES = 1 << 18


def dump(replay: ReplayFile, out, fmt: str = "text") -> None:
    """Writes the dump of `replay` to the binary stream `out` (see the module docstring)."""
    if fmt not in FORMATS:
        raise ReplayFormatError(f"unsupported --format={fmt}; expected text or jsonl",
                                status="INVALID_ARGUMENT")
    records, summary = scan(replay)
    view = replay.data
    if fmt == "text":
        chunks = [text_header(replay, summary)]
        emit = text_record
    else:
        chunks = [jsonl_header(replay, summary)]
        emit = jsonl_record
    size = 0
    try:
        for record in records:
            line = emit(record, view)
            chunks.append(line)
            size += len(line)
            if size >= _FLUSH_BYTES:
                out.write("".join(chunks).encode("latin-1"))
                chunks.clear()
                size = 0
    finally:
        # On an error the lines before it are still written, as IREE's streaming dumper does.
        if chunks:
            out.write("".join(chunks).encode("latin-1"))
        out.flush()


def dump_file(path: str, fmt: str = "text") -> None:
    """`amdgpu-replay dump`: the file at `path` to standard output in `fmt` (text or jsonl);
    another format fails as IREE's tool does (INVALID_ARGUMENT)."""
    import sys

    sys.stdout.flush()
    out = getattr(sys.stdout, "buffer", None)
    with ReplayFile.open(path) as replay:
        dump(replay, out if out is not None else _TextSink(sys.stdout), fmt)


class _TextSink:
    """A text-only stdout (some embedders): the bytes as latin-1, one character per byte."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, data: bytes) -> None:
        self._stream.write(data.decode("latin-1"))

    def flush(self) -> None:
        self._stream.flush()

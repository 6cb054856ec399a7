"""The .ireeprof bundle format, version 1.6, declared once: its record layouts.

Every reader, writer, report and test takes its layouts, content types and enumerations from this
module. The field tables are `layouts.py`'s (plain data, no numpy), made here into numpy structured
dtypes with explicit offsets and item sizes, so a dtype *is* the wire layout:
`np.frombuffer(payload, dtype)` decodes, `array.tobytes()` encodes. The numbers and names that need
no layout (magic, record types, flags, families, status and enumeration names) are owned by
`names.py`, which needs no numpy either, and re-exported here.

Sources: ../shared/reference/ireeprof.md sections 1-2 (file header, record header, typed payloads,
enumerations), which were checked against IREE 3.13.0's `iree-profile`.

Version rules: readers accept major version 1 with any minor; fixed-size typed records may be longer
than the layout here (forward extension: the tail is skipped); variable-size records must match their
length fields exactly.
"""

from __future__ import annotations

import numpy as np

from amdgpu_cli.profile.names import (  # noqa: F401 - re-exported: one import for readers
    BUILTIN_METRIC_NAMES, CHUNK_FLAG_TRUNCATED, COMMAND_OP_NAMES, CONTENT_TYPE_PREFIX,
    COUNTER_SCOPE_NAMES, COUNTER_UNIT_NAMES, DEPENDENCY_STRATEGY_NAMES, DEVICE_CLASS_NAMES,
    ENDPOINT_TYPE_NAMES, FAMILIES, MAGIC, MEMORY_EVENT_TYPE_NAMES, METRIC_PLOT_HINT_NAMES,
    METRIC_SEMANTIC_NAMES, METRIC_UNIT_NAMES, METRIC_VALUE_KIND_NAMES, QUEUE_EVENT_TYPE_NAMES,
    RELATIONSHIP_TYPE_NAMES, STATUS_NAMES, TRACE_FORMAT_NAMES, U32_MAX, U64_MAX, VERSION_MAJOR,
    VERSION_MINOR, ContentKind, Flags, RecordType, hash_hex, status_name)
from amdgpu_cli.profile import layouts as _layouts


def _dtype(layout: _layouts.Layout) -> np.dtype:
    """The little-endian structured dtype of a layout (its offsets and item size)."""
    return np.dtype({"names": layout.names, "formats": [kind for _, kind, _ in layout.fields],
                     "offsets": [offset for offset, _, _ in layout.fields],
                     "itemsize": layout.size})


FILE_HEADER = _dtype(_layouts.FILE_HEADER)
RECORD_HEADER = _dtype(_layouts.RECORD_HEADER)
DEVICE = _dtype(_layouts.DEVICE)
QUEUE = _dtype(_layouts.QUEUE)
EXECUTABLE = _dtype(_layouts.EXECUTABLE)
CODE_OBJECT = _dtype(_layouts.CODE_OBJECT)
CODE_OBJECT_LOAD = _dtype(_layouts.CODE_OBJECT_LOAD)
FUNCTION = _dtype(_layouts.FUNCTION)
COMMAND_BUFFER = _dtype(_layouts.COMMAND_BUFFER)
COMMAND_OPERATION = _dtype(_layouts.COMMAND_OPERATION)
CLOCK_CORRELATION = _dtype(_layouts.CLOCK_CORRELATION)
DISPATCH_EVENT = _dtype(_layouts.DISPATCH_EVENT)
QUEUE_EVENT = _dtype(_layouts.QUEUE_EVENT)
QUEUE_DEVICE_EVENT = _dtype(_layouts.QUEUE_DEVICE_EVENT)
HOST_EXECUTION_EVENT = _dtype(_layouts.HOST_EXECUTION_EVENT)
COMMAND_REGION_EVENT = _dtype(_layouts.COMMAND_REGION_EVENT)
MEMORY_EVENT = _dtype(_layouts.MEMORY_EVENT)
EVENT_RELATIONSHIP = _dtype(_layouts.EVENT_RELATIONSHIP)
COUNTER_SET = _dtype(_layouts.COUNTER_SET)
COUNTER = _dtype(_layouts.COUNTER)
COUNTER_SAMPLE = _dtype(_layouts.COUNTER_SAMPLE)
METRIC_SOURCE = _dtype(_layouts.METRIC_SOURCE)
METRIC_DESCRIPTOR = _dtype(_layouts.METRIC_DESCRIPTOR)
METRIC_SAMPLE = _dtype(_layouts.METRIC_SAMPLE)
METRIC_VALUE = _dtype(_layouts.METRIC_VALUE)
EXECUTABLE_TRACE = _dtype(_layouts.EXECUTABLE_TRACE)


class ContentType:
    """One `application/vnd.iree.hal.profile.*` content type and its record layout."""

    def __init__(self, suffix: str, key: str, dtype: np.dtype | None, kind: str):
        self.suffix = suffix
        self.name = CONTENT_TYPE_PREFIX + suffix
        self.key = key        # singular snake_case family name used by summary rows
        self.dtype = dtype
        self.kind = kind

    def __repr__(self) -> str:
        return f"ContentType({self.suffix!r})"


# Every family of `names.FAMILIES` (in its order, the order summary reports them in) and its layout.
_LAYOUTS = {
    "devices": DEVICE, "queues": QUEUE, "executables": EXECUTABLE,
    "executable-code-objects": CODE_OBJECT, "executable-code-object-loads": CODE_OBJECT_LOAD,
    "executable-functions": FUNCTION, "command-buffers": COMMAND_BUFFER,
    "command-operations": COMMAND_OPERATION, "clock-correlations": CLOCK_CORRELATION,
    "dispatch-events": DISPATCH_EVENT, "queue-events": QUEUE_EVENT,
    "queue-device-events": QUEUE_DEVICE_EVENT, "host-execution-events": HOST_EXECUTION_EVENT,
    "command-region-events": COMMAND_REGION_EVENT, "memory-events": MEMORY_EVENT,
    "event-relationships": EVENT_RELATIONSHIP, "counter-sets": COUNTER_SET, "counters": COUNTER,
    "counter-samples": COUNTER_SAMPLE, "device-metric-sources": METRIC_SOURCE,
    "device-metric-descriptors": METRIC_DESCRIPTOR, "device-metric-samples": METRIC_SAMPLE,
    "executable-traces": EXECUTABLE_TRACE,
}
CONTENT_TYPES: list[ContentType] = [ContentType(suffix, key, _LAYOUTS.get(suffix), kind)
                                    for suffix, key, kind in FAMILIES]
BY_NAME: dict[str, ContentType] = {ct.name: ct for ct in CONTENT_TYPES}
BY_SUFFIX: dict[str, ContentType] = {ct.suffix: ct for ct in CONTENT_TYPES}


def variable_tail_length(ct: ContentType, head: np.void) -> int:
    """Bytes that must follow a variable record's fixed head, from its own length fields."""
    s = ct.suffix
    if s == "executable-code-objects":
        return int(head["data_length"])
    if s == "executable-functions":
        return int(head["name_length"])
    if s == "counter-sets":
        return int(head["name_length"])
    if s == "counters":
        return int(head["block_name_length"]) + int(head["name_length"]) + int(head["description_length"])
    if s == "counter-samples":
        return 8 * int(head["sample_value_count"])
    if s == "device-metric-sources":
        return int(head["name_length"])
    if s == "device-metric-descriptors":
        return int(head["name_length"]) + int(head["description_length"])
    if s == "device-metric-samples":
        return METRIC_VALUE.itemsize * int(head["value_count"])
    raise KeyError(s)


for _dt in (DEVICE, QUEUE, EXECUTABLE, CODE_OBJECT, CODE_OBJECT_LOAD, FUNCTION, COMMAND_BUFFER,
            COMMAND_OPERATION, CLOCK_CORRELATION, DISPATCH_EVENT, QUEUE_EVENT, QUEUE_DEVICE_EVENT,
            HOST_EXECUTION_EVENT, COMMAND_REGION_EVENT, MEMORY_EVENT, EVENT_RELATIONSHIP,
            COUNTER_SET, COUNTER, COUNTER_SAMPLE, METRIC_SOURCE, METRIC_DESCRIPTOR, METRIC_SAMPLE,
            EXECUTABLE_TRACE):
    assert _dt.names[0] == "record_length"

"""The .ireeprof format's numbers and names: everything about it that needs no record layout.

Magic and version, record types, chunk and typed-record flags, status names, the content-type
families (suffix, the key summary rows use, how a payload splits into records) and the
enumerations the reports print. Plain Python: a command that only counts and prints (`summary`)
reads a bundle without importing numpy. `schema.py` adds the layouts (numpy dtypes) and re-exports
these names, so a reader that has the layouts needs one import.

Sources: ../shared/reference/ireeprof.md sections 1-2 and 7, checked against IREE 3.13.0's
`iree-profile`.
"""

from __future__ import annotations

from amdgpu_cli.errors import STATUS_NAMES  # noqa: F401 - re-exported (schema.py too)

MAGIC = 0x46505249  # b"IRPF" little-endian
VERSION_MAJOR = 1
VERSION_MINOR = 6
U32_MAX = 0xFFFFFFFF
U64_MAX = 0xFFFFFFFFFFFFFFFF
CONTENT_TYPE_PREFIX = "application/vnd.iree.hal.profile."

class RecordType:
    NONE = 0
    SESSION_BEGIN = 1
    CHUNK = 2
    SESSION_END = 3
    NAMES = {1: "session_begin", 2: "chunk", 3: "session_end"}


CHUNK_FLAG_TRUNCATED = 1



def status_name(code: int) -> str:
    return STATUS_NAMES[code] if 0 <= code < len(STATUS_NAMES) else "UNKNOWN_STATUS"


def hash_hex(words) -> str:
    """A 128-bit hash (code object, function) as IREE prints it: two u64 words, `%016x%016x`."""
    return f"{int(words[0]):016x}{int(words[1]):016x}"


class ContentKind:
    """How a content type's payload is split into typed records."""

    SESSION = "session"    # begin/end records only
    FIXED = "fixed"        # fixed-size records; record_length may exceed the layout (extension)
    VARIABLE = "variable"  # a fixed head plus trailing bytes that must match its length fields
    TRACE = "trace"        # exactly one 88-byte head, raw bytes to the end of the payload


# Content-type families in schema order (the order summary reports them in): suffix, key, kind.
FAMILIES: list[tuple[str, str, str]] = [
    ("session", "session", ContentKind.SESSION),
    ("devices", "device", ContentKind.FIXED),
    ("queues", "queue", ContentKind.FIXED),
    ("executables", "executable", ContentKind.FIXED),
    ("executable-code-objects", "executable_code_object", ContentKind.VARIABLE),
    ("executable-code-object-loads", "executable_code_object_load", ContentKind.FIXED),
    ("executable-functions", "executable_function", ContentKind.VARIABLE),
    ("command-buffers", "command_buffer", ContentKind.FIXED),
    ("command-operations", "command_operation", ContentKind.FIXED),
    ("clock-correlations", "clock_correlation", ContentKind.FIXED),
    ("dispatch-events", "dispatch_event", ContentKind.FIXED),
    ("queue-events", "queue_event", ContentKind.FIXED),
    ("queue-device-events", "queue_device_event", ContentKind.FIXED),
    ("host-execution-events", "host_execution_event", ContentKind.FIXED),
    ("command-region-events", "command_region_event", ContentKind.FIXED),
    ("memory-events", "memory_event", ContentKind.FIXED),
    ("event-relationships", "event_relationship", ContentKind.FIXED),
    ("counter-sets", "counter_set", ContentKind.VARIABLE),
    ("counters", "counter", ContentKind.VARIABLE),
    ("counter-samples", "counter_sample", ContentKind.VARIABLE),
    ("device-metric-sources", "device_metric_source", ContentKind.VARIABLE),
    ("device-metric-descriptors", "device_metric_descriptor", ContentKind.VARIABLE),
    ("device-metric-samples", "device_metric_sample", ContentKind.VARIABLE),
    ("executable-traces", "executable_trace", ContentKind.TRACE),
]


# --- Enumerations ---------------------------------------------------------------------------------

COMMAND_OP_NAMES = {0: "unknown", 1: "barrier", 2: "dispatch", 3: "fill", 4: "copy", 5: "update",
                    6: "profile_marker", 7: "branch", 8: "cond_branch", 9: "return"}
QUEUE_EVENT_TYPE_NAMES = {0: "unknown", 1: "barrier", 2: "dispatch", 3: "execute", 4: "copy",
                          5: "fill", 6: "update", 7: "read", 8: "write", 9: "alloca",
                          10: "dealloca", 11: "host_call"}
DEPENDENCY_STRATEGY_NAMES = {0: "none", 1: "inline", 2: "device_barrier", 3: "software_defer"}
MEMORY_EVENT_TYPE_NAMES = {0: "unknown", 1: "slab_acquire", 2: "slab_release", 3: "pool_reserve",
                           4: "pool_materialize", 5: "pool_release", 6: "pool_wait",
                           7: "queue_alloca", 8: "queue_dealloca", 9: "buffer_allocate",
                           10: "buffer_free", 11: "buffer_import", 12: "buffer_unimport"}
RELATIONSHIP_TYPE_NAMES = {1: "queue_submission_dispatch",
                           2: "queue_submission_queue_device_event",
                           3: "queue_event_host_execution_event",
                           4: "queue_submission_host_execution_event"}
ENDPOINT_TYPE_NAMES = {1: "queue_submission", 2: "queue_event", 3: "dispatch_event",
                       4: "command_operation", 5: "memory_event", 6: "artifact",
                       7: "queue_device_event", 8: "host_execution_event"}
COUNTER_UNIT_NAMES = {0: "none", 1: "count", 2: "cycles", 3: "bytes"}
COUNTER_SCOPE_NAMES = {0: "none", 1: "dispatch", 2: "command_operation", 3: "device_time_range"}
DEVICE_CLASS_NAMES = {0: "none", 1: "cpu", 2: "gpu", 3: "npu", 0x7FFFFFFF: "other"}
METRIC_UNIT_NAMES = {0: "none", 1: "count", 2: "hz", 3: "bytes", 4: "bytes_per_second",
                     5: "millipercent", 6: "millidegrees_celsius", 7: "microwatts",
                     8: "microjoules", 9: "bitfield", 10: "enum"}
METRIC_VALUE_KIND_NAMES = {1: "i64", 2: "u64", 3: "f64"}
METRIC_SEMANTIC_NAMES = {1: "instant", 2: "average", 3: "cumulative", 4: "delta", 5: "state"}
METRIC_PLOT_HINT_NAMES = {1: "number", 2: "memory", 3: "percentage", 4: "frequency",
                          5: "temperature", 6: "power", 7: "energy", 8: "bandwidth"}
TRACE_FORMAT_NAMES = {0: "none", 1: "amdgpu_att"}


class Flags:
    DEVICE_UUID = 1 << 0
    CODE_OBJECT_HASH = 1 << 0
    FUNCTION_HASH = 1 << 0
    # command operation flags
    OP_EXECUTION_BARRIER = 1 << 0
    OP_INDIRECT_PARAMETERS = 1 << 1
    OP_DYNAMIC_BINDINGS = 1 << 2
    OP_STATIC_BINDINGS = 1 << 3
    OP_PREPUBLISHED_ARGUMENTS = 1 << 4
    OP_CONTROL_FLOW = 1 << 5
    OP_BLOCK_STRUCTURE = 1 << 6
    # clock correlation flags
    CLOCK_DEVICE_TICK = 1 << 0
    CLOCK_HOST_CPU_TIMESTAMP = 1 << 1
    CLOCK_HOST_SYSTEM_TIMESTAMP = 1 << 2
    CLOCK_HOST_TIME_BRACKET = 1 << 3
    CLOCK_DEVICE_TICK_UNALIGNED = 1 << 4
    # dispatch event flags
    DISPATCH_COMMAND_BUFFER = 1 << 0
    DISPATCH_INDIRECT_PARAMETERS = 1 << 1
    # queue / device queue event flags
    QUEUE_SOFTWARE_DEFERRED = 1 << 0
    # host execution flags
    HOST_COMMAND_BUFFER = 1 << 0
    HOST_INDIRECT_PARAMETERS = 1 << 1
    HOST_DEFERRED = 1 << 2
    # command region flags
    REGION_COMMAND_BUFFER = 1 << 0
    REGION_BLOCK_TRANSITION = 1 << 1
    REGION_TERMINAL = 1 << 2
    REGION_HAS_NEXT_REGION = 1 << 3
    # memory event flags
    MEMORY_QUEUE_OPERATION = 1 << 0
    MEMORY_WAIT_FRONTIER = 1 << 1
    MEMORY_WAIT_NOTIFICATION = 1 << 2
    MEMORY_POOL_RESERVATION = 1 << 3
    MEMORY_POOL_STATS = 1 << 4
    MEMORY_EXTERNALLY_OWNED = 1 << 5
    # counters
    COUNTER_RAW = 1 << 0
    SAMPLE_DISPATCH_EVENT = 1 << 0
    SAMPLE_COMMAND_OPERATION = 1 << 1
    SAMPLE_DEVICE_TICK_RANGE = 1 << 2
    # metric samples
    METRIC_SOURCE_TIMESTAMP = 1 << 0
    METRIC_PARTIAL = 1 << 1
    # traces
    TRACE_DISPATCH_EVENT = 1 << 0
    TRACE_COMMAND_OPERATION = 1 << 1


BUILTIN_METRIC_NAMES = {
    1: "clock.compute.current", 2: "clock.memory.current", 3: "temperature.edge",
    4: "temperature.hotspot", 5: "temperature.memory", 6: "power.socket", 7: "energy.socket",
    8: "activity.compute", 9: "activity.memory", 10: "memory.local.used",
    11: "memory.local.total", 12: "memory.traffic.read", 13: "memory.traffic.write",
    14: "throttle.status", 15: "performance.tier",
}

"""HSA status codes: their header names, the IREE status each maps to, and the error types.

The mapping follows IREE's `util/libhsa.c` (reference §2.4): INFO_BREAK is success; the INVALID_*
family and INVALID_RUNTIME_STATE are INVALID_ARGUMENT; codes IREE does not list (HSA_STATUS_ERROR, the
AMD additions 40..44 and anything unknown) are UNKNOWN. Descriptions are our own words; `Libhsa.check`
prefers the loaded runtime's `hsa_status_string` text when it has one.
"""

from __future__ import annotations

from hsa_ffi import constants as C

# code -> (header name, IREE status name, description)
_STATUSES: dict[int, tuple[str, str, str]] = {
    C.HSA_STATUS_SUCCESS: ("HSA_STATUS_SUCCESS", "OK", "The call succeeded."),
    C.HSA_STATUS_INFO_BREAK: (
        "HSA_STATUS_INFO_BREAK", "OK", "An iteration callback stopped the traversal early."),
    C.HSA_STATUS_ERROR: ("HSA_STATUS_ERROR", "UNKNOWN", "The runtime reported a generic error."),
    C.HSA_STATUS_ERROR_INVALID_ARGUMENT: (
        "HSA_STATUS_ERROR_INVALID_ARGUMENT", "INVALID_ARGUMENT", "An argument is invalid."),
    C.HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: (
        "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION", "INVALID_ARGUMENT",
        "The queue could not be created with the requested size, type or features."),
    C.HSA_STATUS_ERROR_INVALID_ALLOCATION: (
        "HSA_STATUS_ERROR_INVALID_ALLOCATION", "INVALID_ARGUMENT",
        "The allocation request is invalid (size zero, too large for the pool, or not allowed)."),
    C.HSA_STATUS_ERROR_INVALID_AGENT: (
        "HSA_STATUS_ERROR_INVALID_AGENT", "INVALID_ARGUMENT", "The agent handle is invalid."),
    C.HSA_STATUS_ERROR_INVALID_REGION: (
        "HSA_STATUS_ERROR_INVALID_REGION", "INVALID_ARGUMENT", "The region handle is invalid."),
    C.HSA_STATUS_ERROR_INVALID_SIGNAL: (
        "HSA_STATUS_ERROR_INVALID_SIGNAL", "INVALID_ARGUMENT", "The signal handle is invalid."),
    C.HSA_STATUS_ERROR_INVALID_QUEUE: (
        "HSA_STATUS_ERROR_INVALID_QUEUE", "INVALID_ARGUMENT", "The queue is invalid."),
    C.HSA_STATUS_ERROR_OUT_OF_RESOURCES: (
        "HSA_STATUS_ERROR_OUT_OF_RESOURCES", "RESOURCE_EXHAUSTED",
        "The runtime could not obtain the resources it needs (memory, threads, OS events, or "
        "access to the GPU driver)."),
    C.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: (
        "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT", "INVALID_ARGUMENT",
        "An AQL packet has a malformed header or fields."),
    C.HSA_STATUS_ERROR_RESOURCE_FREE: (
        "HSA_STATUS_ERROR_RESOURCE_FREE", "INTERNAL",
        "A resource could not be released because it is still in use."),
    C.HSA_STATUS_ERROR_NOT_INITIALIZED: (
        "HSA_STATUS_ERROR_NOT_INITIALIZED", "FAILED_PRECONDITION",
        "The runtime is not initialized (hsa_init has not succeeded)."),
    C.HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: (
        "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW", "RESOURCE_EXHAUSTED",
        "The runtime's initialization reference count overflowed."),
    C.HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: (
        "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS", "INCOMPATIBLE",
        "The arguments are valid on their own but do not work together."),
    C.HSA_STATUS_ERROR_INVALID_INDEX: (
        "HSA_STATUS_ERROR_INVALID_INDEX", "OUT_OF_RANGE", "An index is out of range."),
    C.HSA_STATUS_ERROR_INVALID_ISA: (
        "HSA_STATUS_ERROR_INVALID_ISA", "INCOMPATIBLE",
        "The instruction set architecture is invalid or not supported by the agent."),
    C.HSA_STATUS_ERROR_INVALID_ISA_NAME: (
        "HSA_STATUS_ERROR_INVALID_ISA_NAME", "INVALID_ARGUMENT", "The ISA name is malformed."),
    C.HSA_STATUS_ERROR_INVALID_CODE_OBJECT: (
        "HSA_STATUS_ERROR_INVALID_CODE_OBJECT", "INVALID_ARGUMENT",
        "The code object is malformed or does not match the agent."),
    C.HSA_STATUS_ERROR_INVALID_EXECUTABLE: (
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE", "INVALID_ARGUMENT", "The executable is invalid."),
    C.HSA_STATUS_ERROR_FROZEN_EXECUTABLE: (
        "HSA_STATUS_ERROR_FROZEN_EXECUTABLE", "FAILED_PRECONDITION",
        "The executable is frozen and can no longer be changed."),
    C.HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: (
        "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME", "NOT_FOUND",
        "No symbol with that name exists in the executable."),
    C.HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: (
        "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED", "FAILED_PRECONDITION",
        "The variable has already been defined."),
    C.HSA_STATUS_ERROR_VARIABLE_UNDEFINED: (
        "HSA_STATUS_ERROR_VARIABLE_UNDEFINED", "FAILED_PRECONDITION",
        "The variable is used before it has been defined."),
    C.HSA_STATUS_ERROR_EXCEPTION: (
        "HSA_STATUS_ERROR_EXCEPTION", "DATA_LOSS",
        "The device raised an exception while executing (a queue error)."),
    C.HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: (
        "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL", "INVALID_ARGUMENT",
        "The code object symbol is invalid."),
    C.HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: (
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL", "INVALID_ARGUMENT",
        "The executable symbol is invalid."),
    C.HSA_STATUS_ERROR_INVALID_FILE: (
        "HSA_STATUS_ERROR_INVALID_FILE", "INVALID_ARGUMENT", "The file descriptor is invalid."),
    C.HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: (
        "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER", "INVALID_ARGUMENT",
        "The code object reader is invalid."),
    C.HSA_STATUS_ERROR_INVALID_CACHE: (
        "HSA_STATUS_ERROR_INVALID_CACHE", "INVALID_ARGUMENT", "The cache handle is invalid."),
    C.HSA_STATUS_ERROR_INVALID_WAVEFRONT: (
        "HSA_STATUS_ERROR_INVALID_WAVEFRONT", "INVALID_ARGUMENT",
        "The wavefront handle is invalid."),
    C.HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: (
        "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP", "INVALID_ARGUMENT",
        "The signal group is invalid."),
    C.HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: (
        "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE", "INVALID_ARGUMENT",
        "The runtime is not in a state that allows this call."),
    C.HSA_STATUS_ERROR_FATAL: (
        "HSA_STATUS_ERROR_FATAL", "DATA_LOSS",
        "The runtime hit an unrecoverable error; its state can no longer be trusted."),
    C.HSA_STATUS_ERROR_INVALID_MEMORY_POOL: (
        "HSA_STATUS_ERROR_INVALID_MEMORY_POOL", "UNKNOWN", "The memory pool handle is invalid."),
    C.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: (
        "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION", "UNKNOWN",
        "A kernel accessed memory outside the apertures it may use."),
    C.HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: (
        "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION", "UNKNOWN",
        "A kernel executed an instruction the device does not accept."),
    C.HSA_STATUS_ERROR_MEMORY_FAULT: (
        "HSA_STATUS_ERROR_MEMORY_FAULT", "UNKNOWN", "A kernel caused a memory fault."),
    C.HSA_STATUS_CU_MASK_REDUCED: (
        "HSA_STATUS_CU_MASK_REDUCED", "UNKNOWN",
        "The compute-unit mask was applied only in part (some units are unavailable)."),
}


def status_name(code: int) -> str:
    """The header name of an HSA status code; `HSA_STATUS_UNKNOWN(0x....)` for codes we do not know."""
    entry = _STATUSES.get(code)
    return entry[0] if entry else f"HSA_STATUS_UNKNOWN(0x{code & 0xFFFFFFFF:04X})"


def iree_status(code: int) -> str:
    """The IREE status name an HSA status code maps to (reference §2.4)."""
    entry = _STATUSES.get(code)
    return entry[1] if entry else "UNKNOWN"


def describe(code: int) -> str:
    """Our own one-sentence description of an HSA status code."""
    entry = _STATUSES.get(code)
    return entry[2] if entry else "The runtime returned a status code this tool does not know."


class HsaError(Exception):
    """A failed HSA call (or a failure to load the HSA runtime at all).

    `status` is the IREE status name, `hsa_status` the raw HSA code (None when no HSA call failed),
    `function` the HSA function that returned it. This package depends on nothing above it: a
    caller that wants these errors in its own hierarchy passes a subclass as `load(error_type=)`
    (the amdgpu driver does: its HSA errors are HalErrors too).
    """

    status = "UNKNOWN"

    def __init__(self, message: str, *, status: str | None = None, hsa_status: int | None = None,
                 function: str | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status
        self.hsa_status = hsa_status
        self.function = function

    def one_line(self) -> str:
        """`STATUS; message` on one line, as IREE's tools print a failed status."""
        return f"{self.status}; {' '.join(str(self).split())}"

    @classmethod
    def from_status(cls, function: str, code: int, description: str | None = None) -> HsaError:
        """`[function] HSA_STATUS_NAME: description`, with the IREE status the code maps to."""
        text = description or describe(code)
        return cls(f"[{function}] {status_name(code)}: {text}", status=iree_status(code),
                   hsa_status=code, function=function)


class LibhsaNotFound(HsaError):
    """No HSA runtime library could be loaded from any candidate location."""

    status = "NOT_FOUND"

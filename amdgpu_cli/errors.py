"""The project's error types.

Library code raises these; only the CLI boundary (`amdgpu_cli.cli.main`) turns them into one line on
stderr and an exit status. `status` names the IREE status code the same failure carries in IREE's
tools, so messages read alike (`DATA_LOSS; profile record extends past file end`).
"""

from __future__ import annotations

# IREE's status codes, by number (iree/base/status.h): the one table every part names them from
# (hal.enums.StatusCode, the VM's traps, the profile and replay formats).
STATUS_NAMES = (
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    "DEFERRED", "INCOMPATIBLE",
)


class AmdgpuCliError(Exception):
    """A failure a user can cause: bad flags, bad files, missing devices."""

    exit_code = 1
    status = "INVALID_ARGUMENT"

    def __init__(self, message: str, *, status: str | None = None):
        super().__init__(message)
        if status is not None:
            self.status = status

    def one_line(self) -> str:
        text = " ".join(str(self).split())
        return f"{self.status}; {text}" if self.status else text


class UsageError(AmdgpuCliError):
    """Bad command-line usage (exit status 2)."""

    exit_code = 2
    status = ""


class InputFileError(AmdgpuCliError):
    """A file that cannot be opened or read."""

    status = "NOT_FOUND"


class BundleFormatError(AmdgpuCliError):
    """A .ireeprof bundle that breaks the format (IREE reports these as DATA_LOSS)."""

    status = "DATA_LOSS"

    def __init__(self, message: str, *, status: str | None = None, record_index: int | None = None):
        super().__init__(message, status=status)
        self.record_index = record_index


class MissingMetadataError(BundleFormatError):
    """An event refers to metadata (function, queue, command buffer) the bundle never describes."""


class OutputError(AmdgpuCliError):
    """An output path that cannot be written (a directory, a missing folder, a full disk); the
    message names the path and the reason."""

    status = ""

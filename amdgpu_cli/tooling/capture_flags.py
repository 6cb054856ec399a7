"""The flags of the two captures a run or a benchmark can make, as the commands hand them on.

`ProfilingFlags`: --device_profiling_* and --print_device_statistics (tooling/profiling.py's
`Capture.from_flags` checks them and makes the capture). `ReplayFlags`: --device_replay_* (and our
--device_replay_results; replay/recorder.py's `ReplayCapture.from_flags`, with `check_replay_flags`
giving IREE's messages for bad values). Plain records with no imports of their own: a run that
asks for neither capture never loads the capture code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from amdgpu_cli.errors import AmdgpuCliError

__all__ = ["FILE_POLICIES", "FILE_VALIDATIONS", "ProfilingFlags", "ReplayFlags",
           "check_replay_flags"]

# The values of --device_replay_file_policy (how imported fd-backed files are captured, in IREE's
# enum order) and --device_replay_file_validation.
FILE_POLICIES = ("reference", "capture-ranges", "capture-all", "fail")
FILE_VALIDATIONS = ("identity", "digest")


@dataclass
class ProfilingFlags:
    mode: str = ""
    output: str = ""
    filter_function: str = ""
    filter_command_buffer: int = -1
    filter_command_index: int = -1
    filter_physical_device: int = -1
    filter_queue: int = -1
    counters: Sequence[str] = field(default_factory=tuple)
    flush_interval_ms: int = 0
    print_device_statistics: bool = False

    @property
    def requested(self) -> bool:
        return bool(self.mode.strip() or self.output or self.print_device_statistics)


@dataclass
class ReplayFlags:
    """--device_replay_output / _file_policy / _file_validation (and our --device_replay_results)."""
    output: str = ""
    file_policy: str = "reference"
    file_validation: str = "identity"
    results: bool = False

    @property
    def requested(self) -> bool:
        return bool(self.output)


def check_replay_flags(flags: ReplayFlags) -> None:
    """IREE's messages for bad values (INVALID_ARGUMENT, checked even without an output)."""
    if flags.file_policy not in FILE_POLICIES:
        raise AmdgpuCliError("--device_replay_file_policy must be `reference`, `capture-ranges`, "
                             f"`capture-all`, or `fail`; got `{flags.file_policy}`",
                             status="INVALID_ARGUMENT")
    if flags.file_validation not in FILE_VALIDATIONS:
        raise AmdgpuCliError("--device_replay_file_validation must be `identity` or `digest`; "
                             f"got `{flags.file_validation}`", status="INVALID_ARGUMENT")
    if flags.results and not flags.output:
        raise AmdgpuCliError("--device_replay_results requires --device_replay_output",
                             status="INVALID_ARGUMENT")

"""The flags of the two captures a run or a benchmark can make, as the commands hand them on.

`ProfilingFlags`: --device_profiling_* and --print_device_statistics (tooling/profiling.py's
`Capture.from_flags` checks them and makes the capture). `ReplayFlags`: --device_replay_* (and our
--device_replay_results; replay/recorder.py's `ReplayCapture`, with `check_replay_flags` giving
IREE's messages for bad values). `profiling_capture(flags)` and `replay_capture(flags)` make the
capture the flags ask for, or None, and import the capture code only then: a run that asks for
neither capture never loads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from amdgpu_cli.errors import AmdgpuCliError

__all__ = ["FILE_POLICIES", "FILE_VALIDATIONS", "ProfilingFlags", "ReplayFlags",
           "check_replay_flags", "profiling_capture", "replay_capture"]

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


def profiling_capture(flags: ProfilingFlags | None):
    """The tooling.profiling.Capture `flags` ask for (flags and output path checked now), or
    None."""
    if flags is None or not flags.requested:
        return None
    from amdgpu_cli.tooling.profiling import Capture

    return Capture.from_flags(flags)


def replay_capture(flags: ReplayFlags | None):
    """The replay.recorder.ReplayCapture `flags` ask for (flags and output path checked now), or
    None; bad values fail without an output too."""
    if flags is None:
        return None
    if not flags.requested:
        check_replay_flags(flags)
        return None
    from amdgpu_cli.replay.recorder import ReplayCapture

    return ReplayCapture(flags)

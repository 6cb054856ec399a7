"""Executable and ExecutableCache: the driver-neutral face of loaded kernels.

An Executable is a loaded set of exports (entry points), addressed by ordinal: hal.executable.lookup
.function answers the export index for a name; command_buffer.dispatch records that index. An
ExecutableCache (one per device) says which formats it can load (`hal.executable.format` queries)
and prepares executables from the bytes of a .vmfb rodata segment. Drivers subclass both.
Lifetime: an executable holds its device; `close()` releases driver resources (idempotent).
Sources: IREE runtime/src/iree/hal/executable.h, executable_cache.h.
"""

from __future__ import annotations

import abc
from typing import NamedTuple

from amdgpu_cli.hal.enums import HalError


class ExportInfo(NamedTuple):
    name: str
    workgroup_size: tuple[int, int, int] = (1, 1, 1)
    constant_count: int = 0
    binding_count: int = 0


class Executable(abc.ABC):

    vm_type = "hal.executable"  # its VM ref type (see vm/refs.type_matches)
    def __init__(self, device=None):
        self.device = device
        self._closed = False

    @property
    @abc.abstractmethod
    def exports(self) -> tuple[ExportInfo, ...]:
        """The exports in ordinal order."""

    @property
    def export_count(self) -> int:
        return len(self.exports)

    @property
    def export_names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.exports)

    @property
    def workgroup_sizes(self) -> tuple[tuple[int, int, int], ...]:
        return tuple(e.workgroup_size for e in self.exports)

    def export(self, ordinal: int) -> ExportInfo:
        if not 0 <= ordinal < len(self.exports):
            raise HalError(f"export ordinal {ordinal} out of range; executable has "
                           f"{len(self.exports)} exports", status="OUT_OF_RANGE")
        return self.exports[ordinal]

    def lookup_export(self, name: str) -> int:
        """The ordinal of the export called `name` (NOT_FOUND if absent)."""
        for ordinal, info in enumerate(self.exports):
            if info.name == name:
                return ordinal
        raise HalError(f"executable has no export named '{name}'", status="NOT_FOUND")

    def close(self) -> None:
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ExecutableCache(abc.ABC):
    def __init__(self, device=None, identifier: str = "default"):
        self.device = device
        self.identifier = identifier

    @abc.abstractmethod
    def can_prepare_format(self, executable_format: str) -> bool:
        """True if executables of this format (`embedded-elf-x86_64`, `gfx942`, ...) can be loaded."""

    @abc.abstractmethod
    def prepare_executable(self, executable_format: str, data: bytes,
                           constants: tuple[int, ...] = ()) -> Executable:
        """Load an executable; raises UNIMPLEMENTED/INCOMPATIBLE/INVALID_ARGUMENT on failure."""

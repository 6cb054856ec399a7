"""The CPU driver's HAL executable: a loaded embedded-ELF library (`LocalExecutable`) as the HAL
sees it, with the checked native form of each distinct dispatch kept for reuse. device.py makes
them; program.py records their dispatches into replayable programs.
"""

from __future__ import annotations

import struct
import sys

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.command_buffer import check_constant_count
from amdgpu_cli.hal.enums import DispatchFlags, HalError
from amdgpu_cli.hal.executable import Executable, ExportInfo

from .executable import LocalExecutable, PreparedDispatch

_CUSTOM_DIRECT_ARGUMENTS = int(DispatchFlags.CUSTOM_DIRECT_ARGUMENTS)
_LITTLE_ENDIAN = sys.byteorder == "little" and struct.calcsize("I") == 4
# Prepared dispatches kept per executable; past this many distinct constant sets (constants that
# change on every call) the cache is dropped and refilled.
_PREPARED_DISPATCH_LIMIT = 256


def hal_error(error: AmdgpuCliError, prefix: str = "") -> HalError:
    status = error.status if isinstance(error.status, str) and error.status else "INTERNAL"
    try:
        return HalError(f"{prefix}{error}", status=status)
    except ValueError:  # a status name IREE does not have
        return HalError(f"{prefix}{error}", status="INTERNAL")


def u32_list(data, what: str) -> list[int]:
    """Little-endian u32s from bytes-like data, or ints from a sequence."""
    if data is None:
        return []
    if type(data) is bytes and _LITTLE_ENDIAN:
        if len(data) % 4:
            raise HalError(f"{what} length {len(data)} must be a multiple of 4 bytes",
                           status="INVALID_ARGUMENT")
        return memoryview(data).cast("I").tolist()
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(memoryview(data).cast("B"))
        if len(raw) % 4:
            raise HalError(f"{what} length {len(raw)} must be a multiple of 4 bytes",
                           status="INVALID_ARGUMENT")
        return list(struct.unpack(f"<{len(raw) // 4}I", raw))
    return [int(v) & 0xFFFFFFFF for v in data]


class LocalHalExecutable(Executable):
    """A loaded embedded-ELF library as a HAL executable; `library` is the LocalExecutable."""

    def __init__(self, device, library: LocalExecutable, executable_format: str = "",
                 exports: tuple[ExportInfo, ...] | None = None, shared_prepared=None):
        super().__init__(device)
        self.library = library
        self.format = executable_format
        self._exports = exports if exports is not None else hal_exports(library.exports)
        self._prepared: dict[tuple[int, bytes, int], PreparedDispatch] = {}
        # The checked dispatches of every executable over the same cached image (_LoadedImage):
        # the checks depend only on the image's exports, so another executable's pass.
        self._shared_prepared = shared_prepared

    @property
    def name(self) -> str:
        return self.library.name

    @property
    def exports(self) -> tuple[ExportInfo, ...]:
        return self._exports

    def prepare_dispatch(self, ordinal: int, constants: bytes, flags: int) -> PreparedDispatch:
        """The checked native form of dispatching export `ordinal` with `constants` (bytes, as
        recorded): IREE's inline command buffer checks, made once per distinct (ordinal,
        constants, flags) rather than on every execution of a recorded command buffer."""
        key = (ordinal, constants, int(flags))
        prepared = self._prepared.get(key)
        if prepared is None:
            shared = self._shared_prepared
            if shared is not None:
                checked = shared.get(key)
                if checked is not None:
                    prepared = checked.rebind(self.library)
                    if len(self._prepared) >= _PREPARED_DISPATCH_LIMIT:
                        self._prepared.clear()
                    self._prepared[key] = prepared
                    return prepared
            if int(flags) & _CUSTOM_DIRECT_ARGUMENTS:
                raise HalError("direct/indirect arguments are not supported on the inline CPU "
                               "command buffer", status="UNIMPLEMENTED")
            exports = self._exports
            if not 0 <= ordinal < len(exports):
                raise HalError(f"function id {ordinal} out of range (count: {len(exports)})",
                               status="OUT_OF_RANGE")
            export = exports[ordinal]
            if len(constants) % 4:
                raise HalError("constants must be 4-byte aligned", status="FAILED_PRECONDITION")
            values = u32_list(constants, "constant data")
            check_constant_count(export.constant_count, 4 * len(values))
            try:
                prepared = self.library.prepare(ordinal, values)
            except AmdgpuCliError as error:
                raise hal_error(error) from error
            if len(self._prepared) >= _PREPARED_DISPATCH_LIMIT:
                self._prepared.clear()  # constants that change on every call: nothing to reuse
            self._prepared[key] = prepared
            if shared is not None:
                if len(shared) >= _PREPARED_DISPATCH_LIMIT:
                    shared.clear()
                shared[key] = prepared
        return prepared

    def close(self) -> None:
        if not self._closed:
            self.library.close()
        super().close()


def hal_exports(exports) -> tuple[ExportInfo, ...]:
    return tuple(ExportInfo(e.name, tuple(max(v, 1) for v in e.workgroup_size), e.constant_count,
                            e.binding_count) for e in exports)

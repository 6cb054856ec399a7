"""IoParametersModule: the `io_parameters` native module (version 0) over our HAL.

Owns IREE 3.13.0's three exports (runtime/src/iree/modules/io/parameters/exports.inl, module.c)
and what its index provider does with them (io/parameter_index_provider.c):

  load(device, affinity, wait, signal, scope, target_affinity, memory_types, usage,
       key_table, key_data, spans) -> !vm.list<!hal.buffer>           cconv 0rIrrrIiirrr_r
  gather(device, affinity, wait, signal, scope, target, key_table, key_data, spans)
                                                                    cconv 0rIrrrrrrr_v
  scatter(device, affinity, wait, signal, source, scope, key_table, key_data, spans)
                                                                    cconv 0rIrrrrrrr_v

`scope` is a `!vm.buffer` of UTF-8 (null: the empty scope); `key_table` holds one (u32 offset,
u32 length) pair per parameter into `key_data`; `spans` one (u64 parameter_offset, u64
buffer_offset, u64 length) triple per parameter, and their count is the operation's. Each
parameter is looked up by key in the scope's index (NOT_FOUND), checked for access (PERMISSION
DENIED: the tools open files read-only, splats are read-only) and range (OUT_OF_RANGE), as IREE
words it.

Queue semantics: one batch per call, on one private timeline (IREE spreads a batch over up to 8;
the order of completion is not observable): the first operation waits on `wait`, each next one
on the one before, and a final barrier signals `signal`; a batch with no queue operation is one
barrier from `wait` to `signal`. A failure fails `signal` and traps. Per parameter:
  * load of a preloaded file range (host memory): aliased by a read-only allocator import when
    the allocator takes it and the range is 64-byte aligned (CPU kernels' vector loads), as IREE
    imports host allocations; else (and always for file-mode parameters)
  * load: queue_alloca of `length` bytes, then a queue read of the range into it; gather: the
    queue read into `target` at `buffer_offset`. A queue read is the device's queue_read_file
    (from the file with pread, or from the preloaded bytes, straight into the buffer's memory
    where the queue runs on the host; one staging hop elsewhere: the file is never mapped), on
    a recording device the recorder's queue_read of the imported file;
  * splat parameters: one transfer command buffer of fill_buffer commands, executed once at the
    end of the batch (as IREE's provider does);
  * scatter: a queue write into the parameter's file, which tools never open writable.
Replay capture: files are imported per device on first use (IREE's file cache): preloaded files
as host-allocation files (inline bytes), file-mode ones as fd-backed files under
--device_replay_file_policy (recorder.import_fd_file); host imports are refused under capture
(recorded) so loads take the alloca + read path, as under IREE's recorder.
State: one module per context; it holds the provider but does not close it (the session does).
"""

from __future__ import annotations

import struct

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.buffer import Buffer, host_address
from amdgpu_cli.hal.enums import (BufferUsage, CommandBufferMode, CommandCategory, HalError,
                                  MemoryAccess)
from amdgpu_cli.hal.fence import Fence
from amdgpu_cli.vm.context import NativeFunction, NativeModule
from amdgpu_cli.vm.hal_module import _need, _queue_device
from amdgpu_cli.vm.import_calls import TrappingImport
from amdgpu_cli.vm.refs import VmBuffer, VmList, VmTrap

__all__ = ["IO_PARAMETERS_MODULE_VERSION", "IoParametersModule"]

IO_PARAMETERS_MODULE_VERSION = 0
_ALIGNMENT = 64
_STRING_ENTRY = struct.Struct("<II")
_SPAN_ENTRY = struct.Struct("<QQQ")


def _access_text(access: int) -> str:
    """iree_hal_memory_access_format for the bits a parameter check uses."""
    names = [name for bit, name in ((MemoryAccess.READ, "READ"), (MemoryAccess.WRITE, "WRITE"),
                                    (MemoryAccess.DISCARD, "DISCARD")) if access & bit]
    return "|".join(names) if names else "NONE"


class ParameterFile:
    """`!hal.file` of one parameter file on one device (for recording devices' queue reads)."""

    vm_type = "hal.file"
    capture_ranges = False  # set by the recorder under --device_replay_file_policy=capture-ranges

    def __init__(self, source):
        self.source = source
        self.length = source.file_size

    def view(self, offset: int, length: int) -> memoryview:
        return self.source.file_view()[offset:offset + length]


def _scope_name(buffer) -> str:
    if buffer is None:
        return ""
    return bytes(_need(buffer, VmBuffer, "scope").data).decode("utf-8", errors="replace")


def _indirect_args(key_table, key_data, spans) -> list[tuple[str, int, int, int]]:
    """(key, parameter_offset, buffer_offset, length) per parameter, checked as
    iree_io_parameters_prepare_indirect_args and resolve_string check them."""
    key_table = _need(key_table, VmBuffer, "key table")
    key_data = _need(key_data, VmBuffer, "key data")
    spans = _need(spans, VmBuffer, "spans")
    span_bytes = bytes(spans.data)
    if len(span_bytes) % _SPAN_ENTRY.size:
        raise VmTrap("buffer span storage must be aligned to iree_io_parameters_span_entry_t",
                     status="INVALID_ARGUMENT")
    count = len(span_bytes) // _SPAN_ENTRY.size
    table = bytes(key_table.data)
    if len(table) < count * _STRING_ENTRY.size:
        raise VmTrap("key string table must have enough data to service all defined spans",
                     status="INVALID_ARGUMENT")
    strings = bytes(key_data.data)
    out = []
    for i in range(count):
        offset, length = _STRING_ENTRY.unpack_from(table, i * _STRING_ENTRY.size)
        if offset > len(strings):
            raise VmTrap(f"attempted to access an address off the end of the valid buffer range "
                         f"(offset={offset}, length={length}, data_capacity={len(strings)})",
                         status="OUT_OF_RANGE")
        if length and offset + length > len(strings):
            raise VmTrap(f"attempted to access an address outside of the valid buffer range "
                         f"(offset={offset}, length={length}, end(inc)={offset + length - 1}, "
                         f"data_capacity={len(strings)})", status="OUT_OF_RANGE")
        key = strings[offset:offset + length].decode("utf-8", errors="replace")
        out.append((key, *_SPAN_ENTRY.unpack_from(span_bytes, i * _SPAN_ENTRY.size)))
    return out


def _resolve(scope, key: str, parameter_offset: int, length: int, access: int):
    """(entry, source) of `key`, checked for `access` and the range as IREE checks them."""
    entry, source = scope.lookup(key)
    if entry.file_offset is None:
        allowed = int(MemoryAccess.READ) if entry.splat is not None else 0
    else:
        allowed = (int(MemoryAccess.READ) if source.readable else 0) | (
            int(MemoryAccess.WRITE | MemoryAccess.DISCARD) if source.writable else 0)
    if allowed & access != access:
        raise AmdgpuCliError(f"parameter `{key}` storage does not support the requested access "
                             f"type; parameter allows {_access_text(allowed)}, operation "
                             f"requires {_access_text(access)}", status="PERMISSION_DENIED")
    if parameter_offset + length > entry.length:
        raise AmdgpuCliError(f"parameter `{key}` range out of bounds (offset={parameter_offset}, "
                             f"length={length}, size={entry.length})", status="OUT_OF_RANGE")
    return entry, source


class _Batch:
    """The queue operations of one call, chained on one private timeline (module docstring)."""

    def __init__(self, module: IoParametersModule, device, affinity: int, wait, signal):
        self.module = module
        self.device = device
        self.affinity = affinity
        self.wait = wait
        self.signal = signal
        self.semaphore = None
        self.value = 0
        self.transfer = None  # the splats' command buffer, made on first use

    def step(self) -> tuple[Fence | None, Fence]:
        """(wait, signal) fences of the next operation on the batch's timeline."""
        if self.semaphore is None:
            self.semaphore = self.device.create_semaphore(0)
            wait = self.wait
        else:
            wait = Fence.create(self.semaphore, self.value)
        self.value += 1
        return wait, Fence.create(self.semaphore, self.value)

    def alloca(self, memory_types: int, usage: int, length: int) -> Buffer:
        wait, signal = self.step()
        return self.device.queue_alloca(self.affinity, wait, signal, memory_types, usage, length,
                                        0, 0)

    def read(self, source, entry, parameter_offset: int, target: Buffer, target_offset: int,
             length: int) -> None:
        wait, signal = self.step()
        device = self.device
        if getattr(device, "replay", None) is None:
            # The bytes go from the file (pread, never mapped) or the preloaded copy straight to
            # the buffer.
            device.queue_read_file(self.affinity, wait, signal, source,
                                   entry.file_offset + parameter_offset, target, target_offset,
                                   length, 0)
            return
        data = source.window(entry, parameter_offset, length)
        if getattr(device, "replay", None) is not None:
            file = self.module._file(device, source)
            device.queue_read(self.affinity, wait, signal, file,
                              entry.file_offset + parameter_offset, target, target_offset,
                              length, data, 0)
            return
        device.queue_update(self.affinity, wait, signal, data, 0, target, target_offset, length,
                            0)

    def splat(self, target: Buffer, offset: int, length: int, entry) -> None:
        from amdgpu_cli.hal.command_buffer import BufferRef

        pattern = entry.splat or b""
        if len(pattern) not in (1, 2, 4):
            # Patterns a fill cannot take (8 and 16 bytes): written as their materialized bytes.
            from amdgpu_cli.formats.parameters import splat_bytes

            wait, signal = self.step()
            data = splat_bytes(entry._replace(length=length))
            self.device.queue_update(self.affinity, wait, signal, data, 0, target, offset,
                                     length, 0)
            return
        if self.transfer is None:
            self.transfer = self.device.create_command_buffer(
                CommandBufferMode.ONE_SHOT, CommandCategory.TRANSFER, self.affinity, 0)
            self.transfer.begin()
        self.transfer.fill_buffer(BufferRef.direct(target, offset, length),
                                  int.from_bytes(pattern, "little"), len(pattern))

    def end(self, error: BaseException | None) -> None:
        """Submits the splats and joins the timeline into `signal`; with `error` (or a failure
        here) fails `signal` and raises."""
        if error is None:
            try:
                if self.transfer is not None:
                    self.transfer.end()
                    wait, signal = self.step()
                    self.device.queue_execute(self.affinity, wait, signal, self.transfer, (), 0)
                last = (self.wait if self.semaphore is None
                        else Fence.create(self.semaphore, self.value))
                self.device.queue_barrier(self.affinity, last, self.signal, 0)
                return
            except AmdgpuCliError as e:
                error = e
        if self.signal is not None:
            status = getattr(error, "status", "UNKNOWN")
            self.signal.fail(HalError(str(error), status=status))
        raise error


class IoParametersModule(NativeModule):
    """`io_parameters` over one ParameterProvider (tooling/parameters.py)."""

    name = "io_parameters"
    version = IO_PARAMETERS_MODULE_VERSION

    def __init__(self, provider):
        self.provider = provider
        self._files: dict[tuple[int, int], ParameterFile] = {}
        self._functions = {
            local: NativeFunction(local, cconv, TrappingImport(getattr(self, method),
                                                               cconv.endswith("_r")))
            for local, method, cconv in _EXPORTS}

    def functions(self) -> dict[str, NativeFunction]:
        return self._functions

    def _file(self, device, source) -> ParameterFile:
        """The device's imported file of `source`, imported (and recorded) on first use."""
        key = (id(device), id(source))
        file = self._files.get(key)
        if file is None:
            file = self._files[key] = ParameterFile(source)
            replay = device.replay
            if source.data is not None:  # preloaded: a host allocation, stored inline
                replay.import_file(device, file, access=int(MemoryAccess.READ),
                                   length=file.length, content=bytes(source.data))
            else:
                replay.import_fd_file(device, file, path=source.path,
                                      access=int(MemoryAccess.READ), length=file.length,
                                      content=source.file_view)
        return file

    # -- exports --------------------------------------------------------------------------------
    def load(self, device, affinity, wait, signal, scope, target_affinity, memory_types, usage,
             key_table, key_data, spans):
        device = _queue_device(device, wait, signal)
        scope = self.provider.scope(_scope_name(scope))
        params = _indirect_args(key_table, key_data, spans)
        buffers = VmList.of_type("!hal.buffer", len(params))
        buffers.resize(len(params))
        batch = _Batch(self, device, affinity, wait, signal)
        error = None
        try:
            for i, (key, parameter_offset, buffer_offset, length) in enumerate(params):
                entry, source = _resolve(scope, key, parameter_offset, length,
                                         int(MemoryAccess.READ))
                buffer = None
                if entry.file_offset is not None and source.data is not None:
                    buffer = self._import(device, source.window(entry, parameter_offset, length),
                                          memory_types, usage)
                if buffer is None:
                    buffer = batch.alloca(memory_types, usage, length)
                    if entry.file_offset is None:
                        batch.splat(buffer, buffer_offset, length, entry)
                    else:
                        batch.read(source, entry, parameter_offset, buffer, buffer_offset,
                                   length)
                buffers.set_ref(i, buffer)
        except AmdgpuCliError as e:
            error = e
        batch.end(error)
        return buffers

    def gather(self, device, affinity, wait, signal, scope, target, key_table, key_data, spans):
        device = _queue_device(device, wait, signal)
        target = _need(target, Buffer, "target buffer")
        scope = self.provider.scope(_scope_name(scope))
        params = _indirect_args(key_table, key_data, spans)
        batch = _Batch(self, device, affinity, wait, signal)
        error = None
        try:
            for key, parameter_offset, buffer_offset, length in params:
                entry, source = _resolve(scope, key, parameter_offset, length,
                                         int(MemoryAccess.READ))
                if entry.file_offset is None:
                    batch.splat(target, buffer_offset, length, entry)
                else:
                    batch.read(source, entry, parameter_offset, target, buffer_offset,
                               length)
        except AmdgpuCliError as e:
            error = e
        batch.end(error)

    def scatter(self, device, affinity, wait, signal, source, scope, key_table, key_data, spans):
        device = _queue_device(device, wait, signal)
        source = _need(source, Buffer, "source buffer")
        scope = self.provider.scope(_scope_name(scope))
        params = _indirect_args(key_table, key_data, spans)
        batch = _Batch(self, device, affinity, wait, signal)
        error = None
        try:
            for key, parameter_offset, buffer_offset, length in params:
                # Files are opened read-only (as IREE's tools open them) and splats are
                # read-only: the access check refuses every scatter the tools can make.
                entry, _ = _resolve(scope, key, parameter_offset, length,
                                    int(MemoryAccess.WRITE))
                raise AmdgpuCliError(f"parameter `{key}` is not writable",
                                     status="PERMISSION_DENIED")
        except AmdgpuCliError as e:
            error = e
        batch.end(error)

    @staticmethod
    def _import(device, data: memoryview, memory_types: int, usage: int):
        """A read-only buffer aliasing preloaded bytes, or None where the allocator does not
        take it (IREE then falls back to alloca + read, and so do we)."""
        if data.nbytes and host_address(data) % _ALIGNMENT:
            return None
        try:
            return device.allocator.import_host(
                data, memory_types, usage | BufferUsage.SHARING_IMMUTABLE, writable=False)
        except HalError:  # refused (a recording allocator refuses every host import)
            return None


# (local name, method, cconv) for every export of io_parameters (exports.inl, IREE 3.13.0).
_EXPORTS = (
    ("gather", "gather", "0rIrrrrrrr_v"),
    ("load", "load", "0rIrrrIiirrr_r"),
    ("scatter", "scatter", "0rIrrrrrrr_v"),
)

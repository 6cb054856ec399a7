"""HalModule: the `hal` native module (version 7) that compiled modules import.

Owns the mapping from every export of IREE 3.13.0's `hal` module (runtime/src/iree/modules/hal/
exports.inl, module.c) to the driver-neutral HAL in `amdgpu_cli.hal`: the exact cconvs, the
argument order, and the checks module.c makes before it calls the HAL. Host values arrive as the
interpreter passes them to imports (signed ints, floats, refs; a variadic span `C...D` as a list of
tuples) and results go back the same way.

Semantics: the module is synchronous, as IREE forces it to be in its tools: `fence.await` blocks
and never defers. Queue operations go to the device's queue_* methods in call order. Strings
(`message`, `category`, `key`, `format`, function names) are `!vm.buffer`s of UTF-8 bytes.
Errors: a HalError (or any project error) raised by the HAL becomes a VmTrap with the same status,
so the interpreter locates it at the calling instruction; null refs where IREE requires an object
are INVALID_ARGUMENT ("... is null"), and so are refs of another type ("ref type mismatch"), as
`iree_*_check_deref` reports them: every ref argument is checked before any attribute of it is
used (a module whose registers hold the wrong refs gets one error line, never a Python error).

State: one HalModule per context (it caches one executable cache per device). It holds the devices
but does not close them; whoever created the devices closes them.
Replay capture: devices that record (replay/recorder.py RecordingDevice, `device.replay` set) get
their executable cache at instantiation, as IREE's module does; host files, function lookups,
hal.buffer.load/store and queue reads of files are recorded through that recorder here, and host
imports fail (recorded) so that constants take the file path, as under IREE's recorder.
Sources: IREE runtime/src/iree/modules/hal/{exports.inl,module.c,utils/buffer_diagnostics.c}.
"""

from __future__ import annotations

import struct

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.buffer import Buffer, host_address
from amdgpu_cli.hal.buffer_view import BufferView
from amdgpu_cli.hal.command_buffer import BufferRef, CommandBuffer
from amdgpu_cli.hal.enums import (
    WHOLE_BUFFER,
    BufferUsage,
    HalError,
    MemoryAccess,
    MemoryType,
    StatusCode,
)
from amdgpu_cli.hal.fence import Fence, wait_fences
from amdgpu_cli.vm.context import NativeFunction, NativeModule
from amdgpu_cli.vm.import_calls import TrappingImport
from amdgpu_cli.vm.refs import VmBuffer, VmTrap

__all__ = ["HalFile", "HalModule"]

HAL_MODULE_VERSION = 7
_ALIGNMENT = 64  # CPU kernels use aligned vector loads; IREE allocations are 64-byte aligned


class HalFile:
    """`!hal.file` made by `ex.file.from_memory`: a window of host bytes (a `!vm.buffer`)."""

    vm_type = "hal.file"

    def __init__(self, source: VmBuffer, offset: int, length: int, access: int):
        self.source = source
        self.offset = offset
        self.length = length
        self.access = access

    def view(self, offset: int, length: int) -> memoryview:
        if offset < 0 or length < 0 or offset + length > self.length:
            raise HalError(f"file range [{offset}, {offset + length}) is outside the "
                           f"{self.length}-byte file", status="OUT_OF_RANGE")
        start = self.offset + offset
        return self.source.data[start:start + length]


def _text(buffer, what: str) -> str:
    if buffer is None:
        return ""
    if not isinstance(buffer, VmBuffer):
        raise VmTrap(f"{what} must be a !vm.buffer", status="INVALID_ARGUMENT")
    return bytes(buffer.data).decode("utf-8", errors="replace")


def _need(value, kind: type, what: str):
    if value is None:
        raise VmTrap.null(what)
    if not isinstance(value, kind):
        raise VmTrap(f"{what} has type {type(value).__name__}, expected {kind.__name__}",
                     status="INVALID_ARGUMENT")
    return value


def _need_ref(value, type_name: str, what: str):
    """`value` when it is a ref of VM type `type_name` (`hal.device`, ...); a null or another
    type traps as IREE's `*_check_deref` does (INVALID_ARGUMENT), before any attribute of it is
    used."""
    if value is None:
        raise VmTrap.null(what)
    actual = getattr(value, "vm_type", None)
    if actual != type_name:
        raise VmTrap(f"ref type mismatch; {what} is a {actual or type(value).__name__}, expected "
                     f"{type_name}", status="INVALID_ARGUMENT")
    return value


def _queue_device(device, wait, signal):
    """A queue operation's device, checked with its wait and signal fences (each null or a
    `hal.fence`): a ref of another type traps before the queue touches it."""
    if wait is not None and wait.__class__ is not Fence:
        _need_ref(wait, "hal.fence", "wait fence")
    if signal is not None and signal.__class__ is not Fence:
        _need_ref(signal, "hal.fence", "signal fence")
    return _need_ref(device, "hal.device", "device")


def _fences(span) -> list[Fence]:
    """The non-null fences of a `CrD` span, each checked to be a fence."""
    present = [f for (f,) in span if f is not None]
    for f in present:
        if f.__class__ is not Fence:  # the exact class first: _need's isinstance is a call more
            _need(f, Fence, "fence")
    return present


def _ref(buffer, offset: int, length: int, slot: int) -> BufferRef:
    """A command-buffer reference: direct when `buffer` is non-null, else binding-table `slot`."""
    if buffer is not None:
        return BufferRef.direct(_need(buffer, Buffer, "buffer"), offset, length)
    return BufferRef.indirect(slot, offset, length)


class HalModule(NativeModule):
    """The `hal` module over one or more devices (`devices.count` / `devices.get`)."""

    name = "hal"
    version = HAL_MODULE_VERSION

    def __init__(self, devices):
        self.devices = list(devices) if isinstance(devices, (list, tuple)) else [devices]
        self._caches: dict[int, object] = {}
        self._functions = self._build()
        # A replay capture's recorder (the devices share one), or None.
        self._replay = next((r for r in (getattr(d, "replay", None) for d in self.devices)
                             if r is not None), None)
        if self._replay is not None:
            for device in self.devices:  # IREE's module makes its caches when instantiated
                self._cache(device)

    def functions(self) -> dict[str, NativeFunction]:
        return self._functions

    def _build(self) -> dict[str, NativeFunction]:
        table = {}
        for local_name, method, cconv in _EXPORTS:
            single = len(cconv.partition("_")[2]) == 1 and cconv[-1] != "v"
            table[local_name] = NativeFunction(
                local_name, cconv, TrappingImport(getattr(self, method), single))
        return table

    def _cache(self, device):
        key = id(device)
        cache = self._caches.get(key)
        if cache is None:
            cache = self._caches[key] = device.create_executable_cache()
        return cache

    # -- ex / allocator -------------------------------------------------------------------------
    def ex_file_from_memory(self, device, affinity, access, buffer, offset, length, flags):
        _need_ref(device, "hal.device", "device")
        source = _need(buffer, VmBuffer, "buffer")
        if length == -1:
            length = len(source) - offset
        source.check_range(offset, length)
        file = HalFile(source, offset, length, access)
        replay = getattr(device, "replay", None)
        if replay is not None:
            replay.import_file(device, file, access=access, length=length,
                               content=bytes(source.data[offset:offset + length]))
        return file

    def allocator_select(self, memory_types, usage, flags, candidates):
        if not candidates:
            raise VmTrap("no devices specified for selection", status="INVALID_ARGUMENT")
        device, affinity = candidates[0]
        return device, affinity

    def allocator_allocate(self, allocator, affinity, memory_types, usage, size):
        _need_ref(allocator, "hal.allocator", "allocator")
        return allocator.allocate(memory_types, usage, size)

    def allocator_import(self, allocator, is_try, affinity, memory_types, usage, source, offset,
                         length):
        _need_ref(allocator, "hal.allocator", "allocator")
        source = _need(source, VmBuffer, "source")
        available = len(source)
        if length == -1:
            length = available
        if length < 0 or offset < 0 or offset > available or offset + length > available:
            raise VmTrap(f"byte range out of bounds (requested {offset}-{offset + length - 1} of "
                         f"available {available})", status="INVALID_ARGUMENT")
        immutable = source.readonly
        if immutable and not usage & BufferUsage.SHARING_IMMUTABLE:
            raise VmTrap("source buffer is immutable and can only be imported for constant usage",
                         status="PERMISSION_DENIED")
        writable = not immutable and not usage & BufferUsage.SHARING_IMMUTABLE
        data = source.data[offset:offset + length]
        if getattr(allocator, "replay", None) is not None:
            try:  # refused under capture (recorded), as IREE's recorder refuses it
                return allocator.import_host(data, memory_types, usage, writable=writable)
            except HalError:
                if is_try:
                    return None
                raise
        address = host_address(data) if length else 0
        buffer = None
        if address % _ALIGNMENT == 0:
            buffer = allocator.import_host(data, memory_types, usage, writable=writable)
        elif not writable:
            # Constants that are not 64-byte aligned cannot be aliased safely by CPU kernels;
            # an immutable import is indistinguishable from a copy, so copy.
            buffer = allocator.allocate(memory_types, usage, length)
            if length:
                buffer.write(0, data)
        if buffer is None and not is_try:
            raise VmTrap("allocator cannot import the host buffer", status="UNAVAILABLE")
        return buffer

    # -- buffer ---------------------------------------------------------------------------------
    def buffer_assert(self, buffer, message, allocator, minimum_length, memory_types, usage):
        # Compiled functions assert every argument on every call: the message text is decoded
        # only for an error, and the checks that pass skip their helper calls.
        if message is not None and message.__class__ is not VmBuffer:
            _text(message, "message")  # raises
        if not isinstance(buffer, Buffer):
            _need(buffer, Buffer, f"{_text(message, 'message')} buffer")
        if buffer.byte_length < minimum_length:
            raise VmTrap(f"{_text(message, 'message')} buffer byte length {buffer.byte_length} "
                         f"less than expected minimum {minimum_length}", status="INVALID_ARGUMENT")
        # Plain-int test first; the enum form (whose complement drops unknown bits) decides misses.
        if not (type(memory_types) is int and memory_types >= 0
                and not memory_types & ~buffer._memory_type) and \
                MemoryType(memory_types) & ~buffer.memory_type:
            raise VmTrap(f"{_text(message, 'message')} buffer memory type is not compatible; "
                         f"buffer has {int(buffer.memory_type):08X}, operation requires "
                         f"{memory_types & 0xFFFFFFFF:08X}", status="PERMISSION_DENIED")
        if (usage & 0xFFFFFFFF) & ~buffer._allowed_usage and \
                BufferUsage(usage & 0xFFFFFFFF) & ~buffer.allowed_usage:
            raise VmTrap(f"{_text(message, 'message')} requested usage was not specified when "
                         f"the buffer was allocated; buffer allows "
                         f"{int(buffer.allowed_usage):08X}, operation requires "
                         f"{usage & 0xFFFFFFFF:08X}", status="PERMISSION_DENIED")
        if allocator is None:
            raise VmTrap.null("allocator")

    def buffer_allocation_preserve(self, buffer):
        _need(buffer, Buffer, "buffer").allocation_preserve()

    def buffer_allocation_discard(self, buffer):
        return int(_need(buffer, Buffer, "buffer").allocation_discard())

    def buffer_allocation_is_terminal(self, buffer):
        return int(_need(buffer, Buffer, "buffer").allocation_is_terminal())

    def buffer_subspan(self, buffer, offset, length):
        return _need(buffer, Buffer, "source buffer").subspan(offset, length)

    def buffer_length(self, buffer):
        return _need(buffer, Buffer, "buffer").byte_length

    def buffer_load(self, buffer, offset, length):
        buffer = _need(buffer, Buffer, "source buffer")
        if length > 4:
            raise VmTrap(f"load length byte count {length} exceeds max", status="INVALID_ARGUMENT")
        if self._replay is not None:
            return int.from_bytes(self._replay.read_mapped(buffer, offset, length)[0], "little")
        return int.from_bytes(buffer.read(offset, length), "little")

    def buffer_store(self, value, buffer, offset, length):
        buffer = _need(buffer, Buffer, "target buffer")
        if length > 4:
            raise VmTrap(f"store length byte count {length} exceeds max",
                         status="INVALID_ARGUMENT")
        if offset + length > buffer.byte_length:
            raise VmTrap(f"store out of bounds (target_offset={offset}, length={length} into max "
                         f"{buffer.byte_length})", status="OUT_OF_RANGE")
        data = (value & 0xFFFFFFFF).to_bytes(4, "little")[:length]
        if self._replay is not None:
            self._replay.write_mapped(buffer, offset, data, access=int(MemoryAccess.WRITE))
            return
        buffer.write(offset, data)

    # -- buffer_view ----------------------------------------------------------------------------
    def buffer_view_create(self, buffer, offset, length, element_type, encoding_type, dims):
        if not isinstance(buffer, Buffer):
            _need(buffer, Buffer, "source buffer")
        return BufferView.of_ints(buffer, offset, length, tuple([d for (d,) in dims]),
                                  element_type & 0xFFFFFFFF, encoding_type & 0xFFFFFFFF)

    def buffer_view_assert(self, view, message, element_type, encoding_type, dims):
        # What compiled functions assert on every call, an exact match, needs no message text.
        if (view.__class__ is BufferView and view.element_type == element_type & 0xFFFFFFFF
                and view.encoding_type == encoding_type & 0xFFFFFFFF
                and view.shape == tuple([d for (d,) in dims])
                and (message is None or message.__class__ is VmBuffer)):
            return
        what = _text(message, "message")
        view = _need(view, BufferView, what or "buffer view")
        view.assert_matches(what, element_type & 0xFFFFFFFF, encoding_type & 0xFFFFFFFF,
                            [d for (d,) in dims])

    def buffer_view_buffer(self, view):
        if not isinstance(view, BufferView):
            _need(view, BufferView, "buffer view")
        return view.buffer

    def buffer_view_element_type(self, view):
        return _need(view, BufferView, "buffer view").element_type

    def buffer_view_encoding_type(self, view):
        return _need(view, BufferView, "buffer view").encoding_type

    def buffer_view_rank(self, view):
        return _need(view, BufferView, "buffer view").rank

    def buffer_view_dim(self, view, index):
        return _need(view, BufferView, "buffer view").dim(index)

    def buffer_view_trace(self, key, views):
        pass  # IREE's default trace sink discards

    # -- channel (collectives need a multi-process group; not provided) --------------------------
    def _no_channels(self, *args):
        raise VmTrap("collective channels are not available in this runtime",
                     status="UNIMPLEMENTED")

    channel_create = channel_split = channel_rank_and_count = _no_channels

    # -- command_buffer -------------------------------------------------------------------------
    def command_buffer_create(self, device, modes, categories, affinity, binding_capacity):
        _need_ref(device, "hal.device", "device")
        cb = device.create_command_buffer(modes, categories, affinity, binding_capacity)
        cb.begin()
        return cb

    def command_buffer_finalize(self, cb):
        _need(cb, CommandBuffer, "command buffer").end()

    def command_buffer_begin_debug_group(self, cb, label):
        _need(cb, CommandBuffer, "command buffer").begin_debug_group(_text(label, "label"))

    def command_buffer_end_debug_group(self, cb):
        _need(cb, CommandBuffer, "command buffer").end_debug_group()

    def command_buffer_execution_barrier(self, cb, source_stage_mask, target_stage_mask, flags):
        _need(cb, CommandBuffer, "command buffer").execution_barrier(
            source_stage_mask & 0xFFFFFFFF, target_stage_mask & 0xFFFFFFFF, flags)

    def command_buffer_advise_buffer(self, cb, buffer, flags, arg0, arg1, slot):
        _need(cb, CommandBuffer, "command buffer").advise_buffer(
            _ref(buffer, 0, WHOLE_BUFFER, slot), flags, arg0, arg1)

    def command_buffer_fill_buffer(self, cb, target, offset, length, slot, pattern,
                                   pattern_length, flags):
        _need(cb, CommandBuffer, "command buffer").fill_buffer(
            _ref(target, offset, length, slot), pattern, pattern_length, flags)

    def command_buffer_update_buffer(self, cb, source, source_offset, target, target_offset,
                                     length, slot, flags):
        source = _need(source, VmBuffer, "source buffer")
        _need(cb, CommandBuffer, "command buffer").update_buffer(
            source.data, source_offset, _ref(target, target_offset, length, slot), flags)

    def command_buffer_copy_buffer(self, cb, source_slot, target_slot, source, source_offset,
                                   target, target_offset, length, flags):
        _need(cb, CommandBuffer, "command buffer").copy_buffer(
            _ref(source, source_offset, length, source_slot),
            _ref(target, target_offset, length, target_slot), flags)

    def command_buffer_collective(self, *args):
        raise VmTrap("collectives are not available in this runtime", status="UNIMPLEMENTED")

    @staticmethod
    def _bindings(bindings):
        return [_ref(buffer, offset, length, slot) for _reserved, slot, buffer, offset, length
                in bindings]

    def command_buffer_dispatch(self, cb, executable, entry_point, x, y, z, flags, constants,
                                bindings):
        _need_ref(executable, "hal.executable", "executable")
        _need(cb, CommandBuffer, "command buffer").dispatch(
            executable, entry_point, (x & 0xFFFFFFFF, y & 0xFFFFFFFF, z & 0xFFFFFFFF),
            [c for (c,) in constants], self._bindings(bindings), flags)

    def command_buffer_dispatch_indirect(self, cb, executable, entry_point, workgroups_slot,
                                         workgroups_buffer, workgroups_offset, flags, constants,
                                         bindings):
        _need_ref(executable, "hal.executable", "executable")
        _need(cb, CommandBuffer, "command buffer").dispatch_indirect(
            executable, entry_point,
            _ref(workgroups_buffer, workgroups_offset, 12, workgroups_slot),
            [c for (c,) in constants], self._bindings(bindings), flags)

    # -- device ---------------------------------------------------------------------------------
    def device_allocator(self, device):
        _need_ref(device, "hal.device", "device")
        return device.allocator

    def device_query_i64(self, device, category, key):
        _need_ref(device, "hal.device", "device")
        ok, value = device.query_i64(_text(category, "category"), _text(key, "key"))
        return int(bool(ok)), int(value) if ok else 0

    def device_queue_alloca(self, device, affinity, wait, signal, pool, memory_types, usage,
                            size, flags):
        _queue_device(device, wait, signal)
        return device.queue_alloca(affinity, wait, signal, memory_types, usage, size, pool, flags)

    def device_queue_dealloca(self, device, affinity, wait, signal, buffer, flags):
        _queue_device(device, wait, signal)
        if not isinstance(buffer, Buffer):
            _need(buffer, Buffer, "buffer")
        device.queue_dealloca(affinity, wait, signal, buffer, flags)

    def device_queue_fill(self, device, affinity, wait, signal, target, offset, length, pattern,
                          pattern_length, flags):
        _queue_device(device, wait, signal).queue_fill(
            affinity, wait, signal, _need(target, Buffer, "target buffer"), offset, length,
            pattern, pattern_length, flags)

    def device_queue_update(self, device, affinity, wait, signal, source, source_offset, target,
                            target_offset, length, flags):
        source = _need(source, VmBuffer, "source buffer")
        _queue_device(device, wait, signal).queue_update(
            affinity, wait, signal, source.data, source_offset,
            _need(target, Buffer, "target buffer"), target_offset, length, flags)

    def device_queue_copy(self, device, affinity, wait, signal, source, source_offset, target,
                          target_offset, length, flags):
        _queue_device(device, wait, signal).queue_copy(
            affinity, wait, signal, _need(source, Buffer, "source buffer"), source_offset,
            _need(target, Buffer, "target buffer"), target_offset, length, flags)

    def device_queue_read(self, device, affinity, wait, signal, source, source_offset, target,
                          target_offset, length, flags):
        source = _need(source, HalFile, "source file")
        data = source.view(source_offset, length)
        if getattr(device, "replay", None) is not None:
            _queue_device(device, wait, signal).queue_read(
                affinity, wait, signal, source, source_offset,
                _need(target, Buffer, "target buffer"), target_offset, length, data, flags)
            return
        _queue_device(device, wait, signal).queue_update(
            affinity, wait, signal, data, 0, _need(target, Buffer, "target buffer"),
            target_offset, length, flags)

    def device_queue_write(self, device, affinity, wait, signal, source, source_offset, target,
                           target_offset, length, flags):
        device = _queue_device(device, wait, signal)
        source = _need(source, Buffer, "source buffer")
        target = _need(target, HalFile, "target file")
        if target.source.readonly:
            raise VmTrap("file is read-only", status="PERMISSION_DENIED")
        view = target.view(target_offset, length)
        device.queue_barrier(affinity, wait, None)  # order after `wait`
        try:
            view[:] = source.read(source_offset, length)
        except AmdgpuCliError as e:
            if signal is not None:
                signal.fail(HalError(str(e), status=e.status))
            raise
        if signal is not None:
            signal.signal()

    def device_queue_barrier(self, device, affinity, wait, signal, flags):
        _queue_device(device, wait, signal).queue_barrier(affinity, wait, signal, flags)

    def device_queue_execute(self, device, affinity, wait, signal, cb, flags):
        _queue_device(device, wait, signal).queue_execute(
            affinity, wait, signal, _need(cb, CommandBuffer, "command buffer"), (), flags)

    def device_queue_execute_indirect(self, device, affinity, wait, signal, cb, flags, table):
        for buffer, _, _ in table:
            if buffer is not None and not isinstance(buffer, Buffer):
                _need(buffer, Buffer, "binding buffer")
        _queue_device(device, wait, signal)
        if not isinstance(cb, CommandBuffer):
            _need(cb, CommandBuffer, "command buffer")
        # The span's (buffer, offset, length) tuples are binding-table entries as they are.
        device.queue_execute(affinity, wait, signal, cb, table, flags)

    def device_queue_flush(self, device, affinity):
        _need_ref(device, "hal.device", "device").queue_flush(affinity)

    # -- devices --------------------------------------------------------------------------------
    def devices_count(self):
        return len(self.devices)

    def devices_get(self, index):
        return self.devices[index] if 0 <= index < len(self.devices) else None

    # -- executable -----------------------------------------------------------------------------
    def executable_create(self, device, affinity, executable_format, data, constants):
        device = _need_ref(device, "hal.device", "device")
        fmt = _text(executable_format, "executable format")
        data = _need(data, VmBuffer, "executable data")
        values = ()
        if constants is not None:
            raw = bytes(_need(constants, VmBuffer, "constants").data)
            if len(raw) % 4:
                raise VmTrap(f"constant buffer data must contain 4-byte elements but data length "
                             f"is {len(raw)}", status="INVALID_ARGUMENT")
            values = struct.unpack(f"<{len(raw) // 4}I", raw)
        return self._cache(device).prepare_executable(fmt, bytes(data.data), values)

    def executable_lookup_function(self, executable, name):
        _need_ref(executable, "hal.executable", "executable")
        if self._replay is not None:
            return self._replay.lookup_function(executable, _text(name, "function name"),
                                                executable.lookup_export)
        return executable.lookup_export(_text(name, "function name"))

    # -- fence ----------------------------------------------------------------------------------
    def fence_create(self, device, flags):
        _need_ref(device, "hal.device", "device")
        return Fence.create(device.create_semaphore(0), 1)

    def fence_join(self, flags, fences):
        joined = Fence.join(*_fences(fences))
        return joined if len(joined) else None

    def fence_query(self, fence):
        return int(_need(fence, Fence, "fence").query())

    def fence_signal(self, fence):
        _need(fence, Fence, "fence").signal()

    def fence_fail(self, fence, status):
        code = StatusCode(status) if status in StatusCode._value2member_map_ else StatusCode.UNKNOWN
        _need(fence, Fence, "fence").fail(code)

    def fence_await(self, timeout_ms, flags, fences):
        present = _fences(fences)
        timeout = None if timeout_ms & 0xFFFFFFFF == 0xFFFFFFFF else timeout_ms / 1000.0
        try:
            wait_fences(present, timeout=timeout)
        except HalError as e:
            if e.status == "DEADLINE_EXCEEDED":
                return int(StatusCode.DEADLINE_EXCEEDED)
            raise
        return 0


# (local name, method, cconv) for every export of hal v7 (exports.inl, IREE 3.13.0).
_EXPORTS = (
    ("allocator.allocate", "allocator_allocate", "0rIiiI_r"),
    ("allocator.import", "allocator_import", "0riIiirII_r"),
    ("allocator.select", "allocator_select", "0iiICrID_rI"),
    ("buffer.allocation.discard", "buffer_allocation_discard", "0r_i"),
    ("buffer.allocation.is_terminal", "buffer_allocation_is_terminal", "0r_i"),
    ("buffer.allocation.preserve", "buffer_allocation_preserve", "0r_v"),
    ("buffer.assert", "buffer_assert", "0rrrIii_v"),
    ("buffer.length", "buffer_length", "0r_I"),
    ("buffer.load", "buffer_load", "0rIi_i"),
    ("buffer.store", "buffer_store", "0irIi_v"),
    ("buffer.subspan", "buffer_subspan", "0rII_r"),
    ("buffer_view.assert", "buffer_view_assert", "0rriiCID_v"),
    ("buffer_view.buffer", "buffer_view_buffer", "0r_r"),
    ("buffer_view.create", "buffer_view_create", "0rIIiiCID_r"),
    ("buffer_view.dim", "buffer_view_dim", "0ri_I"),
    ("buffer_view.element_type", "buffer_view_element_type", "0r_i"),
    ("buffer_view.encoding_type", "buffer_view_encoding_type", "0r_i"),
    ("buffer_view.rank", "buffer_view_rank", "0r_i"),
    ("buffer_view.trace", "buffer_view_trace", "0rCrD_v"),
    ("channel.create", "channel_create", "0rIIrrii_r"),
    ("channel.rank_and_count", "channel_rank_and_count", "0r_ii"),
    ("channel.split", "channel_split", "0riiI_r"),
    ("command_buffer.advise_buffer", "command_buffer_advise_buffer", "0rrIIIi_v"),
    ("command_buffer.begin_debug_group", "command_buffer_begin_debug_group", "0rr_v"),
    ("command_buffer.collective", "command_buffer_collective", "0rriiiirrIIIII_v"),
    ("command_buffer.copy_buffer", "command_buffer_copy_buffer", "0riirIrIII_v"),
    ("command_buffer.create", "command_buffer_create", "0riiIi_r"),
    ("command_buffer.dispatch", "command_buffer_dispatch", "0rrIiiiICiDCiirIID_v"),
    ("command_buffer.dispatch.indirect", "command_buffer_dispatch_indirect",
     "0rrIirIICiDCiirIID_v"),
    ("command_buffer.end_debug_group", "command_buffer_end_debug_group", "0r_v"),
    ("command_buffer.execution_barrier", "command_buffer_execution_barrier", "0riiI_v"),
    ("command_buffer.fill_buffer", "command_buffer_fill_buffer", "0rrIIiIiI_v"),
    ("command_buffer.finalize", "command_buffer_finalize", "0r_v"),
    ("command_buffer.update_buffer", "command_buffer_update_buffer", "0rrIrIIiI_v"),
    ("device.allocator", "device_allocator", "0r_r"),
    ("device.query.i64", "device_query_i64", "0rrr_iI"),
    ("device.queue.alloca", "device_queue_alloca", "0rIrrIiiII_r"),
    ("device.queue.barrier", "device_queue_barrier", "0rIrrI_v"),
    ("device.queue.copy", "device_queue_copy", "0rIrrrIrIII_v"),
    ("device.queue.dealloca", "device_queue_dealloca", "0rIrrrI_v"),
    ("device.queue.execute", "device_queue_execute", "0rIrrrI_v"),
    ("device.queue.execute.indirect", "device_queue_execute_indirect", "0rIrrrICrIID_v"),
    ("device.queue.fill", "device_queue_fill", "0rIrrrIIIiI_v"),
    ("device.queue.flush", "device_queue_flush", "0rI_v"),
    ("device.queue.read", "device_queue_read", "0rIrrrIrIII_v"),
    ("device.queue.update", "device_queue_update", "0rIrrrIrIII_v"),
    ("device.queue.write", "device_queue_write", "0rIrrrIrIII_v"),
    ("devices.count", "devices_count", "0v_i"),
    ("devices.get", "devices_get", "0i_r"),
    ("ex.file.from_memory", "ex_file_from_memory", "0rIirIIi_r"),
    ("executable.create", "executable_create", "0rIrrr_r"),
    ("executable.lookup.function", "executable_lookup_function", "0rr_I"),
    ("fence.await", "fence_await", "0iICrD_i"),
    ("fence.create", "fence_create", "0rI_r"),
    ("fence.fail", "fence_fail", "0ri_v"),
    ("fence.join", "fence_join", "0ICrD_r"),
    ("fence.query", "fence_query", "0r_i"),
    ("fence.signal", "fence_signal", "0r_v"),
)

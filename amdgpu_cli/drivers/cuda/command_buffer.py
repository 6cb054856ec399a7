"""Command buffers on a CUDA stream: recorded HAL commands replayed as CUDA calls.

Our CommandBuffer (hal/command_buffer.py) already keeps the recorded command list; executing it
here is IREE's STREAM mode (the tools' default, reference replay-benchmark-cuda.md §3.8): at
queue-execute time each command is issued on the device's one stream, in order —
  - dispatch: `cuLaunchKernel(function, workgroup count, block dims, shared memory, stream,
    params)` with the parameters packed as IREE's stream_command_buffer.c packs them
    (`pack_kernel_params`, §3.7): binding_count 64-bit device pointers (buffer base + offset;
    0 for a NULL buffer), then constant_count 32-bit constants, each in the low half of its own
    8-byte slot; `params[i]` points at slot i. Counts come from the executable's export; a
    dispatch with fewer bindings or constants than its export declares is INVALID_ARGUMENT
    (IREE's validation refuses it before recording). Indirect workgroup counts are
    UNIMPLEMENTED, as in IREE's CUDA streams. A dispatch with a zero workgroup count launches
    nothing (CUDA refuses an empty grid).
  - fill: `cuMemsetD8/D16/D32Async` by pattern length (others INTERNAL `unsupported fill pattern
    length`, as IREE); update: `cuMemcpyHtoDAsync_v2` from the recorded bytes; copy:
    `cuMemcpyAsync` (unified addressing infers the direction).
  - execution barrier, debug groups, advise: nothing (the stream is in order); collectives
    UNIMPLEMENTED.
The caller (device.py) holds the stream lock and synchronizes the stream afterwards, so the host
memory referenced by async copies lives until they are done.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from amdgpu_cli.drivers.cuda.allocator import device_pointer
from amdgpu_cli.hal.command_buffer import (
    AdviseBufferCommand,
    CollectiveCommand,
    CopyCommand,
    DebugGroupCommand,
    DispatchCommand,
    ExecutionBarrierCommand,
    FillCommand,
    UpdateCommand,
    resolve_copy,
    resolve_ref,
)
from amdgpu_cli.hal.enums import HalError

PARAM_SLOT_SIZE = 8


def pack_kernel_params(binding_pointers: Sequence[int], constants: bytes,
                       constant_count: int) -> bytes:
    """The kernel parameter payload: one 8-byte slot per binding (its device pointer, little
    endian), then one per constant (the u32 in the low 4 bytes, the high 4 bytes zero). Only the
    first `constant_count` constants are used; fewer is INVALID_ARGUMENT."""
    if len(constants) < 4 * constant_count:
        raise HalError(f"dispatch provides {len(constants) // 4} constants but the kernel "
                       f"expects {constant_count}", status="INVALID_ARGUMENT")
    slots = [int(p) & 0xFFFFFFFFFFFFFFFF for p in binding_pointers]
    slots += struct.unpack_from(f"<{constant_count}I", constants, 0)
    return struct.pack(f"<{len(slots)}Q", *slots)


def param_offsets(slot_count: int) -> list[int]:
    """Byte offset of each parameter in the payload (`params[i] = payload + offset[i]`)."""
    return [PARAM_SLOT_SIZE * i for i in range(slot_count)]


def binding_pointers(command: DispatchCommand, binding_count: int, binding_table=()) -> list[int]:
    """Device pointers of a dispatch's first `binding_count` bindings."""
    if len(command.bindings) < binding_count:
        raise HalError(f"dispatch provides {len(command.bindings)} bindings but the kernel "
                       f"expects {binding_count}", status="INVALID_ARGUMENT")
    pointers = []
    for ref in command.bindings[:binding_count]:
        if ref.buffer is None and ref.slot < len(binding_table) and \
                binding_table[ref.slot][0] is None:
            pointers.append(0)  # a NULL buffer in the table: IREE passes 0
            continue
        buffer, offset, _ = resolve_ref(ref, binding_table)
        pointers.append(device_pointer(buffer, offset))
    return pointers


def fill_call(pattern: bytes) -> tuple[str, int]:
    """(the memset function, the value) for a 1, 2 or 4-byte fill pattern."""
    size = len(pattern)
    if size == 1:
        return "cuMemsetD8Async", pattern[0]
    if size == 2:
        return "cuMemsetD16Async", int.from_bytes(pattern, "little")
    if size == 4:
        return "cuMemsetD32Async", int.from_bytes(pattern, "little")
    raise HalError(f"unsupported fill pattern length {size}", status="INTERNAL")


# -- issuing on the stream (needs a device: context current, stream lock held) --------------------

def issue_fill(device, target: int, length: int, pattern: bytes) -> None:
    if not length:
        return
    if length % len(pattern) or target % len(pattern):
        raise HalError("fill range is not aligned to the pattern length",
                       status="INVALID_ARGUMENT")
    function, value = fill_call(pattern)
    device.libcuda.call(function, target, value, length // len(pattern), device.stream)


def issue_update(device, target: int, data, keep: list) -> None:
    source = memoryview(data).cast("B")
    if not source.nbytes:
        return
    ffi = device.libcuda.ffi
    host = ffi.from_buffer(source)
    keep.append((source, host))  # alive until the stream is synchronized
    device.libcuda.call("cuMemcpyHtoDAsync_v2", target, host, source.nbytes, device.stream)


def issue_copy(device, target: int, source: int, length: int) -> None:
    if length:
        device.libcuda.call("cuMemcpyAsync", target, source, length, device.stream)


def issue_dispatch(device, command: DispatchCommand, binding_table=()) -> None:
    if command.workgroup_count is None or command.workgroup_count_ref is not None:
        raise HalError("indirect parameters are not supported in CUDA streams",
                       status="UNIMPLEMENTED")
    function, export = command.executable.kernel(command.entry_point)
    pointers = binding_pointers(command, export.binding_count, binding_table)
    payload = pack_kernel_params(pointers, command.constants, export.constant_count)
    grid = command.workgroup_count
    if not (grid[0] and grid[1] and grid[2]):
        return
    lib = device.libcuda
    ffi = lib.ffi
    count = len(payload) // PARAM_SLOT_SIZE
    params = ffi.NULL
    if count:
        slots = ffi.new("uint64_t[]", count)
        ffi.memmove(slots, payload, len(payload))
        params = ffi.new("void*[]", [ffi.cast("void*", slots + i) for i in range(count)])
    block = export.block_dims
    # CUDA copies the parameter values at launch: slots/params may go once this returns.
    lib.call("cuLaunchKernel", function, grid[0], grid[1], grid[2], block[0], block[1],
             block[2], export.block_shared_memory_size, device.stream, params, ffi.NULL)


def issue_command(device, command, binding_table, keep: list) -> None:
    """One recorded command on the stream."""
    if isinstance(command, DispatchCommand):
        issue_dispatch(device, command, binding_table)
    elif isinstance(command, (ExecutionBarrierCommand, DebugGroupCommand, AdviseBufferCommand)):
        pass  # the stream is in order
    elif isinstance(command, FillCommand):
        buffer, offset, length = resolve_ref(command.target, binding_table)
        issue_fill(device, device_pointer(buffer, offset), length, command.pattern)
    elif isinstance(command, UpdateCommand):
        buffer, offset, length = resolve_ref(command.target, binding_table)
        issue_update(device, device_pointer(buffer, offset), command.source[:length], keep)
    elif isinstance(command, CopyCommand):
        src, src_offset, dst, dst_offset, length = resolve_copy(command, binding_table)
        issue_copy(device, device_pointer(dst, dst_offset), device_pointer(src, src_offset),
                   length)
    elif isinstance(command, CollectiveCommand):
        raise HalError("collectives are not supported on the cuda device",
                       status="UNIMPLEMENTED")
    else:
        raise HalError(f"unknown command {type(command).__name__}", status="INTERNAL")


def issue_command_buffer(device, command_buffer, binding_table, keep: list) -> None:
    for command in command_buffer.commands:
        issue_command(device, command, binding_table, keep)

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
from amdgpu_cli.hal.enums import CommandBufferMode, HalError

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
    device.stream_work += 1


def issue_update(device, target: int, data, keep: list) -> None:
    source = memoryview(data).cast("B")
    if not source.nbytes:
        return
    ffi = device.libcuda.ffi
    host = ffi.from_buffer(source)
    keep.append((source, host))  # alive until the stream is synchronized
    device.libcuda.call("cuMemcpyHtoDAsync_v2", target, host, source.nbytes, device.stream)
    device.stream_work += 1


def issue_copy(device, target: int, source: int, length: int) -> None:
    if length:
        device.libcuda.call("cuMemcpyAsync", target, source, length, device.stream)
        device.stream_work += 1


def issue_dispatch(device, command: DispatchCommand, binding_table=(), launches=None,
                   index: int = 0) -> None:
    """Launches one dispatch. `launches` (a dict the command buffer keeps: command index ->
    (the binding pointers, the packed parameter array)) saves re-packing a dispatch whose
    pointers did not change since its last execution."""
    if command.workgroup_count is None or command.workgroup_count_ref is not None:
        raise HalError("indirect parameters are not supported in CUDA streams",
                       status="UNIMPLEMENTED")
    function, export = command.executable.kernel(command.entry_point, device)
    pointers = binding_pointers(command, export.binding_count, binding_table)
    grid = command.workgroup_count
    lib = device.libcuda
    ffi = lib.ffi
    known = launches.get(index) if launches is not None else None
    if known is not None and known[0] == pointers:
        params = known[1]
    else:
        payload = pack_kernel_params(pointers, command.constants, export.constant_count)
        count = len(payload) // PARAM_SLOT_SIZE
        array = slots = ffi.NULL
        if count:
            slots = ffi.new("uint64_t[]", count)
            ffi.memmove(slots, payload, len(payload))
            array = ffi.new("void*[]", [ffi.cast("void*", slots + i) for i in range(count)])
        params = (array, slots)  # the slots live as long as the pointer array
        if launches is not None:
            launches[index] = (pointers, params)
    if not (grid[0] and grid[1] and grid[2]):
        return
    block = export.block_dims
    # CUDA copies the parameter values at launch: the arrays may be reused or go at once.
    lib.call("cuLaunchKernel", function, grid[0], grid[1], grid[2], block[0], block[1],
             block[2], export.block_shared_memory_size, device.stream, params[0], ffi.NULL)
    device.stream_work += 1


def issue_command(device, command, binding_table, keep: list, launches=None,
                  index: int = 0) -> None:
    """One recorded command on the stream (`launches`, `index`: see issue_dispatch)."""
    if isinstance(command, DispatchCommand):
        issue_dispatch(device, command, binding_table, launches, index)
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


def launch_cache(command_buffer) -> dict:
    """The command buffer's packed launch parameters (see issue_dispatch)."""
    launches = getattr(command_buffer, "cuda_launches", None)
    if launches is None:
        launches = command_buffer.cuda_launches = {}
    return launches


def issue_command_buffer(device, command_buffer, binding_table, keep: list) -> None:
    if device.use_graphs and issue_as_graph(device, command_buffer, binding_table, keep):
        return
    launches = launch_cache(command_buffer)
    for index, command in enumerate(command_buffer.commands):
        issue_command(device, command, binding_table, keep, launches, index)


# -- graphs (the cuda driver's `use_streams=False`) ------------------------------------------------

GRAPH_CACHE_SIZE = 4  # graphs kept per command buffer (binding tables seen most recently)
_GRAPHABLE = (DispatchCommand, ExecutionBarrierCommand, DebugGroupCommand, AdviseBufferCommand,
              FillCommand, CopyCommand)


def graphable(command_buffer) -> int:
    """How many dispatches a command buffer that can run as a CUDA graph holds (0 when it
    cannot: one-shot, or something other than direct dispatches, barriers, fills and copies —
    host data, collectives, indirect workgroup counts; or CUDA refused to capture it)."""
    known = getattr(command_buffer, "cuda_graphable", None)
    if known is None:
        commands = command_buffer.commands
        ok = not (int(command_buffer.mode) & int(CommandBufferMode.ONE_SHOT)) and all(
            isinstance(c, _GRAPHABLE) and not (isinstance(c, DispatchCommand) and (
                c.workgroup_count is None or c.workgroup_count_ref is not None))
            for c in commands)
        known = sum(isinstance(c, DispatchCommand) for c in commands) if ok else 0
        command_buffer.cuda_graphable = known
    return known


def graph_key(binding_table) -> tuple:
    """What a captured graph depends on beyond the command buffer: each binding-table entry's
    device address and length."""
    return tuple((0, 0) if entry[0] is None else (device_pointer(entry[0], entry[1]), entry[2])
                 for entry in binding_table)


def issue_as_graph(device, command_buffer, binding_table, keep: list) -> bool:
    """Launches the command buffer as a CUDA graph captured from its stream commands (once per
    binding table: the latest GRAPH_CACHE_SIZE are kept); False when it cannot be one (the
    caller then issues it command by command)."""
    if not graphable(command_buffer):
        return False
    key = graph_key(binding_table)
    graphs = device.graphs_of(command_buffer)
    graph_exec = graphs.get(key)
    lib = device.libcuda
    if graph_exec is None:
        graph_exec = capture_graph(device, command_buffer, binding_table, keep)
        if graph_exec is None:
            command_buffer.cuda_graphable = False
            return False
        graphs[key] = graph_exec
        while len(graphs) > GRAPH_CACHE_SIZE:
            lib.lib.cuGraphExecDestroy(graphs.pop(next(iter(graphs))))
    lib.call("cuGraphLaunch", graph_exec, device.stream)
    device.stream_work += 1
    return True


def capture_graph(device, command_buffer, binding_table, keep: list):
    """The instantiated graph of the command buffer's commands, or None when CUDA refuses to
    capture one of them (the stream is left as it was)."""
    from amdgpu_cli.drivers.cuda.cuda_ffi import CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, CudaError

    lib = device.libcuda
    ffi = lib.ffi
    lib.call("cuStreamBeginCapture_v2", device.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
    graph = ffi.new("CUgraph*")
    work = device.stream_work
    try:
        for index, command in enumerate(command_buffer.commands):
            issue_command(device, command, binding_table, keep, None, index)
    except CudaError:
        lib.lib.cuStreamEndCapture(device.stream, graph)
        if graph[0] != ffi.NULL:
            lib.lib.cuGraphDestroy(graph[0])
        device.stream_work = work
        return None
    except BaseException:
        lib.lib.cuStreamEndCapture(device.stream, graph)
        if graph[0] != ffi.NULL:
            lib.lib.cuGraphDestroy(graph[0])
        raise
    device.stream_work = work
    lib.call("cuStreamEndCapture", device.stream, graph)
    try:
        graph_exec = lib.out("CUgraphExec", "cuGraphInstantiateWithFlags", graph[0], 0)
    finally:
        lib.lib.cuGraphDestroy(graph[0])
    return graph_exec

"""Command-buffer replay on the amdgpu device over softhsa.

A command buffer recorded once with a dispatch of an iree-compile'd gfx942 kernel is executed
several times; every execution must show up in softhsa's dispatch log as one dispatch whose grid is
workgroup count x the export's workgroup size and whose kernarg bytes, decoded at the offsets
LLVM's metadata gives (`llvm-readobj-19 --notes`, not our decoder), hold the device addresses of the
bound buffers, the constants recorded and the workgroup counts. Transfers recorded in the same
command buffer compute for real (device-library kernels run by softhsa)."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from amdgpu_cli.formats.amdgpu_executable import parse_amdgpu_executable
from amdgpu_cli.hal.command_buffer import Binding, BufferRef
from amdgpu_cli.hal.enums import (
    BufferUsage,
    CommandBufferMode,
    CommandCategory,
    ExecutionStage,
    HalError,
    MemoryType,
)
from amdgpu_cli.hal.fence import Fence

from .softhsa_agents import CONFIG, private_driver
from .test_executable import compile_amd1, llvm_kernels

MODEL = """
func.func @scale(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %r = arith.mulf %a, %b : tensor<?xf32>
  return %r : tensor<?xf32>
}
"""
HOST_VISIBLE = MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE
MAPPABLE = (BufferUsage.DEFAULT | BufferUsage.MAPPING_SCOPED
            | BufferUsage.DISPATCH_INDIRECT_PARAMETERS)
STAGES = ExecutionStage.DISPATCH | ExecutionStage.TRANSFER
_INTS = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}


@pytest.fixture(scope="module")
def setup(softhsa_lib, tmp_path_factory):
    """(driver, dispatch-log path, AMD1 blob, llvm metadata of its kernels)."""
    private = tmp_path_factory.mktemp("softhsa_command_buffer")
    log = private / "dispatches.jsonl"
    blob = compile_amd1(private, "gfx942", MODEL)
    metadata = llvm_kernels(parse_amdgpu_executable(blob).code_object, private)
    for driver in private_driver(softhsa_lib, private, {**CONFIG, "log": str(log)}):
        yield driver, log, blob, metadata


@pytest.fixture
def device(setup):
    device = setup[0].create_device_by_path("0,1", [])
    yield device
    device.close()


class Log:
    """The dispatch-log lines written since the object was made."""

    def __init__(self, path):
        self.path = path
        self.start = path.stat().st_size if path.exists() else 0

    def lines(self) -> list[dict]:
        if not self.path.exists():
            return []
        with open(self.path, "rb") as f:
            f.seek(self.start)
            return [json.loads(line) for line in f.read().splitlines()]


def decode(entry: dict, args) -> dict[str, list[int]]:
    """{value_kind: [values in order]} of a logged dispatch's kernargs, per LLVM's `.args`."""
    data = bytes.fromhex(entry["kernarg"])
    values: dict[str, list[int]] = {}
    for offset, size, kind in args:
        if size in _INTS and offset + size <= len(data):
            values.setdefault(kind, []).append(struct.unpack_from(_INTS[size], data, offset)[0])
    return values


def dispatch_export(executable) -> int:
    """The ordinal of the export with both bindings and constants (the dynamic-shape multiply)."""
    return next(i for i, e in enumerate(executable.exports)
                if e.binding_count >= 2 and e.constant_count >= 1)


def run(device, command_buffer, table=(), affinity=-1) -> None:
    semaphore = device.create_semaphore(0)
    device.queue_execute(affinity, None, Fence.create(semaphore, 1), command_buffer, table)
    semaphore.wait(1, timeout=30)


def test_reusable_command_buffer_replays_dispatches(setup, device):
    _, log_path, blob, metadata = setup
    executable = device.create_executable_cache().prepare_executable("gfx942", blob)
    ordinal = dispatch_export(executable)
    export = executable.exports[ordinal]
    args = metadata[export.name]["args"]
    buffers = [device.allocator.allocate(HOST_VISIBLE, MAPPABLE, 4096) for _ in range(4)]
    constants = [0x11223344 + i for i in range(export.constant_count)]
    count = (3, 2, 1)
    cb = device.create_command_buffer(CommandBufferMode.DEFAULT, CommandCategory.ANY,
                                      binding_capacity=1)
    cb.begin()
    bindings = [BufferRef.direct(buffers[0], 256, 1024)] + [
        BufferRef.indirect(0, 64 * i, 512) for i in range(1, export.binding_count)]
    cb.dispatch(executable, ordinal, count, constants, bindings)
    cb.execution_barrier(STAGES, STAGES)
    cb.fill_buffer(BufferRef.direct(buffers[3], 3, 10), 0x7E, 1)
    cb.update_buffer(b"replayed", 0, BufferRef.direct(buffers[3], 21, 8))
    cb.copy_buffer(BufferRef.direct(buffers[3], 0, 32), BufferRef.direct(buffers[3], 100, 32))
    cb.end()

    log = Log(log_path)
    tables = ([Binding(buffers[1], 128)], [Binding(buffers[2], 0)])
    for table in tables:
        run(device, cb, table)
    lines = log.lines()
    assert len(lines) == 2  # one dispatch per execution, the transfers ran in C
    for line, table in zip(lines, tables):
        assert line["kernel"] == export.name and line["agent"] == 0
        assert line["workgroup"] == list(export.workgroup_size)
        assert line["grid"] == [c * w for c, w in zip(count, export.workgroup_size)]
        assert line["kernarg_segment_size"] == int(metadata[export.name][".kernarg_segment_size"])
        values = decode(line, args)
        slot = table[0]
        assert values["global_buffer"] == [buffers[0].base_address + 256] + [
            slot.buffer.base_address + slot.offset + 64 * i
            for i in range(1, export.binding_count)]
        assert values["by_value"] == constants
        assert [values[f"hidden_block_count_{a}"][0] for a in "xyz"] == list(count)
        assert [values[f"hidden_group_size_{a}"][0] for a in "xyz"] == list(export.workgroup_size)
    want = np.zeros(132, np.uint8)
    want[3:13] = 0x7E
    want[21:29] = np.frombuffer(b"replayed", np.uint8)
    want[100:132] = want[0:32]
    assert buffers[3].read(0, 132) == want.tobytes()


def test_queue_affinity_picks_the_gpu(setup, device):
    _, log_path, blob, _ = setup
    executable = device.create_executable_cache().prepare_executable("gfx942", blob)
    ordinal = dispatch_export(executable)
    export = executable.exports[ordinal]
    buffer = device.allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, 4096)
    cb = device.create_command_buffer(CommandBufferMode.DEFAULT, CommandCategory.ANY)
    cb.begin()
    cb.dispatch(executable, ordinal, (1, 1, 1), [0] * export.constant_count,
                [BufferRef.direct(buffer)] * export.binding_count)
    # An empty grid: no packet.
    cb.dispatch(executable, ordinal, (0, 4, 1), [0] * export.constant_count,
                [BufferRef.direct(buffer)] * export.binding_count)
    cb.end()
    log = Log(log_path)
    for affinity in (1 << 0, 1 << 1, 1 << 2, 1 << 3):
        run(device, cb, affinity=affinity)
    agents = [line["agent"] for line in log.lines()]
    assert agents == [0, 0, 1, 1]
    kernel_objects = {executable.kernel(p, ordinal).kernel_object for p in (0, 1)}
    assert len(kernel_objects) == 2  # each GPU runs its own loaded copy


def test_indirect_dispatch_reads_counts_from_host_visible_memory(setup, device):
    _, log_path, blob, _ = setup
    executable = device.create_executable_cache().prepare_executable("gfx942", blob)
    ordinal = dispatch_export(executable)
    export = executable.exports[ordinal]
    buffer = device.allocator.allocate(HOST_VISIBLE, MAPPABLE, 4096)
    buffer.write(16, struct.pack("<3I", 5, 1, 2))
    cb = device.create_command_buffer(CommandBufferMode.DEFAULT, CommandCategory.ANY)
    cb.begin()
    cb.dispatch_indirect(executable, ordinal, BufferRef.direct(buffer, 16, 12),
                         [9] * export.constant_count,
                         [BufferRef.direct(buffer)] * export.binding_count)
    cb.end()
    log = Log(log_path)
    run(device, cb)
    (line,) = log.lines()
    assert line["grid"] == [c * w for c, w in zip((5, 1, 2), export.workgroup_size)]

    device_only = device.allocator.allocate(
        MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT | BufferUsage.DISPATCH_INDIRECT_PARAMETERS, 64)
    cb = device.create_command_buffer(CommandBufferMode.DEFAULT, CommandCategory.ANY)
    cb.begin()
    cb.dispatch_indirect(executable, ordinal, BufferRef.direct(device_only, 0, 12),
                         [9] * export.constant_count,
                         [BufferRef.direct(buffer)] * export.binding_count)
    cb.end()
    with pytest.raises(HalError) as info:
        run(device, cb)
    assert info.value.status == "UNIMPLEMENTED"


def test_replay_errors_are_raised_before_submission(setup, device):
    _, _, blob, _ = setup
    executable = device.create_executable_cache().prepare_executable("gfx942", blob)
    ordinal = dispatch_export(executable)
    export = executable.exports[ordinal]
    buffer = device.allocator.allocate(HOST_VISIBLE, MAPPABLE, 256)
    cb = device.create_command_buffer(CommandBufferMode.DEFAULT, CommandCategory.ANY,
                                      binding_capacity=1)
    cb.begin()
    cb.dispatch(executable, ordinal, (1, 1, 1), [0] * (export.constant_count + 1),
                [BufferRef.indirect(0)] * export.binding_count)
    cb.end()
    semaphore = device.create_semaphore(0)
    with pytest.raises(HalError) as info:
        device.queue_execute(-1, None, Fence.create(semaphore, 1), cb, [Binding(buffer)])
    assert info.value.status == "INVALID_ARGUMENT"
    with pytest.raises(HalError) as info:  # a table too short for the command buffer
        device.queue_execute(-1, None, Fence.create(semaphore, 1), cb, [])
    assert info.value.status == "INVALID_ARGUMENT"
    assert semaphore.query() == 0

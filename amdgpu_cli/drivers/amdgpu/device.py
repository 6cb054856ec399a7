"""The amdgpu logical device and the physical GPUs it is made of.

`PhysicalDevice` is one GPU agent as the device uses it: its identity (ordinal in the logical
device, UUID, ISA, CU count, wavefront size), its coarse and fine device-local pools and the pools
of the CPU agent it is paired with (coarse, fine, kernarg). `make_physical_device` applies IREE's
rules (fact sheet §1.2): a device pool is the first GLOBAL, runtime-allocatable pool whose flags
contain COARSE (resp. FINE or EXTENDED_SCOPE_FINE); a host pool must also be accessible by all
agents, and the fine one prefers a pool without KERNARG_INIT; any missing pool is NOT_FOUND; CU
count must be > 0 and wavefront size 32 or 64.

`AmdgpuDevice` is the HAL device (`hal.device.Device`) over those GPUs. It holds one `hsa_init`
reference for its lifetime (released by `close()`, or by a finalizer that captures only the
runtime, never the device), the pool-backed allocator (allocator.py), the device library loaded on
every GPU (device_library.py), the executable cache (executable.py: every executable is loaded on
every GPU) and two host queues per GPU (host_queue.py, made on first use with `queue_options`:
HostQueue keyword arguments such as `wait_strategy`). Queue affinity bit i is
physical device i // 2, queue i % 2; the lowest selected bit wins, so ANY is queue 0 of GPU 0.
Every queue operation is planned on the host (command_buffer.py `SubmissionPlan`: argument errors
raise before anything is waited or signalled) and handed to `HostQueue.submit` as one submission with
the wait and signal fences' timepoints; the queue orders it (device barriers or deferral), emits
the AQL packets and signals the semaphores when its epoch completes. alloca allocates at once on
the queue's GPU and orders only the signal; dealloca of a queue_alloca buffer returns its block
when the operation completes. `close()` drains and destroys the queues, then the executables, the
device library and every pool block, then releases the HSA reference; a new device can be created
afterwards.
Profiling (drivers/amdgpu/profiling.py): `profiling_begin` opens an `AmdgpuRecorder`; while it is
open every queue operation goes through its `submit` (queue event, device span) and Programs get a
`SubmissionProfile` (dispatch events); with no session the path is the plain one.
Sources: IREE `physical_device.c`, `system.c`, `util/vmem.c`, `logical_device.c`.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

from amdgpu_cli.drivers.amdgpu.allocator import AmdgpuAllocator
from amdgpu_cli.drivers.amdgpu.command_buffer import SubmissionPlan
from amdgpu_cli.drivers.amdgpu.device_library import DeviceLibrary
from amdgpu_cli.drivers.amdgpu.executable import AmdgpuExecutableCache
from amdgpu_cli.drivers.amdgpu.system import AgentInfo, Agents, PoolInfo
from amdgpu_cli.hal.command_buffer import _pattern
from amdgpu_cli.hal.device import Device
from amdgpu_cli.hal.enums import HalError, normalize_queue_affinity
from amdgpu_cli.hal.fence import Fence
from amdgpu_cli.hal.profiling import Op
from hsa_ffi import constants as C

QUEUES_PER_DEVICE = 2  # host queues per GPU, as IREE's default (fact sheet §1.3)

_FINE_FLAGS = (C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
               | C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED)


@dataclasses.dataclass(frozen=True)
class HostPools:
    coarse: PoolInfo
    fine: PoolInfo
    kernarg: PoolInfo


@dataclasses.dataclass(frozen=True)
class PhysicalDevice:
    ordinal: int  # position in the logical device (queue-affinity bits 2*ordinal, 2*ordinal+1)
    gpu_ordinal: int  # position among the visible GPU agents
    agent: AgentInfo
    host: AgentInfo
    coarse_pool: PoolInfo
    fine_pool: PoolInfo
    host_pools: HostPools

    @property
    def uuid(self) -> str:
        return self.agent.uuid

    @property
    def isa(self) -> str:
        return self.agent.isas[0]

    @property
    def compute_units(self) -> int:
        return self.agent.compute_units

    @property
    def wavefront_size(self) -> int:
        return self.agent.wavefront_size


def _first(pools: Sequence[PoolInfo], match: Callable[[PoolInfo], bool]) -> PoolInfo | None:
    return next((pool for pool in pools if match(pool)), None)


def device_pools(gpu: AgentInfo) -> tuple[PoolInfo, PoolInfo]:
    """(coarse, fine) device-local pools of a GPU agent."""
    usable = [p for p in gpu.pools if p.is_global and p.alloc_allowed]
    found = []
    for flags in (C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, _FINE_FLAGS):
        pool = _first(usable, lambda p: bool(p.global_flags & flags))
        if pool is None:
            raise HalError(f"no memory pool matching the required flags {flags}; AMDGPU physical "
                           "device requires coarse and fine device-local global memory pools",
                           status="NOT_FOUND")
        found.append(pool)
    return found[0], found[1]


def host_pools(cpu: AgentInfo) -> HostPools:
    """The coarse, fine and kernarg-init pools of a CPU agent that every agent can reach."""
    usable = [p for p in cpu.pools if p.is_global and p.accessible_by_all and p.alloc_allowed]

    def flagged(bit: int) -> list[PoolInfo]:
        return [p for p in usable if p.global_flags & bit]

    kernarg_bit = C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT
    fine = flagged(C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED)
    pools = {"coarse": flagged(C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED),
             "fine": [p for p in fine if not p.global_flags & kernarg_bit] or fine,
             "kernarg": flagged(kernarg_bit)}
    for kind, label in (("coarse", "coarse-grained"), ("fine", "fine-grained"),
                        ("kernarg", "kernarg-init")):
        if not pools[kind]:
            raise HalError(f"no accessible-by-all + {label} shared memory pool is available in "
                           "the system", status="NOT_FOUND")
    return HostPools(**{kind: found[0] for kind, found in pools.items()})


def make_physical_device(ordinal: int, gpu_ordinal: int, agents: Agents) -> PhysicalDevice:
    gpu = agents.gpus[gpu_ordinal]
    host = agents.host_cpu(gpu)
    if host is None:
        raise HalError("topology is invalid; must have at least one CPU agent and one GPU agent",
                       status="INVALID_ARGUMENT")
    if not gpu.isas:
        raise HalError("GPU agent has no reported HSA ISA", status="NOT_FOUND")
    if gpu.compute_units == 0:
        raise HalError(f"HSA reported 0 compute units for device agent ordinal {ordinal}",
                       status="FAILED_PRECONDITION")
    if gpu.wavefront_size not in (32, 64):
        raise HalError(f"HSA reported unsupported wavefront size {gpu.wavefront_size} for device "
                       f"agent ordinal {ordinal} (expected 32 or 64)",
                       status="FAILED_PRECONDITION")
    coarse, fine = device_pools(gpu)
    return PhysicalDevice(ordinal, gpu_ordinal, gpu, host, coarse, fine, host_pools(host))


class AmdgpuDevice(Device):
    """A logical device over one or more GPUs of the same chip (two host queues per GPU)."""

    identifier = "amdgpu"
    queues_per_device = QUEUES_PER_DEVICE

    def __init__(self, libhsa, physical_devices: Sequence[PhysicalDevice],
                 device_library: Path | None, *, queue_options: dict | None = None):
        super().__init__()
        self.libhsa = libhsa
        self.physical_devices = tuple(physical_devices)
        self.device_library = device_library
        self.queue_options = dict(queue_options or {})
        libhsa.init()  # this device's own runtime reference, as IREE's system takes one
        self._release = weakref.finalize(self, libhsa.shut_down)
        self._release.atexit = False
        self._queues: list = [None] * (QUEUES_PER_DEVICE * len(self.physical_devices))
        self._queues_lock = threading.Lock()
        self._executables: list[weakref.ref] = []
        self.library = None
        self._allocator = None
        try:
            self._allocator = AmdgpuAllocator(self, libhsa, self.physical_devices)
            if device_library is not None:
                self.library = DeviceLibrary(libhsa, self.physical_devices, device_library)
            self._cache = AmdgpuExecutableCache(self, "default")
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        uuids = ", ".join(p.uuid for p in self.physical_devices)
        return f"<AmdgpuDevice [{uuids}]>"

    # -- resources ----------------------------------------------------------------------------
    @property
    def allocator(self) -> AmdgpuAllocator:
        self._check_open()
        return self._allocator

    def create_executable_cache(self, identifier: str = "default") -> AmdgpuExecutableCache:
        self._check_open()
        return self._cache if identifier == "default" else AmdgpuExecutableCache(self, identifier)

    def _track(self, executable) -> None:
        self._executables = [ref for ref in self._executables if ref() is not None]
        self._executables.append(weakref.ref(executable))

    def _check_open(self) -> None:
        if self._closed:
            raise HalError("device is closed", status="FAILED_PRECONDITION")

    # -- queues -------------------------------------------------------------------------------
    def queue_index(self, queue_affinity) -> int:
        """The host queue an affinity selects: its lowest bit among this device's queues (bit
        i = physical device i // 2, queue i % 2); ANY selects queue 0 of physical device 0."""
        mask = normalize_queue_affinity(queue_affinity) & ((1 << len(self._queues)) - 1)
        if not mask:
            raise HalError(f"queue affinity 0x{normalize_queue_affinity(queue_affinity):x} "
                           f"selects none of the {len(self._queues)} queues of this device",
                           status="INVALID_ARGUMENT")
        return (mask & -mask).bit_length() - 1

    def host_queue(self, index: int):
        """Host queue `index`, created on first use."""
        from amdgpu_cli.drivers.amdgpu.host_queue import HostQueue

        with self._queues_lock:
            self._check_open()
            queue = self._queues[index]
            if queue is None:
                physical = self.physical_devices[index // QUEUES_PER_DEVICE]
                queue = self._queues[index] = HostQueue(
                    self.libhsa, physical, index % QUEUES_PER_DEVICE, **self.queue_options)
                if self.profiler is not None:
                    self.profiler.enable_queue(queue)
            return queue

    def _program(self, queue_affinity, command_buffer=None) -> SubmissionPlan:
        self._check_open()
        if self.library is None:
            raise HalError("the amdgpu device has no device library; queue operations need one",
                           status="FAILED_PRECONDITION")
        index = self.queue_index(queue_affinity)
        physical = self.physical_devices[index // QUEUES_PER_DEVICE]
        program = SubmissionPlan(self.library, physical, self._allocator)
        recorder = self.profiler
        if recorder is not None:
            from amdgpu_cli.drivers.amdgpu.profiling import SubmissionProfile

            command_buffer_id = 0
            if command_buffer is not None:
                command_buffer_id = recorder.record_command_buffer(command_buffer,
                                                                   physical.ordinal)
            profile = SubmissionProfile(recorder, recorder.queues[index],
                                        recorder.next_submission(), command_buffer_id)
            if recorder.dispatch_events:
                program.profile = profile
            program.submission = profile
        return program

    def _submit(self, queue_affinity, wait: Fence | None, signal: Fence | None,
                program: SubmissionPlan | None = None, retain=(), *, op: int = Op.BARRIER,
                payload_length: int = 0, operation_count: int = 1) -> None:
        index = self.queue_index(queue_affinity)
        queue = self.host_queue(index)
        waits = wait.timepoints if wait is not None else []
        signals = signal.timepoints if signal is not None else []
        recorder = self.profiler
        if program is None:
            if recorder is not None:
                recorder.submit(queue, index, waits, signals, _no_packets, op=op,
                                retain=tuple(retain), payload_length=payload_length,
                                operation_count=operation_count)
                return
            queue.submit(waits, signals, _no_packets, retain=tuple(retain))
            return
        if program.completions:  # run when the submission is done (or failed): one more signal
            done = self.create_semaphore(0)
            signals = [*signals, (done, 1)]
            done.notify_at(1, lambda: [complete() for complete in program.completions])
        if recorder is not None:
            profile = program.submission
            recorder.submit(queue, index, waits, signals, program.build, op=op,
                            kernarg_bytes=program.kernarg_bytes,
                            packet_count=program.packet_count,
                            retain=(*program.retain, *retain),
                            submission_id=profile.submission_id if profile else 0,
                            command_buffer_id=profile.command_buffer_id if profile else 0,
                            payload_length=payload_length, operation_count=operation_count)
            return
        queue.submit(waits, signals, program.build, kernarg_bytes=program.kernarg_bytes,
                     packet_count=program.packet_count, retain=(*program.retain, *retain))

    # -- profiling ------------------------------------------------------------------------------
    def profiling_check(self, options) -> None:
        from amdgpu_cli.drivers.amdgpu import profiling

        self._check_open()
        profiling.check(options, self.libhsa)

    def profiling_begin(self, options, sink) -> None:
        from amdgpu_cli.drivers.amdgpu.profiling import AmdgpuRecorder

        self.profiling_check(options)
        recorder = AmdgpuRecorder(sink, self, options, session_id=self._profile_session_start())
        recorder.begin_amdgpu()
        with self._queues_lock:
            queues = [queue for queue in self._queues if queue is not None]
        for queue in queues:
            recorder.enable_queue(queue)
        self.profiler = recorder

    def profiling_end(self, status_code: int = 0) -> None:
        recorder = self.profiler
        try:
            super().profiling_end(status_code)
        finally:
            if recorder is not None:
                for queue in self._queues:
                    if queue is not None and queue.failure is None:
                        recorder.enable_queue(queue, False)

    # -- queue operations ---------------------------------------------------------------------
    def queue_alloca(self, queue_affinity, wait, signal, memory_type, usage, byte_length, pool=0,
                     flags=0):
        if pool != 0:
            raise HalError(f"allocation pool {pool} is not supported", status="UNIMPLEMENTED")
        index = self.queue_index(queue_affinity)
        try:
            buffer = self.allocator.allocate(memory_type, usage, byte_length,
                                             physical_ordinal=index // QUEUES_PER_DEVICE)
        except HalError as error:
            if signal is not None:
                signal.fail(error)
            raise
        buffer.queue_allocated = True
        if self.profiler is not None:
            from amdgpu_cli.hal.profiling import MemoryEvent

            self.profiler.memory_event(MemoryEvent.QUEUE_ALLOCA, index, buffer=buffer,
                                       length=byte_length)
        self._submit(queue_affinity, wait, signal, op=Op.ALLOCA, payload_length=byte_length)
        return buffer

    def queue_dealloca(self, queue_affinity, wait, signal, buffer, flags=0):
        """Ordered like any queue operation; a buffer made by queue_alloca is closed (its block
        returned to the pool) once the operation completes, others just stay with their owner."""
        root = buffer.root
        if not getattr(root, "queue_allocated", False):
            self._submit(queue_affinity, wait, signal, retain=(buffer,), op=Op.DEALLOCA)
            return
        if self.profiler is not None:
            from amdgpu_cli.hal.profiling import MemoryEvent

            self.profiler.memory_event(MemoryEvent.QUEUE_DEALLOCA,
                                       self.queue_index(queue_affinity), buffer=root,
                                       length=root.byte_length)
        done = self.create_semaphore(0)
        signals = Fence.join(signal)
        signals.insert(done, 1)
        done.notify_at(1, lambda: done.failure is None and root.close())
        self._submit(queue_affinity, wait, signals, op=Op.DEALLOCA)

    def queue_fill(self, queue_affinity, wait, signal, target, offset, length, pattern,
                   pattern_length, flags=0):
        data = _pattern(pattern, pattern_length)  # 1, 2 or 4 bytes, as the HAL validates
        length = target.validate_range(offset, length)
        if offset % len(data) or length % len(data):
            raise HalError(f"fill offset {offset} and length {length} must be multiples of the "
                           f"pattern length {len(data)}", status="INVALID_ARGUMENT")
        program = self._program(queue_affinity)
        program.fill(target, offset, length, data)
        self._submit(queue_affinity, wait, signal, program, op=Op.FILL, payload_length=length)

    def queue_update(self, queue_affinity, wait, signal, source, source_offset, target,
                     target_offset, length, flags=0):
        data = bytes(memoryview(source).cast("B")[source_offset:source_offset + length])
        if source_offset < 0 or len(data) != length:
            raise HalError("update source range is outside the host buffer", status="OUT_OF_RANGE")
        target.validate_range(target_offset, length)
        program = self._program(queue_affinity)
        program.update(data, target, target_offset)
        self._submit(queue_affinity, wait, signal, program, op=Op.UPDATE, payload_length=length)

    def queue_copy(self, queue_affinity, wait, signal, source, source_offset, target,
                   target_offset, length, flags=0):
        length = source.validate_range(source_offset, length)
        target.validate_range(target_offset, length)
        program = self._program(queue_affinity)
        program.copy(source, source_offset, target, target_offset, length)
        self._submit(queue_affinity, wait, signal, program, op=Op.COPY, payload_length=length)

    def queue_execute(self, queue_affinity, wait, signal, command_buffer, binding_table=(),
                      flags=0):
        if command_buffer is None:
            self._submit(queue_affinity, wait, signal, operation_count=0)
            return
        binding_table = tuple(binding_table)
        command_buffer.validate_submission(binding_table)
        program = self._program(queue_affinity, command_buffer)
        program.record(command_buffer, binding_table)
        command_buffer.execution_count += 1
        self._submit(queue_affinity, wait, signal, program, op=Op.EXECUTE,
                     operation_count=len(command_buffer.commands))

    def wait_idle(self, timeout: float | None = None) -> None:
        for queue in self._queues:
            if queue is not None:
                queue.wait_idle(timeout)

    # -- lifetime -----------------------------------------------------------------------------
    def close(self) -> None:
        """Drain and destroy the queues, then executables, device library and memory; then
        release this device's hsa_init reference. Idempotent."""
        if self._closed:
            return
        super().close()
        with self._queues_lock:
            queues, self._queues = self._queues, [None] * len(self._queues)
        try:
            for queue in queues:
                if queue is not None:
                    queue.close()
            for ref in self._executables:
                executable = ref()
                if executable is not None:
                    executable.close()
            if self.library is not None:
                self.library.close()
            if self._allocator is not None:
                self._allocator.close()
        finally:
            self._release()


def _no_packets(submission) -> None:
    """build() of a submission that only orders waits and signals."""

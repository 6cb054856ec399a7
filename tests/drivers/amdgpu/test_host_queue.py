"""Host queues on softhsa: ring packets, epochs, kernarg ring, back-pressure, waits, failures.

The truths: packet bytes are read back from the HSA ring through hsa_ffi's packet structs (whose
layout tests/hsa_ffi checks against the real hsa.h) and compared with header words built here from
the HSA header bit positions and the reference's §5.1 table; the device-library fill (run for real
by softhsa) is compared with numpy; epochs with reference §5.4 (E0 = INT64_MAX/2, epoch N complete
at load <= E0 − N). To look at a ring before the packet processor consumes it, a test puts a gated
barrier-AND in front (`gate`): softhsa turns a slot back to INVALID only after running it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from amdgpu_cli.drivers.amdgpu import blit
from amdgpu_cli.drivers.amdgpu.device import make_physical_device
from amdgpu_cli.drivers.amdgpu.host_queue import HostQueue
from amdgpu_cli.drivers.amdgpu.host_queue_waits import (
    EPOCH_INITIAL,
    default_wait_strategy,
    epoch_wait_value,
)
from amdgpu_cli.drivers.amdgpu.kernarg_ring import KernargRing
from amdgpu_cli.drivers.amdgpu.system import enumerate_agents
from amdgpu_cli.hal.enums import HalError
from amdgpu_cli.hal.semaphore import Semaphore
from hsa_ffi import constants as C
from tests.softhsa.kernels import Loader
from tests.softhsa.session import private_softhsa

BINARIES = Path(__file__).resolve().parents[3] / "device_binaries"
LIBRARY = BINARIES / "amdgcn-amd-amdhsa--gfx942.hsaco"
MI300X = {"name": "gfx942", "isa": "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
          "compute_units": 4, "wavefront_size": 64}
CONFIG = {"agents": [dict(MI300X, uuid="GPU-00000000000000a0"),
                     dict(MI300X, uuid="GPU-00000000000000b0"),
                     {"name": "gfx1100", "isa": "amdgcn-amd-amdhsa--gfx1100", "compute_units": 4}]}
E0 = (2**63 - 1) // 2  # reference §5.4
TYPE_BITS, BARRIER_BIT, ACQUIRE_SHIFT, RELEASE_SHIFT = 0, 1 << 8, 9, 11  # hsa_packet_header_t
NONE, AGENT, SYSTEM = 0, 1, 2


def word(packet_type: int, barrier: bool, acquire: int, release: int, setup: int) -> int:
    return (packet_type << TYPE_BITS | (BARRIER_BIT if barrier else 0) | acquire << ACQUIRE_SHIFT
            | release << RELEASE_SHIFT | setup << 16)


class Rig:
    """A running softhsa with physical devices, the device library loaded, a buffer pool."""

    def __init__(self, session):
        self.s, self.hsa, self.ffi = session, session.hsa, session.ffi
        self.loader = Loader(session)
        agents = enumerate_agents(self.hsa)
        self.physical = [make_physical_device(i, i, agents) for i in range(len(agents.gpus))]
        gpus = session.gpus()
        self.executables = [self.loader.load(LIBRARY.read_bytes(), gpu) for gpu in gpus[:2]]
        self.kernels = {}
        self.pools = [self.loader.pool(gpu, C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)
                      for gpu in gpus]
        self.gpus = gpus
        self.queues: list[HostQueue] = []
        self._allocations = []

    def kernel(self, device: int, name: str):
        key = (device, name)
        if key not in self.kernels:
            self.kernels[key] = self.loader.kernel(self.executables[device], name,
                                                   self.gpus[device])
        return self.kernels[key]

    def queue(self, device: int = 0, index: int = 0, **options) -> HostQueue:
        queue = HostQueue(self.hsa, self.physical[device], index, **options)
        self.queues.append(queue)
        return queue

    def buffer(self, device: int, size: int) -> tuple[int, np.ndarray]:
        pointer = self.loader.allocate(self.pools[device], size)
        self._allocations.append(pointer)
        array = np.frombuffer(self.ffi.buffer(pointer, size), dtype=np.uint8)
        return int(self.ffi.cast("uintptr_t", pointer)), array

    def fill(self, device: int, address: int, length: int, pattern: int, *, completion_signal=0):
        """A build function: one device-library fill dispatch (planned by blit.plan_fill)."""
        physical = self.physical[device]
        launch = blit.plan_fill(address, length, pattern, 1, compute_units=physical.compute_units,
                                wavefront_size=physical.wavefront_size)
        kernel = self.kernel(device, launch.kernel)

        def build(submission):
            kernarg_address, view = submission.kernargs(len(launch.kernargs))
            view[:] = launch.kernargs
            submission.dispatch(kernel.kernel_object, launch.workgroup_size, launch.grid_size,
                                kernel.private_size, kernel.group_size, kernarg_address,
                                completion_signal=completion_signal)
        return build

    def gate(self, queue: HostQueue):
        """Block `queue` behind a raw barrier-AND on a fresh signal; returns the opener."""
        gate = self.s.signal(1)
        hsa_queue = queue.hsa_queue
        index = self.s.lib.hsa_queue_add_write_index_scacq_screl(hsa_queue, 1)
        ring = self.ffi.cast("hsa_barrier_and_packet_t*", hsa_queue.base_address)
        packet = ring[index % hsa_queue.size]
        packet.dep_signal[0] = gate
        self.ffi.cast("uint32_t*", self.ffi.addressof(packet))[0] = word(3, True, NONE, NONE, 0)
        self.s.lib.hsa_signal_store_screlease(hsa_queue.doorbell_signal, index)
        return lambda: self.s.lib.hsa_signal_store_screlease(gate, 0)

    def slots(self, queue: HostQueue, first: int, count: int,
              struct: str = "hsa_kernel_dispatch_packet_t"):
        hsa_queue = queue.hsa_queue
        base = self.ffi.cast(f"{struct}*", hsa_queue.base_address)
        return [base[(first + i) % hsa_queue.size] for i in range(count)]

    def close(self):
        for queue in self.queues:
            queue.progress_timeout = 1.0  # a test that failed may leave a queue gated
            queue.close()
        for pointer in self._allocations:
            self.hsa.call("hsa_amd_memory_pool_free", pointer)
        for executable in self.executables:
            self.hsa.call("hsa_executable_destroy", executable)


@pytest.fixture(scope="module")
def shsa(softhsa_lib, tmp_path_factory):
    return private_softhsa(softhsa_lib, tmp_path_factory)


@pytest.fixture
def rig(shsa):
    with shsa.running(CONFIG) as session:
        rig = Rig(session)
        try:
            yield rig
        finally:
            rig.close()


def first_word(packet) -> int:
    """The first 32-bit word (header | setup or AmdFormat << 16), read as the CP reads it."""
    from hsa_ffi import ffi

    return ffi.cast("uint32_t*", ffi.addressof(packet))[0]


def write_index(queue: HostQueue) -> int:
    return queue.libhsa.lib.hsa_queue_load_write_index_relaxed(queue.hsa_queue)


# ---- pure parts ----


def test_wait_strategy_by_isa_and_epoch_arithmetic():
    for isa in ("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "amdgcn-amd-amdhsa--gfx90a",
                "amdgcn-amd-amdhsa--gfx940", "amdgcn-amd-amdhsa--gfx950"):
        assert default_wait_strategy(isa) == "barrier_value"
    for isa in ("amdgcn-amd-amdhsa--gfx1100", "amdgcn-amd-amdhsa--gfx908",
                "amdgcn-amd-amdhsa--gfx9-4-generic", "amdgcn-amd-amdhsa--gfx1201"):
        assert default_wait_strategy(isa) == "defer"
    assert EPOCH_INITIAL == E0 == 0x3FFFFFFFFFFFFFFF
    # BARRIER_VALUE waits while load >= E0-N+1 (cond LT): it passes exactly at load = E0-N.
    for epoch in (1, 2, 1000):
        value = epoch_wait_value(epoch)
        assert (E0 - epoch) < value and not (E0 - epoch + 1) < value


def test_kernarg_ring_skips_the_tail_blocks_when_full_and_reclaims():
    from hsa_ffi import ffi

    memory = ffi.new("uint8_t[]", 8 * 64)
    base = int(ffi.cast("uintptr_t", memory))
    ring = KernargRing(base, 8, ffi)
    far = time.monotonic() + 5
    a, view = ring.allocate(100, deadline=far)  # 2 blocks
    assert a == base and len(view) == 100
    view[:3] = b"abc"
    assert bytes(memory[0:3]) == b"abc"
    b, _ = ring.allocate(64 * 5, deadline=far)  # blocks 2..6
    assert b == base + 2 * 64 and ring.position == 7
    with pytest.raises(HalError) as error:  # 2 blocks do not fit in the 1-block tail nor the head
        ring.allocate(128, deadline=time.monotonic() + 0.05)
    assert error.value.status == "DEADLINE_EXCEEDED"
    ring.reclaim(2)  # the first span retired: the head is free, the tail block is skipped
    c, _ = ring.allocate(128, deadline=far)
    assert c == base and ring.position == 10 and ring.in_use == 8
    mark = ring.position
    with pytest.raises(HalError) as error:
        ring.allocate(8, deadline=far, check=lambda: (_ for _ in ()).throw(
            HalError("queue failed", status="ABORTED")))
    assert error.value.status == "ABORTED"
    ring.reclaim(10)
    ring.allocate(16, alignment=64, deadline=far)
    ring.rewind(mark)
    assert ring.position == mark and ring.in_use == 0
    for bad in (3, 128):
        with pytest.raises(HalError):
            ring.allocate(8, alignment=bad, deadline=far)
    with pytest.raises(HalError) as error:
        ring.allocate(9 * 64, deadline=far)
    assert error.value.status == "RESOURCE_EXHAUSTED"


# ---- on softhsa ----


def test_fill_runs_signals_and_reclaims(rig):
    queue = rig.queue()
    assert queue.wait_strategy == "barrier_value" and queue.completed_epochs() == 0
    address, array = rig.buffer(0, 4096)
    done = Semaphore(0)
    queue.submit([], [(done, 1)], rig.fill(0, address + 3, 1001, 0x5A))
    done.wait(1, timeout=5)
    expected = np.zeros(4096, np.uint8)
    expected[3:1004] = 0x5A
    np.testing.assert_array_equal(array, expected)
    queue.wait_idle(5)
    assert queue.completed_epochs() == 1 and queue._kernargs.in_use == 0
    assert queue.producer(done, 1) is None  # drained: no longer in flight


def test_packets_in_the_ring_byte_for_byte(rig):
    a, b = rig.queue(0, 0), rig.queue(0, 1)
    other_device = rig.queue(1, 0)
    address, array = rig.buffer(0, 4096)
    open_a = rig.gate(a)
    s, t = Semaphore(0), Semaphore(0)
    a.submit([], [(s, 1)], rig.fill(0, address, 64, 1))
    other_device.submit([], [(t, 1)], lambda submission: None)  # signal-only: a no-op epoch packet
    other_device.wait_idle(5)
    assert a.producer(s, 1) == 1 and b.producer(s, 1) is None
    open_b = rig.gate(b)
    start = write_index(b)
    launches = [blit.plan_fill(address + 256 * (i + 1), 256, 2 + i, 1, compute_units=4,
                               wavefront_size=64) for i in range(3)]
    kernel = rig.kernel(0, launches[0].kernel)
    grid = launches[0].grid_size

    def build(submission):
        for i, launch in enumerate(launches):
            if i == 2:
                submission.barrier()
            kernarg_address, view = submission.kernargs(len(launch.kernargs))
            view[:] = launch.kernargs
            submission.dispatch(kernel.kernel_object, launch.workgroup_size, launch.grid_size,
                                kernel.private_size, kernel.group_size, kernarg_address)

    b.submit([(s, 1), (t, 1)], [(t, 2)], build)  # t is reached: only s becomes a device wait
    assert write_index(b) == start + 4
    wait, *dispatches = rig.slots(b, start, 4)
    wait = rig.ffi.cast("hsa_amd_barrier_value_packet_t*", rig.ffi.addressof(wait))[0]
    # Reference §5.1: barrier-value (barrier, AGENT acquire, NONE release) = 0x00020300.
    assert first_word(wait) == 0x00020300 == word(0, True, AGENT, NONE, 2)
    assert (wait.signal.handle, wait.value, wait.mask, wait.cond) == (
        a.epoch_signal, E0 - 1 + 1, 2**63 - 1, C.HSA_SIGNAL_CONDITION_LT)
    assert wait.completion_signal.handle == 0
    assert [first_word(p) for p in dispatches] == [
        word(2, True, SYSTEM, AGENT, 3),  # first packet: ordered after the queue's past
        word(2, False, AGENT, AGENT, 3),  # may run concurrently with the first
        0x00031302,  # after .barrier(), the epoch carrier: §5.1's AGENT acquire / SYSTEM release
    ]
    assert [p.completion_signal.handle for p in dispatches] == [0, 0, b.epoch_signal]
    kernarg_addresses = [int(rig.ffi.cast("uintptr_t", p.kernarg_address)) for p in dispatches]
    assert [(p.kernel_object, p.workgroup_size_x, p.workgroup_size_y, p.grid_size_x,
             p.grid_size_y, p.grid_size_z) for p in dispatches] == [
        (kernel.kernel_object, 64, 1, *grid)] * 3
    assert [bytes(rig.ffi.buffer(p.kernarg_address, 24)) for p in dispatches] == [
        launch.kernargs for launch in launches]
    assert len(set(kernarg_addresses)) == 3 and all(k % 16 == 0 for k in kernarg_addresses)
    open_b()
    time.sleep(0.05)
    assert not array.any() and t.query() == 1  # b is held by its device wait on a's epoch 1
    open_a()
    t.wait(2, timeout=5)
    expected = np.zeros(4096, np.uint8)
    expected[:64] = 1
    for i in range(3):
        expected[256 * (i + 1):256 * (i + 2)] = 2 + i
    np.testing.assert_array_equal(array, expected)
    assert other_device.completed_epochs() == 1 and b.completed_epochs() == 1


def test_cross_device_wait_acquires_system_scope(rig):
    a, b = rig.queue(0, 0), rig.queue(1, 0)
    open_a = rig.gate(a)
    s = Semaphore(0)
    a.submit([], [(s, 1)], lambda submission: None)
    start = write_index(b)
    b.submit([(s, 1)], [(s, 2)], lambda submission: None)
    wait, noop = rig.slots(b, start, 2, "hsa_barrier_and_packet_t")
    assert first_word(wait) == word(0, True, SYSTEM, NONE, 2)
    # Reference §5.1: barrier-AND no-op, barrier, NONE/NONE = 0x00000103; it carries the epoch.
    assert first_word(noop) == 0x00000103 and noop.completion_signal.handle == b.epoch_signal
    assert all(noop.dep_signal[i].handle == 0 for i in range(5))
    open_a()
    s.wait(2, timeout=5)


def test_same_queue_wait_is_dropped(rig):
    queue = rig.queue()
    open_queue = rig.gate(queue)
    s = Semaphore(0)
    queue.submit([], [(s, 1)], lambda submission: None)
    start = write_index(queue)
    queue.submit([(s, 1)], [(s, 2)], lambda submission: None)
    assert write_index(queue) == start + 1  # only the epoch no-op
    open_queue()
    s.wait(2, timeout=5)


def test_deferred_waits_never_block_the_caller(rig):
    a = rig.queue(0, 0)
    b = rig.queue(0, 1, wait_strategy="defer")
    gfx1100 = rig.queue(2, 0)
    assert gfx1100.wait_strategy == "defer"
    address, array = rig.buffer(0, 4096)
    s, t, u = Semaphore(0), Semaphore(0), Semaphore(0)
    start_b = write_index(b)
    # Wait-before-signal: nothing produces s yet, so b parks the fill and returns at once.
    b.submit([(s, 1)], [(t, 1)], rig.fill(0, address, 128, 7))
    assert write_index(b) == start_b and t.query() == 0
    # A producer on another queue under the "defer" strategy: still parked until the host sees s.
    open_a = rig.gate(a)
    a.submit([], [(s, 1)], rig.fill(0, address + 1024, 128, 9))
    b.submit([(s, 1)], [(u, 1)], lambda submission: None)
    time.sleep(0.05)
    assert write_index(b) == start_b and not array.any()
    open_a()
    t.wait(1, timeout=5)
    u.wait(1, timeout=5)
    assert write_index(b) == start_b + 2  # each issued without any wait packet
    assert (array[:128] == 7).all() and (array[1024:1152] == 9).all()
    # A host signal also releases parked work.
    v = Semaphore(0)
    gfx1100.submit([(v, 3)], [(v, 4)], lambda submission: None)
    v.signal(3)
    v.wait(4, timeout=5)


def test_a_failed_wait_fails_the_signals(rig):
    queue = rig.queue()
    s, t, u = Semaphore(0), Semaphore(0), Semaphore(0)
    s.fail("DATA_LOSS", "producer broke")
    queue.submit([(s, 1)], [(t, 1)], lambda submission: None)
    assert t.failure is s.failure
    v = Semaphore(0)
    queue.submit([(u, 1)], [(v, 1)], lambda submission: None)  # parked: nothing produces u
    u.fail("ABORTED", "gone")
    with pytest.raises(HalError, match="gone"):
        v.wait(1, timeout=5)
    queue.wait_idle(5)
    assert queue.completed_epochs() == 0  # neither submission put a packet in the ring


def test_ring_wraps_many_times_with_back_pressure_and_kernarg_reuse(rig):
    queue = rig.queue(aql_capacity=64, kernarg_blocks=128)
    address, array = rig.buffer(0, 64 * 1024)
    done = Semaphore(0)
    total = 700  # > 10 × 64 slots; each fill takes 1 kernarg block, the ring has 128

    def big_kernargs(submission):
        submission.kernargs(64 * 40)  # 40 blocks: only 3 such submissions fit at once

    for i in range(total):
        build = (big_kernargs if i % 50 == 0
                 else rig.fill(0, address + 64 * i, 64, i & 0xFF))
        queue.submit([], [(done, i + 1)], build)
    done.wait(total, timeout=20)
    queue.wait_idle(5)
    assert queue.completed_epochs() == total
    reads = queue.libhsa.lib.hsa_queue_load_read_index_scacquire(queue.hsa_queue)
    assert reads == write_index(queue) >= total
    assert queue._kernargs.in_use == 0 and queue._kernargs.position > 10 * 128
    expected = np.zeros(64 * 1024, np.uint8)
    for i in range(total):
        if i % 50:
            expected[64 * i:64 * (i + 1)] = i & 0xFF
    np.testing.assert_array_equal(array, expected)


def test_a_full_ring_blocks_the_producer_until_it_drains(rig):
    queue = rig.queue(aql_capacity=64, kernarg_blocks=128)
    open_queue = rig.gate(queue)  # slot 0
    done = Semaphore(0)
    for i in range(63):  # slots 1..63: the ring is full
        queue.submit([], [(done, i + 1)], lambda submission: None)
    returned = threading.Event()
    thread = threading.Thread(target=lambda: (
        queue.submit([], [(done, 64)], lambda submission: None), returned.set()))
    thread.start()
    assert not returned.wait(0.1)
    assert write_index(queue) == 64
    open_queue()
    assert returned.wait(5)
    thread.join(5)
    done.wait(64, timeout=5)


def test_a_queue_that_never_drains_raises_instead_of_hanging(rig):
    queue = rig.queue(aql_capacity=64, kernarg_blocks=128)
    queue.progress_timeout = 0.2
    open_queue = rig.gate(queue)
    queue.submit([], [], lambda submission: submission.kernargs(64 * 100))  # held: not reclaimed
    for _ in range(62):
        queue.submit([], [], lambda submission: None)
    with pytest.raises(HalError, match="AQL ring") as error:  # all 64 slots are taken
        queue.submit([], [], lambda submission: None)
    assert error.value.status == "DEADLINE_EXCEEDED"
    with pytest.raises(HalError, match="kernarg ring") as error:  # 28 of 128 blocks are free
        queue.submit([], [], lambda submission: submission.kernargs(64 * 29))
    assert error.value.status == "DEADLINE_EXCEEDED"
    assert queue._kernargs.in_use == 100  # the abandoned submissions gave their kernargs back
    open_queue()
    queue.wait_idle(5)
    assert queue.completed_epochs() == 63 and queue._kernargs.in_use == 0


def test_queue_error_fails_pending_and_later_work(rig):
    queue = rig.queue()
    peer = rig.queue(0, 1)
    address, array = rig.buffer(0, 4096)
    s, t, parked_signal, never = Semaphore(0), Semaphore(0), Semaphore(0), Semaphore(0)
    open_queue = rig.gate(queue)
    queue.submit([], [(s, 1)], rig.fill(0, address, 64, 3))

    def bad(submission):  # a kernel object no executable handed out: softhsa's loader rejects it
        kernarg_address, _ = submission.kernargs(24)
        submission.dispatch(0x1234000, (64, 1, 1), (64, 1, 1), 0, 0, kernarg_address)

    queue.submit([], [(t, 1)], bad)
    peer_signal = Semaphore(0)
    peer.submit([(t, 1)], [(peer_signal, 1)], lambda submission: None)  # waits on a doomed epoch
    queue.submit([(never, 1)], [(parked_signal, 1)], lambda submission: None)
    open_queue()
    s.wait(1, timeout=5)  # completed before the error: signalled normally
    with pytest.raises(HalError) as error:
        t.wait(1, timeout=5)
    assert "HSA_STATUS_ERROR_EXCEPTION" in str(error.value) and "\n" not in str(error.value)
    assert queue.failure is error.value
    with pytest.raises(HalError):
        parked_signal.wait(1, timeout=5)
    with pytest.raises(HalError) as later:
        queue.submit([], [(never, 5)], lambda submission: None)
    assert later.value is queue.failure and never.failure is queue.failure
    with pytest.raises(HalError) as peer_error:  # the peer waited on the failed queue's epoch
        peer_signal.wait(1, timeout=5)
    assert "waits on failed queue" in str(peer_error.value) and peer.failure is peer_error.value
    with pytest.raises(HalError):
        peer.wait_idle(5)
    assert (array[:64] == 3).all()
    fresh = rig.queue(0, 0)  # the device keeps working with a new queue
    done = Semaphore(0)
    fresh.submit([], [(done, 1)], rig.fill(0, address + 64, 64, 4))
    done.wait(1, timeout=5)
    assert (array[64:128] == 4).all()


def test_close_cancels_parked_work_and_frees_everything(rig):
    queue = rig.queue()
    s, t = Semaphore(0), Semaphore(0)
    queue.submit([(s, 1)], [(t, 1)], lambda submission: None)
    queue.progress_timeout = 0.1
    threads = threading.active_count()
    queue.close()
    assert t.failure is not None and t.failure.status == "CANCELLED"
    assert threading.active_count() == threads - 2
    assert queue.hsa_queue is None
    queue.close()  # idempotent
    with pytest.raises(HalError):
        queue.submit([], [], lambda submission: None)
    s.signal(1)  # the cancelled work's callback fires into a closed queue: nothing happens


def test_close_waits_for_other_queues_reading_its_epoch(rig):
    a, b = rig.queue(0, 0), rig.queue(1, 0)
    open_a, open_b = rig.gate(a), rig.gate(b)
    s = Semaphore(0)
    a.submit([], [(s, 1)], lambda submission: None)
    start = write_index(b)
    b.submit([(s, 1)], [(s, 2)], lambda submission: None)  # a BARRIER_VALUE on a's epoch signal
    assert write_index(b) == start + 2
    open_a()
    a.wait_idle(5)
    closed = threading.Event()
    thread = threading.Thread(target=lambda: (a.close(), closed.set()))
    thread.start()
    assert not closed.wait(0.1)  # b's packet still has to read a's epoch signal
    open_b()
    assert closed.wait(5)
    thread.join(5)
    s.wait(2, timeout=5)


def test_a_build_that_raises_fails_its_signals_and_gives_kernargs_back(rig):
    queue = rig.queue()
    s, t, gate = Semaphore(0), Semaphore(0), Semaphore(0)

    def broken(submission):
        submission.kernargs(64 * 10)
        raise HalError("bad binding", status="INVALID_ARGUMENT")

    start = write_index(queue)
    with pytest.raises(HalError, match="bad binding"):
        queue.submit([], [(s, 1)], broken)
    assert s.failure.status == "INVALID_ARGUMENT" and queue._kernargs.position == 0
    queue.submit([(gate, 1)], [(t, 1)], broken)  # parked: the error can only fail the signals
    gate.signal(1)
    with pytest.raises(HalError, match="bad binding"):
        t.wait(1, timeout=5)
    queue.wait_idle(5)
    assert write_index(queue) == start and queue.failure is None

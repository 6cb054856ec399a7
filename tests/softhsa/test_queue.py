"""softhsa AQL queues: ring layout, in-order consumption, barriers, completion, wrap, timestamps,
and the error path.

Packets are built here byte for byte from the hsa_ffi packet structs (checked against the real
headers by tests/hsa_ffi) and published the way the HSA spec says: body first, then the 32-bit
header|setup word, then the doorbell. Every wait has a timeout so a softhsa bug fails, not hangs.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

from hsa_ffi import constants as C
from tests.softhsa.session import private_softhsa

TIMEOUT_NS = 5_000_000_000
SYSTEM = C.HSA_FENCE_SCOPE_SYSTEM


@pytest.fixture(scope="module")
def shsa(softhsa_lib, tmp_path_factory):
    return private_softhsa(softhsa_lib, tmp_path_factory)


def header(packet_type: int, barrier: bool = True) -> int:
    return (packet_type << C.HSA_PACKET_HEADER_TYPE
            | int(barrier) << C.HSA_PACKET_HEADER_BARRIER
            | SYSTEM << C.HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE
            | SYSTEM << C.HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE)


class Ring:
    """Producer side of one queue, through the HSA index functions."""

    def __init__(self, s, queue):
        self.s, self.q = s, queue
        self.ffi, self.lib = s.ffi, s.lib

    def slot(self, index: int):
        return self.ffi.cast("uint8_t*", self.q.base_address) + (index % self.q.size) * 64

    def reserve(self) -> int:
        index = self.lib.hsa_queue_add_write_index_scacq_screl(self.q, 1)
        deadline = time.monotonic() + 5
        while index - self.lib.hsa_queue_load_read_index_scacquire(self.q) >= self.q.size:
            assert time.monotonic() < deadline, "queue never drained"
            time.sleep(0.0005)
        return index

    def publish(self, index: int, struct: str, first_word: int, **fields) -> None:
        packet = self.ffi.cast(f"{struct}*", self.slot(index))
        for name, value in fields.items():
            setattr(packet, name, value)
        self.ffi.cast("uint32_t*", self.slot(index))[0] = first_word  # header last

    def barrier_and(self, deps=(), completion=None, packet_type=C.HSA_PACKET_TYPE_BARRIER_AND) -> int:
        index = self.reserve()
        struct = "hsa_barrier_and_packet_t" if packet_type == C.HSA_PACKET_TYPE_BARRIER_AND \
            else "hsa_barrier_or_packet_t"
        fields = {"dep_signal": list(deps) + [{"handle": 0}] * (5 - len(deps))}
        if completion is not None:
            fields["completion_signal"] = completion
        self.publish(index, struct, header(packet_type), **fields)
        return index

    def barrier_value(self, signal, cond: int, value: int, mask: int, completion) -> int:
        index = self.reserve()
        self.publish(index, "hsa_amd_barrier_value_packet_t",
                     header(C.HSA_PACKET_TYPE_VENDOR_SPECIFIC) | C.HSA_AMD_PACKET_TYPE_BARRIER_VALUE << 16,
                     signal=signal, value=value, mask=mask, cond=cond, completion_signal=completion)
        return index

    def ring(self, index: int) -> None:
        self.lib.hsa_signal_store_screlease(self.q.doorbell_signal, index)

    def read_index(self) -> int:
        return self.lib.hsa_queue_load_read_index_scacquire(self.q)


@pytest.fixture
def gpu_ring(shsa):
    with shsa.running() as s:
        yield s, Ring(s, s.queue(s.gpus()[0], 64))


# ---- creation and layout ----


def test_queue_layout_matches_amd_queue_t(shsa):
    with shsa.running() as s:
        gpu = s.gpus()[0]
        queue = s.queue(gpu, 128)
        other = s.queue(gpu, 64)
        amd = s.ffi.cast("amd_queue_t*", queue)
        assert int(s.ffi.cast("uintptr_t", queue)) % 64 == 0
        assert queue.size == 128 and queue.type == C.HSA_QUEUE_TYPE_MULTI
        assert queue.id != other.id
        assert int(s.ffi.cast("uintptr_t", queue.base_address)) % 64 == 0
        ring = s.ffi.cast("uint16_t*", queue.base_address)
        assert all(ring[i * 32] == C.HSA_PACKET_TYPE_INVALID for i in range(128))
        doorbell = s.ffi.cast("amd_signal_t*", queue.doorbell_signal.handle)
        assert doorbell.kind == C.AMD_SIGNAL_KIND_DOORBELL
        s.lib.hsa_queue_store_write_index_relaxed(queue, 5)
        assert amd.write_dispatch_id == 5 == s.lib.hsa_queue_load_write_index_relaxed(queue)
        assert s.lib.hsa_queue_cas_write_index_scacq_screl(queue, 5, 9) == 5
        assert s.lib.hsa_queue_add_write_index_relaxed(queue, 1) == 9
        assert amd.write_dispatch_id == 10
        assert amd.read_dispatch_id == 0 == s.lib.hsa_queue_load_read_index_relaxed(queue)
        s.lib.hsa_queue_store_write_index_screlease(queue, 0)


# ROCr GpuAgent::QueueCreate: power of two, >= QUEUE_MIN_SIZE (INVALID_ARGUMENT), <= QUEUE_MAX_SIZE
# (OUT_OF_RESOURCES).
@pytest.mark.parametrize(("size", "status"), [
    (63, C.HSA_STATUS_ERROR_INVALID_ARGUMENT), (96, C.HSA_STATUS_ERROR_INVALID_ARGUMENT),
    (32, C.HSA_STATUS_ERROR_INVALID_ARGUMENT), (0, C.HSA_STATUS_ERROR_INVALID_ARGUMENT),
    (262144, C.HSA_STATUS_ERROR_OUT_OF_RESOURCES),
])
def test_queue_size_must_be_a_power_of_two_within_the_agent_limits(shsa, size, status):
    with shsa.running() as s:
        out = s.ffi.new("hsa_queue_t**")
        assert s.lib.hsa_queue_create(s.gpus()[0], size, C.HSA_QUEUE_TYPE_MULTI, s.ffi.NULL,
                                      s.ffi.NULL, 0, 0, out) == status


def test_cpu_agents_cannot_have_queues(shsa):
    with shsa.running() as s:
        out = s.ffi.new("hsa_queue_t**")
        assert s.lib.hsa_queue_create(s.cpus()[0], 64, C.HSA_QUEUE_TYPE_MULTI, s.ffi.NULL,
                                      s.ffi.NULL, 0, 0, out) == C.HSA_STATUS_ERROR_INVALID_QUEUE_CREATION


# ---- consumption ----


def test_completion_signal_is_decremented_and_slot_reset(gpu_ring):
    s, ring = gpu_ring
    done = s.signal(3)
    index = ring.barrier_and(completion=done)
    ring.ring(index)
    assert s.lib.hsa_signal_wait_scacquire(done, C.HSA_SIGNAL_CONDITION_LT, 3, TIMEOUT_NS,
                                           C.HSA_WAIT_STATE_BLOCKED) == 2
    assert ring.read_index() == 1
    assert s.ffi.cast("uint16_t*", ring.slot(index))[0] == C.HSA_PACKET_TYPE_INVALID


def test_packets_wait_for_the_doorbell(gpu_ring):
    s, ring = gpu_ring
    for batch in range(2):  # the first doorbell, and one after the processor went idle
        done = s.signal(1)
        index = ring.barrier_and(completion=done)
        time.sleep(0.05)
        assert ring.read_index() == batch and s.signal_value(done) == 1
        ring.ring(index)
        assert s.wait_eq(done, 0) == 0


def test_doorbell_rung_through_hardware_doorbell_ptr(gpu_ring):
    # IREE writes the last packet id straight to the doorbell's MMIO pointer (reference §5.3).
    s, ring = gpu_ring
    done = s.signal(1)
    index = ring.barrier_and(completion=done)
    doorbell = s.ffi.cast("amd_signal_t*", ring.q.doorbell_signal.handle)
    doorbell.hardware_doorbell_ptr[0] = index
    assert s.wait_eq(done, 0) == 0
    assert s.lib.hsa_signal_load_relaxed(ring.q.doorbell_signal) == index


def test_blocked_barrier_holds_back_everything_behind_it(gpu_ring):
    s, ring = gpu_ring
    gate = s.signal(1)
    first = s.signal(1)
    behind = [s.signal(1) for _ in range(3)]
    ring.barrier_and(deps=[gate], completion=first)
    for signal in behind:
        last = ring.barrier_and(completion=signal)
    ring.ring(last)
    time.sleep(0.05)
    assert ring.read_index() == 0
    assert [s.signal_value(x) for x in [first, *behind]] == [1, 1, 1, 1]
    s.lib.hsa_signal_store_screlease(gate, 0)
    assert s.wait_eq(behind[-1], 0) == 0
    assert [s.signal_value(x) for x in [first, *behind]] == [0, 0, 0, 0]
    assert ring.read_index() == 4


def test_barrier_and_waits_for_every_dependency(gpu_ring):
    s, ring = gpu_ring
    deps = [s.signal(1) for _ in range(5)]
    done = s.signal(1)
    ring.ring(ring.barrier_and(deps=deps, completion=done))
    for dep in deps[:-1]:
        s.lib.hsa_signal_store_relaxed(dep, 0)
    time.sleep(0.03)
    assert s.signal_value(done) == 1
    s.lib.hsa_signal_store_relaxed(deps[-1], 0)
    assert s.wait_eq(done, 0) == 0


def test_barrier_or_waits_for_any_dependency(gpu_ring):
    s, ring = gpu_ring
    a, b = s.signal(1), s.signal(1)
    done, empty_done = s.signal(1), s.signal(1)
    ring.ring(ring.barrier_and(deps=[a, b], completion=done, packet_type=C.HSA_PACKET_TYPE_BARRIER_OR))
    time.sleep(0.03)
    assert s.signal_value(done) == 1
    s.lib.hsa_signal_subtract_relaxed(b, 1)
    assert s.wait_eq(done, 0) == 0
    # An OR barrier with no dependencies at all completes at once.
    ring.ring(ring.barrier_and(completion=empty_done, packet_type=C.HSA_PACKET_TYPE_BARRIER_OR))
    assert s.wait_eq(empty_done, 0) == 0


def test_barrier_value_packet_compares_the_masked_value(gpu_ring):
    s, ring = gpu_ring
    watched = s.signal(5)
    done = s.signal(1)
    ring.ring(ring.barrier_value(watched, C.HSA_SIGNAL_CONDITION_LT, 3, -1, done))
    time.sleep(0.03)
    assert s.signal_value(done) == 1 and ring.read_index() == 0
    s.lib.hsa_signal_store_screlease(watched, 2)
    assert s.wait_eq(done, 0) == 0
    masked = s.signal(0x10F)
    done2 = s.signal(1)
    ring.ring(ring.barrier_value(masked, C.HSA_SIGNAL_CONDITION_EQ, 0xF, 0xFF, done2))
    assert s.wait_eq(done2, 0) == 0
    null_done = s.signal(1)
    ring.ring(ring.barrier_value({"handle": 0}, C.HSA_SIGNAL_CONDITION_EQ, 1, -1, null_done))
    assert s.wait_eq(null_done, 0) == 0


def test_ten_times_the_ring_wraps_in_order(gpu_ring):
    s, ring = gpu_ring
    total = 640
    remaining = s.signal(total)
    for i in range(total):
        index = ring.barrier_and(completion=remaining)
        if i % 32 == 31:
            ring.ring(index)  # one doorbell per batch of 32
    assert s.wait_eq(remaining, 0, timeout_s=20) == 0
    assert ring.read_index() == total == s.lib.hsa_queue_load_write_index_relaxed(ring.q)
    headers = s.ffi.cast("uint16_t*", ring.q.base_address)
    assert all(headers[i * 32] == C.HSA_PACKET_TYPE_INVALID for i in range(64))


def test_concurrent_producers_on_a_multi_queue(gpu_ring):
    # Two producers reserve, fill and ring independently; publication and doorbells arrive out of
    # order, yet every packet is consumed exactly once.
    s, ring = gpu_ring
    per_thread = 200
    remaining = s.signal(2 * per_thread)
    errors = []

    def produce():
        try:
            for _ in range(per_thread):
                ring.ring(ring.barrier_and(completion=remaining))
        except AssertionError as error:  # reported below; a thread cannot fail the test itself
            errors.append(error)

    threads = [threading.Thread(target=produce) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert not errors
    assert s.wait_eq(remaining, 0, timeout_s=20) == 0
    assert ring.read_index() == 2 * per_thread == s.lib.hsa_queue_load_write_index_relaxed(ring.q)


def test_timestamps_are_monotonic_and_match_dispatch_time(gpu_ring):
    s, ring = gpu_ring
    s.hsa.call("hsa_amd_profiling_set_profiler_enabled", ring.q, 1)
    before = s.system_info(C.HSA_SYSTEM_INFO_TIMESTAMP, "uint64_t")
    signals = [s.signal(1) for _ in range(8)]
    for signal in signals:
        last = ring.barrier_and(completion=signal)
    ring.ring(last)
    assert s.wait_eq(signals[-1], 0) == 0
    after = s.system_info(C.HSA_SYSTEM_INFO_TIMESTAMP, "uint64_t")
    times = s.ffi.new("hsa_amd_profiling_dispatch_time_t*")
    previous_end = before
    for signal in signals:
        amd = s.ffi.cast("amd_signal_t*", signal.handle)
        s.hsa.call("hsa_amd_profiling_get_dispatch_time", s.gpus()[0], signal, times)
        assert (times.start, times.end) == (amd.start_ts, amd.end_ts)
        assert previous_end <= times.start <= times.end <= after
        previous_end = times.end
    # Profiling off: timestamps are left alone.
    s.hsa.call("hsa_amd_profiling_set_profiler_enabled", ring.q, 0)
    quiet = s.signal(1)
    ring.ring(ring.barrier_and(completion=quiet))
    assert s.wait_eq(quiet, 0) == 0
    amd = s.ffi.cast("amd_signal_t*", quiet.handle)
    assert (amd.start_ts, amd.end_ts) == (0, 0)


# ---- errors and shut-down ----


def error_queue(s, gpu):
    """(ring, calls, called, callback): a queue on `gpu` whose error callback records
    (status, queue) in `calls` and sets `called`; keep `callback` alive while the queue is."""
    calls = []
    called = threading.Event()

    @s.ffi.callback("void(hsa_status_t, hsa_queue_t*, void*)")
    def on_error(status, source, _data):
        calls.append((status, int(s.ffi.cast("uintptr_t", source))))
        called.set()

    return Ring(s, s.queue(gpu, 64, on_error)), calls, called, on_error


@pytest.mark.parametrize(("first_word", "status"), [
    (header(C.HSA_PACKET_TYPE_AGENT_DISPATCH), C.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT),
    (header(C.HSA_PACKET_TYPE_VENDOR_SPECIFIC) | 1 << 16, C.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT),
    (header(7), C.HSA_STATUS_ERROR_INVALID_PACKET_FORMAT),
    # A kernel dispatch whose kernel_object no executable handed out: the loader rejects it.
    (header(C.HSA_PACKET_TYPE_KERNEL_DISPATCH) | 3 << 16, C.HSA_STATUS_ERROR_EXCEPTION),
])
def test_bad_packet_reaches_the_error_callback_once_and_stops_the_queue(shsa, first_word, status):
    with shsa.running() as s:
        ring, calls, called, _keep = error_queue(s, s.gpus()[0])
        before, after = s.signal(1), s.signal(1)
        ring.barrier_and(completion=before)
        bad = ring.reserve()
        ring.publish(bad, "hsa_kernel_dispatch_packet_t", first_word, grid_size_x=1,
                     workgroup_size_x=1, kernel_object=0)
        ring.ring(ring.barrier_and(completion=after))
        assert called.wait(5)
        time.sleep(0.03)
        assert calls == [(status, int(s.ffi.cast("uintptr_t", ring.q)))]
        assert s.signal_value(before) == 0 and s.signal_value(after) == 1
        assert ring.read_index() == bad
        inactive = s.ffi.cast("amd_queue_t*", ring.q).queue_inactive_signal
        assert s.signal_value(inactive) == status


def _thread_count(expected: int | None = None) -> int:
    """Threads of this process; with `expected`, waits up to 2 s for that count (a joined thread
    can linger in /proc/self/task for a moment after pthread_join returns)."""
    deadline = time.monotonic() + 2
    count = len(os.listdir("/proc/self/task"))
    while expected is not None and count != expected and time.monotonic() < deadline:
        time.sleep(0.005)
        count = len(os.listdir("/proc/self/task"))
    return count


def test_destroy_and_shut_down_stop_blocked_queue_threads(shsa):
    time.sleep(0.05)
    baseline = _thread_count()  # settled: threads of earlier tests have left /proc
    with shsa.running() as s:
        gpu = s.gpus()[0]
        # Untracked: the gate must outlive hsa_shut_down, which stops the threads waiting on it.
        out = s.ffi.new("hsa_signal_t*")
        s.hsa.call("hsa_amd_signal_create", 1, 0, s.ffi.NULL, 0, out)
        gate = out[0]
        for _ in range(3):
            ring = Ring(s, s.queue(gpu, 64))
            ring.ring(ring.barrier_and(deps=[gate]))
        assert _thread_count(baseline + 3) == baseline + 3
        start = time.monotonic()
        s.hsa.call("hsa_queue_destroy", s._queues.pop())
        assert time.monotonic() - start < 1.0
        assert _thread_count(baseline + 2) == baseline + 2
        s._queues.clear()  # the other two are left for hsa_shut_down
        start = time.monotonic()
    assert time.monotonic() - start < 1.0
    assert _thread_count(baseline) == baseline
    with shsa.running() as s:
        s.hsa.call("hsa_signal_destroy", gate)  # softhsa keeps signal memory across shut-down

"""Host queues: one HSA AQL ring per queue, epochs on one HSA signal, HAL semaphores signalled from
a completion thread, waits resolved on the device (BARRIER_VALUE) or deferred on the host.

What one `HostQueue` owns (reference §1.1–§1.2, §5.3–§5.5; IREE `host_queue*.c`, `util/aql_ring.h`,
`util/kernarg_ring.h`): an `hsa_queue_t` (HSA_QUEUE_TYPE_MULTI) with an error callback, a kernarg
ring (kernarg_ring.py) in the paired CPU agent's kernarg-init pool, an **epoch signal** created at
E0 = INT64_MAX/2, a stop signal, a completion thread and a deferred-issue thread. Epoch arithmetic,
the wait strategy, the producer registry and parked submissions live in host_queue_waits.py.

Submission order (`submit`), all under the queue's submission lock, so ring order = epoch order:
  1. waits resolved: reached → dropped; produced by this queue → dropped (the queue is in order, see
     below); produced by another local queue and the strategy is "barrier_value" → one AMD
     BARRIER_VALUE packet per producer queue (its epoch signal, cond LT, value E0−N+1, mask
     INT64_MAX); anything else (wait-before-signal, "defer" strategy, another runtime) → the whole
     submission is parked, without blocking the caller, and issued from the deferred-issue thread
     once every wait is reached (`Semaphore.notify_at`); a failed wait fails `signals` instead.
  2. `build(submission)` runs once — in the caller's thread, or for a parked submission later in
     the deferred-issue thread (it must only read state captured at submit time): kernargs go
     straight into the kernarg ring; packets are collected (not yet in the ring). If build (or
     the reservation) raises, its kernargs are given back and its signals failed with the error,
     which is raised to the caller (a parked submission has no caller: only the signals fail).
  3. the last packet carries the epoch signal and the barrier bit (a barrier-AND no-op is appended
     when there is no packet, or when the last one has its own completion signal);
  4. slots are reserved only when all of them fit (back-pressure: wait for the read index, with a
     deadline and the queue's failure checked, so no slot is ever left unpublished);
  5. the epoch and its signals are recorded (other queues can now find them as producers), each
     packet is published (body, then the first word; `aql.write_packet`) in order, and the doorbell
     is rung once with the last packet id.

Packet policy: wait packets have the barrier bit, acquire AGENT (producer on this GPU) or SYSTEM,
release NONE. The first packet after them has the barrier bit (so it starts after every earlier
packet of the queue completed — this is what makes same-queue waits free) and SYSTEM acquire; later
packets get the barrier bit only after `.barrier()`, AGENT acquire (kernargs written by the host)
and AGENT release; the epoch packet has the barrier bit and SYSTEM release (the host reads the
results once it sees the semaphore).

Completion: epoch N is complete when load(epoch) <= E0 − N. The completion thread waits with
`hsa_amd_signal_wait_any([epoch, stop])` (a 10 ms hint, so it also polls for producer queues that
failed), drains finished epochs in order: signals their semaphores (a value another queue's drain
already passed is left alone: drains of different queues race), drops their producer records,
reclaims their kernarg blocks, releases `retain` (the references are dropped).

Failure: the HSA error callback (or a BARRIER_VALUE wait on a queue that failed, an epoch that can
never complete) puts the queue in a failed state: the completion thread fails every pending and
parked submission's signals with one HalError naming the HSA status; later `submit` calls fail
their signals and raise it.

`close()` fails parked work that is still waiting (CANCELLED), waits (bounded by
`progress_timeout`) for work in flight and for other queues' BARRIER_VALUE packets that read this
epoch signal, stops the threads and destroys the HSA queue, kernarg memory and signals. The owning
device must call it (the threads reference the queue, so there is no garbage-collection backstop).
"""

from __future__ import annotations

import dataclasses
import queue as queue_module
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from amdgpu_cli.drivers.amdgpu import aql
from amdgpu_cli.drivers.amdgpu.host_queue_waits import (
    EPOCH_INITIAL,
    INT64_MAX,
    WAIT_STRATEGIES,
    Parked,
    advance,
    default_wait_strategy,
    epoch_wait_value,
    fail_signals,
    fail_waiting,
    find_producer,
    register,
    unregister,
)
from amdgpu_cli.drivers.amdgpu.kernarg_ring import BLOCK_SIZE, KernargRing
from amdgpu_cli.hal.enums import HalError
from hsa_ffi import constants as C

UINT32_MAX = 0xFFFFFFFF
DEFERRED = -1  # submit(): the submission was parked until its waits are reached
COMPLETION_TICK_NS = 10_000_000  # completion-thread wake-up hint (timestamp ticks; ns on softhsa)
_SYSTEM, _AGENT, _NONE = aql.FENCE_SCOPE_SYSTEM, aql.FENCE_SCOPE_AGENT, aql.FENCE_SCOPE_NONE


# ---- one submission being built ----


@dataclasses.dataclass
class _Packet:
    packet_type: int
    barrier: bool
    acquire: int
    release: int
    setup: int
    fields: dict
    completion_signal: int = 0

    def encode(self) -> tuple[int, bytes]:
        word = aql.header_word(self.packet_type, barrier=self.barrier, acquire=self.acquire,
                               release=self.release, setup=self.setup)
        if self.packet_type == aql.PACKET_TYPE_KERNEL_DISPATCH:
            body = aql.dispatch_body(**self.fields, completion_signal=self.completion_signal)
        elif self.packet_type == aql.PACKET_TYPE_VENDOR_SPECIFIC:
            body = aql.barrier_value_body(**self.fields, completion_signal=self.completion_signal)
        else:
            body = aql.barrier_and_body(completion_signal=self.completion_signal)
        return word, body


def _noop_barrier() -> _Packet:
    return _Packet(aql.PACKET_TYPE_BARRIER_AND, True, _NONE, _NONE, 0, {})


class Submission:
    """What `build` receives: kernarg space, dispatch packets and execution barriers."""

    def __init__(self, queue: HostQueue, deadline: float):
        self._queue = queue
        self._deadline = deadline
        self.packets: list[_Packet] = []
        self._barrier_next = True  # the first packet orders the submission after the queue's past
        self._first_dispatch = True  # gets SYSTEM acquire (host-written kernargs and data)

    def kernargs(self, size: int, alignment: int = 16) -> tuple[int, memoryview]:
        """(device address, writable view) of `size` bytes in the queue's kernarg ring."""
        return self._queue.allocate_kernargs(size, alignment, self._deadline)

    def dispatch(self, kernel_object: int, workgroup_size: Sequence[int], grid_size: Sequence[int],
                 private_segment_size: int, group_segment_size: int, kernarg_address: int, *,
                 completion_signal: int = 0) -> None:
        """One kernel dispatch packet (`grid_size` in work-items). `completion_signal` (an HSA
        signal handle, e.g. for dispatch timestamps) is decremented when this packet completes."""
        first, self._first_dispatch = self._first_dispatch, False
        self.packets.append(_Packet(
            aql.PACKET_TYPE_KERNEL_DISPATCH, self._barrier_next, _SYSTEM if first else _AGENT,
            _AGENT, aql.DISPATCH_SETUP_3D,
            dict(workgroup_size=tuple(workgroup_size), grid_size=tuple(grid_size),
                 private_segment_size=private_segment_size, group_segment_size=group_segment_size,
                 kernel_object=kernel_object, kernarg_address=kernarg_address),
            completion_signal))
        self._barrier_next = False

    def barrier(self) -> None:
        """An execution barrier: the next packet starts after every earlier one completed."""
        self._barrier_next = True

    def marker(self, completion_signal: int) -> None:
        """A barrier-AND no-op with its own completion signal, after every earlier packet
        completed (profiling: the timestamps the packet processor writes into that signal bracket
        the packets around it). The next packet keeps the barrier bit it would have had."""
        self.packets.append(_Packet(aql.PACKET_TYPE_BARRIER_AND, True, _NONE, _NONE, 0, {},
                                    completion_signal))

    def finish(self, epoch_signal: int) -> list[_Packet]:
        """The packets with the epoch signal on the last one (a no-op appended when needed)."""
        packets = self.packets
        if not packets or packets[-1].completion_signal:
            packets.append(_noop_barrier())
        last = packets[-1]
        last.barrier, last.completion_signal = True, epoch_signal
        if last.packet_type == aql.PACKET_TYPE_KERNEL_DISPATCH:
            last.release = _SYSTEM
        return packets


# ---- records kept per issued epoch and per parked submission ----


@dataclasses.dataclass
class _Epoch:
    number: int
    signals: list
    retain: tuple
    kernarg_end: int
    waits_on: tuple  # producer queues this epoch waits for on the device


def _retire(epoch: _Epoch, queue) -> None:
    """Forget a drained or failed epoch: its producer records and its hold on producer queues."""
    unregister(epoch.signals, queue, epoch.number)
    for producer in epoch.waits_on:
        producer.count_device_waiter(-1)


class HostQueue:
    """One host queue on one GPU agent (see the module docstring for the protocol)."""

    progress_timeout = 60.0  # seconds a producer waits for ring or kernarg space before failing

    def __init__(self, libhsa, physical_device, index: int, *, aql_capacity: int = 4096,
                 kernarg_blocks: int = 8192, wait_strategy: str | None = None):
        if aql_capacity <= 0 or aql_capacity & (aql_capacity - 1):
            raise HalError(f"AQL ring capacity {aql_capacity} must be a power of two",
                           status="INVALID_ARGUMENT")
        if kernarg_blocks < 2 * aql_capacity:
            raise HalError(f"kernarg ring capacity {kernarg_blocks} blocks must be at least twice "
                           f"the AQL capacity ({aql_capacity})", status="INVALID_ARGUMENT")
        strategy = wait_strategy or default_wait_strategy(physical_device.isa)
        if strategy not in WAIT_STRATEGIES:
            raise HalError(f"unknown wait strategy {strategy!r} (expected one of "
                           f"{', '.join(WAIT_STRATEGIES)})", status="INVALID_ARGUMENT")
        self.libhsa, self.physical_device, self.index = libhsa, physical_device, index
        self.wait_strategy = strategy
        self.label = f"p{physical_device.ordinal}q{index}"
        self._ffi, self._lib = libhsa.ffi, libhsa.lib
        self._kernargs: KernargRing | None = None  # made once the ring's memory is allocated
        self._agent = self._ffi.new("hsa_agent_t*", {"handle": physical_device.agent.handle})
        self._submit_lock = threading.Lock()
        self._state = threading.Condition()  # guards everything below
        self._pending: deque[_Epoch] = deque()
        self._parked: set[Parked] = set()
        self._issued = 0
        self._device_waiters = 0  # undrained epochs of other queues whose packets read our epoch
        self._failure: HalError | None = None
        self._closing = False
        self._closed = False
        self._queue = self._kernarg_memory = None
        self._signals: list = []
        self._threads: list[threading.Thread] = []
        self._ready: queue_module.SimpleQueue = queue_module.SimpleQueue()
        try:
            self._create(aql_capacity, kernarg_blocks)
        except BaseException:
            self._destroy()
            raise

    def __repr__(self) -> str:
        return f"<HostQueue {self.label} {self.wait_strategy} epochs={self._issued}>"

    # ---- creation and destruction ----

    def _new_signal(self, value: int):
        out = self._ffi.new("hsa_signal_t*")
        self.libhsa.call("hsa_amd_signal_create", value, 0, self._ffi.NULL, 0, out)
        self._signals.append(out[0])
        return out[0]

    def _create(self, aql_capacity: int, kernarg_blocks: int) -> None:
        ffi = self._ffi
        self._stop = self._new_signal(0)
        self._epoch = self._new_signal(EPOCH_INITIAL)
        self._error_callback = ffi.callback("void(hsa_status_t, hsa_queue_t*, void*)",
                                            self._on_queue_error, onerror=lambda *_: None)
        out = ffi.new("hsa_queue_t**")
        self.libhsa.call("hsa_queue_create", self._agent[0], aql_capacity, C.HSA_QUEUE_TYPE_MULTI,
                         self._error_callback, ffi.NULL, UINT32_MAX, UINT32_MAX, out)
        self._queue = out[0]
        self.aql_capacity = self._queue.size
        self._ring_base = int(ffi.cast("uintptr_t", self._queue.base_address))
        pool = ffi.new("hsa_amd_memory_pool_t*",
                       {"handle": self.physical_device.host_pools.kernarg.handle})
        memory = ffi.new("void**")
        self.libhsa.call("hsa_amd_memory_pool_allocate", pool[0], kernarg_blocks * BLOCK_SIZE, 0,
                         memory)
        self._kernarg_memory = memory[0]
        self.libhsa.call("hsa_amd_agents_allow_access", 1, self._agent, ffi.NULL, memory[0])
        self._kernargs = KernargRing(int(ffi.cast("uintptr_t", memory[0])), kernarg_blocks, ffi)
        for name, target in (("complete", self._completion_loop), ("deferred", self._issue_loop)):
            thread = threading.Thread(target=target, name=f"amdgpu-{self.label}-{name}",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)

    def _stop_threads(self) -> None:
        if self._threads:
            self._closing = True
            self._ready.put(None)
            self._lib.hsa_signal_store_screlease(self._stop, 1)
            for thread in self._threads:
                thread.join()
            self._threads = []

    def _destroy(self) -> None:
        self._stop_threads()
        if self._queue is not None:
            self.libhsa.call("hsa_queue_destroy", self._queue)
        if self._kernarg_memory is not None:
            self.libhsa.call("hsa_amd_memory_pool_free", self._kernarg_memory)
        for signal in self._signals:
            self.libhsa.call("hsa_signal_destroy", signal)
        self._queue, self._kernarg_memory, self._signals = None, None, []

    def close(self) -> None:
        """Cancel parked work still waiting, wait (bounded) for work in flight, free every HSA
        resource."""
        if self._closed:
            return
        with self._state:
            waiting = [item for item in self._parked if item.cancel()]
            self._parked.difference_update(waiting)
        fail_waiting(waiting, HalError(f"amdgpu queue {self.label} was closed before its waits "
                                        "were reached", status="CANCELLED"))
        deadline = time.monotonic() + self.progress_timeout
        try:
            self.wait_idle(self.progress_timeout)
        except HalError:
            pass  # failed or stuck: whatever is left is failed below
        with self._state:  # other queues' BARRIER_VALUE packets must be done reading our epoch
            while self._device_waiters and time.monotonic() < deadline:
                self._state.wait(deadline - time.monotonic())
            self._closing = True
        self._stop_threads()
        self._fail_outstanding(HalError(f"amdgpu queue {self.label} was closed",
                                        status="CANCELLED"))
        self._closed = True
        self._destroy()

    # ---- public queries ----

    @property
    def failure(self) -> HalError | None:
        return self._failure

    @property
    def hsa_queue(self):
        """The `hsa_queue_t*` (for profiling switches and tests; only this object writes to it)."""
        return self._queue

    @property
    def epoch_signal(self) -> int:
        """The handle of the epoch signal (BARRIER_VALUE packets of other queues wait on it)."""
        return self._epoch.handle

    def completed_epochs(self) -> int:
        return EPOCH_INITIAL - self._lib.hsa_signal_load_scacquire(self._epoch)

    def producer(self, semaphore, value: int) -> int | None:
        """The epoch of this queue that will signal `semaphore` to >= value, if one is in flight."""
        found = find_producer(semaphore, value)
        return found[1] if found is not None and found[0] is self else None

    def wait_idle(self, timeout: float | None = None) -> None:
        """Block until nothing is parked or in flight; raises the failure, or DEADLINE_EXCEEDED."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._state:
            while (self._pending or self._parked) and self._failure is None:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise HalError(f"amdgpu queue {self.label} did not become idle within "
                                   f"{timeout} s", status="DEADLINE_EXCEEDED")
                self._state.wait(remaining)
            if self._failure is not None:
                raise self._failure

    # ---- submission ----

    def submit(self, waits, signals, build: Callable[[Submission], None], *,
               kernarg_bytes: int = 0, packet_count: int = 0, retain=()) -> int:
        """Orders, builds and publishes one submission (module docstring). Returns how its waits
        were met (profiling reads it): DEFERRED when parked, else the number of BARRIER_VALUE
        packets it carries (0: every wait was already reached or is ordered by this queue)."""
        waits, signals, retain = list(waits), list(signals), tuple(retain)
        if self._closing:
            raise HalError(f"amdgpu queue {self.label} is closed", status="FAILED_PRECONDITION")
        self._raise_failure(signals)
        if packet_count + len(waits) + 1 > self.aql_capacity:
            raise HalError(f"a submission of {packet_count} packets and {len(waits)} waits does "
                           f"not fit the AQL ring of {self.aql_capacity}",
                           status="RESOURCE_EXHAUSTED")
        if kernarg_bytes > self._kernargs.block_count * BLOCK_SIZE:
            raise HalError(f"a submission of {kernarg_bytes} kernarg bytes does not fit the "
                           "kernarg ring", status="RESOURCE_EXHAUSTED")
        plan = self._resolve(waits)
        if isinstance(plan, HalError):
            fail_signals(signals, plan)
            return 0
        if plan is None:
            self._park(waits, signals, build, retain)
            return DEFERRED
        self._issue(plan, signals, build, retain)
        return len(plan)

    def _resolve(self, waits):
        """{producer queue: epoch} of device waits; None = defer; a HalError = a wait failed."""
        device_waits: dict[HostQueue, int] = {}
        for semaphore, value in waits:
            if semaphore.failure is not None:
                return semaphore.failure
            if semaphore.payload >= value:
                continue
            found = find_producer(semaphore, value)
            if found is None:
                return None
            producer, epoch = found
            if producer is self:
                continue
            if self.wait_strategy != "barrier_value" or producer.libhsa is not self.libhsa:
                return None
            device_waits[producer] = max(device_waits.get(producer, 0), epoch)
        return device_waits

    def _wait_packet(self, producer: HostQueue, epoch: int) -> _Packet:
        same_agent = producer.physical_device.agent.handle == self.physical_device.agent.handle
        return _Packet(aql.PACKET_TYPE_VENDOR_SPECIFIC, True, _AGENT if same_agent else _SYSTEM,
                       _NONE, aql.AMD_PACKET_TYPE_BARRIER_VALUE,
                       dict(signal=producer.epoch_signal, value=epoch_wait_value(epoch),
                            mask=INT64_MAX, condition=aql.CONDITION_LT))

    def _issue(self, device_waits: dict, signals, build, retain) -> None:
        with self._submit_lock:
            self._raise_failure(signals)
            deadline = time.monotonic() + self.progress_timeout
            submission = Submission(self, deadline)
            mark = self._kernargs.position
            try:
                build(submission)
                packets = [self._wait_packet(q, e) for q, e in device_waits.items()]
                packets += submission.finish(self._epoch.handle)
                first = self._reserve(len(packets), deadline)
            except BaseException as error:  # nothing was published: give back, fail, re-raise
                self._kernargs.rewind(mark)
                fail_signals(signals, error if isinstance(error, HalError) else HalError(
                    f"submission to amdgpu queue {self.label} failed: {error!r}",
                    status="INTERNAL"))
                raise
            for producer in device_waits:  # counted first: retiring the epoch uncounts them
                producer.count_device_waiter(+1)
            with self._state:  # recorded before publication, so the drain always finds it
                failed = self._failure is not None
                if not failed:
                    self._issued += 1
                    epoch = _Epoch(self._issued, signals, retain, self._kernargs.position,
                                   tuple(device_waits))
                    self._pending.append(epoch)
                    register(signals, self, epoch.number)
            if failed:  # the queue failed meanwhile: its reserved slots are never consumed
                for producer in device_waits:
                    producer.count_device_waiter(-1)
                self._raise_failure(signals)
            for offset, packet in enumerate(packets):
                word, body = packet.encode()
                slot = self._ring_base + ((first + offset) & (self.aql_capacity - 1)) * 64
                aql.write_packet(slot, word, body, self._ffi)
            self._lib.hsa_signal_store_screlease(self._queue.doorbell_signal,
                                                 first + len(packets) - 1)

    def _reserve(self, count: int, deadline: float) -> int:
        """The first of `count` ring slots, taken only once all of them are free."""
        if count > self.aql_capacity:
            raise HalError(f"a submission of {count} packets does not fit the AQL ring of "
                           f"{self.aql_capacity}", status="RESOURCE_EXHAUSTED")
        write = self._lib.hsa_queue_load_write_index_relaxed(self._queue)
        pause = 1e-5
        while write + count - self._lib.hsa_queue_load_read_index_scacquire(self._queue) \
                > self.aql_capacity:
            self._raise_failure()
            if time.monotonic() > deadline:
                raise HalError(f"AQL ring of amdgpu queue {self.label} did not drain",
                               status="DEADLINE_EXCEEDED")
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)
        return self._lib.hsa_queue_add_write_index_scacq_screl(self._queue, count)

    # ---- deferred submissions ----

    def _park(self, waits, signals, build, retain) -> None:
        parked = Parked(waits, signals, build, retain, self._ready.put)
        with self._state:
            self._parked.add(parked)
        for semaphore, value in waits:
            semaphore.notify_at(value, lambda semaphore=semaphore: parked.arrive(semaphore))

    def _issue_loop(self) -> None:
        while (parked := self._ready.get()) is not None:
            with self._state:
                if parked not in self._parked:
                    continue  # cancelled by close() or a failure
            try:
                plan = self._resolve(parked.waits)
                if isinstance(plan, HalError):
                    fail_signals(parked.signals, plan)
                elif plan is None:  # a wait went back to unresolved: cannot happen for a timeline
                    raise HalError("deferred submission woke with unreached waits",
                                   status="INTERNAL")
                else:
                    self._issue(plan, parked.signals, parked.build, parked.retain)
            except HalError as error:
                fail_signals(parked.signals, error)
            except Exception as error:  # a build bug must not kill the thread: it fails the work
                fail_signals(parked.signals, HalError(f"deferred submission failed: {error!r}",
                                                       status="INTERNAL"))
            with self._state:
                self._parked.discard(parked)
                self._state.notify_all()

    # ---- completion and failure ----

    def _completion_loop(self) -> None:
        ffi, lib = self._ffi, self._lib
        signals = ffi.new("hsa_signal_t[2]", [self._epoch, self._stop])
        conditions = ffi.new("hsa_signal_condition_t[2]",
                             [aql.CONDITION_LT, aql.CONDITION_NE])
        values = ffi.new("hsa_signal_value_t[2]", [EPOCH_INITIAL, 0])
        drained = 0
        while True:
            values[0] = EPOCH_INITIAL - drained
            lib.hsa_amd_signal_wait_any(2, signals, conditions, values, COMPLETION_TICK_NS,
                                        C.HSA_WAIT_STATE_BLOCKED, ffi.NULL)
            completed = self._drain()
            progressed, drained = completed != drained, completed
            stopped = lib.hsa_signal_exchange_scacq_screl(self._stop, 0) != 0
            if self._failure is not None:
                # Epochs that completed before the failure was seen still succeed: the error
                # callback may run between an epoch's completion and this thread's drain.
                self._drain()
                self._fail_outstanding(self._failure)
            elif not progressed and self._pending:
                self._check_producers()
            if stopped and self._closing:
                return

    def _drain(self) -> int:
        """Retire every completed epoch in order; returns the completed count it acted on.

        Epochs leave `_pending` only once fully retired (signals, kernargs), so `wait_idle`
        returning means their effects are visible. Only the completion thread removes epochs."""
        completed = self.completed_epochs()
        with self._state:
            done = [epoch for epoch in self._pending if epoch.number <= completed]
        if not done:
            return completed
        for epoch in done:
            for semaphore, value in epoch.signals:
                advance(semaphore, value)
            _retire(epoch, self)
        self._kernargs.reclaim(done[-1].kernarg_end)
        with self._state:
            for _ in done:
                self._pending.popleft()
            self._state.notify_all()
        return completed

    def allocate_kernargs(self, size: int, alignment: int, deadline: float
                          ) -> tuple[int, memoryview]:
        """(device address, writable view) of `size` bytes in the kernarg ring, waiting until
        `deadline` for room; fails as the queue has where it failed meanwhile."""
        return self._kernargs.allocate(size, alignment, deadline=deadline,
                                       check=self._raise_failure)

    def count_device_waiter(self, delta: int) -> None:
        """Another queue's submission waits on this one on the device (+1), or no longer (-1)."""
        with self._state:
            self._device_waiters += delta
            self._state.notify_all()

    def _check_producers(self) -> None:
        """An epoch waiting on the device for a failed queue can never complete: fail this one."""
        with self._state:
            producers = {q for epoch in self._pending for q in epoch.waits_on}
        for producer in producers:
            if producer.failure is not None:
                self._set_failure(HalError(
                    f"amdgpu queue {self.label} waits on failed queue {producer.label}: "
                    f"{producer.failure}", status=producer.failure.status))
                return

    def _on_queue_error(self, status: int, _queue, _data) -> None:
        """The HSA error callback (a runtime thread): record the failure, wake the completion
        thread. It must not raise (cffi's onerror swallows anything that escapes)."""
        error = self.libhsa.error("hsa_queue error callback", status)
        self._set_failure(HalError(f"amdgpu queue {self.label} failed: {error}",
                                   status=error.status))

    def _set_failure(self, error: HalError) -> None:
        with self._state:
            if self._failure is None:
                self._failure = error
            self._state.notify_all()
        self._kernargs_wake()
        self._lib.hsa_signal_store_screlease(self._stop, 1)

    def _kernargs_wake(self) -> None:
        if self._kernargs is not None:
            self._kernargs.wake()

    def _fail_outstanding(self, error: HalError) -> None:
        """Fail the signals of every undrained epoch and every parked submission."""
        with self._state:
            pending, self._pending = list(self._pending), deque()
            parked = [p for p in self._parked if p.cancel()]
            self._parked.difference_update(parked)
            self._state.notify_all()
        for epoch in pending:
            fail_signals(epoch.signals, error)
            _retire(epoch, self)
        fail_waiting(parked, error)

    def _raise_failure(self, signals=()) -> None:
        """Raise the queue's failure (failing `signals` first), if it has failed."""
        error = self._failure
        if error is not None:
            fail_signals(signals, error)
            raise error

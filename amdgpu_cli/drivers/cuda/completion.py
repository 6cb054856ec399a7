"""Signalling a cuda device's fences when the stream work before them completes.

A queue operation issues its work on the device's stream and returns; if it has a signal fence,
a CUDA event is recorded after the work and (event, fence) becomes an `Entry` here, in stream
order. Nothing blocks the submitter. An entry's fence is signalled once its event completed,
found by whoever needs it first:

* a waiter (`Semaphore.wait` calls `drive`, hal/semaphore.py "Device completion"): waits for the
  first entry that signals the awaited value (`cuEventSynchronize` in the waiting thread, the GIL
  released) and signals it and every entry before it — no thread hand-off on the common path,
  where the program awaits its own last fence;
* a query (`poll`): `cuEventQuery` from the oldest entry, signalling those that completed;
* anyone who needs the signals to happen with nobody waiting (`notify_at`: work parked on the
  fence, multi-semaphore waits) calls `progress`, which starts a daemon thread that drives the
  entries to the end and exits.

An event that reports an error (the work faulted) fails its fence and every later one with the
CUDA error, as IREE fails the semaphores of a failed stream. Work that a later operation waits
for on the same stream needs no host wait at all: `issued(semaphore)` says the value an issued
entry will signal, and the stream runs in order (device.py uses it).
Host memory the work reads asynchronously (update sources) stays referenced by its entry until
the event completed.
"""

from __future__ import annotations

import collections
import threading
import time

from amdgpu_cli.drivers.cuda.cuda_ffi import CU_EVENT_DEFAULT, CUDA_ERROR_NOT_READY, CudaError
from amdgpu_cli.hal.enums import HalError

POLL_INTERVAL_S = 50e-6  # a timed wait polls the event this often


class Entry:
    __slots__ = ("event", "fences", "keep", "done")

    def __init__(self, event, fence, keep):
        self.event = event
        # Its fence (none: only host memory to keep alive), then the fences that follow it
        # (StreamCompletion.follow).
        self.fences = [fence] if fence is not None else []
        self.keep = keep
        self.done = False


class StreamCompletion:
    """The entries of one stream (see the module docstring)."""

    def __init__(self, device):
        self.device = device
        self.libcuda = device.libcuda
        self._entries: collections.deque[Entry] = collections.deque()
        self._lock = threading.Lock()  # _entries, _issued, _free
        self._completing = threading.Lock()  # one completer at a time
        self._issued: dict = {}  # semaphore -> the largest value an entry will signal
        self._free: list = []  # recorded-and-completed events to reuse
        self._events: list = []  # every event made (destroyed at close)
        self._thread: threading.Thread | None = None
        self.failure: HalError | None = None  # the stream's first asynchronous error
        self._record = self.libcuda.lib.cuEventRecord  # bound once: called for every operation

    # -- issuing (the device holds its stream lock, context current) ---------------------------
    def add(self, fence, keep) -> None:
        """Records an event after the work just issued and queues (event, fence)."""
        free = self._free
        with self._lock:
            event = free.pop() if free else None
        if event is None:
            event = self.libcuda.out("CUevent", "cuEventCreate", CU_EVENT_DEFAULT)
            self._events.append(event)
        result = self._record(event, self.device.stream)
        if result:
            with self._lock:
                free.append(event)
            raise self.libcuda.error("cuEventRecord", result)
        entry = Entry(event, fence, keep)
        with self._lock:  # visible to completers only once its event is recorded
            self._entries.append(entry)
            if fence is not None:
                self._register(fence)
        if fence is not None:
            self._watched(fence)

    def _register(self, fence) -> None:
        """Holding `_lock`: the values `fence` will get, and this as its semaphores' driver."""
        issued = self._issued
        for semaphore, value in fence._timepoints.items():
            if issued.get(semaphore, -1) < value:
                issued[semaphore] = value
            semaphore._driver = self

    def _watched(self, fence) -> None:
        """Something already waiting on one of the fence's semaphores without driving it (work
        parked with notify_at, a waiter blocked before this was its driver) needs the signal
        without a new waiter: progress."""
        if any(semaphore.awaited for semaphore in fence._timepoints):
            self.progress()

    def follow(self, fence) -> None:
        """Signals `fence` once everything issued so far completed, without an event of its
        own: it joins the newest entry in flight, or is signalled now when none is (for an
        operation that put no work the host could observe on the stream)."""
        with self._lock:
            last = self._entries[-1] if self._entries else None
            if last is not None:
                last.fences.append(fence)
                self._register(fence)
        if last is None:
            fence.signal()
        else:
            self._watched(fence)

    def issued(self, semaphore) -> int:
        """The largest value issued stream work will signal on `semaphore` (-1: none)."""
        return self._issued.get(semaphore, -1)

    @property
    def pending(self) -> int:
        return len(self._entries)

    # -- completing ------------------------------------------------------------------------------
    def drive(self, semaphore, value: int, timeout: float | None = None) -> None:
        """Completes the entries up to the first that signals `semaphore` >= value (returns
        without waiting if none does; the caller then waits as usual)."""
        with self._lock:
            target = None
            for entry in self._entries:
                for fence in entry.fences:
                    if fence._timepoints.get(semaphore, -1) >= value:
                        target = entry
                        break
                if target is not None:
                    break
        if target is not None:
            self._complete_through(target, timeout)

    def poll(self) -> None:
        """Signals every entry whose event already completed (never blocks on the GPU)."""
        if not self._entries or not self._completing.acquire(blocking=False):
            return
        try:
            lib = self.libcuda.lib
            while True:
                with self._lock:
                    entry = self._entries[0] if self._entries else None
                if entry is None:
                    return
                result = lib.cuEventQuery(entry.event)
                if result == CUDA_ERROR_NOT_READY:
                    return
                self._finish_through(entry, result)
        finally:
            self._completing.release()

    def progress(self) -> None:
        """Starts the background completer unless one is running."""
        with self._lock:
            if not self._entries or (self._thread is not None and self._thread.is_alive()):
                return
            self._thread = threading.Thread(target=self._run, name="cuda-completion",
                                            daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                target = self._entries[-1] if self._entries else None
            if target is None:
                return
            try:
                self._complete_through(target, None)
            except HalError:
                return

    def drain(self) -> None:
        """Completes everything issued so far (device close, synchronous host access)."""
        with self._lock:
            target = self._entries[-1] if self._entries else None
        if target is not None:
            self._complete_through(target, None)

    def _complete_through(self, target: Entry, timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        lib = self.libcuda.lib
        while True:
            if deadline is None:
                acquired = self._completing.acquire()
            else:
                acquired = self._completing.acquire(
                    timeout=max(0.0, deadline - time.monotonic()))
            if not acquired:
                return  # the caller's own timed wait reports the deadline
            try:
                if target.done:
                    return
                if deadline is None:
                    self.device.bind()
                    result = lib.cuEventSynchronize(target.event)
                else:
                    result = lib.cuEventQuery(target.event)
                if result != CUDA_ERROR_NOT_READY:
                    self._finish_through(target, result)
                    return
            finally:
                self._completing.release()
            if time.monotonic() >= deadline:
                return
            time.sleep(POLL_INTERVAL_S)

    def _finish_through(self, target: Entry, result: int) -> None:
        """Pops the entries up to `target` (its event reported `result`) and signals (or fails)
        their fences in order. Holds `_completing`."""
        error = None if result == 0 else self._error(result)
        with self._lock:
            finished = []
            while self._entries:
                entry = self._entries.popleft()
                finished.append(entry)
                if entry is target:
                    break
            if error is not None:  # the stream is broken: everything after fails too
                finished.extend(self._entries)
                self._entries.clear()
            issued = self._issued
            for entry in finished:
                entry.done = True
                entry.keep = None
                if error is None:
                    self._free.append(entry.event)
                for fence in entry.fences:
                    for semaphore, value in fence._timepoints.items():
                        if issued.get(semaphore) == value:
                            del issued[semaphore]
        if error is not None and self.failure is None:
            self.failure = error
        for entry in finished:
            for fence in entry.fences:
                if error is not None:
                    fence.fail(error)
                else:
                    fence.signal()

    def _error(self, result: int) -> HalError:
        return self.libcuda.error("cuEventSynchronize", result)

    def close(self) -> None:
        """Drains (errors are already on the fences) and destroys the events."""
        try:
            self.drain()
        except CudaError:
            pass
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)
        with self._lock:
            events, self._events, self._free = self._events, [], []
        for event in events:
            self.libcuda.lib.cuEventDestroy_v2(event)

"""Semaphore: a timeline of monotonically increasing uint64 payloads, host-signalable and waitable.

Rules (IREE runtime/src/iree/hal/semaphore.h): a payload only moves forward; signalling a value not
greater than the current one is an error (OUT_OF_RANGE) and leaves the value unchanged. A waiter for
value V wakes once the payload is >= V, whether it waited before or after the signal. A failed
semaphore stays failed: its payload reads as SEMAPHORE_FAILURE_VALUE, every current and future wait
and query raises the failure's HalError, and later signals are ignored (the first failure wins).
Payloads above SEMAPHORE_MAX_VALUE are rejected.

Threading: all state sits behind one lock (`_lock`); the Condition over it (`_cond`) is made on
first use, by a waiter, so a semaphore nobody blocks on costs no Condition. Multi-semaphore waits
register a threading.Event that every state change sets, so `wait_semaphores` never misses a
wake-up. `notify_at(value, callback)` is the non-blocking form (queues park work on it): the
callback runs once, when the payload reaches the value or the semaphore fails, in the thread that
signals or fails it (after the lock is released), or at once if that already happened; it must not
block. Timeouts are seconds
(None = forever, 0 = poll); a timeout raises DEADLINE_EXCEEDED. Device-side semaphores (HSA
signals, CUDA events) subclass and keep this interface.

Device completion (`_driver`): a device whose queue signals a semaphore when its own work
completes (the cuda stream) sets `_driver` to an object with `drive(semaphore, value, timeout)`
(wait in the calling thread for the device work that signals value, then signal it), `poll()`
(signal whatever already completed, without blocking) and `progress()` (make sure the pending
signals happen without a waiter: a background thread). Waits drive, queries poll, and
`notify_at` / multi-semaphore waits ask for progress; with no driver nothing changes.
"""

from __future__ import annotations

import _thread
import threading
import time
from collections.abc import Callable, Iterable

from amdgpu_cli.hal.enums import (
    SEMAPHORE_FAILURE_VALUE,
    SEMAPHORE_MAX_VALUE,
    HalError,
    StatusCode,
)


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + max(0.0, timeout)


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


_cond_creation = threading.Lock()  # makes each semaphore's Condition exactly once
_RLock = _thread.RLock
_new = object.__new__


class Semaphore:

    vm_type = "hal.semaphore"  # its VM ref type (see vm/refs.type_matches)
    # Slots: compiled code makes a semaphore per hal.fence.create, several per call.
    __slots__ = ("device", "_value", "_failure", "_lock", "_condition", "_watchers",
                 "_timepoint_callbacks", "_driver", "__weakref__")

    def __init__(self, initial_value: int = 0, *, device=None):
        if not 0 <= initial_value <= SEMAPHORE_MAX_VALUE:
            raise HalError(f"semaphore initial value {initial_value} out of range",
                           status="INVALID_ARGUMENT")
        self.device = device
        self._value = initial_value
        self._failure: HalError | None = None
        self._lock = _thread.RLock()  # threading.RLock() is a Python-level call in front of it
        self._condition: threading.Condition | None = None  # made by the first `_cond` use
        # Made by their first use (most semaphores are signalled once and never watched).
        self._watchers: set[threading.Event] | None = None
        self._timepoint_callbacks: list[tuple[int, Callable[[], None]]] | None = None
        self._driver = None  # see "Device completion" in the module docstring

    @classmethod
    def at_zero(cls, device=None) -> Semaphore:
        """`Semaphore(0, device=device)` without the argument checks: every hal.fence.create
        makes one, several per call of a compiled function."""
        semaphore = _new(cls)
        semaphore.device = device
        semaphore._value = 0
        semaphore._failure = None
        semaphore._lock = _RLock()
        semaphore._condition = None
        semaphore._watchers = None
        semaphore._timepoint_callbacks = None
        semaphore._driver = None
        return semaphore

    def _watch(self, event: threading.Event) -> None:
        """Register a multi-semaphore waiter's Event; caller holds the lock."""
        if self._watchers is None:
            self._watchers = set()
        self._watchers.add(event)

    def _unwatch(self, event: threading.Event) -> None:
        """Caller holds the lock."""
        if self._watchers is not None:
            self._watchers.discard(event)

    @property
    def _cond(self) -> threading.Condition:
        """The Condition over `_lock` (entering it takes the same lock)."""
        condition = self._condition
        if condition is None:
            with _cond_creation:
                condition = self._condition
                if condition is None:
                    condition = self._condition = threading.Condition(self._lock)
        return condition

    def __repr__(self) -> str:
        state = f"failed {self._failure.status}" if self._failure else f"value={self._value}"
        return f"<Semaphore {state}>"

    @property
    def failure(self) -> HalError | None:
        return self._failure

    @property
    def payload(self) -> int:
        """The raw payload: the value, or SEMAPHORE_FAILURE_VALUE once failed (never raises)."""
        with self._lock:
            return SEMAPHORE_FAILURE_VALUE if self._failure else self._value

    def query(self) -> int:
        """The current value; raises the failure if the semaphore failed."""
        if self._driver is not None:
            self._driver.poll()
        with self._lock:
            if self._failure is not None:
                raise self._failure
            return self._value

    def _notify(self) -> None:
        """Wake waiters; caller holds the lock (so a waiter's Condition, if any, is already made)."""
        condition = self._condition
        if condition is not None:
            condition.notify_all()
        if self._watchers:
            for event in tuple(self._watchers):
                event.set()

    def _take_due_callbacks(self) -> list[Callable[[], None]]:
        """Remove and return the timepoint callbacks now due; caller holds the lock."""
        if not self._timepoint_callbacks:
            return []
        failed = self._failure is not None
        due = [cb for value, cb in self._timepoint_callbacks if failed or self._value >= value]
        self._timepoint_callbacks = [(value, cb) for value, cb in self._timepoint_callbacks
                                     if not (failed or self._value >= value)]
        return due

    @property
    def awaited(self) -> bool:
        """Whether anything may be waiting for this semaphore without driving it: a `notify_at`
        callback, a multi-semaphore waiter, or a waiter blocked before it had a driver. A
        device that becomes its driver then makes progress on its own (see `wait`)."""
        return bool(self._timepoint_callbacks or self._watchers) or self._condition is not None

    def notify_at(self, value: int, callback: Callable[[], None]) -> None:
        """Call `callback()` once the payload is >= value or the semaphore has failed."""
        with self._lock:
            due = self._failure is not None or self._value >= value
            if not due:
                if self._timepoint_callbacks is None:
                    self._timepoint_callbacks = []
                self._timepoint_callbacks.append((value, callback))
        if due:
            callback()
        elif self._driver is not None:
            self._driver.progress()

    def signal(self, value: int) -> None:
        if value > SEMAPHORE_MAX_VALUE:
            raise HalError(f"semaphore value {value} exceeds the maximum {SEMAPHORE_MAX_VALUE}",
                           status="INVALID_ARGUMENT")
        with self._lock:
            if self._failure is not None:
                return  # a failed timeline stays failed; late signals from other work are dropped
            if value <= self._value:
                raise HalError(f"semaphore values must be monotonically increasing; current value "
                               f"{self._value}, new value {value}", status="OUT_OF_RANGE")
            self._value = value
            # Inline queues signal semaphores nobody waits on: skip the calls when there is no one.
            if self._condition is not None or self._watchers:
                self._notify()
            if not self._timepoint_callbacks:
                return
            due = self._take_due_callbacks()
        for callback in due:
            callback()

    def fail(self, error: HalError | StatusCode | str, message: str | None = None) -> None:
        """Fail the timeline with `error` (a HalError, or a status code/name plus a message)."""
        if not isinstance(error, HalError):
            code = StatusCode(error) if not isinstance(error, str) else StatusCode[error]
            if code == StatusCode.OK:
                raise HalError("cannot fail a semaphore with OK", status="INVALID_ARGUMENT")
            error = HalError(message or f"semaphore failed with {code.name}", status=code.name)
        with self._lock:
            if self._failure is None:
                self._failure = error
                self._notify()
            due = self._take_due_callbacks()
        for callback in due:
            callback()

    def _reached(self, value: int) -> bool:
        """True if reached; raises the failure; caller holds the lock."""
        if self._failure is not None:
            raise self._failure
        return self._value >= value

    def wait(self, value: int, timeout: float | None = None) -> None:
        """Block until the payload is >= value; DEADLINE_EXCEEDED on timeout, the failure if failed."""
        with self._lock:
            if self._reached(value):
                return  # no Condition needed
        deadline = _deadline(timeout)
        driven = None
        while True:
            # A device driver (module docstring) is driven once, here in the waiting thread;
            # one that appears while this waits (the work was issued later) is driven too. The
            # Condition is made before the driver is read again, and a device checks `awaited`
            # after it becomes the driver, so one of the two always sees the other.
            driver = self._driver
            if driver is not None and driver is not driven:
                driven = driver
                driver.drive(self, value, _remaining(deadline))
                with self._lock:
                    if self._reached(value):
                        return  # still no Condition: the usual case
            with self._cond:
                if self._reached(value):
                    return
                remaining = _remaining(deadline)
                if remaining == 0.0:
                    raise HalError(f"timed out waiting for semaphore value {value} (current "
                                   f"{self._value})", status="DEADLINE_EXCEEDED")
                if self._driver is not driven:
                    continue
                self._cond.wait(remaining)


def wait_semaphores(timepoints: Iterable[tuple[Semaphore, int]], *, wait_any: bool = False,
                    timeout: float | None = None) -> None:
    """Wait until all (or, with wait_any, one) of the (semaphore, value) timepoints are reached.

    A failure of any waited semaphore raises its error (IREE's wait-all and wait-any both fail fast).
    """
    timepoints = list(timepoints)
    if not timepoints:
        return
    if len(timepoints) == 1:
        semaphore, value = timepoints[0]
        semaphore.wait(value, timeout)
        return
    deadline = _deadline(timeout)
    if _check(timepoints, wait_any):
        return  # already satisfied: no Event needed
    event = threading.Event()
    for semaphore, _ in timepoints:
        with semaphore._lock:
            semaphore._watch(event)
        if semaphore._driver is not None:
            semaphore._driver.progress()
    try:
        while True:
            event.clear()  # clear before checking: a signal after the check sets it again
            if _check(timepoints, wait_any):
                return
            remaining = _remaining(deadline)
            if remaining == 0.0:
                raise HalError(f"timed out waiting for {len(timepoints)} semaphores "
                               f"({'any' if wait_any else 'all'})", status="DEADLINE_EXCEEDED")
            event.wait(remaining)
    finally:
        for semaphore, _ in timepoints:
            with semaphore._lock:
                semaphore._unwatch(event)


def _check(timepoints, wait_any: bool) -> bool:
    """Whether all (any) timepoints are reached; raises the first failure met, checking them all."""
    reached = []
    for semaphore, value in timepoints:
        with semaphore._lock:
            reached.append(semaphore._reached(value))
    return any(reached) if wait_any else all(reached)

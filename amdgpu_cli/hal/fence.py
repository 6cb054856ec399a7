"""Fence: a set of semaphore timepoints, at most one value per semaphore (the largest inserted).

A fence is reached when every timepoint is; it failed when any of its semaphores failed. `signal`
and `fail` act on every timepoint (fail propagates the error to all of them, which is how a failed
queue operation poisons the work waiting on its signal fence). An empty fence is reached.
`query` gives IREE's fence.query answer: OK, DEFERRED while pending, else the failure's code.

Threading: a fence is a plain list guarded by its semaphores' locks for waits; mutating the set
(insert/join) is meant for the thread that builds it. Sources: IREE runtime/src/iree/hal/fence.h/.c.
"""

from __future__ import annotations

from amdgpu_cli.hal.enums import HalError, StatusCode
from amdgpu_cli.hal.semaphore import Semaphore, wait_semaphores


_new = object.__new__


class Fence:

    vm_type = "hal.fence"  # its VM ref type (see vm/refs.type_matches)
    __slots__ = ("_timepoints", "__weakref__")  # compiled code makes several per call

    def __init__(self, timepoints=()):
        self._timepoints: dict[Semaphore, int] = {}
        for semaphore, value in timepoints:
            self.insert(semaphore, value)

    @classmethod
    def create(cls, semaphore: Semaphore, value: int) -> Fence:
        fence = _new(cls)  # no __init__: one call fewer for each hal.fence.create
        fence._timepoints = {semaphore: value}
        return fence

    @classmethod
    def create_at(cls, value: int = 1, *, device=None) -> Fence:
        """hal.fence.create: a fence over a new semaphore (starting at 0), reached at `value`."""
        return cls.create(Semaphore(0, device=device), value)

    @classmethod
    def join(cls, *fences: Fence | None) -> Fence:
        """A fence reached when all inputs are (None inputs ignored; the result may be empty)."""
        timepoints: dict[Semaphore, int] = {}
        for fence in fences:
            if fence is not None:
                for semaphore, value in fence._timepoints.items():
                    if timepoints.get(semaphore, -1) < value:  # insert(), inline
                        timepoints[semaphore] = value
        joined = _new(cls)
        joined._timepoints = timepoints
        return joined

    def insert(self, semaphore: Semaphore, value: int) -> None:
        current = self._timepoints.get(semaphore)
        if current is None or value > current:
            self._timepoints[semaphore] = value

    def extend(self, other: Fence | None) -> None:
        if other is not None:
            for semaphore, value in other.timepoints:
                self.insert(semaphore, value)

    @property
    def timepoints(self) -> list[tuple[Semaphore, int]]:
        return list(self._timepoints.items())

    def __len__(self) -> int:
        return len(self._timepoints)

    def __repr__(self) -> str:
        return f"<Fence {len(self)} timepoints>"

    @property
    def failure(self) -> HalError | None:
        for semaphore in self._timepoints:
            if semaphore.failure is not None:
                return semaphore.failure
        return None

    def query(self) -> StatusCode:
        for semaphore in self._timepoints:
            if semaphore._driver is not None:
                semaphore._driver.poll()
        failure = self.failure
        if failure is not None:
            return failure.code
        for semaphore, value in self._timepoints.items():
            if semaphore.payload < value:
                return StatusCode.DEFERRED
        return StatusCode.OK

    def is_reached(self) -> bool:
        for semaphore, value in self._timepoints.items():
            if type(semaphore) is Semaphore:  # the usual case: no property calls
                if semaphore._failure is not None or semaphore._value < value:
                    return False
            elif semaphore.failure is not None or semaphore.payload < value:
                return False
        return True

    def signal(self) -> None:
        for semaphore, value in self._timepoints.items():
            if type(semaphore) is Semaphore:
                if semaphore._failure is None and semaphore._value < value:
                    semaphore.signal(value)
            elif semaphore.failure is None and semaphore.payload < value:
                semaphore.signal(value)

    def fail(self, error: HalError | StatusCode | str, message: str | None = None) -> None:
        for semaphore in self._timepoints:
            semaphore.fail(error, message)

    def wait(self, timeout: float | None = None) -> None:
        """Block until reached; DEADLINE_EXCEEDED on timeout; raises a semaphore's failure."""
        for semaphore, value in self._timepoints.items():
            if (type(semaphore) is not Semaphore or semaphore._failure is not None
                    or semaphore._value < value):
                break
        else:
            return  # every timepoint already reached, none failed
        wait_semaphores(self.timepoints, timeout=timeout)


def wait_fences(fences, *, wait_any: bool = False, timeout: float | None = None) -> None:
    """hal.fence.await over several fences (None entries count as reached)."""
    fences = [f for f in fences if f is not None and f._timepoints]
    if not fences:
        return
    if not wait_any:
        # One fence (what compiled code awaits) is waited as it is: no joined copy.
        (fences[0] if len(fences) == 1 else Fence.join(*fences)).wait(timeout)
        return
    # Any fence reached: no fence is "reached" by one of its semaphores, so poll by fence.
    import threading
    import time
    deadline = None if timeout is None else time.monotonic() + timeout
    events = threading.Event()
    semaphores = {s for f in fences for s, _ in f.timepoints}
    for s in semaphores:
        with s._lock:
            s._watch(events)
        if s._driver is not None:
            s._driver.progress()
    try:
        while True:
            events.clear()
            for fence in fences:
                status = fence.query()
                if status == StatusCode.OK:
                    return
                if status != StatusCode.DEFERRED:
                    raise fence.failure
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if remaining == 0.0:
                raise HalError("timed out waiting for any fence", status="DEADLINE_EXCEEDED")
            events.wait(remaining)
    finally:
        for s in semaphores:
            with s._lock:
                s._unwatch(events)

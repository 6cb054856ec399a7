"""How a host queue resolves waits: epoch arithmetic, the wait strategy per ISA, the registry of
in-flight producers, and parked (deferred) submissions.

- Epochs (reference §5.4): a queue's epoch signal starts at E0 = INT64_MAX/2 and its CP decrements
  it once per submission, so epoch N is complete when load <= E0 − N; a BARRIER_VALUE packet with
  cond LT and value E0 − N + 1 (mask INT64_MAX) passes exactly then.
- Strategy: "barrier_value" where AMD's BARRIER_VALUE packet is validated (gfx90a = 9.0.10,
  gfx940–942 = 9.4.0–9.4.2, gfx950 = 9.5.0), else "defer" (IREE's PM4 wait for gfx1100 is not
  built).
- Producer registry: per semaphore, the (value, queue, epoch) of every issued, undrained signal, so
  a queue can turn a wait into a device wait on the producer's epoch. Entries are added before the
  packets are published and removed after the drain signalled the semaphore, so a waiter always
  sees either the value reached or its producer (else it defers, which is never wrong).
- Parked submissions: a deferred submission counts its waits down through
  `Semaphore.notify_at` callbacks (which run in the signalling thread and never block) and is
  handed to its queue's deferred-issue thread when all are reached, or at the first failure.
Sources: IREE `host_queue_waits.c`, `host_queue_policy.c`.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence

from amdgpu_cli.drivers.amdgpu import targets
from amdgpu_cli.hal.enums import HalError

INT64_MAX = (1 << 63) - 1
EPOCH_INITIAL = INT64_MAX // 2  # E0 (0x3FFFFFFFFFFFFFFF)
BARRIER_VALUE_VERSIONS = frozenset({(9, 0, 10), (9, 4, 0), (9, 4, 1), (9, 4, 2), (9, 5, 0)})
WAIT_STRATEGIES = ("barrier_value", "defer")


def default_wait_strategy(isa: str) -> str:
    """"barrier_value" where the AMD BARRIER_VALUE packet is validated (gfx90a, gfx940–942, gfx950),
    else "defer" (reference §5.4; gfx1100's PM4 wait is not built)."""
    target = targets.parse_isa_name(isa)
    supported = not target.generic and target.version in BARRIER_VALUE_VERSIONS
    return "barrier_value" if supported else "defer"


def epoch_wait_value(epoch: int) -> int:
    """The BARRIER_VALUE compare value (cond LT) that holds once `epoch` has completed."""
    return EPOCH_INITIAL - epoch + 1


# ---- the producer registry ----

_registry_lock = threading.Lock()
# semaphore -> [(value, queue, epoch)]
_producers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def find_producer(semaphore, value: int):
    """(queue, epoch) of the earliest issued, undrained signal taking `semaphore` to >= value."""
    with _registry_lock:
        entries = [entry for entry in _producers.get(semaphore, ()) if entry[0] >= value]
    if not entries:
        return None
    _, queue, epoch = min(entries, key=lambda entry: entry[0])
    return queue, epoch


def register(signals, queue, epoch: int) -> None:
    with _registry_lock:
        for semaphore, value in signals:
            _producers.setdefault(semaphore, []).append((value, queue, epoch))


def unregister(signals, queue, epoch: int) -> None:
    with _registry_lock:
        for semaphore, _ in signals:
            entries = _producers.get(semaphore)
            if entries is None:
                continue
            entries[:] = [e for e in entries if not (e[1] is queue and e[2] == epoch)]
            if not entries:
                del _producers[semaphore]


# ---- parked submissions and the signals they carry ----


class Parked:
    """A deferred submission: issued once every wait is reached (or failed at the first failure)."""

    def __init__(self, waits, signals, build, retain, ready: Callable[[Parked], None]):
        self.waits, self.signals, self.build, self.retain = waits, signals, build, retain
        self._ready = ready
        self._left = len(waits)
        self._done = False
        self._lock = threading.Lock()

    def arrive(self, semaphore) -> None:
        """A wait's timepoint callback (runs in the signalling thread; never blocks)."""
        with self._lock:
            if self._done:
                return
            self._left -= 1
            if semaphore.failure is None and self._left > 0:
                return
            self._done = True
        self._ready(self)

    def cancel(self) -> bool:
        """Mark done; True if it was still waiting (the caller then owns its signals)."""
        with self._lock:
            was_waiting, self._done = not self._done, True
        return was_waiting


def advance(semaphore, value: int) -> None:
    """Signal a completed timepoint. Completion threads of different queues run independently, so
    a later timepoint of the same semaphore may have been signalled first (its epoch waited on
    this one on the device): a value already passed is left as is."""
    if semaphore.payload >= value:
        return
    try:
        semaphore.signal(value)
    except HalError as error:
        if semaphore.failure is None and semaphore.payload < value:
            semaphore.fail(error)
    except Exception as error:  # a notify_at callback broke its contract: fail the timeline
        semaphore.fail(HalError(f"a semaphore callback raised {error!r}", status="INTERNAL"))


def fail_signals(signals, error: HalError) -> None:
    for semaphore, _ in signals:
        semaphore.fail(error)


def fail_waiting(parked: Sequence[Parked], error: HalError) -> None:
    for item in parked:
        fail_signals(item.signals, error)

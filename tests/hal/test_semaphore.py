import threading
import time

import pytest

from amdgpu_cli.hal import Fence, HalError, Semaphore, StatusCode, wait_fences, wait_semaphores


def test_signal_monotonic():
    s = Semaphore(0)
    s.signal(3)
    assert s.query() == 3
    for bad in (3, 2):
        with pytest.raises(HalError) as e:
            s.signal(bad)
        assert e.value.status == "OUT_OF_RANGE"
    assert s.query() == 3


def test_wait_wakes_on_value_and_times_out():
    s = Semaphore(0)
    s.wait(0, timeout=0)
    with pytest.raises(HalError) as e:
        s.wait(1, timeout=0.01)
    assert e.value.status == "DEADLINE_EXCEEDED"
    t = threading.Timer(0.05, s.signal, args=(5,))
    t.start()
    s.wait(4, timeout=5)
    t.join(5)


def test_failure_wakes_all_waiters():
    s = Semaphore(0)
    errors = []

    def waiter():
        try:
            s.wait(10, timeout=5)
        except HalError as e:
            errors.append(e.status)

    threads = [threading.Thread(target=waiter) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    s.fail(StatusCode.ABORTED, "boom")
    for t in threads:
        t.join(5)
    assert errors == ["ABORTED"] * 3
    with pytest.raises(HalError):
        s.query()
    s.signal(20)  # ignored after failure


def test_wait_any_all():
    a, b = Semaphore(0), Semaphore(0)
    threading.Timer(0.05, b.signal, args=(1,)).start()
    wait_semaphores([(a, 1), (b, 1)], wait_any=True, timeout=5)
    with pytest.raises(HalError):
        wait_semaphores([(a, 1), (b, 1)], timeout=0.02)
    threading.Timer(0.05, a.signal, args=(1,)).start()
    wait_semaphores([(a, 1), (b, 1)], timeout=5)


def test_fence_semantics():
    a, b = Semaphore(0), Semaphore(0)
    f = Fence([(a, 1), (a, 3), (a, 2)])
    assert f.timepoints == [(a, 3)]
    g = Fence.join(f, None, Fence.create(b, 2))
    assert len(g) == 2 and g.query() == StatusCode.DEFERRED
    g.signal()
    assert g.query() == StatusCode.OK and a.query() == 3
    assert len(Fence.join(None, Fence())) == 0
    wait_fences([None, g], timeout=0)
    h = Fence.create_at(1)
    h.fail(StatusCode.DATA_LOSS, "x")
    assert h.query() == StatusCode.DATA_LOSS
    with pytest.raises(HalError):
        wait_fences([h], timeout=1)


def test_notify_at_runs_once_when_reached_or_failed():
    s = Semaphore(2)
    calls = []
    s.notify_at(2, lambda: calls.append("already"))  # reached: runs at once, in this thread
    assert calls == ["already"]
    s.notify_at(5, lambda: calls.append("five"))
    s.notify_at(4, lambda: calls.append("four"))
    s.signal(3)
    assert calls == ["already"]
    s.signal(4)
    assert calls == ["already", "four"]
    s.signal(6)
    s.signal(7)
    assert calls == ["already", "four", "five"]  # each callback exactly once
    seen_in = []
    t = Semaphore(0)
    t.notify_at(9, lambda: seen_in.append((threading.current_thread().name, t.failure.status)))
    worker = threading.Thread(target=t.fail, args=(StatusCode.ABORTED, "gone"), name="failer")
    worker.start()
    worker.join(5)
    assert seen_in == [("failer", "ABORTED")]  # failure also notifies, from the failing thread
    t.notify_at(1, lambda: seen_in.append("late"))
    assert seen_in[-1] == "late"

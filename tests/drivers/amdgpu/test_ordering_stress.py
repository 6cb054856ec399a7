"""Acceptance 3: 1 000 submissions over 2 gfx942 devices × 2 host queues with random waits and
signals finish with every semaphore at its final value, and no packet starts before its waits.

The plan is a random DAG in a logical order: each submission signals the next value of one or two
of six timeline semaphores (and waits for the value before it, as a timeline is used), and waits
on up to two more timepoints signalled earlier in the logical order. All of it is submitted while
every queue is held behind a gate, so nothing completes meanwhile. The first half is submitted in
logical order: its waits become BARRIER_VALUE packets on the producer queue's epoch signal (same
GPU or the other one) or are dropped (same queue). The second half is shuffled within windows of
16: waits made before their signal exists are parked (wait-before-signal), and so is everything
that waits on parked work, until the host sees the timepoints after the gates open.

Each submission is one real device-library fill of its own 64 bytes, with its own completion
signal; softhsa's profiler writes start/end timestamps (one CLOCK_MONOTONIC clock for all queues)
into it. The truths: the planned final values, the planned fill bytes (numpy), and for
every wait edge start(waiter) >= end(producer).
"""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from amdgpu_cli.hal.semaphore import Semaphore
from tests.softhsa.session import private_softhsa

from .test_host_queue import CONFIG, Rig

SUBMISSIONS = 1000
SEMAPHORES = 6
WINDOW = 16
REGION = 64


@pytest.fixture
def rig(softhsa_lib, tmp_path_factory):
    with private_softhsa(softhsa_lib, tmp_path_factory).running(CONFIG) as session:
        rig = Rig(session)
        try:
            yield rig
        finally:
            rig.close()


def make_plan(rng: random.Random):
    """[(queue index, signals [(sem, value)], waits [(sem, value)])] in logical order, and the
    logical submission that signals each (sem, value)."""
    values = [0] * SEMAPHORES
    producer: dict[tuple[int, int], int] = {}
    plan = []
    for k in range(SUBMISSIONS):
        signals, waits = [], set()
        for sem in rng.sample(range(SEMAPHORES), rng.choice((1, 1, 2))):
            values[sem] += 1
            signals.append((sem, values[sem]))
            if values[sem] > 1:
                waits.add((sem, values[sem] - 1))
        for _ in range(rng.randrange(3)):
            sem = rng.randrange(SEMAPHORES)
            if values[sem] and (sem, values[sem]) not in signals:
                waits.add((sem, rng.randint(max(1, values[sem] - 8), values[sem])))
        waits = {(s, v) for s, v in waits if producer.get((s, v), k) != k}
        for timepoint in signals:
            producer[timepoint] = k
        plan.append((rng.randrange(4), signals, sorted(waits)))
    return plan, producer, values


def test_thousand_submissions_across_two_devices_keep_every_wait(rig):
    rng = random.Random(20261122)
    plan, producer, final_values = make_plan(rng)
    order = list(range(SUBMISSIONS))
    for start in range(SUBMISSIONS // 2, SUBMISSIONS, WINDOW):
        window = order[start:start + WINDOW]
        rng.shuffle(window)
        order[start:start + WINDOW] = window
    position = {k: i for i, k in enumerate(order)}
    edges = [(k, producer[w]) for k, (_, _, waits) in enumerate(plan) for w in waits]
    assert sum(position[p] > position[k] for k, p in edges) > 100  # wait-before-signal
    assert sum(position[p] < position[k] and plan[p][0] != plan[k][0] for k, p in edges) > 100

    queues = [rig.queue(device, index) for device in (0, 1) for index in (0, 1)]
    for queue in queues:
        rig.hsa.call("hsa_amd_profiling_set_profiler_enabled", queue.hsa_queue, 1)
    buffers = [rig.buffer(device, SUBMISSIONS * REGION) for device in (0, 1)]
    semaphores = [Semaphore(0) for _ in range(SEMAPHORES)]
    done = [rig.s.signal(1) for _ in range(SUBMISSIONS)]

    # Every queue starts held (a gated barrier-AND in front), so nothing completes while the plan
    # is submitted: device waits really wait, and the parked ones are issued only afterwards.
    openers = [rig.gate(queue) for queue in queues]
    started = time.monotonic()
    for k in order:
        queue_index, signals, waits = plan[k]
        device = queue_index // 2
        address = buffers[device][0] + k * REGION
        queues[queue_index].submit(
            [(semaphores[s], v) for s, v in waits], [(semaphores[s], v) for s, v in signals],
            rig.fill(device, address, REGION, k % 255 + 1, completion_signal=done[k].handle))
    assert [s.query() for s in semaphores] == [0] * SEMAPHORES
    for open_queue in openers:
        open_queue()
    for semaphore, value in zip(semaphores, final_values):
        semaphore.wait(value, timeout=20)
    for queue in queues:
        queue.wait_idle(10)
    assert time.monotonic() - started < 20
    assert [s.query() for s in semaphores] == final_values

    times = rig.ffi.new("hsa_amd_profiling_dispatch_time_t*")
    spans = []
    for k, signal in enumerate(done):
        assert rig.s.signal_value(signal) == 0
        agent = rig.gpus[plan[k][0] // 2]
        rig.hsa.call("hsa_amd_profiling_get_dispatch_time", agent, signal, times)
        assert 0 < times.start <= times.end
        spans.append((times.start, times.end))
    early = [(k, p) for k, p in edges if spans[k][0] < spans[p][1]]
    assert not early, f"{len(early)} dispatches started before the end of what they waited for"

    for device, (_, array) in enumerate(buffers):
        expected = np.zeros(SUBMISSIONS * REGION, np.uint8)
        for k, (queue_index, _, _) in enumerate(plan):
            if queue_index // 2 == device:
                expected[k * REGION:(k + 1) * REGION] = k % 255 + 1
        np.testing.assert_array_equal(array, expected)

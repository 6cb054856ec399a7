"""softhsa fault injection: `"faults": {"queue_error_after_packets": N, "queue_error_status": ...}`
(top level for every GPU, or per GPU) makes each queue of the agent fail in place of its packet N.

What a real queue fault does is the HSA spec's (hsa_queue_create's callback: the runtime calls it
once with the error; ROCr then marks the queue inactive): packets before N complete, packet N and
everything behind it never run, the callback sees the configured status and the queue's own handle,
and `queue_inactive_signal` holds the status. Statuses are the header constants (hsa_ffi.constants).
"""

from __future__ import annotations

import time

import pytest

from hsa_ffi import constants as C
from tests.softhsa.session import private_softhsa, rejected_config
from tests.softhsa.test_queue import error_queue


@pytest.fixture(scope="module")
def shsa(softhsa_lib, tmp_path_factory):
    return private_softhsa(softhsa_lib, tmp_path_factory)


def _run_barriers(s, ring, count: int) -> list:
    """Publishes `count` barrier-AND packets, each with its own completion signal and doorbell."""
    signals = [s.signal(1) for _ in range(count)]
    for signal in signals:
        ring.ring(ring.barrier_and(completion=signal))
    return signals


def _assert_failed_at(s, ring, calls, called, signals, after: int, status: int) -> None:
    assert called.wait(5), "the error callback never ran"
    time.sleep(0.03)  # a second callback or a late packet would show by now
    assert calls == [(status, int(s.ffi.cast("uintptr_t", ring.q)))]
    assert [s.signal_value(x) for x in signals] == [0] * after + [1] * (len(signals) - after)
    assert ring.read_index() == after
    inactive = s.ffi.cast("amd_queue_t*", ring.q).queue_inactive_signal
    assert s.signal_value(inactive) == status


@pytest.mark.parametrize(("name", "status"), [
    ("HSA_STATUS_ERROR_EXCEPTION", C.HSA_STATUS_ERROR_EXCEPTION),
    ("HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION", C.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION),
])
def test_each_queue_fails_in_place_of_packet_n(shsa, name, status):
    config = {"faults": {"queue_error_after_packets": 3, "queue_error_status": name}}
    with shsa.running(config) as s:
        gpu = s.gpus()[0]
        for _ in range(2):  # the count is per queue: a second queue also runs exactly 3
            ring, calls, called, _keep = error_queue(s, gpu)
            signals = _run_barriers(s, ring, 6)
            _assert_failed_at(s, ring, calls, called, signals, 3, status)


def test_the_default_status_is_exception_and_zero_fails_the_first_packet(shsa):
    with shsa.running({"faults": {"queue_error_after_packets": 0}}) as s:
        ring, calls, called, _keep = error_queue(s, s.gpus()[0])
        signals = _run_barriers(s, ring, 2)
        _assert_failed_at(s, ring, calls, called, signals, 0, C.HSA_STATUS_ERROR_EXCEPTION)


def test_a_gpu_entry_overrides_the_top_level(shsa):
    gpu = {"name": "gfx942"}
    config = {"faults": {"queue_error_after_packets": 1},
              "agents": [{**gpu, "faults": {"queue_error_status": "HSA_STATUS_ERROR_MEMORY_FAULT"}},
                         {**gpu, "faults": {"queue_error_after_packets": 1000}}]}
    with shsa.running(config) as s:
        first, second = s.gpus()
        ring, calls, called, _keep = error_queue(s, first)
        signals = _run_barriers(s, ring, 4)
        _assert_failed_at(s, ring, calls, called, signals, 1, C.HSA_STATUS_ERROR_MEMORY_FAULT)
        healthy, healthy_calls, _, _keep2 = error_queue(s, second)
        signals = _run_barriers(s, healthy, 70)  # wraps the 64-slot ring
        assert s.wait_eq(signals[-1], 0) == 0
        assert healthy_calls == [] and healthy.read_index() == 70


def test_no_faults_key_means_no_fault(shsa):
    with shsa.running() as s:
        ring, calls, _, _keep = error_queue(s, s.gpus()[0])
        signals = _run_barriers(s, ring, 100)
        assert s.wait_eq(signals[-1], 0) == 0 and calls == []


@pytest.mark.parametrize(("text", "names"), [
    ('{"faults": {"queue_error_after_packet": 1}}', "faults.queue_error_after_packet: unknown key"),
    ('{"faults": {"queue_error_status": "HSA_STATUS_SUCCESS"}}',
     "faults.queue_error_status: not a queue error status"),
    ('{"faults": {"queue_error_after_packets": -1}}', "faults.queue_error_after_packets"),
    ('{"agents": [{"faults": []}]}', "agents[0].faults: expected object"),
    ('{"agents": [{"faults": {"queue_error_status": 4104}}]}',
     "agents[0].faults.queue_error_status: expected string"),
    ('{"cpus": [{"faults": {}}]}', "cpus[0].faults: unknown key"),
])
def test_bad_faults_fail_hsa_init_with_one_line(shsa, tmp_path, monkeypatch, capfd, text, names):
    err, _ = rejected_config(shsa, text, tmp_path, monkeypatch, capfd)
    assert err.count("\n") == 1 and names in err, err

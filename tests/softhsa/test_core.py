"""softhsa core: init reference counting, status strings, system info, memory pools and signals.

Truth: the HSA headers' documented behaviour (statuses, attribute types, the amd_signal_t layout from
amd_hsa_signal.h), the configuration each test writes, and Python arithmetic for signal operations.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hsa_ffi import constants as C
from tests.softhsa.session import GiB, THREE_GPUS, private_softhsa

TIMEOUT_NS = 5_000_000_000


@pytest.fixture(scope="module")
def shsa(softhsa_lib, tmp_path_factory):
    return private_softhsa(softhsa_lib, tmp_path_factory)


# ---- init, status strings, system info ----


def test_calls_before_init_report_not_initialized(shsa):
    value = shsa.ffi.new("uint16_t*")
    signal = shsa.ffi.new("hsa_signal_t*")
    assert shsa.lib.hsa_system_get_info(C.HSA_SYSTEM_INFO_VERSION_MAJOR, value) == \
        C.HSA_STATUS_ERROR_NOT_INITIALIZED
    assert shsa.lib.hsa_amd_signal_create(1, 0, shsa.ffi.NULL, 0, signal) == \
        C.HSA_STATUS_ERROR_NOT_INITIALIZED
    assert shsa.lib.hsa_shut_down() == C.HSA_STATUS_ERROR_NOT_INITIALIZED


def test_init_is_reference_counted(shsa):
    value = shsa.ffi.new("uint16_t*")
    with shsa.running():
        shsa.hsa.call("hsa_init")
        shsa.hsa.call("hsa_shut_down")
        assert shsa.lib.hsa_system_get_info(C.HSA_SYSTEM_INFO_VERSION_MAJOR, value) == 0
    assert shsa.lib.hsa_system_get_info(C.HSA_SYSTEM_INFO_VERSION_MAJOR, value) == \
        C.HSA_STATUS_ERROR_NOT_INITIALIZED


def test_status_string_covers_every_status_and_names_it(shsa):
    statuses = {name: value for name, value in vars(C).items()
                if name.startswith("HSA_STATUS_") and isinstance(value, int)}
    assert len(statuses) > 35
    text = shsa.ffi.new("const char**")
    for name, value in statuses.items():
        assert shsa.lib.hsa_status_string(value, text) == C.HSA_STATUS_SUCCESS, name
        message = shsa.ffi.string(text[0]).decode()
        assert message.startswith(name + ": ") and len(message) > len(name) + 10
    assert shsa.lib.hsa_status_string(0x7777, text) == C.HSA_STATUS_ERROR_INVALID_ARGUMENT


def test_system_info(shsa):
    with shsa.running() as s:
        assert s.system_info(C.HSA_SYSTEM_INFO_VERSION_MAJOR, "uint16_t") == 1
        assert s.system_info(C.HSA_SYSTEM_INFO_VERSION_MINOR, "uint16_t") >= 1
        assert s.system_info(C.HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, "uint64_t") == 1_000_000_000
        assert s.system_info(C.HSA_SYSTEM_INFO_ENDIANNESS, "int") == C.HSA_ENDIANNESS_LITTLE
        assert s.system_info(C.HSA_SYSTEM_INFO_MACHINE_MODEL, "int") == C.HSA_MACHINE_MODEL_LARGE
        assert s.system_info(C.HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED, "bool") is True
        assert s.system_info(C.HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT, "bool") is False
        first = s.system_info(C.HSA_SYSTEM_INFO_TIMESTAMP, "uint64_t")
        time.sleep(0.002)
        assert s.system_info(C.HSA_SYSTEM_INFO_TIMESTAMP, "uint64_t") - first >= 2_000_000
        assert s.lib.hsa_system_get_info(0x7FFF, s.ffi.new("uint64_t*")) == \
            C.HSA_STATUS_ERROR_INVALID_ARGUMENT


def test_amd_loader_extension_is_delegated_to_the_loader_half(shsa):
    with shsa.running() as s:
        minor, result = s.ffi.new("uint16_t*"), s.ffi.new("bool*")
        s.hsa.call("hsa_system_major_extension_supported", C.HSA_EXTENSION_AMD_LOADER, 1, minor, result)
        assert result[0] is True and minor[0] == 3
        for extension, major in ((C.HSA_EXTENSION_AMD_LOADER, 2), (C.HSA_EXTENSION_IMAGES, 1)):
            s.hsa.call("hsa_system_major_extension_supported", extension, major, minor, result)
            assert result[0] is False
        table = s.ffi.new("hsa_ven_amd_loader_1_03_pfn_t*")
        s.hsa.call("hsa_system_get_major_extension_table", C.HSA_EXTENSION_AMD_LOADER, 1,
                   s.ffi.sizeof("hsa_ven_amd_loader_1_03_pfn_t"), table)
        pointers = s.ffi.cast("void**", table)
        assert all(pointers[i] != s.ffi.NULL for i in range(7))
        assert s.lib.hsa_system_get_major_extension_table(C.HSA_EXTENSION_AMD_LOADER, 1, 0,
                                                          s.ffi.NULL) == C.HSA_STATUS_ERROR_INVALID_ARGUMENT


def test_agent_info_limits_and_errors(shsa):
    with shsa.running() as s:
        cpu, gpu = s.agents()
        assert s.agent_info(gpu, C.HSA_AGENT_INFO_QUEUE_MIN_SIZE) == 64
        assert s.agent_info(gpu, C.HSA_AGENT_INFO_QUEUE_MAX_SIZE) == 131072
        assert s.agent_info(gpu, C.HSA_AGENT_INFO_WORKGROUP_MAX_SIZE) == 1024
        dims = s.ffi.new("uint16_t[3]")
        s.hsa.call("hsa_agent_get_info", gpu, C.HSA_AGENT_INFO_WORKGROUP_MAX_DIM, dims)
        assert list(dims) == [1024, 1024, 1024]
        grid = s.agent_info(gpu, C.HSA_AGENT_INFO_GRID_MAX_DIM, "hsa_dim3_t")
        assert (grid.x, grid.y, grid.z) == (2**31 - 1, 65535, 65535)  # ROCr GpuAgent::GetInfo
        assert s.agent_info(gpu, C.HSA_AGENT_INFO_PROFILE, "int") == C.HSA_PROFILE_BASE
        assert s.agent_info(cpu, C.HSA_AGENT_INFO_QUEUES_MAX) == 0
        value = s.ffi.new("uint64_t[16]")
        assert s.lib.hsa_agent_get_info(gpu, 0x7FFF, value) == C.HSA_STATUS_ERROR_INVALID_ARGUMENT
        bogus = s.ffi.new("hsa_agent_t*", {"handle": 12345})[0]
        assert s.lib.hsa_agent_get_info(bogus, C.HSA_AGENT_INFO_NAME, value) == \
            C.HSA_STATUS_ERROR_INVALID_AGENT


def test_iteration_stops_on_break_and_returns_it(shsa):
    with shsa.running(THREE_GPUS) as s:
        seen = []

        @s.ffi.callback("hsa_status_t(hsa_agent_t, void*)")
        def visit(agent, _):
            seen.append(agent.handle)
            return C.HSA_STATUS_INFO_BREAK if len(seen) == 2 else C.HSA_STATUS_SUCCESS

        assert s.lib.hsa_iterate_agents(visit, s.ffi.NULL) == C.HSA_STATUS_INFO_BREAK
        assert len(seen) == 2


# ---- memory ----


def test_agent_pool_access_follows_rocr(shsa):
    with shsa.running(THREE_GPUS) as s:
        (cpu,) = s.cpus()
        gpu0, gpu1, _ = s.gpus()
        cpu_fine, cpu_coarse = s.pools(cpu)
        gpu0_coarse, gpu0_fine = s.pools(gpu0)

        def access(agent, pool):
            value = s.ffi.new("int*")
            s.hsa.call("hsa_amd_agent_memory_pool_get_info", agent, pool,
                       C.HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, value)
            return value[0]

        allowed = C.HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT
        disallowed = C.HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT
        # ROCr MemoryRegion::GetAccessInfo (ROCR-Runtime src/core/runtime/amd_memory_region.cpp)
        assert access(gpu0, gpu0_coarse) == allowed     # the owner
        assert access(cpu, cpu_coarse) == allowed
        assert access(gpu1, gpu0_coarse) == disallowed  # peer coarse
        assert access(gpu1, gpu0_fine) == disallowed    # peer fine on one xGMI hive
        assert access(cpu, gpu0_coarse) == disallowed
        assert access(gpu0, cpu_fine) == disallowed     # system memory needs allow_access
        assert access(gpu0, cpu_coarse) == disallowed
        assert s.pool_info(cpu_coarse, C.HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL, "bool") is True
        assert s.pool_info(gpu0_coarse, C.HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL, "bool") is False


def test_cpu_regions_mirror_its_pools(shsa):
    with shsa.running() as s:
        (cpu,) = s.cpus()
        flags = []
        for region in s.regions(cpu):
            value = s.ffi.new("uint32_t*")
            s.hsa.call("hsa_region_get_info", region, C.HSA_REGION_INFO_GLOBAL_FLAGS, value)
            flags.append(value[0])
        assert flags[0] == C.HSA_REGION_GLOBAL_FLAG_KERNARG | C.HSA_REGION_GLOBAL_FLAG_FINE_GRAINED
        assert flags[1] == C.HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED


def test_allocation_is_real_aligned_zeroed_memory(shsa):
    config = {"agents": [{"pools": [{"flags": ["coarse"], "size": GiB, "granule": 4096,
                                     "alignment": 65536}]}]}
    with shsa.running(config) as s:
        (pool,) = s.pools(s.gpus()[0])
        status, ptr = s.allocate(pool, 5000)
        assert status == C.HSA_STATUS_SUCCESS
        address = int(s.ffi.cast("uintptr_t", ptr))
        assert address % 65536 == 0
        view = s.ffi.buffer(ptr, 8192)  # rounded up to two 4096-byte granules
        assert bytes(view) == bytes(8192)
        view[:] = bytes(range(256)) * 32
        copy = s.ffi.new("uint8_t[8192]")
        s.hsa.call("hsa_memory_copy", copy, ptr, 8192)
        assert bytes(copy) == bytes(range(256)) * 32
        s.hsa.call("hsa_amd_memory_pool_free", ptr)
        assert s.lib.hsa_amd_memory_pool_free(ptr) == C.HSA_STATUS_ERROR_INVALID_ARGUMENT


def test_allocation_limits(shsa):
    config = {"agents": [{"pools": [{"size": 64 * 1024, "alloc_max_size": 32 * 1024},
                                    {"alloc_allowed": False}]}]}
    with shsa.running(config) as s:
        limited, forbidden = s.pools(s.gpus()[0])
        assert s.allocate(limited, 32 * 1024 + 1)[0] == C.HSA_STATUS_ERROR_INVALID_ALLOCATION
        assert s.allocate(forbidden, 4096)[0] == C.HSA_STATUS_ERROR_INVALID_ALLOCATION
        assert s.allocate(limited, 0)[0] == C.HSA_STATUS_ERROR_INVALID_ARGUMENT
        first = s.allocate(limited, 32 * 1024)
        second = s.allocate(limited, 30 * 1024)
        assert first[0] == second[0] == C.HSA_STATUS_SUCCESS
        assert s.allocate(limited, 1)[0] == C.HSA_STATUS_ERROR_OUT_OF_RESOURCES  # pool full
        s.hsa.call("hsa_amd_memory_pool_free", second[1])
        again = s.allocate(limited, 32 * 1024)
        assert again[0] == C.HSA_STATUS_SUCCESS  # freed bytes count again
        for ptr in (first[1], again[1]):
            s.hsa.call("hsa_amd_memory_pool_free", ptr)


def test_pointer_info_and_allow_access(shsa):
    with shsa.running(THREE_GPUS) as s:
        (cpu,) = s.cpus()
        gpu0, gpu1, gpu2 = s.gpus()
        status, ptr = s.allocate(s.pools(gpu0)[0], 10000)
        assert status == 0
        info, accessible = s.pointer_info(s.ffi.cast("uint8_t*", ptr) + 100)  # interior pointer
        assert info.type == C.HSA_EXT_POINTER_TYPE_HSA
        assert info.agentBaseAddress == ptr and info.hostBaseAddress == ptr
        assert info.sizeInBytes == 12288  # rounded to the 4096-byte granule
        assert info.agentOwner.handle == gpu0.handle
        assert info.global_flags == C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED
        assert accessible == {gpu0.handle}
        agents = s.ffi.new("hsa_agent_t[2]", [gpu1, cpu])
        s.hsa.call("hsa_amd_agents_allow_access", 2, agents, s.ffi.NULL, ptr)
        assert s.pointer_info(ptr)[1] == {gpu0.handle, gpu1.handle, cpu.handle}
        assert gpu2.handle not in s.pointer_info(ptr)[1]
        assert s.pointer_info(s.ffi.new("uint8_t[16]"))[0].type == C.HSA_EXT_POINTER_TYPE_UNKNOWN
        s.hsa.call("hsa_amd_memory_pool_free", ptr)


def test_system_memory_is_reachable_by_cpus_until_allowed_for_a_gpu(shsa):
    with shsa.running() as s:
        (cpu,), (gpu,) = s.cpus(), s.gpus()
        status, host = s.allocate(s.pools(cpu)[0], 4096)
        assert status == 0
        info, accessible = s.pointer_info(host)
        assert info.agentOwner.handle == cpu.handle and accessible == {cpu.handle}
        s.hsa.call("hsa_amd_agents_allow_access", 1, s.ffi.new("hsa_agent_t[1]", [gpu]),
                   s.ffi.NULL, host)
        assert s.pointer_info(host)[1] == {cpu.handle, gpu.handle}
        s.hsa.call("hsa_amd_memory_pool_free", host)


def test_shut_down_releases_allocations(shsa):
    with shsa.running() as s:
        pool = s.pools(s.gpus()[0])[0]
        status, ptr = s.allocate(pool, 4096)
        assert status == 0
    with shsa.running() as s:
        assert s.lib.hsa_amd_memory_pool_free(ptr) == C.HSA_STATUS_ERROR_INVALID_ARGUMENT


# ---- signals ----


def test_bitwise_signal_operations_beyond_the_hsa_ffi_subset(shsa):
    # hsa_ffi declares only what the driver calls; softhsa exports the whole family. An hsa_signal_t
    # is a one-uint64 struct, passed by value in a register like a plain uint64 (SysV x86-64).
    lib = ctypes.CDLL(shsa.hsa.path)
    for name in ("hsa_signal_and_scacq_screl", "hsa_signal_or_relaxed", "hsa_signal_xor_screlease"):
        getattr(lib, name).argtypes = (ctypes.c_uint64, ctypes.c_int64)
    with shsa.running() as s:
        sig = s.signal(0b1100)
        lib.hsa_signal_and_scacq_screl(sig.handle, 0b1010)
        assert s.lib.hsa_signal_load_relaxed(sig) == 0b1000
        lib.hsa_signal_or_relaxed(sig.handle, 0b0011)
        lib.hsa_signal_xor_screlease(sig.handle, 0b1001)
        assert s.lib.hsa_signal_load_relaxed(sig) == 0b0010


def test_signal_handle_is_an_amd_signal_t(shsa):
    with shsa.running() as s:
        signal = s.signal(42)
        amd = s.ffi.cast("amd_signal_t*", signal.handle)
        assert signal.handle % 64 == 0
        assert amd.kind == C.AMD_SIGNAL_KIND_USER
        assert amd.value == 42
        amd.value = 7  # a driver may write it directly; loads see it
        assert s.lib.hsa_signal_load_relaxed(signal) == 7


def test_signal_operations(shsa):
    with shsa.running() as s:
        lib = s.lib
        sig = s.signal(10)
        lib.hsa_signal_add_scacq_screl(sig, 5)
        lib.hsa_signal_add_relaxed(sig, 1)
        assert lib.hsa_signal_load_scacquire(sig) == 16
        lib.hsa_signal_subtract_scacq_screl(sig, 20)
        lib.hsa_signal_subtract_relaxed(sig, 1)
        assert lib.hsa_signal_load_relaxed(sig) == -5
        lib.hsa_signal_store_relaxed(sig, 2)
        assert lib.hsa_signal_exchange_scacq_screl(sig, 99) == 2
        assert lib.hsa_signal_cas_scacq_screl(sig, 5, 1) == 99  # mismatch: unchanged
        assert lib.hsa_signal_load_relaxed(sig) == 99
        assert lib.hsa_signal_cas_scacq_screl(sig, 99, 1) == 99
        assert lib.hsa_signal_load_relaxed(sig) == 1
        lib.hsa_signal_store_screlease(sig, -(1 << 62))
        assert lib.hsa_signal_load_relaxed(sig) == -(1 << 62)
        lib.hsa_signal_silent_store_relaxed(sig, 3)
        assert lib.hsa_signal_load_relaxed(sig) == 3


@pytest.mark.parametrize(("condition", "value", "compare", "holds"), [
    ("EQ", 3, 3, True), ("EQ", 3, 4, False), ("NE", 3, 4, True), ("NE", 3, 3, False),
    ("LT", 2, 3, True), ("LT", 3, 3, False), ("GTE", 3, 3, True), ("GTE", 2, 3, False),
])
def test_wait_conditions_and_timeout(shsa, condition, value, compare, holds):
    with shsa.running() as s:
        sig = s.signal(value)
        cond = getattr(C, f"HSA_SIGNAL_CONDITION_{condition}")
        timeout_ns = TIMEOUT_NS if holds else 20_000_000
        start = time.monotonic()
        observed = s.lib.hsa_signal_wait_scacquire(sig, cond, compare, timeout_ns,
                                                   C.HSA_WAIT_STATE_BLOCKED)
        elapsed = time.monotonic() - start
        assert observed == value
        if holds:
            assert elapsed < 1.0  # returned at once, not after the 5 s timeout
        else:
            assert 0.019 <= elapsed < 1.0  # honoured the 20 ms timeout_hint


def test_wait_wakes_promptly_on_store_from_another_thread(shsa):
    with shsa.running() as s:
        sig = s.signal(1)
        timer = threading.Timer(0.05, lambda: s.lib.hsa_signal_subtract_relaxed(sig, 1))
        start = time.monotonic()
        timer.start()
        observed = s.lib.hsa_signal_wait_relaxed(sig, C.HSA_SIGNAL_CONDITION_EQ, 0, TIMEOUT_NS,
                                                 C.HSA_WAIT_STATE_BLOCKED)
        elapsed = time.monotonic() - start
        timer.join()
        assert observed == 0 and 0.04 <= elapsed < 1.0


def test_wait_any(shsa):
    with shsa.running() as s:
        a, b = s.signal(1), s.signal(5)
        signals = s.ffi.new("hsa_signal_t[2]", [a, b])
        conds = s.ffi.new("hsa_signal_condition_t[2]", [C.HSA_SIGNAL_CONDITION_EQ] * 2)
        values = s.ffi.new("hsa_signal_value_t[2]", [0, 0])
        satisfying = s.ffi.new("hsa_signal_value_t*")
        assert s.lib.hsa_amd_signal_wait_any(2, signals, conds, values, 10_000_000,
                                             C.HSA_WAIT_STATE_BLOCKED, satisfying) == 0xFFFFFFFF
        timer = threading.Timer(0.03, lambda: s.lib.hsa_signal_store_screlease(b, 0))
        timer.start()
        index = s.lib.hsa_amd_signal_wait_any(2, signals, conds, values, TIMEOUT_NS,
                                              C.HSA_WAIT_STATE_BLOCKED, satisfying)
        timer.join()
        assert (index, satisfying[0]) == (1, 0)
        conds[0] = C.HSA_SIGNAL_CONDITION_NE
        values[0] = 0
        assert s.lib.hsa_amd_signal_wait_any(2, signals, conds, values, 0,
                                             C.HSA_WAIT_STATE_ACTIVE, satisfying) == 0
        assert satisfying[0] == 1


def test_signal_destroy_rejects_null(shsa):
    with shsa.running() as s:
        null = s.ffi.new("hsa_signal_t*")[0]
        assert s.lib.hsa_signal_destroy(null) == C.HSA_STATUS_ERROR_INVALID_ARGUMENT


# ---- the build ----


def test_build_is_warning_free_reused_and_exports_only_hsa(softhsa_lib):
    from hsa_ffi.cdef import CORE_FUNCTIONS
    from tests.softhsa.build import LIBRARY_NAME, build

    library = softhsa_lib / LIBRARY_NAME
    assert (softhsa_lib / "build.log").read_text() == ""  # -Wall -Wextra clean
    mtime = library.stat().st_mtime_ns
    assert build(softhsa_lib) == library and library.stat().st_mtime_ns == mtime
    nm = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True,
                        text=True, check=True).stdout
    exported = {line.split()[-1] for line in nm.splitlines()}
    assert set(CORE_FUNCTIONS) <= exported
    assert {name for name in exported if not name.startswith("hsa_")} <= {"_init", "_fini"}


def test_build_command_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "tests.softhsa.build", str(tmp_path)],
                            capture_output=True, text=True, cwd=Path(__file__).parents[2])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path / "libhsa-runtime64.so")
    assert "Warning" not in result.stderr

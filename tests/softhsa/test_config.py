"""softhsa's configuration: agents and pools from SOFTHSA_CONFIG, defaults, ROCR_VISIBLE_DEVICES.

Expected values come from the configuration each test writes (contract C2) and from the HSA header
constants (`hsa_ffi.constants`, checked against the real headers by tests/hsa_ffi).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from hsa_ffi import constants as C
from tests.softhsa.session import GiB, THREE_GPUS, private_softhsa, rejected_config


@pytest.fixture(scope="module")
def shsa(softhsa_lib, tmp_path_factory):
    return private_softhsa(softhsa_lib, tmp_path_factory)


def uuids(s) -> list[str]:
    return [s.agent_string(g, C.HSA_AMD_AGENT_INFO_UUID) for g in s.gpus()]


def test_default_configuration_is_one_cpu_and_one_gfx942(shsa):
    with shsa.running() as s:
        agents = s.agents()
        assert [s.agent_info(a, C.HSA_AGENT_INFO_DEVICE, "int") for a in agents] == [
            C.HSA_DEVICE_TYPE_CPU, C.HSA_DEVICE_TYPE_GPU]
        cpu, gpu = agents
        assert s.agent_string(gpu, C.HSA_AGENT_INFO_NAME) == "gfx942"
        assert s.agent_info(gpu, C.HSA_AGENT_INFO_WAVEFRONT_SIZE) == 64
        assert re.fullmatch(r"GPU-[0-9a-f]{16}", s.agent_string(gpu, C.HSA_AMD_AGENT_INFO_UUID))
        assert s.agent_string(cpu, C.HSA_AMD_AGENT_INFO_UUID) == "CPU-XX"
        assert s.agent_info(gpu, C.HSA_AGENT_INFO_NODE) == 1
        cpu_flags = [s.pool_info(p, C.HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, "uint32_t")
                     for p in s.pools(cpu)]
        assert cpu_flags == [C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
                             | C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,
                             C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED]
        assert len(s.pools(gpu)) == 2


def test_three_gpus_report_their_configured_identity(shsa):
    with shsa.running(THREE_GPUS) as s:
        assert len(s.cpus()) == 1
        gpus = s.gpus()
        # CPUs first, then GPUs in config order
        assert [a.handle for a in s.agents()[1:]] == [g.handle for g in gpus]
        for gpu, want in zip(gpus, THREE_GPUS["agents"], strict=True):
            assert s.agent_string(gpu, C.HSA_AGENT_INFO_NAME) == want["name"]
            assert s.agent_string(gpu, C.HSA_AGENT_INFO_VENDOR_NAME) == "AMD"
            assert s.agent_string(gpu, C.HSA_AMD_AGENT_INFO_PRODUCT_NAME) == want["product_name"]
            assert s.agent_string(gpu, C.HSA_AMD_AGENT_INFO_UUID) == want["uuid"]
            assert s.agent_info(gpu, C.HSA_AMD_AGENT_INFO_CHIP_ID) == want["chip_id"]
            assert s.agent_info(gpu, C.HSA_AGENT_INFO_NODE) == want["node"]
            assert s.agent_info(gpu, C.HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT) == want["compute_units"]
            assert s.agent_info(gpu, C.HSA_AGENT_INFO_WAVEFRONT_SIZE) == want.get("wavefront_size", 64)
            sizes = [s.pool_info(p, C.HSA_AMD_MEMORY_POOL_INFO_SIZE) for p in s.pools(gpu)]
            assert sizes == [p["size"] for p in want["pools"]]
        gfx1100 = gpus[2]
        assert s.agent_info(gfx1100, C.HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU) == 2
        assert s.agent_info(gfx1100, C.HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU) == 16
        nearest = s.agent_info(gfx1100, C.HSA_AMD_AGENT_INFO_NEAREST_CPU, "hsa_agent_t")
        assert nearest.handle == s.cpus()[0].handle


def test_isas_are_shared_by_name_and_report_their_name(shsa):
    with shsa.running(THREE_GPUS) as s:
        isas = [s._iterate("hsa_agent_iterate_isas", "hsa_isa_t", g) for g in s.gpus()]
        assert [len(i) for i in isas] == [1, 1, 1]
        assert isas[0][0].handle == isas[1][0].handle != isas[2][0].handle
        for (isa,), want in zip(isas, THREE_GPUS["agents"], strict=True):
            length = s.ffi.new("uint32_t*")
            s.hsa.call("hsa_isa_get_info_alt", isa, C.HSA_ISA_INFO_NAME_LENGTH, length)
            assert length[0] == len(want["isa"]) + 1  # includes the NUL
            name = s.ffi.new("char[]", length[0])
            s.hsa.call("hsa_isa_get_info_alt", isa, C.HSA_ISA_INFO_NAME, name)
            assert s.ffi.string(name).decode() == want["isa"]
            found = s.ffi.new("hsa_isa_t*")
            s.hsa.call("hsa_isa_from_name", want["isa"].encode(), found)
            assert found[0].handle == isa.handle
        assert s.lib.hsa_isa_from_name(b"amdgcn-amd-amdhsa--gfx000", found) == \
            C.HSA_STATUS_ERROR_INVALID_ISA_NAME


def test_name_only_gpu_gets_isa_wavefront_and_node_defaults(shsa):
    config = {"cpus": [{}, {}], "agents": [{"name": "gfx1100"}, {"isa": "amdgcn-amd-amdhsa--gfx90a:xnack-"}]}
    with shsa.running(config) as s:
        first, second = s.gpus()
        assert s.agent_info(first, C.HSA_AGENT_INFO_WAVEFRONT_SIZE) == 32
        assert s.agent_info(second, C.HSA_AGENT_INFO_WAVEFRONT_SIZE) == 64
        assert s.agent_string(second, C.HSA_AGENT_INFO_NAME) == "gfx90a"
        assert [s.agent_info(g, C.HSA_AGENT_INFO_NODE) for g in (first, second)] == [2, 3]
        assert [s.agent_info(c, C.HSA_AGENT_INFO_NODE) for c in s.cpus()] == [0, 1]


def test_pool_defaults_and_overrides(shsa):
    config = {"agents": [{"pools": [{"flags": ["fine"], "size": 8 * GiB},
                                    {"size": GiB, "alloc_max_size": 4096, "granule": 256,
                                     "alignment": 65536, "alloc_allowed": False,
                                     "accessible_by_all": True}]}]}
    with shsa.running(config) as s:
        plain, custom = s.pools(s.gpus()[0])
        info = C.HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE
        assert s.pool_info(plain, info) == 8 * GiB
        assert s.pool_info(plain, C.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE) == 4096
        assert s.pool_info(plain, C.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT) == 4096
        assert s.pool_info(plain, C.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, "bool") is True
        assert s.pool_info(plain, C.HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL, "bool") is False
        assert s.pool_info(custom, C.HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, "uint32_t") == \
            C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED
        assert s.pool_info(custom, info) == 4096
        assert s.pool_info(custom, C.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE) == 256
        assert s.pool_info(custom, C.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT) == 65536
        assert s.pool_info(custom, C.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, "bool") is False
        assert s.pool_info(custom, C.HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL, "bool") is True


A, B, D = (g["uuid"] for g in THREE_GPUS["agents"])


# ROCr's rules (RvdFilter in ROCR-Runtime core/runtime/amd_filter_device.cpp): tokens are trimmed and
# upper-cased; `G...` is a UUID prefix, anything else a strtol(base 0) index; the list ends at the
# first token that is empty, unknown, out of range or already listed; at most one token per GPU.
@pytest.mark.parametrize(("visible", "expected"), [
    ("0,1,2", [A, B, D]),
    ("2,0", [D, A]),                        # reorders
    ("1", [B]),
    ("gpu-aaaabbbbccccdddd,0", [D, A]),     # UUIDs, case-insensitive, mixed with indices
    ("GPU-1111222233334444", [B]),
    ("GPU-1111", [B]),                      # a unique UUID prefix is enough
    ("GPU-", []),                           # too short to be a UUID token
    (" 1 , 0x2 ", [B, D]),                  # trimmed; C integer literals
    ("1,x,0", [B]),                         # stops at the first invalid token
    ("1,,0", [B]),                          # an empty token is invalid
    ("0,7,1", [A]),                         # an out-of-range index is invalid
    ("-1,0", []),
    ("2,GPU-ffffffffffffffff,0", [D]),      # so is an unknown UUID
    ("0,1,0,2", [A, B]),                    # a repeated device ends the list
    ("", []),                               # set but empty: no GPU visible
])
def test_rocr_visible_devices_filters_and_reorders(shsa, visible, expected):
    with shsa.running(THREE_GPUS, visible=visible) as s:
        assert uuids(s) == expected
        # Identity travels with the device, not the position.
        nodes = {g["uuid"]: g["node"] for g in THREE_GPUS["agents"]}
        assert [s.agent_info(g, C.HSA_AGENT_INFO_NODE) for g in s.gpus()] == [nodes[u] for u in expected]
        assert len(s.cpus()) == 1


def test_ambiguous_uuid_prefix_ends_the_list(shsa):
    config = {"agents": [{"uuid": "GPU-12345678aaaaaaaa"}, {"uuid": "GPU-12345678bbbbbbbb"}]}
    with shsa.running(config, visible="GPU-12345678,0") as s:
        assert uuids(s) == []
    with shsa.running(config, visible="GPU-12345678B,0") as s:
        assert uuids(s) == ["GPU-12345678bbbbbbbb", "GPU-12345678aaaaaaaa"]


@pytest.mark.parametrize(("text", "names"), [
    ("{", "invalid JSON"),
    ('{"agent": []}', "agent: unknown key"),
    ('{"agents": [{"nmae": "gfx942"}]}', "agents[0].nmae: unknown key"),
    ('{"agents": [{}, {"pools": [{"flags": ["tiny"]}]}]}', "agents[1].pools[0].flags: unknown flag"),
    ('{"agents": [{"wavefront_size": 48}]}', "agents[0].wavefront_size: must be 32 or 64"),
    ('{"agents": [{"chip_id": -1}]}', "agents[0].chip_id: must not be negative"),
    ('{"agents": [{"uuid": "0123"}]}', "agents[0].uuid: must start with GPU-"),
    ('{"agents": [{"isa": "gfx942"}]}', "agents[0].isa: must start with amdgcn-amd-amdhsa--"),
    ('{"cpus": [{"uuid": "CPU-1"}]}', "cpus[0].uuid: unknown key"),
    ('{"agents": [{"pools": [{"alignment": 3000}]}]}', "alignment: must be a power of two"),
    ('{"agents": {"name": "gfx942"}}', "agents: expected array, got object"),
    ('{"agents": [{"compute_units": 1.5}]}', "agents[0].compute_units: expected integer, got number"),
    ('{"agents": [{"name": "gfx942"}]} x', "invalid JSON at byte 33: trailing characters"),
    ('{"log": "a\\qb"}', "invalid JSON at byte 12: bad escape in string"),
])
def test_bad_configuration_fails_hsa_init_with_one_line(shsa, tmp_path, monkeypatch, capfd, text, names):
    err, path = rejected_config(shsa, text, tmp_path, monkeypatch, capfd)
    assert err.count("\n") == 1 and names in err and str(path) in err


def test_json_escapes_and_numbers_are_read(shsa):
    config = ('{"agents": [{"product_name": "MI\\u0033\\u00300X \\"lab\\"\\t", "chip_id": 0, '
              '"pools": [{"size": 1099511627776, "flags": []}]}], "cpus": [ ]}')
    with shsa.running(config) as s:
        (gpu,) = s.agents()  # "cpus": [] leaves no CPU agent
        assert s.agent_string(gpu, C.HSA_AMD_AGENT_INFO_PRODUCT_NAME) == 'MI300X "lab"\t'
        (pool,) = s.pools(gpu)
        assert s.pool_info(pool, C.HSA_AMD_MEMORY_POOL_INFO_SIZE) == 1 << 40
        assert s.pool_info(pool, C.HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, "uint32_t") == 0


def test_missing_configuration_file_is_named(shsa, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("SOFTHSA_CONFIG", str(tmp_path / "absent.json"))
    assert shsa.lib.hsa_init() == C.HSA_STATUS_ERROR
    assert "absent.json: cannot open: No such file or directory" in capfd.readouterr().err


def test_softhsa_env_configures_a_subprocess(softhsa_lib, softhsa_env):
    # The route the CLI tests take: a child process finds softhsa by path, config and visibility
    # by environment.
    env = softhsa_env(THREE_GPUS, ROCR_VISIBLE_DEVICES="2")
    code = ("import sys, hsa_ffi\n"
            "h = hsa_ffi.load([sys.argv[1]]); h.init(); seen = []\n"
            "cb = h.ffi.callback('hsa_status_t(hsa_agent_t, void*)', lambda a, d: seen.append(a.handle) or 0)\n"
            "h.call('hsa_iterate_agents', cb, h.ffi.NULL); uuid = h.ffi.new('char[64]')\n"
            "last = h.ffi.new('hsa_agent_t*', {'handle': seen[-1]})[0]\n"
            "h.call('hsa_agent_get_info', last, 0xA011, uuid)\n"
            "print(len(seen), h.ffi.string(uuid).decode(), h.path)\n")
    result = subprocess.run([sys.executable, "-c", code, str(softhsa_lib)], env=env, text=True,
                            capture_output=True, cwd=Path(__file__).parents[2], timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", D, str(softhsa_lib / "libhsa-runtime64.so")]

"""The driver's pure parts over hand-made agent records: device-list entries (fact sheet §4.3),
the `--dump_devices` layout, pool choice (§1.2) and the dump-devices document."""

from __future__ import annotations

import pytest

from amdgpu_cli.drivers.amdgpu.device import device_pools, host_pools, make_physical_device
from amdgpu_cli.drivers.amdgpu.driver import device_infos
from amdgpu_cli.drivers.amdgpu.dump import describe
from amdgpu_cli.drivers.amdgpu.system import AgentInfo, Agents, PoolInfo
from amdgpu_cli.hal.driver import DeviceInfo
from amdgpu_cli.hal.enums import HalError
from amdgpu_cli.hal.registry import DriverRegistry
from amdgpu_cli.tooling.run import dump_devices_text, list_devices_text

KERNARG, FINE, COARSE, EXT_FINE = 1, 2, 4, 8  # hsa_amd_memory_pool_global_flag_t (hsa_ext_amd.h)
GIB = 1 << 30


def pool(handle, flags, *, segment=0, alloc=True, all_agents=True, size=64 * GIB):
    return PoolInfo(handle, segment, flags, size, size, 4096, 4096, all_agents, alloc)


CPU = AgentInfo(100, False, "AMD EPYC 9654", "CPU", 0,
                (pool(1, FINE | KERNARG), pool(2, FINE), pool(3, COARSE)))


def gpu(handle, uuid, node, name="gfx942", chip=0x74A1, product="AMD Instinct MI300X ", pools=None):
    return AgentInfo(handle, True, name, "AMD", node,
                     pools if pools is not None else (pool(10, COARSE), pool(11, FINE)),
                     product_name=product.strip(), uuid=uuid, chip_id=chip, compute_units=304,
                     wavefront_size=64, isas=(f"amdgcn-amd-amdhsa--{name}",))


GPUS = (gpu(200, "GPU-00000000000000a0", 1), gpu(201, "GPU-00000000000000b1", 2),
        gpu(202, "GPU-00000000000000c2", 3, name="gfx1100", chip=0x744C,
            product="Radeon RX 7900 XTX"))


def test_device_infos_follow_iree_wording():
    assert device_infos(Agents((CPU,), GPUS)) == [
        DeviceInfo(0, "", "ROCR_VISIBLE_DEVICES: 2 Visible GPU Agents (Nodes 1, 2)"),
        DeviceInfo(1, "GPU-00000000000000a0", "AMD Instinct MI300X (Node 1)"),
        DeviceInfo(2, "GPU-00000000000000b1", "AMD Instinct MI300X (Node 2)"),
    ]
    assert device_infos(Agents((CPU,), GPUS[2:])) == [
        DeviceInfo(0, "", "ROCR_VISIBLE_DEVICES: 1 Visible GPU Agent (Node 3)"),
        DeviceInfo(1, "GPU-00000000000000c2", "Radeon RX 7900 XTX (Node 3)"),
    ]
    assert device_infos(Agents((CPU,), ())) == []


class _FakeDriver:
    def query_available_devices(self):
        return device_infos(Agents((CPU,), GPUS[:1]))

    def dump_device_info(self, device_id):
        return "\n"


def test_list_and_dump_layout():
    registry = DriverRegistry()
    registry.register("amdgpu", _FakeDriver)
    assert list_devices_text(registry, "amdgpu") == "amdgpu://\namdgpu://GPU-00000000000000a0\n"
    rule = "# " + "=" * 76 + "\n"
    sep = "# ===" + "-" * 70 + "===\n"
    assert dump_devices_text(registry, "amdgpu") == (
        rule + "# Enumerated devices for driver 'amdgpu'\n" + rule + "\n"
        + sep + "# --device=amdgpu://\n"
        + "#   ROCR_VISIBLE_DEVICES: 1 Visible GPU Agent (Node 1)\n" + sep + "\n"
        + sep + "# --device=amdgpu://GPU-00000000000000a0\n"
        + "#   AMD Instinct MI300X (Node 1)\n" + sep + "\n")


def test_driver_errors_only_when_named():
    def broken():
        raise HalError("no HSA here", status="NOT_FOUND")

    registry = DriverRegistry()
    registry.register("amdgpu", broken)
    registry.register("other", _FakeDriver)
    assert list_devices_text(registry) == "other://\nother://GPU-00000000000000a0\n"
    with pytest.raises(HalError, match="no HSA here"):
        list_devices_text(registry, "amdgpu")
    with pytest.raises(HalError, match="no HSA here"):
        dump_devices_text(registry, "amdgpu")


def test_registry_options_reach_the_factory():
    seen = []
    registry = DriverRegistry()
    registry.register("amdgpu", lambda **options: seen.append(options) or _FakeDriver())
    assert registry.with_options({}) is registry
    configured = registry.with_options({"amdgpu": {"libhsa_search_paths": ["/x"]}})
    configured.driver("amdgpu")
    registry.driver("amdgpu")
    assert seen == [{"libhsa_search_paths": ["/x"]}, {}]


def test_pool_choice():
    coarse, fine = device_pools(GPUS[0])
    assert (coarse.handle, fine.handle) == (10, 11)
    # Not global, or not allocatable: skipped; extended-scope fine counts as fine.
    odd = gpu(1, "GPU-1", 1, pools=(pool(20, COARSE, segment=3), pool(21, COARSE, alloc=False),
                                    pool(22, COARSE), pool(23, EXT_FINE)))
    assert [p.handle for p in device_pools(odd)] == [22, 23]
    hosts = host_pools(CPU)
    assert (hosts.coarse.handle, hosts.fine.handle, hosts.kernarg.handle) == (3, 2, 1)
    only_kernarg_fine = AgentInfo(1, False, "cpu", "CPU", 0, (pool(1, FINE | KERNARG),
                                                               pool(3, COARSE)))
    assert host_pools(only_kernarg_fine).fine.handle == 1


@pytest.mark.parametrize("pools, message", [
    ((pool(11, FINE),), "no memory pool matching the required flags 4"),
    ((pool(10, COARSE),), "no memory pool matching the required flags 10"),
])
def test_missing_device_pool(pools, message):
    with pytest.raises(HalError, match=message) as info:
        device_pools(gpu(1, "GPU-1", 1, pools=pools))
    assert info.value.status == "NOT_FOUND"


def test_missing_host_pool():
    cpu = AgentInfo(1, False, "cpu", "CPU", 0, (pool(1, FINE | KERNARG), pool(3, COARSE,
                                                                             all_agents=False)))
    with pytest.raises(HalError) as info:
        host_pools(cpu)
    assert (info.value.status, str(info.value)) == (
        "NOT_FOUND", "no accessible-by-all + coarse-grained shared memory pool is available in "
                     "the system")


def test_physical_device_checks():
    agents = Agents((CPU,), GPUS)
    device = make_physical_device(1, 2, agents)
    assert (device.uuid, device.isa, device.host.handle) == (
        "GPU-00000000000000c2", "amdgcn-amd-amdhsa--gfx1100", 100)
    bad = Agents((CPU,), (AgentInfo(1, True, "gfx942", "AMD", 1, GPUS[0].pools, uuid="GPU-1",
                                    compute_units=4, wavefront_size=16, isas=("x",)),))
    with pytest.raises(HalError, match="unsupported wavefront size 16") as info:
        make_physical_device(0, 0, bad)
    assert info.value.status == "FAILED_PRECONDITION"


def test_host_cpu_pairing():
    cpu0 = AgentInfo(100, False, "cpu0", "CPU", 0, ())
    cpu1 = AgentInfo(101, False, "cpu1", "CPU", 1, ())
    by_node = gpu(1, "GPU-1", 1)
    nearest = AgentInfo(2, True, "gfx942", "AMD", 1, (), nearest_cpu=100)
    lonely = gpu(3, "GPU-3", 7)
    agents = Agents((cpu0, cpu1), (by_node, nearest, lonely))
    assert [agents.host_cpu(g).name for g in agents.gpus] == ["cpu1", "cpu0", "cpu0"]


def test_dump_document():
    doc = describe(Agents((CPU,), GPUS), "/lib/libhsa-runtime64.so.1")
    assert doc["schema_version"] == 1 and doc["library"] == "/lib/libhsa-runtime64.so.1"
    assert [g["uri"] for g in doc["gpus"]] == [
        "amdgpu://GPU-00000000000000a0", "amdgpu://GPU-00000000000000b1",
        "amdgpu://GPU-00000000000000c2"]
    assert [g["in_default_device"] for g in doc["gpus"]] == [True, True, False]
    assert doc["gpus"][2]["host_cpu"] == {"name": "AMD EPYC 9654", "node": 0}
    assert doc["gpus"][0]["pools"][0] == {
        "segment": "global", "flags": ["coarse"], "size": 64 * GIB, "alloc_max_size": 64 * GIB,
        "alignment": 4096, "granule": 4096, "accessible_by_all": True, "alloc_allowed": True}
    assert [p["flags"] for p in doc["cpus"][0]["pools"]] == [
        ["kernarg_init", "fine"], ["fine"], ["coarse"]]


def test_list_drivers_names_amdgpu_as_iree_does():
    from amdgpu_cli.tooling.run import list_drivers_text

    assert "          amdgpu: AMD GPU Driver (HSA/ROCR)\n" in list_drivers_text()  # §4.1: %16s

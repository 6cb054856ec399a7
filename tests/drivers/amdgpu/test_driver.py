"""The amdgpu driver over softhsa (three agents, see softhsa_agents.py), in process: enumeration,
every device-URI form, bad URIs, device ids, physical-device records and the device library."""

from __future__ import annotations


import pytest

from amdgpu_cli.drivers.amdgpu import Driver
from amdgpu_cli.hal.driver import DeviceInfo
from amdgpu_cli.hal.enums import HalError
from amdgpu_cli.hal.registry import DriverRegistry

from .softhsa_agents import CONFIG, GIB, UUIDS, private_driver

A, B, C = UUIDS


@pytest.fixture(scope="module")
def driver(softhsa_lib, tmp_path_factory):
    yield from private_driver(softhsa_lib, tmp_path_factory.mktemp("softhsa_driver"))


def uuids_of(driver, path: str, params=()) -> list[str]:
    device = driver.create_device_by_path(path, list(params))
    try:
        return [physical.uuid for physical in device.physical_devices]
    finally:
        device.close()


def test_agents_match_the_configuration(driver):
    agents = driver.agents()
    assert [g.uuid for g in agents.gpus] == UUIDS
    assert [g.name for g in agents.gpus] == ["gfx942", "gfx942", "gfx1100"]
    assert [g.isas for g in agents.gpus] == [(a["isa"],) for a in CONFIG["agents"]]
    assert [(g.node, g.chip_id, g.compute_units, g.wavefront_size) for g in agents.gpus] == [
        (1, 0x74A1, 304, 64), (2, 0x74A1, 304, 64), (3, 0x744C, 96, 32)]
    assert [[(p.flag_names, p.size) for p in g.pools] for g in agents.gpus][2] == [
        (["coarse"], 24 * GIB), (["fine"], 24 * GIB)]
    assert agents.gpus[2].pools[0].granule == 2 << 20
    assert [agents.host_cpu(g).node for g in agents.gpus] == [0, 1, 0]  # NEAREST_CPU answered


def test_query_available_devices(driver):
    assert driver.query_available_devices() == [
        DeviceInfo(0, "", "ROCR_VISIBLE_DEVICES: 2 Visible GPU Agents (Nodes 1, 2)"),
        DeviceInfo(1, A, "AMD Instinct MI300X (Node 1)"),
        DeviceInfo(2, B, "AMD Instinct MI300X (Node 2)"),
    ]
    assert driver.dump_device_info(1) == "\n"


@pytest.mark.parametrize("path, expected", [
    ("", [A, B]), ("*", [A, B]),
    ("0", [A]), ("1", [B]), ("2", [C]),
    (A, [A]), (A.upper(), [A]), ("GPU-" + B[4:].lower(), [B]),  # UUID digits in any case
    ("0,1", [A, B]), ("1,0", [B, A]),
    (f"{A},1", [A, B]), (f"1,{A}", [B, A]),
    ("0,0", [A]), (f"1,{B},0,{A}", [B, A]),
])
def test_every_uri_form(driver, path, expected):
    assert uuids_of(driver, path) == expected


@pytest.mark.parametrize("path, params, status, message", [
    ("GPU-0000000000000000", (), "NOT_FOUND",
     "no GPU agent with UUID `GPU-0000000000000000` found"),
    ("3", (), "INVALID_ARGUMENT", "device ordinal `3` out of range; 3 GPU devices available"),
    ("x", (), "INVALID_ARGUMENT",
     "invalid device specifier `x`; expected an ordinal (`0`) or a device UUID (`GPU-XX...`)"),
    ("0", (("k", "v"),), "INVALID_ARGUMENT",
     "AMDGPU logical device options do not support key/value parameter 'k'"),
    ("0,2", (), "INCOMPATIBLE", "GPU agent 1 in the topology is incompatible with other agents"),
    (f"{C},0", (), "INCOMPATIBLE", "GPU agent 1 in the topology is incompatible with other agents"),
])
def test_bad_uris(driver, path, params, status, message):
    with pytest.raises(HalError) as info:
        driver.create_device_by_path(path, list(params))
    assert (info.value.status, str(info.value)) == (status, message)


def test_device_ids(driver):
    for device_id, expected in ((0, [A, B]), (0b100, [C]), (0b011, [A, B])):
        device = driver.create_device_by_id(device_id)
        assert [p.uuid for p in device.physical_devices] == expected
        device.close()
    with pytest.raises(HalError) as info:
        driver.create_device_by_id(0b1000)
    assert info.value.status == "OUT_OF_RANGE"


def test_physical_devices_and_device_library(driver):
    agents = driver.agents()
    device = driver.create_device_by_path("1,0", [])
    try:
        first, second = device.physical_devices
        assert [(p.ordinal, p.gpu_ordinal) for p in (first, second)] == [(0, 1), (1, 0)]
        assert (first.isa, first.compute_units, first.wavefront_size) == (
            CONFIG["agents"][1]["isa"], 304, 64)
        assert first.host.handle == agents.cpus[1].handle
        assert (first.coarse_pool.flag_names, first.fine_pool.flag_names) == (["coarse"], ["fine"])
        hosts = first.host_pools
        assert (hosts.coarse.flag_names, hosts.fine.flag_names, hosts.kernarg.flag_names) == (
            ["coarse"], ["fine"], ["kernarg_init", "fine"])
        assert device.device_library.name == "amdgcn-amd-amdhsa--gfx942.hsaco"
        assert device.device_library.is_file()
    finally:
        device.close()
    device = driver.create_device_by_path("2", [])
    assert device.device_library.name == "amdgcn-amd-amdhsa--gfx1100.hsaco"
    device.close()


def test_several_devices_through_the_registry(driver):
    registry = DriverRegistry()
    registry.register("amdgpu", lambda: driver)
    devices = registry.create_devices(["amdgpu://1", f"amdgpu://{A}", "amdgpu:2"])
    try:
        assert [[p.uuid for p in d.physical_devices] for d in devices] == [[B], [A], [C]]
    finally:
        for device in devices:
            device.close()


def test_close_releases_one_reference_once(driver):
    """HSA counts hsa_init/hsa_shut_down pairs: a second close() must not take the fixture
    driver's reference (its queries would then fail with HSA_STATUS_ERROR_NOT_INITIALIZED)."""
    other = Driver(driver.options)
    device = other.create_device_by_path("0", [])
    for _ in range(2):
        device.close()
        other.close()
    assert [g.uuid for g in driver.agents().gpus] == UUIDS

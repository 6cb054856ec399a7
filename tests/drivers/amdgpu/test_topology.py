"""Device-path and device-id selection against the fact sheet's §4.2 table and error texts."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from amdgpu_cli.drivers.amdgpu import topology
from amdgpu_cli.hal.enums import HalError


@dataclass
class Gpu:
    uuid: str
    name: str = "gfx942"
    chip_id: int = 0x74A1
    vendor_name: str = "AMD"


MI300 = [Gpu("GPU-0e12865a3bf5b7ab"), Gpu("GPU-1111222233334444"), Gpu("GPU-aaaabbbbccccdddd")]
MIXED = [Gpu("GPU-00000000000000a0"), Gpu("GPU-00000000000000b1"),
         Gpu("GPU-00000000000000c2", name="gfx1100", chip_id=0x744C)]


def error_of(call, *args) -> HalError:
    with pytest.raises(HalError) as info:
        call(*args)
    return info.value


@pytest.mark.parametrize("path, expected", [
    ("", [0, 1, 2]), ("*", [0, 1, 2]),
    ("0", [0]), ("2", [2]),
    ("0,1", [0, 1]), ("2,0", [2, 0]),
    ("GPU-0e12865a3bf5b7ab", [0]),
    ("GPU-0E12865A3BF5B7AB", [0]),           # the UUID compares ignoring case
    ("GPU-AAAAbbbbCCCCdddd,0", [2, 0]),      # mixed UUID and ordinal fragments
    ("1,GPU-1111222233334444,1", [1]),       # a GPU named twice is added once
    ("0,", [0]),                             # the split stops at the end of the path
    ("0x2", [2]), ("01", [1]), (" 1", [1]), ("1st", [1]),  # strtoul(base 0) reading
])
def test_select_gpus(path, expected):
    assert topology.select_gpus(path, MI300) == expected


def test_defaults_skip_gpus_unlike_gpu0():
    assert topology.select_gpus("", MIXED) == [0, 1]
    assert topology.select_gpus("2", MIXED) == [2]
    assert topology.select_gpus("", MIXED[2:] + MIXED[:2]) == [0]
    assert topology.select_gpus("", [Gpu("GPU-1"), Gpu("GPU-2", vendor_name="Other")]) == [0]
    assert topology.select_gpus("", []) == []


@pytest.mark.parametrize("path, status, message", [
    ("x", "INVALID_ARGUMENT",
     "invalid device specifier `x`; expected an ordinal (`0`) or a device UUID (`GPU-XX...`)"),
    ("0,,1", "INVALID_ARGUMENT",
     "invalid device specifier ``; expected an ordinal (`0`) or a device UUID (`GPU-XX...`)"),
    ("gpu-0e12865a3bf5b7ab", "INVALID_ARGUMENT",   # the `GPU-` prefix itself is case-sensitive
     "invalid device specifier `gpu-0e12865a3bf5b7ab`; expected an ordinal (`0`) or a device "
     "UUID (`GPU-XX...`)"),
    ("3", "INVALID_ARGUMENT", "device ordinal `3` out of range; 3 GPU devices available"),
    ("0,7", "INVALID_ARGUMENT", "device ordinal `7` out of range; 3 GPU devices available"),
    ("-1", "INVALID_ARGUMENT", "device ordinal `4294967295` out of range; 3 GPU devices available"),
    ("GPU-ffffffffffffffff", "NOT_FOUND", "no GPU agent with UUID `GPU-ffffffffffffffff` found"),
])
def test_select_gpus_errors(path, status, message):
    error = error_of(topology.select_gpus, path, MI300)
    assert (error.status, str(error)) == (status, message)


def test_parse_uint32_limits():
    assert topology.parse_uint32("4294967296") == 0        # truncated to 32 bits as IREE does
    assert topology.parse_uint32("0" * 15) == 0
    assert topology.parse_uint32("0" * 16) is None         # does not fit IREE's 16-byte buffer
    assert topology.parse_uint32("+") is None
    assert topology.parse_uint32("0x") == 0                # strtoul reads the "0"


def test_device_ids():
    assert topology.device_id_to_gpus(0, MIXED) == [0, 1]
    assert topology.device_id_to_gpus(1 << 2, MIXED) == [2]
    assert topology.device_id_to_gpus(0b101, MIXED) == [0, 2]
    error = error_of(topology.device_id_to_gpus, 1 << 3, MIXED)
    assert error.status == "OUT_OF_RANGE"
    assert str(error) == ("GPU agent mask 0x0000000000000008 selects unavailable GPU ordinals; "
                          "only 3 visible GPU agent(s) are available")


def test_verify():
    topology.verify([1, 0], MIXED)
    error = error_of(topology.verify, [0, 2], MIXED)
    assert (error.status, str(error)) == (
        "INCOMPATIBLE", "GPU agent 1 in the topology is incompatible with other agents")
    assert error_of(topology.verify, [2, 1, 0], MIXED).status == "INCOMPATIBLE"
    assert error_of(topology.verify, [], MIXED).status == "INVALID_ARGUMENT"
    many = [Gpu(f"GPU-{i:016x}") for i in range(33)]
    topology.verify(range(32), many)                       # 32 GPUs x 2 queues = 64 bits
    assert error_of(topology.verify, range(33), many).status == "OUT_OF_RANGE"


def test_params_rejected():
    topology.check_params([])
    error = error_of(topology.check_params, [("k", "v"), ("x", "")])
    assert (error.status, str(error)) == (
        "INVALID_ARGUMENT", "AMDGPU logical device options do not support key/value parameter 'k'")

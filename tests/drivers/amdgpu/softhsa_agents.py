"""The softhsa machine the amdgpu driver tests run on: two MI300X (gfx942) and one RX 7900 XTX
(gfx1100, another chip, so the default device skips it); two CPUs, GPU 1 nearest to CPU 1. Values
follow the config schema of tests/softhsa (contract C2); tests compare the driver's reports with
these."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

GIB = 1 << 30
UUIDS = ["GPU-0123456789abcdef", "GPU-FEDCBA9876543210", "GPU-1100aaaabbbbcccc"]

_MI300X = {"name": "gfx942", "isa": "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
           "product_name": "AMD Instinct MI300X", "vendor_name": "AMD", "chip_id": 0x74A1,
           "compute_units": 304, "wavefront_size": 64,
           "pools": [{"flags": ["coarse"], "size": 192 * GIB},
                     {"flags": ["fine"], "size": 192 * GIB}]}

CONFIG = {
    "agents": [
        {**_MI300X, "uuid": UUIDS[0], "node": 1},
        {**_MI300X, "uuid": UUIDS[1], "node": 2, "nearest_cpu": 1},
        {"name": "gfx1100", "isa": "amdgcn-amd-amdhsa--gfx1100", "uuid": UUIDS[2],
         "product_name": "Radeon RX 7900 XTX", "vendor_name": "AMD", "chip_id": 0x744C, "node": 3,
         "compute_units": 96, "wavefront_size": 32,
         "pools": [{"flags": ["coarse"], "size": 24 * GIB, "granule": 2 << 20},
                   {"flags": ["fine"], "size": 24 * GIB}]},
    ],
    "cpus": [{"name": "AMD EPYC 9654", "node": node,
              "pools": [{"flags": ["fine", "kernarg_init"], "size": 512 * GIB},
                        {"flags": ["fine"], "size": 512 * GIB},
                        {"flags": ["coarse"], "size": 512 * GIB}]} for node in (0, 1)],
}


def write_config(directory: Path) -> Path:
    path = directory / "three_agents.json"
    path.write_text(json.dumps(CONFIG))
    return path



@contextlib.contextmanager
def private_softhsa(softhsa_lib: Path, directory: Path, config: dict | None = None):
    """Copies softhsa into `directory` with `config` (default CONFIG) and yields the directory
    while SOFTHSA_CONFIG names that config (hsa_init reads it: create the driver inside). A
    distinct file is a distinct dlopen, so no other test module's hsa_init reference (and
    configuration) is shared with this one."""
    import pytest

    shutil.copy(softhsa_lib / "libhsa-runtime64.so", directory)
    config_path = directory / "softhsa.json"
    config_path.write_text(json.dumps(CONFIG if config is None else config))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOFTHSA_CONFIG", str(config_path))
        patch.delenv("ROCR_VISIBLE_DEVICES", raising=False)
        patch.delenv("IREE_HAL_AMDGPU_LIBHSA_PATH", raising=False)
        yield directory


def private_driver(softhsa_lib: Path, directory: Path, config: dict | None = None):
    """Yields an amdgpu Driver over `private_softhsa(...)`, then closes it."""
    from amdgpu_cli.drivers.amdgpu import Driver

    with private_softhsa(softhsa_lib, directory, config):
        driver = Driver(libhsa_search_paths=[str(directory)])
        try:
            yield driver
        finally:
            driver.close()

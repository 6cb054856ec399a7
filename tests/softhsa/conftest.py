"""Fixtures of the interpreter tests (test_isa*.py): `gpu`, a gfx942 softhsa machine running
kernels' machine code (SOFTHSA_EXECUTE=1)."""

from __future__ import annotations

import pytest

from hsa_ffi import constants as C
from tests.softhsa.kernels import Loader
from tests.softhsa.session import private_softhsa

CONFIG = {"agents": [{"name": "gfx942", "isa": "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
                      "wavefront_size": 64, "compute_units": 304}]}


@pytest.fixture(scope="module")
def gpu(softhsa_lib, tmp_path_factory):
    """(Loader, gfx942 agent, kernarg memory, device pool), SOFTHSA_EXECUTE=1 for the module."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOFTHSA_EXECUTE", "1")
        with private_softhsa(softhsa_lib, tmp_path_factory).running(CONFIG) as session:
            hsa = Loader(session)
            agent, cpu = hsa.gpus()[0], hsa.cpus()[0]
            kernargs = hsa.allocate(hsa.pool(cpu, C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT),
                                    256)
            pool = hsa.pool(agent, C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)
            yield hsa, agent, kernargs, pool

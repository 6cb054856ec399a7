"""Fixtures of the interpreter tests (test_isa*.py): `gpu` (gfx942, wave64) and `gpu11` (gfx1100,
wave32), softhsa machines running kernels' machine code (SOFTHSA_EXECUTE=1), each
(Loader, GPU agent, kernarg memory, device pool)."""

from __future__ import annotations

import pytest

from hsa_ffi import constants as C
from tests.softhsa.agents import AGENTS
from tests.softhsa.kernels import Loader
from tests.softhsa.session import private_softhsa

GFX942 = {"agents": [AGENTS["gfx942"]]}
GFX1100 = {"agents": [AGENTS["gfx1100"]]}


def _machine(softhsa_lib, tmp_path_factory, config):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOFTHSA_EXECUTE", "1")
        with private_softhsa(softhsa_lib, tmp_path_factory).running(config) as session:
            hsa = Loader(session)
            agent, cpu = hsa.gpus()[0], hsa.cpus()[0]
            kernargs = hsa.allocate(hsa.pool(cpu, C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT),
                                    256)
            pool = hsa.pool(agent, C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)
            yield hsa, agent, kernargs, pool


@pytest.fixture(scope="module")
def gpu(softhsa_lib, tmp_path_factory):
    yield from _machine(softhsa_lib, tmp_path_factory, GFX942)


@pytest.fixture(scope="module")
def gpu11(softhsa_lib, tmp_path_factory):
    yield from _machine(softhsa_lib, tmp_path_factory, GFX1100)

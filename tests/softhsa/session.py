"""Test harness: softhsa loaded in-process through `hsa_ffi`, initialised once per configuration.

Each test module gets a private copy of the built library (a distinct file is a distinct dlopen, so
no other module's `hsa_init` reference can leak into ours). `SoftHsa.running(config, visible)` sets
SOFTHSA_CONFIG / ROCR_VISIBLE_DEVICES for the C side, calls `hsa_init`, and on exit destroys what the
test created and calls `hsa_shut_down` (which also stops every queue thread), then checks that the
runtime is really down. Values come back as plain Python (ints, str, bytes).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import hsa_ffi
from hsa_ffi import constants as C

LIBRARY = "libhsa-runtime64.so"
NAME_BYTES = 64  # HSA_AGENT_INFO_NAME / VENDOR_NAME / PRODUCT_NAME are char[64]
GiB = 1 << 30

# The acceptance topology: two gfx942 and one gfx1100, distinct UUIDs, explicit pools.
THREE_GPUS = {
    "agents": [
        {"name": "gfx942", "isa": "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
         "uuid": "GPU-0123456789abcdef", "product_name": "AMD Instinct MI300X", "vendor_name": "AMD",
         "chip_id": 29857, "node": 2, "compute_units": 304, "wavefront_size": 64,
         "simds_per_cu": 4, "max_waves_per_cu": 32,
         "pools": [{"flags": ["coarse"], "size": 64 * GiB}, {"flags": ["fine"], "size": 64 * GiB}]},
        {"name": "gfx942", "isa": "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
         "uuid": "GPU-1111222233334444", "product_name": "AMD Instinct MI300X",
         "chip_id": 29857, "node": 3, "compute_units": 304,
         "pools": [{"flags": ["coarse"], "size": 64 * GiB}, {"flags": ["fine"], "size": 64 * GiB}]},
        {"name": "gfx1100", "isa": "amdgcn-amd-amdhsa--gfx1100",
         "uuid": "GPU-AAAABBBBCCCCDDDD", "product_name": "Radeon RX 7900 XTX",
         "chip_id": 29772, "node": 4, "compute_units": 96, "wavefront_size": 32,
         "simds_per_cu": 2, "max_waves_per_cu": 16,
         "pools": [{"flags": ["coarse"], "size": 24 * GiB}]},
    ],
    "cpus": [{"name": "AMD EPYC 9654", "node": 0,
              "pools": [{"flags": ["fine", "kernarg_init"], "size": 1024 * GiB},
                        {"flags": ["coarse"], "size": 1024 * GiB}]}],
}


class SoftHsa:
    def __init__(self, built_dir: Path, private_dir: Path):
        private_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(built_dir / LIBRARY, private_dir / LIBRARY)
        self.hsa = hsa_ffi.load([str(private_dir)], environ={"AMDGPU_LIBHSA_SKIP_SYSTEM": "1"})
        self.ffi = self.hsa.ffi
        self.lib = self.hsa.lib
        self._config_dir = private_dir
        self._signals: list = []
        self._queues: list = []

    # ---- lifetime ----

    @contextmanager
    def running(self, config: dict | str | None = None,
                visible: str | None = None) -> Iterator[SoftHsa]:
        """Initialised softhsa with `config` (a dict as JSON, or JSON text as is; None: defaults)."""
        saved = {k: os.environ.get(k) for k in ("SOFTHSA_CONFIG", "ROCR_VISIBLE_DEVICES")}
        try:
            _set_env("SOFTHSA_CONFIG", self._write_config(config))
            _set_env("ROCR_VISIBLE_DEVICES", visible)
            self.hsa.call("hsa_init")
            try:
                yield self
            finally:
                self._release()
                self.hsa.call("hsa_shut_down")
                assert self.lib.hsa_shut_down() == C.HSA_STATUS_ERROR_NOT_INITIALIZED
        finally:
            for key, value in saved.items():
                _set_env(key, value)

    def _write_config(self, config: dict | str | None) -> str | None:
        if config is None:
            return None
        path = self._config_dir / "config.json"
        path.write_text(config if isinstance(config, str) else json.dumps(config))
        return str(path)

    def _release(self) -> None:
        for queue in self._queues:
            self.lib.hsa_queue_destroy(queue)
        for signal in self._signals:
            self.lib.hsa_signal_destroy(signal)
        self._queues.clear()
        self._signals.clear()

    # ---- agents ----

    def _iterate(self, function: str, handle_type: str, *leading) -> list:
        found = []

        @self.ffi.callback(f"hsa_status_t({handle_type}, void*)")
        def visit(handle, _data):
            found.append(self.ffi.new(f"{handle_type}*", handle)[0])
            return C.HSA_STATUS_SUCCESS

        self.hsa.call(function, *leading, visit, self.ffi.NULL)
        return found

    def agents(self) -> list:
        return self._iterate("hsa_iterate_agents", "hsa_agent_t")

    def gpus(self) -> list:
        return [a for a in self.agents()
                if self.agent_info(a, C.HSA_AGENT_INFO_DEVICE, "int") == C.HSA_DEVICE_TYPE_GPU]

    def cpus(self) -> list:
        return [a for a in self.agents()
                if self.agent_info(a, C.HSA_AGENT_INFO_DEVICE, "int") == C.HSA_DEVICE_TYPE_CPU]

    def agent_info(self, agent, attribute: int, ctype: str = "uint32_t"):
        value = self.ffi.new(f"{ctype}*")
        self.hsa.call("hsa_agent_get_info", agent, attribute, value)
        return value[0]

    def agent_string(self, agent, attribute: int) -> str:
        buffer = self.ffi.new(f"char[{NAME_BYTES}]")
        self.hsa.call("hsa_agent_get_info", agent, attribute, buffer)
        return self.ffi.string(buffer).decode()

    def system_info(self, attribute: int, ctype: str):
        value = self.ffi.new(f"{ctype}*")
        self.hsa.call("hsa_system_get_info", attribute, value)
        return value[0]

    # ---- memory pools ----

    def pools(self, agent) -> list:
        return self._iterate("hsa_amd_agent_iterate_memory_pools", "hsa_amd_memory_pool_t", agent)

    def regions(self, agent) -> list:
        return self._iterate("hsa_agent_iterate_regions", "hsa_region_t", agent)

    def pool_info(self, pool, attribute: int, ctype: str = "size_t"):
        value = self.ffi.new(f"{ctype}*")
        self.hsa.call("hsa_amd_memory_pool_get_info", pool, attribute, value)
        return value[0]

    def allocate(self, pool, size: int) -> tuple[int, object]:
        """(status, pointer) — the status is returned, not raised, so limits can be tested."""
        out = self.ffi.new("void**")
        status = self.lib.hsa_amd_memory_pool_allocate(pool, size, 0, out)
        return status, out[0]

    def pointer_info(self, pointer):
        """(hsa_amd_pointer_info_t, {handles of the agents that can access it})."""
        info = self.ffi.new("hsa_amd_pointer_info_t*")
        info.size = self.ffi.sizeof("hsa_amd_pointer_info_t")
        count = self.ffi.new("uint32_t*")
        accessible = self.ffi.new("hsa_agent_t**")
        kept = []

        @self.ffi.callback("void*(size_t)")
        def alloc(size):
            kept.append(self.ffi.new("uint8_t[]", size))
            return kept[-1]

        self.hsa.call("hsa_amd_pointer_info", pointer, info, alloc, count, accessible)
        return info, {accessible[0][i].handle for i in range(count[0])}

    # ---- signals and queues (released by running()) ----

    def signal(self, value: int = 1):
        out = self.ffi.new("hsa_signal_t*")
        self.hsa.call("hsa_amd_signal_create", value, 0, self.ffi.NULL, 0, out)
        self._signals.append(out[0])
        return out[0]

    def queue(self, agent, size: int = 64, callback=None):
        out = self.ffi.new("hsa_queue_t**")
        callback = callback or self.ffi.NULL
        self.hsa.call("hsa_queue_create", agent, size, C.HSA_QUEUE_TYPE_MULTI, callback,
                      self.ffi.NULL, 0xFFFFFFFF, 0xFFFFFFFF, out)
        self._queues.append(out[0])
        return out[0]

    def signal_value(self, signal) -> int:
        return self.lib.hsa_signal_load_scacquire(signal)

    def wait_eq(self, signal, value: int, timeout_s: float = 5.0) -> int:
        """Blocks until `signal == value` or the timeout; returns the last observed value."""
        return self.lib.hsa_signal_wait_scacquire(signal, C.HSA_SIGNAL_CONDITION_EQ, value,
                                                  int(timeout_s * 1e9), C.HSA_WAIT_STATE_BLOCKED)


def _set_env(key: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value


def private_softhsa(softhsa_lib: Path, tmp_path_factory) -> SoftHsa:
    """A `SoftHsa` over a private copy of the session's build (for a module-scoped fixture)."""
    return SoftHsa(softhsa_lib, tmp_path_factory.mktemp("softhsa-private"))


def rejected_config(s: SoftHsa, text: str, tmp_path: Path, monkeypatch, capfd) -> tuple[str, Path]:
    """hsa_init with SOFTHSA_CONFIG naming a file holding `text`, which must make it fail with
    HSA_STATUS_ERROR and leave the runtime down; returns (what it printed on stderr, the file)."""
    path = tmp_path / "bad.json"
    path.write_text(text)
    monkeypatch.setenv("SOFTHSA_CONFIG", str(path))
    capfd.readouterr()
    assert s.lib.hsa_init() == C.HSA_STATUS_ERROR
    err = capfd.readouterr().err
    assert s.lib.hsa_shut_down() == C.HSA_STATUS_ERROR_NOT_INITIALIZED
    return err, path

"""Driver registry and device URIs.

A device URI is `driver`, `driver:path`, `driver://path` or `driver://path?k=v&k2`, split exactly as
IREE's `iree_uri_split` does: schema up to the first `:`; then a leading `//` is consumed (or else
one leading `/`); then path up to the first `?`, params after it. Params split on `&`, each on its
first `=` (missing value -> ""), with leading/trailing `&` and whitespace trimmed. Each `--device`
flag names one device; several flags make several devices, in order.

Drivers are registered as factories (called at most once per registry, results cached). The default
registry lazily imports `local`/`local-sync`/`local-task`, `amdgpu` and `cuda` from
amdgpu_cli.drivers.*; a driver whose module is not there raises UNAVAILABLE. (hal/null.py's
reference driver is the tests' to register: it is no driver a user can run a model on.)
Driver options (what IREE's per-driver flags such as `--amdgpu_libhsa_search_path` set) are keyword
arguments for a driver's factory:
`registry.with_options({"amdgpu": {"libhsa_search_paths": [...]}})` is a registry with the same
drivers whose instances are created with them.
Sources: IREE runtime/src/iree/base/internal/path.c, hal/driver.c, hal/driver_registry.c,
tooling/device_util.c.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from typing import NamedTuple

from amdgpu_cli.hal.enums import HalError


def split_uri(uri: str) -> tuple[str, str, str]:
    """(schema, path, params) as iree_uri_split."""
    if not uri:
        return "", "", ""
    schema, _, rest = uri.partition(":")
    if rest.startswith("//"):
        rest = rest[2:]
    elif rest.startswith("/"):
        rest = rest[1:]
    path, _, params = rest.partition("?")
    return schema, path, params


def split_uri_params(params: str) -> list[tuple[str, str]]:
    """`a=b&c` -> [("a", "b"), ("c", "")] as iree_uri_split_params."""
    if params.startswith("&"):
        params = params[1:]
    if params.endswith("&"):
        params = params[:-1]
    params = params.strip()
    if not params:
        return []
    pairs = []
    for item in params.split("&"):
        key, _, value = item.partition("=")
        pairs.append((key, value))
    return pairs


class DeviceUri(NamedTuple):  # NamedTuples here: cheaper to define than dataclasses at start-up
    driver: str
    path: str = ""
    params: tuple[tuple[str, str], ...] = ()
    text: str = ""

    @classmethod
    def parse(cls, uri: str) -> DeviceUri:
        driver, path, params = split_uri(uri)
        if not driver:
            raise HalError(f"device URI '{uri}' names no driver", status="INVALID_ARGUMENT")
        return cls(driver, path, tuple(split_uri_params(params)), uri)

    @property
    def ordinal(self) -> int | None:
        """The path as a device ordinal (`amdgpu:1`), or None when it is not a plain integer."""
        return int(self.path) if self.path.isdigit() and self.path.isascii() else None

    @property
    def param_dict(self) -> dict[str, str]:
        return dict(self.params)


DriverFactory = Callable[..., object]  # called with the driver's options as keyword arguments
DriverOptions = Mapping[str, Mapping[str, object]]  # driver name -> factory keyword arguments


class DriverEntry(NamedTuple):
    name: str
    factory: DriverFactory
    description: str = ""


class DriverRegistry:
    def __init__(self, driver_options: DriverOptions | None = None):
        self._entries: dict[str, DriverEntry] = {}
        self._drivers: dict[str, object] = {}
        self._lock = threading.Lock()
        self.driver_options = {name: dict(opts) for name, opts in (driver_options or {}).items()}

    def with_options(self, driver_options: DriverOptions | None) -> DriverRegistry:
        """This registry when there are no options; else one with the same drivers whose
        instances (created anew, on first use) get `driver_options[name]` as keyword arguments."""
        if not driver_options:
            return self
        other = DriverRegistry({**self.driver_options, **driver_options})
        other._entries = dict(self._entries)
        return other

    def register(self, name: str, factory: DriverFactory, description: str = "") -> None:
        with self._lock:
            if name in self._entries:
                raise HalError(f"driver '{name}' is already registered", status="ALREADY_EXISTS")
            self._entries[name] = DriverEntry(name, factory, description)

    def unregister(self, name: str) -> None:
        with self._lock:
            self._entries.pop(name, None)
            self._drivers.pop(name, None)

    def entries(self) -> list[DriverEntry]:
        return list(self._entries.values())

    def names(self) -> list[str]:
        return list(self._entries)

    def driver(self, name: str):
        with self._lock:
            if name in self._drivers:
                return self._drivers[name]
            entry = self._entries.get(name)
        if entry is None:
            raise HalError(f"no driver '{name}' registered; available: "
                           f"{', '.join(self._entries) or 'none'}", status="NOT_FOUND")
        created = entry.factory(**self.driver_options.get(name, {}))
        with self._lock:
            return self._drivers.setdefault(name, created)

    def create_device(self, uri: str):
        parsed = DeviceUri.parse(uri)
        driver = self.driver(parsed.driver)
        try:
            return driver.create_device_by_path(parsed.path, list(parsed.params))
        except HalError as error:
            raise HalError(f"creating device '{uri}': {error}", status=error.status) from error

    def create_devices(self, uris: list[str], default: str | None = None) -> list:
        """One device per --device flag, in order; `default` when no flag was given."""
        if not uris:
            if not default:
                raise HalError("no devices specified; use --list_devices to see the available "
                               "devices and specify one or more with --device=",
                               status="INVALID_ARGUMENT")
            uris = [default]
        devices = []
        try:
            for uri in uris:
                devices.append(self.create_device(uri))
        except BaseException:
            for device in devices:
                device.close()
            raise
        return devices


def _lazy(module: str, attribute: str, *args) -> DriverFactory:
    def factory(**options):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and module.startswith(exc.name):
                raise HalError(f"driver module {module} is not available", status="UNAVAILABLE") \
                    from exc
            raise
        return getattr(mod, attribute)(*args, **options)
    return factory


_default_registry: DriverRegistry | None = None
_default_lock = threading.Lock()


def default_registry() -> DriverRegistry:
    global _default_registry
    with _default_lock:
        if _default_registry is None:
            registry = DriverRegistry()
            for name in ("local", "local-sync", "local-task"):
                registry.register(name, _lazy("amdgpu_cli.drivers.local", "Driver", name),
                                  "CPU driver")
            registry.register("amdgpu", _lazy("amdgpu_cli.drivers.amdgpu", "Driver"),
                              "AMD GPUs over HSA")
            registry.register("cuda", _lazy("amdgpu_cli.drivers.cuda", "Driver"),
                              "NVIDIA GPUs over CUDA")
            _default_registry = registry
        return _default_registry

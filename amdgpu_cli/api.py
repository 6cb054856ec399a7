"""Python API: load a .vmfb and call its functions with numpy arrays.

    import amdgpu_cli
    m = amdgpu_cli.load_module("model.vmfb", device="local")
    y = m.predict(np.ones((1, 64), np.float32))      # or m["predict"](...)
    m.close()                                          # or `with amdgpu_cli.load_module(...) as m:`

Arguments: numpy arrays (or anything np.asarray takes) for tensor arguments, Python/numpy numbers
for scalar ones. Results: numpy arrays for tensors (bool for i1; ml_dtypes types for bf16/f8),
numpy scalars (np.int32, np.int64, np.float32, np.float64) for scalars; one result is returned
bare, several as a tuple, none as None. The module's state (globals) lives as long as the Module:
unlike iree-run-module, `__init` runs once and every call sees the previous calls' effects.
Errors are AmdgpuCliError subclasses (VmTrap for traps, with IREE's status names).

Tensors can also stay on the device between calls, as iree-benchmark-module keeps its inputs:

    a = m.upload(np.ones((1024, 1024), np.float32))   # a DeviceArray: uploaded once
    f = m.function("matmul", device_results=True)     # results stay DeviceArrays
    c = f(a, a); c.numpy()                             # read back only when asked
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.buffer_view import BufferView
from amdgpu_cli.hal.enums import format_element_type
from amdgpu_cli.tooling.run import Session
from amdgpu_cli.tooling.values import Tensor

__all__ = ["DeviceArray", "Module", "load_module"]


class DeviceArray:
    """A tensor held on a module's device (a HAL buffer view). Passing it to a call skips the
    upload; `numpy()` reads it back."""

    __slots__ = ("view", "_session")

    def __init__(self, view: BufferView, session: Session):
        self.view = view
        self._session = session

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.view.shape)

    @property
    def element_type(self) -> str:
        return format_element_type(self.view.element_type)

    def numpy(self) -> np.ndarray:
        return _from_tool(self._session.download(self.view))

    def __repr__(self) -> str:
        return f"DeviceArray({'x'.join(map(str, self.shape)) or 'scalar'}x{self.element_type})"


def _to_tool(value, ch: str, session: Session):
    if isinstance(value, DeviceArray):
        if value._session is not session:
            raise AmdgpuCliError("a DeviceArray can only be passed to the module that uploaded "
                                 "or returned it", status="INVALID_ARGUMENT")
        return value.view
    if ch != "r" or value is None or isinstance(value, Tensor):
        return value
    if isinstance(value, (bytes, bytearray, memoryview, list, tuple)):
        return value
    return Tensor.from_array(np.asarray(value))


def _from_tool(value):
    if isinstance(value, Tensor):
        return np.array(value.array)
    if isinstance(value, list):
        return [_from_tool(v) for v in value]
    return value


class Module:
    """A loaded module instantiated on a device; exported functions are attributes."""

    def __init__(self, path, device: str | list[str] = "local"):
        devices = [device] if isinstance(device, str) else list(device)
        self._session = Session(str(path), devices)
        self.path = str(path)

    @property
    def function_names(self) -> list[str]:
        return [e.name for e in self._session.module.exports
                if not e.name.startswith("__") and "$" not in e.name]

    def upload(self, array) -> DeviceArray:
        """`array` (anything np.asarray takes) copied once into a buffer on the module's device."""
        value = array if isinstance(array, Tensor) else Tensor.from_array(np.asarray(array))
        return DeviceArray(self._session.upload(value), self._session)

    def function(self, name: str, *, device_results: bool = False) -> Callable:
        """The exported function `name`; with `device_results`, tensor results are returned as
        DeviceArrays instead of being read back."""
        if name not in self._session.module.exports_by_name:
            raise AmdgpuCliError(f"no function `{name}` exported by module",
                                 status="NOT_FOUND")
        session = self._session
        arg_chars, _ = session.cconv(name)
        device_call = session.device_caller(name) if device_results else None

        def call(*args):
            if len(args) != len(arg_chars):
                raise AmdgpuCliError(f"{name} expects {len(arg_chars)} arguments, "
                                     f"{len(args)} given", status="INVALID_ARGUMENT")
            # This module's DeviceArrays (the common case) without a _to_tool call.
            values = [a.view if a.__class__ is DeviceArray and a._session is session
                      else _to_tool(a, ch, session) for a, ch in zip(args, arg_chars)]
            if device_call is not None:
                results = [DeviceArray(v, session) if v.__class__ is BufferView else _from_tool(v)
                           for v in device_call(values)]
            else:
                results = [_from_tool(v) for v in session.call(name, values)]
            if not results:
                return None
            return results[0] if len(results) == 1 else tuple(results)

        call.__name__ = name
        call.__doc__ = session.declaration(name)
        return call

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.function(name)
        except AmdgpuCliError:
            raise AttributeError(f"module has no function {name!r}") from None

    __getitem__ = function

    def __dir__(self):
        return [*super().__dir__(), *self.function_names]

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> Module:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def load_module(path, device: str | list[str] = "local") -> Module:
    """Load a .vmfb on `device` (a device URI, or a list of them) and run its `__init`."""
    return Module(path, device)

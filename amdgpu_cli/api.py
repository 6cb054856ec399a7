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

Threading and lifetime: a Module may be called from several threads at once, and closed from
any thread at any time. `close()` first stops new work (a later call, upload, `function()` or
`DeviceArray.numpy()` raises AmdgpuCliError FAILED_PRECONDITION "module is closed"), then waits
for the calls already in flight to return, and only then closes the context and the devices, so
no kernel ever runs on an unmapped executable or a freed buffer. Closing twice is harmless; a
second close returns once the first has finished.
"""

from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.buffer_view import BufferView
from amdgpu_cli.hal.enums import format_element_type
from amdgpu_cli.tooling.run import Session
from amdgpu_cli.tooling.values import Tensor

__all__ = ["DeviceArray", "Module", "load_module"]


class _CallGate:
    """Counts a Module's calls in flight and closes it once they are done (see the module
    docstring). `enter`/`leave` bracket every use of the session; `close` marks the gate closed
    (later `enter`s raise) and returns once no call is inside.

    The count is a list that each call appends a token to and pops one from: both are single
    atomic steps under the GIL, so a call costs no lock (per-call time is a product goal). A call
    adds its token before it reads `_closed`, and close() sets `_closed` before it reads the
    list, so either the call sees the gate closed (and takes its token back) or close() sees
    the token and waits for it."""

    __slots__ = ("_inside", "_closed")

    def __init__(self):
        self._inside: list[None] = []
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def enter(self) -> None:
        self._inside.append(None)
        if self._closed:
            self._inside.pop()
            raise AmdgpuCliError("module is closed", status="FAILED_PRECONDITION")

    def leave(self) -> None:
        self._inside.pop()

    def close(self) -> bool:
        """Closes the gate and waits for the calls inside; True for the first close only. The
        caller serialises closes (Module.close holds its lock)."""
        import time

        first = not self._closed
        self._closed = True
        delay = 1e-5
        while self._inside:  # calls in flight finish on their own; poll, backing off
            time.sleep(delay)
            delay = min(delay * 2, 1e-3)
        return first


class DeviceArray:
    """A tensor held on a module's device (a HAL buffer view). Passing it to a call skips the
    upload; `numpy()` reads it back (not after the module is closed)."""

    __slots__ = ("view", "_session", "_gate")

    def __init__(self, view: BufferView, session: Session, gate: _CallGate):
        self.view = view
        self._session = session
        self._gate = gate

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.view.shape)

    @property
    def element_type(self) -> str:
        return format_element_type(self.view.element_type)

    def numpy(self) -> np.ndarray:
        gate = self._gate
        gate.enter()
        try:
            return _from_tool(self._session.download(self.view))
        finally:
            gate.leave()

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

    def __init__(self, path, device: str | list[str] = "local", *, parameters=None,
                 parameter_mode: str = "file"):
        devices = [device] if isinstance(device, str) else list(device)
        self._session = Session(str(path), devices, parameters=parameters,
                                parameter_mode=parameter_mode)
        self._gate = _CallGate()
        self._close_lock = threading.Lock()  # a second close waits for the first to finish
        self.path = str(path)

    @property
    def function_names(self) -> list[str]:
        return [e.name for e in self._session.module.exports
                if not e.name.startswith("__") and "$" not in e.name]

    def upload(self, array) -> DeviceArray:
        """`array` (anything np.asarray takes) copied once into a buffer on the module's device."""
        value = array if isinstance(array, Tensor) else Tensor.from_array(np.asarray(array))
        gate = self._gate
        gate.enter()
        try:
            return DeviceArray(self._session.upload(value), self._session, gate)
        finally:
            gate.leave()

    def function(self, name: str, *, device_results: bool = False) -> Callable:
        """The exported function `name`; with `device_results`, tensor results are returned as
        DeviceArrays instead of being read back."""
        if name not in self._session.module.exports_by_name:
            raise AmdgpuCliError(f"no function `{name}` exported by module",
                                 status="NOT_FOUND")
        session = self._session
        gate = self._gate
        gate.enter()
        try:
            arg_chars, _ = session.cconv(name)
            device_call = session.device_caller(name) if device_results else None
        finally:
            gate.leave()
        enter, leave = gate.enter, gate.leave

        def call(*args):
            if len(args) != len(arg_chars):
                raise AmdgpuCliError(f"{name} expects {len(arg_chars)} arguments, "
                                     f"{len(args)} given", status="INVALID_ARGUMENT")
            enter()  # from here to the results' read-back, close() waits for this call
            try:
                # This module's DeviceArrays (the common case) without a _to_tool call.
                values = [a.view if a.__class__ is DeviceArray and a._session is session
                          else _to_tool(a, ch, session) for a, ch in zip(args, arg_chars)]
                if device_call is not None:
                    results = [DeviceArray(v, session, gate) if v.__class__ is BufferView
                               else _from_tool(v) for v in device_call(values)]
                else:
                    results = [_from_tool(v) for v in session.call(name, values)]
            finally:
                leave()
            if not results:
                return None
            return results[0] if len(results) == 1 else tuple(results)

        call.__name__ = name
        call.__doc__ = session.declaration(name)
        return call

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in self._session.module.exports_by_name:
            raise AttributeError(f"module has no function {name!r}")
        return self.function(name)  # a closed module raises its AmdgpuCliError

    __getitem__ = function

    def __dir__(self):
        return [*super().__dir__(), *self.function_names]

    @property
    def closed(self) -> bool:
        return self._gate.closed

    def close(self) -> None:
        """Stops new calls, waits for those in flight, then closes the context and devices."""
        with self._close_lock:
            if self._gate.close():
                self._session.close()

    def __enter__(self) -> Module:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def load_module(path, device: str | list[str] = "local", *, parameters=None,
                parameter_mode: str = "file") -> Module:
    """Load a .vmfb on `device` (a device URI, or a list of them) and run its `__init`.

    `parameters`: the parameter files of a module whose weights live outside it, as
    `--parameters` gives them: {scope: path}, a list of (scope, path) pairs or `scope=path`
    strings (scope "" or a bare path: the anonymous scope); `parameter_mode` "file" (read as
    needed) or "preload" (read whole at load). The files stay open until close()."""
    return Module(path, device, parameters=parameters, parameter_mode=parameter_mode)

"""VmContext: one instantiated bytecode module plus the native modules it imports.

    ctx = VmContext(load_vmfb("m.vmfb"), native_modules=[HalModule(device)])
    ctx.call("predict", [buffer_view])  -> [result, ...]

Instantiation (IREE's iree_vm_context_register_modules, 3.13.0):
  1. module dependencies are checked against the registered native modules: a required
     dependency that is missing, or older than its minimum version, fails (NOT_FOUND /
     INCOMPATIBLE);
  2. every import is resolved by full name (`hal.buffer_view.create`) against the native module
     of that name; its cconv must equal the provider's. A required import that cannot be
     resolved fails instantiation (NOT_FOUND); an optional one stays unresolved and traps with
     NOT_FOUND only if called (`vm.import.resolved` reports it as 0);
  3. module state is created: `global_bytes_capacity` zeroed bytes and `global_ref_count` null
     ref globals, fresh for every context;
  4. `__init` runs if exported (a failure fails the context).
`close()` runs `__deinit` if exported. Contexts are single-threaded.

Host values in `call`: `i`/`I` take Python ints (wrapped to the width), `f`/`F` floats, `r` any
ref object (VmBuffer, VmList, native objects, None). Results come back the same way: ints signed,
f32 results as the Python float of the f32 value. Native functions receive and return host
values the same way (see interpreter.ImportBinding), variadic spans as lists of tuples.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Iterable, NamedTuple, Sequence

from amdgpu_cli.formats.vmfb import BytecodeModule, split_cconv
from amdgpu_cli.vm.decoder import verify
from amdgpu_cli.vm.import_calls import ImportBinding
from amdgpu_cli.vm.interpreter import Interpreter, ModuleState
from amdgpu_cli.vm.numerics import host_to_raw, raw_to_host
from amdgpu_cli.vm.refs import VmTrap

__all__ = ["BytecodeImports", "NativeFunction", "NativeModule", "VmContext"]


class NativeFunction(NamedTuple):
    """A host function a bytecode module can import: `fn(*host_args) -> results`."""

    name: str
    cconv: str
    fn: Callable


class NativeModule(ABC):
    """A module implemented in Python (e.g. `hal`), registered in a context before bytecode."""

    name: str = ""
    version: int = 0

    @abstractmethod
    def functions(self) -> dict[str, NativeFunction]:
        """Exported functions by local name (`buffer_view.create`)."""

    def lookup(self, function_name: str) -> NativeFunction | None:
        return self.functions().get(function_name)


def _converts(chars: str) -> bool:
    """Whether values of cconv fragment `chars` differ between host and raw form (not all refs)."""
    return chars.strip("r") != ""


class VmContext:
    """A bytecode module instantiated over a set of native modules."""

    def __init__(self, module: BytecodeModule, native_modules: Iterable[NativeModule] = (),
                 *, run_init: bool = True):
        self.module = module
        self.native_modules = {m.name: m for m in native_modules}
        # Verify every function body before anything runs (IREE verifies all functions when the
        # module is created): a bad function must not fail only after `__init` made calls.
        for ordinal in range(len(module.functions)):
            verify(module, ordinal)
        self._check_dependencies()
        bindings = [self._resolve(imp) for imp in module.imports]
        self.state = ModuleState(bytearray(module.state.global_bytes_capacity),
                                 [None] * module.state.global_ref_count, {})
        self.interpreter = Interpreter(module, bindings, self.state)
        # export name -> (ordinal, cconv, argument chars, result chars, arguments need
        # conversion, results need conversion), made on first call: the module cannot change,
        # and `call` is the entry of every API call.
        self._signatures: dict[str, tuple[int, str, str, str, bool, bool]] = {}
        self._closed = False
        exports = module.exports_by_name
        if run_init and "__init" in exports:
            self.call("__init", [])

    # instantiation ------------------------------------------------------------------------------

    def _check_dependencies(self) -> None:
        for dep in self.module.dependencies:
            native = self.native_modules.get(dep.name)
            if native is None:
                if not dep.optional:
                    raise VmTrap(f"required module '{dep.name}' not registered in the context",
                                 status="NOT_FOUND")
                continue
            if native.version < dep.minimum_version:
                raise VmTrap(f"module '{dep.name}' version {native.version} is older than the "
                             f"required version {dep.minimum_version}", status="INCOMPATIBLE")

    def _resolve(self, imp) -> ImportBinding | None:
        native = self.native_modules.get(imp.module_name)
        fn = native.lookup(imp.function_name) if native is not None else None
        if fn is None:
            if imp.optional:
                return None
            raise VmTrap(f"required import '{imp.full_name}' not found in the context",
                         status="NOT_FOUND")
        if imp.cconv and fn.cconv != imp.cconv:
            raise VmTrap(f"import '{imp.full_name}' has calling convention {imp.cconv} but the "
                         f"provider declares {fn.cconv}", status="INVALID_ARGUMENT")
        return ImportBinding(imp.full_name, fn.cconv, fn.fn)

    # calls --------------------------------------------------------------------------------------

    def export_cconv(self, name: str) -> str:
        return self._signature(name)[1]

    def export_signature(self, name: str) -> tuple[str, str]:
        """split_cconv(export_cconv(name)): the argument and result fragments."""
        return self._signature(name)[2:4]

    def _export(self, name: str) -> int:
        return self._signature(name)[0]

    def _signature(self, name: str) -> tuple[int, str, str, str, bool, bool]:
        signature = self._signatures.get(name)
        if signature is None:
            exports = self.module.exports_by_name
            if name not in exports:
                raise VmTrap(f"function '{name}' not found in module '{self.module.name}'",
                             status="NOT_FOUND")
            ordinal = exports[name]
            cconv = self.module.signatures[ordinal].cconv or "0v_v"
            arg_chars, res_chars = split_cconv(cconv)
            signature = self._signatures[name] = (ordinal, cconv, arg_chars, res_chars,
                                                  _converts(arg_chars), _converts(res_chars))
        return signature

    def call(self, name: str, args: Sequence = ()) -> list:
        """Call export `name` with host values; returns host values in cconv order."""
        ordinal, cconv, arg_chars, res_chars, convert_args, convert_results = \
            self._signatures.get(name) or self._signature(name)  # a call fewer once cached
        if "C" in arg_chars:
            raise VmTrap(f"function '{name}' takes variadic arguments", status="UNIMPLEMENTED")
        if len(args) != len(arg_chars):
            raise VmTrap(f"function '{name}' expects {len(arg_chars)} arguments "
                         f"(cconv {cconv}), {len(args)} given", status="INVALID_ARGUMENT")
        # Refs are their own raw form: all-ref signatures (compiled models) skip the conversions.
        raw = [host_to_raw(ch, v) for ch, v in zip(arg_chars, args)] if convert_args else args
        out = self.interpreter.invoke(ordinal, raw)
        return [raw_to_host(ch, v) for ch, v in zip(res_chars, out)] if convert_results else out

    def caller(self, name: str) -> Callable[[Sequence], list]:
        """`lambda args: self.call(name, args)` with the export looked up once: for code that
        calls one function many times (the Python API). Signatures of refs only (compiled
        models) skip `call`'s conversions altogether."""
        ordinal, cconv, arg_chars, res_chars, convert_args, convert_results = self._signature(name)
        if "C" in arg_chars or convert_args or convert_results:
            return lambda args: self.call(name, args)
        invoke, count = self.interpreter.invoke, len(arg_chars)

        def call(args: Sequence) -> list:
            if len(args) != count:
                return self.call(name, args)  # raises call's error
            return invoke(ordinal, args)
        return call

    def call_raw(self, name: str, args: Sequence = ()) -> list:
        """Like `call`, but with raw values (u32 / u64 ints, f32/f64 as bit patterns)."""
        return self.interpreter.invoke(self._export(name), list(args))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if "__deinit" in self.module.exports_by_name:
            self.call("__deinit", [])
        self.state.global_refs[:] = [None] * len(self.state.global_refs)

    def __enter__(self) -> VmContext:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class BytecodeImports(NativeModule):
    """An instantiated bytecode module's exports as a module later ones import from: several
    `--module`s, each resolved against the ones before it (IREE registers them in order; a
    module imports `lib.fn` from the module named `lib`). Calls go through the providing
    context's `call`, with host values both ways; its module state is its own."""

    def __init__(self, context: VmContext):
        self.context = context
        module = context.module
        self.name = module.name
        self.version = module.version
        self._functions = {}
        for export in module.exports:
            if export.name.startswith("__"):
                continue
            cconv = context.export_cconv(export.name)
            self._functions[export.name] = NativeFunction(
                export.name, cconv, self._caller(export.name))

    def _caller(self, name: str) -> Callable:
        call = self.context.call

        def fn(*args):
            return call(name, list(args))
        return fn

    def functions(self) -> dict[str, NativeFunction]:
        return self._functions

"""The run tool: what `iree-run-module` does, as a library call (`run(options) -> RunResult`).

Steps, in IREE's order (runtime/src/iree/tooling/run_module.c, context_util.c, function_util.c):
  1. load the module(s) (`--module`; the last is the main one), create the devices (`--device`,
     each flag one device; none given: `local-task`, the device llvm-cpu modules select), and
     instantiate a VmContext with the `hal` module over them (runs `__init`);
  2. resolve the function (`--function`, or the single export not starting with `__` and without
     `$`); NOT_FOUND as IREE words it;
  3. parse `--input`s against the export's argument cconv, tensors become BufferViews on the first
     device (device-local, usage DEFAULT, copied in through the queue);
  4. print `EXEC @fn`, call, read result BufferViews back to host values;
  5. print results (`result[i]: ...`), or write `--output`s, or check `--expected_output`s.
Output goes to `stdout` (a text stream) as it is produced, so that a failure after `EXEC` leaves
the same partial output as IREE. Errors raise AmdgpuCliError subclasses whose message carries
IREE's annotations (`; parsing function inputs`, `; invoking function 'f'`, and the function's
`iree.abi.declaration`); the exit code of a completed run is in RunResult (1 when an expected
output did not match).

Also here: the value conversions between tooling values (Tensor, StorageBuffer, Scalar, numpy
scalars) and VM/HAL values, shared with `amdgpu_cli.api`. Tensors travel as bytes (uploaded
through `queue_update`, read back with `Buffer.read`) and scalars as `Scalar`s, so a run with
plain tensor and scalar arguments and results never imports numpy (the API turns Scalars into
numpy scalars); `--expected_output` loads its checker (`expected`) on use.
Several `--module`s: each is instantiated in order over the `hal` module and the ones before it
(`vm.context.BytecodeImports`), the last is the main one.

Replay capture (`--device_replay_output`, replay/recorder.py): the file is published once the
devices exist and the recorder wraps them (scope `init`); module instantiation falls outside
every scope; scope `execute` spans inputs, call and results; scope `deinit` the teardown, as
iree-run-module marks them. While capturing, inputs and results move as IREE's tooling moves them
(so the capture matches IREE's and replays): an input is a host-visible device-local allocation
written through a scoped mapping; the results are copied by one transfer command buffer into host
buffers (each the size of its source's allocation, as IREE's) that are then mapped read-only
whole (twice each, as IREE's printing maps them).
"""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, Callable, Sequence

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.formats.vmfb import BytecodeModule, load_vmfb
from amdgpu_cli.hal.buffer import Buffer
from amdgpu_cli.hal.buffer_view import BufferView
from amdgpu_cli.hal.enums import BufferUsage, HalError, MemoryType
from amdgpu_cli.hal.fence import Fence
from amdgpu_cli.hal.registry import default_registry
from amdgpu_cli.tooling.capture_flags import profiling_capture, replay_capture
from amdgpu_cli.tooling.element_types import ElementType
from amdgpu_cli.tooling.io import (
    DEFAULT_MAX_ELEMENT_COUNT,
    format_results,
    parse_inputs,
    output_targets,
    write_outputs,
)
from amdgpu_cli.tooling.values import (VM_SCALAR_NAMES, Scalar, StorageBuffer, Tensor,
                                       numpy_vm_scalar, vm_scalar)
from amdgpu_cli.vm.context import BytecodeImports, VmContext
from amdgpu_cli.vm.hal_module import HalModule
from amdgpu_cli.vm.refs import VmBuffer, VmList, VmTrap

if TYPE_CHECKING:
    from amdgpu_cli.replay.recorder import ReplayCapture
    from amdgpu_cli.tooling.capture_flags import ProfilingFlags, ReplayFlags
    from amdgpu_cli.tooling.expected import Equality

__all__ = ["DEFAULT_DEVICE", "RunOptions", "RunResult", "Session", "from_vm", "run",
           "select_function", "to_vm"]

DEFAULT_DEVICE = "local-task"


class RunOptions:
    """One run, as iree-run-module's flags give it (a plain class: cheaper than a dataclass to
    define at start-up). `equality` None means IREE's default comparison flags;
    `driver_options` are per-driver factory keyword arguments (`--amdgpu_libhsa_search_path` ->
    {"amdgpu": {"libhsa_search_paths": [...]}}; see DriverRegistry.with_options)."""

    __slots__ = ("modules", "devices", "function", "inputs", "outputs", "expected_outputs",
                 "output_max_element_count", "equality", "driver_options", "profiling",
                 "print_statistics", "replay", "parameters", "parameter_mode")

    def __init__(self, modules: list[str], devices: list[str] | None = None, function: str = "",
                 inputs: list[str] | None = None, outputs: list[str] | None = None,
                 expected_outputs: list[str] | None = None,
                 output_max_element_count: int = DEFAULT_MAX_ELEMENT_COUNT,
                 equality: Equality | None = None,
                 driver_options: dict[str, dict[str, object]] | None = None,
                 profiling: ProfilingFlags | None = None, print_statistics: bool = False,
                 replay: ReplayFlags | None = None, parameters: list | None = None,
                 parameter_mode: str = "file"):
        self.modules = modules
        self.devices = [] if devices is None else devices
        self.function = function
        self.inputs = [] if inputs is None else inputs
        self.outputs = [] if outputs is None else outputs
        self.expected_outputs = [] if expected_outputs is None else expected_outputs
        self.output_max_element_count = output_max_element_count
        self.equality = equality
        self.driver_options = {} if driver_options is None else driver_options
        self.profiling = profiling  # --device_profiling_* / --print_device_statistics
        self.print_statistics = print_statistics
        self.replay = replay  # --device_replay_* (tooling/capture_flags.py ReplayFlags)
        # --parameters ([scope=]path strings or (scope, path) pairs) and --parameter_mode.
        self.parameters = [] if parameters is None else parameters
        self.parameter_mode = parameter_mode


class RunResult:
    """A completed run: the function, its results as tooling values (Tensor, numpy scalars,
    StorageBuffer, bytes, lists, None) and the exit code (1: an expected output differed)."""

    __slots__ = ("function", "results", "exit_code")

    def __init__(self, function: str, results: list, exit_code: int = 0):
        self.function = function
        self.results = results
        self.exit_code = exit_code


def _annotate(error: AmdgpuCliError, note: str) -> AmdgpuCliError:
    """The same error type and status with `; note` appended (IREE's status annotations)."""
    base = error.raw_message if isinstance(error, VmTrap) and not error.function else str(error)
    try:
        annotated = type(error)(f"{base}; {note}", status=error.status)
    except TypeError:
        annotated = AmdgpuCliError(f"{base}; {note}", status=error.status)
    return annotated


# -- the context --------------------------------------------------------------------------------

class Session:
    """Devices + the `hal` module + one bytecode module instantiated over them."""

    def __init__(self, module: BytecodeModule | str, devices: Sequence[str] = (), *,
                 registry=None, track_memory: bool = False,
                 libraries: Sequence[BytecodeModule | str] = (),
                 replay: ReplayCapture | None = None, parameters=None,
                 parameter_mode: str = "file"):
        """`libraries`: earlier `--module`s, instantiated first, in order; each may import
        from the ones before it, and `module` (the main one, the last `--module`) from all.
        `replay`: a capture to publish once the devices exist; its recorder wraps them.
        `parameters`: `--parameters` values (`scope=path` strings or (scope, path) pairs),
        opened in `parameter_mode` only when a module imports `io_parameters`, before the
        devices are created (iree-run-module resolves that dependency first)."""
        registry = registry or default_registry()
        module = _load(module)
        libraries = [_load(m) for m in libraries]
        self.module = module
        self._cconvs: dict[str, tuple[str, str]] = {}  # function -> cconv(function)
        self.parameters = None  # the ParameterProvider (tooling/parameters.py), or None
        self.parameters = _open_parameters([*libraries, module], parameters, parameter_mode)
        try:
            self.devices = registry.create_devices(list(devices), default=DEFAULT_DEVICE)
        except BaseException:
            if self.parameters is not None:
                self.parameters.close()
            raise
        self.replay = None  # the capture's recorder (replay/recorder.py), or None
        self.replay_deinit_scope = False  # close() marks scope `deinit` (iree-run-module)
        if replay is not None:
            try:
                self.replay = replay.begin()
                self.replay.scope_begin("init")
                self.devices = self.replay.attach(self.devices)
                self.replay.scope_end("init")
            except BaseException:
                self.close_devices()
                raise
        if track_memory:  # --print_statistics: frees counted when buffers are collected
            for device in self.devices:
                device.allocator.track_frees = True
        self.libraries: list[VmContext] = []
        self.context = None
        try:
            self.hal = HalModule(self.devices)
            natives = [self.hal]
            if self.parameters is not None:
                from amdgpu_cli.vm.io_parameters import IoParametersModule

                natives.append(IoParametersModule(self.parameters))
            for library in libraries:
                context = VmContext(library, native_modules=natives)
                self.libraries.append(context)
                natives = [*natives, BytecodeImports(context)]
            self.context = VmContext(module, native_modules=natives)
        except BaseException:
            self.close()
            raise

    @property
    def device(self):
        return self.devices[0]

    def close_devices(self) -> None:
        try:
            for device in self.devices:
                device.close()
        finally:
            parameters = getattr(self, "parameters", None)
            if parameters is not None:  # after the devices: no queue operation reads it now
                parameters.close()

    def close(self) -> None:
        replay = (getattr(self, "replay", None) if getattr(self, "replay_deinit_scope", False)
                  else None)
        if replay is not None:
            replay.scope_begin("deinit")
        try:
            for context in [self.context, *reversed(getattr(self, "libraries", []))]:
                if context is not None:
                    context.close()  # __deinit, the main module first
        finally:
            if replay is not None:
                replay.scope_end("deinit")
            self.close_devices()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def declaration(self, function: str) -> str | None:
        ordinal = self.module.exports_by_name.get(function)
        if ordinal is None:
            return None
        return self.module.signatures[ordinal].attrs.get("iree.abi.declaration")

    def input_chars(self, function: str) -> tuple[str, bool]:
        """(the argument chars the caller supplies, whether the tool appends fences): a
        coarse-fences function (`iree.abi.model`, modules compiled with
        --iree-execution-model=async-external) takes a wait and a signal fence last."""
        arg_chars = self.cconv(function)[0]
        ordinal = self.module.exports_by_name.get(function)
        if (ordinal is not None and arg_chars.endswith("rr") and self.module.signatures[
                ordinal].attrs.get("iree.abi.model") == "coarse-fences"):
            return arg_chars[:-2], True
        return arg_chars, False

    def async_fences(self) -> tuple[None, Fence]:
        """The (wait, signal) fences a tool appends to a coarse-fences call, as IREE's tools
        do: no wait fence, and a signal fence at value 1 of a new semaphore, to wait on after
        the call."""
        return None, Fence.create(self.device.create_semaphore(0), 1)

    def cconv(self, function: str) -> tuple[str, str]:
        """(argument chars, result chars) of export `function`."""
        chars = self._cconvs.get(function)
        if chars is None:
            chars = self._cconvs[function] = self.context.export_signature(function)
        return chars

    def call(self, function: str, values: Sequence, *, download: bool = True) -> list:
        """Call with tooling values (BufferViews pass through as they are); returns tooling
        values (scalars as numpy scalars: this is the Python API's call), read back to the host
        unless `download` is False (then BufferView results stay on the device)."""
        arg_chars, res_chars = self._cconvs.get(function) or self.cconv(function)  # a call fewer
        device = self.devices[0]
        # BufferView arguments (DeviceArrays: the common case of a call) need no to_vm call.
        vm_args = [v if ch == "r" and v.__class__ is BufferView else to_vm(v, ch, device)
                   for v, ch in zip(values, arg_chars)]
        vm_results = self.context.call(function, vm_args)
        return [from_vm(v, ch, device, True) if download or not isinstance(v, BufferView) else v
                for v, ch in zip(vm_results, res_chars)]

    def device_caller(self, function: str) -> Callable[[Sequence], list]:
        """`lambda values: self.call(function, values, download=False)`, with the function looked
        up once (the Python API's repeated calls)."""
        arg_chars, res_chars = self.cconv(function)
        vm_call = self.context.caller(function)
        device = self.devices[0]

        def call(values: Sequence) -> list:
            vm_args = [v if ch == "r" and v.__class__ is BufferView else to_vm(v, ch, device)
                       for v, ch in zip(values, arg_chars)]
            return [v if v.__class__ is BufferView else from_vm(v, ch, device, True)
                    for v, ch in zip(vm_call(vm_args), res_chars)]
        return call

    def upload(self, value) -> BufferView:
        """A tensor (numpy array or Tensor) as a BufferView on this session's device."""
        return to_vm(value, "r", self.device)

    def download(self, view: BufferView):
        """A BufferView's contents as a Tensor."""
        return from_vm(view, "r", self.device)

    def statistics_text(self) -> str:
        """`--print_statistics`: IREE's allocator block per device (call once everything the
        run made was dropped: after close())."""
        import gc

        gc.collect()  # buffers in reference cycles count as freed once collected
        return "".join(f"Device: {device.identifier}\n[[ iree_hal_allocator_t memory statistics "
                       f"]]\n{device.allocator.statistics_text()}" for device in self.devices)


def _open_parameters(modules: Sequence[BytecodeModule], parameters, mode: str):
    """The ParameterProvider of `parameters` when a module imports `io_parameters` (None
    otherwise: IREE's tools open the files only then), its errors annotated as IREE's."""
    from amdgpu_cli.tooling.parameters import check_mode, imports_parameters

    users = [m for m in modules if imports_parameters([m])]
    if not users:
        return None
    from amdgpu_cli.tooling.parameters import ParameterProvider

    try:
        check_mode(mode)
        return ParameterProvider.open(parameters, mode)
    except AmdgpuCliError as e:
        e = _annotate(e, f"resolving dependencies for '{users[0].name}'")
        raise _annotate(e, "creating VM context") from None


def _load(module: BytecodeModule | str) -> BytecodeModule:
    if isinstance(module, BytecodeModule):
        return module
    try:
        return load_vmfb(module)
    except AmdgpuCliError as e:
        raise _annotate(e, f"loading bytecode module at '{module}'") from None


def select_function(module: BytecodeModule, name: str) -> str:
    """`--function`, or the single export that is not internal (IREE's function_util.c)."""
    exports = module.exports_by_name
    if name:
        if name not in exports:
            raise VmTrap(f"no function `{name}` exported by module; looking up function "
                         f"'{name}'", status="NOT_FOUND")
        return name
    public = [e.name for e in module.exports if not e.name.startswith("__") and "$" not in e.name]
    if len(public) != 1:
        raise VmTrap(f"no --function= specified and module has {len(public)} exported "
                     f"functions; specify which to run", status="INVALID_ARGUMENT")
    return public[0]


# -- value conversion ---------------------------------------------------------------------------

def _upload(device, data) -> Buffer:
    """A device-local buffer (usage DEFAULT) holding the bytes-like `data`, written through the
    device queue."""
    source = memoryview(data)
    nbytes = source.nbytes
    replay = getattr(device, "replay", None)
    if replay is not None:
        return _upload_captured(device, replay, source)
    buffer = device.allocator.allocate(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT, nbytes)
    if nbytes:
        fence = Fence.create(device.create_semaphore(0), 1)
        device.queue_update(-1, None, fence, source, 0, buffer, 0, nbytes)
        fence.wait()
    return buffer


# What IREE's tooling allocates under capture: inputs device-local and host-visible with scoped
# mapping (0x32 / 0x0b000c03), readback targets host-local (0x56 / 0x09000003).
_CAPTURED_INPUT = (int(MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE),
                   int(BufferUsage.DEFAULT | BufferUsage.MAPPING | BufferUsage.MAPPING_ACCESS_RANDOM))
_CAPTURED_READBACK = (int(MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE),
                      int(BufferUsage.TRANSFER | BufferUsage.MAPPING_SCOPED
                          | BufferUsage.MAPPING_ACCESS_RANDOM))


def _upload_captured(device, replay, source: memoryview) -> Buffer:
    """_upload as IREE's tooling does it (so a capture replays): allocate host-visible, write
    through a scoped WRITE|DISCARD mapping; a device whose allocation is not mappable gets a
    (recorded) queue update instead."""
    nbytes = source.nbytes
    buffer = device.allocator.allocate(*_CAPTURED_INPUT, nbytes)
    if not nbytes:
        return buffer
    if (buffer.memory_type & MemoryType.HOST_VISIBLE
            and buffer.allowed_usage & BufferUsage.MAPPING_SCOPED):
        replay.write_mapped(buffer, 0, source)
    else:
        fence = Fence.create(device.create_semaphore(0), 1)
        device.queue_update(-1, None, fence, source, 0, buffer, 0, nbytes)
        fence.wait()
    return buffer


def download_captured(session: Session, vm_results: Sequence, res_chars: str) -> list:
    """from_vm of every result, with the tensors read back as IREE's tooling reads them while a
    replay capture records: one one-shot transfer command buffer copies each into a new
    host-local buffer, one queue execute runs it, then each host buffer is mapped read-only
    twice (its printing); the recorder keeps the bytes for the results sidecar."""
    from amdgpu_cli.hal.command_buffer import BufferRef
    from amdgpu_cli.hal.enums import CommandBufferMode, CommandCategory

    device, replay = session.device, session.replay
    views = [(i, v) for i, v in enumerate(vm_results)
             if isinstance(v, BufferView) and v.byte_length]
    staged = {}
    if views:
        cb = device.create_command_buffer(
            CommandBufferMode.ONE_SHOT | CommandBufferMode.ALLOW_INLINE_EXECUTION,
            CommandCategory.TRANSFER, -1, 0)
        cb.begin()
        for i, view in views:
            # IREE sizes the host buffer as the source's whole allocation, copies the view's
            # bytes to its start, and maps it whole.
            host = device.allocator.allocate(*_CAPTURED_READBACK, view.buffer.allocation_size)
            cb.copy_buffer(BufferRef.direct(view.buffer, 0, view.byte_length),
                           BufferRef.direct(host, 0, view.byte_length))
            staged[i] = host
        cb.end()
        fence = Fence.create(device.create_semaphore(0), 1)
        device.queue_execute(-1, None, fence, cb, (), 0)
        fence.wait()
    results = []
    for i, (value, ch) in enumerate(zip(vm_results, res_chars)):
        host = staged.get(i)
        if host is None:
            results.append(from_vm(value, ch, device))
            continue
        element_type = ElementType.from_code(value.element_type)
        data, ordinals = replay.read_mapped(host, 0, host.byte_length, times=2)
        data = data[:value.byte_length]
        replay.keep_result(i, ordinals, host, 0, data, element_type.name, value.shape)
        results.append(Tensor.from_bytes(element_type, value.shape, data))
    return results


def _download(device, buffer: Buffer, offset: int, length: int) -> bytes:
    """The bytes of a buffer range, through a host-visible staging buffer when not mappable."""
    try:
        return buffer.read(offset, length)
    except HalError as e:
        if e.status != "PERMISSION_DENIED":
            raise
    staging = device.allocator.allocate(
        MemoryType.HOST_LOCAL | MemoryType.DEVICE_VISIBLE,
        BufferUsage.TRANSFER | BufferUsage.MAPPING_SCOPED, length)
    fence = Fence.create(device.create_semaphore(0), 1)
    device.queue_copy(-1, None, fence, buffer, offset, staging, 0, length)
    fence.wait()
    return staging.read(0, length)


def to_vm(value, ch: str, device):
    """A tooling value -> the VM host value of cconv char `ch` (BufferViews on `device`)."""
    if ch in "iI":
        return 0 if value is None else int(value)
    if ch in "fF":
        return 0.0 if value is None else float(value)
    if value is None:
        return None
    if isinstance(value, BufferView):
        return value  # already on a device (DeviceArray inputs: the common case of a call)
    if isinstance(value, Tensor):
        return BufferView(_upload(device, value.data), value.shape, value.element_type.code)
    if isinstance(value, StorageBuffer):
        return _upload(device, value.data)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return VmBuffer(bytearray(value))
    if isinstance(value, (list, tuple)):
        lst = VmList("variant", len(value))
        lst.resize(len(value))
        for i, item in enumerate(value):
            lst.set_ref(i, to_vm(item, "r", device))
        return lst
    if value.__class__ is Scalar:
        value = value.numpy()  # refused below, in numpy's words
    np = sys.modules.get("numpy")  # numpy values exist only once numpy is imported
    if np is not None and isinstance(value, np.ndarray):
        return to_vm(Tensor.from_array(value), ch, device)
    if np is not None and isinstance(value, np.generic):
        raise HalError(f"a scalar {value.dtype} value cannot be passed as a ref argument",
                       status="INVALID_ARGUMENT")
    return value


def from_vm(value, ch: str, device, numpy_scalars: bool = False):
    """A VM host result of cconv char `ch` -> a tooling value (buffer contents read back); a
    scalar is a Scalar, or with `numpy_scalars` (the Python API's calls) a numpy scalar."""
    if ch in VM_SCALAR_NAMES:
        return numpy_vm_scalar(ch, value) if numpy_scalars else vm_scalar(ch, value)
    if value is None:
        return None
    if isinstance(value, BufferView):
        element_type = ElementType.from_code(value.element_type)
        data = _download(device, value.buffer, 0, value.byte_length)
        return Tensor.from_bytes(element_type, value.shape, data)
    if isinstance(value, Buffer):
        return StorageBuffer(_download(device, value, 0, value.byte_length))
    if isinstance(value, VmBuffer):
        return bytes(value.data)
    if isinstance(value, VmList):
        return [from_vm(v, "r" if not isinstance(v, (int, float)) else
                        ("I" if isinstance(v, int) else "F"), device, numpy_scalars)
                for v in value.python_values()]
    return value


# -- the tool -----------------------------------------------------------------------------------

def run(options: RunOptions, stdout: IO[str] | None = None, *, registry=None) -> RunResult:
    """Runs one function as iree-run-module does, writing its stdout text to `stdout`."""
    out = stdout if stdout is not None else sys.stdout
    if not options.modules:
        raise AmdgpuCliError("no --module= specified", status="INVALID_ARGUMENT")
    # Output paths are checked before any work: a directory or a missing folder fails now.
    targets = output_targets(options.outputs) if options.outputs else None
    capture = profiling_capture(options.profiling)  # flags and the output path, checked now
    replay = replay_capture(options.replay)  # flags and the path, checked now
    registry = (registry or default_registry()).with_options(options.driver_options)
    try:
        try:
            session = Session(options.modules[-1], options.devices, registry=registry,
                              track_memory=options.print_statistics,
                              libraries=options.modules[:-1], replay=replay,
                              parameters=options.parameters,
                              parameter_mode=options.parameter_mode)
        except AmdgpuCliError as e:
            raise _annotate(e, "creating run context") from None
        session.replay_deinit_scope = True
        result = _run_session(session, options, out, targets, capture)
    finally:
        if replay is not None:
            replay.end()  # the final length; a failed run leaves a valid, closed capture
    if options.print_statistics:  # at exit, as iree-run-module prints it
        sys.stderr.write(session.statistics_text())
        sys.stderr.flush()
    return result


def _run_session(session: Session, options: RunOptions, out, targets, capture) -> RunResult:
    with session:
        try:
            function = select_function(session.module, options.function)
        except AmdgpuCliError as e:
            raise _annotate(e, "creating run context") from None
        declaration = session.declaration(function)

        def fail(e: AmdgpuCliError, note: str) -> AmdgpuCliError:
            e = _annotate(e, note)
            return _annotate(e, f"`{declaration}`") if declaration else e

        res_chars = session.cconv(function)[1]
        arg_chars, asynchronous = session.input_chars(function)
        if capture is not None:
            try:
                capture.check(session.devices)
            except AmdgpuCliError as e:
                raise fail(e, "beginning device profiling") from None
        if session.replay is not None:
            session.replay.scope_begin("execute")
        try:
            inputs = parse_inputs(options.inputs, arg_chars, numpy_scalars=False)
            vm_args = [to_vm(v, ch, session.device) for v, ch in zip(inputs, arg_chars)]
        except AmdgpuCliError as e:
            raise fail(e, "parsing function inputs") from None
        out.write(f"EXEC @{function}\n")
        out.flush()
        if capture is not None:  # IREE begins profiling just before the call
            try:
                capture.begin(session.devices)
            except AmdgpuCliError as e:
                raise fail(e, "beginning device profiling") from None
        try:
            if len(vm_args) != len(arg_chars):
                raise VmTrap(f"input list and function mismatch; expected {len(arg_chars)} "
                             f"arguments but passed {len(vm_args)}", status="INVALID_ARGUMENT")
            finish = None
            if asynchronous:
                wait, finish = session.async_fences()
                vm_args = [*vm_args, wait, finish]
            vm_results = session.context.call(function, vm_args)
            if finish is not None:
                try:
                    finish.wait()
                except AmdgpuCliError as e:
                    raise _annotate(e, "waiting on finish fence") from None
        except AmdgpuCliError as e:
            if capture is not None:
                capture.abort()
            raise fail(e, f"invoking function '{function}'") from None
        except BaseException:
            if capture is not None:
                capture.abort()
            raise
        if capture is not None:
            try:
                capture.end()
            except AmdgpuCliError as e:
                raise fail(e, "ending device profiling") from None
        try:
            if session.replay is not None:
                results = download_captured(session, vm_results, res_chars)
            else:
                results = [from_vm(v, ch, session.device) for v, ch in zip(vm_results, res_chars)]
        except AmdgpuCliError as e:
            raise fail(e, "transferring results") from None
        exit_code = 0
        try:
            if options.expected_outputs:
                from amdgpu_cli.tooling.expected import compare_expected

                ok, text = compare_expected(results, options.expected_outputs, cconv=res_chars,
                                            equality=options.equality)
                out.write(text)
                exit_code = 0 if ok else 1
            elif options.outputs:
                write_outputs(results, options.outputs, targets=targets,
                              max_element_count=options.output_max_element_count, stdout=out)
            else:
                out.write(format_results(results, options.output_max_element_count))
        except AmdgpuCliError as e:
            raise fail(e, "processing results") from None
        out.flush()
        if session.replay is not None:
            session.replay.scope_end("execute")
        return RunResult(function, results, exit_code)


# -- --list_drivers / --list_devices / --dump_devices ---------------------------------------------

# iree-run-module's wording for the drivers IREE also has (hal/drivers/*/registration).
_DRIVER_DESCRIPTIONS = {
    "amdgpu": "AMD GPU Driver (HSA/ROCR)",
    "local-sync": "Local execution using a lightweight inline synchronous queue",
    "local-task": "Local execution using the IREE multithreading task system",
    "cuda": "NVIDIA CUDA HAL driver (via dylib)",
}
_RULE = "# " + "=" * 76 + "\n"
_DEVICE_RULE = "# ===" + "-" * 70 + "===\n"


def list_drivers_text(registry=None) -> str:
    """`--list_drivers`, laid out as iree-run-module prints it."""
    registry = registry or default_registry()
    lines = [_RULE, "# Available HAL drivers\n", _RULE,
             "# Use --list_devices={driver name} to enumerate available devices.\n", "\n"]
    for entry in sorted(registry.entries(), key=lambda e: e.name):
        description = _DRIVER_DESCRIPTIONS.get(entry.name, entry.description)
        lines.append(f"{entry.name:>16}: {description}\n")
    return "".join(lines)


def _driver_devices(registry, name: str, named: bool):
    """(driver, devices); (None, []) when the driver cannot be created and was not named.

    As IREE's tools: a driver the user named reports why it cannot be created; when every driver
    is listed, one that cannot be created here (no HSA runtime, no GPU) is skipped silently.
    """
    try:
        driver = registry.driver(name)
    except AmdgpuCliError:
        if named:
            raise
        return None, []
    return driver, driver.query_available_devices()


def _device_uri(driver_name: str, info) -> str:
    return f"{driver_name}://{info.path}"


def _driver_names(registry, driver: str | None) -> list[str]:
    if driver:
        if driver not in registry.names():
            raise HalError(f"no driver '{driver}' registered", status="NOT_FOUND")
        return [driver]
    return sorted(registry.names())


def list_devices_text(registry=None, driver: str | None = None) -> str:
    """`--list_devices[=driver]`: one device URI per line."""
    registry = registry or default_registry()
    lines = []
    for name in _driver_names(registry, driver):
        _, devices = _driver_devices(registry, name, named=bool(driver))
        lines.extend(_device_uri(name, info) + "\n" for info in devices)
    return "".join(lines)


def dump_devices_text(registry=None, driver: str | None = None) -> str:
    """`--dump_devices[=driver]`: per driver a header, then per device its URI and name between
    two rules, followed by the driver's own details for it."""
    registry = registry or default_registry()
    blocks = []
    for name in _driver_names(registry, driver):
        drv, devices = _driver_devices(registry, name, named=bool(driver))
        text = [_RULE, f"# Enumerated devices for driver '{name}'\n", _RULE, "\n"]
        for info in devices:
            text += [_DEVICE_RULE, f"# --device={_device_uri(name, info)}\n",
                     f"#   {info.name}\n", _DEVICE_RULE, drv.dump_device_info(info.device_id)]
        blocks.append("".join(text))
    return "\n".join(blocks)

"""Acceptance 1 of the amdgpu driver: every kernel dispatch softhsa logs is checked against the
module's own VM requests and the code object's own metadata.

Three independent sources meet here:

- **The code object** (`code_object_truth`): the ELF image of an AMD1 executable as
  `llvm-readobj-19 --notes --symbols --elf-output-style=JSON` describes it (its symbol table and
  where its note section lies); the NT_AMDGPU_METADATA note is then cut out of the image by those
  offsets and decoded with `msgpack`, not with the project's code-object parser.
- **The VM's requests** (`Recorder`, installed in a worker process): wrappers around the `hal`
  module's `executable.create` (which bytes became which executable) and `device.queue.execute`
  (`.indirect`) (the recorded `CommandBuffer` dispatch commands with the binding table they run
  with, the workgroup counts the module's VM code computed, the constants it passed), and around
  the HSA library object the driver loads, whose `hsa_amd_memory_pool_allocate` / `_free` calls are
  logged with the dispatch log's size at that moment (so each allocation has a lifetime measured in
  log offsets).
- **softhsa's dispatch log**: one JSON line per non-library kernel it ran: kernel name, grid,
  workgroup, the kernarg bytes (`kernarg_segment_size` of them).

`check_dispatch` then requires, per log line matched in order with the recorded dispatch: the kernel
exists in the code object (symbol `name.kd` and a metadata entry), workgroup = the export's size
(= `.reqd_workgroup_size` when the metadata has one), grid = workgroup count x workgroup size, and
the kernarg bytes, read per the metadata `.args` (own reading: `decode_kernargs`), give the binding
addresses (each equal to its buffer's allocation base + offsets, the bound range inside the buffer's
allocation window, that window inside an HSA allocation live when the line was written), the
constants the VM passed, the hidden arguments reference §6.1 prescribes, and zeros elsewhere.

Worker (one process per model, so a hang or crash is contained and a timeout can end it):

    python tests/amdgpu_dispatch_check.py VMFB SOFTHSA_DIR LOG CASES_JSON

with SOFTHSA_CONFIG naming a config whose `log` is LOG. CASES_JSON is a list of [id, [RUN args],
[--expected_output values] | null]. It prints one JSON object per line: {"event": "start", "id"}
before each phase, then {"event": "done", "id", "dispatches": [[kernel, grid, workgroup,
constants], ...], "problems": [...], "error": str | null, "repeated": {kernel: count} | null,
"expected": {"ok": bool, "text": what --expected_output printed} | null,
"unresolved_bindings": how many bindings had no host-resolvable buffer address (checked only
against the HSA allocations)}. The phase "__init" is loading the module (its initializer) and
closing it; each case then runs on a module loaded afresh. A case that records more than
MAX_DISPATCHES dispatches is stopped before that submission, with the per-kernel counts as
`repeated`: the evidence of a loop that never ends.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import msgpack

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

READOBJ = os.environ.get("LLVM_READOBJ", "llvm-readobj-19")
NT_AMDGPU_METADATA = 32
MAX_DISPATCHES = 256  # per case: far above any corpus function's straight-line dispatch count
GRID_DIMS = 3  # IREE always dispatches with 3 dimensions (setup = 3)
IMPLICIT_BYTES = 124  # the implicit-args suffix IREE writes (reference §6.1)


# ---- the code object, as llvm-readobj and msgpack see it ------------------------------------

@dataclass(frozen=True)
class KernelTruth:
    """One kernel of a code object per its NT_AMDGPU_METADATA entry."""

    name: str
    symbol: str
    kernarg_segment_size: int
    reqd_workgroup_size: tuple[int, int, int] | None
    args: tuple[dict, ...]


def _notes(section: bytes):
    """(owner, type, descriptor) of every ELF note record in a note section (4-byte aligned)."""
    offset = 0
    while offset + 12 <= len(section):
        namesz, descsz, kind = struct.unpack_from("<III", section, offset)
        name_start = offset + 12
        desc_start = name_start + ((namesz + 3) & ~3)
        owner = section[name_start:name_start + namesz].rstrip(b"\0").decode()
        yield owner, kind, section[desc_start:desc_start + descsz]
        offset = desc_start + ((descsz + 3) & ~3)


def code_object_truth(image: bytes) -> dict[str, KernelTruth]:
    """{kernel name: KernelTruth} for an AMDGPU ELF image; every kernel's `.kd` symbol exists."""
    with tempfile.NamedTemporaryFile(suffix=".hsaco") as handle:
        handle.write(image)
        handle.flush()
        proc = subprocess.run([READOBJ, "--notes", "--symbols", "--elf-output-style=JSON",
                               handle.name], capture_output=True, text=True, check=True)
    (report,) = json.loads(proc.stdout)
    symbols = {entry["Symbol"]["Name"]["Name"] for entry in report["Symbols"]}
    metadata = None
    for wrapper in report["NoteSections"]:
        section = wrapper["NoteSection"]
        raw = image[section["Offset"]:section["Offset"] + section["Size"]]
        for owner, kind, desc in _notes(raw):
            if owner == "AMDGPU" and kind == NT_AMDGPU_METADATA:
                metadata = msgpack.unpackb(desc, raw=False, strict_map_key=False)
    if metadata is None:
        raise ValueError("code object has no NT_AMDGPU_METADATA note")
    kernels = {}
    for entry in metadata["amdhsa.kernels"]:
        if entry[".symbol"] not in symbols:
            raise ValueError(f"metadata kernel symbol {entry['.symbol']} is not a symbol")
        reqd = entry.get(".reqd_workgroup_size")
        kernels[entry[".name"]] = KernelTruth(
            name=entry[".name"], symbol=entry[".symbol"],
            kernarg_segment_size=entry[".kernarg_segment_size"],
            reqd_workgroup_size=tuple(reqd) if reqd else None,
            args=tuple(entry.get(".args", ())))
    return kernels


# ---- kernargs, read per the metadata .args ----------------------------------------------------

@dataclass
class DecodedKernargs:
    bindings: list[int] = field(default_factory=list)  # global_buffer values, in .args order
    constants: list[int] = field(default_factory=list)  # by_value arguments as u32 words
    hidden: dict[str, tuple[int, int]] = field(default_factory=dict)  # kind -> (offset, value)
    covered: bytearray = field(default_factory=bytearray)  # 1 per byte some argument covers
    explicit_end: int = 0  # E of reference §6.1: 8*bindings + align8(4*constants)


def decode_kernargs(kernel: KernelTruth, data: bytes) -> DecodedKernargs:
    out = DecodedKernargs(covered=bytearray(len(data)))
    for arg in kernel.args:
        offset, size, kind = arg[".offset"], arg[".size"], arg[".value_kind"]
        if offset + size > len(data):
            raise ValueError(f"{kernel.name}: argument {kind} at {offset}+{size} is past the "
                             f"{len(data)} kernarg bytes")
        chunk = data[offset:offset + size]
        out.covered[offset:offset + size] = b"\1" * size
        if kind == "global_buffer":
            out.bindings.append(int.from_bytes(chunk, "little"))
        elif kind == "by_value":
            if size % 4:
                raise ValueError(f"{kernel.name}: by_value argument of {size} bytes")
            out.constants.extend(struct.unpack(f"<{size // 4}I", chunk))
        elif kind.startswith("hidden_"):
            out.hidden[kind] = (offset, int.from_bytes(chunk, "little"))
        else:
            raise ValueError(f"{kernel.name}: unexpected argument kind {kind}")
    out.explicit_end = 8 * len(out.bindings) + ((4 * len(out.constants) + 7) & ~7)
    return out


def implicit_suffix(workgroup_count, workgroup_size) -> bytes:
    """The 124-byte implicit-args block of reference §6.1 (offsets relative to E)."""
    block = bytearray(IMPLICIT_BYTES)
    struct.pack_into("<3I", block, 0, *workgroup_count)
    struct.pack_into("<3H", block, 12, *workgroup_size)
    struct.pack_into("<H", block, 64, GRID_DIMS)
    return bytes(block)


def expected_hidden(kind: str, workgroup_count, workgroup_size) -> int:
    """What IREE writes for a hidden argument (§6.1); every kind it does not name stays 0."""
    for axis, letter in enumerate("xyz"):
        if kind == f"hidden_block_count_{letter}":
            return workgroup_count[axis]
        if kind == f"hidden_group_size_{letter}":
            return workgroup_size[axis]
    return GRID_DIMS if kind == "hidden_grid_dims" else 0


# ---- what the VM asked for -------------------------------------------------------------------

@dataclass(frozen=True)
class BoundRange:
    address: int | None  # the HAL buffer's device address + offset (None: not resolvable)
    window: tuple[int, int] | None  # [root base, root base + allocation size) of its allocation
    length: int


@dataclass(frozen=True)
class RequestedDispatch:
    kernel: str  # symbol without .kd
    image: bytes  # the code object it lives in
    workgroup_size: tuple[int, int, int]
    workgroup_count: tuple[int, int, int] | None  # None: indirect (read on the device)
    constants: tuple[int, ...]
    bindings: tuple[BoundRange, ...]


@dataclass
class Allocation:
    base: int
    size: int
    born: int  # dispatch-log size when the allocation returned
    freed: int | None = None  # dispatch-log size when the free was requested


class AllocationLog:
    """The driver's HSA allocations, timed by the dispatch log's size."""

    def __init__(self, log_path: Path):
        self.log_path = log_path
        self.allocations: list[Allocation] = []
        # Re-entrant: a garbage collection inside a locked section can run a buffer's finalizer,
        # whose hsa_amd_memory_pool_free comes back here on the same thread (with a plain Lock
        # that deadlocked the worker: the CI timeouts of scf_while / layernorm under load).
        self._lock = threading.RLock()

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except FileNotFoundError:
            return 0

    def allocated(self, base: int, size: int) -> None:
        born = self.log_size()
        with self._lock:
            self.allocations.append(Allocation(base, size, born))

    def freed(self, base: int) -> None:
        size = self.log_size()
        with self._lock:
            for allocation in reversed(self.allocations):
                if allocation.base == base and allocation.freed is None:
                    allocation.freed = size
                    return

    def live_at(self, line_offset: int, start: int, end: int) -> Allocation | None:
        """The allocation holding [start, end) while the log line at `line_offset` was written."""
        with self._lock:
            for allocation in self.allocations:
                if (allocation.born <= line_offset
                        and (allocation.freed is None or line_offset < allocation.freed)
                        and allocation.base <= start and end <= allocation.base + allocation.size):
                    return allocation
        return None


class _TrackedLib:
    """The cffi library object with pool allocate/free observed; everything else passes through."""

    def __init__(self, lib, ffi, allocations: AllocationLog):
        self._lib = lib
        self._ffi = ffi
        self._allocations = allocations

    def __getattr__(self, name: str):
        function = getattr(self._lib, name)
        if name == "hsa_amd_memory_pool_allocate":
            return self._allocate(function)
        if name == "hsa_amd_memory_pool_free":
            return self._free(function)
        return function

    def _allocate(self, function):
        def allocate(pool, size, flags, out):
            status = function(pool, size, flags, out)
            if status == 0:
                address = int(self._ffi.cast("uintptr_t", out[0]))
                self._allocations.allocated(address, int(size))
            return status
        return allocate

    def _free(self, function):
        def free(pointer):
            self._allocations.freed(int(self._ffi.cast("uintptr_t", pointer)))
            return function(pointer)
        return free


class DispatchBound(Exception):
    """A case asked for more than MAX_DISPATCHES dispatches; str() is {kernel: count} as JSON."""


class Recorder:
    """Installs the wrappers (in this process, for good) and collects the VM's dispatches."""

    def __init__(self, log_path: Path, max_dispatches: int = MAX_DISPATCHES):
        self.allocations = AllocationLog(log_path)
        self.max_dispatches = max_dispatches
        # id(executable) -> (executable, its AmdgpuExecutableDef); the executable is kept alive
        self.executables: dict[int, tuple] = {}
        self.dispatches: list[RequestedDispatch] = []
        self.fences: list = []

    def install(self) -> None:
        import hsa_ffi
        from amdgpu_cli.formats.amdgpu_executable import parse_amdgpu_executable
        from amdgpu_cli.vm.hal_module import HalModule

        recorder, load = self, hsa_ffi.load

        def tracked_load(*args, **kwargs):
            libhsa = load(*args, **kwargs)
            libhsa.lib = _TrackedLib(libhsa.lib, libhsa.ffi, recorder.allocations)
            return libhsa

        hsa_ffi.load = tracked_load
        create = HalModule.executable_create
        execute = HalModule.device_queue_execute
        execute_indirect = HalModule.device_queue_execute_indirect

        def executable_create(module, device, affinity, fmt, data, constants):
            executable = create(module, device, affinity, fmt, data, constants)
            definition = parse_amdgpu_executable(bytes(data.data))
            recorder.executables[id(executable)] = (executable, definition)
            return executable

        def queue_execute(module, device, affinity, wait, signal, cb, flags):
            recorder.record(cb, (), signal)
            return execute(module, device, affinity, wait, signal, cb, flags)

        def queue_execute_indirect(module, device, affinity, wait, signal, cb, flags, table):
            from amdgpu_cli.hal.command_buffer import Binding
            bindings = [Binding(buffer, offset, length) for buffer, offset, length in table]
            recorder.record(cb, bindings, signal)
            return execute_indirect(module, device, affinity, wait, signal, cb, flags, table)

        HalModule.executable_create = executable_create
        HalModule.device_queue_execute = queue_execute
        HalModule.device_queue_execute_indirect = queue_execute_indirect

    def record(self, command_buffer, binding_table, signal) -> None:
        from amdgpu_cli.hal.command_buffer import DispatchCommand

        for command in getattr(command_buffer, "commands", ()):
            if isinstance(command, DispatchCommand):
                self.dispatches.append(self._request(command, binding_table))
        if len(self.dispatches) > self.max_dispatches:  # stopped before it is submitted
            counts = Counter(d.kernel for d in self.dispatches)
            raise DispatchBound(json.dumps(dict(counts)))
        if signal is not None:
            self.fences.append(signal)

    def _request(self, command, binding_table) -> RequestedDispatch:
        from amdgpu_cli.hal.command_buffer import resolve_ref

        _, definition = self.executables[id(command.executable)]
        export = definition.exports[command.entry_point]
        bindings = tuple(_bound(*resolve_ref(ref, binding_table)) for ref in command.bindings)
        constants = struct.unpack(f"<{len(command.constants) // 4}I", command.constants)
        return RequestedDispatch(
            kernel=export.symbol_name.removesuffix(".kd"), image=definition.code_object,
            workgroup_size=tuple(export.workgroup_size), workgroup_count=command.workgroup_count,
            constants=constants, bindings=bindings)

    def wait_all(self, timeout: float = 30.0) -> None:
        for fence in self.fences:
            fence.wait(timeout)
        self.fences.clear()


def _bound(buffer, offset: int, length: int) -> BoundRange:
    """The device range of a resolved binding: the buffer's root storage is its allocation (HSA
    unified addressing: the host view's address is the device address)."""
    try:
        root = buffer.root
        base = root._storage_view().__array_interface__["data"][0]
    except Exception:  # not resolvable from the host (e.g. not yet committed)
        return BoundRange(None, None, length)
    return BoundRange(base + buffer.byte_offset + offset, (base, base + root.allocation_size),
                      length)


# ---- the checks ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LogLine:
    offset: int  # byte offset of the line in the log
    entry: dict


def read_log(path: Path, start: int) -> tuple[list[LogLine], int]:
    """The complete lines from byte `start` on, and the offset after them."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], start
    lines, position = [], start
    while True:
        end = data.find(b"\n", position)
        if end < 0:
            return lines, position
        lines.append(LogLine(position, json.loads(data[position:end])))
        position = end + 1


_TRUTH_CACHE: dict[bytes, dict[str, KernelTruth]] = {}


def truth_for(image: bytes) -> dict[str, KernelTruth]:
    found = _TRUTH_CACHE.get(image)
    if found is None:
        found = _TRUTH_CACHE[image] = code_object_truth(image)
    return found


def check_dispatch(request: RequestedDispatch, line: LogLine,
                   allocations: AllocationLog | None) -> list[str]:
    """Every difference between one logged dispatch and what the VM asked for (empty: none)."""
    entry = line.entry
    where = f"{request.kernel}"
    truth = truth_for(request.image).get(request.kernel)
    if truth is None:
        return [f"{where}: no such kernel in the code object's metadata"]
    problems = []
    if entry["kernel"] != request.kernel:
        return [f"dispatch order: log ran {entry['kernel']}, VM recorded {request.kernel}"]
    wg_size = request.workgroup_size
    if truth.reqd_workgroup_size and tuple(truth.reqd_workgroup_size) != wg_size:
        problems.append(f"{where}: AMD1 workgroup {wg_size} != metadata "
                        f".reqd_workgroup_size {truth.reqd_workgroup_size}")
    if tuple(entry["workgroup"]) != wg_size:
        problems.append(f"{where}: workgroup {entry['workgroup']} != {list(wg_size)}")
    count = request.workgroup_count
    if count is not None:
        grid = [c * s for c, s in zip(count, wg_size)]
        if entry["grid"] != grid:
            problems.append(f"{where}: grid {entry['grid']} != count {list(count)} x "
                            f"workgroup {list(wg_size)} = {grid}")
    if entry["kernarg_segment_size"] != truth.kernarg_segment_size:
        problems.append(f"{where}: kernarg size {entry['kernarg_segment_size']} != metadata "
                        f"{truth.kernarg_segment_size}")
    data = bytes.fromhex(entry["kernarg"])
    try:
        decoded = decode_kernargs(truth, data)
    except ValueError as error:
        return problems + [str(error)]
    if tuple(decoded.constants) != request.constants:
        problems.append(f"{where}: constants {decoded.constants} != VM's {list(request.constants)}")
    problems += _check_bindings(where, decoded.bindings, request.bindings, line.offset, allocations)
    problems += _check_rest(where, decoded, data, count or tuple(entry["grid"][i] // wg_size[i]
                                                                 for i in range(3)), wg_size)
    return problems


def _check_bindings(where, addresses, bindings, line_offset, allocations) -> list[str]:
    if len(addresses) != len(bindings):
        return [f"{where}: {len(addresses)} binding arguments, VM passed {len(bindings)}"]
    problems = []
    for index, (address, bound) in enumerate(zip(addresses, bindings)):
        name = f"{where} binding {index}"
        if bound.address is not None and address != bound.address:
            problems.append(f"{name}: address 0x{address:x} != buffer base + offsets "
                            f"0x{bound.address:x}")
            continue
        if bound.window is not None:
            low, high = bound.window
            if not (low <= address and address + bound.length <= high):
                problems.append(f"{name}: [0x{address:x}, +{bound.length}) outside its buffer's "
                                f"allocation [0x{low:x}, 0x{high:x})")
        if allocations is not None:
            low, high = bound.window or (address, address + bound.length)
            if allocations.live_at(line_offset, low, high) is None:
                problems.append(f"{name}: [0x{low:x}, 0x{high:x}) is inside no HSA allocation "
                                f"that was live when the kernel ran")
    return problems


def _check_rest(where, decoded: DecodedKernargs, data: bytes, count, wg_size) -> list[str]:
    """Hidden arguments per §6.1; bytes no argument covers are zero, or IREE's implicit block."""
    problems = []
    for kind, (offset, value) in decoded.hidden.items():
        want = expected_hidden(kind, count, wg_size)
        if value != want:
            problems.append(f"{where}: {kind} @{offset} = {value}, expected {want}")
    start = decoded.explicit_end
    suffix = implicit_suffix(count, wg_size)
    for offset, byte in enumerate(data):
        if not byte or decoded.covered[offset]:
            continue
        relative = offset - start  # §6.1: IREE writes its whole implicit block at E
        if 0 <= relative < IMPLICIT_BYTES and suffix[relative] == byte:
            continue
        problems.append(f"{where}: kernarg byte {offset} is 0x{byte:02x}; no argument covers it")
        break
    return problems


def match(requests: list[RequestedDispatch], lines: list[LogLine],
          allocations: AllocationLog | None) -> list[str]:
    """Dispatch-for-dispatch, in order."""
    problems = []
    if len(requests) != len(lines):
        problems.append(f"{len(lines)} logged dispatches, VM recorded {len(requests)}: log "
                        f"{[line.entry['kernel'] for line in lines]}, VM "
                        f"{[r.kernel for r in requests]}")
    for request, line in zip(requests, lines):
        problems += check_dispatch(request, line, allocations)
    return problems


# ---- the worker ------------------------------------------------------------------------------

def _emit(**fields) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


class Worker:
    """One model on the amdgpu driver in this process: phases __init, then each case."""

    def __init__(self, vmfb: str, softhsa_dir: str, log_path: Path):
        from amdgpu_cli.hal.registry import default_registry

        self.vmfb = vmfb
        self.log_path = log_path
        self.recorder = Recorder(log_path)
        self.recorder.install()
        self.registry = default_registry().with_options(
            {"amdgpu": {"libhsa_search_paths": [softhsa_dir]}})
        self.expected: dict | None = None  # the phase's --expected_output check
        self.position = 0  # log offset where the next phase starts

    def run(self, cases: list) -> None:
        self.phase("__init", self.load)
        for case_id, args, expected in cases:
            self.phase(case_id, lambda args=args, expected=expected: self.call(args, expected))

    def load(self) -> None:
        """Loading the module (its executables, the initializer's dispatches) and closing it."""
        from amdgpu_cli.tooling.run import Session

        Session(self.vmfb, ["amdgpu"], registry=self.registry).close()

    def call(self, args: list[str], expected: list[str] | None) -> None:
        """One RUN line as amdgpu-run runs it, on a freshly loaded module (module state starts
        anew, as it does for iree-run-module, which runs one function per process): inputs parsed
        and uploaded, results read back and, given `expected` (--expected_output values),
        compared by the same check `amdgpu-run --expected_output` makes (self.expected)."""
        from amdgpu_cli.tooling.expected import compare_expected
        from amdgpu_cli.tooling.io import format_results, parse_inputs
        from amdgpu_cli.tooling.run import Session, from_vm, to_vm

        function = next(a.split("=", 1)[1] for a in args if a.startswith("--function="))
        inputs = [a.split("=", 1)[1] for a in args if a.startswith("--input=")]
        session = Session(self.vmfb, ["amdgpu"], registry=self.registry)
        try:
            device = session.device
            arg_chars, res_chars = session.cconv(function)
            values = [to_vm(v, ch, device)
                      for v, ch in zip(parse_inputs(inputs, arg_chars), arg_chars)]
            results = [from_vm(value, ch, device)
                       for value, ch in zip(session.context.call(function, values), res_chars)]
            if expected is not None:
                # Scalars ("scalar:TYPE=VALUE") are printed back for the test to compare; the
                # rest go through --expected_output's check.
                tensors = [i for i, spec in enumerate(expected) if not spec.startswith("scalar:")]
                ok, text = compare_expected([results[i] for i in tensors],
                                            [expected[i] for i in tensors],
                                            cconv="".join(res_chars[i] for i in tensors))
                self.expected = {"ok": ok, "text": text[-4000:],
                                 "scalars": [[i, format_results([results[i]]).split(": ", 1)[1]
                                              .strip()] for i in range(len(expected))
                                             if i not in tensors]}
        finally:
            session.close()

    def phase(self, phase_id: str, body) -> None:
        from amdgpu_cli.errors import AmdgpuCliError

        _emit(event="start", id=phase_id)
        self.recorder.dispatches.clear()
        self.expected = None
        error, repeated = None, None
        try:
            body()
        except DispatchBound as bound:
            repeated = json.loads(str(bound))
        except AmdgpuCliError as failure:
            error = failure.one_line()
        try:
            self.recorder.wait_all()
        except AmdgpuCliError as failure:
            error = error or f"waiting for the phase's submissions: {failure.one_line()}"
        lines, self.position = read_log(self.log_path, self.position)
        # A dispatch of zero workgroups launches nothing (an AQL grid dimension is at least 1).
        requests = [r for r in self.recorder.dispatches
                    if r.workgroup_count is None or all(r.workgroup_count)]
        problems = [] if repeated else match(requests, lines, self.recorder.allocations)
        _emit(event="done", id=phase_id, error=error, repeated=repeated, problems=problems,
              expected=self.expected,
              dispatches=[[r.kernel, line.entry["grid"], line.entry["workgroup"],
                           list(r.constants)] for r, line in zip(requests, lines)],
              unresolved_bindings=sum(b.address is None for r in requests for b in r.bindings))


def main(argv: list[str]) -> int:
    import faulthandler
    import signal

    # Every thread's stack on stderr when the test gives up on a silent phase (SIGUSR1 first).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    vmfb, softhsa_dir, log, cases = argv
    Worker(vmfb, softhsa_dir, Path(log)).run(json.loads(Path(cases).read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""LocalExecutable: a CPU executable library (embedded ELF) and the dispatches run on it.

Owns: loading an executable from ELF bytes (through `elf_loader`), the export list, argument
checking for a dispatch, and running it through the native helper over every workgroup — on the
calling thread, or on a `WorkerPool` (pthreads; the calling thread is worker 0) that by default
uses every core.

Dispatch contract (IREE runtime behaviour, /work/shared/reference/vmfb.md §5.1): bindings are
host memory whose base is 64-byte aligned (compiled kernels use aligned vector loads): addresses
and lengths of HAL buffers (`PreparedDispatch`), or C-contiguous numpy arrays for the direct
`dispatch` API (numpy is imported there only); `binding_ptrs[i]` / `binding_lengths[i]` are each
binding's address and byte size (never NULL: an empty binding points where its range starts, as
IREE's map_range gives it); `constants` are the dispatch's 32-bit push constants, as many as
the export's attributes declare. Exports flagged SEQUENTIAL run on one worker. A non-zero kernel
return raises `DispatchError`. The GIL is released while workgroups run; bindings must not be
resized or freed meanwhile (the call holds references to them until it returns).

Lifetime: `close()` / context manager; the library unmaps when the executable is closed or
collected. An executable made over a shared loaded image (LocalExecutableCache's persistent
cache, `release=`) has its own liveness: closing it releases its use of the image instead. The default pool lives for the process; a pool made by the caller is closed by it.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from amdgpu_cli.errors import AmdgpuCliError

from ._dispatch import ffi, lib
from .elf_loader import ElfLibrary, ExportInfo

if TYPE_CHECKING:
    import numpy as np

BINDING_ALIGNMENT = 64


class DispatchError(AmdgpuCliError):
    """A kernel returned a non-zero status from one of its workgroups."""

    status = "INTERNAL"


def _destroy_pool(handle) -> None:
    lib.lx_pool_destroy(handle)


class WorkerPool:
    """A persistent set of native worker threads; `worker_count` includes the dispatching thread."""

    def __init__(self, worker_count: int | None = None):
        count = worker_count if worker_count is not None else (os.cpu_count() or 1)
        if count < 1:
            raise AmdgpuCliError(f"worker count {count} must be at least 1")
        handle = lib.lx_pool_create(min(count, 255))
        if handle == ffi.NULL:
            raise AmdgpuCliError("could not create the CPU worker pool", status="RESOURCE_EXHAUSTED")
        self._handle = handle
        self._worker_count = int(lib.lx_pool_size(handle))  # fixed for the pool's life
        self._finalizer = weakref.finalize(self, _destroy_pool, handle)
        self._finalizer.atexit = False  # never join threads during interpreter shutdown

    @property
    def worker_count(self) -> int:
        return self._worker_count

    @property
    def handle(self):
        if not self._finalizer.alive:
            raise AmdgpuCliError("worker pool is closed", status="FAILED_PRECONDITION")
        return self._handle

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_default_pool: WorkerPool | None = None
_default_pool_lock = threading.Lock()


def default_pool() -> WorkerPool:
    """The process-wide pool (one worker per core), made on first use."""
    global _default_pool
    pool = _default_pool
    if pool is not None:
        return pool
    with _default_pool_lock:
        if _default_pool is None:
            _default_pool = WorkerPool()
        return _default_pool


def _u32(value: int, what: str) -> int:
    value = int(value)
    if not -(1 << 31) <= value < (1 << 32):
        raise AmdgpuCliError(f"{what} {value} does not fit in 32 bits")
    return value & 0xFFFFFFFF


class _ExportPlan:
    """What every dispatch of one export needs, computed once: its cffi function pointer, default
    workgroup size (None when out of range) and the attributes read on each call."""

    __slots__ = ("export", "name", "function", "size", "local_memory_size", "sequential",
                 "constant_count", "binding_count")

    def __init__(self, export: ExportInfo):
        self.export = export
        self.name = export.name
        self.function = ffi.cast("void*", export.address)
        size = tuple(max(v, 1) for v in export.workgroup_size)
        self.size = size if _valid_size(size) else None
        self.local_memory_size = export.local_memory_size
        self.sequential = export.sequential
        self.constant_count = export.constant_count
        self.binding_count = export.binding_count


def export_plans(library: ElfLibrary) -> list[_ExportPlan]:
    """The export plans of a loaded library (shareable: nothing in them changes)."""
    return [_ExportPlan(e) for e in library.exports]


def dispatch_failure(plan: _ExportPlan, status: int, result) -> AmdgpuCliError:
    """The error for a dispatch of `plan` that stopped with `status` (an lx_dispatch_result_t)."""
    if status == -1:
        return AmdgpuCliError(f"{plan.name}: could not allocate {plan.local_memory_size} bytes of "
                              "workgroup local memory", status="RESOURCE_EXHAUSTED")
    return DispatchError(f"{plan.name} returned {status} in workgroup "
                         f"({result.workgroup_id_x}, {result.workgroup_id_y}, {result.workgroup_id_z})")


def valid_workgroup_count(x: int, y: int, z: int) -> bool:
    """Whether a grid fits the dispatch state's fields (x, y: u32; z: u16)."""
    return 0 <= x < 1 << 32 and 0 <= y < 1 << 32 and 0 <= z < 1 << 16


def _check_workgroup_count(x: int, y: int, z: int) -> None:
    if not valid_workgroup_count(x, y, z):
        raise AmdgpuCliError(f"workgroup count {(x, y, z)} out of range (x, y < 2^32, z < 2^16)",
                             status="OUT_OF_RANGE")


def _valid_size(size) -> bool:
    return (len(size) == 3 and 0 < size[0] < 1 << 32 and 0 < size[1] < 1 << 32
            and 0 < size[2] < 1 << 16)


class _Liveness:
    """`alive` until an executable on a shared image is closed (as ElfLibrary.liveness)."""

    __slots__ = ("alive",)

    def __init__(self):
        self.alive = True


class LocalExecutable:
    """An executable library loaded into this process; `dispatch` runs one of its exports."""

    def __init__(self, library: ElfLibrary, *, pool: WorkerPool | None = None, plans=None,
                 release=None):
        """`library` is owned (closed with this executable) unless `release` is given: then it
        is a shared, immutable loaded image (see LocalExecutableCache), `plans` its export
        plans, and `close()` calls `release()` once instead of unmapping it."""
        self._library = library
        self._pool = pool
        self._plans = plans if plans is not None else export_plans(library)
        self._release = release
        self._live = library.liveness if release is None else _Liveness()

    @classmethod
    def from_elf(cls, data: bytes, *, executable_constants: Sequence[int] | None = None,
                 host_imports: Mapping[str, int] | None = None,
                 pool: WorkerPool | None = None) -> LocalExecutable:
        """Load an embedded-ELF (`embedded-elf-x86_64`) executable from its bytes."""
        return cls(ElfLibrary(data, executable_constants=executable_constants, host_imports=host_imports),
                   pool=pool)

    # -- queries ----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._library.name

    @property
    def closed(self) -> bool:
        return not self._live.alive

    @property
    def liveness(self):
        """`alive` is True until this executable is closed (ElfLibrary.liveness for an owned
        library)."""
        return self._live

    @property
    def pool(self) -> WorkerPool | None:
        """The pool given at load (None: the process's default pool when not serial)."""
        return self._pool

    @property
    def exports(self) -> list[ExportInfo]:
        return list(self._library.exports)

    @property
    def export_names(self) -> list[str]:
        return [e.name for e in self._library.exports]

    @property
    def imports(self) -> list[str]:
        return list(self._library.imports)

    def lookup(self, name: str) -> int:
        """The ordinal of the export named `name` (what `hal.executable.lookup.function` returns)."""
        for e in self._library.exports:
            if e.name == name:
                return e.ordinal
        raise AmdgpuCliError(f"executable {self.name!r} has no export named {name!r}", status="NOT_FOUND")

    # -- dispatch ---------------------------------------------------------------------------

    def dispatch(self, export_ordinal: int, workgroup_count: Sequence[int], constants: Sequence[int],
                 bindings: Sequence[np.ndarray], workgroup_size: Sequence[int] | None = None, *,
                 serial: bool = False) -> int:
        """Run export `export_ordinal` over the grid `workgroup_count` (x, y, z); returns workgroups run."""
        import numpy as np
        if not self._live.alive:
            raise AmdgpuCliError("executable is closed", status="FAILED_PRECONDITION")
        exports = self._library.exports
        if not 0 <= export_ordinal < len(exports):
            raise AmdgpuCliError(f"export ordinal {export_ordinal} out of range (count: {len(exports)})",
                                 status="OUT_OF_RANGE")
        export = exports[export_ordinal]
        count = [int(v) for v in workgroup_count]
        if len(count) != 3:
            raise AmdgpuCliError(f"workgroup count needs 3 values, got {len(count)}")
        _check_workgroup_count(*count)
        if len(constants) != export.constant_count:
            raise AmdgpuCliError(f"{export.name} takes {export.constant_count} constants, got {len(constants)}")
        if len(bindings) != export.binding_count:
            raise AmdgpuCliError(f"{export.name} takes {export.binding_count} bindings, got {len(bindings)}")
        size = list(workgroup_size) if workgroup_size is not None else [max(v, 1) for v in export.workgroup_size]
        if not _valid_size(size):
            raise AmdgpuCliError(f"workgroup size {tuple(size)} out of range")

        constant_values = [_u32(v, "constant") for v in constants]
        buffers = []
        pointers = ffi.new("void*[]", max(len(bindings), 1))
        lengths = ffi.new("size_t[]", max(len(bindings), 1))
        for i, array in enumerate(bindings):
            if not isinstance(array, np.ndarray):
                raise AmdgpuCliError(f"binding {i} must be a numpy array, got {type(array).__name__}")
            if not array.flags.c_contiguous:
                raise AmdgpuCliError(f"binding {i} must be C-contiguous")
            # An empty array is passed by address too (never NULL), as IREE maps empty ranges.
            buffer = ffi.from_buffer("uint8_t[]", array, require_writable=False)
            address = int(ffi.cast("uintptr_t", buffer))
            if array.nbytes and address % BINDING_ALIGNMENT:
                raise AmdgpuCliError(f"binding {i} at {address:#x} is not {BINDING_ALIGNMENT}-byte aligned")
            buffers.append(buffer)
            pointers[i] = buffer
            lengths[i] = array.nbytes
        result = self._launch(self._plans[export_ordinal], size, count,
                              ffi.new("uint32_t[]", constant_values or [0]), len(constant_values),
                              len(bindings), pointers, lengths, serial)
        del buffers  # kept alive until the native call returned
        return result

    def prepare(self, export_ordinal: int, constants: list[int]) -> PreparedDispatch:
        """Export `export_ordinal` with its u32 push `constants`, checked once: the form
        `LocalDevice` keeps for a recorded dispatch that runs many times (see PreparedDispatch)."""
        plans = self._plans
        if not 0 <= export_ordinal < len(plans):
            raise AmdgpuCliError(f"export ordinal {export_ordinal} out of range (count: {len(plans)})",
                                 status="OUT_OF_RANGE")
        plan = plans[export_ordinal]
        if len(constants) != plan.constant_count:
            raise AmdgpuCliError(f"{plan.name} takes {plan.constant_count} constants, got {len(constants)}")
        if plan.size is None:
            size = tuple(max(v, 1) for v in plan.export.workgroup_size)
            raise AmdgpuCliError(f"workgroup size {size} out of range")
        return PreparedDispatch(self, plan, constants)

    def _launch(self, plan: _ExportPlan, size, count, constants, constant_count: int,
                binding_count: int, pointers, lengths, serial: bool, *keep_alive,
                timed: bool = False):
        """Run `plan` over the grid; `constants` is a uint32_t[] of `constant_count` values.
        Returns the workgroups run, or with `timed` (workgroups, their summed run time in ns)."""
        pool = None if serial or plan.sequential else (self._pool or default_pool())
        state = ffi.new("iree_hal_executable_dispatch_state_v0_t*")
        state.workgroup_size_x, state.workgroup_size_y, state.workgroup_size_z = size
        state.constant_count = constant_count
        state.workgroup_count_x, state.workgroup_count_y, state.workgroup_count_z = count
        state.max_concurrency = pool.worker_count if pool is not None else 1
        state.binding_count = binding_count
        state.constants = constants
        state.binding_ptrs = pointers
        state.binding_lengths = lengths
        result = ffi.new("lx_dispatch_result_t*")
        status = lib.lx_dispatch(pool.handle if pool is not None else ffi.NULL, self._library.environment,
                                 plan.function, state, plan.local_memory_size, result,
                                 1 if timed else 0)
        if status:
            raise dispatch_failure(plan, status, result)
        del keep_alive
        if timed:
            return int(result.workgroups_run), int(result.tile_ns)
        return int(result.workgroups_run)

    # -- lifetime ---------------------------------------------------------------------------

    def close(self) -> None:
        live = self._live
        if live is self._library.liveness:  # owned
            self._library.close()
        elif live.alive:
            live.alive = False
            self._release()

    def __enter__(self) -> LocalExecutable:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class PreparedDispatch:
    """An export and its push constants, checked and converted to native form once.

    A command buffer recorded once is typically replayed on every call of a compiled function, and
    only the grid (for indirect dispatches) and the bindings' addresses change between replays, so
    `LocalDevice` keeps one of these per recorded (executable, export, constants) and `run` does
    the per-execution part only. Nothing in it is mutated by `run`: replays may run concurrently.
    """

    __slots__ = ("_executable", "_plan", "_constants", "_constant_count")

    def __init__(self, executable: LocalExecutable, plan: _ExportPlan, constants: list[int]):
        self._executable = executable
        self._plan = plan
        self._constants = ffi.new("uint32_t[]", constants or [0])
        self._constant_count = len(constants)

    def rebind(self, executable: LocalExecutable) -> PreparedDispatch:
        """This export and its native constants on `executable`, another executable over the
        same shared image (whose export plans this one's plan is): nothing is rechecked."""
        prepared = object.__new__(PreparedDispatch)
        prepared._executable = executable
        prepared._plan = self._plan
        prepared._constants = self._constants
        prepared._constant_count = self._constant_count
        return prepared

    @property
    def binding_count(self) -> int:
        return self._plan.binding_count

    @property
    def plan(self) -> _ExportPlan:
        return self._plan

    @property
    def executable(self) -> LocalExecutable:
        return self._executable

    def write_step(self, step, workgroup_count: Sequence[int], first_binding: int) -> None:
        """Fill `step` (an lx_step_t of a program) with this dispatch over `workgroup_count`,
        whose bindings start at `first_binding`; the step points into this object's constants,
        so the program must keep this object alive."""
        plan = self._plan
        step.function = plan.function
        step.environment = self._executable._library.environment
        step.constants = self._constants
        step.constant_count = self._constant_count
        step.binding_count = plan.binding_count
        step.sequential = bool(plan.sequential)
        step.local_memory_size = plan.local_memory_size
        step.workgroup_size = plan.size
        step.workgroup_count = tuple(workgroup_count)
        step.first_binding = first_binding

    def run(self, workgroup_count: Sequence[int], addresses: list[int], lengths: list[int], *,
            serial: bool = False, timed: bool = False):
        """Run over `workgroup_count` (x, y, z); `addresses` / `lengths` are the bindings'
        64-byte-aligned base addresses and byte sizes (an empty binding still has its
        address), as many as the export declares. The caller checked each range against its
        buffer and keeps the memory alive meanwhile. Returns the workgroups run (with `timed`:
        and their summed run time in ns, for profiling)."""
        executable = self._executable
        if not executable._live.alive:
            raise AmdgpuCliError("executable is closed", status="FAILED_PRECONDITION")
        plan = self._plan
        x, y, z = workgroup_count
        _check_workgroup_count(x, y, z)
        if len(addresses) != plan.binding_count or len(lengths) != plan.binding_count:
            raise AmdgpuCliError(f"{plan.name} takes {plan.binding_count} bindings, got "
                                 f"{len(addresses)} addresses and {len(lengths)} lengths")
        pointer_array = ffi.new("uintptr_t[]", addresses or [0])
        return executable._launch(plan, plan.size, (x, y, z), self._constants, self._constant_count,
                                  len(addresses), ffi.cast("void**", pointer_array),
                                  ffi.new("size_t[]", lengths or [0]), serial, pointer_array,
                                  timed=timed)

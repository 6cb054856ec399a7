"""ReplayProgram: a recorded command buffer replayed by one native call (`lx_program_run`).

Compiled modules record their command buffers once and execute them on every call with a fresh
binding table, so `LocalDevice` builds this form once per (command buffer, device): per dispatch
an `lx_step_t` (function, environment, push constants, workgroup size and count, local memory,
sequential flag) and per binding an `lx_step_binding_t` naming a *source* — a binding-table slot
or a direct buffer — plus its offset and length. At execution each source is resolved once
(`_resolve_source`: the same checks as the per-command path) into an address and a length, and
the helper runs every dispatch in order, each complete before the next (what the recorded
barriers ask for on an in-order queue).

Bounds: native code gets nothing it could read or write past. At build, every binding's offset
and length are non-negative and fit the helper's u64 fields, and each source's `needed` bytes
are the furthest any binding of it reaches (offset + length; offset for a whole-rest binding);
at execution a source shorter than that runs nothing here (the per-command path raises the
exact OUT_OF_RANGE). Workgroup counts and push-constant counts are checked at build (the
constants against the export, by `prepare_dispatch`), binding counts too. A zero-length binding
points at its source's address plus its offset, as IREE maps it.

Fast path only: a command buffer with anything else (fills, copies, updates, collectives,
indirect workgroup counts, a foreign executable, a dispatch that fails its checks) gets no
program (`build` returns None), and an execution whose sources need anything unusual (NULL or
short slot, unmappable or closed buffer, Buffer subclass, not 64-byte aligned, closed
executable) makes `run` return False before anything ran; the device then takes the
per-command path (`LocalDevice._dispatch`), which raises the exact errors at the exact point.
A kernel failure stops the program at its dispatch and raises what `LocalExecutable` raises.

Profiling: `run(..., times)` also times every dispatch natively (start, end, summed workgroup
time), so a profiled execution keeps the one-call form.

Lifetime: the program holds its PreparedDispatches (constants, plans) and executables; `run`
holds the sources' storage until the native call returns. Threading: nothing is mutated by
`run`, so a program may run from several threads; the pool runs one program at a time.
"""

from __future__ import annotations

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.buffer import Buffer
from amdgpu_cli.hal.command_buffer import (AdviseBufferCommand, DebugGroupCommand,
                                           DispatchCommand, ExecutionBarrierCommand)
from amdgpu_cli.hal.enums import WHOLE_BUFFER, HalError, MemoryAccess

from ._dispatch import ffi, lib
from .executable import (BINDING_ALIGNMENT, PreparedDispatch, default_pool, dispatch_failure,
                         valid_workgroup_count)
from .hal_executable import LocalHalExecutable

_ACCESS_ANY = int(MemoryAccess.ANY)
_U63 = 1 << 63  # offsets and lengths past this are not buffer ranges (and overflow the u64 sums)
_NO_WORK = (ExecutionBarrierCommand, DebugGroupCommand, AdviseBufferCommand)


class _NotReplayable(Exception):
    """A command buffer the program form does not cover (the per-command path runs it)."""


def _resolve_source(buffer, offset: int, length: int, needed: int):
    """(storage, address, length) of a binding source, or None when it needs the per-command
    path: the checks of map_range(ANY) and of the slot/ref ranges, and 64-byte alignment."""
    if type(buffer) is not Buffer:  # None, or a subclass with its own mapping
        return None
    try:
        storage, address, length = buffer.host_range(_ACCESS_ANY, offset, length)
    except HalError:
        return None
    if length < needed or address % BINDING_ALIGNMENT:
        return None
    return storage, address, length


class ReplayProgram:
    """The dispatches of one recorded command buffer in native form (see the module docstring)."""

    __slots__ = ("_steps", "_step_count", "_bindings", "_slots", "_direct", "_prepared",
                 "_executables", "_liveness", "_pool", "_results")

    def __init__(self, commands) -> None:
        dispatches = []
        for command in commands:
            if type(command) is DispatchCommand:
                dispatches.append(command)
            elif not isinstance(command, _NO_WORK):
                raise _NotReplayable(type(command).__name__)
        self._prepared = [self._prepare(command) for command in dispatches]
        executables = {id(p.executable): p.executable for p in self._prepared}
        self._executables = tuple(executables.values())
        self._liveness = tuple(e.liveness for e in self._executables)
        # Result structs for `run`, reused: a run takes one (a concurrent run makes another).
        self._results: list = []
        if len({id(e.pool) for e in self._executables}) > 1:
            raise _NotReplayable("executables on different pools")
        self._pool = self._executables[0].pool if self._executables else None
        refs = [ref for command in dispatches for ref in command.bindings]
        source_of = self._plan_sources(refs)

        self._bindings = ffi.new("lx_step_binding_t[]", max(len(refs), 1))
        for binding, ref, source in zip(self._bindings, refs, source_of):
            binding.source = source
            binding.whole = ref.length == WHOLE_BUFFER
            binding.offset = ref.offset
            binding.length = 0 if ref.length == WHOLE_BUFFER else ref.length
        self._step_count = len(dispatches)
        self._steps = ffi.new("lx_step_t[]", max(self._step_count, 1))
        first = 0
        for step, command, prepared in zip(self._steps, dispatches, self._prepared):
            prepared.write_step(step, command.workgroup_count, first)
            first += len(command.bindings)

    def _plan_sources(self, refs) -> list[int]:
        """Sets `_slots` ((slot, bytes needed), ...) and `_direct` ((buffer, bytes needed), ...),
        the sources in the order `run` resolves them; returns each ref's source index."""
        slot_needs: dict[int, int] = {}
        direct_needs: dict[int, list] = {}  # id(buffer) -> [buffer, bytes needed]
        for ref in refs:
            if not 0 <= ref.offset < _U63 or ref.offset % BINDING_ALIGNMENT or not (
                    0 <= ref.length < _U63 or ref.length == WHOLE_BUFFER):
                raise _NotReplayable("binding range")
            needed = ref.offset if ref.length == WHOLE_BUFFER else ref.offset + ref.length
            if ref.buffer is None:
                slot_needs[ref.slot] = max(slot_needs.get(ref.slot, 0), needed)
            else:
                entry = direct_needs.setdefault(id(ref.buffer), [ref.buffer, 0])
                entry[1] = max(entry[1], needed)
        self._slots = tuple(sorted(slot_needs.items()))
        self._direct = tuple((buffer, needed) for buffer, needed in direct_needs.values())
        slot_index = {slot: i for i, (slot, _) in enumerate(self._slots)}
        direct_index = {id(buffer): len(self._slots) + i for i, (buffer, _) in enumerate(self._direct)}
        return [slot_index[ref.slot] if ref.buffer is None else direct_index[id(ref.buffer)]
                for ref in refs]

    @staticmethod
    def _prepare(command: DispatchCommand) -> PreparedDispatch:
        executable = command.executable
        if command.workgroup_count_ref is not None or not isinstance(executable, LocalHalExecutable):
            raise _NotReplayable("indirect or foreign dispatch")
        if not valid_workgroup_count(*command.workgroup_count):
            raise _NotReplayable("workgroup count")
        try:
            prepared = executable.prepare_dispatch(command.entry_point, command.constants,
                                                   command.flags)
        except HalError as error:
            raise _NotReplayable(str(error)) from error
        if len(command.bindings) != prepared.binding_count:
            raise _NotReplayable("binding count")
        return prepared

    @classmethod
    def build(cls, commands) -> ReplayProgram | None:
        """The program of an ended command buffer's `commands`, or None when it needs the
        per-command path."""
        try:
            return cls(commands)
        except _NotReplayable:
            return None

    @property
    def step_count(self) -> int:
        return self._step_count

    def run(self, binding_table, serial: bool, times=None) -> bool:
        """Run every dispatch with `binding_table`; False (nothing ran) when a source or an
        executable needs the per-command path. Raises a kernel failure as LocalExecutable does.
        `times` (profiling): a `uint64_t[3 * step_count]` (`ffi.new`) that gets each dispatch's
        start, end (CLOCK_MONOTONIC ns, the clock of time.monotonic_ns) and summed workgroup
        time."""
        for liveness in self._liveness:
            if not liveness.alive:  # a closed executable: the per-command path raises it
                return False
        sources, keep_alive = [], []  # sources: address, length of each, interleaved
        table_size = len(binding_table)
        for slot, needed in self._slots:
            if slot >= table_size:
                return False
            buffer, offset, length = binding_table[slot]  # a Binding or the VM's plain tuple
            source = _resolve_source(buffer, offset, length, needed)
            if source is None:
                return False
            keep_alive.append(source[0])
            sources += source[1:]
        for buffer, needed in self._direct:
            source = _resolve_source(buffer, 0, WHOLE_BUFFER, needed)
            if source is None:
                return False
            keep_alive.append(source[0])
            sources += source[1:]
        if serial:
            pool_handle, concurrency = ffi.NULL, 1
        else:
            pool = self._pool or default_pool()
            try:
                pool_handle, concurrency = pool.handle, pool.worker_count
            except AmdgpuCliError:  # closed: the per-command path raises it at the right dispatch
                return False
        try:
            result = self._results.pop()  # atomic: each run has a struct of its own
        except IndexError:
            result = ffi.new("lx_dispatch_result_t*")
        status = lib.lx_program_run(pool_handle, concurrency, self._steps, self._step_count,
                                    self._bindings, ffi.new("uint64_t[]", sources or [0]), result,
                                    ffi.NULL if times is None else times)
        del keep_alive  # the sources' memory stayed referenced until the kernels returned
        if status:
            raise dispatch_failure(self._prepared[result.step].plan, status, result)
        self._results.append(result)
        return True

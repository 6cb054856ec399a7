"""LocalDevice: the CPU device of the `local-sync` / `local-task` drivers.

Owns: the executable cache (IREE's embedded-ELF loader: formats `embedded-elf-<arch>` of this
machine, loaded with `LocalExecutable.from_elf`), the HAL `Executable` face of a loaded library
(`LocalHalExecutable`), running recorded dispatches (direct and indirect) and the
`device.query.i64` answers of IREE's local devices. Everything else — queue ordering, fences,
transfers, barriers — is `HostQueueDevice`: queue work runs inline, in submission order, on the
calling thread.

Dispatch (IREE `hal/local/inline_command_buffer.c`): each binding ref is resolved (direct buffer or
binding-table slot; length -1 = rest) and mapped with access ANY; the kernel gets the byte view at
buffer base + offset and its resolved length. Constants must be 4-byte aligned and exactly the
export's declared count; the binding count must match too. Indirect dispatches read 3 x u32 from
the workgroup-count ref at execution time. The checks and native constants that depend only on
(export, constants, flags) are made once per executable (`prepare_dispatch`): replaying a
recorded command buffer redoes only the grid and the bindings. A reusable command buffer of
dispatches is replayed as one native program (program.py: every binding-table slot resolved
once, all dispatches in one call), built on its first execution; anything that program does not
cover runs command by command as above. `local-sync` runs every workgroup on the calling thread
(max_concurrency 1); `local-task` spreads them over the process's worker pool (a program step
whose last run was cheaper than waking a worker runs inline). A kernel failure is raised as
HalError INTERNAL, which `HostQueueDevice` turns into a failed signal fence.

Query answers (IREE `drivers/local_sync/sync_device.c`, `local_task/task_device.c`):
`hal.device.id` glob against the identifier; `hal.executable.format` 1 for formats the cache
accepts; `hal.device`/`concurrency` 1; `hal.dispatch`/`concurrency` 1 (sync) or the worker count
(task); `hal.cpu`/<llvm feature name> the CPU feature bit (x86_64 names); anything else ok=False.

Lifetime: an executable holds its library until `close()`; the device closes the executables its
cache made when it is closed. Threading: one submitter at a time (queue work is inline).
"""

from __future__ import annotations

import platform
import struct
from functools import partial

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.buffer import Buffer, allocated_buffer
from amdgpu_cli.hal.command_buffer import (CommandBuffer, DispatchCommand, check_binding_count,
                                           check_executable, resolve_ref, workgroup_count_source)
from amdgpu_cli.hal.device import HostQueueDevice
from amdgpu_cli.hal.enums import CommandBufferMode, HalError, MemoryAccess
from amdgpu_cli.hal.executable import ExecutableCache
from amdgpu_cli.hal.profiling import (MEMORY_EVENT_ID, MEMORY_FLAG_POOL_RESERVATION,
                                      MEMORY_FLAG_POOL_STATS, MEMORY_FLAG_QUEUE_OPERATION, Family,
                                      MemoryEvent, Op, memory_event, now_ns)

from .elf_loader import ElfLibrary
from .executable import (BINDING_ALIGNMENT, LocalExecutable, WorkerPool,
                         default_pool, export_plans)
from .hal_executable import LocalHalExecutable, hal_error, hal_exports, u32_list
from .pool import TransientPool
from .program import ReplayProgram

# IREE_ARCH spellings of the machines the embedded-ELF loader can run on (elf_loader: x86_64 only).
_ARCH_NAMES = {"x86_64": "x86_64", "amd64": "x86_64"}
HOST_ARCH = _ARCH_NAMES.get(platform.machine().lower(), platform.machine().lower())
EMBEDDED_ELF_PREFIX = f"embedded-elf-{HOST_ARCH}"
_LOADABLE_ARCHES = ("x86_64",)

# IREE schemas/cpu_feature_bits.inl, X86_64 rows: llvm name -> (processor.data word, bit).
X86_64_CPU_FEATURES = {
    "sse3": (0, 0), "ssse3": (0, 1), "sse4.1": (0, 2), "sse4.2": (0, 3), "sse4a": (0, 4),
    "avx": (0, 10), "fma": (0, 11), "fma4": (0, 12), "xop": (0, 13), "f16c": (0, 14),
    "avx2": (0, 15), "avx512f": (0, 20), "avx512cd": (0, 21), "avx512vl": (0, 22),
    "avx512dq": (0, 23), "avx512bw": (0, 24), "avx512ifma": (0, 25), "avx512vbmi": (0, 26),
    "avx512vpopcntdq": (0, 27), "avx512vnni": (0, 28), "avx512vbmi2": (0, 29),
    "avx512bitalg": (0, 30), "avx512bf16": (0, 31), "avx512fp16": (0, 32),
    "amx-tile": (0, 50), "amx-int8": (0, 51), "amx-bf16": (0, 52),
}

_cpu_data: tuple[int, ...] | None = None

_U32_MAX = 0xFFFFFFFF
# A pool event's flags: QUEUE_OPERATION | POOL_RESERVATION | POOL_STATS.
_POOL_EVENT_FLAGS = (MEMORY_FLAG_QUEUE_OPERATION | MEMORY_FLAG_POOL_RESERVATION
                     | MEMORY_FLAG_POOL_STATS)

_ONE_SHOT = int(CommandBufferMode.ONE_SHOT)
_ACCESS_ANY = int(MemoryAccess.ANY)
_ACCESS_WRITE = int(MemoryAccess.WRITE)


def cpu_data() -> tuple[int, ...]:
    """processor.data[0..7] as the native helper fills it for every executable environment."""
    global _cpu_data
    if _cpu_data is None:
        from ._dispatch import ffi, lib
        env = ffi.new("iree_hal_executable_environment_v0_t*")
        lib.lx_environment_init(env)
        _cpu_data = tuple(int(env.processor.data[i]) for i in range(8))
    return _cpu_data


def _binding_addresses(bindings):
    """(addresses, lengths, keep_alive, write_back) of (buffer, offset, length) bindings.

    The same checks and results as `_stage_misaligned`, without numpy views for the usual case:
    a plain `Buffer`'s address is its storage's base address plus offsets, and only a binding that
    is not 64-byte aligned (or of a Buffer subclass) takes `_stage_misaligned`'s path. A
    zero-length binding gets the address of its (empty) range, as IREE's map_range gives it:
    never NULL, which a kernel that ignores binding lengths would dereference.
    """
    addresses, lengths, keep_alive, write_back = [], [], [], []
    for binding in bindings:
        buffer, offset, length = binding
        if type(buffer) is Buffer:
            # map_range(ANY, offset, length)'s checks, then the address of the range.
            storage, address, length = buffer.host_range(_ACCESS_ANY, offset, length)
            if not length or not address % BINDING_ALIGNMENT:
                addresses.append(address)
                lengths.append(length)
                keep_alive.append(storage)
                continue
        views, staged_back = _stage_misaligned((binding,))
        view = views[0]
        write_back.extend(staged_back)
        keep_alive.append(view)
        addresses.append(view.ctypes.data)
        lengths.append(view.nbytes)
    return addresses, lengths, keep_alive, write_back


def _stage_misaligned(bindings):
    """Kernel views of (buffer, offset, length) bindings, and the (target, staged) copies to write back.

    IREE passes base + offset as is; compiled kernels use aligned vector loads, and
    LocalExecutable.dispatch refuses pointers that are not 64-byte aligned rather than fault.
    Buffers imported from host bytes (rodata held in a Python `bytes`) or subspans at odd offsets
    can be unaligned, so such a binding runs on an aligned copy that is written back afterwards
    when the buffer is writable. (Overlapping writable bindings of one allocation would not see
    each other's writes; compiled code does not produce those at unaligned offsets.) A rare
    path: its views are numpy arrays (map_range), so numpy is imported here.
    """
    from amdgpu_cli.hal.allocator import aligned_storage
    views, write_back = [], []
    for buffer, offset, length in bindings:
        # Access ANY, as IREE maps dispatch bindings: the view may be flagged read-only but it
        # is the buffer's own storage.
        view = buffer.map_range(MemoryAccess.ANY, offset, length)
        if view.nbytes and view.ctypes.data % BINDING_ALIGNMENT:
            staged = aligned_storage(view.nbytes, BINDING_ALIGNMENT)
            staged[...] = view
            if buffer._allowed_access & _ACCESS_WRITE:
                write_back.append((buffer.map_range(MemoryAccess.WRITE, offset, length), staged))
            view = staged
        views.append(view)
    return views, write_back


class _LoadedImage:
    """One loaded, relocated and queried ELF library shared by every executable prepared from
    the same (format, bytes, constants): never written after loading, so any number of
    executables (and threads) may dispatch from it."""

    __slots__ = ("library", "plans", "exports", "prepared", "refs", "cached", "cost")

    def __init__(self, library, plans, exports, cost: int):
        self.library = library  # ElfLibrary
        self.plans = plans  # its _ExportPlans (immutable)
        self.exports = exports  # the HAL ExportInfo tuple
        self.prepared: dict = {}  # checked PreparedDispatches by key (LocalHalExecutable)
        self.refs = 0  # live executables on it
        self.cached = True
        self.cost = cost


class _ImageCache:
    """The loaded images of a device's executable caches (see LocalExecutableCache), keyed by
    (format, full executable bytes, executable constants), least recently used first. An image
    is unmapped when it is neither cached nor used by a live executable (or, for executables
    dropped without `close()`, when the last reference to it is collected)."""

    MAX_ENTRIES = 32
    MAX_BYTES = 128 << 20  # mapped image + key bytes

    def __init__(self):
        import threading
        from collections import OrderedDict
        self._entries: OrderedDict = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def acquire(self, key, load) -> _LoadedImage:
        """The cached image of `key` (moved to most recent), else `load()`'s (raising as it
        does; a failed load caches nothing); its reference count taken."""
        with self._lock:
            image = self._entries.get(key)
            if image is not None:
                self._entries.move_to_end(key)
                image.refs += 1
                return image
        image = load()
        with self._lock:
            raced = self._entries.get(key)
            if raced is not None:  # another thread loaded it meanwhile: use one image
                raced.refs += 1
                image.library.close()
                return raced
            image.refs = 1
            self._entries[key] = image
            self._bytes += image.cost
            while len(self._entries) > self.MAX_ENTRIES or (
                    self._bytes > self.MAX_BYTES and len(self._entries) > 1):
                _, old = self._entries.popitem(last=False)
                self._drop(old)
            return image

    def _drop(self, image: _LoadedImage) -> None:
        self._bytes -= image.cost
        image.cached = False
        if image.refs == 0:
            image.library.close()

    def release(self, image: _LoadedImage) -> None:
        """An executable on `image` was closed."""
        with self._lock:
            image.refs -= 1
            if image.refs == 0 and not image.cached:
                image.library.close()

    def clear(self) -> None:
        with self._lock:
            entries = list(self._entries.values())
            self._entries.clear()
            for image in entries:
                self._drop(image)


class LocalExecutableCache(ExecutableCache):
    """IREE's local executable cache with the embedded-ELF loader for this machine's arch.

    Persistent caching (as IREE's HAL lets an executable cache do): the loaded image of an
    executable — mapped, relocated, protected, initialized and queried — is kept by the device
    (`_ImageCache`, shared by its caches, bounded to the most recent 32 images and 128 MiB) and
    reused by every later preparation of the same format, the same full executable bytes and the
    same executable constants (a dict key: equal hashes never stand in for equal bytes, so a
    different executable never hits). The image is immutable once loaded; each prepared
    executable is its own object (own liveness, prepared dispatches and close) over it. An image
    is unmapped once it is evicted (or the device closes) and no live executable uses it. Load
    failures are not cached.
    """

    def can_prepare_format(self, executable_format: str) -> bool:
        # iree_hal_embedded_elf_loader_query_support: a prefix match on "embedded-elf-" IREE_ARCH.
        return HOST_ARCH in _LOADABLE_ARCHES and str(executable_format).startswith(
            EMBEDDED_ELF_PREFIX)

    def prepare_executable(self, executable_format: str, data, constants=()) -> LocalHalExecutable:
        if isinstance(executable_format, (bytes, bytearray, memoryview)):
            executable_format = bytes(executable_format).decode("utf-8", "replace")
        if not self.can_prepare_format(executable_format):
            raise HalError(f"no executable loader registered for the given executable format "
                           f"'{executable_format}'", status="NOT_FOUND")
        values = u32_list(constants, "executable constant data")
        device = self.device
        pool = getattr(device, "pool", None)
        if type(data) is not bytes:
            data = bytes(memoryview(data).cast("B"))
        images = getattr(device, "_images", None)
        try:
            if images is None:
                library = LocalExecutable.from_elf(data, executable_constants=values, pool=pool)
                exports = None
            else:
                image = images.acquire((executable_format, data, tuple(values)),
                                       lambda: _load_image(data, values))
                library = LocalExecutable(image.library, pool=pool, plans=image.plans,
                                          release=partial(images.release, image))
                exports = image.exports
                shared = image.prepared
        except HalError:
            raise
        except AmdgpuCliError as error:
            raise hal_error(error, "loading executable: ") from error
        executable = LocalHalExecutable(device, library, executable_format, exports,
                                        None if images is None else shared)
        if device is not None and hasattr(device, "_track_executable"):
            device._track_executable(executable)
        return executable


def _load_image(data: bytes, values) -> _LoadedImage:
    library = ElfLibrary(data, executable_constants=values)
    try:
        plans = export_plans(library)
        return _LoadedImage(library, plans, hal_exports(library.exports),
                            library.size + len(data))
    except BaseException:
        library.close()
        raise


class LocalDevice(HostQueueDevice):
    """One CPU device; `identifier` is the driver name (`local-sync` or `local-task`)."""

    identifier = "local-sync"

    def __init__(self, identifier: str = "local-sync", *, worker_count: int | None = None,
                 allocator=None):
        super().__init__(identifier, allocator=allocator)
        self.serial = identifier != "local-task"
        self._own_pool = False
        self._pool: WorkerPool | None = None
        if not self.serial and worker_count is not None:
            self._pool = WorkerPool(worker_count)
            self._own_pool = True
        self._executables: list = []
        self._images = _ImageCache()  # loaded executable images (LocalExecutableCache)
        self._cache = LocalExecutableCache(self, "default")
        # local-task: queue allocations come from a transient pool, and a profile records what
        # IREE's local-task device does (command-buffer metadata and regions, pool events).
        self._transients = None if self.serial else TransientPool()
        self._profile_command_buffers = not self.serial

    # -- properties -----------------------------------------------------------------------------
    @property
    def pool(self) -> WorkerPool | None:
        """The worker pool dispatches run on (None for local-sync: the calling thread)."""
        if self.serial:
            return None
        if self._pool is None:
            self._pool = default_pool()
        return self._pool

    @property
    def worker_count(self) -> int:
        return 1 if self.serial else self.pool.worker_count

    def create_executable_cache(self, identifier: str = "default") -> LocalExecutableCache:
        if identifier == "default":
            return self._cache
        return LocalExecutableCache(self, identifier)

    def _track_executable(self, executable) -> None:
        import weakref
        self._executables = [r for r in self._executables if r() is not None]
        self._executables.append(weakref.ref(executable))

    # -- queries --------------------------------------------------------------------------------
    def query_i64(self, category: str, key: str) -> tuple[bool, int]:
        category, key = str(category), str(key)
        if category in ("hal.device.id", "hal.executable.format"):
            return super().query_i64(category, key)
        if category == "hal.device" and key == "concurrency":
            return True, 1
        if category == "hal.dispatch" and key == "concurrency":
            return True, self.worker_count
        if category == "hal.cpu" and HOST_ARCH == "x86_64" and key in X86_64_CPU_FEATURES:
            word, bit = X86_64_CPU_FEATURES[key]
            return True, (cpu_data()[word] >> bit) & 1
        return False, 0

    @property
    def _profile_worker_count(self) -> int:
        return self.worker_count

    # -- transient allocations (local-task) -----------------------------------------------------
    def queue_alloca(self, queue_affinity, wait, signal, memory_type, usage, byte_length, pool=0,
                     flags=0):
        if self._transients is None:
            return super().queue_alloca(queue_affinity, wait, signal, memory_type, usage,
                                        byte_length, pool, flags)
        if pool != 0:
            raise HalError(f"allocation pool {pool} is not supported", status="UNIMPLEMENTED")
        if self.profiler is not None:
            return self._profiled(Op.ALLOCA, queue_affinity, wait, signal, self._pool_alloca,
                                  (memory_type, usage, byte_length), payload_length=byte_length)
        return self._submit(queue_affinity, wait, signal, self._pool_alloca, memory_type, usage,
                            byte_length)

    def queue_dealloca(self, queue_affinity, wait, signal, buffer, flags=0):
        if self._transients is None:
            return super().queue_dealloca(queue_affinity, wait, signal, buffer, flags)
        if self.profiler is not None:
            return self._profiled(Op.DEALLOCA, queue_affinity, wait, signal, self._pool_dealloca,
                                  (buffer,), payload_length=buffer.byte_length)
        return self._submit(queue_affinity, wait, signal, self._pool_dealloca, buffer)

    def _pool_alloca(self, memory_type, usage, byte_length):
        memory_type, usage = self._allocator.resolve(memory_type, usage, byte_length)
        pool = self._transients
        reservation = pool.reserve(byte_length)
        # Not an allocation of the device allocator: its statistics count none of the pool's
        # transients, as IREE's count none of its queue pool's.
        buffer = allocated_buffer(pool.storage(reservation, byte_length), reservation.address,
                                  memory_type, usage, None)
        buffer._transient = reservation  # dropping the buffer releases the reservation
        if self.profiler is not None:
            self._pool_events(reservation, buffer, (
                (MemoryEvent.POOL_RESERVE, reservation.length),
                (MemoryEvent.POOL_MATERIALIZE, reservation.length),
                (MemoryEvent.QUEUE_ALLOCA, byte_length)), result=1 if reservation.fresh else 0)
        return buffer

    def _pool_dealloca(self, buffer) -> None:
        reservation = getattr(buffer, "_transient", None)
        if reservation is None or reservation.released:
            return  # not a queue allocation of this device: nothing to give back
        self._transients.release(reservation)
        if self.profiler is not None:
            self._pool_events(reservation, buffer, (
                (MemoryEvent.QUEUE_DEALLOCA, reservation.length),
                (MemoryEvent.POOL_RELEASE, reservation.length)), dealloca=True)

    def _pool_events(self, reservation, buffer, events, *, result=_U32_MAX,
                     dealloca=False) -> None:
        """Under a capture: the queue operation's allocation id, and with memory-events the
        pool's events of it ((type, length) each), with the pool's statistics after it. A
        dealloca's events count its waits as frontier entries."""
        recorder, operation = self.profiler, self._profile_op
        operation.allocation_id = reservation.profile_id
        if not recorder.families & Family.MEMORY_EVENTS:
            return
        frontier = operation.wait_count if dealloca else 0
        stats = self._transients.stats()
        for event_type, length in events:
            recorder.append("memory-events", memory_event(
                event_type, flags=_POOL_EVENT_FLAGS, result=result, host_time_ns=now_ns(),
                allocation_id=reservation.profile_id, pool_id=id(self._transients),
                backing_id=reservation.address, submission_id=operation.submission,
                frontier_entry_count=frontier, memory_type=buffer._memory_type,
                buffer_usage=buffer._allowed_usage, offset=reservation.offset, length=length,
                alignment=1, pool_stats=stats), MEMORY_EVENT_ID)

    # -- dispatch -------------------------------------------------------------------------------
    def _execute(self, command_buffer: CommandBuffer, binding_table) -> None:
        """All dispatches in one native call (ReplayProgram) when the buffer and this binding
        table allow it; otherwise command by command. One-shot buffers run command by command:
        building a program costs about one per-command execution, repaid only by replays."""
        program = self._program(command_buffer)
        if program is not None:
            try:
                if program.run(binding_table, self.serial):
                    return
            except AmdgpuCliError as error:
                raise hal_error(error) from error
        super()._execute(command_buffer, binding_table)

    def _program(self, command_buffer: CommandBuffer) -> ReplayProgram | None:
        """The command buffer's native program on this device, built on first use (None: it
        runs command by command)."""
        cached = command_buffer.replay
        if cached is not None and cached[0] is self:
            return cached[1]
        program = None if command_buffer.mode & _ONE_SHOT else ReplayProgram.build(
            command_buffer.commands)
        command_buffer.replay = (self, program)
        return program

    def _timed_program(self, command_buffer: CommandBuffer, binding_table):
        """A profiled execution in one native call: start, end and summed workgroup ns of each
        dispatch (a flat list), or None when it must run command by command."""
        program = self._program(command_buffer)
        if program is None:
            return None
        from ._dispatch import ffi

        times = ffi.new("uint64_t[]", 3 * max(program.step_count, 1))
        try:
            if not program.run(binding_table, self.serial, times):
                return None
        except AmdgpuCliError as error:
            raise hal_error(error) from error
        return ffi.unpack(times, 3 * program.step_count)

    def _dispatch(self, command: DispatchCommand, binding_table) -> None:
        self._run_dispatch(command, binding_table, False)

    def _dispatch_profiled(self, command: DispatchCommand, binding_table):
        return self._run_dispatch(command, binding_table, True)

    def _run_dispatch(self, command: DispatchCommand, binding_table, timed: bool):
        """Runs one dispatch; with `timed`, returns (its workgroup count, its workgroups' summed
        run time in ns)."""
        executable = command.executable
        check_executable(executable, LocalHalExecutable, "a local")
        prepared = executable.prepare_dispatch(command.entry_point, command.constants,
                                               command.flags)

        if command.workgroup_count_ref is not None:
            buffer, offset = workgroup_count_source(command.workgroup_count_ref, binding_table)
            x, y, z = struct.unpack("<3I", buffer.read(offset, 12))
            workgroup_count = (x, y, z & 0xFFFF)
        else:
            workgroup_count = command.workgroup_count

        check_binding_count(prepared.binding_count, len(command.bindings))

        resolved = []
        for i, ref in enumerate(command.bindings):
            buffer, offset, length = resolve_ref(ref, binding_table)
            if buffer is None:
                raise HalError(f"required binding {i} is NULL; all bindings must have a valid "
                               f"pointer", status="FAILED_PRECONDITION")
            resolved.append((buffer, offset, length))

        if not workgroup_count[0] or not workgroup_count[1] or not workgroup_count[2]:
            # an empty grid runs nothing (IREE's workgroup loops do not iterate)
            return (tuple(workgroup_count), 0) if timed else None
        addresses, lengths, keep_alive, write_back = _binding_addresses(resolved)
        try:
            ran = prepared.run(workgroup_count, addresses, lengths, serial=self.serial,
                               timed=timed)
        except HalError:
            raise
        except AmdgpuCliError as error:
            raise hal_error(error) from error
        del keep_alive  # the bindings' memory stayed referenced until the kernel returned
        for target, staged in write_back:
            target[...] = staged
        if timed:
            return tuple(workgroup_count), ran[1]
        return None

    # -- lifetime -------------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        for ref in self._executables:
            executable = ref()
            if executable is not None:
                executable.close()
        self._executables = []
        self._images.clear()
        if self._own_pool and self._pool is not None:
            self._pool.close()
        self._pool = None
        super().close()

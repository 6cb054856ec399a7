"""The cuda logical device: one CUDA device, its primary context and one stream.

Creation follows IREE's `cuda_device.c` (reference replay-benchmark-cuda.md §3.4):
`cuDevicePrimaryCtxRetain`, `cuCtxSetCurrent`, one `cuStreamCreate(CU_STREAM_NON_BLOCKING)` used
for everything; teardown destroys the stream and releases the primary context. The context is
made current (`bind`) before CUDA calls, so any thread may use the device; each thread remembers
the context it last made current (`_bound`), so a bind that would change nothing is no call.

Queues: asynchronous and in order on the one stream, HostQueueDevice's operations (hal/device.py)
with `_submit` replaced. An operation whose wait fence is met — reached, or signalled by work
already issued on this stream (stream order meets it) — is issued at once, holding the stream
lock, and returns: a CUDA event recorded after its work signals its signal fence when the GPU
gets there (completion.py: the waiter that needs it synchronizes that event, no thread
hand-off). Any other wait parks the operation on its semaphores (`notify_at`) and it is issued
by whoever signals the last of them, so the caller never blocks; a failed wait fails the signal
fence with that error. An error issuing work fails the signal fence and is raised; an error the
GPU reports later fails the fences of everything in flight. queue_alloca returns its buffer at
once: its device memory comes from the stream's pool (cuMemAllocAsync, ordered on the stream;
allocator.py), and an alloca whose wait stream order cannot meet waits for it on the host.
dealloca of a queue_alloca buffer frees it in stream order (cuMemFreeAsync). Host memory an
async copy reads stays referenced until its event completed. Synchronous host access to
device-only memory (`copy_to_host`, `copy_from_host`) synchronizes the stream.
Profiling (IREE's CUDA driver has none, §3.12): queue and memory events from the host, as
`HostQueueDevice` records them; dispatch and device-queue events timed on the GPU with CUDA
events around each launch / queue operation, command-buffer and executable metadata
(profiling.py says what it writes and how ticks and clocks are made).
`query_i64`: `hal.device.id` against "cuda", `hal.executable.format` true only for
`cuda-nvptx-fb`, `cuda.device` :: `compute_capability_major`/`_minor`.

Lifetime: `close()` completes the work in flight, synchronizes the stream, unloads the executables, frees every allocation,
destroys the stream and releases the primary context (idempotent); a finalizer that captures
only libcuda, the device ordinal and the stream does the last two if `close()` never ran.
"""

from __future__ import annotations

import threading
import weakref

from amdgpu_cli.drivers.cuda import command_buffer as stream_ops
from amdgpu_cli.drivers.cuda.allocator import CudaAllocator, device_pointer
from amdgpu_cli.drivers.cuda.cuda_ffi import CU_STREAM_NON_BLOCKING, CudaError
from amdgpu_cli.drivers.cuda.executable import CudaExecutableCache
from amdgpu_cli.drivers.cuda.completion import StreamCompletion
from amdgpu_cli.hal.device import HostQueueDevice
from amdgpu_cli.hal.enums import HalError, normalize_queue_affinity
from amdgpu_cli.hal.profiling import Op


_bound = threading.local()  # .context: the CUcontext this thread last made current through bind


def _release(libcuda, cudevice: int, context, stream) -> None:
    """Finalizer backstop: destroy the stream, release the primary context (errors ignored)."""
    try:
        libcuda.lib.cuCtxSetCurrent(context)
        libcuda.lib.cuStreamDestroy_v2(stream)
        libcuda.lib.cuDevicePrimaryCtxRelease_v2(cudevice)
    except Exception:  # never raise from a finalizer
        pass


class CudaDevice(HostQueueDevice):
    identifier = "cuda"
    stream_work = 0  # stream operations the host could observe, issued so far (command_buffer.py)

    member_index = 0  # this GPU's place in a several-GPU device (queue affinity bit)
    peers: tuple = ()  # the other GPUs of a several-GPU device (this one is the first)

    def __init__(self, libcuda, cudevice: int, *, name: str = "", uuid: str = "",
                 use_streams: bool = False, pools: bool = True):
        self.libcuda = libcuda
        self.cudevice = cudevice
        # Reusable command buffers as CUDA graphs (command_buffer.py) unless streams are asked.
        self.use_graphs = not use_streams
        self._graphs: dict[int, dict] = {}  # id(command buffer) -> {graph key: CUgraphExec}
        self.name = name
        self.uuid = uuid
        self.context_released = True
        self._stream_lock = threading.RLock()
        self._pending: list = []
        self._executables: list[weakref.ref] = []
        lib = libcuda
        self.context = lib.out("CUcontext", "cuDevicePrimaryCtxRetain", cudevice)
        try:
            lib.call("cuCtxSetCurrent", self.context)
            self.stream = lib.out("CUstream", "cuStreamCreate", CU_STREAM_NON_BLOCKING)
        except BaseException:
            lib.lib.cuDevicePrimaryCtxRelease_v2(cudevice)
            raise
        self.context_released = False
        self._finalizer = weakref.finalize(self, _release, libcuda, cudevice, self.context,
                                           self.stream)
        self._finalizer.atexit = False
        try:
            attribute = lambda name: lib.attribute(cudevice, name)  # noqa: E731
            self.max_block_dims = (attribute("MAX_BLOCK_DIM_X"), attribute("MAX_BLOCK_DIM_Y"),
                                   attribute("MAX_BLOCK_DIM_Z"))
            self.max_block_shared_memory_size = attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
            self.compute_capability = (attribute("COMPUTE_CAPABILITY_MAJOR"),
                                       attribute("COMPUTE_CAPABILITY_MINOR"))
            managed = bool(attribute("MANAGED_MEMORY")
                           and attribute("CONCURRENT_MANAGED_ACCESS"))
            pools = pools and bool(attribute("MEMORY_POOLS_SUPPORTED"))
            super().__init__("cuda", allocator=CudaAllocator(self, libcuda, managed=managed,
                                                             pools=pools))
            self._completion = StreamCompletion(self)
            self._cache = CudaExecutableCache(self, "default")
        except BaseException:
            self._finalizer()
            self.context_released = True
            raise

    def __repr__(self) -> str:
        return f"<CudaDevice {self.cudevice} {self.uuid} {self.name!r}>"

    # -- context and stream ---------------------------------------------------------------------
    def bind(self) -> None:
        """Make this device's context current on the calling thread."""
        if self.context_released:
            raise HalError("device is closed", status="FAILED_PRECONDITION")
        if getattr(_bound, "context", None) is not self.context:
            self.libcuda.call("cuCtxSetCurrent", self.context)
            _bound.context = self.context

    def _synchronize(self) -> None:
        try:
            self.libcuda.call("cuStreamSynchronize", self.stream)
        finally:
            self._pending.clear()

    def _on_stream(self, work, args):
        """Run `work(*args)` (which issues on the stream) and wait for the stream to drain."""
        with self._stream_lock:
            self.bind()
            try:
                result = work(*args)
            except BaseException:
                try:
                    self._synchronize()
                except CudaError:
                    pass  # the first error is the one to report
                raise
            self._synchronize()
            return result

    def memset_zero(self, pointer: int, size: int) -> None:
        """Zero device memory, ordered on the stream before any later use (no wait)."""
        with self._stream_lock:
            self.bind()
            stream_ops.issue_fill(self, pointer, size, b"\0")

    def copy_to_host(self, pointer: int, out) -> None:
        """Copy device memory at `pointer` into the writable buffer `out` (synchronously)."""
        target = memoryview(out).cast("B")

        def work():
            host = self.libcuda.ffi.from_buffer(target)
            self.libcuda.call("cuMemcpyDtoHAsync_v2", host, pointer, target.nbytes, self.stream)

        self._on_stream(work, ())

    def copy_from_host(self, pointer: int, data) -> None:
        """Copy host bytes to device memory at `pointer` (synchronously)."""
        self._on_stream(stream_ops.issue_update, (self, pointer, data, self._pending))

    # -- several GPUs ------------------------------------------------------------------------
    def add_peers(self, peers) -> None:
        """Makes this device the first of several GPUs: `peers` (CudaDevices of the other GPUs,
        made without stream-ordered pools, whose memory other GPUs cannot reach without more
        set-up) take the queue work whose affinity selects them, every GPU may access every
        other's memory (`cuCtxEnablePeerAccess` both ways), and executables load on all."""
        from amdgpu_cli.drivers.cuda.cuda_ffi import CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED

        if not peers:
            return
        members = [self, *peers]
        lib = self.libcuda
        for i, member in enumerate(members):
            member.member_index = i
        for member in members:
            member.bind()
            for other in members:
                if other is member:
                    continue
                if not lib.out("int", "cuDeviceCanAccessPeer", member.cudevice, other.cudevice):
                    raise HalError(f"CUDA devices {member.cudevice} and {other.cudevice} cannot "
                                   "access each other's memory; they cannot form one device",
                                   status="UNAVAILABLE")
                result = lib.lib.cuCtxEnablePeerAccess(other.context, 0)
                if result not in (0, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED):
                    raise lib.error("cuCtxEnablePeerAccess", result)
        self.peers = tuple(peers)
        if self._allocator.pools:
            self._allocator.pools = False

    def _member(self, queue_affinity):
        """The GPU a queue affinity selects: its lowest bit (bit i: the i-th GPU); ANY (-1)
        selects the first."""
        count = 1 + len(self.peers)
        mask = normalize_queue_affinity(queue_affinity) & ((1 << count) - 1)
        if not mask:
            raise HalError(f"queue affinity 0x{normalize_queue_affinity(queue_affinity):x} "
                           f"selects none of the {count} GPUs of this device",
                           status="INVALID_ARGUMENT")
        index = (mask & -mask).bit_length() - 1
        return self if index == 0 else self.peers[index - 1]

    def graphs_of(self, command_buffer) -> dict:
        """The captured graphs of a command buffer (destroyed with it, or at close)."""
        graphs = self._graphs.get(id(command_buffer))
        if graphs is None:
            graphs = self._graphs[id(command_buffer)] = {}
            weakref.finalize(command_buffer, self._drop_graphs, id(command_buffer))
        return graphs

    def _drop_graphs(self, key: int) -> None:
        graphs = self._graphs.pop(key, None)
        if graphs and not self.context_released:
            with self._stream_lock:
                self.bind()
                for graph_exec in graphs.values():
                    self.libcuda.lib.cuGraphExecDestroy(graph_exec)

    # -- resources ------------------------------------------------------------------------------
    @property
    def allocator(self) -> CudaAllocator:
        self._check_open()
        return self._allocator

    def create_executable_cache(self, identifier: str = "default") -> CudaExecutableCache:
        self._check_open()
        return self._cache if identifier == "default" else CudaExecutableCache(self, identifier)

    def _track(self, executable) -> None:
        self._executables = [ref for ref in self._executables if ref() is not None]
        self._executables.append(weakref.ref(executable))

    def _check_open(self) -> None:
        if self._closed:
            raise HalError("device is closed", status="FAILED_PRECONDITION")

    def query_i64(self, category: str, key: str) -> tuple[bool, int]:
        if category == "cuda.device":
            if key == "compute_capability_major":
                return True, self.compute_capability[0]
            if key == "compute_capability_minor":
                return True, self.compute_capability[1]
            return False, 0
        return super().query_i64(category, key)

    # -- profiling (profiling.py) ---------------------------------------------------------------
    _profile_command_buffers = True  # command-buffers / command-operations, ops counted per cb

    def profiling_check(self, options) -> None:
        from amdgpu_cli.drivers.cuda import profiling

        profiling.check(options)
        if self.peers:
            raise HalError("CUDA profiling of a device of several GPUs is not supported",
                           status="UNIMPLEMENTED")

    def profiling_begin(self, options, sink) -> None:
        from amdgpu_cli.drivers.cuda.profiling import CudaRecorder

        self.profiling_check(options)
        recorder = CudaRecorder(sink, self, options, session_id=self._profile_session_start())
        recorder.begin_cuda()
        self._profile_metadata = True
        self.profiler = recorder

    def _profile_executable(self, recorder, executable) -> int:
        return recorder.record_cuda_executable(executable)

    def _execute_timed(self, recorder, command_buffer, binding_table) -> None:
        """A command buffer with an event pair around each selected dispatch."""
        from amdgpu_cli.hal.command_buffer import DispatchCommand

        operation = self._profile_op
        launches = stream_ops.launch_cache(command_buffer)
        for index, command in enumerate(command_buffer.commands):
            if isinstance(command, DispatchCommand) and command.workgroup_count is not None \
                    and all(command.workgroup_count):
                pair = recorder.dispatch(operation, command, index)
                stream_ops.issue_dispatch(self, command, binding_table, launches, index)
                if pair is not None:
                    recorder.dispatch_done(pair)
            else:
                stream_ops.issue_command(self, command, binding_table, self._pending, launches,
                                         index)

    # -- queue operations (HostQueueDevice's, issued on the stream) -------------------------------
    def _met(self, wait) -> bool:
        """Whether every timepoint of `wait` is reached or will be by work already issued on
        this stream (which runs in order before anything issued now)."""
        completion = self._completion
        for semaphore, value in wait._timepoints.items():
            if semaphore._value < value and completion.issued(semaphore) < value:
                return False
        return True

    def _submit(self, queue_affinity, wait, signal, work, *args):
        if queue_affinity.__class__ is not int:  # compiled code passes ints: nothing to check
            normalize_queue_affinity(queue_affinity)
        if self._closed:
            raise HalError("device is closed", status="FAILED_PRECONDITION")
        if self.peers:
            member = self._member(queue_affinity)
            if member is not self:  # the work of another GPU: its method, its stream
                if getattr(work, "__self__", None) is self:
                    work = getattr(member, work.__func__.__name__)
                return member._submit(-1, wait, signal, work, *args)
        operation = self._profile_op
        if wait is not None and wait._timepoints:
            failure = wait.failure
            if failure is not None:
                if signal is not None:
                    signal.fail(failure)
                raise failure
            if not self._met(wait):
                self._defer(wait, signal, work, args, operation)
                return None
        return self._issue(signal, work, args, operation)

    def _issue(self, signal, work, args, operation):
        """Issues `work(*args)` on the stream and queues the signal behind it."""
        with self._stream_lock:
            self.bind()
            recorder = self.profiler
            spanned = (recorder is not None and recorder.device_queue_events
                       and operation is not None)
            work_before = self.stream_work
            try:
                if spanned:
                    start = recorder.span_open(operation)
                    try:
                        result = work(*args) if work is not None else None
                    finally:
                        recorder.span_close(operation, start)
                else:
                    result = work(*args) if work is not None else None
            except HalError as error:
                keep = self._pending
                if keep:
                    self._pending = []
                    self._completion_add(None, keep)
                if signal is not None:
                    signal.fail(error)
                raise
            keep = self._pending
            if keep:
                self._pending = []
            signalled = signal is not None and signal._timepoints
            if keep or signalled and (spanned or self.stream_work != work_before):
                self._completion.add(signal if signalled else None, keep)
            elif signalled:
                # No work of its own the host could observe (a barrier, a pool alloca or
                # free): signalled with what was issued before it.
                self._completion.follow(signal)
        return result

    def _completion_add(self, fence, keep) -> None:
        try:
            self._completion.add(fence, keep)
        except CudaError:
            self._synchronize_quietly()

    def _synchronize_quietly(self) -> None:
        try:
            self._synchronize()
        except CudaError:
            pass  # the first error is the one reported

    def _defer(self, wait, signal, work, args, operation) -> None:
        """Issues the operation once every unmet timepoint of `wait` is reached (in the thread
        that reaches the last); a failed wait fails `signal`."""
        unmet = [(s, v) for s, v in wait._timepoints.items() if s._value < v]
        remaining = [len(unmet)]
        lock = threading.Lock()

        def ready():
            with lock:
                remaining[0] -= 1
                if remaining[0]:
                    return
            failure = wait.failure
            if failure is not None:
                if signal is not None:
                    signal.fail(failure)
                return
            if self._closed:
                if signal is not None:
                    signal.fail(HalError("device is closed", status="FAILED_PRECONDITION"))
                return
            try:
                self._issue(signal, work, args, operation)
            except HalError:
                pass  # the signal fence carries it

        for semaphore, value in unmet:
            semaphore.notify_at(value, ready)

    def _alloca_buffer(self, memory_type, usage, byte_length):
        return self._allocator.allocate_queued(memory_type, usage, byte_length)

    def queue_alloca(self, queue_affinity, wait, signal, memory_type, usage, byte_length, pool=0,
                     flags=0):
        if self.peers:
            member = self._member(queue_affinity)
            if member is not self:
                return member.queue_alloca(-1, wait, signal, memory_type, usage, byte_length,
                                           pool, flags)
        if wait is not None and wait._timepoints and wait.failure is None and \
                not self._met(wait):
            wait.wait()  # the buffer is returned now: its wait is met first
        buffer = super().queue_alloca(queue_affinity, wait, signal, memory_type, usage,
                                      byte_length, pool, flags)
        buffer.queue_allocated = True
        return buffer

    def queue_dealloca(self, queue_affinity, wait, signal, buffer, flags=0):
        root = buffer.root
        if getattr(root, "queue_allocated", False):
            free = root.allocator.free_queued  # the allocator (GPU) that made it
            if self.profiler is not None:
                return self._profiled(Op.BARRIER, queue_affinity, wait, signal, free, (root,),
                                      operation_count=0)
            return self._submit(queue_affinity, wait, signal, free, root)
        return super().queue_dealloca(queue_affinity, wait, signal, buffer, flags)

    def queue_update(self, queue_affinity, wait, signal, source, source_offset, target,
                     target_offset, length, flags=0):
        data = bytes(memoryview(source).cast("B")[source_offset:source_offset + length])
        if source_offset < 0 or len(data) != length:
            raise HalError("update source range is outside the host buffer", status="OUT_OF_RANGE")
        target.validate_range(target_offset, length)
        return self._submit(queue_affinity, wait, signal, self._update, target, target_offset,
                            data)

    def _update(self, target, offset, data) -> None:
        stream_ops.issue_update(self, device_pointer(target, offset), data, self._pending)

    def queue_read_file(self, queue_affinity, wait, signal, source, source_offset, target,
                        target_offset, length, flags=0):
        target.validate_range(target_offset, length)
        return self._submit(queue_affinity, wait, signal, self._read_file_into, source,
                            source_offset, target, target_offset, length)

    def _read_file_into(self, source, source_offset, target, target_offset, length) -> None:
        data = bytearray(length)
        source.read_into(source_offset, memoryview(data))
        stream_ops.issue_update(self, device_pointer(target, target_offset), data, self._pending)

    def _execute(self, command_buffer, binding_table) -> None:
        recorder = self.profiler
        if recorder is not None and recorder.dispatch_events and self._profile_op is not None:
            self._execute_timed(recorder, command_buffer, binding_table)
            return
        stream_ops.issue_command_buffer(self, command_buffer, binding_table, self._pending)

    def _run_command(self, command, binding_table) -> None:
        stream_ops.issue_command(self, command, binding_table, self._pending)

    def _dispatch(self, command, binding_table) -> None:
        stream_ops.issue_dispatch(self, command, binding_table)

    # -- lifetime -------------------------------------------------------------------------------
    def close(self) -> None:
        """Drain the stream, unload executables, free memory, destroy the stream, release the
        primary context. Idempotent; the first error is raised after every step ran."""
        if self._closed:
            return
        super().close()
        errors: list[BaseException] = []
        for peer in self.peers:  # the other GPUs of a several-GPU device first
            try:
                peer.close()
            except HalError as error:
                errors.append(error)
        if self.context_released:
            if errors:
                raise errors[0]
            return

        def step(action, *args):
            try:
                action(*args)
            except HalError as error:
                errors.append(error)

        step(self._completion.close)  # every fence in flight signalled (or failed)
        with self._stream_lock:
            step(self.bind)
            step(self._synchronize)
            for key in list(self._graphs):
                step(self._drop_graphs, key)
            for ref in self._executables:
                executable = ref()
                if executable is not None:
                    step(executable.close)
            step(self._allocator.close)
            step(self.libcuda.call, "cuStreamDestroy_v2", self.stream)
            step(self.libcuda.call, "cuDevicePrimaryCtxRelease_v2", self.cudevice)
            self._finalizer.detach()
            self.context_released = True
            if getattr(_bound, "context", None) is self.context:
                _bound.context = None
        if errors:
            raise errors[0]

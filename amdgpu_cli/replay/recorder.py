"""Capture: HAL calls recorded as a .ireereplay v2.0 stream, as IREE's replay recorder writes it.

`ReplayRecorder(stream, file_policy, file_validation)` owns a `ReplayWriter` on `stream` (the
caller opens and publishes it through `amdgpu_cli.outputs`) and writes, per recorded HAL call,
the OPERATION record (the call's IREE status code; the record is kept when the call fails) and,
for a created object, its OBJECT record right after (../shared/reference/ireereplay.md §1.4):

  session (ordinal 0) · device + allocator OBJECT records and assign_topology_info (`attach`) ·
  scope markers (`scope_begin`/`scope_end`) · one method per recorded call.

Ids: one counter from 1 shared by every object type; an id is reserved before its creating call
runs (a failed creation keeps its id, as IREE's). Objects map to ids weakly (a buffer, semaphore,
command buffer, executable or file that dies takes its entry with it); ids are never reused.
Buffer references name the root allocation, offsets relative to it (sub-spans resolved).

Where calls are recorded:
- `RecordingDevice` wraps any HAL device. Attribute access is delegated to the real device
  (`vm_type` too, so the VM's `hal.device` ref checks pass); device calls (create_*, queue_*,
  query_i64, executable-cache creation) are recorded and passed through with the REAL objects
  (buffers, semaphores, command buffers). Its `allocator` is a `RecordingAllocator`; the caches it
  makes are `RecordingExecutableCache`s (prepare_executable: format, the executable's bytes,
  constants and function metadata from the loaded executable's exports).
- Command-buffer recording (hal/command_buffer.py, driver-independent): the recording device sets
  `command_buffer._replay = recorder` on the command buffers it makes; their methods hand the call
  to `ReplayRecorder.command`, which runs it with the hook cleared and records it.
- The VM's hal module and the tooling call the recorder (found as `device.replay`) where they map,
  write or read buffers (`map_range`/`unmap_range`), look up functions, import host files
  (`import_file`, INLINE_BYTES) and read them (`RecordingDevice.queue_read`).

Threading: one lock orders records. Unlike IREE (ordinal taken at call entry, lock held through
the call) the record is written when the call returns, so a blocking queue call never holds the
lock; for one calling thread (the tools) file order is call order either way.

File policies (`--device_replay_file_policy`) apply to fd-backed files only (IREE §4.5). Every
file this runtime imports today is host memory (`ex.file.from_memory`), always stored inline; the
policy and validation values are checked and kept for the fd-backed imports to come.

Results sidecar (`--device_replay_results`, amdgpu-run): `ReplayCapture` writes `F.results` next
to `F`, one msgpack map (the .ireereplay itself stays exactly what IREE's tools accept):

  {"format": "amdgpu-replay-results", "version": 1,
   "replay": <file name of F>,
   "results": [                               # one per tensor the run read back, in result order
     {"result_index": int,                    # position in the function's results
      "sequence_ordinal": int,                # ordinal of the first read-only map_range record
      "sequence_ordinals": [int, ...],        # every read-only map_range record of this readback
      "buffer_id": int,                       # replay id of the mapped (host) buffer
      "byte_offset": int, "byte_length": int, # the tensor's bytes in that buffer (root-relative)
      "mapped_length": int,                   # what each map_range covered (from byte_offset)
      "element_type": str,                    # IREE element type name ("f32", "i8", ...)
      "shape": [int, ...],                    # the buffer view's dimensions
      "data": bytes}]}                        # the bytes the run read (byte_length of them)
"""

from __future__ import annotations

import os
import threading
import weakref

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.enums import WHOLE_BUFFER, HalError, MemoryAccess, StatusCode
from amdgpu_cli.replay import schema
from amdgpu_cli.replay.schema import ObjectType, Op, PayloadType, RecordType, U64_MAX
from amdgpu_cli.replay.writer import ReplayWriter, buffer_refs, payload, timepoints
from amdgpu_cli.tooling.capture_flags import ReplayFlags, check_replay_flags

__all__ = ["RecordingDevice", "ReplayCapture", "ReplayRecorder"]

_ANY = U64_MAX  # queue affinity ANY as the file stores it
_ACCESS_ALL = int(MemoryAccess.ALL)
_MAPPING_SCOPED = 1
# IREE's hal module prepares executables with ALIAS_PROVIDED_DATA | ALLOW_PERSISTENT_CACHING |
# ALLOW_OPTIMIZATION, and orders dispatches with one DISPATCH_WRITE -> DISPATCH_READ barrier.
_CACHING_MODE = 7
_BARRIER_SCOPES = (8, 4)
# Our semaphores behave as IREE's default ones: HOST_INTERRUPT | EXPORTABLE_TIMEPOINTS.
_SEMAPHORE_FLAGS = 0xA


def _u64(value: int) -> int:
    return int(value) & U64_MAX


def _status(error: BaseException) -> int:
    status = getattr(error, "status", None)
    if isinstance(status, str) and status in StatusCode.__members__:
        return int(StatusCode[status])
    return int(StatusCode.UNKNOWN)


class ReplayCapture:
    """One capture's output: flags and path checked when made (before any work; a file at the
    path is untouched until `begin`), `begin()` publishes the file and returns the recorder
    (records stream into it, each in one write), `end()` writes the final length, commits, and
    writes the results sidecar when asked for."""

    def __init__(self, flags: ReplayFlags):
        from amdgpu_cli.outputs import OutputFile

        check_replay_flags(flags)
        self.flags = flags
        self._output = OutputFile(flags.output, read=True)
        self._results = OutputFile(flags.output + ".results") if flags.results else None
        self.recorder: ReplayRecorder | None = None

    def begin(self) -> ReplayRecorder:
        if self.recorder is None:
            stream = self._output.publish()
            self.recorder = ReplayRecorder(stream, self.flags.file_policy,
                                           self.flags.file_validation,
                                           keep_results=self._results is not None)
        return self.recorder

    def end(self) -> None:
        recorder, self.recorder = self.recorder, None
        if recorder is None:
            return
        recorder.close()
        self._output.commit()
        if self._results is not None:
            import msgpack

            from amdgpu_cli.outputs import write_outputs

            document = {"format": "amdgpu-replay-results", "version": 1,
                        "replay": os.path.basename(self.flags.output),
                        "results": recorder.results}
            write_outputs([(self._results, msgpack.packb(document, use_bin_type=True))])


# -- the recorder -----------------------------------------------------------------------------

class ReplayRecorder:
    """Writes the records of recorded HAL calls (see the module docstring)."""

    def __init__(self, stream, file_policy: str = "reference", file_validation: str = "identity",
                 *, keep_results: bool = False):
        check_replay_flags(ReplayFlags("-", file_policy, file_validation))
        self.file_policy = file_policy
        self.file_validation = file_validation
        self.keep_results = keep_results
        self.results: list[dict] = []
        self._writer = ReplayWriter(stream)
        self._lock = threading.RLock()
        self._next_id = 1
        self._ids: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._strong: dict[int, tuple[object, int]] = {}  # objects that take no weak reference
        self._owners: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # buffer -> device
        self.queue_allocated: weakref.WeakSet = weakref.WeakSet()  # queue_alloca's buffers
        self._writer.session()

    # -- ids --------------------------------------------------------------------------------
    def reserve(self) -> int:
        with self._lock:
            rid = self._next_id
            self._next_id += 1
            return rid

    def bind(self, obj, rid: int) -> None:
        try:
            self._ids[obj] = rid
        except TypeError:
            self._strong[id(obj)] = (obj, rid)

    def id_of(self, obj) -> int:
        """The replay id of `obj` (0 for None); an object never seen gets a fresh id (a replay
        then reports it undefined, which names the gap)."""
        if obj is None:
            return 0
        obj = getattr(obj, "_replay_target", obj)
        try:
            rid = self._ids.get(obj)
        except TypeError:
            entry = self._strong.get(id(obj))
            rid = entry[1] if entry is not None else None
        if rid is None:
            rid = self.reserve()
            self.bind(obj, rid)
        return rid

    def buffer_ref(self, buffer, offset: int = 0, length: int = WHOLE_BUFFER, slot: int = 0
                   ) -> dict:
        """A buffer_ref: direct (root id, root-relative offset, resolved length) or, for a None
        buffer, binding-table slot `slot`."""
        if buffer is None:
            return {"buffer_id": 0, "offset": _u64(offset), "length": _u64(length),
                    "buffer_slot": slot}
        if length == WHOLE_BUFFER or length is None:
            length = max(buffer.byte_length - offset, 0)
        return {"buffer_id": self.id_of(buffer.root), "offset": buffer.byte_offset + offset,
                "length": length, "buffer_slot": 0}

    def ref(self, ref) -> dict:
        """A command buffer's BufferRef as a buffer_ref."""
        return self.buffer_ref(ref.buffer, ref.offset, ref.length, ref.slot)

    def fence_points(self, fence) -> list[tuple[int, int]]:
        if fence is None:
            return []
        return [(self.id_of(semaphore), value) for semaphore, value in fence.timepoints]

    # -- records ----------------------------------------------------------------------------
    def write(self, record_type: int, **fields) -> int:
        with self._lock:
            if self._writer.closed:
                return -1
            return self._writer.write(record_type, **fields)

    def operation(self, op: int, *, device_id: int = 0, object_id: int = 0, related: int = 0,
                  object_type: int = 0, status: int = 0, payload_type: int = 0,
                  data: bytes = b"", unsupported: bool = False) -> int:
        return self.write(RecordType.UNSUPPORTED if unsupported else RecordType.OPERATION,
                          device_id=device_id, object_id=object_id, related_object_id=related,
                          object_type=object_type, operation_code=op, status_code=status,
                          payload_type=payload_type, payload=data)

    def object(self, object_type: int, object_id: int, *, device_id: int = 0,
               payload_type: int = 0, data: bytes = b"") -> int:
        return self.write(RecordType.OBJECT, device_id=device_id, object_id=object_id,
                          object_type=object_type, payload_type=payload_type, payload=data)

    def call(self, op: int, fn, args=(), *, device_id: int, object_id: int, object_type: int,
             related: int = 0, payload_type: int = 0, data: bytes = b"", created=None):
        """Runs `fn(*args)` and writes its OPERATION record (its status; payload `data`), then,
        when it succeeded and `created` = (object type, id, payload type, payload bytes or a
        callable of the result), the created object's OBJECT record. Returns fn's result;
        re-raises its error after the record is written."""
        try:
            result = fn(*args)
        except AmdgpuCliError as error:
            self.operation(op, device_id=device_id, object_id=object_id, related=related,
                           object_type=object_type, status=_status(error),
                           payload_type=payload_type, data=data)
            raise
        with self._lock:  # the op and its object record are adjacent
            self.operation(op, device_id=device_id, object_id=object_id, related=related,
                           object_type=object_type, payload_type=payload_type, data=data)
            if created is not None:
                kind, rid, object_payload_type, object_data = created
                if callable(object_data):
                    object_data = object_data(result)
                if rid and result is not None:
                    self.bind(result, rid)
                    if kind == ObjectType.BUFFER:
                        self._owners[result] = device_id
                self.object(kind, rid, device_id=device_id, payload_type=object_payload_type,
                            data=object_data)
        return result

    def scope_begin(self, name: str) -> None:
        self._scope(Op.SCOPE_BEGIN, name)

    def scope_end(self, name: str) -> None:
        self._scope(Op.SCOPE_END, name)

    def _scope(self, op: int, name: str) -> None:
        raw = name.encode()
        self.operation(op, payload_type=PayloadType.REPLAY_SCOPE,
                       data=payload(PayloadType.REPLAY_SCOPE, {"name_length": len(raw)}, raw))

    def close(self) -> None:
        with self._lock:
            self._writer.close()

    @property
    def closed(self) -> bool:
        return self._writer.closed

    # -- devices ----------------------------------------------------------------------------
    def attach(self, devices) -> list[RecordingDevice]:
        """Device and allocator OBJECT records (device order), then each device's
        assign_topology_info; the recording wrappers of `devices`."""
        wrapped = []
        for device in devices:
            device_id = self.reserve()
            self.object(ObjectType.DEVICE, device_id)
            allocator_id = self.reserve()
            self.object(ObjectType.ALLOCATOR, allocator_id, device_id=device_id)
            self.bind(device, device_id)
            wrapped.append(RecordingDevice(device, self, device_id, allocator_id))
        for device in wrapped:
            self.operation(Op.DEVICE_ASSIGN_TOPOLOGY_INFO, device_id=device.replay_id,
                           object_id=device.replay_id, object_type=ObjectType.DEVICE)
        return wrapped

    def buffer_object(self, buffer, *, asynchronous: bool = False) -> bytes:
        """The buffer_object payload of a buffer a call returned (its real properties;
        `asynchronous`: placed by a queue allocation, placement flag ASYNCHRONOUS)."""
        return payload(PayloadType.BUFFER_OBJECT, {
            "allocation_size": buffer.allocation_size, "byte_offset": buffer.byte_offset,
            "byte_length": buffer.byte_length, "queue_affinity": int(asynchronous),
            "placement_flags": int(asynchronous),
            "memory_type": int(buffer.memory_type) & 0xFFFFFFFF,
            "allowed_usage": int(buffer.allowed_usage) & 0xFFFFFFFF,
            "allowed_access": int(buffer.allowed_access) & 0xFFFF})

    # -- command buffers (hal/command_buffer.py hands its calls here) -----------------------
    def command(self, cb, name: str, args: tuple):
        """Runs CommandBuffer method `name` on `cb` unhooked, and records it."""
        op, payload_type, data, unsupported = self._command_payload(name, args)
        device_id = getattr(cb, "_replay_device", 0)
        cb._replay = None
        try:
            try:
                result = getattr(cb, name)(*args)
            except AmdgpuCliError as error:
                self.operation(op, device_id=device_id, object_id=self.id_of(cb),
                               object_type=ObjectType.COMMAND_BUFFER, status=_status(error),
                               payload_type=payload_type, data=data, unsupported=unsupported)
                raise
        finally:
            cb._replay = self
        self.operation(op, device_id=device_id, object_id=self.id_of(cb),
                       object_type=ObjectType.COMMAND_BUFFER, payload_type=payload_type,
                       data=data, unsupported=unsupported)
        return result

    def _command_payload(self, name: str, args: tuple) -> tuple[int, int, bytes, bool]:
        """(op, payload type, payload, unsupported) of a command-buffer call."""
        if name in ("begin", "end", "finalize"):
            return (Op.COMMAND_BUFFER_BEGIN if name == "begin" else Op.COMMAND_BUFFER_END,
                    0, b"", False)
        if name == "execution_barrier":
            source, target = args[0], args[1]
            flags = args[2] if len(args) > 2 else 0
            return (Op.COMMAND_BUFFER_EXECUTION_BARRIER,
                    PayloadType.COMMAND_BUFFER_EXECUTION_BARRIER,
                    payload(PayloadType.COMMAND_BUFFER_EXECUTION_BARRIER, {
                        "source_stage_mask": _u64(source), "target_stage_mask": _u64(target),
                        "flags": _u64(flags), "memory_barrier_count": 1},
                        schema.MEMORY_BARRIER.pack(source_scope=_BARRIER_SCOPES[0],
                                                   target_scope=_BARRIER_SCOPES[1])), False)
        if name == "begin_debug_group":
            return Op.COMMAND_BUFFER_BEGIN_DEBUG_GROUP, 0, b"", False
        if name == "end_debug_group":
            return Op.COMMAND_BUFFER_END_DEBUG_GROUP, 0, b"", False
        if name == "advise_buffer":
            return Op.COMMAND_BUFFER_ADVISE_BUFFER, 0, b"", False
        if name == "collective":
            return Op.COMMAND_BUFFER_COLLECTIVE, 0, b"", True
        if name == "fill_buffer":
            from amdgpu_cli.hal.command_buffer import _pattern

            target, pattern, pattern_length = args[:3]
            flags = args[3] if len(args) > 3 else 0
            try:
                raw = _pattern(pattern, pattern_length)
            except HalError:
                raw = b""
            return (Op.COMMAND_BUFFER_FILL_BUFFER, PayloadType.COMMAND_BUFFER_FILL_BUFFER,
                    payload(PayloadType.COMMAND_BUFFER_FILL_BUFFER, {
                        "target_ref": self.ref(target), "flags": flags & 0xFFFFFFFF,
                        "pattern_length": len(raw)}, raw), False)
        if name == "update_buffer":
            source, source_offset, target = args[:3]
            flags = args[3] if len(args) > 3 else 0
            view = memoryview(source).cast("B")
            length = target.length if target.length != WHOLE_BUFFER else len(view) - source_offset
            raw = bytes(view[source_offset:source_offset + max(length, 0)])
            target_ref = self.ref(target._replace(length=len(raw)))
            return (Op.COMMAND_BUFFER_UPDATE_BUFFER, PayloadType.COMMAND_BUFFER_UPDATE_BUFFER,
                    payload(PayloadType.COMMAND_BUFFER_UPDATE_BUFFER, {
                        "target_ref": target_ref, "flags": flags & 0xFFFFFFFF,
                        "source_offset": source_offset, "data_length": len(raw)}, raw), False)
        if name == "copy_buffer":
            source, target = args[:2]
            flags = args[2] if len(args) > 2 else 0
            return (Op.COMMAND_BUFFER_COPY_BUFFER, PayloadType.COMMAND_BUFFER_COPY_BUFFER,
                    payload(PayloadType.COMMAND_BUFFER_COPY_BUFFER, {
                        "source_ref": self.ref(source), "target_ref": self.ref(target),
                        "flags": flags & 0xFFFFFFFF}), False)
        if name in ("dispatch", "dispatch_indirect"):
            from amdgpu_cli.hal.command_buffer import _constant_bytes

            executable, entry_point, grid = args[:3]
            constants = _constant_bytes(args[3] if len(args) > 3 else b"")
            bindings = tuple(args[4]) if len(args) > 4 else ()
            flags = args[5] if len(args) > 5 else 0
            fields = {"executable_id": self.id_of(executable), "queue_affinity": 0,
                      "function_ordinal": entry_point, "flags": int(flags) & 0xFFFFFFFF,
                      "constants_length": len(constants), "binding_count": len(bindings)}
            if name == "dispatch":
                fields["workgroup_count"] = [int(c) & 0xFFFFFFFF for c in grid]
            else:
                fields["workgroup_count_ref"] = self.ref(grid._replace(length=12))
            return (Op.COMMAND_BUFFER_DISPATCH, PayloadType.DISPATCH,
                    payload(PayloadType.DISPATCH, fields, constants,
                            buffer_refs(self.ref(b) for b in bindings)), False)
        raise AssertionError(name)

    # -- executables ------------------------------------------------------------------------
    def lookup_function(self, executable, name: str, fn):
        """executable.lookup_function_by_name (the hal module's hal.executable.lookup.function)."""
        device = getattr(executable, "device", None)
        return self.call(Op.EXECUTABLE_LOOKUP_FUNCTION_BY_NAME, fn, (name,),
                         device_id=self._device_id_of(device), object_id=self.id_of(executable),
                         object_type=ObjectType.EXECUTABLE)

    def _device_id_of(self, device) -> int:
        if device is None:
            return 0
        rid = getattr(device, "replay_id", None)
        if rid is not None:
            return rid
        try:
            found = self._ids.get(device)
        except TypeError:
            found = None
        return found or 0

    # -- buffers mapped by the application --------------------------------------------------
    def _owner(self, buffer, device_id: int) -> int:
        if device_id or buffer is None:
            return device_id
        try:
            return self._owners.get(buffer.root, 0)
        except TypeError:
            return 0

    def map_range(self, buffer, offset: int, length: int, access: int, *,
                  device_id: int = 0, status: int = 0) -> int:
        """buffer.map_range (SCOPED) of [offset, offset+length) of `buffer`; its ordinal."""
        ref = self.buffer_ref(buffer, offset, length)
        device_id = self._owner(buffer, device_id)
        return self.operation(Op.BUFFER_MAP_RANGE, device_id=device_id,
                              object_id=ref["buffer_id"], object_type=ObjectType.BUFFER,
                              status=status, payload_type=PayloadType.BUFFER_RANGE,
                              data=payload(PayloadType.BUFFER_RANGE, {
                                  "byte_offset": ref["offset"], "byte_length": ref["length"],
                                  "mapping_mode": _MAPPING_SCOPED,
                                  "memory_access": access & 0xFFFF}))

    def unmap_range(self, buffer, offset: int, length: int, access: int, data=None, *,
                    device_id: int = 0) -> int:
        """buffer.unmap_range: with the mapping's bytes (`data`) when it had write access."""
        ref = self.buffer_ref(buffer, offset, length)
        device_id = self._owner(buffer, device_id)
        if access & int(MemoryAccess.WRITE | MemoryAccess.DISCARD) and data is not None:
            raw = bytes(data)
            body = payload(PayloadType.BUFFER_RANGE_DATA, {
                "byte_offset": ref["offset"], "byte_length": ref["length"],
                "data_length": len(raw), "memory_access": access & 0xFFFF}, raw)
            payload_type = PayloadType.BUFFER_RANGE_DATA
        else:
            body = payload(PayloadType.BUFFER_RANGE, {
                "byte_offset": ref["offset"], "byte_length": ref["length"],
                "memory_access": access & 0xFFFF})
            payload_type = PayloadType.BUFFER_RANGE
        return self.operation(Op.BUFFER_UNMAP_RANGE, device_id=device_id,
                              object_id=ref["buffer_id"], object_type=ObjectType.BUFFER,
                              payload_type=payload_type, data=body)

    def write_mapped(self, buffer, offset: int, data, *, device_id: int = 0,
                     access: int = int(MemoryAccess.WRITE | MemoryAccess.DISCARD)) -> None:
        """A host write through a scoped mapping: map, copy, unmap with the bytes."""
        raw = bytes(memoryview(data).cast("B"))
        self.map_range(buffer, offset, len(raw), access, device_id=device_id)
        buffer.write(offset, raw)
        self.unmap_range(buffer, offset, len(raw), access, raw, device_id=device_id)

    def read_mapped(self, buffer, offset: int, length: int, *, device_id: int = 0,
                    times: int = 1) -> tuple[bytes, list[int]]:
        """A host read through `times` read-only scoped map/unmap pairs (IREE's buffer-view
        printing maps twice); (the bytes, the map_range ordinals)."""
        read = int(MemoryAccess.READ)
        ordinals = []
        data = b""
        for i in range(times):
            ordinals.append(self.map_range(buffer, offset, length, read, device_id=device_id))
            if i == 0:
                data = buffer.read(offset, length)
            self.unmap_range(buffer, offset, length, read, device_id=device_id)
        return data, ordinals

    def keep_result(self, index: int, ordinals, buffer, offset: int, data: bytes,
                    element_type: str, shape) -> None:
        if self.keep_results:
            ref = self.buffer_ref(buffer, offset, len(data))
            self.results.append({
                "result_index": index, "sequence_ordinal": ordinals[0] if ordinals else -1,
                "sequence_ordinals": list(ordinals), "buffer_id": ref["buffer_id"],
                "byte_offset": ref["offset"], "byte_length": len(data),
                "mapped_length": buffer.byte_length - offset,
                "element_type": element_type, "shape": [int(d) for d in shape],
                "data": bytes(data)})

    # -- files ------------------------------------------------------------------------------
    def import_file(self, device, file, *, access: int, length: int, content: bytes) -> None:
        """device.import_file of a host-allocation file: INLINE_BYTES, whole content (IREE
        stores host files so whatever --device_replay_file_policy says)."""
        device_id = self._device_id_of(device)
        rid = self.reserve()
        body = payload(PayloadType.FILE_OBJECT, {
            "queue_affinity": _ANY, "file_length": length, "reference_length": len(content),
            "access": access & 0xFFFFFFFF, "handle_type": 0,
            "reference_type": schema.FileReference.INLINE_BYTES,
            "validation_type": schema.FileValidation.NONE}, content)
        self.call(Op.DEVICE_IMPORT_FILE, lambda: file, (), device_id=device_id,
                  object_id=device_id, object_type=ObjectType.DEVICE, related=rid,
                  payload_type=PayloadType.FILE_OBJECT, data=body,
                  created=(ObjectType.FILE, rid, PayloadType.FILE_OBJECT, body))


    def import_fd_file(self, device, file, *, path: str, access: int, length: int,
                       content) -> None:
        """device.import_file of an fd-backed file (a parameter file opened in `file` mode),
        as --device_replay_file_policy says (ireereplay.md §4.5): reference (EXTERNAL_PATH,
        the absolute path, with identity or digest validation), capture-ranges
        (CAPTURED_RANGES: the path for diagnostics; each queue_read of it carries the bytes
        it read), capture-all (INLINE_BYTES, the
        whole file from `content()`), fail (FAILED_PRECONDITION, recorded). `file` gets the
        id."""
        import os

        device_id = self._device_id_of(device)
        rid = self.reserve()
        st = os.stat(path)
        policy = self.file_policy
        fields = {"queue_affinity": _ANY, "file_length": length, "access": access & 0xFFFFFFFF,
                  "handle_type": 1, "validation_type": schema.FileValidation.NONE}
        reference = os.path.realpath(path).encode()
        if policy == "capture-all":
            reference = bytes(content())
            fields["reference_type"] = schema.FileReference.INLINE_BYTES
        else:
            fields.update(file_device=st.st_dev, file_inode=st.st_ino, file_mtime_ns=st.st_mtime_ns)
            if policy == "capture-ranges":
                fields["reference_type"] = schema.FileReference.CAPTURED_RANGES
                file.capture_ranges = True  # queue_read appends the bytes it reads
            else:
                fields["reference_type"] = schema.FileReference.EXTERNAL_PATH
                if self.file_validation == "digest":
                    digest = 0xCBF29CE484222325
                    for byte in bytes(content()):
                        digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
                    fields.update(validation_type=schema.FileValidation.CONTENT_DIGEST,
                                  digest_type=schema.DIGEST_FNV1A_64,
                                  digest=digest.to_bytes(8, "little") + bytes(24))
                else:
                    fields["validation_type"] = schema.FileValidation.IDENTITY
        fields["reference_length"] = len(reference)
        body = payload(PayloadType.FILE_OBJECT, fields, reference)

        def make():
            if policy == "fail":
                raise HalError("fd-backed files are refused by --device_replay_file_policy=fail",
                               status="FAILED_PRECONDITION")
            return file
        self.call(Op.DEVICE_IMPORT_FILE, make, (), device_id=device_id, object_id=device_id,
                  object_type=ObjectType.DEVICE, related=rid,
                  payload_type=PayloadType.FILE_OBJECT, data=body,
                  created=(ObjectType.FILE, rid, PayloadType.FILE_OBJECT, body))


def _metadata(executable) -> bytes:
    """The executable_prepare metadata blob from a loaded executable's exports (llvm-cpu and
    our amdgpu loader report no parameters)."""
    exports = list(executable.exports)
    names = [e.name.encode() for e in exports]
    parts = [schema.METADATA_HEADER.pack(function_count=len(exports), parameter_count=0,
                                         function_name_storage_length=sum(map(len, names)))]
    for export, name in zip(exports, names):
        parts.append(schema.METADATA_FUNCTION.pack(
            flags=0, workgroup_size=[int(v) for v in export.workgroup_size],
            constant_count=export.constant_count, binding_count=export.binding_count,
            parameter_count=0, name_length=len(name)))
    parts.extend(names)
    return b"".join(parts)


# -- wrappers ---------------------------------------------------------------------------------

class _Wrapper:
    """Delegates every attribute it does not define to the wrapped object (reads and writes)."""

    __slots__ = ("_replay_target", "replay", "__weakref__")

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_replay_target"), name)

    def __setattr__(self, name, value):
        if name in _OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self._replay_target, name, value)

    def __repr__(self) -> str:
        return f"<recording {self._replay_target!r}>"


_OWN = frozenset({"_replay_target", "replay", "replay_id", "device_id", "_allocator"})


class RecordingAllocator(_Wrapper):
    """A device allocator whose allocate/import calls are recorded."""

    __slots__ = ("replay_id", "device_id")
    vm_type = "hal.allocator"

    def __init__(self, allocator, recorder: ReplayRecorder, device_id: int, allocator_id: int):
        self._replay_target = allocator
        self.replay = recorder
        self.device_id = device_id
        self.replay_id = allocator_id

    def _allocation(self, memory_type, usage, byte_length, access: int = _ACCESS_ALL) -> dict:
        return {"allocation_size": byte_length, "queue_affinity": _ANY, "min_alignment": 0,
                "usage": int(usage) & 0xFFFFFFFF, "type": int(memory_type) & 0xFFFFFFFF,
                "access": access}

    def allocate(self, memory_type, usage, byte_length):
        rec = self.replay
        rid = rec.reserve()
        body = payload(PayloadType.ALLOCATOR_ALLOCATE_BUFFER,
                       self._allocation(memory_type, usage, byte_length))
        return rec.call(Op.ALLOCATOR_ALLOCATE_BUFFER, self._replay_target.allocate,
                        (memory_type, usage, byte_length), device_id=self.device_id,
                        object_id=self.replay_id, object_type=ObjectType.ALLOCATOR, related=rid,
                        payload_type=PayloadType.ALLOCATOR_ALLOCATE_BUFFER, data=body,
                        created=(ObjectType.BUFFER, rid, PayloadType.BUFFER_OBJECT,
                                 rec.buffer_object))

    def import_host(self, data, memory_type, usage, *, writable=None):
        """Host imports fail under capture, as under IREE 3.13.0's recorder, with the status its
        driver's allocator gives (OUT_OF_RANGE on the local drivers; an allocator says otherwise
        with `captured_import_status`); the record is kept, with the bytes. A module's constants
        then take their file path (import_file + queue_read), which replays the same everywhere."""
        rec = self.replay
        rid = rec.reserve()
        raw = bytes(memoryview(data).cast("B"))
        access = int(MemoryAccess.READ) if writable is False else _ACCESS_ALL
        body = payload(PayloadType.ALLOCATOR_IMPORT_BUFFER, {
            "allocation": self._allocation(memory_type, usage, len(raw), access),
            "external_type": 1, "data_length": len(raw)}, raw)
        error = HalError("host buffer imports are not captured; import the data as a file",
                         status=getattr(self._replay_target, "captured_import_status",
                                        "OUT_OF_RANGE"))
        rec.operation(Op.ALLOCATOR_IMPORT_BUFFER, device_id=self.device_id,
                      object_id=self.replay_id, related=rid, object_type=ObjectType.ALLOCATOR,
                      status=_status(error), payload_type=PayloadType.ALLOCATOR_IMPORT_BUFFER,
                      data=body)
        raise error


class RecordingExecutableCache(_Wrapper):
    """An executable cache whose prepare_executable calls are recorded."""

    __slots__ = ("replay_id", "device_id")

    def __init__(self, cache, recorder: ReplayRecorder, device_id: int, cache_id: int):
        self._replay_target = cache
        self.replay = recorder
        self.device_id = device_id
        self.replay_id = cache_id

    def prepare_executable(self, executable_format: str, data: bytes, constants=()):
        rec = self.replay
        rid = rec.reserve()
        fmt = executable_format.encode()
        raw = bytes(data)
        values = b"".join((int(c) & 0xFFFFFFFF).to_bytes(4, "little") for c in constants)
        fields = {"queue_affinity": _ANY, "executable_data_length": len(raw),
                  "constant_count": len(constants), "caching_mode": _CACHING_MODE,
                  "executable_format_length": len(fmt)}
        try:
            executable = self._replay_target.prepare_executable(executable_format, data,
                                                                constants)
        except AmdgpuCliError as error:
            rec.operation(Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE, device_id=self.device_id,
                          object_id=self.replay_id, related=rid,
                          object_type=ObjectType.EXECUTABLE_CACHE, status=_status(error),
                          payload_type=PayloadType.EXECUTABLE_PREPARE,
                          data=payload(PayloadType.EXECUTABLE_PREPARE, fields, fmt, raw, values))
            raise
        metadata = _metadata(executable)
        fields["executable_metadata_length"] = len(metadata)
        body = payload(PayloadType.EXECUTABLE_PREPARE, fields, fmt, raw, values, metadata)
        with rec._lock:
            rec.operation(Op.EXECUTABLE_CACHE_PREPARE_EXECUTABLE, device_id=self.device_id,
                          object_id=self.replay_id, related=rid,
                          object_type=ObjectType.EXECUTABLE_CACHE,
                          payload_type=PayloadType.EXECUTABLE_PREPARE, data=body)
            rec.bind(executable, rid)
            rec.object(ObjectType.EXECUTABLE, rid, device_id=self.device_id)
        return executable


class RecordingDevice(_Wrapper):
    """A HAL device whose device-level calls are recorded (see the module docstring)."""

    __slots__ = ("replay_id", "_allocator")
    vm_type = "hal.device"

    def __init__(self, device, recorder: ReplayRecorder, device_id: int, allocator_id: int):
        self._replay_target = device
        self.replay = recorder
        self.replay_id = device_id
        self._allocator = RecordingAllocator(device.allocator, recorder, device_id,
                                             allocator_id)

    @property
    def device(self):
        """The real device."""
        return self._replay_target

    @property
    def allocator(self) -> RecordingAllocator:
        return self._allocator

    def _device_call(self, op, fn, args, *, related=0, payload_type=0, data=b"", created=None):
        return self.replay.call(op, fn, args, device_id=self.replay_id, object_id=self.replay_id,
                                object_type=ObjectType.DEVICE, related=related,
                                payload_type=payload_type, data=data, created=created)

    # -- creation ---------------------------------------------------------------------------
    def create_executable_cache(self, identifier: str = ""):
        rec = self.replay
        rid = rec.reserve()
        raw = identifier.encode()
        body = payload(PayloadType.EXECUTABLE_CACHE_OBJECT, {"identifier_length": len(raw)}, raw)
        real = self._replay_target.create_executable_cache
        cache = self._device_call(Op.DEVICE_CREATE_EXECUTABLE_CACHE,
                                  (lambda: real(identifier)) if identifier else real, (),
                                  related=rid, payload_type=PayloadType.EXECUTABLE_CACHE_OBJECT,
                                  data=body, created=(ObjectType.EXECUTABLE_CACHE, rid,
                                                      PayloadType.EXECUTABLE_CACHE_OBJECT, body))
        return RecordingExecutableCache(cache, rec, self.replay_id, rid)

    def query_i64(self, category: str, key: str):
        return self._device_call(Op.DEVICE_QUERY_I64, self._replay_target.query_i64,
                                 (category, key))

    def create_semaphore(self, initial_value: int = 0):
        rid = self.replay.reserve()
        body = payload(PayloadType.SEMAPHORE_OBJECT, {"queue_affinity": _ANY,
                                                      "initial_value": initial_value,
                                                      "flags": _SEMAPHORE_FLAGS})
        return self._device_call(Op.DEVICE_CREATE_SEMAPHORE, self._replay_target.create_semaphore,
                                 (initial_value,), related=rid,
                                 payload_type=PayloadType.SEMAPHORE_OBJECT, data=body,
                                 created=(ObjectType.SEMAPHORE, rid, PayloadType.SEMAPHORE_OBJECT,
                                          body))

    def create_command_buffer(self, mode: int, categories: int, queue_affinity: int = -1,
                              binding_capacity: int = 0):
        rid = self.replay.reserve()
        body = payload(PayloadType.COMMAND_BUFFER_OBJECT, {
            "mode": int(mode) & 0xFFFFFFFF, "command_categories": int(categories) & 0xFFFFFFFF,
            "queue_affinity": _u64(queue_affinity), "binding_capacity": binding_capacity})
        cb = self._device_call(Op.DEVICE_CREATE_COMMAND_BUFFER,
                               self._replay_target.create_command_buffer,
                               (mode, categories, queue_affinity, binding_capacity), related=rid,
                               payload_type=PayloadType.COMMAND_BUFFER_OBJECT, data=body,
                               created=(ObjectType.COMMAND_BUFFER, rid,
                                        PayloadType.COMMAND_BUFFER_OBJECT, body))
        cb._replay_device = self.replay_id
        cb._replay = self.replay
        return cb

    # -- queue operations -------------------------------------------------------------------
    def _points(self, wait, signal) -> tuple[dict, bytes]:
        rec = self.replay
        waits, signals = rec.fence_points(wait), rec.fence_points(signal)
        return ({"wait_semaphore_count": len(waits), "signal_semaphore_count": len(signals)},
                timepoints(waits) + timepoints(signals))

    def queue_alloca(self, queue_affinity, wait, signal, memory_type, usage, byte_length,
                     pool=0, flags=0):
        rec = self.replay
        rid = rec.reserve()
        counts, points = self._points(wait, signal)
        body = payload(PayloadType.DEVICE_QUEUE_ALLOCA, {
            "allocation": {"allocation_size": byte_length, "queue_affinity": _u64(queue_affinity),
                           "usage": int(usage) & 0xFFFFFFFF, "type": int(memory_type) & 0xFFFFFFFF,
                           "access": _ACCESS_ALL},
            "queue_affinity": _u64(queue_affinity), "flags": _u64(flags), **counts}, points)
        buffer = self._device_call(
            Op.DEVICE_QUEUE_ALLOCA, self._replay_target.queue_alloca,
            (queue_affinity, wait, signal, memory_type, usage, byte_length, pool, flags),
            related=rid, payload_type=PayloadType.DEVICE_QUEUE_ALLOCA, data=body,
            created=(ObjectType.BUFFER, rid, PayloadType.BUFFER_OBJECT,
                     lambda b: rec.buffer_object(b, asynchronous=True)))
        rec.queue_allocated.add(buffer.root)
        return buffer

    def queue_dealloca(self, queue_affinity, wait, signal, buffer, flags=0):
        """IREE's HAL turns the dealloca of a buffer no queue allocation placed into a barrier
        (iree_hal_device_queue_dealloca); that barrier is what its recorder sees, and so here."""
        if buffer is not None and buffer.root not in self.replay.queue_allocated:
            return self.queue_barrier(queue_affinity, wait, signal)
        ref = self.replay.buffer_ref(buffer)
        counts, points = self._points(wait, signal)
        body = payload(PayloadType.DEVICE_QUEUE_DEALLOCA, {
            "buffer_ref": ref, "queue_affinity": _u64(queue_affinity), "flags": _u64(flags),
            **counts}, points)
        return self._device_call(Op.DEVICE_QUEUE_DEALLOCA, self._replay_target.queue_dealloca,
                                 (queue_affinity, wait, signal, buffer, flags),
                                 related=ref["buffer_id"],
                                 payload_type=PayloadType.DEVICE_QUEUE_DEALLOCA, data=body)

    def queue_fill(self, queue_affinity, wait, signal, target, offset, length, pattern,
                   pattern_length, flags=0):
        from amdgpu_cli.hal.command_buffer import _pattern

        ref = self.replay.buffer_ref(target, offset, length)
        try:
            raw = pattern if isinstance(pattern, bytes) else _pattern(pattern, pattern_length)
        except HalError:
            raw = b""
        counts, points = self._points(wait, signal)
        body = payload(PayloadType.DEVICE_QUEUE_FILL, {
            "target_ref": ref, "queue_affinity": _u64(queue_affinity), "flags": _u64(flags),
            "pattern_length": len(raw), **counts}, points, raw)
        return self._device_call(Op.DEVICE_QUEUE_FILL, self._replay_target.queue_fill,
                                 (queue_affinity, wait, signal, target, offset, length, pattern,
                                  pattern_length, flags), related=ref["buffer_id"],
                                 payload_type=PayloadType.DEVICE_QUEUE_FILL, data=body)

    def queue_update(self, queue_affinity, wait, signal, source, source_offset, target,
                     target_offset, length, flags=0):
        raw = bytes(memoryview(source).cast("B")[source_offset:source_offset + length])
        ref = self.replay.buffer_ref(target, target_offset, length)
        counts, points = self._points(wait, signal)
        body = payload(PayloadType.DEVICE_QUEUE_UPDATE, {
            "target_ref": ref, "queue_affinity": _u64(queue_affinity), "flags": _u64(flags),
            "source_offset": source_offset, "data_length": len(raw), **counts}, points, raw)
        return self._device_call(Op.DEVICE_QUEUE_UPDATE, self._replay_target.queue_update,
                                 (queue_affinity, wait, signal, source, source_offset, target,
                                  target_offset, length, flags), related=ref["buffer_id"],
                                 payload_type=PayloadType.DEVICE_QUEUE_UPDATE, data=body)

    def queue_copy(self, queue_affinity, wait, signal, source, source_offset, target,
                   target_offset, length, flags=0):
        rec = self.replay
        target_ref = rec.buffer_ref(target, target_offset, length)
        counts, points = self._points(wait, signal)
        body = payload(PayloadType.DEVICE_QUEUE_COPY, {
            "source_ref": rec.buffer_ref(source, source_offset, length),
            "target_ref": target_ref, "queue_affinity": _u64(queue_affinity),
            "flags": _u64(flags), **counts}, points)
        return self._device_call(Op.DEVICE_QUEUE_COPY, self._replay_target.queue_copy,
                                 (queue_affinity, wait, signal, source, source_offset, target,
                                  target_offset, length, flags), related=target_ref["buffer_id"],
                                 payload_type=PayloadType.DEVICE_QUEUE_COPY, data=body)

    def queue_read(self, queue_affinity, wait, signal, file, source_offset, target,
                   target_offset, length, data, flags=0):
        """device.queue_read of `length` bytes of a host file (`data`: those bytes), carried
        out as a queue update of the real device."""
        rec = self.replay
        ref = rec.buffer_ref(target, target_offset, length)
        counts, points = self._points(wait, signal)
        # Files imported under capture-ranges (import_fd_file) carry the bytes read.
        captured = bytes(memoryview(data).cast("B")) if getattr(file, "capture_ranges",
                                                                False) else b""
        body = payload(PayloadType.DEVICE_QUEUE_READ, {
            "source_file_id": rec.id_of(file), "source_offset": source_offset,
            "target_ref": ref, "queue_affinity": _u64(queue_affinity), "flags": _u64(flags),
            "captured_data_length": len(captured), **counts}, points, captured)
        return self._device_call(Op.DEVICE_QUEUE_READ, self._replay_target.queue_update,
                                 (queue_affinity, wait, signal, data, 0, target, target_offset,
                                  length, flags), related=ref["buffer_id"],
                                 payload_type=PayloadType.DEVICE_QUEUE_READ, data=body)

    def queue_execute(self, queue_affinity, wait, signal, command_buffer, binding_table=(),
                      flags=0):
        rec = self.replay
        table = tuple(binding_table)
        refs = [rec.buffer_ref(*entry[:3]) if entry[0] is not None else
                {"buffer_id": 0, "offset": 0, "length": 0} for entry in table]
        counts, points = self._points(wait, signal)
        cb_id = rec.id_of(command_buffer)
        body = payload(PayloadType.DEVICE_QUEUE_EXECUTE, {
            "command_buffer_id": cb_id, "queue_affinity": _u64(queue_affinity),
            "flags": _u64(flags), "binding_count": len(refs), **counts}, points,
            buffer_refs(refs))
        return self._device_call(Op.DEVICE_QUEUE_EXECUTE, self._replay_target.queue_execute,
                                 (queue_affinity, wait, signal, command_buffer, table, flags),
                                 related=cb_id, payload_type=PayloadType.DEVICE_QUEUE_EXECUTE,
                                 data=body)

    def queue_barrier(self, queue_affinity, wait, signal, flags=0):
        """Recorded as IREE records a barrier: queue_execute of command buffer 0."""
        counts, points = self._points(wait, signal)
        body = payload(PayloadType.DEVICE_QUEUE_EXECUTE, {
            "queue_affinity": _u64(queue_affinity), "flags": _u64(flags), **counts}, points)
        return self._device_call(Op.DEVICE_QUEUE_EXECUTE, self._replay_target.queue_barrier,
                                 (queue_affinity, wait, signal, flags),
                                 payload_type=PayloadType.DEVICE_QUEUE_EXECUTE, data=body)

    def queue_flush(self, queue_affinity=-1):
        return self._device_call(Op.DEVICE_QUEUE_FLUSH, self._replay_target.queue_flush,
                                 (queue_affinity,))

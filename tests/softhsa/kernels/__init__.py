"""Test-time helpers for softhsa's loader tests.

- `compile_kernel`: OpenCL C here -> AMDGPU code object with clang-19 + ld.lld-19 (reference §0:
  `-nogpulib`, generic targets need `-mcode-object-version=6`).
- `readobj_*`: the independent truth about a code object, read with llvm-readobj-19 (JSON output)
  and llvm-objcopy-19, the metadata note decoded by the msgpack package.
- `Loader`: executables, symbols and hand-built kernel-dispatch packets (HSA spec 2.9 layout, header
  stored last) over a running `tests.softhsa.session.SoftHsa`, which owns agents, pools, signals,
  queues and the init/shut-down lifetime.
"""

from __future__ import annotations

import json
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import msgpack

from hsa_ffi import HsaError
from hsa_ffi import constants as C
from tests.softhsa.session import SoftHsa

KERNELS_DIR = Path(__file__).resolve().parent
CLANG = "clang-19"
LLD = "ld.lld-19"
READOBJ = "llvm-readobj-19"
OBJCOPY = "llvm-objcopy-19"


def compile_kernel(source: Path, target: str, out_dir: Path, *flags: str) -> Path:
    """Compile `source` for clang's `-mcpu=target` (e.g. `gfx942`, `gfx942:xnack+`, `gfx11-generic`)."""
    stem = f"{source.stem}-{target.replace(':', '_')}"
    obj, hsaco = out_dir / f"{stem}.o", out_dir / f"{stem}.hsaco"
    if "generic" in target:
        flags = (*flags, "-mcode-object-version=6")
    subprocess.run([CLANG, "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa",
                    f"-mcpu={target}", "-nogpulib", "-O2", *flags, "-c", str(source), "-o", str(obj)],
                   check=True, capture_output=True)
    subprocess.run([LLD, "-shared", str(obj), "-o", str(hsaco)], check=True, capture_output=True)
    return hsaco


def _readobj(path: Path, *flags: str) -> dict:
    out = subprocess.run([READOBJ, "--elf-output-style=JSON", *flags, str(path)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)[0]


def readobj_metadata(path: Path) -> dict:
    """The NT_AMDGPU_METADATA note: section located by llvm-readobj, bytes dumped by llvm-objcopy,
    msgpack decoded by the msgpack package."""
    (section,) = [s["NoteSection"] for s in _readobj(path, "--notes")["NoteSections"]]
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "note"
        subprocess.run([OBJCOPY, f"--dump-section={section['Name']}={dump}", str(path),
                        str(Path(tmp) / "out")], check=True, capture_output=True)
        notes = dump.read_bytes()
    while notes:
        name_size, desc_size, note_type = struct.unpack_from("<3I", notes)
        desc_at = 12 + (name_size + 3) // 4 * 4
        if note_type == 32 and notes[12:12 + name_size] == b"AMDGPU\0":
            return msgpack.unpackb(notes[desc_at:desc_at + desc_size])
        notes = notes[desc_at + (desc_size + 3) // 4 * 4:]
    raise AssertionError(f"{path}: no AMDGPU metadata note")


def readobj_symbol_bytes(path: Path, name: str, size: int) -> tuple[int, bytes]:
    """(virtual address, `size` file bytes) of dynamic symbol `name`."""
    info = _readobj(path, "--dyn-symbols", "--sections")
    symbol = next(s["Symbol"] for s in info["DynamicSymbols"] if s["Symbol"]["Name"]["Name"] == name)
    sections = [s["Section"] for s in info["Sections"] if s["Section"]["Type"]["Name"] == "SHT_PROGBITS"]
    section = next(s for s in sections if s["Address"] <= symbol["Value"] < s["Address"] + s["Size"])
    offset = symbol["Value"] - section["Address"] + section["Offset"]
    return symbol["Value"], path.read_bytes()[offset:offset + size]


def readobj_load_extent(path: Path) -> tuple[int, int]:
    """(lowest vaddr, highest vaddr + memsz) over the PT_LOAD program headers."""
    headers = [h["ProgramHeader"] for h in _readobj(path, "--program-headers")["ProgramHeaders"]]
    loads = [h for h in headers if h["Type"]["Name"] == "PT_LOAD"]
    return (min(h["VirtualAddress"] for h in loads),
            max(h["VirtualAddress"] + h["MemSize"] for h in loads))


@dataclass
class Kernel:
    """A kernel symbol of a loaded executable, as softhsa reports it."""

    kernel_object: int
    kernarg_size: int
    group_size: int
    private_size: int


class Loader:
    """Loader and dispatch helpers; every status-returning call goes through `Libhsa.call`."""

    def __init__(self, session: SoftHsa):
        self.session = session
        self.hsa, self.ffi, self.lib = session.hsa, session.ffi, session.lib
        self._callbacks: list = []  # queue error callbacks must outlive their queues

    def gpus(self) -> list:
        return self.session.gpus()

    def cpus(self) -> list:
        return self.session.cpus()

    def pool(self, agent, flag: int):
        """The agent's first pool whose global flags include `flag`."""
        flags = C.HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS
        return next(pool for pool in self.session.pools(agent)
                    if self.session.pool_info(pool, flags, "uint32_t") & flag)

    def allocate(self, pool, size: int):
        status, pointer = self.session.allocate(pool, size)
        self.hsa.check("hsa_amd_memory_pool_allocate", status)
        return pointer

    # ---- executables ----
    def load(self, data: bytes, agent):
        """Reader -> executable -> load on `agent` -> freeze, as IREE does; the reader is destroyed."""
        reader = self.ffi.new("hsa_code_object_reader_t*")
        self.hsa.call("hsa_code_object_reader_create_from_memory", data, len(data), reader)
        executable = self.ffi.new("hsa_executable_t*")
        try:
            self.hsa.call("hsa_executable_create_alt", C.HSA_PROFILE_FULL,
                          C.HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, self.ffi.NULL, executable)
            try:
                self.hsa.call("hsa_executable_load_agent_code_object", executable[0], agent, reader[0],
                              self.ffi.NULL, self.ffi.NULL)
                self.hsa.call("hsa_executable_freeze", executable[0], self.ffi.NULL)
            except HsaError:
                self.hsa.call("hsa_executable_destroy", executable[0])
                raise
        finally:
            self.hsa.call("hsa_code_object_reader_destroy", reader[0])
        return executable[0]

    def symbol(self, executable, name: str, agent):
        symbol = self.ffi.new("hsa_executable_symbol_t*")
        agent_ptr = self.ffi.new("hsa_agent_t*", {"handle": agent.handle})
        self.hsa.call("hsa_executable_get_symbol_by_name", executable, name.encode(), agent_ptr, symbol)
        return symbol[0]

    def symbol_info(self, symbol, attribute: int, ctype: str):
        value = self.ffi.new(f"{ctype}*")
        self.hsa.call("hsa_executable_symbol_get_info", symbol, attribute, value)
        return value[0]

    def kernel(self, executable, name: str, agent) -> Kernel:
        symbol = self.symbol(executable, f"{name}.kd", agent)
        values = [self.symbol_info(symbol, getattr(C, f"HSA_EXECUTABLE_SYMBOL_INFO_{attribute}"), ctype)
                  for attribute, ctype in [("KERNEL_OBJECT", "uint64_t"),
                                           ("KERNEL_KERNARG_SEGMENT_SIZE", "uint32_t"),
                                           ("KERNEL_GROUP_SEGMENT_SIZE", "uint32_t"),
                                           ("KERNEL_PRIVATE_SEGMENT_SIZE", "uint32_t")]]
        return Kernel(*values)

    # ---- queues and dispatch ----
    def queue(self, agent, on_error=None):
        """A queue of 64 packets; `on_error(status)` is its error callback."""
        callback = None
        if on_error is not None:
            callback = self.ffi.callback("void(hsa_status_t, hsa_queue_t*, void*)",
                                         lambda status, _queue, _data: on_error(status))
            self._callbacks.append(callback)
        return self.session.queue(agent, callback=callback)

    def dispatch(self, queue, kernel_object: int, grid, workgroup, kernarg_address, group: int = 0,
                 private: int = 0, timeout_ns: int = 5_000_000_000) -> bool:
        """Submit one kernel-dispatch packet and wait for its completion signal; False on timeout."""
        done = self.session.signal(1)
        index = self.lib.hsa_queue_add_write_index_scacq_screl(queue, 1)
        packets = self.ffi.cast("hsa_kernel_dispatch_packet_t*", queue.base_address)
        packet = packets[index % queue.size]
        packet.workgroup_size_x, packet.workgroup_size_y, packet.workgroup_size_z = workgroup
        packet.grid_size_x, packet.grid_size_y, packet.grid_size_z = grid
        packet.private_segment_size, packet.group_segment_size = private, group
        packet.kernel_object = kernel_object
        packet.kernarg_address = kernarg_address
        packet.completion_signal = done
        header = ((C.HSA_PACKET_TYPE_KERNEL_DISPATCH << C.HSA_PACKET_HEADER_TYPE)
                  | (C.HSA_FENCE_SCOPE_SYSTEM << C.HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
                  | (C.HSA_FENCE_SCOPE_SYSTEM << C.HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE))
        setup = 3 << C.HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS
        # header and setup share one 32-bit store, made last so the packet is whole when it is seen.
        self.ffi.cast("uint32_t*", self.ffi.addressof(packet))[0] = header | (setup << 16)
        self.lib.hsa_signal_store_screlease(queue.doorbell_signal, index)
        return self.lib.hsa_signal_wait_scacquire(done, C.HSA_SIGNAL_CONDITION_LT, 1, timeout_ns,
                                                  C.HSA_WAIT_STATE_BLOCKED) < 1

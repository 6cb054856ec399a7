"""softhsa runs AMDGPU machine code (tests/softhsa/src/isa.c): kernels dispatched on a gfx942 agent
with SOFTHSA_EXECUTE=1 execute their own instructions, and the bytes they write are compared with
numpy.

- `saxpy` (kernels/saxpy.s): hand-written assembly, assembled by llvm-mc-19 and linked by
  ld.lld-19: SMEM kernarg loads, SOP2/SOPC/SOP1 (saveexec), VOPC, VOP2 with a literal, VOP3
  (v_fma_f32), GLOBAL loads and stores with an SGPR base, a partial last wave masked by EXEC.
- `vadd` (kernels/vadd.cl): what clang-19 compiles for gfx942 (v_lshl_or_b32, v_lshlrev_b64,
  v_lshl_add_u64, flat 64-bit addresses); then the same code object with its one v_add_f32
  patched into v_sub_f32 (the VOP2 opcode field, 1 -> 2, per the MI300 ISA manual) computes
  a - b: the interpreter runs the code object's bytes, nothing else.
- Errors: an access outside every allocation stops the queue with
  HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION, an instruction the interpreter does not run with
  HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION (both as the queue error, naming the address on stderr).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.softhsa.kernels import KERNELS_DIR, compile_kernel

ILLEGAL_INSTRUCTION = 42  # hsa_ext_amd.h
APERTURE_VIOLATION = 41

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("llvm-mc-19", "ld.lld-19", "clang-19")),
    reason="llvm-mc-19, ld.lld-19 and clang-19 build the kernels")


def assemble(source: Path, out_dir: Path, cpu: str = "gfx942") -> Path:
    obj, hsaco = out_dir / f"{source.stem}.o", out_dir / f"{source.stem}.hsaco"
    subprocess.run(["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", f"-mcpu={cpu}", "-filetype=obj",
                    "-I", str(source.parent),
                    str(source), "-o", str(obj)], check=True, capture_output=True)
    subprocess.run(["ld.lld-19", "-shared", str(obj), "-o", str(hsaco)], check=True,
                   capture_output=True)
    return hsaco


class Array:
    """A device allocation seen as a numpy array (softhsa device memory is host memory)."""

    def __init__(self, hsa, pool, values: np.ndarray):
        self.hsa = hsa
        self.ptr = hsa.allocate(pool, max(values.nbytes, 4))
        self.array = np.frombuffer(hsa.ffi.buffer(self.ptr, values.nbytes), values.dtype)
        self.array[:] = values

    @property
    def address(self) -> int:
        return int(self.hsa.ffi.cast("uintptr_t", self.ptr))


def dispatch(gpu, hsaco: Path, name: str, kernargs: bytes, count: int, workgroup: int = 64,
             errors: list | None = None, timeout_ns: int = 10_000_000_000) -> bool:
    hsa, agent, kernarg_ptr, _ = gpu
    executable = hsa.load(hsaco.read_bytes(), agent)
    try:
        kernel = hsa.kernel(executable, name, agent)
        hsa.ffi.memmove(kernarg_ptr, kernargs, len(kernargs))
        queue = hsa.queue(agent, on_error=errors.append) if errors is not None else \
            hsa.queue(agent)
        return hsa.dispatch(queue, kernel.kernel_object, (count, 1, 1), (workgroup, 1, 1),
                            kernarg_ptr, group=kernel.group_size, private=kernel.private_size,
                            timeout_ns=timeout_ns)
    finally:
        hsa.hsa.call("hsa_executable_destroy", executable)


def quarters(n: int, seed: int) -> np.ndarray:
    """Small multiples of 1/4: every sum and product below is exact in f32, fused or not."""
    return (np.random.default_rng(seed).integers(-64, 64, n) / 4).astype(np.float32)


@pytest.mark.parametrize("n, workgroup", [(1000, 64), (1000, 128), (64, 64), (1, 64), (0, 64)])
def test_saxpy_assembly(gpu, tmp_path, n, workgroup):
    hsa, _, _, pool = gpu
    x, y = Array(hsa, pool, quarters(n + 1, 1)), Array(hsa, pool, quarters(n + 1, 2))
    out = Array(hsa, pool, np.full(n + 1, 7.0, np.float32))
    a = np.float32(-2.5)
    kernargs = struct.pack("<QQQfI", x.address, y.address, out.address, a, n)
    hsaco = assemble(KERNELS_DIR / "saxpy.s", tmp_path)
    # The grid covers n rounded up to the workgroup: lanes past n are masked by the kernel.
    grid = max(workgroup, -(-n // workgroup) * workgroup)
    assert dispatch(gpu, hsaco, "saxpy", kernargs, grid, workgroup)
    expected = np.append(a * x.array[:n] + y.array[:n], np.float32(7.0))
    np.testing.assert_array_equal(out.array, expected)


def _vadd(gpu, tmp_path, patch_sub: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    hsa, _, _, pool = gpu
    n = 300
    a, b = Array(hsa, pool, quarters(n, 3)), Array(hsa, pool, quarters(n, 4))
    c = Array(hsa, pool, np.zeros(n, np.float32))
    hsaco = compile_kernel(KERNELS_DIR / "vadd.cl", "gfx942", tmp_path)
    if patch_sub:
        data = bytearray(hsaco.read_bytes())
        text = subprocess.run(["llvm-objdump-19", "-d", "--mcpu=gfx942", str(hsaco)],
                              capture_output=True, text=True, check=True).stdout
        adds = [line for line in text.splitlines() if line.strip().startswith("v_add_f32_e32")]
        assert len(adds) == 1, adds
        address = int(adds[0].split("//")[1].split(":")[0], 16)
        offset = _file_offset(hsaco, address)
        word = struct.unpack_from("<I", data, offset)[0]
        assert (word >> 25) & 0x3F == 1  # VOP2 v_add_f32
        struct.pack_into("<I", data, offset, (word & ~(0x3F << 25)) | (2 << 25))  # v_sub_f32
        hsaco = tmp_path / "vsub.hsaco"
        hsaco.write_bytes(bytes(data))
    kernargs = struct.pack("<QQQI", a.address, b.address, c.address, n)
    assert dispatch(gpu, hsaco, "vadd", kernargs, 320)
    return a.array, b.array, c.array


def _file_offset(hsaco: Path, address: int) -> int:
    """The file offset of a virtual address in the code object (its .text section)."""
    out = subprocess.run(["llvm-readobj-19", "--sections", str(hsaco)], capture_output=True,
                         text=True, check=True).stdout
    sections = out.split("Section {")
    for section in sections:
        if "Name: .text" in section:
            fields = dict(line.strip().split(": ", 1) for line in section.splitlines()
                          if ": " in line and line.strip().split(": ")[0] in ("Address", "Offset"))
            return address - int(fields["Address"], 16) + int(fields["Offset"], 16)
    raise AssertionError("no .text section")


def test_clang_compiled_vadd(gpu, tmp_path):
    a, b, c = _vadd(gpu, tmp_path, patch_sub=False)
    np.testing.assert_array_equal(c, a + b)


def test_patching_one_instruction_changes_the_result_as_predicted(gpu, tmp_path):
    a, b, c = _vadd(gpu, tmp_path, patch_sub=True)
    np.testing.assert_array_equal(c, a - b)


def test_access_outside_every_allocation_is_an_aperture_violation(gpu, tmp_path):
    hsa, _, _, pool = gpu
    x, y = Array(hsa, pool, quarters(64, 5)), Array(hsa, pool, quarters(64, 6))
    errors: list = []
    kernargs = struct.pack("<QQQfI", x.address, y.address, 0x10, 1.0, 64)  # out: address 16
    assert not dispatch(gpu, assemble(KERNELS_DIR / "saxpy.s", tmp_path), "saxpy", kernargs, 64,
                        errors=errors, timeout_ns=2_000_000_000)
    assert errors == [APERTURE_VIOLATION]


def test_unknown_instruction_stops_the_queue(gpu, tmp_path, capfd):
    original = (KERNELS_DIR / "saxpy.s").read_text()
    source = original.replace("v_fma_f32 v7, s14, v5, v6", "v_sin_f32_e32 v7, v5")
    assert source != original
    path = tmp_path / "sin.s"
    path.write_text(source)
    errors: list = []
    hsa, _, _, pool = gpu
    x, y = Array(hsa, pool, quarters(64, 7)), Array(hsa, pool, quarters(64, 8))
    out = Array(hsa, pool, np.zeros(64, np.float32))
    kernargs = struct.pack("<QQQfI", x.address, y.address, out.address, 1.0, 64)
    hsaco = assemble(path, tmp_path)
    capfd.readouterr()
    assert not dispatch(gpu, hsaco, "saxpy", kernargs, 64, errors=errors,
                        timeout_ns=2_000_000_000)
    assert errors == [ILLEGAL_INSTRUCTION]
    # One line naming the instruction (its mnemonic) and where it is in the code object.
    text = subprocess.run(["llvm-objdump-19", "-d", "--mcpu=gfx942", str(hsaco)],
                          capture_output=True, text=True, check=True).stdout
    line = next(line for line in text.splitlines() if "v_sin_f32" in line)
    offset = int(line.split("//")[1].split(":")[0], 16)  # its address in the loaded image
    message = [m for m in capfd.readouterr().err.splitlines() if "cannot run" in m]
    assert len(message) == 1, message
    assert "cannot run v_sin_f32 (VOP1" in message[0]
    assert f"(code offset 0x{offset:x})" in message[0], (message, hex(offset))

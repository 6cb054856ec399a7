"""amdgpu executables on softhsa: modules compiled by iree-compile for gfx942 (and gfx90a, the wrong
ISA) loaded through the HSA loader on both gfx942 GPUs of the softhsa machine.

The truth for symbol info is LLVM's own decoding of the code object (`llvm-readobj-19 --notes`):
kernarg size and alignment, LDS and scratch sizes of every kernel must be what HSA reports for its
`.kd` symbol on each GPU; the export table must be what the AMD1 container declares."""

from __future__ import annotations

import re
import subprocess

import pytest

from amdgpu_cli.drivers.amdgpu.executable import AmdgpuExecutable
from amdgpu_cli.formats.amdgpu_executable import parse_amdgpu_executable
from amdgpu_cli.formats.vmfb import load_vmfb
from amdgpu_cli.hal.enums import HalError

from .softhsa_agents import UUIDS, private_driver

MODEL = """
func.func @add(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %r = arith.addf %a, %b : tensor<?xf32>
  return %r : tensor<?xf32>
}
func.func @mul(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %r = arith.mulf %a, %b : tensor<64xf32>
  return %r : tensor<64xf32>
}
"""
METADATA_FIELDS = (".name", ".symbol", ".kernarg_segment_size", ".kernarg_segment_align",
                   ".group_segment_fixed_size", ".private_segment_fixed_size")


def compile_amd1(tmp_path, target: str, source: str = MODEL) -> bytes:
    """The AMD1 executable blob of a module compiled for `target` (its one AMD1 rodata)."""
    mlir = tmp_path / f"m_{target}.mlir"
    vmfb = tmp_path / f"m_{target}.vmfb"
    mlir.write_text(source)
    subprocess.run(["iree-compile", "--iree-hal-target-device=amdgpu",
                    f"--iree-rocm-target={target}", str(mlir), "-o", str(vmfb)], check=True)
    blobs = [bytes(s.data) for s in load_vmfb(vmfb).rodata if bytes(s.data[:4]) == b"AMD1"]
    assert len(blobs) == 1
    return blobs[0]


def llvm_kernels(code_object: bytes, tmp_path) -> dict[str, dict]:
    """{kernel name: {metadata field: text, "args": [(offset, size, value_kind)]}} as
    llvm-readobj-19 decodes NT_AMDGPU_METADATA."""
    path = tmp_path / "code_object.elf"
    path.write_bytes(code_object)
    text = subprocess.run(["llvm-readobj-19", "--notes", str(path)], check=True,
                          capture_output=True, text=True).stdout
    kernels = {}
    for chunk in re.split(r"^  - ", text.split("amdhsa.kernels:", 1)[1], flags=re.M)[1:]:
        fields = dict(re.findall(r"^\s{0,4}(\.[a-z_]+):\s+(\S+)$", "    " + chunk, flags=re.M))
        if ".name" in fields:  # not a list item of a later key (amdhsa.version: - 1 - 2)
            kernels[fields[".name"]] = {k: fields[k] for k in METADATA_FIELDS}
            kernels[fields[".name"]]["args"] = [
                (int(offset), int(size), kind) for offset, size, kind in re.findall(
                    r"\.offset:\s+(\d+)\n\s+\.size:\s+(\d+)\n\s+\.value_kind:\s+(\S+)", chunk)]
    return kernels


@pytest.fixture(scope="module")
def driver(softhsa_lib, tmp_path_factory):
    yield from private_driver(softhsa_lib, tmp_path_factory.mktemp("softhsa_executable"))


@pytest.fixture(scope="module")
def blobs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("executables")
    return {target: compile_amd1(tmp, target) for target in ("gfx942", "gfx90a")}


@pytest.fixture
def device(driver):
    device = driver.create_device_by_path("0,1", [])
    yield device
    device.close()


def test_symbol_info_matches_the_code_object_metadata(device, blobs, tmp_path):
    executable = device.create_executable_cache().prepare_executable("gfx942", blobs["gfx942"])
    assert isinstance(executable, AmdgpuExecutable)
    definition = parse_amdgpu_executable(blobs["gfx942"])
    expected = llvm_kernels(definition.code_object, tmp_path)
    names = [e.symbol_name.removesuffix(".kd") for e in definition.exports]
    assert [e.name for e in executable.exports] == names
    assert len(names) >= 2 and set(names) <= set(expected)
    objects = set()
    for physical in device.physical_devices:
        for ordinal, name in enumerate(names):
            kernel = executable.kernel(physical.ordinal, ordinal)
            llvm = expected[name]
            assert (kernel.symbol, kernel.kernarg_segment_size, kernel.kernarg_segment_align,
                    kernel.group_segment_size, kernel.private_segment_size) == (
                llvm[".symbol"], int(llvm[".kernarg_segment_size"]),
                int(llvm[".kernarg_segment_align"]), int(llvm[".group_segment_fixed_size"]),
                int(llvm[".private_segment_fixed_size"]))
            export = definition.exports[ordinal]
            assert (kernel.workgroup_size, kernel.binding_count, kernel.constant_count) == (
                tuple(export.workgroup_size), len(export.binding_flags), export.constant_count)
            assert executable.exports[ordinal].workgroup_size == tuple(export.workgroup_size)
            objects.add(kernel.kernel_object)
    # Each GPU has its own loaded copy: one distinct kernel object per (GPU, export).
    assert len(objects) == 2 * len(names) and 0 not in objects
    assert executable.lookup_export(names[1]) == 1


@pytest.mark.parametrize("executable_format, expected", [
    ("gfx942", True), ("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", True),
    ("gfx942:xnack-", True), ("gfx942:xnack+", False), ("gfx942:sramecc-", False),
    ("gfx9-4-generic", True), ("gfx90a", False), ("gfx1100", False),
    ("embedded-elf-x86_64", False), ("gfxbogus", False),
])
def test_executable_formats(device, executable_format, expected):
    assert device.query_i64("hal.executable.format", executable_format) == (True, int(expected))
    assert device.query_i64("hal.device.id", "amdgpu*") == (True, 1)


def test_code_object_for_another_isa_is_incompatible(device, blobs):
    cache = device.create_executable_cache()
    for executable_format in ("gfx90a", "gfx942"):  # the format told, or lied about
        with pytest.raises(HalError) as info:
            cache.prepare_executable(executable_format, blobs["gfx90a"])
        message = info.value.one_line()
        assert message.startswith("INCOMPATIBLE; ") and "\n" not in message
        assert "gfx90a" in message and "gfx942" in message and UUIDS[0] in message
    # Nothing was left half-loaded: the right blob still loads and the device closes cleanly.
    assert cache.prepare_executable("gfx942", blobs["gfx942"]).export_count >= 2


def test_bad_inputs(device, blobs):
    cache = device.create_executable_cache()
    with pytest.raises(HalError) as info:
        cache.prepare_executable("embedded-elf-x86_64", blobs["gfx942"])
    assert info.value.status == "NOT_FOUND"
    with pytest.raises(HalError) as info:
        cache.prepare_executable("gfx942", blobs["gfx942"][:200])
    assert info.value.status == "INVALID_ARGUMENT"
    with pytest.raises(HalError) as info:
        cache.prepare_executable("gfx942", blobs["gfx942"], (1, 2))
    assert info.value.status == "UNIMPLEMENTED"


def test_raw_hsaco_from_clang(device, tmp_path):
    """A raw code object (no AMD1 header): exports from its metadata, as reference §6.2 says."""
    source = tmp_path / "k.cl"
    source.write_text("__kernel __attribute__((reqd_work_group_size(32, 1, 1)))\n"
                      "void scale(__global float* out, __global const float* in, uint n, float s)"
                      " { uint i = __builtin_amdgcn_workitem_id_x(); if (i < n) out[i] = in[i] * s;"
                      " }\n")
    obj, hsaco = tmp_path / "k.o", tmp_path / "k.hsaco"
    subprocess.run(["clang-19", "-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa",
                    "-mcpu=gfx942", "-nogpulib", "-O2", "-c", str(source), "-o", str(obj)],
                   check=True)
    subprocess.run(["ld.lld-19", "-shared", str(obj), "-o", str(hsaco)], check=True)
    executable = device.create_executable_cache().prepare_executable("gfx942",
                                                                      hsaco.read_bytes())
    assert [(e.name, e.workgroup_size, e.binding_count, e.constant_count)
            for e in executable.exports] == [("scale", (32, 1, 1), 2, 2)]
    llvm = llvm_kernels(hsaco.read_bytes(), tmp_path)["scale"]
    kernel = executable.kernel(1, 0)
    assert kernel.kernarg_segment_size == int(llvm[".kernarg_segment_size"])
    executable.close()
    executable.close()  # idempotent
    with pytest.raises(HalError):
        executable.kernel(0, 0)


def test_device_close_destroys_executables(driver, blobs):
    device = driver.create_device_by_path("0", [])
    executable = device.create_executable_cache().prepare_executable("gfx942", blobs["gfx942"])
    device.close()
    assert executable._closed
    again = driver.create_device_by_path("0", [])  # a new device in the same process
    try:
        assert again.create_executable_cache().prepare_executable(
            "gfx942", blobs["gfx942"]).export_count == executable.export_count
    finally:
        again.close()

"""parse_amdgpu_executable against IREE's own tools, llvm-readobj-19 and clang-19 output.

Real AMD1 executables come from iree-compile 3.13.0 (`--iree-hal-target-device=amdgpu`) at test
time, for gfx942 and gfx1100: a static matmul (3 bindings, no constants) and a dynamic-shape
elementwise add (3 bindings, 4 constants). The independent truths:
- `iree-dump-module --output=disassembly` prints the executable's rodata segment (the AMD1 blob,
  as hex), the export-name strings and, at the dispatch, how many constants and bindings the VM
  passes (`hal.command_buffer.dispatch segments[..., constants, bindings]`);
- `--iree-hal-dump-executable-binaries-to` writes the code object iree-compile embedded;
- the code object's NT_AMDGPU_METADATA note (located by llvm-readobj-19, decoded by msgpack) gives
  symbols, required workgroup sizes and argument access.
Raw HSACO input is checked against kernels compiled here with clang-19, and corrupt AMD1 blobs
(truncations, byte flips) must raise our error type only.

The compiled cases come from tests/amdgpu_executables.py (shared with test_kernargs.py).
"""

from __future__ import annotations

import random
import shutil
import struct
from pathlib import Path

import pytest

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.formats.amdgpu_executable import (
    BINDING_READ_ONLY,
    AmdgpuExecutableError,
    parse_amdgpu_executable,
)
from tests.amdgpu_executables import (
    CASE_IDS,
    CASES,
    Compiled,
    compiled_cases,
    iree_compile,
    iree_dump_module,
)
from tests.softhsa.kernels import compile_kernel, readobj_metadata

needs_iree = pytest.mark.skipif(not (iree_compile() and iree_dump_module()),
                                reason="iree-compile / iree-dump-module (IREE 3.13.0) not on PATH")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[tuple[str, str], Compiled]:
    return compiled_cases(tmp_path_factory)


@needs_iree
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_amd1_container_matches_iree_tools(compiled, case):
    model, target = case
    built = compiled[case]
    executable = parse_amdgpu_executable(built.blob)
    assert executable.isa == target
    assert executable.code_object == built.hsaco.read_bytes()
    assert executable.code_object_info.target == target
    (export,) = executable.exports
    (kernel,) = built.metadata["amdhsa.kernels"]
    assert export.symbol_name == kernel[".symbol"] == kernel[".name"] + ".kd"
    assert export.name.encode() in built.rodata_strings  # the name the VM looks the function up by
    assert (export.constant_count, export.binding_count) == built.dispatch_counts
    assert export.workgroup_size == tuple(kernel[".reqd_workgroup_size"])
    buffers = [arg for arg in kernel[".args"] if arg[".value_kind"] == "global_buffer"]
    assert [bool(flags & BINDING_READ_ONLY) for flags in export.binding_flags] == [
        arg.get(".actual_access") == "read_only" for arg in buffers]


@needs_iree
def test_measured_counts_of_the_reference(compiled):
    """Reference §6.2/§6.1 [measured]: binding_flags [3, 3, 2]; the dynamic add has 4 constants."""
    matmul = parse_amdgpu_executable(compiled["matmul", "gfx942"].blob).exports[0]
    assert matmul.binding_flags == (3, 3, 2) and matmul.constant_count == 0
    add = parse_amdgpu_executable(compiled["dynamic", "gfx1100"].blob).exports[0]
    assert add.binding_count == 3 and add.constant_count == 4


@needs_iree
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_raw_hsaco_of_the_same_kernel_gives_the_same_export(compiled, case):
    built = compiled[case]
    wrapped = parse_amdgpu_executable(built.blob).exports[0]
    raw = parse_amdgpu_executable(built.hsaco.read_bytes())
    assert raw.code_object == built.hsaco.read_bytes()
    assert raw.isa == raw.code_object_info.target_id
    (export,) = raw.exports
    assert (export.symbol_name, export.workgroup_size, export.constant_count) == (
        wrapped.symbol_name, wrapped.workgroup_size, wrapped.constant_count)
    assert export.binding_flags == tuple(flags & BINDING_READ_ONLY for flags in wrapped.binding_flags)


RAW_SOURCE = """
__kernel __attribute__((reqd_work_group_size(64, 2, 1)))
void fixed(__global const float* restrict in, __global float* restrict out, float scale, uint n, ulong m) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) out[i] = in[i] * scale + (float)m;
}
__kernel void dynamic(__global uint* out) {
  out[__builtin_amdgcn_workitem_id_x()] = 1;
}
__kernel void narrow(__global uchar* out, uchar value) {
  out[__builtin_amdgcn_workitem_id_x()] = value;
}
"""


@pytest.fixture(scope="module")
def raw_kernels(tmp_path_factory) -> Path:
    if shutil.which("clang-19") is None:
        pytest.skip("clang-19 not on PATH")
    tmp = tmp_path_factory.mktemp("raw")
    source = tmp / "raw.cl"
    source.write_text(RAW_SOURCE)
    return compile_kernel(source, "gfx942", tmp)


def test_raw_hsaco_rejects_a_by_value_argument_that_is_not_whole_constants(raw_kernels):
    """`narrow` takes a 1-byte by_value argument: IREE's projection rejects it, naming the kernel."""
    with pytest.raises(AmdgpuExecutableError, match=r"narrow argument 1 .* 1 bytes") as raised:
        parse_amdgpu_executable(raw_kernels.read_bytes())
    assert raised.value.status == "INVALID_ARGUMENT"


@pytest.fixture(scope="module")
def raw_whole(tmp_path_factory) -> Path:
    if shutil.which("clang-19") is None:
        pytest.skip("clang-19 not on PATH")
    tmp = tmp_path_factory.mktemp("raw_whole")
    source = tmp / "whole.cl"
    source.write_text(RAW_SOURCE.split("__kernel void narrow")[0])
    return compile_kernel(source, "gfx942", tmp)


def test_raw_hsaco_exports_follow_the_metadata(raw_whole):
    executable = parse_amdgpu_executable(raw_whole.read_bytes())
    kernels = {k[".symbol"]: k for k in readobj_metadata(raw_whole)["amdhsa.kernels"]}
    assert {e.symbol_name for e in executable.exports} == set(kernels) == {"fixed.kd", "dynamic.kd"}
    for export in executable.exports:
        args = [a for a in kernels[export.symbol_name][".args"] if not a[".value_kind"].startswith("hidden_")]
        buffers = [a for a in args if a[".value_kind"] == "global_buffer"]
        values = [a for a in args if a[".value_kind"] == "by_value"]
        assert export.binding_count == len(buffers)
        assert export.constant_count == sum(a[".size"] for a in values) // 4
        assert [bool(f & BINDING_READ_ONLY) for f in export.binding_flags] == [
            (a.get(".actual_access") or a.get(".access")) == "read_only" for a in buffers]
        expected_size = kernels[export.symbol_name].get(".reqd_workgroup_size", [1, 1, 1])
        assert export.workgroup_size == tuple(expected_size)
    fixed = next(e for e in executable.exports if e.symbol_name == "fixed.kd")
    # float + uint + ulong = 4 + 4 + 8 bytes = 4 constants; `in` is read-only, `out` is not.
    assert (fixed.workgroup_size, fixed.constant_count, fixed.binding_flags) == ((64, 2, 1), 4, (1, 0))
    dynamic = next(e for e in executable.exports if e.symbol_name == "dynamic.kd")
    assert dynamic.workgroup_size == (1, 1, 1)


# ---- corrupt input ------------------------------------------------------------------------------


@needs_iree
def test_header_errors(compiled):
    blob = compiled["dynamic", "gfx942"].blob
    version = bytearray(blob)
    struct.pack_into("<I", version, 4, 1)
    with pytest.raises(AmdgpuExecutableError, match="version 1") as raised:
        parse_amdgpu_executable(bytes(version))
    assert raised.value.status == "INCOMPATIBLE"
    for size, message in [(0, "content size is zero"), (len(blob), "exceeds")]:
        data = bytearray(blob)
        struct.pack_into("<Q", data, 8, size)
        with pytest.raises(AmdgpuExecutableError, match=message):
            parse_amdgpu_executable(bytes(data))
    with pytest.raises(AmdgpuExecutableError, match="64-byte AMD1 header"):
        parse_amdgpu_executable(blob[:40])
    identifier = bytearray(blob)
    identifier[64 + 4:64 + 8] = b"XXXX"
    with pytest.raises(AmdgpuExecutableError, match="file identifier"):
        parse_amdgpu_executable(bytes(identifier))


def _check_only_our_errors(data: bytes) -> None:
    try:
        parse_amdgpu_executable(data)
    except AmdgpuCliError as error:
        assert error.status in ("INVALID_ARGUMENT", "INCOMPATIBLE", "NOT_FOUND")
        assert "\n" not in error.one_line()


@needs_iree
def test_truncations_raise_only_our_error(compiled):
    blob = compiled["dynamic", "gfx1100"].blob
    for end in list(range(0, 256)) + list(range(256, len(blob), 7)):
        _check_only_our_errors(blob[:end])


@needs_iree
@pytest.mark.parametrize("seed", range(4))
def test_byte_flips_raise_only_our_error(compiled, seed):
    rng = random.Random(seed)
    blob = compiled["matmul", "gfx942"].blob
    for _ in range(300):
        data = bytearray(blob)
        for _ in range(rng.randint(1, 4)):
            position = rng.randrange(len(data)) if rng.random() < 0.5 else rng.randrange(64, min(len(data), 700))
            data[position] = rng.randrange(256)
        _check_only_our_errors(bytes(data))

"""AMD1 executables compiled at test time, with what IREE's own tools say about them.

A static matmul (3 bindings, no constants) and a dynamic-shape elementwise add (3 bindings,
4 constants), compiled by iree-compile 3.13.0 (`--iree-hal-target-device=amdgpu`) for gfx942 and
gfx1100. For each: the AMD1 blob and the rodata as `iree-dump-module --output=disassembly` lists
them, the (constants, bindings) counts the VM passes at the dispatch, the code object iree-compile
dumped and its NT_AMDGPU_METADATA (llvm-readobj-19 + msgpack). Shared by
tests/formats/test_amdgpu_executable.py and tests/drivers/amdgpu/test_kernargs.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from examples.compile import CompileError, iree_compile_binary
from tests.softhsa.kernels import readobj_metadata

MODELS = {
    "matmul": """
func.func @matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>)
                     outs(%init : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
""",
    "dynamic": """
func.func @add(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %r = arith.addf %a, %b : tensor<?xf32>
  return %r : tensor<?xf32>
}
""",
}
TARGETS = ("gfx942", "gfx1100")
CASES = [(model, target) for model in MODELS for target in TARGETS]
CASE_IDS = [f"{model}-{target}" for model, target in CASES]


def iree_compile() -> str | None:
    """iree-compile as examples/compile.py finds it, or None."""
    try:
        return iree_compile_binary()
    except CompileError:
        return None


def iree_dump_module() -> str | None:
    return os.environ.get("IREE_DUMP_MODULE") or shutil.which("iree-dump-module")


@dataclass(frozen=True)
class Compiled:
    """One module compiled for one target, with what IREE's tools say about its executable."""

    blob: bytes  # the AMD1 executable, from iree-dump-module's rodata listing
    hsaco: Path  # the code object iree-compile dumped
    rodata_strings: frozenset[bytes]  # every rodata segment's bytes
    dispatch_counts: tuple[int, int]  # (constants, bindings) the VM passes at the dispatch
    metadata: dict  # the hsaco's NT_AMDGPU_METADATA


_DISPATCH = re.compile(r"@hal\.command_buffer\.dispatch segments\[[\d, ]*?(\d+), (\d+)\]")
_RODATA = re.compile(r"^vm\.rodata\[\s*\d+\] = ([0-9A-F]*)$", re.MULTILINE)


def compiled_executable(model: str, target: str, out_dir: Path) -> Compiled:
    source = out_dir / f"{model}.mlir"
    source.write_text(MODELS[model])
    vmfb, binaries = out_dir / f"{model}-{target}.vmfb", out_dir / f"bin-{model}-{target}"
    subprocess.run([iree_compile(), "--iree-hal-target-device=amdgpu", f"--iree-rocm-target={target}",
                    f"--iree-hal-dump-executable-binaries-to={binaries}", str(source), "-o", str(vmfb)],
                   check=True, capture_output=True)
    listing = subprocess.run([iree_dump_module(), "--output=disassembly", str(vmfb)], check=True,
                             capture_output=True, text=True).stdout
    rodata = [bytes.fromhex(text) for text in _RODATA.findall(listing)]
    (blob,) = [data for data in rodata if data.startswith(b"AMD1")]
    (hsaco,) = binaries.glob("*.hsaco")
    (counts,) = _DISPATCH.findall(listing)
    return Compiled(blob, hsaco, frozenset(rodata), (int(counts[0]), int(counts[1])), readobj_metadata(hsaco))


_COMPILED: dict[tuple[str, str], Compiled] = {}


def compiled_cases(tmp_path_factory) -> dict[tuple[str, str], Compiled]:
    """Every case compiled once per test session (this module and test_kernargs share them)."""
    if not (iree_compile() and iree_dump_module()):
        pytest.skip("iree-compile / iree-dump-module (IREE 3.13.0) not on PATH")
    if not _COMPILED:
        out = tmp_path_factory.mktemp("amd1")
        _COMPILED.update({case: compiled_executable(*case, out) for case in CASES})
    return _COMPILED

"""Seed corpus of the fuzz targets: small real files, made by IREE 3.13.0's own tools.

`build_seeds(out_dir)` fills `out_dir/<target>/` for every target and returns {target: dir}. It is
deterministic and cached: files already there are kept (delete the directory to rebuild).

    vmfb               iree-compile of the tiny models below (llvm-cpu), in the polyglot ZIP form
                       and as a bare FlatBuffer (--iree-vm-emit-polyglot-zip=false)
    elf                the embedded-ELF executables (rodata starting with \\x7fELF) of those modules
    amdgpu-executable  the AMD1 executable of `add` compiled for gfx942 and gfx1100 (iree-compile
                       --iree-hal-target-device=amdgpu), plus the device library's raw code objects
                       (device_binaries/*.hsaco, built by clang from the project's own sources)
    cda1               the CDA1 executable of `add` compiled for CUDA (iree-compile
                       --iree-hal-target-device=cuda --iree-cuda-target=sm_80), plus the executables
                       of IREE's H100 captures (tests/replay/data/*_cuda.ireereplay, executable_prepare)
    ireereplay         IREE's own H100 captures (tests/replay/data/*_cuda.ireereplay)
    ireeprof           bundles iree-run-module captured from `add` (--device_profiling_mode), and
                       the project's sample bundles in profiles/samples
    input              every --input of tests/corpus RUN lines, plus hand-written grammar cases
    npy                arrays written by numpy.save (versions 1.0, 2.0, 3.0) and by our npy_bytes
    irpa               archives by iree-create-parameters (data, splats, empty) and by
                       iree-convert-parameters from the gguf/safetensors seeds (also --strip), plus
                       two archives linked into one file
    gguf               files by the gguf package's GGUFWriter (metadata of every kind, f32/f16/Q8_0,
                       a custom alignment)
    safetensors        files by safetensors.numpy.save_file (with __metadata__, an empty tensor)

Where iree-compile or iree-run-module is missing the seeds that need it are skipped, and a target
whose seed directory stays empty still runs (libFuzzer starts from an empty input).
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

__all__ = ["build_seeds"]

# A VM-only module: scalars, a loop, a branch, i64/f64 — no executables, a few hundred bytes.
SCALAR_MLIR = """
func.func @add(%a: i32, %b: i32) -> i32 {
  %c = arith.addi %a, %b : i32
  return %c : i32
}
func.func @mix(%a: i64, %b: f32, %c: f64) -> (f64, i64) {
  %bf = arith.extf %b : f32 to f64
  %s = arith.addf %bf, %c : f64
  %two = arith.constant 2 : i64
  %m = arith.muli %a, %two : i64
  return %s, %m : f64, i64
}
func.func @loop(%n: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %ni = arith.index_cast %n : i32 to index
  %r = scf.for %i = %c0 to %ni step %c1 iter_args(%acc = %z) -> (i32) {
    %ii = arith.index_cast %i : index to i32
    %odd = arith.andi %ii, %n : i32
    %c = arith.cmpi ne, %odd, %z : i32
    %v = scf.if %c -> (i32) {
      %x = arith.addi %acc, %ii : i32
      scf.yield %x : i32
    } else {
      %x = arith.subi %acc, %ii : i32
      scf.yield %x : i32
    }
    scf.yield %v : i32
  }
  return %r : i32
}
"""

# One dispatch: the smallest module with an executable.
ADD_MLIR = """
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %b : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
ADD_RUN = ["--function=add", "--input=4xf32=1 2 3 4", "--input=4xf32=2"]

PROFILE_MODES = ("queue-events,host-execution,memory-events,executable-metadata,command-region-events",
                 "queue-events")

INPUT_CASES = [
    "", "(null)", "(ignored)", "1", "-7", "0x7f", "010", "1.5", "-0.0", "1e3", "nan", "inf",
    "4xf32=1 2 3 4", "2x2xi32=[1 2][3 4]", "2x3xi8=1,2,3,4,5,6", "4xf32=1", "f32=2.5", "i1=1",
    "4xi1=1 0 1 0", "2xf16=1.5 -2", "2xbf16=3 4", "2xf64=1e300 -1e-300", "3xsi8=-1 2 -3",
    "3xui16=1 2 65535", "2xi64=9223372036854775807 -1", "2xf8E4M3FN=1 2", "2xf8E5M2=0.5 1",
    "1x0xf32", "0xi8", "4x8xf32", "2xx16=abcd 0123", "&4xi8=1 2 3 4", "4xi8=@b.bin",
    "4xi8=+b.bin", "@a.npy", "+a.npy", "*a.npy", "\"2xi32=1 2\"", "4xf32=[1, 2, 3, 4]",
]


# tool-flags: mode, filter function / min time, preset text, then the filter and interval ints.
TOOL_FLAG_SEEDS = [
    b"queue-events,host-execution\n0.5s\nmemory-events\n-1\n-1\n-1\n-1\n0",
    b"fz, command-region-events,\n20x\n# a preset\nexecutable-metadata\n3\n0\n1\n2\n5",
    b"counters\npredict_*\n\n0\n4294967296\n-1\n-1\n-3",
    b",queue-events\n1e400s\nfz\n1\n2\n3\n4\n10",
]


def _write(directory: Path, data: bytes, stem: str = "") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    name = (stem + "-" if stem else "") + hashlib.sha1(data).hexdigest()[:16]
    path = directory / name
    if not path.exists():
        path.write_bytes(data)


def _tool(name: str) -> str | None:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    return found or shutil.which(name)


def _compile(source: str, out: Path, flags: list[str]) -> Path | None:
    compiler = _tool("iree-compile")
    if compiler is None:
        return None
    if out.is_file():
        return out
    mlir = out.with_suffix(".mlir")
    mlir.write_text(source)
    proc = subprocess.run([compiler, *flags, str(mlir), "-o", str(out)], capture_output=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"iree-compile {out.name} failed: {proc.stderr.decode(errors='replace')[-500:]}")
    return out


def _rodata_blobs(vmfb: Path) -> list[bytes]:
    from amdgpu_cli.formats.vmfb import load_vmfb

    return [bytes(segment.data) for segment in load_vmfb(vmfb.read_bytes()).rodata]


def _capture_executables(path: Path) -> list[bytes]:
    """The executable data of every executable_prepare record of a .ireereplay capture."""
    from amdgpu_cli.replay.reader import ReplayFile, decode_payload
    from amdgpu_cli.replay.schema import PayloadType

    out = []
    with ReplayFile.open(path) as replay:
        for record in replay.records():
            if record.payload_type == PayloadType.EXECUTABLE_PREPARE:
                fields = decode_payload(record.payload_type, replay.payload(record))
                out.append(bytes(fields["data"]))
                del fields  # views into the mapping
    return out


def _capture(vmfb: Path, out: Path, modes: str) -> Path | None:
    runner = _tool("iree-run-module")
    if runner is None:
        return None
    if not out.is_file():
        proc = subprocess.run([runner, "--device=local-sync", f"--module={vmfb}", *ADD_RUN,
                               f"--device_profiling_mode={modes}", f"--device_profiling_output={out}"],
                              capture_output=True, timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"iree-run-module profiling capture failed: {proc.stderr.decode()[-500:]}")
    return out


def _npy_seeds() -> list[bytes]:
    import numpy as np

    from amdgpu_cli.tooling.element_types import ElementType
    from amdgpu_cli.tooling.npy import npy_bytes
    from amdgpu_cli.tooling.values import Tensor

    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, -2, 3], np.int8),
              np.array([True, False]), np.array(2.5, np.float64), np.zeros((0, 3), np.int32),
              np.arange(4, dtype=np.float16), np.arange(3, dtype=np.uint64)]
    out = []
    for i, array in enumerate(arrays):
        buffer = io.BytesIO()
        version = [(1, 0), (2, 0), (3, 0)][i % 3]
        np.lib.format.write_array(buffer, array, version=version)
        out.append(buffer.getvalue())
    out.append(out[0] + out[1])  # two arrays in one file (`*file.npy`)
    tensor = Tensor.from_bytes(ElementType.parse("i16"), [2], b"\x01\x00\xff\xff")
    out.append(npy_bytes(tensor))
    return out


def _input_seeds() -> list[bytes]:
    from bench.fuzz.targets import CCONVS

    seeds = [bytes([0]) + text.encode() for text in INPUT_CASES]
    try:
        sys.path.insert(0, str(REPO_ROOT / "tests"))
        import corpus_util

        for case in corpus_util.load_corpus():
            seeds.append(bytes([0]) + "\n".join(case.inputs).encode())
    except Exception as error:  # noqa: BLE001 - the corpus is an optional extra source
        print(f"fuzz seeds: tests/corpus skipped ({error})", file=sys.stderr)
    # A few with an explicit cconv.
    seeds.append(bytes([CCONVS.index("ri")]) + b"4xf32=1\n7")
    seeds.append(bytes([CCONVS.index("fF")]) + b"1.5\n-2e10")
    return seeds


def _gguf_seed(path: Path, alignment: int | None) -> None:
    import gguf
    import numpy as np

    writer = gguf.GGUFWriter(str(path), "llama")
    if alignment:
        writer.add_custom_alignment(alignment)
    writer.add_uint32("x.count", 3)
    writer.add_string("x.name", "seed")
    writer.add_array("x.ints", [1, 2, 3])
    writer.add_array("x.strings", ["a", "bc"])
    writer.add_float64("x.f64", 0.5)
    writer.add_bool("x.flag", True)
    writer.add_tensor("w", np.arange(6, dtype=np.float32).reshape(2, 3))
    writer.add_tensor("h", np.arange(3, dtype=np.float16))
    writer.add_tensor("q", np.arange(68, dtype=np.uint8).reshape(1, 68), raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _parameter_seeds(work: Path, dirs: dict[str, Path]) -> None:
    """Seeds of the irpa/gguf/safetensors targets; each source is skipped where its tool is missing."""
    import numpy as np

    made: list[Path] = []
    try:
        for i, alignment in enumerate((None, 64)):
            path = work / f"seed{i}.gguf"
            if not path.is_file():
                _gguf_seed(path, alignment)
            made.append(path)
    except ImportError as error:
        print(f"fuzz seeds: gguf skipped ({error})", file=sys.stderr)
    try:
        from safetensors.numpy import save_file

        path = work / "seed.safetensors"
        if not path.is_file():
            save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, -2], np.int64),
                       "e": np.zeros((0, 2), np.float16)}, str(path), metadata={"k": "v"})
        made.append(path)
    except ImportError as error:
        print(f"fuzz seeds: safetensors skipped ({error})", file=sys.stderr)
    for path in made:
        _write(dirs[path.suffix[1:]], path.read_bytes(), path.stem)

    create, convert = _tool("iree-create-parameters"), _tool("iree-convert-parameters")
    archives = []
    if create is not None:
        for name, flags in (("empty", []),
                            ("mixed", ["--data=a=16xi8=5", "--data=z=3xi8", "--splat=s=4xf32=1.5",
                                       "--splat=t=2xi16=7"]),
                            ("splats", ["--splat=x=8xi8=1", "--splat=y=2xf64=2.0"])):
            path = work / f"{name}.irpa"
            if not path.is_file():
                subprocess.run([create, *flags, f"--output={path}"], capture_output=True, timeout=60, check=True)
            archives.append(path)
    if convert is not None and made:
        for name, extra in (("converted", []), ("stripped", ["--strip"])):
            path = work / f"{name}.irpa"
            if not path.is_file():
                subprocess.run([convert, *(f"--parameters={p}" for p in made), *extra, f"--output={path}"],
                               capture_output=True, timeout=60, check=True)
            archives.append(path)
    for path in archives:
        _write(dirs["irpa"], path.read_bytes(), path.stem)
    if len(archives) >= 2:  # the first archive links to the second, appended after it
        first = bytearray(archives[1].read_bytes())
        first[16:24] = len(first).to_bytes(8, "little")
        _write(dirs["irpa"], bytes(first) + archives[-1].read_bytes(), "linked")


def build_seeds(out_dir) -> dict[str, Path]:
    from bench.fuzz.targets import ALL_TARGETS

    out = Path(out_dir)
    dirs = {name: out / name for name in ALL_TARGETS}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    work = out / "_build"
    work.mkdir(parents=True, exist_ok=True)

    cpu = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
           "--iree-llvmcpu-target-cpu=generic"]
    for name, source in (("scalar", SCALAR_MLIR), ("add", ADD_MLIR)):
        for form, extra in (("zip", []), ("flat", ["--iree-vm-emit-polyglot-zip=false"])):
            vmfb = _compile(source, work / f"{name}-{form}.vmfb", cpu + extra)
            if vmfb is None:
                continue
            _write(dirs["vmfb"], vmfb.read_bytes(), f"{name}-{form}")
            for blob in _rodata_blobs(vmfb):
                if blob.startswith(b"\x7fELF"):
                    _write(dirs["elf"], blob, name)

    for target in ("gfx942", "gfx1100"):
        vmfb = _compile(ADD_MLIR, work / f"add-{target}.vmfb",
                        ["--iree-hal-target-device=amdgpu", f"--iree-rocm-target={target}"])
        if vmfb is not None:
            for blob in _rodata_blobs(vmfb):
                if blob.startswith(b"AMD1"):
                    _write(dirs["amdgpu-executable"], blob, f"amd1-{target}")
    for hsaco in sorted((REPO_ROOT / "device_binaries").glob("*gfx942.hsaco")) + sorted(
            (REPO_ROOT / "device_binaries").glob("*gfx11-generic.hsaco")):
        _write(dirs["amdgpu-executable"], hsaco.read_bytes(), hsaco.stem.rsplit("--", 1)[-1])

    vmfb = _compile(ADD_MLIR, work / "add-cuda.vmfb", ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"])
    if vmfb is not None:
        for blob in _rodata_blobs(vmfb):
            if blob.startswith(b"CDA1"):
                _write(dirs["cda1"], blob, "cda1-add")
    for capture in sorted((REPO_ROOT / "tests" / "replay" / "data").glob("*_cuda.ireereplay")):
        for i, blob in enumerate(_capture_executables(capture)):
            _write(dirs["cda1"], blob, f"{capture.stem}-{i}")
        _write(dirs["ireereplay"], capture.read_bytes(), capture.stem)

    add = work / "add-zip.vmfb"
    if add.is_file():
        for i, modes in enumerate(PROFILE_MODES):
            bundle = _capture(add, work / f"add-{i}.ireeprof", modes)
            if bundle is not None:
                _write(dirs["ireeprof"], bundle.read_bytes(), f"add-{i}")
    for sample in sorted((REPO_ROOT / "profiles" / "samples").glob("*.ireeprof")):
        _write(dirs["ireeprof"], sample.read_bytes(), sample.stem)
    for path in dirs["ireeprof"].iterdir():
        _write(dirs["ireeprof-reports"], path.read_bytes(), path.name.rsplit("-", 1)[0])

    for data in _npy_seeds():
        _write(dirs["npy"], data, "npy")
    for data in _input_seeds():
        _write(dirs["input"], data, "input")
    for data in TOOL_FLAG_SEEDS:
        _write(dirs["tool-flags"], data, "flags")
    _parameter_seeds(work, dirs)
    return dirs


if __name__ == "__main__":
    for target, directory in build_seeds(sys.argv[1] if len(sys.argv) > 1 else "build/fuzz/seeds").items():
        files = list(directory.iterdir())
        print(f"{target}\t{len(files)} seeds\t{sum(f.stat().st_size for f in files)} bytes\t{directory}")

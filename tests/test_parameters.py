"""--parameters / --parameter_mode and the io_parameters module against iree-run-module.

Models are built as users build them: (1) MLIR globals bound to `#flow.parameter.named<"model"::
"key">`, compiled by iree-compile, their values in a .safetensors file (real data) or an .irpa
written by iree-create-parameters (zeroed data and splats; 3.13.0's tool fails writing patterned
`--data`); (2) the same module with iree-compile's own archive (`--iree-parameter-splat=FILE`).
Each runs through iree-run-module and amdgpu-run with the same flags on local-sync and
local-task, in both modes: stdout must match byte for byte; bad input must fail with IREE's
status and message. Also the Python API, amdgpu-benchmark's flags, gather through the module
itself, and replay captures of file-mode parameters under each file policy.
"""

from __future__ import annotations

import io
import re
import struct
import subprocess

import numpy as np
import pytest

from iree_tools import iree_compile_or_skip

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.tooling.run import RunOptions, run

MODEL = """
util.global private @w = #flow.parameter.named<"model"::"w"> : tensor<4xf32>
util.global private @b = #flow.parameter.named<"model"::"b"> : tensor<4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = util.global.load @w : tensor<4xf32>
  %b = util.global.load @b : tensor<4xf32>
  %0 = arith.mulf %x, %w : tensor<4xf32>
  %1 = arith.addf %0, %b : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
INPUT = "--input=4xf32=1,2,3,4"
W = np.array([1.5, -2, 3, 4], np.float32)
B = np.array([10, 20, 30, 40], np.float32)


def _tool(name: str) -> str:
    import shutil

    path = shutil.which(name)
    if not path:
        pytest.skip(f"{name} not on PATH")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from examples.compile import target_flags

    compiler = iree_compile_or_skip()
    out = tmp_path_factory.mktemp("parameters")
    (out / "model.mlir").write_text(MODEL)
    flags = [*target_flags("llvm-cpu")]
    subprocess.run([compiler, *flags, str(out / "model.mlir"), "-o", str(out / "model.vmfb")],
                   check=True, capture_output=True)
    # (2) the compiler writes the archive of the module's parameter globals itself.
    subprocess.run([compiler, *flags, str(out / "model.mlir"),
                    f"--iree-parameter-splat={out / 'compiled.irpa'}",
                    "-o", str(out / "splat.vmfb")], check=True, capture_output=True)
    from safetensors.numpy import save_file

    save_file({"w": W, "b": B}, str(out / "real.safetensors"))
    save_file({"w": W[:3].copy(), "b": B}, str(out / "short.safetensors"))
    create = _tool("iree-create-parameters")
    subprocess.run([create, "--data=w=4xf32", "--splat=b=4xf32=0.5",
                    f"--output={out / 'created.irpa'}"], check=True, capture_output=True)
    subprocess.run([create, "--data=w=4xf32", f"--output={out / 'no_b.irpa'}"], check=True,
                   capture_output=True)
    (out / "weights.txt").write_text("not parameters")
    return out


def _ours(args: list[str]) -> tuple[str, AmdgpuCliError | None]:
    options = RunOptions(modules=[])
    for arg in args:
        key, _, value = arg.partition("=")
        key = key.lstrip("-")
        if key == "module":
            options.modules.append(value)
        elif key == "device":
            options.devices.append(value)
        elif key == "input":
            options.inputs.append(value)
        elif key == "parameters":
            options.parameters.append(value)
        elif key == "parameter_mode":
            options.parameter_mode = value
        elif key == "function":
            options.function = value
        else:
            raise AssertionError(arg)
    out = io.StringIO()
    try:
        run(options, out)
    except AmdgpuCliError as e:
        return out.getvalue(), e
    return out.getvalue(), None


def _iree_error(stderr: str) -> tuple[str, str]:
    """(status, message) of iree-run-module's error line, without the annotations."""
    match = re.search(r": ([A-Z_]+); (.*?)(?:;|$)", stderr)
    assert match, stderr
    return match.group(1), match.group(2)


def _our_message(error: AmdgpuCliError) -> str:
    text = str(error)
    text = re.sub(r"^\S+\+[0-9a-f]+: ", "", text)  # our trap location prefix
    return text.split(";")[0]


CASES = [
    ("model.vmfb", "model=real.safetensors"),
    ("model.vmfb", "model=created.irpa"),
    ("splat.vmfb", "model=compiled.irpa"),
]


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
@pytest.mark.parametrize("mode", ["file", "preload"])
@pytest.mark.parametrize("module,params", CASES, ids=[c[1] for c in CASES])
def test_matches_iree_run_module(built, iree_run, device, mode, module, params):
    args = [f"--device={device}", f"--module={built / module}",
            f"--parameters={params.split('=')[0]}={built / params.split('=')[1]}",
            f"--parameter_mode={mode}", INPUT]
    ref = iree_run(args)
    assert ref.returncode == 0, ref.stderr
    stdout, error = _ours(args)
    assert error is None, error
    assert stdout == ref.stdout


BAD = {
    "missing file": ["--parameters=model=@/missing.irpa"],
    "unknown scope": ["--parameters=other=@/real.safetensors"],
    "anonymous scope": ["--parameters=@/real.safetensors"],
    "missing key": ["--parameters=model=@/no_b.irpa"],
    "size mismatch": ["--parameters=model=@/short.safetensors"],
    "bad mode": ["--parameters=model=@/real.safetensors", "--parameter_mode=mmap"],
    "bad format": ["--parameters=model=@/weights.txt"],
    "no parameters": [],
}


@pytest.mark.parametrize("name", list(BAD))
def test_errors_match_iree_run_module(built, iree_run, name):
    extra = [a.replace("@", str(built)) for a in BAD[name]]
    args = ["--device=local-sync", f"--module={built / 'model.vmfb'}", *extra, INPUT]
    ref = iree_run(args)
    assert ref.returncode == 1
    stdout, error = _ours(args)
    assert error is not None
    status, message = _iree_error(ref.stderr)
    assert (error.status, _our_message(error)) == (status, message)
    assert stdout == ref.stdout


def test_cli_error_is_one_line(built):
    proc = subprocess.run(
        [_tool("amdgpu-run"), "--device=local-sync", f"--module={built / 'model.vmfb'}",
         f"--parameters=model={built / 'missing.irpa'}", INPUT], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1
    assert "NOT_FOUND; failed to open file" in proc.stderr


def test_unused_parameters_are_not_opened(built, iree_run, tmp_path):
    """A module that imports no io_parameters never opens --parameters (as IREE)."""
    from examples.compile import target_flags

    src = tmp_path / "plain.mlir"
    src.write_text("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                   "  %0 = arith.addf %x, %x : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
    vmfb = tmp_path / "plain.vmfb"
    subprocess.run([iree_compile_or_skip(), *target_flags("llvm-cpu"), str(src), "-o",
                    str(vmfb)], check=True, capture_output=True)
    args = ["--device=local-sync", f"--module={vmfb}", "--parameters=x=/missing.irpa", INPUT]
    ref = iree_run(args)
    stdout, error = _ours(args)
    assert ref.returncode == 0 and error is None
    assert stdout == ref.stdout


@pytest.mark.parametrize("mode", ["file", "preload"])
@pytest.mark.parametrize("form", ["dict", "pairs", "strings"])
def test_api(built, mode, form):
    import amdgpu_cli

    path = str(built / "real.safetensors")
    parameters = {"dict": {"model": path}, "pairs": [("model", path)],
                  "strings": [f"model={path}"]}[form]
    x = np.array([1, 2, 3, 4], np.float32)
    with amdgpu_cli.load_module(built / "model.vmfb", device="local-sync",
                                parameters=parameters, parameter_mode=mode) as m:
        np.testing.assert_array_equal(m.main(x), x * W + B)
        np.testing.assert_array_equal(m.main(x), x * W + B)


def test_api_error(built):
    import amdgpu_cli

    with pytest.raises(AmdgpuCliError) as e:
        amdgpu_cli.load_module(built / "model.vmfb", device="local-sync",
                               parameters={"other": str(built / "real.safetensors")})
    assert e.value.status == "NOT_FOUND"
    assert "no provider registered that handles scopes like 'model'" in str(e.value)


def test_benchmark_flags(built):
    from click.testing import CliRunner

    from amdgpu_cli.cli.benchmark import benchmark

    result = CliRunner().invoke(benchmark, [
        "--device=local-sync", f"--module={built / 'model.vmfb'}",
        f"--parameters=model={built / 'real.safetensors'}", "--parameter_mode=preload",
        "--function=main", INPUT,
        "--benchmark_min_time=2x", "--benchmark_format=json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "BM_main" in result.output


def _tables(entries):
    """(key table, key data, spans) VmBuffers for [(key, parameter_offset, buffer_offset,
    length)]."""
    from amdgpu_cli.vm.refs import VmBuffer

    table, data, spans = b"", b"", b""
    for key, parameter_offset, buffer_offset, length in entries:
        table += struct.pack("<II", len(data), len(key))
        data += key.encode()
        spans += struct.pack("<QQQ", parameter_offset, buffer_offset, length)
    return VmBuffer(bytearray(table)), VmBuffer(bytearray(data)), VmBuffer(bytearray(spans))


@pytest.mark.parametrize("mode", ["file", "preload"])
def test_gather_and_scatter(built, mode):
    """gather into one buffer (file data and a splat) as a fenced queue operation; scatter to a
    read-only file is refused as IREE refuses it."""
    from amdgpu_cli.hal.enums import BufferUsage, MemoryType
    from amdgpu_cli.hal.fence import Fence
    from amdgpu_cli.hal.registry import default_registry
    from amdgpu_cli.tooling.parameters import ParameterProvider
    from amdgpu_cli.vm.io_parameters import IoParametersModule
    from amdgpu_cli.vm.refs import VmBuffer, VmTrap

    provider = ParameterProvider.open([("real", built / "real.safetensors"),
                                       ("", built / "created.irpa")], mode)
    [device] = default_registry().create_devices(["local-sync"])
    try:
        module = IoParametersModule(provider)
        gather = module.functions()["gather"].fn
        target = device.allocator.allocate(MemoryType.DEVICE_LOCAL | MemoryType.HOST_VISIBLE,
                                           BufferUsage.DEFAULT | BufferUsage.MAPPING, 24)
        signal = Fence.create(device.create_semaphore(0), 1)
        gather(device, -1, None, signal, VmBuffer(bytearray(b"real")), target,
               *_tables([("w", 4, 0, 12), ("b", 0, 12, 8)]))
        signal.wait()
        got = np.frombuffer(target.read(0, 20), np.float32)
        np.testing.assert_array_equal(got, np.concatenate([W[1:], B[:2]]))
        signal = Fence.create(device.create_semaphore(0), 1)
        gather(device, -1, None, signal, None, target, *_tables([("b", 0, 0, 16)]))
        signal.wait()
        np.testing.assert_array_equal(np.frombuffer(target.read(0, 16), np.float32), [0.5] * 4)
        signal = Fence.create(device.create_semaphore(0), 1)
        with pytest.raises(VmTrap) as e:
            module.functions()["scatter"].fn(device, -1, None, signal, target,
                                             VmBuffer(bytearray(b"real")),
                                             *_tables([("w", 0, 0, 16)]))
        assert e.value.status == "PERMISSION_DENIED"
        assert "parameter allows READ, operation requires WRITE" in str(e.value)
        assert signal.failure is not None
        with pytest.raises(VmTrap) as e:
            gather(device, -1, None, None, None, target, *_tables([("w", 0, 0, 32)]))
        assert e.value.status == "OUT_OF_RANGE"
    finally:
        device.close()
        provider.close()


@pytest.mark.parametrize("policy", ["reference", "capture-ranges", "capture-all"])
@pytest.mark.parametrize("mode", ["file", "preload"])
def test_replay_capture_replays_in_iree(built, tmp_path, policy, mode):
    """A capture of a parameter-loading run (the parameter file imported per policy, its
    loads as queue_alloca + queue_read) replays in IREE's iree-run-replay."""
    from amdgpu_cli.replay.recorder import ReplayFlags

    replay_tool = _tool("iree-run-replay")
    capture = tmp_path / "p.ireereplay"
    flags = ReplayFlags()
    flags.output, flags.file_policy = str(capture), policy
    options = RunOptions(modules=[str(built / "model.vmfb")], devices=["local-sync"],
                         inputs=[INPUT.split("=", 1)[1]], replay=flags,
                         parameters=[f"model={built / 'real.safetensors'}"],
                         parameter_mode=mode)
    out = io.StringIO()
    run(options, out)
    assert out.getvalue().endswith("4xf32=11.5 16 39 56\n")
    proc = subprocess.run([replay_tool, "--device=local-sync", str(capture)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def _gguf_file(path):
    import gguf

    writer = gguf.GGUFWriter(str(path), "test")
    writer.add_tensor("w", W)
    writer.add_tensor("b", B)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.mark.parametrize("damage", ["truncated", "bad magic", "bad length"])
@pytest.mark.parametrize("fmt", ["irpa", "safetensors", "gguf"])
def test_damaged_archives_are_one_line(built, iree_run, tmp_path, fmt, damage):
    """Acceptance 4: a truncated or corrupted archive of each format through amdgpu-run: one
    error line and exit 1, or (where iree-run-module also runs the file: a truncation that cut
    only bytes it never reads) what iree-run-module prints."""
    source = {"irpa": built / "created.irpa", "safetensors": built / "real.safetensors",
              "gguf": _gguf_file(tmp_path / "real.gguf")}[fmt]
    data = bytearray(source.read_bytes())
    if damage == "truncated":
        data = data[:len(data) // 2]
    elif damage == "bad magic":
        data[0] ^= 0xFF
    else:  # the first 8-byte length/count/offset field after the magic, made huge
        at = {"irpa": 8, "safetensors": 0, "gguf": 8}[fmt]
        data[at:at + 8] = (0x7FFF_FFFF_FFFF_FFF0).to_bytes(8, "little")
    damaged = tmp_path / f"damaged.{fmt}"
    damaged.write_bytes(bytes(data))
    args = ["--device=local-sync", f"--module={built / 'model.vmfb'}",
            f"--parameters=model={damaged}", INPUT]
    ref = iree_run(args)
    proc = subprocess.run([_tool("amdgpu-run"), *args], capture_output=True, text=True,
                          timeout=120)
    if proc.returncode == 0 and ref.returncode == 0:
        assert proc.stdout == ref.stdout
        return
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: "), proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr

"""amdgpu-run against iree-run-module: every corpus RUN line, byte-identical stdout.

Each `// RUN:` line of tests/corpus runs through `iree-run-module --device=local-sync` and through
our tool (in-process, `tooling.run.run`, same flags); stdout must match byte for byte and both
must succeed or fail alike (with the same IREE status name on failure). Cases that cannot pass
yet are listed in KNOWN_GAPS with the reason; they are asserted to still fail, so the list cannot
go stale. Also: the Python API against iree-run-module's .npy outputs, one-line CLI errors with
exit 1, `--list_drivers`, and the `hal` module on the null device.

Set IREE_CORPUS_CACHE=DIR to reuse compiled modules between runs.
"""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from corpus_util import load_corpus

from amdgpu_cli.tooling.run import RunOptions, run

CASES = load_corpus()

# Case id -> why our run differs from iree-run-module today.
KNOWN_GAPS: dict[str, str] = {}


def _ours(vmfb: Path, args: list[str]) -> tuple[str, str | None]:
    """(stdout, error status name or None), running `args` (corpus RUN flags) in-process."""
    options = RunOptions(modules=[str(vmfb)], devices=["local-sync"])
    for arg in args:
        key, _, value = arg.partition("=")
        if key == "--function":
            options.function = value
        elif key == "--input":
            options.inputs.append(value)
        elif key == "--output":
            options.outputs.append(value)
        elif key == "--expected_output":
            options.expected_outputs.append(value)
        elif key == "--output_max_element_count":
            options.output_max_element_count = int(value)
        else:
            raise AssertionError(f"corpus flag {arg!r} is not handled by this test")
    out = io.StringIO()
    status = None
    from amdgpu_cli.errors import AmdgpuCliError
    try:
        result = run(options, out)
        if result.exit_code:
            status = "EXIT"
    except AmdgpuCliError as e:
        status = e.status
    return out.getvalue(), status


def _iree_status(proc: subprocess.CompletedProcess) -> str | None:
    if proc.returncode == 0:
        return None
    match = re.search(r": ([A-Z_]+); ", proc.stderr)
    return match.group(1) if match else "EXIT"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_case_matches_iree(case, vmfbs, iree_run):
    vmfb = vmfbs[case.stem]
    ref = iree_run(["--device=local-sync", f"--module={vmfb}", *case.args])
    stdout, status = _ours(vmfb, case.args)
    same = stdout == ref.stdout and status == _iree_status(ref)
    if case.id in KNOWN_GAPS:
        assert not same, f"{case.id} now matches iree-run-module: remove it from KNOWN_GAPS"
        return
    assert stdout == ref.stdout
    assert status == _iree_status(ref), ref.stderr


def test_generated_import_sites_match_iree(vmfbs, iree_run, monkeypatch):
    """Every corpus RUN line again, with each import call site's generated code (literal
    constant operands included) used from its first run: a site otherwise walks its shape the
    first time, which is all a one-call run like the test above ever executes."""
    from amdgpu_cli.vm import import_calls

    def no_walk(*args):
        raise AssertionError("an import call site walked its shape")

    monkeypatch.setattr(import_calls, "WALKED_IMPORT_RUNS", 0)
    monkeypatch.setattr(import_calls, "_walk_import_call", no_walk)
    compared = 0
    for case in CASES:
        if case.id in KNOWN_GAPS:
            continue
        vmfb = vmfbs[case.stem]
        ref = iree_run(["--device=local-sync", f"--module={vmfb}", *case.args])
        stdout, status = _ours(vmfb, case.args)
        assert (stdout, status) == (ref.stdout, _iree_status(ref)), f"{case.id}: {ref.stderr}"
        compared += 1
    assert compared > 100


def test_known_gaps_name_real_cases():
    ids = {c.id for c in CASES}
    assert set(KNOWN_GAPS) <= ids
    # The pass count this suite stands for (reported to the lead): all but the known gaps.
    assert len(CASES) - len(KNOWN_GAPS) >= 187


# -- Python API ------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_python_api_matches_iree_outputs(case, vmfbs, iree_run, tmp_path):
    """The Python API's arrays equal the .npy files iree-run-module writes for the same call."""
    import amdgpu_cli
    from amdgpu_cli.tooling.io import format_results, parse_inputs
    from amdgpu_cli.tooling.values import Tensor

    vmfb = vmfbs[case.stem]
    with amdgpu_cli.load_module(vmfb, device="local-sync") as module:
        arg_chars = module._session.cconv(case.function)[0]
        values = parse_inputs(case.inputs, arg_chars)
        args = [v.array if hasattr(v, "array") else v for v in values]
        got = getattr(module, case.function)(*args)
    # The same call, in a fresh instance (module state), with tensors uploaded first and results
    # left on the device until asked for.
    with amdgpu_cli.load_module(vmfb, device="local-sync") as module:
        on_device = [module.upload(a) if isinstance(a, np.ndarray) else a for a in args]
        kept = module.function(case.function, device_results=True)(*on_device)
        kept = kept if isinstance(kept, tuple) else (kept,)
        kept = [k.numpy() if isinstance(k, amdgpu_cli.DeviceArray) else k for k in kept]
    got = got if isinstance(got, tuple) else (got,)
    for a, b in zip(got, kept, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    outs = [tmp_path / f"r{i}.npy" for i in range(len(got))]
    ref = iree_run(["--device=local-sync", f"--module={vmfb}", *case.args,
                    *[f"--output=@{p}" for p in outs]])
    if ref.returncode != 0 and "unsupported data encoding" in ref.stderr:
        # IREE cannot write this element type (bf16) to .npy; compare the printed values instead.
        printed = iree_run(["--device=local-sync", f"--module={vmfb}", *case.args])
        assert printed.returncode == 0, printed.stderr
        ours = format_results([Tensor.from_array(np.asarray(v)) for v in got])
        assert printed.stdout == f"EXEC @{case.function}\n" + ours
        return
    assert ref.returncode == 0, ref.stderr
    for value, path in zip(got, outs):
        expected = np.load(path)
        np.testing.assert_array_equal(np.asarray(value), expected)
        assert np.asarray(value).dtype.kind == expected.dtype.kind or expected.dtype.kind == "i"


def test_python_api_returns_numpy_scalars(vmfbs, iree_run):
    """Scalar results come out of the Python API as numpy scalars of their VM type (the tools
    carry them as tooling Scalars), with the values iree-run-module prints."""
    import amdgpu_cli
    from amdgpu_cli.tooling.io import format_results

    args = ["--function=mixed", "--input=3", "--input=1000000000000", "--input=0.5",
            "--input=0.25"]
    ref = iree_run(["--device=local-sync", f"--module={vmfbs['scalars']}", *args])
    assert ref.returncode == 0, ref.stderr
    with amdgpu_cli.load_module(vmfbs["scalars"], device="local-sync") as module:
        got = module.mixed(np.int32(3), np.int64(1000000000000), np.float32(0.5), 0.25)
    assert [type(v) for v in got] == [np.float64, np.int64, np.float32, np.int32]
    assert "EXEC @mixed\n" + format_results(list(got)) == ref.stdout


def test_python_api_keeps_state_between_calls(vmfbs):
    import amdgpu_cli

    with amdgpu_cli.load_module(vmfbs["globals_state"], device="local-sync") as module:
        first = module.increment()
        second = module.increment()
        assert int(second) == int(first) + 1
        assert "increment" in module.function_names
        with pytest.raises(AttributeError):
            module.no_such_function


# -- CLI -------------------------------------------------------------------------------------------

def _cli(argv, capsys) -> tuple[int, str, str]:
    from amdgpu_cli.cli.main import run_main

    with pytest.raises(SystemExit) as exit_info:
        run_main(argv)
        raise SystemExit(0)
    captured = capsys.readouterr()
    return exit_info.value.code or 0, captured.out, captured.err


def test_cli_runs_a_model(vmfbs, capsys):
    code, out, err = _cli([f"--module={vmfbs['scalars']}", "--device=local-sync",
                           "--function=add_i32", "--input=7", "--input=-12"], capsys)
    assert (code, out, err) == (0, "EXEC @add_i32\nresult[0]: i32=-5\n", "")


@pytest.mark.parametrize("argv, status", [
    (["--function=no_such_function"], "NOT_FOUND"),
    (["--function=add_i32", "--input=1"], "INVALID_ARGUMENT"),  # too few inputs
    (["--function=scalar_and_tensor", "--input=3xf32=1", "--input=2"], "INVALID_ARGUMENT"),
    (["--function=scalar_and_tensor", "--input=4xi32=1", "--input=2"], "INVALID_ARGUMENT"),
    (["--function=add_i32", "--input=1", "--input=2", "--input=3"], "INVALID_ARGUMENT"),
])
def test_cli_bad_input_is_one_line_exit_1(argv, status, vmfbs, capsys):
    code, _, err = _cli([f"--module={vmfbs['scalars']}", "--device=local-sync", *argv], capsys)
    assert code == 1
    assert err.count("\n") == 1 and status in err, err


def test_cli_missing_module_file(tmp_path, capsys):
    code, out, err = _cli([f"--module={tmp_path / 'missing.vmfb'}", "--function=f"], capsys)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "NOT_FOUND" in err and "missing.vmfb" in err


def test_cli_list_drivers(capsys):
    code, out, _ = _cli(["--list_drivers"], capsys)
    assert code == 0
    names = {line.split(":")[0].strip() for line in out.splitlines()
             if line and not line.startswith("#")}
    assert {"local-sync", "local-task", "null"} <= names
    code, out2, _ = _cli(["--list-drivers"], capsys)
    assert out2 == out


def test_cli_list_devices(capsys):
    code, out, _ = _cli(["--list_devices"], capsys)
    assert code == 0
    assert "local-sync://\n" in out and "local-task://\n" in out


# -- the hal module on the null device ---------------------------------------------------------

def test_hal_module_exports_and_basic_semantics():
    from amdgpu_cli.hal import null
    from amdgpu_cli.vm.hal_module import HalModule
    from amdgpu_cli.vm.refs import VmBuffer

    device = null.NullDevice()
    hal = HalModule([device])
    fns = hal.functions()
    assert hal.name == "hal" and hal.version == 7
    assert fns["command_buffer.dispatch"].cconv == "0rrIiiiICiDCiirIID_v"
    assert fns["fence.await"].cconv == "0iICrD_i"
    assert len(fns) == 58
    call = lambda name, *args: fns[name].fn(*args)  # noqa: E731
    assert call("devices.count") == (1,)
    assert call("devices.get", 1) == (None,)
    assert call("device.query.i64", device, VmBuffer(b"hal.device.id"), VmBuffer(b"nu*")) == (1, 1)
    assert call("device.query.i64", device, VmBuffer(b"no"), VmBuffer(b"key")) == (0, 0)
    (alloc,) = call("device.allocator", device)
    (buf,) = call("allocator.allocate", alloc, -1, 0x30, 0xC03, 16)
    call("buffer.store", 0x11223344, buf, 4, 4)
    assert call("buffer.load", buf, 4, 2) == (0x3344,)
    (fence,) = call("fence.create", device, 0)
    assert call("fence.query", fence) == (17,)
    assert call("fence.await", 0, 0, [(fence,)]) == (4,)  # DEADLINE_EXCEEDED
    call("device.queue.fill", device, -1, None, fence, buf, 0, 8, 0xAB, 1, 0)
    assert call("fence.await", -1, 0, [(fence,), (None,)]) == (0,)
    assert bytes(buf.read(0, 8)) == b"\xab" * 8
    assert call("fence.join", 0, [(None,)]) == (None,)
    (view,) = call("buffer_view.create", buf, 0, 16, 0x10000020, 1, [(2,), (2,)])
    assert call("buffer_view.dim", view, 1) == (2,)
    from amdgpu_cli.vm.refs import VmTrap
    with pytest.raises(VmTrap) as info:
        call("buffer_view.assert", view, VmBuffer(b"input0"), 0x10000020, 1, [(4,)])
    assert info.value.status == "INVALID_ARGUMENT" and "input0" in str(info.value)

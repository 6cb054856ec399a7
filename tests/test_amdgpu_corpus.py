"""Acceptance 1: the amdgpu-run corpus, compiled for gfx942 (CDNA3, wave64) and gfx1100 (RDNA3,
wave32), runs on `--device=amdgpu` over softhsa, which executes the kernels' machine code
(tests/softhsa/src/isa.c), and computes what IREE's CPU build computes.

Every RUN line of tests/corpus/*.mlir runs in-process through the Python API on the amdgpu driver
(one worker process per model: tests/amdgpu_dispatch_check.py), each on a freshly loaded module
as iree-run-module runs it. Two independent truths meet there:

- the numbers: `iree-run-module --device=local-sync` on the llvm-cpu build of the same model
  writes every result to a .npy file, and the worker checks the amdgpu results against those
  files with the check `amdgpu-run --expected_output` makes (integers exactly, floats within
  iree-run-module's default thresholds); a few first RUN lines also run through the
  `amdgpu-run` CLI with `--expected_output=@file.npy`;
- the dispatches: every line of softhsa's dispatch log is checked against what the VM asked
  for and against the code object's metadata (see amdgpu_dispatch_check.py).

Where the GPU build computes something else than the CPU build, the reason is checked here and
the expected value comes from numpy (GPU_TRUTH), or the case is skipped after the evidence that
the compiled code object cannot compute it is checked (BROKEN_KERNELS).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

import amdgpu_dispatch_check as check
from corpus_util import compile_corpus, load_corpus, parse_signatures
from tests.softhsa.agents import AGENTS

TARGETS = ("gfx942", "gfx1100")
PHASE_TIMEOUT_S = 300  # one model's __init or one RUN line, in the worker
CASES = load_corpus()
STEMS = sorted({case.stem for case in CASES})

# Models iree-compile 3.13.0 cannot compile for an AMD GPU: stem -> (text its error contains, why).
COMPILE_FAILURES = {
    "scf_if": ("linalg.generic' op inferred input/output operand #0 has shape's dimension #0",
               "iree-compile 3.13.0 rejects on_extract's reversing linalg.generic (index map "
               "3 - i) when targeting gfx942 and gfx1100 (it compiles for llvm-cpu)"),
}

INF, NAN = float("inf"), float("nan")
# (case id, result index) -> (what numpy says the GPU kernels compute, why the llvm-cpu build
# differs). Each override is checked to really differ from IREE's CPU result.
GPU_TRUTH = {
    ("float_math:pow_fma:3", 1): (
        np.power(np.float64([2, -3, 0.5, 10]), [3, 2, 0, -1]).astype(np.float32),
        "math.fpowi(a, fptosi(b)): the llvm-cpu build gives NaN for (-3)^2; the GPU kernels "
        "compute the integer power"),
    ("float_special:nan_compare:3", 3): (
        np.fmax(np.float32([NAN, 1, -INF, 0]), np.float32([1, NAN, -INF, -0.0])),
        "arith.maximumf is compiled for both GPUs to v_max_f32 alone (IEEE maxNum: a quiet NaN "
        "loses to the number; test_gpu_maximumf_is_a_bare_v_max checks the code), where the "
        "CPU build propagates the NaN"),
}
# target -> {stem: kernels whose code in the module is only the kernarg-preload preamble}: IREE
# 3.13.0 emits these rnn_state kernels for gfx942 as 256 bytes that load the kernargs and
# branch to their own end (on hardware the next kernel's code runs), so no machine can compute
# the model there; gfx1100's build has their bodies.
BROKEN_KERNELS = {
    "gfx942": {"rnn_state": ("step_dispatch_1_matmul_1x3x4_f32",
                             "sequence_dispatch_1_matmul_1x3x4_f32",
                             "step_count_twice_dispatch_1_matmul_1x3x3_f32")},
}

# The `amdgpu-run` console script (pyproject: amdgpu_cli.cli.main:run_main), on this interpreter.
AMDGPU_RUN = [sys.executable, "-c",
              "import sys; from amdgpu_cli.cli.main import run_main; run_main(sys.argv[1:])"]
# First RUN lines also run through `amdgpu-run --expected_output`.
CLI_CASES = ["matmul:matmul:0", "dynamic_shapes:scale_rows:0", "softmax:softmax:0",
             "globals_state:accumulate:2"]


def _target_ids(items):
    return [f"{target}-{item}" for target, item in items]


@pytest.fixture(scope="module")
def amdgpu_corpus(tmp_path_factory):
    """`corpus(target) -> ({stem: vmfb}, {stem: compile error})`, compiled once per target."""
    if not (os.environ.get("IREE_COMPILE") or shutil.which("iree-compile")):
        pytest.skip("iree-compile not on PATH")
    if not shutil.which(check.READOBJ):
        pytest.skip(f"{check.READOBJ} not on PATH")
    built: dict[str, tuple] = {}

    def corpus(target: str):
        if target not in built:
            cache = os.environ.get("IREE_CORPUS_CACHE")
            out_dir = (Path(cache) / f"amdgpu-{target}" if cache
                       else tmp_path_factory.mktemp(f"corpus-{target}"))
            errors: dict[str, str] = {}
            vmfbs = compile_corpus(out_dir, jobs=2, errors=errors, target=f"amdgpu-{target}")
            built[target] = (vmfbs, errors)
        return built[target]
    return corpus


@pytest.fixture(scope="module")
def cpu_truth(corpus_build, iree_run, tmp_path_factory):
    """`truth(case) -> [--expected_output values]`: what iree-run-module --device=local-sync
    computes on the llvm-cpu build: a float tensor as the .npy file `--output=@` writes (exact
    values), any other result as the text it prints (exact for integers; element types as
    written, which .npy cannot tell apart). GPU_TRUTH's numpy values replace the results it
    names."""
    vmfbs, errors = corpus_build
    directory = tmp_path_factory.mktemp("cpu-truth")
    cache: dict[str, list[str]] = {}

    def truth(case) -> list[str]:
        if case.id in cache:
            return cache[case.id]
        assert case.stem in vmfbs, errors.get(case.stem)
        signature = next(s for s in parse_signatures(case.mlir) if s.name == case.function)
        files = [directory / f"{case.id.replace(':', '_')}-{i}.npy"
                 for i in range(len(signature.results))]
        printed = iree_run(["--device=local-sync", f"--module={vmfbs[case.stem]}", *case.args,
                            "--output_max_element_count=1000000"])
        assert printed.returncode == 0, printed.stderr
        texts = _printed_results(printed.stdout)
        assert len(texts) == len(files), printed.stdout
        # The exact values of f16 / f32 / f64 tensors (numpy has no bf16: printed text there).
        exact = [bool(re.search(r"x(f16|f32|f64)=", text)) for text in texts]
        run = iree_run(["--device=local-sync", f"--module={vmfbs[case.stem]}", *case.args,
                        *(f"--output=@{f}" if e else "--output=" for f, e in zip(files, exact))])
        assert run.returncode == 0, run.stderr
        for (case_id, index), (value, why) in GPU_TRUTH.items():
            if case_id == case.id:
                cpu = np.load(files[index])
                assert not np.array_equal(cpu, value, equal_nan=True), \
                    f"the CPU build now agrees ({why}): drop the GPU_TRUTH entry"
                np.save(files[index], value)
        cache[case.id] = [f"@{f}" if e else text for f, e, text in zip(files, exact, texts)]
        return cache[case.id]
    return truth


def _printed_results(stdout: str) -> list[str]:
    """Each result iree-run-module printed: a buffer view's `SHAPExTYPE=...` line (an
    --expected_output value), a scalar as `scalar:TYPE=VALUE` (iree-run-module 3.13.0's
    --expected_output rejects every scalar, "variant types mismatch; expected i32 but got i32",
    so scalars are compared apart: _assert_scalars)."""
    values, lines = [], stdout.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("result["):
            continue
        _, kind = line.split(": ", 1)
        values.append(lines[i + 1] if kind == "hal.buffer_view" else f"scalar:{kind}")
    return values


def _assert_scalars(expected: list[str], event: dict) -> None:
    """The scalar results the worker printed against iree-run-module's: integers exactly, floats
    within --expected_output's default thresholds."""
    got = dict(event["expected"]["scalars"])
    for index, value in enumerate(expected):
        if not value.startswith("scalar:"):
            continue
        kind, want = value[len("scalar:"):].split("=", 1)
        have = got[index].split("=", 1)[1]
        if kind.startswith("i"):
            assert int(have) == int(want), f"result[{index}]: {have} (IREE's CPU build: {want})"
        else:
            a, b = float(have), float(want)
            assert a == b or (a != a and b != b) or abs(a - b) <= 1e-4, \
                f"result[{index}]: {have} (IREE's CPU build: {want})"


def _environment(config: Path) -> dict:
    env = dict(os.environ)
    for name in ("ROCR_VISIBLE_DEVICES", "IREE_HAL_AMDGPU_LIBHSA_PATH"):
        env.pop(name, None)
    env["SOFTHSA_CONFIG"] = str(config)
    env["SOFTHSA_EXECUTE"] = "1"
    env["AMDGPU_LIBHSA_SKIP_SYSTEM"] = "1"
    return env


def _softhsa_config(directory: Path, name: str, target: str) -> tuple[Path, Path]:
    """A softhsa machine (one CPU, one `target` GPU) logging to directory/name.jsonl."""
    log = directory / f"{name}.jsonl"
    log.unlink(missing_ok=True)
    config = directory / f"{name}.json"
    config.write_text(json.dumps({"log": str(log), "agents": [AGENTS[target]]}))
    return config, log


class _Worker:
    """One worker process; `events()` yields its JSON lines, None when a phase times out."""

    def __init__(self, argv: list[str], env: dict):
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=env)
        self.lines: queue.Queue = queue.Queue()
        self._stderr: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        self._stderr_reader = threading.Thread(
            target=lambda: self._stderr.extend(self.process.stderr), daemon=True)
        self._stderr_reader.start()

    def stderr_tail(self, limit: int = 2000) -> str:
        self._stderr_reader.join(5)
        return "".join(self._stderr)[-limit:]

    def _pump(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")

    def events(self):
        while True:
            try:
                line = self.lines.get(timeout=PHASE_TIMEOUT_S)
            except queue.Empty:
                # Ask for every thread's stack first (the worker registers SIGUSR1 with
                # faulthandler), so a hang says where it is.
                self.process.send_signal(signal.SIGUSR1)
                try:
                    self.process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
                self.process.kill()
                self.process.wait()
                yield None
                return
            if not line:
                self.process.wait()
                return
            yield json.loads(line)


def _failed(message: str) -> dict:
    return {"error": message, "problems": [], "repeated": None, "dispatches": [],
            "unresolved_bindings": 0, "expected": None}


def _run_model(vmfb: Path, target: str, cases: list, expected: dict, softhsa_dir: Path,
               directory: Path) -> dict:
    """{phase id: the worker's "done" event} for a model's phases (__init, then each case).

    A phase that hangs or crashes its worker is recorded as failed, and a new worker runs the
    phases after it."""
    results: dict[str, dict] = {}
    pending = ["__init", *(case.id for case in cases)]
    args = {case.id: case.args for case in cases}
    for attempt in range(len(pending)):
        config, log = _softhsa_config(directory, f"{target}-{vmfb.stem}-{attempt}", target)
        cases_file = directory / f"{target}-{vmfb.stem}-{attempt}-cases.json"
        cases_file.write_text(json.dumps([[p, args[p], expected.get(p)]
                                          for p in pending if p in args]))
        worker = _Worker([sys.executable, check.__file__, str(vmfb), str(softhsa_dir), str(log),
                          str(cases_file)], _environment(config))
        current, timed_out = None, False
        for event in worker.events():
            if event is None:
                timed_out = True
            elif event["event"] == "start":
                current = event["id"]
            else:
                # A restarted worker loads the module again: its "__init" was already recorded.
                if current in pending:
                    results.setdefault(current, event)
                    pending.remove(current)
                current = None
        if not pending:
            break
        victim = current or pending[0]
        results.setdefault(victim, _failed(
            f"timed out after {PHASE_TIMEOUT_S}s; its threads: {worker.stderr_tail(8000)}"
            if timed_out else
            f"worker exited {worker.process.returncode}: {worker.stderr_tail()}"))
        pending.remove(victim)
        if victim == "__init":  # nothing runs without the module
            for phase in pending:
                results[phase] = _failed(f"module load failed: {results['__init']['error']}")
            break
    return results


@pytest.fixture(scope="module")
def model_results(amdgpu_corpus, cpu_truth, softhsa_lib, tmp_path_factory):
    """`results(target, stem) -> {phase id: event}`, running a model's worker on first use."""
    directory = tmp_path_factory.mktemp("amdgpu-corpus")
    cache: dict[tuple, dict] = {}

    def results(target: str, stem: str) -> dict:
        """{phase id: event} of the model on the target."""
        if (target, stem) not in cache:
            cases = [case for case in CASES if case.stem == stem]
            expected = {case.id: cpu_truth(case) for case in cases}
            cache[target, stem] = _run_model(amdgpu_corpus(target)[0][stem], target, cases,
                                             expected, softhsa_lib, directory)
        return cache[target, stem]
    results.expected = cpu_truth
    return results


def _compiled(amdgpu_corpus, target: str, stem: str) -> None:
    """Skip (with the reason) a model IREE cannot compile for the target, after checking the
    error; skip a model whose code object lacks kernel bodies, after checking that it does."""
    vmfbs, errors = amdgpu_corpus(target)
    if stem not in vmfbs:
        error = errors.get(stem, "not compiled")
        known = COMPILE_FAILURES.get(stem)
        assert known and known[0] in error, f"{stem} failed to compile for {target}: {error}"
        pytest.skip(f"{known[1]}: {error}")
    broken = BROKEN_KERNELS.get(target, {}).get(stem)
    if broken:
        sizes = _symbol_sizes(vmfbs[stem])
        assert all(sizes[name] == 256 for name in broken), {name: sizes[name] for name in broken}
        pytest.skip(f"IREE 3.13.0's {target} code object has only the 256-byte kernarg-preload "
                    f"preamble for {', '.join(broken)} (no body): nothing can compute {stem}")


def _code_objects(vmfb: Path) -> list[bytes]:
    """The ELF code objects of the module's AMD1 executables, in rodata order."""
    from amdgpu_cli.formats.amdgpu_executable import MAGIC, parse_amdgpu_executable
    from amdgpu_cli.formats.vmfb import load_vmfb

    return [parse_amdgpu_executable(bytes(s.data)).code_object
            for s in load_vmfb(str(vmfb)).rodata if bytes(s.data[:4]) == MAGIC]


def _llvm_tool(argv: list[str], code: bytes) -> str:
    """stdout of an LLVM tool given one code object (as a file, the last argument)."""
    with tempfile.TemporaryDirectory() as scratch:
        elf = Path(scratch) / "code.o"
        elf.write_bytes(code)
        return subprocess.run([*argv, str(elf)], capture_output=True, text=True,
                              check=True).stdout


def _disassemble(code: bytes, target: str) -> str:
    return _llvm_tool(["llvm-objdump-19", "-d", f"--mcpu={target}"], code)


def _symbol_sizes(vmfb: Path) -> dict[str, int]:
    """{function symbol: st_size} over the module's AMD1 code objects, as llvm-readobj reads."""
    sizes = {}
    for code in _code_objects(vmfb):
        out = _llvm_tool([check.READOBJ, "--symbols", "--elf-output-style=JSON"], code)
        for entry in json.loads(out)[0]["Symbols"]:
            symbol = entry["Symbol"]
            sizes[symbol["Name"]["Name"]] = symbol["Size"]
    return sizes


def _assert_clean(event: dict) -> None:
    assert event["error"] is None, event["error"]
    assert event["repeated"] is None, f"stopped after {check.MAX_DISPATCHES} dispatches: " \
                                      f"{event['repeated']}"
    assert event["problems"] == []
    assert event["unresolved_bindings"] == 0


@pytest.mark.parametrize("target, stem", [(t, s) for t in TARGETS for s in STEMS],
                         ids=_target_ids([(t, s) for t in TARGETS for s in STEMS]))
def test_module_init(amdgpu_corpus, model_results, target, stem):
    """Loading the module on the amdgpu device: executables, the initializer's dispatches."""
    _compiled(amdgpu_corpus, target, stem)
    _assert_clean(model_results(target, stem)["__init"])


@pytest.mark.parametrize("target, case", [(t, c) for t in TARGETS for c in CASES],
                         ids=_target_ids([(t, c.id) for t in TARGETS for c in CASES]))
def test_case(amdgpu_corpus, model_results, target, case):
    """A RUN line: clean dispatches, and the results IREE's CPU build computes."""
    _compiled(amdgpu_corpus, target, case.stem)
    event = model_results(target, case.stem)[case.id]
    assert event["error"] is None, event["error"]
    # The numbers first (what a wrong dispatch shows first), then the dispatch checks.
    assert event["expected"] is not None
    assert event["expected"]["ok"], event["expected"]["text"]
    _assert_scalars(model_results.expected(case), event)
    _assert_clean(event)


def _vmfb_kernels(vmfb: Path) -> dict:
    """{kernel name: KernelTruth} over every AMD1 executable in the module's rodata."""
    kernels = {}
    for code in _code_objects(vmfb):
        kernels.update(check.truth_for(code))
    return kernels


@pytest.mark.parametrize("target, case_id", [(t, c) for t in TARGETS for c in CLI_CASES],
                         ids=_target_ids([(t, c) for t in TARGETS for c in CLI_CASES]))
def test_cli(amdgpu_corpus, model_results, cpu_truth, softhsa_lib, tmp_path, target, case_id):
    """`amdgpu-run --device=amdgpu --expected_output=@...` prints [SUCCESS] and exits 0, and its
    dispatches equal the in-process run's."""
    case = next(c for c in CASES if c.id == case_id)
    _compiled(amdgpu_corpus, target, case.stem)
    vmfb = amdgpu_corpus(target)[0][case.stem]
    config, log = _softhsa_config(tmp_path, "cli", target)
    expected = [f"--expected_output={value}" for value in cpu_truth(case)]
    proc = subprocess.run([*AMDGPU_RUN, "--device=amdgpu",
                           f"--amdgpu_libhsa_search_path={softhsa_lib}", f"--module={vmfb}",
                           *case.args, *expected], capture_output=True, text=True,
                          env=_environment(config), timeout=PHASE_TIMEOUT_S)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.startswith(f"EXEC @{case.function}\n")
    assert "[SUCCESS]" in proc.stdout

    kernels = _vmfb_kernels(vmfb)
    lines, _ = check.read_log(log, 0)
    logged = []
    for line in lines:
        entry = line.entry
        truth = kernels[entry["kernel"]]  # (a): the kernel is in the module's code objects
        decoded = check.decode_kernargs(truth, bytes.fromhex(entry["kernarg"]))
        logged.append([entry["kernel"], entry["grid"], entry["workgroup"], decoded.constants])
    results = model_results(target, case.stem)
    _assert_clean(results[case.id])
    assert logged == results[case.id]["dispatches"]


@pytest.mark.parametrize("target", TARGETS)
def test_gpu_maximumf_is_a_bare_v_max(amdgpu_corpus, target):
    """GPU_TRUTH's reason for nan_compare's maximumf: the kernel is v_max_f32 with no NaN test."""
    vmfbs, _ = amdgpu_corpus(target)
    text = "\n".join(_disassemble(code, target) for code in _code_objects(vmfbs["float_special"]))
    body = text.split("<nan_compare_dispatch_3_elementwise_4_f32>:")[1].split("s_endpgm")[0]
    mnemonics = [line.split()[0] for line in body.splitlines()
                 if line.startswith("\t") and line.split() and line.split()[0] != "..."]
    assert any(m.startswith("v_max_f32") for m in mnemonics), mnemonics
    nan_tests = ("v_cmp_u_", "v_cmp_o_", "v_cmp_class", "v_cmp_neq_f32", "v_cmp_lg_f32",
                 "v_cmpx_u_", "v_cmpx_o_", "v_cmpx_class")
    assert not any(m.startswith(nan_tests) for m in mnemonics), mnemonics
    assert "0x7fc00000" not in body  # no quiet NaN materialised


# -- the checker itself: a dispatch built by hand from reference §6.1, then broken one way at once

MATMUL_DYN = "matmul_dyn_dispatch_0_matmul_DxDxD_f32"  # 3 bindings, 8 constants: E = 56
BASE = 0x7F0000000000
WINDOWS = [(BASE + 0x1000 * i, BASE + 0x1000 * i + 0x100) for i in range(3)]


def _hand_built_line(count=(10, 1, 1), workgroup=(1024, 1, 1)) -> tuple[dict, bytes]:
    import struct

    data = bytearray(312)  # the metadata's kernarg_segment_size for this kernel
    struct.pack_into("<3Q", data, 0, *(low + 16 for low, _ in WINDOWS))
    struct.pack_into("<8I", data, 24, *range(1, 9))
    struct.pack_into("<3I", data, 56, *count)  # E + 0: hidden_block_count_{x,y,z}
    struct.pack_into("<3H", data, 68, *workgroup)  # E + 12: hidden_group_size_{x,y,z}
    struct.pack_into("<H", data, 120, 3)  # E + 64: hidden_grid_dims
    grid = [c * w for c, w in zip(count, workgroup)]
    return {"kernel": MATMUL_DYN, "grid": grid, "workgroup": list(workgroup),
            "kernarg_segment_size": 312}, bytes(data)


def _mutations():
    def set_bytes(offset, value: bytes):
        return lambda entry, data, allocations: (entry, data[:offset] + value
                                                 + data[offset + len(value):])

    def edit(key, value):
        return lambda entry, data, allocations: ({**entry, key: value}, data)

    def free_first(entry, data, allocations):
        allocations.allocations[0].freed = 0  # freed before the line (at offset 100) was written
        return entry, data

    return {
        "binding_address": set_bytes(0, (WINDOWS[0][0] + 24).to_bytes(8, "little")),
        "binding_outside_window": set_bytes(8, (WINDOWS[1][1] - 8).to_bytes(8, "little")),
        "constant": set_bytes(24 + 4 * 7, (99).to_bytes(4, "little")),
        "grid": edit("grid", [10240, 2, 1]),
        "workgroup": edit("workgroup", [512, 1, 1]),
        "kernel": edit("kernel", "matmul_dispatch_0_matmul_2x4x3_f32"),
        "block_count": set_bytes(56, (9).to_bytes(4, "little")),
        "grid_dims": set_bytes(120, (1).to_bytes(2, "little")),
        "padding_byte": set_bytes(300, b"\x01"),
        "freed_allocation": free_first,
    }


@pytest.mark.parametrize("mutation", [None, *_mutations()])
def test_checker_catches(amdgpu_corpus, tmp_path, mutation):
    """The per-dispatch check passes the hand-built dispatch and rejects each broken variant."""
    _compiled(amdgpu_corpus, "gfx942", "matmul")
    image = _code_objects(amdgpu_corpus("gfx942")[0]["matmul"])[0]
    request = check.RequestedDispatch(
        kernel=MATMUL_DYN, image=image, workgroup_size=(1024, 1, 1), workgroup_count=(10, 1, 1),
        constants=tuple(range(1, 9)),
        bindings=tuple(check.BoundRange(low + 16, (low, high), 64) for low, high in WINDOWS))
    allocations = check.AllocationLog(tmp_path / "none.jsonl")
    for low, high in WINDOWS:
        allocations.allocated(low, high - low)
    entry, data = _hand_built_line()
    if mutation is not None:
        entry, data = _mutations()[mutation](entry, data, allocations)
    line = check.LogLine(100, {**entry, "kernarg": data.hex()})
    problems = check.check_dispatch(request, line, allocations)
    assert (problems == []) == (mutation is None), problems


# -- acceptance 2 on an IREE module: one instruction of the compiled code object changed -----------

# The VOP2 opcode field [30:25] of v_add_f32 and of v_max_f32 (AMD's MI300 and RDNA3 ISA manuals;
# llvm-objdump-19 names the patched word to confirm).
VOP2_ADD_MAX = {"gfx942": (0x01, 0x0B), "gfx1100": (0x03, 0x10)}


@pytest.mark.parametrize("target", TARGETS)
def test_patched_instruction_changes_the_printed_result(amdgpu_corpus, softhsa_lib, tmp_path,
                                                        target):
    """globals_state's accumulate adds its input to a zero accumulator in one v_add_f32; with that
    instruction's opcode turned into v_max_f32 inside the module, `amdgpu-run` prints max(0, x)."""
    from tests.softhsa.test_isa import _file_offset

    _compiled(amdgpu_corpus, target, "globals_state")
    vmfb = amdgpu_corpus(target)[0]["globals_state"]
    data = bytearray(vmfb.read_bytes())
    [code] = _code_objects(vmfb)
    elf = tmp_path / "code.o"
    elf.write_bytes(code)

    def instructions(code: bytes) -> list[str]:
        return [line for line in _disassemble(code, target).splitlines() if line.startswith("\t")]

    adds = [line for line in instructions(code) if line.split()[0] == "v_add_f32_e32"]
    assert len(adds) == 1, adds
    address = int(adds[0].split("//")[1].split(":")[0], 16)
    start = data.find(code)  # the code object's bytes inside the module (once)
    assert start >= 0 and data.find(code, start + 1) < 0
    at = start + _file_offset(elf, address)
    word = int.from_bytes(data[at:at + 4], "little")
    add, maximum = VOP2_ADD_MAX[target]
    assert (word >> 25) & 0x3F == add
    data[at:at + 4] = ((word & ~(0x3F << 25)) | maximum << 25).to_bytes(4, "little")
    patched = tmp_path / "patched.vmfb"
    patched.write_bytes(bytes(data))
    patched_code = bytes(data[start:start + len(code)])
    assert [line.split()[0] for line in instructions(patched_code)].count("v_max_f32_e32") == 1

    config, _ = _softhsa_config(tmp_path, "patched", target)
    outputs = {}
    for name, module in (("original", vmfb), ("patched", patched)):
        proc = subprocess.run([*AMDGPU_RUN, "--device=amdgpu",
                               f"--amdgpu_libhsa_search_path={softhsa_lib}", f"--module={module}",
                               "--function=accumulate", "--input=4xf32=1 -2 3 -4"],
                              capture_output=True, text=True, env=_environment(config),
                              timeout=PHASE_TIMEOUT_S)
        assert (proc.returncode, proc.stderr) == (0, "")
        outputs[name] = proc.stdout.splitlines()[-1]
    x = np.float32([1, -2, 3, -4])
    assert outputs["original"] == "4xf32=" + " ".join(f"{v:g}" for v in 0 + x)
    assert outputs["patched"] == "4xf32=" + " ".join(f"{v:g}" for v in np.maximum(0, x))

"""Acceptance 1: the amdgpu-run corpus, compiled for gfx942, runs on `--device=amdgpu` over softhsa.

Every RUN line of tests/corpus/*.mlir runs in-process through the Python API on the amdgpu driver
(one worker process per model: tests/amdgpu_dispatch_check.py, which records what the VM asked for
and checks every line of softhsa's dispatch log against it and against the code object's metadata;
see that module for the checks). A handful of first RUN lines also run through the `amdgpu-run` CLI,
whose log must show the same kernels, grids and constants as the in-process run.

softhsa does not compute IREE's kernels, so results are never compared with the CPU's. A loop
whose trip count depends on kernel results cannot end; such a case is stopped after
MAX_DISPATCHES dispatches and skipped here only when the stop shows the same kernels repeating.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import amdgpu_dispatch_check as check
from corpus_util import compile_corpus, load_corpus

TARGET = "amdgpu-gfx942"
PHASE_TIMEOUT_S = 120  # one model's __init or one RUN line, in the worker
CASES = load_corpus()
STEMS = sorted({case.stem for case in CASES})

# Models iree-compile 3.13.0 cannot compile for gfx942: stem -> (text its error contains, why).
COMPILE_FAILURES = {
    "scf_if": ("linalg.generic' op inferred input/output operand #0 has shape's dimension #0",
               "iree-compile 3.13.0 rejects on_extract's reversing linalg.generic (index map "
               "3 - i) when targeting gfx942 (it compiles for llvm-cpu)"),
}

# Cases whose loop condition reads a value only a kernel computes: on softhsa the kernels do not
# run, the value never changes, and the loop dispatches the same kernels forever.
DATA_DEPENDENT = {
    "scf_while:grow_until:6": "the loop doubles a tensor on the device until its first element "
                              "passes the limit; softhsa does not run the doubling kernel",
}

# The `amdgpu-run` console script (pyproject: amdgpu_cli.cli.main:run_main), on this interpreter.
AMDGPU_RUN = [sys.executable, "-c",
              "import sys; from amdgpu_cli.cli.main import run_main; run_main(sys.argv[1:])"]
# First RUN lines (fresh module state, as the CLI has) also run through `amdgpu-run`.
CLI_CASES = ["matmul:matmul:0", "dynamic_shapes:scale_rows:0", "softmax:softmax:0",
             "globals_state:increment:0"]


@pytest.fixture(scope="module")
def gfx942_corpus(tmp_path_factory):
    """({stem: vmfb}, {stem: compile error}) of the corpus compiled for gfx942, once."""
    if not (os.environ.get("IREE_COMPILE") or shutil.which("iree-compile")):
        pytest.skip("iree-compile not on PATH")
    if not shutil.which(check.READOBJ):
        pytest.skip(f"{check.READOBJ} not on PATH")
    cache = os.environ.get("IREE_CORPUS_CACHE")
    out_dir = Path(cache) / TARGET if cache else tmp_path_factory.mktemp("corpus-gfx942")
    errors: dict[str, str] = {}
    vmfbs = compile_corpus(out_dir, jobs=2, errors=errors, target=TARGET)
    return vmfbs, errors


def _environment(config: Path) -> dict:
    env = dict(os.environ)
    for name in ("ROCR_VISIBLE_DEVICES", "IREE_HAL_AMDGPU_LIBHSA_PATH"):
        env.pop(name, None)
    env["SOFTHSA_CONFIG"] = str(config)
    env["AMDGPU_LIBHSA_SKIP_SYSTEM"] = "1"
    return env


def _softhsa_config(directory: Path, name: str) -> tuple[Path, Path]:
    """A default softhsa machine (one CPU, one gfx942) logging to directory/name.jsonl."""
    log = directory / f"{name}.jsonl"
    log.unlink(missing_ok=True)
    config = directory / f"{name}.json"
    config.write_text(json.dumps({"log": str(log)}))
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
            "unresolved_bindings": 0}


def _run_model(vmfb: Path, cases: list, softhsa_dir: Path, directory: Path) -> dict:
    """{phase id: the worker's "done" event} for a model's phases (__init, each case, __close).

    A phase that hangs or crashes its worker is recorded as failed, and a new worker runs the
    phases after it."""
    results: dict[str, dict] = {}
    pending = ["__init", *(case.id for case in cases), "__close"]
    args = {case.id: case.args for case in cases}
    for attempt in range(len(pending)):
        config, log = _softhsa_config(directory, f"{vmfb.stem}-{attempt}")
        cases_file = directory / f"{vmfb.stem}-{attempt}-cases.json"
        cases_file.write_text(json.dumps([[p, args[p]] for p in pending if p in args]))
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
def model_results(gfx942_corpus, softhsa_lib, tmp_path_factory):
    """`results(stem) -> {phase id: event}`, running a model's worker on first use."""
    vmfbs, _ = gfx942_corpus
    directory = tmp_path_factory.mktemp("amdgpu-corpus")
    cache: dict[str, dict] = {}

    def results(stem: str) -> dict:
        if stem not in cache:
            cases = [case for case in CASES if case.stem == stem]
            cache[stem] = _run_model(vmfbs[stem], cases, softhsa_lib, directory)
        return cache[stem]
    return results


def _compiled(gfx942_corpus, stem: str) -> None:
    """Skip (with the reason) a model IREE cannot compile for gfx942, after checking the error."""
    vmfbs, errors = gfx942_corpus
    if stem in vmfbs:
        return
    error = errors.get(stem, "not compiled")
    known = COMPILE_FAILURES.get(stem)
    assert known and known[0] in error, f"{stem} failed to compile for gfx942: {error}"
    pytest.skip(f"{known[1]}: {error}")


def _assert_clean(event: dict) -> None:
    assert event["error"] is None, event["error"]
    assert event["repeated"] is None, f"stopped after {check.MAX_DISPATCHES} dispatches: " \
                                      f"{event['repeated']}"
    assert event["problems"] == []
    assert event["unresolved_bindings"] == 0


@pytest.mark.parametrize("stem", STEMS)
def test_module_init(gfx942_corpus, model_results, stem):
    """Loading the module (executables, the initializer's dispatches) on the amdgpu device, and
    closing it after its cases."""
    _compiled(gfx942_corpus, stem)
    _assert_clean(model_results(stem)["__init"])
    _assert_clean(model_results(stem)["__close"])


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(gfx942_corpus, model_results, case):
    _compiled(gfx942_corpus, case.stem)
    event = model_results(case.stem)[case.id]
    reason = DATA_DEPENDENT.get(case.id)
    if reason is None:
        _assert_clean(event)
        return
    # A known data-dependent loop: it must really be one, i.e. stopped at the bound with a few
    # kernels each dispatched over and over.
    assert event["repeated"], f"expected a data-dependent loop, got {event}"
    counts = event["repeated"]
    assert sum(counts.values()) > check.MAX_DISPATCHES
    assert max(counts.values()) > check.MAX_DISPATCHES // len(counts) // 2
    pytest.skip(f"{reason} (stopped after {sum(counts.values())} dispatches: {counts})")


def _vmfb_kernels(vmfb: Path) -> dict:
    """{kernel name: KernelTruth} over every AMD1 executable in the module's rodata."""
    from amdgpu_cli.formats.amdgpu_executable import MAGIC, parse_amdgpu_executable
    from amdgpu_cli.formats.vmfb import load_vmfb

    kernels = {}
    for segment in load_vmfb(str(vmfb)).rodata:
        data = bytes(segment.data)
        if data[:4] == MAGIC:
            kernels.update(check.truth_for(parse_amdgpu_executable(data).code_object))
    return kernels


@pytest.mark.parametrize("case_id", CLI_CASES)
def test_cli(gfx942_corpus, model_results, softhsa_lib, tmp_path, case_id):
    """`amdgpu-run --device=amdgpu` exits 0, and its dispatches equal the in-process run's."""
    case = next(c for c in CASES if c.id == case_id)
    _compiled(gfx942_corpus, case.stem)
    vmfb = gfx942_corpus[0][case.stem]
    config, log = _softhsa_config(tmp_path, "cli")
    proc = subprocess.run([*AMDGPU_RUN, "--device=amdgpu",
                           f"--amdgpu_libhsa_search_path={softhsa_lib}", f"--module={vmfb}",
                           *case.args], capture_output=True, text=True,
                          env=_environment(config), timeout=PHASE_TIMEOUT_S)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.startswith(f"EXEC @{case.function}\n")

    kernels = _vmfb_kernels(vmfb)
    lines, _ = check.read_log(log, 0)
    logged = []
    for line in lines:
        entry = line.entry
        truth = kernels[entry["kernel"]]  # (a): the kernel is in the module's code objects
        decoded = check.decode_kernargs(truth, bytes.fromhex(entry["kernarg"]))
        logged.append([entry["kernel"], entry["grid"], entry["workgroup"], decoded.constants])
    results = model_results(case.stem)
    _assert_clean(results["__init"])
    _assert_clean(results[case.id])
    assert logged == results["__init"]["dispatches"] + results[case.id]["dispatches"]


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
def test_checker_catches(gfx942_corpus, tmp_path, mutation):
    """The per-dispatch check passes the hand-built dispatch and rejects each broken variant."""
    from amdgpu_cli.formats.amdgpu_executable import parse_amdgpu_executable
    from amdgpu_cli.formats.vmfb import load_vmfb

    _compiled(gfx942_corpus, "matmul")
    module = load_vmfb(str(gfx942_corpus[0]["matmul"]))
    image = next(parse_amdgpu_executable(bytes(s.data)).code_object for s in module.rodata
                 if bytes(s.data[:4]) == b"AMD1")
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

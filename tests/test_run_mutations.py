"""Bad input: random mutations of corpus modules give one error line and exit 1, never a
traceback, a hang or a crash; the bytecode verifier rejects bad bytecode before any op runs.

test_random_mutations
    A few corpus modules of different kinds (scalar VM code, loops, globals, dispatches) are
    compiled once; each mutation (truncation; 1-16 byte flips anywhere; flips only in the
    FlatBuffer outside the bytecode; flips only in the bytecode; flips only in an embedded ELF
    executable) is written to a fresh file and run through `amdgpu-run`'s CLI boundary in a
    long-lived worker subprocess (tests/mutation_worker.py) with a per-job time limit. A worker
    that dies (a native crash) or misses its deadline is recorded with the mutation's seed and
    restarted. Every job must exit 0 with well-formed stdout, or exit 1 with exactly one stderr
    line starting "error: " (no "Traceback", no "internal error").
    Machine code cannot be validated (IREE has the same exposure): a crash or hang whose flipped
    bytes ALL lie inside the file range of an executable (PF_X) PT_LOAD segment of an embedded
    ELF is counted separately as a code-byte crash and printed, not asserted. Anything else is a
    failure.

    A crash or hang that iree-run-module also shows on the very same file (e.g. a flipped
    relocation addend that sends a kernel pointer into the middle of an instruction) is counted
    with them too: neither tool can validate machine code or code pointers.

    Budget: exactly AMDGPU_MUTATIONS_COUNT mutations (default 2500; 10000 for the one-off run),
    or AMDGPU_MUTATIONS_SECONDS seconds of mutation work when that is set;
    AMDGPU_MUTATIONS_SEED (default 1) seeds the run. Mutation i uses Random(f"{seed}:{i}"),
    so any reported seed reproduces alone:  AMDGPU_MUTATIONS_REPRO=SEED:I pytest -s -k random.
    IREE_CORPUS_CACHE=DIR reuses compiled modules.

test_verifier_rejects_*
    Hand-corrupted bytecode (a register index past the function's register count, a branch
    target outside the body, a rodata ordinal past the module's segments) makes `amdgpu-run` exit
    1 with the verifier's one-line error before `EXEC` is printed, and instantiating the module
    over a `hal` module that records its calls fails without a single import call.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from corpus_util import CORPUS_DIR, compile_corpus, load_cases
from mutation_client import WorkerClient

from amdgpu_cli.formats.elf import PF_X, PT_LOAD, parse_elf
from amdgpu_cli.formats.vmfb import load_vmfb
from amdgpu_cli.vm import isa
from amdgpu_cli.vm.decoder import BytecodeVerifyError, decode, decode_one


# (model stem, RUN line index): small, fast modules of different kinds.
TARGETS = [
    ("scalars", 0),        # scalar VM arithmetic, no dispatch
    ("scalars", 10),       # scalar + tensor argument, one dispatch
    ("scf_while", 0),      # VM loops and branches
    ("globals_state", 3),  # module globals, __init
    ("matmul", 0),         # dispatches over an embedded ELF
    ("softmax", 0),        # reductions, several dispatches
]

JOB_TIMEOUT_S = 10.0  # worker-side alarm per job
JOB_DEADLINE_S = JOB_TIMEOUT_S + 10.0  # parent-side wall deadline (native code ignores the alarm)
KINDS = ("truncate", "flip_any", "flip_flatbuffer", "flip_bytecode", "flip_elf")


# -- modules and their regions -----------------------------------------------------------------

@dataclass
class Target:
    name: str
    function: str
    args: list
    data: bytes
    regions: dict = field(default_factory=dict)  # kind -> list of (start, end) file ranges
    exec_ranges: list = field(default_factory=list)  # PF_X PT_LOAD file ranges of embedded ELFs
    baseline: str = ""


def _regions(data: bytes) -> tuple[dict, list]:
    m = load_vmfb(data)
    c = m.container
    fb = (c.flatbuffer_offset, c.flatbuffer_offset + c.flatbuffer_size)
    bc = (c.bytecode_offset, c.bytecode_offset + len(m.bytecode))
    elfs, execs = [], []
    for seg in m.rodata:
        if bytes(seg.data[:4]) != b"\x7fELF":
            continue
        elfs.append((seg.file_offset, seg.file_offset + len(seg)))
        image = parse_elf(bytes(seg.data))
        for ph in image.program_headers:
            if ph.type == PT_LOAD and ph.flags & PF_X and ph.filesz:
                execs.append((seg.file_offset + ph.offset, seg.file_offset + ph.offset + ph.filesz))
    fb_only = [r for r in ((fb[0], bc[0]), (bc[1], fb[1])) if r[1] > r[0]]
    regions = {"flip_any": [(0, len(data))], "flip_flatbuffer": fb_only, "flip_bytecode": [bc]}
    if elfs:
        regions["flip_elf"] = elfs
    return regions, execs


def _pick(rng: random.Random, ranges: list) -> int:
    total = sum(e - s for s, e in ranges)
    k = rng.randrange(total)
    for s, e in ranges:
        if k < e - s:
            return s + k
        k -= e - s
    raise AssertionError("unreachable")


@dataclass
class Mutation:
    seed: str
    target: Target
    kind: str
    data: bytes
    offsets: list  # flipped file offsets (empty for a truncation)
    truncate_at: int | None = None

    def describe(self) -> str:
        what = (f"truncated at {self.truncate_at}" if self.kind == "truncate"
                else f"flips at {self.offsets}")
        return f"seed {self.seed} [{self.target.name} {self.kind}] {what}"

    @property
    def code_bytes_only(self) -> bool:
        """Every changed byte lies in the file range of an executable PT_LOAD segment."""
        return bool(self.offsets) and all(
            any(s <= o < e for s, e in self.target.exec_ranges) for o in self.offsets)


def mutate(seed: str, targets: list[Target]) -> Mutation:
    rng = random.Random(seed)
    target = rng.choice(targets)
    kinds = [k for k in KINDS if k == "truncate" or k in target.regions]
    kind = rng.choice(kinds)
    data = bytearray(target.data)
    if kind == "truncate":
        at = rng.randrange(len(data))
        return Mutation(seed, target, kind, bytes(data[:at]), [], at)
    offsets = []
    for _ in range(rng.randint(1, 16)):
        o = _pick(rng, target.regions[kind])
        data[o] ^= rng.randint(1, 255)
        offsets.append(o)
    return Mutation(seed, target, kind, bytes(data), sorted(set(offsets)))


# -- the worker --------------------------------------------------------------------------------

class Worker(WorkerClient):
    """tests/mutation_worker.py as a subprocess (tests/mutation_client.py)."""

    def run(self, module: Path, args: list) -> dict:
        return self.send({"module": str(module), "args": args, "timeout": JOB_TIMEOUT_S},
                         JOB_DEADLINE_S)


# -- classification ----------------------------------------------------------------------------

def well_formed(stdout: str, target: Target) -> bool:
    lines = stdout.split("\n")
    if not stdout.endswith("\n") or lines[0] != f"EXEC @{target.function}":
        return False
    if "result[0]" in target.baseline and not re.search(r"^result\[0\]: ", stdout, re.M):
        return False
    return all(line.isprintable() for line in lines)


def classify(m: Mutation, r: dict) -> tuple[str, str]:
    """(outcome, detail). Outcomes: ok, error, code_crash, code_hang, and failures: crash, hang,
    timeout, traceback, internal, bad_exit, bad_stderr, bad_stdout."""
    if "dead" in r:
        kind = "hang" if r["dead"] == "hang" else "crash"
        if m.code_bytes_only:
            return f"code_{kind}", r["dead"]
        fatal = [ln for ln in r["log"].splitlines() if ln.startswith("Fatal Python error")]
        return kind, f"{r['dead']}: {fatal[-1] if fatal else r['log'][-300:]}"
    err = r["stderr"]
    if r["timeout"]:
        return ("code_hang" if m.code_bytes_only else "timeout"), f"> {JOB_TIMEOUT_S}s"
    if r["traceback"]:
        return "traceback", "\n".join(err[-8:])
    if r["internal"]:
        return "internal", "\n".join(err)
    if r["rc"] == 0:
        if err:
            return "bad_stderr", "\n".join(err)
        if not well_formed(r["stdout"], m.target):
            return "bad_stdout", r["stdout"][:300]
        return "ok", ""
    if r["rc"] != 1:
        return "bad_exit", f"exit {r['rc']}: {err}"
    if len(err) != 1 or not err[0].startswith("error: "):
        return "bad_stderr", "\n".join(err)
    return "error", err[0]


def _subset(m: Mutation, offsets: list) -> Mutation:
    data = bytearray(m.target.data)
    for o in offsets:
        data[o] = m.data[o]
    return Mutation(m.seed, m.target, m.kind, bytes(data), list(offsets))


def split_code_bytes(m: Mutation, outcome: str, detail: str, worker, tmp_path) -> tuple[str, str]:
    """A crash/hang of a mutation that flipped code bytes AND other bytes: it counts as a
    code-byte crash only if the code-byte flips alone reproduce it and the other flips alone
    obey the rules; otherwise it stays a failure."""
    code = [o for o in m.offsets if any(s <= o < e for s, e in m.target.exec_ranges)]
    if not code or len(code) == len(m.offsets):
        return outcome, detail
    rest = [o for o in m.offsets if o not in code]
    results = {}
    for name, offsets in (("code", code), ("rest", rest)):
        sub = _subset(m, offsets)
        path = tmp_path / f"split_{name}.vmfb"
        path.write_bytes(sub.data)
        results[name] = classify(sub, worker.run(path, m.target.args))
        path.unlink(missing_ok=True)
    if results["code"][0].startswith("code_") and results["rest"][0] not in FAILURES:
        return results["code"][0], f"{detail}; reproduced by the code-byte flips {code} alone"
    return outcome, f"{detail}; split: code {results['code']}, rest {results['rest']}"


def shared_with_iree(m: Mutation, outcome: str, detail: str, tmp_path) -> tuple[str, str]:
    """A crash or hang that IREE's own iree-run-module shows on the very same file (corrupted
    machine code or code pointers inside an embedded executable cannot be validated by either
    tool) is recorded as `iree_<outcome>`, reported, not asserted; any other stays a failure."""
    binary = _tool("IREE_RUN_MODULE", "iree-run-module")
    if not binary:
        return outcome, detail
    path = tmp_path / "shared.vmfb"
    path.write_bytes(m.data)
    try:
        r = subprocess.run([binary, "--device=local-sync", f"--module={path}", *m.target.args],
                           capture_output=True, timeout=JOB_TIMEOUT_S)
        theirs = "crash" if r.returncode < 0 or r.returncode >= 128 else None
    except subprocess.TimeoutExpired:
        theirs = "hang"
    finally:
        path.unlink(missing_ok=True)
    if theirs is None:
        return outcome, detail
    return f"iree_{outcome}", f"{detail}; iree-run-module {theirs}es on the same file too"


FAILURES = {"crash", "hang", "timeout", "traceback", "internal", "bad_exit", "bad_stderr",
            "bad_stdout"}


# -- fixtures ----------------------------------------------------------------------------------

def _tool(env: str, name: str) -> str | None:
    return os.environ.get(env) or shutil.which(name)


@pytest.fixture(scope="module")
def targets(tmp_path_factory) -> list[Target]:
    if not _tool("IREE_COMPILE", "iree-compile"):
        pytest.skip("iree-compile not on PATH")
    out_dir = os.environ.get("IREE_CORPUS_CACHE") or tmp_path_factory.mktemp("mutation_corpus")
    stems = sorted({stem for stem, _ in TARGETS})
    vmfbs = compile_corpus(out_dir, jobs=2, paths=[CORPUS_DIR / f"{s}.mlir" for s in stems])
    out = []
    for stem, index in TARGETS:
        case = load_cases(CORPUS_DIR / f"{stem}.mlir")[index]
        data = Path(vmfbs[stem]).read_bytes()
        regions, execs = _regions(data)
        args = [a for a in case.args]
        out.append(Target(f"{stem}:{case.function}", case.function, args, data, regions, execs))
    return out


def _budget() -> tuple[int | None, float]:
    """A fixed count by default (the same mutations on every machine); a time budget on request."""
    seconds = os.environ.get("AMDGPU_MUTATIONS_SECONDS")
    if seconds:
        return None, float(seconds)
    return int(os.environ.get("AMDGPU_MUTATIONS_COUNT", "2500")), float("inf")


# -- the random mutation run -------------------------------------------------------------------

def test_random_mutations(targets, tmp_path):
    worker = Worker(tmp_path)
    try:
        # Unmutated runs first: they must succeed, and give the stdout shape to check against.
        for t in targets:
            path = tmp_path / "base.vmfb"
            path.write_bytes(t.data)
            r = worker.run(path, t.args)
            assert r.get("rc") == 0, f"{t.name} fails unmutated: {r}"
            t.baseline = r["stdout"]
            assert well_formed(t.baseline, t), t.baseline

        seed = os.environ.get("AMDGPU_MUTATIONS_SEED", "1")
        count, seconds = _budget()
        repro = os.environ.get("AMDGPU_MUTATIONS_REPRO")
        seeds = [repro] if repro else None
        counts: Counter = Counter()
        by_kind: Counter = Counter()
        failures: list[str] = []
        code_crashes: list[str] = []
        messages: Counter = Counter()
        start = time.monotonic()
        i = 0
        while True:
            if seeds is not None:
                if i >= len(seeds):
                    break
                s = seeds[i]
            else:
                if (count is not None and i >= count) or time.monotonic() - start >= seconds:
                    break
                s = f"{seed}:{i}"
            m = mutate(s, targets)
            path = tmp_path / f"m{i % 2}.vmfb"  # a fresh file per job
            path.unlink(missing_ok=True)
            path.write_bytes(m.data)
            r = worker.run(path, m.target.args)
            path.unlink(missing_ok=True)
            outcome, detail = classify(m, r)
            if outcome in ("crash", "hang", "timeout"):
                outcome, detail = split_code_bytes(m, outcome, detail, worker, tmp_path)
            if outcome in ("crash", "hang", "timeout"):
                outcome, detail = shared_with_iree(m, outcome, detail, tmp_path)
            counts[outcome] += 1
            by_kind[(m.kind, outcome)] += 1
            if outcome == "error":
                messages[re.sub(r"\d+", "N", detail)[:100]] += 1
            if outcome in FAILURES:
                failures.append(f"{outcome}: {m.describe()}: {detail}")
            elif outcome.startswith(("code_", "iree_")):
                code_crashes.append(f"{outcome}: {m.describe()}: {detail}")
            i += 1
        elapsed = time.monotonic() - start
    finally:
        worker.stop()

    print(f"\n{i} mutations in {elapsed:.1f}s (seed {seed}, {worker.starts} worker starts)")
    print("outcomes: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    for kind in KINDS:
        row = {o: n for (k, o), n in by_kind.items() if k == kind}
        print(f"  {kind:16} " + ", ".join(f"{o}={n}" for o, n in sorted(row.items())))
    print(f"crashes/hangs not asserted (flips only inside executable PT_LOAD segments, or inputs "
          f"that crash iree-run-module too): {len(code_crashes)}")
    for line in code_crashes[:10]:
        print("  " + line)
    print("most common error lines:")
    for msg, n in messages.most_common(8):
        print(f"  {n:6}  {msg}")
    assert not failures, f"{len(failures)} of {i} mutations broke the rules:\n" + "\n".join(
        failures[:20])
    assert i > 0


# -- hand-corrupted bytecode -------------------------------------------------------------------

def _find_field(body: bytes, ins, name: str, value: int, width: int) -> int:
    """The body offset of operand `name` of `ins`: the spot where writing `value` changes it."""
    for p in range(ins.offset + 1, ins.offset + ins.length - width + 1):
        trial = bytearray(body)
        trial[p:p + width] = value.to_bytes(width, "little")
        try:
            got = decode_one(bytes(trial), ins.offset).operands.get(name)
        except BytecodeVerifyError:
            continue
        raw = getattr(got, "raw", got)
        if raw == value:
            return p
    raise AssertionError(f"operand {name} of {ins.mnemonic} not found")


def _corrupt(data: bytes, pick) -> tuple[bytes, str]:
    """Applies `pick(module, ordinal, body, instructions)` -> (body offset, bytes) or None to the
    first function where it finds something; returns the new file and the function's label."""
    m = load_vmfb(data)
    for ordinal, desc in enumerate(m.functions):
        body = bytes(m.function_bytecode(ordinal))
        hit = pick(m, body, decode(body))
        if hit is None:
            continue
        offset, new = hit
        pos = m.container.bytecode_offset + desc.bytecode_offset + offset
        out = bytearray(data)
        out[pos:pos + len(new)] = new
        return bytes(out), m.function_label(ordinal)
    raise AssertionError("nothing to corrupt")


def _bad_register(m, body, code):
    for ins in code:
        for f in ins.op.fields:
            if f.kind == isa.REG and f.bank == "i32":
                bad = 0x7FF0
                return _find_field(body, ins, f.name, bad, 2), bad.to_bytes(2, "little")
    return None


def _bad_branch(m, body, code):
    for ins in code:
        for f in ins.op.fields:
            if f.kind == isa.TARGET:
                bad = len(body) + 0x40
                return _find_field(body, ins, f.name, bad, 4), bad.to_bytes(4, "little")
    return None


def _bad_rodata(m, body, code):
    for ins in code:
        for f in ins.op.fields:
            if f.kind == isa.RODATA:
                bad = len(m.rodata) + 7
                return _find_field(body, ins, f.name, bad, 4), bad.to_bytes(4, "little")
    return None


CORRUPTIONS = {
    "bad_register": (_bad_register, r"register %i\d+ out of range"),
    "branch_outside_body": (_bad_branch, r"branch target [0-9A-F]{8} is not a block"),
    "rodata_out_of_range": (_bad_rodata, r"rodata segment \d+ out of range"),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_verifier_rejects_before_any_op(corruption, targets, tmp_path):
    from amdgpu_cli.hal.registry import default_registry
    from amdgpu_cli.vm.context import NativeFunction, NativeModule, VmContext
    from amdgpu_cli.vm.hal_module import HalModule

    pick, pattern = CORRUPTIONS[corruption]
    target = next(t for t in targets if t.name.startswith("matmul"))
    # matmul's module has an __init (executable loading: hal imports, rodata) and exports whose
    # bodies call hal imports; scf_while's have branches. Corrupt the first function that fits.
    source = target
    try:
        data, label = _corrupt(target.data, pick)
    except AssertionError:
        source = next(t for t in targets if t.name.startswith("scf_while"))
        data, label = _corrupt(source.data, pick)
    path = tmp_path / "bad.vmfb"
    path.write_bytes(data)

    # The CLI: exit 1, one line naming the function and offset, nothing printed on stdout.
    exe = shutil.which("amdgpu-run")
    cmd = [exe] if exe else [sys.executable, "-c",
                             "from amdgpu_cli.cli.main import run_main; run_main()"]
    proc = subprocess.run([*cmd, "--device=local-sync", f"--module={path}", *source.args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: INVALID_ARGUMENT; {label}+"), lines[0]
    assert re.search(pattern, lines[0]), lines[0]
    assert "EXEC" not in proc.stdout, proc.stdout
    print(f"\n{corruption}: {lines[0]}")

    # No op ran: instantiation over a recording `hal` module fails with no import called.
    calls: list[str] = []

    class RecordingHal(NativeModule):
        def __init__(self, inner):
            self.name, self.version = inner.name, inner.version

            def wrap(name, fn):
                def call(*args):
                    calls.append(name)
                    return fn(*args)
                return call
            self._fns = {k: NativeFunction(f.name, f.cconv, wrap(k, f.fn))
                         for k, f in inner.functions().items()}

        def functions(self):
            return self._fns

    devices = default_registry().create_devices(["local-sync"])
    try:
        with pytest.raises(BytecodeVerifyError, match=pattern):
            VmContext(load_vmfb(data), native_modules=[RecordingHal(HalModule(devices))])
        assert calls == [], f"imports ran before the verifier rejected the module: {calls}"
        # The same recording module over the intact bytes does make calls (the check is live).
        ctx = VmContext(load_vmfb(source.data), native_modules=[RecordingHal(HalModule(devices))])
        ctx.close()
        if "__init" in load_vmfb(source.data).exports_by_name:
            assert calls, "__init made no import call; the recording check proves nothing"
    finally:
        for d in devices:
            d.close()


# -- binding lengths set by @__init (issue 12, finding 3) -----------------------------------------

def _dispatch_binding_length(data: bytes, length_value: int | None) -> bytes:
    """`data` with the length of the first binding of the first recorded dispatch (a memoized
    command buffer's, built during @__init) read from another i64 register: one holding 0
    (`length_value` None: a const.i64.zero) or one holding `length_value` (a const.i64). Changes
    the one byte of that register operand; the function still verifies."""
    m = load_vmfb(data)
    dispatch = next(i.ordinal for i in m.imports if i.full_name == "hal.command_buffer.dispatch")
    for ordinal, desc in enumerate(m.functions):
        body = bytes(m.function_bytecode(ordinal))
        code = decode(body)
        calls = [ins for ins in code if ins.mnemonic == "call.variadic"
                 and ins["callee_ordinal"] == (True, dispatch)]
        if not calls:
            continue
        if length_value is None:
            source = next(ins["result"] for ins in code if ins.mnemonic == "const.i64.zero")
        else:
            source = next(ins["result"] for ins in code
                          if ins.mnemonic == "const.i64" and ins["value"] == length_value)
        ins = calls[0]
        operands = ins["operands"]
        # (cb, executable, ordinal, x, y, z, flags, constants..., (i32, slot, buffer, offset,
        # length)...): the first binding's length.
        k = 7 + ins["segment_sizes"][-2] + 4
        assert operands[k].bank == "any" and operands[k].raw != source.raw
        for p in range(ins.offset + 1, ins.offset + ins.length):
            if body[p] != operands[k].raw & 0xFF:
                continue
            trial = bytearray(body)
            trial[p] = source.raw & 0xFF
            try:
                got = decode_one(bytes(trial), ins.offset)["operands"]
            except BytecodeVerifyError:
                continue
            if got[k].raw == source.raw and all(
                    a.raw == b.raw for j, (a, b) in enumerate(zip(got, operands)) if j != k):
                out = bytearray(data)
                out[m.container.bytecode_offset + desc.bytecode_offset + p] = source.raw & 0xFF
                return bytes(out)
    raise AssertionError("no dispatch binding length to change")


def _run_both(path: Path, args: list, device: str) -> tuple[subprocess.CompletedProcess, ...]:
    exe = shutil.which("amdgpu-run")
    ours = [exe] if exe else [sys.executable, "-c",
                              "from amdgpu_cli.cli.main import run_main; run_main()"]
    mine = subprocess.run([*ours, f"--device={device}", f"--module={path}", *args],
                          capture_output=True, text=True, timeout=120)
    theirs = subprocess.run([_tool("IREE_RUN_MODULE", "iree-run-module"), f"--device={device}",
                             f"--module={path}", *args], capture_output=True, text=True,
                            timeout=120)
    return mine, theirs


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_zero_binding_length_from_init_runs_as_iree_does(device, targets, tmp_path):
    """A module whose @__init records a dispatch binding of length 0 (one byte: the length
    operand names the zero register). IREE maps a zero-length range to base + offset and the
    kernel, which does not read binding lengths, runs on the slot's buffer: iree-run-module
    prints the unmutated result. We print the same (before the fix: SIGSEGV, a NULL binding)."""
    if not _tool("IREE_RUN_MODULE", "iree-run-module"):
        pytest.skip("iree-run-module not on PATH")
    target = next(t for t in targets if t.name.startswith("softmax"))
    path = tmp_path / "zero_length.vmfb"
    path.write_bytes(_dispatch_binding_length(target.data, None))
    mine, theirs = _run_both(path, target.args, device)
    assert theirs.returncode == 0, theirs.stderr
    assert mine.returncode == 0, f"exit {mine.returncode}: {mine.stderr[-2000:]}"
    assert mine.stdout == theirs.stdout
    unmutated = tmp_path / "unmutated.vmfb"
    unmutated.write_bytes(target.data)
    assert mine.stdout == _run_both(unmutated, target.args, device)[1].stdout


def test_binding_length_past_its_slot_is_one_error_line(targets, tmp_path):
    """The same operand pointed at a larger length (64 bytes of a 32-byte slot): IREE fails the
    execution with OUT_OF_RANGE; so do we, as one error line and exit 1, before any kernel."""
    if not _tool("IREE_RUN_MODULE", "iree-run-module"):
        pytest.skip("iree-run-module not on PATH")
    target = next(t for t in targets if t.name.startswith("softmax"))
    path = tmp_path / "long.vmfb"
    path.write_bytes(_dispatch_binding_length(target.data, 64))
    mine, theirs = _run_both(path, target.args, "local-sync")
    assert theirs.returncode != 0 and "OUT_OF_RANGE" in theirs.stderr
    assert mine.returncode == 1, mine.stderr
    lines = mine.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: OUT_OF_RANGE"), mine.stderr
    assert "outside binding slot" in lines[0]

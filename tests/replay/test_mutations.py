"""Bad input for `amdgpu-replay run` (and `dump`): random mutations of IREE's own captures give
one error line and exit 1, or a clean run; never a traceback, a hang or a crash.

test_random_replay_mutations
    IREE 3.13.0 captures (iree-run-module --device_replay_output, fixture iree_captures) of a few
    corpus models of different kinds: dispatch-heavy (matmul, softmax, layernorm), a file import
    and queue_read with loop-carried state (rnn_state), VM loops (scf_while), dynamic shapes with
    constants (dynamic_shapes). Each mutation is one of
        truncate       a cut at a record boundary or mid-record; mostly with the header's
                       file_length set to 0 (an open capture, so the records before the cut stay
                       readable), else with it left (longer than the file)
        flip_any       1-16 bytes XORed anywhere
        flip_header    1-3 record-header fields (record/payload/header length, ordinal, device,
                       object and related ids, record type, flags, payload/object type, op,
                       status), or a file-header field, set to an edge value or bit-flipped
        flip_counts    1-3 payload counts and lengths (wait/signal/binding counts, data, pattern,
                       constants, format/metadata lengths, buffer_ref offsets and lengths,
                       metadata function/parameter counts and name lengths)
        flip_ids       1-3 object ids inside payloads (buffer, semaphore, executable, command
                       buffer, file and event ids, binding slots) or semaphore timepoint values,
                       set to another id of the file, an edge value, or bit-flipped
        flip_elf       1-16 bytes XORed inside the executable data (the ELF) of an
                       executable_prepare record
    and goes, as a fresh file, through `amdgpu-replay run --device=local-sync FILE`,
    `amdgpu-replay dump FILE` and `amdgpu-replay dump --format=jsonl FILE` in a long-lived worker
    subprocess (tests/mutation_worker.py, entry "replay": the console script's main in-process,
    with a SIGALRM time limit per job and a wall deadline kept by this process). Each job must
    exit 0 (run: nothing printed; dump: a well-formed report), or exit 1 with exactly one stderr
    line starting "error: " and neither "Traceback" nor "internal error". A worker that dies (a
    native crash) or misses its deadline, and a job stopped by its alarm, are recorded with the
    mutation's seed; the worker is restarted.

    Not asserted, counted apart and printed (as in tests/test_run_mutations.py):
      code_*   a crash or hang of `run` whose changed bytes ALL lie inside the file range of an
               executable (PF_X) PT_LOAD segment of an executable_prepare's ELF (machine code
               cannot be validated; a mix of code and other bytes is split and counts here only
               if the code bytes alone reproduce it and the other bytes alone obey the rules);
      iree_*   a crash or hang of `run` that iree-run-replay shows on the very same file too
               (e.g. a queue op waiting on a semaphore value nothing signals: IREE's executor
               blocks forever, ireereplay.md §4.2; run here with a IREE_HANG_S time limit).
    A hang of `dump` is always a failure, and so is anything else.

    Budget: exactly AMDGPU_REPLAY_MUTATIONS_COUNT mutations (default 1500; 10000 for the
    one-off acceptance run), or AMDGPU_REPLAY_MUTATIONS_SECONDS seconds of mutation work when
    that is set; AMDGPU_REPLAY_MUTATIONS_SEED (default 1) seeds the run. Mutation i uses
    Random(f"{seed}:{i}"), so a reported seed reproduces alone:
        AMDGPU_REPLAY_MUTATIONS_REPRO=SEED:I pytest tests/replay/test_mutations.py -s
    (the mutated file is then kept as mutant.ireereplay under pytest's tmp_path and printed).
    The worker and iree-run-replay run under a 4 GiB address-space limit (MEMORY_LIMIT).
    IREE_CORPUS_CACHE / IREE_REPLAY_CACHE reuse compiled modules and captures.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import struct
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mutation_client import WorkerClient

from amdgpu_cli.formats.elf import PF_X, PT_LOAD, parse_elf
from amdgpu_cli.replay import schema
from amdgpu_cli.replay.reader import ReplayFile, payload_layout
from amdgpu_cli.replay.schema import PayloadType as P


# (corpus model, device of IREE's capture): small captures of different kinds.
TARGETS = [
    ("matmul", "local-sync"),          # 6 dispatch functions, command buffers, barriers
    ("softmax", "local-task"),         # reductions, several dispatches
    ("layernorm", "local-sync"),       # dispatch-heavy
    ("rnn_state", "local-sync"),       # import_file (inline bytes) + queue_read, state
    ("scf_while", "local-task"),       # VM loops: few device ops
    ("dynamic_shapes", "local-sync"),  # dynamic shapes, constants, queue_alloca
]

RUN_TIMEOUT_S = 2.0     # worker-side alarm per run job (an unmutated run takes ~3 ms)
DUMP_TIMEOUT_S = 5.0    # per dump job (~1 ms unmutated)
DEADLINE_EXTRA_S = 8.0  # parent-side wall deadline past the alarm (native code ignores it)
IREE_HANG_S = 2.0       # iree-run-replay on the same file: running past this counts as a hang
# Address-space limit of the worker and of iree-run-replay: a mutated size or id must not take
# the (shared) machine's memory; an allocation past it fails (ours: "error: out of memory",
# IREE: RESOURCE_EXHAUSTED) as it would on a smaller machine. An unmutated worker peaks < 100 MB.
MEMORY_LIMIT = 4 << 30
KINDS = ("truncate", "flip_any", "flip_header", "flip_counts", "flip_ids", "flip_elf")
FAILURES = {"crash", "hang", "timeout", "traceback", "internal", "bad_exit", "bad_stderr",
            "bad_stdout"}

_FILE_HEADER_FIELDS = [(0, 4), (4, 2), (6, 2), (8, 4), (12, 4), (16, 8)]
# (offset, size) of the record-header fields (ireereplay.md §1.2), pad and reserved set aside.
_RECORD_HEADER_FIELDS = [(0, 8), (8, 8), (16, 8), (24, 8), (32, 8), (40, 8), (48, 8), (56, 4),
                         (60, 2), (62, 2), (64, 4), (68, 4), (72, 4), (76, 4)]


# -- captures and their regions ----------------------------------------------------------------

def _layout_fields(layout, base: int = 0, prefix: str = "") -> list[tuple[str, int, int]]:
    """(dotted name, offset, size) of every scalar field of a schema.Layout."""
    out, offset = [], base
    for name, code in layout.fields:
        if isinstance(code, schema.Layout):
            out += _layout_fields(code, offset, f"{prefix}{name}.")
            offset += code.size
            continue
        size = struct.calcsize("<" + code)
        if name and not code.endswith(("x", "s")):
            if code[:-1].isdigit():  # u32[3]: one field per element
                element = size // int(code[:-1])
                out += [(f"{prefix}{name}[{k}]", offset + k * element, element)
                        for k in range(int(code[:-1]))]
            else:
                out.append((f"{prefix}{name}", offset, size))
        offset += size
    return out


def _is_count(name: str) -> bool:
    leaf = name.rsplit(".", 1)[-1]
    return (leaf.endswith(("_count", "_length", "_size")) or leaf in ("length", "offset")
            or leaf.startswith("workgroup_size")) and not leaf.startswith("reserved")


def _is_id(name: str) -> bool:
    leaf = name.rsplit(".", 1)[-1]
    return leaf.endswith("_id") or leaf == "buffer_slot"


_BUFFER_REF_FIELDS = _layout_fields(schema.BUFFER_REF)
_ELEMENT_FIELDS = {  # tail part -> (element fields)
    "wait_semaphores": _layout_fields(schema.TIMEPOINT),
    "signal_semaphores": _layout_fields(schema.TIMEPOINT),
    "bindings": _BUFFER_REF_FIELDS,
    "buffer_barriers": _layout_fields(schema.BUFFER_BARRIER),
    "events": [("event_id", 0, 8)],
}


@dataclass
class Target:
    name: str
    path: Path
    data: bytes
    record_offsets: list = field(default_factory=list)
    headers: list = field(default_factory=list)      # (offset, size) of record-header fields
    counts: list = field(default_factory=list)       # (offset, size) of payload counts/lengths
    ids: list = field(default_factory=list)          # (offset, size) of payload ids/timepoints
    id_values: list = field(default_factory=list)    # the object ids of the file
    elf_ranges: list = field(default_factory=list)   # executable data of executable_prepare
    exec_ranges: list = field(default_factory=list)  # PF_X PT_LOAD file ranges inside them


def _analyse(name: str, path: Path) -> Target:
    data = path.read_bytes()
    t = Target(name, path, data)
    ids = set()
    with ReplayFile.from_bytes(data) as replay:
        for r in replay.records():
            t.record_offsets.append(r.file_offset)
            t.headers += [(r.file_offset + o, n) for o, n in _RECORD_HEADER_FIELDS]
            ids.update(v for v in (r.device_id, r.object_id, r.related_object_id) if v)
            payload = replay.payload(r)
            layout = schema.PAYLOADS.get(r.payload_type)
            if layout is None or not len(payload):
                continue
            base = r.payload_offset
            for fname, o, n in _layout_fields(layout):
                if _is_count(fname):
                    t.counts.append((base + o, n))
                elif _is_id(fname):
                    t.ids.append((base + o, n))
            _, parts = payload_layout(r.payload_type, payload)
            for part, (offset, length, element) in parts.items():
                fields = _ELEMENT_FIELDS.get(part)
                if fields and element:
                    for k in range(length // element):
                        for fname, o, n in fields:
                            at = base + offset + k * element + o
                            (t.ids if _is_id(fname) or fname == "value" else
                             t.counts if _is_count(fname) else []).append((at, n))
            if r.payload_type == P.EXECUTABLE_PREPARE:
                offset, length, _ = parts["data"]
                start = base + offset
                t.elf_ranges.append((start, start + length))
                image = parse_elf(bytes(payload[offset:offset + length]))
                for ph in image.program_headers:
                    if ph.type == PT_LOAD and ph.flags & PF_X and ph.filesz:
                        t.exec_ranges.append((start + ph.offset, start + ph.offset + ph.filesz))
                m_offset, m_length, _ = parts["metadata"]
                meta = base + m_offset
                t.counts += [(meta + o, n) for _, o, n in _layout_fields(schema.METADATA_HEADER)
                             if not _.startswith("reserved")]
                functions = struct.unpack_from("<Q", payload, m_offset)[0]
                for k in range(functions):
                    t.counts += [(meta + 32 + 32 * k + o, n)
                                 for f, o, n in _layout_fields(schema.METADATA_FUNCTION)
                                 if f != "flags"]
    t.id_values = sorted(ids)
    return t


# -- mutations ---------------------------------------------------------------------------------

@dataclass
class Mutation:
    seed: str
    target: Target
    kind: str
    data: bytes
    offsets: list              # changed file offsets (empty for a truncation)
    what: str = ""

    def describe(self) -> str:
        return f"seed {self.seed} [{self.target.name} {self.kind}] {self.what}"

    @property
    def code_bytes_only(self) -> bool:
        """Every changed byte lies in the file range of an executable PT_LOAD segment."""
        return bool(self.offsets) and all(
            any(s <= o < e for s, e in self.target.exec_ranges) for o in self.offsets)


def _pick(rng: random.Random, ranges: list) -> int:
    total = sum(e - s for s, e in ranges)
    k = rng.randrange(total)
    for s, e in ranges:
        if k < e - s:
            return s + k
        k -= e - s
    raise AssertionError("unreachable")


def _set_field(rng, data: bytearray, at: int, size: int, extra: tuple = ()) -> str:
    old = int.from_bytes(data[at:at + size], "little")
    limit = 1 << (8 * size)
    choice = rng.random()
    if choice < 0.35:
        new = old ^ (1 << rng.randrange(8 * size))
    elif choice < 0.5:
        new = (old + rng.choice((-1, 1))) % limit
    else:
        new = rng.choice((0, 1, 2, 3, 7, 24, 95, 96, 97, 255, 4096, 1 << 31, 1 << 59, 1 << 60,
                          limit - 1, limit - 100, rng.randrange(limit), *extra)) % limit
    data[at:at + size] = new.to_bytes(size, "little")
    return f"@{at}:{size} {old:#x}->{new:#x}"


def mutate(seed: str, targets: list[Target]) -> Mutation:
    rng = random.Random(seed)
    target = rng.choice(targets)
    kind = rng.choice([k for k in KINDS if k != "flip_elf" or target.elf_ranges])
    data = bytearray(target.data)
    if kind == "truncate":
        if rng.random() < 0.5:
            at = rng.choice(target.record_offsets[1:] + [len(data)])
            where = "boundary"
        else:
            at = rng.randrange(len(data))
            where = "mid"
        out = data[:at]
        open_header = len(out) >= 24 and rng.random() < 0.75
        if open_header:
            struct.pack_into("<Q", out, 16, 0)
        what = f"truncated at {at} ({where}{', open' if open_header else ''})"
        return Mutation(seed, target, kind, bytes(out), [], what)
    offsets: list[int] = []
    notes: list[str] = []
    if kind in ("flip_any", "flip_elf"):
        ranges = [(0, len(data))] if kind == "flip_any" else target.elf_ranges
        for _ in range(rng.randint(1, 16)):
            o = _pick(rng, ranges)
            data[o] ^= rng.randint(1, 255)
            offsets.append(o)
        offsets = sorted(set(offsets))
        return Mutation(seed, target, kind, bytes(data), offsets, f"flips at {offsets}")
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if kind == "flip_header":
            at, size = (rng.choice(_FILE_HEADER_FIELDS) if rng.random() < 0.05
                        else rng.choice(target.headers))
            extra = tuple(target.id_values)
        elif kind == "flip_counts":
            at, size = rng.choice(target.counts)
            extra = ()
        else:
            at, size = rng.choice(target.ids)
            extra = tuple(target.id_values) * 4  # another object of the file, mostly
        notes.append(_set_field(rng, data, at, size, extra))
        offsets += range(at, at + size)
    return Mutation(seed, target, kind, bytes(data), sorted(set(offsets)), " ".join(notes))


def _limit_memory() -> None:  # preexec_fn of the subprocesses
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


# -- the worker --------------------------------------------------------------------------------

class Worker(WorkerClient):
    """tests/mutation_worker.py as a subprocess (entry "replay", tests/mutation_client.py),
    under the memory limit; restarted after a crash, a hang or a job stopped by its alarm."""

    def __init__(self, log_dir: Path):
        super().__init__(log_dir, preexec_fn=_limit_memory, restart_after_timeout=True)

    def run(self, args: list, timeout: float) -> dict:
        return self.send({"entry": "replay", "args": [str(a) for a in args], "timeout": timeout},
                         timeout + DEADLINE_EXTRA_S)


# -- classification ----------------------------------------------------------------------------

JOBS = {  # name -> (amdgpu-replay arguments before the file, time limit)
    "run": (["run", "--device=local-sync"], RUN_TIMEOUT_S),
    "dump": (["dump"], DUMP_TIMEOUT_S),
    "jsonl": (["dump", "--format=jsonl"], DUMP_TIMEOUT_S),
}


def classify(job: str, r: dict) -> tuple[str, str]:
    """(outcome, detail). Outcomes: ok, error, and the FAILURES (crash, hang, timeout,
    traceback, internal, bad_exit, bad_stderr, bad_stdout)."""
    if "dead" in r:
        kind = "hang" if r["dead"] == "hang" else "crash"
        fatal = [ln for ln in r["log"].splitlines() if ln.startswith("Fatal Python error")]
        return kind, f"{r['dead']}: {fatal[-1] if fatal else r['log'][-300:]}"
    err = r["stderr"]
    if r["timeout"]:
        return "timeout", f"> {JOBS[job][1]}s"
    if r["traceback"]:
        return "traceback", "\n".join(err[-8:])
    if r["internal"]:
        return "internal", "\n".join(err)
    if r["rc"] == 0:
        if err:
            return "bad_stderr", "\n".join(err)
        out = r["stdout"]
        good = {"run": out == "", "dump": re.match(r"IREE HAL replay v2\.\d+\n", out) is not None,
                "jsonl": out.startswith('{"kind":"file"')}[job]
        return ("ok", "") if good else ("bad_stdout", out[:300])
    if r["rc"] != 1:
        return "bad_exit", f"exit {r['rc']}: {err}"
    if len(err) != 1 or not err[0].startswith("error: "):
        return "bad_stderr", "\n".join(err)
    return "error", err[0]


def _iree_run_replay() -> str | None:
    """The native iree-run-replay the wheel's console script runs (killing the wrapper on a
    timeout would leave the native process spinning); the PATH tool otherwise."""
    try:
        import iree._runtime_libs as libs

        native = Path(libs.__file__).parent / "iree-run-replay"
        if native.is_file():
            return str(native)
    except ImportError:
        pass
    return os.environ.get("IREE_RUN_REPLAY") or shutil.which("iree-run-replay")


def iree_outcome(path: Path) -> str:
    """'crash', 'hang' or 'ok'/'error' of iree-run-replay --device=local-sync on `path`."""
    binary = _iree_run_replay()
    proc = subprocess.Popen([binary, "--device=local-sync", str(path)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=_limit_memory)
    try:
        rc = proc.wait(timeout=IREE_HANG_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return "hang"
    return "crash" if rc < 0 or rc >= 128 else ("ok" if rc == 0 else "error")


def _write(path: Path, data: bytes) -> Path:
    path.unlink(missing_ok=True)  # a fresh file per job (the reader maps it)
    path.write_bytes(data)
    return path


def run_mutant(m: Mutation, worker: Worker, path: Path) -> dict[str, tuple[str, str]]:
    """{job: (outcome, detail)} of the three jobs on the mutant."""
    _write(path, m.data)
    out = {}
    for job, (args, timeout) in JOBS.items():
        out[job] = classify(job, worker.run([*args, path], timeout))
    return out


def settle_run(m: Mutation, outcome: str, detail: str, worker: Worker,
               path: Path) -> tuple[str, str]:
    """A crash/hang/timeout of `run`: code_* if machine-code bytes alone explain it, iree_* if
    iree-run-replay crashes or hangs on the same file too; otherwise it stays a failure."""
    kind = "crash" if outcome == "crash" else "hang"
    if m.code_bytes_only:
        return f"code_{kind}", detail
    code = [o for o in m.offsets if any(s <= o < e for s, e in m.target.exec_ranges)]
    if code:  # mixed: the code flips alone must reproduce, the others alone must obey
        subsets = {}
        for name, offsets in (("code", code), ("rest", [o for o in m.offsets if o not in code])):
            data = bytearray(m.target.data)
            for o in offsets:
                data[o] = m.data[o]
            _write(path, bytes(data))
            subsets[name] = classify("run", worker.run([*JOBS["run"][0], path], RUN_TIMEOUT_S))
        if subsets["code"][0] in ("crash", "hang", "timeout") and \
                subsets["rest"][0] in ("ok", "error"):
            return f"code_{kind}", f"{detail} (the code-byte flips alone: {subsets['code'][0]})"
    _write(path, m.data)
    theirs = iree_outcome(path)
    if theirs in ("crash", "hang"):
        return f"iree_{kind}", f"{detail}; iree-run-replay {theirs}s on the same file too"
    return outcome, f"{detail}; iree-run-replay: {theirs}"


# -- fixtures ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def targets(iree_captures) -> list[Target]:
    if not _iree_run_replay():
        pytest.skip("iree-run-replay not on PATH")
    return [_analyse(f"{stem}.{device}", iree_captures(stem, device).path)
            for stem, device in TARGETS]


def _budget() -> tuple[int | None, float]:
    seconds = os.environ.get("AMDGPU_REPLAY_MUTATIONS_SECONDS")
    if seconds:
        return None, float(seconds)
    return int(os.environ.get("AMDGPU_REPLAY_MUTATIONS_COUNT", "1500")), float("inf")


def test_targets_have_every_region(targets):
    """Every mutation kind has somewhere to land, and the regions are where the format says."""
    for t in targets:
        assert t.headers and t.counts and t.ids and t.id_values, t.name
        assert t.elf_ranges and t.exec_ranges, t.name
        for s, e in t.elf_ranges:
            assert t.data[s:s + 4] == b"\x7fELF", t.name
        assert all(any(s <= a and b <= e for s, e in t.elf_ranges) for a, b in t.exec_ranges)
    with ReplayFile.from_bytes(next(t for t in targets if t.name.startswith("rnn_state")).data) \
            as replay:
        ops = {r.operation_code for r in replay.records()}
    assert {schema.Op.DEVICE_IMPORT_FILE, schema.Op.DEVICE_QUEUE_READ} <= ops


# -- the random mutation run -------------------------------------------------------------------

def test_random_replay_mutations(targets, tmp_path):
    worker = Worker(tmp_path)
    path = tmp_path / "mutant.ireereplay"
    try:
        for t in targets:  # unmutated: every job succeeds
            for job, outcome in run_mutant(Mutation("base", t, "none", t.data, []), worker,
                                           path).items():
                assert outcome[0] == "ok", f"{t.name} {job} fails unmutated: {outcome}"

        seed = os.environ.get("AMDGPU_REPLAY_MUTATIONS_SEED", "1")
        count, seconds = _budget()
        repro = os.environ.get("AMDGPU_REPLAY_MUTATIONS_REPRO")
        seeds = [repro] if repro else None
        counts: Counter = Counter()        # outcome of `run`
        dump_counts: Counter = Counter()   # outcome of `dump` (text and jsonl)
        by_kind: Counter = Counter()
        failures: list[str] = []
        apart: list[str] = []
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
            results = run_mutant(m, worker, path)
            outcome, detail = results["run"]
            if outcome in ("crash", "hang", "timeout"):
                outcome, detail = settle_run(m, outcome, detail, worker, path)
            counts[outcome] += 1
            by_kind[(m.kind, outcome)] += 1
            if outcome == "error":
                messages[re.sub(r"\d+", "N", detail)[:110]] += 1
            if outcome in FAILURES:
                failures.append(f"run {outcome}: {m.describe()}: {detail}")
            elif outcome.startswith(("code_", "iree_")):
                apart.append(f"{outcome}: {m.describe()}: {detail}")
            for job in ("dump", "jsonl"):
                d_outcome, d_detail = results[job]
                dump_counts[d_outcome] += 1
                if d_outcome in FAILURES:
                    failures.append(f"{job} {d_outcome}: {m.describe()}: {d_detail}")
            if repro:
                print(f"\n{m.describe()}\n  file: {path}\n  run: {outcome} {detail}\n"
                      f"  dump: {results['dump']}\n  jsonl: {results['jsonl']}")
            i += 1
        elapsed = time.monotonic() - start
    finally:
        worker.stop()
        if not repro:
            path.unlink(missing_ok=True)

    print(f"\n{i} replay mutations in {elapsed:.1f}s (seed {seed}, {worker.starts} worker "
          f"starts)")
    print("run outcomes: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    print("dump outcomes (text + jsonl): " + ", ".join(
        f"{k}={v}" for k, v in sorted(dump_counts.items())))
    for kind in KINDS:
        row = {o: n for (k, o), n in by_kind.items() if k == kind}
        print(f"  {kind:12} " + ", ".join(f"{o}={n}" for o, n in sorted(row.items())))
    print(f"run crashes/hangs not asserted (changed bytes only inside executable PT_LOAD "
          f"segments, or iree-run-replay crashes/hangs on the same file too): {len(apart)}")
    for line in apart[:12]:
        print("  " + line)
    print("most common run error lines:")
    for msg, n in messages.most_common(10):
        print(f"  {n:6}  {msg}")
    assert not failures, f"{len(failures)} of {i} mutations broke the rules:\n" + "\n".join(
        failures[:20])
    assert i > 0

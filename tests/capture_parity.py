"""Captures the same run with iree-run-module and amdgpu-run and compares the bundles through
iree-profile's reports (the oracle reads both).

    python tests/capture_parity.py [MODEL...]      # every corpus model (build/corpus), both drivers

What legitimately differs, and is removed before comparing (`normalize`):
- times and durations: every field whose name ends in `_ns`, `_time` or `_tick(s)` or holds
  `duration` (two runs never take the same time), and fields derived from them (`avg`, `stddev`,
  `min`/`max`, `span`, `total_*_ns`);
- host addresses: `pool_id` and `backing_id` (IREE writes the pool's and block's addresses);
- where work waits: our queues run every operation inline, in order, on the submitting thread, so
  a wait is always met by the time the next operation is submitted; IREE's local-task queue runs
  command buffers on worker threads, so an operation submitted behind one is software-deferred.
  The dependency strategy `software_defer` is read as `inline`, and the SOFTWARE_DEFERRED queue
  flag (bit 0) and host-execution DEFERRED flag (bit 2) are masked;
- the pool's acquire `result` (0 OK or 1 OK_FRESH): which of the two a reuse gets depends on the
  pool's internal block cache, not on the program;
- the memory report's pool count (`pools`), which counts distinct `pool_id` values.
Everything else must be equal: record families and counts, ids, function names, workgroup counts
and sizes, command-buffer operations, byte counts, offsets and pool statistics.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

FAMILIES = ("queue-events", "host-execution", "memory-events", "command-region-events",
            "executable-metadata")
REPORTS = ("summary", "command", "queue", "memory", "dispatch")

_TIME_WORDS = ("duration", "avg", "stddev")
_TIME_SUFFIXES = ("_ns", "_time", "_tick", "_ticks", "_hz")
_IGNORED = {"pool_id", "backing_id", "result", "pools"}


def _timing(key: str) -> bool:
    return key.endswith(_TIME_SUFFIXES) or any(w in key for w in _TIME_WORDS) or \
        key in ("span", "min", "max") or key.startswith(("min_", "max_"))


def normalize(row: dict) -> dict:
    out = {}
    for key, value in row.items():
        if key in _IGNORED or _timing(key):
            continue
        if key == "dependency_strategy" and value == "software_defer":
            value = "inline"
        if key == "flags" and row.get("type") == "queue_event":
            value &= ~1
        if key == "flags" and row.get("type") == "host_execution_event":
            value &= ~4
        if isinstance(value, dict):
            value = normalize(value)
        out[key] = value
    return out


def report_rows(iree_profile: str, report: str, bundle: Path) -> list[dict]:
    done = subprocess.run([iree_profile, report, "--format=jsonl", str(bundle)],
                          capture_output=True, text=True, timeout=120)
    if done.returncode:
        raise AssertionError(f"iree-profile {report} {bundle.name} failed: {done.stderr.strip()}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def capture(tool: list[str], device: str, vmfb: Path, args: list[str], families: str,
            out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*tool, f"--device={device}", f"--module={vmfb}", *args,
                           f"--device_profiling_mode={families}",
                           f"--device_profiling_output={out}"],
                          capture_output=True, text=True, timeout=300)


def differences(iree_profile: str, ours: Path, theirs: Path,
                reports=REPORTS) -> list[str]:
    """Report rows that differ after `normalize` (empty: the bundles agree)."""
    found = []
    for report in reports:
        a = [normalize(r) for r in report_rows(iree_profile, report, ours)]
        b = [normalize(r) for r in report_rows(iree_profile, report, theirs)]
        if len(a) != len(b):
            found.append(f"{report}: {len(a)} rows (ours) vs {len(b)} (IREE)")
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                keys = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
                found.append(f"{report} row {i} ({y.get('type')}): " + ", ".join(
                    f"{k}: ours {x.get(k)!r} IREE {y.get(k)!r}" for k in keys))
    return found


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from corpus_util import compile_corpus, load_corpus

    root = Path(__file__).resolve().parent.parent
    vmfbs = compile_corpus(root / "build" / "corpus")
    iree_profile = shutil.which("iree-profile")
    work = root / "build" / "capture-parity"
    work.mkdir(parents=True, exist_ok=True)
    seen = set()
    bad = 0
    for case in load_corpus():
        if case.stem in seen or (argv and case.stem not in argv):
            continue
        seen.add(case.stem)
        args = [a for a in case.args]
        for device in ("local-task", "local-sync"):
            mine, theirs = work / f"{case.stem}-{device}-ours.ireeprof", \
                work / f"{case.stem}-{device}-iree.ireeprof"
            a = capture(["amdgpu-run"], device, vmfbs[case.stem], args, ",".join(FAMILIES), mine)
            b = capture(["iree-run-module"], device, vmfbs[case.stem], args,
                        ",".join(FAMILIES), theirs)
            if a.returncode or b.returncode:
                print(f"{case.stem} {device}: rc {a.returncode}/{b.returncode} {a.stderr}{b.stderr}")
                bad += 1
                continue
            diffs = differences(iree_profile, mine, theirs,
                                [r for r in REPORTS if not (device == "local-sync"
                                                           and r == "command")])
            print(f"{case.stem} {device}: {'ok' if not diffs else ''}")
            for d in diffs[:8]:
                print("   ", d[:400])
            bad += bool(diffs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Run the parser fuzzers (atheris, coverage-guided) for a given time or number of inputs.

    python bench/fuzz/run.py [--seconds N | --runs N] [--seed S] [--jobs J] [--timeout T]
                             [--out DIR] [--seeds DIR] [--fresh-corpus] [TARGET ...]

Each target (default: all of bench/fuzz/targets.py) runs in its own worker process
(bench/fuzz/worker.py) from its seed corpus (bench/fuzz/seeds.py, built once into --seeds) plus
its working corpus (--out/corpus/<target>, kept between runs unless --fresh-corpus). A worker
that stops early on a hang (an input over --timeout seconds) or a memory blow-up (--rss-mb) is
restarted, with the next seed, for the rest of its time. Printed per target: inputs executed,
crashes (distinct uncaught non-project exceptions), hangs, out-of-memory stops, wall time.
Findings are saved under --out/artifacts/<target>/ (`crash-*` with a `.txt` traceback,
`timeout-*`, `oom-*`); copy each one into tests/fuzz/regressions/<target>/ once fixed.
Exit status 1 when anything was found, else 0. Logs: --out/logs/<target>.log.

Needs atheris (`pip install -e .[test]`) and, for the seeds, IREE 3.13.0's iree-compile and
iree-run-module on PATH.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench.fuzz.targets import ALL_TARGETS, TARGETS  # noqa: E402

WORKER = Path(__file__).resolve().parent / "worker.py"
_EXECUTED = re.compile(r"^stat::number_of_executed_units:\s*(\d+)", re.MULTILINE)
_PROGRESS = re.compile(r"^#(\d+)\s", re.MULTILINE)
MAX_RESTARTS = 50


@dataclass
class Result:
    target: str
    inputs: int = 0
    crashes: list[Path] = field(default_factory=list)
    hangs: list[Path] = field(default_factory=list)
    ooms: list[Path] = field(default_factory=list)
    other: list[str] = field(default_factory=list)  # worker exits nobody explained
    seconds: float = 0.0

    @property
    def found(self) -> int:
        return len(self.crashes) + len(self.hangs) + len(self.ooms) + len(self.other)


def _executed(log: str) -> int:
    final = _EXECUTED.findall(log)
    if final:
        return int(final[-1])
    progress = _PROGRESS.findall(log)
    return int(progress[-1]) if progress else 0


def fuzz_target(name: str, *, seconds: float | None, runs: int | None, seed: int, timeout: int,
                rss_mb: int, out: Path, seeds: Path, fresh_corpus: bool) -> Result:
    result = Result(name)
    corpus = out / "corpus" / name
    if fresh_corpus and corpus.exists():
        shutil.rmtree(corpus)
    corpus.mkdir(parents=True, exist_ok=True)
    artifacts = out / "artifacts" / name
    artifacts.mkdir(parents=True, exist_ok=True)
    log_path = out / "logs" / f"{name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("")
    before = set(artifacts.iterdir())
    start = time.monotonic()
    for attempt in range(MAX_RESTARTS):
        flags = [f"-seed={seed + attempt}", f"-timeout={timeout}", f"-rss_limit_mb={rss_mb}",
                 "-print_final_stats=1", "-len_control=0", f"-artifact_prefix={artifacts}/"]
        if seconds is not None:
            left = int(seconds - (time.monotonic() - start))
            if left < 1:
                break
            flags.append(f"-max_total_time={left}")
        if runs is not None:
            left_runs = runs - result.inputs
            if left_runs < 1:
                break
            flags.append(f"-runs={left_runs}")
        cmd = [sys.executable, str(WORKER), name, str(artifacts), *flags, str(corpus), str(seeds)]
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", cwd=REPO_ROOT)
        log = proc.stdout + proc.stderr
        with log_path.open("a") as f:
            f.write(f"$ {' '.join(cmd)}\n{log}\n[exit {proc.returncode}]\n")
        result.inputs += _executed(log)
        new = sorted(set(artifacts.iterdir()) - before)
        before |= set(new)
        stopped_for = [p for p in new if p.name.startswith(("timeout-", "oom-", "crash-", "slow-unit-"))]
        for path in new:
            if path.suffix == ".txt":
                continue
            if path.name.startswith("crash-"):
                result.crashes.append(path)
            elif path.name.startswith("timeout-"):
                result.hangs.append(path)
            elif path.name.startswith("oom-"):
                result.ooms.append(path)
        if proc.returncode == 0:
            break
        if not any(p.name.startswith(("timeout-", "oom-", "crash-")) for p in stopped_for):
            # A worker that died without telling libFuzzer's story (a native crash in an
            # uninstrumented library, a broken setup): record the tail and stop this target.
            tail = "\n".join(log.strip().splitlines()[-15:])
            result.other.append(f"worker exit {proc.returncode}:\n{tail}")
            break
    result.seconds = time.monotonic() - start
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    extra = ", ".join(sorted(set(ALL_TARGETS) - set(TARGETS)))
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help=f"any of: {', '.join(ALL_TARGETS)} (default: all but {extra})")
    parser.add_argument("--seconds", type=float, help="fuzzing time per target (default 60)")
    parser.add_argument("--runs", type=int, help="stop a target after this many inputs")
    parser.add_argument("--seed", type=int, default=1, help="libFuzzer -seed (default 1)")
    parser.add_argument("--jobs", type=int, default=1, help="targets run at the same time")
    parser.add_argument("--timeout", type=int, default=2, help="seconds one input may take (hang)")
    parser.add_argument("--rss-mb", type=int, default=2048, help="memory limit of a worker")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "build" / "fuzz",
                        help="corpus, artifacts and logs (default build/fuzz)")
    parser.add_argument("--seeds", type=Path, help="seed corpus directory (default OUT/seeds)")
    parser.add_argument("--fresh-corpus", action="store_true",
                        help="start from the seeds only (drop OUT/corpus/<target>)")
    args = parser.parse_args(argv)
    unknown = [t for t in args.targets if t not in ALL_TARGETS]
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(ALL_TARGETS)}")
    names = args.targets or list(TARGETS)
    seconds = args.seconds if args.seconds is not None or args.runs is not None else 60.0

    from bench.fuzz.seeds import build_seeds

    seed_dirs = build_seeds(args.seeds or args.out / "seeds")

    def one(name: str) -> Result:
        return fuzz_target(name, seconds=seconds, runs=args.runs, seed=args.seed, timeout=args.timeout,
                           rss_mb=args.rss_mb, out=args.out, seeds=seed_dirs[name],
                           fresh_corpus=args.fresh_corpus)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(one, names))

    print(f"{'target':<20}{'inputs':>12}{'crashes':>9}{'hangs':>7}{'ooms':>6}{'seconds':>9}")
    for r in results:
        print(f"{r.target:<20}{r.inputs:>12}{len(r.crashes):>9}{len(r.hangs):>7}{len(r.ooms):>6}"
              f"{r.seconds:>9.0f}")
    print(f"{'total':<20}{sum(r.inputs for r in results):>12}{sum(len(r.crashes) for r in results):>9}"
          f"{sum(len(r.hangs) for r in results):>7}{sum(len(r.ooms) for r in results):>6}")
    for r in results:
        for path in r.crashes + r.hangs + r.ooms:
            print(f"finding: {path}")
        for text in r.other:
            print(f"{r.target}: {text}")
    return 1 if any(r.found for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

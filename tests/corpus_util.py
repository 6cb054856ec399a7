"""The amdgpu-run test corpus: MLIR models in tests/corpus, their run lines,
and compiling them for llvm-cpu.

Each tests/corpus/*.mlir file starts with a block of `//` comment lines. In
that block:

  // RUN: --function=NAME --input=... --input=...
      one invocation to test; the text after "RUN:" is split with shlex (so
      an input holding spaces is quoted: --input="4xf32=1 2 3 4") and is
      passed unchanged to `iree-run-module --device=local-sync --module=M.vmfb`
      (and later to our own tool). Every RUN line names its --function.
  // COMPILE-FLAGS: --flag ...
      extra iree-compile flags for this model (added after the llvm-cpu target
      flags of examples/compile.py), e.g. --iree-input-demote-f64-to-f32=false
      so f64 stays f64 in the module's signatures.

Library use (tests import it as `corpus_util`):
  CORPUS_DIR
  load_corpus() -> list[Case]       one Case per RUN line, in file order
  compile_flags(mlir_path, target=TARGET) -> list[str]
  parse_signatures(mlir_path) -> list[Signature]   func.func names and types
  compile_corpus(out_dir, jobs=2, paths=None, errors=None, target=TARGET)
      -> {mlir stem: vmfb Path}
      compiles every model that is missing or stale in out_dir (a cache key
      file <stem>.vmfb.key holds a hash of the source, the flags and the
      compiler path), two at a time; raises CompileError naming the failures
      (or records them in the `errors` dict when one is passed). `target` is
      an examples/compile.py target name (llvm-cpu, amdgpu-gfx942, ...); use
      one out_dir per target.
  python tests/corpus_util.py [OUT_DIR [MODEL...]]
      compiles (default OUT_DIR build/corpus) and prints iree-run-module's
      output for every RUN line.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from examples.compile import (  # noqa: E402
    CompileError,
    _first_error_line,
    iree_compile_binary,
    target_flags,
)

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
RUN_PREFIX = "// RUN:"
FLAGS_PREFIX = "// COMPILE-FLAGS:"
TARGET = "llvm-cpu"
COMPILE_TIMEOUT_S = 120


@dataclass(frozen=True)
class Case:
    """One `// RUN:` line of a corpus model."""

    mlir: Path  # the model source
    function: str  # value of --function=
    args: list = field(hash=False)  # iree-run-module args of the line (incl. --function=)
    id: str  # "<stem>:<function>:<n>", n counting RUN lines of the file from 0

    @property
    def stem(self) -> str:
        return self.mlir.stem

    @property
    def inputs(self) -> list[str]:
        """The --input= values, in order."""
        return [a[len("--input="):] for a in self.args if a.startswith("--input=")]


def _header_lines(mlir_path: Path) -> list[str]:
    """The leading `//` comment lines of a model."""
    out = []
    with open(mlir_path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("//"):
                break
            out.append(line)
    return out


def model_paths() -> list[Path]:
    return sorted(CORPUS_DIR.glob("*.mlir"))


def compile_flags(mlir_path, target: str = TARGET) -> list[str]:
    """iree-compile flags for one model: the target's flags + COMPILE-FLAGS."""
    flags = list(target_flags(target))
    for line in _header_lines(Path(mlir_path)):
        if line.startswith(FLAGS_PREFIX):
            flags.extend(shlex.split(line[len(FLAGS_PREFIX):]))
    return flags


def load_cases(mlir_path) -> list[Case]:
    mlir_path = Path(mlir_path)
    cases = []
    for line in _header_lines(mlir_path):
        if not line.startswith(RUN_PREFIX):
            continue
        args = shlex.split(line[len(RUN_PREFIX):])
        funcs = [a[len("--function="):] for a in args if a.startswith("--function=")]
        if len(funcs) != 1:
            raise ValueError(f"{mlir_path.name}: RUN line needs one --function=: {line}")
        cases.append(
            Case(
                mlir=mlir_path,
                function=funcs[0],
                args=args,
                id=f"{mlir_path.stem}:{funcs[0]}:{len(cases)}",
            )
        )
    if not cases:
        raise ValueError(f"{mlir_path.name}: no '{RUN_PREFIX}' line")
    return cases


def load_corpus() -> list[Case]:
    """Every RUN line of every corpus model, sorted by file name then line."""
    cases = []
    for p in model_paths():
        cases.extend(load_cases(p))
    return cases


@dataclass(frozen=True)
class Signature:
    """A func.func declared in a corpus model (types as written in the source;
    COMPILE-FLAGS such as f64 demotion may change the compiled module's ABI)."""

    name: str
    public: bool
    args: tuple  # type strings, e.g. ("tensor<?x4xf32>", "i32")
    results: tuple

    @staticmethod
    def element_type(type_str: str) -> str:
        """"tensor<2x?xf16>" -> "f16"; scalars return themselves."""
        if type_str.startswith("tensor<") and type_str.endswith(">"):
            return type_str[len("tensor<"):-1].split("x")[-1]
        return type_str

    @staticmethod
    def is_dynamic(type_str: str) -> bool:
        return type_str.startswith("tensor<") and "?" in type_str


def _split_top(text: str) -> list[str]:
    """Split at commas not nested in <>, (), [] or {}."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _balanced(text: str, start: int) -> int:
    """Index just past the ')' closing the '(' at text[start]."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError("unbalanced parentheses")


_FUNC_RE = re.compile(r"^\s*func\.func\s+(private\s+)?@([\w$.]+)\s*\(", re.M)


def parse_signatures(mlir_path) -> list[Signature]:
    """Every func.func of a model with its argument and result types."""
    text = Path(mlir_path).read_text(encoding="utf-8")
    sigs = []
    for m in _FUNC_RE.finditer(text):
        open_paren = m.end() - 1
        close = _balanced(text, open_paren)
        args = tuple(
            a.split(":", 1)[1].strip() for a in _split_top(text[open_paren + 1 : close - 1])
        )
        rest = text[close:]
        results: tuple = ()
        arrow = re.match(r"\s*->\s*", rest)
        if arrow:
            rest = rest[arrow.end():]
            if rest.startswith("("):
                end = _balanced(rest, 0)
                results = tuple(_split_top(rest[1 : end - 1]))
            else:
                results = (re.match(r"[^\s{]+", rest).group(0),)
        sigs.append(Signature(m.group(2), not m.group(1), args, results))
    return sigs


def _cache_key(mlir_path: Path, compiler: str, flags: list[str]) -> str:
    h = hashlib.sha256()
    h.update(mlir_path.read_bytes())
    h.update(b"\0" + os.path.realpath(compiler).encode() + b"\0")
    h.update("\0".join(flags).encode())
    return h.hexdigest()


def compile_one(mlir_path, out_dir, target: str = TARGET) -> Path:
    """Compile one model into out_dir/<stem>.vmfb unless the cached one is current."""
    mlir_path = Path(mlir_path)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{mlir_path.stem}.vmfb"
    key_file = out_dir / f"{mlir_path.stem}.vmfb.key"
    compiler = iree_compile_binary()
    flags = compile_flags(mlir_path, target)
    key = _cache_key(mlir_path, compiler, flags)
    if out.is_file() and key_file.is_file() and key_file.read_text().strip() == key:
        return out
    tmp = out.with_name(out.name + ".partial")
    cmd = [compiler, *flags, str(mlir_path), "-o", str(tmp)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        tmp.unlink(missing_ok=True)
        raise CompileError(
            f"{mlir_path.name}: iree-compile timed out after {COMPILE_TIMEOUT_S}s"
        ) from None
    if proc.returncode != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        raise CompileError(f"{mlir_path.name}: {_first_error_line(proc.stderr or proc.stdout)}")
    os.replace(tmp, out)
    key_file.write_text(key + "\n")
    return out


def compile_corpus(out_dir, jobs: int = 2, paths=None, errors=None,
                   target: str = TARGET) -> dict[str, Path]:
    """Compile the corpus (or `paths`) into out_dir; {stem: vmfb path}.

    Failures raise one CompileError naming them all, unless `errors` (a dict)
    is given: then {stem: message} is recorded there and the models that did
    compile are returned.
    """
    paths = list(paths) if paths is not None else model_paths()
    results: dict[str, Path] = {}
    failed: dict[str, str] = {}

    def work(p: Path):
        try:
            return p.stem, compile_one(p, out_dir, target), None
        except CompileError as e:
            return p.stem, None, str(e)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for stem, vmfb, err in pool.map(work, paths):
            if err:
                failed[stem] = err
            else:
                results[stem] = vmfb
    if errors is not None:
        errors.update(failed)
    elif failed:
        raise CompileError("; ".join(failed.values()))
    return results


def _main(argv: list[str]) -> int:
    """python tests/corpus_util.py [OUT_DIR] [models...]: compile, run every
    RUN line with iree-run-module --device=local-sync, print the output."""
    out_dir = Path(argv[0]) if argv else Path("build/corpus")
    names = set(argv[1:])
    paths = [p for p in model_paths() if not names or p.stem in names or p.name in names]
    vmfbs = compile_corpus(out_dir, paths=paths)
    for case in load_corpus():
        if case.stem not in vmfbs:
            continue
        cmd = ["iree-run-module", "--device=local-sync", f"--module={vmfbs[case.stem]}", *case.args]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        print(f"== {case.id} rc={proc.returncode}  {shlex.join(case.args)}")
        sys.stdout.write(proc.stdout)
        sys.stdout.write(proc.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

"""The console-script path of the entry points (no argv: they end with os._exit after flushing).

Each case runs `run_main()` as the installed `amdgpu-run` script does and checks that stdout,
stderr, the exit status and the files written are exactly those of the same run through
`run_main(argv)`, which exits through SystemExit and normal interpreter teardown.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus_util import compile_one
from tests.iree_tools import iree_compile_or_skip

CONSOLE = "from amdgpu_cli.cli.main import run_main; run_main()"
WITH_ARGV = "import sys; from amdgpu_cli.cli.main import run_main; run_main(sys.argv[1:])"


@pytest.fixture(scope="module")
def scalars(tmp_path_factory) -> str:
    iree_compile_or_skip()
    mlir = Path(__file__).parent / "corpus" / "scalars.mlir"
    return str(compile_one(mlir, tmp_path_factory.mktemp("scalars")))


def _run(entry: str, *args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", entry, *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def _outcome(proc: subprocess.CompletedProcess) -> tuple[int, str, str]:
    return proc.returncode, proc.stdout, proc.stderr


def test_console_run_prints_results_exit_0(scalars):
    args = [f"--module={scalars}", "--device=local-task", "--function=add_i32", "--input=7",
            "--input=-12"]
    console = _run(CONSOLE, *args)
    assert _outcome(console) == _outcome(_run(WITH_ARGV, *args))
    assert _outcome(console) == (0, "EXEC @add_i32\nresult[0]: i32=-5\n", "")


@pytest.mark.parametrize("args, code", [
    (["--function=add_i32", "--input=1"], 1),  # a run error: one line on stderr
    (["--function=add_i32", "--input=1", "--input=2", "--expected_output=4"], 1),  # [FAILED]
    (["--no-such-flag"], 2),  # a usage error
])
def test_console_errors_and_statuses_unchanged(scalars, args, code):
    args = [f"--module={scalars}", "--device=local-sync", *args]
    console = _run(CONSOLE, *args)
    assert _outcome(console) == _outcome(_run(WITH_ARGV, *args))
    assert console.returncode == code


def test_console_output_files_are_complete(scalars, tmp_path):
    args = [f"--module={scalars}", "--device=local-sync", "--function=add_i32", "--input=3",
            "--input=4"]
    console = _run(CONSOLE, *args, "--output=@console.npy", cwd=tmp_path)
    with_argv = _run(WITH_ARGV, *args, "--output=@argv.npy", cwd=tmp_path)
    assert _outcome(console) == _outcome(with_argv)
    assert (tmp_path / "console.npy").read_bytes() == (tmp_path / "argv.npy").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["argv.npy", "console.npy"]

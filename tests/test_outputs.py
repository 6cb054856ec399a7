"""Nothing the user had is lost, and nothing breaks: every output path, every kind of target.

Each test here is one finding of issue 12, run through the real console entry points:
- special files, symlinks, /proc/self/fd/N and `-` are written in place, never replaced (1);
- `amdgpu-run --output` is all or nothing: a result that cannot be written, a write that fails
  half way (a file-size limit) or a killed run leaves every output file as it was (2);
- a closed stdout pipe ends every report quietly with status 0 (5);
- a bad output path is one line naming the path and the reason, before any work (6);
- no subcommand is a one-line usage error (7).
The truths: file types from os.lstat, bytes from iree-run-module and from our own stdout output of
the same command, numpy's reading of the .npy files.
"""

from __future__ import annotations

import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "profiles" / "samples" / "amdgpu-sample.ireeprof"
_ENTRY = "from amdgpu_cli.cli.main import {0}; {0}()"  # console-script form: argv from sys.argv
REPORTS = ("summary", "statistics", "explain", "executable", "dispatch", "command", "queue",
           "memory", "counter", "cat")


def tool(entry: str, *args, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("timeout", 120)
    return subprocess.run([sys.executable, "-c", _ENTRY.format(entry), *map(str, args)], **kwargs)


def profile(*args, **kwargs):
    return tool("profile_main", *args, **kwargs)


def run(*args, **kwargs):
    return tool("run_main", *args, **kwargs)


def one_error_line(result: subprocess.CompletedProcess) -> str:
    err = result.stderr.decode() if isinstance(result.stderr, bytes) else result.stderr
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and "internal error" not in err
    return lines[0]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# ---- finding 1: paths that are not regular files are written, not replaced --------------------


@pytest.fixture(scope="module")
def export_text() -> bytes:
    result = profile("export", "--output=-", SAMPLE)
    assert result.returncode == 0 and result.stdout
    return result.stdout


def test_export_into_a_fifo_keeps_the_fifo(tmp_path, export_text):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received_path = tmp_path / "received"
    with open(received_path, "wb") as sink:
        reader = subprocess.Popen(["cat", str(fifo)], stdout=sink)
        result = profile("export", f"--output={fifo}", SAMPLE)
        reader.wait(timeout=60)
    received = received_path.read_bytes()
    assert result.returncode == 0, result.stderr
    assert received == export_text
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_export_into_a_character_device_keeps_the_device(tmp_path, export_text):
    node = tmp_path / "null"
    null = os.stat("/dev/null")
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, null.st_rdev)
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD (run as root to test a copy of /dev/null)")
    for command in (["export", f"--output={node}", SAMPLE],
                    ["export", "--format=perfetto", f"--output={node}", SAMPLE]):
        result = profile(*command)
        assert result.returncode == 0, result.stderr
        st = os.lstat(node)
        assert stat.S_ISCHR(st.st_mode) and st.st_rdev == null.st_rdev


def test_export_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path, export_text):
    target = tmp_path / "real.jsonl"
    target.write_text("old")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target.name)
    result = profile("export", f"--output={link}", SAMPLE)
    assert result.returncode == 0, result.stderr
    assert os.path.islink(link) and os.readlink(link) == target.name
    assert target.read_bytes() == export_text
    assert leftovers(tmp_path) == []


def test_export_to_proc_self_fd_1_is_stdout(export_text):
    result = profile("export", "--output=/proc/self/fd/1", SAMPLE)
    assert result.returncode == 0, result.stderr
    assert result.stdout == export_text


def test_plot_to_dash_is_stdout_not_a_file(tmp_path):
    pytest.importorskip("matplotlib")
    result = profile("plot", "--output=-", SAMPLE, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(b"\x89PNG\r\n\x1a\n")
    assert list(tmp_path.iterdir()) == []


# ---- finding 2: amdgpu-run's outputs are all or nothing ----------------------------------------

BF16_ROUND = ["--function=bf16_round", "--input=4xbf16=1 3.14159 -1e30 0.1",
              "--input=4xf32=1.00390625 1.01 -2.5 65504"]
GRID = ["--function=grid_dyn", "--input=1024", "--input=1024"]  # a 4 MiB f32 result


@pytest.fixture(scope="module")
def iree_grid(vmfbs, iree_run, tmp_path_factory) -> bytes:
    """iree-run-module's own .npy of the 1024x1024 grid: what a complete write must hold."""
    path = tmp_path_factory.mktemp("grid") / "grid.npy"
    result = iree_run(["--device=local-sync", f"--module={vmfbs['large_output']}", *GRID,
                       f"--output=@{path}"])
    assert result.returncode == 0, result.stderr
    return path.read_bytes()


def test_complete_outputs_are_iree_run_modules_bytes(vmfbs, tmp_path, iree_grid):
    replaced, appended = tmp_path / "r.npy", tmp_path / "a.npy"
    replaced.write_bytes(b"old r")
    appended.write_bytes(b"old a")
    result = run("--device=local-sync", f"--module={vmfbs['large_output']}", *GRID,
                 f"--output=@{replaced}")
    assert result.returncode == 0, result.stderr
    result = run("--device=local-sync", f"--module={vmfbs['large_output']}", *GRID,
                 f"--output=+{appended}")
    assert result.returncode == 0, result.stderr
    assert replaced.read_bytes() == iree_grid
    assert appended.read_bytes() == b"old a" + iree_grid
    assert leftovers(tmp_path) == []


def test_a_failing_result_leaves_earlier_outputs_untouched(vmfbs, tmp_path):
    first, second = tmp_path / "first.bin", tmp_path / "second.npy"
    first.write_bytes(b"precious first")
    second.write_bytes(b"precious second")
    # Results 0 and 1 are bf16: raw bytes are fine, a bf16 .npy is not (as in iree-run-module).
    result = run("--device=local-sync", f"--module={vmfbs['f16_ops']}", *BF16_ROUND,
                 f"--output=@{first}", f"--output=@{second}", "--output=")
    assert result.returncode == 1
    assert "unsupported data encoding" in one_error_line(result)
    assert first.read_bytes() == b"precious first"
    assert second.read_bytes() == b"precious second"
    assert leftovers(tmp_path) == []


def _limit_file_size(limit: int = 1 << 20):
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_write_that_fails_half_way_leaves_the_old_files(vmfbs, tmp_path):
    """A 1 MiB file-size limit stops the 4 MiB write part way: EFBIG (Python ignores SIGXFSZ)."""
    replaced, appended = tmp_path / "r.npy", tmp_path / "a.npy"
    for spec, path in ((f"@{replaced}", replaced), (f"+{appended}", appended)):
        path.write_bytes(b"old contents")
        result = run("--device=local-sync", f"--module={vmfbs['large_output']}", *GRID,
                     f"--output={spec}", preexec_fn=_limit_file_size)
        assert result.returncode == 1
        line = one_error_line(result)
        assert f"cannot write `{path}`: File too large" in line
        assert path.read_bytes() == b"old contents"
        assert leftovers(tmp_path) == []


_KILLED_AT_LIMIT = ("import signal; signal.signal(signal.SIGXFSZ, signal.SIG_DFL); "
                    "from amdgpu_cli.cli.main import {0}; {0}()")


def _killed_at_limit(limit: int, entry: str, *args) -> subprocess.CompletedProcess:
    """Runs with a file-size limit and SIGXFSZ at its default action: the kernel kills the process
    in the middle of writing a bigger file."""
    return subprocess.run([sys.executable, "-c", _KILLED_AT_LIMIT.format(entry), *map(str, args)],
                          capture_output=True, timeout=120,
                          preexec_fn=lambda: _limit_file_size(limit))


def test_killed_writers_leave_old_files_and_no_temporaries(vmfbs, iree_bundles, tmp_path):
    replaced, appended, trace = tmp_path / "r.npy", tmp_path / "a.npy", tmp_path / "trace.json"
    bundle = iree_bundles["mlp-bench-local-task-all"]
    trace_size = len(profile("export", "--format=perfetto", "--output=-", bundle).stdout)
    cases = [("run_main", replaced, ["--device=local-sync", f"--module={vmfbs['large_output']}",
                                     *GRID, f"--output=@{replaced}"]),
             ("run_main", appended, ["--device=local-sync", f"--module={vmfbs['large_output']}",
                                     *GRID, f"--output=+{appended}"]),
             ("profile_main", trace, ["export", "--format=perfetto", f"--output={trace}", bundle])]
    limits = [1 << 20, 1 << 20, trace_size // 2]  # half of each complete output
    for (entry, path, args), limit in zip(cases, limits):
        path.write_bytes(b"old contents")
        result = _killed_at_limit(limit, entry, *args)
        assert result.returncode == -signal.SIGXFSZ, (path, result.stderr)
        assert path.read_bytes() == b"old contents"
        assert leftovers(tmp_path) == []


# ---- finding 5: a reader that goes away ---------------------------------------------------------


def _closed_pipe_run(args) -> subprocess.CompletedProcess:
    """Runs with stdout a pipe whose read end is already closed: every write gets EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return profile(*args, stdout=write_end, stderr=subprocess.PIPE, capture_output=False)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("report", REPORTS)
def test_closed_pipe_ends_reports_quietly(report, iree_bundles):
    result = _closed_pipe_run([report, iree_bundles["mlp-bench-local-task-all"]])
    assert (result.returncode, result.stderr) == (0, b"")


@pytest.mark.parametrize("fmt", ["ireeperf-jsonl", "perfetto"])
def test_closed_pipe_ends_exports_quietly(fmt, iree_bundles):
    result = _closed_pipe_run(["export", f"--format={fmt}",
                               iree_bundles["mlp-bench-local-task-all"]])
    assert (result.returncode, result.stderr) == (0, b"")


# ---- finding 6: bad output paths ----------------------------------------------------------------


def test_a_missing_folder_is_one_line(tmp_path):
    path = tmp_path / "no" / "such.jsonl"
    result = profile("export", f"--output={path}", SAMPLE)
    assert result.returncode == 1
    assert one_error_line(result) == f"error: cannot write `{path}`: No such file or directory"


def test_a_directory_fails_before_the_run(vmfbs, tmp_path):
    result = run("--device=local-sync", f"--module={vmfbs['large_output']}", *GRID,
                 f"--output=@{tmp_path}")
    assert result.returncode == 1
    assert result.stdout == b""  # not even `EXEC @grid_dyn`: no work was done
    assert one_error_line(result) == f"error: cannot write `{tmp_path}`: is a directory"
    assert leftovers(tmp_path) == []


def test_a_directory_fails_before_a_plot(tmp_path):
    pytest.importorskip("matplotlib")
    result = profile("plot", f"--output={tmp_path}", SAMPLE)
    assert result.returncode == 1
    assert one_error_line(result) == f"error: cannot write `{tmp_path}`: is a directory"
    assert leftovers(tmp_path) == []


@pytest.fixture
def full_device(tmp_path) -> Path:
    """A character device that answers every write with ENOSPC: a private copy of /dev/full (the
    system's own is used only where mknod is not allowed, and only while it is a device)."""
    node = tmp_path / "full"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        return node
    except PermissionError:
        if os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode):
            return Path("/dev/full")
        pytest.skip("no full device (mknod not allowed, no /dev/full)")


def test_a_full_disk_is_one_line(vmfbs, full_device):
    result = profile("export", f"--output={full_device}", SAMPLE)
    assert result.returncode == 1
    assert one_error_line(result) == f"error: cannot write `{full_device}`: No space left on device"
    result = run("--device=local-sync", f"--module={vmfbs['large_output']}", *GRID,
                 f"--output=@{full_device}")
    assert result.returncode == 1
    assert one_error_line(result).startswith(
        f"error: cannot write `{full_device}`: No space left on device")
    assert stat.S_ISCHR(os.lstat(full_device).st_mode)


def test_named_temporaries_go_on_interrupt(tmp_path, monkeypatch):
    """Where O_TMPFILE is missing the temporary has a name; an interrupt still removes it."""
    from amdgpu_cli import outputs

    monkeypatch.setattr(outputs, "_USE_O_TMPFILE", False)
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(KeyboardInterrupt):
        with outputs.output_file(target) as f:
            f.write(b"partial")
            assert len(leftovers(tmp_path)) == 1
            raise KeyboardInterrupt
    assert target.read_bytes() == b"old" and leftovers(tmp_path) == []
    with outputs.output_file(target) as f:
        f.write(b"new")
    assert target.read_bytes() == b"new" and leftovers(tmp_path) == []


def test_output_errors_name_the_path(tmp_path):
    from amdgpu_cli import outputs
    from amdgpu_cli.errors import OutputError

    with pytest.raises(OutputError, match=r"cannot write `.*`: is a directory"):
        outputs.OutputFile(tmp_path)
    with pytest.raises(OutputError, match=r"No such file or directory"):
        outputs.OutputFile(tmp_path / "missing" / "x")


# ---- finding 7: no subcommand -------------------------------------------------------------------


@pytest.mark.parametrize("entry", ["main", "profile_main"])
def test_no_subcommand_is_one_usage_line(entry):
    result = tool(entry)
    assert result.returncode == 2
    line = one_error_line(result)
    assert "missing command" in line and "--help" in line

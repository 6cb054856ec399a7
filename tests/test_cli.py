"""The command-line boundary: entry points, exit statuses, one-line errors, --debug, atomic output."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from amdgpu_cli.cli.terminal import output_stream


def run(*args, check_script: str | None = None) -> subprocess.CompletedProcess:
    entry = ("import sys; from amdgpu_cli.cli.main import main, profile_main; "
             f"{'profile_main' if check_script == 'profile' else 'main'}(sys.argv[1:])")
    return subprocess.run([sys.executable, "-c", entry, *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def test_root_group_lists_profile_and_help_exits_zero():
    result = run("--help")
    assert result.returncode == 0
    assert "profile" in result.stdout


def test_console_scripts_are_installed():
    for name in ("amdgpu", "amdgpu-profile", "amdgpu-run", "amdgpu-replay", "amdgpu-benchmark"):
        assert shutil.which(name), name


def test_profile_entry_and_root_group_agree(iree_bundles):
    path = iree_bundles["mlp-local-task-all"]
    a = run("profile", "cat", "--format=jsonl", path)
    b = run("cat", "--format=jsonl", path, check_script="profile")
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout and a.stdout


def test_usage_error_is_one_line_exit_2():
    result = run("profile", "summary", "--format=yaml", "x.ireeprof")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("error: ")


def test_unknown_command_exit_2():
    result = run("profile", "frobnicate")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_file_is_one_line_and_debug_shows_traceback(tmp_path):
    bad = tmp_path / "bad.ireeprof"
    bad.write_bytes(b"NOPE" * 10)
    result = run("profile", "cat", bad)
    assert result.returncode == 1
    assert result.stderr.strip() == "error: INVALID_ARGUMENT; invalid IREE HAL profile file magic"
    debug = run("profile", "cat", bad, "--debug")
    assert debug.returncode != 0
    assert "Traceback" in debug.stderr


def test_dispatch_events_requires_jsonl(iree_bundles):
    result = run("profile", "dispatch", "--dispatch_events", iree_bundles["mlp-local-task-all"])
    assert result.returncode == 2
    assert "--format=jsonl" in result.stderr


def test_atomic_output_keeps_old_file_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("precious")
    with pytest.raises(RuntimeError):
        with output_stream(str(target)) as out:
            out.write("partial")
            raise RuntimeError("boom")
    assert target.read_text() == "precious"
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]
    with output_stream(str(target)) as out:
        out.write("new")
    assert target.read_text() == "new"

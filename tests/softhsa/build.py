"""Builds softhsa: every `src/*.c` into `DIR/libhsa-runtime64.so` with gcc.

    python -m tests.softhsa.build DIR

The build is skipped when `DIR/libhsa-runtime64.so.stamp` holds the hash of the current sources and
flags. The library is linked under a temporary name in DIR and renamed into place, so concurrent
test processes never load a half-written file. Compiler diagnostics go to `DIR/build.log` (the
sources are meant to be -Wall -Wextra clean; a test checks the log is empty).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from amdgpu_cli.errors import AmdgpuCliError

SOURCE_DIR = Path(__file__).resolve().parent / "src"
LIBRARY_NAME = "libhsa-runtime64.so"
CFLAGS = ("-std=gnu11", "-O1", "-g", "-fPIC", "-shared", "-pthread", "-Wall", "-Wextra",
          "-fvisibility=hidden")


class SoftHsaBuildError(AmdgpuCliError):
    """gcc failed to build softhsa."""

    status = "INTERNAL"


def _sources() -> list[Path]:
    return sorted(p for p in SOURCE_DIR.iterdir() if p.suffix in (".c", ".h"))


def _fingerprint() -> str:
    digest = hashlib.sha256(" ".join(CFLAGS).encode())
    for path in _sources():
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def build(directory: str | os.PathLike[str]) -> Path:
    """Builds (or reuses) `directory/libhsa-runtime64.so` and returns its path."""
    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    library = out_dir / LIBRARY_NAME
    stamp = out_dir / (LIBRARY_NAME + ".stamp")
    fingerprint = _fingerprint()
    if library.exists() and stamp.exists() and stamp.read_text() == fingerprint:
        return library
    fd, temp_name = tempfile.mkstemp(prefix=".softhsa-", suffix=".so", dir=out_dir)
    os.close(fd)
    sources = [str(p) for p in _sources() if p.suffix == ".c"]
    try:
        result = subprocess.run(["gcc", *CFLAGS, "-o", temp_name, *sources],
                                capture_output=True, text=True)
        (out_dir / "build.log").write_text(result.stderr)
        if result.returncode != 0:
            raise SoftHsaBuildError(f"gcc failed building softhsa (exit {result.returncode}):\n"
                                    f"{result.stderr.strip()}")
        os.replace(temp_name, library)
    finally:
        if os.path.exists(temp_name):
            os.unlink(temp_name)
    stamp_temp = stamp.with_name(f"{stamp.name}.{os.getpid()}")
    stamp_temp.write_text(fingerprint)
    os.replace(stamp_temp, stamp)
    return library


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m tests.softhsa.build DIR", file=sys.stderr)
        return 2
    try:
        print(build(argv[0]))
    except SoftHsaBuildError as error:
        print(error.one_line(), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""One fuzz target under atheris (libFuzzer), in its own process: atheris.Fuzz() never returns.

    python bench/fuzz/worker.py TARGET ARTIFACT_DIR [libFuzzer flags and corpus dirs ...]

The project's modules are imported under atheris' coverage instrumentation. Each input runs
through `targets.one_input`; an exception other than AmdgpuCliError is a finding. Findings do not
stop the run: the first input of each distinct finding (exception type + innermost project frame)
is written to ARTIFACT_DIR as `crash-<type>-<file>_<line>-<sha1>` with its traceback beside it
(`.txt`), one line goes to stderr (`FUZZ-FINDING <path>`), and fuzzing goes on. Hangs (-timeout)
and memory blow-ups (-rss_limit_mb) end the process the libFuzzer way: libFuzzer writes
`timeout-*` / `oom-*` to its -artifact_prefix and the driver (`run.py`) restarts the target.
"""

from __future__ import annotations

import hashlib
import os
import sys
import traceback
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def _signature(error: BaseException) -> str:
    """Exception type + the innermost frame in the project (where the parser let it escape)."""
    where = "unknown"
    for frame in traceback.extract_tb(error.__traceback__):
        if f"{os.sep}amdgpu_cli{os.sep}" in frame.filename:
            where = f"{Path(frame.filename).stem}_{frame.lineno}"
    return f"{type(error).__name__}-{where}"


def main(argv: list[str]) -> None:
    import atheris

    name, artifacts = argv[1], Path(argv[2])
    artifacts.mkdir(parents=True, exist_ok=True)
    with atheris.instrument_imports(include=["amdgpu_cli"]):
        import amdgpu_cli.drivers.local.elf_loader  # noqa: F401 - instrumented before the targets use them
        import amdgpu_cli.formats.amdgpu_executable  # noqa: F401
        import amdgpu_cli.formats.vmfb  # noqa: F401
        import amdgpu_cli.profile.model  # noqa: F401
        import amdgpu_cli.profile.reader  # noqa: F401
        import amdgpu_cli.tooling.io  # noqa: F401
        import amdgpu_cli.tooling.npy  # noqa: F401
        import amdgpu_cli.vm.decoder  # noqa: F401
        from amdgpu_cli.errors import AmdgpuCliError
    from bench.fuzz.targets import ALL_TARGETS, sandbox

    target = ALL_TARGETS[name]
    sandbox()
    seen: set[str] = set()

    def test_one_input(data: bytes) -> None:
        try:
            target.run(data)
        except AmdgpuCliError:
            pass
        except Exception as error:  # noqa: BLE001 - every other exception is a finding
            signature = _signature(error)
            if signature in seen:
                return
            seen.add(signature)
            path = artifacts / f"crash-{signature}-{hashlib.sha1(data).hexdigest()[:12]}"
            path.write_bytes(data)
            path.with_suffix(".txt").write_text("".join(traceback.format_exception(error)))
            print(f"FUZZ-FINDING {path}", file=sys.stderr, flush=True)

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    atheris.Setup([argv[0], *argv[3:]], test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)

"""Build the device library (src/*.cl) into one AMDGPU code object per target, with a manifest.

    python device_binaries/build.py            # rebuild the committed code objects + manifest.json
    python device_binaries/build.py --check    # rebuild in a temp dir; exit 1 on any difference
    python device_binaries/build.py --check --targets gfx942,gfx11-generic   # a subset

Targets: every exact target in EXACT_TARGETS that clang-19 accepts, plus the LLVM generic targets
(code object v6, which clang-19 only emits with -mcode-object-version=6). Targets clang rejects
are recorded in the manifest with clang's reason instead of failing the build.

The output is byte-reproducible for one toolchain: fixed flags, no debug info, no build id,
sources compiled by relative name from src/, nothing time- or path-dependent. The manifest names
the clang version it was built with; `--check` says so first when a different clang runs.

Needs Debian's clang-19 and lld-19 (`ld.lld-19`). Files written:
`device_binaries/amdgcn-amd-amdhsa--<target>.hsaco` and `device_binaries/manifest.json`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SRC = HERE / "src"
MANIFEST = HERE / "manifest.json"
FILE_PREFIX = "amdgcn-amd-amdhsa--"
FILE_SUFFIX = ".hsaco"

EXACT_TARGETS = ("gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1102",
                 "gfx1150", "gfx1151", "gfx1200", "gfx1201")
GENERIC_TARGETS = ("gfx9-generic", "gfx9-4-generic", "gfx10-1-generic", "gfx10-3-generic",
                   "gfx11-generic", "gfx12-generic")

CLANG = "clang-19"
LLD = "ld.lld-19"
CFLAGS = ("-x", "cl", "-cl-std=CL2.0", "-target", "amdgcn-amd-amdhsa", "-nogpulib", "-O2", "-g0",
          "-Wall", "-Wextra")
GENERIC_CFLAGS = ("-mcode-object-version=6",)
LDFLAGS = ("-shared", "--build-id=none")
# clang-19 says this for every v6 build; any other diagnostic fails the build.
KNOWN_WARNING = "code object v6 is still in development"


class BuildError(Exception):
    pass


def file_name(target: str) -> str:
    return f"{FILE_PREFIX}{target}{FILE_SUFFIX}"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise BuildError(f"{name} not found on PATH (Debian packages clang-19 and lld-19)")
    return path


def clang_version() -> str:
    out = subprocess.run([_tool(CLANG), "--version"], capture_output=True, text=True, check=True).stdout
    return out.splitlines()[0].strip()


def _sources() -> list[Path]:
    return sorted(SRC.glob("*.cl"))


def _compile(target: str, out_dir: Path) -> tuple[str, str | None]:
    """Build one target into out_dir; returns (target, None) or (target, clang's rejection reason)."""
    flags = [*CFLAGS, f"-mcpu={target}", *(GENERIC_CFLAGS if target.endswith("-generic") else ())]
    objects = []
    for source in _sources():
        obj = out_dir / f"{target}.{source.stem}.o"
        done = subprocess.run([_tool(CLANG), *flags, "-c", source.name, "-o", str(obj)], cwd=SRC,
                              capture_output=True, text=True)
        diagnostics = [line for line in done.stderr.splitlines() if line and KNOWN_WARNING not in line]
        if done.returncode != 0 and "invalid target ID" in done.stderr:
            return target, next(line for line in diagnostics if "error:" in line).split("error:", 1)[1].strip()
        if done.returncode != 0 or diagnostics:
            raise BuildError(f"{CLANG} failed for {target} ({source.name}):\n" + "\n".join(diagnostics))
        objects.append(str(obj))
    output = out_dir / file_name(target)
    subprocess.run([_tool(LLD), *LDFLAGS, *objects, "-o", str(output)], check=True, capture_output=True)
    for obj in objects:
        Path(obj).unlink()
    return target, None


def _describe(path: Path, target: str) -> dict:
    from amdgpu_cli.formats.amdgpu_code_object import parse_code_object

    data = path.read_bytes()
    code_object = parse_code_object(data)
    if code_object.target != target:
        raise BuildError(f"{path.name}: e_flags say {code_object.target}, expected {target}")
    return {
        "target": target,
        "file": path.name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "e_flags": f"{code_object.e_flags:#x}",
        "code_object_version": code_object.code_object_version,
        "generic_version": code_object.generic_version,
        "kernels": [
            {"name": k.name, "kernarg_segment_size": k.kernarg_segment_size,
             "kernarg_segment_align": k.kernarg_segment_align, "wavefront_size": k.wavefront_size}
            for k in sorted(code_object.kernels, key=lambda k: k.name)
        ],
    }


def build(out_dir: Path, targets: tuple[str, ...]) -> dict:
    """Build `targets` into out_dir and return the manifest describing them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(lambda t: _compile(t, out_dir), targets))
    built = [t for t, reason in results if reason is None]
    return {
        "clang": clang_version(),
        "cflags": list(CFLAGS),
        "generic_cflags": list(GENERIC_CFLAGS),
        "ldflags": list(LDFLAGS),
        "sources": {f"src/{s.name}": hashlib.sha256(s.read_bytes()).hexdigest() for s in _sources()},
        "code_objects": [_describe(out_dir / file_name(t), t) for t in built],
        "rejected": [{"target": t, "reason": reason} for t, reason in results if reason is not None],
    }


def write(manifest: dict, built_dir: Path) -> None:
    """Install the built code objects and manifest into device_binaries/, dropping stale ones."""
    keep = {entry["file"] for entry in manifest["code_objects"]}
    for stale in HERE.glob(f"{FILE_PREFIX}*{FILE_SUFFIX}"):
        if stale.name not in keep:
            stale.unlink()
    for name in sorted(keep):
        shutil.copyfile(built_dir / name, HERE / name)
    MANIFEST.write_text(json.dumps(manifest, indent=2) + "\n")


def _subset(manifest: dict, targets: tuple[str, ...]) -> dict:
    wanted = set(targets)
    return {**manifest,
            "code_objects": [e for e in manifest["code_objects"] if e["target"] in wanted],
            "rejected": [e for e in manifest["rejected"] if e["target"] in wanted]}


def check(manifest: dict, built_dir: Path, targets: tuple[str, ...]) -> list[str]:
    """Lines describing every difference between a fresh build and the committed files."""
    if not MANIFEST.exists():
        return [f"{MANIFEST.relative_to(ROOT)} is missing; run python device_binaries/build.py"]
    committed = _subset(json.loads(MANIFEST.read_text()), targets)
    problems = []
    if committed["clang"] != manifest["clang"]:
        problems.append(f"manifest was built with {committed['clang']!r}, this is {manifest['clang']!r}")
    for key in ("cflags", "generic_cflags", "ldflags", "sources", "rejected"):
        if committed[key] != manifest[key]:
            problems.append(f"manifest {key} differ from a fresh build: {committed[key]} != {manifest[key]}")
    old = {e["target"]: e for e in committed["code_objects"]}
    new = {e["target"]: e for e in manifest["code_objects"]}
    for target in sorted(old.keys() | new.keys()):
        if target not in new:
            problems.append(f"{target}: in the manifest but not built")
        elif target not in old:
            problems.append(f"{target}: built but not in the manifest")
        elif old[target] != new[target]:
            fields = sorted(k for k in new[target] if old[target].get(k) != new[target][k])
            problems.append(f"{target}: manifest differs from a fresh build in {', '.join(fields)}")
        else:
            committed_file = HERE / new[target]["file"]
            if not committed_file.exists():
                problems.append(f"{target}: {committed_file.name} is missing")
            elif committed_file.read_bytes() != (built_dir / new[target]["file"]).read_bytes():
                problems.append(f"{target}: {committed_file.name} differs from a fresh build")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="rebuild in a temp dir and compare")
    parser.add_argument("--targets", help="comma-separated subset of the targets (default: all)")
    args = parser.parse_args(argv)
    all_targets = EXACT_TARGETS + GENERIC_TARGETS
    targets = tuple(args.targets.split(",")) if args.targets else all_targets
    unknown = sorted(set(targets) - set(all_targets))
    if unknown:
        parser.error(f"unknown targets {unknown}; choose from {', '.join(all_targets)}")
    if not args.check and targets != all_targets:
        parser.error("--targets only applies to --check (the committed manifest covers every target)")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        with tempfile.TemporaryDirectory(prefix="device_binaries.") as tmp:
            manifest = build(Path(tmp), targets)
            if args.check:
                problems = check(manifest, Path(tmp), targets)
                for line in problems:
                    print(f"device_binaries: {line}", file=sys.stderr)
                return 1 if problems else 0
            write(manifest, Path(tmp))
    except (BuildError, subprocess.CalledProcessError) as error:
        print(f"device_binaries: {error}", file=sys.stderr)
        return 1
    built = ", ".join(e["target"] for e in manifest["code_objects"])
    print(f"built {len(manifest['code_objects'])} code objects ({built}); "
          f"rejected by clang: {', '.join(e['target'] for e in manifest['rejected']) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

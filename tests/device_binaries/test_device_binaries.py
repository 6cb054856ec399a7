"""The committed device library: every code object is a valid ELF for its target, carries exactly
the blit kernels with IREE's kernarg layouts, and `build.py --check` reproduces it byte for byte.

Truth: llvm-readobj-19 (headers, e_flags names, metadata note), the reference's §0/§6.2/§7 facts
(ABI versions, kernarg sizes, wave sizes) and the kernarg layouts of IREE's device/blit.c, typed
here independently of build.py and the parser.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from amdgpu_cli.formats.amdgpu_code_object import parse_code_object
from tests.device_binaries import readobj

ROOT = Path(__file__).resolve().parents[2]
BINARIES = ROOT / "device_binaries"
MANIFEST = json.loads((BINARIES / "manifest.json").read_text())

# What clang-19 (Debian 19.1.7) builds among the requested targets, and what it refuses.
EXPECTED_BUILT = {"gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151",
                  "gfx1200", "gfx1201", "gfx9-generic", "gfx10-1-generic", "gfx10-3-generic",
                  "gfx11-generic", "gfx12-generic"}
EXPECTED_REJECTED = {"gfx950", "gfx9-4-generic"}
WAVE64_TARGETS = {"gfx90a", "gfx942", "gfx9-generic"}  # gfx9: wave64; gfx10 and later: wave32

PTR, U64 = ("global_buffer", 8), ("by_value", 8)


def _fill(pattern_size: int) -> tuple[int, list]:
    return (20 if pattern_size < 8 else 24), [PTR, U64, ("by_value", pattern_size)]


COPY = (24, [PTR, PTR, U64])
PREFIX = "iree_hal_amdgpu_device_buffer_"
# kernel -> (kernarg_segment_size, [(value_kind, size) at offsets 0, 8, 16])
EXPECTED_KERNELS = {
    PREFIX + "fill_x1": _fill(1), PREFIX + "fill_x2": _fill(2), PREFIX + "fill_x4": _fill(4),
    PREFIX + "fill_x8": _fill(8), PREFIX + "fill_block_x16": _fill(8),
    PREFIX + "fill_block_unaligned_x16": _fill(8),
    PREFIX + "copy_x1": COPY, PREFIX + "copy_block_x4": COPY, PREFIX + "copy_block_x8": COPY,
    PREFIX + "copy_block_x16": COPY, PREFIX + "copy_block_unaligned_x16": COPY,
}

ENTRIES = {entry["target"]: entry for entry in MANIFEST["code_objects"]}


def test_manifest_lists_exactly_the_committed_files_and_clang_rejections():
    on_disk = {p.name for p in BINARIES.glob("amdgcn-amd-amdhsa--*.hsaco")}
    assert on_disk == {entry["file"] for entry in ENTRIES.values()}
    assert set(ENTRIES) == EXPECTED_BUILT
    assert {e["target"] for e in MANIFEST["rejected"]} == EXPECTED_REJECTED
    for rejected in MANIFEST["rejected"]:
        assert "invalid target ID" in rejected["reason"]
    assert MANIFEST["clang"].startswith("Debian clang version 19.")


@pytest.mark.parametrize("target", sorted(EXPECTED_BUILT))
def test_code_object_header_agrees_with_llvm_readobj(target):
    entry = ENTRIES[target]
    path = BINARIES / entry["file"]
    assert entry["file"] == f"amdgcn-amd-amdhsa--{target}.hsaco"
    data = path.read_bytes()
    assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["size"] == len(data)

    truth = readobj.header(path)
    generic = target.endswith("-generic")
    assert truth["machine"] == 224 and truth["osabi"] == 64
    assert truth["abi_version"] == (4 if generic else 3)  # v6 for generic targets, clang-19's v5 otherwise
    assert f"EF_AMDGPU_MACH_AMDGCN_{target.upper().replace('-', '_')}" in truth["flag_names"]
    assert ("EF_AMDGPU_GENERIC_VERSION_V1" in truth["flag_names"]) == generic
    assert int(entry["e_flags"], 16) == truth["e_flags"]
    assert entry["code_object_version"] == truth["abi_version"] + 2

    parsed = parse_code_object(data)
    assert (parsed.target, parsed.e_flags, parsed.abi_version) == (target, truth["e_flags"], truth["abi_version"])
    assert parsed.generic_version == (1 if generic else 0) == entry["generic_version"]
    # Built without feature flags: sramecc/xnack are "any" wherever the processor has them.
    assert parsed.target_id == target
    assert ("EF_AMDGPU_FEATURE_XNACK_ANY_V4" in truth["flag_names"]) == (parsed.xnack == "any")
    assert ("EF_AMDGPU_FEATURE_SRAMECC_ANY_V4" in truth["flag_names"]) == (parsed.sramecc == "any")


@pytest.mark.parametrize("target", sorted(EXPECTED_BUILT))
def test_code_object_kernels_match_the_blit_abi(target):
    path = BINARIES / ENTRIES[target]["file"]
    truth = readobj.kernels(path)
    assert set(truth) == set(EXPECTED_KERNELS)
    wave = 64 if target in WAVE64_TARGETS else 32
    for name, (kernarg_size, args) in EXPECTED_KERNELS.items():
        kernel = truth[name]
        assert kernel["symbol"] == f"{name}.kd"
        assert (kernel["kernarg_segment_size"], kernel["kernarg_segment_align"]) == (kernarg_size, 8)
        assert (kernel["group_segment_fixed_size"], kernel["private_segment_fixed_size"]) == (0, 0)
        assert kernel["wavefront_size"] == wave
        assert [(a["value_kind"], a["size"]) for a in kernel["args"]] == args
        assert [a["offset"] for a in kernel["args"]] == [0, 8, 16]
        assert not any(a["value_kind"].startswith("hidden_") for a in kernel["args"])

    parsed = {k.name: k for k in parse_code_object(path.read_bytes()).kernels}
    assert set(parsed) == set(truth)
    for name, kernel in parsed.items():
        assert kernel.kernarg_segment_size == truth[name]["kernarg_segment_size"]
        assert kernel.wavefront_size == truth[name]["wavefront_size"]
        assert [(a.offset, a.size, a.value_kind) for a in kernel.args] == \
            [(a["offset"], a["size"], a["value_kind"]) for a in truth[name]["args"]]
        # The 64-byte descriptor a loader reads agrees with the metadata.
        assert kernel.descriptor.kernarg_size == truth[name]["kernarg_segment_size"]
        assert kernel.descriptor.group_segment_fixed_size == 0
        assert kernel.descriptor.kernel_code_entry_byte_offset != 0

    listed = {k["name"]: k for k in ENTRIES[target]["kernels"]}
    assert listed == {name: {"name": name, "kernarg_segment_size": truth[name]["kernarg_segment_size"],
                             "kernarg_segment_align": 8, "wavefront_size": wave} for name in truth}


def test_build_check_reproduces_every_committed_code_object():
    done = subprocess.run([sys.executable, str(BINARIES / "build.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _load_build_module(tmp_path: Path, monkeypatch):
    """build.py pointed at a scratch copy of device_binaries/ (so the test can damage it)."""
    copy = tmp_path / "device_binaries"
    shutil.copytree(BINARIES, copy, ignore=shutil.ignore_patterns("__pycache__"))
    spec = importlib.util.spec_from_file_location("device_binaries_build", BINARIES / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", copy)
    monkeypatch.setattr(module, "SRC", copy / "src")
    monkeypatch.setattr(module, "MANIFEST", copy / "manifest.json")
    return module, copy


def test_build_check_reports_a_changed_code_object(tmp_path, monkeypatch, capsys):
    build, copy = _load_build_module(tmp_path, monkeypatch)
    victim = copy / "amdgcn-amd-amdhsa--gfx1100.hsaco"
    data = bytearray(victim.read_bytes())
    data[-1] ^= 0xFF
    victim.write_bytes(bytes(data))
    assert build.main(["--check", "--targets", "gfx1100,gfx11-generic"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == ["device_binaries: gfx1100: amdgcn-amd-amdhsa--gfx1100.hsaco differs from a fresh build"]


def test_build_check_reports_a_stale_manifest(tmp_path, monkeypatch, capsys):
    build, copy = _load_build_module(tmp_path, monkeypatch)
    manifest = json.loads((copy / "manifest.json").read_text())
    for entry in manifest["code_objects"]:
        if entry["target"] == "gfx942":
            entry["sha256"] = "0" * 64
    (copy / "manifest.json").write_text(json.dumps(manifest))
    (copy / "src" / "blit.cl").write_text((copy / "src" / "blit.cl").read_text() + "\n// edited\n")
    assert build.main(["--check", "--targets", "gfx942"]) == 1
    err = capsys.readouterr().err
    assert "gfx942: manifest differs from a fresh build in sha256" in err
    assert "manifest sources differ" in err

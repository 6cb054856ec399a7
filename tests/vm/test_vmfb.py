"""formats.vmfb / formats.flatbuffer against IREE 3.13.0's iree-dump-module.

Every example model (examples/models) is compiled for llvm-cpu at test time, plus two of them as
bare (non-ZIP) modules. Our parsed `BytecodeModule` must agree with what iree-dump-module reports
for the same file: `--output=flatbuffer-json` (every schema field we read) and `--output=metadata`
(the text tables). Broken files (truncations, random byte flips, patched fields) must raise only
VmfbFormatError.

`example_modules` and `dump_module` are shared with test_decoder.py.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from amdgpu_cli.errors import InputFileError  # noqa: E402
from amdgpu_cli.formats.flatbuffer import FlatBuffer, FlatBufferError  # noqa: E402
from amdgpu_cli.formats.vmfb import (  # noqa: E402
    FeatureBits,
    VmfbFormatError,
    load_vmfb,
    split_cconv,
)
from amdgpu_cli.vm.decoder import verify  # noqa: E402
from amdgpu_cli.vm.disassembler import disassemble  # noqa: E402
from examples.compile import MODELS_DIR, CompileError, iree_compile_binary, target_flags  # noqa: E402

MODELS = sorted(p.stem for p in MODELS_DIR.glob("*.mlir"))
BARE_MODELS = ("mlp", "dynamic")  # also compiled with --iree-vm-emit-polyglot-zip=false
EXAMPLE_KEYS = [*MODELS, *(f"{m}-bare" for m in BARE_MODELS)]
DUMP_TIMEOUT_S = 60


def _tools_or_skip() -> None:
    try:
        iree_compile_binary()
    except CompileError as e:
        pytest.skip(str(e))
    if not shutil.which("iree-dump-module"):
        pytest.skip("iree-dump-module not on PATH (pip install iree-base-runtime)")


def compile_mlir(source: Path, out: Path, flags: list[str]) -> Path:
    proc = subprocess.run([iree_compile_binary(), *flags, str(source), "-o", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and out.is_file(), f"iree-compile {source.name} failed:\n{proc.stderr[-2000:]}"
    return out


def dump_module(path: Path, output: str, *extra: str) -> str:
    """stdout of `iree-dump-module --output=<output>`; fails the test if the tool fails."""
    proc = subprocess.run(["iree-dump-module", f"--output={output}", *extra, str(path)],
                          capture_output=True, text=True, errors="replace", timeout=DUMP_TIMEOUT_S)
    assert proc.returncode == 0, f"iree-dump-module --output={output} {path.name}: {proc.stderr.strip()[:500]}"
    return proc.stdout


_COMPILED: dict[str, Path] = {}  # shared by every module that imports the fixture below


@pytest.fixture(scope="session")
def example_modules(tmp_path_factory) -> dict[str, Path]:
    """{model: vmfb}, plus {model-bare: vmfb} for BARE_MODELS; compiled two at a time, once."""
    _tools_or_skip()
    if not _COMPILED:
        out_dir = tmp_path_factory.mktemp("vm_models")
        jobs = [(name, MODELS_DIR / f"{name}.mlir", target_flags("llvm-cpu")) for name in MODELS]
        jobs += [(f"{name}-bare", MODELS_DIR / f"{name}.mlir",
                  [*target_flags("llvm-cpu"), "--iree-vm-emit-polyglot-zip=false"]) for name in BARE_MODELS]
        with ThreadPoolExecutor(max_workers=2) as pool:
            paths = list(pool.map(lambda j: compile_mlir(j[1], out_dir / f"{j[0]}.vmfb", j[2]), jobs))
        _COMPILED.update({name: path for (name, _, _), path in zip(jobs, paths)})
    return dict(_COMPILED)


@pytest.fixture(scope="session")
def loaded(example_modules):
    return {key: load_vmfb(path) for key, path in example_modules.items()}


# -- agreement with iree-dump-module -------------------------------------------------------------


def _feature_bits(value) -> int:
    """flatbuffer-json prints bit-flag enums as 0 or space-separated names."""
    if isinstance(value, int):
        return value
    return sum(FeatureBits[name] for name in value.split())


_FLAG_BITS = {"REQUIRED": 1, "OPTIONAL": 2}


def _flags(value, default: int = 1) -> int:
    if value is None:
        return default
    if isinstance(value, int):
        return value
    return sum(_FLAG_BITS[n] for n in value.split())


@pytest.mark.parametrize("key", EXAMPLE_KEYS)
def test_matches_flatbuffer_json(example_modules, loaded, key):
    path = example_modules[key]
    doc = json.loads(dump_module(path, "flatbuffer-json"))
    m = loaded[key]

    assert m.name == doc["name"]
    assert m.version == doc.get("version", 0)
    assert m.requirements == _feature_bits(doc.get("requirements", 0))
    assert m.attrs == {a["key"]: a.get("value", "") for a in doc.get("attrs", [])}
    assert list(m.types) == [t["full_name"] for t in doc.get("types", [])]
    assert [(d.name, d.minimum_version, d.flags) for d in m.dependencies] == [
        (d["name"], d.get("minimum_version", 0), _flags(d.get("flags"))) for d in doc.get("dependencies", [])]
    assert [(i.full_name, i.cconv, i.flags) for i in m.imports] == [
        (i["full_name"], i.get("signature", {}).get("calling_convention"), _flags(i.get("flags")))
        for i in doc.get("imported_functions", [])]
    assert [(e.name, e.internal_ordinal) for e in m.exports] == [
        (e["local_name"], e.get("internal_ordinal", 0)) for e in doc.get("exported_functions", [])]
    assert [(s.cconv, s.attrs) for s in m.signatures] == [
        (s.get("calling_convention"), {a["key"]: a.get("value", "") for a in s.get("attrs", [])})
        for s in doc.get("function_signatures", [])]

    segments = doc.get("rodata_segments", [])
    assert len(m.rodata) == len(segments)
    for seg, ref in zip(m.rodata, segments):
        if "embedded_data" in ref:
            assert not seg.external
            assert bytes(seg.data) == bytes(ref["embedded_data"])
        else:
            assert seg.external
            assert len(seg) == ref["external_data_length"]
            assert seg.file_offset == m.container.rodata_base + ref.get("external_data_offset", 0)
            assert bytes(seg.data[:4]) == b"\x7fELF"  # llvm-cpu executables are raw ELF files

    state = doc.get("module_state", {})
    assert m.state.global_bytes_capacity == state.get("global_bytes_capacity", 0)
    assert m.state.global_ref_count == state.get("global_ref_count", 0)

    descriptors = doc["function_descriptors"]
    assert len(m.functions) == len(descriptors)
    for fn, ref in zip(m.functions, descriptors):
        assert (fn.bytecode_offset, fn.bytecode_length, fn.block_count, fn.i32_register_count,
                fn.ref_register_count) == (ref["bytecode_offset"], ref["bytecode_length"], ref["block_count"],
                                           ref["i32_register_count"], ref["ref_register_count"])
        assert fn.requirements == _feature_bits(ref["requirements"])
        assert fn.bytecode_offset % 8 == 0
    assert m.bytecode_version == (doc["bytecode_version"] >> 16, doc["bytecode_version"] & 0xFFFF) == (17, 0)
    assert bytes(m.bytecode) == bytes(doc["bytecode_data"])
    debug = doc.get("debug_database", {}).get("functions", [])
    assert list(m.debug_function_names) == [f.get("local_name") for f in debug]


def _parse_metadata(text: str) -> dict:
    """The parts of `iree-dump-module --output=metadata` we compare, as plain values."""
    out: dict = {"types": [], "deps": [], "imports": [], "exports": [], "attrs": {}, "rodata": [], "functions": []}
    section = None
    last_export = None
    for line in text.splitlines():
        if m := re.match(r"// @(\S+) : version (\d+)$", line):
            out["name"], out["version"] = m.group(1), int(m.group(2))
        elif line.startswith("Requirements: "):
            out["requirements"] = _requirements_text(line.split(": ", 1)[1])
        elif line and not line.startswith(" ") and line.endswith(":"):
            section = line[:-1]
        elif section == "Required Types" and (m := re.match(r"\s+\[\s*\d+\] (.+)$", line)):
            out["types"].append(m.group(1))
        elif section == "Module Dependencies" and (m := re.match(r"\s+(\S+), version >= (\d+), (\w+)$", line)):
            out["deps"].append((m.group(1), int(m.group(2)), m.group(3)))
        elif section == "Imported Functions" and (m := re.match(r"\s+\[\s*\d+\] (\??)([^(]+)\(", line)):
            out["imports"].append((m.group(2), bool(m.group(1))))
        elif section == "Exported Functions":
            if m := re.match(r"\s+\[\s*\d+\] ([^(]+)\(", line):
                last_export = m.group(1)
                out["exports"].append(last_export)
            elif m := re.match(r"\s{8}(\S+): (.*)$", line):
                out["attrs"].setdefault(last_export, {})[m.group(1)] = m.group(2)
        elif section == "Module State" and (m := re.match(r"\s+(\d+) bytes, (\d+) refs", line)):
            out["state"] = (int(m.group(1)), int(m.group(2)))
        elif m := re.match(r"FlatBuffer: (\d+) bytes$", line):
            out["flatbuffer_size"] = int(m.group(1))
        elif m := re.match(r"\s+Bytecode: (\d+) bytes$", line):
            out["bytecode_size"] = int(m.group(1))
        elif m := re.match(r"\s+\.rodata\[\s*(\d+)\] (embedded|external)\s+(\d+) bytes(?: \(offset (\d+) )?", line):
            ext_offset = int(m.group(4)) if m.group(4) is not None else None
            out["rodata"].append((m.group(2) == "external", int(m.group(3)), ext_offset))
        elif m := re.match(r"\s*(\d+) \| ([0-9A-F]{8}) \|\s+(\d+) \|\s+(\d+) \|\s+(\d+) \|\s+(\d+) \| (.*)\| ?(.*)$",
                           line):
            out["functions"].append(tuple(int(m.group(i), 16 if i == 2 else 10) for i in range(1, 7))
                                    + (m.group(8).strip(),))
    return out


def _requirements_text(text: str) -> int:
    """`EXT_F32 | EXT_F64`, `00000000`, or names then the unnamed bits in hex (`EXT_F32 |
    0000000C`, as iree-dump-module prints bits it has no name for)."""
    total = 0
    for part in (n.strip() for n in text.split("|")):
        if re.fullmatch(r"[0-9A-F]{8}", part):
            total |= int(part, 16)
        elif part:
            total |= FeatureBits[part]
    return total


@pytest.mark.parametrize("key", EXAMPLE_KEYS)
def test_matches_metadata_text(example_modules, loaded, key):
    meta = _parse_metadata(dump_module(example_modules[key], "metadata"))
    m = loaded[key]
    assert (meta["name"], meta["version"]) == (m.name, m.version)
    assert meta["requirements"] == m.requirements
    assert meta["types"] == list(m.types)
    assert meta["deps"] == [(d.name, d.minimum_version, "optional" if d.optional else "required")
                            for d in m.dependencies]
    assert meta["imports"] == [(i.full_name, i.optional) for i in m.imports]
    assert meta["exports"] == [e.name for e in m.exports]
    for e in m.exports:
        assert meta["attrs"].get(e.name, {}) == m.signatures[e.internal_ordinal].attrs
    assert meta["state"] == (m.state.global_bytes_capacity, m.state.global_ref_count)
    assert meta["flatbuffer_size"] == m.container.flatbuffer_size
    assert meta["bytecode_size"] == len(m.bytecode)
    assert meta["rodata"] == [(s.external, len(s), s.file_offset - m.container.rodata_base if s.external else None)
                              for s in m.rodata]
    assert [row[:6] for row in meta["functions"]] == [
        (f.ordinal, f.bytecode_offset, f.bytecode_length, f.block_count, f.i32_register_count,
         f.ref_register_count) for f in m.functions]
    assert [row[6] for row in meta["functions"]] == [", ".join(m.export_names(f.ordinal)) for f in m.functions]


def test_polyglot_and_bare_hold_the_same_module(loaded):
    for name in BARE_MODELS:
        zipped, bare = loaded[name], loaded[f"{name}-bare"]
        assert zipped.container.polyglot_zip and not bare.container.polyglot_zip
        assert bare.container.flatbuffer_offset == 4
        for seg_z, seg_b in zip(zipped.rodata, bare.rodata):
            assert seg_z.external == seg_b.external
            assert bytes(seg_z.data) == bytes(seg_b.data)
        assert bytes(zipped.bytecode) == bytes(bare.bytecode)
        assert zipped.imports == bare.imports and zipped.exports == bare.exports


def test_module_api(loaded):
    m = loaded["mlp"]
    assert m.exports_by_name["predict"] == 1
    assert m.function_label(1) == "mlp.predict"
    assert m.imports[0].module_name == "hal" and m.imports[0].function_name == "ex.file.from_memory"
    assert m.dependencies[0].name == "hal" and m.dependencies[0].minimum_version == 7
    assert not m.dependencies[0].optional
    sig = m.signatures[1]
    assert (sig.arguments, sig.results) == ("r", "r")
    assert sig.attrs["iree.abi.declaration"].startswith("sync func @predict(")
    assert m.container.rodata_base % 64 == 0
    # Loading from a path maps the file; loading from bytes parses the same module.
    from_bytes = load_vmfb(Path(m.source).read_bytes())
    assert from_bytes.signatures == m.signatures and bytes(from_bytes.bytecode) == bytes(m.bytecode)


def test_split_cconv():
    assert split_cconv("0v_v") == ("", "")
    assert split_cconv("0rIiiI_r") == ("rIiiI", "r")
    assert split_cconv("0rIIiiCID_r") == ("rIIiiCID", "r")
    for bad in ("", "1i_i", "0ii", "0iX_i", "0iC_i", "0iCCiDD_i", "0iD_i"):
        with pytest.raises(VmfbFormatError):
            split_cconv(bad)


# -- broken input --------------------------------------------------------------------------------


def _load_and_verify(data: bytes) -> None:
    """Everything `amdgpu-run` would do with a module before running it."""
    module = load_vmfb(data)
    for ordinal in range(len(module.functions)):
        verify(module, ordinal)
        disassemble(module, ordinal)


def test_missing_file_and_empty_input(tmp_path):
    with pytest.raises(InputFileError):
        load_vmfb(tmp_path / "nope.vmfb")
    empty = tmp_path / "empty.vmfb"
    empty.write_bytes(b"")
    with pytest.raises(VmfbFormatError, match="shorter than 16 bytes"):
        load_vmfb(empty)
    with pytest.raises(VmfbFormatError):
        load_vmfb(b"PK\x03\x04" + b"\0" * 22 + b"\xff\xff\xff\xff")


def test_truncations_raise_format_error(example_modules):
    data = example_modules["mlp"].read_bytes()
    m = load_vmfb(data)
    fb_end = m.container.flatbuffer_offset + m.container.flatbuffer_size
    needed = max(s.file_offset + len(s) for s in m.rodata if s.external)  # past this, nothing is missing
    lengths = set(range(0, 96)) | set(range(96, fb_end, 7)) | {fb_end - 1, fb_end, needed - 1}
    for n in sorted(lengths):
        with pytest.raises(VmfbFormatError):
            _load_and_verify(data[:n])
    _load_and_verify(data[:needed])


def test_random_byte_flips_raise_only_format_errors(example_modules):
    rng = random.Random(20261016)
    originals = {}
    for key in ("mlp", "dynamic", "dynamic-bare"):
        data = example_modules[key].read_bytes()
        m = load_vmfb(data)
        originals[key] = (data, m.container.flatbuffer_offset - 4, m.container.flatbuffer_offset + m.container.flatbuffer_size)
    rejected = 0
    for i in range(500):
        key = ("mlp", "dynamic", "dynamic-bare")[i % 3]
        data, lo, hi = originals[key]
        buf = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(lo, hi) if rng.random() < 0.95 else rng.randrange(len(buf))
            buf[pos] = rng.choice((rng.randrange(256), buf[pos] ^ (1 << rng.randrange(8)), 0xFF, 0x00))
        try:
            _load_and_verify(bytes(buf))
        except VmfbFormatError:
            rejected += 1
        except Exception as e:  # noqa: BLE001 - the point of the test
            pytest.fail(f"mutation {i} of {key}: {type(e).__name__}: {e}")
    assert rejected > 50  # most flips inside the FlatBuffer break something we check


def _patch_field(data: bytes, field_slot: int, value: bytes) -> bytes:
    m = load_vmfb(data)
    fb = FlatBuffer(m.file[m.container.flatbuffer_offset:m.container.flatbuffer_offset + m.container.flatbuffer_size])
    pos = fb.root().field_position(field_slot)
    assert pos is not None
    at = m.container.flatbuffer_offset + pos
    return data[:at] + value + data[at + len(value):]


def test_patched_fields_are_rejected(example_modules):
    data = example_modules["mlp"].read_bytes()
    with pytest.raises(VmfbFormatError, match=r"bytecode version mismatch; supported 17\.0, module has 18\.0"):
        load_vmfb(_patch_field(data, 13, (18 << 16).to_bytes(4, "little")))
    with pytest.raises(VmfbFormatError, match=r"module has 17\.1"):
        load_vmfb(_patch_field(data, 13, ((17 << 16) | 1).to_bytes(4, "little")))
    with pytest.raises(VmfbFormatError, match="unsupported features"):
        load_vmfb(_patch_field(data, 2, (0x100).to_bytes(4, "little")))
    m = load_vmfb(data)
    ident = m.container.flatbuffer_offset + 4
    with pytest.raises(VmfbFormatError, match="file identifier"):
        load_vmfb(data[:ident] + b"XXXX" + data[ident + 4:])
    prefix = m.container.flatbuffer_offset - 4
    with pytest.raises(VmfbFormatError, match="size prefix"):
        load_vmfb(data[:prefix] + (len(data)).to_bytes(4, "little") + data[prefix + 4:])


def test_flatbuffer_reader_bounds():
    with pytest.raises(FlatBufferError):
        FlatBuffer(b"\x00" * 4).root()
    with pytest.raises(FlatBufferError, match="past the end"):
        FlatBuffer(b"\xff\xff\x00\x00IREE").root()
    # A hand-built buffer: root offset 16, identifier, vtable at 8 (size 6, table size 8, field 0 at
    # +4), 2 pad bytes, table at 16 (soffset 8 back to the vtable) holding one u32.
    buf = (16).to_bytes(4, "little") + b"IREE" + b"\x06\x00\x08\x00\x04\x00" + b"\0\0"
    buf += (8).to_bytes(4, "little") + (0xDEADBEEF).to_bytes(4, "little")
    t = FlatBuffer(buf).root(b"IREE")
    assert t.scalar(0, "I") == 0xDEADBEEF
    assert t.scalar(1, "I", 7) == 7  # slot past the vtable: the default
    assert t.string(2) is None and t.tables(3) == [] and t.bytes(4) is None
    with pytest.raises(FlatBufferError, match="past the end"):
        t.string(0)  # read as a reference, 0xDEADBEEF points far outside
    with pytest.raises(FlatBufferError, match="identifier"):
        FlatBuffer(buf).root(b"ABCD")
    bad_vtable = buf[:8] + b"\x03\x00" + buf[10:]
    with pytest.raises(FlatBufferError, match="vtable size"):
        FlatBuffer(bad_vtable).root()
    with pytest.raises(VmfbFormatError):  # the error class is the caller's choice
        FlatBuffer(b"", error=VmfbFormatError).root()

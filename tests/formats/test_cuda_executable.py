"""parse_cda1 against IREE's own tools, IREE's CUDA captures and hand-built CDA1 files.

Independent truths:
- the executable_prepare records of tests/replay/data/*_cuda.ireereplay (captured by IREE 3.13.0
  on an H100): their metadata names every function with its workgroup size and constant / binding
  counts, as IREE's CUDA driver reflected them from the CDA1 it loaded;
- modules compiled here with iree-compile 3.13.0 (`--iree-hal-target-device=cuda
  --iree-cuda-target=sm_80`): `iree-dump-module --output=disassembly` gives the rodata handed to
  `hal.executable.create` (format string and CDA1 bytes, as hex), the names looked up with
  `hal.executable.lookup.function` and the (constants, bindings) of the dispatch that follows;
  `--iree-hal-dump-executable-binaries-to` writes the PTX iree-compile embedded and
  `--iree-hal-dump-executable-sources-to` the `hal.executable.export`s with their pipeline layouts
  (constants, ReadOnly / Indirect bindings);
- the PTX itself: `.entry <name>(`, its `.maxntid x, y, z` (the block dims codegen chose) and its
  parameters (one .u64 pointer per binding, then one .b32 per constant).
Hand-built CDA1 files (a tiny FlatBuffer writer below) hit each of IREE's load-time checks, and
truncated or byte-flipped real ones must give a valid parse or one CudaExecutableError line.
"""

from __future__ import annotations

import random
import re
import struct
import subprocess
from pathlib import Path

import pytest

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.formats.cuda_executable import (
    BINDING_INDIRECT,
    BINDING_READ_ONLY,
    FORMAT,
    CudaExecutableDef,
    CudaExecutableError,
    CudaExport,
    check_device_limits,
    is_cda1,
    parse_cda1,
)
from amdgpu_cli.formats.vmfb import load_vmfb
from amdgpu_cli.replay.reader import ReplayFile, decode_metadata, decode_payload
from amdgpu_cli.replay.schema import PayloadType
from tests.amdgpu_executables import iree_compile, iree_dump_module

REPO = Path(__file__).resolve().parents[2]
CAPTURES = sorted((REPO / "tests" / "replay" / "data").glob("*_cuda.ireereplay"))
# The module each capture ran (tests/replay/data/README.md): its debug-info source file.
CAPTURE_SOURCES = {"mlp": "examples/models/mlp.mlir", "softmax": "tests/corpus/softmax.mlir",
                   "matmul": "tests/corpus/matmul.mlir", "dynamic_shapes": "tests/corpus/dynamic_shapes.mlir",
                   "conv2d": "tests/corpus/conv2d.mlir"}
MODELS = {"mlp": REPO / "examples/models/mlp.mlir",
          **{name: REPO / f"tests/corpus/{name}.mlir"
             for name in ("matmul", "softmax", "dynamic_shapes", "conv2d", "layernorm")}}

needs_iree = pytest.mark.skipif(not (iree_compile() and iree_dump_module()),
                                reason="iree-compile / iree-dump-module (IREE 3.13.0) not on PATH")


# -- the PTX as truth ------------------------------------------------------------------------------


def ptx_entries(ptx: bytes) -> dict[str, dict]:
    """Each `.entry` of a PTX module: its .maxntid, how many u64 / b32 parameters it takes and
    whether its body uses dynamic shared memory (`.extern .shared ... __dynamic_shared_memory__`)."""
    text = ptx.decode()
    matches = list(re.finditer(r"\.entry (\w+)\(\n(.*?)\n\)\n\.maxntid (\d+), (\d+), (\d+)", text, re.DOTALL))
    assert len(matches) == text.count(".entry "), "every .entry has a .maxntid"
    entries = {}
    for i, match in enumerate(matches):
        params = match.group(2)
        body = text[match.end():matches[i + 1].start() if i + 1 < len(matches) else len(text)]
        entries[match.group(1)] = {
            "maxntid": tuple(int(match.group(i)) for i in (3, 4, 5)),
            "u64": len(re.findall(r"\.param \.u64 ", params)),
            "b32": len(re.findall(r"\.param \.b32 ", params)),
            "dynamic_shared": "__dynamic_shared_memory__" in body}
    return entries


def check_against_ptx(executable: CudaExecutableDef) -> None:
    for ptx in executable.modules:
        assert ptx.startswith(b"//") and b"\0" not in ptx
    for export in executable.exports:
        entry = ptx_entries(executable.modules[export.module_ordinal])[export.name]
        assert entry["maxntid"] == export.block_dims
        assert (entry["u64"], entry["b32"]) == (export.binding_count, export.constant_count)
        assert export.binding_count == len(export.binding_flags)
        assert entry["dynamic_shared"] == (export.block_shared_memory_size > 0)


# -- IREE's CUDA captures --------------------------------------------------------------------------


def capture_prepares(path: Path) -> list[tuple[bytes, bytes, list[dict]]]:
    """(format, executable data, metadata functions) of every executable_prepare record."""
    out = []
    with ReplayFile.open(path) as replay:
        for record in replay.records():
            if record.payload_type == PayloadType.EXECUTABLE_PREPARE:
                fields = decode_payload(record.payload_type, replay.payload(record))
                out.append((bytes(fields["format"]), bytes(fields["data"]), decode_metadata(fields["metadata"])))
                del fields  # views into the mapping
    return out


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.stem)
def test_every_capture_executable_matches_its_reflection(path):
    prepares = capture_prepares(path)
    assert prepares, "each capture prepares an executable"
    for executable_format, data, functions in prepares:
        assert executable_format == FORMAT.encode()
        assert is_cda1(data)
        executable = parse_cda1(data)
        assert len(executable.modules) == 1
        assert [e.name for e in executable.exports] == [f["name"] for f in functions]
        for export, function in zip(executable.exports, functions):
            assert export.block_dims == tuple(function["workgroup_size"])
            assert (export.constant_count, export.binding_count) == (function["constant_count"],
                                                                     function["binding_count"])
            assert export.module_ordinal == 0
            # The last binding is the output: INDIRECT without READ_ONLY; inputs are READ_ONLY.
            assert export.binding_flags[-1] == BINDING_INDIRECT
            assert all(flags & BINDING_READ_ONLY for flags in export.binding_flags[:-1])
            assert export.debug_name == export.name
            assert export.source_filename == CAPTURE_SOURCES[path.stem.removesuffix("_cuda")]
            assert export.source_line > 0
        check_against_ptx(executable)
        check_device_limits(executable, (1024, 1024, 64), 232448)  # an H100's limits


def test_the_dynamic_matmul_of_the_capture_takes_eight_constants():
    (_, data, _), = capture_prepares(REPO / "tests/replay/data/matmul_cuda.ireereplay")
    exports = {e.name: e for e in parse_cda1(data).exports}
    dynamic = exports["matmul_dyn_dispatch_0_matmul_DxDxD_f32"]
    assert (dynamic.block_dims, dynamic.constant_count, dynamic.binding_flags) == ((1024, 1, 1), 8, (3, 3, 2))
    # Its PTX uses __dynamic_shared_memory__ (the reduction's workgroup buffer); the static ones do not.
    assert dynamic.block_shared_memory_size == 136
    assert exports["matmul_dispatch_0_matmul_2x4x3_f32"].block_shared_memory_size == 0
    assert exports["matmul_dispatch_0_matmul_2x4x3_f32"].block_dims == (2, 4, 1)


# -- modules compiled here -------------------------------------------------------------------------

_RODATA = re.compile(r"^vm\.rodata\[\s*(\d+)\] = ([0-9A-F]*)$", re.MULTILINE)
_CONST_RODATA = re.compile(r"%r(\d+) = vm\.const\.ref\.rodata (\d+)\b")
_CREATE = re.compile(r"@hal\.executable\.create\(%[rR]\d+, %i\d+, %[rR](\d+), %[rR](\d+), ")
_LOOKUP = re.compile(r"@hal\.executable\.lookup\.function\(%[rR]\d+, %[rR](\d+)\)")
_DISPATCH = re.compile(r"@hal\.command_buffer\.dispatch segments\[[\d, ]*?(\d+), (\d+)\]")
_EXPORT = re.compile(r"hal\.executable\.export public @(\w+) ordinal\(\d+\) layout\(#hal\.pipeline\.layout<"
                     r"(?:constants = (\d+), )?bindings = \[(.*?)\]")
_BINDING = re.compile(r"#hal\.pipeline\.binding<storage_buffer(?:, \"?([\w|]+)\"?)?>")
_LAYOUT_FLAGS = {"ReadOnly": BINDING_READ_ONLY, "Indirect": BINDING_INDIRECT}


def disassembly_facts(listing: str) -> dict:
    """From iree-dump-module's disassembly: the (format, data) rodata of each hal.executable.create
    and, per name looked up, the (constants, bindings) of the dispatch that follows the lookup."""
    rodata = {int(i): bytes.fromhex(text) for i, text in _RODATA.findall(listing)}
    registers: dict[str, int] = {}
    creates, dispatches, pending = [], {}, None
    for line in listing.splitlines():
        if (m := _CONST_RODATA.search(line)):
            registers[m.group(1)] = int(m.group(2))
        elif (m := _CREATE.search(line)):
            creates.append((rodata[registers[m.group(1)]], rodata[registers[m.group(2)]]))
        elif (m := _LOOKUP.search(line)):
            pending = rodata[registers[m.group(1)]].decode()
        elif (m := _DISPATCH.search(line)) and pending is not None:
            dispatches[pending] = (int(m.group(1)), int(m.group(2)))
            pending = None
    return {"creates": creates, "dispatches": dispatches}


def source_exports(directory: Path) -> dict[str, tuple[int, tuple[int, ...]]]:
    """{export name: (constants, binding flags)} from the dumped executable sources."""
    out = {}
    for path in directory.glob("*.mlir"):
        for name, constants, bindings in _EXPORT.findall(path.read_text()):
            flags = tuple(sum(_LAYOUT_FLAGS[bit] for bit in spec.split("|") if bit)
                          for spec in _BINDING.findall(bindings))
            out[name] = (int(constants or 0), flags)
    return out


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[str, dict]:
    if not (iree_compile() and iree_dump_module()):
        pytest.skip("iree-compile / iree-dump-module (IREE 3.13.0) not on PATH")
    out = tmp_path_factory.mktemp("cuda")
    procs = {}
    for name, source in MODELS.items():
        procs[name] = subprocess.Popen(
            [iree_compile(), "--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80",
             f"--iree-hal-dump-executable-binaries-to={out / f'bin-{name}'}",
             f"--iree-hal-dump-executable-sources-to={out / f'src-{name}'}",
             str(source), "-o", str(out / f"{name}.vmfb")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    built = {}
    for name, proc in procs.items():
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"iree-compile {name}: {stderr.decode()[-500:]}"
        vmfb = out / f"{name}.vmfb"
        listing = subprocess.run([iree_dump_module(), "--output=disassembly", str(vmfb)], check=True,
                                 capture_output=True, text=True).stdout
        (ptx,) = (out / f"bin-{name}").glob("*.ptx")
        built[name] = {"vmfb": vmfb, "ptx": ptx.read_bytes(), "sources": source_exports(out / f"src-{name}"),
                       **disassembly_facts(listing)}
    return built


@needs_iree
@pytest.mark.parametrize("model", list(MODELS))
def test_compiled_executable_matches_iree_tools(compiled, model):
    built = compiled[model]
    (executable_format, blob), = built["creates"]
    assert executable_format == FORMAT.encode()
    # Our vmfb reader finds the same bytes in the module's rodata.
    rodata = [bytes(segment.data) for segment in load_vmfb(built["vmfb"].read_bytes()).rodata]
    assert [data for data in rodata if is_cda1(data)] == [blob]
    executable = parse_cda1(blob)
    assert executable.modules == (built["ptx"],)
    names = [e.name for e in executable.exports]
    assert len(set(names)) == len(names) and set(names) == set(built["sources"])
    assert set(built["dispatches"]) <= set(names)
    for export in executable.exports:
        assert export.name.encode() in rodata  # the name the VM looks it up by
        assert (export.constant_count, export.binding_flags) == built["sources"][export.name]
        if export.name in built["dispatches"]:
            assert (export.constant_count, export.binding_count) == built["dispatches"][export.name]
        assert export.module_ordinal == 0
        assert export.debug_name == export.name and export.source_filename and export.source_line > 0
    check_against_ptx(executable)


# -- hand-built CDA1 files: IREE's checks one by one ------------------------------------------------


class _Ref:
    """A FlatBuffer object referenced by offset: kind "table" (fields by slot), "string", "bytes",
    "u64s" (a vector of u64) or "refs" (a vector of references)."""

    def __init__(self, kind: str, value, *, terminate: bool = True):
        self.kind, self.value, self.terminate = kind, value, terminate


def table(*fields) -> _Ref:
    """Fields by slot: None (absent), ("u32"|"i32", int), ("dims", (x, y, z)) or a _Ref."""
    return _Ref("table", fields)


def string(text, *, terminate: bool = True) -> _Ref:
    return _Ref("string", text.encode() if isinstance(text, str) else text, terminate=terminate)


def build_flatbuffer(root: _Ref, identifier: bytes = b"CDA1") -> bytes:
    """Lays objects out front to back: every reference points forward, as uoffsets must."""
    buf = bytearray(8)
    buf[4:8] = identifier
    queue = [(0, root)]

    def align(n: int, extra: int = 0) -> None:
        while (len(buf) + extra) % n:
            buf.append(0)

    while queue:
        at, obj = queue.pop(0)
        if obj.kind == "table":
            inline, layout, size = [], [], 4
            for field in obj.value:
                if field is None:
                    layout.append(0)
                    continue
                width = 12 if isinstance(field, tuple) and field[0] == "dims" else 4
                layout.append(size)
                inline.append(field)
                size += width
            align(4, 4 + 2 * len(layout) + (2 * len(layout) + 4) % 4)
            vtable = len(buf)
            buf += struct.pack(f"<HH{len(layout)}H", 4 + 2 * len(layout), size, *layout)
            align(4)
            pos = len(buf)
            buf += struct.pack("<i", pos - vtable)
            for field in inline:
                if isinstance(field, _Ref):
                    queue.append((len(buf), field))
                    buf += bytes(4)
                elif field[0] == "dims":
                    buf += struct.pack("<3I", *field[1])
                else:
                    buf += struct.pack("<I" if field[0] == "u32" else "<i", field[1])
        elif obj.kind in ("string", "bytes"):
            align(4)
            pos = len(buf)
            buf += struct.pack("<I", len(obj.value)) + obj.value + (b"\0" if obj.terminate else b"X")
        elif obj.kind == "u64s":
            align(8, 4)
            pos = len(buf)
            buf += struct.pack(f"<I{len(obj.value)}Q", len(obj.value), *obj.value)
        else:  # refs
            align(4)
            pos = len(buf)
            buf += struct.pack("<I", len(obj.value))
            for child in obj.value:
                queue.append((len(buf), child))
                buf += bytes(4)
        struct.pack_into("<I", buf, at, pos - at)
    align(8)
    return bytes(buf)


def cda1(flatbuffer: bytes, *, magic: bytes = b"CDA1", version: int = 0, content_size: int | None = None) -> bytes:
    size = len(flatbuffer) if content_size is None else content_size
    return struct.pack("<4sIQ48x", magic, version, size) + flatbuffer


def export_def(name="k", *, ordinal=0, dims=(32, 1, 1), smem=0, constants=0, flags=(3, 2), debug=None):
    return table(("u32", ordinal), string(name) if name is not None else None,
                 ("dims", dims) if dims is not None else None, ("u32", smem), ("u32", constants),
                 _Ref("u64s", list(flags)), debug)


def executable_def(exports=None, modules=None, source_files=None) -> bytes:
    exports = [export_def()] if exports is None else exports
    modules = [table(string("// ptx\n.entry k"))] if modules is None else modules
    return cda1(build_flatbuffer(table(_Ref("refs", exports), _Ref("refs", modules),
                                       _Ref("refs", source_files) if source_files is not None else None)))


def test_built_executable_round_trips():
    location = table(string("model.mlir"), ("i32", 7))
    stage = table(string("codegen"), table(string("model.ll"), ("i32", 42)))
    debug = table(string("producer_name"), location, _Ref("refs", [stage]))
    data = executable_def(
        exports=[export_def("a", dims=(64, 2, 1), smem=4096, constants=5, flags=(1, 3, 0), debug=debug),
                 export_def("b", ordinal=1, flags=())],
        modules=[table(string("// one")), table(string("// two"))],
        source_files=[table(string("model.mlir"), _Ref("bytes", b"func.func"))])
    executable = parse_cda1(data)
    assert executable.modules == (b"// one", b"// two")
    assert executable.exports[0] == CudaExport(
        name="a", module_ordinal=0, block_dims=(64, 2, 1), block_shared_memory_size=4096, constant_count=5,
        binding_count=3, binding_flags=(1, 3, 0), debug_name="producer_name", source_filename="model.mlir",
        source_line=7, stage_locations=(("codegen", "model.ll", 42),))
    assert executable.exports[1][:7] == ("b", 1, (32, 1, 1), 0, 0, 0, ())
    assert executable.exports[1].debug_name == ""
    assert [tuple(f) for f in executable.source_files] == [("model.mlir", b"func.func")]
    # Copies, not views: nothing holds the input.
    assert all(type(ptx) is bytes for ptx in executable.modules)


def test_empty_executable_is_valid():
    """No modules and no exports passes IREE's verification (nothing to load)."""
    assert parse_cda1(executable_def(exports=[], modules=[])) == CudaExecutableDef((), (), ())


@pytest.mark.parametrize("data, status, message", [
    (b"CDA1" + bytes(10), "INVALID_ARGUMENT", r"14 bytes are less than the 64-byte CDA1 header"),
    (cda1(bytes(16), magic=b"AMD1"), "INVALID_ARGUMENT", r"file identifier is b'AMD1', expected b'CDA1'"),
    (cda1(bytes(16), content_size=0), "INVALID_ARGUMENT", r"content size is zero"),
    (cda1(bytes(16), version=1), "INCOMPATIBLE", r"version 1 is not supported"),
    (cda1(bytes(16), content_size=17), "OUT_OF_RANGE", r"content size 17 exceeds the 16 bytes"),
    (cda1(build_flatbuffer(table(None, None), identifier=b"CUDA")), "INVALID_ARGUMENT",
     r"file identifier is b'CUDA', expected b'CDA1'"),
], ids=["short", "magic", "zero-size", "version", "size", "identifier"])
def test_header_checks(data, status, message):
    with pytest.raises(CudaExecutableError, match=message) as raised:
        parse_cda1(data)
    assert raised.value.status == status


@pytest.mark.parametrize("kwargs, message", [
    ({"modules": [table(string(""))]}, r"modules\[0\] contents are empty"),
    ({"modules": [table(None)]}, r"modules\[0\] contents are empty"),
    ({"exports": [export_def(ordinal=1)]}, r"exports\[0\] module_ordinal 1 is out of bounds 1"),
    ({"exports": [export_def(), export_def(ordinal=0xFFFFFFFF)]}, r"exports\[1\] module_ordinal 4294967295"),
    ({"exports": [export_def(name="")]}, r"exports\[0\] name is empty"),
    ({"exports": [export_def(name=None)]}, r"exports\[0\] name is empty"),
    ({"exports": [export_def(dims=None)]}, r"exports\[0\] \(k\) block dims are missing"),
    ({"exports": [export_def(constants=65)]}, r"exports\[0\] constant_count 65 exceeds maximum of 64"),
    ({"exports": [export_def(flags=[2] * 17)]}, r"exports\[0\] binding_flags count 17 exceeds maximum of 16"),
    ({"exports": [export_def(debug=table(None, table(string(""))))]},
     r"exports\[0\]\.debug_info\.location: debug info field `filename` is empty"),
    ({"exports": [export_def(debug=table(None, None, _Ref("refs", [table(string(""))])))]},
     r"stage_locations\[0\]: debug info field `stage` is empty"),
    ({"modules": [table(string("// ptx", terminate=False))]}, r"ptx_image .* is not NUL-terminated"),
    ({"exports": [export_def(name=b"\xff")]}, r"kernel_name is not valid UTF-8"),
], ids=["empty-ptx", "no-ptx", "ordinal", "ordinal-max", "empty-name", "no-name", "no-dims", "constants",
        "bindings", "debug-filename", "debug-stage", "unterminated", "utf8"])
def test_load_checks(kwargs, message):
    with pytest.raises(CudaExecutableError, match=message) as raised:
        parse_cda1(executable_def(**kwargs))
    assert raised.value.status == "INVALID_ARGUMENT"
    assert "\n" not in str(raised.value)


def test_limits_pass_at_the_maximum():
    executable = parse_cda1(executable_def(exports=[export_def(constants=64, flags=[0] * 16)]))
    assert executable.exports[0].constant_count == 64 and executable.exports[0].binding_count == 16


def test_device_limits():
    big = export_def("big", dims=(8, 8, 65), smem=48 * 1024)
    executable = parse_cda1(executable_def(exports=[export_def(), big]))
    check_device_limits(executable, (1024, 1024, 65), 48 * 1024)
    with pytest.raises(CudaExecutableError,
                       match=r"exports\[1\] block dims 8x8x65 exceeds device maximum 1024x1024x64"):
        check_device_limits(executable, (1024, 1024, 64), 48 * 1024)
    with pytest.raises(CudaExecutableError, match=r"exports\[1\] requires 49152B of shared memory and exceeds "
                                                  r"the device maximum of 49151B per block"):
        check_device_limits(executable, (1024, 1024, 65), 48 * 1024 - 1)


def test_is_cda1():
    data = executable_def()
    assert is_cda1(data) and is_cda1(memoryview(data)) and is_cda1(bytearray(data[:4]))
    assert not is_cda1(b"AMD1" + data[4:]) and not is_cda1(b"CDA") and not is_cda1(b"")


# -- corrupt real executables ---------------------------------------------------------------------


def _real_blobs() -> list[bytes]:
    blobs = []
    for stem in ("mlp_cuda", "dynamic_shapes_cuda"):
        (_, data, _), = capture_prepares(REPO / f"tests/replay/data/{stem}.ireereplay")
        blobs.append(data)
    return blobs


def _one(data: bytes) -> CudaExecutableDef | None:
    """A valid parse (whose invariants hold) or one project error line; anything else propagates."""
    try:
        executable = parse_cda1(data)
    except CudaExecutableError as error:
        assert isinstance(error, AmdgpuCliError) and str(error) and "\n" not in str(error)
        return None
    for export in executable.exports:
        assert 0 <= export.module_ordinal < len(executable.modules) and export.name
        assert export.binding_count == len(export.binding_flags) <= 16 and export.constant_count <= 64
        assert len(export.block_dims) == 3
    assert all(executable.modules)
    return executable


def test_truncations_and_byte_flips_give_a_parse_or_one_error_line():
    rng = random.Random(20261126)
    parsed = failed = 0
    for blob in _real_blobs():
        cases = [blob[:n] for n in sorted({*range(0, 80), *rng.sample(range(80, len(blob)), 100)})]
        for _ in range(300):
            mutated = bytearray(blob)
            for _ in range(rng.choice((1, 1, 2, 4))):
                mutated[rng.randrange(len(mutated))] ^= 1 << rng.randrange(8) if rng.random() < 0.5 else 0xFF
            cases.append(bytes(mutated))
        for data in cases:
            if _one(data) is None:
                failed += 1
            else:
                parsed += 1
    assert parsed and failed  # both outcomes were exercised

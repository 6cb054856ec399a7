"""softhsa's loader half: code-object readers, executables, symbols, the AMD loader extension, and
the dispatch log.

Truth comes from outside softhsa: kernels compiled here by clang-19, their metadata and symbol bytes
read by llvm-readobj-19, status codes and layouts from the ROCm 5.2.3 headers (via hsa_ffi), the
generic-target families from reference §7, and ROCr's ExecutableImpl::LoadCodeObject for the status
of an ISA mismatch (HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from functools import partial
from pathlib import Path

import pytest

from hsa_ffi import HsaError
from hsa_ffi import constants as C
from tests.softhsa.kernels import (
    KERNELS_DIR,
    Loader,
    compile_kernel,
    readobj_load_extent,
    readobj_metadata,
    readobj_symbol_bytes,
)
from tests.softhsa.session import private_softhsa

PROBE = KERNELS_DIR / "probe.cl"
# GPU 0 is a gfx942 (MI300X-like: sramecc on, xnack off), GPU 1 a gfx1100.
CONFIG = {
    "agents": [
        {"name": "gfx942", "isa": "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "wavefront_size": 64},
        {"name": "gfx1100", "isa": "amdgcn-amd-amdhsa--gfx1100", "wavefront_size": 32},
    ],
}

# Symbol attribute (HSA_EXECUTABLE_SYMBOL_INFO_*) -> metadata key, value type.
METADATA_FIELDS = [
    ("KERNEL_KERNARG_SEGMENT_SIZE", ".kernarg_segment_size", "uint32_t"),
    ("KERNEL_KERNARG_SEGMENT_ALIGNMENT", ".kernarg_segment_align", "uint32_t"),
    ("KERNEL_GROUP_SEGMENT_SIZE", ".group_segment_fixed_size", "uint32_t"),
    ("KERNEL_PRIVATE_SEGMENT_SIZE", ".private_segment_fixed_size", "uint32_t"),
    ("KERNEL_DYNAMIC_CALLSTACK", ".uses_dynamic_stack", "bool"),
]


@pytest.fixture(scope="module")
def hsa_session(softhsa_lib, tmp_path_factory):
    """(Loader, dispatch log path) for CONFIG, initialized for the whole module."""
    log = tmp_path_factory.mktemp("softhsa-loader") / "dispatches.jsonl"
    with private_softhsa(softhsa_lib, tmp_path_factory).running({**CONFIG, "log": str(log)}) as session:
        yield Loader(session), log


@pytest.fixture
def hsa(hsa_session) -> Loader:
    return hsa_session[0]


@pytest.fixture(scope="module")
def code_objects(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("probe-kernels")
    targets = ["gfx942", "gfx1100", "gfx942:xnack+", "gfx942:sramecc+:xnack-", "gfx11-generic",
               "gfx9-generic"]
    return {target: compile_kernel(PROBE, target, out) for target in targets}


def hsa_status(error: pytest.ExceptionInfo) -> int:
    return error.value.hsa_status


@pytest.mark.parametrize("target,gpu", [("gfx942", 0), ("gfx1100", 1)])
def test_symbol_info_matches_llvm_readobj(hsa, code_objects, target, gpu):
    path = code_objects[target]
    agent = hsa.gpus()[gpu]
    executable = hsa.load(path.read_bytes(), agent)
    kernels = readobj_metadata(path)["amdhsa.kernels"]
    assert {k[".name"] for k in kernels} == {"probe", "tiles"}
    for meta in kernels:
        symbol = hsa.symbol(executable, meta[".symbol"], agent)
        info = partial(hsa.symbol_info, symbol)
        assert info(C.HSA_EXECUTABLE_SYMBOL_INFO_TYPE, "uint32_t") == C.HSA_SYMBOL_KIND_KERNEL
        name_length = info(C.HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, "uint32_t")
        name = hsa.ffi.new("char[]", name_length + 1)
        hsa.hsa.call("hsa_executable_symbol_get_info", symbol, C.HSA_EXECUTABLE_SYMBOL_INFO_NAME, name)
        assert hsa.ffi.string(name) == meta[".symbol"].encode()
        for attribute, key, ctype in METADATA_FIELDS:
            assert info(getattr(C, f"HSA_EXECUTABLE_SYMBOL_INFO_{attribute}"), ctype) == meta[key], attribute
        assert info(C.HSA_EXECUTABLE_SYMBOL_INFO_AGENT, "hsa_agent_t").handle == agent.handle
        # KERNEL_OBJECT is the loaded kernel descriptor: the 64 bytes at the .kd symbol in the file.
        kernel_object = info(C.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, "uint64_t")
        _, descriptor = readobj_symbol_bytes(path, meta[".symbol"], 64)
        assert bytes(hsa.ffi.buffer(hsa.ffi.cast("void*", kernel_object), 64)) == descriptor
    tiles = next(k for k in kernels if k[".name"] == "tiles")
    assert tiles[".group_segment_fixed_size"] > 0 and tiles[".private_segment_fixed_size"] > 0
    hsa.hsa.call("hsa_executable_destroy", executable)


def test_global_variables_are_loaded_and_relocated(hsa, tmp_path):
    path = compile_kernel(KERNELS_DIR / "globals.cl", "gfx942", tmp_path, "-fvisibility=protected")
    gfx942 = hsa.gpus()[0]
    executable = hsa.load(path.read_bytes(), gfx942)
    address = {}
    for name in ("probe_counter", "probe_pointer"):
        symbol = hsa.symbol(executable, name, gfx942)
        kind = hsa.symbol_info(symbol, C.HSA_EXECUTABLE_SYMBOL_INFO_TYPE, "uint32_t")
        assert kind == C.HSA_SYMBOL_KIND_VARIABLE
        address[name] = hsa.symbol_info(symbol, C.HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, "uint64_t")
    counter = hsa.ffi.cast("uint32_t*", address["probe_counter"])
    pointer = hsa.ffi.cast("uint64_t*", address["probe_pointer"])
    assert counter[0] == 7  # the initialized data segment was copied
    assert pointer[0] == address["probe_counter"]  # R_AMDGPU_RELATIVE64 applied for the load address
    hsa.hsa.call("hsa_executable_destroy", executable)


def test_symbol_lookup_is_per_agent_and_by_exact_name(hsa, code_objects):
    gfx942, gfx1100 = hsa.gpus()
    executable = hsa.load(code_objects["gfx942"].read_bytes(), gfx942)
    for name, agent in [("probe", gfx942), ("missing.kd", gfx942), ("probe.kd", gfx1100)]:
        with pytest.raises(HsaError) as error:
            hsa.symbol(executable, name, agent)
        assert hsa_status(error) == C.HSA_STATUS_ERROR_INVALID_SYMBOL_NAME
    hsa.hsa.call("hsa_executable_destroy", executable)


@pytest.mark.parametrize("target,gpu,loads", [
    ("gfx1100", 0, False),               # another processor
    ("gfx942", 1, False),
    ("gfx942:xnack+", 0, False),         # the agent has xnack off
    ("gfx942:sramecc+:xnack-", 0, True),  # exactly the agent's features
    ("gfx942", 0, True),                 # clang's default is "any" for both features
    ("gfx11-generic", 1, True),          # gfx11-generic covers gfx1100 (reference §7)
    ("gfx11-generic", 0, False),
    ("gfx9-generic", 0, False),          # gfx942 belongs to gfx9-4-generic, not gfx9-generic
])
def test_load_checks_target_against_agent_isa(hsa, code_objects, target, gpu, loads):
    agent = hsa.gpus()[gpu]
    data = code_objects[target].read_bytes()
    if loads:
        hsa.hsa.call("hsa_executable_destroy", hsa.load(data, agent))
        return
    with pytest.raises(HsaError) as error:
        hsa.load(data, agent)
    assert hsa_status(error) == C.HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS
    assert error.value.function == "hsa_executable_load_agent_code_object"


def test_unknown_processor_is_an_invalid_isa_name(hsa, code_objects):
    data = code_objects["gfx942"].read_bytes()
    e_flags = int.from_bytes(data[48:52], "little")
    reserved = (e_flags & ~0xFF) | 0x27  # EF_AMDGPU_MACH_AMDGCN_RESERVED_0X27 in LLVM's ELF.h
    with pytest.raises(HsaError) as error:
        hsa.load(data[:48] + reserved.to_bytes(4, "little") + data[52:], hsa.gpus()[0])
    assert hsa_status(error) == C.HSA_STATUS_ERROR_INVALID_ISA_NAME


def test_code_object_on_cpu_agent_is_incompatible(hsa, code_objects):
    cpu = hsa.cpus()[0]
    with pytest.raises(HsaError) as error:
        hsa.load(code_objects["gfx942"].read_bytes(), cpu)
    assert hsa_status(error) == C.HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS


def mutated(data: bytes, offset: int, value: int) -> bytes:
    return data[:offset] + bytes([value]) + data[offset + 1:]


def test_reader_rejects_what_is_not_an_amdgpu_code_object(hsa, code_objects):
    data = code_objects["gfx942"].read_bytes()
    bad = {
        "truncated header": data[:40],
        "not ELF": b"\x7fELG" + data[4:],
        "32-bit class": mutated(data, 4, 1),
        "big-endian": mutated(data, 5, 2),
        "EI_OSABI not AMDGPU_HSA": mutated(data, 7, 0),
        "code object v3 (ABI version 1)": mutated(data, 8, 1),
        "e_machine x86-64": data[:18] + (62).to_bytes(2, "little") + data[20:],
        "host ELF": Path(sys.executable).resolve().read_bytes()[:65536],
    }
    reader = hsa.ffi.new("hsa_code_object_reader_t*")
    for what, blob in bad.items():
        with pytest.raises(HsaError) as error:
            hsa.hsa.call("hsa_code_object_reader_create_from_memory", blob, len(blob), reader)
        assert hsa_status(error) == C.HSA_STATUS_ERROR_INVALID_CODE_OBJECT, what


def test_frozen_executable_refuses_more_code(hsa, code_objects):
    gfx942 = hsa.gpus()[0]
    data = code_objects["gfx942"].read_bytes()
    executable = hsa.load(data, gfx942)
    reader = hsa.ffi.new("hsa_code_object_reader_t*")
    hsa.hsa.call("hsa_code_object_reader_create_from_memory", data, len(data), reader)
    with pytest.raises(HsaError) as error:
        hsa.hsa.call("hsa_executable_load_agent_code_object", executable, gfx942, reader[0],
                     hsa.ffi.NULL, hsa.ffi.NULL)
    assert hsa_status(error) == C.HSA_STATUS_ERROR_FROZEN_EXECUTABLE
    result = hsa.ffi.new("uint32_t*", 1)
    hsa.hsa.call("hsa_executable_validate_alt", executable, hsa.ffi.NULL, result)
    assert result[0] == 0
    hsa.hsa.call("hsa_code_object_reader_destroy", reader[0])
    hsa.hsa.call("hsa_executable_destroy", executable)
    with pytest.raises(HsaError) as error:
        hsa.hsa.call("hsa_executable_destroy", executable)
    assert hsa_status(error) == C.HSA_STATUS_ERROR_INVALID_EXECUTABLE


def loader_table(hsa):
    table = hsa.ffi.new("hsa_ven_amd_loader_1_03_pfn_t*")
    hsa.hsa.call("hsa_system_get_major_extension_table", C.HSA_EXTENSION_AMD_LOADER, 1,
                 hsa.ffi.sizeof(table[0]), table)
    return table


def test_loader_extension_reports_the_load(hsa, code_objects):
    path = code_objects["gfx942"]
    data = path.read_bytes()
    gfx942 = hsa.gpus()[0]
    executable = hsa.load(data, gfx942)
    table = loader_table(hsa)
    ffi = hsa.ffi

    loaded = []

    @ffi.callback("hsa_status_t(hsa_executable_t, hsa_loaded_code_object_t, void*)")
    def visit(_executable, code_object, _data):
        loaded.append(code_object.handle)
        return C.HSA_STATUS_SUCCESS

    assert table.hsa_ven_amd_loader_executable_iterate_loaded_code_objects(executable, visit, ffi.NULL) == 0
    assert len(loaded) == 1
    code_object = ffi.new("hsa_loaded_code_object_t*", {"handle": loaded[0]})[0]

    def info(attribute, ctype):
        value = ffi.new(f"{ctype}*")
        assert table.hsa_ven_amd_loader_loaded_code_object_get_info(code_object, attribute, value) == 0
        return value[0]

    prefix = "HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_"
    base = info(getattr(C, prefix + "LOAD_BASE"), "uint64_t")
    low, high = readobj_load_extent(path)
    assert base % 4096 == 0
    assert info(getattr(C, prefix + "LOAD_SIZE"), "uint64_t") == high - low
    assert info(getattr(C, prefix + "LOAD_DELTA"), "int64_t") == base - low
    assert info(getattr(C, prefix + "AGENT"), "hsa_agent_t").handle == gfx942.handle
    assert info(getattr(C, prefix + "EXECUTABLE"), "hsa_executable_t").handle == executable.handle
    assert info(getattr(C, prefix + "KIND"), "uint32_t") == C.HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT
    assert (info(getattr(C, prefix + "CODE_OBJECT_STORAGE_TYPE"), "uint32_t")
            == C.HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY)
    storage = info(getattr(C, prefix + "CODE_OBJECT_STORAGE_MEMORY_BASE"), "uint64_t")
    size = info(getattr(C, prefix + "CODE_OBJECT_STORAGE_MEMORY_SIZE"), "uint64_t")
    assert bytes(ffi.buffer(ffi.cast("void*", storage), size)) == data  # the reader is already gone
    uri = ffi.new("char[]", info(getattr(C, prefix + "URI_LENGTH"), "uint32_t") + 1)
    get_info = table.hsa_ven_amd_loader_loaded_code_object_get_info
    assert get_info(code_object, getattr(C, prefix + "URI"), uri) == 0
    assert ffi.string(uri).decode() == f"memory://{os.getpid()}#offset=0x{storage:x}&size={size}"

    # The kernel descriptor lies at LOAD_BASE + (its vaddr - lowest vaddr); addresses map back.
    kernel = hsa.kernel(executable, "probe", gfx942)
    vaddr, _ = readobj_symbol_bytes(path, "probe.kd", 64)
    assert kernel.kernel_object == base + vaddr - low
    found = ffi.new("hsa_executable_t*")
    assert table.hsa_ven_amd_loader_query_executable(ffi.cast("void*", kernel.kernel_object), found) == 0
    assert found.handle == executable.handle
    host = ffi.new("void**")
    assert table.hsa_ven_amd_loader_query_host_address(ffi.cast("void*", kernel.kernel_object), host) == 0
    assert int(ffi.cast("uintptr_t", host[0])) == kernel.kernel_object
    outside = ffi.cast("void*", base + high - low)
    assert table.hsa_ven_amd_loader_query_executable(outside, found) == C.HSA_STATUS_ERROR_INVALID_ARGUMENT

    count = ffi.new("size_t*", 0)
    assert table.hsa_ven_amd_loader_query_segment_descriptors(ffi.NULL, count) == 0
    descriptors = ffi.new("hsa_ven_amd_loader_segment_descriptor_t[]", count[0])
    assert table.hsa_ven_amd_loader_query_segment_descriptors(descriptors, count) == 0
    ours = [d for d in descriptors if d.executable.handle == executable.handle]
    assert [(int(ffi.cast("uintptr_t", d.segment_base)), d.segment_size, d.agent.handle) for d in ours] == [
        (base, high - low, gfx942.handle)]

    executables = []

    @ffi.callback("hsa_status_t(hsa_executable_t, void*)")
    def each(executable_, _data):
        executables.append(executable_.handle)
        return C.HSA_STATUS_SUCCESS

    assert table.hsa_ven_amd_loader_iterate_executables(each, ffi.NULL) == 0
    assert executable.handle in executables
    hsa.hsa.call("hsa_executable_destroy", executable)


def test_loader_extension_reads_code_objects_from_files(hsa, code_objects):
    data = code_objects["gfx942"].read_bytes()
    table = loader_table(hsa)
    reader = hsa.ffi.new("hsa_code_object_reader_t*")
    padded = code_objects["gfx942"].with_suffix(".padded")
    padded.write_bytes(b"\0" * 100 + data + b"\0" * 7)
    with padded.open("rb") as file:
        create = table.hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size
        assert create(file.fileno(), 100, len(data), reader) == 0
        hsa.hsa.call("hsa_code_object_reader_destroy", reader[0])
        assert create(file.fileno(), 99, len(data), reader) == C.HSA_STATUS_ERROR_INVALID_CODE_OBJECT


def test_dispatch_of_a_kernel_is_logged_as_one_json_line(hsa_session, code_objects):
    hsa, log = hsa_session
    gfx1100 = hsa.gpus()[1]
    cpu = hsa.cpus()[0]
    executable = hsa.load(code_objects["gfx1100"].read_bytes(), gfx1100)
    kernel = hsa.kernel(executable, "tiles", gfx1100)
    kernargs = hsa.allocate(hsa.pool(cpu, C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT), 64)
    payload = (0x1122334455667788).to_bytes(8, "little") + (77).to_bytes(4, "little")
    hsa.ffi.memmove(kernargs, payload, len(payload))
    before = log.read_text().splitlines() if log.exists() else []
    queue = hsa.queue(gfx1100)
    assert hsa.dispatch(queue, kernel.kernel_object, (256, 2, 1), (64, 1, 1), kernargs,
                        group=kernel.group_size + 512, private=kernel.private_size)
    lines = log.read_text().splitlines()[len(before):]
    kernels = readobj_metadata(code_objects["gfx1100"])["amdhsa.kernels"]
    meta = next(k for k in kernels if k[".name"] == "tiles")
    assert [json.loads(line) for line in lines] == [{
        "agent": 1, "kernel": "tiles", "grid": [256, 2, 1], "workgroup": [64, 1, 1],
        "kernarg_address": int(hsa.ffi.cast("uintptr_t", kernargs)),
        "kernarg": payload.hex(), "kernarg_segment_size": meta[".kernarg_segment_size"],
        "group_segment_size": meta[".group_segment_fixed_size"],
        "private_segment_size": meta[".private_segment_fixed_size"], "dynamic_group_segment_size": 512,
    }]
    hsa.hsa.call("hsa_queue_destroy", queue)
    hsa.hsa.call("hsa_executable_destroy", executable)


@pytest.mark.parametrize("fault", ["unknown kernel_object", "kernargs outside allocations",
                                   "kernel loaded for another agent"])
def test_bad_dispatch_puts_the_queue_in_error(hsa, code_objects, fault):
    gfx942, gfx1100 = hsa.gpus()
    executable = hsa.load(code_objects["gfx942"].read_bytes(), gfx942)
    kernel_object = hsa.kernel(executable, "probe", gfx942).kernel_object
    kernargs = hsa.allocate(hsa.pool(hsa.cpus()[0], C.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT), 64)
    agent = gfx942
    if fault == "unknown kernel_object":
        kernel_object = 0x1000
    elif fault == "kernargs outside allocations":
        kernargs = hsa.ffi.new("uint8_t[64]")  # host memory softhsa never handed out
    else:
        agent = gfx1100
    errors = []
    queue = hsa.queue(agent, on_error=errors.append)
    assert not hsa.dispatch(queue, kernel_object, (1, 1, 1), (1, 1, 1), kernargs, timeout_ns=200_000_000)
    assert errors == [C.HSA_STATUS_ERROR_EXCEPTION]
    hsa.hsa.call("hsa_executable_destroy", executable)


FUZZ_SCRIPT = textwrap.dedent("""
    import json, random, sys
    from pathlib import Path
    from tests.softhsa.session import SoftHsa
    library, private, code_object, config = sys.argv[1:]
    data = Path(code_object).read_bytes()
    rng = random.Random(1234)
    variants = [data[:n] for n in range(0, len(data), 7)]
    for _ in range(1500):
        blob = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            blob[rng.randrange(len(blob))] = rng.randrange(256)
        variants.append(bytes(blob))
    loaded = 0
    with SoftHsa(Path(library), Path(private)).running(json.loads(config)) as hsa:
        ffi, lib, agent = hsa.ffi, hsa.lib, hsa.gpus()[0]
        reader, exe = ffi.new("hsa_code_object_reader_t*"), ffi.new("hsa_executable_t*")
        symbol, value = ffi.new("hsa_executable_symbol_t*"), ffi.new("uint64_t*")
        for blob in variants:
            if lib.hsa_code_object_reader_create_from_memory(blob, max(len(blob), 1), reader):
                continue
            hsa.hsa.call("hsa_executable_create_alt", 1, 0, ffi.NULL, exe)
            if lib.hsa_executable_load_agent_code_object(exe[0], agent, reader[0], ffi.NULL, ffi.NULL) == 0:
                loaded += 1
                if lib.hsa_executable_get_symbol_by_name(exe[0], b"probe.kd", ffi.new("hsa_agent_t*", agent),
                                                         symbol) == 0:
                    hsa.hsa.call("hsa_executable_symbol_get_info", symbol[0], 22, value)  # KERNEL_OBJECT
            hsa.hsa.call("hsa_executable_destroy", exe[0])
            hsa.hsa.call("hsa_code_object_reader_destroy", reader[0])
    print(len(variants), loaded)
""")


def test_corrupt_code_objects_fail_cleanly(softhsa_lib, code_objects, tmp_path):
    """Truncations and random byte flips of a real code object: statuses, never a crash.

    Runs in a child process so a crash fails this test instead of the whole session."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    result = subprocess.run([sys.executable, "-c", FUZZ_SCRIPT, str(softhsa_lib), str(tmp_path),
                             str(code_objects["gfx942"]), json.dumps(CONFIG)],
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    variants, loaded = map(int, result.stdout.split())
    assert variants > 1500 and 0 < loaded < variants

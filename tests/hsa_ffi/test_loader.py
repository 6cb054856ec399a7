"""`hsa_ffi.load`: IREE's search order and messages, the status checker, and the real Debian libhsa.

Truth sources: IREE `util/libhsa.c` search order and mapping as reference §2.4/§3 state them; the
dlerror texts of glibc; ROCm 5.2.3's own behaviour with no /dev/kfd (reference §0: hsa_init returns
0x1008, later calls 0x100B). Libraries under test are built here with gcc: a stub exporting every
`CDEF_CORE` function (so status handling runs in-process), and ones missing symbols. The real ROCr is
exercised in a subprocess so its state never meets other tests' libraries.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hsa_ffi
from hsa_ffi import constants as C
from hsa_ffi.cdef import CORE_FUNCTIONS, NEW_FUNCTIONS

SYSTEM_NAMES = ["libhsa-runtime64.so.1", "libhsa-runtime64.so"]
SKIP = {"AMDGPU_LIBHSA_SKIP_SYSTEM": "1"}
DEBIAN_LIBHSA = Path("/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1")
NOT_FOUND_PREFIX = (
    "HSA/ROCR-Runtime library not found; ensure it is installed and on a valid search path "
    "(or specified with IREE_HAL_AMDGPU_LIBHSA_PATH or --amdgpu_libhsa_search_path): ")

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to build stub libraries")

# The stub: hsa_system_get_info returns its attribute argument as the status (lets a test feed any
# code through Libhsa.call); hsa_status_string knows one code, in ROCr's "NAME: text" form.
STUB_SPECIAL = r"""
int hsa_status_string(int status, const char** text) {
  if (status == 0x1004) { *text = "HSA_STATUS_ERROR_INVALID_AGENT: Stub says the agent is bad."; return 0; }
  return 0x1001;
}
int hsa_system_get_info(int attribute, void* value) { (void)value; return attribute; }
"""


def _build_library(directory: Path, file_name: str, source: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    c_file = directory / (file_name + ".c")
    c_file.write_text(source)
    out = directory / file_name
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(c_file)], check=True)
    return out


def _stub_source(functions) -> str:
    special = {"hsa_status_string", "hsa_system_get_info"}
    plain = "".join(f"int {name}(void) {{ return 0; }}\n" for name in functions if name not in special)
    return plain + (STUB_SPECIAL if special <= set(functions) else "")


@pytest.fixture(scope="module")
def stub_dir(tmp_path_factory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("needs gcc to build the stub library")
    directory = tmp_path_factory.mktemp("stub")
    _build_library(directory, "libhsa-runtime64.so", _stub_source(CORE_FUNCTIONS))
    return directory


@pytest.fixture(scope="module")
def stub(stub_dir) -> hsa_ffi.Libhsa:
    return hsa_ffi.load([str(stub_dir)], environ=SKIP)


# ---- candidate order -------------------------------------------------------------------------------

def test_candidates_follow_iree_order():
    env = {"IREE_HAL_AMDGPU_LIBHSA_PATH": "/env/dir"}
    assert hsa_ffi.candidates(["/a", "/b/x.so", "/c/libhsa-runtime64.so.1"], env) == [
        "/a/libhsa-runtime64.so.1", "/a/libhsa-runtime64.so",
        "/b/x.so",
        "/c/libhsa-runtime64.so.1/libhsa-runtime64.so.1", "/c/libhsa-runtime64.so.1/libhsa-runtime64.so",
        "/env/dir/libhsa-runtime64.so.1", "/env/dir/libhsa-runtime64.so",
        *SYSTEM_NAMES,
    ]


@pytest.mark.parametrize("entry", ["/x/hsa-runtime64.dll", "/x/libhsa.dylib", "/x/libhsa.sos", "rel/l.so"])
def test_file_extensions_are_files(entry):
    assert hsa_ffi.candidates([entry], {}) == [entry, *SYSTEM_NAMES]


def test_empty_environment_variable_is_ignored_and_skip_hook_drops_system_names():
    assert hsa_ffi.candidates([], {"IREE_HAL_AMDGPU_LIBHSA_PATH": ""}) == SYSTEM_NAMES
    assert hsa_ffi.candidates([], SKIP) == []
    assert hsa_ffi.candidates([""], SKIP) == []
    assert hsa_ffi.candidates([], {"AMDGPU_LIBHSA_SKIP_SYSTEM": "0"}) == SYSTEM_NAMES


def test_environment_defaults_to_os_environ(monkeypatch):
    monkeypatch.setenv("IREE_HAL_AMDGPU_LIBHSA_PATH", "/from/env.so")
    monkeypatch.setenv("AMDGPU_LIBHSA_SKIP_SYSTEM", "1")
    assert hsa_ffi.candidates(["/p.so"]) == ["/p.so", "/from/env.so"]


# ---- not found ----------------------------------------------------------------------------------

def test_nothing_found_lists_every_attempt_on_one_line(tmp_path):
    so1_file = tmp_path / "libhsa-runtime64.so.1"
    so1_file.write_bytes(b"not an ELF")
    env = {**SKIP, "IREE_HAL_AMDGPU_LIBHSA_PATH": str(tmp_path / "envdir")}
    with pytest.raises(hsa_ffi.LibhsaNotFound) as info:
        hsa_ffi.load([str(tmp_path / "missing"), str(tmp_path / "x.so"), str(so1_file)], environ=env)
    error = info.value
    assert error.status == "NOT_FOUND" and isinstance(error, hsa_ffi.HsaError)
    line = error.one_line()
    assert "\n" not in line
    no_such = "cannot open shared object file: No such file or directory"
    not_dir = "cannot open shared object file: Not a directory"
    assert line == "NOT_FOUND; " + NOT_FOUND_PREFIX + "; ".join([
        f"tried {tmp_path}/missing/libhsa-runtime64.so.1 ({no_such})",
        f"tried {tmp_path}/missing/libhsa-runtime64.so ({no_such})",
        f"tried {tmp_path}/x.so ({no_such})",
        f"tried {so1_file}/libhsa-runtime64.so.1 ({not_dir})",
        f"tried {so1_file}/libhsa-runtime64.so ({not_dir})",
        f"tried {tmp_path}/envdir/libhsa-runtime64.so.1 ({no_such})",
        f"tried {tmp_path}/envdir/libhsa-runtime64.so ({no_such})",
        "tried libhsa-runtime64.so.1 (skipped: AMDGPU_LIBHSA_SKIP_SYSTEM=1)",
        "tried libhsa-runtime64.so (skipped: AMDGPU_LIBHSA_SKIP_SYSTEM=1)",
    ])


def test_not_an_elf_reports_the_loader_reason(tmp_path):
    bogus = tmp_path / "libhsa-runtime64.so"
    bogus.write_bytes(b"garbage " * 16)
    reason = r"tried .*/libhsa-runtime64.so \([^)]*invalid ELF header\)"
    with pytest.raises(hsa_ffi.LibhsaNotFound, match=reason):
        hsa_ffi.load([str(tmp_path)], environ=SKIP)


# ---- found ----------------------------------------------------------------------------------------

def test_explicit_directory_wins_over_environment(stub_dir, tmp_path):
    env = {**SKIP, "IREE_HAL_AMDGPU_LIBHSA_PATH": str(tmp_path)}
    lib = hsa_ffi.load([str(stub_dir)], environ=env)
    assert lib.path == f"{stub_dir}/libhsa-runtime64.so"
    assert lib.tried == [(f"{stub_dir}/libhsa-runtime64.so.1",
                          "cannot open shared object file: No such file or directory")]


def test_explicit_file_and_environment_variable(stub_dir, tmp_path):
    renamed = tmp_path / "custom-hsa.so"
    renamed.symlink_to(stub_dir / "libhsa-runtime64.so")
    assert hsa_ffi.load([str(renamed)], environ=SKIP).path == str(renamed)
    env = {**SKIP, "IREE_HAL_AMDGPU_LIBHSA_PATH": str(stub_dir)}
    lib = hsa_ffi.load([str(tmp_path / "nowhere")], environ=env)
    assert lib.path == f"{stub_dir}/libhsa-runtime64.so"
    assert [c for c, _ in lib.tried] == [f"{tmp_path}/nowhere/libhsa-runtime64.so.1",
                                         f"{tmp_path}/nowhere/libhsa-runtime64.so",
                                         f"{stub_dir}/libhsa-runtime64.so.1"]


@needs_gcc
def test_library_without_hsa_init(tmp_path):
    path = _build_library(tmp_path, "libhsa-runtime64.so", "int not_hsa(void) { return 0; }\n")
    with pytest.raises(hsa_ffi.HsaError) as info:
        hsa_ffi.load([str(tmp_path)], environ=SKIP)
    assert info.value.status == "NOT_FOUND"
    assert str(info.value) == f"symbol 'hsa_init' not found in library {path}"
    assert not isinstance(info.value, hsa_ffi.LibhsaNotFound)


@needs_gcc
def test_library_missing_a_later_core_symbol(tmp_path):
    functions = [name for name in CORE_FUNCTIONS if name != "hsa_queue_create"]
    path = _build_library(tmp_path, "libhsa-runtime64.so", _stub_source(functions))
    with pytest.raises(hsa_ffi.HsaError, match=f"^symbol 'hsa_queue_create' not found in library {path}$"):
        hsa_ffi.load([str(tmp_path)], environ=SKIP)


def test_new_functions_are_the_reference_list():
    # Reference §2.1, "Missing in 5.2.3 [new]".
    assert set(NEW_FUNCTIONS) == {
        "hsa_amd_portable_export_dmabuf", "hsa_amd_portable_close_dmabuf",
        "hsa_amd_vmem_address_reserve_align", "hsa_amd_vmem_address_free", "hsa_amd_vmem_set_access",
        "hsa_amd_vmem_handle_create", "hsa_amd_vmem_handle_release", "hsa_amd_vmem_map",
        "hsa_amd_vmem_unmap", "hsa_amd_signal_wait_all", "hsa_amd_queue_get_info"}
    assert not set(NEW_FUNCTIONS) & set(CORE_FUNCTIONS)


def test_new_functions_are_optional(stub):
    assert stub.has("hsa_amd_signal_create")
    assert not stub.has("hsa_amd_vmem_map") and not stub.has("hsa_amd_queue_get_info")


# ---- the checker ------------------------------------------------------------------------------------

def test_success_and_info_break_pass(stub):
    assert stub.call("hsa_system_get_info", C.HSA_STATUS_SUCCESS, stub.ffi.NULL) == 0
    assert stub.call("hsa_system_get_info", C.HSA_STATUS_INFO_BREAK, stub.ffi.NULL) == 1
    assert stub.check("hsa_iterate_agents", C.HSA_STATUS_INFO_BREAK) == 1
    stub.init()


def test_error_uses_our_description_when_the_runtime_has_none(stub):
    with pytest.raises(hsa_ffi.HsaError) as info:
        stub.call("hsa_system_get_info", C.HSA_STATUS_ERROR_NOT_INITIALIZED, stub.ffi.NULL)
    error = info.value
    assert (error.status, error.hsa_status, error.function) == (
        "FAILED_PRECONDITION", 0x100B, "hsa_system_get_info")
    assert str(error).startswith("[hsa_system_get_info] HSA_STATUS_ERROR_NOT_INITIALIZED: ")
    assert len(str(error)) > len("[hsa_system_get_info] HSA_STATUS_ERROR_NOT_INITIALIZED: ") + 10


def test_error_uses_the_runtime_description_without_repeating_the_name(stub):
    with pytest.raises(hsa_ffi.HsaError) as info:
        stub.check("hsa_agent_get_info", C.HSA_STATUS_ERROR_INVALID_AGENT)
    assert info.value.one_line() == (
        "INVALID_ARGUMENT; [hsa_agent_get_info] HSA_STATUS_ERROR_INVALID_AGENT: "
        "Stub says the agent is bad.")


def test_unknown_code(stub):
    with pytest.raises(hsa_ffi.HsaError) as info:
        stub.check("hsa_init", 0x1234)
    assert info.value.status == "UNKNOWN"
    assert str(info.value).startswith("[hsa_init] HSA_STATUS_UNKNOWN(0x1234): ")
    assert hsa_ffi.status_name(0x1234) == "HSA_STATUS_UNKNOWN(0x1234)"


# Reference §2.4, written out code by code (names and values from hsa.h / hsa_ext_amd.h).
EXPECTED_IREE_STATUS = {
    **{code: "INVALID_ARGUMENT" for code in (
        0x1001, 0x1002, 0x1003, 0x1004, 0x1005, 0x1006, 0x1007, 0x1009, 0x1017, 0x1010, 0x1011,
        0x1018, 0x1019, 0x1020, 0x1021, 0x1022, 0x1023, 0x1024, 0x1025)},
    0x100A: "INTERNAL",                                      # RESOURCE_FREE
    0x100D: "INCOMPATIBLE", 0x100F: "INCOMPATIBLE",          # INCOMPATIBLE_ARGUMENTS, INVALID_ISA
    0x1008: "RESOURCE_EXHAUSTED", 0x100C: "RESOURCE_EXHAUSTED",  # OUT_OF_RESOURCES, REFCOUNT_OVERFLOW
    **{code: "FAILED_PRECONDITION" for code in (0x100B, 0x1012, 0x1014, 0x1015)},
    0x100E: "OUT_OF_RANGE",                                  # INVALID_INDEX
    0x1013: "NOT_FOUND",                                     # INVALID_SYMBOL_NAME
    0x1016: "DATA_LOSS", 0x1026: "DATA_LOSS",                # EXCEPTION, FATAL
    0x1000: "UNKNOWN", 0x7777: "UNKNOWN",                    # ERROR, unknown
    # AMD additions: absent from IREE's switch (util/libhsa.c), so its default, UNKNOWN.
    40: "UNKNOWN", 41: "UNKNOWN", 42: "UNKNOWN", 43: "UNKNOWN", 44: "UNKNOWN",
}


@pytest.mark.parametrize("code", sorted(EXPECTED_IREE_STATUS))
def test_status_mapping(stub, code):
    with pytest.raises(hsa_ffi.HsaError) as info:
        stub.check("hsa_fn", code)
    assert info.value.status == EXPECTED_IREE_STATUS[code]
    assert hsa_ffi.iree_status(code) == EXPECTED_IREE_STATUS[code]


def test_every_header_status_has_its_header_name():
    statuses = {name: value for name, value in vars(C).items()
                if name.startswith("HSA_STATUS_") and isinstance(value, int)}
    assert len(statuses) == 40
    for name, value in statuses.items():
        assert hsa_ffi.status_name(value) == name
    assert hsa_ffi.status_name(40) == "HSA_STATUS_ERROR_INVALID_MEMORY_POOL"
    assert hsa_ffi.status_name(41) == "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION"
    assert hsa_ffi.status_name(42) == "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION"


# ---- the real Debian libhsa (ROCm 5.2.3), no GPU ------------------------------------------------------

REAL_LIBHSA_SCRIPT = r"""
import json, hsa_ffi
lib = hsa_ffi.load()
out = {"path": lib.path, "tried": lib.tried}
for step, call in (("init", lib.init),
                   ("info", lambda: lib.call("hsa_system_get_info", 0, lib.ffi.new("uint16_t*")))):
    try:
        call()
        out[step] = None
    except hsa_ffi.HsaError as error:
        out[step] = [error.status, error.hsa_status, error.one_line()]
print(json.dumps(out))
"""


@pytest.mark.skipif(not DEBIAN_LIBHSA.exists(), reason="needs Debian libhsa-runtime64-1 (CI installs it)")
@pytest.mark.skipif(os.path.exists("/dev/kfd"), reason="a GPU driver is present; hsa_init would succeed")
def test_real_libhsa_without_a_gpu():
    env = {k: v for k, v in os.environ.items()
           if k not in ("IREE_HAL_AMDGPU_LIBHSA_PATH", "AMDGPU_LIBHSA_SKIP_SYSTEM", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    result = subprocess.run([sys.executable, "-c", REAL_LIBHSA_SCRIPT], env=env, capture_output=True,
                            text=True, timeout=60, check=True)
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["path"] == "libhsa-runtime64.so.1" and out["tried"] == []
    status, code, line = out["init"]
    assert (status, code) == ("RESOURCE_EXHAUSTED", 0x1008)
    assert line.startswith("RESOURCE_EXHAUSTED; [hsa_init] HSA_STATUS_ERROR_OUT_OF_RESOURCES: ")
    status, code, line = out["info"]
    assert (status, code) == ("FAILED_PRECONDITION", 0x100B)
    assert line.startswith("FAILED_PRECONDITION; [hsa_system_get_info] HSA_STATUS_ERROR_NOT_INITIALIZED: ")

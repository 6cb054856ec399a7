"""`hsa_ffi`'s declarations checked against the real ROCm 5.2.3 headers (Debian libhsa-runtime-dev).

The same `CDEF_CORE` text is compiled in cffi API mode against `<hsa/hsa.h>` and friends, with three
kinds of check, each shown to fail on a deliberately broken declaration:
- signatures: every declared function is assigned to a function pointer of the cdef's type, so any
  parameter or return type that differs from the header is an incompatible-pointer-types error;
- struct layouts: cffi verifies each fully declared struct's size and field offsets against the C
  compiler at load, and field types at compile time; ABI- and API-mode sizes/offsets are compared too;
- enum values: every constant in `hsa_ffi.constants` except the [new] ones (NEW_CONSTANTS) is read
  back from the headers through a `#define NAME ...` declaration and compared.
The enum typedefs (`typedef int x;` in ABI mode) become `typedef int... x;` here, so cffi takes their
real size and signedness from the compiler.
"""

from __future__ import annotations

import importlib
import re
import shutil
import sys
from pathlib import Path

import pytest

cffi = pytest.importorskip("cffi")

from hsa_ffi import constants  # noqa: E402
from hsa_ffi.cdef import CDEF_CORE, CORE_FUNCTIONS  # noqa: E402
from hsa_ffi.loader import ffi as abi_ffi  # noqa: E402

HEADER_DIR = Path("/usr/include/hsa")
HEADERS = ("hsa.h", "hsa_ext_amd.h", "hsa_ven_amd_loader.h", "amd_hsa_queue.h", "amd_hsa_signal.h")
INCLUDES = "".join(f"#include <hsa/{name}>\n" for name in HEADERS)
EXTRA_COMPILE_ARGS = [
    "-Werror=incompatible-pointer-types",
    "-Werror=int-conversion",
    "-Werror=implicit-function-declaration",
]

# C1's function list: the contract with softhsa and the driver (independent of our cdef text).
CONTRACT_FUNCTIONS = """
hsa_init hsa_shut_down hsa_status_string hsa_system_get_info hsa_system_major_extension_supported
hsa_system_get_major_extension_table hsa_iterate_agents hsa_agent_get_info hsa_agent_iterate_isas
hsa_isa_get_info_alt hsa_isa_from_name hsa_agent_iterate_regions hsa_region_get_info
hsa_amd_agent_iterate_memory_pools hsa_amd_memory_pool_get_info hsa_amd_agent_memory_pool_get_info
hsa_amd_memory_pool_allocate hsa_amd_memory_pool_free hsa_amd_agents_allow_access hsa_memory_copy
hsa_amd_pointer_info hsa_signal_create hsa_amd_signal_create hsa_signal_destroy
hsa_signal_load_scacquire hsa_signal_load_relaxed hsa_signal_store_screlease hsa_signal_store_relaxed
hsa_signal_silent_store_relaxed hsa_signal_exchange_scacq_screl hsa_signal_cas_scacq_screl
hsa_signal_add_scacq_screl hsa_signal_add_relaxed hsa_signal_subtract_scacq_screl
hsa_signal_subtract_relaxed hsa_signal_wait_scacquire hsa_signal_wait_relaxed hsa_amd_signal_wait_any
hsa_queue_create hsa_queue_destroy hsa_queue_load_read_index_scacquire
hsa_queue_load_read_index_relaxed hsa_queue_load_write_index_scacquire
hsa_queue_load_write_index_relaxed hsa_queue_store_write_index_relaxed
hsa_queue_store_write_index_screlease hsa_queue_add_write_index_scacq_screl
hsa_queue_add_write_index_relaxed hsa_queue_cas_write_index_scacq_screl
hsa_code_object_reader_create_from_memory hsa_code_object_reader_destroy hsa_executable_create_alt
hsa_executable_load_agent_code_object hsa_executable_freeze hsa_executable_validate_alt
hsa_executable_get_symbol_by_name hsa_executable_symbol_get_info hsa_executable_destroy
hsa_amd_profiling_set_profiler_enabled hsa_amd_profiling_get_dispatch_time
""".split()

# Constants only newer ROCm headers define (reference §2.1); exempt from the header comparison.
NEW_CONSTANTS = {
    "HSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY", "HSA_AMD_AGENT_INFO_NUM_XCC",
    "HSA_AMD_AGENT_INFO_DRIVER_UID", "HSA_AMD_AGENT_INFO_NEAREST_CPU",
    "HSA_AMD_SYSTEM_INFO_DMABUF_SUPPORTED", "HSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED",
    "HSA_AMD_SYSTEM_INFO_XNACK_ENABLED", "HSA_AMD_MEMORY_POOL_STANDARD_FLAG",
    "HSA_AMD_MEMORY_POOL_EXECUTABLE_FLAG", "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_REC_GRANULE",
    "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED", "HSA_EXT_POINTER_TYPE_HSA_VMEM",
    "HSA_ACCESS_PERMISSION_NONE", "MEMORY_TYPE_NONE", "MEMORY_TYPE_PINNED",
    "HSA_AMD_QUEUE_INFO_AGENT", "HSA_AMD_QUEUE_INFO_DOORBELL_ID",
}

# Declared 64-byte aligned in C (AMD_QUEUE_ALIGN / AMD_SIGNAL_ALIGN); cffi's ABI mode has no way to say
# so. We never allocate these from Python (ROCr / softhsa do), so only sizes and offsets must agree.
OVERALIGNED = {"amd_queue_t", "amd_signal_t"}

_INTEGER_TYPEDEF = re.compile(r"^typedef (?:int|u?int\d+_t) (\w+);", re.MULTILINE)
_FUNCTION_DECL = re.compile(r"^([A-Za-z_][\w ]*?[\s*])(hsa_\w+)\((.*?)\);", re.MULTILINE | re.DOTALL)

pytestmark = pytest.mark.skipif(
    not all((HEADER_DIR / name).exists() for name in HEADERS) or shutil.which("gcc") is None,
    reason="needs the ROCm HSA headers (apt install libhsa-runtime-dev) and gcc; CI installs both")


def api_cdef(cdef: str) -> str:
    """The ABI cdef for API mode: integer and enum typedefs opened up (`typedef int... name;`, so
    cffi takes their size and signedness from C), and the
    over-aligned structs marked flexible (`...;`) so cffi takes their alignment from C; their sizes
    and offsets are then compared with the ABI build's by test_struct_layouts_match_the_headers."""
    cdef = _INTEGER_TYPEDEF.sub(r"typedef int... \1;", cdef)
    for name in OVERALIGNED:
        cdef = re.sub(rf"^}} {name};", f"  ...;\n}} {name};", cdef, flags=re.MULTILINE)
    return cdef


def signature_checks(cdef: str) -> str:
    """C that assigns each declared function to a pointer of the cdef's own type."""
    lines = []
    for ret, name, params in _FUNCTION_DECL.findall(cdef):
        params = " ".join(params.split())
        lines.append(f"static {ret.strip()} (*const _sigcheck_{name})({params}) "
                     f"__attribute__((unused)) = &{name};")
    return "\n".join(lines)


def constant_decls(names) -> str:
    return "\n".join(f"#define {name} ..." for name in names)


_builds = 0


def build_api(cdef: str, constant_names, tmp_dir: Path):
    """Compile `cdef` (+ constants) in API mode against the real headers; return the module."""
    global _builds
    _builds += 1
    module_name = f"_hsa_api_check_{_builds}"
    builder = cffi.FFI()
    builder.cdef(api_cdef(cdef) + "\n" + constant_decls(constant_names))
    builder.set_source(module_name, INCLUDES + signature_checks(cdef),
                       libraries=["hsa-runtime64"], extra_compile_args=EXTRA_COMPILE_ARGS)
    builder.compile(tmpdir=str(tmp_dir), verbose=False)
    sys.path.insert(0, str(tmp_dir))
    try:
        return importlib.import_module(module_name)
    finally:
        sys.path.remove(str(tmp_dir))


def header_constants() -> dict[str, int]:
    return {name: value for name, value in vars(constants).items()
            if name.isupper() and isinstance(value, int) and name not in NEW_CONSTANTS}


def struct_types(ffi) -> list[str]:
    typedefs, structs, _ = ffi.list_types()
    return ([name for name in typedefs if ffi.typeof(name).kind == "struct"]
            + [f"struct {tag}" for tag in structs])


def fields(ffi, type_name: str):
    return [(name, field.offset, ffi.sizeof(field.type)) for name, field in ffi.typeof(type_name).fields]


def verify_layouts(api_ffi) -> None:
    """Force cffi's lazy C layout check of every struct (raises on a mismatch)."""
    for name in struct_types(api_ffi):
        api_ffi.sizeof(name)


def constant_mismatches(lib, values: dict[str, int]) -> dict[str, tuple[int, int]]:
    return {name: (value, getattr(lib, name)) for name, value in values.items()
            if getattr(lib, name) != value}


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    return build_api(CDEF_CORE, header_constants(), tmp_path_factory.mktemp("hsa_api"))


def test_core_declares_exactly_the_contract_functions():
    assert sorted(CORE_FUNCTIONS) == sorted(CONTRACT_FUNCTIONS)
    assert sorted(name for _, name, _ in _FUNCTION_DECL.findall(CDEF_CORE)) == sorted(CONTRACT_FUNCTIONS)


def test_new_constants_list_matches_the_package():
    assert constants.NEW_CONSTANTS == NEW_CONSTANTS


def test_struct_layouts_match_the_headers(api):
    verify_layouts(api.ffi)
    for name in struct_types(api.ffi):
        assert abi_ffi.sizeof(name) == api.ffi.sizeof(name), name
        assert fields(abi_ffi, name) == fields(api.ffi, name), name
        if abi_ffi.typeof(name) not in {abi_ffi.typeof(t) for t in OVERALIGNED}:
            assert abi_ffi.alignof(name) == api.ffi.alignof(name), name


def test_contract_offsets(api):
    """The offsets C1 and reference §5 name, read from the compiled headers."""
    f = api.ffi
    assert f.sizeof("amd_queue_t") == 256 and f.alignof("amd_queue_t") == 64
    assert f.offsetof("amd_queue_t", "write_dispatch_id") == 56
    assert f.offsetof("amd_queue_t", "read_dispatch_id") == 128
    assert f.offsetof("amd_queue_t", "queue_properties") == 180
    assert f.sizeof("amd_signal_t") == 64
    assert f.offsetof("amd_signal_t", "value") == 8 and f.offsetof("amd_signal_t", "queue_ptr") == 48
    for packet in ("hsa_kernel_dispatch_packet_t", "hsa_barrier_and_packet_t",
                   "hsa_barrier_or_packet_t", "hsa_amd_barrier_value_packet_t"):
        assert f.sizeof(packet) == 64 and f.offsetof(packet, "completion_signal") == 56
    assert f.offsetof("hsa_kernel_dispatch_packet_t", "kernarg_address") == 40
    assert f.sizeof("hsa_amd_pointer_info_t") == 56
    assert f.sizeof("hsa_ven_amd_loader_1_03_pfn_t") == 56


def test_integer_typedefs_match_the_headers(api):
    names = _INTEGER_TYPEDEF.findall(CDEF_CORE)
    assert "hsa_status_t" in names and "hsa_signal_value_t" in names
    enums = set(re.findall(r"^typedef int (\w+);", CDEF_CORE, flags=re.MULTILINE))
    for name in names:
        assert abi_ffi.sizeof(name) == api.ffi.sizeof(name), name
        if name not in enums:  # gcc gives enums without negative values an unsigned type
            assert (abi_ffi.cast(name, -1) < 0) == (api.ffi.cast(name, -1) < 0), name


def test_constants_match_the_headers(api):
    values = header_constants()
    assert len(values) > 250
    assert constant_mismatches(api.lib, values) == {}


def test_wrong_enum_value_is_caught(api):
    values = header_constants()
    values["HSA_AGENT_INFO_NAME"] = 1
    values["HSA_STATUS_ERROR_OUT_OF_RESOURCES"] = 0x1009
    assert constant_mismatches(api.lib, values) == {
        "HSA_AGENT_INFO_NAME": (1, 0), "HSA_STATUS_ERROR_OUT_OF_RESOURCES": (0x1009, 0x1008)}


def _broken(old: str, new: str) -> str:
    assert CDEF_CORE.count(old) == 1, old
    return CDEF_CORE.replace(old, new)


def test_wrong_parameter_type_fails_to_compile(tmp_path, capfd):
    cdef = _broken("hsa_status_t hsa_memory_copy(void* dst, const void* src, size_t size);",
                   "hsa_status_t hsa_memory_copy(void* dst, const void* src, uint32_t size);")
    with pytest.raises(cffi.VerificationError):
        build_api(cdef, [], tmp_path)
    assert "_sigcheck_hsa_memory_copy" in capfd.readouterr().err


def test_wrong_return_type_fails_to_compile(tmp_path, capfd):
    cdef = _broken("uint32_t hsa_amd_signal_wait_any(", "uint64_t hsa_amd_signal_wait_any(")
    with pytest.raises(cffi.VerificationError):
        build_api(cdef, [], tmp_path)
    assert "_sigcheck_hsa_amd_signal_wait_any" in capfd.readouterr().err


def test_wrong_field_width_is_caught(tmp_path):
    # The last field, widened into the tail padding: size and offsets stay, the field size does not.
    cdef = _broken("  uint32_t global_flags;\n} hsa_amd_pointer_info_t;",
                   "  uint64_t global_flags;\n} hsa_amd_pointer_info_t;")
    module = build_api(cdef, [], tmp_path)
    with pytest.raises(module.ffi.error, match="global_flags"):
        verify_layouts(module.ffi)


def test_wrong_field_pointer_type_fails_to_compile(tmp_path, capfd):
    cdef = _broken("  uint32_t* HDP_MEM_FLUSH_CNTL;", "  uint64_t* HDP_MEM_FLUSH_CNTL;")
    with pytest.raises(cffi.VerificationError):
        build_api(cdef, [], tmp_path)
    assert "HDP_MEM_FLUSH_CNTL" in capfd.readouterr().err


def test_wrong_field_offset_is_caught(tmp_path):
    # Same types, swapped order: only an offset check can see it.
    cdef = _broken("  uint32_t grid_size_x;\n  uint32_t grid_size_y;\n",
                   "  uint32_t grid_size_y;\n  uint32_t grid_size_x;\n")
    module = build_api(cdef, [], tmp_path)
    with pytest.raises(module.ffi.error, match="grid_size"):
        verify_layouts(module.ffi)

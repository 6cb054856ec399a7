import pytest

from amdgpu_cli.hal import HalError, default_registry
from amdgpu_cli.hal.enums import ElementType, NumericalType, make_element_type, format_element_type
from amdgpu_cli.tooling.element_types import ElementType as NamedElementType
from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.hal.registry import DeviceUri, split_uri, split_uri_params

# Expectations copied from IREE runtime/src/iree/base/internal/path_test.cc (URITest.Schema/Path/Params).
URIS = [
    ("", "", "", ""), ("s", "s", "", ""), ("schema", "schema", "", ""), ("schema:", "schema", "", ""),
    ("schema:path", "schema", "path", ""), ("schema:/", "schema", "", ""),
    ("schema://", "schema", "", ""), ("schema:///", "schema", "/", ""),
    ("schema:///path", "schema", "/path", ""), ("schema://path", "schema", "path", ""),
    ("schema://path/", "schema", "path/", ""), ("schema://path/sub", "schema", "path/sub", ""),
    ("schema://path?", "schema", "path", ""), ("schema://path?p", "schema", "path", "p"),
    ("schema://path?params", "schema", "path", "params"),
    ("schema://path?params??", "schema", "path", "params??"),
]


@pytest.mark.parametrize("uri,schema,path,params", URIS)
def test_split_uri_matches_iree(uri, schema, path, params):
    assert split_uri(uri) == (schema, path, params)


# path_test.cc URITest.SplitParams
@pytest.mark.parametrize("text,pairs", [
    ("", []), ("&", []), ("a", [("a", "")]), ("&a", [("a", "")]), ("a&", [("a", "")]),
    ("&a&", [("a", "")]), ("a=", [("a", "")]), ("a=b", [("a", "b")]),
    ("a=b&c", [("a", "b"), ("c", "")]), ("a=b&c=", [("a", "b"), ("c", "")]),
    ("a=b&c=d", [("a", "b"), ("c", "d")]),
    ("a=b&c=d&e&f&g=h", [("a", "b"), ("c", "d"), ("e", ""), ("f", ""), ("g", "h")]),
])
def test_split_params_matches_iree(text, pairs):
    assert split_uri_params(text) == pairs


def test_device_uri_forms():
    assert DeviceUri.parse("amdgpu").path == ""
    assert DeviceUri.parse("amdgpu:1").ordinal == 1
    u = DeviceUri.parse("amdgpu://GPU-abc?queues=2&x")
    assert (u.driver, u.path, u.params, u.ordinal) == ("amdgpu", "GPU-abc", (("queues", "2"), ("x", "")), None)
    assert DeviceUri.parse("amdgpu://0,1").path == "0,1"


def test_registry():
    reg = default_registry()
    assert {"null", "local", "local-sync", "local-task", "amdgpu", "cuda"} <= set(reg.names())
    devs = reg.create_devices(["null", "null://0"])
    assert len(devs) == 2 and devs[0] is not devs[1]
    with pytest.raises(HalError) as e:
        reg.create_device("nosuch")
    assert e.value.status == "NOT_FOUND"
    with pytest.raises(HalError) as e:
        reg.create_device("null:7")
    assert e.value.status == "NOT_FOUND"
    with pytest.raises(HalError) as e:
        reg.create_devices([])
    assert e.value.status == "INVALID_ARGUMENT"


def test_element_types():
    # Values from IREE buffer_view.h / vmfb.md §4.4; strings from hal/string_util_test.cc.
    assert ElementType.INT_32 == 0x10000020 and ElementType.BOOL_8 == 0x13000008
    assert ElementType.FLOAT_32 == 0x21000020 and ElementType.BFLOAT_16 == 0x22000010
    def parse(name):
        return NamedElementType.parse(name).code
    assert parse("i1") == ElementType.BOOL_8
    assert parse("si8") == ElementType.SINT_8
    assert parse("ui16") == ElementType.UINT_16
    assert parse("f8E4M3FN") == ElementType.FLOAT_8_E4M3_FN
    assert parse("x64") == parse("*64") == ElementType.OPAQUE_64
    assert parse("f4") == make_element_type(NumericalType.FLOAT_IEEE, 4)
    for bad in ("", "1", "*1234"):
        with pytest.raises(AmdgpuCliError):
            parse(bad)
    for name in ("i1", "i8", "si8", "ui16", "f32", "f16", "bf16", "f8E5M2", "f8E8M0FNU", "*64", "f4"):
        assert format_element_type(parse(name)) == name

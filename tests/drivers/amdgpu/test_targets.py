"""Target vocabulary and device-library selection against reference §7 (tables typed in here from
the reference, independently of targets.py) and the committed device_binaries/manifest.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amdgpu_cli.drivers.amdgpu import targets
from amdgpu_cli.formats.amdgpu_code_object import parse_code_object
from amdgpu_cli.hal.enums import HalError

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = json.loads((ROOT / "device_binaries" / "manifest.json").read_text())
SHIPPED = sorted(entry["target"] for entry in MANIFEST["code_objects"])


def _r(first: int, last: int) -> list[str]:
    return [f"gfx{n}" for n in range(first, last + 1)]


# Reference §7 "Exact targets | Code object (feature support)".
REF_CODE_OBJECT = {}
for names, code_object, features in [
    (["gfx900", "gfx902", "gfx904", "gfx90c", "gfx909"], "gfx9-generic", {"xnack"}),
    (["gfx906"], "gfx9-generic", {"sramecc", "xnack"}),
    (["gfx908"], "gfx908", {"sramecc", "xnack"}),
    (["gfx90a"], "gfx90a", {"sramecc", "xnack"}),
    (["gfx940", "gfx941", "gfx942", "gfx950"], "gfx9-4-generic", {"sramecc", "xnack"}),
    (_r(1010, 1013), "gfx10-1-generic", {"xnack"}),
    (_r(1030, 1036), "gfx10-3-generic", set()),
    (_r(1100, 1103) + _r(1150, 1153) + _r(1170, 1172), "gfx11-generic", set()),
    (["gfx1200", "gfx1201"], "gfx12-generic", set()),
    (["gfx1250", "gfx1251"], "gfx12-5-generic", set()),
]:
    for name in names:
        REF_CODE_OBJECT[name] = (code_object, frozenset(features))

# Reference §7 "Family or bundle | Expands to".
REF_FAMILIES = {
    "all": sorted(REF_CODE_OBJECT),
    "dcgpu-all": ["gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"],
    "dgpu-all": ["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", *_r(1010, 1013), "gfx1030", "gfx1031",
                 "gfx1032", "gfx1034", "gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201", "gfx1250",
                 "gfx1251"],
    "igpu-all": ["gfx90c", "gfx1033", "gfx1035", "gfx1036", "gfx1103", *_r(1150, 1153)],
    "gfx94X-all": ["gfx940", "gfx941", "gfx942"], "gfx94X-dcgpu": ["gfx940", "gfx941", "gfx942"],
    "gfx950-all": ["gfx950"], "gfx950-dcgpu": ["gfx950"],
    "gfx900-dgpu": ["gfx900"], "gfx906-dgpu": ["gfx906"], "gfx908-dcgpu": ["gfx908"],
    "gfx90a-dcgpu": ["gfx90a"], "gfx90c-igpu": ["gfx90c"],
    "gfx101X-all": _r(1010, 1013), "gfx101X-dgpu": _r(1010, 1013),
    "gfx103X-all": _r(1030, 1036), "gfx103X-dgpu": ["gfx1030", "gfx1031", "gfx1032", "gfx1034"],
    "gfx103X-igpu": ["gfx1033", "gfx1035", "gfx1036"],
    "gfx110X-all": _r(1100, 1103), "gfx110X-dgpu": _r(1100, 1102), "gfx110X-igpu": ["gfx1103"],
    "gfx115X-all": _r(1150, 1153), "gfx115X-igpu": _r(1150, 1153),
    "gfx117X-all": _r(1170, 1172),
    "gfx120X-all": ["gfx1200", "gfx1201"], "gfx125X-all": ["gfx1250", "gfx1251"],
}


def test_tables_match_the_reference():
    assert {k: (co, frozenset(f)) for k, (co, f) in targets.CODE_OBJECT_TARGETS.items()} == REF_CODE_OBJECT
    assert {k: sorted(v) for k, v in targets.FAMILIES.items()} == {k: sorted(v) for k, v in REF_FAMILIES.items()}


@pytest.mark.parametrize("family", sorted(REF_FAMILIES))
def test_family_expands_to_its_members_code_objects(family):
    assert targets.expand_selector(family) == {REF_CODE_OBJECT[t][0] for t in REF_FAMILIES[family]}


def test_selector_forms():
    assert targets.expand_selector("gfx1101") == {"gfx11-generic"}
    assert targets.expand_selector("gfx908") == {"gfx908"}
    assert targets.expand_selector("gfx11-generic") == {"gfx11-generic"}
    assert targets.expand_selector("dcgpu-all") == {"gfx908", "gfx90a", "gfx9-4-generic"}
    assert targets.expand_selector("all") == {co for co, _ in REF_CODE_OBJECT.values()}
    with pytest.raises(HalError) as caught:
        targets.expand_selector("gfx110X")
    assert caught.value.status == "INVALID_ARGUMENT"
    assert "unknown AMDGPU device binary target or family 'gfx110X'" in str(caught.value)


@pytest.mark.parametrize("processor, version", [
    ("gfx942", (9, 4, 2)), ("gfx90a", (9, 0, 10)), ("gfx1100", (11, 0, 0)), ("gfx1201", (12, 0, 1)),
    ("gfx90c", (9, 0, 12)), ("gfx1036", (10, 3, 6)),
    ("gfx11-generic", (11, 0, 0)), ("gfx10-3-generic", (10, 3, 0)), ("gfx9-4-generic", (9, 4, 0)),
])
def test_gfx_version(processor, version):
    assert targets.gfx_version(processor) == version


@pytest.mark.parametrize("bad", ["gfx", "gfx94", "gfx9420", "gfx2100", "sm_90", "gfx9-4-5-generic",
                                 "gfxa-generic", "gfx94g", "gfx٩٤٢"])
def test_gfx_version_rejects(bad):
    with pytest.raises(HalError) as caught:
        targets.gfx_version(bad)
    assert caught.value.status == "INVALID_ARGUMENT"


def test_parse_isa_name():
    t = targets.parse_isa_name("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-")
    assert (t.processor, t.version, t.generic, t.sramecc, t.xnack) == ("gfx942", (9, 4, 2), False, "on", "off")
    assert str(t) == "gfx942:sramecc+:xnack-"
    assert str(targets.parse_isa_name("gfx942:xnack+")) == "gfx942:xnack+"
    t = targets.parse_isa_name("amdgcn-amd-amdhsa--gfx1100")
    assert (t.sramecc, t.xnack, str(t)) == ("unsupported", "unsupported", "gfx1100")
    t = targets.parse_isa_name("amdgcn-amd-amdhsa--gfx90a")
    assert (t.sramecc, t.xnack) == ("any", "any")
    assert targets.parse_isa_name("gfx11-generic").generic
    for bad in ["amdgcn-amd-amdhsa--gfx942:", "gfx942:sramecc", "gfx942:wavefrontsize64+",
                "gfx942:xnack+:xnack-", "amdgcn-amd-amdhsa--", "nvptx--sm_90"]:
        with pytest.raises(HalError):
            targets.parse_isa_name(bad)


@pytest.mark.parametrize("isa, expected", [
    # Reference §7 "Choosing the blob", step 2.
    ("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
     ["gfx942:sramecc+:xnack-", "gfx942", "gfx9-4-generic:sramecc+:xnack-", "gfx9-4-generic"]),
    ("amdgcn-amd-amdhsa--gfx90a:xnack+", ["gfx90a:xnack+", "gfx90a"]),
    ("amdgcn-amd-amdhsa--gfx1100", ["gfx1100", "gfx11-generic"]),
    ("amdgcn-amd-amdhsa--gfx906", ["gfx906", "gfx9-generic"]),
    ("amdgcn-amd-amdhsa--gfx11-generic", ["gfx11-generic"]),
    ("amdgcn-amd-amdhsa--gfx1310", ["gfx1310"]),  # no code-object mapping: only itself
])
def test_candidates(isa, expected):
    assert targets.candidates(isa) == expected


@pytest.mark.parametrize("isa, chosen", [
    ("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "gfx942"),
    ("amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+", "gfx90a"),
    ("amdgcn-amd-amdhsa--gfx1100", "gfx1100"),
    ("amdgcn-amd-amdhsa--gfx1101", "gfx1101"),
    ("amdgcn-amd-amdhsa--gfx1103", "gfx11-generic"),  # no exact object shipped
    ("amdgcn-amd-amdhsa--gfx1152", "gfx11-generic"),
    ("amdgcn-amd-amdhsa--gfx1036", "gfx10-3-generic"),
    ("amdgcn-amd-amdhsa--gfx1030", "gfx1030"),
    ("amdgcn-amd-amdhsa--gfx906:sramecc+:xnack-", "gfx9-generic"),
    ("amdgcn-amd-amdhsa--gfx1013", "gfx10-1-generic"),
])
def test_selection_from_the_shipped_library(isa, chosen):
    generic_first = sorted(SHIPPED, key=lambda t: not t.endswith("-generic"))  # exact must still win
    assert targets.select_code_object([isa], generic_first) == chosen
    files = [targets.device_library_path(t).name for t in SHIPPED]
    assert targets.select_code_object([isa], files) == f"amdgcn-amd-amdhsa--{chosen}.hsaco"


def test_no_fitting_code_object_is_incompatible_and_lists_both_sides():
    with pytest.raises(HalError) as caught:
        targets.select_code_object(["amdgcn-amd-amdhsa--gfx1250"], SHIPPED)
    error = caught.value
    assert error.status == "INCOMPATIBLE"
    assert str(error) == ("no device library binary found that matches one of the supported ISAs; "
                          f"available: [{', '.join(SHIPPED)}], supported by agent: [amdgcn-amd-amdhsa--gfx1250]")
    # gfx94x without an exact object: IREE's gfx9-4-generic is not buildable with clang-19.
    with pytest.raises(HalError, match="supported by agent: \\[amdgcn-amd-amdhsa--gfx950\\]"):
        targets.select_code_object(["amdgcn-amd-amdhsa--gfx950"], SHIPPED)


def test_feature_specific_code_objects():
    available = ["gfx942:sramecc+:xnack-", "gfx1100"]
    assert targets.select_code_object(["gfx942:sramecc+:xnack-"], available) == "gfx942:sramecc+:xnack-"
    with pytest.raises(HalError) as caught:
        targets.select_code_object(["amdgcn-amd-amdhsa--gfx942:sramecc-:xnack-"], available)
    assert caught.value.status == "INCOMPATIBLE"
    # A name continuing with anything but `.` is a different target, not a variant.
    with pytest.raises(HalError):
        targets.select_code_object(["amdgcn-amd-amdhsa--gfx1100"], ["gfx11000", "gfx1100-foo"])


def test_isa_priority_order():
    isas = ["amdgcn-amd-amdhsa--gfx1250", "amdgcn-amd-amdhsa--gfx1201"]
    assert targets.select_code_object(isas, SHIPPED) == "gfx1201"


def test_device_library_paths_are_the_shipped_code_objects():
    assert targets.device_library_targets() == SHIPPED
    for target in SHIPPED:
        path = targets.device_library_path(target)
        assert parse_code_object(path.read_bytes()).target == target

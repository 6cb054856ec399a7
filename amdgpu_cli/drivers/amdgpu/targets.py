"""AMDGPU target vocabulary and device-library code-object selection.

Owns, as data: which code object serves each exact GPU target (`gfx1101` -> `gfx11-generic`) and
which sramecc/xnack features the target has; the TheRock family and bundle selectors
(`gfx110X-all`, `dgpu-all`, `all`). As functions: target-id parsing (`parse_isa_name`), gfx
version decoding, selector expansion to the smallest set of code objects (`expand_selector`), the
candidate list for an agent's ISA (`candidates`) and the choice among the device-library code
objects this checkout ships (`select_code_object`, `device_library_path`).

Matching rules (IREE `util/device_library_target.c`, `util/target_id.c`): candidates go from most
to least specific — the agent's full target id, its processor, the mapped code-object target with
the same features, the mapped processor. A code object named `<name>` (file
`amdgcn-amd-amdhsa--<name>.hsaco`) matches a candidate when `<name>` starts with it and continues
with nothing or `.`. ISAs are tried in the agent's priority order, candidates in order, code
objects in the order given; the first match wins. We ship exact objects for the processors
clang-19 can build (IREE ships gfx9-4-generic for gfx94x, which clang-19 cannot build), so exact
names are found before generic ones.

Tables: reference §7 (IREE `device/binaries/target_map.cmake`, `util/target_id_map.inl`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from amdgpu_cli.formats.amdgpu_code_object import format_target_id
from amdgpu_cli.hal.enums import HalError

ISA_PREFIX = "amdgcn-amd-amdhsa--"
FILE_SUFFIX = ".hsaco"
DEVICE_LIBRARY_DIR = Path(__file__).resolve().parents[3] / "device_binaries"

_SRAMECC, _XNACK = "sramecc", "xnack"
_BOTH = frozenset({_SRAMECC, _XNACK})
_XNACK_ONLY = frozenset({_XNACK})
_NONE: frozenset[str] = frozenset()

# Exact target -> (code-object target, features the target supports).
CODE_OBJECT_TARGETS: dict[str, tuple[str, frozenset[str]]] = {
    **{t: ("gfx9-generic", _XNACK_ONLY) for t in ("gfx900", "gfx902", "gfx904", "gfx90c", "gfx909")},
    "gfx906": ("gfx9-generic", _BOTH),
    "gfx908": ("gfx908", _BOTH),
    "gfx90a": ("gfx90a", _BOTH),
    **{t: ("gfx9-4-generic", _BOTH) for t in ("gfx940", "gfx941", "gfx942", "gfx950")},
    **{t: ("gfx10-1-generic", _XNACK_ONLY) for t in ("gfx1010", "gfx1011", "gfx1012", "gfx1013")},
    **{f"gfx103{i}": ("gfx10-3-generic", _NONE) for i in range(7)},
    **{t: ("gfx11-generic", _NONE) for t in ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150",
                                             "gfx1151", "gfx1152", "gfx1153", "gfx1170", "gfx1171",
                                             "gfx1172")},
    **{t: ("gfx12-generic", _NONE) for t in ("gfx1200", "gfx1201")},
    **{t: ("gfx12-5-generic", _NONE) for t in ("gfx1250", "gfx1251")},
}

EXACT_TARGETS: tuple[str, ...] = tuple(CODE_OBJECT_TARGETS)
CODE_OBJECT_TARGET_NAMES: tuple[str, ...] = tuple(dict.fromkeys(co for co, _ in CODE_OBJECT_TARGETS.values()))


def _gfx(*suffixes: str) -> tuple[str, ...]:
    return tuple(f"gfx{s}" for s in suffixes)


# TheRock family and bundle selectors -> exact targets.
FAMILIES: dict[str, tuple[str, ...]] = {
    "all": EXACT_TARGETS,
    "dcgpu-all": _gfx("908", "90a", "940", "941", "942", "950"),
    "dgpu-all": _gfx("900", "902", "904", "906", "909", "1010", "1011", "1012", "1013", "1030", "1031",
                     "1032", "1034", "1100", "1101", "1102", "1200", "1201", "1250", "1251"),
    "igpu-all": _gfx("90c", "1033", "1035", "1036", "1103", "1150", "1151", "1152", "1153"),
    "gfx900-dgpu": _gfx("900"),
    "gfx906-dgpu": _gfx("906"),
    "gfx908-dcgpu": _gfx("908"),
    "gfx90a-dcgpu": _gfx("90a"),
    "gfx90c-igpu": _gfx("90c"),
    "gfx94X-all": _gfx("940", "941", "942"),
    "gfx94X-dcgpu": _gfx("940", "941", "942"),
    "gfx950-all": _gfx("950"),
    "gfx950-dcgpu": _gfx("950"),
    "gfx101X-all": _gfx("1010", "1011", "1012", "1013"),
    "gfx101X-dgpu": _gfx("1010", "1011", "1012", "1013"),
    "gfx103X-all": _gfx("1030", "1031", "1032", "1033", "1034", "1035", "1036"),
    "gfx103X-dgpu": _gfx("1030", "1031", "1032", "1034"),
    "gfx103X-igpu": _gfx("1033", "1035", "1036"),
    "gfx110X-all": _gfx("1100", "1101", "1102", "1103"),
    "gfx110X-dgpu": _gfx("1100", "1101", "1102"),
    "gfx110X-igpu": _gfx("1103"),
    "gfx115X-all": _gfx("1150", "1151", "1152", "1153"),
    "gfx115X-igpu": _gfx("1150", "1151", "1152", "1153"),
    "gfx117X-all": _gfx("1170", "1171", "1172"),
    "gfx120X-all": _gfx("1200", "1201"),
    "gfx125X-all": _gfx("1250", "1251"),
}


@dataclass(frozen=True)
class TargetId:
    """A processor plus sramecc/xnack states ("on", "off", "any" or "unsupported")."""

    processor: str
    version: tuple[int, int, int]
    generic: bool
    sramecc: str = "any"
    xnack: str = "any"

    def __str__(self) -> str:
        return format_target_id(self.processor, self.sramecc, self.xnack)


def _invalid(message: str) -> HalError:
    return HalError(message, status="INVALID_ARGUMENT")


def _generic_version(body: str) -> tuple[int, int, int] | None:
    """`11` -> (11, 0, 0), `10-3` -> (10, 3, 0): the part between `gfx` and `-generic`."""
    fields = body.split("-")
    if len(fields) > 2 or not all(f.isdigit() and f.isascii() for f in fields):
        return None
    return int(fields[0]), int(fields[1]) if len(fields) == 2 else 0, 0


def _exact_version(body: str) -> tuple[int, int, int] | None:
    """`942` -> (9, 4, 2), `90a` -> (9, 0, 10), `1100` -> (11, 0, 0): the last digit is hex."""
    hexdigits = "0123456789abcdefABCDEF"
    if len(body) == 3 and body[:2].isdigit() and body[2] in hexdigits:
        return int(body[0]), int(body[1]), int(body[2], 16)
    if len(body) == 4 and body[0] == "1" and body[1:3].isdigit() and body[3] in hexdigits:
        return 10 + int(body[1]), int(body[2]), int(body[3], 16)
    return None


def gfx_version(processor: str) -> tuple[int, int, int]:
    """(major, minor, stepping) of an exact (`gfx90a`) or generic (`gfx10-3-generic`) processor."""
    version = None
    if processor.startswith("gfx") and processor.isascii():
        body = processor[3:]
        if body.endswith("-generic"):
            version = _generic_version(body[: -len("-generic")])
        else:
            version = _exact_version(body)
    if version is None:
        raise _invalid(f"unsupported AMDGPU target processor syntax: {processor!r}")
    return version


def parse_isa_name(isa: str) -> TargetId:
    """Parse an HSA ISA name (`amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`) or a bare target id.

    Features the exact processor does not have (per CODE_OBJECT_TARGETS) read as "unsupported"
    rather than "any", so they are left out of the formatted target id.
    """
    value = isa[len(ISA_PREFIX):] if isa.startswith(ISA_PREFIX) else isa
    processor, *features = value.split(":")
    version, generic = gfx_version(processor), processor.endswith("-generic")
    states = {}
    for feature in features:
        name, sign = feature[:-1], feature[-1:]
        if name not in (_SRAMECC, _XNACK) or sign not in ("+", "-"):
            raise _invalid(f"unsupported AMDGPU target feature {feature!r} in {isa!r}")
        if name in states:
            raise _invalid(f"duplicate AMDGPU target feature {name!r} in {isa!r}")
        states[name] = "on" if sign == "+" else "off"
    known = not generic and processor in CODE_OBJECT_TARGETS
    supported = CODE_OBJECT_TARGETS[processor][1] if known else _BOTH
    return TargetId(
        processor, version, generic,
        sramecc=states.get(_SRAMECC, "any" if _SRAMECC in supported else "unsupported"),
        xnack=states.get(_XNACK, "any" if _XNACK in supported else "unsupported"),
    )


def code_object_target(processor: str) -> str:
    """The code-object target that serves an exact processor (itself when the table has none)."""
    return CODE_OBJECT_TARGETS.get(processor, (processor, _NONE))[0]


def expand_selector(name: str) -> set[str]:
    """Code-object targets a build selector needs: a code-object target names itself, an exact
    target its code object, a family or bundle the code objects of all its members."""
    if name in CODE_OBJECT_TARGET_NAMES:
        return {name}
    if name in CODE_OBJECT_TARGETS:
        return {code_object_target(name)}
    if name in FAMILIES:
        return {code_object_target(t) for t in FAMILIES[name]}
    known = sorted({*EXACT_TARGETS, *CODE_OBJECT_TARGET_NAMES, *FAMILIES})
    raise _invalid(f"unknown AMDGPU device binary target or family {name!r}; available: {' '.join(known)}")


def candidates(isa_name: str) -> list[str]:
    """Code-object names to look for, most specific first, without duplicates."""
    agent = parse_isa_name(isa_name)
    names = [str(agent), agent.processor]
    if not agent.generic:
        mapped = code_object_target(agent.processor)
        names += [format_target_id(mapped, agent.sramecc, agent.xnack), mapped]
    return list(dict.fromkeys(names))


def _code_object_name(available: str) -> str:
    """`amdgcn-amd-amdhsa--gfx942.hsaco` -> `gfx942.hsaco`; a bare target name is kept."""
    return available[len(ISA_PREFIX):] if available.startswith(ISA_PREFIX) else available


def _matches(name: str, candidate: str) -> bool:
    return name.startswith(candidate) and (len(name) == len(candidate) or name[len(candidate)] == ".")


def select_code_object(isa_names: list[str], available: list[str]) -> str:
    """The entry of `available` (target names or file names) that best serves the agent.

    `isa_names` are the agent's ISA names in priority order (hsa_agent_iterate_isas). Raises
    HalError INCOMPATIBLE, listing both sides, when nothing fits.
    """
    for isa in isa_names:
        for candidate in candidates(isa):
            for entry in available:
                if _matches(_code_object_name(entry), candidate):
                    return entry
    raise HalError(
        "no device library binary found that matches one of the supported ISAs; "
        f"available: [{', '.join(available)}], supported by agent: [{', '.join(isa_names)}]",
        status="INCOMPATIBLE")


def device_library_path(target: str) -> Path:
    """The shipped code object for a target name (`gfx942`, `gfx11-generic`)."""
    return DEVICE_LIBRARY_DIR / f"{ISA_PREFIX}{target}{FILE_SUFFIX}"


def device_library_targets() -> list[str]:
    """Target names of the code objects shipped in device_binaries/, sorted."""
    return sorted(p.name[len(ISA_PREFIX):-len(FILE_SUFFIX)]
                  for p in DEVICE_LIBRARY_DIR.glob(f"{ISA_PREFIX}*{FILE_SUFFIX}"))

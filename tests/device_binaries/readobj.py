"""What llvm-readobj-19 says about an AMDGPU code object: the independent truth for our tests.

`header(path)` is the ELF header from `--elf-output-style=JSON`; `kernels(path)` is the
NT_AMDGPU_METADATA note as llvm-readobj decodes it (its YAML rendering, read here with a few
line rules so the tests need no YAML package): kernel-level scalars plus each kernel's `.args`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

READOBJ = "llvm-readobj-19"
_SCALAR = re.compile(r"^ {4}\.([\w]+):\s+(\S.*)$")  # `    .key: value` (kernel level)
_ARG_FIELD = re.compile(r"^ {6}[ -] \.([\w]+):\s+(\S.*)$")  # `      - .key: v` / `        .key: v`


def require_readobj() -> str:
    path = shutil.which(READOBJ)
    if path is None:
        pytest.fail(f"{READOBJ} not installed (Debian package llvm-19; .ci/run installs it)")
    return path


def _readobj_json(path: Path, *flags: str) -> dict:
    out = subprocess.run([require_readobj(), *flags, "--elf-output-style=JSON", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)[0]


def header(path: Path) -> dict:
    """{"machine", "osabi", "abi_version", "e_flags", "flag_names"} of the ELF header."""
    h = _readobj_json(path, "--file-headers")["ElfHeader"]
    return {
        "machine": h["Machine"]["Value"],
        "osabi": h["Ident"]["OS/ABI"]["Value"],
        "abi_version": h["Ident"]["ABIVersion"],
        "e_flags": h["Flags"]["Value"],
        "flag_names": {f["Name"] for f in h["Flags"]["Flags"]},
    }


def _value(text: str) -> int | str:
    text = text.strip().strip("'")
    return int(text) if text.isdigit() else text


def metadata_text(path: Path) -> str:
    notes = _readobj_json(path, "--notes")["NoteSections"]
    texts = [n["AMDGPU Metadata"] for s in notes for n in s["NoteSection"]["Notes"] if "AMDGPU Metadata" in n]
    assert len(texts) == 1, f"{path.name}: expected one AMDGPU metadata note, found {len(texts)}"
    return texts[0]


def kernels(path: Path) -> dict[str, dict]:
    """Kernel name -> {scalar fields..., "args": [ {arg fields...}, ... ]}."""
    text = metadata_text(path)
    body = text.split("amdhsa.kernels:\n", 1)[1]
    body = re.split(r"\n(?=\S)", body, maxsplit=1)[0]  # up to the next top-level key
    result = {}
    for chunk in body.split("\n  - "):
        lines = chunk.removeprefix("  - ").splitlines()
        lines[0] = "    " + lines[0]
        fields: dict = {"args": []}
        for line in lines:
            if (m := _SCALAR.match(line)):
                fields[m.group(1)] = _value(m.group(2))
            elif (m := _ARG_FIELD.match(line)):
                if line.lstrip().startswith("- "):
                    fields["args"].append({})
                fields["args"][-1][m.group(1)] = _value(m.group(2))
        result[fields["name"]] = fields
    return result

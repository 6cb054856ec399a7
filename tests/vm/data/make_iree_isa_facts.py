"""Writes iree_isa_facts.json: the facts of IREE's VM bytecode ISA table (isa.json) that
tests/vm/test_decoder.py checks our table against, taken from an IREE source checkout.

    python tests/vm/data/make_iree_isa_facts.py /path/to/iree [commit]

Kept: the bytecode version; per instruction its opcode set, opcode, symbol, mnemonic, encoding
and kind; per encoding and operation class the fields' names and kinds (with the class
parameters they name). Left out: IREE's prose (descriptions) and everything the test does not read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ISA_JSON = "runtime/src/iree/vm/bytecode/isa/isa.json"


def _fields(fields: list[dict]) -> list[dict]:
    return [{k: f[k] for k in ("name", "kind") if k in f} for f in fields]


def facts(spec: dict) -> dict:
    return {
        "bytecode_version": spec["bytecode_version"],
        "instructions": [{k: row[k] for k in ("opcode_set", "opcode", "symbol", "mnemonic",
                                               "encoding", "kind") if k in row}
                         for row in spec["instructions"]],
        "encodings": {name: {**({"class": e["class"], "parameters": e["parameters"]}
                                if "class" in e else {}),
                             **({"fields": _fields(e["fields"])} if e.get("fields") else {})}
                      for name, e in spec["encodings"].items()},
        "operation_classes": {name: {"fields": _fields(c.get("fields", []))}
                              for name, c in spec["operation_classes"].items()},
    }


def main() -> None:
    repo, commit = Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "HEAD"
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", commit], capture_output=True,
                         text=True, check=True).stdout.strip()
    text = subprocess.run(["git", "-C", str(repo), "show", f"{sha}:{ISA_JSON}"],
                          capture_output=True, text=True, check=True).stdout
    out = {"source": {"repository": "github.com/iree-org/iree", "commit": sha, "path": ISA_JSON},
           **facts(json.loads(text))}
    target = Path(__file__).with_name("iree_isa_facts.json")
    target.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()

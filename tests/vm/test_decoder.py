"""vm.isa / vm.decoder against IREE 3.13.0's iree-dump-module --output=disassembly.

Inputs compiled at test time:
  - every example model (llvm-cpu; shared with test_vmfb.py),
  - `isa_sweep`: one function per ISA opcode whose operands are all registers, generated from our
    ISA table in MLIR's generic op syntax (`"vm.add.i32"(%a0, %a1)`) and compiled with
    `iree-compile --compile-from=vm`,
  - `scalar_ops` / `ref_ops`: hand-written vm modules for globals, constants, lists, buffers,
    switches, refs, calls (internal, import, variadic, yieldable), br_table, yield, trace/print.
For every function our disassembly must equal the tool's text line for line (so the op sequence,
every register with its move bit, immediates, branch targets and remap lists all agree), and the
verifier must accept it. Corrupted bytecode must be rejected by the verifier before anything runs.

Places where the 3.13.0 tools disagree with the runtime ISA (checked here explicitly):
  - the disassembler decodes `switch.ref` without its type field (prints garbage after it),
  - the disassembler cannot print `cast.ui64.f32` (UNIMPLEMENTED), so it lives in its own module,
  - the compiler encodes `global.load.indirect.f32` with the ext_f64 prefix, so the runtime (and
    we) read it as `global.load.indirect.f64` on an odd register: the verifier rejects it,
  - the compiler writes `cond_break` without its condition operand (not compiled here), and the
    dialect has no ops for cast.{si32,ui32}.f64 / cast.f64.{si32,ui32}.
"""

from __future__ import annotations

import dataclasses
import json
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from amdgpu_cli.formats.vmfb import FeatureBits, VmfbFormatError, load_vmfb
from amdgpu_cli.vm import isa
from amdgpu_cli.vm.decoder import (BytecodeVerifyError, Callee, Register, decode, decode_function,
                                   verify)
from amdgpu_cli.vm.disassembler import disassemble

from .test_vmfb import EXAMPLE_KEYS, compile_mlir, dump_module, example_modules  # noqa: F401

ISA_JSON = "runtime/src/iree/vm/bytecode/isa/isa.json"
IREE_MIRROR = Path("/work/.mirror/iree-org+iree/repo")

# No vm dialect op in the 3.13.0 compiler.
NO_DIALECT_OP = {"cast.si32.f64", "cast.ui32.f64", "cast.f64.si32", "cast.f64.ui32"}
# Ops the 3.13.0 tools cannot round-trip through iree-dump-module (see the module docstring).
NOT_DUMPABLE = {"cast.ui64.f32"}
COMPILER_MISENCODED = "global.load.indirect.f32"
# Ops no test module here contains (the compiler emits them in none of the forms we can write).
UNCOVERED = {"assign.ref", "global.load.indirect.ref", "global.store.indirect.ref", "break",
             "cond_break", COMPILER_MISENCODED} | NO_DIALECT_OP


def isa_sweep_mlir(mnemonics=None) -> str:
    """A vm.module with one exported function per register-only ISA opcode."""
    funcs = []
    for op in isa.OPCODES:
        if op.is_block or op.mnemonic in NO_DIALECT_OP:
            continue
        if mnemonics is not None and op.mnemonic not in mnemonics:
            continue
        if mnemonics is None and op.mnemonic in NOT_DUMPABLE:
            continue
        if not op.fields or any(f.kind != isa.REG or f.bank in ("ref", "any") for f in op.fields):
            continue
        ins = [f.bank for f in op.fields if not f.write]
        outs = [f.bank for f in op.fields if f.write]
        if "store.indirect" in op.mnemonic:
            ins.reverse()  # the dialect op takes (value, offset); the encoding is (offset, value)
        name = "op_" + op.mnemonic.replace(".", "_")
        args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(ins))
        call = (f'"vm.{op.mnemonic}"({", ".join(f"%a{i}" for i in range(len(ins)))}) : '
                f'({", ".join(ins)}) -> ({", ".join(outs)})')
        body = f"    %r = {call}\n    vm.return %r : {outs[0]}\n" if outs else f"    {call}\n    vm.return\n"
        funcs.append(f"  vm.func @{name}({args}) -> ({', '.join(outs)}) {{\n{body}  }}\n  vm.export @{name}\n")
    return "vm.module @isa_sweep {\n" + "".join(funcs) + "}\n"


SCALAR_OPS_MLIR = """\
vm.module @scalar_ops {
  vm.global.i32 mutable @g32 : i32
  vm.global.i64 mutable @g64 : i64
  vm.global.f32 mutable @gf32 : f32
  vm.global.f64 mutable @gf64 : f64
  vm.global.ref mutable @gref : !vm.buffer
  vm.rodata private @data dense<[1, 2, 3, 4]> : tensor<4xi32>
  vm.func @ints(%a: i32, %b: i32) -> i32 {
    %0 = vm.add.i32 %a, %b : i32
    %1 = vm.mul.i32 %0, %a : i32
    %2 = vm.div.i32.s %1, %b : i32
    %3 = vm.rem.i32.u %2, %b : i32
    %4 = vm.fma.i32 %3, %a, %b : i32
    %5 = vm.ctlz.i32 %4 : i32
    %6 = vm.abs.i32 %5 : i32
    %7 = vm.min.i32.s %6, %a : i32
    %8 = vm.max.i32.u %7, %b : i32
    %9 = vm.not.i32 %8 : i32
    %c3 = vm.const.i32 3
    %10 = vm.shl.i32 %9, %c3 : i32
    %11 = vm.shr.i32.s %10, %c3 : i32
    vm.global.store.i32 %11, @g32 : i32
    %12 = vm.global.load.i32 @g32 : i32
    vm.return %12 : i32
  }
  vm.func @i64s(%a: i64, %b: i64) -> i64 {
    %0 = vm.add.i64 %a, %b : i64
    %1 = vm.sub.i64 %0, %a : i64
    %2 = vm.fma.i64 %1, %a, %b : i64
    %3 = vm.ctlz.i64 %2 : i64
    %c = vm.const.i32 2
    %4 = vm.shr.i64.u %3, %c : i64
    vm.global.store.i64 %4, @g64 : i64
    %5 = vm.global.load.i64 @g64 : i64
    %6 = vm.trunc.i64.i32 %5 : i64 -> i32
    %7 = vm.ext.i32.i64.u %6 : i32 -> i64
    vm.return %7 : i64
  }
  vm.func @floats(%a: f32, %b: f64) -> (f32, f64) {
    %0 = vm.add.f32 %a, %a : f32
    %1 = vm.exp.f32 %0 : f32
    %c = vm.const.f32 1.5
    %2 = vm.fma.f32 %1, %c, %a : f32
    %3 = vm.cmp.lt.f32.o %2, %a : f32
    %4 = vm.select.f32 %3, %2, %a : f32
    vm.global.store.f32 %4, @gf32 : f32
    %5 = vm.global.load.f32 @gf32 : f32
    %6 = vm.cast.f32.si32 %5 : f32 -> i32
    %7 = vm.cast.si32.f32 %6 : i32 -> f32
    %d = vm.const.f64 2.25
    %8 = vm.mul.f64 %b, %d : f64
    %9 = vm.sqrt.f64 %8 : f64
    vm.global.store.f64 %9, @gf64 : f64
    %10 = vm.global.load.f64 @gf64 : f64
    %11 = vm.ext.f32.f64 %7 : f32 -> f64
    %12 = vm.add.f64 %10, %11 : f64
    %13 = vm.trunc.f64.f32 %12 : f64 -> f32
    vm.return %13, %12 : f32, f64
  }
  vm.func @bufs(%n: i64) -> i32 {
    %c16 = vm.const.i32 16
    %buf = vm.buffer.alloc %n, %c16 : !vm.buffer
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %v = vm.const.i32 7
    vm.buffer.store.i32 %v, %buf[%c1] : i32 -> !vm.buffer
    vm.buffer.fill.i32 %buf, %c0, %c1, %v : i32 -> !vm.buffer
    %x = vm.buffer.load.i32 %buf[%c1] : !vm.buffer -> i32
    %len = vm.buffer.length %buf : !vm.buffer -> i64
    %ro = vm.const.ref.rodata @data : !vm.buffer
    %cl = vm.buffer.clone %ro, %c0, %len, %c16 : !vm.buffer -> !vm.buffer
    vm.buffer.copy %ro, %c0, %cl, %c0, %c1 : !vm.buffer -> !vm.buffer
    %eq = vm.buffer.compare %ro, %c0, %cl, %c0, %c1 : !vm.buffer, !vm.buffer
    vm.global.store.ref %cl, @gref : !vm.buffer
    %h = vm.buffer.hash %ro, %c0, %c1 : !vm.buffer -> i64
    %r = vm.add.i32 %x, %eq : i32
    vm.return %r : i32
  }
  vm.func @lists(%n: i32) -> i32 {
    %l = vm.list.alloc %n : (i32) -> !vm.list<i32>
    vm.list.resize %l, %n : (!vm.list<i32>, i32)
    %c0 = vm.const.i32 0
    vm.list.set.i32 %l, %c0, %n : (!vm.list<i32>, i32, i32)
    %v = vm.list.get.i32 %l, %c0 : (!vm.list<i32>, i32) -> i32
    %s = vm.list.size %l : (!vm.list<i32>) -> i32
    %r = vm.add.i32 %v, %s : i32
    vm.return %r : i32
  }
  vm.func @control(%x: i32, %y: i32) -> i32 {
    %c1 = vm.const.i32 1
    vm.br_table %x {
      default: ^bb1(%y : i32),
      0: ^bb2(%c1 : i32),
      1: ^bb1(%x : i32)
    }
  ^bb1(%a: i32):
    %s = vm.switch.i32 %a[%x, %y] else %c1 : i32
    vm.cond_br %s, ^bb2(%s : i32), ^bb3
  ^bb2(%b: i32):
    vm.return %b : i32
  ^bb3:
    %c7 = vm.const.i32 7
    vm.fail %c7, "boom"
  }
  vm.func @caller(%x: i32, %y: i64) -> i64 {
    %r = vm.call @i64s(%y, %y) : (i64, i64) -> i64
    %z = vm.call @ints(%x, %x) : (i32, i32) -> i32
    vm.return %r : i64
  }
  vm.export @ints
  vm.export @i64s
  vm.export @floats
  vm.export @bufs
  vm.export @lists
  vm.export @control
  vm.export @caller
}
"""

REF_OPS_MLIR = """\
vm.module @ref_ops {
  vm.global.ref mutable @gbuf : !vm.buffer
  vm.global.i32 mutable @gi : i32
  vm.rodata private @blob dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi8>
  vm.import private optional @other.maybe(%a : i32) -> i32
  vm.import private @other.spread(%a : i32, %b : !vm.buffer ...) -> i32
  vm.import private @other.wait(%a : i32) -> i32 attributes {vm.yield}
  vm.func @buffers(%b: !vm.buffer, %o: i64, %n: i64, %v: i32, %w: i64, %f: f32, %d: f64) -> (i32, i64, f32, f64) {
    %c16 = vm.const.i32 16
    %a = vm.buffer.alloc %n, %c16 : !vm.buffer
    vm.buffer.store.i8 %v, %a[%o] : i32 -> !vm.buffer
    vm.buffer.store.i16 %v, %a[%o] : i32 -> !vm.buffer
    vm.buffer.store.i64 %w, %a[%o] : i64 -> !vm.buffer
    vm.buffer.store.f32 %f, %a[%o] : f32 -> !vm.buffer
    vm.buffer.store.f64 %d, %a[%o] : f64 -> !vm.buffer
    vm.buffer.fill.i8 %a, %o, %n, %v : i32 -> !vm.buffer
    vm.buffer.fill.i16 %a, %o, %n, %v : i32 -> !vm.buffer
    vm.buffer.fill.i64 %a, %o, %n, %w : i64 -> !vm.buffer
    vm.buffer.fill.f32 %a, %o, %n, %f : f32 -> !vm.buffer
    vm.buffer.fill.f64 %a, %o, %n, %d : f64 -> !vm.buffer
    %x0 = vm.buffer.load.i8.u %b[%o] : !vm.buffer -> i32
    %x1 = vm.buffer.load.i8.s %b[%o] : !vm.buffer -> i32
    %x2 = vm.buffer.load.i16.u %b[%o] : !vm.buffer -> i32
    %x3 = vm.buffer.load.i16.s %b[%o] : !vm.buffer -> i32
    %x4 = vm.buffer.load.i64 %b[%o] : !vm.buffer -> i64
    %x5 = vm.buffer.load.f32 %b[%o] : !vm.buffer -> f32
    %x6 = vm.buffer.load.f64 %b[%o] : !vm.buffer -> f64
    %s0 = vm.add.i32 %x0, %x1 : i32
    %s1 = vm.add.i32 %x2, %x3 : i32
    %s2 = vm.add.i32 %s0, %s1 : i32
    vm.global.store.ref %a, @gbuf : !vm.buffer
    vm.return %s2, %x4, %x5, %x6 : i32, i64, f32, f64
  }
  vm.func @lists(%n: i32, %w: i64, %f: f32, %d: f64, %b: !vm.buffer) -> (i64, f32, f64, !vm.buffer) {
    %l = vm.list.alloc %n : (i32) -> !vm.list<?>
    vm.list.reserve %l, %n : (!vm.list<?>, i32)
    vm.list.resize %l, %n : (!vm.list<?>, i32)
    %c0 = vm.const.i32.zero
    vm.list.set.i64 %l, %c0, %w : (!vm.list<?>, i32, i64)
    vm.list.set.f32 %l, %c0, %f : (!vm.list<?>, i32, f32)
    vm.list.set.f64 %l, %c0, %d : (!vm.list<?>, i32, f64)
    vm.list.set.ref %l, %c0, %b : (!vm.list<?>, i32, !vm.buffer)
    %a = vm.list.get.i64 %l, %c0 : (!vm.list<?>, i32) -> i64
    %e = vm.list.get.f32 %l, %c0 : (!vm.list<?>, i32) -> f32
    %g = vm.list.get.f64 %l, %c0 : (!vm.list<?>, i32) -> f64
    %r = vm.list.get.ref %l, %c0 : (!vm.list<?>, i32) -> !vm.buffer
    vm.return %a, %e, %g, %r : i64, f32, f64, !vm.buffer
  }
  vm.func @refs(%a: !vm.ref<?>, %b: !vm.ref<?>, %c: i32) -> (i32, !vm.buffer, !vm.ref<?>) {
    %eq = vm.cmp.eq.ref %a, %b : !vm.ref<?>
    %ne = vm.cmp.ne.ref %a, %b : !vm.ref<?>
    %nz = vm.cmp.nz.ref %a : !vm.ref<?>
    %s = vm.add.i32 %eq, %ne : i32
    %t = vm.add.i32 %s, %nz : i32
    %buf = vm.cast.any.ref %a : !vm.ref<?> -> !vm.buffer
    %sel = vm.select.ref %c, %a, %b : !vm.ref<?>
    vm.return %t, %buf, %sel : i32, !vm.buffer, !vm.ref<?>
  }
  vm.func @switch_ref(%a: !vm.ref<?>, %b: !vm.ref<?>, %c: i32, %d: i64) -> (!vm.ref<?>, i64) {
    %z = vm.const.ref.zero : !vm.ref<?>
    %sw = vm.switch.ref %c[%a, %b] else %z : !vm.ref<?>
    %k = vm.const.i64 5
    %e = vm.add.i64 %d, %k : i64
    vm.return %sw, %e : !vm.ref<?>, i64
  }
  vm.func @switches(%i: i32, %w: i64, %x: i64, %f: f32, %g: f32, %d: f64, %e: f64) -> (i64, f32, f64) {
    %a = vm.switch.i64 %i[%w, %x] else %x : i64
    %b = vm.switch.f32 %i[%f, %g] else %g : f32
    %c = vm.switch.f64 %i[%d, %e] else %d : f64
    vm.return %a, %b, %c : i64, f32, f64
  }
  vm.func @imports(%x: i32, %b: !vm.buffer) -> i32 {
    %ok = vm.import.resolved @other.maybe : i32
    %r = vm.call.variadic @other.spread(%x, [%b, %b]) : (i32, !vm.buffer ...) -> i32
    %s = vm.add.i32 %ok, %r : i32
    vm.cond_br %ok, ^bb1, ^bb2(%s : i32)
  ^bb1:
    %m = vm.call @other.maybe(%s) : (i32) -> i32
    vm.br ^bb2(%m : i32)
  ^bb2(%v: i32):
    vm.return %v : i32
  }
  vm.func @yields(%x: i32) -> i32 {
    %c = vm.const.i32 1
    vm.yield ^bb1
  ^bb1:
    %y = vm.add.i32 %x, %c : i32
    vm.return %y : i32
  }
  vm.func @globals(%v: i32) -> !vm.buffer {
    %r = vm.global.load.ref @gbuf : !vm.buffer
    %ro = vm.const.ref.rodata @blob : !vm.buffer
    %v64 = vm.ext.i32.i64.s %v : i32 -> i64
    %cl = vm.buffer.clone %ro, %v64, %v64, %v : !vm.buffer -> !vm.buffer
    vm.discard.refs %cl : !vm.buffer
    vm.return %r : !vm.buffer
  }
  vm.func @debug(%x: i32, %y: i32) -> i32 {
    vm.trace "event"(%x, %y) : i32, i32
    vm.print "message"(%x, %y) : i32, i32
    vm.return %y : i32
  }
  vm.func @yieldcall(%x: i32, %b: !vm.buffer) -> (i32, !vm.buffer) {
    vm.call.yieldable @other.wait(%x) : (i32) -> ^bb1(i32)
  ^bb1(%r: i32):
    vm.call.yieldable @yields(%r) : (i32) -> ^bb2(i32)
  ^bb2(%s: i32):
    vm.return %s, %b : i32, !vm.buffer
  }
  vm.export @yieldcall
  vm.export @buffers
  vm.export @lists
  vm.export @refs
  vm.export @switch_ref
  vm.export @switches
  vm.export @imports
  vm.export @yields
  vm.export @globals
  vm.export @debug
}
"""

VM_SOURCES = {
    "isa_sweep": lambda: isa_sweep_mlir(),
    "isa_extra": lambda: isa_sweep_mlir(NOT_DUMPABLE).replace("@isa_sweep", "@isa_extra"),
    "scalar_ops": lambda: SCALAR_OPS_MLIR,
    "ref_ops": lambda: REF_OPS_MLIR,
}
VM_KEYS = ["isa_sweep", "scalar_ops", "ref_ops"]  # isa_extra is not dumpable


@pytest.fixture(scope="session")
def vm_modules(tmp_path_factory, example_modules) -> dict[str, Path]:  # noqa: F811
    out = tmp_path_factory.mktemp("vm_dialect")
    paths = {}
    for key, source in VM_SOURCES.items():
        mlir = out / f"{key}.mlir"
        mlir.write_text(source())
        paths[key] = compile_mlir(mlir, out / f"{key}.vmfb", ["--compile-from=vm"])
    return paths


@pytest.fixture(scope="session")
def all_modules(example_modules, vm_modules) -> dict[str, Path]:  # noqa: F811
    return {**example_modules, **vm_modules}


def dump_functions(path: Path) -> list[tuple[str, list[str]]]:
    """(header, body lines) per function of `iree-dump-module --output=disassembly --bytecode_offsets`."""
    funcs, body = [], None
    for line in dump_module(path, "disassembly", "--bytecode_offsets").splitlines():
        if line.startswith("vm.func "):
            body = []
            funcs.append((line, body))
        elif line == "}":
            body = None
        elif body is not None:
            body.append(line)
    return funcs


def _mnemonics(lines: list[str]) -> list[str]:
    """Op names in disassembly lines (`^bbN` for block labels)."""
    out = []
    for line in lines:
        text = re.sub(r"^\[[0-9A-F]{8}\]\s*", "", line)
        if text.startswith("^bb"):
            out.append("^bb")
        else:
            out.append(re.search(r"\bvm\.[a-z0-9_.]+", text).group(0))
    return out


# -- agreement with iree-dump-module -------------------------------------------------------------


@pytest.mark.parametrize("key", EXAMPLE_KEYS + VM_KEYS)
def test_disassembly_matches_dump(all_modules, key):
    path = all_modules[key]
    module = load_vmfb(path)
    dumped = dump_functions(path)
    assert len(dumped) == len(module.functions)
    for ordinal, (header, expected) in enumerate(dumped):
        ours = disassemble(module, ordinal, offsets=True)
        if key == "ref_ops" and module.export_names(ordinal) == ["switch_ref"]:
            # The tool misreads switch.ref (no type field) and prints garbage from there on.
            cut = next(i for i, line in enumerate(expected) if "vm.switch.ref" in line)
            assert ours[:cut] == expected[:cut]
            assert [i.mnemonic for i in decode_function(module, ordinal)][cut:] == [
                "switch.ref", "const.i64", "add.i64", "return"]
            continue
        # Acceptance: the same op sequence ...
        assert _mnemonics(ours) == _mnemonics(expected), f"{key} function {ordinal} ({header})"
        # ... and in fact the same text, operands included.
        assert ours == expected, f"{key} function {ordinal} ({header})"


@pytest.mark.parametrize("key", EXAMPLE_KEYS + VM_KEYS + ["isa_extra"])
def test_verifier_accepts_compiled_modules(all_modules, key):
    module = load_vmfb(all_modules[key])
    for ordinal in range(len(module.functions)):
        names = module.export_names(ordinal)
        if names == ["op_" + COMPILER_MISENCODED.replace(".", "_")]:
            code = decode_function(module, ordinal)
            assert code[1].mnemonic == "global.load.indirect.f64"  # what the runtime executes
            with pytest.raises(BytecodeVerifyError, match="not an even register pair"):
                verify(module, ordinal)
            continue
        code = verify(module, ordinal)
        assert code[0].is_block and code[-1].op.terminator


def test_decoded_modules_cover_the_isa(all_modules):
    seen = set()
    for path in all_modules.values():
        module = load_vmfb(path)
        for ordinal in range(len(module.functions)):
            seen.update(i.mnemonic for i in decode_function(module, ordinal))
    every = {op.mnemonic for op in isa.OPCODES}
    assert every - seen == UNCOVERED
    assert {"fpowi.f32", "fpowi.f64", "cast.ui64.f32", "br_table", "call.variadic.yieldable",
            "call.yieldable", "switch.ref", "yield", "trace", "print", "import.resolved"} <= seen


# -- the ISA table --------------------------------------------------------------------------------


def test_isa_table_shape():
    assert isa.VERSION == (17, 0)
    by_table = {t: [op for op in isa.OPCODES if op.table == t] for t in isa.TABLES}
    assert {t: len(ops) for t, ops in by_table.items()} == {"core": 137, "ext_f32": 63, "ext_f64": 65}
    assert len({op.mnemonic for op in isa.OPCODES}) == len(isa.OPCODES) == 265
    assert isa.TABLES["core"][isa.BLOCK_MARKER].is_block
    assert all(isa.TABLES["core"][p] is None for p in isa.PREFIXES)
    assert isa.by_mnemonic("fpowi.f32").encoded == b"\xe0\x3e"
    assert isa.by_mnemonic("fpowi.f64").encoded == b"\xe1\x40"
    assert isa.by_mnemonic("add.i32").encoded == b"\x22"
    assert isa.by_mnemonic("round.f64.even").requires == FeatureBits.EXT_F64
    assert {op.mnemonic for op in isa.OPCODES if op.terminator} == isa.TERMINATORS


# IREE's isa.json facts (tests/vm/data/make_iree_isa_facts.py says how they were taken, and from
# which commit: the file's "source").
ISA_FACTS = Path(__file__).with_name("data") / "iree_isa_facts.json"


def test_isa_table_matches_iree_isa_json():
    """Every isa.json row (IREE's, as tests/vm/data/iree_isa_facts.json keeps its facts) is in our
    table with the same fields."""
    spec = json.loads(ISA_FACTS.read_text())
    assert (spec["bytecode_version"]["major"], spec["bytecode_version"]["minor"]) == isa.VERSION
    rows = [r for r in spec["instructions"] if r.get("kind") != "prefix"]
    assert len(rows) + 2 == len(isa.OPCODES)  # + the two 3.13.0 fpowi opcodes
    for row in rows:
        op = isa.TABLES[row["opcode_set"]][row["opcode"]]
        assert op is not None and op.symbol == row["symbol"]
        if row.get("kind") == "marker":
            assert op.is_block
            continue
        assert (op.mnemonic, op.encoding) == (row["mnemonic"], row["encoding"])
        enc = spec["encodings"][row["encoding"]]
        fields = enc.get("fields") or _class_fields(spec, enc)
        names = [f["name"] for f in fields if f["kind"] != "const_i16"]
        assert [f.name for f in op.fields] == names, op.mnemonic


def test_isa_facts_are_those_of_iree_source():
    """The checked copy holds what the IREE source it names holds (where a mirror is here)."""
    sys.path.insert(0, str(ISA_FACTS.parent))
    try:
        from make_iree_isa_facts import facts
    finally:
        sys.path.pop(0)
    copy = json.loads(ISA_FACTS.read_text())
    try:
        text = subprocess.run(["git", "-C", str(IREE_MIRROR), "show",
                               f"{copy['source']['commit']}:{ISA_JSON}"],
                              capture_output=True, text=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip(f"IREE source mirror (with commit {copy['source']['commit']}) not at "
                    f"{IREE_MIRROR}")
    assert {k: v for k, v in copy.items() if k != "source"} == facts(json.loads(text))


def _class_fields(spec, enc):
    params = enc["parameters"]
    out = []
    for f in spec["operation_classes"][enc["class"]]["fields"]:
        out.append({k: params[v[1:]] if isinstance(v, str) and v.startswith("$") else v for k, v in f.items()})
    return out


# -- decoding details ----------------------------------------------------------------------------


def test_decode_hand_assembled_body():
    body = (b"\x79"                                                       # 0: ^bb0
            + b"\x0d" + struct.pack("<iH", -2, 1)                          # 1: %i1 = const.i32 -2
            + b"\xe1\x05" + struct.pack("<dH", 2.5, 2)                     # 8: %i2:3 = const.f64 2.5
            # 20: %r0 = call @import 3(%i1, %R5); the operand list aligns to 2: one pad byte at 25
            + b"\x58" + struct.pack("<I", 0x80000003) + b"\x00"
            + struct.pack("<HHH", 2, 1, 0x8000 | 0x4000 | 5) + struct.pack("<HH", 1, 0x8000)
            # 36: cond_br %i1, ^50(%i1->%i4), ^52(); the first remap list is padded at 43
            + b"\x57" + struct.pack("<HI", 1, 50) + b"\x00"
            + struct.pack("<HHH", 1, 1, 4) + struct.pack("<IH", 52, 0))
    code = decode(body)
    assert [(i.offset, i.length, i.mnemonic) for i in code] == [
        (0, 1, "block"), (1, 7, "const.i32"), (8, 12, "const.f64"), (20, 16, "call"), (36, 20, "cond_br")]
    assert code[1]["value"] == -2 and str(code[1]["result"]) == "%i1"
    assert code[2]["value"] == 2.5 and str(code[2]["result"]) == "%i2:3"
    call = code[3]
    assert call["callee_ordinal"] == Callee(True, 3)
    assert [str(r) for r in call["operands"]] == ["%i1", "%R5"] and call["operands"][1].move
    assert [str(r) for r in call["results"]] == ["%r0"]
    br = code[4]
    assert br.targets() == [50, 52]
    assert [(str(s), str(d)) for s, d in br["true_operands"]] == [("%i1", "%i4")]
    assert br["false_operands"] == ()
    assert [(f.name, str(r)) for f, r in br.registers()] == [
        ("condition", "%i1"), ("true_operands", "%i1"), ("true_operands", "%i4")]


def test_register_encoding():
    r = Register(0x8000 | 0x4000 | 7, "ref")
    assert (r.is_ref, r.move, r.index, str(r)) == (True, True, 7, "%R7")
    assert str(Register(0x8000 | 3, "any")) == "%r3"
    assert (Register(6, "i64").index, str(Register(6, "f64"))) == (6, "%i6:7")
    assert Callee.from_raw(0x80000002) == Callee(True, 2) and Callee.from_raw(5) == Callee(False, 5)


@pytest.mark.parametrize("body, message", [
    (b"\x79\xfe", "unknown core opcode 0xFE"),
    (b"\x79\xe0\xff", "unknown ext_f32 opcode 0xFF"),
    (b"\x79\x0d\x01\x00", "runs past the end"),
    (b"\x79\xe1", "runs past the end"),
    (b"\x79\x5a\x00", "runs past the end"),  # return: list needs alignment + count
])
def test_decode_rejects_bad_streams(body, message):
    with pytest.raises(BytecodeVerifyError, match=message):
        decode(body, function="m.f")


# -- the verifier on corrupted bytecode ----------------------------------------------------------


def _with_body(module, ordinal, patch, **descriptor):
    """A copy of `module` whose function `ordinal` has bytes patched and descriptor fields replaced."""
    d = module.functions[ordinal]
    data = bytearray(module.bytecode)
    for pos, value in patch.items():
        data[d.bytecode_offset + pos:d.bytecode_offset + pos + len(value)] = value
    functions = list(module.functions)
    functions[ordinal] = dataclasses.replace(d, **descriptor)
    return dataclasses.replace(module, bytecode=memoryview(bytes(data)), functions=tuple(functions))


def _find(module, ordinal, mnemonic, nth=0):
    return [i for i in decode_function(module, ordinal) if i.mnemonic == mnemonic][nth]


@pytest.fixture(scope="module")
def mlp(example_modules):  # noqa: F811
    return load_vmfb(example_modules["mlp"])


def test_verifier_rejects_bad_registers(mlp):
    predict = mlp.exports_by_name["predict"]
    n_i32 = mlp.functions[predict].i32_register_count
    n_ref = mlp.functions[predict].ref_register_count
    c = _find(mlp, predict, "const.i32")  # %iN = const.i32 imm: result u16 after the 4-byte imm
    at = c.offset + 5
    cases = {
        n_i32.to_bytes(2, "little"): "out of range",
        (0x8000 | 1).to_bytes(2, "little"): "ref register",
    }
    for raw, message in cases.items():
        bad = _with_body(mlp, predict, {at: raw})
        with pytest.raises(BytecodeVerifyError, match=message) as e:
            verify(bad, predict)
        assert e.value.function == "mlp.predict" and e.value.offset == c.offset
        assert f"mlp.predict+{c.offset:08X}:" in str(e.value)
    g = _find(mlp, predict, "global.load.ref")  # global u32, type u32, result u16
    bad = _with_body(mlp, predict, {g.offset + 9: (0x8000 | n_ref).to_bytes(2, "little")})
    with pytest.raises(BytecodeVerifyError, match="ref register %r\\d+ out of range"):
        verify(bad, predict)
    bad = _with_body(mlp, predict, {g.offset + 9: (3).to_bytes(2, "little")})
    with pytest.raises(BytecodeVerifyError, match="ref register required"):
        verify(bad, predict)


def test_verifier_rejects_bad_branches(mlp):
    predict = mlp.exports_by_name["predict"]
    length = mlp.functions[predict].bytecode_length
    br = _find(mlp, predict, "cond_br")  # cond u16, then the true target u32
    for target in (length + 8, br.offset + 1, 0x7FFFFFFF):
        bad = _with_body(mlp, predict, {br.offset + 3: target.to_bytes(4, "little")})
        with pytest.raises(BytecodeVerifyError, match="branch target .* is not a block") as e:
            verify(bad, predict)
        assert e.value.offset == br.offset
    resume = _find(mlp, predict, "call.variadic.yieldable")
    bad = _with_body(mlp, predict, {}, block_count=mlp.functions[predict].block_count + 1)
    with pytest.raises(BytecodeVerifyError, match="declares 5 blocks but the body has 4"):
        verify(bad, predict)
    assert resume.targets()


def test_verifier_rejects_bad_ordinals(mlp):
    predict = mlp.exports_by_name["predict"]
    m = mlp
    g = _find(m, predict, "global.load.ref")
    rodata = _find(m, predict, "const.ref.rodata")
    call = _find(m, predict, "call")
    cases = [
        ({g.offset + 1: m.state.global_ref_count.to_bytes(4, "little")}, "ref global .* out of range"),
        ({g.offset + 5: len(m.types).to_bytes(4, "little")}, "type .* out of range"),
        ({rodata.offset + 1: len(m.rodata).to_bytes(4, "little")}, "rodata segment .* out of range"),
        ({call.offset + 1: (0x80000000 | len(m.imports)).to_bytes(4, "little")}, "import ordinal .* out of range"),
        ({call.offset + 1: (7).to_bytes(4, "little")}, "function ordinal 7 out of range"),
    ]
    for patch, message in cases:
        with pytest.raises(BytecodeVerifyError, match=message):
            verify(_with_body(m, predict, patch), predict)


def test_verifier_rejects_broken_structure(mlp):
    predict = mlp.exports_by_name["predict"]
    d = mlp.functions[predict]
    code = decode_function(mlp, predict)
    # Cut in the middle of the last instruction.
    with pytest.raises(BytecodeVerifyError, match="runs past the end"):
        verify(_with_body(mlp, predict, {}, bytecode_length=d.bytecode_length - 3), predict)
    # Cut right after a non-terminator.
    second = code[2]
    with pytest.raises(BytecodeVerifyError, match="no terminator"):
        verify(_with_body(mlp, predict, {}, bytecode_length=second.offset + second.length, block_count=1), predict)
    # An op before the first block marker (drop the leading marker), a marker inside a block.
    with pytest.raises(BytecodeVerifyError, match="const.i32 is not inside a block") as e:
        verify(_with_body(mlp, predict, {}, bytecode_offset=d.bytecode_offset + 1,
                          bytecode_length=d.bytecode_length - 1), predict)
    assert e.value.offset == 0
    with pytest.raises(BytecodeVerifyError, match="block marker inside a block"):
        verify(_with_body(mlp, predict, {code[2].offset: b"\x79"}), predict)
    # A call whose registers do not fit the callee's calling convention: `%rA = call
    # @hal.buffer_view.buffer(%rB)` (0r_r) redirected to hal.devices.count (0v_i).
    call = next(i for i in code if i.mnemonic == "call"
                and mlp.imports[i["callee_ordinal"].ordinal].full_name == "hal.buffer_view.buffer")
    count = next(i.ordinal for i in mlp.imports if i.full_name == "hal.devices.count")
    with pytest.raises(BytecodeVerifyError, match="call to import hal.devices.count: 1 registers for 0 values"):
        verify(_with_body(mlp, predict, {call.offset + 1: (0x80000000 | count).to_bytes(4, "little")}), predict)


def test_verifier_checks_extension_features(all_modules):
    module = load_vmfb(all_modules["isa_sweep"])
    ordinal = module.exports_by_name["op_add_f32"]
    verify(module, ordinal)
    with pytest.raises(BytecodeVerifyError, match="EXT_F32"):
        verify(_with_body(module, ordinal, {}, requirements=0), ordinal)


def test_corrupted_file_is_rejected_before_running(example_modules, tmp_path):  # noqa: F811
    """End to end: patch a register in the file; loading works, verification names the spot."""
    data = bytearray(example_modules["mlp"].read_bytes())
    m = load_vmfb(bytes(data))
    predict = m.exports_by_name["predict"]
    c = _find(m, predict, "const.i32")
    at = m.container.bytecode_offset + m.functions[predict].bytecode_offset + c.offset + 5
    data[at:at + 2] = (0x7FFF).to_bytes(2, "little")
    path = tmp_path / "bad.vmfb"
    path.write_bytes(bytes(data))
    bad = load_vmfb(path)
    with pytest.raises(VmfbFormatError, match=rf"mlp\.predict\+{c.offset:08X}: result: i32 register %i32767 out of range"):
        verify(bad, predict)

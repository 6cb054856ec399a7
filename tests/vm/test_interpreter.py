"""vm.interpreter / vm.context against IREE 3.13.0's iree-run-module --device=local-sync.

Every check runs the same function with the same inputs through both and compares the printed
result lines (`result[0]: i32=5`, `f32=%g`, `-nan` included), so wraparound, rounding, NaN signs,
casts and control flow must agree bit for bit. Modules are compiled at test time:
  - `op_groups`: every register-only ISA opcode, grouped by operand signature into one function
    per signature that applies each op to every input tuple (one iree-run-module process per
    group);
  - `flow`: hand-written vm code for loops, br_table, switch, internal calls and recursion, i64
    arguments across calls, globals mutated by callees, lists, buffers and vm.fail;
  - `hl`: func/arith/scf compiled for llvm-cpu (scalar-only, so pure VM code): scf.while/for,
    index_switch, fptosi, math.fpowi.
"""

from __future__ import annotations

import itertools
import math
import shutil
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from amdgpu_cli.formats.vmfb import load_vmfb, split_cconv
from amdgpu_cli.vm import isa
from amdgpu_cli.vm.context import NativeFunction, NativeModule, VmContext
from amdgpu_cli.vm.numerics import host_to_raw
from amdgpu_cli.vm.refs import VmBuffer, VmList, VmTrap

from .test_vmfb import compile_mlir

RUN_TIMEOUT_S = 60

# -- printing like iree-run-module -----------------------------------------------------------------


def _c_g(x: float, sign_bit: bool) -> str:
    if x != x:
        return "-nan" if sign_bit else "nan"
    return "%g" % x


def format_result(ch: str, raw) -> str:
    if ch == "i":
        return f"i32={raw - (1 << 32) if raw >> 31 else raw}"
    if ch == "I":
        return f"i64={raw - (1 << 64) if raw >> 63 else raw}"
    if ch == "f":
        return "f32=" + _c_g(struct.unpack("<f", struct.pack("<I", raw))[0], bool(raw >> 31))
    if ch == "F":
        return "f64=" + _c_g(struct.unpack("<d", struct.pack("<Q", raw))[0], bool(raw >> 63))
    raise AssertionError(ch)


def parse_input(ch: str, text: str):
    if ch in "iI":
        return int(text)
    return float(text)


def ours(ctx: VmContext, function: str, inputs: list[str]) -> list[str]:
    args, results = split_cconv(ctx.export_cconv(function))
    raw = [host_to_raw(ch, parse_input(ch, t)) for ch, t in zip(args, inputs)]
    out = ctx.call_raw(function, raw)
    return [f"result[{k}]: {format_result(ch, v)}" for k, (ch, v) in enumerate(zip(results, out))]


def theirs(vmfb: Path, function: str, inputs: list[str]) -> tuple[int, list[str], str]:
    proc = subprocess.run(["iree-run-module", "--device=local-sync", f"--module={vmfb}",
                           f"--function={function}", *(f"--input={t}" for t in inputs)],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("result[")]
    return proc.returncode, lines, proc.stderr


def _fmt_in(ch: str, v) -> str:
    if ch in "iI":
        return str(v)
    return repr(float(v))


_OP_LABELS: dict[str, list[str]] = {}  # group function -> op mnemonics, for failure messages


def _label(fn: str, line: str, inputs: list[str]) -> str:
    ops = _OP_LABELS.get(fn)
    if not ops:
        return ""
    k = int(line[len("result["):line.index("]")])
    t = k // len(ops)
    return f" [{ops[k % len(ops)]} tuple {t}]"


def compare_many(vmfb: Path, jobs: list[tuple[str, list[str]]]) -> None:
    """Run (function, inputs) jobs through both executors; assert identical result lines."""
    module = load_vmfb(vmfb)
    with ThreadPoolExecutor(max_workers=4) as pool:
        refs = list(pool.map(lambda j: theirs(vmfb, *j), jobs))
    for (fn, inputs), (rc, lines, err) in zip(jobs, refs):
        assert rc == 0, f"iree-run-module {fn} {inputs}: {err[-800:]}"
        got = ours(VmContext(module), fn, inputs)  # fresh globals, like each tool run
        if got != lines:
            diff = [f"{a!r} != {b!r}{_label(fn, b, inputs)}" for a, b in zip(got, lines) if a != b][:10]
            pytest.fail(f"{fn}({inputs[:8]}...): {len(diff)}+ mismatches (ours != iree):\n"
                        + "\n".join(diff))


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    if not shutil.which("iree-run-module") or not shutil.which("iree-compile"):
        pytest.skip("iree-compile / iree-run-module not on PATH (pip install iree-base-compiler "
                    "iree-base-runtime)")
    return tmp_path_factory.mktemp("interp")


def _compile(tools: Path, name: str, text: str, flags: list[str]) -> Path:
    src = tools / f"{name}.mlir"
    src.write_text(text)
    return compile_mlir(src, tools / f"{name}.vmfb", flags)


# -- every register-only opcode ------------------------------------------------------------------

I32_VALUES = [0, 1, -1, 2, 7, -7, 31, 33, 255, -128, 65535, 0x12345678, 2147483647, -2147483648]
I64_VALUES = [0, 1, -1, 2, 63, 65, 2**31, -2**31, 2**32 + 5, 2**63 - 1, -2**63, 0x123456789ABCDEF,
              -987654321012]
F32_VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.75, -0.1, 1e-7, 3e9, -3e9, 1e30,
              16777217.0, 4.5e15, math.inf, -math.inf, math.nan]
F64_VALUES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.7, 1e-7, 3e9, -3e9, 1e19, 2e19, 1e300,
              5e-324, math.inf, -math.inf, math.nan]
VALUES = {"i32": I32_VALUES, "i64": I64_VALUES, "f32": F32_VALUES, "f64": F64_VALUES}
CH = {"i32": "i", "i64": "I", "f32": "f", "f64": "F"}

NO_DIALECT_OP = {"cast.si32.f64", "cast.ui32.f64", "cast.f64.si32", "cast.f64.ui32"}
TRAPPING = {"div.i32.s", "div.i32.u", "rem.i32.s", "rem.i32.u", "div.i64.s", "div.i64.u",
            "rem.i64.s", "rem.i64.u"}


def _register_only_ops():
    for op in isa.OPCODES:
        if op.is_block or op.mnemonic in NO_DIALECT_OP or op.mnemonic.startswith("global."):
            continue
        if not op.fields or any(f.kind != isa.REG or f.bank in ("ref", "any") for f in op.fields):
            continue
        ins = tuple(f.bank for f in op.fields if not f.write)
        outs = [f.bank for f in op.fields if f.write]
        if len(outs) != 1 or not ins:
            continue
        yield op.mnemonic, ins, outs[0]


def _tuples(ins: tuple[str, ...], trapping: bool) -> list[tuple]:
    if len(ins) == 1:
        return [(v,) for v in VALUES[ins[0]]]
    if ins == ("f32", "i64") or ins == ("f64", "i64"):  # fpowi
        exps = [0, 1, 2, 3, 5, 7, -1, -2, -3, 31, -31, 2**32 + 2]
        base = [0.0, -0.0, 1.5, -1.5, 2.0, 0.1, 10.0, 1e10, math.inf, math.nan]
        return list(itertools.product(base, exps))
    if len(ins) == 3:  # fma / select: a small sample
        vals = [VALUES[b] for b in ins]
        out = []
        for k in range(24):
            out.append(tuple(v[(k * (3 + j) + j) % len(v)] for j, v in enumerate(vals)))
        if ins[0] == "i32":
            out += [(0,) + t[1:] for t in out[:6]]
        return out
    a, b = ins
    va, vb = VALUES[a], VALUES[b]
    if b == "i32" and a != "i32":  # i64 shifts
        vb = [0, 1, 31, 32, 33, 63, 64, 65, -1]
    pairs = list(itertools.product(va, vb))
    if trapping:
        bits = 32 if a == "i32" else 64
        pairs = [(x, y) for x, y in pairs if y != 0 and not (x == -(1 << (bits - 1)) and y == -1)]
    return pairs


def _group_mlir() -> tuple[str, list[tuple[str, list[str]]]]:
    groups: dict[tuple, list[tuple[str, str]]] = {}
    for mnemonic, ins, out in _register_only_ops():
        key = (ins, mnemonic in TRAPPING)
        groups.setdefault(key, []).append((mnemonic, out))
    funcs, jobs = [], []
    for n, ((ins, trapping), ops) in enumerate(sorted(groups.items())):
        tuples = _tuples(ins, trapping)
        name = f"g{n}_{'_'.join(ins)}{'_div' if trapping else ''}"
        args, res_types, body = [], [], []
        for t in range(len(tuples)):
            names = [f"%a{t}_{j}" for j in range(len(ins))]
            args += [f"{nm}: {b}" for nm, b in zip(names, ins)]
            for k, (mnemonic, out) in enumerate(ops):
                body.append(f'    %r{t}_{k} = "vm.{mnemonic}"({", ".join(names)}) : '
                            f'({", ".join(ins)}) -> ({out})')
                res_types.append((f"%r{t}_{k}", out))
        body.append(f"    vm.return {', '.join(r for r, _ in res_types)} : "
                    f"{', '.join(t for _, t in res_types)}")
        funcs.append(f"  vm.func @{name}({', '.join(args)}) -> ({', '.join(t for _, t in res_types)}) {{\n"
                     + "\n".join(body) + f"\n  }}\n  vm.export @{name}\n")
        inputs = [_fmt_in(CH[b], v) for t in tuples for b, v in zip(ins, t)]
        jobs.append((name, inputs))
        _OP_LABELS[name] = [m for m, _ in ops]
    return "vm.module @op_groups {\n" + "".join(funcs) + "}\n", jobs


def test_every_scalar_op_matches_iree(tools):
    text, jobs = _group_mlir()
    vmfb = _compile(tools, "op_groups", text, ["--compile-from=vm"])
    assert len(jobs) >= 20
    compare_many(vmfb, jobs)


# -- control flow, calls, globals, lists, buffers ------------------------------------------------

FLOW_MLIR = """\
vm.module @flow {
  vm.global.i32 mutable @counter : i32
  vm.global.i64 mutable @acc64 : i64
  vm.global.f32 mutable @accf : f32
  vm.global.ref mutable @gbuf : !vm.buffer
  vm.rodata private @blob dense<[1, 2, 3, 4, -5, 6, 7, -8]> : tensor<8xi8>
  vm.func private @bump(%by: i32, %w: i64) -> i64 {
    %c = vm.global.load.i32 @counter : i32
    %n = vm.add.i32 %c, %by : i32
    vm.global.store.i32 %n, @counter : i32
    %a = vm.global.load.i64 @acc64 : i64
    %b = vm.add.i64 %a, %w : i64
    vm.global.store.i64 %b, @acc64 : i64
    vm.return %b : i64
  }
  vm.func @globals(%x: i32, %w: i64, %f: f32) -> (i32, i64, f32) {
    %r1 = vm.call @bump(%x, %w) : (i32, i64) -> i64
    %r2 = vm.call @bump(%x, %r1) : (i32, i64) -> i64
    vm.global.store.f32 %f, @accf : f32
    %g = vm.global.load.f32 @accf : f32
    %h = vm.add.f32 %g, %g : f32
    %c = vm.global.load.i32 @counter : i32
    vm.return %c, %r2, %h : i32, i64, f32
  }
  vm.func private @fib(%n: i32) -> i32 {
    %c2 = vm.const.i32 2
    %lt = vm.cmp.lt.i32.s %n, %c2 : i32
    vm.cond_br %lt, ^base, ^rec
  ^base:
    vm.return %n : i32
  ^rec:
    %c1 = vm.const.i32 1
    %n1 = vm.sub.i32 %n, %c1 : i32
    %n2 = vm.sub.i32 %n, %c2 : i32
    %a = vm.call @fib(%n1) : (i32) -> i32
    %b = vm.call @fib(%n2) : (i32) -> i32
    %s = vm.add.i32 %a, %b : i32
    vm.return %s : i32
  }
  vm.func @recursion(%n: i32) -> i32 {
    %r = vm.call @fib(%n) : (i32) -> i32
    vm.return %r : i32
  }
  vm.func private @mix(%a: i32, %b: i64, %c: f32, %d: f64, %e: i32) -> (f64, i64, i32) {
    %a64 = vm.ext.i32.i64.s %a : i32 -> i64
    %s = vm.add.i64 %a64, %b : i64
    %c64 = vm.ext.f32.f64 %c : f32 -> f64
    %t = vm.mul.f64 %c64, %d : f64
    %u = vm.xor.i32 %a, %e : i32
    vm.return %t, %s, %u : f64, i64, i32
  }
  vm.func @calls(%a: i32, %b: i64, %c: f32, %d: f64, %e: i32) -> (f64, i64, i32) {
    %t, %s, %u = vm.call @mix(%a, %b, %c, %d, %e) : (i32, i64, f32, f64, i32) -> (f64, i64, i32)
    vm.return %t, %s, %u : f64, i64, i32
  }
  vm.func @loop(%n: i32, %x: i64) -> (i32, i64) {
    %c0 = vm.const.i32 0
    %c1 = vm.const.i32 1
    vm.br ^head(%c0, %x : i32, i64)
  ^head(%i: i32, %acc: i64):
    %lt = vm.cmp.lt.i32.s %i, %n : i32
    vm.cond_br %lt, ^body(%i, %acc : i32, i64), ^exit(%i, %acc : i32, i64)
  ^body(%j: i32, %a: i64):
    %j1 = vm.add.i32 %j, %c1 : i32
    %k = vm.ext.i32.i64.s %j1 : i32 -> i64
    %a1 = vm.mul.i64 %a, %k : i64
    %a2 = vm.add.i64 %a1, %k : i64
    vm.br ^head(%j1, %a2 : i32, i64)
  ^exit(%r: i32, %s: i64):
    vm.return %r, %s : i32, i64
  }
  vm.func @table(%x: i32, %y: i32, %w: i64, %v: i64) -> (i32, i64, f32) {
    %c1 = vm.const.i32 1
    %f1 = vm.const.f32 1.5
    %f2 = vm.const.f32 -2.25
    %sw = vm.switch.i64 %x[%w, %v] else %v : i64
    %sf = vm.switch.f32 %y[%f1, %f2] else %f1 : f32
    vm.br_table %x {
      default: ^bb1(%y : i32),
      0: ^bb2(%c1 : i32),
      1: ^bb1(%x : i32),
      2: ^bb2(%y : i32)
    }
  ^bb1(%a: i32):
    %s = vm.switch.i32 %a[%x, %y, %c1] else %c1 : i32
    vm.br ^bb2(%s : i32)
  ^bb2(%b: i32):
    vm.return %b, %sw, %sf : i32, i64, f32
  }
  vm.func @lists(%n: i32, %k: i32, %w: i64, %f: f32, %d: f64) -> (i32, i64, f32, f64, i32, i64, f64) {
    %l = vm.list.alloc %n : (i32) -> !vm.list<i32>
    vm.list.resize %l, %n : (!vm.list<i32>, i32)
    vm.list.set.i32 %l, %k, %k : (!vm.list<i32>, i32, i32)
    %c0 = vm.const.i32 0
    vm.list.set.i64 %l, %c0, %w : (!vm.list<i32>, i32, i64)
    %a = vm.list.get.i32 %l, %k : (!vm.list<i32>, i32) -> i32
    %b = vm.list.get.i64 %l, %c0 : (!vm.list<i32>, i32) -> i64
    %v = vm.list.alloc %n : (i32) -> !vm.list<?>
    vm.list.resize %v, %n : (!vm.list<?>, i32)
    vm.list.set.f32 %v, %k, %f : (!vm.list<?>, i32, f32)
    vm.list.set.f64 %v, %c0, %d : (!vm.list<?>, i32, f64)
    %e = vm.list.get.f32 %v, %k : (!vm.list<?>, i32) -> f32
    %g = vm.list.get.f64 %v, %c0 : (!vm.list<?>, i32) -> f64
    %s = vm.list.size %v : (!vm.list<?>) -> i32
    %fl = vm.list.alloc %n : (i32) -> !vm.list<f32>
    vm.list.resize %fl, %n : (!vm.list<f32>, i32)
    vm.list.set.f64 %fl, %c0, %d : (!vm.list<f32>, i32, f64)
    %h = vm.list.get.f64 %fl, %c0 : (!vm.list<f32>, i32) -> f64
    %m = vm.list.get.i64 %fl, %c0 : (!vm.list<f32>, i32) -> i64
    vm.return %a, %b, %e, %g, %s, %m, %h : i32, i64, f32, f64, i32, i64, f64
  }
  vm.func @buffers(%n: i64, %o: i64, %v: i32, %w: i64, %f: f32, %d: f64) -> (i32, i32, i32, i32, i32, i64, f32, f64, i64, i32, i32) {
    %c16 = vm.const.i32 16
    %c0 = vm.const.i64 0
    %c1 = vm.const.i64 1
    %c8 = vm.const.i64 8
    %a = vm.buffer.alloc %n, %c16 : !vm.buffer
    vm.buffer.fill.i8 %a, %c0, %n, %v : i32 -> !vm.buffer
    vm.buffer.store.i16 %v, %a[%o] : i32 -> !vm.buffer
    %x0 = vm.buffer.load.i8.u %a[%o] : !vm.buffer -> i32
    %x1 = vm.buffer.load.i8.s %a[%o] : !vm.buffer -> i32
    %x2 = vm.buffer.load.i16.u %a[%o] : !vm.buffer -> i32
    %x3 = vm.buffer.load.i16.s %a[%o] : !vm.buffer -> i32
    vm.buffer.store.i32 %v, %a[%o] : i32 -> !vm.buffer
    %x4 = vm.buffer.load.i32 %a[%o] : !vm.buffer -> i32
    vm.buffer.store.i64 %w, %a[%o] : i64 -> !vm.buffer
    %x5 = vm.buffer.load.i64 %a[%o] : !vm.buffer -> i64
    vm.buffer.fill.f32 %a, %o, %c1, %f : f32 -> !vm.buffer
    %x6 = vm.buffer.load.f32 %a[%o] : !vm.buffer -> f32
    vm.buffer.store.f64 %d, %a[%o] : f64 -> !vm.buffer
    %x7 = vm.buffer.load.f64 %a[%o] : !vm.buffer -> f64
    %len = vm.buffer.length %a : !vm.buffer -> i64
    %ro = vm.const.ref.rodata @blob : !vm.buffer
    %cl = vm.buffer.clone %ro, %c0, %c8, %c16 : !vm.buffer -> !vm.buffer
    %eq0 = vm.buffer.compare %ro, %c0, %cl, %c0, %c8 : !vm.buffer, !vm.buffer
    vm.buffer.copy %a, %c0, %cl, %c1, %c1 : !vm.buffer -> !vm.buffer
    %eq1 = vm.buffer.compare %ro, %c0, %cl, %c0, %c8 : !vm.buffer, !vm.buffer
    vm.global.store.ref %cl, @gbuf : !vm.buffer
    %g = vm.global.load.ref @gbuf : !vm.buffer
    %y = vm.buffer.load.i8.s %g[%c1] : !vm.buffer -> i32
    vm.return %x0, %x1, %x2, %x3, %x4, %x5, %x6, %x7, %len, %eq0, %y : i32, i32, i32, i32, i32, i64, f32, f64, i64, i32, i32
  }
  vm.func @hash(%o: i64, %n: i64) -> i64 {
    %ro = vm.const.ref.rodata @blob : !vm.buffer
    %h = vm.buffer.hash %ro, %o, %n : !vm.buffer -> i64
    vm.return %h : i64
  }
  vm.func @rodata_store(%o: i64) -> i32 {
    %ro = vm.const.ref.rodata @blob : !vm.buffer
    %v = vm.const.i32 9
    vm.buffer.store.i8 %v, %ro[%o] : i32 -> !vm.buffer
    %x = vm.buffer.load.i8.s %ro[%o] : !vm.buffer -> i32
    vm.return %x : i32
  }
  vm.func @fails(%x: i32) -> i32 {
    %c5 = vm.const.i32 5
    %lt = vm.cmp.lt.i32.s %x, %c5 : i32
    vm.cond_br %lt, ^ok, ^bad
  ^ok:
    vm.return %x : i32
  ^bad:
    %c11 = vm.const.i32 11
    vm.fail %c11, "x too large"
  }
  vm.export @globals
  vm.export @recursion
  vm.export @calls
  vm.export @loop
  vm.export @table
  vm.export @lists
  vm.export @buffers
  vm.export @hash
  vm.export @rodata_store
  vm.export @fails
}
"""


def _flow_jobs():
    jobs = []
    for x, w, f in [(1, 5, 1.5), (-3, -2**62, -0.0), (2147483647, 2**63 - 1, 3e38), (0, 0, math.nan)]:
        jobs.append(("globals", [str(x), str(w), repr(f)]))
    jobs += [("recursion", [str(n)]) for n in (0, 1, 2, 10, 15)]
    for a, b, c, d, e in [(1, 2, 1.5, 2.0, 3), (-5, 2**63 - 1, -0.1, 1e300, -1),
                          (-2147483648, -2**63, math.inf, 0.0, 7)]:
        jobs.append(("calls", [str(a), str(b), repr(c), repr(d), str(e)]))
    jobs += [("loop", [str(n), str(x)]) for n, x in [(0, 1), (5, 1), (30, 3), (-1, 7)]]
    for x in (-1, 0, 1, 2, 3, 7):
        for y in (-1, 0, 1, 2):
            jobs.append(("table", [str(x), str(y), str(2**33 + 5), str(-2**40)]))
    for n, k, w, f, d in [(3, 2, 2**40 + 7, 1.5, -2.5), (5, 4, -1, 3e38, 1e300), (1, 0, 2**31, -0.0, math.nan)]:
        jobs.append(("lists", [str(n), str(k), str(w), repr(f), repr(d)]))
    for n, o, v, w, f, d in [(16, 0, 0x1234ABCD, -2, 1.25, -0.5), (24, 1, -1, 2**62 + 3, -7.5, 1e-300),
                             (64, 7, 200, -2**63, math.inf, math.nan)]:
        jobs.append(("buffers", [str(n), str(o), str(v), str(w), repr(f), repr(d)]))
    jobs += [("hash", [str(o), str(n)]) for o, n in [(0, 0), (0, 1), (0, 8), (3, 5), (1, 7)]]
    jobs += [("fails", ["3"])]
    return jobs


@pytest.fixture(scope="module")
def flow(tools):
    return _compile(tools, "flow", FLOW_MLIR, ["--compile-from=vm"])


def test_flow_matches_iree(flow):
    compare_many(flow, _flow_jobs())


@pytest.mark.parametrize("function,inputs,status", [
    ("fails", ["9"], "OUT_OF_RANGE"),
    ("rodata_store", ["0"], "PERMISSION_DENIED"),
    ("buffers", ["16", "16", "1", "1", "1", "1"], "OUT_OF_RANGE"),
    ("lists", ["2", "2", "1", "1", "1"], "OUT_OF_RANGE"),
    ("hash", ["4", "5"], "OUT_OF_RANGE"),
])
def test_traps_match_iree_status(flow, function, inputs, status):
    rc, _, err = theirs(flow, function, inputs)
    assert rc != 0 and status in err, err
    ctx = VmContext(load_vmfb(flow))
    with pytest.raises(VmTrap) as e:
        ours(ctx, function, inputs)
    assert e.value.status == status
    assert f"flow.{function}+" in str(e.value)  # names the function and bytecode offset
    if function == "fails":
        assert "x too large" in str(e.value) and "x too large" in err


# -- func / arith / scf compiled for llvm-cpu -----------------------------------------------------

HL_MLIR = """\
func.func @while_loop(%n: i32, %x: f32) -> (i32, f32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%i = %c0, %acc = %x) : (i32, f32) -> (i32, f32) {
    %cond = arith.cmpi slt, %i, %n : i32
    scf.condition(%cond) %i, %acc : i32, f32
  } do {
  ^bb0(%i: i32, %acc: f32):
    %i1 = arith.addi %i, %c1 : i32
    %a2 = arith.mulf %acc, %acc : f32
    %a3 = arith.subf %a2, %acc : f32
    scf.yield %i1, %a3 : i32, f32
  }
  return %r#0, %r#1 : i32, f32
}
func.func @for_loop(%n: index, %x: i64) -> (i64, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f0 = arith.constant 0.5 : f64
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x, %f = %f0) -> (i64, f64) {
    %ii = arith.index_cast %i : index to i64
    %m = arith.muli %a, %ii : i64
    %s = arith.addi %m, %x : i64
    %g = arith.sitofp %s : i64 to f64
    %h = arith.addf %f, %g : f64
    scf.yield %s, %h : i64, f64
  }
  return %r#0, %r#1 : i64, f64
}
func.func @switcher(%k: index, %x: f32) -> f32 {
  %r = scf.index_switch %k -> f32
  case 0 {
    %a = arith.addf %x, %x : f32
    scf.yield %a : f32
  }
  case 3 {
    %a = math.sqrt %x : f32
    scf.yield %a : f32
  }
  case 7 {
    %a = arith.negf %x : f32
    scf.yield %a : f32
  }
  default {
    scf.yield %x : f32
  }
  return %r : f32
}
func.func @convert(%x: f32, %y: f64) -> (i32, i32, i64, f32, i32) {
  %a = arith.fptosi %x : f32 to i32
  %b = arith.fptoui %x : f32 to i32
  %c = arith.fptosi %x : f32 to i64
  %d = arith.sitofp %b : i32 to f32
  %e = arith.bitcast %x : f32 to i32
  return %a, %b, %c, %d, %e : i32, i32, i64, f32, i32
}
func.func @powers(%x: f32, %n: i64, %y: f64) -> (f32, f64, f32) {
  %a = math.fpowi %x, %n : f32, i64
  %b = math.fpowi %y, %n : f64, i64
  %c = math.powf %x, %x : f32
  return %a, %b, %c : f32, f64, f32
}
func.func @intmath(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32) {
  %one = arith.constant 1 : i32
  %nz = arith.ori %b, %one : i32
  %q = arith.divsi %a, %nz : i32
  %r = arith.remsi %a, %nz : i32
  %u = arith.divui %a, %nz : i32
  %s = arith.shrsi %a, %b : i32
  %m = arith.maxsi %a, %b : i32
  return %q, %r, %u, %s, %m : i32, i32, i32, i32, i32
}
"""


def _hl_jobs():
    jobs = [("while_loop", [str(n), repr(x)]) for n, x in [(0, 2.0), (3, 1.5), (6, 1.01), (10, -0.5), (4, math.nan)]]
    jobs += [("for_loop", [str(n), str(x)]) for n, x in [(0, 3), (5, 2), (40, 3), (70, -1)]]
    jobs += [("switcher", [str(k), repr(x)]) for k in (0, 1, 3, 7, 8) for x in (2.0, -4.0)]
    jobs += [("convert", [repr(x), repr(y)]) for x, y in [(5.5, -2.5), (-2.7, 3e19), (3e9, -1e300),
                                                          (math.nan, math.nan), (-0.5, 0.49999999999999994),
                                                          (2.5, -3.5)]]
    jobs += [("powers", [repr(x), str(n), repr(y)]) for x, n, y in [(1.1, 10, 1.1), (2.0, -3, -2.0), (0.0, -1, 0.0),
                                                                   (-1.5, 7, 3.3), (10.0, 2**32 + 3, 1e10)]]
    jobs += [("intmath", [str(a), str(b)]) for a, b in [(7, 2), (-7, 2), (-2147483648, 3), (100, -1), (5, 40)]]
    return jobs


def test_compiled_scalar_functions_match_iree(tools):
    vmfb = _compile(tools, "hl", HL_MLIR, ["--iree-hal-target-device=local",
                                           "--iree-hal-local-target-device-backends=llvm-cpu",
                                           "--iree-input-demote-f64-to-f32=false",
                                           "--iree-input-demote-i64-to-i32=false"])
    module = load_vmfb(vmfb)
    assert not module.imports  # scalar-only: pure VM code
    compare_many(vmfb, _hl_jobs())


# -- context behaviour without iree-run-module -----------------------------------------------------

IMPORTS_MLIR = """\
vm.module @imp {
  vm.import private optional @host.maybe(%a : i32) -> i32
  vm.import private @host.scale(%a : i64, %f : f32) -> (i64, f32)
  vm.import private @host.total(%a : i32, %b : !vm.buffer ...) -> i64
  vm.global.i32 mutable @inited : i32
  vm.func @__init() {
    %c = vm.const.i32 42
    vm.global.store.i32 %c, @inited : i32
    vm.return
  }
  vm.func @go(%x: i64, %f: f32, %b: !vm.buffer) -> (i64, f32, i64, i32, i32) {
    %r, %g = vm.call @host.scale(%x, %f) : (i64, f32) -> (i64, f32)
    %c = vm.const.i32 3
    %t = vm.call.variadic @host.total(%c, [%b, %b]) : (i32, !vm.buffer ...) -> i64
    %ok = vm.import.resolved @host.maybe : i32
    %i = vm.global.load.i32 @inited : i32
    vm.return %r, %g, %t, %ok, %i : i64, f32, i64, i32, i32
  }
  vm.func @maybe(%x: i32) -> i32 {
    %r = vm.call @host.maybe(%x) : (i32) -> i32
    vm.return %r : i32
  }
  vm.export @__init
  vm.export @go
  vm.export @maybe
}
"""


class _Host(NativeModule):
    name = "host"
    version = 0

    def __init__(self, with_scale=True):
        self.with_scale = with_scale

    def functions(self):
        fns = {"total": NativeFunction("total", "0iCrD_I",
                                       lambda a, bufs: a * 1000 + sum(len(b) for (b,) in bufs))}
        if self.with_scale:
            fns["scale"] = NativeFunction("scale", "0If_If", lambda x, f: (x * 3, f / 2))
        return fns


def test_context_imports_init_and_refs(tools):
    vmfb = _compile(tools, "imp", IMPORTS_MLIR, ["--compile-from=vm"])
    module = load_vmfb(vmfb)
    ctx = VmContext(module, [_Host()])
    buf = VmBuffer(10)
    assert ctx.call("go", [2**40, 3.0, buf]) == [3 * 2**40, 1.5, 3020, 0, 42]
    with pytest.raises(VmTrap) as e:
        ctx.call("maybe", [1])
    assert e.value.status == "NOT_FOUND" and "host.maybe" in str(e.value)
    with pytest.raises(VmTrap) as e:
        VmContext(module, [_Host(with_scale=False)])
    assert e.value.status == "NOT_FOUND" and "host.scale" in str(e.value)
    with pytest.raises(VmTrap):
        VmContext(module, [])


def test_list_and_buffer_refs_unit():
    lst = VmList.of_type("!vm.list<i32>", 2)
    lst.resize(3)
    lst.set_value(1, 2**40 + 5, "i64")
    assert lst.get_value(1, "i32") == 5 and lst.get_value(1, "f32") == 0.0
    with pytest.raises(VmTrap) as e:
        lst.get_value(3, "i32")
    assert e.value.status == "OUT_OF_RANGE"
    ro = VmBuffer(memoryview(b"abcd"), readonly=True)
    with pytest.raises(VmTrap) as e:
        ro.store(struct.Struct("<B"), 0, 1)
    assert e.value.status == "PERMISSION_DENIED"


def test_i64_to_f32_casts_round_once_to_nearest_even():
    """cast.si64.f32 / cast.ui64.f32 against numpy's C cast, bit for bit. iree-run-module prints f32
    results with %g (6 digits), which hides a one-step rounding error, so this compares directly;
    the tie values sit exactly halfway between two f32s, where rounding through a double goes wrong."""
    import random

    import numpy as np

    from amdgpu_cli.vm.numerics import _int_to_f32

    rng = random.Random(7)
    ties = [2**24 + 1, 2**24 + 3, 2**25 + 2, 2**25 + 6, (2**24 + 1) << 38, 2**53 + 2**29]
    values = ties + [-v for v in ties] + [0, 1, -1, 2**63 - 1, -2**63, 2**64 - 1, 2**63]
    values += [rng.getrandbits(rng.randint(1, 64)) for _ in range(20000)]
    for v in values:
        expected = np.float32(np.uint64(v)) if v >= 2**63 else np.float32(np.int64(v))
        assert struct.pack("<f", _int_to_f32(v)) == expected.tobytes(), v

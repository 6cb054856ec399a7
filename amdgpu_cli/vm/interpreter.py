"""Executes VM bytecode: each function is translated once into a list of Python closures.

`Interpreter(module, imports, state)` runs the internal functions of one `BytecodeModule`.
`compile(ordinal)` decodes (and verifies) a function and turns every instruction into a closure
`op(i, r)` over the frame's int bank `i` and ref bank `r`; block markers vanish and branch targets
become closure indices. `invoke(ordinal, args)` runs one call; the loop is:
    result = code[pc](i, r)   None -> next instruction, int -> jump, list -> returned values.
Two translations exist only for speed, since small models spend their time in the interpreter and
not in kernels: the entry block's leading constants are written once into frame templates that
every call copies, and each import call site is straight-line Python generated for its shape
(see `_import_op_factory`).

Register banks (see shared/reference/vmfb.md 2.2): `i` is a list of unsigned 32-bit Python ints
(i32 values, f32 bit patterns, i64/f64 as lo/hi pairs at n, n+1); `r` holds refs or None. Frames
are zeroed. A ref operand with the move bit leaves its register null where the op moves it.

Raw values between frames (call arguments and results, `invoke`): `i`/`f` -> u32 int (f32 bits),
`I`/`F` -> u64 int (f64 bits), `r` -> object. Imports (`ImportBinding`) see host values instead:
signed ints, Python floats, refs, and for a variadic span `C...D` a list of tuples. A
`TrappingImport` (what the `hal` module exports) turns the project errors it raises into traps with
their status; its call sites do that inline instead of calling through its wrapper.

The numerics (integer and float helpers, conversions, libm, calling-convention values) are
numerics.py's. Semantics follow the IREE 3.13.0 x86-64 runtime (runtime/src/iree/vm/ops.h,
bytecode/dispatch.c): two's-complement wraparound, C division (division by zero or INT_MIN / -1 is a native crash there:
here a VmTrap, status INTERNAL), shift amounts masked to the width, f32 results rounded from
double (exact for + - * / and sqrt), libm math through cffi so that results are the same bits as
the runtime's (expf, powf, lroundf, remainderf, ...), float->int casts through lround/llround,
`min(a, b) = b < a ? b : a`, unfused fma, NaN results with x86's default NaN. Traps are VmTrap
(`module.fn+0000001F: message`).

Not implemented: suspending on `yield` / deferred imports (yield continues at its target, as a
synchronous host that resumes at once would see), and call stacks deeper than Python's recursion
limit allows (a VmTrap RESOURCE_EXHAUSTED).
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple, Sequence

from amdgpu_cli.errors import STATUS_NAMES, AmdgpuCliError
from amdgpu_cli.formats.vmfb import BytecodeModule, split_cconv
from amdgpu_cli.vm.decoder import Instruction, verify
from amdgpu_cli.vm.isa import CASES, REG, REMAP, RESULTS
from amdgpu_cli.siphash import siphash24_keyed
# (host_to_raw, raw_to_host, cconv_slots and _int_to_f32 are re-exported from here too)
from amdgpu_cli.vm.numerics import (  # noqa: F401
    M32, M64, SIGN32, _FLOAT_UNARY_LIBM, _S_I16, _S_I8, _S_U16, _S_U8, _U32, _U64, _cconv_items,
    _div, _f32_to_u64, _float_ops, _fpowi, _int_binary, _int_to_f32, _int_unary, _libm, _round_f32,
    cconv_slots, f32_bits, f32_value, f64_bits, f64_value, host_to_raw, raw_to_host, s32, s64,
)
from amdgpu_cli.vm.refs import (VmBuffer, VmList, VmTrap, ref_type_name,
                                type_matcher, type_matches)

__all__ = ["ImportBinding", "Interpreter", "ModuleState", "TrappingImport", "VmTrap", "cconv_slots",
           "host_to_raw", "raw_to_host"]


class ImportBinding(NamedTuple):  # NamedTuples here: cheaper to define than dataclasses at start-up
    """A resolved import: `fn(*host_args) -> sequence of host results` (or None for none)."""

    full_name: str
    cconv: str
    fn: Callable


class TrappingImport:
    """An import function whose project errors are traps: `function(*host_args)` returns its
    results (a bare value, None for a null ref, when the cconv has exactly one result; else a
    sequence or None) and may raise any AmdgpuCliError.

    Called (`__call__`) it is an ordinary import: results as a tuple, errors as VmTraps with the
    same status. Generated call sites call `function` itself and do both inline, which saves a
    Python call level on every call of the hottest imports (the `hal` module's)."""

    __slots__ = ("function", "single")

    def __init__(self, function: Callable, single: bool):
        self.function = function
        self.single = single

    def __call__(self, *args):
        try:
            out = self.function(*args)
        except VmTrap:
            raise
        except AmdgpuCliError as e:
            raise VmTrap(str(e), status=e.status) from e
        return (out,) if self.single else out


class ModuleState(NamedTuple):
    """Per-context storage of one module: value globals, ref globals, rodata buffers."""

    global_bytes: bytearray
    global_refs: list
    rodata_buffers: dict


class CompiledFunction:
    """A translated function. A call starts at `code[entry]` with frames copied from
    `i_init` / `r_init`: zeroed, except for the registers the skipped `code[:entry]` (constants)
    write."""

    __slots__ = ("ordinal", "label", "i32_count", "ref_count", "code", "offsets", "arg_slots",
                 "results", "entry", "i_init", "r_init")

    def __init__(self, ordinal, label, i32_count, ref_count, code, offsets, arg_slots, results):
        self.ordinal = ordinal
        self.label = label
        self.i32_count = i32_count
        self.ref_count = ref_count
        self.code = code
        self.offsets = offsets
        self.arg_slots = arg_slots
        self.results = results
        self.entry = 0
        self.i_init = [0] * i32_count
        self.r_init = [None] * ref_count


# -- the interpreter ----------------------------------------------------------------------------

class Interpreter:
    """Runs the internal functions of one module against one `ModuleState` and import table."""

    def __init__(self, module: BytecodeModule, imports: Sequence[ImportBinding | None],
                 state: ModuleState):
        self.module = module
        self.imports = list(imports)
        self.state = state
        self._functions: dict[int, CompiledFunction] = {}

    # public -----------------------------------------------------------------------------------

    def function(self, ordinal: int) -> CompiledFunction:
        fn = self._functions.get(ordinal)
        if fn is None:
            fn = self._compile(ordinal)
            self._functions[ordinal] = fn
        return fn

    def invoke(self, ordinal: int, args: Sequence) -> list:
        """Call internal function `ordinal` with raw args; returns its raw results."""
        fn = self._functions.get(ordinal) or self.function(ordinal)  # a call fewer when compiled
        if len(args) != len(fn.arg_slots):
            raise VmTrap(f"{fn.label} takes {len(fn.arg_slots)} arguments, {len(args)} given",
                         status="INVALID_ARGUMENT")
        return self._run(fn, args)

    # execution --------------------------------------------------------------------------------

    def _run(self, fn: CompiledFunction, args) -> list:
        i = fn.i_init.copy()
        r = fn.r_init.copy()
        for (ch, slot), v in zip(fn.arg_slots, args):
            if ch == "r":
                r[slot] = v
            elif ch in "IF":
                i[slot] = v & M32
                i[slot + 1] = v >> 32
            else:
                i[slot] = v
        code = fn.code
        pc = fn.entry
        try:
            while True:
                nxt = code[pc](i, r)
                if nxt is None:
                    pc += 1
                elif nxt.__class__ is int:
                    pc = nxt
                else:
                    return nxt
        except VmTrap as e:
            raise e.located(fn.label, fn.offsets[pc]) from None
        except RecursionError:
            raise VmTrap("call stack exhausted", status="RESOURCE_EXHAUSTED",
                         function=fn.label, offset=fn.offsets[pc]) from None

    # translation ------------------------------------------------------------------------------

    def _compile(self, ordinal: int) -> CompiledFunction:
        m = self.module
        code_ins = verify(m, ordinal)
        desc = m.functions[ordinal]
        args, results = split_cconv(m.signatures[ordinal].cconv or "0v_v")
        label = m.function_label(ordinal)
        block_index: dict[int, int] = {}
        body: list[Instruction] = []
        for ins in code_ins:
            if ins.is_block:
                block_index[ins.offset] = len(body)
            else:
                body.append(ins)
        builder = _Builder(self, block_index, results)
        code = builder.code
        for ins in body:
            try:
                code.append(builder.build(ins))
            except VmTrap as e:
                raise e.located(label, ins.offset) from None
        fn = CompiledFunction(ordinal, label, max(desc.i32_register_count, 1),
                              desc.ref_register_count, code, [ins.offset for ins in body],
                              cconv_slots(args), results)
        _fold_entry_constants(fn, body)
        builder.constants = _constant_registers(fn, body)
        return fn


# Ops that write a constant (a literal, null, or the context's rodata buffer) to one register.
_CONSTANT_OPS = frozenset(("const.i32", "const.i32.zero", "const.i64", "const.i64.zero",
                           "const.f32", "const.f32.zero", "const.f64", "const.f64.zero",
                           "const.ref.zero", "const.ref.rodata"))


def _fold_entry_constants(fn: CompiledFunction, body: list[Instruction]) -> None:
    """Run the entry block's leading constant ops once, into the frame templates, and start calls
    after them: compiled functions open with their constants, which every call would otherwise
    write again (an op dispatch each). An entry block is never a branch target (MLIR), so those
    ops run exactly once per call, first. A constant written over an argument register stops the
    folding (the argument is stored before the ops run)."""
    i_args, r_args = set(), set()
    for ch, slot in fn.arg_slots:
        if ch == "r":
            r_args.add(slot)
        else:
            i_args.update((slot, slot + 1) if ch in "IF" else (slot,))
    for ins in body:
        if ins.mnemonic not in _CONSTANT_OPS:
            break
        operands = ins.operands
        if ins.mnemonic.startswith("const.ref."):
            target = operands["value" if ins.mnemonic == "const.ref.rodata" else "result"].index
            if target in r_args:
                break
        else:
            target = operands["result"].index
            if target in i_args or ("64" in ins.mnemonic and target + 1 in i_args):
                break
        fn.code[fn.entry](fn.i_init, fn.r_init)
        fn.entry += 1


def _constant_registers(fn: CompiledFunction, body: list[Instruction]) -> dict[int, int]:
    """{int register: raw u32 value} of the registers every call of `fn` reads the same value
    from: those no argument and no op after the folded entry constants writes (their value is
    the frame template's: the folded constant, or zero). Import call sites read them as
    literals (`_Builder.import_call`). Write sites: REG fields marked as written, call results,
    and the destinations of branch remaps; a write whose width is not known from its field
    counts for the pair (index, index + 1)."""
    written = set()
    for ch, slot in fn.arg_slots:
        if ch != "r":
            written.update((slot, slot + 1) if ch in "IF" else (slot,))

    def mark(field_bank, reg) -> None:
        if not reg.is_ref:
            written.add(reg.index)
            if field_bank not in ("i32", "f32"):
                written.add(reg.index + 1)

    for ins in body[fn.entry:]:
        operands = ins.operands
        for field in ins.op.fields:
            kind = field.kind
            if kind == REG:
                if field.write:
                    mark(field.bank, operands[field.name])
            elif kind == RESULTS:
                for reg in operands[field.name]:
                    mark(None, reg)
            elif kind == REMAP:
                for _, dst in operands[field.name]:
                    mark(None, dst)
            elif kind == CASES:
                for _, remap in operands[field.name]:
                    for _, dst in remap:
                        mark(None, dst)
    i_init = fn.i_init
    return {n: i_init[n] for n in range(len(i_init)) if n not in written}


def _null(what: str) -> VmTrap:
    return VmTrap(f"{what} is null", status="INVALID_ARGUMENT")


def _buffer(value, what="buffer") -> VmBuffer:
    if value is None:
        raise _null(what)
    if not isinstance(value, VmBuffer):
        raise VmTrap(f"{what} is a {ref_type_name(value) or type(value).__name__}, not a vm.buffer",
                     status="INVALID_ARGUMENT")
    return value


def _list(value) -> VmList:
    if value is None:
        raise _null("list")
    if not isinstance(value, VmList):
        raise VmTrap(f"ref is a {ref_type_name(value) or type(value).__name__}, not a vm.list",
                     status="INVALID_ARGUMENT")
    return value


class _Builder:
    """Turns decoded instructions into closures for one function."""

    def __init__(self, interp: Interpreter, block_index: dict[int, int], results: str):
        self.interp = interp
        self.module = interp.module
        self.state = interp.state
        self.block_index = block_index
        self.results = results
        self.code: list = []  # the ops built so far; an op's index is len(code) while it is built
        # {int register: raw value} read the same by every call (_constant_registers), set once
        # the function is built: import call sites compiled on their second run use it.
        self.constants: dict[int, int] | None = None

    # helpers ------------------------------------------------------------------------------------

    def target(self, offset: int) -> int:
        return self.block_index[offset]

    def remap(self, pairs):
        """A function applying a branch remap list, or None when it is empty."""
        if not pairs:
            return None
        steps = tuple((s.is_ref, s.index, d.index, s.move) for s, d in pairs)
        if not any(s[0] for s in steps):
            if len(steps) == 1:
                _, si, di, _ = steps[0]

                def one(i, r):
                    i[di] = i[si]
                return one
            moves = tuple((si, di) for _, si, di, _ in steps)

            def ints(i, r):
                for si, di in moves:
                    i[di] = i[si]
            return ints

        def apply(i, r):
            for is_ref, si, di, mv in steps:
                if is_ref:
                    r[di] = r[si]
                    if mv and si != di:
                        r[si] = None
                else:
                    i[di] = i[si]
        return apply

    def jump(self, offset: int, pairs):
        idx = self.target(offset)
        rm = self.remap(pairs)
        if rm is None:
            return lambda i, r: idx

        def op(i, r):
            rm(i, r)
            return idx
        return op

    # dispatch -----------------------------------------------------------------------------------

    def build(self, ins: Instruction):
        mn = ins.mnemonic
        o = ins.operands
        parts = mn.split(".")
        head = parts[0]
        method = getattr(self, "op_" + mn.replace(".", "_"), None)
        if method is not None:
            return method(ins, o)
        # Generic families.
        if head in ("add", "sub", "mul", "div", "rem", "and", "or", "xor", "min", "max", "fma",
                    "not", "abs", "ctlz", "neg", "ceil", "floor", "round", "atan", "atan2", "cos",
                    "sin", "exp", "exp2", "expm1", "log", "log10", "log1p", "log2", "pow", "rsqrt",
                    "sqrt", "tanh", "erf", "fpowi"):
            return self.arith(ins, o, parts)
        if head in ("shl", "shr"):
            return self.shift(ins, o, parts)
        if head == "cmp":
            return self.compare(ins, o, parts)
        if head == "global":
            return self.global_op(ins, o, parts)
        if head == "list" and parts[1] in ("get", "set"):
            return self.list_value(ins, o, parts)
        if head == "buffer" and parts[1] in ("load", "store", "fill"):
            return self.buffer_elem(ins, o, parts)
        if head in ("select", "switch", "const"):
            return getattr(self, head)(ins, o, parts)
        if head in ("cast", "bitcast", "trunc", "ext"):
            return self.convert(ins, o, parts)
        raise VmTrap(f"op {mn} is not implemented by this interpreter", status="UNIMPLEMENTED")

    # arithmetic ----------------------------------------------------------------------------------

    def arith(self, ins, o, parts):
        head = parts[0]
        ty = parts[1]
        d = o["result"].index
        if ty in ("i32", "i64"):
            bits = 32 if ty == "i32" else 64
            kind = head + ("." + parts[2] if len(parts) > 2 else "")
            if bits == 32:
                if head == "fma":
                    a, b, c = o["first"].index, o["second"].index, o["third"].index

                    def op(i, r):
                        i[d] = (i[a] * i[b] + i[c]) & M32
                    return op
                f = _int_binary(kind, 32)
                if f is not None:
                    a, b = o["left"].index, o["right"].index
                    if kind == "add":
                        def op(i, r):
                            i[d] = (i[a] + i[b]) & M32
                        return op

                    def op(i, r):
                        i[d] = f(i[a], i[b])
                    return op
                f = _int_unary(kind, 32)
                a = o["operand"].index

                def op(i, r):
                    i[d] = f(i[a])
                return op
            # i64
            if head == "fma":
                a, b, c = o["first"].index, o["second"].index, o["third"].index

                def op(i, r):
                    v = ((i[a] | i[a + 1] << 32) * (i[b] | i[b + 1] << 32)
                         + (i[c] | i[c + 1] << 32)) & M64
                    i[d] = v & M32
                    i[d + 1] = v >> 32
                return op
            f = _int_binary(kind, 64)
            if f is not None:
                a, b = o["left"].index, o["right"].index

                def op(i, r):
                    v = f(i[a] | i[a + 1] << 32, i[b] | i[b + 1] << 32)
                    i[d] = v & M32
                    i[d + 1] = v >> 32
                return op
            f = _int_unary(kind, 64)
            a = o["operand"].index

            def op(i, r):
                v = f(i[a] | i[a + 1] << 32)
                i[d] = v & M32
                i[d + 1] = v >> 32
            return op
        # floats
        bits = 32 if ty == "f32" else 64
        if bits == 32:
            rd = lambda i, n: f32_value(i[n])  # noqa: E731

            def wr(i, n, x):
                i[n] = f32_bits(x)
        else:
            def rd(i, n):
                return f64_value(i[n] | i[n + 1] << 32)

            def wr(i, n, x):
                v = f64_bits(x)
                i[n] = v & M32
                i[n + 1] = v >> 32
        _, _, rnd, dnan, sfx = _float_ops(bits)
        if head in ("add", "sub", "mul", "div", "rem", "min", "max", "atan2", "pow"):
            a, b = o["left"].index, o["right"].index
            if head == "add":
                f = lambda x, y: x + y  # noqa: E731
            elif head == "sub":
                f = lambda x, y: x - y  # noqa: E731
            elif head == "mul":
                f = lambda x, y: x * y  # noqa: E731
            elif head == "div":
                f = lambda x, y: _div(x, y, dnan)  # noqa: E731
            elif head == "rem":
                f = getattr(_libm, "remainder" + sfx)
            elif head == "atan2":
                f = getattr(_libm, "atan2" + sfx)
            elif head == "pow":
                f = getattr(_libm, "pow" + sfx)
            else:
                # min/max return one operand's exact bits (NaN payloads included).
                is_min = head == "min"
                if bits == 32:
                    def op(i, r):
                        x, y = f32_value(i[a]), f32_value(i[b])
                        i[d] = i[b] if ((y < x) if is_min else (x < y)) else i[a]
                else:
                    def op(i, r):
                        x, y = rd(i, a), rd(i, b)
                        src = b if ((y < x) if is_min else (x < y)) else a
                        i[d], i[d + 1] = i[src], i[src + 1]
                return op

            def op(i, r):
                wr(i, d, f(rd(i, a), rd(i, b)))
            return op
        if head == "fma":  # unfused in the 3.13.0 x86-64 build
            a, b, c = o["first"].index, o["second"].index, o["third"].index

            def op(i, r):
                wr(i, d, rnd(rd(i, a) * rd(i, b)) + rd(i, c))
            return op
        if head == "fpowi":
            a, e = o["base"].index, o["exponent"].index

            def op(i, r):
                wr(i, d, _fpowi(rd(i, a), s32(i[e]), rnd))
            return op
        a = o["operand"].index
        if head in ("abs", "neg"):
            if bits == 32:
                if head == "abs":
                    def op(i, r):
                        i[d] = i[a] & 0x7FFFFFFF
                else:
                    def op(i, r):
                        i[d] = i[a] ^ SIGN32
            else:
                if head == "abs":
                    def op(i, r):
                        i[d], i[d + 1] = i[a], i[a + 1] & 0x7FFFFFFF
                else:
                    def op(i, r):
                        i[d], i[d + 1] = i[a], i[a + 1] ^ SIGN32
            return op
        if head == "rsqrt":
            sq = getattr(_libm, "sqrt" + sfx)

            def op(i, r):
                wr(i, d, _div(1.0, sq(rd(i, a)), dnan))
            return op
        if head == "round" and len(parts) > 2:  # round.f32.even: IREE's pre-C23 emulation
            rf = getattr(_libm, "round" + sfx)

            def even(x):
                y = rf(x)
                if abs(x - y) == 0.5 and math.fmod(y, 2.0) != 0:
                    y = y - 1.0 if y > 0.0 else y + 1.0
                return y

            def op(i, r):
                wr(i, d, even(rd(i, a)))
            return op
        if head in _FLOAT_UNARY_LIBM:
            f = getattr(_libm, head + sfx)

            def op(i, r):
                wr(i, d, f(rd(i, a)))
            return op
        raise VmTrap(f"op {ins.mnemonic} is not implemented", status="UNIMPLEMENTED")

    def shift(self, ins, o, parts):
        ty = parts[1]
        kind = parts[0] + ("." + parts[2] if len(parts) > 2 else "")
        a, n, d = o["operand"].index, o["amount"].index, o["result"].index
        if ty == "i32":
            if kind == "shl":
                def op(i, r):
                    i[d] = (i[a] << (i[n] & 31)) & M32
            elif kind == "shr.s":
                def op(i, r):
                    i[d] = (s32(i[a]) >> (i[n] & 31)) & M32
            else:
                def op(i, r):
                    i[d] = i[a] >> (i[n] & 31)
            return op
        if kind == "shl":
            def f(v, k):
                return (v << k) & M64
        elif kind == "shr.s":
            def f(v, k):
                return (s64(v) >> k) & M64
        else:
            def f(v, k):
                return v >> k

        def op(i, r):
            v = f(i[a] | i[a + 1] << 32, i[n] & 63)
            i[d] = v & M32
            i[d + 1] = v >> 32
        return op

    def compare(self, ins, o, parts):
        # cmp.<pred>.<type>[.<s|u|o>]
        pred, ty = parts[1], parts[2]
        mod = parts[3] if len(parts) > 3 else ""
        d = o["result"].index
        if ty == "ref":
            if pred == "nz":
                a = o["operand"].index

                def op(i, r):
                    i[d] = int(r[a] is not None)
                return op
            a, b = o["left"].index, o["right"].index
            if pred == "eq":
                def op(i, r):
                    i[d] = int(r[a] is r[b])
            else:
                def op(i, r):
                    i[d] = int(r[a] is not r[b])
            return op
        if ty in ("i32", "i64"):
            wide = ty == "i64"
            if wide:
                def rd(i, n):
                    return i[n] | i[n + 1] << 32
                conv = s64
            else:
                def rd(i, n):
                    return i[n]
                conv = s32
            if pred == "nz":
                a = o["operand"].index

                def op(i, r):
                    i[d] = int(rd(i, a) != 0)
                return op
            a, b = o["left"].index, o["right"].index
            if pred == "eq":
                def op(i, r):
                    i[d] = int(rd(i, a) == rd(i, b))
            elif pred == "ne":
                def op(i, r):
                    i[d] = int(rd(i, a) != rd(i, b))
            elif mod == "s":
                def op(i, r):
                    i[d] = int(conv(rd(i, a)) < conv(rd(i, b)))
            else:
                def op(i, r):
                    i[d] = int(rd(i, a) < rd(i, b))
            return op
        # floats: .o is false on NaN (but see ne), .u true on NaN.
        if ty == "f32":
            def rdf(i, n):
                return f32_value(i[n])
        else:
            def rdf(i, n):
                return f64_value(i[n] | i[n + 1] << 32)
        rd = rdf
        if pred == "nan":
            a = o["operand"].index

            def op(i, r):
                x = rd(i, a)
                i[d] = int(x != x)
            return op
        a, b = o["left"].index, o["right"].index
        test = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y,
                "lt": lambda x, y: x < y, "lte": lambda x, y: x <= y}[pred]
        # The runtime's `ne.o` is C `!=`, which is true on NaN (ops.h), unlike LLVM's `one`.
        unordered_value = mod == "u" or pred == "ne"

        def op(i, r):
            x, y = rd(i, a), rd(i, b)
            if x != x or y != y:
                i[d] = int(unordered_value)
            else:
                i[d] = int(test(x, y))
        return op

    # conversions -------------------------------------------------------------------------------

    def convert(self, ins, o, parts):
        mn = ins.mnemonic
        a, d = o["operand"].index, o["result"].index

        def r32(i):
            return i[a]

        def r64(i):
            return i[a] | i[a + 1] << 32

        def w32(i, v):
            i[d] = v & M32

        def w64(i, v):
            v &= M64
            i[d] = v & M32
            i[d + 1] = v >> 32

        def f32r(i):
            return f32_value(i[a])

        def f64r(i):
            return f64_value(i[a] | i[a + 1] << 32)

        def wf32(i, x):
            i[d] = f32_bits(x)

        def wf64(i, x):
            w64(i, f64_bits(x))

        table = {
            "trunc.i32.i8": (r32, lambda v: v & 0xFF, w32),
            "trunc.i32.i16": (r32, lambda v: v & 0xFFFF, w32),
            "ext.i8.i32.s": (r32, lambda v: (v & 0xFF) - ((v & 0x80) << 1), w32),
            "ext.i8.i32.u": (r32, lambda v: v & 0xFF, w32),
            "ext.i16.i32.s": (r32, lambda v: (v & 0xFFFF) - ((v & 0x8000) << 1), w32),
            "ext.i16.i32.u": (r32, lambda v: v & 0xFFFF, w32),
            "trunc.i64.i32": (r64, lambda v: v & M32, w32),
            "ext.i32.i64.s": (r32, s32, w64),
            "ext.i32.i64.u": (r32, lambda v: v, w64),
            "cast.si32.f32": (r32, lambda v: float(s32(v)), wf32),
            "cast.ui32.f32": (r32, float, wf32),
            "cast.si64.f32": (r64, lambda v: _int_to_f32(s64(v)), wf32),
            "cast.ui64.f32": (r64, _int_to_f32, wf32),
            "cast.f32.si32": (f32r, lambda x: _libm.lroundf(x), w32),
            "cast.f32.ui32": (f32r, lambda x: _libm.llroundf(x), w32),
            "cast.f32.si64": (f32r, lambda x: _libm.llroundf(x), w64),
            "cast.f32.ui64": (f32r, lambda x: _f32_to_u64(_libm.roundf(x)), w64),
            "bitcast.i32.f32": (r32, lambda v: v, w32),
            "bitcast.f32.i32": (r32, lambda v: v, w32),
            "trunc.f64.f32": (f64r, lambda x: x, wf32),
            "ext.f32.f64": (f32r, lambda x: x, wf64),
            "cast.si32.f64": (r32, lambda v: float(s32(v)), wf64),
            "cast.ui32.f64": (r32, float, wf64),
            "cast.f64.si32": (f64r, lambda x: _libm.lroundf(_round_f32(x)), w32),
            "cast.f64.ui32": (f64r, lambda x: _libm.llroundf(_round_f32(x)), w32),
            "cast.si64.f64": (r64, lambda v: float(s64(v)), wf64),
            "cast.ui64.f64": (r64, float, wf64),
            "cast.f64.si64": (f64r, lambda x: _libm.lround(x), w64),
            "cast.f64.ui64": (f64r, lambda x: _libm.llround(x), w64),
            "bitcast.i64.f64": (r64, lambda v: v, w64),
            "bitcast.f64.i64": (r64, lambda v: v, w64),
        }
        if mn not in table:
            raise VmTrap(f"op {mn} is not implemented", status="UNIMPLEMENTED")
        rd, f, wr = table[mn]

        def op(i, r):
            wr(i, f(rd(i)))
        return op

    # constants, select, switch -------------------------------------------------------------------

    def const(self, ins, o, parts):
        mn = ins.mnemonic
        if mn == "const.ref.zero":
            d = o["result"].index

            def op(i, r):
                r[d] = None
            return op
        if mn == "const.ref.rodata":
            d = o["value"].index
            n = o["rodata"]
            buf = self.interp_rodata(n)

            def op(i, r):
                r[d] = buf
            return op
        d = o["result"].index
        ty = parts[1]
        zero = len(parts) > 2 and parts[2] == "zero"
        value = 0 if zero else o["value"]
        if ty == "i32":
            v = value & M32
        elif ty == "i64":
            v = value & M64
        elif ty == "f32":
            v = f32_bits(value)
        else:
            v = f64_bits(value)
        if ty in ("i32", "f32"):
            def op(i, r):
                i[d] = v
        else:
            lo, hi = v & M32, v >> 32

            def op(i, r):
                i[d] = lo
                i[d + 1] = hi
        return op

    def interp_rodata(self, n: int) -> VmBuffer:
        cache = self.state.rodata_buffers
        buf = cache.get(n)
        if buf is None:
            seg = self.module.rodata[n]
            data = seg.data
            buf = VmBuffer(data if data.readonly else memoryview(bytes(data)), readonly=True)
            cache[n] = buf
        return buf

    def select(self, ins, o, parts):
        c = o["condition"].index
        d = o["result"].index
        t, f = o["true_value"], o["false_value"]
        ty = parts[1]
        if ty == "ref":
            ti, tm, fi, fm = t.index, t.move, f.index, f.move
            tname = self.module.types[o["true_value_type_def"]]

            def op(i, r):
                if i[c]:
                    v = r[ti]
                    if tm and ti != d:
                        r[ti] = None
                    if fm and fi != d:
                        r[fi] = None
                else:
                    v = r[fi]
                    if fm and fi != d:
                        r[fi] = None
                    if tm and ti != d:
                        r[ti] = None
                if not type_matches(v, tname):
                    raise VmTrap(f"select.ref: ref of type {ref_type_name(v)} is not {tname}",
                                 status="INVALID_ARGUMENT")
                r[d] = v
            return op
        ti, fi = t.index, f.index
        if ty in ("i32", "f32"):
            def op(i, r):
                i[d] = i[ti] if i[c] else i[fi]
        else:
            def op(i, r):
                s = ti if i[c] else fi
                i[d], i[d + 1] = i[s], i[s + 1]
        return op

    def switch(self, ins, o, parts):
        x = o["index"].index
        d = o["result"].index
        ty = parts[1]
        values = tuple(v.index for v in o["values"])
        n = len(values)
        dv = o["default_value"]
        if ty == "ref":
            moves = tuple(v.move for v in o["values"])
            tname = self.module.types[o["type_def"]]
            di, dm = dv.index, dv.move

            def op(i, r):
                k = s32(i[x])
                if 0 <= k < n:
                    v = r[values[k]]
                else:
                    v = r[di]
                if not type_matches(v, tname):
                    raise VmTrap(f"switch.ref: ref of type {ref_type_name(v)} is not {tname}",
                                 status="INVALID_ARGUMENT")
                if dm and di != d:
                    r[di] = None
                for src, mv in zip(values, moves):
                    if mv and src != d:
                        r[src] = None
                r[d] = v
            return op
        di = dv.index
        if ty in ("i32", "f32"):
            def op(i, r):
                k = s32(i[x])
                i[d] = i[values[k]] if 0 <= k < n else i[di]
        elif ty == "i64":  # the runtime reads one 32-bit slot and sign-extends it (3.13.0 quirk)
            def op(i, r):
                k = s32(i[x])
                if 0 <= k < n:
                    v = i[values[k]]
                    i[d], i[d + 1] = v, (M32 if v & SIGN32 else 0)
                else:
                    i[d], i[d + 1] = i[di], i[di + 1]
        else:
            def op(i, r):
                k = s32(i[x])
                s = values[k] if 0 <= k < n else di
                i[d], i[d + 1] = i[s], i[s + 1]
        return op

    # globals -------------------------------------------------------------------------------------

    def global_op(self, ins, o, parts):
        # global.{load,store}[.indirect].{i32,i64,f32,f64,ref}
        store = parts[1] == "store"
        indirect = parts[2] == "indirect"
        ty = parts[-1]
        st = self.state
        if ty == "ref":
            refs = st.global_refs
            tname = self.module.types[o["type_def"]]
            v = o["value"]
            vi, vm = v.index, v.move
            count = len(refs)
            if indirect:
                g = o["global"].index

                def ordinal(i):
                    k = s32(i[g])
                    if not 0 <= k < count:
                        raise VmTrap(f"global ref ordinal {k} out of range ({count} ref globals)",
                                     status="OUT_OF_RANGE")
                    return k
            else:
                k0 = o["global"]

                def ordinal(i):
                    return k0
            matches = type_matcher(tname)
            if store:
                def op(i, r):
                    value = r[vi]
                    if not matches(value):
                        raise VmTrap(f"global.store.ref: ref of type {ref_type_name(value)} is "
                                     f"not {tname}", status="INVALID_ARGUMENT")
                    refs[ordinal(i)] = value
                    if vm:
                        r[vi] = None
            elif not indirect:
                # Every call loads its device and cached command buffers: no ordinal function,
                # and no type check for the class that last passed it (`vm_type` is a class
                # attribute, so the check is the same for every instance).
                passed = [None]

                def op(i, r):
                    value = refs[k0]
                    if value.__class__ is not passed[0]:
                        if not matches(value):
                            raise VmTrap(f"global.load.ref: ref of type {ref_type_name(value)} "
                                         f"is not {tname}", status="INVALID_ARGUMENT")
                        passed[0] = value.__class__
                    r[vi] = value
            else:
                def op(i, r):
                    value = refs[ordinal(i)]
                    if not matches(value):
                        raise VmTrap(f"global.load.ref: ref of type {ref_type_name(value)} is "
                                     f"not {tname}", status="INVALID_ARGUMENT")
                    r[vi] = value
            return op
        data = st.global_bytes
        wide = ty in ("i64", "f64")
        fmt = _U64 if wide else _U32
        size = fmt.size
        cap = len(data)
        reg = o["value"] if store else o["result"]
        n = reg.index
        if indirect:
            g = o["byte_offset"].index

            def where(i):
                off = s32(i[g])
                if off < 0 or off + size > cap:
                    raise VmTrap(f"global byte offset {off} out of range ({cap} bytes of globals)",
                                 status="OUT_OF_RANGE")
                return off
        else:
            off0 = o["byte_offset"]

            def where(i):
                return off0
        pack, unpack = fmt.pack_into, fmt.unpack_from
        if store:
            if wide:
                def op(i, r):
                    pack(data, where(i), i[n] | i[n + 1] << 32)
            else:
                def op(i, r):
                    pack(data, where(i), i[n])
        else:
            if wide:
                def op(i, r):
                    v = unpack(data, where(i))[0]
                    i[n] = v & M32
                    i[n + 1] = v >> 32
            else:
                def op(i, r):
                    i[n] = unpack(data, where(i))[0]
        return op

    # lists ---------------------------------------------------------------------------------------

    def op_list_alloc(self, ins, o):
        tname = self.module.types[o["element_type"]]
        c, d = o["initial_capacity"].index, o["result"].index

        def op(i, r):
            r[d] = VmList.of_type(tname, s32(i[c]))
        return op

    def op_list_reserve(self, ins, o):
        lst, n = o["list"].index, o["minimum_capacity"].index

        def op(i, r):
            _list(r[lst]).reserve(s32(i[n]))
        return op

    def op_list_resize(self, ins, o):
        lst, n = o["list"].index, o["new_size"].index

        def op(i, r):
            _list(r[lst]).resize(s32(i[n]))
        return op

    def op_list_size(self, ins, o):
        lst, d = o["list"].index, o["result"].index

        def op(i, r):
            i[d] = len(_list(r[lst]))
        return op

    def list_value(self, ins, o, parts):
        get = parts[1] == "get"
        ty = parts[2]
        lst, x = o["list"].index, o["index"].index
        if ty == "ref":
            if get:
                tname = self.module.types[o["type_def"]]
                d = o["result"].index

                def op(i, r):
                    r[d] = _list(r[lst]).get_ref(s32(i[x]), tname)
            else:
                v = o["value"]
                vi, vm = v.index, v.move

                def op(i, r):
                    _list(r[lst]).set_ref(s32(i[x]), r[vi])
                    if vm:
                        r[vi] = None
            return op
        n = (o["result"] if get else o["value"]).index
        if ty == "i32":
            def rd(i):
                return s32(i[n])

            def wr(i, v):
                i[n] = v & M32
        elif ty == "i64":
            def rd(i):
                return s64(i[n] | i[n + 1] << 32)

            def wr(i, v):
                v &= M64
                i[n], i[n + 1] = v & M32, v >> 32
        elif ty == "f32":
            def rd(i):
                return f32_value(i[n])

            def wr(i, v):
                i[n] = f32_bits(v)
        else:
            def rd(i):
                return f64_value(i[n] | i[n + 1] << 32)

            def wr(i, v):
                v = f64_bits(v)
                i[n], i[n + 1] = v & M32, v >> 32
        if get:
            def op(i, r):
                wr(i, _list(r[lst]).get_value(s32(i[x]), ty))
        else:
            def op(i, r):
                _list(r[lst]).set_value(s32(i[x]), rd(i), ty)
        return op

    # buffers -------------------------------------------------------------------------------------

    def buffer_elem(self, ins, o, parts):
        # buffer.load.{i8,i16}.{u,s} / buffer.load.{i32,i64,f32,f64}; store.*; fill.*
        kind, ty = parts[1], parts[2]
        signed = len(parts) > 3 and parts[3] == "s"
        if ty == "i8":
            fmt = _S_I8 if signed else _S_U8
        elif ty == "i16":
            fmt = _S_I16 if signed else _S_U16
        elif ty in ("i32", "f32"):
            fmt = _U32
        else:
            fmt = _U64
        wide = ty in ("i64", "f64")
        narrow_mask = {"i8": 0xFF, "i16": 0xFFFF}.get(ty)
        if kind == "load":
            b, off, d = o["source_buffer"].index, o["source_offset"].index, o["result"].index
            if wide:
                def op(i, r):
                    v = _buffer(r[b], "source buffer").load(fmt, s64(i[off] | i[off + 1] << 32))
                    i[d], i[d + 1] = v & M32, v >> 32
            else:
                def op(i, r):
                    i[d] = _buffer(r[b], "source buffer").load(
                        fmt, s64(i[off] | i[off + 1] << 32)) & M32
            return op
        b, off = o["target_buffer"].index, o["target_offset"].index
        v = o["value"].index
        if wide:
            def value(i):
                return i[v] | i[v + 1] << 32
        elif narrow_mask is not None:
            fmt = _S_U8 if ty == "i8" else _S_U16

            def value(i):
                return i[v] & narrow_mask
        else:
            def value(i):
                return i[v]
        if kind == "store":
            def op(i, r):
                _buffer(r[b], "target buffer").store(fmt, s64(i[off] | i[off + 1] << 32), value(i))
            return op
        ln = o["length"].index

        def op(i, r):
            _buffer(r[b], "target buffer").fill(fmt, s64(i[off] | i[off + 1] << 32),
                                                s64(i[ln] | i[ln + 1] << 32), value(i))
        return op

    def op_buffer_alloc(self, ins, o):
        ln, al, d = o["length"].index, o["alignment"].index, o["result"].index

        def op(i, r):
            n = s64(i[ln] | i[ln + 1] << 32)
            if n < 0:
                raise VmTrap(f"negative buffer length {n}", status="INVALID_ARGUMENT")
            r[d] = VmBuffer(n, alignment=s32(i[al]) or 16)
        return op

    def op_buffer_clone(self, ins, o):
        s, off, ln = o["source"].index, o["offset"].index, o["length"].index
        al, d = o["alignment"].index, o["result"].index

        def op(i, r):
            src = _buffer(r[s], "source buffer")
            start = s64(i[off] | i[off + 1] << 32)
            n = s64(i[ln] | i[ln + 1] << 32)
            src.check_range(start, n)
            r[d] = VmBuffer(bytearray(src.data[start:start + n]), alignment=s32(i[al]) or 16)
        return op

    def op_buffer_length(self, ins, o):
        b, d = o["buffer"].index, o["result"].index

        def op(i, r):
            n = len(_buffer(r[b]))
            i[d], i[d + 1] = n & M32, n >> 32
        return op

    def op_buffer_copy(self, ins, o):
        s, so = o["source_buffer"].index, o["source_offset"].index
        t, to, ln = o["target_buffer"].index, o["target_offset"].index, o["length"].index

        def op(i, r):
            src = _buffer(r[s], "source buffer")
            dst = _buffer(r[t], "target buffer")
            a = s64(i[so] | i[so + 1] << 32)
            b = s64(i[to] | i[to + 1] << 32)
            n = s64(i[ln] | i[ln + 1] << 32)
            src.check_range(a, n)
            dst.check_writable()
            dst.check_range(b, n)
            dst.data[b:b + n] = bytes(src.data[a:a + n])
        return op

    def op_buffer_compare(self, ins, o):
        lb, lo = o["lhs_buffer"].index, o["lhs_offset"].index
        rb, ro, ln = o["rhs_buffer"].index, o["rhs_offset"].index, o["length"].index
        d = o["result"].index

        def op(i, r):
            lhs = _buffer(r[lb], "lhs buffer")
            rhs = _buffer(r[rb], "rhs buffer")
            a = s64(i[lo] | i[lo + 1] << 32)
            b = s64(i[ro] | i[ro + 1] << 32)
            n = s64(i[ln] | i[ln + 1] << 32)
            lhs.check_range(a, n)
            rhs.check_range(b, n)
            i[d] = int(lhs.data[a:a + n] == rhs.data[b:b + n])
        return op

    def op_buffer_hash(self, ins, o):
        b, off, ln, d = (o["source_buffer"].index, o["source_offset"].index, o["length"].index,
                         o["result"].index)

        def op(i, r):
            buf = _buffer(r[b], "source buffer")
            a = s64(i[off] | i[off + 1] << 32)
            n = s64(i[ln] | i[ln + 1] << 32)
            buf.check_range(a, n)
            h = siphash24_keyed(bytes(range(16)), bytes(buf.data[a:a + n]))
            i[d], i[d + 1] = h & M32, h >> 32
        return op

    # refs ----------------------------------------------------------------------------------------

    def op_cast_any_ref(self, ins, o):
        s, d = o["operand"], o["result"].index
        si, sm = s.index, s.move
        tname = self.module.types[o["result_type"]]

        def op(i, r):
            v = r[si]
            if not type_matches(v, tname):
                raise VmTrap(f"cast.any.ref: ref of type {ref_type_name(v)} is not {tname}",
                             status="INVALID_ARGUMENT")
            if sm and si != d:
                r[si] = None
            r[d] = v
        return op

    def op_assign_ref(self, ins, o):
        s, d = o["source"], o["result"].index
        si, sm = s.index, s.move

        def op(i, r):
            v = r[si]
            if sm and si != d:
                r[si] = None
            r[d] = v
        return op

    def op_discard_refs(self, ins, o):
        regs = tuple(x.index for x in o["refs"] if x.is_ref)

        def op(i, r):
            for n in regs:
                r[n] = None
        return op

    # control flow ---------------------------------------------------------------------------------

    def op_br(self, ins, o):
        return self.jump(o["dest_pc"], o["operands"])

    op_yield = op_br  # a synchronous host resumes at once
    op_break = op_br

    def op_cond_break(self, ins, o):
        return self.jump(o["dest_pc"], o["operands"])

    def op_cond_br(self, ins, o):
        c = o["condition"].index
        if not o["true_operands"] and not o["false_operands"]:
            # No block arguments on either side: the targets themselves, no jump closure calls.
            ti, fi = self.target(o["true_dest_pc"]), self.target(o["false_dest_pc"])

            def op(i, r):
                return ti if i[c] else fi
            return op
        t = self.jump(o["true_dest_pc"], o["true_operands"])
        f = self.jump(o["false_dest_pc"], o["false_operands"])

        def op(i, r):
            return t(i, r) if i[c] else f(i, r)
        return op

    def op_br_table(self, ins, o):
        x = o["index"].index
        default = self.jump(o["default_dest_pc"], o["default_operands"])
        cases = tuple(self.jump(t, rm) for t, rm in o["cases"])
        n = len(cases)

        def op(i, r):
            k = s32(i[x])
            return cases[k](i, r) if 0 <= k < n else default(i, r)
        return op

    def op_return(self, ins, o):
        regs = o["operands"]
        items = []
        for ch, reg in zip(self.results, regs):
            items.append((ch, reg.index, reg.move))
        items = tuple(items)

        def op(i, r):
            out = []
            for ch, n, mv in items:
                if ch == "r":
                    out.append(r[n])
                    if mv:
                        r[n] = None
                elif ch in "IF":
                    out.append(i[n] | i[n + 1] << 32)
                else:
                    out.append(i[n])
            return out
        return op

    def op_fail(self, ins, o):
        s = o["status"].index
        message = o["message"]

        def op(i, r):
            code = i[s]
            if code:
                name = STATUS_NAMES[code] if code < len(STATUS_NAMES) else f"status {code}"
                raise VmTrap(message, status=name)
        return op

    def op_import_resolved(self, ins, o):
        callee = o["import_ordinal"]
        d = o["result"].index
        value = int(callee.is_import and callee.ordinal < len(self.interp.imports)
                    and self.interp.imports[callee.ordinal] is not None)

        def op(i, r):
            i[d] = value
        return op

    def op_trace(self, ins, o):
        moved = tuple(x.index for x in o["operands"] if x.is_ref and x.move)

        def op(i, r):
            for n in moved:
                r[n] = None
        return op

    op_print = op_trace

    def op_call(self, ins, o):
        return self.call(ins, o, None, None)

    def op_call_variadic(self, ins, o):
        return self.call(ins, o, o["segment_sizes"], None)

    def op_call_yieldable(self, ins, o):
        return self.call(ins, o, None, self.target(o["dest_pc"]))

    def op_call_variadic_yieldable(self, ins, o):
        return self.call(ins, o, o["segment_sizes"], self.target(o["dest_pc"]))

    def call(self, ins, o, segments, resume):
        callee = o["callee_ordinal"]
        args = o["operands"]
        results = o["results"]
        if callee.is_import:
            return self.import_call(callee.ordinal, args, results, segments, resume)
        interp = self.interp
        ordinal = callee.ordinal
        sig_args, sig_results = split_cconv(self.module.signatures[ordinal].cconv or "0v_v")
        arg_items = tuple((ch, reg.index, reg.move) for ch, reg in zip(sig_args, args))
        res_items = tuple((ch, reg.index) for ch, reg in zip(sig_results, results))
        cache = []

        def op(i, r):
            vals = []
            for ch, n, mv in arg_items:
                if ch == "r":
                    vals.append(r[n])
                    if mv:
                        r[n] = None
                elif ch in "IF":
                    vals.append(i[n] | i[n + 1] << 32)
                else:
                    vals.append(i[n])
            if not cache:
                cache.append(interp.function(ordinal))
            out = interp._run(cache[0], vals)
            for (ch, n), v in zip(res_items, out):
                if ch == "r":
                    r[n] = v
                elif ch in "IF":
                    i[n], i[n + 1] = v & M32, v >> 32
                else:
                    i[n] = v
            return resume
        return op

    def import_call(self, ordinal, args, results, segments, resume):
        imp = self.module.imports[ordinal]
        binding = self.interp.imports[ordinal] if ordinal < len(self.interp.imports) else None
        name = imp.full_name
        if binding is None:
            def op(i, r):
                raise VmTrap(f"import {name} is not resolved", status="NOT_FOUND")
            return op
        arg_frag, res_frag = split_cconv(imp.cconv or "0v_v")
        # Shape: per top-level item (char, move) or ("C", ((char, move), ...) per tuple), with
        # the operand registers in read order beside it.
        shape, regs = [], []
        operands = iter(args)
        for k, item in enumerate(_cconv_items(arg_frag)):
            if item.startswith("C"):
                count = segments[k] if segments is not None else 0
                tuples = []
                for _ in range(count):
                    tup = []
                    for ch in item[1:]:
                        reg = next(operands)
                        tup.append((ch, reg.move))
                        regs.extend(_registers(ch, reg))
                    tuples.append(tuple(tup))
                shape.append(("C", tuple(tuples)))
            else:
                reg = next(operands)
                shape.append((item, reg.move))
                regs.extend(_registers(item, reg))
        res_chars = res_frag if res_frag != "v" else ""
        for ch, reg in zip(res_chars, results):
            regs.extend(_registers(ch, reg))
        fn = binding.fn
        direct = isinstance(fn, TrappingImport)
        shape = tuple(shape)
        # The first run walks the shape; a second run generates the site's code (with the
        # operands that are constant registers as literals) and swaps it in. Most sites of a
        # process run once (`__init`'s, and each of a CLI run's single call), and generating
        # code for them is a few ms of every start.
        code, pc = self.code, len(self.code)
        builder = self
        runs = 0

        def op(i, r):
            nonlocal runs
            runs += 1
            if runs <= WALKED_IMPORT_RUNS:
                return _walk_import_call(i, r, fn, shape, res_chars, regs, name, resume)
            literal, values = _literal_operands(shape, regs, builder.constants or {})
            factory = _import_op_factory(shape, res_chars, direct, literal)
            compiled = code[pc] = factory(fn.function if direct else fn, resume, name, *values)
            return compiled(i, r)
        return op


# -- import calls ---------------------------------------------------------------------------------
#
# An import call is the hot path of compiled models (every hal.* call is one), so each call site's
# operand marshalling is generated as straight-line Python (no per-operand loop, branch or helper
# call). The code depends only on the call's shape (cconv, move bits, span sizes), not on its
# registers, which the factory takes as closure values: call sites of one shape share one compiled
# factory, so the compile cost is paid per shape and process, not per site.

_import_factories: dict[tuple, Callable] = {}
# Runs of a call site that walk its shape before its code is generated (tests set 0, so that a
# single run of each corpus function goes through generated code).
WALKED_IMPORT_RUNS = 1

# Raw register(s) -> host value (raw_to_host), as expressions over register names {n} / {hi}.
_IMPORT_READ = {
    "i": "(i[{n}] ^ 0x80000000) - 0x80000000",
    "I": "((i[{n}] | i[{hi}] << 32) ^ 0x8000000000000000) - 0x8000000000000000",
    "f": "f32_value(i[{n}])",
    "F": "f64_value(i[{n}] | i[{hi}] << 32)",
}
# Host result `v` -> raw register(s) (host_to_raw).
_IMPORT_WRITE = {
    "i": ["i[{n}] = int({v}) & 0xFFFFFFFF"],
    "f": ["i[{n}] = f32_bits(float({v}))"],
    "I": ["raw = int({v}) & 0xFFFFFFFFFFFFFFFF", "i[{n}] = raw & 0xFFFFFFFF",
          "i[{hi}] = raw >> 32"],
    "F": ["raw = f64_bits(float({v}))", "i[{n}] = raw & 0xFFFFFFFF", "i[{hi}] = raw >> 32"],
    "r": ["r[{n}] = {v}"],
}


def _registers(ch: str, reg) -> tuple[int, ...]:
    """The register(s) an operand of cconv char `ch` names: an i64/f64 pair for I and F."""
    return (reg.index, reg.index + 1) if ch in "IF" else (reg.index,)


def _walk_import_call(i: list, r: list, fn: Callable, shape: tuple, res_chars: str,
                      regs: tuple, name: str, resume):
    """One import call the slow way, walking `shape` as the generated code of that shape
    would: operands read in order (a moved ref reads as null to later operands), `fn` called
    as an ordinary import (a TrappingImport's `__call__` turns errors into traps), results
    checked and written to their registers."""
    next_reg = iter(regs).__next__

    def read(ch: str, move: bool):
        n = next_reg()
        if ch == "r":
            value = r[n]
            if move:
                r[n] = None
            return value
        return raw_to_host(ch, i[n] | i[next_reg()] << 32 if ch in "IF" else i[n])

    args = []
    for ch, spec in shape:
        if ch == "C":
            args.append([tuple(read(c, move) for c, move in tup) for tup in spec])
        else:
            args.append(read(ch, spec))
    out = _import_results(fn(*args), len(res_chars), name)
    for ch, value in zip(res_chars, out):
        n = next_reg()
        if ch == "r":
            r[n] = value
            continue
        raw = host_to_raw(ch, value)
        if ch in "IF":
            i[n], i[next_reg()] = raw & M32, raw >> 32
        else:
            i[n] = raw
    return resume


def _literal_operands(shape: tuple, regs: tuple, constants: dict[int, int]
                      ) -> tuple[tuple[bool, ...], list]:
    """Which scalar operands of an import site read constant registers (one flag per int/float
    operand, in read order), and the factory's values: such an operand's host value in place of
    its register(s); every other register as it is."""
    literal, values = [], []
    registers = iter(regs)
    next_reg = registers.__next__

    def operand(ch: str) -> None:
        n = next_reg()
        if ch == "r":
            values.append(n)
            return
        wide = ch in "IF"
        hi = next_reg() if wide else None
        if n in constants and (not wide or hi in constants):
            raw = constants[n] | constants[hi] << 32 if wide else constants[n]
            literal.append(True)
            values.append(raw_to_host(ch, raw))
        else:
            literal.append(False)
            values.append(n)
            if wide:
                values.append(hi)

    for ch, spec in shape:
        if ch == "C":
            for tup in spec:
                for c, _ in tup:
                    operand(c)
        else:
            operand(ch)
    values.extend(registers)  # the result registers
    return tuple(literal), values


def _import_results(out, count: int, name: str) -> tuple:
    """An import's return value as `count` results: None is none, a bare value is one."""
    if out is None:
        out = ()
    elif not isinstance(out, (tuple, list)):
        out = (out,)
    if len(out) != count:
        raise VmTrap(f"import {name} returned {len(out)} values, expected {count}",
                     status="INTERNAL")
    return out


def _import_op_factory(shape: tuple, res_chars: str, direct: bool,
                       literal: tuple[bool, ...] = ()) -> Callable:
    """`factory(fn, resume, name, *values) -> op` for import calls of this shape; `direct`:
    `fn` is a TrappingImport's function (one result comes bare). `literal` flags the scalar
    operands (in read order) whose value is passed as a host value instead of register(s)
    (`_literal_operands`); the rest, and results, are register indices."""
    key = (shape, res_chars, direct, literal)
    factory = _import_factories.get(key)
    if factory is not None:
        return factory
    params, body = [], []
    next_literal = iter(literal).__next__

    def register(ch: str) -> dict:
        """Names for the next operand's register(s): {n}, and {hi} for an I/F pair."""
        n = f"n{len(params)}"
        params.append(n)
        if ch not in "IF":
            return {"n": n}
        params.append(n + "h")
        return {"n": n, "hi": n + "h"}

    def read(ch: str, move: bool) -> str:
        if ch != "r":
            if literal and next_literal():
                name = f"k{len(params)}"
                params.append(name)
                return name
            return _IMPORT_READ[ch].format(**register(ch))
        names = register(ch)
        # Refs are read into locals in operand order, so a moved register reads as null to any
        # later operand that names it, as the operands are read one at a time.
        temp = f"a{len(body)}"
        body.append(f"{temp} = r[{names['n']}]")
        if move:
            body.append(f"r[{names['n']}] = None")
        return temp

    call_args = []
    for ch, spec in shape:
        if ch == "C":
            tuples = ["(" + "".join(read(c, mv) + ", " for c, mv in tup) + ")" for tup in spec]
            call_args.append("[" + ", ".join(tuples) + "]")
        else:
            call_args.append(read(ch, spec))
    call = f"out = fn({', '.join(call_args)})"
    if direct:
        body.extend(("try:", f"    {call}", "except VmTrap:", "    raise",
                     "except AmdgpuCliError as e:",
                     "    raise VmTrap(str(e), status=e.status) from e"))
    else:
        body.append(call)
    count = len(res_chars)
    if direct and count == 1:
        names = register(res_chars)
        body.extend(line.format(v="out", **names) for line in _IMPORT_WRITE[res_chars])
    elif count:
        body.append(f"if out.__class__ is not tuple or len(out) != {count}:")
        body.append(f"    out = _import_results(out, {count}, name)")
        for k, ch in enumerate(res_chars):
            names = register(ch)
            body.extend(line.format(v=f"out[{k}]", **names) for line in _IMPORT_WRITE[ch])
    else:
        body.append("if out is not None:")
        body.append("    _import_results(out, 0, name)")
    body.append("return resume")
    source = (f"def factory(fn, resume, name, {', '.join(params)}):\n"
              "    def op(i, r):\n" + "".join(f"        {line}\n" for line in body) +
              "    return op\n")
    namespace = {"f32_value": f32_value, "f64_value": f64_value, "f32_bits": f32_bits,
                 "f64_bits": f64_bits, "_import_results": _import_results, "VmTrap": VmTrap,
                 "AmdgpuCliError": AmdgpuCliError}
    exec(compile(source, "<vm import call>", "exec"), namespace)
    factory = _import_factories[key] = namespace["factory"]
    return factory

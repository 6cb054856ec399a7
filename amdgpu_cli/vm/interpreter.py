"""Executes VM bytecode: each function is translated once into a list of Python closures.

`Interpreter(module, imports, state)` runs the internal functions of one `BytecodeModule`.
`function(ordinal)` decodes (and verifies) a function and turns every instruction into a closure
`op(i, r)` over the frame's int bank `i` and ref bank `r` (op_table.py: each opcode's builder);
block markers vanish and branch targets become closure indices. `invoke(ordinal, args)` runs one
call; the loop is:
    result = code[pc](i, r)   None -> next instruction, int -> jump, list -> returned values.
Two translations exist only for speed, since small models spend their time in the interpreter and
not in kernels: the entry block's leading constants are written once into frame templates that
every call copies, and each import call site is straight-line Python generated for its shape
(import_calls.py).

The VM's parts, as IREE keeps them apart: isa.py (the instruction set), decoder.py (decoding and
the verifier), numerics.py (the runtime's arithmetic), op_table.py with ops_numeric.py,
ops_data.py and ops_control.py (what each op does), import_calls.py (calls into other modules),
this file (functions and the loop), context.py (modules, imports, globals).

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

from typing import NamedTuple, Sequence

from amdgpu_cli.formats.vmfb import BytecodeModule, split_cconv
from amdgpu_cli.vm.decoder import Instruction, verify
from amdgpu_cli.vm.import_calls import ImportBinding
from amdgpu_cli.vm.isa import CASES, REG, REMAP, RESULTS
from amdgpu_cli.vm.numerics import M32, cconv_slots
from amdgpu_cli.vm.op_table import FunctionBuilder, writes_constant
from amdgpu_cli.vm.refs import VmTrap

__all__ = ["CompiledFunction", "Interpreter", "ModuleState"]


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
        return self.run(fn, args)

    # execution --------------------------------------------------------------------------------

    def run(self, fn: CompiledFunction, args) -> list:
        """Call compiled `fn` with raw args (as many as it takes); returns its raw results."""
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
        builder = FunctionBuilder(self, block_index, results)
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
        if not writes_constant(ins):
            break
        # A constant op writes one register, its one written field: a ref, or an i32/f32 or
        # the pair of an i64/f64.
        field = next(f for f in ins.op.fields if f.write)
        target = ins.operands[field.name].index
        if field.bank == "ref":
            if target in r_args:
                break
        elif target in i_args or (field.bank in ("i64", "f64") and target + 1 in i_args):
            break
        fn.code[fn.entry](fn.i_init, fn.r_init)
        fn.entry += 1


def _constant_registers(fn: CompiledFunction, body: list[Instruction]) -> dict[int, int]:
    """{int register: raw u32 value} of the registers every call of `fn` reads the same value
    from: those no argument and no op after the folded entry constants writes (their value is
    the frame template's: the folded constant, or zero). Import call sites read them as
    literals (import_calls.import_call). Write sites: REG fields marked as written, call results,
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

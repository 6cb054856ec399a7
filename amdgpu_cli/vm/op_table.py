"""The op table: every opcode of the ISA (isa.py) and the builder that translates it.

`FunctionBuilder(interp, block_index, results).build(ins)` turns one decoded instruction into
its closure `op(i, r)`: it looks the instruction's opcode up in its table's rows (`CORE`,
`EXT_F32`, `EXT_F64`, keyed on the opcode byte as isa.py numbers it) and calls the row's
builder as `builder(fb, operands, *parameters)`. A row's parameters say what the mnemonic says
(the kind of operation, the register type, load or store, ...), so no builder reads the
mnemonic. The builders are ops_numeric.py's (N), ops_data.py's (D) and ops_control.py's (C);
tests/vm/test_op_table.py checks that the rows cover the ISA exactly.
"""

from __future__ import annotations

from amdgpu_cli.vm import ops_control as C, ops_data as D, ops_numeric as N
from amdgpu_cli.vm.refs import VmTrap


class FunctionBuilder:
    """What the builders of one function's ops share: the interpreter (module, module state,
    imports), the block markers' closure indices, the function's result types and the closures
    built so far (an op's index is len(code) while it is built)."""

    def __init__(self, interp, block_index: dict[int, int], results: str):
        self.interp = interp
        self.module = interp.module
        self.state = interp.state
        self.block_index = block_index
        self.results = results
        self.code: list = []
        # {int register: raw value} read the same by every call (interpreter._constant_registers),
        # set once the function is built: import call sites compiled on their second run use it.
        self.constants: dict[int, int] | None = None

    def target(self, offset: int) -> int:
        """The closure index of the block whose marker is at `offset`."""
        return self.block_index[offset]

    def build(self, ins):
        op = ins.op
        row = ROWS[op.table].get(op.code)
        if row is None:
            raise VmTrap(f"op {op.mnemonic} is not implemented by this interpreter",
                         status="UNIMPLEMENTED")
        return row[0](self, ins.operands, *row[1:])


def writes_constant(ins) -> bool:
    """Whether `ins` writes a constant (a literal, zero, null or a rodata buffer) to one register."""
    op = ins.op
    row = ROWS[op.table].get(op.code)
    return row is not None and row[0] in _CONSTANT_BUILDERS


_CONSTANT_BUILDERS = frozenset((D.const_value, D.const_ref_zero, D.const_ref_rodata))

# Rows: opcode: (builder, parameters...),  # mnemonic

CORE: dict[int, tuple] = {
    0x00: (D.global_access, False, False, "i32"),  # global.load.i32
    0x01: (D.global_access, True, False, "i32"),  # global.store.i32
    0x02: (D.global_access, False, True, "i32"),  # global.load.indirect.i32
    0x03: (D.global_access, True, True, "i32"),  # global.store.indirect.i32
    0x04: (D.global_access, False, False, "i64"),  # global.load.i64
    0x05: (D.global_access, True, False, "i64"),  # global.store.i64
    0x06: (D.global_access, False, True, "i64"),  # global.load.indirect.i64
    0x07: (D.global_access, True, True, "i64"),  # global.store.indirect.i64
    0x08: (D.global_access, False, False, "ref"),  # global.load.ref
    0x09: (D.global_access, True, False, "ref"),  # global.store.ref
    0x0A: (D.global_access, False, True, "ref"),  # global.load.indirect.ref
    0x0B: (D.global_access, True, True, "ref"),  # global.store.indirect.ref
    0x0C: (D.const_value, "i32", True),  # const.i32.zero
    0x0D: (D.const_value, "i32", False),  # const.i32
    0x0E: (D.const_value, "i64", True),  # const.i64.zero
    0x0F: (D.const_value, "i64", False),  # const.i64
    0x10: (D.const_ref_zero,),  # const.ref.zero
    0x11: (D.const_ref_rodata,),  # const.ref.rodata
    0x12: (D.list_alloc,),  # list.alloc
    0x13: (D.list_reserve,),  # list.reserve
    0x14: (D.list_size,),  # list.size
    0x15: (D.list_resize,),  # list.resize
    0x16: (D.list_value, True, "i32"),  # list.get.i32
    0x17: (D.list_value, False, "i32"),  # list.set.i32
    0x18: (D.list_value, True, "i64"),  # list.get.i64
    0x19: (D.list_value, False, "i64"),  # list.set.i64
    0x1A: (D.list_value, True, "ref"),  # list.get.ref
    0x1B: (D.list_value, False, "ref"),  # list.set.ref
    0x1C: (D.select, "i32"),  # select.i32
    0x1D: (D.select, "i64"),  # select.i64
    0x1E: (D.select, "ref"),  # select.ref
    0x1F: (D.switch, "i32"),  # switch.i32
    0x20: (D.switch, "i64"),  # switch.i64
    0x21: (D.switch, "ref"),  # switch.ref
    0x22: (N.int_arith, "add", 32),  # add.i32
    0x23: (N.int_arith, "sub", 32),  # sub.i32
    0x24: (N.int_arith, "mul", 32),  # mul.i32
    0x25: (N.int_arith, "div.s", 32),  # div.i32.s
    0x26: (N.int_arith, "div.u", 32),  # div.i32.u
    0x27: (N.int_arith, "rem.s", 32),  # rem.i32.s
    0x28: (N.int_arith, "rem.u", 32),  # rem.i32.u
    0x29: (N.int_arith, "fma", 32),  # fma.i32
    0x2A: (N.int_arith, "add", 64),  # add.i64
    0x2B: (N.int_arith, "sub", 64),  # sub.i64
    0x2C: (N.int_arith, "mul", 64),  # mul.i64
    0x2D: (N.int_arith, "div.s", 64),  # div.i64.s
    0x2E: (N.int_arith, "div.u", 64),  # div.i64.u
    0x2F: (N.int_arith, "rem.s", 64),  # rem.i64.s
    0x30: (N.int_arith, "rem.u", 64),  # rem.i64.u
    0x31: (N.int_arith, "fma", 64),  # fma.i64
    0x32: (N.int_arith, "not", 32),  # not.i32
    0x33: (N.int_arith, "and", 32),  # and.i32
    0x34: (N.int_arith, "or", 32),  # or.i32
    0x35: (N.int_arith, "xor", 32),  # xor.i32
    0x36: (N.int_arith, "not", 64),  # not.i64
    0x37: (N.int_arith, "and", 64),  # and.i64
    0x38: (N.int_arith, "or", 64),  # or.i64
    0x39: (N.int_arith, "xor", 64),  # xor.i64
    0x3A: (N.shift, "shl", 32),  # shl.i32
    0x3B: (N.shift, "shr.s", 32),  # shr.i32.s
    0x3C: (N.shift, "shr.u", 32),  # shr.i32.u
    0x3D: (N.shift, "shl", 64),  # shl.i64
    0x3E: (N.shift, "shr.s", 64),  # shr.i64.s
    0x3F: (N.shift, "shr.u", 64),  # shr.i64.u
    0x40: (N.convert, "i32", N.trunc_i8, "i32"),  # trunc.i32.i8
    0x41: (N.convert, "i32", N.trunc_i16, "i32"),  # trunc.i32.i16
    0x42: (N.convert, "i64", N.trunc_i32, "i32"),  # trunc.i64.i32
    0x43: (N.convert, "i32", N.sext_i8, "i32"),  # ext.i8.i32.s
    0x44: (N.convert, "i32", N.trunc_i8, "i32"),  # ext.i8.i32.u
    0x45: (N.convert, "i32", N.sext_i16, "i32"),  # ext.i16.i32.s
    0x46: (N.convert, "i32", N.trunc_i16, "i32"),  # ext.i16.i32.u
    0x47: (N.convert, "i32", N.s32, "i64"),  # ext.i32.i64.s
    0x48: (N.convert, "i32", N.same, "i64"),  # ext.i32.i64.u
    0x49: (N.compare, "eq", "i32"),  # cmp.eq.i32
    0x4A: (N.compare, "ne", "i32"),  # cmp.ne.i32
    0x4B: (N.compare, "lt", "i32", "s"),  # cmp.lt.i32.s
    0x4C: (N.compare, "lt", "i32", "u"),  # cmp.lt.i32.u
    0x4D: (N.compare, "nz", "i32"),  # cmp.nz.i32
    0x4E: (N.compare, "eq", "i64"),  # cmp.eq.i64
    0x4F: (N.compare, "ne", "i64"),  # cmp.ne.i64
    0x50: (N.compare, "lt", "i64", "s"),  # cmp.lt.i64.s
    0x51: (N.compare, "lt", "i64", "u"),  # cmp.lt.i64.u
    0x52: (N.compare, "nz", "i64"),  # cmp.nz.i64
    0x53: (N.compare, "eq", "ref"),  # cmp.eq.ref
    0x54: (N.compare, "ne", "ref"),  # cmp.ne.ref
    0x55: (N.compare, "nz", "ref"),  # cmp.nz.ref
    0x56: (C.br,),  # br
    0x57: (C.cond_br,),  # cond_br
    0x58: (C.call, False, False),  # call
    0x59: (C.call, True, False),  # call.variadic
    0x5A: (C.return_,),  # return
    0x5B: (C.fail,),  # fail
    0x5C: (C.import_resolved,),  # import.resolved
    0x5D: (C.br,),  # yield
    0x5E: (C.trace,),  # trace
    0x5F: (C.trace,),  # print
    0x60: (C.br,),  # cond_break
    0x61: (C.br,),  # break
    0x62: (D.buffer_elem, "load", "i8"),  # buffer.load.i8.u
    0x63: (D.buffer_elem, "load", "i8", True),  # buffer.load.i8.s
    0x64: (D.buffer_elem, "load", "i16"),  # buffer.load.i16.u
    0x65: (D.buffer_elem, "load", "i16", True),  # buffer.load.i16.s
    0x66: (D.buffer_elem, "load", "i32"),  # buffer.load.i32
    0x67: (D.buffer_elem, "load", "i64"),  # buffer.load.i64
    0x68: (D.buffer_elem, "store", "i8"),  # buffer.store.i8
    0x69: (D.buffer_elem, "store", "i16"),  # buffer.store.i16
    0x6A: (D.buffer_elem, "store", "i32"),  # buffer.store.i32
    0x6B: (D.buffer_elem, "store", "i64"),  # buffer.store.i64
    0x6C: (D.buffer_alloc,),  # buffer.alloc
    0x6D: (D.buffer_clone,),  # buffer.clone
    0x6E: (D.buffer_length,),  # buffer.length
    0x6F: (D.buffer_copy,),  # buffer.copy
    0x70: (D.buffer_compare,),  # buffer.compare
    0x71: (D.buffer_elem, "fill", "i8"),  # buffer.fill.i8
    0x72: (D.buffer_elem, "fill", "i16"),  # buffer.fill.i16
    0x73: (D.buffer_elem, "fill", "i32"),  # buffer.fill.i32
    0x74: (D.buffer_elem, "fill", "i64"),  # buffer.fill.i64
    0x75: (N.int_arith, "ctlz", 32),  # ctlz.i32
    0x76: (N.int_arith, "ctlz", 64),  # ctlz.i64
    0x77: (N.int_arith, "abs", 32),  # abs.i32
    0x78: (N.int_arith, "abs", 64),  # abs.i64
    0x7A: (N.int_arith, "min.s", 32),  # min.i32.s
    0x7B: (N.int_arith, "min.u", 32),  # min.i32.u
    0x7C: (N.int_arith, "max.s", 32),  # max.i32.s
    0x7D: (N.int_arith, "max.u", 32),  # max.i32.u
    0x7E: (N.int_arith, "min.s", 64),  # min.i64.s
    0x7F: (N.int_arith, "min.u", 64),  # min.i64.u
    0x80: (N.int_arith, "max.s", 64),  # max.i64.s
    0x81: (N.int_arith, "max.u", 64),  # max.i64.u
    0x82: (D.cast_any_ref,),  # cast.any.ref
    0x83: (C.br_table,),  # br_table
    0x84: (D.buffer_hash,),  # buffer.hash
    0x85: (D.discard_refs,),  # discard.refs
    0x86: (D.assign_ref,),  # assign.ref
    0x87: (C.call, False, True),  # call.yieldable
    0x88: (C.call, True, True),  # call.variadic.yieldable
}

EXT_F32: dict[int, tuple] = {
    0x00: (D.global_access, False, False, "f32"),  # global.load.f32
    0x01: (D.global_access, True, False, "f32"),  # global.store.f32
    0x02: (D.global_access, False, True, "f32"),  # global.load.indirect.f32
    0x03: (D.global_access, True, True, "f32"),  # global.store.indirect.f32
    0x04: (D.const_value, "f32", True),  # const.f32.zero
    0x05: (D.const_value, "f32", False),  # const.f32
    0x06: (D.list_value, True, "f32"),  # list.get.f32
    0x07: (D.list_value, False, "f32"),  # list.set.f32
    0x08: (D.select, "f32"),  # select.f32
    0x09: (D.switch, "f32"),  # switch.f32
    0x0A: (N.float_arith, "add", 32),  # add.f32
    0x0B: (N.float_arith, "sub", 32),  # sub.f32
    0x0C: (N.float_arith, "mul", 32),  # mul.f32
    0x0D: (N.float_arith, "div", 32),  # div.f32
    0x0E: (N.float_arith, "rem", 32),  # rem.f32
    0x0F: (N.float_arith, "fma", 32),  # fma.f32
    0x10: (N.float_arith, "abs", 32),  # abs.f32
    0x11: (N.float_arith, "neg", 32),  # neg.f32
    0x12: (N.float_arith, "ceil", 32),  # ceil.f32
    0x13: (N.float_arith, "floor", 32),  # floor.f32
    0x14: (N.convert, "i32", N.si32_to_float, "f32"),  # cast.si32.f32
    0x15: (N.convert, "i32", float, "f32"),  # cast.ui32.f32
    0x16: (N.convert, "f32", N.f32_lround, "i32"),  # cast.f32.si32
    0x17: (N.convert, "f32", N.f32_llround, "i32"),  # cast.f32.ui32
    0x18: (N.convert, "i32", N.same, "i32"),  # bitcast.i32.f32
    0x19: (N.convert, "i32", N.same, "i32"),  # bitcast.f32.i32
    0x1A: (N.float_arith, "atan", 32),  # atan.f32
    0x1B: (N.float_arith, "atan2", 32),  # atan2.f32
    0x1C: (N.float_arith, "cos", 32),  # cos.f32
    0x1D: (N.float_arith, "sin", 32),  # sin.f32
    0x1E: (N.float_arith, "exp", 32),  # exp.f32
    0x1F: (N.float_arith, "exp2", 32),  # exp2.f32
    0x20: (N.float_arith, "expm1", 32),  # expm1.f32
    0x21: (N.float_arith, "log", 32),  # log.f32
    0x22: (N.float_arith, "log10", 32),  # log10.f32
    0x23: (N.float_arith, "log1p", 32),  # log1p.f32
    0x24: (N.float_arith, "log2", 32),  # log2.f32
    0x25: (N.float_arith, "pow", 32),  # pow.f32
    0x26: (N.float_arith, "rsqrt", 32),  # rsqrt.f32
    0x27: (N.float_arith, "sqrt", 32),  # sqrt.f32
    0x28: (N.float_arith, "tanh", 32),  # tanh.f32
    0x29: (N.float_arith, "erf", 32),  # erf.f32
    0x2A: (N.compare, "eq", "f32", "o"),  # cmp.eq.f32.o
    0x2B: (N.compare, "eq", "f32", "u"),  # cmp.eq.f32.u
    0x2C: (N.compare, "ne", "f32", "o"),  # cmp.ne.f32.o
    0x2D: (N.compare, "ne", "f32", "u"),  # cmp.ne.f32.u
    0x2E: (N.compare, "lt", "f32", "o"),  # cmp.lt.f32.o
    0x2F: (N.compare, "lt", "f32", "u"),  # cmp.lt.f32.u
    0x30: (N.compare, "lte", "f32", "o"),  # cmp.lte.f32.o
    0x31: (N.compare, "lte", "f32", "u"),  # cmp.lte.f32.u
    0x32: (N.compare, "nan", "f32"),  # cmp.nan.f32
    0x33: (D.buffer_elem, "load", "f32"),  # buffer.load.f32
    0x34: (D.buffer_elem, "store", "f32"),  # buffer.store.f32
    0x35: (D.buffer_elem, "fill", "f32"),  # buffer.fill.f32
    0x36: (N.float_arith, "round", 32),  # round.f32
    0x37: (N.float_arith, "min", 32),  # min.f32
    0x38: (N.float_arith, "max", 32),  # max.f32
    0x39: (N.float_arith, "round.even", 32),  # round.f32.even
    0x3A: (N.convert, "f32", N.f32_llround, "i64"),  # cast.f32.si64
    0x3B: (N.convert, "f32", N.f32_round_u64, "i64"),  # cast.f32.ui64
    0x3C: (N.convert, "i64", N.si64_to_f32, "f32"),  # cast.si64.f32
    0x3D: (N.convert, "i64", N._int_to_f32, "f32"),  # cast.ui64.f32
    0x3E: (N.float_arith, "fpowi", 32),  # fpowi.f32
}

EXT_F64: dict[int, tuple] = {
    0x00: (D.global_access, False, False, "f64"),  # global.load.f64
    0x01: (D.global_access, True, False, "f64"),  # global.store.f64
    0x02: (D.global_access, False, True, "f64"),  # global.load.indirect.f64
    0x03: (D.global_access, True, True, "f64"),  # global.store.indirect.f64
    0x04: (D.const_value, "f64", True),  # const.f64.zero
    0x05: (D.const_value, "f64", False),  # const.f64
    0x06: (D.list_value, True, "f64"),  # list.get.f64
    0x07: (D.list_value, False, "f64"),  # list.set.f64
    0x08: (D.select, "f64"),  # select.f64
    0x09: (D.switch, "f64"),  # switch.f64
    0x0A: (N.float_arith, "add", 64),  # add.f64
    0x0B: (N.float_arith, "sub", 64),  # sub.f64
    0x0C: (N.float_arith, "mul", 64),  # mul.f64
    0x0D: (N.float_arith, "div", 64),  # div.f64
    0x0E: (N.float_arith, "rem", 64),  # rem.f64
    0x0F: (N.float_arith, "fma", 64),  # fma.f64
    0x10: (N.float_arith, "abs", 64),  # abs.f64
    0x11: (N.float_arith, "neg", 64),  # neg.f64
    0x12: (N.float_arith, "ceil", 64),  # ceil.f64
    0x13: (N.float_arith, "floor", 64),  # floor.f64
    0x14: (N.convert, "f64", N.same, "f32"),  # trunc.f64.f32
    0x15: (N.convert, "f32", N.same, "f64"),  # ext.f32.f64
    0x16: (N.convert, "i32", N.si32_to_float, "f64"),  # cast.si32.f64
    0x17: (N.convert, "i32", float, "f64"),  # cast.ui32.f64
    0x18: (N.convert, "f64", N.f64_lround_f32, "i32"),  # cast.f64.si32
    0x19: (N.convert, "f64", N.f64_llround_f32, "i32"),  # cast.f64.ui32
    0x1A: (N.convert, "i64", N.si64_to_float, "f64"),  # cast.si64.f64
    0x1B: (N.convert, "i64", float, "f64"),  # cast.ui64.f64
    0x1C: (N.convert, "f64", N.f64_lround, "i64"),  # cast.f64.si64
    0x1D: (N.convert, "f64", N.f64_llround, "i64"),  # cast.f64.ui64
    0x1E: (N.convert, "i64", N.same, "i64"),  # bitcast.i64.f64
    0x1F: (N.convert, "i64", N.same, "i64"),  # bitcast.f64.i64
    0x20: (N.float_arith, "atan", 64),  # atan.f64
    0x21: (N.float_arith, "atan2", 64),  # atan2.f64
    0x22: (N.float_arith, "cos", 64),  # cos.f64
    0x23: (N.float_arith, "sin", 64),  # sin.f64
    0x24: (N.float_arith, "exp", 64),  # exp.f64
    0x25: (N.float_arith, "exp2", 64),  # exp2.f64
    0x26: (N.float_arith, "expm1", 64),  # expm1.f64
    0x27: (N.float_arith, "log", 64),  # log.f64
    0x28: (N.float_arith, "log10", 64),  # log10.f64
    0x29: (N.float_arith, "log1p", 64),  # log1p.f64
    0x2A: (N.float_arith, "log2", 64),  # log2.f64
    0x2B: (N.float_arith, "pow", 64),  # pow.f64
    0x2C: (N.float_arith, "rsqrt", 64),  # rsqrt.f64
    0x2D: (N.float_arith, "sqrt", 64),  # sqrt.f64
    0x2E: (N.float_arith, "tanh", 64),  # tanh.f64
    0x2F: (N.float_arith, "erf", 64),  # erf.f64
    0x30: (N.compare, "eq", "f64", "o"),  # cmp.eq.f64.o
    0x31: (N.compare, "eq", "f64", "u"),  # cmp.eq.f64.u
    0x32: (N.compare, "ne", "f64", "o"),  # cmp.ne.f64.o
    0x33: (N.compare, "ne", "f64", "u"),  # cmp.ne.f64.u
    0x34: (N.compare, "lt", "f64", "o"),  # cmp.lt.f64.o
    0x35: (N.compare, "lt", "f64", "u"),  # cmp.lt.f64.u
    0x36: (N.compare, "lte", "f64", "o"),  # cmp.lte.f64.o
    0x37: (N.compare, "lte", "f64", "u"),  # cmp.lte.f64.u
    0x38: (N.compare, "nan", "f64"),  # cmp.nan.f64
    0x39: (D.buffer_elem, "load", "f64"),  # buffer.load.f64
    0x3A: (D.buffer_elem, "store", "f64"),  # buffer.store.f64
    0x3B: (D.buffer_elem, "fill", "f64"),  # buffer.fill.f64
    0x3C: (N.float_arith, "round", 64),  # round.f64
    0x3D: (N.float_arith, "min", 64),  # min.f64
    0x3E: (N.float_arith, "max", 64),  # max.f64
    0x3F: (N.float_arith, "round.even", 64),  # round.f64.even
    0x40: (N.float_arith, "fpowi", 64),  # fpowi.f64
}

ROWS = {"core": CORE, "ext_f32": EXT_F32, "ext_f64": EXT_F64}

"""Bytecode decoding and verification of one function body at a time.

`decode(body)` walks a function body with the `isa` table and returns its `Instruction`s in
order (block markers included), each with its byte offset, length, ISA row and operands by field
name. It checks only what it needs to walk: known opcodes and no field running past the body.

`verify(module, ordinal)` decodes internal function `ordinal` of a `BytecodeModule` and checks
what an executor relies on, before anything runs (IREE's bytecode verifier, plus exact register
counts):
    - block structure: the body starts with a block marker, every block ends with a terminator,
      markers appear only after terminators, the body ends with a terminator and the number of
      markers equals the descriptor's block_count;
    - every branch target (br, cond_br, br_table, yieldable resume, yield/break) is the offset of
      a block marker of this body;
    - registers: bank bit matches the field, int ordinals < i32_register_count (i64/f64 use an even
      pair n, n+1), ref ordinals < ref_register_count; remap lists and call lists included;
    - ordinals in range: rodata segments, types, ref globals, value-global byte ranges within the
      global storage, imports / internal functions; call lists agree with the callee's cconv
      (variadic segments included) and `return` with the function's own results;
    - ext_f32 / ext_f64 ops only in functions whose requirements declare those features.
Failures raise `BytecodeVerifyError` (a VmfbFormatError) naming the function and the bytecode
offset: `module.predict+0000001F: ...`. The decoder itself raises the same error for truncated or
unknown instructions.

The disassembler (iree-dump-module's text form) lives in `vm/disassembler.py`.

Operand values by field kind (see `isa`): REG -> Register; IMM -> int or float; GLOBAL, RODATA,
TYPE, TARGET -> int; FUNC -> Callee; STRING -> str; LIST, RESULTS -> tuple[Register, ...];
SEGMENTS -> tuple[int, ...]; REMAP -> tuple[(src Register, dst Register), ...];
CASES -> tuple[(target int, remap), ...].
"""

from __future__ import annotations

import struct
import weakref
from typing import Iterator, NamedTuple

from amdgpu_cli.formats.vmfb import BytecodeModule, VmfbFormatError, split_cconv
from amdgpu_cli.vm import isa
from amdgpu_cli.vm.isa import (CASES, FUNC, GLOBAL, IMM, LIST, REG, REMAP, RESULTS, RODATA, SEGMENTS,
                               STRING, TARGET, TYPE, Field, Opcode)

__all__ = [
    "BytecodeVerifyError",
    "Callee",
    "Instruction",
    "Register",
    "decode",
    "decode_function",
    "decode_one",
    "verify",
]


class BytecodeVerifyError(VmfbFormatError):
    """Function bytecode that cannot be decoded or breaks a verifier rule."""

    def __init__(self, message: str, *, function: str = "", offset: int | None = None):
        where = function if offset is None else f"{function}+{offset:08X}"
        super().__init__(f"{where}: {message}" if where else message)
        self.function = function
        self.offset = offset


class _Truncated(Exception):
    """Internal: a field runs past the end of the body (turned into BytecodeVerifyError)."""


class Register(NamedTuple):
    """A register operand as encoded (u16) plus the bank its field declares.

    A NamedTuple: cheaper than a frozen dataclass both to define (at import) and to create (one per
    register operand decoded).
    """

    raw: int
    bank: str  # "i32", "i64", "f32", "f64", "ref" or "any"

    @property
    def is_ref(self) -> bool:
        return bool(self.raw & isa.REF_BIT)

    @property
    def index(self) -> int:
        return self.raw & (isa.REF_MASK if self.is_ref else isa.INT_MASK)

    @property
    def move(self) -> bool:
        return self.is_ref and bool(self.raw & isa.MOVE_BIT)

    @property
    def wide(self) -> bool:
        """True for i64/f64 operands, which occupy the int-slot pair index, index + 1."""
        return self.bank in ("i64", "f64")

    def __str__(self) -> str:
        if self.is_ref:
            return f"%{'R' if self.move else 'r'}{self.index}"
        if self.wide:
            return f"%i{self.index}:{self.index + 1}"
        return f"%i{self.index}"


class Callee(NamedTuple):
    """A func attr: an import ordinal (bit 31 set in the stream) or an internal function ordinal."""

    is_import: bool
    ordinal: int

    @classmethod
    def from_raw(cls, raw: int) -> Callee:
        return cls(bool(raw & isa.IMPORT_BIT), raw & ~isa.IMPORT_BIT & 0xFFFFFFFF)


class Instruction:
    """One decoded instruction; read-only by convention (a plain slotted class: one is made per
    instruction decoded, and a frozen dataclass costs more to define and to construct)."""

    __slots__ = ("offset", "length", "op", "operands")

    def __init__(self, offset: int, length: int, op: Opcode, operands: dict):
        self.offset = offset  # pc of the first byte (the prefix byte for extension ops)
        self.length = length
        self.op = op
        self.operands = operands  # field name -> decoded value, in encoding order

    def __repr__(self) -> str:
        return f"Instruction({self.offset}, {self.length}, {self.op.mnemonic}, {self.operands})"

    @property
    def mnemonic(self) -> str:
        return self.op.mnemonic

    @property
    def is_block(self) -> bool:
        return self.op.is_block

    def __getitem__(self, name: str):
        return self.operands[name]

    def registers(self) -> Iterator[tuple[Field, Register]]:
        """Every register the instruction names: plain fields, lists, remap pairs, cases."""
        for f in self.op.fields:
            value = self.operands[f.name]
            if f.kind == REG:
                yield f, value
            elif f.kind in (LIST, RESULTS):
                for r in value:
                    yield f, r
            elif f.kind == REMAP:
                for src, dst in value:
                    yield f, src
                    yield f, dst
            elif f.kind == CASES:
                for _, remap in value:
                    for src, dst in remap:
                        yield f, src
                        yield f, dst

    def targets(self) -> list[int]:
        """Block offsets this instruction may branch or resume to."""
        out = []
        for f in self.op.fields:
            if f.kind == TARGET:
                out.append(self.operands[f.name])
            elif f.kind == CASES:
                out.extend(t for t, _ in self.operands[f.name])
        return out


# -- decoding -------------------------------------------------------------------------------------

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_IMM = {"i32": struct.Struct("<i"), "i64": struct.Struct("<q"), "f32": struct.Struct("<f"),
        "f64": struct.Struct("<d")}


class _Reader:
    __slots__ = ("data", "end", "pc")

    def __init__(self, data, pc: int):
        self.data = data
        self.end = len(data)
        self.pc = pc

    def take(self, n: int) -> int:
        pc = self.pc
        if pc + n > self.end:
            raise _Truncated
        self.pc = pc + n
        return pc

    def u8(self) -> int:
        return self.data[self.take(1)]

    def u16(self) -> int:
        return _U16.unpack_from(self.data, self.take(2))[0]

    def u32(self) -> int:
        return _U32.unpack_from(self.data, self.take(4))[0]

    def align2(self) -> None:
        if self.pc & 1:
            self.take(1)

    def u16_list(self) -> tuple[int, ...]:
        self.align2()
        count = self.u16()
        start = self.take(2 * count)
        return struct.unpack_from(f"<{count}H", self.data, start)

    def remap(self) -> tuple[tuple[Register, Register], ...]:
        values = self.u16_list_pairs()
        return tuple((Register(values[i], "any"), Register(values[i + 1], "any"))
                     for i in range(0, len(values), 2))

    def u16_list_pairs(self) -> tuple[int, ...]:
        self.align2()
        count = self.u16()
        start = self.take(4 * count)
        return struct.unpack_from(f"<{2 * count}H", self.data, start)


def _read_field(r: _Reader, f: Field):
    kind = f.kind
    if kind == REG:
        return Register(r.u16(), f.bank)
    if kind in (GLOBAL, RODATA, TYPE, TARGET):
        return r.u32()
    if kind == IMM:
        s = _IMM[f.bank]
        return s.unpack_from(r.data, r.take(s.size))[0]
    if kind == FUNC:
        return Callee.from_raw(r.u32())
    if kind in (LIST, RESULTS):
        bank = f.bank if kind == LIST else "any"
        return tuple(Register(v, bank) for v in r.u16_list())
    if kind == SEGMENTS:
        return r.u16_list()
    if kind == REMAP:
        return r.remap()
    if kind == STRING:
        n = r.u16()
        start = r.take(n)
        return bytes(r.data[start:start + n]).decode("utf-8", errors="replace")
    if kind == CASES:
        count = r.u16()
        return tuple((r.u32(), r.remap()) for _ in range(count))
    raise AssertionError(f"unknown field kind {kind}")  # the isa table is closed


def decode_one(body, pc: int, *, function: str = "") -> Instruction:
    """Decode the instruction at `pc` of a function body."""
    r = _Reader(body, pc)
    try:
        code = r.u8()
        table = "core"
        if code in isa.PREFIXES:
            table = isa.PREFIXES[code]
            code = r.u8()
        op = isa.TABLES[table][code]
        if op is None:
            what = f"{table} opcode 0x{code:02X}"
            raise BytecodeVerifyError(f"unknown {what}", function=function, offset=pc)
        operands = {f.name: _read_field(r, f) for f in op.fields}
    except _Truncated:
        raise BytecodeVerifyError(
            f"instruction runs past the end of the {len(body)}-byte body",
            function=function, offset=pc) from None
    return Instruction(pc, r.pc - pc, op, operands)


def decode(body, *, function: str = "") -> list[Instruction]:
    """Decode a whole function body (bytes-like) into its instructions, in order."""
    body = memoryview(body).cast("B") if not isinstance(body, (bytes, bytearray)) else body
    out = []
    pc = 0
    end = len(body)
    while pc < end:
        ins = decode_one(body, pc, function=function)
        out.append(ins)
        pc += ins.length
    return out


def decode_function(module: BytecodeModule, ordinal: int) -> list[Instruction]:
    """Decode internal function `ordinal` of `module`."""
    _check_ordinal(module, ordinal)
    return decode(bytes(module.function_bytecode(ordinal)), function=module.function_label(ordinal))


def _check_ordinal(module: BytecodeModule, ordinal: int) -> None:
    if not 0 <= ordinal < len(module.functions):
        raise BytecodeVerifyError(
            f"function ordinal {ordinal} out of range ({len(module.functions)} functions)",
            function=module.name)


# -- verification ---------------------------------------------------------------------------------

_VALUE_WIDTH = {"i32": 4, "f32": 4, "i64": 8, "f64": 8}


class _Verifier:
    def __init__(self, module: BytecodeModule, ordinal: int):
        self.module = module
        self.ordinal = ordinal
        self.desc = module.functions[ordinal]
        self.label = module.function_label(ordinal)
        self.offset: int | None = None
        self.results = ""  # the function's result types (cconv chars), for `return`

    def fail(self, message: str) -> BytecodeVerifyError:
        return BytecodeVerifyError(message, function=self.label, offset=self.offset)

    # registers ---------------------------------------------------------------------------------

    def reg(self, r: Register, bank: str, what: str) -> None:
        d = self.desc
        if bank == "any":
            bank = "ref" if r.is_ref else "i32"
        if bank == "ref":
            if not r.is_ref:
                raise self.fail(f"{what}: ref register required but {r} given")
            if r.index >= d.ref_register_count:
                raise self.fail(
                    f"{what}: ref register {r} out of range ({d.ref_register_count} ref registers)")
            return
        if r.is_ref:
            raise self.fail(f"{what}: {bank} register required but ref register {r} given")
        if bank in ("i64", "f64"):
            if r.index & 1:
                raise self.fail(f"{what}: {bank} register %i{r.index} is not an even register pair")
            if r.index + 1 >= d.i32_register_count:
                raise self.fail(f"{what}: {bank} register {Register(r.raw, bank)} out of range "
                                f"({d.i32_register_count} i32 registers)")
        elif r.index >= d.i32_register_count:
            raise self.fail(
                f"{what}: {bank} register {r} out of range ({d.i32_register_count} i32 registers)")

    def cconv_regs(self, fragment: str, regs: tuple[Register, ...], segments, what: str) -> None:
        """Check `regs` against cconv type chars (IREE's verify_cconv_registers, exact count)."""
        expected: list[str] = []
        seg_i = 0
        i = 0
        while i < len(fragment):
            ch = fragment[i]
            if ch == "C":
                end = fragment.index("D", i)
                body = fragment[i + 1:end]
                if segments is None:
                    raise self.fail(f"{what}: variadic callee called without segment sizes")
                if seg_i >= len(segments):
                    raise self.fail(f"{what}: segment size list has {len(segments)} entries, too few")
                expected.extend(body * segments[seg_i])
                i = end + 1
            else:
                expected.append(ch)
                i += 1
            seg_i += 1
        if segments is not None and seg_i != len(segments):
            raise self.fail(f"{what}: {len(segments)} segment sizes for {seg_i} arguments")
        if len(regs) != len(expected):
            raise self.fail(f"{what}: {len(regs)} registers for {len(expected)} values")
        bank_of = {"i": "i32", "f": "f32", "I": "i64", "F": "f64", "r": "ref"}
        for ch, r in zip(expected, regs):
            self.reg(r, bank_of[ch], what)

    def cconv(self, signature, what: str) -> tuple[str, str]:
        try:
            return split_cconv(signature.cconv or "")
        except VmfbFormatError as e:
            raise self.fail(f"{what}: {e}") from None

    # whole function ----------------------------------------------------------------------------

    def run(self) -> list[Instruction]:
        m, d = self.module, self.desc
        args, results = self.cconv(m.signatures[self.ordinal], "function signature")
        if "C" in args:
            raise self.fail("internal functions cannot take variadic arguments")
        need_i32, need_ref = _count_registers(args)
        if need_i32 > d.i32_register_count or need_ref > d.ref_register_count:
            raise self.fail("not enough registers for the function arguments")
        self.results = results

        # One pass in stream order (so the first problem is the one reported); branch targets are
        # checked once every block marker is known.
        body = bytes(m.function_bytecode(self.ordinal))
        code: list[Instruction] = []
        blocks: set[int] = set()
        in_block = False
        pc = 0
        while pc < len(body):
            ins = decode_one(body, pc, function=self.label)
            code.append(ins)
            pc += ins.length
            self.offset = ins.offset
            if ins.is_block:
                if in_block:
                    raise self.fail("block marker inside a block (previous block has no terminator)")
                blocks.add(ins.offset)
                in_block = True
                continue
            if not in_block:
                raise self.fail(f"{ins.mnemonic} is not inside a block")
            self.instruction(ins)
            if ins.op.terminator:
                in_block = False
        if in_block:
            raise self.fail("the last block has no terminator")
        for ins in code:
            for target in ins.targets():
                if target not in blocks:
                    self.offset = ins.offset
                    raise self.fail(f"branch target {target:08X} is not a block of this function")
        self.offset = None
        if len(blocks) != d.block_count:
            raise self.fail(f"descriptor declares {d.block_count} blocks but the body has {len(blocks)}")
        return code

    def instruction(self, ins: Instruction) -> None:
        m = self.module
        op = ins.op
        required = op.requires
        if required and not (self.desc.requirements & required):
            raise self.fail(f"{op.mnemonic} needs feature {required.name} the function does not declare")
        ops = ins.operands
        ref_global = any(f.kind == REG and f.bank == "ref" for f in op.fields) and any(
            f.kind == GLOBAL for f in op.fields)
        for f in op.fields:
            value = ops[f.name]
            kind = f.kind
            if kind == REG:
                self.reg(value, f.bank, f.name)
            elif kind == LIST:
                if op.mnemonic not in ("return",) and not op.mnemonic.startswith("call"):
                    for r in value:
                        self.reg(r, f.bank, f.name)
            elif kind in (REMAP, CASES):
                pairs = value if kind == REMAP else [p for _, remap in value for p in remap]
                for src, dst in pairs:
                    self.reg(src, "any", f.name)
                    self.reg(dst, "any", f.name)
                    if src.is_ref != dst.is_ref:
                        raise self.fail(f"{f.name}: remap {src}->{dst} crosses register banks")
            elif kind == TYPE and value >= len(m.types):
                raise self.fail(f"type {value} out of range ({len(m.types)} types)")
            elif kind == RODATA and value >= len(m.rodata):
                raise self.fail(f"rodata segment {value} out of range ({len(m.rodata)} segments)")
            elif kind == GLOBAL:
                if ref_global:
                    if value >= m.state.global_ref_count:
                        raise self.fail(
                            f"ref global {value} out of range ({m.state.global_ref_count} ref globals)")
                else:
                    width = next(_VALUE_WIDTH[g.bank] for g in op.fields if g.kind == REG)
                    if value + width > m.state.global_bytes_capacity:
                        raise self.fail(f"global bytes {value}+{width} outside the "
                                        f"{m.state.global_bytes_capacity}-byte global storage")
        if op.mnemonic.startswith("call"):
            self.call(ins)
        elif op.mnemonic == "import.resolved":
            callee = ops["import_ordinal"]
            if not callee.is_import or callee.ordinal >= len(m.imports):
                raise self.fail(f"import.resolved names {_callee_text(callee)}, not an import of this module")
        elif op.mnemonic == "return":
            self.cconv_regs(self.results, ops["operands"], None, "return")

    def call(self, ins: Instruction) -> None:
        m = self.module
        callee = ins["callee_ordinal"]
        variadic = "segment_sizes" in ins.operands
        if callee.is_import:
            if callee.ordinal >= len(m.imports):
                raise self.fail(f"import ordinal {callee.ordinal} out of range ({len(m.imports)} imports)")
            signature = m.imports[callee.ordinal].signature
            what = f"call to import {m.imports[callee.ordinal].full_name}"
        else:
            if variadic:
                raise self.fail("variadic calls are only allowed to imports")
            if callee.ordinal >= len(m.functions):
                raise self.fail(
                    f"function ordinal {callee.ordinal} out of range ({len(m.functions)} functions)")
            signature = m.signatures[callee.ordinal]
            what = f"call to internal function {callee.ordinal}"
        args, results = self.cconv(signature, what)
        segments = ins["segment_sizes"] if variadic else None
        self.cconv_regs(args, ins["operands"], segments, what)
        self.cconv_regs(results, ins["results"], None, what + " (results)")


def _count_registers(fragment: str) -> tuple[int, int]:
    """(int slots, ref slots) the bytecode entry ABI needs for cconv arguments `fragment`."""
    ints = refs = 0
    for ch in fragment:
        if ch in "if":
            ints += 1
        elif ch in "IF":
            ints += (ints & 1) + 2
        elif ch == "r":
            refs += 1
    return ints, refs


def _callee_text(c: Callee) -> str:
    return f"import {c.ordinal}" if c.is_import else f"internal function {c.ordinal}"


# module -> ordinal -> verified instructions, kept while the module lives. A context verifies every
# function when it is made and the interpreter asks again for each function it translates; modules
# are immutable, so the second ask is answered from here instead of decoding the body again.
_verified: weakref.WeakKeyDictionary[BytecodeModule, dict[int, list[Instruction]]] = (
    weakref.WeakKeyDictionary())


def verify(module: BytecodeModule, ordinal: int) -> list[Instruction]:
    """Verify internal function `ordinal`; returns its decoded instructions (shared between calls
    for the same module: do not modify the list).

    Raises BytecodeVerifyError (a VmfbFormatError) naming the function and bytecode offset.
    """
    done = _verified.setdefault(module, {})
    code = done.get(ordinal)
    if code is None:
        _check_ordinal(module, ordinal)
        code = done[ordinal] = _Verifier(module, ordinal).run()
    return code

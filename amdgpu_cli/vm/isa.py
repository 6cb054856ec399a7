"""The VM bytecode ISA, version 17.0: every opcode with its mnemonic and operand encoding.

This module is the one description of the instruction set; the decoder, verifier, disassembler
and (later) interpreter all read it. The rows restate IREE's `runtime/src/iree/vm/bytecode/isa/
isa.json` (17.0, 265 entries) plus the two opcodes IREE 3.13.0 ships without a version bump:
`ext_f32 0x3E fpowi.f32` and `ext_f64 0x40 fpowi.f64` (see ../../shared/reference/vmfb.md 2.6).

Instruction stream (pc relative to the function start; all fields unaligned little-endian except
where noted):
    opcode u8; 0xE0 / 0xE1 prefix the next byte as an ext_f32 / ext_f64 opcode.
    0x79 is the block marker: every block starts with it and branch targets point at it.

Operand field kinds (the `spec` grammar of `ENCODINGS`, one `name:spec` per field, in order):
    i32 i64 f32 f64 ref any   u16 register read (bit 15 = ref bank; for refs bit 14 = move,
                              ordinal & 0x3FFF; ints ordinal & 0x7FFF, i64/f64 use the pair n, n+1)
    =<bank>                   register written by the op
    <bank>*                   a ref register whose move bit the op honours
    imm.<t>                   inline constant: 4 bytes (i32, f32) or 8 bytes (i64, f64)
    global                    u32: byte offset into rwdata (value globals) or ref global ordinal
    rodata / type             u32 rodata segment ordinal / index into the module's types
    func                      u32 callee: bit 31 set = import ordinal, else internal ordinal
    string                    u16 length + UTF-8 bytes
    list.<bank>               align pc to 2, u16 count, count x u16 registers (operands)
    results                   same layout, registers written by a call
    segments                  same layout, but u16 values: per-argument tuple counts of a
                              variadic call (0xFFFF for a plain argument)
    target                    u32 block pc (points at a block marker)
    remap                     align pc to 2, u16 count, count x (u16 src, u16 dst) registers
    cases                     u16 count, then count x (target, remap)  (br_table)

Terminators (end a block; the next byte must be a block marker or the end of the body) are the
branches, `return`, `fail`, `yield`, `break`, `cond_break` and the yieldable calls.

The rows below were generated once from isa.json (classes expanded, `const_i16 table_size` folded
into `cases`, `segment_sizes` given its own kind) and are kept by hand; tests/vm/test_decoder.py
cross-checks them against isa.json and decodes every compiled test module like iree-dump-module.
fpowi's exponent names an i64 register pair, of which the 3.13.0 runtime reads the low 32 bits.

Known disagreements inside IREE 3.13.0 (this table follows the runtime):
    - the compiler encodes `global.load.indirect.f32` with the ext_f64 prefix (E1 02), so the
      runtime executes it as `global.load.indirect.f64`;
    - the compiler writes `cond_break` without its condition register, the runtime reads one;
    - iree-dump-module decodes `switch.ref` without its type field and cannot print
      `cast.ui64.f32`.
"""

from __future__ import annotations

from typing import NamedTuple

from amdgpu_cli.formats.vmfb import BYTECODE_VERSION_MAJOR, BYTECODE_VERSION_MINOR, FeatureBits

__all__ = [
    "BLOCK_MARKER",
    "ENCODINGS",
    "OPCODES",
    "PREFIXES",
    "TABLES",
    "VERSION",
    "Field",
    "Opcode",
    "by_mnemonic",
]

VERSION = (BYTECODE_VERSION_MAJOR, BYTECODE_VERSION_MINOR)

BLOCK_MARKER = 0x79
PREFIXES = {0xE0: "ext_f32", 0xE1: "ext_f64"}
TABLE_PREFIX = {name: code for code, name in PREFIXES.items()}
TABLE_FEATURE = {"core": FeatureBits(0), "ext_f32": FeatureBits.EXT_F32, "ext_f64": FeatureBits.EXT_F64}

REGISTER_BANKS = ("i32", "i64", "f32", "f64", "ref", "any")
REF_BIT = 0x8000
MOVE_BIT = 0x4000
REF_MASK = 0x3FFF
INT_MASK = 0x7FFF
IMPORT_BIT = 0x80000000
SEGMENT_NOT_VARIADIC = 0xFFFF

TERMINATORS = frozenset({
    "br", "cond_br", "br_table", "return", "fail", "yield", "break", "cond_break",
    "call.yieldable", "call.variadic.yieldable",
})

# Field kinds (see the docstring for their encodings).
REG, IMM, GLOBAL, RODATA, TYPE, FUNC, STRING = "reg", "imm", "global", "rodata", "type", "func", "string"
LIST, RESULTS, SEGMENTS, TARGET, REMAP, CASES = "list", "results", "segments", "target", "remap", "cases"
_SIMPLE_KINDS = {GLOBAL, RODATA, TYPE, FUNC, STRING, RESULTS, SEGMENTS, TARGET, REMAP, CASES}

# ------------------------------------------------------------------------------------------
# The table. Rows: (opcode, mnemonic, IREE symbol, encoding name); encodings: name -> fields.

ENCODINGS: dict[str, str] = {
    "i32_global_load":           "byte_offset:global result:=i32",
    "i32_global_store":          "byte_offset:global value:i32",
    "i32_global_load_indirect":  "byte_offset:i32 result:=i32",
    "i32_global_store_indirect": "byte_offset:i32 value:i32",
    "i64_global_load":           "byte_offset:global result:=i64",
    "i64_global_store":          "byte_offset:global value:i64",
    "i64_global_load_indirect":  "byte_offset:i32 result:=i64",
    "i64_global_store_indirect": "byte_offset:i32 value:i64",
    "global_load_ref":           "global:global type_def:type value:=ref*",
    "global_store_ref":          "global:global type_def:type value:ref*",
    "global_load_indirect_ref":  "global:i32 type_def:type value:=ref*",
    "global_store_indirect_ref": "global:i32 type_def:type value:ref*",
    "i32_zero_constant":         "result:=i32",
    "i32_constant":              "value:imm.i32 result:=i32",
    "i64_zero_constant":         "result:=i64",
    "i64_constant":              "value:imm.i64 result:=i64",
    "const_ref_zero":            "result:=ref*",
    "const_ref_rodata":          "rodata:rodata value:=ref*",
    "list_alloc":                "element_type:type initial_capacity:i32 result:=ref*",
    "list_reserve":              "list:ref minimum_capacity:i32",
    "list_size":                 "list:ref result:=i32",
    "list_resize":               "list:ref new_size:i32",
    "i32_list_get":              "list:ref index:i32 result:=i32",
    "i32_list_set":              "list:ref index:i32 value:i32",
    "i64_list_get":              "list:ref index:i32 result:=i64",
    "i64_list_set":              "list:ref index:i32 value:i64",
    "list_get_ref":              "list:ref index:i32 type_def:type result:=ref*",
    "list_set_ref":              "list:ref index:i32 value:ref*",
    "i32_select":                "condition:i32 true_value:i32 false_value:i32 result:=i32",
    "i64_select":                "condition:i32 true_value:i64 false_value:i64 result:=i64",
    "select_ref":                "condition:i32 true_value_type_def:type true_value:ref* false_value:ref* result:=ref*",
    "i32_switch":                "index:i32 default_value:i32 values:list.i32 result:=i32",
    "i64_switch":                "index:i32 default_value:i64 values:list.i64 result:=i64",
    "switch_ref":                "index:i32 type_def:type default_value:ref* values:list.ref* result:=ref*",
    "i32_binary":                "left:i32 right:i32 result:=i32",
    "i32_ternary":               "first:i32 second:i32 third:i32 result:=i32",
    "i64_binary":                "left:i64 right:i64 result:=i64",
    "i64_ternary":               "first:i64 second:i64 third:i64 result:=i64",
    "i32_unary":                 "operand:i32 result:=i32",
    "i64_unary":                 "operand:i64 result:=i64",
    "i32_shift":                 "operand:i32 amount:i32 result:=i32",
    "i64_shift":                 "operand:i64 amount:i32 result:=i64",
    "i64_to_i32_conversion":     "operand:i64 result:=i32",
    "i32_to_i64_conversion":     "operand:i32 result:=i64",
    "i32_binary_comparison":     "left:i32 right:i32 result:=i32",
    "i32_unary_comparison":      "operand:i32 result:=i32",
    "i64_binary_comparison":     "left:i64 right:i64 result:=i32",
    "i64_unary_comparison":      "operand:i64 result:=i32",
    "ref_binary_comparison":     "left:ref right:ref result:=i32",
    "ref_unary_comparison":      "operand:ref result:=i32",
    "branch":                    "dest_pc:target operands:remap",
    "conditional_branch":        "condition:i32 true_dest_pc:target true_operands:remap false_dest_pc:target false_operands:remap",
    "call":                      "callee_ordinal:func operands:list.any results:results",
    "call_variadic":             "callee_ordinal:func segment_sizes:segments operands:list.any results:results",
    "return":                    "operands:list.any",
    "fail":                      "status:i32 message:string",
    "import_resolved":           "import_ordinal:func result:=i32",
    "trace":                     "event_name:string operands:list.any",
    "conditional_break":         "condition:i32 dest_pc:target operands:remap",
    "i32_buffer_load":           "source_buffer:ref source_offset:i64 result:=i32",
    "i64_buffer_load":           "source_buffer:ref source_offset:i64 result:=i64",
    "i32_buffer_store":          "target_buffer:ref target_offset:i64 value:i32",
    "i64_buffer_store":          "target_buffer:ref target_offset:i64 value:i64",
    "buffer_alloc":              "length:i64 alignment:i32 result:=ref*",
    "buffer_clone":              "source:ref offset:i64 length:i64 alignment:i32 result:=ref*",
    "buffer_length":             "buffer:ref result:=i64",
    "buffer_copy":               "source_buffer:ref source_offset:i64 target_buffer:ref target_offset:i64 length:i64",
    "buffer_compare":            "lhs_buffer:ref lhs_offset:i64 rhs_buffer:ref rhs_offset:i64 length:i64 result:=i32",
    "i32_buffer_fill":           "target_buffer:ref target_offset:i64 length:i64 value:i32",
    "i64_buffer_fill":           "target_buffer:ref target_offset:i64 length:i64 value:i64",
    "block":                     "",
    "cast_any_ref":              "operand:ref* result_type:type result:=ref*",
    "branch_table":              "index:i32 default_dest_pc:target default_operands:remap cases:cases",
    "buffer_hash":               "source_buffer:ref source_offset:i64 length:i64 result:=i64",
    "discard_refs":              "refs:list.any",
    "assign_ref":                "source:ref* result:=ref*",
    "yieldable_call":            "callee_ordinal:func operands:list.any dest_pc:target results:results",
    "call_variadic_yieldable":   "callee_ordinal:func segment_sizes:segments operands:list.any dest_pc:target results:results",
    "f32_global_load":           "byte_offset:global result:=f32",
    "f32_global_store":          "byte_offset:global value:f32",
    "f32_global_load_indirect":  "byte_offset:i32 result:=f32",
    "f32_global_store_indirect": "byte_offset:i32 value:f32",
    "f32_zero_constant":         "result:=f32",
    "f32_constant":              "value:imm.f32 result:=f32",
    "f32_list_get":              "list:ref index:i32 result:=f32",
    "f32_list_set":              "list:ref index:i32 value:f32",
    "f32_select":                "condition:i32 true_value:f32 false_value:f32 result:=f32",
    "f32_switch":                "index:i32 default_value:f32 values:list.f32 result:=f32",
    "f32_binary":                "left:f32 right:f32 result:=f32",
    "f32_ternary":               "first:f32 second:f32 third:f32 result:=f32",
    "f32_unary":                 "operand:f32 result:=f32",
    "i32_to_f32_conversion":     "operand:i32 result:=f32",
    "f32_to_i32_conversion":     "operand:f32 result:=i32",
    "f32_binary_comparison":     "left:f32 right:f32 result:=i32",
    "f32_unary_comparison":      "operand:f32 result:=i32",
    "f32_buffer_load":           "source_buffer:ref source_offset:i64 result:=f32",
    "f32_buffer_store":          "target_buffer:ref target_offset:i64 value:f32",
    "f32_buffer_fill":           "target_buffer:ref target_offset:i64 length:i64 value:f32",
    "f32_to_i64_conversion":     "operand:f32 result:=i64",
    "i64_to_f32_conversion":     "operand:i64 result:=f32",
    "f32_fpowi":                 "base:f32 exponent:i64 result:=f32",
    "f64_global_load":           "byte_offset:global result:=f64",
    "f64_global_store":          "byte_offset:global value:f64",
    "f64_global_load_indirect":  "byte_offset:i32 result:=f64",
    "f64_global_store_indirect": "byte_offset:i32 value:f64",
    "f64_zero_constant":         "result:=f64",
    "f64_constant":              "value:imm.f64 result:=f64",
    "f64_list_get":              "list:ref index:i32 result:=f64",
    "f64_list_set":              "list:ref index:i32 value:f64",
    "f64_select":                "condition:i32 true_value:f64 false_value:f64 result:=f64",
    "f64_switch":                "index:i32 default_value:f64 values:list.f64 result:=f64",
    "f64_binary":                "left:f64 right:f64 result:=f64",
    "f64_ternary":               "first:f64 second:f64 third:f64 result:=f64",
    "f64_unary":                 "operand:f64 result:=f64",
    "f64_to_f32_conversion":     "operand:f64 result:=f32",
    "f32_to_f64_conversion":     "operand:f32 result:=f64",
    "i32_to_f64_conversion":     "operand:i32 result:=f64",
    "f64_to_i32_conversion":     "operand:f64 result:=i32",
    "i64_to_f64_conversion":     "operand:i64 result:=f64",
    "f64_to_i64_conversion":     "operand:f64 result:=i64",
    "f64_binary_comparison":     "left:f64 right:f64 result:=i32",
    "f64_unary_comparison":      "operand:f64 result:=i32",
    "f64_buffer_load":           "source_buffer:ref source_offset:i64 result:=f64",
    "f64_buffer_store":          "target_buffer:ref target_offset:i64 value:f64",
    "f64_buffer_fill":           "target_buffer:ref target_offset:i64 length:i64 value:f64",
    "f64_fpowi":                 "base:f64 exponent:i64 result:=f64",
}

CORE: tuple[tuple[int, str, str, str], ...] = (
    (0x00, "global.load.i32",           "GlobalLoadI32",             "i32_global_load"),
    (0x01, "global.store.i32",          "GlobalStoreI32",            "i32_global_store"),
    (0x02, "global.load.indirect.i32",  "GlobalLoadIndirectI32",     "i32_global_load_indirect"),
    (0x03, "global.store.indirect.i32", "GlobalStoreIndirectI32",    "i32_global_store_indirect"),
    (0x04, "global.load.i64",           "GlobalLoadI64",             "i64_global_load"),
    (0x05, "global.store.i64",          "GlobalStoreI64",            "i64_global_store"),
    (0x06, "global.load.indirect.i64",  "GlobalLoadIndirectI64",     "i64_global_load_indirect"),
    (0x07, "global.store.indirect.i64", "GlobalStoreIndirectI64",    "i64_global_store_indirect"),
    (0x08, "global.load.ref",           "GlobalLoadRef",             "global_load_ref"),
    (0x09, "global.store.ref",          "GlobalStoreRef",            "global_store_ref"),
    (0x0A, "global.load.indirect.ref",  "GlobalLoadIndirectRef",     "global_load_indirect_ref"),
    (0x0B, "global.store.indirect.ref", "GlobalStoreIndirectRef",    "global_store_indirect_ref"),
    (0x0C, "const.i32.zero",            "ConstI32Zero",              "i32_zero_constant"),
    (0x0D, "const.i32",                 "ConstI32",                  "i32_constant"),
    (0x0E, "const.i64.zero",            "ConstI64Zero",              "i64_zero_constant"),
    (0x0F, "const.i64",                 "ConstI64",                  "i64_constant"),
    (0x10, "const.ref.zero",            "ConstRefZero",              "const_ref_zero"),
    (0x11, "const.ref.rodata",          "ConstRefRodata",            "const_ref_rodata"),
    (0x12, "list.alloc",                "ListAlloc",                 "list_alloc"),
    (0x13, "list.reserve",              "ListReserve",               "list_reserve"),
    (0x14, "list.size",                 "ListSize",                  "list_size"),
    (0x15, "list.resize",               "ListResize",                "list_resize"),
    (0x16, "list.get.i32",              "ListGetI32",                "i32_list_get"),
    (0x17, "list.set.i32",              "ListSetI32",                "i32_list_set"),
    (0x18, "list.get.i64",              "ListGetI64",                "i64_list_get"),
    (0x19, "list.set.i64",              "ListSetI64",                "i64_list_set"),
    (0x1A, "list.get.ref",              "ListGetRef",                "list_get_ref"),
    (0x1B, "list.set.ref",              "ListSetRef",                "list_set_ref"),
    (0x1C, "select.i32",                "SelectI32",                 "i32_select"),
    (0x1D, "select.i64",                "SelectI64",                 "i64_select"),
    (0x1E, "select.ref",                "SelectRef",                 "select_ref"),
    (0x1F, "switch.i32",                "SwitchI32",                 "i32_switch"),
    (0x20, "switch.i64",                "SwitchI64",                 "i64_switch"),
    (0x21, "switch.ref",                "SwitchRef",                 "switch_ref"),
    (0x22, "add.i32",                   "AddI32",                    "i32_binary"),
    (0x23, "sub.i32",                   "SubI32",                    "i32_binary"),
    (0x24, "mul.i32",                   "MulI32",                    "i32_binary"),
    (0x25, "div.i32.s",                 "DivI32S",                   "i32_binary"),
    (0x26, "div.i32.u",                 "DivI32U",                   "i32_binary"),
    (0x27, "rem.i32.s",                 "RemI32S",                   "i32_binary"),
    (0x28, "rem.i32.u",                 "RemI32U",                   "i32_binary"),
    (0x29, "fma.i32",                   "FMAI32",                    "i32_ternary"),
    (0x2A, "add.i64",                   "AddI64",                    "i64_binary"),
    (0x2B, "sub.i64",                   "SubI64",                    "i64_binary"),
    (0x2C, "mul.i64",                   "MulI64",                    "i64_binary"),
    (0x2D, "div.i64.s",                 "DivI64S",                   "i64_binary"),
    (0x2E, "div.i64.u",                 "DivI64U",                   "i64_binary"),
    (0x2F, "rem.i64.s",                 "RemI64S",                   "i64_binary"),
    (0x30, "rem.i64.u",                 "RemI64U",                   "i64_binary"),
    (0x31, "fma.i64",                   "FMAI64",                    "i64_ternary"),
    (0x32, "not.i32",                   "NotI32",                    "i32_unary"),
    (0x33, "and.i32",                   "AndI32",                    "i32_binary"),
    (0x34, "or.i32",                    "OrI32",                     "i32_binary"),
    (0x35, "xor.i32",                   "XorI32",                    "i32_binary"),
    (0x36, "not.i64",                   "NotI64",                    "i64_unary"),
    (0x37, "and.i64",                   "AndI64",                    "i64_binary"),
    (0x38, "or.i64",                    "OrI64",                     "i64_binary"),
    (0x39, "xor.i64",                   "XorI64",                    "i64_binary"),
    (0x3A, "shl.i32",                   "ShlI32",                    "i32_shift"),
    (0x3B, "shr.i32.s",                 "ShrI32S",                   "i32_shift"),
    (0x3C, "shr.i32.u",                 "ShrI32U",                   "i32_shift"),
    (0x3D, "shl.i64",                   "ShlI64",                    "i64_shift"),
    (0x3E, "shr.i64.s",                 "ShrI64S",                   "i64_shift"),
    (0x3F, "shr.i64.u",                 "ShrI64U",                   "i64_shift"),
    (0x40, "trunc.i32.i8",              "TruncI32I8",                "i32_unary"),
    (0x41, "trunc.i32.i16",             "TruncI32I16",               "i32_unary"),
    (0x42, "trunc.i64.i32",             "TruncI64I32",               "i64_to_i32_conversion"),
    (0x43, "ext.i8.i32.s",              "ExtI8I32S",                 "i32_unary"),
    (0x44, "ext.i8.i32.u",              "ExtI8I32U",                 "i32_unary"),
    (0x45, "ext.i16.i32.s",             "ExtI16I32S",                "i32_unary"),
    (0x46, "ext.i16.i32.u",             "ExtI16I32U",                "i32_unary"),
    (0x47, "ext.i32.i64.s",             "ExtI32I64S",                "i32_to_i64_conversion"),
    (0x48, "ext.i32.i64.u",             "ExtI32I64U",                "i32_to_i64_conversion"),
    (0x49, "cmp.eq.i32",                "CmpEQI32",                  "i32_binary_comparison"),
    (0x4A, "cmp.ne.i32",                "CmpNEI32",                  "i32_binary_comparison"),
    (0x4B, "cmp.lt.i32.s",              "CmpLTI32S",                 "i32_binary_comparison"),
    (0x4C, "cmp.lt.i32.u",              "CmpLTI32U",                 "i32_binary_comparison"),
    (0x4D, "cmp.nz.i32",                "CmpNZI32",                  "i32_unary_comparison"),
    (0x4E, "cmp.eq.i64",                "CmpEQI64",                  "i64_binary_comparison"),
    (0x4F, "cmp.ne.i64",                "CmpNEI64",                  "i64_binary_comparison"),
    (0x50, "cmp.lt.i64.s",              "CmpLTI64S",                 "i64_binary_comparison"),
    (0x51, "cmp.lt.i64.u",              "CmpLTI64U",                 "i64_binary_comparison"),
    (0x52, "cmp.nz.i64",                "CmpNZI64",                  "i64_unary_comparison"),
    (0x53, "cmp.eq.ref",                "CmpEQRef",                  "ref_binary_comparison"),
    (0x54, "cmp.ne.ref",                "CmpNERef",                  "ref_binary_comparison"),
    (0x55, "cmp.nz.ref",                "CmpNZRef",                  "ref_unary_comparison"),
    (0x56, "br",                        "Branch",                    "branch"),
    (0x57, "cond_br",                   "CondBranch",                "conditional_branch"),
    (0x58, "call",                      "Call",                      "call"),
    (0x59, "call.variadic",             "CallVariadic",              "call_variadic"),
    (0x5A, "return",                    "Return",                    "return"),
    (0x5B, "fail",                      "Fail",                      "fail"),
    (0x5C, "import.resolved",           "ImportResolved",            "import_resolved"),
    (0x5D, "yield",                     "Yield",                     "branch"),
    (0x5E, "trace",                     "Trace",                     "trace"),
    (0x5F, "print",                     "Print",                     "trace"),
    (0x60, "cond_break",                "CondBreak",                 "conditional_break"),
    (0x61, "break",                     "Break",                     "branch"),
    (0x62, "buffer.load.i8.u",          "BufferLoadI8U",             "i32_buffer_load"),
    (0x63, "buffer.load.i8.s",          "BufferLoadI8S",             "i32_buffer_load"),
    (0x64, "buffer.load.i16.u",         "BufferLoadI16U",            "i32_buffer_load"),
    (0x65, "buffer.load.i16.s",         "BufferLoadI16S",            "i32_buffer_load"),
    (0x66, "buffer.load.i32",           "BufferLoadI32",             "i32_buffer_load"),
    (0x67, "buffer.load.i64",           "BufferLoadI64",             "i64_buffer_load"),
    (0x68, "buffer.store.i8",           "BufferStoreI8",             "i32_buffer_store"),
    (0x69, "buffer.store.i16",          "BufferStoreI16",            "i32_buffer_store"),
    (0x6A, "buffer.store.i32",          "BufferStoreI32",            "i32_buffer_store"),
    (0x6B, "buffer.store.i64",          "BufferStoreI64",            "i64_buffer_store"),
    (0x6C, "buffer.alloc",              "BufferAlloc",               "buffer_alloc"),
    (0x6D, "buffer.clone",              "BufferClone",               "buffer_clone"),
    (0x6E, "buffer.length",             "BufferLength",              "buffer_length"),
    (0x6F, "buffer.copy",               "BufferCopy",                "buffer_copy"),
    (0x70, "buffer.compare",            "BufferCompare",             "buffer_compare"),
    (0x71, "buffer.fill.i8",            "BufferFillI8",              "i32_buffer_fill"),
    (0x72, "buffer.fill.i16",           "BufferFillI16",             "i32_buffer_fill"),
    (0x73, "buffer.fill.i32",           "BufferFillI32",             "i32_buffer_fill"),
    (0x74, "buffer.fill.i64",           "BufferFillI64",             "i64_buffer_fill"),
    (0x75, "ctlz.i32",                  "CtlzI32",                   "i32_unary"),
    (0x76, "ctlz.i64",                  "CtlzI64",                   "i64_unary"),
    (0x77, "abs.i32",                   "AbsI32",                    "i32_unary"),
    (0x78, "abs.i64",                   "AbsI64",                    "i64_unary"),
    (0x79, "block",                     "Block",                     "block"),
    (0x7A, "min.i32.s",                 "MinI32S",                   "i32_binary"),
    (0x7B, "min.i32.u",                 "MinI32U",                   "i32_binary"),
    (0x7C, "max.i32.s",                 "MaxI32S",                   "i32_binary"),
    (0x7D, "max.i32.u",                 "MaxI32U",                   "i32_binary"),
    (0x7E, "min.i64.s",                 "MinI64S",                   "i64_binary"),
    (0x7F, "min.i64.u",                 "MinI64U",                   "i64_binary"),
    (0x80, "max.i64.s",                 "MaxI64S",                   "i64_binary"),
    (0x81, "max.i64.u",                 "MaxI64U",                   "i64_binary"),
    (0x82, "cast.any.ref",              "CastAnyRef",                "cast_any_ref"),
    (0x83, "br_table",                  "BranchTable",               "branch_table"),
    (0x84, "buffer.hash",               "BufferHash",                "buffer_hash"),
    (0x85, "discard.refs",              "DiscardRefs",               "discard_refs"),
    (0x86, "assign.ref",                "AssignRef",                 "assign_ref"),
    (0x87, "call.yieldable",            "CallYieldable",             "yieldable_call"),
    (0x88, "call.variadic.yieldable",   "CallVariadicYieldable",     "call_variadic_yieldable"),
)

EXT_F32: tuple[tuple[int, str, str, str], ...] = (
    (0x00, "global.load.f32",           "GlobalLoadF32",             "f32_global_load"),
    (0x01, "global.store.f32",          "GlobalStoreF32",            "f32_global_store"),
    (0x02, "global.load.indirect.f32",  "GlobalLoadIndirectF32",     "f32_global_load_indirect"),
    (0x03, "global.store.indirect.f32", "GlobalStoreIndirectF32",    "f32_global_store_indirect"),
    (0x04, "const.f32.zero",            "ConstF32Zero",              "f32_zero_constant"),
    (0x05, "const.f32",                 "ConstF32",                  "f32_constant"),
    (0x06, "list.get.f32",              "ListGetF32",                "f32_list_get"),
    (0x07, "list.set.f32",              "ListSetF32",                "f32_list_set"),
    (0x08, "select.f32",                "SelectF32",                 "f32_select"),
    (0x09, "switch.f32",                "SwitchF32",                 "f32_switch"),
    (0x0A, "add.f32",                   "AddF32",                    "f32_binary"),
    (0x0B, "sub.f32",                   "SubF32",                    "f32_binary"),
    (0x0C, "mul.f32",                   "MulF32",                    "f32_binary"),
    (0x0D, "div.f32",                   "DivF32",                    "f32_binary"),
    (0x0E, "rem.f32",                   "RemF32",                    "f32_binary"),
    (0x0F, "fma.f32",                   "FMAF32",                    "f32_ternary"),
    (0x10, "abs.f32",                   "AbsF32",                    "f32_unary"),
    (0x11, "neg.f32",                   "NegF32",                    "f32_unary"),
    (0x12, "ceil.f32",                  "CeilF32",                   "f32_unary"),
    (0x13, "floor.f32",                 "FloorF32",                  "f32_unary"),
    (0x14, "cast.si32.f32",             "CastSI32F32",               "i32_to_f32_conversion"),
    (0x15, "cast.ui32.f32",             "CastUI32F32",               "i32_to_f32_conversion"),
    (0x16, "cast.f32.si32",             "CastF32SI32",               "f32_to_i32_conversion"),
    (0x17, "cast.f32.ui32",             "CastF32UI32",               "f32_to_i32_conversion"),
    (0x18, "bitcast.i32.f32",           "BitcastI32F32",             "i32_to_f32_conversion"),
    (0x19, "bitcast.f32.i32",           "BitcastF32I32",             "f32_to_i32_conversion"),
    (0x1A, "atan.f32",                  "AtanF32",                   "f32_unary"),
    (0x1B, "atan2.f32",                 "Atan2F32",                  "f32_binary"),
    (0x1C, "cos.f32",                   "CosF32",                    "f32_unary"),
    (0x1D, "sin.f32",                   "SinF32",                    "f32_unary"),
    (0x1E, "exp.f32",                   "ExpF32",                    "f32_unary"),
    (0x1F, "exp2.f32",                  "Exp2F32",                   "f32_unary"),
    (0x20, "expm1.f32",                 "ExpM1F32",                  "f32_unary"),
    (0x21, "log.f32",                   "LogF32",                    "f32_unary"),
    (0x22, "log10.f32",                 "Log10F32",                  "f32_unary"),
    (0x23, "log1p.f32",                 "Log1pF32",                  "f32_unary"),
    (0x24, "log2.f32",                  "Log2F32",                   "f32_unary"),
    (0x25, "pow.f32",                   "PowF32",                    "f32_binary"),
    (0x26, "rsqrt.f32",                 "RsqrtF32",                  "f32_unary"),
    (0x27, "sqrt.f32",                  "SqrtF32",                   "f32_unary"),
    (0x28, "tanh.f32",                  "TanhF32",                   "f32_unary"),
    (0x29, "erf.f32",                   "ErfF32",                    "f32_unary"),
    (0x2A, "cmp.eq.f32.o",              "CmpEQF32O",                 "f32_binary_comparison"),
    (0x2B, "cmp.eq.f32.u",              "CmpEQF32U",                 "f32_binary_comparison"),
    (0x2C, "cmp.ne.f32.o",              "CmpNEF32O",                 "f32_binary_comparison"),
    (0x2D, "cmp.ne.f32.u",              "CmpNEF32U",                 "f32_binary_comparison"),
    (0x2E, "cmp.lt.f32.o",              "CmpLTF32O",                 "f32_binary_comparison"),
    (0x2F, "cmp.lt.f32.u",              "CmpLTF32U",                 "f32_binary_comparison"),
    (0x30, "cmp.lte.f32.o",             "CmpLTEF32O",                "f32_binary_comparison"),
    (0x31, "cmp.lte.f32.u",             "CmpLTEF32U",                "f32_binary_comparison"),
    (0x32, "cmp.nan.f32",               "CmpNaNF32",                 "f32_unary_comparison"),
    (0x33, "buffer.load.f32",           "BufferLoadF32",             "f32_buffer_load"),
    (0x34, "buffer.store.f32",          "BufferStoreF32",            "f32_buffer_store"),
    (0x35, "buffer.fill.f32",           "BufferFillF32",             "f32_buffer_fill"),
    (0x36, "round.f32",                 "RoundF32",                  "f32_unary"),
    (0x37, "min.f32",                   "MinF32",                    "f32_binary"),
    (0x38, "max.f32",                   "MaxF32",                    "f32_binary"),
    (0x39, "round.f32.even",            "RoundF32Even",              "f32_unary"),
    (0x3A, "cast.f32.si64",             "CastF32SI64",               "f32_to_i64_conversion"),
    (0x3B, "cast.f32.ui64",             "CastF32UI64",               "f32_to_i64_conversion"),
    (0x3C, "cast.si64.f32",             "CastSI64F32",               "i64_to_f32_conversion"),
    (0x3D, "cast.ui64.f32",             "CastUI64F32",               "i64_to_f32_conversion"),
    (0x3E, "fpowi.f32",                 "FPowIF32",                  "f32_fpowi"),
)

EXT_F64: tuple[tuple[int, str, str, str], ...] = (
    (0x00, "global.load.f64",           "GlobalLoadF64",             "f64_global_load"),
    (0x01, "global.store.f64",          "GlobalStoreF64",            "f64_global_store"),
    (0x02, "global.load.indirect.f64",  "GlobalLoadIndirectF64",     "f64_global_load_indirect"),
    (0x03, "global.store.indirect.f64", "GlobalStoreIndirectF64",    "f64_global_store_indirect"),
    (0x04, "const.f64.zero",            "ConstF64Zero",              "f64_zero_constant"),
    (0x05, "const.f64",                 "ConstF64",                  "f64_constant"),
    (0x06, "list.get.f64",              "ListGetF64",                "f64_list_get"),
    (0x07, "list.set.f64",              "ListSetF64",                "f64_list_set"),
    (0x08, "select.f64",                "SelectF64",                 "f64_select"),
    (0x09, "switch.f64",                "SwitchF64",                 "f64_switch"),
    (0x0A, "add.f64",                   "AddF64",                    "f64_binary"),
    (0x0B, "sub.f64",                   "SubF64",                    "f64_binary"),
    (0x0C, "mul.f64",                   "MulF64",                    "f64_binary"),
    (0x0D, "div.f64",                   "DivF64",                    "f64_binary"),
    (0x0E, "rem.f64",                   "RemF64",                    "f64_binary"),
    (0x0F, "fma.f64",                   "FMAF64",                    "f64_ternary"),
    (0x10, "abs.f64",                   "AbsF64",                    "f64_unary"),
    (0x11, "neg.f64",                   "NegF64",                    "f64_unary"),
    (0x12, "ceil.f64",                  "CeilF64",                   "f64_unary"),
    (0x13, "floor.f64",                 "FloorF64",                  "f64_unary"),
    (0x14, "trunc.f64.f32",             "TruncF64F32",               "f64_to_f32_conversion"),
    (0x15, "ext.f32.f64",               "ExtF32F64",                 "f32_to_f64_conversion"),
    (0x16, "cast.si32.f64",             "CastSI32F64",               "i32_to_f64_conversion"),
    (0x17, "cast.ui32.f64",             "CastUI32F64",               "i32_to_f64_conversion"),
    (0x18, "cast.f64.si32",             "CastF64SI32",               "f64_to_i32_conversion"),
    (0x19, "cast.f64.ui32",             "CastF64UI32",               "f64_to_i32_conversion"),
    (0x1A, "cast.si64.f64",             "CastSI64F64",               "i64_to_f64_conversion"),
    (0x1B, "cast.ui64.f64",             "CastUI64F64",               "i64_to_f64_conversion"),
    (0x1C, "cast.f64.si64",             "CastF64SI64",               "f64_to_i64_conversion"),
    (0x1D, "cast.f64.ui64",             "CastF64UI64",               "f64_to_i64_conversion"),
    (0x1E, "bitcast.i64.f64",           "BitcastI64F64",             "i64_to_f64_conversion"),
    (0x1F, "bitcast.f64.i64",           "BitcastF64I64",             "f64_to_i64_conversion"),
    (0x20, "atan.f64",                  "AtanF64",                   "f64_unary"),
    (0x21, "atan2.f64",                 "Atan2F64",                  "f64_binary"),
    (0x22, "cos.f64",                   "CosF64",                    "f64_unary"),
    (0x23, "sin.f64",                   "SinF64",                    "f64_unary"),
    (0x24, "exp.f64",                   "ExpF64",                    "f64_unary"),
    (0x25, "exp2.f64",                  "Exp2F64",                   "f64_unary"),
    (0x26, "expm1.f64",                 "ExpM1F64",                  "f64_unary"),
    (0x27, "log.f64",                   "LogF64",                    "f64_unary"),
    (0x28, "log10.f64",                 "Log10F64",                  "f64_unary"),
    (0x29, "log1p.f64",                 "Log1pF64",                  "f64_unary"),
    (0x2A, "log2.f64",                  "Log2F64",                   "f64_unary"),
    (0x2B, "pow.f64",                   "PowF64",                    "f64_binary"),
    (0x2C, "rsqrt.f64",                 "RsqrtF64",                  "f64_unary"),
    (0x2D, "sqrt.f64",                  "SqrtF64",                   "f64_unary"),
    (0x2E, "tanh.f64",                  "TanhF64",                   "f64_unary"),
    (0x2F, "erf.f64",                   "ErfF64",                    "f64_unary"),
    (0x30, "cmp.eq.f64.o",              "CmpEQF64O",                 "f64_binary_comparison"),
    (0x31, "cmp.eq.f64.u",              "CmpEQF64U",                 "f64_binary_comparison"),
    (0x32, "cmp.ne.f64.o",              "CmpNEF64O",                 "f64_binary_comparison"),
    (0x33, "cmp.ne.f64.u",              "CmpNEF64U",                 "f64_binary_comparison"),
    (0x34, "cmp.lt.f64.o",              "CmpLTF64O",                 "f64_binary_comparison"),
    (0x35, "cmp.lt.f64.u",              "CmpLTF64U",                 "f64_binary_comparison"),
    (0x36, "cmp.lte.f64.o",             "CmpLTEF64O",                "f64_binary_comparison"),
    (0x37, "cmp.lte.f64.u",             "CmpLTEF64U",                "f64_binary_comparison"),
    (0x38, "cmp.nan.f64",               "CmpNaNF64",                 "f64_unary_comparison"),
    (0x39, "buffer.load.f64",           "BufferLoadF64",             "f64_buffer_load"),
    (0x3A, "buffer.store.f64",          "BufferStoreF64",            "f64_buffer_store"),
    (0x3B, "buffer.fill.f64",           "BufferFillF64",             "f64_buffer_fill"),
    (0x3C, "round.f64",                 "RoundF64",                  "f64_unary"),
    (0x3D, "min.f64",                   "MinF64",                    "f64_binary"),
    (0x3E, "max.f64",                   "MaxF64",                    "f64_binary"),
    (0x3F, "round.f64.even",            "RoundF64Even",              "f64_unary"),
    (0x40, "fpowi.f64",                 "FPowIF64",                  "f64_fpowi"),
)


class Field(NamedTuple):
    """One operand field of an encoding, in stream order."""

    name: str
    kind: str  # REG, IMM, GLOBAL, RODATA, TYPE, FUNC, STRING, LIST, RESULTS, SEGMENTS, TARGET, REMAP, CASES
    bank: str | None = None  # register bank (REG, LIST), constant type (IMM)
    write: bool = False  # REG: the op writes the register
    move: bool = False  # REG / LIST of refs: the op honours the move bit


class Opcode(NamedTuple):
    """One instruction: where it lives (table + code), its name and its fields.

    Field and Opcode are NamedTuples, not dataclasses: the table is built at import, on every run.
    """

    table: str  # "core", "ext_f32" or "ext_f64"
    code: int
    mnemonic: str
    symbol: str
    encoding: str
    fields: tuple[Field, ...]
    terminator: bool

    @property
    def requires(self) -> FeatureBits:
        """Feature bit a function must declare to use this op."""
        return TABLE_FEATURE[self.table]

    @property
    def is_block(self) -> bool:
        return self.table == "core" and self.code == BLOCK_MARKER

    @property
    def encoded(self) -> bytes:
        """The opcode bytes as they appear in the stream (with the prefix for extension ops)."""
        prefix = TABLE_PREFIX.get(self.table)
        return bytes([self.code]) if prefix is None else bytes([prefix, self.code])


def _parse_field(text: str) -> Field:
    name, _, spec = text.partition(":")
    write = spec.startswith("=")
    spec = spec.lstrip("=")
    move = spec.endswith("*")
    spec = spec.rstrip("*")
    if spec in REGISTER_BANKS:
        return Field(name, REG, spec, write, move)
    kind, _, bank = spec.partition(".")
    if kind == IMM and bank in ("i32", "i64", "f32", "f64"):
        return Field(name, IMM, bank)
    if kind == LIST and bank in REGISTER_BANKS:
        return Field(name, LIST, bank, False, move)
    if kind in _SIMPLE_KINDS and not bank:
        return Field(name, kind)
    raise ValueError(f"bad ISA field spec {text!r}")


def _build() -> tuple[dict[str, tuple[Opcode | None, ...]], dict[str, Opcode]]:
    fields = {name: tuple(_parse_field(f) for f in spec.split()) for name, spec in ENCODINGS.items()}
    tables: dict[str, tuple[Opcode | None, ...]] = {}
    mnemonics: dict[str, Opcode] = {}
    for table, rows in (("core", CORE), ("ext_f32", EXT_F32), ("ext_f64", EXT_F64)):
        slots: list[Opcode | None] = [None] * 256
        for code, mnemonic, symbol, encoding in rows:
            op = Opcode(table, code, mnemonic, symbol, encoding, fields[encoding], mnemonic in TERMINATORS)
            if slots[code] is not None or mnemonic in mnemonics or (table == "core" and code in PREFIXES):
                raise ValueError(f"duplicate ISA entry {table} 0x{code:02X} {mnemonic}")
            slots[code] = op
            mnemonics[mnemonic] = op
        tables[table] = tuple(slots)
    return tables, mnemonics


TABLES, _BY_MNEMONIC = _build()
OPCODES: tuple[Opcode, ...] = tuple(op for t in TABLES.values() for op in t if op is not None)


def by_mnemonic(mnemonic: str) -> Opcode:
    """The opcode named `mnemonic` (e.g. "add.i32", "fpowi.f32"); KeyError if unknown."""
    return _BY_MNEMONIC[mnemonic]

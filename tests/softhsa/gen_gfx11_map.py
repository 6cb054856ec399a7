#!/usr/bin/env python3
"""Writes tests/softhsa/src/isa_gfx11_map.h: for each GFX11 (gfx1100) opcode of each encoding,
the GFX9 (gfx942) opcode that performs the same operation, so that softhsa's interpreter
(src/isa.c) runs RDNA3 machine code on the semantics it already has for CDNA3.

The facts come from LLVM's disassembler, not from our code: every opcode value of every encoding
is disassembled with `llvm-mc-19 --disassemble` for both processors, and the mnemonics are
matched (GFX11 renamed many instructions: RENAMES below). Operations GFX9 lacks get the
softhsa-private numbers in PRIVATE (src/isa.c implements them); pure scheduling hints
(s_clause, s_delay_alu, ...) map to NOP. Also written: which VOP1/VOP2/VOPC operands are 16-bit
(true16: in those encodings a VGPR field's bit 7 selects the register's high half), from the
mnemonic's types.

  python tests/softhsa/gen_gfx11_map.py     (about two minutes; needs llvm-mc-19)
"""

from __future__ import annotations

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

OUT = Path(__file__).resolve().parent / "src" / "isa_gfx11_map.h"
NONE, NOP = 0xFFFF, 0xFFFE

# Operations without a GFX9 opcode: softhsa's own numbers (VALU above the VOP3 space; SOP1
# saveexec on 32-bit masks as 0x80 | the 64-bit form's GFX9 opcode).
PRIVATE = {
    "v_cndmask_b16": 0x400, "v_mov_b16": 0x401, "v_cvt_u32_u16": 0x402, "v_xor3_b32": 0x403,
    "v_permlanex16_b32": 0x404, "v_cvt_i32_i16": 0x405,
    # VOP1/VOP2 operations whose GFX9 form has no VOP3 encoding to match through
    "v_readfirstlane_b32": 0x142, "v_dot2acc_f32_f16": 0x137, "v_fmamk_f32": 0x117,
    "v_fmaak_f32": 0x118,
    "v_and_b16": 0x407, "v_or_b16": 0x408, "v_xor_b16": 0x409, "v_not_b16": 0x40a,
    "v_permlane16_b32": 0x40b, "v_maxmin_f32": 0x40c, "v_minmax_f32": 0x40d,
    "v_maxmin_u32": 0x40e, "v_minmax_u32": 0x40f, "v_maxmin_i32": 0x410, "v_minmax_i32": 0x411,
    "s_and_saveexec_b32": 0x80 | 32, "s_or_saveexec_b32": 0x80 | 33,
    "s_xor_saveexec_b32": 0x80 | 34, "s_and_not1_saveexec_b32": 0x80 | 35,
}
NOPS = {"s_clause", "s_delay_alu", "s_waitcnt_depctr", "s_set_inst_prefetch_distance",
        "s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt",
        "s_version"}
RENAMES = {
    "v_add_nc_u32": "v_add_u32", "v_sub_nc_u32": "v_sub_u32", "v_subrev_nc_u32": "v_subrev_u32",
    "v_add_co_ci_u32": "v_addc_co_u32", "v_sub_co_ci_u32": "v_subb_co_u32",
    "v_subrev_co_ci_u32": "v_subbrev_co_u32", "v_cls_i32": "v_ffbh_i32",
    "v_clz_i32_u32": "v_ffbh_u32", "v_ctz_i32_b32": "v_ffbl_b32", "v_add_nc_u16": "v_add_u16",
    "v_sub_nc_u16": "v_sub_u16", "v_cvt_floor_i32_f32": "v_cvt_flr_i32_f32",
    "v_cvt_nearest_i32_f32": "v_cvt_rpi_i32_f32", "v_dot2acc_f32_f16": "v_dot2c_f32_f16",
    "global_load_d16_b16": "global_load_short_d16",
    "s_ctz_i32_b32": "s_ff1_i32_b32", "s_ctz_i32_b64": "s_ff1_i32_b64",
    "s_clz_i32_u32": "s_flbit_i32_b32", "s_clz_i32_u64": "s_flbit_i32_b64",
    "s_cls_i32": "s_flbit_i32", "s_cls_i32_i64": "s_flbit_i32_i64",
    "global_load_d16_hi_b16": "global_load_short_d16_hi",
}
MEMORY_TYPES = {"b32": "dword", "b64": "dwordx2", "b96": "dwordx3", "b128": "dwordx4",
                "u8": "ubyte", "i8": "sbyte", "u16": "ushort", "i16": "sshort", "b8": "byte",
                "b16": "short"}
SMEM_TYPES = {"b32": "dword", "b64": "dwordx2", "b128": "dwordx4", "b256": "dwordx8",
              "b512": "dwordx16"}


def v(register: int) -> int:
    return 256 + register


# (name, processor, opcode count, encoder(op) -> candidate instruction words, tried in order:
# LLVM rejects an opcode whose unused fields are set, so the later ones clear them)
def _vop3(prefix):
    return lambda op: [[(prefix << 26) | (op << 16) | 4, v(2) | (v(6) << 9) | (v(8) << 18)],
                       [(prefix << 26) | (op << 16) | 4, v(2) | (v(6) << 9)],
                       [(prefix << 26) | (op << 16) | 4, v(2)],
                       [(prefix << 26) | (op << 16) | 4, v(2) | (v(6) << 9) | (106 << 18)]]


def _ds(shift):
    head = lambda op: (0x36 << 26) | (op << shift) | 4
    return lambda op: [[head(op), w] for w in (2 | (4 << 8) | (6 << 16) | (8 << 24),
                                                 2 | (4 << 8) | (6 << 16), 2 | (4 << 8),
                                                 2 | (8 << 24), 2 | (4 << 8) | (8 << 24),
                                                 8 << 24, 0)]


def _vop3p(head):
    return lambda op: [[(head | (op << 16) | (3 << 11) | 1),
                        v(2) | (v(3) << 9) | (v(4) << 18) | (3 << 27)],
                       [head | (op << 16) | 4, v(2) | (v(6) << 9) | (v(8) << 18)],
                       [head | (op << 16) | 4, v(2) | (v(6) << 9)],
                       [head | (op << 16) | (1 << 14) | 8, v(16) | (v(24) << 9) | (v(8) << 18) | (3 << 27)]]


ENCODINGS = {
    "VOP3": (("gfx1100", 1024, _vop3(0x35)), ("gfx942", 1024, _vop3(0x34))),
    "VOP3P": (("gfx1100", 128, _vop3p(0xCC << 24)), ("gfx942", 128, _vop3p(0x1A7 << 23))),
    "SOP2": tuple((cpu, 128, lambda op: [[(2 << 30) | (op << 23) | (4 << 16) | (2 << 8) | 6]])
                  for cpu in ("gfx1100", "gfx942")),
    "SOPK": tuple((cpu, 32, lambda op: [[(0xB << 28) | (op << 23) | (4 << 16) | 5]])
                  for cpu in ("gfx1100", "gfx942")),
    "SOP1": tuple((cpu, 256, lambda op: [[(0x17D << 23) | (4 << 16) | (op << 8) | 6]])
                  for cpu in ("gfx1100", "gfx942")),
    "SOPC": tuple((cpu, 128, lambda op: [[(0x17E << 23) | (op << 16) | (4 << 8) | 6]])
                  for cpu in ("gfx1100", "gfx942")),
    "SOPP": tuple((cpu, 128, lambda op: [[(0x17F << 23) | (op << 16) | 1],
                                         [(0x17F << 23) | (op << 16)]])
                  for cpu in ("gfx1100", "gfx942")),
    "SMEM": (("gfx1100", 256, lambda op: [[(0x3D << 26) | (op << 18) | (4 << 6) | 1,
                                           (0x7C << 25) | 16]]),
             ("gfx942", 256, lambda op: [[(0x30 << 26) | (op << 18) | (1 << 17) | (4 << 6) | 1,
                                          16]])),
    "DS": (("gfx1100", 256, _ds(18)), ("gfx942", 256, _ds(17))),
    "MUBUF": (("gfx1100", 256, lambda op: [[(0x38 << 26) | (op << 18) | (1 << 12) | 4,
                                            1 | (2 << 8) | (1 << 16) | (0x80 << 24)]]),
              ("gfx942", 128, lambda op: [[(0x38 << 26) | (op << 18) | (1 << 12) | 4,
                                           1 | (2 << 8) | (1 << 16) | (0x80 << 24)]])),
    "FLAT": (("gfx1100", 128, lambda op: [[(0x37 << 26) | (2 << 16) | (op << 18),
                                           2 | (3 << 8) | (0x7C << 16) | (4 << 24)]]),
             ("gfx942", 128, lambda op: [[(0x37 << 26) | (2 << 14) | (op << 18),
                                          2 | (3 << 8) | (0x7F << 16) | (4 << 24)]])),
}
# The 32-bit VALU encodings of GFX11, mapped through their VOP3 forms.
SHORT = {
    "VOP1": ("gfx1100", 256, lambda op: [[(0x3F << 25) | (1 << 17) | (op << 9) | v(2)]]),
    "VOP2": ("gfx1100", 64, lambda op: [[(op << 25) | (1 << 17) | (3 << 9) | v(2)],
                                        [(op << 25) | (1 << 17) | (3 << 9) | v(2), 0x3F800000]]),
    "VOPC": ("gfx1100", 256, lambda op: [[(0x3E << 25) | (op << 17) | (3 << 9) | v(2)]]),
}


def disassemble(cpu: str, words: list[int]) -> str | None:
    text = " ".join(f"0x{b:02x}" for w in words for b in w.to_bytes(4, "little"))
    run = subprocess.run(["llvm-mc-19", "--disassemble", "-triple=amdgcn-amd-amdhsa",
                          f"-mcpu={cpu}"], input=text, capture_output=True, text=True)
    if "invalid" in run.stderr:
        return None
    lines = [line.strip() for line in run.stdout.splitlines()
             if line.strip() and not line.strip().startswith(".")]
    return lines[0].split()[0] if lines else None


def mnemonics(cpu: str, count: int, encode) -> dict[int, str]:
    def one(op):
        for words in encode(op):
            name = disassemble(cpu, words)
            if name:
                return re.sub(r"_(e32|e64|sdwa|dpp)$", "", name)
        return None
    with ThreadPoolExecutor(8) as pool:
        names = list(pool.map(one, range(count)))
    return {op: name for op, name in enumerate(names) if name}


def gfx9_spelling(name: str) -> str:
    name = RENAMES.get(name, name)
    name = name.replace("_and_not1_", "_andn2_").replace("_or_not1_", "_orn2_")
    m = re.match(r"(buffer|global|flat)_(load|store)_(\w+)$", name)
    if m and m.group(3) in MEMORY_TYPES:
        return f"{m.group(1)}_{m.group(2)}_{MEMORY_TYPES[m.group(3)]}"
    m = re.match(r"s_(buffer_)?load_(b\d+)$", name)
    if m and m.group(2) in SMEM_TYPES:
        return f"s_{m.group(1) or ''}load_{SMEM_TYPES[m.group(2)]}"
    if name.startswith("ds_"):
        for new, old in (("ds_load_2addr_stride64_", "ds_read2st64_"),
                         ("ds_store_2addr_stride64_", "ds_write2st64_"),
                         ("ds_load_2addr_", "ds_read2_"), ("ds_store_2addr_", "ds_write2_"),
                         ("ds_load_", "ds_read_"), ("ds_store_", "ds_write_")):
            name = name.replace(new, old)
    return name


def table(gfx11: dict[int, str], gfx9: dict[int, str], size: int) -> list[int]:
    by_name: dict[str, int] = {}
    for op, name in sorted(gfx9.items()):
        by_name.setdefault(name, op)
    out = [NONE] * size
    for op, name in gfx11.items():
        if name in PRIVATE:
            out[op] = PRIVATE[name]
        elif name in NOPS:
            out[op] = NOP
        elif gfx9_spelling(name) in by_name:
            out[op] = by_name[gfx9_spelling(name)]
    return out


def true16(name: str) -> int:
    """Bit 0: src0 is 16-bit, bit 1: src1, bit 2: the destination."""
    small = ("f16", "i16", "u16", "b16")
    m = re.match(r"v_cvt_([a-z0-9]+)_([a-z0-9]+)$", name)
    if m:
        return (1 if m.group(2) in small else 0) | (4 if m.group(1) in small else 0)
    if name.startswith("v_cmp") or name.startswith("v_pack_") or \
            re.match(r"v_mad_[iu]32_[iu]16$", name):  # 16-bit sources, a 32-bit result
        return 3 if name.endswith(small) else 0
    return 7 if name.endswith(small) else 0


def c_names(name: str, names: dict[int, str], size: int) -> str:
    """A table of mnemonics by opcode (NULL where LLVM decodes none)."""
    cells = [f'"{names[op]}"' if op in names else "NULL" for op in range(size)]
    rows = [", ".join(cells[i:i + 6]) for i in range(0, size, 6)]
    return f"static const char* const {name}[{size}] = {{\n  " + ",\n  ".join(rows) + "\n};\n"


def c_array(name: str, kind: str, values: list[int]) -> str:
    rows = [", ".join(f"0x{x:04x}" if kind == "uint16_t" else str(x) for x in values[i:i + 8])
            for i in range(0, len(values), 8)]
    return f"static const {kind} {name}[{len(values)}] = {{\n  " + ",\n  ".join(rows) + "\n};\n"


def main() -> int:
    parts = ["/* Generated by tests/softhsa/gen_gfx11_map.py from llvm-mc-19's disassembler: for "
             "each GFX11 opcode,\n * the GFX9 (gfx942) opcode of the same operation; "
             "0xffff none, 0xfffe a scheduling hint (no effect\n * here); 0x400+ (VALU) and "
             "0x80|op (SOP1) softhsa-private operations. Then both generations' mnemonics by "
             "opcode\n * (for the interpreter's messages). Do not edit. */\n",
             "#define GFX11_NONE 0xffff\n#define GFX11_NOP 0xfffe\n\n"]
    names: list[str] = []
    vop3_11 = None
    for encoding, ((cpu11, n11, enc11), (cpu9, n9, enc9)) in ENCODINGS.items():
        names11, names9 = mnemonics(cpu11, n11, enc11), mnemonics(cpu9, n9, enc9)
        names.append(c_names(f"GFX11_NAMES_{encoding}", names11, n11))
        names.append(c_names(f"GFX9_NAMES_{encoding}", names9, n9))
        parts.append(c_array(f"GFX11_{encoding}", "uint16_t", table(names11, names9, n11)))
        if encoding == "VOP3":
            vop3_11 = names11
            vop3_9 = table(names11, names9, n11)
            flags = [true16(names11.get(op, "")) for op in range(n11)]
            parts.append(c_array("GFX11_VOP3_T16", "uint8_t", flags))
    by_vop3 = {name: op for op, name in sorted(vop3_11.items(), reverse=True)}
    for encoding, (cpu, count, encode) in SHORT.items():
        short = mnemonics(cpu, count, encode)
        names.append(c_names(f"GFX11_NAMES_{encoding}", short, count))
        ops = [NONE] * count
        flags = [0] * count
        for op, name in short.items():
            if name in PRIVATE:
                ops[op] = PRIVATE[name]
            elif name in by_vop3:
                ops[op] = vop3_9[by_vop3[name]]
            flags[op] = true16(name)
        parts.append(c_array(f"GFX11_{encoding}", "uint16_t", ops))
        parts.append(c_array(f"GFX11_{encoding}_T16", "uint8_t", flags))
    OUT.write_text("\n".join(parts + names))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

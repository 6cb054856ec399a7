"""Disassembly: decoded function bodies in iree-dump-module's text form.

`disassemble(module, ordinal)` renders a verified body as `iree-dump-module --output=disassembly`
prints it, one string per line, `^bbN:` for block markers (`offsets=True` adds the
`--bytecode_offsets` prefix); `format_instruction` renders one instruction.
"""

from __future__ import annotations

from amdgpu_cli.formats.vmfb import BytecodeModule
from amdgpu_cli.vm.decoder import Callee, Instruction, Register, decode_function
from amdgpu_cli.vm.isa import LIST, REG

__all__ = ["disassemble", "format_instruction"]


# -- disassembly ----------------------------------------------------------------------------------


def disassemble(module: BytecodeModule, ordinal: int, *, offsets: bool = False) -> list[str]:
    """Function `ordinal` as iree-dump-module prints its body (no header/footer lines).

    With `offsets`, each line is prefixed `[XXXXXXXX]` like `--bytecode_offsets`.
    """
    code = decode_function(module, ordinal)
    block_ids = {ins.offset: n for n, ins in enumerate(i for i in code if i.is_block)}
    lines = []
    for ins in code:
        text = format_instruction(module, ins, block_ids)
        indent = "" if ins.is_block else "  "
        lines.append((f"[{ins.offset:08X}]" if offsets else "") + indent + text)
    return lines


def format_instruction(module: BytecodeModule, ins: Instruction, block_ids: dict[int, int]) -> str:
    """One instruction in iree-dump-module's syntax."""
    op = ins.op
    o = ins.operands
    mn = op.mnemonic
    if op.is_block:
        return f"{_block(ins.offset, block_ids)}:"

    def reg(name: str) -> str:
        # Fields that ignore the move bit print as %r even when it is set (as IREE's tool does).
        f = next(f for f in op.fields if f.name == name)
        r = o[name]
        return f"%r{r.index}" if r.is_ref and not f.move else str(r)

    def block(target: int, remap) -> str:
        return f"{_block(target, block_ids)}({_remap(remap)})"

    results = [reg(f.name) for f in op.fields if f.kind == REG and f.write]
    lhs = f"{', '.join(results)} = " if results else ""
    head = f"{lhs}vm.{mn}"

    if mn.startswith("call"):
        text = f"vm.{mn} @{_function_name(module, o['callee_ordinal'])}"
        if "segment_sizes" in o:
            text += f" segments[{', '.join(map(str, o['segment_sizes']))}]"
        text += f"({_regs(o['operands'])})"
        if "dest_pc" in o:
            return f"{text} -> {_block(o['dest_pc'], block_ids)}({_regs(o['results'])})"
        return (f"{_regs(o['results'])} = " if o["results"] else "") + text
    if mn in ("const.i32", "const.i64"):
        v = o["value"]
        width = 8 if mn == "const.i32" else 16
        return f"{head} {v}  // 0x{v & ((1 << (4 * width)) - 1):0{width}X}"
    if mn in ("const.f32", "const.f64"):
        return f"{head} {_float(o['value'], mn == 'const.f64')}"
    if mn == "const.ref.rodata":
        n = o["rodata"]
        size = len(module.rodata[n]) if n < len(module.rodata) else 0
        return f"{head} {n}  // {size}b"
    if mn.startswith("select."):
        text = f"{head} {reg('condition')} ? {reg('true_value')} : {reg('false_value')}"
        return text + (f" -> {_type_name(module, o['true_value_type_def'])}" if mn == "select.ref" else "")
    if mn.startswith("switch."):
        return f"{head} {reg('index')}[{_regs(o['values'])}] else {reg('default_value')}"
    if mn.startswith("global."):
        return _format_global(module, ins, head, reg)
    if mn.startswith("buffer.store."):
        return f"{head} {reg('value')}, {reg('target_buffer')}, {reg('target_offset')}"
    if mn == "list.alloc":
        return f"{head} {reg('initial_capacity')} : !vm.list<{_type_name(module, o['element_type'])}>"
    if mn == "list.get.ref":
        return f"{head} {reg('list')}, {reg('index')} : {_type_name(module, o['type_def'])}"
    if mn == "cast.any.ref":
        return f"{head} {reg('operand')} : !vm.ref<?> -> {_type_name(module, o['result_type'])}"
    if mn == "import.resolved":
        callee = o["import_ordinal"]
        if not callee.is_import:
            return f"{head} @{{INVALID ORDINAL {callee.ordinal}}}"
        return f"{head} @{_function_name(module, callee)}"
    if mn in ("br", "yield", "break"):
        return f"{head} {block(o['dest_pc'], o['operands'])}"
    if mn == "cond_br":
        return (f"{head} {reg('condition')}, {block(o['true_dest_pc'], o['true_operands'])}, "
                f"{block(o['false_dest_pc'], o['false_operands'])}")
    if mn == "cond_break":
        return f"{head} {reg('condition')}, {block(o['dest_pc'], o['operands'])}"
    if mn == "br_table":
        cases = "".join(f", {i}: {block(t, remap)}" for i, (t, remap) in enumerate(o["cases"]))
        default = block(o["default_dest_pc"], o["default_operands"])
        return f"{head} {reg('index')} {{ default: {default}{cases} }}"
    if mn == "fail":
        return f"{head} {reg('status')}, \"{o['message']}\""
    if mn in ("trace", "print"):
        return f"{head} \"{o['event_name']}\"({_regs(o['operands'])})"
    # Everything else: results, " = vm.<mnemonic> ", then the read fields in stream order.
    parts = []
    for f in op.fields:
        if f.kind == REG and not f.write:
            parts.append(reg(f.name))
        elif f.kind == LIST:
            parts.append(_regs(o[f.name]))
    parts = [p for p in parts if p]
    return f"{head} {', '.join(parts)}" if parts else head


def _format_global(module: BytecodeModule, ins: Instruction, head: str, reg) -> str:
    o = ins.operands
    if "type_def" in o:
        slot = reg("global") if ".indirect" in ins.mnemonic else o["global"]
        where = f".refs[{slot}] : {_type_name(module, o['type_def'])}"
    else:
        slot = reg("byte_offset") if ".indirect" in ins.mnemonic else o["byte_offset"]
        where = f".rwdata[{slot}]"
    if ".store" in ins.mnemonic:
        return f"{head} {reg('value')}, {where}"
    return f"{head} {where}"


def _regs(regs) -> str:
    # Register lists name one slot per entry, even for i64 values (`%i2`, not `%i2:3`).
    return ", ".join(str(Register(r.raw, "any")) for r in regs)


def _remap(pairs) -> str:
    return ", ".join(f"{s}->{d}" for s, d in pairs)


def _block(offset: int, block_ids: dict[int, int]) -> str:
    n = block_ids.get(offset)
    return f"^bb{n}" if n is not None else f"^{offset:08X}"


def _type_name(module: BytecodeModule, type_id: int) -> str:
    return module.types[type_id] if type_id < len(module.types) else f"!type{type_id}"


def _function_name(module: BytecodeModule, callee: Callee) -> str:
    if callee.is_import:
        if callee.ordinal < len(module.imports):
            return module.imports[callee.ordinal].full_name
        return f"import:{callee.ordinal}"
    name = module.internal_function_name(callee.ordinal)
    return f"{module.name}.{name}" if name else f"{module.name}:{callee.ordinal}"


def _float(v: float, double: bool) -> str:
    return f"{v:.17g}" if double else f"{v:.9g}"

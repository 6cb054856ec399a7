"""The op table covers the instruction set exactly: every opcode isa.py lists (itself checked
against IREE's isa.json by test_decoder.py) has a row, and no row names an opcode it lacks."""

import inspect

from amdgpu_cli.vm import isa, op_table


def test_every_opcode_has_exactly_one_row():
    for table, slots in isa.TABLES.items():
        rows = op_table.ROWS[table]
        codes = {op.code for op in slots if op is not None and not op.is_block}
        assert set(rows) == codes, table


def test_rows_fit_their_builders():
    """Each row's parameters bind to its builder's (builder, operands, *parameters)."""
    for table, rows in op_table.ROWS.items():
        for code, (builder, *parameters) in rows.items():
            inspect.signature(builder).bind(None, None, *parameters)


def test_constant_ops_are_the_const_family():
    constant = {op.mnemonic for op in isa.OPCODES if not op.is_block
                and op_table.ROWS[op.table][op.code][0] in op_table._CONSTANT_BUILDERS}
    assert constant == {f"const.{t}{z}" for t in ("i32", "i64", "f32", "f64") for z in ("", ".zero")
                        } | {"const.ref.zero", "const.ref.rodata"}

"""The IREE VM: bytecode ISA, decoder and verifier (interpreter and context come later).

`isa`      the bytecode 17.0 opcode table (core, ext_f32, ext_f64) with operand encodings
`decoder`  function bodies -> `Instruction` lists; `verify(module, ordinal)`; `disassemble`
"""

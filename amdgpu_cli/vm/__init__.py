"""The IREE VM: bytecode ISA, decoder, verifier and disassembler (the executor comes next).

`isa`           the bytecode 17.0 opcode table (core, ext_f32, ext_f64) with operand encodings
`decoder`       function bodies -> `Instruction` lists; `verify(module, ordinal)`
`disassembler`  decoded bodies in iree-dump-module's text form
"""

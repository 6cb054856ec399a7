"""The IREE VM: bytecode ISA, decoder, verifier, disassembler, and the executor.

`isa`           the bytecode 17.0 opcode table (core, ext_f32, ext_f64) with operand encodings
`decoder`       function bodies -> `Instruction` lists; `verify(module, ordinal)`
`disassembler`  decoded bodies in iree-dump-module's text form
`interpreter`   each function translated once into closures; frames, calls, traps
`context`       VmContext: a module instantiated over native modules (imports, globals, __init)
`refs`          VM ref types: VmBuffer, VmList; VmTrap
"""

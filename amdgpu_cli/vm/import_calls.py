"""Import calls: how a call site of a bytecode function calls a host (or other module's) function.

`ImportBinding` is a resolved import; `TrappingImport` an import function whose project errors
are traps (what the native `hal` and `io_parameters` modules export). `import_call` builds the op
of one call site. An import call is the hot path of compiled models (every hal.* call is one):
a site walks its shape (`_walk_import_call`) for its first WALKED_IMPORT_RUNS runs, then its
operand marshalling is generated as straight-line Python (`_import_op_factory`, compiled with
`exec` once per shape and process) with the operands in constant registers as literals, and the
generated op replaces the walking one in the function's closure list.

Host values across the call (see interpreter.py's docstring): signed ints, Python floats, refs,
and a list of tuples for a variadic span.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from amdgpu_cli.errors import AmdgpuCliError
from amdgpu_cli.formats.vmfb import split_cconv
from amdgpu_cli.vm.numerics import (M32, _cconv_items, f32_bits, f32_value, f64_bits, f64_value,
                                    host_to_raw, raw_to_host)
from amdgpu_cli.vm.refs import VmTrap


class ImportBinding(NamedTuple):  # NamedTuples here: cheaper to define than dataclasses at start-up
    """A resolved import: `fn(*host_args) -> sequence of host results` (or None for none)."""

    full_name: str
    cconv: str
    fn: Callable


class TrappingImport:
    """An import function whose project errors are traps: `function(*host_args)` returns its
    results (a bare value, None for a null ref, when the cconv has exactly one result; else a
    sequence or None) and may raise any AmdgpuCliError.

    Called (`__call__`) it is an ordinary import: results as a tuple, errors as VmTraps with the
    same status. Generated call sites call `function` itself and do both inline, which saves a
    Python call level on every call of the hottest imports (the `hal` module's)."""

    __slots__ = ("function", "single")

    def __init__(self, function: Callable, single: bool):
        self.function = function
        self.single = single

    def __call__(self, *args):
        try:
            out = self.function(*args)
        except VmTrap:
            raise
        except AmdgpuCliError as e:
            raise VmTrap(str(e), status=e.status) from e
        return (out,) if self.single else out


def import_call(fb, ordinal: int, args, results, segments, resume):
    """The op of one import call site: walks its shape for its first WALKED_IMPORT_RUNS runs,
    then generates the site's code (its operands in constant registers as literals) and puts it
    in its own place in the function's closure list."""
    imp = fb.module.imports[ordinal]
    binding = fb.interp.imports[ordinal] if ordinal < len(fb.interp.imports) else None
    name = imp.full_name
    if binding is None:
        def op(i, r):
            raise VmTrap(f"import {name} is not resolved", status="NOT_FOUND")
        return op
    arg_frag, res_frag = split_cconv(imp.cconv or "0v_v")
    # Shape: per top-level item (char, move) or ("C", ((char, move), ...) per tuple), with
    # the operand registers in read order beside it.
    shape, regs = [], []
    operands = iter(args)
    for k, item in enumerate(_cconv_items(arg_frag)):
        if item.startswith("C"):
            count = segments[k] if segments is not None else 0
            tuples = []
            for _ in range(count):
                tup = []
                for ch in item[1:]:
                    reg = next(operands)
                    tup.append((ch, reg.move))
                    regs.extend(_registers(ch, reg))
                tuples.append(tuple(tup))
            shape.append(("C", tuple(tuples)))
        else:
            reg = next(operands)
            shape.append((item, reg.move))
            regs.extend(_registers(item, reg))
    res_chars = res_frag if res_frag != "v" else ""
    for ch, reg in zip(res_chars, results):
        regs.extend(_registers(ch, reg))
    fn = binding.fn
    direct = isinstance(fn, TrappingImport)
    shape = tuple(shape)
    # The first run walks the shape; a second run generates the site's code (with the
    # operands that are constant registers as literals) and swaps it in. Most sites of a
    # process run once (`__init`'s, and each of a CLI run's single call), and generating
    # code for them is a few ms of every start.
    code, pc = fb.code, len(fb.code)
    runs = 0

    def op(i, r):
        nonlocal runs
        runs += 1
        if runs <= WALKED_IMPORT_RUNS:
            return _walk_import_call(i, r, fn, shape, res_chars, regs, name, resume)
        literal, values = _literal_operands(shape, regs, fb.constants or {})
        factory = _import_op_factory(shape, res_chars, direct, literal)
        compiled = code[pc] = factory(fn.function if direct else fn, resume, name, *values)
        return compiled(i, r)
    return op


# -- import calls ---------------------------------------------------------------------------------
#
# An import call is the hot path of compiled models (every hal.* call is one), so each call site's
# operand marshalling is generated as straight-line Python (no per-operand loop, branch or helper
# call). The code depends only on the call's shape (cconv, move bits, span sizes), not on its
# registers, which the factory takes as closure values: call sites of one shape share one compiled
# factory, so the compile cost is paid per shape and process, not per site.

_import_factories: dict[tuple, Callable] = {}
# Runs of a call site that walk its shape before its code is generated (tests set 0, so that a

WALKED_IMPORT_RUNS = 1

# Raw register(s) -> host value (raw_to_host), as expressions over register names {n} / {hi}.
_IMPORT_READ = {
    "i": "(i[{n}] ^ 0x80000000) - 0x80000000",
    "I": "((i[{n}] | i[{hi}] << 32) ^ 0x8000000000000000) - 0x8000000000000000",
    "f": "f32_value(i[{n}])",
    "F": "f64_value(i[{n}] | i[{hi}] << 32)",
}
# Host result `v` -> raw register(s) (host_to_raw).
_IMPORT_WRITE = {
    "i": ["i[{n}] = int({v}) & 0xFFFFFFFF"],
    "f": ["i[{n}] = f32_bits(float({v}))"],
    "I": ["raw = int({v}) & 0xFFFFFFFFFFFFFFFF", "i[{n}] = raw & 0xFFFFFFFF",
          "i[{hi}] = raw >> 32"],
    "F": ["raw = f64_bits(float({v}))", "i[{n}] = raw & 0xFFFFFFFF", "i[{hi}] = raw >> 32"],
    "r": ["r[{n}] = {v}"],
}


def _registers(ch: str, reg) -> tuple[int, ...]:
    """The register(s) an operand of cconv char `ch` names: an i64/f64 pair for I and F."""
    return (reg.index, reg.index + 1) if ch in "IF" else (reg.index,)


def _walk_import_call(i: list, r: list, fn: Callable, shape: tuple, res_chars: str,
                      regs: tuple, name: str, resume):
    """One import call the slow way, walking `shape` as the generated code of that shape
    would: operands read in order (a moved ref reads as null to later operands), `fn` called
    as an ordinary import (a TrappingImport's `__call__` turns errors into traps), results
    checked and written to their registers."""
    next_reg = iter(regs).__next__

    def read(ch: str, move: bool):
        n = next_reg()
        if ch == "r":
            value = r[n]
            if move:
                r[n] = None
            return value
        return raw_to_host(ch, i[n] | i[next_reg()] << 32 if ch in "IF" else i[n])

    args = []
    for ch, spec in shape:
        if ch == "C":
            args.append([tuple(read(c, move) for c, move in tup) for tup in spec])
        else:
            args.append(read(ch, spec))
    out = _import_results(fn(*args), len(res_chars), name)
    for ch, value in zip(res_chars, out):
        n = next_reg()
        if ch == "r":
            r[n] = value
            continue
        raw = host_to_raw(ch, value)
        if ch in "IF":
            i[n], i[next_reg()] = raw & M32, raw >> 32
        else:
            i[n] = raw
    return resume


def _literal_operands(shape: tuple, regs: tuple, constants: dict[int, int]
                      ) -> tuple[tuple[bool, ...], list]:
    """Which scalar operands of an import site read constant registers (one flag per int/float
    operand, in read order), and the factory's values: such an operand's host value in place of
    its register(s); every other register as it is."""
    literal, values = [], []
    registers = iter(regs)
    next_reg = registers.__next__

    def operand(ch: str) -> None:
        n = next_reg()
        if ch == "r":
            values.append(n)
            return
        wide = ch in "IF"
        hi = next_reg() if wide else None
        if n in constants and (not wide or hi in constants):
            raw = constants[n] | constants[hi] << 32 if wide else constants[n]
            literal.append(True)
            values.append(raw_to_host(ch, raw))
        else:
            literal.append(False)
            values.append(n)
            if wide:
                values.append(hi)

    for ch, spec in shape:
        if ch == "C":
            for tup in spec:
                for c, _ in tup:
                    operand(c)
        else:
            operand(ch)
    values.extend(registers)  # the result registers
    return tuple(literal), values


def _import_results(out, count: int, name: str) -> tuple:
    """An import's return value as `count` results: None is none, a bare value is one."""
    if out is None:
        out = ()
    elif not isinstance(out, (tuple, list)):
        out = (out,)
    if len(out) != count:
        raise VmTrap(f"import {name} returned {len(out)} values, expected {count}",
                     status="INTERNAL")
    return out


def _import_op_factory(shape: tuple, res_chars: str, direct: bool,
                       literal: tuple[bool, ...] = ()) -> Callable:
    """`factory(fn, resume, name, *values) -> op` for import calls of this shape; `direct`:
    `fn` is a TrappingImport's function (one result comes bare). `literal` flags the scalar
    operands (in read order) whose value is passed as a host value instead of register(s)
    (`_literal_operands`); the rest, and results, are register indices."""
    key = (shape, res_chars, direct, literal)
    factory = _import_factories.get(key)
    if factory is not None:
        return factory
    params, body = [], []
    next_literal = iter(literal).__next__

    def register(ch: str) -> dict:
        """Names for the next operand's register(s): {n}, and {hi} for an I/F pair."""
        n = f"n{len(params)}"
        params.append(n)
        if ch not in "IF":
            return {"n": n}
        params.append(n + "h")
        return {"n": n, "hi": n + "h"}

    def read(ch: str, move: bool) -> str:
        if ch != "r":
            if literal and next_literal():
                name = f"k{len(params)}"
                params.append(name)
                return name
            return _IMPORT_READ[ch].format(**register(ch))
        names = register(ch)
        # Refs are read into locals in operand order, so a moved register reads as null to any
        # later operand that names it, as the operands are read one at a time.
        temp = f"a{len(body)}"
        body.append(f"{temp} = r[{names['n']}]")
        if move:
            body.append(f"r[{names['n']}] = None")
        return temp

    call_args = []
    for ch, spec in shape:
        if ch == "C":
            tuples = ["(" + "".join(read(c, mv) + ", " for c, mv in tup) + ")" for tup in spec]
            call_args.append("[" + ", ".join(tuples) + "]")
        else:
            call_args.append(read(ch, spec))
    call = f"out = fn({', '.join(call_args)})"
    if direct:
        body.extend(("try:", f"    {call}", "except VmTrap:", "    raise",
                     "except AmdgpuCliError as e:",
                     "    raise VmTrap(str(e), status=e.status) from e"))
    else:
        body.append(call)
    count = len(res_chars)
    if direct and count == 1:
        names = register(res_chars)
        body.extend(line.format(v="out", **names) for line in _IMPORT_WRITE[res_chars])
    elif count:
        body.append(f"if out.__class__ is not tuple or len(out) != {count}:")
        body.append(f"    out = _import_results(out, {count}, name)")
        for k, ch in enumerate(res_chars):
            names = register(ch)
            body.extend(line.format(v=f"out[{k}]", **names) for line in _IMPORT_WRITE[ch])
    else:
        body.append("if out is not None:")
        body.append("    _import_results(out, 0, name)")
    body.append("return resume")
    source = (f"def factory(fn, resume, name, {', '.join(params)}):\n"
              "    def op(i, r):\n" + "".join(f"        {line}\n" for line in body) +
              "    return op\n")
    namespace = {"f32_value": f32_value, "f64_value": f64_value, "f32_bits": f32_bits,
                 "f64_bits": f64_bits, "_import_results": _import_results, "VmTrap": VmTrap,
                 "AmdgpuCliError": AmdgpuCliError}
    exec(compile(source, "<vm import call>", "exec"), namespace)
    factory = _import_factories[key] = namespace["factory"]
    return factory

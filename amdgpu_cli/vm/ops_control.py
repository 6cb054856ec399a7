"""Op builders for control flow: branches, return, fail, calls, and the ops with no effect here.

Builders as in ops_numeric.py. A branch op returns the index of its target in the function's
closure list (the block markers are gone: `FunctionBuilder.target`), after copying the block's
arguments (its remap list); `return` returns the raw result list; a call returns None, or its
resume index for a yieldable call. Import calls are import_calls.py's.
"""

from __future__ import annotations

from amdgpu_cli.errors import STATUS_NAMES
from amdgpu_cli.formats.vmfb import split_cconv
from amdgpu_cli.vm.import_calls import import_call
from amdgpu_cli.vm.numerics import M32, s32
from amdgpu_cli.vm.refs import VmTrap


def remap(pairs):
    """A function applying a branch remap list, or None when it is empty."""
    if not pairs:
        return None
    steps = tuple((s.is_ref, s.index, d.index, s.move) for s, d in pairs)
    if not any(s[0] for s in steps):
        if len(steps) == 1:
            _, si, di, _ = steps[0]

            def one(i, r):
                i[di] = i[si]
            return one
        moves = tuple((si, di) for _, si, di, _ in steps)

        def ints(i, r):
            for si, di in moves:
                i[di] = i[si]
        return ints

    def apply(i, r):
        for is_ref, si, di, mv in steps:
            if is_ref:
                r[di] = r[si]
                if mv and si != di:
                    r[si] = None
            else:
                i[di] = i[si]
    return apply


def jump(fb, offset: int, pairs):
    """A closure that applies `pairs` and returns the index of the block at `offset`."""
    idx = fb.target(offset)
    rm = remap(pairs)
    if rm is None:
        return lambda i, r: idx

    def op(i, r):
        rm(i, r)
        return idx
    return op


# -- branches ---------------------------------------------------------------------------------

def br(fb, o):
    """br, and yield / break / cond_break: a synchronous host resumes at once."""
    return jump(fb, o["dest_pc"], o["operands"])


def cond_br(fb, o):
    c = o["condition"].index
    if not o["true_operands"] and not o["false_operands"]:
        # No block arguments on either side: the targets themselves, no jump closure calls.
        ti, fi = fb.target(o["true_dest_pc"]), fb.target(o["false_dest_pc"])

        def op(i, r):
            return ti if i[c] else fi
        return op
    t = jump(fb, o["true_dest_pc"], o["true_operands"])
    f = jump(fb, o["false_dest_pc"], o["false_operands"])

    def op(i, r):
        return t(i, r) if i[c] else f(i, r)
    return op


def br_table(fb, o):
    x = o["index"].index
    default = jump(fb, o["default_dest_pc"], o["default_operands"])
    cases = tuple(jump(fb, t, rm) for t, rm in o["cases"])
    n = len(cases)

    def op(i, r):
        k = s32(i[x])
        return cases[k](i, r) if 0 <= k < n else default(i, r)
    return op


def return_(fb, o):
    items = tuple((ch, reg.index, reg.move) for ch, reg in zip(fb.results, o["operands"]))

    def op(i, r):
        out = []
        for ch, n, mv in items:
            if ch == "r":
                out.append(r[n])
                if mv:
                    r[n] = None
            elif ch in "IF":
                out.append(i[n] | i[n + 1] << 32)
            else:
                out.append(i[n])
        return out
    return op


def fail(fb, o):
    s = o["status"].index
    message = o["message"]

    def op(i, r):
        code = i[s]
        if code:
            name = STATUS_NAMES[code] if code < len(STATUS_NAMES) else f"status {code}"
            raise VmTrap(message, status=name)
    return op


# -- ops with no effect beyond their moves ----------------------------------------------------

def import_resolved(fb, o):
    callee = o["import_ordinal"]
    d = o["result"].index
    imports = fb.interp.imports
    value = int(callee.is_import and callee.ordinal < len(imports)
                and imports[callee.ordinal] is not None)

    def op(i, r):
        i[d] = value
    return op


def trace(fb, o):
    """trace and print: nothing is traced here; the moved refs are released."""
    moved = tuple(x.index for x in o["operands"] if x.is_ref and x.move)

    def op(i, r):
        for n in moved:
            r[n] = None
    return op


# -- calls ------------------------------------------------------------------------------------

def call(fb, o, variadic: bool, yieldable: bool):
    """call[.variadic][.yieldable]: an import call site (import_calls.py) or an internal call,
    which runs the callee's compiled function in a frame of its own."""
    callee = o["callee_ordinal"]
    args = o["operands"]
    results = o["results"]
    segments = o["segment_sizes"] if variadic else None
    resume = fb.target(o["dest_pc"]) if yieldable else None
    if callee.is_import:
        return import_call(fb, callee.ordinal, args, results, segments, resume)
    interp = fb.interp
    ordinal = callee.ordinal
    sig_args, sig_results = split_cconv(fb.module.signatures[ordinal].cconv or "0v_v")
    arg_items = tuple((ch, reg.index, reg.move) for ch, reg in zip(sig_args, args))
    res_items = tuple((ch, reg.index) for ch, reg in zip(sig_results, results))
    cache = []

    def op(i, r):
        vals = []
        for ch, n, mv in arg_items:
            if ch == "r":
                vals.append(r[n])
                if mv:
                    r[n] = None
            elif ch in "IF":
                vals.append(i[n] | i[n + 1] << 32)
            else:
                vals.append(i[n])
        if not cache:
            cache.append(interp.function(ordinal))
        out = interp.run(cache[0], vals)
        for (ch, n), v in zip(res_items, out):
            if ch == "r":
                r[n] = v
            elif ch in "IF":
                i[n], i[n + 1] = v & M32, v >> 32
            else:
                i[n] = v
        return resume
    return op

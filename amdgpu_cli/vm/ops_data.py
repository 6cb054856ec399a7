"""Op builders for the VM's data: constants, select and switch, globals, lists, buffers, refs.

Builders as in ops_numeric.py: `builder(fb, o, *row) -> op`, with the row's parameters from
op_table.py (a register type, load or store, ...). Ref operands honour their move bits; a ref
of the wrong type, a null list or buffer, an index or range outside its object are VmTraps with
the status the IREE runtime gives.
"""

from __future__ import annotations

from amdgpu_cli.siphash import siphash24_keyed
from amdgpu_cli.vm.numerics import (
    M32, M64, SIGN32, _S_I16, _S_I8, _S_U16, _S_U8, _U32, _U64, f32_bits, f32_value, f64_bits,
    f64_value, s32, s64,
)
from amdgpu_cli.vm.refs import VmBuffer, VmList, VmTrap, ref_type_name, type_matcher, type_matches


def _buffer(value, what="buffer") -> VmBuffer:
    if value is None:
        raise VmTrap.null(what)
    if not isinstance(value, VmBuffer):
        raise VmTrap(f"{what} is a {ref_type_name(value) or type(value).__name__}, not a vm.buffer",
                     status="INVALID_ARGUMENT")
    return value


def _list(value) -> VmList:
    if value is None:
        raise VmTrap.null("list")
    if not isinstance(value, VmList):
        raise VmTrap(f"ref is a {ref_type_name(value) or type(value).__name__}, not a vm.list",
                     status="INVALID_ARGUMENT")
    return value


# -- constants, select, switch ------------------------------------------------------------------

def const_ref_zero(fb, o):
    d = o["result"].index

    def op(i, r):
        r[d] = None
    return op


def const_ref_rodata(fb, o):
    d = o["value"].index
    buf = rodata_buffer(fb, o["rodata"])

    def op(i, r):
        r[d] = buf
    return op


def const_value(fb, o, ty: str, zero: bool):
    d = o["result"].index
    value = 0 if zero else o["value"]
    if ty == "i32":
        v = value & M32
    elif ty == "i64":
        v = value & M64
    elif ty == "f32":
        v = f32_bits(value)
    else:
        v = f64_bits(value)
    if ty in ("i32", "f32"):
        def op(i, r):
            i[d] = v
    else:
        lo, hi = v & M32, v >> 32

        def op(i, r):
            i[d] = lo
            i[d + 1] = hi
    return op


def rodata_buffer(fb, n: int) -> VmBuffer:
    """The context's read-only buffer of rodata segment `n` (one per segment and context)."""
    cache = fb.state.rodata_buffers
    buf = cache.get(n)
    if buf is None:
        seg = fb.module.rodata[n]
        data = seg.data
        buf = VmBuffer(data if data.readonly else memoryview(bytes(data)), readonly=True)
        cache[n] = buf
    return buf

def select(fb, o, ty: str):
    c = o["condition"].index
    d = o["result"].index
    t, f = o["true_value"], o["false_value"]
    if ty == "ref":
        ti, tm, fi, fm = t.index, t.move, f.index, f.move
        tname = fb.module.types[o["true_value_type_def"]]

        def op(i, r):
            if i[c]:
                v = r[ti]
                if tm and ti != d:
                    r[ti] = None
                if fm and fi != d:
                    r[fi] = None
            else:
                v = r[fi]
                if fm and fi != d:
                    r[fi] = None
                if tm and ti != d:
                    r[ti] = None
            if not type_matches(v, tname):
                raise VmTrap(f"select.ref: ref of type {ref_type_name(v)} is not {tname}",
                             status="INVALID_ARGUMENT")
            r[d] = v
        return op
    ti, fi = t.index, f.index
    if ty in ("i32", "f32"):
        def op(i, r):
            i[d] = i[ti] if i[c] else i[fi]
    else:
        def op(i, r):
            s = ti if i[c] else fi
            i[d], i[d + 1] = i[s], i[s + 1]
    return op

def switch(fb, o, ty: str):
    x = o["index"].index
    d = o["result"].index
    values = tuple(v.index for v in o["values"])
    n = len(values)
    dv = o["default_value"]
    if ty == "ref":
        moves = tuple(v.move for v in o["values"])
        tname = fb.module.types[o["type_def"]]
        di, dm = dv.index, dv.move

        def op(i, r):
            k = s32(i[x])
            if 0 <= k < n:
                v = r[values[k]]
            else:
                v = r[di]
            if not type_matches(v, tname):
                raise VmTrap(f"switch.ref: ref of type {ref_type_name(v)} is not {tname}",
                             status="INVALID_ARGUMENT")
            if dm and di != d:
                r[di] = None
            for src, mv in zip(values, moves):
                if mv and src != d:
                    r[src] = None
            r[d] = v
        return op
    di = dv.index
    if ty in ("i32", "f32"):
        def op(i, r):
            k = s32(i[x])
            i[d] = i[values[k]] if 0 <= k < n else i[di]
    elif ty == "i64":  # the runtime reads one 32-bit slot and sign-extends it (3.13.0 quirk)
        def op(i, r):
            k = s32(i[x])
            if 0 <= k < n:
                v = i[values[k]]
                i[d], i[d + 1] = v, (M32 if v & SIGN32 else 0)
            else:
                i[d], i[d + 1] = i[di], i[di + 1]
    else:
        def op(i, r):
            k = s32(i[x])
            s = values[k] if 0 <= k < n else di
            i[d], i[d + 1] = i[s], i[s + 1]
    return op

# -- globals ---------------------------------------------------------------------------------

def global_access(fb, o, store: bool, indirect: bool, ty: str):
    """global.{load,store}[.indirect].<ty>: value globals by byte offset, ref globals by
    ordinal; an indirect access takes the offset / ordinal from a register (range-checked)."""
    st = fb.state
    if ty == "ref":
        refs = st.global_refs
        tname = fb.module.types[o["type_def"]]
        v = o["value"]
        vi, vm = v.index, v.move
        count = len(refs)
        if indirect:
            g = o["global"].index

            def ordinal(i):
                k = s32(i[g])
                if not 0 <= k < count:
                    raise VmTrap(f"global ref ordinal {k} out of range ({count} ref globals)",
                                 status="OUT_OF_RANGE")
                return k
        else:
            k0 = o["global"]

            def ordinal(i):
                return k0
        matches = type_matcher(tname)
        if store:
            def op(i, r):
                value = r[vi]
                if not matches(value):
                    raise VmTrap(f"global.store.ref: ref of type {ref_type_name(value)} is "
                                 f"not {tname}", status="INVALID_ARGUMENT")
                refs[ordinal(i)] = value
                if vm:
                    r[vi] = None
        elif not indirect:
            # Every call loads its device and cached command buffers: no ordinal function,
            # and no type check for the class that last passed it (`vm_type` is a class
            # attribute, so the check is the same for every instance).
            passed = [None]

            def op(i, r):
                value = refs[k0]
                if value.__class__ is not passed[0]:
                    if not matches(value):
                        raise VmTrap(f"global.load.ref: ref of type {ref_type_name(value)} "
                                     f"is not {tname}", status="INVALID_ARGUMENT")
                    passed[0] = value.__class__
                r[vi] = value
        else:
            def op(i, r):
                value = refs[ordinal(i)]
                if not matches(value):
                    raise VmTrap(f"global.load.ref: ref of type {ref_type_name(value)} is "
                                 f"not {tname}", status="INVALID_ARGUMENT")
                r[vi] = value
        return op
    data = st.global_bytes
    wide = ty in ("i64", "f64")
    fmt = _U64 if wide else _U32
    size = fmt.size
    cap = len(data)
    reg = o["value"] if store else o["result"]
    n = reg.index
    if indirect:
        g = o["byte_offset"].index

        def where(i):
            off = s32(i[g])
            if off < 0 or off + size > cap:
                raise VmTrap(f"global byte offset {off} out of range ({cap} bytes of globals)",
                             status="OUT_OF_RANGE")
            return off
    else:
        off0 = o["byte_offset"]

        def where(i):
            return off0
    pack, unpack = fmt.pack_into, fmt.unpack_from
    if store:
        if wide:
            def op(i, r):
                pack(data, where(i), i[n] | i[n + 1] << 32)
        else:
            def op(i, r):
                pack(data, where(i), i[n])
    else:
        if wide:
            def op(i, r):
                v = unpack(data, where(i))[0]
                i[n] = v & M32
                i[n + 1] = v >> 32
        else:
            def op(i, r):
                i[n] = unpack(data, where(i))[0]
    return op

# -- lists -----------------------------------------------------------------------------------

def list_alloc(fb, o):
    tname = fb.module.types[o["element_type"]]
    c, d = o["initial_capacity"].index, o["result"].index

    def op(i, r):
        r[d] = VmList.of_type(tname, s32(i[c]))
    return op

def list_reserve(fb, o):
    lst, n = o["list"].index, o["minimum_capacity"].index

    def op(i, r):
        _list(r[lst]).reserve(s32(i[n]))
    return op

def list_resize(fb, o):
    lst, n = o["list"].index, o["new_size"].index

    def op(i, r):
        _list(r[lst]).resize(s32(i[n]))
    return op

def list_size(fb, o):
    lst, d = o["list"].index, o["result"].index

    def op(i, r):
        i[d] = len(_list(r[lst]))
    return op

def list_value(fb, o, get: bool, ty: str):
    lst, x = o["list"].index, o["index"].index
    if ty == "ref":
        if get:
            tname = fb.module.types[o["type_def"]]
            d = o["result"].index

            def op(i, r):
                r[d] = _list(r[lst]).get_ref(s32(i[x]), tname)
        else:
            v = o["value"]
            vi, vm = v.index, v.move

            def op(i, r):
                _list(r[lst]).set_ref(s32(i[x]), r[vi])
                if vm:
                    r[vi] = None
        return op
    n = (o["result"] if get else o["value"]).index
    if ty == "i32":
        def rd(i):
            return s32(i[n])

        def wr(i, v):
            i[n] = v & M32
    elif ty == "i64":
        def rd(i):
            return s64(i[n] | i[n + 1] << 32)

        def wr(i, v):
            v &= M64
            i[n], i[n + 1] = v & M32, v >> 32
    elif ty == "f32":
        def rd(i):
            return f32_value(i[n])

        def wr(i, v):
            i[n] = f32_bits(v)
    else:
        def rd(i):
            return f64_value(i[n] | i[n + 1] << 32)

        def wr(i, v):
            v = f64_bits(v)
            i[n], i[n + 1] = v & M32, v >> 32
    if get:
        def op(i, r):
            wr(i, _list(r[lst]).get_value(s32(i[x]), ty))
    else:
        def op(i, r):
            _list(r[lst]).set_value(s32(i[x]), rd(i), ty)
    return op

# -- buffers ---------------------------------------------------------------------------------

def buffer_elem(fb, o, kind: str, ty: str, signed: bool = False):
    """buffer.<kind>.<ty>: `kind` is "load", "store" or "fill"; i8/i16 loads sign- or
    zero-extend (`signed`)."""
    if ty == "i8":
        fmt = _S_I8 if signed else _S_U8
    elif ty == "i16":
        fmt = _S_I16 if signed else _S_U16
    elif ty in ("i32", "f32"):
        fmt = _U32
    else:
        fmt = _U64
    wide = ty in ("i64", "f64")
    narrow_mask = {"i8": 0xFF, "i16": 0xFFFF}.get(ty)
    if kind == "load":
        b, off, d = o["source_buffer"].index, o["source_offset"].index, o["result"].index
        if wide:
            def op(i, r):
                v = _buffer(r[b], "source buffer").load(fmt, s64(i[off] | i[off + 1] << 32))
                i[d], i[d + 1] = v & M32, v >> 32
        else:
            def op(i, r):
                i[d] = _buffer(r[b], "source buffer").load(
                    fmt, s64(i[off] | i[off + 1] << 32)) & M32
        return op
    b, off = o["target_buffer"].index, o["target_offset"].index
    v = o["value"].index
    if wide:
        def value(i):
            return i[v] | i[v + 1] << 32
    elif narrow_mask is not None:
        fmt = _S_U8 if ty == "i8" else _S_U16

        def value(i):
            return i[v] & narrow_mask
    else:
        def value(i):
            return i[v]
    if kind == "store":
        def op(i, r):
            _buffer(r[b], "target buffer").store(fmt, s64(i[off] | i[off + 1] << 32), value(i))
        return op
    ln = o["length"].index

    def op(i, r):
        _buffer(r[b], "target buffer").fill(fmt, s64(i[off] | i[off + 1] << 32),
                                            s64(i[ln] | i[ln + 1] << 32), value(i))
    return op

def buffer_alloc(fb, o):
    ln, al, d = o["length"].index, o["alignment"].index, o["result"].index

    def op(i, r):
        n = s64(i[ln] | i[ln + 1] << 32)
        if n < 0:
            raise VmTrap(f"negative buffer length {n}", status="INVALID_ARGUMENT")
        r[d] = VmBuffer(n, alignment=s32(i[al]) or 16)
    return op

def buffer_clone(fb, o):
    s, off, ln = o["source"].index, o["offset"].index, o["length"].index
    al, d = o["alignment"].index, o["result"].index

    def op(i, r):
        src = _buffer(r[s], "source buffer")
        start = s64(i[off] | i[off + 1] << 32)
        n = s64(i[ln] | i[ln + 1] << 32)
        src.check_range(start, n)
        r[d] = VmBuffer(bytearray(src.data[start:start + n]), alignment=s32(i[al]) or 16)
    return op

def buffer_length(fb, o):
    b, d = o["buffer"].index, o["result"].index

    def op(i, r):
        n = len(_buffer(r[b]))
        i[d], i[d + 1] = n & M32, n >> 32
    return op

def buffer_copy(fb, o):
    s, so = o["source_buffer"].index, o["source_offset"].index
    t, to, ln = o["target_buffer"].index, o["target_offset"].index, o["length"].index

    def op(i, r):
        src = _buffer(r[s], "source buffer")
        dst = _buffer(r[t], "target buffer")
        a = s64(i[so] | i[so + 1] << 32)
        b = s64(i[to] | i[to + 1] << 32)
        n = s64(i[ln] | i[ln + 1] << 32)
        src.check_range(a, n)
        dst.check_writable()
        dst.check_range(b, n)
        dst.data[b:b + n] = bytes(src.data[a:a + n])
    return op

def buffer_compare(fb, o):
    lb, lo = o["lhs_buffer"].index, o["lhs_offset"].index
    rb, ro, ln = o["rhs_buffer"].index, o["rhs_offset"].index, o["length"].index
    d = o["result"].index

    def op(i, r):
        lhs = _buffer(r[lb], "lhs buffer")
        rhs = _buffer(r[rb], "rhs buffer")
        a = s64(i[lo] | i[lo + 1] << 32)
        b = s64(i[ro] | i[ro + 1] << 32)
        n = s64(i[ln] | i[ln + 1] << 32)
        lhs.check_range(a, n)
        rhs.check_range(b, n)
        i[d] = int(lhs.data[a:a + n] == rhs.data[b:b + n])
    return op

def buffer_hash(fb, o):
    b, off, ln, d = (o["source_buffer"].index, o["source_offset"].index, o["length"].index,
                     o["result"].index)

    def op(i, r):
        buf = _buffer(r[b], "source buffer")
        a = s64(i[off] | i[off + 1] << 32)
        n = s64(i[ln] | i[ln + 1] << 32)
        buf.check_range(a, n)
        h = siphash24_keyed(bytes(range(16)), bytes(buf.data[a:a + n]))
        i[d], i[d + 1] = h & M32, h >> 32
    return op

# -- refs ------------------------------------------------------------------------------------

def cast_any_ref(fb, o):
    s, d = o["operand"], o["result"].index
    si, sm = s.index, s.move
    tname = fb.module.types[o["result_type"]]

    def op(i, r):
        v = r[si]
        if not type_matches(v, tname):
            raise VmTrap(f"cast.any.ref: ref of type {ref_type_name(v)} is not {tname}",
                         status="INVALID_ARGUMENT")
        if sm and si != d:
            r[si] = None
        r[d] = v
    return op

def assign_ref(fb, o):
    s, d = o["source"], o["result"].index
    si, sm = s.index, s.move

    def op(i, r):
        v = r[si]
        if sm and si != d:
            r[si] = None
        r[d] = v
    return op

def discard_refs(fb, o):
    regs = tuple(x.index for x in o["refs"] if x.is_ref)

    def op(i, r):
        for n in regs:
            r[n] = None
    return op

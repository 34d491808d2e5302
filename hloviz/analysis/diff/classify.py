"""From matched pairs to results: what changed about each pair, and each computation's fate."""

from __future__ import annotations

from collections.abc import Mapping

from ...ir import Instruction
from ...opcodes import CALLEE_WORK_CALLERS, VALUE_FORWARDING_CALLERS
from ..kernels import flops
from .index import IGNORED_ATTRIBUTES, Side, attribute_text
from .match import Matcher
from .model import Change, ChangeKind, ComputationDiff, InstructionDiff, Status

_LITERAL_SHOWN = 60


def _short(text: str, limit: int = _LITERAL_SHOWN) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fusion_place(side: Side, n: int) -> str:
    f = side.fusion_of(n)
    return "unfused" if f < 0 else f"in {side.insts[f].name}"


def changes_of(m: Matcher, x: int, y: int) -> tuple[Change, ...]:
    """How instruction ``x`` of the first module differs from its counterpart ``y``."""
    a, b = m.a, m.b
    ia, ib = a.insts[x], b.insts[y]
    out: list[Change] = []
    if ia.opcode != ib.opcode:
        out.append(Change(ChangeKind.OPCODE, ia.opcode, ib.opcode))
    if ia.shape != ib.shape:
        ta, tb = _shape_text(m, ia.shape, False), _shape_text(m, ib.shape, False)
        if ta != tb:
            out.append(Change(ChangeKind.SHAPE, ta, tb))
        else:
            out.append(Change(ChangeKind.LAYOUT, _shape_text(m, ia.shape, True), _shape_text(m, ib.shape, True)))
    if not _same_operands(m, x, y):
        out.append(_operand_change(m, x, y))
    shapes = _operand_shape_change(m, ia, ib)
    if shapes is not None:
        out.append(shapes)
    if ia.opcode == ib.opcode and ia.opcode not in CALLEE_WORK_CALLERS:
        fa, fb = flops(ia), flops(ib)  # a fusion's work is its computation's: a CALLS change says it
        if fa != fb:
            out.append(Change(ChangeKind.WORK, f"{fa:,} flops", f"{fb:,} flops"))
    if ia.literal != ib.literal and (ia.literal is not None or ib.literal is not None):
        out.append(Change(ChangeKind.CONSTANT, _short(ia.literal or ""), _short(ib.literal or "")))
    if not _same_place(m, x, y):
        out.append(Change(ChangeKind.FUSION, _fusion_place(a, x), _fusion_place(b, y)))
    attrs = _attribute_changes(ia.attributes, ib.attributes)
    if attrs:
        out.append(attrs)
    ka, kb = a.calls[x], b.calls[y]
    if len(ka) != len(kb) or any(a.comp_fp[p] != b.comp_fp[q] for p, q in zip(ka, kb)):
        out.append(Change(ChangeKind.CALLS, ", ".join(a.comps[k].name for k in ka),
                          ", ".join(b.comps[k].name for k in kb)))
    if ia.opcode == "parameter" and ia.parameter_number != ib.parameter_number:
        out.append(Change(ChangeKind.ATTRIBUTES, f"parameter({ia.parameter_number})",
                          f"parameter({ib.parameter_number})"))
    return tuple(out)


def _shape_text(m: Matcher, shape, layout: bool) -> str:
    """A shape's text, computed once per shape object (the parser shares equal shapes)."""
    key = (id(shape), layout)
    text = m.shape_texts.get(key)
    if text is None:
        text = m.shape_texts[key] = shape.to_text(layout=layout)
    return text




def same_operand_shapes(ia: Instruction, ib: Instruction) -> bool:
    """Do the two instructions read operands of the same shapes (layouts included: the fast
    test; :func:`_operand_shape_change` then tells dimensions from layout)?"""
    oa, ob = ia.operands, ib.operands
    if len(oa) != len(ob):
        return False
    return all(p.shape is q.shape or p.shape == q.shape for p, q in zip(oa, ob))


def _operand_shape_change(m: Matcher, ia: Instruction, ib: Instruction) -> Change | None:
    """The operand positions whose dimensions or element type differ (layouts aside):
    ``#1 f32[64,10]`` → ``#1 f32[96,10]``; None when they all agree (or the operand counts
    differ: an OPERANDS change says so)."""
    oa, ob = ia.operands, ib.operands
    if len(oa) != len(ob) or same_operand_shapes(ia, ib):
        return None
    before, after = [], []
    for k, (p, q) in enumerate(zip(oa, ob)):
        ta, tb = _shape_text(m, p.shape, False), _shape_text(m, q.shape, False)
        if ta != tb:
            before.append(f"#{k} {ta}")
            after.append(f"#{k} {tb}")
    if not before:
        return None
    return Change(ChangeKind.OPERAND_SHAPES, ", ".join(before), ", ".join(after))


def _same_operands(m: Matcher, x: int, y: int) -> bool:
    ox, oy = m.a.ops[x], m.b.ops[y]
    if len(ox) != len(oy):
        return False
    return all(_same_value(m, p, q) for p, q in zip(ox, oy))


def _same_value(m: Matcher, p: int, q: int) -> bool:
    """Do operands ``p`` and ``q`` carry the same value, seen through fusion boundaries?

    An op that moved into a fusion reads a fused parameter where it read the value itself; a
    user of a fusion reads the fusion where it read the op now fused; a constant may be a copy
    of the same constant. All count as the same.
    """
    if m.ma[p] == q:
        return True
    rp, rq = _through_fusions(m.a, p), _through_fusions(m.b, q)
    if (rp != p or rq != q) and m.ma[rp] == rq:
        return True
    ia, ib = m.a.insts[rp], m.b.insts[rq]  # two copies of one constant are the same value
    return ia.opcode == ib.opcode == "constant" and ia.literal == ib.literal and ia.shape == ib.shape \
        and not ia.is_elided_constant


def _through_fusions(side: Side, n: int) -> int:
    """The instruction whose value ``n`` passes on, across fusion and call boundaries.

    A fused (or called) computation's parameter passes on its caller's operand; a fusion or
    call passes on its computation's root; ``get-tuple-element`` index 0 passes on its tuple
    (a oneDNN matmul returns ``(result, scratch)`` where a ``dot`` returns the result).
    """
    for _ in range(16):  # nested fusions; a bound keeps bad input from looping
        inst = side.insts[n]
        op = inst.opcode
        if op == "parameter":
            caller = side.single_caller(side.comp_of[n])
            k = inst.parameter_number
            if caller < 0 or side.insts[caller].opcode not in VALUE_FORWARDING_CALLERS or k is None or k >= len(side.ops[caller]):
                return n
            n = side.ops[caller][k]
        elif op in VALUE_FORWARDING_CALLERS and len(side.calls[n]) == 1 and side.root[side.calls[n][0]] >= 0:
            n = side.root[side.calls[n][0]]
        elif op == "get-tuple-element" and side.ops[n] and inst.attributes.get("index") == "0":
            n = side.ops[n][0]
        else:
            return n
    return n



def _operand_change(m: Matcher, x: int, y: int) -> Change:
    """Only the operand positions that differ: ``#1 add.3`` → ``#1 negate.7``."""
    ox, oy = m.a.ops[x], m.b.ops[y]
    before, after = [], []
    for k in range(max(len(ox), len(oy))):
        p = ox[k] if k < len(ox) else -1
        q = oy[k] if k < len(oy) else -1
        if p < 0 or q < 0 or not _same_value(m, p, q):
            before.append(f"#{k} {m.a.insts[p].name}" if p >= 0 else f"#{k} none")
            after.append(f"#{k} {m.b.insts[q].name}" if q >= 0 else f"#{k} none")
    return Change(ChangeKind.OPERANDS, ", ".join(before), ", ".join(after))


def _same_place(m: Matcher, x: int, y: int) -> bool:
    fa, fb = m.a.fusion_of_comp[m.a.comp_of[x]], m.b.fusion_of_comp[m.b.comp_of[y]]
    if fa < 0 or fb < 0:
        return fa < 0 and fb < 0
    return m.ma[fa] == fb


def _attribute_changes(xa: Mapping[str, str], xb: Mapping[str, str]) -> Change | None:
    keys = [k for k in dict.fromkeys([*xa, *xb]) if k not in IGNORED_ATTRIBUTES]
    differ = [k for k in keys if attribute_text(xa.get(k, "")) != attribute_text(xb.get(k, ""))]
    if not differ:
        return None
    if len(differ) > 2:  # many (an opcode change, a new backend): name them, values would drown the line
        before = ", ".join(k for k in differ if k in xa) or "none"
        after = ", ".join(k for k in differ if k in xb) or "none"
        return Change(ChangeKind.ATTRIBUTES, before, after)
    before = ", ".join(f"{k}={_short(xa[k], 40)}" if k in xa else f"no {k}" for k in differ)
    after = ", ".join(f"{k}={_short(xb[k], 40)}" if k in xb else f"no {k}" for k in differ)
    return Change(ChangeKind.ATTRIBUTES, before, after)


def instruction_diffs(m: Matcher) -> list[InstructionDiff]:
    """Matched and added instructions in the second module's order, then removed ones."""
    a, b, ma, mb = m.a, m.b, m.ma, m.mb
    out: list[InstructionDiff] = []
    append = out.append
    unchanged, changed, added = Status.UNCHANGED, Status.CHANGED, Status.ADDED
    la, lb, opsa, opsb, calls_a, calls_b = a.local, b.local, a.ops, b.ops, a.calls, b.calls
    cfa, cfb = a.comp_fp, b.comp_fp
    fusion_a = [a.fusion_of_comp[c] for c in a.comp_of]
    fusion_b = [b.fusion_of_comp[c] for c in b.comp_of]
    insts_a, how, get = a.insts, m.how, ma.__getitem__
    for y, inst in enumerate(b.insts):
        x = mb[y]
        if x < 0:
            append(InstructionDiff(added, None, inst))
            continue
        # The common case, decided without looking closer: same content, operands, calls and place.
        fa, fb = fusion_a[x], fusion_b[y]
        # (operand shapes too: a dot whose output kept its shape may contract over more now)
        if la[x] == lb[y] and (fa == fb == -1 or (fa >= 0 and ma[fa] == fb)) \
                and tuple(map(get, opsa[x])) == opsb[y] and same_operand_shapes(insts_a[x], inst) \
                and (not calls_a[x] or [cfa[c] for c in calls_a[x]] == [cfb[c] for c in calls_b[y]]):
            append(InstructionDiff(unchanged, insts_a[x], inst, (), how[x]))
            continue
        ch = changes_of(m, x, y)
        append(InstructionDiff(changed if ch else unchanged, insts_a[x], inst, ch, how[x]))
    for x, inst in enumerate(insts_a):
        if ma[x] < 0:
            append(InstructionDiff(Status.REMOVED, inst, None))
    return out


def computation_diffs(m: Matcher, diffs: list[InstructionDiff]) -> list[ComputationDiff]:
    """Each computation's fate, with counts of what happened to its instructions."""
    a, b = m.a, m.b
    counts_b = [[0, 0, 0, 0] for _ in b.comps]  # unchanged, changed, added, removed
    counts_a_removed = [0] * len(a.comps)
    slot = {Status.UNCHANGED: 0, Status.CHANGED: 1, Status.ADDED: 2}
    for d in diffs:
        inst = d.before if d.status is Status.REMOVED else d.after  # the side it exists on
        assert inst is not None and inst.parent is not None
        if d.status is Status.REMOVED:
            counts_a_removed[a.comp_index[inst.parent]] += 1
        else:
            counts_b[b.comp_index[inst.parent]][slot[d.status]] += 1
    out: list[ComputationDiff] = []
    for cy, comp in enumerate(b.comps):
        cx = m.cb[cy]
        u, c, ad, _ = counts_b[cy]
        if cx < 0:
            out.append(ComputationDiff(Status.ADDED, None, comp, "", u, c, ad, 0))
            continue
        rm = counts_a_removed[cx]
        same = a.comp_fp[cx] == b.comp_fp[cy] and c == 0 and ad == 0 and rm == 0
        status = Status.UNCHANGED if same else Status.CHANGED
        out.append(ComputationDiff(status, a.comps[cx], comp, m.comp_how.get(cx, ""), u, c, ad, rm))
    for cx, comp in enumerate(a.comps):
        if m.ca[cx] < 0:
            out.append(ComputationDiff(Status.REMOVED, comp, None, "", 0, 0, 0, counts_a_removed[cx]))
    return out

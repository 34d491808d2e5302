"""A pass history as text (the terminal) and as JSON (``hloviz passes --json``).

In: a :class:`~hloviz.analysis.passes.history.PassHistory` (and a ``--focus`` journey). Out: the
lines ``hloviz passes`` prints, and the JSON document of ``--json`` and of the report's explorer.
"""

from __future__ import annotations

from collections import Counter

from .focus import JourneyStop
from .steps import FoldCredit, FusionCredit, HistoryStep, PassHistory, PassStep, StepChanges

__all__ = ["fold_credit_json", "fusion_credit_json", "history_json", "history_text", "journey_text", "step_ref"]


def step_ref(step: PassStep | None) -> dict | None:
    """A snapshot as a credit names it: index, pipeline, pass (and the step inside a pass)."""
    if step is None:
        return None
    return {"index": step.index, "pipeline": step.pipeline, "pass": step.pass_name, "during": step.during}


_ref = step_ref


def fusion_credit_json(f: FusionCredit) -> dict:
    """One fusion's credit as ``passes --json`` and the report's explorer both give it (one
    function, so the two never disagree): ``created_by`` (None when the snapshots cannot tell,
    ``note`` then says why) and ``clone_of``."""
    return {"name": f.name, "kind": f.kind, "created_by": _ref(f.step), "made_as": f.made_as, "note": f.note or None,
            "clone_of": ({"name": f.clone_of, "created_by": _ref(f.clone_of_step)} if f.clone_of else None)}


def fold_credit_json(f: FoldCredit) -> dict:
    """One folded constant's credit (``pass``: the snapshot its value first appears in), as
    :func:`fusion_credit_json` for fusions."""
    return {"constant": f.constant, "value": f.value, "from_ops": list(f.from_ops), "by": f.by,
            "pass": _ref(f.step), "note": f.note or None}


def _step_json(s: HistoryStep) -> dict:
    return {**s.step.to_dict(), "instructions": s.instructions, "fusions": s.fusions,
            "changed": s.changed, "changes": s.changes.to_dict() if s.changes is not None else None,
            "problem": s.problem}


def history_json(h: PassHistory, journey: tuple[JourneyStop, ...] | None = None) -> dict:
    """``passes`` (the snapshots that changed the module, or could not be read), ``snapshots``
    (every one), ``fusions`` with ``created_by``, ``folded``, ``eliminated``, ``problems``."""
    data: dict = {
        "module": h.module,
        "complete": h.complete,
        "problems": list(h.problems),
        "instructions_before": h.pre_instructions,
        "instructions_after": h.post_instructions,
        "passes": [_step_json(s) for s in h.steps if s.changed or s.problem],
        "snapshots": [{**s.step.to_dict(), "instructions": s.instructions, "fusions": s.fusions,
                       "changed": s.changed} for s in h.steps],
        "after_last_snapshot": h.after_last.to_dict() if h.after_last is not None else None,
        "fusions": [fusion_credit_json(f) for f in h.fusions],
        "folded": [fold_credit_json(f) for f in h.folded],
        "eliminated": [{"op_name": e.op_name, "pass": _ref(e.step), "folded_into": e.folded_into,
                        "note": e.note or None} for e in h.eliminated],
        "no_op_name": [{"op_name": u.op_name, "pass": _ref(u.step), "instructions": list(u.instructions),
                        "note": u.note or None} for u in h.unnamed],
    }
    if journey is not None:
        data["journey"] = [{"step": _ref(j.step), "final": j.final, "fusions": list(j.fusions),
                            "instructions": [p.to_dict() for p in j.places]} for j in journey]
    return data


def _names(names: tuple[str, ...], limit: int = 3) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", … ({len(names)})" if len(names) > limit else "")


def describe_changes(c: StepChanges) -> str:
    """One line: what a pass did, biggest news first."""
    parts = []
    if c.fusions_created:
        parts.append(f"+{len(c.fusions_created)} fusion(s) ({_names(c.fusions_created)})")
    if c.fusions_removed:
        parts.append(f"-{len(c.fusions_removed)} fusion(s)")
    if c.fusions_renamed:
        shown = tuple(f"{old} → {new}" for old, new in c.fusions_renamed)
        parts.append(f"{len(c.fusions_renamed)} fusion(s) renamed ({_names(shown, 2)})")
    if c.constants_new:
        parts.append(f"{len(c.constants_new)} new constant value(s) ({_names(c.constants_new, 2)})")
    if c.ops_eliminated:
        parts.append(f"{len(c.ops_eliminated)} op(s) gone ({_names(c.ops_eliminated)})")
    counts = []
    if c.added:
        counts.append(f"+{len(c.added)}")
    if c.removed:
        counts.append(f"-{len(c.removed)}")
    if c.changed:
        counts.append(f"~{len(c.changed)}")
    if counts:
        parts.append(" ".join(counts) + " instructions")
    return "; ".join(parts) or "no change"


def history_text(h: PassHistory, *, all_steps: bool = False, limit: int = 20) -> str:
    """The snapshots that changed the module (all with ``all_steps``), then the credits."""
    lines = [f"XLA's passes on {h.module}: {len(h.steps)} snapshots, {len(h.changed_steps)} changed the module"]
    if h.pre_instructions is not None and h.post_instructions is not None:
        lines[0] += f" ({h.pre_instructions} → {h.post_instructions} instructions)"
    width = max((len(s.step.label) for s in h.steps), default=10)
    lines.append(f"  {'#':>4}  {'pass':<{width}}  {'instr':>6}  {'fus':>4}  what changed")
    for s in h.steps:
        if not (all_steps or s.changed or s.problem):
            continue
        what = (f"UNREADABLE: {s.problem}" if s.problem else
                describe_changes(s.changes) if s.changes is not None else "(first snapshot)")
        count = "?" if s.instructions is None else str(s.instructions)
        fus = "?" if s.fusions is None else str(s.fusions)
        lines.append(f"  {s.step.index:>4}  {s.step.label:<{width}}  {count:>6}  {fus:>4}  {what}")
    if h.after_last is not None and h.after_last.any:
        lines.append(f"  after the last snapshot (not dumped per pass): {describe_changes(h.after_last)}")
    lines += _credits_text(h, limit)
    if h.problems:
        lines.append(f"Incomplete history ({len(h.problems)} problem(s)); nothing is credited across a gap:")
        lines += [f"  {p}" for p in h.problems]
    return "\n".join(lines) + "\n"


def _credits_text(h: PassHistory, limit: int) -> list[str]:
    lines = [f"Fusions of the optimized module ({len(h.fusions)}), by the pass that made them:"]
    by_pass = Counter((f.step.index, f.step.label) if f.step else (-1, f.note) for f in h.fusions)
    for (index, label), n in sorted(by_pass.items())[:limit]:
        names = [f.name if not f.made_as else f"{f.name}, made as {f.made_as}"
                 for f in h.fusions if (f.step and f.step.index == index) or (not f.step and f.note == label)]
        where = f"snapshot {index}, {label}" if index >= 0 else f"no credit: {label}"
        lines.append(f"  {n:>4}  {where}  ({_names(tuple(names))})")
    lines += _more(len(by_pass), limit)
    for f in h.fusions:
        if f.clone_of:
            made = f"snapshot {f.clone_of_step.index}, {f.clone_of_step.label}" if f.clone_of_step else "unknown"
            lines.append(f"        {f.name} is a clone of {f.clone_of}, made in {made}")
    if h.folded:
        lines.append(f"Folded constants ({len(h.folded)}):")
        for f in h.folded[:limit]:
            lines.append(f"  {f.constant} = {f.value}  {_fold_origin(f)}  {_fold_writer(f)}")
        lines += _more(len(h.folded), limit)
    if h.eliminated:
        lines.append(f"Ops eliminated ({len(h.eliminated)}), by the pass their last instruction vanished in:")
        groups = Counter((e.step.index, e.step.label) if e.step else (-1, e.note) for e in h.eliminated)
        for (index, label), n in sorted(groups.items())[:limit]:
            names = tuple(e.op_name for e in h.eliminated
                          if (e.step and e.step.index == index) or (not e.step and e.note == label))
            where = f"snapshot {index}, {label}" if index >= 0 else f"no credit: {label}"
            lines.append(f"  {n:>4}  {where}  ({_names(names)})")
        lines += _more(len(groups), limit)
    if h.unnamed:
        lines.append(f"Ops whose work runs without their name ({len(h.unnamed)}): XLA dropped the op_name, "
                     "the instructions stayed (not eliminated):")
        for u in h.unnamed[:limit]:
            where = f"name gone at snapshot {u.step.index}, {u.step.label}" if u.step else u.note
            lines.append(f"  {u.op_name}  runs in {_names(u.instructions)}  ({where})")
        lines += _more(len(h.unnamed), limit)
    return lines


def _fold_origin(f) -> str:
    """Where a folded constant's value came from, in words (never an empty list)."""
    if f.from_ops:
        return f"from {_names(f.from_ops)}"
    return f"({f.note})" if f.note and f.by != "xla" else "from work without an op name"


def _fold_writer(f) -> str:
    """Who wrote a folded constant: the snapshot, or why no snapshot is credited."""
    if f.step is not None:
        return f"written by snapshot {f.step.index}, {f.step.label}"
    if f.by == "tensorflow":
        return "folded by TensorFlow before XLA saw the function (no XLA pass wrote it)"
    return f"no pass credited: {f.note}"


def _more(rows: int, limit: int) -> list[str]:
    return [f"  … {rows - limit} more row(s) (--limit; --json lists all)"] if rows > limit else []


def journey_text(h: PassHistory, focus: str, journey: tuple[JourneyStop, ...]) -> str:
    """Where the focused op was at each snapshot where that changed."""
    lines = [f"{focus} through XLA's passes on {h.module}:"]
    seen = False  # "gone" only after it was there: a fusion XLA makes later is "not made yet" before
    for j in journey:
        where = ("optimized module" if j.final else "before optimization" if j.step is None
                 else f"snapshot {j.step.index}, {j.step.label}")
        if not j.places:
            lines.append(f"  {where}: {'gone' if seen else 'not there yet (a later pass makes it)'}")
            continue
        seen = True
        fus = f" in fusion {_names(j.fusions)}" if j.fusions else ""
        insts = _names(tuple(f"{p.instruction} ({p.opcode})" for p in j.places), 4)
        lines.append(f"  {where}: {len(j.places)} instruction(s){fus}: {insts}")
    folded = [f for f in h.folded if any(_hit(focus, op) for op in f.from_ops)]
    for f in folded[:5]:
        by = f"snapshot {f.step.index}, {f.step.label}" if f.step else f"no credit: {f.note}"
        lines.append(f"  folded into {f.constant} = {f.value}, written by {by}")
    gone = [e for e in h.eliminated if _hit(focus, e.op_name)]
    for e in gone[:5]:
        by = f"snapshot {e.step.index}, {e.step.label}" if e.step else f"no credit: {e.note}"
        lines.append(f"  {e.op_name} eliminated in {by}")
    for u in [u for u in h.unnamed if _hit(focus, u.op_name)][:5]:
        by = f"snapshot {u.step.index}, {u.step.label}" if u.step else u.note
        lines.append(f"  {u.op_name}: its name vanished in {by}; its work runs in {_names(u.instructions)}")
    return "\n".join(lines) + "\n"


def _hit(name: str, op: str) -> bool:
    return op == name or op.startswith(name + "/") or f"/{name}/" in f"/{op}/"

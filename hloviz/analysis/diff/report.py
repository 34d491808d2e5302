"""A :class:`ModuleDiff` as a terminal report, a markdown PR comment, or JSON for scripts.

All three lead with the same summary (kernels, fusions, instructions, opcodes, moves into and
out of fusions, folded constants) and then give details. Long lists are cut at ``limit``
entries with a line saying how many were left out (``limit=0`` shows all). Every number is read
from the diff; nothing is estimated.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ...ir import Instruction, called_closure
from ...opcodes import is_bookkeeping
from ..backends import kind_text
from .model import InstructionDiff, KernelDiff, ModuleDiff, Status

_MARK = {Status.UNCHANGED: "=", Status.CHANGED: "~", Status.ADDED: "+", Status.REMOVED: "-"}


def _signed(n: int) -> str:
    return f"+{n}" if n > 0 else ("±0" if n == 0 else f"−{-n}")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def describe(inst: Instruction) -> str:
    """A kernel or instruction in a few words: ``kLoop fusion: 3 add, multiply`` / ``kCustom fusion ·
    YNNPACK: reduce`` / ``dot f32[8,8]``; kinds written as ``hloviz stats`` writes them
    (:func:`hloviz.analysis.backends.kind_text`)."""
    if inst.opcode == "fusion":
        comps = called_closure(inst.called_computations, follow=lambda i: i.opcode in ("fusion", "call"))
        counts = Counter(sub.opcode for comp in comps for sub in comp.instructions
                         if sub.opcode not in ("fusion", "call") and not is_bookkeeping(sub.opcode))
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        parts = [f"{n} {op}" if n > 1 else op for op, n in top[:3]]
        if len(top) > 3:
            parts.append(f"+{len(top) - 3} more")
        kind = kind_text(inst.fusion_kind or "fusion", inst.backend_kind, fusion=True)  # as stats writes it
        return f"{kind}: {', '.join(parts)}" if parts else kind
    if inst.opcode == "custom-call":
        if inst.backend_kind:  # one of XLA's libraries: named as stats names it
            return kind_text(inst.opcode, inst.backend_kind, fusion=False)
        target = inst.attributes.get("custom_call_target", "").strip('"')
        return f"custom-call {target}".strip()
    return f"{inst.opcode} {inst.shape.to_text(layout=False)}"


def _pair_names(before: Instruction | None, after: Instruction | None) -> str:
    if before is not None and after is not None:
        return before.name if before.name == after.name else f"{before.name} → {after.name}"
    return (after or before).name  # type: ignore[union-attr]


def _changes_text(changes) -> str:
    return "; ".join(str(c) for c in changes)


def _cut(items: list, limit: int) -> tuple[list, int]:
    if limit and len(items) > limit:
        return items[:limit], len(items) - limit
    return items, 0


def _non_trivial(diffs: Iterable[InstructionDiff], status: Status) -> list[InstructionDiff]:
    """Instructions of one status, parameters of fused computations left out (they follow fusions)."""
    return [d for d in diffs if d.status is status and not (d.opcode == "parameter" and
                                                            d.instruction.parent is not None and
                                                            not d.instruction.parent.is_entry)]


def _count_note(diff: ModuleDiff, status: Status, listed: int) -> str:
    total = {Status.CHANGED: diff.summary.changed, Status.ADDED: diff.summary.added,
             Status.REMOVED: diff.summary.removed}[status]
    left = total - listed
    return f"{listed}; {left} parameters of fused computations not listed" if left else str(listed)


# -- facts shared by every format ------------------------------------------------------------


def summary_lines(diff: ModuleDiff) -> list[tuple[str, str]]:
    """``(label, text)`` rows of the summary, in the order every format prints them."""
    s = diff.summary
    k = s.kernels
    kd = Counter(x.status for x in s.kernel_diffs)
    fa, fb = s.fusions_before, s.fusions_after
    rows = [
        (_kernel_word(diff), (f"{k.before} → {k.after} ({_signed(k.delta)}): {kd[Status.ADDED]} added, "
                              f"{kd[Status.REMOVED]} removed, {kd[Status.CHANGED]} changed, "
                              f"{kd[Status.UNCHANGED]} unchanged")),
        ("fusions", (f"{fa} → {fb} ({_signed(fb - fa)}): {len(s.fusions_added)} added, {len(s.fusions_removed)} "
                     f"removed, {len(s.fusions_changed)} changed, {s.fusions_unchanged} unchanged")),
        ("instructions", f"{s.unchanged} unchanged, {s.changed} changed, {s.added} added, {s.removed} removed"),
    ]
    if s.opcode_deltas:
        shown = [f"{d.opcode} {d.before} → {d.after} ({_signed(d.delta)})" for d in s.opcode_deltas[:8]]
        if len(s.opcode_deltas) > 8:
            shown.append(f"+{len(s.opcode_deltas) - 8} more")
        rows.append(("opcodes", ", ".join(shown)))
    else:
        rows.append(("opcodes", "same counts"))
    rows.append(("fusion moves", (f"{_plural(len(s.moved_into_fusions), 'instruction')} moved into fusions, "
                                  f"{len(s.moved_out_of_fusions)} out of fusions, "
                                  f"{len(s.moved_between_fusions)} between fusions")))
    rows.append(("constants", (f"{len(s.constants_appeared)} appeared, {len(s.constants_vanished)} vanished, "
                               f"{len(s.constants_changed)} changed value")))
    return rows


def _kernel_word(diff: ModuleDiff, capital: bool = False) -> str:
    word = "kernels" if diff.summary.optimized else "instructions doing work"
    return word.capitalize() if capital else word


def _kernel_row(k: KernelDiff) -> tuple[str, str, str]:
    """(mark, names, what) for one kernel."""
    inst = k.instruction
    what = describe(inst)
    if k.changes:
        what += " — " + _changes_text(k.changes)
    if k.note:
        what += f" — {k.note}"
    return _MARK[k.status], _pair_names(k.before, k.after), what


def _verdict(diff: ModuleDiff) -> str:
    s = diff.summary
    if s.identical:
        return "identical: every instruction matched, nothing changed"
    k = s.kernels
    if k.delta:
        return f"{'more' if k.delta > 0 else 'fewer'} {_kernel_word(diff)}: {k.before} → {k.after}"
    return f"same number of {_kernel_word(diff)} ({k.after}); {s.changed + s.added + s.removed} instructions differ"


# -- text ------------------------------------------------------------------------------------


def to_text(diff: ModuleDiff, before: str, after: str, *, limit: int = 40, details: bool = True) -> str:
    """The terminal report: summary first, then (``details``) kernels and instruction details."""
    out = [f"hloviz diff: {before} → {after}"]
    out += [f"warning: {w}" for w in diff.warnings]
    if not diff.summary.optimized:
        out.append("note: neither module is optimized (nothing is fused yet), so every instruction doing work is counted")
    out.append(_verdict(diff))
    out.append("")
    width = max(len(label) for label, _ in summary_lines(diff))
    out += [f"  {label:<{width}}  {text}" for label, text in summary_lines(diff)]
    if not details:
        return "\n".join(out) + "\n"
    kernels = [k for k in diff.summary.kernel_diffs if k.status is not Status.UNCHANGED]
    if kernels:
        out.append("")
        out.append(f"{_kernel_word(diff, True)} that differ ({len(kernels)}; = unchanged, ~ changed, + added, "
                   f"- removed)")
        shown, more = _cut(kernels, limit)
        for mark, names, what in map(_kernel_row, shown):
            out.append(f"  {mark} {names}  {what}")
        if more:
            out.append(f"  … {more} more (--limit 0 shows all)")
    for title, status in (("Changed", Status.CHANGED), ("Added", Status.ADDED), ("Removed", Status.REMOVED)):
        items = _non_trivial(diff.instructions, status)
        if not items:
            continue
        out.append("")
        out.append(f"{title} instructions ({_count_note(diff, status, len(items))})")
        shown, more = _cut(items, limit)
        for d in shown:
            where = d.instruction.parent.name if d.instruction.parent is not None else "?"
            line = f"  {_MARK[status]} {_pair_names(d.before, d.after)}  {d.opcode} in {where}"
            if d.changes:
                line += "  " + _changes_text(d.changes)
            out.append(line)
        if more:
            out.append(f"  … {more} more (--limit 0 shows all)")
    return "\n".join(out) + "\n"


# -- markdown --------------------------------------------------------------------------------


_MD_ACTIVE = re.compile(r"([\\`*_\[\]~])")


def md_text(text: str) -> str:
    """hloviz's own words in markdown, table cells included, escaped as a second line of
    defence (text from the HLO goes through :func:`md_code`, never through this)."""
    text = text.replace("\n", " ").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_ACTIVE.sub(r"\\\1", text).replace("|", "\\|")


def markdown_code(text: str, *, in_table: bool = True) -> str:
    """Text from the HLO (a name, an opcode, a custom-call target, an attribute's value, a
    label) as an inline code span: shown exactly and inert, since GitHub renders nothing in
    code — no ``@org/team`` mention, ``#12`` reference, URL link, ``$…$`` math, ``:emoji:``,
    HTML or emphasis. The fence is longer than any run of backticks in the text; a newline
    becomes a space and, in a table cell, a pipe is escaped so the row stays whole."""
    text = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\0", "\ufffd")
    if not text.strip():
        return f"`{text}`" if text else ""
    if in_table:
        text = text.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


md_code = markdown_code


def _changes_md(changes) -> str:
    """``kind: `before` → `after``` per change: the kind is hloviz's word, both sides HLO text."""
    return "; ".join(f"{c.kind}: {md_code(c.before)} → {md_code(c.after)}" for c in changes)


def _kernel_what_md(k: KernelDiff) -> str:
    """The markdown "what" cell of a kernel: :func:`_kernel_row`'s text with the HLO parts as code."""
    what = md_code(describe(k.instruction))
    if k.changes:
        what += " — " + _changes_md(k.changes)
    if k.note:
        what += " — " + md_code(k.note)
    return what


def _opcodes_md(diff: ModuleDiff) -> str:
    """The summary's opcode row with each opcode as code (a newer XLA's opcode is kept as written)."""
    deltas = diff.summary.opcode_deltas
    if not deltas:
        return "same counts"
    shown = [f"{md_code(d.opcode)} {d.before} → {d.after} ({_signed(d.delta)})" for d in deltas[:8]]
    if len(deltas) > 8:
        shown.append(f"+{len(deltas) - 8} more")
    return ", ".join(shown)


def to_markdown(diff: ModuleDiff, before: str, after: str, *, limit: int = 40, details: bool = True) -> str:
    """A PR comment: a headline, a summary table, and (``details``) collapsible details. Every
    piece of text from the HLO is a code span (:func:`md_code`); only hloviz's own words and
    numbers are prose."""
    s = diff.summary
    k = s.kernels
    out = [f"### hloviz diff: {md_code(before, in_table=False)} → {md_code(after, in_table=False)}", ""]
    out += [f"> **Warning:** {md_code(w, in_table=False)}" for w in diff.warnings]  # it quotes the signatures
    if diff.warnings:
        out.append("")
    out.append(f"**{_verdict(diff)}**")
    out.append("")
    out.append("| | before | after | Δ |")
    out.append("|---|---:|---:|---:|")
    out.append(f"| {_kernel_word(diff)} | {k.before} | {k.after} | {_signed(k.delta)} |")
    fa, fb = s.fusions_before, s.fusions_after
    out.append(f"| fusions | {fa} | {fb} | {_signed(fb - fa)} |")
    ia, ib = s.unchanged + s.changed + s.removed, s.unchanged + s.changed + s.added
    out.append(f"| instructions | {ia} | {ib} | {_signed(ib - ia)} |")
    out.append("")
    for label, text in summary_lines(diff)[1:]:
        out.append(f"- **{label}:** {_opcodes_md(diff) if label == 'opcodes' else md_text(text)}")
    if not details:
        return "\n".join(out) + "\n"
    kernels = [kd for kd in s.kernel_diffs if kd.status is not Status.UNCHANGED]
    if kernels:
        out.append("")
        out.append(f"<details><summary>{_kernel_word(diff, True)} that differ ({len(kernels)})</summary>")
        out.append("")
        out.append("| | kernel | what |")
        out.append("|---|---|---|")
        shown, more = _cut(kernels, limit)
        for kd in shown:
            out.append(f"| {md_text(_MARK[kd.status])} | {md_code(_pair_names(kd.before, kd.after))} | {_kernel_what_md(kd)} |")
        if more:
            out.append(f"| | … {more} more | |")
        out.append("")
        out.append("</details>")
    for title, status in (("Changed", Status.CHANGED), ("Added", Status.ADDED), ("Removed", Status.REMOVED)):
        items = _non_trivial(diff.instructions, status)
        if not items:
            continue
        out.append("")
        out.append(f"<details><summary>{title} instructions ({_count_note(diff, status, len(items))})</summary>")
        out.append("")
        out.append("| instruction | opcode | computation | changes |")
        out.append("|---|---|---|---|")
        shown, more = _cut(items, limit)
        for d in shown:
            where = d.instruction.parent.name if d.instruction.parent is not None else "?"
            out.append(f"| {md_code(_pair_names(d.before, d.after))} | {md_code(d.opcode)} | {md_code(where)} | "
                       f"{_changes_md(d.changes)} |")
        if more:
            out.append(f"| … {more} more | | | |")
        out.append("")
        out.append("</details>")
    out.append("")
    out.append("<sub>= unchanged · ~ changed · + added · - removed; matched structurally, names ignored "
               "(hloviz diff)</sub>")
    return "\n".join(out) + "\n"


# -- JSON ------------------------------------------------------------------------------------


def _inst_json(inst: Instruction | None) -> dict[str, Any] | None:
    if inst is None:
        return None
    return {"name": inst.name, "computation": inst.parent.name if inst.parent is not None else None,
            "opcode": inst.opcode, "shape": str(inst.shape), "op_name": inst.metadata.op_name or None}


def _diff_json(d: InstructionDiff) -> dict[str, Any]:
    return {"status": d.status.value, "before": _inst_json(d.before), "after": _inst_json(d.after),
            "changes": [{"kind": c.kind.value, "before": c.before, "after": c.after} for c in d.changes],
            "matched_by": d.how or None}


def _names(diffs: Iterable[InstructionDiff]) -> list[dict[str, Any]]:
    return [{"before": d.before.name if d.before is not None else None,
             "after": d.after.name if d.after is not None else None} for d in diffs]


def _fusion_names(diffs: Iterable[InstructionDiff], added: bool) -> list[dict[str, Any]]:
    """Added (removed) fusions; one the matcher paired with a non-fusion names it as what it
    replaces (what replaced it)."""
    out = []
    for d in diffs:
        fusion, other = (d.after, d.before) if added else (d.before, d.after)
        assert fusion is not None, "an added (removed) fusion has an after (before) side"
        entry: dict[str, Any] = {"before": None, "after": fusion.name} if added else \
            {"before": fusion.name, "after": None}
        if other is not None:
            entry["replaces" if added else "replaced_by"] = {"name": other.name, "opcode": other.opcode}
        out.append(entry)
    return out


def to_json(diff: ModuleDiff, before: str, after: str, *, limit: int = 0) -> dict[str, Any]:
    """A JSON-ready dict: ``summary`` counts, ``kernels`` before/after, and every difference.

    Unchanged instructions are counted, not listed. ``limit`` (0: no limit) caps the
    ``instructions`` list; ``instructions_left_out`` says how many were cut.
    """
    s = diff.summary
    changed = [d for d in diff.instructions if d.status is not Status.UNCHANGED]
    shown, more = _cut(changed, limit)
    return {
        "before": {"label": before, "module": diff.before_name},
        "after": {"label": after, "module": diff.after_name},
        "comparable": diff.comparable,
        "warnings": list(diff.warnings),
        "identical": s.identical,
        "summary": {"unchanged": s.unchanged, "changed": s.changed, "added": s.added, "removed": s.removed,
                    "total": s.total},
        "optimized": s.optimized,
        "kernels": {
            "before": s.kernels.before, "after": s.kernels.after, "delta": s.kernels.delta,
            "differ": [{"status": k.status.value, "before": k.before.name if k.before else None,
                        "after": k.after.name if k.after else None, "what": describe(k.instruction),
                        "changes": [{"kind": c.kind.value, "before": c.before, "after": c.after} for c in k.changes],
                        "note": k.note or None}
                       for k in s.kernel_diffs if k.status is not Status.UNCHANGED],
        },
        "fusions": {"before": s.fusions_before, "after": s.fusions_after,
                    "added": _fusion_names(s.fusions_added, True),
                    "removed": _fusion_names(s.fusions_removed, False), "changed": _names(s.fusions_changed), "unchanged": s.fusions_unchanged},
        "opcodes": [{"opcode": d.opcode, "before": d.before, "after": d.after, "delta": d.delta}
                    for d in s.opcode_deltas],
        "moved": {"into_fusions": _names(s.moved_into_fusions), "out_of_fusions": _names(s.moved_out_of_fusions),
                  "between_fusions": _names(s.moved_between_fusions)},
        "constants": {"appeared": _names(s.constants_appeared), "vanished": _names(s.constants_vanished),
                      "changed": _names(s.constants_changed)},
        "computations": [{"status": c.status.value, "before": c.before.name if c.before else None,
                          "after": c.after.name if c.after else None, "matched_by": c.how or None,
                          "unchanged": c.unchanged, "changed": c.changed, "added": c.added, "removed": c.removed}
                         for c in diff.computations if c.status is not Status.UNCHANGED],
        "instructions": [_diff_json(d) for d in shown],
        "instructions_left_out": more,
    }

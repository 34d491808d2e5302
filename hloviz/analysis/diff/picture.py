"""The data of the diff picture: what each drawn instruction is, on each side.

The picture (drawn by :mod:`hloviz.render`, the code ``show`` uses) has two columns, before and
after. Matched kernels carry the same number on both sides (and, unchanged, the same colour);
changed kernels and instructions are amber, added green, removed red. This module decides
only the facts — status, pair number, a short note — keyed by instruction name; colours
belong to the render layer.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import ChangeKind, ModuleDiff, Status


@dataclass(frozen=True, slots=True)
class PictureMark:
    """How one instruction is drawn in the diff picture.

    ``number`` is the matched kernel pair's number (1-based, the second module's execution
    order), 0 for anything that is not a matched kernel. ``kernel`` says whether the
    instruction runs as a kernel on its side.
    """

    status: Status
    number: int = 0
    kernel: bool = False
    note: str = ""


def picture_marks(diff: ModuleDiff) -> tuple[dict[str, PictureMark], dict[str, PictureMark]]:
    """Marks for the first module's and the second module's instructions, by name.

    Unchanged instructions that are not kernels get no mark (they keep the usual colours).
    """
    before: dict[str, PictureMark] = {}
    after: dict[str, PictureMark] = {}
    number = 0
    for k in diff.summary.kernel_diffs:
        if k.before is not None and k.after is not None:
            number += 1
            note = str(k.changes[0]) if k.changes else ""
            before[k.before.name] = PictureMark(k.status, number, True, note)
            after[k.after.name] = PictureMark(k.status, number, True, note)
        elif k.after is not None:
            after[k.after.name] = PictureMark(Status.ADDED, 0, True, k.note or "added")
        elif k.before is not None:
            before[k.before.name] = PictureMark(Status.REMOVED, 0, True, k.note or "removed")
    for d in diff.instructions:
        if d.status is Status.UNCHANGED:
            continue
        if d.opcode == "constant" and d.before is not None and d.after is not None and \
                all(c.kind is ChangeKind.FUSION for c in d.changes):
            continue  # a constant copied into a fusion: XLA does that freely, and it is drawn in its user
        note = str(d.changes[0]) if d.changes else ""
        if d.before is not None and d.before.name not in before:
            before[d.before.name] = PictureMark(d.status if d.after is not None else Status.REMOVED, 0, False, note)
        if d.after is not None and d.after.name not in after:
            after[d.after.name] = PictureMark(d.status if d.before is not None else Status.ADDED, 0, False, note)
    return before, after

"""Which op each asynchronous pair runs, by the name XLA's buffer assignment gives it.

On a GPU, XLA runs some fusions asynchronously (a loop's dynamic-slice, dynamic-update-slice).
XLA's dump prints such a pair in full::

    %fusion-start.28 = … async-start(…), calls=%async_computation.28
    %async_computation.28 { … ROOT %loop_dynamic_slice_fusion.3 = fusion(…), calls=%fused_dynamic_slice.16.clone }

while JAX's ``compiled.as_text()`` of the same compile prints it as sugar, with no name for the
fusion inside: ``%fusion-start.28 = … fusion-start(…), calls=%fused_dynamic_slice.16.clone``. The
buffer assignment and live ranges XLA dumps name the fusion (``loop_dynamic_slice_fusion.3``);
:func:`async_wrapped` says which pair of the sugared text stands for it, so the record a capture
keeps can be placed in the module it keeps.
"""

from __future__ import annotations

from hloviz.ir import HloModule, Instruction

__all__ = ["async_wrapped"]


def async_wrapped(dumped: HloModule, post: HloModule) -> dict[str, tuple[str, str]]:
    """The ops asynchronous pairs run, as ``dumped`` (XLA's dump) names them → ``(start, done)``
    in ``post`` (the text of the same compile that writes them as sugar). A pair is matched by
    the start's name and must call the same computation in both (the fusion's fused
    computation): one that does not, or whose op ``post`` names itself, is left out."""
    names = {i.name for i in post.instructions()}
    starts = {i.name: i for i in post.instructions() if i.opcode.endswith("-start")}
    out: dict[str, tuple[str, str]] = {}
    for start in dumped.instructions():
        if start.opcode != "async-start":
            continue
        wrapped = [c.root for c in start.called_computations if c.root is not None]
        sugar = starts.get(start.name)
        if len(wrapped) != 1 or sugar is None or wrapped[0].name in names:
            continue
        op = wrapped[0]
        if _called(op) != _called(_sugar_op(sugar)):
            continue
        done = _done(sugar)
        if done is not None:
            out[op.name] = (sugar.name, done.name)
    return out


def _sugar_op(start: Instruction) -> Instruction:
    """The op the parser made for a ``<op>-start`` written as sugar (the root of its synthetic
    computation); ``start`` itself for any other start."""
    for c in start.called_computations:
        if c.synthetic and c.root is not None:
            return c.root
    return start


def _called(inst: Instruction) -> list[str]:
    return [c.name for c in inst.called_computations]


def _done(start: Instruction) -> Instruction | None:
    """The ``-done`` that ends the chain ``start`` begins (through any ``-update``)."""
    users: dict[int, list[Instruction]] = {}
    if start.parent is None:
        return None
    for inst in start.parent.instructions:
        for o in inst.operands:
            users.setdefault(id(o), []).append(inst)
    step = start
    for _ in range(len(start.parent.instructions)):
        nxt = [u for u in users.get(id(step), []) if u.opcode.endswith(("-update", "-done"))]
        if len(nxt) != 1:
            return None
        step = nxt[0]
        if step.opcode.endswith("-done"):
            return step
    return None

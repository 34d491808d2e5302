"""The optimizer's work in a training step whose names do not say it: what reads gradients.

A JAX step's optimizer (optax) is written in the traced function itself, its ops named like
forward ops at the top (``jit(step)/mul``) or in the helpers it calls (``jit(step)/jit(norm)/…``,
LAMB's trust ratio), never under ``jvp(…)``; so are TensorFlow's top-level ops (Keras's
LossScaleOptimizer checks the gradients with ``IsFinite``, ``All``) and the scopes a step names
beside its model to process the gradients (``tf.clip_by_global_norm``). Those that read gradients
are the optimizer's (:mod:`hloviz.analysis.phase_flow`); this runs while the scope tree is built
(:mod:`.build`), after named instructions are filed and before data flow places the rest by phase.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from ...ir import Computation, HloModule, Instruction
from ..memory.aliasing import entry_aliases
from ..phase_flow import mark_after_gradients, mark_optimizer
from .scope import Scope

__all__ = ["mark_custom_gradients", "mark_recomputed_forward", "mark_step_optimizer"]


def mark_step_optimizer(module: HloModule, root: Scope, of: dict[Instruction, Scope], phase_of: dict[Instruction, str],
                        votes: dict[Instruction, tuple[Scope, str]]) -> list[Scope]:
    """Re-phase as ``optimizer`` the forward-named instructions that read gradients: a JAX
    step's ops in ``jit(f)`` itself, TF's named at the top, and TF's scopes beside the model
    (``of``, ``phase_of``, ``votes``: the filing so far, updated in place). Return the scopes
    of a TensorFlow update written by hand (no optimizer named; DP-SGD's clip, noise and
    ``assign_sub`` in a scope of the user's): the user named them, so their update stays in
    them rather than going to the layers it updates (:mod:`hloviz.analysis.updates`)."""
    jax = any(c.kind == "scope" and c.name.startswith(("jit(", "pjit(")) for c in root.children)
    if not jax and "optimizer" not in phase_of.values():
        # a scope beside the model that reads gradients and writes a variable: the update
        scopes, groups = _step_scopes(root, phase_of)
        writing = _writing(module, groups)
        found = mark_after_gradients(module, phase_of, [groups[k] for k in writing], every=False)
        _vote(found, votes)
        turned = {id(i) for i in found}
        return [scopes[k] for k in writing if any(id(i) in turned for i in groups[k])]

    # TF: an op at the top that reads gradients is the update's only where its value reaches a variable the
    # step writes (a LossScaleOptimizer's ``All_3``) and no backward work reads it; a loss made of gradients
    # (a PINN's residual ``u_t - 0.1 * u_xx``, taken by inner tapes) is returned, not written, and the outer
    # tape differentiates it: the gradient of its ``Square`` reads the residual
    # (worked out on the first op at the top that reads gradients: most steps have none)
    facts: list[tuple[Callable[[Instruction], bool] | None, set[int]]] = []

    def update_only(inst: Instruction) -> bool:
        if not facts:
            facts.append((_written_from(module), _read_by_backward(module, phase_of)))
        writes, differentiated = facts[0]
        return (writes is None or writes(inst)) and id(inst) not in differentiated

    def top(inst: Instruction) -> bool:  # JAX: in ``jit(f)``, not differentiated (TF: named at the top: ``All_3``)
        s, name = of.get(inst), inst.metadata.op_name  # (``jvp(…)``: differentiated forward work; a helper
        # optax calls, ``jit(f)/jit(norm)/…`` — LAMB's trust ratio — is no layer: what reads gradients is the update)
        if s is None:
            return False
        if jax:
            return s.kind == "scope" and name.startswith(("jit(", "pjit(")) and "jvp(" not in name
        return s.kind == "top" and "/" not in name

    found = mark_optimizer(module, phase_of, top, None if jax else update_only)
    if not jax:  # the gradients' clipping, in scopes of its own beside the model
        found += mark_after_gradients(module, phase_of, _step_scopes(root, phase_of)[1])
    _vote(found, votes)
    return []


def _vote(found: list[Instruction], votes: dict[Instruction, tuple[Scope, str]]) -> None:
    """Record the new phase of each re-phased instruction filed by its op name's vote."""
    for inst in found:
        if inst in votes:
            votes[inst] = (votes[inst][0], "optimizer")


def _writing(module: HloModule, groups: list[list[Instruction]]) -> list[int]:
    """The indexes of the ``groups`` with an instruction whose value reaches an output the entry writes into one
    of its parameters (``input_output_alias``: TensorFlow's resource variables). Reading gradients
    alone says too little without an optimizer: a gradient norm the step returns is no update."""
    feeds = _written_from(module)
    return [] if feeds is None else [k for k, g in enumerate(groups) if any(feeds(i) for i in g)]


def _written_from(module: HloModule) -> Callable[[Instruction], bool] | None:
    """Whether an instruction's value reaches an output the entry writes into one of its parameters
    (``input_output_alias``), or it runs in a computation such an instruction calls (a fusion's
    ``Mean`` after optimization); None for a module that writes none (nothing to tell an update by)."""
    entry = module.entry
    outputs = {index for index, _number, _at in entry_aliases(module)}
    if entry is None or entry.root is None or not outputs:
        return None
    starts = [entry.root] if () in outputs or entry.root.opcode != "tuple" else \
        [entry.root.operands[i[0]] for i in outputs if len(entry.root.operands) > i[0]]
    feeds: set[int] = set()
    called: list[Computation] = []
    while starts:
        inst = starts.pop()
        if id(inst) not in feeds:
            feeds.add(id(inst))
            starts.extend(inst.operands)
            called.extend(inst.called_computations)
    inside: set[int] = set()  # the computations those call, and what they call
    while called:
        comp = called.pop()
        if id(comp) not in inside:
            inside.add(id(comp))
            for inst in comp.instructions:
                called.extend(inst.called_computations)
    return lambda inst: id(inst) in feeds or id(inst.parent) in inside


def _read_by_backward(module: HloModule, phase_of: dict[Instruction, str]) -> set[int]:
    """The ids of the instructions whose values backward work reads, directly or through other
    instructions of their computation (and every instruction of a computation whose caller's value
    it reads): forward work, the loss's included, never the update's, which nothing differentiates."""
    out: set[int] = set()
    if module.entry is None:
        return out
    todo: list[tuple[Computation, bool]] = [(module.entry, False)]
    seen: set[int] = set()
    while todo:
        comp, whole = todo.pop()
        if id(comp) in seen:
            continue
        seen.add(id(comp))
        insts = comp.instructions
        if whole:
            out.update(id(i) for i in insts)
        else:
            for inst in reversed(insts):  # users first (HLO text lists operands before their users)
                if id(inst) in out or phase_of.get(inst) == "backward":
                    out.update(id(o) for o in inst.operands)
        for inst in insts:
            for c in inst.called_computations:
                todo.append((c, whole or id(inst) in out))
    return out


def _step_scopes(root: Scope, phase_of: dict[Instruction, str]) -> tuple[list[Scope], list[list[Instruction]]]:
    """The instructions filed under each scope below the root, with its subscopes', where none
    is backward or optimizer work by its names: what the step itself names and does not
    differentiate (TensorFlow names a scope's gradient ``gradient_tape/<scope>/…``, filed under
    that scope: a loss, a gradient penalty). A model's scope stops at its first gradient.
    Returned as the scopes and, by the same index, their instructions."""
    tops, out = [], []
    for top in root.children:
        if top.kind != "scope":
            continue
        group: list[Instruction] = []
        stack, mixed = [top], False
        while stack and not mixed:
            scope = stack.pop()
            for inst in scope.instructions:
                if phase_of.get(inst) != "forward":
                    mixed = True
                    break
                group.append(inst)
            stack.extend(scope.children)
        if not mixed:
            tops.append(top)
            out.append(group)
    return tops, out


def mark_recomputed_forward(module: HloModule, phase_of: dict[Instruction, str],
                            votes: dict[Instruction, tuple[Scope, str]]) -> None:
    """Re-phase as ``forward`` a ``jax.remat`` recomputation (``…/rematted_computation/…``, named
    inside the backward pass) whose value forward work reads: XLA merges the recomputation with
    the first run where no loop keeps them apart, and the merged kernel keeps the recomputation's
    name (an unseen Flax step's ``block_0/dense`` was backward work after optimization, and its
    box stood below the loss). One only the backward pass reads stays backward (a scanned
    block's, run again in the backward loop: remat's cost is the backward pass's). ``votes`` as
    for :func:`mark_step_optimizer`."""
    for comp in module.computations:
        again = {id(i) for i in comp.instructions
                 if phase_of.get(i) == "backward" and "/rematted_computation/" in i.metadata.op_name}
        if not again:
            continue
        users = comp.users()
        for inst in reversed(comp.instructions):  # users first: a chain of them turns at once
            if id(inst) in again and any(phase_of.get(u) == "forward" for u in users[inst]):
                phase_of[inst] = "forward"
                if inst in votes:
                    votes[inst] = (votes[inst][0], "forward")


def mark_custom_gradients(module: HloModule, root: Scope, of: dict[Instruction, Scope], phase_of: dict[Instruction, str],
                          votes: dict[Instruction, tuple[Scope, str]], fused: Mapping[str, Instruction],
                          sums: Collection[Instruction] = ()) -> None:
    """Re-phase as ``backward`` the ops a TensorFlow step names at the top (``sub``, ``mul_3``: no
    scope, not ``gradient_tape/…``) whose values only backward work reads, directly or through
    others of them: a custom gradient's. ``tf.nn.silu`` computes its gradient, σ(x)·(1 + x·(1 − σ(x)))
    times the incoming one, in ops TensorFlow names outside every scope (and the gradient of its
    constant β, which reads the incoming gradient and nothing reads); they were the forward
    pass's, and a Keras CNN's swish gradients made two "forward" boxes among its backward ones.
    So is what a ``tf.custom_gradient``'s gradient function computes in a scope of its own
    (``clip_by_norm/…`` of the incoming gradient, read by the layer's gradient below): ops that
    read gradients and only backward work reads, where the update's clipping beside the model is
    read by the optimizer. A loss the step computes from gradients (a PINN's residual, taken by
    inner tapes) is read by its forward ``Square`` as well, and stays. JAX names a custom rule's work under ``jvp(…)``.
    ``sums``: the tape's sums of two gradients (``AddN``), backward work not yet filed.
    Fused computations (``fused``: name → the fusion running it) are not read this way: there a
    forward op XLA recomputes for a gradient's kernel is read by backward work alone, and is still
    forward work; a turned fusion's ops named under its scope turn with it.
    ``votes`` as for :func:`mark_step_optimizer`."""
    if any(c.kind == "scope" and c.name.startswith(("jit(", "pjit(")) for c in root.children):
        return
    added = {id(i) for i in sums}
    # the scopes a step names beside its model that its names do not differentiate (the update's
    # clipping, usually: :func:`mark_step_optimizer` makes what reads gradients there the optimizer's)
    beside = {id(i) for group in _step_scopes(root, phase_of)[1] for i in group}
    kernels: set[int] = set()  # the turned (any of them may be a fusion: after optimization)
    for comp in module.computations:
        if comp.name in fused:
            continue
        insts = comp.instructions
        top = {id(i) for i in insts if phase_of.get(i) == "forward" and "/" not in i.metadata.op_name
               and (s := of.get(i)) is not None and s.kind == "top"}
        reads: set[int] = set()  # reads gradients, directly or through others of them (operands first)
        for inst in insts:
            if (id(inst) in top or id(inst) in beside) and any(
                    phase_of.get(o) == "backward" or id(o) in added or id(o) in reads for o in inst.operands):
                reads.add(id(inst))
        if not top and not reads:
            continue
        literal: set[int] = set()  # in a scope beside the model, what constants alone make (its shapes)
        for inst in insts:
            if id(inst) in beside and (inst.opcode == "constant" or
                                       (inst.operands and all(id(o) in literal for o in inst.operands))):
                literal.add(id(inst))
        users = comp.users()
        turned: set[int] = set()
        for inst in reversed(insts):  # users first: a chain of them turns at once
            # at the top: what only backward work reads (or, read by nothing, what reads gradients:
            # ``silu``'s gradient of its constant β); in a scope beside the model (a ``tf.custom_gradient``'s
            # ``clip_by_norm``): what reads gradients and only backward work reads
            if id(inst) in top or id(inst) in reads or id(inst) in literal:
                read_by = users.get(inst, ())
                if (read_by or id(inst) in reads) and all(phase_of.get(u) == "backward" or id(u) in added
                                                          or id(u) in turned for u in read_by):
                    turned.add(id(inst))
        scopes = {id(of[i]) for i in insts if id(i) in turned and i in of}  # (their unread literals with them)
        for inst in insts:
            if id(inst) in turned or (id(inst) in literal and not users.get(inst) and id(of[inst]) in scopes):
                _turn(inst, phase_of, votes)
                kernels.add(id(inst))
    _turn_fused(module, fused, kernels, phase_of, votes)


def _turn_fused(module: HloModule, fused: Mapping[str, Instruction], turned: set[int], phase_of: dict[Instruction, str],
                votes: dict[Instruction, tuple[Scope, str]]) -> None:
    """A fused kernel :func:`mark_custom_gradients` turned (``turned``: ids): its own ops inside it
    too, those named under its scope (not a layer's forward work XLA recomputes there)."""
    for name, fusion in fused.items():
        head = fusion.metadata.op_name.partition("/")[0]
        comp = module.get_computation(name)
        if id(fusion) not in turned or comp is None or not head:
            continue
        for inst in comp.instructions:
            if phase_of.get(inst) in ("forward", "optimizer") and inst.metadata.op_name.partition("/")[0] == head:
                _turn(inst, phase_of, votes)


def _turn(inst: Instruction, phase_of: dict[Instruction, str], votes: dict[Instruction, tuple[Scope, str]]) -> None:
    phase_of[inst] = "backward"
    if inst in votes:
        votes[inst] = (votes[inst][0], "backward")

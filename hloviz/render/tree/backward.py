"""The optimized backward pass cut into one block per layer, by what its kernels read of the forward layers.

Before optimization a training step's backward pass folds like its forward pass: the residual
gradient's adds are a spine, each layer's backward ops lie between two of them
(:mod:`~hloviz.render.tree.blocks`). XLA's fusions erase that spine: the residual gradient's running
sum is fused into each residual point (``samples/jax_gpt_step.py``'s 8-layer step: fusions
reading 9, 18, … 161 operands, every later layer's terms recomputed inside), so no op separates
one layer from the next and no dominator bounds one. The layers are still there, in what the
kernels read: the forward pass after optimization folds into ``×N`` copies, one per layer, each
holding that layer's weights (the entry parameters join their first user's block) and the
activations it saves — and a layer's backward kernels read its own weights and saved
activations.

:func:`split_backward` gives a ``(backward)`` scope whose sibling ``(forward)`` scope holds a
chained repeat of ``N`` copies one block per layer, named after the layer's forward copy
(``backward of add_add_fusion.2``), in the order the backward pass runs them (the last layer
first). A backward kernel belongs to a layer by these rules, tried in order:

1. **what it reads of the forward copies**: the copies of the forward instructions it reads
   directly, leaving out a forward instruction read by another forward instruction outside its
   copy (the residual stream between two layers, read by the next layer's LayerNorm and by both
   layers' backward kernels alike: it says nothing about which layer a kernel works for);
2. **read from several copies, the one the backward pass reaches last** — the copy that comes
   first in the forward pass. The kernels reading several layers are the residual gradient's
   running sum: at each residual point it adds up the terms of every later layer, so it cannot
   run before those layers' backward kernels are done, and XLA schedules it where the earliest
   layer it reads starts (checked on both GPT captures: every such kernel sits in the run of
   that layer's kernels). Not the layer it reads most: the sums where layer 0's backward pass
   starts read every copy, and run with layer 0;
3. **reading no forward copy, the layer of all its operands** in the backward pass (a reduction
   of a layer's gradient, a transpose before its dot), repeated until nothing changes. Only
   operands, never users: the final LayerNorm's backward feeds the last layer's kernels but
   computes from no layer's work.

Not by hloviz's pre→post mapping (:mod:`hloviz.analysis.pre_post.mapping`), which would name the
pre-optimization layer block each kernel's ops came from: it pairs ops by ``op_name``, and a step
without name scopes gives every layer the same ones (130 instructions of the 8-layer step's
pre-optimization HLO are ``jit(train_step)/transpose(jvp())/dot_general``).

A kernel no rule assigns (the loss's and the final LayerNorm's backward, the logits' gradient
every running sum reads, the embedding's gradient) stays outside the blocks, in the block it
was drawn in (or loose, where the rest of that block went to layers). Nothing here reads op
names: a module without name scopes has none to read. Layers' blocks built alike then fold into
a ``×N`` repeat like any blocks: on both GPT captures every layer's backward pass is 53 kernels
wired alike, one unbroken run of the schedule each (the last layer's first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .nodes import TreeNode, leaves_below, rekey

__all__ = ["split_backward"]

#: The phase scopes a training step without user scopes is split into (``phases.PHASE_SCOPES``).
_FORWARD, _BACKWARD = "(forward)", "(backward)"


def split_backward(root: TreeNode, succ: Mapping[str, Sequence[str]]) -> bool:
    """Give each ``(backward)`` scope below ``root`` whose ``(forward)`` sibling folds into a
    chained repeat, and that has no such repeat itself, one block per layer (module docstring);
    whether any was given. ``succ``: the arrows between leaves (leaf name → the leaves it feeds)."""
    done = False
    stack = [root]
    while stack:
        node = stack.pop()
        phases = {c.name: c for c in node.children if c.kind == "scope" and c.name in (_FORWARD, _BACKWARD)}
        if len(phases) == 2:
            copies = _layers(phases[_FORWARD])
            if copies and not _folded(phases[_BACKWARD], len(copies)):
                done |= _split(phases[_BACKWARD], phases[_FORWARD], copies, succ)
        stack.extend(c for c in node.children if c.kind in ("root", "scope"))
    return done


def _layers(forward: TreeNode) -> list[TreeNode]:
    """The forward pass's layers: the copies of its one chained repeat (in run order)."""
    reps = [c for c in forward.children if c.kind == "repeat" and not c.parallel]
    return list(reps[0].children) if len(reps) == 1 else []


def _folded(backward: TreeNode, n: int) -> bool:
    """The backward pass folds into its layers already (before optimization)."""
    return any(c.kind == "repeat" and not c.parallel and len(c.children) == n for c in backward.children)


def assign(backward: Sequence[str], forward: Sequence[str], copy_of: Mapping[str, int],
           succ: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Backward leaf → the index of its layer's forward copy, by the module docstring's rules
    (leaves no rule assigns are absent). ``backward`` in text order; ``forward``: every leaf of
    the forward pass; ``copy_of``: the forward leaves inside a copy → its index in run order."""
    fw = set(forward)
    bw = set(backward)
    pred: dict[str, list[str]] = {}
    boundary = set()
    for a in (*forward, *backward):
        for b in succ.get(a, ()):
            pred.setdefault(b, []).append(a)
            if a in copy_of and b in fw and copy_of.get(b) != copy_of[a]:
                boundary.add(a)  # rule 1: read outside its copy in the forward pass
    layer: dict[str, int] = {}
    for v in backward:
        read = {copy_of[p] for p in pred.get(v, ()) if p in copy_of and p not in boundary}
        if read:
            layer[v] = min(read)  # rule 2: the copy the backward pass reaches last
    changed = True
    while changed:  # rule 3: operands in one layer
        changed = False
        for v in backward:
            if v in layer:
                continue
            ops = [p for p in pred.get(v, ()) if p in bw]
            got = {layer.get(p, -1) for p in ops}
            if ops and len(got) == 1 and -1 not in got:
                layer[v] = got.pop()
                changed = True
    return layer


def _split(backward: TreeNode, forward: TreeNode, copies: list[TreeNode], succ: Mapping[str, Sequence[str]]) -> bool:
    copy_of = {leaf.name: i for i, c in enumerate(copies) for leaf in leaves_below(c)}
    leaves = leaves_below(backward)
    layer = assign([v.name for v in leaves], [v.name for v in leaves_below(forward)], copy_of, succ)
    members: dict[int, list[TreeNode]] = {}
    for v in leaves:
        if v.name in layer:
            members.setdefault(layer[v.name], []).append(v)
    if len(members) < 2 or min(len(m) for m in members.values()) < 2:
        return False
    children: list[TreeNode] = []
    for i in sorted(members, reverse=True):  # the backward pass runs the last layer first
        name = f"backward of {copies[i].label or copies[i].name}"
        block = TreeNode(f"{backward.key}/b:layer{i}", "block", name, backward.path, name, backward,
                         depth=backward.depth, layer=True)
        for v in members[i]:
            v.parent = block
            block.children.append(v)
        rekey(block)
        children.append(block)
    for kid in backward.children:  # what no rule assigns stays as it was drawn
        inside = leaves_below(kid)
        if not any(v.name in layer for v in inside):
            children.append(kid)
            continue
        for v in inside:
            if v.name not in layer:  # the rest of a block whose kernels went to layers: loose
                v.parent = backward
                v.key = f"{backward.key}/{v.key.rsplit('/', 1)[-1]}"
                children.append(v)
    backward.children = children
    return True

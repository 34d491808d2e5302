"""What a closed scope's box says: its title (:func:`scope_title`, by the names users know),
where it is (:func:`display_path`), its rows (:func:`scope_rows`: ``N ops → K kernels``, the
common opcodes, the phases), and the name of a block of loose ops (:func:`block_title`).
:mod:`hloviz.render.cut.apply` writes them into the units it makes."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping

from ...analysis.loops import runs_of, runs_steps, trips_text
from ...analysis.opnames import PHASES
from ...ir import Instruction
from ..scene import Row
from ..tree.tree import STRUCTURAL, TreeNode
from . import labels

__all__ = ["block_title", "display_path", "function_name", "main_pass", "path_parts", "scope_rows", "scope_title"]


def scope_title(node: TreeNode) -> str:
    """``block_5_expand``; a group: ``block_5_* (9 layers)``; the first copy of a repeat opened
    in place (:func:`hloviz.render.cut.cut.open_in_place`) says so: ``… · copy 1 of 24``."""
    parent = node.parent
    if parent is not None and parent.kind == "repeat" and node.kind != "repeat" and parent.children[0] is node \
            and any(c.kind == "repeat" for c in parent.children):
        copies = sum(len(c.children) if c.kind == "repeat" else 1 for c in parent.children)
        return f"{_title(node)} · copy 1 of {copies}"
    return _title(node)


def function_name(label: str) -> str:
    """``jit(train_step)`` → ``train_step``: JAX's wrapper around the traced function is no
    layer name (:attr:`hloviz.analysis.scopes.Scope.display_path`); other labels as they are."""
    for wrapper in ("jit(", "pjit("):
        if label.startswith(wrapper) and label.endswith(")") and "/" not in label:
            return label[len(wrapper):-1]
    return label


def display_path(node: TreeNode) -> str:
    """Where a scope is, by the names users know: the labels of it and the scopes holding it
    (``ViT/blocks/mlp``), JAX's ``jit(f)`` left out, as ``stats --by scope`` writes it; not its
    op names' path (``jit(f)/ViT/blocks/mlp``). A TensorFlow scope's second line keeps the op
    names' path, as ``stats --json``'s ``scope`` does (``MobileNetV3Small_1/activation_1_2``:
    the title above it is the Keras name)."""
    names = [n.label or n.name for n in (node, *node.ancestors()) if n.kind == "scope"]
    return "/".join(n for n in reversed(names) if not (n.startswith(("jit(", "pjit(")) and n.endswith(")")))


def _title(node: TreeNode) -> str:
    if node.kind == "group":
        n = sum(1 for c in node.children if c.kind in STRUCTURAL)
        return f"{node.label or node.name} ({n} scopes)"
    if node.kind == "block":  # named after its last node: JAX's traced function by its name
        return f"{function_name(node.label) or '(ops)'} · block of {len(node.children)}"
    if node.kind == "repeat":
        return f"{node.label} ({node.name})"
    if node.kind == "root":
        return "(no scope)"
    names = [function_name(node.label or node.name)]
    parent = node.parent
    # an open scope holding only this one is not drawn: its name goes into this one's
    while parent is not None and parent.kind == "scope" and len(parent.children) == 1:
        name = parent.label or parent.name
        if not name.startswith(("jit(", "pjit(")):  # JAX's traced function is no layer: ``ViT``, not ``jit(f)/ViT``
            names.append(name)
        parent = parent.parent
    if len(names) > 1 and not _traced_by_jax(node):
        # TensorFlow: the outer name is the one the model's author gave (a Keras layer, a
        # ``tf.name_scope``), the inner one TensorFlow's own around that layer's math
        # (``tf.nn.batch_normalization``'s ``batchnorm``, ``tf.nn.gelu``'s ``Gelu``): InceptionV3's
        # optimized column titled four boxes ``batch_normalization_1/batchnorm`` beside
        # ``conv2d_2``, where its unoptimized column says ``batch_normalization_1``
        return names[-1]
    return "/".join(reversed(names))


def _traced_by_jax(node: TreeNode) -> bool:
    """Whether ``node`` is inside JAX's traced function (``jit(f)``), whose nested names are
    all the author's (``blocks/mlp``: a Flax module's submodule)."""
    return any(a.kind == "scope" and (a.label or a.name).startswith(("jit(", "pjit(")) for a in node.ancestors())


def scope_rows(node: TreeNode, members: list[Instruction], kernels_of: Callable[[Instruction], tuple[int, ...]],
               *, after: bool, phase_of: Callable[[Instruction], str] = lambda i: "forward",
               names: Mapping[str, str] | None = None, listed: int = 3) -> list[Row]:
    """The label of a closed scope: name, ``N ops → K kernels``, the most common opcodes
    (``listed`` of them, and of its parameters' names)."""
    ops = [m for m in members if m.opcode not in ("parameter", "get-tuple-element", "tuple")]
    params = len(members) - len(ops) - sum(1 for m in members if m.opcode in ("get-tuple-element", "tuple"))
    kernels = sorted(set().union(*map(kernels_of, members)))  # C-level: a weight's tuple names every kernel reading it
    if after:
        fusions = [m for m in ops if m.opcode == "fusion"]
        inner = sum(_fused_ops(f) for f in fusions)
        what = (f"{len(kernels)} kernel{'s' if len(kernels) != 1 else ''}" if kernels
                else f"{len(ops)} instruction{'s' if len(ops) != 1 else ''}")
        if fusions:
            what += f" · {len(fusions)} fusion{'s' if len(fusions) != 1 else ''} of {inner} ops"
    else:
        what = f"{len(ops)} op{'s' if len(ops) != 1 else ''}"
        if kernels:
            what += f" → {len(kernels)} kernel{'s' if len(kernels) != 1 else ''}"
    moved = Counter(m.opcode for m in members if m.opcode in ("get-tuple-element", "tuple"))
    if not ops and moved:  # elements a loop's condition takes and never reads, tuples alone: no "0 ops"
        what = ", ".join(f"{n} {op}{'s' if n != 1 else ''}" for op, n in sorted(moved.items(), key=lambda kv: kv[0] != "tuple"))
    in_loop, runs = runs_of(ops)
    if in_loop:  # a loop's body (a scanned block): drawn once, run this many times
        what += f" · {trips_text(runs)}"
    rows = [Row(scope_title(node), bold=True), Row(what)]
    shown = [m.opcode for m in ops if m.opcode != "fusion" or not after]
    if shown:
        rows.append(Row(labels.histogram_text(shown, top=listed), small=True))
    phases = Counter(phase_of(m) for m in ops)
    if set(phases) - {"forward"}:
        rows.append(Row(" · ".join(f"{p} {phases[p]}" for p in ("forward", "backward", "optimizer") if phases[p]),
                        small=True, italic=True))
    if params:
        named = [names[m.name] for m in members if m.opcode == "parameter" and names and m.name in names]
        text = f"{params} parameter{'s' if params != 1 else ''}"
        if named:
            prefix = (node.label or node.name) + "/"
            short = [n.split(prefix, 1)[1] if prefix in n else n.rsplit("/", 1)[-1] for n in named]
            text += ": " + ", ".join(short[:listed]) + (f" +{len(short) - listed}" if len(short) > listed else "")
        rows.append(Row(labels.shorten(text, 60), small=True))
    return rows


def block_title(node: TreeNode, members: list[Instruction], names: Mapping[str, str],
                phases: Mapping[str, int]) -> str | None:
    """A block found by structure is labelled by its last instruction (``div.207``), which
    means nothing to the model's author (issue 33: blocks named by the model's scopes). Where
    no traced function names it, name it by the weight its parameters share
    (``adamw_state['mu']['blocks']['attn']['out']['kernel']`` and its ``nu`` →
    ``blocks/attn/out/kernel``; else by the start of its weights' paths, ``blocks/attn``) and
    by the pass it runs in (``… · optimizer``), or by that pass alone; None where the block keeps
    its title (a traced function's name)."""
    if node.kind != "block" or not any(m.name == node.label for m in members):
        return None  # named by JAX's traced function, or by no instruction of its own
    paths = [path_parts(names[m.name]) for m in members if m.opcode == "parameter" and m.name in names]
    # the weight: the longest path end two or more parameters share, each with a head of its
    # own (``params``, ``adamw_state/mu``, ``adamw_state/nu``); a step count or a learning rate
    # among them names nothing
    ends: Counter[tuple[str, ...]] = Counter()
    for parts in paths:
        for k in range(1, len(parts)):
            ends[tuple(parts[-k:])] += 1
    shared: tuple[str, ...] = max((e for e, n in ends.items() if n >= 2 and len(e) >= 2),
                                  key=lambda e: (len(e), ends[e]), default=())
    count = f"block of {len(node.children)}"
    loop = next((m for m in members if m.opcode == "while" and runs_steps(m)), None)
    if loop is not None:  # a loop of steps or micro-batches, the forward and the backward pass in its
        return f"{loop.name} · {count}"  # body (drawn open beside it): no one pass's block
    # no op of its own (parameters, a loop's results read from its tuple): what it holds
    phase = main_pass(phases) if phases else Counter(m.opcode for m in members).most_common(1)[0][0]
    if not shared and len(paths) > 1:  # else the start all share, less the argument's name (``params``)
        for parts in zip(*paths, strict=False):
            if len(set(parts)) != 1:
                break
            shared += (parts[0],)
        shared = shared[1:]
        if shared and shared[0] in _COLLECTIONS:  # nor Flax's collection (``params['params']``)
            shared = shared[1:]
    while shared and shared[0].isdigit():  # an index first (optax's ``opt_state[0].nu``, a Flax NNX
        shared = shared[1:]                # state's ``model.states[0][5]``) names no weight
    if shared:
        weight = "/".join(shared)
        return f"{weight} · {phase} · {count}" if phase != "forward" else f"{weight} · {count}"
    return f"{phase} · {count}"


#: The collections a Flax ``linen`` model's variables come in: the first key of its variables,
#: no weight's name (an unseen mixture of experts' block of ``w_in`` and ``w_out``, the model's
#: own, was titled ``params · block of 10``).
_COLLECTIONS = frozenset({"params", "batch_stats", "cache", "intermediates"})


def main_pass(phases: Mapping[str, int]) -> str:
    """The pass most of a block's ops run in; of passes with as many, the one that runs first
    (an L2 penalty's two squares beside two of the optimizer's kernels: ``forward``)."""
    return max(phases, key=lambda p: (phases[p], -_RUNS.get(p, len(_RUNS))))


_RUNS = {p: k for k, p in enumerate(PHASES)}


def path_parts(name: str) -> list[str]:
    """``adamw_state['mu']['blocks']['kernel']`` → ``adamw_state``, ``mu``, ``blocks``, ``kernel``;
    ``opt_state[0].nu['k']`` → ``opt_state``, ``0``, ``nu``, ``k``."""
    return [p for p in re.split(r"[\[\]'\"/]+|(?<=\])\.(?=[A-Za-z_])", name) if p]


def _fused_ops(fusion: Instruction) -> int:
    """The ops a fusion runs (its fused computation's, and those of fusions nested in it)."""
    comps = fusion.called_computations
    if len(comps) == 1:
        # the usual fusion nests none: one pass over its computation (a closed layer of a big
        # module sums thousands of them)
        count = 0
        for i in comps[0].instructions:
            if i.opcode == "fusion":
                break
            if i.opcode != "parameter":
                count += 1
        else:
            return count
    from ...ir import called_closure

    return sum(1 for c in called_closure(fusion.called_computations, follow=lambda i: i.opcode == "fusion")
               for i in c.instructions if i.opcode not in ("parameter", "fusion"))

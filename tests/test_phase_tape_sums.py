"""A gradient tape's sum of two gradients (a top-level ``AddN``: the gradient of a value used twice)
is backward work wherever XLA puts it. In an optimized wide-and-deep training step XLA fused the
sums into Adagrad's update kernels (the sum feeds only the update), and each fused copy took its
kernel's phase: 40 sums were counted as the optimizer's, credited as updates of the loss layer
(``logistic_loss``: "optimizer 8" in its box), and the embeddings' sparse updates, read through
them, as updates of the whole model. The post-optimization picture then drew the optimizer's work
in three places, with crossing arrows between them.

The oracle is the HLO text, read with regular expressions: a tape's sum is an instruction whose
``op_type`` is ``AddN`` and whose ``op_name`` has no scope; its computation is the block of text it
sits in. The fixture is the post-optimization module of
``benchmarks/heldout/round12.py:wide_deep_step`` (TensorFlow 2.21, CPU; ``hloviz dump … -o DIR``,
``DIR/post.hlo``) with the ``source_file``/``source_line`` metadata removed to keep it small.
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

DATA = Path(__file__).resolve().parent / "data" / "orders"
POST = DATA / "wide_deep_step_post.hlo"
PRE = DATA / "wide_deep_step.hlo"
_HEADER = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")
_INSTRUCTION = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = .*op_type="([^"]*)" op_name="([^"]*)"')


def _by_computation(text: str) -> dict[str, list[tuple[str, str, str]]]:
    """Computation name → its instructions' (name, op_type, op_name), from the text alone."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    current: list[tuple[str, str, str]] | None = None
    for line in text.splitlines():
        if (h := _HEADER.match(line)) and " = " not in line:
            current = out.setdefault(h.group(1), [])
        elif current is not None and (m := _INSTRUCTION.match(line)):
            current.append(m.groups())
    return out


def _tape_sums(text: str) -> dict[str, set[str]]:
    """Computation → the names of its tape sums (``AddN`` of no scope)."""
    return {comp: {n for n, op_type, op in insts if op_type == "AddN" and "/" not in op}
            for comp, insts in _by_computation(text).items()}


def test_tape_sums_fused_into_the_optimizers_kernels_stay_backward():
    text = POST.read_text()
    sums = _tape_sums(text)
    comps = _by_computation(text)
    # the situation: sums fused into kernels that are Adagrad's (their other ops named adagrad/…)
    in_updates = [c for c, names in sums.items()
                  if names and any(op.startswith("adagrad/") for _, _, op in comps[c])]
    assert len(in_updates) >= 4, in_updates
    module = parse(text)
    tree = build_scope_tree(module, stage="post")
    phase = {(comp.name, i.name): tree.phases.get(i) for comp in module.computations for i in comp.instructions}
    wrong = {(c, n): phase[(c, n)] for c, names in sums.items() for n in names if phase[(c, n)] != "backward"}
    assert sum(len(n) for n in sums.values()) >= 40 and not wrong, sorted(wrong.items())[:5]


def test_the_sums_phase_is_the_same_before_and_after_optimization():
    """Before optimization the sums stand alone in the entry; they were backward there already."""
    text = PRE.read_text()
    module = parse(text)
    tree = build_scope_tree(module, stage="pre")
    names = set().union(*_tape_sums(text).values())
    assert len(names) >= 5
    assert {tree.phases.get(i) for i in module.instructions() if i.name in names} == {"backward"}


def test_an_update_read_through_a_fused_sum_is_not_the_optimizers_own():
    """Followed back from an embedding's sparse update, a sum fused into Adagrad's kernel (filed
    with that kernel, in ``adagrad``) is walked through to the gradients it adds, not taken for
    the layer the update updates: no update is credited to the optimizer's own scope, and no
    sum is an update at all."""
    from hloviz.analysis.updates import update_targets

    text = POST.read_text()
    module = parse(text)
    tree = build_scope_tree(module, stage="post")
    targets = update_targets(tree)
    optimizer_scopes = {op.split("/")[0] for _, _, op in _by_computation(text)[module.entry.name]
                        if op.startswith(("adagrad/", "Adagrad/"))}
    assert optimizer_scopes == {"adagrad"}
    credited = {s.path.split("/")[0] for s in targets.values() if s is not None}
    assert credited and not credited & optimizer_scopes, credited
    sums = set().union(*_tape_sums(text).values())
    assert not [i for i in targets if i.name in sums]

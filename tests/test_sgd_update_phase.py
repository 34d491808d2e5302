"""SGD's update shows its optimizer phase in the picture, as Adam's does (issue 31, item 3).

With SGD, XLA fuses ``w - lr * grad`` into the kernel computing the gradient (the logits bias:
the softmax's backward reduced, then subtracted from the bias): most of that fusion is backward
work, and the picture drew it with the loss, with no ``(optimizer)`` phase at all, while Adam's
separate update kernels were. The oracle, read from the optimized HLO by regex: a fused
computation whose subtract takes a parameter of the fusion (the weight) and whose fusion reads
the learning rate and writes a variable's new value (``sgd/AssignSubVariableOp`` op name).
"""

from __future__ import annotations

import re
from pathlib import Path

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def _bodies(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        head = re.match(r"^%?([\w.\-]+)\s.*\{\s*$", line)
        if head:
            current = out.setdefault(head.group(1), [])
            continue
        if line.strip() == "}":
            current = None
        elif current is not None:
            current.append(line)
    return out


def _updates(text: str) -> dict[str, str]:
    """SGD update fusions → their fused computation: an ``sgd/AssignSubVariableOp`` fusion whose
    body subtracts from one of its parameters (``weight - lr * grad``)."""
    bodies = _bodies(text)
    out = {}
    for m in re.finditer(r'^\s*%?([\w.\-]+) = \S+ fusion\(.*calls=%?([\w.\-]+).*op_name="sgd/AssignSubVariableOp',
                         text, re.MULTILINE):
        body = bodies.get(m.group(2), [])
        if any(re.search(r"subtract\((?:\S+ )?%?param_", line) for line in body):
            out[m.group(1)] = m.group(2)
    return out


def test_every_sgd_update_fusion_is_drawn_in_its_layers_optimizer_phase():
    from hloviz.capture import load_target
    from hloviz.render.views import draw_module

    cap = load_target(str(CAPTURES / "cnn_sgd"))
    text = cap.post_text
    assert text is not None
    updates = _updates(text)
    assert "multiply_subtract_fusion" in updates  # the logits bias: gradient and update in one kernel
    assert len(updates) >= 6
    bodies = _bodies(text)
    post = cap.post_module()
    view = draw_module(post, info=cap.info)
    cut_key = {scene: key for key, scene in view.drawn_as.items()}
    for fusion, comp in updates.items():
        names = [re.match(r"\s*(?:ROOT\s+)?%?([\w.\-]+) =", line).group(1) for line in bodies[comp]
                 if re.match(r"\s*(?:ROOT\s+)?%?([\w.\-]+) =", line)]
        keys = {cut_key.get(view.node_of[n], "") for n in names if n in view.node_of}
        assert keys, fusion
        assert all("/s:(optimizer)/" in k for k in keys), (fusion, sorted(keys)[:3])

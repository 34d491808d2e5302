"""Before optimization, an optimizer's own scope that holds loose ops only — its step count, the
bias corrections of its learning rate, constants nothing reads — is one closed box of the
overview; after optimization, its kernels too.

Once every update is drawn in the layer it updates, what stays in ``adam`` or ``nadam`` is scalar
bookkeeping; opened, an unseen text CNN's Nadam (``benchmarks/heldout/round9.py``'s text step)
was a column of eight scalar boxes, once its unread constants made room for it.
Closing the optimized side's ``adam`` too once made room the overview spent opening a layer op by
op (``cnn_adam``'s ``logits``): it is closed once the picture's cut is fitted, so nothing else
opens in its place.

Fixtures: the ``keras_text_train`` and ``cnn_sgd`` sample captures (Keras, Adam and
SGD). Oracles: the op names, read with a regular expression: which instructions are the
optimizer's own (``adam/…``, ``sgd/…``) and the step count's parameter.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.api import render
from hloviz.render.cut import cut as cut_module

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "captures"


@pytest.mark.parametrize("capture, scope", [("keras_text_train", "adam"), ("cnn_sgd", "sgd")])
def test_the_optimizers_own_ops_are_one_box_before_optimization(capture, scope, monkeypatch):
    text = (SAMPLES / capture / "pre.hlo").read_text(encoding="utf-8")
    own = [n for n, op in re.findall(r'^\s*%?([\w.\-]+) = [^\n]*?op_name="([^"]*)"', text, re.MULTILINE)
           if re.match(rf"{scope}(_\d+)?/", op)]
    assert own  # the situation
    picture = render(str(SAMPLES / capture), stage="both", fmt="dot")
    (_t, pre), (_u, post) = picture.views
    closed = [n for n in pre.cut.nodes if n.kind == "scope" and n.name.split("_")[0] == scope]
    assert len(closed) == 1, [n.name for n in pre.cut.nodes]
    framed = [n for n in pre.cut.open() if n.kind == "scope" and n.name.split("_")[0] == scope]
    assert not framed
    # the box holds bookkeeping only: no instruction of a layer (an op name under another scope)
    ops = dict(re.findall(r'^\s*%?([\w.\-]+) = [^\n]*?op_name="([^"]*)"', text, re.MULTILINE))
    box = pre.drawn_as[closed[0].key]
    held = [n for n, b in pre.node_of.items() if b == box]
    assert held
    assert all("/" not in ops.get(n, "") or re.match(rf"{scope}(_\d+)?/", ops[n]) for n in held), held
    # after optimization, its kernels are one closed box too
    shut = [n for n in post.cut.nodes if n.kind == "scope" and n.name.split("_")[0] == scope]
    assert len(shut) == 1 and not [n for n in post.cut.open() if n.name.split("_")[0] == scope]
    # … and nothing opened in its place: drawn with nothing closed after fitting, the picture
    # is the same once the nodes closed then are closed in it
    monkeypatch.setattr(cut_module, "_shut", lambda cut: cut)
    (_t, _pre), (_u, unshut) = render(str(SAMPLES / capture), stage="both", fmt="dot").views
    again = unshut.cut
    for node in post.cut.nodes:
        if node.key in again.tree.nodes and node.key not in again.keys:
            again = again.collapse(node.key)
    assert shut[0].key not in unshut.cut.keys and again.keys == post.cut.keys

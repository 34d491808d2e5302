"""A TensorFlow step whose loss is made of gradients: tapes nested inside the one that trains.

Round 55 (``benchmarks/heldout/round55.py:pinn_step``, a physics-informed network): the loss is the
heat equation's residual ``u_t - 0.1 * u_xx``, its derivatives taken by two tapes nested inside
the outer one, whose gradient Adam applies. Two things were wrong:

* the loss's own ops (``sub``, ``mul``, ``Square``, ``Mean``, ``add``: named at the top, like a
  LossScaleOptimizer's gradient checks) read gradients, so they were called the optimizer's
  work; the outer tape differentiates them, and they write no variable;
* the outer tape's gradient of the inner tapes' work is named ``gradient_tape/gradient_tape/
  field_1/hidden1_1/…``; only one ``gradient_tape/`` was taken off, so 113 ops of the layers'
  work made a scope ``gradient_tape`` at the top (1.33 of 2.59 MFLOPs under "(top level)" in
  ``stats --by scope``, a box titled ``gradient_tape`` below the model).

Oracles, from the HLO text by regular expression: which ops the script names at the top (its
loss line), which the optimizer names (``adam/…``), and the layer each second-order gradient's op
name differentiates. Fixtures: ``data/orders/pinn_step_{pre,post}.hlo.gz`` (``hloviz dump
benchmarks/heldout/round55.py:pinn_step --arg "f32[64,1]" --arg "f32[64,1]" -o DIR``, TF 2.21).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

from .test_hand_written_tf_updates import stats_json
from .test_overview_heldout_steps import _text

HERE = Path(__file__).resolve().parent / "data" / "orders"
#: The loss line's ops, as TensorFlow names them at the top of the step.
LOSS = re.compile(r"(?:sub|mul|Square|Mean|add)(?:_\d+)?")


@pytest.mark.parametrize("stage", ["pre", "post"])
def test_a_loss_made_of_gradients_is_forward_work(stage):
    text = _text(HERE / f"pinn_step_{stage}.hlo.gz")
    # the situation: inner tapes' gradients, an outer tape's gradient of them, Adam
    assert re.search(r'op_name="gradient_tape/gradient_tape/field_1/', text)
    assert re.search(r'op_name="adam/', text)
    module = parse(text)
    tree = build_scope_tree(module, stage=stage)
    loss, update = [], []
    for inst in module.instructions():
        name = inst.metadata.op_name
        if LOSS.fullmatch(name) and inst.opcode != "constant":  # (XLA shares a 0.1 with Adam's 1 - beta_1)
            loss.append((inst.name, tree.phase_of(inst)))
        elif name.startswith("adam/") and inst.opcode != "parameter":
            update.append(tree.phase_of(inst))
    assert len(loss) >= 5 and update
    assert [n for n, phase in loss if phase != "forward"] == []
    assert set(update) == {"optimizer"}


def test_a_gradient_of_a_gradient_is_the_layers_work(tmp_path, capsys):
    pre = _text(HERE / "pinn_step_pre.hlo.gz")
    second = set(re.findall(r'op_name="gradient_tape/gradient_tape/(field_1/hidden[12]_1)/', pre))
    assert second == {"field_1/hidden1_1", "field_1/hidden2_1"}
    report = stats_json(tmp_path, capsys, "pinn_step")
    checked = 0
    for k in report["kernels"]:
        layers = {"/".join(re.sub(r"^(?:gradient_tape/)+", "", o).split("/")[:2]) for o in k["op_names"]}
        if k["op_names"] and all(o.startswith("gradient_tape/gradient_tape/field_1/hidden") for o in k["op_names"]) \
                and len(layers) == 1:
            # the op name's layer, its Keras ``_N`` re-entry suffix off (as stats writes it)
            assert k["layer"] == re.sub(r"_\d+$", "", layers.pop()) + " (backward)", (k["name"], k["op_names"])
            checked += 1
    assert checked >= 10
    rows = stats_json(tmp_path, capsys, "pinn_step", "--by", "scope")["scopes"]
    assert not [r["scope"] for r in rows if "gradient_tape" in r["scope"]]
    top = next(r for r in rows if r["scope"] == "(top level)")
    assert "optimizer" not in top["phases"], top["phases"]  # the loss at the top is no update

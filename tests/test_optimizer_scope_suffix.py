"""A Keras optimizer's scope made unique by TensorFlow (``sgd_1/…``, ``adam_1/…``: the second
optimizer built in the process) is still the optimizer: its ops are phase ``optimizer``, and a
training step's overview draws them after the backward pass (issue 33: TF's MobileNetV3 SGD and
Adam steps, whose ``sgd_1``/``adam_1`` ops read as forward work, were 3,136 and 5,154 pt wide).

Oracle outside the renderer: the op names in the saved captures' HLO text (a regex for a first
segment ``<optimizer>_<N>/``), against the optimizer names Keras gives.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hloviz.analysis.opnames import parse_op_name

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
_NUMBERED = re.compile(r'op_name="((?:sgd|adam)_\d+/[^"]+)"')


def _text(capture: str, stage: str) -> str:
    plain = CAPTURES / capture / f"{stage}.hlo"
    if plain.is_file():
        return plain.read_text(encoding="utf-8")
    return gzip.decompress((CAPTURES / capture / f"{stage}.hlo.gz").read_bytes()).decode("utf-8")


@pytest.mark.parametrize("capture", ["mobilenet_train_sgd", "mobilenet_train_adam"])
def test_a_numbered_optimizer_scope_is_the_optimizer(capture):
    names = set(_NUMBERED.findall(_text(capture, "pre")))
    assert names, "the capture's update ops sit under a numbered optimizer scope"
    assert {n for n in names if parse_op_name(n).phase != "optimizer"} == set()


def test_only_a_number_is_dropped():
    assert parse_op_name("sgd_1/mul").phase == "optimizer"
    assert parse_op_name("Adam_12/Sub_3").phase == "optimizer"
    assert parse_op_name("sgd_head/dense/MatMul").phase == "forward"
    assert parse_op_name("dense_1/BiasAdd").phase == "forward"


@pytest.mark.requires_tf
def test_every_keras_optimizer_names_an_optimizer_scope():
    # Keras 3 names an optimizer by its class in snake case, its own way: RMSprop is ``rm_sprop``,
    # AdamW ``adam_w`` (a step with either read as forward work: its update drawn as "forward ·
    # block of 13 ×6" between the model's layers). Oracle: the names Keras itself gives, for every
    # optimizer class it exports.
    import inspect

    keras = pytest.importorskip("keras")
    named = {}
    for attr in dir(keras.optimizers):
        cls = getattr(keras.optimizers, attr)
        if not (inspect.isclass(cls) and issubclass(cls, keras.optimizers.Optimizer)) or cls is keras.optimizers.Optimizer:
            continue
        try:
            opt = cls(keras.optimizers.SGD()) if attr == "LossScaleOptimizer" else cls()
        except TypeError:  # one that wraps others (MultiOptimizer): its name is checked below
            continue
        named[attr] = opt.name
    assert {"SGD", "Adam", "AdamW", "RMSprop"} <= set(named), sorted(named)
    wrong = {cls: name for cls, name in named.items()
             if parse_op_name(f"{name}/Mul", "Mul").phase != "optimizer"
             or parse_op_name(f"{name.upper()}/Mul", "Mul").phase != "optimizer"}
    assert not wrong, wrong


#: ``name`` of each optimizer class Keras 3.15.1 exports (``keras.optimizers.<Class>().name``;
#: the test above asks the installed Keras itself)
KERAS_3_NAMES = ["adadelta", "adafactor", "adagrad", "adam", "adam_w", "adamax", "ftrl", "lamb", "lion",
                 "loss_scale_optimizer", "muon", "nadam", "rm_sprop", "sgd", "schedule_free_adam_w"]


@pytest.mark.parametrize("name", KERAS_3_NAMES)
def test_keras_3_optimizer_ops_are_the_optimizers(name):
    assert parse_op_name(f"{name}/Mul_3", "Mul").phase == "optimizer"
    assert parse_op_name(f"{name}_1/Sub", "Sub").phase == "optimizer"  # the second one built


def test_an_optimizer_under_tf_control_flow_is_the_optimizers():
    # Keras's LossScaleOptimizer applies its update inside a tf.cond (only when the gradients are
    # finite): ``cond/adam/Mul_3``; ``cond`` is TensorFlow's wrapper, ``adam`` the optimizer.
    assert parse_op_name("cond/adam/Mul_3", "Mul").phase == "optimizer"
    assert parse_op_name("cond_1/sgd/Sub", "Sub").phase == "optimizer"
    assert parse_op_name("cond/dense/MatMul", "MatMul").phase == "forward"  # a model's op in a branch


_LOSS_SCALED = """HloModule loss_scaled, entry_computation_layout={(f32[4]{0}, f32[4]{0})->(f32[4]{0}, pred[])}

%both (a: pred[], b: pred[]) -> pred[] {
  %a = pred[] parameter(0)
  %b = pred[] parameter(1)
  ROOT %r = pred[] and(pred[] %a, pred[] %b)
}

ENTRY %step (arg0.1: f32[4], arg1.1: f32[4]) -> (f32[4], pred[]) {
  %arg0.1 = f32[4]{0} parameter(0), metadata={op_name="XLA_Args"}
  %arg1.1 = f32[4]{0} parameter(1), metadata={op_name="XLA_Args"}
  %mul.1 = f32[4]{0} multiply(f32[4]{0} %arg0.1, f32[4]{0} %arg1.1), metadata={op_type="Mul" op_name="model/dense/mul"}
  %grad.1 = f32[4]{0} multiply(f32[4]{0} %mul.1, f32[4]{0} %arg1.1), metadata={op_type="Mul" op_name="gradient_tape/model/dense/mul"}
  %IsFinite.1 = pred[4]{0} is-finite(f32[4]{0} %grad.1), metadata={op_type="IsFinite" op_name="IsFinite"}
  %c.1 = pred[] constant(true), metadata={op_type="All" op_name="All"}
  %All.1 = pred[] reduce(pred[4]{0} %IsFinite.1, pred[] %c.1), dimensions={0}, to_apply=%both, metadata={op_type="All" op_name="All"}
  %Sub.1 = f32[4]{0} subtract(f32[4]{0} %arg0.1, f32[4]{0} %grad.1), metadata={op_type="Sub" op_name="cond/adam/Sub"}
  ROOT %tuple.1 = (f32[4]{0}, pred[]) tuple(f32[4]{0} %Sub.1, pred[] %All.1)
}

"""


def test_tf_ops_named_at_the_top_that_read_gradients_beside_an_optimizer_are_the_optimizers():
    # The same step's check of the gradients (``IsFinite``, ``All``: names of one segment, at the
    # top) read the backward pass's values: the optimizer's work, not forward work between the
    # model's layers (an unseen mixed-precision step drew them as "forward · block of 6" ×5, the
    # picture 3,231 pt wide). Oracle: the module above, written so that they read a gradient.
    from hloviz import parse
    from hloviz.analysis.scopes import build_scope_tree

    module = parse(_LOSS_SCALED)
    tree = build_scope_tree(module, stage="pre")
    phase = {i.name: tree.phase_of(i) for i in module.instructions()}
    assert phase["grad.1"] == "backward" and phase["Sub.1"] == "optimizer" and phase["mul.1"] == "forward"
    assert phase["IsFinite.1"] == "optimizer" and phase["All.1"] == "optimizer", phase

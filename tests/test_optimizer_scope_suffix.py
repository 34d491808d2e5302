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

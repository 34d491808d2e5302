"""A scope's children stand in the order the program runs them, not in the order XLA's text
first names them (a scheduled module lists a layer's hoisted constants, or its gradient, before
the layers that run earlier).

Oracle: the layers in the order the sample models define and call them (samples/keras_models.py,
samples/keras_transformer.py, samples/keras_small.py), written out here by hand; each case is one
where the text order differs (``ordered=False`` gives another order), so a tree that is not
ordered fails."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import hloviz
from hloviz.analysis.scopes import build_scope_tree

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

CASES = [
    # keras_models.py: Sequential conv1, conv2, pool, flatten, dense1, logits (a training step:
    # the text names the logits' gradient work first)
    ("keras_cnn_train", "pre", ["cnn_1"],
     ["conv1_1", "conv2_1", "pool_1", "flatten_1", "dense1_1", "logits_1"]),
    # keras_transformer.py: embeddings, two blocks, final norm, logits head
    ("keras_transformer", "pre", ["transformer_1"],
     ["token_embedding_1", "position_embedding_1", "block_0_1", "block_1_1", "final_norm_1", "logits_1"]),
    ("keras_transformer", "post", ["transformer_1"],
     ["token_embedding_1", "position_embedding_1", "block_0_1", "block_1_1", "final_norm_1", "logits_1"]),
    # a Keras training step: the model's forward pass, the loss, then the optimizer's updates
    ("keras_small_train_step", "post", [],
     ["small_cnn_1", "sparse_categorical_crossentropy", "sgd"]),
]


def _module(capture: str, stage: str) -> hloviz.HloModule:
    path = CAPTURES / capture / f"{stage}.hlo"
    if path.exists():
        return hloviz.parse(path.read_text(encoding="utf-8"))
    with gzip.open(f"{path}.gz", "rt", encoding="utf-8") as packed:
        return hloviz.parse(packed.read())


def _children(tree, path: list[str]) -> list[str]:
    scope = tree.root
    for name in path:
        scope = scope.child(name)
        assert scope is not None, name
    return [c.name for c in scope.children if not c.name.startswith("(")]


@pytest.mark.parametrize("capture,stage,path,expected", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_children_stand_in_the_order_the_program_runs_them(capture, stage, path, expected):
    module = _module(capture, stage)
    assert _children(build_scope_tree(module), path) == expected
    # the case is one the text order alone would get wrong
    assert _children(build_scope_tree(module, ordered=False), path) != expected

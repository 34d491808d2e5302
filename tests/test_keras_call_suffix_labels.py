"""A Keras layer called twice keeps its scopes' names, and only it: its siblings still lose
TensorFlow's re-entry suffix (held-out round 76, ``match_two_heads_step``: beside a shared
``Embedding`` called for the query and the document, every layer of the model was drawn with
its suffix, ``cross_attention_1``, ``doc_tower_1``; ``samples/captures/keras_gan_train``: a
GAN's ``discriminator`` called on real and generated samples, its ``generator`` once).

Oracle: the op names' top-level segments by regular expression, without the capture's record of
its Keras layers (a module read from a file has none).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse

CAPTURE = Path(__file__).resolve().parent.parent / "samples" / "captures" / "keras_gan_train"


def test_only_the_layer_called_twice_keeps_its_suffix():
    text = (CAPTURE / "pre.hlo").read_text(encoding="utf-8")
    tops = set(re.findall(r'op_name="((?:generator|discriminator)_\d+)/', text))
    bare = Counter(re.sub(r"_\d+$", "", t) for t in tops)
    assert bare == {"generator": 1, "discriminator": 2}  # the situation
    tree = build_scope_tree(parse(text), stage="pre")
    labels = {c.name: c.label for c in tree.root.children if c.name in tops}
    expected = {t: (re.sub(r"_\d+$", "", t) if bare[re.sub(r"_\d+$", "", t)] == 1 else t) for t in tops}
    assert labels == expected

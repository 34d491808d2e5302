"""Models of held-out rounds 34 and 35 (``benchmarks/heldout/round34*.py``, ``round35*.py``), drawn
wrong before this round's fixes, read back from the SVG of ``hloviz render`` against an oracle
taken from the HLO text by regular expression.

* ``mobilenet_v1_step_pre.hlo.gz``: ``keras.applications.MobileNet`` (``alpha=0.5``) trained by SGD
with momentum. Keras' ``Dropout`` draws its mask from its seed generator's state with a
``rng-bit-generator`` and reads the bits out of its tuple; that element is drawn apart from the
tuple, and the random bits computed from it were taken for the dropout's work on the model's
values, which TensorFlow writes near the top of the program: the ``dropout`` box stood first,
above the stem, its input an arrow from the pooling at the bottom turned into a ``←`` row.
* ``plain_resnet_step_post.hlo.gz``: a residual network in plain JAX (``jax.named_scope`` blocks)
  trained by hand-written SGD with momentum, optimized. Two of its blocks are one repeat; each
  feeds the other (activations forward, gradients back), and the optimized text holds the second
  one's kernels first: the repeat was titled ``block1 ×2 (block1 … block0)``, its copies drawn
  ``block0`` first.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .test_overview_heldout_rounds26_27 import _boxes, _entry_lines
from .test_overview_heldout_steps import _render, _text

HERE = Path(__file__).resolve().parent / "data" / "orders"

pytestmark = pytest.mark.requires_dot

_LINE = re.compile(r"\s*(?:ROOT )?%?([\w.\-]+) = .*? ([\w\-]+)\((.*?)\)(?:, |$)")


def test_a_dropout_drawn_from_its_seed_stands_after_what_it_masks(tmp_path):
    path = HERE / "mobilenet_v1_step_pre.hlo.gz"
    lines = _entry_lines(_text(path))
    # the oracle, from the entry's text: each instruction's position, op name and operands
    at: dict[str, int] = {}
    scope: dict[str, str] = {}
    reads: dict[str, list[str]] = {}
    for k, line in enumerate(lines):
        found = _LINE.match(line)
        if found is None:
            continue
        name, _opcode, operands = found.groups()
        op_name = re.search(r'op_name="([^"]*)"', line)
        at[name], scope[name] = k, op_name.group(1) if op_name else ""
        reads[name] = re.findall(r"%([\w.\-]+)", operands)
    layer = re.compile(r"^mobilenet_0\.50_64_1/(\w+?)_1/")

    def layer_of(name: str) -> str | None:
        found = layer.match(scope.get(name, ""))
        return found.group(1) if found else None

    # the situation: the dropout's bits come out of a rng-bit-generator's tuple, written before
    # the stem's convolution; its mask is applied to the pooling's output, written after it
    assert any(layer_of(n) == "dropout" and re.search(r"rng-bit-generator\(", lines[at[n]]) for n in at)
    applied = [n for n in at if layer_of(n) == "dropout" and any(layer_of(r) == "global_average_pooling2d" for r in reads[n])]
    stem = min(at[n] for n in at if layer_of(n) == "conv1" and " convolution(" in lines[at[n]])
    first_bits = min(at[n] for n in at if layer_of(n) == "dropout")
    assert applied and first_bits < stem < min(at[n] for n in applied)

    boxes = _boxes(_render(path, tmp_path / "p.svg"))
    top = {texts[0]: y for y, texts, _names in boxes}
    assert "dropout" in top and "global_average_pooling2d" in top, sorted(top)
    # drawn where its work on the model's values is: below the pooling it masks, and not first
    assert top["dropout"] > top["global_average_pooling2d"], (top["dropout"], top["global_average_pooling2d"])
    model = sorted((y, texts[0]) for y, texts, _names in boxes if not texts[0].startswith(("parameter", "ROOT")))
    assert model[0][1] != "dropout", model[:3]


def test_a_repeat_of_a_steps_blocks_is_titled_in_the_forward_passs_order(tmp_path):
    path = HERE / "plain_resnet_step_post.hlo.gz"
    lines = _entry_lines(_text(path))
    # the oracle: where each block's forward convolution runs (the schedule keeps data order:
    # a block's forward convolution reads the block before it)
    first_conv: dict[str, int] = {}
    for k, line in enumerate(lines):
        found = re.search(r'op_name="jit\(plain_resnet_step\)/jvp\((block\d)\)/conv_general_dilated"', line)
        if found is not None:
            first_conv.setdefault(found.group(1), k)
    assert sorted(first_conv) == ["block0", "block1", "block2"]
    svg = _render(path, tmp_path / "p.svg")
    titles = re.findall(r">(block\d) ×(\d+) \((block\d) … (block\d)\)<", svg)
    assert titles, "no repeat of blocks drawn"
    for label, count, first, last in titles:
        assert label == first and int(count) >= 2
        # the situation: the copies feed one another both ways, and the title's first copy runs first
        assert first_conv[first] < first_conv[last], (first, last, first_conv)

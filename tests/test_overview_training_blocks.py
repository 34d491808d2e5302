"""A training step's layers, grouped by their blocks' names, stand in the order its forward pass
runs through them.

The fixture (``tests/data/orders/dropout_blocks_step.hlo``, made by ``dropout_blocks.py`` beside
it) is TensorFlow 2.21's HLO before optimization of an SGD step of six blocks named ``blk1_*`` …
``blk6_*`` the way EfficientNetV2 builds them (expand, depthwise, project, dropout, residual add).
TensorFlow writes every dropout's random bits at the top of the module, and a layer's last
instruction is its weight's update, which the optimizer makes in its own order: by the text, the
six dropout layers ran first, and the overview drew them as one box (``blk6_drop · block of 12``)
above the stem, an EfficientNetV2B0 step's first box held all 22 of its dropouts.

Oracles outside the renderer: the blocks' numbers from the op names (a regex over the HLO text),
their order the model's (the numbers its author gave them); where each is drawn, from the SVG.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.cli import main

from . import box_labels

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "dropout_blocks_step.hlo"

pytestmark = pytest.mark.requires_dot



def _blocks() -> list[int]:
    text = FIXTURE.read_text(encoding="utf-8")
    return sorted({int(n) for n in re.findall(r'op_name="[\w./]*?/blk(\d+)_', text)})


def test_the_fixture_is_a_training_step_whose_dropouts_come_first_in_the_text():
    text = FIXTURE.read_text(encoding="utf-8")
    entry = text.split("\nENTRY ", 1)[1]
    names = re.findall(r'op_name="([^"]*)"', entry)
    assert _blocks() == [1, 2, 3, 4, 5, 6]
    assert any(n.startswith("gradient_tape/") for n in names) and any(n.startswith("sgd/") for n in names)
    first_drop = next(i for i, n in enumerate(names) if re.search(r"/blk\d+_drop", n))
    first_stem = next(i for i, n in enumerate(names) if "/stem_conv" in n and not n.startswith("gradient_tape"))
    assert first_drop < first_stem  # the random bits stand at the top


def test_the_blocks_stand_in_the_forward_pass_order_and_no_box_holds_every_dropout(tmp_path, capsys):
    out = tmp_path / "pre.svg"
    main(["render", str(FIXTURE), "-o", str(out)])
    boxes = box_labels(out.read_text(encoding="utf-8"))
    labels = [label for _, label in boxes]
    assert not [b for b in labels if re.search(r"_drop\b.*block of", b)], labels
    # each block named on the page, top to bottom in its number's order (a repeat names its range)
    seen: list[int] = []
    for label in labels:
        for n in re.findall(r"blk(\d+)_", label):
            if not seen or seen[-1] != int(n):
                seen.append(int(n))
    assert seen == sorted(seen) and seen[0] == 1 and seen[-1] == 6, labels
    top = {label.split(" ")[0]: y for y, label in boxes}
    assert top["stem_conv"] < min(y for y, label in boxes if "blk1_" in label)
    assert top["head"] > max(y for y, label in boxes if "blk6_" in label)


def _entry_ops() -> dict[str, tuple[str, list[str]]]:
    """name → (op name, the names it reads) of the entry computation's instructions."""
    entry = FIXTURE.read_text(encoding="utf-8").split("\nENTRY ", 1)[1].split("\n}", 1)[0]
    ops = {}
    for line in entry.splitlines()[1:]:
        m = re.match(r"\s*(?:ROOT )?%([\w.\-]+) = .*?(?:op_name=\"([^\"]*)\")?[^\"]*$", line)
        if m:
            body = line.split(" = ", 1)[1].split("metadata=", 1)[0]
            ops[m.group(1)] = (m.group(2) or "", re.findall(r"%([\w.\-]+)", body))
    return ops


def test_a_gradient_sum_that_one_block_reads_is_drawn_in_that_block(tmp_path, capsys):
    """TensorFlow sums the gradients of a value two layers read in an ``AddN`` named by no layer
    (``AddN_13``); the layers reading the sum are one block's backward work, so the sum is drawn
    in that block's box, not as a box of its own beside the model."""
    ops = _entry_ops()
    users: dict[str, list[str]] = {}
    for name, (_, reads) in ops.items():
        for r in reads:
            users.setdefault(r, []).append(name)
    owned = []
    for name, (op_name, _) in ops.items():
        if not re.fullmatch(r"AddN_\d+", op_name):
            continue
        # the layers reading it: one block's; a sum reading it passes it on, to blocks' layers only
        direct = [u for u in users.get(name, []) if not _is_sum(ops, u)]
        passed = [v for u in users.get(name, []) if _is_sum(ops, u) for v in users.get(u, [])
                  if not _is_sum(ops, v)]
        blocks = {m.group(1) if (m := re.search(r"/blk(\d+)_", ops[u][0])) else None for u in direct}
        if len(blocks) == 1 and None not in blocks and all(re.search(r"/blk\d+_", ops[v][0]) for v in passed):
            owned.append((name, direct))
    # the sums between two blocks (each passed on to the next sum) among them
    assert sum(1 for name, _ in owned if any(_is_sum(ops, u) for u in users[name])) >= 4
    from hloviz.parser import parse_file
    from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

    # the overview as render draws it by default; which box holds each instruction
    view = draw_module(parse_file(FIXTURE), options=ViewOptions(budget=OVERVIEW_BUDGET))
    box = view.node_of
    for name, readers in owned:
        assert {box[name]} == {box[u] for u in readers}, name


def _is_sum(ops: dict[str, tuple[str, list[str]]], name: str) -> bool:
    return re.fullmatch(r"AddN_\d+", ops[name][0]) is not None


MANY = FIXTURE.parent / "many_blocks_adam_step.hlo"


def test_a_model_of_more_blocks_than_boxes_beside_a_big_optimizer_is_drawn_open(tmp_path, capsys):
    """An Adam step of 24 residual blocks ``blk1_*`` … ``blk24_*`` (``many_blocks_adam.py`` beside
    the fixture), neighbours built differently: the model's 26 children (its blocks by name,
    stem and head) do not fit the overview's boxes beside the loss and Adam's updates, and the
    model holds under nine tenths of the step, so it was drawn as one closed box. It is cut into
    blocks instead, standing in the forward pass's order."""
    text = MANY.read_text(encoding="utf-8")
    numbers = sorted({int(n) for n in re.findall(r'op_name="[\w./]*?/blk(\d+)_', text)})
    assert numbers == list(range(1, 25)) and 'op_name="adam/' in text
    out = tmp_path / "pre.svg"
    main(["render", str(MANY), "-o", str(out)])
    labels = [label for _, label in box_labels(out.read_text(encoding="utf-8"))]
    seen = [int(n) for label in labels for n in re.findall(r"blk(\d+)_", label)]
    assert len(set(seen)) >= 8 and seen == sorted(seen), labels
    assert not [b for b in labels if b.split(" ")[0] == "functional"], labels

"""A block cut at the data flow's waists is titled by its last layer (``tree.waists``), not by a
pass's scope that follows it. Before optimization, an EfficientNetB0 step trained with Adam
(held-out ``apps_round3.py``, ``b0_adam_step``; fixture ``b0_adam_step_pre.hlo.gz``) files the
optimizer's step counter into the model as ``(optimizer)``, after ``top_dropout`` and
``predictions``: the block holding the two was titled ``optimizer · block of 3``, and an
unseen EfficientNetV2B1 step's blocks 5b … 6i, head and ``predictions`` ``optimizer · block of 8``.
Read back from the JSON of ``hloviz render`` (each box's instructions, in full), the oracle the
HLO text: op names by regular expression, program order by the entry's instruction order.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hloviz.cli import main

from .test_overview_heldout_rounds26_27 import _entry_lines
from .test_overview_heldout_steps import _text

HERE = Path(__file__).resolve().parent / "data" / "orders"

pytestmark = pytest.mark.requires_dot


def test_a_block_ending_in_the_optimizers_counter_is_titled_by_its_last_layer(tmp_path):
    text = _text(HERE / "b0_adam_step_pre.hlo.gz")
    op_name: dict[str, str] = {}
    order: dict[str, int] = {}
    for k, line in enumerate(_entry_lines(text)):
        found = re.match(r'\s*(?:ROOT )?%?([\w.\-]+) = .*?op_name="([^"]*)"', line)
        if found:
            op_name[found.group(1)] = found.group(2)
            order[found.group(1)] = k
    try:
        main(["render", str(HERE / "b0_adam_step_pre.hlo.gz"), "-o", str(tmp_path / "b.json")])
    except SystemExit as stop:
        assert stop.code in (0, None)
    boxes = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["nodes"]

    def layer(name: str) -> str | None:  # a forward op of one of the model's layers
        found = re.match(r"efficientnetb0_1/(\w+?)_1/", op_name.get(name, ""))
        return found.group(1) if found else None

    holding = [b for b in boxes if any(layer(i) == "predictions" for i in b["instructions"])]
    assert len(holding) == 1
    box = holding[0]
    # the situation: the optimizer's ops in the block with the model's last layers
    assert any(op_name.get(i, "").startswith("adam/") for i in box["instructions"])
    # the oracle: of the layers whose forward ops the block holds, the one that starts last
    starts: dict[str, int] = {}
    for i in box["instructions"]:
        if (name := layer(i)) is not None and i in order:
            starts[name] = min(starts.get(name, order[i]), order[i])
    last = max(starts, key=lambda name: starts[name])
    title = str(box["rows"][0])
    assert title.startswith(f"{last} "), (title, last, starts)
    assert not title.startswith("optimizer")

"""Every parameter of the entry computation is in a box of the overview, also one folded into the
box of the op or loop reading it (a weight's ``+ kernel`` row): the explorer finds and highlights
an instruction by the box :attr:`~hloviz.render.views.View.node_of` gives it, and ``--focus`` and
``hloviz show … --find`` start from there. A folded parameter left out of that map was in no box
at all (a per-example step's six weights carried by its loops, a separable-convolution model's
batch-norm statistics, a wide-and-deep step's embedding ids).

The oracle is the module's text: the entry computation's ``parameter(N)`` instructions, read with
a regular expression. The fixtures are captures of held-out models (see each one's test)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

DATA = Path(__file__).resolve().parent / "data" / "orders"
_PARAMETER = re.compile(r"^\s*%?([\w.\-]+) = [^=]*? parameter\(\d+\)", re.MULTILINE)


def _entry_parameters(text: str) -> list[str]:
    return _PARAMETER.findall(text[text.index("\nENTRY "):])


@pytest.mark.parametrize("fixture", ["per_example_step_post.hlo", "sepconv_bn_inference.hlo",
                                     "wide_deep_step_post.hlo", "wide_deep_step.hlo"])
def test_each_entry_parameter_is_in_a_box_of_the_overview(fixture):
    text = (DATA / fixture).read_text()
    params = _entry_parameters(text)
    assert len(params) >= 5
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
    node_of = view.node_of
    assert not [p for p in params if p not in node_of]
    # folded ones share a box with what reads them: fewer boxes than parameters hold them
    assert len({node_of[p] for p in params}) < len(params)

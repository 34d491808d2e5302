"""``ROOT`` is drawn on the instruction XLA marks as root, and ``--focus`` on any instruction (the
root, an inlined constant, a get-tuple-element) draws its neighbourhood. The module is TensorFlow's
graphsage from XLA's CPU benchmarks (tests/corpus), whose root is the get-tuple-element
``XLA_Retvals.5`` of the tuple ``XLA_Retvals.4`` of the reshape ``XLA_Retvals.3``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import hloviz
from hloviz.render import draw_module, to_dot
from hloviz.render.views import ViewOptions

GRAPHSAGE = Path(__file__).resolve().parent / "corpus" / "modules" / "backends__cpu__benchmarks__hlo__graphsage_tf.hlo"


@pytest.fixture(scope="module")
def graphsage() -> hloviz.HloModule:
    return hloviz.parse_file(GRAPHSAGE)


def _roots(dot: str) -> list[str]:
    """(header, name) of every node labelled ROOT."""
    return re.findall(r"<B>ROOT ([^<]*)</B></TD></TR><TR><TD>([^<]*)<", dot)


def test_root_is_drawn_on_xlas_root(graphsage):
    assert graphsage.entry.root.name == "XLA_Retvals.5"
    view = draw_module(graphsage)
    assert _roots(to_dot(view.scene)) == [("get-tuple-element", "XLA_Retvals.5")]
    # the tuple and the reshape it returns are drawn too, as the text has them
    assert {"XLA_Retvals.3", "XLA_Retvals.4", "XLA_Retvals.5"} <= set(view.node_of)


def test_focus_on_the_root_draws_its_neighbourhood(graphsage):
    view = draw_module(graphsage, options=ViewOptions(focus="XLA_Retvals.5", radius=3))
    assert set(view.node_of) == {"XLA_Retvals.5", "XLA_Retvals.4", "XLA_Retvals.3", "Sigmoid.1"}
    assert _roots(to_dot(view.scene)) == [("get-tuple-element", "XLA_Retvals.5")]
    wider = draw_module(graphsage, options=ViewOptions(focus="XLA_Retvals.5", radius=6))
    assert len(wider.node_of) > len(view.node_of)


def test_focus_on_an_inlined_constant_draws_it(graphsage):
    # mul_2.1 is a small constant, normally written into its users' labels instead of drawn
    assert "mul_2.1" not in draw_module(graphsage).node_of
    view = draw_module(graphsage, options=ViewOptions(focus="mul_2.1", radius=1))
    assert {"mul_2.1", "shape.22", "shape.28"} <= set(view.node_of)
    assert "mul_2.1" in to_dot(view.scene)

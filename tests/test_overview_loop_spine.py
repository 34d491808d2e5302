"""A greedy decoder (held-out round 14: a Keras GRU cell run for 12 steps in a
``tf.while_loop``, inference) is a loop whose init tuple reads a dozen parameters and whose
results thirteen instructions read. The arrows of such nodes were written as ``←``/``→`` rows
(TensorBoard's rule for nodes with far more arrows than the rest), which in an overview took
the picture's spine: the loop, its init tuple, the transpose of its results and the output
stood in one row with the parameters in a column beside them. An overview keeps a hub's arrows:
its rows are program order.

The oracle: the entry's instruction order, read from the module's text (parameters first, the
init tuple, the loop, the result's transpose, the ROOT), against the boxes' heights in the SVG
Graphviz drew. The fixture is the pre-optimization module of
``benchmarks/heldout/round14.py:greedy_decode`` (TensorFlow 2.21).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.cli import main

from . import box_labels

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "greedy_decode.hlo"

pytestmark = pytest.mark.requires_dot


def test_a_loops_picture_runs_from_its_parameters_down_to_its_output(tmp_path):
    text = FIXTURE.read_text()
    entry = text[text.index("\nENTRY "):]
    loop = re.search(r"%(while\.\d+) = .* while\(", entry)
    root = re.search(r"ROOT %([\w.]+) = ", entry)
    assert loop is not None and root is not None and entry.count(" parameter(") >= 6
    out = tmp_path / "x.svg"
    main(["render", str(FIXTURE), "-o", str(out)])
    boxes = box_labels(out.read_text(encoding="utf-8"))
    params = [y for y, label in boxes if label.startswith("parameter ")]
    assert len(params) >= 6
    whiles = [y for y, label in boxes if label == "while"]
    roots = [y for y, label in boxes if label.startswith("ROOT ")]
    assert whiles and roots
    assert max(params) < min(whiles) < min(roots), boxes

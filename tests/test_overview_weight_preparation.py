"""A layer's box stands where the layer's work runs, not where XLA scheduled its weights'
preparation: an inference function draws no arrow against program order.

The fixture (``tests/data/orders/sepconv_bn_inference.hlo``) is TensorFlow 2.21's optimized HLO
of a Keras model of eight SeparableConv2D → BatchNormalization → ReLU layers (inference, CPU),
whose schedule runs each batch norm's ``Rsqrt`` of its moving variance (a fusion reading only
parameters) long before the fusion applying it to its convolution's output. Drawn by the median
of those two, each batch norm stood above its convolution and the optimized column of Xception
ran as a staircase with its arrows back up.

Oracles outside the renderer: from the HLO text (regexes), that the function holds no backward
work (no op name of a gradient), so no arrow can rightly run back; which instruction reads the
input parameter and which is the ROOT; where they are drawn, from the SVG's geometry.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.cli import main

FIXTURE = Path(__file__).resolve().parent / "data" / "orders" / "sepconv_bn_inference.hlo"

pytestmark = pytest.mark.requires_dot

_NODE = re.compile(r'<g id="node\d+" class="node">.*?xlink:title="([^"]*)".*?(?:points|d)="([^"]+)"', re.DOTALL)
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _entry(text: str) -> list[str]:
    return text.split("\nENTRY ", 1)[1].splitlines()[1:]


def _tops(svg: str) -> list[tuple[float, str]]:
    """(top y, tooltip) of every drawn node."""
    out = []
    for title, points in _NODE.findall(svg):
        ys = [float(v) for v in _NUM.findall(points)][1::2]
        out.append((min(ys), title))
    return out


def test_the_fixture_is_an_inference_function():
    text = FIXTURE.read_text(encoding="utf-8")
    names = re.findall(r'op_name="([^"]*)"', text)
    assert len({n.split("/")[1] for n in names if n.count("/") > 1 and "/bn" in "/" + n.split("/")[1][:2]}) >= 8
    assert not [n for n in names if re.search(r"(?i)grad", n)]


def test_no_arrow_runs_back_and_the_input_is_drawn_first(tmp_path, capsys):
    text = FIXTURE.read_text(encoding="utf-8")
    lines = _entry(text)
    # the input: the entry's parameter(0); its first reader in the schedule; the ROOT
    x = next(m.group(1) for m in (re.match(r"\s*%([\w.\-]+) = \S+ parameter\(0\)", ln) for ln in lines) if m)
    reader = next(re.match(r"\s*%([\w.\-]+) =", ln).group(1) for ln in lines
                  if re.search(rf"[(,] ?%{re.escape(x)}[,)]", ln))
    root = next(re.match(r"\s*ROOT %([\w.\-]+) =", ln).group(1) for ln in lines if ln.lstrip().startswith("ROOT"))
    out = tmp_path / "p.svg"
    assert main(["render", str(FIXTURE), "-o", str(out)]) in (None, 0)
    notes = capsys.readouterr().err
    assert "against program order" not in notes
    tops = _tops(out.read_text(encoding="utf-8"))
    first = min(y for y, title in tops if reader in title or f"({x} " in title or title.startswith(f"{x} ="))
    last = max(y for y, title in tops if title.startswith(f"{root} ="))
    assert last == max(y for y, _ in tops)
    # top to bottom, the layers' numbers (from the op names each box's tooltip lists) never go
    # back: layer k's boxes all stand above layer k+1's
    numbered = sorted((y, min(int(n) for n in re.findall(r"functional_1/(?:sep|bn|relu)(\d+)_1/", title)))
                      for y, title in tops if re.search(r"functional_1/(?:sep|bn|relu)\d+_1/", title))
    assert len(numbered) >= 8
    layers = [k for _, k in numbered]
    assert layers == sorted(layers), numbered
    assert all(y >= first for y, k in numbered if k > 1)

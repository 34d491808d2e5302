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


def _hoisted_rng_module(n: int = 30) -> str:
    """A model as TensorFlow emits a dropout layer's random bits: each ``drop<i>`` draws them
    from its seed parameter and a broadcast constant at the top of the entry, long before the
    ``multiply`` that applies them to layer ``i``'s input; ``act<i>`` follows it."""
    lines = ["HloModule hoisted_rng", "",
             "ENTRY %main (x: f32[8]" + "".join(f", s{i}: f32[8]" for i in range(1, n + 1)) + ") -> f32[8] {",
             '  %x = f32[8] parameter(0), metadata={op_name="XLA_Args"}']
    lines += [f'  %s{i} = f32[8] parameter({i}), metadata={{op_name="XLA_Args"}}' for i in range(1, n + 1)]
    lines.append("  %c = f32[] constant(2)")
    for i in range(1, n + 1):
        lines += [f"  %cb{i} = f32[8] broadcast(f32[] %c), dimensions={{}}",
                  f'  %ra{i} = f32[8] multiply(f32[8] %s{i}, f32[8] %cb{i}), metadata={{op_name="m/drop{i}/rng/mul"}}',
                  f'  %rb{i} = f32[8] add(f32[8] %ra{i}, f32[8] %cb{i}), metadata={{op_name="m/drop{i}/rng/add"}}']
    h = "x"
    for i in range(1, n + 1):
        root = "ROOT " if i == n else ""
        lines += [f'  %d{i} = f32[8] multiply(f32[8] %{h}, f32[8] %rb{i}), metadata={{op_name="m/drop{i}/mul"}}',
                  f'  {root}%h{i} = f32[8] tanh(f32[8] %d{i}), metadata={{op_name="m/act{i}/Tanh"}}']
        h = f"h{i}"
    return "\n".join([*lines, "}", ""])


def test_random_bits_drawn_from_a_seed_and_broadcast_literals_are_preparation(tmp_path, capsys):
    """An op reading a broadcast constant (a literal carried to a shape) is preparation as much
    as one reading the constant itself: the dropout layers' boxes stand where their masks are
    applied, in layer order, and no arrow runs back (the module has no backward pass: its
    generator above writes none; 6 ran back when such ops counted as work)."""
    path = tmp_path / "hoisted.hlo"
    path.write_text(_hoisted_rng_module(), encoding="utf-8")
    out = tmp_path / "p.svg"
    assert main(["render", str(path), "-o", str(out)]) in (None, 0)
    assert "against program order" not in capsys.readouterr().err
    numbered = sorted((y, min(int(n) for n in re.findall(r"m/(?:drop|act)(\d+)/", title)))
                      for y, title in _tops(out.read_text(encoding="utf-8")) if re.search(r"m/(?:drop|act)\d+/", title))
    layers = [k for _, k in numbered]
    assert len(layers) >= 10 and layers == sorted(layers), numbered

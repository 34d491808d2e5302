"""After optimization XLA fuses a layer's work into another layer's kernel and may leave of it
only a bitcast of that kernel's output, named after the layer. Each such bitcast was a scope of
its own: a box of one ``bitcast`` (``re_lu_3``, ``expanded_conv_2_add`` …) or a ``… · block of
6`` of them, and, standing apart from the data flow, they kept the structure pass from putting
the layers in flow order: the optimized column of a MobileNetV3Small training step (sample
``mobilenet_train_sgd``) opened with ``dropout · block of 18`` (its stem, its first blocks and
its head) above blocks in reverse order. Now a bitcast alone in its scope is drawn with the
kernel whose bytes it relabels, or with the one instruction reading it where that kernel is
drawn in no layer (``tree.bookkeeping.lone_relabels``).

With the three boxes of DenseNet121's lone ``pool*_relu`` bitcasts gone, its optimized overview
had room to open ``avg_pool``: its one fusion and the weights it reads, a frame around one box.
A scope of one working leaf and its parameters is drawn closed in every overview now
(``tree.phases.close_one_kernel_scopes``; it was, in training steps).

Read back from ``hloviz render --stage post`` (the JSON's boxes, each with every instruction;
the SVG's boxes top to bottom), the oracle the HLO text by regular expression: which layers hold
nothing but bitcasts at the top level after optimization, and the order of the forward
convolutions before it.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from hloviz.cli import main

from . import box_labels, drawn_boxes

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
CAPTURE = CAPTURES / "mobilenet_train_sgd"

pytestmark = pytest.mark.requires_dot

_LINE = re.compile(r'^\s*(?:ROOT )?%?([\w.\-]+) = \S+ ([\w\-]+)\(.*?op_name="([^"]*)"', re.MULTILINE)
_OPERAND = re.compile(r'^\s*(?:ROOT )?%?([\w.\-]+) = \S+ ([\w\-]+)\(%?([\w.\-]*).*?op_name="([^"]*)"', re.MULTILINE)


def _entry(name: str, capture: Path = CAPTURE) -> str:
    with gzip.open(capture / name, "rt", encoding="utf-8") as f:
        text = f.read()
    return text.split("\nENTRY ", 1)[1].split("\n}", 1)[0]


def _render(out: Path, capture: Path = CAPTURE) -> None:
    try:
        main(["render", str(capture), "--stage", "post", "-o", str(out)])
    except SystemExit as stop:
        assert stop.code in (0, None)


def _layer(op_name: str) -> str | None:
    found = re.match(r"MobileNetV3Small_1/(\w+?)_1/", op_name)
    return found.group(1) if found else None


def test_a_layers_lone_bitcast_is_no_box_of_its_own(tmp_path):
    # the oracle: layers of which the entry holds a kernel and a bitcast of its output alone
    # (``re_lu_3``: ``broadcast_maximum_fusion.6`` and ``bitcast.377``); the kernel, holding
    # other layers' work, is drawn with theirs
    held: dict[str, list[tuple[str, str, str]]] = {}
    for name, opcode, operand, op_name in _OPERAND.findall(_entry("post.hlo.gz")):
        if (layer := _layer(op_name)) is not None:
            held.setdefault(layer, []).append((name, opcode, operand))
    lone = {b[0]: f[0] for rows in held.values() if len(rows) == 2
            for f, b in [sorted(rows, key=lambda r: r[1] == "bitcast")]
            if f[1] == "fusion" and b[1] == "bitcast" and b[2] == f[0]}
    assert len(lone) >= 6  # the situation: re_lu_3, expanded_conv_2_add, …
    _render(tmp_path / "p.json")
    boxes = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))["nodes"]
    assert not [b["rows"][0] for b in boxes if b["instructions"] and set(b["instructions"]) <= set(lone)]
    entry = _entry("post.hlo.gz")
    for bitcast, kernel in lone.items():  # each drawn with the kernel whose output it relabels, or its reader
        readers = re.findall(rf"^\s*(?:ROOT )?%?([\w.\-]+) = [^\n]*?[(, ]%?{re.escape(bitcast)}[,)]", entry, re.MULTILINE)
        box = [b for b in boxes if bitcast in b["instructions"]]
        assert len(box) == 1 and (kernel in box[0]["instructions"]
                                  or (len(readers) == 1 and readers[0] in box[0]["instructions"])), bitcast


def test_the_optimized_column_runs_in_the_forward_passs_order(tmp_path):
    # the oracle: the layers' forward convolutions, in the order the unoptimized program runs them
    convs: list[str] = []
    for _name, opcode, op_name in _LINE.findall(_entry("pre.hlo.gz")):
        if opcode == "convolution" and not op_name.startswith("gradient_tape/") and (layer := _layer(op_name)):
            convs.append(layer) if layer not in convs else None
    assert convs[0] == "conv" and len(convs) > 20
    _render(tmp_path / "p.svg")
    titled = [label.split(" · ")[0] for _y, label in box_labels((tmp_path / "p.svg").read_text(encoding="utf-8"))]
    drawn = [convs.index(t) for t in titled if t in convs]
    assert len(drawn) >= 4 and drawn == sorted(drawn), titled
    assert titled.index("dropout") > max(titled.index(t) for t in titled if t in convs), titled  # the head last


def test_a_layer_of_one_kernel_is_a_box_in_an_inference_overview(tmp_path):
    capture = CAPTURES / "densenet121"
    # the situation: the one instruction of the optimized entry named in ``avg_pool``, a fusion
    named = re.findall(r'^\s*%?([\w.]+) = \S+ (\w+)\([^\n]*op_name="densenet121_1/avg_pool_1/',
                       _entry("post.hlo.gz", capture), re.MULTILINE)
    assert named == [("multiply_bitcast_fusion", "fusion")]
    _render(tmp_path / "d.svg", capture)
    svg = (tmp_path / "d.svg").read_text(encoding="utf-8")
    frames = re.findall(r'<g id="clust\d+" class="cluster">.*?<text[^>]*>([^<]*)</text>', svg, re.DOTALL)
    assert "avg_pool" not in [f.strip() for f in frames], frames
    assert [label for _y, label in box_labels(svg)].count("avg_pool") == 1


@pytest.mark.parametrize("name", ["keras_lstm", "tf_scan"])
def test_the_output_stays_the_last_box_of_its_own(tmp_path, name):
    """Neither rule takes the module's output into a box: a Keras LSTM's output is a bitcast alone
    in ``TensorArrayV2Stack``; a ``tf.scan``'s, its scope's one instruction."""
    text = (CAPTURES / name / "post.hlo").read_text(encoding="utf-8")
    root = re.search(r"^\s*ROOT %?([\w.\-]+) = \S+ (\w[\w\-]*)\(", text.split("\nENTRY ", 1)[1], re.MULTILINE)
    assert root is not None and root.group(2) in ("bitcast", "get-tuple-element")
    _render(tmp_path / "o.json", CAPTURES / name)
    boxes = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))["nodes"]
    holding = [b for b in boxes if root.group(1) in b["instructions"]]
    assert len(holding) == 1 and holding[0]["instructions"] == [root.group(1)], holding
    assert any(str(row).startswith("ROOT ") for row in holding[0]["rows"][:2]), holding  # (under its scope's name)


_OUTPUT_BITCAST = """HloModule m, is_scheduled=true

%fused_exp (p: f32[4,4]) -> f32[4,4] {
  %p = f32[4,4]{1,0} parameter(0)
  ROOT %e = f32[4,4]{1,0} exponential(%p), metadata={op_name="net/dense/Exp"}
}

%fused_mul (q: f32[4,4]) -> f32[4,4] {
  %q = f32[4,4]{1,0} parameter(0)
  ROOT %m = f32[4,4]{1,0} multiply(%q, %q), metadata={op_name="net/square/Mul"}
}

ENTRY %main (a: f32[4,4]) -> f32[16] {
  %a = f32[4,4]{1,0} parameter(0), metadata={op_name="XLA_Args"}
  %f = f32[4,4]{1,0} fusion(%a), kind=kLoop, calls=%fused_exp, metadata={op_name="net/dense/Exp"}
  %g = f32[4,4]{1,0} fusion(%f), kind=kLoop, calls=%fused_mul, metadata={op_name="net/square/Mul"}
  ROOT %b = f32[16]{0} bitcast(%g), metadata={op_name="net/out/Reshape"}
}
"""


def test_an_output_bitcast_keeps_its_layers_name(tmp_path):
    """The output, a bitcast alone in its layer (``net/out``, made here), is not moved to the
    layer it relabels: its box says which layer hands the result out."""
    boxes = drawn_boxes(_OUTPUT_BITCAST, tmp_path)
    [box] = [b for b in boxes if "b" in b["instructions"]]
    assert box["instructions"] == ["b"] and [str(r) for r in box["rows"][:2]] == ["out", "ROOT bitcast"], box

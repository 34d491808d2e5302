"""In the overview of a model whose op names name its parts, a kernel is the smallest box.

A small model fits the overview's budget with its fusions opened, and the cut opened them: a
Flax MLP's optimized column (sample ``flax_forward``) stood as frames of one or two instructions
among its layers, its weights as parameter boxes beside them (their reader inside a fusion), its
first kernel halfway down. Now an overview keeps fusions closed where op names name a part of the
model (``render.cut.cut.overview_closed``), and a closed fusion's box names the constant a fold
made inside it; where nothing is named but the traced function (``jit(narrow)``), the fusion is
still drawn open, its ops inside: which ops went into one kernel is that picture's point. And
a box standing for a scope and the one scope it holds is titled by the path inside JAX's traced
function, every name there the author's.

Oracles: the HLO text by regular expression (the entry's fusions in program order, the
constants inside fused computations, the op names), read back from ``hloviz render``'s JSON and
SVG.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hloviz.cli import main

from . import drawn_boxes

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

pytestmark = pytest.mark.requires_dot


def _render(capture: str, out: Path, *args: str) -> str:
    try:
        main(["render", str(CAPTURES / capture), *args, "-o", str(out)])
    except SystemExit as stop:
        assert stop.code in (0, None)
    return out.read_text(encoding="utf-8")


def _entry(text: str) -> str:
    return text.split("\nENTRY ", 1)[1].split("\n}", 1)[0]


def test_a_flax_models_kernels_are_closed_boxes_in_program_order(tmp_path):
    text = (CAPTURES / "flax_forward" / "post.hlo").read_text(encoding="utf-8")
    assert re.search(r'op_name="jit\(forward\)/Net/Dense_0/', text)  # the situation: named parts
    fusions = re.findall(r"^\s*(?:ROOT )?%?([\w.\-]+) = [^\n]*? fusion\(", _entry(text), re.MULTILINE)
    fused = set(re.findall(r"^\s*(?:ROOT )?%?([\w.\-]+) = ",
                           "\n".join(c for c in re.split(r"\n(?=%|ENTRY )", text) if c.startswith("%fused")), re.MULTILINE))
    assert len(fusions) >= 8 and fused
    picture = json.loads(_render("flax_forward", tmp_path / "p.json", "--stage", "post"))
    boxes = picture["nodes"]
    # every fusion of the entry is one box, and no box holds an instruction of a fused
    # computation without the fusion that runs it
    holding = {f: [b for b in boxes if f in b["instructions"]] for f in fusions}
    assert all(len(held) == 1 for held in holding.values()), holding
    assert not [b["rows"][:2] for b in boxes if set(b["instructions"]) & fused
                and not set(b["instructions"]) & set(fusions)]
    assert not [c["rows"][0] for c in picture["clusters"] if c["rows"][0].startswith("fusion ")]
    # weights are no boxes of their own: every parameter box is gone into its reader's
    params = re.findall(r"^\s*%?([\w.\-]+) = [^\n]*? parameter\(", _entry(text), re.MULTILINE)
    assert not [b["rows"][0] for b in boxes if set(b["instructions"]) <= set(params)]
    # and the kernels run down the column in the entry's order (the SVG's boxes, top to bottom)
    svg = _render("flax_forward", tmp_path / "p.svg", "--stage", "post")
    tops = {}
    for node in re.finditer(r'<g id="node\d+" class="node">(.*?)</g>', svg, re.DOTALL):
        y = min(float(v) for v in re.findall(r'<text [^>]*?y="([-\d.]+)"', node.group(1)))
        for name in fusions:
            if re.search(rf">{re.escape(name)}<", node.group(1)):
                tops[name] = y
    drawn = [f for f in fusions if f in tops]
    assert len(drawn) >= 6 and [tops[f] for f in drawn] == sorted(tops[f] for f in drawn), tops


def test_a_closed_kernels_box_names_the_constant_folded_inside_it(tmp_path):
    text = (CAPTURES / "flax_forward" / "post.hlo").read_text(encoding="utf-8")
    # the oracle: a constant inside a fused computation whose value the unoptimized module does
    # not hold (XLA computed 1/256 for a mean: the pre-optimization module divides by 256)
    pre = (CAPTURES / "flax_forward" / "pre.hlo").read_text(encoding="utf-8")
    inside = re.findall(r"^\s*%?(constant[\w.\-]*) = f32\[\] constant\(([\d.e\-]+)\)",
                        "\n".join(c for c in re.split(r"\n(?=%|ENTRY )", text) if c.startswith("%fused")), re.MULTILINE)
    made = [(name, value) for name, value in inside if f"constant({value})" not in pre]
    assert made == [("constant.8", "0.00390625")]
    svg = _render("flax_forward", tmp_path / "p.svg", "--stage", "both")  # (what was folded: both modules)
    assert ">constant.8 = 0.00390625 · folded by XLA<" in svg


def test_a_function_with_no_named_part_still_opens_its_fusions(tmp_path):
    text = (CAPTURES / "widen_64" / "post.hlo").read_text(encoding="utf-8")
    names = set(re.findall(r'op_name="([^"]*)"', text))
    assert names and not [n for n in names if n.count("/") > 1 or (n.count("/") == 1 and not n.startswith("jit("))]
    picture = json.loads(_render("widen_64", tmp_path / "w.json", "--stage", "post"))
    assert [c["rows"][0] for c in picture["clusters"] if c["rows"][0].startswith("fusion ")]


def test_a_jax_scopes_title_keeps_its_path(tmp_path):
    """Where a scope holds one other and nothing else, one box stands for both. Inside JAX's
    traced function every name is the author's (a function it traced, ``jit(block)``), so the
    box is titled by the path (``block/optimizer``: the block's part of the optimizer, beside the
    ``optimizer`` box of the rest); a TensorFlow layer's box by the layer alone (its inner name is
    TensorFlow's: ``test_render_overview``'s ``batchnorm``)."""
    text = (CAPTURES / "jax_resmlp_train" / "pre.hlo").read_text(encoding="utf-8")
    assert re.search(r'op_name="jit\(resmlp_step\)/(?:\w+\()*jit\(block\)', text)
    svg = _render("jax_resmlp_train", tmp_path / "r.svg", "--stage", "both")
    before = svg[:svg.index(">after optimization<")]
    titles = re.findall(r'<text [^>]*font-weight="bold"[^>]*>([^<]*)</text>', before)
    assert [t for t in titles if t.startswith("block/")], titles


def test_a_layers_box_says_what_was_folded_in_it(tmp_path):
    """A Keras GlobalAveragePooling2D divides by the number of pixels, which TensorFlow computes
    from the shape (16 × 16); XLA folds that into one constant, 1/256. The layer's box before
    optimization says its ops were folded and into which constant (issue 33: each box says
    what was folded); after optimization, the box holding that constant names it. Oracles: the
    HLO texts by regex, and arithmetic (the constant is the reciprocal of the product of the
    integer constants the unoptimized layer multiplies)."""
    post = (CAPTURES / "keras_autonamed" / "post.hlo").read_text(encoding="utf-8")
    pre = (CAPTURES / "keras_autonamed" / "pre.hlo").read_text(encoding="utf-8")
    made = re.search(r'%(constant[\w.]*) = f32\[\] constant\(([\d.]+)\), metadata=\{op_type="Mean" '
                     r'op_name="functional_1/global_average_pooling2d_1/Mean"', post)
    assert made is not None
    sides = [int(v) for v in re.findall(r'= s32\[\] constant\((\d+)\), metadata=\{op_type="Mean" '
                                        r'op_name="functional_1/global_average_pooling2d_1/Mean"', pre)]
    assert len(sides) == 2 and float(made.group(2)) == 1 / (sides[0] * sides[1])
    svg = _render("keras_autonamed", tmp_path / "k.svg", "--stage", "both")
    split = svg.index(">after optimization<")
    box = next(m.group(1) for m in re.finditer(r'<g id="node\d+" class="node">(.*?)</g>', svg[:split], re.DOTALL)
               if ">global_average_pooling2d<" in m.group(1))
    assert re.search(rf">\d+ ops folded → {re.escape(made.group(1))} = {re.escape(made.group(2))}<", box), box
    assert f">{made.group(1)} = {made.group(2)} · folded by XLA<" in svg[split:]


_READ_TWICE = """HloModule m, is_scheduled=true

ENTRY %main (x: f32[4,8], w: f32[8]) -> f32[4,8] {
  %x = f32[4,8]{1,0} parameter(0), metadata={op_name="x"}
  %w = f32[8]{0} parameter(1), metadata={op_name="net/layer/w"}
  %wb = f32[4,8]{1,0} broadcast(%w), dimensions={1}, metadata={op_name="net/layer/add"}
  %a = f32[4,8]{1,0} add(%x, %wb), metadata={op_name="net/layer/add"}
  %e = f32[4,8]{1,0} exponential(%a), metadata={op_name="net/layer/exp"}
  %wc = f32[4,8]{1,0} broadcast(%w), dimensions={1}, metadata={op_name="net/layer/mul"}
  %m = f32[4,8]{1,0} multiply(%e, %wc), metadata={op_name="net/layer/mul"}
  %s = f32[4,8]{1,0} subtract(%m, %x), metadata={op_name="net/layer/sub"}
  ROOT %t = f32[4,8]{1,0} tanh(%s), metadata={op_name="net/out/tanh"}
}
"""


def test_a_weight_read_twice_in_its_layer_folds_and_the_input_stays(tmp_path):
    """A weight (its name a path: ``net/layer/w``) that two ops of its layer read is folded into
    the first of them and named on the other (a Keras classifier's ``classifier/bias``, which XLA
    duplicates into the softmax's two kernels, stood as a box between them); the module's input
    (``x``), read twice in that layer too, stays the box the column starts with."""
    boxes = drawn_boxes(_READ_TWICE, tmp_path)
    assert [b["instructions"] for b in boxes if "x" in b["instructions"]] == [["x"]]
    assert not [b for b in boxes if b["instructions"] == ["w"]]
    named = [b for b in boxes if any(str(r).startswith("+ ") and "layer/w" in str(r) for r in b["rows"])]
    assert len(named) == 2, boxes  # its first reader's box holds it; the other names it
    assert sum("w" in b["instructions"] for b in boxes) == 1


def test_a_keras_classifiers_bias_is_no_box_between_its_kernels(tmp_path):
    """The situation in a sample: XLA duplicated the classifier's bias add into the two kernels
    of its softmax; the bias (parameter number from capture.json, its readers from the HLO
    text) is folded, named on both."""
    info = json.loads((CAPTURES / "keras_small_classify" / "capture.json").read_text(encoding="utf-8"))
    number = next(k for k, v in info["parameter_names"].items() if v.endswith("classifier/bias"))
    entry = _entry((CAPTURES / "keras_small_classify" / "post.hlo").read_text(encoding="utf-8"))
    param = re.search(rf"^\s*%?([\w.\-]+) = \S+ parameter\({number}\)", entry, re.MULTILINE)
    assert param is not None
    readers = re.findall(rf"^\s*(?:ROOT )?%?([\w.\-]+) = [^\n]*?[(, ]%?{re.escape(param.group(1))}[,)]", entry, re.MULTILINE)
    assert len(readers) >= 2
    picture = json.loads(_render("keras_small_classify", tmp_path / "k.json", "--stage", "both"))
    boxes = picture["columns"][1]["picture"]["nodes"]
    assert not [b for b in boxes if b["instructions"] == [param.group(1)]]
    for r in readers:
        [box] = [b for b in boxes if r in b["instructions"]]
        assert any(str(row) == "+ classifier/bias" for row in box["rows"]), box["rows"]


def test_a_loops_one_kernel_condition_stays_in_its_loops_box(tmp_path):
    """A Keras LSTM's optimized loop: its condition is one fusion (the counter's compare), its
    body the cell's matrix products and kernels. The overview opened the condition, the cheaper,
    and left the body closed for want of boxes; now the condition stays in the loop's box, which
    names it, and the body's kernels are drawn. Oracle: the computations of the HLO text."""
    text = (CAPTURES / "keras_lstm" / "post.hlo").read_text(encoding="utf-8")
    loop = re.search(r" while\(%?[\w.\-]+\), condition=%?([\w.\-]+), body=%?([\w.\-]+)", text)
    assert loop is not None
    comps = {c.split(" ", 1)[0].lstrip("%"): c for c in re.split(r"\n(?=%|ENTRY )", text)}
    cond = re.findall(r"^\s*(?:ROOT )?%?[\w.\-]+ = \S+ ([\w\-]+)\(", comps[loop.group(1)], re.MULTILINE)
    assert [op for op in cond if op not in ("parameter", "get-tuple-element")] == ["fusion"]
    dots = re.findall(r"^\s*%?([\w.\-]+) = \S+ dot\(", comps[loop.group(2)], re.MULTILINE)
    assert len(dots) == 2
    picture = json.loads(_render("keras_lstm", tmp_path / "l.json", "--stage", "post"))
    frames = [c["rows"][0] for c in picture["clusters"]]
    assert not [f for f in frames if f.startswith("condition of")], frames
    assert [f for f in frames if f.startswith("body of")], frames
    assert all(any(b["instructions"] == [d] for b in picture["nodes"]) for d in dots)

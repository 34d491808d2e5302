"""``hloviz render CAPTURE --stage both -o x.svg`` draws the overview (issue 33): the model's
blocks in program order on one page, repeats folded ``×N``; ``--budget 300`` still draws the
detailed picture.

Oracles outside the renderer: block names and how many copies a repeat has from regexes over the
``op_name`` metadata of the HLO text, program order from the entry computation's instruction
order in that text, sizes from the SVG's ``viewBox`` and its boxes' outlines (regexes here)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hloviz.cli import main

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
_VIEWBOX = re.compile(r'viewBox="0\.00 0\.00 ([\d.]+) ([\d.]+)"')
_PART = re.compile(r'<g class="part" transform="translate\(([-\d.]+) ([-\d.]+)\)">')
_NODE = re.compile(r'<g id="node\d+" class="node">(.*?)</g>', re.DOTALL)
_OUTLINE = re.compile(r'<(?:polygon|path)[^>]*?(?:points|d)="([^"]+)"')
_BOLD = re.compile(r'<text [^>]*?y="([-\d.]+)"[^>]*font-weight="bold"[^>]*>([^<]*)</text>')

pytestmark = pytest.mark.requires_dot


def _hlo(capture: str, stage: str = "pre") -> str:
    return gzip.decompress((CAPTURES / capture / f"{stage}.hlo.gz").read_bytes()).decode("utf-8")


def _entry(text: str) -> str:
    """The entry computation's body (from ``ENTRY`` to its closing brace)."""
    start = text.index("\nENTRY ")
    return text[start:text.index("\n}", start)]


def _render(capture: str, out: Path, *args: str) -> str:
    assert main(["render", str(CAPTURES / capture), "--stage", "both", *args, "-o", str(out)]) in (0, None)
    return out.read_text(encoding="utf-8")


def _boxes_per_part(svg: str) -> list[int]:
    """How many outlined boxes each laid-out part (column, or part of a wrapped column) holds."""
    starts = [0] + [m.start() for m in _PART.finditer(svg)]
    counts = [0] * len(starts)
    for node in _NODE.finditer(svg):
        if _OUTLINE.search(node.group(1)) is None:
            continue  # a "part k of n" title: text only
        counts[max(i for i, s in enumerate(starts) if s <= node.start())] += 1
    return [c for c in counts if c]


@pytest.fixture(scope="module")
def inception(tmp_path_factory) -> str:
    return _render("inception_v3", tmp_path_factory.mktemp("overview") / "x.svg")


def test_the_overview_of_inception_v3_is_one_page_of_at_most_40_boxes_a_column(inception):
    """Longer side ≤ 2,500 pt, ≤ 40 boxes in each laid-out column (the SVG's own geometry)."""
    box = _VIEWBOX.search(inception)
    assert box is not None
    width, height = float(box.group(1)), float(box.group(2))
    assert max(width, height) <= 2_500, (width, height)  # the default was 19,080 × 19,091 pt
    per_part = _boxes_per_part(inception)
    assert per_part and max(per_part) <= 40, per_part


def test_every_label_of_the_overview_is_at_least_10_pt(inception):
    sizes = [float(s) for s in re.findall(r'font-size="([\d.]+)"', inception)]
    assert sizes and min(sizes) >= 10, sorted(set(sizes))  # the detailed picture writes kinds rows at 9 pt


def test_every_inception_block_is_in_the_overview_in_program_order(inception):
    """``mixed0`` … ``mixed10`` (the concatenations that end InceptionV3's blocks, named in the
    op_names) each appear in the before column, alone or inside a repeat's range
    (``mixed0 ×3 (mixed0 … mixed2)``), top to bottom in the order the entry computation runs
    them."""
    entry = _entry(_hlo("inception_v3"))
    first: dict[int, int] = {}
    for m in re.finditer(r'op_name="[^"/]*/mixed(\d+)(?:_\d+)?/', entry):
        first.setdefault(int(m.group(1)), m.start())
    assert sorted(first) == list(range(11)), "InceptionV3 has blocks mixed0 … mixed10"
    program_order = sorted(first, key=first.__getitem__)
    before = inception[:inception.index(">after optimization<")]
    seen: dict[int, float] = {}
    for m in _BOLD.finditer(before):
        y, title = float(m.group(1)), m.group(2)
        span = re.search(r"\(mixed(\d+) … mixed(\d+)\)", title)
        one = re.match(r"mixed(\d+)\b", title)
        blocks = range(int(span.group(1)), int(span.group(2)) + 1) if span else [int(one.group(1))] if one else []
        for b in blocks:
            seen.setdefault(b, y)
    assert sorted(seen) == list(range(11)), f"blocks in the before column: {sorted(seen)}"
    drawn_order = sorted(seen, key=lambda b: (seen[b], b))
    assert drawn_order == program_order


def test_densenet_dense_blocks_fold_into_repeats_of_as_many_layers_as_op_names_say(tmp_path):
    """DenseNet121's dense blocks: ``conv2_block1`` … ``conv2_block6`` and so on (counted here by
    a regex over the op_names) are drawn as one box each, ``×6``, ``×12``, ``×24``, ``×16``."""
    text = _hlo("densenet121")
    blocks: dict[str, set[int]] = {}
    for stage, block in re.findall(r'op_name="[^"/]*/conv(\d)_block(\d+)_', text):
        blocks.setdefault(stage, set()).add(int(block))
    assert {s: len(b) for s, b in blocks.items()} == {"2": 6, "3": 12, "4": 24, "5": 16}
    svg = _render("densenet121", tmp_path / "x.svg")
    for stage, found in blocks.items():
        assert re.search(rf"conv{stage}_block1_[^<]*×{len(found)} \(conv{stage}_block1_[^<]* … "
                         rf"conv{stage}_block{len(found)}_", svg), f"conv{stage}: ×{len(found)}"


def test_budget_300_still_draws_the_detailed_picture_and_a_part_stays_detailed(tmp_path):
    """``--budget 300`` is today's detailed picture; a picture of part of the module
    (``--computation``, here the entry computation named in the HLO text) keeps 300 nodes."""
    detailed = _render("inception_v3", tmp_path / "d.svg", "--budget", "300")
    assert max(_boxes_per_part(detailed)) > 200
    entry = re.search(r"^ENTRY %?([^\s(]+)", _hlo("inception_v3"), re.MULTILINE)
    assert entry is not None
    out = tmp_path / "c.svg"
    assert main(["render", str(CAPTURES / "inception_v3"), "--stage", "pre", "--computation", entry.group(1),
                 "-o", str(out)]) in (0, None)
    assert sum(_boxes_per_part(out.read_text(encoding="utf-8"))) > 200


# --- issue 33, goals 1-3 on the training steps ------------------------------------------------

_TITLE = re.compile(r'<text [^>]*?y="([-\d.]+)"[^>]*font-weight="bold"[^>]*>([^<]*)</text>')


def _layers_in_program_order(capture: str, model: str) -> list[str]:
    """The model's layers in the order their forward ops run: the first op named
    ``<model>/<layer>/…`` (not the ``gradient_tape/`` copy) in the entry computation's text."""
    first: dict[str, int] = {}
    for m in re.finditer(rf'op_name="{model}/([^/"]+)/', _entry(_hlo_text(capture))):
        first.setdefault(m.group(1), m.start())
    return sorted(first, key=first.__getitem__)


def _hlo_text(capture: str, stage: str = "pre") -> str:
    folder = CAPTURES / capture
    plain = folder / f"{stage}.hlo"
    return plain.read_text(encoding="utf-8") if plain.exists() else _hlo(capture, stage)


def _column(svg: str, which: str) -> str:
    """The text of the laid-out parts of one column: the before column's parts stand at the
    left edge (``translate(0 …)``), the after column's further right."""
    parts = list(_PART.finditer(svg))
    assert parts, "no laid-out parts"
    left = min(float(m.group(1)) for m in parts)
    ends = [m.start() for m in parts[1:]] + [len(svg)]
    keep = (lambda x: x == left) if which == "before" else (lambda x: x > left)
    return "".join(svg[m.start():end] for m, end in zip(parts, ends, strict=True) if keep(float(m.group(1))))


def _drawn_rows(column: str, names: list[str]) -> dict[str, float]:
    """The y of each of ``names`` where a bold title names it alone (a closed layer's box)."""
    rows: dict[str, float] = {}
    for m in _TITLE.finditer(column):
        title = m.group(2).strip()
        if title in names:
            rows.setdefault(title, float(m.group(1)))
    return rows


@pytest.fixture(scope="module")
def cnn_step(tmp_path_factory) -> str:
    return _render("keras_cnn_train", tmp_path_factory.mktemp("overview") / "cnn.svg")


def test_the_cnn_training_step_reads_forward_loss_optimizer_top_to_bottom_before_optimization(cnn_step):
    """The Keras CNN step's before column: its layers top to bottom in the order their forward
    ops run (entry order of ``cnn_1/<layer>/`` op names), then the loss, then the optimizer
    (``adam``), then the ROOT. Before this change the optimizer's bias corrections and the loss
    sat above the model (and the wrapped column ran sideways)."""
    layers = _layers_in_program_order("keras_cnn_train", "cnn_1")
    names = [name.removesuffix("_1") for name in layers]  # Keras 3 adds _1 to a layer's call's ops
    assert names[:2] == ["conv1", "conv2"] and "logits" in names, layers
    before = _column(cnn_step, "before")
    rows = _drawn_rows(before, [*names, "sparse_categorical_crossentropy"])
    assert set(rows) >= set(names), (sorted(rows), names)
    drawn = sorted(rows, key=rows.__getitem__)
    assert drawn == [*names, "sparse_categorical_crossentropy"], drawn
    # Adam's own work left beside the layers (its step count: Keras's per-variable bias
    # corrections, ``adam/truediv_2`` …, are drawn in the layers whose variables they correct)
    # comes after the loss and before the ROOT
    adam = min(float(m.group(1)) for m in _TITLE.finditer(before) if m.group(2) == "adam")
    root = max(float(m.group(1)) for m in _TITLE.finditer(before) if m.group(2).startswith("ROOT"))
    assert rows["sparse_categorical_crossentropy"] < adam < root


def test_the_cnn_training_step_after_optimization_keeps_the_layers_in_program_order(cnn_step):
    """The optimized column: the same layers, top to bottom in the order the forward ops run
    (the pre-optimization entry's order; XLA's schedule keeps it), none drawn upside down (the
    default picture had ``conv1`` at the bottom, ``logits`` at the top)."""
    names = [n.removesuffix("_1") for n in _layers_in_program_order("keras_cnn_train", "cnn_1")]
    after = _column(cnn_step, "after")
    rows = _drawn_rows(after, names)
    shown = [n for n in names if n in rows]
    assert len(shown) >= 4, (sorted(rows), names)
    assert sorted(shown, key=rows.__getitem__) == shown


def test_the_cnn_training_step_fits_a_page_with_few_crossings(cnn_step):
    """Goal 1 on a training step (the SVG's own geometry): longer side ≤ 2,500 pt (was
    2,901 × 1,458), ≤ 40 boxes a column, ≤ 0.1 crossing points an arrow (was 0.206)."""
    import sys

    box = _VIEWBOX.search(cnn_step)
    assert box is not None
    assert max(float(box.group(1)), float(box.group(2))) <= 2_500, box.groups()
    assert max(_boxes_per_part(cnn_step)) <= 40
    sys.path.insert(0, str(CAPTURES.parent.parent / "benchmarks"))
    from picture_bench import crossings

    crossed, arrows = crossings(cnn_step)
    assert arrows and crossed / arrows <= 0.1, (crossed, arrows)


def test_weight_copies_and_iotas_sit_in_the_layer_that_uses_them_not_in_boxes_of_their_own(cnn_step):
    """Goal 2: XLA's unnamed copies of the weights (``f32[…] copy(%argN)`` in the optimized
    entry, found here by regex; Adam's s64 step counter is the optimizer's, not a weight) are never a box of their own in the overview: each is drawn inside
    its layer's box."""
    post = _entry(_hlo_text("keras_cnn_train", "post"))
    copies = re.findall(r"^\s*%?(copy\.\d+) = f32\[[^\n]*? copy\(%?arg\d+(?:\.\d+)?\)(?![^\n]*op_name)", post, re.MULTILINE)
    assert len(copies) >= 4, copies
    after = _column(cnn_step, "after")
    titles = {m.group(2).strip() for m in _TITLE.finditer(after)}
    own = [c for c in copies if f">{c}<" in after and "copy" in titles]
    assert not own, own
    # nor are the unnamed fusions made of nothing but an iota (``fusion()``: no operands, no
    # op_name), which the pooling layer's backward reads: they were four boxes of their own
    iotas = re.findall(r"^\s*%?([\w.-]+) = [^\n]*? fusion\(\)(?![^\n]*op_name)", post, re.MULTILINE)
    assert len(iotas) >= 4, iotas
    assert not [f for f in iotas if f">{f}<" in after], iotas


def test_no_group_of_layers_is_formed_by_a_shared_name_prefix_of_keras_numbered_layers():
    """Goal 3: a model of auto-named layers (``conv2d_3``, ``batch_normalization_7`` … as Keras
    names them; read here from the op_names by regex) is grouped by structure only: no
    ``conv2d_* (n scopes)`` or ``batch_* (n scopes)`` — shared prefixes of unrelated layers."""
    from hloviz.render.tree.tree import Step, build_tree

    layers = sorted(set(re.findall(r'op_name="functional_1/([^/"]+)/', _hlo_text("keras_autonamed"))))
    numbered = [n for n in layers if re.fullmatch(r"(conv2d|batch_normalization|activation)(_\d+)+", n)]
    assert len(numbered) >= 30, layers
    routes = [([Step("scope", "functional_1", "functional_1"), Step("scope", n, f"functional_1/{n}")], f"leaf{i}")
              for i, n in enumerate(layers)]
    # beside them, a real block by name (MobileNetV2's block_5 layers) still groups
    block = ["block_5_expand", "block_5_depthwise", "block_5_project"]
    routes += [([Step("scope", "functional_1", "functional_1"), Step("scope", n, f"functional_1/{n}")], f"b{i}")
               for i, n in enumerate(block)]
    tree = build_tree(routes)
    groups = [n.label or n.name for n in _walk(tree.root) if n.kind == "group"]
    assert groups == ["block_*"], groups  # the three block_5 layers, under their shared prefix


def _walk(node):
    yield node
    for c in node.children:
        yield from _walk(c)


def _crossings_per_arrow(svg: str) -> float:
    import sys

    sys.path.insert(0, str(CAPTURES.parent.parent / "benchmarks"))
    from picture_bench import crossings

    crossed, arrows = crossings(svg)
    assert arrows
    return crossed / arrows


@pytest.mark.parametrize("capture", ["keras_small_train_step", "jax_gpt_step12"])
def test_training_step_overviews_fit_a_page_with_few_crossings(capture, tmp_path):
    """Goal 1 on a Keras step and the 12-layer JAX GPT step (was 3,057 × 2,519 pt, 0.085
    crossings an arrow): the SVG's own geometry."""
    svg = _render(capture, tmp_path / "x.svg")
    box = _VIEWBOX.search(svg)
    assert box is not None
    assert max(float(box.group(1)), float(box.group(2))) <= 2_500, box.groups()
    assert max(_boxes_per_part(svg)) <= 40
    assert _crossings_per_arrow(svg) <= 0.1
    sizes = [float(s) for s in re.findall(r'font-size="([\d.]+)"', svg)]
    assert min(sizes) >= 10


def test_the_gpt_step_draws_its_forward_pass_above_its_backward_pass_and_the_root_last(tmp_path):
    """Goal 2 on JAX: the forward pass (``jvp(…)`` op names) runs before the backward pass
    (``transpose(jvp(…))``) in the entry computation (checked here by regex: the middle jvp op
    comes before the middle transpose op); each column draws the box or cluster holding the
    forward pass above the backward one, and its ROOT below both; the optimized column the
    optimizer's cluster below the backward pass."""
    entry = _entry(_hlo("jax_gpt_step12"))
    jvp = [m.start() for m in re.finditer(r'op_name="jit\(train_step12\)/jvp\(', entry)]
    back = [m.start() for m in re.finditer(r'op_name="jit\(train_step12\)/transpose\(jvp\(', entry)]
    assert jvp and back and jvp[len(jvp) // 2] < back[len(back) // 2]
    svg = _render("jax_gpt_step12", tmp_path / "x.svg")
    for which in ("before", "after"):
        column = _column(svg, which)
        titles = [(float(m.group(1)), m.group(2).strip()) for m in _TITLE.finditer(column)]
        forward = min(y for y, t in titles if t == "forward")
        backward = min(y for y, t in titles if t == "backward")
        root = max(y for y, t in titles if t.startswith("ROOT"))
        assert forward < backward < root, (which, forward, backward, root)
        if which == "after":  # XLA's schedule runs the optimizer's update after the backward pass
            optimizer = min(y for y, t in titles if t == "optimizer")
            assert backward < optimizer < root, (backward, optimizer, root)


def test_no_weight_of_an_opened_layer_is_a_box_of_its_own(inception):
    """Goal 2 in opened layers: InceptionV3's optimized stem opens its layers; their kernels
    (entry parameters the capture names ``conv2d_1/kernel``…, read here from capture.json) are
    written as a row of the convolution that reads them, or counted on the box of a layer of one
    kernel (``conv2d_1``: ``1 parameter: kernel``), not drawn as ``parameter N`` boxes above it."""
    import json

    names = json.loads((CAPTURES / "inception_v3" / "capture.json").read_text())["parameter_names"]
    assert "conv2d_1/kernel" in names.values()
    after = _column(inception, "after")
    titles = [m.group(2) for m in _TITLE.finditer(after)]
    assert not [t for t in titles if t.startswith("parameter ")], titles
    conv = [body for body in _NODE.findall(after) if re.search(r">conv2d_1</text>", body)]
    assert "+ conv2d_1/kernel" in after or (len(conv) == 1 and "parameter: kernel<" in conv[0]), conv


# --- a hand-written TF training step: scopes split into forward and backward ------------------

_LAYER = r"((?:moments|Gelu)(?:_\d+)?)"


def _cover(svg: str) -> float:
    """The boxes' area (each outline's bounding box) over the canvas's (the viewBox)."""
    box = _VIEWBOX.search(svg)
    assert box is not None
    area = 0.0
    for node in _NODE.finditer(svg):
        outline = _OUTLINE.search(node.group(1))
        if outline is None:
            continue
        nums = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", outline.group(1))]
        xs, ys = nums[0::2], nums[1::2]
        area += (max(xs) - min(xs)) * (max(ys) - min(ys))
    return area / (float(box.group(1)) * float(box.group(2)))


_COLUMN_FRAME = re.compile(r'<g id="clust\d+" class="cluster">\s*<title>[^<]*</title>\s*<(?:polygon|path)[^>]*?'
                           r'(?:points|d)="([^"]+)"[^>]*>\s*<text[^>]*>(?:before|after)\b')


def _boxes_per_column(svg: str) -> list[int]:
    """How many boxes each column of a picture laid out in one run holds (a diff's two columns
    side by side: the frames titled ``before: …`` and ``after: …``, told apart by x)."""
    spans = []
    for frame in _COLUMN_FRAME.finditer(svg):
        xs = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", frame.group(1))][0::2]
        spans.append((min(xs), max(xs)))
    assert len(spans) == 2, spans
    counts = [0, 0]
    for node in _NODE.finditer(svg):
        outline = _OUTLINE.search(node.group(1))
        if outline is None:
            continue
        xs = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", outline.group(1))][0::2]
        centre = (min(xs) + max(xs)) / 2
        counts[next(i for i, (x0, x1) in enumerate(spans) if x0 <= centre <= x1)] += 1
    return counts


def _middle_order(entry: str, prefix: str) -> list[str]:
    """The layers (``moments``, ``Gelu_1`` …, by regex over the op_names) in the order of the
    middle of their ops in the entry computation's text (the first op is no guide: TF emits a
    layer's constants, ``Gelu``'s √2, long before the layer runs)."""
    spots: dict[str, list[int]] = {}
    for m in re.finditer(rf'op_name="{prefix}{_LAYER}/', entry):
        spots.setdefault(m.group(1), []).append(m.start())
    middle = {k: v[(len(v) - 1) // 2] for k, v in spots.items()}
    return sorted(middle, key=middle.__getitem__)


@pytest.fixture(scope="module")
def transformer_step(tmp_path_factory) -> str:
    return _render("transformer_train-tf2.21", tmp_path_factory.mktemp("overview") / "tr.svg")


def test_the_transformer_step_fits_a_page_without_a_staircase_of_frames(transformer_step):
    """Goal 1 on a hand-written TF transformer step, whose scopes (``moments``, ``Gelu``…) each
    hold forward and backward work: framed, each scope spanned the picture from its forward box
    to its backward box, the frames nested and dot stood them side by side (5,516 × 2,741 pt,
    5.9% covered). The SVG's own geometry: longer side ≤ 2,500 pt, ≤ 40 boxes a column, boxes
    covering ≥ 8%, ≤ 0.1 crossings an arrow."""
    box = _VIEWBOX.search(transformer_step)
    assert box is not None
    assert max(float(box.group(1)), float(box.group(2))) <= 2_500, box.groups()
    assert max(_boxes_per_part(transformer_step)) <= 40
    assert _cover(transformer_step) >= 0.08
    assert _crossings_per_arrow(transformer_step) <= 0.1


def test_the_transformer_step_draws_each_layers_forward_then_backward_in_program_order(transformer_step):
    """Goal 2: each layer (named by the op_names, ``gradient_tape/<layer>/`` its backward ops)
    is a ``<layer> · forward`` and a ``<layer> · backward`` box in the before column, no frame
    titled ``<layer>`` around them; the forward boxes top to bottom in the entry's order of
    their forward ops, then the backward boxes in the order of theirs (the reverse)."""
    entry = _entry(_hlo_text("transformer_train-tf2.21"))
    forward, backward = _middle_order(entry, ""), _middle_order(entry, "gradient_tape/")
    assert len(forward) >= 7 and sorted(forward) == sorted(backward), (forward, backward)
    titles = [(float(m.group(1)), m.group(2).strip()) for m in _TITLE.finditer(_column(transformer_step, "before"))]
    assert not [t for _, t in titles if t in forward], "a layer drawn as a frame"
    rows = {t: y for y, t in titles}
    drawn_forward = sorted(forward, key=lambda n: rows[f"{n} · forward"])
    drawn_backward = sorted(backward, key=lambda n: rows[f"{n} · backward"])
    assert drawn_forward == forward and drawn_backward == backward, (drawn_forward, drawn_backward)
    assert max(rows[f"{n} · forward"] for n in forward) < min(rows[f"{n} · backward"] for n in backward)


def test_the_diff_of_the_transformer_step_fits_a_page_in_one_piece(tmp_path):
    """Goal 1 on ``hloviz diff`` of the step under TF 2.17 and 2.21, its two columns laid out
    whole: with the layers' frames side by side the picture was 4,888 × 3,363 pt (4.6% covered,
    0.23 crossings an arrow), then wrapped into 11 parts joined by ``part k`` connectors."""
    out = tmp_path / "d.svg"
    assert main(["diff", str(CAPTURES / "transformer_train-tf2.17"), str(CAPTURES / "transformer_train-tf2.21"),
                 "-o", str(out)]) in (0, None)
    svg = out.read_text(encoding="utf-8")
    box = _VIEWBOX.search(svg)
    assert box is not None
    assert max(float(box.group(1)), float(box.group(2))) <= 2_500, box.groups()
    assert not _PART.search(svg), "the columns were cut into parts"
    assert max(_boxes_per_column(svg)) <= 40
    assert _cover(svg) >= 0.08
    assert _crossings_per_arrow(svg) <= 0.1


def test_a_weight_row_is_as_short_as_a_parameters_row(tmp_path):
    """ConvNeXtTiny's optimized column folds each stage-3 block's layer-scale weight into the
    residual fusion that reads it; the row naming the two weights was 106 characters, the widest
    box of the column. Every row of the overview is at most 60 characters (the parameters
    row's limit); a weights row names whole weights, as capture.json (the oracle) holds them,
    as many as fit, and counts the rest."""
    svg = _render("convnext_tiny", tmp_path / "x.svg")
    info = (CAPTURES / "convnext_tiny" / "capture.json").read_text(encoding="utf-8")
    name = "convnext_tiny_stage_3_block_0_layer_scale/variable_15"
    assert f'"{name}"' in info
    rows = [t.replace("&amp;", "&").replace("&#45;", "-") for node in _NODE.finditer(svg)
            for t in re.findall(r"<text[^>]*>([^<]*)</text>", node.group(1))]
    assert rows and max(len(t) for t in rows) <= 60, max(rows, key=len)
    weights = [t for t in rows if t.startswith("+ convnext_tiny_stage_3_block_")]
    assert len(weights) >= 2, weights
    for t in weights:
        named, _, counted = t[2:].partition(" +")
        assert all(f'"{n}"' in info for n in named.split(", ")), t  # whole names, none cut
        assert counted.isdigit() or not counted, t


def test_a_layers_box_is_titled_by_the_layer_not_by_tensorflows_scope_in_it(inception):
    """A Keras BatchNormalization layer's math runs in ``tf.nn.batch_normalization``'s own name
    scope, ``batchnorm``; where that is all the layer holds after optimization, its box was
    titled ``batch_normalization_1/batchnorm`` (four of InceptionV3's), where the unoptimized
    column says ``batch_normalization_1``. Oracle: the layers whose optimized op names run
    through ``batchnorm`` (regex over the HLO text), Keras's ``_1`` suffix dropped."""
    layers = set(re.findall(r'op_name="inception_v3_1/(batch_normalization_\d+)_1/batchnorm/', _hlo("inception_v3", "post")))
    assert len(layers) >= 20
    titles = [t.strip() for _y, t in _BOLD.findall(inception)]
    assert not [t for t in titles if "/" in t], [t for t in titles if "/" in t]
    after = inception[inception.index(">after optimization<"):]
    assert len({t.strip() for _y, t in _BOLD.findall(after)} & layers) >= 4

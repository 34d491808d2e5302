"""A training step's overview draws what only carries a parameter's value on (the loss's
``reshape`` of the targets) beside the box before its user, as it draws the parameter, not on a
row of its own (issue 33: jax_scopes' single file was 2,533 pt tall, 33 over the goal).

Oracles outside the renderer: which instructions only carry a parameter's value, from regexes
over the capture's HLO text (an entry instruction ``reshape``/``broadcast``/``bitcast``/
``convert``/``copy``/``transpose`` whose operands are all parameters); where they are drawn, from
the SVG's own geometry (each node's outline, found by the instruction name its tooltip starts
with): another box shares its row.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hloviz.cli import main

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

pytestmark = pytest.mark.requires_dot

_INST = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*\S+\s+([\w\-]+)\((.*?)\)")
_CARRIERS = {"reshape", "broadcast", "bitcast", "convert", "copy", "transpose"}
_NODE = re.compile(r'<g id="node\d+" class="node">.*?xlink:title="([^"=\s]+) =.*?points="([^"]+)"', re.DOTALL)
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _entry(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("ENTRY"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("}"))
    return lines[start + 1:end]


def _carriers(lines: list[str]) -> set[str]:
    opcode = {m.group(1): m.group(2) for m in map(_INST.match, lines) if m}
    out = set()
    for m in map(_INST.match, lines):
        if m and m.group(2) in _CARRIERS:
            operands = [o.strip().lstrip("%").split(" ")[-1].lstrip("%") for o in m.group(3).split(",") if o.strip()]
            if operands and all(opcode.get(o) == "parameter" for o in operands):
                out.add(m.group(1))
    return out


# (jax_scopes, the step this was built on, now draws its loss closed: the carrier is inside it;
# flax_train_step's inline loss is one closed block now, and the labels' reshape with it)
@pytest.mark.parametrize("capture", ["flax_train_step"])
def test_a_parameters_reshape_shares_a_row(capture, tmp_path):
    """Never a row of its own: folded into the block that reads it (the loss, whose box names
    the labels), or drawn beside another box."""
    text = _text(capture, "pre")
    carriers = _carriers(_entry(text))
    assert carriers, "the step reshapes a parameter"
    out = tmp_path / "x.svg"
    try:
        code = main(["render", str(CAPTURES / capture), "--stage", "pre", "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    svg = out.read_text(encoding="utf-8")
    boxes = {}
    for name, points in _NODE.findall(svg):
        ys = [float(v) for v in _NUM.findall(points)][1::2]
        boxes[name] = (min(ys), max(ys))
    assert "labels" in svg  # the input the carrier carries is named in the picture
    drawn = carriers & set(boxes)
    for name in drawn:
        top, bottom = boxes[name]
        assert any(other != name and t < bottom and b > top for other, (t, b) in boxes.items()), name


def _text(capture: str, stage: str) -> str:
    plain = CAPTURES / capture / f"{stage}.hlo"
    if plain.exists():
        return plain.read_text(encoding="utf-8")
    return gzip.decompress((CAPTURES / capture / f"{stage}.hlo.gz").read_bytes()).decode("utf-8")


def _post_text(capture: str) -> str:
    return _text(capture, "post")


def _post_overview(capture: str, out: Path) -> str:
    """The SVG of ``hloviz render CAPTURE --stage post`` (the overview), as a user runs it."""
    try:
        code = main(["render", str(CAPTURES / capture), "--stage", "post", "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    return out.read_text(encoding="utf-8")


_TOOLTIP = re.compile(r'<g id="node\d+" class="node">.*?xlink:title="([^"]*)"', re.DOTALL)


# (keras_cnn_train's bitcast is its pool layer's, drawn closed in the overview now)
@pytest.mark.parametrize("capture", ["mobilenet_v2", "keras_transformer"])
def test_a_bitcast_of_a_computed_value_is_no_box_of_its_own(capture, tmp_path):
    """A ``bitcast`` XLA left at the top level is its operand's bytes in another shape (no work,
    no kernel): the overview folds it into the box that computes its operand, with a row saying
    so (``+ bitcast ×1 (its value in another shape)``), instead of a box of its own between that
    box and its user (MobileNetV2's ``predictions``; 17 such boxes down an unseen NASNet's
    optimized column). Oracle: the entry's bitcasts of a computed value (not of a parameter),
    by regex over ``post.hlo``; a drawn node's tooltip starts with its instruction's name."""
    lines = _entry(_post_text(capture))
    opcode = {m.group(1): m.group(2) for m in map(_INST.match, lines) if m}
    computed = set()
    for m in map(_INST.match, lines):
        if m and m.group(2) == "bitcast" and not line_is_root(lines, m.group(1)):
            operand = m.group(3).strip().split(" ")[-1].lstrip("%")
            if opcode.get(operand) not in (None, "parameter", "constant"):
                computed.add(m.group(1))
    assert computed, "the optimized module bitcasts a computed value at the top level"
    svg = _post_overview(capture, tmp_path / "x.svg")
    alone = [t.split(" ", 1)[0] for t in _TOOLTIP.findall(svg) if t.split(" ", 1)[0] in computed]
    assert not alone
    assert "(its value in another shape)" in svg


def line_is_root(lines: list[str], name: str) -> bool:
    """Whether ``name`` is the entry's ROOT (drawn as the output, whatever it is)."""
    return any(line.lstrip().startswith(f"ROOT %{name} ") or line.lstrip().startswith(f"ROOT {name} ")
               for line in lines)


_PER_EXAMPLE = Path(__file__).resolve().parent / "data" / "orders" / "per_example_step_post.hlo"


_FLAX_COND = Path(__file__).resolve().parent / "data" / "orders" / "flax_cond_step_post.hlo"


@pytest.mark.parametrize(("source", "optimizer"), [("jax_scopes", "/sgd/"), ("per_example_step", 'op_name="rm_sprop/'),
                                                  ("flax_cond_step", 'op_name="jit(flax_cond_step)/add"')])
def test_a_weight_the_optimizer_reads_is_no_box_of_its_own(source, optimizer, tmp_path):
    """A parameter the optimizer updates is a weight (or the optimizer's state), never the
    program's input: the overview folds it into its layer's box even where several boxes read it
    (the JAX scopes step's ``params['Head']['kernel']``, read by its forward ``dot``, its
    gradient's and SGD's ``sub``, stood as a box of its own; an unseen Flax step's head bias and
    AdamW count widened its optimized column past 2,500 pt; an unseen per-example-gradient step's
    seven RMSprop slots stood as boxes; an unseen Flax CNN's conv bias, its SGD update fused by
    XLA into kernels drawn in its layer's box, stood alone). Oracle: the entry's parameters that an instruction named
    by the optimizer (``…/sgd/…``, ``rm_sprop/…``) reads, by regex over the optimized module."""
    files = {"per_example_step": _PER_EXAMPLE, "flax_cond_step": _FLAX_COND}
    text = files[source].read_text(encoding="utf-8") if source in files else _post_text(source)
    lines = _entry(text)
    params = {m.group(1) for m in map(_INST.match, lines) if m and m.group(2) == "parameter"}
    updated = set()
    for line in lines:
        if optimizer in line:
            m = _INST.match(line)
            args = set(re.findall(r"%([\w.\-]+)", m.group(3))) if m else set()
            updated |= args & params
    assert updated, "the optimizer reads the weights it updates"
    if source in files:  # the optimized module alone, as render reads a .hlo file
        out = tmp_path / "x.svg"
        try:
            main(["render", str(files[source]), "-o", str(out)])
        except SystemExit as stop:
            assert stop.code in (0, None)
        svg = out.read_text(encoding="utf-8")
    else:
        svg = _post_overview(source, tmp_path / "x.svg")
    alone = [t.split(" ", 1)[0] for t in _TOOLTIP.findall(svg) if t.split(" ", 1)[0] in updated]
    assert not alone


_L2 = Path(__file__).resolve().parent / "data" / "orders" / "l2_penalty_step_post.hlo"


def test_a_weights_layout_copy_is_folded_with_it(tmp_path):
    """A Keras MLP whose loss adds an L2 penalty over its kernels (``data/orders/l2_penalty.py``):
    optimized, XLA copies the first kernel (a layout copy, no op name) and its layer's ``dot``,
    the penalty's gradient and Adam read the copy. The parameter and its copy stood as two boxes
    above the optimized column; they are the weight, folded into its layer (where the other
    readers name it). Oracle: by regex over the module, the parameters whose one reader is such a
    copy, which something Adam's (``op_name="adam/…"``) reads."""
    lines = _entry(_L2.read_text(encoding="utf-8"))
    inst = {m.group(1): (m.group(2), m.group(3), line) for line in lines if (m := _INST.match(line))}
    readers: dict[str, set[str]] = {}
    for name, (_op, args, _line) in inst.items():
        for a in re.findall(r"%([\w.\-]+)", args):
            readers.setdefault(a, set()).add(name)
    copies = {name: args.strip().lstrip("%") for name, (op, args, line) in inst.items()
              if op == "copy" and "op_name=" not in line and inst.get(args.strip().lstrip("%"), ("",))[0] == "parameter"}
    weights = {param: copy for copy, param in copies.items() if readers.get(param) == {copy}
               and any('op_name="adam/' in inst[r][2] for r in readers.get(copy, ()))
               and any(inst[r][0] != "copy" and 'op_name="adam/' not in inst[r][2] for r in readers.get(copy, ()))}
    assert weights, "a weight reaches its layer and Adam through XLA's copy"
    out = tmp_path / "x.svg"
    try:
        main(["render", str(_L2), "-o", str(out)])
    except SystemExit as stop:
        assert stop.code in (0, None)
    svg = out.read_text(encoding="utf-8")
    drawn = {t.split(" ", 1)[0] for t in _TOOLTIP.findall(svg)}
    assert not drawn & (set(weights) | set(weights.values())), sorted(drawn & (set(weights) | set(weights.values())))

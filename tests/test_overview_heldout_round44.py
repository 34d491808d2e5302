"""What held-out round 44 (``benchmarks/heldout/round44*.py``, written before any change) showed
drawn wrong, each checked against an oracle read from the HLO text by regular expression.

* ``unet_dice_step_pre.hlo.gz``: a Keras U-Net trained one step on a soft Dice loss written op by
  op in the step (``Sum``, ``truediv``, ``Mean``: no scope), before optimization. The model's
  backward pass reads the loss's gradient, and an unscoped op read only by the model joins it
  (a gradient summed where a layer's output forks): the whole loss, and its gradient, were drawn
  inside the ``unet`` frame — and beside it in the optimized column.
* ``quantized_pool_{pre,post}.hlo.gz``: a JAX function quantizing by ``round(x * 8) / 8``. XLA
  turns the division into a multiplication by 0.125, a constant it folds from the 8 both ops
  read; the multiplication by 8 still reads the 8. Both boxes said ``operand 1 = 8 (broadcast) ·
  constant.29 · folded → constant.44 = 0.125``: the multiplication's, wrongly.

And one of round 45's (``benchmarks/heldout/round45_jax.py``): ``lexsort_scans_post.hlo.gz``,
optimized. XLA:CPU wraps its scan's loop in a ``call``, drawn with its computation open beside
it; that computation's parameter and loop were placed in the program by their own text
positions — first of all — and the arrow into the frame closed a cycle: dot drew the
``lexsort``'s inputs (the keys and their slices) below the sort that reads them.

And one of round 48's (``benchmarks/heldout/round48.py``): ``augment_classify_{pre,post}.hlo.gz``,
an augmenting classifier ending in a ``tf.reduce_mean``. XLA folds the mean's count into a
constant, 1/9; walked back from it, the ``convert`` of the reduction's start value 0 was
labelled ``folded → constant.16 = 0.111111112`` too — it stays the reduction's own literal.

And one of round 49's (``benchmarks/heldout/round49_jax.py``): ``diffusion_step_post.hlo.gz``, a
Flax U-Net's training step, optimized. The weight gradient of ``up1``'s 1×1 skip convolution
(over a concatenation) lost its name; its forward convolution is fused with its bias, so the
only forward convolution found reading the same values was ``down1/conv1`` (through the
residual): the kernel table filed the gradient there, and the update of that weight, with its
moving average, became a box of its own after the model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hloviz.cli import main

from .test_overview_heldout_rounds26_27 import _boxes
from .test_overview_heldout_steps import _render, _text

HERE = Path(__file__).resolve().parent / "data" / "orders"


def _export(path: Path, out: Path, *extra: str) -> dict:
    try:
        code = main(["render", *([str(path)] if path.name else []), *extra, "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_loss_written_in_the_step_is_drawn_beside_the_model_not_in_it(tmp_path):
    path = HERE / "unet_dice_step_pre.hlo.gz"
    text = _text(path)
    # the oracle: each instruction's op name; the model's are ``unet_1/…`` (its gradients
    # ``gradient_tape/unet_1/…``), the loss's name no scope (``Sum``, ``Mean``, ``truediv``; their
    # gradients ``gradient_tape/Sum``…)
    op_of = dict(re.findall(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = [^\n]*?op_name="([^"]*)"', text, re.MULTILINE))
    loss = {name for name, op in op_of.items()
            if re.fullmatch(r"(?:gradient_tape/)?(?:Sum|Sum_1|Mean|mul|mul_1|add|add_1|add_2|sub|truediv)(?:/\w+)?", op)}
    model = {name for name, op in op_of.items() if re.match(r"(?:gradient_tape/)?unet_1/", op)}
    # the situation: a loss of some twenty instructions, the model's hundreds
    assert len(loss) > 20 and len(model) > 300
    scene = _export(path, tmp_path / "u.json")
    parent = {c["id"]: c["parent"] for c in scene["clusters"]}
    [frame] = [c["id"] for c in scene["clusters"] if c["rows"][:1] == ["unet"]]

    def in_frame(cluster: str | None) -> bool:
        while cluster is not None:
            if cluster == frame:
                return True
            cluster = parent[cluster]
        return False

    inside = {i for node in scene["nodes"] if in_frame(node["cluster"]) for i in node["instructions"]}
    drawn = {i for node in scene["nodes"] for i in node["instructions"]}
    assert len(model & inside) > 200  # the model is drawn in its frame
    assert loss & drawn  # and the loss is drawn …
    assert not loss & inside, sorted(loss & inside)[:8]  # … beside it


def _readers_of_broadcast_constants(text: str) -> dict[str, list[tuple[str, str]]]:
    """Scalar constant → (reader, its op name) of each broadcast of it, by regular expression."""
    consts = dict(re.findall(r"^\s*%?([\w.\-]+) = f32\[\] constant\(([-\d.e]+)\)", text, re.MULTILINE))
    spread = dict(re.findall(r"^\s*%?([\w.\-]+) = f32\[[\d,]+\]\S* broadcast\(%?([\w.\-]+)\)", text, re.MULTILINE))
    out: dict[str, list[tuple[str, str]]] = {}
    for name, operands, op in re.findall(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = \S+ (?:multiply|divide|add)\(([^)]*)\)'
                                         r'[^\n]*?op_name="([^"]*)"', text, re.MULTILINE):
        for operand in re.findall(r"%?([\w.\-]+)", operands):
            if spread.get(operand) in consts:
                out.setdefault(consts[spread[operand]], []).append((name, op))
    return out


def test_a_fold_is_told_on_the_user_that_reads_the_folded_constant_only(tmp_path):
    pre = _text(HERE / "quantized_pool_pre.hlo.gz")
    post = _text(HERE / "quantized_pool_post.hlo.gz")
    # the oracle: before, one broadcast 8 read by the multiplication and the division; after, the
    # division's op reads 0.125 (a constant the module did not have), the multiplication's still 8
    before = _readers_of_broadcast_constants(pre)
    after = _readers_of_broadcast_constants(post)
    assert "0.125" not in before and sorted(op.rsplit("/", 1)[1] for _n, op in before["8"]) == ["div", "mul"]
    reads_folded = {op for _n, op in after["0.125"]}
    assert {op.rsplit("/", 1)[1] for op in reads_folded} == {"div"} and {op for _n, op in after["8"]} - reads_folded
    scene = _export(Path(""), tmp_path / "q.json", "--pre", str(HERE / "quantized_pool_pre.hlo.gz"),
                    "--post", str(HERE / "quantized_pool_post.hlo.gz"), "--stage", "both")
    rows = {i: node["rows"] for node in scene["columns"][0]["picture"]["nodes"] for i in node["instructions"]}
    for name, op in before["8"]:
        told = [r for r in rows[name] if r.startswith("operand") and "folded →" in r]
        assert bool(told) == (op in reads_folded), (name, op, rows[name])


def test_a_loop_xla_wraps_in_a_call_keeps_the_columns_program_order(tmp_path):
    path = HERE / "lexsort_scans_post.hlo.gz"
    text = _text(path)
    entry = text.split("\nENTRY ", 1)[1].split("\n}", 1)[0]
    # the oracle: the entry's lines, in order, and what each reads
    lines = re.findall(r"^\s*(?:ROOT\s+)?%?([\w.\-]+) = [^\n]*?\b[\w\-]+\(([^)]*)\)", entry, re.MULTILINE)
    at = {name: k for k, (name, _ops) in enumerate(lines)}
    reads = {name: re.findall(r"%?([\w.\-]+)", ops) for name, ops in lines}
    # the situation: a call of the loop's computation, and a sort reading two slices of the keys
    assert re.search(r"\scall\([^)]*\), to_apply=%?while", entry)
    sort = next(name for name, _ in lines if re.search(rf"%?{re.escape(name)} = [^\n]*?\ssort\(", entry))
    slices = [o for o in reads[sort] if "slice" in o]
    assert len(slices) == 2 and all(at[s] < at[sort] for s in slices)
    svg = _render(path, tmp_path / "s.svg")
    top: dict[str, float] = {}
    for y, texts, _ops in _boxes(svg):
        for t in texts:
            if t in at:
                top.setdefault(t, y)
    # every arrow between two drawn entry instructions runs down the page, as the text runs
    pairs = [(a, b) for b in top for a in reads.get(b, ()) if a in top]
    assert (slices[0], sort) in pairs and len(pairs) >= 8
    wrong = [(a, b) for a, b in pairs if not top[a] < top[b]]
    assert not wrong, wrong


def test_a_reductions_start_value_is_not_folded_into_the_constant_beside_it(tmp_path):
    pre = _text(HERE / "augment_classify_pre.hlo.gz")
    # the oracle: the instructions a reduce reads as its start value (its second operand) and
    # nothing else reads, by regular expression over the text
    line = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+) = [^\n]*?\s([\w\-]+)\(([^)]*)\)", re.MULTILINE)
    reads = {name: (opcode, re.findall(r"%([\w.\-]+)", ops)) for name, opcode, ops in line.findall(pre)}
    inits = {ops[1] for opcode, ops in reads.values() if opcode == "reduce" and len(ops) == 2}
    elsewhere = {o for opcode, ops in reads.values() for k, o in enumerate(ops) if not (opcode == "reduce" and k == 1)}
    starts = inits - elsewhere
    # the situation: a mean whose start value is a convert of 0, beside its count's fold
    assert any(reads[s][0] == "convert" for s in starts)
    scene = _export(Path(""), tmp_path / "a.json", "--pre", str(HERE / "augment_classify_pre.hlo.gz"),
                    "--post", str(HERE / "augment_classify_post.hlo.gz"), "--stage", "both")
    rows = {i: node["rows"] for node in scene["columns"][0]["picture"]["nodes"] for i in node["instructions"]}
    folded = [i for i, r in rows.items() if any(t.startswith("folded →") for t in r)]
    assert folded and any(re.match(r"Mean\.", i) for i in folded)  # the count's fold is told
    drawn = [s for s in starts if s in rows]
    assert drawn and not [s for s in drawn if any("folded" in t for t in rows[s])], {s: rows[s] for s in drawn}


def test_an_unnamed_weight_gradient_is_the_layer_whose_weight_has_its_shape(capsys):
    path = HERE / "diffusion_step_post.hlo.gz"
    text = _text(path)
    entry = text.split("\nENTRY ", 1)[1].split("\n}", 1)[0]
    # the oracle: the entry's convolutions without an op name (XLA's rebuilt weight gradients)
    # and the Flax kernels (``params['params']['up1']['skip']['kernel']``, named in the
    # parameter's own name), matched by their number of elements where that is one layer's
    def elements(dims: str) -> int:
        n = 1
        for d in dims.split(","):
            n *= int(d)
        return n

    unnamed = {name: elements(dims) for name, dims in re.findall(
        r"^\s*%?(convolution[\w.\-]*) = f32\[([\d,]+)\]\S* convolution\((?![^\n]*op_name)", entry, re.MULTILINE)}
    kernels: dict[int, list[str]] = {}
    for layer, dims in re.findall(r"%params__params____(\w+?)____kernel__\.\d+ = f32\[([\d,]+)\]", entry):
        kernels.setdefault(elements(dims), []).append(layer.replace("____", "/"))
    owned = {name: kernels[n][0] for name, n in unnamed.items() if len(kernels.get(n, ())) == 1}
    # the situation: a 1×1 skip convolution over a concatenation (its forward convolution fused
    # with its bias), whose weight gradient lost its name
    assert owned.get("convolution.18") == "up1/skip"
    try:
        main(["stats", "--post", str(path), "--json"])
    except SystemExit as stop:
        assert stop.code in (0, None)
    layer_of = {k["name"]: k["layer"] for k in json.loads(capsys.readouterr().out)["kernels"]}
    wrong = {name: layer_of.get(name) for name, layer in owned.items() if f"/{layer} " not in f"/{layer_of.get(name)} "}
    assert not wrong, wrong

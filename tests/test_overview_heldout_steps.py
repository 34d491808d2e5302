"""Training steps of held-out rounds 23 to 25 (``benchmarks/heldout/round23*.py`` …
``round25*.py``), each drawn wrong before this round's fixes, each read back from the SVG of
``hloviz render`` against an oracle taken from the HLO text by regular expression.

* ``module_step_pre.hlo``: a ``tf.Module`` MLP trained by hand (``assign_sub``). The input's
  unnamed ``reshape``, read by the first layer's ``dot`` and by that dot's gradient, was filed
  as backward work; every forward op after it then read as the optimizer's (``hidden · optimizer``
  framed the forward ``dot``), and the update as ``forward · block of 18``.
* ``vae_step_pre.hlo.gz``: a Flax VAE whose ``nn.relu`` calls and reparameterization stand
  loose between its six ``Dense`` layers. Cut at waists to fit the budget, the model's column
  drew ``mean · block of 3`` (``enc_2``, ``mean`` and ``logvar`` in one box) and no ``logvar``.
* ``unet_step_post.hlo.gz``: a Keras U-Net's optimized step. The first layer's work reads the
  program's inputs alone and was taken for weight preparation; placed by the one fusion of its
  own that reads a later layer (the skip connection's concatenation), ``down_1`` stood below ``up_1``.
* ``two_head_step_post.hlo.gz``: a Keras text model trained with Adagrad, whose sparse update of
  the embedding (a ``scatter``) was placed by what it reads (the model) and stood as a box of its
  own below the layers, not in ``embed``.
* ``adafactor_step_pre.hlo.gz``: a Keras attention classifier trained with Adafactor, whose ROOT
  was blocked with the eleven unused slots it returns.
* ``lamb_step_post.hlo.gz``: a Flax CNN trained with ``optax.lamb``, whose trust-ratio norms were
  called forward work.
* ``accumulate_scan_step_pre.hlo``: plain JAX summing gradients over micro-batches in a
  ``lax.scan``, whose call of ``jax.grad``'s computation was called the optimizer's.
* ``gnn_step_post.hlo.gz``: a Flax GNN step (round 13) whose loss block must not take in an
  update fusion beside it.
* ``causal_lm_step_post.hlo.gz``: a Flax causal LM whose embedding (a ``gather`` of parameters
  alone) stood below its attention after optimization.

And the GPT sample step's ROOT, which stood under an ``optimizer`` header.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hloviz.cli import main

from . import box_labels

HERE = Path(__file__).resolve().parent / "data" / "orders"

pytestmark = pytest.mark.requires_dot

_NODE = re.compile(r'<g id="node\d+" class="node">(.*?)</g>\n</g>', re.DOTALL)
_TEXT = re.compile(r"<text[^>]*>([^<]*)</text>")
_TITLE = re.compile(r'xlink:title="([^"]*)"')
_CLUSTER = re.compile(r'<g id="clust\d+" class="cluster">.*?<text[^>]*>([^<]*)</text>', re.DOTALL)


def _text(path: Path) -> str:
    return gzip.open(path, "rt", encoding="utf-8").read() if path.suffix == ".gz" else path.read_text(encoding="utf-8")


def _render(path: Path, out: Path) -> str:
    try:
        code = main(["render", str(path), "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    return out.read_text(encoding="utf-8")


def _boxes(svg: str) -> list[tuple[str, set[str]]]:
    """(first line, the op names its tooltip lists) of every box in ``svg``."""
    out = []
    for body in _NODE.findall(svg):
        texts, title = _TEXT.findall(body), _TITLE.search(body)
        if not texts or title is None:
            continue
        names = (title.group(1).split(" · op_name: ", 1)[1].split("\\n", 1)[0].split(" · source: ", 1)[0]
                 if " · op_name: " in title.group(1) else "")
        out.append((texts[0], {n.strip() for n in names.split(",") if n.strip()}))
    return out


def test_a_hand_written_update_is_the_optimizer_and_the_layers_are_the_forward_pass(tmp_path):
    text = (HERE / "module_step_pre.hlo").read_text(encoding="utf-8")
    ops = set(re.findall(r'op_name="([^"]*)"', text))
    forward = {op for op in ops if re.fullmatch(r"(?:hidden|out)/(?:matmul|add)", op)}
    update = {op for op in ops if re.fullmatch(r"AssignSubVariableOp(?:_\d+)?", op)}
    assert len(forward) == 4 and len(update) == 4  # the situation: two layers, four weights assigned
    # the input's reshape: no op name, read by the first layer's dot and by that dot's gradient
    [reshape] = re.findall(r"^\s*(%?reshape[\w.]*) = f32\[32,10\]\S* reshape\(f32\[32,10\]\S* %arg0", text, re.MULTILINE)
    readers = re.findall(rf'dot\([^)]*{re.escape(reshape)}[,)][^\n]*op_name="([^"]*)"', text)
    assert sorted(readers) == ["gradient_tape/hidden/matmul/MatMul", "hidden/matmul"]
    svg = _render(HERE / "module_step_pre.hlo", tmp_path / "m.svg")
    boxes = _boxes(svg)
    for title, names in boxes:
        if names & forward:
            assert "optimizer" not in title and "backward" not in title, (title, names)
    assert all("optimizer" in title for title, names in boxes if names & update), boxes
    assert not [c for c in _CLUSTER.findall(svg) if re.search(r"\b(?:hidden|out)\b.*optimizer", c)]


def test_a_models_layers_stay_boxes_of_their_own_beside_its_loose_ops(tmp_path):
    path = HERE / "vae_step_pre.hlo.gz"
    text = _text(path)
    layers = set(re.findall(r'op_name="jit\(vae_step\)/jvp\(_Vae\)/(\w+)/', text))
    assert layers == {"enc_1", "enc_2", "mean", "logvar", "dec_1", "dec_2"}
    # the situation: the model's own loose ops (inline activations) beside its layers
    assert len(re.findall(r'op_name="jit\(vae_step\)/jvp\(_Vae\)/(?:jit\(relu\)|gt)"', text)) >= 3
    svg = _render(path, tmp_path / "v.svg")
    titles = [label for _, label in box_labels(svg)]
    for layer in layers:
        assert titles.count(layer) == 1, (layer, titles)
    assert not [t for t in titles if any(t.startswith(f"{layer} ·") for layer in layers)], titles


def test_the_first_layer_stands_first_after_optimization(tmp_path):
    path = HERE / "unet_step_post.hlo.gz"
    text = _text(path)
    entry = text.split("\nENTRY ", 1)[1]
    # the oracle: each layer by its forward convolution's place in the schedule (the entry's order)
    first: dict[str, int] = {}
    for at, layer in enumerate(re.findall(r'op_name="unet_1/(\w+?)_1/(?:convolution|conv_transpose)"', entry)):
        first.setdefault(layer, at)
    order = sorted(first, key=first.__getitem__)
    assert order[0] == "down_1" and len(order) >= 8  # the situation: the encoder's first layer, seven more
    svg = _render(path, tmp_path / "u.svg")
    tops = {label: y for y, label in box_labels(svg) if label in first}
    assert set(tops) == set(order)
    assert sorted(order, key=tops.__getitem__) == order


def test_the_programs_data_are_the_parameters_no_update_reads():
    """What the overview's order takes for the program's inputs (not weights) in the U-Net step:
    the oracle reads the entry's text — a parameter is a weight where an instruction named by
    the optimizer (``adam/…``) reads it, or reads XLA's layout ``copy`` of it."""
    from hloviz import parse
    from hloviz.analysis.scopes import build_scope_tree
    from hloviz.render.cut.median import data_inputs as _data_inputs

    text = _text(HERE / "unet_step_post.hlo.gz")
    entry = text.split("\nENTRY ", 1)[1]
    params = set(re.findall(r"^\s*%(\w+\.\d+) = \S+ parameter\(", entry, re.MULTILINE))
    copies = dict(re.findall(r"^\s*%(copy[\w.]*) = \S+ copy\((?:\S+ )?%(\w+\.\d+)\)", entry, re.MULTILINE))
    raw = {o for line in entry.splitlines() if 'op_name="adam/' in line
           for o in re.findall(r"%([\w.\-]+)", line.split(" = ", 1)[1])}
    read = {copies.get(o, o) for o in raw}
    assert any(copies.get(o) in params for o in raw)  # the situation: an update reads a weight's copy
    module = parse(text)
    top = module.entry
    phase_of = build_scope_tree(module, stage="post").phase_of
    data = _data_inputs(top, top.users(), phase_of)
    assert {i.name for i in top.instructions if id(i) in data} == params - read == {"arg0.1", "arg1.1"}


def test_a_sparse_update_of_an_embedding_is_drawn_with_the_embedding(tmp_path):
    """Adagrad's update of an embedding's rows (``ResourceScatterSub``, a ``scatter`` after
    optimization) reads the embedding and its gradient, which the convolution reading the
    embedding's output computes: by what it reads, it updated the model, and stood as a box of
    its own below the layers. It writes the embedding: the oracle is the parameter the scatter's
    fusion takes first and the layer whose ``GatherV2`` reads that parameter."""
    path = HERE / "two_head_step_post.hlo.gz"
    entry = _text(path).split("\nENTRY ", 1)[1]
    [(written, scatter_op)] = re.findall(r"= \S+ fusion\(%(arg[\d.]+), [^\n]*op_name=\"(adagrad/ResourceScatterSub)\"", entry)
    readers = set(re.findall(rf"fusion\(%{re.escape(written)}[,)][^\n]*op_name=\"two_head_1/(\w+?)_1/GatherV2\"", entry))
    assert readers == {"embed"}
    svg = _render(path, tmp_path / "t.svg")
    [title] = [title for title, names in _boxes(svg) if scatter_op in names]
    assert title == "embed"


def test_the_root_stands_in_no_phase(tmp_path):
    """The ROOT hands out every pass's results (the loss, the new weights): it is no phase's
    work. Filed by data flow with the optimizer, it stood in a step's ``(optimizer)`` frame
    (the hand-written TF step's optimized column) or under an ``optimizer`` header (the GPT
    step's). The oracle: the ENTRY's ROOT by regular expression, its box by its tooltip."""
    capture = Path(__file__).resolve().parent.parent / "samples" / "captures" / "jax_gpt_step12"
    entry = _text(capture / "post.hlo.gz").split("\nENTRY ", 1)[1]
    [root] = re.findall(r"^\s*ROOT %?([\w.\-]+) = ", entry, re.MULTILINE)
    try:
        code = main(["render", str(capture), "--stage", "post", "-o", str(tmp_path / "g.svg")])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    svg = (tmp_path / "g.svg").read_text(encoding="utf-8")
    [first] = [_TEXT.findall(body)[0] for body in _NODE.findall(svg)
               if (t := _TITLE.search(body)) is not None and t.group(1).startswith(f"{root} =")]
    assert first == "ROOT tuple"


def test_the_root_is_never_blocked_with_the_values_it_returns(tmp_path):
    """Keras's Adafactor keeps a velocity slot per weight that it never uses: eleven parameters
    the step hands back unchanged, read by nothing but the ROOT. Blocked at their waists beside
    the model, they took the ROOT with them (``parameter · block of 12``: no ROOT box). The
    oracle: the ENTRY's ROOT and the parameters only it reads, by regular expression
    (``adafactor_step_pre.hlo.gz``: held-out round 24's ``attention_step``)."""
    path = HERE / "adafactor_step_pre.hlo.gz"
    entry = _text(path).split("\nENTRY ", 1)[1]
    [root] = re.findall(r"^\s*ROOT %?([\w.\-]+) = ", entry, re.MULTILINE)
    params = re.findall(r"^\s*%?([\w.\-]+) = \S+ parameter\(", entry, re.MULTILINE)
    body = "\n".join(line for line in entry.splitlines() if " parameter(" not in line and not line.lstrip().startswith("ROOT"))
    returned_only = [p for p in params if not re.search(rf"[(, ]%?{re.escape(p)}[,)]", body)]
    assert len(returned_only) > 10  # the situation: a dozen values the ROOT alone reads
    svg = _render(path, tmp_path / "a.svg")
    [first] = [_TEXT.findall(body)[0] for body in _NODE.findall(svg)
               if (t := _TITLE.search(body)) is not None and t.group(1).startswith(f"{root} =")]
    assert first == "ROOT tuple"


def test_an_optax_helper_reading_the_update_is_the_optimizers_work():
    """``optax.lamb`` scales each update by a trust ratio, the norm of the weight over the norm of
    the update, computed by ``jnp.linalg.norm``: ops named ``jit(step)/jit(norm)/…``, a scope of
    their own inside the step. Only ops at the step's own top level were looked at for the
    optimizer's phase, so the update's norms were called forward work. The oracle: the ``norm``
    fusions that read the update's division (``jit(step)/div``, Adam's ``m / (√v + ε)`` inside
    LAMB), by regular expression over the optimized module (held-out round 24's ``dropout_cnn_step``)."""
    import json

    from typer.testing import CliRunner

    from hloviz.cli import app

    path = HERE / "lamb_step_post.hlo.gz"
    entry = _text(path).split("\nENTRY ", 1)[1]
    named = dict(re.findall(r'^\s*%?([\w.\-]+) = [^\n]*?op_name="([^"]*)"', entry, re.MULTILINE))
    reading_the_update = {name for name, operands in re.findall(
        r'^\s*%?([\w.\-]+) = \S+ fusion\(([^)]*)\)[^\n]*op_name="jit\(dropout_cnn_step\)/jit\(norm\)/', entry, re.MULTILINE)
        if any(named.get(o) == "jit(dropout_cnn_step)/div" for o in re.findall(r"%([\w.\-]+)", operands))}
    assert len(reading_the_update) >= 5  # the situation: one update norm per weight
    result = CliRunner().invoke(app, ["stats", str(path), "--by", "scope", "--json"])
    assert result.exit_code == 0, result.output
    [norm] = [r for r in json.loads(result.stdout)["scopes"] if r["label"] == "norm"]
    assert reading_the_update <= set(norm["phases"].get("optimizer", {}).get("kernels", []))


def test_a_call_that_computes_the_gradients_is_not_the_optimizers_work():
    """Gradients summed over micro-batches by ``lax.scan`` (held-out round 25's
    ``accumulate_step``): the scan's body calls ``jax.grad``'s computation as a ``closed_call``
    named like the step's own ops (``jit(step)/while/body/closed_call``). Its results derive from
    gradients because it computes them; it was called the optimizer's, and with it the slicing
    of each micro-batch, so the step's forward and backward passes were one ``optimizer`` box.
    The oracle, by regular expression: the call whose callee holds the backward pass
    (``transpose(jvp(…))`` op names), and the update after the loop (``jit(step)/mul``, ``sub``
    outside it)."""
    from hloviz import parse
    from hloviz.analysis.scopes import build_scope_tree

    text = (HERE / "accumulate_scan_step_pre.hlo").read_text(encoding="utf-8")
    bodies = dict(re.findall(r"^(\S+) \{\n(.*?)\n\}", text, re.MULTILINE | re.DOTALL))
    calls = re.findall(r"^\s*(closed_call[\w.]*) = [^\n]*? call\([^\n]*to_apply=([\w.]+)", text, re.MULTILINE)
    grads = [name for name, callee in calls if "transpose(jvp(" in bodies.get(callee, "")]
    assert grads  # the situation: jax.grad's computation called from the scan's body
    entry = text.split("\nENTRY ", 1)[1]
    update = re.findall(r'^\s*([\w.]+) = [^\n]*op_name="jit\(accumulate_step\)/(?:mul|sub)"', entry, re.MULTILINE)
    assert update
    module = parse(text)
    tree = build_scope_tree(module, stage="pre")
    by_name = {i.name: i for i in module.instructions()}
    assert {tree.phase_of(by_name[name]) for name in grads} == {"forward"}
    assert {tree.phase_of(by_name[name]) for name in update} == {"optimizer"}


def test_an_embedding_first_stands_first_after_optimization(tmp_path):
    """A Flax causal LM's first layer is its embedding, a ``gather`` of the table's rows by the
    tokens — parameters alone, taken for weight preparation: its box stood below the attention
    it feeds (held-out round 25's ``causal_lm_step``). The oracle: each layer by the first
    instruction of the optimized entry its forward op names (``jvp(_Lm)/<layer>``) place."""
    path = HERE / "causal_lm_step_post.hlo.gz"
    entry = _text(path).split("\nENTRY ", 1)[1]
    first: dict[str, int] = {}
    for at, layer in enumerate(re.findall(r'op_name="jit\(causal_lm_step\)/jvp\(_Lm\)/(embed|attention|norm|logits)\b', entry)):
        first.setdefault(layer, at)
    order = sorted(first, key=first.__getitem__)
    assert order[0] == "embed" and len(order) == 4
    svg = _render(path, tmp_path / "c.svg")
    tops = {label.split("/")[0]: y for y, label in box_labels(svg) if label.split("/")[0] in first}
    assert sorted(order, key=tops.__getitem__) == order, tops


def test_a_block_of_loose_ops_never_holds_forward_work_beside_the_optimizers(tmp_path):
    """A Flax GNN step's optimized column (held-out round 13): the loss's fusions beside its
    layers are one block of forward work; optax's step-count update (``jit(train_step)/add``, a
    fusion reading the loss's ``norm_2`` values through the graph's last layer) is the
    optimizer's and stays out of it. The oracle: the blocks' own phase lines in the SVG, and
    the update fusion, by regular expression, a box of its own."""
    path = HERE / "gnn_step_post.hlo.gz"
    entry = _text(path).split("\nENTRY ", 1)[1]
    [update] = re.findall(r'^\s*%?(multiply_add_fusion\.45) = [^\n]*op_name="jit\(train_step\)/add"', entry, re.MULTILINE)
    svg = _render(path, tmp_path / "g.svg")
    for body in _NODE.findall(svg):
        texts = _TEXT.findall(body)
        if texts and re.search(r" · block of \d+$", texts[0]):
            passes = " ".join(t for t in texts if re.match(r"^(?:forward|backward|optimizer) \d", t))
            assert not ("forward" in passes and "optimizer" in passes), texts
    assert [body for body in _NODE.findall(svg) if (t := _TITLE.search(body)) and t.group(1).startswith(f"{update} =")]

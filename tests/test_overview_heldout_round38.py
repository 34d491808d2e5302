"""What held-out round 38 (``benchmarks/heldout/round38*.py``, written before any change) showed
drawn wrong, on captures of earlier rounds that hold the same thing, read back from ``hloviz
render``'s JSON against an oracle taken from the HLO text by regular expression.

* ``sequential_step_*`` (round 24; a capture, its ``memory.json`` left out): a ``keras.Sequential``
  CNN trained by SGD. XLA writes the step count back in place, so it copies the count first;
  the updates read the copy (round 38's cosine-decay schedule: every layer's update). The copy
  and the count's increment were boxes of their own at the top of the optimized column, above
  the stem (round 38's ResNeXt step), not the ``sgd`` box the count's name designates.
* ``samples/captures/flax_train_step``: a Flax CNN calling ``nn.relu`` between its layers. JAX's
  ``relu`` keeps ``x > 0`` for its derivative, named in the model's scope, not the layer's
  (``jvp(Net)/gt``): each was a ``compare GT`` box of its own before optimization (round 38's
  segmentation net: three, in a column of their own beside the model).

And one of round 38's own: ``dp_sgd_step_*`` (a capture, its ``memory.json`` left out), DP-SGD in
plain JAX, no scopes: per-example gradients by ``vmap``, each clipped by a factor computed op by
op (``sqrt`` → ``add`` → ``divide`` → ``minimum``). Each of those is on every way from the
gradients to the update — a cut between blocks — and each was a box of one instruction.

And one of round 39's (``benchmarks/heldout/round39_jax.py``, written after those fixes):
``fno_step_post.hlo.gz``, a Flax Fourier neural operator's step, optimized. Its last
``nn.Dense(1)`` (``project``) has a ``[16]`` kernel XLA reshapes by a fusion of bitcasts named
after the weight and scheduled first; the layer's forward ``dot`` XLA left unnamed. The named
preparation alone placed the layer: ``project`` was the first box of the optimized column, above
``lift``, the layer the input enters. And ``moe_step_*`` (a capture, its ``memory.json`` left
out), a Flax mixture of experts whose ``w_in`` and ``w_out`` are the model's own: the block
holding both was titled by what their paths share, ``params['params']`` less the argument's
name — Flax's collection, ``params``.

And one of round 40's (``benchmarks/heldout/round40_jax.py``): ``gan_step_*`` (a capture, its
``memory.json`` left out), a Flax GAN trained in one step, its generator applied twice.
``nn.relu(…)`` is a function JAX traces on its own (``jit(relu)``, a ``call``), named in the
generator's scope, not its ``norm`` layer's: each application was a ``call`` box of its own.

And the ``keras_lstm`` sample, whose ``(unused)`` box — constants TensorFlow's loop lowering writes
and nothing reads — said ``7 ops → 8 kernels`` with those kernels' numbers: the kernels of the
ops' other instructions, counted by op name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hloviz.cli import main

from .test_overview_heldout_rounds26_27 import _boxes, _entry_lines, _entry_op_names
from .test_overview_heldout_rounds34_36 import HERE, _capture
from .test_overview_heldout_steps import _render, _text

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "captures"

pytestmark = pytest.mark.requires_dot


def _render_json(capture: Path, out: Path) -> list[list[dict]]:
    try:
        main(["render", str(capture), "--stage", "both", "-o", str(out)])
    except SystemExit as stop:
        assert stop.code in (0, None)
    return [c["picture"]["nodes"] for c in json.loads(out.read_text(encoding="utf-8"))["columns"]]


def test_a_step_count_copied_before_its_update_is_the_optimizers(tmp_path):
    capture = _capture(tmp_path, "sequential_step")
    names = json.loads((capture / "capture.json").read_text(encoding="utf-8"))["parameter_names"]
    lines = _entry_lines((capture / "post.hlo").read_text(encoding="utf-8"))
    # the oracle: the parameter capture.json names ``<optimizer>/iteration``, the copy XLA makes of
    # it (no op name), and what reads that copy: the count's increment, unscoped, and updates
    [(number, counter)] = [(n, name) for n, name in names.items() if name.endswith("/iteration")]
    optimizer = counter.split("/")[0]
    [copy] = [m.group(1) for line in lines if (m := re.match(rf"\s*%?([\w.]+) = s64\[\] copy\(%arg{number}\.1\)$", line))]
    readers = {m.group(1): line for line in lines if re.search(rf"[(, ]%{re.escape(copy)}[,)]", line)
               and (m := re.match(r"\s*(?:ROOT )?%?([\w.\-]+) = ", line))}
    increments = [r for r, line in readers.items() if 'op_name="Add"' in line]
    assert len(increments) == 1  # the situation: the count's increment reads the copy ...
    assert any(f'op_name="{optimizer}/' in line for line in readers.values())  # ... and so do updates
    post = _render_json(capture, tmp_path / "s.json")[1]
    [box] = [n for n in post if copy in n["instructions"]]
    # the copy, the count and its increment are one box, the optimizer's the count's name designates
    assert box["rows"][0] == optimizer, box["rows"]
    assert f"arg{number}.1" in box["instructions"] and increments[0] in box["instructions"], box["instructions"]


def test_a_relus_mask_kept_for_its_gradient_is_drawn_with_the_value_it_compares(tmp_path):
    capture = SAMPLES / "flax_train_step"
    lines = (capture / "pre.hlo").read_text(encoding="utf-8").splitlines()
    # the oracle: each forward ``compare(x, 0)`` named in a scope but no layer's (``jvp(Net)/gt``),
    # read only by the gradient (``transpose(jvp(Net))/…/select_n``), and the value x it compares
    defined = {m.group(1): line for line in lines if (m := re.match(r"\s*(?:ROOT )?%?([\w.\-]+) = ", line))}
    masks = {}
    for name, line in defined.items():
        found = re.search(r" compare\(%?([\w.\-]+), %?[\w.\-]+\), direction=GT, .*op_name=\"[^\"]*/jvp\([^\"]*/gt\"", line)
        if found is None:
            continue
        readers = [d for d in defined.values() if re.search(rf"[(, ]%?{re.escape(name)}[,)]", d)]
        assert readers and all("transpose(jvp(" in r and " select(" in r for r in readers), name
        masks[name] = found.group(1)
    assert len(masks) == 2, masks
    pre = _render_json(capture, tmp_path / "f.json")[0]
    for mask, value in masks.items():
        [box] = [n for n in pre if mask in n["instructions"]]
        assert value in box["instructions"], (mask, box["rows"][:1])
        assert not box["rows"][0].startswith("compare"), box["rows"][:1]


def test_a_chain_of_lone_ops_between_blocks_is_one_block(tmp_path):
    capture = _capture(tmp_path, "dp_sgd_step")
    lines = _entry_lines((capture / "pre.hlo").read_text(encoding="utf-8"))
    # the oracle: the entry's ``sqrt`` (the per-example norms) and the instructions after it, each
    # the one reader of the last, that compute the clipping factor
    defined: dict[str, tuple[str, list[str]]] = {}
    for line in lines:
        found = re.match(r"\s*(?:ROOT )?%?([\w.\-]+) = \S+ ([\w\-]+)\((.*?)\)(?:,|$)", line)
        if found:
            defined[found.group(1)] = (found.group(2), re.findall(r"%?([\w.\-]+)", found.group(3)))
    readers: dict[str, list[str]] = {}
    for name, (_opcode, operands) in defined.items():
        for op in operands:
            readers.setdefault(op, []).append(name)
    [chain] = [[n] for n, (opcode, _ops) in defined.items() if opcode == "sqrt"]
    while len(readers.get(chain[-1], [])) == 1 and defined[readers[chain[-1]][0]][0] in ("add", "divide", "minimum"):
        chain.append(readers[chain[-1]][0])
    assert [defined[n][0] for n in chain] == ["sqrt", "add", "divide", "minimum"], chain
    pre = _render_json(capture, tmp_path / "d.json")[0]
    boxes = [n for n in pre if any(c in n["instructions"] for c in chain)]
    assert len(boxes) == 1 and all(c in boxes[0]["instructions"] for c in chain), [b["rows"][:1] for b in boxes]


def test_a_layer_placed_by_its_unnamed_work_not_its_weights_preparation(tmp_path):
    path = HERE / "fno_step_post.hlo.gz"
    text = _text(path)
    lines = _entry_lines(text)
    # the oracle: where the entry runs the first work of each layer, read from the fusions' bodies
    # (a fused computation's op names say whose work it is) and the instructions' own op names
    first: dict[str, int] = {}
    prep: dict[str, int] = {}
    for k, (line, names) in enumerate(zip(lines, _entry_op_names(text))):
        for layer in ("lift", "project"):
            if any(f"/{layer}/" in n for n in names):
                first.setdefault(layer, k)
            if any(n.replace("\\", "") == f"params['params']['{layer}']['kernel']" for n in names):  # (quotes escaped)
                prep.setdefault(layer, k)
        if re.search(r"\bdot\(", line) and "op_name" not in line and "%bitcast_bitcast_fusion" in line:
            first.setdefault("project (unnamed dot)", k)
    # the situation: project's kernel reshaped (named after it) before lift's first work; its own
    # forward dot unnamed, after lift's
    assert prep["project"] < first["lift"] < first["project (unnamed dot)"], (prep, first)
    svg = _render(path, tmp_path / "f.svg")
    titles = [texts[0] for _y, texts, _names in sorted(_boxes(svg))]
    assert "project" in titles and "lift" in titles, titles
    assert titles.index("lift") < titles.index("project"), titles


def test_a_block_is_not_titled_by_flaxs_collection(tmp_path):
    capture = _capture(tmp_path, "moe_step")
    names = json.loads((capture / "capture.json").read_text(encoding="utf-8"))["parameter_names"]
    text = (capture / "pre.hlo").read_text(encoding="utf-8")
    # the oracle: the parameters (read off the entry's text, by number) holding the weights the model
    # declares itself: paths of three keys, the argument, Flax's collection and the weight's name
    own = {int(k): v for k, v in names.items() if re.fullmatch(r"params\['params'\]\['\w+'\]", v)}
    assert sorted(own.values()) == ["params['params']['w_in']", "params['params']['w_out']"]
    params = {m.group(1): int(m.group(2)) for line in _entry_lines(text)
              if (m := re.match(r"\s*%?([\w.\-]+) = \S+ parameter\((\d+)\)", line)) and int(m.group(2)) in own}
    assert len(params) == 2
    pre = _render_json(capture, tmp_path / "m.json")[0]
    holding = [n for n in pre if any(p in n["instructions"] for p in params)]
    assert holding
    for box in holding:
        assert not box["rows"][0].startswith(("params ", "params/")), box["rows"][:1]


def test_an_activation_traced_as_a_function_is_drawn_with_the_layer_it_follows(tmp_path):
    capture = _capture(tmp_path, "gan_step")
    text = (capture / "pre.hlo").read_text(encoding="utf-8")
    # the oracle: computations doing elementwise work alone (read off their bodies), the entry's
    # calls of them named ``…/jit(relu)``, and the value each is applied to
    bodies = dict(re.findall(r"\n%?([\w.\-]+) \{\n(.*?)\n\}", text, re.DOTALL))
    elementwise = {name for name, body in bodies.items()
                   if set(re.findall(r" = \S+ ([a-z\-]+)\(", body)) <= {"parameter", "constant", "broadcast", "maximum"}}
    calls = {}
    for line in _entry_lines(text):
        found = re.match(r"\s*%?([\w.\-]+) = \S+ call\(%?([\w.\-]+)\), to_apply=%?([\w.\-]+), .*op_name=\"[^\"]*/jit\(relu\)\"", line)
        if found and found.group(3) in elementwise:
            calls[found.group(1)] = found.group(2)
    assert len(calls) == 2, calls  # the generator applied twice
    pre = _render_json(capture, tmp_path / "g.json")[0]
    for call, value in calls.items():
        [box] = [n for n in pre if call in n["instructions"]]
        assert value in box["instructions"], (call, box["rows"][:1])
        assert any("relu" in row and "applied to its output" in row for row in box["rows"]), box["rows"]


def test_values_nothing_reads_are_in_no_kernel(tmp_path):
    capture = SAMPLES / "keras_lstm"
    lines = _entry_lines(_text(capture / "pre.hlo.gz") if (capture / "pre.hlo.gz").exists()
                         else (capture / "pre.hlo").read_text(encoding="utf-8"))
    # the oracle: the entry's constants no instruction of the entry reads (regex over operands)
    defined = {m.group(1): m.group(2) for line in lines
               if (m := re.match(r"\s*(?:ROOT )?%?([\w.\-]+) = \S+ ([\w\-]+)\(", line))}
    read = {name for line in lines for name in re.findall(r"[(, ]%?([\w.\-]+)(?=[,)])", line.split(" = ", 1)[-1])}
    unread = {n for n, opcode in defined.items() if opcode == "constant" and n not in read}
    assert unread
    pre = _render_json(capture, tmp_path / "l.json")[0]
    boxes = [n for n in pre if n["instructions"] and set(n["instructions"]) <= unread]
    assert boxes, "the constants nothing reads stand in a box of their own"
    for box in boxes:
        assert not box["badge"] and not any("kernel" in row for row in box["rows"]), box

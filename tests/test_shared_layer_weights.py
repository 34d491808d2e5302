"""A layer called twice keeps its weights: a GAN's discriminator, applied to real and to
generated samples, reads each kernel in both calls (``discriminator_1/d_hidden``,
``discriminator_3/d_hidden``), in their gradients and in its optimizer; XLA copies each kernel
once for all of them. Found on a held-out GAN step (``samples/keras_gan.py``): the copies and
the kernels were drawn as boxes of their own above the optimized column. Oracles: the capture's
parameter names and the HLO text (which instruction copies which parameter, which ops read the
copy, by op name) — not the renderer's grouping. ``stats --by scope`` files the copies in the
layer too (they were a row of the module's own).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hloviz.analysis.scopes import build_scope_tree
from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

CAPTURE = Path(__file__).resolve().parent.parent / "samples" / "captures" / "keras_gan_train"


def test_a_kernel_two_calls_of_its_layer_read_is_drawn_in_that_layer():
    text = (CAPTURE / "post.hlo").read_text(encoding="utf-8")
    names = json.loads((CAPTURE / "capture.json").read_text(encoding="utf-8"))["parameter_names"]
    kernels = {int(i): n for i, n in names.items() if re.fullmatch(r"discriminator/\w+/kernel", n)}
    assert len(kernels) == 2
    module = parse(text)
    view = draw_module(module, options=ViewOptions(budget=OVERVIEW_BUDGET))
    scopes = build_scope_tree(module, stage="post")  # ``stats --by scope``'s rows
    entry = module.entry
    assert entry is not None
    checked = 0
    for index, name in kernels.items():
        layer = name.split("/")[1]
        param = re.search(rf"%([\w.-]+) = \S+ parameter\({index}\)", text).group(1)
        copies = re.findall(rf"%([\w.-]+) = \S+ copy\(%{re.escape(param)}\)", text)
        assert len(copies) == 1, (name, copies)
        # the copy's forward readers (through a bitcast of it): both calls of the one layer
        seen = [copies[0], *re.findall(rf"%([\w.-]+) = \S+ bitcast\(%{re.escape(copies[0])}\)", text)]
        readers = {call for v in seen
                   for call in re.findall(rf'%{re.escape(v)}[,)].*?op_name="(discriminator_\d+)/{layer}_\d+/', text)}
        assert len(readers) == 2, (name, readers)
        for inst in (param, copies[0]):
            title = view.scene.nodes[view.node_of[inst]].rows[0].text
            assert title == layer, (name, inst, title)
            checked += 1
        filed = scopes.scope_of(entry.instruction(copies[0]))
        assert filed.kind == "scope" and filed.name.startswith(layer), (name, filed.path)  # not a row of its own
    assert checked == 4


def test_tensorflows_own_op_numbering_is_no_layer_called_twice():
    """TensorFlow numbers the ops it names at the top level (``AddN``, ``AddN_7``: no ``/``, no
    layer): the rule above must not read their suffixes as a layer's calls. Before it was
    guarded, the transformer step's embedding gradient sum (``AddN_7``) was filed as a scope of
    its own and drawn as a box ``AddN · backward``."""
    from pathlib import Path as _Path

    text = (_Path(__file__).resolve().parent.parent / "samples" / "captures" / "transformer_train-tf2.21"
            / "pre.hlo").read_text(encoding="utf-8")
    names = re.findall(r'%([\w.-]+) = [^\n]*op_name="AddN_\d+"', text)
    assert names, "the test needs TensorFlow's top-level AddN ops"
    module = parse(text)
    scopes = build_scope_tree(module, stage="pre")
    by_name = {i.name: i for i in module.instructions()}
    for name in names:  # (another rule may file one in the layer whose gradient it sums)
        filed = scopes.scope_of(by_name[name])
        assert not (filed.kind == "scope" and filed.path.startswith("AddN")), (name, filed.path)

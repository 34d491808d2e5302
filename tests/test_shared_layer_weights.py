"""A layer called twice keeps its weights: a GAN's discriminator, applied to real and to
generated samples, reads each kernel in both calls (``discriminator_1/d_hidden``,
``discriminator_3/d_hidden``), in their gradients and in its optimizer; XLA copies each kernel
once for all of them. Found on a held-out GAN step (``samples/keras_gan.py``): the copies and
the kernels were drawn as boxes of their own above the optimized column. Oracles: the capture's
parameter names and the HLO text (which instruction copies which parameter, which ops read the
copy, by op name) — not the renderer's grouping.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hloviz.parser import parse
from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions, draw_module

CAPTURE = Path(__file__).resolve().parent.parent / "samples" / "captures" / "keras_gan_train"


def test_a_kernel_two_calls_of_its_layer_read_is_drawn_in_that_layer():
    text = (CAPTURE / "post.hlo").read_text(encoding="utf-8")
    names = json.loads((CAPTURE / "capture.json").read_text(encoding="utf-8"))["parameter_names"]
    kernels = {int(i): n for i, n in names.items() if re.fullmatch(r"discriminator/\w+/kernel", n)}
    assert len(kernels) == 2
    view = draw_module(parse(text), options=ViewOptions(budget=OVERVIEW_BUDGET))
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
    assert checked == 4

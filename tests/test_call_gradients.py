"""The backward pass TensorFlow takes through a function it called is the layer's backward pass.

TensorFlow differentiates a grouped convolution (``Conv2D(groups=…)``, ConvNeXt's depthwise
convolutions) by calling a function, and names those ops by the call:
``PartitionedCall/gradients/convolution_grad/Conv2DBackpropFilter``. Read as a scope, an unseen
ConvNeXtTiny training step drew 18 boxes ``PartitionedCall_N/gradients`` beside its model and
``stats --by scope`` counted their backward FLOPs as forward work of a scope ``PartitionedCall``;
the sample ``keras_grouped_train`` (``samples/keras_grouped.py``) does the same in small.
Oracles: the HLO text (which op reads the grouped layer's kernel, each op's name) by regex.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hloviz.analysis.opnames import parse_op_name
from hloviz.analysis.scopes import build_scope_tree
from hloviz.cli import main as hloviz_main
from hloviz.parser import parse

CAPTURE = Path(__file__).resolve().parent.parent / "samples" / "captures" / "keras_grouped_train"
CALL = "PartitionedCall/gradients/"


def test_a_calls_gradient_is_backward_work_of_no_scope_of_its_own():
    op = parse_op_name("PartitionedCall_3/gradients/convolution_grad/Conv2DBackpropFilter", "Conv2DBackpropFilter")
    assert (op.scope, op.op, op.phase) == ((), "Conv2DBackpropFilter", "backward")
    # a layer's own call, forward, keeps its scope
    fwd = parse_op_name("convnext_tiny_1/stage_0_block_0_depthwise_conv_1/StatefulPartitionedCall/convolution")
    assert fwd.phase == "forward" and fwd.scope[-1] == "StatefulPartitionedCall"


def _grouped_layer(text: str) -> str:
    """The scope path of the grouped convolution (from the text: its ``feature_group_count``)."""
    m = re.search(r"convolution\([^)]*\).*feature_group_count=16.*?op_name=\"([^\"]+)\"", text)
    assert m, "the grouped convolution"
    return m.group(1).rsplit("/", 1)[0]


def test_the_calls_ops_are_filed_in_the_grouped_layer_as_backward():
    text = (CAPTURE / "pre.hlo").read_text()
    layer = _grouped_layer(text)
    module = parse(text)
    tree = build_scope_tree(module, stage="pre")
    called = [i for c in module.computations for i in c.instructions if i.metadata.op_name.startswith(CALL)]
    assert len(called) == text.count(f'op_name="{CALL}')
    for inst in called:
        assert tree.scope_of(inst).path == layer, inst.name
        assert tree.phase_of(inst) == "backward", inst.name


def test_stats_by_scope_counts_the_grouped_layers_backward_in_the_layer(capsys):
    hloviz_main(["stats", str(CAPTURE), "--by", "scope", "--json"])
    rows = {r["scope"]: r for r in json.loads(capsys.readouterr().out)["scopes"]}
    post = (CAPTURE / "post.hlo").read_text()
    layer = _grouped_layer(post)
    assert not [s for s in rows if s.split("/")[0].startswith("PartitionedCall")]
    # the kernels XLA made of the call's ops (by their op names in the optimized text)
    kernels = set(re.findall(rf"%([\w.-]+) = [^\n]*op_name=\"{re.escape(CALL)}", post))
    entry = post[post.index("\nENTRY "):]
    kernels = {k for k in kernels if f"%{k} = " in entry}
    assert kernels
    assert kernels <= set(rows[layer]["kernels"])
    assert set(rows[layer]["phases"]) >= {"forward", "backward"}
    for scope, row in rows.items():
        if scope.split("/")[0].startswith("sgd"):  # the optimizer holds none of them
            assert not kernels & set(row["kernels"]), scope

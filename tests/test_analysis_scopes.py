"""The scope tree: op names read as the model's structure, kernels attributed to scopes."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

import hloviz
from hloviz.analysis.opnames import keras_layer_name, parse_op_name, split_segments
from hloviz.analysis.scopes import build_scope_tree
from hloviz.capture import load_target

from . import present

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

# Two layers, one fusion spanning both, a backward op, an optimizer op, an unnamed parameter.
POST = """
HloModule m, is_scheduled=true

%fused (p0: f32[4], p1: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  %p1 = f32[4]{0} parameter(1)
  %a = f32[4]{0} add(%p0, %p1), metadata={op_type="AddV2" op_name="model_1/dense_1/BiasAdd"}
  ROOT %r = f32[4]{0} maximum(%a, %p1), metadata={op_type="Relu" op_name="model_1/relu_1/Relu"}
}

ENTRY %main (x: f32[4], w: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0), metadata={op_name="XLA_Args"}
  %w = f32[4]{0} parameter(1), metadata={op_name="XLA_Args"}
  %f = f32[4]{0} fusion(%x, %w), kind=kLoop, calls=%fused, metadata={op_type="Relu" op_name="model_1/relu_1/Relu"}
  %g = f32[4]{0} multiply(%f, %w), metadata={op_type="Mul" op_name="gradient_tape/model_1/dense_1/mul/Mul"}
  ROOT %u = f32[4]{0} subtract(%w, %g), metadata={op_type="Sub" op_name="adam/Sub_3"}
}
"""


@pytest.fixture(scope="module")
def tree():
    return build_scope_tree(hloviz.parse(POST))


def test_op_names_are_read_as_paths_with_phases():
    assert parse_op_name("model_1/dense_1/BiasAdd").scope == ("model_1", "dense_1")
    back = parse_op_name("gradient_tape/model_1/dense_1/MatMul/MatMul_1")
    assert back.phase == "backward" and back.scope[:2] == ("model_1", "dense_1")
    assert parse_op_name("gradients/dense/MatMul_grad/MatMul").phase == "backward"
    assert parse_op_name("adam/Mul_3").phase == "optimizer"
    assert parse_op_name("SGD/update/mul").phase == "optimizer"
    jax_fwd = parse_op_name("jit(train_step)/jvp(Transformer)/Block_0/Attention/dot_general")
    assert jax_fwd.scope == ("jit(train_step)", "Transformer", "Block_0", "Attention")
    assert jax_fwd.phase == "forward" and jax_fwd.op == "dot_general"
    jax_back = parse_op_name("jit(train_step)/transpose(jvp(Transformer))/Block_0/Attention/dot_general")
    assert jax_back.scope == jax_fwd.scope and jax_back.phase == "backward"
    assert parse_op_name("jit(f)/remat/jvp(Block)/mul").scope == ("jit(f)", "Block")
    # a JAX loop's body and a branch are their loop's / cond's scope (issue 31 item 4): the
    # primitive's segment and its computation's name are not scopes; TF's ``while`` scopes are
    assert parse_op_name("jit(f)/while/body/add").scope == ("jit(f)",)
    assert parse_op_name("jit(f)/ViT/while").scope == ("jit(f)", "ViT")  # the loop itself: op ``while``
    assert parse_op_name("jit(f)/while/cond/lt").scope == ("jit(f)",)
    assert parse_op_name("jit(f)/M/cond/branch_1_fun/sin").scope == ("jit(f)", "M")
    assert parse_op_name("jit(f)/while/body/vmap()/while/body_pred/gt").scope == ("jit(f)",)
    assert parse_op_name("rnn/scan/while/Tanh").scope == ("rnn", "scan", "while")
    assert parse_op_name("while/cond/mul").scope == ("while", "cond")
    assert parse_op_name("jit(f)/jit(relu)/max").scope == ("jit(f)", "relu")
    assert parse_op_name("Cos;PartitionedCall/Cos").scope == ()
    # JAX 0.10's names for lax.scan over a jax.checkpoint'ed layer, under jax.grad
    remat = parse_op_name("jit(f)/transpose(jvp(Stack))/while/body/closed_call/checkpoint/"
                          "rematted_computation/Dense/tanh")
    assert remat.scope == ("jit(f)", "Stack", "Dense") and remat.phase == "backward"
    call = parse_op_name("jit(f)/jvp(Stack)/while/body/closed_call")
    assert call.scope == ("jit(f)", "Stack") and call.op == "closed_call"
    assert split_segments("a/b(c/d)/e") == ["a", "b(c/d)", "e"]
    # a ``)`` with nothing open is text; an unclosed ``(`` holds the rest; empty parts dropped
    assert split_segments("a)/b(/c") == ["a)", "b(/c"]
    assert split_segments("/a/(b/c))/d//") == ["a", "(b/c))", "d"]
    assert split_segments("jit(f)//x") == ["jit(f)", "x"]


def test_a_remat_block_below_a_submodule_gets_its_own_gradient():
    # held-out round 83's BYOL (``benchmarks/heldout/round83_jax.py``): ``nn.remat`` blocks inside
    # an ``encoder`` submodule; JAX names their gradient by the path to the remat call, then the
    # call's forward path again. Read as ``ByolNet/encoder/ByolNet/encoder/block1`` it matched no
    # scope, and 64 % of the encoder's FLOPs (its blocks' gradients) were the encoder's own
    name = ("jit(byol_lars_step)/transpose(jvp(ByolNet.predict))/ByolNet/encoder/jvp(ByolNet.predict)/"
            "ByolNet/encoder/checkpoint/block1/conv/conv_general_dilated")
    forward = parse_op_name("jit(byol_lars_step)/jvp(ByolNet.predict)/ByolNet/encoder/checkpoint/block1/conv/"
                            "conv_general_dilated")
    back = parse_op_name(name)
    assert back.scope == forward.scope == ("jit(byol_lars_step)", "ByolNet.predict", "ByolNet", "encoder", "block1",
                                           "conv")
    assert back.phase == "backward" and forward.phase == "forward"
    # a module that shares a name with a transformation's function, not re-entered, stays
    assert parse_op_name("jit(f)/jvp(Net)/Net/Dense_0/dot_general").scope == ("jit(f)", "Net", "Net", "Dense_0")


def test_keras_reentry_suffix():
    assert keras_layer_name("block_5_expand_1") == "block_5_expand"
    assert keras_layer_name("einsum_1", {"einsum", "einsum_1"}) == "einsum_1"
    assert keras_layer_name("Conv1") == "Conv1"
    # Keras' own numbering under TF's: layers dense, dense_1, dense_2
    siblings = {"dense_1", "dense_1_2", "dense_2_1"}
    assert [keras_layer_name(n, siblings) for n in ("dense_1", "dense_1_2", "dense_2_1")] == \
        ["dense", "dense_1", "dense_2"]


SEQUENTIAL = """
HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x), metadata={op_name="sequential_1/dense_1/MatMul"}
  %b = f32[4]{0} negate(%a), metadata={op_name="sequential_1/dense_1_2/MatMul"}
  ROOT %c = f32[4]{0} negate(%b), metadata={op_name="sequential_1/dense_2_1/MatMul"}
}
"""


def test_keras_auto_named_layers_are_labelled_and_found_by_their_names():
    t = build_scope_tree(hloviz.parse(SEQUENTIAL), stage="pre")
    assert [s.label for s in present(t.get("sequential_1")).children] == ["dense", "dense_1", "dense_2"]
    assert [s.path for s in t.find("dense_1")] == ["sequential_1/dense_1_2"]  # the layer, not a guess
    assert [s.path for s in t.find("sequential/dense")] == ["sequential_1/dense_1"]
    # what a capture knows wins over the guess
    exact = build_scope_tree(hloviz.parse(SEQUENTIAL), stage="pre",
                             layers={"sequential_1/dense_2_1": "sequential/head"})
    assert present(exact.get("sequential_1/dense_2_1")).label == "head"


def test_layer_scopes_from_where_weights_are_read():
    from hloviz.capture.tf_graph import layer_scopes

    reads = [("sequential_1/dense_1_2/MatMul/ReadVariableOp/resource:0", "sequential/dense_1/kernel"),
             ("sequential_1/dense_1/BiasAdd/ReadVariableOp/resource:0", "sequential/dense/bias"),
             ("unrelated/ReadVariableOp/resource:0", "sequential/dense_2/kernel"),
             # a functional model's paths leave the model out
             ("mobilenetv2_1.00_224_1/Conv1_1/convolution/ReadVariableOp/resource:0", "Conv1/kernel")]
    assert layer_scopes(reads) == {"sequential_1": "sequential", "sequential_1/dense_1_2": "sequential/dense_1",
                                   "sequential_1/dense_1": "sequential/dense",
                                   "mobilenetv2_1.00_224_1/Conv1_1": "Conv1"}


def test_every_instruction_has_one_scope(tree):
    module = tree.module
    filed = [i for s in tree.walk() for i in s.instructions]
    assert len(filed) == module.instruction_count == len(set(map(id, filed)))
    for inst in module.instructions():
        assert inst in tree.scope_of(inst).instructions


def test_backward_belongs_to_the_layer_and_phases(tree):
    dense = tree.get("model_1/dense_1")
    assert dense is not None and dense.label == "dense" and dense.phase == "forward+backward"
    assert tree.get("model_1/dense_1/mul") is None  # the gradient of `mul` is the layer's
    assert tree.get("adam").phase == "optimizer"
    assert tree.root.phase == "forward+backward+optimizer"


def test_unnamed_instructions_by_computation(tree):
    own = tree.get("(main)")
    assert own is not None and own.kind == "unnamed"
    assert {i.name for i in own.instructions} == {"x", "w"}
    # fused parameters belong to the fusion's scope
    fused_p0 = tree.module.computation("fused").instruction("p0")
    assert tree.scope_of(fused_p0).path == "model_1/relu_1"


def test_a_fusion_spanning_two_layers_is_attributed_to_both(tree):
    assert tree.get("model_1/dense_1").kernels == ("f", "g")
    assert tree.get("model_1/relu_1").kernels == ("f",)
    assert {s.path for s in tree.scopes_of_kernel("f")} == {"model_1/dense_1", "model_1/relu_1"}
    assert [s.path for s in tree.kernel_spans("f", 1)] == ["model_1"]
    assert tree.root.kernels == ("f", "g", "u")


def test_find_by_path_layer_name_op_name_and_substring(tree):
    assert [s.path for s in tree.find("model_1/dense_1")] == ["model_1/dense_1"]
    assert [s.path for s in tree.find("model/dense")] == ["model_1/dense_1"]
    assert [s.path for s in tree.find("dense")] == ["model_1/dense_1"]
    assert [s.path for s in tree.find("model_1/relu_1/Relu")] == ["model_1/relu_1"]
    assert [s.path for s in tree.find("gradient_tape/model_1/dense_1/mul")] == ["model_1/dense_1"]
    assert [s.path for s in tree.find("rel")] == ["model_1/relu_1"]
    assert tree.find("nothing_like_it") == []
    # "did you mean" in the names stats --by scope prints (labels), which find takes back
    assert "model/dense" in tree.closest("dense_2")
    assert [s.path for s in tree.find(tree.closest("dense_2")[0])] == ["model_1/dense_1"]


def test_cut_and_quotient_graph(tree):
    assert [s.path for s in tree.cut(1)] == ["model_1", "adam", "(main)"]
    covered = sum(len(list(s.all_instructions())) for s in tree.cut(1))
    assert covered == tree.module.instruction_count
    g = tree.graph(1)
    assert set(g.nodes) == {"model_1", "adam", "(main)"}
    assert g.has_edge("(main)", "model_1") and g.has_edge("model_1", "adam")
    assert g["model_1"]["adam"]["bytes"] == 16


@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet50", "keras_transformer"])
def test_real_captures_file_every_instruction(name):
    cap = load_target(str(CAPTURES / name))
    for stage, module in (("pre", present(cap.pre_module())), ("post", present(cap.post_module()))):
        t = build_scope_tree(module, stage=stage)
        assert sum(len(s.instructions) for s in t.walk()) == module.instruction_count
        assert sum(t.root.phases.values()) == module.instruction_count
    assert set(t.root.kernels) == {k.name for k in present(t.kernel_report).kernels}


@pytest.mark.parametrize("name", ["keras_transformer", "jax_gpt_step"])
def test_an_unordered_tree_files_alike(name):
    """``ordered=False`` (the picture's tree) skips only the ordering: every instruction in the
    same scope with the same phase, every scope with the same instructions, labels and phases."""
    module = present(load_target(str(CAPTURES / name)).post_module())
    ordered, loose = build_scope_tree(module, stage="pre"), build_scope_tree(module, stage="pre", ordered=False)

    def filing(t):
        return {s.path: (s.kind, s.label, sorted(i.name for i in s.instructions), s.phases) for s in t.walk()}

    assert filing(loose) == filing(ordered)
    assert {i.name: (s.path, loose.phase_of(i)) for i, s in loose._of.items()} == \
        {i.name: (s.path, ordered.phase_of(i)) for i, s in ordered._of.items()}
    folder = CAPTURES / name
    text = (folder / "post.hlo").read_text() if (folder / "post.hlo").exists() else \
        gzip.decompress((folder / "post.hlo.gz").read_bytes()).decode()
    instructions = re.findall(r"^\s*(?:ROOT )?%?[\w.\-]+ = ", text, re.MULTILINE)
    assert sum(len(s.instructions) for s in loose.walk()) == len(instructions)


def test_transformer_reads_as_forward_backward_optimizer():
    cap = load_target(str(CAPTURES / "keras_transformer"))
    t = build_scope_tree(present(cap.post_module()), stage="post")
    for block in ("block_0", "block_1"):
        [s] = t.find(block)
        assert s.phase == "forward+backward", s
    [adam] = t.find("adam")
    assert "optimizer" in adam.phase
    # its only other work: the tape's sums of two gradients XLA fused into Adam's update kernels
    # (``op_type="AddN"``, no scope), backward wherever they run
    backward = [i for s in adam.walk() for i in s.instructions if t.phases.get(i) == "backward"]
    assert all(i.metadata.op_type == "AddN" and "/" not in i.metadata.op_name for i in backward), backward[:3]


def test_tree_as_nested_data(tree):
    data = tree.to_dict()
    assert data["kind"] == "root" and data["instructions"] == tree.module.instruction_count
    [model] = [c for c in data["children"] if c["path"] == "model_1"]
    assert [c["label"] for c in model["children"]] == ["dense", "relu"]
    assert model["kernels"] == ["f", "g"] and model["phase"] == "forward+backward"
    assert "children" not in tree.to_dict(depth=1)["children"][0]


# --- any op name at all -------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SEGMENT = st.text(alphabet="ab_1(/);", min_size=0, max_size=12)


@given(st.lists(_SEGMENT, min_size=1, max_size=6))
@settings(max_examples=200, deadline=None)
def test_every_instruction_is_filed_once_whatever_the_op_names(names):
    lines = [f'  %i{n} = f32[2]{{0}} negate(%i{n - 1}), metadata={{op_name="{name}"}}'
             for n, name in enumerate(names, 1)]
    text = "HloModule m\n\nENTRY %main (p: f32[2]) -> f32[2] {\n  %i0 = f32[2]{0} parameter(0)\n" \
        + "\n".join(lines).replace(f"  %i{len(names)} =", f"  ROOT %i{len(names)} =") + "\n}\n"
    module = hloviz.parse(text)
    t = build_scope_tree(module, stage="pre")
    filed = [i for s in t.walk() for i in s.instructions]
    assert len(filed) == len(set(map(id, filed))) == module.instruction_count
    assert all(s.kind == "root" for s in [t.root]) and not t.root.instructions
    for s in t.walk():
        assert t.get(s.path) is s
        # a scope's own path finds it, and only it; its label and name find scopes of this tree
        assert t.find(s.path) == [s], (s.path, t.find(s.path))
        for q in (s.label, s.name):
            found = t.find(q)
            assert found and all(t.get(f.path) is f for f in found), (q, found)
    t.graph(1)
    t.to_dict()


def test_a_kernels_phases_are_those_its_fused_ops_are_named_with():
    """Each fusion of a Keras training step is voted into its layers with the phases of its
    fused ops; the oracle reads the op names of each fused computation from the HLO text
    (``gradient_tape/…`` backward, ``adam/…`` the optimizer's) and checks the fusions whose ops
    all name one phase."""
    folder = CAPTURES / "keras_cnn_train"
    text = (folder / "post.hlo").read_text()
    bodies = dict(re.findall(r"^%?([\w.\-]+) \(.*?\{\n(.*?)^\}", text, re.MULTILINE | re.DOTALL))
    calls = dict(re.findall(r"^\s*(?:ROOT )?%?([\w.\-]+) = .* fusion\(.*?calls=%?([\w.\-]+)", text, re.MULTILINE))

    def named_phase(op_name: str) -> str:
        return "backward" if op_name.startswith("gradient_tape/") else \
            "optimizer" if op_name.startswith("adam/") else "forward"

    t = build_scope_tree(present(load_target(str(folder)).post_module()), stage="post")
    entry = present(t.module.entry)
    checked: dict[str, int] = {}
    for fusion_name, body in calls.items():
        names = re.findall(r'op_name="([^"]+)"', bodies[body])
        wanted = {named_phase(n) for n in names}
        if len(wanted) != 1:
            continue
        found = t.layers_with_phases(present(entry.get(fusion_name)))
        assert found and set().union(*(p for _s, p in found)) == wanted, (fusion_name, found)
        phase = wanted.pop()
        checked[phase] = checked.get(phase, 0) + 1
    assert set(checked) == {"forward", "backward", "optimizer"}, checked


# A tape's sum of two gradients names no layer (``gradient_tape/AddN``): its data flow does.
TAPE_SUM = """
HloModule m

ENTRY %main (x: f32[4], w: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %w = f32[4]{0} parameter(1)
  %a = f32[4]{0} multiply(%x, %w), metadata={op_type="Mul" op_name="model_1/dense_1/mul"}
  %g1 = f32[4]{0} multiply(%a, %w), metadata={op_type="Mul" op_name="gradient_tape/model_1/dense_1/mul/Mul"}
  %g2 = f32[4]{0} multiply(%a, %x), metadata={op_type="Mul" op_name="gradient_tape/model_1/dense_1/mul/Mul_1"}
  ROOT %s = f32[4]{0} add(%g1, %g2), metadata={op_type="AddN" op_name="gradient_tape/AddN"}
}
"""


def test_a_tapes_sum_of_gradients_goes_to_the_layer_it_sums():
    module = hloviz.parse(TAPE_SUM)
    for ordered in (True, False):
        t = build_scope_tree(module, stage="pre", ordered=ordered)
        s = present(module.entry).get("s")
        assert t.scope_of(present(s)).path == "model_1/dense_1"
        assert t.phase_of(present(s)) == "backward"

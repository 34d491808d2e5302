"""Names users recognise: parameters named after their variables and arguments, the user's own
lines, pytree argument specs, gzipped captures, and optimizer updates per layer."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import hloviz
from hloviz import api
from hloviz.analysis.provenance import is_library_path, parameter_names, user_source
from hloviz.analysis.updates import update_targets
from hloviz.capture import load_target
from hloviz.capture.specs import PytreeArg, TensorSpec, parse_convention
from hloviz.cli import app
from hloviz.errors import HloParseError
from hloviz.ir import Metadata

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "samples" / "captures"


def test_tf_parameters_are_named_after_arguments_and_keras_variables():
    cap = load_target(str(CAPTURES / "keras_transformer"))
    post = cap.post_module()
    names = {p.parameter_number: n for p, n in parameter_names(post, cap.info).items()}
    assert len(names) == len(post.entry.parameters) == 118
    assert names[0] == "tokens" and names[1] == "targets"
    assert names[2] == "transformer/token_embedding/embeddings"
    assert "transformer/block_0/attention/query/kernel" in names.values()
    assert "adam/transformer_logits_kernel_momentum" in names.values()
    # the shapes agree with the variables they are named after
    shapes = {n: p.shape.dims for p, n in parameter_names(post, cap.info).items()}
    assert shapes["transformer/token_embedding/embeddings"] == (256, 64)


def test_a_layers_weights_are_filed_in_the_layer():
    cap = load_target(str(CAPTURES / "keras_transformer"))
    _pre, post = api.scope_trees(cap, cap.info)
    names = parameter_names(post.module, cap.info)
    where = {n: post.scope_of(p).path for p, n in names.items()}
    assert where["transformer/block_0/attention/query/kernel"] == "transformer_1/block_0_1/attention_1/query_1"
    assert where["transformer/final_norm/gamma"] == "transformer_1/final_norm_1"
    assert where["adam/transformer_logits_kernel_momentum"] == "adam"
    assert post.scope_of(next(p for p, n in names.items() if n == "tokens")).kind == "unnamed"


def test_jax_parameters_are_named_by_their_pytree_path_from_the_hlo_alone():
    cap = load_target(str(CAPTURES / "jax_scopes"))
    post = cap.post_module()
    from_hlo = {n for n in parameter_names(post).values()}  # no capture info needed
    assert "params['Block_0']['Attention']['qkv']" in from_hlo and "tokens" in from_hlo
    assert set(cap.info["parameter_names"].values()) == from_hlo
    _pre, tree = api.scope_trees(cap, cap.info)
    qkv = next(p for p, n in parameter_names(post).items() if n == "params['Block_0']['Attention']['qkv']")
    assert tree.scope_of(qkv).path == "jit(train_step)/Transformer/Block_0/Attention"


def test_sgd_updates_are_attributed_to_the_layer_they_update():
    cap = load_target(str(CAPTURES / "jax_scopes"))
    _pre, post = api.scope_trees(cap, cap.info)
    targets = update_targets(post)
    # every parameter leaf is updated by one `p - 0.01 * g`: one subtraction per leaf, each
    # attributed to the scope holding that leaf's weight
    subs = {i: s for i, s in targets.items() if i.opcode == "subtract" and s is not None}
    leaves = [p for p in post.module.entry.parameters if p.metadata.op_name.startswith("params[")]
    assert len(leaves) == 14
    assert {s.path for s in subs.values()} == {post.scope_of(p).path for p in leaves}
    # and in the table, each of the 14 update kernels under exactly one layer
    result = CliRunner().invoke(app, ["stats", str(CAPTURES / "jax_scopes"), "--by", "scope", "--json"])
    rows = json.loads(result.stdout)["scopes"]
    [sgd] = [r for r in rows if r["label"] == "sgd"]
    layers = [r for r in rows if r["depth"] == 4 or r["label"] in ("Embed", "Head")]
    updates = [k for r in layers for k in r["phases"].get("optimizer", {}).get("kernels", [])]
    assert sorted(updates) == sorted(sgd["kernels"]) and len(updates) == 14


def test_user_source_never_points_into_a_library():
    tf_meta = Metadata(op_name="dense/MatMul", source_file="/venv/lib/python3.11/site-packages/tensorflow/"
                                                           "python/framework/ops.py", source_line=1221)
    assert user_source("dense/MatMul", tf_meta, {}) is None
    assert user_source("dense/MatMul", tf_meta, {"dense/MatMul": {"file": "model.py", "line": 7}}) == ("model.py", 7)
    assert user_source("x", Metadata(source_file="tensorflow/python/ops/math_ops.py", source_line=3)) is None
    assert user_source("x", Metadata(source_file="/home/me/model.py", source_line=3)) == ("/home/me/model.py", 3)
    assert is_library_path("keras/src/layers/core/dense.py") and not is_library_path("samples/model.py")


def test_stats_json_lists_named_parameters_and_no_library_lines():
    result = CliRunner().invoke(app, ["stats", str(CAPTURES / "keras_small_classify"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    params = {p["name"]: p for p in data["parameters"]}
    assert params["stem/kernel"]["shape"] == "f32[3,3,3,8]" and params["images"]["number"] == 0
    lines = [line for k in data["kernels"] for line in k["source_lines"]]
    assert lines and all(line.startswith("samples/keras_small.py:") for line in lines)


def test_pytree_specs_in_hloviz_args():
    specs = parse_convention([{"w": "f32[2,3]", "layers": [{"b": "f32[3]"}]}, "s32[4]"], where="HLOVIZ_ARGS['f']")
    tree, tokens = specs.positional
    assert isinstance(tree, PytreeArg) and tokens == TensorSpec("s32", (4,))
    assert tree.leaves() == [("['w']", TensorSpec("f32", (2, 3))), ("['layers'][0]['b']", TensorSpec("f32", (3,)))]
    assert tree.map(str) == {"w": "f32[2,3]", "layers": [{"b": "f32[3]"}]}
    with pytest.raises(HloParseError) as err:
        parse_convention([{"w": "f32[2,x]"}], where="HLOVIZ_ARGS['f']")
    assert "HLOVIZ_ARGS['f'][0]['w']" in str(err.value)
    # a dict that is not all specs is still passed as a Python value
    [literal] = parse_convention([{"mode": "fast"}], where="w").positional
    assert literal.value == {"mode": "fast"}


def test_a_capture_with_gzipped_hlo_reads_like_a_plain_one(tmp_path):
    plain = CAPTURES / "fused_additions"
    packed = tmp_path / "packed"
    shutil.copytree(plain, packed)
    for name in ("pre.hlo", "post.hlo"):
        (packed / f"{name}.gz").write_bytes(gzip.compress((packed / name).read_bytes()))
        (packed / name).unlink()
    a, b = load_target(str(plain)), load_target(str(packed))
    assert (a.pre_text, a.post_text) == (b.pre_text, b.post_text)
    assert b.post_filename.endswith("post.hlo.gz")
    assert hloviz.to_text(b.post_module()) == hloviz.to_text(a.post_module())


@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet50", "keras_transformer", "keras_small_train_step"])
def test_keras_layers_recorded_by_the_capture_match_the_rule(name):
    """``layer_scopes`` (each scope's Keras layer, from where its weights are read) and the rule
    that reads TF's suffixes name every layer alike on real models."""
    from hloviz.analysis import build_scope_tree

    cap = load_target(str(CAPTURES / name))
    layers = cap.info["layer_scopes"]
    assert len(layers) >= 4
    by_rule = build_scope_tree(cap.post_module())
    exact = build_scope_tree(cap.post_module(), layers=layers)
    for path, layer in layers.items():
        assert exact.get(path).label == layer.rsplit("/", 1)[-1]
        assert by_rule.get(path).label == exact.get(path).label, path

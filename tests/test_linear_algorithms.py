"""The analyses behind ``stats --json`` and ``stats --by scope`` grow linearly with the module.

Issue 32: ``stats --json`` computed every kernel's layer text once per kernel (n² calls of
``layers_with_phases``: 1.36M on a MobileNetV3 training step), and placing each named parameter
in its layer walked the whole scope tree (5.3M path matches on InceptionResNetV2). The tests
below count the calls of the inner functions on a real module and on ten copies of it
(:mod:`tests.scaling`: ten models side by side, ten times the kernels, scopes and parameters):
a linear algorithm makes about ten times the calls, a quadratic one a hundred times. Wall time
is never asserted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hloviz
from hloviz.analysis.opnames import split_segments
from hloviz.analysis.scopes import ScopeTree, build_scope_tree
from hloviz.analysis.scopes import find as scopes_module
from hloviz.analysis.scopes.find import ScopeIndex
from hloviz.api.stats import stats
from hloviz.capture import load_target

from .scaling import scaled_parameter_names, scaled_text

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def _names_of(module: hloviz.HloModule, numbered: dict[str, str]) -> dict[hloviz.Instruction, str]:
    entry = module.entry
    assert entry is not None
    by_number = {str(p.parameter_number): p for p in entry.parameters}
    return {by_number[n]: name for n, name in numbered.items() if n in by_number}


@pytest.fixture(scope="module")
def inception():
    cap = load_target(str(CAPTURES / "inception_v3"))
    info = json.loads((CAPTURES / "inception_v3" / "capture.json").read_text())
    post = cap.post_module()
    assert post is not None and post.entry is not None
    return post, info["parameter_names"]


def count_calls(monkeypatch, owner, name: str) -> list[int]:
    """Count the calls of ``owner.name`` from now on (``calls[0]``), for this test only."""
    calls = [0]
    inner = getattr(owner, name)

    def counted(*args, **kwargs):
        calls[0] += 1
        return inner(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_placing_parameters_matches_paths_linearly(inception, monkeypatch):
    post, numbered = inception
    base_params = len(post.entry.parameters)
    calls = count_calls(monkeypatch, scopes_module, "_matches_path")
    build_scope_tree(post, stage="post", parameter_names=_names_of(post, numbered))
    once = calls[0]
    assert once > 0, "the parameters' scopes were not looked up by path at all"

    big = hloviz.parse(scaled_text(post, 10))
    assert big.entry is not None
    names = scaled_parameter_names(numbered, base_params, 10)
    calls[0] = 0
    tree = build_scope_tree(big, stage="post", parameter_names=_names_of(big, names))
    ten = calls[0]
    # the names found their layers in the copies as in the original: copy 7's first conv kernel
    kernel = next(p for p in big.entry.parameters if names.get(str(p.parameter_number)) == "c7_conv2d/c7_kernel")
    assert tree.scope_of(kernel).path == "c7_inception_v3_1/c7_conv2d_1"
    assert ten <= 12 * once, f"10× the module made {ten / once:.0f}× the path matches (linear: about 10×)"


def test_layer_texts_of_stats_json_are_computed_once_per_kernel(tmp_path, monkeypatch):
    base = load_target(str(CAPTURES / "keras_cnn_train")).post_module()
    assert base is not None
    calls = count_calls(monkeypatch, ScopeTree, "layers_with_phases")
    counts = []
    for copies in (1, 10):
        path = tmp_path / f"x{copies}.hlo"
        path.write_text(scaled_text(base, copies))
        result = stats(post=path)
        calls[0] = 0
        out = result.to_dict()
        counts.append((calls[0], len(out["kernels"])))
    (once, kernels_1), (ten, kernels_10) = counts
    assert kernels_10 == 10 * kernels_1 > 0
    assert once <= 2 * kernels_1, f"{once} layer computations for {kernels_1} kernels"  # texts, and scopes_of_kernel
    assert ten <= 12 * once, f"10× the kernels made {ten / once:.0f}× the layer computations (linear: 10×)"


@pytest.mark.parametrize("capture", ["inception_v3", "mobilenet_v3_adam", "jax_gpt_step12", "keras_cnn_train",
                                     "transformer_train-tf2.21"])
def test_the_index_finds_what_the_tree_finds(capture):
    """ScopeIndex.find(q) is tree.find(q, substring=False): the same scopes, in the same order,
    for every parameter name and every way a scope can be named (path, name, label, tails,
    blocks, op names), on real captures."""
    cap = load_target(str(CAPTURES / capture))
    info = json.loads((CAPTURES / capture / "capture.json").read_text())
    for module, stage in ((cap.pre_module(), "pre"), (cap.post_module(), "post")):
        assert module is not None
        tree = build_scope_tree(module, stage=stage)
        index = ScopeIndex(tree)
        queries = {"", "/", "nothing_like_this", "gradient_tape", "adam", "jit(train_step)"}
        queries |= {n.rsplit("/", 1)[0] for n in (info.get("parameter_names") or {}).values()}
        for s in tree.walk():
            parts = split_segments(s.path)
            queries |= {s.path, s.name, s.label, s.display_path, "/".join(parts[-2:]), s.name.rsplit("_", 1)[0]}
            queries |= set(s.written_as)
        for inst in list(module.entry.instructions)[:200] if module.entry is not None else ():
            queries.add(inst.metadata.op_name)
        assert len(queries) > 50
        for q in sorted(queries):
            assert [x.path for x in index.find(q)] == [x.path for x in tree.find(q, substring=False)], q


def test_one_analysis_reads_the_pre_modules_names_and_live_values_once(monkeypatch):
    """The folding and the mapping of one ``analyze`` both ask what each pre-optimization op is
    called after inlining and which instructions are live: worked out once per module, and the
    same answers as asked alone (outside an analysis nothing is kept)."""
    from hloviz.analysis import analyze
    from hloviz.analysis.pre_post import folded, names
    from hloviz.capture import load_target

    cap = load_target(str(Path(__file__).resolve().parent.parent / "samples" / "captures" / "keras_cnn_train"))
    pre, post = cap.pre_module(), cap.post_module()
    alone_names, alone_live = names.post_names(pre), folded.live_ids(pre)
    assert names.post_names(pre) is not alone_names  # outside a block: worked out again
    name_calls = count_calls(monkeypatch, names, "_post_names")
    live_calls = count_calls(monkeypatch, folded, "_live_ids")
    result = analyze(pre, post, info=cap.info)
    assert name_calls[0] == 1 and live_calls[0] == 1
    with names.facts_kept():
        assert names.post_names(pre) == alone_names and folded.live_ids(pre) == alone_live
    assert result.mapping is not None and result.folding is not None


@pytest.mark.parametrize("capture", ["keras_cnn_train", "jax_gpt_step", "mobilenet_v3_adam"])
def test_the_stats_layer_column_reads_the_tree_as_filed_alike(capture):
    """``stats`` builds both modules' scope trees without putting them in program order (its
    layer column, the JSON's scopes and each op's layer are looked up per kernel or op); the
    oracle is the same lookups on the ordered trees, built as ``stats --by scope`` builds them."""
    from hloviz.analysis.scopes import build_scope_tree
    from hloviz.api import stats
    from hloviz.render.page.report import kernel_layer_texts

    result = stats(str(Path(__file__).resolve().parent.parent / "samples" / "captures" / capture))
    filed = result.post_tree
    assert filed is not None
    ordered = build_scope_tree(result.capture.post_module(), stage="post", kernel_report=result.analysis.kernels,
                               layers=result.info.get("layer_scopes") or None)
    assert result.kernel_layers() == kernel_layer_texts(ordered)
    for k in result.analysis.kernels.kernels:
        assert [s.path for s in filed.scopes_of_kernel(k.name)] == [s.path for s in ordered.scopes_of_kernel(k.name)]
    # and the JSON's layer of each op, read on the pre-optimization tree as filed
    from hloviz.analysis.scopes import TOP_LEVEL
    from hloviz.analysis.scopes.stats import user_path

    pre_ordered = build_scope_tree(result.capture.pre_module(), stage="pre",
                                   layers=result.info.get("layer_scopes") or None)
    mapping = result.to_dict()["mapping"]
    assert mapping
    for name, entry in mapping.items():
        s = pre_ordered.scope_of_op(name, entry.get("type") or "")
        assert entry["layer"] == (user_path(s, s.path) or TOP_LEVEL)

"""Pre→post mapping and the combined analysis with its verdict, on hand-written modules."""

from __future__ import annotations

import pytest

import hloviz
from hloviz.analysis import analyze, pre_to_post
from hloviz.errors import InputError

from . import present
from .test_analysis_folding import TF_FOLDED_POST, TF_FOLDED_PRE, TF_INFO, _chain_post, _chain_pre

PRE = """HloModule m

ENTRY %main (x: f32[8,4], w: f32[4,4]) -> f32[8,4] {
  %x = f32[8,4]{1,0} parameter(0), metadata={op_name="XLA_Args"}
  %w = f32[4,4]{1,0} parameter(1), metadata={op_name="XLA_Args"}
  %r = f32[8,4]{1,0} reshape(%x), metadata={op_type="Reshape" op_name="Reshape"}
  %d = f32[8,4]{1,0} dot(%r, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_type="MatMul" op_name="MatMul"}
  %s = f32[8,4]{1,0} sine(%d), metadata={op_type="Sin" op_name="Sin"}
  %c = f32[] constant(0), metadata={op_type="Relu" op_name="Relu"}
  %b = f32[8,4]{1,0} broadcast(%c), dimensions={}, metadata={op_type="Relu" op_name="Relu"}
  ROOT %m = f32[8,4]{1,0} maximum(%s, %b), metadata={op_type="Relu" op_name="Relu"}
}
"""

POST = """HloModule m, is_scheduled=true

%fused (p: f32[8,4]) -> f32[8,4] {
  %p = f32[8,4]{1,0} parameter(0)
  %s = f32[8,4]{1,0} sine(%p), metadata={op_type="Sin" op_name="Sin"}
  %c = f32[] constant(0), metadata={op_type="Relu" op_name="Relu"}
  %b = f32[8,4]{1,0} broadcast(%c), dimensions={}, metadata={op_type="Relu" op_name="Relu"}
  ROOT %m = f32[8,4]{1,0} maximum(%s, %b), metadata={op_type="Relu" op_name="Relu"}
}

ENTRY %main (x: f32[8,4], w: f32[4,4]) -> f32[8,4] {
  %x = f32[8,4]{1,0} parameter(0), metadata={op_name="XLA_Args"}
  %w = f32[4,4]{1,0} parameter(1), metadata={op_name="XLA_Args"}
  %d = f32[8,4]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_type="MatMul" op_name="MatMul"}
  ROOT %f = f32[8,4]{1,0} fusion(%d), kind=kLoop, calls=%fused, metadata={op_type="Relu" op_name="Relu"}
}
"""


def test_every_pre_op_maps_to_kernels_or_eliminated():
    mapping = pre_to_post(hloviz.parse(PRE), hloviz.parse(POST))
    assert [m.op_name for m in mapping.ops] == ["Reshape", "MatMul", "Sin", "Relu"]  # no XLA_Args
    assert present(mapping.get("MatMul")).kernels == ("d",) and present(mapping.get("MatMul")).status == "kernels"
    assert present(mapping.get("Sin")).kernels == ("f",) and present(mapping.get("Relu")).kernels == ("f",)
    reshape = present(mapping.get("Reshape"))
    assert (reshape.status, reshape.kernels, reshape.op_type, reshape.pre_instructions) == (
        "eliminated", (), "Reshape", 1)
    assert mapping.counts == {"kernels": 3, "folded": 0, "eliminated": 1, "no_op_name": 0, "no_work": 0}
    assert mapping.get("nope") is None


def test_folded_ops_map_to_their_constant():
    mapping = pre_to_post(hloviz.parse(_chain_pre(4)), hloviz.parse(_chain_post(4, "4")))
    assert [(m.op_name, m.status) for m in mapping.ops] == [
        ("add", "folded"), ("add_1", "folded"), ("add_2", "folded"), ("add_3", "kernels")]
    assert present(mapping.get("add_1")).constants == ("c",) and present(mapping.get("add_3")).kernels == ("f",)


def test_tf_only_ops_come_from_the_capture_info():
    mapping = pre_to_post(hloviz.parse(TF_FOLDED_PRE), hloviz.parse(TF_FOLDED_POST), info=TF_INFO)
    assert {m.op_name: m.status for m in mapping.ops} == {
        "Const": "no_work", "Const_1": "no_work", "mul": "folded", "Sin": "folded", "add": "folded",
        "Identity": "no_work"}
    assert mapping.no_work_types == {"Const": 2, "Identity": 1}
    assert present(mapping.get("mul")).constants == ("constant.1",) and present(mapping.get("mul")).op_type == "Mul"


def test_analyze_both_stages():
    a = analyze(hloviz.parse(PRE), hloviz.parse(POST))
    assert (present(a.pre).instructions, present(a.post).instructions) == (8, 9)
    assert (present(a.pre).op_names, present(a.post).op_names) == (4, 3)
    assert present(a.kernels).count == 2 and present(a.folding).folded == ()
    assert a.verdict == "4 ops → 2 kernels (dot; kLoop fusion: broadcast, maximum, sine): 3 in kernels, 1 eliminated"


def test_analyze_verdict_names_the_folded_constant():
    a = analyze(hloviz.parse(_chain_pre(10)), hloviz.parse(_chain_post(10, "10")))
    assert a.verdict == "10 ops → 1 kernel (kLoop fusion: add, broadcast): 1 in kernels, 9 folded into 1 constant (10) by XLA"


def test_analyze_tensorflow_folds():
    a = analyze(hloviz.parse(TF_FOLDED_PRE), hloviz.parse(TF_FOLDED_POST), info=TF_INFO)
    assert a.verdict == ("6 ops → 1 kernel (copy): 3 folded into 1 constant "
                         "({4.84147072, 10.909297, 18.1411209}) by TensorFlow, 3 no work (2 Const, Identity)")
    b = analyze(hloviz.parse(TF_FOLDED_PRE), hloviz.parse(TF_FOLDED_POST))
    assert b.verdict == "1 instruction doing work (the HLO names no ops) → 1 kernel (copy)"  # no graph: no claim


def test_analyze_one_stage_only():
    post_only = analyze(None, hloviz.parse(POST))
    assert post_only.pre is None and post_only.folding is None and post_only.mapping is None
    assert present(post_only.kernels).count == 2
    assert post_only.verdict.startswith("2 kernels (dot; kLoop fusion: broadcast, maximum, sine): 1 fusion, 1 unfused")
    assert "no pre-optimization module" in post_only.verdict
    pre_only = analyze(hloviz.parse(PRE), None)
    assert pre_only.kernels is None and pre_only.post is None
    assert pre_only.verdict == "5 instructions doing work before optimization (no optimized module, so no kernels)"
    with pytest.raises(InputError):
        analyze(None, None)


JAX_PRE = """HloModule jit_f

%relu (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %z = f32[] constant(0)
  %b = f32[4]{0} broadcast(%z), dimensions={}, metadata={op_name="max"}
  ROOT %m = f32[4]{0} maximum(%a, %b), metadata={op_name="max"}
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0), metadata={op_name="x"}
  %t = f32[4]{0} tanh(%x), metadata={op_name="jit(f)/tanh"}
  ROOT %c = f32[4]{0} call(%t), to_apply=%relu, metadata={op_name="jit(f)/jit(relu)"}
}
"""

JAX_POST = """HloModule jit_f, is_scheduled=true

%fused (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %t = f32[4]{0} tanh(%p), metadata={op_name="jit(f)/tanh"}
  %z = f32[] constant(0)
  %b = f32[4]{0} broadcast(%z), dimensions={}, metadata={op_name="jit(f)/jit(relu)/max"}
  ROOT %m = f32[4]{0} maximum(%t, %b), metadata={op_name="jit(f)/jit(relu)/max"}
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0), metadata={op_name="x"}
  ROOT %f = f32[4]{0} fusion(%x), kind=kLoop, calls=%fused
}
"""


def test_inlined_calls_are_followed_by_their_prefixed_names():
    from hloviz.analysis.pre_post.names import post_names

    pre = hloviz.parse(JAX_PRE)
    assert post_names(pre) == {"max": frozenset({"max", "jit(f)/jit(relu)/max"}),
                               "jit(f)/tanh": frozenset({"jit(f)/tanh"}),
                               "jit(f)/jit(relu)": frozenset({"jit(f)/jit(relu)"})}
    mapping = pre_to_post(pre, hloviz.parse(JAX_POST))
    # parameters' names ("x") are not ops; the call maps to the kernel its body went into
    assert {m.op_name: (m.status, m.kernels) for m in mapping.ops} == {
        "max": ("kernels", ("f",)), "jit(f)/tanh": ("kernels", ("f",)), "jit(f)/jit(relu)": ("kernels", ("f",))}

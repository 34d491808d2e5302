"""Constant folding between hand-written pre/post modules shaped like TensorFlow's output."""

from __future__ import annotations

import hloviz
from hloviz.analysis import constant_folding
from hloviz.analysis.pre_post.folded import SHORT_LITERAL

from . import present


def _chain_pre(n: int) -> str:
    """``x + 1 + 1 + … + 1`` (n adds) the way TF lowers it: each AddV2 a constant, a broadcast, an add."""
    lines = ["HloModule chain", "", "ENTRY %main (x: f32[4]) -> f32[4] {", "  %x = f32[4]{0} parameter(0)",
             '  %r = f32[4]{0} reshape(%x)']
    prev = "r"
    for k in range(n):
        op = "add" if k == 0 else f"add_{k}"
        md = f'metadata={{op_type="AddV2" op_name="{op}"}}'
        lines += [f"  %{op}.c = f32[] constant(1), {md}",
                  f"  %{op}.b = f32[4]{{0}} broadcast(%{op}.c), dimensions={{}}, {md}",
                  f"  {'ROOT ' if k == n - 1 else ''}%{op}.a = f32[4]{{0}} add(%{prev}, %{op}.b), {md}"]
        prev = f"{op}.a"
    return "\n".join(lines + ["}", ""])


def _chain_post(n: int, value: str) -> str:
    last = f"add_{n - 1}"
    md = f'metadata={{op_type="AddV2" op_name="{last}"}}'
    return f"""HloModule chain, is_scheduled=true

%fused_computation (p: f32[4]) -> f32[4] {{
  %p = f32[4]{{0}} parameter(0)
  %c = f32[] constant({value})
  %b = f32[4]{{0}} broadcast(%c), dimensions={{}}, {md}
  ROOT %a = f32[4]{{0}} add(%p, %b), {md}
}}

ENTRY %main (x: f32[4]) -> f32[4] {{
  %x = f32[4]{{0}} parameter(0)
  ROOT %f = f32[4]{{0}} fusion(%x), kind=kLoop, calls=%fused_computation, {md}
}}
"""


def test_chained_constant_adds_fold_into_one_constant():
    pre, post = hloviz.parse(_chain_pre(10)), hloviz.parse(_chain_post(10, "10"))
    report = constant_folding(pre, post)
    [f] = report.folded
    assert (f.constant, f.computation, f.value, f.shape, f.by) == ("c", "fused_computation", "10", "f32[]", "xla")
    assert f.from_ops == ("add",) + tuple(f"add_{k}" for k in range(1, 9))  # add … add_8, in order
    assert f.into == ("add_9",)
    assert report.folded_ops == frozenset(f.from_ops)
    assert report.constants_of("add_3") == (f,) and report.constants_of("add_9") == ()


def test_the_value_is_the_post_literal_never_a_count():
    # a post module claiming 7 (not the 10 the chain adds up to): hloviz reports what the HLO says
    [f] = constant_folding(hloviz.parse(_chain_pre(10)), hloviz.parse(_chain_post(10, "7"))).folded
    assert f.value == "7"


def test_constants_carried_through_unchanged_are_not_folds():
    pre = hloviz.parse(_chain_pre(1))
    post = hloviz.parse(_chain_post(1, "1"))
    assert constant_folding(pre, post).folded == ()


def test_nothing_folds_when_the_addend_is_a_parameter():
    text = """HloModule m

ENTRY %main (x: f32[4], d: f32[]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %d = f32[] parameter(1)
  %b = f32[4]{0} broadcast(%d), dimensions={}, metadata={op_name="add"}
  ROOT %a = f32[4]{0} add(%x, %b), metadata={op_name="add"}
}
"""
    m = hloviz.parse(text)
    assert constant_folding(m, hloviz.parse(text)).folded == ()


SUBGRAPH_PRE = """HloModule m

ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3]{0} parameter(0)
  %c1 = f32[3]{0} constant({1, 2, 3}), metadata={op_name="Const"}
  %c2 = f32[3]{0} constant({4, 5, 6}), metadata={op_name="Const_1"}
  %m = f32[3]{0} multiply(%c1, %c2), metadata={op_type="Mul" op_name="mul"}
  %s = f32[3]{0} sine(%c1), metadata={op_type="Sin" op_name="Sin"}
  %a = f32[3]{0} add(%m, %s), metadata={op_type="AddV2" op_name="add"}
  ROOT %y = f32[3]{0} multiply(%x, %a), metadata={op_type="Mul" op_name="mul_1"}
}
"""

SUBGRAPH_POST = """HloModule m, is_scheduled=true

ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3]{0} parameter(0)
  %k = f32[3]{0} constant({4.84147072, 10.909297, 18.1411209}), metadata={op_type="AddV2" op_name="add"}
  ROOT %y = f32[3]{0} multiply(%x, %k), metadata={op_type="Mul" op_name="mul_1"}
}
"""


def test_a_constant_subgraph_folds_into_one_literal():
    report = constant_folding(hloviz.parse(SUBGRAPH_PRE), hloviz.parse(SUBGRAPH_POST))
    [f] = report.folded
    assert f.value == "{4.84147072, 10.909297, 18.1411209}"
    assert set(f.from_ops) == {"add", "mul", "Sin"}  # the constant's own op_name counts too
    assert f.into == ("mul_1",)
    assert {"m", "s", "a"} <= set(f.from_instructions)


def test_long_or_elided_literals_are_reported_by_shape():
    values = ", ".join(str(v) for v in range(40))
    pre = SUBGRAPH_PRE
    post = SUBGRAPH_POST.replace("f32[3]", "f32[40]").replace("{4.84147072, 10.909297, 18.1411209}",
                                                              "{" + values + "}")
    pre = pre.replace("f32[3]", "f32[40]")
    [f] = constant_folding(hloviz.parse(pre), hloviz.parse(post)).folded
    assert len("{" + values + "}") > SHORT_LITERAL
    assert f.value == "f32[40]"


def test_an_elided_literal_says_its_value_was_not_printed():
    from hloviz.analysis.pre_post.folded import literal_value

    module = hloviz.parse(SUBGRAPH_POST.replace("f32[3]", "f32[9,9]").replace(
        "{4.84147072, 10.909297, 18.1411209}", "{...}"))
    k = next(i for i in module.instructions() if i.name == "k")
    assert literal_value(k).startswith("f32[9,9] (") and "not printed" in literal_value(k)  # never the shape alone


# TensorFlow folds constant subgraphs itself before XLA: the pre-opt HLO already holds the literal.
TF_FOLDED_PRE = """HloModule m

ENTRY %main () -> f32[3] {
  %constant.1 = f32[3]{0} constant({4.84147072, 10.909297, 18.1411209})
  %r = f32[3]{0} reshape(%constant.1), metadata={op_name="XLA_Retvals"}
  %t = (f32[3]{0}) tuple(%r), metadata={op_name="XLA_Retvals"}
  ROOT %g = f32[3]{0} get-tuple-element(%t), index=0, metadata={op_name="XLA_Retvals"}
}
"""
TF_FOLDED_POST = """HloModule m, is_scheduled=true

ENTRY %main () -> f32[3] {
  %constant.1 = f32[3]{0} constant({4.84147072, 10.909297, 18.1411209}), metadata={op_name="XLA_Retvals"}
  ROOT %copy = f32[3]{0} copy(%constant.1)
}
"""
TF_INFO = {
    "tf_ops": {"Const": "Const", "Const_1": "Const", "mul": "Mul", "Sin": "Sin", "add": "AddV2",
               "Identity": "Identity"},
    "tf_inputs": {"Const": [], "Const_1": [], "mul": ["Const", "Const_1"], "Sin": ["Const"],
                  "add": ["mul:0", "Sin:0"], "Identity": ["add"]},
}


def test_folds_made_by_tensorflow_before_xla_need_the_graph():
    pre, post = hloviz.parse(TF_FOLDED_PRE), hloviz.parse(TF_FOLDED_POST)
    assert constant_folding(pre, post).folded == ()  # XLA folded nothing
    assert constant_folding(pre, post, {"tf_ops": TF_INFO["tf_ops"]}).folded == ()  # no edges: no claim
    [f] = constant_folding(pre, post, TF_INFO).folded
    assert (f.by, f.constant, f.value) == ("tensorflow", "constant.1", "{4.84147072, 10.909297, 18.1411209}")
    assert f.from_ops == ("mul", "Sin", "add") and f.into == ()


def test_tensorflow_folds_into_a_consumer_op():
    pre = """HloModule m

ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3]{0} parameter(0)
  %k = f32[3]{0} constant({4.84147072, 10.909297, 18.1411209}), metadata={op_type="Mul" op_name="mul_1"}
  ROOT %y = f32[3]{0} multiply(%x, %k), metadata={op_type="Mul" op_name="mul_1"}
}
"""
    info = {"tf_ops": {**TF_INFO["tf_ops"], "x": "Placeholder", "mul_1": "Mul"},
            "tf_inputs": {**TF_INFO["tf_inputs"], "x": [], "mul_1": ["x", "add"], "Identity": ["mul_1"]}}
    [f] = constant_folding(hloviz.parse(pre), hloviz.parse(pre), info).folded
    assert f.by == "tensorflow" and f.constant == "k" and f.into == ("mul_1",)
    assert f.from_ops == ("mul", "Sin", "add")


def test_a_vanished_constant_subgraph_with_no_new_constant_is_still_computed():
    pre = """HloModule m

ENTRY %main (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %z = f32[] constant(0), metadata={op_name="Const"}
  %c = f32[] convert(%z), metadata={op_name="Cast"}
  %n = f32[] negate(%c), metadata={op_name="Neg"}
  ROOT %a = f32[] add(%x, %n), metadata={op_name="add"}
}
"""
    post = """HloModule m, is_scheduled=true

ENTRY %main (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %z = f32[] constant(0)
  ROOT %a = f32[] add(%x, %z), metadata={op_name="add"}
}
"""
    report = constant_folding(hloviz.parse(pre), hloviz.parse(post))
    assert report.folded == ()  # 0 was already a constant: nothing new was written
    assert report.computed == ("Cast", "Neg") and report.folded_ops == {"Cast", "Neg"}
    from hloviz.analysis import analyze

    a = analyze(hloviz.parse(pre), hloviz.parse(post))
    assert {m.op_name: m.status for m in present(a.mapping).ops} == {
        "Const": "no_work", "Cast": "folded", "Neg": "folded", "add": "kernels"}
    assert present(present(a.mapping).get("Const")).op_type == "constant"  # no op_type in the metadata: its opcodes
    assert a.verdict == "4 ops → 1 kernel (add): 1 in kernels, 2 folded into no new constant, 1 no work (constant)"

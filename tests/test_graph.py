"""The networkx view and the module self-check."""

from __future__ import annotations

import hloviz
from hloviz.graph import check, node_id, to_networkx
from hloviz.ir import Instruction, Shape

from . import entry_of, root_of

TEXT = """\
HloModule m

%fused (p0: f32[4], p1: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  %p1 = f32[4]{0} parameter(1)
  ROOT %mul = f32[4]{0} multiply(%p0, %p1), metadata={op_name="mul"}
}

ENTRY %main (a: f32[4], b: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %b = f32[4]{0} parameter(1)
  %f = f32[4]{0} fusion(%a, %b), kind=kLoop, calls=%fused
  ROOT %n = f32[4]{0} negate(%f), control-predecessors={%a}
}
"""


def test_nodes_carry_the_documented_attributes():
    g = to_networkx(hloviz.parse(TEXT))
    mul = g.nodes["fused/mul"]
    assert mul["opcode"] == "multiply" and mul["category"] == "elementwise"
    assert mul["fusion"] == "main/f" and mul["computation"] == "fused" and mul["is_root"]
    assert mul["op_name"] == "mul" and mul["shape"] == "f32[4]{0}" and mul["line"] == 6
    assert g.nodes["main/a"]["category"] == "parameter" and g.nodes["main/a"]["fusion"] is None


def test_edges_carry_operand_index_and_call_kinds():
    g = to_networkx(hloviz.parse(TEXT))
    operand = [(u, d["index"]) for u, _, d in g.in_edges("main/f", data=True) if d["kind"] == "operand"]
    assert operand == [("main/a", 0), ("main/b", 1)]
    params = {(u, v, d["index"]) for u, v, d in g.edges(data=True) if d["kind"] == "call-parameter"}
    assert params == {("main/a", "fused/p0", 0), ("main/b", "fused/p1", 1)}
    assert [(u, v) for u, v, d in g.edges(data=True) if d["kind"] == "call-root"] == [("fused/mul", "main/f")]
    assert [(u, v) for u, v, d in g.edges(data=True) if d["kind"] == "control"] == [("main/a", "main/n")]


def test_check_is_clean_for_parsed_modules_and_reports_broken_ones():
    m = hloviz.parse(TEXT)
    assert check(m) == []
    n = entry_of(m).instruction("n")
    stray = Instruction("ghost", "negate", Shape("f32", (4,)))
    n.operands = [stray]
    problems = [str(p) for p in check(m)]
    assert any("main/n" in p and "operand 0 ('ghost') is not defined" in p for p in problems)
    f = entry_of(m).instruction("f")
    n.operands = [f]
    f.operands = [n]
    assert any("cycle" in str(p) and "f" in str(p) for p in check(m))


def test_node_id_is_computation_slash_name():
    m = hloviz.parse(TEXT)
    assert node_id(root_of(m)) == "main/n"

"""``diff_modules``: renamed copies come out unchanged; one injected change is reported exactly."""

from __future__ import annotations

import json
from collections import Counter

import pytest

import hloviz
from hloviz.analysis.diff import ChangeKind, Status, diff_modules

from . import entry_of, present
from .conftest import CONFORMANCE
from .diffkit import change_constant, change_opcode, edited, insert_after, layered_module, renamed_copy

MANIFEST = json.loads((CONFORMANCE / "MANIFEST.json").read_text()) if CONFORMANCE.exists() else []
ACCEPTED = [e["file"] for e in MANIFEST if e["xla_parses"]]
TF_MODULES = ["graphsage_tf.hlo", "ssd_mobilenet_tf.hlo"]

needs_corpus = pytest.mark.skipif(not CONFORMANCE.exists(), reason="the conformance corpus is not next to the repo")


def _text(name: str) -> str:
    return (CONFORMANCE / name).read_text()


def _names(module) -> set[str]:
    """Instruction names, leaving out those of computations the parser made up (async sugar)."""
    return {i.name for c in module.computations if not c.synthetic for i in c.instructions}


def _not_unchanged(d):
    return [x for x in d.instructions if x.status is not Status.UNCHANGED]


@needs_corpus
@pytest.mark.parametrize("name", ACCEPTED)
def test_a_renamed_reordered_copy_is_100_percent_unchanged(name):
    text = _text(name)
    a = hloviz.parse(text)
    for seed, drop_metadata in ((1, False), (2, True)):
        b = renamed_copy(text, seed=seed, drop_metadata=drop_metadata)
        assert _names(a).isdisjoint(_names(b)) and {c.name for c in a.computations}.isdisjoint(
            c.name for c in b.computations if not c.synthetic)
        d = diff_modules(a, b)
        assert _not_unchanged(d) == [], (seed, drop_metadata)
        assert d.summary.unchanged == a.instruction_count == b.instruction_count
        assert all(c.status is Status.UNCHANGED for c in d.computations)
        assert d.comparable and d.warnings == ()
        assert len(d.matches) == a.instruction_count


@needs_corpus
@pytest.mark.parametrize("name", TF_MODULES)
def test_one_changed_constant_is_reported_exactly(name):
    text = _text(name)
    a = hloviz.parse(text)
    target = [i for i in entry_of(a).instructions if i.opcode == "constant" and i.shape.rank == 0 and i.literal != "7"][3]
    b = renamed_copy(edited(text, lambda m: change_constant(m, target.name, "7")), drop_metadata=True)
    [change] = _not_unchanged(diff_modules(a, b))
    assert change.status is Status.CHANGED and change.before is entry_of(a).instruction(target.name)
    assert [(c.kind, c.before, c.after) for c in change.changes] == [(ChangeKind.CONSTANT, target.literal, "7")]


@needs_corpus
@pytest.mark.parametrize("name", TF_MODULES)
def test_one_changed_opcode_is_reported_exactly(name):
    text = _text(name)
    a = hloviz.parse(text)
    target = [i for i in entry_of(a).instructions if i.opcode in ("add", "multiply")][-2]
    new = "subtract" if target.opcode == "add" else "divide"
    b = renamed_copy(edited(text, lambda m: change_opcode(m, target.name, new)), drop_metadata=True)
    d = diff_modules(a, b)
    [change] = _not_unchanged(d)
    assert change.before is entry_of(a).instruction(target.name) and present(change.after).opcode == new
    assert [(c.kind, c.before, c.after) for c in change.changes] == [(ChangeKind.OPCODE, target.opcode, new)]
    assert d.summary.opcode_deltas and {x.opcode for x in d.summary.opcode_deltas} == {target.opcode, new}


@needs_corpus
@pytest.mark.parametrize("name", TF_MODULES)
def test_one_inserted_instruction_is_added_and_its_user_rewired(name):
    text = _text(name)
    a = hloviz.parse(text)
    users = entry_of(a).users()
    target = next(i for i in entry_of(a).instructions if i.opcode == "add" and len(users[i]) == 1)
    [user] = users[target]
    b = renamed_copy(edited(text, lambda m: insert_after(m, target.name)), drop_metadata=True)
    d = diff_modules(a, b)
    s = d.summary
    assert (s.changed, s.added, s.removed) == (1, 1, 0)
    [added] = d.by_status("added")
    assert present(added.after).opcode == "negate"
    [changed] = d.by_status("changed")
    assert changed.before is user
    [c] = changed.changes
    k = user.operands.index(target)
    assert c.kind is ChangeKind.OPERANDS and c.before == f"#{k} {target.name}" and c.after == f"#{k} {present(added.after).name}"
    assert s.kernels.before > 0 and s.kernels.after - s.kernels.before == 1  # the one negate is one more kernel
    # The other direction: the same instruction removed.
    back = diff_modules(b, a)
    assert (back.summary.changed, back.summary.added, back.summary.removed) == (1, 0, 1)
    assert present(back.by_status("removed")[0].before).opcode == "negate"


FUSED_BEFORE = """HloModule before
%fused (p0: f32[8]) -> f32[8] {
  %p0 = f32[8]{0} parameter(0)
  ROOT %e = f32[8]{0} exponential(%p0), metadata={op_name="Exp"}
}
ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %n = f32[8]{0} negate(%x), metadata={op_name="Neg"}
  %f = f32[8]{0} fusion(%n), kind=kLoop, calls=%fused, metadata={op_name="Exp"}
  ROOT %t = f32[8]{0} tanh(%f), metadata={op_name="Tanh"}
}
"""

FUSED_AFTER = """HloModule after
%fused_computation.7 (param_0: f32[8]) -> f32[8] {
  %param_0 = f32[8]{0} parameter(0)
  %negate.2 = f32[8]{0} negate(%param_0), metadata={op_name="Neg"}
  %exponential.3 = f32[8]{0} exponential(%negate.2), metadata={op_name="Exp"}
  ROOT %tanh.4 = f32[8]{0} tanh(%exponential.3), metadata={op_name="Tanh"}
}
ENTRY %main.9 (Arg_0: f32[8]) -> f32[8] {
  %Arg_0 = f32[8]{0} parameter(0)
  ROOT %fusion.7 = f32[8]{0} fusion(%Arg_0), kind=kLoop, calls=%fused_computation.7, metadata={op_name="Tanh"}
}
"""


def test_ops_that_moved_into_a_fusion_are_changed_with_how():
    d = diff_modules(hloviz.parse(FUSED_BEFORE), hloviz.parse(FUSED_AFTER))
    s = d.summary
    assert (s.kernels.before, s.kernels.after) == (3, 1)
    moved = {present(x.before).name: present(x.after).name for x in s.moved_into_fusions}
    assert moved == {"n": "negate.2", "t": "tanh.4"}
    for x in s.moved_into_fusions:
        fusion = [c for c in x.changes if c.kind is ChangeKind.FUSION]
        assert fusion and fusion[0].before == "unfused" and fusion[0].after == "in fusion.7"
    pairs = {x.before.name: x.after.name for x in d.instructions if x.before and x.after}
    assert pairs["e"] == "exponential.3" and pairs["f"] == "fusion.7" and pairs["x"] == "Arg_0"
    kernels = Counter(k.status for k in s.kernel_diffs)
    assert kernels == Counter({Status.REMOVED: 2, Status.CHANGED: 1})
    notes = sorted(k.note for k in s.kernel_diffs if k.status is Status.REMOVED)
    assert notes == ["now in fusion.7 (negate.2)", "now in fusion.7 (tanh.4)"]


def test_different_entry_signatures_still_diff_with_a_warning():
    other = FUSED_AFTER.replace("f32[8]", "f32[16]")
    d = diff_modules(hloviz.parse(FUSED_AFTER), hloviz.parse(other))
    assert not d.comparable
    assert len(d.warnings) == 1 and "(f32[8]) -> f32[8] (before) vs (f32[16]) -> f32[16] (after)" in d.warnings[0]
    # Everything still pairs up, and every pair reports the new shape.
    assert d.summary.added == d.summary.removed == 0
    assert all(ChangeKind.SHAPE in x.kinds for x in d.instructions if x.opcode != "fusion")


def test_layout_only_changes_are_layout_not_shape():
    a = hloviz.parse("HloModule a\nENTRY %e (x: f32[2,3]) -> f32[3,2] {\n  %x = f32[2,3]{1,0} parameter(0)\n"
                     "  ROOT %t = f32[3,2]{1,0} transpose(%x), dimensions={1,0}\n}\n")
    b = hloviz.parse("HloModule b\nENTRY %e (x: f32[2,3]) -> f32[3,2] {\n  %x = f32[2,3]{1,0} parameter(0)\n"
                     "  ROOT %t = f32[3,2]{0,1} transpose(%x), dimensions={1,0}\n}\n")
    [x] = _not_unchanged(diff_modules(a, b))
    assert [(c.kind, c.before, c.after) for c in x.changes] == [(ChangeKind.LAYOUT, "f32[3,2]{1,0}", "f32[3,2]{0,1}")]


def test_results_are_deterministic():
    text = _text("ssd_mobilenet_tf.hlo") if CONFORMANCE.exists() else FUSED_BEFORE
    a = hloviz.parse(text)
    b = renamed_copy(edited(text, lambda m: None), seed=5)

    def key(d):
        return [(x.status, x.before.name if x.before else None, x.after.name if x.after else None)
                for x in d.instructions]

    assert key(diff_modules(a, b)) == key(diff_modules(a, b))


@pytest.mark.slow
def test_a_large_module_matches_exactly_the_known_differences():
    layers = 1000  # 16k instructions per side; benchmarks/ measures the 300k case
    a = hloviz.parse(layered_module(layers, 0))
    b = hloviz.parse(layered_module(layers, 1))
    d = diff_modules(a, b)
    changed_constants = sum(1 for k in range(layers) if k % 20 == 7)
    negates = sum(1 for k in range(layers) if k % 50 == 13)
    got = Counter((x.status, x.opcode, tuple(sorted(c.kind.value for c in x.changes)))
                  for x in d.instructions if x.status is not Status.UNCHANGED)
    assert got == Counter({
        (Status.CHANGED, "constant", ("constant",)): changed_constants,
        (Status.CHANGED, "fusion", ("calls",)): changed_constants,
        (Status.ADDED, "negate", ()): negates,
        (Status.CHANGED, "fusion", ("operands",)): negates,
    })
    assert (d.summary.kernels.before, d.summary.kernels.after) == (6 * layers + 1, 6 * layers + 1 + negates)
    # Every block's dot pairs with the dot of the same layer.
    for x in d.instructions:
        if x.opcode == "dot":
            assert present(x.before).name.split("_", 1)[1] == present(x.after).name.split("_", 1)[1]

"""The diff's reports, checks and picture data, on small modules with known differences."""

from __future__ import annotations

import pytest

import hloviz
from hloviz.analysis.diff import Status, diff_modules
from hloviz.analysis.diff.checks import CHECKS, failed_checks
from hloviz.analysis.diff.picture import picture_marks
from hloviz.analysis.diff.report import to_json, to_markdown, to_text
from hloviz.errors import InputError

from .test_diff_match import FUSED_AFTER, FUSED_BEFORE


@pytest.fixture(scope="module")
def fused():
    return diff_modules(hloviz.parse(FUSED_BEFORE), hloviz.parse(FUSED_AFTER))


def test_picture_marks_pair_kernels_by_number_and_colour_the_rest(fused):
    before, after = picture_marks(fused)
    # The fusion is the one kernel on both sides: pair #1, changed.
    assert (before["f"].number, after["fusion.7"].number) == (1, 1)
    assert before["f"].status is after["fusion.7"].status is Status.CHANGED
    # n and t were kernels; now they run inside the fusion: removed kernels, with a note.
    assert before["n"].status is Status.REMOVED and before["n"].kernel and "now in fusion.7" in before["n"].note
    # Inside the fusion, the ops that moved in are changed (not kernels of their own).
    assert after["negate.2"].status is Status.CHANGED and not after["negate.2"].kernel
    assert "x" not in before and "Arg_0" not in after  # unchanged, not kernels: no mark


def test_checks(fused):
    assert failed_checks(fused, ["any-change", "kernels-increased", "kernels-decreased", "fusions-changed"]) == [
        "any-change", "kernels-decreased", "fusions-changed"]
    assert failed_checks(fused, []) == []
    with pytest.raises(InputError, match="unknown --fail-on check 'nope'"):
        failed_checks(fused, ["nope"])
    same = diff_modules(hloviz.parse(FUSED_AFTER), hloviz.parse(FUSED_AFTER))
    assert failed_checks(same, list(CHECKS)) == []


def test_limits_cut_lists_and_say_how_many_were_left_out(fused):
    text = to_text(fused, "a", "b", limit=1)
    assert "… 2 more (--limit 0 shows all)" in text
    data = to_json(fused, "a", "b", limit=1)
    assert len(data["instructions"]) == 1 and data["instructions_left_out"] == 2
    assert len(to_json(fused, "a", "b")["instructions"]) == 3


def test_markdown_cells_escape_pipes():
    a = FUSED_BEFORE.replace("%n = f32[8]{0} negate(%x)", '%n = f32[8]{0} custom-call(%x), custom_call_target="a|b"')
    d = diff_modules(hloviz.parse(a), hloviz.parse(FUSED_AFTER))
    md = to_markdown(d, "x|y", "b")
    assert "custom-call a\\|b" in md and "`x|y`" in md.splitlines()[0]


def test_json_lists_every_difference_with_its_changes(fused):
    data = to_json(fused, "a", "b")
    by_name = {(x["before"] or {}).get("name"): x for x in data["instructions"]}
    assert by_name["n"]["status"] == "changed" and by_name["n"]["after"]["computation"] == "fused_computation.7"
    assert by_name["n"]["changes"] == [{"kind": "fusion", "before": "unfused", "after": "in fusion.7"}]
    assert by_name["n"]["matched_by"] in ("bottom-up", "top-down", "subgraph", "leftover", "opcode")
    assert {k["status"] for k in data["kernels"]["differ"]} == {"removed", "changed"}

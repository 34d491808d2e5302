"""Diff summaries add up, on every pair of captures in the repository.

``fusions added − removed = after − before`` and the same for kernels; "changed" and
"unchanged" pair only like with like (a fusion with a fusion, an unfused instruction with an
unfused one). The issue's example: the transformer's two versions said ``44 added, 3 removed``
with ``fusion 157 → 223``, and paired a ``get-tuple-element`` with ``wrapped_scatter``.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import pytest

import hloviz
from hloviz.analysis import kernels
from hloviz.analysis.diff import Status, diff_modules
from hloviz.analysis.diff.report import summary_lines, to_json

CAPTURES = sorted(p for p in (Path(__file__).resolve().parent.parent / "samples" / "captures").iterdir()
                  if (p / "post.hlo").is_file())
_MODULES: dict[tuple[str, str], hloviz.HloModule] = {}


def _module(folder: Path, stage: str) -> hloviz.HloModule:
    key = (folder.name, stage)
    if key not in _MODULES:
        _MODULES[key] = hloviz.parse_file(folder / f"{stage}.hlo")
    return _MODULES[key]


def _fusions(module: hloviz.HloModule) -> int:
    return sum(1 for i in module.instructions() if i.opcode == "fusion")


def check_adds_up(a: hloviz.HloModule, b: hloviz.HloModule) -> None:
    d = diff_modules(a, b)
    s = d.summary
    # fusions: every fusion instruction of either side is in exactly one bucket
    assert (s.fusions_before, s.fusions_after) == (_fusions(a), _fusions(b))
    assert len(s.fusions_added) - len(s.fusions_removed) == _fusions(b) - _fusions(a)
    for x in s.fusions_changed:
        assert x.before.opcode == x.after.opcode == "fusion"
    # kernels: the same, with the count show/stats print
    assert (s.kernels.before, s.kernels.after) == (kernels(a).count, kernels(b).count)
    k = Counter(x.status for x in s.kernel_diffs)
    assert k[Status.ADDED] - k[Status.REMOVED] == s.kernels.after - s.kernels.before
    assert k[Status.UNCHANGED] + k[Status.CHANGED] + k[Status.REMOVED] == s.kernels.before
    assert k[Status.UNCHANGED] + k[Status.CHANGED] + k[Status.ADDED] == s.kernels.after
    for x in s.kernel_diffs:
        if x.before is not None and x.after is not None:  # like with like: fusion with fusion
            assert (x.before.opcode == "fusion") == (x.after.opcode == "fusion"), (x.before.name, x.after.name)
    # the printed summary and the JSON say those numbers
    rows = dict(summary_lines(d))
    fa, fb = s.fusions_before, s.fusions_after
    assert rows["fusions"].startswith(f"{fa} → {fb} ")
    added, removed = (int(n) for n in re.search(r"(\d+) added, (\d+) removed", rows["fusions"]).groups())
    assert added - removed == fb - fa
    word = "kernels" if s.optimized else "instructions doing work"
    added, removed = (int(n) for n in re.search(r"(\d+) added, (\d+) removed", rows[word]).groups())
    assert added - removed == s.kernels.after - s.kernels.before
    j = to_json(d, "a", "b")
    assert len(j["fusions"]["added"]) - len(j["fusions"]["removed"]) == j["fusions"]["after"] - j["fusions"]["before"]


PAIRS = list(itertools.combinations(CAPTURES, 2))


@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a.name}~{b.name}" for a, b in PAIRS])
def test_every_pair_of_optimized_captures_adds_up(a, b):
    check_adds_up(_module(a, "post"), _module(b, "post"))


VERSIONS = [(a, b) for a, b in PAIRS if a.name.endswith("-tf2.17") and b.name == a.name.replace("2.17", "2.21")]


@pytest.mark.parametrize("a,b", VERSIONS, ids=[a.name for a, _ in VERSIONS])
def test_version_pairs_add_up_both_ways_and_before_optimization(a, b):
    check_adds_up(_module(b, "post"), _module(a, "post"))
    check_adds_up(_module(a, "pre"), _module(b, "pre"))


def test_a_fusion_that_replaced_a_non_fusion_is_added_and_notes_it():
    """The transformer: TF 2.21 wraps 2.17's ``reduce-window`` kernels in loop fusions. The matcher
    pairs them; the summary reports the fusion added and the reduce-window removed, each naming
    the other, and no changed fusion has a non-fusion side."""
    root = CAPTURES[0].parent
    d = diff_modules(_module(root / "transformer_train-tf2.17", "post"),
                     _module(root / "transformer_train-tf2.21", "post"))
    s = d.summary
    added = {x.after.name: x.before for x in s.fusions_added}
    assert added["wrapped_reduce-window"].opcode == "reduce-window"
    assert added["wrapped_scatter"].opcode == "get-tuple-element"
    by_note = {x.note: x.status for x in s.kernel_diffs}
    assert by_note["replaces reduce-window (a reduce-window)"] is Status.ADDED
    assert by_note["replaced by wrapped_reduce-window (a kLoop fusion)"] is Status.REMOVED
    j = to_json(d, "a", "b")
    entry = next(e for e in j["fusions"]["added"] if e["after"] == "wrapped_reduce-window")
    assert entry["replaces"] == {"name": "reduce-window", "opcode": "reduce-window"}

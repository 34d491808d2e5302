"""The explorer builds each module's scope tree once for all of its pictures
(:func:`hloviz.analysis.scopes.scope_trees_reused`, inside :func:`hloviz.render.reuse.drawings_reused`,
which keeps each tree of units too), and the page is the same as when every picture built its own.

The oracle for the tree is the HLO text itself: every instruction's ``op_name`` read with a
regular expression says which scope path the instruction is filed under (its op name without
the last part), for the trees built inside and outside the block alike. The oracle for the page
is the page built with reuse switched off: the same explorer data, byte for byte.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

import hloviz
from hloviz.analysis import scopes as scopes_module
from hloviz.analysis.scopes import build_scope_tree, scope_trees_reused

from .test_explorer import read_hlo

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "samples" / "captures"


def _module(capture: str = "resblock_relu", stage: str = "pre"):
    return hloviz.parse(read_hlo(CAPTURES / capture / f"{stage}.hlo"))


def test_inside_the_block_a_module_tree_is_built_once_per_stage_and_order():
    m = _module()
    with scope_trees_reused():
        a = build_scope_tree(m, stage="pre", ordered=False)
        assert build_scope_tree(m, stage="pre", ordered=False) is a
        assert build_scope_tree(m, stage="pre") is not a  # ordered: another tree
        assert build_scope_tree(m, stage="pre") is build_scope_tree(m, stage="pre")
        assert build_scope_tree(m, stage="post", ordered=False) is not a
        other = _module()  # the same text, another module object: never answered from m's tree
        assert build_scope_tree(other, stage="pre", ordered=False) is not a


def test_outside_the_block_nothing_is_kept_and_blocks_nest():
    m = _module()
    assert build_scope_tree(m, stage="pre") is not build_scope_tree(m, stage="pre")
    with scope_trees_reused():
        with scope_trees_reused():
            a = build_scope_tree(m, stage="pre")
        assert build_scope_tree(m, stage="pre") is a  # the outer block still holds it
    assert build_scope_tree(m, stage="pre") is not a


def test_a_tree_with_kernels_or_parameter_names_is_never_shared():
    from hloviz.analysis.kernels import kernels

    post = _module(stage="post")
    report = kernels(post)
    with scope_trees_reused():
        plain = build_scope_tree(post, stage="post")
        with_kernels = build_scope_tree(post, stage="post", kernel_report=report)
        assert with_kernels is not plain
        assert build_scope_tree(post, stage="post", kernel_report=report) is not with_kernels


def test_a_reused_tree_files_every_instruction_where_its_op_name_says():
    text = read_hlo(CAPTURES / "resblock_relu" / "pre.hlo")
    m = hloviz.parse(text)
    # name → scope of its op name (the op name less its last part), from the text alone
    expected = {}
    for line in text.splitlines():
        name = re.match(r"\s*(?:ROOT\s+)?%?([\w.\-]+) = ", line)
        op = re.search(r'op_name="([^"]*)"', line)
        if name and op and "/" in op.group(1) and not op.group(1).startswith(("gradient_tape", "XLA_")):
            expected[name.group(1)] = op.group(1).rsplit("/", 1)[0]
    assert len(expected) >= 20
    with scope_trees_reused():
        build_scope_tree(m, stage="pre")
        reused = build_scope_tree(m, stage="pre")
    fresh = build_scope_tree(m, stage="pre")
    by_name = {i.name: i for i in m.instructions()}
    for name, path in expected.items():
        assert reused.scope_of(by_name[name]).path == path, name
    assert all(reused.scope_of(i).path == fresh.scope_of(i).path for i in m.instructions())


@pytest.mark.requires_dot
@pytest.mark.parametrize("capture", ["resblock_relu", "keras_small_classify"])
def test_the_page_is_the_same_with_and_without_reuse(capture, monkeypatch):
    from hloviz.analysis import analyze
    from hloviz.capture import load_target
    from hloviz.render.page.explorer import Bounds, pair_payload
    from hloviz.render.pictures import pair_picture

    cap = load_target(str(CAPTURES / capture))
    pre, post = cap.pre_module(), cap.post_module()
    assert pre is not None and post is not None
    analysis = analyze(pre, post, info=cap.info)
    picture = pair_picture(pre, post, analysis, info=cap.info, title=capture)

    def page() -> tuple[str, int]:
        calls = 0
        build = scopes_module.build_scope_tree

        def counted(*args, **kwargs):
            nonlocal calls
            calls += 1
            return build(*args, **kwargs)

        with monkeypatch.context() as patch:
            patch.setattr(scopes_module, "build_scope_tree", counted)
            # bounds out of the way: what a page holds must not hang on how busy the machine is
            payload = pair_payload(pre, post, analysis, picture, info=cap.info,
                                   bounds=Bounds(seconds=600, timeout=300))
        return payload.blocks + payload.later + (payload.picture_svg or ""), calls

    reused, asked = page()
    monkeypatch.setattr("hloviz.analysis.scopes.scope_trees_reused", contextlib.nullcontext)
    monkeypatch.setattr("hloviz.render.reuse.drawings_reused", contextlib.nullcontext)  # nor trees of units
    every_time, _ = page()
    assert reused == every_time
    assert asked > 2  # the pictures did ask for trees (the count the reuse saves)

"""An explorer page's pictures that only open another block share their module's tree and fitted
cut (:mod:`hloviz.render.fitreuse`), and draw what they drew when each built its own.

The oracle is the same pictures drawn outside the block (each one's own tree, as before), and
the page built with the reuse switched off: the same DOT text, the same page bytes.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

import pytest

from hloviz.render import fitreuse, layers
from hloviz.render.dot import to_dot
from hloviz.render.fitreuse import fits_reused
from hloviz.render.views import ViewOptions, draw_module

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def _counted(monkeypatch) -> list[int]:
    calls = [0]
    build = layers.scope_tree

    def counted(*args, **kwargs):
        calls[0] += 1
        return build(*args, **kwargs)

    monkeypatch.setattr(layers, "scope_tree", counted)
    return calls


def test_pictures_opening_blocks_and_repeats_draw_as_each_with_its_own_tree(monkeypatch):
    from hloviz.capture import load_target

    cap = load_target(str(CAPTURES / "mobilenet_v2"))
    module = cap.pre_module()
    assert module is not None
    options = ViewOptions(budget=40)  # MobileNetV2's repeated blocks closed, a ×3 among them
    top = draw_module(module, options=options, info=cap.info)
    assert top.cut is not None
    repeats = [n for n in top.cut.nodes if n.kind == "repeat"]
    blocks = [n for n in top.cut.nodes if not n.is_leaf and n.kind != "repeat"]
    assert any(len(n.children) > 2 for n in repeats) and len(blocks) >= 2
    big = next(n for n in repeats if len(n.children) > 2)  # opening it restructures its tree
    opens = [(), (blocks[0].key,), (big.key,), (blocks[1].key,), (big.key, f"{big.key}/x:more"), (blocks[0].key,),
             (repeats[0].key,), ()]

    def draw_all() -> list[str]:
        return [to_dot(draw_module(module, options=replace(options, open=keys), info=cap.info).scene)
                for keys in opens]

    calls = _counted(monkeypatch)
    alone = draw_all()
    every_time = calls[0]
    with fits_reused():
        shared = draw_all()
    assert shared == alone
    assert len(set(alone)) >= 5  # the openings do draw different pictures
    # the plain and block openings after the first answered from the kept tree; a repeat's not
    assert calls[0] - every_time <= every_time - 4


@pytest.mark.requires_dot
def test_the_page_is_the_same_with_and_without_the_kept_trees(monkeypatch):
    from hloviz.analysis import analyze
    from hloviz.capture import load_target
    from hloviz.render.explorer import Bounds, pair_payload
    from hloviz.render.pictures import pair_picture

    cap = load_target(str(CAPTURES / "mobilenet_v2"))  # its blocks open in place, repeats among them
    pre, post = cap.pre_module(), cap.post_module()
    assert pre is not None and post is not None
    analysis = analyze(pre, post, info=cap.info)
    picture = pair_picture(pre, post, analysis, info=cap.info, title="mobilenet_v2")
    # the bounds out of the way but the number of views (a short test): each kind gets 6

    def page() -> tuple[str, int]:
        with monkeypatch.context() as patch:
            calls = _counted(patch)
            payload = pair_payload(pre, post, analysis, picture, info=cap.info,
                                   bounds=Bounds(max_views=6, seconds=600, timeout=300))
        return payload.blocks + payload.later + (payload.picture_svg or ""), calls[0]

    kept, fewer = page()
    monkeypatch.setattr(fitreuse, "fits_reused", contextlib.nullcontext)
    every_time, more = page()
    assert kept == every_time
    assert fewer < more  # blocks opened in place did reuse their column's tree

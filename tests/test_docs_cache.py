"""The docs picture cache's key (hloviz/docs/pictures.py) without Graphviz: every option that
changes a picture's bytes gives another file, the page's own text (alt, caption) does not, a
changed capture gives another file, and a picture in the cache is not drawn again.

Drawing is replaced by a stand-in that records what it was asked for, so each test says by hand
which requests must be drawn."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from hloviz.docs.pictures import DocPicture, PictureCache, parse_options

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "samples" / "captures" / "matmul_chain-tf2.21"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    drawn: list[DocPicture] = []

    def draw(source, pic):
        drawn.append(pic)
        # an SVG of the kind hloviz writes (in the SVG namespace), or the cache's check refuses it
        return f'<svg xmlns="http://www.w3.org/2000/svg"><!-- {pic.theme} {pic.scope} {len(drawn)} --></svg>'

    monkeypatch.setattr(PictureCache, "_draw", staticmethod(draw))
    c = PictureCache(tmp_path / "cache")
    c.drawn = drawn  # type: ignore[attr-defined]
    return c


#: One value other than the default for each option that changes the picture.
CHANGED = {"stage": "pre", "scope": "dense", "focus": "dot.1", "depth": 2, "budget": 50, "color_by": "scope",
           "theme": "dark", "width": "50%", "max_height": "30em", "wrap": "off", "aspect": 1.5, "memory": True}


@pytest.mark.parametrize("option", sorted(CHANGED))
def test_each_drawing_option_is_part_of_the_key(cache, option):
    base = DocPicture(str(CAPTURE), stage="post")
    other = replace(base, **{option: CHANGED[option]})
    a, _ = cache.picture(base)
    b, _ = cache.picture(other)
    assert a != b, f"{option} changes the picture, so it must change the cached file"
    assert len(cache.drawn) == 2


def test_the_page_text_is_not_part_of_the_key_and_a_cached_picture_is_not_drawn_again(cache):
    base = DocPicture(str(CAPTURE), stage="post")
    first = cache.picture(base)
    again = cache.picture(replace(base, alt="another alt", caption="another caption", timeout=5))
    assert again == first and len(cache.drawn) == 1
    fresh = PictureCache(cache.folder)  # the next build: a new cache object over the same folder
    assert fresh.picture(base) == first and len(cache.drawn) == 1, "read from the folder, not drawn"


def test_a_changed_capture_file_gives_another_picture(cache, tmp_path):
    cap = tmp_path / "capture"
    shutil.copytree(CAPTURE, cap)
    pic = DocPicture(str(cap), stage="post")
    before, _ = cache.picture(pic)
    post = cap / "post.hlo"
    post.write_text(post.read_text() + "\n", encoding="utf-8")  # same file names, other bytes
    after, _ = cache.picture(pic)
    assert before != after and len(cache.drawn) == 2


def test_directive_options_reach_the_key(cache):
    light = parse_options(str(CAPTURE), {"stage": "post", "theme": "light"})
    dark = parse_options(str(CAPTURE), {"stage": "post", "theme": "dark"})
    assert cache.picture(light)[0] != cache.picture(dark)[0]
    assert [p.theme for p in cache.drawn] == ["light", "dark"]


def test_options_are_read_under_the_names_render_gives_them():
    pic = parse_options("t", {"color-by": "scope", "max-height": "30em", "depth": "2", "aspect": "1.5",
                              "memory": "true", "caption": "c"})
    assert (pic.color_by, pic.max_height, pic.depth, pic.aspect, pic.memory, pic.caption) == \
        ("scope", "30em", 2, 1.5, True, "c")

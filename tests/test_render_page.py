"""Pictures fit for a page (hloviz.render.page.page): title and description for screen readers,
size for a docs column, light / dark / auto themes — on Graphviz's real output and on a small
SVG written here."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from hloviz.errors import InputError
from hloviz.render.page.page import PageOptions, for_page

from . import run_cli
from .docsites import ROOT

SVG_NS = "{http://www.w3.org/2000/svg}"
# The shape of what Graphviz writes: fixed size in points, a white slab, black-edged arrows.
GRAPHVIZ = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<svg width="200pt" height="100pt"
 viewBox="0.00 0.00 200.00 100.00" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">
<g id="graph0" class="graph" transform="scale(1 1) rotate(0) translate(4 96)">
<title>hloviz</title>
<polygon fill="white" stroke="transparent" points="-4,4 -4,-96 196,-96 196,4 -4,4"/>
<g id="edge1" class="edge"><title>a&#45;&gt;b</title>
<path fill="none" stroke="#616161" d="M10,-10C20,-20 30,-30 40,-40"/>
<polygon fill="#616161" stroke="#616161" points="40,-40 41,-41 42,-42 40,-40"/>
</g>
</g>
</svg>
"""


def test_the_picture_is_named_and_described_for_screen_readers():
    out = for_page(GRAPHVIZ, title="m · post-optimization", description="3 ops → 1 kernel <fast> & small")
    root = ET.fromstring(out.split("?>", 1)[1])
    assert root.get("role") == "img"
    title, desc = root[0], root[1]
    assert (title.tag, desc.tag) == (SVG_NS + "title", SVG_NS + "desc")
    assert title.text == "m · post-optimization" and desc.text == "3 ops → 1 kernel <fast> & small"
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert (root.get("width"), root.get("height")) == ("200pt", "100pt"), "no size asked: Graphviz's own"
    assert "<style>" not in out, "light is Graphviz's own colours"


def test_applying_it_twice_is_applying_it_once_and_the_same_input_gives_the_same_bytes():
    once = for_page(GRAPHVIZ, PageOptions(theme="auto"), title="t", description="d")
    assert for_page(once, PageOptions(theme="dark"), title="x") == once
    assert for_page(GRAPHVIZ, PageOptions(theme="auto"), title="t", description="d") == once
    other = for_page(GRAPHVIZ.replace("40,-40", "41,-40"), PageOptions(theme="auto"), title="t", description="d")
    ids = {re.search(r'class="hloviz (hz[0-9a-f]+)"', s).group(1) for s in (once, other)}  # type: ignore[union-attr]
    assert len(ids) == 2, "two pictures inlined in one page never share ids"


def test_width_and_max_height_let_the_picture_scale_into_a_column():
    out = for_page(GRAPHVIZ, PageOptions(width="100%", max_height="30em"), title="t")
    root = ET.fromstring(out.split("?>", 1)[1])
    assert root.get("width") is None and root.get("height") is None
    assert root.get("style") == "width:100%;height:auto;max-height:30em"
    assert root.get("viewBox") == "0.00 0.00 200.00 100.00", "the aspect ratio stays"
    assert "width:640px" in for_page(GRAPHVIZ, PageOptions(width="640"), title="t")


@pytest.mark.parametrize(("options", "message"), [
    ({"theme": "sepia"}, "--theme must be one of light, dark, auto"),
    ({"width": "wide"}, "--width must be a CSS length"),
    ({"max_height": "10px; background: red"}, "--max-height must be a CSS length"),
])
def test_bad_page_options_are_input_errors(options, message):
    with pytest.raises(InputError, match=message):
        PageOptions(**options)


def test_dark_recolours_what_is_drawn_on_the_slab_and_auto_keys_it_on_the_scheme():
    dark = for_page(GRAPHVIZ, PageOptions(theme="dark"), title="t")
    css = re.search(r"<style>(.*)</style>", dark).group(1)  # type: ignore[union-attr]
    ident = re.search(r'class="hloviz (hz[0-9a-f]+)"', dark).group(1)  # type: ignore[union-attr]
    assert f"svg.{ident} .graph>polygon:first-of-type{{fill:transparent" in css
    assert f'svg.{ident} .edge path[stroke="#616161"]' in css and "stroke:#d0d7de" in css
    auto = for_page(GRAPHVIZ, PageOptions(theme="auto"), title="t")
    css = re.search(r"<style>(.*)</style>", auto).group(1)  # type: ignore[union-attr]
    assert css.startswith("@media (prefers-color-scheme:dark){:is(svg.")
    assert f"[data-md-color-scheme=slate] svg.{ident}" in css and f"[data-theme=dark] svg.{ident}" in css


@pytest.mark.requires_dot
def test_render_writes_a_themed_titled_svg_and_jupyter_shows_the_same(tmp_path, capsys):
    out = tmp_path / "x.svg"
    code, _, err = run_cli(["render", str(ROOT / "samples" / "captures" / "fused_additions"), "--stage", "both",
                            "--theme", "auto", "--width", "100%", "-o", str(out)], capsys)
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    root = ET.fromstring(text.split("?>", 1)[1])
    assert root.get("role") == "img" and root.get("style") == "width:100%;height:auto"
    assert root[1].text == "1003 ops → 1 kernel (kLoop fusion: 1000 add, broadcast): 1000 in kernels, 3 no work " \
                           "(2 Placeholder, Identity)"
    assert "<text" in text, "text stays text"
    code, _, err = run_cli(["render", str(ROOT / "samples" / "captures" / "fused_additions"), "--theme", "sepia",
                            "-o", str(tmp_path / "y.svg")], capsys)
    assert code == 2 and "--theme must be one of light, dark, auto" in err and not (tmp_path / "y.svg").exists()

    from hloviz import api

    picture = api.render(str(ROOT / "samples" / "captures" / "fused_additions"), stage="both", theme="auto",
                         width="100%")
    assert picture._repr_svg_() == text

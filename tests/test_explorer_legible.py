"""The explorer opens on the overview, legible (issue 33): at the zoom a page opens with, every
label of its picture is 10 pt or more on the screen — for ``render -o x.html`` (the first view)
and for a diff's explorer (``diff A B -o x.html``) — and the fit button still shows it whole.

The oracle is the browser's own layout: the picture's on-screen width over its ``viewBox`` width
(SVG units are points) times each text's ``font-size``, in CSS points (4/3 pixel)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.cli import main

from .browser import chromium, open_page, problems

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

pytestmark = [pytest.mark.requires_dot, pytest.mark.requires_chromium, pytest.mark.slow]

#: each text's size on the screen, in points, and the picture's box in the viewport
_MEASURE = """() => {
  const svg = document.querySelector('#hv-viewport svg');
  const r = svg.getBoundingClientRect(), vp = document.querySelector('#hv-viewport').getBoundingClientRect();
  const perUnit = r.width / svg.viewBox.baseVal.width;  // CSS px per SVG unit (a point)
  const sizes = [...svg.querySelectorAll('text[font-size]')].map(t => parseFloat(t.getAttribute('font-size')) * perUnit * 0.75);
  return {least: Math.min(...sizes), count: sizes.length, width: r.width, height: r.height,
          vw: vp.width, vh: vp.height};
}"""


def _run(args: list[str]) -> None:
    try:
        code = main(args)
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None), args


def _opened(html: Path) -> tuple[dict, dict]:
    """What the page shows when it opens, and after the fit button."""
    with chromium() as browser:
        loaded = open_page(browser, html, width=1400, height=900)
        page = loaded.page
        first = page.evaluate(_MEASURE)
        page.locator("[data-zoom='fit']").first.click()
        whole = page.evaluate(_MEASURE)
        assert not problems(loaded), problems(loaded)
    return first, whole


def test_a_diff_explorer_opens_with_its_text_at_10_pt_or_more(tmp_path):
    out = tmp_path / "d.html"
    _run(["diff", str(CAPTURES / "resblock_relu"), str(CAPTURES / "resblock_gelu"), "-o", str(out)])
    first, whole = _opened(out)
    assert first["count"] > 20 and first["least"] >= 10 - 0.01, first
    # the picture is bigger than the window at that size; fit shows it smaller, its width whole
    assert first["height"] > first["vh"], first
    assert whole["width"] <= whole["vw"] + 1 and whole["least"] < first["least"], whole


def test_the_first_view_of_render_html_is_the_overview_at_10_pt_or_more(tmp_path):
    out = tmp_path / "r.html"
    _run(["render", str(CAPTURES / "inception_v3"), "--stage", "both", "-o", str(out)])
    first, _ = _opened(out)
    assert first["least"] >= 10 - 0.01, first
    # at most the overview's 24 boxes in each column of the first view (outlined nodes)
    html = out.read_text(encoding="utf-8")
    svg = html[html.index("<svg"):html.index("</svg>")]
    columns = re.split(r"<text[^>]*>(?:before|after) optimization</text>", svg)[1:]
    assert len(columns) == 2
    for column in columns:
        boxes = len(re.findall(r'<g id="node\d+" class="node">\s*<title>[^<]*</title>\s*'
                               r'(?:<g [^>]*>\s*<a [^>]*>\s*)?<(?:polygon|path)', column))
        assert 4 <= boxes <= 24, boxes

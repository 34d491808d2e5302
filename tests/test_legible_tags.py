"""Text legible in the default pictures (issue 33, goal 4): every label of the overview of every
saved capture, and of every diff pair's overview, is 10 pt or more and none runs under a kernel
tag (the ``#n`` cell on the right of a box).

The oracle is the browser's own layout: Chromium draws each SVG and reports the box of every text
it drew (``getBBox``, mapped to the picture's coordinates) and of every tag cell — the one cell
of a label drawn with a border (``BORDER="1"``: an outline ``fill="none" stroke="#424242"``),
found from the SVG's structure, not from the renderer's code. Graphviz sizes cells by Pango's
measure of the text; the browser draws the same font a little wider, which is what ran the ends
of long rows under the tags.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hloviz.cli import main

from .browser import chromium

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

pytestmark = [pytest.mark.requires_dot, pytest.mark.requires_chromium, pytest.mark.slow]

#: The diff pairs of samples/captures (the same function under two releases, or two variants).
PAIRS = [("fused_additions-tf2.17", "fused_additions-tf2.21"), ("matmul_chain-tf2.17", "matmul_chain-tf2.21"),
         ("transformer_train-tf2.17", "transformer_train-tf2.21"), ("widen_64", "widen_96"),
         ("resblock_relu", "resblock_gelu"), ("loops_vit", "loops_vit_relu")]

#: For each box or frame: its tag cells (the bordered outline) and every text's box; a text
#: inside a tag cell is the tag's own; any other text overlapping a tag cell is hidden under it.
_MEASURE = """() => {
  const svg = document.querySelector('svg');
  const box = el => { const b = el.getBBox(), m = el.getCTM();
    const p = svg.createSVGPoint(), q = svg.createSVGPoint();
    p.x = b.x; p.y = b.y; q.x = b.x + b.width; q.y = b.y + b.height;
    const a = p.matrixTransform(m), c = q.matrixTransform(m);
    return [Math.min(a.x, c.x), Math.min(a.y, c.y), Math.max(a.x, c.x), Math.max(a.y, c.y)]; };
  const inside = (t, c) => c[0] <= t[0] + 1 && t[2] <= c[2] + 1 && c[1] <= t[1] + 1 && t[3] <= c[3] + 1;
  const out = {tags: 0, texts: 0, fonts: [], hidden: []};
  for (const g of svg.querySelectorAll('g.node, g.cluster')) {
    const cells = [...g.querySelectorAll('polygon[fill="none"][stroke="#424242"]')].map(box);
    out.tags += cells.length;
    for (const t of g.querySelectorAll('text')) {
      out.texts += 1;
      out.fonts.push(parseFloat(t.getAttribute('font-size')));
      const b = box(t);
      for (const c of cells) {
        if (inside(b, c)) continue;
        const dx = Math.min(b[2], c[2]) - Math.max(b[0], c[0]), dy = Math.min(b[3], c[3]) - Math.max(b[1], c[1]);
        if (dx > 0.5 && dy > 0.5) out.hidden.push(`${t.textContent} (${dx.toFixed(1)} pt under a tag)`);
      }
    }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def page():
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 800, "height": 600})  # type: ignore[attr-defined]
        yield context.new_page()


def _draw(args: list[str], out: Path) -> Path:
    try:
        code = main([*args, "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None), args
    return out


def _measure(page, svg: Path) -> dict:
    page.goto(svg.resolve().as_uri())
    return page.evaluate(_MEASURE)


def _check(found: dict, *, tagged: bool = True) -> None:
    assert found["texts"] > 10, found["texts"]
    if tagged:  # the oracle saw tags (a diff numbers its kernels only where dot can tie the columns)
        assert found["tags"] > 0, found["tags"]
    assert min(found["fonts"]) >= 10, sorted(set(found["fonts"]))
    assert not found["hidden"], found["hidden"]


def _captures() -> list[str]:
    return sorted(f.name for f in CAPTURES.iterdir() if (f / "capture.json").is_file())


@pytest.mark.parametrize("capture", _captures())
def test_no_label_of_the_overview_is_small_or_under_a_kernel_tag(capture, page, tmp_path):
    svg = _draw(["render", str(CAPTURES / capture), "--stage", "both"], tmp_path / "x.svg")
    _check(_measure(page, svg))


@pytest.mark.parametrize(("before", "after"), PAIRS)
def test_no_label_of_a_diff_overview_is_small_or_under_a_kernel_tag(before, after, page, tmp_path):
    svg = _draw(["diff", str(CAPTURES / before), str(CAPTURES / after)], tmp_path / "d.svg")
    _check(_measure(page, svg), tagged=False)

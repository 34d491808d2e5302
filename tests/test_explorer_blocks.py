"""The explorer's first view, and blocks found by structure, ×N repeats and a step's phases
opened in place: double-click the box, and the same picture comes back with that block drawn
open (pre-rendered at build time), everything else as it was. Checked on the real DenseNet121
and JAX GPT-step captures against their HLO text: the instructions the opened block's boxes hold
are the closed box's own, read from ``pre.hlo`` with a regular expression."""

from __future__ import annotations

import re
from contextlib import ExitStack
from pathlib import Path

import pytest

from hloviz import api

from .browser import open_page, problems, served
from .test_explorer import read_hlo

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "samples" / "captures"

browser_test = [pytest.mark.requires_chromium, pytest.mark.requires_dot, pytest.mark.slow]


def _instructions(hlo: str) -> dict[str, tuple[str, str]]:
    """Every instruction of the HLO text: name → (opcode, op_name), read line by line."""
    out = {}
    for m in re.finditer(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = (?:\([^=]*?\)|\S+) ([\w\-]+)\((.*)$', hlo, re.MULTILINE):
        op = re.search(r'op_name="([^"]*)"', m.group(3))
        out[m.group(1)] = (m.group(2), op.group(1) if op else "")
    return out


#: What a picture drawn open does not give a box of its own: constants written into their users'
#: labels (and a broadcast of one), tuple plumbing read through get-tuple-element.
ELIDED = {"constant", "broadcast", "get-tuple-element", "tuple"}


def _boxes(page, side: str) -> list[frozenset[str]]:
    return [frozenset(m["name"] for m in b["members"]) for b in page.evaluate("window.hloviz.boxes()")
            if b["members"] and b["members"][0]["side"] == side and b["id"].startswith("n")]


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
@pytest.mark.parametrize("capture", ["densenet121", "jax_gpt_step"])
def test_first_view_opens_a_block_in_place_holding_its_instructions(capture, tmp_path, browser):
    with ExitStack() as stack:
        _first_view_opens_a_block(capture, tmp_path, browser, stack)


def _first_view_opens_a_block(capture: str, tmp_path, browser, stack: ExitStack) -> None:
    result = api.show(str(CAPTURES / capture), tmp_path / "out")
    report = result.files["report"]
    hlo = _instructions(read_hlo(CAPTURES / capture / "pre.hlo"))
    # the first view is the overview show draws (side-by-side.svg, at most 24 boxes a column:
    # checked in the browser below), or, for a picture drawn finer (--budget), the finest cut of
    # it that fits a 1920×1080 screen's width (1900 px) and three screens' height (950 px each)
    # with its text at full size (issue 33; an SVG point is 4/3 pixel) — or, where even the fewest
    # boxes a first view gets (Screen.least: 8) do not, that coarsest cut
    html = report.read_text(encoding="utf-8")
    svg = html[html.index("<svg"):html.index("</svg>")]
    whole = (tmp_path / "out" / "side-by-side.svg").read_text(encoding="utf-8")
    if "the explorer&#x27;s first view: the finest cut that fits" in html:
        width, height = (float(x) for x in re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups())
        fits = width * 4 / 3 <= 1900 and height * 4 / 3 <= 3 * 950
        assert fits or svg.count('class="node"') <= 2 * 8 + 4, (width, height)  # 8 a column, and the ROOTs
        assert svg.count('class="node"') < whole.count('class="node"')
    else:
        assert svg.count('class="node"') == whole.count('class="node"')
    served_page = stack.enter_context(served(result))
    loaded = open_page(browser, served_page)
    page = loaded.page
    boxes = page.evaluate("window.hloviz.boxes()")
    for side in ("pre", "post"):  # at most the overview's 24 boxes a column
        assert len([b for b in boxes if b["id"].startswith("n") and b["members"]
                    and b["members"][0]["side"] == side]) <= 24
    blocks = [b for b in boxes if b["opens"] and b["opens"].startswith("t:pre:") and b["id"].startswith("n")]
    assert blocks, "the first view has no closed block with a picture of its own"
    box = max(blocks, key=lambda b: (len(b["members"]), b["id"]))
    inside = {m["name"] for m in box["members"]}
    assert inside <= set(hlo), sorted(inside - set(hlo))[:5]
    # named after its exit (its key's last step, ``b:x:b:s:conv4_block1_concat_1``: a block
    # ending in a repeat of blocks ending in that Keras layer), whose ops it holds; or after the
    # name prefix its layers share (``x:g:conv4_block1``: a repeat of ``conv4_block1_*`` groups)
    step = box["opens"].split(":", 2)[2].rsplit("/", 1)[-1]
    exit_name = re.sub(r"^(?:[a-z]:)+", "", step)
    after = "[_/]" if re.search(r"(?:^|:)g:[^:]*$", step) else "/"
    if not re.fullmatch(r"u\d+", exit_name) and not exit_name.startswith("("):  # not a phase: (forward)
        assert any(re.search(f"/{re.escape(exit_name)}{after}", hlo[n][1]) for n in inside), (exit_name, sorted(inside)[:5])
    top_pre, top_post = _boxes(page, "pre"), _boxes(page, "post")
    page.locator(f"#hv-viewport svg g[data-box='{box['id']}']").dispatch_event("dblclick")
    page.wait_for_function("key => window.hloviz.view() === key", arg=box["opens"])
    crumbs = page.evaluate("Array.from(document.querySelectorAll('#hv-crumbs button')).map(b => b.textContent)")
    assert crumbs[0] == "whole module" and len(crumbs) == 2, crumbs
    # in place: every other box of both columns is as it was (the other column's unless its
    # counterpart opened with it: tests/test_explorer_pairs.py); the block's box became boxes
    # holding its instructions and nothing else
    now_pre, now_post = _boxes(page, "pre"), _boxes(page, "post")
    pair = page.evaluate("window.hloviz.pair()")
    assert pair is not None and pair["side"] == "post", pair
    if not pair["note"].split(": ", 1)[1].startswith("opened"):
        assert sorted(map(sorted, now_post)) == sorted(map(sorted, top_post))
    others = [b for b in top_pre if b != frozenset(inside)]
    assert all(b in now_pre for b in others)
    new = [b for b in now_pre if b not in others]
    held = set().union(*new) if new else set()
    # a parameter the closed view writes as a row of the box that reads it (issue 33: weights
    # folded into the layer using them) gets its own box once its readers are drawn open
    drawn_before = set().union(*top_pre) if top_pre else set()
    text = read_hlo(CAPTURES / capture / "pre.hlo")

    def read_inside(param: str) -> bool:
        return any(re.search(rf"^\s*(?:ROOT\s+)?%?{re.escape(r)} = [^\n]*[(,\s]%?{re.escape(param)}[,)]", text,
                             re.MULTILINE) for r in inside)

    unfolded = {n for n in held - inside
                if hlo[n][0] == "parameter" and n not in drawn_before and read_inside(n)}
    assert len(new) >= 2 and held - unfolded <= inside, (len(new), sorted(held - inside)[:5])
    # what has no box of its own when drawn open is what a picture always writes into labels
    assert {hlo[n][0] for n in inside - held} <= ELIDED, sorted((n, hlo[n][0]) for n in inside - held)[:8]
    page.locator("#hv-viewport").press("Escape")  # back to the whole module
    page.wait_for_function("() => window.hloviz.view() === 'top'")
    assert problems(loaded) == []

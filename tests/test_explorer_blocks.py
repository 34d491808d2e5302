"""The explorer opens blocks found by structure and ×N repeats in place, as it opens layers:
double-click the box, and the same picture comes back with that block drawn open (pre-rendered
at build time). Checked on the real DenseNet121 capture against its HLO text: the instructions
the opened block holds are the dense layer's own, read from ``pre.hlo`` with a regular
expression."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz import api

from .browser import chromium, open_page, problems
from .test_explorer import read_hlo

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "samples" / "captures"

browser_test = [pytest.mark.requires_chromium, pytest.mark.requires_dot, pytest.mark.slow]


def _ops_of_layer(pre_hlo: str, layer: str) -> set[str]:
    """Names of the instructions whose op name lies in the Keras layer ``layer`` (any of its ops)."""
    out = set()
    for m in re.finditer(r'^\s*(?:ROOT\s+)?%?([\w.\-]+) = .*op_name="([^"]*)"', pre_hlo, re.MULTILINE):
        if re.search(rf"(^|/){re.escape(layer)}(_\w+)?(_\d+)?/", m.group(2)):
            out.add(m.group(1))
    return out


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_densenet_block_opens_in_place_and_holds_its_layers_ops(tmp_path):
    report = api.show(str(CAPTURES / "densenet121"), tmp_path / "out").files["report"]
    pre_hlo = read_hlo(CAPTURES / "densenet121" / "pre.hlo")
    with chromium() as browser:
        loaded = open_page(browser, report)
        page = loaded.page
        boxes = page.evaluate("window.hloviz.boxes()")
        blocks = [b for b in boxes if b["opens"] and b["opens"].startswith("t:pre:") and b["id"].startswith("n")]
        assert blocks, "the first view has no closed block with a picture of its own"
        box = next((b for b in blocks if re.search(r"conv\d_block\d+_concat", b["opens"])), blocks[0])
        # the block is named after its exit, a dense layer's concatenation: conv4_block5_concat
        exit_layer = re.findall(r"(conv\d_block\d+)_concat", box["opens"])[-1]
        oracle = _ops_of_layer(pre_hlo, exit_layer)
        assert oracle, exit_layer
        inside = {m["name"] for m in box["members"]}
        assert inside & oracle, (exit_layer, sorted(inside)[:8])
        # the closed box holds the layer's ops: every member named by the model (not TF's XLA_Args) is the layer's
        named = [m for m in box["members"] if m["opName"] and not m["opName"].startswith("XLA_")]
        assert named and all(re.search(rf"/{exit_layer}_", m["opName"]) for m in named), named[:5]
        page.locator(f"#hv-viewport svg g[data-box='{box['id']}']").dispatch_event("dblclick")
        page.wait_for_function("key => window.hloviz.view() === key", arg=box["opens"])
        crumbs = page.evaluate("Array.from(document.querySelectorAll('#hv-crumbs button')).map(b => b.textContent)")
        assert crumbs[0] == "whole module" and len(crumbs) == 2 and exit_layer in crumbs[1], crumbs
        opened = page.evaluate("window.hloviz.boxes()")
        drawn = {m["name"] for b in opened for m in b["members"]}
        assert inside <= drawn  # nothing of the block is lost when it opens
        # in place: the same side-by-side picture, the optimized module's column as it was
        assert {m["side"] for b in opened for m in b["members"]} == {"pre", "post"}
        holding = [b for b in opened if {m["name"] for m in b["members"]} & oracle]
        assert len(holding) >= 2, holding  # drawn open: its ops in boxes of their own
        assert all({m["name"] for m in b["members"]} <= inside for b in holding)
        page.locator("#hv-viewport").press("Escape")  # back to the whole module
        page.wait_for_function("() => window.hloviz.view() === 'top'")
        assert problems(loaded) == []

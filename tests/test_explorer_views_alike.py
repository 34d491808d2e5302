"""Every picture of a ``show`` page is drawn as its main picture is: the capture's parameter names
and the colouring the user chose, in the layers, the blocks opened in place and the fusions too.

Found by reading the pages: a layer's picture and a block opened in place lost what the capture
says (a parameter's name, ``conv2d_8/kernel``; the user's line, ``keras_autonamed.py:46``, in the
tooltips) where the picture they opened from had it, and ``show --color-by flops`` coloured the
opened blocks one colour per kernel. The oracles are the capture's own ``parameter_names`` and
``source_map`` (``capture.json``, written when it was captured), the HLO text read by regex, and
a second page of the same capture coloured the other way.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import re
from pathlib import Path

import pytest

from hloviz import api

from .test_explorer import read_hlo

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

pytestmark = pytest.mark.requires_dot


def _views(report: Path) -> tuple[list[dict], list[str]]:
    """The page's views (from its data) and each one's SVG (the first view's is the page's picture)."""
    html = report.read_text()

    def block(name: str):
        m = re.search(rf'<script type="application/json" id="{name}"([^>]*)>(.*?)</script>', html, re.DOTALL)
        assert m is not None, name
        raw = m.group(2)
        return json.loads(gzip.decompress(base64.b64decode(raw)) if "gzip" in m.group(1) else raw)

    return block("hv-data")["views"], [s or "" for s in block("hv-svgs")]


def _tooltips(svg: str) -> list[str]:
    """The tooltip of every box and arrow of ``svg``."""
    return [html.unescape(t) for t in re.findall(r'xlink:title="([^"]*)"', svg)]


@pytest.fixture(scope="module")
def autonamed_page(tmp_path_factory) -> Path:
    # every view drawn into the file (the views a served page draws on demand are the same:
    # tests/test_explorer_on_demand.py)
    return api.show(str(CAPTURES / "keras_autonamed"), tmp_path_factory.mktemp("autonamed"),
                    offline=True).files["report"]


def test_every_view_names_parameters_and_the_users_lines_as_the_capture_does(autonamed_page):
    info = json.loads((CAPTURES / "keras_autonamed" / "capture.json").read_text())
    lines = {op: f"{at['file']}:{at['line']}" for op, at in info["source_map"].items()}
    names = {int(k): v for k, v in info["parameter_names"].items()}
    # the entry parameters of both modules, by regex: instruction name -> parameter number
    entry: dict[str, int] = {}
    for stage in ("pre", "post"):
        text = read_hlo(CAPTURES / "keras_autonamed" / f"{stage}.hlo")
        body = text[text.index("\nENTRY"):]
        body = body[:body.index("\n}")]
        entry |= {m.group(1): int(m.group(2)) for m in re.finditer(r"%?([\w.\-]+) = \S+ parameter\((\d+)\)", body)}
    views, svgs = _views(autonamed_page)
    seen: dict[str, int] = {}
    for view, svg in zip(views, svgs, strict=True):
        kind = view["key"].split(":", 1)[0]
        for tip in _tooltips(svg):
            head = re.match(r"([\w.\-]+) = \S+ parameter\b", tip)
            if head and head.group(1) in entry and entry[head.group(1)] in names:
                assert f" · {names[entry[head.group(1)]]} · " in tip, (view["key"], tip)
                seen[kind] = seen.get(kind, 0) + 1
            op = re.search(r"op_name: (\S+)", tip)  # the box of one instruction: its line follows
            if op and op.group(1) in lines and re.match(r"[\w.\-]+ = ", tip):
                assert f"source: {lines[op.group(1)]}" in tip, (view["key"], tip)
                seen[kind] = seen.get(kind, 0) + 1
    # layer pictures, blocks opened in place and fusions' bodies all among the views checked
    assert seen.get("s", 0) >= 10 and seen.get("t", 0) >= 10 and seen.get("post", 0) >= 3, seen


def test_show_colours_every_view_as_it_was_asked(tmp_path):
    # one colour per kernel is the palette's (KERNEL_PALETTE); a page coloured by FLOPs fills no
    # box with it, in any view, while the same page coloured by kernel does in its layers and blocks
    from hloviz.render.style import KERNEL_PALETTE

    def palette_fills(by: str) -> dict[str, int]:
        report = api.show(str(CAPTURES / "keras_autonamed"), tmp_path / by, color_by=by,
                          offline=True).files["report"]
        out: dict[str, int] = {}
        for view, svg in zip(*_views(report), strict=True):
            kind = view["key"].split(":", 1)[0]
            out[kind] = out.get(kind, 0) + sum(svg.count(f'fill="{c}"') for c in KERNEL_PALETTE)
        return out

    by_kernel, by_flops = palette_fills("kernel"), palette_fills("flops")
    assert by_kernel.get("s", 0) > 0 and by_kernel.get("t", 0) > 0, by_kernel
    assert not any(by_flops.values()), by_flops

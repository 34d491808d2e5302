"""The report as an explorer: its data and page (pure), and the page in a real Chromium —
search, expand, click, cross-highlight, pan/zoom, the URL fragment and the tables — on the
seed and on the real-model captures (MobileNetV2, ResNet50, a Keras transformer training step).

Cross-highlighting is checked against the HLO text itself: the ops lit before optimization
must carry an ``op_name`` that the clicked kernel's own instructions (the fusion and its fused
computation, read from ``post.hlo`` with a regular expression) carry too.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from contextlib import ExitStack
from pathlib import Path

import pytest

from hloviz import api
from hloviz.capture import load_target
from hloviz.render.page.explorer.page import encode_block, json_for_script, script_hash, script_source

from .browser import open_page, png_colours, problems, search, served

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "samples" / "captures"
SEED = CAPTURES / "fused_additions"

browser_test = [pytest.mark.requires_chromium, pytest.mark.requires_dot, pytest.mark.slow]


# --- pure: the data blocks and the page's policy ------------------------------------------------


def test_json_for_script_cannot_end_its_block_and_round_trips():
    hostile = {"a": "</script><script>alert(1)</script>", "b": "line\u2028sep\u2029", "c": "<!-- & -->",
               "</script>": ["x" * 3]}
    text = json_for_script(hostile)
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == hostile


def test_big_blocks_are_gzip_base64_and_decode_to_the_same_value():
    value = {"names": [f"</script>{i}" for i in range(2000)]}
    block = encode_block("hv-x", value, compress_over=100)
    m = re.fullmatch(r'<script type="application/json" id="hv-x" data-encoding="gzip-base64">([A-Za-z0-9+/=]+)</script>',
                     block)
    assert m, block[:200]
    assert json.loads(gzip.decompress(base64.b64decode(m.group(1)))) == value
    small = encode_block("hv-y", {"a": 1})
    assert small == '<script type="application/json" id="hv-y">{"a":1}</script>'


def _scripts(html: str) -> list[tuple[str, str]]:
    return re.findall(r"<script([^>]*)>(.*?)</script>", html, re.DOTALL)


@pytest.fixture(scope="module")
def seed_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("seed")
    return api.show(str(SEED), out).files["report"]


@pytest.mark.requires_dot
def test_page_runs_one_script_allowed_by_its_hash_and_loads_nothing(seed_report):
    html = seed_report.read_text(encoding="utf-8")
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["default-src"] == "'none'"
    assert "unsafe-inline" not in directives["script-src"] and "unsafe-eval" not in directives["script-src"]
    code = [body for attrs, body in _scripts(html) if "application/json" not in attrs]
    assert len(code) == 1 and code[0] == script_source()
    digest = base64.b64encode(hashlib.sha256(code[0].encode()).digest()).decode()
    assert directives["script-src"] == f"'sha256-{digest}'" == script_hash(code[0])
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    data = [attrs for attrs, _ in _scripts(html) if "application/json" in attrs]
    assert len(data) == 3


@pytest.mark.requires_dot
def test_every_box_the_data_names_is_an_svg_group_of_the_picture(seed_report):
    html = seed_report.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="hv-data"([^>]*)>(.*?)</script>', html, re.DOTALL)
    raw = block.group(2)
    data = json.loads(gzip.decompress(base64.b64decode(raw)) if "gzip" in block.group(1) else raw)
    svg = html[html.index("<svg"):html.index("</svg>")]
    titles = set(re.findall(r"<title>([^<]*)</title>", svg))
    top = data["views"][0]
    assert top["key"] == "top" and top["nodes"]
    assert set(top["nodes"]) <= titles and set(top["clusters"]) <= titles
    # the seed's one kernel, as post.hlo has it: a fusion of 1000 adds and a broadcast
    assert len(data["kernels"]) == 1 and data["kernels"][0]["instructions"] == 1001
    kernel = data["kernels"][0]["name"]
    assert re.search(r"%?" + re.escape(kernel) + r" = \S+ fusion\(", read_hlo(SEED / "post.hlo"))
    assert kernel in data["sides"][1]["name"]


# --- the HLO's own answer: which op names a kernel holds ---------------------------------------

_INST = re.compile(r'^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=.*?(?:calls=%?([\w.\-]+))?.*$')


def kernel_op_names(post_hlo: str, kernel: str) -> set[str]:
    """op_names of ``kernel``'s line and, for a fusion, of every line of its fused computation."""
    names: set[str] = set()
    lines = post_hlo.splitlines()
    called = None
    for line in lines:
        m = re.match(r'^\s*(?:ROOT\s+)?%?' + re.escape(kernel) + r'\s*=', line)
        if m:
            names.update(re.findall(r'op_name="((?:[^"\\]|\\.)*)"', line))
            c = re.search(r"calls=%?([\w.\-]+)", line)
            called = c.group(1) if c else None
            break
    if called:
        inside = False
        for line in lines:
            if re.match(r"^%?" + re.escape(called) + r"\s", line.strip() + " "):
                inside = True
                continue
            if inside:
                if line.strip() == "}":
                    break
                names.update(re.findall(r'op_name="((?:[^"\\]|\\.)*)"', line))
    return names


# --- in Chromium ----------------------------------------------------------------------------------


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_seed_report_shows_verdict_picture_and_tables_without_script(seed_report, tmp_path, browser):
    loaded = open_page(browser, seed_report, javascript=False)
    page = loaded.page
    assert "1003 ops → 1 kernel" in page.inner_text("p.verdict")
    box = page.locator(".picture svg").bounding_box()
    assert box and box["width"] > 100 and box["height"] > 100
    assert page.locator("table.kernels tbody tr").count() == 1
    assert page.locator("table.folds, p:has-text('No constants were folded')").count() >= 1
    assert not page.locator("#hv-search").is_visible()  # the explorer's controls need its script
    assert problems(loaded) == []


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_seed_explorer_loads_clean_and_is_not_blank(seed_report, tmp_path, browser):
    loaded = open_page(browser, seed_report)
    page = loaded.page
    assert page.locator("#hv-search").is_visible()
    assert "1003 ops → 1 kernel" in page.inner_text("p.verdict")
    assert page.locator("table.kernels tbody tr").count() == 1
    shot = tmp_path / "seed.png"
    page.screenshot(path=str(shot))
    assert png_colours(shot.read_bytes()) > 40
    # click the kernel: its 1000 adds light up on the left
    page.locator("#hv-kernels a.swatch").first.click()
    page.wait_for_function("() => window.hloviz.selected() !== null")
    lit = page.evaluate("window.hloviz.highlighted()")
    assert any(box["side"] == "pre" for box in lit)
    assert problems(loaded) == []


def read_hlo(path: Path) -> str:
    """An HLO file of a capture, plain or gzip-compressed (``post.hlo`` or ``post.hlo.gz``)."""
    if path.exists():
        return path.read_text()
    return gzip.decompress(path.with_name(path.name + ".gz").read_bytes()).decode()


@pytest.fixture(scope="module")
def shown(tmp_path_factory):
    """``capture → the address of its report``, served as ``hloviz show --open`` serves it (the
    explorer draws what opens when it opens), made once for this file (the tests only read the
    page: each opens it in a browser context of its own)."""
    made: dict[str, str] = {}
    with ExitStack() as servers:
        def report(capture: str) -> str:
            if capture not in made:
                result = api.show(str(CAPTURES / capture), tmp_path_factory.mktemp(capture))
                made[capture] = servers.enter_context(served(result))
            return made[capture]

        yield report


REAL = [
    ("resnet50", "conv4_block3"),
    ("mobilenet_v2", "block_5"),
    ("keras_transformer", "block_1"),
]


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
@pytest.mark.parametrize("capture,query", REAL, ids=[r[0] for r in REAL])
def test_find_a_layer_open_it_click_its_kernel_and_see_its_ops(capture, query, tmp_path, shown, browser):
    report = shown(capture)
    post_hlo = read_hlo(CAPTURES / capture / "post.hlo")
    loaded = open_page(browser, report)
    page = loaded.page
    search(page, query)
    layers = page.locator("#hv-results button[data-scope][data-opens]")
    assert layers.count() >= 1, page.inner_text("#hv-results")
    path = layers.first.get_attribute("data-scope")
    assert query.split("/")[0] in path
    layers.first.click()  # opens the layer in place: its own picture, a breadcrumb to go back
    page.wait_for_function("() => window.hloviz.view() !== 'top'")
    assert page.evaluate("window.hloviz.view()") == f"s:{path}"
    # The breadcrumb: the whole module, each enclosing layer that has a picture of its own
    # (when Graphviz needs the coarser top view, ``transformer`` is closed there and gets
    # one), then the layer, each a deeper scope path than the one before it.
    crumbs = page.locator("#hv-crumbs button").all_inner_texts()
    label = page.locator("#hv-crumbs button[aria-current]").inner_text()
    assert crumbs[0] == "whole module" and crumbs[-1] == label and len(crumbs) >= 2, crumbs
    assert all(label.startswith(c + "/") for c in crumbs[1:-1]), crumbs
    assert path.count("/") == label.count("/"), (path, label)  # the layer's path, as the model names it
    page.wait_for_function("() => window.hloviz.selected() && window.hloviz.selected().scope !== undefined")
    assert page.evaluate("window.hloviz.selected().scope") == path
    panel = page.locator("#hv-panel")
    kernels = panel.locator("h4:has-text('its kernels') + ul button")
    assert kernels.count() >= 1
    # A layer's kernels include some placed by data flow with no op_name of their own (a
    # copy of the layer's weight): the ops a kernel came from are checked on the first one
    # whose post.hlo lines name ops.
    names = [re.match(r"#\d+ (\S+)", t).group(1) for t in kernels.all_inner_texts()]
    at = next((k for k, name in enumerate(names) if kernel_op_names(post_hlo, name)), None)
    assert at is not None, f"none of the layer's kernels has an op_name in post.hlo: {names[:10]}"
    kernel = names[at]
    kernels.nth(at).click()  # the kernel, in the layer's picture: the ops it came from light up
    page.wait_for_function("() => window.hloviz.selected() && window.hloviz.selected().instruction !== undefined")
    selected = page.evaluate("window.hloviz.selected().instruction")
    assert selected["name"] == kernel and selected["side"] == "post"
    assert page.locator("#hv-viewport svg g.hv-sel").count() >= 1
    lit = page.evaluate("window.hloviz.highlighted()")
    pre_ops = {m["opName"] for box in lit if box["side"] == "pre" for m in box["members"]}
    from_hlo = kernel_op_names(post_hlo, kernel)
    assert from_hlo, f"{kernel} has no op_name in post.hlo"
    assert pre_ops & from_hlo, (kernel, sorted(from_hlo)[:5], sorted(pre_ops)[:5])
    assert "kernel #" in panel.inner_text() and kernel in panel.inner_text()
    page.locator("#hv-crumbs button").first.click()  # back to the whole module
    page.wait_for_function("() => window.hloviz.view() === 'top'")
    assert problems(loaded) == []


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_expand_a_fusion_in_place_with_a_breadcrumb_and_back(tmp_path, shown, browser):
    report = shown("resnet50")
    # the fusion XLA made of conv4_block3_out's ReLU (with the residual adds of blocks 1-3), by regex
    fusion = re.search(r'^\s*%?(\S+) = \S+ fusion\(.*op_name="resnet50_1/conv4_block3_out_1/Relu"',
                       read_hlo(CAPTURES / "resnet50" / "post.hlo"), re.MULTILINE).group(1)
    loaded = open_page(browser, report)
    page = loaded.page
    views = page.evaluate("document.getElementById('hv-svgs') !== null")
    assert views
    search(page, fusion)
    page.locator("#hv-results button[data-g]").first.click()
    page.wait_for_function("() => window.hloviz.selected() !== null")
    open_button = page.locator("#hv-panel button:has-text('open this fusion')")
    assert open_button.count() == 1
    # the search jumps to a picture drawing it as a box of its own: the picture of a layer
    # whose work it runs, under the top
    before = page.evaluate("window.hloviz.view()")
    depth = len(_crumbs(page))
    assert before.startswith("s:resnet50_1/") and depth == 2, (before, _crumbs(page))
    open_button.click()
    page.wait_for_function("key => window.hloviz.view() === key", arg=f"post:{fusion}")
    crumbs = page.locator("#hv-crumbs button")
    assert crumbs.count() == depth + 1 and fusion in crumbs.nth(depth).inner_text()
    # the fusion's body, down to single instructions: each box of this view holds one
    boxes = page.evaluate("""() => Array.from(document.querySelectorAll('#hv-viewport svg g.node')).length""")
    assert boxes >= 3
    assert fusion in page.evaluate("location.hash") or "v=" in page.evaluate("location.hash")
    page.locator("#hv-viewport").press("Escape")  # back up to where it was opened from
    page.wait_for_function("key => window.hloviz.view() === key", arg=before)
    assert page.locator("#hv-crumbs button").count() == depth
    page.locator("#hv-crumbs button").first.click()
    page.wait_for_function("() => window.hloviz.view() === 'top'")
    assert page.locator("#hv-crumbs button").count() == 1
    assert problems(loaded) == []


def _crumbs(page) -> list[str]:
    return page.evaluate("Array.from(document.querySelectorAll('#hv-crumbs button')).map(b => b.textContent)")


def _open_box(page, box: dict) -> None:
    """Double-click a box of the picture (the way a user opens a layer or a fusion in place)."""
    page.locator(f"#hv-viewport svg g[data-box='{box['id']}']").dispatch_event("dblclick")
    page.wait_for_function("key => window.hloviz.view() === key", arg=box["opens"])


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_open_a_layer_then_a_sub_layer_in_it_then_a_fusion_in_that(tmp_path, shown, browser):
    report = shown("keras_transformer")
    capture = load_target(str(CAPTURES / "keras_transformer"))
    pre_tree = api.scope_trees(capture, capture.info)[0]
    loaded = open_page(browser, report)
    page = loaded.page
    search(page, "block_0")
    block = page.locator("#hv-results button[data-scope$='block_0_1'][data-opens]")
    assert block.count() == 1, page.inner_text("#hv-results")
    path = block.get_attribute("data-scope")
    block.click()
    page.wait_for_function("key => window.hloviz.view() === key", arg=f"s:{path}")
    # the breadcrumb: the whole module, the enclosing layer when the first view (fitted to a
    # screen) closes it too, then the block
    base = _crumbs(page)
    assert base[0] == "whole module" and base[-1] == "transformer/block_0", base
    assert base[1:-1] in ([], ["transformer"]), base
    # the layer's picture shows its sub-layers closed, each a box that opens its own picture
    subs = [b for b in page.evaluate("window.hloviz.boxes()")
            if b["scope"] and b["scope"].startswith(path + "/") and b["opens"] == f"s:{b['scope']}"
            and b["id"].startswith("n")]
    assert len({b["scope"] for b in subs}) >= 2, subs
    fusions: list[dict] = []
    sub_crumbs: list[str] = []
    for sub in sorted({b["scope"]: b for b in subs}.values(), key=lambda b: b["scope"]):
        _open_box(page, sub)
        crumbs = _crumbs(page)
        # every enclosing layer with a picture of its own is a crumb (with a first view
        # fitted to a screen, more layers are closed and have one: block_0 › attention › key)
        assert crumbs[:len(base)] == base and len(crumbs) >= len(base) + 1, crumbs
        assert all(c.startswith(base[-1] + "/") for c in crumbs[len(base):]), crumbs
        sub_crumbs = crumbs
        assert re.sub(r"_\d+$", "", sub["scope"].rsplit("/", 1)[1]) in crumbs[-1], crumbs  # Keras' _1 dropped
        boxes = page.evaluate("window.hloviz.boxes()")
        # its own picture: every op drawn before optimization is the sub-layer's (forward or its
        # gradient, by its op name, or placed there by the scope tree: the AddN summing its
        # weights' gradients is credited by use, as stats --by scope counts it)
        placed = {i.name for s in pre_tree.root.walk() if s.path == sub["scope"] for i in s.all_instructions()}
        pre = [m for b in boxes for m in b["members"] if m["side"] == "pre" and m["opName"]]
        assert pre and all(sub["scope"] + "/" in m["opName"] or m["name"] in placed for m in pre), \
            (sub["scope"], [m for m in pre if sub["scope"] + "/" not in m["opName"]][:8])
        assert not any(b["scope"] == path for b in boxes)  # the parent layer is not drawn in it
        fusions = [b for b in boxes if b["opens"] and b["opens"].startswith("post:") and b["id"].startswith("n")]
        if fusions:
            break
        page.locator("#hv-crumbs button").nth(len(base) - 1).click()  # back up to block_0
        page.wait_for_function("key => window.hloviz.view() === key", arg=f"s:{path}")
    assert fusions, "no sub-layer of block_0 draws a fusion with a picture of its own"
    fusion = fusions[0]
    _open_box(page, fusion)  # the fusion, down to single instructions, opened from the sub-layer
    crumbs = _crumbs(page)
    assert len(crumbs) == len(sub_crumbs) + 1 and crumbs[:len(sub_crumbs)] == sub_crumbs, crumbs
    assert fusion["opens"].split(":", 1)[1] in crumbs[-1]
    single = page.evaluate("window.hloviz.boxes()")
    assert len(single) >= 3 and all(len(b["members"]) <= 1 for b in single if b["id"].startswith("n"))
    page.locator("#hv-viewport").press("Escape")  # back up: to the sub-layer it was opened from
    page.wait_for_function("key => window.hloviz.view() === key", arg=f"s:{sub['scope']}")
    page.locator("#hv-crumbs button").nth(len(base) - 1).click()
    page.wait_for_function("key => window.hloviz.view() === key", arg=f"s:{path}")
    assert problems(loaded) == []


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_the_url_fragment_keeps_and_restores_a_selection(tmp_path, shown, browser):
    report = shown("matmul_chain-tf2.21")
    loaded = open_page(browser, report)
    page = loaded.page
    page.locator("#hv-viewport svg g.node:has(text:text-is('Sin.1'))").first.click()
    page.wait_for_function("() => window.hloviz.selected() !== null")
    assert page.evaluate("location.hash") == "#i=pre%3ASin.1"
    lit = page.evaluate("window.hloviz.highlighted()")
    assert any(m["name"] == "broadcast_maximum_fusion" or m["opName"] == "Sin"
               for box in lit if box["side"] == "post" for m in box["members"])
    # a link to one kernel opens with it selected
    again = open_page(browser, report, fragment="k=broadcast_maximum_fusion")
    again.page.wait_for_function("() => window.hloviz.selected() !== null")
    assert again.page.evaluate("window.hloviz.selected().instruction.name") == "broadcast_maximum_fusion"
    assert again.page.locator("#hv-panel h3").inner_text() == "broadcast_maximum_fusion"
    assert problems(loaded) == [] and problems(again) == []


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_pan_and_zoom_with_keyboard_mouse_and_buttons(tmp_path, shown, browser):
    report = shown("matmul_chain-tf2.21")
    loaded = open_page(browser, report)
    page = loaded.page
    transform = lambda: page.evaluate("document.querySelector('#hv-viewport svg').style.transform")  # noqa: E731
    start = transform()
    viewport = page.locator("#hv-viewport")
    viewport.focus()
    viewport.press("+")
    zoomed = transform()
    assert zoomed != start and "scale(" in zoomed
    viewport.press("ArrowLeft")
    assert transform() != zoomed
    box = viewport.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    before = transform()
    page.mouse.wheel(0, -300)
    page.wait_for_function("b => document.querySelector('#hv-viewport svg').style.transform !== b", arg=before)
    before = transform()
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 80, box["y"] + box["height"] / 2 + 40, steps=4)
    page.mouse.up()
    assert transform() != before
    page.click("button[data-zoom='fit']")
    assert problems(loaded) == []


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_kernel_table_sorts_filters_and_links_to_the_picture(tmp_path, shown, browser):
    report = shown("matmul_chain-tf2.21")
    loaded = open_page(browser, report)
    page = loaded.page
    rows = lambda: page.eval_on_selector_all("#hv-kernels tbody tr:not([hidden])",  # noqa: E731
                                             "rs => rs.map(r => r.getAttribute('data-kernel'))")
    assert rows() == ["MatMul.2", "broadcast_maximum_fusion", "ynn_fusion"]
    flops = page.locator("#hv-kernels th:has-text('FLOPs')")
    flops.click()
    ascending = rows()
    flops.click()
    assert rows() == list(reversed(ascending)) and rows()[0] == "MatMul.2"  # the matmul does the most work
    page.fill("input.hv-filter[data-table='hv-kernels']", "fusion")
    assert rows() == sorted(rows(), key=ascending.index, reverse=True) and "MatMul.2" not in rows()
    page.fill("input.hv-filter[data-table='hv-kernels']", "")
    page.locator("#hv-kernels tr[data-kernel='ynn_fusion'] a.swatch").click()
    page.wait_for_function("() => window.hloviz.selected() !== null")
    assert page.evaluate("window.hloviz.selected().instruction.name") == "ynn_fusion"
    assert problems(loaded) == []


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_diff_page_highlights_a_matched_pair_together(tmp_path, browser):
    out = tmp_path / "diff.html"
    result = api.diff(str(CAPTURES / "matmul_chain-tf2.17"), str(CAPTURES / "matmul_chain-tf2.21"))
    result.picture("html").save(out)
    pairs = [(k.before.name, k.after.name) for k in result.diff.summary.kernel_diffs
             if k.before is not None and k.after is not None]
    assert pairs
    loaded = open_page(browser, out)
    page = loaded.page
    a, b = pairs[0]
    page.goto(out.resolve().as_uri() + f"#i=before:{a}")
    page.wait_for_function("() => window.hloviz && window.hloviz.selected() !== null")
    lit = page.evaluate("window.hloviz.highlighted()")
    assert any(m["name"] == b for box in lit if box["side"] == "after" for m in box["members"]), lit
    assert "matched in the other module" in page.inner_text("#hv-panel")
    assert problems(loaded) == []


@pytest.mark.requires_dot
def test_render_html_is_the_explorer_and_svg_stays_static(tmp_path):
    # the same budget for both: an .svg of a whole module defaults to the overview, an .html to 300
    svg = api.render(str(CAPTURES / "matmul_chain-tf2.21"), tmp_path / "p.svg", stage="both", budget=300)
    text = svg.data.decode()
    assert text.lstrip().startswith(("<?xml", "<svg", "<!DOCTYPE")) and "<script" not in text
    page = api.render(str(CAPTURES / "matmul_chain-tf2.21"), tmp_path / "p.html", stage="both", budget=300)
    html = page.data.decode()
    assert 'id="hv-data"' in html and "script-src 'sha256-" in html
    assert text[text.index("<svg"):].strip() in html  # the same picture, inline


@pytest.mark.requires_dot
def test_render_html_of_one_module_explores_that_module(tmp_path):
    page = api.render(str(CAPTURES / "matmul_chain-tf2.21"), tmp_path / "post.html")
    html = page.data.decode()
    block = re.search(r'<script type="application/json" id="hv-data"([^>]*)>(.*?)</script>', html, re.DOTALL)
    data = json.loads(block.group(2))
    assert [s["key"] for s in data["sides"]] == ["post"]
    assert [k["name"] for k in data["kernels"]] == ["MatMul.2", "broadcast_maximum_fusion", "ynn_fusion"]
    assert data["views"][0]["nodes"] and not data["opk"] and not data["pairs"]

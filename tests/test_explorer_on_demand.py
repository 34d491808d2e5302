"""The explorer's detail drawn on demand: ``hloviz show`` lays out its first picture only, and
``show --open`` draws a layer, a block or a fusion when the page opens it (issue 32).

Oracles outside the code under test: the fusion's body read from the HLO text with a regular
expression; the pictures ``show --offline`` draws ahead (another composition of the same
drawing functions: the served view must hold the same instructions in the same boxes); and a
real Chromium, whose Content-Security-Policy must allow the served page's fetches and nothing
else.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from hloviz import api

from . import run_cli
from .browser import open_page, problems, served
from .test_explorer import read_hlo

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "samples" / "captures"
CAPTURE = "keras_small_classify"  # layers, blocks and fusions to open, small enough to draw them all

pytestmark = pytest.mark.requires_dot


def _data(report: Path) -> dict:
    html = report.read_text(encoding="utf-8")
    block = re.search(r'<script type="application/json" id="hv-data"[^>]*>(.*?)</script>', html, re.DOTALL)
    assert block is not None
    return json.loads(block.group(1))


def _names(data: dict, gids: list[int]) -> list[str]:
    out = []
    for g in gids:
        side = next(s for s in reversed(data["sides"]) if g >= s["offset"])
        out.append(f'{side["key"]}:{side["name"][g - side["offset"]]}')
    return sorted(out)


def _get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """``show`` of the capture twice: by default (detail on demand) and ``offline`` (drawn ahead)."""
    lazy = api.show(str(CAPTURES / CAPTURE), tmp_path_factory.mktemp("lazy"))
    ahead = api.show(str(CAPTURES / CAPTURE), tmp_path_factory.mktemp("ahead"), offline=True)
    return lazy, ahead


def test_the_page_offers_its_detail_and_draws_none_of_it(reports):
    lazy, ahead = reports
    data = _data(lazy.files["report"])
    drawn = [v for v in data["views"] if not v.get("lazy")]
    offered = [v for v in data["views"] if v.get("lazy")]
    assert [v["key"] for v in drawn] == ["top"]
    kinds = {v["key"].split(":")[0] for v in offered}
    assert {"s", "t", "post"} <= kinds, kinds  # layers, blocks in place, fusions
    assert all(v["nodes"] == {} for v in offered)
    # each opens from the first picture, or from the layer around it (its breadcrumb)
    keys = {v["key"] for v in offered}
    assert all(v["parent"] == "top" or (v["parent"] in keys and v["key"].startswith(v["parent"] + "/"))
               for v in offered)
    assert lazy.on_demand is not None and ahead.on_demand is None
    ahead_data = _data(ahead.files["report"])
    assert not any(v.get("lazy") for v in ahead_data["views"])
    assert len(ahead_data["views"]) > 1  # drawn into the file
    assert "hloviz show TARGET --open" in lazy.files["report"].read_text(encoding="utf-8")


def test_a_served_view_is_the_view_drawn_ahead_and_a_fusion_holds_its_body(reports):
    lazy, ahead = reports
    ahead_data, lazy_data = _data(ahead.files["report"]), _data(lazy.files["report"])
    ahead_views = {v["key"]: v for v in ahead_data["views"]}
    offered = {v["key"] for v in lazy_data["views"] if v.get("lazy")}
    post_hlo = read_hlo(CAPTURES / CAPTURE / "post.hlo")
    with served(lazy) as url:
        base = url.rsplit("/", 1)[0]
        checked = set()
        for key in sorted(offered & set(ahead_views)):
            kind = key.split(":")[0]
            if kind in checked:
                continue
            status, got = _get(f"{base}/view?key={urllib.parse.quote(key)}")
            assert status == 200, got
            view, want = got["view"], ahead_views[key]
            assert view["svg"].lstrip().startswith(("<svg", "<?xml"))
            boxes = {_key: _names(lazy_data, n[1]) for _key, n in view["nodes"].items()}
            assert sorted(boxes.values()) == sorted(_names(ahead_data, n[1]) for n in want["nodes"].values())
            if kind == "post":  # a fusion: its boxes hold its fused computation's instructions, no more
                fusion = key.split(":", 1)[1]
                called = re.search(rf"^\s*(?:ROOT )?%?{re.escape(fusion)} = .*?calls=%?([\w.\-]+)", post_hlo,
                                   re.MULTILINE)
                body = re.search(rf"^(?:ENTRY )?%?{re.escape(called.group(1))} .*?\{{\n(.*?)\n\}}", post_hlo,
                                 re.MULTILINE | re.DOTALL)
                # every instruction of the body but its scalar constants (written into their users' labels)
                names = re.findall(r"^\s*(?:ROOT )?%?([\w.\-]+) = (?!\w+\[\] constant\()", body.group(1),
                                   re.MULTILINE)
                held = {n.split(":", 1)[1] for names_ in boxes.values() for n in names_}
                assert held == set(names)
            checked.add(kind)
        assert checked == {"s", "t", "post"}
        # asked twice: the same answer (drawn once, kept)
        first = _get(f"{base}/view?key={urllib.parse.quote(min(offered))}")
        assert first[0] == 200 and _get(f"{base}/view?key={urllib.parse.quote(min(offered))}") == first


def test_the_server_answers_only_its_own_report_and_views(reports, tmp_path):
    lazy, _ = reports
    (lazy.directory / "private.txt").write_text("not hloviz's")
    with served(lazy) as url:
        base = url.rsplit("/", 1)[0]
        page = urllib.request.urlopen(url).read().decode("utf-8")
        csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
        # the page it sends may fetch from this server only, and knows it is served
        assert "connect-src 'self'" in csp and "default-src 'none'" in csp
        assert '<meta name="hloviz-server"' in page
        for path in ("/private.txt", "/../private.txt", "/%2e%2e/private.txt", "/report.html/../private.txt"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(base + path)
            assert err.value.code == 404
        wrong = url.replace(base.rsplit("/", 1)[1], "guessed")
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(wrong)
        status, body = _get(f"{base}/view?key=s:not/a/layer")
        assert status == 404 and "not a view this report offers" in body["error"]
    # the file on disk is as written: it forbids every fetch and does not say it is served
    html = lazy.files["report"].read_text(encoding="utf-8")
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "connect-src" not in csp and "default-src 'none'" in csp
    assert '<meta name="hloviz-server"' not in html


@pytest.mark.requires_chromium
def test_opened_as_a_file_the_page_offers_nothing_it_cannot_draw(reports, browser):
    lazy, _ = reports
    loaded = open_page(browser, lazy.files["report"])
    opens = loaded.page.evaluate("window.hloviz.boxes().map(b => b.opens).filter(Boolean)")
    assert opens == []
    labels = loaded.page.eval_on_selector_all("#hv-viewport g.node[aria-label]",
                                              "els => els.map(e => e.getAttribute('aria-label'))")
    assert labels and not any("opens in place" in text for text in labels)
    # a double-click on a closed block says how to get its picture
    data = _data(lazy.files["report"])
    offered = {v["opens"] for v in data["views"] if v.get("lazy")}
    box = next(i for i, n in data["views"][0]["nodes"].items() if n[3] and f"t:{n[3]}" in offered)
    loaded.page.locator(f'#hv-viewport g[data-box="{box}"]').dispatch_event("dblclick")
    status = loaded.page.locator("#hv-status")
    assert status.is_visible() and "hloviz show TARGET --open" in status.inner_text()
    assert loaded.page.evaluate("window.hloviz.view()") == "top"
    assert problems(loaded) == []


@pytest.mark.requires_chromium
def test_served_a_double_click_draws_the_block_and_its_boxes_work(reports, browser):
    lazy, _ = reports
    with served(lazy) as url:
        loaded = open_page(browser, url)
        page = loaded.page
        boxes = page.evaluate("window.hloviz.boxes()")
        block = next(b for b in boxes if b["opens"] and b["opens"].startswith("t:"))
        page.locator(f'#hv-viewport g[data-box="{block["id"]}"]').dispatch_event("dblclick")
        page.wait_for_function("k => window.hloviz.view() === k", arg=block["opens"], timeout=60000)
        inside = page.evaluate("window.hloviz.boxes()")
        held = {m["name"] for b in inside for m in b["members"]}
        assert {m["name"] for m in block["members"]} <= held  # what the closed box held is drawn open
        assert len(inside) > 1
        # the breadcrumb goes back, and the view opens again from memory
        page.click("#hv-crumbs button:not([aria-current])")
        page.wait_for_function("() => window.hloviz.view() === 'top'")
        assert problems(loaded) == []


def test_show_open_serves_and_offline_draws_ahead_from_the_command_line(tmp_path):
    out = tmp_path / "r"
    done = subprocess.run([sys.executable, "-m", "hloviz", "show", str(CAPTURES / CAPTURE), "-o", str(out),
                           "--offline"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    views = _data(out / "report.html")["views"]
    assert len(views) > 1 and not any(v.get("lazy") for v in views)
    help_text = subprocess.run([sys.executable, "-m", "hloviz", "show", "--help"], capture_output=True, text=True,
                               timeout=120, env={**os.environ, "COLUMNS": "200"}).stdout
    assert "--offline" in help_text and "--open" in help_text


def test_show_open_serves_until_ctrl_c(tmp_path, capsys, monkeypatch):
    """``show --open`` serves the report, opens its address, draws what the page asks, and ends
    cleanly on Ctrl-C (here: the browser, once it has read the page and a view, interrupts)."""
    import _thread
    import threading
    import webbrowser


    answers: list = []

    def browse(url: str) -> bool:
        def read() -> None:
            page = urllib.request.urlopen(url, timeout=60).read().decode("utf-8")
            first = next(v for v in json.loads(re.search(r'id="hv-data"[^>]*>(.*?)</script>', page,
                                                         re.DOTALL).group(1))["views"] if v.get("lazy"))
            answers.append((page, _get(url.rsplit("/", 1)[0] + "/view?key=" + urllib.parse.quote(first["key"]))))
            _thread.interrupt_main()

        threading.Thread(target=read, daemon=True).start()
        return True

    monkeypatch.setattr(webbrowser, "open", browse)
    code, _, stderr = run_cli(["show", str(CAPTURES / CAPTURE), "-o", str(tmp_path), "--open"], capsys)
    assert code == 0, stderr
    assert "serving the report at http://127.0.0.1:" in stderr
    page, (status, view) = answers[0]
    assert 'name="hloviz-server"' in page and status == 200 and view["view"]["nodes"]


@pytest.mark.parametrize("capture", [CAPTURE, "jax_gpt_step12"])
def test_the_report_draws_the_overview_render_draws_and_opens_on_it(capture, reports, tmp_path):
    """show's pictures are render's default, the overview (issue 33); the explorer opens on it,
    not on a coarser cut of it, and show lays out no more than its own pictures — also where the
    overview is taller than the screen (the GPT step's)."""
    lazy = reports[0] if capture == CAPTURE else api.show(str(CAPTURES / capture), tmp_path / "show")
    render = api.render(str(CAPTURES / capture), tmp_path / "render.svg", stage="both")
    drawn = (lazy.directory / "side-by-side.svg").read_text(encoding="utf-8")
    boxes = re.compile(r'<g id="node\d+" class="node">\s*<title>([^<]*)</title>')
    assert sorted(boxes.findall(drawn)) == sorted(boxes.findall(render.data.decode("utf-8")))
    html = lazy.files["report"].read_text(encoding="utf-8")
    first = html[html.index("<svg"):html.index("</svg>")]
    assert sorted(boxes.findall(first)) == sorted(boxes.findall(drawn))
    assert "first view: the finest cut" not in html


def test_show_draws_each_module_once_and_its_pictures_are_the_modules_drawn_alone(tmp_path, monkeypatch):
    """``pre.svg`` and ``post.svg`` are the side-by-side picture's columns laid out alone: the same
    bytes as each module drawn alone with the same options and marks, without drawing it twice."""
    import hloviz.render.views as views
    from hloviz.capture import load_target
    from hloviz.render.layout.sidebyside import post_marks, pre_marks
    from hloviz.render.page.page import page_picture
    from hloviz.render.pictures import module_picture
    from hloviz.render.views import OVERVIEW_BUDGET, ViewOptions

    drawn: list[str] = []
    real = views._draw

    def counted(module, *args, **kwargs):
        drawn.append(module.name)
        return real(module, *args, **kwargs)

    monkeypatch.setattr(views, "_draw", counted)
    result = api.show(str(CAPTURES / CAPTURE), tmp_path / "show")
    monkeypatch.setattr(views, "_draw", real)
    cap = load_target(str(CAPTURES / CAPTURE))
    pre, post = cap.pre_module(), cap.post_module()
    assert sorted(drawn) == sorted([pre.name, post.name])  # the side-by-side picture's two columns, no more
    analysis = result.analysis
    for stage, module, marks in (("pre", pre, pre_marks(analysis, pre)), ("post", post, post_marks(analysis, post))):
        label = "before" if stage == "pre" else "after"
        alone = page_picture(module_picture(module, options=ViewOptions(budget=OVERVIEW_BUDGET), marks=marks,
                                            title=f"{result.label} · {label} optimization", info=cap.info),
                             description=analysis.verdict)  # as show writes every picture
        written = (tmp_path / "show" / f"{stage}.svg").read_bytes()
        strip = re.compile(rb"<!--.*?-->", re.DOTALL)
        assert strip.sub(b"", written) == strip.sub(b"", alone.data), stage

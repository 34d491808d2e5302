"""``hloviz show`` with XLA's pass history: the report's filmstrip, its step pictures, and the
side panel naming the pass that made a kernel or a folded constant.

The oracle is XLA's own files (samples/captures/passes/, unpacked here) read with the regexes of
tests/test_passes.py; the credits the report carries are also compared with ``passes --json``
(one function decides both, so they must be equal) and, in the same test, with the files.
"""

from __future__ import annotations

import base64
import gzip
import html as html_lib
import json
import re
import tarfile
from itertools import pairwise
from pathlib import Path

import pytest

from tests import run_cli
from tests.test_passes import _FUSION, SETS, extract, final_file, snapshot_files

from .browser import open_page, problems, search

_DATA = re.compile(r'<script type="application/json" id="hv-data"( data-encoding="gzip-base64")?>(.*?)</script>',
                   re.DOTALL)
_CARD = re.compile(r'<(a|span)( class="hv-drawn")?(?: href="[^"]*" data-view="([^"]*)")? data-step="(\d+)"[^>]*>'
                   r"<b>#\d+ ([^<]*)</b><span>(\d+) instructions · (\d+) fusions?</span>")
#: An instruction line of HLO text, in any computation: ``  [ROOT ]name = shape opcode(``.
_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%?[\w.\-]+ = ", re.MULTILINE)


def report_data(report: Path) -> dict:
    """The explorer's data block of a report, decoded as the page's script decodes it."""
    m = _DATA.search(report.read_text())
    assert m is not None, "no hv-data block"
    text = m.group(2)
    if m.group(1):
        text = gzip.decompress(base64.b64decode(text.strip())).decode("ascii")
    return json.loads(text)


def show_tar(name: str, out: Path, capsys, *options: str) -> Path:
    code, stdout, err = run_cli(["show", str(SETS / f"{name}.tar.xz"), "-o", str(out), *options], capsys)
    assert code in (0, None), err
    assert "pass history:" in stdout
    return out / "report.html"


@pytest.fixture(scope="module")
def shown(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """name → (report.html of ``show NAME.tar.xz``, the unpacked snapshots), made once."""
    from hloviz import api

    out: dict[str, tuple[Path, Path]] = {}
    for name in ("fused_additions", "fused_additions_const", "jax_mlp"):
        where = tmp_path_factory.mktemp(name)
        result = api.show(str(SETS / f"{name}.tar.xz"), where / "out")
        out[name] = (result.files["report"], extract(name, where / "dump"))
    return out


# --- the credits: passes --json's, and the files' ----------------------------------------------

@pytest.mark.requires_dot
@pytest.mark.parametrize("name", ["fused_additions", "fused_additions_const", "jax_mlp"])
def test_the_reports_credits_are_those_of_passes_json(shown, name, capsys):
    report, folder = shown[name]
    code, out, err = run_cli(["passes", str(SETS / f"{name}.tar.xz"), "--json"], capsys)
    assert code in (0, None), err
    expected = json.loads(out)
    data = report_data(report)["passes"]
    assert data["fusions"] == expected["fusions"] and data["fusions"]
    assert data["folded"] == expected["folded"]
    assert [(s["index"], s["instructions"], s["fusions"]) for s in data["steps"]] == \
        [(s["index"], s["instructions"], s["fusions"]) for s in expected["snapshots"]]
    # and both against XLA's files, so that one wrong function cannot pass for two: each step's
    # counts are its file's, each fusion's pass is the first file holding it, each folded value's
    # pass the first file holding a constant of that value
    files = snapshot_files(folder)
    texts = {i: p.read_text() for i, _, _, p in files}
    assert [(s["index"], s["instructions"], s["fusions"]) for s in data["steps"]] == \
        [(i, len(_INSTRUCTION.findall(texts[i])), len(_FUSION.findall(texts[i]))) for i, *_ in files]
    for f in data["fusions"]:
        first = next(i for i, *_ in files if f["name"] in _FUSION.findall(texts[i]))
        assert f["created_by"]["index"] == first, f
    for f in data["folded"]:
        value = re.compile(rf"= \S+ constant\({re.escape(f['value'])}\)")
        first = next(i for i, *_ in files if value.search(texts[i]))
        assert f["pass"]["index"] == first, f


@pytest.mark.requires_dot
@pytest.mark.parametrize("name", ["fused_additions", "jax_mlp"])
def test_each_fusion_is_credited_in_the_report_to_the_first_snapshot_holding_it(shown, name):
    report, folder = shown[name]
    first: dict[str, tuple[int, str]] = {}
    for index, _, after, path in snapshot_files(folder):
        for fusion in _FUSION.findall(path.read_text()):
            first.setdefault(fusion, (index, after))
    final = set(_FUSION.findall(final_file(folder).read_text()))
    page = html_lib.unescape(report.read_text())
    rows = dict(re.findall(r"<tr><td><code>([^<]+)</code></td><td>[^<]*</td><td>([^<]+)</td></tr>", page))
    assert set(rows) == final
    for fusion in final:
        index, after = first[fusion]
        assert rows[fusion].startswith(f"{after} (#{index})"), (fusion, rows[fusion])


# --- the filmstrip ----------------------------------------------------------------------------

@pytest.mark.requires_dot
@pytest.mark.parametrize("name", ["fused_additions", "jax_mlp"])
def test_the_filmstrip_is_the_snapshots_that_changed_with_xlas_counts(shown, name):
    report, folder = shown[name]
    page = html_lib.unescape(report.read_text())
    cards = _CARD.findall(page)
    files = snapshot_files(folder)
    texts = {i: p.read_text() for i, _, _, p in files}
    differs = {i for (_, _, _, a), (i, _, _, _) in pairwise(files) if texts[i] != a.read_text()}
    assert cards
    for _, _, _, index, pass_name, instructions, fusions in cards:
        i = int(index)
        assert i in differs  # a card is a snapshot whose text differs from the one before
        step = next(f for f in files if f[0] == i)
        assert pass_name == step[2]
        assert int(instructions) == len(_INSTRUCTION.findall(texts[i]))
        assert int(fusions) == len(_FUSION.findall(texts[i]))
    heading = re.search(r"XLA's passes \((\d+) snapshots", page)
    assert heading is not None and int(heading.group(1)) == len(files)


@pytest.mark.requires_dot
def test_step_pictures_are_views_of_their_own_and_bounded(shown):
    report, folder = shown["jax_mlp"]
    data = report_data(report)
    page = report.read_text()
    drawn = [int(m) for m in re.findall(r'class="hv-drawn" href="#v=step:(\d+)"', page)]
    steps = [v for v in data["views"] if v["key"].startswith("step:")]
    assert [int(v["key"][5:]) for v in steps] == drawn and 0 < len(drawn) <= 12
    keys = [s["key"] for s in data["sides"]]
    assert keys[:2] == ["pre", "post"] and keys[2:] == [f"s{i}" for i in drawn] and data["base"] == 2
    for v, i in zip(steps, drawn):  # each step's picture draws its own side: the snapshot's instructions
        side = data["sides"][v["sides"][0]]
        assert side["key"] == f"s{i}" and v["nodes"]
        text = next(p for j, _, _, p in snapshot_files(folder) if j == i).read_text()
        assert side["count"] == len(_INSTRUCTION.findall(text))


@pytest.mark.requires_dot
def test_a_report_without_snapshots_has_no_pass_section(tmp_path):
    from hloviz import api

    report = api.show("samples/captures/fused_additions", tmp_path).files["report"]
    assert 'id="hv-passes"' not in report.read_text() and "passes" not in report_data(report)


# --- the docs (docs/passes.md), and a live capture -------------------------------------------------------------

@pytest.mark.requires_dot
def test_the_docs_line_is_what_show_prints(tmp_path, capsys, monkeypatch):
    readme = (Path(__file__).resolve().parents[1] / "docs" / "passes.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- show-passes-line: hloviz (.+?) -->\n```text\n(.*?)\n```", readme)
    assert m is not None
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    code, out, err = run_cli([*m.group(1).split(), "-o", str(tmp_path / "out")], capsys)
    assert code in (0, None), err
    assert m.group(2) in out.splitlines()


@pytest.mark.requires_jax
@pytest.mark.requires_dot
@pytest.mark.slow
def test_show_passes_on_a_live_jax_function_leaves_no_dump_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    code, out, err = run_cli(["show", "samples/jax_mlp.py:mlp", "--passes", "-o", str(tmp_path / "out")], capsys)
    assert code in (0, None), err
    assert [p.name for p in temp.iterdir() if p.name.startswith("hloviz-passes-")] == []
    data = report_data(tmp_path / "out" / "report.html")
    passes = data["passes"]
    assert passes["fusions"] and all(f["created_by"] is not None for f in passes["fusions"])
    post = {n for s in data["sides"] if s["key"] == "post" for n in s["name"]}
    assert {f["name"] for f in passes["fusions"]} <= post  # the credits name the report's own module
    assert "pass history:" in out


# --- bad input --------------------------------------------------------------------------------

def test_passes_on_a_target_without_snapshots_is_one_clear_error(tmp_path, capsys):
    code, _, err = run_cli(["show", "samples/captures/fused_additions", "--passes", "-o", str(tmp_path / "o")], capsys)
    assert code == 2 and "no per-pass snapshots" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()
    code, _, err = run_cli(["show", "--pre", "samples/captures/fused_additions/pre.hlo", "--passes"], capsys)
    assert code == 2 and "--pre/--post" in err
    code, _, err = run_cli(["show", "samples/captures/fused_additions/post.hlo", "--passes"], capsys)
    assert code == 2 and "per-pass snapshots" in err
    code, _, err = run_cli(["show", "samples/fused_additions.py:fused_additions", "--passes", "--tf", "2.17"], capsys)
    assert code == 2 and "--tf" in err
    archive = tmp_path / "plain.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for p in Path("samples/captures/fused_additions").iterdir():
            tar.add(p, arcname=p.name)
    code, _, err = run_cli(["show", str(archive), "-o", str(tmp_path / "o")], capsys)
    assert code == 2 and "no per-pass snapshots" in err and "Traceback" not in err


@pytest.mark.requires_dot
def test_an_incomplete_set_says_so_in_the_report_and_credits_nothing_across_the_gap(tmp_path, capsys):
    folder = extract("fused_additions", tmp_path / "dump")
    gone = next(p for *_, p in snapshot_files(folder) if ".after_fusion." in p.name)
    gone.unlink()
    code, _, err = run_cli(["show", str(folder), "-o", str(tmp_path / "out")], capsys)
    assert code in (0, None), err
    data = report_data(tmp_path / "out" / "report.html")["passes"]
    assert any("missing" in p for p in data["problems"])
    (fusion,) = data["fusions"]
    assert fusion["created_by"] is None and "missing" in fusion["note"]
    assert "incomplete:" in (tmp_path / "out" / "report.html").read_text()


# --- in the browser -----------------------------------------------------------------------------

def _panel(page) -> str:
    return page.locator("#hv-panel").inner_text()


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_click_the_kernel_and_read_the_pass_that_made_it(shown, browser):
    report, folder = shown["fused_additions"]
    (fusion,) = set(_FUSION.findall(final_file(folder).read_text()))
    made = next(i for i, _, _, p in snapshot_files(folder) if fusion in _FUSION.findall(p.read_text()))
    loaded = open_page(browser, report)
    page = loaded.page
    # a click on one of the kernel's boxes names the pass that made its kernel
    inside = page.evaluate("() => window.hloviz.boxes().find(b => b.members.length > 1 && "
                           "b.members.every(m => m.side === 'post' && m.opcode === 'add')).id")
    page.locator(f"#hv-viewport svg g[data-box='{inside}']").first.click()
    page.wait_for_function("() => window.hloviz.selected() !== null")
    assert f"the pass that made its kernel {fusion}" in _panel(page)
    assert f"made by fusion (#{made})" in _panel(page)
    # and a click on the kernel itself (the fusion's cluster)
    for box in page.evaluate("() => window.hloviz.boxes().map(b => b.id).filter(i => i.startsWith('cluster'))"):
        page.locator(f"#hv-viewport svg g[data-box='{box}']").dispatch_event("click")
        if page.evaluate("n => window.hloviz.selected().instruction.name === n", fusion):
            break
    assert page.evaluate("window.hloviz.selected().instruction.name") == fusion
    assert "the pass that made it" in _panel(page)
    assert f"made by fusion (#{made})" in _panel(page)
    # the module just after that pass, with the same fusion selected in it
    page.locator(f"#hv-panel button[data-step='{made}']").click()
    page.wait_for_function("k => window.hloviz.view() === k", arg=f"step:{made}")
    page.wait_for_function("n => (window.hloviz.selected() || {}).instruction && "
                           "window.hloviz.selected().instruction.name === n", arg=fusion)
    assert page.evaluate("window.hloviz.selected().instruction.side") == f"s{made}"
    assert f"made by fusion (#{made})" in _panel(page)
    assert "instructions, 1 fusions" in _panel(page)
    # a card of the filmstrip shows the module after its step; its picture draws that snapshot
    card = page.locator(".hv-film a[data-step]").first
    key = card.get_attribute("data-view")
    card.click()
    page.wait_for_function("k => window.hloviz.view() === k", arg=key)
    assert page.locator(f".hv-film a[data-view='{key}']").get_attribute("aria-current") == "step"
    assert page.locator("#hv-crumbs button").count() == 2
    page.locator(".hv-film a[data-view='top']").click()
    page.wait_for_function("() => window.hloviz.view() === 'top'")
    assert problems(loaded) == []


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_click_a_folded_constant_and_read_the_pass_that_wrote_it(shown, browser):
    report, folder = shown["fused_additions_const"]
    data = report_data(report)["passes"]
    (fold,) = data["folded"]
    first = next(i for i, _, _, p in snapshot_files(folder) if re.search(r"f32\[\] constant\(1000\)", p.read_text()))
    loaded = open_page(browser, report)
    page = loaded.page
    search(page, fold["constant"])
    page.locator("#hv-results button[data-g]").first.click()
    page.wait_for_function("n => (window.hloviz.selected() || {}).instruction && "
                           "window.hloviz.selected().instruction.name === n", arg=fold["constant"])
    assert f"written by constant_folding (#{first})" in _panel(page)
    assert problems(loaded) == []


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_without_script_the_pass_section_is_plain_html(shown, browser):
    report, _ = shown["fused_additions"]
    loaded = open_page(browser, report, javascript=False)
    text = loaded.page.locator("body").inner_text()
    assert "XLA's passes" in text and "made by (snapshot)" in text
    assert problems(loaded) == []


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_layers_work_in_a_steps_picture(tmp_path, capsys, browser):
    """A Keras training step's snapshots keep its layers (op_name scopes): in a step's picture a
    layer's box selects the layer, and the layer's instructions listed are that snapshot's."""
    report = show_tar("keras_cnn_train", tmp_path / "out", capsys)
    loaded = open_page(browser, report)
    page = loaded.page
    card = page.locator(".hv-film a[data-step]").first
    key, index = card.get_attribute("data-view"), card.get_attribute("data-step")
    card.click()
    page.wait_for_function("k => window.hloviz.view() === k", arg=key)
    # a layer: a closed one's box, else (the step's ops all fit) an open one's frame
    layer = page.evaluate("() => { const b = window.hloviz.boxes().filter(b => b.scope !== null);"
                          " return b.find(x => x.members.length) || b[0]; }")
    assert layer is not None and {m["side"] for m in layer["members"]} <= {f"s{index}"}
    page.locator(f"#hv-viewport svg g[data-box='{layer['id']}']").first.dispatch_event("click")
    page.wait_for_function("s => (window.hloviz.selected() || {}).scope === s", arg=layer["scope"])
    assert f"after #{index}" in _panel(page)  # its instructions in this snapshot are listed
    lit = page.evaluate("window.hloviz.highlighted()")
    assert lit and all(b["side"] == f"s{index}" for b in lit)
    search(page, layer["scope"].split("/")[0])
    assert page.locator("#hv-results button[data-scope]").count() >= 1
    # a layer of the step opens in place, drawn from that snapshot (not the optimized module's)
    views = report_data(report)["views"]
    opened = next(v for v in views if v["key"].startswith(f"{key}|s:"))
    scope = opened["opens"][2:]
    search(page, scope)
    page.locator(f"#hv-results button[data-scope='{scope}']").click()
    page.wait_for_function("k => window.hloviz.view() === k", arg=opened["key"])
    inside = page.evaluate("window.hloviz.boxes()")
    assert inside and {m["side"] for b in inside for m in b["members"]} == {f"s{index}"}
    assert _crumbs(page)[0] == "whole module" and _crumbs(page)[1].startswith(f"after #{index}")
    page.locator("#hv-viewport").press("Escape")
    page.wait_for_function("k => window.hloviz.view() === k", arg=key)
    assert problems(loaded) == []


def _crumbs(page) -> list[str]:
    return page.evaluate("Array.from(document.querySelectorAll('#hv-crumbs button')).map(b => b.textContent)")


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_a_cloned_kernel_names_both_passes_and_the_original_its_own(tmp_path, capsys, browser):
    """TensorFlow 2.17's CPU compiler clones each fusion (``fusion.clone``): the kernel names the
    pass that cloned it and the one that made the original; the original, which only the
    snapshots hold, names the pass that made it there."""
    report = show_tar("fused_additions-tf2.17", tmp_path / "out", capsys)
    folder = extract("fused_additions-tf2.17", tmp_path / "dump")
    files = snapshot_files(folder)
    made = next(i for i, _, _, p in files if "fusion" in _FUSION.findall(p.read_text()))
    cloned, cloner = next((i, after) for i, _, after, p in files if "fusion.clone" in _FUSION.findall(p.read_text()))
    loaded = open_page(browser, report, fragment="i=post:fusion.clone")
    page = loaded.page
    page.wait_for_function("() => (window.hloviz.selected() || {}).instruction !== undefined")
    text = _panel(page)
    assert f"made by {cloner} (#{cloned})" in text and f"a clone of fusion, which was made by fusion (#{made})" in text
    page.locator(f"#hv-panel button[data-step='{made}']").click()
    page.wait_for_function("k => window.hloviz.view() === k", arg=f"step:{made}")
    page.wait_for_function("() => window.hloviz.selected().instruction.name === 'fusion'")
    assert f"made here, by fusion (#{made})" in _panel(page)
    assert problems(loaded) == []

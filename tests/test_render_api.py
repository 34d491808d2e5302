"""hloviz show / hloviz render, through the CLI and the Python API, on the committed seed capture."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import hloviz
from hloviz import api
from hloviz.errors import InputError

from . import present, run_cli

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "samples" / "captures" / "fused_additions"
GOLDEN = Path(__file__).parent / "golden" / "render"


@pytest.mark.requires_dot
def test_show_writes_report_and_pictures_and_prints_the_summary(tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["show", str(SEED), "-o", str(out)], capsys)
    assert code == 0, stderr
    assert sorted(p.name for p in out.iterdir()) == [".hloviz-report.json", "post.svg", "pre.svg", "report.html",
                                                     "side-by-side.svg"]
    assert stdout.startswith("fused_additions: 1003 ops → 1 kernel (kLoop fusion: 1000 add, broadcast): 1000 in kernels")
    assert "kernels: 1" in stdout and "#1 add_add_fusion" in stdout
    assert "samples/fused_additions.py:33" in stdout or "fused_additions.py:33" in stdout
    assert "folded constants: 0" in stdout
    for name in ("report.html", "side-by-side.svg"):
        assert str(out / name) in stdout
    for svg in ("pre.svg", "post.svg", "side-by-side.svg"):
        ET.fromstring((out / svg).read_bytes())
    report = (out / "report.html").read_text()
    assert "<svg" in report and "Kernels (1)" in report and "Folded constants (0)" in report
    # no link out of the page: SVG's namespace names are the only http:// text, written as
    # attributes or, in the explorer's JSON data (a fusion's picture), with escaped quotes
    for quote in ('"', '\\"'):
        for ns in ('xmlns={q}http://www.w3.org/2000/svg{q}', 'xmlns:xlink={q}http://www.w3.org/1999/xlink{q}'):
            report = report.replace(ns.format(q=quote), "")
    assert "http://" not in report


@pytest.mark.requires_dot
def test_show_default_folder_is_named_after_the_function(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, stderr = run_cli(["show", str(SEED)], capsys)
    assert code == 0, stderr
    assert (tmp_path / "hloviz-out" / "fused_additions" / "report.html").exists()


@pytest.mark.requires_dot
def test_show_open_uses_the_browser(tmp_path, capsys, monkeypatch):
    opened = []
    import webbrowser

    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    code, _, stderr = run_cli(["show", str(SEED), "-o", str(tmp_path), "--open"], capsys)
    assert code == 0, stderr
    assert opened == [(tmp_path / "report.html").resolve().as_uri()]


@pytest.mark.requires_dot
@pytest.mark.parametrize("suffix", [".svg", ".png", ".dot", ".html", ".json"])
def test_render_formats_follow_the_suffix(tmp_path, capsys, suffix):
    out = tmp_path / f"pic{suffix}"
    code, _stdout, stderr = run_cli(["render", str(SEED), "-o", str(out), "--stage", "both"], capsys)
    assert code == 0, stderr
    data = out.read_bytes()
    if suffix == ".svg":
        ET.fromstring(data)
    elif suffix == ".png":
        assert data.startswith(b"\x89PNG")
    elif suffix == ".dot":
        assert data.startswith(b"digraph hloviz {") and b"before optimization" in data
    elif suffix == ".html":
        assert data.startswith(b"<!DOCTYPE html>") and b"<svg" in data
    else:
        columns = json.loads(data)["columns"]
        assert [c["title"] for c in columns] == ["before optimization", "after optimization"]
        post = columns[1]["picture"]
        assert any(n["badge"] == "#1" for n in post["nodes"] + post["clusters"])


def test_render_dot_and_json_need_no_graphviz(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    code, _, stderr = run_cli(["render", str(SEED / "post.hlo"), "-o", str(tmp_path / "p.dot")], capsys)
    assert code == 0, stderr
    code, _, stderr = run_cli(["render", str(SEED / "post.hlo"), "-o", str(tmp_path / "p.json")], capsys)
    assert code == 0, stderr
    data = json.loads((tmp_path / "p.json").read_text())
    chain = next(n for n in data["nodes"] if n["rows"][0] == "ROOT add ×1000")
    assert len(chain["instructions"]) == 1000


def test_render_rejects_unknown_suffix_and_stage(tmp_path, capsys):
    code, _, stderr = run_cli(["render", str(SEED), "-o", str(tmp_path / "p.gif")], capsys)
    assert code == 2 and ".svg, .png, .dot, .html or .json" in stderr
    code, _, stderr = run_cli(["render", str(SEED), "-o", str(tmp_path / "p.dot"), "--stage", "middle"], capsys)
    assert code == 2 and "pre, post or both" in stderr
    code, _, stderr = run_cli(["render", str(SEED / "post.hlo"), "-o", str(tmp_path / "p.dot"), "--stage", "both"], capsys)
    assert code == 2 and "needs both modules" in stderr


def test_render_options_reach_the_view(tmp_path, capsys):
    out = tmp_path / "p.json"
    code, _, stderr = run_cli(["render", str(GOLDEN / "rules.hlo"), "-o", str(out), "--focus", "mx",
                          "--radius", "0"], capsys)
    assert code == 0, stderr
    data = json.loads(out.read_text())
    assert [n["instructions"] for n in data["nodes"]] == [["mx"]]
    code, _, stderr = run_cli(["render", str(GOLDEN / "rules.hlo"), "-o", str(out), "--computation", "nope"], capsys)
    assert code == 2 and "no computation named 'nope'" in stderr
    code, _, _ = run_cli(["render", str(GOLDEN / "rules.hlo"), "-o", str(out), "--expand-chains"], capsys)
    assert code == 0 and "e3" in {i for n in json.loads(out.read_text())["nodes"] for i in n["instructions"]}
    code, _, stderr = run_cli(["render", str(GOLDEN / "rules.hlo"), "-o", str(out), "--budget", "3"], capsys)
    assert code == 0 and "note:" in stderr and len(json.loads(out.read_text())["nodes"]) <= 3


@pytest.mark.requires_dot
def test_python_api_objects_show_themselves_in_jupyter(tmp_path):
    pic = api.render(hloviz.parse_file(SEED / "post.hlo"))
    svg = present(pic._repr_svg_(), "an SVG")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    png = api.render(str(SEED), stage="pre", fmt="png")
    assert present(png._repr_png_(), "a PNG").startswith(b"\x89PNG") and "<svg" in present(png._repr_svg_(), "an SVG")
    result = api.show(str(SEED), tmp_path)
    html = result._repr_html_()
    assert "<svg" in html and "Kernels (1)" in html and "<html" not in html
    assert result.files["report"] == tmp_path / "report.html"
    assert result.summary[0] == result.analysis.verdict


def test_api_render_validates_options():
    with pytest.raises(InputError, match="--budget"):
        api.render(str(SEED), budget=0, fmt="dot")
    with pytest.raises(InputError, match="--radius"):
        api.render(str(SEED), radius=-1, fmt="dot")


@pytest.mark.requires_tf
@pytest.mark.requires_dot
@pytest.mark.slow
def test_show_live_function_with_folding(tmp_path, capsys):
    """TensorFlow end to end: the constant chain folds to x + 1000, and every output says so."""
    stages = []
    result = api.show(f"{ROOT}/samples/fused_additions.py:fused_additions_const", tmp_path,
                      progress=stages.append)
    assert stages[0] == "capturing" and stages[-1] == "writing"
    assert "folded into 1 constant (1000)" in result.analysis.verdict
    assert any(line.strip().startswith("constant") and "= 1000 (by XLA; from 999 ops: add, add_1, add_2, +996 more)" in line
               for line in result.summary)
    side = (tmp_path / "side-by-side.svg").read_text()
    assert "folded → " in side and "= 1000" in side
    report = (tmp_path / "report.html").read_text()
    assert "Folded constants (1)" in report and "fused_additions.py:" in report

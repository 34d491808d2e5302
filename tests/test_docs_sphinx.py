"""The Sphinx extension, as a docs author uses it: real Sphinx builds (HTML builder) of
docs/example (MyST markdown and reStructuredText) and of small sites made here, from the saved
captures (no TensorFlow). Graphviz runs are counted, not timed."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest

from .docsites import ROOT, counting_dot_runs, inline_svgs, titles

pytest.importorskip("sphinx", reason="pip install 'hloviz[sphinx]'")
pytest.importorskip("myst_parser", reason="pip install 'hloviz[sphinx]'")
pytestmark = pytest.mark.requires_dot

EXAMPLE = ROOT / "docs" / "example"


def build(src: Path, out: Path, *, cache: Path, fresh: bool = False, strict: bool = False,
          doctrees: Path | None = None) -> tuple[int, str]:
    """One ``sphinx-build -b html`` run in this process: (status, warnings)."""
    from sphinx.application import Sphinx
    from sphinx.errors import SphinxWarning
    from sphinx.util.console import nocolor
    from sphinx.util.docutils import docutils_namespace

    nocolor()
    warnings = io.StringIO()
    with docutils_namespace():  # each build registers its directives afresh, as sphinx-build does
        app = Sphinx(str(src), str(src), str(out), str(doctrees or out / ".doctrees"), "html", status=None,
                     warning=warnings, freshenv=fresh, warningiserror=strict,
                     confoverrides={"hloviz_cache_dir": str(cache)})
        try:
            app.build()
        except SphinxWarning as err:  # -W on a Sphinx that raises on the first warning; any other error propagates
            return 1, warnings.getvalue() + f"\n{err}"
        return app.statuscode, warnings.getvalue()


def test_the_example_site_builds_with_its_pictures_and_a_rebuild_draws_nothing(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    with counting_dot_runs(monkeypatch) as runs:
        status, warnings = build(EXAMPLE, tmp_path / "one", cache=cache)
    assert status == 0 and "hloviz" not in warnings, warnings
    assert len(runs) >= 3  # three pictures drawn (more when a layout is retried coarser)
    index = (tmp_path / "one" / "index.html").read_text(encoding="utf-8")
    svgs = inline_svgs(index)
    assert len(svgs) == 2, "both MyST pictures are in the page"
    assert all('role="img"' in s and "aria-labelledby" in s for s in svgs)
    assert titles(svgs)[0].startswith("fused_additions: 1003 ops → 1 kernel")
    assert "<figcaption>1000 additions, one kernel</figcaption>" in index
    assert len(inline_svgs((tmp_path / "one" / "rst_page.html").read_text(encoding="utf-8"))) == 1
    images = sorted((tmp_path / "one" / "_images").glob("hloviz-*.svg"))
    assert [re.fullmatch(r"hloviz-[0-9a-f]{20}\.svg", p.name) is not None for p in images] == [True] * 3
    first = {p.name: p.read_bytes() for p in images}

    # Every document read again (a fresh environment), into another folder: the cache answers.
    with counting_dot_runs(monkeypatch) as runs:
        status, warnings = build(EXAMPLE, tmp_path / "two", cache=cache, fresh=True)
    assert status == 0 and runs == [], runs
    again = {p.name: p.read_bytes() for p in sorted((tmp_path / "two" / "_images").glob("hloviz-*.svg"))}
    assert again == first, "the same input gives the same bytes"


def _site(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conf.py").write_text('extensions = ["hloviz.sphinx"]\nproject = "t"\n', encoding="utf-8")
    (folder / "index.rst").write_text(body, encoding="utf-8")
    return folder


def test_a_changed_capture_is_drawn_again(tmp_path, monkeypatch):
    cap = tmp_path / "capture"
    shutil.copytree(ROOT / "samples" / "captures" / "matmul_chain-tf2.21", cap)
    src = _site(tmp_path / "src", "Model\n=====\n\n.. hloviz:: ../capture\n   :stage: post\n")
    out, cache = tmp_path / "out", tmp_path / "cache"
    with counting_dot_runs(monkeypatch) as runs:
        assert build(src, out, cache=cache)[0] == 0
    assert runs
    before = inline_svgs((out / "index.html").read_text(encoding="utf-8"))
    with counting_dot_runs(monkeypatch) as runs:
        assert build(src, out, cache=cache)[0] == 0
    assert runs == []  # nothing changed: nothing drawn
    for name in ("pre.hlo", "post.hlo", "capture.json"):  # the user re-captures under TF 2.17
        shutil.copy(ROOT / "samples" / "captures" / "matmul_chain-tf2.17" / name, cap / name)
    with counting_dot_runs(monkeypatch) as runs:
        assert build(src, out, cache=cache)[0] == 0
    assert runs, "the page depends on the capture's files: Sphinx reads it again and hloviz draws again"
    after = inline_svgs((out / "index.html").read_text(encoding="utf-8"))
    assert len(after) == 1 and after != before
    assert "__onednn$matmul" in after[0] and "__onednn$matmul" not in before[0]


def test_a_bad_target_is_a_warning_at_its_line_and_the_build_finishes(tmp_path):
    body = ("Model\n=====\n\nSome text.\n\n.. hloviz:: ../no_such_capture\n   :stage: post\n\n"
            ".. hloviz:: ../../../samples/captures/fused_additions\n   :colour: red\n\nMore text.\n")
    src = _site(tmp_path / "site" / "a" / "src", body)
    shutil.copytree(ROOT / "samples" / "captures" / "fused_additions", tmp_path / "site" / "samples" / "captures"
                    / "fused_additions")
    status, warnings = build(src, tmp_path / "out", cache=tmp_path / "cache")
    assert status == 0
    assert re.search(r"index\.rst:6: WARNING: hloviz: .*no_such_capture.* is not a file, a folder", warnings), warnings
    assert re.search(r'index\.rst:9: ERROR: Error in "hloviz" directive:\s+unknown option: "colour"', warnings), warnings
    assert "More text." in (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    status, warnings = build(src, tmp_path / "strict", cache=tmp_path / "cache", strict=True)
    assert status != 0, "-W makes the warning an error"
    assert re.search(r"index\.rst:6: WARNING: hloviz: .*no_such_capture", warnings), warnings  # and it is ours


@pytest.mark.requires_chromium
def test_the_built_page_shows_the_picture_with_its_title_in_light_and_dark(tmp_path):
    from .browser import chromium

    cache = tmp_path / "cache"
    assert build(EXAMPLE, tmp_path / "site", cache=cache)[0] == 0
    page_url = (tmp_path / "site" / "index.html").as_uri()
    image = min((tmp_path / "site" / "_images").glob("hloviz-*.svg")).as_uri()
    background = ("(s) => getComputedStyle(s.querySelector('.graph > polygon')).fill")
    with chromium() as browser:
        for scheme in ("light", "dark"):
            page = browser.new_page(color_scheme=scheme)  # type: ignore[attr-defined]
            page.goto(page_url)
            svg = page.locator("svg[role=img]").first
            assert svg.locator("title").first.text_content().startswith("fused_additions: 1003 ops")
            # the default theme has no dark mode: an inlined picture stays light on it
            assert svg.evaluate(background) == "rgb(255, 255, 255)"
            page.goto(image)  # the picture on its own follows the reader's scheme
            fill = page.locator("svg").evaluate(background)
            assert fill == ("rgb(255, 255, 255)" if scheme == "light" else "rgba(0, 0, 0, 0)"), (scheme, fill)
            page.close()


def test_memory_option_draws_xla_memory_timeline_and_a_rebuild_draws_nothing(tmp_path, monkeypatch):
    """``:memory:`` on a saved capture that kept XLA's buffer assignment: the timeline, titled and
    described with XLA's total (memory.json, summed here); no Graphviz run, and cached."""
    import json

    import hloviz.render.page.memory as memory_pictures

    cap = tmp_path / "keras_mha"
    shutil.copytree(ROOT / "samples" / "memory" / "keras_mha", cap)
    total = sum(a["size"] for a in json.loads((cap / "memory.json").read_text())["allocations"])
    src = _site(tmp_path / "src", "Memory\n======\n\n.. hloviz:: ../keras_mha\n   :memory:\n   :caption: where it goes\n")
    drawn: list[str] = []
    real = memory_pictures.timeline_svg
    monkeypatch.setattr(memory_pictures, "timeline_svg", lambda *a, **k: drawn.append("x") or real(*a, **k))
    out, cache = tmp_path / "out", tmp_path / "cache"
    with counting_dot_runs(monkeypatch) as runs:
        status, warnings = build(src, out, cache=cache)
    assert status == 0 and "hloviz" not in warnings, warnings
    assert runs == [] and drawn == ["x"]
    page = (out / "index.html").read_text(encoding="utf-8")
    (svg,) = inline_svgs(page)
    assert titles([svg]) == ["keras_mha · memory"]
    assert re.search(rf'<desc id="[^"]+-desc">Memory: {total / 1024:.1f} KiB in all \(XLA', svg), svg[:600]
    assert 'role="img"' in svg and "prefers-color-scheme:dark" in svg  # the directive's default theme: auto
    assert "<figcaption>where it goes</figcaption>" in page
    with counting_dot_runs(monkeypatch) as runs:
        assert build(src, tmp_path / "again", cache=cache, fresh=True)[0] == 0
    assert runs == [] and drawn == ["x"], "the second build reads the cache"
    assert inline_svgs((tmp_path / "again" / "index.html").read_text(encoding="utf-8")) == [svg]


def test_memory_with_another_stage_is_a_warning(tmp_path):
    shutil.copytree(ROOT / "samples" / "memory" / "keras_mha", tmp_path / "capture")
    src = _site(tmp_path / "src", "M\n=\n\n.. hloviz:: ../capture\n   :memory:\n   :stage: pre\n")
    status, warnings = build(src, tmp_path / "out", cache=tmp_path / "cache")
    assert status == 0
    assert re.search(r"index\.rst:4: WARNING: hloviz: .*:memory: draws the memory timeline.*:stage: pre", warnings), \
        warnings

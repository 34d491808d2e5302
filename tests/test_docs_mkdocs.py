"""The MkDocs plugin, as a docs author uses it: real ``mkdocs build`` runs of
docs/example-mkdocs and of small sites made here, from the saved captures (no TensorFlow).
``plugins: [hloviz]`` finds the plugin through its entry point, as in a user's project.

The plugin does not depend on a theme: its tests build with MkDocs' own ``mkdocs`` theme, so
they run wherever MkDocs is installed. The example site's theme, Material, is tested where it is
installed (the example built as written, and its light and dark schemes in Chromium)."""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

import pytest

from .docsites import ROOT, counting_dot_runs, inline_svgs, titles

pytest.importorskip("mkdocs", reason="pip install 'hloviz[mkdocs]'")
pytestmark = pytest.mark.requires_dot

EXAMPLE = ROOT / "docs" / "example-mkdocs"


def _has_material() -> bool:
    try:
        import material  # noqa: F401 - only whether it is there
    except ImportError:
        return False
    return True


needs_material = pytest.mark.skipif(not _has_material(), reason="the Material theme: pip install 'hloviz[mkdocs]'")


def build(config_file: Path, site: Path, *, cache: Path, strict: bool = False,
          theme: str | None = None) -> tuple[int, str]:
    """One ``mkdocs build`` in this process: (status, the warnings logged); ``theme`` replaces
    the configuration's theme (as ``mkdocs build --theme`` does)."""
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                records.append(record.getMessage())

    handler = Keep()
    logging.getLogger("mkdocs").addHandler(handler)
    try:
        extra = {"theme": theme} if theme else {}
        config = load_config(config_file=str(config_file), site_dir=str(site), strict=strict, **extra)
        config.plugins["hloviz"].config.cache_dir = str(cache)  # type: ignore[attr-defined]
        try:
            mkdocs_build(config)
        except Abort:
            return 1, "\n".join(records)
        return 0, "\n".join(records)
    finally:
        logging.getLogger("mkdocs").removeHandler(handler)


@pytest.mark.parametrize("theme", ["mkdocs", pytest.param(None, id="material", marks=needs_material)])
def test_the_example_site_builds_with_its_pictures_and_a_rebuild_draws_nothing(tmp_path, monkeypatch, theme):
    cache = tmp_path / "cache"
    with counting_dot_runs(monkeypatch) as runs:
        status, warnings = build(EXAMPLE / "mkdocs.yml", tmp_path / "one", cache=cache, theme=theme)
    assert status == 0 and "hloviz" not in warnings, warnings
    assert len(runs) >= 2
    page = (tmp_path / "one" / "index.html").read_text(encoding="utf-8")
    svgs = inline_svgs(page)
    assert len(svgs) == 2, "the fenced block and the image-like reference"
    assert titles(svgs)[0].startswith("fused_additions: 1003 ops → 1 kernel")
    assert "<figcaption>1000 additions, one kernel</figcaption>" in page
    files = sorted((tmp_path / "one" / "assets" / "hloviz").glob("hloviz-*.svg"))
    assert len(files) == 2 and all(re.fullmatch(r"hloviz-[0-9a-f]{20}\.svg", p.name) for p in files)
    assert all(f'href="assets/hloviz/{p.name}"' in page for p in files)
    with counting_dot_runs(monkeypatch) as runs:
        status, _ = build(EXAMPLE / "mkdocs.yml", tmp_path / "two", cache=cache, theme=theme)
    assert status == 0 and runs == []
    assert [p.read_bytes() for p in sorted((tmp_path / "two" / "assets" / "hloviz").glob("*.svg"))] == \
        [p.read_bytes() for p in files]


def _site(folder: Path, page: str) -> Path:
    (folder / "docs" / "guide").mkdir(parents=True, exist_ok=True)
    (folder / "mkdocs.yml").write_text("site_name: t\ntheme: {name: mkdocs}\nplugins:\n  - hloviz\n",
                                       encoding="utf-8")
    (folder / "docs" / "index.md").write_text("# Home\n", encoding="utf-8")
    (folder / "docs" / "guide" / "index.md").write_text(page, encoding="utf-8")
    return folder / "mkdocs.yml"


def test_a_changed_capture_is_drawn_again_and_links_hold_from_a_nested_page(tmp_path, monkeypatch):
    cap = tmp_path / "capture"
    shutil.copytree(ROOT / "samples" / "captures" / "matmul_chain-tf2.21", cap)
    config = _site(tmp_path / "site", "# Guide\n\n```hloviz\ntarget: ../../../capture\nstage: post\n```\n")
    cache = tmp_path / "cache"
    assert build(config, tmp_path / "out", cache=cache)[0] == 0
    page = (tmp_path / "out" / "guide" / "index.html").read_text(encoding="utf-8")
    (name,) = re.findall(r'href="\.\./assets/hloviz/(hloviz-[0-9a-f]{20}\.svg)"', page)
    assert (tmp_path / "out" / "assets" / "hloviz" / name).is_file()
    for file in ("pre.hlo", "post.hlo", "capture.json"):
        shutil.copy(ROOT / "samples" / "captures" / "matmul_chain-tf2.17" / file, cap / file)
    with counting_dot_runs(monkeypatch) as runs:
        assert build(config, tmp_path / "out", cache=cache)[0] == 0
    assert runs
    assert "__onednn$matmul" in inline_svgs((tmp_path / "out" / "guide" / "index.html").read_text(encoding="utf-8"))[0]


def test_bad_blocks_are_warnings_with_page_and_line_and_the_build_finishes(tmp_path):
    page = ("# Guide\n\nText.\n\n```hloviz\ntarget: ../nowhere\n```\n\n```hloviz\nstage: post\n```\n\n"
            "````markdown\n```hloviz\ntarget: shown/as/code\n```\n````\n\nThe end.\n")
    config = _site(tmp_path / "site", page)
    status, warnings = build(config, tmp_path / "out", cache=tmp_path / "cache")
    assert status == 0
    assert re.search(r"hloviz: guide/index\.md:5: .*nowhere.* is not a file, a folder", warnings), warnings
    assert "hloviz: guide/index.md:9: a hloviz block needs `target:`" in warnings
    out = (tmp_path / "out" / "guide" / "index.html").read_text(encoding="utf-8")
    assert "The end." in out and "shown/as/code" in out, "a block inside another fence is left as code"
    assert build(config, tmp_path / "strict", cache=tmp_path / "cache", strict=True)[0] == 1


@needs_material
@pytest.mark.requires_chromium
def test_material_light_and_dark_schemes_recolour_the_inlined_picture(tmp_path):
    from .browser import chromium

    assert build(EXAMPLE / "mkdocs.yml", tmp_path / "site", cache=tmp_path / "cache")[0] == 0
    url = (tmp_path / "site" / "index.html").as_uri()
    background = "(s) => getComputedStyle(s.querySelector('.graph > polygon')).fill"
    edge = "(s) => getComputedStyle(s.querySelector('.edge path')).stroke"
    seen = {}
    with chromium() as browser:
        for scheme in ("light", "dark"):
            page = browser.new_page(color_scheme=scheme)  # type: ignore[attr-defined]
            page.goto(url)
            page.wait_for_function("document.body.getAttribute('data-md-color-scheme') !== null")
            svg = page.locator("svg[role=img]").first
            assert svg.locator("title").first.text_content().startswith("fused_additions: 1003 ops")
            seen[scheme] = (page.evaluate("document.body.getAttribute('data-md-color-scheme')"),
                            svg.evaluate(background), svg.evaluate(edge))
            page.close()
    assert seen["light"] == ("default", "rgb(255, 255, 255)", "rgb(97, 97, 97)"), seen  # #616161 as drawn
    assert seen["dark"] == ("slate", "rgba(0, 0, 0, 0)", "rgb(208, 215, 222)"), seen


def test_memory_block_draws_xla_memory_timeline_and_a_rebuild_draws_nothing(tmp_path, monkeypatch):
    """``memory: true`` on a saved capture that kept XLA's buffer assignment (samples/memory):
    the timeline, described with XLA's total (memory.json, summed here); no Graphviz; cached."""
    import json

    import hloviz.render.page.memory as memory_pictures

    shutil.copytree(ROOT / "samples" / "memory" / "keras_lstm", tmp_path / "keras_lstm")
    total = sum(a["size"] for a in json.loads((tmp_path / "keras_lstm" / "memory.json").read_text())["allocations"])
    config = _site(tmp_path / "site", "# Guide\n\n```hloviz\ntarget: ../../../keras_lstm\nmemory: true\n"
                                      "caption: the LSTM's memory\n```\n")
    drawn: list[str] = []
    real = memory_pictures.timeline_svg
    monkeypatch.setattr(memory_pictures, "timeline_svg", lambda *a, **k: drawn.append("x") or real(*a, **k))
    cache = tmp_path / "cache"
    with counting_dot_runs(monkeypatch) as runs:
        status, warnings = build(config, tmp_path / "out", cache=cache)
    assert status == 0 and "hloviz" not in warnings, warnings
    assert runs == [] and drawn == ["x"]
    page = (tmp_path / "out" / "guide" / "index.html").read_text(encoding="utf-8")
    (svg,) = inline_svgs(page)
    assert titles([svg]) == ["keras_lstm · memory"]
    assert re.search(rf'<desc id="[^"]+-desc">Memory: {total / 1024:.1f} KiB in all \(XLA', svg), svg[:600]
    assert "<figcaption>the LSTM&#x27;s memory</figcaption>" in page  # html.escape's quote
    with counting_dot_runs(monkeypatch) as runs:
        assert build(config, tmp_path / "again", cache=cache)[0] == 0
    assert runs == [] and drawn == ["x"], "the second build reads the cache"

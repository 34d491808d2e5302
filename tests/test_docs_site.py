"""The documentation site under docs/ builds as ``make docs`` builds it — ``sphinx-build -W``,
warnings as errors — and every picture in it is drawn by hloviz's own ``hloviz`` directive from the
saved captures (the docs are the first user of the docs integration).

The site is built once for this file, into a temporary folder; its pictures come from the cache
``docs/conf.py`` names (``docs/_build/hloviz-cache``, kept between runs and checked before use), so
after the first build of a checkout no Graphviz runs unless a capture or hloviz changed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from . import present
from .docs_pages import DOCS, README, ROOT, page, site_pages
from .docsites import inline_svgs, titles

pytest.importorskip("sphinx", reason="pip install 'hloviz[docs]'")
pytest.importorskip("myst_parser", reason="pip install 'hloviz[docs]'")
pytestmark = pytest.mark.requires_dot

DIRECTIVE = re.compile(r"^```\{hloviz\} (\S+)\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: A block fenced with four backticks or more: an example of markdown, shown as text.
EXAMPLE = re.compile(r"^(````+).*?^\1\s*$", re.DOTALL | re.MULTILINE)
#: Any fenced block that is not a directive.
CODE = re.compile(r"^```(?!\{).*?^```\s*$", re.DOTALL | re.MULTILINE)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The built site (HTML), made by the command ``make docs`` runs, with warnings as errors."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-q",
                           "-d", str(out / ".doctrees"), str(DOCS), str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, f"sphinx-build -W failed:\n{done.stdout}\n{done.stderr}"
    assert "WARNING" not in done.stderr, done.stderr
    return out


def test_make_docs_builds_the_site_with_warnings_as_errors():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^docs: .*\n\t(.+)$", makefile, re.MULTILINE)
    assert target is not None and "sphinx -W" in target.group(1) and "docs docs/_build/html" in target.group(1)
    assert "docs/_build/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    extras = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    docs_extra = re.search(r"^docs = \[(.*)\]$", extras, re.MULTILINE)
    assert docs_extra is not None and "sphinx" in docs_extra.group(1) and "myst-parser" in docs_extra.group(1)
    assert "docs" in present(re.search(r"^EXTRAS \?= (.*)$", makefile, re.MULTILINE)).group(1).split(",")


def test_every_page_is_built(site):
    for path in site_pages():
        html = site / Path(path).relative_to("docs").with_suffix(".html")
        assert html.is_file(), f"{path} was not built"


def test_every_picture_of_the_site_is_drawn_by_the_directive(site):
    drawn = 0
    for path, text in site_pages().items():
        text = EXAMPLE.sub("", text)
        prose = re.sub(r"`[^`\n]*`", "", CODE.sub("", DIRECTIVE.sub("", text)))  # no code, no code spans
        assert not re.search(r"!\[[^\]]*\]\([^)]*\)", prose), f"{path} shows a committed picture; draw it with ```{{hloviz}}"
        assert not re.search(r"<img\b", prose), path
        directives = DIRECTIVE.findall(text)
        html = (site / Path(path).relative_to("docs").with_suffix(".html")).read_text(encoding="utf-8")
        assert len(inline_svgs(html)) == len(directives), path
        for target, _ in directives:
            assert target.startswith("../") and "samples/" in target, f"{path}: {target} is not a saved capture"
            assert (DOCS / Path(path).relative_to("docs").parent / target).resolve().is_dir(), target
        drawn += len(directives)
    assert drawn >= 4


def test_the_seed_picture_is_the_seed(site):
    svgs = inline_svgs((site / "pictures.html").read_text(encoding="utf-8"))
    assert titles(svgs)[0].startswith("fused_additions: 1003 ops → 1 kernel")
    assert "add ×1000" in svgs[0]


def test_the_layer_picture_names_every_layer_of_block_5(site):
    svgs = inline_svgs((site / "pictures.html").read_text(encoding="utf-8"))
    [block] = [svg for svg, title in zip(svgs, titles(svgs)) if title.startswith("mobilenet_v2")]
    for layer in ("block_5_expand", "block_5_expand_BN", "block_5_expand_relu", "block_5_depthwise",
                  "block_5_depthwise_BN", "block_5_depthwise_relu", "block_5_project", "block_5_project_BN",
                  "block_5_add"):
        assert re.search(f">{layer}(<|/batchnorm<)", block), layer  # every layer of the block is named
    assert "fusion kLoop" in block and "block_5_expand_BN/gamma" in block


def test_the_inception_picture_is_the_overview_of_blocks_found_by_structure(site):
    svgs = inline_svgs((site / "pictures.html").read_text(encoding="utf-8"))
    [overview] = [svg for svg, title in zip(svgs, titles(svgs)) if title.startswith("inception_v3")]
    assert "mixed4 ×4" in overview and "block of" in overview


def test_the_memory_picture_is_the_timeline(site):
    [timeline] = inline_svgs((site / "memory.html").read_text(encoding="utf-8"))
    assert "peak" in timeline and "conv2" in timeline


def test_the_getting_started_page_holds_the_readmes_quick_start(site):
    html = (site / "getting-started.html").read_text(encoding="utf-8")
    assert "Run it on your own file." in html and "HLOVIZ_ARGS" in html
    assert "59 ops → 12 kernels" in html


def test_the_readme_fits_and_links_to_pages_that_exist():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    links = re.findall(r"\]\((docs/[^)#]+\.md)\)", text)
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).is_file(), link
    assert text.index("](docs/fused_additions.svg)") < text.index("## Gallery")


def test_the_measurement_pages_name_the_command_that_made_them():
    index = page("measurements")
    for name in re.findall(r"^measurements/(\S+)$", index, re.MULTILINE):
        included = re.search(r"\{include\} \.\./\.\./(benchmarks/results/\S+\.md)", page(f"measurements/{name}"))
        assert included is not None, name
        text = (ROOT / included.group(1)).read_text(encoding="utf-8")
        assert re.search(r"```sh\npython benchmarks/\w+\.py", text), f"{included.group(1)} names no command"

"""The docs front ends (Sphinx directive, MkDocs plugin) treat their inputs as untrusted: the
picture cache (a CI cache can be poisoned), the YAML of a fenced block, the target file, and the
build's own output folder. Each test builds the hostile input itself.

* a cache entry is verified before use (its SHA-256, kept beside it, and what hloviz writes in an
  SVG): a truncated, non-UTF-8 or edited entry is drawn again, and a ``<script>`` or any other
  element hloviz does not write never reaches the page, whoever recomputed the hash;
* the copy into ``_images/`` / ``assets/hloviz/`` is written atomically and rewritten when it
  differs (a planted file or link is replaced, a link's target untouched);
* YAML options are scalars of the expected type: an alias tree in ``caption:`` is a warning;
* a FIFO, a device or an oversized target is refused before it is read;
* a relative cache folder is relative to the config file, not to the current folder.

The memory timeline (``memory: true``) is the picture used where one is drawn: it needs no
Graphviz, so these tests draw in milliseconds.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hloviz.docs import pictures
from hloviz.docs.pictures import DocPicture, PictureCache, PictureError

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "samples" / "memory" / "jax_donated"


def _pic(target: Path | str) -> DocPicture:
    return DocPicture(target=str(target), memory=True)


def _entry(cache: PictureCache, target: Path) -> tuple[str, Path]:
    name, _ = cache.picture(_pic(target))
    return name, cache.folder / name


def _with_timeout(fn, seconds: float = 60.0):
    """``fn()`` in a thread; fails the test (rather than hanging it) if it does not return."""
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:  # noqa: BLE001 - handed to the test, which looks at it
            box["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds:.0f} s: it waits on the file"
    return box


# --- 12: the cache is verified before use ------------------------------------------------------


def _poison(path: Path, data: bytes, *, rehash: bool) -> None:
    """Replace a cache entry's bytes; ``rehash``: as an attacker who also rewrites any hash kept
    beside it (every file of the cache folder that holds the old SHA-256 gets the new one)."""
    old = hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_bytes(data)
    if rehash:
        new = hashlib.sha256(data).hexdigest()
        for p in path.parent.iterdir():
            if p != path and p.is_file() and old in p.read_text(errors="replace"):
                p.write_text(p.read_text().replace(old, new))


def _svg_with(svg: str, extra: str) -> str:
    return svg.replace("</svg>", extra + "</svg>", 1)


POISONS = {
    "truncated": lambda svg: svg.encode()[: len(svg.encode()) // 2],
    "not UTF-8": lambda svg: svg.encode().replace(b"<title", b"\xff\xfe<title", 1),
    "a script element": lambda svg: _svg_with(svg, "<script>alert(document.cookie)</script>").encode(),
    "a script in the SVG namespace prefix": lambda svg: _svg_with(
        svg, '<s:script xmlns:s="http://www.w3.org/2000/svg">alert(1)</s:script>').encode(),
    "a foreignObject with HTML": lambda svg: _svg_with(
        svg, '<foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="https://evil"/></foreignObject>'
    ).encode(),
    "an event handler attribute": lambda svg: svg.replace("<title", '<g onmouseover="alert(1)"/><title', 1).encode(),
    "a javascript link": lambda svg: _svg_with(
        svg, '<a xmlns:xl="http://www.w3.org/1999/xlink" xl:href="javascript:alert(1)"><text>x</text></a>').encode(),
    "a script hidden before the root": lambda svg: svg.replace(
        "<svg", "<!-- <svg><script>alert(1)</script> --><svg", 1).encode(),
    "text after the root": lambda svg: (svg.rstrip() + "<script>alert(1)</script>\n").encode(),
    "an entity declaration": lambda svg: svg.replace(
        "<svg", '<!DOCTYPE svg [<!ENTITY x "<script>alert(1)</script>">]><svg', 1).encode(),
    "a style that loads from elsewhere": lambda svg: svg.replace(
        "<style>", "<style>@import url(https://evil/x.css);", 1).encode(),
    "an image element": lambda svg: _svg_with(svg, '<image href="https://evil/x.png"/>').encode(),
}


@pytest.mark.parametrize("rehash", [False, True], ids=["as is", "hash rewritten"])
@pytest.mark.parametrize("what", sorted(POISONS))
def test_a_poisoned_cache_entry_is_drawn_again_never_served(tmp_path, what, rehash):
    cache = PictureCache(tmp_path / "cache")
    name, path = _entry(cache, CAPTURE)
    clean = path.read_text(encoding="utf-8")
    _poison(path, POISONS[what](clean), rehash=rehash)
    again = PictureCache(tmp_path / "cache")  # a later build reads the same folder
    got_name, svg = again.picture(_pic(CAPTURE))
    assert again.renders == 1, f"{what}: the entry was served, not drawn again"
    assert got_name == name and svg == clean
    assert path.read_text(encoding="utf-8") == clean, "the entry is replaced by the drawing"
    assert "script" not in svg and "evil" not in svg and "onmouseover" not in svg


def test_an_intact_entry_is_served_without_drawing(tmp_path):
    cache = PictureCache(tmp_path / "cache")
    name, path = _entry(cache, CAPTURE)
    again = PictureCache(tmp_path / "cache")
    assert again.picture(_pic(CAPTURE)) == (name, path.read_text(encoding="utf-8"))
    assert again.renders == 0


def test_a_cache_entry_that_is_a_fifo_or_a_link_is_not_read(tmp_path):
    cache = PictureCache(tmp_path / "cache")
    name, path = _entry(cache, CAPTURE)
    clean = path.read_text(encoding="utf-8")
    path.unlink()
    os.mkfifo(path)
    box = _with_timeout(lambda: PictureCache(tmp_path / "cache").picture(_pic(CAPTURE)))
    assert box.get("value") == (name, clean), box
    elsewhere = tmp_path / "elsewhere.svg"
    elsewhere.write_text(_svg_with(clean, "<script>alert(1)</script>"), encoding="utf-8")
    path.unlink()
    path.symlink_to(elsewhere)
    again = PictureCache(tmp_path / "cache")
    assert again.picture(_pic(CAPTURE)) == (name, clean) and again.renders == 1
    assert "script" in elsewhere.read_text(), "the link's target is not written through"


# --- 12: the copy into the built site ----------------------------------------------------------


def _sphinx_site(folder: Path, body: str, conf: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conf.py").write_text('extensions = ["hloviz.sphinx"]\nproject = "t"\n' + conf, encoding="utf-8")
    (folder / "index.rst").write_text(body, encoding="utf-8")
    return folder


def _sphinx_build(src: Path, out: Path, *, cache: Path | None = None) -> tuple[int, str]:
    pytest.importorskip("sphinx", reason="pip install 'hloviz[sphinx]'")
    from sphinx.application import Sphinx
    from sphinx.util.console import nocolor
    from sphinx.util.docutils import docutils_namespace

    nocolor()
    warnings = io.StringIO()
    overrides = {"hloviz_cache_dir": str(cache)} if cache is not None else {}
    with docutils_namespace():
        app = Sphinx(str(src), str(src), str(out), str(out / ".doctrees"), "html", status=None, warning=warnings,
                     freshenv=True, confoverrides=overrides)
        app.build()
        return app.statuscode, warnings.getvalue()


def _mkdocs_site(folder: Path, page: str, plugin: str = "  - hloviz\n") -> Path:
    (folder / "docs").mkdir(parents=True, exist_ok=True)
    (folder / "mkdocs.yml").write_text(f"site_name: t\nplugins:\n{plugin}", encoding="utf-8")
    (folder / "docs" / "index.md").write_text(page, encoding="utf-8")
    return folder / "mkdocs.yml"


def _mkdocs_build(config_file: Path, site: Path, *, cache: Path | None = None, dirty: bool = False) -> tuple[int, str]:
    pytest.importorskip("mkdocs", reason="pip install 'hloviz[mkdocs]'")
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno >= logging.WARNING:
                records.append(record.getMessage())

    handler = Keep()
    logging.getLogger("mkdocs").addHandler(handler)
    try:
        config = load_config(config_file=str(config_file), site_dir=str(site))
        if cache is not None:
            config.plugins["hloviz"].config.cache_dir = str(cache)  # type: ignore[attr-defined]
        mkdocs_build(config, dirty=dirty)  # dirty: the site folder is kept, as `mkdocs build --dirty` does
        return 0, "\n".join(records)
    finally:
        logging.getLogger("mkdocs").removeHandler(handler)


def test_sphinx_rewrites_a_planted_picture_in_images_and_replaces_a_link_not_its_target(tmp_path):
    shutil.copytree(CAPTURE, tmp_path / "cap")
    src = _sphinx_site(tmp_path / "src", "M\n=\n\n.. hloviz:: ../cap\n   :memory:\n")
    out, cache = tmp_path / "out", tmp_path / "cache"
    assert _sphinx_build(src, out, cache=cache)[0] == 0
    (image,) = (out / "_images").glob("hloviz-*.svg")
    clean = image.read_bytes()
    image.write_bytes(clean.replace(b"</svg>", b"<script>alert(1)</script></svg>"))  # stale, or planted
    assert _sphinx_build(src, out, cache=cache)[0] == 0
    assert image.read_bytes() == clean, "a copy that differs is written again"
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    image.unlink()
    image.symlink_to(victim)
    assert _sphinx_build(src, out, cache=cache)[0] == 0
    assert victim.read_text() == "mine", "the link's target is untouched"
    assert not image.is_symlink() and image.read_bytes() == clean
    assert sorted(p.name for p in image.parent.iterdir()) == [image.name], "no temporary file left"


def test_mkdocs_replaces_a_planted_link_in_its_assets_not_its_target(tmp_path):
    shutil.copytree(CAPTURE, tmp_path / "cap")
    config = _mkdocs_site(tmp_path / "site", "# M\n\n```hloviz\ntarget: ../../cap\nmemory: true\n```\n")
    out, cache = tmp_path / "out", tmp_path / "cache"
    assert _mkdocs_build(config, out, cache=cache)[0] == 0
    (image,) = (out / "assets" / "hloviz").glob("hloviz-*.svg")
    clean = image.read_bytes()
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    image.unlink()
    image.symlink_to(victim)
    page = config.parent / "docs" / "index.md"
    os.utime(page, (page.stat().st_atime, page.stat().st_mtime + 100))  # --dirty builds the changed page only
    assert _mkdocs_build(config, out, cache=cache, dirty=True)[0] == 0
    assert victim.read_text() == "mine", "the link's target is untouched"
    assert not image.is_symlink() and image.read_bytes() == clean
    image.write_bytes(clean.replace(b"</svg>", b"<script>alert(1)</script></svg>"))  # stale, or planted
    os.utime(page, (page.stat().st_atime, page.stat().st_mtime + 100))
    assert _mkdocs_build(config, out, cache=cache, dirty=True)[0] == 0
    assert image.read_bytes() == clean


# --- 13: YAML options are scalars ---------------------------------------------------------------


def _alias_tree(levels: int = 9, width: int = 9) -> str:
    """A YAML block of a few hundred bytes whose ``caption:`` expands to width**levels items (the
    anchors are defined inside the caption itself, so no other key is involved)."""
    lines = ["target: ../cap", "memory: true", "caption:", f"  - &a0 [{', '.join(['x'] * width)}]"]
    for k in range(1, levels):
        lines.append(f"  - &a{k} [{', '.join([f'*a{k - 1}'] * width)}]")
    return "\n".join(lines)


_BLOCK_IN_A_SMALL_PROCESS = """
import resource, sys, types
limit = 1 << 30
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from pathlib import Path
from hloviz.mkdocs import HlovizPlugin
from hloviz.docs.pictures import PictureCache
plugin = HlovizPlugin()
plugin.load_config({})
plugin.cache = PictureCache(Path(sys.argv[2]))
docs = Path(sys.argv[1])
page = types.SimpleNamespace(file=types.SimpleNamespace(src_uri="index.md", abs_src_path=str(docs / "index.md")),
                             url="")
config = types.SimpleNamespace(docs_dir=str(docs))
html = plugin._block(Path(sys.argv[3]).read_text(), page, config, 7)
print("HTML:" + repr(html[:200]))
"""


def test_an_alias_tree_in_a_caption_is_a_warning_at_its_line(tmp_path):
    shutil.copytree(CAPTURE, tmp_path / "cap")
    docs = tmp_path / "site" / "docs"
    docs.mkdir(parents=True)
    (docs / "index.md").write_text("# M\n", encoding="utf-8")
    block = tmp_path / "block.yml"
    block.write_text(_alias_tree(), encoding="utf-8")
    assert block.stat().st_size < 1000
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _BLOCK_IN_A_SMALL_PROCESS, str(docs), str(tmp_path / "cache"),
                           str(block)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "HTML:''" in done.stdout, "no picture for a block with a bad option"
    assert re.search(r"hloviz: index\.md:7: .*caption.*(text|scalar)", done.stderr), done.stderr[-2000:]
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("option, value", [("caption", "[1, 2]"), ("alt", "{a: b}"), ("stage", "[post]"),
                                            ("budget", "[300]"), ("memory", "[true]"), ("aspect", "{x: 1}")])
def test_a_list_or_mapping_where_a_scalar_belongs_is_an_input_error(option, value):
    import yaml

    from hloviz.docs.pictures import parse_options
    from hloviz.errors import InputError

    raw = yaml.safe_load(f"{option}: {value}")
    with pytest.raises(InputError, match=re.escape(f":{option}:")):
        parse_options("x", raw)


# --- 14: FIFOs, devices and huge files are refused before they are read ---------------------------


def test_a_fifo_hlo_target_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "model.hlo"
    os.mkfifo(fifo)
    box = _with_timeout(lambda: PictureCache(tmp_path / "cache").picture(DocPicture(target=str(fifo))))
    assert isinstance(box.get("error"), PictureError), box
    assert "model.hlo" in str(box["error"])


def test_a_fifo_py_target_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "model.py"
    os.mkfifo(fifo)
    box = _with_timeout(lambda: PictureCache(tmp_path / "cache").picture(DocPicture(target=f"{fifo}:f")))
    assert isinstance(box.get("error"), PictureError), box
    assert "not a regular file" in str(box["error"]) or "FIFO" in str(box["error"])


def test_stats_of_a_fifo_py_is_exit_2_not_a_hang(tmp_path):
    fifo = tmp_path / "model.py"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run([sys.executable, "-m", "hloviz", "stats", f"{fifo}:f"], env=env, capture_output=True,
                              text=True, timeout=120, cwd=tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail("hloviz stats fifo.py:f waited on the FIFO")
    assert done.returncode == 2, done.stderr
    assert "model.py" in done.stderr and "Traceback" not in done.stderr


def test_a_device_target_is_refused(tmp_path):
    link = tmp_path / "zeros.hlo"
    link.symlink_to("/dev/zero")
    box = _with_timeout(lambda: PictureCache(tmp_path / "cache").picture(DocPicture(target=str(link))))
    assert isinstance(box.get("error"), PictureError), box


def test_an_oversized_target_is_refused_before_it_is_hashed(tmp_path, monkeypatch):
    """A sparse 4 GiB ``.hlo`` (no disk used): refused by its size; not one block hashed."""
    big = tmp_path / "big.hlo"
    with open(big, "wb") as f:
        f.truncate(4 << 30)
    hashed = []

    class Spy:
        def __init__(self, real):
            self.real = real

        def update(self, data: bytes) -> None:
            hashed.append(len(data))
            if sum(hashed) > 1 << 20:
                raise AssertionError("the oversized target is being hashed")
            self.real.update(data)

        def hexdigest(self) -> str:
            return self.real.hexdigest()

    def sha256(data: bytes = b"") -> Spy:
        return Spy(hashlib.sha256(data))

    monkeypatch.setattr(pictures, "hashlib", type("H", (), {"sha256": staticmethod(sha256)}))
    with pytest.raises(PictureError, match=r"max-input"):
        PictureCache(tmp_path / "cache").picture(DocPicture(target=str(big)))
    assert sum(hashed) <= 1 << 20


def test_an_oversized_file_in_a_capture_folder_is_refused_before_it_is_hashed(tmp_path):
    from hloviz.inputs import set_max_input

    cap = tmp_path / "cap"
    shutil.copytree(CAPTURE, cap)
    with open(cap / "notes.bin", "wb") as f:
        f.truncate(1 << 20)
    set_max_input(1 << 19)
    try:
        with pytest.raises(PictureError, match=r"notes\.bin.*max-input"):
            PictureCache(tmp_path / "cache").picture(_pic(cap))
    finally:
        set_max_input(None)


# --- 15: a relative cache folder is relative to the config file ------------------------------------


def test_sphinx_relative_cache_dir_is_beside_conf_py(tmp_path, monkeypatch):
    shutil.copytree(CAPTURE, tmp_path / "cap")
    src = _sphinx_site(tmp_path / "src", "M\n=\n\n.. hloviz:: ../cap\n   :memory:\n",
                       conf='hloviz_cache_dir = ".picture-cache"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    status, warnings = _sphinx_build(src, tmp_path / "out")
    assert status == 0 and "hloviz" not in warnings, warnings
    assert list((src / ".picture-cache").glob("hloviz-*.svg")), "the cache is beside conf.py"
    assert list(elsewhere.iterdir()) == [], "nothing in the current folder"


def test_mkdocs_relative_cache_dir_is_beside_mkdocs_yml(tmp_path, monkeypatch):
    shutil.copytree(CAPTURE, tmp_path / "cap")
    config = _mkdocs_site(tmp_path / "site", "# M\n\n```hloviz\ntarget: ../../cap\nmemory: true\n```\n",
                          plugin="  - hloviz:\n      cache_dir: .picture-cache\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    status, warnings = _mkdocs_build(config, tmp_path / "out")
    assert status == 0 and "hloviz" not in warnings, warnings
    assert list((tmp_path / "site" / ".picture-cache").glob("hloviz-*.svg")), "the cache is beside mkdocs.yml"
    assert list(elsewhere.iterdir()) == [], "nothing in the current folder"


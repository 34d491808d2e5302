"""The Sphinx extension: ``extensions = ["hloviz.sphinx"]`` and a ``hloviz`` directive.

reStructuredText::

    .. hloviz:: ../samples/captures/mobilenet_v2
       :stage: both
       :scope: block_5
       :caption: block_5 after XLA: one kernel per layer

MyST markdown: the same as a fenced ``{hloviz}`` block. The target is a capture folder, an XLA
dump folder, an HLO file (relative to the document, or to the source folder with a leading
``/``) or a live ``model.py:function``; the options are ``render``'s that matter in docs
(:data:`hloviz.docs.OPTIONS`). The picture is written to the build's ``_images/`` under a
content-hashed name and, by default, inlined (text stays searchable; the ``auto`` theme follows
the page's light or dark scheme). A picture that cannot be made is a warning at the source line
(``-W`` makes it an error) and the build goes on.

Settings in ``conf.py``: ``hloviz_cache_dir`` (default: ``<doctrees>/hloviz``, kept between
builds; a relative folder is relative to ``conf.py``'s folder, whatever folder the build runs in), ``hloviz_embed`` (``"inline"`` or ``"img"``), ``hloviz_theme`` (default ``"auto"``),
``hloviz_width`` (default ``"100%"``).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from .docs.pictures import PictureCache, PictureError, parse_options, publish, resolve_target, svg_body, svg_title
from .errors import InputError

__all__ = ["HlovizDirective", "hloviz_picture", "setup"]

logger = logging.getLogger(__name__)

#: One cache per folder for the life of the process; its live captures are forgotten at the
#: start of each build (a live target is captured once per build).
_CACHES: dict[str, PictureCache] = {}


class hloviz_picture(nodes.General, nodes.Element):  # docutils names its node classes in lower case
    """A picture made by the directive: ``name`` (its file), ``svg``, ``alt``, ``caption``."""


def _cache(folder: Path) -> PictureCache:
    key = str(folder.resolve())
    if key not in _CACHES:
        _CACHES[key] = PictureCache(folder)
    return _CACHES[key]


class HlovizDirective(SphinxDirective):
    """``.. hloviz:: TARGET`` with ``render``'s options (see the module docstring)."""

    required_arguments = 1
    has_content = False
    option_spec: ClassVar[dict[str, Callable[[str], Any]]] = {  # pyright: ignore[reportIncompatibleVariableOverride]  # docutils declares it an instance attribute
        "stage": directives.unchanged_required, "scope": directives.unchanged_required,
        "focus": directives.unchanged_required, "depth": directives.unchanged_required,
        "budget": directives.unchanged_required, "color-by": directives.unchanged_required,
        "theme": directives.unchanged_required, "width": directives.unchanged_required,
        "max-height": directives.unchanged_required, "timeout": directives.unchanged_required,
        "wrap": directives.unchanged_required, "aspect": directives.unchanged_required,
        "memory": directives.flag, "alt": directives.unchanged, "caption": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        source = Path(self.env.doc2path(self.env.docname))
        target, deps = resolve_target(self.arguments[0], source.parent, Path(self.env.srcdir))
        for dep in deps:
            self.env.note_dependency(str(dep))
        config = self.env.config
        defaults = {"theme": config.hloviz_theme, "width": config.hloviz_width}
        try:
            pic = parse_options(target, self.options, defaults=defaults)
            folder = Path(config.hloviz_cache_dir or Path(self.env.doctreedir) / "hloviz")
            name, svg = _cache(folder).picture(pic)
        except (PictureError, InputError) as err:
            logger.warning("hloviz: %s", err.args[0], location=(self.env.docname, self.lineno))
            return []
        node = hloviz_picture(name=name, svg=svg, alt=pic.alt or svg_title(svg), caption=pic.caption or "",
                              embed=config.hloviz_embed)
        self.set_source_info(node)
        return [node]


def visit_html(self: Any, node: hloviz_picture) -> None:
    """Write the picture to ``_images/`` and put it in the page (inlined, or as an image)."""
    publish(Path(self.builder.outdir) / self.builder.imagedir / node["name"], node["svg"])
    parts = ['<figure class="hloviz-figure">']
    if node["embed"] == "img":
        src = f"{self.builder.imgpath}/{node['name']}"
        parts.append(f'<img src="{html.escape(src)}" alt="{html.escape(node["alt"])}" class="hloviz"/>')
    else:
        parts.append(f'<a href="{html.escape(self.builder.imgpath + "/" + node["name"])}" class="hloviz-link">'
                     + svg_body(node["svg"]) + "</a>")
    if node["caption"]:
        parts.append(f"<figcaption>{html.escape(node['caption'])}</figcaption>")
    parts.append("</figure>\n")
    self.body.append("".join(parts))
    raise nodes.SkipNode


def visit_text(self: Any, node: hloviz_picture) -> None:
    self.add_text(f"[{node['alt']}]")
    raise nodes.SkipNode


def skip(self: Any, node: hloviz_picture) -> None:
    raise nodes.SkipNode


def _cache_dir_beside_conf(app: Any, config: Any) -> None:
    """A relative ``hloviz_cache_dir`` names a folder beside ``conf.py``, as the other paths
    of ``conf.py`` do (``html_static_path``), not one in whatever folder the build runs in."""
    folder = config.hloviz_cache_dir
    if folder and not Path(folder).is_absolute():
        config.hloviz_cache_dir = str(Path(app.confdir or app.srcdir) / folder)


def _forget_live_captures(app: Any) -> None:
    for cache in _CACHES.values():
        cache.forget_live()


def setup(app: Any) -> dict[str, Any]:
    """Register the directive, its node and its settings (Sphinx calls this)."""
    from . import __version__

    app.add_config_value("hloviz_cache_dir", None, "env")
    app.add_config_value("hloviz_embed", "inline", "html")
    app.add_config_value("hloviz_theme", "auto", "env")
    app.add_config_value("hloviz_width", "100%", "env")
    app.add_node(hloviz_picture, html=(visit_html, None), text=(visit_text, None), latex=(skip, None),
                 man=(skip, None), texinfo=(skip, None))
    app.add_directive("hloviz", HlovizDirective)
    app.connect("config-inited", _cache_dir_beside_conf)
    app.connect("builder-inited", _forget_live_captures)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}

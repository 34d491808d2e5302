"""The MkDocs plugin: ``plugins: [hloviz]`` in ``mkdocs.yml``.

In a page, a fenced block whose options are YAML::

    ```hloviz
    target: ../samples/captures/mobilenet_v2
    stage: both
    scope: block_5
    caption: block_5 after XLA
    ```

or an image-like reference: ``![block 5](hloviz:../samples/captures/mobilenet_v2?scope=block_5)``.
The target is relative to the page's source file (a leading ``/``: to ``docs_dir``); the options
are ``render``'s that matter in docs (:data:`hloviz.docs.OPTIONS`). Pictures go to
``assets/hloviz/`` in the site under content-hashed names and are inlined by default: text stays
searchable, and the ``auto`` theme follows Material's light and dark schemes
(``data-md-color-scheme``) as well as the reader's preference. A picture that cannot be made is a
warning naming the page and line (``mkdocs build --strict`` makes it fail) and the build goes on.

Plugin settings: ``cache_dir`` (default ``.hloviz-cache`` beside ``mkdocs.yml``; a relative
folder is relative to ``mkdocs.yml``'s folder, whatever folder the build runs in), ``embed``
(``inline`` or ``img``), ``theme`` (``auto``), ``width`` (``100%``).
"""

from __future__ import annotations

import html
import logging
import os
import posixpath
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.plugins import BasePlugin

from .docs.pictures import (
    PictureCache,
    PictureError,
    parse_options,
    publish,
    resolve_target,
    scalar,
    svg_body,
    svg_title,
)
from .errors import InputError

__all__ = ["HlovizConfig", "HlovizPlugin"]

log = logging.getLogger("mkdocs.plugins.hloviz")

ASSETS = "assets/hloviz"


class HlovizConfig(base.Config):
    cache_dir = c.Optional(c.Type(str))
    embed = c.Choice(("inline", "img"), default="inline")
    theme = c.Choice(("light", "dark", "auto"), default="auto")
    width = c.Type(str, default="100%")


_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^\n`]*)$")
_REFERENCE = re.compile(r"!\[(?P<alt>[^\]\n]*)\]\(hloviz:(?P<ref>[^)\s]+)\)")


class HlovizPlugin(BasePlugin[HlovizConfig]):
    """Turns ``hloviz`` blocks and references into pictures (see the module docstring)."""

    def __init__(self) -> None:
        self.cache: PictureCache | None = None
        self.pictures: dict[str, str] = {}

    def on_config(self, config: Any) -> Any:
        beside = os.path.dirname(os.path.abspath(config.config_file_path or "mkdocs.yml"))
        folder = os.path.join(beside, self.config.cache_dir or ".hloviz-cache")  # an absolute one stays
        self.cache = PictureCache(Path(folder))
        self.pictures = {}
        return config

    def on_page_markdown(self, markdown: str, /, *, page: Any, config: Any, files: Any) -> str:
        out: list[str] = []
        lines = markdown.split("\n")
        i = 0
        while i < len(lines):
            m = _FENCE.match(lines[i])
            if not m:
                out.append(_references(self, lines[i], page, config, i + 1))
                i += 1
                continue
            fence = m.group("fence")
            end = next((j for j in range(i + 1, len(lines))
                        if lines[j].strip().startswith(fence[0] * len(fence)) and not lines[j].strip().strip(fence[0])),
                       len(lines))
            if m.group("info").strip() == "hloviz":
                out.append(self._block("\n".join(lines[i + 1:end]), page, config, i + 1))
            else:
                out.extend(lines[i:end + 1])
            i = end + 1
        return "\n".join(out)

    def _block(self, body: str, page: Any, config: Any, line: int) -> str:
        import yaml

        try:
            raw = yaml.safe_load(body) or {}
        except yaml.YAMLError as err:
            return _warn(page, line, f"the block's options are not YAML: {err}")
        if not isinstance(raw, dict) or "target" not in raw:
            return _warn(page, line, "a hloviz block needs `target:` (a capture folder, HLO file or model.py:fn)")
        try:  # scalars only, checked by type before anything is turned into text (YAML aliases)
            for k, v in raw.items():
                scalar(k if isinstance(k, str) else "a key", k)
                scalar(str(k), v)
        except InputError as err:
            return _warn(page, line, err.args[0])
        raw = {str(k): v for k, v in raw.items()}
        return self._picture(str(raw.pop("target")), raw, page, config, line)

    def _picture(self, target: str, raw: dict[str, Any], page: Any, config: Any, line: int) -> str:
        assert self.cache is not None
        resolved, _ = resolve_target(target, Path(page.file.abs_src_path).parent, Path(config.docs_dir))
        try:
            pic = parse_options(resolved, raw, defaults={"theme": self.config.theme, "width": self.config.width})
            name, svg = self.cache.picture(pic)
        except (PictureError, InputError) as err:
            return _warn(page, line, err.args[0])
        self.pictures[name] = svg
        src = posixpath.relpath(f"{ASSETS}/{name}", _page_dir(page) or ".")
        alt = pic.alt or svg_title(svg)
        if self.config.embed == "img":
            body = f'<img src="{html.escape(src)}" alt="{html.escape(alt)}" class="hloviz"/>'
        else:
            body = f'<a href="{html.escape(src)}" class="hloviz-link">{svg_body(svg).strip()}</a>'
        caption = f"<figcaption>{html.escape(pic.caption)}</figcaption>" if pic.caption else ""
        # one line: Markdown leaves a raw HTML block alone only while no blank line breaks it
        return f'\n<figure class="hloviz-figure">{body.replace(chr(10), " ")}{caption}</figure>\n'

    def on_post_build(self, *, config: Any) -> None:
        folder = Path(config.site_dir) / ASSETS
        for name, svg in sorted(self.pictures.items()):
            publish(folder / name, svg)


def _references(plugin: HlovizPlugin, text: str, page: Any, config: Any, line: int) -> str:
    def one(m: re.Match[str]) -> str:
        ref = m.group("ref")
        target, _, query = ref.partition("?")
        raw: dict[str, Any] = dict(parse_qsl(query, keep_blank_values=True))
        if m.group("alt") and "alt" not in raw:
            raw["alt"] = m.group("alt")
        return plugin._picture(unquote(target), raw, page, config, line).strip()

    return _REFERENCE.sub(one, text) if "hloviz:" in text else text


def _page_dir(page: Any) -> str:
    url = page.url or ""
    return url.rstrip("/") if url.endswith("/") else posixpath.dirname(url)


def _warn(page: Any, line: int, message: str) -> str:
    log.warning(f"hloviz: {page.file.src_uri}:{line}: {message}")
    return ""

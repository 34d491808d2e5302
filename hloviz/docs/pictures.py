"""One picture a docs source asks for, and the cache that makes rebuilding docs cheap.

:class:`DocPicture` is what a directive or fenced block says (target and options, checked as
``hloviz render`` checks them). :class:`PictureCache` answers it with SVG text and a content-
hashed file name: the key is a hash of hloviz's version, the options, and the target's content —
a capture folder's or dump folder's files, an HLO file's bytes, or, for a live ``model.py:fn``,
the HLO captured once per build. A hit reads a file; only a miss captures or runs Graphviz.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..errors import HlovizError, InputError

__all__ = ["OPTIONS", "DocPicture", "PictureCache", "PictureError", "parse_options", "resolve_target", "svg_body",
           "svg_title"]


class PictureError(Exception):
    """A picture a docs source asked for could not be made: the message says what and why
    (hloviz's own message); the front end reports it as a warning at the source line."""


def _int(name: str) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        try:
            return int(str(value).strip())
        except ValueError:
            raise InputError(f":{name}: must be a whole number, not {value!r}") from None
    return convert


def _float(name: str) -> Callable[[Any], float]:
    def convert(value: Any) -> float:
        try:
            return float(str(value).strip())
        except ValueError:
            raise InputError(f":{name}: must be a number, not {value!r}") from None
    return convert


def _text(value: Any) -> str:
    return str(value).strip()


def _flag(value: Any) -> bool:
    if value is None or value is True or str(value).strip().lower() in ("", "true", "yes", "1"):
        return True
    if value is False or str(value).strip().lower() in ("false", "no", "0"):
        return False
    raise InputError(f":memory: is a flag (true or false), not {value!r}")


#: The options a docs source may give, with how each is read: ``render``'s options that matter
#: in docs, and the page's own (alt text, caption).
OPTIONS: dict[str, Callable[[Any], Any]] = {
    "stage": _text, "scope": _text, "focus": _text, "depth": _int("depth"), "budget": _int("budget"),
    "color-by": _text, "theme": _text, "width": _text, "max-height": _text, "timeout": _int("timeout"),
    "wrap": _text, "aspect": _float("aspect"), "memory": _flag, "alt": _text, "caption": _text,
}


@dataclass(frozen=True)
class DocPicture:
    """What to draw: ``target`` (a capture folder, dump folder, HLO file or ``model.py:fn``,
    already resolved against the docs source) and ``render``'s options."""

    target: str
    stage: str | None = None
    scope: str | None = None
    focus: str | None = None
    depth: int | None = None
    budget: int = 300
    color_by: str = "kernel"
    theme: str = "auto"
    width: str | None = "100%"
    max_height: str | None = None
    wrap: str = "auto"
    aspect: float | None = None
    timeout: int = 60
    memory: bool = False
    alt: str | None = None
    caption: str | None = None

    def drawing(self) -> dict[str, Any]:
        """The options that change the picture's bytes (alt text and caption do not)."""
        out = asdict(self)
        for name in ("target", "alt", "caption", "timeout"):
            out.pop(name)
        return out


def parse_options(target: str, raw: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None) -> DocPicture:
    """A :class:`DocPicture` from a docs source's options (names as in ``render``: ``color-by``,
    ``max-height``); an unknown name or a bad value is an :class:`InputError` naming it."""
    values: dict[str, Any] = dict(defaults or {})
    for name, value in raw.items():
        if name not in OPTIONS:
            raise InputError(f"unknown option :{name}: (hloviz knows {', '.join(':' + n + ':' for n in OPTIONS)})")
        values[name.replace("-", "_")] = OPTIONS[name](value)
    known = {f.name for f in fields(DocPicture)}
    return DocPicture(target=target, **{k: v for k, v in values.items() if k in known})


def content_hash(target: str) -> str | None:
    """A hash of what ``target`` holds, or None for a live ``model.py:fn`` target (hashed
    after its capture). A folder is hashed by its files' names and bytes, in order."""
    path = Path(target)
    digest = hashlib.sha256()
    if path.is_file():
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    if path.is_dir():
        for p in sorted(q for q in path.rglob("*") if q.is_file() and not q.is_symlink()):
            digest.update(str(p.relative_to(path)).encode("utf-8") + b"\0")
            with open(p, "rb") as f:
                for block in iter(lambda f=f: f.read(1 << 20), b""):
                    digest.update(block)
            digest.update(b"\0")
        return digest.hexdigest()
    return None


@dataclass
class PictureCache:
    """SVGs by key, in ``folder`` (kept between builds). ``renders`` counts the pictures this
    cache had to draw; ``captures`` the live targets it captured (once per build each)."""

    folder: Path
    renders: int = 0
    captures: int = 0
    _live: dict[str, Any] = field(default_factory=dict, repr=False)

    def picture(self, pic: DocPicture) -> tuple[str, str]:
        """``(file name, SVG text)`` for ``pic``: from the cache, or drawn and stored."""
        try:
            return self._picture(pic)
        except HlovizError as err:
            hint = f" ({err.hint})" if getattr(err, "hint", None) else ""
            message = err.args[0] if pic.target in err.args[0] else f"{pic.target}: {err.args[0]}"
            raise PictureError(message + hint) from None
        except OSError as err:
            raise PictureError(f"{pic.target}: {err.strerror or err}") from None

    def _picture(self, pic: DocPicture) -> tuple[str, str]:
        from .. import __version__

        source: Any = pic.target
        digest = content_hash(pic.target)
        if digest is None:  # a live target: captured once per build, then hashed like a file
            source = self._capture(pic.target)
            digest = hashlib.sha256(json.dumps([source.pre_text, source.post_text], sort_keys=True)
                                    .encode("utf-8")).hexdigest()
        key = hashlib.sha256(json.dumps({"hloviz": __version__, "target": digest, "options": pic.drawing()},
                                        sort_keys=True).encode("utf-8")).hexdigest()[:20]
        name = f"hloviz-{key}.svg"
        cached = self.folder / name
        if cached.is_file():
            return name, cached.read_text(encoding="utf-8")
        svg = self._draw(source, pic)
        self.renders += 1
        self._store(cached, svg)
        return name, svg

    def forget_live(self) -> None:
        """Forget the live captures: the next build captures each live target again, once."""
        self._live.clear()

    def _capture(self, target: str) -> Any:
        if target not in self._live:
            from ..capture import load_target

            self._live[target] = load_target(target)
            self.captures += 1
        return self._live[target]

    @staticmethod
    def _draw(source: Any, pic: DocPicture) -> str:
        from .. import api

        stage = pic.stage
        if pic.memory:  # the memory timeline: the buffer assignment's picture, drawn without Graphviz
            if stage not in (None, "memory"):
                raise InputError(f":memory: draws the memory timeline of the optimized module; :stage: {stage} "
                                 "asks for another picture", hint="leave out :stage:, or :memory:")
            stage = "memory"
        picture = api.render(source, stage=stage, scope=pic.scope, focus=pic.focus, depth=pic.depth,
                             budget=pic.budget, color_by=pic.color_by, timeout=float(pic.timeout), theme=pic.theme,
                             width=pic.width, max_height=pic.max_height, wrap=pic.wrap, aspect=pic.aspect)
        return picture.data.decode("utf-8")

    def _store(self, path: Path, svg: str) -> None:
        """Write atomically: a build stopped half-way never leaves half a picture to reuse."""
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".svg", dir=self.folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(svg)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def svg_body(svg: str) -> str:
    """The ``<svg>`` element alone (no XML declaration or doctype), for inlining in HTML."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def svg_title(svg: str) -> str:
    """The picture's ``<title>`` (what :func:`hloviz.render.page.for_page` wrote), as text."""
    m = re.search(r'<title id="[^"]*">(.*?)</title>', svg, re.DOTALL)
    return html.unescape(m.group(1)) if m else "hloviz picture"


def resolve_target(target: str, document_dir: Path, source_dir: Path) -> tuple[str, list[Path]]:
    """``target`` as written in a docs source, as a path hloviz can read, and the files the
    picture depends on (for the docs tool to rebuild the page when one changes).

    A leading ``/`` means the docs' source folder; anything else is relative to the document.
    ``file.py:function`` keeps its function part.
    """
    base, fn = target, ""
    m = re.fullmatch(r"(.+\.py)(:[A-Za-z_][\w.]*)", target)
    if m:
        base, fn = m.group(1), m.group(2)
    path = Path(os.path.normpath((source_dir / base.lstrip("/")) if base.startswith("/") else (document_dir / base)))
    if path.is_dir():
        deps = sorted(p for p in path.rglob("*") if p.is_file())
    else:
        deps = [path] if path.is_file() else []
    return str(path) + fn, deps

"""One picture a docs source asks for, and the cache that makes rebuilding docs cheap.

:class:`DocPicture` is what a directive or fenced block says (target and options, checked as
``hloviz render`` checks them). :class:`PictureCache` answers it with SVG text and a content-
hashed file name: the key is a hash of hloviz's version, the options, and the target's content —
a capture folder's or dump folder's files, an HLO file's bytes, or, for a live ``model.py:fn``,
the HLO captured once per build. A hit reads a file; only a miss captures or runs Graphviz.

Everything read here is untrusted (a docs build runs in CI, its cache restored from a CI cache
anyone may have written): a target that is a FIFO, a device or larger than ``--max-input`` is
refused before a byte of it is read; a cache entry is served only when it is a plain file whose
SHA-256 matches the record written beside it *and* it is an SVG of the kind hloviz writes
(:mod:`.svgcheck`), else it is drawn again; the copy into the built site replaces, atomically,
whatever is there (a planted file or link) when it differs.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..errors import HlovizError, InputError

__all__ = ["OPTIONS", "DocPicture", "PictureCache", "PictureError", "parse_options", "publish", "resolve_target",
           "scalar", "svg_body", "svg_title", "write_atomic"]


class PictureError(Exception):
    """A picture a docs source asked for could not be made: the message says what and why
    (hloviz's own message); the front end reports it as a warning at the source line."""


#: Largest whole number an option takes (``:timeout:`` is capped lower, as ``--timeout`` is).
_MOST = 10**9
_WHOLE = re.compile(r"\s*([0-9]{1,10})\s*\Z", re.ASCII)
_NUMBER = re.compile(r"\s*([0-9]{1,10}(?:\.[0-9]{1,10})?)\s*\Z", re.ASCII)


def _int(name: str) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        m = _WHOLE.match(value) if isinstance(value, str) else None
        number = value if type(value) is int else int(m.group(1)) if m else None
        if number is None or not 0 <= number <= _MOST:
            raise InputError(f":{name}: must be a whole number (ASCII digits, at most {_MOST}), not {_shown(value)}")
        return number
    return convert


def _float(name: str) -> Callable[[Any], float]:
    def convert(value: Any) -> float:
        m = _NUMBER.match(value) if isinstance(value, str) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= _MOST:
            return float(value)  # a YAML number (nan and inf fail the comparison)
        if m is None:
            raise InputError(f":{name}: must be a number (ASCII digits, such as 1.5), not {_shown(value)}")
        return float(m.group(1))
    return convert


def _text(value: Any) -> str:
    return str(value).strip()


def _flag(value: Any) -> bool:
    if value is None or value is True or str(value).strip().lower() in ("", "true", "yes", "1"):
        return True
    if value is False or str(value).strip().lower() in ("false", "no", "0"):
        return False
    raise InputError(f":memory: is a flag (true or false), not {_shown(value)}")


def _shown(value: Any) -> str:
    """A scalar option's value for a message, cut short (never a whole structure: see :func:`scalar`)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:60]}… ({len(text)} characters)"


def scalar(name: str, value: Any) -> None:
    """:class:`InputError` unless ``value`` is one scalar (text, a number, true/false, a date, or
    empty), as an option of a docs source must be. A YAML list or mapping is refused by its type
    alone, never turned into text: nine levels of aliases (``&a [*b, *b, …]``) are a few hundred
    bytes of YAML and a billion items as text."""
    import datetime

    if value is not None and not isinstance(value, (str, int, float, bool, datetime.date)):
        kind = "a list" if isinstance(value, list) else "a mapping" if isinstance(value, dict) else type(value).__name__
        raise InputError(f":{name}: must be one value (text, a number or true/false), not {kind}")


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
            raise InputError(f"unknown option :{_shown(name)[1:-1]}: (hloviz knows "
                             f"{', '.join(':' + n + ':' for n in OPTIONS)})")
        scalar(name, value)
        values[name.replace("-", "_")] = OPTIONS[name](value)
    if values.get("timeout") is not None:
        from ..render.layout.runs.graphviz_run import MAX_TIMEOUT

        values["timeout"] = min(int(values["timeout"]), int(MAX_TIMEOUT))  # 0 is still refused, by render
    known = {f.name for f in fields(DocPicture)}
    return DocPicture(target=target, **{k: v for k, v in values.items() if k in known})


def _open_regular(path: Path, what: str) -> int:
    """A descriptor of ``path`` when it is a plain file within ``--max-input``; :class:`InputError`
    otherwise, before a byte is read: opened without waiting (a FIFO does not block) and looked at
    through the descriptor (what is checked is what is read)."""
    from ..inputs import max_input

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or \
                stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a plain file"
            raise InputError(f"{path} is {kind}, not a regular file of {what}; hloviz reads only regular files")
        if st.st_size > max_input():
            raise InputError(f"{path} holds {st.st_size} bytes, more than the {max_input()} hloviz reads from one "
                             "file (--max-input)", hint="raise the limit with HLOVIZ_MAX_INPUT=2GiB if you meant it")
        os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _hash_file(path: Path, digest: Any, what: str) -> None:
    with os.fdopen(_open_regular(path, what), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)


def content_hash(target: str) -> str | None:
    """A hash of what ``target`` holds, or None for a live ``model.py:fn`` target (hashed
    after its capture). A folder is hashed by its files' names and bytes, in order. A target (or
    a file of a folder) that is a FIFO, a device or larger than ``--max-input`` is an
    :class:`InputError` before anything is read."""
    path = Path(target)
    digest = hashlib.sha256()
    if path.is_dir():
        for p in sorted(path.rglob("*")):
            if p.is_symlink():  # not hashed (as before); but not a way to a FIFO either
                if p.exists() and not (p.is_file() or p.is_dir()):
                    raise InputError(f"{p} links to something that is not a regular file; hloviz reads only regular "
                                     "files")
                continue
            if p.is_dir():
                continue
            digest.update(str(p.relative_to(path)).encode("utf-8", "surrogateescape") + b"\0")
            _hash_file(p, digest, "a capture or dump folder")
            digest.update(b"\0")
        return digest.hexdigest()
    if os.path.lexists(path):
        _hash_file(path, digest, "HLO")
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
        svg = self._read(cached)
        if svg is not None:
            return name, svg
        svg = self._draw(source, pic)
        self.renders += 1
        self._store(cached, svg)
        return name, svg

    def _read(self, path: Path) -> str | None:
        """The cached picture at ``path``, or None when it must be drawn again: missing, not a
        plain file (a link, a FIFO), its SHA-256 not the one recorded beside it (truncated,
        edited), not UTF-8, or not an SVG of the kind hloviz writes (:func:`.svgcheck.svg_problem`:
        an entry whose record an attacker rewrote too still shows no script)."""
        from .svgcheck import svg_problem

        data = _read_plain(path)
        record = _read_plain(_record_of(path))
        if data is None or record is None or record.decode("ascii", "replace").strip() != \
                hashlib.sha256(data).hexdigest():
            return None
        try:
            svg = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return None if svg_problem(svg) is not None else svg

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
        """Write atomically, the picture and then its SHA-256 beside it: a build stopped half-way
        never leaves half a picture to reuse (one without its record is drawn again)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        data = svg.encode("utf-8")
        write_atomic(path, data)
        write_atomic(_record_of(path), hashlib.sha256(data).hexdigest().encode("ascii") + b"\n")


def _record_of(path: Path) -> Path:
    """Where the SHA-256 of the cached picture ``path`` is kept (``hloviz-KEY.sha256``)."""
    return path.with_suffix(".sha256")


def _read_plain(path: Path, most: int = 64 << 20) -> bytes | None:
    """The bytes of ``path`` when it is a plain file of at most ``most`` bytes; None otherwise
    (missing, a link, a FIFO or device: opened without following links and without waiting)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > most:
            return None
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(most + 1)
        return data if len(data) <= most else None
    except OSError:
        return None
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """``data`` at ``path``, written to a temporary file beside it and renamed into place: whatever
    was there (a file, a planted link) is replaced, never written through, and a reader never
    sees half of it."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def publish(path: Path, svg: str) -> None:
    """Put a picture into the built site at ``path`` (``_images/``, ``assets/hloviz/``): left as
    it is when it is already a plain file with these bytes, else written with
    :func:`write_atomic` (a stale copy, an edited one, or a link planted there is replaced)."""
    data = svg.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    if _read_plain(path, len(data)) == data:
        return
    write_atomic(path, data)


def svg_body(svg: str) -> str:
    """The ``<svg>`` element alone (no XML declaration or doctype), for inlining in HTML."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def svg_title(svg: str) -> str:
    """The picture's ``<title>`` (what :func:`hloviz.render.page.page.for_page` wrote), as text."""
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

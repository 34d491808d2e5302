"""Modules → picture bytes in one call: build the view, lay it out under a timeout, and retry
with a coarser view when Graphviz does not finish.

:func:`module_picture` draws one module, :func:`pair_picture` the pre/post pair side by side.
Both return a :class:`Picture` that knows its DOT text, its bytes in the asked format, the notes
saying what was collapsed or retried, and how to show itself in Jupyter.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import DependencyError, HlovizError, InputError, RenderError
from ..ir import HloModule
from .layout.compose import lay_out
from .layout.dot import Drawing, to_drawing
from .layout.runs.dotserver import active_servers
from .layout.runs.graphviz_run import (
    DEFAULT_TIMEOUT,
    PNG_MAX_PIXELS,
    GraphvizTimeout,
    LayoutBudget,
    png_pixels,
    run_dot,
    run_dot_many,
    run_pinned,
)
from .layout.wrap import OFF, Wrap
from .page.export import to_json
from .page.files import write_atomic
from .views import Mark, View, ViewOptions, draw_module

if TYPE_CHECKING:
    from ..analysis import Analysis

__all__ = ["FORMATS", "Builder", "Picture", "build_picture", "format_for", "module_picture", "pair_picture"]

#: Output suffix → format.
FORMATS = {".svg": "svg", ".png": "png", ".dot": "dot", ".gv": "dot", ".html": "html", ".json": "json"}

#: Builds the DOT text (or a :class:`~hloviz.render.layout.dot.Drawing`, whose columns can be laid out
#: apart and wrapped) and the drawn views for some options and extra notes.
Builder = Callable[[ViewOptions, Sequence[str]], tuple[str | Drawing, list[tuple[str, View]]]]


def format_for(path: str | Path, explicit: str | None = None) -> str:
    """The picture format a path asks for (by suffix), or ``explicit`` when given."""
    if explicit:
        fmt = explicit.lower().lstrip(".")
        if fmt not in set(FORMATS.values()):
            raise InputError(f"unknown picture format {explicit!r}", hint="use svg, png, dot, html or json")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"{path}: cannot tell the picture format from the suffix {suffix or '(none)'!r}",
                         hint="name the file .svg, .png, .dot, .html or .json")
    return FORMATS[suffix]


@dataclass
class Picture:
    """A finished picture: ``data`` in ``format``, its ``dot`` text, and ``notes`` about it.

    In Jupyter it displays itself (``_repr_svg_``, laid out on first display when the format
    is not SVG). ``views`` holds the drawn columns (title, :class:`View`).
    """

    title: str
    format: str
    data: bytes
    dot: str
    notes: list[str] = field(default_factory=list)
    views: list[tuple[str, View]] = field(default_factory=list)
    svg: bytes | None = None
    timeout: float = DEFAULT_TIMEOUT
    #: the drawing behind ``dot`` and how it is wrapped, to lay it out again as it was
    drawing: Drawing | None = field(default=None, repr=False)
    wrap: Wrap = OFF
    #: ``--layout``: each column whole, block by block, or ``auto`` (:mod:`hloviz.render.layout.blocklayout`)
    layout: str = "auto"

    def save(self, path: str | Path) -> Path:
        """Write the picture's bytes to ``path`` atomically."""
        return write_atomic(path, self.data)

    def svg_text(self) -> str:
        """The SVG (laid out now if this picture was made in another format)."""
        if self.svg is None:
            self.svg = _layout(self.drawing or self.dot, "svg", self.timeout, self.wrap, self.layout)[0]
        return self.svg.decode("utf-8")

    def _repr_svg_(self) -> str | None:
        try:
            return self.svg_text()
        except HlovizError:
            return None

    def _repr_png_(self) -> bytes | None:
        return self.data if self.format == "png" else None

    def __repr__(self) -> str:
        return f"<Picture {self.title!r}: {self.format}, {len(self.data)} bytes, {len(self.notes)} notes>"


def _notes(views: list[tuple[str, View]]) -> list[str]:
    if len(views) == 1:
        return list(views[0][1].notes)
    return [f"{title}: {n}" for title, v in views for n in v.notes]


def build_picture(build: Builder, options: ViewOptions, fmt: str, timeout: float, title: str,
                  budget: LayoutBudget | None = None, wrap: Wrap = OFF, layout: str = "auto") -> Picture:
    """A picture from any ``build(options, extra_notes) -> (dot_text or Drawing, [(column title, View)])``.

    The layer :func:`module_picture` and :func:`pair_picture` share (and the diff picture
    uses): DOT and JSON need no Graphviz; SVG, PNG and HTML are laid out within this
    picture's share of ``budget`` (the command's one :class:`LayoutBudget`, which covers every
    ``dot`` a picture runs, parts laid out in parallel included; by default ``timeout`` for this
    picture alone). A :class:`~hloviz.render.layout.dot.Drawing` of several columns, or one ``wrap``
    cuts into parts, is laid out in parts and composed (:mod:`hloviz.render.layout.compose`); ``layout``
    (``auto``, ``whole``, ``blocks``) says whether a column is laid out block by block. When the
    full view does not finish within its part of the share, ``build`` is called again with
    coarser options and a note saying so, and laid out in the time left. Errors from Graphviz
    carry the DOT text as ``err.dot_text`` so callers can still write it.
    """
    built, views = build(options, ())
    drawing = built if isinstance(built, Drawing) else None
    dot_text = drawing.text if drawing is not None else str(built)
    notes = _notes(views)
    if fmt == "dot":
        return Picture(title, fmt, dot_text.encode("utf-8"), dot_text, notes, views, timeout=timeout)
    if fmt == "json":
        return Picture(title, fmt, to_json(views).encode("utf-8"), dot_text, notes, views, timeout=timeout)
    layout_fmt = "png" if fmt == "png" else "svg"
    budget = budget if budget is not None else LayoutBudget(timeout)
    share = budget.share()
    started = time.monotonic()
    full = share * LayoutBudget.FULL_SHARE
    try:
        data, wrapped = _layout(drawing or dot_text, layout_fmt, max(full, _MIN_RUN), wrap, layout)
    except (DependencyError, RenderError) as err:
        if not isinstance(err, GraphvizTimeout):
            budget.done()
            err.with_dot_text(dot_text)  # callers still write the DOT
            raise
        coarse = replace(options, coarse=True, budget=max(20, options.budget // 4))
        retry = (f"Graphviz did not finish the full view within {_secs(full)} s (of the {budget.seconds:g} s "
                 f"--timeout), so this is a coarser one (every fusion and body collapsed, at most "
                 f"{coarse.budget} nodes)")
        built, views = build(coarse, (retry,))
        drawing = built if isinstance(built, Drawing) else None
        dot_text = drawing.text if drawing is not None else str(built)
        notes = _notes(views)
        if not any(retry in n for n in notes):  # a builder that does not put it in the views' notes
            notes.insert(0, retry)
        try:
            data, wrapped = _layout(drawing or dot_text, layout_fmt,
                                    max(share - (time.monotonic() - started), _MIN_RUN), wrap, layout)
        except (DependencyError, RenderError) as err:
            if isinstance(err, GraphvizTimeout):
                err = GraphvizTimeout(f"Graphviz did not finish within the {budget.seconds:g} s --timeout, not even "
                                      f"a coarser view of at most {coarse.budget} nodes", seconds=budget.seconds,
                                      hint=err.hint)
            raise err.with_dot_text(dot_text) from None
        finally:
            budget.done()
    else:
        budget.done()
    notes.extend(wrapped)
    pixels = png_pixels(data) if layout_fmt == "png" else None
    svg = data if layout_fmt == "svg" else None
    if pixels is not None and max(pixels) >= PNG_MAX_PIXELS - 2:  # Graphviz rounds the fitted side
        # drawn smaller to fit: is its text still readable? The SVG of the same layout says how
        # big the picture and its smallest text are at full size.
        svg = _layout(drawing or dot_text, "svg", max(timeout, _MIN_RUN), wrap, layout)[0]
        _check_png_text(pixels, svg.decode("utf-8"))
        notes.append(f"the PNG is drawn to fit {PNG_MAX_PIXELS:,} px on its longer side ({pixels[0]:,} × "
                     f"{pixels[1]:,} px); an .svg keeps every detail at full size")
    if fmt == "html":
        from .page.html import picture_page

        data = picture_page(title, data.decode("utf-8"), notes).encode("utf-8")
    return Picture(title, fmt, data, dot_text, notes, views, svg, timeout, drawing, wrap, layout)


#: The smallest text, in pixels, a PNG hloviz writes may have (issue 33, goal 4): a picture that
#: would have to be drawn smaller than that to fit :data:`PNG_MAX_PIXELS` is refused instead.
PNG_MIN_TEXT_PX = 8.0

_SVG_SIZE = re.compile(r'<svg[^>]*\bwidth="([\d.]+)pt"[^>]*\bheight="([\d.]+)pt"')
_FONT_SIZE = re.compile(r'font-size="([\d.]+)"')


def png_text_px(pixels: tuple[int, int], svg: str) -> float | None:
    """The smallest text of a PNG ``pixels`` big, in pixels, from the SVG of the same layout
    (its size in points and its smallest ``font-size``); None when the SVG does not say."""
    size = _SVG_SIZE.search(svg)
    fonts = [float(f) for f in _FONT_SIZE.findall(svg)]
    if size is None or not fonts:
        return None
    width_pt, height_pt = float(size.group(1)), float(size.group(2))
    scale = min(pixels[0] / max(width_pt, 1.0), pixels[1] / max(height_pt, 1.0))  # pixels a point
    return min(fonts) * scale


def _check_png_text(pixels: tuple[int, int], svg: str) -> None:
    """Refuse a PNG whose text would be under :data:`PNG_MIN_TEXT_PX`: an image nobody can read
    is worse than a message saying what to draw instead."""
    px = png_text_px(pixels, svg)
    if px is None or px >= PNG_MIN_TEXT_PX:
        return
    size = _SVG_SIZE.search(svg)
    assert size is not None
    raise InputError(
        f"this picture is {float(size.group(1)):,.0f} × {float(size.group(2)):,.0f} pt: as a PNG of at most "
        f"{PNG_MAX_PIXELS:,} px a side ({pixels[0]:,} × {pixels[1]:,} px) its text would be {px:.1f} px high, "
        f"under the {PNG_MIN_TEXT_PX:g} px anyone can read, so no PNG is written",
        hint="write an .svg (every detail at any zoom) or an .html explorer, or draw less into the PNG: "
             "--scope PATH (one layer), --depth N, or a smaller --budget")


def _layout(what: Drawing | str, fmt: str, timeout: float, wrap: Wrap, layout: str = "auto") -> tuple[bytes, list[str]]:
    """Lay out a drawing (in parts where it has several, :func:`~hloviz.render.layout.compose.lay_out`)
    or plain DOT text; the notes say how it was wrapped."""
    if isinstance(what, Drawing):
        servers = active_servers()  # the explorer's page: dot processes kept running (dotserver)
        many, pinned = (servers.run_dot_many, servers.run_pinned) if servers is not None else (run_dot_many, run_pinned)
        started = time.monotonic()
        try:
            laid = lay_out(what, fmt, timeout, wrap, run=_run_dot, run_many=many, pinned=pinned, mode=layout)
            if not (what.tied and fmt == "svg" and wrap.active and _too_flat(laid[0], wrap)):
                return laid
            # tied columns are one layout, which cannot be cut into parts: a picture too flat for
            # the page (a diff of two flat columns) is laid out apart, and wrapped. A tall one is
            # left whole, its matched kernels level: the diff's overview keeps to 24 boxes a
            # column, and once its notes broke into lines the TF transformer step's diff, 1,136 pt
            # wide and 2,181 tall, was laid out apart for being taller than the page's shape
            apart = replace(what, tied=False)
            return lay_out(apart, fmt, max(timeout - (time.monotonic() - started), _MIN_RUN), wrap, run=_run_dot,
                           run_many=many, pinned=pinned, mode=layout)
        except RenderError as err:
            # Levels tied across columns (the diff's matched kernels side by side) trip dot's
            # spline router and ranker on some graphs ("Unable to reclaim box space", "lost n37
            # n44 edge"): lay the columns out apart instead, each as it would be alone.
            if isinstance(err, GraphvizTimeout) or not what.tied:
                raise
            apart = replace(what, tied=False)
            left = max(timeout - (time.monotonic() - started), _MIN_RUN)
            data, notes = lay_out(apart, fmt, left, wrap, run=_run_dot, run_many=many, pinned=pinned, mode=layout)
            apart_note = "the columns are laid out apart (Graphviz could not keep matched kernels on one level)"
            return data, [*notes, apart_note]
    return _run_dot(what, fmt, timeout), []


def _too_flat(svg: bytes, wrap: Wrap) -> bool:
    """Whether ``wrap`` would cut a picture of the laid-out ``svg``'s size for being too flat."""
    from .layout.wrap import ACROSS, direction

    size = _SVG_SIZE.search(svg[:2000].decode("utf-8", "replace"))
    return size is not None and direction([(float(size.group(1)), float(size.group(2)))], wrap, 0.0) == ACROSS


#: The least time a layout is given (a budget spent to nothing still lets a tiny graph through).
_MIN_RUN = 0.05


def _secs(seconds: float) -> str:
    return f"{seconds:.2g}" if seconds < 10 else f"{seconds:.0f}"


def _run_dot(dot_text: str, fmt: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """Lay out ``dot_text``; if dot's ranking fails on the invisible arrows that stack scopes
    (``trouble in init_rank``, ``lost … edge``: dot bugs with clusters), lay it out without them."""
    servers = active_servers()
    run = servers.run_dot if servers is not None else run_dot
    try:
        return run(dot_text, fmt, timeout=timeout)
    except RenderError as err:
        if isinstance(err, GraphvizTimeout) or "style=invis" not in dot_text:
            raise
        plain = "\n".join(line for line in dot_text.split("\n") if not ("->" in line and "style=invis" in line))
        return run(plain, fmt, timeout=timeout)


def module_picture(module: HloModule, *, fmt: str = "svg", options: ViewOptions = ViewOptions(),
                   marks: Mapping[str, Mark] | None = None, title: str | None = None,
                   timeout: float = DEFAULT_TIMEOUT, budget: LayoutBudget | None = None,
                   info: Mapping | None = None, wrap: Wrap = OFF, layout: str = "auto") -> Picture:
    """One module drawn by the rules of :mod:`hloviz.render.views` (``info``: a capture's, for
    parameter names and the user's lines; ``wrap``: long columns cut into parts side by side,
    :mod:`hloviz.render.layout.wrap`)."""
    shown = title if title is not None else module.name

    def build(opts: ViewOptions, extra: Sequence[str]) -> tuple[str | Drawing, list[tuple[str, View]]]:
        view = draw_module(module, marks=marks, options=opts, title=shown, info=info)
        view.scene.notes[:0] = list(extra)
        return to_drawing(view.scene), [(shown, view)]

    return build_picture(build, options, fmt, timeout, shown, budget, wrap, layout)


def column_picture(pair: Picture, index: int, *, title: str, timeout: float = DEFAULT_TIMEOUT,
                   budget: LayoutBudget | None = None) -> Picture | None:
    """Column ``index`` of the side-by-side ``pair`` (0: before optimization) as a picture of its
    own, titled ``title``: the module as the pair drew it, laid out alone — the picture
    :func:`module_picture` draws with the same options and marks, without drawing the module a
    second time (``show``'s ``pre.svg`` and ``post.svg``). None where ``pair`` has no such column."""
    from copy import copy

    from .scene import Row

    if index >= len(pair.views):
        return None
    source = pair.views[index][1]
    view = copy(source)
    view.scene = replace(source.scene, title=[Row(title, bold=True)], notes=list(source.scene.notes))

    def build(opts: ViewOptions, extra: Sequence[str]) -> tuple[str | Drawing, list[tuple[str, View]]]:
        if extra:  # no layout in time: the coarser view is drawn anew (build_picture's retry)
            raise GraphvizTimeout(extra[0], seconds=timeout)
        return to_drawing(view.scene), [(title, view)]

    return build_picture(build, source.options or ViewOptions(), "svg", timeout, title, budget)


def pair_picture(pre: HloModule, post: HloModule, analysis: Analysis, *, fmt: str = "svg",
                 options: ViewOptions = ViewOptions(), title: str = "", timeout: float = DEFAULT_TIMEOUT,
                 budget: LayoutBudget | None = None, color_by: str = "kernel",
                 info: Mapping | None = None, wrap: Wrap = OFF, layout: str = "auto") -> Picture:
    """Pre and post side by side, kernels numbered and coloured (``color_by``: one colour per
    kernel, or a heat scale of ``flops`` or ``bytes``), folds marked. The two columns are laid
    out apart, at once, and composed (:mod:`hloviz.render.layout.compose`); ``wrap`` cuts long ones."""
    from .layout.sidebyside import side_by_side

    def build(opts: ViewOptions, extra: Sequence[str]) -> tuple[str | Drawing, list[tuple[str, View]]]:
        sbs = side_by_side(pre, post, analysis, options=opts, title=title, notes=tuple(extra), color_by=color_by,
                           info=dict(info) if info is not None else None)
        return sbs.drawing or sbs.dot, [("before optimization", sbs.pre), ("after optimization", sbs.post)]

    return build_picture(build, options, fmt, timeout, title or post.name, budget, wrap, layout)

"""The composition behind ``hloviz render`` (part of :mod:`hloviz.api`), and what the picture
commands share.

:func:`render` takes anything :func:`hloviz.capture.load_target` accepts (and, from Python, an
:class:`~hloviz.ir.HloModule` or a :class:`~hloviz.capture.Capture`) and returns a picture that
displays itself in Jupyter. Nothing is written until the picture is made; then the file is
written atomically. When Graphviz is missing, the DOT text is still written, and the error says
what to install. The helpers here — reading the target, checking the drawing options, the DOT
text kept beside a failed picture — serve ``show`` (:mod:`hloviz.api.report`) and ``diff`` too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DependencyError, HlovizError, InputError, RenderError
from ..ir import HloModule
from .fit import fitted
from .options import CaptureOptions, DrawOptions, FitOptions, chosen

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..capture import Capture
    from ..render.layout.wrap import Wrap
    from ..render.page.page import PageOptions
    from ..render.pictures import Picture
    from ..render.views import ViewOptions

__all__ = ["render"]

STAGES = ("pre", "post", "both", "memory")


def check_timeout(timeout: float) -> None:
    """Graphviz's budget is a positive, finite number of seconds (nan, inf, 0 and -1 are refused)."""
    if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
        raise InputError(f"--timeout must be a positive number of seconds, not {timeout!r}")


def view_options(computation: str | None, focus: str | None, radius: int, expand_chains: bool,
             budget: int, timeout: float, scope: str | None = None, depth: int | None = None) -> ViewOptions:
    from ..render.views import ViewOptions

    if budget < 1:
        raise InputError(f"--budget must be at least 1 node, not {budget}")
    if radius < 0:
        raise InputError(f"--radius must be 0 or more, not {radius}")
    check_timeout(timeout)
    if depth is not None and depth < 1:
        raise InputError(f"--depth must be 1 or more, not {depth}", hint="--depth 1 draws the top-level scopes")
    if scope is not None and not scope.strip():
        raise InputError("--scope needs a scope path or layer name", hint="hloviz stats --by scope lists them")
    return ViewOptions(computation=computation, focus=focus, radius=radius, expand_chains=expand_chains,
                       budget=budget, scope=scope, depth=depth)


def check_color_by(color_by: str) -> None:
    from ..render.layout.sidebyside import COLOR_BY

    if color_by not in COLOR_BY:
        raise InputError(f"--color-by must be one of {', '.join(COLOR_BY)}, not {color_by!r}")


def capture_target(target: Any, *, pre, post, args, device, module, verbose, notify) -> Capture:
    from ..capture import Capture, load_target

    if isinstance(target, Capture):
        return target
    if isinstance(target, HloModule):
        return Capture.from_module(target)
    return load_target(None if target is None else str(target), pre=pre, post=post, args=tuple(args),
                       device=device, verbose=verbose, module=module, notify=notify)


def capture_modules(cap: Capture) -> tuple[HloModule | None, HloModule | None]:
    return cap.modules()


def source_lookup(info: dict) -> Callable[[str], dict | None] | None:
    smap = info.get("source_map") or {}
    if not smap:
        return None
    from ..capture import source_for

    return lambda op: source_for(op, smap)


def with_dot_written(err: HlovizError, path: Path) -> HlovizError:
    """The same error, saying where the DOT text went (written before re-raising).

    The DOT file beside the picture replaces an existing file only when that file is hloviz's
    own DOT text (it starts with ``digraph hloviz``); a hand-written ``x.dot`` is left alone."""
    from ..render.page.files import write_atomic

    dot_text = getattr(err, "dot_text", None)
    if dot_text is None:
        return err
    if _is_ours_or_absent(path):
        write_atomic(path, dot_text)
        message = f"{err.args[0]}; the DOT text is in {path}"
    else:
        message = f"{err.args[0]}; the DOT text was not written: {path} exists and hloviz did not write it"
    if isinstance(err, DependencyError):
        return DependencyError(message, hint=err.hint)
    return RenderError(message, hint=err.hint)


#: How every DOT text hloviz writes begins (see hloviz.render.layout.dot).
_DOT_HEAD = b"digraph hloviz {"


def _is_ours_or_absent(path: Path) -> bool:
    if not (path.is_symlink() or path.exists()):
        return True
    if path.is_symlink() or not path.is_file():
        return False
    try:
        with open(path, "rb") as f:
            return f.read(len(_DOT_HEAD)) == _DOT_HEAD
    except OSError:
        return False


def render(target: Any = None, output: str | Path | None = None, *, stage: str | None = None,
           fmt: str | None = None, pre: str | Path | None = None, post: str | Path | None = None,
           args: Sequence[str] = (), device: str | None = None, module: str | None = None,
           verbose: bool = False, notify: Callable[[str], None] | None = None,
           progress: Callable[[str], None] | None = None, computation: str | None = None,
           focus: str | None = None, radius: int = 2, expand_chains: bool = False, budget: int | None = None,
           timeout: float = 30.0, scope: str | None = None, depth: int | None = None,
           color_by: str = "kernel", capture: CaptureOptions | None = None,
           drawing: DrawOptions | None = None, theme: str = "light", width: str | None = None,
           max_height: str | None = None, wrap: str | int = "auto", aspect: float | None = None,
           layout: str = "auto", fit: FitOptions | None = None) -> Picture:
    """One picture of ``target``: ``stage`` ``"pre"``, ``"post"`` (default when present) or
    ``"both"`` (side by side, kernels numbered). Written to ``output`` when given, in the format
    its suffix names (``.svg .png .dot .html .json``); returned either way. ``scope`` draws one
    scope open, ``depth`` opens no scope deeper (see :class:`hloviz.render.ViewOptions`);
    ``color_by`` (``kernel``, ``flops``, ``bytes``) colours kernels, with ``stage="both"``.
    An SVG carries a title and the verdict for screen readers; ``theme`` (``light``, ``dark``,
    ``auto``), ``width`` and ``max_height`` fit it to a page (:mod:`hloviz.render.page.page`).
    ``wrap`` (``auto``, ``off`` or a number of parts) cuts long columns into parts side by side
    so the picture's height over width comes near ``aspect`` (1.4, a portrait page, by default;
    :mod:`hloviz.render.layout.wrap`); ``auto`` leaves the pan-and-zoom HTML explorer unwrapped.
    ``layout`` (``auto``, ``whole``, ``blocks``): whether each column is laid out whole or block by
    block and composed (:mod:`hloviz.render.layout.blocklayout`; ``auto`` where that was measured to pay).

    The capture, drawing and page settings come as keywords or as ``capture=``/``drawing=``/``fit=``
    objects (:mod:`hloviz.api.options`), not both."""
    return _render(target, output, stage=stage, fmt=fmt, notify=notify, progress=progress,
                   capture=chosen("capture", capture, CaptureOptions(pre, post, tuple(args), device, module, verbose)),
                   drawing=chosen("drawing", drawing, DrawOptions(computation, focus, radius, expand_chains, budget,
                                                                  timeout, scope, depth, color_by)),
                   fit=chosen("fit", fit, FitOptions(theme, width, max_height, wrap, aspect, layout)))


def _render(target: Any, output: str | Path | None, *, stage: str | None, fmt: str | None,
            notify: Callable[[str], None] | None, progress: Callable[[str], None] | None,
            capture: CaptureOptions, drawing: DrawOptions, fit: FitOptions) -> Picture:
    """:func:`render`'s work, on its settings as the three option objects."""
    pre, post, args, device, module, verbose = (capture.pre, capture.post, capture.args, capture.device,
                                                capture.module, capture.verbose)
    computation, focus, radius, expand_chains = drawing.computation, drawing.focus, drawing.radius, drawing.expand_chains
    budget, timeout, scope, depth, color_by = drawing.budget, drawing.timeout, drawing.scope, drawing.depth, drawing.color_by
    theme, width, max_height, wrap, aspect, layout = fit.theme, fit.width, fit.max_height, fit.wrap, fit.aspect, fit.layout
    from ..render.page.page import PageOptions, page_picture
    from ..render.pictures import format_for, module_picture, pair_picture

    say = progress or (lambda _m: None)
    page = PageOptions(theme=theme, width=width, max_height=max_height)
    chosen = format_for(output, fmt) if output is not None else format_for("", fmt or "svg")
    if stage is not None and stage not in STAGES:
        raise InputError(f"--stage must be pre, post or both, not {stage!r}")
    from ..render.views import OVERVIEW_BUDGET, default_budget

    # no --budget: the overview of a whole module (one box per block), the detailed picture of a part
    whole = computation is None and focus is None and scope is None and depth is None and chosen != "html"
    options = view_options(computation, focus, radius, expand_chains, default_budget(budget, whole=whole), timeout,
                       scope, depth)
    check_color_by(color_by)
    wrapping, wrap_notes = _wrapping(wrap, aspect, chosen, overview=options.budget <= OVERVIEW_BUDGET)
    from ..render.layout.blocklayout import parse_layout

    layout_mode = parse_layout(layout)
    say("capturing" if isinstance(target, str) and ":" in target else "reading")
    cap = capture_target(target, pre=pre, post=post, args=args, device=device, module=module, verbose=verbose,
                   notify=notify)
    pre_m, post_m = capture_modules(cap)
    if stage == "memory" or (stage is None and output is not None and Path(output).stem == "memory"):
        return _memory_picture(cap, chosen, output, say, page)  # `render -o memory.svg`: the timeline, for docs
    stage = stage or ("post" if post_m is not None else "pre")
    say("drawing")
    analysis = None  # analyze(pre_m, post_m) once for the picture, its verdict and the explorer
    html = chosen == "html"
    if html:
        chosen = "svg"  # laid out first; the page around it comes after
    from ..render.layout.runs.graphviz_run import LayoutBudget

    layout_budget = LayoutBudget(timeout)  # one --timeout for the picture and the explorer's extra ones
    from ..collector import frozen_while_held

    try:
        with frozen_while_held():  # what this one picture builds is frozen with a large module (not the explorer's)
            if stage == "both":
                if pre_m is None or post_m is None:
                    raise InputError(f"--stage both needs both modules; {cap.label} has only the "
                                     f"{'post' if pre_m is None else 'pre'}-optimization one")
                from ..analysis import analyze
                from ..render.beside import columns_beside

                both = analysis = analyze(pre_m, post_m, info=cap.info)
                with columns_beside(not html and chosen != "json"):  # (the explorer, JSON: each cut is read)
                    picture = fitted(lambda opts: pair_picture(
                        pre_m, post_m, both, fmt=chosen, options=opts, title=f"{cap.label}: {both.verdict}",
                        timeout=timeout, color_by=color_by, info=cap.info, budget=layout_budget, wrap=wrapping,
                        layout=layout_mode), options, fit=budget is None and whole and chosen == "svg")
            else:
                m = pre_m if stage == "pre" else post_m
                if m is None:
                    raise InputError(f"{cap.label} has no {stage}-optimization module",
                                     hint=f"use --stage {'post' if stage == 'pre' else 'pre'}")
                marks = None
                if color_by != "kernel":
                    from ..analysis import analyze
                    from ..render.layout.sidebyside import post_marks, pre_marks

                    analysis = analyze(pre_m, post_m, info=cap.info)
                    if post_m is not None and stage == "post":
                        marks = post_marks(analysis, post_m, color_by)
                    elif post_m is not None and pre_m is not None:  # stage "pre": m is pre_m
                        marks = pre_marks(analysis, pre_m, color_by)
                one = m
                picture = fitted(lambda opts: module_picture(
                    one, fmt=chosen, options=opts, timeout=timeout, marks=marks, title=f"{cap.label} · {stage}-optimization",
                    info=cap.info, budget=layout_budget, wrap=wrapping, layout=layout_mode),
                    options, fit=budget is None and whole and chosen == "svg")
    except (DependencyError, RenderError) as err:
        if output is not None:
            raise with_dot_written(err, Path(output).with_suffix(".dot")) from None
        raise
    analysis = _pair_analysis(pre_m, post_m, cap.info, analysis)
    picture = page_picture(picture, page, description=_verdict(pre_m, post_m, analysis))
    picture.notes.extend(wrap_notes)
    if html:
        say("building the explorer")
        picture = _explorer_picture(picture, cap, stage, pre_m, post_m, layout_budget.left(), color_by=color_by,
                                    analysis=analysis)
    if output is not None:
        say("writing")
        picture.save(output)
    return picture


def _wrapping(wrap: str | int, aspect: float | None, fmt: str, *, overview: bool = False) -> tuple[Wrap, list[str]]:
    """``--wrap``/``--aspect`` for a picture in ``fmt``, and a note where it cannot apply:
    ``auto`` leaves the explorer (HTML) alone, which pans and zooms one long picture (``--wrap
    N`` still cuts it); ``.dot`` and ``.json`` are never laid out, so never cut. ``auto`` leaves
    the ``overview`` whole too: its few boxes, in program order, read best in one piece; cut
    into stacked parts, a training step's columns ran out of order, with connectors and
    crossings, and the CNN step's picture grew (issue 33)."""
    from ..render.layout.wrap import OFF, parse_wrap

    wrapping = parse_wrap(wrap, aspect)
    if overview and wrapping.mode == "auto":
        return OFF, []
    if fmt in ("dot", "json") and wrapping.mode == "parts":
        return wrapping, [(f"--wrap {wrapping.parts} cuts the laid-out picture (.svg, .png, .html); the .{fmt} "
                          "file holds the whole graph")]
    return (OFF if fmt == "html" and wrapping.mode == "auto" else wrapping), []


def _memory_picture(cap: Capture, fmt: str, output: str | Path | None, say: Callable[[str], None],
                    page_options: PageOptions) -> Picture:
    """The memory timeline of ``cap``'s optimized module (``--stage memory``), as SVG fit for a
    page (title, description, ``--theme``, ``--width``, ``--max-height``, as every picture), or an
    HTML page with the memory section (written to ``output`` when given).

    Other formats are refused: the timeline is SVG hloviz writes itself, with no Graphviz layout
    to ask for a PNG, and hloviz does not bring an SVG rasterizer (``rsvg-convert memory.svg -o
    memory.png`` or a browser's screenshot turns it into one)."""
    from ..render.page.memory import TIMELINE_DARK, memory_section, timeline_description, timeline_svg
    from ..render.page.page import for_page
    from ..render.pictures import Picture
    from .memory import memory_of

    if fmt not in ("svg", "html"):
        raise InputError(f"the memory timeline is drawn as .svg or .html, not .{fmt}: it is SVG hloviz writes "
                         "itself (no Graphviz layout), and hloviz brings no SVG-to-PNG converter",
                         hint="write memory.svg (rsvg-convert memory.svg -o memory.png makes a PNG of it), "
                              "or use `hloviz memory --json` for the numbers")
    say("drawing")
    report = memory_of(cap)
    title = f"{cap.label} · memory"
    if fmt == "svg":
        svg = for_page(timeline_svg(report, title), page_options, title=title,
                       description=timeline_description(report), dark_rules=TIMELINE_DARK)
        picture = Picture(title, "svg", svg.encode("utf-8"), "", list(report.notes), svg=svg.encode("utf-8"))
    else:
        from ..render.page.html import page

        picture = Picture(title, "html", page(title, memory_section(report)).encode("utf-8"), "", list(report.notes))
    if output is not None:
        say("writing")
        picture.save(output)
    return picture


def _pair_analysis(pre_m: HloModule | None, post_m: HloModule | None, info: dict,
                   made: Analysis | None) -> Analysis | None:
    """The analysis of the pair: ``made`` where the picture needed it already, else made now
    (None without both modules)."""
    if made is not None or pre_m is None or post_m is None:
        return made
    from ..analysis import analyze

    return analyze(pre_m, post_m, info=info)


def _verdict(pre_m: HloModule | None, post_m: HloModule | None, analysis: Analysis | None) -> str:
    """What XLA did, in one sentence (``analysis``'s verdict: the analysis of both modules, made
    once by the caller), or the module's size when there is only one module to say it of."""
    if analysis is not None:
        return analysis.verdict
    m = post_m if post_m is not None else pre_m
    return "" if m is None else f"{m.name}: {m.instruction_count} instructions"


def _explorer_picture(picture: Picture, cap: Capture, stage: str, pre_m: HloModule | None,
                      post_m: HloModule | None, left: float, *, color_by: str = "kernel",
                      analysis: Analysis | None = None) -> Picture:
    """``picture`` (an SVG) as the explorer page of ``render -o x.html``; its extra pictures
    start only within the ``left`` seconds of the command's Graphviz budget (``color_by``: as
    the picture was coloured, for the explorer's first view)."""

    from ..render.page.explorer import Bounds, module_payload, pair_payload
    from ..render.page.html import picture_page

    lookup = source_lookup(cap.info)
    bounds = Bounds(timeout=max(min(left, Bounds.timeout), 0.05), seconds=max(left, 0.0))
    if stage == "both":
        from ..analysis import analyze
        from ..render.layout.sidebyside import post_marks

        assert pre_m is not None and post_m is not None
        analysis = analysis if analysis is not None else analyze(pre_m, post_m, info=cap.info)
        payload = pair_payload(pre_m, post_m, analysis, picture, lookup=lookup, texts=(cap.pre_text, cap.post_text),
                               post_marks=post_marks(analysis, post_m), bounds=bounds, info=cap.info,
                               color_by=color_by)
    else:
        m = pre_m if stage == "pre" else post_m
        assert m is not None
        marks = None
        if color_by != "kernel" and pre_m is not None and post_m is not None:
            from ..analysis import analyze
            from ..render.layout.sidebyside import post_marks, pre_marks

            analysis = analysis if analysis is not None else analyze(pre_m, post_m, info=cap.info)
            marks = post_marks(analysis, m, color_by) if m is post_m else pre_marks(analysis, m, color_by)
        payload = module_payload(m, stage, picture, text=cap.pre_text if stage == "pre" else cap.post_text,
                                 lookup=lookup, bounds=bounds, info=cap.info, marks=marks)
    page = picture_page(picture.title, picture.svg_text(), picture.notes, payload)
    return replace(picture, format="html", data=page.encode("utf-8"))

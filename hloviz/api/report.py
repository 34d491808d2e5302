"""The composition behind ``hloviz show`` (part of :mod:`hloviz.api`): one folder with the report.

:func:`show` captures (or reads) a target, analyses it and writes ``report.html`` with its
pictures (``pre.svg``, ``post.svg``, ``side-by-side.svg``) as one set, and returns a
:class:`ShowResult` that displays itself in Jupyter as the report. It shares reading the
target and checking the drawing options with ``render`` (:mod:`hloviz.api.pictures`), and is
apart from it because a report is more than a picture: the analysis, the memory section, the
kernels' layers, the explorer and XLA's pass history.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DependencyError, HlovizError, RenderError
from ..ir import HloModule
from .options import CaptureOptions, DrawOptions, chosen
from .pictures import capture_modules, capture_target, check_color_by, source_lookup, view_options

if TYPE_CHECKING:
    from ..analysis import Analysis
    from ..analysis.passes import PassHistory
    from ..analysis.scopes import ScopeTree
    from ..capture import Capture
    from ..render.page.explorer.on_demand import OnDemand
    from ..render.page.explorer.steps import PassSteps
    from ..render.page.html import ReportContent
    from ..render.pictures import Picture

__all__ = ["ShowResult", "show"]


@dataclass
class ShowResult:
    """What ``hloviz show`` made: the files, the analysis, the summary lines it prints.

    Displays itself in Jupyter as the report (``_repr_html_``).
    """

    label: str
    directory: Path
    files: dict[str, Path]
    analysis: Analysis
    summary: list[str]
    notes: list[str] = field(default_factory=list)
    report: ReportContent | None = None
    #: hloviz's own files of an earlier run in ``directory`` that this run removed (say a
    #: ``pre.svg`` the new target has no picture for).
    removed: list[Path] = field(default_factory=list)
    #: XLA's pass history, when the target held one or ``passes=True`` captured it.
    passes: PassHistory | None = None
    #: Draws the explorer's detail pictures when the served report asks (:func:`hloviz.api.serve_report`);
    #: None when ``offline`` drew them into the file, or the report has no explorer.
    on_demand: OnDemand | None = None

    def _repr_html_(self) -> str:
        from ..render.page.html import report_fragment

        return report_fragment(self.report) if self.report is not None else ""


def _safe_label(label: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._") or "module"
    return cleaned[:80]


def _default_folder(target: Any, cap: Any) -> str:
    """``show``'s folder under ``hloviz-out/`` when none is given, one per thing shown: a
    model file's function is ``<file stem>.<function>`` (``show a.py:f`` then ``show b.py:f``
    keep both reports), a capture folder or an HLO file its own name, anything else its label."""
    if isinstance(target, (str, Path)):
        text = str(target)
        path = Path(text)
        if path.exists():
            return _safe_label(path.name if path.is_dir() else path.stem)
        file, _, function = text.rpartition(":")
        if file and function:
            stem = Path(file).stem if file.endswith(".py") else file  # package.module:function as it is
            return _safe_label(f"{stem}.{function}")
    return _safe_label(cap.label)


def show(target: Any = None, out_dir: str | Path | None = None, *, pre: str | Path | None = None,
         post: str | Path | None = None, args: Sequence[str] = (), device: str | None = None,
         module: str | None = None, verbose: bool = False, notify: Callable[[str], None] | None = None,
         progress: Callable[[str], None] | None = None, computation: str | None = None,
         focus: str | None = None, radius: int = 2, expand_chains: bool = False, budget: int | None = None,
         timeout: float = 30.0, scope: str | None = None, depth: int | None = None,
         color_by: str = "kernel", capture: CaptureOptions | None = None,
         drawing: DrawOptions | None = None, passes: bool = False, offline: bool = False) -> ShowResult:
    """Capture (or read) ``target``, analyse it and write ``report.html``, ``pre.svg``,
    ``post.svg`` and ``side-by-side.svg`` to ``out_dir`` (default ``hloviz-out/<file>.<function>/``
    for a model file's function, ``hloviz-out/<name>/`` for a capture folder or HLO file).

    A target that holds XLA's per-pass snapshots (a dump folder or a tar of one) adds the pass
    history to the report; ``passes`` captures a ``model.py:function`` with them (in a private
    temporary folder, removed before the pictures are drawn; :mod:`hloviz.api.pass_show`).

    The capture and drawing settings come as keywords or as ``capture=``/``drawing=`` objects
    (:mod:`hloviz.api.options`), not both.

    The report's explorer opens the first picture's layers, blocks and fusions as pictures of
    their own. By default they are drawn when opened, while :func:`hloviz.api.serve_report`
    serves the report (``show --open``; :attr:`ShowResult.on_demand` draws them): laying out all
    of a real model's made ``show`` many times slower than ``render`` (issue 32). ``offline``
    draws them into the file now, within the ``timeout``, for a page that opens them anywhere."""
    return _show(target, out_dir, notify=notify, progress=progress, passes=passes, offline=offline,
                 capture=chosen("capture", capture, CaptureOptions(pre, post, tuple(args), device, module, verbose)),
                 drawing=chosen("drawing", drawing, DrawOptions(computation, focus, radius, expand_chains, budget,
                                                                timeout, scope, depth, color_by)))


def _show(target: Any, out_dir: str | Path | None, *, notify: Callable[[str], None] | None,
          progress: Callable[[str], None] | None, passes: bool, capture: CaptureOptions,
          drawing: DrawOptions, offline: bool = False) -> ShowResult:
    """:func:`show`'s work, on its settings as the two option objects."""
    pre, post, args, device, module, verbose = (capture.pre, capture.post, capture.args, capture.device,
                                                capture.module, capture.verbose)
    computation, focus, radius, expand_chains = drawing.computation, drawing.focus, drawing.radius, drawing.expand_chains
    budget, timeout, scope, depth, color_by = drawing.budget, drawing.timeout, drawing.scope, drawing.depth, drawing.color_by
    from ..analysis import analyze
    from ..render.page.files import refuse_foreign

    say = progress or (lambda _m: None)
    from ..render.views import default_budget

    # no --budget: the overview of a whole module, as render draws it; the detail opens in the explorer
    whole = computation is None and focus is None and scope is None and depth is None
    options = view_options(computation, focus, radius, expand_chains, default_budget(budget, whole=whole),
                           timeout, scope, depth)
    check_color_by(color_by)
    say("capturing" if isinstance(target, str) and ":" in target else "reading")
    from .pass_show import capture_for_show

    cap, shown = capture_for_show(target, passes=passes, pre=pre, post=post, args=args, device=device,
                                  module=module, verbose=verbose, notify=notify,
                                  otherwise=lambda: capture_target(target, pre=pre, post=post, args=args, device=device,
                                                             module=module, verbose=verbose, notify=notify))
    pre_m, post_m = capture_modules(cap)
    say("analysing")
    analysis = analyze(pre_m, post_m, info=cap.info)
    directory = Path(out_dir) if out_dir is not None else Path("hloviz-out") / _default_folder(target, cap)
    lookup = source_lookup(cap.info)
    names = ["report.html"] + [f"{n}.svg" for n, m in (("side-by-side", pre_m and post_m), ("pre", pre_m),
                                                       ("post", post_m)) if m is not None]
    refuse_foreign(directory, names)  # before the slow part: a user's own report.html is never replaced

    say("drawing (Graphviz)")
    from ..render.reuse import drawings_reused

    # The report's three pictures and the explorer's draw the same two modules over and over:
    # each module's scope tree and tree of units are built once for all of them (issue 32;
    # nothing edits a module meanwhile).
    with drawings_reused():
        return _drawn(target, cap, shown, analysis, pre_m, post_m, directory, lookup, options, timeout,
                      color_by, say, offline)


def _drawn(target: Any, cap: Capture, shown: Any, analysis: Analysis, pre_m: HloModule | None,
           post_m: HloModule | None, directory: Path, lookup: Any, options: Any, timeout: float, color_by: str,
           say: Callable[[str], None], offline: bool = False) -> ShowResult:
    """:func:`_show`'s pictures, report and files, once the target is read and analysed."""
    from ..render.layout.runs.graphviz_run import LayoutBudget
    from ..render.layout.sidebyside import post_marks, pre_marks
    from ..render.page.files import write_report_folder
    from ..render.page.html import report_html
    from ..render.page.report import report_content, summary_lines
    from ..render.pictures import module_picture, pair_picture
    from .pass_show import passes_told

    # One --timeout for all the pictures of the command, shared as they are drawn.
    layout = LayoutBudget(timeout, pictures=(pre_m is not None) + (post_m is not None)
                          + (pre_m is not None and post_m is not None))
    jobs: list[tuple[str, Callable[[], Picture]]] = []
    marked: dict[str, Any] = {}  # each module's marks, for its picture and its explorer
    if pre_m is not None and post_m is not None:
        jobs.append(("side-by-side", lambda: pair_picture(pre_m, post_m, analysis, options=options, timeout=timeout,
                                                          title=f"{cap.label}: {analysis.verdict}",
                                                          color_by=color_by, info=cap.info, budget=layout)))
    pictures: dict[str, Picture] = {}

    def alone(name: str, index: int, draw: Callable[[], Picture]) -> Picture:
        return _alone(pictures.get("side-by-side"), index, f"{cap.label} · {name} optimization", draw,
                      options=options, timeout=timeout, layout=layout)

    if pre_m is not None:
        marks = marked["pre"] = pre_marks(analysis, pre_m, color_by) if post_m is not None else None
        jobs.append(("pre", lambda: alone("before", 0, lambda: module_picture(
            pre_m, options=options, marks=marks, timeout=timeout, title=f"{cap.label} · before optimization",
            info=cap.info, budget=layout))))
    if post_m is not None:
        pmarks = marked["post"] = post_marks(analysis, post_m, color_by)
        jobs.append(("post", lambda: alone("after", 1, lambda: module_picture(
            post_m, options=options, marks=pmarks, timeout=timeout, title=f"{cap.label} · after optimization",
            info=cap.info, budget=layout))))
    missing: HlovizError | None = None
    dots: dict[str, str] = {}
    for name, job in jobs:
        try:
            pictures[name] = job()
        except (DependencyError, RenderError) as err:
            if err.dot_text is None:
                raise
            dots[name] = err.dot_text
            missing = missing or err
    from ..render.page.page import page_picture

    pictures = {name: page_picture(pic, description=analysis.verdict) for name, pic in pictures.items()}
    main = pictures.get("side-by-side") or next(iter(pictures.values()), None)
    notes = list(main.notes) if main is not None else []
    files: dict[str, bytes | str] = {}
    for name, pic in pictures.items():
        files[f"{name}.svg"] = pic.data
    for name, text in dots.items():
        files[f"{name}.dot"] = text
    links = [(n, n) for n in files]
    memory, memory_note = _memory(cap, post_m)
    if memory_note:
        notes.append(memory_note)
    post_tree = _post_tree(post_m, analysis, cap.info)
    layers, layer_texts = _kernel_layers(post_tree)
    content = report_content(cap.label, cap.info, analysis, svg=main.data.decode("utf-8") if main else None,
                             notes=notes, files=links, lookup=lookup,
                             picture_missing=f"no picture: {missing.args[0]}" if missing else None,
                             footer=_footer(cap.info), memory_html=_memory_html(memory), layers=layers,
                             layer_texts=layer_texts)
    payload = None
    if missing is None or not (directory / "report.html").exists():
        # A degraded report (no picture) never replaces an earlier good one.
        from .pass_show import report_section

        steps = report_section(shown, content, left=layout.left(), timeout=timeout, explorer=main is not None, say=say)
        if main is not None:
            say("building the explorer")
            main_name = next(name for name, pic in pictures.items() if pic is main)
            payload = _show_payload(main, main_name, cap, analysis, pre_m, post_m, lookup, layout.left(), steps,
                                    color_by=color_by, marked=marked, ahead=offline, post_tree=post_tree)
        files["report.html"] = report_html(content, payload)
    say("writing")
    # One set: hloviz's own files of an earlier run that this one does not make are removed,
    # unless this run is degraded (then the earlier pictures stay beside the new .dot files).
    folder = write_report_folder(directory, files, remove_stale=missing is None)
    written = {Path(n).stem if n != "report.html" else "report": directory / n for n in files}
    if missing is not None:
        names = ", ".join(str(directory / n) for n in files)
        cls = DependencyError if isinstance(missing, DependencyError) else RenderError
        raise cls(f"{missing.args[0]}; wrote {names} (the .dot files hold the pictures)", hint=missing.hint)
    lines = summary_lines(analysis, lookup, layer_texts=layer_texts)
    if memory is not None:
        from ..units import binary_size

        said = "XLA's buffer assignment" if memory.source == "xla" else "estimated"
        lines.append(f"memory: {binary_size(memory.total_bytes)} ({said}); peak {binary_size(memory.peak.bytes)} at "
                     f"{memory.peak.instruction}")
    history = passes_told(shown, lines, notes)
    return ShowResult(cap.label, directory, written, analysis, lines, notes, content, folder.removed, history,
                      payload.on_demand if payload is not None else None)


def _alone(pair: Picture | None, index: int, title: str, draw: Callable[[], Picture], *, options: Any,
           timeout: float, layout: Any) -> Picture:
    """``pre.svg`` (``index`` 0) or ``post.svg``: the side-by-side ``pair``'s column laid out alone
    where there is one (the module is not drawn a second time), else ``draw()``: the module drawn
    alone (no pair; a focus or computation, which the pair's columns may each read their own way;
    a pair drawn coarser after a Graphviz timeout, whose own picture retries the same way; no
    layout of the column in time)."""
    from ..render.pictures import column_picture

    drawn_with = pair.views[index][1].options if pair is not None and index < len(pair.views) else None
    if pair is None or options.focus is not None or options.computation is not None \
            or (drawn_with is not None and drawn_with.coarse):
        return draw()
    try:
        column = column_picture(pair, index, title=title, timeout=timeout, budget=layout)
    except RenderError:
        column = None
    return column if column is not None else draw()


def _post_tree(post_m: HloModule | None, analysis: Analysis, info: dict) -> ScopeTree | None:
    """The optimized module's scope tree with its kernels, its layers named as the capture
    names them: built once for the report's table, its summary and the explorer."""
    if post_m is None or analysis.kernels is None:
        return None
    from ..analysis.scopes import build_scope_tree

    return build_scope_tree(post_m, stage="post", kernel_report=analysis.kernels, layers=info.get("layer_scopes"))


def _kernel_layers(tree: ScopeTree | None):
    """Each kernel's layers (the report's table) and its layer as one line (the summary), by the
    one rule every view follows (:meth:`hloviz.analysis.scopes.ScopeTree.layers_of`)."""
    if tree is None:
        return None, None
    from ..render.page.report import kernel_layer_texts, kernel_layers

    return kernel_layers(tree), kernel_layer_texts(tree)


def _memory(cap: Capture, post_m: HloModule | None):
    """The memory report of the optimized module for the report, or why there is none (a note)."""
    if post_m is None:
        return None, None
    from .memory import memory_of

    try:
        return memory_of(cap), None
    except HlovizError as err:  # a damaged buffer-assignment file: the rest of the report stands
        return None, f"no memory section: {err.args[0] if err.args else err}"


def _memory_html(memory) -> str:
    if memory is None:
        return ""
    from ..render.page.memory import memory_section

    return memory_section(memory)


def _show_payload(main: Picture, name: str, cap: Capture, analysis: Analysis, pre_m: HloModule | None,
                  post_m: HloModule | None, lookup, left: float, steps: PassSteps | None = None, *,
                  color_by: str = "kernel", marked: Mapping[str, Any] | None = None, ahead: bool = True,
                  post_tree: ScopeTree | None = None):
    """The explorer of the report's picture: ``name`` is ``side-by-side``, ``pre`` or ``post``,
    its every view coloured as the report's pictures are (``color_by``; ``marked``: the marks
    each module's picture was drawn with, by ``pre``/``post``).

    ``left``: the seconds of the command's one Graphviz budget (``--timeout``) the main pictures
    left; the explorer's extra pictures start only within it (a longer ``--timeout`` draws more
    of them: no other time limit applies)."""
    from ..render.page.explorer import Bounds, module_payload, pair_payload

    bounds = Bounds(timeout=max(min(left, Bounds.timeout), 0.05), seconds=max(left, 0.0))
    if name == "side-by-side":
        assert pre_m is not None and post_m is not None
        return pair_payload(pre_m, post_m, analysis, main, lookup=lookup, texts=(cap.pre_text, cap.post_text),
                            post_marks=(marked or {}).get("post"), bounds=bounds, steps=steps,
                            info=cap.info, color_by=color_by, ahead=ahead, post_tree=post_tree)
    m = pre_m if name == "pre" else post_m
    assert m is not None
    marks = (marked or {}).get(name)
    return module_payload(m, name, main, text=cap.pre_text if name == "pre" else cap.post_text, lookup=lookup,
                          bounds=bounds, steps=steps, info=cap.info, marks=marks, ahead=ahead)


def _footer(info: dict) -> str:
    from .. import __version__

    parts = [f"made by hloviz {__version__}"]
    if info.get("tensorflow"):
        parts.append(f"TensorFlow {info['tensorflow']}")
    if info.get("jax"):
        parts.append(f"JAX {info['jax']}")
    return " · ".join(parts)

"""The composition behind ``hloviz diff`` (part of :mod:`hloviz.api`).

Either side is anything :func:`hloviz.capture.load_target` accepts — a saved capture folder, an
XLA dump folder, a ``model.py:fn`` target, an HLO file — or, from Python, an
:class:`~hloviz.ir.HloModule` or a :class:`~hloviz.capture.Capture`. A plain HLO file is diffed
as it is, whatever its stage; from captures the ``stage`` module is taken (``post`` by default).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..ir import HloModule
from .sides import DiffSide

if TYPE_CHECKING:
    from ..analysis.diff import ModuleDiff
    from ..analysis.diff.picture import PictureMark
    from ..analysis.diff.scopes import ScopeDiffRow
    from ..analysis.memory.compare import MemoryChange
    from ..ir import Instruction
    from ..render.pictures import Picture
    from ..render.views import Mark, View

__all__ = ["DiffResult", "DiffSide", "diff", "diff_picture", "load_side"]

DIFF_STAGES = ("post", "pre")
_VERSION_KEYS = (("tensorflow", "TF"), ("jax", "JAX"))


@dataclass(frozen=True)
class DiffResult:
    """A diff with the two sides it compares; renders itself as text, markdown or JSON."""

    diff: ModuleDiff
    before: DiffSide
    after: DiffSide
    stage: str
    _memory: list = field(default_factory=list, repr=False, compare=False)

    def memory(self) -> MemoryChange | None:
        """Memory before → after (optimized modules only; XLA's records where the sides have them),
        computed once; None for pre-optimization diffs."""
        if self.stage != "post":
            return None
        cached = self._memory
        if not cached:
            from ..analysis.memory.compare import compare_memory

            cached.append(compare_memory(_side_memory(self.before), _side_memory(self.after)))
        return cached[0]

    def by_scope(self, depth: int | None = None) -> list[ScopeDiffRow]:
        """What changed in each layer (``diff --by scope``), down to ``depth`` counted from the
        model (every level when None): :func:`hloviz.analysis.diff.scopes.scope_diff`."""
        from ..analysis.diff.scopes import scope_diff

        return scope_diff(self.diff, self.before.module, self.after.module, depth=depth)

    def to_text(self, *, limit: int = 40, scopes: Sequence[ScopeDiffRow] | None = None,
                scope_details: Sequence[ScopeDiffRow] | None = None) -> str:
        """The terminal report; with ``scopes`` (:meth:`by_scope`), the per-scope table instead
        of the kernel and instruction details; ``scope_details`` (:meth:`by_scope` at every
        level) places each changed kernel at its innermost scope below the table's depth."""
        from ..analysis.diff.report import to_text

        if scopes is None:
            text = to_text(self.diff, self.before.label, self.after.label, limit=limit)
        else:
            from ..analysis.diff.scope_report import scope_text

            text = to_text(self.diff, self.before.label, self.after.label, limit=limit, details=False) + \
                scope_text(scopes, limit=limit, details=scope_details)
        change = self.memory()
        return text + ("\n".join(change.lines(min(limit, 10))) + "\n" if change is not None else "")

    def to_markdown(self, *, limit: int = 40, scopes: Sequence[ScopeDiffRow] | None = None,
                    scope_details: Sequence[ScopeDiffRow] | None = None) -> str:
        """A PR comment; with ``scopes``, the per-scope table instead of the details (and
        ``scope_details`` as :meth:`to_text`)."""
        from ..analysis.diff.report import to_markdown

        if scopes is None:
            text = to_markdown(self.diff, self.before.label, self.after.label, limit=limit)
        else:
            from ..analysis.diff.scope_report import scope_markdown

            text = to_markdown(self.diff, self.before.label, self.after.label, limit=limit, details=False) + \
                scope_markdown(scopes, limit=limit, details=scope_details)
        change = self.memory()
        if change is None:
            return text
        lines = change.lines(min(limit, 10))
        return text + "\n### Memory\n\n" + "\n".join(f"- {line.strip()}" for line in lines) + "\n"

    def to_dict(self, *, limit: int = 0, scopes: Sequence[ScopeDiffRow] | None = None) -> dict[str, Any]:
        """JSON-ready data; with ``scopes``, a ``scopes`` list too (:meth:`ScopeDiffRow.to_dict`)."""
        from ..analysis.diff.report import to_json

        data = to_json(self.diff, self.before.label, self.after.label, limit=limit)
        if scopes is not None:
            data["scopes"] = [r.to_dict() for r in scopes]
        data["stage"] = self.stage
        change = self.memory()
        data["memory"] = change.to_dict() if change is not None else None
        for key, side in (("before", self.before), ("after", self.after)):
            data[key].update({k: side.info[k] for k in ("source", "framework", "tensorflow", "jax", "device",
                                                        "platform", "function") if side.info.get(k) is not None})
        return data

    def failed(self, checks: Sequence[str]) -> list[str]:
        """The ``--fail-on`` checks this diff fails (see :mod:`hloviz.analysis.diff.checks`)."""
        from ..analysis.diff.checks import failed_checks

        return failed_checks(self.diff, list(checks))

    def picture(self, fmt: str = "svg", *, budget: int | None = None, timeout: float | None = None,
                scopes: Sequence[ScopeDiffRow] | None = None) -> Picture:
        """Both modules side by side: matched kernels share a number (and, unchanged, a colour);
        changed is amber, added green, removed red. Drawn by the code and rules of ``show``;
        without ``budget``, the overview of both modules (one box per block, as ``render``).
        An HTML page also shows ``scopes`` (:meth:`by_scope`) as a table under the picture."""
        return diff_picture(self, fmt, budget=budget, timeout=timeout, scopes=scopes)

    def save_picture(self, output: str | Path, *, budget: int | None = None, timeout: float | None = None,
                     scopes: Sequence[ScopeDiffRow] | None = None) -> Picture:
        """Draw :meth:`picture` in the format ``output``'s suffix names and write it there.

        As for ``render -o``: when Graphviz is missing or fails, the DOT text is written beside
        it (``output`` with the suffix ``.dot``, replacing only a file hloviz wrote) and the error
        says so; nothing is written at ``output``."""
        from ..errors import DependencyError, RenderError
        from ..render.pictures import format_for
        from .pictures import with_dot_written

        output = Path(output)
        try:
            picture = self.picture(format_for(output), budget=budget, timeout=timeout, scopes=scopes)
        except (DependencyError, RenderError) as err:
            raise with_dot_written(err, output.with_suffix(".dot")) from None
        picture.save(output)
        return picture

    def _repr_markdown_(self) -> str:  # Jupyter
        return self.to_markdown()


def _side_memory(side: DiffSide):
    """A side's memory report: XLA's record when its capture has one, else the estimate."""
    from ..analysis.memory import memory_report

    if side.capture is not None:
        from .memory import memory_of

        return memory_of(side.capture)
    return memory_report(side.module)


def _label(given: str, info: dict) -> str:
    for key, short in _VERSION_KEYS:
        if info.get(key):
            return f"{given} ({short} {info[key]})"
    return given


def load_side(target: Any, stage: str = "post", *, args: Sequence[str] = (), device: str | None = None,
              module: str | None = None, notify: Callable[[str], None] | None = None) -> DiffSide:
    """The module of ``target`` to diff: a plain HLO file as it is, else its ``stage`` module."""
    if stage not in DIFF_STAGES:
        raise InputError(f"--stage must be 'post' or 'pre', not '{stage}'")
    if isinstance(target, HloModule):
        return DiffSide(target, target.name)
    from ..capture import Capture, load_target

    if isinstance(target, Capture):
        cap, given = target, target.label
    else:
        given = str(target)
        path = Path(given)
        if path.is_file() and path.suffix != ".py":
            from ..parser import parse_file  # one HLO file: the user means this module, whatever its stage

            return DiffSide(parse_file(path), given, {"source": "hlo_file", "file": given})
        cap = load_target(given, args=tuple(args), device=device, module=module, notify=notify)
    parsed = cap.module(stage)
    if parsed is None:
        other = "pre" if stage == "post" else "post"
        raise InputError(f"{given} has no {stage}-optimization module to diff",
                         hint=f"use --stage {other}, or capture it again with both stages")
    return DiffSide(parsed, _label(given, cap.info), dict(cap.info), cap if stage == "post" else None)


def diff(a: Any, b: Any, *, stage: str = "post", args: Sequence[str] = (), device: str | None = None,
         module: str | None = None, notify: Callable[[str], None] | None = None) -> DiffResult:
    """Diff ``a`` (before) against ``b`` (after); see the module docstring for what they may be."""
    from ..analysis.diff import diff_modules

    steps: tuple[DiffSide | None, DiffSide | None] = (None, None)
    if any(isinstance(x, str) and "@" in x for x in (a, b)):  # TARGET@PASS: a pass history's snapshot
        from .passes import step_sides  # (hloviz passes; its imports are for those sides only)

        steps = step_sides(a, b, args=args, device=device, module=module, notify=notify)
    before = steps[0] or load_side(a, stage, args=args, device=device, module=module, notify=notify)
    after = steps[1] or load_side(b, stage, args=args, device=device, module=module, notify=notify)
    return DiffResult(diff_modules(before.module, after.module), before, after, stage)


# -- the diff picture ------------------------------------------------------------------------

#: Changed, added and removed: (fill, border). Amber, green and red, as in code review tools.
DIFF_COLOURS = {"changed": ("#ffd54f", "#ff8f00"), "added": ("#a5d6a7", "#2e7d32"),
                "removed": ("#ef9a9a", "#c62828")}


def _pair_colours() -> tuple[str, ...]:
    """The kernel palette of ``show`` without its amber, green and red-ish entries, which here
    would read as changed, added or removed."""
    from ..render.style import KERNEL_PALETTE

    def hue_ok(c: str) -> bool:
        r, g, b = (int(c[i:i + 2], 16) for i in (1, 3, 5))
        return b >= max(r, g) - 40  # blues, purples, pinks, cyans: the ones with enough blue

    return tuple(c for c in KERNEL_PALETTE if hue_ok(c)) or KERNEL_PALETTE


def _render_mark(m: PictureMark, colours: tuple[str, ...]) -> Mark:
    from ..analysis.diff import Status
    from ..render.quoting import shorten
    from ..render.views import Mark

    badge = f"#{m.number}" if m.number else None
    if m.status is Status.UNCHANGED:
        fill = colours[(m.number - 1) % len(colours)] if m.number else None
        return Mark(fill=fill, font="#000000", badge=badge)
    fill, border = DIFF_COLOURS[m.status.value]
    if badge is None and m.kernel:
        badge = "new" if m.status is Status.ADDED else ("gone" if m.status is Status.REMOVED else None)
    return Mark(fill=fill, border=border, font="#000000", badge=badge, note=shorten(m.note, 48) if m.note else None,
                highlight=m.kernel)


def _anchor(view: View, inst: Instruction) -> str | None:
    """The node standing for a kernel: its own, or for a fusion drawn as a cluster its root's."""
    key = view.node_of.get(inst.name)
    if key is None and inst.opcode == "fusion" and inst.called_computations:
        root = inst.called_computations[0].root
        key = view.node_of.get(root.name) if root is not None else None
    return key


def diff_picture(result: DiffResult, fmt: str = "svg", *, budget: int | None = None,
                 timeout: float | None = None, scopes: Sequence[ScopeDiffRow] | None = None) -> Picture:
    """The picture of a diff in ``fmt`` (svg, png, dot, html or json); see :meth:`DiffResult.picture`.

    Each column is drawn by :func:`hloviz.render.views.draw_module` with ``budget`` nodes (layers,
    blocks, repeats, fusions and bodies stay closed above it, and the picture says so); without one,
    the overview's (:func:`~hloviz.render.views.default_budget`: a page a user reads at a glance,
    issue 33). A Graphviz timeout falls back to a coarser view, exactly as for ``show`` and
    ``render``; where ``dot`` fails on the levels that line matched kernels up across the columns
    (its ``Unable to reclaim box space`` and ``lost edge`` bugs), the columns are laid out apart.
    """
    from ..analysis.diff.picture import picture_marks
    from ..analysis.diff.report import summary_lines
    from ..render.layout.dot import Drawing, columns_drawing
    from ..render.layout.runs.graphviz_run import DEFAULT_TIMEOUT
    from ..render.layout.wrap import OFF, parse_wrap
    from ..render.pictures import build_picture
    from ..render.views import OVERVIEW_BUDGET, ViewOptions, default_budget, draw_module
    from .fit import fitted

    colours = _pair_colours()
    marks_a, marks_b = picture_marks(result.diff)
    render_a = {name: _render_mark(m, colours) for name, m in marks_a.items()}
    render_b = {name: _render_mark(m, colours) for name, m in marks_b.items()}
    title = f"{result.before.label} → {result.after.label}"
    facts = [f"{label}: {text}" for label, text in summary_lines(result.diff)[:3]] + list(result.diff.warnings)
    legend = "matched kernels share a number (#n){}; amber changed, green added, red removed"
    heads = (f"before: {result.before.label}", f"after: {result.after.label}")

    def build(opts: ViewOptions, extra) -> tuple[Drawing, list[tuple[str, View]]]:
        va = draw_module(result.before.module, marks=render_a, options=opts, title=result.before.module.name)
        vb = draw_module(result.after.module, marks=render_b, options=opts, title=result.after.module.name)
        anchors = [(_anchor(va, k.before), _anchor(vb, k.after)) for k in result.diff.summary.kernel_diffs
                   if k.before is not None and k.after is not None]
        # matched kernels on one level (one layout for both columns: where dot fails on it, or
        # the overview's shape asks for a wrap, the columns are laid out apart; _layout)
        align = [(a, b) for a, b in anchors if a is not None and b is not None]
        drawing = columns_drawing([(heads[0], va.scene), (heads[1], vb.scene)], title=title,
                                  notes=[*extra, *facts, legend.format(" and, where Graphviz can, a level" if align else "")], align=align)
        return drawing, [(heads[0], va), (heads[1], vb)]

    asked = budget
    budget = default_budget(budget, whole=True)
    if budget < 1:
        raise InputError(f"--budget must be at least 1 node, not {budget}")
    overview = budget <= OVERVIEW_BUDGET and fmt != "html"  # the explorer pans and zooms one long picture
    picture = fitted(lambda opts: build_picture(build, opts, "svg" if fmt == "html" else fmt, timeout or DEFAULT_TIMEOUT,
                                                title, wrap=parse_wrap("auto") if overview else OFF),
                     ViewOptions(budget=budget), fit=asked is None and fmt == "svg")
    if fmt != "html":
        return picture
    from dataclasses import replace

    from ..render.page.explorer import diff_payload
    from ..render.page.html import picture_page

    pairs = [(k.before, k.after, k.status.value) for k in result.diff.summary.kernel_diffs
             if k.before is not None and k.after is not None]
    payload = diff_payload((result.before.label, result.before.module), (result.after.label, result.after.module),
                           picture, pairs, marks=(render_a, render_b))
    sections = []
    if scopes is not None:
        from ..render.page.html import scope_diff_table

        sections.append(scope_diff_table(scopes))
    page = picture_page(title, picture.svg_text(), picture.notes, payload, sections=sections)
    return replace(picture, format="html", data=page.encode("utf-8"))

"""Pre- and post-optimization side by side, with the analysis drawn onto both.

Each kernel of the optimized module gets a number and a colour (in execution order, the order
:func:`hloviz.analysis.kernels` reports them). The pre-optimization ops whose work went into a
kernel carry the same number and colour; ops folded into a constant say so
("folded → constant.9 = 10") and the constant is highlighted in the post column; ops that left
no trace are greyed out. The link is the op name (``metadata.op_name``), as in
:func:`hloviz.analysis.pre_to_post`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ...analysis.glossary import FOLDED_BY
from ...ir import HloModule
from ..beside import wanted as beside_wanted
from ..cut.labels import kernel_badge
from ..quoting import shorten
from ..reuse import kept, kept_beside
from ..scene import Scene
from ..style import ELIMINATED, FOLDED, HIGHLIGHT, heat_colour, kernel_colour
from ..views import Mark, View, ViewOptions, draw_module
from .dot import Drawing, columns_drawing

if TYPE_CHECKING:
    from ...analysis import Analysis

__all__ = ["COLOR_BY", "Heat", "SideBySide", "heat", "kernel_numbers", "post_marks", "pre_marks", "side_by_side"]


def kernel_numbers(analysis: Analysis) -> dict[str, int]:
    """Kernel instruction name → its number (1-based, execution order)."""
    report = analysis.kernels
    return {k.name: n for n, k in enumerate(report.kernels, 1)} if report is not None else {}


#: What ``--color-by`` may colour kernels by: their number, or a heat scale of their FLOPs or bytes.
COLOR_BY = ("kernel", "flops", "bytes")


@dataclass(frozen=True)
class Heat:
    """A heat overlay: each kernel's value (FLOPs, or bytes read + written, from the kernel
    table) on a log scale from white (0) to red (the module's largest)."""

    by: str
    values: dict[int, int]

    @property
    def top(self) -> int:
        return max(self.values.values(), default=0)

    def colour(self, number: int) -> str:
        return heat_colour(self.values.get(number, 0), self.top)

    def legend(self) -> str:
        unit = "FLOPs" if self.by == "flops" else "bytes read + written"
        return f"colour: {unit} per kernel, white 0 → red {_amount(self.top, self.by)} (log scale)"

    def amount(self, number: int) -> str:
        return _amount(self.values.get(number, 0), self.by)


def _amount(n: int, by: str) -> str:
    unit = "FLOP" if by == "flops" else "B"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= scale:
            return f"{n / scale:.3g} {prefix}{unit}"
    return f"{n} {unit}"


def heat(analysis: Analysis, by: str) -> Heat | None:
    """The heat overlay ``by`` asks for (None for ``kernel``: the kernel palette)."""
    if by not in COLOR_BY:
        from ...errors import InputError

        raise InputError(f"--color-by must be one of {', '.join(COLOR_BY)}, not {by!r}")
    report = analysis.kernels
    if by == "kernel" or report is None:
        return None
    values = {n: (k.flops if by == "flops" else k.bytes_read + k.bytes_written)
              for n, k in enumerate(report.kernels, 1)}
    return Heat(by, values)


def _kernel_mark(numbers: list[int], hot: Heat | None = None) -> Mark:
    numbers = sorted(set(numbers))
    if hot is not None:
        main = max(numbers, key=lambda n: hot.values.get(n, 0))
        return Mark(fill=hot.colour(main), badge=kernel_badge(numbers), kernels=tuple(numbers),
                    heat=hot.values.get(main, 0))
    return Mark(fill=kernel_colour(numbers[0]), badge=kernel_badge(numbers), kernels=tuple(numbers))


def _fold_note(constant: str, value: str) -> str:
    return f"folded → {constant} = {shorten(value, 28)}"


def post_marks(analysis: Analysis, post: HloModule, color_by: str = "kernel") -> dict[str, Mark]:
    """Kernel colours (or heat, ``color_by`` ``flops``/``bytes``) and numbers on the optimized
    module; folded constants highlighted. (Inside :func:`~hloviz.render.reuse.drawings_reused`,
    one dict for every caller: read it, do not change it.)"""
    return kept(("post_marks", id(analysis), id(post), color_by), (analysis, post),
                lambda: _post_marks(analysis, post, color_by))


def _post_marks(analysis: Analysis, post: HloModule, color_by: str) -> dict[str, Mark]:
    hot = heat(analysis, color_by)
    marks = {}
    for name, n in kernel_numbers(analysis).items():
        mark = _kernel_mark([n], hot)
        if hot is not None:
            mark = replace(mark, note=hot.amount(n))
        marks[name] = mark
    folding = analysis.folding
    if folding is not None:
        for f in folding.folded:
            comp = post.get_computation(f.computation)
            if comp is None or comp.get(f.constant) is None:
                continue
            n = len(f.from_ops)
            what = f"from {n} op{'s' if n != 1 else ''}" if n else "(part of an op's work)"
            marks[f.constant] = Mark(fill=HIGHLIGHT, border=FOLDED.border, highlight=True,
                                     note=f"folded {FOLDED_BY.get(f.by, f.by)} {what}")
    return marks


def pre_marks(analysis: Analysis, pre: HloModule, color_by: str = "kernel") -> dict[str, Mark]:
    """Each pre-optimization instruction marked by what became of its op (kernels coloured as
    :func:`post_marks` colours them; kept as :func:`post_marks` is)."""
    return kept(("pre_marks", id(analysis), id(pre), color_by), (analysis, pre),
                lambda: _pre_marks(analysis, pre, color_by))


def _pre_marks(analysis: Analysis, pre: HloModule, color_by: str) -> dict[str, Mark]:
    hot = heat(analysis, color_by)
    numbers = kernel_numbers(analysis)
    folding, mapping = analysis.folding, analysis.mapping
    values: dict[str, str] = {}
    folded_inst: dict[str, Mark] = {}
    if folding is not None:
        for f in folding.folded:
            values.setdefault(f.constant, f.value)
            note = _fold_note(f.constant, f.value)
            # (TensorFlow's folds are constants of the pre-optimization module: every user reads them)
            into = frozenset(f.into) if f.by == "xla" and f.into else None
            for name in f.from_instructions:
                folded_inst.setdefault(name, _folded_mark(note, into))
    by_op = {m.op_name: m for m in mapping.ops} if mapping is not None else {}
    marks: dict[str, Mark] = {}
    cache: dict[str, Mark | None] = {}
    for inst in pre.instructions():
        mark = folded_inst.get(inst.name)
        if mark is None:
            op = inst.metadata.op_name
            if op not in cache:
                cache[op] = _op_mark(by_op.get(op), numbers, values, hot)
            mark = cache[op]
        if mark is not None:
            marks[inst.name] = mark
    return marks


def _folded_mark(note: str, into: frozenset[str] | None = None) -> Mark:
    return Mark(fill=FOLDED.fill, border=FOLDED.border, dashed=True, note=note, into=into)


def _op_mark(m, numbers: dict[str, int], values: dict[str, str], hot: Heat | None = None) -> Mark | None:
    if m is None:
        return None
    if m.status == "kernels":
        ns = [numbers[k] for k in m.kernels if k in numbers]
        return _kernel_mark(ns, hot) if ns else None
    if m.status == "folded":
        if m.constants:
            c = m.constants[0]
            return _folded_mark(_fold_note(c, values.get(c, "?")))
        return _folded_mark("folded")
    if m.status == "no_work":  # a literal, an argument, plumbing: drawn as it is
        return None
    return Mark(fill=ELIMINATED.fill, border=ELIMINATED.border, font=ELIMINATED.font, dashed=True,
                note="eliminated")


@dataclass
class SideBySide:
    """The two drawn columns and the DOT text of the picture holding both."""

    pre: View
    post: View
    dot: str
    #: the same picture with its columns kept apart, to lay them out separately
    drawing: Drawing | None = field(default=None, repr=False)

    @property
    def notes(self) -> list[str]:
        return [f"before: {n}" for n in self.pre.notes] + [f"after: {n}" for n in self.post.notes]


def side_by_side(pre: HloModule, post: HloModule, analysis: Analysis, *, options: ViewOptions = ViewOptions(),
                 title: str = "", notes: tuple[str, ...] = (), color_by: str = "kernel",
                 info: dict | None = None) -> SideBySide:
    """Draw ``pre`` and ``post`` as two columns with kernel numbers and folds (each column gets
    the full node budget of ``options``); ``color_by`` ``flops``/``bytes`` colours kernels by
    a heat scale of the kernel table's numbers instead of one colour per kernel. ``info`` (a
    capture's) names parameters and gives tooltips the user's lines. Inside
    :func:`hloviz.render.beside.columns_beside` the post column may be drawn in a forked copy
    meanwhile (the same view; its cut drawn here only when read)."""
    hot = heat(analysis, color_by)
    if hot is not None:
        notes = tuple(notes) + (hot.legend(),)
    pre_opts, post_opts = _for(pre, options), _for(post, options)
    if options.focus:
        pre_opts, post_opts = _focus_both(pre, post, analysis, options)

    def draw_pre() -> View:
        return draw_module(pre, marks=pre_marks(analysis, pre, color_by), options=pre_opts, title=pre.name, info=info)

    def draw_post(opts: ViewOptions) -> View:
        return draw_module(post, marks=post_marks(analysis, post, color_by), options=opts, title=post.name, info=info)

    if beside_wanted():  # the post column in a forked copy meanwhile, where one can be made
        with kept_beside(("post column", id(post), id(analysis)), (post, analysis), (color_by, info),
                         lambda opts: _sent(draw_post(opts))) as other:
            if other.forked:
                other.ask(post_opts)
                pre_view = draw_pre()
                scene, post_notes, count, levels = other.answer()
                return _drawn(pre_view, View(scene, post_notes, None, count, levels, options=post_opts,
                                             drawn_here=lambda: draw_post(post_opts)), title=title, notes=notes)
    pre_view = draw_pre()
    return _drawn(pre_view, draw_post(post_opts), title=title, notes=notes)


def _drawn(pre_view: View, post_view: View, *, title: str, notes: tuple[str, ...]) -> SideBySide:
    drawing = columns_drawing([("before optimization", pre_view.scene), ("after optimization", post_view.scene)],
                              title=title, notes=notes)
    return SideBySide(pre_view, post_view, drawing.text, drawing)


def _sent(view: View) -> tuple[Scene, list[str], int, tuple[str, ...]]:
    """What a forked copy sends back of the column it drew: the plain part of its view."""
    return view.scene, view.notes, view.instructions, view.levels


def _for(module: HloModule, options: ViewOptions) -> ViewOptions:
    """``--computation`` / ``--focus`` name things in one module; the other column ignores them
    when it has no such computation or instruction."""
    from dataclasses import replace

    comp = options.computation
    if comp is not None and module.get_computation(comp) is None:
        options = replace(options, computation=None)
    return options


def _focused(module: HloModule, options: ViewOptions) -> list[str] | None:
    """The instructions ``options.focus`` names in ``module`` (None when it names nothing there)."""
    from ...errors import InputError
    from ..views import focus_targets

    try:
        return focus_targets(module, options)
    except InputError:
        return None


def _focus_both(pre: HloModule, post: HloModule, analysis: Analysis,
                options: ViewOptions) -> tuple[ViewOptions, ViewOptions]:
    """``--focus`` on both columns: each column draws what the name means there, and a name
    only one side knows (an instruction name) is carried across — the kernels of the focused
    ops, or the pre-optimization ops of the focused kernels."""
    from dataclasses import replace

    pre_opts, post_opts = _for(pre, options), _for(post, options)
    pre_names, post_names = _focused(pre, pre_opts), _focused(post, post_opts)
    if pre_names is None and post_names is None:
        from ..views import focus_targets

        focus_targets(post, post_opts)  # raises the error with the closest names
    if post_names is None and pre_names is not None:
        post_names = _kernels_of_ops(pre, post, analysis, pre_names)
    if pre_names is None and post_names is not None:
        pre_names = _ops_of_kernels(pre, post, analysis, post_names)
    return (replace(pre_opts, focus_names=tuple(pre_names or ())),
            replace(post_opts, focus_names=tuple(post_names or ())))


def _kernels_of_ops(pre: HloModule, post: HloModule, analysis: Analysis, names: list[str]) -> list[str]:
    mapping = analysis.mapping
    wanted = set(names)
    ops = {i.metadata.op_name for i in pre.instructions() if i.name in wanted and i.metadata.op_name}
    out: list[str] = []
    for op in sorted(ops):
        m = mapping.get(op) if mapping is not None else None
        if m is not None:
            out.extend(k for k in m.kernels if k not in out)
    return out


def _ops_of_kernels(pre: HloModule, post: HloModule, analysis: Analysis, names: list[str]) -> list[str]:
    report = analysis.kernels
    wanted = set(names)
    ops: set[str] = set()
    for k in report.kernels if report is not None else ():
        if k.name in wanted:
            ops.update(k.op_names)
    for i in post.instructions():
        if i.name in wanted and i.metadata.op_name:
            ops.add(i.metadata.op_name)
    return [i.name for i in pre.instructions() if i.metadata.op_name in ops]

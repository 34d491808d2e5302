"""The filmstrip of a pass history (``hloviz passes TARGET -o passes.html``).

One self-contained HTML page: a strip of the snapshots that changed the module (index, pass,
instructions and fusions after it) linking to each one's picture, drawn by the rules and node
budget of ``hloviz show`` (layers, blocks, repeats, fusions and bodies stay closed above the budget, and the picture
says so). In each step's picture the fusions the pass made and the constants it wrote carry a
row naming it; in the optimized module's picture every fusion and folded constant names the
pass that made it — the page needs no script (the report's CSP forbids them), so the answer sits
in the picture itself and in the credit table under it.

Pictures are bounded: at most ``pictures`` steps are drawn (the ones that changed the most, and
always the optimized module), all sharing one Graphviz time budget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ..analysis.passes import PassHistory
from ..errors import HlovizError
from ..ir import HloModule

__all__ = ["filmstrip_html"]

_CSS = """
nav.film { display: flex; gap: .4rem; overflow-x: auto; padding: .4rem 0; }
nav.film a { flex: 0 0 auto; border: 1px solid #bbb; border-radius: 4px; padding: .3rem .5rem; font-size: .8rem;
  text-decoration: none; color: inherit; background: #fafafa; }
nav.film a.drawn { background: #e3f2fd; }
nav.film b { display: block; }
section.step { border-top: 1px solid #ddd; margin-top: 1.2rem; }
section.step svg { max-width: 100%; height: auto; }
"""


def _final_marks(history: PassHistory) -> dict:
    from ..render.views import Mark

    marks = {}
    for f in history.fusions:
        note = f"made by {f.step.pass_name} (#{f.step.index})" if f.step else "made by: unknown"
        marks[f.name] = Mark(note=note)
    for c in history.folded:
        if c.step is not None:
            marks[c.constant] = Mark(highlight=True, note=f"written by {c.step.pass_name} (#{c.step.index})")
    return marks


def _picture(path: Path, title: str, marks: Mapping | Callable[[HloModule], Mapping], budget: int, layout) -> str:
    from ..capture.saved import read_text
    from ..parser import parse
    from ..render.page.html import inline_svg
    from ..render.pictures import module_picture
    from ..render.quoting import html_text as esc
    from ..render.views import ViewOptions

    try:
        module = parse(read_text(path), filename=str(path))
        shown = marks(module) if callable(marks) else marks
        pic = module_picture(module, fmt="svg", options=ViewOptions(budget=budget), marks=shown, title=title,
                             timeout=layout.seconds, budget=layout)
        return inline_svg(pic.svg_text())
    except HlovizError as err:
        return f"<p class=\"notes\">no picture: {esc(str(err).splitlines()[0])}</p>"
    finally:
        layout.done()


def filmstrip_html(history: PassHistory, files: Mapping[int, Path], final: Path | None, *, title: str,
                   pictures: int = 12, budget: int = 120, timeout: float = 60.0) -> str:
    """The page (see the module docstring); ``files`` maps snapshot index → its file."""
    from ..analysis.passes.report import describe_changes
    from ..render.layout.runs.graphviz_run import LayoutBudget
    from ..render.page.explorer.steps import step_marks, steps_to_draw
    from ..render.page.html import page
    from ..render.quoting import html_text as esc

    chosen = steps_to_draw(history, pictures)
    drawn = {s.step.index for s in chosen}
    layout = LayoutBudget(timeout, len(chosen) + (final is not None))
    cards = []
    for s in history.steps:
        if not (s.changed or s.problem):
            continue
        cls = ' class="drawn"' if s.step.index in drawn else ""
        cards.append(f'<a href="#s{s.step.index}"{cls}><b>#{s.step.index} {esc(s.step.pass_name)}</b>'
                     f'{esc(str(s.instructions))} instr · {esc(str(s.fusions))} fusions</a>')
    body = [f"<style>{_CSS}</style>", f"<h1>{esc(title)}</h1>",
            (f"<p>{len(history.steps)} snapshots, {len(history.changed_steps)} changed the module; "
             f"{len(drawn)} drawn (the biggest changes; blue), at most {budget} nodes each.</p>"),
            '<nav class="film">' + "".join(cards) + '<a href="#final"><b>optimized</b>module</a></nav>']
    for p in history.problems:
        body.append(f'<p class="notes">incomplete: {esc(p)}</p>')
    for s in history.steps:
        if not (s.changed or s.problem):
            continue
        what = f"unreadable: {s.problem}" if s.problem else describe_changes(s.changes) if s.changes else ""
        body.append(f'<section class="step" id="s{s.step.index}"><h2>#{s.step.index} {esc(s.step.label)}</h2>'
                    f"<p>{esc(str(s.instructions))} instructions, {esc(str(s.fusions))} fusions: {esc(what)}</p>")
        path = files.get(s.step.index)
        if s.step.index in drawn and path is not None:
            body.append(_picture(path, f"after #{s.step.index} {s.step.label}",
                                 lambda m, s=s: step_marks(m, s), budget, layout))
        body.append("</section>")
    body.append('<section class="step" id="final"><h2>The optimized module</h2>')
    rows = "".join(f"<tr><td><code>{esc(f.name)}</code></td><td>{esc(f.kind)}</td><td>"
                   + (f"#{f.step.index} {esc(f.step.label)}" if f.step else esc(f.note)) + "</td></tr>"
                   for f in history.fusions)
    body.append(f"<table><tr><th>fusion</th><th>kind</th><th>made by</th></tr>{rows}</table>")
    if history.folded:
        rows = "".join(f"<tr><td><code>{esc(c.constant)}</code> = {esc(c.value)}</td><td>"
                       + (f"#{c.step.index} {esc(c.step.label)}" if c.step else esc(c.note)) + "</td></tr>"
                       for c in history.folded)
        body.append(f"<table><tr><th>folded constant</th><th>written by</th></tr>{rows}</table>")
    if final is not None:
        body.append(_picture(final, "optimized module", _final_marks(history), budget, layout))
    body.append("</section>")
    return page(title, "\n".join(body))

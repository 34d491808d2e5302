"""``hloviz render TARGET -o FILE``: one picture, for docs. Also the drawing options that
``hloviz show`` shares."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import visible
from .root import app
from .targets import TargetOptions, note, target_options

if TYPE_CHECKING:
    from types import TracebackType

    from typing_extensions import Self  # typing.Self needs Python 3.11; annotations only

ComputationOpt = Annotated[str | None, typer.Option(
    "--computation", help="Draw this computation (and what it calls) instead of the entry.", show_default=False)]
FocusOpt = Annotated[str | None, typer.Option(
    "--focus", help="Draw only the neighbourhood (see --radius) of this instruction, op name, scope or Keras layer "
                    "name, or a unique substring of one. With --stage both, both sides.", show_default=False)]
ScopeOpt = Annotated[str | None, typer.Option(
    "--scope", help="Draw one scope open (a layer or block: its path, e.g. model/block_5, or its Keras name) and "
                    "the kernels holding its ops.", show_default=False)]
DepthOpt = Annotated[int | None, typer.Option(
    "--depth", help="Open no scope deeper than this (1: the model's top-level scopes; 2: their layers …).",
    show_default=False)]
ColorByOpt = Annotated[str, typer.Option(
    "--color-by", help="Colour kernels by: kernel (one colour each), flops or bytes (a heat scale of the kernel "
                       "table's numbers; the ops before optimization take their kernels' colour).")]
RadiusOpt = Annotated[int, typer.Option("--radius", help="With --focus: how many steps around the instruction.")]
ExpandOpt = Annotated[bool, typer.Option(
    "--expand-chains", help="Draw every op of a chain (add ×1000) as its own node.")]
BudgetOpt = Annotated[int, typer.Option(
    "--budget", help="Most nodes per picture. The module is drawn as its tree (layers from op_name scopes, "
                     "fusions, bodies, blocks found by structure, ×N repeats), opened as deep as the budget "
                     "allows (the picture says what stays closed).")]
RenderBudgetOpt = Annotated[int | None, typer.Option(
    "--budget", help="Most nodes per picture column. Default: the overview of a whole module (about 24 boxes a "
                     "column: the model's blocks in program order, repeats folded ×N); 300 with --scope, --focus, "
                     "--depth, --computation or an .html explorer. --budget 300 draws the detailed picture of the "
                     "whole module (layers from op_name scopes, fusions, bodies, blocks found by structure).",
    show_default=False)]


def check_timeout(value: float) -> float:
    """``--timeout`` is a positive, finite number of seconds (not nan, inf, 0 or -1); one past
    :data:`~hloviz.render.layout.runs.graphviz_run.MAX_TIMEOUT` (a day: ``--timeout 1e7``) is taken as that."""
    from ..render.layout.runs.graphviz_run import MAX_TIMEOUT

    if not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"must be a positive number of seconds, not {value:g}")
    return min(value, MAX_TIMEOUT)


TimeoutOpt = Annotated[float, typer.Option(
    "--timeout", callback=check_timeout,
    help="Seconds Graphviz may take, for all the pictures of the command together; when it runs out, "
         "hloviz draws a coarser view instead.")]

_STAGE_TEXT = {
    "capturing": "capturing {target}: importing the framework and compiling (a few seconds)",
    "reading": "reading {target}",
    "analysing": "analysing kernels and constant folding",
    "drawing": "drawing (Graphviz)",
    "drawing (Graphviz)": "drawing the pictures (Graphviz)",
    "writing": "writing files",
}


class Progress:
    """A spinner on stderr while TensorFlow imports and compiles; silent when stderr is no terminal."""

    def __init__(self, target: str | None) -> None:
        from rich.console import Console

        self.console = Console(stderr=True)
        self.target = target or "the HLO files"
        self._status = None

    def __enter__(self) -> Self:
        if self.console.is_terminal:
            self._status = self.console.status(self.text("reading"))
            self._status.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None,
                 exc_tb: TracebackType | None) -> None:
        if self._status is not None:
            self._status.__exit__(exc_type, exc_val, exc_tb)

    def text(self, stage: str) -> str:
        return _STAGE_TEXT.get(stage, stage).format(target=self.target)

    def update(self, stage: str) -> None:
        if self._status is not None:
            self._status.update(self.text(stage))

    def note(self, message: str) -> None:
        if self._status is not None:
            self.console.print(f"hloviz: {visible(message)}", markup=False, highlight=False)
        else:
            note(message)


@app.command()
@target_options
def render(
    output: Annotated[Path, typer.Option("--output", "-o", help="The picture to write: .svg, .png, .dot, .html "
                                         "or .json (the suffix decides). A .png is at most 12,000 px a side; one "
                                         "whose text would be under 8 px is refused (exit code 2): write an .svg, "
                                         "or draw a part with --scope.", show_default=False)],
    source: TargetOptions,
    stage: Annotated[str | None, typer.Option(
        "--stage", help="pre, post, both (side by side, kernels numbered) or memory (the memory timeline; also what "
                        "-o memory.svg draws). Default: post when there is one.",
        show_default=False)] = None,
    computation: ComputationOpt = None,
    focus: FocusOpt = None,
    scope: ScopeOpt = None,
    depth: DepthOpt = None,
    color_by: ColorByOpt = "kernel",
    radius: RadiusOpt = 2,
    expand_chains: ExpandOpt = False,
    budget: RenderBudgetOpt = None,
    timeout: TimeoutOpt = 30.0,
    theme: Annotated[str, typer.Option(
        "--theme", help="light (Graphviz's colours), dark (transparent, light lines and labels) or auto (follows "
                        "the reader's colour scheme and the dark schemes of Sphinx and MkDocs themes; one file).")]
    = "light",
    width: Annotated[str | None, typer.Option(
        "--width", help="Fit the SVG to this width (a CSS length: 100%, 640px, 40em); its height follows.",
        show_default=False)] = None,
    max_height: Annotated[str | None, typer.Option(
        "--max-height", help="Never taller than this (a CSS length); the picture scales down to fit.",
        show_default=False)] = None,
    wrap: Annotated[str, typer.Option(
        "--wrap", help="auto, off or a number of parts (2-12): long columns are cut into parts side by side, "
                       "wide ones into parts stacked, arrows between parts ending at connectors that name the far "
                       "end. auto wraps a picture more than 1.5x taller or flatter than --aspect (not the .html "
                       "explorer).")] = "auto",
    aspect: Annotated[float | None, typer.Option(
        "--aspect", help="The height/width ratio --wrap auto aims at: 1.4 (a portrait page) by default, 0.56 "
                         "for a 16:9 slide.", show_default=False)] = None,
    layout: Annotated[str, typer.Option(
        "--layout", help="auto, whole or blocks: blocks lays each block (a layer, a block, a repeat, a fusion) out "
                         "on its own and the column around them with each block as one box; whole lays each column "
                         "out in one go; auto picks blocks where it was measured to be faster.")] = "auto",
) -> None:
    """Draw one picture of TARGET for your docs: the same input always gives the same bytes.

    Fusions are grey clusters, small constants are written into their users' labels, chains of
    one op are one node (add ×1000), and big modules keep layers, blocks and repeats closed to
    stay readable (the picture says what stays closed). With --stage both, the kernel numbers and colours of the optimized
    module are carried onto the ops they came from.
    """
    from .. import api
    from ..api.options import DrawOptions, FitOptions

    live, settings = source.live()
    drawing = DrawOptions(computation=computation, focus=focus, radius=radius, expand_chains=expand_chains,
                          budget=budget, timeout=timeout, scope=scope, depth=depth, color_by=color_by)
    fit = FitOptions(theme=theme, width=width, max_height=max_height, wrap=wrap, aspect=aspect, layout=layout)
    with Progress(live if live is None or isinstance(live, str) else live.label) as prog:
        picture = api.render(live, output, stage=stage, capture=settings, drawing=drawing, fit=fit,
                             notify=prog.note, progress=prog.update)
    for n in picture.notes:
        print(f"note: {visible(n)}", file=sys.stderr)
    print(f"wrote {visible(str(output))}")

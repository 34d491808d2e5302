"""``hloviz show TARGET``: capture, analyse, draw; the report and pictures in one folder."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import visible
from .render import (
    ColorByOpt,
    ComputationOpt,
    DepthOpt,
    ExpandOpt,
    FocusOpt,
    Progress,
    RadiusOpt,
    RenderBudgetOpt,
    ScopeOpt,
    TimeoutOpt,
)
from .root import app
from .targets import TargetOptions, target_options


@app.command()
@target_options
def show(
    source: TargetOptions,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Folder for report.html, pre.svg, post.svg and side-by-side.svg "
                               "[default: hloviz-out/<file>.<function>/ for model.py:function, "
                               "hloviz-out/<name>/ for a capture folder or HLO file].", show_default=False)] = None,
    open_report: Annotated[bool, typer.Option(
        "--open", help="Open the report in a web browser, served by hloviz on this machine until Ctrl-C: the "
                       "explorer draws a layer, block or fusion when you open it.")] = False,
    offline: Annotated[bool, typer.Option(
        "--offline", help="Draw every picture the explorer opens into report.html now (slower: hundreds of "
                          "layouts on a big model), so the file opens them anywhere without hloviz.")] = False,
    computation: ComputationOpt = None,
    focus: FocusOpt = None,
    scope: ScopeOpt = None,
    depth: DepthOpt = None,
    color_by: ColorByOpt = "kernel",
    radius: RadiusOpt = 2,
    expand_chains: ExpandOpt = False,
    budget: RenderBudgetOpt = None,
    timeout: TimeoutOpt = 30.0,
    passes: Annotated[bool, typer.Option(
        "--passes", help="Add XLA's pass history to the report: capture model.py:function with per-pass "
                         "dumps (a private temporary folder, removed afterwards). A dump folder or tar that "
                         "holds the snapshots gets it without --passes.")] = False,
) -> None:
    """Show what XLA did to TARGET: kernels, folded constants, and the graphs before and after.

    Prints the summary (kernels, folded constants, the verdict) and writes report.html (one
    self-contained file: summary, side-by-side picture, kernel table with your source lines,
    folded constants), pre.svg, post.svg and side-by-side.svg. With a pass history (--passes, or a
    dump folder that holds XLA's per-pass snapshots) the report also shows XLA's passes: a
    filmstrip of the steps, a picture of the module after each big one, and the pass that made
    each fusion and folded constant.
    """
    from .. import api
    from ..api.options import DrawOptions
    from ..errors import InputError

    if passes and (source.tf is not None or source.jax is not None):
        raise InputError("show --passes captures in this environment; --tf/--jax are not combined with it",
                         hint="hloviz passes TARGET --tf VERSION -o passes.html draws the pass history under "
                              "another release")
    live, settings = source.live()
    drawing = DrawOptions(computation=computation, focus=focus, radius=radius, expand_chains=expand_chains,
                          budget=budget, timeout=timeout, scope=scope, depth=depth, color_by=color_by)
    with Progress(live if live is None or isinstance(live, str) else live.label) as prog:
        result = api.show(live, output, capture=settings, drawing=drawing, passes=passes, offline=offline,
                          notify=prog.note, progress=prog.update)
    print(visible(f"{result.label}: " + "\n".join(result.summary)))
    for n in result.notes:
        print(f"note: {visible(n)}", file=sys.stderr)
    print("wrote:")
    for path in result.files.values():
        print(f"  {visible(str(path))}")
    if result.removed:
        print("removed (hloviz's own, from an earlier run):")
        for path in result.removed:
            print(f"  {visible(str(path))}")
    if open_report and result.on_demand is not None:
        api.serve_report(result, say=lambda line: print(visible(line), file=sys.stderr, flush=True))
    elif open_report:
        import webbrowser

        report = Path(result.files["report"]).resolve()
        if not webbrowser.open(report.as_uri()):
            print(f"hloviz: could not start a browser; open {report} yourself", file=sys.stderr)

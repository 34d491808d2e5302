"""``hloviz diff A B``: what changed between two compilations of the same function.

A thin layer over :func:`hloviz.api.diff`: options in, a report out (text, markdown or JSON on
stdout), an optional picture, and an exit code a CI job can act on.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from .. import api
from ..analysis.diff.checks import CHECKS
from ..errors import EXIT_CHECK_FAILED, InputError, visible
from .render import check_timeout
from .root import app
from .targets import ArgOpt, DeviceOpt, ModuleOpt, note, print_json

FORMATS = ("text", "markdown", "json")


def report_options(fmt: str, limit: int, fail_on: list[str] | None) -> list[str]:
    """Check the options every diff report takes (``--format``, ``--limit``, ``--fail-on``; shared
    by ``hloviz diff`` and ``hloviz versions``) and return the ``--fail-on`` checks."""
    if fmt not in FORMATS:
        raise InputError(f"--format must be one of {', '.join(FORMATS)}, not '{fmt}'")
    if limit < 0:
        raise InputError(f"--limit must be 0 (all) or more, not {limit}")
    checks = list(fail_on or [])
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        raise InputError(f"unknown --fail-on check '{unknown[0]}'", hint="known checks: " + ", ".join(CHECKS))
    return checks

_SIDE_HELP = ("a capture folder (hloviz dump), an HLO file, an XLA dump folder, or model.py:function "
              "(captured with the TensorFlow/JAX installed here; the file is imported, which runs its "
              "code: only point hloviz at code you trust)")
_CHECKS_HELP = "; ".join(f"{name}: {what}" for name, (_, what) in CHECKS.items())


@app.command(
    epilog="Exit codes: 0 no --fail-on check matched (or none asked for); 1 a --fail-on check matched; "
           "2 an error (unreadable or missing input, bad option, Graphviz missing or failing for a picture, a .png "
           "too big to read).",
)
def diff(
    before: Annotated[str, typer.Argument(help=f"The old side: {_SIDE_HELP}.", show_default=False)],
    after: Annotated[str | None, typer.Argument(
        help="The new side, the same kinds as BEFORE (default with two --tf/--jax versions: BEFORE again).",
        show_default=False)] = None,
    stage: Annotated[str, typer.Option(
        "--stage", help="Which module of a capture to compare: post (optimized) or pre. A plain HLO file is "
                        "compared as it is.")] = "post",
    fmt: Annotated[str, typer.Option(
        "--format", "-f", help="text (a terminal summary, then details), markdown (a PR comment) or json.")] = "text",
    fail_on: Annotated[list[str] | None, typer.Option(
        "--fail-on", help=f"Exit with 1 when this happens; repeatable. {_CHECKS_HELP}.",
        show_default=False)] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Also write a picture of both sides: .svg, .png, .html, .dot or .json (by suffix); "
                               "a .png whose text would be under 8 px is refused (exit code 2: write an .svg).",
        show_default=False)] = None,
    by: Annotated[str, typer.Option(
        "--by", help="kernel (default: the kernels and instructions that differ) or scope: per layer of the "
                     "model, its ops, kernels added/removed/changed and FLOPs/bytes before → after.",
        metavar="kernel|scope")] = "kernel",
    depth: Annotated[int | None, typer.Option(
        "--depth", help="With --by scope: the deepest level listed, counted from the model (1: its top-level "
                        "scopes; default: 2 in text and markdown, every level in JSON).", min=1,
        show_default=False)] = None,
    limit: Annotated[int, typer.Option(
        "--limit", help="Most entries per list in the text and markdown details (0: all; JSON lists all).")] = 40,
    budget: Annotated[int | None, typer.Option(
        "--budget", help="With -o: most nodes per column before collapsing. Default: the overview of both "
                         "modules (about 24 boxes a column, one per block); --budget 300 draws the detailed "
                         "picture.", min=1, show_default=False)] = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", callback=check_timeout,
        help="With -o: seconds Graphviz may take before a coarser view is drawn.")] = 30.0,
    arg: ArgOpt = None,
    device: DeviceOpt = None,
    module: ModuleOpt = None,
    tf: Annotated[list[str] | None, typer.Option(
        "--tf", help="Capture model.py:function sides under this TensorFlow release (a managed environment); "
                     "twice: the first for BEFORE, the second for AFTER.", show_default=False)] = None,
    jax: Annotated[list[str] | None, typer.Option(
        "--jax", help="The same for JAX releases.", show_default=False)] = None,
) -> None:
    """Compare two compilations of the same function, e.g. under two TensorFlow versions.

    Instructions are matched by structure, not by name (names change between versions), and
    each is reported unchanged, changed (and how), added or removed. The summary comes first:
    kernels before → after, fusions added/removed/changed, per-opcode counts, instructions that moved in
    or out of fusions, and constants that appeared or vanished. Modules whose entry signatures
    differ are still compared, with a warning.

    \b
    Example (a PR comment, and a failing CI job when the kernel count grows):
      hloviz diff samples/captures/matmul_chain-tf2.17 \\
                  samples/captures/matmul_chain-tf2.21 \\
                  --format markdown --fail-on kernels-increased

    \b
    What changed in each layer (ops, kernels added/removed/changed, FLOPs, bytes):
      hloviz diff samples/captures/resblock_relu samples/captures/resblock_gelu --by scope

    \b
    The same function under two TensorFlow releases (hloviz versions compares more):
      hloviz diff samples/fused_additions.py:fused_additions --tf 2.17 --tf 2.21
    """
    checks = report_options(fmt, limit, fail_on)
    if by not in ("kernel", "scope"):
        raise InputError(f"--by must be kernel or scope, not '{by}'")
    if depth is not None and by != "scope":
        raise InputError("--depth applies to --by scope", hint="add --by scope")
    picture_fmt = None
    if output is not None:
        from ..render.pictures import format_for

        picture_fmt = format_for(output)
    before_side, after_side = _live_sides(before, after, list(tf or ()), list(jax or ()), arg, device)
    result = api.diff(before_side, after_side, stage=stage, args=tuple(arg or ()), device=device, module=module, notify=note)
    for warning in result.diff.warnings:
        note(f"warning: {warning}")
    scopes = details = None
    if by == "scope":
        # every level once: the table shows down to the depth, the changed kernels go to the
        # innermost scope holding them (a scanned block's ``mlp``, below the default depth)
        details = result.by_scope(None)
        shown = depth if depth is not None or fmt == "json" else 2
        scopes = [r for r in details if shown is None or r.depth <= shown]
    if fmt == "json":
        data = result.to_dict(scopes=scopes)
        failed = result.failed(checks)
        data["fail_on"] = {"checks": checks, "failed": failed}
        print_json(data)
    else:
        report = result.to_markdown(limit=limit, scopes=scopes, scope_details=details) if fmt == "markdown" else \
            result.to_text(limit=limit, scopes=scopes, scope_details=details)
        sys.stdout.write(visible(report))  # no terminal escapes or bidi overrides from the input
        failed = result.failed(checks)
    sys.stdout.flush()
    if output is not None and picture_fmt is not None:
        picture = result.save_picture(output, budget=budget, timeout=timeout,  # .dot beside it if Graphviz fails
                                      scopes=scopes)
        for n in picture.notes:
            if "did not finish" in n or "laid out apart" in n:
                note(n)
        note(f"wrote {output}")
    if failed:
        for name in failed:
            note(f"--fail-on {name}: {CHECKS[name][1]}")
        raise typer.Exit(EXIT_CHECK_FAILED)


def _live_sides(before: str, after: str | None, tf: list[str], jax: list[str], arg: list[str] | None,
                device: str | None) -> tuple[object, object]:
    """The two sides, captured under ``--tf`` / ``--jax`` releases where asked: one release applies
    to every model.py:function side, two go to BEFORE and AFTER in turn."""
    from .targets import load

    if tf and jax:
        raise InputError("give --tf or --jax, not both")
    versions, key = (tf, "tf") if tf else (jax, "jax")
    if len(versions) > 2:
        raise InputError(f"diff compares two sides: give --{key} once or twice (hloviz versions compares more)")
    if after is None:
        if len(versions) != 2:
            raise InputError("give two sides to compare (BEFORE AFTER), or one model.py:function with two --tf "
                             "(or --jax) versions")
        after = before
    if not versions:
        return before, after
    from ..capture.releases.envs import check_release

    for version in versions:  # every one, before minutes of installing the first
        check_release("tensorflow" if key == "tf" else "jax", version)
    sides: list[object] = []
    for i, side in enumerate((before, after)):
        path = Path(side)
        if path.is_dir() or (path.is_file() and path.suffix != ".py"):
            if len(versions) == 2:
                raise InputError(f"--{key} {versions[i]} applies to {side}, which is already captured",
                                 hint="give model.py:function sides with --tf/--jax")
            sides.append(side)
            continue
        version = versions[i] if len(versions) == 2 else versions[0]
        sides.append(load(side, arg=arg, device=device, tf=version if key == "tf" else None,
                          jax=version if key == "jax" else None))
    return sides[0], sides[1]

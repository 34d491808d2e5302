"""``hloviz versions TARGET --tf 2.17 --tf 2.21``: one function under several releases, side by side.

A thin layer over :func:`hloviz.api.versions`: each version's progress on stderr, the matrix and
the diffs on stdout (text, markdown or JSON), an optional HTML report with the diff pictures,
and the ``--fail-on`` exit code of ``hloviz diff`` (every version against the first).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..analysis.diff.checks import CHECKS
from ..errors import EXIT_CHECK_FAILED, InputError, visible
from .diff import report_options
from .render import check_timeout
from .root import app
from .targets import ArgOpt, DeviceOpt, VerboseOpt, note, print_json

_CHECKS_HELP = "; ".join(f"{name}: {what}" for name, (_, what) in CHECKS.items())


@app.command(
    epilog="Exit codes: 0 done (no --fail-on check matched); 1 a --fail-on check matched against the first "
           "version; 2 an error (a version that cannot be installed or imported, a function it cannot trace, "
           "bad input).",
)
def versions(
    targets: Annotated[list[str], typer.Argument(
        help="model.py:function (with --tf or --jax versions), or two or more capture folders to compare "
             "in order.", show_default=False)],
    tf: Annotated[list[str] | None, typer.Option(
        "--tf", help="A TensorFlow release to capture under (2.17, or exactly 2.17.1); repeat, oldest first.",
        show_default=False)] = None,
    jax: Annotated[list[str] | None, typer.Option(
        "--jax", help="A JAX release to capture under; repeat, oldest first.", show_default=False)] = None,
    fmt: Annotated[str, typer.Option(
        "--format", "-f", help="text (the matrix, then each diff), markdown (a PR comment) or json.")] = "text",
    fail_on: Annotated[list[str] | None, typer.Option(
        "--fail-on", help=f"Exit with 1 when a version, compared with the first, shows this; repeatable. "
                          f"{_CHECKS_HELP}.", show_default=False)] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Also write an HTML report: the matrix and each diff's picture (.html).",
        show_default=False)] = None,
    save: Annotated[Path | None, typer.Option(
        "--save", help="Folder for the captures, one <function>-tf<version> folder each "
                       "[default: hloviz-out/versions].", show_default=False)] = None,
    limit: Annotated[int, typer.Option(
        "--limit", help="Most entries per list in each diff's details (0: all; JSON lists all).")] = 40,
    budget: Annotated[int, typer.Option("--budget", help="With -o: most nodes per picture column.")] = 300,
    timeout: Annotated[float, typer.Option(
        "--timeout", callback=check_timeout, help="With -o: seconds Graphviz may take per picture.")] = 30.0,
    arg: ArgOpt = None,
    device: DeviceOpt = None,
    verbose: VerboseOpt = False,
    passes: Annotated[bool, typer.Option(
        "--passes", help="Compare XLA's pass histories instead: which passes appeared, vanished or now change the "
                         "module (captures with per-pass dumps; TARGETS may be dump folders holding them).")] = False,
) -> None:
    """Capture one function under several TensorFlow (or JAX) releases and show what changed.

    Each release is installed once into an environment hloviz keeps (hloviz envs list), with
    this hloviz in it; later runs reuse it. Then: kernels, fusions by kind, folded constants,
    bytes and FLOP estimates per version, and the diff of each version against the previous
    one (the matcher and report of hloviz diff).

    \b
    Examples:
      hloviz versions samples/fused_additions.py:fused_additions --tf 2.17 --tf 2.21
      hloviz versions model.py:step --tf 2.17 --tf 2.19 --tf 2.21 --format markdown -o report.html
      hloviz versions samples/captures/matmul_chain-tf2.17 samples/captures/matmul_chain-tf2.21
      hloviz versions samples/fused_additions.py:fused_additions --tf 2.17 --tf 2.21 --passes
    """
    from .. import api

    checks = report_options(fmt, limit, fail_on)
    if passes:
        from .passes import versions_passes

        versions_passes(targets, tf, jax, fmt, arg, device, verbose)
        return
    if output is not None and output.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"-o writes an HTML report; name it .html, not {output.name}")
    live = bool(tf or jax)
    if live and len(targets) != 1:
        raise InputError("with --tf/--jax give one model.py:function TARGET",
                         hint="to compare capture folders, give them without --tf/--jax")
    if live:
        from .progress import VersionProgress

        with VersionProgress() as progress:
            result = api.versions(targets[0], tf=tf or (), jax=jax or (), save=save, args=tuple(arg or ()),
                                  device=device, verbose=verbose, notify=progress.note, on_phase=progress.phase)
    else:
        if arg or device:
            raise InputError("--arg and --device apply to a model.py:function captured with --tf/--jax")
        result = api.versions(captures=targets, notify=note)
    for d in result.diffs:
        for warning in d.diff.warnings:
            note(f"warning: {d.before.label} → {d.after.label}: {warning}")
    failed = result.failed(checks)
    if fmt == "json":
        data = result.to_dict()
        data["fail_on"] = {"checks": checks, "failed": failed, "against": result.columns[0].label}
        print_json(data)
    else:
        report = result.to_markdown(limit=limit) if fmt == "markdown" else result.to_text(limit=limit)
        sys.stdout.write(visible(report))  # no terminal escapes or bidi overrides from the input
    sys.stdout.flush()
    if output is not None:
        from ..render.page.files import write_atomic

        write_atomic(output, result.to_html(budget=budget, timeout=timeout))
        note(f"wrote {output}")
    if failed:
        for name in failed:
            note(f"--fail-on {name}: {CHECKS[name][1]} (against {result.columns[0].label})")
        raise typer.Exit(EXIT_CHECK_FAILED)

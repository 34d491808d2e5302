"""``hloviz passes TARGET``: which of XLA's passes fused, folded or removed each op.

A thin layer over :func:`hloviz.api.passes.passes`: options in, the history out (text, or JSON
with ``--json``) on stdout; notes on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError, visible
from .render import check_timeout
from .root import app
from .targets import ArgOpt, DeviceOpt, JaxOpt, ModuleOpt, TfOpt, VerboseOpt, note, print_json


@app.command()
def passes(
    target: Annotated[str, typer.Argument(
        help="model.py:function (captured in a child process with XLA's per-pass dumps, into a private temporary "
             "folder removed afterwards; the file is imported, which runs its code: only point hloviz at code you "
             "trust), or a folder dumped with XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*\".",
        show_default=False)],
    json_out: Annotated[bool, typer.Option("--json", help="Print the history as JSON.")] = False,
    focus: Annotated[str | None, typer.Option(
        "--focus", help="Follow one op through the passes: an op name, a layer or scope, or an instruction name.",
        show_default=False)] = None,
    all_steps: Annotated[bool, typer.Option(
        "--all", help="List every snapshot, not only those that changed the module.")] = False,
    limit: Annotated[int, typer.Option("--limit", help="Most rows per credit list in the text (JSON lists all).")] = 20,
    save: Annotated[Path | None, typer.Option(
        "--save", help="For a model.py target: keep the module's snapshots in this new folder (for hloviz diff "
                       "DIR@PASS).", show_default=False)] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Also write the filmstrip: an HTML page of the steps, each with its picture (the "
                               "fusions and constants a pass made are marked with it).", show_default=False)] = None,
    pictures: Annotated[int, typer.Option("--pictures", help="With -o: most steps drawn (the biggest changes).")] = 12,
    budget: Annotated[int, typer.Option("--budget", help="With -o: most nodes per picture (as in show).")] = 120,
    timeout: Annotated[float, typer.Option(
        "--timeout", callback=check_timeout,
        help="With -o: seconds Graphviz may take for all the pictures together.")] = 60.0,
    arg: ArgOpt = None,
    device: DeviceOpt = None,
    module: ModuleOpt = None,
    verbose: VerboseOpt = False,
    tf: TfOpt = None,
    jax: JaxOpt = None,
) -> None:
    """Which XLA pass fused, folded or removed each op: the story of the compilation.

    Lists, in XLA's order, the passes that changed the module (index, pipeline, pass,
    instructions and fusions after it, what changed), then each fusion of the optimized module
    with the pass after which it first appears, each folded constant with the pass that wrote
    its value, and the ops eliminated with the pass they vanished in. A history with missing or
    unreadable snapshots says what is missing and credits nothing across the gap.

    \b
    Examples:
      hloviz passes samples/fused_additions.py:fused_additions
      hloviz passes samples/fused_additions.py:fused_additions_const --focus add_17
      hloviz passes DUMP_DIR --module jit_mlp --json
    """
    from ..api.passes import passes as run

    if limit < 1:
        raise InputError(f"--limit must be at least 1, not {limit}")
    film = None
    if output is not None:
        from ..api.passes import FilmOptions

        if output.suffix.lower() not in (".html", ".htm"):
            raise InputError(f"-o writes an HTML page; name it .html, not {output.name}")
        if pictures < 0 or budget < 1 or timeout <= 0:
            raise InputError("--pictures must be 0 or more, --budget at least 1 and --timeout more than 0")
        film = FilmOptions(output, pictures, budget, timeout)
    result = run(target, args=tuple(arg or ()), device=device, verbose=verbose, module=module, focus=focus,
                 save=save, notify=note, tf=tf, jax=jax, film=film)
    if json_out:
        print_json(result.to_dict())
    else:
        sys.stdout.write(visible(result.to_text(all_steps=all_steps, limit=limit)))
        sys.stdout.flush()
    if output is not None:
        note(f"wrote {output}")
    if result.saved_to:
        note(f"kept the snapshots in {result.saved_to} (hloviz diff {result.saved_to}@fusion …)")


def versions_passes(targets: list[str], tf: list[str] | None, jax: list[str] | None, fmt: str,
                    arg: list[str] | None, device: str | None, verbose: bool) -> None:
    """``hloviz versions --passes``: the pass histories of each release, compared in order."""
    from ..api.pass_versions import pass_versions

    if fmt == "markdown":
        raise InputError("--passes prints text or json (--format text|json)")
    live = bool(tf or jax)
    if live and len(targets) != 1:
        raise InputError("with --tf/--jax give one model.py:function TARGET")
    if not live and (arg or device):
        raise InputError("--arg and --device apply to a model.py:function captured with --tf/--jax")
    result = pass_versions(targets[0] if live else None, tf=tf or (), jax=jax or (), dumps=() if live else targets,
                           args=tuple(arg or ()), device=device, verbose=verbose, notify=note)
    if fmt == "json":
        print_json(result.to_dict())
    else:
        sys.stdout.write(visible(result.to_text()))
        sys.stdout.flush()

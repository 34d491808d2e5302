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
from . import app
from .targets import ArgOpt, DeviceOpt, ModuleOpt, VerboseOpt, note, print_json


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
    arg: ArgOpt = None,
    device: DeviceOpt = None,
    module: ModuleOpt = None,
    verbose: VerboseOpt = False,
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
    result = run(target, args=tuple(arg or ()), device=device, verbose=verbose, module=module, focus=focus,
                 save=save, notify=note)
    if json_out:
        print_json(result.to_dict())
    else:
        sys.stdout.write(visible(result.to_text(all_steps=all_steps, limit=limit)))
        sys.stdout.flush()
    if result.saved_to:
        note(f"kept the snapshots in {result.saved_to} (hloviz diff {result.saved_to}@fusion …)")

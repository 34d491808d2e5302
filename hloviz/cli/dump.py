"""``hloviz dump TARGET -o DIR``: save a capture (pre.hlo, post.hlo, capture.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import app
from .targets import ArgOpt, DeviceOpt, JaxOpt, ModuleOpt, PostOpt, PreOpt, TargetArg, TfOpt, VerboseOpt


@app.command()
def dump(
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder to write the capture to.",
                                         show_default=False)],
    target: TargetArg = None,
    arg: ArgOpt = None,
    device: DeviceOpt = None,
    pre: PreOpt = None,
    post: PostOpt = None,
    module: ModuleOpt = None,
    verbose: VerboseOpt = False,
    tf: TfOpt = None,
    jax: JaxOpt = None,
) -> None:
    """Capture TARGET's HLO before and after XLA's optimizations and save it to a folder.

    The folder (pre.hlo, post.hlo, capture.json with versions, device, specs and the source map)
    works as a TARGET for every command, on machines without TensorFlow too. It is written
    atomically: an interrupted dump leaves no half-written folder.
    """
    from .. import api
    from .targets import live_target, note

    live = live_target(target, tf, jax, arg=arg, device=device, pre=pre, post=post, module=module, verbose=verbose)
    if live is not target:
        target, arg, device = live, None, None
    out = api.dump(target, output, pre=pre, post=post, args=tuple(arg or ()), device=device,
                   module=module, verbose=verbose, notify=note)
    files = [n for n in ("pre.hlo", "post.hlo", "capture.json") if (out / n).is_file()]
    print(f"wrote {out}/ ({', '.join(files)})")

"""``hloviz dump TARGET -o DIR``: save a capture (pre.hlo, post.hlo, capture.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import app
from .targets import ArgOpt, DeviceOpt, ModuleOpt, PostOpt, PreOpt, TargetArg, VerboseOpt, load


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
) -> None:
    """Capture TARGET's HLO before and after XLA's optimizations and save it to a folder.

    The folder (pre.hlo, post.hlo, capture.json with versions, device, specs and the source map)
    works as a TARGET for every command, on machines without TensorFlow too. It is written
    atomically: an interrupted dump leaves no half-written folder.
    """
    from ..capture import save_capture

    capture = load(target, arg=arg, device=device, pre=pre, post=post, module=module, verbose=verbose)
    out = save_capture(capture, output)
    files = [n for n, t in (("pre.hlo", capture.pre_text), ("post.hlo", capture.post_text)) if t is not None]
    print(f"wrote {out}/ ({', '.join(files + ['capture.json'])})")

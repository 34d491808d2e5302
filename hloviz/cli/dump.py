"""``hloviz dump TARGET -o DIR``: save a capture (pre.hlo, post.hlo, capture.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import app
from .targets import TargetOptions, target_options


@app.command()
@target_options
def dump(
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder to write the capture to.",
                                         show_default=False)],
    source: TargetOptions,
) -> None:
    """Capture TARGET's HLO before and after XLA's optimizations and save it to a folder.

    The folder (pre.hlo, post.hlo, capture.json with versions, device, specs and the source map)
    works as a TARGET for every command, on machines without TensorFlow too. It is written
    atomically: an interrupted dump leaves no half-written folder.
    """
    from .. import api
    from .targets import note

    live, settings = source.live()
    out = api.dump(live, output, **settings.keywords(), notify=note)
    files = [n for n in ("pre.hlo", "post.hlo", "capture.json") if (out / n).is_file()]
    print(f"wrote {out}/ ({', '.join(files)})")

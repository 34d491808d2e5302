"""``hloviz dump TARGET -o DIR``: save a capture (pre.hlo, post.hlo, capture.json, memory.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .root import app
from .targets import TargetOptions, target_options


@app.command()
@target_options
def dump(
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder to write the capture to.",
                                         show_default=False)],
    source: TargetOptions,
) -> None:
    """Capture TARGET's HLO before and after XLA's optimizations and save it to a folder.

    The folder (pre.hlo, post.hlo, capture.json with versions, device, specs and the source map,
    memory.json with XLA's buffer assignment when the framework reports it) works as a TARGET for every command, on machines without TensorFlow too. It is written
    atomically: an interrupted dump leaves no half-written folder.
    """
    from .. import api
    from .targets import note

    live, settings = source.live()
    out = api.dump(live, output, **settings.keywords(), notify=note)
    print(f"wrote {out}/ ({', '.join(written_files(out))})")


def written_files(out: Path) -> list[str]:
    """The files a dump left in ``out``, the HLO texts first: every plain file, so that a new
    one (``memory.json``: the buffer assignment XLA reported) is never left unsaid."""
    first = ("pre.hlo", "post.hlo", "capture.json")
    present = sorted(p.name for p in out.iterdir() if p.is_file())
    return [n for n in first if n in present] + [n for n in present if n not in first]

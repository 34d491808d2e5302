"""The README's gallery: the overview of four real models next to one block of each drawn open.

``python -m hloviz.docs.gallery [FOLDER]`` (``make gallery``) draws, from the saved captures in
``samples/captures``, into ``FOLDER`` (default ``docs/gallery``) for each model of
:data:`GALLERY` two pictures: ``NAME.svg``, what ``hloviz render CAPTURE --stage both -o x.svg``
draws with no other option (the overview: one box per block, in program order), and
``NAME-block.svg``, one part of it in detail: ``--scope`` a layer by its name, or, where blocks
are found by structure and no scope names them (InceptionV3's ``mixed`` blocks, a JAX step
written without ``jax.named_scope``), the overview with that block opened in place, as a
double-click opens it in the explorer (``ViewOptions.open``). A test draws the gallery again and
compares it with the committed one by meaning (``tests/svg_meaning.py``).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GALLERY", "Entry", "draw", "main"]

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Entry:
    """One model of the gallery: its capture (under ``samples/captures``), what it is, and which
    part of it is drawn in detail: ``scope``, a layer or block by its name (``render --scope``),
    or, for a model whose blocks are found by structure (no scope names them), ``opens``, a
    pattern matched against ``"KEY LABEL"`` of each node of the overview's cut: the nodes it
    matches are opened in place in the overview (what a double-click does in the explorer)."""

    name: str
    capture: str
    what: str
    scope: str | None = None
    opens: str | None = None


GALLERY = (
    Entry("inception_v3", "inception_v3", "InceptionV3", opens=r" mixed7$"),
    Entry("densenet121", "densenet121", "DenseNet121", scope="conv3_block1"),
    Entry("keras_cnn_train", "keras_cnn_train", "a Keras training step (CNN, SGD)", scope="conv2"),
    Entry("jax_gpt_step12", "jax_gpt_step12", "a 12-layer GPT training step (JAX)", opens=r"\(forward\).* ×12$"),
)


def _render(capture: Path, out: Path, scope: str | None = None) -> None:
    """What ``hloviz render CAPTURE --stage both [--scope SCOPE] -o OUT`` writes (through the api:
    the docs layer sits below the CLI)."""
    from ..api.pictures import render

    render(str(capture), out, stage="both", scope=scope)


def _opened(capture: Path, out: Path, pattern: str) -> None:
    """The overview of ``capture`` (as ``render --stage both`` draws it) with the nodes of its cut
    that ``pattern`` matches opened in place, written to ``out``."""
    from dataclasses import replace

    from ..analysis import analyze
    from ..capture import load_target
    from ..render.layout.wrap import parse_wrap
    from ..render.page.page import PageOptions, page_picture
    from ..render.pictures import pair_picture
    from ..render.views import OVERVIEW_BUDGET, ViewOptions

    cap = load_target(str(capture))
    pre, post = cap.modules()
    assert pre is not None and post is not None
    analysis = analyze(pre, post, info=cap.info)
    options = ViewOptions(budget=OVERVIEW_BUDGET)
    title = f"{cap.label}: {analysis.verdict}"
    overview = pair_picture(pre, post, analysis, fmt="dot", options=options, title=title, info=cap.info)
    keys = tuple(k for _, view in overview.views if view.cut is not None for k in sorted(view.cut.keys)
                 if re.search(pattern, f"{k} {view.cut.tree.nodes[k].label}"))
    if not keys:
        raise SystemExit(f"gallery: no node of the overview of {capture} matches {pattern!r}")
    picture = pair_picture(pre, post, analysis, fmt="svg", options=replace(options, open=keys), title=title,
                           info=cap.info, wrap=parse_wrap("off"))  # a stub of a cut arrow cannot name a cluster
    picture = page_picture(picture, PageOptions(), description=analysis.verdict)
    picture.save(out)


def draw(folder: Path, captures: Path | None = None) -> list[Path]:
    """Draw the gallery into ``folder``: for each model ``NAME.svg`` (the overview) and
    ``NAME-block.svg`` (one part in detail); the paths written."""
    captures = captures if captures is not None else ROOT / "samples" / "captures"
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for e in GALLERY:
        _render(captures / e.capture, folder / f"{e.name}.svg")
        block = folder / f"{e.name}-block.svg"
        if e.scope is not None:
            _render(captures / e.capture, block, e.scope)
        else:
            assert e.opens is not None
            _opened(captures / e.capture, block, e.opens)
        written += [folder / f"{e.name}.svg", block]
    return written


def main(argv: list[str] | None = None) -> int:
    """Draw the gallery into the folder given (default ``docs/gallery``)."""
    args = sys.argv[1:] if argv is None else argv
    for path in draw(Path(args[0]) if args else ROOT / "docs" / "gallery"):
        print(f"gallery: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

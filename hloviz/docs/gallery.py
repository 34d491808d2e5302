"""The README's gallery: the overview of four real models next to one block of each drawn open.

``python -m hloviz.docs.gallery [FOLDER]`` (``make gallery``) draws, from the saved captures in
``samples/captures``, into ``FOLDER`` (default ``docs/gallery``) for each model of
:data:`GALLERY` two pictures: ``NAME.svg``, what ``hloviz render CAPTURE --stage both -o x.svg``
draws with no other option (the overview: one box per block, in program order), and
``NAME-block.svg``, one part of it drawn in detail (``--scope`` a layer or block by its name, or,
where the model has no scopes — a JAX step written without ``jax.named_scope`` — ``--focus`` on
one of its weights). Each is drawn by the ``hloviz render`` command line itself, so the gallery
is exactly what a user's command makes; a test draws it again and compares it with the committed
one by meaning (``tests/svg_meaning.py``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GALLERY", "Entry", "commands", "main"]

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Entry:
    """One model of the gallery: its capture (under ``samples/captures``), what it is, and the
    options that draw one of its blocks open."""

    name: str
    capture: str
    what: str
    block: tuple[str, ...]
    block_what: str


GALLERY = (
    Entry("inception_v3", "inception_v3", "InceptionV3", ("--focus", "mixed5", "--radius", "3"),
          "around `mixed5`"),
    Entry("densenet121", "densenet121", "DenseNet121", ("--scope", "conv3_block1"), "`conv3_block1`"),
    Entry("keras_cnn_train", "keras_cnn_train", "a Keras training step (CNN, SGD)", ("--scope", "conv2"),
          "`conv2`: forward, backward, update"),
    Entry("jax_gpt_step12", "jax_gpt_step12", "a 12-layer GPT training step (JAX)",
          ("--focus", "params['layers'][0]['w_up']", "--radius", "2"), "around layer 0's `w_up`"),
)


def commands(folder: Path, captures: Path | None = None) -> list[tuple[Path, list[str]]]:
    """Each picture of the gallery and the ``hloviz`` arguments that draw it into ``folder``."""
    captures = captures if captures is not None else ROOT / "samples" / "captures"
    out: list[tuple[Path, list[str]]] = []
    for e in GALLERY:
        base = ["render", str(captures / e.capture), "--stage", "both"]
        out.append((folder / f"{e.name}.svg", [*base, "-o", str(folder / f"{e.name}.svg")]))
        out.append((folder / f"{e.name}-block.svg", [*base, *e.block, "-o", str(folder / f"{e.name}-block.svg")]))
    return out


def main(argv: list[str] | None = None) -> int:
    """Draw the gallery into the folder given (default ``docs/gallery``); 0 when every picture
    was written, else the first failing command's exit code."""
    from ..cli import main as hloviz

    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else ROOT / "docs" / "gallery"
    folder.mkdir(parents=True, exist_ok=True)
    for path, command in commands(folder):
        try:
            code = hloviz(command)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 2
        if code:
            print(f"gallery: hloviz {' '.join(command)} failed ({code})", file=sys.stderr)
            return int(code)
        print(f"gallery: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

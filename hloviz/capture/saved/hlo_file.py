"""A lone HLO file: its text, and which stage of XLA's pipeline it is.

In: a path to HLO text (plain or compressed, or a binary ``HloProto`` read as text). Out: the
text (:func:`read_text`), and ``pre`` or ``post`` with the reason (:func:`guess_stage`): by the
file's name (``pre.hlo``, ``…before_optimizations…``), else by signs only optimized HLO has (a
schedule, fusions, fused computations).

A module of its own because any HLO file is read this way, not only a saved capture's
(``--pre``/``--post``, a file given as the target, pass snapshots): :mod:`.folder` reads a
capture folder's two files with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from hloviz.errors import InputError
from hloviz.inputs import read_bytes

__all__ = ["guess_stage", "read_text"]

# Signs that a module went through XLA's pipeline (scheduling, fusion, layout assignment).
# What only optimized HLO has. Each sign is found by str.find of a literal and a check of the
# few places it occurs: a regular expression anchored at line starts (re.M) is tried at every
# line start, and 50 MB of blank lines took seconds.
_FUSION_KINDS = ("kLoop", "kInput", "kOutput", "kCustom")


def _occurrences(text: str, literal: str) -> Iterator[int]:
    pos = text.find(literal)
    while pos >= 0:
        yield pos
        pos = text.find(literal, pos + 1)


def _word_starts(text: str, pos: int) -> bool:
    return pos == 0 or not (text[pos - 1].isalnum() or text[pos - 1] == "_")


def _scheduled(text: str) -> bool:
    """An ``HloModule`` line (at a line start) that says ``is_scheduled=true``."""
    for p in _occurrences(text, "HloModule "):
        if p == 0 or text[p - 1] == "\n":
            end = text.find("\n", p)
            line = text[p : end if end >= 0 else None]
            if any(_word_starts(line, q) for q in _occurrences(line, "is_scheduled=true")):
                return True
    return False


def _has_fusion(text: str) -> bool:
    if any(_word_starts(text, p) for p in _occurrences(text, "fusion(")):
        return True
    for p in _occurrences(text, "kind=k"):
        kind = text[p + 5 : p + 13]
        if _word_starts(text, p) and any(kind.startswith(k) and not _continues_word(text, p + 5 + len(k))
                                         for k in _FUSION_KINDS):
            return True
    return False


def _continues_word(text: str, pos: int) -> bool:
    return pos < len(text) and (text[pos].isalnum() or text[pos] == "_")


def _has_fused_computation(text: str) -> bool:
    """A line that starts (after spaces) with ``[%]fused_computation``."""
    for p in _occurrences(text, "fused_computation"):
        q = p - 1 if p > 0 and text[p - 1] == "%" else p
        while q > 0 and text[q - 1] in " \t":
            q -= 1
        if q == 0 or text[q - 1] == "\n":
            return True
    return False


_POST_SIGNS = (
    (_scheduled, "it is scheduled (is_scheduled=true)"),
    (_has_fusion, "it contains fusions"),
    (_has_fused_computation, "it contains fused computations"),
)


def read_text(path: Path) -> str:
    """Read an HLO text file (``.gz``, ``.xz``, ``.bz2`` too, streamed under ``--max-input``), or a
    binary proto (``.pb``, ``.hlo.pb``) as text; a missing file is an InputError."""
    from hloviz.parser.proto import is_proto_path, read_proto_text

    if is_proto_path(path):
        return read_proto_text(path)
    data = read_bytes(path)
    try:
        return data.decode("utf-8-sig")  # (a byte-order mark, as Windows editors write one, is no HLO)
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a text file (HLO text expected)") from None


def guess_stage(path: Path, text: str) -> tuple[str, str]:
    """``("pre" | "post", why)`` for a lone HLO file: by its name, else by its content."""
    name = path.name.lower()
    if "before_optimizations" in name or name.startswith(("pre.", "pre_")):
        return "pre", f"its name says so ({path.name})"
    if "after_optimizations" in name or name.startswith(("post.", "post_")):
        return "post", f"its name says so ({path.name})"
    for sign, why in _POST_SIGNS:
        if sign(text):
            return "post", why
    return "pre", "it has no schedule and no fusions"

"""Bracket matching and top-level splitting (``hloviz.parser.text.scan``) jump over a bracketed
group by counting with ``str.find``/``str.count`` where they can, and go token by token
elsewhere (a quote inside, a bracket of another kind out of order, deep nesting). Both paths
must give what a plain character walk gives, and fail where it fails.

The oracle is a stack walk over characters written here (strings skipped with their escapes),
run on random texts built from brackets, commas, quotes and shape-like runs, and on the inputs
that made the fast paths: a 426-array tuple shape, 2,000 nested ``(``.
"""

from __future__ import annotations

import random

import pytest

from hloviz.parser.text.scan import ScanError, find_close, split_top_level

_PAIRS = {"(": ")", "[": "]", "{": "}"}


def _walk_close(text: str, start: int, end: int) -> int | None:
    """Offset of the bracket closing ``text[start]`` within ``text[:end]``; None where the
    brackets go wrong (a mismatch, or never closed)."""
    stack = [_PAIRS[text[start]]]
    i = start + 1
    while i < end:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < end and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= end:
                return None
            i = j + 1
            continue
        if c in _PAIRS:
            stack.append(_PAIRS[c])
        elif c in ")]}":
            if stack[-1] != c:
                return None
            stack.pop()
            if not stack:
                return i
        i += 1
    return None


def _walk_split(text: str) -> list[str] | None:
    """``text`` split at commas outside brackets and strings; None where the brackets go wrong."""
    pieces, depth, piece, i = [], [], 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= len(text):
                return None
            i = j + 1
            continue
        if c in _PAIRS:
            depth.append(c)
        elif c in ")]}":
            if not depth:
                return None
            depth.pop()  # (a plain split counts brackets of all kinds as one depth)
        elif c == "," and not depth:
            pieces.append(text[piece:i])
            piece = i + 1
        i += 1
    return None if depth else [*pieces, text[piece:]]


_ATOMS = ["(", ")", "[", "]", "{", "}", ",", "f32[3,3]{1,0}", "s32[]", " %x", '"a(b]"', '"q\\"("', "pred[2]", "x"]


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        # mostly well-formed: a random tree of groups, then a few random edits
        def group(depth: int) -> str:
            if depth > 3 or rng.random() < 0.3:
                return rng.choice(_ATOMS[7:])
            o = rng.choice("([{")
            return o + ", ".join(group(depth + 1) for _ in range(rng.randint(0, 4))) + _PAIRS[o]
        text = group(0)
        for _ in range(rng.choice([0, 0, 1, 2])):  # a stray bracket or comma, never inside a string
            k = rng.randrange(len(text) + 1)
            if not _inside_a_string(text, k):
                text = text[:k] + rng.choice(_ATOMS[:7]) + text[k:]
        out.append(text)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_find_close_agrees_with_a_character_walk(seed):
    for text in _texts(500, seed):
        for start, c in enumerate(text):
            if c not in _PAIRS or _inside_a_string(text, start):
                continue
            expected = _walk_close(text, start, len(text))
            try:
                got = find_close(text, start)
            except ScanError:
                got = None
            assert got == expected, (text, start)


def _inside_a_string(text: str, at: int) -> bool:
    i, inside = 0, False
    while i < at:
        if text[i] == '"':
            inside = not inside
        elif text[i] == "\\" and inside:
            i += 1
        i += 1
    return inside


@pytest.mark.parametrize("seed", range(4))
def test_split_top_level_agrees_with_a_character_walk(seed):
    for text in _texts(500, seed + 100):
        expected = _walk_split(text)
        try:
            got = [text[a:b] for a, b in split_top_level(text)]
        except ScanError:
            got = None
        assert got == expected, text


def test_the_inputs_that_made_the_fast_paths():
    shape = "(" + ", ".join(f"f32[{k % 7 + 1},3,16]{{2,1,0}}" for k in range(426)) + ")"
    line = f"get-tuple-element({shape} %arg_tuple.2), index=5"
    start = line.index("(")
    assert find_close(line, start) == _walk_close(line, start, len(line)) == line.rindex(")", 0, line.index(", index"))
    inner = line.index("(", start + 1)
    assert find_close(line, inner) == _walk_close(line, inner, len(line))
    elements = shape[1:-1]
    assert [elements[a:b] for a, b in split_top_level(elements)] == _walk_split(elements)
    deep = "(" * 2000 + ")" * 2000
    assert find_close(deep, 0) == _walk_close(deep, 0, len(deep)) == len(deep) - 1
    assert find_close(deep, 1500) == _walk_close(deep, 1500, len(deep)) == 4000 - 1 - 1500

"""Low-level scanning helpers shared by the parser: bracket matching and top-level splitting.

HLO text nests brackets (tuple shapes, literals, attribute values) and quotes strings that may
contain any bracket. These helpers jump from bracket to bracket with one compiled regular
expression instead of walking characters in Python, which is what keeps parsing fast.
"""

from __future__ import annotations

import re

# A quoted string (with C escapes), or any bracket, or a comma.
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[][(){}]|,')
_CLOSE = {"(": ")", "[": "]", "{": "}"}


class ScanError(Exception):
    """Raised with the offset (into the scanned text) where brackets went wrong."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


def find_close(text: str, start: int) -> int:
    """Offset of the bracket closing the one at ``text[start]``.

    Raises :class:`ScanError` at the end of text (unclosed) or at a mismatched bracket.
    """
    stack = [_CLOSE[text[start]]]
    for m in _TOKEN.finditer(text, start + 1):
        tok = m.group()
        c = tok[0]
        if c == '"' or c == ",":
            continue
        if c in "([{":
            stack.append(_CLOSE[c])
        elif c == stack[-1]:
            stack.pop()
            if not stack:
                return m.start()
        else:
            raise ScanError(f"unexpected '{c}', expected '{stack[-1]}'", m.start())
    # An unterminated string is the likelier cause when a quote remains.
    quote = _unterminated_quote(text, start)
    if quote is not None:
        raise ScanError("unterminated string", quote)
    raise ScanError(f"'{text[start]}' is never closed", start)


def _unterminated_quote(text: str, start: int) -> int | None:
    i = start
    while True:
        q = text.find('"', i)
        if q < 0:
            return None
        m = re.compile(r'"(?:[^"\\\n]|\\.)*"').match(text, q)
        if not m:
            return q
        i = m.end()


def split_top_level(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` at commas outside brackets and strings; return (start, end) spans."""
    if end is None:
        end = len(text)
    spans = []
    depth = 0
    piece = start
    for m in _TOKEN.finditer(text, start, end):
        c = m.group()[0]
        if c == '"':
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                raise ScanError(f"unexpected '{c}'", m.start())
        elif depth == 0:  # a comma
            spans.append((piece, m.start()))
            piece = m.end()
    if depth != 0:
        raise ScanError("unbalanced brackets", end - 1 if end > start else start)
    spans.append((piece, end))
    return spans


def is_balanced(s: str) -> bool:
    """Cheap check that a short text has no unbalanced brackets or quotes (fast-path guard)."""
    return (
        s.count("{") == s.count("}")
        and s.count("(") == s.count(")")
        and s.count("[") == s.count("]")
        and s.count('"') % 2 == 0
        and "\\" not in s
    )


def net_depth(text: str) -> int:
    """Opening minus closing brackets outside strings: > 0 means the text continues."""
    depth = 0
    for m in _TOKEN.finditer(text):
        c = m.group()[0]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
    return depth

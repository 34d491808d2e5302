"""Low-level scanning helpers shared by the parser: bracket matching and top-level splitting.

HLO text nests brackets (tuple shapes, literals, attribute values) and quotes strings that may
contain any bracket. These helpers jump from bracket to bracket with one compiled regular
expression instead of walking characters in Python, which is what keeps parsing fast.
"""

from __future__ import annotations

import re

from ...ir import quoted_string_pattern

# A quoted string (with C escapes), or a run of one bracket as one token: hostile input such as
# 10,000 "(" in a row then costs one step instead of 10,000.
_RUN = re.compile(quoted_string_pattern() + r'|\(+|\)+|\[+|\]+|\{+|\}+')
_RUN_OR_COMMA = re.compile(_RUN.pattern + "|,")
_STRING = re.compile(quoted_string_pattern())
_CLOSE = {"(": ")", "[": "]", "{": "}"}


class ScanError(Exception):
    """Raised with the offset (into the scanned text) where brackets went wrong."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


def find_close(text: str, start: int, limit: int | None = None) -> int:
    """Offset of the bracket closing the one at ``text[start]``, looking no further than ``limit``.

    Raises :class:`ScanError` at the end of text (unclosed) or at a mismatched bracket.
    """
    closers = [_CLOSE[text[start]]]  # the expected closer of each open run of brackets, innermost last
    counts = [1]  # how many brackets each run opened
    end = len(text) if limit is None else limit
    for m in _RUN.finditer(text, start + 1, end):
        tok = m.group()
        c = tok[0]
        if c == '"':
            continue
        if c in "([{":
            closer = _CLOSE[c]
            if closers and closers[-1] == closer:
                counts[-1] += len(tok)
            else:
                closers.append(closer)
                counts.append(len(tok))
            continue
        left = len(tok)
        offset = m.start()
        while left:
            if not closers or closers[-1] != c:
                expected = closers[-1] if closers else None
                raise ScanError(f"unexpected '{c}', expected '{expected}'", offset)
            take = min(left, counts[-1])
            counts[-1] -= take
            left -= take
            offset += take
            if counts[-1] == 0:
                closers.pop()
                counts.pop()
                if not closers:
                    return offset - 1
    # An unterminated string is the likelier cause when a quote remains.
    quote = unterminated_quote(text, start, end)
    if quote is not None:
        raise ScanError("unterminated string", quote)
    raise ScanError(f"'{text[start]}' is never closed", start)


def unterminated_quote(text: str, start: int = 0, end: int | None = None) -> int | None:
    """Offset of the first quote in ``text[start:end]`` whose string does not end on its line.

    The parser's strings never span lines. A statement joined from several lines must be
    checked with this: a stray quote there pairs with a quote on a later line once the
    statement is printed on one line, and the printed text would read differently.
    """
    if end is None:
        end = len(text)
    i = start
    while True:
        q = text.find('"', i, end)
        if q < 0:
            return None
        m = _STRING.match(text, q, end)
        if not m:
            return q
        i = m.end()


def split_top_level(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Split ``text[start:end]`` at commas outside brackets and strings; return (start, end) spans."""
    if end is None:
        end = len(text)
    spans: list[tuple[int, int]] = []
    depth = 0
    piece = start
    for m in _RUN_OR_COMMA.finditer(text, start, end):
        tok = m.group()
        c = tok[0]
        if c == '"':
            continue
        if c in "([{":
            depth += len(tok)
        elif c in ")]}":
            if len(tok) > depth:
                raise ScanError(f"unexpected '{c}'", m.start() + depth)
            depth -= len(tok)
        elif depth == 0:  # a comma
            spans.append((piece, m.start()))
            piece = m.end()
    if depth != 0:
        raise ScanError("unbalanced brackets", end - 1 if end > start else start)
    spans.append((piece, end))
    return spans


def net_depth(text: str) -> int:
    """Opening minus closing brackets outside strings: > 0 means the text continues."""
    depth = 0
    for m in _RUN.finditer(text):
        tok = m.group()
        c = tok[0]
        if c in "([{":
            depth += len(tok)
        elif c != '"':
            depth -= len(tok)
    return depth

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
    end = len(text) if limit is None else limit
    found = _close_by_counting(text, start, end)
    return found if found is not None else _close_by_tokens(text, start, end)


def _close_by_counting(text: str, start: int, end: int) -> int | None:
    """:func:`find_close` where no quote comes before the closing bracket and each other kind of
    bracket opens and closes in nesting order between: found by ``str.find`` and ``str.count``
    from one closer of its kind to the next (a tuple shape of 426 arrays, printed on each of the
    1,700 ``get-tuple-element`` lines of a Keras application's loop of steps, is one step instead
    of 3,000 tokens: 14 s of a 17 MB module's parse), then checked to nest (:func:`_nested`).
    None where it cannot tell."""
    opener = text[start]
    closer = _CLOSE[opener]
    depth, pos = 1, start
    for _ in range(_STEPS):
        nxt = text.find(closer, pos + 1, end)
        if nxt < 0:
            return None
        depth += text.count(opener, pos + 1, nxt) - 1
        pos = nxt
        if not depth:
            break
    else:
        return None  # (deeply nested: runs of brackets go faster token by token)
    inside = text[start + 1 : pos]
    return pos if '"' not in inside and _nested(inside) else None


#: How many closing brackets of its kind :func:`_close_by_counting` steps over (a nested tuple
#: shape: a few): 100,000 ``(`` then as many ``)`` took one step per bracket at each of 64 levels.
_STEPS = 32


def _nested(inside: str) -> bool:
    """Do the brackets of every kind in ``inside`` nest, each closing the last one open? Its
    brackets alone, with each innermost pair removed at once, pass by pass (a tuple shape: three
    passes at C speed); more passes than :data:`_STEPS`: not known, False. The last few checked
    are kept (a loop's thousand reads of its tuple write one operand list), short ones only."""
    if inside in _CHECKED:
        return True
    if not _nests(inside):
        return False
    if len(inside) <= _KEPT_CHARS:
        if len(_CHECKED) >= 64:
            _CHECKED.clear()
        _CHECKED.add(inside)
    return True


#: Texts :func:`_nested` found nesting, each at most :data:`_KEPT_CHARS` long.
_CHECKED: set[str] = set()
_KEPT_CHARS = 1 << 16


def _nests(inside: str) -> bool:
    """:func:`_nested`'s check."""
    left = _NOT_A_BRACKET.sub("", inside)
    for _ in range(_STEPS):
        if not left:
            return True
        fewer = _INNERMOST.sub("", left)
        if len(fewer) == len(left):
            return False
        left = fewer
    return False


_NOT_A_BRACKET = re.compile(r"[^()\[\]{}]+")
_INNERMOST = re.compile(r"\(\)|\[\]|\{\}")


def _close_by_tokens(text: str, start: int, end: int) -> int:
    """:func:`find_close` bracket run by bracket run (strings skipped), raising at the first mismatch."""
    closers = [_CLOSE[text[start]]]  # the expected closer of each open run of brackets, innermost last
    counts = [1]  # how many brackets each run opened
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
    """Split ``text[start:end]`` at commas outside brackets and strings; return (start, end) spans.

    Jumps over each bracketed group with :func:`_close_by_counting` (a ``get-tuple-element``'s
    operand written with its 426-array tuple shape is one jump); where a quote or a stray
    bracket comes first, or a group cannot be closed so, it goes token by token and raises
    as that does."""
    if end is None:
        end = len(text)
    spans: list[tuple[int, int]] = []
    piece = pos = start
    while (m := _STOP.search(text, pos, end)) is not None:
        at = m.start()
        if m.group() == ",":
            spans.append((piece, at))
            piece = pos = at + 1
        elif m.group() in "([{" and (close := _close_by_counting(text, at, end)) is not None:
            pos = close + 1
        else:
            return _split_by_tokens(text, start, end)
    spans.append((piece, end))
    return spans


_STOP = re.compile(r'[(\[{,"\)\]}]')


def _split_by_tokens(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """:func:`split_top_level` bracket run by bracket run, strings skipped."""
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

"""A second reading for HLO laid out in unusual ways: one statement per line, whatever the input.

XLA's lexer lets a line break (or none) fall between any two tokens: a computation on one line,
two instructions on one line, an instruction split after every token, attributes continued on
a line that starts with ``,``. The line-oriented parser reads what XLA prints and what people
usually write; when it stops on a text, :func:`reflow` rewrites the text at token level into
one statement per line and the parse is tried once more (see :func:`hloviz.parser.parse`).
Only the layout changes: tokens, and the spacing inside each statement, stay as they were;
comments become spaces. ``line_of`` maps each rewritten line back to the line it starts on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..ir import quoted_string_pattern

# A quoted string, a comment, a run of spaces, "->", one bracket or punctuation mark, or a word.
# An unterminated string runs to the end of its line and an unterminated comment to the end of
# the text, as one token each: every token is found in one step, so hostile text costs linear time
# (the string unrolled and possessive, :func:`hloviz.ir.quoted_string_pattern`, minus its closing
# quote, which may be missing).
_TOKEN = re.compile(
    r'(?P<s>' + quoted_string_pattern()[:-1] + r'"?)|(?P<c>/\*.*?(?:\*/|\Z)|//[^\n]*)|(?P<w>\s+)|(?P<p>->|[()\[\]{},=])'
    r'|(?P<x>[^\s"()\[\]{},=/]+|/)',
    re.DOTALL,
)
_OPEN, _CLOSE = "([{", ")]}"
# Tokens after which a word at the top level continues the statement instead of starting one.
_CONTINUES = frozenset({",", "=", "->", "HloModule", "ENTRY"})
#: A statement of more tokens ends the second reading there (so it fails, and the first reading's
#: error stands). XLA prints big constants on one line, which the first reading takes at full
#: speed; only text that is not HLO, such as 50 MB of "( ( (", makes a statement this long here.
MAX_STATEMENT_TOKENS = 1 << 18


def statements(text: str) -> Iterator[tuple[str, int]]:
    """``text`` one HLO statement at a time, each with the original 1-based line it starts on.

    Statements are the module header, each computation header (up to its ``{``), each
    instruction, and each closing ``}`` with any attributes after it. A generator: the tokens are
    read one ahead of the statement being built, so a text the parser rejects at its start
    costs no more than that start, however long the text. The statements end, early, with one of
    more than :data:`MAX_STATEMENT_TOKENS` tokens.
    """
    current: list[str] = []
    start_line = line_no = 1
    depth = 0  # open brackets, a computation body's brace included
    in_computation = False  # inside a body: its '{' is the outermost open bracket
    prev: str | None = None  # the previous significant token
    prev_end = -1  # where it ended, to tell "f32[2]{1,0}" (a layout) from "-> f32[2] {" (a body)
    started = False  # the current statement has a token (not only spaces)
    held: tuple[str, str, int] | None = None  # the significant token waiting for the one after it
    spaces: list[tuple[str, str]] = []  # spaces and comments after ``held``
    tokens = 0  # significant tokens in the current statement

    def take(kind: str, tok: str, pos: int, after: str | None) -> Iterator[tuple[str, int]]:
        """Add one significant token; the statement it ends, if any."""
        nonlocal current, started, start_line, depth, in_computation, prev, prev_end, tokens
        if kind == "x" and depth == 0:  # the header, or a new computation
            breaks = prev is not None and prev not in _CONTINUES
        elif kind == "x" and in_computation and depth == 1:  # "[ROOT] name =" starts an instruction
            breaks = tok == "ROOT" or (after == "=" and prev not in (",", "ROOT"))
        else:
            breaks = tok == "}" and in_computation and depth == 1
        if breaks and started:
            yield "".join(current).strip(), start_line
            current, started = [], False
        if not started:
            start_line, started, tokens = line_no, True, 0
        current.append(tok)
        tokens += 1
        end = False
        if tok in _OPEN:
            depth += 1
            if tok == "{" and depth == 1 and prev != "=" and not (prev == "]" and prev_end == pos):
                in_computation = end = True  # not a value (after '=') nor a layout (right after ']')
        elif tok in _CLOSE:
            if depth == 0:  # closes nothing: the statement is wrong, and the reader says where
                end = True
            depth = max(0, depth - 1)
            if tok == "}" and in_computation and depth == 0:
                in_computation = False
                end = after != ","
        if end:
            yield "".join(current).strip(), start_line
            current, started = [], False
        prev, prev_end = tok, pos + len(tok)

    def space(kind: str, tok: str) -> None:
        nonlocal line_no, current
        newlines = tok.count("\n")
        line_no += newlines
        current.append(" " if newlines or kind == "c" else tok)
        if len(current) > 65536:  # a statement of millions of tokens: keep it one string
            current = ["".join(current)]

    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "x"
        if kind in ("w", "c"):
            if held is None:
                space(kind, m.group())
            else:
                spaces.append((kind, m.group()))
            continue
        if held is not None:
            yield from take(*held, m.group())
            for k, t in spaces:
                space(k, t)
            spaces.clear()
            if tokens >= MAX_STATEMENT_TOKENS:
                yield "".join(current).strip(), start_line
                return
        held = (kind, m.group(), m.start())
    if held is not None:
        yield from take(*held, None)
        for k, t in spaces:
            space(k, t)
    if started:
        yield "".join(current).strip(), start_line


def reflow(text: str) -> tuple[str, list[int]]:
    """``text`` with one HLO statement per line, and the original 1-based line of each new line
    (all of :func:`statements` at once)."""
    pairs = list(statements(text))
    return "\n".join(s for s, _ in pairs) + "\n", [line for _, line in pairs]

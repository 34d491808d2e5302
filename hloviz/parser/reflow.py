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
from itertools import pairwise

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


def reflow(text: str) -> tuple[str, list[int]]:
    """``text`` with one HLO statement per line, and the original 1-based line of each new line.

    Statements are the module header, each computation header (up to its ``{``), each
    instruction, and each closing ``}`` with any attributes after it.
    """
    tokens = [(m.lastgroup, m.group(), m.start()) for m in _TOKEN.finditer(text)]
    significant = [k for k, t in enumerate(tokens) if t[0] not in ("w", "c")]
    following = dict(pairwise(significant))
    out: list[str] = []
    line_of: list[int] = []
    current: list[str] = []
    start_line = line_no = 1
    depth = 0  # open brackets, a computation body's brace included
    in_computation = False  # inside a body: its '{' is the outermost open bracket
    prev: str | None = None  # the previous significant token
    prev_end = -1  # where it ended, to tell "f32[2]{1,0}" (a layout) from "-> f32[2] {" (a body)

    started = False  # the current statement has a token (not only spaces)

    def flush() -> None:
        nonlocal current, started
        if started:
            out.append("".join(current).strip())
            line_of.append(start_line)
        current = []
        started = False

    for k, (kind, tok, pos) in enumerate(tokens):
        if kind in ("w", "c"):
            newlines = tok.count("\n")
            line_no += newlines
            current.append(" " if newlines or kind == "c" else tok)
            continue
        after = tokens[following[k]][1] if k in following else None
        if kind == "x" and depth == 0:  # the header, or a new computation
            breaks = prev is not None and prev not in _CONTINUES
        elif kind == "x" and in_computation and depth == 1:  # "[ROOT] name =" starts an instruction
            breaks = tok == "ROOT" or (after == "=" and prev not in (",", "ROOT"))
        else:
            breaks = tok == "}" and in_computation and depth == 1
        if breaks:
            flush()
        if not started:
            start_line = line_no
            started = True
        current.append(tok)
        if tok in _OPEN:
            depth += 1
            if tok == "{" and depth == 1 and prev != "=" and not (prev == "]" and prev_end == pos):
                in_computation = True  # not a value (after '=') nor a layout (right after ']')
                flush()
        elif tok in _CLOSE:
            depth = max(0, depth - 1)
            if tok == "}" and in_computation and depth == 0:
                in_computation = False
                if after != ",":
                    flush()
        prev, prev_end = tok, pos + len(tok)
    flush()
    return "\n".join(out) + "\n", line_of

"""A second reading for HLO laid out in unusual ways: one statement per line, whatever the input.

XLA's lexer lets a line break (or none) fall between any two tokens: a computation on one line,
two instructions on one line, an instruction split after every token, attributes continued on
a line that starts with ``,``. The line-oriented parser reads what XLA prints and what people
usually write; when it stops on a text, :func:`statements` rewrites the text at token level into
one statement per line, lazily as the second parse asks for them (see :func:`hloviz.parser.parse`).
Only the layout changes: tokens, and the spacing inside each statement, stay as they were;
comments become spaces. Each statement comes with the 1-based line it starts on in the input.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ...ir import quoted_string_pattern

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
    flow = _Flow()
    held: tuple[str, str, int] | None = None  # the significant token waiting for the one after it
    spaces: list[tuple[str, str]] = []  # spaces and comments after ``held``
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "x"
        if kind in ("w", "c"):
            if held is None:
                flow.space(kind, m.group())
            else:
                spaces.append((kind, m.group()))
            continue
        if held is not None:
            yield from flow.take(*held, m.group())
            for k, t in spaces:
                flow.space(k, t)
            spaces.clear()
            if flow.tokens >= MAX_STATEMENT_TOKENS:
                yield from flow.flush()
                return
        held = (kind, m.group(), m.start())
    if held is not None:
        yield from flow.take(*held, None)
        for k, t in spaces:
            flow.space(k, t)
    yield from flow.flush()


class _Flow:
    """The statement being built and what decides where it ends (see :func:`statements`)."""

    __slots__ = ("current", "started", "tokens", "start_line", "line_no", "depth", "in_computation", "prev",
                 "prev_end")

    def __init__(self) -> None:
        self.current: list[str] = []
        self.started = False  # the current statement has a token (not only spaces)
        self.tokens = 0  # significant tokens in the current statement
        self.start_line = self.line_no = 1
        self.depth = 0  # open brackets, a computation body's brace included
        self.in_computation = False  # inside a body: its '{' is the outermost open bracket
        self.prev: str | None = None  # the previous significant token
        self.prev_end = -1  # where it ended, to tell "f32[2]{1,0}" (a layout) from "-> f32[2] {" (a body)

    def flush(self) -> list[tuple[str, int]]:
        """The current statement, ended (none if it has no token)."""
        done = [("".join(self.current).strip(), self.start_line)] if self.started else []
        self.current, self.started, self.tokens = [], False, 0
        return done

    def take(self, kind: str, tok: str, pos: int, after: str | None) -> list[tuple[str, int]]:
        """Add one significant token (``after`` is the next one); the statements it ends."""
        done = self.flush() if self._starts_statement(kind, tok, after) else []
        if not self.started:
            self.start_line, self.started = self.line_no, True
        self.current.append(tok)
        self.tokens += 1
        prev, end = self.prev, False
        if tok in _OPEN:
            self.depth += 1
            if tok == "{" and self.depth == 1 and prev != "=" and not (prev == "]" and self.prev_end == pos):
                self.in_computation = end = True  # not a value (after '=') nor a layout (right after ']')
        elif tok in _CLOSE:
            end = self.depth == 0  # closes nothing: the statement is wrong, and the reader says where
            self.depth = max(0, self.depth - 1)
            if tok == "}" and self.in_computation and self.depth == 0:
                self.in_computation = False
                end = after != ","
        if end:
            done += self.flush()
        self.prev, self.prev_end = tok, pos + len(tok)
        return done

    def _starts_statement(self, kind: str, tok: str, after: str | None) -> bool:
        if kind == "x" and self.depth == 0:  # the header, or a new computation
            return self.prev is not None and self.prev not in _CONTINUES
        if kind == "x" and self.in_computation and self.depth == 1:  # "[ROOT] name =" starts an instruction
            return tok == "ROOT" or (after == "=" and self.prev not in (",", "ROOT"))
        return tok == "}" and self.in_computation and self.depth == 1

    def space(self, kind: str, tok: str) -> None:
        """Add spaces or a comment: one space where they held a newline or were a comment."""
        newlines = tok.count("\n")
        self.line_no += newlines
        self.current.append(" " if newlines or kind == "c" else tok)
        if len(self.current) > 65536:  # a statement of millions of tokens: keep it one string
            self.current = ["".join(self.current)]


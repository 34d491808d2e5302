"""Text made of short lines costs memory by its size, not by its number of lines (issue 13).

The parser used to split the whole text into a list of lines before reading the first one: 8 bytes
a line for the list plus an object a line, so 50 MB of blank lines took 477 MB and 50 MB of ``ab``
lines 10 GB; its second reading (:mod:`hloviz.parser.text.reflow`) made a list of every token of the
text before trying the first statement (50 MB of ``}`` lines: 80 s, 8.5 GB). Now lines are split
a block at a time (:class:`hloviz.parser.text.lines.Lines`), runs of blank and comment lines are
stepped over in one match, and the second reading makes statements only as the reader asks.
These tests hold the parse of every such shape to a small multiple of the text, check that the
block-wise lines read exactly as ``str.split`` does, and that the second reading stops early.
"""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hloviz
import hloviz.parser
from hloviz.errors import HloParseError
from hloviz.parser.state import blank_comments
from hloviz.parser.text import lines as S
from hloviz.parser.text.reflow import MAX_STATEMENT_TOKENS, statements
from hloviz.source import SourceText

from . import hostile_inputs as H

#: Characters of each hostile text (8 MB: the old line list alone was 64 MB of it for blank lines).
SIZE = 8_000_000
#: Peak traced memory of the parse allowed per character of the text (the text itself exists
#: before the parse and is not counted), plus a fixed allowance: a few split blocks of lines and
#: one statement of the second reading, whatever the size of the text.
BYTES_PER_CHAR = 2
FIXED = 24 << 20


@pytest.mark.parametrize("name", sorted(H.SHORT_LINE_SHAPES))
def test_text_of_short_lines_costs_memory_by_its_size(name):
    text = H.SHORT_LINE_SHAPES[name](SIZE)
    tracemalloc.start()
    try:
        try:
            hloviz.parse(text, "short.hlo")
        except HloParseError:
            pass  # most shapes are not HLO: what matters is what finding that out cost
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    allowed = BYTES_PER_CHAR * len(text) + FIXED
    assert peak <= allowed, f"{name}: {peak / 2**20:.1f} MB traced for {len(text) / 2**20:.1f} MB of text"


def test_blank_lines_around_a_module_leave_it_and_its_line_numbers_alone():
    m = hloviz.parse("\n" * 300_000 + H.SMALL + "\n  \n// note\n" * 100_000, "padded.hlo")
    assert m.name == "small" and [c.name for c in m.computations] == ["fused_computation", "main"]
    assert m.entry.instruction("f").line == 300_000 + 10


def test_an_error_after_a_million_blank_lines_points_at_its_line():
    with pytest.raises(HloParseError) as err:
        hloviz.parse(H.SMALL + "\n" * 1_000_000 + "oops\n", "late.hlo")
    span = err.value.span
    assert span is not None and span.line == H.SMALL.count("\n") + 1_000_000 + 1 and span.source_line == "oops"


def test_the_second_reading_stops_where_the_reader_stops(monkeypatch):
    pulled = 0
    real = hloviz.parser.statements

    def counting(text: str):
        nonlocal pulled
        for pair in real(text):
            pulled += 1
            yield pair

    monkeypatch.setattr(hloviz.parser, "statements", counting)
    with pytest.raises(HloParseError):
        hloviz.parse("}\n" * 200_000, "braces.hlo")
    assert 1 <= pulled <= 4


def test_a_statement_of_too_many_tokens_ends_the_second_reading():
    text = "( " * (MAX_STATEMENT_TOKENS + 1000) + "\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n"
    out = list(statements(text))
    assert len(out) == 1 and out[0][0].count("(") == MAX_STATEMENT_TOKENS and out[0][1] == 1


def test_a_stray_closing_bracket_ends_its_statement():
    assert [s for s, _ in statements("} } ENTRY e { ROOT p = f32[] parameter(0) }")][:2] == ["}", "}"]


# --- Lines read exactly as str.split ---------------------------------------------------------

_PIECES = ["", " ", "\t", "  x", "// c", "/* a */", "/* a */ x", "}", "%a = f32[] constant(1)", "/* open",
           "*/", '"//"', "\u2028", "  // c /* d */"]


def _skippable_lines(text: str) -> list[bool]:
    """Which lines of ``text`` hold nothing but blanks and comments, by a scan written here.

    HLO comments are C-style: ``/* … */`` (over lines too) and ``// …`` to the end of the line,
    neither inside a ``"…"`` string. The oracle for the reader's skipping, independent of
    hloviz's own comment blanking.
    """
    out: list[str] = []
    i, n, state = 0, len(text), "code"
    while i < n:
        c, pair = text[i], text[i:i + 2]
        if state == "block":
            if pair == "*/":
                out.append("  ")
                i, state = i + 2, "code"
                continue
            out.append("\n" if c == "\n" else " ")
        elif state == "line":
            if c == "\n":
                out.append(c)
                state = "code"
            else:
                out.append(" ")
        elif state == "string":
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"' or c == "\n":
                state = "code"
        elif pair == "/*" or pair == "//":
            out.append("  ")
            i, state = i + 2, "block" if pair == "/*" else "line"
            continue
        else:
            out.append(c)
            if c == '"':
                state = "string"
        i += 1
    return [not line.strip() for line in "".join(out).split("\n")]


def _small_blocks(chars: int, kept: int, statements: int):
    saved = S._BLOCK_CHARS, S._KEPT_BLOCKS, S._BLOCK_STATEMENTS
    S._BLOCK_CHARS, S._KEPT_BLOCKS, S._BLOCK_STATEMENTS = chars, kept, statements
    return saved


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40), st.lists(st.integers(0, 45), max_size=60),
       st.integers(1, 64), st.integers(1, 3))
def test_lines_read_in_any_order_as_split_gives_them(pieces, order, chars, kept):
    text = blank_comments("\n".join(pieces))
    expected = text.split("\n")
    saved = _small_blocks(chars, kept, 2)
    try:
        lines = S.Lines.of_text(text)
        assert len(lines) == len(expected)
        for i in order:
            assert lines.has(i) == (i < len(expected))
            if i < len(expected):
                assert lines[i] == expected[i]
                block, first = lines.block(i)
                assert block[i - first] == expected[i]
    finally:
        S._BLOCK_CHARS, S._KEPT_BLOCKS, S._BLOCK_STATEMENTS = saved


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40), st.integers(1, 64))
def test_skipping_steps_over_exactly_the_lines_the_reader_would_skip(pieces, chars):
    source = "\n".join(pieces)
    skippable = _skippable_lines(source)
    text = blank_comments(source)
    expected = text.split("\n")
    saved = _small_blocks(chars, 1, 2)
    try:
        lines = S.Lines.of_text(text)
        i = 0
        while i < len(expected):
            j = lines.skip(i)
            assert j >= i
            assert all(skippable[i:j]), (i, j, expected)
            # it stops at the first line with something else, or at the last line (no newline)
            assert j == len(expected) - 1 or not skippable[j], (i, j, expected)
            assert lines[j] == expected[j]
            i = j + 1
    finally:
        S._BLOCK_CHARS, S._KEPT_BLOCKS, S._BLOCK_STATEMENTS = saved


@given(st.lists(st.sampled_from(_PIECES), max_size=40), st.lists(st.integers(-2, 45), max_size=30))
def test_source_lines_are_found_without_splitting(pieces, order):
    text = "\n".join(pieces)
    expected = text.split("\n")
    source = SourceText(text, "t.hlo")
    assert source.line_count() == len(expected)
    for i in order:
        assert source.line(i) == (expected[i] if 0 <= i < len(expected) else "")
        span = source.span(i, 2)
        k = max(0, min(i, len(expected) - 1))
        assert span.line == k + 1 and span.source_line == expected[k]


def test_statements_are_pulled_one_block_at_a_time():
    saved = _small_blocks(1 << 18, 4, 3)
    try:
        lines = S.Lines.of_statements(iter([(f"s{k}", k + 1) for k in range(10)]))
        assert lines.has(0) and lines[0] == "s0" and list(lines.line_of) == [1]  # one pulled, no more
        assert lines[9] == "s9" and not lines.has(10) and len(lines) == 10
        assert list(lines.line_of) == list(range(1, 11))
    finally:
        S._BLOCK_CHARS, S._KEPT_BLOCKS, S._BLOCK_STATEMENTS = saved


def test_what_the_instruction_scan_read_is_never_split_into_lines(monkeypatch):
    # a module whose entry comes last, with a comment in its header as XLA writes in long
    # signatures: the scan reads the 2 MB of computations before it from the text; the line
    # reader that takes the header over must not split every block before it to find its line
    body = "".join(f"%f.{k} (p.{k}: f32[4]) -> f32[4] {{\n  %p.{k} = f32[4]{{0}} parameter(0)\n"
                   f"  ROOT %n.{k} = f32[4]{{0}} negate(%p.{k}), metadata={{op_name=\"jit(f)/neg\"}}\n}}\n\n"
                   for k in range(15000))
    text = ("HloModule m\n\n" + body + "ENTRY %e (a: f32[4], /*index=1*/b: f32[4]) -> f32[4] {\n"
            "  %a = f32[4]{0} parameter(0)\n  %b = f32[4]{0} parameter(1)\n  ROOT %c = f32[4]{0} add(%a, %b)\n}\n")
    assert len(text) > 8 * S._BLOCK_CHARS
    split = S.Lines._split_next
    calls: list[int] = []

    def counting(self):
        calls.append(1)
        split(self)

    monkeypatch.setattr(S.Lines, "_split_next", counting)
    module = hloviz.parse(text)
    assert len(module.computations) == 15001 and module.entry.root.opcode == "add"
    assert len(calls) <= 2, f"{len(calls)} blocks split"

"""Escaping in one place: DOT strings, DOT HTML labels, HTML text, colours."""

from __future__ import annotations

import pytest

from hloviz.render.quoting import colour, dot_html, dot_string, html_text, printable, shorten

EVIL = ['a"b', "<script>alert(1)</script>", "back\\slash\\n", "new\nline", "&lt;amp&amp", "]]>", "--x--",
        "\x01ctl\x7f", "tab\there", "é✓", "\ud800lone"]


def test_printable_writes_control_characters_as_escapes():
    assert printable("a\nb\tc\rd") == "a\\nb\\tc\\rd"
    assert printable("\x00\x1b\x7f\x85") == "\\x00\\x1b\\x7f\\x85"
    assert printable("\ud800\ufffe") == "\\ud800\\ufffe"
    assert printable("plain é ✓ 漢") == "plain é ✓ 漢"


@pytest.mark.parametrize("text", EVIL)
def test_no_escape_leaves_raw_markup_or_controls(text):
    for out in (dot_html(text), html_text(text)):
        assert "<" not in out and ">" not in out and '"' not in out
        assert not any(ord(c) < 0x20 for c in out)
    quoted = dot_string(text)
    assert quoted.startswith('"') and quoted.endswith('"')
    body = quoted[1:-1]
    # every quote inside is escaped, and no line breaks survive
    assert '"' not in body.replace('\\"', "")
    assert "\n" not in body


def test_dot_string_doubles_backslashes_and_encodes_ampersands():
    assert dot_string('a\\b"c') == '"a\\\\b\\"c"'
    assert dot_string("&lt;") == '"&amp;lt;"'


def test_shorten_keeps_both_ends():
    assert shorten("abcdefghij", 5) == "ab…ij"
    assert shorten("abc", 5) == "abc"


@pytest.mark.parametrize("good", ["#ffffff", "#A0b1C2", "#11223344", "white"])
def test_colour_accepts_colours(good):
    assert colour(good) == good


@pytest.mark.parametrize("bad", ['#fff" onload="x', "red;", "", "#12345", "url(#x)"])
def test_colour_rejects_anything_else(bad):
    with pytest.raises(ValueError):
        colour(bad)

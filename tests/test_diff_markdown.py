"""``diff --format markdown`` is pasted into PR comments: text from the HLO must stay inert there.

The hostile strings are custom-call targets and backend configs (free text in HLO) and the
labels of the two sides; each would do something on GitHub if it reached the comment as prose:
ping a team, link, typeset math, render an emoji, inject HTML, close the ``<details>`` block, or
break a table row. The oracle is an independent CommonMark parser with GFM tables
(markdown-it-py): in the HTML it renders, every hostile string must appear inside a ``<code>``
element — GitHub turns nothing inside code into a mention, reference, link, math or emoji — and
nowhere outside one, and no element the report does not write itself may appear.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

import hloviz
from hloviz.analysis.diff import diff_modules
from hloviz.analysis.diff.report import to_markdown
from hloviz.ir import escape_string

from . import run_cli

markdown_it = pytest.importorskip("markdown_it")

#: Each would be live as markdown prose on GitHub (the comment says how).
HOSTILE = [
    "@org/team",  # a mention: pings every member
    "https://evil.example/p?q=1",  # an autolink
    "www.evil.example",  # an autolink without a scheme
    "$x^2$",  # inline math
    "a|b",  # a cell separator: breaks the table row
    "``tick`` `x`",  # ends a code span fenced too short
    "<b>bold</b><img src=x>",  # raw HTML
    "#123",  # an issue reference
    ":tada:",  # an emoji shortcode
    "**strong** _em_ ~~del~~",  # emphasis and strikethrough
    "[link](https://x.example)",  # a link
    "</details>",  # closes the report's collapsible section
    "\\|pipe",  # an escaped pipe: a backslash before the pipe
]
#: Fragments of the strings above that must never be prose (outside <code>) in the rendered HTML.
NEVER_PROSE = ["@org", "evil.example", "x.example", "$x", "#123", ":tada:", "tick", "bold", "strong", "del~",
               "link", "pipe", "img"]
#: The elements the report itself writes (headline, table, lists, <details>, the footer).
OWN_ELEMENTS = {"h3", "p", "strong", "table", "thead", "tbody", "tr", "th", "td", "code", "ul", "li",
                "details", "summary", "sub", "blockquote"}


def _module(variant: int) -> str:
    """Custom-calls whose targets (and backend configs) are the hostile strings; the second
    module changes every backend config and adds a custom-call per string."""
    lines = ["HloModule m", "", "ENTRY %main (p: f32[4]) -> f32[4] {", "  %p = f32[4]{0} parameter(0)"]
    prev = "p"
    for k, s in enumerate(HOSTILE):
        config = escape_string(s + ("!" if variant else ""))
        lines.append(f'  %c{k} = f32[4]{{0}} custom-call(%{prev}), custom_call_target="{escape_string(s)}", '
                     f'backend_config="{config}"')
        prev = f"c{k}"
    if variant:
        for k, s in enumerate(HOSTILE):
            lines.append(f'  %n{k} = f32[4]{{0}} custom-call(%{prev}), custom_call_target="{escape_string(s)}"')
            prev = f"n{k}"
    lines += [f"  ROOT %out = f32[4]{{0}} copy(%{prev})", "}"]
    return "\n".join(lines) + "\n"


class _Html(HTMLParser):
    """Text inside and outside <code>, and every element, of the rendered comment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.code_depth = 0
        self.code: list[str] = []
        self.prose: list[str] = []
        self.elements: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.elements.add(tag)
        if tag == "code":
            self.code_depth += 1
            self.code.append("")

    def handle_endtag(self, tag):
        if tag == "code":
            self.code_depth -= 1

    def handle_data(self, data):
        if self.code_depth:
            self.code[-1] += data
        else:
            self.prose.append(data)


def rendered(markdown: str) -> _Html:
    html = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown)
    parsed = _Html()
    parsed.feed(html)
    return parsed


@pytest.fixture(scope="module")
def comment() -> str:
    d = diff_modules(hloviz.parse(_module(0)), hloviz.parse(_module(1)))
    return to_markdown(d, "before @org/team $a$", "after <b>x</b> |", limit=0)


def test_every_hostile_string_is_code_and_never_prose(comment):
    page = rendered(comment)
    prose = " ".join(page.prose)
    for fragment in NEVER_PROSE + ["@", "$", "<b>", "://", "www."]:
        assert fragment not in prose, f"{fragment!r} is live text in the comment: {prose[:300]}"
    assert page.elements <= OWN_ELEMENTS, f"elements from the HLO: {page.elements - OWN_ELEMENTS}"
    code = page.code
    for s in HOSTILE:  # shown exactly: the target as the HLO text writes it (escape_string'd)
        assert f"custom-call {escape_string(s)}" in code, f"{s!r} is not one whole code span"
    assert "before @org/team $a$" in code and "after <b>x</b> |" in code


def test_table_rows_stay_whole(comment):
    """Every row of every table has its header's cells: no pipe from the HLO split one."""
    header_cells = None
    for line in comment.splitlines():
        if not line.startswith("|"):
            header_cells = None
        elif header_cells is None:
            header_cells = _cells(line)
        else:
            assert _cells(line) == header_cells, line


def _cells(row: str) -> int:
    """Cells of a GFM table row: pipes not escaped by a backslash right before them (as GFM
    and markdown-it split rows), less the leading and trailing one."""
    unescaped = sum(1 for k, ch in enumerate(row) if ch == "|" and (k == 0 or row[k - 1] != "\\"))
    return unescaped - 1


def test_newlines_in_hlo_text_do_not_end_the_row_or_the_span():
    """A target holding a real newline (XLA's text escapes it; a hand-written file may not)."""
    d = diff_modules(hloviz.parse(_module(0)), hloviz.parse(_module(1)))
    comment = to_markdown(d, "a\nb", "c\r\nd", limit=0)
    assert "`a b`" in comment.splitlines()[0] and "`c d`" in comment.splitlines()[0]


def test_the_cli_markdown_is_the_same_inert_report(tmp_path, capsys):
    a, b = tmp_path / "a.hlo", tmp_path / "b.hlo"
    a.write_text(_module(0))
    b.write_text(_module(1))
    code, out, err = run_cli(["diff", str(a), str(b), "--format", "markdown", "--limit", "0"], capsys)
    assert code == 0, err
    page = rendered(out)
    assert "@" not in " ".join(page.prose) and page.elements <= OWN_ELEMENTS


def test_versions_markdown_shows_a_real_custom_call_target_as_code(capsys):
    """TF 2.17's oneDNN matmul is the custom-call ``__onednn$matmul`` (its post.hlo, read by
    regex here): as prose, ``__`` would start bold and ``$`` math; in the comment it is code."""
    import re
    from pathlib import Path

    saved = Path(__file__).resolve().parent.parent / "samples" / "captures"
    target = re.search(r'custom_call_target="([^"]+)"', (saved / "matmul_chain-tf2.17" / "post.hlo").read_text())
    assert target is not None and target.group(1) == "__onednn$matmul"
    code, out, err = run_cli(["versions", str(saved / "matmul_chain-tf2.17"), str(saved / "matmul_chain-tf2.21"),
                              "--format", "markdown"], capsys)
    assert code == 0, err
    page = rendered(out)
    assert "__onednn$matmul" in page.code
    assert "$" not in " ".join(page.prose) and page.elements <= OWN_ELEMENTS | {"h2"}

"""Hostile text from an HLO file, end to end: op_names, source files, custom-call targets and
backend configs holding quotes, markup, backslashes, newlines and braces reach every output —
stats JSON, diff text/markdown/JSON, DOT, SVG, the HTML report — escaped, never live."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

import hloviz
from hloviz import api
from hloviz.ir import escape_string

from .test_render_report import browser_check

NASTY = [
    'q"uote', "it's", "<script>document.title='pwned'</script>", "</svg><b>x</b>", "a&amp;b",
    "back\\slash", "new\nline", "{}{{}}", "x" * 5000,
]


def hostile_text(variant: int = 0) -> str:
    lines = ["HloModule hostile", "", "ENTRY %main (p: f32[4]) -> f32[4] {", "  %p = f32[4]{0} parameter(0)"]
    prev = "p"
    for k, s in enumerate(NASTY):
        md = f'metadata={{op_type="{escape_string(s)}" op_name="{escape_string("scope/" + s)}" ' \
             f'source_file="{escape_string("/src/" + s + ".py")}" source_line={k + 1}}}'
        if k % 3 == 0:
            op = f'custom-call(%{prev}), custom_call_target="{escape_string(s)}", ' \
                 f'backend_config="{escape_string(s)}", {md}'
        else:
            op = f"{'negate' if (k + variant) % 2 else 'sine'}(%{prev}), {md}"
        lines.append(f"  %i{k} = f32[4]{{0}} {op}")
        prev = f"i{k}"
    lines.append(f"  ROOT %out = f32[4]{{0}} copy(%{prev})")
    lines.append("}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def files(tmp_path):
    a, b = tmp_path / "a.hlo", tmp_path / "b.hlo"
    a.write_text(hostile_text(0))
    b.write_text(hostile_text(1))
    return a, b


def test_the_parser_keeps_every_string_exactly(files):
    module = hloviz.parse_file(files[0])
    got = [i.metadata.op_name for i in module.entry.instructions[1:-1]]
    assert got == ["scope/" + s for s in NASTY]
    assert hloviz.to_text(hloviz.parse(hloviz.to_text(module))) == hloviz.to_text(module)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(k) + _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def test_stats_json_round_trips_the_strings(files):
    data = api.stats(pre=str(files[0]), post=str(files[1])).to_dict()
    assert json.loads(json.dumps(data)) == data
    found = "\n".join(_strings(data))
    for s in NASTY[:5]:
        assert s in found, s  # kept exactly (JSON escapes them; it does not alter them)


def _no_live_markup(text: str) -> None:
    assert "<script>" not in text and "</svg><b>" not in text


def test_diff_reports_escape_markdown_and_keep_json_exact(files):
    from .test_diff_markdown import OWN_ELEMENTS, rendered

    result = api.diff(str(files[0]), str(files[1]))
    markdown = result.to_markdown()
    page = rendered(markdown)  # the HTML text is shown as code, never markup
    assert page.elements <= OWN_ELEMENTS and "<script>" not in " ".join(page.prose)
    for line in markdown.splitlines():
        if line.startswith("|"):  # a newline or pipe inside a name must not break the table row
            assert line.rstrip().endswith("|"), line
    data = result.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["summary"]["changed"] + data["summary"]["added"] + data["summary"]["removed"] > 0
    text = result.to_text()
    assert "\x1b" not in text


@pytest.mark.requires_dot
def test_svg_parses_as_xml_with_the_strings_as_text_only(files, tmp_path):
    picture = api.render(str(files[0]), tmp_path / "p.svg")
    root = ET.fromstring(picture.data)
    assert not [el for el in root.iter() if el.tag.split("}")[-1] in ("script", "foreignObject", "b")]
    assert not [k for el in root.iter() for k in el.attrib if k.lower().startswith("on")]
    dot = api.render(str(files[0]), tmp_path / "p.dot").data.decode()
    outside = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', dot)
    _no_live_markup(outside)


#: Strings that only matter inside a page's script and JSON: they end a script block, open an
#: HTML comment, or end a JavaScript line (U+2028/2029 inside a string literal, before ES2019).
SCRIPT_NASTY = ["</script><script>document.title='pwned2'</script>", "<!--<script>", "line\u2028sep\u2029end",
                "</SCRIPT ", "${x}`"]


def _explorer_module(variant: int) -> str:
    text = hostile_text(variant)
    extra = []
    for k, s in enumerate(SCRIPT_NASTY):
        md = f'metadata={{op_type="t" op_name="{escape_string("layer/" + s)}" source_file="{escape_string(s)}" ' \
             f'source_line={k + 1}}}'
        extra.append(f"  %x{k} = f32[4]{{0}} {'cosine' if (k + variant) % 2 else 'tanh'}(%p), {md}")
    return text.replace("  ROOT %out", "\n".join(extra) + "\n  ROOT %out", 1)


@pytest.fixture
def explorer_files(tmp_path):
    a, b = tmp_path / "ea.hlo", tmp_path / "eb.hlo"
    a.write_text(_explorer_module(0))
    b.write_text(_explorer_module(1))
    return a, b


def _json_blocks(html: str) -> list[str]:
    return re.findall(r'<script type="application/json" id="[\w-]+"[^>]*>(.*?)</script>', html, re.DOTALL)


@pytest.mark.requires_dot
def test_explorer_page_embeds_every_string_escaped(explorer_files, tmp_path):
    from hloviz.render.page.explorer.page import script_source

    a, b = explorer_files
    result = api.show(pre=str(a), post=str(b), out_dir=tmp_path / "out")
    html = result.files["report"].read_text()
    # one script runs (the explorer's own), three blocks are data; nothing HLO-made is a tag
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.DOTALL)
    assert [body for attrs, body in scripts if "application/json" not in attrs] == [script_source()]
    assert html.lower().count("<script") == 4
    for s in NASTY + SCRIPT_NASTY:
        if any(c in s for c in "<>&"):
            assert s not in html, s
    blocks = _json_blocks(html)
    assert len(blocks) == 3
    for block in blocks:  # nothing in the data can end its block or a line of script
        assert "<" not in block and ">" not in block and "\u2028" not in block and "\u2029" not in block
    found = "\n".join(_strings([json.loads(block) for block in blocks]))
    for s in NASTY[:5] + SCRIPT_NASTY:
        assert ("scope/" + s) in found or ("layer/" + s) in found, s  # kept exactly, escaped only


def test_compressed_blocks_keep_hostile_strings_exactly():
    import base64
    import gzip

    from hloviz.render.page.explorer.page import encode_block

    value = {"names": NASTY + SCRIPT_NASTY}
    block = encode_block("hv-data", value, compress_over=0)
    body = re.fullmatch(r'<script type="application/json" id="hv-data" data-encoding="gzip-base64">(.*)</script>',
                        block).group(1)
    assert re.fullmatch(r"[A-Za-z0-9+/=]*", body)
    assert json.loads(gzip.decompress(base64.b64decode(body))) == value


@pytest.mark.requires_dot
@pytest.mark.requires_chromium
@pytest.mark.slow
def test_report_with_hostile_text_loads_cleanly_in_chromium(files, tmp_path):
    a, b = files
    result = api.show(pre=str(a), post=str(b), out_dir=tmp_path / "out")
    report = result.files["report"]
    found = browser_check(report, tmp_path)
    assert found["problems"] == []
    assert found["svg"] and found["visible"]


@pytest.mark.requires_dot
@pytest.mark.requires_chromium
@pytest.mark.slow
def test_explorer_shows_hostile_text_as_text_in_search_and_panel(explorer_files, tmp_path):
    from .browser import chromium, open_page, problems, search

    a, b = explorer_files
    report = api.show(pre=str(a), post=str(b), out_dir=tmp_path / "out").files["report"]
    with chromium() as browser:
        loaded = open_page(browser, report)
        page = loaded.page
        title = page.title()
        for query, expect in (("pwned2", "layer/</script><script>document.title='pwned2'</script>"),
                              ("title='pwned'", "scope/<script>document.title='pwned'</script>"),
                              ("sep", "layer/line\u2028sep\u2029end")):
            search(page, query)
            assert expect in page.eval_on_selector("#hv-results", "e => e.textContent")
            page.locator("#hv-results button[data-g]").first.click()
            page.wait_for_function("window.hloviz.selected() !== null")
            assert expect in page.eval_on_selector("#hv-panel", "e => e.textContent")
        # the strings stayed text: no element the HLO named, no script run
        assert page.locator("#hv-results b, #hv-panel b, #hv-results script, #hv-panel script").count() == 0
        assert page.title() == title and "pwned" not in page.title()
        assert page.evaluate("document.scripts.length") == 4
        assert problems(loaded) == []

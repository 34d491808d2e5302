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
    result = api.diff(str(files[0]), str(files[1]))
    markdown = result.to_markdown()
    _no_live_markup(markdown)
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


@pytest.mark.requires_dot
@pytest.mark.requires_chromium
@pytest.mark.slow
def test_report_with_hostile_text_loads_cleanly_in_chromium(files, tmp_path):
    a, b = files
    result = api.show(pre=str(a), post=str(b), out_dir=tmp_path / "out")
    report = result.files["report"]
    html = report.read_text()
    assert html.count("<script") == 0
    found = browser_check(report, tmp_path)
    assert found["problems"] == []
    assert found["svg"] and found["visible"]

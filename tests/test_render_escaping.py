"""Names and metadata can hold anything: nothing may break or inject into DOT, SVG or HTML."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

import hloviz
from hloviz.ir import Computation, HloModule, Instruction, escape_string
from hloviz.render import draw_module, module_picture, to_dot
from hloviz.render.page.html import FoldRow, KernelRow, ReportContent, picture_page, report_html
from hloviz.render.quoting import printable

EVIL = ['q"uote', "<script>alert(1)</script>", "back\\slash", "new\nline", "amp&lt;x", "]]>--", "\x07bell"]
SVG_NS = "{http://www.w3.org/2000/svg}"


def evil_module() -> HloModule:
    shape = hloviz.parse_shape("f32[4]")
    m = HloModule('mod<script>"x"')
    comp = Computation('entry"<b>', is_entry=True)
    m.add(comp)
    m.entry = comp
    prev = None
    for i, name in enumerate(EVIL):
        if prev is None:
            inst = Instruction(name, "parameter", shape)
            inst.parameter_number = 0
        else:
            inst = Instruction(name, "negate" if i % 2 else "sine", shape)
            inst.operands = [prev]
        inst.attributes = {"metadata": '{op_name="' + escape_string(f"scope/{name}") + '" source_file="' + \
            escape_string(f"/tmp/{name}.py") + '" source_line=3}'}
        comp.add(inst)
        prev = inst
    comp.root = prev
    return m


def shown(text: str) -> str:
    return printable(text)


def test_dot_keeps_every_name_inside_quotes_and_labels():
    dot = to_dot(draw_module(evil_module(), options=dict_options()).scene)
    outside_quotes = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', dot)
    assert "<script>" not in outside_quotes  # in labels it is &lt;script&gt;, in tooltips quoted
    assert outside_quotes.count('"') % 2 == 0
    for line in dot.splitlines():
        assert not line.strip().startswith(("<", "]]")), line  # no statement starts with user text


def dict_options():
    from hloviz.render import ViewOptions

    return ViewOptions(expand_chains=True)


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(k for k, _ in attrs)

    def handle_data(self, data):
        self.text.append(data)


@pytest.mark.requires_dot
def test_svg_parses_and_shows_names_as_text_only():
    pic = module_picture(evil_module(), options=dict_options())
    root = ET.fromstring(pic.data)
    tags = {el.tag.replace(SVG_NS, "") for el in root.iter()}
    assert not tags & {"script", "foreignObject", "iframe", "image"}
    for el in root.iter():
        assert not any(k.lower().startswith("on") for k in el.attrib)
    texts = " ".join(t.text or "" for t in root.iter(SVG_NS + "text"))
    for name in EVIL:
        assert shown(name) in texts
    tooltips = " ".join(v for el in root.iter() for k, v in el.attrib.items() if k.endswith("title"))
    assert shown("scope/<script>alert(1)</script>") in tooltips
    assert "/tmp/back\\slash.py:3" in tooltips


@pytest.mark.requires_dot
def test_html_pages_escape_everything():
    pic = module_picture(evil_module(), options=dict_options())
    svg = pic.data.decode()
    content = ReportContent(
        title=EVIL[1], verdict=EVIL[0] + EVIL[3], facts=[(EVIL[1], EVIL[2])], picture_svg=svg, notes=[EVIL[1]],
        kernels=[KernelRow(1, "#8ecae6", EVIL[1], EVIL[0], 2, (EVIL[1],), (EVIL[4] + ":1",))],
        folds=[FoldRow(EVIL[1], EVIL[5], "f32[]", (EVIL[1],), (), "xla")],
        files=[(EVIL[1], 'x" onclick="alert(1)')], footer=EVIL[1])
    for page in (report_html(content), picture_page(EVIL[1], svg, [EVIL[1]])):
        p = _Collect()
        p.feed(page)
        assert "script" not in p.tags
        assert not any(a.startswith("on") for a in p.attrs)
        text = "".join(p.text)
        assert "<script>alert(1)</script>" in text  # visible, as text


def test_json_keeps_names_exactly():
    from hloviz.render.page.export import to_json

    view = draw_module(evil_module(), options=dict_options())
    data = json.loads(to_json([("x", view)]))
    names = {n for node in data["nodes"] for n in node["instructions"]}
    assert names == set(EVIL)

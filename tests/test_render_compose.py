"""Pictures laid out in parts and composed (render/layout/compose.py) and long columns wrapped
(render/layout/wrap.py): what the composed SVG holds, its shape, its bytes, and the fallback when
Graphviz runs out of time.

Every expected value comes from outside the code under test: node ids read from the DOT text
with a regular expression, sizes read from the SVG's ``viewBox`` and its polygons, the chain's
length from the HLO text written here.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import hloviz
from hloviz.analysis import analyze
from hloviz.cli import main
from hloviz.errors import InputError
from hloviz.render.layout.wrap import (
    ACROSS,
    AUTO,
    DOWN,
    Span,
    Wrap,
    choose_parts,
    direction,
    parse_wrap,
    stacked_heights,
)
from hloviz.render.pictures import module_picture, pair_picture

from .test_render_graphviz import fake_dot

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "samples" / "captures" / "fused_additions"
RESBLOCK = ROOT / "samples" / "captures" / "resblock_relu"

_VIEWBOX = re.compile(r'viewBox="([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+)"')
_GROUP = re.compile(r'<g id="(?:node|clust)\d+" class="(node|cluster)">\s*<title>([^<]*)</title>(.*?)</g>', re.DOTALL)
_POINTS = re.compile(r'<(?:polygon|path) [^>]*?(?:points|d)="([^"]+)"')
_NUM = re.compile(r"-?\d+(?:\.\d+)?")

OPS = ("negate", "exponential", "tanh", "abs", "cosine")


def chain_hlo(length: int) -> str:
    """A chain of ``length`` elementwise ops, each on the one before and nothing else (no two
    neighbours alike, so no run of one op folds into a single box)."""
    lines = ["HloModule chain", "", "ENTRY %main (p: f32[8]) -> f32[8] {", "  %p = f32[8]{0} parameter(0)"]
    prev = "%p"
    for i in range(length):
        lines.append(f"  %v{i} = f32[8]{{0}} {OPS[i % len(OPS)]}({prev})")
        prev = f"%v{i}"
    lines += [f"  ROOT %out = f32[8]{{0}} negate({prev})", "}", ""]
    return "\n".join(lines)


def updates_hlo(count: int) -> str:
    """``count`` independent updates, as an optimizer makes them: each parameter through two
    elementwise ops of its own, all gathered into the ROOT tuple (whose arrows the picture
    draws as rows at their ends, so the updates share nothing on the page). Neighbours differ
    in their ops, so no two fold into one repeated block."""
    params = ", ".join(f"p{i}: f32[8]" for i in range(count))
    lines = ["HloModule updates", "", f"ENTRY %main ({params}) -> ({', '.join(['f32[8]'] * count)}) {{"]
    outs = []
    for i in range(count):
        lines += [f"  %p{i} = f32[8]{{0}} parameter({i})",
                  f"  %a{i} = f32[8]{{0}} {OPS[i % len(OPS)]}(%p{i})",
                  f"  %b{i} = f32[8]{{0}} {OPS[(i // len(OPS) + 1) % len(OPS)]}(%a{i})"]
        outs.append(f"%b{i}")
    lines += [f"  ROOT %out = ({', '.join(['f32[8]{0}'] * count)}) tuple({', '.join(outs)})", "}", ""]
    return "\n".join(lines)


def size(svg: str) -> tuple[float, float]:
    m = _VIEWBOX.search(svg)
    assert m is not None, "no viewBox in the SVG"
    return float(m.group(3)), float(m.group(4))


_PART = re.compile(r'<g class="part" transform="translate\(([-\d.]+) ([-\d.]+)\)">')


def boxes(svg: str) -> dict[str, tuple[float, float, float, float]]:
    """``<title>`` of each node and cluster group → (x0, y0, x1, y1) of its outline, in the
    picture's coordinates: a composed part's drawing sits in a ``<g class="part"
    transform="translate(dx dy)">`` (parts follow one another), so its shift is added."""
    starts, moves = [0], [(0.0, 0.0)]
    for m in _PART.finditer(svg):
        starts.append(m.start())
        moves.append((float(m.group(1)), float(m.group(2))))
    out = {}
    for g in _GROUP.finditer(svg):
        m = _POINTS.search(g.group(3))
        if m is None:
            continue
        dx, dy = moves[max(i for i, start in enumerate(starts) if start <= g.start())]
        nums = [float(v) for v in _NUM.findall(m.group(1))]
        xs, ys = [x + dx for x in nums[0::2]], [y + dy for y in nums[1::2]]
        out[g.group(2)] = (min(xs), min(ys), max(xs), max(ys))
    return out


def dot_node_ids(dot_text: str) -> set[str]:
    return set(re.findall(r"^\s*(n\d+) \[", dot_text, re.MULTILINE))


def _pair(folder: Path, **kw):
    pre = hloviz.parse((folder / "pre.hlo").read_text())
    post = hloviz.parse((folder / "post.hlo").read_text())
    return pair_picture(pre, post, analyze(pre, post), **kw)


@pytest.mark.requires_dot
def test_the_composed_picture_holds_both_columns_side_by_side():
    pic = _pair(RESBLOCK)
    svg = pic.data.decode("utf-8")
    drawn = boxes(svg)
    ids = dot_node_ids(pic.dot)
    assert ids and ids <= set(drawn), f"nodes of the DOT text missing from the SVG: {sorted(ids - set(drawn))[:5]}"
    # the two column clusters are the ones whose label says so in the DOT text
    columns = re.findall(r"subgraph (cluster_\d+) \{\n    label=<<TABLE[^\n]*?<B>(before|after) optimization</B>",
                         pic.dot)
    assert [c[1] for c in columns] == ["before", "after"]
    (pre_id, _), (post_id, _) = columns
    pre_box, post_box = drawn[pre_id], drawn[post_id]
    assert pre_box[2] < post_box[0], "before left of after, not overlapping"
    assert abs(pre_box[1] - post_box[1]) < 1, "the columns' tops are aligned"
    # every node of the first column lies inside the first column's box, and so on
    first = set(re.findall(r"^\s+(n\d+) \[", pic.dot[:pic.dot.index(f"subgraph {post_id}")], re.MULTILINE))
    assert first
    for node in ids:
        box = drawn[node]
        column = pre_box if node in first else post_box
        assert column[0] <= box[0] and box[2] <= column[2], f"{node} outside its column"


@pytest.mark.requires_dot
def test_the_composed_picture_is_byte_identical_and_normalised():
    a = _pair(SEED, fmt="svg")
    b = _pair(SEED, fmt="svg")
    assert a.data == b.data
    assert b"<!--" not in a.data and b"<!DOCTYPE" not in a.data  # normalize_svg applied
    png_a, png_b = _pair(SEED, fmt="png"), _pair(SEED, fmt="png")
    assert png_a.data[:8] == b"\x89PNG\r\n\x1a\n" and png_a.data == png_b.data


@pytest.mark.requires_dot
def test_wrap_bounds_a_long_chains_shape_and_keeps_every_node(tmp_path):
    hlo = tmp_path / "chain.hlo"
    hlo.write_text(chain_hlo(120))
    tall, wrapped = tmp_path / "tall.svg", tmp_path / "wrapped.svg"
    # --budget 300: the detailed picture (render's default is the overview, issue 33)
    main(["render", str(hlo), "--budget", "300", "-o", str(tall), "--wrap", "off"])
    # --budget 300: the detailed picture (render's default is the overview, issue 33)
    main(["render", str(hlo), "--budget", "300", "-o", str(wrapped)])  # --wrap auto is render's default
    w0, h0 = size(tall.read_text())
    w1, h1 = size(wrapped.read_text())
    assert h0 / w0 > 10, "unwrapped, a 120-op chain is a strip"
    assert h1 / w1 <= 1.4 * 1.5, f"wrapped, near a page's shape: {w1:g} x {h1:g}"
    svg = wrapped.read_text()
    names = set(re.findall(r"%(v\d+) = ", hlo.read_text()))
    shown = set(re.findall(r">(v\d+)<", svg))
    assert names == shown, "every op of the chain is still drawn"
    parts = sorted(set(re.findall(r"▾ part (\d+):", svg)))
    assert parts and "2" in parts, "connectors say which part the chain continues in"
    # each connector names the op at the other end: the one after (▾) or before (▴) it in the chain
    exits = re.findall(r"▾ part \d+: (v\d+)", svg)
    entries = re.findall(r"▴ part \d+: (v\d+)", svg)
    assert exits and len(exits) == len(entries)
    assert {int(v[1:]) for v in exits} == {int(v[1:]) + 1 for v in entries}, "▾ names the next op, ▴ the one before"


@pytest.mark.requires_dot
def test_wrap_n_cuts_into_n_parts(tmp_path):
    module = hloviz.parse(chain_hlo(60))
    pic = module_picture(module, wrap=parse_wrap("3"))
    svg = pic.data.decode("utf-8")
    assert set(re.findall(r"▾ part (\d+):", svg)) == {"2", "3"}
    assert re.findall(r">part (\d) of 3<", svg) == ["1", "2", "3"], "each part says which it is"
    assert any("wrapped into 3 parts" in n for n in pic.notes)


@pytest.mark.requires_dot
def test_a_wrapped_png_is_drawn_and_byte_identical():
    module = hloviz.parse(chain_hlo(60))
    a = module_picture(module, fmt="png", wrap=parse_wrap("3"))
    b = module_picture(module, fmt="png", wrap=parse_wrap("3"))
    assert a.data[:8] == b"\x89PNG\r\n\x1a\n" and a.data == b.data
    width, height = int.from_bytes(a.data[16:20], "big"), int.from_bytes(a.data[20:24], "big")
    tall = module_picture(module, fmt="png")
    tall_w, tall_h = int.from_bytes(tall.data[16:20], "big"), int.from_bytes(tall.data[20:24], "big")
    assert height / width < tall_h / tall_w / 3, "three parts side by side: far less tall for its width"


@pytest.mark.requires_dot
def test_a_picture_near_a_page_is_not_wrapped():
    pic = _pair(SEED, wrap=AUTO)
    assert "▾ part" not in pic.data.decode("utf-8")
    assert not any("wrapped" in n for n in pic.notes)


@pytest.mark.requires_dot
def test_a_timeout_of_a_part_still_falls_back_to_a_coarser_view(tmp_path, monkeypatch):
    """The first ``dot`` that lays out a part hangs; the picture is retried coarser, in the
    budget left, and says so."""
    real = shutil.which("dot")
    marker = tmp_path / "hung"
    fake_dot(tmp_path / "bin", f"""
import os, sys, time
if any(a.startswith("-o") for a in sys.argv) and not os.path.exists({str(marker)!r}):  # a part's dot
    open({str(marker)!r}, "w").close()
    time.sleep(60)
os.execv({real!r}, [{real!r}] + sys.argv[1:])
""", monkeypatch)
    pic = _pair(SEED, timeout=6)
    assert marker.exists(), "a part was laid out by the hanging dot"
    assert pic.notes[0].startswith("Graphviz did not finish the full view within 4 s (of the 6 s --timeout)")
    svg = pic.data.decode("utf-8")
    assert "did not finish the full view" in svg  # the picture says so in its header
    assert dot_node_ids(pic.dot) <= set(boxes(svg))


def test_wrap_options_are_checked():
    assert parse_wrap("auto") == AUTO
    assert parse_wrap("off").active is False
    assert parse_wrap("4") == Wrap("parts", 4)
    assert parse_wrap("1").active is False
    for bad in ("0", "13", "-2", "tall", "2.5"):
        with pytest.raises(InputError, match="--wrap must be auto, off, or a number of parts"):
            parse_wrap(bad)
    with pytest.raises(InputError, match="--aspect must be"):
        parse_wrap("auto", 0)


def test_bad_wrap_on_the_command_line_is_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["render", str(SEED), "-o", str(tmp_path / "x.svg"), "--wrap", "sideways"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--wrap must be auto, off, or a number of parts" in err and "Traceback" not in err
    assert not (tmp_path / "x.svg").exists()


def test_choose_parts_by_hand():
    # one column 100 pt wide, 2,000 tall; parts side by side 36 pt apart; aim 1.4.
    # k parts: height 2000/k, width 100k + 36(k-1). k=3: 666.7/372 = 1.79; k=4: 500/508 = 0.98
    # |log(1.79/1.4)| = 0.246 < |log(0.98/1.4)| = 0.355, so 3
    assert choose_parts([(100, 2000)], AUTO, [12], 36) == [3]
    # band widths measured from the layout (narrower than 100 per part): k=3 gives 666.7/300 = 2.22,
    # k=4 500/400 = 1.25: |log(1.25/1.4)| = 0.113 < |log(2.22/1.4)| = 0.461, so 4
    assert choose_parts([(100, 2000)], AUTO, [12], 36, [[100, 200, 300, 400, 500]]) == [4]
    # already near the page (2,000 x 1,500: 0.75 <= 1.4 x 1.5): left alone
    assert choose_parts([(2000, 1500)], AUTO, [12], 36) == [1]
    # no place to cut: one part, whatever the shape
    assert choose_parts([(100, 2000)], AUTO, [1], 36) == [1]
    assert choose_parts([(100, 2000), (100, 500)], Wrap("parts", 5), [12, 2], 36) == [5, 2]


def test_docs_pictures_take_wrap_and_aspect():
    from hloviz.docs.pictures import parse_options

    pic = parse_options("t", {"wrap": "3", "aspect": "0.56"})
    assert (pic.wrap, pic.aspect) == ("3", 0.56)
    assert parse_options("t", {}).wrap == "auto"  # docs pictures fit a page by default
    assert pic.drawing() != parse_options("t", {}).drawing()  # the cache keys on them
    with pytest.raises(InputError, match=":aspect: must be a number"):
        parse_options("t", {"aspect": "wide"})


@pytest.mark.requires_dot
def test_an_empty_column_still_composes():
    """A column with nothing to draw (a focus that names nothing on one side) is no box."""
    from hloviz.render.layout.compose import lay_out
    from hloviz.render.layout.dot import columns_drawing
    from hloviz.render.scene import Node, Row, Scene

    full = Scene()
    full.add_node("x", Node([Row("only box")]))
    drawing = columns_drawing([("before", full), ("after", Scene())], title="one side empty")
    svg, _ = lay_out(drawing, "svg", 20, AUTO)
    assert svg.count(b'class="node"') == 1 and b"only box" in svg
    png, _ = lay_out(drawing, "png", 20, AUTO)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.requires_dot
def test_the_order_dot_runs_in_changes_nothing(monkeypatch):
    """Parts laid out one at a time, or last first, give the same bytes as all at once."""
    from hloviz.render import pictures
    from hloviz.render.layout.runs import graphviz_run

    module = hloviz.parse(chain_hlo(60))
    together = _pair(RESBLOCK).data, module_picture(module, wrap=parse_wrap("3")).data

    def last_first(texts, formats=("json0",), *, timeout=30.0, processes=None):
        return graphviz_run.run_dot_many(list(texts)[::-1], formats, timeout=timeout, processes=1)[::-1]

    monkeypatch.setattr(pictures, "run_dot_many", last_first)
    assert (_pair(RESBLOCK).data, module_picture(module, wrap=parse_wrap("3")).data) == together


@pytest.mark.requires_dot
def test_a_wrapped_svg_lays_each_text_out_once(monkeypatch):
    """The whole column's positions, which cutting it needs, come from the run that drew it:
    no DOT text goes to Graphviz twice."""
    from hloviz.render import pictures
    from hloviz.render.layout.runs import graphviz_run

    module = hloviz.parse(chain_hlo(60))
    seen: list[str] = []

    def counted(texts, formats=("json0",), *, timeout=30.0, processes=None):
        seen.extend(texts)
        return graphviz_run.run_dot_many(texts, formats, timeout=timeout, processes=processes)

    monkeypatch.setattr(pictures, "run_dot_many", counted)
    pic = module_picture(module, wrap=parse_wrap("3"))
    assert any("wrapped into 3 parts" in n for n in pic.notes)
    assert len(seen) == len(set(seen)) == 1 + 3, "the whole column once, then its three parts"
    assert re.findall(r">part (\d) of 3<", pic.data.decode("utf-8")) == ["1", "2", "3"]


@pytest.mark.requires_dot
def test_a_picture_wrap_leaves_whole_is_the_one_dot_picture():
    """``--wrap auto`` on a one-scene picture near a page's shape changes no byte of it."""
    from hloviz.render.layout.runs.graphviz_run import run_dot

    module = hloviz.parse((SEED / "post.hlo").read_text())
    pic = module_picture(module, wrap=AUTO)
    assert pic.data == run_dot(pic.dot, "svg")


def test_wrap_on_a_dot_file_says_it_does_not_apply(tmp_path, capsys):
    out = tmp_path / "x.dot"
    main(["render", str(SEED), "-o", str(out), "--wrap", "3"])
    err = capsys.readouterr().err
    assert "--wrap 3 cuts the laid-out picture" in err and "the .dot file holds the whole graph" in err
    assert "part 2" not in out.read_text()


@pytest.mark.requires_dot
def test_a_wide_picture_of_independent_updates_is_stacked_within_the_aspect(tmp_path):
    hlo = tmp_path / "updates.hlo"
    hlo.write_text(updates_hlo(60))
    flat, wrapped = tmp_path / "flat.svg", tmp_path / "wrapped.svg"
    # --budget 300: the detailed picture (render's default is the overview, issue 33)
    main(["render", str(hlo), "--budget", "300", "-o", str(flat), "--wrap", "off"])
    # --budget 300: the detailed picture (render's default is the overview, issue 33)
    main(["render", str(hlo), "--budget", "300", "-o", str(wrapped)])  # --wrap auto, --aspect 1.4: render's defaults
    w0, h0 = size(flat.read_text())
    w1, h1 = size(wrapped.read_text())
    assert h0 / w0 < 1.4 / 1.5 / 4, f"unwrapped, 60 updates are one flat row: {w0:g} x {h0:g}"
    assert 1.4 / 1.5 <= h1 / w1 <= 1.4 * 1.5, f"wrapped, within the aspect's promise: {w1:g} x {h1:g}"
    svg = wrapped.read_text()
    text = hlo.read_text()
    for prefix in "pab":  # every op of every update, drawn exactly once
        names = re.findall(rf"%({prefix}\d+) = f32", text)
        shown = re.findall(rf">({prefix}\d+)<", svg)
        assert len(names) == 60 and sorted(shown) == sorted(names), f"{prefix}: {len(shown)} shown of {len(names)}"
    captions = re.findall(r">part (\d+) of (\d+)<", svg)
    assert len(captions) > 1 and [int(k) for k, _ in captions] == list(range(1, len(captions) + 1))
    drawn = boxes(svg)
    tops = [drawn[n][1] for n in drawn if n.startswith("n")]
    assert max(tops) - min(tops) > 3 * h0, "the parts are stacked: the boxes span far more height than one row"


@pytest.mark.requires_dot
def test_a_stacked_picture_is_byte_identical_in_svg_and_png_and_obeys_aspect():
    module = hloviz.parse(updates_hlo(60))
    a, b = module_picture(module, wrap=AUTO), module_picture(module, wrap=AUTO)
    assert a.data == b.data and any("stacked top to bottom" in n for n in a.notes)
    png_a, png_b = module_picture(module, fmt="png", wrap=AUTO), module_picture(module, fmt="png", wrap=AUTO)
    assert png_a.data[:8] == b"\x89PNG\r\n\x1a\n" and png_a.data == png_b.data
    width, height = int.from_bytes(png_a.data[16:20], "big"), int.from_bytes(png_a.data[20:24], "big")
    assert 1.4 / 1.5 <= height / width <= 1.4 * 1.5, f"the PNG is stacked as the SVG: {width} x {height} px"
    slide = module_picture(module, wrap=parse_wrap("auto", 0.56))  # a 16:9 slide
    w, h = size(slide.data.decode("utf-8"))
    assert 0.56 / 1.5 <= h / w <= 0.56 * 1.5, f"--aspect 0.56: {w:g} x {h:g}"
    assert h / w < size(a.data.decode("utf-8"))[1] / size(a.data.decode("utf-8"))[0]
    three = module_picture(module, wrap=parse_wrap("3"))  # --wrap N cuts a flat picture across too
    assert any("into 3 parts stacked" in n for n in three.notes)
    assert re.findall(r">part (\d) of 3<", three.data.decode("utf-8")) == ["1", "2", "3"]


def test_direction_and_stacked_parts_by_hand():
    # (width, height) of the columns side by side; aspect 1.4 with slack 1.5: [0.93, 2.1]
    assert direction([(100, 2000)], AUTO, 36) == DOWN
    assert direction([(6000, 200)], AUTO, 36) == ACROSS
    assert direction([(1000, 1400)], AUTO, 36) is None
    assert direction([(1000, 200)], AUTO, 36) is None, "flat but narrower than two pages: left alone"
    assert direction([(3000, 200), (3000, 200)], AUTO, 0) == ACROSS, "columns side by side add their widths"
    # 6000 x 200 cut into k parts k * 200 + 36 * (k - 1) tall, 6000 / k wide: k = 6 gives
    # 1380 / 1000 = 1.38, nearest 1.4 (k = 5: 0.95, k = 7: 1.89)
    assert choose_parts([(6000, 200)], AUTO, [24], 36, stacked=True) == [6]
    assert choose_parts([(6000, 200)], AUTO, [4], 36, stacked=True) == [4], "no more parts than places to cut"
    assert choose_parts([(2000, 1500)], AUTO, [24], 36, stacked=True) == [1], "0.75: two parts would be 3.0"


def test_stacked_heights_keep_only_the_rows_a_band_holds():
    # four 100 x 20 boxes on one row (centres x = 50, 250, 450, 650), one more a row below at x = 50;
    # dot's ranksep is 0.3 in = 21.6 pt
    row = {f"r{i}": Span(10, -10, 200 * i, 200 * i + 100) for i in range(4)}
    below = {"b": Span(-40, -60, 0, 100)}
    one, two = stacked_heights({**row, **below}, 10, most=2)
    assert one == pytest.approx(20 + 21.6 + 20), "whole: two rows"
    # halves at x = 350: the left holds both rows, the right one row, and a gap between the parts
    assert two == pytest.approx((20 + 21.6 + 20) + 20 + 10)

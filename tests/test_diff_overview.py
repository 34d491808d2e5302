"""``hloviz diff A B -o x.svg`` draws the overview of both modules (issue 33), ``--budget N`` the
detailed picture, and a Graphviz failure never ends in a traceback.

Oracles outside the renderer: layer names from regexes over the ``op_name`` metadata of the HLO
text; sizes, boxes and fonts from the SVG's own geometry (regexes here); Graphviz's failures are
made by a stand-in ``dot`` that fails where the real one did on the transformer diff.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pytest

from hloviz.cli import main

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
_VIEWBOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"')
_PART = re.compile(r'<g class="part" transform="translate\(([-\d.]+) ([-\d.]+)\)">')
_NODE = re.compile(r'<g id="node\d+" class="node">(.*?)</g>', re.DOTALL)
_OUTLINE = re.compile(r'<(?:polygon|path)[^>]*?(?:points|d)="([^"]+)"')
_NUM = re.compile(r"-?\d+(?:\.\d+)?")
_TEXT = re.compile(r"<text[^>]*>([^<]*)</text>")
#: a column's frame: its outline, then its heading (``before: …`` / ``after: …``)
_COLUMN = re.compile(r'<g id="clust\d+" class="cluster">\s*<title>[^<]*</title>\s*<(?:polygon|path)[^>]*?(?:points|d)="([^"]+)"'
                     r'[^>]*>\s*<text[^>]*>(?:before|after):')

pytestmark = pytest.mark.requires_dot

#: the diff pairs of samples/captures whose overview meets issue 33's goal 1 today
PAIRS = [("fused_additions-tf2.17", "fused_additions-tf2.21"), ("matmul_chain-tf2.17", "matmul_chain-tf2.21"),
         ("widen_64", "widen_96"), ("resblock_relu", "resblock_gelu"), ("loops_vit", "loops_vit_relu")]


def _diff(a: str, b: str, out: Path, *args: str) -> int:
    try:
        code = main(["diff", str(CAPTURES / a), str(CAPTURES / b), "-o", str(out), *args])
    except SystemExit as stop:
        code = stop.code
    return 0 if code is None else int(code)


def _geometry(svg: str) -> tuple[float, float, list[int], float]:
    """Width and height (pt), outlined boxes in each column of each laid-out part (columns laid
    out in one run share a part: told apart by their frames' x ranges), and the share of the
    canvas the boxes' outlines cover."""
    box = _VIEWBOX.search(svg)
    assert box is not None
    width, height = float(box.group(1)), float(box.group(2))
    starts = [0] + [m.start() for m in _PART.finditer(svg)]
    columns: dict[int, list[tuple[float, float]]] = {}  # part → its columns' x ranges, where it has two
    for c in _COLUMN.finditer(svg):
        xs = [float(x) for x in _NUM.findall(c.group(1))][0::2]
        columns.setdefault(max(i for i, s in enumerate(starts) if s <= c.start()), []).append((min(xs), max(xs)))
    counts: dict[tuple[int, int], int] = {}
    area = 0.0
    for node in _NODE.finditer(svg):
        outline = _OUTLINE.search(node.group(1))
        if outline is None:
            continue  # a "part k of n" title: text only
        nums = [float(x) for x in _NUM.findall(outline.group(1))]
        xs, ys = nums[0::2], nums[1::2]
        area += (max(xs) - min(xs)) * (max(ys) - min(ys))
        part = max(i for i, s in enumerate(starts) if s <= node.start())
        centre = (max(xs) + min(xs)) / 2
        shared = columns.get(part, []) if len(columns.get(part, [])) > 1 else []
        column = next((i for i, (x0, x1) in enumerate(shared) if x0 <= centre <= x1), -1)
        counts[(part, column)] = counts.get((part, column), 0) + 1
    return width, height, list(counts.values()), area / (width * height)


def _crossings(svg: str) -> tuple[int, int]:
    """Crossing points and drawn arrows, by the benchmark's own geometry (its splines sampled
    from the SVG's paths, outside the renderer)."""
    sys.path.insert(0, str(CAPTURES.parent.parent / "benchmarks"))
    try:
        from picture_bench import crossings
    finally:
        sys.path.pop(0)
    return crossings(svg)


def _top_layers(capture: str) -> set[str]:
    """The top-level layers the optimized module's kernels come from: the second step of the
    op_name (``model/layer/...``) of every instruction of the entry computation (a fusion carries
    its root's), Keras's ``_1`` suffix dropped, read from the HLO text."""
    text = (CAPTURES / capture / "post.hlo").read_text(encoding="utf-8")
    start = text.index("\nENTRY ")
    entry = text[start:text.index("\n}", start)]
    return {re.sub(r"_\d+$", "", m) for m in re.findall(r'op_name="[^/"]+/([^/"]+)/', entry)}


@pytest.mark.parametrize(("before", "after"), PAIRS)
def test_the_diff_overview_meets_goal_1(before, after, tmp_path):
    """Longer side ≤ 2,500 pt, ≤ 40 boxes a laid-out column, boxes cover ≥ 8% of the canvas,
    every label ≥ 10 pt, at most 0.1 crossings an arrow (benchmarks/picture_bench.py's count)."""
    out = tmp_path / "d.svg"
    assert _diff(before, after, out) == 0
    svg = out.read_text(encoding="utf-8")
    width, height, per_part, cover = _geometry(svg)
    assert max(width, height) <= 2_500, (width, height)
    assert per_part and max(per_part) <= 40, per_part
    assert cover >= 0.08, cover
    fonts = [float(f) for f in re.findall(r'font-size="([\d.]+)"', svg)]
    assert fonts and min(fonts) >= 10, sorted(set(fonts))
    crossings, arrows = _crossings(svg)
    assert crossings <= 0.1 * arrows, (crossings, arrows)


def test_the_diff_overview_names_every_layer_and_budget_draws_the_detail(tmp_path):
    """The overview of resblock_relu → resblock_gelu names each top-level layer of both models
    (op_names, by regex); ``--budget 300`` is the detailed picture: more than twice the boxes, and
    every fusion of the optimized module by its own name (read from the HLO)."""
    over, detail = tmp_path / "o.svg", tmp_path / "d.svg"
    assert _diff("resblock_relu", "resblock_gelu", over) == 0
    assert _diff("resblock_relu", "resblock_gelu", detail, "--budget", "300") == 0
    text = " ".join(_TEXT.findall(over.read_text(encoding="utf-8")))
    for layer in _top_layers("resblock_relu") | _top_layers("resblock_gelu"):
        assert layer in text, (layer, text[:400])
    overview = _geometry(over.read_text(encoding="utf-8"))[2]
    detailed = _geometry(detail.read_text(encoding="utf-8"))[2]
    assert sum(detailed) > 2 * sum(overview), (detailed, overview)
    post = (CAPTURES / "resblock_gelu" / "post.hlo").read_text(encoding="utf-8")
    kernels = re.findall(r"^\s*(?:ROOT )?%(\S+) = \S+ fusion\(", post, re.MULTILINE)
    assert kernels
    detail_text = detail.read_text(encoding="utf-8")
    assert all(k in detail_text for k in kernels), [k for k in kernels if k not in detail_text]


def _stand_in_dot(folder: Path, monkeypatch, *, fail_on: str | None) -> None:
    """A ``dot`` first on PATH that runs the real one, except that it fails as Graphviz 2.43 did
    on the transformer diff (``lost … edge``, exit 1) on every input holding ``fail_on`` (every
    input when None)."""
    real = shutil.which("dot")
    assert real is not None
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "dot"
    exe.write_text(f"""#!{sys.executable}
import subprocess, sys
data = sys.stdin.buffer.read()
if {fail_on!r} is None or {fail_on!r}.encode() in data:
    sys.stderr.write("Error: lost n37 n44 edge\\n")
    sys.exit(1)
done = subprocess.run([{real!r}, *sys.argv[1:]], input=data, capture_output=True)
sys.stdout.buffer.write(done.stdout)
sys.stderr.buffer.write(done.stderr)
sys.exit(done.returncode)
""")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("HLOVIZ_DOT", raising=False)


def test_a_failed_tied_layout_falls_back_to_columns_laid_out_apart(tmp_path, monkeypatch, capsys):
    """The detailed diff puts matched kernels on one level (``rank=same`` across the columns);
    where dot fails on that, the picture is still drawn, its columns laid out apart."""
    _stand_in_dot(tmp_path / "bin", monkeypatch, fail_on="rank=same")
    out = tmp_path / "d.svg"
    assert _diff("resblock_relu", "resblock_gelu", out, "--budget", "300") == 0
    err = capsys.readouterr().err
    assert "laid out apart" in err and "Traceback" not in err, err
    svg = out.read_text(encoding="utf-8")
    assert svg.count('<g class="part"') == 3  # the header and the two columns, each its own layout
    assert len(_geometry(svg)[2]) == 2  # a part each


def test_graphviz_failing_outright_is_one_message_and_exit_2(tmp_path, monkeypatch, capsys):
    _stand_in_dot(tmp_path / "bin", monkeypatch, fail_on=None)
    out = tmp_path / "d.svg"
    assert _diff("resblock_relu", "resblock_gelu", out) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("hloviz: error:")]
    assert len(errors) == 1 and "lost n37 n44 edge" in errors[0] and out.with_suffix(".dot").name in errors[0], err
    assert not out.exists() and out.with_suffix(".dot").exists()


def test_a_parameter_two_kernels_read_is_no_box_and_is_named_on_both(tmp_path):
    """resblock_relu's optimized module duplicates stem_bn's batch norm into res_bn's kernel
    (XLA fusion): stem_bn's parameters are read by two fusions. The overview draws them as no box
    of their own (a box reached past the layers between, 3 crossings) but names each on both
    readers' boxes. Which parameters two entry instructions read: a regex over post.hlo."""
    entry = (CAPTURES / "resblock_relu" / "post.hlo").read_text(encoding="utf-8")
    entry = entry[entry.index("\nENTRY "):]
    readers: dict[str, int] = {}
    for operands in re.findall(r"^\s*(?:ROOT )?%\S+ = \S+ (?:fusion|convolution|dot)\(([^)]*)\)", entry, re.MULTILINE):
        for name in set(re.findall(r"%(arg\d+\.\d+)", operands)):
            readers[name] = readers.get(name, 0) + 1
    shared = sorted(n for n, k in readers.items() if k == 2)
    assert shared == ["arg2.1", "arg4.1", "arg5.1"], readers
    out = tmp_path / "d.svg"
    assert _diff("resblock_relu", "resblock_gelu", out) == 0
    svg = out.read_text(encoding="utf-8")
    frame = next(c for c in _COLUMN.finditer(svg) if ">before:" in c.group(0))
    xs = [float(x) for x in _NUM.findall(frame.group(1))][0::2]
    texts = [t for x, t in re.findall(r'<text[^>]*? x="([-\d.]+)"[^>]*>([^<]*)</text>', svg)
             if min(xs) <= float(x) <= max(xs)]  # the before column's
    for name in shared:
        assert name not in texts, name  # a parameter's box has a line of its name alone
    # each reader's box ends with a row naming what was folded into it: all three, short enough
    rows = [t for t in texts if t.startswith("+ ") and "arg2.1" in t and "arg4.1" in t]
    assert len(rows) == 2 and all(t == "+ " + ", ".join(shared) for t in rows), rows

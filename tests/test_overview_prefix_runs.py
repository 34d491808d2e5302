"""Layers are grouped by a shared name prefix only where they run one after another: ConvNeXt's
``stage_*`` layers are four stages with a downsampling block between each two, and drawn as one
group ``convnext_tiny_stage_*`` the box reached from the stem to the head, its arrows running
back up to every downsampling block (19 arrows against program order in an inference model).
After optimization the residual adds closing each stage (fused with their layer scale's
multiply, named by the model's own ``Add``) and the layer-scale variables only they read join
the stage they close; left outside, they formed blocks of their own that stood the last stages
side by side.

Oracles outside the renderer: the order the stages and downsampling blocks run in, from the
first appearance of their names in the op names of the capture's ``pre.hlo`` (the order
TensorFlow emitted the entry computation); where each is drawn, from the SVG's bold titles.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from hloviz.cli import main

CAPTURE = Path(__file__).resolve().parent.parent / "samples" / "captures" / "convnext_tiny"

pytestmark = pytest.mark.requires_dot

_TITLE = re.compile(r'<text [^>]*?y="([-\d.]+)"[^>]*font-weight="bold"[^>]*>([^<]*)</text>')
_PART = re.compile(r'op_name="convnext_tiny_1/convnext_tiny_(stage_\d+|downsampling_block_\d+)_')


def _program_order() -> list[str]:
    text = gzip.decompress((CAPTURE / "pre.hlo.gz").read_bytes()).decode("utf-8")
    entry = text.split("\nENTRY ", 1)[1]
    seen: list[str] = []
    for part in _PART.findall(entry):
        if part not in seen:
            seen.append(part)
    return seen


def test_the_stages_run_with_downsampling_blocks_between_them():
    order = _program_order()
    assert order[:3] == ["stage_0", "downsampling_block_0", "stage_1"], order
    assert len(order) == 7


@pytest.mark.parametrize("stage", ["pre", "post"])
def test_each_stage_is_a_group_of_its_own_in_program_order(stage, tmp_path, capsys):
    out = tmp_path / "p.svg"
    assert main(["render", str(CAPTURE), "--stage", stage, "-o", str(out)]) in (None, 0)
    capsys.readouterr()
    titles = [(float(y), t) for y, t in _TITLE.findall(out.read_text(encoding="utf-8"))]
    assert not [t for _, t in titles if t.startswith("convnext_tiny_stage_*")]
    drawn: dict[str, float] = {}
    for y, t in titles:
        m = re.match(r"convnext_tiny_(stage_\d+|downsampling_block_\d+)(?:_\*|\b)", t)
        if m and m.group(1) not in drawn:
            drawn[m.group(1)] = y
    order = _program_order()
    shown = [p for p in order if p in drawn]
    assert len(shown) >= 5, (order, sorted(drawn))
    assert sorted(shown, key=drawn.__getitem__) == shown, drawn


_NODE_TITLE = re.compile(r'<g id="node\d+" class="node">.*?xlink:title="([^"]*)"', re.DOTALL)


@pytest.mark.parametrize("stage", ["pre", "post"])
def test_no_weight_is_a_box_of_its_own(stage, tmp_path, capsys):
    """The layer scales and biases the residual adds read are in their stage's box, not rows of
    ``parameter N`` boxes beside the column (issue 33, goal 2). Oracle: the entry computation's
    parameters, by regex over the HLO text; a drawn node's tooltip starts with its instruction."""
    text = gzip.decompress((CAPTURE / f"{stage}.hlo.gz").read_bytes()).decode("utf-8")
    entry = text.split("\nENTRY ", 1)[1]
    params = set(re.findall(r"^\s*%?([\w.\-]+) = \S+ parameter\(\d+\)", entry, re.MULTILINE))
    assert len(params) > 100
    out = tmp_path / "p.svg"
    assert main(["render", str(CAPTURE), "--stage", stage, "-o", str(out)]) in (None, 0)
    capsys.readouterr()
    alone = [t.split(" ", 1)[0] for t in _NODE_TITLE.findall(out.read_text(encoding="utf-8"))
             if t.split(" ", 1)[0] in params]
    assert not alone

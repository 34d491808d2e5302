"""The overview of a JAX training step reads as the model's parts, never as instruction names
(issue 33): the Flax ViT step (``nn.scan`` + remat, an optax AdamW update; saved capture
``loops_vit_train``).

Oracles from the HLO text, by regex: the model's scopes from the ``op_name`` metadata of the
unoptimized module (``jvp(ViT)/patch_embed/…``), every instruction's name, the entry
parameters' names (``adamw_state['mu']['blocks']['attn']['key']['bias']``), and the copies XLA
adds without an op name in the optimized entry; titles and boxes from the SVG's text (regexes).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hloviz.cli import main

CAPTURE = Path(__file__).resolve().parent.parent / "samples" / "captures" / "loops_vit_train"
_BOLD = re.compile(r'<text [^>]*font-weight="bold"[^>]*>([^<]*)</text>')
_TEXT = re.compile(r"<text[^>]*>([^<]*)</text>")

pytestmark = pytest.mark.requires_dot


def _hlo(stage: str) -> str:
    return (CAPTURE / f"{stage}.hlo").read_text(encoding="utf-8")


def _entry(text: str) -> str:
    start = text.index("\nENTRY ")
    return text[start:text.index("\n}", start)]


@pytest.fixture(scope="module")
def columns(tmp_path_factory) -> tuple[str, str]:
    """The overview's before and after columns (each a laid-out part of the SVG)."""
    out = tmp_path_factory.mktemp("vit") / "x.svg"
    assert main(["render", str(CAPTURE), "--stage", "both", "-o", str(out)]) in (0, None)
    svg = out.read_text(encoding="utf-8")
    parts = svg.split('<g class="part"')
    before = next(p for p in parts if ">before optimization<" in p)
    after = next(p for p in parts if ">after optimization<" in p)
    return before, after


def _block_titles(column: str) -> list[str]:
    return [t for t in _BOLD.findall(column) if " · block of " in t]


def test_no_block_is_titled_by_an_instruction_name(columns):
    names = {m for stage in ("pre", "post") for m in re.findall(r"^\s*(?:ROOT )?%(\S+) = ", _hlo(stage), re.MULTILINE)}
    titles = _block_titles(columns[0]) + _block_titles(columns[1])
    assert len(titles) >= 10, titles
    named = [t for t in titles if any(part.strip() in names for part in t.split(" · "))]
    assert not named, named


def test_each_layers_box_holds_the_optimizers_work_on_its_weights(columns):
    """AdamW's update of a weight (its moments' decay, their sums with the gradient, the
    weight's new value) is drawn in the box of the layer that weight belongs to, never as
    blocks of its own beside the model (goal 2: the optimizer's work folded into the layer's box).
    The weights of each layer from the entry's parameter names (``params['head']['kernel']``);
    the optimizer's count from the box's phase row."""
    entry = _entry(_hlo("pre"))
    paths = [re.sub(r"\\?'", "", p) for p in re.findall(r"parameter\(\d+\)[^\n]*?op_name=\"([^\"]+)\"", entry)]
    weights: dict[str, int] = {}
    for p in paths:
        parts = re.findall(r"\[([^\]]+)\]", p)
        if p.startswith("params[") and parts and parts[0] in ("patch_embed", "norm", "head"):
            weights[parts[0]] = weights.get(parts[0], 0) + 1
    assert weights == {"patch_embed": 2, "norm": 2, "head": 2}, weights  # the capture it says
    boxes = {texts[0]: texts for body in re.findall(r'<g id="node\d+" class="node">(.*?)</g>', columns[0], re.DOTALL)
             if (texts := _TEXT.findall(body))}
    for layer, count in weights.items():
        rows = " ".join(boxes[layer])
        found = re.search(r"optimizer (\d+)", rows)
        assert found is not None and int(found.group(1)) >= count, (layer, rows)
    # … and no block of the optimizer's work is titled by one of those layers' weights
    titled = [t for t in _block_titles(columns[0]) if " · optimizer · " in t and t.split("/")[0] in weights]
    assert not titled, titled


def test_the_model_is_opened_into_its_own_scopes(columns):
    scopes = set(re.findall(r'op_name="jit\(vit_train_step\)/jvp\(ViT\)/([A-Za-z_]\w*)/', _hlo("pre"))) - {"while"}
    assert scopes == {"patch_embed", "norm", "head"}, scopes
    titles = set(_BOLD.findall(columns[0]))
    assert scopes <= titles, scopes - titles


def test_the_optimized_column_draws_no_copy_xla_added_without_an_op_name(columns):
    entry = _entry(_hlo("post"))
    copies = re.findall(r"^\s*%(copy\.\d+) = [^\n]* copy\([^\n]*\)\s*$", entry, re.MULTILINE)  # no metadata
    assert len(copies) >= 9, copies
    texts = set(_TEXT.findall(columns[1]))
    assert not [c for c in copies if c in texts]

"""An opened repeat's copies stand one below the other, in the order they run, in the unwrapped
picture (render/cut/assemble.py ``_hold_down``), measured on the SVG's own geometry.

Before, the 12-layer JAX GPT step (samples/captures/jax_gpt_step12) drawn with ``--wrap off`` was
a staircase 48,527 pt wide: once the arrows of a layer's weights became stubs, nothing held the
weights' boxes below the layer before, dot ranked them at the top of the picture, and each
opened copy stood beside the one before it, a few rows lower. Everything here is read with
regular expressions written in this file: which layer each copy is, from the entry of post.hlo
(the residual add reading ``params['layers'][k]['b_down']`` ends layer ``k``; a block is named
after its exit), and each copy's box, from its cluster's path in the SVG.
"""

from __future__ import annotations

import gzip
import re
from itertools import pairwise
from pathlib import Path

import pytest

from hloviz.cli import main

GPT12 = Path(__file__).resolve().parent.parent / "samples" / "captures" / "jax_gpt_step12"

_CLUSTER = re.compile(r'<g id="clust\d+" class="cluster">\s*<title>[^<]*</title>\s*<path [^>]*?d="([^"]+)"/>\s*'
                      r"<text[^>]*>([^<]*)</text>")
_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _exits() -> list[str]:
    """Each layer's last instruction, layer 0 first: the forward fusion (``jvp()/add``; the
    optimizer's update reads the bias too) adding the MLP's output and its bias ``b_down`` to
    the residual stream."""
    text = gzip.decompress((GPT12 / "post.hlo.gz").read_bytes()).decode()
    found = {int(k): name for name, k in re.findall(
        r"^\s*%(\S+) = f32\[[^\]]*\]\{[^}]*\} fusion\([^)]*%params__layers___(\d+)___b_down__[^)]*\).*"
        r'op_name="[^"]*/jvp\(\)/add"', text, re.MULTILINE)}
    assert sorted(found) == list(range(12))
    return [found[k] for k in range(12)]


def _boxes(svg: str) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Each cluster's title and box ``(x0, y0, x1, y1)``."""
    out = []
    for m in _CLUSTER.finditer(svg):
        nums = [float(x) for x in _NUM.findall(m.group(1))]
        out.append((m.group(2).replace("&#45;", "-"), (min(nums[0::2]), min(nums[1::2]), max(nums[0::2]), max(nums[1::2]))))
    return out


def _copy(boxes, name: str) -> tuple[float, float, float, float]:
    """The box of the block named after ``name``; of several, the biggest (a layer's copy holds
    its MLP's block, which ends in the same instruction)."""
    hits = [box for title, box in boxes if re.fullmatch(rf"{re.escape(name)} · block of \d+", title)]
    assert hits, name
    return max(hits, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))


@pytest.fixture(scope="module")
def unwrapped(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("gpt12") / "post.svg"
    # --budget 300: the detailed picture (render's default is the overview, issue 33)
    main(["render", str(GPT12), "--budget", "300", "--stage", "post", "--wrap", "off", "-o", str(out)])
    return out.read_text()


@pytest.mark.requires_dot
@pytest.mark.parametrize("phase", ["forward", "backward"])
def test_opened_copies_stack_in_run_order(unwrapped, phase):
    exits = _exits()
    boxes = _boxes(unwrapped)
    if phase == "forward":
        copies = [_copy(boxes, e) for e in exits]  # layer 0 runs first
    else:
        copies = [_copy(boxes, f"backward of {e}") for e in reversed(exits)]  # the last layer first
    for k, (above, below) in enumerate(pairwise(copies)):
        # each copy wholly below the one before (SVG y grows downwards) and under it, not beside
        assert below[1] >= above[3], (phase, k, above, below)
        assert below[0] < above[2] and above[0] < below[2], (phase, k, above, below)


@pytest.mark.requires_dot
def test_the_unwrapped_picture_is_a_column_not_a_staircase(unwrapped):
    width, height = (float(v) for v in re.search(r'viewBox="0\.00 0\.00 ([\d.]+) ([\d.]+)"', unwrapped).groups())
    # before: 33,896 × 5,999 pt (the whole --stage both picture: 48,527 × 17,952)
    assert width < height, (width, height)

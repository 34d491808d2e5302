"""What an ``iota`` still running after optimization computes was not folded.

Round 55 (``benchmarks/heldout/round55.py:roi_head``): ``tf.image.resize(…, method="bilinear")``
lowers to ~70 instructions that compute interpolation weights from ``iota``s and literals. XLA
folds the scalar arithmetic among the literals (``-1.5``) and computes the weights at run time,
in fusions holding the ``iota``s; hloviz walked back from the new constant through every
constant-computable instruction and called all of them folded — the picture's resize blocks
read "13 ops folded → constant.25 = -1.5" over work that runs in kernels #2–#7.

Oracle: the HLO text read by regular expression — the optimized module's ``iota``s named
``resize/ResizeBilinear``, and, in the pre-optimization module, the instructions computed from
that op's ``iota``s (operands followed by name). Fixtures: ``data/orders/roi_head_{pre,post}.hlo.gz``
(``hloviz dump benchmarks/heldout/round55.py:roi_head --arg "f32[2,16,16,8]" -o DIR``, TF 2.21).
"""

from __future__ import annotations

import re
from pathlib import Path

from hloviz.analysis import analyze
from hloviz.parser import parse

from .test_overview_heldout_steps import _text

HERE = Path(__file__).resolve().parent / "data" / "orders"
OP = "resize/ResizeBilinear"
_LINE = re.compile(r"^\s*(?:ROOT\s+)?%(\S+)\s*=\s*(?:\([^=]*?\)|\S+)\s+([a-z][\w-]*)\((.*?)\)(?:,\s*\w+=|$)")


def _from_iotas(text: str) -> set[str]:
    """The instructions computed, directly or not, from an ``iota`` named :data:`OP`."""
    out: set[str] = set()
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        name, opcode, args = m.groups()
        if (opcode == "iota" and f'op_name="{OP}"' in line) or set(re.findall(r"%([\w.\-]+)", args)) & out:
            out.add(name)
    return out


def test_what_a_running_iota_computes_is_not_called_folded():
    pre, post = _text(HERE / "roi_head_pre.hlo.gz"), _text(HERE / "roi_head_post.hlo.gz")
    # the situation: the optimized module still runs the resize's iotas, and holds a scalar XLA computed
    assert re.search(rf'iota\(\).*op_name="{OP}"', post)
    assert re.search(r"constant\(-1\.5\)", post) and not re.search(r"constant\(-1\.5\)", pre)
    running = _from_iotas(pre)
    assert len(running) >= 20
    folding = analyze(parse(pre), parse(post)).folding
    assert folding is not None
    folded = {name for f in folding.folded for name in f.from_instructions}
    assert sorted(folded & running) == []
    # the scalars XLA did fold are still reported, from the resize's own literals
    scalars = [f for f in folding.folded if f.value == "-1.5"]
    assert scalars and all(f.from_instructions for f in scalars)

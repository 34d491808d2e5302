"""Parameters nothing reads are one ``unused`` box, not a row of boxes across the top of the
picture (held-out round 76, ``ctc_step``: Keras's Adafactor keeps a ``velocity`` slot for every
weight and reads only the 1-D weights' ones; after optimization the eight unread slots stood as
five boxes in a row above the model, some pairing slots of unrelated layers; TF 2.21, XLA:CPU,
``tests/data/steps/ctc_step``).

Oracle: the entry computation's parameters that no instruction of the HLO text names as an
operand, by regular expression; boxes from the JSON picture.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from hloviz.cli import main

STEP = Path(__file__).resolve().parent / "data" / "steps" / "ctc_step"


def post_picture(step: Path, tmp_path: Path) -> dict:
    """The JSON picture of the optimized module of a step kept as ``pre.hlo.gz`` / ``post.hlo.gz``."""
    out = tmp_path / "post.json"
    try:
        code = main(["render", "--pre", str(step / "pre.hlo.gz"), "--post", str(step / "post.hlo.gz"),
                     "--stage", "post", "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    return json.loads(out.read_text())


def test_unread_parameters_are_one_unused_box(tmp_path):
    post = gzip.decompress((STEP / "post.hlo.gz").read_bytes()).decode()
    entry = post[post.index("\nENTRY"):].split("\n}\n", 1)[0]
    params = re.findall(r"^\s*%([\w.-]+) = \S+ parameter\(\d+\)", entry, re.MULTILINE)
    unread = [p for p in params if not re.search(rf"%{re.escape(p)}[,)]", entry)]
    assert len(unread) >= 6  # the situation
    nodes = post_picture(STEP, tmp_path)["nodes"]
    holding = [n for n in nodes if set(n["instructions"]) & set(unread)]
    assert len(holding) == 1, [n["rows"][:2] for n in holding]
    assert set(unread) <= set(holding[0]["instructions"])
    assert holding[0]["rows"][0] == "unused"

"""``stats --by scope`` shows a training step's top level first (issue 31, item 9).

MobileNetV3Small's training step has about 170 scopes: the table lists the first 80 rows, and in
tree order those were the model's first layers — the loss and the optimizer, each one row at
the top level, were cut. The table now keeps every top-level row and fills the rest with the
deeper rows in order. The oracle is the op names of the optimized HLO, read by regex, and the
top-level names the Keras step gives (written by hand: ``adam``, the loss).
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from typer.testing import CliRunner

from hloviz.cli import app

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def _post_text(folder: Path) -> str:
    plain = folder / "post.hlo"
    return plain.read_text() if plain.exists() else gzip.decompress((folder / "post.hlo.gz").read_bytes()).decode()


def _rows(capture: str) -> tuple[list[str], str]:
    result = CliRunner().invoke(app, ["stats", str(CAPTURES / capture), "--by", "scope"])
    assert result.exit_code == 0, result.output
    # a row's first cell: "│ " then two spaces per level below the top, then the name
    rows = re.findall(r"^│ ( *)([^\s│][^│]*?)\s*│", result.stdout, re.MULTILINE)
    return [indent + name for indent, name in rows], result.stdout


def test_the_loss_and_the_optimizer_rows_show_when_the_table_is_cut():
    text = _post_text(CAPTURES / "mobilenet_v3_adam")
    tops = set(re.findall(r'op_name="(?:gradient_tape/)?([^/"]+)/', text))
    assert {"adam", "sparse_categorical_crossentropy"} <= tops  # the step's optimizer and loss, by op name
    rows, out = _rows("mobilenet_v3_adam")
    assert re.search(r"… \d+ more scopes", out), "the table is cut (the case of the issue)"
    top_level = [r for r in rows if not r.startswith(" ")]
    assert "adam" in top_level and "sparse_categorical_crossentropy" in top_level, top_level
    assert "MobileNetV3Small" in top_level
    # the deeper rows still fill the table, under their layer, in tree order
    at = rows.index("MobileNetV3Small")
    assert len(rows) > 40 and rows[at + 1].startswith("  ") and rows.index("adam") > at + 1


def test_a_table_that_fits_lists_every_row_in_tree_order():
    rows, out = _rows("keras_cnn_train")
    assert "more scopes" not in out
    top_level = [r for r in rows if not r.startswith(" ")]
    assert top_level[:2] == ["(module) a_inference_cnn_train_step_747__.17", "cnn"]
    assert "adam" in top_level and "sparse_categorical_crossentropy" in top_level
    assert rows.index("  conv1") == rows.index("cnn") + 1

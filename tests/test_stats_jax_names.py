"""``stats --by scope`` and ``diff --by scope`` name a JAX function's scopes as the kernel table
and the explorer do (issue 31, items 4 and 9): the function by its name (``vit_forward``), its
layers below it (``ViT/blocks/mlp``), never JAX's ``jit(f)`` wrapper.

The oracle: the captures' op names start with ``jit(f)/`` (regex over the optimized HLO), the
function's name is read off them, and no row a user reads — the table's first column, the JSON's
``scope`` and ``label`` of each row — matches ``jit\\(``.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hloviz.cli import app

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
JAX_CAPTURES = ("loops_vit", "loops_vit_train", "flax_train_step", "jax_mlp")


def _post_text(folder: Path) -> str:
    plain = folder / "post.hlo"
    return plain.read_text() if plain.exists() else gzip.decompress((folder / "post.hlo.gz").read_bytes()).decode()


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("name", JAX_CAPTURES)
def test_stats_by_scope_names_the_function_without_jit(name):
    functions = set(re.findall(r'op_name="p?jit\(([^()/"]+)\)/', _post_text(CAPTURES / name)))
    assert len(functions) == 1, functions  # a JAX capture: every op name starts with jit(f)/
    function = functions.pop()
    table = _invoke("stats", str(CAPTURES / name), "--by", "scope")
    first_cells = re.findall(r"^│\s*([^│]*?)\s*│", table, re.MULTILINE)
    assert not [c for c in first_cells if re.search(r"jit\(", c)], first_cells
    assert function in [c.split(" ×")[0] for c in first_cells]  # the function's own row, by its name
    rows = json.loads(_invoke("stats", str(CAPTURES / name), "--by", "scope", "--json"))["scopes"]
    read = [(r["scope"], r["label"]) for r in rows]
    assert not [r for r in read if re.search(r"jit\(", f"{r[0]} {r[1]}")], read
    assert (function, function) in read


def test_a_scanned_layer_is_named_below_the_function():
    rows = json.loads(_invoke("stats", str(CAPTURES / "loops_vit"), "--by", "scope", "--json"))["scopes"]
    # ViT › blocks › mlp › fc1, written by hand from samples/loops.py
    assert "ViT/blocks/mlp/fc1" in {r["scope"] for r in rows}


@pytest.mark.parametrize(("before", "after"), [("loops_vit", "loops_vit_relu"),
                                               ("flax_train_step", "flax_train_step"),
                                               ("loops_vit_train", "loops_vit_train")])
def test_diff_by_scope_names_no_jit(before, after):
    text = _invoke("diff", str(CAPTURES / before), str(CAPTURES / after), "--by", "scope")
    assert re.search(r"^By scope", text, re.MULTILINE)
    assert not re.search(r"jit\(", text)
    rows = json.loads(_invoke("diff", str(CAPTURES / before), str(CAPTURES / after), "--by", "scope",
                              "--format", "json"))["scopes"]
    assert rows and not [r for r in rows if re.search(r"jit\(", f"{r['scope']} {r['label']} {r['path']}")]

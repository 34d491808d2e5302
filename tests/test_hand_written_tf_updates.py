"""A TensorFlow update written by hand in a scope of the user's is the optimizer's work.

Round 48 (``benchmarks/heldout/round48.py``): ``per_example_grads`` clips per-example gradients,
adds noise and ``assign_sub``s each weight in a ``tf.name_scope("dp_sgd")`` — no optimizer named
anywhere. Its ops were filed as forward work: boxes titled ``forward · block of 15`` inside the
``dp_sgd`` frame, kernels of layer ``dp_sgd``. Round 51 (``benchmarks/heldout/round51.py``, written
to check the rule on steps it was not built on): ``momentum_by_hand`` (heavy-ball momentum in a
``tf.name_scope("update")``, a velocity variable per weight, ``clip_by_norm`` first) and its
negative, ``gradient_report`` (the same gradients' norms in ``tf.name_scope("grad_report")``,
returned: no variable written, no update), and ``sgd_with_report``, both beside each other (its
``grad_report`` reads gradients and writes no variable: it stays forward work).

Oracles, from the HLO text by regular expression: which ops the user's scope names
(``op_name="update/…"``), and which outputs the module writes into its parameters (the header's
``input_output_alias``: TensorFlow's resource variables).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hloviz.cli import main

from .test_overview_heldout_steps import _text

HERE = Path(__file__).resolve().parent / "data" / "orders"


def stats_json(tmp_path: Path, capsys, name: str, *extra: str) -> dict:
    """``hloviz stats --pre … --post … --json`` (and ``extra``) of the fixture pair ``name``."""
    files = []
    for stage in ("pre", "post"):
        path = tmp_path / f"{name}_{stage}.hlo"
        path.write_text(_text(HERE / f"{name}_{stage}.hlo.gz"), encoding="utf-8")
        files += [f"--{stage}", str(path)]
    try:
        code = main(["stats", *files, *extra, "--json"])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    return json.loads(capsys.readouterr().out)


def _aliased(text: str) -> int:
    """How many outputs the module writes into its parameters (its variables)."""
    header = text.split("\n", 1)[0]
    m = re.search(r"input_output_alias=\{(.*?)\}\s*,\s*entry_computation_layout", header)
    return len(re.findall(r"\{\d*\}\s*:\s*\(", m.group(1))) if m else 0


@pytest.mark.parametrize("name, scope", [("momentum_by_hand", "update"), ("per_example_grads", "dp_sgd"),
                                         ("sgd_with_report", "update")])
def test_a_scope_that_writes_variables_from_gradients_is_the_optimizers(tmp_path, capsys, name, scope):
    pre = _text(HERE / f"{name}_pre.hlo.gz")
    # the situation: variables written, no optimizer named, the update in the user's scope
    assert _aliased(pre) >= 4
    assert not re.search(r'op_name="(?i:sgd|adam|momentum|optimizer)\b', pre)
    assert re.search(rf'op_name="{scope}/', pre)
    report = stats_json(tmp_path, capsys, name)
    ours = [k for k in report["kernels"] if k["op_names"] and all(o.startswith(f"{scope}/") for o in k["op_names"])]
    assert len(ours) >= 4
    for k in ours:  # each kernel of the user's update is filed under their scope, as the optimizer's
        assert k["layer"].startswith(scope) and k["layer"].endswith("(optimizer)"), (k["name"], k["layer"])
    for k in report["kernels"]:  # and nothing else is called the optimizer's
        if "(optimizer)" in k["layer"]:
            assert any(o.startswith(f"{scope}/") for o in k["op_names"]) or not k["op_names"], (k["name"], k["op_names"])


def test_gradient_norms_returned_without_an_update_stay_forward_work(tmp_path, capsys):
    pre = _text(HERE / "gradient_report_pre.hlo.gz")
    assert _aliased(pre) == 0  # no variable written
    assert re.search(r'op_name="grad_report/', pre)
    report = stats_json(tmp_path, capsys, "gradient_report")
    assert any(o.startswith("grad_report/") for k in report["kernels"] for o in k["op_names"])
    assert not [k["name"] for k in report["kernels"] if "optimizer" in k["layer"]]


def test_the_update_is_drawn_in_the_users_scope_and_titled_as_the_optimizers(tmp_path):
    path = tmp_path / "momentum_by_hand_pre.hlo"
    path.write_text(_text(HERE / "momentum_by_hand_pre.hlo.gz"), encoding="utf-8")
    out = tmp_path / "m.svg"
    try:
        code = main(["render", str(path), "-o", str(out)])
    except SystemExit as stop:
        code = stop.code
    assert code in (0, None)
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", out.read_text(encoding="utf-8"))
    assert "update" in texts  # the user's frame
    titles = [t for t in texts if re.match(r"(forward|backward|optimizer) · block of", t)]
    assert titles and all(t.startswith("optimizer ·") for t in titles), titles


def test_stats_by_scope_counts_the_updates_ops_as_the_optimizers(tmp_path, capsys):
    """``stats --by scope`` counted each op's phase by its name alone: the ``update`` row said
    ``forward`` ops beside ``optimizer`` kernels (and a JAX step's row ``optimizer: 0 ops, 17
    kernels``); an op's phase is its instructions' in the scope tree, as the pictures draw it."""
    pre = _text(HERE / "momentum_by_hand_pre.hlo.gz")
    ops = set(re.findall(r'op_name="(update/[^"]+)"', pre))
    assert len(ops) >= 20
    scopes = stats_json(tmp_path, capsys, "momentum_by_hand", "--by", "scope")["scopes"]
    row = next(r for r in scopes if r["scope"] == "update")
    assert set(row["phases"]) == {"optimizer"} and row["phases"]["optimizer"]["ops"] == len(ops), row["phases"]

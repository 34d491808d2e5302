"""The small things a new user tripped on (issue 31, item 9), each checked on real output.

Oracles: the files a dump wrote (listed by the test), post.hlo read by regex, XLA's per-pass
snapshots read by regex, and numbers written by hand (JAX's ``memory_analysis()`` of
``samples/jax_mlp.py:mlp``, measured: 3072 B of arguments, 4 B of output, 1152 B of
temporaries, ``peak_memory_in_bytes`` 3076).
"""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest

from . import run_cli

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "samples" / "captures"


def test_dump_lists_every_file_it_wrote(tmp_path):
    from hloviz.cli.dump import written_files

    for name in ("memory.json", "capture.json", "post.hlo", "pre.hlo"):
        (tmp_path / name).write_text("x")
    (tmp_path / "sub").mkdir()
    assert written_files(tmp_path) == ["pre.hlo", "post.hlo", "capture.json", "memory.json"]


def test_memory_json_carries_the_notes_the_text_prints(capsys):
    folder = str(CAPTURES / "cnn_adam")
    code, text, _ = run_cli(["memory", folder], capsys)
    assert code == 0
    code, out, _ = run_cli(["memory", folder, "--json"], capsys)
    assert code == 0
    notes = json.loads(out)["notes"]
    printed = " ".join(text.split())
    assert notes and all(" ".join(n.split()) in printed for n in notes)
    # the copies note counts the scheduled entry's copy instructions (by regex)
    post = (CAPTURES / "cnn_adam" / "post.hlo").read_text()
    entry = post[post.index("\nENTRY "):]
    copies = len(re.findall(r"^\s*(?:ROOT )?%[\w.\-]+ = \S+ copy\(", entry, re.MULTILINE))
    assert any(n.startswith(f"copies: {copies} copy instruction(s)") for n in notes), notes


def test_jax_peak_is_explained_with_the_modules_numbers():
    from hloviz.analysis.memory.report import _jax_peak_note

    measured = {"argument_size_in_bytes": 3072, "output_size_in_bytes": 4, "alias_size_in_bytes": 0,
                "temp_size_in_bytes": 1152, "peak_memory_in_bytes": 3076}
    note = _jax_peak_note(measured, 4224)
    assert "3076" in note and "4224" in note and "1152 bytes of temporaries" in note
    assert _jax_peak_note(measured, 3076) == "" and _jax_peak_note({}, 4224) == ""
    other = _jax_peak_note({**measured, "peak_memory_in_bytes": 5000}, 4224)
    assert "5000" in other and "temporaries" in other  # not the arguments-and-outputs sum: said so


@pytest.mark.requires_jax
def test_a_flax_module_object_as_target_gets_a_helpful_message(tmp_path, capsys):
    pytest.importorskip("flax")
    model = tmp_path / "net.py"
    model.write_text("import flax.linen as nn\n\n\nclass Net(nn.Module):\n    @nn.compact\n"
                     "    def __call__(self, x):\n        return nn.Dense(4)(x)\n\n\nnet = Net()\n")
    code, _out, err = run_cli(["stats", f"{model}:net"], capsys)
    assert code == 2 and "Traceback" not in err
    assert "Flax Net module object, not a function" in err and "net.apply(params, x)" in err


def test_focus_on_a_fusion_says_it_is_not_made_yet_before_optimization(tmp_path, capsys):
    with tarfile.open(CAPTURES / "passes" / "cnn_sgd.tar.xz") as tar:
        tar.extractall(tmp_path, filter="data")
    before = next(p for p in tmp_path.iterdir() if p.name.endswith("before_optimizations.txt")).read_text()
    assert "broadcast_maximum_fusion" not in before  # XLA's fusion pass makes it
    code, out, _ = run_cli(["passes", str(tmp_path), "--focus", "broadcast_maximum_fusion"], capsys)
    assert code == 0
    first = next(line for line in out.splitlines() if line.strip().startswith("before optimization"))
    assert "gone" not in first and "not there yet" in first


def test_fold_rows_never_print_an_empty_from_or_no_credit_for_tensorflow():
    from hloviz.analysis.passes import FoldCredit, PassStep
    from hloviz.analysis.passes.report import _fold_origin, _fold_writer

    step = PassStep(9, "simplification", "constant_folding")
    nameless = FoldCredit("constant.49", "0.0204", (), step)
    assert _fold_origin(nameless) == "from work without an op name"
    assert _fold_writer(nameless) == "written by snapshot 9, simplification/constant_folding"
    tf = FoldCredit("mul.6", "0.25", ("Prod",), None, "tensorflow", "folded by TensorFlow before XLA saw the function")
    assert _fold_origin(tf) == "from Prod" and "no credit" not in _fold_writer(tf)
    assert _fold_writer(tf).startswith("folded by TensorFlow")


def _layer_paths(name: str) -> set[str]:
    """The Keras layer paths the capture recorded (``layer_scopes``: op-name scope → layer)."""
    return set(json.loads((CAPTURES / name / "capture.json").read_text())["layer_scopes"].values())


def test_memory_names_layers_as_stats_does(capsys):
    code, out, _ = run_cli(["memory", str(CAPTURES / "cnn_adam"), "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    layers = _layer_paths("cnn_adam")
    assert "cnn/logits" in layers
    named = {b["scope"] for b in data["buffers_at_peak"]} | {s["scope"] for s in data["scopes"]}
    model = {s for s in named if s.split("/")[0] == "cnn"}
    assert len(model) >= 4 and model <= layers, sorted(model)  # cnn/logits, not cnn_1/logits_1/MatMul
    assert not any(re.search(r"_1(/|$)", s) for s in named), sorted(named)  # no op-name forms anywhere


def test_did_you_mean_suggests_the_names_stats_prints(capsys, tmp_path):
    folder = str(CAPTURES / "cnn_adam")
    code, _out, err = run_cli(["render", folder, "--scope", "conv11", "-o", str(tmp_path / "a.json")], capsys)
    assert code == 2 and "did you mean" in err
    suggested = err.split("did you mean", 1)[1].strip(" ?\n").split(", ")
    assert suggested[0] == "cnn/conv1" and suggested[0] in _layer_paths("cnn_adam")
    code, _out, err = run_cli(["render", folder, "--scope", suggested[0], "-o", str(tmp_path / "b.json")], capsys)
    assert code == 0, err  # the suggestion is taken back as it is written

"""Every number agrees: on every capture in the repository (and, with TensorFlow, on live Keras
models), the statuses of the function's ops add up to the op count, the verdict is printed from
the JSON's ``summary``, each folded constant is listed once and says where it came from, and a
kernel's size is the same number in the stats table, the JSON, the picture and the report.

The issue examples each of these would catch: three different "ops" counts in one output; the
CNN step listing ``Relu.6 = 0`` six times as folded by TensorFlow; the LSTM's verdict counting
4 constants over a 5-row table; ``add_select_fusion`` drawn as "14 ops" where stats says 10;
``show`` printing ``(from 0 ops)``.
"""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from hloviz import api
from hloviz.analysis import Summary
from hloviz.analysis.glossary import STATUSES
from hloviz.analysis.kernels import work_instructions
from hloviz.cli import main
from hloviz.render.cut import labels
from hloviz.render.page.report import kernel_rows, summary_lines

from . import present

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = sorted(p for p in (ROOT / "samples" / "captures").iterdir() if (p / "post.hlo").is_file())


def check_reconciles(result: api.Stats) -> dict:
    """Every invariant of the issue on one analysed target; returns its JSON for further checks."""
    a = result.analysis
    data = result.to_dict()
    summary = data["summary"]
    # the verdict is printed from the JSON's numbers, and from nothing else
    assert Summary.from_dict(summary).verdict() == data["verdict"] == a.verdict
    if a.mapping is None:
        return data
    # every op exactly once, in exactly one status; the statuses add up to the op count
    assert len(data["mapping"]) == len(a.mapping.ops) == summary["ops"]
    assert set(summary["statuses"]) == set(STATUSES)
    assert sum(summary["statuses"].values()) == summary["ops"]
    assert summary["statuses"] == {s: sum(1 for m in data["mapping"].values() if m["status"] == s) for s in STATUSES}
    assert sum(summary["no_work_types"].values()) == summary["statuses"]["no_work"]
    assert data["verdict"].startswith(f"{summary['ops']} ops → ") or summary["ops"] == 0
    for key, term in STATUSES.items():  # each non-zero status is in the verdict with its number
        if summary["statuses"][key]:
            assert f"{summary['statuses'][key]} {term.word}" in data["verdict"], key

    # folds that are folds: each constant once, with its ops or the reason it names none
    folds = present(a.folding).folded
    keys = [(f.computation, f.constant) for f in folds]
    assert len(keys) == len(set(keys)), "a folded constant is listed twice"
    assert summary["folded_constants"] == len(folds) == len(data["folded"])
    for f in data["folded"]:
        assert f["from"] or f["note"], f"{f['constant']}: from is empty and nothing says why"
    for f in folds:
        for op in f.from_ops:
            assert present(present(a.mapping).get(op)).status == "folded", (f.constant, op)
    folded_ops = [m for m in a.mapping.ops if m.status == "folded"]
    linked = {op for f in folds for op in f.from_ops}
    assert {m.op_name for m in folded_ops} <= linked | set(present(a.folding).computed)
    assert summary["folded_into_constants"] == sum(1 for m in folded_ops if m.constants)
    capture = present(result.capture)
    pre, post = present(capture.pre_module()), present(capture.post_module())
    pre_constants = {(i.shape.to_text(layout=False), " ".join((i.literal or "").split()), i.metadata.op_name)
                     for i in pre.instructions() if i.opcode == "constant"}
    pre_by_name = {i.name: i for i in pre.instructions()}
    for f in folds:
        if f.by == "xla":  # new in the optimized module: no pre-opt constant has its value
            c = present(post.computation(f.computation).get(f.constant))
            assert (c.shape.to_text(layout=False), " ".join((c.literal or "").split()),
                    c.metadata.op_name) not in pre_constants, f.constant
        else:  # the bridge's constant is named after the op it flows into, not another op's literal
            c = pre_by_name.get(f.constant) or post.computation(f.computation).get(f.constant)
            assert c is not None and c.opcode == "constant"
            assert not f.into or c.metadata.op_name in f.into, (f.constant, c.metadata.op_name, f.into)
    # the verdict counts every folded constant its table lists
    if folds:
        named = summary["folded_constants_with_ops"]
        assert named + summary["folded_constants_without_ops"] == summary["folded_constants"]
        said = [int(n) for n in re.findall(r"(\d+) (?:folded )?constants?\b", data["verdict"])]
        assert sum(said) == named + summary["folded_constants_without_ops"], data["verdict"]
        # each group names its own folders, as the table's "by" column says
        for key, group in (("folded_with_ops_by", [f for f in folds if f.from_ops]),
                           ("folded_without_ops_by", [f for f in folds if not f.from_ops])):
            assert summary[key] == {b: sum(1 for f in group if f.by == b) for b in {f.by for f in group}}, key

    # a kernel's size: the same number in the JSON, the table's source, the picture and the report
    rows = kernel_rows(a)
    for k, kd, row in zip(present(a.kernels).kernels, data["kernels"], rows):
        inst = present(post.computation(k.computation).get(k.name))
        assert kd["instructions"] == k.instructions == len(work_instructions(inst)) == row.instructions
        assert kd["ops"] == len(kd["op_names"])
        if k.is_fusion:
            n = k.instructions
            said = f"{n} instruction{'s' if n != 1 else ''}" if n else "no instruction doing work: moves data"
            assert labels.instruction_count(inst) == said
            assert labels.fusion_rows(inst)[2].text.startswith(said)
    assert not any("(from 0 ops" in line for line in summary_lines(a, limit=10**6))
    return data


def _stats_text(target: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        main(["stats", target, "--all"])
    return out.getvalue()


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_every_capture_reconciles(capture):
    result = api.stats(str(capture))
    data = check_reconciles(result)
    # the text output says the same: status table, kernel sizes, verdict
    text = _stats_text(str(capture))
    flat = " ".join(text.split())
    assert flat.endswith(" ".join(data["verdict"].split()))
    s = data["summary"]
    assert f"ops of the function ({s['ops']})" in text
    for key, term in STATUSES.items():
        assert re.search(rf"│ {re.escape(term.word)} +│ {s['statuses'][key]} +│", text), key
    assert re.search(rf"│ total +│ {s['ops']} +│", text)
    for k in data["kernels"]:
        assert re.search(rf"│ {re.escape(k['name'][:20])}.*│ {k['instructions']}: ", text), k["name"]


def test_the_drawn_fusion_labels_say_the_stats_numbers():
    """The picture itself (not only the label function): every fusion cluster's size row."""
    from hloviz.render import draw_module

    for name in ("keras_mha", "keras_lstm", "matmul_chain-tf2.21"):
        result = api.stats(str(ROOT / "samples" / "captures" / name))
        post = present(present(result.capture).post_module())
        view = draw_module(post)
        sizes = {c.rows[1].text: c.rows[2].text for c in view.scene.all_clusters()
                 if c.rows and c.rows[0].text.startswith("fusion")}
        assert sizes
        for k in present(result.analysis.kernels).fusions:
            if k.name in sizes:
                assert sizes[k.name].startswith(f"{k.instructions} instruction"), (k.name, sizes[k.name])


def test_cnn_training_step_folds_each_constant_once():
    """The issue's CNN: ``Relu.6 = 0`` was listed six times and ``Add.4`` nine, all as TF folds."""
    a = api.stats(str(ROOT / "samples" / "captures" / "keras_cnn_train")).analysis
    tf_folds = [f for f in present(a.folding).folded if f.by == "tensorflow"]
    assert not any(f.constant.startswith("Relu") for f in present(a.folding).folded)  # conv1's zero is no fold
    adam = [f for f in tf_folds if f.into and f.into[0].startswith(("adam/Add", "Add"))]
    assert len({f.constant for f in adam}) == len(adam) == 9  # Adam's 8 step counters + the iteration
    assert all(f.value == "1" and len(f.from_ops) == 1 and "Cast" in f.from_ops[0] for f in adam)
    [loss] = [f for f in tf_folds if f.into == ("sparse_categorical_crossentropy/div_no_nan",)]
    assert loss.value == "32" and loss.from_ops == ("sparse_categorical_crossentropy/Prod",
                                                    "sparse_categorical_crossentropy/Cast_2")  # batch size
    assert {n.value for n in present(a.folding).new_constants} == {"-1"}  # written by XLA, not folds


def test_lstm_folds_the_trip_count_once():
    a = api.stats(str(ROOT / "samples" / "captures" / "keras_lstm")).analysis
    [f] = present(a.folding).folded
    assert (f.value, f.by, f.into) == ("20", "tensorflow", ("lstm_1/while",))  # 20 timesteps
    assert a.summary.folded_constants == 1 and "into 1 constant (20) by TensorFlow" in a.verdict


@pytest.mark.requires_tf
@pytest.mark.slow
@pytest.mark.parametrize("fn,capture", [("cnn_train_step", "keras_cnn_train"), ("lstm_forward", "keras_lstm"),
                                        ("mha_block", "keras_mha")])
def test_live_keras_models_reconcile_and_match_their_saved_capture(fn, capture):
    live = api.stats(f"{ROOT}/samples/keras_models.py:{fn}", device="CPU:0", notify=lambda _: None)
    check_reconciles(live)
    saved = api.stats(str(ROOT / "samples" / "captures" / capture))
    assert live.analysis.summary == saved.analysis.summary  # the saved capture is what TF makes today


@pytest.mark.requires_jax
def test_a_live_jax_function_reconciles():
    """Without a TF graph the ops are the HLO's op names: they still add up, each in one status."""
    live = api.stats(f"{ROOT}/samples/jax_mlp.py:mlp", notify=lambda _: None)
    data = check_reconciles(live)
    assert data["summary"]["ops"] == len(data["mapping"]) > 0

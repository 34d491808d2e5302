"""Loops as users write them (issue 31 items 1 and 4): ``samples/loops.py`` (a Flax ViT with
``nn.scan(nn.remat(Block))``, its optax AdamW step, a gelu→relu variant, ``lax.scan``,
``fori_loop``, ``vmap`` over nested ``while_loop`` + ``cond``) and ``samples/tf_loops.py``
(``tf.while_loop`` with ``tf.cond``, ``tf.scan``), from their saved captures.

Every command runs end to end on each (``show`` crashed on ``nn.scan``). The expected values
come from the HLO text read here with regular expressions (the ``while``'s body, its
``known_trip_count``, the instructions and op names of each computation) and from the sample's
own constants written by hand (``DEPTH = 3`` blocks, ``STEPS = 12``, eight ``fori_loop`` steps,
``STEPS = 10`` in TF), never from hloviz's analyses.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from . import run_cli

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
JAX_LOOPS = ["loops_vit", "loops_vit_train", "loops_vit_relu", "loops_rnn_scan", "loops_power_fori", "loops_newton"]
TF_LOOPS = ["tf_while_cond", "tf_scan"]
ALL = JAX_LOOPS + TF_LOOPS

#: A computation's header: ``%name (params) -> type {`` (optimized), ``name {`` (JAX's pre-optimization text)
_COMPUTATION = re.compile(r"^(?:ENTRY )?%?([\w.\-]+)(?: \(.*)? \{\s*$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = \S+? ?.*? ([\w\-]+)\(")
_WHILE = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = .* while\(.*?condition=%?([\w.\-]+), body=%?([\w.\-]+)(.*)$",
                    re.MULTILINE)
_TRIPS = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')


def _text(name: str, stage: str = "post") -> str:
    return (CAPTURES / name / f"{stage}.hlo").read_text()


def _computations(text: str) -> dict[str, list[str]]:
    """Computation → its instruction lines."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        m = _COMPUTATION.match(line)
        if m:
            current = out.setdefault(m.group(1), [])
        elif current is not None and " = " in line:
            current.append(line)
    return out


def _whiles(text: str) -> list[tuple[str, str, str, int | None]]:
    """(while, condition, body, known trip count or None) of every loop of the module."""
    out = []
    for m in _WHILE.finditer(text):
        trips = _TRIPS.search(m.group(4))
        out.append((m.group(1), m.group(2), m.group(3), int(trips.group(1)) if trips else None))
    return out


_CALLEE = re.compile(r"(?:calls|to_apply|body|condition|true_computation|false_computation)=%?([\w.\-]+)")
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")


def _reached(comps: dict[str, list[str]], start: list[str]) -> set[str]:
    """``start`` and every computation their instructions call, transitively."""
    seen, todo = set(start), list(start)
    while todo:
        for line in comps.get(todo.pop(), ()):
            called = _CALLEE.findall(line) + [c.strip().lstrip("%") for b in _BRANCHES.findall(line)
                                              for c in b.split(",")]
            for c in called:
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
    return seen


def _stats_json(capsys, *args: str) -> dict:
    code, out, err = run_cli(["stats", *args, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


# --- every command, end to end ------------------------------------------------------------------


@pytest.mark.requires_dot
@pytest.mark.parametrize("name", [n for n in ALL if n != "loops_vit_train"])
def test_show_renders_every_loop_sample(name, tmp_path, capsys):
    code, _out, err = run_cli(["show", str(CAPTURES / name), "-o", str(tmp_path / "page.html")], capsys)
    assert code == 0, err
    assert (tmp_path / "page.html" / "report.html").stat().st_size > 0


@pytest.mark.slow
@pytest.mark.requires_dot
def test_show_renders_the_scanned_vit_training_step(tmp_path, capsys):
    code, _out, err = run_cli(["show", str(CAPTURES / "loops_vit_train"), "-o", str(tmp_path / "page.html")], capsys)
    assert code == 0, err


@pytest.mark.requires_dot
@pytest.mark.parametrize("name", ALL)
def test_render_both_stages_and_stats_by_scope(name, tmp_path, capsys):
    code, _out, err = run_cli(["render", str(CAPTURES / name), "--stage", "both", "-o", str(tmp_path / "p.svg")],
                              capsys)
    assert code == 0, err
    code, out, err = run_cli(["stats", str(CAPTURES / name), "--by", "scope"], capsys)
    assert code == 0, err
    assert "by scope" in out


@pytest.mark.requires_dot
@pytest.mark.parametrize(("name", "scope"), [("loops_vit", "blocks"), ("loops_vit", "mlp"),
                                             ("loops_vit_train", "mlp"), ("tf_while_cond", "cell")])
def test_render_a_scope_inside_a_loop(name, scope, tmp_path, capsys):
    out_file = tmp_path / "p.svg"
    code, _out, err = run_cli(["render", str(CAPTURES / name), "--stage", "both", "--scope", scope,
                               "-o", str(out_file)], capsys)
    assert code == 0, err
    assert out_file.stat().st_size > 0


# --- the loop body is its scan's scopes, shown once with ×N ---------------------------------------


def test_reducer_op_names_open_no_scope(capsys):
    """The pre-optimization reducers of nn.scan's blocks carry the path relative to the body's
    call (``checkpoint/blocks/ln1/reduce_sum``); that made a top-level scope ``blocks``."""
    comps = _computations(_text("loops_vit", "pre"))
    reducers = set(re.findall(r"to_apply=%?([\w.\-]+)", _text("loops_vit", "pre")))
    named = [line for c in reducers & set(comps) for line in comps[c] if 'op_name="checkpoint/blocks/' in line]
    assert named, "the sample's reducers carry relative op names (the case of the issue)"
    scopes = [r["scope"] for r in _stats_json(capsys, str(CAPTURES / "loops_vit"), "--by", "scope")["scopes"]]
    top = {s.split("/", 1)[0] for s in scopes if s}
    assert "blocks" not in top and "checkpoint" not in top
    # the model's own path, written by hand from samples/loops.py (ViT › blocks › mlp › fc1)
    assert "ViT/blocks/mlp/fc1" in scopes
    assert not any(part in ("while", "body", "closed_call", "checkpoint") for s in scopes for part in s.split("/"))


@pytest.mark.parametrize(("name", "scope", "trips"), [
    ("loops_vit", "ViT/blocks", 3),                       # DEPTH = 3 scanned blocks
    ("loops_vit", "ViT/blocks/mlp", 3),
    ("loops_rnn_scan", None, 12),                                # STEPS = 12
    ("loops_power_fori", None, 8),                               # fori_loop(0, 8, …)
    ("tf_while_cond", "while/cell", 10),                         # STEPS = 10
])
def test_the_loop_bodys_kernels_are_its_scopes_listed_once_with_the_trip_count(name, scope, trips, capsys):
    text = _text(name)
    loops = _whiles(text)
    assert [t for _w, _c, _b, t in loops] == [trips]  # XLA knows the count, and it is the sample's
    _w, condition, body, _t = loops[0]
    comps = _computations(text)
    data = _stats_json(capsys, str(CAPTURES / name), "--by", "scope")
    inside = _reached(comps, [body, condition])  # the body, its condition and what they call (tf.cond's branches)
    in_body = {k["name"] for k in data["kernels"] if k["computation"] in inside}
    body_lines = [line for c in inside for line in comps.get(c, ())]
    # the kernels of the loop's two computations, read off the text: fusions and work ops there
    assert in_body and all(any(re.match(rf"\s*(?:ROOT )?%?{re.escape(k)} = ", x) for x in body_lines) for k in in_body)
    kernels = {k["name"]: k for k in data["kernels"]}
    assert all(kernels[k]["in_loop"] and kernels[k]["loop_runs"] == trips for k in in_body)
    assert all(not k["in_loop"] for k in data["kernels"] if k["name"] not in in_body)
    rows = {r["scope"]: r for r in data["scopes"]}
    if scope is not None:
        row = rows[scope]
        assert row["in_loop"] and row["loop_runs"] == trips
        assert set(row["kernels"]) <= in_body and row["kernels"]
    # listed once: each kernel of the body is one row of the kernel table
    assert len(in_body) == len([k for k in data["kernels"] if k["name"] in in_body])


def test_the_text_tables_say_x3_beside_the_scanned_blocks(capsys):
    code, out, err = run_cli(["stats", str(CAPTURES / "loops_vit"), "--by", "scope", "--depth", "3"], capsys)
    assert code == 0, err
    assert re.search(r"│\s+blocks ×3\s+│", out) and re.search(r"│\s+mlp ×3\s+│", out)
    assert not re.search(r"│\s+(patch_embed|head|norm) ×", out)  # outside the loop


def test_an_unknown_inner_trip_count_is_said_so(capsys):
    """The vmap'd Newton ``while_loop`` runs until convergence: XLA gives no count for it, and the
    outer loop's three iterations do not make it ×3."""
    loops = _whiles(_text("loops_newton"))
    assert sorted((t is None) for *_x, t in loops) == [False, True]
    outer = next(x for x in loops if x[3] == 3)
    inner = next(x for x in loops if x[3] is None)
    data = _stats_json(capsys, str(CAPTURES / "loops_newton"))
    runs = {k["computation"]: (k["in_loop"], k["loop_runs"]) for k in data["kernels"]}
    assert runs.get(outer[2]) == (True, 3) or outer[2] not in runs
    assert runs[inner[2]] == (True, None)


def test_jit_scan_plumbing_is_filed_with_the_layer_it_feeds(capsys):
    """``lax.scan`` slices each block's parameters out of the stacked ones with
    ``jit(dynamic_index_in_dim)``: those kernels belong to the layers that read the slices."""
    text = _text("loops_vit")
    named = set(re.findall(r"^\s*(?:ROOT )?%?([\w.\-]+) = .*op_name=\"[^\"]*jit\(dynamic_index_in_dim\)/",
                           text, re.MULTILINE))
    data = _stats_json(capsys, str(CAPTURES / "loops_vit"), "--by", "scope")
    sliced = named & {k["name"] for k in data["kernels"]}
    assert len(sliced) >= 6  # the kernels whose own op name is the slicing helper's
    scopes = {r["scope"] for r in data["scopes"]}
    assert not any("dynamic_index_in_dim" in s for s in scopes)
    kernels = {k["name"]: k for k in data["kernels"]}
    assert all(kernels[k]["scopes"] and all(s.startswith("ViT/blocks/") for s in kernels[k]["scopes"])
               for k in sliced)


def test_kernel_layers_do_not_join_jit_and_a_reducer_scope(capsys):
    data = _stats_json(capsys, str(CAPTURES / "loops_vit"))
    assert not any(" + " in k["layer"] for k in data["kernels"])


def test_default_depth_counts_from_the_model_not_from_jit(capsys):
    code, out, err = run_cli(["stats", str(CAPTURES / "loops_vit"), "--by", "scope"], capsys)
    assert code == 0, err
    # default depth 2 from the model: ViT › blocks shows (jit(vit_forward) does not count)
    assert re.search(r"│\s+blocks ×3\s+│", out)


# --- diff: gelu → relu points at mlp ----------------------------------------------------------------


def test_a_gelu_to_relu_diff_points_at_mlp(capsys):
    before, after = _text("loops_vit"), _text("loops_vit_relu")
    assert "tanh(" in before and "tanh(" not in after  # gelu's tanh, gone with relu
    code, out, err = run_cli(["diff", str(CAPTURES / "loops_vit"), str(CAPTURES / "loops_vit_relu"),
                              "--by", "scope"], capsys)
    assert code == 0, err
    section = out.split("Kernels that differ, by scope", 1)[1].split("memory", 1)[0]
    listed = [line.strip() for line in section.splitlines() if line.startswith("  ") and not line.startswith("    ")]
    assert listed and all(s.startswith("ViT/blocks/mlp") for s in listed), listed
    assert "while" not in section and "body" not in section
    # the two functions' names (jit(vit_forward), jit(vit_forward_relu)) keep no layer apart:
    # the table has one row for the entry's unnamed instructions, memory compares layer by layer
    entries = re.findall(r"^\s+\(main\.\d+\)", out.split("Kernels that differ", 1)[0], re.MULTILINE)
    assert len(entries) == 1, entries
    memory = out.split("memory (", 1)[1]
    assert "jit(vit_forward" not in memory
    assert re.search(r"peak (\S+ \S+) → \1 \(same\)", memory)  # the relu block allocates what gelu's did


@pytest.mark.requires_dot
def test_the_picture_says_how_many_times_the_loop_body_runs(tmp_path, capsys):
    body = _whiles(_text("loops_vit"))[0][2]
    out_file = tmp_path / "p.dot"
    # the detailed picture (the default overview of a whole module may close the body's scope)
    code, _out, err = run_cli(["render", str(CAPTURES / "loops_vit"), "--stage", "post", "--budget", "300",
                               "-o", str(out_file)], capsys)
    assert code == 0, err
    assert f"{body} · runs ×3" in out_file.read_text()  # the body cluster's caption, DEPTH = 3


# --- an optax step: its update is the optimizer's ----------------------------------------------


def _entry_lines(text: str) -> dict[str, tuple[str, list[str]]]:
    """The entry computation's instructions: name → (opcode, operand names)."""
    entry = text[text.index("\nENTRY "):]
    out = {}
    for m in re.finditer(r"^\s*(?:ROOT )?%([\w.\-]+) = .*? ([\w\-]+)\(([^)]*)\)", entry, re.MULTILINE):
        out[m.group(1)] = (m.group(2), re.findall(r"%([\w.\-]+)", m.group(3)))
    return out


def test_an_optax_adamw_step_shows_its_optimizer_phase(capsys):
    """``vit_train_step`` returns (params, {count, mu, nu}, loss): 23 parameters (the ViT's,
    samples/loops.py), the step count, 23 first and 23 second moments, the loss — the ROOT
    tuple's elements in that order (JAX flattens dicts by sorted key). optax writes the update as
    plain JAX (``jit(vit_train_step)/mul`` …); the kernels computing the new parameters and
    moments must say ``optimizer``, the loss's must not."""
    text = _text("loops_vit_train")
    entry = _entry_lines(text)
    root = re.search(r"^\s*ROOT %([\w.\-]+) = .* tuple\(", text[text.index("\nENTRY "):], re.MULTILINE)
    assert root is not None
    outputs = entry[root.group(1)][1]
    assert len(outputs) == 23 + 1 + 23 + 23 + 1
    data = _stats_json(capsys, str(CAPTURES / "loops_vit_train"))
    kernels = {k["name"]: k for k in data["kernels"]}

    def producer(name: str) -> str:
        while name not in kernels and entry[name][0] in ("bitcast", "get-tuple-element"):
            name = entry[name][1][0]
        return name

    def phase(name: str) -> str:
        m = re.search(r" \(((?:forward|backward|optimizer)(?:\+\w+)*)\)$", kernels[producer(name)]["layer"])
        return m.group(1) if m else "forward"

    updated = outputs[:23] + outputs[24:70]
    phases = [phase(o) for o in updated]
    assert all("optimizer" in p for p in phases), phases
    assert "optimizer" not in phase(outputs[-1])  # the loss
    # before this, the update's ~70 kernels read "forward" (issue 31): most now read optimizer alone
    alone = [k for k in data["kernels"] if k["layer"].endswith("(optimizer)")]
    assert len(alone) >= 46


def test_a_tf_cond_in_a_while_loop_is_one_scope(capsys):
    """TensorFlow names the ops of a ``tf.cond`` branch function in full (``while/cond/mul`` in
    the branch the conditional ``while/cond`` calls): they are not prefixed again."""
    pre = _text("tf_while_cond", "pre")
    branch = re.search(r"true_computation=%?([\w.\-]+)", pre)
    assert branch is not None
    assert any('op_name="while/cond/mul"' in line for line in _computations(pre)[branch.group(1)])
    scopes = {r["scope"] for r in _stats_json(capsys, str(CAPTURES / "tf_while_cond"), "--by", "scope")["scopes"]}
    # by hand from samples/tf_loops.py: the loop ``while``, its ``cell`` name scope, tf.norm, tf.cond
    assert {"while", "while/cell", "while/norm", "while/cond"} <= scopes
    assert not any(s.startswith("while/cond/while") for s in scopes)

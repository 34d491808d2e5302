"""One vocabulary for layer names (issue 36, item 3; issue 31, item 9).

Wherever hloviz names a layer of a JAX model — ``stats --json``'s kernels and op mapping,
``memory --json``, the pictures' scope frames — it writes the path users know (``ViT/blocks/mlp``,
the function by its name): never JAX's wrappers (``jit(f)/``, ``jvp(…)``, ``transpose(…)``) nor
the loop and remat plumbing (``while/body``, ``checkpoint``). Op names stay as the HLO writes
them where an op is quoted (the mapping's keys, ``op_names``, ``op_name``).

The oracles are regexes: over the outputs (no wrapper in a layer field), and over the HLO text
(every mapping key is an ``op_name`` of pre.hlo; a TensorFlow kernel's scopes are paths the op
names write, as before).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hloviz.cli import app

from . import run_cli

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

#: What no layer name may hold: JAX's transformation wrappers and a loop's or remat's plumbing.
WRAPPED = re.compile(r"jit\(|jvp\(|transpose\(|vmap\(|(^|/)while/body(/|$)|(^|/)checkpoint(/|$)|(^|/)remat(/|$)")

JAX = ["loops_vit_train", "flax_train_step", "jax_mlp", "loops_rnn_scan"]


def _json(*args: str) -> dict:
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _layer_fields(data: dict) -> list[tuple[str, str]]:
    """(where, text) for every field of ``stats --by scope --json`` that names a layer."""
    out = [("scopes[].scope", r["scope"]) for r in data.get("scopes") or []]
    for k in data["kernels"]:
        out.append(("kernels[].layer", k["layer"]))
        out += [("kernels[].scopes", s) for s in k["scopes"]]
    out += [("mapping[].layer", m["layer"]) for m in data["mapping"].values()]
    memory = data.get("memory") or {}
    out += [("memory.buffers_at_peak[].scope", b["scope"]) for b in memory.get("buffers_at_peak", [])]
    out += [("memory.scopes[].scope", s["scope"]) for s in memory.get("scopes", [])]
    return out


@pytest.mark.parametrize("name", JAX)
def test_stats_json_names_jax_layers_without_wrappers(name):
    data = _json("stats", str(CAPTURES / name), "--by", "scope")
    fields = _layer_fields(data)
    assert {w for w, _ in fields} >= {"kernels[].layer", "kernels[].scopes", "mapping[].layer", "scopes[].scope"}
    wrapped = sorted({(w, t) for w, t in fields if WRAPPED.search(t)})
    assert not wrapped, wrapped[:8]
    # the mapping's keys are the ops as the HLO names them (quoted, wrappers and all) ...
    pre = (CAPTURES / name / "pre.hlo").read_text()
    op_names = set(re.findall(r'op_name="([^"]*)"', pre))
    assert [k for k in data["mapping"] if WRAPPED.search(k)]  # (the wrappers are there to quote)
    assert all(k in op_names for k in data["mapping"]), sorted(set(data["mapping"]) - op_names)[:4]
    # ... and each op's layer is a row of --by scope, so a script joins the two
    rows = {r["scope"] for r in data["scopes"]}
    missing = sorted({m["layer"] for m in data["mapping"].values()} - rows)
    assert not missing, missing[:8]
    # each kernel's scopes are rows too, and its layer names the first of them (or their common one)
    for k in data["kernels"]:
        assert set(k["scopes"]) <= rows, (k["name"], k["scopes"])


def test_the_scan_step_names_its_function_by_its_name():
    """The kernels of optax's update outside every module: ``vit_train_step``, as the --by scope
    row says, not ``jit(vit_train_step)`` (the HLO's op names say ``jit(vit_train_step)/add``)."""
    post = (CAPTURES / "loops_vit_train" / "post.hlo").read_text()
    assert re.search(r'op_name="jit\(vit_train_step\)/add"', post)
    data = _json("stats", str(CAPTURES / "loops_vit_train"), "--by", "scope")
    layers = {k["layer"].split(" (")[0] for k in data["kernels"]}
    assert "vit_train_step" in layers and "jit(vit_train_step)" not in layers
    assert any(r["scope"] == "vit_train_step" for r in data["scopes"])


@pytest.mark.parametrize("name", ["loops_vit_train", "flax_train_step"])
def test_memory_json_names_jax_layers_without_wrappers(name):
    data = _json("memory", str(CAPTURES / name))
    names = [b["scope"] for b in data["buffers_at_peak"]] + [s["scope"] for s in data["scopes"]]
    assert names and not [n for n in names if WRAPPED.search(n)]


@pytest.mark.requires_dot
@pytest.mark.parametrize("name", ["loops_vit_train", "flax_train_step"])
def test_pictures_name_jax_scopes_without_wrappers(name, tmp_path):
    """Every label a picture shows (a scope frame's title and second line, a box's rows); the
    tooltips quote the op names and may hold wrappers."""
    out = tmp_path / "picture.dot"
    result = CliRunner().invoke(app, ["render", str(CAPTURES / name), "--stage", "both", "--budget", "2000",
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    dot = out.read_text()
    labels = re.findall(r'\blabel=("(?:[^"\\]|\\.)*"|<(?:[^<>]|<[^<>]*>)*>)', dot)
    assert len(labels) > 50
    texts = [re.sub(r"<[^>]*>", " ", x) for x in labels]
    assert not [t for t in texts if WRAPPED.search(t)][:4]
    # an opened scope's second line is its place in the model (``ViT/blocks``), the frame's title its name
    assert re.search(r'<B>blocks</B></TD></TR><TR><TD><FONT POINT-SIZE="9">ViT/blocks</FONT>', dot) or \
        name != "loops_vit_train"


def test_tensorflow_kernels_keep_the_scope_paths_their_op_names_write():
    """TensorFlow's JSON is unchanged: a kernel's scopes are the paths of its op names
    (``cnn_1/conv1_1``), the keys of --by scope's rows (whose ``label`` is the Keras name), and
    an op's ``layer`` is such a row too."""
    folder = CAPTURES / "keras_cnn_train"
    text = (folder / "pre.hlo").read_text() + (folder / "post.hlo").read_text()
    prefixes = set()
    for op in re.findall(r'op_name="([^"]*)"', text):
        parts = op.split("/")
        prefixes |= {"/".join(parts[:k]) for k in range(1, len(parts))}
    data = _json("stats", str(folder), "--by", "scope")
    rows = {r["scope"] for r in data["scopes"]}
    scoped = [s for k in data["kernels"] for s in k["scopes"] if not s.startswith("(")]
    assert any(s.startswith("cnn_1/conv1_1") for s in scoped)
    assert set(scoped) <= prefixes, sorted(set(scoped) - prefixes)[:4]
    assert set(scoped) <= rows
    assert {m["layer"] for m in data["mapping"].values()} <= rows


def test_did_you_mean_names_the_jax_function_by_its_name(tmp_path, capsys):
    """A mistyped --scope is answered with scopes by the names users know, and the one it
    suggests for the function is accepted."""
    code, _out, err = run_cli(["render", str(CAPTURES / "loops_vit_train"), "--scope", "vit_train_stp",
                               "-o", str(tmp_path / "x.svg")], capsys)
    assert code == 2, err
    suggested = re.search(r"did you mean (.*)\?", err)
    assert suggested and "vit_train_step" in suggested.group(1).split(", "), err
    assert not WRAPPED.search(suggested.group(1)), suggested.group(1)
    code, _out, err = run_cli(["render", str(CAPTURES / "loops_vit_train"), "--scope", "vit_train_step",
                               "-o", str(tmp_path / "x.dot")], capsys)
    assert code == 0, err

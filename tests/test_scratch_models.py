"""Per-layer answers on models written from scratch (``samples/keras_resblock.py``,
``samples/flax_model.py``, ``samples/jax_mlp.py``), checked against the HLO text itself.

Each expectation is read here from ``post.hlo`` / ``pre.hlo`` / ``capture.json`` with regular
expressions and hand counts, not through hloviz's parser or analyses.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hloviz.cli import app

from . import run_cli
from .layer_names import shown as _shown

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"

_COMPUTATION = re.compile(r"^(ENTRY )?%?([\w.\-]+) \(.*\{\s*$")
_LINE = re.compile(r"^\s*(?:ROOT )?%([\w.\-]+) = (\S+) ([\w\-]+)\(([^)]*)\)(.*)$")
_OP_NAME = re.compile(r'op_name="([^"]*)"')
_CALLS = re.compile(r"calls=%([\w.\-]+)")
_OPERAND = re.compile(r"%([\w.\-]+)")


def hlo(name: str, stage: str = "post") -> str:
    folder = CAPTURES / name
    plain = folder / f"{stage}.hlo"
    return plain.read_text() if plain.exists() else gzip.decompress((folder / f"{stage}.hlo.gz").read_bytes()).decode()


def read(text: str) -> tuple[dict[str, list[dict]], str]:
    """{computation: [{name, type, opcode, operands, op_name, calls, parameter}]} and the entry."""
    comps: dict[str, list[dict]] = {}
    entry = ""
    current: list[dict] | None = None
    for line in text.splitlines():
        m = _COMPUTATION.match(line)
        if m:
            current = comps.setdefault(m.group(2), [])
            entry = m.group(2) if m.group(1) else entry
            continue
        m = _LINE.match(line)
        if m and current is not None:
            op = _OP_NAME.search(line)
            calls = _CALLS.search(line)
            number = re.match(r"\s*(\d+)", m.group(4)) if m.group(3) == "parameter" else None
            current.append({"name": m.group(1), "type": m.group(2), "opcode": m.group(3),
                            "operands": _OPERAND.findall(m.group(4)), "op_name": op.group(1) if op else "",
                            "calls": calls.group(1) if calls else None,
                            "parameter": int(number.group(1)) if number else None})
    return comps, entry


def stats_json(*args: str) -> dict:
    result = CliRunner().invoke(app, ["stats", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# --- attribution by data flow ------------------------------------------------------------------


def _readers_inside(comps: dict, fusion: dict, operand: str) -> list[str]:
    """The op names of the instructions inside ``fusion`` that read what arrives as ``operand``."""
    body = comps[fusion["calls"]]
    numbers = [k for k, o in enumerate(fusion["operands"]) if o == operand]
    params = {i["name"] for i in body if i["opcode"] == "parameter" and i["parameter"] in numbers}
    return [i["op_name"] for i in body if params & set(i["operands"]) and i["op_name"]]


def test_weight_gradient_convolutions_without_op_names_land_in_their_layer_marked_backward():
    comps, entry = read(hlo("resblock_train_step"))
    unnamed = [i for i in comps[entry] if i["opcode"] == "convolution" and not i["op_name"]]
    assert len(unnamed) == 2  # XLA rebuilt both weight gradients and left them nameless
    data = stats_json(str(CAPTURES / "resblock_train_step"), "--by", "scope")
    kernels = {k["name"]: k for k in data["kernels"]}
    rows = {r["scope"]: r for r in data["scopes"]}
    for conv in unnamed:
        readers = [op for u in comps[entry] if conv["name"] in u["operands"] and u["calls"]
                   for op in _readers_inside(comps, u, conv["name"])]
        grads = {op for op in readers if op.startswith("gradient_tape/") and "Conv2DBackpropFilter" in op}
        assert grads, conv["name"]
        layers = {"/".join(op.split("/")[1:3]) for op in grads}  # gradient_tape/<model>/<layer>/…
        assert len(layers) == 1
        assert kernels[conv["name"]]["scopes"] == sorted(layers)
        assert conv["name"] in rows[layers.pop()]["phases"]["backward"]["kernels"]


def test_no_kernel_with_flops_sits_in_a_scope_of_hlovizs_making():
    data = stats_json(str(CAPTURES / "resblock_train_step"), "--by", "scope")
    for k in data["kernels"]:
        if k["flops"]:
            assert k["scopes"] and not any(s.startswith("(") for s in k["scopes"]), k["name"]


def _literal_names(rows: list[dict], fed: set[int]) -> set[str]:
    out: set[str] = set()
    for i in rows:
        if i["opcode"] == "parameter":
            if i["parameter"] in fed:
                out.add(i["name"])
        elif i["opcode"] in ("constant", "iota") or (i["operands"] and all(o in out for o in i["operands"])):
            out.add(i["name"])
    return out


@pytest.mark.parametrize("name", ["resblock_relu", "resblock_train_step"])
def test_no_layer_lists_a_kernel_only_through_a_literal(name):
    comps, entry = read(hlo(name))
    data = stats_json(str(CAPTURES / name), "--by", "scope")
    entry_literals = _literal_names(comps[entry], set())
    for k in data["kernels"]:
        inst = next(i for i in comps[entry] if i["name"] == k["name"])
        if not inst["calls"]:
            continue
        body = comps[inst["calls"]]
        lits = _literal_names(body, {n for n, o in enumerate(inst["operands"]) if o in entry_literals})
        working = {i["op_name"].removeprefix("gradient_tape/") for i in body if i["name"] not in lits
                   and i["op_name"] and i["opcode"] not in ("parameter", "tuple", "get-tuple-element", "bitcast")}
        if not any("/" in op for op in working):
            continue  # no layer's op name inside: placed by data flow (the tests above)
        for scope in k["scopes"]:
            assert any(op.startswith(scope + "/") for op in working), (k["name"], scope)


def test_a_shared_epsilon_does_not_put_one_batch_norms_rsqrt_in_the_other():
    comps, entry = read(hlo("resblock_train_step"))
    rsqrt = {}  # fusion → the layer of its rsqrt
    for i in comps[entry]:
        for inner in comps.get(i["calls"] or "", []):
            if inner["opcode"] == "rsqrt":
                rsqrt[i["name"]] = inner["op_name"].split("/")[1]
    assert sorted(rsqrt.values()) == ["res_bn_1", "stem_bn_1"]
    rows = {r["scope"]: r for r in stats_json(str(CAPTURES / "resblock_train_step"), "--by", "scope")["scopes"]}
    for fusion, layer in rsqrt.items():
        other = "stem_bn_1" if layer == "res_bn_1" else "res_bn_1"
        assert fusion in rows[f"resblock_1/{layer}"]["kernels"]
        assert fusion not in rows[f"resblock_1/{other}"]["kernels"]


# --- one answer: picture, panel, kernel table and JSON ------------------------------------------


def _picture_layers(name: str, tmp_path: Path) -> dict[str, str]:
    """Kernel → the path of the innermost scope cluster the picture draws it in."""
    out = tmp_path / f"{name}.json"
    result = CliRunner().invoke(app, ["render", str(CAPTURES / name), "--stage", "post", "--budget", "2000",
                                      "--depth", "9", "-o", str(out)])
    assert result.exit_code == 0, result.output
    scene = json.loads(out.read_text())
    clusters = {c["id"]: c for c in scene["clusters"]}

    def scope_above(cid: str | None) -> str:
        """The scope cluster's path (its second row), or for a top-level one its label."""
        while cid is not None:
            c = clusters[cid]
            if c["id"].startswith("s"):
                return c["rows"][1] if len(c["rows"]) > 1 else "label:" + c["rows"][0]
            cid = c["parent"]
        return ""

    found: dict[str, str] = {}
    for c in scene["clusters"]:  # a fusion is a cluster titled by its name
        if c["rows"][0].startswith("fusion") and len(c["rows"]) > 1:
            found[c["rows"][1]] = scope_above(c["parent"])
    for n in scene["nodes"]:
        for inst in n["instructions"]:
            found.setdefault(inst, scope_above(n["cluster"]))
    return found


@pytest.mark.parametrize("name", ["resblock_relu", "resblock_train_step"])
def test_picture_panel_table_and_json_give_each_kernel_the_same_layers(name, tmp_path):
    from hloviz.analysis import analyze
    from hloviz.analysis.scopes import build_scope_tree
    from hloviz.capture import load_target
    from hloviz.render.page.explorer.data import Side, explorer_data
    from hloviz.render.page.report import kernel_layers, kernel_rows

    data = stats_json(str(CAPTURES / name), "--by", "scope")
    by_json = {k["name"]: k["scopes"] for k in data["kernels"]}
    rows = {r["scope"]: r for r in data["scopes"]}
    assert by_json and all(by_json.values())

    picture = _picture_layers(name, tmp_path)
    cap = load_target(str(CAPTURES / name))
    post = cap.post_module()
    analysis = analyze(cap.pre_module(), post, info=cap.info)
    main = explorer_data([Side("post", "after", post, analysis.kernels)], []).main
    panel = {k["name"]: [main["scopes"]["path"][si] for si in k["layers"]] for k in main["kernels"]}
    tree = build_scope_tree(post, stage="post", kernel_report=analysis.kernels)
    paths = {s.display_path: s.path for s in tree.walk()}
    table = {r.name: [paths[x] for x in r.layers] for r in kernel_rows(analysis, None, kernel_layers(tree))}

    for kernel, scopes in by_json.items():
        assert panel[kernel] == scopes, kernel
        assert table[kernel] == scopes, kernel
        drawn = picture.get(kernel)
        if drawn is not None and not scopes[0].startswith("("):
            if drawn.endswith("/(optimizer)"):  # an update is drawn in the layer it updates
                layer = drawn.rsplit("/", 1)[0]
                assert kernel in rows[layer]["phases"]["optimizer"]["kernels"], kernel
                assert rows[scopes[0]]["phase"] == "optimizer", kernel
            elif drawn.startswith("label:"):  # a top-level cluster shows only the layer's name
                assert "/" not in scopes[0] and drawn[6:] in (scopes[0], re.sub(r"_\d+$", "", scopes[0])), kernel
            else:
                assert drawn == scopes[0], kernel


# --- folds --------------------------------------------------------------------------------------


def test_a_folds_constant_has_the_dtype_of_the_op_it_replaced():
    info = json.loads((CAPTURES / "resblock_loop" / "capture.json").read_text())
    assert info["tf_ops"]["zeros_like"] == "Fill"
    produced = info["tf_outputs"]["zeros_like"]  # what TensorFlow says the folded op made
    assert produced == ["f32[128,128]"]
    post_types = {m.group(1): m.group(2) for m in re.finditer(r"%([\w.\-]+) = (\w+)\[[\d,]*\]", hlo("resblock_loop"))}
    data = stats_json(str(CAPTURES / "resblock_loop"))
    folds = [f for f in data["folded"] if "zeros_like" in f["from"]]
    assert len(folds) == 1
    assert post_types[folds[0]["constant"]] == "f32"  # not the loop counter's s32[] 0
    assert folds[0]["value"] == "0"


# --- depth counted from the model ---------------------------------------------------------------


def _flax_modules() -> set[str]:
    """The Flax modules the op names of the train step name right under ``Net`` (read by regex)."""
    names = set()
    for op in _OP_NAME.findall(hlo("flax_train_step")):
        m = re.search(r"(?:^|/)(?:jvp\(|transpose\(jvp\()?Net\)?/([A-Z]\w*_\d+)/", op)
        if m:
            names.add(m.group(1))
    return names


def _table_scopes(*args: str) -> list[str]:
    result = CliRunner().invoke(app, ["stats", str(CAPTURES / "flax_train_step"), "--by", "scope", *args],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return [line.split("│")[1].strip() for line in result.output.splitlines() if line.startswith("│")
            and line.split("│")[1].strip()]


def test_flax_modules_show_by_default_depth_counting_from_the_model():
    modules = _flax_modules()
    assert modules == {"Conv_0", "Dense_0", "Dense_1", "Block_0"}
    shown = _table_scopes()
    assert modules <= set(shown), shown
    # Block_0's own Dense layers are one level deeper: not by default, but with --depth 3 or --all
    assert "Dense_0" in shown and shown.count("Dense_0") == 1
    assert shown.count("Dense_0") < _table_scopes("--depth", "3").count("Dense_0")
    assert _table_scopes("--all") == _table_scopes("--depth", "99")


# --- diff: pairs that make sense, and per layer -------------------------------------------------


def _kernel_layers(text: str) -> dict[str, set[str]]:
    """Entry kernel (fusion or work op) → the layers (second op-name segment) of its named,
    non-literal work, read from the HLO text."""
    comps, entry = read(text)
    lits = _literal_names(comps[entry], set())
    out: dict[str, set[str]] = {}
    for i in comps[entry]:
        if i["opcode"] in ("parameter", "constant", "tuple", "get-tuple-element", "bitcast") or i["name"] in lits:
            continue
        body = comps.get(i["calls"] or "", [])
        inner = _literal_names(body, {n for n, o in enumerate(i["operands"]) if o in lits})
        names = [x["op_name"] for x in body if x["op_name"] and x["name"] not in inner
                 and x["opcode"] not in ("parameter", "constant")] if body else [i["op_name"]]
        out[i["name"]] = {n.removeprefix("gradient_tape/").split("/")[1] for n in names if n.count("/") >= 2}
    return out


def _diff_json(*args: str) -> dict:
    result = CliRunner().invoke(app, ["diff", str(CAPTURES / "resblock_relu"), str(CAPTURES / "resblock_gelu"),
                                      "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_relu_to_gelu_pairs_no_kernels_across_layers():
    before, after = _kernel_layers(hlo("resblock_relu")), _kernel_layers(hlo("resblock_gelu"))
    data = _diff_json()
    pairs = [(k["before"], k["after"]) for k in data["kernels"]["differ"] if k["status"] == "changed"]
    assert pairs
    for a, b in pairs:
        assert before[a] & after[b], (a, before[a], b, after[b])
    # the stem's activation: the one ReLU fusion that holds no residual work becomes the GELU one
    stem_relu = [k for k, layers in before.items() if "stem_act_1" in layers and "res_add_1" not in layers]
    stem_gelu = [k for k, layers in after.items() if "stem_act_1" in layers and "res_add_1" not in layers]
    assert len(stem_relu) == 1 and len(stem_gelu) == 1
    assert (stem_relu[0], stem_gelu[0]) in pairs


def test_diff_by_scope_names_the_activation_layers_kernels_as_changed():
    text = hlo("resblock_gelu")
    gelu_ops = {op for op in _OP_NAME.findall(text) if op.startswith("resblock_1/stem_act_1/")}
    relu_ops = {op for op in _OP_NAME.findall(hlo("resblock_relu")) if op.startswith("resblock_1/stem_act_1/")}
    assert relu_ops == {"resblock_1/stem_act_1/Relu"}
    rows = {r["scope"]: r for r in _diff_json("--by", "scope")["scopes"]}
    act = rows["resblock_1/stem_act_1"]
    assert act["ops"] == {"before": 1, "after": len(gelu_ops)}
    assert act["kernels"]["changed"]
    assert act["flops"]["after"] > act["flops"]["before"]  # GELU does more arithmetic than ReLU
    conv = rows["resblock_1/stem_conv_1"]  # untouched by the change
    assert conv["kernels"]["unchanged"] == 1 and not conv["kernels"]["changed"]
    assert conv["flops"]["delta"] == 0
    for fmt in ("text", "markdown"):
        result = CliRunner().invoke(app, ["diff", str(CAPTURES / "resblock_relu"), str(CAPTURES / "resblock_gelu"),
                                          "--by", "scope", "--format", fmt])
        assert result.exit_code == 0, result.output
        line = next(x for x in result.output.splitlines() if "stem_act" in x and "→" in x)
        assert f"1 → {len(gelu_ops)}" in line, line


def test_diff_by_scope_in_the_html_page(tmp_path):
    out = tmp_path / "diff.html"
    result = CliRunner().invoke(app, ["diff", str(CAPTURES / "resblock_relu"), str(CAPTURES / "resblock_gelu"),
                                      "--by", "scope", "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert 'id="hv-scope-diff"' in page and 'data-scope="resblock_1/stem_act_1"' in page


def test_depth_without_by_scope_is_an_input_error(capsys):
    code, _out, err = run_cli(["diff", str(CAPTURES / "resblock_relu"), str(CAPTURES / "resblock_gelu"),
                               "--depth", "2"], capsys)
    assert code == 2
    assert "--depth applies to --by scope" in err and "Traceback" not in err


# --- focus narrows both sides -------------------------------------------------------------------


def test_focus_narrows_both_sides_of_render_stage_both(tmp_path):
    out = tmp_path / "both.json"
    result = CliRunner().invoke(app, ["render", str(CAPTURES / "resblock_relu"), "--stage", "both", "--focus", "fc1",
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    columns = {c["title"]: c["picture"] for c in json.loads(out.read_text())["columns"]}
    comps, entry = read(hlo("resblock_relu"))
    stem = [i["name"] for i in comps[entry] if i["opcode"] == "convolution" and "stem_conv" in i["op_name"]]
    assert len(stem) == 1  # the stem convolution: many steps from fc1
    drawn = {name for n in columns["after optimization"]["nodes"] for name in n["instructions"]}
    assert stem[0] not in drawn
    total = sum(1 for c in comps.values() for i in c)
    assert 0 < len(drawn) < total / 2
    fc1 = {i["name"] for c in comps.values() for i in c if "fc1_1/" in i["op_name"]}
    assert fc1 & drawn


# --- reports ------------------------------------------------------------------------------------


def test_shows_default_folder_is_keyed_by_file_and_function(tmp_path):
    from hloviz.api.report import _default_folder

    class Cap:
        label = "f"

    a, b = _default_folder("models/a.py:f", Cap()), _default_folder("b.py:f", Cap())
    assert (a, b) == ("a.f", "b.f")
    assert _default_folder("pkg.models:f", Cap()) == "pkg.models.f"
    folder = tmp_path / "matmul_chain-tf2.17"
    folder.mkdir()
    assert _default_folder(str(folder), Cap()) == "matmul_chain-tf2.17"  # two captures of one function


def test_kernel_table_says_where_each_kernel_runs_and_its_layers():
    from hloviz.analysis import analyze
    from hloviz.analysis.scopes import build_scope_tree
    from hloviz.capture import load_target
    from hloviz.render.page.html import report_fragment
    from hloviz.render.page.report import kernel_layers, report_content

    comps, _entry = read(hlo("resblock_loop"))
    whiles = re.findall(r"%([\w.\-]+) = \(.*\) while\(.*body=%([\w.\-]+)", hlo("resblock_loop"))
    assert len(whiles) == 1
    loop, body = whiles[0]
    in_body = {i["name"] for i in comps[body] if i["opcode"] in ("dot", "fusion")}
    assert len(in_body) == 3  # MatMul, the counter's add, the add + tanh fusion
    cap = load_target(str(CAPTURES / "resblock_loop"))
    analysis = analyze(cap.pre_module(), cap.post_module(), info=cap.info)
    tree = build_scope_tree(cap.post_module(), stage="post", kernel_report=analysis.kernels)
    content = report_content("loop", cap.info, analysis, svg=None, notes=[], files=[], layers=kernel_layers(tree))
    html = report_fragment(content)
    assert "<th>runs in</th>" in html and "<th>layers</th>" in html
    rows = {r.name: r for r in content.kernels}
    for name in in_body:
        assert rows[name].runs_in == f"while body of {loop} ({body})"
    assert "KB" not in html and "MB" not in html  # binary units, as the terminal writes them


def test_the_docs_diff_by_scope_example_is_what_the_command_prints(capsys, monkeypatch):
    readme = (CAPTURES.parent.parent / "docs" / "diff.md").read_text(encoding="utf-8")
    command = "hloviz diff samples/captures/resblock_relu samples/captures/resblock_gelu --by scope"
    at = readme.index(command)
    shown = readme[readme.index("```text\n", at) + 8:readme.index("\n```", readme.index("```text\n", at))]
    monkeypatch.chdir(CAPTURES.parent.parent)
    code, out, _err = run_cli(command.split()[1:], capsys)
    assert code == 0
    assert shown == out[out.index("By scope ("):out.index("\nKernels that differ, by scope")].rstrip()


def test_a_jax_capture_says_what_its_ops_are():
    text = hlo("jax_mlp", "pre")
    dots = re.findall(r"= \S+ dot\(.*op_name=\"([^\"]+)\" stack_frame_id=(\d+)", text)  # two call sites
    assert len(dots) == 2 and len({op for op, _ in dots}) == 1 and len({line for _, line in dots}) == 2
    data = stats_json(str(CAPTURES / "jax_mlp"))
    assert any("the same primitive written on two lines of one scope is one op" in n for n in data["notes"])


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_the_explorer_panel_lists_a_kernels_layers_as_stats_does(tmp_path):
    from hloviz import api

    from .browser import chromium, open_page, problems

    data = stats_json(str(CAPTURES / "resblock_relu"), "--by", "scope")
    labels = {r["scope"]: r["label"] for r in data["scopes"]}
    spanning = next(k for k in data["kernels"] if len(k["scopes"]) >= 3)  # the residual fusion
    report = api.show(str(CAPTURES / "resblock_relu"), tmp_path / "out").files["report"]
    with chromium() as browser:
        loaded = open_page(browser, report)
        page = loaded.page
        page.locator(f"#hv-kernels tr[data-kernel='{spanning['name']}'] a.swatch").click()
        page.wait_for_function("() => window.hloviz.selected() !== null")
        shown = page.evaluate("""() => {
            const dts = [...document.querySelectorAll('#hv-panel dt')];
            const dt = dts.find(d => d.textContent === 'layers');
            return dt ? [...dt.nextElementSibling.querySelectorAll('button')].map(b => b.textContent) : null;
        }""")
        assert shown is not None
        assert [s.rsplit("/", 1)[-1] for s in shown] == [labels[s] for s in spanning["scopes"]]
        assert problems(loaded) == []


def test_diff_by_scope_compares_two_jax_functions_layer_by_layer(capsys):
    for name in ("flax_forward", "flax_train_step"):
        assert re.search(r'op_name="jit\((forward|train_step)\)/[^"]*Net\)?/Dense_0/', hlo(name))
    code, out, _err = run_cli(["diff", str(CAPTURES / "flax_forward"), str(CAPTURES / "flax_train_step"),
                               "--by", "scope", "--format", "json"], capsys)
    assert code == 0
    rows = {r["scope"]: r for r in json.loads(out)["scopes"]}
    dense = rows["Net/Dense_0"]  # one row, though the two functions' names differ (jit(forward), jit(train_step))
    assert dense["ops"]["before"] > 0 and dense["ops"]["after"] > dense["ops"]["before"]  # + the backward pass
    assert not any(k.startswith("jit(") for k in rows)


def test_the_kernel_tables_layer_column_holds_every_layer_json_gives():
    data = stats_json(str(CAPTURES / "resblock_train_step"))
    layers = json.loads((CAPTURES / "resblock_train_step" / "capture.json").read_text())["layer_scopes"]
    for k in data["kernels"]:
        layer = k["layer"].split(" (")[0]
        if k["flops"]:
            assert layer, k["name"]  # no kernel with work lacks a layer: data flow names one
        assert "_1" not in layer, layer  # the names stats --by scope writes, not the op names'
        parts = layer.split(" + ")
        for s in k["scopes"]:
            if not s.startswith("("):
                shown = _shown(s, layers)
                assert any(shown == p or shown.startswith(p + "/") for p in parts), (k["name"], layer, s)

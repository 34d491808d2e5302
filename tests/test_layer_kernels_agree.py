"""A layer's kernels are one answer in every view (issue 31, item 5).

MobileNetV3Small's ``expanded_conv_3_squeeze_excite_avg_pool`` holds the ``0.25`` that XLA
merged across blocks and copied, still carrying that layer's op name, into the fusions of
``expanded_conv_4`` … ``7``: a view that counts "kernels holding one of the layer's
instructions" found five, ``stats`` one. Every view now asks
:meth:`hloviz.analysis.scopes.ScopeTree.layers_of`; this test compares, on every sample, the
layer rows of ``stats --by scope``, the explorer's data (the kernels whose layers are the scope
or below it, as its panel counts them), ``diff --by scope`` of a capture with itself, and, where
the two rules differ, the picture ``render --scope`` draws. The one layer the issue names is also
checked against the HLO text read by regex.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hloviz.cli import app

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"
def _post_text(folder: Path) -> str:
    import gzip

    plain = folder / "post.hlo"
    return plain.read_text() if plain.exists() else gzip.decompress((folder / "post.hlo.gz").read_bytes()).decode()


#: Captures whose optimized module names scopes (an op name with a ``/``, read by regex): the
#: plain functions (``matmul_chain``) have no layers to compare.
ALL = sorted(p.name for p in CAPTURES.iterdir()
             if ((p / "post.hlo").exists() or (p / "post.hlo.gz").exists())
             and re.search(r'op_name="[^"/]+/[^"]*"', _post_text(p)))
#: The bigger ones take tens of seconds each (the explorer's data and a diff of the module with itself).
BIG = {"transformer_train-tf2.17", "transformer_train-tf2.21", "jax_gpt_step12", "jax_gpt_step", "densenet121",
       "convnext_tiny", "resnet50", "inception_v3", "efficientnet_b0", "keras_transformer", "jax_scopes",
       "fused_additions", "fused_additions-tf2.17", "fused_additions-tf2.21", "mobilenet_train_sgd",
       "mobilenet_train_adam"}


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def _under(path: str, p: str) -> bool:
    return p == path or p.startswith(path + "/")


def _views(name: str) -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, int]]:
    """scope → kernels by stats, by the explorer's data; scope → kernel count by diff."""
    from hloviz.analysis import analyze
    from hloviz.capture import load_target
    from hloviz.render.page.explorer.data import Side, explorer_data

    folder = str(CAPTURES / name)
    stats = json.loads(_run("stats", folder, "--by", "scope", "--all", "--json"))
    by_stats = {r["scope"]: set(r["kernels"]) for r in stats["scopes"] if r["scope"]}
    cap = load_target(folder)
    post = cap.post_module()
    assert post is not None
    analysis = analyze(cap.pre_module(), post, info=cap.info)
    main = explorer_data([Side("post", "after", post, analysis.kernels)], []).main
    paths = main["scopes"]["path"]
    # stats names a JAX function's scopes as the explorer labels them (``ViT/blocks``, the
    # function by its name: no ``jit(f)``); a TF scope by its op names' path
    shown = {p: (label if p.startswith(("jit(", "pjit(")) else p)
             for p, label in zip(paths, main["scopes"]["label"], strict=True)}
    by_explorer: dict[str, set[str]] = {}
    for k in main["kernels"]:
        for si in k["layers"]:
            p = paths[si]
            while p:
                by_explorer.setdefault(shown.get(p, p), set()).add(k["name"])
                p = p.rsplit("/", 1)[0] if "/" in p else ""
    rows = json.loads(_run("diff", folder, folder, "--by", "scope", "--depth", "99", "--format", "json"))["scopes"]
    by_diff = {r["scope"]: r["kernels"]["after"] for r in rows}
    return by_stats, by_explorer, by_diff


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in BIG else n for n in ALL])
def test_stats_explorer_and_diff_give_each_layer_the_same_kernels(name):
    by_stats, by_explorer, by_diff = _views(name)
    named = {s: ks for s, ks in by_stats.items() if not s.startswith("(")}
    assert named, "no layer"
    for scope, kernels in named.items():
        assert by_explorer.get(scope, set()) == kernels, scope
        if scope in by_diff:
            assert by_diff[scope] == len(kernels), scope


def _picture_kernels(name: str, scope: str, kernels: set[str], tmp_path: Path) -> set[str]:
    out = tmp_path / "scope.json"
    _run("render", str(CAPTURES / name), "--stage", "post", "--scope", scope, "--budget", "4000", "-o", str(out))
    scene = json.loads(out.read_text())
    drawn = {c["rows"][1] for c in scene["clusters"] if c["rows"][0].startswith("fusion") and len(c["rows"]) > 1}
    drawn |= {i for n in scene["nodes"] for i in n["instructions"] if i in kernels}
    return drawn


def test_the_merged_constants_layer_has_one_kernel_in_every_view(tmp_path):
    text = (CAPTURES / "mobilenet_v3_small" / "post.hlo").read_text()
    layer = "MobileNetV3Small_1/expanded_conv_3_squeeze_excite_avg_pool_1"
    # by regex: the fused computations holding an instruction named after the layer, and those
    # whose *work* (a reduce or a multiply, not a constant or its broadcast) is the layer's
    bodies: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in text.splitlines():
        h = re.match(r"^(?:ENTRY )?%?([\w.\-]+) \(.*\{\s*$", line)
        if h:
            current = bodies.setdefault(h.group(1), [])
            continue
        m = re.match(r"^\s*(?:ROOT )?%[\w.\-]+ = \S+ ([\w\-]+)\(.*op_name=\"([^\"]*)\"", line)
        if m and current is not None:
            current.append((m.group(1), m.group(2)))
    callers = dict(re.findall(r"%([\w.\-]+) = \S+ fusion\(.*calls=%([\w.\-]+)", text))
    fusion_of = {body: fusion for fusion, body in callers.items()}
    holding = {fusion_of[b] for b, insts in bodies.items() if b in fusion_of
               and any(op.startswith(layer + "/") for _o, op in insts)}
    working = {fusion_of[b] for b, insts in bodies.items() if b in fusion_of
               and any(op.startswith(layer + "/") and o in ("reduce", "multiply") for o, op in insts)}
    assert len(holding) == 5 and len(working) == 1, (holding, working)
    by_stats, by_explorer, by_diff = _views("mobilenet_v3_small")
    assert by_stats[layer] == by_explorer[layer] == working and by_diff[layer] == 1
    kernels = {k for ks in by_stats.values() for k in ks}
    assert _picture_kernels("mobilenet_v3_small", "expanded_conv_3_squeeze_excite_avg_pool", kernels,
                            tmp_path) == working


def test_the_picture_of_a_layer_draws_its_kernels(tmp_path):
    """``render --scope`` for every layer of MobileNetV3Small's third block: the fusions drawn are
    the layer's kernels by stats."""
    by_stats, _e, _d = _views("mobilenet_v3_small")
    kernels = {k for ks in by_stats.values() for k in ks}
    block = sorted(s for s, ks in by_stats.items() if ks and re.fullmatch(r"MobileNetV3Small_1/expanded_conv_3_\w+", s))
    assert len(block) >= 8
    for scope in block:
        drawn = _picture_kernels("mobilenet_v3_small", scope, kernels, tmp_path)
        assert drawn == by_stats[scope], scope


@pytest.mark.requires_chromium
@pytest.mark.requires_dot
@pytest.mark.slow
def test_the_explorers_layer_panel_lists_the_layers_kernels(tmp_path):
    """The page itself: the panel of the layer whose merged constant sits in five fusions lists
    one kernel, the one ``stats`` gives it."""
    from hloviz import api

    from .browser import chromium, open_page, problems, search

    layer = "MobileNetV3Small_1/expanded_conv_3_squeeze_excite_avg_pool_1"
    by_stats, _e, _d = _views("mobilenet_v3_small")
    report = api.show(str(CAPTURES / "mobilenet_v3_small"), tmp_path / "out").files["report"]
    with chromium() as browser:
        loaded = open_page(browser, report)
        page: Any = loaded.page  # a Playwright page (the package is optional)
        search(page, "expanded_conv_3_squeeze_excite_avg_pool")
        hit = page.locator(f'#hv-results button[data-scope="{layer}"]')
        assert hit.count() >= 1, page.inner_text("#hv-results")
        hit.first.click()
        page.wait_for_function("() => window.hloviz.selected() && window.hloviz.selected().scope !== undefined")
        panel = page.locator("#hv-panel")
        listed = panel.locator("h4:has-text('its kernels') + ul button").all_inner_texts()
        names = {t.split()[1] for t in listed}  # "#12 name · what"
        assert names == by_stats[layer], (names, by_stats[layer])
        assert problems(loaded) == []

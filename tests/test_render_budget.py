"""The node budget, by one path: every module is a tree (scopes, fusions, bodies, blocks found by
structure, repeats) cut to fit — with op names or without — and the picture says what it closed."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import hloviz
from hloviz.render import ViewOptions, draw_module

from .render_samples import flat_module, layered_module

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "samples" / "captures"


def _text(capture: str, stage: str) -> str:
    plain = CAPTURES / capture / f"{stage}.hlo"
    return plain.read_text() if plain.exists() else gzip.decompress(plain.with_suffix(".hlo.gz").read_bytes()).decode()


def _pads(n: int) -> str:
    """A chain of ``n`` pads, each a different shape: no two ops alike, every op a cut."""
    lines = ["HloModule distinct", "", f"ENTRY %e (x: f32[1]) -> f32[{n}] {{", "  %x = f32[1]{0} parameter(0)"]
    prev = "%x"
    for i in range(2, n + 1):
        lines.append(f"  %v{i} = f32[{i}]{{0}} pad({prev}, %x), padding=0_1")
        prev = f"%v{i}"
    lines += [f"  ROOT %r = f32[{n}]{{0}} copy({prev})", "}"]
    return "\n".join(lines) + "\n"


def test_small_modules_are_drawn_whole():
    v = draw_module(hloviz.parse(layered_module(2)))
    assert v.levels == () and v.notes == []
    assert any(c.rows[0].text.startswith("fusion") for c in v.scene.all_clusters())


def test_a_module_without_scopes_is_a_cut_of_fusions_and_blocks():
    m = hloviz.parse(layered_module(60, with_while=True))
    v = draw_module(m, options=ViewOptions(layers=False))
    assert v.cut is not None and v.nodes <= 300
    assert {"blocks", "fusions", "bodies"} <= set(v.levels)
    text = " ".join(v.notes)
    assert "180 fusions drawn as single nodes" in text  # 3 fusions per layer (render_samples), 60 layers
    assert "found by structure closed into single nodes" in text
    # a block is named after its exit, an instruction of the module
    names = {i.name for i in m.instructions()}
    assert all(n.label in names for n in v.cut.nodes if n.kind == "block")


def test_repeated_layers_without_scopes_fold_into_a_repeat():
    # render_samples.layered_module: each of the 60 layers draws 7 units when its fusions are
    # closed (2 weight parameters, the dot, 3 fusions, the add; get-tuple-elements are arrows)
    m = hloviz.parse(layered_module(60, with_while=True))
    v = draw_module(m, options=ViewOptions(layers=False, budget=15))
    assert v.nodes <= 15 and "repeats" in v.levels
    [rep] = [n for n in v.cut.nodes if n.kind == "repeat"]
    sizes = {c.size for c in rep.children}
    assert len(rep.children) >= 10 and len(sizes) == 1 and next(iter(sizes)) % 7 == 0, (len(rep.children), sizes)
    assert any(f"({len(rep.children)} copies in all)" in n for n in v.notes)


def test_a_chain_without_repeats_is_cut_at_its_waists_not_into_runs():
    v = draw_module(hloviz.parse(_pads(400)), options=ViewOptions(budget=50))
    assert v.nodes <= 50 and v.levels == ("blocks",)
    assert not any("consecutive" in n or "grouped" in n for n in v.notes)
    blocks = [n for n in v.cut.nodes if n.kind == "block"]
    assert len(blocks) >= 10
    # each block is a stretch of the chain ending at its exit (the chain's ops are v2 … v400)
    for b in blocks:
        members = sorted(int(m.group(1)) for leaf in v.cut.tree.leaves(b)
                         for m in [re.fullmatch(r"v(\d+)", v.cut.tree.names[leaf.name])] if m)
        assert members and members == list(range(members[0], members[-1] + 1)), b
        assert b.label == f"v{members[-1]}"


def test_coarse_keeps_every_fusion_and_body_closed():
    m = hloviz.parse(layered_module(2, with_while=True))
    v = draw_module(m, options=ViewOptions(coarse=True, budget=100))
    assert not any(c.rows[0].text.startswith("fusion") for c in v.scene.all_clusters())
    assert v.levels[-2:] == ("fusions", "bodies")
    assert "6 fusions drawn as single nodes" in v.notes  # 3 per layer, 2 layers


def test_collapsed_instructions_still_map_to_their_node():
    m = hloviz.parse(layered_module(60))
    v = draw_module(m)
    assert v.node_of["e.0.3"] == v.node_of["f.0"]  # inside the first layer's (closed) fusion
    assert v.node_of["d.30"] in v.scene.nodes


@settings(max_examples=25, deadline=None)
@given(layers=st.integers(1, 40), budget=st.integers(1, 120), flat=st.booleans(), named=st.booleans())
def test_the_budget_always_holds(layers, budget, flat, named):
    text = flat_module(layers) if flat else layered_module(layers, with_while=True)
    v = draw_module(hloviz.parse(text), options=ViewOptions(budget=budget, layers=named))
    assert v.nodes <= budget
    if v.levels:
        assert v.notes


def test_no_runs_of_consecutive_instructions_anywhere():
    """The old fallback (``runs of up to N consecutive nodes``, ``ops 61–72``) is gone from the
    code, not only from these pictures."""
    for path in (ROOT / "hloviz").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "consecutive nodes grouped" not in text and '"segment"' not in text, path
        assert '"run"' not in text, path
    assert not (ROOT / "hloviz" / "render" / "collapse.py").exists()


def test_jax_gpt_step_without_name_scopes_is_drawn_by_the_tree_with_blocks():
    text = _text("jax_gpt_step", "post")
    assert "named_scope" not in text
    for budget in (60, 300):
        v = draw_module(hloviz.parse(text), options=ViewOptions(budget=budget))
        assert v.cut is not None and v.nodes <= budget
        kinds = {n.kind for n in v.cut.tree.nodes.values()}
        assert "block" in kinds and "repeat" in kinds
        assert not any("consecutive" in n for n in v.notes)


def test_fused_additions_is_one_tree_before_and_after():
    # the seed: 1000 adds of a constant; after optimization one fusion holds them all (post.hlo)
    post = _text("fused_additions", "post")
    fusions = re.findall(r"^\s*(?:ROOT\s+)?%?(\S+) = \S+ fusion\(", post, re.MULTILINE)
    assert len(fusions) == 1
    v = draw_module(hloviz.parse(post), options=ViewOptions(budget=3))
    assert v.cut is not None and v.nodes <= 3
    assert [n.kind for n in v.cut.nodes].count("fusion") == 1  # too big to open within 3 nodes
    assert v.node_of[fusions[0]] in v.scene.nodes
    assert "1 fusion drawn as a single node" in v.notes
    pre = draw_module(hloviz.parse(_text("fused_additions", "pre")), options=ViewOptions(budget=20))
    assert pre.cut is not None and pre.nodes <= 20


def test_hub_arrows_are_left_out_and_said_so():
    n = 100
    lines = ["HloModule hub", "", "ENTRY %e (p: f32[4], q: f32[4]) -> (" + ", ".join(["f32[4]"] * n) + ") {",
             "  %p = f32[4]{0} parameter(0)", "  %q = f32[4]{0} parameter(1)"]
    ops = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "atan2")
    for i in range(n):
        lines.append(f"  %o{i} = f32[4]{{0}} {ops[i % len(ops)]}(%p, %q)")
    lines += ["  ROOT %t = (" + ", ".join(["f32[4]{0}"] * n) + ") tuple(" + ", ".join(f"%o{i}" for i in range(n)) + ")",
              "}"]
    v = draw_module(hloviz.parse("\n".join(lines) + "\n"), options=ViewOptions(budget=1000))
    # p, q and the ROOT tuple are hubs (TensorBoard's rule): each op would hang on by hub arrows
    # alone, so all 300 arrows become stub rows at their ends, naming the far ends
    assert v.scene.edges == []
    p = v.scene.nodes[v.node_of["p"]]
    assert p.rows[-1].text.startswith("→ 100 users: ")
    assert any(note.startswith("300 arrows drawn as ← / → rows at their ends") for note in v.notes)
    assert [r.text for r in v.scene.nodes[v.node_of["o7"]].rows[-2:]] == ["← 2 inputs: parameter 0, parameter 1",
                                                                          "→ ROOT tuple"]


def test_depth_counts_from_the_users_function_not_jax_jit_wrapper():
    # JAX writes jit(train_step)/ in front of every op name (read here from the HLO text):
    # --depth 1 is the function's own top-level scopes (the model, the loss), not jit(...)
    text = _text("jax_scopes", "pre")
    tops = {m.split("/")[0] for m in re.findall(r'op_name="([^"]*/[^"]*)"', text)}
    assert tops == {"jit(train_step)"}
    v = draw_module(hloviz.parse(text), options=ViewOptions(depth=1, budget=1000))
    closed = [n for n in v.cut.nodes if n.kind == "scope"]
    assert closed and all(n.path.count("/") == 1 and n.path.startswith("jit(train_step)/") for n in closed)
    assert {n.name for n in closed} >= {"Transformer"}
    assert any("--depth 1" in n for n in v.notes)


def test_a_repeat_opens_in_place_to_its_first_copy_and_names_the_others():
    # DenseNet121's dense blocks: conv2 holds 6 dense layers, conv3 12, conv4 24, conv5 16
    # (counted from the op names in pre.hlo.gz)
    text = _text("densenet121", "pre")
    layers = {b: len(set(re.findall(rf'op_name="[^"/]*/conv{b}_block(\d+)_concat', text))) for b in (2, 3, 4, 5)}
    assert layers == {2: 6, 3: 12, 4: 24, 5: 16}
    module = hloviz.parse(text)
    top = draw_module(module, options=ViewOptions(budget=40))
    reps = [n for n in top.cut.nodes if n.kind == "repeat"]
    assert reps, [n.kind for n in top.cut.nodes]
    rep = max(reps, key=lambda n: len(n.children))
    copies = len(rep.children)
    assert copies in {n - 1 for n in layers.values()} | set(layers.values())
    opened = draw_module(module, options=ViewOptions(budget=40, open=(rep.key,)))
    assert opened.cut is not None and rep.key not in opened.cut.keys
    # the rest of the picture is as it was
    assert {k for k in top.cut.keys if k != rep.key} <= opened.cut.keys
    titles = [c.rows[0].text for c in opened.scene.all_clusters()]
    assert any(t.endswith(f" · copy 1 of {copies}") for t in titles), titles
    more = [n.rows[0].text for n in opened.scene.nodes.values() if "more copies of" in n.rows[0].text]
    assert len(more) == 1 and more[0].startswith(f"{copies - 1} more copies of "), more

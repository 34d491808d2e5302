"""Real models drawn as their own structure: the scope tree cut to the budget (saved captures,
no TensorFlow needed)."""

from __future__ import annotations

import gzip
import itertools
import re
from pathlib import Path

import pytest

from hloviz.analysis import analyze
from hloviz.capture import Capture, load_target
from hloviz.errors import InputError
from hloviz.ir import HloModule
from hloviz.render import ViewOptions, draw_module
from hloviz.render.cut.cut import fit
from hloviz.render.cut.labels import kernel_badge, kernel_list
from hloviz.render.layout.sidebyside import side_by_side
from hloviz.render.tree.tree import Step, build_tree

from . import entry_of, present

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"


@pytest.fixture(scope="module", params=["mobilenet_v2", "resnet50"])
def model(request):
    cap = load_target(str(CAPTURES / request.param))
    pre, post = both_modules(cap)
    return request.param, pre, post, analyze(pre, post, info=cap.info)


def both_modules(cap: Capture) -> tuple[HloModule, HloModule]:
    """A capture's pre- and post-optimization modules (every capture these tests read has both)."""
    return present(cap.pre_module(), "a pre module"), present(cap.post_module(), "a post module")


def keras_layers(module) -> set[str]:
    """The Keras layers, read from the HLO's op names (``model_1/<layer>_1/op``), suffix off."""
    out = set()
    for inst in module.instructions():
        parts = inst.metadata.op_name.split("/")
        if len(parts) >= 3 and not parts[0].startswith("XLA"):
            out.add(re.sub(r"_\d+$", "", parts[1]))
    return out


def words(view) -> set[str]:
    rows = [r.text for n in view.scene.nodes.values() for r in n.rows]
    rows += [r.text for c in view.scene.all_clusters() for r in c.rows]
    return {w for text in rows for w in re.split(r"[\s/·:,()]+", text)}


def test_the_default_picture_names_the_layers_and_fits_the_budget(model):
    _name, pre, post, analysis = model
    layers = keras_layers(pre)
    assert len(layers) > 100
    sbs = side_by_side(pre, post, analysis, options=ViewOptions(budget=300))
    named = layers & (words(sbs.pre) | words(sbs.post))
    assert len(named) >= 0.9 * len(layers), sorted(layers - named)[:10]
    for view in (sbs.pre, sbs.post):
        assert 0.8 * 300 <= view.nodes <= 300
        assert "scopes" in view.levels


@pytest.mark.parametrize("budget", [150, 300, 400])
def test_the_budget_is_used(model, budget):
    _, pre, post, _ = model
    for module in (pre, post):
        v = draw_module(module, options=ViewOptions(budget=budget))
        assert 0.8 * budget <= v.nodes <= budget


def test_kernel_colours_and_numbers_match_left_and_right(model):
    _, pre, post, analysis = model
    sbs = side_by_side(pre, post, analysis, options=ViewOptions(budget=300))
    post_badges = {n.badge: n.fill for n in sbs.post.scene.nodes.values() if n.badge and "," not in n.badge
                   and "–" not in n.badge}
    pre_single = [n for n in sbs.pre.scene.nodes.values() if n.badge in post_badges]
    assert len(pre_single) > 20
    assert all(n.badge is not None and n.fill == post_badges[n.badge] for n in pre_single)
    for view in (sbs.pre, sbs.post):
        for n in view.scene.nodes.values():
            assert not n.badge or re.fullmatch(r"#\d+(–\d+)?(, \d+(–\d+)?)?( …)?", n.badge), n.badge


def by_name(module) -> dict:
    return {i.name: i for i in module.instructions()}


def test_scope_draws_one_block_open_with_its_layers_and_fusions():
    cap = load_target(str(CAPTURES / "mobilenet_v2"))
    post = present(cap.post_module(), "a post module")
    v = draw_module(post, options=ViewOptions(scope="block_5", budget=300))
    clusters = [[r.text for r in c.rows] for c in v.scene.all_clusters()]
    # (a BatchNormalization layer titled by its Keras name, not by TensorFlow's ``batchnorm`` scope in it)
    assert {"block_5_expand", "block_5_project", "block_5_expand_BN"} <= {c[0] for c in clusters}
    assert sum(1 for c in clusters if c[0] == "fusion kLoop") >= 4
    # every kernel drawn holds an op of block 5, as the optimized HLO's op names say
    insts = by_name(post)
    for name in v.node_of:
        inst = insts[name]
        if inst.parent is not None and inst.parent is post.entry and inst.opcode in ("fusion", "dot", "convolution"):
            names = {i.metadata.op_name for c in inst.called_computations for i in c.instructions}
            assert any("/block_5_" in n for n in names | {inst.metadata.op_name}), name


def test_unknown_names_list_the_closest(model):
    _, pre, post, _ = model
    with pytest.raises(InputError) as err:
        draw_module(post, options=ViewOptions(focus="conv2_blok1_1_conv" if "resnet" in post.name.lower()
                                              or "conv2_block1_1_conv_1" in str(keras_layers(pre)) else "blok_5_expnd"))
    assert "did you mean" in str(err.value)
    with pytest.raises(InputError, match="no scope"):
        draw_module(post, options=ViewOptions(scope="no_such_layer_at_all"))


def test_focus_by_layer_name_applies_to_both_sides():
    cap = load_target(str(CAPTURES / "mobilenet_v2"))
    pre, post = both_modules(cap)
    sbs = side_by_side(pre, post, analyze(pre, post, info=cap.info),
                       options=ViewOptions(focus="block_5_expand", radius=1))
    for view in (sbs.pre, sbs.post):
        assert view.nodes < 40
        assert any(n.startswith("focus:") for n in view.notes)
    pre_names, post_names = by_name(pre), by_name(post)
    assert any("block_5_expand_1/" in pre_names[m].metadata.op_name for m in sbs.pre.node_of)
    assert any("block_5_expand_1/" in post_names[m].metadata.op_name for m in sbs.post.node_of)


def test_depth_keeps_deeper_scopes_closed():
    cap = load_target(str(CAPTURES / "mobilenet_v2"))
    v = draw_module(present(cap.pre_module(), "a pre module"), options=ViewOptions(depth=2, budget=1000))
    assert v.nodes < 200  # one node per layer, nothing opened below the layers
    assert any("--depth 2" in n for n in v.notes)


def test_training_step_reads_forward_backward_optimizer_per_layer():
    cap = load_target(str(CAPTURES / "keras_transformer"))
    for module in both_modules(cap):
        v = draw_module(module, options=ViewOptions(budget=150), info=cap.info)
        assert v.nodes <= 150
        layers = {}
        for node in v.scene.nodes.values():
            rows = [r.text for r in node.rows]
            phases = next((t for t in rows if re.match(r"(forward|backward|optimizer) \d", t)), "")
            layers[rows[0]] = phases
        for cluster in v.scene.all_clusters():  # an open layer: the phases of what it holds
            inner, stack = [], [cluster]
            while stack:
                c = stack.pop()
                inner += c.nodes
                stack += c.clusters
            layers[cluster.rows[0].text] = " ".join(layers.get(v.scene.nodes[k].rows[0].text, "") for k in inner)
        # each layer of a block holds its forward, backward and optimizer (Adam) work
        for layer in ("attention", "norm_1", "mlp_in"):
            assert layer in layers, sorted(layers)[:20]
            assert all(p in layers[layer] for p in ("forward", "backward", "optimizer")), (layer, layers[layer])


def test_cut_fits_level_by_level_and_moves():
    routes = []
    for b in range(6):
        for layer in range(5):
            for op in range(4):
                routes.append(([Step("scope", "m", "m"), Step("scope", f"b{b}", f"m/b{b}"),
                                Step("scope", f"b{b}_l{layer}", f"m/b{b}/b{b}_l{layer}")], f"u{b}.{layer}.{op}"))
    tree = build_tree(routes)
    assert tree.root.size == 120
    blocks = fit(tree, 6)  # the model alone under the root opens for free
    assert blocks.count == 6 and all(n.kind == "scope" and n.depth == 2 for n in blocks.nodes)
    assert fit(tree, 10).count == 10  # the budget left opens a block: 5 blocks + 5 layers
    assert fit(tree, 20).count == 18  # three blocks open; a fourth would not fit
    assert fit(tree, 1000).count == 120
    assert fit(tree, 1000, max_depth=3).count == 30  # --depth 3: layers stay closed
    layer = next(n for n in tree.nodes.values() if n.name == "b0_l0")
    block = present(layer.parent, "the layer's block")
    moved = blocks.expand(block.key)
    assert moved.count == 10 and moved.collapse(block.key).keys == blocks.keys
    assert {n.key for n in moved.open()} == {block.key, present(block.parent, "the block's model").key}
    edges = blocks.edges([("u0.0.0", "u1.0.0"), ("u0.0.0", "u0.1.0")])
    assert list(edges.values()) == [1]


def test_kernel_badges_read_cleanly():
    assert kernel_badge([2, 3, 13, 16, 17, 54]) == "#2–3, 13 …"
    assert kernel_badge([7]) == "#7"
    assert kernel_list([1, 2, 3, 13, 16]) == "kernels #1–3, #13, #16"
    assert kernel_list([4]) == "kernel #4"


# The heat scale as the README describes it, written out here: white for nothing, then
# #ffee99, #fdae61 and #d73027 (the hottest) at equal steps of log(1 + value) / log(1 + top).
_HEAT_SPEC = ((255, 255, 255), (255, 238, 153), (253, 174, 97), (215, 48, 39))


def _expected_heat(value: float, top: float) -> tuple[int, ...]:
    import math

    if value <= 0:
        return _HEAT_SPEC[0]
    pos = math.log1p(value) / math.log1p(top) * (len(_HEAT_SPEC) - 1)
    k = min(int(pos), len(_HEAT_SPEC) - 2)
    return tuple(round(a + (b - a) * (pos - k)) for a, b in zip(_HEAT_SPEC[k], _HEAT_SPEC[k + 1]))


def _rgb(fill: str) -> tuple[int, ...]:
    return tuple(int(fill[i:i + 2], 16) for i in (1, 3, 5))


def test_color_by_flops_is_a_heat_scale_of_the_kernel_table():
    cap = load_target(str(CAPTURES / "mobilenet_v2"))
    pre, post = both_modules(cap)
    analysis = analyze(pre, post, info=cap.info)
    sbs = side_by_side(pre, post, analysis, options=ViewOptions(scope="block_5"), color_by="flops")
    flops = {k.name: k.flops for k in present(analysis.kernels, "a kernel report").kernels}
    top = max(flops.values())
    assert any("colour: FLOPs per kernel" in line for line in sbs.dot.splitlines())
    entry = entry_of(post)
    dots = [name for name in sbs.post.node_of if name in flops and (inst := entry.get(name)) is not None
            and inst.opcode == "dot"]
    assert len(dots) >= 2
    fills = {name: _rgb(sbs.post.scene.nodes[sbs.post.node_of[name]].fill) for name in dots}
    for name in dots:  # an unfused dot is its own node, filled by its FLOPs on the scale above
        assert fills[name] == _expected_heat(flops[name], top) != (255, 255, 255), name
    # more FLOPs is never a cooler fill: the green channel falls all along the scale
    by_flops = sorted(dots, key=lambda n: flops[n])
    for a, b in itertools.pairwise(by_flops):
        assert fills[a][1] >= fills[b][1], (a, b)
    with pytest.raises(InputError, match="--color-by"):
        side_by_side(pre, post, analysis, color_by="heat")


def test_the_view_carries_its_cut_for_an_explorer():
    cap = load_target(str(CAPTURES / "mobilenet_v2"))
    post = present(cap.post_module(), "a post module")
    v = draw_module(post, options=ViewOptions(budget=100))
    assert v.cut is not None and v.cut.count == v.nodes == len(v.drawn_as)
    assert set(v.drawn_as.values()) == set(v.scene.nodes)
    # moving the cut: open the first closed block and draw again with a bigger budget
    closed = next(n for n in v.cut.nodes if n.kind == "group")
    opened = v.cut.expand(closed.key)
    assert opened.count == v.cut.count - 1 + len(closed.children)
    # without op names' scopes the picture is still a cut, of fusions and blocks found by structure
    plain = draw_module(post, options=ViewOptions(layers=False, budget=100)).cut
    assert plain is not None and plain.count <= 100
    assert not any(n.kind in ("scope", "group") for n in plain.tree.nodes.values())
    assert any(n.kind == "block" for n in plain.nodes)


def test_cli_names_and_bad_options_exit_2(tmp_path, capsys):
    from hloviz.cli import main

    target = str(CAPTURES / "mobilenet_v2")
    for argv, message in (
        (["--scope", "blok_5_expnd"], "no scope 'blok_5_expnd'"),
        (["--focus", "blok_5_expnd"], "did you mean"),
        (["--depth", "0"], "--depth must be 1 or more"),
        (["--color-by", "heat"], "--color-by must be one of kernel, flops, bytes"),
    ):
        with pytest.raises(SystemExit) as err:
            main(["render", target, "--stage", "both", "-o", str(tmp_path / "x.dot"), *argv])
        assert err.value.code == 2
        out = capsys.readouterr().err
        assert message in out and "Traceback" not in out
    assert not (tmp_path / "x.dot").exists()
    main(["render", target, "--stage", "both", "--focus", "block_5_expand", "--radius", "1", "-o",
          str(tmp_path / "f.dot")])
    text = (tmp_path / "f.dot").read_text()
    assert text.count("focus: ") == 2  # both columns focused


def _layers_in_text(folder: Path) -> set[str]:
    """The Keras layers of a capture, read from its pre-optimization HLO text with a regex
    (``op_name="resnet50_1/conv2_block1_1_conv_1/convolution"`` → ``conv2_block1_1_conv``), not
    through hloviz's parser or scope tree."""
    path = folder / "pre.hlo"
    text = path.read_text() if path.exists() else gzip.decompress((folder / "pre.hlo.gz").read_bytes()).decode()
    return {re.sub(r"_\d+$", "", m) for m in re.findall(r'op_name="(?!XLA)[^"/]+/([^"/]+)/[^"]*"', text)}


@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet50", "efficientnet_b0", "convnext_tiny"])
def test_named_models_name_every_layer_at_the_default_budget(name):
    # the layer names carry these models' structure: the default picture (budget 300) names
    # each of their 116 to 229 layers, a group of layers opened before a layer's ops
    cap = load_target(str(CAPTURES / name))
    pre, post = both_modules(cap)
    layers = _layers_in_text(CAPTURES / name)
    assert len(layers) > 100
    sbs = side_by_side(pre, post, analyze(pre, post, info=cap.info), options=ViewOptions())
    assert sbs.pre.nodes <= 300 and sbs.post.nodes <= 300
    missing = layers - words(sbs.pre)
    assert not missing, sorted(missing)[:10]


def test_resnet_bottlenecks_fold_as_repeats_when_the_budget_needs_it():
    # ResNet50's stages hold 3, 4, 6 and 3 bottlenecks; the first of each has a projection
    # shortcut (``convS_block1_0_conv``) and is built differently, the rest are copies. Counted
    # on the HLO text, not through hloviz's tree.
    layers = _layers_in_text(CAPTURES / "resnet50")
    stages: dict[str, set[int]] = {}
    projected: dict[str, set[int]] = {}
    for name in layers:
        m = re.fullmatch(r"conv(\d)_block(\d+)_(\d)_\w+", name)
        if m:
            stages.setdefault(m[1], set()).add(int(m[2]))
            if m[3] == "0":
                projected.setdefault(m[1], set()).add(int(m[2]))
    assert {s: len(b) for s, b in stages.items()} == {"2": 3, "3": 4, "4": 6, "5": 3}
    expected = {f"conv{s}_block2_* ×{len(b) - len(projected[s])}" for s, b in stages.items()}
    pre = load_target(str(CAPTURES / "resnet50")).pre_module()
    small = draw_module(pre, options=ViewOptions(budget=30))
    shown = {n.rows[0].text.split(" (")[0] for n in small.scene.nodes.values()}
    assert expected <= shown, sorted(shown)
    # with room for every layer, each copy is drawn (the repeat is a cluster around them)
    full = draw_module(pre, options=ViewOptions(budget=300))
    assert not any("×" in n.rows[0].text for n in full.scene.nodes.values() if "_block2_*" in n.rows[0].text)
    assert expected <= {c.rows[0].text.split(" (")[0] for c in full.scene.all_clusters()}


def test_open_layers_nest_in_their_open_block():
    # MobileNetV2's layer block_5_expand belongs to block 5 by its name: drawn open, its cluster
    # sits inside the block_5_* cluster, not beside it (a layer that ends before its block ends
    # was listed first and lost its parent)
    pre = load_target(str(CAPTURES / "mobilenet_v2")).pre_module()
    view = draw_module(pre, options=ViewOptions())
    checked = 0
    stack = [(c, None) for c in view.scene.clusters]
    while stack:
        cluster, parent = stack.pop()
        title = cluster.rows[0].text
        m = re.fullmatch(r"block_(\d+)_[a-z]+(_BN|_relu)?(/\w+)?", title)
        if m:
            assert parent is not None and parent.startswith(f"block_{m[1]}_* "), (title, parent)
            checked += 1
        stack.extend((c, title) for c in cluster.clusters)
    assert checked > 20


def test_grouped_nodes_are_rekeyed_down_to_their_leaves():
    """Keys stay route-shaped when scopes move under a new group: every node below it, leaves
    included, is keyed by its new path (expected keys written by hand)."""
    from hloviz.render.tree.tree import TreeNode, rekey

    group = TreeNode("s:model/g:block", "group", "block")
    scope = TreeNode("s:model/s:block_1", "scope", "block_1", parent=group)
    inner = TreeNode("s:model/s:block_1/s:conv", "scope", "conv", parent=scope)
    leaf = TreeNode("s:model/s:block_1/s:conv/u7", "leaf", "u7", parent=inner)
    other = TreeNode("s:model/u3", "leaf", "u3", parent=group)
    group.children, scope.children, inner.children = [scope, other], [inner], [leaf]
    rekey(group)
    assert [n.key for n in (group, scope, inner, leaf, other)] == [
        "s:model/g:block", "s:model/g:block/s:block_1", "s:model/g:block/s:block_1/s:conv",
        "s:model/g:block/s:block_1/s:conv/u7", "s:model/g:block/u3"]

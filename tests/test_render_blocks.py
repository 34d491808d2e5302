"""Blocks found by structure, repeats folded, long arrows as stubs (issue 20).

Oracles: the Keras architectures (InceptionV3's eleven ``mixedN`` blocks, read from the HLO
text with a regex; DenseNet121's 6-12-24-16 dense layers, read the same way), and hand-made
graphs whose cut vertices are known by construction.
"""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import pytest

import hloviz
from hloviz.capture import load_target
from hloviz.render import ViewOptions, draw_module, to_dot
from hloviz.render.cut.arrows import SPAN, rows_of
from hloviz.render.tree import repeat_runs
from hloviz.render.tree.blocks import find_blocks
from hloviz.render.tree.dominators import dominators
from hloviz.render.tree.repeat_runs import graph_hash, repeats, structure_hash
from hloviz.render.tree.tree import Tree

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def test_cut_vertices_bound_blocks():
    # input 0 → two branches (1,2 | 3) → join 4 → two branches (5 | 6,7) → join 8 → 9
    edges = [(0, 1), (1, 2), (0, 3), (2, 4), (3, 4), (4, 5), (4, 6), (6, 7), (5, 8), (7, 8), (8, 9)]
    found = find_blocks(10, edges)
    assert found is not None and found.how == "cuts"
    assert [0, 1, 2, 3, 4] in found.groups or [1, 2, 3, 4] in found.groups
    assert [5, 6, 7, 8] in found.groups


def test_separate_updates_are_blocks_and_repeat():
    # three independent updates of the same shape: components, and one hash for all three
    edges = [(0, 1), (1, 2), (3, 4), (4, 5), (6, 7), (7, 8)]
    found = find_blocks(9, edges)
    assert found is not None and found.how == "components"
    assert found.groups == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    hashes = [structure_hash(g, edges, lambda i: "add") for g in found.groups]
    assert repeats(hashes) == [(0, 3)]
    assert structure_hash([0, 1, 2], edges, lambda i: "mul") != hashes[0]


def test_remembered_answers_still_tell_graphs_apart():
    # structure_hash and find_blocks remember their answers (a big module asks the same
    # questions hundreds of times): the same ops wired differently still hash apart, asked in
    # either order, and the same question gets the same answer
    chain, fork = [(0, 1), (1, 2), (2, 3)], [(0, 1), (0, 2), (0, 3)]
    add = lambda i: "add"  # noqa: E731
    first = structure_hash([0, 1, 2, 3], chain, add)
    assert structure_hash([0, 1, 2, 3], fork, add) != first
    assert structure_hash([0, 1, 2, 3], chain, add) == first
    assert structure_hash([0, 1, 2, 3], chain, lambda i: "mul" if i == 3 else "add") != first
    # two separate chains are two blocks; the same four nodes as one chain are none
    assert find_blocks(4, [(0, 1), (2, 3)]) == find_blocks(4, [(0, 1), (2, 3)])
    assert find_blocks(4, [(0, 1), (2, 3)]) is not None
    assert find_blocks(4, [(0, 1), (1, 2), (2, 3)]) != find_blocks(4, [(0, 1), (2, 3)])


def test_graph_hash_is_structure_hash_on_positions():
    # what fold_repeats hashes a block's leaves with (positions and their labels, made once):
    # the block's members 10, 12, 15 as positions 0, 1, 2, the arrow leaving the block dropped;
    # asked fresh both times (the remembered answers cleared), and wiring still counts
    repeat_runs._HASHES.clear()
    label = {10: "add", 12: "mul", 15: "add"}
    by_members = structure_hash([10, 12, 15], [(10, 12), (12, 15), (15, 99)], label.__getitem__)
    repeat_runs._HASHES.clear()
    assert graph_hash(("add", "mul", "add"), ((0, 1), (1, 2))) == by_members
    assert graph_hash(("add", "mul", "add"), ((0, 1), (2, 1))) != by_members
    assert graph_hash(("add", "mul", "add"), ((0, 1),)) != by_members


def test_dominators_of_a_diamond():
    succ = [[1, 2], [3], [3], []]
    assert dominators(succ, 0) == {0: 0, 1: 0, 2: 0, 3: 0}
    assert dominators([[1], [2], []], 0) == {0: 0, 1: 0, 2: 1}


def _tree(view) -> Tree:
    assert view.cut is not None
    return view.cut.tree


def _text(name: str, stage: str) -> str:
    import gzip

    return gzip.decompress((CAPTURES / name / f"{stage}.hlo.gz").read_bytes()).decode()


def test_inception_blocks_are_its_mixed_blocks():
    text = _text("inception_v3", "pre")
    mixed = sorted(set(re.findall(r'op_name="[^"/]*/(mixed\d+)_\d+/', text)), key=lambda s: int(s[5:]))
    assert len(mixed) == 11  # mixed0 … mixed10
    view = draw_module(hloviz.parse(text), options=ViewOptions())
    tree = _tree(view)
    blocks = [n for n in tree.nodes.values() if n.kind == "block" and n.parent is not None
              and n.parent.kind in ("scope", "repeat") and n.name.startswith("mixed")]
    assert sorted({b.name.rsplit("_", 1)[0] for b in blocks}, key=lambda s: int(s[5:])) == mixed
    # each mixed block holds its branches' convolutions (conv2d_* no longer one prefix group)
    assert not any(n.kind == "group" and n.label == "conv2d_*" and n.size > 50 for n in tree.nodes.values())
    reps = sorted(len(n.children) for n in tree.nodes.values() if n.kind == "repeat")
    assert 4 in reps  # mixed4 … mixed7 have one structure


def test_densenet_dense_blocks_fold_6_12_24_16():
    text = _text("densenet121", "pre")
    per_block = [len(set(re.findall(rf'op_name="[^"/]*/conv{b}_block(\d+)_concat', text))) for b in (2, 3, 4, 5)]
    assert per_block == [6, 12, 24, 16]
    view = draw_module(hloviz.parse(text), options=ViewOptions())
    reps = [len(n.children) for n in sorted(_tree(view).nodes.values(), key=lambda n: n.order) if n.kind == "repeat"]
    assert reps == per_block


@pytest.mark.parametrize("name", ["densenet121", "keras_cnn_train", "jax_gpt_step", "resnet50"])
def test_no_arrow_spans_more_than_the_stub_threshold(name):
    cap = load_target(str(CAPTURES / name))
    for module in (cap.pre_module(), cap.post_module()):
        assert module is not None
        view = draw_module(module, options=ViewOptions(), info=cap.info)
        drawn = [e for e in view.scene.edges if not e.invisible and not e.dashed and e.constraint]
        # rows as dot ranks them: the invisible arrows stacking an open scope's parts count too
        ranked = [e for e in view.scene.edges if e.constraint and not e.dashed]
        row = rows_of(view.scene.nodes, ((e.src, e.dst) for e in ranked))
        for e in drawn:
            # a long arrow is kept only where the picture would fall apart without it
            if row[e.dst] - row[e.src] > SPAN:
                assert _parts(view.scene.nodes, [x for x in drawn if x is not e]) > _parts(view.scene.nodes, drawn), e
        stubbed = sum(1 for n in view.scene.nodes.values() for r in n.rows if r.text.startswith(("← ", "→ ")))
        assert stubbed > 0


def _parts(nodes, edges) -> int:
    """Connected parts of the picture (arrows undirected)."""
    parent = {k: k for k in nodes}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e in edges:
        parent[find(e.src)] = find(e.dst)
    return len({find(k) for k in nodes})


def test_same_input_same_bytes():
    text = _text("inception_v3", "post")
    a = to_dot(draw_module(hloviz.parse(text)).scene)
    b = to_dot(draw_module(hloviz.parse(text)).scene)
    assert a == b


def test_gpt_step_without_scopes_reads_as_its_layers():
    # samples/jax_gpt_step.py: 8 decoder layers, no jax.named_scope anywhere; the op names say
    # only jvp()/transpose(jvp()) (checked here on the text)
    text = _text("jax_gpt_step", "pre")
    assert "named_scope" not in text and not re.search(r'op_name="jit\(train_step\)/[^"/]*layer', text)
    view = draw_module(hloviz.parse(text), options=ViewOptions())
    tree = _tree(view)
    forward = next(n for n in tree.nodes.values() if n.kind == "scope" and n.name == "(forward)" and n.size > 100)
    reps = [n for n in forward.children if n.kind == "repeat"]
    # every layer folds into one repeat; the embedding and the loss stay beside it
    assert [len(r.children) for r in reps] == [8]
    assert not any(n.kind == "run" for n in forward.children)


def _layer_params(text: str) -> dict[str, int]:
    """The entry's parameters that are a layer's tensors, and which layer: the oracle, read
    from ``op_name="params['layers'][3]['wq']"`` with a regex."""
    entry = text[text.index("\nENTRY"):]
    return {m.group(1): int(m.group(2)) for m in re.finditer(
        r"^\s*%?(\S+) = \S+ parameter\(\d+\).*op_name=\"params\[\\'layers\\'\]\[(\d+)\]", entry, re.MULTILINE)}


def _operands(text: str) -> dict[str, list[str]]:
    """Each entry instruction's operand names, read from its line with a regex."""
    entry = text[text.index("\nENTRY"):]
    return {m.group(1): re.findall(r"%?([\w.\-]+)", m.group(2))
            for m in re.finditer(r"^\s*(?:ROOT )?%?(\S+) = [^=]*?\b[a-z][\w-]*\((.*?)\)(?:, |$)", entry, re.MULTILINE)}


def _layers_read(tree: Tree, copy, layer_of: dict[str, int], operands: dict[str, list[str]]) -> set[int]:
    """The layers whose parameters the instructions below ``copy`` are or read."""
    out = set()
    for leaf in tree.leaves(copy):
        name = tree.names.get(leaf.name, "")
        out |= {layer_of[o] for o in [name, *operands.get(name, ())] if o in layer_of}
    return out


@pytest.mark.parametrize("name", ["jax_gpt_step", "jax_gpt_step12"])
def test_gpt_step_every_layer_folds_forward_and_backward(name):
    # oracle: the layers and their tensors from the entry's parameter names (16 tensors a
    # layer: wq wk wv wo w_up w_down, their 6 biases, 2 norms and their 2 biases)
    text = _text(name, "pre")
    layer_of = _layer_params(text)
    layers = sorted(set(layer_of.values()))
    assert layers == list(range(len(layers))) and len(layer_of) == 16 * len(layers)
    assert len(layers) == {"jax_gpt_step": 8, "jax_gpt_step12": 12}[name]
    operands = _operands(text)
    tree = _tree(draw_module(hloviz.parse(text), options=ViewOptions()))
    for phase, order in (("forward", layers), ("backward", layers[::-1])):
        node = next(n for n in tree.nodes.values() if n.kind == "scope" and n.name == f"({phase})" and n.size > 100)
        reps = [n for n in node.children if n.kind == "repeat"]
        assert len(reps) == 1, phase
        # one copy per layer, in the order the pass runs them, each reading one layer's
        # tensors (the forward pass holds them: all 16); nothing of a layer outside the repeat
        copies = reps[0].children
        assert [_layers_read(tree, c, layer_of, operands) for c in copies] == [{i} for i in order], phase
        assert not reps[0].parallel
        outside = [n for n in node.children if n is not reps[0]]
        assert not set().union(*(_layers_read(tree, n, layer_of, operands) for n in outside)), phase
        if phase == "forward":
            for c in copies:
                own = [leaf for leaf in tree.leaves(c) if tree.names.get(leaf.name) in layer_of]
                assert len(own) == 16


@pytest.mark.parametrize("name", ["jax_gpt_step", "jax_gpt_step12"])
def test_gpt_step_after_optimization_forward_layers_fold(name):
    # after XLA's fusions the token embedding is one fusion beside layer 0's first LayerNorm;
    # it stays out of the repeat, and every layer's forward pass folds (same oracle as above)
    text = _text(name, "post")
    layer_of = _layer_params(text)
    layers = sorted(set(layer_of.values()))
    assert len(layers) == {"jax_gpt_step": 8, "jax_gpt_step12": 12}[name]
    operands = _operands(text)
    tree = _tree(draw_module(hloviz.parse(text), options=ViewOptions()))
    forward = next(n for n in tree.nodes.values() if n.kind == "scope" and n.name == "(forward)" and n.size > 100)
    reps = [n for n in forward.children if n.kind == "repeat"]
    assert len(reps) == 1
    assert [_layers_read(tree, c, layer_of, operands) for c in reps[0].children] == [{i} for i in layers]
    assert not set().union(*(_layers_read(tree, n, layer_of, operands) for n in forward.children if n is not reps[0]))


def _params_read(tree: Tree, leaf, layer_of: dict[str, int], operands: dict[str, list[str]]) -> set[int]:
    name = tree.names.get(leaf.name, "")
    return {layer_of[o] for o in operands.get(name, ()) if o in layer_of}


@pytest.mark.parametrize("name", ["jax_gpt_step", "jax_gpt_step12"])
def test_gpt_step_after_optimization_backward_is_one_block_per_layer(name):
    # XLA fuses the residual gradient's running sum into every layer (the test below), so no op
    # bounds a layer; the kernels still read their layer's weights. Oracle: the entry parameters'
    # op names (params['layers'][k][...]) and each kernel's operands, read from post.hlo by regex.
    text = _text(name, "post")
    layer_of = _layer_params(text)
    layers = sorted(set(layer_of.values()))
    assert len(layers) == {"jax_gpt_step": 8, "jax_gpt_step12": 12}[name]
    operands = _operands(text)
    view = draw_module(hloviz.parse(text), options=ViewOptions())
    tree = _tree(view)
    backward = next(n for n in tree.nodes.values() if n.kind == "scope" and n.name == "(backward)" and n.size > 100)
    # the layer blocks: the backward pass's blocks (or a repeat's copies) whose kernels read any
    # layer's weights, in the order the tree holds them
    tops = [c for n in backward.children for c in (n.children if n.kind == "repeat" else [n])]
    blocks = [b for b in tops if b.kind == "block"
              and any(_params_read(tree, v, layer_of, operands) for v in tree.leaves(b))]
    assert len(blocks) == len(layers)
    own = []
    for b in blocks:
        reads = [_params_read(tree, v, layer_of, operands) for v in tree.leaves(b)]
        # kernels reading one layer's weights read this block's layer, and only it
        single = set().union(*(r for r in reads if len(r) == 1))
        assert len(single) == 1, (b.name, single)
        k = next(iter(single))
        # the residual gradient's running sums recompute later layers' norms: they read this
        # layer's weights and only those of layers after it (which the backward pass ran before)
        assert all(min(r) == k for r in reads if len(r) > 1), b.name
        own.append(k)
    assert own == layers[::-1]  # run order: the last layer's backward pass first
    # and each block is one unbroken stretch of the schedule (the entry's text order)
    line = {m.group(1): i for i, m in enumerate(re.finditer(r"^\s*(?:ROOT )?%?(\S+) = ", text[text.index("\nENTRY"):],
                                                             re.MULTILINE))}
    spans = [sorted(line[tree.names[v.name]] for v in tree.leaves(b)) for b in blocks]
    assert all(a[-1] < b[0] for a, b in pairwise(spans))
    # every backward kernel reading exactly one layer's weights is inside that layer's block
    placed = {v.name for b in blocks for v in tree.leaves(b)}
    loose = [tree.names.get(v.name) for v in tree.leaves(backward)
             if v.name not in placed and len(_params_read(tree, v, layer_of, operands)) == 1]
    assert not loose
    # the picture draws them: one titled cluster per layer, named after the layer's forward copy
    dot = to_dot(view.scene)
    titled = re.findall(r"<B>(backward of [\w.\-]+) · block of \d+</B>", dot)
    assert sorted(titled) == sorted(b.name for b in blocks) and len(set(titled)) == len(layers)


def test_gpt_step_backward_and_optimizer_are_blocks_and_repeats():
    # oracles from the text: the entry's parameters name the model's tensors
    # (op_name="params['layers'][3]['wq']"): 8 layers, 132 tensors, each updated by AdamW
    text = _text("jax_gpt_step", "pre")
    entry = text[text.index("\nENTRY"):]
    tensors = set(re.findall(r"parameter\(\d+\).*op_name=\"params\[\\'([^\"]*)\"", entry))
    layers = {int(i) for i in re.findall(r"^layers\\'\]\[(\d+)\]", "\n".join(tensors), re.MULTILINE)}
    assert len(layers) == 8 and len(tensors) == 132
    view = draw_module(hloviz.parse(text), options=ViewOptions())
    tree = _tree(view)

    def phase(name):
        return next(n for n in tree.nodes.values() if n.kind == "scope" and n.name == f"({name})" and n.size > 100)

    # the backward pass mirrors the forward: its layers fold into one repeat
    # (each copy an MLP's backward block then an attention's), no runs of loose ops
    backward = phase("backward")
    layer_rep = max((n for n in backward.children if n.kind == "repeat"), key=lambda n: len(n.children))
    assert len(layer_rep.children) == len(layers)
    assert all(len(c.children) == 2 and all(b.kind == "block" for b in c.children) for c in layer_rep.children)
    assert not any(n.kind == "run" for n in backward.children)
    # the optimizer (JAX names it like the forward pass, jit(train_step)/mul, but it reads the
    # gradients): one update per tensor, and the gradient clip's squares, each a x132 repeat
    optimizer = phase("optimizer")
    updates = [n for n in tree.subtree_root(optimizer).nodes.values() if n.kind == "repeat"
               and len(n.children) == len(tensors)]
    assert len(updates) == 2
    # 132 updates side by side would make a row 57,000 pt wide: they stay one node each, though
    # the budget (300) could hold them; the layers' chains open instead
    assert all(n.parallel and n.key in view.cut.keys for n in updates)
    assert view.cut.count > 250
    forward = phase("forward")
    assert forward.size < backward.size + optimizer.size  # the update is no longer filed as forward work


def test_a_scalar_every_block_reads_bounds_nothing():
    # ten diamonds in a chain (a → b, c → d → next a); a scalar h computed from the first
    # diamond's end is read inside every later one (a loss scale in a backward pass): a path
    # around every join. h has 9 users, far more than any other node: a hub, not a bound.
    edges = []
    h = 40
    for i in range(10):
        a, b, c, d = 4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3
        edges += [(a, b), (a, c), (b, d), (c, d)]
        if i:
            edges += [(d - 4, a), (h, b)]
    edges.append((3, h))
    found = find_blocks(41, edges)
    assert found is not None
    diamonds = [g for g in found.groups if len(g) >= 3]
    assert len(diamonds) >= 8, found.groups


def test_gpt_step_optimized_backward_sums_the_gradient_in_every_layer():
    # why no op bounds a layer of the optimized backward pass (README, "Blocks found by structure";
    # the layers are found by what they read instead, test above): XLA fuses the residual
    # gradient's running sum into each layer, so the k-th fusion adding it up
    # reads the logits' gradient and every later layer's terms itself (read from the text: the
    # fusions that read ynn_fusion.121, that gradient brought back through the tied embedding)
    text = _text("jax_gpt_step", "post")
    entry = text[text.index("\nENTRY"):]
    readers = re.findall(r"^\s*%(broadcast_add_fusion(?:\.\d+)?) = \S+ fusion\(([^)]*%ynn_fusion\.121\b[^)]*)\)", entry,
                         re.MULTILINE)
    counts = [len(ops.split(", ")) for _name, ops in readers]
    assert len(counts) == 2 * 8  # one for each residual add: attention's and MLP's, 8 layers
    assert counts[0] == 9 and counts[-1] == 161 and counts == sorted(counts) and len(set(counts)) == len(counts)
    assert len(re.findall(r"[(, ]%ynn_fusion\.121[,)]", entry)) == 32

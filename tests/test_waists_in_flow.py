"""Blocks cut at waists keep a node's flow order (:mod:`hloviz.render.tree.waists`): where a
node's children stand in the order data flows through them (``in_flow``, a training step's
layers), each new block takes the place of its first member, and a member left alone in its
run (a block found by structure before) stays where it stood. Oracle: the leaves under the node,
read depth-first before and after, are the same leaves in the same order."""

from __future__ import annotations

import itertools

import pytest

from hloviz.render.tree.nodes import TreeNode, size_tree
from hloviz.render.tree.waists import split_at_waists


def _leaves(node: TreeNode) -> list[str]:
    if node.is_leaf:
        return [node.name]
    return [name for c in node.children for name in _leaves(c)]


def _node(n: int, every: int) -> tuple[TreeNode, dict[str, list[str]]]:
    """A scope of ``n`` children in flow order, every ``every``-th a block of two leaves, the
    rest leaves; a chain of arrows through all leaves, in the reverse of text order (as a
    training step's layers, which TensorFlow writes out of order)."""
    root = TreeNode("s:m", "scope", "m", in_flow=True)
    chain: list[str] = []
    for i in range(n):
        if i % every == 0:
            block = TreeNode(f"s:m/b:{i}", "block", f"b{i}", parent=root)
            for j in range(2):
                name = f"u{i}_{j}"
                block.children.append(TreeNode(f"s:m/b:{i}/{name}", "leaf", name, parent=block, order=1000 - 2 * i - j))
                chain.append(name)
            root.children.append(block)
        else:
            name = f"u{i}"
            root.children.append(TreeNode(f"s:m/{name}", "leaf", name, parent=root, order=1000 - 2 * i))
            chain.append(name)
    size_tree(root)
    return root, {a: [b] for a, b in itertools.pairwise(chain)}


@pytest.mark.parametrize("every", [2, 3, 5])
@pytest.mark.parametrize(("n", "run_at"), [(17, 4), (19, 6), (21, 8), (21, 20), (31, 20)])
def test_blocks_cut_at_waists_keep_every_leaf_in_flow_order(n, every, run_at):
    root, succ = _node(n, every)
    before = _leaves(root)
    split_at_waists(root, list(root.children), run_at, succ, {})
    assert _leaves(root) == before
    assert len(root.children) < n  # it did cut


@pytest.mark.parametrize(("n", "most"), [(9, 5), (9, 8), (17, 5), (17, 12)])
def test_a_child_left_alone_in_its_run_stays_where_it_stood(n, most):
    # at most ``most`` blocks (a cut fitting a budget): runs of two, one child left alone
    root, succ = _node(n, 3)
    before = _leaves(root)
    split_at_waists(root, list(root.children), 8, succ, {}, most=most)
    alone = [c for c in root.children if not (c.kind == "block" and c.waist)]
    assert len(alone) == 1 and len(root.children) <= most
    assert _leaves(root) == before

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
@pytest.mark.parametrize("run_at", [4, 6, 8])
def test_blocks_cut_at_waists_keep_every_leaf_in_flow_order(every, run_at):
    root, succ = _node(17, every)
    before = _leaves(root)
    split_at_waists(root, list(root.children), run_at, succ, {})
    assert _leaves(root) == before
    assert len(root.children) < 17  # it did cut

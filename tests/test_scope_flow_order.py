"""Sibling scopes ordered by their data flow (:func:`hloviz.analysis.scopes.order._by_data_flow`,
its cycles found without networkx). The oracle: networkx's condensation of the same graph,
placed by its lexicographical topological sort keyed by each component's earliest member."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from hloviz.analysis.scopes.order import _by_data_flow
from hloviz.analysis.scopes.scope import Scope


def _oracle(items: list[tuple[str, Scope]], flows: set[tuple[str, str]]) -> list[str]:
    rank = {name: n for n, (name, _s) in enumerate(items)}
    own = [name for name, s in items if s.kind in ("top", "unnamed")]
    g = nx.DiGraph()
    g.add_nodes_from(name for name, s in items if s.kind not in ("top", "unnamed"))
    g.add_edges_from((a, b) for a, b in flows if a in g and b in g)
    dag = nx.condensation(g)
    groups: dict[int, list[str]] = {}
    for name, c in dag.graph["mapping"].items():
        groups.setdefault(c, []).append(name)
    order = nx.lexicographical_topological_sort(dag, key=lambda c: min(rank[n] for n in groups[c]))
    return [n for c in order for n in sorted(groups[c], key=rank.__getitem__)] + own


def _items(kinds: list[str]) -> list[tuple[str, Scope]]:
    return [(f"s{n}", Scope(f"s{n}", f"s{n}", 1, None, kind=kind)) for n, kind in enumerate(kinds)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["layer", "layer", "layer", "top", "unnamed"]), min_size=2, max_size=14).flatmap(
    lambda kinds: st.tuples(st.just(kinds), st.sets(st.tuples(st.integers(0, len(kinds) - 1),
                                                              st.integers(0, len(kinds) - 1)), max_size=40))))
def test_the_order_is_networkx_condensation_sorted_by_earliest_member(case):
    kinds, pairs = case
    items = _items(kinds)
    flows = {(f"s{a}", f"s{b}") for a, b in pairs} | {("s0", "elsewhere")}  # a flow out of the siblings too
    assert [name for name, _s in _by_data_flow(items, flows)] == _oracle(items, flows)


def test_a_cycle_keeps_its_members_order_and_goes_after_what_feeds_it():
    items = _items(["layer"] * 5)
    flows = {("s3", "s1"), ("s1", "s2"), ("s2", "s1"), ("s4", "s0")}  # s1 <-> s2 fed by s3; s4 feeds s0
    assert [name for name, _s in _by_data_flow(items, flows)] == ["s3", "s1", "s2", "s4", "s0"]


def test_a_long_chain_is_ordered_without_recursion():
    n = 5000  # Tarjan's algorithm written recursively would pass Python's recursion limit
    items = _items(["layer"] * n)
    flows = {(f"s{k + 1}", f"s{k}") for k in range(n - 1)}
    assert [name for name, _s in _by_data_flow(items, flows)] == [f"s{k}" for k in reversed(range(n))]

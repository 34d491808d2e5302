"""The Graphviz counter the docs tests rely on (tests/docsites.py) sees every ``dot`` hloviz
starts: through the ``setpriv … sh -c`` launcher, without it, several at once, and a ``dot``
server. A counter that misses a route would let "a rebuild draws nothing" pass with the docs
cache broken (it did: it matched only an argv[0] named ``dot``)."""

from __future__ import annotations

import pytest

from hloviz.render.layout.runs import graphviz_run
from hloviz.render.layout.runs.dotserver import dot_servers

from .docsites import counting_dot_runs

pytestmark = pytest.mark.requires_dot

GRAPH = "digraph g { a -> b }"
TWO_CLUSTERS = "digraph g { subgraph cluster_a { a } subgraph cluster_b { b } a -> b }"


@pytest.mark.parametrize("launcher", [True, False], ids=["setpriv-launcher", "plain-popen"])
def test_each_dot_is_counted_whichever_way_it_is_started(monkeypatch, launcher):
    if launcher and graphviz_run._launcher() is None:
        pytest.skip("no setpriv/sh here: hloviz starts dot without its launcher")
    monkeypatch.setattr(graphviz_run, "die_with_parent", (lambda: (lambda: None)) if launcher else (lambda: None))
    with counting_dot_runs(monkeypatch) as runs:
        svg = graphviz_run.run_dot(GRAPH, "svg")
        graphviz_run.run_pinned('digraph g { a [pos="0,0"] }', "svg")
        graphviz_run.run_dot_many([GRAPH, TWO_CLUSTERS, GRAPH], ("json0",), processes=3)
    assert b"<svg" in svg  # the stand-in ran the real Graphviz
    assert len(runs) == 5, runs
    assert runs[0] == ["-Tsvg"] or runs[0][-1] == "-Tsvg", runs[0]
    assert sum("-Kneato" in r for r in runs) == 1


def test_a_dot_server_is_counted_once_and_graphs_it_cannot_serve_each_once(monkeypatch):
    with counting_dot_runs(monkeypatch) as runs, dot_servers() as servers:
        for _ in range(3):
            servers.run_dot(GRAPH, "svg")  # one running dot lays out all three
        servers.run_dot(TWO_CLUSTERS, "svg")  # two clusters: a dot of its own
    assert len(runs) == 2, runs


def test_nothing_drawn_nothing_counted(monkeypatch):
    with counting_dot_runs(monkeypatch) as runs:
        pass
    assert runs == []

"""dot kept running for an explorer page (:mod:`hloviz.render.layout.runs.dotserver`): the same bytes as a
``dot`` run on each graph alone, fewer ``dot`` starts, failures and timeouts told as before.

The oracle for every picture is ``dot`` itself, started here once per graph on the graph alone
(``subprocess``, the output's comments and DOCTYPE removed as hloviz writes SVG); the graphs are
the ones the explorer lays out for a real capture, recorded with the servers off.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hloviz.errors import RenderError
from hloviz.render.layout.runs import dot_process, dotserver, graphviz_run
from hloviz.render.layout.runs.dotserver import DotServers, dot_servers, order_free
from hloviz.render.layout.runs.graphviz_run import GraphvizTimeout

from .test_render_graphviz import _alive, fake_dot

pytestmark = pytest.mark.requires_dot

CAPTURES = Path(__file__).resolve().parent.parent / "samples" / "captures"


def _alone(text: str, *args: str) -> list[bytes]:
    """``dot`` on ``text`` alone, one process per format asked (the oracle)."""
    out = []
    for fmt in args:
        run = subprocess.run([shutil.which("dot") or "dot", f"-T{fmt}"], input=text.encode(), capture_output=True,
                             check=True)
        data = run.stdout
        if fmt == "svg":
            data = re.sub(rb"<!--.*?-->\s*", b"", data, flags=re.DOTALL)
            data = re.sub(rb"<!DOCTYPE[^>\[]*(\[.*?\])?\s*>\s*", b"", data, flags=re.DOTALL).rstrip() + b"\n"
        out.append(data)
    return out


def _page(capture: str, monkeypatch, servers: bool) -> tuple[str, list[str], int]:
    """The explorer page of ``capture`` (bounds out of the way), the DOT texts laid out for it,
    and how many ``dot`` processes it started."""
    from hloviz.analysis import analyze
    from hloviz.capture import load_target
    from hloviz.render.page.explorer import Bounds, pair_payload
    from hloviz.render.pictures import pair_picture

    cap = load_target(str(CAPTURES / capture))
    pre, post = cap.pre_module(), cap.post_module()
    assert pre is not None and post is not None
    analysis = analyze(pre, post, info=cap.info)
    picture = pair_picture(pre, post, analysis, info=cap.info, title=capture)
    texts: list[str] = []
    starts = 0
    popen = subprocess.Popen

    def counted(argv, *args, **kwargs):
        nonlocal starts
        starts += 1
        name = getattr(kwargs.get("stdin"), "name", None)
        if isinstance(name, str) and name.endswith(".gv"):  # run_dot_many's parts
            texts.append(Path(name).read_text())
        return popen(argv, *args, **kwargs)

    run = graphviz_run._run

    def recorded(argv, data, timeout):
        texts.append(data.decode())
        return run(argv, data, timeout)

    with monkeypatch.context() as patch:
        patch.setattr(subprocess, "Popen", counted)
        patch.setattr(graphviz_run, "_run", recorded)
        if not servers:
            patch.setattr(dotserver, "dot_servers", contextlib.nullcontext)
        payload = pair_payload(pre, post, analysis, picture, info=cap.info, bounds=Bounds(seconds=600, timeout=300))
    return payload.blocks + payload.later + (payload.picture_svg or ""), texts, starts


def test_the_page_is_the_same_bytes_with_fewer_dot_starts(monkeypatch):
    served, _, fewer = _page("resblock_relu", monkeypatch, servers=True)
    plain, texts, every = _page("resblock_relu", monkeypatch, servers=False)
    assert served == plain
    free = sum(order_free(t) for t in texts)
    assert free > 5  # the page does have graphs a server lays out (headers, small pictures)
    # each of those was a dot start; now a handful of servers lay them all out
    assert every - fewer >= free - 4
    assert every == len(texts)


def test_graphs_in_one_running_dot_give_the_bytes_of_dot_on_each_alone(monkeypatch):
    _, texts, _ = _page("resblock_relu", monkeypatch, servers=False)
    free = [t for t in texts if order_free(t)]
    # clusters nested as one chain (a fusion inside its column) go to the server too (issue 32)
    assert any(t.count("subgraph cluster") >= 2 for t in free)
    servers = DotServers()
    try:
        for text in free:
            assert servers.run_dot(text, "svg") == _alone(text, "svg")[0]
        for text in free[:4]:  # positions and picture from one layout, as a wrapped column asks
            assert servers.run_dot_many([text], ("json0", "svg")) == [_alone(text, "json0", "svg")]
        assert servers.started == 1 + 1  # one dot for -Tsvg, one for -Tjson0 -Tsvg
    finally:
        servers.close()


def test_graphs_with_sibling_clusters_give_the_bytes_of_dot_on_each_alone_after_any_other(monkeypatch):
    """A running ``dot`` would order sibling clusters by the addresses of their names in its
    memory (so by what it laid out before); the library server numbers them in the text's
    order, as a fresh ``dot`` allocates them (issue 32). Every graph with sibling subgraphs
    of a page, laid out one after the other in one server (forwards, then backwards: each
    after a different history), has the bytes of ``dot`` run on it alone."""
    _, texts, _ = _page("resblock_relu", monkeypatch, servers=False)
    clustered = [t for t in texts if _siblings(t)]
    assert len(clustered) >= 5 and not any(order_free(t) for t in clustered)
    # a page's servers lay a graph out once (the same text again is answered from the first),
    # so each order of the graphs gets servers of its own
    for history in (clustered, clustered[::-1]):
        with dot_servers() as servers:
            for text in history:
                assert servers.run_dot(text, "svg") == _alone(text, "svg")[0]
            for text in history[:4]:  # positions and picture from one layout, as a wrapped column asks
                assert servers.run_dot_many([text], ("json0", "svg")) == [_alone(text, "json0", "svg")]
            assert servers.started == 1  # one library server laid them all out


def test_without_graphviz_libraries_such_graphs_get_a_dot_of_their_own(monkeypatch):
    """Where the library server cannot run (no libcgraph/libgvc to load: it ends at once), each
    graph with sibling clusters is laid out by a ``dot`` of its own, with the same bytes, and the
    server is not started again for every graph."""
    _, texts, _ = _page("resblock_relu", monkeypatch, servers=False)
    clustered = [t for t in texts if _siblings(t)][:4]
    monkeypatch.setattr(dotserver, "LIB_ARGV", (sys.executable, "-c", "raise SystemExit(3)"))
    with dot_servers() as servers:
        for text in clustered:
            assert servers.run_dot(text, "svg") == _alone(text, "svg")[0]
        assert servers.started == 1


def test_a_failing_graph_is_told_as_without_the_server_and_the_next_still_laid_out():
    good = "digraph a { x -> y }"
    bad = "digraph b { x -> ; }"  # a syntax error ends dot's reading of its input
    with dot_servers() as servers:
        with pytest.raises(RenderError) as served:
            servers.run_dot_many([good, bad, good], ("svg",))
        with pytest.raises(RenderError) as plain:
            graphviz_run.run_dot_many([good, bad, good], ("svg",))
        assert str(served.value) == str(plain.value)
        assert "syntax error" in str(served.value) and "(part 2 of 3)" in str(served.value)
        with pytest.raises(RenderError, match="syntax error in line 1"):
            servers.run_dot(bad)
        assert servers.run_dot(good) == _alone(good, "svg")[0]


@pytest.mark.parametrize("reads", [True, False], ids=["reads-then-hangs", "never-reads-a-big-graph"])
def test_a_graph_past_its_timeout_kills_its_dot_and_says_so_as_before(tmp_path, monkeypatch, reads):
    pid_file = tmp_path / "pid"
    fake_dot(tmp_path / "bin", f"import os, sys, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                               + ("sys.stdin.readline()\n" if reads else "") + "time.sleep(120)\n", monkeypatch)
    # the big graph fills the pipe to a dot that does not read: writing it must not hang
    text = "digraph { a }" if reads else "digraph {\n" + "".join(f"n{i};\n" for i in range(200_000)) + "}"
    with dot_servers() as servers:
        started = time.monotonic()
        with pytest.raises(GraphvizTimeout, match=r"within 0\.5 s"):
            servers.run_dot(text, timeout=0.5)
        assert time.monotonic() - started < 10
        pid = int(pid_file.read_text())
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)


def test_the_servers_stop_with_the_block():
    with dot_servers() as servers:
        servers.run_dot("digraph { a }")
        procs = [s.proc for s in servers._all]
        assert procs and all(p.poll() is None for p in procs)
        with dot_servers() as inner:  # nested: the outer block's
            assert inner is servers
    assert dotserver.active_servers() is None
    assert all(p.poll() is not None for p in procs)


def _siblings(text: str) -> bool:
    """Whether two ``subgraph`` blocks of ``text`` share a parent block, read here by indentation:
    hloviz writes each block's statements two spaces deeper than the block's opening line."""
    opened: dict[int, int] = {}  # indentation → subgraphs opened at it since its parent opened
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        for deeper in [d for d in opened if d > indent]:
            del opened[deeper]  # a block at this indentation or above ended: its children are done
        if line.lstrip().startswith("subgraph "):
            opened[indent] = opened.get(indent, 0) + 1
            if opened[indent] > 1:
                return True
    return False


@pytest.mark.parametrize(("text", "free"), [
    ("digraph g { a -> b }", True),
    ("digraph g { subgraph cluster_1 { a; subgraph cluster_2 { b; subgraph cluster_3 { c } } } }", True),
    ("digraph g { subgraph cluster_1 { a } subgraph cluster_2 { b } }", False),
    ("digraph g { subgraph cluster_1 { subgraph cluster_2 { a } subgraph cluster_3 { b } } }", False),
    ("digraph g { a -> {b c}; subgraph cluster_1 { d } }", False),  # {b c} is a subgraph too
    # braces in quoted strings, HTML labels and comments are no blocks
    ('digraph g { a [label="} {{"]; subgraph cluster_1 { b [label=<<B>{</B>{>] } }', True),
    ("digraph g { /* subgraph x { } */ // { {\n subgraph cluster_1 { b } }", True),
    ('digraph g { a [label="x\\"{"]; subgraph cluster_1 { b } subgraph cluster_2 { c } }', False),
])
def test_a_graph_is_order_free_when_no_two_subgraphs_share_a_parent(text, free):
    assert order_free(text) is free


def test_show_starts_a_handful_of_graphviz_processes_for_hundreds_of_layouts(tmp_path, monkeypatch):
    """``show --offline`` on a saved capture (issue 32): the explorer lays out hundreds of pictures, each
    once a ``dot`` of its own; now a running ``dot`` or a library server per drawing thread and
    command line lays them out, so the processes started do not grow with the page: at most the
    report's own pictures' runs (each column and its header at once: 3 for the side-by-side, 1
    each for pre and post, twice over for a layout that timed out and is redrawn coarser) plus 4
    drawing threads × 4 command lines (``dot -Tsvg``, ``dot -Tjson0 -Tsvg``, ``dot -Kneato -n2``,
    the library server)."""
    from hloviz import api

    starts = 0
    popen = subprocess.Popen

    def counted(argv, *args, **kwargs):
        nonlocal starts
        starts += 1
        return popen(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", counted)
    served = _count_layouts(monkeypatch)
    api.show(str(CAPTURES / "mobilenet_v3_small"), tmp_path / "show", offline=True)  # every picture drawn now
    assert served[0] >= 200  # the explorer's pictures (MobileNetV3Small: 435 graphs, each laid out once)
    assert starts <= 2 * (3 + 1 + 1) + 4 * 4, (starts, served[0])


def _count_layouts(monkeypatch) -> list[int]:
    """``[n]``: the graphs the servers lay out from now on, by a running ``dot`` or a library
    server alike."""
    count = [0]
    for cls in (dot_process.Server, dot_process.LibServer):
        def lay_out(self, *args, _real=cls.lay_out, **kwargs):
            count[0] += 1
            return _real(self, *args, **kwargs)
        monkeypatch.setattr(cls, "lay_out", lay_out)
    return count


def _pinned_alone(text: str) -> bytes:
    """``dot -Kneato -n2 -Tsvg`` on ``text`` alone (the oracle for a drawing with positions given)."""
    run = subprocess.run([shutil.which("dot") or "dot", "-Kneato", "-n2", "-Tsvg"], input=text.encode(),
                         capture_output=True, check=True)
    data = re.sub(rb"<!--.*?-->\s*", b"", run.stdout, flags=re.DOTALL)
    return re.sub(rb"<!DOCTYPE[^>\[]*(\[.*?\])?\s*>\s*", b"", data, flags=re.DOTALL).rstrip() + b"\n"


def test_pinned_drawings_with_sibling_clusters_give_the_bytes_of_a_fresh_dot(tmp_path, monkeypatch):
    """A wrapped picture is drawn from its parts' positions (``dot -Kneato -n2``); where it holds
    sibling clusters (MobileNetV3Small's blocks opened in place, since prefix groups follow the
    program's runs) each such drawing started a ``dot`` of its own: 28 for one ``show``. The
    library server draws them (Graphviz's ``Nop`` at 2, neato's layout), each with the bytes of
    ``dot -Kneato -n2`` run on it alone, one after the other in one server, forwards and backwards."""
    from hloviz import api

    texts: list[str] = []
    pinned = DotServers.run_pinned

    def recorded(self, dot_text, fmt="svg", **kwargs):
        texts.append(dot_text)
        return pinned(self, dot_text, fmt, **kwargs)

    monkeypatch.setattr(DotServers, "run_pinned", recorded)
    # the detailed picture (--budget 300), whose first view is a cut wrapped to the screen
    api.show(str(CAPTURES / "mobilenet_v3_small"), tmp_path / "show", offline=True, budget=300)
    clustered = [t for t in texts if not order_free(t)][:8]
    assert len(clustered) >= 4
    for history in (clustered, clustered[::-1]):  # each order in servers of its own (the same text twice is laid out once)
        with dot_servers() as servers:
            for text in history:
                assert servers.run_pinned(text, "svg") == _pinned_alone(text)
            assert servers.started == 1  # one library server drew them all


def test_a_dot_named_by_hloviz_dot_is_never_stood_in_for_by_the_libraries(monkeypatch):
    """``HLOVIZ_DOT`` names the ``dot`` to run (a user's own Graphviz, a test's stand-in): graphs
    with sibling clusters then get that ``dot``, one each, not the library server."""
    _, texts, _ = _page("resblock_relu", monkeypatch, servers=False)
    clustered = [t for t in texts if _siblings(t)][:3]
    monkeypatch.setenv("HLOVIZ_DOT", shutil.which("dot") or "dot")
    with dot_servers() as servers:
        for text in clustered:
            assert servers.run_dot(text, "svg") == _alone(text, "svg")[0]
        assert servers.started == 0


def test_a_page_lays_out_a_graph_it_asked_for_before_once(monkeypatch):
    """The explorer asks for the same graph more than once (an opened block leaves the other
    column and most wrapped parts as they were: MobileNetV3Small's page asked for 57 of its 486
    layouts twice); the page's servers answer a text they laid out before with its bytes, without
    laying it out again. Another format, or another engine, is another layout."""
    _, texts, _ = _page("resblock_relu", monkeypatch, servers=False)
    free = [t for t in texts if order_free(t)][:2]
    clustered = [t for t in texts if _siblings(t)][:2]
    laid = _count_layouts(monkeypatch)
    with dot_servers() as servers:
        for text in [*free, *clustered]:
            first = servers.run_dot(text, "svg")
            assert servers.run_dot(text, "svg") == first == _alone(text, "svg")[0]
            assert servers.run_dot_many([text], ("json0", "svg")) == [_alone(text, "json0", "svg")]
            assert servers.run_dot_many([text], ("json0", "svg")) == [_alone(text, "json0", "svg")]
        assert laid[0] == 2 * len(free + clustered)  # once for -Tsvg, once for -Tjson0 -Tsvg

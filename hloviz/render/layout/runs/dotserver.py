"""``dot`` kept running for the many pictures of one explorer page, instead of one process each.

Starting ``dot`` costs about 17 ms of CPU before it reads a line (fonts, plugins); the
DenseNet121 page ran it 245 times, so some 4 of its 6.3 dot CPU seconds were start-up. ``dot``
reads graph after graph from its input and writes each one's outputs as soon as that graph is
laid out, so a process kept open with a pipe in and a pipe out lays out any number of them.

The protocol: each graph is written followed by an empty graph with a name no picture has
(:data:`hloviz.render.layout.runs.dot_process.END`); its output, last in the stream, says the picture's is complete — also when the
picture produced nothing. The outputs are split by their own syntax (an SVG runs from
``<?xml`` to ``</svg>``; a ``json0`` object from ``{`` to the ``}`` alone on a line).

Every picture's bytes are those of a ``dot`` run on it alone, which only holds for some graphs:
a process that has laid out one graph names the next one's SVG group ``page0,1_graph0`` instead
of ``graph0`` (Graphviz 2.43 keeps the page counter between graphs), which is put back; and it
may write a graph's sibling clusters in another order (the same positions, the groups and their
``clust1``… ids reordered), because ``dot`` orders subgraphs by the address of their names'
strings, which a heap that already served graphs hands out differently from a fresh one. So
only a graph where no two subgraphs share a parent (:func:`order_free`: the subgraphs nest as
one chain, leaving ``dot`` no order to choose) goes to a running ``dot``; every other one is
laid out by a ``dot`` of its own, as without the servers. Issue 32 widened that from "at most one
subgraph": a fusion drawn inside its column, a layer's picture of one fusion in one scope, nest
their clusters that way (EfficientNetB0's ``show``: 42 of its 180 cluster graphs; the 113 such
graphs of three captures' pages came out of a ``dot`` that had laid out hundreds before byte for
byte as from a fresh one, benchmarks/results/show_breakdown.md). The explorer's pages of
four captures were compared graph by graph and byte for byte
(benchmarks/results/explorer_bench.txt). Anything unusual — an ``Error`` on stderr, a line
there that is not a warning, output that does not split as expected, a ``dot`` that ended — is
not interpreted: that process is stopped and the graph laid out again by
:func:`~hloviz.render.layout.runs.graphviz_run.run_dot` (or :func:`~hloviz.render.layout.runs.graphviz_run.run_dot_many`),
so a failure reads exactly as it does without the servers (its message, its part). A graph that
runs past its timeout kills its process, group and all, and raises the same
:class:`~hloviz.render.layout.runs.graphviz_run.GraphvizTimeout`.

A graph with sibling subgraphs (most of the explorer's: two columns, fusions side by side)
goes to a *library server* instead (:mod:`hloviz.render.layout.runs._gvserver`, issue 32): a small
Python process driving Graphviz's libraries (the code ``dot`` runs), which reads each graph with
an id discipline that numbers its named subgraphs in the order the text names them, so sibling
clusters come in the text's order whatever the process laid out before — as a fresh ``dot``'s
do. Its bytes were compared with a fresh ``dot``'s on every such graph of three captures' pages
(138 of 138 on EfficientNetB0's, SVG and ``json0``), and the tests compare a whole page. A fresh
``dot`` per graph spent most of ``show``'s Graphviz CPU starting up and loading fonts
(benchmarks/results/show_breakdown.md). It stands in only for the ``dot`` on ``PATH`` and only
when its libraries are that ``dot``'s version (``HLOVIZ_DOT`` set: never). Where the libraries
cannot be loaded or differ (the server ends or answers ``E``), such graphs get a ``dot`` of
their own, as before. A wrapped picture drawn from its parts' positions (``dot -Kneato -n2``)
with sibling clusters goes to the same server, drawn by neato with Graphviz's ``Nop`` at 2 as
that command line does (MobileNetV3Small's ``show``: 28 ``dot`` starts for such drawings, now
none; the bytes of a fresh ``dot -Kneato -n2`` on each, tests/test_dotserver.py).

Only SVG and ``json0`` go through a server (PNG is binary and rare); :func:`dot_servers` turns
it on for a block of code (the explorer's page build), across all its threads.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from ....errors import RenderError
from .dot_process import LIB_ARGV, SERVED, LibServer, Server, Unusual
from .graphviz_run import (
    DEFAULT_TIMEOUT,
    GraphvizTimeout,
    find_dot,
    graphviz_version,
    run_dot,
    run_dot_many,
    run_pinned,
)

__all__ = ["DotServers", "active_servers", "dot_servers", "order_free"]

#: ``dot``'s arguments for a graph whose every position is given (drawn as it is).
PINNED = ("-Kneato", "-n2")


def order_free(dot_text: str) -> bool:
    """Whether ``dot_text``'s layout and output cannot depend on what the ``dot`` laid out before:
    no block of it (the graph, a subgraph) holds two subgraphs. ``dot`` keeps the subgraphs of
    a graph ordered by the address of their names' strings in memory, so in a process that has
    already laid out graphs (its heap no longer fresh) sibling clusters can come out in another
    order than in a fresh one: their SVG groups (``clust1``, ``clust2`` …) reordered and, for a
    few graphs, boxes a point apart (the order feeds the crossing minimisation). Subgraphs that
    nest as one chain have one order only.

    Every ``{`` counts as a subgraph of the block it is in (``subgraph x {``, an anonymous
    ``{ … }``, the ``{b c}`` of ``a -> {b c}``); braces inside quoted strings and HTML labels
    (``<…>``, nested) and comments do not."""
    if dot_text.count("{") <= 2:  # the graph and at most one subgraph: the common case, at once
        return True
    children = [0]  # subgraphs seen in each open block, innermost last
    html = 0
    for m in _TOKEN.finditer(dot_text):
        token = m.group(0)
        if token[0] in "\"/":  # a quoted string, a comment
            continue
        if token == "<":
            html += 1
        elif token == ">":
            html = max(0, html - 1)  # also the ">" of an arrow "->" outside a label
        elif html:
            continue
        elif token == "{":
            if len(children) > 1:  # inside the graph's own block: a subgraph of the innermost
                children[-1] += 1
                if children[-1] > 1:
                    return False
            children.append(0)
        elif len(children) > 1:  # "}"
            children.pop()
    return True


#: What :func:`order_free` reads of DOT: quoted strings, comments, and the characters that open
#: and close blocks and HTML labels.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|[<>{}]', re.DOTALL)


class DotServers:
    """The ``dot`` processes of a page build: idle ones by command line, handed to one thread
    at a time; :meth:`close` stops them all. ``started`` counts the processes started."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, ...], list[Server]] = {}
        self._all: list[Server] = []
        self._lock = threading.Lock()
        self._closed = False
        self.started = 0
        #: whether a library server has laid a graph out, or failed before any did
        self._lib_worked = False
        self._lib_failed = False
        self._lib: tuple[str, ...] | None = None
        self._lib_checked = False
        #: outputs already laid out for this page, by (engine, formats, graph): the explorer asks
        #: for the same graph again (the column an opened block leaves as it was, a wrapped
        #: part the opening did not touch); a layout's bytes depend on its text alone
        self._done: dict[tuple[tuple[str, ...], tuple[str, ...], str], list[bytes]] = {}

    def _take(self, argv: tuple[str, ...]) -> Server:
        with self._lock:
            if self._closed:
                raise RenderError("the page's Graphviz runs were stopped")
            idle = self._idle.setdefault(argv, [])
            while idle:
                server = idle.pop()
                if server.alive():
                    return server
            server = LibServer(argv) if argv == self._lib else Server(list(argv))
            self._all.append(server)
            self.started += 1
            return server

    def _give(self, argv: tuple[str, ...], server: Server) -> None:
        with self._lock:
            if self._closed or not server.alive():
                return
            self._idle.setdefault(argv, []).append(server)

    def _lay_out(self, engine: tuple[str, ...], text: str, formats: Sequence[str], deadline: float,
                 timeout: float) -> list[bytes]:
        key = (engine, tuple(formats), text)
        done = self._done.get(key)
        if done is not None:
            return list(done)
        out = self._lay_out_anew(engine, text, formats, deadline, timeout)
        with self._lock:
            self._done[key] = out
        return list(out)

    def _lay_out_anew(self, engine: tuple[str, ...], text: str, formats: Sequence[str], deadline: float,
                      timeout: float) -> list[bytes]:
        lib = not order_free(text) and self._lib is not None
        argv = self._lib if lib and self._lib is not None else (find_dot(), *engine, *(f"-T{fmt}" for fmt in formats))
        server = self._take(argv)
        try:
            if isinstance(server, LibServer):
                out = server.lay_out(text, formats, deadline, timeout, pinned=engine == PINNED)
            else:
                out = server.lay_out(text, formats, deadline, timeout)
        except BaseException as err:
            server.stop()
            with self._lock:
                if server in self._all:
                    self._all.remove(server)
                if lib and isinstance(err, Unusual) and not self._lib_worked:
                    self._lib_failed = True  # no Graphviz libraries here: fresh dots from now on
            raise
        if lib:
            self._lib_worked = True
        self._give(argv, server)
        return out

    def _served(self, dot_text: str, engine: tuple[str, ...] = ()) -> bool:
        """Whether ``dot_text`` goes to a running process: a ``dot`` when :func:`order_free`,
        else a library server (``dot`` layouts and pinned drawings, while one has not failed to
        start)."""
        return order_free(dot_text) or (engine in ((), PINNED) and not self._lib_failed
                                        and self._lib_argv() is not None)

    def _lib_argv(self) -> tuple[str, ...] | None:
        """The library server's command line, or None where it must not stand in for ``dot``:
        ``HLOVIZ_DOT`` names another ``dot`` (the user's, or a test's stand-in), or ``dot``'s
        version is unknown (the server checks that its libraries are that version)."""
        if not self._lib_checked:
            version = None if os.environ.get("HLOVIZ_DOT") else graphviz_version()
            self._lib = (*LIB_ARGV, version) if version else None
            self._lib_checked = True
        return self._lib

    def run_dot(self, dot_text: str, fmt: str = "svg", *, timeout: float = DEFAULT_TIMEOUT) -> bytes:
        """:func:`~hloviz.render.layout.runs.graphviz_run.run_dot`, laid out by a running ``dot``."""
        return self._one((), dot_text, fmt, timeout, run_dot)

    def run_pinned(self, dot_text: str, fmt: str = "svg", *, timeout: float = DEFAULT_TIMEOUT) -> bytes:
        """:func:`~hloviz.render.layout.runs.graphviz_run.run_pinned`, drawn by a running ``dot -Kneato -n2``."""
        return self._one(PINNED, dot_text, fmt, timeout, run_pinned)

    def _one(self, engine: tuple[str, ...], dot_text: str, fmt: str, timeout: float, usual) -> bytes:
        if fmt not in SERVED or not self._served(dot_text, engine):
            return usual(dot_text, fmt, timeout=timeout)
        started = time.monotonic()
        try:
            return self._lay_out(engine, dot_text, (fmt,), started + timeout, timeout)[0]
        except Unusual:
            return usual(dot_text, fmt, timeout=max(0.05, timeout - (time.monotonic() - started)))

    def run_dot_many(self, dot_texts: Sequence[str], formats: Sequence[str] = ("json0",), *,
                     timeout: float = DEFAULT_TIMEOUT, processes: int | None = None) -> list[list[bytes]]:
        """:func:`~hloviz.render.layout.runs.graphviz_run.run_dot_many`: the graphs :func:`order_free` laid
        out by a running ``dot``, the others by a library server (one after the other, in a
        thread of its own), or, where there is none, each by its own ``dot`` as there, at the
        same time and within the same timeout."""
        served = [i for i, t in enumerate(dot_texts) if self._served(t)]
        if not served or not formats or any(f not in SERVED for f in formats):
            return run_dot_many(dot_texts, formats, timeout=timeout, processes=processes)
        started = time.monotonic()
        deadline = started + timeout
        rest = [i for i in range(len(dot_texts)) if i not in set(served)]

        def serve() -> list[list[bytes]]:
            return [self._lay_out((), dot_texts[i], formats, deadline, timeout) for i in served]

        out: list[list[bytes]] = [[] for _ in dot_texts]
        try:
            if not rest:
                done = serve()
            else:
                with ThreadPoolExecutor(1) as side:
                    future = side.submit(serve)
                    try:
                        for i, o in zip(rest, run_dot_many([dot_texts[i] for i in rest], formats, timeout=timeout,
                                                           processes=processes), strict=True):
                            out[i] = o
                    except BaseException:
                        future.cancel()
                        raise
                    done = future.result()
        except (Unusual, RenderError) as err:
            if isinstance(err, GraphvizTimeout):
                raise
            # a failure is told as run_dot_many tells it (the part's number among all of them)
            return run_dot_many(dot_texts, formats, timeout=max(0.05, timeout - (time.monotonic() - started)),
                                processes=processes)
        for i, o in zip(served, done, strict=True):
            out[i] = o
        return out

    def close(self) -> None:
        """Stop every ``dot`` (each reads the end of its input and exits; one still busy is killed)."""
        with self._lock:
            self._closed = True
            servers, self._all, self._idle = self._all, [], {}
        for server in servers:
            server.stop()


_active: DotServers | None = None
_active_lock = threading.Lock()


def active_servers() -> DotServers | None:
    """The servers :func:`dot_servers` turned on, or None (every layout its own ``dot``)."""
    return _active


@contextmanager
def dot_servers() -> Iterator[DotServers]:
    """Lay out every picture drawn inside the block (by any thread) with running ``dot``
    processes, stopped when it ends. Nested blocks share the outer one's."""
    global _active
    with _active_lock:
        outer = _active
        servers = DotServers() if outer is None else outer
        _active = servers
    if outer is not None:
        yield outer
        return
    try:
        yield servers
    finally:
        with _active_lock:
            _active = None
        servers.close()

"""``dot`` kept running for the many pictures of one explorer page, instead of one process each.

Starting ``dot`` costs about 17 ms of CPU before it reads a line (fonts, plugins); the
DenseNet121 page ran it 245 times, so some 4 of its 6.3 dot CPU seconds were start-up. ``dot``
reads graph after graph from its input and writes each one's outputs as soon as that graph is
laid out, so a process kept open with a pipe in and a pipe out lays out any number of them.

The protocol: each graph is written followed by an empty graph with a name no picture has
(:data:`_END`); its output, last in the stream, says the picture's is complete — also when the
picture produced nothing. The outputs are split by their own syntax (an SVG runs from
``<?xml`` to ``</svg>``; a ``json0`` object from ``{`` to the ``}`` alone on a line).

Every picture's bytes are those of a ``dot`` run on it alone, which only holds for some graphs:
a process that has laid out one graph names the next one's SVG group ``page0,1_graph0`` instead
of ``graph0`` (Graphviz 2.43 keeps the page counter between graphs), which is put back; and it
may write a graph's sibling clusters in another order (the same positions, the groups and their
``clust1``… ids reordered), because ``dot`` orders subgraphs by the address of their names'
strings, which a heap that already served graphs hands out differently from a fresh one. So
only a graph with at most one subgraph (:func:`order_free`) goes to a running ``dot``; every
other one is laid out by a ``dot`` of its own, as without the servers. The explorer's pages of
four captures were compared graph by graph and byte for byte
(benchmarks/results/explorer_bench.txt). Anything unusual — an ``Error`` on stderr, a line
there that is not a warning, output that does not split as expected, a ``dot`` that ended — is
not interpreted: that process is stopped and the graph laid out again by
:func:`~hloviz.render.layout.graphviz_run.run_dot` (or :func:`~hloviz.render.layout.graphviz_run.run_dot_many`),
so a failure reads exactly as it does without the servers (its message, its part). A graph that
runs past its timeout kills its process, group and all, and raises the same
:class:`~hloviz.render.layout.graphviz_run.GraphvizTimeout`.

Only SVG and ``json0`` go through a server (PNG is binary and rare); :func:`dot_servers` turns
it on for a block of code (the explorer's page build), across all its threads.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import IO

from ...errors import DependencyError, RenderError
from .graphviz_run import (
    DEFAULT_TIMEOUT,
    INSTALL_HINT,
    GraphvizTimeout,
    find_dot,
    normalize_svg,
    run_dot,
    run_dot_many,
    run_pinned,
    spawn_dot,
    timeout_error,
)

__all__ = ["DotServers", "active_servers", "dot_servers", "order_free"]

#: The name of the empty graph written after each picture: its output ends the picture's.
_END = b"hloviz_dot_server_end_7c1e"

#: Formats a server writes (text that splits by its own syntax).
_SERVED = ("svg", "json0")

_FIX_FROM = b'<g id="page0,1_graph0" class="graph"'
_FIX_TO = b'<g id="graph0" class="graph"'


class _Unusual(Exception):
    """Something the server does not interpret: the caller lays the graph out the usual way."""


class _Server:
    """One ``dot`` process (``argv``), used by one thread at a time."""

    def __init__(self, argv: list[str]) -> None:
        # stderr into a file (read after each graph): a pipe nobody reads could fill and stall dot
        self._err: IO[bytes] = tempfile.TemporaryFile(prefix="hloviz-dot-")  # noqa: SIM115 (closed by stop)
        self._seen = 0
        try:
            self.proc = spawn_dot(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err)
        except OSError as err:
            self._err.close()
            raise DependencyError(f"cannot run {argv[0]}: {err.strerror or err}", hint=INSTALL_HINT) from None
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin
        os.set_blocking(self._in.fileno(), False)  # written by _send, which keeps the timeout
        self._out = self.proc.stdout.fileno()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def lay_out(self, text: str, formats: Sequence[str], deadline: float, timeout: float) -> list[bytes]:
        """``text``'s outputs in ``formats``; :class:`_Unusual` for anything but a clean layout."""
        self._send(text.encode("utf-8") + b"\ndigraph " + _END + b" {}\n", deadline, timeout)
        last = b"</svg>\n" if formats[-1] == "svg" else b"\n}\n"
        chunks: list[bytes] = []
        tail = b""
        while not (tail.endswith(last) and _END in tail):
            seconds = deadline - time.monotonic()
            if seconds <= 0:
                raise timeout_error(timeout)
            ready, _, _ = select.select([self._out], [], [], min(seconds, 1.0))
            if not ready:
                continue
            chunk = os.read(self._out, 1 << 20)
            if not chunk:  # dot ended (a syntax error ends the stream)
                raise _Unusual
            chunks.append(chunk)
            tail = (tail + chunk)[-4096:]
        self._check_stderr()
        docs = _documents(b"".join(chunks))
        k = len(formats)
        if docs is None or len(docs) != 2 * k or any(_END not in d for d in docs[k:]):
            raise _Unusual
        out = []
        for fmt, doc in zip(formats, docs[:k], strict=True):
            if (fmt == "svg") != doc.startswith(b"<?xml") or _END in doc:
                raise _Unusual
            if fmt == "svg":
                doc = normalize_svg(doc.replace(_FIX_FROM, _FIX_TO, 1))
            out.append(doc)
        return out

    def _send(self, data: bytes, deadline: float, timeout: float) -> None:
        """Write ``data`` to dot without ever blocking past ``deadline`` (a ``dot`` that stops
        reading, as a stand-in may, must not hang hloviz: the timeout holds while writing too)."""
        fd = self._in.fileno()
        view = memoryview(data)
        while view:
            seconds = deadline - time.monotonic()
            if seconds <= 0:
                raise timeout_error(timeout)
            _, ready, _ = select.select([], [fd], [], min(seconds, 1.0))
            if not ready:
                continue
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue
            except OSError:  # dot ended (a broken pipe): told the usual way
                raise _Unusual from None

    def _check_stderr(self) -> None:
        self._err.seek(self._seen)
        said = self._err.read()
        self._seen += len(said)
        if any(line and not line.startswith(b"Warning") for line in said.splitlines()):
            raise _Unusual

    def stop(self) -> None:
        """Kill this ``dot`` (its process group: idle or busy, nothing of it is wanted) and reap it."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()
        self.proc.wait()
        for stream in (self._in, self.proc.stdout, self._err):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


def order_free(dot_text: str) -> bool:
    """Whether ``dot_text``'s layout and output cannot depend on what the ``dot`` laid out before:
    it has at most one subgraph. ``dot`` keeps a graph's subgraphs ordered by the address of
    their names' strings in memory, so in a process that has already laid out graphs (its heap
    no longer fresh) clusters can come out in another order than in a fresh one: the same
    positions, but the SVG's groups (and ``clust1``, ``clust2`` ids) in another order."""
    return len(_SUBGRAPH.findall(dot_text)) <= 1


_SUBGRAPH = re.compile(r"\bsubgraph\b")


def _documents(data: bytes) -> list[bytes] | None:
    """``data`` split into its SVG and ``json0`` documents (None where it does not split)."""
    docs = []
    i = 0
    while i < len(data):
        if data.startswith(b"<?xml", i):
            end, size = data.find(b"</svg>\n", i), 7
        elif data.startswith(b"{", i):
            end, size = data.find(b"\n}\n", i), 3
        else:
            return None
        if end < 0:
            return None
        docs.append(data[i:end + size])
        i = end + size
    return docs


class DotServers:
    """The ``dot`` processes of a page build: idle ones by command line, handed to one thread
    at a time; :meth:`close` stops them all. ``started`` counts the processes started."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, ...], list[_Server]] = {}
        self._all: list[_Server] = []
        self._lock = threading.Lock()
        self._closed = False
        self.started = 0

    def _take(self, argv: tuple[str, ...]) -> _Server:
        with self._lock:
            if self._closed:
                raise RenderError("the page's Graphviz runs were stopped")
            idle = self._idle.setdefault(argv, [])
            while idle:
                server = idle.pop()
                if server.alive():
                    return server
            server = _Server(list(argv))
            self._all.append(server)
            self.started += 1
            return server

    def _give(self, argv: tuple[str, ...], server: _Server) -> None:
        with self._lock:
            if self._closed or not server.alive():
                return
            self._idle.setdefault(argv, []).append(server)

    def _lay_out(self, engine: tuple[str, ...], text: str, formats: Sequence[str], deadline: float,
                 timeout: float) -> list[bytes]:
        argv = (find_dot(), *engine, *(f"-T{fmt}" for fmt in formats))
        server = self._take(argv)
        try:
            out = server.lay_out(text, formats, deadline, timeout)
        except BaseException:
            server.stop()
            with self._lock:
                if server in self._all:
                    self._all.remove(server)
            raise
        self._give(argv, server)
        return out

    def run_dot(self, dot_text: str, fmt: str = "svg", *, timeout: float = DEFAULT_TIMEOUT) -> bytes:
        """:func:`~hloviz.render.layout.graphviz_run.run_dot`, laid out by a running ``dot``."""
        return self._one((), dot_text, fmt, timeout, run_dot)

    def run_pinned(self, dot_text: str, fmt: str = "svg", *, timeout: float = DEFAULT_TIMEOUT) -> bytes:
        """:func:`~hloviz.render.layout.graphviz_run.run_pinned`, drawn by a running ``dot -Kneato -n2``."""
        return self._one(("-Kneato", "-n2"), dot_text, fmt, timeout, run_pinned)

    def _one(self, engine: tuple[str, ...], dot_text: str, fmt: str, timeout: float, usual) -> bytes:
        if fmt not in _SERVED or not order_free(dot_text):
            return usual(dot_text, fmt, timeout=timeout)
        started = time.monotonic()
        try:
            return self._lay_out(engine, dot_text, (fmt,), started + timeout, timeout)[0]
        except _Unusual:
            return usual(dot_text, fmt, timeout=max(0.05, timeout - (time.monotonic() - started)))

    def run_dot_many(self, dot_texts: Sequence[str], formats: Sequence[str] = ("json0",), *,
                     timeout: float = DEFAULT_TIMEOUT, processes: int | None = None) -> list[list[bytes]]:
        """:func:`~hloviz.render.layout.graphviz_run.run_dot_many`: the graphs :func:`order_free` laid
        out by a running ``dot`` (one, in a thread of its own), the others each by its own
        ``dot`` as there, at the same time and within the same timeout."""
        served = [i for i, t in enumerate(dot_texts) if order_free(t)]
        if not served or not formats or any(f not in _SERVED for f in formats):
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
        except (_Unusual, RenderError) as err:
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

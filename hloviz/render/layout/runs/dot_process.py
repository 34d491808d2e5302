"""One Graphviz process kept running for many graphs (:class:`Server`: a ``dot``;
:class:`LibServer`: the library server, :mod:`hloviz.render.layout.runs._gvserver`), and how their
output splits back into each graph's documents. :mod:`hloviz.render.layout.runs.dotserver` decides
which graphs go to which and hands the processes out; this module only talks to one."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from ....errors import DependencyError
from .graphviz_run import INSTALL_HINT, normalize_svg, spawn_dot, timeout_error

#: The name of the empty graph written after each picture: its output ends the picture's.
END = b"hloviz_dot_server_end_7c1e"

#: Formats a server writes (text that splits by its own syntax).
SERVED = ("svg", "json0")

_FIX_FROM = b'<g id="page0,1_graph0" class="graph"'
_FIX_TO = b'<g id="graph0" class="graph"'


class Unusual(Exception):
    """Something the server does not interpret: the caller lays the graph out the usual way."""


class Server:
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
        """``text``'s outputs in ``formats``; :class:`Unusual` for anything but a clean layout."""
        self._send(text.encode("utf-8") + b"\ndigraph " + END + b" {}\n", deadline, timeout)
        last = b"</svg>\n" if formats[-1] == "svg" else b"\n}\n"
        chunks: list[bytes] = []
        tail = b""
        while not (tail.endswith(last) and END in tail):
            seconds = deadline - time.monotonic()
            if seconds <= 0:
                raise timeout_error(timeout)
            ready, _, _ = select.select([self._out], [], [], min(seconds, 1.0))
            if not ready:
                continue
            chunk = os.read(self._out, 1 << 20)
            if not chunk:  # dot ended (a syntax error ends the stream)
                raise Unusual
            chunks.append(chunk)
            tail = (tail + chunk)[-4096:]
        self._check_stderr()
        docs = documents(b"".join(chunks))
        k = len(formats)
        if docs is None or len(docs) != 2 * k or any(END not in d for d in docs[k:]):
            raise Unusual
        out = []
        for fmt, doc in zip(formats, docs[:k], strict=True):
            if (fmt == "svg") != doc.startswith(b"<?xml") or END in doc:
                raise Unusual
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
                raise Unusual from None

    def _check_stderr(self) -> None:
        self._err.seek(self._seen)
        said = self._err.read()
        self._seen += len(said)
        if any(line and not line.startswith(b"Warning") for line in said.splitlines()):
            raise Unusual

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


class LibServer(Server):
    """One library server (:mod:`hloviz.render.layout.runs._gvserver`): length-prefixed requests and
    answers instead of ``dot``'s documents, otherwise as :class:`Server` (stderr checked after
    each graph, the timeout kept while writing and reading)."""

    def __init__(self, argv: Sequence[str]) -> None:
        super().__init__(list(argv))
        self._buffer = b""

    def lay_out(self, text: str, formats: Sequence[str], deadline: float, timeout: float,
                pinned: bool = False) -> list[bytes]:
        """``text`` laid out as ``dot`` would (``pinned``: drawn as given, as ``dot -Kneato -n2``)."""
        data = text.encode("utf-8")
        engine = b" pinned" if pinned else b""
        self._send(b"%d %s%s\n" % (len(data), ",".join(formats).encode(), engine) + data, deadline, timeout)
        out = []
        for fmt in formats:
            head = self._line(deadline, timeout)
            if not head.isdigit():  # "E": the graph did not lay out here
                raise Unusual
            doc = self._exactly(int(head), deadline, timeout)
            if fmt == "svg":
                if not doc.startswith(b"<?xml"):
                    raise Unusual
                doc = normalize_svg(doc.replace(_FIX_FROM, _FIX_TO, 1))
            out.append(doc)
        self._check_stderr()
        return out

    def _more(self, deadline: float, timeout: float) -> None:
        seconds = deadline - time.monotonic()
        if seconds <= 0:
            raise timeout_error(timeout)
        ready, _, _ = select.select([self._out], [], [], min(seconds, 1.0))
        if ready:
            chunk = os.read(self._out, 1 << 20)
            if not chunk:  # the server ended (no Graphviz libraries, a crash)
                raise Unusual
            self._buffer += chunk

    def _line(self, deadline: float, timeout: float) -> bytes:
        while b"\n" not in self._buffer:
            self._more(deadline, timeout)
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _exactly(self, size: int, deadline: float, timeout: float) -> bytes:
        while len(self._buffer) < size:
            self._more(deadline, timeout)
        doc, self._buffer = self._buffer[:size], self._buffer[size:]
        return doc


#: The library server's command line: this Python, isolated, without site-packages (the
#: program needs the standard library only).
LIB_ARGV = (sys.executable, "-I", "-S", str(Path(__file__).with_name("_gvserver.py")))


def documents(data: bytes) -> list[bytes] | None:
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

"""A ``dot`` that lays out graph after graph as a fresh one would: the program
:mod:`hloviz.render.layout.runs.dotserver` runs for the graphs a running ``dot`` cannot take.

Run as ``python -I -S _gvserver.py VERSION`` (``VERSION``: the ``dot`` program's, which the
libraries must match; standard library only: it imports nothing of hloviz, so it
starts in a few milliseconds). It drives Graphviz's own libraries (``libcgraph``, ``libgvc``:
the code the ``dot`` program runs) through :mod:`ctypes`, in one process for the whole page.

Why not the ``dot`` program kept running: ``dot`` orders a graph's sibling subgraphs by their
ids, and a named subgraph's id is the address of its name's string in memory, which depends on
what the process allocated and freed before; a fresh ``dot`` allocates the names in the order it
reads them, so its clusters come in the order the DOT text writes them. Here the graph is read
with an id discipline (cgraph's ``Agiddisc_t``) that gives each named subgraph, in the order the
text first names it, an id above every address, counted from zero for each graph; everything
else keeps Graphviz's own ids. Sibling clusters then come in the text's order whatever came
before, as in a fresh ``dot``; the layout and SVG are the ``dot`` program's own code.

Protocol, on stdin and stdout: a request is a line ``<bytes> <format>[,<format>…]`` (and
`` pinned`` for a graph whose every position is given, drawn as ``dot -Kneato -n2`` draws it:
neato's layout with Graphviz's ``Nop`` at 2) followed by that many bytes of DOT text; the answer
is, for each format, a line ``<bytes>`` and the output,
or one line ``E`` (the graph did not read, lay out or render: the caller lays it out the usual
way and tells its error). Graphviz's own messages go to stderr, as ``dot``'s do.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_AGRAPH = 0  # cgraph's object type of a graph or subgraph
_FIRST = (1 << 62) + 1  # named subgraphs' ids: odd (cgraph frees no string for an odd id), above any address

_MAP = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p,
                        ctypes.POINTER(ctypes.c_uint64), ctypes.c_int)
_PRINT = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64)


def _library(name: str, soname: str) -> ctypes.CDLL:
    try:
        return ctypes.CDLL(soname)
    except OSError:
        found = ctypes.util.find_library(name)
        if found is None:
            raise
        return ctypes.CDLL(found)


class _Graphviz:
    """Graphviz's libraries, one context, and the id discipline described above."""

    def __init__(self) -> None:
        self.cg = cg = _library("cgraph", "libcgraph.so.6")
        self.gvc = gvc = _library("gvc", "libgvc.so.6")
        self.libc = libc = ctypes.CDLL(None)
        gvc.gvContext.restype = ctypes.c_void_p
        cg.agread.restype = ctypes.c_void_p
        cg.agread.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        cg.agclose.argtypes = [ctypes.c_void_p]
        gvc.gvLayout.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p]
        gvc.gvRenderData.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p,
                                     ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_uint)]
        gvc.gvFreeRenderData.argtypes = [ctypes.c_void_p]
        gvc.gvFreeLayout.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        libc.fmemopen.restype = ctypes.c_void_p
        libc.fmemopen.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
        libc.fclose.argtypes = [ctypes.c_void_p]
        self.context = gvc.gvContext()
        # Graphviz's id discipline (7 functions: open, map, alloc, free, print, close, idregister),
        # copied, with map and print answering for named subgraphs first
        default = (ctypes.c_void_p * 7).in_dll(cg, "AgIdDisc")
        self._default_map = _MAP(default[1])
        self._default_print = _PRINT(default[4])
        self._ids: dict[bytes, int] = {}
        self._names: dict[int, ctypes.Array] = {}
        self._map = _MAP(self._map_id)
        self._print = _PRINT(self._print_id)
        self.iddisc = (ctypes.c_void_p * 7)(*default)
        self.iddisc[1] = ctypes.cast(self._map, ctypes.c_void_p)
        self.iddisc[4] = ctypes.cast(self._print, ctypes.c_void_p)
        self.disc = (ctypes.c_void_p * 3)(ctypes.addressof(ctypes.c_char.in_dll(cg, "AgMemDisc")),
                                          ctypes.addressof(self.iddisc),
                                          ctypes.addressof(ctypes.c_char.in_dll(cg, "AgIoDisc")))

    def _map_id(self, state, objtype, name, out, create):
        if objtype != _AGRAPH or not name:
            return self._default_map(state, objtype, name, out, create)
        found = self._ids.get(name)
        if found is None:
            if not create:
                return 0
            found = _FIRST + 2 * len(self._ids)
            self._ids[name] = found
            self._names[found] = ctypes.create_string_buffer(name)
        out[0] = found
        return 1

    def _print_id(self, state, objtype, ident):
        kept = self._names.get(ident)
        if kept is not None:
            return ctypes.addressof(kept)
        return self._default_print(state, objtype, ident)

    def lay_out(self, text: bytes, formats: list[bytes], pinned: bool = False) -> list[bytes] | None:
        """``text`` laid out by ``dot`` (``pinned``: drawn where its positions say, as ``dot
        -Kneato -n2``) and written in each of ``formats``; None on failure."""
        ctypes.c_int.in_dll(self.gvc, "Nop").value = 2 if pinned else 0
        self._ids.clear()  # named subgraphs numbered afresh for each graph
        self._names.clear()
        buffer = ctypes.create_string_buffer(text, len(text))
        stream = self.libc.fmemopen(buffer, len(text), b"r")
        if not stream:
            return None
        try:
            graph = self.cg.agread(stream, self.disc)
        finally:
            self.libc.fclose(stream)
        if not graph:
            return None
        try:
            if self.gvc.gvLayout(self.context, graph, b"neato" if pinned else b"dot") != 0:
                return None
            out = []
            try:
                for fmt in formats:
                    data, size = ctypes.c_void_p(), ctypes.c_uint()
                    if self.gvc.gvRenderData(self.context, graph, fmt, ctypes.byref(data), ctypes.byref(size)) != 0:
                        return None
                    out.append(ctypes.string_at(data, size.value))
                    self.gvc.gvFreeRenderData(data)
            finally:
                self.gvc.gvFreeLayout(self.context, graph)
            return out
        finally:
            self.cg.agclose(graph)


def main() -> int:
    graphviz = _Graphviz()
    # the caller names the version of the ``dot`` it would otherwise run: libraries of another
    # Graphviz would lay out differently, so this server then ends (the caller runs ``dot``)
    graphviz.gvc.gvcVersion.restype = ctypes.c_char_p
    graphviz.gvc.gvcVersion.argtypes = [ctypes.c_void_p]
    version = (graphviz.gvc.gvcVersion(graphviz.context) or b"").decode("ascii", "replace")
    if len(sys.argv) > 1 and version != sys.argv[1]:
        sys.stderr.write(f"Graphviz libraries {version}, not {sys.argv[1]} as dot\n")
        return 3
    read, write = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = read.readline()
        if not head:
            return 0
        size, names, *engine = head.split()
        text = read.read(int(size))
        outs = graphviz.lay_out(text, names.split(b","), pinned=engine == [b"pinned"])
        if outs is None:
            write.write(b"E\n")
        else:
            for out in outs:
                write.write(b"%d\n" % len(out))
                write.write(out)
        write.flush()
        sys.stderr.flush()


if __name__ == "__main__":
    raise SystemExit(main())

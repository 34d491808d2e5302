"""The explorer's data: every instruction of the drawn modules, the kernels, the folds, and
which drawn box holds which instructions — as compact JSON-ready columns.

The page's script searches, highlights and fills its side panel from this alone; it never
reads HLO text out of the SVG. Columns (one list per field, strings interned in one table)
keep a 300k-instruction module to a few megabytes; the per-instruction HLO text, needed only
when a node is clicked, is a separate blob so the page can decode it after the first picture.

Identifiers: an instruction is ``(side, index)`` in :func:`hloviz.ir.HloModule.instructions`
order; the script addresses it by a global number (the side's offset plus its index).
Drawn boxes are named by the DOT identifiers of :func:`hloviz.render.layout.dot.drawn_ids`
(``n7``, ``cluster_3``), which Graphviz writes as each SVG group's ``<title>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ....ir import HloModule, Instruction, called_closure
from ...layout.dot import drawn_ids

if TYPE_CHECKING:
    from ....analysis import Analysis
    from ....analysis.kernels import KernelReport
    from ....analysis.scopes import ScopeTree
    from ...tree.tree import TreeNode
    from ...views import View

__all__ = ["Side", "ViewSpec", "ExplorerData", "explorer_data", "plain_name"]

#: JAX's wrapper of a traced function in a name: ``jit(train_step)``, ``pjit(f)``.
_FUNCTION = re.compile(r"\bp?jit\(([^()/]*)\)")


def plain_name(text: str) -> str:
    """``text`` (a layer's path, a picture's title) with JAX's ``jit(f)`` wrappers unwrapped to
    the function's name: the explorer names layers as ``stats --by scope`` does, below the
    traced function (:attr:`~hloviz.analysis.scopes.Scope.display_path`), and the function's own
    scope by its name (``train_step``, not ``jit(train_step)``)."""
    return _FUNCTION.sub(r"\1", text) if "jit(" in text else text

SourceLookup = Callable[[str], "dict | None"]


@dataclass
class Side:
    """One drawn module: ``key`` (``pre``/``post``, or ``before``/``after`` in a diff), a label
    for people, the module, its kernels, and the HLO text it was read from (for each
    instruction's own line; printed from the IR when absent)."""

    key: str
    label: str
    module: HloModule
    kernels: KernelReport | None = None
    text: str | None = None
    _tree: ScopeTree | None = field(default=None, repr=False)
    _callers: dict | None = field(default=None, repr=False)
    _by_name: dict[str, Instruction] | None = field(default=None, repr=False)

    def instruction(self, name: str) -> Instruction | None:
        """The module's instruction named ``name`` (the names indexed once)."""
        if self._by_name is None:
            self._by_name = {i.name: i for i in self.module.instructions()}
        return self._by_name.get(name)

    def callers(self) -> dict:
        """Computation name → the instructions calling it (computed once)."""
        if self._callers is None:
            self._callers = self.module.callers()
        return self._callers

    def scope_tree(self) -> ScopeTree:
        """The module's :class:`~hloviz.analysis.scopes.ScopeTree` (built once)."""
        if self._tree is None:
            from ....analysis.scopes import build_scope_tree

            self._tree = build_scope_tree(self.module, stage="post" if self.kernels is not None else "pre",
                                          kernel_report=self.kernels)
        return self._tree


@dataclass
class ViewSpec:
    """One picture the page can show: its SVG (None for the picture already in the page), the
    drawn columns (side index, :class:`View`), a title for the breadcrumb, and the view it
    expands (its parent) with the instruction or scope it opens."""

    key: str
    title: str
    columns: list[tuple[int, View]]
    svg: str | None = None
    parent: str | None = None
    opens: str | None = None  # "i:<global id>" or "s:<scope path>"
    #: a block opened in both columns: what the other column opened with it, or why nothing
    #: (:func:`hloviz.render.page.explorer.pairs.counterpart`)
    pair: dict | None = None


@dataclass
class ExplorerData:
    """The JSON-ready data (:attr:`main`) and the per-instruction HLO text (:attr:`texts`)."""

    main: dict
    texts: list[str] = field(default_factory=list)


class _Scopes:
    """The scope trees of all sides as one table: a scope path is one entry, whichever side it
    appears on (so a layer found by search lights up before and after optimization)."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.path: list[str] = []
        self.label: list[str] = []
        self.parent: list[int] = []
        self.phase: list[str] = []

    def add(self, scope) -> int:
        """The scope's number, numbering it and its ancestors not numbered yet (outermost
        first, without recursion: scopes nest as deep as op names do)."""
        new = []
        s = scope
        while s is not None and s.kind != "root" and s.path not in self.index:
            new.append(s)
            s = s.parent
        parent = self.index[s.path] if s is not None and s.kind != "root" else -1
        for s in reversed(new):
            i = self.index[s.path] = len(self.path)
            self.path.append(s.path)
            self.label.append(plain_name(s.display_path))
            self.parent.append(parent)
            self.phase.append(s.phase)
            parent = i
        return parent if scope.kind != "root" else -1

    def to_json(self) -> dict:
        return {"path": self.path, "label": self.label, "parent": self.parent, "phase": self.phase}


class _Strings:
    """One interned string table: each distinct string is stored once, referred to by index."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.items: list[str] = []

    def __call__(self, s: str | None) -> int:
        if not s:
            return -1
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.items)
            self.items.append(s)
        return i


def scope_of(op_name: str) -> str:
    """The scope an op sits in: its ``op_name`` without the last part (``a/b/conv`` → ``a/b``)."""
    first = op_name.split(";", 1)[0]
    return first.rsplit("/", 1)[0] if "/" in first else ""


def _source(inst: Instruction, lookup: SourceLookup | None) -> str:
    from ....analysis.export import source_lines

    md = inst.metadata
    sources = ((md.source_file, md.source_line),) if md.source_file else ()
    lines = source_lines((md.op_name,) if md.op_name else (), sources, lookup)
    return lines[0] if lines else ""


def _text_lines(side: Side) -> Callable[[Instruction], str]:
    """Each instruction's line as written in the side's text (its printed form where the text
    has no such line). A list of the text's lines is made only when lines average 16
    characters or more: for text of blank or short lines, lines are found by counting."""
    from ....printer import instruction_text
    from ....source import SourceText

    line_at: Callable[[int], str] | None = None
    if side.text and side.text.count("\n") * 16 <= len(side.text):
        lines = side.text.split("\n")
        line_at = lambda k: lines[k] if k < len(lines) else ""  # noqa: E731
    elif side.text:
        line_at = SourceText(side.text).line

    def text(inst: Instruction) -> str:
        if line_at is not None and inst.line > 0:
            line = line_at(inst.line - 1).strip()
            if inst.name in line:
                return line
        return instruction_text(inst)

    return text


def explorer_data(sides: Sequence[Side], views: Sequence[ViewSpec], *, analysis: Analysis | None = None,
                  pairs: Sequence[tuple[Instruction, Instruction, str]] = (), lookup: SourceLookup | None = None,
                  title: str = "") -> ExplorerData:
    """Everything the page's script needs about ``sides`` and the pictures in ``views``.

    ``analysis`` (pre/post) links pre-optimization ops to kernels and folded constants;
    ``pairs`` (a diff) links instructions of side 0 to side 1 with a status.
    """
    strings, scopes = _Strings(), _Scopes()
    ids: list[dict[str, int]] = []
    offsets: list[int] = []
    texts: list[str] = []
    out_sides: list[dict] = []
    all_insts: list[list[Instruction]] = []
    total = 0
    for side in sides:
        insts = list(side.module.instructions())
        columns, by_name = _side_columns(side, insts, total, strings, scopes, lookup, texts)
        all_insts.append(insts)
        offsets.append(total)
        ids.append(by_name)
        out_sides.append(columns)
        total += len(insts)
    kernels = _kernels(sides, ids, offsets, out_sides, lookup, scopes)
    main: dict = {"title": title, "strings": strings.items, "sides": out_sides, "kernels": kernels,
                  "scopes": scopes.to_json(), "opk": {}, "folds": [], "pairs": [], "views": []}
    if analysis is not None and len(sides) >= 2:  # pre, post (and a pass history's snapshots after them)
        _analysis_links(main, analysis, kernels, strings, ids)
    for a, b, status in pairs:
        ga, gb = ids[0].get(a.name), ids[1].get(b.name)
        if ga is not None and gb is not None:
            main["pairs"].append([ga, gb, status])
    for v in views:
        main["views"].append(_view(v, sides, ids, all_insts, offsets, out_sides, scopes))
    return ExplorerData(main, texts)


def _side_columns(side: Side, insts: list[Instruction], offset: int, strings: _Strings, scopes: _Scopes,
                  lookup: SourceLookup | None, texts: list[str]) -> tuple[dict, dict[str, int]]:
    """One module's instructions as columns (appending their HLO text to ``texts``), and
    instruction name → global id."""
    comps = side.module.computations
    comp_index = {id(c): k for k, c in enumerate(comps)}
    text = _text_lines(side)
    tree = side.scope_tree()
    scope_ids: dict[int, int] = {}
    by_name: dict[str, int] = {}
    names, opcodes, shapes, opn, src, comp, calls, sc = [], [], [], [], [], [], [], []
    for k, inst in enumerate(insts):
        by_name.setdefault(inst.name, offset + k)
        names.append(inst.name)
        opcodes.append(strings(inst.opcode))
        shapes.append(strings(str(inst.shape)))
        op = inst.metadata.op_name
        opn.append(strings(op))
        src.append(strings(_source(inst, lookup)) if (op or inst.metadata.source_file) else -1)
        comp.append(comp_index.get(id(inst.parent), -1))
        called = inst.called_computations
        calls.append(comp_index.get(id(called[0]), -1) if called and inst.opcode == "fusion" else -1)
        texts.append(text(inst))
        scope = tree.scope_of(inst)
        si = scope_ids.get(id(scope))
        if si is None:
            si = scope_ids[id(scope)] = scopes.add(scope)
        sc.append(si)
    return {"key": side.key, "label": side.label, "module": side.module.name, "offset": offset,
            "count": len(insts), "comps": [c.name for c in comps], "name": names, "op": opcodes, "shape": shapes,
            "opn": opn, "src": src, "comp": comp, "calls": calls, "sc": sc, "kernel": [-1] * len(insts)}, by_name


def _kernels(sides: Sequence[Side], ids: list[dict[str, int]], offsets: list[int], out_sides: list[dict],
             lookup: SourceLookup | None, scopes: _Scopes) -> list[dict]:
    """The kernels of every side; fills each side's ``kernel`` column (the kernel each
    instruction runs in: the kernel itself and everything its fused computations hold). Each
    kernel's ``layers`` (scope indexes, heaviest work first) are
    :meth:`hloviz.analysis.scopes.ScopeTree.layers_of`'s, as the picture and ``stats`` say."""
    from ....analysis import describe_kernel

    kernels: list[dict] = []
    for s, side in enumerate(sides):
        if side.kernels is None:
            continue
        by_name, column = ids[s], out_sides[s]["kernel"]
        tree = side.scope_tree()
        for n, k in enumerate(side.kernels.kernels, 1):
            gid = by_name.get(k.name)
            if gid is None:
                continue
            kidx = len(kernels)
            column[gid - offsets[s]] = kidx
            inst = _instruction(side.module, k.computation, k.name)
            if inst is not None and inst.called_computations:
                for c in called_closure(inst.called_computations):
                    for i in c.instructions:
                        g = by_name.get(i.name)
                        if g is not None and column[g - offsets[s]] == -1:
                            column[g - offsets[s]] = kidx
            layers = [scopes.add(sc) for sc in tree.layers_of(inst)] if inst is not None else []
            kernels.append({"side": s, "inst": gid, "number": n, "name": k.name, "kind": k.kind,
                            "layers": [x for x in layers if x >= 0],
                            "what": describe_kernel(k, top=4), "instructions": k.instructions, "ops": k.ops, "opcodes": [list(p) for p in k.opcodes],
                            "read": k.bytes_read, "written": k.bytes_written, "flops": k.flops,
                            "sources": _sources_of(k, lookup)})
    return kernels


def _analysis_links(main: dict, analysis: Analysis, kernels: list[dict], strings: _Strings,
                    ids: list[dict[str, int]]) -> None:
    """Pre-optimization op → the kernels holding its work (``opk``, keyed by the op name's
    string index), and the folded constants with the pre-optimization instructions they replace."""
    kernel_index = {(k["side"], k["name"]): i for i, k in enumerate(kernels)}
    if analysis.mapping is not None:
        opk: dict[str, list[int]] = {}
        for m in analysis.mapping.ops:
            ks = [kernel_index[(1, name)] for name in m.kernels if (1, name) in kernel_index]
            if ks and m.op_name in strings.index:
                opk[str(strings.index[m.op_name])] = ks
        main["opk"] = opk
    if analysis.folding is not None:
        for f in analysis.folding.folded:
            main["folds"].append({
                "constant": f.constant, "inst": ids[1].get(f.constant, -1), "value": f.value, "shape": f.shape,
                "from": list(f.from_ops), "pre": [ids[0][n] for n in f.from_instructions if n in ids[0]],
                "into": [ids[1][n] for n in f.into if n in ids[1]], "by": f.by,
            })


def _instruction(module: HloModule, computation: str, name: str) -> Instruction | None:
    comp = module.get_computation(computation)
    return comp.get(name) if comp is not None else None


def _sources_of(k, lookup: SourceLookup | None) -> list[str]:
    from ....analysis.export import source_lines

    return source_lines(k.op_names, k.sources, lookup)[:8]


def _view(v: ViewSpec, sides: Sequence[Side], ids: list[dict[str, int]], insts: list[list[Instruction]],
          offsets: list[int], out_sides: list[dict], scopes: _Scopes) -> dict:
    """A view's boxes: DOT id → ``[column, global ids of the instructions drawn in it, scope,
    tree]`` where ``scope`` (an index into the scope table, or -1) is set for a box that stands
    for a group of ops (a closed layer): the innermost scope holding them all; and ``tree`` (or
    None) is ``<side>:<key>`` of the closed block or repeat of the picture's cut the box draws
    (a view whose ``opens`` is ``t:<side>:<key>`` opens it in place: :func:`opens_in_place`)."""
    node_ids, cluster_ids = drawn_ids([view.scene for _, view in v.columns])
    nodes: dict[str, list] = {}
    clusters: dict[str, list] = {}
    for col, (s, view) in enumerate(v.columns):
        by_name = ids[s]
        members: dict[str, list[int]] = {}
        for name, key in view.node_of.items():
            g = by_name.get(name)
            if g is not None:
                members.setdefault(key, []).append(g)
        side = out_sides[s]
        tree_of = _closed_blocks(view, sides[s])
        for key, gids in members.items():
            dot_id = node_ids.get((col, key))
            if dot_id is not None:
                gids.sort()
                nodes[dot_id] = [col, gids, _group_scope(gids, side, offsets[s], scopes), tree_of.get(key)]
        for cluster in view.scene.all_clusters():
            dot_id = cluster_ids.get((col, cluster.key))
            inside = [g for key in cluster.nodes for g in members.get(key, ())]
            if dot_id is None or not inside:
                continue
            callers = sides[s].callers()
            first = insts[s][inside[0] - offsets[s]]
            owner = None
            if first.parent is not None:
                owner = next(iter(callers.get(first.parent.name, ())), None)
            owner_id = by_name.get(owner.name, -1) if owner is not None else -1
            scope = -1
            if owner_id < 0:  # an open layer, not a fusion or body
                every = [g for k in _keys_below(cluster) for g in members.get(k, ())]
                scope = _common_scope(every, side, offsets[s], scopes)
            clusters[dot_id] = [col, owner_id, scope]
    return {"key": v.key, "title": plain_name(v.title), "parent": v.parent, "opens": v.opens, "pair": v.pair,
            "sides": [s for s, _ in v.columns], "svg": v.svg, "nodes": nodes, "clusters": clusters}




def opens_in_place(node: TreeNode, side: Side) -> bool:
    """Whether the explorer opens the closed tree node ``node`` of a picture of ``side`` in place
    (the same picture with it drawn open): a block found by structure, a ``×N`` repeat, a group
    of layers sharing a name prefix, and a scope the model's scope tree does not have (a
    training step's ``(forward)``); a layer of the model's own opens as a picture of its own."""
    if node.kind in ("block", "repeat", "group"):
        return True
    return node.kind == "scope" and side.scope_tree().get(node.path) is None


def _closed_blocks(view: View, side: Side) -> dict[str, str]:
    """Scene node key → ``<side>:<tree key>`` for the boxes that draw a node the explorer opens
    in place (:func:`opens_in_place`)."""
    if view.cut is None:
        return {}
    nodes = {n.key: n for n in view.cut.nodes}
    return {drawn: f"{side.key}:{key}" for key, drawn in view.drawn_as.items()
            if key in nodes and opens_in_place(nodes[key], side)}


def _keys_below(cluster) -> list[str]:
    out = list(cluster.nodes)
    for sub in cluster.clusters:
        out += _keys_below(sub)
    return out


def _common_scope(gids: list[int], side: dict, offset: int, scopes: _Scopes) -> int:
    """The innermost scope holding every one of ``gids`` (-1: only the whole module does)."""
    common: list[int] | None = None
    seen: set[int] = set()
    for g in gids:
        si = side["sc"][g - offset]
        if si in seen:
            continue
        seen.add(si)
        chain = []
        while si >= 0:
            chain.append(si)
            si = scopes.parent[si]
        chain.reverse()
        if common is None:
            common = chain
        else:
            n = 0
            while n < len(common) and n < len(chain) and common[n] == chain[n]:
                n += 1
            common = common[:n]
        if not common:
            return -1
    return common[-1] if common else -1


def _group_scope(gids: list[int], side: dict, offset: int, scopes: _Scopes) -> int:
    """For a box of several ops (a closed layer, a run), the scope they share; -1 for a box
    that is one instruction, or one kernel with what it holds."""
    if len(gids) < 2:
        return -1
    kernel = side["kernel"]
    first = kernel[gids[0] - offset]
    if first >= 0 and all(kernel[g - offset] == first for g in gids):
        return -1  # a fusion drawn as one box: the kernel, not a group
    ops = {side["opn"][g - offset] for g in gids}
    if len(ops) < 2:
        return -1
    return _common_scope(gids, side, offset, scopes)

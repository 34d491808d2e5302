"""The explorer's data: every instruction of the drawn modules, the kernels, the folds, and
which drawn box holds which instructions — as compact JSON-ready columns.

The page's script searches, highlights and fills its side panel from this alone; it never
reads HLO text out of the SVG. Columns (one list per field, strings interned in one table)
keep a 300k-instruction module to a few megabytes; the per-instruction HLO text, needed only
when a node is clicked, is a separate blob so the page can decode it after the first picture.

The sides and views it is built from are :mod:`.sides`'; strings and scopes go to the shared
tables of :mod:`.tables`, each view's boxes are written by :mod:`.boxes`.

Identifiers: an instruction is ``(side, index)`` in :func:`hloviz.ir.HloModule.instructions`
order; the script addresses it by a global number (the side's offset plus its index).
Drawn boxes are named by the DOT identifiers of :func:`hloviz.render.layout.dot.drawn_ids`
(``n7``, ``cluster_3``), which Graphviz writes as each SVG group's ``<title>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ....ir import HloModule, Instruction, called_closure
from .boxes import view_boxes
from .sides import Side, SourceLookup, ViewSpec, opens_in_place, plain_name
from .tables import ScopeTable, StringTable

if TYPE_CHECKING:
    from ....analysis import Analysis

# Side, ViewSpec, plain_name and opens_in_place live in .sides; re-exported for the readers of this module
__all__ = ["ExplorerData", "Side", "ViewSpec", "explorer_data", "opens_in_place", "plain_name"]


@dataclass
class ExplorerData:
    """The JSON-ready data (:attr:`main`) and the per-instruction HLO text (:attr:`texts`)."""

    main: dict
    texts: list[str] = field(default_factory=list)
    #: A view drawn later (:mod:`.on_demand`) as :attr:`main`'s views are: its boxes' JSON, by the
    #: same instruction ids and scope table.
    boxes: Callable[[ViewSpec], dict] | None = field(default=None, repr=False)


def _source(inst: Instruction, lookup: SourceLookup | None, frames: Mapping[int, tuple[str, int]]) -> str:
    """``inst``'s line: its own (stack frame or metadata), else its op name's (``lookup``)."""
    from ....analysis.export import source_lines
    from ....analysis.frames import instruction_source

    md = inst.metadata
    where = instruction_source(inst, frames)
    lines = source_lines((md.op_name,) if md.op_name else (), (where,) if where else (), lookup)
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
    strings, scopes = StringTable(), ScopeTable()
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
    def boxes(v: ViewSpec) -> dict:
        return view_boxes(v, sides, ids, all_insts, offsets, out_sides, scopes)

    main["views"] = [boxes(v) for v in views]
    return ExplorerData(main, texts, boxes)


def _side_columns(side: Side, insts: list[Instruction], offset: int, strings: StringTable, scopes: ScopeTable,
                  lookup: SourceLookup | None, texts: list[str]) -> tuple[dict, dict[str, int]]:
    """One module's instructions as columns (appending their HLO text to ``texts``), and
    instruction name → global id."""
    comps = side.module.computations
    comp_index = {id(c): k for k, c in enumerate(comps)}
    text = _text_lines(side)
    tree = side.scope_tree()
    scope_ids: dict[int, int] = {}
    by_name: dict[str, int] = {}
    sources: dict[int, int] = {}
    from ....analysis.frames import frame_lines

    frames = frame_lines(side.module)
    shape_ids: dict[int, int] = {}
    names, opcodes, shapes, opn, src, comp, calls, sc = [], [], [], [], [], [], [], []
    for k, inst in enumerate(insts):
        by_name.setdefault(inst.name, offset + k)
        names.append(inst.name)
        opcodes.append(strings(inst.opcode))
        si_shape = shape_ids.get(id(inst.shape))  # the parser shares one Shape per distinct shape
        if si_shape is None:
            si_shape = shape_ids[id(inst.shape)] = strings(str(inst.shape))
        shapes.append(si_shape)
        md = inst.metadata
        op = md.op_name
        opn.append(strings(op))
        if op or md.source_file or md.extra:  # ops of one line share it: looked up once (a model has thousands each)
            line = sources.get(id(md))  # (the parser shares one Metadata per distinct text)
            if line is None:
                line = sources[id(md)] = strings(_source(inst, lookup, frames))
            src.append(line)
        else:
            src.append(-1)
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
             lookup: SourceLookup | None, scopes: ScopeTable) -> list[dict]:
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


def _analysis_links(main: dict, analysis: Analysis, kernels: list[dict], strings: StringTable,
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

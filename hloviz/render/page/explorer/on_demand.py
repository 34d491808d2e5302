"""The explorer's detail pictures drawn when the page asks for them, not when it is written.

A real model's report can open hundreds of pictures (a layer drawn open, a block opened in
place, a fusion down to its instructions); laying them all out when the page is written made
``hloviz show`` 6 to 15 times slower than ``render`` of the same capture (issue 32). So by
default the page holds its first picture only, and each view it can open is a *placeholder*:
its key, title, parent and what it opens, marked ``"lazy": 1``, with no boxes.

``hloviz show --open`` serves the report (:mod:`hloviz.api.serve`) and answers the page's
``view?key=…`` with :meth:`OnDemand.view`: the picture laid out then, its boxes as every view's
are written (:attr:`.data.ExplorerData.boxes`), and the placeholders of what it opens in turn.
The pictures are the ones ``show --offline`` draws ahead, by the same functions
(:mod:`.scope_views`, :mod:`.block_views`, :mod:`.fusion_views`). Opened as a file, the page
drops its placeholders, so nothing it offers is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .block_views import Column, block_name, closed_blocks, inner_blocks, open_block
from .fusion_views import fusion_kernels, fusion_view
from .scope_views import ancestors
from .sides import Side, ViewSpec, plain_name

if TYPE_CHECKING:
    from ...layout.wrap import Wrap
    from ...views import Mark
    from .pairs import Pairing
    from .scope_views import LayerDraw, LayerInner

__all__ = ["ON_DEMAND_NOTE", "OnDemand"]

#: What the page says of its explorer when its detail is drawn on demand.
ON_DEMAND_NOTE = ("the explorer draws a layer, a block or a fusion when you open it while hloviz serves this "
                  "report (hloviz show TARGET --open); opened as a file it shows the whole picture and each box's "
                  "panel (hloviz show --offline draws every picture into the file)")


@dataclass(frozen=True)
class _Wanted:
    """A view the page may ask for: what kind, which view offers it, and what draws it."""

    kind: str  # "layer", "block" or "fusion"
    parent: str
    title: str
    opens: str
    #: layer: its scope path; block: (the offering picture's columns, the column, the tree key);
    #: fusion: (side index, the fusion instruction)
    arg: Any


class OnDemand:
    """The views of one page that are drawn when asked for, and the ones already drawn.

    ``layer``/``inner`` draw a layer's picture and name the sub-layers it shows closed (as
    :func:`.scope_views.scope_expansions` takes them); the rest is how the page's pictures were
    drawn (marks per side, the capture's ``info``, ``wrap``, the pair's ``pairing``)."""

    def __init__(self, sides: Sequence[Side], *, layer: LayerDraw | None, inner: LayerInner | None,
                 marks: Sequence[Mapping[str, Mark] | None] = (), budget: int = 200, timeout: float = 10.0,
                 title: str = "", wrap: Wrap | None = None, pairing: Pairing | None = None,
                 info: Mapping | None = None) -> None:
        self.sides = list(sides)
        self._layer, self._inner = layer, inner
        self._marks, self._budget, self._timeout = list(marks), budget, timeout
        self._title, self._wrap, self._pairing, self._info = title, wrap, pairing, info
        self._fusions = {i: fusion_kernels(s) for i, s in enumerate(sides) if s.kernels is not None}
        self._wanted: dict[str, _Wanted] = {}
        self._drawn: dict[str, dict] = {}
        self._boxes: Callable[[ViewSpec], dict] | None = None

    def start(self, boxes: Callable[[ViewSpec], dict], columns: Sequence[Column],
              layers: Mapping[str, int]) -> list[dict]:
        """The placeholders of what the page's first picture (``columns``) opens: ``layers``
        (path → size, :func:`.scope_views.closed_scopes`), its closed blocks and its fusions.
        ``boxes`` writes a drawn view's JSON as the page's other views are written."""
        self._boxes = boxes
        return self._offer("top", columns, layers=layers, blocks=[(list(columns), c, k)
                                                                  for c, k in closed_blocks(self.sides, columns)])

    def view(self, key: str) -> dict | None:
        """The view ``key`` drawn (``{"view": its JSON with "svg", "more": new placeholders}``),
        or None: not a view the page was offered, or no layout in time."""
        if key in self._drawn:
            return self._drawn[key]
        want = self._wanted.get(key)
        if want is None or self._boxes is None:
            return None
        drawn = self._draw(key, want)
        if drawn is None:
            return None
        spec, columns, layers, blocks = drawn
        answer = {"view": self._boxes(spec), "more": self._offer(key, columns, layers=layers, blocks=blocks)}
        self._drawn[key] = answer
        return answer

    def offered(self, key: str) -> bool:
        """Whether the page was offered view ``key`` (a placeholder was sent for it)."""
        return key in self._wanted

    def _draw(self, key: str, want: _Wanted):
        """``want`` laid out: its ViewSpec, its columns, and the layers and blocks it offers."""
        if want.kind == "layer" and self._layer is not None:
            got = self._layer(want.arg)
            if got is None:
                return None
            title, cols, svg = got
            spec = ViewSpec(key=key, title=title, columns=cols, svg=svg, parent=want.parent, opens=want.opens)
            layers = self._inner(want.arg, cols) if self._inner is not None else {}
            return spec, [("", s, v) for s, v in cols], layers, []
        if want.kind == "block":
            cols, c, tree_key = want.arg
            opened = open_block(self.sides, cols, c, tree_key, marks=self._marks, timeout=self._timeout,
                                title=self._title, wrap=self._wrap, pairing=self._pairing, info=self._info)
            if opened is None:
                return None
            name, new, pair, svg = opened
            spec = ViewSpec(key=key, title=name, columns=[(s, v) for _, s, v in new], svg=svg, parent=want.parent,
                            opens=key, pair=pair)
            return spec, new, {}, [(new, c, inner) for inner in inner_blocks(self.sides, new, c, tree_key)]
        if want.kind == "fusion":
            s, inst = want.arg
            marks = self._marks[s] if s < len(self._marks) else None
            spec = fusion_view(s, self.sides[s], inst, want.parent, marks=marks, budget=self._budget,
                               timeout=self._timeout, info=self._info)
            return (spec, [], {}, []) if spec is not None else None
        return None

    def _offer(self, parent: str, columns: Sequence[Column], *, layers: Mapping[str, int],
               blocks: Sequence[tuple[list[Column], int, str]]) -> list[dict]:
        """Placeholders for what the view ``parent`` (drawn as ``columns``) opens and no view
        offered before: its closed ``layers`` and ``blocks``, and the fusions its boxes hold."""
        new: list[tuple[str, _Wanted]] = []
        keys: set[str] = set()
        for path in sorted(layers, key=lambda p: (p.count("/"), p)):  # a layer before the layers in it
            scope = next((sc for s in self.sides if (sc := s.scope_tree().get(path)) is not None), None)
            # its picture goes back up to the nearest layer around it with a picture of its own
            up = next((f"s:{a}" for a in reversed(ancestors(path)) if f"s:{a}" in self._wanted
                       or f"s:{a}" in keys), parent)
            keys.add(f"s:{path}")
            new.append((f"s:{path}", _Wanted("layer", up, plain_name(scope.display_path if scope else path),
                                            f"s:{path}", path)))
        for cols, c, tree_key in blocks:
            key = f"t:{self.sides[cols[c][1]].key}:{tree_key}"
            new.append((key, _Wanted("block", parent, block_name(cols, c, tree_key), key, (cols, c, tree_key))))
        for _, s, view in columns:
            fusions = self._fusions.get(s)
            if not fusions:
                continue
            side = self.sides[s]
            for name in view.node_of:
                inst = fusions.get(name)
                if inst is not None:
                    new.append((f"{side.key}:{name}", _Wanted("fusion", parent, name, f"i:{side.key}:{name}",
                                                              (s, inst))))
        out: list[dict] = []
        for key, want in new:
            if key in self._wanted:
                continue
            self._wanted[key] = want
            out.append({"key": key, "title": want.title, "parent": want.parent, "opens": want.opens, "pair": None,
                        "sides": [], "nodes": {}, "clusters": {}, "lazy": 1})
        return out

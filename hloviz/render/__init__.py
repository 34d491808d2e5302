"""Pictures of HLO modules: DOT text (pure), Graphviz (a thin, timed-out layer), HTML.

Read top-down, a module becomes a picture in one path (each stage a function of the one before):

- :func:`draw_module` (``views``) — a module → a :class:`View`, by the drawing rules familiar
  from XLA's graph dumps (``model``: which instructions become units), then:

  1. **tree** — :class:`Tree`, :func:`build_tree` (``tree``); ``layers`` routes the units under
     their op names' scopes, fusions and bodies; ``structure`` / ``blocks`` find blocks where
     names give none and fold repeats (``×N``);
  2. **cut** — :func:`fit`, :class:`Cut` (``cut``): the deepest cut of that tree that fits
     the node budget; ``--scope``, ``--depth``, focus and an explorer's "open this block" all
     move the cut. ``View.cut`` is the cut a drawn view used;
  3. **apply** — ``apply.apply_cut``: closed nodes become single units, open ones clusters;
  4. **scene** — ``assemble`` (arrows that would span many rows become stubs, ``arrows``).

  Callers colour and annotate instructions with :class:`Mark`.
- :class:`Scene` (``scene``) — nodes with label rows, edges, nested clusters; no HLO in it.
- :func:`to_dot`, :func:`columns_to_dot` (``dot``) — scenes → DOT text, several scenes side by
  side in titled columns. Identifiers are generated; user text is escaped in ``quoting``.
- :func:`run_dot` (``graphviz_run``) — DOT → SVG/PNG under a timeout; normalised SVG.
  ``dotserver`` — the explorer page's ``dot`` processes kept running for the graphs whose output
  cannot depend on what a process laid out before (fewer starts, the same bytes).
- ``compose`` — a picture's columns (and a wrapped column's parts) laid out by ``dot``
  processes at once and composed into one picture; ``wrap`` — where a long or wide column is cut
  (``--wrap``, ``--aspect``) and the connectors between its parts.
- :func:`module_picture`, :func:`pair_picture` (``pictures``) — all of it in one call, with
  the coarser retry after a timeout; :class:`Picture` shows itself in Jupyter.
- ``html`` / ``report`` — the self-contained report of ``hloviz show``; ``files`` — atomic writes.

Drawing a module with your own colours (what the diff picture does)::

    from hloviz.render import Mark, columns_to_dot, draw_module, run_dot

    old = draw_module(old_module, marks={"add.3": Mark(fill="#f28482", note="removed")})
    new = draw_module(new_module, marks={"add.7": Mark(fill="#90be6d", note="added")})
    svg = run_dot(columns_to_dot([("before", old.scene), ("after", new.scene)]), "svg")

``View.node_of`` maps instruction names to node keys if you want to add edges or clusters to a
scene before turning it into DOT.
"""

from __future__ import annotations

from .cut import Cut, fit
from .dot import columns_to_dot, to_dot
from .files import write_atomic
from .graphviz_run import DEFAULT_TIMEOUT, GraphvizTimeout, find_dot, normalize_svg, run_dot
from .pictures import Picture, build_picture, format_for, module_picture, pair_picture
from .scene import Cluster, Edge, Node, Row, Scene
from .tree import Tree, TreeNode, build_tree
from .views import Mark, View, ViewOptions, draw_module

__all__ = [
    "Cluster", "Cut", "DEFAULT_TIMEOUT", "Tree", "TreeNode", "build_tree", "fit", "Edge", "GraphvizTimeout", "Mark", "Node", "Picture", "Row", "Scene", "View",
    "ViewOptions", "build_picture", "columns_to_dot", "draw_module", "find_dot", "format_for", "module_picture", "normalize_svg",
    "pair_picture", "run_dot", "to_dot", "write_atomic",
]

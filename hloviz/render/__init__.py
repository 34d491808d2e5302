"""Pictures of HLO modules. A module becomes a picture in four stages, one subpackage each:

1. ``tree/`` — what can become a box: the module's scopes, blocks, repeats and fusions as a
   :class:`Tree` (:func:`build_tree`).
2. ``cut/`` — which boxes one picture draws: the deepest :class:`Cut` that fits the budget
   (:func:`fit`; ``--scope``, ``--depth``, focus and the explorer's clicks move it), turned into
   a :class:`Scene` of boxes and arrows in program order.
3. ``layout/`` — Graphviz places the scenes: DOT text (:func:`to_dot`, :func:`columns_to_dot`),
   ``dot`` run under a timeout (:func:`run_dot`), long columns wrapped, columns composed.
4. ``page/`` — the files a user opens: atomic writes (:func:`write_atomic`), the ``show``
   report and its explorer, pictures fitted to docs pages.

Beside them: :class:`Scene` (``scene``: nodes, edges, clusters; no HLO in it), ``style`` and
``quoting`` (every user string reaches DOT/SVG/HTML through it), :func:`draw_module`
(``views``: stages 1–2 for one module; ``view_graph``: its graph of units) and :func:`module_picture` / :func:`pair_picture`
(``pictures``: all four in one call, with a coarser retry after a timeout). ``reuse``: inside
:func:`~hloviz.render.reuse.drawings_reused`, a module drawn many times (the explorer's views, a
refitted overview) builds its tree once.

Drawing a module with your own colours (what the diff picture does)::

    from hloviz.render import Mark, columns_to_dot, draw_module, run_dot

    old = draw_module(old_module, marks={"add.3": Mark(fill="#f28482", note="removed")})
    new = draw_module(new_module, marks={"add.7": Mark(fill="#90be6d", note="added")})
    svg = run_dot(columns_to_dot([("before", old.scene), ("after", new.scene)]), "svg")

``View.node_of`` maps instruction names to node keys, to add edges or clusters to a scene
before it becomes DOT.

The names below are imported on first use (:mod:`hloviz.lazy`): a command that needs one piece
(``diff`` checking its ``--timeout``) does not import every stage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:  # what the names are, for type checkers and readers; imported on first use below
    from .cut.cut import Cut, fit
    from .layout.dot import columns_to_dot, to_dot
    from .layout.runs.graphviz_run import DEFAULT_TIMEOUT, GraphvizTimeout, find_dot, normalize_svg, run_dot
    from .page.files import write_atomic
    from .pictures import Picture, build_picture, format_for, module_picture, pair_picture
    from .scene import Cluster, Edge, Node, Row, Scene
    from .tree.tree import Tree, TreeNode, build_tree
    from .views import Mark, View, ViewOptions, draw_module

__getattr__, __dir__ = lazy_names(globals(), {
    ".cut.cut": ("Cut", "fit"),
    ".layout.dot": ("columns_to_dot", "to_dot"),
    ".layout.runs.graphviz_run": ("DEFAULT_TIMEOUT", "GraphvizTimeout", "find_dot", "normalize_svg", "run_dot"),
    ".page.files": ("write_atomic",),
    ".pictures": ("Picture", "build_picture", "format_for", "module_picture", "pair_picture"),
    ".scene": ("Cluster", "Edge", "Node", "Row", "Scene"),
    ".tree.tree": ("Tree", "TreeNode", "build_tree"),
    ".views": ("Mark", "View", "ViewOptions", "draw_module"),
})

__all__ = [
    "Cluster", "Cut", "DEFAULT_TIMEOUT", "Tree", "TreeNode", "build_tree", "fit", "Edge", "GraphvizTimeout", "Mark", "Node", "Picture", "Row", "Scene", "View",
    "ViewOptions", "build_picture", "columns_to_dot", "draw_module", "find_dot", "format_for", "module_picture", "normalize_svg",
    "pair_picture", "run_dot", "to_dot", "write_atomic",
]

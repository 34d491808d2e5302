"""Scenes as JSON: what ``hloviz render -o picture.json`` writes, for people drawing it their way.

Stable keys: ``title``, ``notes``, ``nodes`` (``id``, ``rows`` as text lines, ``fill``,
``border``, ``badge``, ``cluster``, ``instructions`` — the instruction names the node stands
for), ``edges`` (``from``, ``to``, ``label``, ``operand``), ``clusters`` (``id``, ``rows``,
``parent``). A side-by-side picture is ``{"columns": [{"title": …, "picture": {…}}, …]}``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..scene import Scene
from ..views import View

__all__ = ["scene_dict", "to_json"]


def scene_dict(scene: Scene, members: dict[str, list[str]] | None = None) -> dict:
    """A scene as JSON-ready data (``members``: node key → instruction names)."""
    cluster_of: dict[str, str] = {}
    clusters = []
    for c in scene.all_clusters():
        for key in c.nodes:
            cluster_of[key] = c.key
        for sub in c.clusters:
            cluster_of["cluster:" + sub.key] = c.key
    for c in scene.all_clusters():
        clusters.append({"id": c.key, "rows": [r.text for r in c.rows], "badge": c.badge,
                         "fill": c.fill, "parent": cluster_of.get("cluster:" + c.key)})
    nodes = []
    for key, n in scene.nodes.items():
        nodes.append({"id": key, "rows": [r.text for r in n.rows], "fill": n.fill, "border": n.border,
                      "badge": n.badge, "cluster": cluster_of.get(key),
                      "instructions": (members or {}).get(key, [])})
    edges = [{"from": e.src, "to": e.dst, "label": e.label, "operand": e.head_label or None,
              "kind": "call" if e.dashed else "data"} for e in scene.edges]
    return {"title": " ".join(r.text for r in scene.title), "notes": list(scene.notes), "nodes": nodes,
            "edges": edges, "clusters": clusters}


def _members(view: View) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, key in view.node_of.items():
        out.setdefault(key, []).append(name)
    return out


def to_json(columns: Sequence[tuple[str, View]]) -> str:
    """One view as a picture object, several as ``{"columns": […]}``; sorted keys, 1-space indent."""
    if len(columns) == 1:
        data = scene_dict(columns[0][1].scene, _members(columns[0][1]))
    else:
        data = {"columns": [{"title": t, "picture": scene_dict(v.scene, _members(v))} for t, v in columns]}
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"

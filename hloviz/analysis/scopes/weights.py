"""Weights into their layers: entry parameters named after a layer's variable, filed in that layer.

In: a scope tree just built and each entry parameter's name as the user knows it
(:func:`hloviz.analysis.provenance.parameter_names`: Keras' ``model/dense/kernel``, a JAX pytree
path ``params['Dense_0']['kernel']``). Out: the same tree with each parameter whose name
designates exactly one scope moved into it, weights first in parameter order, and hloviz's own
scopes left empty by the moves taken out. One indexed lookup per parameter (:class:`.find.ScopeIndex`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from ...ir import Instruction
from ..opnames import parse_op_name
from .find import ScopeIndex
from .scope import Scope
from .tree import ScopeTree

__all__ = ["place_parameters"]


def _param_query(name: str) -> str:
    """A parameter name as a scope query: ``model/dense/kernel`` → ``model/dense``;
    ``params['Block_0']['MLP']['up']`` → ``Block_0/MLP`` (the argument and the leaf dropped)."""
    keys = re.findall(r"\[(?:'([^']*)'|\"([^\"]*)\"|(\d+))\]", name)
    if keys:
        parts = [a or b or c for a, b, c in keys]
        return "/".join(parts[:-1])
    return name.rsplit("/", 1)[0] if "/" in name else ""


def place_parameters(tree: ScopeTree, names: Mapping[Instruction, str]) -> None:
    """File each entry parameter of ``names`` in the one scope its name designates (see the module
    docstring); parameters whose name designates none, or several, stay where they were."""
    index = ScopeIndex(tree)  # one lookup per parameter: indexed, not a walk of the tree each
    placed: dict[int, int] = {}
    # Taken out of their scopes once, after the loop: one list.remove per parameter scanned the
    # scope holding all entry parameters once each (quadratic in their number). Nothing in the
    # loop reads the old scopes' lists, and a scope the loop inserts into gets its parameters at
    # the front, ahead of every instruction still to be taken out: the lists end up the same.
    leaving: dict[int, tuple[Scope, list[Instruction]]] = {}
    for inst, name in sorted(names.items(), key=lambda kv: kv[0].parameter_number or 0):
        query = _param_query(name)
        if not query or not tree.is_filed(inst):
            continue
        hits = index.find(query)  # tree.find(query, substring=False): a name, never a guess
        if len(hits) != 1 or hits[0].kind != "scope":
            continue
        target = hits[0]
        old = tree.scope_of(inst)
        if old is target:
            continue
        leaving.setdefault(id(old), (old, []))[1].append(inst)
        at = placed.get(id(target), 0)  # weights first, in parameter order
        target.instructions.insert(at, inst)
        placed[id(target)] = at + 1
        tree.refile(inst, target, parse_op_name(f"{target.path}/{inst.name}").phase)
    for scope, gone in leaving.values():
        _take_out(scope, gone)
    for s in list(tree.root.children):
        if s.kind in ("top", "unnamed") and not s.instructions and not s.children:
            tree.remove_empty(s)


def _take_out(scope: Scope, gone: list[Instruction]) -> None:
    """``scope.instructions`` without ``gone`` (the first occurrence of each, as ``list.remove``
    takes it), in one pass, in place."""
    left = Counter(gone)
    kept = []
    for inst in scope.instructions:
        if left.get(inst, 0):
            left[inst] -= 1
        else:
            kept.append(inst)
    if any(left.values()):
        raise ValueError(f"{scope.path}: {sum(left.values())} instructions to take out are not in the scope")
    scope.instructions[:] = kept

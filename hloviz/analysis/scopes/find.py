"""Finding scopes by name: a query in, the scopes it names out.

:func:`find_scopes` and :func:`closest_scopes` answer :meth:`ScopeTree.find
<hloviz.analysis.scopes.tree.ScopeTree.find>` and :meth:`~hloviz.analysis.scopes.tree.ScopeTree.closest`
(one query: a walk of the tree); :class:`ScopeIndex` answers many lookups in one tree, each as
cheap as its answer.

:meth:`hloviz.analysis.scopes.ScopeTree.find` walks the whole tree for each query (every scope
is matched against the query's segments), which is right for the one query a user types and
quadratic for a loop over a module's parameters: placing InceptionResNetV2's weights in their
layers made 5.3M path matches (issue 32). :class:`ScopeIndex` answers the same question —
``tree.find(query, substring=False)``, the same scopes in the same order — from indices built
once: the scopes by written path, by the label or name (less Keras' ``_N``) of their last
segment, and by each ``_``-prefix of their name and label. A query then matches its segments
only against the scopes whose last segment answers to its last one, with the very
``_matches_path`` that ``find`` uses, so both rules stay one rule.

The index describes the tree's scopes as they were when it was built; moving instructions
between scopes (what :mod:`hloviz.analysis.scopes.build` does while placing parameters) leaves
it valid, adding, removing or relabelling scopes does not.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from ..opnames import KERAS_SUFFIX, parse_op_name, segment_matches, split_segments

if TYPE_CHECKING:
    from .scope import Scope
    from .tree import ScopeTree

__all__ = ["ScopeIndex", "closest_scopes", "find_scopes"]


class ScopeIndex:
    """``find(query)`` of one :class:`~hloviz.analysis.scopes.ScopeTree`, equal to
    ``tree.find(query, substring=False)``, in time that grows with the answer, not the tree."""

    def __init__(self, tree: ScopeTree) -> None:
        self.tree = tree
        self._order: dict[int, int] = {}
        self._written: dict[str, list[Scope]] = {}
        self._by_label: dict[str, list[Scope]] = {}
        self._by_name: dict[str, list[Scope]] = {}  # the name as written, and less a ``_N`` suffix
        self._block: dict[str, list[Scope]] = {}  # each text before a ``_`` of a scope's name or label
        for n, s in enumerate(tree.walk()):  # in walk order: every list below is in it too
            self._order[id(s)] = n
            for w in s.written_as:
                self._written.setdefault(w, []).append(s)
            if s.kind == "root":
                continue
            self._by_label.setdefault(s.label, []).append(s)
            self._by_name.setdefault(s.name, []).append(s)
            m = KERAS_SUFFIX.match(s.name)
            if m and m.group(1) != s.name:
                self._by_name.setdefault(m.group(1), []).append(s)
            if s.kind == "scope":
                prefixes = {text[:i] for text in (s.name, s.label) for i, ch in enumerate(text) if ch == "_"}
                for p in prefixes:
                    self._block.setdefault(p, []).append(s)

    def find(self, query: str) -> list[Scope]:
        """The scopes ``query`` names (see :meth:`~hloviz.analysis.scopes.ScopeTree.find`, whose
        rules 1–5 this follows; no substring guesses)."""
        tree = self.tree
        q = query.strip().strip("/")
        if not q:
            return [tree.root]
        by_path = tree.paths
        hit = by_path.get(q)
        if hit is not None:
            return [hit]
        written = self._written.get(q)
        if written:
            return list(written)
        parts = split_segments(q)
        if not parts:  # not reached (a stripped non-empty query has a segment); the tree decides
            return tree.find(query, substring=False)
        for loose in (False, True):
            by_label = self._in_order(s for s in self._ending(parts[-1], loose)
                                      if _matches_path(s, parts, anchored=True, loose=loose))
            if by_label:
                return by_label
        op = parse_op_name(q)
        if op.scope and op.scope_path in by_path:
            return [by_path[op.scope_path]]
        for loose in (False, True):
            tail = self._in_order(s for s in self._ending(parts[-1], loose)
                                  if _matches_path(s, parts, anchored=False, loose=loose))
            if tail:
                return _outermost(tail)
        if "/" not in q:
            block = self._in_order(self._block.get(q, ()))
            if block:
                return _outermost(block)
        return []

    def _ending(self, last: str, loose: bool) -> list[Scope]:
        """The scopes whose own segment answers to ``last``: by label, or (``loose``) also by
        name as written or less its ``_N`` — a superset of what ``_matches_path`` accepts."""
        found = list(self._by_label.get(last, ()))
        if loose:
            found += self._by_name.get(last, ())
        return found

    def _in_order(self, scopes) -> list[Scope]:
        """``scopes`` once each, in the tree's walk order (the order ``find`` lists them in)."""
        unique = {id(s): s for s in scopes}
        return sorted(unique.values(), key=lambda s: self._order[id(s)])


def find_scopes(tree: ScopeTree, query: str, *, substring: bool = True) -> list[Scope]:
    """:meth:`ScopeTree.find <hloviz.analysis.scopes.tree.ScopeTree.find>`, whose docstring gives the rules
    in their order; :class:`ScopeIndex` answers rules 1–5 alike for many queries."""
    q = query.strip().strip("/")
    if not q:
        return [tree.root]
    hit = tree.paths.get(q)
    if hit is not None:
        return [hit]
    written = [s for s in tree.walk() if q in s.written_as]
    if written:
        return written
    parts = split_segments(q)
    for loose in (False, True):  # layer names first: ``dense_1`` is the layer, not ``dense``'s scope
        by_label = [s for s in tree.walk() if s.kind != "root" and _matches_path(s, parts, anchored=True,
                                                                                loose=loose)]
        if by_label:
            return by_label
    op = parse_op_name(q)
    if op.scope and op.scope_path in tree.paths:
        return [tree.paths[op.scope_path]]
    for loose in (False, True):
        tail = [s for s in tree.walk() if s.kind != "root" and _matches_path(s, parts, anchored=False,
                                                                            loose=loose)]
        if tail:
            return _outermost(tail)
    if "/" not in q:  # a block of layers named alike: ``block_5`` → ``block_5_expand``, ``block_5_add``…
        block = [s for s in tree.walk() if s.kind == "scope" and
                 (s.name.startswith(q + "_") or s.label.startswith(q + "_"))]
        if block:
            return _outermost(block)
    if not substring:
        return []
    low = q.lower()
    sub = [s for s in tree.walk()
           if s.kind != "root" and (low in s.path.lower() or low in s.display_path.lower())]
    return _outermost(sub)


def closest_scopes(tree: ScopeTree, query: str, n: int = 5) -> list[str]:
    """:meth:`ScopeTree.closest <hloviz.analysis.scopes.tree.ScopeTree.closest>`: the paths users know
    that look most like ``query``, for "did you mean"."""
    q = query.strip().strip("/")
    candidates: dict[str, str] = {}
    scopes = [s for s in tree.walk() if s.kind != "root"]
    shown_as: dict[str, int] = {}
    for s in scopes:
        shown_as[s.plain_path] = shown_as.get(s.plain_path, 0) + 1
    for s in scopes:
        shown = s.plain_path or s.path  # JAX's traced function by its name, not ``jit(f)``
        if shown_as.get(s.plain_path, 0) != 1:
            shown = s.path  # two layers of one label: the op names' path tells them apart
        for key in (shown, s.path, s.label, s.name):
            candidates.setdefault(key, shown)
    best = difflib.get_close_matches(q, list(candidates), n=n * 2, cutoff=0.5)
    out: dict[str, None] = {}
    for b in best:
        out.setdefault(candidates[b], None)
    return list(out)[:n]


def _matches_path(scope: Scope, parts: list[str], *, anchored: bool, loose: bool = True) -> bool:
    """Do the last ``len(parts)`` segments of the scope (and, anchored, all of them) answer to
    ``parts``: by label (the Keras layer name), or, ``loose``, also as written or as written less
    a re-entry suffix?"""
    chain = [scope] + [a for a in scope.ancestors() if a.kind != "root"]
    chain.reverse()
    if len(chain) < len(parts) or (anchored and len(chain) != len(parts)):
        return False
    tail = chain[len(chain) - len(parts):]
    if not loose:
        return all(s.label == p for s, p in zip(tail, parts))
    return all(segment_matches(s.name, p) or s.label == p for s, p in zip(tail, parts))


def _outermost(scopes: list[Scope]) -> list[Scope]:
    """Drop scopes that lie inside another of the list."""
    ids = {id(s) for s in scopes}
    return [s for s in scopes if not any(id(a) in ids for a in s.ancestors())]

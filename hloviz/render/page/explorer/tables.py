"""The explorer data's shared tables: strings stored once, scopes numbered once across sides.

In: strings and :class:`~hloviz.analysis.scopes.Scope` objects met while the columns are
written. Out: indexes into two tables (:class:`StringTable`, :class:`ScopeTable`) and the
tables themselves as JSON-ready lists: what keeps a 300k-instruction module to a few megabytes.
"""

from __future__ import annotations

from .sides import plain_name

__all__ = ["ScopeTable", "StringTable"]


class ScopeTable:
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


class StringTable:
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
